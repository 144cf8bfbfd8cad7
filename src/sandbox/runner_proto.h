/* runner_proto: the wire format between paddock and paddock-runner, one
 * implementation compiled into both (runner/paddock-runner.c links this
 * file and libc only; no buf.h, no xmalloc, no messages: a failure is a
 * return code the caller words).
 *
 * The channel is one byte stream (a socketpair for bwrap and the process
 * backend; a TCP connection later).  It carries frames:
 *
 *   offset 0  u32  length of the body in bytes, at most RP_BODY_MAX
 *          4  u16  type (enum rp_type)
 *          6  u16  0 (reserved: anything else is a malformed frame)
 *          8  body
 *
 * All integers are big-endian.  A body is a sequence of fields in the
 * order its type lists below: u16, u32, u64, BYTES (u32 length, then the
 * bytes), STR (BYTES holding no NUL byte), STRS (u32 count, then that many
 * STR).  A body must be exactly its fields: a short one, trailing bytes, a
 * NUL in a STR or a length past the body is malformed.  A header that says
 * more than RP_BODY_MAX is refused from the header alone, before any of
 * the body is read: no reader ever buffers more than RP_FRAME_MAX bytes.
 *
 *   HELLO      version u32, flags u32 (RP_HELLO_PID1: the runner is PID 1)
 *   RUN        id u32, flags u32 (RP_RUN_*), time_ms u64, memory u64,
 *              pids u64, output u64, file_size u64 (0: no limit),
 *              rows u16, cols u16 (RP_RUN_PTY), cwd STR, argv STRS,
 *              env STRS
 *   OUTPUT     id u32, offset u64, data BYTES
 *   STDERR     id u32, offset u64, data BYTES: a run's standard error, for
 *              a RUN flagged RP_RUN_STDERR, its offsets a stream of their
 *              own from 0 (not kept for WATCH)
 *   END        id u32, how u32 (enum rp_end), code u32 (exit status or
 *              signal), hit u32 (RP_HIT_*), output u64 (bytes sent in
 *              all), message STR (why it did not start, or "")
 *   KILL       id u32 (0: every run), signal u32
 *   WATCH      id u32, offset u64: send this run's output again from
 *              offset (a reader that lost its place): the runner answers
 *              an empty OUTPUT at offset (the replay starts here), then
 *              OUTPUT from there on; or FAIL when it no longer holds it
 *   FILE_PUT   id u32, mode u32, size u64, path STR
 *   FILE_DATA  id u32, offset u64, data BYTES
 *   FILE_GET   id u32, max u64, path STR
 *   FILE_DONE  id u32, size u64
 *   FAIL       id u32, errno u32, message STR: a request refused
 *   RESIZE     id u32, rows u16, cols u16
 *   STDIN      id u32, data BYTES (empty: close the run's input)
 *   TAKEN      id u32, offset u64: the run has taken its input up to
 *              offset (written to the command, or dropped once the command
 *              closed its input or ended); paddock sends at most
 *              RP_STDIN_WINDOW bytes of STDIN past what was taken
 *   PING       token u64
 *   PONG       token u64
 *   OPEN       stream u32, port u32: the runner accepted a connection on
 *              the gateway port `port` (runner -> paddock only)
 *   DATA       stream u32, data BYTES (1..RP_CHUNK): the stream's next
 *              bytes, either way; empty: that direction's end (the
 *              sender's side was shut for writing), nothing more after it
 *   ACK        stream u32, offset u64: the sender has passed on the
 *              stream's bytes up to offset (written to its side's socket)
 *   SHUT       stream u32, errno u32: the stream is gone (refused, reset,
 *              a write that failed); nothing more is sent for it
 *   RECEIVED   offset u64: the bytes of the session the sender has
 *              received whole (runner_link.h; both ways)
 *   RESUME     offset u64: the same, as the first frame each end sends on
 *              a connection that resumes the session (runner_link.h)
 *   BYE        (no fields): paddock ends the session; the runner kills
 *              what it runs and exits rather than wait for a connection
 *              that resumes it
 *
 * A session: paddock sends HELLO, the runner answers HELLO with its own
 * version, and ends the session when paddock's differs.  A runner that
 * gets any frame it cannot parse, does not know or does not expect (a
 * second HELLO, a frame only it sends) ends the session too: it closes the
 * channel and kills every process it started.  paddock treats the same
 * from the runner as the agent's failure (runner.h).
 *
 * A run: RUN; OUTPUT frames whose offsets follow each other from 0
 * (stdout and stderr are one stream, as a task's log is, unless the RUN
 * asked for RP_RUN_STDERR: then stderr comes in STDERR frames, and the
 * output limit counts both); END, whose output is the offset past the
 * last byte of OUTPUT sent.  The command is a session
 * and process group of its own; KILL, the time limit and the output limit
 * signal that group.  END follows as soon as the command itself has ended
 * and the output it wrote is sent: a process it left behind holds nothing
 * up (a fresh RUN, or the session's end, kills it).  STDIN, RESIZE, KILL
 * and WATCH name a run by id; the runner keeps the last MiB of output of
 * each of its last 64 runs for WATCH.  Input is flow-controlled: the
 * runner answers STDIN with TAKEN once the queue it holds for the command
 * is written, or every RP_STDIN_WINDOW / 4 bytes, and paddock waits for
 * it before it sends past the window, so that input piped into a command
 * that does not read it stays in paddock's client (which stops reading
 * its own input), not in the runner's memory.
 *
 * Gateway streams (dial mode: a pod's runner, whose one connection to
 * paddock also carries the gateway; runner.h's runner_gateway): each
 * connection an agent makes to a gateway port on the sandbox's loopback is
 * a stream, opened by the runner's OPEN with a stream id greater than any
 * it sent before (ids are never reused within a session).  Both sides then
 * send DATA; each side's bytes are a stream of offsets from 0, and a
 * sender keeps at most RP_STREAM_WINDOW bytes sent and not yet covered
 * by the other side's ACK (a receiver acknowledges once a quarter of the
 * window was passed on, or when what it holds is all passed on): a peer
 * that sends past the window, DATA after its end, or any frame for a
 * stream id it never opened, breaks the protocol.  A stream ends when
 * both ends were sent and passed on, or at a SHUT from either side (the
 * other closes its side's socket, as a reset); frames for a stream that
 * ended (sent before the sender knew) are dropped.  paddock answers an
 * OPEN it will not carry (a session not told about a gateway, a port not
 * its, too many streams, a gateway socket that refuses) with SHUT: the
 * agent's connection is closed, the session goes on.
 *
 * Paths are the sandbox's own; a link as the last component is never
 * followed (a FILE_GET of one, or of anything but a regular file, fails).
 *
 * A file into the sandbox: FILE_PUT (the size announced), FILE_DATA
 * frames whose offsets follow each other up to the size, then the runner
 * answers FILE_DONE or FAIL.  A file out of it: FILE_GET (with the most
 * paddock takes), the runner answers FILE_PUT (mode and size), FILE_DATA
 * up to the size, FILE_DONE; or FAIL. */
#ifndef PADDOCK_RUNNER_PROTO_H
#define PADDOCK_RUNNER_PROTO_H

#include <stddef.h>
#include <stdint.h>

#define RP_VERSION 4
#define RP_HEADER 8
#define RP_BODY_MAX (1u << 20)
#define RP_FRAME_MAX (RP_HEADER + RP_BODY_MAX)
/* The most data one OUTPUT, FILE_DATA or STDIN frame carries. */
#define RP_CHUNK 65536
/* The most STDIN bytes sent and not yet TAKEN, per run. */
#define RP_STDIN_WINDOW (256u << 10)
/* The most stream bytes sent and not yet ACKed, per stream and direction. */
#define RP_STREAM_WINDOW (256u << 10)
/* The most gateway streams a runner keeps open at once (paddock allows a
 * few more: runner.h, RUNNER_STREAMS_MAX). */
#define RP_STREAMS_MAX 64
/* The most entries of argv or env. */
#define RP_STRS_MAX 4096

enum rp_type {
	RP_HELLO = 1,
	RP_RUN,
	RP_OUTPUT,
	RP_END,
	RP_KILL,
	RP_WATCH,
	RP_FILE_PUT,
	RP_FILE_DATA,
	RP_FILE_GET,
	RP_FILE_DONE,
	RP_FAIL,
	RP_RESIZE,
	RP_STDIN,
	RP_PING,
	RP_PONG,
	RP_STDERR,
	RP_TAKEN,
	RP_OPEN = 18,
	RP_DATA = 19,
	RP_ACK = 20,
	RP_SHUT = 21,
	RP_RECEIVED = 22,
	RP_RESUME = 23,
	RP_BYE = 24,
	RP_TYPE_END,   /* one past the last: anything from here is unknown */
};

#define RP_HELLO_PID1 1u

#define RP_RUN_FRESH 1u  /* first kill every other process of the sandbox */
#define RP_RUN_PTY   2u  /* a terminal of rows x cols (the shell) */
#define RP_RUN_STDIN 4u  /* input from STDIN frames (else /dev/null) */
#define RP_RUN_STDERR 8u /* stderr apart, in STDERR frames (not with a pty) */
#define RP_RUN_FLAGS (RP_RUN_FRESH | RP_RUN_PTY | RP_RUN_STDIN | RP_RUN_STDERR)

enum rp_end {
	RP_END_EXITED = 0,   /* code: exit status */
	RP_END_SIGNALED,     /* code: the signal */
	RP_END_NOT_STARTED,  /* message: why (no such program, a bad cwd) */
};

/* What END says was hit.  The runner itself sees TIME (its own clock),
 * OUTPUT (its own count) and DISK (a command killed by SIGXFSZ at the
 * file size limit); it sets RLIMIT_AS and RLIMIT_NPROC from memory and
 * pids as a backstop but cannot tell when they were hit, so MEMORY and
 * PIDS are for the backend to add from what its cgroup counted. */
#define RP_HIT_TIME   1u
#define RP_HIT_MEMORY 2u
#define RP_HIT_PIDS   4u
#define RP_HIT_DISK   8u
#define RP_HIT_OUTPUT 16u

struct rp_limits {
	uint64_t time_ms, memory, pids, output, file_size;   /* 0: none */
};

/* One message of any type: the fields its type has (above) are set, the
 * rest zero.  Decoded strings and lists are malloc'd (rp_msg_clear frees
 * them); data points into the frame's body it was decoded from. */
struct rp_msg {
	enum rp_type type;
	uint32_t id, version, flags, how, code, hit, sig, mode, err;
	uint32_t port;     /* OPEN (id: the stream, for OPEN, DATA, ACK, SHUT) */
	uint64_t offset;   /* OUTPUT, STDERR, FILE_DATA, WATCH, TAKEN, ACK, RECEIVED,
	                      RESUME */
	uint64_t size;     /* END (output), FILE_PUT, FILE_GET (max), FILE_DONE */
	uint64_t token;    /* PING, PONG */
	uint16_t rows, cols;
	struct rp_limits limits;
	const unsigned char *data;
	size_t len;
	char *text;        /* RUN: cwd; END, FAIL: message; FILE_*: path */
	char **argv, **env;  /* NULL-terminated */
};

/* A growable byte buffer (malloc'd data, owned by the struct). */
struct rp_buf {
	unsigned char *data;
	size_t len, cap;
};

/* Appends; -1 when memory runs out (buf unchanged). */
int rp_buf_add(struct rp_buf *b, const void *p, size_t n);
/* Drops the first n bytes. */
void rp_buf_consume(struct rp_buf *b, size_t n);
void rp_buf_free(struct rp_buf *b);

/* Appends m as one frame.  Input strings are the caller's (m->text,
 * m->argv and m->env may be NULL for none).  -1 with errno: EMSGSIZE when
 * the body would pass RP_BODY_MAX (or a list RP_STRS_MAX), EINVAL for an
 * unknown type, ENOMEM; out is as it was. */
int rp_encode(struct rp_buf *out, const struct rp_msg *m);

/* Looks at the start of in (len bytes): 0 while no whole frame is there
 * yet (read more), or the frame's length (header and body) with *type and
 * the body set; -1 when the header is malformed (a length past
 * RP_BODY_MAX, reserved bits) whatever follows. */
long rp_frame(const unsigned char *in, size_t len, uint16_t *type,
              const unsigned char **body, size_t *body_len);

/* Decodes one body of a known type into m (cleared first).  -1 when the
 * type is unknown or the body malformed (m is left clear); ENOMEM in
 * errno when memory ran out. */
int rp_decode(uint16_t type, const unsigned char *body, size_t len, struct rp_msg *m);
/* Frees what rp_decode allocated and zeroes m. */
void rp_msg_clear(struct rp_msg *m);

/* The name of a type ("RUN"), or NULL for an unknown one. */
const char *rp_type_name(unsigned type);

#endif
