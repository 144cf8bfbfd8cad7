#!/bin/sh
# bench/chaos.sh [BUILD_DIR]: the long form of tests/chaos.test (issue 11):
# CHAOS_KILLS (default 50) SIGKILLs of `paddock serve`, a supervisor, a
# gateway, a sandbox process or a background approve/push, at random
# moments with tasks in every state, then the same checks as the test (no
# task lost or stuck, every failure with a reason, store and repositories
# intact, every push recorded, nothing left behind).  Prints the test's
# TAP output (its summary of the kills and of the tasks is in the `#`
# lines) and the counts; exits 1 when a check failed.  Not a timed
# bench: the seconds are for information.  Needs root (sandboxes).
# CHAOS_NETWORK=bridge runs the gateways through the bridge.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build/check}
[ -x "$build/paddock" ] || { echo "no paddock in $build; build it first (or name the build dir)" >&2; exit 2; }
export top_srcdir="$root" top_builddir="$build" PADDOCK="$build/paddock"
export CHAOS_KILLS="${CHAOS_KILLS:-50}"
out=$(mktemp /tmp/paddock-chaos.XXXXXX)
trap 'rm -f "$out"' EXIT
t0=$(date +%s)
rc=0
sh "$root/tests/chaos.test" >"$out" 2>&1 || rc=$?
secs=$(( $(date +%s) - t0 ))
cat "$out"
passed=$(grep -c '^ok ' "$out" || true)
failed=$(grep -c '^not ok ' "$out" || true)
echo "kills: $CHAOS_KILLS"
echo "tasks: $(sed -n 's/^# the tasks at the end (\([0-9]*\)): *\(.*\)$/\1 (\2)/p' "$out")"
echo "checks: $passed passed, $failed failed"
echo "time: ${secs} s"
[ "$rc" -eq 0 ] && [ "$failed" -eq 0 ]
