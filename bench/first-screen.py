#!/usr/bin/env python3
"""bench/first-screen.py N ANCHOR_MARK ANCHOR_DIR ANCHOR_ARGV... -- MARK DIR PADDOCK

How long a diff's first screen takes after the key, on a 120x40
pseudo-terminal, median of N runs taken in turns: the anchor (tig: Enter
on the top commit of its main view; ANCHOR_MARK "-": a command timed from
its start to its end) and the dashboard (D on its task at review).  A
MARK is text on the last row of that program's first screen.  Prints a
"measure:" line (goal 1.00: no slower than the anchor)."""
import fcntl, os, pty, re, select, signal, statistics, struct, subprocess, sys, termios, time

ANSI = re.compile(rb"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07]*\x07|[()][0-9A-Za-z]|[=>78])")


def screen_time(argv, cwd, ready, key, mark):
    """Seconds from the key until mark shows."""
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(cwd)
        os.environ.update(TERM="xterm", COLUMNS="120", LINES="40")
        os.execv(argv[0], argv)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    seen = b""

    def read_until(text, limit):
        nonlocal seen
        end = time.monotonic() + limit
        while time.monotonic() < end:
            r, _, _ = select.select([fd], [], [], 0.05)
            if r:
                try:
                    seen += os.read(fd, 1 << 16)
                except OSError:
                    return False
                if text.encode() in ANSI.sub(b"", seen):
                    return True
        return False

    try:
        if not read_until(ready, 20):
            raise SystemExit("%s never showed %r" % (argv[0], ready))
        # Settled: nothing more to draw before the key.
        while select.select([fd], [], [], 0.3)[0]:
            os.read(fd, 1 << 16)
        seen = b""
        os.write(fd, key)
        t0 = time.monotonic()
        if not read_until(mark, 60):
            raise SystemExit("%s never showed %r" % (argv[0], mark))
        return time.monotonic() - t0
    finally:
        os.kill(pid, signal.SIGTERM)
        try:
            while select.select([fd], [], [], 2)[0] and os.read(fd, 1 << 16):
                pass
        except OSError:
            pass
        os.waitpid(pid, 0)
        os.close(fd)


def main():
    n = int(sys.argv[1])
    cut = sys.argv.index("--")
    amark, adir, aargv = sys.argv[2], sys.argv[3], sys.argv[4:cut]
    pmark, pdir, pargv = sys.argv[cut + 1], sys.argv[cut + 2], sys.argv[cut + 3:]
    a, p = [], []
    for _ in range(n):
        if amark == "-":
            t = time.monotonic()
            subprocess.run(aargv, cwd=adir, check=True)
            a.append(time.monotonic() - t)
        else:
            a.append(screen_time(aargv, adir, "Change a third", b"\r", amark))
        p.append(screen_time(pargv, pdir, "at review", b"D", pmark))
    x, y = statistics.median(a), statistics.median(p)
    what = "tig" if amark != "-" else "git diff | head -n 50"
    print("measure: the diff's first screen after the key (vs %s): anchor %.3f s, paddock %.3f s, "
          "ratio %.2f, goal 1.00, holds %s" % (what, x, y, y / x, "yes" if y <= x else "no"))
    print("  runs: anchor %s; paddock %s" % (" ".join("%.3f" % t for t in a),
                                             " ".join("%.3f" % t for t in p)))


main()
