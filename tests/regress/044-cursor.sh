#!/usr/bin/env bash
# 044-cursor: the pointer is part of the screen, not a side channel; no
# client message kills the session.  Real sessions, a hostile backend page
# (tests/gateway/backend.py /cursor) and real clients:
#   1. The page streams a known file (a made-up patient CSV) through CSS
#      cursors, 80 x 80 opaque pixels of the file's bytes each, 50 of them,
#      while libvncclient (cdsgate-vnctest --cursor-log) asks for cursor
#      shapes (RichCursor, XCursor).  The client gets one shape only, the
#      worker's fixed 5 x 5 dot, with none of the file in it, and that
#      shape is in the recording's events (cursor_sent).  The page's
#      cursor reaches it only as pixels of the frame, under the watermark;
#      the recording (`cdsgate replay --frame`) holds those frames: the
#      images of at least 5 different parts of the file at the pointer,
#      and at the end the same pixels the client saw.
#   2. Every client message type LibVNCServer 0.9.14 dispatches, well-formed
#      and malformed, and unknown types (tests/gateway/badclients.py
#      allmsgs), from a logged-in client: none goes unanswered, the same
#      worker runs on, SetDesktopSize, Xvp, TextChat, SetServerInput,
#      SetSingleWindow and FileTransfer are logged as message_refused, and
#      a normal client then types into the page.
#   3. A 128 x 128 CSS cursor (over LibVNCServer's 32 KiB update buffer as
#      a rich cursor), changed every 250 ms: libvncclient (interactive,
#      asking for cursor shapes) keeps receiving whole fresh frames (the
#      page's banner flips colour twice a second) with the cursor drawn in
#      them and gets only the dot; TigerVNC's viewer, watching as the
#      observer, keeps showing fresh frames (its window, read every 20 ms,
#      follows the banner's flips), the cursor among their pixels.
# Needs root, Xvfb and Chromium; part 3's TigerVNC half needs vncviewer,
# xwininfo, ImageMagick's import and libX11; skips (with the reason)
# otherwise.
. "$(dirname "$0")/lib.sh"

CDSGATED=${CDSGATED:-$top_builddir/cdsgated}
VNCTEST=${VNCTEST:-$top_builddir/tests/gateway/cdsgate-vnctest}
BACKEND=$top_srcdir/tests/gateway/backend.py
BAD=$top_srcdir/tests/gateway/badclients.py

require_session
[ -x "$CDSGATE" ] || skip_all "cdsgate not built at $CDSGATE"
command -v convert > /dev/null || skip_all "ImageMagick (convert) not installed"
python3 -c 'import ctypes.util, sys; sys.exit(not ctypes.util.find_library("crypto"))' ||
	skip_all "libcrypto not found by ctypes (badclients.py's VncAuth)"

GW_PID=
BE_PID=
XV_PID=
VV_PID=
VT_PID=
ARTIFACTS=$top_builddir/tests/regress/044-cursor.artifacts
rm -rf "$ARTIFACTS"
cleanup() {
	local p
	if [ "$tap_failed" -gt 0 ] && mkdir -p "$ARTIFACTS" 2>/dev/null; then
		cp "$TMP"/*.ppm "$TMP"/*.png "$TMP"/*.log "$TMP"/*.err \
			"$TMP"/*.jsonl "$ARTIFACTS"/ 2>/dev/null
		echo "# failed: pictures and logs kept in $ARTIFACTS"
	fi
	for p in $VV_PID $XV_PID $VT_PID $GW_PID $BE_PID; do stop "$p"; done
	rm -rf "$TMP"
}
trap cleanup EXIT

EV=$TMP/events.jsonl
SECRET=$TMP/secret.csv
# A made-up patient file (fixed seed): the bytes the page tries to leak.
python3 - "$SECRET" <<'PY'
import random, sys
r = random.Random(44)
first = "Amelia Ben Chloe David Emma Finn Grace Hugo Isla Jack".split()
last = "Smith Jones Taylor Brown Wilson Evans Thomas Roberts".split()
with open(sys.argv[1], "w") as f:
    f.write("patient_id,name,birth_date,zip,diagnosis\n")
    for _ in range(800):
        f.write("P%06d,%s %s,19%02d-%02d-%02d,%05d,%s\n" % (
            r.randrange(10**6), r.choice(first), r.choice(last),
            r.randrange(30, 99), r.randrange(1, 13), r.randrange(1, 29),
            r.randrange(10000, 99999), r.choice(["I10", "E11.9", "J45", "C50.9"])))
PY
python3 -c 'import secrets,string; print("".join(secrets.choice(string.ascii_letters) for _ in range(8)))' > "$TMP/pw"
chmod 600 "$TMP/pw"

# All picture and log checks live in one helper.
cat > "$TMP/cur.py" <<'PY'
import json, re, subprocess, sys

def image(path):
    """(w, h, rgb bytes) of a PPM, or of a PNG through convert."""
    if path.endswith(".png"):
        d = subprocess.run(["convert", path, "ppm:-"], check=True,
                           capture_output=True).stdout
    else:
        d = open(path, "rb").read()
    m = re.match(rb"P6\s+(\d+)\s+(\d+)\s+255\s", d)
    return int(m.group(1)), int(m.group(2)), d[m.end():]

def region(path, x, y, s):
    w, h, px = image(path)
    return [bytes(px[3 * ((y + r) * w + x + c):3 * ((y + r) * w + x + c) + 3])
            for r in range(s) for c in range(s)]

def secret_at(data, off, s):
    n = len(data)
    return [bytes(data[(off + 3 * i + k) % n] for k in range(3)) for i in range(s * s)]

def match(pixels, want):
    return sum(a == b for a, b in zip(pixels, want)) / len(want)

def events(path, kind):
    out = []
    for l in open(path, encoding="utf-8"):
        try:
            e = json.loads(l)
        except ValueError:
            continue
        if e.get("type") == kind:
            out.append(e)
    return out

cmd, a = sys.argv[1], sys.argv[2:]
if cmd == "count":              # EVENTS TYPE
    print(len(events(a[0], a[1])))
elif cmd == "shapes":           # CURSOR-LOG SECRET: only the 5x5 dot, no secret
    data = open(a[1], "rb").read()
    windows = {data[i:i + 12] for i in range(len(data) - 12)}
    lines = [l.split() for l in open(a[0]) if l.startswith("cursor ")]
    kinds = {tuple(l[1:6]) for l in lines}
    leaked = 0
    for l in lines:
        px = bytes.fromhex(l[6]) if len(l) > 6 else b""
        bpp = int(l[5])
        rgb = b"".join(px[i:i + 3] for i in range(0, len(px), bpp))
        leaked += sum(rgb[i:i + 12] in windows for i in range(max(0, len(rgb) - 11)))
    print("# %d cursor shapes, kinds %s, %d windows of the file in them" %
          (len(lines), sorted(kinds), leaked))
    sys.exit(0 if lines and kinds == {("5", "5", "2", "2", "4")} and leaked == 0 else 1)
elif cmd == "drawn":            # PICTURE X Y S SECRET EVENTS MIN: best part of the file
    x, y, s = int(a[1]), int(a[2]), int(a[3])
    data = open(a[4], "rb").read()
    px = region(a[0], x, y, s)
    best = max((match(px, secret_at(data, e["offset"], s)), e["offset"])
               for e in events(a[5], "cursor"))
    print("%d %.3f" % (best[1], best[0]))
    sys.exit(0 if best[0] >= float(a[6]) else 1)
elif cmd == "same":             # A B X Y S: fraction of equal pixels
    x, y, s = int(a[2]), int(a[3]), int(a[4])
    print("%.4f" % match(region(a[0], x, y, s), region(a[1], x, y, s)))
elif cmd == "watch":            # X Y SECONDS CHANGES: the banner on $DISPLAY
    # Reads one row of the banner straight from the X server every 20 ms
    # (libX11 through ctypes), far faster than the page's 500 ms flips,
    # so the count of colour changes cannot alias with the sampling.
    import ctypes, ctypes.util, time
    class XImage(ctypes.Structure):
        _fields_ = [(f, ctypes.c_int) for f in ("width", "height", "xoffset",
                    "format")] + [("data", ctypes.c_void_p)] + [
                   (f, ctypes.c_int) for f in ("byte_order", "bitmap_unit",
                    "bitmap_bit_order", "bitmap_pad", "depth",
                    "bytes_per_line", "bits_per_pixel")]
    x11 = ctypes.CDLL(ctypes.util.find_library("X11"))
    x11.XOpenDisplay.restype = ctypes.c_void_p
    x11.XOpenDisplay.argtypes = [ctypes.c_char_p]
    x11.XDefaultRootWindow.restype = ctypes.c_ulong
    x11.XDefaultRootWindow.argtypes = [ctypes.c_void_p]
    x11.XGetImage.restype = ctypes.POINTER(XImage)
    x11.XGetImage.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.c_int,
                              ctypes.c_int, ctypes.c_uint, ctypes.c_uint,
                              ctypes.c_ulong, ctypes.c_int]
    x11.XFree.argtypes = [ctypes.c_void_p]
    x, y, secs, want = int(a[0]), int(a[1]), float(a[2]), int(a[3])
    dpy = x11.XOpenDisplay(None)
    if not dpy:
        sys.exit("cannot open the viewer's display")
    root = x11.XDefaultRootWindow(dpy)
    seen, changes, last, t_last, hold = [], 0, None, None, 0.0
    t0 = time.monotonic()
    while time.monotonic() - t0 < secs and changes < want:
        im = x11.XGetImage(dpy, root, x, y, 400, 1, 0xffffffff, 2)  # ZPixmap
        if not im or im.contents.bits_per_pixel != 32:
            sys.exit("no 32-bit image of the viewer's screen")
        row = ctypes.string_at(im.contents.data, 1600)
        x11.XFree(im.contents.data)
        x11.XFree(im)
        votes = {"banner": 0, "target": 0}
        for i in range(0, 1600, 4):     # B, G, R, pad (depth 24, LSB first)
            p = (row[i + 2], row[i + 1], row[i])
            for k, c in (("banner", (216, 27, 96)), ("target", (30, 80, 220))):
                votes[k] += all(abs(p[j] - c[j]) <= 40 for j in range(3))
        k = max(votes, key=votes.get)
        now = time.monotonic()
        if votes[k] >= 200:
            if last is not None and k != last:
                changes += 1
                hold = max(hold, now - t_last)
            if k != last:
                last, t_last = k, now
                seen.append("%s@%.2f" % (k, now - t0))
        time.sleep(0.02)
    print("%d colour changes in %.1f s (longest hold %.2f s): %s" % (
        changes, time.monotonic() - t0, hold, " ".join(seen[:12])))
    sys.exit(0 if changes >= want else 1)
elif cmd == "recorded":         # replay --events output, EVENT: how many
    n = 0
    for l in open(a[0]):
        e = json.loads(l)
        n += e.get("type") == "event" and e["event"].get("event") == a[1]
    print(n)
elif cmd == "connect_t":        # replay --events output: first connect's t
    for l in open(a[0]):
        e = json.loads(l)
        if e.get("type") == "event" and e["event"].get("event") == "connect":
            print("%.3f" % e["t"])
            break
elif cmd == "typed":            # EVENTS TEXT: the page's keydowns spell TEXT
    keys = "".join(e.get("key", "") for e in events(a[0], "keydown")
                   if len(e.get("key", "")) == 1)
    sys.exit(0 if a[1] in keys else 1)
elif cmd == "pid":              # SESSION-LOG ROLE
    for l in open(a[0]):
        e = json.loads(l)
        if e.get("event") == "child_start" and e.get("role") == a[1]:
            print(e["pid"])
            break
elif cmd == "exit":             # SESSION-LOG ROLE: "exited CODE" or how it ended
    for l in open(a[0]):
        e = json.loads(l)
        if e.get("event") == "child_exit" and e.get("role") == a[1]:
            w = e.get("wait", {})
            print(w.get("status"), w.get("code", w.get("signal_name")))
elif cmd == "logcount":         # SESSION-LOG EVENT [KEY=VALUE]
    k, _, v = (a[2] if len(a) > 2 else "=").partition("=")
    n = 0
    for l in open(a[0]):
        e = json.loads(l)
        n += e.get("event") == a[1] and (not k or str(e.get(k)) == v)
    print(n)
PY
cur() { python3 "$TMP/cur.py" "$@"; }

python3 "$BACKEND" --port 0 --record "$EV" --cursor-file "$SECRET" \
	> "$TMP/backend.out" 2> "$TMP/backend.err" &
BE_PID=$!
wait_line "$TMP/backend.out" '^ready ' 10 "$BE_PID" || skip_all "the test backend did not start"
BURL="http://$(sed -n 's/^ready //p' "$TMP/backend.out")"

# session NAME QUERY [ARGS]: a session on /cursor?QUERY; GW_PID, VPORT, LOG.
session() {
	local n=$1 q=$2
	shift 2
	LOG=$TMP/$n.log
	"$CDSGATED" run-session --backend "$BURL/cursor?$q" \
		--listen "127.0.0.1:$(free_port)" --password-file "$TMP/pw" \
		--log "$LOG" --geometry 1280x800 --recipient cursor-alice \
		--record-dir "$TMP/rec-$n" "$@" > "$TMP/$n.out" 2> "$TMP/$n.err" &
	GW_PID=$!
	if ! wait_line "$TMP/$n.out" '^ready ' 30 "$GW_PID"; then
		tail -15 "$TMP/$n.err" | sed 's/^/# /'
		return 1
	fi
	VPORT=$(sed -n 's/^ready //p' "$TMP/$n.out" | head -1)
	VPORT=${VPORT##*:}
	# the page has its data and waits for the pointer
	for _ in $(seq 200); do
		[ "$(cur count "$EV" cursor_ready)" -ge "$NREADY" ] && break
		sleep 0.1
	done
	NREADY=$((NREADY + 1))
}
NREADY=1
vnctest() {
	"$VNCTEST" --port "$VPORT" --password-file "$TMP/pw" --timeout 60 "$@"
}

# ---- 1. a file streamed through 80 x 80 cursors --------------------------------
if session stream 'size=80&count=50&period=100'; then
	ok "a session on the hostile cursor page is ready"
	vnctest --cursor-log "$TMP/stream.cur" move 640 480 sleep 7 \
		snapshot "$TMP/stream.ppm" > "$TMP/vt1.out" 2> "$TMP/vt1.err"
	check "libvncclient, asking for cursor shapes, stayed connected throughout" \
		test $? -eq 0
	n=$(cur count "$EV" cursor)
	check "the page changed its CSS cursor 50 times while the client watched ($n)" \
		test "$n" -eq 50 -a "$(cur count "$EV" cursor_done)" -eq 1
	check "the client got only the worker's 5x5 dot as a cursor shape, none of the file" \
		cur shapes "$TMP/stream.cur" "$SECRET"
	sed -n 's/^/# /p' "$TMP/vt1.out" | grep 'cursor shapes'
	r=$(cur drawn "$TMP/stream.ppm" 640 480 80 "$SECRET" "$EV" 0.5)
	rc=$?
	check "the page's cursor is drawn into the client's frame at the pointer, under the watermark (file offset, pixels matching: $r)" \
		test "$rc" -eq 0
	term_wait "$GW_PID"
	GW_PID=
	REC=$(ls "$TMP"/rec-stream/*.cdsrec 2>/dev/null | head -1)
	"$CDSGATE" replay "$REC" --events > "$TMP/stream-events.jsonl" 2> "$TMP/replay.err"
	"$CDSGATE" replay "$REC" --info > "$TMP/stream-info.txt" 2>&1
	ns=$(grep -c '^cursor ' "$TMP/stream.cur")
	nr=$(cur recorded "$TMP/stream-events.jsonl" cursor_sent)
	check "every cursor shape the client got is in the recording's events (cursor_sent: $nr, shapes: $ns)" \
		test "$nr" -eq "$ns" -a "$ns" -ge 1
	tc=$(cur connect_t "$TMP/stream-events.jsonl")
	seen_offsets=
	for dt in 1 1.5 2 2.5 3 3.5 4 4.5 5 5.5; do
		t=$(python3 -c "print('%.2f' % ($tc + $dt))")
		"$CDSGATE" replay "$REC" --frame "$t" -o "$TMP/rec-$dt.png" 2>> "$TMP/replay.err" || continue
		r=$(cur drawn "$TMP/rec-$dt.png" 640 480 80 "$SECRET" "$EV" 0.5) &&
			seen_offsets="$seen_offsets ${r%% *}"
	done
	nd=$(echo $seen_offsets | tr ' ' '\n' | sort -u | grep -c .)
	check "the recording holds the cursor images the client saw: $nd different parts of the file at the pointer in 10 frames" \
		test "$nd" -ge 5
	dur=$(sed -n 's/^duration: .*(\([0-9.]*\) s)/\1/p' "$TMP/stream-info.txt")
	"$CDSGATE" replay "$REC" --frame "$(python3 -c "print('%.2f' % ($dur - 0.05))")" \
		-o "$TMP/rec-end.png" 2>> "$TMP/replay.err"
	same=$(cur same "$TMP/rec-end.png" "$TMP/stream.ppm" 640 480 80)
	check "the recording's last frame has the pixels the client saw at the pointer ($same equal; a new minute may change a few)" \
		python3 -c "import sys; sys.exit(float('$same') < 0.97)"
else
	not_ok "a session on the hostile cursor page is ready"
fi

# ---- 2. every client message type ---------------------------------------------
if session msgs 'size=32&count=5&period=100'; then
	WORKER=$(cur pid "$LOG" worker)
	timeout 300 python3 "$BAD" 127.0.0.1 "$VPORT" "$TMP/pw" allmsgs > "$TMP/allmsgs.out" 2>&1
	rc=$?
	grep -v ': answered$' "$TMP/allmsgs.out" | sed 's/^/# /'
	check "every message type, well-formed and malformed, was answered or closed its connection (rc $rc)" \
		test "$rc" -eq 0
	check "SetDesktopSize (251) was answered, not a crash" \
		grep -q '^case SetDesktopSize: answered' "$TMP/allmsgs.out"
	check "unknown types close only their own connection" \
		test "$(grep -c '^case unknown-[0-9]*: closed' "$TMP/allmsgs.out")" -eq 13
	check "the same worker (pid ${WORKER:-?}) is alive" \
		test -n "$WORKER" -a -d "/proc/$WORKER" -a "$(cur pid "$LOG" worker)" = "$WORKER"
	check "the session's supervisor is alive" kill -0 "$GW_PID"
	for m in SetDesktopSize Xvp TextChat SetServerInput SetSingleWindow FileTransfer; do
		check "$m is logged as message_refused" \
			test "$(cur logcount "$LOG" message_refused message=$m)" -ge 1
	done
	sleep 3		# the login bucket refills
	vnctest move 640 300 type " still-here" > /dev/null 2> "$TMP/vt2.err"
	check "a normal client then logs in and types (exit $?)" test $? -eq 0
	for _ in $(seq 40); do
		cur typed "$EV" " still-here" && break
		sleep 0.2
	done
	check "... and its keys reach the page" cur typed "$EV" " still-here"
	term_wait "$GW_PID"
	GW_PID=
	check "the session then ends cleanly (exit $term_rc)" test "$term_rc" = 0
	# (under the sanitizers: no error, no leak in the worker)
	wexit=$(cur exit "$LOG" worker)
	check "the worker itself exited 0 after all the messages ($wexit)" \
		test "$wexit" = "exited 0"
else
	not_ok "a session for the message types is ready"
fi

# ---- 3. a 128 x 128 cursor: viewers keep getting frames --------------------------
# libvncclient is the interactive client (it moves the pointer onto the
# page, which then sets a new 128x128 cursor every 250 ms); TigerVNC
# watches as the view-only observer, as an auditor or a second screen would.
if session big 'size=128&count=100000&period=250' --observer; then
	# (the banner's flips are counted in every update libvncclient gets:
	# snapshots some 0.7 s apart alias with its 1 s cycle now and then)
	"$VNCTEST" --port "$VPORT" --password-file "$TMP/pw" --timeout 60 \
		--cursor-log "$TMP/big.cur" move 640 480 sleep 1 \
		snapshot "$TMP/big-1.ppm" flips 4 10 100 80 \
		snapshot "$TMP/big-3.ppm" hold 30 > "$TMP/vt3.out" 2> "$TMP/vt3.err" &
	VT_PID=$!
	wait_line "$TMP/vt3.out" '^holding' 30 "$VT_PID"
	check "libvncclient gets whole frames with the 128x128 cursor" \
		test "$(grep -c '^snapshot ' "$TMP/vt3.out")" -eq 2
	f=$(sed -n 's/^flips //p' "$TMP/vt3.out")
	check "... and they show the page changing (the banner's pixel, in every update: ${f:-no changes}; 4 changes wanted)" \
		test "${f%% *}" -ge 4 2>/dev/null
	r=$(cur drawn "$TMP/big-3.ppm" 640 480 128 "$SECRET" "$EV" 0.5)
	rc=$?
	check "the 128x128 cursor is drawn into the frame (file offset, pixels matching: $r)" \
		test "$rc" -eq 0
	if command -v vncviewer > /dev/null && command -v import > /dev/null &&
	    command -v xwininfo > /dev/null && python3 -c 'import ctypes.util, sys
sys.exit(not ctypes.util.find_library("X11"))'; then
		viewer_display 1400x1000x24
		"$VNCTEST" mkpasswd "$TMP/pw" "$TMP/pw.vnc"
		DISPLAY=$VD HOME=$TMP/vvhome vncviewer -passwd "$TMP/pw.vnc" \
			-Shared -ViewOnly -AutoSelect=0 -PreferredEncoding=raw \
			"127.0.0.1::$VPORT" > "$TMP/vv.log" 2>&1 &
		VV_PID=$!
		geo=
		for _ in $(seq 50); do
			geo=$(DISPLAY=$VD xwininfo -root -tree 2>/dev/null |
				sed -n 's/.*TigerVNC.* 1280x800+\([0-9]*\)+\([0-9]*\) .*/\1 \2/p' | head -1)
			[ -n "$geo" ] && break
			sleep 0.2
		done
		read -r wx wy <<< "${geo:-0 0}"
		diag "TigerVNC's window at ${geo:-?}"
		[ -n "$geo" ] || sed 's/^/# vncviewer: /' "$TMP/vv.log" "$TMP/xvfb.err" | tail -8
		# The page's banner flips every 500 ms: the viewer's own window,
		# read every 20 ms, must follow it for 4 changes within 10 s.
		# (Screenshots taken every ~1 s cannot tell: their period,
		# import's time plus a sleep, aliases with the flips' 1 s cycle
		# and then sees one colour for many seconds while the viewer
		# follows every change, as the RFB stream and a 20 ms reader
		# showed.)
		r=$(DISPLAY=$VD cur watch $((wx + 20)) $((wy + 100)) 10 4)
		check "TigerVNC (observer) still gets fresh frames while the 128x128 cursor is up: its banner $r" \
			test $? -eq 0
		DISPLAY=$VD import -window root "$TMP/tiger.png" 2> /dev/null
		r=$(cur drawn "$TMP/tiger.png" $((wx + 640)) $((wy + 480)) 128 "$SECRET" "$EV" 0.5)
		rc=$?
		check "TigerVNC shows the 128x128 cursor as pixels of the frame (file offset, pixels matching: $r)" \
			test "$rc" -eq 0
		check "TigerVNC's viewer is still running" kill -0 "$VV_PID"
		stop "$VV_PID"; VV_PID=
		stop "$XV_PID"; XV_PID=
	else
		skip "TigerVNC: vncviewer, import, xwininfo or libX11 not installed"
	fi
	stop "$VT_PID"
	wait "$VT_PID" 2>/dev/null
	VT_PID=
	check "libvncclient got only the dot as a cursor shape" \
		cur shapes "$TMP/big.cur" "$SECRET"
	term_wait "$GW_PID"
	GW_PID=
else
	not_ok "a session with a 128x128 cursor is ready"
fi

done_testing
