/* runner: the protocol of a sandbox session (runner_proto.h), the host's
 * client against hostile fake runners (runner.h), and the real
 * paddock-runner end to end, as a child and, with bwrap, as PID 1. */
#include "autoconfig.h"
#include "runner.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "sandbox_int.h"
#include "tap.h"
#include "testlib.h"

/* ---- framing ---- */

static struct rp_buf enc(const struct rp_msg *m)
{
	struct rp_buf b;
	testlib_rp_enc(m, &b);
	return b;
}


static void test_round_trips(void)
{
	char *argv[] = { "sh", "-c", "echo hi", NULL };
	char *env[] = { "A=1", "PATH=/bin", NULL };
	struct rp_msg run = { .type = RP_RUN, .id = 7, .flags = RP_RUN_FRESH | RP_RUN_PTY,
	                      .limits = { 1000, 1u << 30, 64, 1u << 20, 5000 },
	                      .rows = 24, .cols = 80, .text = "/work", .argv = argv, .env = env };
	struct rp_msg m;
	ok(testlib_rp_round_trip(&run, &m) == 0, "RUN survives a round trip");
	ok(m.id == 7 && m.flags == (RP_RUN_FRESH | RP_RUN_PTY) && m.limits.time_ms == 1000 &&
	   m.limits.memory == 1u << 30 && m.limits.pids == 64 && m.limits.output == 1u << 20 &&
	   m.limits.file_size == 5000 && m.rows == 24 && m.cols == 80,
	   "RUN's id, flags, limits and size come back");
	ok(m.text && strcmp(m.text, "/work") == 0 && m.argv && strcmp(m.argv[2], "echo hi") == 0 &&
	   !m.argv[3] && m.env && strcmp(m.env[1], "PATH=/bin") == 0 && !m.env[2],
	   "RUN's cwd, argv and env come back");
	rp_msg_clear(&m);

	struct rp_msg out = { .type = RP_OUTPUT, .id = 3, .offset = 1ull << 40,
	                      .data = (const unsigned char *)"a\0b", .len = 3 };
	struct rp_buf b = enc(&out);
	uint16_t type;
	const unsigned char *body;
	size_t blen;
	rp_frame(b.data, b.len, &type, &body, &blen);
	ok(rp_decode(type, body, blen, &m) == 0 && m.offset == 1ull << 40 && m.len == 3 &&
	   memcmp(m.data, "a\0b", 3) == 0, "OUTPUT's 64-bit offset and binary bytes come back");
	rp_msg_clear(&m);
	rp_buf_free(&b);

	struct rp_msg end = { .type = RP_END, .id = 3, .how = RP_END_SIGNALED, .code = 9,
	                      .hit = RP_HIT_TIME | RP_HIT_OUTPUT, .size = 12, .text = "" };
	ok(testlib_rp_round_trip(&end, &m) == 0 && m.how == RP_END_SIGNALED && m.code == 9 &&
	   m.hit == (RP_HIT_TIME | RP_HIT_OUTPUT) && m.size == 12, "END comes back");
	rp_msg_clear(&m);
	struct rp_msg small[] = {
		{ .type = RP_HELLO, .version = RP_VERSION, .flags = RP_HELLO_PID1 },
		{ .type = RP_KILL, .id = 0, .sig = SIGKILL },
		{ .type = RP_WATCH, .id = 2, .offset = 99 },
		{ .type = RP_FILE_PUT, .id = 4, .mode = 0640, .size = 5, .text = "/out/x" },
		{ .type = RP_FILE_GET, .id = 4, .size = 5, .text = "/out/x" },
		{ .type = RP_FILE_DONE, .id = 4, .size = 5 },
		{ .type = RP_FAIL, .id = 4, .err = ENOENT, .text = "no" },
		{ .type = RP_RESIZE, .id = 1, .rows = 50, .cols = 132 },
		{ .type = RP_STDIN, .id = 1, .data = (const unsigned char *)"", .len = 0 },
		{ .type = RP_PING, .token = 42 },
		{ .type = RP_PONG, .token = 42 },
		{ .type = RP_TAKEN, .id = 3, .offset = 1u << 20 },
	};
	int good = 1;
	for (size_t i = 0; i < sizeof small / sizeof *small; i++) {
		struct rp_msg *s = &small[i];
		if (testlib_rp_round_trip(s, &m) < 0 || m.id != s->id || m.version != s->version ||
		    m.flags != s->flags || m.sig != s->sig || m.offset != s->offset ||
		    m.size != s->size || m.mode != s->mode || m.err != s->err ||
		    m.rows != s->rows || m.cols != s->cols || m.token != s->token ||
		    (s->text && (!m.text || strcmp(m.text, s->text) != 0))) {
			printf("# %s did not come back\n", rp_type_name(s->type));
			good = 0;
		}
		rp_msg_clear(&m);
	}
	ok(good, "every other type comes back field for field");
}

static void test_partial_and_bad(void)
{
	struct rp_msg ping = { .type = RP_PING, .token = 5 };
	struct rp_buf b = enc(&ping);
	uint16_t type;
	const unsigned char *body;
	size_t blen;
	int waits = 1;
	for (size_t n = 0; n < b.len; n++)
		waits &= rp_frame(b.data, n, &type, &body, &blen) == 0;
	ok(waits && rp_frame(b.data, b.len, &type, &body, &blen) == (long)b.len,
	   "a frame read a byte at a time is whole only at its last byte");
	rp_buf_free(&b);

	unsigned char big[4] = { 0x00, 0x10, 0x00, 0x01 };   /* RP_BODY_MAX + 1 */
	ok(rp_frame(big, 4, &type, &body, &blen) == -1,
	   "a length past the maximum is refused from its four bytes, before any body");
	unsigned char huge[8] = { 0xff, 0xff, 0xff, 0xff, 0, 1, 0, 0 };
	ok(rp_frame(huge, 8, &type, &body, &blen) == -1, "a length of 4 GiB is refused");
	unsigned char resv[8] = { 0, 0, 0, 0, 0, RP_PING, 0, 1 };
	ok(rp_frame(resv, 8, &type, &body, &blen) == -1, "reserved header bits are refused");
	struct rp_msg m;
	unsigned char none[8] = { 0 };
	ok(rp_decode(200, none, 8, &m) == -1 && rp_decode(0, none, 0, &m) == -1 &&
	   rp_decode(RP_TYPE_END, none, 0, &m) == -1, "an unknown type does not decode");
	ok(rp_decode(RP_PING, none, 7, &m) == -1, "a short body does not decode");
	ok(rp_decode(RP_PING, none, 8, &m) == 0 && rp_decode(RP_KILL, none, 9, &m) == -1,
	   "a body with trailing bytes does not decode");
	unsigned char nul[] = { 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 'a', 0, 'b' };
	ok(rp_decode(RP_FAIL, nul, sizeof nul, &m) == -1, "a NUL inside a string is refused");
	unsigned char over[] = { 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff };
	ok(rp_decode(RP_OUTPUT, over, sizeof over, &m) == -1,
	   "a byte count past the body is refused");
	/* RUN with 2^32-1 argv entries announced in a few bytes */
	struct rp_buf r = { 0 };
	unsigned char head[4 + 4 + 5 * 8 + 2 + 2 + 4] = { 0 };
	rp_buf_add(&r, head, sizeof head);
	unsigned char cnt[4] = { 0xff, 0xff, 0xff, 0xff };
	rp_buf_add(&r, cnt, 4);
	ok(rp_decode(RP_RUN, r.data, r.len, &m) == -1,
	   "a list count the body cannot hold is refused before allocating");
	rp_buf_free(&r);

	char *argv[] = { NULL };
	struct rp_msg run = { .type = RP_RUN, .id = 1, .text = "", .argv = argv };
	ok(testlib_rp_round_trip(&run, &m) == -1, "a RUN without a program does not decode");
	struct rp_msg bad = { .type = (enum rp_type)99 };
	struct rp_buf e = { 0 };
	ok(rp_encode(&e, &bad) == -1 && e.len == 0, "an unknown type does not encode");
	static unsigned char data[RP_BODY_MAX];
	struct rp_msg toolong = { .type = RP_OUTPUT, .data = data, .len = RP_BODY_MAX };
	ok(rp_encode(&e, &toolong) == -1 && errno == EMSGSIZE && e.len == 0,
	   "a frame past the maximum does not encode");
	rp_buf_free(&e);
}

/* ---- the client against fake runners ---- */

/* What a fake runner does: read the HELLO, write hello; read one request
 * when asked, write reply; then wait for the channel to close (stay) or
 * exit. */
struct fake {
	struct rp_buf hello, reply;
	int read_request, stay;
	int dribble;   /* the reply a byte at a time */
	int hold;      /* after the greeting, read nothing more (until killed) */
};

static void read_frame(int fd)
{
	unsigned char buf[RP_FRAME_MAX > 65536 ? 65536 : RP_FRAME_MAX];
	size_t have = 0;
	for (;;) {
		uint16_t type;
		const unsigned char *body;
		size_t blen;
		if (have && rp_frame(buf, have, &type, &body, &blen) != 0)
			return;
		ssize_t n = read(fd, buf + have, have < 8 ? 8 - have : 1);
		if (n <= 0 || have + (size_t)n >= sizeof buf)
			_exit(0);
		have += (size_t)n;
	}
}

static pid_t fake_start(struct fake *f, int *host_fd)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		close(sv[0]);
		read_frame(sv[1]);
		(void)!write(sv[1], f->hello.data, f->hello.len);
		while (f->hold)
			pause();
		if (f->read_request)
			read_frame(sv[1]);
		for (size_t i = 0; f->dribble && i < f->reply.len; i++) {
			(void)!write(sv[1], f->reply.data + i, 1);
			usleep(500);
		}
		if (f->reply.len && !f->dribble)
			(void)!write(sv[1], f->reply.data, f->reply.len);
		char c;
		while (f->stay && read(sv[1], &c, 1) > 0)
			;
		_exit(0);
	}
	close(sv[1]);
	*host_fd = sv[0];
	return pid;
}

static void add(struct rp_buf *b, const struct rp_msg *m)
{
	if (rp_encode(b, m) < 0)
		printf("# cannot encode %s\n", rp_type_name(m->type));
}

static void fake_hello(struct fake *f, uint32_t version)
{
	struct rp_msg h = { .type = RP_HELLO, .version = version };
	add(&f->hello, &h);
}

static void fake_free(struct fake *f, pid_t pid)
{
	if (pid > 0)
		waitpid(pid, NULL, 0);
	rp_buf_free(&f->hello);
	rp_buf_free(&f->reply);
}

struct sink {
	char data[4096];
	size_t len;
	uint64_t first;
	int calls, gap;
};

static void sink_output(void *arg, uint32_t id, uint64_t offset, const char *data, size_t len)
{
	struct sink *s = arg;
	if (!s->calls++)
		s->first = offset;
	else if (offset != s->first + s->len)
		s->gap = 1;
	size_t n = len < sizeof s->data - 1 - s->len ? len : sizeof s->data - 1 - s->len;
	memcpy(s->data + s->len, data, n);
	s->len += n;
	s->data[s->len] = 0;
}

/* A run's output and its standard error apart (RP_RUN_STDERR). */
struct sinks {
	struct sink out, err;
};

static void sinks_out(void *arg, uint32_t id, uint64_t offset, const char *data, size_t len)
{
	sink_output(&((struct sinks *)arg)->out, id, offset, data, len);
}

static void sinks_err(void *arg, uint32_t id, uint64_t offset, const char *data, size_t len)
{
	sink_output(&((struct sinks *)arg)->err, id, offset, data, len);
}

/* The output rebuilt at its offsets: bad when one does not follow on. */
struct tape {
	char data[65536];
	uint64_t next;
	int bad;
};

static void tape_output(void *arg, uint32_t id, uint64_t offset, const char *data, size_t len)
{
	struct tape *t = arg;
	if (offset != t->next || offset + len > sizeof t->data - 1)
		t->bad = 1;
	else
		memcpy(t->data + offset, data, len);
	t->next = offset + len;
}

/* Counts output, checking only that each offset follows on. */
static void count_output(void *arg, uint32_t id, uint64_t offset, const char *data, size_t len)
{
	struct tape *t = arg;
	if (offset != t->next)
		t->bad = 1;
	t->next = offset + len;
}

static char *sh_argv[] = { "sh", "-c", "true", NULL };

/* Runs one command against a fake whose answer is reply; the session's
 * fault and message after it. */
static int dribble;
/* The flags of fake_run's command; with RP_RUN_STDERR its standard error
 * goes to fake_errors. */
static unsigned fake_flags;
static struct sink fake_errors;

static enum runner_fault fake_run(struct rp_buf *reply, uint64_t cap, int stay,
                                  double wait, struct runner_end *end, struct sink *out,
                                  char *msg, size_t msgsize)
{
	struct fake f = { .read_request = 1, .stay = stay, .dribble = dribble };
	fake_hello(&f, RP_VERSION);
	if (reply)
		f.reply = *reply;
	int fd;
	pid_t pid = fake_start(&f, &fd);
	struct err e = {{0}};
	struct runner *r = runner_open(fd, clock_mono() + 5, &e);
	enum runner_fault fault = RUNNER_DIED;
	if (r) {
		struct sinks both = { .out = { .len = 0 } };
		struct runner_cmd cmd = { .argv = sh_argv, .limits.output = cap, .flags = fake_flags,
		                          .output = sinks_out, .errors = sinks_err, .arg = &both };
		struct runner_end dummy;
		runner_run(r, &cmd, clock_mono() + wait, end ? end : &dummy, &e);
		fault = runner_fault(r);
		runner_close(r);
		*out = both.out;
		fake_errors = both.err;
	}
	snprintf(msg, msgsize, "%s", e.msg);
	fake_free(&f, pid);
	return fault;
}

static void out_msg(struct rp_buf *b, uint32_t id, uint64_t off, const char *s)
{
	struct rp_msg m = { .type = RP_OUTPUT, .id = id, .offset = off,
	                    .data = (const unsigned char *)s, .len = strlen(s) };
	add(b, &m);
}

static void err_msg(struct rp_buf *b, uint32_t id, uint64_t off, const char *s)
{
	struct rp_msg m = { .type = RP_STDERR, .id = id, .offset = off,
	                    .data = (const unsigned char *)s, .len = strlen(s) };
	add(b, &m);
}

static void end_msg(struct rp_buf *b, uint32_t id, uint32_t code, uint64_t size)
{
	struct rp_msg m = { .type = RP_END, .id = id, .how = RP_END_EXITED, .code = code,
	                    .size = size, .text = "" };
	add(b, &m);
}

static void test_hello(void)
{
	struct err e = {{0}};
	struct fake f = { 0 };
	fake_hello(&f, RP_VERSION + 1);
	int fd;
	pid_t pid = fake_start(&f, &fd);
	struct runner *r = runner_open(fd, clock_mono() + 5, &e);
	ok(!r && strstr(e.msg, "runner") && strstr(e.msg, testlib_fmt("version %u", RP_VERSION + 1)),
	   "a runner of another protocol version is refused: %s", e.msg);
	fake_free(&f, pid);

	struct fake g = { 0 };
	const char *http = "HTTP/1.1 200 OK\r\n\r\n";
	rp_buf_add(&g.hello, http, strlen(http));
	pid = fake_start(&g, &fd);
	err_clear(&e);
	r = runner_open(fd, clock_mono() + 5, &e);
	ok(!r && strstr(e.msg, "broke the protocol"), "garbage for a greeting is refused: %s",
	   e.msg);
	fake_free(&g, pid);

	struct fake h = { .stay = 1 };
	struct rp_msg ping = { .type = RP_PONG, .token = 1 };
	add(&h.hello, &ping);
	pid = fake_start(&h, &fd);
	err_clear(&e);
	r = runner_open(fd, clock_mono() + 5, &e);
	ok(!r && strstr(e.msg, "no greeting"), "another frame for a greeting is refused: %s",
	   e.msg);
	fake_free(&h, pid);

	struct fake s = { .stay = 1 };
	pid = fake_start(&s, &fd);
	err_clear(&e);
	double t0 = clock_mono();
	r = runner_open(fd, t0 + 0.3, &e);
	ok(!r && strstr(e.msg, "stopped answering") && clock_mono() - t0 < 4,
	   "a runner that never greets is given up at the deadline: %s", e.msg);
	fake_free(&s, pid);

	struct fake d = { 0 };
	struct rp_buf full = { 0 };
	fake_hello(&d, RP_VERSION);
	rp_buf_add(&full, d.hello.data, 5);   /* half a frame, then exit */
	rp_buf_free(&d.hello);
	d.hello = full;
	pid = fake_start(&d, &fd);
	err_clear(&e);
	r = runner_open(fd, clock_mono() + 5, &e);
	ok(!r && strstr(e.msg, "is gone"), "a runner that dies mid-frame is gone: %s", e.msg);
	fake_free(&d, pid);
}

/* A runner that takes no more frames: a call without a deadline of its
 * own stops at the send timeout. */
static void test_send_stall(void)
{
	struct fake f = { .hold = 1 };
	fake_hello(&f, RP_VERSION);
	int fd;
	pid_t pid = fake_start(&f, &fd);
	struct err e = {{0}};
	struct runner *r = runner_open(fd, clock_mono() + 5, &e);
	size_t big = RP_BODY_MAX - 4096;
	char *arg = malloc(big + 1);
	memset(arg, 'x', big);
	arg[big] = 0;
	char *argv[] = { "echo", arg, NULL };
	struct runner_cmd cmd = { .argv = argv };
	double t0 = clock_mono();
	uint32_t id = 0;
	if (r) {
		runner_set_send_timeout(r, 0.3);
		for (int i = 0; i < 8 && runner_fault(r) == RUNNER_OK; i++)
			id = runner_start(r, &cmd, &e);
	}
	ok(r && id == 0 && runner_fault(r) == RUNNER_STALLED && clock_mono() - t0 < 10,
	   "requests to a runner that reads nothing fail at the send timeout: %s", e.msg);
	free(arg);
	runner_close(r);
	kill(pid, SIGKILL);
	fake_free(&f, pid);
}

static void test_lies(void)
{
	char msg[ERR_MAX];
	struct sink s = { .len = 0 };
	struct rp_buf b = { 0 };
	struct runner_end end;

	out_msg(&b, 1, 0, "hello ");
	out_msg(&b, 1, 6, "world");
	end_msg(&b, 1, 3, 11);
	enum runner_fault f = fake_run(&b, 0, 1, 5, &end, &s, msg, sizeof msg);
	ok(f == RUNNER_OK && strcmp(s.data, "hello world") == 0 && !s.gap && s.first == 0 &&
	   end.how == RP_END_EXITED && end.code == 3 && end.output == 11,
	   "an honest run: its output in order and its exit status");

	b = (struct rp_buf){ 0 };
	s = (struct sink){ .len = 0 };
	out_msg(&b, 1, 0, "hello ");
	out_msg(&b, 1, 6, "world");
	end_msg(&b, 1, 3, 11);
	dribble = 1;
	f = fake_run(&b, 0, 1, 5, &end, &s, msg, sizeof msg);
	dribble = 0;
	ok(f == RUNNER_OK && strcmp(s.data, "hello world") == 0 && !s.gap && end.code == 3,
	   "frames that arrive a byte at a time are read whole");

	b = (struct rp_buf){ 0 };
	s = (struct sink){ .len = 0 };
	f = fake_run(NULL, 0, 0, 5, &end, &s, msg, sizeof msg);
	ok(f == RUNNER_DIED && strstr(msg, "is gone"),
	   "a runner whose channel is dead: the request fails, paddock goes on: %s", msg);

	b = (struct rp_buf){ 0 };
	s = (struct sink){ .len = 0 };
	out_msg(&b, 1, 0, "abc");
	out_msg(&b, 1, 1, "x");
	f = fake_run(&b, 0, 1, 5, NULL, &s, msg, sizeof msg);
	ok(f == RUNNER_LIED && strstr(msg, "offset 1, expected 3") && strcmp(s.data, "abc") == 0,
	   "output whose offset goes backwards is a lie, and none of it is taken: %s", msg);

	b = (struct rp_buf){ 0 };
	s = (struct sink){ .len = 0 };
	out_msg(&b, 1, 0, "abc");
	out_msg(&b, 1, 10, "x");
	f = fake_run(&b, 0, 1, 5, NULL, &s, msg, sizeof msg);
	ok(f == RUNNER_LIED && strstr(msg, "offset 10"), "output that skips is a lie: %s", msg);

	b = (struct rp_buf){ 0 };
	out_msg(&b, 1, 0, "0123456789");
	f = fake_run(&b, 8, 1, 5, NULL, &s, msg, sizeof msg);
	ok(f == RUNNER_LIED && strstr(msg, "limit of 8"), "output past the cap is a lie: %s", msg);

	b = (struct rp_buf){ 0 };
	end_msg(&b, 99, 0, 0);
	f = fake_run(&b, 0, 1, 5, NULL, &s, msg, sizeof msg);
	ok(f == RUNNER_LIED && strstr(msg, "run 99"), "an END for an unknown id is a lie: %s", msg);

	b = (struct rp_buf){ 0 };
	struct rp_msg taken = { .type = RP_TAKEN, .id = 1, .offset = 5 };
	add(&b, &taken);
	f = fake_run(&b, 0, 1, 5, NULL, &s, msg, sizeof msg);
	ok(f == RUNNER_LIED && strstr(msg, "input taken up to 5 for run 1, which was sent 0 bytes"),
	   "input said taken that was never sent is a lie: %s", msg);
	b = (struct rp_buf){ 0 };
	taken = (struct rp_msg){ .type = RP_TAKEN, .id = 9, .offset = 0 };
	add(&b, &taken);
	f = fake_run(&b, 0, 1, 5, NULL, &s, msg, sizeof msg);
	ok(f == RUNNER_LIED && strstr(msg, "run 9"), "input taken by an unknown run is a lie: %s",
	   msg);

	b = (struct rp_buf){ 0 };
	out_msg(&b, 2, 0, "x");
	f = fake_run(&b, 0, 1, 5, NULL, &s, msg, sizeof msg);
	ok(f == RUNNER_LIED && strstr(msg, "run 2"), "output for an unknown id is a lie: %s", msg);

	b = (struct rp_buf){ 0 };
	out_msg(&b, 1, 0, "abc");
	end_msg(&b, 1, 0, 1000);
	f = fake_run(&b, 0, 1, 5, NULL, &s, msg, sizeof msg);
	ok(f == RUNNER_LIED && strstr(msg, "1000"),
	   "an END that claims other output than was sent is a lie: %s", msg);

	b = (struct rp_buf){ 0 };
	struct rp_msg fl = { .type = RP_FAIL, .id = 77, .err = 1, .text = "x" };
	add(&b, &fl);
	f = fake_run(&b, 0, 1, 5, NULL, &s, msg, sizeof msg);
	ok(f == RUNNER_LIED && strstr(msg, "request 77"),
	   "a refusal of a request never made is a lie: %s", msg);

	b = (struct rp_buf){ 0 };
	unsigned char unknown[8] = { 0, 0, 0, 0, 0, 200, 0, 0 };
	rp_buf_add(&b, unknown, 8);
	f = fake_run(&b, 0, 1, 5, NULL, &s, msg, sizeof msg);
	ok(f == RUNNER_LIED && strstr(msg, "unknown type 200"), "an unknown type is a lie: %s",
	   msg);

	b = (struct rp_buf){ 0 };
	struct rp_msg hello = { .type = RP_HELLO, .version = RP_VERSION };
	add(&b, &hello);
	f = fake_run(&b, 0, 1, 5, NULL, &s, msg, sizeof msg);
	ok(f == RUNNER_LIED && strstr(msg, "HELLO"), "a second greeting is a lie: %s", msg);

	b = (struct rp_buf){ 0 };
	unsigned char hdr[8] = { 0xff, 0xff, 0xff, 0xf0, 0, RP_OUTPUT, 0, 0 };
	rp_buf_add(&b, hdr, 8);
	double t0 = clock_mono();
	f = fake_run(&b, 0, 1, 30, NULL, &s, msg, sizeof msg);
	ok(f == RUNNER_LIED && strstr(msg, "malformed frame header") && clock_mono() - t0 < 10,
	   "a 4 GiB frame is refused from its header, without waiting for its body: %s", msg);

	b = (struct rp_buf){ 0 };
	unsigned char bad_body[8 + 3] = { 0, 0, 0, 3, 0, RP_END, 0, 0, 1, 2, 3 };
	rp_buf_add(&b, bad_body, sizeof bad_body);
	f = fake_run(&b, 0, 1, 5, NULL, &s, msg, sizeof msg);
	ok(f == RUNNER_LIED && strstr(msg, "malformed END"), "a malformed body is a lie: %s", msg);

	b = (struct rp_buf){ 0 };
	out_msg(&b, 1, 0, "abc");
	t0 = clock_mono();
	f = fake_run(&b, 0, 1, 0.3, NULL, &s, msg, sizeof msg);
	ok(f == RUNNER_STALLED && strstr(msg, "stopped answering") && clock_mono() - t0 < 4,
	   "a runner that stalls mid-run fails at the deadline: %s", msg);

	b = (struct rp_buf){ 0 };
	out_msg(&b, 1, 0, "abc");
	rp_buf_add(&b, "\0\0\0\x20\0\x03", 6);   /* half an OUTPUT, then it exits */
	f = fake_run(&b, 0, 0, 5, NULL, &s, msg, sizeof msg);
	ok(f == RUNNER_DIED && strstr(msg, "is gone"), "a runner that dies mid-frame: %s", msg);

	/* Standard error apart (RP_RUN_STDERR): a stream of its own. */
	b = (struct rp_buf){ 0 };
	err_msg(&b, 1, 0, "oops");
	end_msg(&b, 1, 0, 0);
	f = fake_run(&b, 0, 1, 5, NULL, &s, msg, sizeof msg);
	ok(f == RUNNER_LIED && strstr(msg, "does not send it apart"),
	   "standard error for a run that did not ask for it apart is a lie: %s", msg);
	fake_flags = RP_RUN_STDERR;
	b = (struct rp_buf){ 0 };
	out_msg(&b, 1, 0, "out");
	err_msg(&b, 1, 0, "err1");
	out_msg(&b, 1, 3, "put");
	err_msg(&b, 1, 4, "err2");
	end_msg(&b, 1, 2, 6);
	f = fake_run(&b, 0, 1, 5, &end, &s, msg, sizeof msg);
	ok(f == RUNNER_OK && strcmp(s.data, "output") == 0 &&
	   strcmp(fake_errors.data, "err1err2") == 0 && !fake_errors.gap && end.code == 2 &&
	   end.output == 6, "an honest run with its standard error apart: both streams in order");
	b = (struct rp_buf){ 0 };
	err_msg(&b, 1, 0, "abc");
	err_msg(&b, 1, 5, "x");
	f = fake_run(&b, 0, 1, 5, NULL, &s, msg, sizeof msg);
	ok(f == RUNNER_LIED && strstr(msg, "standard error of run 1 at offset 5, expected 3") &&
	   strcmp(fake_errors.data, "abc") == 0, "standard error that skips is a lie: %s", msg);
	b = (struct rp_buf){ 0 };
	out_msg(&b, 1, 0, "12345");
	err_msg(&b, 1, 0, "6789");
	f = fake_run(&b, 8, 1, 5, NULL, &s, msg, sizeof msg);
	ok(f == RUNNER_LIED && strstr(msg, "past its limit of 8"),
	   "output and standard error together past the output limit is a lie: %s", msg);
	fake_flags = 0;
}

/* A fake runner that answers a FILE_GET with announce, data, done. */
static enum runner_fault fake_get(uint64_t announce, const char *data, uint64_t max,
                                  char *msg, size_t msgsize)
{
	struct fake f = { .read_request = 1, .stay = 1 };
	fake_hello(&f, RP_VERSION);
	struct rp_msg a = { .type = RP_FILE_PUT, .id = 1, .mode = 0600, .size = announce,
	                    .text = "/x" };
	add(&f.reply, &a);
	struct rp_msg d = { .type = RP_FILE_DATA, .id = 1, .data = (const unsigned char *)data,
	                    .len = strlen(data) };
	add(&f.reply, &d);
	struct rp_msg done = { .type = RP_FILE_DONE, .id = 1, .size = strlen(data) };
	add(&f.reply, &done);
	int fd;
	pid_t pid = fake_start(&f, &fd);
	struct err e = {{0}};
	struct runner *r = runner_open(fd, clock_mono() + 5, &e);
	enum runner_fault fault = RUNNER_DIED;
	if (r) {
		FILE *tmp = tmpfile();
		if (runner_file_get(r, "/x", fileno(tmp), max, NULL, clock_mono() + 5, &e) < 0)
			fault = runner_fault(r);
		else
			fault = RUNNER_OK;
		fclose(tmp);
		runner_close(r);
	}
	snprintf(msg, msgsize, "%s", e.msg);
	fake_free(&f, pid);
	return fault;
}

static void test_file_lies(void)
{
	char msg[ERR_MAX];
	struct fake dead = { 0 };
	fake_hello(&dead, RP_VERSION);
	int cfd;
	pid_t pid = fake_start(&dead, &cfd);
	struct err e = {{0}};
	struct runner *r = runner_open(cfd, clock_mono() + 5, &e);
	int zero = open("/dev/zero", O_RDONLY | O_CLOEXEC);
	ok(r && runner_file_put(r, "/x", 0600, zero, 8u << 20, clock_mono() + 10, &e) == -1 &&
	   runner_fault(r) == RUNNER_DIED,
	   "8 MiB for a runner that is gone: the write fails (no SIGPIPE), the session is over: %s",
	   e.msg);
	close(zero);
	runner_close(r);
	fake_free(&dead, pid);

	ok(fake_get(5, "12345", 10, msg, sizeof msg) == RUNNER_OK, "an honest file comes out");
	enum runner_fault f = fake_get(3, "12345", 10, msg, sizeof msg);
	ok(f == RUNNER_LIED && strstr(msg, "announced as 3"),
	   "a file bigger than announced is a lie: %s", msg);
	f = fake_get(8, "12345", 10, msg, sizeof msg);
	ok(f == RUNNER_LIED && strstr(msg, "after 5 of 8"),
	   "a file that ends short of its announced size is a lie: %s", msg);
	f = fake_get(1000, "12345", 10, msg, sizeof msg);
	ok(f == RUNNER_LIED && strstr(msg, "1000 bytes announced"),
	   "a file bigger than asked for is a lie: %s", msg);
}

/* ---- the real paddock-runner ---- */

static const char *runner_bin;

/* In a child: the channel on fd to, inherited across exec (dup2 onto the
 * same number would leave it close-on-exec). */
static void channel_to(int from, int to)
{
	if (from == to)
		fcntl(to, F_SETFD, 0);
	else
		dup2(from, to);
}

/* Starts paddock-runner (under prefix, when given: bwrap) with the
 * channel on its fd 3; the session, or NULL. */
static struct runner *real_start(char *const *prefix, pid_t *pid)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return NULL;
	*pid = fork();
	if (*pid == 0) {
		channel_to(sv[1], 3);
		char *argv[32];
		int n = 0;
		for (; prefix && prefix[n]; n++)
			argv[n] = prefix[n];
		argv[n++] = (char *)runner_bin;
		argv[n] = NULL;
		execv(argv[0], argv);
		_exit(127);
	}
	close(sv[1]);
	struct err e = {{0}};
	struct runner *r = runner_open(sv[0], clock_mono() + 10, &e);
	if (!r)
		printf("# %s\n", e.msg);
	return r;
}

static int real_stop(struct runner *r, pid_t pid)
{
	runner_close(r);
	int st = -1;
	waitpid(pid, &st, 0);
	return st;
}

static char *env_path[] = { "PATH=/usr/local/bin:/usr/bin:/bin", "FOO=bar", NULL };

static uint32_t last_run;

/* Runs a shell command in the session (its id in last_run); its output in
 * s. */
static int sh(struct runner *r, const char *script, unsigned flags, struct rp_limits lim,
              struct runner_end *end, struct sink *s)
{
	char *argv[] = { "sh", "-c", (char *)script, NULL };
	struct runner_cmd cmd = { .argv = argv, .env = env_path, .limits = lim, .flags = flags,
	                          .output = sink_output, .arg = s, .rows = 24, .cols = 80 };
	*s = (struct sink){ .len = 0 };
	struct err e = {{0}};
	last_run = runner_start(r, &cmd, &e);
	int rc = last_run ? runner_wait(r, last_run, clock_mono() + 30, end, &e) : -1;
	if (rc < 0)
		printf("# %s\n", e.msg);
	return rc;
}

static int alive(pid_t p)
{
	return kill(p, 0) == 0;
}

/* Long: one session of the real runner, a check per feature a backend
 * will use, in the order a task uses them. */
static void test_real(const char *dir)
{
	pid_t pid;
	int stray = dup2(1, 40);   /* inherited, not close-on-exec */
	struct runner *r = real_start(NULL, &pid);
	close(stray);
	ok(r != NULL, "paddock-runner greets on fd 3");
	if (!r)
		return;
	ok(!runner_pid1(r), "it says it is not PID 1 when it is not");
	struct runner_end end;
	struct sink s;
	struct rp_limits none = { 0 };
	ok(stray == 40 && sh(r, "[ -e /proc/$$/fd/40 ] && echo leaked || echo clean", 0, none,
	                     &end, &s) == 0 && strcmp(s.data, "clean\n") == 0,
	   "a command gets only its standard descriptors, nothing the runner inherited: %s",
	   s.data);
	ok(sh(r, "echo out; echo err >&2; exit 3", 0, none, &end, &s) == 0 &&
	   strcmp(s.data, "out\nerr\n") == 0 && end.how == RP_END_EXITED && end.code == 3 &&
	   end.output == 8 && s.first == 0 && !s.gap,
	   "a command's stdout and stderr arrive as one stream, with its exit status");

	static struct sinks apart;
	char *both_argv[] = { "sh", "-c", "echo out; echo err >&2; echo more; exit 4", NULL };
	struct runner_cmd acmd = { .argv = both_argv, .env = env_path, .flags = RP_RUN_STDERR,
	                           .output = sinks_out, .errors = sinks_err, .arg = &apart };
	struct err ae = {{0}};
	apart = (struct sinks){ .out = { .len = 0 } };
	ok(runner_run(r, &acmd, clock_mono() + 30, &end, &ae) == 0 &&
	   strcmp(apart.out.data, "out\nmore\n") == 0 && strcmp(apart.err.data, "err\n") == 0 &&
	   end.code == 4 && end.output == 9,
	   "with RP_RUN_STDERR its standard error comes apart (%s|%s)", apart.out.data,
	   apart.err.data);

	char *cwd_argv[] = { "sh", "-c", "echo $FOO; pwd", NULL };
	struct runner_cmd cmd = { .argv = cwd_argv, .env = env_path, .cwd = dir,
	                          .output = sink_output, .arg = &s };
	s = (struct sink){ .len = 0 };
	struct err e = {{0}};
	runner_run(r, &cmd, clock_mono() + 30, &end, &e);
	ok(strcmp(s.data, testlib_fmt("bar\n%s\n", dir)) == 0, "env and cwd are the command's");

	char *missing[] = { "no-such-program-here", NULL };
	cmd = (struct runner_cmd){ .argv = missing, .env = env_path };
	ok(runner_run(r, &cmd, clock_mono() + 30, &end, &e) == 0 &&
	   end.how == RP_END_NOT_STARTED && strstr(end.message, "no-such-program-here"),
	   "a missing program ends as not started, saying why: %s", end.message);
	cmd.argv = cwd_argv;
	cmd.cwd = "/no/such/dir";
	ok(runner_run(r, &cmd, clock_mono() + 30, &end, &e) == 0 &&
	   end.how == RP_END_NOT_STARTED && strstr(end.message, "/no/such/dir"),
	   "a missing cwd ends as not started: %s", end.message);

	struct rp_limits lim = { .time_ms = 300 };
	ok(sh(r, "exec sleep 20", 0, lim, &end, &s) == 0 && end.how == RP_END_SIGNALED &&
	   end.code == SIGKILL && (end.hit & RP_HIT_TIME), "the time limit kills, and says so");
	lim = (struct rp_limits){ .output = 1000 };
	ok(sh(r, "exec yes", 0, lim, &end, &s) == 0 && end.output == 1000 && s.len == 1000 &&
	   (end.hit & RP_HIT_OUTPUT), "output stops at its limit, which is said to be hit");
	lim = (struct rp_limits){ .file_size = 1000 };
	ok(sh(r, testlib_fmt("exec head -c 100000 /dev/zero > %s/big", dir), 0, lim, &end, &s) == 0 &&
	   (end.hit & RP_HIT_DISK), "a file past the file size limit is a disk limit hit");

	lim = (struct rp_limits){ .output = 64u << 20 };
	ok(sh(r, "yes & exit 0", 0, lim, &end, &s) == 0 && end.how == RP_END_EXITED &&
	   end.code == 0, "a process left writing to the output does not hold the END back");

	char *flood[] = { "head", "-c", "20000000", "/dev/zero", NULL };
	static struct tape counted;
	cmd = (struct runner_cmd){ .argv = flood, .env = env_path, .output = count_output,
	                           .arg = &counted };
	counted = (struct tape){ .next = 0 };
	ok(runner_run(r, &cmd, clock_mono() + 60, &end, &e) == 0 && !counted.bad &&
	   counted.next == 20000000 && end.output == 20000000,
	   "20 MB of output arrive in order, every byte once");

	/* kill */
	char *sleeper[] = { "sleep", "30", NULL };
	cmd = (struct runner_cmd){ .argv = sleeper, .env = env_path };
	uint32_t id = runner_start(r, &cmd, &e);
	ok(id && runner_kill(r, id, SIGTERM, &e) == 0 &&
	   runner_wait(r, id, clock_mono() + 30, &end, &e) == 0 && end.how == RP_END_SIGNALED &&
	   end.code == SIGTERM, "KILL sends the signal to a run");
	ok(runner_kill(r, 12345, SIGTERM, &e) == -1, "a kill of a run never started is refused");
	ok(runner_kill(r, id, 0, &e) == -1 && runner_kill(r, 0, 99, &e) == -1 &&
	   runner_fault(r) == RUNNER_OK, "a signal that is none is refused: %s", e.msg);

	/* input */
	char *cat[] = { "cat", NULL };
	cmd = (struct runner_cmd){ .argv = cat, .env = env_path, .flags = RP_RUN_STDIN,
	                           .output = sink_output, .arg = &s };
	s = (struct sink){ .len = 0 };
	id = runner_start(r, &cmd, &e);
	ok(id && runner_stdin(r, id, "typed", 5, &e) == 0 && runner_stdin(r, id, "", 0, &e) == 0 &&
	   runner_wait(r, id, clock_mono() + 30, &end, &e) == 0 && strcmp(s.data, "typed") == 0 &&
	   end.code == 0, "STDIN reaches the command, and an empty one ends its input");

	char *wc[] = { "wc", "-c", NULL };
	cmd = (struct runner_cmd){ .argv = wc, .env = env_path, .flags = RP_RUN_STDIN,
	                           .output = sink_output, .arg = &s };
	s = (struct sink){ .len = 0 };
	size_t mib = 1u << 20;
	char *lots = calloc(1, mib);
	id = runner_start(r, &cmd, &e);
	ok(id && runner_stdin(r, id, lots, mib, &e) == 0 && runner_stdin(r, id, "", 0, &e) == 0 &&
	   runner_wait(r, id, clock_mono() + 30, &end, &e) == 0 && atoi(s.data) == (int)mib,
	   "a MiB of input arrives whole, however slowly the command reads: %s", s.data);
	free(lots);

	/* input is flow-controlled: a command that does not read it holds
	 * paddock's sender at the window, and one that reads gets it all */
	char *idle[] = { "sleep", "30", NULL };
	cmd = (struct runner_cmd){ .argv = idle, .env = env_path, .flags = RP_RUN_STDIN };
	id = runner_start(r, &cmd, &e);
	static char chunk[4096];
	size_t sent = 0;
	for (double until = clock_mono() + 1.5; id && clock_mono() < until;) {
		if (runner_stdin_room(r, id) >= sizeof chunk && runner_stdin(r, id, chunk, sizeof chunk,
		                                                             &e) == 0)
			sent += sizeof chunk;
		else if (runner_step(r, id, clock_mono() + 0.05, &e) < 0)
			break;
	}
	/* The pipe's buffer (64 KiB, at most 1 MiB) takes some first. */
	ok(id && sent >= RP_STDIN_WINDOW && sent <= RP_STDIN_WINDOW + (1u << 20) &&
	   runner_stdin_room(r, id) < sizeof chunk,
	   "input for a command that does not read it stops at the runner's window (%zu bytes "
	   "sent)", sent);
	ok(id && runner_kill(r, id, SIGKILL, &e) == 0 &&
	   runner_wait(r, id, clock_mono() + 30, &end, &e) == 0 && runner_stdin_room(r, id) == 0,
	   "a run that ended has no room for input");
	cmd = (struct runner_cmd){ .argv = wc, .env = env_path, .flags = RP_RUN_STDIN,
	                           .output = sink_output, .arg = &s };
	s = (struct sink){ .len = 0 };
	id = runner_start(r, &cmd, &e);
	sent = 0;
	size_t total = 8u << 20;
	for (double until = clock_mono() + 30; id && sent < total && clock_mono() < until;) {
		if (runner_stdin_room(r, id) >= sizeof chunk && runner_stdin(r, id, chunk, sizeof chunk,
		                                                             &e) == 0)
			sent += sizeof chunk;
		else if (runner_step(r, id, clock_mono() + 0.05, &e) < 0)
			break;
	}
	ok(id && sent == total && runner_stdin(r, id, "", 0, &e) == 0 &&
	   runner_wait(r, id, clock_mono() + 30, &end, &e) == 0 && atoi(s.data) == (int)total,
	   "8 MiB sent within the window, as the runner takes it, arrive whole: %s", s.data);

	/* runner_step returns once what came is handled, not at its
	 * deadline: a sender that waits for room goes on as the runner's
	 * TAKEN comes (it waited 0.2 s a window in sandbox_kube's own_run) */
	cmd = (struct runner_cmd){ .argv = wc, .env = env_path, .flags = RP_RUN_STDIN,
	                           .output = sink_output, .arg = &s };
	s = (struct sink){ .len = 0 };
	id = runner_start(r, &cmd, &e);
	for (sent = 0; id && runner_stdin_room(r, id) >= sizeof chunk && sent < (4u << 20);
	     sent += sizeof chunk)
		runner_stdin(r, id, chunk, sizeof chunk, &e);
	double t0 = clock_mono(), waited;
	int stepped = 0;
	while (id && stepped == 0 && runner_stdin_room(r, id) < sizeof chunk && clock_mono() < t0 + 20)
		stepped = runner_step(r, id, clock_mono() + 10, &e);
	waited = clock_mono() - t0;
	ok(id && stepped == 0 && runner_stdin_room(r, id) >= sizeof chunk && waited < 5,
	   "runner_step returns when the runner's TAKEN came, before its deadline (%.2f s of 10)",
	   waited);
	ok(id && runner_stdin(r, id, "", 0, &e) == 0 &&
	   runner_wait(r, id, clock_mono() + 30, &end, &e) == 0 && atoi(s.data) == (int)sent,
	   "(that run's input arrives whole: %s of %zu)", s.data, sent);

	/* a terminal */
	int pty_ok = sh(r, "stty size; test -t 0 && echo tty", RP_RUN_PTY, none, &end, &s) == 0 &&
	             strstr(s.data, "24 80") && strstr(s.data, "tty");
	ok(pty_ok, "a pty run has a terminal of its size");
	if (!pty_ok)
		printf("# read: %.*s\n", (int)strcspn(s.data, "\n"), s.data);
	char *shell[] = { "sh", "-c", "read x; stty size", NULL };
	cmd = (struct runner_cmd){ .argv = shell, .env = env_path, .flags = RP_RUN_PTY,
	                           .rows = 24, .cols = 80, .output = sink_output, .arg = &s };
	s = (struct sink){ .len = 0 };
	id = runner_start(r, &cmd, &e);
	ok(id && runner_resize(r, id, 30, 100, &e) == 0 && runner_stdin(r, id, "\n", 1, &e) == 0 &&
	   runner_wait(r, id, clock_mono() + 30, &end, &e) == 0 && strstr(s.data, "30 100"),
	   "RESIZE changes the terminal's size");

	/* reading again from an offset */
	ok(sh(r, "printf abcdefgh", 0, none, &end, &s) == 0, "(a run to read again)");
	uint32_t last = last_run;
	s = (struct sink){ .len = 0 };
	ok(runner_watch(r, last, 3, clock_mono() + 30, &e) == 0 && strcmp(s.data, "defgh") == 0 &&
	   s.first == 3, "WATCH sends a run's output again from the offset asked");
	ok(runner_watch(r, last, 50, clock_mono() + 30, &e) == -1 && runner_fault(r) == RUNNER_OK,
	   "an offset past the output is refused, and the session goes on");
	ok(runner_ping(r, clock_mono() + 30, &e) == 0, "PING is answered");

	/* WATCH while the run writes: frames in flight are not taken twice */
	char *counter[] = { "sh", "-c", "i=0; while [ $i -lt 400 ]; do echo line$i; i=$((i+1)); "
	                    "[ $((i % 40)) = 0 ] && sleep 0.02; done", NULL };
	static struct tape t;
	cmd = (struct runner_cmd){ .argv = counter, .env = env_path, .output = tape_output,
	                           .arg = &t };
	id = runner_start(r, &cmd, &e);
	while (id && t.next < 200 && runner_step(r, id, clock_mono() + 0.01, &e) == 0)
		;
	uint64_t before = t.next;
	t.next = 0;
	int wrc = runner_watch(r, id, 0, clock_mono() + 30, &e);
	int wait_rc = runner_wait(r, id, clock_mono() + 30, &end, &e);
	char *want = testlib_sh_out("i=0; while [ $i -lt 400 ]; do echo line$i; i=$((i+1)); done");
	ok(id && before > 0 && wrc == 0 && wait_rc == 0 && !t.bad && t.next == end.output &&
	   end.output == strlen(want) + 1 && strncmp(t.data, want, strlen(want)) == 0,
	   "WATCH from 0 mid-run: the whole output once, no gap, no repeat (%llu bytes read "
	   "before)", (unsigned long long)before);

	/* a fresh step ends the runs still going */
	cmd = (struct runner_cmd){ .argv = sleeper, .env = env_path };
	id = runner_start(r, &cmd, &e);
	struct runner_end killed;
	ok(id && sh(r, "true", RP_RUN_FRESH, none, &end, &s) == 0 &&
	   runner_wait(r, id, clock_mono() + 30, &killed, &e) == 0 &&
	   killed.how == RP_END_SIGNALED && killed.code == SIGKILL,
	   "a fresh step ends a run still going (killed) before it starts");

	/* files */
	char *src = testlib_fmt("%s/src.bin", dir);
	char *dst = testlib_fmt("%s/in.bin", dir);
	size_t size = 300000;
	unsigned char *data = malloc(size);
	for (size_t i = 0; i < size; i++)
		data[i] = (unsigned char)(i * 7 + i / 251);
	testlib_write(src, data, size);
	int fd = open(src, O_RDONLY);
	ok(runner_file_put(r, dst, 0640, fd, size, clock_mono() + 30, &e) == 0,
	   "FILE_PUT writes a file in chunks");
	close(fd);
	struct stat st;
	char *got = testlib_slurp(dst);
	ok(stat(dst, &st) == 0 && st.st_size == (off_t)size && (st.st_mode & 07777) == 0640 &&
	   got && memcmp(got, data, size) == 0, "it has the bytes and mode sent");
	free(got);
	FILE *back = tmpfile();
	unsigned mode = 0;
	int64_t n = runner_file_get(r, dst, fileno(back), size, &mode, clock_mono() + 30, &e);
	char *copy = malloc(size);
	ok(n == (int64_t)size && mode == 0640 && pread(fileno(back), copy, size, 0) == (ssize_t)size &&
	   memcmp(copy, data, size) == 0, "FILE_GET copies it back, with its mode");
	free(copy);
	fclose(back);
	back = tmpfile();
	ok(runner_file_get(r, dst, fileno(back), size - 1, NULL, clock_mono() + 30, &e) == -1 &&
	   runner_fault(r) == RUNNER_OK && strstr(e.msg, "too large"),
	   "a file bigger than the caller takes is refused, the session goes on: %s", e.msg);
	char *link = testlib_fmt("%s/link", dir);
	if (symlink(dst, link) < 0)
		printf("# symlink: %s\n", strerror(errno));
	ok(runner_file_get(r, link, fileno(back), size, NULL, clock_mono() + 30, &e) == -1 &&
	   runner_fault(r) == RUNNER_OK, "a link is not followed out: %s", e.msg);
	ok(runner_file_get(r, "/no/such/file", fileno(back), size, NULL, clock_mono() + 30, &e) == -1 &&
	   runner_fault(r) == RUNNER_OK, "a missing file is refused: %s", e.msg);
	fclose(back);
	fd = open(src, O_RDONLY);
	ok(runner_file_put(r, "/no/such/dir/x", 0600, fd, size, clock_mono() + 30, &e) == -1 &&
	   runner_fault(r) == RUNNER_OK, "a put the runner cannot write is refused: %s", e.msg);
	close(fd);

	/* the backends' copies on a session (sandbox_int.h) */
	char *dst2 = testlib_fmt("%s/prompt", dir);
	ok(sandbox_runner_put(r, src, dst2, 0644, size - 1, &e) == -1 && e.kind != ERR_RUNNER &&
	   strstr(e.msg, "over the cap") && access(dst2, F_OK) < 0 && runner_ping(r, clock_mono() + 10,
	   &e) == 0, "a file over the put's cap (a prompt too big) is refused before any byte "
	   "goes, the session goes on");
	ok(sandbox_runner_put(r, link, dst2, 0644, size, &e) == -1 && access(dst2, F_OK) < 0,
	   "a host link is not followed in: %s", e.msg);
	ok(sandbox_runner_put(r, src, dst2, 0644, size, &e) == 0 && stat(dst2, &st) == 0 &&
	   st.st_size == (off_t)size && (st.st_mode & 07777) == 0644, "a file within it is put");
	char *target = testlib_fmt("%s/target", dir), *hlink = testlib_fmt("%s/hlink", dir);
	testlib_write(target, "HOST", 4);
	if (symlink(target, hlink) < 0)
		printf("# symlink: %s\n", strerror(errno));
	got = NULL;
	ok(sandbox_runner_get(r, dst2, hlink, size, &e) == -1 && (got = testlib_slurp(target)) &&
	   strcmp(got, "HOST") == 0, "a get never writes through a host link: %s", e.msg);
	free(got);
	char *out2 = testlib_fmt("%s/out2", dir);
	ok(sandbox_runner_get(r, dst2, out2, size - 1, &e) == -1 && access(out2, F_OK) < 0 &&
	   runner_fault(r) == RUNNER_OK, "a get over its cap leaves no host file: %s", e.msg);
	ok(sandbox_runner_get(r, dst2, out2, size, &e) == 0 && stat(out2, &st) == 0 &&
	   st.st_size == (off_t)size, "a get within it copies the file out");
	free(data);

	/* fresh: what a step left running is gone before the next */
	ok(sh(r, "sleep 60 >/dev/null 2>&1 & echo $!; setsid sh -c 'sleep 61' </dev/null "
	      ">/dev/null 2>&1 & echo $!", 0, none, &end, &s) == 0, "(a step leaves processes)");
	pid_t left1 = 0, left2 = 0;
	sscanf(s.data, "%d %d", &left1, &left2);
	ok(left1 > 0 && alive(left1) && left2 > 0, "what a step leaves runs on after its END");
	ok(sh(r, "true", 0, none, &end, &s) == 0 && alive(left1),
	   "a step not flagged fresh leaves it alone");
	ok(sh(r, "echo next", RP_RUN_FRESH, none, &end, &s) == 0 && strcmp(s.data, "next\n") == 0,
	   "a fresh step runs");
	ok(!alive(left1) && !alive(left2),
	   "before it, everything else of the sandbox was killed (a new session's too)");

	/* the session's end kills what runs */
	ok(sh(r, "sleep 62 >/dev/null 2>&1 & echo $!", 0, none, &end, &s) == 0, "(another one)");
	pid_t left3 = atoi(s.data);
	int status = real_stop(r, pid);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0 && left3 > 0 && !alive(left3),
	   "closing the channel ends the runner and everything it started");
}

/* A frame the runner does not expect ends its session. */
static void test_real_hostile_host(void)
{
	int sv[2];
	socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv);
	pid_t pid = fork();
	if (pid == 0) {
		channel_to(sv[1], 3);
		execl(runner_bin, runner_bin, (char *)NULL);
		_exit(127);
	}
	close(sv[1]);
	struct rp_buf b = { 0 };
	struct rp_msg h = { .type = RP_HELLO, .version = RP_VERSION + 1 };
	add(&b, &h);
	(void)!write(sv[0], b.data, b.len);
	unsigned char buf[64];
	ssize_t n = 0, got;
	while ((got = read(sv[0], buf + n, sizeof buf - (size_t)n)) > 0)
		n += got;
	uint16_t type = 0;
	const unsigned char *body;
	size_t blen;
	struct rp_msg m = { 0 };
	ok(n > 0 && rp_frame(buf, (size_t)n, &type, &body, &blen) > 0 && type == RP_HELLO &&
	   rp_decode(type, body, blen, &m) == 0 && m.version == RP_VERSION,
	   "to another version the runner answers its own, then closes the channel");
	int st;
	waitpid(pid, &st, 0);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 2, "and exits 2");
	close(sv[0]);
	rp_buf_free(&b);

	socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv);
	pid = fork();
	if (pid == 0) {
		channel_to(sv[1], 3);
		execl(runner_bin, runner_bin, (char *)NULL);
		_exit(127);
	}
	close(sv[1]);
	struct err e = {{0}};
	struct runner *r = runner_open(sv[0], clock_mono() + 10, &e);
	struct sink s;
	struct runner_end end;
	struct rp_limits none = { 0 };
	sh(r, "sleep 63 >/dev/null 2>&1 & echo $!", 0, none, &end, &s);
	pid_t left = atoi(s.data);
	struct rp_msg bogus = { .type = RP_END, .id = 1, .text = "" };   /* only it sends END */
	b = (struct rp_buf){ 0 };
	add(&b, &bogus);
	(void)!write(runner_fd(r), b.data, b.len);
	rp_buf_free(&b);
	ok(runner_ping(r, clock_mono() + 10, &e) == -1 && runner_fault(r) == RUNNER_DIED,
	   "a frame the runner does not take ends the session: %s", e.msg);
	waitpid(pid, &st, 0);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 2 && left > 0 && !alive(left),
	   "and the runner killed what it ran");
	ok(runner_ping(r, clock_mono() + 10, &e) == -1 && strstr(e.msg, "is gone"),
	   "every later call fails the same way");
	runner_close(r);
}

/* Sends raw bytes to a fresh real runner (on fd 5, by --fd) after a good
 * HELLO; its exit status. */
static int real_raw(const void *bytes, size_t len)
{
	int sv[2];
	socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv);
	pid_t pid = fork();
	if (pid == 0) {
		channel_to(sv[1], 5);
		execl(runner_bin, runner_bin, "--fd", "5", (char *)NULL);
		_exit(127);
	}
	close(sv[1]);
	struct err e = {{0}};
	struct runner *r = runner_open(sv[0], clock_mono() + 10, &e);
	if (r)
		(void)!write(runner_fd(r), bytes, len);
	else
		printf("# %s\n", e.msg);
	int st = -1;
	waitpid(pid, &st, 0);
	runner_close(r);
	return r ? st : -1;
}

static void test_real_refusals(void)
{
	unsigned char unknown[8] = { 0, 0, 0, 0, 0, 200, 0, 0 };
	int st = real_raw(unknown, sizeof unknown);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 2,
	   "the runner (its channel on --fd 5) ends the session at an unknown type (status %#x)", st);
	unsigned char huge[4] = { 0xff, 0xff, 0xff, 0xff };
	st = real_raw(huge, sizeof huge);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 2,
	   "and at a length past the maximum, from its four bytes (status %#x)", st);
}

/* As PID 1 of a pid namespace (bubblewrap), where fresh is kill(-1). */
static void test_real_pid1(void)
{
	char *bwrap[] = { BWRAP_PATH, "--unshare-pid", "--as-pid-1", "--die-with-parent",
	                  "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", NULL };
	if (access(BWRAP_PATH, X_OK) != 0 || testlib_sh("%s --unshare-pid --ro-bind / / true",
	                                                BWRAP_PATH) != 0) {
		ok(1, "as PID 1 # SKIP bubblewrap cannot make a pid namespace here");
		return;
	}
	pid_t pid;
	struct runner *r = real_start(bwrap, &pid);
	ok(r && runner_pid1(r), "under bwrap --as-pid-1 the runner is PID 1");
	if (!r)
		return;
	struct sink s;
	struct runner_end end;
	struct rp_limits none = { 0 };
	sh(r, "sleep 60 >/dev/null 2>&1 & echo $!; setsid sh -c 'sleep 61 & wait' "
	   "</dev/null >/dev/null 2>&1 & echo $!", 0, none, &end, &s);
	pid_t a = 0, b = 0;
	sscanf(s.data, "%d %d", &a, &b);
	char *check = testlib_fmt("kill -0 %d 2>/dev/null && echo alive || echo gone", a);
	ok(sh(r, check, 0, none, &end, &s) == 0 && strcmp(s.data, "alive\n") == 0,
	   "a background process outlives its step");
	int one = 0, self = 0;
	char extra = 0;
	ok(sh(r, "cd /proc && echo [0-9]*", RP_RUN_FRESH, none, &end, &s) == 0 &&
	   sscanf(s.data, "%d %d %c", &one, &self, &extra) == 2 && one == 1 && self > 1,
	   "a fresh step sees only the runner and itself: %s", s.data);
	ok(sh(r, check, 0, none, &end, &s) == 0 && strcmp(s.data, "gone\n") == 0,
	   "what the earlier step left was killed: %d %s", a, s.data);
	int st = real_stop(r, pid);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the runner as PID 1 ends with its channel");
}

int main(void)
{
	const char *top = getenv("top_builddir");
	runner_bin = testlib_fmt("%s/paddock-runner", top ? top : ".");
	test_round_trips();
	test_partial_and_bad();
	test_hello();
	test_lies();
	test_send_stall();
	test_file_lies();
	/* The installed runner (static, no sanitizers), then the same code
	 * built as the tests are: a memory error in it fails there. */
	const char *bins[] = { runner_bin, testlib_fmt("%s/tests/paddock-runner-checked",
	                                                top ? top : ".") };
	for (int i = 0; i < 2; i++) {
		runner_bin = bins[i];
		printf("# %s\n", runner_bin);
		char *dir = testlib_tmpdir("runner");
		test_real(dir);
		test_real_hostile_host();
		test_real_refusals();
		test_real_pid1();
	}
	testlib_end();
	return tap_done();
}
