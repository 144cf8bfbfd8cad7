/* runner_link: a session's bytes below its frames (runner_link.h).
 * libc only: the runner links it (runner/paddock-runner.c). */
#include "autoconfig.h"
#include "runner_link.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

void rl_init(struct rl *l, int keep, int ack)
{
	memset(l, 0, sizeof *l);
	l->keep = keep;
	l->ack = ack;
}

void rl_free(struct rl *l)
{
	rp_buf_free(&l->out);
	rp_buf_free(&l->ctl);
	rp_buf_free(&l->part);
}

void rl_keep(struct rl *l)
{
	l->keep = 1;
}

size_t rl_held(const struct rl *l)
{
	return l->out.len - l->skip;
}

size_t rl_pending(const struct rl *l)
{
	return l->ctl.len - l->ctl_pos + (l->awaiting ? 0 : rl_held(l) - l->wpos);
}

int rl_send(struct rl *l, const struct rp_msg *m)
{
	return rp_encode(&l->out, m);
}

/* The length of the held frame at offset pos (from skip): out holds whole
 * frames only, so its header is there and sound. */
static size_t frame_at(const struct rl *l, size_t pos)
{
	const unsigned char *h = l->out.data + l->skip + pos;
	return RP_HEADER + ((size_t)h[0] << 24 | (size_t)h[1] << 16 | (size_t)h[2] << 8 | h[3]);
}

/* Whether d bytes of what is held end at a frame's end. */
static int at_boundary(const struct rl *l, size_t d)
{
	size_t pos = 0;
	while (pos < d)
		pos += frame_at(l, pos);
	return pos == d;
}

/* Forgets the first d held bytes (d <= wpos, a frame boundary); the
 * buffer is moved down only once what it skips is worth it. */
static void drop(struct rl *l, size_t d)
{
	l->skip += d;
	l->base += d;
	l->wpos -= d;
	l->wend -= d;
	if (l->skip == l->out.len) {
		l->out.len = l->skip = 0;
	} else if (l->skip >= (64u << 10) && l->skip >= l->out.len / 2) {
		rp_buf_consume(&l->out, l->skip);
		l->skip = 0;
	}
	/* A burst's buffer is not kept for a resumable session's life (a
	 * supervisor's, for hours): once what is held fits in an eighth of
	 * it, a smaller one (a failed realloc keeps the old). */
	size_t held = rl_held(l);
	if (l->keep && l->out.cap > 4 * RL_ACK_EVERY && held <= l->out.cap / 8) {
		if (l->skip) {
			rp_buf_consume(&l->out, l->skip);
			l->skip = 0;
		}
		size_t cap = held > 256 ? held * 2 : 512;
		unsigned char *p = realloc(l->out.data, cap);
		if (p) {
			l->out.data = p;
			l->out.cap = cap;
		}
	}
}

static ssize_t put(int fd, const void *p, size_t n)
{
	ssize_t w = send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
	if (w < 0 && errno == ENOTSOCK)
		w = write(fd, p, n);
	return w;
}

int rl_write(struct rl *l, int fd)
{
	for (;;) {
		size_t held = rl_held(l), lim;
		const unsigned char *p;
		int ctl = l->ctl_pos < l->ctl.len && l->wpos == l->wend;
		if (ctl) {
			p = l->ctl.data + l->ctl_pos;
			lim = l->ctl.len - l->ctl_pos;
		} else if (l->awaiting || l->wpos == held) {
			return 0;
		} else {
			/* With a link frame waiting: only to this frame's end. */
			size_t end = l->ctl.len ? l->wend : held;
			p = l->out.data + l->skip + l->wpos;
			lim = end - l->wpos;
		}
		ssize_t n = put(fd, p, lim);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (n <= 0) {
			if (n == 0)
				errno = EPIPE;
			return -1;
		}
		if (ctl) {
			l->ctl_pos += (size_t)n;
			if (l->ctl_pos == l->ctl.len)
				l->ctl.len = l->ctl_pos = 0;
			continue;
		}
		l->wpos += (size_t)n;
		while (l->wend < l->wpos)
			l->wend += frame_at(l, l->wend);
		if (!l->keep)
			drop(l, l->wpos);
	}
}

static int queue_ctl(struct rl *l, enum rp_type type, uint64_t count)
{
	struct rp_msg m = { .type = type, .offset = count };
	return rp_encode(&l->ctl, &m);
}

static enum rl_err on_received(struct rl *l, uint64_t c)
{
	if (c < l->acked || c > l->base + l->wpos)
		return RL_BAD_ACK;
	if (l->keep && c > l->base) {
		size_t d = (size_t)(c - l->base);
		if (!at_boundary(l, d))
			return RL_BAD_ACK;
		drop(l, d);
	}
	l->acked = c;
	return RL_OK;
}

static enum rl_err on_resume(struct rl *l, uint64_t c)
{
	if (!l->awaiting)
		return RL_STRAY_RESUME;
	if (c < l->acked || c < l->base || c > l->base + rl_held(l) ||
	    !at_boundary(l, (size_t)(c - l->base)))
		return RL_BAD_RESUME;
	/* From the other end's count on, everything again. */
	l->wpos = l->wend = (size_t)(c - l->base);
	drop(l, l->wpos);
	l->acked = c;
	l->awaiting = 0;
	return RL_OK;
}

enum rl_err rl_feed(struct rl *l, const unsigned char *p, size_t n, struct rp_buf *in)
{
	if (rp_buf_add(&l->part, p, n) < 0)
		return RL_NOMEM;
	enum rl_err rc = RL_OK;
	size_t pos = 0;
	while (pos < l->part.len) {
		uint16_t type;
		const unsigned char *body;
		size_t blen;
		long fl = rp_frame(l->part.data + pos, l->part.len - pos, &type, &body, &blen);
		if (fl == 0)
			break;
		if (fl < 0) {
			/* The caller's to refuse, as it would without this layer. */
			if (rp_buf_add(in, l->part.data + pos, l->part.len - pos) < 0)
				rc = RL_NOMEM;
			pos = l->part.len;
			break;
		}
		if (type == RP_RECEIVED || type == RP_RESUME) {
			struct rp_msg m;
			if (rp_decode(type, body, blen, &m) < 0) {
				rc = errno == ENOMEM ? RL_NOMEM : RL_BAD_FRAME;
				break;
			}
			if (type == RP_RESUME)
				rc = on_resume(l, m.offset);
			else
				rc = l->awaiting ? RL_NO_RESUME : on_received(l, m.offset);
			if (rc != RL_OK)
				break;
		} else if (l->awaiting) {
			rc = RL_NO_RESUME;
			break;
		} else {
			if (rp_buf_add(in, l->part.data + pos, (size_t)fl) < 0) {
				rc = RL_NOMEM;
				break;
			}
			l->received += (uint64_t)fl;
		}
		pos += (size_t)fl;
	}
	/* After a lie nothing more of this connection is read. */
	rp_buf_consume(&l->part, rc == RL_OK ? pos : l->part.len);
	if (!l->part.len && l->part.cap > 4 * RL_ACK_EVERY)
		rp_buf_free(&l->part);
	if (rc == RL_OK && l->ack && l->received - l->told >= RL_ACK_EVERY) {
		if (queue_ctl(l, RP_RECEIVED, l->received) < 0)
			return RL_NOMEM;
		l->told = l->received;
	}
	return rc;
}

int rl_reconnect(struct rl *l)
{
	l->part.len = 0;
	l->ctl.len = l->ctl_pos = 0;
	l->wpos = l->wend = 0;
	l->awaiting = 1;
	l->resumes++;
	l->told = l->received;
	return queue_ctl(l, RP_RESUME, l->received);
}
