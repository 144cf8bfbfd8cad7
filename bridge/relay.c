/* relay: byte relays between pairs of stream sockets (relay.h). */
#define _GNU_SOURCE
#include "relay.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int relay_init(struct relay *r, size_t max)
{
	memset(r, 0, sizeof *r);
	r->pairs = calloc(max ? max : 1, sizeof *r->pairs);
	if (!r->pairs)
		return -1;
	r->max = max;
	return 0;
}

static void relay_pair_close(struct relay_pair *p)
{
	if (p->up.buf)
		explicit_bzero(p->up.buf, p->up.wipe);
	if (p->a >= 0)
		close(p->a);
	if (p->b >= 0)
		close(p->b);
	p->a = p->b = -1;
	free(p->up.buf);
	free(p->down.buf);
	p->up.buf = p->down.buf = NULL;
}

void relay_free(struct relay *r)
{
	for (size_t i = 0; i < r->n; i++)
		relay_pair_close(&r->pairs[i]);
	free(r->pairs);
	memset(r, 0, sizeof *r);
}

int relay_full(const struct relay *r)
{
	return r->n >= r->max;
}

int relay_add(struct relay *r, int a, int b, const void *first, size_t len)
{
	if (relay_full(r) || len > RELAY_BUF) {
		close(a);
		close(b);
		return -1;
	}
	struct relay_pair *p = &r->pairs[r->n];
	memset(p, 0, sizeof *p);
	p->a = a;
	p->b = b;
	p->up.buf = malloc(RELAY_BUF);
	p->down.buf = malloc(RELAY_BUF);
	if (!p->up.buf || !p->down.buf) {
		relay_pair_close(p);
		return -1;
	}
	if (len)
		memcpy(p->up.buf, first, len);
	p->up.len = p->up.wipe = len;
	r->n++;
	return 0;
}

size_t relay_pollfds(struct relay *r, struct pollfd *pfd)
{
	size_t n = 0;
	for (size_t i = 0; i < r->n; i++) {
		struct relay_pair *p = &r->pairs[i];
		pfd[n++] = (struct pollfd){
			.fd = p->a,
			.events = (short)((!p->up.eof && !p->up.len ? POLLIN : 0) |
			                  (p->down.len ? POLLOUT : 0)) };
		pfd[n++] = (struct pollfd){
			.fd = p->b,
			.events = (short)((!p->down.eof && !p->down.len ? POLLIN : 0) |
			                  (p->up.len ? POLLOUT : 0)) };
	}
	r->polled = r->n;
	return n;
}

/* Moves what `from` has into h, and what h holds into `to`.  -1 when the
 * pair is done with (a write failed: the far side is gone). */
static int relay_pump(int from, int to, struct relay_half *h, short rev_from)
{
	if ((rev_from & (POLLIN | POLLHUP | POLLERR)) && !h->eof && h->len == 0) {
		ssize_t n = read(from, h->buf, RELAY_BUF);
		if (n > 0) {
			h->len = (size_t)n;
			h->off = 0;
		} else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
			h->eof = 1;
		}
	}
	while (h->off < h->len) {
		ssize_t n = write(to, h->buf + h->off, h->len - h->off);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				break;
			return -1;
		}
		h->off += (size_t)n;
	}
	if (h->off == h->len) {
		h->len = h->off = 0;
		explicit_bzero(h->buf, h->wipe);
		h->wipe = 0;
	}
	if (h->eof && h->len == 0 && !h->shut) {
		shutdown(to, SHUT_WR);
		h->shut = 1;
	}
	return 0;
}

void relay_step(struct relay *r, const struct pollfd *pfd)
{
	for (size_t i = 0; i < r->polled && i < r->n; i++) {
		struct relay_pair *p = &r->pairs[i];
		short ra = pfd[2 * i].revents, rb = pfd[2 * i + 1].revents;
		int err = relay_pump(p->a, p->b, &p->up, ra) < 0 ||
		          relay_pump(p->b, p->a, &p->down, rb) < 0;
		/* A hang-up after the end of what it sent: that side is gone
		 * both ways (and would keep waking poll). */
		int a_gone = (ra & (POLLHUP | POLLERR)) && p->up.eof;
		int b_gone = (rb & (POLLHUP | POLLERR)) && p->down.eof && p->down.shut;
		if (err || (p->up.shut && p->down.shut) || a_gone || b_gone ||
		    ((ra | rb) & POLLNVAL))
			relay_pair_close(p);
	}
	/* Compacts the closed pairs away. */
	size_t k = 0;
	for (size_t i = 0; i < r->n; i++)
		if (r->pairs[i].a >= 0)
			r->pairs[k++] = r->pairs[i];
	r->n = k;
	r->polled = 0;
}
