#!/bin/sh
# bench/throughput.sh [BUILD_DIR]: tasks per second through
# `serve --until-idle` with workers = 1, 2 and 4 (N tasks each, the agent
# touches one file, the template already built), the speed-up of each
# against 1 worker in the same run, and the scheduler's share: with one
# worker, the mean time from a task's gate (its place is free) to the
# next task leaving the queue, against the mean task (preparing ->
# review).  Goal: the scheduler is never the bottleneck (its share under
# 5% of a task).  Needs a sandbox (root, or user mode).
set -eu
build=${1:-$(cd "$(dirname "$0")/.." && pwd)/build/check}
P="$build/paddock"
N=${N:-20}
T=$(mktemp -d /tmp/paddock-bench.XXXXXX)
trap 'rm -rf "$T"' EXIT
export PADDOCK_CONFIG="$T/config"
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
g() { git -c user.name=b -c user.email=b@example.invalid "$@"; }
mkdir -p "$T/src"
for i in $(seq 50); do echo "line $i" >"$T/src/f$i.txt"; done
g -C "$T/src" init -q -b main
g -C "$T/src" add -A
g -C "$T/src" commit -qm init
git clone -q --bare "$T/src" "$T/r.git"
cat >"$T/agent.sh" <<'SH'
date +%s%N > touched.txt
SH
run() { # workers -> "tasks/s gap task" (seconds)
	export PADDOCK_HOME="$T/data-$1"
	printf '[paddock]\n\tworkers = %s\n[repo "r"]\n\turl = %s/r.git\n[agent "touch"]\n\tcommand = /bin/sh %s/agent.sh\n' \
		"$1" "$T" "$T" >"$PADDOCK_CONFIG"
	"$P" add --repo r "warm up" >/dev/null
	"$P" serve --until-idle >/dev/null
	ids=""
	for _ in $(seq "$N"); do ids="$ids $("$P" add --repo r "touch a file")"; done
	t0=$(date +%s%N)
	"$P" serve --until-idle >/dev/null
	t1=$(date +%s%N)
	for id in $ids; do "$P" show --json "$id"; done | python3 -c '
import json, sys
n, secs = int(sys.argv[1]), (int(sys.argv[3]) - int(sys.argv[2])) / 1e9
dec = json.JSONDecoder(); s = sys.stdin.read(); i = 0; ev = []
while i < len(s):
    while i < len(s) and s[i].isspace(): i += 1
    if i >= len(s): break
    t, i = dec.raw_decode(s, i)
    assert t["status"] == "review", t
    at = {name: t["created"] + d for d, name in t["steps"]}
    ev.append((at["preparing"], at["review"]))
ev.sort()
gaps = [ev[k + 1][0] - ev[k][1] for k in range(len(ev) - 1)]
task = sum(b - a for a, b in ev) / len(ev)
print("%.3f %.4f %.4f" % (n / secs, max(0.0, sum(gaps) / len(gaps)), task))' "$N" "$t0" "$t1"
}
set -- $(run 1); one=$1 gap=$2 task=$3
set -- $(run 2); two=$1
set -- $(run 4); four=$1
echo "throughput, $N tasks: workers 1: $one tasks/s, 2: $two tasks/s, 4: $four tasks/s"
python3 -c "print('speed-up against 1 worker: 2 workers %.2fx, 4 workers %.2fx' % ($two / $one, $four / $one))"
python3 - "$gap" "$task" <<'PY'
import sys
gap, task = float(sys.argv[1]), float(sys.argv[2])
share = gap / task
print("scheduler's share, 1 worker: %.1f ms from a gate to the next start, against %.0f ms a task: "
      "%.1f%% (goal: under 5%%) %s" % (gap * 1e3, task * 1e3, share * 100,
                                      "holds" if share < 0.05 else "does not hold"))
PY
