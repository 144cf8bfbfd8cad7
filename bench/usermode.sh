#!/bin/sh
# bench/usermode.sh [BUILD_DIR]: what a task costs in user mode without
# cgroups (paddock run by a user, no cgroup delegated: rlimits and the
# host's memory watch), the agent touching one file and the test command
# true, so that the time, preparing -> review from the task's steps (the
# mean of N tasks; the first builds the template and is not measured), is
# paddock's own overhead; then where it goes, step by step.  Run as root,
# it runs itself again as the user paddock-bench (made when missing).
if [ "$(id -u)" -eq 0 ]; then
	U=paddock-bench
	id "$U" >/dev/null 2>&1 || useradd -m -U -s /bin/sh "$U"
	build=$(cd "${1:-$(dirname "$0")/../build/check}" && pwd)
	exec runuser -u "$U" -- env -i PATH=/usr/local/bin:/usr/bin:/bin \
		HOME="$(getent passwd "$U" | cut -d: -f6)" USER="$U" LANG=C.UTF-8 N="${N:-8}" \
		sh "$(cd "$(dirname "$0")" && pwd)/usermode.sh" "$build"
fi
. "$(dirname "$0")/lib.sh"
N=${N:-8}
export PADDOCK_HOME="$T/data"
bench_repo r 50
cat >"$T/agent.sh" <<'SH'
date +%s%N > touched.txt
SH
cat >"$PADDOCK_CONFIG" <<CONF
[paddock]
	workers = 1
[repo "r"]
	url = $T/r.git
	test = true
[agent "touch"]
	command = /bin/sh $T/agent.sh
CONF
"$P" add --repo r "warm up" >/dev/null
"$P" serve --until-idle >/dev/null 2>&1
ids=""
for _ in $(seq "$N"); do ids="$ids $("$P" add --repo r "touch a file")"; done
"$P" serve --until-idle >/dev/null 2>&1
# shellcheck disable=SC2086
echo "task in user mode without cgroups, preparing -> review, mean of $N: $(bench_mean_task $ids)s"
echo "where the time goes (mean ms from each log line to the next, 10 ms ticks):"
for id in $ids; do "$P" log "$id"; done | bench_log_steps user
