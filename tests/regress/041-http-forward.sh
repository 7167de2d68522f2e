#!/usr/bin/env bash
# 041-http-forward: the jail's forwarder follows HTTP/1.1 for an http://
# backend (gateway/http.c, docs/jail.md).  A real session (cdsgated
# run-session, Xvfb, Chromium in its jail) against a scripted raw-socket
# backend that sends NO Content-Security-Policy; from inside the jail's
# network namespace (nsenter, as the browser user) a client speaks HTTP
# through the forwarder and checks, byte for byte, what arrives:
#   - document responses (html, svg, none) get exactly one added line,
#     `Content-Security-Policy: sandbox allow-scripts allow-same-origin
#     allow-forms`, right after the status line; json and png get none;
#   - pipelined requests, a chunked body, HEAD, 304, a 4 MiB download
#     (sha256 intact, throughput measured), an Upgrade/101 that turns the
#     connection into an opaque relay (binary, CRLFs, NUL echoed back);
#   - hostile heads from either side close that connection and say why in
#     net_close (over-long request head, a bare CR in a response header, a
#     smuggling request that the backend never sees), never a crash;
#   - the network log <id>.network.jsonl beside the recording: 0600 root,
#     one "http" line per exchange with method, target, status, bytes,
#     ttfb_ms, total_ms, csp_added, "incomplete" for a closed one, a "conn"
#     line per connection, and the browser's own page load in it;
#   - with --network-capture pcapng, <id>.pcapng beside it: tshark decodes
#     the HTTP (request lines, the added CSP line) and finds the synthetic
#     TCP consistent (no tcp.analysis flags).  SKIP without tshark.
#   - an https:// backend: an opaque relay (no CSP line, no framing), and
#     only connection lines in its network log.
# Needs root, Xvfb, Chromium, nsenter; skips (with the reason) otherwise.
. "$(dirname "$0")/lib.sh"

CDSGATED=${CDSGATED:-$top_builddir/cdsgated}
VNCTEST=${VNCTEST:-$top_builddir/tests/gateway/cdsgate-vnctest}
require_session
command -v nsenter >/dev/null || skip_all "nsenter (util-linux) not installed"
BROWSER_USER=${CDSGATE_BROWSER_USER:-cdsgate-browser}
id "$BROWSER_USER" >/dev/null 2>&1 || skip_all "user $BROWSER_USER missing"

# ---- the backend: raw sockets, scripted answers, no CSP ever ------------------
cat > "$TMP/backend.py" <<'PY'
import hashlib, socket, sys, threading
seen = open(sys.argv[1], 'a', buffering=1)
BIG = bytes((i * 7 + 3) % 251 for i in range(4 << 20))
HTML = b'<!doctype html><title>cdsgate 041</title><p>through the forwarder'
# Content-Type values Chromium renders as documents although they are no
# exact "text/html" (not MIME syntax, XSL, upper case, parameters).
TRICKS = {'/xsl': b'text/xsl', '/htmlx': b'text/html x', '/htmlc': b'text/html(comment)',
          '/upper': b'TEXT/HTML', '/param': b'text/html;charset=utf-8',
          '/xhtml': b'application/xhtml+xml', '/list': b'image/png, text/html',
          '/pngc': b'image/png(c)'}

def resp(status, ctype, body, extra=b''):
    h = b'HTTP/1.1 ' + status + b'\r\n'
    if ctype:
        h += b'Content-Type: ' + ctype + b'\r\n'
    return h + extra + b'Content-Length: %d\r\n\r\n' % len(body) + body

def answer(c, method, path):
    if path == '/html' or path == '/' or path == '/favicon.ico':
        return resp(b'200 OK', b'text/html; charset=utf-8', HTML)
    if path == '/json':
        return resp(b'200 OK', b'application/json', b'{"a": 1}')
    if path == '/png':
        return resp(b'200 OK', b'image/png', b'\x89PNG\r\n\x1a\n')
    if path == '/svg':
        return resp(b'200 OK', b'image/svg+xml', b'<svg xmlns="http://www.w3.org/2000/svg"/>')
    if path == '/none':
        return resp(b'200 OK', None, HTML)
    if path in TRICKS:
        return resp(b'200 OK', TRICKS[path], HTML)
    if path == '/dup':
        return resp(b'200 OK', b'image/png', HTML, b'Content-Type: image/png\r\n')
    if path == '/sw.js':
        return resp(b'200 OK', b'text/javascript', b'// never served')
    if path == '/head':
        return b'HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 999\r\n\r\n'
    if path == '/304':
        return b'HTTP/1.1 304 Not Modified\r\nETag: "x"\r\n\r\n'
    if path == '/chunked':
        return (b'HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\n\r\n'
                b'5;x=y\r\n<p>ab\r\n3\r\ncde\r\n0\r\nX-Trailer: 1\r\n\r\n')
    if path == '/big':
        return resp(b'200 OK', b'application/octet-stream', BIG)
    if path == '/badhead':
        return b'HTTP/1.1 200 OK\r\nContent-Type: text/plain\rContent-Type: text/html\r\nContent-Length: 2\r\n\r\nhi'
    if path == '/longhead':
        return b'HTTP/1.1 200 OK\r\nX-Long: ' + b'a' * 20000 + b'\r\nContent-Length: 0\r\n\r\n'
    return resp(b'404 Not Found', b'text/plain', b'no')

def serve(c):
    buf = b''
    try:
        while True:
            while b'\r\n\r\n' not in buf:
                d = c.recv(65536)
                if not d:
                    return
                buf += d
            head, buf = buf.split(b'\r\n\r\n', 1)
            line = head.split(b'\r\n')[0].decode('latin-1')
            method, path = line.split(' ')[0], line.split(' ')[1]
            seen.write(line + '\n')
            n = 0
            for h in head.split(b'\r\n')[1:]:
                if h.lower().startswith(b'content-length:'):
                    n = int(h.split(b':')[1])
            while len(buf) < n:
                buf += c.recv(65536)
            buf = buf[n:]
            if path == '/ws':
                c.sendall(b'HTTP/1.1 101 Switching Protocols\r\nUpgrade: x-echo\r\nConnection: Upgrade\r\n\r\n')
                if buf:
                    c.sendall(buf)
                while True:
                    d = c.recv(65536)
                    if not d:
                        return
                    c.sendall(d)
            c.sendall(answer(c, method, path))
    except OSError:
        pass
    finally:
        c.close()

s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(('127.0.0.1', 0))
s.listen(64)
print('ready 127.0.0.1:%d' % s.getsockname()[1], flush=True)
while True:
    c, _ = s.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
PY

# ---- the client, run inside the jail's network namespace ---------------------
cat > "$TMP/client.py" <<'PY'
import hashlib, socket, sys, time
host, port, cmd = sys.argv[1], int(sys.argv[2]), sys.argv[3]  # argv[0] is -c
CSP = b'Content-Security-Policy: sandbox allow-scripts allow-same-origin allow-forms\r\n'

def conn():
    s = socket.create_connection((host, port), timeout=10)
    return s

def read_all(s):
    out = b''
    while True:
        try:
            d = s.recv(1 << 20)
        except (ConnectionResetError, socket.timeout):
            break
        if not d:
            break
        out += d
    return out

def req(path, method='GET', extra=b''):
    return b'%s %s HTTP/1.1\r\nHost: %s:%d\r\n%s\r\n' % (method.encode(), path.encode(), host.encode(), port, extra)

def one(path, method='GET'):
    s = conn()
    s.sendall(req(path, method, b'Connection: close\r\n'))
    s.shutdown(socket.SHUT_WR)
    return read_all(s)

NOSTORE = b'Cache-Control: no-store\r\n'

def csp_lines(r):
    head = r.split(b'\r\n\r\n')[0] + b'\r\n'
    return head.count(CSP), head.split(b'\r\n', 1)[1].startswith(NOSTORE + CSP)

if cmd == 'csp':                       # PATH WANT(0|1) [opaque]: CSP lines, placement
    r = one(sys.argv[4])
    n, first = csp_lines(r)
    nostore = r.split(b'\r\n', 1)[1].startswith(NOSTORE)
    print('%s: %s; %d CSP line(s)%s%s' % (sys.argv[4], r.split(b'\r\n')[0].decode(), n,
          ', right after the status line' if first else '',
          ', Cache-Control: no-store first' if nostore else ', NO no-store line'))
    want = int(sys.argv[5])
    opaque = len(sys.argv) > 6 and sys.argv[6] == 'opaque'   # nothing added at all
    sys.exit(0 if r.startswith(b'HTTP/1.1 ') and n == want and (first or not want) and
             nostore != opaque else 1)
elif cmd == 'pipeline':                # 5 requests in one write, keep-alive
    s = conn()
    s.sendall(req('/html') + req('/json') + req('/head', 'HEAD') + req('/chunked') +
              req('/304') + req('/svg', extra=b'Connection: close\r\n'))
    s.shutdown(socket.SHUT_WR)
    r = read_all(s)
    parts = r.split(b'HTTP/1.1 ')[1:]
    stat = [p.split(b'\r\n')[0].decode() for p in parts]
    csp = [p.count(CSP) for p in parts]
    print('statuses %s; CSP per response %s; %d bytes' % (stat, csp, len(r)))
    ok = (len(parts) == 6 and csp == [1, 0, 1, 1, 1, 1] and
          b'5;x=y\r\n<p>ab\r\n3\r\ncde\r\n0\r\nX-Trailer: 1\r\n\r\n' in r and r.endswith(b'/>'))
    sys.exit(0 if ok else 1)
elif cmd == 'big':                     # 4 MiB: intact, timed
    BIG = bytes((i * 7 + 3) % 251 for i in range(4 << 20))
    t = time.time()
    r = one('/big')
    dt = time.time() - t
    body = r.split(b'\r\n\r\n', 1)[1] if b'\r\n\r\n' in r else b''
    print('4 MiB download: %d body bytes in %.3f s (%.0f MB/s), sha256 %s' % (
        len(body), dt, len(body) / dt / 1e6 if dt else 0,
        'matches' if hashlib.sha256(body).digest() == hashlib.sha256(BIG).digest() else 'DIFFERS'))
    sys.exit(0 if body == BIG and r.count(CSP) == 0 else 1)
elif cmd == 'ws':                      # Upgrade, then opaque bytes echoed
    s = conn()
    s.sendall(req('/ws', extra=b'Connection: Upgrade\r\nUpgrade: x-echo\r\n'))
    r = b''
    while b'\r\n\r\n' not in r:
        d = s.recv(4096)
        if not d: break
        r += d
    junk = b'GET / HTTP/1.1\r\nbare\rCR\x00\xff\r\n\r\n' * 50
    s.sendall(junk)
    s.shutdown(socket.SHUT_WR)
    back = r.split(b'\r\n\r\n', 1)[1] + read_all(s)
    print('101: %s; %d opaque bytes sent, %d echoed back %s' % (r.startswith(b'HTTP/1.1 101'),
          len(junk), len(back), 'intact' if back == junk else 'CHANGED'))
    sys.exit(0 if r.startswith(b'HTTP/1.1 101') and back == junk else 1)
elif cmd == 'closed':                  # RAW-REQUEST-NAME: the forwarder closes, no response
    raw = {'longreq': b'GET /html HTTP/1.1\r\nX-Long: ' + b'a' * 20000 + b'\r\n\r\n',
           'smuggle': b'POST /smuggled HTTP/1.1\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
           'badhead': req('/badhead'), 'longhead': req('/longhead'),
           'connect': b'CONNECT 1.1.1.1:443 HTTP/1.1\r\n\r\n',
           'sw': req('/sw.js', extra=b'Service-Worker: script\r\n')}[sys.argv[4]]
    s = conn()
    try:
        s.sendall(raw)
    except OSError:
        pass
    r = read_all(s)
    print('%s: %d bytes came back%s' % (sys.argv[4], len(r), (': ' + repr(r[:40])) if r else ''))
    sys.exit(0 if r == b'' else 1)
PY

# ---- start the backend and the session ----------------------------------------
python3 "$TMP/backend.py" "$TMP/seen" > "$TMP/backend.out" 2> "$TMP/backend.err" &
BE_PID=$!
wait_line "$TMP/backend.out" '^ready ' 10 "$BE_PID" || { cat "$TMP/backend.err" >&2; skip_all "the test backend did not start"; }
BHOST=$(sed -n 's/^ready //p' "$TMP/backend.out")
python3 -c 'import secrets,string; print("".join(secrets.choice(string.ascii_letters+string.digits) for _ in range(8)))' > "$TMP/pw"
chmod 600 "$TMP/pw"
LOG=$TMP/session.log
"$CDSGATED" run-session --backend "http://$BHOST/html" --listen "127.0.0.1:$(free_port)" \
	--password-file "$TMP/pw" --log "$LOG" --record-dir "$TMP/rec" --network-capture pcapng \
	> "$TMP/gw.out" 2> "$TMP/gw.err" &
GW_PID=$!
cleanup() { stop_pid "$GW_PID"; stop_pid "$BE_PID"; rm -rf "$TMP"; }
trap cleanup EXIT
if ! wait_line "$TMP/gw.out" '^ready ' 30 "$GW_PID"; then
	not_ok "cdsgated run-session prints ready"
	tail -15 "$TMP/gw.err" | sed "s/^/# /"
	done_testing
	exit 1
fi
ok "cdsgated run-session prints ready"
SID=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["session"])' "$LOG")
NETLOG=$TMP/rec/$SID.network.jsonl

# browser_pid LOG: the jail's init (the browser role's last start), whose
# network namespace the client joins.
browser_pid() {
	python3 -c '
import json, sys
p = ""
for l in open(sys.argv[1]):
    e = json.loads(l)
    if e.get("event") == "child_start" and e.get("role") == "browser":
        p = e["pid"]
print(p)' "$1"
}
BPID=$(browser_pid "$LOG")
BUID=$(id -u "$BROWSER_USER"); BGID=$(id -g "$BROWSER_USER")
injail() {
	local out rc
	# the script as an argument: $TMP is root's 0700, not the browser user's
	out=$(nsenter -t "$BPID" -n -S "$BUID" -G "$BGID" \
		python3 -c "$(cat "$TMP/client.py")" "${BHOST%:*}" "${BHOST##*:}" "$@" 2>&1)
	rc=$?
	printf '%s\n' "$out" | sed 's/^/#   /'
	return $rc
}
check "the forwarder says it relays HTTP and has the network log (forward_start)" python3 -c '
import json, sys
sys.exit(not any(e.get("event") == "forward_start" and e.get("relay") == "http" and e.get("network_log") is True
                 for e in map(json.loads, open(sys.argv[1]))))' "$LOG"
# The page in the jailed browser: its load goes through the forwarder.
for _ in $(seq 100); do grep -q '^GET /html ' "$TMP/seen" 2>/dev/null && break; sleep 0.2; done
check "the jailed browser loaded the page through the forwarder" grep -q '^GET /html ' "$TMP/seen"

# ---- 1. the CSP line --------------------------------------------------------------
check "text/html: one CSP sandbox line, right after the status line" injail csp /html 1
check "image/svg+xml: the CSP line" injail csp /svg 1
check "no Content-Type: the CSP line" injail csp /none 1
check "application/json: no CSP line" injail csp /json 0
check "image/png: no CSP line" injail csp /png 0
check "a 404 text/plain: the CSP line (every text type gets it)" injail csp /nothing 1
for t in /xsl /htmlx /htmlc /upper /param /xhtml /list /pngc /dup; do
	check "Content-Type trick $t ($(sed -n "s|.*'$t': b'\([^']*\)'.*|\1|p" "$TMP/backend.py")): the CSP line" \
		injail csp $t 1
done

# ---- 2. framing -------------------------------------------------------------------
check "6 pipelined requests (GET, GET, HEAD, chunked, 304, svg): answers in order, CSP on the 5 documents, chunk framing intact" \
	injail pipeline
check "a 4 MiB download arrives intact" injail big
check "Upgrade + 101: the connection becomes an opaque relay (bare CR, NUL, request lines echoed unchanged)" injail ws

# ---- 3. hostile heads close the connection -------------------------------------
check "a request head over 16 KiB: closed, nothing back" injail closed longreq
check "a smuggling request (Content-Length + Transfer-Encoding): closed" injail closed smuggle
check "the backend never saw the smuggling request" sh -c "! grep -q smuggled '$TMP/seen'"
check "CONNECT: closed" injail closed connect
check "a service worker script request (Service-Worker: script): closed, nothing back" injail closed sw
check "the backend never saw the service worker request" sh -c "! grep -q 'sw.js' '$TMP/seen'"
check "a response header with a bare CR: closed, nothing of it passed" injail closed badhead
check "a response head over 16 KiB: closed, nothing of it passed" injail closed longhead
check "net_close says why for each (request/response: head too long, malformed head, Content-Length, CONNECT, service worker)" python3 -c '
import json, sys
w = [e.get("why") for e in map(json.loads, open(sys.argv[1])) if e.get("event") == "net_close"]
need = ["request: head too long", "request: bad Content-Length or Transfer-Encoding",
        "request: method not allowed (CONNECT)", "response: malformed head", "response: head too long",
        "request: service worker script refused: /sw.js"]
miss = [n for n in need if n not in w]
print("# missing: %s" % miss if miss else "# all six reasons logged")
sys.exit(1 if miss else 0)' "$LOG"
check "the forwarder is still running (no crash), the session still up" \
	python3 -c 'import json,sys; sys.exit(any(e.get("event") == "child_exit" for e in map(json.loads, open(sys.argv[1]))))' "$LOG"

# ---- 4. the network log --------------------------------------------------------------
check "the network log $SID.network.jsonl is beside the recording, 0600 root" \
	test "$(stat -c '%a %U' "$NETLOG" 2>/dev/null)" = "600 root" -a -f "$TMP/rec/$SID.cdsrec"
stop_pid "$GW_PID"
check "the network log: one http line per exchange with every field, csp_added right, the browser's load, incomplete and conn lines" python3 - "$NETLOG" <<'PY'
import json, sys
ls = [json.loads(l) for l in open(sys.argv[1])]
http = [e for e in ls if e.get('event') == 'http']
conn = [e for e in ls if e.get('event') == 'conn']
def find(t, **kw):
    return [e for e in http if e['target'] == t and all(e.get(k) == v for k, v in kw.items())]
keys = {'ts', 'event', 'conn', 'method', 'target', 'status', 'req_bytes', 'resp_bytes', 'ttfb_ms', 'total_ms', 'csp_added'}
bad = []
if not all(keys <= set(e) for e in http): bad.append('fields')
if not find('/html', method='GET', status=200, csp_added=True): bad.append('/html')
if not find('/json', status=200, csp_added=False): bad.append('/json')
if not find('/head', method='HEAD', status=200, csp_added=True): bad.append('HEAD')
if not find('/304', status=304): bad.append('304')
if not find('/ws', status=101): bad.append('101')
big = find('/big', status=200)
if not big or big[0]['resp_bytes'] < 4 << 20 or not isinstance(big[0]['total_ms'], int): bad.append('/big')
if not find('/badhead', status=None) or 'incomplete' not in find('/badhead')[0]: bad.append('/badhead incomplete')
if not any(e['relay'] == 'http, then opaque (101)' for e in conn): bad.append('conn 101')
if not all(e.get('why') for e in conn) or len(conn) < 10: bad.append('conn lines')
print('# %d http lines, %d conn lines; /big: %s ms; problems: %s' % (
    len(http), len(conn), big[0]['total_ms'] if big else '-', bad or 'none'))
for e in http[:3]:
    print('#   ' + json.dumps(e))
sys.exit(1 if bad else 0)
PY

# ---- 5. the pcapng capture -------------------------------------------------------------
PCAP=$TMP/rec/$SID.pcapng
check "the capture $SID.pcapng is beside the recording, 0600 root" \
	test "$(stat -c '%a %U' "$PCAP" 2>/dev/null)" = "600 root"
if command -v tshark >/dev/null; then
	TS=(tshark -n -r "$PCAP" -d "tcp.port==${BHOST##*:},http")
	"${TS[@]}" -Y http.request -T fields -e http.request.method -e http.request.uri \
		> "$TMP/ts-req" 2> "$TMP/ts.err"
	diag "tshark: $(wc -l < "$TMP/ts-req") HTTP requests decoded: $(sort -u "$TMP/ts-req" | tr '\t\n' ' ;' | cut -c1-300)"
	check "tshark decodes the request lines (GET /html, GET /json, HEAD /head, GET /big, GET /chunked, GET /ws)" python3 -c '
import sys
got = set()
for l in open(sys.argv[1]):     # pipelined requests share a frame: "GET,HEAD<TAB>/a,/b"
    m, u = (l.rstrip("\n").split("\t") + [""])[:2]
    got |= set(zip(m.split(","), u.split(",")))
need = {("GET", "/html"), ("GET", "/json"), ("HEAD", "/head"), ("GET", "/big"), ("GET", "/chunked"), ("GET", "/ws")}
sys.exit(0 if need <= got else 1)' "$TMP/ts-req"
	check "tshark shows the added CSP line in the /html responses" sh -c \
		"\"\$@\" -Y 'http.response and http.content_type contains \"text/html\"' -T fields -e http.response.line | grep -q 'Content-Security-Policy: sandbox allow-scripts allow-same-origin allow-forms'" \
		sh "${TS[@]}"
	n=$("${TS[@]}" -Y 'tcp.analysis.flags && !tcp.analysis.window_update' 2>/dev/null | wc -l)
	check "the synthetic TCP is consistent: no tcp.analysis flags (lost segments, bad seq/ack) in $("${TS[@]}" 2>/dev/null | wc -l) packets ($n flagged)" \
		test "$n" -eq 0
else
	skip "tshark is not installed (./dev installs it): the capture is not decoded"
fi

# ---- 6. an https:// backend: an opaque relay, connection lines only -----------------
# The same plain backend named https://: the forwarder cannot and does not
# parse (for a real TLS backend it would see only records).  Chromium's TLS
# to it fails; the session and the relay run all the same.
LOG2=$TMP/session2.log
not_closed() { ! injail closed "$1"; }
"$CDSGATED" run-session --backend "https://$BHOST/html" --listen "127.0.0.1:$(free_port)" \
	--password-file "$TMP/pw" --log "$LOG2" --record-dir "$TMP/rec2" \
	> "$TMP/gw2.out" 2> "$TMP/gw2.err" &
GW_PID=$!
if wait_line "$TMP/gw2.out" '^ready ' 30 "$GW_PID"; then
	BPID=$(browser_pid "$LOG2")
	check "https://: the relay is opaque (forward_start relay opaque)" grep -q '"relay":"opaque"' "$LOG2"
	check "https://: bytes pass unparsed, no CSP or Cache-Control line is added to text/html" injail csp /html 0 opaque
	check "https://: a head the HTTP relay refuses passes untouched (over 16 KiB)" \
		not_closed longhead
	stop_pid "$GW_PID"
	check "https://: the network log has conn lines (relay opaque) and no http line" python3 -c '
import glob, json, sys
ls = [json.loads(l) for f in glob.glob(sys.argv[1] + "/*.network.jsonl") for l in open(f)]
conn = [e for e in ls if e["event"] == "conn"]
print("# %d conn lines, %d http lines" % (len(conn), len(ls) - len(conn)))
sys.exit(0 if conn and all(e["relay"] == "opaque" for e in conn) and len(conn) == len(ls) else 1)' "$TMP/rec2"
else
	not_ok "the https:// session prints ready"
	tail -5 "$TMP/gw2.err" | sed "s/^/# /"
fi
done_testing
