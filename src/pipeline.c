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
#include "agent.h"
#include "buf.h"
#include "bundle.h"
#include "fsx.h"
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
};

static volatile sig_atomic_t cancelled;

static void on_term(int sig)
{
	(void)sig;
	cancelled = 1;
	sandbox_request_cancel();
}

static double mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
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
	/* One event per line: newlines inside a message travel escaped. */
	struct buf out = {0};
	for (size_t i = 0; i < b.len; i++) {
		if (b.data[i] == '\n')
			buf_adds(&out, "\\n");
		else if (b.data[i] == '\\')
			buf_adds(&out, "\\\\");
		else
			buf_addc(&out, b.data[i]);
	}
	buf_addc(&out, '\n');
	for (size_t off = 0; off < out.len;) {
		ssize_t w = write(r->report_fd, out.data + off, out.len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		off += (size_t)w;
	}
	buf_free(&out);
	buf_free(&b);
}

/* A marker line in the task log, so that a reader sees the steps. */
static void logline(struct run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void logline(struct run *r, const char *fmt, ...)
{
	struct buf b = {0};
	va_list ap;
	buf_printf(&b, "[paddock %.2fs] ", mono() - r->started);
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
	report(r, "fail %s: %s", step, msg);
	return 1;
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
	return xasprintf(
		"set -e\n"
		"cd " SANDBOX_WORKDIR "\n"
		"g() { git -c core.hooksPath=/dev/null -c core.fsmonitor= \"$@\"; }\n"
		"g rev-parse --verify -q HEAD >/dev/null 2>&1 || exit %d\n"
		/* The agent's processes are gone; its repository configuration
		 * (clean/smudge filters, attributes files, ...) would run its code
		 * during the hand-off, outside its time limit: set it aside. */
		"gd=$(g rev-parse --git-dir)\n"
		"mv -f \"$gd/config\" \"$gd/config.agent\" 2>/dev/null || true\n"
		"printf '[core]\\n\\trepositoryformatversion = 0\\n\\tfilemode = true\\n"
		"\\tbare = false\\n\\tcheckStat = minimal\\n\\ttrustCtime = false\\n' "
		"> \"$gd/config\"\n"
		"rm -f \"$gd/info/attributes\"\n"
		"g add -A\n"
		"if ! g diff --cached --quiet; then\n"
		"  g commit -q --no-verify --author 'paddock agent <agent@paddock.invalid>' "
		"-m 'Work of paddock task %s'\n"
		"fi\n"
		"g update-ref refs/heads/paddock/%s HEAD\n"
		"if [ \"$(g rev-list --count %s..refs/heads/paddock/%s)\" = 0 ]; then\n"
		"  exit %d\n"
		"fi\n"
		"g bundle create -q " SANDBOX_OUTDIR "/result.bundle refs/heads/paddock/%s ^%s\n",
		HANDOFF_NO_REPO, id, id, base, id, HANDOFF_NO_CHANGE, id, base);
}

static int handoff(struct run *r, struct sandbox *sb, const char *base, char head[41],
                   struct err *e)
{
	const struct task_row *t = r->job->task;
	const struct config *cfg = r->job->cfg;
	char *script = handoff_script(t->id, base);
	const char *argv[] = { "/bin/sh", "-c", script, NULL };
	struct sandbox_result res;
	/* The hand-off gets its own few minutes: a task that used all its time
	 * still hands back what it did. */
	double deadline = mono() + 300;
	logline(r, "hand-off: committing and bundling the work");
	int rc = sb_run(r, sb, argv, NULL, deadline, &res, e);
	free(script);
	if (rc < 0)
		return -1;
	if (res.end == SANDBOX_EXITED && res.code == HANDOFF_NO_CHANGE)
		return err_set(e, _("the agent made no change"));
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
	char *mirror = mirror_path(r->job->data_dir, t->repo);
	char *ref = mirror_task_ref(t->id);
	char *expected = xasprintf("refs/heads/paddock/%s", t->id);
	rc = sandbox_backend_default()->copy_out(sb, SANDBOX_OUTDIR "/result.bundle", bundle,
	                                         cfg->limits.bundle, e);
	if (rc == 0) {
		struct bundle_limits lim = {
			.max_bytes = cfg->limits.bundle,
			.max_objects = 1000000,
			.max_blob = cfg->limits.bundle,
		};
		logline(r, "hand-off: checking the bundle and importing it into the mirror");
		rc = bundle_import(mirror, bundle, expected, base, ref, &lim, head, e);
	}
	free(bundle);
	free(mirror);
	free(ref);
	free(expected);
	return rc;
}

/* Reads the output the tests wrote to the log (from offset on, at most the
 * last 256 KiB) for the failure message. */
static void read_test_output(struct run *r, off_t from, struct buf *out)
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

static int run_tests(struct run *r, struct sandbox *sb, char **problem, struct err *e)
{
	const struct repo_conf *repo = config_find_repo(r->job->cfg, r->job->task->repo);
	*problem = NULL;
	if (!repo->test) {
		logline(r, "testing: no test command configured for repo %s", repo->name);
		return 0;
	}
	logline(r, "testing: %s", repo->test);
	off_t start = lseek(r->log_fd, 0, SEEK_END);
	const char *argv[] = { "/bin/sh", "-c", repo->test, NULL };
	static const char *const env[] = { "PADDOCK_STEP=test", NULL };
	struct sandbox_result res;
	if (sb_run(r, sb, argv, env, r->deadline, &res, e) < 0)
		return -1;
	char *p = result_problem(r, _("the tests"), &res);
	if (!p)
		return 0;
	struct buf out = {0}, msg = {0}, names = {0};
	read_test_output(r, start, &out);
	int nfail = testreport_failures(out.data ? out.data : "", out.len, &names);
	if (res.end == SANDBOX_EXITED && nfail == 1)
		buf_printf(&msg, _("%s failed (the tests exited with status %d)"), names.data,
		           res.code);
	else if (res.end == SANDBOX_EXITED && nfail > 1)
		buf_printf(&msg, _("%d tests failed: %s (the tests exited with status %d)"),
		           nfail, names.data, res.code);
	else
		buf_adds(&msg, p);
	buf_addc(&msg, '\n');
	testreport_tail(out.data ? out.data : "", out.len, 15, &msg);
	*problem = buf_detach(&msg);
	free(p);
	buf_free(&out);
	buf_free(&names);
	return 0;
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
	logline(r, "preparing: updating the mirror of %s from %s", repo->name, repo->url);
	if (mirror_update(job->data_dir, repo, &e) < 0)
		return fail(r, "preparing", e.msg);
	char base[41];
	char *mirror = mirror_path(job->data_dir, repo->name);
	int rc = mirror_resolve_branch(mirror, repo->branch, base, &e);
	free(mirror);
	if (rc < 0)
		return fail(r, "preparing", e.msg);
	report(r, "base %s", base);
	logline(r, "preparing: base commit %s (branch %s)", base, repo->branch);
	char *tpl = NULL;
	if (template_ensure(job->data_dir, cfg, repo, base, r->log_fd, &tpl, &e) < 0)
		return fail(r, "preparing", e.msg);
	if (cancelled)
		return free(tpl), report(r, "cancelled"), 1;

	struct agent_cmdline cl;
	if (agent_cmdline_parse(agent->command, &cl, &e) < 0) {
		free(tpl);
		return fail(r, "preparing", e.msg);
	}
	char *prompt = paths_join(r->task_dir, "prompt", NULL);
	if (fsx_write_file(prompt, t->text, strlen(t->text), 0644, &e) < 0) {
		free(tpl);
		free(prompt);
		agent_cmdline_free(&cl);
		return fail(r, "preparing", e.msg);
	}
	struct sandbox_file *files = xcalloc(cl.nfiles + 1, sizeof *files);
	for (size_t i = 0; i < cl.nfiles; i++)
		files[i].host = cl.files[i];
	struct sandbox_spec spec = {
		.task_id = t->id,
		.lower = tpl,
		.uid = cfg->sandbox_uid,
		.gid = cfg->sandbox_gid,
		.limits = cfg->limits,
		.files = files,
		.nfiles = cl.nfiles,
		.prompt_file = prompt,
	};
	const struct sandbox_backend *be = sandbox_backend_default();
	struct sandbox *sb = NULL;
	int result = 1;
	char *problem = NULL;
	if (be->create(&sb, &spec, &e) < 0) {
		result = fail(r, "preparing", e.msg);
		goto out;
	}
	r->deadline = mono() + cfg->limits.timeout;
	/* The task branch at the base, made current without touching the
	 * index or the files: constant time whatever the repo's size. */
	char *script = xasprintf("git update-ref refs/heads/paddock/%s %s && "
	                         "git symbolic-ref HEAD refs/heads/paddock/%s", t->id, base, t->id);
	const char *co[] = { "/bin/sh", "-c", script, NULL };
	struct sandbox_result res;
	rc = sb_run(r, sb, co, NULL, r->deadline, &res, &e);
	free(script);
	if (rc < 0 || (problem = result_problem(r, _("creating the task branch"), &res))) {
		result = fail(r, "preparing", rc < 0 ? e.msg : problem);
		goto out;
	}

	report(r, "status running");
	logline(r, "running: agent %s: %s", agent->name, agent->command);
	static const char *const agent_env[] = { "PADDOCK_STEP=agent", NULL };
	if (sb_run(r, sb, (const char *const *)cl.argv, agent_env, r->deadline, &res, &e) < 0) {
		result = fail(r, "running", e.msg);
		goto out;
	}
	if (res.end == SANDBOX_CANCELLED || cancelled) {
		report(r, "cancelled");
		goto out;
	}
	if ((problem = result_problem(r, _("the agent"), &res))) {
		result = fail(r, "running", problem);
		goto out;
	}
	logline(r, "running: the agent finished");

	report(r, "status testing");
	char *test_problem = NULL;
	if (run_tests(r, sb, &test_problem, &e) < 0) {
		result = fail(r, "testing", e.msg);
		goto out;
	}
	if (cancelled) {
		free(test_problem);
		report(r, "cancelled");
		goto out;
	}
	/* Work is handed back even when the tests failed, so that `paddock
	 * diff` can show what the agent did. */
	char head[41];
	int hrc = handoff(r, sb, base, head, &e);
	if (hrc == 0)
		report(r, "head %s", head);
	if (test_problem) {
		result = fail(r, "testing", test_problem);
		free(test_problem);
		goto out;
	}
	if (hrc < 0) {
		result = fail(r, "hand-off", e.msg);
		goto out;
	}
	logline(r, "hand-off: imported %s as %s", head, t->branch);
	report(r, "done");
	result = 0;
out:
	free(problem);
	be->destroy(sb);
	free(files);
	free(prompt);
	free(tpl);
	agent_cmdline_free(&cl);
	return result;
}

int pipeline_run(const struct pipeline_job *job, int report_fd)
{
	struct run r = { .job = job, .report_fd = report_fd, .log_fd = -1,
	                 .started = mono() };
	struct sigaction sa = { .sa_handler = on_term };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	struct err e = {{0}};
	r.task_dir = paths_join(job->data_dir, "tasks", job->task->id, NULL);
	if (fsx_mkdir_p(r.task_dir, 0700, &e) < 0) {
		report(&r, "fail preparing: %s", e.msg);
		free(r.task_dir);
		return 1;
	}
	char *log = paths_join(r.task_dir, "log", NULL);
	r.log_fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
	free(log);
	if (r.log_fd < 0) {
		report(&r, "fail preparing: %s", strerror(errno));
		free(r.task_dir);
		return 1;
	}
	logline(&r, "task %s on repo %s with agent %s", job->task->id, job->task->repo,
	        job->task->agent);
	int rc = run_steps(&r);
	close(r.log_fd);
	free(r.task_dir);
	return rc;
}
