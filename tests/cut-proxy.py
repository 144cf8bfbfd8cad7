#!/usr/bin/env python3
"""cut-proxy: a TCP proxy on 127.0.0.1 that a test cuts on command.

    cut-proxy.py --port PORT --to PORT --log FILE [--pid-file FILE]

Relays each connection to 127.0.0.1:--to, both ways.  SIGUSR1 cuts every
connection open now (both sides closed: each end reads the end of its
stream, as when a proxy or a node between them goes).  SIGUSR2 takes the
proxy down (every connection cut, each new one closed at once) or, sent
again, up.  The log gets one line per event: "open N", "cut N", "down",
"up", "refused N" (N counts connections from 1), flushed at once, so a
test reads what happened from the file.  Exits at SIGTERM.
"""
import argparse
import os
import selectors
import signal
import socket
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--to", type=int, required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--pid-file")
    a = ap.parse_args()
    log = open(a.log, "a", buffering=1)
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", a.port))
    ls.listen(64)
    ls.setblocking(False)
    sel = selectors.DefaultSelector()
    sel.register(ls, selectors.EVENT_READ, None)
    # A self-pipe: signals are handled in the loop, not in the handler.
    rfd, wfd = os.pipe()
    os.set_blocking(wfd, False)
    signal.set_wakeup_fd(wfd)
    pending = []
    for s in (signal.SIGUSR1, signal.SIGUSR2, signal.SIGTERM):
        signal.signal(s, lambda n, f: pending.append(n))
    sel.register(rfd, selectors.EVENT_READ, "signal")
    pairs = {}   # socket -> (its peer, connection number)
    count = 0
    down = False
    if a.pid_file:
        with open(a.pid_file + ".tmp", "w") as f:
            f.write("%d\n" % os.getpid())
        os.rename(a.pid_file + ".tmp", a.pid_file)

    def close_pair(s):
        peer, n = pairs.pop(s)
        pairs.pop(peer, None)
        for x in (s, peer):
            try:
                sel.unregister(x)
            except (KeyError, ValueError):
                pass
            x.close()
        return n

    def cut_all():
        seen = set()
        for s in list(pairs):
            if s in pairs:
                n = close_pair(s)
                if n not in seen:
                    seen.add(n)
                    log.write("cut %d\n" % n)

    while True:
        for key, _ in sel.select():
            if key.data == "signal":
                os.read(rfd, 64)
                while pending:
                    sig = pending.pop(0)
                    if sig == signal.SIGTERM:
                        cut_all()
                        return 0
                    if sig == signal.SIGUSR1:
                        cut_all()
                    else:
                        down = not down
                        if down:
                            cut_all()
                        log.write("down\n" if down else "up\n")
                continue
            if key.data is None:
                try:
                    c, _ = ls.accept()
                except OSError:
                    continue
                count += 1
                if down:
                    c.close()
                    log.write("refused %d\n" % count)
                    continue
                try:
                    up = socket.create_connection(("127.0.0.1", a.to), timeout=5)
                except OSError:
                    c.close()
                    log.write("refused %d\n" % count)
                    continue
                for x in (c, up):
                    x.setblocking(False)
                    x.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                pairs[c] = (up, count)
                pairs[up] = (c, count)
                sel.register(c, selectors.EVENT_READ, "conn")
                sel.register(up, selectors.EVENT_READ, "conn")
                log.write("open %d\n" % count)
                continue
            s = key.fileobj
            if s not in pairs:
                continue
            peer = pairs[s][0]
            try:
                data = s.recv(65536)
            except OSError:
                data = b""
            if not data:
                close_pair(s)
                continue
            try:
                # Blocking for the write: the relay holds no buffer of
                # its own, and a slow reader slows the writer.
                peer.settimeout(10)
                peer.sendall(data)
                peer.setblocking(False)
            except OSError:
                close_pair(s)


if __name__ == "__main__":
    sys.exit(main())
