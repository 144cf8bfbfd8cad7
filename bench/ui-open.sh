#!/bin/sh
# bench/ui-open.sh [BUILD_DIR]: how long the dashboard takes to open a
# 1 GiB log and a 100,000-line diff, against baselines measured in the same
# run on the same data: `wc -l` reading the whole log; for the diff, tig's
# first screen of the same commit (or, without /usr/bin/tig, `git diff |
# head -n 50`), and `git diff` of the same range against `paddock diff`.
# A ratio well under 1 for the log means the dashboard does not read it
# whole.  Needs root only for nothing; the log runs in script mode, the
# diff's first screen on a pseudo-terminal (bench/first-screen.py).
set -eu
build=${1:-$(cd "$(dirname "$0")/.." && pwd)/build/check}
P="$build/paddock"
T=$(mktemp -d /tmp/paddock-bench.XXXXXX)
trap 'rm -rf "$T"' EXIT
export PADDOCK_HOME="$T/data" PADDOCK_CONFIG="$T/config" PADDOCK_UI_SIZE=120x40
export PADDOCK_THEMES_DIR="$(cd "$(dirname "$0")/.." && pwd)/themes"
printf '[repo "r"]\n\turl = %s/r.git\n[agent "a"]\n\tcommand = /bin/true\n' "$T" >"$PADDOCK_CONFIG"
now() { python3 -c 'import time; print(time.monotonic())'; }
secs() { python3 -c "print('%.3f' % ($2 - $1))"; }

# The log.
id=$("$P" add --repo r "bench")
"$P" cancel "$id" >/dev/null
mkdir -p "$PADDOCK_HOME/tasks/$id"
yes "a line of a long log, with some words in it" | head -c 1073741824 >"$PADDOCK_HOME/tasks/$id/log"
printf 'G\n<Enter>\n:save-display %s/end\n:quit\n' "$T" >"$T/log.script"
cat "$PADDOCK_HOME/tasks/$id/log" >/dev/null  # both start with a warm cache
t0=$(now); wc -l "$PADDOCK_HOME/tasks/$id/log" >/dev/null; t1=$(now)
PADDOCK_UI_SCRIPT="$T/log.script" "$P" >/dev/null; t2=$(now)
base=$(secs "$t0" "$t1"); ui=$(secs "$t1" "$t2")
echo "1 GiB log: wc -l ${base}s; dashboard open, draw the end, quit ${ui}s"
python3 -c "print('ratio dashboard/wc: %.2f' % ($ui / $base))"

# The diff: 333 files of 225 lines, every third line changed by a task (a
# process-backend agent), about 100,000 lines of patch.  "measure:" lines
# compare with an anchor measured in the same run (median of 5, taken in
# turns); goal 1.00 is "no slower than the anchor".
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
bench=$(cd "$(dirname "$0")" && pwd)
python3 -c '
import os, sys
for i in range(333):
    d = os.path.join(sys.argv[1], "d%02d" % (i % 20))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "file%03d.c" % i), "w") as f:
        for k in range(225):
            f.write("int v%d_%d = %d; /* a line of code with some words */\n" % (i, k, k))
' "$T/src"
git -C "$T/src" init -q -b main && git -C "$T/src" add -A &&
	git -C "$T/src" -c user.name=b -c user.email=b@example.invalid commit -qm base
git clone -q --bare "$T/src" "$T/big.git"
cat >"$T/agent.py" <<'PY'
import glob
for p in sorted(glob.glob("d*/file*.c")):
    lines = open(p).read().splitlines(True)
    for k in range(0, len(lines), 3):
        lines[k] = lines[k].replace("some words", "other words")
    open(p, "w").writelines(lines)
PY
printf 'python3 %s/agent.py && git add -A && git commit -qm "Change a third of every file"\n' "$T" >"$T/agent.sh"
cat >>"$PADDOCK_CONFIG" <<CONF
[sandbox]
	backend = process
	unsafe-no-isolation = true
[paddock]
	gate-timeout = 0
[repo "big"]
	url = $T/big.git
[agent "big"]
	command = /bin/sh $T/agent.sh
CONF
"$P" add --repo big --agent big "Change a third of every file" >/dev/null
printf ':wait-for 1 at review\n:quit\n' >"$T/run.script"
PADDOCK_UI_SCRIPT="$T/run.script" "$P" >/dev/null
did=$("$P" list --json | python3 -c 'import json,sys; print([t["id"] for t in json.load(sys.stdin) if t["status"] == "review"][0])')
range=$("$P" show --json "$did" | python3 -c 'import json,sys; t = json.load(sys.stdin); print(t["base"], t["head"])')
mirror=$(dirname "$(find "$PADDOCK_HOME" -maxdepth 3 -name HEAD -path '*big*' | head -n 1)")
files=$(git -C "$mirror" diff --name-only $range | LC_ALL=C sort)
echo "diff of $(git -C "$mirror" diff $range | wc -l) lines in $(echo "$files" | wc -l) files"
if [ -x /usr/bin/tig ]; then
	# The last file of each one's first screen (120x40): the dashboard's
	# file list starts on row 2, tig's under the commit's header.
	git clone -q "$mirror" "$T/work" && git -C "$T/work" checkout -q "${range#* }"
	printf 'set vertical-split = no\nset split-view-height = 100%%\n' >"$T/tigrc"
	echo "the diff's first screen after the key: tig (Enter on the commit) against the dashboard (D on the task)"
	TIGRC_USER="$T/tigrc" python3 "$bench/first-screen.py" 5 \
		"$(echo "$files" | sed -n 25p)" "$T/work" /usr/bin/tig -- \
		"$(echo "$files" | sed -n 37p)" "$T" "$P"
else
	echo "the diff's first screen: git diff | head -n 50 against the dashboard (D on the task)"
	python3 "$bench/first-screen.py" 5 - "$mirror" sh -c "git diff $range | head -n 50 >/dev/null" -- \
		"$(echo "$files" | sed -n 37p)" "$T" "$P"
fi
echo "paddock diff against git diff of the same range, to a file"
python3 -c '
import statistics, subprocess, sys, time
mirror, rng, P, did = sys.argv[1], sys.argv[2].split(), sys.argv[3], sys.argv[4]
def run(argv):
    with open("/dev/null", "w") as out:
        t = time.monotonic()
        subprocess.run(argv, stdout=out, check=True)
        return time.monotonic() - t
a, b = [], []
for _ in range(5):
    a.append(run(["git", "-C", mirror, "diff"] + rng))
    b.append(run([P, "diff", did]))
x, y = statistics.median(a), statistics.median(b)
print("measure: anchor %.3f s, paddock %.3f s, ratio %.2f, goal 1.00, holds %s"
      % (x, y, y / x, "yes" if y <= x else "no"))
' "$mirror" "$range" "$P" "$did"
