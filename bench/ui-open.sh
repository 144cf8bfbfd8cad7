#!/bin/sh
# bench/ui-open.sh [BUILD_DIR]: the dashboard on a 1 GiB log, against
# baselines measured in the same run on the same data (warm cache):
# - open, draw the end, quit, against `wc -l` reading the whole log (a ratio
#   well under 1: the dashboard does not read it whole);
# - the first screen, against `tail -n 50`: from the dashboard opening the
#   log to its screen written out (:save-display), timed by strace
#   (openat of the log, then the first write of the screen's file; on a
#   50-line log too), since what runs before it (the store, the scheduler)
#   takes ten times tail's time on any log (goal: within 2x of tail);
# - a search for a line half-way (a literal, then a regular expression),
#   against `grep -n -m1` (goal: no slower than grep): the script's run
#   with the search less the same run without it.
# Each figure is the median of RUNS (11) runs.  Runs in script mode.
set -eu
build=${1:-$(cd "$(dirname "$0")/.." && pwd)/build/check}
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
