/* runner: paddock's end of a sandbox session with paddock-runner
 * (runner/paddock-runner.c; the frames are runner_proto.h).
 *
 * What a backend does with it (DESIGN.md, "The runner"): start the
 * sandbox with paddock-runner as its PID 1 and one end of a socketpair on
 * the runner's fd 3, hand the other end to runner_open, then run each step
 * of the agent's side (agent, tests, hand-off, home archive, the next
 * round's agent, the reviewer's shell) with runner_run on that one
 * session, every step after the agent's with RP_RUN_FRESH; files go in and
 * out with runner_file_put and runner_file_get.  The verification gets a
 * sandbox (and session) of its own.
 *
 * Trust: the runner lives in the agent's sandbox, so everything it says is
 * the agent's data.  This client checks every frame and believes nothing
 * else: an exit status, the hit limits, output and files are what the
 * agent made them.  A runner that lies (a malformed or unexpected frame,
 * output whose offset goes backwards or skips, output past the run's
 * output limit, an END or a FAIL for an id paddock never used, a file
 * bigger than announced or than asked for), stalls (a deadline passes) or
 * dies (the channel closes) fails the call with a message that says so, and
 * runner_fault() says which; the session is then over (every later call
 * fails the same way) and the caller reports it as the agent's failure,
 * with the reason word "runner" (RUNNER_REASON), never as paddock's.  No
 * read is unbounded: a frame is at most RP_FRAME_MAX bytes, a file at most
 * what the caller allows.
 *
 * One session is used by one thread; calls block until their deadline
 * (clock_mono() seconds; 0: none, for a caller bounded otherwise) and
 * meanwhile deliver the output of every run of the session to that run's
 * callback.  Writing a frame is bounded too: a call without a deadline of
 * its own (runner_start, runner_kill, runner_stdin, runner_resize) gives
 * the runner RUNNER_SEND_SECONDS to take it, then the runner has stalled.
 *
 * The gateway through the session (a pod's runner: runner_gateway, which
 * the kubernetes backend calls): each connection an agent makes to a
 * gateway port on the sandbox's loopback comes as a stream (runner_proto.h,
 * "Gateway streams") that this client joins to <bridge_dir>/<port>, the
 * gateway's bridge socket, and relays while any call of the session waits
 * (runner_step's poll, and every other call's).  Between calls nothing
 * reads the session: a stream then simply waits (the runner stops reading
 * the agent's side once its window is full), as the runs' output does.
 * An OPEN it will not carry (no runner_gateway, a port not given, more
 * than RUNNER_STREAMS_MAX at once, a bridge socket that refuses) is
 * answered with SHUT, which closes the agent's connection: the session
 * goes on.  A runner that breaks the streams' rules (a stream id never
 * opened or opened twice, data past the window or after its end, an ACK
 * of bytes never sent) lies like any other.  Each stream's buffers are
 * allocated while they hold bytes (RP_STREAM_WINDOW each way at most) and
 * freed when they drain or the stream ends.
 *
 * A session below its frames is runner_link.h's: paddock acknowledges
 * what it received (RECEIVED), and a session told how to resume
 * (runner_set_resume: the kubernetes backend, whose runner dials over
 * TCP) holds what it sent until the runner acknowledged it, so that a
 * connection that breaks after HELLO does not end it.  While any call
 * waits, the session then also takes the runner's next connection (one
 * that comes while the old one still looks alive replaces it: a half-open
 * connection is noticed no sooner), resends from the runner's count and
 * goes on; a connection that stays lost for longer than the time given
 * fails the session (RUNNER_DIED) with a message that says for how long
 * it was lost.  Frames the runner sent twice never reach a callback: the
 * counts see to it.  Without runner_set_resume a broken connection ends
 * the session, as it always did. */
#ifndef PADDOCK_RUNNER_H
#define PADDOCK_RUNNER_H

#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include "err.h"
#include "runner_proto.h"

/* The reason word a pipeline reports for a session that failed this way. */
#define RUNNER_REASON "runner"
/* How long a call without a deadline waits for the runner to take a frame. */
#define RUNNER_SEND_SECONDS 30.0
/* Gateway streams open at once: twice what a runner opens (RP_STREAMS_MAX),
 * since the two ends let go of a stream at different moments. */
#define RUNNER_STREAMS_MAX (2 * RP_STREAMS_MAX)
/* The most descriptors runner_pollfds writes. */
#define RUNNER_POLLFDS_MAX (2 + RUNNER_STREAMS_MAX)

enum runner_fault {
	RUNNER_OK = 0,
	RUNNER_LIED,      /* a frame paddock cannot believe */
	RUNNER_STALLED,   /* a deadline passed while waiting for it */
	RUNNER_DIED,      /* the channel closed (or failed) */
};

/* Gets a run's output in order, each byte once: offset is where data
 * starts in the run's output (after runner_watch, from the offset asked).
 * data is untrusted (sanitize before a terminal shows it). */
typedef void runner_output_fn(void *arg, uint32_t id, uint64_t offset,
                              const char *data, size_t len);

struct runner_cmd {
	char *const *argv;     /* argv[0] found on env's PATH unless it has a / */
	char *const *env;      /* NAME=VALUE; NULL: none */
	const char *cwd;       /* NULL: the runner's */
	struct rp_limits limits;
	unsigned flags;        /* RP_RUN_FRESH, RP_RUN_PTY, RP_RUN_STDIN, RP_RUN_STDERR */
	unsigned rows, cols;   /* RP_RUN_PTY */
	runner_output_fn *output;   /* NULL: the output is dropped */
	runner_output_fn *errors;   /* RP_RUN_STDERR: the standard error, its
	                               offsets its own (NULL: dropped) */
	void *arg;
};

struct runner_end {
	enum rp_end how;
	int code;              /* exit status, or the signal */
	unsigned hit;          /* RP_HIT_*: the limits the runner saw hit */
	uint64_t output;       /* bytes of output in all */
	char message[256];     /* RP_END_NOT_STARTED: why (untrusted text) */
};

struct runner;

/* Starts a session on fd (a stream socket to the runner; the session owns
 * it from here on, failure included): HELLO both ways, the runner's
 * version checked.  NULL with a message on failure. */
struct runner *runner_open(int fd, double deadline, struct err *e);
/* Ends the session: says BYE and closes the channel (the runner then
 * kills every process it started and exits).  r may be NULL. */
void runner_close(struct runner *r);

/* Carries the session's gateway streams from here on: a stream opened on
 * one of the nports ports is joined to the unix socket <bridge_dir>/<port>
 * (strings copied).  Before this call (and on any other port) an OPEN is
 * refused. */
void runner_gateway(struct runner *r, const char *bridge_dir, const int *ports, size_t nports);
/* The gateway streams open now (tests, and the memory they hold). */
size_t runner_streams(const struct runner *r);

/* Gives the session's next connection after a break: its fd (the
 * session's from now on), -1 when nothing usable came, or
 * RUNNER_RESUME_GONE when the runner can never come back (its pod
 * ended): the session fails at once, as without resume. */
typedef int runner_resume_fn(void *arg);
#define RUNNER_RESUME_GONE (-2)
/* How often fn is asked while the connection is lost. */
#define RUNNER_RESUME_ASK_S 1.0
/* Lets the session resume: while a call waits, fn is called whenever
 * wake_fd (the caller's; polled, never read or closed here) is readable,
 * and each RUNNER_RESUME_ASK_S while the session has no connection; a
 * connection may stay lost for seconds at most.  Set right after
 * runner_open, before anything but HELLO was sent. */
void runner_set_resume(struct runner *r, int wake_fd, double seconds, runner_resume_fn *fn,
                       void *arg);
/* 1 when the session failed because its connection broke and did not
 * come back: in time, or before the resume hook said the runner is gone
 * (its message says for how long; the caller adds why it is gone). */
int runner_lost(const struct runner *r);
/* How many connections the session resumed on so far. */
unsigned runner_resumes(const struct runner *r);

/* Changes RUNNER_SEND_SECONDS for this session (tests). */
void runner_set_send_timeout(struct runner *r, double seconds);
/* Why the session failed (RUNNER_OK while it has not). */
enum runner_fault runner_fault(const struct runner *r);
/* Whether the runner says it is PID 1 of its sandbox (the agent's data). */
int runner_pid1(const struct runner *r);
/* The channel, for a caller's poll loop (runner_step reads it); it
 * changes when the session resumes, and is -1 while its connection is
 * lost (ask again before each poll). */
int runner_fd(const struct runner *r);
/* What a caller's poll waits on for this session: the channel (-1 while
 * its connection is lost), the resume hook's descriptor (-1 without
 * runner_set_resume) and the gateway streams' sockets that wait for
 * something, written to pfd (room for RUNNER_POLLFDS_MAX); how many.
 * runner_step handles what poll says of them. */
size_t runner_pollfds(struct runner *r, struct pollfd *pfd);

/* Sends RUN; returns the run's id (never 0), or 0 with a message.  The
 * output goes to cmd->output while any call of the session waits. */
uint32_t runner_start(struct runner *r, const struct runner_cmd *cmd, struct err *e);
/* Waits for the run's END (the run's whole output delivered before it).
 * -1 with a message when the runner refused the run or failed. */
int runner_wait(struct runner *r, uint32_t id, double deadline, struct runner_end *end,
                struct err *e);
/* runner_start and runner_wait. */
int runner_run(struct runner *r, const struct runner_cmd *cmd, double deadline,
               struct runner_end *end, struct err *e);
/* Handles what the runner sent until nothing more is there or the
 * deadline, whichever first (a deadline in the past: what is there now).
 * 1 when the run id has ended (0 for none), else 0; -1 on failure. */
int runner_step(struct runner *r, uint32_t id, double deadline, struct err *e);

/* Sends sig to a run's process group (id 0: every run).  An id the
 * session never started is refused here; a run that ended meanwhile is no
 * error. */
int runner_kill(struct runner *r, uint32_t id, int sig, struct err *e);
/* Input for a run started with RP_RUN_STDIN or RP_RUN_PTY (len 0: end of
 * input, for pipes), in chunks of RP_CHUNK.  It is sent whatever the
 * window: callers that relay a stream ask runner_stdin_room first. */
int runner_stdin(struct runner *r, uint32_t id, const void *data, size_t len,
                 struct err *e);
/* How many more bytes of input run id may be sent before the runner says
 * it took what was sent (RP_STDIN_WINDOW ahead at most; 0 for a run that
 * ended, or a session that failed). */
size_t runner_stdin_room(struct runner *r, uint32_t id);
/* A new window size for a run's terminal. */
int runner_resize(struct runner *r, uint32_t id, unsigned rows, unsigned cols,
                  struct err *e);
/* Asks for a run's output again from offset (a reader that lost its place:
 * the callback gets it from there, without a gap or a repeat, and the
 * live output goes on after it).  The runner keeps the last MiB of each
 * of its last 64 runs; older offsets fail with a message (the session goes
 * on), as do offsets past what was received. */
int runner_watch(struct runner *r, uint32_t id, uint64_t offset, double deadline,
                 struct err *e);

/* Writes size bytes read from fd (from its current position) to path in
 * the sandbox, with mode.  -1 with a message when the runner refuses (its
 * message, the agent's data, quoted sanitized; the session goes on), fails,
 * or fd ends early (the runner still waits for the rest: the session is
 * over, runner_fault() says RUNNER_DIED). */
int runner_file_put(struct runner *r, const char *path, unsigned mode, int fd, uint64_t size,
                    double deadline, struct err *e);
/* Copies path in the sandbox (a regular file, not a link) to fd, at most
 * max bytes; returns its size (and the mode in *mode when not NULL), or -1
 * with a message (a bigger file is refused by the runner, or is its lie). */
int64_t runner_file_get(struct runner *r, const char *path, int fd, uint64_t max,
                        unsigned *mode, double deadline, struct err *e);

/* A PING answered by its PONG: the runner is alive and has handled every
 * frame sent before. */
int runner_ping(struct runner *r, double deadline, struct err *e);

#endif
