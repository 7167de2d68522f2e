"""tests/gateway/escape.py — the kiosk-escape page and its routes, served by
tests/gateway/backend.py under /x/ (tests/regress/028-kiosk-escape.sh).

The page is a grid of ways out of a kiosk browser: links to chrome://,
file://, view-source:, javascript:, devtools://, data: and mailto: targets,
redirects from this backend to such targets, window.open, target=_blank, a
download link and an attachment response, window.print(), an <input
type=file>, the fullscreen API, draggable text and links, window.close().
Every request to /x/ is recorded (type "request", with the Host header), so
the test sees what reached the backend; the page records what it did
(type "attempt"/"result") and beats every 250 ms (type "beat", with its
visibility and focus) so the test knows the same page is still up and in
front.

Layout at 1280x800 (CSS pixels = screen pixels at scale 1):
  banner  0..1279 x 0..99        rgb(20, 150, 80)  BANNER_RGB
  field   20..619 x 110..149     a text field (autofocus)
  tiles   6 columns x 5 rows, tile (c, r) at x = 20 + 205 c, y = 170 + 95 r,
          190 x 80 each, rgb(40, 40, 160) TILE_RGB (see TILES)
  drop    20..1259 x 645..784    a textarea to drop into, rgb(255, 255, 200)

Trust: test code.  Everything here is served to the kiosk browser only.
"""

import json
import urllib.parse

BANNER_RGB = (20, 150, 80)
TILE_RGB = (40, 40, 160)
DROP_RGB = (255, 255, 200)
TITLE = 'cdsgate escape page'
DOWNLOAD_NAME = 'cdsgate-escape-download.txt'
ATTACH_NAME = 'cdsgate-escape-attachment.txt'
MARKER = 'CDSGATE-ESCAPE-MARKER'

# (id, kind, target, label): kind is "a" (a link), "blank" (a link with
# target=_blank), "dl" (a link with download), "btn" (a button running
# SCRIPTS[id]) or "file" (an <input type=file>).  "{other}" in a target is
# this server on another host name (another origin).
TILES = [
    ('l-chrome', 'a', 'chrome://settings', 'chrome://settings'),
    ('l-file', 'a', 'file:///etc/passwd', 'file:///etc/passwd'),
    ('l-vsrc', 'a', 'view-source:{self}/x/', 'view-source:'),
    ('l-js', 'a', "javascript:void(fetch('/x/probe?via=javascript-url'));void(location.href='chrome://version')", 'javascript:'),
    ('l-devtools', 'a', 'devtools://devtools/bundled/inspector.html', 'devtools://'),
    ('l-data', 'a', 'data:text/html,<title>escaped-data</title>' + MARKER, 'data: URL'),
    ('b-blob', 'btn', '', 'blob: URL'),
    ('b-open', 'btn', '', 'window.open'),
    ('l-blank', 'blank', '/x/hit?via=target-blank', 'target=_blank'),
    ('l-dl', 'dl', '/x/download', 'download link'),
    ('l-attach', 'a', '/x/attach', 'attachment'),
    ('b-print', 'btn', '', 'window.print()'),
    ('i-file', 'file', '', '<input type=file>'),
    ('l-302chrome', 'a', '/x/redirect?to=chrome://settings', '302 to chrome://'),
    ('l-302file', 'a', '/x/redirect?to=file:///etc/passwd', '302 to file://'),
    ('l-other', 'a', '{other}/x/hit?via=other-origin', 'other origin'),
    ('l-mailto', 'a', 'mailto:escape@example.invalid', 'mailto:'),
    ('b-full', 'btn', '', 'fullscreen API'),
    ('d-text', 'drag', '', 'drag me (text)'),
    ('l-drag', 'a', 'chrome://settings/?via=drag', 'drag this link'),
    ('b-close', 'btn', '', 'window.close()'),
    ('b-save', 'btn', '', 'showSaveFilePicker'),
    ('l-popup', 'a', '/x/hit?via=click', 'a plain link'),
    ('b-loc', 'btn', '', 'location = chrome://'),
    ('b-focus', 'btn', '', 'focus the plain link'),
    ('b-popwin', 'btn', '', 'window.open popup window'),
    ('l-csp', 'a', '/x/csp/', 'this page, CSP sandbox'),
    ('b-variant', 'btn', '', 'this page, another way'),
    ('l-here', 'a', '#', 'a link to this page (#)'),
]

# The same page served under Content-Type values Chromium renders as a
# document though they are no exact "text/html" (None: no Content-Type,
# Chromium sniffs).  The page is polyglot (well-formed XHTML), so the XML
# types render it with its scripts too.  The harness picks one with
# /x/variant/set?to=PATH; the b-variant tile then goes there.
CT_TRICKS = {
    'xsl': 'text/xsl',
    'htmlx': 'text/html x',
    'htmlc': 'text/html(comment)',
    'upper': 'TEXT/HTML',
    'param': 'text/html;charset=utf-8;x=y',
    'xhtml': 'application/xhtml+xml',
    'xml': 'text/xml',
    'none': None,
    'list': 'image/png, text/html',
    'dup': ('image/png', 'text/html'),
}
VARIANT = {'to': '/x/'}

# A service worker that answers /x/sw/doc/ with a copy of the page it made
# itself: a document that never passes the forwarder, so without a CSP.
# Its script is first fetched by the page so that an HTTP cache could hand
# it to the registration (updateViaCache: 'all') without a request.
SW_SCRIPT = """self.addEventListener('install', e => self.skipWaiting());
self.addEventListener('activate', e => e.waitUntil(clients.claim()));
self.addEventListener('fetch', e => {
  if (new URL(e.request.url).pathname === '/x/sw/doc/')
    e.respondWith(fetch('/x/').then(r => r.text()).then(t => new Response(t,
      {headers: {'Content-Type': 'text/html'}})));
});
"""
SW_REGISTER = """<script>//<![CDATA[
// replace: /x/sw/ leaves no history entry, so Back from /x/sw/doc/ is /x/
const go = () => { location.replace('/x/sw/doc/'); };
fetch('/x/sw.js').then(() => navigator.serviceWorker.register('/x/sw.js',
    {scope: '/x/sw/', updateViaCache: 'all'}))
  .then(() => navigator.serviceWorker.ready)
  .then(() => { result('sw', {registered: true}); setTimeout(go, 300); },
        e => { result('sw', {registered: false, err: String(e)}); setTimeout(go, 300); });
//]]></script>
"""

# The app-side remedy for new tabs: the same page under a CSP sandbox
# without allow-popups (window.open and target=_blank are refused).
CSP_SANDBOX = 'sandbox allow-scripts allow-same-origin allow-forms'

SCRIPTS = {
    'b-blob': """const u = URL.createObjectURL(new Blob(
        ['<title>app-blob</title>' + MARKER], {type: 'text/html'}));
      result('b-blob', {url: u}); location.href = u;""",
    'b-open': """const w = window.open('/x/hit?via=window-open', '_blank');
      result('b-open', {opened: !!w});""",
    'b-popwin': """const w = window.open('/x/hit?via=popup-window', 'pop',
        'popup,width=400,height=300,left=100,top=100');
      result('b-popwin', {opened: !!w});""",
    'b-print': """result('b-print', {called: true}); window.print();
      result('b-print', {returned: true});""",
    'b-full': """document.documentElement.requestFullscreen().then(
        () => result('b-full', {fullscreen: true}),
        e => result('b-full', {fullscreen: false, err: String(e)}));""",
    'b-close': """result('b-close', {called: true}); window.close();""",
    'b-save': """if (!window.showSaveFilePicker) result('b-save', {api: false});
      else showSaveFilePicker().then(h => result('b-save', {handle: true}),
        e => result('b-save', {handle: false, err: String(e)}));""",
    'b-focus': """document.getElementById('l-popup').focus();
      result('b-focus', {active: tid(document.activeElement)});""",
    'b-loc': """result('b-loc', {to: 'chrome://settings'});
      location.href = 'chrome://settings';""",
    'b-variant': """location.href = '/x/variant';""",
}

PAGE = """<!DOCTYPE html>
<html xmlns="http://www.w3.org/1999/xhtml"><head><meta charset="utf-8"/><title>%(title)s</title>
<style>
html, body { margin: 0; padding: 0; overflow: hidden; width: 100%%; height: 100%%;
  background: rgb(240, 240, 240); font: 15px sans-serif; }
#banner { position: absolute; left: 0; top: 0; width: 100%%; height: 100px;
  background: rgb%(banner)s; }
#field { position: absolute; left: 20px; top: 110px; width: 600px; height: 40px;
  box-sizing: border-box; font: 18px monospace; }
.tile { position: absolute; width: 190px; height: 80px; box-sizing: border-box;
  background: rgb%(tile)s; color: white; border: 0; margin: 0; padding: 8px;
  font: 15px sans-serif; text-align: left; overflow: hidden; text-decoration: none;
  display: block; }
input.tile { padding: 0; }
#drop { position: absolute; left: 20px; top: 645px; width: 1240px; height: 140px;
  box-sizing: border-box; margin: 0; background: rgb%(drop)s; resize: none;
  font: 15px monospace; }
</style></head>
<body>
<div id="banner"></div>
<input id="field" autofocus="autofocus" autocomplete="off" spellcheck="false"/>
%(tiles)s
<textarea id="drop" spellcheck="false"></textarea>
<script>//<![CDATA[
const MARKER = %(marker)s;
%(js)s
function result(what, r) { rec(Object.assign({type: 'result', what: what}, r)); }
const scripts = {
%(scripts)s
};
for (const el of document.querySelectorAll('.tile'))
  el.addEventListener('click', e => {
    rec({type: 'attempt', what: el.id, button: e.button, ctrl: e.ctrlKey,
         shift: e.shiftKey});
    if (scripts[el.id]) scripts[el.id]();
  }, true);
document.getElementById('d-text').addEventListener('dragstart',
  e => e.dataTransfer.setData('text/plain', MARKER));
for (const ev of ['dragstart', 'dragend', 'drop'])
  document.addEventListener(ev, e => rec({type: ev, target: tid(e.target),
    types: e.dataTransfer ? Array.from(e.dataTransfer.types) : []}), true);
document.getElementById('i-file').addEventListener('change',
  e => result('i-file', {files: e.target.files.length}));
document.addEventListener('fullscreenchange', () =>
  result('fullscreen', {on: !!document.fullscreenElement}));
window.addEventListener('beforeunload', () => rec({type: 'unload'}));
setInterval(() => rec({type: 'beat', vis: document.visibilityState,
  focus: document.hasFocus(), active: tid(document.activeElement),
  top: outerHeight - innerHeight, full: !!document.fullscreenElement}), 250);
rec({type: 'load', url: location.href, w: innerWidth, h: innerHeight,
     focus: tid(document.activeElement)});
//]]></script>
</body></html>
"""


def tile_box(i):
    """The screen rectangle (x0, y0, x1, y1) of tile number i."""
    c, r = i % 6, i // 6
    x, y = 20 + 205 * c, 170 + 95 * r
    return x, y, x + 190, y + 80


def tile_html(i, tile, me, other):
    tid, kind, target, label = tile
    x0, y0 = tile_box(i)[:2]
    style = 'left: %dpx; top: %dpx' % (x0, y0)
    href = target.replace('{other}', other).replace('{self}', me)
    esc = lambda s: s.replace('&', '&amp;').replace('"', '&quot;').replace('<', '&lt;')
    if kind == 'btn':
        return '<button class="tile" id="%s" style="%s">%s</button>' % (
            tid, style, esc(label))
    if kind == 'file':
        return '<input class="tile" type="file" id="%s" style="%s"/>' % (tid, style)
    if kind == 'drag':
        return '<div class="tile" draggable="true" id="%s" style="%s">%s %s</div>' % (
            tid, style, esc(label), MARKER)
    extra = {'blank': ' target="_blank"', 'dl': ' download="%s"' % DOWNLOAD_NAME}.get(kind, '')
    return '<a class="tile" id="%s" href="%s"%s style="%s">%s</a>' % (
        tid, esc(href), extra, style, esc(label))


def page(recorder_js, host):
    """The escape page; host is the Host header it was asked under."""
    hostname, _, port = host.rpartition(':')
    other = 'http://%s:%s' % ('localhost' if hostname != 'localhost' else '127.0.0.1', port)
    tiles = '\n'.join(tile_html(i, t, 'http://' + host, other) for i, t in enumerate(TILES))
    scripts = ',\n'.join("  '%s': () => { %s }" % (k, v) for k, v in SCRIPTS.items())
    return (PAGE % {
        'title': TITLE, 'banner': str(BANNER_RGB), 'tile': str(TILE_RGB),
        'drop': str(DROP_RGB), 'tiles': tiles, 'marker': json.dumps(MARKER),
        'js': recorder_js, 'scripts': scripts,
    }).encode()


def layout():
    """What the test needs to know about the page, as JSON."""
    return json.dumps({
        'title': TITLE, 'banner': BANNER_RGB, 'tile': TILE_RGB, 'drop': DROP_RGB,
        'download': DOWNLOAD_NAME, 'attach': ATTACH_NAME, 'marker': MARKER,
        'tiles': {t[0]: tile_box(i) for i, t in enumerate(TILES)},
        'field_box': (20, 110, 620, 150), 'drop_box': (20, 645, 1260, 785),
        'bg_box': (700, 110, 1200, 160),
    }).encode()


def send_raw(h, body, types, *extra):
    """A 200 with exactly these Content-Type lines (none, one or more)
    and extra headers, without the backend's usual no-store."""
    h.send_response(200)
    for t in types:
        h.send_header('Content-Type', t)
    for k, v in extra:
        h.send_header(k, v)
    h.send_header('Content-Length', str(len(body)))
    h.end_headers()
    if h.command != 'HEAD':
        h.wfile.write(body)


def handle(h, url, recorder_js):
    """Serve one GET under /x/; h is the BaseHTTPRequestHandler.  Every
    request is recorded first, so the test sees all that reached us."""
    q = urllib.parse.parse_qs(url.query)
    h.server.recorder.add([{'type': 'request', 'path': url.path, 'query': url.query,
                            'host': h.headers.get('Host', ''),
                            'referer': h.headers.get('Referer', '')}],
                          h.client_address[0])
    if url.path == '/x/':
        h.send(200, page(recorder_js, h.headers.get('Host', '')), 'text/html; charset=utf-8')
    elif url.path == '/x/csp/':
        body = page(recorder_js, h.headers.get('Host', ''))
        h.send_response(200)
        h.send_header('Content-Type', 'text/html; charset=utf-8')
        h.send_header('Content-Security-Policy', CSP_SANDBOX)
        h.send_header('Content-Length', str(len(body)))
        h.send_header('Cache-Control', 'no-store')
        h.end_headers()
        h.wfile.write(body)
    elif url.path == '/x/variant/set':
        VARIANT['to'] = q.get('to', ['/x/'])[0]
        h.send(204)
    elif url.path == '/x/variant':
        h.send_response(302)
        h.send_header('Location', VARIANT['to'])
        h.send_header('Content-Length', '0')
        h.end_headers()
    elif url.path.startswith('/x/ct/') and url.path[6:].rstrip('/') in CT_TRICKS:
        ctype = CT_TRICKS[url.path[6:].rstrip('/')]
        types = ctype if isinstance(ctype, tuple) else () if ctype is None else (ctype,)
        send_raw(h, page(recorder_js, h.headers.get('Host', '')), types)
    elif url.path == '/x/sw/':
        body = page(recorder_js, h.headers.get('Host', ''))
        h.send(200, body.replace(b'</body>', SW_REGISTER.encode() + b'</body>'),
               'text/html; charset=utf-8')
    elif url.path == '/x/sw/doc/':
        h.send(200, page(recorder_js, h.headers.get('Host', '')), 'text/html; charset=utf-8')
    elif url.path == '/x/sw.js':
        send_raw(h, SW_SCRIPT.encode(), ('text/javascript',),
                 ('Cache-Control', 'max-age=3600'))
    elif url.path == '/x/layout':
        h.send(200, layout(), 'application/json')
    elif url.path == '/x/hit':
        h.send(200, ('<title>escaped-%s</title>%s' % (
            q.get('via', ['?'])[0], MARKER)).encode(), 'text/html; charset=utf-8')
    elif url.path == '/x/probe':
        h.send(204)             # a script reports it ran (recorded above)
    elif url.path == '/x/redirect':
        h.send_response(302)
        h.send_header('Location', q.get('to', ['/x/'])[0])
        h.send_header('Content-Length', '0')
        h.end_headers()
    elif url.path in ('/x/download', '/x/attach'):
        name = DOWNLOAD_NAME if url.path == '/x/download' else ATTACH_NAME
        body = (MARKER + '\n').encode()
        h.send_response(200)
        h.send_header('Content-Type', 'application/octet-stream')
        h.send_header('Content-Disposition', 'attachment; filename="%s"' % name)
        h.send_header('Content-Length', str(len(body)))
        h.end_headers()
        h.wfile.write(body)
    else:
        h.send(404, b'not found\n')
