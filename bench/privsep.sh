#!/bin/sh
# bench/privsep.sh [BUILD_DIR]: what root mode with privilege separation
# ([paddock] user: serve as a user, its sandboxes made by the root helper's
# keepers) costs per task against plain root mode, measured in the same
# run on the same repo.  The agent touches one file; the time is
# preparing -> review from the task's steps, the mean of N tasks each
# (the first task of each mode builds its template and is not measured).
# Prints both means and the ratio privsep/root (the claim: about 1).
# Needs root; makes the user paddock-bench when it is missing.
. "$(dirname "$0")/lib.sh"
N=${N:-8}
U=paddock-bench
[ "$(id -u)" -eq 0 ] || { echo "bench/privsep.sh: needs root" >&2; exit 1; }
id "$U" >/dev/null 2>&1 || useradd -m -U -s /bin/sh "$U"
bench_repo r 50
chown -R "$U" "$T/r.git"
cat >"$T/agent.sh" <<'SH'
date +%s%N > touched.txt
SH
conf() { # [user]
	{
		printf '[paddock]\n\tworkers = 1\n'
		[ -z "${1:-}" ] || printf '\tuser = %s\n' "$1"
		printf '[repo "r"]\n\turl = %s/r.git\n' "$T"
		printf '[agent "touch"]\n\tcommand = /bin/sh %s/agent.sh\n' "$T"
	} >"$PADDOCK_CONFIG"
}
run() { # data dir -> mean seconds preparing -> review
	export PADDOCK_HOME="$1"
	"$P" add --repo r "warm up" >/dev/null
	"$P" serve --until-idle >/dev/null
	ids=""
	for _ in $(seq "$N"); do ids="$ids $("$P" add --repo r "touch a file")"; done
	"$P" serve --until-idle >/dev/null
	# shellcheck disable=SC2086
	bench_mean_task $ids
}
# The remote is read by its owner only (git's safe.directory): root's run
# reads a copy of its own.
cp -a "$T/r.git" "$T/r-root.git"
chown -R root "$T/r-root.git"
conf
sed -i "s|$T/r.git|$T/r-root.git|" "$PADDOCK_CONFIG"
root=$(run "$T/data-root")
conf "$U"
sep=$(run "$T/data-privsep")
echo "task, preparing -> review, mean of $N: root mode ${root}s, root mode with paddock.user ${sep}s"
python3 -c "print('ratio privsep/root: %.2f (goal: about 1)' % ($sep / $root))"
