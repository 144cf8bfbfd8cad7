#!/bin/sh
# bench/task-start.sh [BUILD_DIR]: what starting a task costs on a large
# repo compared with a small one, once the template for the base commit
# exists.  The agent touches one file; the time measured is queued ->
# review as recorded in the task's steps, from the moment it leaves the
# queue (preparing), averaged over N tasks per repo.
# Prints the ratio large/small (the claim: about 1, whatever the size),
# and, for scale, the cost of a full `git clone` of the large repo
# measured in the same run.  Needs root (sandboxes).
. "$(dirname "$0")/lib.sh"
N=${N:-5}
FILES=${FILES:-20000}
export PADDOCK_HOME="$T/data"
bench_repo small 10
bench_repo large "$FILES"
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

run() { # repo -> prints mean seconds preparing -> review
	ids=""
	for _ in $(seq "$N"); do ids="$ids $("$P" add --repo "$1" "touch a file")"; done
	"$P" serve --until-idle >/dev/null
	# shellcheck disable=SC2086
	bench_mean_task $ids
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
