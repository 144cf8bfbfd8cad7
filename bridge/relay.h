/* relay: byte relays between pairs of stream sockets, for one poll loop
 * (paddock-bridge's connections to the gateway's unix sockets,
 * paddock-runner's gateway connections through the front door).
 *
 * A pair is two non-blocking descriptors, `a` (the sandbox's side) and `b`
 * (the far side); what one side sends is written to the other through a
 * bounded buffer per direction (RELAY_BUF bytes: a side that does not
 * read stops the other being read), and the end of what a side sends is
 * passed on as a half-close (shutdown SHUT_WR) once its buffer is
 * written.  A pair ends, and both descriptors are closed, when both
 * directions have ended, a write fails, or a side hangs up after the end
 * of what it sent.
 *
 * relay_add may queue bytes for `b` ahead of anything `a` sends (a
 * preamble, which may hold a credential: they are cleared from the buffer
 * once written), which also makes `b` a socket whose non-blocking connect
 * may still be in progress: its first write waits for the connection, and
 * a connection that failed ends the pair.
 *
 * libc only (paddock-bridge and paddock-runner build it): no allocation
 * but the pairs' buffers, no output.  One struct relay is used by one
 * thread. */
#ifndef PADDOCK_RELAY_H
#define PADDOCK_RELAY_H

#include <poll.h>
#include <stddef.h>

/* Each direction's buffer. */
#define RELAY_BUF 65536

struct relay_half {
	char *buf;          /* RELAY_BUF bytes, while the pair is open */
	size_t len, off;
	int eof;            /* the reading side ended: shut the other's write side once drained */
	int shut;
	size_t wipe;        /* relay_add's first bytes, cleared once written */
};

struct relay_pair {
	int a, b;
	struct relay_half up, down;   /* up: a -> b; down: b -> a */
};

struct relay {
	struct relay_pair *pairs;   /* max of them, the first n open */
	size_t n, max;
	size_t polled;              /* the pairs relay_pollfds described */
};

/* Room for max pairs (the array is the relay's); -1 when memory is out. */
int relay_init(struct relay *r, size_t max);
/* Closes every pair and frees what the relay holds. */
void relay_free(struct relay *r);
/* Whether another pair would be refused. */
int relay_full(const struct relay *r);
/* Takes a and b (closed by the relay from here on, failure included) as
 * a new pair; first (len bytes, at most RELAY_BUF) is written to b before
 * anything from a.  -1 when the relay is full or memory is out. */
int relay_add(struct relay *r, int a, int b, const void *first, size_t len);
/* Describes every pair's descriptors in pfd (room for 2 * r->max
 * entries); returns how many it wrote. */
size_t relay_pollfds(struct relay *r, struct pollfd *pfd);
/* Moves the bytes poll said were ready (pfd: what relay_pollfds wrote,
 * with poll's revents) and closes the pairs that ended.  Pairs added
 * since relay_pollfds wait for the next round. */
void relay_step(struct relay *r, const struct pollfd *pfd);

#endif
