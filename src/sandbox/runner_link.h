/* runner_link: the bytes of a runner session below its frames
 * (runner_proto.h), so that a session can outlive the connection that
 * carries it.  One implementation compiled into both ends, like
 * runner_proto.c: libc only, no messages (a failure is an enum rl_err the
 * caller words).
 *
 * Each end counts the bytes of the session's frames it sent and those it
 * received whole; RECEIVED and RESUME are the link's own frames and count
 * for neither.  A frame is counted when its last byte came, so every
 * count is at a frame boundary.  With keep on, an end holds what it sent
 * until the other end acknowledged it (RECEIVED), at most what its caller
 * lets it queue (RL_HOLD_MAX on paddock's side: a sender at the bound
 * waits for an acknowledgement, which is flow control too).  With ack on
 * it sends RECEIVED once RL_ACK_EVERY bytes came since the last one.
 * Link frames go out only between the session's frames.
 *
 * A connection broke: each end takes a new one (rl_reconnect), sends
 * RESUME with what it received first and sends nothing else until the
 * other end's RESUME came; then it sends again from the other's count
 * (bytes of a frame that came only in part on the old connection are
 * dropped and come again).  A count outside what the sender still holds
 * (below what was acknowledged, past what was sent, or inside a frame),
 * a RECEIVED past what was written, a RESUME where none is due, or any
 * other frame before an awaited RESUME, is the other end's lie: the
 * session ends.
 *
 * Without keep (bwrap, the process backend: no second connection can
 * come) what is written is dropped at once, as before this layer. */
#ifndef PADDOCK_RUNNER_LINK_H
#define PADDOCK_RUNNER_LINK_H

#include <stddef.h>
#include <stdint.h>

#include "runner_proto.h"

/* RECEIVED after this many bytes received since the last. */
#define RL_ACK_EVERY (64u << 10)
/* The most bytes paddock's end holds unacknowledged before it waits. */
#define RL_HOLD_MAX (8u << 20)

enum rl_err {
	RL_OK = 0,
	RL_BAD_ACK,       /* a RECEIVED count outside what was written */
	RL_BAD_RESUME,    /* a RESUME count outside what is still held */
	RL_NO_RESUME,     /* another frame where RESUME was awaited */
	RL_STRAY_RESUME,  /* a RESUME on a connection that did not resume */
	RL_BAD_FRAME,     /* a RECEIVED or RESUME frame that does not decode */
	RL_NOMEM,
};

struct rl {
	/* What was sent and is held: whole frames, out.data[skip..out.len)
	 * (the bytes before skip are dropped, compacted lazily), base the
	 * session offset of out.data[skip]. */
	struct rp_buf out;
	size_t skip;
	uint64_t base;
	size_t wpos;           /* out.data[skip..skip+wpos) written on this connection */
	size_t wend;           /* where the frame being written ends (from skip) */
	uint64_t acked;        /* the other end's last count */
	struct rp_buf ctl;     /* link frames to write between frames */
	size_t ctl_pos;
	struct rp_buf part;    /* the frame coming in, in part */
	uint64_t received;     /* bytes of whole frames received */
	uint64_t told;         /* the count last sent in RECEIVED */
	int keep, ack;
	int awaiting;          /* a new connection: the other's RESUME first */
	unsigned resumes;      /* connections resumed */
};

/* A link at the session's start: everything zero but the flags. */
void rl_init(struct rl *l, int keep, int ack);
void rl_free(struct rl *l);
/* Turns keep on from now (what is already written is not held: a resume
 * to before it is refused). */
void rl_keep(struct rl *l);

/* Queues m as one frame of the session (rp_encode's errors). */
int rl_send(struct rl *l, const struct rp_msg *m);
/* Bytes to write on this connection (the caller polls for POLLOUT). */
size_t rl_pending(const struct rl *l);
/* Bytes held: written or not, not acknowledged. */
size_t rl_held(const struct rl *l);

/* Writes what it can to fd without blocking: 0 (EAGAIN included), or -1
 * with errno (the connection is broken). */
int rl_write(struct rl *l, int fd);
/* Takes n bytes read from the connection: link frames handled, every whole
 * frame of the session appended to in (a header rp_frame refuses too, and
 * everything after it, for the caller to refuse).  RL_OK or why the
 * session ends. */
enum rl_err rl_feed(struct rl *l, const unsigned char *p, size_t n, struct rp_buf *in);
/* A new connection for the session: RESUME queued, the partial frame of
 * the old one dropped, nothing else written until the other's RESUME. */
int rl_reconnect(struct rl *l);

#endif
