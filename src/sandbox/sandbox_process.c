/* The process sandbox backend: no isolation (sandbox.h,
 * sandbox_backend_process; paddock-config(5), [sandbox] backend).  It
 * exists so that everything above the backend interface (the pipeline,
 * the scheduler, the dashboard) runs where bubblewrap cannot: in tests
 * without root, and in development on machines without user namespaces.
 * It refuses to run unless [sandbox] unsafe-no-isolation is set.
 *
 * A sandbox is a private directory ($TMPDIR or /tmp,
 * paddock-process-<pid>-XXXXXX, mode 0700): work/ (a copy of the
 * template, or the template itself when direct), home/, tmp/, out/,
 * prompt and etc/gitconfig.  Commands run as paddock's user, in their own
 * session (killed as a process group), with a cleared environment in
 * which the sandbox's paths (/work, /out, /home/agent, /paddock/prompt,
 * /opt/paddock/agent) at the start of an argument or a value are those
 * directories.
 *
 * They run through one sandbox session (runner.h): create() starts
 * paddock-runner (a subreaper here, not PID 1) with one end of a
 * socketpair, each run() is a RUN on it, every one fresh (the runner
 * first kills whatever earlier commands left below it), and destroy()
 * closes the channel, which kills what the runner started; a new prompt
 * is written by the runner too (copy_in), and files out are read by it
 * (copy_out: it follows a link on the way there, as the agent, running as
 * paddock's own user here, could anyway).  A runner
 * that lies, stalls or dies fails the command with ERR_RUNNER: the
 * agent's failure (it runs as the same user and can kill the runner).
 * What left the runner's tree (a process whose runner died) is beyond
 * reach: no isolation.  The shell (sandbox_cmd.term) is a RUN on the
 * session too. */
#include "autoconfig.h"
#include "sandbox.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "child.h"
#include "fsx.h"
#include "clock.h"
#include "i18n.h"
#include "runner.h"
#include "sandbox_int.h"

#define PROCESS_PREFIX "paddock-process-"
#define PROCESS_PATH "/usr/local/bin:/usr/bin:/bin"

/* The backend's sandbox (struct sandbox stays opaque: see psb()). */
struct psb {
	char *task_id;
	char *root;            /* the private directory */
	char *work;            /* root/work, or the template when direct */
	char *home, *tmp, *out, *prompt, *gitconfig;
	char *agent_dir;       /* the agent's install, shown at SANDBOX_AGENT_DIR */
	struct limits limits;
	struct child runner;   /* paddock-runner, while pid > 0 */
	struct runner *rn;     /* its session */
};

/* How long paddock-runner has to greet, and to end once its channel
 * closes. */
#define PROCESS_RUNNER_HELLO_S 10.0
#define PROCESS_RUNNER_EXIT_MS 2000

static struct psb *psb(struct sandbox *sb)
{
	return (struct psb *)(void *)sb;
}

static const char *tmp_base(void)
{
	const char *t = getenv("TMPDIR");
	return t && t[0] == '/' ? t : "/tmp";
}

/* The host path of a sandbox path at the start of s ("/out/x" ->
 * "<root>/out/x"), newly allocated; NULL when s names none. */
static char *translate(const struct psb *p, const char *s)
{
	const struct { const char *inside, *host; } map[] = {
		{ SANDBOX_WORKDIR, p->work }, { SANDBOX_OUTDIR, p->out },
		{ SANDBOX_HOME, p->home }, { SANDBOX_PROMPT, p->prompt },
		{ SANDBOX_AGENT_DIR, p->agent_dir },
	};
	for (size_t i = 0; i < sizeof map / sizeof map[0]; i++) {
		size_t n = strlen(map[i].inside);
		if (map[i].host && strncmp(s, map[i].inside, n) == 0 && (s[n] == '\0' || s[n] == '/'))
			return xasprintf("%s%s", map[i].host, s + n);
	}
	return NULL;
}

/* A NULL-terminated list of strings it owns. */
struct strv {
	char **v;
	size_t n;
};

static void strv_add(struct strv *l, char *s)
{
	l->v = xrealloc(l->v, (l->n + 2) * sizeof *l->v);
	l->v[l->n++] = s;
	l->v[l->n] = NULL;
}

static void strv_free(struct strv *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
}

/* ---- create / destroy ---- */

static int pr_preflight(struct err *e)
{
	if (!sandbox_options()->unsafe_no_isolation)
		return err_set(e, _("the process sandbox backend isolates nothing: agents would run "
		                    "as you, with your files and your network; set [sandbox] "
		                    "unsafe-no-isolation = true to use it anyway (tests, development), "
		                    "or use [sandbox] backend = bwrap"));
	return 0;
}

static void pr_destroy(struct sandbox *sb)
{
	struct psb *p = psb(sb);
	if (!p)
		return;
	struct err e = {{0}};
	runner_close(p->rn);
	if (p->runner.pid > 0) {
		/* A runner the agent stopped does not end on its own. */
		if (!child_wait_ms(&p->runner, PROCESS_RUNNER_EXIT_MS))
			child_kill(&p->runner, SIGKILL);
		child_finish(&p->runner);
	}
	if (p->root)
		fsx_rm_rf(p->root, &e);
	free(p->task_id);
	free(p->root);
	if (p->work != p->root)
		free(p->work);
	free(p->home);
	free(p->tmp);
	free(p->out);
	free(p->prompt);
	free(p->gitconfig);
	free(p->agent_dir);
	free(p);
}

/* An agent settings file in the home, its folders made on the way. */
static int write_home_file(const struct psb *p, const struct sandbox_home_file *f, struct err *e)
{
	if (!f->path || f->path[0] == '/' || strstr(f->path, ".."))
		return err_set(e, _("bad home file path %s"), f->path ? f->path : "(null)");
	char *path = xasprintf("%s/%s", p->home, f->path);
	char *slash = strrchr(path, '/');
	*slash = '\0';
	int rc = fsx_mkdir_p(path, 0700, e);
	*slash = '/';
	if (rc == 0)
		rc = fsx_write_file(path, f->content, strlen(f->content), 0600, e);
	free(path);
	return rc;
}

/* The workspace: a copy of the template (cp -a keeps modes, links and
 * the repository whole). */
static int copy_template(const char *from, const char *to, struct err *e)
{
	char *src = xasprintf("%s/.", from);
	const char *argv[] = { "cp", "-a", "--reflink=auto", src, to, NULL };
	struct child ch = { .argv = argv, .stdio = { CHILD_NULL, CHILD_NULL, CHILD_INHERIT } };
	int rc = child_start(&ch, e) < 0 ? -1 : child_finish(&ch) == 0 ? 0 : 1;
	free(src);
	if (rc > 0)
		err_set(e, _("cannot copy the template %s into the sandbox"), from);
	return rc ? -1 : 0;
}

static int pr_setup(struct psb *p, const struct sandbox_spec *spec, struct err *e)
{
	char *tmpl = xasprintf("%s/" PROCESS_PREFIX "%ld-XXXXXX", tmp_base(), (long)getpid());
	if (!mkdtemp(tmpl)) {
		err_errno(e, _("cannot create the sandbox's directory in %s"), tmp_base());
		free(tmpl);
		return -1;
	}
	p->root = tmpl;
	p->home = xasprintf("%s/home", p->root);
	p->tmp = xasprintf("%s/tmp", p->root);
	p->out = xasprintf("%s/out", p->root);
	p->prompt = xasprintf("%s/prompt", p->root);
	p->gitconfig = xasprintf("%s/gitconfig", p->root);
	p->work = spec->ws.direct ? xstrdup(spec->ws.template_dir) : xasprintf("%s/work", p->root);
	if (spec->agent_dir)
		p->agent_dir = xstrdup(spec->agent_dir);
	if (fsx_mkdir_p(p->home, 0700, e) < 0 || fsx_mkdir_p(p->tmp, 0700, e) < 0 ||
	    fsx_mkdir_p(p->out, 0755, e) < 0 ||
	    fsx_write_file(p->gitconfig, sandbox_gitconfig_data, strlen(sandbox_gitconfig_data),
	                   0444, e) < 0)
		return -1;
	if (spec->prompt_file) {
		if (fsx_copy_regular(spec->prompt_file, p->prompt, SANDBOX_PROMPT_MAX, 0644, e) < 0)
			return err_prefix(e, _("cannot copy the prompt into the sandbox"));
	} else if (fsx_write_file(p->prompt, "", 0, 0644, e) < 0) {
		return -1;
	}
	for (size_t i = 0; i < spec->nhome_files; i++)
		if (write_home_file(p, &spec->home_files[i], e) < 0)
			return -1;
	if (!spec->ws.direct && copy_template(spec->ws.template_dir, p->work, e) < 0)
		return -1;
	return 0;
}

/* The sandbox's session: paddock-runner with one end of a socketpair, in
 * the sandbox's folder, with nothing of paddock's environment; the rlimits
 * every command of the sandbox gets (no core files, CPU time). */
static int pr_runner_start(struct psb *p, struct err *e)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return err_errno(e, _("cannot create a socket pair"));
	char *path = sandbox_runner_path();
	char fdarg[16];
	snprintf(fdarg, sizeof fdarg, "%d", sv[1]);
	const char *argv[] = { path, "--fd", fdarg, NULL };
	const char *const env[] = { NULL };
	struct sandbox_cmd none = { .argv = NULL };
	uint64_t cpu = sandbox_cpu_rlimit(&p->limits, &none);
	struct child_limit limits[2] = { { RLIMIT_CORE, 0, 0 }, { RLIMIT_CPU, cpu, cpu + 1 } };
	p->runner = (struct child){ .argv = argv, .env = env, .cwd = p->root,
	                            .stdio = { CHILD_NULL, CHILD_NULL, CHILD_INHERIT },
	                            .keep = &sv[1], .nkeep = 1, .limits = limits,
	                            .nlimits = cpu ? 2 : 1,
	                            .flags = CHILD_CLOSE_FDS | CHILD_NEW_SESSION |
	                                     CHILD_DIE_WITH_PARENT };
	int rc = child_start(&p->runner, e);
	close(sv[1]);
	free(path);
	if (rc < 0) {
		p->runner.pid = 0;
		close(sv[0]);
		return err_prefix(e, _("cannot start the sandbox's runner"));
	}
	p->rn = runner_open(sv[0], clock_mono() + PROCESS_RUNNER_HELLO_S, e);
	return p->rn ? 0 : -1;
}

static int pr_create(struct sandbox **out, const struct sandbox_spec *spec, struct err *e)
{
	struct stat st;
	*out = NULL;
	if (pr_preflight(e) < 0)
		return -1;
	if (!spec->task_id || !*spec->task_id)
		return err_set(e, _("the sandbox needs a task id"));
	if (!spec->ws.template_dir || spec->ws.template_dir[0] != '/' ||
	    stat(spec->ws.template_dir, &st) < 0 || !S_ISDIR(st.st_mode))
		return err_set(e, _("the workspace %s is not a directory"),
		               spec->ws.template_dir ? spec->ws.template_dir : "(none)");
	if (spec->net.netns_fd >= 0 || spec->net.bridge_dir)
		return err_set(e, _("the process sandbox backend cannot join a network namespace"));
	struct psb *p = xcalloc(1, sizeof *p);
	p->task_id = xstrdup(spec->task_id);
	p->limits = spec->limits;
	if (pr_setup(p, spec, e) < 0 || pr_runner_start(p, e) < 0) {
		pr_destroy((struct sandbox *)(void *)p);
		return -1;
	}
	*out = (struct sandbox *)(void *)p;
	return 0;
}

/* ---- run ---- */

/* Sets NAME=VALUE in env (replacing an earlier NAME), the value's
 * sandbox path translated. */
static void env_set(const struct psb *p, struct strv *env, const char *kv)
{
	const char *eq = strchr(kv, '=');
	size_t n = (size_t)(eq - kv) + 1;
	char *host = translate(p, eq + 1);
	char *entry = host ? xasprintf("%.*s%s", (int)n, kv, host) : xstrdup(kv);
	free(host);
	for (size_t i = 0; i < env->n; i++)
		if (strncmp(env->v[i], kv, n) == 0) {
			free(env->v[i]);
			env->v[i] = entry;
			return;
		}
	strv_add(env, entry);
}

static void make_env(const struct psb *p, const struct sandbox_cmd *cmd, struct strv *env)
{
	char *path = p->agent_dir ? xasprintf("PATH=%s/node_modules/.bin:" PROCESS_PATH, p->agent_dir)
	                          : xstrdup("PATH=" PROCESS_PATH);
	char *fixed[] = {
		path,
		xasprintf("HOME=%s", p->home),
		xstrdup("USER=agent"),
		xstrdup("LOGNAME=agent"),
		xstrdup("LANG=C.UTF-8"),
		xasprintf("TMPDIR=%s", p->tmp),
		xasprintf("PADDOCK_PROMPT_FILE=%s", p->prompt),
		xasprintf("PADDOCK_TASK_ID=%s", p->task_id),
		xasprintf("PADDOCK_WORK=%s", p->work),
		xasprintf("PADDOCK_OUT=%s", p->out),
		xstrdup("GIT_TERMINAL_PROMPT=0"),
		xasprintf("GIT_CONFIG_SYSTEM=%s", p->gitconfig),
	};
	for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
		env_set(p, env, fixed[i]);
		free(fixed[i]);
	}
	for (size_t i = 0; cmd->env && cmd->env[i]; i++)
		env_set(p, env, cmd->env[i]);
}

static int pr_run(struct sandbox *sb, const struct sandbox_cmd *cmd, struct sandbox_result *r,
                  struct err *e)
{
	struct psb *p = psb(sb);
	struct strv argv = { 0 }, env = { 0 };

	int begun = sandbox_run_begin(cmd, r, e);
	if (begun != 0)
		return begun < 0 ? -1 : 0;
	for (size_t i = 0; cmd->argv[i]; i++) {
		char *host = translate(p, cmd->argv[i]);
		strv_add(&argv, host ? host : xstrdup(cmd->argv[i]));
	}
	make_env(p, cmd, &env);
	/* The runner's commands inherit its CPU limit: this command's share
	 * (sandbox_cpu_rlimit), set from here as it only ever lowers. */
	uint64_t cpu = sandbox_cpu_rlimit(&p->limits, cmd);
	struct rlimit rl = { (rlim_t)cpu, (rlim_t)cpu + 1 };
	if (cpu)
		prlimit(p->runner.pid, RLIMIT_CPU, &rl, NULL);
	/* The shell (cmd->term) is a RUN like any other. */
	int rc = sandbox_runner_run(p->rn, cmd, argv.v, env.v, p->work, &p->limits, RP_RUN_FRESH,
	                            NULL, NULL, r, e);
	strv_free(&argv);
	strv_free(&env);
	return rc;
}

/* ---- copies ---- */

static int pr_copy_out(struct sandbox *sb, const char *inside, const char *host, uint64_t cap,
                       struct err *e)
{
	struct psb *p = psb(sb);
	const char *under, *rel;
	if (sandbox_inside_split(inside, &under, &rel, e) < 0)
		return -1;
	/* Its runner reads it (runner.h), as every backend's session does. */
	if (p->rn) {
		char *path = translate(p, inside);
		int rc = sandbox_runner_get(p->rn, path, host, cap, e);
		free(path);
		return rc;
	}
	return sandbox_copy_out_at(!strcmp(under, SANDBOX_OUTDIR) ? p->out : p->work, rel, inside,
	                           host, cap, geteuid(), e);
}

static int pr_copy_in(struct sandbox *sb, const char *host, const char *inside, struct err *e)
{
	struct psb *p = psb(sb);
	/* The runner writes it, as it would in any other backend's sandbox
	 * (it never follows a link the agent left there). */
	if (strcmp(inside, SANDBOX_PROMPT) == 0)
		return sandbox_runner_put(p->rn, host, p->prompt, 0644, SANDBOX_PROMPT_MAX, e);
	return sandbox_copy_in_at(p->out, host, inside, e);
}

static int pr_branch(struct sandbox *sb, const char *branch, const char *sha, struct err *e)
{
	return sandbox_branch_at(psb(sb)->work, branch, sha, 0, 0, 0, e);
}

/* ---- janitor, owner ---- */

/* Removes the directories of sandboxes whose process died (the pid in
 * the name is gone), ours only. */
static void pr_janitor(void)
{
	DIR *d = opendir(tmp_base());
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d))) {
		long pid;
		char tail[16];
		struct stat st;
		if (strncmp(de->d_name, PROCESS_PREFIX, strlen(PROCESS_PREFIX)) != 0 ||
		    sscanf(de->d_name + strlen(PROCESS_PREFIX), "%ld-%15s", &pid, tail) != 2 ||
		    pid <= 0 || (kill((pid_t)pid, 0) == 0 || errno != ESRCH) ||
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISDIR(st.st_mode) || st.st_uid != geteuid())
			continue;
		char *path = xasprintf("%s/%s", tmp_base(), de->d_name);
		struct err e = {{0}};
		fsx_rm_rf(path, &e);
		free(path);
	}
	closedir(d);
}

static void pr_owner(uid_t *uid, gid_t *gid)
{
	*uid = geteuid();
	*gid = getegid();
}

/* term(): the shell runs on the session. */
static int pr_term(struct sandbox *sb)
{
	(void)sb;
	return 1;
}

static const struct sandbox_backend process_backend = {
	.name = "process",
	.nets = SANDBOX_NET_LOOPBACK,
	.create = pr_create,
	.run = pr_run,
	.copy_out = pr_copy_out,
	.copy_in = pr_copy_in,
	.branch = pr_branch,
	.term = pr_term,
	.destroy = pr_destroy,
	.preflight = pr_preflight,
	.janitor = pr_janitor,
	.owner = pr_owner,
};

const struct sandbox_backend *sandbox_backend_process(void)
{
	return &process_backend;
}
