#!/usr/bin/python3
"""kube-pod-probe: what tests/kube-kubelet.test runs as a pod's runner
(the init container copies it to /paddock/runner, as it copies
paddock-runner).  It records what it sees from inside the pod, dials the
front door (PADDOCK_FRONT_DOOR, with the contract's preamble, kind
runner) and sends the record there as one JSON object, then:
PROBE_MODE=exit (default) exits with PROBE_EXIT; PROBE_MODE=sleep waits,
and on SIGTERM dials the front door again (kind fault, message
"SIGTERM") and exits 0; PROBE_MODE=stubborn ignores SIGTERM;
PROBE_MODE=alloc starts a child that sleeps, then allocates (and
touches) PROBE_MIB MiB, printing "allocated" should it survive;
PROBE_MODE=fill writes PROBE_MIB MiB into each of /tmp and /work, then
sleeps.

The record: uid, gid, groups, the environment, the mounts (from
/proc/self/mountinfo, with each tmpfs's size), whether / and /usr take
a write, the token file (content, mode, owner), the network interfaces,
and for each PADDOCK_PROBE target whether a TCP connect to it succeeded."""
import json
import os
import signal
import socket
import stat
import sys
import time


def dial(kind, msg=None):
    host, _, port = os.environ["PADDOCK_FRONT_DOOR"].rpartition(":")
    with open(os.environ["PADDOCK_TOKEN_FILE"]) as f:
        tok = f.read().strip()
    s = socket.create_connection((host.strip("[]"), int(port)), timeout=10)
    pre = "PADDOCK-DOOR 1 %s %s 0\n%s\n" % (kind, os.environ.get("PADDOCK_POD", "-"), tok)
    if msg is not None:
        pre += msg + "\n"
    s.sendall(pre.encode())
    return s


def writable(path):
    try:
        with open(os.path.join(path, ".probe"), "w"):
            pass
        os.unlink(os.path.join(path, ".probe"))
        return True
    except OSError as e:
        return e.strerror


def environ():
    """The environment this program was started with (Python itself adds
    LC_CTYPE to os.environ)."""
    with open("/proc/self/environ", "rb") as f:
        return dict(kv.decode().split("=", 1) for kv in f.read().split(b"\0") if kv)


def record():
    r = {"uid": os.getuid(), "euid": os.geteuid(), "gid": os.getgid(),
         "groups": os.getgroups(), "env": environ(), "cwd": os.getcwd()}
    mounts = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            parts = line.split()
            sep = parts.index("-")
            m = {"path": parts[4], "opts": parts[5].split(","), "type": parts[sep + 1]}
            if m["type"] == "tmpfs":
                st = os.statvfs(m["path"])
                m["size"] = st.f_blocks * st.f_frsize
            mounts.append(m)
    r["mounts"] = mounts
    r["write"] = {p: writable(p) for p in ("/", "/usr", "/etc", "/work", "/out", "/home/agent",
                                            "/tmp", "/paddock", "/paddock/token")}
    tf = os.environ.get("PADDOCK_TOKEN_FILE", "")
    try:
        st = os.stat(tf)
        with open(tf) as f:
            r["token"] = {"content": f.read(), "mode": oct(stat.S_IMODE(st.st_mode)),
                          "uid": st.st_uid, "gid": st.st_gid}
    except OSError as e:
        r["token"] = {"error": e.strerror}
    with open("/proc/net/dev") as f:
        r["interfaces"] = [line.split(":")[0].strip() for line in f.readlines()[2:]]
    reach = {}
    for t in filter(None, os.environ.get("PADDOCK_PROBE", "").split(",")):
        host, _, port = t.rpartition(":")
        try:
            socket.create_connection((host, int(port)), timeout=1).close()
            reach[t] = "connected"
        except OSError as e:
            reach[t] = e.strerror or str(e)
    r["reach"] = reach
    return r


def main():
    mode = os.environ.get("PROBE_MODE", "exit")
    if mode == "stubborn":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    elif mode == "sleep":
        def on_term(sig, frame):
            dial("fault", "SIGTERM").close()
            sys.exit(0)
        signal.signal(signal.SIGTERM, on_term)
    s = dial("runner")
    s.sendall(json.dumps(record()).encode() + b"\n")
    s.close()
    print("kube-pod-probe: reported to the front door", file=sys.stderr, flush=True)
    mib = int(os.environ.get("PROBE_MIB", "0"))
    if mode == "alloc":
        if os.fork() == 0:
            while True:
                time.sleep(1)
        x = b"x" * (mib << 20)
        print("kube-pod-probe: allocated %d" % len(x), file=sys.stderr, flush=True)
    if mode == "fill":
        for d in ("/tmp", "/work"):
            with open(d + "/fill", "wb") as f:
                for _ in range(mib):
                    f.write(b"f" * (1 << 20))
        print("kube-pod-probe: filled", file=sys.stderr, flush=True)
    if mode in ("sleep", "stubborn", "alloc", "fill"):
        while True:
            time.sleep(1)
    return int(os.environ.get("PROBE_EXIT", "0"))


if __name__ == "__main__":
    sys.exit(main())
