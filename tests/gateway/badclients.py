#!/usr/bin/env python3
"""badclients.py HOST PORT PASSWORD_FILE SCENARIO [N]: hostile RFB clients
for the gateway tests (stdlib + OpenSSL's DES through ctypes for VncAuth).

Scenarios (each bounded in count and time, loopback only):
  garbage        send random bytes instead of a handshake
  truncated      read the server's version, answer with half of one and
                 keep the socket open (prints "holding", holds until stdin
                 closes)
  hugecut        authenticate, then claim a 2 GiB ClientCutText
  floodconnect N open and close N connections as fast as possible
  noread         authenticate, ask for full updates for 3 s, never read
                 (holds until stdin closes)
  badauth N      N handshakes with a wrong password (PASSWORD_FILE holds
                 the wrong one); counts the refusals
  badmsg         authenticate, then send an unknown message type
  extclip        authenticate, announce the ExtendedClipboard
                 pseudo-encoding, and report every byte the server sends
                 (no update is requested, so any byte is cut text); then
                 ask for the server's clipboard (Request, Peek) and offer
                 one (Provide): prints the bytes in hex
  allmsgs        authenticate, then every client message type LibVNCServer
                 0.9.14 dispatches (0-11, 15, 250, 251), each well-formed
                 and malformed, and unknown types; after each a
                 FramebufferUpdateRequest round trip tells whether the
                 server answered or closed the connection (a closed one is
                 replaced by a new login).  Prints "case NAME: answered|
                 closed|timeout" per case, then a summary line.
  siege N        for N seconds at once: an idle connection (silent, or
                 with half a protocol version), re-opened as the server
                 closes it, and wrong passwords back to back (VncAuth;
                 PASSWORD_FILE holds the wrong one) on the address's
                 other slot
  siegetls N     the same against a VeNCrypt-only TLS front door: idle
                 connections, and wrong X509Plain logins as user "alice"
                 (the certificate is not checked: an attacker need not)
  hold N         only idle connections, 4 at once, for N seconds: no
                 password is ever sent, so nothing backs the address off
  stages         two connections at once, one silent and one that sends
                 half a protocol version: how long until the server
                 closes each (its per-stage deadline)
  stagestls      the same with a silent one and one that stalls in the
                 TLS handshake of a VeNCrypt front door (half a
                 ClientHello after X509Plain was agreed)
Prints one line of figures; exit 0 when the scenario ran as intended.
With CDSGATE_BAD_SOURCE=ADDR every connection comes from ADDR (e.g.
127.0.0.3: the whole of 127/8 is loopback), so the server counts the bad
client as an address of its own.
"""
import ctypes
import ctypes.util
import os
import socket
import ssl
import struct
import sys
import threading
import time
import zlib

HOST, PORT, PWFILE, SCEN = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
N = int(sys.argv[5]) if len(sys.argv) > 5 else 10000
SOURCE = os.environ.get("CDSGATE_BAD_SOURCE")


def connect(timeout):
    return socket.create_connection((HOST, PORT), timeout=timeout,
                                    source_address=(SOURCE, 0) if SOURCE else None)


def des_response(password: bytes, challenge: bytes) -> bytes:
    """VncAuth: DES-ECB of the challenge with the bit-reversed password."""
    lib = ctypes.CDLL(ctypes.util.find_library("crypto"))
    key = bytes(int(f"{b:08b}"[::-1], 2) for b in password[:8].ljust(8, b"\0"))
    sched = ctypes.create_string_buffer(128 * 8)
    lib.DES_set_key_unchecked(ctypes.c_char_p(key), sched)
    out = b""
    for i in (0, 8):
        o = ctypes.create_string_buffer(8)
        lib.DES_ecb_encrypt(ctypes.c_char_p(challenge[i:i + 8]), o, sched, 1)
        out += o.raw
    return out


def recvn(s, n):
    b = b""
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c:
            raise ConnectionError("closed after %d of %d bytes" % (len(b), n))
        b += c
    return b


class Refused(Exception):
    pass


def connect_auth():
    """Full RFB 3.8 handshake with VncAuth; returns the socket after
    ServerInit (non-websocket: the server sniffs for ~100 ms first)."""
    pw = open(PWFILE, "rb").read().split(b"\n")[0]
    s = connect(10)
    recvn(s, 12)
    s.sendall(b"RFB 003.008\n")
    n = recvn(s, 1)[0]
    if n == 0:
        raise Refused("no security types (refused)")
    types = recvn(s, n)
    if 2 not in types:
        raise RuntimeError("no VncAuth offered: %r" % types)
    s.sendall(b"\x02")
    s.sendall(des_response(pw, recvn(s, 16)))
    if struct.unpack(">I", recvn(s, 4))[0] != 0:
        raise Refused("auth refused")
    s.sendall(b"\x01")                      # ClientInit: shared
    w, h = struct.unpack(">HH", recvn(s, 4))
    recvn(s, 16)
    recvn(s, struct.unpack(">I", recvn(s, 4))[0])
    return s, w, h


def closed_by_server(s, seconds):
    """Does the server close the connection within `seconds`?  (A reset
    is a close with our bytes unread.)"""
    s.settimeout(seconds)
    try:
        while s.recv(65536):
            pass
        return True
    except socket.timeout:
        return False
    except ConnectionResetError:
        return True


def report_closed(name, s, t0, seconds=5):
    closed = closed_by_server(s, seconds)
    print("%s: server closed=%s in %.2f s" % (name, closed, time.monotonic() - t0))
    return 0 if closed else 1


def drain(s, seconds):
    """Every byte the server sends within `seconds`."""
    got = b""
    end = time.monotonic() + seconds
    s.settimeout(0.1)
    while time.monotonic() < end:
        try:
            c = s.recv(65536)
        except socket.timeout:
            continue
        if not c:
            break
        got += c
    return got


def extclip():
    """ExtendedClipboard: what does the server send a client that asks?"""
    s, w, h = connect_auth()
    # SetEncodings: raw, ExtendedClipboard (0xC0A1E5CE as a signed int)
    s.sendall(struct.pack(">BxHiI", 2, 2, 0, 0xC0A1E5CE))
    first = drain(s, 1.5)
    # Caps (text, request, peek, notify, provide; 1 MiB), Request, Peek
    caps = 0x1F000001
    s.sendall(struct.pack(">BxxxiII", 6, -8, caps, 1 << 20))
    s.sendall(struct.pack(">BxxxiI", 6, -4, (1 << 25) | 1))
    s.sendall(struct.pack(">BxxxiI", 6, -4, (1 << 26) | 1))
    # One zlib stream per connection, sync-flushed, never ended (as
    # TigerVNC does: LibVNCServer treats Z_STREAM_END as an error).
    text = b"EXTCLIP-SECRET"
    zc = zlib.compressobj()
    z = zc.compress(struct.pack(">I", len(text) + 1) + text + b"\0")
    z += zc.flush(zlib.Z_SYNC_FLUSH)
    s.sendall(struct.pack(">BxxxiI", 6, -(4 + len(z)), (1 << 28) | 1) + z)
    later = drain(s, 1.5)
    print("extclip: on SetEncodings %d bytes: %s" % (len(first), first.hex()))
    print("extclip: after Request/Peek/Provide %d bytes: %s" % (len(later), later.hex()))
    return 0


# ---- allmsgs: every client message type ----------------------------------

PF32 = struct.pack(">BBBBHHHBBBxxx", 32, 24, 0, 1, 255, 255, 255, 16, 8, 0)


def pixfmt(bpp, depth, true, rmax, shifts):
    return struct.pack(">BBBBHHHBBBxxx", bpp, depth, 0, true, rmax, rmax,
                       rmax, *shifts)


def encodings(*encs):
    return struct.pack(">BxH", 2, len(encs)) + b"".join(
        struct.pack(">i", e) for e in encs)


def screens(n, w=1280, h=800):
    return b"".join(struct.pack(">IHHHHI", i, 0, 0, w, h, 0) for i in range(n))


ENCS = encodings(0, -239, -240, -232, -308, -223, -224)
# (name, bytes): the well-formed one first, then malformed ones.
MSGS = [
    ("SetPixelFormat", b"\x00\x00\x00\x00" + PF32),
    ("SetPixelFormat-colourmap", b"\x00\x00\x00\x00" + pixfmt(8, 8, 0, 0, (0, 0, 0))),
    ("SetPixelFormat-zero-max-wild-shifts",
     b"\x00\x00\x00\x00" + pixfmt(32, 24, 1, 0, (200, 250, 255))),
    ("SetPixelFormat-back", b"\x00\x00\x00\x00" + PF32),
    ("SetPixelFormat-bpp0", b"\x00\x00\x00\x00" + pixfmt(0, 0, 1, 255, (16, 8, 0))),
    ("SetPixelFormat-bpp24", b"\x00\x00\x00\x00" + pixfmt(24, 24, 1, 255, (16, 8, 0))),
    ("FixColourMapEntries", struct.pack(">BxHH", 1, 0, 0)),
    ("FixColourMapEntries-65535", struct.pack(">BxHH", 1, 0, 65535)),
    ("SetEncodings", ENCS),
    ("SetEncodings-unknown", encodings(*range(-1000, -900, 7), 0x7fffffff)),
    ("SetEncodings-announces-more", struct.pack(">BxH", 2, 65535) + b"\0" * 8),
    ("SetEncodings-back", ENCS),
    ("FramebufferUpdateRequest", struct.pack(">BBHHHH", 3, 1, 0, 0, 16, 16)),
    ("FramebufferUpdateRequest-outside", struct.pack(">BBHHHH", 3, 0, 65535, 65535, 65535, 65535)),
    ("KeyEvent", struct.pack(">BBxxI", 4, 1, 0x61) + struct.pack(">BBxxI", 4, 0, 0x61)),
    ("KeyEvent-unknown-keysym", struct.pack(">BBxxI", 4, 1, 0xFFFFFFFF)),
    ("KeyEvent-release-never-pressed", struct.pack(">BBxxI", 4, 0, 0xFFE3)),
    ("PointerEvent", struct.pack(">BBHH", 5, 0, 640, 480)),
    ("PointerEvent-all-buttons-outside", struct.pack(">BBHH", 5, 0xFF, 65535, 65535)
     + struct.pack(">BBHH", 5, 0, 640, 480)),
    ("ClientCutText", struct.pack(">BxxxI", 6, 5) + b"hello"),
    ("ClientCutText-negative-length", struct.pack(">BxxxI", 6, 0xFFFFFFF0) + b"\0" * 16),
    ("FileTransfer", struct.pack(">BBBxII", 7, 14, 1, 0, 0)),
    ("FileTransfer-huge", struct.pack(">BBBxII", 7, 4, 0, 0xFFFFFFFF, 0xFFFFFFFF)),
    ("SetScale", struct.pack(">BBxx", 8, 2)),
    ("SetScale-255", struct.pack(">BBxx", 8, 255)),
    ("SetScale-back", struct.pack(">BBxx", 8, 1)),
    ("SetScale-0", struct.pack(">BBxx", 8, 0)),
    ("SetServerInput", struct.pack(">BBxx", 9, 1)),
    ("SetServerInput-255", struct.pack(">BBxx", 9, 255)),
    ("SetSingleWindow", struct.pack(">BxHH", 10, 100, 100)),
    ("SetSingleWindow-outside", struct.pack(">BxHH", 10, 65535, 65535)),
    ("TextChat", struct.pack(">BxxxI", 11, 5) + b"hello"),
    ("TextChat-open", struct.pack(">BxxxI", 11, 0xFFFFFFFF)),
    ("TextChat-huge", struct.pack(">BxxxI", 11, 0x7FFFFFFF)),
    ("PalmVNCSetScaleFactor", struct.pack(">BBxx", 15, 1)),
    ("PalmVNCSetScaleFactor-0", struct.pack(">BBxx", 15, 0)),
    ("Xvp", struct.pack(">BxBB", 250, 1, 2)),
    ("Xvp-version-9", struct.pack(">BxBB", 250, 9, 255)),
    ("SetDesktopSize", struct.pack(">BxHHBx", 251, 1024, 768, 1) + screens(1, 1024, 768)),
    ("SetDesktopSize-zero-screens", struct.pack(">BxHHBx", 251, 0, 0, 0)),
    ("SetDesktopSize-255-screens", struct.pack(">BxHHBx", 251, 65535, 65535, 255)
     + screens(255, 65535, 65535)),
    ("SetDesktopSize-truncated", struct.pack(">BxHHBx", 251, 800, 600, 4) + screens(1)),
] + [("unknown-%d" % t, bytes([t]) + bytes(15))
     for t in (12, 13, 14, 16, 100, 127, 128, 200, 249, 252, 253, 254, 255)]

RAW, RICH, XCUR, POS, EXTDS, NEWFB, LAST = 0, -239, -240, -232, -308, -223, -224


class Conn:
    """An authenticated connection that can tell answered from closed."""

    def __init__(self):
        # The login bucket refills at 0.5/s; the last connection's
        # role is free once the server has seen it close.
        for attempt in range(80):
            try:
                self.s, self.w, self.h = connect_auth()
                break
            except Refused:
                time.sleep(2)
            except (ConnectionError, OSError):
                time.sleep(0.5)
        else:
            raise RuntimeError("no login in 100 s")
        self.bpp = 32
        self.s.sendall(ENCS)

    def rd(self, n):
        return recvn(self.s, n)

    def message(self):
        """Read one server message; the pixel rectangles of a
        FramebufferUpdate, else []; follows the screen's size."""
        t = self.rd(1)[0]
        rects = []
        if t == 0:
            n = struct.unpack(">xH", self.rd(3))[0]
            for _ in range(n):
                x, y, w, h, e = struct.unpack(">HHHHi", self.rd(12))
                if e == LAST:
                    break
                if e == RAW:
                    self.rd(w * h * self.bpp // 8)
                    rects.append((x, y, w, h))
                elif e == RICH:
                    self.rd(w * h * self.bpp // 8 + (w + 7) // 8 * h)
                elif e == XCUR and w * h:
                    self.rd(6 + 2 * ((w + 7) // 8) * h)
                elif e == EXTDS:
                    n2 = self.rd(4)[0]
                    self.rd(16 * n2)
                    self.w, self.h = w, h
                elif e == NEWFB:
                    self.w, self.h = w, h
                elif e not in (XCUR, POS):
                    raise RuntimeError("unexpected encoding %d" % e)
        elif t == 1:
            first, n = struct.unpack(">xHH", self.rd(5))
            self.rd(6 * n)
        elif t == 2:
            pass
        elif t == 3:
            self.rd(3)
            n = struct.unpack(">i", self.rd(4))[0]
            self.rd(abs(n))
        elif t == 4:                            # ResizeFrameBuffer (scale)
            self.w, self.h = struct.unpack(">xHH", self.rd(5))
        elif t == 15:                           # PalmVNC's
            self.w, self.h = struct.unpack(">xxxxxHHxx", self.rd(11))
        elif t == 250:
            self.rd(3)
        else:
            raise RuntimeError("unexpected server message type %d" % t)
        return rects

    def roundtrip(self, tag, seconds=6):
        """answered / closed / timeout: a 1x1 update request at column
        `tag` must come back (an update already on its way when the server
        closed does not count)."""
        self.s.settimeout(seconds)
        try:
            x = tag % max(self.w, 1)
            self.s.sendall(struct.pack(">BBHHHH", 3, 0, x, 0, 1, 1))
            end = time.monotonic() + seconds
            while time.monotonic() < end:
                for rx, ry, rw, rh in self.message():
                    if rx <= x < rx + rw and ry <= 0 < ry + rh:
                        return "answered"
            return "timeout"
        except socket.timeout:
            return "timeout"
        except (ConnectionError, OSError):
            return "closed"


def allmsgs():
    c = Conn()
    results = {}
    for i, (name, data) in enumerate(MSGS):
        try:
            c.s.sendall(data)
        except OSError:
            pass
        if name.startswith("SetPixelFormat"):
            c.bpp = data[4] if data[4] in (8, 16, 24, 32) else c.bpp
            if data[7] == 0:                # a colour map: 8 bits
                c.bpp = 8
        # (a new scale: the new size comes with the answer, so column 0)
        r = c.roundtrip(0 if "Scale" in name else i + 1)
        results[name] = r
        print("case %s: %s" % (name, r), flush=True)
        if r != "answered":
            c.s.close()
            c = Conn()
    c.s.close()
    counts = {k: sum(1 for v in results.values() if v == k)
              for k in ("answered", "closed", "timeout")}
    print("allmsgs: %d cases, %d answered, %d closed, %d timeout, %.1f s" % (
        len(results), counts["answered"], counts["closed"], counts["timeout"],
        time.monotonic() - T0))
    return 0 if counts["timeout"] == 0 else 1


def hold():
    print("holding", flush=True)
    sys.stdin.read()


def idle_loop(kind, end, st):
    """Hold one connection (silent, or half a version) until the server
    closes it; again until `end`, switching kinds after each one held (so
    both kinds are held whichever thread wins its address's slots).
    Records how long each was held."""
    other = {"silent": "half", "half": "silent"}
    while time.monotonic() < end:
        t0 = time.monotonic()
        greeting = b""
        try:
            s = connect(2)
            s.settimeout(max(0.1, end - time.monotonic()))
            greeting = s.recv(12)
            if kind == "half" and greeting:
                s.sendall(b"RFB 003.")
            try:
                while s.recv(4096):
                    pass
            except ConnectionResetError:
                pass        # closed with our bytes unread: a reset
        except socket.timeout:
            continue        # still held at the end: not a close
        except OSError:
            greeting = b""
        held = time.monotonic() - t0
        with st["lock"]:
            if greeting:
                st["held_" + kind].append(held)
            else:
                st["refused"] += 1
        if greeting:
            kind = other[kind]
        else:
            time.sleep(0.02)


def offers(s, sectype):
    """RFB 3.8 versions exchanged: does the server offer `sectype`?"""
    recvn(s, 12)
    s.sendall(b"RFB 003.008\n")
    n = recvn(s, 1)[0]
    return n != 0 and sectype in recvn(s, n)


def vncauth_once(pw):
    """One wrong VncAuth login: 'checked' (a failure result), 'refused'
    (closed before), or 'IN' (it got in: must never happen)."""
    s = connect(5)
    try:
        if not offers(s, 2):
            return "refused"
        s.sendall(b"\x02")
        s.sendall(des_response(pw, recvn(s, 16)))
        return "checked" if struct.unpack(">I", recvn(s, 4))[0] != 0 else "IN"
    except (ConnectionError, OSError):
        return "refused"
    finally:
        s.close()


def vencrypt_once(pw):
    """One wrong VeNCrypt X509Plain login as alice."""
    s = connect(5)
    try:
        if not offers(s, 19):
            return "refused"
        s.sendall(b"\x13")
        recvn(s, 2)
        s.sendall(b"\0\2")
        recvn(s, 1)
        recvn(s, 4 * recvn(s, 1)[0])         # the subtypes offered
        s.sendall(struct.pack(">I", 262))
        if recvn(s, 1) != b"\1":
            return "refused"
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        s = ctx.wrap_socket(s)
        s.sendall(struct.pack(">II", 5, len(pw)) + b"alice" + pw)
        return "checked" if struct.unpack(">I", recvn(s, 4))[0] != 0 else "IN"
    except (ConnectionError, OSError, ssl.SSLError):
        return "refused"
    finally:
        s.close()


def stall(kind, out):
    """Stall in one handshake stage; out[kind] = seconds from the start of
    that stage until the server closed the connection."""
    s = connect(5)
    s.settimeout(60)
    try:
        if kind == "tls":
            if not offers(s, 19):
                return
            s.sendall(b"\x13")
            recvn(s, 2)
            s.sendall(b"\0\2")
            recvn(s, 1)
            recvn(s, 4 * recvn(s, 1)[0])
            s.sendall(struct.pack(">I", 262))
            recvn(s, 1)
        else:
            recvn(s, 12)
        t0 = time.monotonic()
        s.sendall({"silent": b"", "half": b"RFB 003.",
                   "tls": b"\x16\x03\x01\x02\x00\x01"}[kind])
        closed_by_server(s, 60)
        out[kind] = time.monotonic() - t0
    except OSError:
        pass


def stages(kinds):
    out = {}
    th = [threading.Thread(target=stall, args=(k, out)) for k in kinds]
    for t in th:
        t.start()
    for t in th:
        t.join()
    print("stages: " + ", ".join("%s closed after %.1f s" % (k, out.get(k, -1))
                                 for k in kinds))
    return 0 if len(out) == len(kinds) else 1


def siege(seconds, once, nidle):
    """nidle idle connections and (unless once is None) wrong passwords
    together for `seconds`."""
    pw = open(PWFILE, "rb").read().split(b"\n")[0]
    end = time.monotonic() + seconds
    st = {"lock": threading.Lock(), "held_silent": [], "held_half": [],
          "refused": 0}
    th = [threading.Thread(target=idle_loop, args=(k, end, st))
          for k in ("silent", "half", "silent", "half")[:nidle]]
    for t in th:
        t.start()
    logins = {"checked": 0, "refused": 0, "IN": 0}
    while once is not None and time.monotonic() < end:
        r = once(pw)
        logins[r] += 1
        if r == "refused":
            time.sleep(0.01)
    for t in th:
        t.join()
    hs, hh = st["held_silent"], st["held_half"]
    print("siege: %d idle connections held (silent max %.1f s, half a version "
          "max %.1f s), %d refused at once; logins: %d checked, %d refused, "
          "%d got in" % (len(hs) + len(hh), max(hs or [0]), max(hh or [0]),
                         st["refused"], logins["checked"], logins["refused"],
                         logins["IN"]))
    return 0 if logins["IN"] == 0 else 1


T0 = time.monotonic()


def main():
    t0 = T0
    if SCEN == "garbage":
        s = connect(10)
        s.sendall(os.urandom(4096))
        return report_closed("garbage", s, t0)
    if SCEN == "truncated":
        s = connect(10)
        recvn(s, 12)                        # after the websocket sniff
        s.sendall(b"RFB 003.")
        hold()
        closed = closed_by_server(s, 0.5)
        print("truncated: server closed=%s after %.1f s" % (closed, time.monotonic() - t0))
        return 0
    if SCEN == "hugecut":
        s, w, h = connect_auth()
        s.sendall(struct.pack(">BxxxI", 6, 0x7FFFFFFF) + b"A" * 4096)
        return report_closed("hugecut", s, t0)
    if SCEN == "floodconnect":
        ok = refused = 0
        deadline = t0 + 60
        for _ in range(N):
            if time.monotonic() > deadline:
                break
            try:
                s = connect(2)
                s.close()
                ok += 1
            except OSError:
                refused += 1
        print("floodconnect: %d connections, %d refused, %.2f s" % (ok, refused, time.monotonic() - t0))
        return 0
    if SCEN == "noread":
        s, w, h = connect_auth()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        req = struct.pack(">BBHHHH", 3, 0, 0, 0, w, h)
        s.setblocking(False)
        sent = 0
        end = t0 + 3
        while time.monotonic() < end:
            try:
                s.send(req)
                sent += 1
            except BlockingIOError:
                time.sleep(0.01)
        hold()
        return 0
    if SCEN == "badauth":
        refused = 0
        for _ in range(N):
            try:
                s, w, h = connect_auth()
                s.close()
            except (Refused, ConnectionError, OSError):
                refused += 1
        print("badauth: %d of %d refused in %.2f s" % (refused, N, time.monotonic() - t0))
        return 0 if refused == N else 1
    if SCEN == "badmsg":
        s, w, h = connect_auth()
        s.sendall(bytes([0xEE]) + os.urandom(63))
        return report_closed("badmsg", s, t0)
    if SCEN == "extclip":
        return extclip()
    if SCEN == "allmsgs":
        return allmsgs()
    if SCEN == "stages":
        return stages(("silent", "half"))
    if SCEN == "stagestls":
        return stages(("silent", "tls"))
    if SCEN == "hold":
        return siege(N, None, 4)
    if SCEN == "siege":
        return siege(N, vncauth_once, 1)
    if SCEN == "siegetls":
        return siege(N, vencrypt_once, 1)
    print("unknown scenario", SCEN, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
