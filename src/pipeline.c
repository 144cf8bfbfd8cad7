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
#include "gate.h"
#include "gateway.h"
#include "i18n.h"
#include "mirror.h"
#include "paths.h"
#include "recipe.h"
#include "report.h"
#include "sandbox.h"
#include "shell.h"
#include "template.h"
#include "testreport.h"
#include "units.h"

/* Exit codes of the hand-off script: the agent changed nothing; the
 * workspace is no longer a git repository. */
#define HANDOFF_NO_CHANGE 3
#define HANDOFF_NO_REPO 4

/* The hand-off's parts.  What paddock's own test step writes in the
 * workspace (__pycache__, build output) is not the agent's work: where a
 * round runs tests, the work is committed as the agent left it before
 * them (HANDOFF_COMMIT), and after them the tree is put back as it was
 * then and the branch bundled (HANDOFF_AFTER_TESTS).  HANDOFF_ALL does
 * both at once (no tests, a reviewer's shell). */
enum handoff_phase { HANDOFF_ALL, HANDOFF_COMMIT, HANDOFF_AFTER_TESTS };

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
	char home_problem[ERR_MAX]; /* why the round's home archive is missing */
	struct repo_conf repo;     /* the task's repo, its test command the
	                              task's own (--test) where it has one */
	double timeout;            /* seconds each round may take */
	char **clauses;            /* the task's output contract (recipe.h); */
	size_t nclauses;           /* none: the default one */
	int fix_max, fix_used;     /* the fix loop's tries: allowed, used since
	                              the last round that reached review */
	char fix_from[41];         /* where the round whose tests the fix loop
	                              tries to fix started: the contract judges
	                              the work from there */
};

/* What run_round returns besides 0 (review) and 1 (the task ended): the
 * round's verified tests failed, and the next round is the fix loop's. */
#define ROUND_FIX 2

static volatile sig_atomic_t cancelled;

static void on_term(int sig)
{
	(void)sig;
	cancelled = 1;
	sandbox_request_cancel();
}

/* A marker line in the task log, so that a reader sees the steps. */
static void logline(struct run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void logline(struct run *r, const char *fmt, ...)
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

static int fail(struct run *r, const char *step, const char *msg)
{
	logline(r, "%s: %s", step, msg);
	/* A step that ended because the task was cancelled (its sandbox
	 * command stopped, a git child killed) ends the task as cancelled,
	 * not failed: the user asked for it. */
	if (cancelled) {
		report_send(r->report_fd, REPORT_CANCELLED, NULL);
		return 1;
	}
	/* Every failure has its one-word reason: the step's, unless a
	 * closer one was given (fail_reason). */
	if (!r->reason_sent)
		report_send(r->report_fd, REPORT_REASON, !strcmp(step, "running") ? "tool" :
		            !strcmp(step, "testing") ? "tests" : step);
	report_sendf(r->report_fd, REPORT_FAIL, "%s: %s", step, msg);
	return 1;
}

/* fail() with the one-word reason that `paddock show` and the API give. */
static int fail_reason(struct run *r, const char *reason, const char *step, const char *msg)
{
	if (!cancelled) {
		report_send(r->report_fd, REPORT_REASON, reason);
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
	return r->job->be->run(sb, &cmd, res, e);
}

/* The hand-off, inside the sandbox: commit what is left uncommitted, point
 * the task branch at the work, write the bundle and archive the agent's
 * home.  It runs git in the agent-writable tree, which is why it runs in
 * the sandbox and never on the host.  Each process it starts costs a few
 * ms, so the shell does what it can itself (reading HEAD, comparing
 * trees, testing for files before removing them).  base_tree is the
 * base's tree, from the mirror. */
static char *handoff_script(const char *id, const char *base, const char *base_tree,
                            int changes, enum handoff_phase phase)
{
	/* HANDOFF_COMMIT ends after the commit; HANDOFF_AFTER_TESTS makes
	 * none (the work was committed before the tests) but puts the tree
	 * back as the agent left it: what the tests changed, created or
	 * removed among the files git sees, after the index saved then. */
	const char *save = phase == HANDOFF_COMMIT ? "cp -f \"$gd/index\" \"$ai\"\n" : "";
	const char *stop = phase == HANDOFF_COMMIT ? "exit 0\n" : "rm -f \"$ai\"\n";
	const char *restore = phase == HANDOFF_AFTER_TESTS ? "if true; then\n" : "if false; then\n";
	/* Runs with handoff_env(): nothing of the agent's home (a global
	 * gitconfig's filters, aliases, includes) reaches these commands, and
	 * hooks stay off and fsmonitor is paddock's whatever the repository
	 * says. */
	return xasprintf(
		"set -e\n"
		/* The backend's HOME is the agent's home, archived at the end;
		 * git gets none (see handoff_env). */
		"agent_home=$HOME\n"
		"export HOME=/nonexistent XDG_CONFIG_HOME=/nonexistent\n"
		/* Without the host's list of changes (sandbox.h), a file the
		 * agent left under that name must not answer for it. */
		"%s"
		"cd \"$PADDOCK_WORK\"\n"
		/* One git for the questions: the folders and the head's tree. */
		"dirs=$(git rev-parse --git-dir --git-common-dir --verify -q 'HEAD^{tree}' 2>/dev/null) "
		"|| exit %d\n"
		"nl='\n'\n"
		"gd=${dirs%%%%\"$nl\"*}; rest=${dirs#*\"$nl\"}; cd_=${rest%%%%\"$nl\"*}; "
		"h=${rest#*\"$nl\"}\n"
		/* A folder name with a newline (a planted gitdir file) would
		 * split wrongly: then the last line is no tree id, and each is
		 * asked on its own. */
		"case \"$h\" in ''|*[!0-9a-f]*) gd=$(git rev-parse --git-dir); "
		"cd_=$(git rev-parse --git-common-dir); h=$(git rev-parse --verify -q 'HEAD^{tree}');; "
		"esac\n"
		/* The agent's processes are gone; its repository configuration
		 * (clean/smudge filters, includes, attributes files, ...) would run
		 * its code during the hand-off, outside its time limit: set it
		 * aside, in the common dir too (a planted commondir file).  The
		 * common dir is most often the git dir: once is enough. */
		"for d in \"$gd\" \"$cd_\"; do\n"
		"  if ! [ -f \"$d/config.agent\" ] && { [ -e \"$d/config\" ] || [ -L \"$d/config\" ]; }; "
		"then\n"
		"    mv -f \"$d/config\" \"$d/config.agent\" 2>/dev/null || true\n"
		"  fi\n"
		"  for f in \"$d/config\" \"$d/config.worktree\" \"$d/info/attributes\"; do\n"
		"    if [ -e \"$f\" ] || [ -L \"$f\" ]; then\n"
		"      rm -f \"$d/config\" \"$d/config.worktree\" \"$d/info/attributes\"; break\n"
		"    fi\n"
		"  done\n"
		"  printf '[core]\\n\\trepositoryformatversion = 0\\n\\tfilemode = true\\n"
		"\\tbare = false\\n\\tcheckStat = minimal\\n\\ttrustCtime = false\\n' "
		"> \"$d/config\"\n"
		"  [ \"$cd_\" != \"$gd\" ] || break\n"
		"done\n"
		/* The index of the agent's tree, for the restore after the
		 * tests; one the agent planted restores only its own files. */
		"ai=\"$gd/paddock-agent-index\"\n"
		"%s"
		"  if [ -f \"$ai\" ]; then\n"
		"    GIT_INDEX_FILE=$ai git checkout-index -a -f -q 2>/dev/null || true\n"
		"    GIT_INDEX_FILE=$ai git clean -fdq 2>/dev/null || true\n"
		"  fi\n"
		"else\n"
		"rm -f \"$ai\"\n"
		"git add -A\n"
		"%s"
		/* Tracked files the repo's set-up changed (template.h): where
		 * they still hold what set-up left, the commit keeps the base's
		 * version, so that only the agent's changes are committed. */
		"bl=\"$gd/info/paddock-baseline\"\n"
		"if [ -s \"$bl\" ]; then\n"
		"  while IFS= read -r l; do\n"
		"    s=${l%%%% *}; p=${l#* }\n"
		"    c=$(git rev-parse -q --verify \":0:$p\" 2>/dev/null) || c=%040d\n"
		"    if [ \"$c\" = \"$s\" ]; then git --literal-pathspecs reset -q %s -- \"$p\"; fi\n"
		"  done < \"$bl\"\n"
		"fi\n"
		/* Plumbing, not git commit: commit refreshes the index again.
		 * The index holds a change when its tree is not the head's.
		 * write-tree needs no fsmonitor answer (it looks at no file). */
		"t=$(git -c core.fsmonitor=false write-tree)\n"
		"if [ \"$t\" != \"$h\" ]; then\n"
		/* The message comes in the environment (handoff_run): the
		 * task's text is never part of this script. */
		"  c=$(git commit-tree \"$t\" -p HEAD -m \"$PADDOCK_HANDOFF_MESSAGE\")\n"
		"  git update-ref -m 'paddock: hand-off' HEAD \"$c\"\n"
		"  h=$t\n"
		"fi\n"
		"fi\n"
		"%s"
		/* HEAD names the task branch unless the agent moved it. */
		"IFS= read -r hd < \"$gd/HEAD\" || hd=\n"
		"[ \"$hd\" = 'ref: refs/heads/paddock/%s' ] || "
		"git update-ref refs/heads/paddock/%s HEAD\n"
		/* No commit, or commits that add up to nothing: the tree is the
		 * base's, and that is no change. */
		"for f in \"$PADDOCK_OUT/result.bundle\" \"$PADDOCK_OUT/home.tgz\"; do\n"
		"  if [ -e \"$f\" ] || [ -L \"$f\" ]; then rm -rf \"$f\"; fi\n"
		"done\n"
		/* The agent's home, for a later round to resume its session
		 * (home_keep), also after no change (a contract may take that
		 * to the gate); a home that cannot be archived only loses that. */
		"tar -C \"$agent_home\" --exclude=./.cache --exclude=./.npm "
		"-czf \"$PADDOCK_OUT/home.tgz\" . 2>/dev/null || rm -f \"$PADDOCK_OUT/home.tgz\"\n"
		"[ \"$h\" != %s ] || exit %d\n"
		"git bundle create -q \"$PADDOCK_OUT/result.bundle\" refs/heads/paddock/%s ^%s\n",
		changes ? "" : "rm -rf \"$PADDOCK_OUT/" SANDBOX_CHANGES_NAME "\"\n",
		HANDOFF_NO_REPO, restore, save, 0, base, stop, id, id, base_tree, HANDOFF_NO_CHANGE, id,
		base);
}

/* sandbox_git_env_fsmonitor() but HOME and XDG_CONFIG_HOME, which the
 * hand-off script sets itself once it has read the agent's home from
 * HOME. */
static const char *const *handoff_env(void)
{
	static const char *env[64];
	if (!env[0]) {
		size_t n = 0;
		for (const char *const *v = sandbox_git_env_fsmonitor(); *v && n + 1 < 64; v++)
			if (strncmp(*v, "HOME=", 5) && strncmp(*v, "XDG_CONFIG_HOME=", 16))
				env[n++] = *v;
	}
	return env;
}

#define COMMIT_SUBJECT_MAX 71      /* characters of the first line */
#define COMMIT_BODY_MAX 4000       /* bytes of the task's text in the body */

/* Appends s[0..n) to b, each control character (a newline too, where
 * lines is 0) as a space. */
static void add_plain(struct buf *b, const char *s, size_t n, int lines)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		buf_addc(b, (c < 0x20 && !(lines && (c == '\n' || c == '\t'))) || c == 0x7f ? ' '
		                                                                        : (char)c);
	}
}

/* The hand-off commit's message, from the task's text: a first line of
 * at most COMMIT_SUBJECT_MAX characters (the text's first line, cut on a
 * word), the whole text below it when that says more, and the task's id
 * as a trailer.  Control characters become spaces; malloc'd. */
static char *handoff_message(const char *text, const char *id)
{
	const char *p = text + strspn(text, " \t\r\n");
	size_t line = strcspn(p, "\r\n");
	while (line && (p[line - 1] == ' ' || p[line - 1] == '\t'))
		line--;
	/* Where the first line is cut: after at most COMMIT_SUBJECT_MAX
	 * characters (UTF-8 lead bytes), before a space where there is one. */
	size_t cut = 0, chars = 0, space = 0;
	while (cut < line) {
		size_t next = cut + 1;
		while (next < line && ((unsigned char)p[next] & 0xc0) == 0x80)
			next++;
		if (++chars > COMMIT_SUBJECT_MAX)
			break;
		if (p[cut] == ' ')
			space = cut;
		cut = next;
	}
	if (cut < line && p[cut] != ' ' && space > 0)
		cut = space;
	while (cut && p[cut - 1] == ' ')
		cut--;
	struct buf b = {0};
	if (cut)
		add_plain(&b, p, cut, 0);
	else
		buf_printf(&b, "paddock task %s", id);
	size_t rest = strlen(p);
	while (rest && strchr(" \t\r\n", p[rest - 1]))
		rest--;
	/* The whole text when the first line does not say it all. */
	if (rest > cut) {
		buf_adds(&b, "\n\n");
		size_t n = rest > COMMIT_BODY_MAX ? COMMIT_BODY_MAX : rest;
		while (n < rest && n > 0 && ((unsigned char)p[n] & 0xc0) == 0x80)
			n--;
		add_plain(&b, p, n, 1);
		if (n < rest)
			buf_adds(&b, " [...]");
	}
	buf_printf(&b, "\n\nPaddock-Task: %s\n", id);
	return buf_detach(&b);
}

/* The hand-off's run in the sandbox and the bundle copied out: 0,
 * HANDOFF_NO_CHANGE, or -1 with a message.  extra (NULL: none) adds to
 * its environment: a reviewer's round's commit message
 * (PADDOCK_HANDOFF_MESSAGE) and author. */
static int handoff_run(struct run *r, struct sandbox *sb, const char *const *extra,
                       enum handoff_phase phase, struct err *e)
{
	const struct task_row *t = r->job->task;
	const struct config *cfg = r->job->cfg;
	/* What the agent changed, from the overlay: git then looks at those
	 * files only, whatever the repo's size.  Without it, at every file. */
	struct err ce = {{0}};
	int changes = r->job->be->changes && r->job->be->changes(sb, &ce) == 0;
	char base_tree[41];
	if (mirror_tree_of(r->mirror, r->base, base_tree, e) < 0)
		return -1;
	char *script = handoff_script(t->id, r->base, base_tree, changes, phase);
	const char *argv[] = { "/bin/sh", "-c", script, NULL };
	struct sandbox_result res;
	/* The hand-off gets its own few minutes: a task that used all its time
	 * still hands back what it did. */
	double deadline = clock_mono() + 300;
	if (phase == HANDOFF_COMMIT)
		logline(r, "hand-off: committing the work as the agent left it, before the tests");
	else if (phase == HANDOFF_AFTER_TESTS)
		logline(r, "hand-off: putting the tree back as the agent left it, bundling the work");
	else
		logline(r, "hand-off: committing and bundling the work");
	const char *env[80];
	size_t n = 0;
	int own = 0;
	for (const char *const *v = handoff_env(); *v && n < 64; v++)
		env[n++] = *v;
	for (size_t i = 0; extra && extra[i] && n + 2 < 80; i++) {
		own |= !strncmp(extra[i], "PADDOCK_HANDOFF_MESSAGE=", 24);
		env[n++] = extra[i];
	}
	/* The commit's message, unless the caller has its own: the task's
	 * text (handoff_message). */
	char *text = own ? NULL : handoff_message(t->text, t->id);
	char *msg = own ? NULL : xasprintf("PADDOCK_HANDOFF_MESSAGE=%s", text);
	if (msg)
		env[n++] = msg;
	env[n] = NULL;
	int rc = sb_run(r, sb, argv, env, deadline, &res, e);
	free(script);
	free(text);
	free(msg);
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
	if (phase == HANDOFF_COMMIT)
		return 0;
	char *bundle = paths_task_bundle(r->job->data_dir, t->id);
	/* A new file, never the last round's rewritten: that one may be
	 * linked as round-N.bundle (keep_round_bundle). */
	unlink(bundle);
	rc = r->job->be->copy_out(sb, SANDBOX_OUTDIR "/result.bundle", bundle,
	                          cfg->limits.bundle, e);
	free(bundle);
	return rc;
}

static struct bundle_limits handoff_limits(const struct run *r)
{
	const struct config *cfg = r->job->cfg;
	return (struct bundle_limits){
		.max_bytes = cfg->limits.bundle,
		.max_objects = 1000000,
		.max_blob = cfg->limits.bundle,
	};
}

/* The bundle checked and imported into the mirror: 0 with r->head set, or
 * -1 with a message. */
static int handoff_import(struct run *r, struct err *e)
{
	const struct task_row *t = r->job->task;
	char *bundle = paths_task_bundle(r->job->data_dir, t->id);
	char *round_ref = xasprintf("refs/paddock/rounds/%s/%d", t->id, r->round);
	char *task_ref = mirror_task_ref(t->id);
	char *expected = xasprintf("refs/heads/paddock/%s", t->id);
	char head[41];
	struct bundle_limits lim = handoff_limits(r);
	/* An earlier attempt of this round (interrupted, or failed after its
	 * import) left its ref: it moves aside. */
	char *aside = xasprintf("refs/paddock/failed/%s/%d", t->id, r->round);
	int rc = mirror_retire_ref(r->mirror, round_ref, aside, e);
	free(aside);
	if (rc == 0)
		rc = bundle_import(r->mirror, bundle, expected, r->base, round_ref, &lim, head, e);
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

struct tests_after {
	int ran, passed, exited, code;
	char *tail;
	char *log;                 /* where the whole output is, or NULL */
	char *names;               /* the failed tests found (testreport.h), or
	                              NULL */
	char *long_tail;           /* more of the output's end, for the fix loop */
};

static void tests_after_free(struct tests_after *ta)
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
	char *p = result_problem(r, _("the test command"), res);
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
		logline(r, "testing: no test command configured for repo %s", repo->name);
		return 0;
	}
	logline(r, "testing: the agent's run, in its sandbox%s: %s",
	        r->job->task->test_cmd ? " (the task's test command)" : "", repo->test);
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
 * with an empty home and nothing of the agent's (template_verify).  It
 * starts as soon as the bundle is out, in its own process, and runs
 * while the host checks and imports the same bundle; *v stays NULL when
 * the repo has no tests or the bundle names no tip (the import then
 * refuses it). */
struct verify_run {
	struct template_verify *v;
	off_t start;                 /* the log's end when it began */
	int failed;                  /* it could not start: e says why */
};

static void verify_start(struct run *r, struct verify_run *vr, struct err *e)
{
	const struct repo_conf *repo = &r->repo;
	memset(vr, 0, sizeof *vr);
	if (!repo->test)
		return;
	char *bundle = paths_task_bundle(r->job->data_dir, r->job->task->id);
	char *expected = xasprintf("refs/heads/paddock/%s", r->job->task->id);
	struct bundle_limits lim = handoff_limits(r);
	char tip[41];
	struct err ignored = {{0}};
	if (bundle_tip(bundle, expected, r->base, &lim, tip, &ignored) == 0) {
		logline(r, "verifying: the tests on a clean checkout of %.12s (a fresh sandbox, an "
		        "empty home): %s", tip, repo->test);
		vr->start = lseek(r->log_fd, 0, SEEK_END);
		struct template_ctx tc = { .data_dir = r->job->data_dir, .cfg = r->job->cfg,
		                           .be = r->job->be, .log_fd = r->log_fd, .report_fd = -1 };
		if (template_verify_start(&tc, repo, r->tpl, bundle, tip, &vr->v, e) < 0)
			vr->failed = 1;
	}
	free(bundle);
	free(expected);
}

/* Waits for the verification: 0 with ta filled (nothing to fill when the
 * repo has no tests, or when stop says its result is not wanted: it is
 * stopped then), -1 with e. */
static int verify_finish(struct run *r, struct verify_run *vr, int stop, struct tests_after *ta,
                         char **problem, struct err *e)
{
	*problem = NULL;
	memset(ta, 0, sizeof *ta);
	if (vr->failed)
		return -1;
	if (!vr->v)
		return 0;
	struct sandbox_result res;
	int rc = template_verify_finish(vr->v, stop, &res, e);
	vr->v = NULL;
	if (stop) {
		logline(r, "verifying: stopped; the hand-off failed");
		return 0;
	}
	if (rc < 0)
		return -1;
	tests_outcome(r, &res, vr->start, ta, problem);
	logline(r, "verifying: %s", ta->passed ? "passed" : "failed");
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

static char *dup_or_null(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

/* One test run for the gate: whether it passed, its exit status, the
 * tail of its output and where the whole log is. */
static void gate_tests_fill(struct gate_tests *g, int ran, int passed, int exited, int code,
                            const char *tail, const char *log)
{
	*g = (struct gate_tests){ .ran = ran, .passed = passed, .exited = exited, .code = code,
	                          .tail = dup_or_null(tail), .log = dup_or_null(log) };
}

/* USD the task may spend: its own budget, else the configuration's; 0 for
 * none. */
static double task_budget(const struct run *r)
{
	const struct task_row *t = r->job->task;
	return t->budget >= 0 ? t->budget : r->job->cfg->limits.budget;
}

/* The parts of the round's gate summary that need only the imported
 * work, computed while the verification runs: the diffstat and the
 * policy's findings. */
static void gate_prepare(struct run *r, struct gate_summary *g)
{
	const struct task_row *t = r->job->task;
	const struct repo_conf *repo = config_find_repo(r->job->cfg, t->repo);
	struct err e = {{0}};
	struct buf stat = {0};
	if (diff_stat(r->mirror, r->base, r->head, &stat, &e) < 0)
		buf_printf(&stat, "(%s)", e.msg);
	g->diffstat = xstrdup(stat.data ? stat.data : "");
	buf_free(&stat);
	struct policy_finding *f = NULL;
	size_t nf = 0;
	struct policy_secrets sec = policy_secrets_collect(r->job->cfg);
	if (policy_check(r->mirror, r->base, r->head, repo, &sec, &f, &nf, &e) < 0) {
		/* A check that cannot run blocks: nothing unchecked is pushed. */
		gate_summary_add_finding(g, "policy:error", "policy", POLICY_BLOCK, "", e.msg);
	}
	free((void *)sec.values);
	for (size_t i = 0; i < nf; i++)
		gate_summary_add_finding(g, f[i].name, config_policy_rule_name(f[i].rule),
		                         f[i].action, f[i].path, f[i].detail);
	policy_findings_free(f, nf);
}

/* The gate summary of this round, as the store keeps it (gate.h), from
 * the prepared g (gate_prepare), which it frees. */
static char *gate_json(struct run *r, struct gate_summary *g, const char *from,
                       const char *summary, const struct template_tests *before,
                       const struct tests_after *agent, const struct tests_after *after)
{
	const struct task_row *t = r->job->task;
	g->round = r->round;
	g->branch = dup_or_null(t->branch);
	g->from = dup_or_null(from);
	g->head = dup_or_null(r->head);
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
	/* What the contract found (round_contract), else the default one held. */
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
static int gate_wait(struct run *r, struct sandbox *sb, const struct template_tests *before)
{
	const struct pipeline_job *job = r->job;
	double until = clock_mono() + job->cfg->gate_timeout;
	struct buf in = {0};
	int next = 0;
	struct err le = {{0}};
	logline(r, "review: the sandbox is kept for the reviewer (paddock.gate-timeout)");
	int lfd = job->cmd_fd >= 0 ? shell_listen(job->data_dir, job->task->id, &le) : -1;
	if (lfd < 0 && le.msg[0])
		logline(r, "review: no shell can open in this sandbox: %s", le.msg);
	report_send(r->report_fd, REPORT_KEPT, NULL);
	while (!cancelled && job->cmd_fd >= 0) {
		double left = until - clock_mono();
		if (left <= 0) {
			logline(r, "review: gate timeout; the sandbox is torn down, the branch stays");
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

/* The agent's home outlives its sandbox: archived by the hand-off (inside
 * the sandbox; the host only copies the bytes), kept beside the task when
 * the round reaches review, and unpacked into the home of a sandbox
 * rebuilt for a later round, so that the agent's session, and with it the
 * conversation, can be resumed. */
#define HOME_ARCHIVE_CAP (256ULL << 20)

/* The archive the hand-off made copied out beside the kept one; it
 * replaces that one only if the round reaches review (home_keep). */
static void home_fetch(struct run *r, struct sandbox *sb)
{
	struct err e = {{0}};
	char *host = paths_task_home(r->job->data_dir, r->job->task->id);
	char *tmp = xasprintf("%s.tmp", host);
	if (r->job->be->copy_out(sb, SANDBOX_OUTDIR "/home.tgz", tmp, HOME_ARCHIVE_CAP, &e) < 0) {
		unlink(tmp);
		snprintf(r->home_problem, sizeof r->home_problem, "%s", e.msg);
	}
	free(tmp);
	free(host);
}

/* Written beside and renamed: a kill mid-copy leaves the last round's
 * archive whole. */
static void home_keep(struct run *r)
{
	struct err e = {{0}};
	char *host = paths_task_home(r->job->data_dir, r->job->task->id);
	char *tmp = xasprintf("%s.tmp", host);
	if (!r->home_problem[0] && rename(tmp, host) < 0)
		snprintf(r->home_problem, sizeof r->home_problem, "%s", strerror(errno));
	if (r->home_problem[0]) {
		unlink(tmp);
		logline(r, "hand-off: the agent's home could not be kept: %s", r->home_problem);
	} else {
		/* The session that goes with this home: a later round that
		 * fails may leave the task's session pointing elsewhere. */
		char *sess = paths_task_home_session(r->job->data_dir, r->job->task->id);
		if (r->session)
			fsx_write_file(sess, r->session, strlen(r->session), 0600, &e);
		else
			unlink(sess);
		free(sess);
	}
	r->home_problem[0] = '\0';
	free(tmp);
	free(host);
}

/* A round that did not reach review keeps the last round's archive. */
static void home_discard(struct run *r)
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
static void home_session(struct run *r, const char *id)
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
static void keep_round_bundle(struct run *r)
{
	char *bundle = paths_task_bundle(r->job->data_dir, r->job->task->id);
	char *keep = paths_task_round_bundle(r->job->data_dir, r->job->task->id, r->round);
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
	char *host = paths_task_home(r->job->data_dir, r->job->task->id);
	struct stat st;
	int ok = 0;
	if (stat(host, &st) == 0 &&
	    r->job->be->copy_in(sb, host, SANDBOX_OUTDIR "/home.tgz", &e) == 0) {
		const char *argv[] = { "/bin/sh", "-c",
			"tar -C \"$HOME\" -xzf \"$PADDOCK_OUT/home.tgz\"; s=$?; "
			"rm -f \"$PADDOCK_OUT/home.tgz\"; exit $s", NULL };
		ok = sb_run(r, sb, argv, NULL, clock_mono() + 60, &res, &e) == 0 &&
		     res.end == SANDBOX_EXITED && res.code == 0;
	}
	free(host);
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
	logline(gs->r, "%s", line);
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
	logline(r, "shell: putting the workspace back at %s", r->head);
	int rc = sb_run(r, gs->sb, argv, sandbox_git_env_fsmonitor(), clock_mono() + 300, &res, e);
	free(script);
	char *p = rc < 0 ? NULL : result_problem(r, _("putting the workspace back"), &res);
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
	int rc = handoff_run(r, gs->sb, extra, HANDOFF_ALL, e);
	for (int i = 0; i < 3; i++)
		free(env[i]);
	if (rc == HANDOFF_NO_CHANGE)
		return err_set(e, "%s", _("with the shell's changes the task's work adds up to "
		                          "nothing; a round cannot undo all of it"));
	if (rc < 0)
		return -1;
	char *bundle = paths_task_bundle(r->job->data_dir, id);
	char *expected = xasprintf("refs/heads/paddock/%s", id);
	struct bundle_limits lim = handoff_limits(r);
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
	logline(r, "hand-off: checking the reviewer's bundle and importing it into the mirror");
	struct verify_run vr;
	struct err ve = {{0}};
	struct tests_after none = {0}, va = {0};
	char *problem = NULL;
	verify_start(r, &vr, &ve);
	if (handoff_import(r, e) < 0) {
		verify_finish(r, &vr, 1, &va, &problem, &ve);
		r->round = gs->old_round;
		return -1;
	}
	struct gate_summary g = {0};
	gate_prepare(r, &g);
	if (verify_finish(r, &vr, 0, &va, &problem, &ve) < 0)
		logline(r, "verifying: the tests could not be verified: %s", ve.msg);
	k->summary = xasprintf(_("Changes a reviewer (%s) made in a shell in the task's sandbox "
	                         "and kept (paddock shell --keep)."), actor);
	k->gate = gate_json(r, &g, gs->old_head, k->summary, gs->before, &none, &va);
	if (!k->gate)
		k->gate = xstrdup("{}");
	k->round = r->round;
	memcpy(k->from, gs->old_head, sizeof k->from);
	memcpy(k->head, r->head, sizeof k->head);
	k->tests = va.ran ? va.passed : -1;
	tests_after_free(&va);
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
		keep_round_bundle(r);
		return;
	}
	struct err e = {{0}};
	char *task_ref = mirror_task_ref(r->job->task->id);
	if (mirror_set_ref(r->mirror, task_ref, gs->old_head, &e) < 0)
		logline(r, "shell: %s", e.msg);
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
	char *notes = paths_task_notes(r->job->data_dir, t->id, r->round);
	struct buf b = {0};
	int rc = fsx_read_file(notes, 1 << 20, &b, e);
	free(notes);
	if (rc == 0)
		rc = fsx_write_file(prompt, b.data ? b.data : "", b.len, 0644, e);
	buf_free(&b);
	if (rc == 0 && sb)
		rc = r->job->be->copy_in(sb, prompt, SANDBOX_PROMPT, e);
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

/* What the steps of one round share, and round_free releases. */
struct round {
	struct run *r;
	struct sandbox *sb;
	const struct agent_cmdline *cl;
	const struct template_tests *before;
	const struct agent_conf *agent;
	struct err e;
	char from[41];             /* the commit the round starts from */
	off_t start;               /* the log's end when the agent began */
	struct sandbox_result res; /* the agent's run */
	struct adapter_result ar;  /* what its adapter read from that run */
	char *problem;             /* what went wrong in that run, or NULL */
	char *summary;             /* the agent's summary of the round */
	struct tests_after ta, va; /* the tests in its sandbox; on a clean checkout */
	char *test_problem, *verify_problem;
	int hrc, vrc;              /* the hand-off's result; the verification's */
	int committed;             /* the work was committed before the tests */
	struct gate_summary gate;  /* its diffstat and findings (gate_prepare) */
};

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
		logline(r, "running: round %d (fix round %d of %d), agent %s: %s", r->round,
		        r->fix_used, r->fix_max, rd->agent->name,
		        rd->agent->resume ? rd->agent->resume : rd->agent->command);
	else
		logline(r, "running: round %d, agent %s: %s", r->round, rd->agent->name,
		        r->round > 1 && rd->agent->resume ? rd->agent->resume : rd->agent->command);
	if (r->round > 1) {
		/* A summary left by the last round must not speak for this one. */
		const char *rm[] = { "rm", "-f", SANDBOX_OUTDIR "/summary.md", NULL };
		if (sb_run(r, rd->sb, rm, NULL, r->deadline, &rd->res, &rd->e) < 0)
			return fail(r, "running", rd->e.msg);
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
		return fail(r, "running", rd->e.msg);
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
	int rc = sb_run(r, rd->sb, (const char *const *)argv, env, r->deadline, &rd->res, &rd->e);
	adapter_argv_free(argv);
	if (rc < 0)
		return fail(r, "running", rd->e.msg);
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
		fail_reason(r, "budget", "running", msg);
		free(msg);
		return 1;
	}
	if (gs && gs->no_key[0]) {
		const struct endpoint_conf *ep = config_find_endpoint(r->job->cfg, gs->no_key);
		char *why = ep ? config_endpoint_key_missing(ep) : NULL;
		char *msg = why ? why : xasprintf(_("endpoint %s had no key when the task's gateway "
		                                   "started; set its key-env variable or key-file"),
		                                 gs->no_key);
		fail_reason(r, "model-auth", "running", msg);
		free(msg);
		return 1;
	}
	if (rd->res.end == SANDBOX_CANCELLED || cancelled) {
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
	rd->problem = result_problem(r, _("the agent"), res);
	if (res->end == SANDBOX_TIMEOUT)
		return fail_reason(r, "timeout", "running", rd->problem);
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
	fail_reason(r, ar->reason ? ar->reason : "tool", "running", why.data);
	buf_free(&why);
	free(missing);
	return 1;
}

/* The agent finished: its summary of the round. */
static int round_summary(struct round *rd)
{
	struct run *r = rd->r;
	logline(r, "running: the agent finished");
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
	/* The work as the agent left it, before the tests write in its
	 * tree.  Where this fails, the hand-off after the tests commits
	 * everything, as it would without tests (and says why here). */
	if (r->repo.test) {
		struct err ce = {{0}};
		if (handoff_run(r, rd->sb, NULL, HANDOFF_COMMIT, &ce) == 0)
			rd->committed = 1;
		else
			logline(r, "hand-off: %s", ce.msg);
	}
	if (run_tests(r, rd->sb, &rd->ta, &rd->test_problem, &rd->e) < 0)
		return fail(r, "testing", rd->e.msg);
	if (cancelled) {
		report_send(r->report_fd, REPORT_CANCELLED, NULL);
		return 1;
	}
	return 0;
}

/* The hand-off and the verification; round_contract judges both.  Once
 * the bundle is out, the verification runs in its own process while this
 * one checks and imports the bundle, prepares the gate summary and copies
 * the home archive out: on two cores the verification costs no time of
 * its own unless the tests are slow. */
static int round_handoff(struct round *rd)
{
	struct run *r = rd->r;
	struct verify_run vr = {0};
	struct err ve = {{0}};
	/* Work is handed back even when the tests failed, so that `paddock
	 * diff` can show what the agent did. */
	rd->hrc = handoff_run(r, rd->sb, NULL,
	                      rd->committed ? HANDOFF_AFTER_TESTS : HANDOFF_ALL, &rd->e);
	if (rd->hrc == 0) {
		/* Logged first: what the verification prints is its tail
		 * (nothing else writes to the log until it ends). */
		logline(r, "hand-off: checking the bundle and importing it into the mirror");
		verify_start(r, &vr, &ve);
		rd->hrc = handoff_import(r, &rd->e);
	}
	if (rd->hrc == 0) {
		report_send(r->report_fd, REPORT_HEAD, r->head);
		gate_prepare(r, &rd->gate);
		home_fetch(r, rd->sb);
	}
	/* The imported commit's tests, on a clean checkout: this is the
	 * result the contract and the gate use.  A refused bundle fails the
	 * round whatever its verification found. */
	int vrc = verify_finish(r, &vr, rd->hrc != 0, &rd->va, &rd->verify_problem, &ve);
	if (rd->hrc == 0) {
		rd->vrc = vrc;
		if (vrc < 0)
			rd->e = ve;
	}
	return 0;
}

/* After fix rounds, the message says so. */
static void fix_note(struct run *r, struct buf *why)
{
	if (r->fix_used)
		buf_printf(why, ngettext("; still failing after %d fix round (fix-rounds)",
		                         "; still failing after %d fix rounds (fix-rounds)",
		                         (unsigned long)r->fix_used), r->fix_used);
}

/* The round's gate summary, when its work was imported: what the reviewer
 * would have seen, for a round that does not reach the gate. */
static void send_gate(struct round *rd)
{
	struct run *r = rd->r;
	if (rd->hrc != 0)
		return;
	char *g = gate_json(r, &rd->gate, rd->from, rd->summary, rd->before, &rd->ta, &rd->va);
	report_send(r->report_fd, REPORT_GATE, g ? g : "{}");
	free(g);
}

/* The default output contract, not satisfied: name every part that is
 * missing. */
static int contract_failed(struct round *rd)
{
	struct run *r = rd->r;
	const struct tests_after *ta = &rd->ta, *va = &rd->va;
	const char *failed = va->ran ? rd->verify_problem : rd->test_problem;
	const char *tail = va->ran ? va->tail : ta->tail;
	struct buf why = {0};
	buf_adds(&why, _("contract not satisfied: "));
	if (rd->hrc == HANDOFF_NO_CHANGE)
		buf_adds(&why, _("no change; "));
	if (va->ran && ta->passed)
		buf_printf(&why, _("the tests pass in the agent's sandbox but fail on a clean "
		                   "checkout of its commit: %s"), failed);
	else
		buf_printf(&why, _("tests failed: %s"), failed);
	fix_note(r, &why);
	if (tail && *tail)
		buf_printf(&why, "\n%s", tail);
	/* The mismatch first in the gate summary. */
	rd->gate.has_contract = 1;
	rd->gate.contract.change = rd->hrc == 0;
	rd->gate.contract.bundle = 1;
	send_gate(rd);
	fail_reason(r, rd->hrc == HANDOFF_NO_CHANGE ? "contract" : "tests", "testing", why.data);
	buf_free(&why);
	return 1;
}

/* The next prompt of the fix loop, in the same conversation: the failed
 * tests' names and the end of their output (t), and what else of the
 * contract failed. */
static int fix_prompt(struct round *rd, const struct tests_after *t, const char *contract_why)
{
	struct run *r = rd->r;
	struct buf b = {0};
	buf_printf(&b, _("The tests fail after your work (%s). Fix the code so that they pass, "
	                 "and keep the rest of your work.\n\n"),
	           t == &rd->va ? _("run on a clean checkout of your commit")
	                        : _("run in your sandbox"));
	if (t->names)
		buf_printf(&b, _("Failed tests: %s\n\n"), t->names);
	const char *tail = t->long_tail ? t->long_tail : t->tail;
	if (tail && *tail)
		buf_printf(&b, _("The end of their output:\n\n%s\n\n"), tail);
	if (contract_why)
		buf_printf(&b, _("The task's contract is not satisfied yet either: %s.\n\n"),
		           contract_why);
	buf_printf(&b, _("This is fix round %d of %d.\n"), r->fix_used, r->fix_max);
	int rc = fsx_write_file(r->prompt_path, b.data, b.len, 0644, &rd->e);
	if (rc == 0)
		rc = r->job->be->copy_in(rd->sb, r->prompt_path, SANDBOX_PROMPT, &rd->e);
	buf_free(&b);
	return rc;
}

/* The fix loop: the round's tests failed and a try is left; the agent
 * gets them as its next round's prompt (fix_prompt), in the same sandbox
 * and conversation.  Returns ROUND_FIX, or 1 when that cannot be. */
static int round_fix(struct round *rd, const char *contract_why)
{
	struct run *r = rd->r;
	const struct tests_after *t = rd->va.ran && !rd->va.passed ? &rd->va : &rd->ta;
	if (!rd->gate.has_contract) {
		rd->gate.has_contract = 1;
		rd->gate.contract.change = rd->hrc == 0;
		rd->gate.contract.bundle = 1;
	}
	send_gate(rd);
	r->fix_used++;
	logline(r, "testing: the tests failed; fix round %d of %d (fix-rounds): the agent gets "
	        "the failed tests and their output", r->fix_used, r->fix_max);
	if (fix_prompt(rd, t, contract_why) < 0)
		return fail(r, "testing", rd->e.msg);
	report_sendf(r->report_fd, REPORT_FIX, "%d", r->round + 1);
	return ROUND_FIX;
}

static int fix_left(const struct run *r)
{
	return r->fix_used < r->fix_max;
}

/* mirror_has_file in the round's tree, for the "file" clause. */
struct tree_at {
	const char *mirror, *commit;
};

static int file_in_tree(const char *path, void *arg)
{
	const struct tree_at *t = arg;
	return mirror_has_file(t->mirror, t->commit, path);
}

/* The task's own contract against the round: 1 when every clause holds;
 * why gets the sentences of those that do not, rd->gate what each came
 * to, *tests_failed whether "tests" is among them.  The work is the
 * task's whole change, from its base, as the reviewer approves it: a
 * later round that answers a note need not touch a test again for a
 * fix-bug task.  Read from the mirror, never the agent's tree. */
static int contract_judge(struct round *rd, struct buf *why, int *tests_failed)
{
	struct run *r = rd->r;
	int nochange = rd->hrc == HANDOFF_NO_CHANGE;
	int changed = !nochange && strcmp(r->head, r->base) != 0;
	char **paths = NULL;
	size_t np = 0;
	struct err pe = {{0}};
	if (changed && mirror_changed_paths(r->mirror, r->base, r->head, &paths, &np, &pe) < 0)
		logline(r, "testing: %s", pe.msg);
	struct tree_at at = { r->mirror, nochange ? r->base : r->head };
	struct contract_facts f = {
		.changed = changed, .tests_ran = rd->va.ran, .tests_passed = rd->va.passed,
		.summary = rd->summary, .paths = (const char *const *)paths, .npaths = np,
		.file_exists = file_in_tree, .arg = &at,
	};
	int held = recipe_contract_check(r->clauses, r->nclauses, &f, why);
	struct gate_summary *g = &rd->gate;
	g->has_contract = 1;
	g->contract.clauses = xcalloc(r->nclauses, sizeof *g->contract.clauses);
	g->contract.nclauses = r->nclauses;
	for (size_t i = 0; i < r->nclauses; i++) {
		struct buf ignored = {0};
		g->contract.clauses[i].clause = xstrdup(r->clauses[i]);
		g->contract.clauses[i].held = recipe_contract_check(&r->clauses[i], 1, &f, &ignored);
		buf_free(&ignored);
	}
	int tests_ok = rd->va.ran && rd->va.passed;
	g->contract.change = !recipe_contract_has(r->clauses, r->nclauses, "change") || changed;
	g->contract.tests = !recipe_contract_has(r->clauses, r->nclauses, "tests") || tests_ok;
	g->contract.bundle = 1;
	*tests_failed = !tests_ok && recipe_contract_has(r->clauses, r->nclauses, "tests");
	mirror_paths_free(paths, np);
	return held;
}

/* The task's own contract, not satisfied: every clause that failed. */
static int contract_own_failed(struct round *rd, const char *sentences)
{
	struct run *r = rd->r;
	struct buf why = {0};
	buf_printf(&why, _("contract not satisfied: %s"), sentences);
	if (rd->va.ran && !rd->va.passed) {
		fix_note(r, &why);
		if (rd->verify_problem)
			buf_printf(&why, "\n%s", rd->verify_problem);
		if (rd->va.tail && *rd->va.tail)
			buf_printf(&why, "\n%s", rd->va.tail);
	}
	send_gate(rd);
	fail_reason(r, "contract", "testing", why.data);
	buf_free(&why);
	return 1;
}

/* A round that changed nothing: its tests on a clean checkout of its
 * tree are the base's, which the template ran (the tests before). */
static void nochange_tests(struct round *rd)
{
	const struct template_tests *b = rd->before;
	tests_after_free(&rd->va);
	if (!b->ran)
		return;
	rd->va = (struct tests_after){ .ran = 1, .passed = b->passed, .exited = b->exited,
	                               .code = b->code, .tail = dup_or_null(b->tail),
	                               .log = dup_or_null(b->log) };
}

/* What the task's own contract (recipe.h) says of the round: 0 when it
 * reaches the gate (a round that changed nothing too, where the contract
 * allows), ROUND_FIX, or 1 when the task ended. */
static int contract_own(struct round *rd)
{
	struct run *r = rd->r;
	if (rd->hrc == HANDOFF_NO_CHANGE)
		nochange_tests(rd);
	struct buf why = {0};
	int tests_failed = 0, rc;
	if (contract_judge(rd, &why, &tests_failed))
		rc = 0;
	else if (tests_failed && rd->va.ran && fix_left(r))
		rc = round_fix(rd, why.data);
	else
		rc = contract_own_failed(rd, why.data);
	buf_free(&why);
	return rc;
}

/* What the hand-off and the tests came to: a cancel, no change, a failed
 * hand-off or verification, or the contract not satisfied end the task;
 * failing tests may go to the fix loop instead (ROUND_FIX). */
static int round_contract(struct round *rd)
{
	struct run *r = rd->r;
	int hrc = rd->hrc, vrc = rd->vrc;
	int tests_failed = rd->va.ran ? !rd->va.passed : rd->test_problem != NULL;
	struct buf why = {0};
	if (hrc == 0 && vrc == 0 && cancelled) {
		report_send(r->report_fd, REPORT_CANCELLED, NULL);
	} else if (!r->nclauses && hrc == HANDOFF_NO_CHANGE && !rd->test_problem) {
		/* The agent found nothing to change: its explanation ends the
		 * task, with no branch. */
		logline(r, "hand-off: no change; the agent's explanation ends the task");
		report_send(r->report_fd, REPORT_NOCHANGE, NULL);
	} else if (hrc < 0) {
		/* Name every missing part: the failed tests too. */
		buf_adds(&why, rd->e.msg);
		if (rd->test_problem)
			buf_printf(&why, _("; tests failed: %s"), rd->test_problem);
		fail(r, "hand-off", why.data);
	} else if (vrc < 0) {
		/* Unverified tests are not a result a reviewer can trust. */
		buf_printf(&why, _("the tests could not be verified on a clean checkout: %s"),
		           rd->e.msg);
		fail(r, "testing", why.data);
	} else if (r->nclauses) {
		return contract_own(rd);
	} else if (hrc == HANDOFF_NO_CHANGE || tests_failed) {
		if (tests_failed && fix_left(r))
			return round_fix(rd, hrc == HANDOFF_NO_CHANGE ? _("no change") : NULL);
		contract_failed(rd);
	} else {
		return 0;
	}
	buf_free(&why);
	return 1;
}

/* The round reaches the gate without a change (a contract with
 * no-change): its head is the base, its summary what it came to. */
static void gate_nochange(struct round *rd)
{
	struct run *r = rd->r;
	memcpy(r->head, r->base, sizeof r->head);
	report_send(r->report_fd, REPORT_HEAD, r->head);
	logline(r, "hand-off: no change; the round reaches the gate with the agent's summary "
	        "(the task's contract)");
	home_fetch(r, rd->sb);
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
		logline(r, "verifying: the tests failed in the agent's sandbox but pass on a "
		        "clean checkout; the gate uses the clean result");
	if (!nochange)
		logline(r, "hand-off: imported %s as %s (round %d)", r->head, r->job->task->branch,
		        r->round);
	if (r->fix_used)
		logline(r, "testing: the tests pass after %d fix round%s", r->fix_used,
		        r->fix_used == 1 ? "" : "s");
	char *g = gate_json(r, &rd->gate, rd->from, rd->summary, rd->before, &rd->ta, &rd->va);
	report_send(r->report_fd, REPORT_GATE, g ? g : "{}");
	free(g);
	/* Before the gate opens: whatever stops paddock from here on
	 * (a kill, a stop between rounds) finds the conversation and the
	 * round's work kept, so a later round resumes both. */
	home_keep(r);
	if (!nochange)
		keep_round_bundle(r);
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
	{ "start", round_start },       /* status, log line, last round's summary gone */
	{ "agent", round_agent },       /* the agent's run */
	{ "outcome", round_outcome },   /* session, budget, cancel */
	{ "failure", round_failure },   /* timeout, the agent's failure */
	{ "summary", round_summary },   /* the agent's summary */
	{ "tests", round_tests },       /* the tests in its sandbox */
	{ "hand-off", round_handoff },  /* the hand-off and the verification */
	{ "contract", round_contract }, /* what they came to */
	{ "gate", round_gate },         /* the gate summary; the home and bundle kept */
};

static void round_free(struct round *rd)
{
	adapter_result_free(&rd->ar);
	free(rd->problem);
	free(rd->summary);
	free(rd->test_problem);
	free(rd->verify_problem);
	tests_after_free(&rd->ta);
	tests_after_free(&rd->va);
	gate_summary_free(&rd->gate);
	home_discard(rd->r);
}

/* Runs one round to the gate: 0 when it got there, 1 when the task ended. */
static int run_round(struct run *r, struct sandbox *sb, const struct agent_cmdline *cl,
                     const struct template_tests *before)
{
	struct round rd = {
		.r = r, .sb = sb, .cl = cl, .before = before,
		.agent = config_find_agent(r->job->cfg, r->job->task->agent),
	};
	int rc = 0;
	for (size_t i = 0; i < sizeof round_steps / sizeof *round_steps && rc == 0; i++)
		rc = round_steps[i].run(&rd);
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
	logline(r, "preparing: fetching the remote's branches, tags and %s", t->base_ref);
	if (mirror_resolve_base(r->job->data_dir, s->repo, t->base_ref, r->base, &what,
	                        &s->e) < 0)
		return fail(r, "preparing", s->e.msg);
	report_send(r->report_fd, REPORT_BASE, r->base);
	logline(r, "preparing: base commit %s (--base %s: %s)", r->base, t->base_ref, what);
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
		return fail(r, "preparing", _("the repo is no longer in the configuration; "
		                              "add it back or cancel the task"));
	if (!s->agent)
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
		report_send(r->report_fd, REPORT_BASE, r->base);
		logline(r, "preparing: a follow-up of task %s: base commit %s (its work)",
		        t->follow_of, r->base);
	} else {
		/* Not its URL: the log goes to API clients too, and a URL may be a
		 * host path or carry a user name. */
		logline(r, "preparing: updating the mirror of %s", repo->name);
		if (mirror_update(job->data_dir, repo, &s->e) < 0)
			return fail(r, "preparing", s->e.msg);
		if (t->base_ref)
			return base_of_task(s);
		if (mirror_resolve_branch(r->mirror, repo->branch, r->base, &s->e) < 0)
			return fail(r, "preparing", s->e.msg);
		report_send(r->report_fd, REPORT_BASE, r->base);
		logline(r, "preparing: base commit %s (branch %s)", r->base, repo->branch);
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
	if (template_ensure(&tc, s->repo, r->base, &s->tpl, &s->e) < 0)
		return fail_reason(r, strncmp(s->e.msg, "setup", 5) == 0 ? "setup" : "tool",
		                   "preparing", s->e.msg);
	r->tpl = s->tpl;
	if (template_tests_before(&tc, s->repo, r->base, s->tpl, &s->before, &s->e) < 0) {
		/* The gate says so; the task itself can go on. */
		logline(r, "preparing: %s", s->e.msg);
		memset(&s->before, 0, sizeof s->before);
	}
	if (cancelled) {
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
		return fail(r, "preparing", s->e.msg);
	if (agent->resume && agent_cmdline_parse(agent->resume, &s->rcl, &s->e) < 0)
		return fail(r, "preparing", s->e.msg);
	s->prompt = paths_task_prompt(job->data_dir, t->id);
	/* The agent's script and listed files; a command that names another
	 * host file fails here, as config check says. */
	const char **hosts = NULL;
	if (agent_sandbox_files(agent->name, &s->cl, &s->rcl, agent->files, agent->nfiles,
	                        &hosts, &s->nfiles, &s->e) < 0)
		return fail(r, "preparing", s->e.msg);
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
		return fail(r, "preparing", s->e.msg);
	gateway_attach(r->gw, &s->spec.net);
	/* The agent's settings name the gateway's ports. */
	s->home = adapter_home_files(cfg, s->agent, r->gw, &s->nhome);
	s->spec.home_files = s->home;
	s->spec.nhome_files = s->nhome;
	if (gateway_note(r->gw))
		logline(r, "preparing: %s", gateway_note(r->gw));
	/* Over budget, or a key missing: whatever runs in the sandbox is
	 * stopped. */
	sandbox_cancel_watch(&gateway_stats(r->gw)->stop);
	return 0;
}

/* The sandbox; the task's time starts with it. */
static int step_sandbox(struct steps *s)
{
	struct run *r = s->r;
	if (r->job->be->create(&s->sb, &s->spec, &s->e) < 0)
		return fail(r, "preparing", s->e.msg);
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
			return fail(r, "preparing", s->e.msg);
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
		logline(r, "preparing: %s; git makes the task branch instead", be.msg);
	char *script = xasprintf("git update-ref refs/heads/paddock/%s %s && "
	                         "git symbolic-ref HEAD refs/heads/paddock/%s", t->id,
	                         r->base, t->id);
	const char *co[] = { "/bin/sh", "-c", script, NULL };
	struct sandbox_result res;
	int rc = sb_run(r, s->sb, co, sandbox_git_env(), r->deadline, &res, &s->e);
	free(script);
	if (rc < 0 || (s->problem = result_problem(r, _("creating the task branch"), &res)))
		return fail(r, "preparing", rc < 0 ? s->e.msg : s->problem);
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
		if (home_restore(r, s->sb)) {
			home_session(r, t->id);
			logline(r, "preparing: the agent's home is back from the last round");
		} else if (r->session && s->agent->kind != AGENT_SCRIPT) {
			logline(r, "preparing: the agent's home was not kept; it starts a new "
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
	char *theirs = paths_task_home(job->data_dir, t->follow_of);
	if (access(mine, F_OK) < 0)
		fsx_copy_regular(theirs, mine, HOME_ARCHIVE_CAP, 0600, &s->e);
	free(mine);
	free(theirs);
	if (home_restore(r, s->sb)) {
		home_session(r, t->follow_of);
		logline(r, "preparing: the agent's home is back from task %s", t->follow_of);
	} else if (r->session && s->agent->kind != AGENT_SCRIPT) {
		logline(r, "preparing: task %s's agent home was not kept; it starts a "
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
		if (job->cfg->gate_timeout <= 0 || job->cmd_fd < 0)
			return 0;
		s->kept = 1;
		/* The home was saved when the round reached review; nothing
		 * runs in the sandbox while it waits at the gate. */
		int next = gate_wait(r, s->sb, &s->before);
		if (!next)
			return 0;
		/* The scheduler moved the task to running, round `next`. */
		r->round = next;
		r->deadline = clock_mono() + r->timeout;
		if (write_prompt(r, s->sb, s->prompt, &s->e) < 0)
			return fail(r, "running", s->e.msg);
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
		rc = fail(r, "preparing", s.e.msg);
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
	logline(&r, "task %s on repo %s with agent %s%s", job->task->id, job->task->repo,
	        job->task->agent, job->resume_round ? " (changes requested)" : "");
	int rc = run_steps(&r);
	close(r.log_fd);
	free(r.task_dir);
	free(r.mirror);
	return rc;
}
