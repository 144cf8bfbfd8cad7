/* dial: paddock-runner's way to paddock's front door (dial mode, for a
 * Kubernetes pod): the settings from the pod's environment, the probes
 * of targets the NetworkPolicies must close, the token, the preamble
 * every connection to the front door starts with, and the connect.
 *
 * The preamble (the contract between the runner and src/frontdoor):
 *
 *     PADDOCK-DOOR 1 <kind> <pod> <port>\n
 *     <token>\n
 *     [<message>\n]          (kind fault only)
 *
 * kind is runner or fault (the gateway's connections are streams on the
 * runner's session: runner_proto.h); port 0; pod PADDOCK_POD (a DNS-1123 label, at most 63 bytes); token
 * the token file's content without trailing whitespace, 1 to
 * DIAL_TOKEN_MAX bytes of [A-Za-z0-9._-]; message at most
 * DIAL_MESSAGE_MAX bytes, no control characters.  The whole preamble is
 * at most DIAL_PREAMBLE_MAX bytes.  Nothing comes back before the
 * hand-off: the runner's protocol starts right after it.
 *
 * The token is a credential of the pod's: it is read from its file for
 * every connection (the kubelet rotates it), kept only as long as it
 * takes to build the preamble, and never named in a message.
 *
 * libc only, like the rest of the runner; no output of its own. */
#ifndef PADDOCK_DIAL_H
#define PADDOCK_DIAL_H

#include <stddef.h>
#include <sys/socket.h>

#define DIAL_TOKEN_MAX 8192
#define DIAL_MESSAGE_MAX 512
#define DIAL_PREAMBLE_MAX 10240
#define DIAL_POD_MAX 63
#define DIAL_PORTS_MAX 16
#define DIAL_PROBES_MAX 32
/* How long the runner dials before it gives up (a Service or a policy can
 * lag behind the pod), unless PADDOCK_RUNNER_DIAL_SECONDS says (tests). */
#define DIAL_SECONDS 120.0
/* How long a session whose connection broke after HELLO dials again to
 * resume it, unless PADDOCK_RUNNER_RESUME_SECONDS says. */
#define DIAL_RESUME_SECONDS 60.0
/* All the probes together. */
#define DIAL_PROBE_SECONDS 1.0

/* An address to connect to, and how messages name it (HOST:PORT). */
struct dial_addr {
	struct sockaddr_storage sa;
	socklen_t len;
	char text[80];
};

struct dial {
	struct dial_addr door;          /* PADDOCK_FRONT_DOOR */
	const char *token_file;         /* PADDOCK_TOKEN_FILE (the environment's) */
	char pod[DIAL_POD_MAX + 1];     /* PADDOCK_POD */
	int ports[DIAL_PORTS_MAX];      /* PADDOCK_GATEWAY_PORTS */
	size_t nports;
	struct dial_addr probes[DIAL_PROBES_MAX];   /* PADDOCK_PROBE and the API server */
	size_t nprobes;
	double seconds;                 /* DIAL_SECONDS or the test's */
	double resume_seconds;          /* DIAL_RESUME_SECONDS or the pod's */
};

/* Fills d from the environment (PADDOCK_FRONT_DOOR, PADDOCK_TOKEN_FILE,
 * PADDOCK_POD, PADDOCK_GATEWAY_PORTS, PADDOCK_PROBE,
 * KUBERNETES_SERVICE_HOST and _PORT, PADDOCK_RUNNER_DIAL_SECONDS,
 * PADDOCK_RUNNER_RESUME_SECONDS).  -1
 * with why when one is missing or malformed.  A probe target that is not
 * an IP address and port (a host name: the pod has no DNS to resolve it)
 * is left out, with a line in note (empty when none). */
int dial_from_env(struct dial *d, char *why, size_t whylen, char *note, size_t notelen);

/* Tries every probe target at once, for DIAL_PROBE_SECONDS at most: 1
 * when one answered (connected, or failed with anything but a refusal,
 * an unreachable network or host, or a timeout), with the first such
 * target's text in which; 0 when none did; -1 with why when the probes
 * could not be made. */
int dial_probe(const struct dial *d, char *which, size_t len, char *why, size_t whylen);

/* Reads the token from path into tok (room for DIAL_TOKEN_MAX + 1): its
 * length; -1 when the file cannot be read (errno; worth another try);
 * -2 with why (never the content) when what it holds is not a token. */
long dial_token(const char *path, char *tok, char *why, size_t whylen);

/* Writes the preamble into buf (DIAL_PREAMBLE_MAX bytes): its length,
 * or -1 with why when a part breaks the rules above. */
long dial_preamble(char *buf, const char *kind, const char *pod, int port, const char *tok,
                   size_t toklen, const char *msg, char *why, size_t whylen);

/* Starts a TCP connection to the front door (TCP_NODELAY, keepalive,
 * non-blocking, close-on-exec): the socket, its connect maybe still in
 * progress, or -1 (errno). */
int dial_start(const struct dial *d);

/* Waits until fd (from dial_start) is connected: 0, or -1 (errno; ETIMEDOUT
 * at the deadline, on the monotonic clock in seconds). */
int dial_wait(int fd, double deadline);

/* Writes len bytes to the non-blocking fd by the deadline: 0, or -1
 * (errno). */
int dial_write(int fd, const char *p, size_t len, double deadline);

/* The monotonic clock, in seconds. */
double dial_now(void);

#endif
