#!/usr/bin/env python3
"""tests/gateway/escape_judge.py — decides, from evidence, whether one
kiosk-escape attempt of tests/regress/028-kiosk-escape.sh was blocked.

Evidence, all gathered after the attempt:
  - the session's X display (xdotool, with the session's Xauthority): the
    visible top-level windows, their titles and geometry;
  - the backend's record (tests/gateway/escape.py): requests that reached
    it (host, path), and the escape page's own events (beats with its
    visibility, focus and offset; keydowns; attempts and their results);
  - the session log (gateway/slog.c): key_filtered / button_filtered,
    child_exit and browser_restart;
  - the browser's home: any downloaded file;
  - the browser user's processes: nothing but Chromium (no xdg-open);
  - a screenshot through the gateway (PPM): the page's banner and tiles.

Usage: escape_judge.py CONTEXT.json COMMAND ARGS...; CONTEXT holds the
session's facts (written once by the test).  Commands:
  mark                          -> "EVENTS LOGLINES" now
  wait-page EVMARK SECONDS [PATH] -> a visible beat of the page (PATH, /x/)
                                   after EVMARK;
                                   prints its page id and top offset
  at TILE                       -> "X Y", the tile's centre on the screen now
  windows                       -> the visible windows, one per line
  healthy SECONDS               -> exit 0 once the page beats, visible, alone
                                   on the screen; else prints hidden|other
  judge KIND EVMARK LOGMARK PPM [key SPEC | button N | window -]
                                -> evidence as "#" lines, then
                                   "verdict blocked|open logged yes|no|- next
                                   EVENTS LOGLINES" (the marks for the next)
Trust: test code.
"""

import json
import os
import re
import subprocess
import sys
import time

FORBIDDEN_TITLES = re.compile(
    r'^(escaped-|Settings|Version|About|passwd|/etc/|view-source|DevTools|'
    r'Downloads|History|Print|Open File|Save File|Task Manager|Chromium$|'
    r'New Tab|chrome://)', re.I)

KEYSYMS = {
    'escape': 0xff1b, 'esc': 0xff1b, 'return': 0xff0d, 'tab': 0xff09,
    'backspace': 0xff08, 'delete': 0xffff, 'home': 0xff50, 'left': 0xff51,
    'up': 0xff52, 'right': 0xff53, 'down': 0xff54, 'page_up': 0xff55,
    'page_down': 0xff56, 'end': 0xff57, 'insert': 0xff63, 'menu': 0xff67,
    'print': 0xff61, 'pause': 0xff13, 'plus': 0x2b, 'minus': 0x2d,
    'space': 0x20, 'super_l': 0xffeb, 'alt_l': 0xffe9, 'meta_l': 0xffe7,
    'control_l': 0xffe3, 'shift_l': 0xffe1, 'scroll_lock': 0xff14,
    'sys_req': 0xff15,
}
MOD_KEYSYMS = {'ctrl': 0xffe3, 'shift': 0xffe1, 'alt': 0xffe9, 'meta': 0xffe7,
               'super': 0xffeb, 'win': 0xffeb}
# DOM key names a leaked keydown would carry (for the page-side check).
DOM_KEYS = {0xff1b: 'Escape', 0xff0d: 'Enter', 0xff09: 'Tab', 0xff50: 'Home',
            0xff51: 'ArrowLeft', 0xff53: 'ArrowRight', 0xffff: 'Delete',
            0xff67: 'ContextMenu', 0xff61: 'PrintScreen', 0xff56: 'PageDown',
            0xffeb: 'Meta'}


def keyspec(spec):
    """ctrl+shift+n -> (keysym of n, ['ctrl', 'shift'])."""
    parts = spec.split('+')
    if spec.endswith('++'):
        parts = parts[:-2] + ['+']
    key, mods = parts[-1], [m.lower() for m in parts[:-1]]
    if len(key) == 1:
        ks = ord(key)
    elif re.fullmatch(r'[Ff]\d{1,2}', key):
        ks = 0xffbe + int(key[1:]) - 1
    elif key.lower().startswith('0x'):
        ks = int(key, 16)
    else:
        ks = KEYSYMS[key.lower()]
    return ks, mods


def dom_key(ks):
    if ks in DOM_KEYS:
        return DOM_KEYS[ks]
    if 0xffbe <= ks <= 0xffe0:
        return 'F%d' % (ks - 0xffbe + 1)
    if 0x20 <= ks <= 0x7e:
        return chr(ks)
    return None


def jsonl(path, since=0):
    out = []
    try:
        with open(path, encoding='utf-8', errors='replace') as f:
            for i, line in enumerate(f, 1):
                if i <= since:
                    continue
                try:
                    out.append(json.loads(line))
                except ValueError:
                    pass
    except FileNotFoundError:
        pass
    return out


def count_lines(path):
    try:
        with open(path, 'rb') as f:
            return sum(1 for _ in f)
    except FileNotFoundError:
        return 0


class Ctx:
    def __init__(self, path):
        c = json.load(open(path))
        self.ev, self.log = c['events'], c['log']
        self.display, self.xauth = c['display'], c['xauthority']
        self.home, self.host = c['browser_home'], c['backend_host']
        self.user = c['browser_user']
        self.layout = c['layout']
        self.win_w, self.win_h = c.get('win_w', 0), c.get('win_h', 0)
        self.supervisor = int(c['supervisor'])

    def x(self, *args):
        env = dict(os.environ, DISPLAY=self.display, XAUTHORITY=self.xauth)
        r = subprocess.run(['xdotool'] + list(args), env=env, capture_output=True,
                           text=True, timeout=10)
        return r.stdout

    def windows(self):
        """Visible top-level windows: (id, title, x, y, w, h)."""
        out = []
        for wid in self.x('search', '--onlyvisible', '--name', '.').split():
            title = self.x('getwindowname', wid).strip()
            g = self.x('getwindowgeometry', '--shell', wid)
            d = dict(re.findall(r'(\w+)=(\d+)', g))
            out.append((wid, title, int(d.get('X', -1)), int(d.get('Y', -1)),
                        int(d.get('WIDTH', 0)), int(d.get('HEIGHT', 0))))
        return out

    def events(self, since):
        return jsonl(self.ev, since)

    def last_beat(self, since=0):
        beats = [e for e in self.events(since) if e.get('type') == 'beat']
        return beats[-1] if beats else None


def ppm(path):
    d = open(path, 'rb').read()
    m = re.match(rb'P6\s+(\d+)\s+(\d+)\s+255\s', d)
    if not m:
        raise ValueError('%s: not a binary PPM' % path)
    return int(m.group(1)), int(m.group(2)), d[m.end():]


def patch(img, box, rgb, tol=40):
    w, h, px = img
    x0, y0, x1, y1 = box
    good = n = 0
    for y in range(max(0, y0), min(h, y1), 3):
        for x in range(max(0, x0), min(w, x1), 3):
            i = 3 * (y * w + x)
            n += 1
            if all(abs(px[i + k] - rgb[k]) <= tol for k in range(3)):
                good += 1
    return good / n if n else 0.0


def shows_page(ctx, path, top):
    """The banner and two tiles, shifted down by the page's top offset
    (an infobar), are where the page draws them."""
    L = ctx.layout
    try:
        img = ppm(path)
    except (OSError, ValueError) as e:
        return False, 'no screenshot (%s)' % e
    checks = [('banner', (10, top + 10, 1270, top + 90), L['banner']),
              ('tile l-chrome', shift(L['tiles']['l-chrome'], top, 12), L['tile']),
              ('tile b-loc', shift(L['tiles']['b-loc'], top, 12), L['tile'])]
    bad = []
    for name, box, rgb in checks:
        f = patch(img, box, rgb)
        if f < 0.8:
            bad.append('%s %.0f%%' % (name, 100 * f))
    return not bad, ('screen shows the page' if not bad else
                     'screen does not show the page: ' + ', '.join(bad))


def shift(box, top, inset=0):
    x0, y0, x1, y1 = box
    return x0 + inset, y0 + top + inset, x1 - inset, y1 + top - inset


def session_procs(ctx):
    """(pid, executable) of the browser user's processes under our
    supervisor (other sessions may run at the same time)."""
    out = []
    for pid in subprocess.run(['pgrep', '-u', ctx.user], capture_output=True,
                              text=True).stdout.split():
        p, ours = int(pid), False
        for _ in range(64):
            try:
                st = open('/proc/%d/stat' % p).read()
            except OSError:
                break
            p = int(st[st.rindex(')') + 2:].split()[1])
            if p == ctx.supervisor:
                ours = True
                break
            if p <= 1:
                break
        if ours:
            try:
                out.append((pid, os.readlink('/proc/%s/exe' % pid)))
            except OSError:
                pass
    return out


def judge(ctx, kind, evmark, logmark, shot, spec=None):
    """Every reason the attempt was NOT blocked, and the evidence seen."""
    fails, notes = [], []
    evs = ctx.events(evmark)
    logs = jsonl(ctx.log, logmark)
    # 1. windows: exactly one visible, the browser's, where it was
    wins = ctx.windows()
    for w in wins:
        notes.append('window %s "%s" %dx%d+%d+%d' % (w[0], w[1], w[4], w[5], w[2], w[3]))
    if len(wins) != 1:
        fails.append('%d visible top-level windows (want 1)' % len(wins))
    title = wins[0][1] if wins else ''
    main = [w for w in wins if (w[4], w[5]) == (ctx.win_w, ctx.win_h) and w[2] == 0 and w[3] == 0]
    if not main:
        fails.append('no window at 0,0 with the kiosk size %dx%d' % (ctx.win_w, ctx.win_h))
    for w in wins:
        if FORBIDDEN_TITLES.match(w[1]):
            fails.append('a window shows "%s"' % w[1])
    # 2. the browser stayed up
    for e in logs:
        if e.get('event') in ('child_exit', 'browser_restart', 'session_stop'):
            fails.append('session log: %s %s' % (e['event'], json.dumps(
                {k: e[k] for k in e if k in ('role', 'pid', 'reason', 'attempt')})))
    # 3. nothing reached the backend but its own origin's pages
    for e in evs:
        if e.get('type') != 'request':
            continue
        if e.get('host') != ctx.host:
            fails.append('backend got a request for host %s: %s' % (e.get('host'), e.get('path')))
        elif e.get('path') == '/x/hit' and kind != 'closed':
            fails.append('backend served the escape target /x/hit?%s' % e.get('query'))
        elif e.get('path') == '/x/hit':
            notes.append('backend served /x/hit?%s to the window before it was closed'
                         % e.get('query'))
        elif e.get('path') == '/x/probe':
            notes.append('a page script ran: %s' % e.get('query'))
        elif e.get('path') != '/x/':
            notes.append('backend got %s?%s' % (e.get('path'), e.get('query')))
    # 4. no file was downloaded, no other program started
    for root, _, files in os.walk(ctx.home):
        for f in files:
            if f.startswith('cdsgate-escape-') or f.endswith('.crdownload'):
                fails.append('file %s' % os.path.join(root, f))
    # Chromium, and the two forks of the supervisor that run as the
    # browser user without exec: the jail's init and the forwarder.
    try:
        ours = os.readlink('/proc/%d/exe' % ctx.supervisor)
    except OSError:
        ours = None
    for pid, exe in session_procs(ctx):
        if not exe.startswith('/usr/lib/chromium/') and exe != ours:
            fails.append('the session runs %s (pid %s) as %s' % (exe, pid, ctx.user))
    # 5. what the page says: still there, in front, same document
    for e in evs:
        if e.get('type') == 'result':
            notes.append('page: %s' % json.dumps({k: v for k, v in e.items()
                         if k not in ('seq', 't', 'n', 'rx', 'peer', 'path', 'page', 'type')}))
    drags = [e for e in evs if e.get('type') in ('dragstart', 'drop')]
    if drags:
        notes.append('page: ' + ', '.join('%s on %s' % (e['type'], e.get('target'))
                                          for e in drags))
    beat = ctx.last_beat(evmark)
    before = ctx.last_beat(0) if beat is None else None
    if kind in ('stay', 'key', 'closed'):
        pages = {e.get('page') for e in evs if e.get('type') in ('load',)}
        if pages:
            fails.append('the page was reloaded (%d loads)' % len(pages))
        if beat is None:
            fails.append('the page stopped beating (gone or hidden)')
        elif beat.get('vis') != 'visible':
            fails.append('the page is %s (another tab in front?)' % beat.get('vis'))
        elif not title.startswith(ctx.layout['title']):
            fails.append('window title "%s"' % title)
        top = beat.get('top', 0) if beat else 0
        ok, why = shows_page(ctx, shot, top)
        notes.append(why + (' (offset %d)' % top if top else ''))
        if not ok:
            fails.append(why)
    elif kind == 'same-origin':
        # may replace the page, but only with the app's own content
        for e in evs:
            if e.get('type') == 'visibility' and e.get('state') == 'hidden' and \
                    not any(x.get('type') == 'unload' for x in evs):
                fails.append('the page was hidden without unloading (new tab?)')
                break
    elif kind == 'nav':
        # the page may be replaced by Chromium's error page, never the target
        notes.append('window title "%s"' % title)
        if beat is not None and beat.get('vis') != 'visible':
            fails.append('the page is hidden (another tab in front?)')
    # 6. the key itself never reached the page
    if spec:
        ks, mods = keyspec(spec)
        dk = dom_key(ks)
        for e in evs:
            if e.get('type') == 'keydown' and dk is not None and \
                    e.get('key', '').lower() == dk.lower() and \
                    all(e.get(m if m != 'super' else 'meta') for m in mods if m in
                        ('ctrl', 'shift', 'alt', 'super')):
                fails.append('the page got keydown %s' % json.dumps(
                    {k: e.get(k) for k in ('key', 'ctrl', 'shift', 'alt', 'meta')}))
                break
    return fails, notes


def logged(ctx, logmark, what, arg):
    """The gateway logged the key (key_filtered), the button (button_filtered)
    or a window it closed (window_closed)."""
    logs = jsonl(ctx.log, logmark)
    if what == 'key':
        ks, mods = keyspec(arg)
        want = [ks] + [MOD_KEYSYMS[m] for m in mods if m in ('alt', 'meta', 'super', 'win')]
        hits = [e for e in logs if e.get('event') == 'key_filtered' and e.get('keysym') in want]
        got = {e.get('keysym') for e in hits}
        # the key itself must be among them (a dropped modifier alone
        # does not prove the combination was seen)
        ok = ks in got or (ks in MOD_KEYSYMS.values() and hits)
        for e in hits[:3]:
            print('#   log: key_filtered keysym=0x%x mods=%s' % (e.get('keysym'), e.get('mods')))
        return ok
    if what == 'window':
        hits = [e for e in logs if e.get('event') == 'window_closed']
        for e in hits[:2]:
            print('#   log: window_closed window=%s action=%s' % (e.get('window'), e.get('action')))
        return bool(hits) and all(e.get('action') == 'WM_DELETE_WINDOW' for e in hits)
    hits = [e for e in logs if e.get('event') == 'button_filtered' and
            e.get('button') == int(arg)]
    for e in hits[:1]:
        print('#   log: button_filtered button=%s mods=%s' % (e.get('button'), e.get('mods')))
    return bool(hits)


def main():
    ctx = Ctx(sys.argv[1])
    cmd, a = sys.argv[2], sys.argv[3:]
    if cmd == 'mark':
        print(count_lines(ctx.ev), count_lines(ctx.log))
    elif cmd == 'windows':
        for w in ctx.windows():
            print('%s\t%s\t%dx%d+%d+%d' % (w[0], w[1], w[4], w[5], w[2], w[3]))
    elif cmd == 'wait-page':
        end = time.time() + float(a[1])
        path = a[2] if len(a) > 2 else '/x/'
        while time.time() < end:
            b = ctx.last_beat(int(a[0]))
            if b and b.get('vis') == 'visible' and b.get('path') == path:
                print(b.get('page'), b.get('top', 0))
                return 0
            time.sleep(0.1)
        return 1
    elif cmd == 'healthy':
        # the page is up, visible and alone on the screen: a fresh beat
        mark = count_lines(ctx.ev)
        end = time.time() + float(a[0])
        while time.time() < end:
            b = ctx.last_beat(mark)
            if b and b.get('vis') == 'visible' and b.get('path') == '/x/' and \
                    not b.get('full'):
                wins = ctx.windows()
                if len(wins) == 1 and wins[0][1].startswith(ctx.layout['title']):
                    return 0
            time.sleep(0.15)
        b = ctx.last_beat(max(0, mark - 50))
        print('hidden' if b and b.get('vis') == 'hidden' else 'other')
        return 1
    elif cmd == 'at':
        b = ctx.last_beat(max(0, count_lines(ctx.ev) - 200))
        top = b.get('top', 0) if b else 0
        x0, y0, x1, y1 = ctx.layout['tiles'][a[0]] if a[0] in ctx.layout['tiles'] \
            else ctx.layout[a[0] + '_box']
        print((x0 + x1) // 2, (y0 + y1) // 2 + top)
    elif cmd == 'judge':
        # judge KIND EVMARK LOGMARK PPM [key SPEC | button N]
        spec = a[5] if len(a) > 5 and a[4] == 'key' else None
        fails, notes = judge(ctx, a[0], int(a[1]), int(a[2]), a[3], spec)
        for n in notes:
            print('#   %s' % n)
        for f in fails:
            print('#   NOT BLOCKED: %s' % f)
        lg = '-'
        if len(a) > 5:
            lg = 'yes' if logged(ctx, int(a[2]), a[4], a[5]) else 'no'
        # the marks for the next attempt, if nothing happens in between
        print('verdict %s logged %s next %d %d' % ('blocked' if not fails else 'open', lg,
                                                 count_lines(ctx.ev), count_lines(ctx.log)))
        return 0
    else:
        print('escape_judge: unknown command %s' % cmd, file=sys.stderr)
        return 2
    return 0


if __name__ == '__main__':
    sys.exit(main())
