#!/usr/bin/env bash
# 020-gateway-session: one real gateway session end to end.
# Starts the test backend (tests/gateway/backend.py, which records
# every event its page sees) and `cdsgated run-session` on loopback with a
# temporary password and log, then drives it with real clients:
#   1. vncsnapshot's picture shows the page (banner pixels)
#   2. typed text arrives exactly; a click lands on the target
#   3. client clipboard (classic and extended) never reaches the page and is
#      logged by size only; the page's copies never reach the client
#   4. a burst of 1000 keys delivers no more than the token-bucket budget
#   5. every escape combination is dropped and logged; the browser stays in
#      kiosk on the backend and still takes typing (after the burst, so a
#      way out found here does not spoil the count)
#   6. a killed browser comes back by itself
#   7. a wrong password is refused and logged
#   8. SIGTERM: exit 0, no processes of the session users, no session dirs
# Needs root, Xvfb and Chromium; skips (with the reason) otherwise.
. "$(dirname "$0")/lib.sh"

CDSGATED=${CDSGATED:-$top_builddir/cdsgated}
VNCTEST=${VNCTEST:-$top_builddir/tests/gateway/cdsgate-vnctest}
BACKEND=$top_srcdir/tests/gateway/backend.py
KEY_RATE=${KEY_RATE:-10}	# the session's defaults
KEY_BURST=${KEY_BURST:-20}
BROWSER_USER=${BROWSER_USER:-cdsgate-browser}
SESSION_USERS=${SESSION_USERS:-cdsgate,$BROWSER_USER}

require_session

GW_PID=
BE_PID=
ARTIFACTS=$top_builddir/tests/regress/020-gateway-session.artifacts
rm -rf "$ARTIFACTS"
cleanup() {
	local p
	if [ "$tap_failed" -gt 0 ] && mkdir -p "$ARTIFACTS" 2>/dev/null; then
		cp "$TMP"/*.ppm "$TMP"/*.jpg "$TMP"/*.log "$TMP"/*.jsonl "$TMP"/*.out \
			"$TMP"/*.err "$ARTIFACTS"/ 2>/dev/null
		echo "# failed: screenshots, logs and page events kept in $ARTIFACTS"
	fi
	for p in $GW_PID $BE_PID; do stop "$p"; done
	rm -rf "$TMP"
}
trap cleanup EXIT

# ---- helpers -----------------------------------------------------------
# All pixel and event checks live in one Python helper.
cat > "$TMP/gw.py" <<'PY'
import json, os, re, sys, time

BANNER, TARGET, COPY, PAGE = (216, 27, 96), (30, 80, 220), (255, 160, 0), (240, 240, 240)

def ppm(path):
    d = open(path, 'rb').read()
    m = re.match(rb'P6\s+(\d+)\s+(\d+)\s+255\s', d)
    if not m:
        sys.exit('%s: not a binary PPM' % path)
    return int(m.group(1)), int(m.group(2)), d[m.end():]

def patch(img, x0, y0, x1, y1, rgb, tol=40):
    """Fraction of the pixels in [x0,x1)x[y0,y1) within tol of rgb."""
    w, h, px = img
    good = n = 0
    for y in range(max(0, y0), min(h, y1), 2):
        for x in range(max(0, x0), min(w, x1), 2):
            i = 3 * (y * w + x)
            n += 1
            if all(abs(px[i + k] - rgb[k]) <= tol for k in range(3)):
                good += 1
    return good / n if n else 0.0

def regions(w, h, full):
    r = [('banner top-left', 4, 4, 64, 64, BANNER),
         ('banner top-right', w - 64, 4, w - 4, 64, BANNER),
         ('banner middle', w // 2 - 100, 40, w // 2 + 100, 150, BANNER)]
    if full:
        r += [('page bottom-left', 4, h - 64, 64, h - 4, PAGE),
              ('page bottom-right', w - 64, h - 64, w - 4, h - 4, PAGE),
              ('click target', 700, 200, 1220, 560, TARGET),
              ('copy button', 40, 410, 600, 490, COPY)]
    return r

def shows_page(path, full):
    if not os.path.exists(path) or os.path.getsize(path) == 0:
        print('# no picture: %s' % path)
        return False
    img = ppm(path)
    ok = True
    for name, x0, y0, x1, y1, rgb in regions(img[0], img[1], full):
        f = patch(img, x0, y0, x1, y1, rgb)
        if f < 0.9:
            ok = False
        print('# %-18s %5.1f%% of pixels match rgb%s' % (name, 100 * f, rgb))
    return ok

def events(path, since=0):
    out = []
    try:
        with open(path, encoding='utf-8') as f:
            for line in f:
                try:
                    e = json.loads(line)
                except ValueError:
                    continue
                if e.get('n', 0) > since:
                    out.append(e)
    except FileNotFoundError:
        pass
    return out

def log(path):
    out = []
    with open(path, encoding='utf-8', errors='replace') as f:
        for line in f:
            try:
                out.append(json.loads(line))
            except ValueError:
                print('# log line is not JSON: %r' % line[:120])
    return out

def ints(obj):
    if isinstance(obj, bool):
        return
    if isinstance(obj, int):
        yield obj
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from ints(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from ints(v)

def last_value(evs, page):
    v = ''
    for e in evs:
        if e.get('type') == 'input' and e.get('page') == page:
            v = e.get('value', '')
    return v

def cur_page(evs):
    p = None
    for e in evs:
        if e.get('type') == 'load' and e.get('path') == '/':
            p = e.get('page')
    return p

cmd, a = sys.argv[1], sys.argv[2:]

if cmd == 'shows-page':                 # IMAGE.ppm full|banner
    sys.exit(0 if shows_page(a[0], a[1] == 'full') else 1)

elif cmd == 'mark':                     # EVENTS -> last n
    evs = events(a[0])
    print(evs[-1]['n'] if evs else 0)

elif cmd == 'wait-load':                # EVENTS SINCE TIMEOUT
    end = time.time() + float(a[2])
    while time.time() < end:
        if any(e.get('type') == 'load' and e.get('path') == '/' for e in events(a[0], int(a[1]))):
            sys.exit(0)
        time.sleep(0.1)
    sys.exit(1)

elif cmd == 'loads':                    # EVENTS SINCE -> page loads since
    print(sum(e.get('type') == 'load' for e in events(a[0], int(a[1]))))

elif cmd == 'typed':                    # EVENTS SINCE TEXT TIMEOUT
    # the textarea's value, which was PREV at SINCE, becomes PREV+TEXT
    before = events(a[0])
    before = [e for e in before if e['n'] <= int(a[1])]
    page = cur_page(before) or cur_page(events(a[0]))
    want = last_value(before, page) + a[2]
    end = time.time() + float(a[3])
    got = None
    while time.time() < end:
        got = last_value(events(a[0]), page)
        if got == want:
            sys.exit(0)
        time.sleep(0.2)
    print('# textarea: want %r' % want)
    print('# textarea: got  %r' % got)
    sys.exit(1)

elif cmd == 'clicked':                  # EVENTS SINCE X Y TIMEOUT
    x, y = int(a[2]), int(a[3])
    end = time.time() + float(a[4])
    while time.time() < end:
        for e in events(a[0], int(a[1])):
            if e.get('type') == 'click':
                print('# click at %s,%s on %r' % (e.get('x'), e.get('y'), e.get('target')))
                sys.exit(0 if (e.get('target') == 'target' and abs(e['x'] - x) <= 1
                               and abs(e['y'] - y) <= 1 and e.get('button') == 0) else 1)
        time.sleep(0.1)
    print('# no click reached the page')
    sys.exit(1)

elif cmd == 'no-paste':                 # EVENTS SINCE SECRET...
    # nothing mentions the secrets, no paste carries text, and the
    # textarea's value does not change (an empty paste is harmless)
    before = [e for e in events(a[0]) if e['n'] <= int(a[1])]
    page = cur_page(before)
    value = last_value(before, page)
    bad = 0
    for e in events(a[0], int(a[1])):
        blob = json.dumps(e, ensure_ascii=False)
        if any(s in blob for s in a[2:]) or \
                (e.get('type') == 'paste' and (e.get('text') or e.get('types'))) or \
                (e.get('type') == 'input' and e.get('value') != value):
            print('# page got: %s' % blob[:200])
            bad += 1
        elif e.get('type') == 'paste':
            print('# page got an empty paste event (nothing on the clipboard)')
    sys.exit(1 if bad else 0)

elif cmd == 'copies':                   # EVENTS SINCE -> copy attempts made
    n = 0
    for e in events(a[0], int(a[1])):
        if e.get('type') in ('copy_attempt', 'copy'):
            n += 1
            if e['type'] == 'copy':
                print('# page: a copy event (%s)' % e.get('target'))
            else:
                print('# page: %s copy_attempt ok=%s %s' % (
                    e.get('method'), e.get('ok'), (e.get('err') or '')[:80]))
    sys.exit(0 if n else 1)

elif cmd == 'combos-absent':            # EVENTS SINCE SPEC...
    # none of the combinations reached the page as a keydown
    evs = [e for e in events(a[0], int(a[1])) if e.get('type') == 'keydown']
    bad = 0
    for spec in a[2:]:
        parts = spec.split('+')
        key, mods = parts[-1], set(p.lower() for p in parts[:-1])
        for e in evs:
            k = e.get('key', '')
            same = (k.lower() == key.lower() or
                    (key == 'Escape' and k == 'Escape'))
            if same and all(e.get(m) for m in mods):
                print('# page got %s as keydown %r ctrl=%s shift=%s alt=%s' % (
                    spec, k, e.get('ctrl'), e.get('shift'), e.get('alt')))
                bad += 1
                break
    sys.exit(1 if bad else 0)

elif cmd == 'count-keys':               # EVENTS SINCE KEY -> keydowns of KEY
    print(sum(1 for e in events(a[0], int(a[1]))
              if e.get('type') == 'keydown' and e.get('key', '').lower() == a[2]))

elif cmd == 'log-count':                # LOG EVENT -> how many
    print(sum(1 for e in log(a[0]) if e.get('event') == a[1]))

elif cmd == 'log-has':                  # LOG EVENT
    sys.exit(0 if any(e.get('event') == a[1] for e in log(a[0])) else 1)

elif cmd == 'clip-logged':              # LOG SECRET SIZE[,SIZE...]
    # a clipboard_dropped event carries one of the sizes; the secret is
    # nowhere in the log
    sizes = set(int(s) for s in a[2].split(','))
    raw = open(a[0], encoding='utf-8', errors='replace').read()
    if a[1] in raw:
        print('# the log contains the clipboard text itself')
        sys.exit(1)
    hits = [e for e in log(a[0]) if e.get('event') == 'clipboard_dropped'
            and sizes & set(ints(e))]
    for e in hits:
        print('# %s' % json.dumps(e)[:200])
    sys.exit(0 if hits else 1)

elif cmd == 'log-pids':                 # LOG USER -> browser pids from the log
    for e in log(a[0]):
        if e.get('event') in ('child_start', 'browser_restart') and \
                'browser' in json.dumps(e).lower():
            for k in ('pid', 'child_pid'):
                if isinstance(e.get(k), int):
                    print(e[k])

elif cmd == 'log-paths':                # LOG -> paths the session made, from its log
    # absolute paths the log names; X displays (":N") as their lock file
    # and socket; the session id (printed as "id ID")
    seen, ids = set(), set()
    for e in log(a[0]):
        if isinstance(e.get('session'), str) and e['session']:
            ids.add(e['session'])
        for v in e.values():
            vs = v if isinstance(v, list) else [v]
            for v in vs:
                if not isinstance(v, str):
                    continue
                if v.startswith('/') and len(v) > 1:
                    seen.add(v)
                # The X socket is in the session's own x/X11-unix (Xvfb
                # has a private /tmp/.X11-unix), gone with the session
                # directory; with -displayfd there is no lock file.
    for p in sorted(seen):
        print(p)
    for i in sorted(ids):
        print('id', i)

else:
    sys.exit('gw.py: unknown command %s' % cmd)
PY
gw() { python3 "$TMP/gw.py" "$@"; }

users_procs() {
	pgrep -u "$SESSION_USERS" 2>/dev/null | tr '\n' ' '
}

# ours_procs: processes of the session users that belong to this session —
# seen under cdsgated during it ($tree), or whose command line names our
# session id or temporary directory (a developer may run other sessions,
# and other Chromiums as these users, at the same time).
ours_procs() {
	local p cmd
	for p in $(users_procs); do
		cmd=$(tr '\0' ' ' < "/proc/$p/cmdline" 2>/dev/null) || continue
		case " $tree " in *" $p "*) echo -n "$p "; continue ;; esac
		case $cmd in *"$SID"* | *"$TMP"*) echo -n "$p " ;; esac
	done
}

# vnc ARGS...: the test client against the session, output kept in $TMP/vnc.out.
vnc() {
	"$VNCTEST" --host "$VHOST" --port "$VPORT" --password-file "$TMP/pw" "$@" \
		> "$TMP/vnc.out" 2> "$TMP/vnc.err"
	local rc=$?
	[ $rc -eq 0 ] || { diag "cdsgate-vnctest $* exited $rc"; sed 's/^/#   /' "$TMP/vnc.err" | tail -5; }
	return $rc
}

# after RC DESCRIPTION COMMAND...: a check that means something only if the
# step before it (exit status RC) worked; skipped with the reason otherwise.
after() {
	local rc=$1 d=$2; shift 2
	if [ "$rc" -ne 0 ]; then skip "$d (not run: the client's step failed)"; else check "$d" "$@"; fi
}

EV=$TMP/events.jsonl
LOG=$TMP/session.log

# ---- start the backend and the session -----------------------------------
pre_procs=$(users_procs)
[ -z "$pre_procs" ] || diag "processes of $SESSION_USERS already running: $pre_procs"
touch "$TMP/stamp"
python3 "$BACKEND" --port 0 --record "$EV" > "$TMP/backend.out" 2> "$TMP/backend.err" &
BE_PID=$!
wait_line "$TMP/backend.out" '^ready ' 10 "$BE_PID" || { cat "$TMP/backend.err" >&2; skip_all "the test backend did not start"; }
BURL="http://$(sed -n 's/^ready //p' "$TMP/backend.out")/"

python3 -c 'import secrets,string; print("".join(secrets.choice(string.ascii_letters+string.digits) for _ in range(8)))' > "$TMP/pw"
echo "wrong${RANDOM}x" | cut -c1-8 > "$TMP/badpw"
chmod 600 "$TMP/pw" "$TMP/badpw"
ASKED=127.0.0.1:$(free_port)
t0=$(date +%s.%N)
"$CDSGATED" run-session --backend "$BURL" --listen "$ASKED" \
	--password-file "$TMP/pw" --log "$LOG" --geometry 1280x800 \
	--record-dir "$TMP/rec" \
	> "$TMP/gw.out" 2> "$TMP/gw.err" &
GW_PID=$!
if wait_line "$TMP/gw.out" '^ready ' 30 "$GW_PID"; then
	ok "cdsgated run-session prints ready ($(python3 -c "import time; print('%.1f' % (time.time() - $t0))") s)"
else
	not_ok "cdsgated run-session prints ready"
	{ echo "stdout:"; tail -5 "$TMP/gw.out"; echo "stderr:"; tail -15 "$TMP/gw.err"; } | sed "s/^/# /"
	done_testing
	exit 1
fi
ADDR=$(sed -n 's/^ready //p' "$TMP/gw.out" | head -1)
VHOST=${ADDR%:*}
VPORT=${ADDR##*:}
check "ready names the address asked for ($ADDR)" test "$ADDR" = "$ASKED"
check "the session log exists and is mode 0600" \
	test "$(stat -c %a "$LOG" 2>/dev/null)" = 600
check "the backend page loaded in the session's browser" gw wait-load "$EV" 0 20

# ---- 1. vncsnapshot sees the page ----------------------------------------
"$VNCTEST" mkpasswd "$TMP/pw" "$TMP/pw.vnc"
if command -v vncpasswd >/dev/null; then
	check "mkpasswd writes what vncpasswd writes" \
		cmp -s "$TMP/pw.vnc" <(head -c 8 "$TMP/pw" | vncpasswd -f)
fi
if ! command -v vncsnapshot >/dev/null || ! command -v convert >/dev/null; then
	skip "vncsnapshot or ImageMagick convert not installed"
else
	for _ in 1 2 3; do	# the first paint may still be coming
		rm -f "$TMP/vs.jpg"
		timeout 10 vncsnapshot -quiet -passwd "$TMP/pw.vnc" -quality 90 \
			"$VHOST::$VPORT" "$TMP/vs.jpg" >"$TMP/vs.err" 2>&1
		convert "$TMP/vs.jpg" "$TMP/vs.ppm" 2>/dev/null &&
			gw shows-page "$TMP/vs.ppm" full >/dev/null && break
		sleep 1
	done
	if [ -s "$TMP/vs.jpg" ]; then
		ok "vncsnapshot -passwd returns an image"
		check "vncsnapshot's picture shows the backend page (banner, target, full screen)" \
			gw shows-page "$TMP/vs.ppm" full
	else
		not_ok "vncsnapshot -passwd returns an image"
		tail -5 "$TMP/vs.err" | sed "s/^/# /"
	fi
fi
vnc snapshot "$TMP/s1.ppm"
check "cdsgate-vnctest's snapshot shows the page too" gw shows-page "$TMP/s1.ppm" full

# ---- 2. typing and clicking arrive exactly --------------------------------
TEXT='Hello World! a@b.c {x}'
m=$(gw mark "$EV")
vnc type "$TEXT"
rc=$?
check "typing through VNC works" test $rc -eq 0
sed "s/^/# /" "$TMP/vnc.out"
after $rc "the page's textarea got exactly \"$TEXT\"" gw typed "$EV" "$m" "$TEXT" 5
m=$(gw mark "$EV")
vnc click 960 380
after $? "a click lands on the target at 960,380" gw clicked "$EV" "$m" 960 380 5

# ---- 3. clipboard closed both ways ----------------------------------------
SECRET="SECRET-$RANDOM$RANDOM-classic"
SECRET2="SECRET-$RANDOM$RANDOM-extended-é"
m=$(gw mark "$EV")
vnc cut "$SECRET" cut-ext "$SECRET2" keys ctrl+v shift+Insert
rc=$?
check "ClientCutText (classic and extended) and a paste shortcut are sent" test $rc -eq 0
sleep 1.5
after $rc "the client's clipboard never reaches the page (no paste, textarea unchanged)" \
	gw no-paste "$EV" "$m" "$SECRET" "$SECRET2"
after $rc "the log has clipboard_dropped with the classic size, not the text" \
	gw clip-logged "$LOG" "$SECRET" "${#SECRET}"
n2=$(printf %s "$SECRET2" | wc -c)
after $rc "the log has clipboard_dropped with the extended size, not the text" \
	gw clip-logged "$LOG" "$SECRET2" "$n2,$((n2 + 1)),$((n2 + 21))"
# The page copies (button: writeText + execCommand; keyboard: select all +
# ctrl+c) while the client watches for ServerCutText in either form.
m=$(gw mark "$EV")
vnc click 320 450 keys ctrl+a ctrl+c click 320 450 watch-cut 3
rc=$?
sed "s/^/# /" "$TMP/vnc.out"
[ $rc -eq 1 ] && skip "the page did try to copy (the client saw ServerCutText)" ||
	after $rc "the page did try to copy" gw copies "$EV" "$m"
check "no ServerCutText reaches the client while the page copies (watch-cut exit $rc)" test $rc -eq 0

# ---- 4. a burst of 1000 keys stays within the budget -------------------------
sleep 2.5	# let the bucket refill
m=$(gw mark "$EV")
rl0=$(gw log-count "$LOG" rate_limited)
if vnc burst 1000 k; then
	elapsed=$(sed -n 's/.*elapsed_seconds=\([0-9.]*\).*/\1/p' "$TMP/vnc.out")
	sleep 2
	got=$(gw count-keys "$EV" "$m" k)
	budget=$(python3 -c "import math; print($KEY_BURST + math.ceil($KEY_RATE * $elapsed))")
	diag "burst: 1000 sent, $got delivered to the page in ${elapsed}s (budget $budget)"
	check "the burst delivered at most the budget ($got delivered; budget $budget = $KEY_BURST + $KEY_RATE/s x ${elapsed}s)" \
		test "$got" -le "$budget"
	check "the burst delivered something (the input path works)" test "$got" -gt 0
else
	not_ok "the burst of 1000 keys was sent"
fi
rl=$(( $(gw log-count "$LOG" rate_limited) - rl0 ))
diag "rate_limited events: $rl"
check "the log has rate_limited" test "$rl" -gt 0

# ---- 5. escape combinations -----------------------------------------------
# The issue's list, upper-case variants (shift is down, so a viewer sends the
# shifted keysym), and other ways out of a kiosk browser.
REQUIRED="ctrl+n ctrl+t ctrl+w ctrl+shift+n ctrl+shift+w ctrl+shift+i ctrl+shift+j
ctrl+shift+c alt+F4 shift+Escape ctrl+j ctrl+h ctrl+o ctrl+s ctrl+p ctrl+u F11 F12"
VARIANTS="ctrl+shift+N ctrl+shift+W ctrl+shift+I ctrl+shift+J ctrl+shift+C ctrl+N ctrl+T ctrl+W"
EXTRA="ctrl+q ctrl+shift+q ctrl+shift+t ctrl+shift+o ctrl+shift+b ctrl+shift+Delete
ctrl+F4 ctrl+d ctrl+e ctrl+k ctrl+l alt+d alt+f alt+e alt+Home F1 F6 F10 ctrl+shift+m ctrl+shift+a"
# shellcheck disable=SC2086
set -- $REQUIRED $VARIANTS $EXTRA
ncombos=$#
m=$(gw mark "$EV")
kf0=$(gw log-count "$LOG" key_filtered)
br0=$(gw log-count "$LOG" browser_restart)
sleep 2	# a full token bucket
vnc --rate 9 keys "$@"
rc=$?
check "all $ncombos escape combinations are sent" test $rc -eq 0
sleep 1.5
# shellcheck disable=SC2086
after $rc "none of the issue's escape combinations reached the page" \
	gw combos-absent "$EV" "$m" $REQUIRED $VARIANTS
kf=$(( $(gw log-count "$LOG" key_filtered) - kf0 ))
diag "key_filtered events: $kf for $ncombos combinations"
check "the log has key_filtered for each required combination (>= $(echo $REQUIRED $VARIANTS | wc -w))" \
	test "$kf" -ge "$(echo $REQUIRED $VARIANTS | wc -w)"
after $rc "the page was not reloaded and the browser not restarted by them" \
	test "$(gw loads "$EV" "$m")" -eq 0 -a "$(gw log-count "$LOG" browser_restart)" -eq "$br0"
vnc snapshot "$TMP/s4.ppm" >/dev/null
check "afterwards the screen is still the backend page, full screen (kiosk)" \
	gw shows-page "$TMP/s4.ppm" full
m=$(gw mark "$EV")
vnc type ' still here' >/dev/null
check "and the page still takes typing" gw typed "$EV" "$m" ' still here' 5

# ---- 6. a killed browser comes back ----------------------------------------
# The browser's pid from the log (child_start), else the oldest chromium
# process of the browser user; either way it must be that user's chromium.
is_browser() {
	[ "$(cat "/proc/$1/comm" 2>/dev/null)" = chromium ] &&
		[ "$(stat -c %U "/proc/$1" 2>/dev/null)" = "$BROWSER_USER" ]
}
bpid=
# (the logged pid is the jail's init: the browser is its child)
for p in $(gw log-pids "$LOG"); do
	for c in $p $(pgrep -P "$p" 2>/dev/null); do is_browser "$c" && bpid=$c; done
done
if [ -z "$bpid" ]; then
	p=$(pgrep -o -x -u "$BROWSER_USER" chromium 2>/dev/null)
	[ -n "$p" ] && is_browser "$p" && bpid=$p &&
		diag "the log names no live browser pid; using the oldest chromium of $BROWSER_USER"
fi
if [ -z "$bpid" ]; then
	not_ok "found the session's browser process (user $BROWSER_USER)"
	ps -eo user,pid,ppid,comm | grep -E "chrom|cdsgate" | head | sed "s/^/# /"
else
	sleep 2.5
	m=$(gw mark "$EV")
	br0=$(gw log-count "$LOG" browser_restart)
	t0=$(date +%s.%N)
	kill -KILL "$bpid"
	if gw wait-load "$EV" "$m" 20; then
		dt=$(python3 -c "import time; print('%.1f' % (time.time() - $t0))")
		ok "the killed browser (pid $bpid) is back with the page in ${dt}s"
		check "the restart took less than 10 s" python3 -c "import sys; sys.exit(not $dt < 10)"
	else
		not_ok "the killed browser (pid $bpid) is back with the page"
	fi
	sleep 1
	vnc snapshot "$TMP/s6.ppm" >/dev/null
	check "the snapshot after the restart shows the page" gw shows-page "$TMP/s6.ppm" full
	check "the log has browser_restart" test "$(gw log-count "$LOG" browser_restart)" -gt "$br0"
	m=$(gw mark "$EV")
	vnc type 'back' >/dev/null
	check "the restarted page takes typing" gw typed "$EV" "$m" 'back' 5
fi

# ---- 7. a wrong password is refused and logged -------------------------------
af0=$(gw log-count "$LOG" auth_fail)
"$VNCTEST" --host "$VHOST" --port "$VPORT" --password-file "$TMP/badpw" expect-refused \
	> "$TMP/vnc.out" 2>&1
check "a wrong password is refused ($(head -1 "$TMP/vnc.out"))" \
	grep -q '^refused: auth' "$TMP/vnc.out"
sleep 0.5
check "the log has auth_fail" test "$(gw log-count "$LOG" auth_fail)" -gt "$af0"
check "the right password still gets in afterwards" vnc sync

# ---- 8. SIGTERM ends everything --------------------------------------------------
gw log-paths "$LOG" > "$TMP/logpaths"
# What the session created: paths its log names and anything named *cdsgate*
# or an X lock file that appeared under the usual places since it started.
tree=$(descendants "$GW_PID")
SID=$(sed -n "s/^id //p" "$TMP/logpaths" 2>/dev/null | head -1)
: "${SID:=no-session-id-in-the-log}"
during=$(ours_procs)
homes=$(getent passwd ${SESSION_USERS//,/ } | cut -d: -f6)
{
	grep -v '^id ' "$TMP/logpaths"
	# directories named after the session id (other sessions may be
	# running on a developer's machine: match only ours)
	sed -n 's/^id //p' "$TMP/logpaths" | while read -r id; do
		[ ${#id} -ge 6 ] || continue
		find /run /tmp /var/tmp /var/lib /dev/shm -maxdepth 4 -newer "$TMP/stamp" \
			-name "*$id*" 2>/dev/null
	done
} | while read -r p; do
	case $p in "$TMP"* | /usr/* | /etc/* | /bin/* | /lib*) continue ;; esac
	case $p in /run/* | /tmp/* | /var/tmp/* | /var/lib/* | /dev/shm/*) ;; *) continue ;; esac
	for h in $homes; do [ "$p" = "$h" ] && continue 2; done
	[ -e "$p" ] && echo "$p"
done | sort -u > "$TMP/paths"
diag "session paths to check: $(tr '\n' ' ' < "$TMP/paths")"
t_term=$(date +%s)
kill -TERM "$GW_PID"
rc=timeout
for _ in $(seq 150); do
	if ! kill -0 "$GW_PID" 2>/dev/null; then wait "$GW_PID"; rc=$?; break; fi
	sleep 0.1
done
GW_PID=
check "cdsgated exits 0 on SIGTERM (got $rc)" test "$rc" = 0
sleep 0.5
left=$(ours_procs)
diag "processes of $SESSION_USERS during the session: $during"
check "no processes of $SESSION_USERS are left" test -z "$left"
[ -z "$left" ] || ps -o user,pid,comm -p "$(echo $left | tr " " ,)" 2>/dev/null | sed "s/^/# /"
# Each is gone, or is an empty directory (a parent such as /run/cdsgate
# may stay; nothing of the session may stay in it), or was made anew after
# we sent SIGTERM (another session took the same X display number).
gone_or_empty() {
	[ ! -e "$1" ] && return 0
	[ -d "$1" ] && [ -z "$(ls -A "$1" 2>/dev/null)" ] && return 0
	if [ "$(stat -c %Z "$1" 2>/dev/null || echo 0)" -ge "$t_term" ]; then
		diag "$1 exists again, made after SIGTERM: another session's"
		return 0
	fi
	return 1
}
if [ -s "$TMP/paths" ]; then
	while read -r p; do
		check "the session's $p is gone (or empty)" gone_or_empty "$p"
	done < "$TMP/paths"
else
	skip "no session directory found to check (no path in the log, nothing named after the session id)"
fi
check "the log has session_stop" gw log-has "$LOG" session_stop
check "every log line is JSON with ts, session, proc and event" python3 - "$LOG" <<'PY'
import json, sys
for line in open(sys.argv[1], encoding='utf-8'):
    e = json.loads(line)
    assert {'ts', 'session', 'proc', 'event'} <= set(e), line
PY

done_testing
