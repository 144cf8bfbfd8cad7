/* gateway_int.h: what the gateway's own files share (gateway.c,
 * gateway_http.c, gateway_model.c, gateway_connect.c, gateway_net.c).
 * Internal to the gateway: no other module includes it; theirs is
 * gateway.h.
 *
 *   gateway.c          the loop (gateway_serve), setup and teardown,
 *                      egress/usage/pause lines, dispatch of a request;
 *   gateway_http.c     client connections: buffers, request parsing
 *                      (http_parser), the gateway's own answers;
 *   gateway_model.c    the model endpoints: route allowlist, key
 *                      injection, libcurl, usage from responses;
 *   gateway_connect.c  the allowlisting proxy: CONNECT and plain HTTP,
 *                      lookups, checked connects, tunnels;
 *   gateway_net.c      the network namespace or bridge sockets, the
 *                      janitor, the gateway process, the sandbox's env. */
#ifndef PADDOCK_GATEWAY_INT_H
#define PADDOCK_GATEWAY_INT_H

#include <stddef.h>
#include <stdint.h>
#include <curl/curl.h>
#include <http_parser.h>
#include <jansson.h>
#include <netdb.h>
#include <sys/socket.h>

#include "buf.h"
#include "config.h"
#include "egress.h"
#include "gateway.h"
#include "report.h"
#include "usage.h"

/* Bytes buffered towards a slow reader before we stop reading the other
 * side (backpressure, so a stalled client cannot make us grow). */
#define OUT_HIGH (256u * 1024)
#define MAX_ADDRS 16
#define CONNECT_TIMEOUT 30.0

/* ---- the process-side state ---- */

struct endpoint_rt {
	const struct endpoint_conf *conf;
	char *key;             /* the real key, or NULL */
	char *resolve;         /* CURLOPT_RESOLVE entry from the hosts file, or NULL */
	char *refuse;          /* why the upstream cannot be reached, or NULL */
	char *missing;         /* why it has no key although it needs one, or NULL */
};

struct lookup;

struct gw {
	const struct gateway_policy *p;
	const struct config *cfg;
	struct endpoint_rt *eps;
	size_t neps;
	int *lfds;             /* neps endpoint listeners, then the proxy's */
	size_t nlfds;
	struct egress_rule *rules;
	size_t nrules;
	struct egress_cidr *allow;
	size_t nallow;
	struct egress_hosts *hosts;
	CURLM *multi;
	struct conn *conns;
	size_t nconns;
	int ntunnels;
	struct lookup *lookups;
	int report_fd;
	struct gateway_stats *stats;
	struct usage done;     /* completed responses of this gateway */
	double done_cost;
	unsigned long nrecords;
	uint64_t unlisted_allowed, unlisted_refused; /* counted past the record cap */
	uint64_t queue_seq;    /* model requests queued so far: their turn */
};

enum conn_state {
	C_READ,            /* reading a request */
	C_QUEUED,          /* a model request waits its turn (gw_model_admit) */
	C_UPSTREAM,        /* a model request is with libcurl */
	C_RESOLVING,       /* a proxy target is being resolved */
	C_CONNECTING,      /* connecting to a proxy target */
	C_TUNNEL,          /* relaying bytes both ways */
	C_FLUSH_CLOSE,     /* write what is left, then close */
	C_DEAD
};

struct hdr {
	char *name, *value;
};

struct conn {
	struct conn *next;
	struct gw *gw;
	int fd;
	int ep;                /* endpoint index, or -1: the proxy */
	enum conn_state st;
	http_parser parser;
	struct buf in;         /* client bytes not parsed yet */
	struct buf out;        /* bytes for the client */
	size_t out_off;
	int client_eof;
	/* The request being read. */
	struct buf url, field, value;
	int in_value;
	struct hdr *hdrs;
	size_t nhdrs;
	struct buf body;
	int too_big, head_too_big, msg_done;
	int keep_alive, http11;
	/* The model request. */
	CURL *easy;
	struct curl_slist *req_headers;
	struct buf resp_head;  /* filtered response headers */
	int resp_status;
	int resp_started;      /* status line and headers sent to the client */
	int resp_chunked;      /* the answer to the client is chunked */
	int resp_sse;          /* the upstream answers text/event-stream */
	int paused;
	double retry_after;    /* from the response, seconds; 0: none */
	struct usage_parser *usage;
	struct curl_slist *resolve_list;
	struct usage counted;  /* of this response, already in the totals */
	double counted_cost;   /* their cost */
	/* What the request may cost at most (gw_model_admit): the body's
	 * maximum output and its size's input, at the model's price. */
	struct usage reserve;
	double reserve_cost;
	char reserve_model[64];
	uint64_t queued;       /* its turn while C_QUEUED (queue_seq), else 0 */
	/* A proxy target. */
	char *thost;
	int tport, tplain;
	char *tpath;
	struct sockaddr_storage addrs[MAX_ADDRS];
	size_t naddrs, nexta;
	int ufd;
	struct buf uout;
	size_t uout_off;
	int upstream_eof, shut_client, shut_upstream;
	double deadline;
	struct lookup *lookup;
	/* The record. */
	double t0;
	const char *kind;      /* "model", "tunnel", "http" */
	char method[16];
	char *path;
	int status;
	uint64_t bytes_up, bytes_down;
	int tunnel_counted;
	uint64_t idle_bytes;   /* bytes_up + bytes_down when they last moved */
	double idle_since;
	const char *end_reason;/* why paddock ended a tunnel, for its record */
};

struct lookup {
	struct lookup *next;
	struct conn *conn;     /* NULL once the connection is gone */
	struct gaicb cb;
	struct gaicb *list[1];
	struct addrinfo hints;
	char *name;
};

/* ---- gateway.c ---- */

/* One line to the scheduler (report.h): REPORT_EGRESS, _USAGE or _PAUSE. */
void gw_report_line(struct gw *g, enum report_verb verb, json_t *o);
/* Counts a request or tunnel and reports its `egress` line. */
void gw_record(struct gw *g, struct conn *c, const char *verdict, const char *reason);
void gw_report_usage(struct gw *g);
/* Adds what c's response spent (c may be NULL) and checks the budget. */
void gw_usage_changed(struct gw *g, struct conn *c);
/* Adds u, priced for model, to the totals (a model without a price marks
 * them unpriced); returns its cost. */
double gw_usage_add(struct gw *g, const struct usage *u, const char *model);
/* A complete request head (and body) was read: model or proxy request. */
void gw_dispatch(struct gw *g, struct conn *c);

/* ---- gateway_http.c ---- */

void gw_out_add(struct conn *c, const void *p, size_t n);
void gw_out_printf(struct conn *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *gw_reason_phrase(int status);
void gw_answer(struct conn *c, int status, const char *msg);
void gw_request_reset(struct conn *c);
struct conn *gw_conn_new(struct gw *g, int fd, int ep);
void gw_conn_free(struct gw *g, struct conn *c);
void gw_conn_parse(struct gw *g, struct conn *c);
void gw_conn_read(struct gw *g, struct conn *c);
/* Sends what it can of b from *off: 0, or -1 when the peer is gone. */
int gw_flush_to(int fd, struct buf *b, size_t *off);

/* ---- gateway_model.c ---- */

void gw_model_request(struct gw *g, struct conn *c);
/* Frees a request's headers, the key's line zeroed first. */
void gw_headers_free(struct curl_slist **h);
/* Starts the queued model requests whose turn it is: at most
 * limits.model-concurrency upstream at once, and, under a budget, only
 * while what is spent and what those upstream may still cost is below it;
 * refuses them once the budget is spent. */
void gw_model_admit(struct gw *g);
/* libcurl finished c's upstream request with rc. */
void gw_model_done(struct gw *g, struct conn *c, CURLcode rc);
/* Counts a model request that ended before its response did (c->easy
 * still set): what was parsed of it, or its reservation when nothing was. */
void gw_model_cut(struct gw *g, struct conn *c);

/* ---- gateway_connect.c ---- */

void gw_proxy_request(struct gw *g, struct conn *c);
void gw_lookups_poll(struct gw *g);
/* Tries c's next checked address. */
void gw_start_connect(struct gw *g, struct conn *c);
void gw_connect_done(struct gw *g, struct conn *c);
void gw_tunnel_upstream_read(struct gw *g, struct conn *c);
void gw_tunnel_progress(struct gw *g, struct conn *c);
void gw_addr_text(const struct sockaddr_storage *ss, char *out, size_t len);

#endif
