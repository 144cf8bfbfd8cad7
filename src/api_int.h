/* api_int.h: what the API's own files share (api.c, api_events.c).
 * Internal to the API: no other module includes it; theirs is api.h.
 *
 *   api.c         the server: connections, screening, the route table
 *                 (api_route_table) and every route's answer but one;
 *   api_events.c  GET /tasks/{id}/events and GET /events, the server-sent
 *                 event streams. */
#ifndef PADDOCK_API_INT_H
#define PADDOCK_API_INT_H

#include <microhttpd.h>
#include <openssl/sha.h>
#include <pthread.h>
#include <sys/socket.h>

#include "api.h"
#include "buf.h"
#include "err.h"
#include "store.h"

#define REFUSE_SLOTS 64     /* addresses counted at once; others wait (429) */

struct api_token {
	char *name;
	unsigned char hash[SHA256_DIGEST_LENGTH];
	enum access role;          /* config_token_role */
};

/* One open connection, tracked so that idle ones cannot lock clients out:
 * see conn_accept. */
struct api_conn {
	struct api_conn *prev, *next;
	int fd;                    /* a dup of the connection's socket: ours to
	                              shut down, never reused while listed */
	double started;            /* monotonic */
	int served;                /* had a request accepted (a token, a
	                              signature, or none needed) */
	double body_since;         /* monotonic: when the headers of the
	                              request being read came; 0: none */
	int loopback;
	struct sockaddr_storage addr;
};

struct api {
	struct MHD_Daemon *d;
	struct logger *log;        /* serve's output (logger.h), or NULL */
	/* The open connections, oldest first, and the thread that closes
	 * those that send no whole request in time. */
	pthread_mutex_t cmu;
	pthread_cond_t ccv;
	struct api_conn *conns, *conns_tail;
	size_t nconns;
	pthread_t reaper;
	int reaper_started;
	const struct config *cfg;
	char *data_dir;
	char *db;
	pthread_mutex_t tmu;       /* the tokens: swapped by api_reload */
	struct api_token *tokens;
	size_t ntokens;
	int loopback;              /* listening on a loopback address */
	int port;
	char listen_host[64];      /* the address listened on, as a Host names
	                              it ("10.0.0.5", "[fd00::1]"); "" for a
	                              wildcard address */
	/* Refused GitHub deliveries per client address, in windows of
	 * REFUSE_WINDOW_S (under cmu). */
	struct refusals {
		struct sockaddr_storage addr;
		double since;
		unsigned n;
	} refusals[REFUSE_SLOTS];
	int metrics_only;          /* api_opts' */
	int stop_fd;               /* an eventfd, readable once stopping */
	volatile int stopping;
};

/* What one request accumulates across libmicrohttpd's calls. */
struct req {
	struct buf body;
	int too_big;
	int accepted;              /* passed screen(): its token, or none needed */
	enum access role;          /* its token's; admin where none is needed */
	char who[128];             /* the token's name, the actor; "api" */
	const char *allow;         /* a 405's Allow header, or NULL */
	/* The answer, kept for an Idempotency-Key (status 0: none yet). */
	int record;
	int replayed;              /* the answer is a stored one */
	unsigned status;
	char *answer;
	char *location;
};

/* ---- answers (api.c) ---- */

/* Queues r (which it destroys) with what every answer carries. */
enum MHD_Result api_answer(struct MHD_Connection *c, unsigned status, struct MHD_Response *r);
/* {"error": "...", "code": "..."} plus the task's status (state) for 409s. */
enum MHD_Result api_send_error(struct MHD_Connection *c, unsigned status, const char *code,
                               const char *state, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
/* e's kind as its status and code. */
enum MHD_Result api_send_err(struct MHD_Connection *c, const struct err *e,
                             const char *state);
/* text (which it frees, or returns) with the data directory and the
 * repos' remotes that are host paths named instead: what reaches a client
 * names no host path. */
char *api_scrub_paths(const struct api *a, char *text);
/* The store, opened for one request; the caller closes it.  NULL: e says
 * why. */
struct store *api_open_store(const struct api *a, struct err *e);
/* The query string's value for key, or NULL (libmicrohttpd's, not ours). */
const char *api_query(struct MHD_Connection *c, const char *key);

/* ---- events (api_events.c) ---- */

/* GET /tasks/{id}/events for t: the stream, or an error answer. */
enum MHD_Result api_events_get(struct api *a, struct MHD_Connection *c,
                               const struct task_row *t);
/* GET /events: the audit trail's stream (store_audit.h), or an error
 * answer. */
enum MHD_Result api_audit_events_get(struct api *a, struct MHD_Connection *c);

#endif
