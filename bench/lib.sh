# bench/lib.sh: what the task benchmarks share (sourced; sets -eu).
# Before sourcing: nothing.  After: P (the paddock under test, from the
# first argument or build/check), T (a scratch dir, removed at exit),
# PADDOCK_CONFIG in T, git with no global or system configuration, g
# (git with an identity), bench_repo and bench_task_times.
set -eu
build=$(cd "${1:-$(dirname "$0")/../build/check}" && pwd)
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

# bench_repo_shaped NAME FILES COMMITS TAGS: a bare repo $T/NAME.git of
# the shape of a real one: FILES files, a history COMMITS deep (each
# commit after the first changes one file), TAGS tags along it; made with
# git fast-import, in seconds.  With $REPO_<NAME> set (a path to a clone
# of a real repository), that path is used instead: nothing is fetched.
bench_repo_shaped() {
	real=$(eval echo "\${REPO_$1:-}")
	if [ -n "$real" ]; then
		git clone -q --bare --no-local "$real" "$T/$1.git"
		return
	fi
	git init -q --bare "$T/$1.git"
	python3 - "$2" "$3" "$4" <<'PY' | git --git-dir="$T/$1.git" fast-import --quiet
import sys
files, commits, tags = (int(a) for a in sys.argv[1:4])
w = sys.stdout.buffer.write
def blob(mark, data):
    w(b"blob\nmark :%d\ndata %d\n%s\n" % (mark, len(data), data))
t = 1700000000
every = max(1, commits // tags) if tags else 0
ntags = 0
for c in range(commits):
    mark = 1000000 + c
    w(b"commit refs/heads/main\nmark :%d\ncommitter b <b@example.invalid> %d +0000\n"
      % (mark, t + c))
    msg = b"commit %d" % c
    w(b"data %d\n%s\n" % (len(msg), msg))
    if c == 0:
        for i in range(files):
            data = (b"line %d of a file in a large repo\n" % i) * 40
            w(b"M 100644 inline d%03d/f%06d.txt\ndata %d\n%s\n" % (i % 200, i, len(data), data))
    else:
        i = c % files
        data = (b"line %d, changed in commit %d\n" % (i, c)) * 40
        w(b"M 100644 inline d%03d/f%06d.txt\ndata %d\n%s\n" % (i % 200, i, len(data), data))
    if every and c % every == 0 and ntags < tags:
        w(b"reset refs/tags/v%d\nfrom :%d\n\n" % (ntags, mark))
        ntags += 1
PY
	git --git-dir="$T/$1.git" symbolic-ref HEAD refs/heads/main
}

# bench_branch NAME: the branch $T/NAME.git's HEAD names (main, or a real
# clone's master), for the repo's `branch` in paddock's configuration.
bench_branch() {
	git --git-dir="$T/$1.git" symbolic-ref --short HEAD
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
    at = {name: when for when, name in t["steps"]}  # [unix time, status]
    ev.append((at["preparing"], at["review"]))
for a, b in sorted(ev):
    print("%.6f %.6f" % (a, b))'
}

# bench_mean_task ID...: the mean seconds preparing -> review.
bench_mean_task() {
	bench_task_times "$@" | awk '{ s += $2 - $1; n++ } END { printf "%.3f\n", s / n }'
}

# bench_log_steps LABEL: reads the logs of tasks (paddock log, one after
# the other) and prints, per step, the mean milliseconds from its line to
# the next line of paddock's ([paddock N.NNs], 10 ms ticks): where a
# task's time goes.  A step is its line's first words, ids left out.
bench_log_steps() {
	python3 -c '
import re, sys
label = sys.argv[1]
order, tot, cnt = [], {}, {}
prev = None
for line in sys.stdin:
    m = re.match(r"\[paddock +([0-9.]+)s\] (.*)", line)
    if not m:
        continue
    t, text = float(m.group(1)), m.group(2)
    if text.startswith("task "):
        prev = None
    if prev is not None and t >= prev[0]:
        k = prev[1]
        if k not in tot:
            order.append(k); tot[k] = 0.0; cnt[k] = 0
        tot[k] += t - prev[0]; cnt[k] += 1
    key = re.sub(r"[0-9a-f]{12,40}|\b(?=[a-z]*[0-9])[0-9a-z]{10}\b|/tmp/\S+", "X", text)[:60]
    prev = (t, key)
for k in order:
    print("   %s %6.1f ms  %s" % (label, 1000 * tot[k] / cnt[k], k))
' "$1"
}
