#!/usr/bin/env bash
# 085-guide-researcher: docs/guide-researcher.md stays true.  Against a
# `cdsgated serve` with tls_cert/tls_key, the guide's console blocks run
# as written (tests/regress/guide.py via run_guide) in a directory
# holding the session certificate: the custodian's `session create`
# prints what the guide shows, the fingerprint and key pin commands work
# on cert.pem, and the session presents that certificate (openssl
# s_client verifies it).  The guide's example port is replaced by the
# session's.  The TigerVNC command (marked no-run: it opens a window for
# a person) is then run here, exactly as the guide writes it, under an
# X server of its own with the viewer's scripted login (VNC_USERNAME,
# VNC_PASSWORD), until its window shows the session's page.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-serve.sh"

CDSGATED=$top_builddir/cdsgated
[ -x "$CDSGATED" ] || skip_all "cdsgated not built"
serve_require
command -v openssl >/dev/null || skip_all "openssl not installed"
command -v xtigervncviewer >/dev/null ||
	skip_all "TigerVNC's viewer (xtigervncviewer) not installed"
for c in import convert; do
	command -v $c >/dev/null || skip_all "ImageMagick's $c not installed"
done
serve_fixture
[ -z "$NOSESS" ] || skip_all "sessions: $NOSESS"
CONF=$D/serve.json
SRV_PID= VV_PID= XV_PID=
trap 'for p in $VV_PID $XV_PID $SRV_PID $BE_PID; do stop_pid $p; done; rm -rf "$TMP"' EXIT
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=127.0.0.1" \
	-addext "subjectAltName=IP:127.0.0.1" -keyout "$D/key.pem" -out "$D/cert.pem" 2> /dev/null
chmod 600 "$D/key.pem"
write_config "$CONF" "\"tls_cert\": \"$D/cert.pem\", \"tls_key\": \"$D/key.pem\""
check "cdsgated serve starts with tls_cert and tls_key" start_serve
# two sessions: the guide's, and the one the viewer logs in to
"$CDSGATE" recipient add alice --name "Alice" --max-sessions 2 > /dev/null
mount_patients
check "dataset 1 is imported and mounted (the guide's)" test "$DS" = 1

W=$TMP/researcher
mkdir -p "$W" && cp "$D/cert.pem" "$W/cert.pem"
export PATH=$top_builddir:$PATH
GUIDE=$top_srcdir/docs/guide-researcher.md
# the session the guide's `session create` makes takes the first port
run_guide "$GUIDE" "$W" "53275=$PORT0"
check "the guide's commands ran ($guide_run run, $guide_skipped marked no-run)" \
	test "$guide_run" -ge 4 -a "$guide_skipped" = 1

# ---- the viewer, as the guide writes it, on an X server of its own ----
session_new
check "a session for the viewer ($SCODE, $VADDR)" test "$SCODE" = 201
viewer=$(python3 "$top_srcdir/tests/regress/guide.py" --list "$GUIDE" | grep '^xtigervncviewer ')
viewer=${viewer//127.0.0.1::53275/${VADDR%:*}::${VADDR##*:}}
check "the guide has one TigerVNC command: $viewer" test "$(echo "$viewer" | wc -l)" = 1 -a -n "$viewer"
viewer_display
sleep 2		# the kiosk loads its page
(cd "$W" && HOME=$TMP/vvhome DISPLAY=$VD VNC_USERNAME=alice \
	VNC_PASSWORD=$(cat "$D/s.pw") exec $viewer) > "$TMP/vv.out" 2>&1 &
VV_PID=$!
x_page 30 "$TMP/tiger.png"
got=$?
check "the guide's TigerVNC command logs in and shows the session's page" test "$got" = 0
[ "$got" = 0 ] || sed 's/^/# vncviewer: /' "$TMP/vv.out" | tail -6
done_testing
