#include "autoconfig.h"
#include "template.h"
#include "gateway.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <sys/types.h>
#include <unistd.h>

#include "buf.h"
#include "child.h"
#include "clock.h"
#include "fsx.h"
#include "i18n.h"
#include "mirror.h"
#include "paths.h"
#include "privsep.h"
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
/* Removes a tree of ours that may hold the sandbox uid's files: root
 * does it for a paddock.user (privsep.h). */
static int template_rm(const char *path, struct err *e)
{
	return privsep_active() ? privsep_remove(path, e) : fsx_rm_rf(path, e);
}

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

/* What the verification's checkout leaves in /out when it fails. */
#define VERIFY_CHECKOUT_FAILED ".paddock-checkout-failed"

/* One command of a throwaway sandbox's job. */
struct template_step {
	const char *command;           /* /bin/sh -c command */
	const char *const *env;        /* extra env, or NULL (then the job's) */
};

/* What runs in one throwaway sandbox: a file copied in first, then the
 * steps in order, each until one does not exit 0. */
struct template_job {
	const struct sandbox_backend *be;
	const struct repo_conf *net;   /* set-up's allowlist; NULL: no network */
	const char *id;
	const char *repo, *base;       /* what dir is the template of (base NULL:
	                                  not known here) */
	int direct;                    /* 1: over dir itself, not an overlay */
	const char *dir;
	int log_fd;
	int report_fd;                 /* the set-up gateway's egress lines; -1: log_fd */
	const char *copy_host, *copy_inside;
	/* Where the child copies the file a failed verification checkout
	 * leaves (VERIFY_CHECKOUT_FAILED), to tell it from failed tests;
	 * NULL: not a verification. */
	const char *marker_host;
	struct template_step steps[2];
	size_t nsteps;
	/* A prepared verification (template_verify_prepare): the sandbox is
	 * made and its session started at once; then the child waits on
	 * go_fd for the commit to check out ("<40 hex>\n"; end of file: none
	 * comes, nothing runs) and runs template_verify_script for it. -1:
	 * NULL test: the steps above, at once. */
	int go_fd, go_wfd;             /* the pipe's ends (the child closes go_wfd) */
	const char *test;
};

/* What the child reports to the parent: how far it got and how the last
 * step that ran ended. */
struct template_setup_report {
	int started;                   /* steps that ran */
	int checkout_failed;           /* a verification's checkout failed */
	struct sandbox_result res;     /* of the last one */
	struct err e;
};

struct template_child {
	int result_fd;                 /* the pipe the report goes back on */
	const struct config *cfg;
	const struct template_job *job;
};

static char *template_verify_script(const char *head, const char *test);

/* A prepared verification's commit, from the supervisor (go_fd): 0 with
 * head set, -1 when none comes (the round ended before its hand-off). */
static int template_go_read(int fd, char head[41])
{
	char line[41];
	size_t got = 0;
	while (got < sizeof line) {
		/* A cancelled task's SIGTERM only sets a flag here. */
		if (sandbox_cancel_requested())
			return -1;
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		if (poll(&pfd, 1, 500) <= 0)
			continue;
		ssize_t n = read(fd, line + got, sizeof line - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	if (got != sizeof line || line[40] != '\n')
		return -1;
	line[40] = '\0';
	if (!template_sha_valid(line))
		return -1;
	memcpy(head, line, 41);
	return 0;
}

/* In the forked child: one sandbox (it takes over this process's mount
 * namespace, which the supervisor needs for the task's own sandbox).  It
 * dies with its supervisor (SIGKILL, not SIGTERM: it keeps the
 * supervisor's SIGTERM handler, which only sets a flag, and a child stuck
 * somewhere would outlive its supervisor holding the template's lock).
 * Long: the sandbox's one life (gateway, make, warm-up for a verification,
 * the steps, a direct workspace brought back, the report) reads best in
 * order. */
static int template_setup_child(void *arg)
{
	const struct template_child *tc = arg;
	int result_fd = tc->result_fd;
	const struct config *cfg = tc->cfg;
	const struct template_job *job = tc->job;
	const struct sandbox_backend *be = job->be;
	struct template_setup_report rep;
	struct sandbox *sb = NULL;
	uint64_t used = 0;
	struct sandbox_spec spec = {
		.task_id = job->id, .limits = cfg->limits, .net = { .netns_fd = -1 },
		.ws = { .repo = job->repo, .base = job->base, .template_dir = job->dir,
		        .direct = job->direct },
	};
	const char *const *net_env = NULL;

	memset(&rep, 0, sizeof rep);
	double deadline = cfg->limits.timeout > 0 ? clock_mono() + cfg->limits.timeout : 0;
	/* Set-up reaches its own allowlist (package registries) through a
	 * proxy-only gateway; the tests get no network at all. */
	struct gateway *gw = NULL;
	if (job->net) {
		struct gateway_policy gp = {
			.cfg = cfg, .step = "setup",
			.allow_hosts = (const char *const *)job->net->setup_allow_hosts,
			.nallow_hosts = job->net->nsetup_allow_hosts,
			.be = be,
		};
		if (gateway_start(&gp, job->report_fd >= 0 ? job->report_fd : job->log_fd,
		                  &gw, &rep.e) < 0) {
			(void)fsx_write_all(result_fd, &rep, sizeof rep);
			return 0;
		}
		gateway_attach(gw, &spec.net);
		net_env = gateway_env(gw);
	}
	char *script = NULL;
	int ready = be->create(&sb, &spec, &rep.e) == 0;
	if (job->test)
		close(job->go_wfd);
	if (ready && job->test) {
		/* The sandbox's first process is started now (its session, its
		 * cgroups), while the agent works: the verification then only
		 * checks out and tests.  Its result is not the verification's. */
		static const char *const warm[] = { "/bin/true", NULL };
		struct sandbox_result wres;
		struct sandbox_cmd wcmd = { .argv = warm, .out_fd = job->log_fd,
		                            .output_used = &used, .deadline = deadline };
		char head[41];
		if (be->run(sb, &wcmd, &wres, &rep.e) < 0) {
			ready = 0;
		} else if (template_go_read(job->go_fd, head) < 0) {
			/* Read only when the supervisor handed a commit and then
			 * lost it (else the result is not wanted). */
			err_set(&rep.e, _("the verification's sandbox got no commit to check out"));
			ready = 0;
		} else {
			used = 0;
			script = template_verify_script(head, job->test);
			if (cfg->limits.timeout > 0)
				deadline = clock_mono() + cfg->limits.timeout;
		}
		if (!ready) {
			be->destroy(sb);
			sb = NULL;
		}
	}
	if (ready) {
		if (!job->copy_host ||
		    be->copy_in(sb, job->copy_host, job->copy_inside, &rep.e) == 0) {
			for (size_t i = 0; i < job->nsteps; i++) {
				const char *argv[] = { "/bin/sh", "-c",
				                       script ? script : job->steps[i].command, NULL };
				struct sandbox_cmd cmd = {
					.argv = argv, .out_fd = job->log_fd, .output_used = &used,
					.deadline = deadline,
					.env = job->steps[i].env ? job->steps[i].env : net_env,
				};
				if (be->run(sb, &cmd, &rep.res, &rep.e) < 0)
					break;
				rep.started++;
				if (rep.res.end != SANDBOX_EXITED || rep.res.code != 0)
					break;
			}
			/* Where the set-up's commands did not write the host's
			 * folder itself, what they left comes back now; without
			 * it the template would not be what they made. */
			if (job->direct && be->finish && (size_t)rep.started == job->nsteps &&
			    rep.res.end == SANDBOX_EXITED && rep.res.code == 0 &&
			    be->finish(sb, &rep.e) < 0)
				rep.started = 0;
			struct err ignored = {{0}};
			if (job->marker_host && rep.started &&
			    (rep.res.end != SANDBOX_EXITED || rep.res.code != 0) &&
			    be->copy_out(sb, SANDBOX_OUTDIR "/" VERIFY_CHECKOUT_FAILED, job->marker_host,
			                 16, &ignored) == 0) {
				rep.checkout_failed = 1;
				unlink(job->marker_host);
			}
		}
		/* A verification's throwaway sandbox goes after its result:
		 * the supervisor, waiting for that, need not wait for its
		 * removal (template_verify_finish).  A template's set-up is
		 * told only once its sandbox is gone: the caller uses the
		 * template next. */
		if (job->test) {
			(void)fsx_write_all(result_fd, &rep, sizeof rep);
			result_fd = -1;
		}
		gateway_stop(gw);
		gw = NULL;
		be->destroy(sb);
	}
	free(script);
	if (job->test)
		close(job->go_fd);
	gateway_stop(gw);
	if (result_fd >= 0)
		(void)fsx_write_all(result_fd, &rep, sizeof rep);
	return 0;
}

/* A job running in its forked child: template_sandbox_start starts it,
 * template_sandbox_finish waits for its report. */
struct template_run {
	struct child ch;
	int fd;                        /* the report pipe's read end */
	double until;
	int running;                   /* reported, not yet waited for */
};

/* Starts a job in a sandbox of its own in a forked child (the caller's
 * mount namespace stays free for the task's sandbox).  The child has its
 * own copy of job: the caller may free it once this returns. */
static int template_sandbox_start(const struct config *cfg, const struct template_job *job,
                                  struct template_run *run, struct err *e)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return err_errno(e, _("cannot create a pipe"));
	struct template_child tc = { .result_fd = p[1], .cfg = cfg, .job = job };
	memset(run, 0, sizeof *run);
	run->ch = (struct child){ .fn = template_setup_child, .arg = &tc,
	                          .flags = CHILD_DIE_WITH_PARENT };
	if (child_start(&run->ch, e) < 0) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	close(p[1]);
	run->fd = p[0];
	/* The child keeps its own time limit; this one is for a child that
	 * hangs before it can (a minute past it). */
	run->until = clock_mono() + (cfg->limits.timeout > 0 ? cfg->limits.timeout : 86400) + 60;
	return 0;
}

/* Waits for the job's report; the run is over either way, and its
 * process too unless keep is set (then the caller's to child_finish: it
 * may still be removing its sandbox). */
static int template_sandbox_finish(struct template_run *run, struct template_setup_report *out,
                                   int keep, struct err *e)
{
	struct template_setup_report rep;
	size_t got = 0;
	int told = 0, killed = 0;
	while (got < sizeof rep) {
		struct pollfd pfd = { .fd = run->fd, .events = POLLIN };
		int pr = poll(&pfd, 1, 1000);
		if (pr < 0 && errno != EINTR)
			break;
		/* A cancelled task stops its throwaway sandbox too (the child
		 * keeps the supervisor's SIGTERM handler). */
		if (!told && sandbox_cancel_requested()) {
			child_kill(&run->ch, SIGTERM);
			told = 1;
		}
		if (!killed && clock_mono() > run->until) {
			child_kill(&run->ch, SIGKILL);
			killed = 1;
		}
		if (pr <= 0)
			continue;
		ssize_t n = read(run->fd, (char *)&rep + got, sizeof rep - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(run->fd);
	run->fd = -1;
	if (!keep || got != sizeof rep)
		child_finish(&run->ch);
	else
		run->running = 1;
	if (got != sizeof rep)
		return err_set(e, _("the sandbox process died; see the log"));
	*out = rep;
	return 0;
}

/* Runs a job in its own sandbox to the end. */
static int template_sandbox(const struct config *cfg, const struct template_job *job,
                            struct template_setup_report *out, struct err *e)
{
	struct template_run run;
	if (template_sandbox_start(cfg, job, &run, e) < 0)
		return -1;
	return template_sandbox_finish(&run, out, 0, e);
}

/* After set-up, inside its sandbox: the state it left is the baseline, so
 * that no task commits it.  Untracked files and folders go to the
 * template's info/exclude (anchored, glob characters escaped; a name with
 * a newline cannot be written there and stays visible); tracked files it
 * changed are listed with the blob they hold now in info/paddock-baseline,
 * which the hand-off reads.  The index is refreshed so that tasks do not
 * re-read files set-up only touched. */
static const char template_baseline_script[] =
	"set -e\n"
	"gd=$(git rev-parse --git-dir)\n"
	"mkdir -p \"$gd/info\"\n"
	/* Set-up may have left an answer for the fsmonitor hook: this
	 * refresh must look at every file. */
	"rm -rf \"$PADDOCK_OUT/" SANDBOX_CHANGES_NAME "\"\n"
	"git update-index -q --refresh >/dev/null 2>&1 || true\n"
	"git ls-files -z --others --directory --exclude-standard | "
	"sed -z '/\\n/d; s/[][*?\\\\]/\\\\&/g; s/^[#!]/\\\\&/; s/ $/\\\\ /; s|^|/|' | "
	"tr '\\0' '\\n' >> \"$gd/info/exclude\"\n"
	"git diff-files -z --name-only | xargs -0r sh -c 'for p; do "
	"case \"$p\" in *\"\n\"*) continue ;; esac; "
	"if [ -e \"$p\" ] || [ -L \"$p\" ]; then s=$(git hash-object -- \"$p\"); "
	"else s=0000000000000000000000000000000000000000; fi; "
	"printf \"%s %s\\n\" \"$s\" \"$p\"; done' sh > \"$gd/info/paddock-baseline\"\n";

static int template_setup(const struct template_ctx *tc, const struct repo_conf *r,
                          const char *sha, const char *dir, struct err *e)
{
	struct template_setup_report rep;
	/* Unique per process: another paddock (another data dir) may build
	 * the same commit at the same moment. */
	char *id = xasprintf("tpl-%ld-%.8s", (long)getpid(), sha);
	struct template_job job = {
		.be = tc->be, .net = r, .id = id, .repo = r->name, .base = sha, .direct = 1,
		.dir = dir, .log_fd = tc->log_fd,
		.report_fd = tc->report_fd,
		.steps = { { r->setup, NULL },
		           { template_baseline_script, sandbox_git_env_fsmonitor() } },
		.nsteps = 2,
	};
	int rc = template_sandbox(tc->cfg, &job, &rep, e);
	free(id);
	if (rc < 0)
		return err_prefix(e, "setup");
	if (!rep.started) {
		*e = rep.e;
		return err_prefix(e, "setup");
	}
	if (rep.res.end == SANDBOX_EXITED && rep.res.code == 0)
		return 0;
	char how[128];
	sandbox_end_describe(&rep.res, how, sizeof how);
	if (rep.started == 2)
		return err_set(e, _("setup: recording the files the set-up left failed (%s); "
		                    "see the log"), how);
	if (rep.res.end == SANDBOX_EXITED)
		return err_set(e, _("setup: command failed (exit %d); see the log"), rep.res.code);
	return err_set(e, _("setup: command failed (%s); see the log"), how);
}

/* Entries of at least this many files are worth waiting for. */
#define TEMPLATE_RACY_ENTRIES 1000

/* The checkout writes its files and its index in the same second, so
 * every entry is "racily clean" and git re-hashes each file in every task
 * (seconds on a large repo).  An index written after that second (the
 * refresh below, with --force-write-index) makes them clean for good: the
 * files never change again.  On a large checkout this waits for the next
 * second (under 1 s, once per template); a small one re-hashes in less. */
static void template_wait_racy(const char *index)
{
	struct stat st;
	unsigned char head[12];
	int fd = open(index, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	int full = fd >= 0 && fstat(fd, &st) == 0 && read(fd, head, sizeof head) == sizeof head;
	if (fd >= 0)
		close(fd);
	if (!full || memcmp(head, "DIRC", 4) != 0)
		return;
	uint32_t entries = (uint32_t)head[8] << 24 | (uint32_t)head[9] << 16 |
	                   (uint32_t)head[10] << 8 | head[11];
	if (entries < TEMPLATE_RACY_ENTRIES)
		return;
	struct timespec now;
	while (clock_gettime(CLOCK_REALTIME, &now) == 0 && now.tv_sec <= st.st_mtime) {
		struct timespec d = { 0, 1000000000L - now.tv_nsec };
		nanosleep(&d, NULL);
	}
}

static int template_build(const struct template_ctx *tc, const struct repo_conf *r,
                          const char *sha, const char *tmp, struct err *e)
{
	const char *data_dir = tc->data_dir;
	char *mirror = mirror_path(data_dir, r->name);
	int rc = -1;
	/* Only the base commit's history: a fetch (never clone --local, which
	 * copies every object) of that one commit, so that no other task's
	 * imported work, failed or rejected, is readable from a template. */
	const char *init[] = { "init", "-q", "--", tmp, NULL };
	const char *fetch[] = { "-c", "core.hooksPath=/dev/null", "-C", tmp, "fetch", "-q",
		"--no-tags", "--no-write-fetch-head",
		"--upload-pack=git -c uploadpack.allowAnySHA1InWant=true upload-pack",
		"--", mirror, sha, NULL };
	const char *checkout[] = { "-c", "core.hooksPath=/dev/null", "-C", tmp, "checkout", "-q",
		"--detach", sha, "--", NULL };
	const char *nogc[] = { "-C", tmp, "config", "gc.auto", "0", NULL };
	/* Seen through a task's overlay, files keep their size and mtime but
	 * not their inode number: with the default checks git would re-read
	 * every file on the first `git add` in every task. */
	const char *minstat[] = { "-C", tmp, "config", "core.checkStat", "minimal", NULL };
	const char *noctime[] = { "-C", tmp, "config", "core.trustCtime", "false", NULL };

	/* Under the mirror's lock: a fetch or bundle import in progress would
	 * otherwise be read half-done. */
	int mlock = mirror_lock(mirror, e);
	if (mlock < 0)
		goto out;
	int fetched = template_git("git init", init, e) == 0 &&
		template_git("git fetch", fetch, e) == 0;
	close(mlock);
	if (!fetched ||
	    template_git("git checkout", checkout, e) < 0 ||
	    template_git("git config", nogc, e) < 0 ||
	    template_git("git config", minstat, e) < 0 ||
	    template_git("git config", noctime, e) < 0)
		goto out;
	/* chown changes every file's ctime, which the index records: refresh
	 * the index afterwards, or git in every task would re-read every file
	 * to find it unchanged (the cost would grow with the repo).  The tree
	 * is still only paddock's own checkout here, never an agent's. */
	/* The refresh records every file as checked out for git's fsmonitor
	 * (sandbox.h): a task's git then checks only what it changed. */
	const char *refresh[] = { "-c", "core.hooksPath=/dev/null", "-c", "safe.directory=*",
		"-c", "core.fsmonitor=" SANDBOX_FSMONITOR_ALL, "-c", "core.fsmonitorHookVersion=2",
		"-C", tmp, "update-index",
		"-q", "--refresh", "--force-write-index", NULL };
	/* The folder where the hand-off keeps the index it staged
	 * (SANDBOX_STAGED_DIR), made once here rather than by a mkdir in
	 * every task's first hand-off; one a set-up removes is made there. */
	char *staged = xasprintf("%s/.git/" SANDBOX_STAGED_DIR, tmp);
	if (mkdir(staged, 0755) < 0 && errno != EEXIST) {
		err_errno(e, _("cannot create %s"), staged);
		free(staged);
		goto out;
	}
	free(staged);
	char *index = xasprintf("%s/.git/index", tmp);
	template_wait_racy(index);
	uid_t ouid;
	gid_t ogid;
	tc->be->owner(&ouid, &ogid);
	/* With paddock.user root gives it away, and the sandbox uid refreshes
	 * the index (privsep.h). */
	int handed = privsep_active();
	int chowned = handed ? privsep_hand_over(tmp, e) == 0 :
		fsx_chown_r(tmp, ouid, ogid, e) == 0 &&
		template_git("git update-index", refresh, e) == 0;
	if (chowned && !handed && lchown(index, ouid, ogid) < 0) {
		err_errno(e, _("cannot change owner of %s"), index);
		chowned = 0;
	}
	free(index);
	if (!chowned)
		goto out;
	if (r->setup && *r->setup && template_setup(tc, r, sha, tmp, e) < 0)
		goto out;
	rc = 0;
out:
	free(mirror);
	return rc;
}

char *template_name(const struct repo_conf *r, const char *sha)
{
	/* FNV-1a over the set-up command and its allowlist: a change to either
	 * makes a new template, and the old one ages out. */
	uint64_t h = 1469598103934665603ULL;
	const char *parts[2] = { "setup", r->setup ? r->setup : "" };
	for (size_t i = 0; i < 2 + r->nsetup_allow_hosts; i++) {
		const char *p = i < 2 ? parts[i] : r->setup_allow_hosts[i - 2];
		for (; *p; p++)
			h = (h ^ (unsigned char)*p) * 1099511628211ULL;
		h = (h ^ 0) * 1099511628211ULL;
	}
	return xasprintf("%s-%012llx", sha, (unsigned long long)(h & 0xffffffffffffULL));
}

/* Templates this process uses: a shared lock on <name>.use each, held
 * until the process exits, so that `template prune` leaves them. */
static int template_use(const char *dir, const char *name)
{
	char *use = xasprintf("%s/%s.use", dir, name);
	int fd = open(use, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	free(use);
	if (fd < 0)
		return -1;
	while (flock(fd, LOCK_SH) < 0)
		if (errno != EINTR) {
			close(fd);
			return -1;
		}
	/* Its mtime is the template's last use. */
	futimens(fd, NULL);
	return fd;
}

int template_ensure(const struct template_ctx *tc, const struct repo_conf *r, const char *sha,
                    char **path_out, struct err *e)
{
	const char *data_dir = tc->data_dir;
	char *dir = paths_template_repo_dir(data_dir, r->name);
	char *name = template_sha_valid(sha) ? template_name(r, sha) : xstrdup(sha);
	char *final = xasprintf("%s/%s", dir, name);
	char *tmp = xasprintf("%s/%s.tmp", dir, name);
	char *lock = xasprintf("%s/%s.lock", dir, name);
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
	/* Taken under the build lock, which prune takes too: a template is
	 * never removed between being found here and being used. */
	if (template_use(dir, name) < 0) {
		err_errno(e, _("cannot lock %s/%s.use"), dir, name);
		goto out;
	}
	/* Built by someone else (or earlier): reuse it. */
	if (lstat(final, &st) == 0 && S_ISDIR(st.st_mode)) {
		rc = 0;
		goto out;
	}
	/* A build that died half-way. */
	if (template_rm(tmp, e) < 0)
		goto out;
	if (template_build(tc, r, sha, tmp, e) < 0) {
		struct err ignored;
		template_rm(tmp, &ignored);
		goto out;
	}
	if (rename(tmp, final) < 0) {
		err_errno(e, _("cannot rename %s to %s"), tmp, final);
		struct err ignored;
		template_rm(tmp, &ignored);
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
	free(name);
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

/* 12 hex digits of FNV-1a over a test command (malloc'd). */
static char *template_test_key(const char *test)
{
	uint64_t h = 1469598103934665603ULL;
	for (const char *p = test; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	return xasprintf("%012llx", (unsigned long long)(h & 0xffffffffffffULL));
}

int template_tests_before(const struct template_ctx *tc, const struct repo_conf *r,
                          const char *sha, const char *tpl, struct template_tests *out,
                          struct err *e)
{
	const char *data_dir = tc->data_dir;
	memset(out, 0, sizeof *out);
	if (!r->test)
		return 0;
	char *name = template_name(r, sha);
	char *dir = paths_template_repo_dir(data_dir, r->name);
	/* Keyed by the command too: tasks with test commands of their own
	 * (--test) never share a result. */
	char *key = template_test_key(r->test);
	char *cache = xasprintf("%s/%s.tests-%s", dir, name, key);
	char *logpath = xasprintf("%s/%s.tests-%s.log", dir, name, key);
	free(key);
	char *lock = xasprintf("%s/%s.lock", dir, name);
	free(dir);
	free(name);
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
	struct template_job job = {
		.be = tc->be, .id = id, .repo = r->name, .base = sha, .dir = tpl, .log_fd = logfd,
		.report_fd = -1,
		.steps = { { r->test, NULL } }, .nsteps = 1,
	};
	int trc = template_sandbox(tc->cfg, &job, &rep, e);
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

struct template_verify {
	struct template_run run;
	int go;                        /* the go pipe's write end; -1 once used */
	char head[41];
};

/* Appends s to b quoted for sh: in single quotes, each ' as '\''. */
static void template_sh_quote(struct buf *b, const char *s)
{
	buf_addc(b, '\'');
	for (; *s; s++) {
		if (*s == '\'')
			buf_adds(b, "'\\''");
		else
			buf_addc(b, *s);
	}
	buf_addc(b, '\'');
}

/* The verification's one command: the checkout by paddock's own git (in a
 * subshell with sandbox_git_env(): the agent's configuration, hooks and
 * home are not in paddock's template), then the test command as the
 * agent's run has it.  The bundle was written by the agent; the host
 * checks it meanwhile (bundle_import), and a bundle it refuses fails the
 * task whatever this finds, so unbundle's index-pack without the
 * connectivity walk over every ref (fetch's) is enough here.  One sandbox
 * process, not two: each costs several ms. */
static char *template_verify_script(const char *head, const char *test)
{
	struct buf b = {0};
	buf_adds(&b, "(\n");
	/* Nothing changed since the template: what fsmonitor answers lets
	 * the checkout skip a stat of every file (sandbox.h), and the hook
	 * answers that itself. */
	for (const char *const *v = sandbox_git_env_unchanged(); *v; v++) {
		const char *eq = strchr(*v, '=');
		buf_printf(&b, "export %.*s=", (int)(eq - *v), *v);
		template_sh_quote(&b, eq + 1);
		buf_addc(&b, '\n');
	}
	buf_printf(&b, "set -e\n"
	           "git bundle unbundle \"$PADDOCK_OUT/verify.bundle\" >/dev/null\n"
	           "git checkout -q -f --detach %s\n"
	           "rm -f \"$PADDOCK_OUT/verify.bundle\"\n"
	           ") || { : > \"$PADDOCK_OUT/" VERIFY_CHECKOUT_FAILED "\"; exit 1; }\n"
	           "exec /bin/sh -c ", head);
	template_sh_quote(&b, test);
	buf_addc(&b, '\n');
	return buf_detach(&b);
}

int template_verify_prepare(const struct template_ctx *tc, const struct repo_conf *r,
                            const char *tpl, const char *bundle, int round,
                            struct template_verify **out, struct err *e)
{
	static const char *const test_env[] = { "PADDOCK_STEP=test", NULL };
	int go[2];
	if (pipe2(go, O_CLOEXEC) < 0)
		return err_errno(e, _("cannot create a pipe"));
	char *id = xasprintf("vfy-%ld-%d", (long)getpid(), round);
	char *marker = xasprintf("%s.checkout-failed", bundle);
	struct template_job job = {
		.be = tc->be, .id = id, .repo = r->name, .dir = tpl, .log_fd = tc->log_fd,
		.report_fd = -1, .copy_host = bundle, .copy_inside = SANDBOX_OUTDIR "/verify.bundle",
		.marker_host = marker,
		.steps = { { NULL, test_env } },
		.nsteps = 1,
		.go_fd = go[0], .go_wfd = go[1], .test = r->test,
	};
	struct template_verify *v = xcalloc(1, sizeof *v);
	v->go = go[1];
	int rc = template_sandbox_start(tc->cfg, &job, &v->run, e);
	close(go[0]);
	free(id);
	free(marker);
	if (rc < 0) {
		close(go[1]);
		free(v);
		return -1;
	}
	*out = v;
	return 0;
}

int template_verify_go(struct template_verify *v, const char *head, struct err *e)
{
	char line[42];
	snprintf(v->head, sizeof v->head, "%s", head);
	snprintf(line, sizeof line, "%.40s\n", head);
	int rc = 0;
	if (v->go < 0 || fsx_write_all(v->go, line, 41) < 0)
		rc = err_set(e, _("the verification's sandbox process is gone; see the log"));
	if (v->go >= 0)
		close(v->go);
	v->go = -1;
	return rc;
}

int template_verify_finish(struct template_verify *v, int stop, struct sandbox_result *res,
                           struct err *e)
{
	struct template_setup_report rep;
	/* A prepared one that never got its commit: none comes. */
	if (v->go >= 0) {
		close(v->go);
		v->go = -1;
		stop = 1;
	}
	if (stop)
		child_kill(&v->run.ch, SIGTERM);
	int rc = template_sandbox_finish(&v->run, &rep, !stop, e);
	if (rc == 0 && !rep.started) {
		*e = rep.e;
		rc = -1;
	} else if (rc == 0 && rep.checkout_failed) {
		char how[128];
		sandbox_end_describe(&rep.res, how, sizeof how);
		rc = err_set(e, _("checking out %.12s in a clean sandbox failed (%s); see the log"),
		             v->head, how);
	} else if (rc == 0) {
		*res = rep.res;
	}
	return rc;
}

void template_verify_free(struct template_verify *v)
{
	if (!v)
		return;
	if (v->go >= 0)
		close(v->go);
	if (v->run.fd >= 0)
		close(v->run.fd);
	if (v->run.running || v->run.fd >= 0)
		child_finish(&v->run.ch);
	free(v);
}

/* ---- template list and prune ---- */

static int template_name_parse(const char *name, char sha[41])
{
	size_t n = strlen(name);
	if (n < 40)
		return -1;
	memcpy(sha, name, 40);
	sha[40] = '\0';
	if (!template_sha_valid(sha))
		return -1;
	if (n == 40)
		return 0;
	/* <sha>-<key>, nothing else (not .lock, .tests, .tmp) */
	if (name[40] != '-' || n != 53)
		return -1;
	for (size_t i = 41; i < n; i++)
		if (!strchr("0123456789abcdef", name[i]))
			return -1;
	return 0;
}

static uint64_t template_du(const char *path)
{
	uint64_t total = 0;
	DIR *d = opendir(path);
	if (!d)
		return 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		char *p = xasprintf("%s/%s", path, de->d_name);
		struct stat st;
		if (lstat(p, &st) == 0) {
			total += (uint64_t)st.st_blocks * 512;
			if (S_ISDIR(st.st_mode))
				total += template_du(p);
		}
		free(p);
	}
	closedir(d);
	return total;
}

/* 1 when some process holds the template (building or using it). */
static int template_busy(const char *dir, const char *name)
{
	int busy = 0;
	const char *ext[] = { "lock", "use" };
	for (int i = 0; i < 2 && !busy; i++) {
		char *p = xasprintf("%s/%s.%s", dir, name, ext[i]);
		int fd = open(p, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		free(p);
		if (fd < 0)
			continue;
		busy = flock(fd, LOCK_EX | LOCK_NB) < 0 && errno == EWOULDBLOCK;
		close(fd);
	}
	return busy;
}

int template_list(const char *data_dir, int with_size, struct template_info **out,
                  size_t *nout, struct err *e)
{
	char *top = paths_templates_dir(data_dir);
	struct template_info *v = NULL;
	size_t n = 0;
	*out = NULL;
	*nout = 0;
	DIR *d = opendir(top);
	if (!d) {
		int gone = errno == ENOENT;
		if (!gone)
			err_errno(e, _("cannot read %s"), top);
		free(top);
		return gone ? 0 : -1;
	}
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char *rdir = xasprintf("%s/%s", top, de->d_name);
		DIR *rd = opendir(rdir);
		struct dirent *te;
		while (rd && (te = readdir(rd))) {
			char sha[41];
			struct stat st;
			char *path = xasprintf("%s/%s", rdir, te->d_name);
			if (template_name_parse(te->d_name, sha) < 0 || lstat(path, &st) < 0 ||
			    !S_ISDIR(st.st_mode)) {
				free(path);
				continue;
			}
			v = xrealloc(v, (n + 1) * sizeof *v);
			struct template_info *t = &v[n++];
			memset(t, 0, sizeof *t);
			t->repo = xstrdup(de->d_name);
			t->name = xstrdup(te->d_name);
			memcpy(t->sha, sha, sizeof sha);
			t->path = path;
			char *use = xasprintf("%s/%s.use", rdir, te->d_name);
			struct stat us;
			t->last_used = stat(use, &us) == 0 ? us.st_mtime : st.st_mtime;
			free(use);
			t->in_use = template_busy(rdir, te->d_name);
			if (with_size)
				t->bytes = template_du(path);
		}
		if (rd)
			closedir(rd);
		free(rdir);
	}
	closedir(d);
	free(top);
	*out = v;
	*nout = n;
	return 0;
}

void template_list_free(struct template_info *t, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(t[i].repo);
		free(t[i].name);
		free(t[i].path);
	}
	free(t);
}

int template_remove(const char *data_dir, const struct template_info *t, struct err *e)
{
	char *dir = paths_template_repo_dir(data_dir, t->repo);
	char *lock = xasprintf("%s/%s.lock", dir, t->name);
	char *use = xasprintf("%s/%s.use", dir, t->name);
	int rc = -1, lfd = -1, ufd = -1;
	/* Both locks, without waiting: a build or a task holds it otherwise. */
	lfd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	ufd = open(use, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (lfd < 0 || ufd < 0 || flock(lfd, LOCK_EX | LOCK_NB) < 0 ||
	    flock(ufd, LOCK_EX | LOCK_NB) < 0) {
		err_set(e, _("template %s of repo %s is in use; it is kept"), t->name, t->repo);
		goto out;
	}
	/* Its tests caches (<name>.tests-KEY and their logs; <name>.tests
	 * from before they had keys), an unfinished build, and the name of
	 * its blob (<name>.blob: the kubernetes backend's). */
	DIR *d = opendir(dir);
	struct dirent *de;
	size_t nl = strlen(t->name);
	while (d && (de = readdir(d))) {
		const char *rest = de->d_name + nl;
		if (strncmp(de->d_name, t->name, nl) != 0 ||
		    (strncmp(rest, ".tests", 6) != 0 && strcmp(rest, ".tmp") != 0 &&
		     strcmp(rest, ".blob") != 0))
			continue;
		char *p = xasprintf("%s/%s", dir, de->d_name);
		struct err ignored;
		template_rm(p, &ignored);
		free(p);
	}
	if (d)
		closedir(d);
	if (template_rm(t->path, e) < 0)
		goto out;
	/* The lock files stay: a process that opened one before this would
	 * otherwise lock a file nobody else sees. */
	rc = 0;
out:
	if (lfd >= 0)
		close(lfd);
	if (ufd >= 0)
		close(ufd);
	free(dir);
	free(lock);
	free(use);
	return rc;
}

int template_stale(const struct template_info *t, time_t now, double max_age)
{
	return !t->in_use && difftime(now, t->last_used) >= max_age;
}

/* Adds the hex names of the <dir>/<x>.blob notes (and, with deep, of
 * those one folder down) to names. */
static void blob_names(const char *dir, int deep, struct buf *names)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		size_t n = strlen(de->d_name);
		char *path = xasprintf("%s/%s", dir, de->d_name);
		struct buf b = { 0 };
		struct err ignored = {{0}};
		if (de->d_name[0] != '.' && deep && de->d_type == DT_DIR)
			blob_names(path, 0, names);
		else if (n > 5 && !strcmp(de->d_name + n - 5, ".blob") &&
		         fsx_read_file(path, 256, &b, &ignored) == 0 && b.len >= 64)
			buf_printf(names, "%.64s\n", b.data);
		buf_free(&b);
		free(path);
	}
	if (d)
		closedir(d);
}

size_t template_prune_blobs(const char *data_dir, double min_age)
{
	/* What a template or an agent's install names (the kubernetes
	 * backend's <folder>.blob, pods.c). */
	struct buf names = { 0 };
	char *tdir = paths_templates_dir(data_dir), *adir = paths_agents_dir(data_dir);
	blob_names(tdir, 1, &names);
	blob_names(adir, 0, &names);
	char *bdir = paths_blobs_dir(data_dir);
	DIR *d = opendir(bdir);
	struct dirent *de;
	size_t removed = 0;
	time_t now = time(NULL);
	while (d && (de = readdir(d))) {
		struct stat st;
		char *key = xasprintf("%s\n", de->d_name);
		if (strlen(de->d_name) == 64 && !(names.data && strstr(names.data, key)) &&
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
		    difftime(now, st.st_mtime) >= min_age && unlinkat(dirfd(d), de->d_name, 0) == 0)
			removed++;
		free(key);
	}
	if (d)
		closedir(d);
	free(bdir);
	free(tdir);
	free(adir);
	buf_free(&names);
	return removed;
}

size_t template_prune_unused(const char *data_dir, double max_age)
{
	struct template_info *t = NULL;
	size_t n = 0, removed = 0;
	struct err e = {{0}};
	if (template_list(data_dir, 0, &t, &n, &e) < 0)
		return 0;
	time_t now = time(NULL);
	for (size_t i = 0; i < n; i++)
		if (template_stale(&t[i], now, max_age) && template_remove(data_dir, &t[i], &e) == 0)
			removed++;
	template_list_free(t, n);
	template_prune_blobs(data_dir, max_age);
	return removed;
}

int template_janitor(const char *data_dir)
{
	char *top = paths_templates_dir(data_dir);
	DIR *d = opendir(top);
	int removed = 0;
	struct dirent *de;
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char *rdir = xasprintf("%s/%s", top, de->d_name);
		DIR *rd = opendir(rdir);
		struct dirent *te;
		while (rd && (te = readdir(rd))) {
			size_t n = strlen(te->d_name);
			if (n < 5 || strcmp(te->d_name + n - 4, ".tmp") != 0)
				continue;
			/* A build's work in progress: its builder holds the
			 * template's lock; one nobody holds was left by a
			 * process that died. */
			char *name = xstrndup(te->d_name, n - 4);
			char *lock = xasprintf("%s/%s.lock", rdir, name);
			int fd = open(lock, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
			/* No lock file at all: no builder can be at work. */
			if ((fd < 0 && errno == ENOENT) ||
			    (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0)) {
				char *tmp = xasprintf("%s/%s", rdir, te->d_name);
				struct err e = {{0}};
				if (fsx_rm_rf(tmp, &e) == 0)
					removed++;
				free(tmp);
			}
			if (fd >= 0)
				close(fd);
			free(lock);
			free(name);
		}
		if (rd)
			closedir(rd);
		free(rdir);
	}
	if (d)
		closedir(d);
	free(top);
	return removed;
}
