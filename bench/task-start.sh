#!/bin/sh
# bench/task-start.sh [BUILD_DIR]: what a task costs paddock on a large
# repo compared with a small one, once the template for the base commit
# exists (issue 14: about 50 ms, and large/small at most 1.5).  The agent
# touches one file and the test command is true, so the time measured,
# preparing -> review from the task's steps (the mean of N tasks per
# repo), is paddock's own overhead.  The repos have the shape of tig and
# of git/git (files, history depth, tags: bench_repo_shaped), or are the
# clones named by REPO_small and REPO_large.  For scale it also times a
# full `git clone` of the large repo in the same run.  Needs root.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/goal.sh"
N=${N:-5}
export PADDOCK_HOME="$T/data"
bench_repo_shaped small "${SMALL_FILES:-200}" "${SMALL_COMMITS:-2500}" "${SMALL_TAGS:-830}"
bench_repo_shaped large "${LARGE_FILES:-4800}" "${LARGE_COMMITS:-20000}" "${LARGE_TAGS:-5300}"
describe() { # NAME -> "N files, N commits, N refs"
	echo "$(git --git-dir="$T/$1.git" ls-tree -r HEAD | wc -l) files," \
	     "$(git --git-dir="$T/$1.git" rev-list --count HEAD) commits," \
	     "$(git --git-dir="$T/$1.git" for-each-ref | wc -l) refs"
}
cat >"$T/agent.sh" <<'SH'
date +%s%N > touched.txt
SH
cat >"$PADDOCK_CONFIG" <<CONF
[paddock]
	workers = 1
[repo "small"]
	url = $T/small.git
	test = true
[repo "large"]
	url = $T/large.git
	test = true
[agent "touch"]
	command = /bin/sh $T/agent.sh
CONF

run() { # repo -> prints mean seconds preparing -> review
	ids=""
	for _ in $(seq "$N"); do ids="$ids $("$P" add --repo "$1" "touch a file")"; done
	"$P" serve --until-idle >/dev/null
	# shellcheck disable=SC2086
	bench_mean_task $ids
	# shellcheck disable=SC2086
	for id in $ids; do "$P" log "$id"; done | bench_log_steps "$1" >>"$T/steps"
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
echo "small repo: $(describe small); large repo: $(describe large)"
echo "task, preparing -> review, mean of $N: small ${small}s, large ${large}s"
echo "where the time goes (mean ms from each log line to the next, 10 ms ticks):"
cat "$T/steps"
echo "for scale: git clone of the large repo took ${clone}s in this run"
goal "per-task overhead, large repo / small repo" "$small" "$large" 1.5
goal "per-task overhead, small repo, against the goal of 50 ms" 0.05 "$small" 1
goal "per-task overhead, large repo, against the goal of 50 ms" 0.05 "$large" 1
