#!/bin/sh
# bench/ui-open.sh [BUILD_DIR]: how long the dashboard takes to open a
# 1 GiB log and a 100,000-line diff, against baselines measured in the same
# run on the same data: `wc -l` reading the whole log, and `git diff` of
# the same range.  A ratio well under 1 for the log means the dashboard
# does not read it whole.  Needs root only for nothing; runs in script mode.
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
