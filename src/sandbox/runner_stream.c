/* runner_stream: a session's gateway streams (runner_stream.h).  libc
 * only: the runner links it (runner/paddock-runner.c). */
#include "autoconfig.h"
#include "runner_stream.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

void rs_init(struct rs_set *s, size_t max, int opener)
{
	memset(s, 0, sizeof *s);
	s->max = max;
	s->opener = opener;
}

int rs_full(const struct rs_set *s)
{
	return s->n >= s->max;
}

struct rs_stream *rs_find(const struct rs_set *s, uint32_t id)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->s[i]->id == id && s->s[i]->fd >= 0)
			return s->s[i];
	return NULL;
}

/* A frame to the peer; a frame that cannot be queued (no memory) is one
 * the peer never gets: the caller's buffer is then as it was, and the
 * peer's window or end waits (the session's own frames fail the same way
 * soon after). */
static void rs_send(struct rp_buf *out, const struct rp_msg *m)
{
	(void)rp_encode(out, m);
}

/* Closes a stream's socket: a reset where it has one (a stream gone, not
 * ended), marked for rs_sweep. */
static void rs_drop(struct rs_stream *st, int reset)
{
	if (st->fd < 0)
		return;
	if (reset) {
		struct linger l = { 1, 0 };
		setsockopt(st->fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
	}
	close(st->fd);
	st->fd = -1;
	rp_buf_free(&st->in);
}

/* The stream is gone on this side: SHUT with err to the peer. */
static void rs_shut(struct rs_stream *st, int err, struct rp_buf *out)
{
	struct rp_msg m = { .type = RP_SHUT, .id = st->id, .err = (uint32_t)err };
	rs_send(out, &m);
	rs_drop(st, 1);
}

/* Frees the streams whose socket was closed. */
static void rs_sweep(struct rs_set *s)
{
	for (size_t i = 0; i < s->n;) {
		if (s->s[i]->fd >= 0) {
			i++;
			continue;
		}
		free(s->s[i]);
		s->s[i] = s->s[--s->n];
	}
}

void rs_free(struct rs_set *s)
{
	for (size_t i = 0; i < s->n; i++) {
		rs_drop(s->s[i], 0);
		free(s->s[i]);
	}
	free(s->s);
	memset(s, 0, sizeof *s);
}

static struct rs_stream *rs_add(struct rs_set *s, uint32_t id, int fd, uint32_t port)
{
	if (rs_full(s))
		return NULL;
	if (!s->s && !(s->s = calloc(s->max, sizeof *s->s)))
		return NULL;
	struct rs_stream *st = calloc(1, sizeof *st);
	if (!st)
		return NULL;
	st->id = id;
	st->fd = fd;
	st->port = port;
	st->polled = -1;
	s->s[s->n++] = st;
	return st;
}

/* Both directions ended: the stream is done. */
static void rs_done(struct rs_stream *st)
{
	if (st->in_shut && st->out_end)
		rs_drop(st, 0);
}

int rs_open(struct rs_set *s, int fd, uint32_t port, struct rp_buf *out)
{
	if (!s->opener || s->last == UINT32_MAX)
		return -1;
	struct rs_stream *st = rs_add(s, s->last + 1, fd, port);
	if (!st)
		return -1;
	s->last = st->id;
	struct rp_msg m = { .type = RP_OPEN, .id = st->id, .port = port };
	rs_send(out, &m);
	return 0;
}

enum rs_lie rs_open_check(const struct rs_set *s, const struct rp_msg *m)
{
	if (s->opener)
		return RS_WRONG_WAY;
	return m->id <= s->last ? RS_REOPEN : RS_OK;
}

enum rs_lie rs_opened(struct rs_set *s, const struct rp_msg *m, int fd, int err,
                      struct rp_buf *out)
{
	enum rs_lie lie = rs_open_check(s, m);
	if (lie != RS_OK) {
		if (fd >= 0)
			close(fd);
		return lie;
	}
	s->last = m->id;
	if (fd >= 0 && !rs_add(s, m->id, fd, m->port)) {
		close(fd);
		fd = -1;
		err = EMFILE;
	}
	if (fd < 0) {
		struct rp_msg r = { .type = RP_SHUT, .id = m->id, .err = (uint32_t)err };
		rs_send(out, &r);
	}
	return RS_OK;
}

/* Writes what the stream holds for its socket; then an ACK when a quarter
 * of the window was passed on or nothing is left, and the peer's end
 * passed on as a shutdown once all before it is written. */
static void rs_write(struct rs_stream *st, struct rp_buf *out)
{
	while (st->in.len) {
		ssize_t n = send(st->fd, st->in.data, st->in.len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (n <= 0) {
			rs_shut(st, n < 0 ? errno : EPIPE, out);
			return;
		}
		rp_buf_consume(&st->in, (size_t)n);
		st->in_passed += (uint64_t)n;
	}
	if (!st->in.len)
		rp_buf_free(&st->in);
	if (st->in_passed > st->in_told &&
	    (!st->in.len || st->in_passed - st->in_told >= RP_STREAM_WINDOW / 4)) {
		struct rp_msg a = { .type = RP_ACK, .id = st->id, .offset = st->in_passed };
		rs_send(out, &a);
		st->in_told = st->in_passed;
	}
	if (st->in_end && !st->in.len && !st->in_shut) {
		shutdown(st->fd, SHUT_WR);
		st->in_shut = 1;
		rs_done(st);
	}
}

/* Reads one chunk from the stream's socket, within the window, and
 * sends it; its EOF is the direction's end. */
static void rs_read(struct rs_stream *st, struct rp_buf *out)
{
	unsigned char buf[RP_CHUNK];
	uint64_t ahead = st->out_sent - st->out_acked;
	if (st->out_end || ahead >= RP_STREAM_WINDOW)
		return;
	size_t want = RP_STREAM_WINDOW - ahead < sizeof buf ? (size_t)(RP_STREAM_WINDOW - ahead)
	                                                    : sizeof buf;
	ssize_t n = recv(st->fd, buf, want, MSG_DONTWAIT);
	if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK))
		return;
	if (n < 0) {
		rs_shut(st, errno, out);
		return;
	}
	struct rp_msg d = { .type = RP_DATA, .id = st->id, .data = buf, .len = (size_t)n };
	rs_send(out, &d);
	if (n == 0) {
		st->out_end = 1;
		rs_done(st);
		return;
	}
	st->out_sent += (uint64_t)n;
}

/* The peer's DATA for a stream that is open here. */
static enum rs_lie rs_data(struct rs_stream *st, const struct rp_msg *m, struct rp_buf *out)
{
	if (st->in_end)
		return RS_AFTER_END;
	if (m->len == 0) {
		st->in_end = 1;
		rs_write(st, out);
		return RS_OK;
	}
	/* What the peer may have unacknowledged: past what this side said
	 * it passed on, the window at most. */
	if (m->len > RP_STREAM_WINDOW - (st->in_got - st->in_told))
		return RS_WINDOW;
	if (rp_buf_add(&st->in, m->data, m->len) < 0) {
		rs_shut(st, ENOMEM, out);
		return RS_OK;
	}
	st->in_got += m->len;
	rs_write(st, out);
	return RS_OK;
}

enum rs_lie rs_frame(struct rs_set *s, const struct rp_msg *m, struct rp_buf *out)
{
	if (m->type == RP_OPEN) {
		if (s->opener)
			return RS_WRONG_WAY;
		return rs_opened(s, m, -1, ECONNREFUSED, out);
	}
	if (m->id == 0 || m->id > s->last)
		return RS_UNKNOWN;
	struct rs_stream *st = rs_find(s, m->id);
	if (!st)
		return RS_OK;   /* ended here; the peer did not know yet */
	enum rs_lie lie = RS_OK;
	switch (m->type) {
	case RP_DATA:
		lie = rs_data(st, m, out);
		break;
	case RP_ACK:
		if (m->offset < st->out_acked || m->offset > st->out_sent)
			lie = RS_ACK;
		else
			st->out_acked = m->offset;
		break;
	case RP_SHUT:
		rs_drop(st, 1);
		break;
	default:
		break;
	}
	rs_sweep(s);
	return lie;
}

size_t rs_pollfds(struct rs_set *s, struct pollfd *pfd, int room)
{
	size_t k = 0;
	for (size_t i = 0; i < s->n; i++) {
		struct rs_stream *st = s->s[i];
		short ev = 0;
		if (room && !st->out_end && st->out_sent - st->out_acked < RP_STREAM_WINDOW)
			ev |= POLLIN;
		if (st->in.len)
			ev |= POLLOUT;
		st->polled = -1;
		if (!ev || st->fd < 0)
			continue;
		pfd[k] = (struct pollfd){ st->fd, ev, 0 };
		st->polled = (int)k++;
	}
	s->polled = k;
	return k;
}

void rs_step(struct rs_set *s, const struct pollfd *pfd, struct rp_buf *out)
{
	for (size_t i = 0; i < s->n; i++) {
		struct rs_stream *st = s->s[i];
		if (st->polled < 0 || (size_t)st->polled >= s->polled || st->fd < 0)
			continue;
		const struct pollfd *p = &pfd[st->polled];
		st->polled = -1;
		if (p->fd != st->fd || !p->revents)
			continue;
		if (st->in.len && (p->revents & (POLLOUT | POLLERR | POLLHUP)))
			rs_write(st, out);
		if (st->fd >= 0 && (p->events & POLLIN) && (p->revents & (POLLIN | POLLERR | POLLHUP)))
			rs_read(st, out);
	}
	rs_sweep(s);
}
