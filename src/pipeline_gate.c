/* pipeline_gate.c: the gate (pipeline_int.h): the round's gate summary,
 * the wait for the scheduler with the sandbox kept, the agent's home
 * archive kept between rounds, and a reviewer's shell in the sandbox
 * (shell.h). */
#include "autoconfig.h"
#include "pipeline_int.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <jansson.h>
#include "adapter.h"
#include "buf.h"
#include "bundle.h"
#include "clock.h"
#include "diffcache.h"
#include "fsx.h"
#include "gate.h"
#include "gateway.h"
#include "i18n.h"
#include "mirror.h"
#include "paths.h"
#include "policy.h"
#include "report.h"
#include "sandbox.h"
#include "shell.h"
#include "template.h"

/* One test run for the gate: whether it passed, its exit status, the
 * tail of its output and where the whole log is. */
static void gate_tests_fill(struct gate_tests *g, int ran, int passed, int exited, int code,
                            const char *tail, const char *log)
{
	*g = (struct gate_tests){ .ran = ran, .passed = passed, .exited = exited, .code = code,
	                          .tail = pipeline_dup_or_null(tail),
	                          .log = pipeline_dup_or_null(log) };
}

/* USD the task may spend: its own budget, else the configuration's; 0 for
 * none. */
static double task_budget(const struct run *r)
{
	const struct task_row *t = r->job->task;
	return t->budget >= 0 ? t->budget : r->job->cfg->limits.budget;
}

/* What the gate's one pass over the round's diff feeds: the diffstat and
 * the policy's line scans. */
struct gate_pass {
	struct diff_stat_list stat;
	struct policy_run *policy;     /* NULL: the policy could not start */
};

static int gate_pass_file(void *arg, const struct diff_file *f, const char *patch, size_t len,
                          struct err *e)
{
	struct gate_pass *p = arg;
	diff_stat_list_file(&p->stat, f, patch, len, e);
	return p->policy ? policy_file(p->policy, f, patch, len, e) : 0;
}

/* The parts of the round's gate summary that need only the imported
 * work, computed while the verification runs: the diffstat and the
 * policy's findings, from one pass over the diff that also keeps it for
 * paddock diff, the dashboard and the API (diffcache.h). */
void pipeline_gate_prepare(struct run *r, struct gate_summary *g)
{
	const struct task_row *t = r->job->task;
	const struct repo_conf *repo = config_find_repo(r->job->cfg, t->repo);
	struct err e = {{0}}, pe = {{0}};
	struct buf stat = {0};
	struct gate_pass pass = {0};
	struct policy_secrets sec = policy_secrets_collect(r->job->cfg);
	int prc = policy_begin(r->mirror, r->base, r->head, repo, &sec, &pass.policy, &pe);
	char *diffs = paths_task_diffs(r->job->data_dir, t->id);
	int drc = diffcache_each(diffs, r->mirror, r->base, r->head, gate_pass_file, &pass, &e);
	free(diffs);
	if (drc < 0)
		buf_printf(&stat, "(%s)", e.msg);
	else
		diff_stat_list_write(&pass.stat, &stat);
	diff_stat_list_free(&pass.stat);
	g->diffstat = xstrdup(stat.data ? stat.data : "");
	buf_free(&stat);
	struct policy_finding *f = NULL;
	size_t nf = 0;
	if (prc < 0 || drc < 0) {
		/* A check that cannot run blocks: nothing unchecked is pushed. */
		gate_summary_add_finding(g, "policy:error", "policy", POLICY_BLOCK, "",
		                         prc < 0 ? pe.msg : e.msg);
		policy_run_free(pass.policy);
	} else {
		policy_end(pass.policy, &f, &nf);
	}
	free((void *)sec.values);
	for (size_t i = 0; i < nf; i++)
		gate_summary_add_finding(g, f[i].name, config_policy_rule_name(f[i].rule),
		                         f[i].action, f[i].path, f[i].detail);
	policy_findings_free(f, nf);
}

/* The gate summary of this round, as the store keeps it (gate.h), from
 * the prepared g (pipeline_gate_prepare), which it frees. */
char *pipeline_gate_json(struct run *r, struct gate_summary *g, const char *from,
                         const char *summary, const struct template_tests *before,
                         const struct tests_after *agent, const struct tests_after *after)
{
	const struct task_row *t = r->job->task;
	g->round = r->round;
	g->branch = pipeline_dup_or_null(t->branch);
	g->from = pipeline_dup_or_null(from);
	g->head = pipeline_dup_or_null(r->head);
	g->summary = xstrdup(summary ? summary : "");
	/* "after" is the verified result (a clean checkout of the head);
	 * "agent" what the tests did in the agent's own sandbox. */
	gate_tests_fill(&g->tests.before, before->ran, before->passed, before->exited, before->code,
	                before->tail, before->log);
	gate_tests_fill(&g->tests.after, after->ran, after->passed, after->exited, after->code,
	                after->tail, after->log);
	g->tests.after.verified = after->ran;
	gate_tests_fill(&g->tests.agent, agent->ran, agent->passed, agent->exited, agent->code,
	                agent->tail, agent->log);
	g->tests.mismatch = agent->ran && after->ran && agent->passed != after->passed;
	/* What the contract found (pipeline_round_contract), else the default one held. */
	if (!g->has_contract) {
		g->has_contract = 1;
		g->contract.change = g->contract.tests = g->contract.bundle = 1;
	}
	g->fix_rounds = r->fix_used;
	if (r->gw) {
		const struct gateway_stats *gs = gateway_stats(r->gw);
		g->has_usage = g->has_egress = 1;
		g->usage.input = gs->total.input;
		g->usage.output = gs->total.output;
		g->usage.cache_read = gs->total.cache_read;
		g->usage.cache_write = gs->total.cache_write;
		g->usage.cost = gs->cost;
		g->usage.requests = gs->requests;
		g->usage.priced = !gs->unpriced;
		g->usage.budget = task_budget(r);
		g->egress.allowed = gs->allowed;
		g->egress.refused = gs->refused;
	}
	json_t *j = gate_summary_to_json(g);
	gate_summary_free(g);
	memset(g, 0, sizeof *g);
	char *s = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(j);
	return s;
}

static int gate_shell(struct run *r, struct sandbox *sb, const struct template_tests *before,
                      int lfd);

/* Waits at the gate for the scheduler: returns the round to run next, or 0
 * to tear down (teardown, timeout, cancel, or the scheduler gone).
 * Meanwhile a reviewer's shell may open in the sandbox (shell.h); each
 * session starts the gate timeout again. */
int pipeline_gate_wait(struct run *r, struct sandbox *sb, const struct template_tests *before)
{
	const struct pipeline_job *job = r->job;
	double until = clock_mono() + job->cfg->gate_timeout;
	struct buf in = {0};
	int next = 0;
	struct err le = {{0}};
	pipeline_log(r, "review: the sandbox is kept for the reviewer (paddock.gate-timeout)");
	int lfd = job->cmd_fd >= 0 ? shell_listen(job->data_dir, job->task->id, &le) : -1;
	if (lfd < 0 && le.msg[0])
		pipeline_log(r, "review: no shell can open in this sandbox: %s", le.msg);
	report_send(r->report_fd, REPORT_KEPT, NULL);
	while (!pipeline_cancelled && job->cmd_fd >= 0) {
		double left = until - clock_mono();
		if (left <= 0) {
			pipeline_log(r, "review: gate timeout; the sandbox is torn down, the branch "
			             "stays");
			break;
		}
		struct pollfd pfd[2] = { { .fd = job->cmd_fd, .events = POLLIN },
		                         { .fd = lfd, .events = POLLIN } };
		int n = poll(pfd, lfd >= 0 ? 2 : 1, left > 1 ? 1000 : (int)(left * 1000) + 1);
		if (n <= 0)
			continue;
		if (!pfd[0].revents) {
			/* A workspace the shell left that cannot be put back
			 * must not reach the next round: the sandbox goes. */
			if ((pfd[1].revents & POLLIN) && gate_shell(r, sb, before, lfd) < 0)
				break;
			until = clock_mono() + job->cfg->gate_timeout;
			continue;
		}
		char tmp[256];
		ssize_t got = read(job->cmd_fd, tmp, sizeof tmp);
		if (got <= 0)
			break;
		buf_add(&in, tmp, (size_t)got);
		char *nl = memchr(in.data, '\n', in.len);
		if (!nl)
			continue;
		*nl = '\0';
		if (sscanf(in.data, "resume %d", &next) == 1 && next > r->round)
			break;
		next = 0;
		break;
	}
	shell_unlisten(job->data_dir, job->task->id, lfd);
	buf_free(&in);
	return next;
}

int pipeline_home_wanted(const struct run *r)
{
	const struct agent_conf *a = config_find_agent(r->job->cfg, r->job->task->agent);
	return a && a->resume;
}

/* The archive the hand-off made copied out beside the kept ones: the
 * increment on the sandbox's snapshot where the host kept one, else (or
 * when the sandbox made none, its snapshot spoilt) a whole one.  It is
 * kept only if the round reaches review (pipeline_home_keep). */
void pipeline_home_fetch(struct run *r, struct sandbox *sb)
{
	struct err e = {{0}};
	r->home_fetched = -1;
	if (!pipeline_home_wanted(r))
		return;
	char *host = paths_task_home(r->job->data_dir, r->job->task->id);
	char *tmp = xasprintf("%s.tmp", host);
	if (r->home_snap > 0 &&
	    r->job->be->copy_out(sb, SANDBOX_OUTDIR "/home.inc.tgz", tmp, HOME_ARCHIVE_CAP, &e) == 0)
		r->home_fetched = r->home_snap;
	else if (err_clear(&e),
	         r->job->be->copy_out(sb, SANDBOX_OUTDIR "/home.tgz", tmp, HOME_ARCHIVE_CAP, &e) == 0)
		r->home_fetched = 0;
	if (r->home_fetched < 0) {
		unlink(tmp);
		snprintf(r->home_problem, sizeof r->home_problem, "%s", e.msg);
	}
	free(tmp);
	free(host);
}

/* Removes task id's increments from n on. */
static void home_incs_drop(const struct run *r, const char *id, int n)
{
	for (;; n++) {
		char *inc = paths_task_home_inc(r->job->data_dir, id, n);
		int gone = unlink(inc) < 0 && errno == ENOENT;
		free(inc);
		if (gone)
			break;
	}
}

/* Written beside and renamed: a kill mid-copy leaves the last round's
 * archives whole.  A whole archive drops the increments first: a kill
 * between leaves an older home, never increments on the wrong one. */
void pipeline_home_keep(struct run *r)
{
	struct err e = {{0}};
	const char *id = r->job->task->id;
	char *host = paths_task_home(r->job->data_dir, id);
	char *tmp = xasprintf("%s.tmp", host);
	if (!pipeline_home_wanted(r))
		goto out;
	if (!r->home_problem[0]) {
		int n = r->home_fetched;
		char *dst = n > 0 ? paths_task_home_inc(r->job->data_dir, id, n) : xstrdup(host);
		home_incs_drop(r, id, n > 0 ? n + 1 : 1);
		if (rename(tmp, dst) < 0)
			snprintf(r->home_problem, sizeof r->home_problem, "%s", strerror(errno));
		else
			r->home_snap = n + 1;
		free(dst);
	}
	if (r->home_problem[0]) {
		unlink(tmp);
		pipeline_log(r, "hand-off: the agent's home could not be kept: %s",
		             r->home_problem);
	} else {
		/* The session that goes with this home: a later round that
		 * fails may leave the task's session pointing elsewhere. */
		char *sess = paths_task_home_session(r->job->data_dir, id);
		if (r->session)
			fsx_write_file(sess, r->session, strlen(r->session), 0600, &e);
		else
			unlink(sess);
		free(sess);
	}
out:
	r->home_problem[0] = '\0';
	free(tmp);
	free(host);
}

void pipeline_home_copy(struct run *r, const char *from, const char *to, struct err *e)
{
	char *mine = paths_task_home(r->job->data_dir, to);
	char *theirs = paths_task_home(r->job->data_dir, from);
	if (fsx_copy_regular(theirs, mine, HOME_ARCHIVE_CAP, 0600, e) == 0) {
		for (int n = 1;; n++) {
			char *a = paths_task_home_inc(r->job->data_dir, from, n);
			char *b = paths_task_home_inc(r->job->data_dir, to, n);
			int more = access(a, F_OK) == 0 &&
			           fsx_copy_regular(a, b, HOME_ARCHIVE_CAP, 0600, e) == 0;
			free(a);
			free(b);
			if (!more)
				break;
		}
	}
	free(mine);
	free(theirs);
}

/* A round that did not reach review keeps the last round's archive. */
void pipeline_home_discard(struct run *r)
{
	char *host = paths_task_home(r->job->data_dir, r->job->task->id);
	char *tmp = xasprintf("%s.tmp", host);
	unlink(tmp);
	r->home_problem[0] = '\0';
	free(tmp);
	free(host);
}

/* The session saved with the home archive of task id, when there is one:
 * it replaces r->session. */
void pipeline_home_session(struct run *r, const char *id)
{
	char *sess = paths_task_home_session(r->job->data_dir, id);
	struct buf b = {0};
	struct err e = {{0}};
	if (fsx_read_file(sess, 4096, &b, &e) == 0 && b.len) {
		free(r->session);
		r->session = buf_detach(&b);
	}
	buf_free(&b);
	free(sess);
}

/* The bundle of a round that reached review stays as round-N.bundle: a
 * later round that fails or is interrupted leaves the task at this
 * round, and a sandbox rebuilt for it starts from this work. */
void pipeline_keep_round_bundle(struct run *r)
{
	char *bundle = paths_task_bundle(r->job->data_dir, r->job->task->id);
	char *keep = paths_task_round_bundle(r->job->data_dir, r->job->task->id, r->round);
	unlink(keep);
	if (link(bundle, keep) < 0)
		pipeline_log(r, "hand-off: cannot keep %s: %s", keep, strerror(errno));
	free(bundle);
	free(keep);
}

/* 1 when the home was put back: the whole archive, then each increment
 * in order, each unpacked by tar in the sandbox (-G: what an increment
 * says was removed goes); the first that fails ends it. */
int pipeline_home_restore(struct run *r, struct sandbox *sb)
{
	struct err e = {{0}};
	struct sandbox_result res;
	const char *id = r->job->task->id;
	int n = 0, ok = 0, failed = 0;
	r->home_snap = 0;
	for (; !failed && n < HOME_INCS_MAX; n++) {
		char *f = n ? paths_task_home_inc(r->job->data_dir, id, n)
		            : paths_task_home(r->job->data_dir, id);
		char inside[64];
		snprintf(inside, sizeof inside, SANDBOX_OUTDIR "/home.%d.tgz", n);
		int have = access(f, F_OK) == 0;
		failed = have && r->job->be->copy_in(sb, f, inside, &e) < 0;
		free(f);
		if (!have)
			break;
	}
	if (failed)
		n = 0;
	if (n > 0) {
		char *script = xasprintf(
			"i=0; s=0\n"
			"while [ $i -lt %d ]; do\n"
			"  f=\"$PADDOCK_OUT/home.$i.tgz\"\n"
			"  [ $s -ne 0 ] || tar -C \"$HOME\" -G -xzf \"$f\" || s=1\n"
			"  rm -f \"$f\"; i=$((i + 1))\n"
			"done\n"
			"exit $s\n", n);
		const char *argv[] = { "/bin/sh", "-c", script, NULL };
		ok = pipeline_sb_run(r, sb, argv, NULL, clock_mono() + 60, &res, &e) == 0 &&
		     res.end == SANDBOX_EXITED && res.code == 0;
		free(script);
		if (!ok)
			pipeline_log(r, "preparing: the agent's home could not be put back from its %d "
			             "archives (tar refused one: above)", n);
	}
	return ok;
}

/* ---- a reviewer's shell at the gate (shell.h) ---- */

struct gate_shell {
	struct run *r;
	struct sandbox *sb;
	const struct template_tests *before;
	char old_head[41];         /* the task's head before a kept round */
	int old_round;
};

static void gate_shell_note(void *arg, const char *line)
{
	struct gate_shell *gs = arg;
	pipeline_log(gs->r, "%s", line);
}

/* The workspace back at the task's head: its tracked and untracked files
 * (what git ignores stays), the task branch at the head, and the tracked
 * files the repo's set-up changed as the hand-off left them (the
 * baseline, template.h). */
static int gate_shell_reset(void *arg, struct err *e)
{
	struct gate_shell *gs = arg;
	struct run *r = gs->r;
	struct err ce = {{0}};
	int changes = r->job->be->changes && r->job->be->changes(gs->sb, &ce) == 0;
	char *script = xasprintf(
		"%s"
		"cd \"$PADDOCK_WORK\" || exit 1\n"
		"gd=$(git rev-parse --git-dir) || exit 1\n"
		"git checkout -q -f -B paddock/%s %s && git clean -q -ffd || exit 1\n"
		"bl=\"$gd/info/paddock-baseline\"\n"
		"[ -s \"$bl\" ] || exit 0\n"
		"while IFS= read -r l; do\n"
		"  s=${l%%%% *}; p=${l#* }\n"
		"  if [ \"$(git rev-parse -q --verify \"%s:$p\")\" = "
		"\"$(git rev-parse -q --verify \"%s:$p\")\" ]; then\n"
		"    git cat-file blob \"$s\" > \"$p\" 2>/dev/null || :\n"
		"  fi\n"
		"done < \"$bl\"\n"
		"exit 0\n",
		changes ? "" : "rm -rf \"$PADDOCK_OUT/" SANDBOX_CHANGES_NAME "\"\n",
		r->job->task->id, r->head, r->head, r->base);
	const char *argv[] = { "/bin/sh", "-c", script, NULL };
	struct sandbox_result res;
	pipeline_log(r, "shell: putting the workspace back at %s", r->head);
	int rc = pipeline_sb_run(r, gs->sb, argv, sandbox_git_env_fsmonitor(), clock_mono() + 300,
	                         &res, e);
	free(script);
	char *p = rc < 0 ? NULL : pipeline_result_problem(r, _("putting the workspace back"), &res);
	if (p) {
		err_set(e, "%s", p);
		free(p);
		rc = -1;
	}
	return rc;
}

/* The hand-off of what the shell changed, as the reviewer's: 0 with the
 * bundle's tip in tip, 1 when the tip is the task's head (no change), -1
 * with e. */
static int gate_shell_handoff(struct gate_shell *gs, const char *actor, char tip[41],
                              struct err *e)
{
	struct run *r = gs->r;
	const char *id = r->job->task->id;
	char *env[3] = {
		xasprintf("PADDOCK_HANDOFF_MESSAGE=Reviewer's changes in paddock task %s "
		          "(round %d, made with paddock shell --keep by %s)", id, r->round + 1, actor),
		xasprintf("GIT_AUTHOR_NAME=%s", actor),
		xasprintf("GIT_AUTHOR_EMAIL=%s@paddock.invalid", actor),
	};
	const char *extra[] = { env[0], env[1], env[2], NULL };
	int rc = pipeline_handoff_run(r, gs->sb, extra, HANDOFF_ALL, e);
	for (int i = 0; i < 3; i++)
		free(env[i]);
	if (rc == HANDOFF_NO_CHANGE)
		return err_set(e, "%s", _("with the shell's changes the task's work adds up to "
		                          "nothing; a round cannot undo all of it"));
	if (rc < 0)
		return -1;
	char *bundle = paths_task_bundle(r->job->data_dir, id);
	char *expected = xasprintf("refs/heads/paddock/%s", id);
	struct bundle_limits lim = pipeline_handoff_limits(r);
	rc = bundle_tip(bundle, expected, r->base, &lim, tip, e);
	free(bundle);
	free(expected);
	if (rc < 0)
		return -1;
	return strcmp(tip, r->head) == 0 ? 1 : 0;
}

/* shell.h's keep: the reviewer's round, checked, imported and verified
 * as an agent's round is; r is at that round until gate_shell_kept. */
static int gate_shell_keep(void *arg, const char *actor, struct shell_round *k,
                           struct err *e)
{
	struct gate_shell *gs = arg;
	struct run *r = gs->r;
	char tip[41];
	int rc = gate_shell_handoff(gs, actor, tip, e);
	if (rc != 0)
		return rc;
	memcpy(gs->old_head, r->head, sizeof gs->old_head);
	gs->old_round = r->round;
	r->round++;
	pipeline_log(r, "hand-off: checking the reviewer's bundle and importing it into the "
	             "mirror");
	struct verify_run vr;
	struct err ve = {{0}};
	struct tests_after none = {0}, va = {0};
	char *problem = NULL;
	pipeline_verify_start(r, &vr, &ve);
	if (pipeline_handoff_import(r, e) < 0) {
		pipeline_verify_finish(r, &vr, 1, &va, &problem, &ve);
		pipeline_verify_end(&vr);
		r->round = gs->old_round;
		return -1;
	}
	struct gate_summary g = {0};
	pipeline_gate_prepare(r, &g);
	if (pipeline_verify_finish(r, &vr, 0, &va, &problem, &ve) < 0)
		pipeline_log(r, "verifying: the tests could not be verified: %s", ve.msg);
	pipeline_verify_end(&vr);
	k->summary = xasprintf(_("Changes a reviewer (%s) made in a shell in the task's sandbox "
	                         "and kept (paddock shell --keep)."), actor);
	k->gate = pipeline_gate_json(r, &g, gs->old_head, k->summary, gs->before, &none, &va);
	if (!k->gate)
		k->gate = xstrdup("{}");
	k->round = r->round;
	memcpy(k->from, gs->old_head, sizeof k->from);
	memcpy(k->head, r->head, sizeof k->head);
	k->tests = va.ran ? va.passed : -1;
	pipeline_tests_after_free(&va);
	free(problem);
	return 0;
}

/* shell.h's kept: the round is the task's now, or undone. */
static void gate_shell_kept(void *arg, const struct shell_round *k, int recorded)
{
	struct gate_shell *gs = arg;
	struct run *r = gs->r;
	(void)k;
	if (recorded) {
		pipeline_keep_round_bundle(r);
		return;
	}
	struct err e = {{0}};
	char *task_ref = mirror_task_ref(r->job->task->id);
	if (mirror_set_ref(r->mirror, task_ref, gs->old_head, &e) < 0)
		pipeline_log(r, "shell: %s", e.msg);
	free(task_ref);
	memcpy(r->head, gs->old_head, sizeof r->head);
	r->round = gs->old_round;
}

/* A client waits on lfd: its session.  -1 when the workspace could not
 * be put back afterwards. */
static int gate_shell(struct run *r, struct sandbox *sb, const struct template_tests *before,
                      int lfd)
{
	const struct pipeline_job *job = r->job;
	const struct task_row *t = job->task;
	const struct agent_conf *agent = config_find_agent(job->cfg, t->agent);
	struct gate_shell gs = { .r = r, .sb = sb, .before = before };
	/* The agent's environment but its round's: the gateway (its model
	 * endpoints, its proxy) and the agent's own settings. */
	const char *env[96];
	size_t n = 0;
	const char *const *aenv = agent ? adapter_env(agent) : NULL;
	const char *const *genv = r->gw ? gateway_env(r->gw) : NULL;
	for (size_t i = 0; aenv && aenv[i] && n < 48; i++)
		env[n++] = aenv[i];
	for (size_t i = 0; genv && genv[i] && n < 95; i++)
		env[n++] = genv[i];
	env[n] = NULL;
	struct shell_host h = {
		.be = job->be, .sb = sb, .data_dir = job->data_dir, .task_id = t->id,
		.head = r->head, .round = r->round, .log_fd = r->log_fd,
		.output_used = &r->output_used, .output_cap = job->cfg->limits.output, .env = env,
		.timeout = t->timeout > 0 ? t->timeout : job->cfg->limits.timeout,
		.cmd_fd = job->cmd_fd, .arg = &gs, .note = gate_shell_note,
		.reset = gate_shell_reset, .keep = gate_shell_keep, .kept = gate_shell_kept,
	};
	struct err e = {{0}};
	return shell_serve(lfd, &h, &e);
}
