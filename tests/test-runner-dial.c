/* runner-dial: paddock-runner's dial mode (runner/dial.h), the runner run
 * as a plain process against a front door this test plays on 127.0.0.1:
 * the preamble of every connection byte for byte (the token as its file
 * holds it at that moment), a real session on the runner's connection
 * with paddock's own client (runner.h), the gateway's streams on that
 * session both ways with half-closes (and no connection of their own to
 * the door), the probes, the retries, and the tokens it refuses.
 *
 * A C test rather than a shell one: the session is driven by runner.h,
 * and the front door must read exactly the preamble before handing the
 * socket to runner_open. */
#include "autoconfig.h"
#include "runner.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "tap.h"
#include "testlib.h"

static const char *runner_bin;
static char *dir;

/* A listener on 127.0.0.1:port (0: any); its port in *got. */
static int listen_at(int port, int *got)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
	                         .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof a;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(fd, 64) < 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &len) < 0) {
		printf("Bail out! cannot listen on 127.0.0.1:%d: %s\n", port, strerror(errno));
		exit(1);
	}
	if (got)
		*got = ntohs(a.sin_port);
	return fd;
}

/* A port nothing listens on (for now): connecting to it is refused. */
static int free_port(void)
{
	int port;
	close(listen_at(0, &port));
	return port;
}

/* The next connection to lfd within seconds, or -1. */
static int accept_within(int lfd, double seconds)
{
	struct pollfd p = { lfd, POLLIN, 0 };
	if (poll(&p, 1, (int)(seconds * 1000)) <= 0)
		return -1;
	return accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
}

/* Reads up to len bytes from fd within seconds (less at EOF); how many. */
static size_t read_within(int fd, char *buf, size_t len, double seconds)
{
	size_t got = 0;
	double end = clock_mono() + seconds;
	while (got < len) {
		struct pollfd p = { fd, POLLIN, 0 };
		double left = end - clock_mono();
		if (left <= 0 || poll(&p, 1, (int)(left * 1000) + 1) <= 0)
			break;
		ssize_t n = read(fd, buf + got, len - got);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	return got;
}

/* Whether fd holds exactly want's bytes next (read within 5 s). */
static int preamble_is(int fd, const char *want)
{
	size_t len = strlen(want);
	char *got = calloc(1, len + 1);
	size_t n = read_within(fd, got, len, 5);
	int same = n == len && memcmp(got, want, len) == 0;
	if (!same)
		printf("#   got %zu bytes: '%.200s'\n#  want %zu bytes: '%.200s'\n", n, got, len, want);
	free(got);
	return same;
}

/* Whether nothing more arrives on fd within seconds (EOF counts). */
static int quiet(int fd, double seconds)
{
	char c;
	return read_within(fd, &c, 1, seconds) == 0;
}

/* Writes the token file the way the kubelet rotates it: a new file
 * renamed over the old. */
static void token_set(const char *content, size_t len)
{
	char *tmp = testlib_fmt("%s/token.new", dir);
	testlib_write(tmp, content, len);
	if (rename(tmp, testlib_fmt("%s/token", dir)) < 0)
		printf("Bail out! rename: %s\n", strerror(errno));
}

/* Starts the runner with env, its stderr in dir/err; with chan >= 0, on
 * the runner's descriptor fdno (named by --fd unless it is 3); arg, when
 * not NULL, is its one argument otherwise. */
static pid_t runner_start_env(char **env, const char *arg, int chan, int fdno)
{
	pid_t pid = fork();
	if (pid == 0) {
		int err = open(testlib_fmt("%s/err", dir), O_WRONLY | O_CREAT | O_APPEND, 0600);
		int nul = open("/dev/null", O_RDONLY);
		dup2(nul, 0);
		dup2(err, 2);
		char fdarg[16];
		snprintf(fdarg, sizeof fdarg, "%d", fdno);
		char *argv[4] = { (char *)runner_bin, NULL, NULL, NULL };
		if (chan >= 0) {
			if (chan == fdno)
				fcntl(chan, F_SETFD, 0);
			else
				dup2(chan, fdno);
			if (fdno != 3) {
				argv[1] = "--fd";
				argv[2] = fdarg;
			}
		} else {
			argv[1] = (char *)arg;
		}
		execve(runner_bin, argv, env);
		_exit(127);
	}
	return pid;
}

/* The runner's exit status within seconds; -1 (and it is killed) past
 * that. */
/* How long a runner may take to end: a bound only (runner_exit returns
 * once it exits), wide for a loaded machine under the sanitizers, where
 * 5 s was once too short for a session of 130 streams to close. */
#define EXIT_WAIT_S 30

static int runner_exit(pid_t pid, double seconds)
{
	int st;
	double end = clock_mono() + seconds;
	while (clock_mono() < end) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return st;
		struct timespec ts = { 0, 10 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return -1;
}

static int exited(int st, int code)
{
	return st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == code;
}

/* What the runner wrote on stderr since the last call. */
static char *runner_err(void)
{
	char *path = testlib_fmt("%s/err", dir);
	char *s = testlib_slurp(path);
	unlink(path);
	return testlib_keep(s ? s : calloc(1, 1));
}

/* The pod's environment: door and probe as given (NULL: unset). */
static char **pod_env(int door, const char *pod, const char *ports, const char *probe,
                      const char *extra)
{
	static char *env[12];
	int n = 0;
	env[n++] = "PATH=/usr/local/bin:/usr/bin:/bin";
	if (door)
		env[n++] = testlib_fmt("PADDOCK_FRONT_DOOR=127.0.0.1:%d", door);
	env[n++] = testlib_fmt("PADDOCK_TOKEN_FILE=%s/token", dir);
	env[n++] = testlib_fmt("PADDOCK_POD=%s", pod);
	if (ports)
		env[n++] = testlib_fmt("PADDOCK_GATEWAY_PORTS=%s", ports);
	if (probe)
		env[n++] = testlib_fmt("PADDOCK_PROBE=%s", probe);
	if (extra)
		env[n++] = (char *)extra;
	env[n++] = "PADDOCK_RUNNER_DIAL_SECONDS=2";
	env[n] = NULL;
	return env;
}

static void sink(void *arg, uint32_t id, uint64_t offset, const char *data, size_t len)
{
	(void)id;
	(void)offset;
	char *s = arg;
	size_t have = strlen(s);
	if (have + len < 4096) {
		memcpy(s + have, data, len);
		s[have + len] = 0;
	}
}

/* Runs argv in the session; its output in out (4096 bytes). */
static int run(struct runner *r, char **argv, unsigned flags, char *out)
{
	static char *env[] = { "PATH=/usr/local/bin:/usr/bin:/bin", NULL };
	struct runner_cmd cmd = { .argv = argv, .env = env, .flags = flags, .output = sink,
	                          .arg = out };
	struct runner_end end;
	struct err e = {{0}};
	out[0] = 0;
	int rc = runner_run(r, &cmd, clock_mono() + 10, &end, &e);
	if (rc < 0)
		printf("# %s\n", e.msg);
	return rc < 0 ? -1 : end.how == RP_END_EXITED ? end.code : 128 + end.code;
}

static int connect_port(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
	                         .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
		printf("# connect to %d: %s\n", port, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* The file steps of the session: a put, and the same bytes got back. */
static void session_files(struct runner *r)
{
	char *src = testlib_fmt("%s/src", dir), *dst = testlib_fmt("%s/put.txt", dir);
	testlib_write(src, "put through the door\n", 21);
	int fd = open(src, O_RDONLY | O_CLOEXEC);
	struct err e = {{0}};
	ok(runner_file_put(r, dst, 0640, fd, 21, clock_mono() + 10, &e) == 0,
	   "a file goes in through the session");
	close(fd);
	char *put = testlib_slurp(dst);
	is_str(put, "put through the door\n", "and lands where it was sent");
	free(put);
	FILE *back = tmpfile();
	unsigned mode = 0;
	int64_t n = runner_file_get(r, dst, fileno(back), 4096, &mode, clock_mono() + 10, &e);
	char got[64] = "";
	rewind(back);
	(void)!fread(got, 1, sizeof got - 1, back);
	fclose(back);
	ok(n == 21 && strcmp(got, "put through the door\n") == 0 && mode == 0640,
	   "and comes back out of it (%lld bytes, mode %o)", (long long)n, mode);
}

/* A bridge socket of the test's, as the gateway's: <bridge>/<port>. */
static int bridge_listen(const char *bridge, int port)
{
	int l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	snprintf(sa.sun_path, sizeof sa.sun_path, "%s/%d", bridge, port);
	if (l < 0 || bind(l, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(l, 512) < 0) {
		printf("Bail out! cannot listen on %s: %s\n", sa.sun_path, strerror(errno));
		exit(1);
	}
	return l;
}

/* The session's calls, which relay its gateway streams, for seconds. */
static void pump(struct runner *r, double seconds)
{
	struct err e = {{0}};
	double end = clock_mono() + seconds;
	while (clock_mono() < end && runner_step(r, 0, clock_mono() + 0.02, &e) >= 0)
		;
}

/* The next connection to the unix listener l while the session relays
 * (5 s at most), or -1 after seconds. */
static int accept_pumped(struct runner *r, int l, double seconds)
{
	double end = clock_mono() + seconds;
	while (clock_mono() < end) {
		int c = accept4(l, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (c >= 0)
			return c;
		pump(r, 0.02);
	}
	return -1;
}

/* Up to len bytes from fd while the session relays, within seconds (less
 * at EOF); how many.  *eof set when the end came. */
static size_t read_pumped(struct runner *r, int fd, char *buf, size_t len, double seconds,
                          int *eof)
{
	size_t got = 0;
	double end = clock_mono() + seconds;
	*eof = 0;
	while (got < len || !len) {
		ssize_t n = recv(fd, buf + got, len - got, MSG_DONTWAIT);
		if (n > 0) {
			got += (size_t)n;
			continue;
		}
		if (n == 0 || (n < 0 && errno != EAGAIN)) {
			*eof = 1;
			break;
		}
		if (clock_mono() > end)
			break;
		pump(r, 0.02);
	}
	return got;
}

/* The gateway through the session's one connection (runner_proto.h,
 * "Gateway streams"): no connection to the door for it. */
static void session_gateway(struct runner *r, int door_l, int gw)
{
	char *bridge = testlib_fmt("%s/bridge", dir);
	mkdir(bridge, 0700);
	int bl = bridge_listen(bridge, gw);
	char buf[64] = "";
	int eof;
	/* Before paddock says where the gateway is: refused, the agent's
	 * connection closed, the session alive. */
	int c = connect_port(gw);
	(void)!write(c, "early", 5);
	read_pumped(r, c, buf, sizeof buf, 5, &eof);
	ok(eof && accept_within(bl, 0) < 0 && runner_fault(r) == RUNNER_OK,
	   "a gateway connection before paddock was told of a gateway is closed; the session goes on");
	close(c);

	int ports[] = { gw };
	runner_gateway(r, bridge, ports, 1);
	c = connect_port(gw);
	(void)!write(c, "ping", 4);
	shutdown(c, SHUT_WR);
	int g = accept_pumped(r, bl, 5);
	size_t n = g >= 0 ? read_pumped(r, g, buf, sizeof buf, 5, &eof) : 0;
	ok(g >= 0 && n == 4 && !memcmp(buf, "ping", 4) && eof,
	   "a connection to the gateway port reaches the gateway's bridge socket through the "
	   "session: its bytes, then its half-close");
	(void)!write(g, "pong:ping", 9);
	memset(buf, 0, sizeof buf);
	n = read_pumped(r, c, buf, 9, 5, &eof);
	ok(n == 9 && !strcmp(buf, "pong:ping"), "the gateway's answer reaches the half-closed client");
	shutdown(g, SHUT_WR);
	n = read_pumped(r, c, buf, 1, 5, &eof);
	ok(n == 0 && eof, "and the gateway's half-close reaches it too (EOF)");
	close(g);
	close(c);
	pump(r, 0.2);
	ok(runner_streams(r) == 0, "the stream is gone at both ends");

	/* A stream is the runner's own, not a process: a fresh RUN leaves it. */
	c = connect_port(gw);
	g = accept_pumped(r, bl, 5);
	char out[4096];
	char *t[] = { "true", NULL };
	ok(g >= 0 && run(r, t, RP_RUN_FRESH, out) == 0, "a fresh RUN while a stream is open");
	(void)!write(c, "after", 5);
	memset(buf, 0, sizeof buf);
	ok(read_pumped(r, g, buf, 5, 5, &eof) == 5 && !strcmp(buf, "after"),
	   "the stream still carries the client's bytes");
	(void)!write(g, "back", 4);
	memset(buf, 0, sizeof buf);
	ok(read_pumped(r, c, buf, 4, 5, &eof) == 4 && !strcmp(buf, "back"), "and the gateway's");
	close(g);
	read_pumped(r, c, buf, sizeof buf, 5, &eof);
	ok(eof, "the gateway's close ends the client's connection");
	close(c);
	ok(accept_within(door_l, 0.2) < 0,
	   "and none of it made a connection to the front door: the session's one carried it all");
	close(bl);
}

/* One pod's life: probes that refuse, the runner's connection and
 * its preamble, a session over it, the gateway relays, the end. */
static void test_session(void)
{
	int door_port, gw = free_port(), closed = free_port();
	int door_l = listen_at(0, &door_port);
	token_set("tok.one-A_1\n", 12);
	char *probe = testlib_fmt("127.0.0.1:%d,[::1]:%d,metadata.internal:80", closed, closed);
	char *k8s_port = testlib_fmt("KUBERNETES_SERVICE_PORT=%d", closed);
	char **env = pod_env(door_port, "pdk-t1-task-1", testlib_fmt("%d", gw), probe, k8s_port);
	char *host = "KUBERNETES_SERVICE_HOST=127.0.0.1";
	int n = 0;
	while (env[n])
		n++;
	env[n] = host;
	/* The container's memory cgroup, as a pod's runner reads it. */
	char *events = testlib_fmt("%s/memory.events", dir);
	testlib_write_file(events, "low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n");
	env[n + 1] = testlib_fmt("PADDOCK_RUNNER_MEMORY_EVENTS=%s", events);
	env[n + 2] = NULL;
	pid_t pid = runner_start_env(env, NULL, -1, 0);
	int fd = accept_within(door_l, 5);
	ok(fd >= 0, "targets that refuse let the runner go on: it dials the door");
	ok(fd >= 0 && preamble_is(fd, "PADDOCK-DOOR 1 runner pdk-t1-task-1 0\ntok.one-A_1\n"),
	   "its preamble, byte for byte: kind runner, the pod, port 0, the token without its newline");
	ok(fd >= 0 && quiet(fd, 0.2), "and nothing after it before paddock's HELLO");
	struct err e = {{0}};
	struct runner *r = fd >= 0 ? runner_open(fd, clock_mono() + 10, &e) : NULL;
	ok(r != NULL, "paddock's client opens a session on that connection %s", r ? "" : e.msg);
	if (!r) {
		runner_exit(pid, 0);
		close(door_l);
		return;
	}
	char out[4096];
	char *echo[] = { "echo", "hello", "from", "the", "pod", NULL };
	int rc = run(r, echo, 0, out);
	ok(rc == 0 && strcmp(out, "hello from the pod\n") == 0,
	   "a RUN of echo: '%.*s'", (int)strcspn(out, "\n"), out);
	char *envp[] = { "env", NULL };
	ok(run(r, envp, RP_RUN_FRESH, out) == 0 && !strstr(out, "tok.") && !strstr(out, "PADDOCK"),
	   "a RUN's environment is its own: no token, none of the pod's variables");
	session_files(r);
	session_gateway(r, door_l, gw);
	/* The OOM killer kills a command while the runner lives: the kubelet
	 * says nothing (it reports only its container's first process), the
	 * cgroup's count does. */
	static char *penv[] = { "PATH=/usr/local/bin:/usr/bin:/bin", NULL };
	char *oom[] = { "sh", "-c", testlib_fmt("printf 'oom 2\\noom_kill 2\\n' >%s; kill -9 $$", events), NULL };
	char *calm[] = { "true", NULL };
	struct runner_cmd oc = { .argv = oom, .env = penv, .flags = RP_RUN_FRESH };
	struct runner_cmd cc = { .argv = calm, .env = penv, .flags = RP_RUN_FRESH };
	struct runner_end oe, ce;
	struct err re = {{0}};
	int orc = runner_run(r, &oc, clock_mono() + 10, &oe, &re);
	ok(orc == 0 && oe.how == RP_END_SIGNALED && (oe.hit & RP_HIT_MEMORY),
	   "a command the OOM killer killed (the cgroup's oom_kill went up): its END says the memory "
	   "limit was hit (hit %u)", oe.hit);
	int crc = runner_run(r, &cc, clock_mono() + 10, &ce, &re);
	ok(crc == 0 && !(ce.hit & RP_HIT_MEMORY), "the next command, with no new kill, does not (hit %u)",
	   ce.hit);
	runner_close(r);
	ok(exited(runner_exit(pid, EXIT_WAIT_S), 0), "the session's end ends the runner (status 0)");
	char *err = runner_err();
	ok(strstr(err, "not probed: \"metadata.internal:80\"") != NULL,
	   "a probe target by name is said to be left out (no DNS in a pod)");
	ok(!strstr(err, "tok."), "no token on stderr");
	ok(accept_within(door_l, 0.05) < 0, "no other connection reached the door");
	close(door_l);
}

/* A probe target that answers: a fault connection naming it, exit 3,
 * nothing else. */
static void test_probe_fault(void)
{
	int door_port, open_port, closed = free_port();
	int door_l = listen_at(0, &door_port), target = listen_at(0, &open_port);
	token_set("tok.fault\n", 10);
	char **env = pod_env(door_port, "pdk-t2-task-1", NULL,
	                     testlib_fmt("127.0.0.1:%d,127.0.0.1:%d", closed, open_port), NULL);
	pid_t pid = runner_start_env(env, NULL, -1, 0);
	int fd = accept_within(door_l, 5);
	char *want = testlib_fmt("PADDOCK-DOOR 1 fault pdk-t2-task-1 0\ntok.fault\nthe pod reached "
	                         "127.0.0.1:%d, which the NetworkPolicies must close\n", open_port);
	ok(fd >= 0 && preamble_is(fd, want), "a probe target that answers: a fault connection names it");
	ok(fd >= 0 && quiet(fd, 2), "and the runner closes it after the message");
	int wst;
	clock_sleep(0.3);
	ok(waitpid(pid, &wst, WNOHANG) == 0,
	   "it waits for paddock's end of the connection before it exits (a relay may hold the message)");
	/* paddock closes it once it has the message: then the runner goes. */
	if (fd >= 0)
		close(fd);
	ok(exited(runner_exit(pid, EXIT_WAIT_S), 3), "then exits 3");
	ok(accept_within(door_l, 0.05) < 0, "without a runner connection");
	runner_err();

	/* The API server's service address, from the kubelet's variables. */
	char *host = "KUBERNETES_SERVICE_HOST=127.0.0.1";
	env = pod_env(door_port, "pdk-t2-task-2", NULL, "", host);
	int n = 0;
	while (env[n])
		n++;
	env[n] = testlib_fmt("KUBERNETES_SERVICE_PORT=%d", open_port);
	env[n + 1] = NULL;
	pid = runner_start_env(env, NULL, -1, 0);
	fd = accept_within(door_l, 5);
	want = testlib_fmt("PADDOCK-DOOR 1 fault pdk-t2-task-2 0\ntok.fault\nthe pod reached "
	                   "127.0.0.1:%d, which the NetworkPolicies must close\n", open_port);
	ok(fd >= 0 && preamble_is(fd, want), "the API server's service address is probed too");
	if (fd >= 0)
		close(fd);
	fd = -1;
	ok(exited(runner_exit(pid, EXIT_WAIT_S), 3), "and answering is a fault there too (status 3)");
	if (fd >= 0)
		close(fd);
	ok(strstr(runner_err(), "the pod reached") != NULL, "the fault is on stderr as well");
	close(target);
	close(door_l);
}

/* Without dial mode: no probe and no dial, whatever the environment. */
static void test_no_dial(void)
{
	int door_port, open_port;
	int door_l = listen_at(0, &door_port), target = listen_at(0, &open_port);
	token_set("tok.fd\n", 7);
	char *probe = testlib_fmt("127.0.0.1:%d", open_port);
	for (int with_door = 0; with_door < 2; with_door++) {
		int sv[2];
		socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv);
		char **env = pod_env(with_door ? door_port : 0, "pdk-t3-task-1", NULL, probe, NULL);
		pid_t pid = runner_start_env(env, NULL, sv[1], with_door ? 5 : 3);
		close(sv[1]);
		struct err e = {{0}};
		struct runner *r = runner_open(sv[0], clock_mono() + 10, &e);
		char out[4096];
		char *t[] = { "true", NULL };
		ok(r && run(r, t, 0, out) == 0, "%s: the session is on the descriptor",
		   with_door ? "--fd 5 with PADDOCK_FRONT_DOOR set" : "no PADDOCK_FRONT_DOOR");
		runner_close(r);
		ok(exited(runner_exit(pid, EXIT_WAIT_S), 0), "and ends with it");
		ok(accept_within(target, 0.05) < 0 && accept_within(door_l, 0.05) < 0,
		   "nothing was probed or dialed");
	}
	runner_err();
	pid_t pid = runner_start_env(pod_env(0, "pdk-t3-task-2", NULL, probe, NULL), "--dial", -1, 0);
	ok(exited(runner_exit(pid, EXIT_WAIT_S), 2) && strstr(runner_err(), "PADDOCK_FRONT_DOOR is not"),
	   "--dial without PADDOCK_FRONT_DOOR: status 2, and why");
	ok(accept_within(target, 0.05) < 0, "nothing probed then either");
	close(target);
	close(door_l);
}

/* A front door that comes late is waited for; one that never comes ends
 * the runner within the dial time (both at once: the test waits once). */
static void test_retries(void)
{
	int door_port = free_port(), never_port = free_port();
	token_set("tok.late\n", 9);
	char **env = pod_env(never_port, "pdk-t4-task-2", NULL, NULL, NULL);
	int n = 0;
	while (env[n])
		n++;
	env[n - 1] = "PADDOCK_RUNNER_DIAL_SECONDS=1";
	double t0 = clock_mono();
	pid_t never = runner_start_env(env, NULL, -1, 0);
	pid_t pid = runner_start_env(pod_env(door_port, "pdk-t4-task-1", NULL, NULL, NULL), NULL, -1, 0);
	struct timespec ts = { 1, 0 };
	nanosleep(&ts, NULL);
	int door_l = listen_at(door_port, NULL);
	int fd = accept_within(door_l, 5);
	ok(fd >= 0 && preamble_is(fd, "PADDOCK-DOOR 1 runner pdk-t4-task-1 0\ntok.late\n"),
	   "a front door that listens 1 s late is dialed again until it answers");
	if (fd >= 0)
		close(fd);
	/* Closed before paddock said HELLO: a proxy whose backend is not up,
	 * not a session's end. */
	int again = accept_within(door_l, 5);
	ok(again >= 0 && preamble_is(again, "PADDOCK-DOOR 1 runner pdk-t4-task-1 0\ntok.late\n"),
	   "a front door that closes the connection before HELLO is dialed again");
	if (again >= 0)
		close(again);
	runner_exit(pid, 0);
	close(door_l);

	int st = runner_exit(never, 5);
	double took = clock_mono() - t0;
	ok(exited(st, 3) && took >= 0.9, "a front door that never comes: the runner gives up "
	   "after its dial time, status 3 (%#x after %.1f s)", st, took);
	char *want = testlib_fmt("cannot reach the front door at 127.0.0.1:%d: Connection refused",
	                         never_port);
	ok(strstr(runner_err(), want) != NULL, "and says why on stderr: %s", want);
}

/* Tokens the runner refuses: no connection at all, status 3. */
static void refused_token(const char *what, const char *content, size_t len, const char *says)
{
	int door_port;
	int door_l = listen_at(0, &door_port);
	token_set(content, len);
	pid_t pid = runner_start_env(pod_env(door_port, "pdk-t5-task-1", NULL, NULL, NULL), NULL, -1, 0);
	ok(exited(runner_exit(pid, EXIT_WAIT_S), 3), "%s: the runner exits 3", what);
	ok(accept_within(door_l, 0.05) < 0, "without any connection to the door");
	char *err = runner_err();
	ok(strstr(err, says) && !strstr(err, "zzzz"), "its message says why, never the token: %.*s",
	   (int)strcspn(err, "\n"), err);
	close(door_l);
}

static void test_tokens(void)
{
	size_t big = 100 * 1024;
	char *t = malloc(big + 1);
	memset(t, 'z', big);
	refused_token("a token file of 100 KiB", t, big, "longer than 8192 bytes");
	refused_token("a token with a space", "zzzz zzzz\n", 10, "has a character other than");
	refused_token("an empty token file", "\n", 1, "is empty");

	/* The longest token there may be still fits the preamble. */
	memset(t, 'z', 8192);
	t[8192] = '\n';
	int door_port;
	int door_l = listen_at(0, &door_port);
	token_set(t, 8193);
	pid_t pid = runner_start_env(pod_env(door_port, "pdk-t5-task-2", NULL, NULL, NULL), NULL, -1, 0);
	int fd = accept_within(door_l, 5);
	t[8192] = 0;
	char *want = testlib_fmt("PADDOCK-DOOR 1 runner pdk-t5-task-2 0\n%s\n", t);
	ok(fd >= 0 && preamble_is(fd, want) && quiet(fd, 0.2) && strlen(want) <= 10240,
	   "a token of 8192 bytes is sent whole, the preamble %zu bytes (at most 10240)",
	   strlen(want));
	if (fd >= 0)
		close(fd);
	runner_exit(pid, 0);
	close(door_l);
	free(t);
	runner_err();
}

/* At most RP_STREAMS_MAX streams at once: the next connection waits in
 * the listen queue until one ends; and none reaches the door. */
static void test_streams_limit(void)
{
	enum { MAX = RP_STREAMS_MAX };
	int door_port, gw = free_port();
	int door_l = listen_at(0, &door_port);
	token_set("tok.many\n", 9);
	pid_t pid = runner_start_env(pod_env(door_port, "pdk-t6-task-1", testlib_fmt("%d", gw), NULL,
	                                     NULL), NULL, -1, 0);
	int fd = accept_within(door_l, 5);
	struct err e = {{0}};
	struct runner *r = fd >= 0 && preamble_is(fd, "PADDOCK-DOOR 1 runner pdk-t6-task-1 0\ntok.many\n") ?
	                   runner_open(fd, clock_mono() + 10, &e) : NULL;
	char *bridge = testlib_fmt("%s/bridge-many", dir);
	mkdir(bridge, 0700);
	int bl = bridge_listen(bridge, gw), ports[] = { gw };
	if (r)
		runner_gateway(r, bridge, ports, 1);
	int client[MAX + 1], far[MAX + 1], got = 0;
	for (int i = 0; i <= MAX; i++) {
		client[i] = r ? connect_port(gw) : -1;
		if (client[i] >= 0)
			(void)!write(client[i], &i, sizeof i);
		far[got] = client[i] >= 0 ? accept_pumped(r, bl, i < MAX ? 5 : 0.5) : -1;
		if (far[got] >= 0)
			got++;
	}
	ok(got == MAX, "%d connections at once: %d are streams, the next waits", MAX + 1, got);
	/* The first client leaves and the gateway closes its side: the
	 * stream ends and makes room. */
	int first = -1, eof;
	for (int i = 0; i < got && first < 0; i++) {
		int who = -1;
		if (read_pumped(r, far[i], (char *)&who, sizeof who, 5, &eof) == sizeof who && who == 0)
			first = i;
	}
	if (client[0] >= 0)
		close(client[0]);
	if (first >= 0) {
		close(far[first]);
		far[first] = -1;
	}
	int last = first >= 0 ? accept_pumped(r, bl, 5) : -1;
	ok(last >= 0, "when one stream ends, the waiting connection becomes one");
	if (last >= 0)
		close(last);
	ok(accept_within(door_l, 0.1) < 0, "no connection of them reached the front door");
	for (int i = 0; i < got; i++)
		if (far[i] >= 0)
			close(far[i]);
	for (int i = 1; i <= MAX; i++)
		if (client[i] >= 0)
			close(client[i]);
	runner_close(r);
	ok(exited(runner_exit(pid, EXIT_WAIT_S), 0), "and the runner ends with its session");
	close(bl);
	close(door_l);
	runner_err();
}

/* A host that lies about the streams: the runner ends the session. */
static void test_host_lies(void)
{
	int door_port, gw = free_port();
	int door_l = listen_at(0, &door_port);
	token_set("tok.lie\n", 8);
	pid_t pid = runner_start_env(pod_env(door_port, "pdk-t7-task-1", testlib_fmt("%d", gw), NULL,
	                                     NULL), NULL, -1, 0);
	int fd = accept_within(door_l, 5);
	struct err e = {{0}};
	struct runner *r = fd >= 0 && preamble_is(fd, "PADDOCK-DOOR 1 runner pdk-t7-task-1 0\ntok.lie\n") ?
	                   runner_open(fd, clock_mono() + 10, &e) : NULL;
	struct rp_msg d = { .type = RP_DATA, .id = 99, .data = (const unsigned char *)"x", .len = 1 };
	struct rp_buf b = { 0 };
	rp_encode(&b, &d);
	if (r)
		(void)!write(runner_fd(r), b.data, b.len);
	rp_buf_free(&b);
	ok(r && runner_ping(r, clock_mono() + 5, &e) < 0 && runner_fault(r) == RUNNER_DIED,
	   "DATA from paddock for a stream the runner never opened ends the session");
	runner_close(r);
	ok(exited(runner_exit(pid, EXIT_WAIT_S), 2), "the runner exits 2, a protocol error");
	close(door_l);
	runner_err();
}

int main(void)
{
	const char *top = getenv("top_builddir");
	signal(SIGPIPE, SIG_IGN);
	/* The installed runner (static, no sanitizers), then the same code
	 * built as the tests are. */
	const char *bins[] = { testlib_fmt("%s/paddock-runner", top ? top : "."),
	                       testlib_fmt("%s/tests/paddock-runner-checked", top ? top : ".") };
	for (int i = 0; i < 2; i++) {
		runner_bin = bins[i];
		printf("# %s\n", runner_bin);
		dir = testlib_tmpdir("runner-dial");
		test_session();
		test_probe_fault();
		test_no_dial();
		test_retries();
		test_tokens();
		test_streams_limit();
		test_host_lies();
	}
	testlib_end();
	return tap_done();
}
