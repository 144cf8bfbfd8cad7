#include "autoconfig.h"
#include "pipeline.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <jansson.h>
#include <poll.h>
#include "adapter.h"
#include "agent.h"
#include "buf.h"
#include "bundle.h"
#include "clock.h"
#include "diff.h"
#include "policy.h"
#include "fsx.h"
#include "gateway.h"
#include "i18n.h"
#include "mirror.h"
#include "paths.h"
#include "sandbox.h"
#include "template.h"
#include "testreport.h"
#include "units.h"

/* Exit codes of the hand-off script: the agent changed nothing; the
 * workspace is no longer a git repository. */
#define HANDOFF_NO_CHANGE 3
#define HANDOFF_NO_REPO 4

struct run {
	const struct pipeline_job *job;
	int report_fd;
	int log_fd;
	char *task_dir;
	uint64_t output_used;
	double deadline;
	double started;            /* monotonic time the supervisor began */
	int round;
	char base[41];
	char head[41];             /* the imported head of the latest round */
	char *mirror;
	struct gateway *gw;        /* the sandbox's way out, while it lives */
	char *session;             /* the agent's session id, for resuming */
	char *prompt_path;         /* the round's prompt (host file) */
	char *agent_dir;           /* the installed agent, or NULL */
	const char *tpl;           /* the template of the base (verification) */
	int reason_sent;           /* a failure reason was reported */
};

static volatile sig_atomic_t cancelled;

static void on_term(int sig)
{
	(void)sig;
	cancelled = 1;
	sandbox_request_cancel();
}

int pipeline_report_write(int fd, const char *text, size_t len)
{
	/* One event per line: newlines inside a message travel escaped. */
	struct buf out = {0};
	for (size_t i = 0; i < len; i++) {
		if (text[i] == '\n')
			buf_adds(&out, "\\n");
		else if (text[i] == '\\')
			buf_adds(&out, "\\\\");
		else
			buf_addc(&out, text[i]);
	}
	buf_addc(&out, '\n');
	int rc = fsx_write_all(fd, out.data, out.len);
	buf_free(&out);
	return rc;
}

static void report(struct run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void report(struct run *r, const char *fmt, ...)
{
	struct buf b = {0};
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	buf_grow(&b, (size_t)n + 2);
	va_start(ap, fmt);
	vsnprintf(b.data, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b.len = (size_t)n;
	pipeline_report_write(r->report_fd, b.data, b.len);
	buf_free(&b);
}

/* A marker line in the task log, so that a reader sees the steps. */
static void logline(struct run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void logline(struct run *r, const char *fmt, ...)
{
	struct buf b = {0};
	va_list ap;
	buf_printf(&b, "[paddock %6.2fs] ", clock_mono() - r->started);
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	buf_grow(&b, (size_t)n + 2);
	va_start(ap, fmt);
	vsnprintf(b.data + b.len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b.len += (size_t)n;
	buf_addc(&b, '\n');
	if (write(r->log_fd, b.data, b.len) < 0) {
		/* The log is best effort; the store has the outcome. */
	}
	buf_free(&b);
}

static int fail(struct run *r, const char *step, const char *msg)
{
	logline(r, "%s: %s", step, msg);
	/* A step that ended because the task was cancelled (its sandbox
	 * command stopped, a git child killed) ends the task as cancelled,
	 * not failed: the user asked for it. */
	if (cancelled) {
		report(r, "cancelled");
		return 1;
	}
	/* Every failure has its one-word reason: the step's, unless a
	 * closer one was given (fail_reason). */
	if (!r->reason_sent)
		report(r, "reason %s", !strcmp(step, "running") ? "tool" :
		       !strcmp(step, "testing") ? "tests" : step);
	report(r, "fail %s: %s", step, msg);
	return 1;
}

/* fail() with the one-word reason that `paddock show` and the API give. */
static int fail_reason(struct run *r, const char *reason, const char *step, const char *msg)
{
	if (!cancelled) {
		report(r, "reason %s", reason);
		r->reason_sent = 1;
	}
	return fail(r, step, msg);
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
static char *result_problem(struct run *r, const char *what, const struct sandbox_result *res)
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

static int sb_run(struct run *r, struct sandbox *sb, const char *const *argv,
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
	return sandbox_backend_default()->run(sb, &cmd, res, e);
}

/* The hand-off, inside the sandbox: commit what is left uncommitted, point
 * the task branch at the work and write the bundle.  It runs git in the
 * agent-writable tree, which is why it runs in the sandbox and never on the
 * host. */
static char *handoff_script(const char *id, const char *base)
{
	/* Runs with sandbox_git_env(): nothing of the agent's home (a global
	 * gitconfig's filters, aliases, includes) reaches these commands, and
	 * hooks and fsmonitor stay off whatever the repository says. */
	return xasprintf(
		"set -e\n"
		"cd " SANDBOX_WORKDIR "\n"
		"git rev-parse --verify -q HEAD >/dev/null 2>&1 || exit %d\n"
		/* The agent's processes are gone; its repository configuration
		 * (clean/smudge filters, includes, attributes files, ...) would run
		 * its code during the hand-off, outside its time limit: set it
		 * aside, in the common dir too (a planted commondir file). */
		"for d in \"$(git rev-parse --git-dir)\" \"$(git rev-parse --git-common-dir)\"; do\n"
		"  [ -f \"$d/config.agent\" ] || mv -f \"$d/config\" \"$d/config.agent\" 2>/dev/null || true\n"
		"  rm -f \"$d/config\" \"$d/config.worktree\" \"$d/info/attributes\"\n"
		"  printf '[core]\\n\\trepositoryformatversion = 0\\n\\tfilemode = true\\n"
		"\\tbare = false\\n\\tcheckStat = minimal\\n\\ttrustCtime = false\\n' "
		"> \"$d/config\"\n"
		"done\n"
		"git add -A\n"
		/* Tracked files the repo's set-up changed (template.h): where
		 * they still hold what set-up left, the commit keeps the base's
		 * version, so that only the agent's changes are committed. */
		"bl=\"$(git rev-parse --git-dir)/info/paddock-baseline\"\n"
		"if [ -s \"$bl\" ]; then\n"
		"  while IFS= read -r l; do\n"
		"    s=${l%%%% *}; p=${l#* }\n"
		"    c=$(git rev-parse -q --verify \":0:$p\" 2>/dev/null) || c=%040d\n"
		"    if [ \"$c\" = \"$s\" ]; then git --literal-pathspecs reset -q %s -- \"$p\"; fi\n"
		"  done < \"$bl\"\n"
		"fi\n"
		"if ! git diff --cached --quiet; then\n"
		"  git commit -q --no-verify --author 'paddock agent <agent@paddock.invalid>' "
		"-m 'Work of paddock task %s'\n"
		"fi\n"
		"git update-ref refs/heads/paddock/%s HEAD\n"
		/* Commits that add up to nothing are no change either. */
		"if [ \"$(git rev-list --count %s..refs/heads/paddock/%s)\" = 0 ] || "
		"git diff --quiet %s refs/heads/paddock/%s; then\n"
		"  exit %d\n"
		"fi\n"
		"rm -f " SANDBOX_OUTDIR "/result.bundle\n"
		"git bundle create -q " SANDBOX_OUTDIR "/result.bundle refs/heads/paddock/%s ^%s\n",
		HANDOFF_NO_REPO, 0, base, id, id, base, id, base, id, HANDOFF_NO_CHANGE, id, base);
}

/* Returns 0 with r->head set, HANDOFF_NO_CHANGE, or -1 with a message. */
static int handoff(struct run *r, struct sandbox *sb, struct err *e)
{
	const struct task_row *t = r->job->task;
	const struct config *cfg = r->job->cfg;
	char *script = handoff_script(t->id, r->base);
	const char *argv[] = { "/bin/sh", "-c", script, NULL };
	struct sandbox_result res;
	/* The hand-off gets its own few minutes: a task that used all its time
	 * still hands back what it did. */
	double deadline = clock_mono() + 300;
	logline(r, "hand-off: committing and bundling the work");
	int rc = sb_run(r, sb, argv, sandbox_git_env(), deadline, &res, e);
	free(script);
	if (rc < 0)
		return -1;
	if (res.end == SANDBOX_EXITED && res.code == HANDOFF_NO_CHANGE)
		return HANDOFF_NO_CHANGE;
	if (res.end == SANDBOX_EXITED && res.code == HANDOFF_NO_REPO)
		return err_set(e, _("the agent removed or broke the git repository in %s; there "
		                    "is no work to hand back"), SANDBOX_WORKDIR);
	char *p = result_problem(r, _("the hand-off"), &res);
	if (p) {
		err_set(e, "%s", p);
		free(p);
		return -1;
	}
	char *bundle = paths_join(r->task_dir, "result.bundle", NULL);
	char *round_ref = xasprintf("refs/paddock/rounds/%s/%d", t->id, r->round);
	char *task_ref = mirror_task_ref(t->id);
	char *expected = xasprintf("refs/heads/paddock/%s", t->id);
	char head[41];
	/* A new file, never the last round's rewritten: that one may be
	 * linked as round-N.bundle (keep_round_bundle). */
	unlink(bundle);
	rc = sandbox_backend_default()->copy_out(sb, SANDBOX_OUTDIR "/result.bundle", bundle,
	                                         cfg->limits.bundle, e);
	if (rc == 0) {
		struct bundle_limits lim = {
			.max_bytes = cfg->limits.bundle,
			.max_objects = 1000000,
			.max_blob = cfg->limits.bundle,
		};
		logline(r, "hand-off: checking the bundle and importing it into the mirror");
		/* An earlier attempt of this round (interrupted, or failed
		 * after its import) left its ref: it moves aside. */
		char *aside = xasprintf("refs/paddock/failed/%s/%d", t->id, r->round);
		rc = mirror_retire_ref(r->mirror, round_ref, aside, e);
		free(aside);
		if (rc == 0)
			rc = bundle_import(r->mirror, bundle, expected, r->base, round_ref, &lim,
			                   head, e);
	}
	/* refs/paddock/tasks/<id> follows the latest round. */
	if (rc == 0 && (rc = mirror_set_ref(r->mirror, task_ref, head, e)) == 0)
		memcpy(r->head, head, sizeof head);
	free(bundle);
	free(round_ref);
	free(task_ref);
	free(expected);
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
	char *path = paths_join(r->task_dir, "log", NULL);
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

struct tests_after {
	int ran, passed, exited, code;
	char *tail;
	char *log;                 /* where the whole output is, or NULL */
};

static void tests_after_free(struct tests_after *ta)
{
	free(ta->tail);
	free(ta->log);
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
	ta->log = paths_join(r->task_dir, "log", NULL);
	char *p = result_problem(r, _("the test command"), res);
	ta->passed = p == NULL;
	*problem = NULL;
	if (!p) {
		buf_free(&out);
		return;
	}
	struct buf msg = {0}, names = {0};
	int nfail = testreport_failures(out.data ? out.data : "", out.len, &names);
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
	const struct repo_conf *repo = config_find_repo(r->job->cfg, r->job->task->repo);
	*problem = NULL;
	memset(ta, 0, sizeof *ta);
	if (!repo->test) {
		logline(r, "testing: no test command configured for repo %s", repo->name);
		return 0;
	}
	logline(r, "testing: the agent's run, in its sandbox: %s", repo->test);
	off_t start = lseek(r->log_fd, 0, SEEK_END);
	const char *argv[] = { "/bin/sh", "-c", repo->test, NULL };
	static const char *const env[] = { "PADDOCK_STEP=test", NULL };
	struct sandbox_result res;
	if (sb_run(r, sb, argv, env, r->deadline, &res, e) < 0)
		return -1;
	tests_outcome(r, &res, start, ta, problem);
	return 0;
}

/* The result the gate and the contract use: the repo's tests on a clean
 * checkout of the imported head, in a fresh sandbox over the template
 * with an empty home and nothing of the agent's (template_verify). */
static int verify_tests(struct run *r, struct tests_after *ta, char **problem, struct err *e)
{
	const struct repo_conf *repo = config_find_repo(r->job->cfg, r->job->task->repo);
	*problem = NULL;
	memset(ta, 0, sizeof *ta);
	if (!repo->test)
		return 0;
	logline(r, "verifying: the tests on a clean checkout of %.12s (a fresh sandbox, an "
	        "empty home): %s", r->head, repo->test);
	off_t start = lseek(r->log_fd, 0, SEEK_END);
	char *bundle = paths_join(r->task_dir, "result.bundle", NULL);
	struct sandbox_result res;
	int rc = template_verify(r->job->cfg, repo, r->tpl, r->job->task->id, bundle, r->head,
	                         r->log_fd, &res, e);
	free(bundle);
	if (rc < 0)
		return -1;
	tests_outcome(r, &res, start, ta, problem);
	logline(r, "verifying: %s", ta->passed ? "passed" : "failed");
	return 0;
}

/* The agent's own summary: what it wrote to $PADDOCK_SUMMARY_FILE, else
 * the last lines it printed this round. */
static char *agent_summary(struct run *r, struct sandbox *sb, off_t from, const char *final)
{
	struct err e = {{0}};
	char *path = paths_join(r->task_dir, "summary", NULL);
	struct buf b = {0};
	if (sandbox_backend_default()->copy_out(sb, SANDBOX_OUTDIR "/summary.md", path,
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

/* One test run for the gate: whether it passed, its exit status, the
 * tail of its output and where the whole log is. */
static json_t *tests_json(int ran, int passed, int exited, int code, const char *tail,
                          const char *log)
{
	if (!ran)
		return json_pack("{s:b}", "ran", 0);
	json_t *j = json_pack("{s:b,s:b,s:s,s:s}", "ran", 1, "passed", passed, "tail",
	                      tail ? tail : "", "log", log ? log : "");
	json_object_set_new(j, "exit", exited ? json_integer(code) : json_null());
	return j;
}

static const char *action_name(enum policy_action a)
{
	return a == POLICY_BLOCK ? "block" : a == POLICY_WARN ? "warn" : "off";
}

/* USD the task may spend: its own budget, else the configuration's; 0 for
 * none. */
static double task_budget(const struct run *r)
{
	const struct task_row *t = r->job->task;
	return t->budget >= 0 ? t->budget : r->job->cfg->limits.budget;
}

/* The gate summary of this round (gate.h reads it back). */
static char *gate_json(struct run *r, const char *from, const char *summary,
                       const struct template_tests *before, const struct tests_after *agent,
                       const struct tests_after *after)
{
	const struct task_row *t = r->job->task;
	const struct repo_conf *repo = config_find_repo(r->job->cfg, t->repo);
	struct err e = {{0}};
	json_t *g = json_object();
	json_object_set_new(g, "round", json_integer(r->round));
	json_object_set_new(g, "branch", json_string(t->branch));
	json_object_set_new(g, "from", json_string(from));
	json_object_set_new(g, "head", json_string(r->head));
	json_object_set_new(g, "summary", json_string(summary ? summary : ""));
	struct buf stat = {0};
	if (diff_stat(r->mirror, r->base, r->head, &stat, &e) < 0)
		buf_printf(&stat, "(%s)", e.msg);
	json_object_set_new(g, "diffstat", json_string(stat.data ? stat.data : ""));
	buf_free(&stat);
	/* "after" is the verified result (a clean checkout of the head);
	 * "agent" what the tests did in the agent's own sandbox. */
	json_t *ja = tests_json(after->ran, after->passed, after->exited, after->code,
	                        after->tail, after->log);
	if (after->ran)
		json_object_set_new(ja, "verified", json_true());
	json_object_set_new(g, "tests", json_pack("{s:o,s:o,s:o,s:b}",
		"before", tests_json(before->ran, before->passed, before->exited, before->code,
		                     before->tail, before->log),
		"after", ja,
		"agent", tests_json(agent->ran, agent->passed, agent->exited, agent->code,
		                    agent->tail, agent->log),
		"mismatch", agent->ran && after->ran && agent->passed != after->passed));
	json_t *fa = json_array();
	struct policy_finding *f = NULL;
	size_t nf = 0;
	struct policy_secrets sec = policy_secrets_collect(r->job->cfg);
	if (policy_check(r->mirror, r->base, r->head, repo, &sec, &f, &nf, &e) < 0) {
		/* A check that cannot run blocks: nothing unchecked is pushed. */
		json_array_append_new(fa, json_pack("{s:s,s:s,s:s,s:s,s:s}", "name", "policy:error",
		                                    "rule", "policy", "action", "block", "path", "",
		                                    "detail", e.msg));
	}
	free((void *)sec.values);
	for (size_t i = 0; i < nf; i++)
		json_array_append_new(fa, json_pack("{s:s,s:s,s:s,s:s,s:s}", "name", f[i].name,
		                                    "rule", config_policy_rule_name(f[i].rule),
		                                    "action", action_name(f[i].action),
		                                    "path", f[i].path, "detail", f[i].detail));
	policy_findings_free(f, nf);
	json_object_set_new(g, "findings", fa);
	json_object_set_new(g, "contract", json_pack("{s:b,s:b,s:b}", "change", 1, "tests", 1,
	                                             "bundle", 1));
	if (r->gw) {
		const struct gateway_stats *gs = gateway_stats(r->gw);
		json_object_set_new(g, "usage", json_pack("{s:I,s:I,s:I,s:I,s:f,s:I,s:b,s:f}",
			"input", (json_int_t)gs->total.input, "output", (json_int_t)gs->total.output,
			"cache_read", (json_int_t)gs->total.cache_read,
			"cache_write", (json_int_t)gs->total.cache_write, "cost", gs->cost,
			"requests", (json_int_t)gs->requests, "priced", !gs->unpriced,
			"budget", task_budget(r)));
		json_object_set_new(g, "egress", json_pack("{s:I,s:I}", "allowed",
			(json_int_t)gs->allowed, "refused", (json_int_t)gs->refused));
	}
	char *s = json_dumps(g, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(g);
	return s;
}

/* Waits at the gate for the scheduler: returns the round to run next, or 0
 * to tear down (teardown, timeout, cancel, or the scheduler gone). */
static int gate_wait(struct run *r)
{
	const struct pipeline_job *job = r->job;
	double until = clock_mono() + job->cfg->gate_timeout;
	struct buf in = {0};
	int next = 0;
	logline(r, "review: the sandbox is kept for the reviewer (paddock.gate-timeout)");
	report(r, "kept");
	while (!cancelled && job->cmd_fd >= 0) {
		double left = until - clock_mono();
		if (left <= 0) {
			logline(r, "review: gate timeout; the sandbox is torn down, the branch stays");
			break;
		}
		struct pollfd pfd = { .fd = job->cmd_fd, .events = POLLIN };
		int n = poll(&pfd, 1, left > 1 ? 1000 : (int)(left * 1000) + 1);
		if (n <= 0)
			continue;
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
	buf_free(&in);
	return next;
}

/* The agent's home outlives its sandbox: archived beside the task (inside
 * the sandbox; the host only copies the bytes) when the sandbox goes after
 * a round that reached review, and unpacked into the home of a sandbox
 * rebuilt for a later round, so that the agent's session, and with it the
 * conversation, can be resumed. */
#define HOME_ARCHIVE_CAP (256ULL << 20)

static void home_save(struct run *r, struct sandbox *sb)
{
	struct err e = {{0}};
	struct sandbox_result res;
	const char *argv[] = { "/bin/sh", "-c",
		"tar -C \"$HOME\" --exclude=./.cache --exclude=./.npm -czf " SANDBOX_OUTDIR
		"/home.tgz . 2>/dev/null", NULL };
	char *host = paths_join(r->task_dir, "home.tgz", NULL);
	char *tmp = paths_join(r->task_dir, "home.tgz.tmp", NULL);
	/* Written beside and renamed: a kill mid-copy leaves the last
	 * round's archive whole. */
	if (!(sb_run(r, sb, argv, NULL, clock_mono() + 60, &res, &e) == 0 && res.end == SANDBOX_EXITED &&
	      res.code == 0 &&
	      sandbox_backend_default()->copy_out(sb, SANDBOX_OUTDIR "/home.tgz", tmp,
	                                          HOME_ARCHIVE_CAP, &e) == 0 &&
	      rename(tmp, host) == 0)) {
		unlink(tmp);
		logline(r, "hand-off: the agent's home could not be kept%s%s", e.msg[0] ? ": " : "",
		        e.msg);
	} else {
		/* The session that goes with this home: a later round that
		 * fails may leave the task's session pointing elsewhere. */
		char *sess = paths_join(r->task_dir, "home.session", NULL);
		if (r->session)
			fsx_write_file(sess, r->session, strlen(r->session), 0600, &e);
		else
			unlink(sess);
		free(sess);
	}
	free(tmp);
	free(host);
}

/* The session saved with the home archive of task_dir, when there is one:
 * it replaces r->session. */
static void home_session(struct run *r, const char *task_dir)
{
	char *sess = paths_join(task_dir, "home.session", NULL);
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
static void keep_round_bundle(struct run *r)
{
	char name[32];
	snprintf(name, sizeof name, "round-%d.bundle", r->round);
	char *bundle = paths_join(r->task_dir, "result.bundle", NULL);
	char *keep = paths_join(r->task_dir, name, NULL);
	unlink(keep);
	if (link(bundle, keep) < 0)
		logline(r, "hand-off: cannot keep %s: %s", keep, strerror(errno));
	free(bundle);
	free(keep);
}

/* 1 when the home was put back. */
static int home_restore(struct run *r, struct sandbox *sb)
{
	struct err e = {{0}};
	struct sandbox_result res;
	char *host = paths_join(r->task_dir, "home.tgz", NULL);
	struct stat st;
	int ok = 0;
	if (stat(host, &st) == 0 &&
	    sandbox_backend_default()->copy_in(sb, host, SANDBOX_OUTDIR "/home.tgz", &e) == 0) {
		const char *argv[] = { "/bin/sh", "-c",
			"tar -C \"$HOME\" -xzf " SANDBOX_OUTDIR "/home.tgz; s=$?; rm -f "
			SANDBOX_OUTDIR "/home.tgz; exit $s", NULL };
		ok = sb_run(r, sb, argv, NULL, clock_mono() + 60, &res, &e) == 0 &&
		     res.end == SANDBOX_EXITED && res.code == 0;
	}
	free(host);
	return ok;
}

/* A later round without the kept sandbox: the workspace is rebuilt at the
 * task's head from its last bundle. */
static int rebuild_workspace(struct run *r, struct sandbox *sb, struct err *e)
{
	const struct task_row *t = r->job->task;
	/* The bundle of the round the task is at (the reviewed one), not the
	 * last one written: that may be a later round's that failed. */
	char name[32];
	snprintf(name, sizeof name, "round-%d.bundle", t->round - 1);
	char *bundle = paths_join(r->task_dir, name, NULL);
	if (access(bundle, F_OK) < 0) {
		free(bundle);
		bundle = paths_join(r->task_dir, "result.bundle", NULL);
	}
	int rc = sandbox_backend_default()->copy_in(sb, bundle, SANDBOX_OUTDIR "/resume.bundle", e);
	free(bundle);
	if (rc < 0)
		return -1;
	char *script = xasprintf("git fetch -q " SANDBOX_OUTDIR
	                         "/resume.bundle refs/heads/paddock/%s:refs/heads/paddock/%s && "
	                         "git checkout -q -f paddock/%s && "
	                         "rm -f " SANDBOX_OUTDIR "/resume.bundle", t->id, t->id, t->id);
	const char *argv[] = { "/bin/sh", "-c", script, NULL };
	struct sandbox_result res;
	rc = sb_run(r, sb, argv, sandbox_git_env(), r->deadline, &res, e);
	free(script);
	if (rc < 0)
		return -1;
	char *p = result_problem(r, _("restoring the task's work"), &res);
	if (p) {
		err_set(e, "%s", p);
		free(p);
		return -1;
	}
	logline(r, "preparing: the sandbox was gone; the workspace is rebuilt at %s", t->head);
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
	char name[32];
	snprintf(name, sizeof name, "notes-%d", r->round);
	char *notes = paths_join(r->task_dir, name, NULL);
	struct buf b = {0};
	int rc = fsx_read_file(notes, 1 << 20, &b, e);
	free(notes);
	if (rc == 0)
		rc = fsx_write_file(prompt, b.data ? b.data : "", b.len, 0644, e);
	buf_free(&b);
	if (rc == 0 && sb)
		rc = sandbox_backend_default()->copy_in(sb, prompt, SANDBOX_PROMPT, e);
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
	if (sb_run(r, sb, argv, NULL, clock_mono() + 10, &res, &e) < 0 ||
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

static int run_round(struct run *r, struct sandbox *sb, const struct agent_cmdline *cl,
                     const struct template_tests *before)
{
	const struct task_row *t = r->job->task;
	const struct agent_conf *agent = config_find_agent(r->job->cfg, t->agent);
	struct err e = {{0}};
	char from[41];
	memcpy(from, r->round == 1 ? r->base : r->head, sizeof from);
	if (r->round == 1)
		report(r, "status running");
	logline(r, "running: round %d, agent %s: %s", r->round, agent->name,
	        r->round > 1 && agent->resume ? agent->resume : agent->command);
	char round_env[32], attempt_env[32];
	snprintf(round_env, sizeof round_env, "PADDOCK_ROUND=%d", r->round);
	/* Round 1 runs again after paddock died under it (max-attempts). */
	snprintf(attempt_env, sizeof attempt_env, "PADDOCK_ATTEMPT=%d",
	         r->round == 1 && r->job->task->attempts > 0 ? r->job->task->attempts : 1);
	const char *agent_env[] = { "PADDOCK_STEP=agent", round_env, attempt_env,
	                            "PADDOCK_SUMMARY_FILE=" SANDBOX_OUTDIR "/summary.md", NULL };
	struct sandbox_result res;
	if (r->round > 1) {
		/* A summary left by the last round must not speak for this one. */
		const char *rm[] = { "rm", "-f", SANDBOX_OUTDIR "/summary.md", NULL };
		if (sb_run(r, sb, rm, NULL, r->deadline, &res, &e) < 0)
			return fail(r, "running", e.msg);
	}
	off_t start = lseek(r->log_fd, 0, SEEK_END);
	/* The prompt goes in as one argument where the command says {prompt}. */
	struct buf ptext = {0};
	if (fsx_read_file(r->prompt_path, 1 << 20, &ptext, &e) < 0)
		return fail(r, "running", e.msg);
	char **argv = adapter_argv(cl->argv, ptext.data ? ptext.data : "", r->session,
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
	int rc = sb_run(r, sb, (const char *const *)argv, env, r->deadline, &res, &e);
	adapter_argv_free(argv);
	if (rc < 0)
		return fail(r, "running", e.msg);

	struct buf out = {0};
	read_log_since(r, start, &out);
	const struct gateway_stats *gs = r->gw ? gateway_stats(r->gw) : NULL;
	struct adapter_result ar;
	adapter_read(agent->kind, out.data ? out.data : "", out.len,
	             res.end == SANDBOX_EXITED ? res.code : -1, gs ? gs->last_status : 0,
	             gs ? gs->last_error : NULL, gs ? gs->last_message : NULL, &ar);
	buf_free(&out);
	if (ar.session && (!r->session || strcmp(ar.session, r->session) != 0)) {
		free(r->session);
		r->session = xstrdup(ar.session);
		report(r, "session %s", ar.session);
	}
	if (gs && gs->over_budget) {
		char *msg = gs->unpriced_model[0]
			? xasprintf(_("the model %s has no price, so the task's budget in USD "
			              "cannot be kept; add [price \"%s\"] to the configuration, "
			              "or use limits.budget-tokens"),
			            gs->unpriced_model, gs->unpriced_model)
			: xasprintf(_("the task spent its budget (%.4f USD, %llu tokens; "
			              "limits.budget, limits.budget-tokens or add --budget)"),
			            gs->cost, (unsigned long long)usage_tokens(&gs->total));
		fail_reason(r, "budget", "running", msg);
		free(msg);
		adapter_result_free(&ar);
		return 1;
	}
	if (res.end == SANDBOX_CANCELLED || cancelled) {
		adapter_result_free(&ar);
		report(r, "cancelled");
		return 1;
	}
	char *problem = result_problem(r, _("the agent"), &res);
	if (res.end == SANDBOX_TIMEOUT) {
		fail_reason(r, "timeout", "running", problem);
		free(problem);
		adapter_result_free(&ar);
		return 1;
	}
	if (ar.outcome != ADAPTER_OK || problem) {
		struct buf why = {0};
		char *missing = NULL;
		if (ar.outcome != ADAPTER_MODEL && res.end == SANDBOX_EXITED && res.code != 0)
			missing = agent_missing(r, sb, cl);
		if (missing)
			buf_adds(&why, missing);
		else if (ar.outcome == ADAPTER_MODEL)
			buf_printf(&why, _("the agent's model call failed (%s)"), ar.reason);
		else if (problem)
			buf_adds(&why, problem);
		else
			buf_adds(&why, _("the agent reported a failure"));
		if (ar.error)
			buf_printf(&why, ": %.400s", ar.error);
		if (agent->package && !r->agent_dir)
			buf_printf(&why, _("; the agent is not installed: run paddock agent install %s"),
			           agent->name);
		fail_reason(r, ar.reason ? ar.reason : "tool", "running", why.data);
		buf_free(&why);
		free(missing);
		free(problem);
		adapter_result_free(&ar);
		return 1;
	}
	logline(r, "running: the agent finished");
	char *summary = agent_summary(r, sb, start, ar.final);
	adapter_result_free(&ar);
	report(r, "summary %s", summary);

	report(r, "status testing");
	struct tests_after ta, va;
	char *test_problem = NULL, *verify_problem = NULL;
	memset(&va, 0, sizeof va);
	if (run_tests(r, sb, &ta, &test_problem, &e) < 0) {
		free(summary);
		return fail(r, "testing", e.msg);
	}
	if (cancelled) {
		free(summary);
		free(test_problem);
		tests_after_free(&ta);
		report(r, "cancelled");
		return 1;
	}
	/* Work is handed back even when the tests failed, so that `paddock
	 * diff` can show what the agent did. */
	int hrc = handoff(r, sb, &e);
	int result = 1;
	struct buf why = {0};
	if (hrc == 0)
		report(r, "head %s", r->head);
	/* The imported commit's tests, on a clean checkout: this is the
	 * result the contract and the gate use. */
	int vrc = hrc == 0 ? verify_tests(r, &va, &verify_problem, &e) : 0;
	if (hrc == 0 && vrc == 0 && cancelled) {
		report(r, "cancelled");
	} else if (hrc == HANDOFF_NO_CHANGE && !test_problem) {
		/* The agent found nothing to change: its explanation ends the
		 * task, with no branch. */
		logline(r, "hand-off: no change; the agent's explanation ends the task");
		report(r, "nochange");
	} else if (hrc < 0) {
		/* Name every missing part: the failed tests too. */
		buf_adds(&why, e.msg);
		if (test_problem)
			buf_printf(&why, _("; tests failed: %s"), test_problem);
		fail(r, "hand-off", why.data);
	} else if (vrc < 0) {
		/* Unverified tests are not a result a reviewer can trust. */
		buf_printf(&why, _("the tests could not be verified on a clean checkout: %s"), e.msg);
		fail(r, "testing", why.data);
	} else if (hrc == HANDOFF_NO_CHANGE || (va.ran ? !va.passed : test_problem != NULL)) {
		/* The output contract: name every part that is missing. */
		const char *failed = va.ran ? verify_problem : test_problem;
		const char *tail = va.ran ? va.tail : ta.tail;
		buf_adds(&why, _("contract not satisfied: "));
		if (hrc == HANDOFF_NO_CHANGE)
			buf_adds(&why, _("no change; "));
		if (va.ran && ta.passed)
			buf_printf(&why, _("the tests pass in the agent's sandbox but fail on a clean "
			                   "checkout of its commit: %s"), failed);
		else
			buf_printf(&why, _("tests failed: %s"), failed);
		if (tail && *tail)
			buf_printf(&why, "\n%s", tail);
		if (hrc == 0) {
			/* The work was imported: its gate summary says what the
			 * reviewer would have seen, the mismatch first. */
			char *g = gate_json(r, from, summary, before, &ta, &va);
			report(r, "gate %s", g ? g : "{}");
			free(g);
		}
		fail_reason(r, hrc == HANDOFF_NO_CHANGE ? "contract" : "tests", "testing", why.data);
	} else {
		if (va.ran && !ta.passed)
			logline(r, "verifying: the tests failed in the agent's sandbox but pass on a "
			        "clean checkout; the gate uses the clean result");
		logline(r, "hand-off: imported %s as %s (round %d)", r->head, t->branch, r->round);
		char *g = gate_json(r, from, summary, before, &ta, &va);
		report(r, "gate %s", g ? g : "{}");
		free(g);
		/* Before the gate opens: whatever stops paddock from here on
		 * (a kill, a stop between rounds) finds the conversation and the
		 * round's work kept, so a later round resumes both. */
		home_save(r, sb);
		keep_round_bundle(r);
		report(r, "done");
		result = 0;
	}
	buf_free(&why);
	free(summary);
	free(test_problem);
	free(verify_problem);
	tests_after_free(&ta);
	tests_after_free(&va);
	return result;
}

static int run_steps(struct run *r)
{
	const struct pipeline_job *job = r->job;
	const struct task_row *t = job->task;
	const struct config *cfg = job->cfg;
	struct err e = {{0}};
	const struct repo_conf *repo = config_find_repo(cfg, t->repo);
	const struct agent_conf *agent = config_find_agent(cfg, t->agent);

	if (!repo)
		return fail(r, "preparing", _("the repo is no longer in the configuration; "
		                              "add it back or cancel the task"));
	if (!agent)
		return fail(r, "preparing", _("the agent is no longer in the configuration; "
		                              "add it back or cancel the task"));
	r->mirror = mirror_path(job->data_dir, repo->name);
	r->round = job->resume_round ? job->resume_round : 1;
	if (job->resume_round) {
		if (!t->base || !t->head || strlen(t->base) != 40 || strlen(t->head) != 40)
			return fail(r, "preparing", _("the task has no work to continue from"));
		memcpy(r->base, t->base, 41);
		memcpy(r->head, t->head, 41);
	} else if (t->follow_of && t->base && strlen(t->base) == 40) {
		/* A follow-up starts on its parent's work, which is in the
		 * mirror already: no fetch. */
		memcpy(r->base, t->base, 41);
		report(r, "base %s", r->base);
		logline(r, "preparing: a follow-up of task %s: base commit %s (its work)",
		        t->follow_of, r->base);
	} else {
		logline(r, "preparing: updating the mirror of %s from %s", repo->name, repo->url);
		if (mirror_update(job->data_dir, repo, &e) < 0)
			return fail(r, "preparing", e.msg);
		if (mirror_resolve_branch(r->mirror, repo->branch, r->base, &e) < 0)
			return fail(r, "preparing", e.msg);
		report(r, "base %s", r->base);
		logline(r, "preparing: base commit %s (branch %s)", r->base, repo->branch);
	}
	char *tpl = NULL;
	template_set_report_fd(r->report_fd);
	if (template_ensure(job->data_dir, cfg, repo, r->base, r->log_fd, &tpl, &e) < 0)
		return fail_reason(r, strncmp(e.msg, "setup", 5) == 0 ? "setup" : "tool", "preparing",
		                   e.msg);
	r->tpl = tpl;
	struct template_tests before;
	if (template_tests_before(job->data_dir, cfg, repo, r->base, tpl, &before, &e) < 0) {
		/* The gate says so; the task itself can go on. */
		logline(r, "preparing: %s", e.msg);
		memset(&before, 0, sizeof before);
	}
	if (cancelled) {
		free(tpl);
		template_tests_free(&before);
		report(r, "cancelled");
		return 1;
	}

	struct agent_cmdline cl, rcl;
	memset(&rcl, 0, sizeof rcl);
	if (agent_cmdline_parse(agent->command, &cl, &e) < 0) {
		free(tpl);
		template_tests_free(&before);
		return fail(r, "preparing", e.msg);
	}
	if (agent->resume && agent_cmdline_parse(agent->resume, &rcl, &e) < 0) {
		free(tpl);
		template_tests_free(&before);
		agent_cmdline_free(&cl);
		return fail(r, "preparing", e.msg);
	}
	char *prompt = paths_join(r->task_dir, "prompt", NULL);
	/* The agent's script and listed files; a command that names another
	 * host file fails here, as config check says. */
	const char **hosts = NULL;
	size_t nfiles = 0;
	if (agent_sandbox_files(agent->name, &cl, &rcl, agent->files, agent->nfiles, &hosts,
	                        &nfiles, &e) < 0) {
		free(prompt);
		free(tpl);
		template_tests_free(&before);
		agent_cmdline_free(&cl);
		agent_cmdline_free(&rcl);
		return fail(r, "preparing", e.msg);
	}
	struct sandbox_file *files = xcalloc(nfiles + 1, sizeof *files);
	for (size_t i = 0; i < nfiles; i++)
		files[i].host = hosts[i];
	free(hosts);
	r->prompt_path = prompt;
	r->agent_dir = adapter_install_dir(job->data_dir, agent);
	size_t nhome = 0;
	struct sandbox_home_file *home = adapter_home_files(cfg, agent, &nhome);
	struct sandbox_spec spec = {
		.task_id = t->id,
		.lower = tpl,
		.uid = cfg->sandbox_uid,
		.gid = cfg->sandbox_gid,
		.limits = cfg->limits,
		.files = files,
		.nfiles = nfiles,
		.prompt_file = prompt,
		.agent_dir = r->agent_dir,
		.home_files = home,
		.nhome_files = nhome,
	};
	/* The agent's only way out: its model endpoint and the repo's
	 * allowlist, through a gateway that holds the keys. */
	struct gateway_policy gp = {
		.cfg = cfg, .step = "agent",
		.allow_hosts = (const char *const *)repo->allow_hosts,
		.nallow_hosts = repo->nallow_hosts,
		.model_endpoints = 1,
		.endpoint = agent->endpoint,
		.budget = t->budget >= 0 ? t->budget : cfg->limits.budget,
		.budget_tokens = cfg->limits.budget_tokens,
		.base = { t->usage.in, t->usage.out, t->usage.cache_read, t->usage.cache_write },
		.base_cost = t->usage.cost,
		.base_requests = t->usage.requests,
		.base_unpriced = !t->usage.priced,
	};
	free(r->session);
	r->session = t->session ? xstrdup(t->session) : NULL;
	const struct sandbox_backend *be = sandbox_backend_default();
	struct sandbox *sb = NULL;
	int result = 1, kept = 0;
	char *problem = NULL;
	if (write_prompt(r, NULL, prompt, &e) < 0 || gateway_start(&gp, r->report_fd, &r->gw, &e) < 0) {
		result = fail(r, "preparing", e.msg);
		goto out;
	}
	gateway_sandbox_spec(r->gw, &spec);
	if (gateway_note(r->gw))
		logline(r, "preparing: %s", gateway_note(r->gw));
	/* Over budget: whatever runs in the sandbox is stopped. */
	sandbox_cancel_watch(&gateway_stats(r->gw)->over_budget);
	if (be->create(&sb, &spec, &e) < 0) {
		result = fail(r, "preparing", e.msg);
		goto out;
	}
	r->deadline = clock_mono() + cfg->limits.timeout;
	if (job->resume_round) {
		if (rebuild_workspace(r, sb, &e) < 0) {
			result = fail(r, "preparing", e.msg);
			goto out;
		}
		if (home_restore(r, sb)) {
			home_session(r, r->task_dir);
			logline(r, "preparing: the agent's home is back from the last round");
		} else if (r->session && agent->kind != AGENT_SCRIPT) {
			logline(r, "preparing: the agent's home was not kept; it starts a new "
			        "conversation with the notes");
			free(r->session);
			r->session = NULL;
		}
	} else {
		/* The task branch at the base, made current without touching
		 * the index or the files: constant time whatever the repo's
		 * size. */
		char *script = xasprintf("git update-ref refs/heads/paddock/%s %s && "
		                         "git symbolic-ref HEAD refs/heads/paddock/%s", t->id,
		                         r->base, t->id);
		const char *co[] = { "/bin/sh", "-c", script, NULL };
		struct sandbox_result res;
		int rc = sb_run(r, sb, co, sandbox_git_env(), r->deadline, &res, &e);
		free(script);
		if (rc < 0 || (problem = result_problem(r, _("creating the task branch"), &res))) {
			result = fail(r, "preparing", rc < 0 ? e.msg : problem);
			goto out;
		}
		if (t->follow_of) {
			/* The parent's conversation: its home, and its session
			 * (copied when the task was added). */
			char *mine = paths_join(r->task_dir, "home.tgz", NULL);
			char *theirs = paths_join(job->data_dir, "tasks", t->follow_of, "home.tgz",
			                          NULL);
			if (access(mine, F_OK) < 0)
				fsx_copy_regular(theirs, mine, HOME_ARCHIVE_CAP, 0600, &e);
			free(mine);
			free(theirs);
			if (home_restore(r, sb)) {
				char *pdir = paths_join(job->data_dir, "tasks", t->follow_of, NULL);
				home_session(r, pdir);
				free(pdir);
				logline(r, "preparing: the agent's home is back from task %s",
				        t->follow_of);
			} else if (r->session && agent->kind != AGENT_SCRIPT) {
				logline(r, "preparing: task %s's agent home was not kept; it starts a "
				        "new conversation", t->follow_of);
				free(r->session);
				r->session = NULL;
			}
		}
	}
	for (;;) {
		/* A real agent resumes only with a session; without one it starts
		 * a new conversation (the work is on its branch). */
		int resume = (r->round > 1 || t->follow_of) && agent->resume &&
		             (agent->kind == AGENT_SCRIPT || r->session);
		const struct agent_cmdline *use = resume ? &rcl : &cl;
		result = run_round(r, sb, use, &before);
		if (result != 0)
			break;
		if (cfg->gate_timeout <= 0 || job->cmd_fd < 0)
			break;
		kept = 1;
		/* The home was saved when the round reached review; nothing
		 * runs in the sandbox while it waits at the gate. */
		int next = gate_wait(r);
		if (!next)
			break;
		/* The scheduler moved the task to running, round `next`. */
		r->round = next;
		r->deadline = clock_mono() + cfg->limits.timeout;
		if (write_prompt(r, sb, prompt, &e) < 0) {
			result = fail(r, "running", e.msg);
			break;
		}
	}
out:
	free(problem);
	/* The gateway is our child: it goes first, so that the sandbox's
	 * teardown does not wait for it. */
	sandbox_cancel_watch(NULL);
	gateway_stop(r->gw);
	r->gw = NULL;
	be->destroy(sb);
	adapter_home_free(home, nhome);
	free(r->agent_dir);
	r->agent_dir = NULL;
	free(r->session);
	r->session = NULL;
	if (kept)
		report(r, "released");
	free(files);
	free(prompt);
	free(tpl);
	template_tests_free(&before);
	agent_cmdline_free(&cl);
	agent_cmdline_free(&rcl);
	return result;
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
	r.task_dir = paths_join(job->data_dir, "tasks", job->task->id, NULL);
	if (fsx_mkdir_p(r.task_dir, 0700, &e) < 0) {
		report(&r, "reason preparing");
		report(&r, "fail preparing: %s", e.msg);
		free(r.task_dir);
		return 1;
	}
	char *log = paths_join(r.task_dir, "log", NULL);
	r.log_fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
	free(log);
	if (r.log_fd < 0) {
		report(&r, "reason preparing");
		report(&r, "fail preparing: %s", strerror(errno));
		free(r.task_dir);
		return 1;
	}
	logline(&r, "task %s on repo %s with agent %s%s", job->task->id, job->task->repo,
	        job->task->agent, job->resume_round ? " (changes requested)" : "");
	int rc = run_steps(&r);
	close(r.log_fd);
	free(r.task_dir);
	free(r.mirror);
	return rc;
}
