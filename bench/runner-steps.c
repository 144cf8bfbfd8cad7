/* bench/runner-steps.c: the cost of one step in a sandbox session
 * (src/sandbox/runner.h), built and run by bench/runner.sh.
 *
 *   runner-steps N COMMAND [ARG...]
 *
 * Starts COMMAND (paddock-runner, or bwrap ... paddock-runner) with the
 * channel on fd 3, then runs /bin/true N times as fresh steps; prints the session's
 * start and the mean step in milliseconds. */
#include "autoconfig.h"
#include "runner.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	int n = atoi(argv[1]), sv[2];
	if (n < 1 || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return 2;
	double t0 = clock_mono();
	pid_t pid = fork();
	if (pid == 0) {
		if (sv[1] == 3)
			fcntl(3, F_SETFD, 0);
		else
			dup2(sv[1], 3);
		execvp(argv[2], argv + 2);
		_exit(127);
	}
	close(sv[1]);
	struct err e = {{0}};
	struct runner *r = runner_open(sv[0], clock_mono() + 10, &e);
	if (!r) {
		fprintf(stderr, "%s\n", e.msg);
		return 1;
	}
	double t1 = clock_mono();
	char *args[] = { "/bin/true", NULL };
	char *env[] = { "PATH=/usr/bin:/bin", NULL };
	struct runner_cmd cmd = { .argv = args, .env = env, .flags = RP_RUN_FRESH };
	for (int i = 0; i < n; i++) {
		struct runner_end end;
		if (runner_run(r, &cmd, clock_mono() + 10, &end, &e) < 0) {
			fprintf(stderr, "%s\n", e.msg);
			return 1;
		}
	}
	double t2 = clock_mono();
	runner_close(r);
	waitpid(pid, NULL, 0);
	printf("%.2f %.3f\n", (t1 - t0) * 1e3, (t2 - t1) * 1e3 / n);
	return 0;
}
