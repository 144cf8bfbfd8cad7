#!/bin/sh
# bench/shell.sh [BUILD_DIR]: what a reviewer's `paddock shell ID -- true`
# costs, from the client's start to its end (the command, and the
# workspace put back after it), on a task kept at review with bwrap as
# root: N sessions on pipes, their mean and median in ms.  Not in
# bench/run's list: run it against two builds to compare (the shell on the
# task's runner session against a sandbox of its own).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-$here/../build/check}" && pwd)
N=${N:-20}
[ "$(id -u)" -eq 0 ] || { echo "bench/shell.sh: needs root (bwrap as root)" >&2; exit 2; }
T=$(mktemp -d /tmp/paddock-bench.XXXXXX)
chmod 755 "$T"
serve=
cleanup() {
	[ -z "$serve" ] || { kill "$serve" 2>/dev/null; wait "$serve" 2>/dev/null; }
	rm -rf "$T"
}
trap cleanup EXIT
export PADDOCK_HOME="$T/data" PADDOCK_CONFIG="$T/config" LC_ALL=C.UTF-8
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
P=$build/paddock
mkdir -p "$T/src" "$T/agents"
printf 'def add(a, b):\n    return a + b\n' >"$T/src/calc.py"
git -C "$T/src" init -q -b main
git -C "$T/src" add -A
git -C "$T/src" -c user.name=b -c user.email=b@b commit -qm initial
git clone -q --bare "$T/src" "$T/r.git"
printf 'echo "# more" >>calc.py\ngit commit -qam more\n' >"$T/agents/a.sh"
uid=$((64200 + $$ % 1000))
cat >"$PADDOCK_CONFIG" <<CONF
[sandbox]
	uid = $uid
	gid = $uid
[paddock]
	gate-timeout = 30m
[repo "r"]
	url = $T/r.git
[agent "a"]
	command = /bin/sh $T/agents/a.sh
CONF
"$P" serve >"$T/serve.out" 2>&1 &
serve=$!
id=$("$P" add --repo r --agent a "bench")
i=0
until "$P" show --json "$id" | grep -q '"sandbox_kept": *true'; do
	i=$((i + 1))
	[ $i -lt 600 ] || { echo "the task never reached review" >&2; exit 1; }
	sleep 0.1
done
"$P" shell "$id" -- true </dev/null >/dev/null 2>&1   # warm
i=0
: >"$T/times"
while [ $i -lt "$N" ]; do
	t0=$(date +%s%N)
	"$P" shell "$id" -- true </dev/null >/dev/null 2>&1
	echo "$t0 $(date +%s%N)" >>"$T/times"
	i=$((i + 1))
done
sort -n -k1 "$T/times" | awk '{ print ($2 - $1) / 1e6 }' | sort -n |
	awk '{ v[NR] = $1; s += $1 } END { printf "paddock shell -- true (pipes, %d sessions): mean %.1f ms, median %.1f ms\n", NR, s / NR, v[int((NR + 1) / 2)] }'
