#include "autoconfig.h"
#include "template.h"
#include "gateway.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "clock.h"
#include "fsx.h"
#include "i18n.h"
#include "mirror.h"
#include "sandbox.h"
#include "testreport.h"

#define TEMPLATE_GIT_TIMEOUT 3600

static int template_sha_valid(const char *sha)
{
	if (strlen(sha) != 40)
		return 0;
	for (int i = 0; i < 40; i++)
		if (!((sha[i] >= '0' && sha[i] <= '9') || (sha[i] >= 'a' && sha[i] <= 'f')))
			return 0;
	return 1;
}

/* Runs one git command for the build; on failure says which step. */
static int template_git(const char *what, const char *const *argv, struct err *e)
{
	struct buf errb = {0};
	int ws, rc = -1;
	struct mirror_git_cmd c = {
		.argv = argv, .in_fd = -1, .out_fd = -1, .err = &errb,
		.timeout = TEMPLATE_GIT_TIMEOUT,
	};

	if (mirror_git_run(&c, &ws, e) < 0)
		goto out;
	if (!WIFEXITED(ws) || WEXITSTATUS(ws) != 0) {
		const char *msg = errb.data ? errb.data : "";
		const char *fatal = strstr(msg, "fatal: ");
		if (fatal)
			msg = fatal + 7;
		err_set(e, _("template: %s failed: %.*s"), what, (int)strcspn(msg, "\n"),
		        *msg ? msg : (WIFSIGNALED(ws) ? _("killed") : _("no message from git")));
		goto out;
	}
	rc = 0;
out:
	buf_free(&errb);
	return rc;
}

static int template_report_fd = -1;

void template_set_report_fd(int fd)
{
	template_report_fd = fd;
}

/* What the set-up child reports to the parent. */
struct template_setup_report {
	int started;
	struct sandbox_result res;
	struct err e;
};

/* In the forked child: one sandbox (it takes over this process's mount
 * namespace, which the supervisor needs for the task's own sandbox). */
static void template_setup_child(int report_fd, const struct config *cfg,
                                 const struct repo_conf *net, const char *command,
                                 const char *id, int direct, const char *dir, int log_fd)
{
	const struct sandbox_backend *be = sandbox_backend_default();
	struct template_setup_report rep;
	struct sandbox *sb = NULL;
	const char *argv[] = { "/bin/sh", "-c", command, NULL };
	uint64_t used = 0;
	struct sandbox_spec spec = {
		.task_id = id, .lower = dir, .workspace_direct = direct,
		.uid = cfg->sandbox_uid, .gid = cfg->sandbox_gid, .limits = cfg->limits,
	};
	struct sandbox_cmd cmd = { .argv = argv, .out_fd = log_fd, .output_used = &used };

	memset(&rep, 0, sizeof rep);
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (cfg->limits.timeout > 0)
		cmd.deadline = clock_mono() + cfg->limits.timeout;
	/* Set-up reaches its own allowlist (package registries) through a
	 * proxy-only gateway; the tests get no network at all. */
	struct gateway *gw = NULL;
	if (net) {
		struct gateway_policy gp = {
			.cfg = cfg, .step = "setup",
			.allow_hosts = (const char *const *)net->setup_allow_hosts,
			.nallow_hosts = net->nsetup_allow_hosts,
		};
		if (gateway_start(&gp, template_report_fd >= 0 ? template_report_fd : log_fd,
		                  &gw, &rep.e) < 0) {
			(void)fsx_write_all(report_fd, &rep, sizeof rep);
			_exit(0);
		}
		gateway_sandbox_spec(gw, &spec);
		cmd.env = gateway_env(gw);
	}
	if (be->create(&sb, &spec, &rep.e) == 0) {
		if (be->run(sb, &cmd, &rep.res, &rep.e) == 0)
			rep.started = 1;
		gateway_stop(gw);
		gw = NULL;
		be->destroy(sb);
	}
	gateway_stop(gw);
	(void)fsx_write_all(report_fd, &rep, sizeof rep);
	_exit(0);
}

/* Runs command in a sandbox of its own in a forked child (the caller's
 * mount namespace stays free for the task's sandbox): over dir itself
 * (direct) or over a throwaway overlay of it. */
static int template_sandbox(const struct config *cfg, const struct repo_conf *net,
                            const char *command, const char *id, int direct,
                            const char *dir, int log_fd,
                            struct template_setup_report *out, struct err *e)
{
	struct template_setup_report rep;
	int p[2], ws;
	size_t got = 0;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return err_errno(e, _("cannot create a pipe"));
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return err_errno(e, _("cannot fork for a sandbox"));
	}
	if (pid == 0) {
		close(p[0]);
		template_setup_child(p[1], cfg, net, command, id, direct, dir, log_fd);
	}
	close(p[1]);
	while (got < sizeof rep) {
		ssize_t n = read(p[0], (char *)&rep + got, sizeof rep - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(p[0]);
	while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
		;
	if (got != sizeof rep)
		return err_set(e, _("the sandbox process died; see the log"));
	*out = rep;
	return 0;
}

static int template_setup(const struct config *cfg, const struct repo_conf *r,
                          const char *sha, const char *dir, int log_fd, struct err *e)
{
	struct template_setup_report rep;
	/* Unique per process: another paddock (another data dir) may build
	 * the same commit at the same moment. */
	char *id = xasprintf("tpl-%ld-%.8s", (long)getpid(), sha);
	int rc = template_sandbox(cfg, r, r->setup, id, 1, dir, log_fd, &rep, e);
	free(id);
	if (rc < 0)
		return err_prefix(e, "setup");
	if (!rep.started) {
		*e = rep.e;
		return err_prefix(e, "setup");
	}
	if (rep.res.end == SANDBOX_EXITED && rep.res.code == 0)
		return 0;
	if (rep.res.end == SANDBOX_EXITED)
		return err_set(e, _("setup: command failed (exit %d); see the log"), rep.res.code);
	char how[128];
	sandbox_end_describe(&rep.res, how, sizeof how);
	return err_set(e, _("setup: command failed (%s); see the log"), how);
}

static int template_build(const char *data_dir, const struct config *cfg,
                          const struct repo_conf *r, const char *sha, const char *tmp,
                          int log_fd, struct err *e)
{
	char *mirror = mirror_path(data_dir, r->name);
	int rc = -1;
	/* --no-hardlinks: the template is chowned to the sandbox uid and the
	 * set-up command may write to it; hardlinked object files would give
	 * that uid the mirror's objects too. */
	const char *clone[] = { "-c", "core.hooksPath=/dev/null", "clone", "-q", "--local",
		"--no-hardlinks", "--no-checkout", "--", mirror, tmp, NULL };
	const char *checkout[] = { "-c", "core.hooksPath=/dev/null", "-C", tmp, "checkout", "-q",
		"--detach", sha, "--", NULL };
	const char *rmremote[] = { "-C", tmp, "remote", "remove", "origin", NULL };
	const char *nogc[] = { "-C", tmp, "config", "gc.auto", "0", NULL };
	/* Seen through a task's overlay, files keep their size and mtime but
	 * not their inode number: with the default checks git would re-read
	 * every file on the first `git add` in every task. */
	const char *minstat[] = { "-C", tmp, "config", "core.checkStat", "minimal", NULL };
	const char *noctime[] = { "-C", tmp, "config", "core.trustCtime", "false", NULL };

	/* Under the mirror's lock: a fetch or bundle import in progress would
	 * otherwise be copied half-done (clone --local copies objects/). */
	int mlock = mirror_lock(mirror, e);
	if (mlock < 0)
		goto out;
	int cloned = template_git("git clone", clone, e);
	close(mlock);
	if (cloned < 0 ||
	    template_git("git checkout", checkout, e) < 0 ||
	    template_git("git remote remove", rmremote, e) < 0 ||
	    template_git("git config", nogc, e) < 0 ||
	    template_git("git config", minstat, e) < 0 ||
	    template_git("git config", noctime, e) < 0)
		goto out;
	/* chown changes every file's ctime, which the index records: refresh
	 * the index afterwards, or git in every task would re-read every file
	 * to find it unchanged (the cost would grow with the repo).  The tree
	 * is still only paddock's own checkout here, never an agent's. */
	const char *refresh[] = { "-c", "core.hooksPath=/dev/null", "-c", "safe.directory=*",
		"-C", tmp, "update-index",
		"-q", "--refresh", NULL };
	char *index = xasprintf("%s/.git/index", tmp);
	int chowned = fsx_chown_r(tmp, cfg->sandbox_uid, cfg->sandbox_gid, e) == 0 &&
		template_git("git update-index", refresh, e) == 0;
	if (chowned && lchown(index, cfg->sandbox_uid, cfg->sandbox_gid) < 0) {
		err_errno(e, _("cannot change owner of %s"), index);
		chowned = 0;
	}
	free(index);
	if (!chowned)
		goto out;
	if (r->setup && *r->setup && template_setup(cfg, r, sha, tmp, log_fd, e) < 0)
		goto out;
	rc = 0;
out:
	free(mirror);
	return rc;
}

int template_ensure(const char *data_dir, const struct config *cfg,
                    const struct repo_conf *r, const char *sha, int log_fd,
                    char **path_out, struct err *e)
{
	char *dir = xasprintf("%s/templates/%s", data_dir, r->name);
	char *final = xasprintf("%s/%s", dir, sha);
	char *tmp = xasprintf("%s/%s.tmp", dir, sha);
	char *lock = xasprintf("%s/%s.lock", dir, sha);
	int lockfd = -1, rc = -1;
	struct stat st;

	if (!template_sha_valid(sha)) {
		err_set(e, _("template: %s is not a full commit id"), sha);
		goto out;
	}
	if (fsx_mkdir_p(dir, 0755, e) < 0)
		goto out;
	lockfd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (lockfd < 0) {
		err_errno(e, _("cannot open the lock file %s"), lock);
		goto out;
	}
	while (flock(lockfd, LOCK_EX) < 0) {
		if (errno != EINTR) {
			err_errno(e, _("cannot lock %s"), lock);
			goto out;
		}
	}
	/* Built by someone else (or earlier): reuse it. */
	if (lstat(final, &st) == 0 && S_ISDIR(st.st_mode)) {
		rc = 0;
		goto out;
	}
	/* A build that died half-way. */
	if (fsx_rm_rf(tmp, e) < 0)
		goto out;
	if (template_build(data_dir, cfg, r, sha, tmp, log_fd, e) < 0) {
		struct err ignored;
		fsx_rm_rf(tmp, &ignored);
		goto out;
	}
	if (rename(tmp, final) < 0) {
		err_errno(e, _("cannot rename %s to %s"), tmp, final);
		struct err ignored;
		fsx_rm_rf(tmp, &ignored);
		goto out;
	}
	rc = 0;
out:
	if (rc == 0)
		*path_out = final;
	else
		free(final);
	if (lockfd >= 0)
		close(lockfd);
	free(dir);
	free(tmp);
	free(lock);
	return rc;
}

void template_tests_free(struct template_tests *t)
{
	free(t->tail);
	free(t->log);
	memset(t, 0, sizeof *t);
}

/* The cache file: "exit N" or "end WORDS" on the first line. */
static int template_tests_load(const char *cache, const char *logpath,
                               struct template_tests *out)
{
	struct buf b = {0};
	struct err ignored;
	if (fsx_read_file(cache, 4096, &b, &ignored) < 0) {
		buf_free(&b);
		return -1;
	}
	memset(out, 0, sizeof *out);
	out->ran = 1;
	int code;
	if (sscanf(b.data ? b.data : "", "exit %d", &code) == 1) {
		out->exited = 1;
		out->code = code;
		out->passed = code == 0;
	}
	out->log = xstrdup(logpath);
	struct buf lg = {0};
	if (fsx_read_file(logpath, 64 << 20, &lg, &ignored) == 0) {
		struct buf tail = {0};
		testreport_tail(lg.data ? lg.data : "", lg.len, 15, &tail);
		out->tail = buf_detach(&tail);
	}
	buf_free(&lg);
	buf_free(&b);
	return 0;
}

int template_tests_before(const char *data_dir, const struct config *cfg,
                          const struct repo_conf *r, const char *sha, const char *tpl,
                          struct template_tests *out, struct err *e)
{
	memset(out, 0, sizeof *out);
	if (!r->test)
		return 0;
	char *cache = xasprintf("%s/templates/%s/%s.tests", data_dir, r->name, sha);
	char *logpath = xasprintf("%s/templates/%s/%s.tests.log", data_dir, r->name, sha);
	char *lock = xasprintf("%s/templates/%s/%s.lock", data_dir, r->name, sha);
	int rc = -1, lockfd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (lockfd < 0 || flock(lockfd, LOCK_EX) < 0) {
		err_errno(e, _("cannot lock %s"), lock);
		goto out;
	}
	/* Once per base commit: every task on it shares the result. */
	if (template_tests_load(cache, logpath, out) == 0) {
		rc = 0;
		goto out;
	}
	int logfd = open(logpath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (logfd < 0) {
		err_errno(e, _("cannot create %s"), logpath);
		goto out;
	}
	struct template_setup_report rep;
	char *id = xasprintf("tst-%ld-%.8s", (long)getpid(), sha);
	int trc = template_sandbox(cfg, NULL, r->test, id, 0, tpl, logfd, &rep, e);
	free(id);
	close(logfd);
	if (trc < 0 || !rep.started) {
		if (trc == 0)
			*e = rep.e;
		err_prefix(e, _("tests on the base commit"));
		goto out;
	}
	char line[128];
	if (rep.res.end == SANDBOX_EXITED)
		snprintf(line, sizeof line, "exit %d\n", rep.res.code);
	else
		snprintf(line, sizeof line, "end %s\n",
		         sandbox_end_describe(&rep.res, (char[96]){0}, 96));
	if (fsx_write_file(cache, line, strlen(line), 0600, e) < 0)
		goto out;
	rc = template_tests_load(cache, logpath, out);
	if (rc < 0)
		err_set(e, _("cannot read %s"), cache);
out:
	if (lockfd >= 0)
		close(lockfd);
	free(cache);
	free(logpath);
	free(lock);
	return rc;
}
