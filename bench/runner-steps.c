/* bench/runner-steps.c: the cost of one step in a sandbox session
 * (src/sandbox/runner.h), built and run by bench/runner.sh.
 *
 *   runner-steps N COMMAND [ARG...]
 *
 * Starts COMMAND (paddock-runner, or bwrap ... paddock-runner) with the
 * channel on fd 3, then runs /bin/true N times as fresh steps; prints the session's
 * start and the mean step in milliseconds.  With RS_FILE (a file the
 * runner can read, at the same path) it then copies that file out N times
 * through the session (FILE_GET, sandbox_runner_get) and N times from the
 * host's side (sandbox_copy_out_at, as bwrap's copy_out without a
 * session), and prints both means too. */
#include "autoconfig.h"
#include "runner.h"
#include "sandbox_int.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
	const char *file = getenv("RS_FILE");
	double get = 0, copy = 0;
	if (file && *file) {
		char *out = malloc(strlen(file) + 8), *dir = strdup(file);
		sprintf(out, "%s.out", file);
		*strrchr(dir, '/') = '\0';
		for (int i = 0; i < n; i++)
			if (sandbox_runner_get(r, file, out, 1u << 30, &e) < 0) {
				fprintf(stderr, "%s\n", e.msg);
				return 1;
			}
		double t3 = clock_mono();
		for (int i = 0; i < n; i++)
			if (sandbox_copy_out_at(dir, strrchr(file, '/') + 1, file, out, 1u << 30,
			                        geteuid(), &e) < 0) {
				fprintf(stderr, "%s\n", e.msg);
				return 1;
			}
		get = (t3 - t2) * 1e3 / n;
		copy = (clock_mono() - t3) * 1e3 / n;
		unlink(out);
		free(out);
		free(dir);
	}
	runner_close(r);
	waitpid(pid, NULL, 0);
	printf("%.2f %.3f %.3f %.3f\n", (t1 - t0) * 1e3, (t2 - t1) * 1e3 / n, get, copy);
	return 0;
}
