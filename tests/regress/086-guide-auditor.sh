#!/usr/bin/env bash
# 086-guide-auditor: docs/guide-auditor.md stays true.  After a session of
# a real `cdsgated serve` (alice types into it, a wrong secret is
# refused, the custodian revokes it), the guide's console blocks run as
# written (tests/regress/guide.py via run_guide) as a user in
# cdsgate-auditor only, in a directory of its own: every command exits
# with the status the guide gives and prints every line it shows.  The
# guide's example values (the site's paths, its session id, its date)
# are replaced by this run's; the block marked no-run (--serve, watched
# by a person) is reported as skipped.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-serve.sh"

CDSGATED=$top_builddir/cdsgated
require_session
serve_require
getent group cdsgate-auditor >/dev/null || skip_all "group cdsgate-auditor missing (./dev creates it)"
command -v useradd >/dev/null && command -v runuser >/dev/null ||
	skip_all "useradd/runuser not installed"
command -v ffmpeg >/dev/null || skip_all "ffmpeg not installed (the guide exports a video)"
serve_fixture
[ -z "$NOSESS" ] || skip_all "$NOSESS"
LOG=$D/audit/audit.log
CONF=$D/serve.json
AUD=cdsgd$$
trap 'stop_pid $SRV_PID; stop_pid $BE_PID; userdel "$AUD" 2>/dev/null; rm -rf "$TMP"' EXIT
useradd -M -N -s /usr/sbin/nologin -G cdsgate-auditor "$AUD" || skip_all "useradd $AUD failed"
W=$TMP/auditor
mkdir "$W" && chown "$AUD" "$W" && chmod 0700 "$W"
chmod 0644 "$D/audit.pub"

write_config "$CONF"
check "cdsgated serve starts" start_serve
"$CDSGATE" recipient add alice --name "Alice" > /dev/null
mount_patients
check "dataset 1 is imported and mounted (the guide's)" test "$DS" = 1
session_new
check "a session for alice ($SCODE)" test "$SCODE" = 201
vt() { "$VNCTEST" --host "${VADDR%:*}" --port "${VADDR##*:}" --timeout 60 "$@"; }
sleep 3
check "alice types into it" quiet vt --password-file "$D/s.pw" sleep 2 \
	type 'select count(*) from patients' sync sleep 1
echo 'not-the-secret' > "$D/bad.pw"
check "a wrong secret is refused" quiet vt --password-file "$D/bad.pw" expect-refused
"$CDSGATE" session revoke "$SID" > /dev/null
for _ in $(seq 100); do grep '"record_closed"' "$LOG" 2>/dev/null | grep -q "$SID" && break; sleep 0.2; done
check "record_closed of $SID is chained" sh -c "grep '\"record_closed\"' '$LOG' | grep -q '$SID'"

GUIDE_AS="runuser -u $AUD -- env CDSGATE_SOCKET=$SOCK PATH=$top_builddir:$PATH"
run_guide "$top_srcdir/docs/guide-auditor.md" "$W" \
	"/var/lib/cdsgate/audit/audit.log=$LOG" "/var/lib/cdsgate/recordings=$D/rec" \
	"/etc/cdsgate/audit.pub=$D/audit.pub" "s-d-AgRA6__ci6RSUZ=$SID" \
	"2026-11-27=$(date -u +%F)"
check "the guide's commands ran ($guide_run run, $guide_skipped marked no-run)" \
	test "$guide_run" -ge 10 -a "$guide_skipped" = 1
check "  it wrote the frame as a PNG" sh -c "head -c 4 '$W/at5s.png' | grep -q PNG"
check "  and the events as JSON lines with the session's start" \
	grep -q '"type":"event"' "$W/events.jsonl"
check "  and a video" test -s "$W/session.mp4"
done_testing
