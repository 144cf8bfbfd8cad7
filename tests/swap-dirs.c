/* swap-dirs A B SECONDS: exchanges the names A and B (renameat2 with
 * RENAME_EXCHANGE, which Python's os module lacks) as fast as it can for
 * SECONDS, so that whoever looks A up meanwhile meets either of the two:
 * the race runas.test runs against the root helper, as the user, with a
 * folder and a symbolic link.  SIGTERM ends it early, the names left as
 * they were.  Exits 0 after at least one exchange. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: swap-dirs A B SECONDS\n");
		return 2;
	}
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	time_t end = time(NULL) + atoi(argv[3]);
	long swaps = 0;
	while (!stop && time(NULL) < end)
		if (syscall(SYS_renameat2, AT_FDCWD, argv[1], AT_FDCWD, argv[2], RENAME_EXCHANGE) == 0)
			swaps++;
	/* An even count leaves the names as they were. */
	if (swaps % 2)
		syscall(SYS_renameat2, AT_FDCWD, argv[1], AT_FDCWD, argv[2], RENAME_EXCHANGE);
	return swaps > 0 ? 0 : 1;
}
