/* api: the HTTP front door (doc/paddock-api.7), served with
 * libmicrohttpd beside the scheduler by `paddock serve --listen`.
 *
 * It answers JSON and does what the CLI does with the same engine calls:
 * tasks are added to the store (the scheduler picks them up), decisions go
 * through gate.h, the task's JSON is taskjson.h's.  Every request opens
 * its own store connection (SQLite WAL), so the API's threads and the
 * scheduler never share one.
 *
 * Auth: bearer tokens from [token "NAME"] (compared in constant time, never
 * logged); the token's name is the actor of the decisions it makes; a
 * read-only token may only GET.  Without tokens the API answers only on a
 * loopback address, without asking; a non-loopback address needs a token
 * configured.
 *
 * Web pages and strangers (doc/paddock-api.7, BROWSERS): every request is
 * screened on its headers before its body is read, tokens or not: a Host
 * that is not loopback, the listen address or an api.server-name (421),
 * another Origin (403), two Content-Lengths or two Hosts (400), no token where tokens
 * are configured (401), a POST body that is not application/json (415).
 * A body has api.body-timeout from its headers; a connection holds its
 * place only once a request of it was taken.  Refused GitHub deliveries
 * past 30 a minute from one address (REFUSE_MAX) are answered 429 and not
 * recorded, and so are those of any other address while 64 are counted
 * (REFUSE_SLOTS; store_github.h caps those that are recorded).
 *
 * GET /metrics (metrics.h) needs the role read; a second api_start with
 * metrics_only ([api] metrics-listen) answers it alone, without a token,
 * after the same Host and Origin screen. */
#ifndef PADDOCK_API_H
#define PADDOCK_API_H

#include <stdio.h>
#include "config.h"
#include "err.h"
#include "logger.h"

struct api;

struct api_opts {
	const char *listen;        /* "ADDR:PORT" (IPv4 or [IPv6]) or a bare PORT
	                              (loopback); port 0 picks one */
	const struct config *cfg;  /* borrowed for the API's life */
	const char *data_dir;
	int metrics_only;          /* [api] metrics-listen: answer GET /metrics
	                              alone, without a token (404 for any other
	                              path, 405 for another method), on any
	                              address */
};

/* Starts serving in threads of its own.  log (logger.h; borrowed for the
 * API's life, may be NULL) gets one line saying where it listens (and
 * that tokens are needed, when they are; event api.listening), the
 * tokens' role changes (api.role) and the API's errors. */
int api_start(struct api **out, const struct api_opts *o, struct logger *log, struct err *e);
/* 0 if listen is an address api_start can take (ADDR:PORT, [V6]:PORT or a
 * bare port); else -1 with the reason. */
int api_listen_check(const char *listen, struct err *e);
/* The port it listens on (after port 0). */
/* Binds listen's address for a moment (paddock doctor): -1 with why when
 * it cannot be had (in use, not an address of this host). */
int api_listen_try(const char *listen, struct err *e);
int api_port(const struct api *a);
/* Reads the tokens again from the configuration file (new [token]
 * sections, changed value files), for a rotation without a restart
 * (SIGHUP): requests from then on need one of them.  log gets one line
 * saying so (api.tokens).  On failure the old tokens stay and e says why. */
int api_reload(struct api *a, struct logger *log, struct err *e);
/* Stops serving (open event streams end) and frees a.  NULL is fine. */
void api_stop(struct api *a);

/* The routes the server answers, "METHOD PATTERN" with {id} for the task
 * id, NULL-terminated: the OpenAPI description is checked against it. */
const char *const *api_routes(void);

#endif
