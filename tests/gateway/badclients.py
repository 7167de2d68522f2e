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
Prints one line of figures; exit 0 when the scenario ran as intended.
"""
import ctypes
import ctypes.util
import os
import socket
import struct
import sys
import time
import zlib

HOST, PORT, PWFILE, SCEN = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
N = int(sys.argv[5]) if len(sys.argv) > 5 else 10000


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
    s = socket.create_connection((HOST, PORT), timeout=10)
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


def hold():
    print("holding", flush=True)
    sys.stdin.read()


def main():
    t0 = time.monotonic()
    if SCEN == "garbage":
        s = socket.create_connection((HOST, PORT), timeout=10)
        s.sendall(os.urandom(4096))
        return report_closed("garbage", s, t0)
    if SCEN == "truncated":
        s = socket.create_connection((HOST, PORT), timeout=10)
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
                s = socket.create_connection((HOST, PORT), timeout=2)
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
    print("unknown scenario", SCEN, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
