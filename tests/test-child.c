/* child.c: every child started, waited for by its owner only. */
#include "autoconfig.h"
#include "child.h"
#include "clock.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tap.h"

/* Runs argv with stdout into a pipe; returns what it printed (malloc'd)
 * and its wait status in *status. */
static char *run_out(const char *const *argv, const struct child *tmpl, int *status)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return NULL;
	struct child c = tmpl ? *tmpl : (struct child){ 0 };
	c.argv = argv;
	c.stdio[1] = p[1];
	struct err e = {{0}};
	int rc = child_start(&c, &e);
	close(p[1]);
	if (rc < 0) {
		close(p[0]);
		return NULL;
	}
	char *out = calloc(1, 65536);
	size_t n = 0;
	ssize_t got;
	while ((got = read(p[0], out + n, 65535 - n)) > 0)
		n += (size_t)got;
	close(p[0]);
	*status = child_finish(&c);
	return out;
}

static int exit_with(void *arg)
{
	return (int)(long)arg;
}

static pid_t owned_pid;
static int owned_status = -1, owned_calls;

static void on_owned_exit(pid_t pid, int status, void *owner)
{
	(void)owner;
	if (pid == owned_pid) {
		owned_status = status;
		owned_calls++;
	}
}

/* Waits until pid has ended, without reaping it. */
static void ended(pid_t pid)
{
	siginfo_t si;
	for (int i = 0; i < 3000; i++) {
		memset(&si, 0, sizeof si);
		if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == pid)
			return;
		usleep(10000);
	}
}

/* The dashboard's case: its job and a hosted scheduler's supervisor end
 * together, and the scheduler's reaper runs first. */
static void test_reaper_keeps_others_status(void)
{
	struct child job = { .fn = exit_with, .arg = (void *)3L };
	struct child sup = { .fn = exit_with, .arg = (void *)0L, .on_exit = on_owned_exit };
	struct err e = {{0}};
	ok(child_start(&job, &e) == 0, "a job starts");
	ok(child_start(&sup, &e) == 0, "an owned child starts");
	owned_pid = sup.pid;
	/* Both end before anybody waits. */
	ended(job.pid);
	ended(sup.pid);
	child_reap();
	is_int(owned_calls, 1, "the reaper hands the owned child to its owner once");
	ok(WIFEXITED(owned_status) && WEXITSTATUS(owned_status) == 0,
	   "with its own status");
	int st = child_finish(&job);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 3,
	   "the job's failure is still its own: exit %d, not a success",
	   WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	child_reap();
	is_int(owned_calls, 1, "nothing is handed over twice");
}

static void *reap_loop(void *arg)
{
	volatile int *stop = arg;
	while (!*stop) {
		child_reap();
		usleep(100);
	}
	return NULL;
}

/* A thread that reaps all the time never takes a status from its owner. */
static void test_reaper_thread(void)
{
	volatile int stop = 0;
	pthread_t t;
	pthread_create(&t, NULL, reap_loop, (void *)&stop);
	int right = 0;
	for (long i = 0; i < 60; i++) {
		/* Programs: with a second thread, no copy runs without exec. */
		char code[8];
		snprintf(code, sizeof code, "exit %ld", i % 7);
		const char *argv[] = { "/bin/sh", "-c", code, NULL };
		struct child c = { .argv = argv };
		struct err e = {{0}};
		if (child_start(&c, &e) < 0)
			continue;
		if (i % 2)
			usleep(500);
		int st = child_finish(&c);
		right += WIFEXITED(st) && WEXITSTATUS(st) == i % 7;
	}
	stop = 1;
	pthread_join(t, NULL);
	is_int(right, 60, "60 children finished beside a reaping thread, each with its status");
}

static void *wait_flag(void *arg)
{
	volatile int *stop = arg;
	while (!*stop)
		usleep(1000);
	return NULL;
}

/* No copy of a threaded process: a function child is refused while a
 * second thread lives, a program starts, and once the thread is gone a
 * function child starts again. */
static void test_no_fork_when_threaded(void)
{
	is_int(child_threads(), 1, "one thread to begin with");
	volatile int stop = 0;
	pthread_t t;
	pthread_create(&t, NULL, wait_flag, (void *)&stop);
	is_int(child_threads(), 2, "child_threads counts the second one");
	struct child c = { .fn = exit_with, .arg = (void *)0L };
	struct err e = {{0}};
	int rc = child_start(&c, &e);
	ok(rc < 0 && c.pid == -1 && strstr(e.msg, "2 threads") != NULL,
	   "a function child is refused while another thread runs, and says why");
	const char *argv[] = { "/bin/sh", "-c", "exit 5", NULL };
	struct child p = { .argv = argv };
	rc = child_start(&p, &e);
	ok(rc == 0 && WEXITSTATUS(child_finish(&p)) == 5, "... a program starts all the same");
	stop = 1;
	pthread_join(t, NULL);
	struct child again = { .fn = exit_with, .arg = (void *)6L };
	rc = child_start(&again, &e);
	ok(rc == 0 && WEXITSTATUS(child_finish(&again)) == 6,
	   "once the thread is gone, a function child starts");
}

static void test_program(void)
{
	const char *argv[] = { "sh", "-c", "echo \"$0:$X\"; exit 4", "name", NULL };
	const char *env[] = { "X=y", "PATH=/usr/bin:/bin", NULL };
	struct child t = { .env = env };
	int st = -1;
	char *out = run_out(argv, &t, &st);
	is_str(out, "name:y\n", "a program runs with argv and its own environment");
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 4, "its exit status is kept");
	is_int(child_exit_code(st), 4, "child_exit_code: the exit status");
	free(out);

	const char *missing[] = { "paddock-no-such-program", NULL };
	struct child c = { .argv = missing };
	struct err e = {{0}};
	ok(child_start(&c, &e) < 0 && c.exec_errno == ENOENT,
	   "a missing program fails the start with ENOENT");
	ok(strstr(e.msg, "paddock-no-such-program") != NULL, "the message names it: %s", e.msg);

	char plain[] = "/tmp/paddock-child-XXXXXX";
	close(mkstemp(plain));
	const char *notexec[] = { plain, NULL };
	struct child c2 = { .argv = notexec };
	ok(child_start(&c2, &e) < 0 && c2.exec_errno == EACCES,
	   "a file that is not a program fails the start (EACCES)");
	unlink(plain);

	const char *cwd[] = { "pwd", NULL };
	struct child t2 = { .cwd = "/usr" };
	out = run_out(cwd, &t2, &st);
	is_str(out, "/usr\n", "cwd is set");
	free(out);
	struct child t3 = { .cwd = "/nonexistent-dir" };
	struct child c3 = t3;
	c3.argv = cwd;
	ok(child_start(&c3, &e) < 0 && c3.exec_errno == ENOENT, "a missing cwd fails the start");
}

static void test_descriptors_and_signals(void)
{
	int stray = open("/dev/null", O_RDONLY);       /* not close-on-exec */
	int kept = open("/dev/zero", O_RDONLY | O_CLOEXEC);
	char *script = NULL;
	if (asprintf(&script, "[ -e /proc/self/fd/%d ] && echo stray; "
	             "[ -e /proc/self/fd/%d ] && echo kept; "
	             "grep ^SigIgn /proc/self/status; exec 0</dev/null", stray, kept) < 0)
		return;
	const char *argv[] = { "sh", "-c", script, NULL };
	struct child t = { .keep = &kept, .nkeep = 1, .flags = CHILD_CLOSE_FDS };
	signal(SIGPIPE, SIG_IGN);
	int st;
	char *out = run_out(argv, &t, &st);
	ok(out && !strstr(out, "stray"), "CHILD_CLOSE_FDS: an inherited descriptor is closed");
	ok(out && strstr(out, "kept"), "a kept descriptor stays, close-on-exec or not");
	/* Signals 1-31: glibc keeps 32 and 33 for itself. */
	const char *ign = out ? strstr(out, "SigIgn:\t") : NULL;
	unsigned long long mask = ign ? strtoull(ign + 8, NULL, 16) : ~0ULL;
	ok((mask & 0x7fffffffULL) == 0,
	   "a program gets every signal at its default, though the caller ignores SIGPIPE");
	if ((mask & 0x7fffffffULL) != 0)
		printf("#   %s", out ? out : "(nothing)\n");
	signal(SIGPIPE, SIG_DFL);
	free(out);
	free(script);
	close(stray);
	close(kept);

	const char *nul[] = { "sh", "-c", "cat; echo end", NULL };
	struct child t2 = { .stdio = { CHILD_NULL } };
	out = run_out(nul, &t2, &st);
	is_str(out, "end\n", "CHILD_NULL: stdin is /dev/null");
	free(out);
}

static void test_limits(void)
{
	struct child_limit l[] = { { RLIMIT_FSIZE, 2048, 2048 }, { RLIMIT_CORE, 0, 0 } };
	const char *argv[] = { "sh", "-c", "ulimit -f; ulimit -c", NULL };
	struct child t = { .limits = l, .nlimits = 2 };
	int st;
	char *out = run_out(argv, &t, &st);
	is_str(out, "4\n0\n", "limits are lowered in the child (2048 bytes: 4 blocks; no core)");
	free(out);
	struct rlimit rl;
	getrlimit(RLIMIT_FSIZE, &rl);
	ok(rl.rlim_cur == RLIM_INFINITY, "and not in the caller");

	const char *sleeper[] = { "sleep", "5", NULL };
	struct child c = { .argv = sleeper, .alarm = 1 };
	struct err e = {{0}};
	child_start(&c, &e);
	st = child_finish(&c);
	ok(WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM, "alarm ends a program that overstays");
	is_int(child_exit_code(st), 128 + SIGALRM, "child_exit_code: 128 + the signal");
}

static int setup_fails(void *arg)
{
	(void)arg;
	errno = EPERM;
	return 7;
}

static void test_setup_hook(void)
{
	const char *argv[] = { "true", NULL };
	struct child c = { .argv = argv, .setup = setup_fails };
	struct err e = {{0}};
	ok(child_start(&c, &e) < 0 && c.exec_step == 7 && c.exec_errno == EPERM,
	   "a setup step that fails is reported with its step and errno");
}

/* Blocks until the test writes a byte to the pipe (arg): a program
 * started ahead, waiting for its start. */
static int setup_waits(void *arg)
{
	char x;
	return read(*(int *)arg, &x, 1) == 1 ? 0 : 9;
}

static void test_exec_later(void)
{
	const char *argv[] = { "sh", "-c", "exit 3", NULL };
	int go[2];
	if (pipe(go) < 0) {
		ok(0, "a pipe");
		return;
	}
	struct child c = { .argv = argv, .setup = setup_waits, .arg = &go[0],
	                   .flags = CHILD_EXEC_LATER };
	struct err e = {{0}};
	ok(child_start(&c, &e) == 0 && c.pid > 0,
	   "CHILD_EXEC_LATER: child_start returns while the child waits in its setup");
	ok(child_poll(&c) == 0, "... and the child is still there");
	ok(write(go[1], "x", 1) == 1 && child_exec_wait(&c, &e) == 0,
	   "child_exec_wait: 0 once it runs its program");
	is_int(child_exit_code(child_finish(&c)), 3, "... and it ends as the program does");

	struct child f = { .argv = argv, .setup = setup_waits, .arg = &go[0],
	                   .flags = CHILD_EXEC_LATER };
	close(go[1]);
	ok(child_start(&f, &e) == 0 && child_exec_wait(&f, &e) < 0 && f.exec_step == 9 &&
	   f.pid < 0, "child_exec_wait: -1, its setup's step and the child reaped when it "
	   "could not run");
	close(go[0]);
}

static void test_poll_and_kill(void)
{
	const char *argv[] = { "sleep", "30", NULL };
	struct child c = { .argv = argv };
	struct err e = {{0}};
	child_start(&c, &e);
	is_int(child_poll(&c), 0, "child_poll: 0 while it runs");
	child_kill(&c, SIGTERM);
	int done = 0;
	for (int i = 0; i < 500 && !done; i++) {
		done = child_poll(&c);
		if (!done)
			usleep(10000);
	}
	ok(done && WIFSIGNALED(c.status) && WTERMSIG(c.status) == SIGTERM,
	   "child_poll: 1 once it ended, with its status");

	/* child_wait_ms waits the whole time asked (with a pidfd, and
	 * without one, as under valgrind), and no longer than the child. */
	const char *brief[] = { "sleep", "0.3", NULL };
	struct child b = { .argv = brief };
	child_start(&b, &e);
	double t0 = clock_mono();
	int ended = child_wait_ms(&b, 20000);
	double took = clock_mono() - t0;
	ok(ended == 1 && took >= 0.25 && took < 10, "child_wait_ms: 1 once the child ended (%.2f s)",
	   took);
	struct child l = { .argv = argv };
	child_start(&l, &e);
	t0 = clock_mono();
	ended = child_wait_ms(&l, 200);
	took = clock_mono() - t0;
	ok(ended == 0 && took >= 0.19, "child_wait_ms: 0 after the time asked (%.2f s)", took);
	child_kill(&l, SIGKILL);
	child_finish(&l);
}

/* As a subreaper (the supervisor), orphans of a sandbox are reaped, and
 * the wait ends once only our own children are left. */
static void test_strays(void)
{
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	const char *mine[] = { "sleep", "30", NULL };
	struct child own = { .argv = mine };
	struct err e = {{0}};
	child_start(&own, &e);
	const char *orphaner[] = { "sh", "-c", "sleep 0.3 & exit 0", NULL };
	struct child c = { .argv = orphaner };
	child_start(&c, &e);
	child_finish(&c);
	ok(child_reap_strays(10) == 1, "child_reap_strays: the orphan is reaped");
	ok(kill(own.pid, 0) == 0, "our own child is left alone");
	child_kill(&own, SIGKILL);
	int st = child_finish(&own);
	ok(WIFSIGNALED(st), "and still ours to finish");
	prctl(PR_SET_CHILD_SUBREAPER, 0);
}

int main(void)
{
	test_reaper_keeps_others_status();
	test_reaper_thread();
	test_no_fork_when_threaded();
	test_program();
	test_descriptors_and_signals();
	test_limits();
	test_setup_hook();
	test_exec_later();
	test_poll_and_kill();
	test_strays();
	return tap_done();
}
