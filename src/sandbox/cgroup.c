#include "autoconfig.h"
#include "cgroup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "child.h"
#include "clock.h"
#include "i18n.h"
#include "paths.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

#define CGROUP_PREFIX "paddock-"
/* A cgroup is live while its supervisor holds an flock on its file in
 * the lock directory (lock_dir); the janitor removes only cgroups whose
 * lock it can take, so that two paddock processes (or parallel test runs)
 * never kill each other's tasks. */
#define ROOT_LOCK_DIR "/run/paddock-cgroups"
/* User mode, cgroup v2: paddock's own processes move into this leaf of
 * the delegated cgroup, since v2 lets a cgroup with processes of its own
 * give no controller to its children. */
#define LEAF_NAME "paddock.main"
#define KILL_WAIT_MS 5000
/* The CPU limit is a quota of cpus * CPU_PERIOD_US per period. */
#define CPU_PERIOD_US 100000
#define CPU_QUOTA_MIN_US 1000  /* the kernel's smallest quota */

/* The janitor goes from the last to the first: freezer first. */
enum { V1_MEMORY, V1_PIDS, V1_CPU, V1_FREEZER, V1_N };
static const char *const v1_names[V1_N] = { "memory", "pids", "cpu", "freezer" };

struct cgroup {
	int v2;
	char *dir[V1_N];   /* v1: one dir per controller; v2: dir[0] only */
	char *lock_path;
	int lock_fd;
	int cpu_limited;   /* a cpu quota is set */
};

/* ---- small file helpers ---- */

static int write_str(const char *dir, const char *file, const char *val)
{
	char path[4096];
	int fd;
	ssize_t n;
	size_t len = strlen(val);

	snprintf(path, sizeof path, "%s/%s", dir, file);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = write(fd, val, len);
	if (n < 0) {
		int saved = errno;
		close(fd);
		errno = saved;
		return -1;
	}
	close(fd);
	return (size_t)n == len ? 0 : -1;
}

/* Reads a small file into buf (NUL-terminated); -1 on error. */
static int read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t got = 0;

	if (fd < 0)
		return -1;
	while (got + 1 < len) {
		ssize_t n = read(fd, buf + got, len - 1 - got);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			close(fd);
			return -1;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	buf[got] = 0;
	return 0;
}

/* Value of "key N" in a flat keyed file (memory.oom_control, pids.events,
 * memory.events); 0 when absent. */
static uint64_t keyed_value(const char *dir, const char *file, const char *key)
{
	char path[4096], data[4096];
	size_t klen = strlen(key);

	snprintf(path, sizeof path, "%s/%s", dir, file);
	if (read_small(path, data, sizeof data) < 0)
		return 0;
	for (char *line = data; line && *line;) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = 0;
		if (strncmp(line, key, klen) == 0 && line[klen] == ' ')
			return strtoull(line + klen + 1, NULL, 10);
		line = nl ? nl + 1 : NULL;
	}
	return 0;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static double now_ms(void)
{
	return clock_mono() * 1e3;
}

/* ---- where our own cgroups are ---- */

/* Our path in the hierarchy that has `controller` (v1), or the v2 path
 * when controller is NULL; malloc'd, or NULL. */
static char *own_path(const char *controller)
{
	FILE *f = fopen("/proc/self/cgroup", "re");
	char *line = NULL, *res = NULL;
	size_t cap = 0;

	if (!f)
		return NULL;
	while (!res && getline(&line, &cap, f) > 0) {
		char *c1 = strchr(line, ':'), *c2, *path;
		if (!c1 || !(c2 = strchr(c1 + 1, ':')))
			continue;
		*c2 = 0;
		path = c2 + 1;
		path[strcspn(path, "\n")] = 0;
		if (!controller) {
			if (c1[1] == 0 && strncmp(line, "0:", 2) == 0)
				res = xstrdup(path);
			continue;
		}
		for (char *tok = strtok(c1 + 1, ","); tok; tok = strtok(NULL, ","))
			if (strcmp(tok, controller) == 0) {
				res = xstrdup(path);
				break;
			}
	}
	free(line);
	fclose(f);
	return res;
}

/* Unescapes the octal escapes (\040) of /proc/self/mountinfo in place. */
static void unescape_mount(char *s)
{
	char *o = s;
	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*o++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*o++ = *s;
		}
	}
	*o = 0;
}

/* The directory of our own cgroup for a v1 controller (or v2 when
 * controller is NULL): mount point + our path relative to the mount's
 * root.  malloc'd, or NULL. */
static char *own_dir(const char *controller)
{
	char *path = own_path(controller), *res = NULL, *line = NULL;
	size_t cap = 0;
	FILE *f;

	if (!path)
		return NULL;
	f = fopen("/proc/self/mountinfo", "re");
	if (!f) {
		free(path);
		return NULL;
	}
	while (!res && getline(&line, &cap, f) > 0) {
		/* id parent maj:min root mountpoint opts [tags] - fstype src superopts */
		char *fields[6] = { 0 }, *save = NULL, *tok, *dash, *fstype, *superopts;
		int n = 0;
		dash = strstr(line, " - ");
		if (!dash)
			continue;
		*dash = 0;
		fstype = strtok_r(dash + 3, " ", &save);
		(void)strtok_r(NULL, " ", &save);
		superopts = strtok_r(NULL, " \n", &save);
		if (!fstype || !superopts)
			continue;
		if (controller) {
			int has = 0;
			if (strcmp(fstype, "cgroup") != 0)
				continue;
			for (char *o = strtok_r(superopts, ",", &save); o; o = strtok_r(NULL, ",", &save))
				if (strcmp(o, controller) == 0)
					has = 1;
			if (!has)
				continue;
		} else if (strcmp(fstype, "cgroup2") != 0) {
			continue;
		}
		save = NULL;
		for (tok = strtok_r(line, " ", &save); tok && n < 6; tok = strtok_r(NULL, " ", &save))
			fields[n++] = tok;
		if (n < 5)
			continue;
		unescape_mount(fields[3]);
		unescape_mount(fields[4]);
		{
			const char *root = fields[3], *rel = path;
			size_t rl = strlen(root);
			if (strcmp(root, "/") != 0) {
				if (strncmp(path, root, rl) != 0 || (path[rl] != '/' && path[rl] != 0))
					continue;
				rel = path + rl;
			}
			if (!controller && strcmp(fields[4], "/sys/fs/cgroup") != 0)
				continue;  /* a v2 mount elsewhere (hybrid "unified") is not ours */
			res = xasprintf("%s%s", fields[4], strcmp(rel, "/") == 0 ? "" : rel);
		}
	}
	free(line);
	fclose(f);
	free(path);
	/* In the leaf of a delegated v2 cgroup: the delegated one is ours. */
	if (res && !controller) {
		char *slash = strrchr(res, '/');
		if (slash && strcmp(slash + 1, LEAF_NAME) == 0)
			*slash = '\0';
	}
	return res;
}

/* 1 when /sys/fs/cgroup is a cgroup2 mount with memory and pids usable
 * below our cgroup. */
static int v2_usable(char **dir_out)
{
	struct statfs sf;
	char *dir, path[4096], ctl[1024];
	int ok;

	if (statfs("/sys/fs/cgroup", &sf) < 0 || (unsigned long)sf.f_type != CGROUP2_SUPER_MAGIC)
		return 0;
	dir = own_dir(NULL);
	if (!dir)
		return 0;
	snprintf(path, sizeof path, "%s/cgroup.controllers", dir);
	ok = read_small(path, ctl, sizeof ctl) == 0 && strstr(ctl, "memory") && strstr(ctl, "pids");
	if (!ok) {
		free(dir);
		return 0;
	}
	*dir_out = dir;
	return 1;
}

static int name_valid(const char *name)
{
	if (!name || !*name || strlen(name) > 200 || strcmp(name, ".") == 0 ||
	    strcmp(name, "..") == 0)
		return 0;
	for (const char *p = name; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '-' || *p == '_' || *p == '.'))
			return 0;
	return 1;
}

/* ---- killing ---- */

/* Walks dir's cgroup.procs: with sig, sends it to each process and
 * returns how many took it; without, returns how many there are.  -1
 * when the file cannot be read. */
static int procs_each(const char *dir, int sig)
{
	char path[4096];
	FILE *f;
	int n = 0;
	long pid;

	snprintf(path, sizeof path, "%s/cgroup.procs", dir);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fscanf(f, "%ld", &pid) == 1)
		if (!sig || (pid > 0 && kill((pid_t)pid, sig) == 0))
			n++;
	fclose(f);
	return n;
}

static int procs_count(const char *dir)
{
	return procs_each(dir, 0);
}

static int kill_procs(const char *dir)
{
	int n = procs_each(dir, SIGKILL);
	return n < 0 ? 0 : n;
}

static void wait_empty(const char *dir, double until)
{
	int n;
	while ((n = procs_count(dir)) > 0 && now_ms() < until) {
		kill_procs(dir);
		sleep_ms(10);
	}
}

/* Kills everything in a v1 cgroup set (memory/pids/freezer dirs; any may
 * be NULL).  Freezing first stops a fork bomb from outrunning the kill. */
static void v1_kill(char *const dir[V1_N])
{
	const char *frz = dir[V1_FREEZER];
	const char *procs = frz ? frz : dir[V1_PIDS] ? dir[V1_PIDS] : dir[V1_MEMORY];
	double until = now_ms() + KILL_WAIT_MS;

	if (!procs)
		return;
	if (frz && procs_count(frz) > 0) {
		char path[4096], state[64];
		snprintf(path, sizeof path, "%s/freezer.state", frz);
		if (write_str(frz, "freezer.state", "FROZEN") == 0) {
			double frz_until = now_ms() + 1000;
			while (now_ms() < frz_until) {
				if (read_small(path, state, sizeof state) < 0 ||
				    strncmp(state, "FROZEN", 6) == 0)
					break;
				sleep_ms(5);
			}
		}
		kill_procs(frz);
		write_str(frz, "freezer.state", "THAWED");
	}
	for (int i = 0; i < V1_N; i++)
		if (dir[i])
			wait_empty(dir[i], until);
}

/* wait_empty for v2: the kernel wakes a poll on cgroup.events when the
 * group empties, so the wait ends when the last process is gone, not at
 * the next 10 ms tick (a command's bwrap often exits a moment before
 * its last process). */
static void v2_wait_empty(const char *dir, double until)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/cgroup.events", dir);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		wait_empty(dir, until);
		return;
	}
	while (procs_count(dir) > 0 && now_ms() < until) {
		kill_procs(dir);
		char buf[256];
		/* Read before the poll: it wakes on a change after a read. */
		if (pread(fd, buf, sizeof buf, 0) < 0)
			break;
		struct pollfd pfd = { .fd = fd, .events = POLLPRI };
		if (poll(&pfd, 1, 10) < 0 && errno != EINTR)
			break;
	}
	close(fd);
}

static void v2_kill(const char *dir)
{
	double until = now_ms() + KILL_WAIT_MS;
	if (write_str(dir, "cgroup.kill", "1") < 0) {
		/* before 5.14: freeze, kill, thaw */
		write_str(dir, "cgroup.freeze", "1");
		kill_procs(dir);
		write_str(dir, "cgroup.freeze", "0");
	}
	v2_wait_empty(dir, until);
}

static void rmdir_retry(const char *dir)
{
	for (int i = 0; i < 50; i++) {
		if (rmdir(dir) == 0 || errno == ENOENT)
			return;
		if (errno != EBUSY)
			return;
		sleep_ms(20);
	}
}

/* ---- lock files ---- */

/* Where the lock files are: root's in /run; a user's in the runtime
 * directory (XDG_RUNTIME_DIR), shared by all of the user's paddocks, or
 * without one in the data directory; never in /tmp.  malloc'd. */
static char *lock_dir(void)
{
	const char *rt = paths_runtime_dir();

	if (geteuid() == 0)
		return xstrdup(ROOT_LOCK_DIR);
	if (rt)
		return xasprintf("%s/paddock-cgroups", rt);
	char *data = paths_data_dir(), *dir = paths_cgroup_locks(data);
	free(data);
	return dir;
}

static char *lock_path_for(const char *name)
{
	char *dir = lock_dir(), *path = xasprintf("%s/%s%s.lock", dir, CGROUP_PREFIX, name);
	free(dir);
	return path;
}

/* ---- public ---- */

static void cg_free(struct cgroup *cg)
{
	for (int i = 0; i < V1_N; i++)
		free(cg->dir[i]);
	if (cg->lock_fd >= 0)
		close(cg->lock_fd);
	free(cg->lock_path);
	free(cg);
}

static int mkdir_fresh(const char *dir, struct err *e)
{
	if (mkdir(dir, 0755) == 0)
		return 0;
	if (errno == EEXIST) {
		/* We hold the lock, so this one is stale: a dead task's. */
		char *one[V1_N] = { (char *)dir, NULL, NULL };
		v1_kill(one);
		rmdir_retry(dir);
		if (mkdir(dir, 0755) == 0)
			return 0;
	}
	return err_errno(e, _("cannot create the cgroup %s (run paddock as root on a host "
	                      "with cgroup memory and pids controllers)"), dir);
}

static long long cpu_quota_us(double cpus)
{
	long long q = (long long)(cpus * CPU_PERIOD_US + 0.5);
	return q < CPU_QUOTA_MIN_US ? CPU_QUOTA_MIN_US : q;
}

/* Why a CPU limit that was asked for cannot be set. */
static int cpu_missing(struct err *e, const char *where)
{
	return err_set(e, _("limits.cpus is set, but the cgroup cpu controller cannot be used "
	                    "(%s); make it available (cgroup v1: mounted at "
	                    "/sys/fs/cgroup/cpu; v2: enabled in the cgroup above paddock's), or "
	                    "remove limits.cpus to rely on each process's CPU time limit"),
	               where);
}

/* cpu.max in the v2 group; without the controller: an error only when
 * required. */
static int v2_cpu(struct cgroup *cg, const char *parent, double cpus, int required,
                  struct err *e)
{
	char val[64];

	/* Apart from memory and pids, so that a refusal of cpu (real-time
	 * threads with RT_GROUP_SCHED) does not cost those. */
	write_str(parent, "cgroup.subtree_control", "+cpu");
	snprintf(val, sizeof val, "%lld %d", cpu_quota_us(cpus), CPU_PERIOD_US);
	if (write_str(cg->dir[0], "cpu.max", val) == 0) {
		cg->cpu_limited = 1;
		return 0;
	}
	return required ? cpu_missing(e, cg->dir[0]) : 0;
}

/* The v1 cpu group with its quota; without the controller (or when the
 * quota is refused, e.g. above the quota of paddock's own group): an error
 * only when required. */
static int v1_cpu(struct cgroup *cg, const char *name, double cpus, int required,
                  struct err *e)
{
	char *base = own_dir("cpu"), *dir, val[64];
	struct err ignored;
	int shared = 0;

	if (!base)
		return required ? cpu_missing(e, _("not mounted")) : 0;
	dir = xasprintf("%s/%s%s", base, CGROUP_PREFIX, name);
	free(base);
	/* cpu mounted together with memory or pids: one directory */
	for (int i = 0; i < V1_N; i++)
		if (i != V1_CPU && cg->dir[i] && strcmp(cg->dir[i], dir) == 0)
			shared = 1;
	if (!shared && mkdir_fresh(dir, required ? e : &ignored) < 0) {
		free(dir);
		return required ? -1 : 0;
	}
	cg->dir[V1_CPU] = dir;
	snprintf(val, sizeof val, "%d", CPU_PERIOD_US);
	if (write_str(dir, "cpu.cfs_period_us", val) == 0) {
		snprintf(val, sizeof val, "%lld", cpu_quota_us(cpus));
		if (write_str(dir, "cpu.cfs_quota_us", val) == 0) {
			cg->cpu_limited = 1;
			return 0;
		}
	}
	if (required)
		err_errno(e, _("cannot set limits.cpus as cpu.cfs_quota_us in %s (is the CPU "
		               "limit of paddock's own cgroup lower?)"), dir);
	if (!shared)
		rmdir_retry(dir);
	free(dir);
	cg->dir[V1_CPU] = NULL;
	return required ? -1 : 0;
}

/* The lock file lists the cgroup's directories, one per line: a janitor
 * started in another cgroup (a restart from a systemd unit after a shell)
 * still finds them. */
static void record_dirs(struct cgroup *cg)
{
	struct buf b = {0};
	for (int i = 0; i < V1_N; i++)
		if (cg->dir[i])
			buf_printf(&b, "%s\n", cg->dir[i]);
	if (ftruncate(cg->lock_fd, 0) < 0 || pwrite(cg->lock_fd, b.data ? b.data : "", b.len, 0) < 0) {
		/* Without it, only the janitor's own cgroup is searched. */
	}
	buf_free(&b);
}

/* The directories a lock file recorded, for a lock no process holds. */
static void janitor_recorded(void)
{
	char *dir = lock_dir();
	DIR *d = opendir(dir);
	struct dirent *de;
	if (!d) {
		free(dir);
		return;
	}
	while ((de = readdir(d))) {
		size_t n = strlen(de->d_name);
		if (strncmp(de->d_name, CGROUP_PREFIX, strlen(CGROUP_PREFIX)) != 0 || n < 6 ||
		    strcmp(de->d_name + n - 5, ".lock") != 0)
			continue;
		char *lock = xasprintf("%s/%s", dir, de->d_name);
		int fd = open(lock, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) < 0) {
			if (fd >= 0)
				close(fd);  /* its supervisor is alive */
			free(lock);
			continue;
		}
		char text[8192];
		ssize_t got = pread(fd, text, sizeof text - 1, 0);
		if (got <= 0) {
			/* Nothing recorded: a cgroup being made right now (its
			 * maker opens the file, then locks it), or one of the
			 * janitor's own cgroup, which janitor_dir handles. */
			close(fd);
			free(lock);
			continue;
		}
		text[got] = '\0';
		char *v1[V1_N] = { NULL };
		char *save = NULL;
		for (char *line = strtok_r(text, "\n", &save); line;
		     line = strtok_r(NULL, "\n", &save)) {
			const char *base = strrchr(line, '/');
			/* Only what paddock makes: a paddock-* directory under
			 * /sys/fs/cgroup, never a path a stray file names. */
			if (strncmp(line, "/sys/fs/cgroup/", 15) != 0 || strstr(line, "/../") ||
			    !base || strncmp(base + 1, CGROUP_PREFIX, strlen(CGROUP_PREFIX)) != 0)
				continue;
			char probe[4096];
			snprintf(probe, sizeof probe, "%s/cgroup.events", line);
			if (access(probe, F_OK) == 0) {
				v2_kill(line);
				rmdir_retry(line);
				continue;
			}
			for (int i = 0; i < V1_N; i++) {
				size_t k = strlen(v1_names[i]);
				if (!strncmp(line + 15, v1_names[i], k) && line[15 + k] == '/')
					v1[i] = line;
			}
		}
		v1_kill(v1);
		for (int i = V1_N; i-- > 0;)
			if (v1[i])
				rmdir_retry(v1[i]);
		unlink(lock);
		close(fd);
		free(lock);
	}
	closedir(d);
	free(dir);
}

/* Takes the cgroup's lock file, which says the name is ours while we run
 * (and lets a janitor tell a live cgroup from a stale one). */
static int cg_lock(struct cgroup *cg, const char *name, struct err *e)
{
	char *dir = lock_dir();
	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		err_errno(e, _("cannot create %s"), dir);
		free(dir);
		return -1;
	}
	free(dir);
	cg->lock_path = lock_path_for(name);
	for (int tries = 0;; tries++) {
		cg->lock_fd = open(cg->lock_path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (cg->lock_fd < 0)
			return err_errno(e, _("cannot open the cgroup lock %s"), cg->lock_path);
		/* A janitor in another paddock may hold it for a moment to see
		 * whether it is stale: wait a little before calling it taken. */
		int locked = 0;
		for (int k = 0; k < 100 && !(locked = flock(cg->lock_fd, LOCK_EX | LOCK_NB) == 0);
		     k++)
			sleep_ms(20);
		if (!locked)
			return err_set(e, _("the cgroup %s%s is in use by another running task; "
			                    "choose another task name or wait for it to finish"),
			               CGROUP_PREFIX, name);
		/* A janitor may have taken the new file for a stale one and
		 * removed it between our open and our lock: a lock on a file
		 * no longer there protects nothing, so open it again. */
		struct stat held, named;
		if (fstat(cg->lock_fd, &held) == 0 && stat(cg->lock_path, &named) == 0 &&
		    held.st_ino == named.st_ino && held.st_dev == named.st_dev)
			return 0;
		close(cg->lock_fd);
		cg->lock_fd = -1;
		if (tries >= 10)
			return err_set(e, _("the cgroup lock %s keeps being removed; is another "
			                    "paddock cleaning up?"), cg->lock_path);
	}
}

/* The v2 group under v2dir with its limits.  On failure, cg->dir[0] is
 * set only when the directory was made (the caller removes it). */
static int v2_create(struct cgroup *cg, const char *v2dir, const char *name,
                     uint64_t memory, long pids, double cpus, int cpus_required,
                     struct err *e)
{
	char val[64];

	/* Enable the controllers for our children; fails with EBUSY when
	 * our own cgroup holds processes and is not the root
	 * ("no internal processes"): preflight explains that. */
	write_str(v2dir, "cgroup.subtree_control", "+memory +pids");
	cg->dir[0] = xasprintf("%s/%s%s", v2dir, CGROUP_PREFIX, name);
	if (mkdir_fresh(cg->dir[0], e) < 0) {
		free(cg->dir[0]);
		cg->dir[0] = NULL;
		return -1;
	}
	if (cpus > 0 && v2_cpu(cg, v2dir, cpus, cpus_required, e) < 0)
		return -1;
	snprintf(val, sizeof val, "%" PRIu64, memory);
	if (memory && write_str(cg->dir[0], "memory.max", val) < 0)
		return err_errno(e, _("cannot set memory.max in %s"), cg->dir[0]);
	write_str(cg->dir[0], "memory.swap.max", "0");  /* absent without swap */
	snprintf(val, sizeof val, "%ld", pids);
	if (pids > 0 && write_str(cg->dir[0], "pids.max", val) < 0)
		return err_errno(e, _("cannot set pids.max in %s"), cg->dir[0]);
	return 0;
}

/* One v1 group per controller but cpu (made by v1_cpu once the others are
 * there); a missing freezer is fine, kill then works without freezing. */
static int v1_dirs(struct cgroup *cg, const char *name, struct err *e)
{
	for (int i = 0; i < V1_N; i++) {
		char *base;
		if (i == V1_CPU)
			continue;
		base = own_dir(v1_names[i]);
		if (!base) {
			if (i == V1_FREEZER)
				continue;
			return err_set(e, _("no cgroup %s controller is mounted; the sandbox needs "
			                    "cgroup memory and pids controllers (v1 or v2)"),
			               v1_names[i]);
		}
		cg->dir[i] = xasprintf("%s/%s%s", base, CGROUP_PREFIX, name);
		free(base);
		if (mkdir_fresh(cg->dir[i], e) < 0) {
			free(cg->dir[i]);
			cg->dir[i] = NULL;
			return -1;
		}
	}
	return 0;
}

/* Memory (with swap, where accounted), pids and cpu of the v1 groups. */
static int v1_limits(struct cgroup *cg, const char *name, uint64_t memory, long pids,
                     double cpus, int cpus_required, struct err *e)
{
	char val[64];

	if (memory) {
		char path[4096];
		snprintf(val, sizeof val, "%" PRIu64, memory);
		/* memsw must stay >= limit_in_bytes: raise memsw first when it
		 * exists (it starts at "unlimited", so setting limit first works
		 * too; the order matters only when lowering). */
		if (write_str(cg->dir[V1_MEMORY], "memory.limit_in_bytes", val) < 0)
			return err_errno(e, _("cannot set memory.limit_in_bytes in %s"),
			                 cg->dir[V1_MEMORY]);
		snprintf(path, sizeof path, "%s/memory.memsw.limit_in_bytes", cg->dir[V1_MEMORY]);
		if (access(path, F_OK) == 0 &&
		    write_str(cg->dir[V1_MEMORY], "memory.memsw.limit_in_bytes", val) < 0)
			return err_errno(e, _("cannot set memory.memsw.limit_in_bytes in %s"),
			                 cg->dir[V1_MEMORY]);
	}
	snprintf(val, sizeof val, "%ld", pids);
	if (pids > 0 && write_str(cg->dir[V1_PIDS], "pids.max", val) < 0)
		return err_errno(e, _("cannot set pids.max in %s"), cg->dir[V1_PIDS]);
	if (cpus > 0 && v1_cpu(cg, name, cpus, cpus_required, e) < 0)
		return -1;
	return 0;
}

int cgroup_create(struct cgroup **out, const char *name, uint64_t memory, long pids,
                  double cpus, int cpus_required, struct err *e)
{
	struct cgroup *cg;
	char *v2dir = NULL;

	*out = NULL;
	if (!name_valid(name))
		return err_set(e, _("invalid cgroup name \"%s\" (letters, digits, '.', '_' and "
		                    "'-' only)"), name ? name : "");
	cg = xcalloc(1, sizeof *cg);
	cg->lock_fd = -1;
	if (cg_lock(cg, name, e) < 0)
		goto fail;

	if (v2_usable(&v2dir)) {
		cg->v2 = 1;
		int rc = v2_create(cg, v2dir, name, memory, pids, cpus, cpus_required, e);
		free(v2dir);
		if (rc < 0)
			goto fail_rm;
	} else if (v1_dirs(cg, name, e) < 0 ||
	           v1_limits(cg, name, memory, pids, cpus, cpus_required, e) < 0) {
		goto fail_rm;
	}
	record_dirs(cg);
	*out = cg;
	return 0;

fail_rm:
	for (int i = 0; i < V1_N; i++)
		if (cg->dir[i])
			rmdir_retry(cg->dir[i]);
fail:
	cg_free(cg);
	return -1;
}

int cgroup_enter(struct cgroup *cg, pid_t pid)
{
	char val[32];

	if (!cg)
		return 0;
	snprintf(val, sizeof val, "%ld", (long)pid);
	for (int i = 0; i < V1_N; i++)
		if (cg->dir[i] && write_str(cg->dir[i], "cgroup.procs", val) < 0)
			return -1;
	return 0;
}

int cgroup_cpu_limited(struct cgroup *cg)
{
	return cg && cg->cpu_limited;
}

int cgroup_count(struct cgroup *cg)
{
	int max = 0;
	if (!cg)
		return 0;
	for (int i = 0; i < V1_N; i++) {
		int n;
		if (cg->dir[i] && (n = procs_count(cg->dir[i])) > max)
			max = n;
	}
	return max;
}

void cgroup_kill_all(struct cgroup *cg)
{
	if (!cg)
		return;
	if (cg->v2)
		v2_kill(cg->dir[0]);
	else
		v1_kill(cg->dir);
}

uint64_t cgroup_oom_kills(struct cgroup *cg)
{
	if (!cg)
		return 0;
	if (cg->v2)
		return keyed_value(cg->dir[0], "memory.events", "oom_kill");
	return keyed_value(cg->dir[V1_MEMORY], "memory.oom_control", "oom_kill");
}

uint64_t cgroup_pids_refused(struct cgroup *cg)
{
	if (!cg)
		return 0;
	return keyed_value(cg->v2 ? cg->dir[0] : cg->dir[V1_PIDS], "pids.events", "max");
}

void cgroup_destroy(struct cgroup *cg)
{
	if (!cg)
		return;
	cgroup_kill_all(cg);
	for (int i = 0; i < V1_N; i++)
		if (cg->dir[i])
			rmdir_retry(cg->dir[i]);
	if (cg->lock_path)
		unlink(cg->lock_path);
	cg_free(cg);
}

/* Removes the stale paddock-* cgroups in the directory `base`. */
static void janitor_dir(const char *base, int v2)
{
	DIR *d = opendir(base);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d))) {
		const char *name = de->d_name;
		char *dir, *lock;
		int fd;

		if (strncmp(name, CGROUP_PREFIX, strlen(CGROUP_PREFIX)) != 0)
			continue;
		lock = lock_path_for(name + strlen(CGROUP_PREFIX));
		fd = open(lock, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0 && geteuid() != 0) {
			/* A user's paddocks may use other lock directories
			 * (no runtime directory, other data directories):
			 * without a lock file, the cgroup is not known to be
			 * stale.  Every cgroup a user's paddock makes has one
			 * until it is removed. */
			free(lock);
			continue;
		}
		if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) < 0) {
			close(fd);  /* its supervisor is alive */
			free(lock);
			continue;
		}
		dir = xasprintf("%s/%s", base, name);
		if (v2) {
			v2_kill(dir);
		} else {
			char *one[V1_N] = { dir, NULL, NULL };
			/* freezer: freeze before killing */
			if (strstr(base, "/freezer")) {
				one[0] = NULL;
				one[V1_FREEZER] = dir;
			}
			v1_kill(one);
		}
		rmdir_retry(dir);
		free(dir);
		if (fd >= 0) {
			unlink(lock);
			close(fd);
		}
		free(lock);
	}
	closedir(d);
}

void cgroup_janitor(void)
{
	char *v2dir = NULL;

	janitor_recorded();

	if (v2_usable(&v2dir)) {
		janitor_dir(v2dir, 1);
		free(v2dir);
		return;
	}
	/* freezer first, so that the processes are gone before the other
	 * controllers' dirs are removed */
	for (int i = V1_N - 1; i >= 0; i--) {
		char *base = own_dir(v1_names[i]);
		if (base) {
			janitor_dir(base, 0);
			free(base);
		}
	}
}

int cgroup_preflight(struct err *e)
{
	char *v2dir = NULL, *mem, *pids;
	int ok;

	if (v2_usable(&v2dir)) {
		char path[4096], ctl[1024];
		snprintf(path, sizeof path, "%s/cgroup.subtree_control", v2dir);
		ok = access(v2dir, W_OK) == 0;
		if (ok && (read_small(path, ctl, sizeof ctl) < 0 || !strstr(ctl, "memory") ||
		           !strstr(ctl, "pids")) &&
		    write_str(v2dir, "cgroup.subtree_control", "+memory +pids") < 0) {
			err_errno(e, _("cannot enable the memory and pids controllers below the "
			               "cgroup %s (cgroup v2 forbids it while that cgroup holds "
			               "processes: start paddock in a cgroup of its own, e.g. with "
			               "systemd-run --scope -p Delegate=yes)"), v2dir);
			free(v2dir);
			return -1;
		}
		if (!ok) {
			err_set(e, _("cannot write to the cgroup %s; run paddock as root"), v2dir);
			free(v2dir);
			return -1;
		}
		/* cpu is optional: cgroup_create decides what its absence means. */
		write_str(v2dir, "cgroup.subtree_control", "+cpu");
		free(v2dir);
		return 0;
	}
	mem = own_dir("memory");
	pids = own_dir("pids");
	if (!mem || !pids) {
		err_set(e, _("the sandbox needs the cgroup %s controller, which is not mounted "
		             "here (cgroup v1 at /sys/fs/cgroup/%s, or cgroup v2 at "
		             "/sys/fs/cgroup with memory and pids enabled)"),
		        !mem ? "memory" : "pids", !mem ? "memory" : "pids");
		free(mem);
		free(pids);
		return -1;
	}
	ok = access(mem, W_OK) == 0 && access(pids, W_OK) == 0;
	if (!ok)
		err_set(e, _("cannot create cgroups in %s and %s; run paddock as root"), mem, pids);
	free(mem);
	free(pids);
	return ok ? 0 : -1;
}

/* ---- delegation: a cgroup that is a user's to divide ---- */

/* 0 when dir's children get memory and pids (and cpu where it can). */
static int v2_enable(const char *dir)
{
	char path[4096], ctl[1024];

	snprintf(path, sizeof path, "%s/cgroup.subtree_control", dir);
	if (read_small(path, ctl, sizeof ctl) < 0 || !strstr(ctl, "memory") ||
	    !strstr(ctl, "pids")) {
		if (write_str(dir, "cgroup.subtree_control", "+memory +pids") < 0)
			return -1;
	}
	write_str(dir, "cgroup.subtree_control", "+cpu");
	return 0;
}

/* Moves every process of the cgroup dir into its leaf (LEAF_NAME), so
 * that dir may give controllers to its children. */
static int v2_leaf(const char *dir, struct err *e)
{
	char *leaf = xasprintf("%s/%s", dir, LEAF_NAME), path[4096];

	if (mkdir(leaf, 0755) < 0 && errno != EEXIST) {
		err_errno(e, _("cannot create the cgroup %s"), leaf);
		free(leaf);
		return -1;
	}
	snprintf(path, sizeof path, "%s/cgroup.procs", dir);
	/* Again while any moved: a process may fork meanwhile. */
	for (int round = 0; round < 10; round++) {
		FILE *f = fopen(path, "re");
		long pid;
		int moved = 0;
		if (!f)
			break;
		while (fscanf(f, "%ld", &pid) == 1) {
			char val[32];
			snprintf(val, sizeof val, "%ld", pid);
			if (write_str(leaf, "cgroup.procs", val) == 0)
				moved++;
		}
		fclose(f);
		if (!moved)
			break;
	}
	free(leaf);
	return 0;
}

/* "memory, pids, cpu": the controllers of the v1 dirs that are ours. */
static void v1_where(char *const dir[V1_N], struct buf *b)
{
	for (int i = 0; i < V1_N; i++)
		if (dir[i] && access(dir[i], W_OK) == 0)
			buf_printf(b, "%s%s %s", b->len ? ", " : "", v1_names[i], dir[i]);
}

int cgroup_delegated(char **where, struct err *e)
{
	struct err ignored;
	char *v2dir = NULL, *dir[V1_N] = { NULL };
	int ok = 0;

	if (!e)
		e = &ignored;
	if (where)
		*where = NULL;
	if (v2_usable(&v2dir)) {
		char path[4096], ctl[1024];
		snprintf(path, sizeof path, "%s/cgroup.procs", v2dir);
		if (access(v2dir, W_OK) < 0 || access(path, W_OK) < 0)
			err_set(e, _("the cgroup %s is not delegated to you"), v2dir);
		else if (v2_enable(v2dir) == 0 ||
		         (errno == EBUSY && v2_leaf(v2dir, e) == 0 && v2_enable(v2dir) == 0))
			ok = 1;
		else if (!e->msg[0])
			err_errno(e, _("cannot enable the memory and pids controllers below the "
			               "delegated cgroup %s"), v2dir);
		snprintf(path, sizeof path, "%s/cgroup.subtree_control", v2dir);
		if (ok && where && read_small(path, ctl, sizeof ctl) == 0) {
			ctl[strcspn(ctl, "\n")] = '\0';
			*where = xasprintf("%s (%s)", v2dir, ctl);
		}
		free(v2dir);
		return ok;
	}
	for (int i = 0; i < V1_N; i++)
		dir[i] = own_dir(v1_names[i]);
	if (!dir[V1_MEMORY] || !dir[V1_PIDS])
		err_set(e, _("no cgroup memory and pids controllers here (cgroup v2 at "
		             "/sys/fs/cgroup, or v1 at /sys/fs/cgroup/memory and /sys/fs/cgroup/pids)"));
	else if (access(dir[V1_MEMORY], W_OK) < 0 || access(dir[V1_PIDS], W_OK) < 0)
		err_set(e, _("the cgroups %s and %s are not delegated to you"), dir[V1_MEMORY],
		        dir[V1_PIDS]);
	else
		ok = 1;
	if (ok && where) {
		struct buf b = { 0 };
		v1_where(dir, &b);
		*where = buf_detach(&b);
	}
	for (int i = 0; i < V1_N; i++)
		free(dir[i]);
	return ok;
}

/* ---- a delegated scope from the systemd user manager ---- */

/* busctl's own words on stderr (its first line), for the message. */
static char *busctl_stderr(int fd)
{
	struct buf b = { 0 };
	char tmp[512];
	ssize_t n;
	while ((n = read(fd, tmp, sizeof tmp)) > 0 && b.len < 4096)
		buf_add(&b, tmp, (size_t)n);
	if (!b.data)
		return xstrdup("");
	b.data[strcspn(b.data, "\n")] = '\0';
	return buf_detach(&b);
}

int cgroup_systemd_scope(struct err *e)
{
	const char *rt = getenv("XDG_RUNTIME_DIR");
	char *bus, unit[64], pid[32], before[4096], now[4096];
	struct stat st;
	int p[2], rc = -1;

	/* Moved once this changes (the v2 line, or on v1 the controllers'). */
	if (read_small("/proc/self/cgroup", before, sizeof before) < 0)
		return err_errno(e, _("cannot read /proc/self/cgroup"));
	if (!rt || rt[0] != '/') {
		return err_set(e, _("no systemd user manager to ask for a delegated scope "
		                    "(XDG_RUNTIME_DIR is not set)"));
	}
	bus = xasprintf("%s/bus", rt);
	int have_bus = stat(bus, &st) == 0 && S_ISSOCK(st.st_mode);
	free(bus);
	if (!have_bus) {
		return err_set(e, _("no systemd user manager to ask for a delegated scope (no "
		                    "bus at $XDG_RUNTIME_DIR/bus)"));
	}
	snprintf(unit, sizeof unit, "paddock-%ld.scope", (long)getpid());
	snprintf(pid, sizeof pid, "%ld", (long)getpid());
	/* org.freedesktop.systemd1(5): StartTransientUnit(name, mode,
	 * properties, aux); a scope takes existing processes (PIDs), and
	 * Delegate=yes makes its cgroup ours. */
	const char *argv[] = { "busctl", "--user", "call", "org.freedesktop.systemd1",
	                       "/org/freedesktop/systemd1", "org.freedesktop.systemd1.Manager",
	                       "StartTransientUnit", "ssa(sv)a(sa(sv))", unit, "fail", "3",
	                       "PIDs", "au", "1", pid, "Delegate", "b", "true",
	                       "Description", "s", "paddock: sandboxes' cgroups", "0", NULL };
	if (pipe2(p, O_CLOEXEC) < 0) {
		return err_errno(e, _("cannot ask the systemd user manager for a delegated scope"));
	}
	struct child ch = { .argv = argv, .stdio = { CHILD_NULL, CHILD_NULL, p[1] }, .alarm = 10 };
	int started = child_start(&ch, e);
	close(p[1]);
	char *why = started == 0 ? busctl_stderr(p[0]) : NULL;
	close(p[0]);
	if (started < 0) {
		err_prefix(e, _("cannot ask the systemd user manager for a delegated scope"));
	} else if (child_finish(&ch) != 0) {
		err_set(e, _("the systemd user manager gave no delegated scope: %s"),
		        why && *why ? why : _("busctl failed"));
	} else {
		/* The job moves us soon after it is queued. */
		double until = now_ms() + 3000;
		for (;;) {
			if (read_small("/proc/self/cgroup", now, sizeof now) == 0 &&
			    strcmp(now, before) != 0) {
				rc = 0;
				break;
			}
			if (now_ms() > until) {
				err_set(e, _("the systemd user manager did not move paddock into %s"),
				        unit);
				break;
			}
			sleep_ms(20);
		}
	}
	free(why);
	return rc;
}
