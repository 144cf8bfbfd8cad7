#!/usr/bin/env python3
"""bench/kube-mem.py SERVE_PID N MODE [OUT]: the host memory of the N
tasks a `paddock serve` runs (for bench/kube.sh), PSS from
/proc/PID/smaps_rollup, the median of three samples, in MiB per task.
MODE bwrap: as bench/memory.sh counts a bwrap task (its supervisor, its
gateway, its paddock-runner and its bwrap; it waits until every task's
agent, `sleep`, runs under the runner).  MODE kube: the supervisor and the
gateway of each task (the pods' processes are the fake kubelet's, not
serve's: not counted).  MODE serve: serve's own PSS alone.  Prints one
line of `key=value` (MiB) for the shell to read: ROLE (PSS) and anon_ROLE
(Pss_Anon, its anonymous part: what the process itself allocated, which
does not move between processes as the paddock binary's shared pages
do); needs root for /proc of
other users' processes."""
import os
import statistics
import sys
import time

serve, n, mode = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]


def read(pid, name):
    try:
        with open("/proc/%d/%s" % (pid, name), "rb") as f:
            return f.read()
    except OSError:
        return b""


def procs():
    """pid -> (ppid, argv)"""
    out = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            stat = read(int(d), "stat")
            if stat:
                out[int(d)] = (int(stat.rsplit(b")", 1)[1].split()[1]),
                               read(int(d), "cmdline").split(b"\0")[:-1])
    return out


def kib(pid, field=b"Pss"):
    for line in read(pid, "smaps_rollup").splitlines():
        if line.startswith(field + b":"):
            return int(line.split()[1])
    return 0


def children(ps, pid):
    return [c for c, (pp, _) in ps.items() if pp == pid]


def descendants(ps, pid):
    out, todo = [], children(ps, pid)
    while todo:
        c = todo.pop()
        out.append(c)
        todo += children(ps, c)
    return out


def classify(ps):
    """[{role: [pids]}], one per task supervisor of serve."""
    tasks = []
    for sup in children(ps, serve):
        argv = ps[sup][1]
        if argv[1:3] != [b"supervise", b"task"]:
            continue
        roles = {"supervisor": [sup], "gateway": [], "bwrap": [], "runner": [],
                 "agent": [], "other": []}
        for c in descendants(ps, sup):
            a = ps[c][1]
            base = os.path.basename(a[0]) if a else b""
            parent = ps[c][0]
            if parent == sup and a == argv:
                roles["gateway"].append(c)
            elif base == b"bwrap":
                roles["bwrap"].append(c)
            elif base in (b"runner", b"paddock-runner"):
                roles["runner"].append(c)
            elif parent in roles["runner"] or parent in roles["agent"]:
                roles["agent"].append(c)
            else:
                roles["other"].append(c)
        tasks.append(roles)
    return tasks


if mode == "bwrap":
    deadline = time.monotonic() + 120
    while True:
        ps = procs()
        running = [t for t in classify(ps) if t["runner"] and t["gateway"]
                   and any(ps[a][1][:1] == [b"sleep"] for a in t["agent"])]
        if len(running) == n:
            break
        if time.monotonic() > deadline:
            raise SystemExit("kube-mem: %d of %d bwrap tasks had their agent running after 120 s"
                             % (len(running), n))
        time.sleep(0.1)
    time.sleep(0.5)
roles = {"bwrap": ("supervisor", "gateway", "runner", "bwrap", "other"),
         "kube": ("supervisor", "gateway", "other"), "serve": ()}[mode]
samples = []
for _ in range(3):
    ps = procs()
    row = {"serve": kib(serve) / 1024, "anon_serve": kib(serve, b"Pss_Anon") / 1024}
    if roles:
        tasks = classify(ps)
        if len(tasks) != n:
            raise SystemExit("kube-mem: %d task supervisors under serve, not %d" % (len(tasks), n))
        for r in roles:
            row[r] = sum(kib(p) for t in tasks for p in t[r]) / n / 1024
            row["anon_" + r] = sum(kib(p, b"Pss_Anon") for t in tasks for p in t[r]) / n / 1024
    samples.append(row)
    time.sleep(0.3)
m = {k: statistics.median(s[k] for s in samples) for k in samples[0]}
print(" ".join("%s=%.2f" % kv for kv in sorted(m.items())))
