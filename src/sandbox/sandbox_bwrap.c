/* The bubblewrap sandbox backend; see sandbox.h and paddock(1), THE
 * SANDBOX. */
#include "autoconfig.h"
#include "sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "child.h"
#include "cgroup.h"
#include "clock.h"
#include "fsx.h"
#include "i18n.h"
#include "runner.h"
#include "sandbox_int.h"
#include "seccomp_filter.h"

/* One fixed path: a tmpfs is mounted here only in the supervisor's private
 * mount namespace, so each task sees its own and the host an empty dir.
 * It sits outside the data dir because bwrap runs as the sandbox uid and
 * must be able to traverse the sources of its binds. */
#define RT "/run/paddock"
#define RT_UPPER RT "/upper"
#define RT_WORK RT "/work"
#define RT_MERGED RT "/merged"
#define RT_HOME RT "/home"
#define RT_TMP RT "/tmp"
#define RT_OUT RT "/out"
#define RT_FILES RT "/files"
#define RT_PROMPT RT "/prompt"
#define RT_AGENT RT "/agent"
#define RT_GATEWAY RT "/gateway"
#define RT_BRIDGE RT "/bridge"
#define RT_LOWER RT "/lower"
/* How long a new session's runner has to greet; its end after the channel
 * closes. */
#define SESSION_HELLO_S 10.0
#define SESSION_EXIT_MS 2000

/* The new mount API (Linux 5.2), for the trees a keeper got as
 * descriptors (sandbox_fds): cloned in the mount namespace they were
 * opened in, attached in the sandbox's. */
#ifndef OPEN_TREE_CLONE
#define OPEN_TREE_CLONE 1
#endif
#ifndef OPEN_TREE_CLOEXEC
#define OPEN_TREE_CLOEXEC O_CLOEXEC
#endif
#ifndef MOVE_MOUNT_F_EMPTY_PATH
#define MOVE_MOUNT_F_EMPTY_PATH 0x00000004
#endif

/* A detached copy of the mount at the folder fd (not its submounts). */
static int tree_clone(int fd)
{
#ifdef SYS_open_tree
	return (int)syscall(SYS_open_tree, fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC |
	                    AT_EMPTY_PATH);
#else
	(void)fd;
	errno = ENOSYS;
	return -1;
#endif
}

/* Attaches a tree_clone at dst. */
static int tree_attach(int tree, const char *dst)
{
#ifdef SYS_move_mount
	return (int)syscall(SYS_move_mount, tree, "", AT_FDCWD, dst, MOVE_MOUNT_F_EMPTY_PATH);
#else
	(void)tree;
	(void)dst;
	errno = ENOSYS;
	return -1;
#endif
}

#define SANDBOX_PATH "/usr/local/bin:/usr/bin:/bin"
#define CPU_NOTE "[paddock: no cgroup cpu controller here: limits.cpus only caps each " \
	"process's CPU time]\n"
#define RLIMIT_NOTE "[paddock: no cgroup for this sandbox (user mode): paddock watches its " \
	"memory and caps each process's, RLIMIT_NPROC caps its processes, RLIMIT_CPU each " \
	"process's CPU time]\n"
#define DELEGATED_NOTE "[paddock: user mode, in a delegated cgroup: the sandbox's memory, " \
	"processes and CPU are limited by cgroups of its own]\n"

/* The files bound with --ro-bind-data, each a memfd per command. */
enum { DATA_PASSWD, DATA_GROUP, DATA_HOSTS, DATA_GITCONFIG, DATA_N };

struct sandbox {
	char *task_id;
	uid_t uid;
	gid_t gid;
	struct limits limits;
	struct cgroup *cg;
	int seccomp_fd;
	char **file_paths;     /* files[i].host, bound from RT_FILES/<i> */
	size_t nfiles;
	int netns_fd;          /* the gateway's network namespace, or -1 */
	int has_agent;         /* RT_AGENT holds an agent install */
	int tpl_tree, agent_tree; /* sandbox_fds' folders cloned (open_tree), or -1 */
	char *bridge_ports;    /* bridge: RT_GATEWAY holds the gateway's sockets */
	int root_mounted, merged_mounted;
	int direct;            /* the workspace is the template itself, no overlay */
	char *lower;           /* the overlay's lower folder (changes), or NULL */
	int cpu_noted;         /* CPU_NOTE is in the log */
	int user;              /* user mode (sandbox.h): in a user namespace of ours */
	int limits_noted;      /* RLIMIT_NOTE is in the log */
	pid_t running;         /* the command's bwrap while it runs, or 0 */
	/* The sandbox's session (runner.h): one bwrap whose PID 1 is
	 * paddock-runner, made at the first command, ended by a terminal's
	 * command and by destroy; a new prompt goes in through it. */
	struct child session_ch;
	struct runner *rn;
	int in_session;        /* build_argv, run_start: the command is the runner */
	int session_fd;        /* ... and the runner's end of the channel */
	/* Without a cgroup: the session's own processes (bwrap, the bridge,
	 * the runner), found when the runner greeted, before any command:
	 * the host's memory watch and its kill after each command spare
	 * them, and kill everything else under bwrap. */
	pid_t *infra;
	size_t ninfra;
	int memory_hit;        /* the watch killed it for its memory */
	/* The session's bwrap, started ahead (bw_prestart): in the
	 * sandbox's cgroups already, blocked reading its arguments. */
	struct bw_pre {
		int started;
		struct child ch;
		int data[DATA_N];
		int out_rd;        /* its output */
		int devnull;
		int args_fd;       /* a memfd its bwrap reads its arguments from */
		int go_wr;         /* its start: RLIMIT_CPU's seconds, 8 bytes */
		int sv[2];         /* while no session runs: the channel a session
		                      started with it would use (sv[1] is its) */
	} pre;
};

/* ---- helpers ---- */

/* Moves fd above 2 so that dup2 onto 0..2 in the child never clobbers it. */
static int fd_high(int fd)
{
	int n;
	if (fd < 0 || fd > 2)
		return fd;
	n = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	close(fd);
	return n;
}

/* A memfd holding data, at offset 0 (for --ro-bind-data). */
static int data_fd(const char *name, const char *data, struct err *e)
{
	int fd = memfd_create(name, MFD_CLOEXEC);
	if (fd < 0)
		return err_errno(e, _("cannot create a memory file for the sandbox's %s"), name);
	fd = fd_high(fd);
	if (fd < 0 || fsx_write_all(fd, data, strlen(data)) < 0 || lseek(fd, 0, SEEK_SET) != 0) {
		err_errno(e, _("cannot write the sandbox's %s"), name);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* Absolute, normalised (no ".", "..", "//", trailing "/"), and not where the
 * sandbox's own /proc, /dev or /sys go. */
static int host_path_ok(const char *p)
{
	const char *s;
	if (!p || p[0] != '/' || p[1] == 0 || strlen(p) > 4000)
		return 0;
	for (s = p; *s; s++) {
		if (*s == '\n')
			return 0;
		if (s[0] == '/' && (s[1] == '/' || s[1] == 0))
			return 0;
		if (s[0] == '/' && s[1] == '.' && (s[2] == '/' || s[2] == 0))
			return 0;
		if (s[0] == '/' && s[1] == '.' && s[2] == '.' && (s[3] == '/' || s[3] == 0))
			return 0;
	}
	static const char *const forbidden[] = { "/proc", "/dev", "/sys" };
	for (size_t i = 0; i < sizeof forbidden / sizeof forbidden[0]; i++) {
		size_t l = strlen(forbidden[i]);
		if (strncmp(p, forbidden[i], l) == 0 && (p[l] == '/' || p[l] == 0))
			return 0;
	}
	return 1;
}

static int mkdir_owned(const char *path, mode_t mode, uid_t uid, gid_t gid, struct err *e)
{
	if (mkdir(path, mode) < 0)
		return err_errno(e, _("cannot create %s"), path);
	/* mkdir's mode is filtered by the umask; chmod makes it exact. */
	if (chmod(path, mode) < 0 || chown(path, uid, gid) < 0)
		return err_errno(e, _("cannot set up %s"), path);
	return 0;
}

/* ---- argv ---- */

struct argv_b {
	char **v;
	size_t n, cap;
};

static void av_add(struct argv_b *a, const char *s)
{
	if (a->n + 2 > a->cap) {
		a->cap = a->cap ? a->cap * 2 : 64;
		a->v = xrealloc(a->v, a->cap * sizeof *a->v);
	}
	a->v[a->n++] = xstrdup(s);
	a->v[a->n] = NULL;
}

static void av_add2(struct argv_b *a, const char *x, const char *y)
{
	av_add(a, x);
	av_add(a, y);
}

static void av_add3(struct argv_b *a, const char *x, const char *y, const char *z)
{
	av_add(a, x);
	av_add(a, y);
	av_add(a, z);
}

static void av_free(struct argv_b *a)
{
	for (size_t i = 0; i < a->n; i++)
		free(a->v[i]);
	free(a->v);
}

static void av_fd(struct argv_b *a, const char *opt, int fd, const char *dest)
{
	char num[16];
	snprintf(num, sizeof num, "%d", fd);
	if (dest)
		av_add3(a, opt, num, dest);
	else
		av_add2(a, opt, num);
}

/* Data files the sandbox sees in /etc. */
static const char passwd_data[] =
	"agent:x:1000:1000:paddock agent:" SANDBOX_HOME ":/bin/bash\n"
	"nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n";
static const char group_data[] =
	"agent:x:1000:\n"
	"nogroup:x:65534:\n";
static const char hosts_data[] =
	"127.0.0.1\tlocalhost sandbox\n"
	"::1\tlocalhost ip6-localhost ip6-loopback\n";
/* The usr-merge links and dirs at the root, mirrored from the host. */
static void add_root_links(struct argv_b *a)
{
	static const char *const names[] = { "/bin", "/sbin", "/lib", "/lib64", "/lib32",
	                                     "/libx32" };
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		struct stat st;
		char target[4096];
		ssize_t n;
		if (lstat(names[i], &st) < 0)
			continue;
		if (S_ISLNK(st.st_mode)) {
			n = readlink(names[i], target, sizeof target - 1);
			if (n <= 0)
				continue;
			target[n] = 0;
			av_add3(a, "--symlink", target, names[i]);
		} else if (S_ISDIR(st.st_mode)) {
			av_add3(a, "--ro-bind", names[i], names[i]);
		}
	}
}

/* A command's environment, NAME=VALUE each: the sandbox's, then cmd's
 * (a later entry of a name wins, as with --setenv). */
static void bw_env(const struct sandbox *sb, const struct sandbox_cmd *cmd, struct argv_b *env)
{
	char *fixed[] = {
		xasprintf("PATH=%s", sb->has_agent ? SANDBOX_AGENT_DIR "/node_modules/.bin:" SANDBOX_PATH
		                                    : SANDBOX_PATH),
		xstrdup("HOME=" SANDBOX_HOME), xstrdup("USER=agent"), xstrdup("LOGNAME=agent"),
		xstrdup("LANG=C.UTF-8"), xstrdup("TMPDIR=/tmp"),
		xstrdup("PADDOCK_PROMPT_FILE=" SANDBOX_PROMPT),
		xasprintf("PADDOCK_TASK_ID=%s", sb->task_id),
		xstrdup("PADDOCK_WORK=" SANDBOX_WORKDIR), xstrdup("PADDOCK_OUT=" SANDBOX_OUTDIR),
		/* Not GIT_CONFIG_NOSYSTEM: our /etc/gitconfig carries the identity. */
		xstrdup("GIT_TERMINAL_PROMPT=0"),
	};
	for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++) {
		av_add(env, fixed[i]);
		free(fixed[i]);
	}
	for (size_t i = 0; cmd->env && cmd->env[i]; i++) {
		const char *kv = cmd->env[i];
		size_t n = (size_t)(strchr(kv, '=') - kv) + 1;
		size_t k = 0;
		while (k < env->n && strncmp(env->v[k], kv, n) != 0)
			k++;
		if (k < env->n) {
			free(env->v[k]);
			env->v[k] = xstrdup(kv);
		} else {
			av_add(env, kv);
		}
	}
}

static void build_argv(struct sandbox *sb, const struct sandbox_cmd *cmd,
                       const int data[DATA_N], struct argv_b *a)
{
	static const char *const dests[DATA_N] = { "/etc/passwd", "/etc/group", "/etc/hosts",
	                                           "/etc/gitconfig" };

	av_add(a, "bwrap");
	av_add(a, "--unshare-user");
	av_add2(a, "--uid", "1000");
	av_add2(a, "--gid", "1000");
	av_add(a, "--disable-userns");
	av_add(a, "--unshare-pid");
	av_add(a, "--unshare-ipc");
	av_add(a, "--unshare-uts");
	av_add(a, "--unshare-cgroup-try");
	if (sb->netns_fd < 0)
		av_add(a, "--unshare-net");
	av_add2(a, "--hostname", "sandbox");
	av_add(a, "--die-with-parent");
	av_add(a, "--new-session");
	av_add2(a, "--cap-drop", "ALL");
	/* --clearenv acts when parsed, so it must come before the --setenv's. */
	av_add(a, "--clearenv");
	struct argv_b env = { 0 };
	bw_env(sb, cmd, &env);
	for (size_t i = 0; i < env.n; i++) {
		const char *kv = env.v[i], *eq = strchr(kv, '=');
		char *name = xstrndup(kv, (size_t)(eq - kv));
		av_add3(a, "--setenv", name, eq + 1);
		free(name);
	}
	av_free(&env);

	av_add3(a, "--ro-bind", "/usr", "/usr");
	add_root_links(a);
	av_add3(a, "--ro-bind-try", "/etc/ssl", "/etc/ssl");
	av_add3(a, "--ro-bind-try", "/etc/ca-certificates", "/etc/ca-certificates");
	av_add3(a, "--ro-bind-try", "/etc/alternatives", "/etc/alternatives");
	av_add3(a, "--ro-bind-try", "/etc/ld.so.cache", "/etc/ld.so.cache");
	av_add3(a, "--ro-bind-try", "/etc/localtime", "/etc/localtime");
	av_add3(a, "--ro-bind-try", "/etc/timezone", "/etc/timezone");
	av_add3(a, "--ro-bind-try", "/etc/nsswitch.conf", "/etc/nsswitch.conf");
	for (int i = 0; i < DATA_N; i++)
		av_fd(a, "--ro-bind-data", data[i], dests[i]);
	av_add2(a, "--proc", "/proc");
	av_add2(a, "--dev", "/dev");
	av_add3(a, "--bind", RT_TMP, "/tmp");
	av_add3(a, "--bind", RT_HOME, SANDBOX_HOME);
	av_add3(a, "--bind", RT_MERGED, SANDBOX_WORKDIR);
	av_add3(a, "--bind", RT_OUT, SANDBOX_OUTDIR);
	/* The session's runner writes each round's prompt there (its
	 * FILE_PUT, as the sandbox's user): the file is the sandbox's, but a
	 * mount point, which the agent cannot replace. */
	av_add3(a, sb->in_session ? "--bind" : "--ro-bind", RT_PROMPT, SANDBOX_PROMPT);
	for (size_t i = 0; i < sb->nfiles; i++) {
		char src[64];
		snprintf(src, sizeof src, RT_FILES "/%zu", i);
		av_add3(a, "--ro-bind", src, sb->file_paths[i]);
	}
	if (sb->has_agent)
		av_add3(a, "--ro-bind", RT_AGENT, SANDBOX_AGENT_DIR);
	if (sb->bridge_ports) {
		av_add3(a, "--ro-bind", RT_GATEWAY, SANDBOX_GATEWAY_DIR);
		av_add3(a, "--ro-bind", RT_BRIDGE, SANDBOX_BRIDGE);
	}
	/* The root tmpfs (/, /etc, the mount points) is bwrap's, unsized: make
	 * it read-only so that only the sized tmpfs takes writes. */
	if (sb->in_session) {
		char *runner = sandbox_runner_path();
		av_add3(a, "--ro-bind", runner, SANDBOX_RUNNER);
		free(runner);
		/* PID 1 itself, unless the bridge is (the runner is then its
		 * child, a subreaper). */
		if (!sb->bridge_ports)
			av_add(a, "--as-pid-1");
	}
	av_add2(a, "--remount-ro", "/");
	av_add2(a, "--chdir", SANDBOX_WORKDIR);
	av_fd(a, "--add-seccomp-fd", sb->seccomp_fd, NULL);
	av_add(a, "--");
	if (sb->bridge_ports) {
		av_add(a, SANDBOX_BRIDGE);
		av_add(a, SANDBOX_GATEWAY_DIR);
		av_add(a, sb->bridge_ports);
		av_add(a, "--");
	}
	for (size_t i = 0; cmd->argv[i]; i++)
		av_add(a, cmd->argv[i]);
}

/* ---- create / destroy ---- */

/* The sandbox this process holds: it owns the process's mount namespace.
 * A forked child (a template builder) inherits the note but not the
 * sandbox: it may make its own. */
static struct sandbox *live;
static pid_t live_pid;
static void bw_destroy(struct sandbox *sb);
static void bw_session_end(struct sandbox *sb);
static void bw_prestart(struct sandbox *sb);
static void bw_pre_drop(struct sandbox *sb);

/* A host file into the sandbox's tmpfs: from fd when it is not -1 (a
 * descriptor of sandbox_fds), else from src, never following a link. */
static int copy_in(int fd, const char *src, const char *dst, uint64_t cap, mode_t mode,
                   struct err *e)
{
	if ((fd >= 0 ? fsx_copy_regular_fd(fd, src, dst, (size_t)cap, mode, e)
	             : fsx_copy_regular(src, dst, (size_t)cap, mode, e)) < 0)
		return -1;
	if (chmod(dst, mode) < 0)
		return err_errno(e, _("cannot set the mode of %s"), dst);
	return 0;
}

/* The prompt from the host into the sandbox's tmpfs at dst: the sandbox
 * user's, writable, so that a session's runner can write the next
 * round's over it (bw_copy_in). */
static int prompt_in(const struct sandbox *sb, int fd, const char *src, const char *dst,
                     struct err *e)
{
	if (copy_in(fd, src, dst, SANDBOX_PROMPT_MAX, 0644, e) < 0)
		return -1;
	if (chown(dst, sb->uid, sb->gid) < 0)
		return err_errno(e, _("cannot set up %s"), dst);
	return 0;
}

/* Writes an agent settings file under RT_HOME, creating its folders, all
 * owned by the sandbox user.  Nothing of the sandbox exists yet, so no
 * link can be in the way. */
static int write_home_file(const struct sandbox *sb, const struct sandbox_home_file *f,
                           struct err *e)
{
	if (!f->path || f->path[0] == '/' || strstr(f->path, ".."))
		return err_set(e, _("bad home file path %s"), f->path ? f->path : "(null)");
	char *path = xasprintf(RT_HOME "/%s", f->path);
	for (char *s = path + strlen(RT_HOME) + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		if (mkdir(path, 0700) == 0 && chown(path, sb->uid, sb->gid) < 0) {
			free(path);
			return err_errno(e, _("cannot set up the sandbox's home"));
		}
		*s = '/';
	}
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	size_t n = strlen(f->content);
	int rc = fd >= 0 && write(fd, f->content, n) == (ssize_t)n &&
	         fchown(fd, sb->uid, sb->gid) == 0 ? 0 : -1;
	if (rc < 0)
		err_errno(e, _("cannot write %s in the sandbox's home"), f->path);
	if (fd >= 0)
		close(fd);
	free(path);
	return rc;
}

static int write_proc(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = write(fd, text, strlen(text));
	int saved = errno;
	close(fd);
	errno = saved;
	return n == (ssize_t)strlen(text) ? 0 : -1;
}

/* The workspace at RT_MERGED: the template itself (direct), or an overlay
 * with the upper layer in the sandbox's tmpfs. */
static int mount_workspace(struct sandbox *sb, const struct sandbox_spec *spec, struct err *e)
{
	char opts[4400];
	const char *lower = spec->ws.template_dir;
	sb->direct = spec->ws.direct;
	if (sb->tpl_tree >= 0) {
		/* The keeper's descriptor: its clone attached here, the path
		 * never looked up. */
		lower = RT_LOWER;
		if ((!spec->ws.direct && mkdir_owned(RT_LOWER, 0755, 0, 0, e) < 0) ||
		    tree_attach(sb->tpl_tree, spec->ws.direct ? RT_MERGED : RT_LOWER) < 0)
			return err_errno(e, _("cannot bind the workspace %s"), spec->ws.template_dir);
		close(sb->tpl_tree);
		sb->tpl_tree = -1;
		if (spec->ws.direct)
			return 0;
	} else if (spec->ws.direct) {
		if (mount(spec->ws.template_dir, RT_MERGED, NULL, MS_BIND | MS_REC, NULL) < 0)
			return err_errno(e, _("cannot bind the workspace %s"), spec->ws.template_dir);
		return 0;
	}
	/* In a user namespace overlayfs keeps what it marks (a folder
	 * removed or made again over the template's) in user.overlay.*
	 * xattrs, with userxattr; without it, removing a folder of the
	 * template fails with EIO.  A kernel before 5.11 lacks the
	 * option: then without it. */
	int rc = -1;
	for (int ux = sb->user ? 1 : 0; rc < 0 && ux >= 0; ux--) {
		snprintf(opts, sizeof opts, "lowerdir=%s,upperdir=" RT_UPPER ",workdir=" RT_WORK "%s",
		         lower, ux ? ",userxattr" : "");
		rc = mount("paddock", RT_MERGED, "overlay", MS_NOSUID | MS_NODEV, opts);
	}
	if (rc < 0)
		return err_errno(e, _("cannot mount the workspace overlay over %s"),
		                 spec->ws.template_dir);
	sb->lower = xstrdup(lower);
	return 0;
}

/* User mode: this process (the supervisor) enters a user namespace whose
 * root is the user, with a mount namespace it owns; a tmpfs over /run
 * there holds RT, which the user could not create on the host.  Steps
 * return a code that userns_step_text explains (the preflight's child
 * runs the same steps). */
enum userns_step {
	USERNS_OK, USERNS_UNSHARE, USERNS_MAP, USERNS_PRIVATE, USERNS_MOUNT, USERNS_OVERLAY
};

static int userns_enter(void)
{
	char map[64];
	uid_t uid = geteuid();
	gid_t gid = getegid();
	if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
		return USERNS_UNSHARE;
	snprintf(map, sizeof map, "0 %lu 1\n", (unsigned long)uid);
	if (write_proc("/proc/self/uid_map", map) < 0)
		return USERNS_MAP;
	if (write_proc("/proc/self/setgroups", "deny") < 0 && errno != ENOENT)
		return USERNS_MAP;
	snprintf(map, sizeof map, "0 %lu 1\n", (unsigned long)gid);
	if (write_proc("/proc/self/gid_map", map) < 0)
		return USERNS_MAP;
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return USERNS_PRIVATE;
	if (mount("paddock-run", "/run", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=64k") < 0 ||
	    mkdir(RT, 0755) < 0)
		return USERNS_MOUNT;
	return USERNS_OK;
}

static const char *userns_step_text(int step)
{
	switch (step) {
	case USERNS_UNSHARE:
		return _("cannot create a user namespace for the sandbox: unprivileged user "
		         "namespaces are off or restricted here (sysctl "
		         "kernel.unprivileged_userns_clone, user.max_user_namespaces, or AppArmor's "
		         "kernel.apparmor_restrict_unprivileged_userns); 'paddock doctor' says which");
	case USERNS_MAP:
		return _("cannot map the user into the sandbox's user namespace, or drop to the "
		         "sandbox's uid");
	case USERNS_PRIVATE:
		return _("cannot make the sandbox's mounts private");
	case USERNS_MOUNT:
		return _("cannot mount a tmpfs in the sandbox's user namespace (a security module "
		         "such as AppArmor may forbid it); 'paddock doctor' says more");
	case USERNS_OVERLAY:
		return _("overlayfs cannot be mounted in a user namespace here (it needs Linux "
		         "5.11 or later)");
	default:
		return _("the sandbox's user namespace failed");
	}
}

static int enter_user_namespace(struct err *e)
{
	int step = userns_enter();
	if (step != USERNS_OK)
		return err_errno(e, "%s", userns_step_text(step));
	return 0;
}

static int setup_runtime(struct sandbox *sb, const struct sandbox_spec *spec, struct err *e)
{
	struct stat st;
	char opts[4400];
	uint64_t inodes;

	if (sb->user) {
		if (enter_user_namespace(e) < 0)
			return -1;
	} else {
		if (mkdir(RT, 0755) < 0 && errno != EEXIST)
			return err_errno(e, _("cannot create %s"), RT);
		if (lstat(RT, &st) < 0 || !S_ISDIR(st.st_mode))
			return err_set(e, _("%s is not a directory; remove it"), RT);
		if (unshare(CLONE_NEWNS) < 0)
			return err_errno(e, _("cannot create a private mount namespace for the sandbox "
			                      "(run paddock as root)"));
		/* Nothing we mount may propagate back to the host. */
		if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
			return err_errno(e, _("cannot make the sandbox's mounts private"));
	}

	/* Roughly one inode per 2 KiB, within sane bounds: a million empty
	 * files must hit ENOSPC, not eat the host's memory. */
	inodes = spec->limits.disk / 2048;
	if (inodes < 16384)
		inodes = 16384;
	if (inodes > 4194304)
		inodes = 4194304;
	snprintf(opts, sizeof opts, "size=%" PRIu64 ",nr_inodes=%" PRIu64 ",mode=0755",
	         spec->limits.disk, inodes);
	if (mount("paddock", RT, "tmpfs", MS_NOSUID | MS_NODEV, opts) < 0)
		return err_errno(e, _("cannot mount the sandbox's tmpfs at %s"), RT);
	sb->root_mounted = 1;

	if (mkdir_owned(RT_UPPER, 0755, sb->uid, sb->gid, e) < 0 ||
	    mkdir_owned(RT_WORK, 0700, 0, 0, e) < 0 ||
	    mkdir_owned(RT_MERGED, 0755, sb->uid, sb->gid, e) < 0 ||
	    mkdir_owned(RT_HOME, 0700, sb->uid, sb->gid, e) < 0 ||
	    mkdir_owned(RT_TMP, 01777, sb->uid, sb->gid, e) < 0 ||
	    mkdir_owned(RT_OUT, 0755, sb->uid, sb->gid, e) < 0 ||
	    mkdir_owned(RT_FILES, 0755, 0, 0, e) < 0)
		return -1;

	const struct sandbox_fds *fds = sb->user ? NULL : spec->fds;
	if (spec->prompt_file) {
		if (prompt_in(sb, fds ? fds->prompt_fd : -1, spec->prompt_file, RT_PROMPT, e) < 0)
			return err_prefix(e, _("cannot copy the prompt into the sandbox"));
	} else {
		int fd = open(RT_PROMPT, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd < 0 || fchmod(fd, 0644) < 0 || fchown(fd, sb->uid, sb->gid) < 0) {
			if (fd >= 0)
				close(fd);
			return err_errno(e, _("cannot create %s"), RT_PROMPT);
		}
		close(fd);
	}

	for (size_t i = 0; i < spec->nfiles; i++) {
		char dst[64];
		mode_t mode = 0444;
		int fd = fds ? fds->file_fds[i] : -1;
		if ((fd >= 0 ? fstat(fd, &st) : stat(spec->files[i].host, &st)) == 0 &&
		    (st.st_mode & S_IXUSR))
			mode = 0555;
		snprintf(dst, sizeof dst, RT_FILES "/%zu", i);
		if (copy_in(fd, spec->files[i].host, dst, spec->limits.disk, mode, e) < 0)
			return err_prefix(e, _("cannot copy %s into the sandbox"), spec->files[i].host);
	}
	if (chmod(RT_FILES, 0555) < 0)
		return err_errno(e, _("cannot set up %s"), RT_FILES);

	if (spec->agent_dir) {
		/* Bound here, in our private mount namespace, so that bwrap (as
		 * the sandbox uid) needs no way through the data dir. */
		if (mkdir_owned(RT_AGENT, 0755, 0, 0, e) < 0)
			return -1;
		if ((sb->agent_tree >= 0
		     ? tree_attach(sb->agent_tree, RT_AGENT)
		     : mount(spec->agent_dir, RT_AGENT, NULL, MS_BIND | MS_REC, NULL)) < 0 ||
		    mount(NULL, RT_AGENT, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID |
		          MS_NODEV, NULL) < 0)
			return err_errno(e, _("cannot show the agent installed in %s to the sandbox"),
			                 spec->agent_dir);
		sb->has_agent = 1;
	}
	if (spec->net.bridge_dir) {
		char *bridge = sandbox_bridge_path();
		int rc = mkdir_owned(RT_GATEWAY, 0755, 0, 0, e);
		if (rc == 0 && (mount(spec->net.bridge_dir, RT_GATEWAY, NULL, MS_BIND, NULL) < 0 ||
		                mount(NULL, RT_GATEWAY, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY |
		                      MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0))
			rc = err_errno(e, _("cannot show the gateway's sockets in %s to the sandbox"),
			               spec->net.bridge_dir);
		if (rc == 0 && copy_in(-1, bridge, RT_BRIDGE, 16 * 1024 * 1024, 0555, e) < 0)
			rc = err_prefix(e, _("cannot copy %s into the sandbox (is paddock installed "
			                     "whole?)"), bridge);
		free(bridge);
		if (rc < 0)
			return -1;
		sb->bridge_ports = xstrdup(spec->net.bridge_ports);
	}
	for (size_t i = 0; i < spec->nhome_files; i++)
		if (write_home_file(sb, &spec->home_files[i], e) < 0)
			return -1;

	if (mount_workspace(sb, spec, e) < 0)
		return -1;
	sb->merged_mounted = 1;
	return 0;
}

static int bw_create(struct sandbox **out, const struct sandbox_spec *spec, struct err *e)
{
	struct sandbox *sb;
	struct stat st;

	*out = NULL;
	if (live && live_pid == getpid())
		return err_set(e, _("a bwrap sandbox already lives in this process; one process "
		                    "holds one at a time"));
	int user = sandbox_options()->user_mode;
	if (!user && (sandbox_options()->uid == 0 || sandbox_options()->gid == 0))
		return err_set(e, _("the sandbox must run as an unprivileged user, not uid or gid 0; "
		                    "set sandbox.uid and sandbox.gid in the configuration"));
	if (!spec->task_id || !*spec->task_id)
		return err_set(e, _("the sandbox needs a task id"));
	const struct sandbox_fds *fds = user ? NULL : spec->fds;
	if (!spec->ws.template_dir || spec->ws.template_dir[0] != '/' ||
	    (fds ? fstat(fds->template_fd, &st) : stat(spec->ws.template_dir, &st)) < 0 ||
	    !S_ISDIR(st.st_mode))
		return err_set(e, _("the workspace %s is not a directory"),
		               spec->ws.template_dir ? spec->ws.template_dir : "(none)");
	/* Given descriptors, each object has one: no path is looked up. */
	int missing = fds && ((spec->prompt_file && fds->prompt_fd < 0) ||
	                      (spec->agent_dir && fds->agent_fd < 0) ||
	                      (spec->nfiles && !fds->file_fds));
	for (size_t i = 0; fds && !missing && i < spec->nfiles; i++)
		missing = fds->file_fds[i] < 0;
	if (missing)
		return err_set(e, _("the sandbox was given a path without its descriptor"));
	/* overlayfs splits its options at ',' and lowerdir at ':'. */
	if (!fds && !spec->ws.direct && strpbrk(spec->ws.template_dir, ",:\\"))
		return err_set(e, _("the workspace path %s contains ',', ':' or '\\', which "
		                    "overlayfs cannot take; use a data directory without them"),
		               spec->ws.template_dir);
	if (spec->limits.disk < 1024 * 1024)
		return err_set(e, _("limits.disk must be at least 1 MiB"));
	for (size_t i = 0; i < spec->nfiles; i++)
		if (!host_path_ok(spec->files[i].host))
			return err_set(e, _("cannot show %s in the sandbox: the path must be absolute, "
			                    "normalised, and outside /proc, /dev and /sys"),
			               spec->files[i].host ? spec->files[i].host : "(null)");

	sb = xcalloc(1, sizeof *sb);
	sb->task_id = xstrdup(spec->task_id);
	/* User mode: root of our own user namespace, which is the user. */
	sb->user = user;
	sb->uid = user ? 0 : sandbox_options()->uid;
	sb->gid = user ? 0 : sandbox_options()->gid;
	sb->limits = spec->limits;
	sb->seccomp_fd = -1;
	sb->netns_fd = -1;
	sb->tpl_tree = sb->agent_tree = -1;
	sb->nfiles = spec->nfiles;
	sb->file_paths = xcalloc(spec->nfiles + 1, sizeof *sb->file_paths);
	for (size_t i = 0; i < spec->nfiles; i++)
		sb->file_paths[i] = xstrdup(spec->files[i].host);

	sb->seccomp_fd = fd_high(seccomp_filter_fd(e));
	if (sb->seccomp_fd < 0)
		goto fail;
	if (spec->net.netns_fd >= 0) {
		sb->netns_fd = fd_high(fcntl(spec->net.netns_fd, F_DUPFD_CLOEXEC, 0));
		if (sb->netns_fd < 0) {
			err_errno(e, _("cannot keep the sandbox's network namespace"));
			goto fail;
		}
	}
	/* The descriptors' folders are cloned here, in the mount namespace
	 * they were opened in (a mount is attached only from its own). */
	if (fds && ((sb->tpl_tree = tree_clone(fds->template_fd)) < 0 ||
	            (spec->agent_dir && fds->agent_fd >= 0 &&
	             (sb->agent_tree = tree_clone(fds->agent_fd)) < 0))) {
		err_errno(e, _("cannot clone the mount of the sandbox's folders (open_tree needs "
		               "Linux 5.2 or later)"));
		goto fail;
	}
	/* User mode without a delegated cgroup makes none: rlimits and the
	 * watch stand in.  Made before the user namespace, as the user. */
	if (sandbox_options()->cgroups && cgroup_create(&sb->cg, spec->task_id, spec->limits.memory, spec->limits.pids,
	                           spec->limits.cpus, spec->limits.cpus_set, e) < 0)
		goto fail;
	if (setup_runtime(sb, spec, e) < 0)
		goto fail;
	/* bwrap's pid-namespace init may outlive the outer bwrap by a moment;
	 * as a subreaper we reap it ourselves (reap_sandbox_zombies) instead of
	 * leaving a zombie for init. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	live = sb;
	live_pid = getpid();
	bw_prestart(sb);
	*out = sb;
	return 0;
fail:
	bw_destroy(sb);
	return -1;
}

/* Waits (up to 3 s) until every child of this process that is not one
 * of its own (child.h: the gateway, a template builder) is reaped.  The
 * supervisor's other children are the sandbox's: bwrap, and, as a
 * subreaper, whatever of the sandbox was orphaned, such as the pid
 * namespace's init, which exits only once the kernel has reaped the whole
 * namespace.  So when this returns, nothing of the sandbox is left. */
static void reap_sandbox_zombies(void)
{
	child_reap_strays(3.0);
}

static void bw_destroy(struct sandbox *sb)
{
	if (!sb)
		return;
	if (live == sb)
		live = NULL;
	bw_session_end(sb);
	bw_pre_drop(sb);
	cgroup_destroy(sb->cg);
	reap_sandbox_zombies();
	/* They would go with the namespace anyway; detaching now frees the
	 * tmpfs's memory before the supervisor exits. */
	if (sb->merged_mounted)
		umount2(RT_MERGED, MNT_DETACH);
	if (sb->root_mounted)
		umount2(RT, MNT_DETACH);
	if (sb->seccomp_fd >= 0)
		close(sb->seccomp_fd);
	if (sb->netns_fd >= 0)
		close(sb->netns_fd);
	if (sb->tpl_tree >= 0)
		close(sb->tpl_tree);
	if (sb->agent_tree >= 0)
		close(sb->agent_tree);
	for (size_t i = 0; i < sb->nfiles; i++)
		free(sb->file_paths[i]);
	free(sb->file_paths);
	free(sb->task_id);
	free(sb->bridge_ports);
	free(sb->lower);
	free(sb);
}

/* ---- run ---- */

/* The steps of bw_enter, each with its own message (step_text). */
enum bw_step {
	STEP_CGROUP = 1, STEP_RLIMIT, STEP_FDS, STEP_IDS, STEP_PARENT, STEP_NETNS, STEP_EXEC
};

struct bw_child {
	struct sandbox *sb;
	pid_t parent;
	int go_fd;             /* started ahead: wait here for the command, or -1 */
	int args_fd;           /* ... whose bwrap arguments are in this memfd */
};

/* What a process started ahead gets to start its command. */
struct bw_go {
	uint64_t cpu;          /* RLIMIT_CPU's seconds, or 0 */
	uint64_t len;          /* bytes of arguments in the memfd */
};

/* The rest of bw_enter for a process started ahead (bw_prestart): in the
 * cgroups now, it waits for its command, then runs bwrap with the
 * arguments in the memfd.  Only async-signal-safe calls (mmap for the
 * argument vector): the supervisor may have threads.  Returns only when
 * it cannot. */
static int bw_enter_late(const struct bw_child *bc)
{
	static const char *const envp[] = { "PATH=/usr/sbin:/usr/bin:/sbin:/bin", NULL };
	static char bwrap_word[] = "bwrap";
	struct bw_go go;
	size_t got = 0;
	while (got < sizeof go) {
		ssize_t n = read(bc->go_fd, (char *)&go + got, sizeof go - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			errno = EPIPE;
			return STEP_FDS;
		}
		got += (size_t)n;
	}
	close(bc->go_fd);
	struct rlimit cl = { (rlim_t)go.cpu, (rlim_t)go.cpu + 1 };
	if (go.cpu && setrlimit(RLIMIT_CPU, &cl) < 0)
		return STEP_RLIMIT;
	if (go.len == 0 || go.len > (64u << 20)) {
		errno = EINVAL;
		return STEP_FDS;
	}
	char *args = mmap(NULL, go.len, PROT_READ | PROT_WRITE, MAP_PRIVATE, bc->args_fd, 0);
	if (args == MAP_FAILED)
		return STEP_FDS;
	size_t n = 0;
	for (size_t i = 0; i < go.len; i++)
		n += args[i] == '\0';
	char **argv = mmap(NULL, (n + 2) * sizeof *argv, PROT_READ | PROT_WRITE,
	                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (argv == MAP_FAILED || args[go.len - 1] != '\0') {
		errno = EINVAL;
		return STEP_FDS;
	}
	argv[0] = bwrap_word;
	size_t k = 1;
	for (size_t i = 0; i < go.len; i += strlen(args + i) + 1)
		argv[k++] = args + i;
	argv[k] = NULL;
	close(bc->args_fd);
	execve(BWRAP_PATH, argv, (char *const *)envp);
	return STEP_EXEC;
}

/* In the command's child, last before bwrap runs (child.h: signals at
 * their default, fds 0-2 and the kept ones in place, core, file size and
 * CPU limited): into the cgroup and the gateway's network namespace
 * while still root (CAP_SYS_ADMIN), then down to the sandbox uid.
 * Async-signal-safe calls only. */
static int bw_enter(void *arg)
{
	const struct bw_child *bc = arg;
	struct sandbox *sb = bc->sb;
	if (cgroup_enter(sb->cg, getpid()) < 0)
		return STEP_CGROUP;
	if (sb->netns_fd >= 0) {
		if (setns(sb->netns_fd, CLONE_NEWNET) < 0)
			return STEP_NETNS;
		close(sb->netns_fd);  /* kept for this moment only: not the sandbox's */
	}
	struct rlimit rl = { 4096, 4096 };
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
		return STEP_RLIMIT;
	/* The filter's offset is shared with earlier runs' children. */
	if (lseek(sb->seccomp_fd, 0, SEEK_SET) != 0)
		return STEP_FDS;
	/* User mode: the user namespace allows no setgroups, and the user
	 * (its root) is who the sandbox runs as. */
	if ((!sb->user && setgroups(0, NULL) < 0) || setresgid(sb->gid, sb->gid, sb->gid) < 0 ||
	    setresuid(sb->uid, sb->uid, sb->uid) < 0)
		return STEP_IDS;
	if (getuid() != sb->uid || geteuid() != sb->uid || getgid() != sb->gid) {
		errno = EPERM;
		return STEP_IDS;
	}
	/* Set after the uid change, which clears it. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != bc->parent) {
		errno = ESRCH;
		return STEP_PARENT;
	}
	if (bc->go_fd >= 0)
		return bw_enter_late(bc);
	return 0;
}

static const char *step_text(int step)
{
	switch (step) {
	case STEP_CGROUP: return _("cannot move the command into its cgroup");
	case STEP_RLIMIT: return _("cannot set the command's resource limits");
	case STEP_FDS: return _("cannot set up the command's file descriptors");
	case STEP_IDS: return _("cannot drop to the sandbox uid");
	case STEP_PARENT: return _("the supervisor went away");
	case 0: return _("cannot run bubblewrap");
	case STEP_NETNS: return _("cannot join the sandbox's network namespace");
	case STEP_EXEC: return _("cannot run bubblewrap");
	default: return _("the command could not be started");
	}
}

/* The files bwrap puts in place (data[]), the output pipe and the
 * command's stdin, all above the descriptors the command may use. */
static int run_fds(int data[DATA_N], int outp[2], int *devnull, struct err *e)
{
	static const char *const data_text[DATA_N] = { passwd_data, group_data, hosts_data,
	                                               sandbox_gitconfig_data };
	static const char *const data_name[DATA_N] = { "passwd", "group", "hosts", "gitconfig" };

	for (int i = 0; i < DATA_N; i++)
		if ((data[i] = data_fd(data_name[i], data_text[i], e)) < 0)
			return -1;
	if (pipe2(outp, O_CLOEXEC) < 0)
		return err_errno(e, _("cannot create a pipe"));
	outp[0] = fd_high(outp[0]);
	outp[1] = fd_high(outp[1]);
	*devnull = fd_high(open("/dev/null", O_RDWR | O_CLOEXEC));
	if (outp[0] < 0 || outp[1] < 0 || *devnull < 0)
		return err_errno(e, _("cannot set up the command's file descriptors"));
	/* Only our end is non-blocking; the command's stdout stays blocking. */
	fcntl(outp[0], F_SETFL, fcntl(outp[0], F_GETFL) | O_NONBLOCK);
	return 0;
}

/* Starts bwrap with av, output into *out_wr, which is closed here, started
 * or not, so that EOF comes once the command's own writers are gone.
 * keep, limits and bc are read by child_start only. */
static int run_start(struct sandbox *sb, const struct sandbox_cmd *cmd,
                     const struct argv_b *av, const int data[DATA_N], int devnull,
                     int *out_wr, struct child *ch, struct err *e)
{
	static const char *const envp[] = { "PATH=/usr/sbin:/usr/bin:/sbin:/bin", NULL };
	rlim_t cpu_secs = sandbox_cpu_rlimit(&sb->limits, cmd);
	int keep[DATA_N + 3];
	size_t nkeep = 0;
	keep[nkeep++] = sb->seccomp_fd;
	for (int i = 0; i < DATA_N; i++)
		keep[nkeep++] = data[i];
	if (sb->netns_fd >= 0)
		keep[nkeep++] = sb->netns_fd;
	if (sb->in_session)
		keep[nkeep++] = sb->session_fd;
	struct child_limit limits[5] = { { RLIMIT_CORE, 0, 0 },
	                                 { RLIMIT_FSIZE, sb->limits.disk, sb->limits.disk } };
	size_t nlimits = 2;
	/* SIGXCPU at the limit, SIGKILL a second later for a process that
	 * ignores it. */
	if (cpu_secs)
		limits[nlimits++] = (struct child_limit){ RLIMIT_CPU, cpu_secs, cpu_secs + 1 };
	/* No cgroup: processes counted in the sandbox's user namespace (the
	 * kernel charges them there), memory capped per process and watched
	 * as a whole (watch_memory). */
	if (!sb->cg && sb->limits.pids > 0)
		limits[nlimits++] = (struct child_limit){ RLIMIT_NPROC, (rlim_t)sb->limits.pids,
		                                          (rlim_t)sb->limits.pids };
	if (!sb->cg && sb->limits.memory > 0)
		limits[nlimits++] = (struct child_limit){ RLIMIT_DATA, sb->limits.memory,
		                                          sb->limits.memory };
	struct bw_child bc = { .sb = sb, .parent = getpid(), .go_fd = -1, .args_fd = -1 };
	*ch = (struct child){ .argv = (const char *const *)av->v, .env = envp, .cwd = "/",
	                      .stdio = { devnull, *out_wr, *out_wr }, .keep = keep,
	                      .nkeep = nkeep, .limits = limits, .nlimits = nlimits,
	                      .flags = CHILD_CLOSE_FDS, .setup = bw_enter, .arg = &bc };
	int started = child_start(ch, NULL);
	sb->running = started < 0 ? 0 : ch->pid;
	close(*out_wr);
	*out_wr = -1;
	if (started < 0) {
		cgroup_kill_all(sb->cg);
		sb->running = 0;
		errno = ch->exec_errno;
		if (ch->exec_step == 0)
			err_errno(e, "%s (%s)", step_text(0), BWRAP_PATH);
		else
			err_errno(e, "%s", step_text(ch->exec_step));
		return -1;
	}
	return 0;
}

/* ---- the session's bwrap, started ahead ---- */

/* Moving a process into a cgroup (v1) waits for an RCU grace period when
 * no move happened in the last few tens of ms: 7-25 ms on these machines,
 * for the first command after a pause.  So the session's process is
 * started when the sandbox is made: it moves into the cgroups while the
 * supervisor does other work, and waits in bw_enter.
 * bw_session_start writes bwrap's arguments to a memfd and sends the
 * start; then it runs bwrap with them.  The start is a
 * message, not EOF: another child of the supervisor may hold a copy of
 * the pipe. */
static void bw_pre_close(struct bw_pre *p)
{
	for (int i = 0; i < DATA_N; i++)
		if (p->data[i] >= 0)
			close(p->data[i]);
	int *fds[] = { &p->out_rd, &p->devnull, &p->args_fd, &p->go_wr, &p->sv[0], &p->sv[1] };
	for (size_t i = 0; i < sizeof fds / sizeof *fds; i++)
		if (*fds[i] >= 0)
			close(*fds[i]);
	memset(p, 0, sizeof *p);
}

static void bw_pre_drop(struct sandbox *sb)
{
	struct bw_pre *p = &sb->pre;
	if (!p->started)
		return;
	child_kill(&p->ch, SIGKILL);
	struct err ignored = {{0}};
	if (child_exec_wait(&p->ch, &ignored) == 0)
		child_finish(&p->ch);
	bw_pre_close(p);
}

static void bw_prestart(struct sandbox *sb)
{
	struct bw_pre *p = &sb->pre;
	struct err e = {{0}};
	int outp[2] = { -1, -1 }, go[2] = { -1, -1 };
	if (p->started || !sb->cg)
		return;
	for (int i = 0; i < DATA_N; i++)
		p->data[i] = -1;
	p->out_rd = p->devnull = p->args_fd = p->go_wr = p->sv[0] = p->sv[1] = -1;
	/* Without a session, the next command starts one (bw_session_start):
	 * the process then becomes the runner's, and keeps its channel. */
	if (!sb->rn && (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p->sv) < 0 ||
	                (p->sv[1] = fd_high(p->sv[1])) < 0))
		goto fail;
	if (run_fds(p->data, outp, &p->devnull, &e) < 0 || pipe2(go, O_CLOEXEC) < 0 ||
	    (go[0] = fd_high(go[0])) < 0 ||
	    (p->args_fd = fd_high(memfd_create("bwrap-args", MFD_CLOEXEC))) < 0)
		goto fail;
	/* argv is never run (bw_enter_late runs bwrap itself); static, for
	 * child_exec_wait's message later. */
	static const char *const argv[] = { "bwrap", NULL };
	static const char *const envp[] = { "PATH=/usr/sbin:/usr/bin:/sbin:/bin", NULL };
	int keep[DATA_N + 5];
	size_t nkeep = 0;
	keep[nkeep++] = sb->seccomp_fd;
	keep[nkeep++] = p->args_fd;
	keep[nkeep++] = go[0];
	if (p->sv[1] >= 0)
		keep[nkeep++] = p->sv[1];
	for (int i = 0; i < DATA_N; i++)
		keep[nkeep++] = p->data[i];
	if (sb->netns_fd >= 0)
		keep[nkeep++] = sb->netns_fd;
	struct child_limit limits[2] = { { RLIMIT_CORE, 0, 0 },
	                                 { RLIMIT_FSIZE, sb->limits.disk, sb->limits.disk } };
	/* Read by child_start only (the child has its copy). */
	struct bw_child bc = { .sb = sb, .parent = getpid(), .go_fd = go[0],
	                       .args_fd = p->args_fd };
	p->ch = (struct child){ .argv = argv, .env = envp, .cwd = "/",
	                        .stdio = { p->devnull, outp[1], outp[1] }, .keep = keep,
	                        .nkeep = nkeep, .limits = limits, .nlimits = 2,
	                        .flags = CHILD_CLOSE_FDS | CHILD_EXEC_LATER, .setup = bw_enter,
	                        .arg = &bc };
	if (child_start(&p->ch, &e) < 0)
		goto fail;
	close(outp[1]);
	close(go[0]);
	p->out_rd = outp[0];
	p->go_wr = go[1];
	p->started = 1;
	return;
fail:
	for (int i = 0; i < 2; i++) {
		if (outp[i] >= 0)
			close(outp[i]);
		if (go[i] >= 0)
			close(go[i]);
	}
	bw_pre_close(p);
}

/* Hands the command to the process started ahead: bwrap's arguments
 * after the first, NUL-separated, into the memfd, then the start.  0 with *ch running it; -1 with e, the
 * process gone (reaped or killed here). */
static int bw_pre_take(struct sandbox *sb, const struct sandbox_cmd *cmd,
                       const struct argv_b *av, struct child *ch, struct err *e)
{
	struct bw_pre *p = &sb->pre;
	struct bw_go go = { .cpu = sandbox_cpu_rlimit(&sb->limits, cmd) };
	int rc = 0;
	for (size_t i = 1; rc == 0 && i < av->n; i++) {
		size_t len = strlen(av->v[i]) + 1;
		if (fsx_write_all(p->args_fd, av->v[i], len) < 0)
			rc = err_errno(e, "%s", step_text(STEP_FDS));
		go.len += len;
	}
	if (rc == 0 && fsx_write_all(p->go_wr, &go, sizeof go) < 0)
		rc = err_errno(e, "%s", step_text(STEP_FDS));
	if (rc < 0) {
		child_kill(&p->ch, SIGKILL);
		if (child_exec_wait(&p->ch, e) == 0)
			child_finish(&p->ch);
		return -1;
	}
	if (child_exec_wait(&p->ch, e) < 0)
		return -1;
	*ch = p->ch;
	sb->running = ch->pid;
	return 0;
}

/* The command's log, within the output cap shared by the task's commands. */
static void run_drain_init(struct sandbox *sb, const struct sandbox_cmd *cmd,
                           struct sandbox_drain *d)
{
	sandbox_drain_init(d, cmd, sb->limits.output);
	if (sb->cg && sb->limits.cpus > 0 && !cgroup_cpu_limited(sb->cg) && !sb->cpu_noted) {
		/* Said once per sandbox, in the log of its first command. */
		sandbox_drain_chunk(d, CPU_NOTE, sizeof CPU_NOTE - 1);
		sb->cpu_noted = 1;
	}
	if (!sb->cg && !sb->limits_noted) {
		sandbox_drain_chunk(d, RLIMIT_NOTE, sizeof RLIMIT_NOTE - 1);
		sb->limits_noted = 1;
	} else if (sb->user && !sb->limits_noted) {
		sandbox_drain_chunk(d, DELEGATED_NOTE, sizeof DELEGATED_NOTE - 1);
		sb->limits_noted = 1;
	}
}

/* Everything of the sandbox: its cgroup, or without one every process
 * under its bwrap (the pid namespace dies with bwrap's init). */
static void kill_all(void *arg)
{
	struct sandbox *sb = arg;
	if (sb->cg)
		cgroup_kill_all(sb->cg);
	else if (sb->running > 0)
		sandbox_tree(sb->running, NULL, 1);
}

/* Ends the session: the channel closed, the runner kills what it ran and
 * exits, and its pid namespace with it; a runner that does not (the agent
 * stopped it) is killed with the sandbox's processes. */
static void bw_session_end(struct sandbox *sb)
{
	if (!sb->rn && sb->session_ch.pid <= 0)
		return;
	runner_close(sb->rn);
	sb->rn = NULL;
	if (sb->session_ch.pid > 0) {
		if (!child_wait_ms(&sb->session_ch, SESSION_EXIT_MS)) {
			kill_all(sb);
			child_kill(&sb->session_ch, SIGKILL);
		}
		child_finish(&sb->session_ch);
	}
	memset(&sb->session_ch, 0, sizeof sb->session_ch);
	sb->running = 0;
	free(sb->infra);
	sb->infra = NULL;
	sb->ninfra = 0;
	reap_sandbox_zombies();
}

/* The runner's pid as this process sees it: bwrap's child, PID 1 inside.
 * 0 when it cannot be found, or is not PID 1 (under the bridge, whose own
 * CPU time must not count against a command's limit). */
static pid_t bw_session_runner(struct sandbox *sb)
{
	if (sb->bridge_ports || sb->session_ch.pid <= 0)
		return 0;
	char path[64];
	long child = 0;
	snprintf(path, sizeof path, "/proc/%ld/task/%ld/children", (long)sb->session_ch.pid,
	         (long)sb->session_ch.pid);
	FILE *f = fopen(path, "re");
	if (!f || fscanf(f, "%ld", &child) != 1)
		child = 0;
	if (f)
		fclose(f);
	return (pid_t)child;
}

/* Starts the sandbox's session: one bwrap as every command's would be,
 * its command paddock-runner (PID 1), the channel on the runner's fd. */
static int bw_session_start(struct sandbox *sb, struct err *e)
{
	int data[DATA_N] = { -1, -1, -1, -1 };
	int outp[2] = { -1, -1 }, devnull = -1, sv[2] = { -1, -1 }, rc = -1;
	struct argv_b av = { 0 };
	char fdarg[16];

	struct bw_pre *p = &sb->pre;
	/* The process started ahead is already in the cgroups (bw_prestart):
	 * the session's first step waits for no RCU grace period. */
	int pre = p->started && p->sv[0] >= 0;
	if (pre) {
		memcpy(data, p->data, sizeof data);
		memcpy(sv, p->sv, sizeof sv);
		outp[0] = p->out_rd;
		devnull = p->devnull;
		for (int i = 0; i < DATA_N; i++)
			p->data[i] = -1;
		p->sv[0] = p->sv[1] = p->out_rd = p->devnull = -1;
	} else {
		bw_pre_drop(sb);
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
			err_errno(e, _("cannot create a socket pair"));
			goto out;
		}
		sv[1] = fd_high(sv[1]);
		if (sv[1] < 0 || run_fds(data, outp, &devnull, e) < 0)
			goto out;
	}
	snprintf(fdarg, sizeof fdarg, "%d", sv[1]);
	const char *argv[] = { SANDBOX_RUNNER, "--fd", fdarg, NULL };
	struct sandbox_cmd scmd = { .argv = argv };
	sb->in_session = 1;
	sb->session_fd = sv[1];
	build_argv(sb, &scmd, data, &av);
	/* bwrap's own complaints, and the runner's, go nowhere: a session
	 * that does not start says so by its missing greeting. */
	close(outp[0]);
	outp[0] = -1;
	int started;
	if (pre) {
		started = bw_pre_take(sb, &scmd, &av, &sb->session_ch, e);
		bw_pre_close(p);
		if (started < 0)
			cgroup_kill_all(sb->cg);
	} else {
		started = run_start(sb, &scmd, &av, data, devnull, &outp[1], &sb->session_ch, e);
	}
	sb->in_session = 0;
	close(sv[1]);
	sv[1] = -1;
	if (started < 0)
		goto out;
	sb->rn = runner_open(sv[0], clock_mono() + SESSION_HELLO_S, e);
	sv[0] = -1;
	if (!sb->rn) {
		err_kind_mark(e, ERR_INTERNAL);
		err_prefix(e, _("cannot start the sandbox's runner"));
		bw_session_end(sb);
		goto out;
	}
	/* Its greeting came before any command ran: what is under bwrap now
	 * is the session itself. */
	if (!sb->cg)
		sb->ninfra = sandbox_tree_spare(sb->session_ch.pid, NULL, 0, NULL, 0, &sb->infra);
	rc = 0;
out:
	sb->in_session = 0;
	for (int i = 0; i < DATA_N; i++)
		if (data[i] >= 0)
			close(data[i]);
	for (int i = 0; i < 2; i++) {
		if (outp[i] >= 0)
			close(outp[i]);
		if (sv[i] >= 0)
			close(sv[i]);
	}
	if (devnull >= 0)
		close(devnull);
	av_free(&av);
	return rc;
}

/* Without a memory cgroup, on the session: the resident memory of all of
 * the sandbox's processes (all are under its bwrap), and over
 * limits.memory every one but the session's own killed from here, as the
 * OOM killer would.  The host enforces it and says so (memory_hit): the
 * runner only reports that its command ended. */
static void watch_memory_session(void *arg)
{
	struct sandbox *sb = arg;
	uint64_t rss;
	if (sb->cg || sb->limits.memory == 0 || sb->session_ch.pid <= 0)
		return;
	sandbox_tree(sb->session_ch.pid, &rss, 0);
	if (rss > sb->limits.memory) {
		sb->memory_hit = 1;
		sandbox_tree_spare(sb->session_ch.pid, NULL, 1, sb->infra, sb->ninfra, NULL);
	}
}

/* run() on the session: every command fresh (whatever an earlier one left
 * is killed first), the limits the cgroup counted added to the result;
 * without a cgroup, the host's memory watch (watch_memory_session) while
 * it runs, and what it left killed from here after it, so that nothing
 * outlives a command unwatched. */
static int bw_run_session(struct sandbox *sb, const struct sandbox_cmd *cmd,
                          struct sandbox_result *r, struct err *e)
{
	if (!sb->rn && bw_session_start(sb, e) < 0)
		return -1;
	uint64_t oom0 = cgroup_oom_kills(sb->cg), pids0 = cgroup_pids_refused(sb->cg);
	/* What the runner forks inherits its CPU limit: this command's share
	 * (sandbox_cpu_rlimit), set from here; it only ever lowers. */
	uint64_t cpu = sandbox_cpu_rlimit(&sb->limits, cmd);
	pid_t runner = bw_session_runner(sb);
	struct rlimit cl = { (rlim_t)cpu, (rlim_t)cpu + 1 };
	if (cpu && runner > 0)
		prlimit(runner, RLIMIT_CPU, &cl, NULL);
	struct argv_b env = { 0 };
	bw_env(sb, cmd, &env);
	struct sandbox_drain note;
	run_drain_init(sb, cmd, &note);
	sb->memory_hit = 0;
	int rc = sandbox_runner_run(sb->rn, cmd, (char *const *)cmd->argv, env.v, SANDBOX_WORKDIR,
	                            &sb->limits, RP_RUN_FRESH, sb->cg ? NULL : watch_memory_session,
	                            sb, r, e);
	av_free(&env);
	if (!sb->cg && sb->session_ch.pid > 0)
		sandbox_tree_spare(sb->session_ch.pid, NULL, 1, sb->infra, sb->ninfra, NULL);
	if (rc < 0)
		return -1;
	struct statvfs vfs;
	if (cgroup_oom_kills(sb->cg) > oom0 || sb->memory_hit)
		r->hit |= SANDBOX_HIT_MEMORY;
	if (cgroup_pids_refused(sb->cg) > pids0)
		r->hit |= SANDBOX_HIT_PIDS;
	if (statvfs(RT, &vfs) == 0 && (vfs.f_bavail == 0 || (vfs.f_files && vfs.f_favail == 0)))
		r->hit |= SANDBOX_HIT_DISK;
	return 0;
}

/* term(): whether the sandbox's commands run on its session. */
static int bw_term(struct sandbox *sb)
{
	(void)sb;
	return 1;
}

static int bw_run(struct sandbox *sb, const struct sandbox_cmd *cmd, struct sandbox_result *r,
                  struct err *e)
{
	int begun = sandbox_run_begin(cmd, r, e);
	if (begun != 0)
		return begun < 0 ? -1 : 0;
	/* Every command runs on the session: the shell's too (cmd->term),
	 * the root helper's keepers' (privsep.c), and user mode's without
	 * cgroups (the host watches the session's memory). */
	return bw_run_session(sb, cmd, r, e);
}

/* ---- copy_out ---- */

static int bw_copy_out(struct sandbox *sb, const char *inside, const char *host, uint64_t cap,
                       struct err *e)
{
	const char *under, *rel;
	if (sandbox_inside_split(inside, &under, &rel, e) < 0)
		return -1;
	/* On a session its runner reads it, with the sandbox's rights, as
	 * on an engine whose files the host cannot see. */
	if (sb->rn)
		return sandbox_runner_get(sb->rn, inside, host, cap, e);
	return sandbox_copy_out_at(!strcmp(under, SANDBOX_OUTDIR) ? RT_OUT : RT_MERGED, rel, inside,
	                           host, cap, sb->uid, e);
}

/* ---- changes ---- */

static int bw_changes(struct sandbox *sb, struct err *e)
{
	if (sb->direct)
		return err_set(e, _("the workspace is no overlay; nothing to compare"));
	return sandbox_changes_at(RT_UPPER, sb->lower, RT_OUT, e);
}

/* ---- branch ---- */

static int bw_branch(struct sandbox *sb, const char *branch, const char *sha, struct err *e)
{
	if (sb->direct)
		return err_set(e, _("the workspace is no overlay; it has no task branch"));
	return sandbox_branch_at(RT_MERGED, branch, sha, 1, sb->uid, sb->gid, e);
}

/* ---- copy_in ---- */

static int bw_copy_in(struct sandbox *sb, const char *host, const char *inside,
                      struct err *e)
{
	if (strcmp(inside, SANDBOX_PROMPT) == 0) {
		/* On a session, its runner writes it where its bwrap bound
		 * it: the next round's agent runs in the same sandbox. */
		if (sb->rn)
			return sandbox_runner_put(sb->rn, host, SANDBOX_PROMPT, 0644, SANDBOX_PROMPT_MAX,
			                          e);
		/* Else a new file renamed over the old: commands started
		 * later bind the new one. */
		if (prompt_in(sb, -1, host, RT_PROMPT ".new", e) < 0)
			return -1;
		if (rename(RT_PROMPT ".new", RT_PROMPT) < 0)
			return err_errno(e, _("cannot replace %s"), RT_PROMPT);
		return 0;
	}
	return sandbox_copy_in_at(RT_OUT, host, inside, e);
}

/* 1 if the filesystem type is listed in /proc/filesystems. */
static int fs_supported(const char *type)
{
	FILE *f = fopen("/proc/filesystems", "re");
	char line[256];
	int found = 0;

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof line, f)) {
		char *name = strrchr(line, '\t');
		name = name ? name + 1 : line;
		name[strcspn(name, "\n")] = 0;
		found = strcmp(name, type) == 0;
	}
	fclose(f);
	return found;
}

/* In a child: the supervisor's user namespace steps, then an overlay
 * mount in it.  Exits with the failed step (enum userns_step). */
static int userns_probe(void *arg)
{
	(void)arg;
	if (!sandbox_options()->user_mode) {
		/* Root mode: bwrap makes the user namespace as the sandbox uid. */
		uid_t uid = sandbox_options()->uid;
		gid_t gid = sandbox_options()->gid;
		if (setgroups(0, NULL) < 0 || setresgid(gid, gid, gid) < 0 ||
		    setresuid(uid, uid, uid) < 0)
			return USERNS_MAP;
		return unshare(CLONE_NEWUSER) < 0 ? USERNS_UNSHARE : USERNS_OK;
	}
	int step = userns_enter();
	if (step != USERNS_OK)
		return step;
	static const char *const dirs[] = { RT "/l", RT "/u", RT "/w", RT "/m" };
	for (size_t i = 0; i < 4; i++)
		if (mkdir(dirs[i], 0755) < 0)
			return USERNS_MOUNT;
	if (mount("paddock", RT "/m", "overlay", 0,
	          "lowerdir=" RT "/l,upperdir=" RT "/u,workdir=" RT "/w") < 0)
		return USERNS_OVERLAY;
	return USERNS_OK;
}

int sandbox_bwrap_userns_check(struct err *e)
{
	struct child ch = { .fn = userns_probe, .stdio = { CHILD_NULL, CHILD_NULL, CHILD_NULL } };
	if (child_start(&ch, e) < 0)
		return -1;
	int status = child_finish(&ch);
	int step = WIFEXITED(status) ? WEXITSTATUS(status) : USERNS_UNSHARE;
	if (step != USERNS_OK) {
		err_set(e, "%s", userns_step_text(step));
		return step == USERNS_UNSHARE ? SANDBOX_USERNS_NONE : SANDBOX_USERNS_MOUNTS;
	}
	return 0;
}

/* User mode: bwrap, user namespaces with mounts and overlay in them;
 * cgroups only where one is delegated (scheduler_sandbox_options). */
static int bw_preflight_user(struct err *e)
{
	if (sandbox_bwrap_userns_check(e) < 0)
		return -1;
	if (!fs_supported("overlay"))
		return err_set(e, _("the kernel does not support overlayfs, which the sandbox "
		                    "uses for the workspace; load it with modprobe overlay"));
	return 0;
}

static int bw_preflight(struct err *e)
{
	struct stat st;
	FILE *f;

	if (stat(BWRAP_PATH, &st) < 0 || !S_ISREG(st.st_mode) || access(BWRAP_PATH, X_OK) < 0)
		return err_set(e, _("bubblewrap (%s) is missing or not executable; install it "
		                    "(apt-get install bubblewrap) and reconfigure paddock"),
		               BWRAP_PATH);
	if (sandbox_options()->user_mode)
		return bw_preflight_user(e);
	if (geteuid() != 0)
		return err_set(e, _("the sandbox must drop to an unprivileged uid, which needs "
		                    "root; run paddock as root, e.g. with sudo"));
	/* bwrap is not setuid here: it needs unprivileged user namespaces. */
	f = fopen("/proc/sys/user/max_user_namespaces", "re");
	if (f) {
		long n = -1;
		if (fscanf(f, "%ld", &n) == 1 && n == 0) {
			fclose(f);
			return err_set(e, _("user namespaces are disabled (user.max_user_namespaces "
			                    "is 0), which bubblewrap needs; enable them with "
			                    "sysctl -w user.max_user_namespaces=10000"));
		}
		fclose(f);
	}
	if (sandbox_bwrap_userns_check(e) < 0)
		return -1;
	if (cgroup_preflight(e) < 0)
		return -1;
	if (!fs_supported("overlay"))
		return err_set(e, _("the kernel does not support overlayfs, which the sandbox "
		                    "uses for the workspace; load it with modprobe overlay"));
	if (!fs_supported("tmpfs"))
		return err_set(e, _("the kernel does not support tmpfs, which the sandbox needs"));
	return 0;
}

static void bw_janitor(void)
{
	/* Mounts live in each supervisor's private mount namespace and vanish
	 * with it, so only cgroups can outlive a task. */
	if (sandbox_options()->cgroups)
		cgroup_janitor();
}

static void bw_owner(uid_t *uid, gid_t *gid)
{
	/* User mode: the user, who is the sandbox's uid 1000. */
	*uid = sandbox_options()->user_mode ? geteuid() : sandbox_options()->uid;
	*gid = sandbox_options()->user_mode ? getegid() : sandbox_options()->gid;
}

#define BW_OPS \
	.create = bw_create, .run = bw_run, .copy_out = bw_copy_out, .copy_in = bw_copy_in, \
	.changes = bw_changes, .branch = bw_branch, .term = bw_term, \
	.destroy = bw_destroy, .preflight = bw_preflight, .janitor = bw_janitor, .owner = bw_owner

static const struct sandbox_backend bwrap_backend = {
	.name = "bwrap", .nets = SANDBOX_NET_NETNS | SANDBOX_NET_BRIDGE, BW_OPS
};

/* User mode reaches the gateway through the bridge only: the namespace
 * the gateway would make needs root. */
static const struct sandbox_backend bwrap_user_backend = {
	.name = "bwrap", .nets = SANDBOX_NET_BRIDGE, BW_OPS
};

const struct sandbox_backend *sandbox_backend_bwrap(void)
{
	return sandbox_options()->user_mode ? &bwrap_user_backend : &bwrap_backend;
}
