#!/usr/bin/env bash
# 026-tls-front-door: VeNCrypt X509Plain for native VNC clients and wss for
# noVNC-style clients.  A self-signed certificate made
# with `openssl req`, a credentials file with one scrypt-hashed and one
# plain user, and a real session on 127.0.0.2 with unencrypted VNC turned
# off (--allow-plain-vnc=no: what a non-loopback address gets by default;
# the default itself is checked with check-session on 10.x addresses):
#   a. TigerVNC vncviewer on its own Xvfb logs in (VNC_USERNAME/PASSWORD,
#      -X509CA) and a screenshot of that Xvfb shows the backend page
#   b. a wrong password is refused and logged (user, never the password)
#   c. cdsgate-vnctest (libvncclient, VeNCrypt) gets the page and types
#      text that arrives in the page
#   d. a client choosing plain VncAuth is refused with an RFB reason and
#      logged; plain ws:// is refused too
#   e. wss (Python ssl + websocket handshake) with the token and Origin
#      gets the RFB greeting; a wrong token or Origin is refused; and noVNC
#      itself in sandboxed headless Chromium shows the page over wss://
# The TLS key lives in the tls process only: the worker's whole memory
# (/proc/PID/mem) has neither the key's DER, a line of its PEM nor its prime,
# the tls process has the prime (positive control), and is filtered, not
# root, not dumpable.  SIGKILL of the tls process ends the session (exit 1,
# tls_exit, directory removed); CDSGATE_TEST_VIOLATE=tls:execve kills it.
# Then a loopback session with the default (plain allowed) serves the old
# VncAuth client through the same door, and a session on a veth address in
# its own network namespace shows the non-loopback default (plain off) end
# to end.  Needs root, Xvfb, Chromium and openssl; the parts needing
# vncviewer/import or network namespaces skip with the reason.
. "$(dirname "$0")/lib.sh"

CDSGATED=${CDSGATED:-$top_builddir/cdsgated}
VNCTEST=${VNCTEST:-$top_builddir/tests/gateway/cdsgate-vnctest}
BACKEND=$top_srcdir/tests/gateway/backend.py
HOST=127.0.0.2
NSADDR=10.77.0.1	# on a veth in a network namespace of our own

[ "$(id -u)" -eq 0 ] || skip_all "needs root (cdsgated runs the session as its own users)"
[ -x "$CDSGATED" ] || skip_all "cdsgated not built at $CDSGATED"
[ -x "$VNCTEST" ] || skip_all "cdsgate-vnctest not built at $VNCTEST"
command -v Xvfb >/dev/null || skip_all "Xvfb not installed"
[ -x /usr/lib/chromium/chromium ] || skip_all "chromium not installed (/usr/lib/chromium/chromium)"
command -v python3 >/dev/null || skip_all "python3 not installed"
command -v openssl >/dev/null || skip_all "openssl not installed"

GW_PID=
BE_PID=
XV_PID=
VV_PID=
PROFILE=$(mktemp -d "${TMPDIR:-/tmp}/cdsgate-tls-viewer.XXXXXX")	# outside $TMP (0700)
ARTIFACTS=$top_builddir/tests/regress/026-tls-front-door.artifacts
rm -rf "$ARTIFACTS"
cleanup() {
	local p
	for p in $VV_PID $XV_PID $GW_PID $BE_PID; do stop_pid "$p"; done
	if [ "$tap_failed" -gt 0 ] && mkdir -p "$ARTIFACTS" 2>/dev/null; then
		cp "$TMP"/*.log "$TMP"/*.out "$TMP"/*.err "$TMP"/*.ppm "$TMP"/*.png \
			"$TMP"/*.jsonl "$ARTIFACTS"/ 2>/dev/null
		echo "# failed: logs and screenshots kept in $ARTIFACTS"
	fi
	rm -rf "$TMP" "$PROFILE"
}
trap cleanup EXIT

# ---- one Python helper for pixels, page events, log lines and raw clients --
cat > "$TMP/t.py" <<'PY'
import base64, json, os, re, socket, ssl, struct, sys, time
BANNER = (216, 27, 96)

def ppm_banner(path):
    d = open(path, 'rb').read()
    m = re.match(rb'P6\s+(\d+)\s+(\d+)\s+255\s', d)
    w, h, px = int(m.group(1)), int(m.group(2)), d[m.end():]
    for name, x0, y0, x1, y1 in (('top-left', 4, 4, 64, 64),
                                 ('top-right', w - 64, 4, w - 4, 64)):
        good = n = 0
        for y in range(y0, y1, 2):
            for x in range(x0, x1, 2):
                i = 3 * (y * w + x)
                n += 1
                good += all(abs(px[i + k] - BANNER[k]) <= 40 for k in range(3))
        print('# banner %-9s %5.1f%% of pixels match rgb%s' % (name, 100 * good / n, BANNER))
        if good < 0.9 * n:
            return False
    return True

def log(path):
    return [json.loads(l) for l in open(path, encoding='utf-8') if l.startswith('{')]

def ws_frame(s, rest):
    while len(rest) < 2:
        rest += s.recv(4096)
    n, off = rest[1] & 0x7f, 2
    if n == 126:
        while len(rest) < 4:
            rest += s.recv(4096)
        n, off = struct.unpack('>H', rest[2:4])[0], 4
    while len(rest) < off + n:
        rest += s.recv(4096)
    return rest[off:off + n]

cmd, a = sys.argv[1], sys.argv[2:]
if cmd == 'banner':                     # IMAGE.ppm
    sys.exit(0 if ppm_banner(a[0]) else 1)
elif cmd == 'typed':                    # EVENTS TEXT TIMEOUT
    end = time.time() + float(a[2])
    v = None
    while time.time() < end:
        for l in open(a[0], encoding='utf-8'):
            e = json.loads(l)
            if e.get('type') == 'input':
                v = e.get('value', '')
        if v is not None and v.endswith(a[1]):
            sys.exit(0)
        time.sleep(0.2)
    print('# textarea: %r' % v)
    sys.exit(1)
elif cmd in ('mark', 'loaded'):        # mark EVENTS -> last n; loaded EVENTS SINCE TIMEOUT
    def evs():
        try:
            return [json.loads(l) for l in open(a[0], encoding='utf-8')]
        except FileNotFoundError:
            return []
    if cmd == 'mark':
        print(max([e.get('n', 0) for e in evs()] + [0]))
        sys.exit(0)
    end = time.time() + float(a[2])
    while time.time() < end:
        if any(e.get('type') == 'load' and e.get('n', 0) > int(a[1]) for e in evs()):
            sys.exit(0)
        time.sleep(0.1)
    sys.exit(1)
elif cmd == 'novnc':                    # EVENTS SINCE TIMEOUT: noVNC's page saw the banner
    end, seen = time.time() + float(a[2]), set()
    while time.time() < end:
        for l in open(a[0], encoding='utf-8'):
            e = json.loads(l)
            if e.get('type') != 'novnc' or e.get('n', 0) <= int(a[1]):
                continue
            seen.add(e.get('state'))
            rgb = e.get('rgb') or [0, 0, 0]
            if e.get('state') == 'pixel' and all(abs(x - y) <= 24 for x, y in zip(rgb, BANNER)):
                print('# noVNC pixel at %s,%s: rgb%s' % (e.get('x'), e.get('y'), tuple(rgb)))
                sys.exit(0)
        time.sleep(0.2)
    print('# noVNC states: %s' % sorted(s for s in seen if s))
    sys.exit(1)
elif cmd == 'log':                      # LOG EVENT KEY=VALUE... (VALUE ~ regex)
    # the session's processes write the line after the client saw the
    # refusal: wait for it a while (5 s) before saying it is not there
    end = time.time() + 5
    while True:
        for e in log(a[0]):
            if e.get('event') == a[1] and all(
                    re.search(kv.split('=', 1)[1], str(e.get(kv.split('=', 1)[0], '')))
                    for kv in a[2:]):
                print('# %s' % json.dumps(e)[:230])
                sys.exit(0)
        if time.time() > end:
            sys.exit(1)
        time.sleep(0.1)
elif cmd == 'pid':                      # LOG ROLE -> the pid of its last child_start
    print([e['pid'] for e in log(a[0]) if e.get('event') == 'child_start'
           and e.get('role') == a[1]][-1])
elif cmd == 'mem':                      # PID NAME:HEX... -> "NAME found|absent" per needle
    # every readable mapping of PID, read through /proc/PID/mem (root)
    # (in 64 MiB pieces that overlap by the longest needle; mappings over
    # 4 GiB are a sanitizer's shadow, not data, and are skipped)
    needles = [(n, bytes.fromhex(h)) for n, h in (x.split(':', 1) for x in a[1:])]
    found, total, skipped, CH = set(), 0, 0, 64 << 20
    ov = max(len(b) for _, b in needles)
    with open('/proc/%s/maps' % a[0]) as maps, open('/proc/%s/mem' % a[0], 'rb', 0) as mem:
        for line in maps:
            rng, perms = line.split()[:2]
            lo, hi = (int(x, 16) for x in rng.split('-'))
            if perms[0] != 'r' or hi - lo > (4 << 30):
                skipped += perms[0] == 'r'
                continue
            for off in range(lo, hi, CH):
                try:
                    mem.seek(off)
                    d = mem.read(min(CH + ov, hi - off))
                except (OSError, ValueError, OverflowError):
                    break
                total += len(d)
                for n, b in needles:
                    if b in d:
                        found.add(n)
    print('# read %d MiB of %s (%d huge mappings skipped)' % (total >> 20, a[0], skipped))
    for n, _ in needles:
        print('%s %s' % (n, 'found' if n in found else 'absent'))
    sys.exit(0 if total > 0 else 1)
elif cmd == 'count':                  # LOG EVENT KEY=VALUE... -> how many
    print(sum(1 for e in log(a[0]) if e.get('event') == a[1] and all(
        re.search(kv.split('=', 1)[1], str(e.get(kv.split('=', 1)[0], '')))
        for kv in a[2:])))
elif cmd == 'plain-vncauth':            # HOST PORT -> the refusal reason
    s = socket.create_connection((a[0], int(a[1])), timeout=5)
    assert s.recv(12) == b'RFB 003.008\n'
    s.sendall(b'RFB 003.008\n')
    n = s.recv(1)[0]
    types = list(s.recv(n))
    print('# security types offered: %s' % types)
    s.sendall(bytes([2]))
    r = b''
    while True:
        d = s.recv(4096)
        if not d:
            break
        r += d
    if types == [19] and r[:4] == b'\0\0\0\1':
        print(r[8:8 + struct.unpack('>I', r[4:8])[0]].decode())
        sys.exit(0)
    print('# got %r' % r[:80])
    sys.exit(1)
elif cmd == 'abort':                    # HOST PORT CA USER PWFILE N: log in, ask a frame, reset
    host, port, ca, user, pw = a[0], int(a[1]), a[2], a[3].encode(), open(a[4], 'rb').read().strip()
    for i in range(int(a[5])):
        s = socket.create_connection((host, port), timeout=10)
        assert s.recv(12) == b'RFB 003.008\n'
        s.sendall(b'RFB 003.008\n'); s.recv(s.recv(1)[0]); s.sendall(b'\x13')
        s.recv(2); s.sendall(b'\0\2'); s.recv(1); s.recv(5)
        s.sendall(struct.pack('>I', 262)); s.recv(1)
        s = ssl.create_default_context(cafile=ca).wrap_socket(s, server_hostname=host)
        s.sendall(struct.pack('>II', len(user), len(pw)) + user + pw)
        r = s.recv(4)
        if r != b'\0\0\0\0':
            print('# login %d: %r' % (i, r)); sys.exit(1)
        s.sendall(b'\1')                       # ClientInit, shared
        hdr = b''
        while len(hdr) < 24:
            hdr += s.recv(24 - len(hdr))
        w, h = struct.unpack('>HH', hdr[:4])
        s.recv(struct.unpack('>I', hdr[20:24])[0])
        s.sendall(struct.pack('>BBHHHH', 3, 0, 0, 0, w, h))  # a full raw frame
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack('ii', 1, 0))
        s.close()                              # RST while the frame is relayed
        time.sleep(0.5)
    print('# %s logins, each reset while a %dx%d frame was on its way' % (a[5], w, h))
elif cmd == 'hostile':                  # HOST PORT CA: malformed handshakes
    host, port, ca = a[0], int(a[1]), a[2]
    def start(types=True):
        s = socket.create_connection((host, port), timeout=5)
        assert s.recv(12) == b'RFB 003.008\n'
        return s
    def rest(s):
        out = b''
        try:
            while True:
                d = s.recv(4096)
                if not d:
                    return out
                out += d
        except ConnectionResetError:
            return out      # closed with our bytes unread: a reset
        except OSError:
            return out + b'<timeout>'
    def vencrypt(s):
        s.sendall(b'RFB 003.008\n')
        n = s.recv(1)[0]
        s.recv(n)
        s.sendall(b'\x13')
        assert s.recv(2) == b'\0\2'
    def tls(s):
        vencrypt(s)
        s.sendall(b'\0\2')
        assert s.recv(1) == b'\0'
        assert s.recv(5) == b'\1\0\0\1\6'
        s.sendall(struct.pack('>I', 262))
        assert s.recv(1) == b'\1'
        return s
    cases = []
    s = start(); s.sendall(b'HELLO WORLD!'); cases.append(('not RFB', rest(s) == b''))
    s = start(); s.sendall(b'RFB 003.003\n'); r = rest(s)
    cases.append(('RFB 3.3: failure with reason', r[:4] == b'\0\0\0\0' and b'3.7' in r))
    s = start(); vencrypt(s); s.sendall(b'\0\1'); cases.append(('VeNCrypt 0.1', rest(s) == b'\xff'))
    s = start(); vencrypt(s); s.sendall(b'\0\2'); s.recv(6); s.sendall(struct.pack('>I', 259))
    cases.append(('TLSPlain asked for: refused', rest(s) == b'\0'))
    s = tls(start()); s.sendall(b'NOT-TLS!' * 40); g = rest(s)
    cases.append(('garbage for a ClientHello', g == b'' or g[:1] == b'\x15'))   # close or TLS alert
    s = ssl.create_default_context(cafile=ca).wrap_socket(tls(start()), server_hostname=host)
    s.sendall(struct.pack('>II', 0xffffffff, 5)); r = rest(s)
    cases.append(('user name length 2^32-1', r[:4] == b'\0\0\0\1' and b'authentication failed' in r))
    s = ssl.create_default_context(cafile=ca).wrap_socket(tls(start()), server_hostname=host)
    s.sendall(struct.pack('>II', 5, 300)); r = rest(s)
    cases.append(('password length 300', r[:4] == b'\0\0\0\1'))
    s = ssl.create_default_context(cafile=ca).wrap_socket(tls(start()), server_hostname=host)
    s.sendall(b'\0\0'); s.close(); cases.append(('half a Plain message, then gone', True))
    s = tls(start()); s.sendall(b'\x16\x03\x01\x02\x00\x01'); s.close(); cases.append(('half a ClientHello, then gone', True))
    bad = 0
    print('# garbage for a ClientHello got %r' % g[:16])
    for name, good in cases:
        print('# %-34s %s' % (name, 'ok' if good else 'UNEXPECTED'))
        bad += not good
    sys.exit(1 if bad else 0)
elif cmd == 'flood':                    # HOST PORT N: N broken TLS hellos, then one more
    host, port, n = a[0], int(a[1]), int(a[2])
    t0 = time.time()
    for i in range(n + 1):
        if i == n:
            time.sleep(1.5)     # the bucket refills; this line reports the rest
        s = socket.create_connection((host, port), timeout=5)
        s.sendall(b'\x16\x03\x01\x00\x08NOTAHELLO')
        try:
            s.recv(100)
        except OSError:
            pass
        s.close()
    print('%.2f' % (time.time() - t0))
elif cmd == 'ws':                       # HOST PORT CA|- PATH ORIGIN -> "101 RFB..." or why not
    host, port = a[0], int(a[1])
    s = socket.create_connection((host, port), timeout=5)
    if a[2] != '-':
        s = ssl.create_default_context(cafile=a[2]).wrap_socket(s, server_hostname=host)
    key = base64.b64encode(os.urandom(16)).decode()
    s.sendall(('GET %s HTTP/1.1\r\nHost: %s:%d\r\nUpgrade: websocket\r\n'
               'Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\n'
               'Sec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: binary\r\n'
               'Origin: %s\r\n\r\n' % (a[3], host, port, key, a[4])).encode())
    resp = b''
    try:
        while b'\r\n\r\n' not in resp:
            d = s.recv(4096)
            if not d:
                break
            resp += d
    except OSError as e:
        print('closed (%s)' % e)
        sys.exit(1)
    head, _, rest = resp.partition(b'\r\n\r\n')
    if b' 101 ' not in head.split(b'\r\n')[0]:
        print('closed' if not head else head.split(b'\r\n')[0].decode())
        sys.exit(1)
    ver = ws_frame(s, rest)
    tls = ' %s %s' % (s.version(), s.cipher()[0]) if a[2] != '-' else ''
    print('101 %s%s' % (ver.decode().strip(), tls))
    sys.exit(0 if ver.startswith(b'RFB 003.') else 1)
PY
t() { python3 "$TMP/t.py" "$@"; }

# ---- certificate, key, credentials, secrets ------------------------------
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=$HOST" \
	-addext "subjectAltName=IP:$HOST,IP:$NSADDR,DNS:localhost" \
	-keyout "$TMP/key.pem" -out "$TMP/cert.pem" 2>"$TMP/openssl.err" ||
	skip_all "openssl req failed: $(tail -1 "$TMP/openssl.err")"
chmod 600 "$TMP/key.pem"
APW="alice-$RANDOM-pw"
BPW="bob-$RANDOM-pw"
AHASH=$(printf '%s\n' "$APW" | "$CDSGATED" hash-password)
check "cdsgated hash-password prints a \$scrypt\$ secret" \
	test "${AHASH#\$scrypt\$ln=14,r=8,p=1\$}" != "$AHASH"
check "the hash is scrypt as Python's hashlib computes it" python3 -c '
import hashlib, sys
_, _, params, salt, key = sys.argv[1].split("$")
p = dict(kv.split("=") for kv in params.split(","))
k = hashlib.scrypt(sys.argv[2].encode(), salt=bytes.fromhex(salt), n=2 ** int(p["ln"]),
                   r=int(p["r"]), p=int(p["p"]), dklen=len(key) // 2)
sys.exit(0 if k.hex() == key else 1)' "$AHASH" "$APW"
printf '# the users\nalice:%s\nbob:%s\n' "$AHASH" "$BPW" > "$TMP/creds"
chmod 600 "$TMP/creds"
printf '%s\n' "$APW" > "$TMP/apw"
printf '%s\n' "$BPW" > "$TMP/bpw"
printf 'not-%s\n' "$APW" > "$TMP/wrongpw"
python3 -c 'import secrets,string; print("".join(secrets.choice(string.ascii_letters+string.digits) for _ in range(8)))' > "$TMP/pw"
python3 -c 'import secrets; print(secrets.token_urlsafe(24))' > "$TMP/tok"
chmod 600 "$TMP/apw" "$TMP/bpw" "$TMP/wrongpw" "$TMP/pw" "$TMP/tok"
TOK=$(cat "$TMP/tok")

# ---- the spec: defaults and refusals (no session needed) ------------------
TLSARGS=(--tls-cert "$TMP/cert.pem" --tls-key "$TMP/key.pem" --credentials-file "$TMP/creds")
cs() { "$CDSGATED" check-session --backend http://127.0.0.1:9/ --password-file "$TMP/pw" "$@"; }
cs --listen 10.1.2.3:0 > "$TMP/cs.out" 2> "$TMP/cs.err"
check "a non-loopback listener without TLS is refused (exit 2)" test $? -eq 2
check "... saying why" grep -q "unencrypted VNC is off for 10.1.2.3" "$TMP/cs.err"
cs --listen 10.1.2.3:0 "${TLSARGS[@]}" > "$TMP/cs.json" 2> "$TMP/cs.err"
check "with TLS it is accepted, and plain VNC is off by default there" \
	test "$(json "$TMP/cs.json" 'j["allow_plain_vnc"]')" = False
cs --listen "[::1]:0" "${TLSARGS[@]}" > "$TMP/cs.json" 2>/dev/null
check "on loopback plain VNC stays on by default (tests 020/021 unchanged)" \
	test "$(json "$TMP/cs.json" 'j["allow_plain_vnc"]')" = True
cs --listen 10.1.2.3:0 --allow-plain-vnc > "$TMP/cs.json" 2>/dev/null
check "--allow-plain-vnc overrides the default" \
	test "$(json "$TMP/cs.json" 'j["allow_plain_vnc"]')" = True
chmod 640 "$TMP/key.pem"
cs --listen "$HOST:0" "${TLSARGS[@]}" > /dev/null 2> "$TMP/cs.err"
check "a group-readable key file is refused (exit 2)" test $? -eq 2
check "... naming the mode" grep -q "mode 0640" "$TMP/cs.err"
chmod 600 "$TMP/key.pem"
printf 'mallory:$scrypt$ln=30,r=8,p=1$00$00\n' > "$TMP/badcreds"
chmod 600 "$TMP/badcreds"
cs --listen "$HOST:0" --tls-cert "$TMP/cert.pem" --tls-key "$TMP/key.pem" \
	--credentials-file "$TMP/badcreds" > /dev/null 2> "$TMP/cs.err"
check "a credentials file with a bad hash is refused with file:line" \
	grep -q "badcreds:1: bad \$scrypt\$ secret" "$TMP/cs.err"
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj "/CN=other" \
	-keyout "$TMP/other.pem" -out /dev/null 2>/dev/null
chmod 600 "$TMP/other.pem"
cs --listen "$HOST:0" --tls-cert "$TMP/cert.pem" --tls-key "$TMP/other.pem" \
	--credentials-file "$TMP/creds" > /dev/null 2> "$TMP/cs.err"
check "a key that does not match the certificate is refused" test $? -eq 2

# ---- backend and a session with plain VNC off -----------------------------
EV=$TMP/events.jsonl
NOVNC=${NOVNC:-/usr/share/novnc}
python3 "$BACKEND" --port 0 --record "$EV" --novnc "$NOVNC" \
	> "$TMP/backend.out" 2> "$TMP/backend.err" &
BE_PID=$!
wait_line "$TMP/backend.out" '^ready ' 10 "$BE_PID" || skip_all "the test backend did not start"
BURL="http://$(sed -n 's/^ready //p' "$TMP/backend.out")/"
BORIGIN=${BURL%/}

# start_session LOG ARGS...: sets GW_PID and PORT; waits for the page
start_session() {
	local log=$1 m; shift
	m=$(t mark "$EV")
	PORT=$(free_port $HOST)
	"$CDSGATED" run-session --record-dir "$TMP/rec" --backend "$BURL" --listen "$HOST:$PORT" \
		--password-file "$TMP/pw" --log "$log" "${TLSARGS[@]}" "$@" \
		> "$TMP/gw.out" 2> "$TMP/gw.err" &
	GW_PID=$!
	wait_line "$TMP/gw.out" '^ready ' 30 "$GW_PID" || return 1
	t loaded "$EV" "$m" 30 || diag "the page did not load within 30 s"
	sleep 1		# from load to painted
}
LOG=$TMP/session.log
if ! start_session "$LOG" --allow-plain-vnc=no --ws-token-file "$TMP/tok"; then
	not_ok "the TLS session starts"
	sed 's/^/# /' "$TMP/gw.err" | tail -10
	done_testing
	exit 1
fi
ok "the TLS session starts on $HOST:$PORT with plain VNC off"
check "the worker logs the front door (TLS on, plain off, 2 users)" \
	t log "$LOG" front_door tls=True allow_plain=False users=2
check "the relay's buffer holds a whole raw frame (the library never stalls the loop)" \
	t log "$LOG" front_door relay_fits_frame=True

vt() {	# vt USER PWFILE ARGS...: the libvncclient test client over VeNCrypt
	local u=$1 pw=$2; shift 2
	"$VNCTEST" --host $HOST --port "$PORT" --user "$u" --ca "$TMP/cert.pem" \
		--password-file "$pw" --timeout 30 "$@" > "$TMP/vt.out" 2> "$TMP/vt.err"
}

# ---- (c) libvncclient over VeNCrypt: picture and typing -------------------
for _ in 1 2 3; do
	vt alice "$TMP/apw" snapshot "$TMP/c.ppm" && t banner "$TMP/c.ppm" >/dev/null && break
	sleep 1
done
check "cdsgate-vnctest logs in as alice (scrypt hash) over VeNCrypt X509Plain" test -s "$TMP/c.ppm"
check "... and its snapshot shows the backend page" t banner "$TMP/c.ppm"
TEXT="tls typed $RANDOM"
vt alice "$TMP/apw" type "$TEXT"
check "typing over the relay works" test $? -eq 0
check "the page's textarea got \"$TEXT\"" t typed "$EV" "$TEXT" 8
vt bob "$TMP/bpw" snapshot "$TMP/c2.ppm"
check "bob (plain-text secret) logs in too" t banner "$TMP/c2.ppm"
check "the log has auth_ok for alice with the TLS version and cipher" \
	t log "$LOG" auth_ok user=alice 'tls_version=TLSv1\.[23]' tls_cipher=.
check "the log has connect for alice with tls=true" t log "$LOG" connect user=alice tls=True

# ---- the key lives in the tls process only -------------------------------------
# Needles: the key's DER (openssl pkey -outform DER), a line of its PEM body,
# and 32 bytes of its first prime both ways round (OpenSSL keeps BIGNUMs as
# little-endian words: the positive control finds them in the tls process).
check "the tls process logs its start (2 users)" t log "$LOG" tls_start proc=tls users=2
check "... and it is the one that logs auth_ok" t log "$LOG" auth_ok proc=tls user=alice
WPID=$(t pid "$LOG" worker)
KPID=$(t pid "$LOG" tls)
openssl pkey -in "$TMP/key.pem" -outform DER -out "$TMP/key.der"
P1=$(openssl pkey -in "$TMP/key.pem" -noout -text |
	awk '/^prime1:/{p=1; next} /^prime2:/{p=0} p' | tr -d ' :\n' | sed 's/^00//')
NEEDLES=("der:$(od -An -v -tx1 "$TMP/key.der" | tr -d ' \n')"
	"pem:$(sed -n 3p "$TMP/key.pem" | tr -d '\n' | od -An -v -tx1 | tr -d ' \n')"
	"prime:${P1:16:64}"
	"prime_le:$(echo "${P1:16:64}" | fold -w2 | tac | tr -d '\n')"
	"bobpw:$(printf '%s' "$BPW" | od -An -v -tx1 | tr -d ' \n')"
	"ahash:${AHASH##*\$}")
diag "worker pid $WPID, tls pid $KPID; DER $(stat -c %s "$TMP/key.der") bytes"
check "the tls process is filtered (Seccomp: 2, NoNewPrivs: 1)" \
	sh -c "grep -q '^Seccomp:[[:space:]]*2' /proc/$KPID/status && grep -q '^NoNewPrivs:[[:space:]]*1' /proc/$KPID/status"
check "... runs as cdsgate, not root" \
	test "$(awk '/^Uid:/{print $2 $3 $4 $5}' /proc/$KPID/status)" = "$(id -u cdsgate)$(id -u cdsgate)$(id -u cdsgate)$(id -u cdsgate)"
check "... and is not dumpable (its /proc files belong to root)" test "$(stat -c %u /proc/$KPID/mem)" = 0
check "... and ignores SIGPIPE (OpenSSL writes to sockets a client may have closed)" \
	python3 -c "import re,sys; m=re.search(r'SigIgn:\s*([0-9a-f]+)', open('/proc/$KPID/status').read()); sys.exit(0 if int(m.group(1), 16) & (1 << 12) else 1)"
check "the worker maps nothing of the key or credentials files" \
	sh -c "! grep -qE 'key\.pem|creds' /proc/$WPID/maps"
check "... and has no descriptor on them" \
	sh -c "! ls -l /proc/$WPID/fd | grep -qE 'key\.pem|creds'"
t mem "$WPID" "${NEEDLES[@]}" > "$TMP/wmem.out"
check "the worker's memory could be read" test $? -eq 0
sed -n 1p "$TMP/wmem.out"
check "the key's DER bytes are not in the worker's memory" grep -q '^der absent' "$TMP/wmem.out"
check "nor a line of its PEM" grep -q '^pem absent' "$TMP/wmem.out"
check "nor bob's secret or alice's scrypt hash (the credentials)" \
	sh -c "grep -q '^bobpw absent' '$TMP/wmem.out' && grep -q '^ahash absent' '$TMP/wmem.out'"
check "nor its prime (either byte order)" \
	sh -c "grep -q '^prime absent' '$TMP/wmem.out' && grep -q '^prime_le absent' '$TMP/wmem.out'"
t mem "$KPID" "${NEEDLES[@]}" > "$TMP/kmem.out"
sed 's/^/# tls: /' "$TMP/kmem.out" | sed -n 2,7p
check "positive control: the prime is in the tls process's memory" \
	sh -c "grep -q '^prime found' '$TMP/kmem.out' || grep -q '^prime_le found' '$TMP/kmem.out'"
check "... and so is alice's scrypt hash (the credentials)" grep -q '^ahash found' "$TMP/kmem.out"

# ---- (a) TigerVNC on its own Xvfb --------------------------------------------
if ! command -v vncviewer >/dev/null || ! command -v import >/dev/null ||
	! command -v convert >/dev/null; then
	skip "TigerVNC vncviewer or ImageMagick import/convert not installed"
else
	viewer_display
	sleep 4	# the logins of all addresses (1/s, bursts of 10): refill
	n0=$(t count "$LOG" connect user=alice tls=True)
	# tigervnc SECONDS: start the viewer, wait for the page on its screen
	tigervnc() {
		local i
		HOME=$TMP/vvhome DISPLAY=$VD VNC_USERNAME=alice VNC_PASSWORD=$APW \
			vncviewer -SecurityTypes X509Plain -X509CA "$TMP/cert.pem" \
			-FullScreen "$HOST::$PORT" > "$TMP/vv.out" 2>&1 &
		VV_PID=$!
		for i in $(seq $(($1 * 2))); do
			sleep 0.5
			DISPLAY=$VD import -window root "$TMP/a.png" 2>/dev/null &&
				convert "$TMP/a.png" "$TMP/a.ppm" 2>/dev/null &&
				t banner "$TMP/a.ppm" > /dev/null && return 0
		done
		return 1
	}
	tigervnc 20
	got=$?
	check "TigerVNC (X509Plain, VNC_USERNAME/VNC_PASSWORD) connects" kill -0 "$VV_PID"
	if [ $got -ne 0 ]; then
		# Seen in ~1 of 4 runs before TLS 1.3 session tickets were turned
		# off (relay_end: 4 bytes down = SecurityResult, 0 up: TigerVNC
		# never sent ClientInit); none in 6 runs since.  Kept visible.
		stop_pid "$VV_PID"
		sleep 0.5
		diag "first TigerVNC attempt showed no page in 20 s; its log and ours:"
		sed 's/^/# vncviewer: /' "$TMP/vv.out" | tail -6
		grep -v '"vnc_log"' "$LOG" | tail -6 | cut -c 60-260 | sed 's/^/# log: /'
		cp "$TMP/vv.out" "$TMP/vv-first.out"
		sleep 2.5	# the login throttle
		tigervnc 20
		got=$?
	fi
	check "a screenshot of the viewer's Xvfb shows the backend page" test $got -eq 0
	t banner "$TMP/a.ppm"
	check "the log has TigerVNC's login as alice over TLS" \
		test "$(t count "$LOG" connect user=alice tls=True)" -gt "$n0"
	stop_pid "$VV_PID"; VV_PID=
	stop_pid "$XV_PID"; XV_PID=
fi

# ---- (b) wrong password -----------------------------------------------------
vt alice "$TMP/wrongpw" expect-refused
check "a wrong password is refused" grep -q "refused: auth" "$TMP/vt.out"
check "... and logged as auth_fail with the user name" \
	t log "$LOG" auth_fail user=alice "reason=wrong user name or password"
vt nobody "$TMP/apw" expect-refused
check "an unknown user is refused" grep -q "refused: auth" "$TMP/vt.out"
check "no password appears in the session log" \
	sh -c "! grep -qF -e '$APW' -e '$BPW' '$LOG'"

# ---- (d) unencrypted security types and ws:// are refused -------------------
t plain-vncauth $HOST "$PORT" > "$TMP/d.out"
check "a client choosing VncAuth gets SecurityResult failed with a reason" test $? -eq 0
diag "reason: $(tail -1 "$TMP/d.out")"
check "... logged as auth_fail" t log "$LOG" auth_fail "reason=security type 2 refused"
"$VNCTEST" --host $HOST --port "$PORT" --password-file "$TMP/pw" --timeout 20 \
	expect-refused > "$TMP/d2.out" 2>&1
check "the old VNC-password client is refused" grep -q "refused" "$TMP/d2.out"
# The worker's refusal lines share one budget with TLS (1 a second, bursts
# of 4), and each connection the front door closed before a login above
# (front_closed) spent from it: let it fill before the refusal we look for.
sleep 4
t ws $HOST "$PORT" - "/websockify?token=$TOK" "http://$HOST:$PORT" > "$TMP/ws.out"
check "plain ws:// is refused with plain VNC off" test $? -ne 0
check "... and logged" t log "$LOG" client_refused "reason=websocket without TLS"

# ---- (e) wss: token and Origin still checked --------------------------------
t ws $HOST "$PORT" "$TMP/cert.pem" "/websockify?token=$TOK" "https://$HOST:$PORT" > "$TMP/wss.out"
check "wss with the token and the page's Origin gets the RFB greeting" test $? -eq 0
diag "$(cat "$TMP/wss.out")"
t ws $HOST "$PORT" "$TMP/cert.pem" "/websockify?token=x$TOK" "https://$HOST:$PORT" > /dev/null
check "wss with a wrong token is refused" test $? -ne 0
sleep 3		# the refusal lines' budget again (above)
t ws $HOST "$PORT" "$TMP/cert.pem" "/websockify?token=$TOK" "https://evil.example" > /dev/null
check "wss from another Origin is refused" test $? -ne 0
check "... both logged" t log "$LOG" client_refused "reason=websocket origin not allowed"

# ---- malformed handshakes and a busy session ----------------------------------
t hostile $HOST "$PORT" "$TMP/cert.pem"
check "malformed VeNCrypt/TLS/Plain messages get the right refusal or a close" test $? -eq 0
check "the subtype TLSPlain (anonymous TLS) is refused and logged" \
	t log "$LOG" auth_fail "reason=VeNCrypt subtype not offered"
check "an over-long user name is refused and logged" \
	t log "$LOG" auth_fail "reason=user name or password too long"
check "the session survived all of it" kill -0 "$GW_PID"
"$VNCTEST" --host $HOST --port "$PORT" --user alice --ca "$TMP/cert.pem" \
	--password-file "$TMP/apw" --timeout 30 hold 4 > /dev/null 2>&1 &
HOLD=$!
sleep 2
vt bob "$TMP/bpw" expect-refused
check "a second login while alice holds the session is refused" grep -q "refused" "$TMP/vt.out"
check "... as session busy" t log "$LOG" client_refused "reason=session busy"
wait "$HOLD"
check "alice's connection was not disturbed" test $? -eq 0

# ---- clients that vanish while the relay writes to them --------------------
KPID=$(t pid "$LOG" tls)
t abort $HOST "$PORT" "$TMP/cert.pem" alice "$TMP/apw" 3
check "three logins reset mid-frame (the relay writes into a dead socket)" test $? -eq 0
sleep 1
check "... the tls process survives them (no SIGPIPE)" kill -0 "$KPID"
check "... and so does the session" kill -0 "$GW_PID"

# ---- a flood of broken TLS handshakes does not flood the log ------------------
# (last on this session: it uses up the refusal-log budget)
n0=$(t count "$LOG" client_refused)
secs=$(t flood $HOST "$PORT" 200)
n1=$(t count "$LOG" client_refused)
diag "200 broken TLS hellos in $secs s: $((n1 - n0)) client_refused lines"
check "refusal lines are rate limited (at most 20 + 5/s)" \
	python3 -c "import sys; sys.exit(0 if $n1 - $n0 <= 20 + 5 * $secs + 2 else 1)"
check "... and the next line reports how many were suppressed" \
	t log "$LOG" client_refused "suppressed=[1-9]"
check "the session survived the flood" kill -0 "$GW_PID"

stop_pid "$GW_PID"
wait "$GW_PID"
check "SIGTERM ends the TLS session with exit 0" test $? -eq 0
GW_PID=

# novnc_wss: noVNC (the Debian package, served by the backend) in headless
# Chromium as $VIEWER_USER with its sandbox on, connecting over wss:// with
# the token and logging in as alice (VeNCrypt Plain inside the websocket).  Chromium trusts exactly our test certificate (its SPKI pinned
# with --ignore-certificate-errors-spki-list), nothing else.
novnc_wss() {
	local u=${VIEWER_USER:-nobody} spki url m prof=$PROFILE/p
	if [ ! -f "$NOVNC/core/rfb.js" ] || ! command -v setpriv >/dev/null ||
		! id "$u" >/dev/null 2>&1; then
		skip "noVNC over wss: noVNC, setpriv or user $u missing"
		return
	fi
	spki=$(openssl x509 -in "$TMP/cert.pem" -pubkey -noout |
		openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64)
	url="$BORIGIN/novnc-test?url=$(python3 -c 'import sys, urllib.parse
print(urllib.parse.quote(sys.argv[1], safe=""))' "wss://$HOST:$PORT/?token=$TOK")&username=alice&password=$APW"
	mkdir -p "$prof" && chown "$u" "$prof" && chmod 755 "$PROFILE"
	m=$(t mark "$EV")
	setpriv --reuid="$u" --regid="$(id -g "$u")" --clear-groups \
		env -i HOME="$prof" PATH=/usr/bin:/bin /usr/lib/chromium/chromium \
		--headless --disable-gpu --no-first-run --disable-background-networking \
		--disable-component-update --disable-sync --user-data-dir="$prof" \
		--ignore-certificate-errors-spki-list="$spki" --window-size=1300,900 \
		"$url" > "$TMP/novnc.out" 2>&1 &
	VV_PID=$!
	check "noVNC in Chromium over wss:// (token, allowed Origin, alice's password) shows the page" \
		t novnc "$EV" "$m" 30
	check "... logged as a websocket connect over TLS" \
		t log "$LOG2" connect websocket=True tls=True
	stop_pid "$VV_PID"
}

# ---- loopback default: plain VncAuth still served, through the door ---------
LOG2=$TMP/session2.log
if start_session "$LOG2" --ws-token-file "$TMP/tok" --ws-origins "$BORIGIN"; then
	ok "a loopback TLS session starts with the default (plain allowed)"
	check "the worker logs the front door with plain allowed" \
		t log "$LOG2" front_door allow_plain=True
	for _ in 1 2 3; do
		"$VNCTEST" --host $HOST --port "$PORT" --password-file "$TMP/pw" \
			--timeout 30 snapshot "$TMP/p.ppm" > "$TMP/p.out" 2>&1 &&
			t banner "$TMP/p.ppm" > /dev/null && break
		sleep 2
	done
	check "the VNC-password client is served (security types 19 and 2 offered)" t banner "$TMP/p.ppm"
	check "... and logged as a connect without TLS" t log "$LOG2" connect tls=False
	vt alice "$TMP/apw" snapshot "$TMP/p2.ppm"
	check "VeNCrypt works beside it" t banner "$TMP/p2.ppm"
	novnc_wss
	VV_PID=
	# ---- the tls process dies: the session ends (fail closed) -------------
	KPID=$(t pid "$LOG2" tls)
	SID=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["session"])' "$LOG2")
	kill -KILL "$KPID"
	for _ in $(seq 100); do kill -0 "$GW_PID" 2>/dev/null || break; sleep 0.1; done
	wait "$GW_PID"
	check "SIGKILL of the tls process ends the session with exit 1" test $? -eq 1
	GW_PID=
	check "... logged as the tls process killed by SIGKILL" \
		t log "$LOG2" child_exit role=tls wait=SIGKILL
	check "... and session_stop says why (tls_exit)" t log "$LOG2" session_stop reason=tls_exit exit=1
	check "... on stderr too" grep -q "the tls process (the TLS key holder) ended" "$TMP/gw.err"
	check "... the worker is gone too" sh -c "! kill -0 $(t pid "$LOG2" worker) 2>/dev/null"
	check "... and the session directory was removed" test ! -e "/run/cdsgate/sessions/$SID"
else
	not_ok "a loopback TLS session starts with the default (plain allowed)"
fi

# ---- the tls process's seccomp profile: a forbidden call kills it ------------
if "$CDSGATED" --version 2>&1 | grep -q 'test hooks'; then
	LOG3=$TMP/session3.log
	PORT=$(free_port $HOST)
	CDSGATE_TEST_VIOLATE=tls:execve timeout 60 "$CDSGATED" run-session --backend "$BURL" \
		--listen "$HOST:$PORT" --password-file "$TMP/pw" --log "$LOG3" "${TLSARGS[@]}" \
		> "$TMP/gw3.out" 2> "$TMP/gw3.err"
	check "CDSGATE_TEST_VIOLATE=tls:execve: the session fails (exit 1)" test $? -eq 1
	check "... the tls process was killed by its filter (SIGSYS)" \
		t log "$LOG3" child_exit role=tls wait=SIGSYS seccomp_violation=True sandbox=seccomp:tls
	check "... said on stderr" grep -q "tls killed by seccomp (SIGSYS)" "$TMP/gw3.err"
	check "... and the session stopped for it" t log "$LOG3" session_stop reason=tls_exit
else
	skip "cdsgated built without test hooks (--disable-test-hooks)"
fi

# ---- the default on a real non-loopback address (own network namespace) ----
# A veth carrying 10.77.0.1 in a fresh network namespace, the backend, the
# session (no --allow-plain-vnc) and the clients all inside it.
cat > "$TMP/ns.sh" <<'EOS'
set -u
res() { echo "$1 $2" >> "$TMP/ns.res"; }
until_line() { for _ in $(seq 300); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done; return 1; }
ip link set lo up && ip link add cdsv0 type veth peer name cdsv1 &&
	ip addr add "$NSADDR/24" dev cdsv0 && ip link set cdsv0 up &&
	ip link set cdsv1 up || { res 77 "veth"; exit 0; }
python3 "$BACKEND" --port 0 --record "$TMP/ns-ev.jsonl" > "$TMP/ns-be.out" 2>&1 &
BE=$!
until_line "$TMP/ns-be.out" '^ready ' || { res 77 "backend"; kill $BE; exit 0; }
P=$(python3 -c 'import socket,sys; s=socket.socket(); s.bind((sys.argv[1],0)); print(s.getsockname()[1])' "$NSADDR")
"$CDSGATED" run-session --record-dir "$TMP/rec" --backend "http://$(sed -n 's/^ready //p' "$TMP/ns-be.out")/" \
	--listen "$NSADDR:$P" --password-file "$TMP/pw" --log "$TMP/ns.log" \
	--tls-cert "$TMP/cert.pem" --tls-key "$TMP/key.pem" \
	--credentials-file "$TMP/creds" > "$TMP/ns-gw.out" 2> "$TMP/ns-gw.err" &
GW=$!
until_line "$TMP/ns-gw.out" '^ready '; res $? "session"
python3 "$T" loaded "$TMP/ns-ev.jsonl" 0 30; sleep 1
python3 "$T" log "$TMP/ns.log" front_door allow_plain=False > /dev/null; res $? "front_door"
python3 "$T" plain-vncauth "$NSADDR" "$P" > /dev/null; res $? "plain"
for _ in 1 2 3; do
	"$VNCTEST" --host "$NSADDR" --port "$P" --user alice --ca "$TMP/cert.pem" \
		--password-file "$TMP/apw" --timeout 30 snapshot "$TMP/ns.ppm" > /dev/null 2>&1 &&
		python3 "$T" banner "$TMP/ns.ppm" > /dev/null && break
	sleep 2
done
python3 "$T" banner "$TMP/ns.ppm" > /dev/null 2>&1; res $? "vencrypt"
kill -TERM $GW; wait $GW; res $? "stop"
kill -TERM $BE; wait $BE
EOS
if ! unshare -n true 2>/dev/null; then
	skip "unshare -n (network namespaces) not available"
else
	T=$TMP/t.py NSADDR=$NSADDR TMP=$TMP BACKEND=$BACKEND CDSGATED=$CDSGATED \
		VNCTEST=$VNCTEST unshare -n bash "$TMP/ns.sh"
	nsr() { awk -v k="$1" '$2 == k { print $1 }' "$TMP/ns.res"; }
	if [ "$(nsr veth)" = 77 ] || [ "$(nsr backend)" = 77 ]; then
		skip "no veth or backend in a network namespace here"
	else
		check "a session on $NSADDR (a veth, own netns) starts with TLS and no flag" \
			test "$(nsr session)" = 0
		check "... with plain VNC off by default" test "$(nsr front_door)" = 0
		check "... refusing VncAuth with a reason" test "$(nsr plain)" = 0
		check "... and serving VeNCrypt (alice sees the page)" test "$(nsr vencrypt)" = 0
		check "... and ends with exit 0 on SIGTERM" test "$(nsr stop)" = 0
	fi
fi

done_testing
