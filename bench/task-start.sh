#!/bin/sh
# bench/task-start.sh [BUILD_DIR]: what a task costs paddock on a large
# repo compared with a small one, once the template for the base commit
# exists (issue 14: about 50 ms, and large/small at most 1.5).  The agent
# touches one file and the test command is true, so the time measured,
# preparing -> review from the task's steps (the mean of N tasks per
# repo), is paddock's own overhead.  The repos have the shape of tig and
# of git/git (files, history depth, tags: bench_repo_shaped), or are the
# clones named by REPO_small and REPO_large.  For scale it also times a
# full `git clone` of the large repo in the same run, and the anchor of
# issue 34's goal of 200x: the seed's agentd flow (the Python service of
# the "background coding agent" guide: a sandbox from a snapshot, the
# whole branch bundled in, fetched and switched to, the agent, the tests,
# `git add -A` and a commit, a bundle of the new commits out, verified,
# fetched and pushed), its git commands run locally on the large repo with
# no sandbox service: `cp -a` of a checkout for `sbx new --from`, cp for
# `sbx scp`, the same trivial agent and tests `true`.  Goals (issue 34):
# 50 ms on the small repo, 75 ms on the large one, large/small at most
# 1.5, at least 200x under agentd's flow.  Needs root.
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
	branch = $(bench_branch small)
	test = true
[repo "large"]
	url = $T/large.git
	branch = $(bench_branch large)
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
# agentd_flow: the mean seconds of agentd's run() on the large repo, its
# steps' means in $T/agentd-steps.  Its origin is a bare copy of the
# large repo (the branches it pushes stay out of paddock's), its mirror a
# clone of that, its snapshot a home with the checkout in repo/, made as
# its build-snapshot.sh does; none of that is timed, nor the sandbox's
# deletion (agentd deletes it after "done").
agentd_flow() {
	git clone -q --bare "$T/large.git" "$T/agentd/origin.git"
	git clone -q "$T/agentd/origin.git" "$T/agentd/mirror"
	main=$(bench_branch large)
	git -C "$T/agentd/mirror" bundle create -q "$T/agentd/base.bundle" "origin/$main"
	mkdir "$T/agentd/snapshot"
	git init -q -b main "$T/agentd/snapshot/repo"
	git -C "$T/agentd/snapshot/repo" fetch -q "$T/agentd/base.bundle" \
		"refs/remotes/origin/$main:refs/remotes/origin/$main"
	git -C "$T/agentd/snapshot/repo" checkout -q -B "$main" "origin/$main"
	rm "$T/agentd/base.bundle"
	cp "$T/agent.sh" "$T/agentd/agent-step.sh"
	python3 - "$T/agentd" "$N" "$T/agentd-steps" "$main" <<'PY'
import os, shutil, subprocess, sys, time
root, n, steps_out, main = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
mirror = root + "/mirror"
def sh(*cmd, cwd=None, env=None):  # agentd's sh(): output captured, failure raises
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, env=env)
    if p.returncode != 0:
        raise SystemExit("%s: %s" % (" ".join(cmd), p.stderr))
    return p.stdout
totals, steps = [], {}
for i in range(1, n + 1):
    branch, work, home = "agent/t%d" % i, "%s/work%d" % (root, i), "%s/sandbox%d" % (root, i)
    os.mkdir(work)
    env = dict(os.environ, HOME=home)
    run = lambda c: sh("sh", "-c", c, cwd=home + "/repo", env=env)  # sbx exec --cwd repo
    marks = [("start", time.monotonic())]
    mark = lambda name: marks.append((name, time.monotonic()))
    sh("cp", "-a", root + "/snapshot", home)  # sbx new --from the snapshot
    mark("sandbox from the snapshot (cp -a)")
    sh("git", "-C", mirror, "fetch", "-q", "origin")
    sh("git", "-C", mirror, "bundle", "create", "-q", work + "/base.bundle", "origin/" + main)
    mark("fetch, bundle of origin/main")
    with open(work + "/TASK.md", "w") as f:
        f.write("touch a file\n")
    for name in (work + "/base.bundle", work + "/TASK.md", root + "/agent-step.sh"):
        sh("cp", name, home + "/")  # sbx scp
    mark("copy in (cp)")
    run("git fetch -q ~/base.bundle refs/remotes/origin/{0}:refs/remotes/origin/{0}"
        " && git switch -q -C {1} origin/{0}".format(main, branch))
    mark("fetch of the bundle, switch")
    run("sh ~/agent-step.sh")
    run("true")
    mark("agent, tests")
    run("git add -A && git -c user.name=agentd -c user.email=agentd@example.com"
        " commit -q -F ~/TASK.md && git bundle create -q ~/out.bundle origin/{0}..{1}".format(main, branch))
    mark("add -A, commit, bundle out")
    sh("cp", home + "/out.bundle", work + "/")  # sbx scp
    mark("copy out (cp)")
    sh("git", "-C", mirror, "bundle", "verify", "-q", work + "/out.bundle")
    sh("git", "-C", mirror, "fetch", "-q", work + "/out.bundle", "+%s:%s" % (branch, branch))
    sh("git", "-C", mirror, "push", "-q", "-f", "origin", branch)
    sh("git", "-C", mirror, "rev-parse", "--short", branch)
    mark("verify, fetch, push")
    totals.append(marks[-1][1] - marks[0][1])
    for (_, a), (name, b) in zip(marks, marks[1:]):
        steps.setdefault(name, []).append(b - a)
    shutil.rmtree(home)  # sbx delete, after "done"
with open(steps_out, "w") as f:
    for name, ts in steps.items():
        f.write("   %8.1f ms  %s\n" % (1000 * sum(ts) / len(ts), name))
print("%.4f" % (sum(totals) / len(totals)))
PY
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
agentd=$(agentd_flow)
echo "small repo: $(describe small); large repo: $(describe large)"
echo "task, preparing -> review, mean of $N: small ${small}s, large ${large}s"
echo "where the time goes (mean ms from each log line to the next, 10 ms ticks):"
cat "$T/steps"
echo "for scale: git clone of the large repo took ${clone}s in this run"
echo "agentd's flow on the large repo, mean of $N: ${agentd}s; per step:"
cat "$T/agentd-steps"
goal "per-task overhead, large repo / small repo" "$small" "$large" 1.5
goal "per-task overhead, small repo, against the goal of 50 ms" 0.05 "$small" 1
goal "per-task overhead, large repo, against the goal of 75 ms" 0.075 "$large" 1
goal "per-task overhead against agentd's flow (git-shaped repo)" "$agentd" "$large" 0.005
