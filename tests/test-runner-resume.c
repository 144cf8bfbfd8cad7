/* runner-resume: a runner session that outlives its connection.
 *
 * The link below the frames (runner_link.h) on its own: two ends over
 * socketpairs that are swapped again and again mid-stream (bytes in
 * flight lost, frames cut in two), every frame delivered once and in
 * order; the counts an end refuses (each lie); the bytes held, bounded by
 * the acknowledgements.  Then paddock's client (runner.h) with the real
 * runner in dial mode against a front door this test plays on 127.0.0.1:
 * a run whose connection is cut twice while it streams output ends with
 * its output whole, no gap and no repeat; a cut that outlasts the resume
 * time fails the session with how long the connection was lost; a resume
 * whose count paddock does not hold is a lie; and a runner that never
 * acknowledges holds paddock at RL_HOLD_MAX bytes. */
#include "autoconfig.h"
#include "runner.h"
#include "runner_link.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "tap.h"
#include "testlib.h"

static const char *runner_bin;
static char *dir;

/* ---- the link alone ---- */

static void pair(int sv[2])
{
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) < 0) {
		printf("Bail out! socketpair: %s\n", strerror(errno));
		exit(1);
	}
}

/* One end of the link test: what it sent, and what it checked of what
 * came (every frame an OUTPUT of id 1 whose offset follows the last and
 * whose bytes are (offset + i) % 251). */
struct end {
	struct rl l;
	struct rp_buf in;
	uint64_t sent, got;
	unsigned frames_got;
	int bad;
	uint32_t seed;
};

static uint32_t next_rand(uint32_t *s)
{
	*s = *s * 1103515245u + 12345u;
	return *s >> 8;
}

/* Queues frames while less than hold is held, until total is sent. */
static void end_send(struct end *e, uint64_t total, size_t hold)
{
	static unsigned char data[RP_CHUNK];
	while (e->sent < total && rl_held(&e->l) < hold) {
		size_t n = 1 + next_rand(&e->seed) % RP_CHUNK;
		if (n > total - e->sent)
			n = (size_t)(total - e->sent);
		for (size_t i = 0; i < n; i++)
			data[i] = (unsigned char)((e->sent + i) % 251);
		struct rp_msg m = { .type = RP_OUTPUT, .id = 1, .offset = e->sent, .data = data,
		                    .len = n };
		if (rl_send(&e->l, &m) < 0)
			e->bad = 1;
		e->sent += n;
	}
}

/* Checks and drops every whole frame that came. */
static void end_check(struct end *e)
{
	for (;;) {
		uint16_t type;
		const unsigned char *body;
		size_t blen;
		long fl = rp_frame(e->in.data, e->in.len, &type, &body, &blen);
		if (fl <= 0) {
			e->bad |= fl < 0;
			return;
		}
		struct rp_msg m;
		if (rp_decode(type, body, blen, &m) < 0 || m.type != RP_OUTPUT || m.offset != e->got) {
			if (!e->bad)
				printf("# a frame at %llu, expected %llu\n", (unsigned long long)m.offset,
				       (unsigned long long)e->got);
			e->bad = 1;
		}
		for (size_t i = 0; i < m.len; i++)
			if (m.data[i] != (unsigned char)((m.offset + i) % 251))
				e->bad = 1;
		e->got += m.len;
		e->frames_got++;
		rp_msg_clear(&m);
		rp_buf_consume(&e->in, (size_t)fl);
	}
}

/* Writes, then reads at most max bytes (a frame often comes in part). */
static int end_step(struct end *e, int fd, size_t max)
{
	if (rl_write(&e->l, fd) < 0 && errno != EPIPE && errno != ECONNRESET)
		return -1;
	unsigned char buf[8192];
	ssize_t n = read(fd, buf, max < sizeof buf ? max : sizeof buf);
	if (n > 0 && rl_feed(&e->l, buf, (size_t)n, &e->in) != RL_OK)
		return -1;
	end_check(e);
	return 0;
}

static void test_link_swapped(void)
{
	struct end a = { .seed = 1 }, b = { .seed = 2 };
	rl_init(&a.l, 1, 1);
	rl_init(&b.l, 1, 1);
	const uint64_t ta = 6u << 20, tb = 1u << 20;
	int sv[2];
	pair(sv);
	unsigned cuts = 0, steps = 0;
	size_t most = 0;
	uint32_t r = 7;
	while ((a.got < tb || b.got < ta) && steps < 200000) {
		end_send(&a, ta, 1u << 20);
		end_send(&b, tb, 1u << 20);
		size_t max = 1 + next_rand(&r) % 9000;
		if (end_step(&a, sv[0], max) < 0 || end_step(&b, sv[1], max) < 0) {
			a.bad = 1;
			break;
		}
		if (rl_held(&a.l) > most)
			most = rl_held(&a.l);
		/* A cut now and then: what is in the old pair is lost. */
		if (++steps % 31 == 0 && cuts < 40) {
			close(sv[0]);
			close(sv[1]);
			pair(sv);
			rl_reconnect(&a.l);
			rl_reconnect(&b.l);
			cuts++;
		}
	}
	ok(!a.bad && !b.bad, "every frame came once, in order, its bytes whole, across %u swapped "
	   "connections", cuts);
	ok(cuts >= 20, "the connection was swapped mid-stream %u times", cuts);
	is_int(b.got, ta, "one way: every byte sent came (%u frames)", b.frames_got);
	is_int(a.got, tb, "the other way too (%u frames)", a.frames_got);
	ok(most <= (1u << 20) + RP_FRAME_MAX, "held at most what the sender queued (%zu bytes)", most);
	/* Once the acknowledgements came: RL_ACK_EVERY and a frame at most. */
	for (int i = 0; i < 50; i++) {
		end_step(&a, sv[0], 8192);
		end_step(&b, sv[1], 8192);
	}
	ok(rl_held(&a.l) <= RL_ACK_EVERY + RP_HEADER + 16 + RP_CHUNK,
	   "what the other end acknowledged is let go (%zu bytes held)", rl_held(&a.l));
	ok(a.l.out.cap <= 4 * RL_ACK_EVERY, "and the burst's buffer is not kept (%zu bytes)",
	   a.l.out.cap);
	is_int(a.l.resumes, cuts, "each end counts its resumes");
	close(sv[0]);
	close(sv[1]);
	rl_free(&a.l);
	rl_free(&b.l);
	rp_buf_free(&a.in);
	rp_buf_free(&b.in);
}

/* Three frames of 124 bytes each sent and written on fd. */
#define F124 (RP_HEADER + 4 + 8 + 4 + 100)
static void link_three(struct rl *l, int fd)
{
	unsigned char data[100] = { 0 };
	rl_init(l, 1, 1);
	for (int i = 0; i < 3; i++) {
		struct rp_msg m = { .type = RP_OUTPUT, .id = 1, .offset = 100u * i, .data = data,
		                    .len = 100 };
		rl_send(l, &m);
	}
	rl_write(l, fd);
}

static enum rl_err link_told(struct rl *l, enum rp_type type, uint64_t count)
{
	struct rp_buf b = { 0 }, in = { 0 };
	struct rp_msg m = { .type = type, .offset = count };
	rp_encode(&b, &m);
	enum rl_err rc = rl_feed(l, b.data, b.len, &in);
	rp_buf_free(&b);
	rp_buf_free(&in);
	return rc;
}

static void test_link_lies(void)
{
	int sv[2];
	pair(sv);
	struct rl l;
	link_three(&l, sv[0]);
	is_int(rl_held(&l), 3 * F124, "what was written is held until acknowledged");
	is_int(link_told(&l, RP_RECEIVED, 3 * F124 + 1), RL_BAD_ACK,
	       "an acknowledgement past what was written is a lie");
	is_int(link_told(&l, RP_RECEIVED, F124 + 1), RL_BAD_ACK,
	       "an acknowledgement inside a frame is a lie");
	is_int(link_told(&l, RP_RECEIVED, F124), RL_OK, "one at a frame's end is taken");
	is_int(rl_held(&l), 2 * F124, "and what it covers is let go");
	is_int(link_told(&l, RP_RECEIVED, F124 - 1), RL_BAD_ACK, "a count that goes back is a lie");
	is_int(link_told(&l, RP_RESUME, F124), RL_STRAY_RESUME,
	       "a RESUME on a connection that did not resume is a lie");
	rl_reconnect(&l);
	is_int(link_told(&l, RP_RECEIVED, 2 * F124), RL_NO_RESUME,
	       "a resumed connection must start with RESUME, not RECEIVED");
	struct rl m;
	link_three(&m, sv[0]);
	rl_reconnect(&m);
	struct rp_buf out = { 0 }, in = { 0 };
	struct rp_msg o = { .type = RP_PONG, .token = 1 };
	rp_encode(&out, &o);
	is_int(rl_feed(&m, out.data, out.len, &in), RL_NO_RESUME, "nor with a frame of the session");
	is_int(in.len, 0, "which is not passed on");
	is_int(link_told(&l, RP_RESUME, 3 * F124 + F124), RL_BAD_RESUME,
	       "a RESUME past what was sent is a lie");
	is_int(link_told(&l, RP_RESUME, 0), RL_BAD_RESUME,
	       "a RESUME from before what it acknowledged (let go) is a lie");
	is_int(link_told(&l, RP_RESUME, 2 * F124 - 3), RL_BAD_RESUME,
	       "a RESUME from inside a frame is a lie");
	out.len = 0;
	struct rp_msg bad = { .type = RP_PING, .token = 5 };
	rp_encode(&out, &bad);
	out.data[5] = RP_RECEIVED;   /* a RECEIVED whose count is 4 bytes */
	out.data[3] = 4;
	out.len = RP_HEADER + 4;
	rl_free(&m);
	rl_init(&m, 1, 1);
	is_int(rl_feed(&m, out.data, out.len, &in), RL_BAD_FRAME, "a malformed RECEIVED is a lie");
	rl_free(&m);
	/* An honest resume: from the other's count, everything after it. */
	char drain[4096];
	while (read(sv[1], drain, sizeof drain) > 0)
		;
	is_int(link_told(&l, RP_RESUME, 2 * F124), RL_OK, "a RESUME at a frame it holds is taken");
	rl_write(&l, sv[0]);
	ssize_t n = read(sv[1], drain, sizeof drain);
	uint16_t type;
	const unsigned char *body;
	size_t blen;
	ok(n == (ssize_t)(RP_HEADER + 8 + F124) && rp_frame((unsigned char *)drain, (size_t)n, &type,
	                                                    &body, &blen) == RP_HEADER + 8 &&
	   type == RP_RESUME, "its own RESUME goes first, then the one frame not received (%zd bytes)", n);
	rl_free(&l);
	rp_buf_free(&out);
	rp_buf_free(&in);
	/* Without keep nothing is held once written (bwrap: no resume). */
	struct rl k;
	rl_init(&k, 0, 1);
	unsigned char data[100] = { 0 };
	struct rp_msg d = { .type = RP_OUTPUT, .id = 1, .data = data, .len = 100 };
	rl_send(&k, &d);
	rl_write(&k, sv[0]);
	is_int(rl_held(&k), 0, "without keep what is written is let go at once");
	rl_free(&k);
	close(sv[0]);
	close(sv[1]);
}

/* ---- paddock's client and the real runner ---- */

static int listen_any(int *port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof a;
	int one = 1;
	/* Its port may be listened on again (test_time_while_lost) while its
	 * connections linger in TIME_WAIT. */
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(fd, 16) < 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &len) < 0) {
		printf("Bail out! listen: %s\n", strerror(errno));
		exit(1);
	}
	*port = ntohs(a.sin_port);
	return fd;
}

/* Whether fd's next bytes are exactly want (within 5 s). */
static int read_exactly(int fd, const char *want)
{
	size_t len = strlen(want), got = 0;
	char buf[256];
	double end = clock_mono() + 5;
	while (got < len && len < sizeof buf) {
		struct pollfd p = { fd, POLLIN, 0 };
		if (poll(&p, 1, (int)((end - clock_mono()) * 1000) + 1) <= 0)
			return 0;
		ssize_t n = read(fd, buf + got, len - got);
		if (n <= 0)
			return 0;
		got += (size_t)n;
	}
	return got == len && memcmp(buf, want, len) == 0;
}

#define POD "pdk-t1-task-1"
#define PREAMBLE "PADDOCK-DOOR 1 runner " POD " 0\ntok-1\n"

/* The test's front door: each connection's preamble read; refuse: closed
 * instead; fake: the fd returned instead of the runner's. */
struct door_t {
	int lfd, refuse, fake, taken;
};

static int door_next(void *arg)
{
	struct door_t *d = arg;
	int fd = accept4(d->lfd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		return -1;
	if (!read_exactly(fd, PREAMBLE) || d->refuse || d->fake >= 0) {
		close(fd);
		fd = d->fake;
		d->fake = -1;
		return fd;
	}
	d->taken++;
	return fd;
}

static pid_t runner_spawn(int port, const char *resume_secs)
{
	pid_t pid = fork();
	if (pid == 0) {
		int err = open(testlib_fmt("%s/err", dir), O_WRONLY | O_CREAT | O_APPEND, 0600);
		dup2(err, 2);
		char *env[] = { "PATH=/usr/local/bin:/usr/bin:/bin",
		                testlib_fmt("PADDOCK_FRONT_DOOR=127.0.0.1:%d", port),
		                testlib_fmt("PADDOCK_TOKEN_FILE=%s/token", dir),
		                "PADDOCK_POD=" POD, "PADDOCK_RUNNER_DIAL_SECONDS=5",
		                testlib_fmt("PADDOCK_RUNNER_RESUME_SECONDS=%s", resume_secs), NULL };
		char *argv[] = { (char *)runner_bin, NULL };
		execve(runner_bin, argv, env);
		_exit(127);
	}
	return pid;
}

static int runner_status(pid_t pid, double seconds)
{
	int st;
	for (double end = clock_mono() + seconds; clock_mono() < end;) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		struct timespec ts = { 0, 10 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	kill(pid, SIGTERM);
	waitpid(pid, &st, 0);
	return -1;
}

static char *runner_err(void)
{
	char *path = testlib_fmt("%s/err", dir);
	char *s = testlib_slurp(path);
	unlink(path);
	return testlib_keep(s ? s : calloc(1, 1));
}

static void collect(void *arg, uint32_t id, uint64_t offset, const char *data, size_t len)
{
	(void)id;
	struct rp_buf *b = arg;
	if (offset != b->len)
		printf("# output at %llu after %zu bytes\n", (unsigned long long)offset, b->len);
	rp_buf_add(b, data, len);
}

/* A session with the runner through the test's door: r, or NULL. */
static struct runner *session(struct door_t *d, pid_t *pid, const char *resume_secs,
                              double paddock_secs)
{
	int port;
	d->lfd = listen_any(&port);
	d->refuse = d->taken = 0;
	d->fake = -1;
	*pid = runner_spawn(port, resume_secs);
	struct pollfd p = { d->lfd, POLLIN, 0 };
	int fd = poll(&p, 1, 5000) == 1 ? accept4(d->lfd, NULL, NULL, SOCK_CLOEXEC) : -1;
	struct err e = {{0}};
	struct runner *r = fd >= 0 && read_exactly(fd, PREAMBLE) ?
	                   runner_open(fd, clock_mono() + 10, &e) : NULL;
	if (!r)
		printf("# no session: %s\n", e.msg);
	else
		runner_set_resume(r, d->lfd, paddock_secs, door_next, d);
	return r;
}

/* Starts sh -c script; steps until it ends, cutting the connection once
 * the output passed each of cut_at[] (n of them). */
static int run_cut(struct runner *r, const char *script, const size_t *cut_at, int n,
                   struct rp_buf *out, struct runner_end *end, struct err *e)
{
	static char *env[] = { "PATH=/usr/local/bin:/usr/bin:/bin", NULL };
	char *argv[] = { "sh", "-c", (char *)script, NULL };
	struct runner_cmd cmd = { .argv = argv, .env = env, .output = collect, .arg = out };
	uint32_t id = runner_start(r, &cmd, e);
	int cut = 0;
	double until = clock_mono() + 30;
	while (id && clock_mono() < until) {
		int st = runner_step(r, id, clock_mono() + 0.05, e);
		if (st < 0)
			return -1;
		if (st == 1)
			break;
		if (cut < n && out->len >= cut_at[cut] && runner_fd(r) >= 0) {
			/* Both ends see the connection end, as when a proxy
			 * between them goes. */
			shutdown(runner_fd(r), SHUT_RDWR);
			cut++;
		}
	}
	return id ? runner_wait(r, id, clock_mono() + 10, end, e) : -1;
}

static void test_resumed(void)
{
	struct door_t d;
	pid_t pid;
	struct runner *r = session(&d, &pid, "10", 15);
	ok(r != NULL, "a session with the runner in dial mode");
	if (!r)
		return;
	struct rp_buf out = { 0 }, want = { 0 };
	rp_buf_add(&want, "before\n", 7);
	for (int i = 1; i <= 60000; i++) {
		char line[16];
		rp_buf_add(&want, line, (size_t)snprintf(line, sizeof line, "%d\n", i));
	}
	rp_buf_add(&want, "after\n", 6);
	/* Cut while the command pauses after "before" and after half its
	 * lines: what is cut is the session, not a burst in flight only. */
	size_t cuts[] = { 7, 0 };
	for (int i = 1; i <= 30000; i++)
		cuts[1] += (size_t)snprintf(NULL, 0, "%d\n", i);
	cuts[1] += 7;
	struct runner_end end;
	struct err e = {{0}};
	int rc = run_cut(r, "echo before; sleep 0.5; seq 1 30000; sleep 0.5; seq 30001 60000; "
	                 "echo after", cuts, 2, &out, &end, &e);
	ok(rc == 0 && end.how == RP_END_EXITED && end.code == 0,
	   "a run whose connection was cut twice ends as it would have (%s)", e.msg);
	ok(out.len == want.len && !memcmp(out.data, want.data, want.len),
	   "its output whole: %zu of %zu bytes, no gap, no repeat", out.len, want.len);
	is_int(runner_resumes(r), 2, "the session resumed twice");
	is_int(d.taken, 2, "on two new connections through the door, each with the pod's preamble");
	char *out2 = NULL;
	struct rp_buf after = { 0 };
	size_t none[] = { 0 };
	rc = run_cut(r, "echo still here", none, 0, &after, &end, &e);
	out2 = testlib_keep(strndup((char *)after.data ? (char *)after.data : "", after.len));
	ok(rc == 0 && !strcmp(out2, "still here\n"), "and the session goes on: '%.*s'",
	   (int)strcspn(out2, "\n"), out2);
	runner_close(r);
	is_int(runner_status(pid, 5), 0, "its end (BYE) ends the runner, which does not dial again");
	ok(strstr(runner_err(), "resuming the session") != NULL, "the runner said it resumed");
	struct pollfd p = { d.lfd, POLLIN, 0 };
	ok(poll(&p, 1, 200) == 0, "no connection after the session's end");
	close(d.lfd);
	rp_buf_free(&out);
	rp_buf_free(&want);
	rp_buf_free(&after);
}

static void test_outlasted(void)
{
	struct door_t d;
	pid_t pid;
	struct runner *r = session(&d, &pid, "1", 2);
	if (!r) {
		ok(0, "a session");
		return;
	}
	d.refuse = 1;
	struct rp_buf out = { 0 };
	size_t cuts[] = { 7 };
	struct runner_end end;
	struct err e = {{0}};
	double t0 = clock_mono();
	int rc = run_cut(r, "echo before; exec sleep 30", cuts, 1, &out, &end, &e);
	double took = clock_mono() - t0;
	ok(rc < 0 && runner_fault(r) == RUNNER_DIED, "a cut that outlasts the resume time fails the "
	   "session: %s", e.msg);
	ok(strstr(e.msg, "the connection to the pod was lost for 2 s") != NULL,
	   "its message says the connection was lost, and for how long");
	ok(took < 6, "after the resume time, not the run's (%.1f s)", took);
	runner_close(r);
	is_int(runner_status(pid, 5), 3, "the runner gives up too (status 3), its command killed");
	ok(strstr(runner_err(), "not resumed within 1 s") != NULL, "and says why");
	close(d.lfd);
	rp_buf_free(&out);
}

/* A run's time limit is the runner's to keep while its connection is
 * lost: the run is killed on time, not once the session resumed. */
static void test_time_while_lost(void)
{
	struct door_t d;
	pid_t pid;
	struct runner *r = session(&d, &pid, "10", 15);
	if (!r) {
		ok(0, "a session");
		return;
	}
	static char *env[] = { "PATH=/usr/local/bin:/usr/bin:/bin", NULL };
	char *argv[] = { "sh", "-c", "echo $$; exec sleep 30", NULL };
	struct rp_buf out = { 0 };
	struct runner_cmd cmd = { .argv = argv, .env = env, .output = collect, .arg = &out,
	                          .limits = { .time_ms = 1500 } };
	struct err e = {{0}};
	uint32_t id = runner_start(r, &cmd, &e);
	for (double until = clock_mono() + 10;
	     id && !(out.len && out.data[out.len - 1] == '\n') && clock_mono() < until;)
		runner_step(r, id, clock_mono() + 0.05, &e);
	char first[32] = "";
	memcpy(first, out.data ? (char *)out.data : "", out.len < sizeof first - 1 ? out.len : 0);
	pid_t sleeper = atoi(first);
	/* The front door goes away (connections refused: the runner's tries
	 * fail at once) for 3 s; the limit is 1.5 s from the start.  A pipe
	 * stands in for the listener's descriptor, which the session polls. */
	struct sockaddr_in a;
	socklen_t alen = sizeof a;
	getsockname(d.lfd, (struct sockaddr *)&a, &alen);
	int pp[2];
	if (pipe2(pp, O_CLOEXEC) < 0 || dup2(pp[0], d.lfd) < 0) {
		printf("Bail out! pipe: %s\n", strerror(errno));
		exit(1);
	}
	if (runner_fd(r) >= 0)
		shutdown(runner_fd(r), SHUT_RDWR);
	for (double t0 = clock_mono(); clock_mono() < t0 + 3.0;)
		runner_step(r, id, clock_mono() + 0.1, &e);
	ok(sleeper > 0 && kill(sleeper, 0) < 0 && errno == ESRCH,
	   "a run's time limit is kept while the front door cannot be reached: its command (%d) "
	   "was killed before the connection came back", (int)sleeper);
	/* The door again, on its port and descriptor. */
	int one = 1, nl = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	setsockopt(nl, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (nl < 0 || bind(nl, (struct sockaddr *)&a, sizeof a) < 0 || listen(nl, 16) < 0 ||
	    dup2(nl, d.lfd) < 0) {
		printf("Bail out! listen again: %s\n", strerror(errno));
		exit(1);
	}
	close(nl);
	close(pp[0]);
	close(pp[1]);
	struct runner_end end;
	int rc = runner_wait(r, id, clock_mono() + 10, &end, &e);
	ok(rc == 0 && (end.hit & RP_HIT_TIME) && end.how == RP_END_SIGNALED,
	   "once it came back, the run ended with its time limit hit (%s)", e.msg);
	runner_close(r);
	runner_status(pid, 5);
	runner_err();
	close(d.lfd);
	rp_buf_free(&out);
}

static void test_lying_resume(void)
{
	struct door_t d;
	pid_t pid;
	struct runner *r = session(&d, &pid, "1", 10);
	if (!r) {
		ok(0, "a session");
		return;
	}
	int sv[2];
	pair(sv);
	struct rp_buf b = { 0 };
	struct rp_msg m = { .type = RP_RESUME, .offset = 1ull << 40 };
	rp_encode(&b, &m);
	(void)!write(sv[1], b.data, b.len);
	d.fake = sv[0];
	struct rp_buf out = { 0 };
	size_t cuts[] = { 7 };
	struct runner_end end;
	struct err e = {{0}};
	int rc = run_cut(r, "echo before; exec sleep 30", cuts, 1, &out, &end, &e);
	ok(rc < 0 && runner_fault(r) == RUNNER_LIED &&
	   strstr(e.msg, "resumed the session from a count paddock does not hold"),
	   "a resume from a count paddock never sent is a lie: %s", e.msg);
	runner_close(r);
	is_int(runner_status(pid, 5), 3, "the runner, never resumed, gives up");
	runner_err();
	close(sv[1]);
	close(d.lfd);
	rp_buf_free(&out);
	rp_buf_free(&b);
}

/* A runner that greets and then reads everything and acknowledges
 * nothing: how much it read. */
struct silent {
	int fd;
	size_t read;
};

static void *silent_main(void *arg)
{
	struct silent *s = arg;
	static char buf[65536];
	ssize_t n;
	while ((n = read(s->fd, buf, sizeof buf)) > 0)
		__atomic_add_fetch(&s->read, (size_t)n, __ATOMIC_RELAXED);
	return NULL;
}

static void test_bound(void)
{
	char *big = testlib_fmt("%s/big", dir);
	int fd = open(big, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (ftruncate(fd, 12u << 20) < 0)
		printf("# ftruncate: %s\n", strerror(errno));
	for (int resumable = 0; resumable < 2; resumable++) {
		int sv[2];
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
			break;
		struct rp_buf h = { 0 };
		struct rp_msg m = { .type = RP_HELLO, .version = RP_VERSION };
		rp_encode(&h, &m);
		(void)!write(sv[1], h.data, h.len);
		rp_buf_free(&h);
		struct err e = {{0}};
		struct runner *r = runner_open(sv[0], clock_mono() + 5, &e);
		struct silent s = { sv[1], 0 };
		pthread_t t;
		pthread_create(&t, NULL, silent_main, &s);
		if (resumable)
			runner_set_resume(r, -1, 5, door_next, NULL);
		lseek(fd, 0, SEEK_SET);
		int rc = runner_file_put(r, "/tmp/big", 0644, fd, 12u << 20, clock_mono() + 1, &e);
		enum runner_fault fault = runner_fault(r);
		runner_close(r);
		pthread_join(t, NULL);
		size_t got = s.read;
		if (rc < 0)
			printf("# %s\n", e.msg);
		if (resumable)
			ok(rc < 0 && fault == RUNNER_STALLED && got <= RL_HOLD_MAX + RP_FRAME_MAX,
			   "a session that may resume holds at most RL_HOLD_MAX bytes unacknowledged, then "
			   "waits: %zu bytes of 12 MiB sent", got);
		else
			ok(rc < 0 && got >= 12u << 20,
			   "without resume nothing is held: all 12 MiB were sent (%zu)", got);
		close(sv[1]);
	}
	close(fd);
}

int main(void)
{
	const char *top = getenv("top_builddir");
	signal(SIGPIPE, SIG_IGN);
	test_link_swapped();
	test_link_lies();
	const char *bins[] = { testlib_fmt("%s/paddock-runner", top ? top : "."),
	                       testlib_fmt("%s/tests/paddock-runner-checked", top ? top : ".") };
	for (int i = 0; i < 2; i++) {
		runner_bin = bins[i];
		printf("# %s\n", runner_bin);
		dir = testlib_tmpdir("runner-resume");
		testlib_write_file(testlib_fmt("%s/token", dir), "tok-1\n");
		test_resumed();
		test_outlasted();
	test_time_while_lost();
		test_lying_resume();
	}
	test_bound();
	testlib_end();
	return tap_done();
}
