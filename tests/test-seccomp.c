/* seccomp_filter.c: the gateway's filter (seccomp_filter_gateway), each
 * call tried in a child of its own that loads it first. */
#include "autoconfig.h"
#include "seccomp_filter.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "child.h"
#include "tap.h"

/* What a child does under the filter; its exit status: 0 as expected. */
enum probe { P_PLAIN, P_EXECVE, P_PTRACE, P_MOUNT, P_UNSHARE, P_PACKET };

static int probe_run(void *arg)
{
	enum probe p = *(enum probe *)arg;
	struct err e = {{0}};
	if (seccomp_filter_gateway(&e) < 0) {
		fprintf(stderr, "# %s\n", e.msg);
		return 90;
	}
	switch (p) {
	case P_PLAIN: {
		/* What the gateway does all day: sockets, its pid, memory. */
		int fd = socket(AF_INET, SOCK_STREAM, 0);
		return fd >= 0 && getpid() > 0 ? 0 : 1;
	}
	case P_EXECVE: {
		char *const argv[] = { (char *)"/bin/true", NULL };
		execv(argv[0], argv);
		return 0;  /* not killed: the filter failed */
	}
	case P_PTRACE:
		/* A request that, allowed, changes nothing (no tracer: ESRCH),
		 * so that LeakSanitizer's own tracing at exit still works. */
		ptrace(PTRACE_PEEKUSER, getpid(), NULL, NULL);
		return 0;
	case P_MOUNT:
		return mount("none", "/tmp", "tmpfs", 0, NULL) < 0 && errno == EPERM ? 0 : 1;
	case P_UNSHARE:
		return unshare(CLONE_NEWUSER) < 0 && errno == EPERM ? 0 : 1;
	case P_PACKET:
		return socket(AF_PACKET, SOCK_RAW, 0) < 0 && errno == EPERM ? 0 : 1;
	}
	return 2;
}

/* The wait status of a child that ran probe p. */
static int probe(enum probe p)
{
	struct child c = { .fn = probe_run, .arg = &p };
	struct err e = {{0}};
	if (child_start(&c, &e) < 0)
		return -1;
	return child_finish(&c);
}

static int killed_by_sigsys(int st)
{
	return st >= 0 && WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS;
}

int main(void)
{
	int st = probe(P_PLAIN);
	ok(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0,
	   "under the gateway's filter, sockets and the usual calls work (status %d)", st);
	ok(killed_by_sigsys(probe(P_EXECVE)), "execve kills the process (SIGSYS)");
#ifdef __SANITIZE_ADDRESS__
	st = probe(P_PTRACE);
	ok(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0,
	   "ptrace stays allowed in a sanitizer build (LeakSanitizer needs it; status %d)", st);
#else
	ok(killed_by_sigsys(probe(P_PTRACE)), "ptrace kills the process (SIGSYS)");
#endif
	st = probe(P_MOUNT);
	ok(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "mount is refused with EPERM");
	st = probe(P_UNSHARE);
	ok(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "unshare is refused with EPERM");
	st = probe(P_PACKET);
	ok(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "an AF_PACKET socket is refused");
	return tap_done();
}
