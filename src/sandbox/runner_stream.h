/* runner_stream: the gateway streams of a runner session (runner_proto.h,
 * "Gateway streams"), one implementation for both ends: paddock's
 * (runner.c: each stream a connection to the gateway's bridge socket) and
 * the runner's (runner/paddock-runner.c: each stream a connection an agent
 * made to a gateway port on the sandbox's loopback).  libc only, like
 * runner_proto.c: no messages (a lie is a code the caller words), no
 * allocation but the set's array and each stream's buffer.
 *
 * A set holds the streams of one end of one session, each with its own
 * socket (non-blocking; the set's from the moment it is added, closed when
 * the stream ends).  What the set has to send (DATA, ACK, SHUT, and the
 * runner's OPEN) is appended to the caller's frame buffer; the caller
 * hands it the peer's stream frames (rs_frame) and its poll loop's turn
 * (rs_pollfds, then rs_step).  Memory: a stream's buffer holds what the
 * peer sent and the socket has not taken yet, at most RP_STREAM_WINDOW
 * (a peer that sends more lies), and is freed whenever it drains; what a
 * stream reads from its socket goes straight into the caller's buffer,
 * RP_STREAM_WINDOW ahead of the peer's ACK at most.
 *
 * A stream ends when both its directions ended (the peer's end passed on
 * as a shutdown of the socket's write side, the socket's EOF sent as an
 * empty DATA), or at a SHUT either way (a failed read or write here sends
 * one): the socket is closed then, a reset where the socket has one.  One
 * set is used by one thread. */
#ifndef PADDOCK_RUNNER_STREAM_H
#define PADDOCK_RUNNER_STREAM_H

#include <poll.h>
#include <stddef.h>
#include <stdint.h>

#include "runner_proto.h"

struct rs_stream {
	uint32_t id;
	int fd;
	uint32_t port;
	/* The peer's bytes, on their way to the socket. */
	struct rp_buf in;
	uint64_t in_got, in_passed, in_told;   /* received, written, ACKed */
	int in_end, in_shut;                   /* the peer's end came; passed on */
	/* The socket's bytes, on their way to the peer. */
	uint64_t out_sent, out_acked;
	int out_end;                           /* EOF read and sent */
	int polled;                            /* its entry in rs_pollfds, or -1 */
};

struct rs_set {
	struct rs_stream **s;   /* n of them, room for max */
	size_t n, max;
	uint32_t last;          /* the highest stream id opened in the session */
	int opener;             /* 1: this end sends OPEN (the runner) */
	size_t polled;          /* the entries rs_pollfds wrote */
};

/* Why a peer's frame cannot be believed. */
enum rs_lie {
	RS_OK = 0,
	RS_UNKNOWN,      /* a stream id never opened */
	RS_REOPEN,       /* an OPEN whose id is not above every earlier one */
	RS_AFTER_END,    /* DATA after that direction's end */
	RS_WINDOW,       /* DATA past RP_STREAM_WINDOW unacknowledged */
	RS_ACK,          /* an ACK behind an earlier one or past what was sent */
	RS_WRONG_WAY,    /* an OPEN sent to the end that opens */
};

/* An empty set of at most max streams at once; opener as above. */
void rs_init(struct rs_set *s, size_t max, int opener);
/* Closes every stream's socket and frees what the set holds. */
void rs_free(struct rs_set *s);
/* Whether another stream would be refused. */
int rs_full(const struct rs_set *s);
/* The opener's: fd (a connection accepted on port) becomes a new stream,
 * OPEN appended to out.  -1 when the set is full, its ids are spent or
 * memory is out (fd is then the caller's still). */
int rs_open(struct rs_set *s, int fd, uint32_t port, struct rp_buf *out);
/* The other end's answer to an OPEN (m): checks its id, then takes fd as
 * the stream (fd < 0: refused, SHUT with err appended; a full set or no
 * memory refuses it too, closing fd).  RS_OK or the lie. */
enum rs_lie rs_opened(struct rs_set *s, const struct rp_msg *m, int fd, int err,
                      struct rp_buf *out);
/* Checks an OPEN's id without taking it (the caller decides, then calls
 * rs_opened). */
enum rs_lie rs_open_check(const struct rs_set *s, const struct rp_msg *m);
/* A DATA, ACK or SHUT of the peer's; what it causes is appended to out
 * (nothing: frames for a stream that ended are dropped).  RS_OK or the lie. */
enum rs_lie rs_frame(struct rs_set *s, const struct rp_msg *m, struct rp_buf *out);
/* Describes the sockets that need the poll loop in pfd (room for s->max
 * entries): reads while the window has room and room is set (the
 * caller's buffer is not too full), writes while a buffer holds bytes.
 * Returns how many it wrote. */
size_t rs_pollfds(struct rs_set *s, struct pollfd *pfd, int room);
/* Moves what poll said is ready (pfd: rs_pollfds' entries with poll's
 * revents), appending the frames it makes to out. */
void rs_step(struct rs_set *s, const struct pollfd *pfd, struct rp_buf *out);
/* The stream of id, or NULL (tests). */
struct rs_stream *rs_find(const struct rs_set *s, uint32_t id);

#endif
