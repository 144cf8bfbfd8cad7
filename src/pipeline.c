#include "autoconfig.h"
#include "pipeline.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "adapter.h"
#include "agent.h"
#include "buf.h"
#include "bundle.h"
#include "clock.h"
#include "fsx.h"
#include "gate.h"
#include "gateway.h"
#include "i18n.h"
#include "mirror.h"
#include "paths.h"
#include "pipeline_int.h"
#include "recipe.h"
#include "report.h"
#include "runner.h"
#include "sandbox.h"
#include "template.h"
#include "testreport.h"
#include "units.h"

volatile sig_atomic_t pipeline_cancelled;

static void on_term(int sig)
{
	(void)sig;
	pipeline_cancelled = 1;
	sandbox_request_cancel();
}

/* A marker line in the task log, so that a reader sees the steps. */
void pipeline_log(struct run *r, const char *fmt, ...)
{
	/* In the C locale: the log is read in any language ("2.56s"). */
	struct buf b = {0};
	va_list ap;
	buf_printf_c(&b, "[paddock %6.2fs] ", clock_mono() - r->started);
	va_start(ap, fmt);
	buf_vprintf_c(&b, fmt, ap);
	va_end(ap);
	buf_addc(&b, '\n');
	if (write(r->log_fd, b.data, b.len) < 0) {
		/* The log is best effort; the store has the outcome. */
	}
	buf_free(&b);
}

int pipeline_fail(struct run *r, const char *step, const char *msg)
{
	pipeline_log(r, "%s: %s", step, msg);
	/* A step that ended because the task was cancelled (its sandbox
	 * command stopped, a git child killed) ends the task as cancelled,
	 * not failed: the user asked for it. */
	if (pipeline_cancelled) {
		report_send(r->report_fd, REPORT_CANCELLED, NULL);
		return 1;
	}
	/* Every failure has its one-word reason: the step's, unless a
	 * closer one was given (pipeline_fail_reason). */
	if (!r->reason_sent)
		report_send(r->report_fd, REPORT_REASON, r->pod_reason ? r->pod_reason :
		            r->runner_failed ? RUNNER_REASON :
		            !strcmp(step, "running") ? "tool" :
		            !strcmp(step, "testing") ? "tests" : step);
	report_sendf(r->report_fd, REPORT_FAIL, "%s: %s", step, msg);
	return 1;
}

/* fail() with the one-word reason that `paddock show` and the API give. */
int pipeline_fail_reason(struct run *r, const char *reason, const char *step, const char *msg)
{
	if (!pipeline_cancelled) {
		report_send(r->report_fd, REPORT_REASON, r->pod_reason ? r->pod_reason :
		            r->runner_failed ? RUNNER_REASON : reason);
		r->reason_sent = 1;
	}
	return pipeline_fail(r, step, msg);
}

/* Names the limits a failed command ran into. */
static void describe_hits(const struct sandbox_result *res, const struct limits *l,
                          struct buf *out)
{
	char sz[32];
	if (res->hit & SANDBOX_HIT_MEMORY) {
		units_format_size(l->memory, sz, sizeof sz);
		buf_printf(out, _("; memory limit of %s reached (limits.memory)"), sz);
	}
	if (res->hit & SANDBOX_HIT_PIDS)
		buf_printf(out, _("; process limit of %ld reached (limits.pids)"), l->pids);
	if (res->hit & SANDBOX_HIT_DISK) {
		units_format_size(l->disk, sz, sizeof sz);
		buf_printf(out, _("; disk limit of %s reached (limits.disk)"), sz);
	}
}

/* Turns a sandbox result that is not a clean exit 0 into a message;
 * returns NULL for success. */
char *pipeline_result_problem(struct run *r, const char *what, const struct sandbox_result *res)
{
	const struct limits *l = &r->job->cfg->limits;
	struct buf b = {0};
	char sz[32];
	switch (res->end) {
	case SANDBOX_EXITED:
		/* A limit that was hit fails the task even when the command
		 * carried on and exited 0: its work may be cut short. */
		if (res->code == 0 && !res->hit)
			return NULL;
		if (res->code == 0)
			buf_printf(&b, _("%s ran into a limit"), what);
		else
			buf_printf(&b, _("%s exited with status %d"), what, res->code);
		break;
	case SANDBOX_SIGNALED:
		buf_printf(&b, _("%s was killed by signal %d"), what, res->code);
		/* SIGXCPU comes from the RLIMIT_CPU backstop of limits.cpus. */
		if (res->code == SIGXCPU)
			buf_printf(&b, _("; it used all the CPU time its share allows until the "
			                 "timeout (limits.cpus, limits.timeout)"));
		break;
	case SANDBOX_TIMEOUT:
		if (r->job->task->timeout > 0)
			buf_printf(&b, _("%s timed out: the round ran longer than the task's "
			                 "timeout of %.0f seconds (add --timeout)"), what, r->timeout);
		else
			buf_printf(&b, _("%s timed out: the task ran longer than %.0f seconds "
			                 "(limits.timeout)"), what, l->timeout);
		break;
	case SANDBOX_OUTPUT_LIMIT:
		units_format_size(l->output, sz, sizeof sz);
		buf_printf(&b, _("%s printed more than the output limit of %s (limits.output); "
		                 "it was stopped"), what, sz);
		break;
	case SANDBOX_CANCELLED:
		buf_printf(&b, _("%s was cancelled"), what);
		break;
	}
	describe_hits(res, l, &b);
	return buf_detach(&b);
}

int pipeline_sb_run(struct run *r, struct sandbox *sb, const char *const *argv,
                    const char *const *env, double deadline, struct sandbox_result *res,
                    struct err *e)
{
	struct sandbox_cmd cmd = {
		.argv = argv,
		.env = env,
		.out_fd = r->log_fd,
		.output_used = &r->output_used,
		.deadline = deadline,
	};
	int rc = r->job->be->run(sb, &cmd, res, e);
	if (rc < 0 && e)
		pipeline_sb_failed(r, e);
	return rc;
}

void pipeline_sb_failed(struct run *r, const struct err *e)
{
	/* Whatever step it was, the agent's side broke its sandbox's session:
	 * the task fails as the agent's doing (runner.h). */
	if (e->kind == ERR_RUNNER)
		r->runner_failed = 1;
	const char *pod = e->kind == ERR_POD_UNSCHEDULABLE ? "unschedulable"
	                  : e->kind == ERR_POD_IMAGE ? "image"
	                  : e->kind == ERR_POD_EVICTED ? "evicted"
	                  : e->kind == ERR_POD_MEMORY ? "memory" : NULL;
	if (pod)
		r->pod_reason = pod;
}

int pipeline_sb_copy_in(struct run *r, struct sandbox *sb, const char *host, const char *inside,
                        struct err *e)
{
	int rc = r->job->be->copy_in(sb, host, inside, e);
	if (rc < 0 && e)
		pipeline_sb_failed(r, e);
	return rc;
}

int pipeline_sb_copy_out(struct run *r, struct sandbox *sb, const char *inside, const char *host,
                         uint64_t cap, struct err *e)
{
	int rc = r->job->be->copy_out(sb, inside, host, cap, e);
	if (rc < 0 && e)
		pipeline_sb_failed(r, e);
	return rc;
}

/* Reads what was written to the log from offset on (at most the last
 * 256 KiB). */
static void read_log_since(struct run *r, off_t from, struct buf *out)
{
	off_t end = lseek(r->log_fd, 0, SEEK_END);
	if (end < 0 || end <= from)
		return;
	if (end - from > 256 * 1024)
		from = end - 256 * 1024;
	char *path = paths_task_log(r->job->data_dir, r->job->task->id);
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	free(path);
	if (fd < 0)
		return;
	buf_grow(out, (size_t)(end - from));
	ssize_t n = pread(fd, out->data + out->len, (size_t)(end - from), from);
	if (n > 0) {
		out->len += (size_t)n;
		out->data[out->len] = '\0';
	}
	close(fd);
}

void pipeline_tests_after_free(struct tests_after *ta)
{
	free(ta->tail);
	free(ta->log);
	free(ta->names);
	free(ta->long_tail);
	memset(ta, 0, sizeof *ta);
}

/* Fills ta from a finished test run whose output went to the log from
 * offset start on; *problem is the failure message or NULL. */
static void tests_outcome(struct run *r, const struct sandbox_result *res, off_t start,
                          struct tests_after *ta, char **problem)
{
	struct buf out = {0}, tail = {0};
	read_log_since(r, start, &out);
	testreport_tail(out.data ? out.data : "", out.len, 15, &tail);
	ta->ran = 1;
	ta->exited = res->end == SANDBOX_EXITED;
	ta->code = res->code;
	ta->tail = buf_detach(&tail);
	ta->log = paths_task_log(r->job->data_dir, r->job->task->id);
	char *p = pipeline_result_problem(r, _("the test command"), res);
	ta->passed = p == NULL;
	*problem = NULL;
	if (!p) {
		buf_free(&out);
		return;
	}
	struct buf msg = {0}, names = {0}, more = {0};
	int nfail = testreport_failures(out.data ? out.data : "", out.len, &names);
	testreport_tail(out.data ? out.data : "", out.len, 60, &more);
	ta->long_tail = buf_detach(&more);
	ta->names = nfail ? xstrdup(names.data) : NULL;
	if (res->end == SANDBOX_EXITED && nfail == 1)
		buf_printf(&msg, _("%s failed (the tests exited with status %d)"), names.data,
		           res->code);
	else if (res->end == SANDBOX_EXITED && nfail > 1)
		buf_printf(&msg, _("%d tests failed: %s (the tests exited with status %d)"),
		           nfail, names.data, res->code);
	else
		buf_adds(&msg, p);
	*problem = buf_detach(&msg);
	free(p);
	buf_free(&out);
	buf_free(&names);
}

/* Runs the repo's tests in the agent's sandbox (the agent's run);
 * *problem is the failure message or NULL. */
static int run_tests(struct run *r, struct sandbox *sb, struct tests_after *ta, char **problem,
                     struct err *e)
{
	const struct repo_conf *repo = &r->repo;
	*problem = NULL;
	memset(ta, 0, sizeof *ta);
	if (!repo->test) {
		pipeline_log(r, "testing: no test command configured for repo %s", repo->name);
		return 0;
	}
	pipeline_log(r, "testing: the agent's run, in its sandbox%s: %s",
	             r->job->task->test_cmd ? " (the task's test command)" : "", repo->test);
	off_t start = lseek(r->log_fd, 0, SEEK_END);
	const char *argv[] = { "/bin/sh", "-c", repo->test, NULL };
	static const char *const env[] = { "PADDOCK_STEP=test", NULL };
	struct sandbox_result res;
	if (pipeline_sb_run(r, sb, argv, env, r->deadline, &res, e) < 0)
		return -1;
	tests_outcome(r, &res, start, ta, problem);
	return 0;
}

void pipeline_verify_prepare(struct run *r, struct verify_run *vr, struct err *e)
{
	const struct repo_conf *repo = &r->repo;
	memset(vr, 0, sizeof *vr);
	vr->out = -1;
	if (!repo->test)
		return;
	vr->out = memfd_create("paddock-verify", MFD_CLOEXEC);
	if (vr->out < 0) {
		err_errno(e, _("cannot keep the verification's output"));
		vr->failed = 1;
		return;
	}
	char *bundle = paths_task_bundle(r->job->data_dir, r->job->task->id);
	struct template_ctx tc = { .data_dir = r->job->data_dir, .cfg = r->job->cfg,
	                           .be = r->job->be, .log_fd = vr->out, .report_fd = -1 };
	if (template_verify_prepare(&tc, repo, r->tpl, bundle, r->round, &vr->v, e) < 0)
		vr->failed = 1;
	free(bundle);
}

void pipeline_verify_go(struct run *r, struct verify_run *vr, struct err *e)
{
	if (!vr->v)
		return;
	char *bundle = paths_task_bundle(r->job->data_dir, r->job->task->id);
	char *expected = xasprintf("refs/heads/paddock/%s", r->job->task->id);
	struct bundle_limits lim = pipeline_handoff_limits(r);
	struct err ignored = {{0}};
	/* A bundle whose tip cannot be read is refused by the import, which
	 * fails the round: nothing to verify then. */
	if (bundle_tip(bundle, expected, r->base, &lim, vr->tip, &ignored) == 0) {
		vr->went = 1;
		if (template_verify_go(vr->v, vr->tip, e) < 0)
			vr->failed = 1;
	}
	free(bundle);
	free(expected);
}

void pipeline_verify_start(struct run *r, struct verify_run *vr, struct err *e)
{
	pipeline_verify_prepare(r, vr, e);
	pipeline_verify_go(r, vr, e);
}

void pipeline_verify_end(struct verify_run *vr)
{
	template_verify_free(vr->ending);
	vr->ending = NULL;
}

/* The verification's output into the task log, after its line. */
static void verify_log(struct run *r, struct verify_run *vr)
{
	pipeline_log(r, "verifying: the tests on a clean checkout of %.12s (a fresh sandbox, an "
	             "empty home): %s", vr->tip, r->repo.test);
	vr->start = lseek(r->log_fd, 0, SEEK_END);
	char chunk[65536];
	off_t at = 0;
	ssize_t n;
	while ((n = pread(vr->out, chunk, sizeof chunk, at)) > 0) {
		if (fsx_write_all(r->log_fd, chunk, (size_t)n) < 0)
			break;
		at += n;
	}
}

/* Waits for the verification: 0 with ta filled (nothing to fill when the
 * repo has no tests, or when stop says its result is not wanted: it is
 * stopped then), -1 with e. */
int pipeline_verify_finish(struct run *r, struct verify_run *vr, int stop, struct tests_after *ta,
                           char **problem, struct err *e)
{
	*problem = NULL;
	memset(ta, 0, sizeof *ta);
	int rc = 0;
	struct sandbox_result res;
	if (vr->v) {
		stop |= !vr->went;
		rc = template_verify_finish(vr->v, stop, &res, e);
		template_verify_free(vr->ending);
		vr->ending = vr->v;
		vr->v = NULL;
		if (vr->went)
			verify_log(r, vr);
	}
	if (vr->out >= 0)
		close(vr->out);
	vr->out = -1;
	if (vr->failed)
		return -1;
	if (!vr->went)
		return 0;
	if (stop) {
		pipeline_log(r, "verifying: stopped; the round ended without its result");
		return 0;
	}
	if (rc < 0)
		return -1;
	tests_outcome(r, &res, vr->start, ta, problem);
	pipeline_log(r, "verifying: %s", ta->passed ? "passed" : "failed");
	return 0;
}

/* The agent's own summary: what it wrote to $PADDOCK_SUMMARY_FILE, else
 * the last lines it printed this round. */
static char *agent_summary(struct run *r, struct sandbox *sb, off_t from, const char *final)
{
	struct err e = {{0}};
	char *path = paths_task_summary(r->job->data_dir, r->job->task->id);
	struct buf b = {0};
	if (r->job->be->copy_out(sb, SANDBOX_OUTDIR "/summary.md", path,
	                                        64 * 1024, &e) == 0 &&
	    fsx_read_file(path, 64 * 1024, &b, &e) == 0 && b.len) {
		free(path);
		return buf_detach(&b);
	}
	free(path);
	buf_reset(&b);
	/* The agent's final message, as its adapter read it. */
	if (final && *final)
		return xstrdup(final);
	struct buf out = {0};
	read_log_since(r, from, &out);
	/* Our own marker lines are not the agent's words. */
	struct buf mine = {0};
	for (char *line = out.data; line && *line;) {
		char *nl = strchr(line, '\n');
		size_t n = nl ? (size_t)(nl - line) : strlen(line);
		if (strncmp(line, "[paddock ", 9) != 0) {
			buf_add(&mine, line, n);
			buf_addc(&mine, '\n');
		}
		line += n + (nl != NULL);
	}
	testreport_tail(mine.data ? mine.data : "", mine.len, 10, &b);
	buf_free(&out);
	buf_free(&mine);
	return buf_detach(&b);
}

/* A later round without the kept sandbox: the workspace is rebuilt at the
 * task's head from its last bundle. */
static int rebuild_workspace(struct run *r, struct sandbox *sb, struct err *e)
{
	const struct task_row *t = r->job->task;
	/* The bundle of the round the task is at (the reviewed one), not the
	 * last one written: that may be a later round's that failed. */
	char *bundle = paths_task_round_bundle(r->job->data_dir, t->id, t->round - 1);
	if (access(bundle, F_OK) < 0) {
		free(bundle);
		bundle = paths_task_bundle(r->job->data_dir, t->id);
	}
	int rc = r->job->be->copy_in(sb, bundle, SANDBOX_OUTDIR "/resume.bundle", e);
	free(bundle);
	if (rc < 0)
		return -1;
	char *script = xasprintf("git fetch -q \"$PADDOCK_OUT/resume.bundle\" "
	                         "refs/heads/paddock/%s:refs/heads/paddock/%s && "
	                         "git checkout -q -f paddock/%s && "
	                         "rm -f \"$PADDOCK_OUT/resume.bundle\"", t->id, t->id, t->id);
	const char *argv[] = { "/bin/sh", "-c", script, NULL };
	struct sandbox_result res;
	rc = pipeline_sb_run(r, sb, argv, sandbox_git_env(), r->deadline, &res, e);
	free(script);
	if (rc < 0)
		return -1;
	char *p = pipeline_result_problem(r, _("restoring the task's work"), &res);
	if (p) {
		err_set(e, "%s", p);
		free(p);
		return -1;
	}
	pipeline_log(r, "preparing: the sandbox was gone; the workspace is rebuilt at %s", t->head);
	return 0;
}

/* What the agent sees in $PADDOCK_PROMPT_FILE this round: the task text in
 * round 1, the reviewer's notes in later rounds (the agent has the task
 * from its own conversation). */
static int write_prompt(struct run *r, struct sandbox *sb, const char *prompt, struct err *e)
{
	const struct task_row *t = r->job->task;
	if (r->round == 1)
		return fsx_write_file(prompt, t->text, strlen(t->text), 0644, e);
	char *notes = paths_task_notes(r->job->data_dir, t->id, r->round);
	struct buf b = {0};
	int rc = fsx_read_file(notes, 1 << 20, &b, e);
	free(notes);
	if (rc == 0)
		rc = fsx_write_file(prompt, b.data ? b.data : "", b.len, 0644, e);
	buf_free(&b);
	if (rc == 0 && sb && pipeline_sb_copy_in(r, sb, prompt, SANDBOX_PROMPT, e) < 0)
		rc = err_prefix(e, _("cannot put the next round's prompt into the sandbox"));
	return rc;
}

/* One round: agent, tests, hand-off, contract, gate summary.  Returns 0
 * when the task reached review, 1 when it ended (failed, done, cancelled). */
/* After the agent failed: when its command's program (or the script an
 * interpreter was given) is not there, a sentence that says so (free it),
 * else NULL.  Only on failure: it costs a sandbox command. */
static char *agent_missing(struct run *r, struct sandbox *sb, const struct agent_cmdline *cl)
{
	if (!cl->argc)
		return NULL;
	const char *script = cl->argc > 1 ? cl->argv[1] : "";
	const char *argv[] = { "/bin/sh", "-c",
		"p=$1\n"
		"case $p in\n"
		"*/*) [ -x \"$p\" ] || { [ -e \"$p\" ] && exit 126; exit 127; } ;;\n"
		"*) command -v \"$p\" >/dev/null 2>&1 || exit 127 ;;\n"
		"esac\n"
		"case ${p##*/} in\n"
		"sh|bash|dash|python|python3|node|perl|ruby)\n"
		"  case $2 in ''|-*|\\{*) ;; *) [ -e \"$2\" ] || exit 125 ;; esac ;;\n"
		"esac\n"
		"exit 0\n", "check", cl->argv[0], script, NULL };
	struct sandbox_result res;
	struct err e = {{0}};
	if (pipeline_sb_run(r, sb, argv, NULL, clock_mono() + 10, &res, &e) < 0 ||
	    res.end != SANDBOX_EXITED)
		return NULL;
	switch (res.code) {
	case 127:
		return xasprintf(_("the agent's command %s was not found in the sandbox; check the "
		                   "command of [agent \"%s\"] ('paddock config check' names the "
		                   "problem)"), cl->argv[0], r->job->task->agent);
	case 126:
		return xasprintf(_("the agent's command %s is not executable in the sandbox; check "
		                   "the command of [agent \"%s\"]"), cl->argv[0],
		                 r->job->task->agent);
	case 125:
		return xasprintf(_("the agent's command %s %s was not found: there is no %s in "
		                   "the sandbox; check the command and files of [agent \"%s\"]"),
		                 cl->argv[0], script, script, r->job->task->agent);
	}
	return NULL;
}

/* The round begins: its status, its log line, no summary of the last one. */
static int round_start(struct round *rd)
{
	struct run *r = rd->r;
	memcpy(rd->from, r->round == 1 || !r->head[0] ? r->base : r->head, sizeof rd->from);
	/* A fix round's work is judged with the round's it fixes. */
	if (!r->fix_used)
		memcpy(r->fix_from, rd->from, sizeof r->fix_from);
	if (r->round == 1)
		report_send(r->report_fd, REPORT_STATUS, "running");
	if (r->fix_used)
		pipeline_log(r, "running: round %d (fix round %d of %d), agent %s: %s", r->round,
		             r->fix_used, r->fix_max, rd->agent->name,
		             rd->agent->resume ? rd->agent->resume : rd->agent->command);
	else
		pipeline_log(r, "running: round %d, agent %s: %s", r->round, rd->agent->name,
		             r->round > 1 && rd->agent->resume ? rd->agent->resume
		                                               : rd->agent->command);
	if (r->round > 1) {
		/* A summary left by the last round must not speak for this one. */
		const char *rm[] = { "rm", "-f", SANDBOX_OUTDIR "/summary.md", NULL };
		if (pipeline_sb_run(r, rd->sb, rm, NULL, r->deadline, &rd->res, &rd->e) < 0)
			return pipeline_fail(r, "running", rd->e.msg);
	}
	return 0;
}

/* The agent's run: its command line with the prompt, and its environment
 * (the round's, its adapter's, the gateway's). */
static int round_agent(struct round *rd)
{
	struct run *r = rd->r;
	const struct agent_conf *agent = rd->agent;
	char round_env[32], attempt_env[32];
	snprintf(round_env, sizeof round_env, "PADDOCK_ROUND=%d", r->round);
	/* Round 1 runs again after paddock died under it (max-attempts). */
	snprintf(attempt_env, sizeof attempt_env, "PADDOCK_ATTEMPT=%d",
	         r->round == 1 && r->job->task->attempts > 0 ? r->job->task->attempts : 1);
	const char *agent_env[] = { "PADDOCK_STEP=agent", round_env, attempt_env,
	                            "PADDOCK_SUMMARY_FILE=" SANDBOX_OUTDIR "/summary.md", NULL };
	rd->start = lseek(r->log_fd, 0, SEEK_END);
	/* The prompt goes in as one argument where the command says {prompt}. */
	struct buf ptext = {0};
	if (fsx_read_file(r->prompt_path, 1 << 20, &ptext, &rd->e) < 0)
		return pipeline_fail(r, "running", rd->e.msg);
	char **argv = adapter_argv(rd->cl->argv, ptext.data ? ptext.data : "", r->session,
	                           agent->model);
	buf_free(&ptext);
	const char *const *aenv = adapter_env(agent);
	const char *const *genv = r->gw ? gateway_env(r->gw) : NULL;
	size_t nenv = 0;
	const char *env[96];
	for (size_t i = 0; agent_env[i] && nenv < 32; i++)
		env[nenv++] = agent_env[i];
	for (size_t i = 0; aenv[i] && nenv < 64; i++)
		env[nenv++] = aenv[i];
	for (size_t i = 0; genv && genv[i] && nenv < 95; i++)
		env[nenv++] = genv[i];
	env[nenv] = NULL;
	int rc = pipeline_sb_run(r, rd->sb, (const char *const *)argv, env, r->deadline, &rd->res,
	                         &rd->e);
	adapter_argv_free(argv);
	if (rc < 0)
		return pipeline_fail(r, "running", rd->e.msg);
	return 0;
}

/* What the agent's run came to, as its adapter reads it: a new session is
 * reported; a spent budget or a cancel ends the task. */
static int round_outcome(struct round *rd)
{
	struct run *r = rd->r;
	struct buf out = {0};
	read_log_since(r, rd->start, &out);
	const struct gateway_stats *gs = r->gw ? gateway_stats(r->gw) : NULL;
	adapter_read(rd->agent->kind, out.data ? out.data : "", out.len,
	             rd->res.end == SANDBOX_EXITED ? rd->res.code : -1, gs ? gs->last_status : 0,
	             gs ? gs->last_error : NULL, gs ? gs->last_message : NULL, &rd->ar);
	buf_free(&out);
	const char *session = rd->ar.session;
	if (session && (!r->session || strcmp(session, r->session) != 0)) {
		free(r->session);
		r->session = xstrdup(session);
		report_send(r->report_fd, REPORT_SESSION, session);
	}
	if (gs && gs->over_budget) {
		char usd[32];
		units_format_money(gs->cost, 4, usd, sizeof usd);
		char *msg = gs->unpriced_model[0]
			? xasprintf(_("the model %s has no price, so the task's budget in USD "
			              "cannot be kept; add [price \"%s\"] to the configuration, "
			              "or use limits.budget-tokens"),
			            gs->unpriced_model, gs->unpriced_model)
			: xasprintf(_("the task spent its budget (%s USD, %llu tokens; "
			              "limits.budget, limits.budget-tokens or add --budget)"),
			            usd, (unsigned long long)usage_tokens(&gs->total));
		pipeline_fail_reason(r, "budget", "running", msg);
		free(msg);
		return 1;
	}
	if (gs && gs->no_key[0]) {
		const struct endpoint_conf *ep = config_find_endpoint(r->job->cfg, gs->no_key);
		char *why = ep ? config_endpoint_key_missing(ep) : NULL;
		char *msg = why ? why : xasprintf(_("endpoint %s had no key when the task's gateway "
		                                   "started; set its key-env variable or key-file"),
		                                 gs->no_key);
		pipeline_fail_reason(r, "model-auth", "running", msg);
		free(msg);
		return 1;
	}
	if (rd->res.end == SANDBOX_CANCELLED || pipeline_cancelled) {
		report_send(r->report_fd, REPORT_CANCELLED, NULL);
		return 1;
	}
	return 0;
}

/* An agent that timed out or failed ends the task, with the closest
 * reason: a missing command, the model, how it ended, or its own word. */
static int round_failure(struct round *rd)
{
	struct run *r = rd->r;
	const struct adapter_result *ar = &rd->ar;
	const struct sandbox_result *res = &rd->res;
	rd->problem = pipeline_result_problem(r, _("the agent"), res);
	if (res->end == SANDBOX_TIMEOUT)
		return pipeline_fail_reason(r, "timeout", "running", rd->problem);
	if (ar->outcome == ADAPTER_OK && !rd->problem)
		return 0;
	struct buf why = {0};
	char *missing = NULL;
	if (ar->outcome != ADAPTER_MODEL && res->end == SANDBOX_EXITED && res->code != 0)
		missing = agent_missing(r, rd->sb, rd->cl);
	if (missing)
		buf_adds(&why, missing);
	else if (ar->outcome == ADAPTER_MODEL)
		buf_printf(&why, _("the agent's model call failed (%s)"), ar->reason);
	else if (rd->problem)
		buf_adds(&why, rd->problem);
	else
		buf_adds(&why, _("the agent reported a failure"));
	if (ar->error)
		buf_printf(&why, ": %.400s", ar->error);
	if (rd->agent->package && !r->agent_dir)
		buf_printf(&why, _("; the agent is not installed: run paddock agent install %s"),
		           rd->agent->name);
	pipeline_fail_reason(r, ar->reason ? ar->reason : "tool", "running", why.data);
	buf_free(&why);
	free(missing);
	return 1;
}

/* The agent finished: its summary of the round. */
static int round_summary(struct round *rd)
{
	struct run *r = rd->r;
	pipeline_log(r, "running: the agent finished");
	rd->summary = agent_summary(r, rd->sb, rd->start, rd->ar.final);
	adapter_result_free(&rd->ar);
	report_send(r->report_fd, REPORT_SUMMARY, rd->summary);
	return 0;
}

/* The tests in the agent's own sandbox. */
static int round_tests(struct round *rd)
{
	struct run *r = rd->r;
	report_send(r->report_fd, REPORT_STATUS, "testing");
	/* The work as the agent left it, committed and bundled before the
	 * tests write in its tree; its verification then runs beside them.
	 * Where this fails, the hand-off after the tests commits everything,
	 * as it would without tests (and says why here). */
	if (r->repo.test) {
		/* The verification's fresh sandbox is made meanwhile (not while
		 * the agent's starts: on cgroup v1 the two would wait on each
		 * other). */
		pipeline_verify_prepare(r, &rd->vr, &rd->ve);
		struct err ce = {{0}};
		int h = pipeline_handoff_run(r, rd->sb, NULL, HANDOFF_COMMIT, &ce);
		if (h == 0 || h == HANDOFF_NO_CHANGE) {
			rd->committed = 1;
			rd->hrc = h;
			if (h == 0)
				pipeline_verify_go(r, &rd->vr, &rd->ve);
		} else {
			pipeline_log(r, "hand-off: %s", ce.msg);
		}
	}
	if (run_tests(r, rd->sb, &rd->ta, &rd->test_problem, &rd->e) < 0)
		return pipeline_fail(r, "testing", rd->e.msg);
	if (pipeline_cancelled) {
		report_send(r->report_fd, REPORT_CANCELLED, NULL);
		return 1;
	}
	return 0;
}

/* The hand-off and the verification; pipeline_round_contract judges both.  Once
 * the bundle is out, the verification runs in its own process while this
 * one checks and imports the bundle, prepares the gate summary and copies
 * the home archive out: on two cores the verification costs no time of
 * its own unless the tests are slow. */
static int round_handoff(struct round *rd)
{
	struct run *r = rd->r;
	/* Where the work was bundled before the tests, the tree is put back
	 * as the agent left it once the round is judged (run_round). */
	if (!rd->committed) {
		/* Work is handed back even when the tests failed, so that
		 * `paddock diff` can show what the agent did. */
		if (!rd->vr.v && !rd->vr.failed)
			pipeline_verify_prepare(r, &rd->vr, &rd->ve);
		rd->hrc = pipeline_handoff_run(r, rd->sb, NULL, HANDOFF_ALL, &rd->e);
		if (rd->hrc == 0)
			pipeline_verify_go(r, &rd->vr, &rd->ve);
	}
	if (rd->hrc == 0) {
		pipeline_log(r, "hand-off: checking the bundle and importing it into the mirror");
		rd->hrc = pipeline_handoff_import(r, &rd->e);
	}
	if (rd->hrc == 0) {
		report_send(r->report_fd, REPORT_HEAD, r->head);
		pipeline_gate_prepare(r, &rd->gate);
		pipeline_home_fetch(r, rd->sb);
	}
	/* The imported commit's tests, on a clean checkout: this is the
	 * result the contract and the gate use.  A refused bundle fails the
	 * round whatever its verification found. */
	int vrc = pipeline_verify_finish(r, &rd->vr, rd->hrc != 0, &rd->va, &rd->verify_problem,
	                                 &rd->ve);
	if (rd->hrc == 0) {
		rd->vrc = vrc;
		if (vrc < 0)
			rd->e = rd->ve;
	}
	return 0;
}

/* The round reaches the gate without a change (a contract with
 * no-change): its head is the base, its summary what it came to. */
static void gate_nochange(struct round *rd)
{
	struct run *r = rd->r;
	memcpy(r->head, r->base, sizeof r->head);
	report_send(r->report_fd, REPORT_HEAD, r->head);
	pipeline_log(r, "hand-off: no change; the round reaches the gate with the agent's summary "
	             "(the task's contract)");
	pipeline_home_fetch(r, rd->sb);
}

/* The round's work is imported and its tests pass (or its contract
 * holds): the gate summary, and what a later round needs kept. */
static int round_gate(struct round *rd)
{
	struct run *r = rd->r;
	int nochange = rd->hrc == HANDOFF_NO_CHANGE;
	if (nochange)
		gate_nochange(rd);
	else if (rd->va.ran && !rd->ta.passed && rd->va.passed)
		pipeline_log(r, "verifying: the tests failed in the agent's sandbox but pass on a "
		             "clean checkout; the gate uses the clean result");
	if (!nochange)
		pipeline_log(r, "hand-off: imported %s as %s (round %d)", r->head,
		             r->job->task->branch, r->round);
	if (r->fix_used)
		pipeline_log(r, "testing: the tests pass after %d fix round%s", r->fix_used,
		             r->fix_used == 1 ? "" : "s");
	char *g = pipeline_gate_json(r, &rd->gate, rd->from, rd->summary, rd->before, &rd->ta,
	                             &rd->va);
	report_send(r->report_fd, REPORT_GATE, g ? g : "{}");
	free(g);
	/* Before the gate opens: whatever stops paddock from here on
	 * (a kill, a stop between rounds) finds the conversation and the
	 * round's work kept, so a later round resumes both. */
	pipeline_home_keep(r);
	if (!nochange)
		pipeline_keep_round_bundle(r);
	/* A later round that fails gets its own tries. */
	r->fix_used = 0;
	report_send(r->report_fd, REPORT_DONE, NULL);
	return 0;
}

/* One round's steps, in order; each returns 0 to go on, or ends the task
 * (it reported how: fail, cancelled, no change) and returns 1. */
static const struct round_step_def {
	const char *name;
	int (*run)(struct round *);
} round_steps[] = {
	{ "start", round_start },                /* status, log line, last round's summary gone */
	{ "agent", round_agent },                /* the agent's run */
	{ "outcome", round_outcome },            /* session, budget, cancel */
	{ "failure", round_failure },            /* timeout, the agent's failure */
	{ "summary", round_summary },            /* the agent's summary */
	{ "tests", round_tests },                /* the tests in its sandbox */
	{ "hand-off", round_handoff },           /* the hand-off and the verification */
	{ "contract", pipeline_round_contract }, /* what they came to */
	{ "gate", round_gate },                  /* the gate summary; the home and bundle kept */
};

static void round_free(struct round *rd)
{
	/* A round that ended before its hand-off: its verification's sandbox
	 * goes unused. */
	if (rd->vr.v || rd->vr.out >= 0) {
		struct tests_after unused = {0};
		char *problem = NULL;
		struct err ignored = {{0}};
		pipeline_verify_finish(rd->r, &rd->vr, 1, &unused, &problem, &ignored);
		pipeline_tests_after_free(&unused);
		free(problem);
	}
	pipeline_verify_end(&rd->vr);
	adapter_result_free(&rd->ar);
	free(rd->problem);
	free(rd->summary);
	free(rd->test_problem);
	free(rd->verify_problem);
	pipeline_tests_after_free(&rd->ta);
	pipeline_tests_after_free(&rd->va);
	gate_summary_free(&rd->gate);
	pipeline_home_discard(rd->r);
}

/* Runs one round to the gate: 0 when it got there, 1 when the task ended. */
static int run_round(struct run *r, struct sandbox *sb, const struct agent_cmdline *cl,
                     const struct template_tests *before)
{
	struct round rd = {
		.r = r, .sb = sb, .cl = cl, .before = before, .vr = { .out = -1 },
		.agent = config_find_agent(r->job->cfg, r->job->task->agent),
	};
	int rc = 0;
	for (size_t i = 0; i < sizeof round_steps / sizeof *round_steps && rc == 0; i++)
		rc = round_steps[i].run(&rd);
	/* The tree as the agent left it, for the next round and the
	 * reviewer's shell: what the tests wrote goes.  After the gate's
	 * report, so the reviewer does not wait for it; a sandbox whose tree
	 * cannot be put back is not kept (a later round starts a new one at
	 * the head). */
	if (rd.committed && (rc == 0 || rc == ROUND_FIX)) {
		struct err pe = {{0}};
		if (pipeline_handoff_run(r, sb, NULL, HANDOFF_AFTER_TESTS, &pe) < 0) {
			if (rc == ROUND_FIX) {
				rc = pipeline_fail(r, "hand-off", pe.msg);
			} else {
				pipeline_log(r, "hand-off: %s; the sandbox is not kept", pe.msg);
				r->spoiled = 1;
			}
		}
	}
	round_free(&rd);
	return rc;
}

/* What the steps of one task share, and steps_free releases. */
struct steps {
	struct run *r;
	const struct repo_conf *repo;
	const struct agent_conf *agent;
	struct err e;
	char *tpl;                    /* the template of the base */
	struct template_tests before; /* the tests on the base */
	struct agent_cmdline cl, rcl; /* the agent's command; its resume command */
	char *prompt;
	struct sandbox_file *files;
	size_t nfiles;
	struct sandbox_home_file *home;
	size_t nhome;
	struct sandbox_spec spec;
	struct gateway_policy gp;
	struct sandbox *sb;
	int kept;                     /* the sandbox was kept at the gate */
	char *problem;
};

/* The task's own base (--base): fetched and resolved in the mirror. */
static int base_of_task(struct steps *s)
{
	struct run *r = s->r;
	const struct task_row *t = r->job->task;
	char *what = NULL;
	pipeline_log(r, "preparing: fetching the remote's branches, tags and %s", t->base_ref);
	if (mirror_resolve_base(r->job->data_dir, s->repo, t->base_ref, r->base, &what,
	                        &s->e) < 0)
		return pipeline_fail(r, "preparing", s->e.msg);
	report_send(r->report_fd, REPORT_BASE, r->base);
	pipeline_log(r, "preparing: base commit %s (--base %s: %s)", r->base, t->base_ref, what);
	free(what);
	return 0;
}

/* The base: the round's work when resumed, a follow-up's parent's work,
 * else the task's own base or the repo's branch in a freshly updated
 * mirror. */
static int step_base(struct steps *s)
{
	struct run *r = s->r;
	const struct pipeline_job *job = r->job;
	const struct task_row *t = job->task;
	const struct repo_conf *repo = s->repo;
	if (!repo)
		return pipeline_fail(r, "preparing",
		                     _("the repo is no longer in the configuration; "
		                       "add it back or cancel the task"));
	if (!s->agent)
		return pipeline_fail(r, "preparing",
		                     _("the agent is no longer in the configuration; "
		                       "add it back or cancel the task"));
	r->mirror = mirror_path(job->data_dir, repo->name);
	r->round = job->resume_round ? job->resume_round : 1;
	if (job->resume_round) {
		if (!t->base || !t->head || strlen(t->base) != 40 || strlen(t->head) != 40)
			return pipeline_fail(r, "preparing",
			                     _("the task has no work to continue from"));
		memcpy(r->base, t->base, 41);
		memcpy(r->head, t->head, 41);
	} else if (t->follow_of && t->base && strlen(t->base) == 40) {
		/* A follow-up starts on its parent's work, which is in the
		 * mirror already: no fetch. */
		memcpy(r->base, t->base, 41);
		report_send(r->report_fd, REPORT_BASE, r->base);
		pipeline_log(r, "preparing: a follow-up of task %s: base commit %s (its work)",
		             t->follow_of, r->base);
	} else {
		/* Not its URL: the log goes to API clients too, and a URL may be a
		 * host path or carry a user name. */
		pipeline_log(r, "preparing: updating the mirror of %s", repo->name);
		if (mirror_update(job->data_dir, repo, &s->e) < 0)
			return pipeline_fail(r, "preparing", s->e.msg);
		if (t->base_ref)
			return base_of_task(s);
		if (mirror_resolve_branch(r->mirror, repo->branch, r->base, &s->e) < 0)
			return pipeline_fail(r, "preparing", s->e.msg);
		report_send(r->report_fd, REPORT_BASE, r->base);
		pipeline_log(r, "preparing: base commit %s (branch %s)", r->base, repo->branch);
	}
	return 0;
}

/* The base's template, and its tests before the agent's work. */
static int step_template(struct steps *s)
{
	struct run *r = s->r;
	const struct pipeline_job *job = r->job;
	struct template_ctx tc = { .data_dir = job->data_dir, .cfg = job->cfg, .be = job->be,
	                           .log_fd = r->log_fd, .report_fd = r->report_fd };
	if (template_ensure(&tc, s->repo, r->base, &s->tpl, &s->e) < 0 &&
	    (pipeline_sb_failed(r, &s->e), 1))
		return pipeline_fail_reason(r,
		                            strncmp(s->e.msg, "setup", 5) == 0 ? "setup" : "tool",
		                            "preparing", s->e.msg);
	r->tpl = s->tpl;
	if (template_tests_before(&tc, s->repo, r->base, s->tpl, &s->before, &s->e) < 0) {
		/* The gate says so; the task itself can go on. */
		pipeline_log(r, "preparing: %s", s->e.msg);
		memset(&s->before, 0, sizeof s->before);
	}
	if (pipeline_cancelled) {
		report_send(r->report_fd, REPORT_CANCELLED, NULL);
		return 1;
	}
	return 0;
}

/* The agent's command lines, its files and home, and the sandbox's spec. */
static int step_agent(struct steps *s)
{
	struct run *r = s->r;
	const struct pipeline_job *job = r->job;
	const struct task_row *t = job->task;
	const struct config *cfg = job->cfg;
	const struct agent_conf *agent = s->agent;
	if (agent_cmdline_parse(agent->command, &s->cl, &s->e) < 0)
		return pipeline_fail(r, "preparing", s->e.msg);
	if (agent->resume && agent_cmdline_parse(agent->resume, &s->rcl, &s->e) < 0)
		return pipeline_fail(r, "preparing", s->e.msg);
	s->prompt = paths_task_prompt(job->data_dir, t->id);
	/* The agent's script and listed files; a command that names another
	 * host file fails here, as config check says. */
	const char **hosts = NULL;
	if (agent_sandbox_files(agent->name, &s->cl, &s->rcl, agent->files, agent->nfiles,
	                        &hosts, &s->nfiles, &s->e) < 0)
		return pipeline_fail(r, "preparing", s->e.msg);
	s->files = xcalloc(s->nfiles + 1, sizeof *s->files);
	for (size_t i = 0; i < s->nfiles; i++)
		s->files[i].host = hosts[i];
	free(hosts);
	r->prompt_path = s->prompt;
	r->agent_dir = adapter_install_dir(job->data_dir, agent);
	s->spec = (struct sandbox_spec){
		.task_id = t->id,
		.ws = { .repo = t->repo, .base = r->base, .template_dir = s->tpl },
		.net = { .netns_fd = -1 },
		.limits = cfg->limits,
		.files = s->files,
		.nfiles = s->nfiles,
		.prompt_file = s->prompt,
		.agent_dir = r->agent_dir,
	};
	return 0;
}

/* The prompt, and the gateway the sandbox's network goes through. */
static int step_gateway(struct steps *s)
{
	struct run *r = s->r;
	const struct task_row *t = r->job->task;
	const struct config *cfg = r->job->cfg;
	/* The agent's only way out: its model endpoint and the repo's
	 * allowlist, through a gateway that holds the keys. */
	s->gp = (struct gateway_policy){
		.cfg = cfg, .step = "agent",
		.allow_hosts = (const char *const *)s->repo->allow_hosts,
		.nallow_hosts = s->repo->nallow_hosts,
		.model_endpoints = 1,
		.endpoint = s->agent->endpoint,
		.budget = t->budget >= 0 ? t->budget : cfg->limits.budget,
		.budget_tokens = cfg->limits.budget_tokens,
		.base = { t->usage.in, t->usage.out, t->usage.cache_read, t->usage.cache_write },
		.base_cost = t->usage.cost,
		.base_requests = t->usage.requests,
		.base_unpriced = !t->usage.priced,
		.be = r->job->be,
	};
	free(r->session);
	r->session = t->session ? xstrdup(t->session) : NULL;
	if (write_prompt(r, NULL, s->prompt, &s->e) < 0 ||
	    gateway_start(&s->gp, r->report_fd, &r->gw, &s->e) < 0)
		return pipeline_fail(r, "preparing", s->e.msg);
	gateway_attach(r->gw, &s->spec.net);
	/* The agent's settings name the gateway's ports. */
	s->home = adapter_home_files(cfg, s->agent, r->gw, &s->nhome);
	s->spec.home_files = s->home;
	s->spec.nhome_files = s->nhome;
	if (gateway_note(r->gw))
		pipeline_log(r, "preparing: %s", gateway_note(r->gw));
	/* Over budget, or a key missing: whatever runs in the sandbox is
	 * stopped. */
	sandbox_cancel_watch(&gateway_stats(r->gw)->stop);
	return 0;
}

/* The sandbox; the task's time starts with it. */
static int step_sandbox(struct steps *s)
{
	struct run *r = s->r;
	if (r->job->be->create(&s->sb, &s->spec, &s->e) < 0) {
		pipeline_sb_failed(r, &s->e);
		return pipeline_fail(r, "preparing", s->e.msg);
	}
	r->deadline = clock_mono() + r->timeout;
	return 0;
}

/* The workspace: rebuilt from the rounds before when resumed, else the
 * task branch at the base. */
static int step_workspace(struct steps *s)
{
	struct run *r = s->r;
	const struct task_row *t = r->job->task;
	/* A round that reached the gate without a change (its head is the
	 * base) has no bundle: the branch at the base is its work. */
	if (r->job->resume_round && strcmp(r->head, r->base) != 0) {
		if (rebuild_workspace(r, s->sb, &s->e) < 0)
			return pipeline_fail(r, "preparing", s->e.msg);
		return 0;
	}
	/* The task branch at the base, made current without touching
	 * the index or the files: constant time whatever the repo's
	 * size.  Written from the host where the backend can (nothing of
	 * the agent's is in the workspace yet), else by git inside. */
	char *branch = xasprintf("paddock/%s", t->id);
	struct err be = {{0}};
	int written = r->job->be->branch && r->job->be->branch(s->sb, branch, r->base, &be) == 0;
	free(branch);
	if (written)
		return 0;
	if (be.msg[0])
		pipeline_log(r, "preparing: %s; git makes the task branch instead", be.msg);
	char *script = xasprintf("git update-ref refs/heads/paddock/%s %s && "
	                         "git symbolic-ref HEAD refs/heads/paddock/%s", t->id,
	                         r->base, t->id);
	const char *co[] = { "/bin/sh", "-c", script, NULL };
	struct sandbox_result res;
	int rc = pipeline_sb_run(r, s->sb, co, sandbox_git_env(), r->deadline, &res, &s->e);
	free(script);
	if (rc < 0 ||
	    (s->problem = pipeline_result_problem(r, _("creating the task branch"), &res)))
		return pipeline_fail(r, "preparing", rc < 0 ? s->e.msg : s->problem);
	return 0;
}

/* The agent's home: back from the last round when resumed, from the
 * parent task for a follow-up; without it, no session to resume. */
static int step_home(struct steps *s)
{
	struct run *r = s->r;
	const struct pipeline_job *job = r->job;
	const struct task_row *t = job->task;
	if (job->resume_round) {
		if (pipeline_home_restore(r, s->sb)) {
			pipeline_home_session(r, t->id);
			pipeline_log(r, "preparing: the agent's home is back from the last round");
		} else if (r->session && s->agent->kind != AGENT_SCRIPT) {
			pipeline_log(r, "preparing: the agent's home was not kept; it starts a new "
			             "conversation with the notes");
			free(r->session);
			r->session = NULL;
		}
		return 0;
	}
	if (!t->follow_of)
		return 0;
	/* The parent's conversation: its home, and its session
	 * (copied when the task was added). */
	char *mine = paths_task_home(job->data_dir, t->id);
	if (access(mine, F_OK) < 0)
		pipeline_home_copy(r, t->follow_of, t->id, &s->e);
	free(mine);
	if (pipeline_home_restore(r, s->sb)) {
		pipeline_home_session(r, t->follow_of);
		pipeline_log(r, "preparing: the agent's home is back from task %s", t->follow_of);
	} else if (r->session && s->agent->kind != AGENT_SCRIPT) {
		pipeline_log(r, "preparing: task %s's agent home was not kept; it starts a "
		             "new conversation", t->follow_of);
		free(r->session);
		r->session = NULL;
	}
	return 0;
}

/* The rounds, with the gate between them; returns the last round's end. */
static int step_rounds(struct steps *s)
{
	struct run *r = s->r;
	const struct pipeline_job *job = r->job;
	const struct task_row *t = job->task;
	const struct agent_conf *agent = s->agent;
	for (;;) {
		/* A real agent resumes only with a session; without one it starts
		 * a new conversation (the work is on its branch). */
		int resume = (r->round > 1 || t->follow_of) && agent->resume &&
		             (agent->kind == AGENT_SCRIPT || r->session);
		int result = run_round(r, s->sb, resume ? &s->rcl : &s->cl, &s->before);
		if (result == ROUND_FIX) {
			/* The scheduler moved the task to running, round + 1; the
			 * prompt is in the sandbox (round_fix). */
			r->round++;
			r->deadline = clock_mono() + r->timeout;
			continue;
		}
		if (result != 0)
			return result;
		if (job->cfg->gate_timeout <= 0 || job->cmd_fd < 0 || r->spoiled)
			return 0;
		s->kept = 1;
		/* The home was saved when the round reached review; nothing
		 * runs in the sandbox while it waits at the gate. */
		int next = pipeline_gate_wait(r, s->sb, &s->before);
		if (!next)
			return 0;
		/* The scheduler moved the task to running, round `next`. */
		r->round = next;
		r->deadline = clock_mono() + r->timeout;
		if (write_prompt(r, s->sb, s->prompt, &s->e) < 0)
			return pipeline_fail(r, "running", s->e.msg);
	}
}

/* One task's steps, in order; each returns 0 to go on, or ends the task (it
 * reported how: fail, cancelled, ...) and returns the supervisor's status. */
static const struct task_step_def {
	const char *name;
	int (*run)(struct steps *);
} task_steps[] = {
	{ "base", step_base },           /* resumed, a follow-up's, or the mirror's branch */
	{ "template", step_template },   /* the template and the tests before */
	{ "agent", step_agent },         /* the agent's command lines and files */
	{ "gateway", step_gateway },     /* the prompt and the gateway */
	{ "sandbox", step_sandbox },     /* the sandbox */
	{ "workspace", step_workspace }, /* rebuilt, or the task branch */
	{ "home", step_home },           /* the agent's home and session */
	{ "rounds", step_rounds },       /* the rounds and the gate between them */
};

/* Whatever the steps made, whichever step ended the task. */
static void steps_free(struct steps *s)
{
	struct run *r = s->r;
	free(s->problem);
	/* The gateway is our child: it goes first, so that the sandbox's
	 * teardown does not wait for it. */
	sandbox_cancel_watch(NULL);
	gateway_stop(r->gw);
	r->gw = NULL;
	r->job->be->destroy(s->sb);
	adapter_home_free(s->home, s->nhome);
	free(r->agent_dir);
	r->agent_dir = NULL;
	free(r->session);
	r->session = NULL;
	if (s->kept)
		report_send(r->report_fd, REPORT_RELEASED, NULL);
	free(s->files);
	free(s->prompt);
	free(s->tpl);
	template_tests_free(&s->before);
	agent_cmdline_free(&s->cl);
	agent_cmdline_free(&s->rcl);
}

/* What the task asks of its rounds: its test command, timeout, fix
 * rounds and output contract, else the repo's and the configuration's. */
static int task_options(struct run *r, const struct repo_conf *repo, struct err *e)
{
	const struct task_row *t = r->job->task;
	const struct config *cfg = r->job->cfg;
	r->timeout = t->timeout > 0 ? t->timeout : cfg->limits.timeout;
	if (!repo)
		return 0;
	r->repo = *repo;
	if (t->test_cmd)
		r->repo.test = t->test_cmd;
	r->fix_max = t->fix_rounds >= 0 ? t->fix_rounds : repo->fix_rounds;
	if (recipe_contract_parse(t->contract, &r->clauses, &r->nclauses, e) < 0) {
		err_prefix(e, _("the task's output contract"));
		return -1;
	}
	return 0;
}

static int run_steps(struct run *r)
{
	const struct repo_conf *repo = config_find_repo(r->job->cfg, r->job->task->repo);
	struct steps s = {
		.r = r,
		.repo = repo ? &r->repo : NULL,
		.agent = config_find_agent(r->job->cfg, r->job->task->agent),
	};
	int rc = 0;
	if (task_options(r, repo, &s.e) < 0)
		rc = pipeline_fail(r, "preparing", s.e.msg);
	for (size_t i = 0; i < sizeof task_steps / sizeof *task_steps && rc == 0; i++)
		rc = task_steps[i].run(&s);
	steps_free(&s);
	recipe_clauses_free(r->clauses, r->nclauses);
	r->clauses = NULL;
	r->nclauses = 0;
	return rc;
}

int pipeline_run(const struct pipeline_job *job, int report_fd)
{
	struct run r = { .job = job, .report_fd = report_fd, .log_fd = -1,
	                 .started = clock_mono() };
	struct sigaction sa = { .sa_handler = on_term };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	struct err e = {{0}};
	r.task_dir = paths_task_dir(job->data_dir, job->task->id);
	if (fsx_mkdir_p(r.task_dir, 0700, &e) < 0) {
		report_send(report_fd, REPORT_REASON, "preparing");
		report_sendf(report_fd, REPORT_FAIL, "preparing: %s", e.msg);
		free(r.task_dir);
		return 1;
	}
	char *log = paths_task_log(job->data_dir, job->task->id);
	r.log_fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
	free(log);
	if (r.log_fd < 0) {
		report_send(report_fd, REPORT_REASON, "preparing");
		report_sendf(report_fd, REPORT_FAIL, "preparing: %s", strerror(errno));
		free(r.task_dir);
		return 1;
	}
	pipeline_log(&r, "task %s on repo %s with agent %s%s", job->task->id, job->task->repo,
	             job->task->agent, job->resume_round ? " (changes requested)" : "");
	int rc = run_steps(&r);
	close(r.log_fd);
	free(r.task_dir);
	free(r.mirror);
	return rc;
}

