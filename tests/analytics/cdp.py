#!/usr/bin/env python3
"""tests/analytics/cdp.py — drive a real headless Chromium over the
DevTools protocol on a pipe (--remote-debugging-pipe: fd 3 in, fd 4 out;
no extra Python modules) to prove the analytics app works: load the page
at 1280x800, wait until the app says a dataset is rendered, read the
perspective viewer's DOM (through shadow roots), try each quick view
(table, counts, cross-tab, histogram), record every request the page made,
and save a screenshot.  Prints one JSON object.

usage: cdp.py URL SHOT.png TIMEOUT [UNMOUNT-CMD] -- COMMAND...
       (COMMAND runs Chromium; this script appends --remote-debugging-pipe
       and about:blank.  UNMOUNT-CMD, run through sh at the end: the page
       must then say the dataset was unmounted and show no rows.)
"""
import base64, json, os, select, subprocess, sys, time

# Read the DOM the way a researcher sees it: text of header cells and the
# number of body rows in the datagrid, and what the chart drew.
PROBE = r"""(() => {
  const deep = (root, sel, out = []) => {
    root.querySelectorAll(sel).forEach((e) => out.push(e));
    root.querySelectorAll('*').forEach((e) => e.shadowRoot && deep(e.shadowRoot, sel, out));
    return out;
  };
  const v = document.querySelector('perspective-viewer');
  const ths = deep(document, 'regular-table thead th').map((e) => e.textContent.trim()).filter(Boolean);
  const trs = deep(document, 'regular-table tbody tr');
  const rows = trs.length;
  const cells = trs.slice(0, 8).map((tr) => Array.from(tr.children).map((c) => c.textContent.trim()));
  const yb = deep(document, 'perspective-viewer-d3fc-ybar')[0];
  const marks = yb ? deep(yb.shadowRoot || yb, 'path.bar, g.bar path, rect').length + deep(yb, 'path.bar, g.bar path').length : 0;
  const ticks = yb ? deep(yb.shadowRoot || yb, 'text').concat(deep(yb, 'text')).map((e) => e.textContent.trim()) : [];
  const axes = yb ? deep(yb.shadowRoot || yb, '.x-label, .y-label').concat(deep(yb, '.x-label, .y-label')).map((e) => e.textContent.trim()) : [];
  return JSON.stringify({viewer: !!v, state: document.body.dataset.state,
    rows_loaded: +document.body.dataset.rows || 0, app_ms: +document.body.dataset.ms || 0,
    status: (document.getElementById('status') || {}).textContent,
    about: (document.getElementById('about') || {}).textContent || '',
    plugin: v ? (v.querySelector('[slot]') || v.firstElementChild || {}).tagName || null : null,
    headers: ths.slice(0, 60), body_rows: rows, first_rows: cells, chart_marks: marks,
    chart_labels: ticks.slice(0, 80), axis_titles: axes});
})()"""

# Filter and sort through the viewer's API (what its settings panel does).
FILTER = """(async () => { const v = document.querySelector('perspective-viewer');
  await v.restore({plugin: 'Datagrid', group_by: [], split_by: [], aggregates: {},
    columns: ['sex', 'length_of_stay'], filter: [['sex', '==', 'F']],
    sort: [['length_of_stay', 'desc']]});
  await v.flush(); return 1; })()"""

CLICK = """(async () => { document.querySelector('#views button[data-view="%s"]').click();
  await new Promise((r) => setTimeout(r, 300));
  await document.querySelector('perspective-viewer').flush(); return 1; })()"""


class Pipe:
    def __init__(self, cmd):
        r1, self.w = os.pipe()          # we write, Chromium reads fd 3
        self.r, w2 = os.pipe()          # Chromium writes fd 4, we read

        def fds():
            os.dup2(r1, 3)
            os.dup2(w2, 4)
        self.proc = subprocess.Popen(cmd + ['--remote-debugging-pipe', 'about:blank'],
                                     preexec_fn=fds, pass_fds=(3, 4),
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(r1)
        os.close(w2)
        self.buf, self.n, self.events = b'', 0, []

    def send(self, method, params=None, session=None, timeout=30):
        self.n += 1
        msg = {'id': self.n, 'method': method, 'params': params or {}}
        if session:
            msg['sessionId'] = session
        os.write(self.w, json.dumps(msg).encode() + b'\0')
        end = time.time() + timeout
        while time.time() < end:
            m = self.recv(end - time.time())
            if m is not None and m.get('id') == self.n:
                if 'error' in m:
                    raise RuntimeError('%s: %s' % (method, m['error']))
                return m.get('result', {})
        raise TimeoutError(method)

    def recv(self, timeout):
        while b'\0' not in self.buf:
            r, _, _ = select.select([self.r], [], [], max(0, timeout))
            if not r:
                return None
            d = os.read(self.r, 1 << 20)
            if not d:
                raise EOFError('chromium closed the pipe')
            self.buf += d
        line, self.buf = self.buf.split(b'\0', 1)
        m = json.loads(line)
        if 'method' in m:
            self.events.append(m)
        return m

    def pump(self, secs):
        end = time.time() + secs
        while time.time() < end:
            self.recv(end - time.time())


def evaluate(p, s, expr, timeout=30):
    r = p.send('Runtime.evaluate', {'expression': expr, 'awaitPromise': True,
                                    'returnByValue': True}, s, timeout)
    return r.get('result', {}).get('value')


def main():
    url, shot, timeout = sys.argv[1], sys.argv[2], float(sys.argv[3])
    sep = sys.argv.index('--')
    unmount = sys.argv[4] if sep > 4 else None
    cmd = sys.argv[sep + 1:]
    p = Pipe(cmd)
    out = {'url': url}
    try:
        t = p.send('Target.createTarget', {'url': 'about:blank'})
        s = p.send('Target.attachToTarget', {'targetId': t['targetId'], 'flatten': True})['sessionId']
        for d in ('Runtime.enable', 'Log.enable', 'Page.enable', 'Network.enable'):
            p.send(d, session=s)
        p.send('Emulation.setDeviceMetricsOverride', {'width': 1280, 'height': 800,
               'deviceScaleFactor': 1, 'mobile': False}, s)
        t0 = time.time()
        p.send('Page.navigate', {'url': url}, s)
        state = None
        while time.time() - t0 < timeout:
            state = evaluate(p, s, 'document.body ? document.body.dataset.state : null')
            if state in ('rendered', 'error', 'empty'):
                break
            p.pump(0.2)
        out['wall_ms'] = round((time.time() - t0) * 1000)
        out['table'] = json.loads(evaluate(p, s, PROBE))
        png = p.send('Page.captureScreenshot', {'format': 'png'}, s)['data']
        open(shot, 'wb').write(base64.b64decode(png))
        if state == 'rendered':
            for view in ('counts', 'crosstab', 'histogram'):
                evaluate(p, s, CLICK % view, 60)
                p.pump(1.0)
                out[view] = json.loads(evaluate(p, s, PROBE))
            png = p.send('Page.captureScreenshot', {'format': 'png'}, s)['data']
            open(shot.replace('.png', '-histogram.png'), 'wb').write(base64.b64decode(png))
            evaluate(p, s, FILTER, 60)
            p.pump(1.0)
            out['filter_sort'] = json.loads(evaluate(p, s, PROBE))
            if unmount:
                subprocess.run(['sh', '-c', unmount], check=True)
                t1 = time.time()
                while time.time() - t1 < 20:
                    if evaluate(p, s, 'document.body.dataset.state') == 'unmounted':
                        break
                    p.pump(0.3)
                out['unmount_ms'] = round((time.time() - t1) * 1000)
                out['unmounted'] = json.loads(evaluate(p, s, PROBE))
    except Exception as e:
        out['exception'] = '%s: %s' % (type(e).__name__, e)
    ev = p.events
    out['requests'] = sorted({e['params']['request']['url'].split('?')[0][:80]
                              for e in ev if e['method'] == 'Network.requestWillBeSent'})
    out['failed'] = [e['params'].get('errorText') for e in ev
                     if e['method'] == 'Network.loadingFailed']
    out['console_errors'] = [
        ' '.join(str(a.get('value', a.get('description', ''))) for a in e['params']['args'])
        for e in ev if e['method'] == 'Runtime.consoleAPICalled'
        and e['params']['type'] in ('error', 'assert')] + [
        e['params']['entry']['text'] for e in ev if e['method'] == 'Log.entryAdded'
        and e['params']['entry']['level'] == 'error'] + [
        e['params']['exceptionDetails'].get('exception', {}).get('description', 'exception')
        for e in ev if e['method'] == 'Runtime.exceptionThrown']
    print(json.dumps(out))
    p.proc.terminate()
    try:
        p.proc.wait(5)
    except subprocess.TimeoutExpired:
        p.proc.kill()


if __name__ == '__main__':
    main()
