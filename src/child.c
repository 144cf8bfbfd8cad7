#include "autoconfig.h"
#include "child.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "clock.h"
#include "i18n.h"

extern char **environ;

/* One started child, until it is waited for. */
struct node {
	struct node *next;
	pid_t pid;
	void (*on_exit)(pid_t pid, int status, void *owner);
	void *owner;
	int done;            /* reaped by child_reap; status kept */
	int status;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t reaped = PTHREAD_COND_INITIALIZER;
static struct node *nodes;
/* child_leave_terminal was called (inherited by forked copies). */
static int leave_terminal;

/* The signals a terminal's keys send to its foreground group. */
static const int term_key_signals[] = { SIGINT, SIGQUIT, SIGTSTP };

void child_leave_terminal(void)
{
	leave_terminal = 1;
}

int child_left_terminal(void)
{
	return leave_terminal;
}

/* With lock held. */
static struct node *node_find(pid_t pid)
{
	for (struct node *n = nodes; n; n = n->next)
		if (n->pid == pid)
			return n;
	return NULL;
}

/* With lock held. */
static void node_remove(struct node *gone)
{
	for (struct node **p = &nodes; *p; p = &(*p)->next) {
		if (*p == gone) {
			*p = gone->next;
			free(gone);
			return;
		}
	}
}

/* ---- in the child: async-signal-safe calls only ---- */

static void child_lower_limit(const struct child_limit *l)
{
	struct rlimit rl;
	if (getrlimit(l->resource, &rl) < 0)
		return;
	if (rl.rlim_max == RLIM_INFINITY || rl.rlim_max > (rlim_t)l->hard)
		rl.rlim_max = (rlim_t)l->hard;
	if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > (rlim_t)l->soft)
		rl.rlim_cur = (rlim_t)l->soft;
	if (rl.rlim_cur > rl.rlim_max)
		rl.rlim_cur = rl.rlim_max;
	(void)setrlimit(l->resource, &rl);
}

static void child_close_range(unsigned lo, unsigned hi)
{
	if (lo <= hi && syscall(SYS_close_range, lo, hi, 0U) < 0 && errno == ENOSYS)
		for (unsigned fd = lo; fd <= hi && fd < 65536; fd++)
			close((int)fd);
}

/* Closes every descriptor from 3 up but keep[] (any order), and the
 * report pipe report_fd, which closes itself at execve. */
static void child_close_others(const int *keep, size_t nkeep, int report_fd)
{
	unsigned lo = 3;
	for (;;) {
		/* The next kept descriptor at or above lo. */
		unsigned next = ~0U;
		for (size_t i = 0; i < nkeep; i++)
			if (keep[i] >= 0 && (unsigned)keep[i] >= lo && (unsigned)keep[i] < next)
				next = (unsigned)keep[i];
		if (report_fd >= 0 && (unsigned)report_fd >= lo && (unsigned)report_fd < next)
			next = (unsigned)report_fd;
		if (next == ~0U) {
			child_close_range(lo, ~0U);
			return;
		}
		if (next > lo)
			child_close_range(lo, next - 1);
		lo = next + 1;
	}
}

/* What a child that could not exec tells its parent. */
struct child_report {
	int step;   /* setup's step, or 0 */
	int err;    /* errno */
};

static _Noreturn void child_fail(int report_fd, int step, int err)
{
	if (report_fd >= 0) {
		struct child_report r = { step, err };
		ssize_t n;
		do
			n = write(report_fd, &r, sizeof r);
		while (n < 0 && errno == EINTR);
	}
	_exit(127);
}

/* Runs in the forked child: sets it up and execs (or runs fn). */
static _Noreturn void child_run(const struct child *c, const char *path, char *const *envp,
                                int devnull, int report_fd, pid_t parent)
{
	sigset_t none;
	sigemptyset(&none);
	if (!c->fn) {
		/* A program gets every signal at its default: SIGPIPE ignored
		 * here would turn its broken pipes into errors it does not
		 * expect. */
		struct sigaction dfl;
		memset(&dfl, 0, sizeof dfl);
		dfl.sa_handler = SIG_DFL;
		for (int sig = 1; sig < NSIG; sig++)
			if (sig != SIGKILL && sig != SIGSTOP)
				(void)sigaction(sig, &dfl, NULL);
	}
	/* Off the caller's terminal before any signal is let in: a key's
	 * signal sent to the caller's group since the fork (blocked until
	 * now, child_start) is dropped, as ignoring a signal drops it. */
	int away = leave_terminal && !(c->flags & CHILD_TERMINAL);
	/* A child on the terminal (a shell's session) keeps what it starts
	 * there too, as a command of the CLI does. */
	if (c->flags & CHILD_TERMINAL)
		leave_terminal = 0;
	if ((away || (c->flags & CHILD_NEW_SESSION)) && setsid() < 0)
		child_fail(report_fd, 0, errno);
	if (away) {
		for (size_t i = 0; i < sizeof term_key_signals / sizeof *term_key_signals; i++) {
			struct sigaction ign, old;
			memset(&ign, 0, sizeof ign);
			ign.sa_handler = SIG_IGN;
			if (sigaction(term_key_signals[i], &ign, &old) == 0)
				(void)sigaction(term_key_signals[i], &old, NULL);
		}
	}
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (c->flags & CHILD_DIE_WITH_PARENT) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(127);
	}
	/* Every source is first moved above 2, so that no dup2 to 0-2 can
	 * clobber a source still to come. */
	int src[3];
	for (int i = 0; i < 3; i++) {
		int fd = c->stdio[i] == CHILD_NULL ? devnull : c->stdio[i];
		/* Off the terminal, reading it would steal the caller's keys. */
		if (away && i == 0 && fd == CHILD_INHERIT && isatty(0))
			fd = devnull;
		src[i] = fd == CHILD_INHERIT ? -1 : fcntl(fd, F_DUPFD_CLOEXEC, 3);
		if (fd != CHILD_INHERIT && src[i] < 0)
			child_fail(report_fd, 0, errno);
	}
	for (int i = 0; i < 3; i++)
		if (src[i] >= 0 && dup2(src[i], i) < 0)
			child_fail(report_fd, 0, errno);
	if (c->flags & CHILD_CLOSE_FDS) {
		child_close_others(c->keep, c->nkeep, report_fd);
		if (!c->fn)
			for (size_t i = 0; i < c->nkeep; i++)
				if (c->keep[i] > 2)
					fcntl(c->keep[i], F_SETFD, 0);
	}
	if (c->cwd && chdir(c->cwd) < 0)
		child_fail(report_fd, 0, errno);
	for (size_t i = 0; i < c->nlimits; i++)
		child_lower_limit(&c->limits[i]);
	if (c->alarm)
		alarm(c->alarm);
	if (c->fn)
		_exit(c->fn(c->arg));
	int step = c->setup ? c->setup(c->arg) : 0;
	if (step)
		child_fail(report_fd, step, errno);
	execve(path, (char *const *)c->argv, envp);
	child_fail(report_fd, 0, errno);
}

/* ---- in the caller ---- */

/* The program to exec: argv[0] itself when it has a slash, else the
 * first executable of that name in PATH (looked up before the fork: the
 * child may only make async-signal-safe calls). */
static char *child_resolve(const char *name, const char *const *env)
{
	if (strchr(name, '/'))
		return xstrdup(name);
	const char *path = NULL;
	const char *const *ev = env ? env : (const char *const *)environ;
	for (size_t i = 0; ev && ev[i]; i++)
		if (strncmp(ev[i], "PATH=", 5) == 0)
			path = ev[i] + 5;
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (const char *p = path;;) {
		size_t n = strcspn(p, ":");
		char *cand = xasprintf("%.*s%s%s", (int)n, p, n ? "/" : "", name);
		if (access(cand, X_OK) == 0)
			return cand;
		free(cand);
		if (!p[n])
			break;
		p += n + 1;
	}
	return NULL;
}

int child_threads(void)
{
	char b[1024];
	int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, b, sizeof b - 1);
	close(fd);
	if (n <= 0)
		return 0;
	b[n] = 0;
	/* After the command's name, which may hold anything, ")": field 20
	 * is num_threads (proc(5)). */
	char *p = strrchr(b, ')');
	if (!p)
		return 0;
	int field = 2;
	for (p++; *p && field < 20; p++)
		field += *p == ' ';
	return atoi(p);
}

int child_start(struct child *c, struct err *e)
{
	const char *what = c->fn ? "" : c->argv[0];
	char *path = NULL;
	int report[2] = { -1, -1 };
	c->pid = -1;
	c->status = 0;
	c->exec_errno = 0;
	c->exec_step = 0;
	c->exec_fd = -1;
	/* A copy that runs on without exec inherits every lock another
	 * thread held at the fork, held for good (supervisor.h): refused,
	 * so that it fails here, in the tests, and not as a rare hang. */
	int threads = c->fn ? child_threads() : 0;
	if (threads > 1) {
		errno = EDEADLK;
		return err_set(e, _("cannot start a process: a copy of this process, which has %d "
		                    "threads, could hang on a lock one of them holds (a bug in "
		                    "paddock: please report it)"), threads);
	}
	if (!c->fn) {
		path = child_resolve(c->path ? c->path : c->argv[0], c->env);
		if (!path) {
			c->exec_errno = ENOENT;
			errno = ENOENT;
			return err_errno(e, _("cannot run %s"), what);
		}
		if (pipe2(report, O_CLOEXEC) < 0) {
			free(path);
			return err_errno(e, _("cannot run %s"), what);
		}
	}
	int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (devnull < 0) {
		err_errno(e, _("cannot open /dev/null"));
		goto fail;
	}
	char *const *envp = (char *const *)(c->env ? c->env : (const char *const *)environ);
	struct node *n = xcalloc(1, sizeof *n);
	n->on_exit = c->on_exit;
	n->owner = c->owner;
	pid_t parent = getpid();
	fflush(NULL);
	/* The terminal's keys are held back across the fork: the child lets
	 * them in once it is where they belong (child_run). */
	sigset_t keys, oldmask;
	sigemptyset(&keys);
	for (size_t i = 0; i < sizeof term_key_signals / sizeof *term_key_signals; i++)
		sigaddset(&keys, term_key_signals[i]);
	pthread_sigmask(SIG_BLOCK, &keys, &oldmask);
	/* Listed before any reaper can see it end: the lock is held across
	 * the fork, and the child starts with a list of its own. */
	pthread_mutex_lock(&lock);
	pid_t pid = fork();
	if (pid == 0) {
		pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
		lock = fresh;
		/* The parent's children are not ours.  A program must not call
		 * free here (the caller may have threads) and execs anyway. */
		if (c->fn) {
			while (nodes) {
				struct node *next = nodes->next;
				free(nodes);
				nodes = next;
			}
			free(n);
		}
		nodes = NULL;
		if (report[0] >= 0)
			close(report[0]);
		child_run(c, path, envp, devnull, report[1], parent);
	}
	if (pid > 0) {
		n->pid = pid;
		n->next = nodes;
		nodes = n;
	}
	pthread_mutex_unlock(&lock);
	int fork_errno = errno;
	pthread_sigmask(SIG_SETMASK, &oldmask, NULL);
	close(devnull);
	if (pid < 0) {
		free(n);
		errno = fork_errno;
		err_errno(e, c->fn ? _("cannot start a process") : _("cannot run %s"), what);
		goto fail;
	}
	c->pid = pid;
	c->exec_fd = -1;
	if (report[1] >= 0) {
		close(report[1]);
		report[1] = -1;
		c->exec_fd = report[0];
		report[0] = -1;
		free(path);
		return c->flags & CHILD_EXEC_LATER ? 0 : child_exec_wait(c, e);
	}
	free(path);
	return 0;
fail:
	if (report[0] >= 0)
		close(report[0]);
	if (report[1] >= 0)
		close(report[1]);
	free(path);
	c->pid = -1;
	return -1;
}

int child_exec_wait(struct child *c, struct err *e)
{
	if (c->exec_fd < 0)
		return 0;
	struct child_report rep = { 0, 0 };
	ssize_t got;
	do
		got = read(c->exec_fd, &rep, sizeof rep);
	while (got < 0 && errno == EINTR);
	close(c->exec_fd);
	c->exec_fd = -1;
	if (got != (ssize_t)sizeof rep)
		return 0;
	/* Owned or not, it ended before running: reap it here. */
	pthread_mutex_lock(&lock);
	struct node *mine = node_find(c->pid);
	if (mine)
		mine->on_exit = NULL;
	pthread_mutex_unlock(&lock);
	child_finish(c);
	c->exec_errno = rep.err;
	c->exec_step = rep.step;
	errno = rep.err;
	return err_errno(e, _("cannot run %s"), c->argv[0]);
}

/* Takes the status of a node the reaper kept; with lock held. */
static int child_take(struct child *c, struct node *n)
{
	c->status = n->status;
	node_remove(n);
	c->pid = -1;
	return 1;
}

static int child_wait(struct child *c, int block)
{
	if (c->pid <= 0)
		return 1;
	for (;;) {
		pthread_mutex_lock(&lock);
		struct node *n = node_find(c->pid);
		if (!n || n->done) {
			int r = n ? child_take(c, n) : 1;
			pthread_mutex_unlock(&lock);
			return r;
		}
		pthread_mutex_unlock(&lock);
		int status = 0;
		pid_t r = waitpid(c->pid, &status, block ? 0 : WNOHANG);
		if (r == c->pid) {
			pthread_mutex_lock(&lock);
			n = node_find(c->pid);
			if (n)
				node_remove(n);
			pthread_mutex_unlock(&lock);
			c->status = status;
			c->pid = -1;
			return 1;
		}
		if (r == 0)
			return 0;
		if (errno == EINTR)
			continue;
		/* ECHILD: child_reap took it a moment ago; it keeps the
		 * status for us once it holds the lock. */
		pthread_mutex_lock(&lock);
		n = node_find(c->pid);
		while (n && !n->done && block) {
			pthread_cond_wait(&reaped, &lock);
			n = node_find(c->pid);
		}
		int done = !n || n->done;
		if (n && n->done)
			child_take(c, n);
		pthread_mutex_unlock(&lock);
		if (done)
			return 1;
		return 0;
	}
}

int child_finish(struct child *c)
{
	child_wait(c, 1);
	return c->status;
}

int child_poll(struct child *c)
{
	return child_wait(c, 0);
}

int child_wait_ms(struct child *c, int ms)
{
	if (child_poll(c))
		return 1;
	if (ms <= 0)
		return 0;
	int fd = -1;
#ifdef SYS_pidfd_open
	fd = (int)syscall(SYS_pidfd_open, c->pid, 0);
#endif
	if (fd < 0) {
		/* No pidfd (a kernel before 5.3, or valgrind): short sleeps
		 * until it ends or ms have passed. */
		for (double until = clock_mono() + ms / 1000.0; clock_mono() < until;) {
			struct timespec ts = { 0, (ms < 10 ? ms : 10) * 1000000L };
			nanosleep(&ts, NULL);
			if (child_poll(c))
				return 1;
		}
		return child_poll(c);
	}
	/* Readable once the child has ended (a zombie is too). */
	struct pollfd p = { fd, POLLIN, 0 };
	while (poll(&p, 1, ms) < 0 && errno == EINTR)
		;
	close(fd);
	return child_poll(c);
}

void child_kill(const struct child *c, int sig)
{
	if (c->pid > 0)
		kill(c->pid, sig);
}

void child_reap(void)
{
	int status;
	pid_t pid;
	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		void (*on_exit)(pid_t, int, void *) = NULL;
		void *owner = NULL;
		pthread_mutex_lock(&lock);
		struct node *n = node_find(pid);
		if (n && n->on_exit) {
			on_exit = n->on_exit;
			owner = n->owner;
			node_remove(n);
		} else if (n) {
			n->done = 1;
			n->status = status;
			pthread_cond_broadcast(&reaped);
		}
		pthread_mutex_unlock(&lock);
		if (on_exit)
			on_exit(pid, status, owner);
	}
}

/* 1 when every living child of this process is one of ours (the kernel
 * lists each thread's children in /proc). */
static int child_only_ours_left(void)
{
	DIR *d = opendir("/proc/self/task");
	if (!d)
		return 0;
	int only = 1;
	struct dirent *de;
	while (only && (de = readdir(d))) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		char *path = xasprintf("/proc/self/task/%s/children", de->d_name);
		struct buf b = {0};
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		free(path);
		if (fd < 0)
			continue;
		char chunk[4096];
		ssize_t got;
		while ((got = read(fd, chunk, sizeof chunk)) > 0)
			buf_add(&b, chunk, (size_t)got);
		close(fd);
		buf_addc(&b, '\0');
		char *save = NULL;
		pthread_mutex_lock(&lock);
		for (char *t = strtok_r(b.data, " \n", &save); t && only;
		     t = strtok_r(NULL, " \n", &save)) {
			struct node *n = node_find((pid_t)atol(t));
			only = n && !n->done;
		}
		pthread_mutex_unlock(&lock);
		buf_free(&b);
	}
	closedir(d);
	return only;
}

int child_reap_strays(double timeout)
{
	double until = clock_mono() + timeout;
	for (;;) {
		child_reap();
		if (child_only_ours_left())
			return 1;
		if (clock_mono() > until)
			return 0;
		poll(NULL, 0, 5);
	}
}

int child_exit_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 255;
}
