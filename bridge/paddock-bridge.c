/* paddock-bridge: the sandbox end of the gateway's fallback network
 * (src/gateway/gateway.h, "The bridge"; gateway.network in paddock-config(5)).
 *
 *   paddock-bridge DIR PORT[,PORT...] -- COMMAND [ARG...]
 *
 * Runs inside a sandbox that bubblewrap gave a network namespace of its
 * own (only `lo`, no route).  It listens on 127.0.0.1:PORT for each PORT
 * and relays every connection (relay.h) to the unix socket DIR/PORT, which the
 * gateway holds on the host side; then it runs COMMAND and exits the way
 * COMMAND does, once what COMMAND sent on its connections is relayed, up
 * to their end (a connection left open by a process of its own, for at
 * most BRIDGE_DRAIN_S more): a connection the kernel took before COMMAND
 * exited, and the bytes sent on it, still reach the gateway, as they
 * would over a network.  It holds no secret and no privilege: it runs as the
 * sandbox's user, and what it relays is what the agent could send to the
 * sockets itself.  Only libc, so that it runs on any sandbox's /usr. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "relay.h"

#define MAX_PORTS 16
#define MAX_PAIRS 256
/* How long the relays may go on after COMMAND exited. */
#define BRIDGE_DRAIN_S 2.0

static int sig_pipe[2] = { -1, -1 };

/* Whether every pair has passed on all its sandbox side sent, and its
 * end: nothing of COMMAND's is left to relay (what the far side answers
 * has no one to read it). */
static int sent_all(const struct relay *r)
{
	for (size_t i = 0; i < r->n; i++)
		if (!r->pairs[i].up.shut)
			return 0;
	return 1;
}

static double mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}
static pid_t child = -1;

static void on_signal(int sig)
{
	int saved = errno;
	if (sig == SIGCHLD) {
		char c = 0;
		(void)!write(sig_pipe[1], &c, 1);
	} else if (child > 0) {
		kill(child, sig);
	}
	errno = saved;
}

static void die(const char *what)
{
	fprintf(stderr, "paddock-bridge: %s: %s\n", what, strerror(errno));
	exit(126);
}

static int listen_on(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0), one = 1;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
	                         .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	if (fd < 0)
		die("socket");
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (bind(fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(fd, 64) < 0) {
		fprintf(stderr, "paddock-bridge: cannot listen on 127.0.0.1:%d: %s\n", port,
		        strerror(errno));
		exit(126);
	}
	return fd;
}

static int connect_gateway(const char *dir, int port)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	if ((size_t)snprintf(a.sun_path, sizeof a.sun_path, "%s/%d", dir, port) >= sizeof a.sun_path)
		return -1;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
		close(fd);
		return -1;
	}
	fcntl(fd, F_SETFL, O_NONBLOCK);
	return fd;
}

static int exit_like(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status)) {
		int sig = WTERMSIG(status);
		signal(sig, SIG_DFL);
		sigset_t s;
		sigemptyset(&s);
		sigaddset(&s, sig);
		sigprocmask(SIG_UNBLOCK, &s, NULL);
		kill(getpid(), sig);
		return 128 + sig;
	}
	return 1;
}

int main(int argc, char **argv)
{
	int ports[MAX_PORTS], lfd[MAX_PORTS];
	size_t nports = 0;
	struct relay rel;

	if (argc < 5 || strcmp(argv[3], "--") != 0) {
		fprintf(stderr, "usage: paddock-bridge DIR PORT[,PORT...] -- COMMAND [ARG...]\n");
		return 126;
	}
	const char *dir = argv[1];
	for (char *s = argv[2], *end; *s; s = *end ? end + 1 : end) {
		long p = strtol(s, &end, 10);
		if (end == s || (*end && *end != ',') || p < 1 || p > 65535 || nports == MAX_PORTS) {
			fprintf(stderr, "paddock-bridge: bad port list \"%s\"\n", argv[2]);
			return 126;
		}
		ports[nports++] = (int)p;
	}
	for (size_t i = 0; i < nports; i++)
		lfd[i] = listen_on(ports[i]);

	if (pipe2(sig_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
		die("pipe");
	struct sigaction sa = { .sa_handler = on_signal, .sa_flags = SA_RESTART };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGCHLD, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	child = fork();
	if (child < 0)
		die("fork");
	if (child == 0) {
		/* The command gets the signal dispositions it would have had. */
		signal(SIGPIPE, SIG_DFL);
		signal(SIGCHLD, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		execvp(argv[4], argv + 4);
		fprintf(stderr, "paddock-bridge: cannot run %s: %s\n", argv[4], strerror(errno));
		_exit(errno == ENOENT ? 127 : 126);
	}

	if (relay_init(&rel, MAX_PAIRS) < 0)
		die("calloc");
	struct pollfd *pfd = calloc(1 + MAX_PORTS + 2 * MAX_PAIRS, sizeof *pfd);
	if (!pfd)
		die("calloc");
	int status = 0, ended = 0;
	double until = 0;
	for (;;) {
		if (!ended && waitpid(child, &status, WNOHANG) == child) {
			ended = 1;
			until = mono() + BRIDGE_DRAIN_S;
		}
		if (ended && mono() >= until)
			break;
		size_t n = 0;
		pfd[n++] = (struct pollfd){ .fd = sig_pipe[0], .events = POLLIN };
		for (size_t i = 0; i < nports; i++)
			pfd[n++] = (struct pollfd){ .fd = lfd[i],
			                            .events = relay_full(&rel) ? 0 : POLLIN };
		size_t base = n;
		n += relay_pollfds(&rel, pfd + base);
		/* COMMAND gone: what is already queued or relaying, no wait
		 * for anything new. */
		int timeout = !ended ? 1000 : rel.n ? (int)((until - mono()) * 1000) + 1 : 0;
		int pr = poll(pfd, n, timeout);
		if (pr < 0 && errno != EINTR)
			die("poll");
		int pending = 0;
		for (size_t i = 0; i < nports; i++)
			pending |= pr > 0 && (pfd[1 + i].revents & POLLIN);
		if (ended && !pending && sent_all(&rel))
			break;
		if (pfd[0].revents) {
			char drain[64];
			while (read(sig_pipe[0], drain, sizeof drain) > 0)
				;
		}
		for (size_t i = 0; i < nports; i++) {
			if (!(pfd[1 + i].revents & POLLIN))
				continue;
			int c = accept4(lfd[i], NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
			if (c < 0)
				continue;
			int g = connect_gateway(dir, ports[i]);
			if (g < 0) {
				/* The gateway is gone: the client sees a closed connection. */
				close(c);
				continue;
			}
			int one = 1;
			setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
			relay_add(&rel, c, g, NULL, 0);
		}
		/* The pairs added above were not polled this time: relay_step
		 * leaves them for the next. */
		relay_step(&rel, pfd + base);
	}
	relay_free(&rel);
	free(pfd);
	return exit_like(status);
}
