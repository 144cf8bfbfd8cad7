#!/bin/sh
# bench/verify.sh [BUILD_DIR]: what verifying the tests on a clean checkout
# (issue 10: a fresh sandbox over the template, the imported head unbundled
# and checked out, the repo's test command) adds to a task.  N tasks whose
# agent fixes a bug in a small python project run through serve
# --until-idle; each task's log has paddock's own timestamps, from which
# the bench takes, per task: the whole task (queued -> review), the agent's
# test run in its own sandbox (the baseline, measured in the same task),
# and the verification.  Prints the means and the ratios verification /
# task and verification / agent's test run.  Needs root (sandboxes).
set -eu
build=${1:-$(cd "$(dirname "$0")/.." && pwd)/build/check}
P="$build/paddock"
N=${N:-5}
T=$(mktemp -d /tmp/paddock-bench.XXXXXX)
trap 'rm -rf "$T"' EXIT
export PADDOCK_HOME="$T/data" PADDOCK_CONFIG="$T/config"
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
g() { git -c user.name=b -c user.email=b@example.invalid "$@"; }

src="$T/src"
mkdir -p "$src"
printf 'def add(a, b):\n    return a - b\n' >"$src/calc.py"
cat >"$src/test_calc.py" <<'PY'
import unittest
import calc

class CalcTest(unittest.TestCase):
    def test_add(self):
        self.assertEqual(calc.add(2, 3), 5)
PY
g -C "$src" init -q -b main
g -C "$src" add -A
g -C "$src" commit -qm init
git clone -q --bare "$src" "$T/app.git"
cat >"$T/agent.sh" <<'SH'
sed -i 's/a - b/a + b/' calc.py
SH
cat >"$PADDOCK_CONFIG" <<CONF
[paddock]
	workers = 1
	gate-timeout = 0
[repo "app"]
	url = $T/app.git
	test = python3 -m unittest -q
[agent "fix"]
	command = /bin/sh $T/agent.sh
CONF

# One task first, so that the template and the tests before exist.
"$P" add --repo app --agent fix "warm up" >/dev/null
"$P" serve --until-idle >/dev/null
ids=""
for _ in $(seq "$N"); do ids="$ids $("$P" add --repo app --agent fix "fix add")"; done
"$P" serve --until-idle >/dev/null
for id in $ids; do
	"$P" log "$id" | python3 -c '
import re, sys
t = {}
for line in sys.stdin:
    m = re.match(r"\[paddock +([0-9.]+)s\] (.*)", line)
    if not m:
        continue
    at, what = float(m.group(1)), m.group(2)
    for key, prefix in (("tests", "testing: the agent"), ("handoff", "hand-off: committing"),
                        ("verify", "verifying: the tests"), ("verified", "verifying: passed"),
                        ("verified", "verifying: failed"), ("end", "hand-off: imported")):
        if what.startswith(prefix):
            t[key] = at
print(t["end"], t["handoff"] - t["tests"], t["verified"] - t["verify"])
'
done | python3 -c '
import sys
rows = [list(map(float, l.split())) for l in sys.stdin if l.strip()]
n = len(rows)
task = sum(r[0] for r in rows) / n
agent_tests = sum(r[1] for r in rows) / n
verify = sum(r[2] for r in rows) / n
print("tasks: %d" % n)
print("task (start -> imported and verified): %.3f s" % task)
print("agent'"'"'s test run in its sandbox (baseline): %.3f s" % agent_tests)
print("verification on a clean checkout: %.3f s" % verify)
print("ratio verification / task: %.2f" % (verify / task))
print("ratio verification / agent'"'"'s test run: %.2f (a fresh sandbox, an unbundle and a checkout on top of the same tests; it runs beside the import of the bundle)" % (verify / agent_tests))
'
