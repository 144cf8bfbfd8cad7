#!/bin/sh
# bench/memory.sh [BUILD_DIR]: host memory per running task (issue 34:
# stated, not a goal).  N tasks (4) run at once under `serve` with an
# agent that sleeps, on a repo of tig's shape (or the clone REPO_small
# names); once every agent runs, the memory of each task's processes is
# read from /proc (three samples, the median): its
# supervisor (`paddock supervise task ID`), its gateway (the supervisor's
# forked child, same command line), its runner (paddock-runner, PID 1 of
# the sandbox) and its bwrap.  PSS, from /proc/PID/smaps_rollup: a page
# shared by several processes (the supervisor and the gateway it forked,
# the tasks' supervisors among themselves) counts a share in each, so
# the figures add up to what the tasks cost together; RSS, which counts
# each shared page whole in every process, is printed beside it.  The
# agent's own processes and serve (one for all tasks) are printed apart.
# Needs root (a sandbox, and /proc of processes of other users).
. "$(dirname "$0")/lib.sh"
N=${N:-4}
export PADDOCK_HOME="$T/data"
bench_repo_shaped small "${SMALL_FILES:-200}" "${SMALL_COMMITS:-2500}" "${SMALL_TAGS:-830}"
cat >"$T/agent.sh" <<'SH'
date +%s%N > touched.txt
exec sleep 30
SH
cat >"$PADDOCK_CONFIG" <<CONF
[paddock]
	workers = $N
[repo "small"]
	url = $T/small.git
	branch = $(bench_branch small)
	test = true
[agent "sleep"]
	command = /bin/sh $T/agent.sh
CONF
# The template is built by a first task, not measured.
printf '[agent "touch"]\n\tcommand = /bin/true\n' >>"$PADDOCK_CONFIG"
"$P" add --repo small --agent touch "warm up" >/dev/null
"$P" serve --until-idle >/dev/null
ids=""
for _ in $(seq "$N"); do ids="$ids $("$P" add --repo small --agent sleep "sleep")"; done
"$P" serve >"$T/serve.log" 2>&1 &
spid=$!
status=0
python3 - "$spid" "$N" <<'PY' || status=$?
import os, statistics, sys, time
serve, n = int(sys.argv[1]), int(sys.argv[2])

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

def kib(pid, field):
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
    """[{role: [pids]}] for each task whose agent runs."""
    tasks = []
    for sup in children(ps, serve):
        argv = ps[sup][1]
        if argv[1:3] != [b"supervise", b"task"]:
            continue
        roles = {"supervisor": [sup], "gateway": [], "bwrap": [], "runner": [], "agent": [], "other": []}
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
            elif any(p in roles["runner"] or p in roles["agent"] for p in [parent]):
                roles["agent"].append(c)
            else:
                roles["other"].append(c)
        tasks.append(roles)
    return tasks

deadline = time.monotonic() + 60
while True:
    ps = procs()
    tasks = classify(ps)
    running = [t for t in tasks if t["runner"] and t["gateway"]
               and any(ps[a][1][:1] == [b"sleep"] for a in t["agent"])]
    if len(running) == n:
        break
    if time.monotonic() > deadline:
        raise SystemExit("memory: %d of %d tasks had their agent running after 60 s"
                         % (len(running), n))
    time.sleep(0.1)
time.sleep(0.5)  # settled
roles = ("supervisor", "gateway", "runner", "bwrap")
samples = []
for _ in range(3):
    ps = procs()
    tasks = classify(ps)
    assert len(tasks) == n, tasks
    row = {}
    for field in (b"Pss", b"Rss"):
        for r in roles + ("agent", "other"):
            row[field, r] = sum(kib(p, field) for t in tasks for p in t[r]) / n / 1024
        row[field, "serve"] = kib(serve, field) / 1024
    samples.append(row)
    time.sleep(0.3)
m = {k: statistics.median(s[k] for s in samples) for k in samples[0]}
for field, what in ((b"Pss", "PSS"), (b"Rss", "RSS")):
    total = sum(m[field, r] for r in roles)
    print("host memory per running task (%s, mean of %d tasks): supervisor %.1f MiB, "
          "gateway %.1f MiB, runner %.1f MiB, bwrap %.1f MiB, total %.1f MiB"
          % (what, n, m[field, "supervisor"], m[field, "gateway"], m[field, "runner"],
             m[field, "bwrap"], total))
print("not counted: the agent's processes %.1f MiB PSS per task; serve, one for all tasks, "
      "%.1f MiB PSS%s" % (m[b"Pss", "agent"], m[b"Pss", "serve"],
                          "; other processes of a task %.1f MiB" % m[b"Pss", "other"]
                          if m[b"Pss", "other"] else ""))
PY
# shellcheck disable=SC2086
for id in $ids; do "$P" cancel "$id" >/dev/null 2>&1 || true; done
kill "$spid" 2>/dev/null || true
wait "$spid" 2>/dev/null || true
exit "$status"
