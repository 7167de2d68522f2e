#!/usr/bin/env python3
"""tests/gateway/backend.py — the stand-in analytics backend for the
gateway scenarios (tests/regress/02x-gateway-*.sh).  Standard library only.

It serves a page that looks unmistakable in a screenshot (a solid banner of
a known colour) and reports everything that reaches it: every keydown,
input (with the textarea's whole value), click, paste, copy and focus
change is POSTed to /event and appended, one JSON object per line, to the
file given by --record.  GET /events returns what was recorded.  A copy
button on the page (and the page /copy) tries navigator.clipboard.writeText
and document.execCommand('copy'), so a test can show the page's copies never
reach the VNC client.  The main page at /?probe=PORT also fetch()es the
backend and 127.0.0.1:PORT and reports each outcome (type "probe"), for
the browser jail's test.  --novnc DIR also serves noVNC's files under /novnc/
and a page, /novnc-test?url=WS-URL&password=PW[&username=U][&frame=1], on
which noVNC connects to the gateway and reports how that went (events of
type "novnc"; with frame=1 also the canvas as a PNG data URL, state
"frame", 2.5 s after connecting).  /cursor
streams the file given by --cursor-file through CSS cursor images (a
hostile page; see CURSOR_PAGE).  Under /x/
it serves the kiosk-escape page and its targets (tests/gateway/escape.py;
every request there is recorded, type "request").

Layout at any viewport (CSS pixels, from the top left):
  banner   0..1279 x 0..159     rgb(216, 27, 96)   BANNER_RGB
  textarea 20..619 x 180..379   (autofocus)
  copy     20..619 x 400..499   rgb(255, 160, 0)   COPY_RGB
  target   660..1259 x 180..579 rgb(30, 80, 220)   TARGET_RGB
  page     elsewhere            rgb(240, 240, 240)

Trust: test code.  It listens on loopback only unless told otherwise; the
page's reports are test data and are written out as received (re-encoded).
"""

import argparse
import json
import mimetypes
import os
import posixpath
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import escape  # noqa: E402  (the /x/ kiosk-escape page)

BANNER_RGB = (216, 27, 96)
TARGET_RGB = (30, 80, 220)
COPY_RGB = (255, 160, 0)
PAGE_RGB = (240, 240, 240)

# Shared by both pages: queue events and POST them in order, one request
# in flight at a time (so the record file keeps the page's order).
RECORDER_JS = r"""
const pageId = Math.random().toString(36).slice(2, 10);
const queue = [];
let inflight = false, seq = 0;
function rec(ev) {
  ev.seq = ++seq; ev.page = pageId; ev.t = Math.round(performance.now());
  ev.wall = performance.timeOrigin + performance.now();  // ms, for latency
  ev.path = location.pathname;
  queue.push(ev); flush();
}
function flush() {
  if (inflight || queue.length === 0) return;
  inflight = true;
  const batch = queue.splice(0, queue.length);
  fetch('/event', {method: 'POST', headers: {'Content-Type': 'application/json'},
                   body: JSON.stringify(batch), keepalive: true})
    .then(() => { inflight = false; flush(); },
          () => { queue.unshift(...batch); inflight = false; setTimeout(flush, 200); });
}
function mods(e) {
  return {ctrl: e.ctrlKey, shift: e.shiftKey, alt: e.altKey, meta: e.metaKey};
}
function tid(t) { return (t && t.id) || (t && t.tagName) || ''; }
document.addEventListener('keydown', e => rec(Object.assign({type: 'keydown',
  key: e.key, code: e.code, keyCode: e.keyCode, repeat: e.repeat,
  target: tid(e.target)}, mods(e))), true);
document.addEventListener('paste', e => {
  const d = e.clipboardData;
  rec({type: 'paste', target: tid(e.target), types: d ? Array.from(d.types) : [],
       text: d ? d.getData('text/plain') : ''});
}, true);
document.addEventListener('copy', e => rec({type: 'copy', target: tid(e.target)}), true);
document.addEventListener('cut', e => rec({type: 'cut', target: tid(e.target)}), true);
document.addEventListener('click', e => rec(Object.assign({type: 'click',
  x: e.clientX, y: e.clientY, button: e.button, target: tid(e.target)}, mods(e))), true);
document.addEventListener('contextmenu', e => { e.preventDefault();
  rec({type: 'contextmenu', x: e.clientX, y: e.clientY}); }, true);
window.addEventListener('focus', () => rec({type: 'focus'}));
window.addEventListener('blur', () => rec({type: 'blur'}));
document.addEventListener('visibilitychange', () =>
  rec({type: 'visibility', state: document.visibilityState}));
function tryCopy(why) {
  const text = 'PAGE-COPY-' + pageId + '-' + seq;
  if (navigator.clipboard && navigator.clipboard.writeText)
    navigator.clipboard.writeText(text).then(
      () => rec({type: 'copy_attempt', method: 'writeText', ok: true, why: why, text: text}),
      err => rec({type: 'copy_attempt', method: 'writeText', ok: false, why: why,
                  err: String(err)}));
  const h = document.getElementById('hidden');
  const back = document.activeElement;
  h.value = text; h.focus(); h.select();
  let ok = false, err = '';
  try { ok = document.execCommand('copy'); } catch (x) { err = String(x); }
  rec({type: 'copy_attempt', method: 'execCommand', ok: ok, why: why, err: err, text: text});
  if (back && back.focus) back.focus();
}
"""

MAIN_PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>cdsgate test backend</title>
<style>
html, body { margin: 0; padding: 0; overflow: hidden; width: 100%%; height: 100%%;
  background: rgb%(page)s; font: 16px sans-serif; cursor: default; }
#banner { position: absolute; left: 0; top: 0; width: 100%%; height: 160px;
  background: rgb%(banner)s; }
#ta { position: absolute; left: 20px; top: 180px; width: 600px; height: 200px;
  box-sizing: border-box; margin: 0; font: 18px monospace; resize: none; }
#copy { position: absolute; left: 20px; top: 400px; width: 600px; height: 100px;
  background: rgb%(copy)s; }
#target { position: absolute; left: 660px; top: 180px; width: 600px; height: 400px;
  background: rgb%(target)s; }
#hidden { position: absolute; left: -1000px; top: 0; width: 10px; height: 10px; }
#status { position: absolute; left: 20px; top: 520px; width: 600px; font: 14px monospace; }
</style></head>
<body>
<div id="banner"></div>
<textarea id="ta" autofocus spellcheck="false" autocomplete="off"></textarea>
<div id="copy"></div>
<div id="target"></div>
<textarea id="hidden" tabindex="-1"></textarea>
<div id="status"></div>
<script>
%(js)s
const ta = document.getElementById('ta');
ta.addEventListener('input', e => rec({type: 'input', inputType: e.inputType,
  data: e.data, value: ta.value}));
/* Clicks on the coloured areas must not take the focus off the textarea. */
for (const id of ['target', 'copy', 'banner'])
  document.getElementById(id).addEventListener('mousedown', e => e.preventDefault());
document.getElementById('copy').addEventListener('click', () => tryCopy('click'));
rec({type: 'load', url: location.href, w: innerWidth, h: innerHeight,
     sw: screen.width, sh: screen.height, dpr: devicePixelRatio,
     focus: tid(document.activeElement), ua: navigator.userAgent});
window.addEventListener('load', () => { ta.focus(); });
/* ?probe=PORT (the jail test, 023): fetch the backend and 127.0.0.1:PORT
   from the page itself and report which worked. */
const probe = new URLSearchParams(location.search).get('probe');
if (probe)
  for (const [name, url] of [['backend', '/favicon.ico'],
                             ['other', 'http://127.0.0.1:' + probe + '/']])
    fetch(url, {mode: 'no-cors', cache: 'no-store'}).then(
      r => rec({type: 'probe', target: name, ok: true, status: r.status}),
      e => rec({type: 'probe', target: name, ok: false, err: String(e)}));
</script>
</body></html>
"""

COPY_PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>cdsgate copy test</title>
<style>
html, body { margin: 0; overflow: hidden; width: 100%%; height: 100%%;
  background: rgb%(copy)s; font: 24px sans-serif; }
#hidden { position: absolute; left: -1000px; top: 0; width: 10px; height: 10px; }
a { position: absolute; left: 20px; top: 20px; }
</style></head>
<body><a id="back" href="/">back</a>
<textarea id="hidden" tabindex="-1"></textarea>
<script>
%(js)s
rec({type: 'load', url: location.href, w: innerWidth, h: innerHeight});
tryCopy('load');
setInterval(() => tryCopy('timer'), 1000);
document.addEventListener('keydown', () => tryCopy('key'));
document.addEventListener('click', () => tryCopy('click'));
</script></body></html>
"""


# /anim: the main page's banner and a 120x120 box that moves 4 px every
# 50 ms (20 frames/s) — bench/gateway's animated page.
ANIM_PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>cdsgate animation</title>
<style>
html, body { margin: 0; overflow: hidden; width: 100%%; height: 100%%;
  background: rgb%(page)s; }
#banner { position: absolute; left: 0; top: 0; width: 100%%; height: 160px;
  background: rgb%(banner)s; }
#box { position: absolute; left: 0; top: 300px; width: 120px; height: 120px;
  background: rgb%(target)s; }
</style></head>
<body><div id="banner"></div><div id="box"></div>
<script>
%(js)s
const box = document.getElementById('box');
let x = 0, frames = 0;
setInterval(() => { x = (x + 4) %% (innerWidth - 120); box.style.left = x + 'px'; frames++; }, 50);
setInterval(() => rec({type: 'frames', n: frames}), 10000);
rec({type: 'load', url: location.href, w: innerWidth, h: innerHeight});
</script></body></html>
"""


# /cursor?size=S&period=MS&count=N: a hostile page that streams the file
# given by --cursor-file through CSS cursors: N cursors of S x S opaque
# pixels whose R, G, B bytes are the file's next bytes, one every MS ms,
# over the whole page below the banner, from the first pointer move there;
# each change is reported (type "cursor", the byte offset of that image),
# then "cursor_done".  The
# banner's colour flips every 500 ms ("tick"), so a viewer that still
# gets frames can be told from a frozen one.
CURSOR_PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>cdsgate cursor</title>
<style>
html, body { margin: 0; overflow: hidden; width: 100%%; height: 100%%;
  background: rgb%(page)s; }
#banner { position: absolute; left: 0; top: 0; width: 100%%; height: 160px;
  background: rgb%(banner)s; }
#pad { position: absolute; left: 0; top: 160px; right: 0; bottom: 0; }
</style></head>
<body><div id="banner"></div><div id="pad"></div>
<script>
%(js)s
const q = new URLSearchParams(location.search);
const S = +(q.get('size') || 80), period = +(q.get('period') || 100),
      count = +(q.get('count') || 50);
const banner = document.getElementById('banner'), pad = document.getElementById('pad');
let flip = false;
setInterval(() => { flip = !flip;
  banner.style.background = flip ? 'rgb%(target)s' : 'rgb%(banner)s'; }, 500);
fetch('/cursor-data').then(r => r.arrayBuffer()).then(buf => {
  const bytes = new Uint8Array(buf), n = bytes.length;
  const cv = document.createElement('canvas');
  cv.width = cv.height = S;
  const cx = cv.getContext('2d');
  let k = 0, off = 0;
  function next() {
    const img = cx.createImageData(S, S);
    for (let i = 0; i < S * S; i++) {
      for (let c = 0; c < 3; c++) img.data[4 * i + c] = bytes[(off + 3 * i + c) %% n];
      img.data[4 * i + 3] = 255;
    }
    cx.putImageData(img, 0, 0);
    pad.style.cursor = 'url(' + cv.toDataURL('image/png') + ') 0 0, auto';
    rec({type: 'cursor', k: k, offset: off, size: S});
    off = (off + 3 * S * S) %% n;
    if (++k < count) setTimeout(next, period);
    else rec({type: 'cursor_done', k: k});
  }
  pad.addEventListener('pointermove', next, {once: true});
  rec({type: 'cursor_ready', bytes: n});
});
rec({type: 'load', url: location.href, w: innerWidth, h: innerHeight});
</script></body></html>
"""


# /novnc-test?url=WS-URL&password=PW[&username=U][&frame=1]: noVNC's RFB
# object (served from --novnc) connects to the gateway (VncAuth, or
# VeNCrypt Plain when a user name is given) and reports connect,
# disconnect, security failures and, once connected, a framebuffer pixel
# from the banner (and with frame=1 the whole canvas once, as a PNG).
NOVNC_TEST_PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>cdsgate noVNC test</title></head>
<body style="margin:0"><div id="screen" style="width:1280px;height:800px"></div>
<script>
function report(ev) {
  ev.type = 'novnc'; ev.origin = location.origin;
  fetch('/event', {method: 'POST', headers: {'Content-Type': 'application/json'},
                   body: JSON.stringify(ev)});
}
window.addEventListener('error', e => report({state: 'error', err: String(e.message)}));
window.addEventListener('unhandledrejection', e => report({state: 'error', err: String(e.reason)}));
</script>
<script type="module">
import RFB from '/novnc/core/rfb.js';
const q = new URLSearchParams(location.search);
const url = q.get('url');
let rfb = null, tries = 0;
report({state: 'start', url: url.replace(/token=[^&]*/, 'token=...')});
try {
  rfb = new RFB(document.getElementById('screen'), url,
                {credentials: {password: q.get('password') || '',
                               username: q.get('username') || undefined}});
} catch (e) { report({state: 'error', err: String(e)}); }
function sample() {
  const c = document.querySelector('#screen canvas');
  const d = c.getContext('2d').getImageData(640, 80, 1, 1).data;
  report({state: 'pixel', x: 640, y: 80, rgb: [d[0], d[1], d[2]], w: c.width, h: c.height});
  if (tries == 4 && q.get('frame')) report({state: 'frame', png: c.toDataURL('image/png')});
  if (++tries < 10) setTimeout(sample, 500);
}
if (rfb) {
  rfb.addEventListener('connect', () => { report({state: 'connected'}); setTimeout(sample, 500); });
  rfb.addEventListener('disconnect', e => report({state: 'disconnected', clean: e.detail.clean}));
  rfb.addEventListener('securityfailure', e => report({state: 'securityfailure',
    status: e.detail.status, reason: e.detail.reason}));
  rfb.addEventListener('credentialsrequired', () => report({state: 'credentialsrequired'}));
  rfb.addEventListener('desktopname', e => report({state: 'desktopname', name: e.detail.name}));
}
</script></body></html>
"""


def page(template):
    return (template % {
        'page': str(PAGE_RGB), 'banner': str(BANNER_RGB),
        'copy': str(COPY_RGB), 'target': str(TARGET_RGB), 'js': RECORDER_JS,
    }).encode()


class Recorder:
    """Appends events to the record file; numbers them in arrival order."""

    def __init__(self, path):
        self.path = path
        self.lock = threading.Lock()
        self.n = 0
        self.events = []
        with open(path, 'a', encoding='utf-8'):
            pass

    def add(self, evs, peer):
        with self.lock, open(self.path, 'a', encoding='utf-8') as f:
            for ev in evs:
                if not isinstance(ev, dict):
                    continue
                self.n += 1
                ev['n'] = self.n
                ev['rx'] = round(time.time(), 3)
                ev['peer'] = peer
                self.events.append(ev)
                f.write(json.dumps(ev, ensure_ascii=False) + '\n')
            f.flush()

    def since(self, n):
        with self.lock:
            return [e for e in self.events if e['n'] > n]


class Handler(BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'
    server_version = 'cdsgate-test-backend'

    def log_message(self, fmt, *args):
        if self.server.verbose:
            sys.stderr.write('backend: %s\n' % (fmt % args))

    def send(self, code, body=b'', ctype='text/plain; charset=utf-8'):
        self.send_response(code)
        self.send_header('Content-Type', ctype)
        self.send_header('Content-Length', str(len(body)))
        self.send_header('Cache-Control', 'no-store')
        self.end_headers()
        if self.command != 'HEAD':
            self.wfile.write(body)

    def do_HEAD(self):
        self.do_GET()

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        if url.path in ('/', '/index.html'):
            self.send(200, page(MAIN_PAGE), 'text/html; charset=utf-8')
        elif url.path == '/copy':
            self.send(200, page(COPY_PAGE), 'text/html; charset=utf-8')
        elif url.path == '/anim':
            self.send(200, page(ANIM_PAGE), 'text/html; charset=utf-8')
        elif url.path == '/cursor':
            self.send(200, page(CURSOR_PAGE), 'text/html; charset=utf-8')
        elif url.path == '/cursor-data' and self.server.cursor_file:
            with open(self.server.cursor_file, 'rb') as f:
                self.send(200, f.read(), 'application/octet-stream')
        elif url.path == '/novnc-test' and self.server.novnc:
            self.send(200, NOVNC_TEST_PAGE.encode(), 'text/html; charset=utf-8')
        elif url.path.startswith('/x/'):
            escape.handle(self, url, RECORDER_JS)
        elif url.path == '/events':
            q = urllib.parse.parse_qs(url.query)
            since = int(q.get('since', ['0'])[0])
            body = json.dumps(self.server.recorder.since(since)).encode()
            self.send(200, body, 'application/json')
        elif url.path == '/favicon.ico':
            self.send(204)
        elif url.path.startswith('/novnc/') and self.server.novnc:
            self.static(url.path[len('/novnc/'):])
        else:
            self.send(404, b'not found\n')

    def static(self, rel):
        rel = posixpath.normpath(urllib.parse.unquote(rel)).lstrip('/')
        if rel.startswith('..'):
            self.send(403)
            return
        path = os.path.join(self.server.novnc, rel)
        if os.path.isdir(path):
            path = os.path.join(path, 'index.html')
        try:
            with open(path, 'rb') as f:
                body = f.read()
        except OSError:
            self.send(404, b'not found\n')
            return
        ctype = mimetypes.guess_type(path)[0] or 'application/octet-stream'
        if path.endswith('.js'):
            ctype = 'text/javascript'
        self.send(200, body, ctype)

    def do_POST(self):
        url = urllib.parse.urlsplit(self.path)
        length = int(self.headers.get('Content-Length') or 0)
        if url.path != '/event' or not 0 <= length <= 1 << 20:
            self.send(404, b'not found\n')
            return
        try:
            evs = json.loads(self.rfile.read(length) or b'[]')
        except ValueError:
            self.send(400, b'bad json\n')
            return
        if isinstance(evs, dict):
            evs = [evs]
        if isinstance(evs, list):
            self.server.recorder.add(evs, self.client_address[0])
        self.send(204)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--port', type=int, default=0, help='0 = any free port')
    ap.add_argument('--bind', default='127.0.0.1')
    ap.add_argument('--record', required=True, help='JSON-lines output file')
    ap.add_argument('--novnc', help="serve this directory under /novnc/")
    ap.add_argument('--cursor-file', help="the file /cursor streams")
    ap.add_argument('-v', '--verbose', action='store_true')
    a = ap.parse_args()

    srv = ThreadingHTTPServer((a.bind, a.port), Handler)
    srv.daemon_threads = True
    srv.recorder = Recorder(a.record)
    srv.verbose = a.verbose
    srv.novnc = a.novnc
    srv.cursor_file = a.cursor_file
    host, port = srv.server_address[:2]
    print('ready %s:%d' % (host, port), flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == '__main__':
    main()
