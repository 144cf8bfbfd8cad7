# bench/lib.sh: what the task benchmarks share (sourced; sets -eu).
# Before sourcing: nothing.  After: P (the paddock under test, from the
# first argument or build/check), T (a scratch dir, removed at exit),
# PADDOCK_CONFIG in T, git with no global or system configuration, g
# (git with an identity), bench_repo and bench_task_times.
set -eu
build=${1:-$(cd "$(dirname "$0")/.." && pwd)/build/check}
P="$build/paddock"
T=$(mktemp -d /tmp/paddock-bench.XXXXXX)
chmod 755 "$T"
trap 'rm -rf "$T"' EXIT
export PADDOCK_CONFIG="$T/config"
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
g() { git -c user.name=b -c user.email=b@example.invalid "$@"; }

# bench_repo NAME NFILES: a one-commit repo of NFILES files of 40 lines in
# 200 folders, cloned bare to $T/NAME.git.
bench_repo() {
	python3 - "$T/src-$1" "$2" <<'PY'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    d = os.path.join(root, "d%03d" % (i % 200))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "f%06d.txt" % i), "w") as f:
        f.write(("line %d of a file in a large repo\n" % i) * 40)
PY
	g -C "$T/src-$1" init -q -b main
	g -C "$T/src-$1" add -A
	g -C "$T/src-$1" commit -qm init
	git clone -q --bare "$T/src-$1" "$T/$1.git"
}

# bench_task_times ID...: "PREPARING REVIEW" (unix times) for each task,
# which must be at review, in the order they left the queue.
bench_task_times() {
	for id in "$@"; do "$P" show --json "$id"; done | python3 -c '
import json, sys
dec = json.JSONDecoder(); s = sys.stdin.read(); i = 0; ev = []
while i < len(s):
    while i < len(s) and s[i].isspace(): i += 1
    if i >= len(s): break
    t, i = dec.raw_decode(s, i)
    assert t["status"] == "review", t
    at = {name: t["created"] + d for d, name in t["steps"]}
    ev.append((at["preparing"], at["review"]))
for a, b in sorted(ev):
    print("%.6f %.6f" % (a, b))'
}

# bench_mean_task ID...: the mean seconds preparing -> review.
bench_mean_task() {
	bench_task_times "$@" | awk '{ s += $2 - $1; n++ } END { printf "%.3f\n", s / n }'
}
