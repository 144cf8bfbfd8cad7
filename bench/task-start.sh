#!/bin/sh
# bench/task-start.sh [BUILD_DIR]: what starting a task costs on a large
# repo compared with a small one, once the template for the base commit
# exists.  The agent touches one file; the time measured is queued ->
# review as recorded in the task's steps, from the moment it leaves the
# queue (preparing), averaged over N tasks per repo.
# Prints the ratio large/small (the claim: about 1, whatever the size),
# and, for scale, the cost of a full `git clone` of the large repo
# measured in the same run.  Needs root (sandboxes).
set -eu
build=${1:-$(cd "$(dirname "$0")/.." && pwd)/build/check}
P="$build/paddock"
N=${N:-5}
FILES=${FILES:-20000}
T=$(mktemp -d /tmp/paddock-bench.XXXXXX)
trap 'rm -rf "$T"' EXIT
export PADDOCK_HOME="$T/data" PADDOCK_CONFIG="$T/config"
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
g() { git -c user.name=b -c user.email=b@example.invalid "$@"; }

mkrepo() { # name nfiles
	src="$T/src-$1"
	mkdir -p "$src"
	python3 - "$src" "$2" <<'PY'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    d = os.path.join(root, "d%03d" % (i % 200))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "f%06d.txt" % i), "w") as f:
        f.write(("line %d of a file in a large repo\n" % i) * 40)
PY
	g -C "$src" init -q -b main
	g -C "$src" add -A
	g -C "$src" commit -qm init
	git clone -q --bare "$src" "$T/$1.git"
}
mkrepo small 10
mkrepo large "$FILES"
cat >"$T/agent.sh" <<'SH'
date +%s%N > touched.txt
SH
cat >"$PADDOCK_CONFIG" <<CONF
[paddock]
	workers = 1
[repo "small"]
	url = $T/small.git
[repo "large"]
	url = $T/large.git
[agent "touch"]
	command = /bin/sh $T/agent.sh
CONF

run() { # repo -> prints mean seconds queued->review
	ids=""
	for _ in $(seq "$N"); do ids="$ids $("$P" add --repo "$1" "touch a file")"; done
	"$P" serve --until-idle >/dev/null
	for id in $ids; do "$P" show --json "$id"; done | python3 -c '
import json, sys
dec = json.JSONDecoder(); s = sys.stdin.read(); i = 0; xs = []
while i < len(s):
    while i < len(s) and s[i].isspace(): i += 1
    if i >= len(s): break
    t, i = dec.raw_decode(s, i)
    assert t["status"] == "review", t
    # From preparing (it left the queue) to review.
    xs.append(t["steps"][-1][0] - t["steps"][1][0])
print("%.3f" % (sum(xs) / len(xs)))'
}
# The first task of each repo builds its template; it is not measured.
"$P" add --repo small "warm up" >/dev/null
"$P" add --repo large "warm up" >/dev/null
"$P" serve --until-idle >/dev/null
small=$(run small)
large=$(run large)
t0=$(date +%s%N)
git clone -q "$T/large.git" "$T/clone-large"
t1=$(date +%s%N)
clone=$(python3 -c "print('%.3f' % (($t1 - $t0) / 1e9))")
echo "task, preparing -> review, mean of $N: small repo (10 files) ${small}s, large repo ($FILES files) ${large}s"
python3 -c "print('ratio large/small: %.2f' % ($large / $small))"
echo "for scale: git clone of the large repo took ${clone}s in this run"
