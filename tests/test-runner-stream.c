/* runner-stream: the gateway streams of a runner session
 * (runner_proto.h, "Gateway streams"; runner_stream.h): the frames, the
 * shared logic of both ends glued together in this process (bytes both
 * ways, half-closes, the window, SHUT, the stream freed), each end's
 * checks against a lying peer, and paddock's end (runner.h's
 * runner_gateway) against a fake runner that opens streams to ports not
 * given, too many, or floods past the window.  The real runner's end is
 * test-runner-dial's. */
#include "autoconfig.h"
#include "runner.h"
#include "runner_stream.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "clock.h"
#include "tap.h"
#include "testlib.h"

static char *dir;

static struct rp_buf enc(const struct rp_msg *m)
{
	struct rp_buf b;
	testlib_rp_enc(m, &b);
	return b;
}


static void test_frames(void)
{
	struct rp_msg m;
	struct rp_msg open = { .type = RP_OPEN, .id = 7, .port = 8081 };
	ok(testlib_rp_round_trip(&open, &m) == 0 && m.id == 7 && m.port == 8081, "OPEN comes back");
	struct rp_msg data = { .type = RP_DATA, .id = 7, .data = (const unsigned char *)"a\0b",
	                       .len = 3 };
	/* (m.data points into the frame: kept until checked) */
	struct rp_buf db = enc(&data);
	uint16_t dt;
	const unsigned char *dbody;
	size_t dlen;
	ok(rp_frame(db.data, db.len, &dt, &dbody, &dlen) == (long)db.len &&
	   rp_decode(dt, dbody, dlen, &m) == 0 && m.id == 7 && m.len == 3 && !memcmp(m.data, "a\0b", 3),
	   "DATA's bytes come back");
	rp_buf_free(&db);
	struct rp_msg ack = { .type = RP_ACK, .id = 7, .offset = 1ull << 40 };
	ok(testlib_rp_round_trip(&ack, &m) == 0 && m.offset == 1ull << 40, "ACK's 64-bit offset comes back");
	struct rp_msg shut = { .type = RP_SHUT, .id = 7, .err = ECONNRESET };
	ok(testlib_rp_round_trip(&shut, &m) == 0 && m.err == ECONNRESET, "SHUT's errno comes back");
	ok(!strcmp(rp_type_name(RP_OPEN), "OPEN") && RP_OPEN == 18 && RP_SHUT == 21 && RP_VERSION == 4,
	   "OPEN to SHUT are 18 to 21, the protocol's version 4");

	static unsigned char big[RP_CHUNK + 1];
	struct rp_msg over = { .type = RP_DATA, .id = 1, .data = big, .len = sizeof big };
	struct rp_buf b = { 0 };
	ok(rp_encode(&b, &over) < 0 && errno == EMSGSIZE, "DATA of more than RP_CHUNK is not sent");
	/* ... nor believed: the body made by hand. */
	unsigned char body[8 + RP_CHUNK + 1] = { 0, 0, 0, 1, 0, 1, 0, 1 };
	ok(rp_decode(RP_DATA, body, sizeof body, &m) < 0, "nor decoded");
	unsigned char port0[8] = { 0, 0, 0, 1, 0, 0, 0, 0 };
	unsigned char port_big[8] = { 0, 0, 0, 1, 0, 1, 0, 0 };
	ok(rp_decode(RP_OPEN, port0, 8, &m) < 0 && rp_decode(RP_OPEN, port_big, 8, &m) < 0,
	   "an OPEN of port 0 or 65536 does not decode");
	rp_buf_free(&b);
}

/* ---- both ends in this process ---- */

/* Hands every whole frame of from to set s; the first lie, or RS_OK. */
static enum rs_lie deliver(struct rp_buf *from, struct rs_set *s, struct rp_buf *out,
                           size_t *frames)
{
	enum rs_lie lie = RS_OK;
	for (;;) {
		uint16_t type;
		const unsigned char *body;
		size_t blen;
		long fl = rp_frame(from->data, from->len, &type, &body, &blen);
		if (fl <= 0)
			break;
		struct rp_msg m;
		if (rp_decode(type, body, blen, &m) < 0) {
			printf("# a frame that does not decode\n");
			lie = RS_UNKNOWN;
		}
		if (frames)
			(*frames)++;
		/* The far end answers an OPEN by taking a socket of the
		 * test's (what runner.c does with the bridge's). */
		enum rs_lie l = lie ? lie : m.type == RP_OPEN ? RS_OK : rs_frame(s, &m, out);
		if (l && !lie)
			lie = l;
		rp_msg_clear(&m);
		rp_buf_consume(from, (size_t)fl);
	}
	return lie;
}

/* One turn of a set's poll loop, without waiting. */
static void turn(struct rs_set *s, struct rp_buf *out)
{
	struct pollfd p[RUNNER_STREAMS_MAX];
	size_t n = rs_pollfds(s, p, 1);
	if (n && poll(p, n, 0) > 0)
		rs_step(s, p, out);
}

static void nonblock(int fd)
{
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

/* Reads what fd has now (non-blocking): appended to b; 0 at EOF, 1
 * otherwise. */
static int drain(int fd, struct rp_buf *b)
{
	unsigned char buf[65536];
	for (;;) {
		ssize_t n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
		if (n > 0) {
			rp_buf_add(b, buf, (size_t)n);
			continue;
		}
		return n == 0 ? 0 : 1;
	}
}

static void test_both_ends(void)
{
	struct rs_set run, pad;   /* the runner's end (it opens), paddock's */
	struct rp_buf to_pad = { 0 }, to_run = { 0 };
	rs_init(&run, RP_STREAMS_MAX, 1);
	rs_init(&pad, RUNNER_STREAMS_MAX, 0);
	int agent[2], gw[2];
	socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, agent);
	socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, gw);
	nonblock(agent[1]);
	nonblock(gw[1]);
	ok(rs_open(&run, agent[1], 8081, &to_pad) == 0, "the runner's end opens a stream");
	uint16_t type;
	const unsigned char *body;
	size_t blen;
	struct rp_msg m;
	long fl = rp_frame(to_pad.data, to_pad.len, &type, &body, &blen);
	ok(fl > 0 && type == RP_OPEN && rp_decode(type, body, blen, &m) == 0 && m.id == 1 &&
	   m.port == 8081, "with OPEN 1 of port 8081");
	ok(rs_opened(&pad, &m, gw[1], 0, &to_run) == RS_OK && pad.n == 1, "paddock's end takes it");
	ok(rs_opened(&pad, &m, -1, ECONNREFUSED, &to_run) == RS_REOPEN,
	   "an OPEN of the same id again is a lie");
	rp_buf_consume(&to_pad, (size_t)fl);

	/* 1 MiB from the agent, 600 KiB back from the gateway, each with
	 * its half-close, through both ends at once. */
	size_t up_len = 1u << 20, down_len = 600u << 10;
	unsigned char *up = malloc(up_len), *down = malloc(down_len);
	for (size_t i = 0; i < up_len; i++)
		up[i] = (unsigned char)(i * 7 + i / 251);
	for (size_t i = 0; i < down_len; i++)
		down[i] = (unsigned char)(i * 13 + i / 241);
	size_t up_off = 0, down_off = 0, most_ahead = 0;
	struct rp_buf at_gw = { 0 }, at_agent = { 0 };
	int gw_eof = 0, agent_eof = 0;
	nonblock(agent[0]);
	nonblock(gw[0]);
	enum rs_lie lie = RS_OK;
	double until = clock_mono() + 20;
	while ((!gw_eof || !agent_eof || run.n || pad.n) && clock_mono() < until && !lie) {
		if (up_off < up_len) {
			ssize_t w = send(agent[0], up + up_off, up_len - up_off, MSG_DONTWAIT);
			up_off += w > 0 ? (size_t)w : 0;
			if (up_off == up_len)
				shutdown(agent[0], SHUT_WR);
		}
		if (down_off < down_len) {
			ssize_t w = send(gw[0], down + down_off, down_len - down_off, MSG_DONTWAIT);
			down_off += w > 0 ? (size_t)w : 0;
			if (down_off == down_len)
				shutdown(gw[0], SHUT_WR);
		}
		turn(&run, &to_pad);
		turn(&pad, &to_run);
		struct rs_stream *st = rs_find(&run, 1);
		if (st && st->out_sent - st->out_acked > most_ahead)
			most_ahead = st->out_sent - st->out_acked;
		lie = deliver(&to_pad, &pad, &to_run, NULL);
		if (!lie)
			lie = deliver(&to_run, &run, &to_pad, NULL);
		if (!gw_eof)
			gw_eof = !drain(gw[0], &at_gw);
		if (!agent_eof)
			agent_eof = !drain(agent[0], &at_agent);
	}
	ok(!lie, "neither end thinks the other lies (%d)", (int)lie);
	ok(at_gw.len == up_len && !memcmp(at_gw.data, up, up_len) && gw_eof,
	   "the agent's 1 MiB reaches the gateway whole, then its half-close (%zu bytes)", at_gw.len);
	ok(at_agent.len == down_len && !memcmp(at_agent.data, down, down_len) && agent_eof,
	   "the gateway's 600 KiB reach the agent whole, then its half-close (%zu bytes)",
	   at_agent.len);
	ok(most_ahead > 0 && most_ahead <= RP_STREAM_WINDOW,
	   "the runner's end never had more than the window unacknowledged (%zu bytes at most)",
	   most_ahead);
	ok(run.n == 0 && pad.n == 0, "both ends ended and freed the stream");
	rp_buf_free(&at_gw);
	rp_buf_free(&at_agent);
	close(agent[0]);
	close(gw[0]);

	/* The window held by a sender whose peer never acknowledges. */
	socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, agent);
	nonblock(agent[1]);
	rs_open(&run, agent[1], 8081, &to_pad);
	for (size_t i = 0, k = 0; k < 50; k++) {
		ssize_t w = send(agent[0], up + i, up_len - i, MSG_DONTWAIT);
		i += w > 0 ? (size_t)w : 0;
		turn(&run, &to_pad);
	}
	struct rs_stream *st = rs_find(&run, 2);
	ok(st && st->out_sent == RP_STREAM_WINDOW,
	   "a sender stops at the window while nothing is acknowledged (%llu bytes sent)",
	   st ? (unsigned long long)st->out_sent : 0ull);
	/* paddock's end of it, the gateway side's socket buffers full, so
	 * that nothing is passed on: the window is taken, a byte more is a
	 * lie. */
	struct rp_msg o2 = { .type = RP_OPEN, .id = 2, .port = 8081 };
	int g2[2];
	socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, g2);
	nonblock(g2[1]);
	static unsigned char fill[65536];
	size_t filled = 0;
	for (ssize_t w; (w = send(g2[1], fill, sizeof fill, MSG_DONTWAIT)) > 0;)
		filled += (size_t)w;
	rs_opened(&pad, &o2, g2[1], 0, &to_run);
	size_t frames = 0;
	lie = deliver(&to_pad, &pad, &to_run, &frames);
	struct rs_stream *ps = rs_find(&pad, 2);
	ok(lie == RS_OK && ps && ps->in_got == RP_STREAM_WINDOW && ps->in_passed == 0,
	   "a window's worth of DATA is believed and held (%zu frames)", frames);
	struct rp_msg more = { .type = RP_DATA, .id = 2, .data = (const unsigned char *)"x", .len = 1 };
	struct rp_buf b = enc(&more);
	ok(deliver(&b, &pad, &to_run, NULL) == RS_WINDOW,
	   "a byte past the window unacknowledged is a lie");
	rp_buf_free(&b);

	/* The buffer goes when it drains. */
	struct rp_buf sink = { 0 };
	for (int i = 0; i < 200 && ps && ps->in.len; i++) {
		drain(g2[0], &sink);
		turn(&pad, &to_run);
	}
	drain(g2[0], &sink);
	ok(ps && ps->in.len == 0 && ps->in.cap == 0 && ps->in.data == NULL &&
	   sink.len == filled + RP_STREAM_WINDOW,
	   "a stream's buffer is freed once it drained (%zu bytes through)", sink.len - filled);
	ok(ps && ps->in_told == RP_STREAM_WINDOW, "and all it passed on is acknowledged");
	rp_buf_free(&sink);

	/* SHUT: the far end's socket is closed. */
	struct rp_msg sh = { .type = RP_SHUT, .id = 2, .err = ECONNRESET };
	ok(rs_frame(&pad, &sh, &to_run) == RS_OK && !rs_find(&pad, 2) && pad.n == 0,
	   "SHUT ends the stream on the other end");
	struct rp_buf gone = { 0 };
	ok(drain(g2[0], &gone) == 0 || errno == ECONNRESET, "and its socket is closed");
	rp_buf_free(&gone);
	/* Frames the peer sent before it knew: dropped. */
	more.id = 2;
	b = enc(&more);
	size_t before = to_run.len;
	ok(deliver(&b, &pad, &to_run, NULL) == RS_OK && to_run.len == before,
	   "DATA for a stream that ended is dropped, no answer");
	rp_buf_free(&b);
	close(g2[0]);
	/* A write that fails: the runner's end answers SHUT. */
	close(agent[0]);
	rp_buf_consume(&to_run, to_run.len);
	rp_buf_consume(&to_pad, to_pad.len);
	struct rp_msg back = { .type = RP_DATA, .id = 2, .data = (const unsigned char *)"late", .len = 4 };
	ok(rs_frame(&run, &back, &to_pad) == RS_OK && !rs_find(&run, 2),
	   "a stream whose agent went away ends at the next write");
	fl = rp_frame(to_pad.data, to_pad.len, &type, &body, &blen);
	int shut_ok = fl > 0 && type == RP_SHUT && rp_decode(type, body, blen, &m) == 0 && m.id == 2;
	ok(shut_ok && (m.err == EPIPE || m.err == ECONNRESET), "with a SHUT that says why (%s)",
	   shut_ok ? strerror((int)m.err) : "none");
	free(up);
	free(down);
	rp_buf_free(&to_pad);
	rp_buf_free(&to_run);
	rs_free(&run);
	rs_free(&pad);
}

/* Each end's checks of the other's frames. */
static void test_lies(void)
{
	struct rs_set pad, run;
	struct rp_buf out = { 0 };
	rs_init(&pad, RUNNER_STREAMS_MAX, 0);
	rs_init(&run, RP_STREAMS_MAX, 1);
	struct rp_msg d9 = { .type = RP_DATA, .id = 9, .data = (const unsigned char *)"x", .len = 1 };
	struct rp_msg a9 = { .type = RP_ACK, .id = 9, .offset = 0 };
	struct rp_msg s9 = { .type = RP_SHUT, .id = 9 };
	ok(rs_frame(&pad, &d9, &out) == RS_UNKNOWN && rs_frame(&pad, &a9, &out) == RS_UNKNOWN &&
	   rs_frame(&pad, &s9, &out) == RS_UNKNOWN, "DATA, ACK or SHUT of a stream never opened: lies");
	ok(rs_frame(&run, &d9, &out) == RS_UNKNOWN, "on the runner's end too");
	struct rp_msg o0 = { .type = RP_OPEN, .id = 0, .port = 1 };
	ok(rs_open_check(&pad, &o0) == RS_REOPEN, "stream id 0 is never opened");
	struct rp_msg o5 = { .type = RP_OPEN, .id = 5, .port = 1 };
	ok(rs_frame(&run, &o5, &out) == RS_WRONG_WAY, "an OPEN to the runner is a lie");
	int sp[2];
	socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp);
	nonblock(sp[1]);
	ok(rs_opened(&pad, &o5, sp[1], 0, &out) == RS_OK, "ids may skip");
	struct rp_msg o4 = { .type = RP_OPEN, .id = 4, .port = 1 };
	ok(rs_open_check(&pad, &o4) == RS_REOPEN, "but never go back");
	struct rp_msg a5 = { .type = RP_ACK, .id = 5, .offset = 1 };
	ok(rs_frame(&pad, &a5, &out) == RS_ACK, "an ACK of a byte never sent is a lie");
	struct rp_msg end5 = { .type = RP_DATA, .id = 5, .len = 0 };
	ok(rs_frame(&pad, &end5, &out) == RS_OK, "an end is taken");
	struct rp_msg d5 = { .type = RP_DATA, .id = 5, .data = (const unsigned char *)"x", .len = 1 };
	ok(rs_frame(&pad, &d5, &out) == RS_AFTER_END && rs_frame(&pad, &end5, &out) == RS_AFTER_END,
	   "DATA after the end, or a second end, is a lie");
	char c;
	ok(recv(sp[0], &c, 1, MSG_DONTWAIT) == 0, "the end was passed on as a half-close");
	/* Full: the next is refused with SHUT, not a lie. */
	struct rs_set small;
	rs_init(&small, 1, 0);
	int s1[2], s2[2];
	socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, s1);
	socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, s2);
	struct rp_msg o1 = { .type = RP_OPEN, .id = 1, .port = 1 }, o2 = { .type = RP_OPEN, .id = 2, .port = 1 };
	rp_buf_consume(&out, out.len);
	ok(rs_opened(&small, &o1, s1[1], 0, &out) == RS_OK && rs_opened(&small, &o2, s2[1], 0, &out) == RS_OK &&
	   small.n == 1, "a full set refuses the next stream");
	uint16_t type;
	const unsigned char *body;
	size_t blen;
	struct rp_msg m = { 0 };
	long fl = rp_frame(out.data, out.len, &type, &body, &blen);
	ok(fl > 0 && type == RP_SHUT && rp_decode(type, body, blen, &m) == 0 && m.id == 2 &&
	   m.err == EMFILE, "with SHUT (EMFILE)");
	ok(recv(s2[0], &c, 1, MSG_DONTWAIT) == 0, "and closes its socket");
	close(s1[0]);
	close(s2[0]);
	close(sp[0]);
	rs_free(&small);
	rs_free(&pad);
	rs_free(&run);
	rp_buf_free(&out);
}

/* ---- paddock's end (runner.h) against a fake runner ---- */

struct fake {
	int fd;                 /* the runner's end of the channel */
	struct rp_buf in;
	struct runner *r;
};

static void fake_send(struct fake *f, const struct rp_msg *m)
{
	struct rp_buf b = enc(m);
	for (size_t off = 0; off < b.len;) {
		ssize_t n = send(f->fd, b.data + off, b.len - off, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n > 0) {
			off += (size_t)n;
			continue;
		}
		/* The channel is full: paddock's end reads it meanwhile. */
		struct err e = {{0}};
		if (runner_step(f->r, 0, clock_mono() + 0.05, &e) < 0)
			break;
	}
	rp_buf_free(&b);
}

/* The next frame paddock sent within seconds (runner_step pumps
 * meanwhile); 0 with m set, -1 when none came. */
static int fake_next(struct fake *f, struct rp_msg *m, double seconds)
{
	double until = clock_mono() + seconds;
	for (;;) {
		uint16_t type;
		const unsigned char *body;
		size_t blen;
		long fl = rp_frame(f->in.data, f->in.len, &type, &body, &blen);
		if (fl > 0) {
			/* m's data points into the body: kept until the next
			 * call. */
			static struct rp_buf keep;
			keep.len = 0;
			rp_buf_add(&keep, body, blen);
			int rc = rp_decode(type, keep.data, blen, m);
			rp_buf_consume(&f->in, (size_t)fl);
			return rc;
		}
		if (clock_mono() > until)
			return -1;
		struct err e = {{0}};
		runner_step(f->r, 0, clock_mono() + 0.02, &e);
		drain(f->fd, &f->in);
	}
}

/* The fake's greeting, once paddock's HELLO came (a thread: runner_open
 * waits for it meanwhile). */
static void *fake_greet(void *arg)
{
	struct fake *f = arg;
	struct rp_msg m;
	struct rp_buf hb = { 0 };
	double until = clock_mono() + 5;
	while (clock_mono() < until) {
		uint16_t type;
		const unsigned char *body;
		size_t blen;
		if (rp_frame(f->in.data, f->in.len, &type, &body, &blen) > 0 && type == RP_HELLO)
			break;
		struct pollfd p = { f->fd, POLLIN, 0 };
		poll(&p, 1, 100);
		drain(f->fd, &f->in);
	}
	rp_buf_consume(&f->in, f->in.len);
	struct rp_msg h = { .type = RP_HELLO, .version = RP_VERSION };
	hb = enc(&h);
	(void)!write(f->fd, hb.data, hb.len);
	rp_buf_free(&hb);
	(void)m;
	return NULL;
}

static struct runner *fake_open(struct fake *f)
{
	int sp[2];
	memset(f, 0, sizeof *f);
	socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp);
	f->fd = sp[1];
	nonblock(f->fd);
	pthread_t th;
	pthread_create(&th, NULL, fake_greet, f);
	struct err e = {{0}};
	f->r = runner_open(sp[0], clock_mono() + 5, &e);
	pthread_join(th, NULL);
	if (f->r)
		return f->r;
	printf("Bail out! no session with the fake runner: %s\n", e.msg);
	exit(1);
}

static void fake_close(struct fake *f)
{
	runner_close(f->r);
	close(f->fd);
	rp_buf_free(&f->in);
}

/* A bridge socket of the test's at <dir>/<port>. */
static int bridge_listen(const char *d, int port)
{
	int l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	snprintf(sa.sun_path, sizeof sa.sun_path, "%s/%d", d, port);
	if (l < 0 || bind(l, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(l, 256) < 0) {
		printf("Bail out! cannot listen on %s: %s\n", sa.sun_path, strerror(errno));
		exit(1);
	}
	return l;
}

static int accept_now(int l)
{
	struct pollfd p = { l, POLLIN, 0 };
	return poll(&p, 1, 2000) > 0 ? accept4(l, NULL, NULL, SOCK_CLOEXEC) : -1;
}

static void test_paddock_end(void)
{
	char *bridge = testlib_fmt("%s/bridge", dir);
	mkdir(bridge, 0700);
	int l = bridge_listen(bridge, 8081);
	int ports[] = { 8081, 3128 };
	struct fake f;
	struct rp_msg m;

	/* A session not told about a gateway. */
	fake_open(&f);
	struct rp_msg o1 = { .type = RP_OPEN, .id = 1, .port = 8081 };
	fake_send(&f, &o1);
	ok(fake_next(&f, &m, 2) == 0 && m.type == RP_SHUT && m.id == 1 && m.err == ECONNREFUSED,
	   "a session not told about a gateway answers OPEN with SHUT");
	ok(runner_fault(f.r) == RUNNER_OK, "and goes on");
	fake_close(&f);

	fake_open(&f);
	runner_gateway(f.r, bridge, ports, 2);
	/* A port not given; a port given whose socket is not there. */
	struct rp_msg o22 = { .type = RP_OPEN, .id = 1, .port = 22 };
	fake_send(&f, &o22);
	ok(fake_next(&f, &m, 2) == 0 && m.type == RP_SHUT && m.id == 1 && m.err == ECONNREFUSED &&
	   runner_fault(f.r) == RUNNER_OK, "an OPEN of a port not given: SHUT, the session goes on");
	struct rp_msg o3128 = { .type = RP_OPEN, .id = 2, .port = 3128 };
	fake_send(&f, &o3128);
	ok(fake_next(&f, &m, 2) == 0 && m.type == RP_SHUT && m.id == 2 && runner_fault(f.r) == RUNNER_OK,
	   "a given port whose bridge socket refuses: SHUT (%s)", strerror((int)m.err));

	/* A stream both ways. */
	struct rp_msg o3 = { .type = RP_OPEN, .id = 3, .port = 8081 };
	struct rp_msg d3 = { .type = RP_DATA, .id = 3, .data = (const unsigned char *)"GET /v1\n",
	                     .len = 8 };
	struct rp_msg e3 = { .type = RP_DATA, .id = 3, .len = 0 };
	fake_send(&f, &o3);
	fake_send(&f, &d3);
	fake_send(&f, &e3);
	struct err e = {{0}};
	runner_step(f.r, 0, clock_mono() + 0.2, &e);
	int g = accept_now(l);
	char buf[64] = "";
	ssize_t n = g >= 0 ? recv(g, buf, sizeof buf - 1, MSG_DONTWAIT) : -1;
	for (int i = 0; i < 20 && n < 8; i++) {
		runner_step(f.r, 0, clock_mono() + 0.05, &e);
		n = recv(g, buf, sizeof buf - 1, MSG_DONTWAIT);
	}
	ok(g >= 0 && n == 8 && !strcmp(buf, "GET /v1\n"), "an OPEN of a given port reaches the bridge socket "
	   "with its DATA");
	ok(runner_streams(f.r) == 1, "one stream open");
	(void)!write(g, "200 OK\n", 7);
	shutdown(g, SHUT_WR);
	int got_data = 0, got_end = 0, got_ack = 0;
	while ((!got_data || !got_end || !got_ack) && fake_next(&f, &m, 2) == 0) {
		got_data |= m.type == RP_DATA && m.id == 3 && m.len == 7 && !memcmp(m.data, "200 OK\n", 7);
		got_end |= m.type == RP_DATA && m.id == 3 && m.len == 0;
		got_ack |= m.type == RP_ACK && m.id == 3 && m.offset == 8;
	}
	ok(got_data && got_end && got_ack, "the gateway's answer, its end and the ACK of the 8 bytes "
	   "come back");
	runner_step(f.r, 0, clock_mono() + 0.1, &e);
	ok(runner_streams(f.r) == 0, "then the stream is gone, its buffers with it");
	close(g);

	/* Too many at once: SHUT past RUNNER_STREAMS_MAX, the session goes on. */
	int shut = 0, accepted = 0;
	for (uint32_t id = 10; id < 10 + RUNNER_STREAMS_MAX + 3; id++) {
		struct rp_msg o = { .type = RP_OPEN, .id = id, .port = 8081 };
		fake_send(&f, &o);
	}
	runner_step(f.r, 0, clock_mono() + 0.3, &e);
	while (fake_next(&f, &m, 0.5) == 0)
		shut += m.type == RP_SHUT && m.err == EMFILE;
	int gs[RUNNER_STREAMS_MAX + 3];
	for (int i = 0; i < RUNNER_STREAMS_MAX + 3 && (gs[accepted] = accept_now(l)) >= 0; i++)
		accepted++;
	ok(shut == 3 && accepted == RUNNER_STREAMS_MAX && runner_fault(f.r) == RUNNER_OK,
	   "%d streams at once: %d carried, the rest refused with SHUT (%d), the session goes on",
	   RUNNER_STREAMS_MAX + 3, accepted, shut);
	for (int i = 0; i < accepted; i++)
		close(gs[i]);
	fake_close(&f);

	/* A runner that floods past the window lies: the session fails. */
	fake_open(&f);
	runner_gateway(f.r, bridge, ports, 1);
	struct rp_msg o = { .type = RP_OPEN, .id = 1, .port = 8081 };
	fake_send(&f, &o);
	static unsigned char chunk[RP_CHUNK];
	/* More than the gateway's socket and the window hold together. */
	for (unsigned i = 0; i < 64 && runner_fault(f.r) == RUNNER_OK; i++) {
		struct rp_msg d = { .type = RP_DATA, .id = 1, .data = chunk, .len = RP_CHUNK };
		fake_send(&f, &d);
	}
	/* The gateway never reads: nothing is acknowledged. */
	int rc = 0;
	for (int i = 0; i < 20 && rc == 0; i++)
		rc = runner_step(f.r, 0, clock_mono() + 0.05, &e);
	ok(rc < 0 && runner_fault(f.r) == RUNNER_LIED && strstr(e.msg, "past its window"),
	   "a runner that sends past the window while the gateway does not read lies: %s", e.msg);
	int gl = accept_now(l);
	if (gl >= 0)
		close(gl);
	fake_close(&f);

	/* DATA of a stream never opened. */
	fake_open(&f);
	runner_gateway(f.r, bridge, ports, 1);
	struct rp_msg d7 = { .type = RP_DATA, .id = 7, .data = (const unsigned char *)"x", .len = 1 };
	fake_send(&f, &d7);
	rc = 0;
	for (int i = 0; i < 20 && rc == 0; i++)
		rc = runner_step(f.r, 0, clock_mono() + 0.05, &e);
	ok(rc < 0 && runner_fault(f.r) == RUNNER_LIED && strstr(e.msg, "never opened"),
	   "DATA for a stream never opened is a lie: %s", e.msg);
	fake_close(&f);
	close(l);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	dir = testlib_tmpdir("runner-stream");
	test_frames();
	test_both_ends();
	test_lies();
	test_paddock_end();
	testlib_end();
	return tap_done();
}
