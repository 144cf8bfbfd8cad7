#include "autoconfig.h"
#include "gateway.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <grp.h>
#include <fcntl.h>
#include <http_parser.h>
#include <jansson.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "clock.h"
#include "egress.h"
#include "i18n.h"
#include "pipeline.h"
#include "sandbox.h"
#include "sanitize.h"

/* Bytes buffered towards a slow reader before we stop reading the other
 * side (backpressure, so a stalled client cannot make us grow). */
#define OUT_HIGH (256u * 1024)
#define HEAD_MAX (64u * 1024)   /* request line and headers */
#define MAX_CONNS 256
#define MAX_ADDRS 16
#define PAUSE_DEFAULT 30.0
#define PAUSE_MAX 3600.0
#define CONNECT_TIMEOUT 30.0
#define MAX_RECORDS 5000       /* egress lines per gateway */

/* ---- the process-side state ---- */

struct endpoint_rt {
	const struct endpoint_conf *conf;
	char *key;             /* the real key, or NULL */
	char *resolve;         /* CURLOPT_RESOLVE entry from the hosts file, or NULL */
	char *refuse;          /* why the upstream cannot be reached, or NULL */
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
};

enum conn_state {
	C_READ,            /* reading a request */
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

/* ---- reports ---- */

/* One line to the scheduler, escaped as pipeline.h says; writes under
 * PIPE_BUF are atomic, so lines from several processes do not mix. */
static void report_line(struct gw *g, const char *verb, json_t *o)
{
	char *text = json_dumps(o, JSON_COMPACT);
	if (!text)
		return;
	char *line = xasprintf("%s %s", verb, text);
	free(text);
	/* Only lines that go out in one write (escaping at most doubles
	 * them; PIPE_BUF is 4096): a longer one could mix with the
	 * supervisor's.  Fields are cut short enough for that. */
	if (strlen(line) <= 2000)
		pipeline_report_write(g->report_fd, line, strlen(line));
	free(line);
}

static json_t *jstr_or_null(const char *s, size_t max)
{
	if (!s)
		return json_null();
	size_t n = strlen(s);
	/* Cut inside a character, the string is repaired, not lost. */
	return sanitize_json_string(s, n > max ? max : n);
}

static void record(struct gw *g, struct conn *c, const char *verdict, const char *reason)
{
	if (strcmp(verdict, "allowed") == 0)
		g->stats->allowed++;
	else
		g->stats->refused++;
	/* A sandbox that floods requests must not flood the store: past the
	 * cap they are counted (gate summary) but no longer listed. */
	if (++g->nrecords > MAX_RECORDS)
		return;
	if (g->nrecords == MAX_RECORDS)
		reason = "record limit reached: later requests are counted, not listed";
	json_t *o = json_object();
	json_object_set_new(o, "time", json_real(clock_wall()));
	json_object_set_new(o, "step", json_string(g->p->step ? g->p->step : "agent"));
	json_object_set_new(o, "kind", json_string(c->kind ? c->kind : "http"));
	json_object_set_new(o, "endpoint", c->ep >= 0 ? json_string(g->eps[c->ep].conf->name)
	                                              : json_null());
	json_object_set_new(o, "host", jstr_or_null(c->thost, 253));
	json_object_set_new(o, "port", c->tport ? json_integer(c->tport) : json_null());
	json_object_set_new(o, "method", c->method[0] ? json_string(c->method) : json_null());
	json_object_set_new(o, "path", jstr_or_null(c->path, 512));
	json_object_set_new(o, "status", c->status ? json_integer(c->status) : json_null());
	json_object_set_new(o, "up", json_integer((json_int_t)c->bytes_up));
	json_object_set_new(o, "down", json_integer((json_int_t)c->bytes_down));
	json_object_set_new(o, "ms", json_integer((json_int_t)((clock_mono() - c->t0) * 1000)));
	json_object_set_new(o, "verdict", json_string(verdict));
	json_object_set_new(o, "reason", jstr_or_null(reason, 300));
	report_line(g, "egress", o);
	json_decref(o);
}

static void report_usage(struct gw *g)
{
	struct gateway_stats *st = g->stats;
	json_t *o = json_object();
	json_object_set_new(o, "input", json_integer((json_int_t)st->total.input));
	json_object_set_new(o, "output", json_integer((json_int_t)st->total.output));
	json_object_set_new(o, "cache_read", json_integer((json_int_t)st->total.cache_read));
	json_object_set_new(o, "cache_write", json_integer((json_int_t)st->total.cache_write));
	json_object_set_new(o, "cost", json_real(st->cost));
	json_object_set_new(o, "requests", json_integer((json_int_t)st->requests));
	json_object_set_new(o, "priced", json_boolean(!st->unpriced));
	report_line(g, "usage", o);
	json_decref(o);
}

static uint64_t growth(uint64_t now, uint64_t before)
{
	return now > before ? now - before : 0;
}

/* Totals = what earlier rounds spent + completed responses + the ones
 * streaming now; checked against the budget after every change. */
static void usage_changed(struct gw *g, struct conn *c)
{
	struct gateway_stats *st = g->stats;
	if (c && c->usage) {
		const struct usage *u = usage_parser_usage(c->usage);
		const struct price_conf *price = config_find_price(g->cfg, usage_parser_model(c->usage));
		/* Only the growth since the last look is added. */
		struct usage d = {
			growth(u->input, c->counted.input), growth(u->output, c->counted.output),
			growth(u->cache_read, c->counted.cache_read),
			growth(u->cache_write, c->counted.cache_write),
		};
		usage_add(&st->total, &d);
		st->cost += usage_cost(&d, price);
		if (!price && usage_tokens(&d) > 0) {
			st->unpriced = 1;
			/* A budget in USD cannot be kept without a price: stop here
			 * rather than let the task spend without a limit. */
			if (g->p->budget > 0 && !st->unpriced_model[0]) {
				const char *m = usage_parser_model(c->usage);
				snprintf(st->unpriced_model, sizeof st->unpriced_model, "%s",
				         m && *m ? m : "(unnamed)");
				/* The upstream's words, bound for messages and JSON. */
				for (char *q = st->unpriced_model; *q; q++)
					if (*q < 0x21 || *q > 0x7e || *q == '"' || *q == '\\')
						*q = '?';
			}
		}
		c->counted = *u;
	}
	const struct gateway_policy *p = g->p;
	int over = (p->budget > 0 && st->cost >= p->budget) ||
	           (p->budget > 0 && st->unpriced_model[0]) ||
	           (p->budget_tokens > 0 && usage_tokens(&st->total) >= p->budget_tokens);
	if (over && !st->over_budget) {
		st->over_budget = 1;
		report_usage(g);
	}
}

/* ---- client output ---- */

static void out_add(struct conn *c, const void *p, size_t n)
{
	buf_add(&c->out, p, n);
}

static void out_printf(struct conn *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void out_printf(struct conn *c, const char *fmt, ...)
{
	va_list ap;
	char tmp[2048];
	va_start(ap, fmt);
	int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	if (n > 0)
		out_add(c, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

static const char *reason_phrase(int status)
{
	switch (status) {
	case 200: return "OK";
	case 201: return "Created";
	case 204: return "No Content";
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 408: return "Request Timeout";
	case 413: return "Content Too Large";
	case 429: return "Too Many Requests";
	case 431: return "Request Header Fields Too Large";
	case 500: return "Internal Server Error";
	case 502: return "Bad Gateway";
	case 503: return "Service Unavailable";
	case 504: return "Gateway Timeout";
	case 529: return "Overloaded";
	default: return "Status";
	}
}

/* A complete answer made by the gateway itself, then the connection
 * closes.  Model endpoints answer in their API's error format, so that
 * agents show the message. */
static void answer(struct conn *c, int status, const char *msg)
{
	struct gw *g = c->gw;
	char *body;
	const char *ctype;
	if (c->ep >= 0) {
		json_t *o;
		if (g->eps[c->ep].conf->kind == ENDPOINT_ANTHROPIC)
			o = json_pack("{s:s, s:{s:s, s:s}}", "type", "error", "error", "type",
			              status == 413 ? "request_too_large" :
			              status == 404 ? "not_found_error" : "permission_error",
			              "message", msg);
		else
			o = json_pack("{s:{s:s, s:s, s:n}}", "error", "message", msg, "type",
			              "paddock_gateway", "code");
		body = json_dumps(o, JSON_COMPACT);
		json_decref(o);
		ctype = "application/json";
	} else {
		body = xasprintf("paddock: %s\n", msg);
		ctype = "text/plain; charset=utf-8";
	}
	out_printf(c, "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
	           "Connection: close\r\n\r\n", status, reason_phrase(status), ctype, strlen(body));
	out_add(c, body, strlen(body));
	free(body);
	c->status = status;
	c->keep_alive = 0;
	c->st = C_FLUSH_CLOSE;
}

/* ---- request parsing (http_parser callbacks) ---- */

static void hdr_flush(struct conn *c)
{
	if (!c->field.len)
		return;
	c->hdrs = xrealloc(c->hdrs, (c->nhdrs + 1) * sizeof *c->hdrs);
	c->hdrs[c->nhdrs].name = buf_detach(&c->field);
	c->hdrs[c->nhdrs].value = buf_detach(&c->value);
	c->nhdrs++;
	c->in_value = 0;
}

static int head_room(struct conn *c, size_t n)
{
	if (c->url.len + c->field.len + c->value.len + n > HEAD_MAX) {
		c->head_too_big = 1;
		return -1;
	}
	return 0;
}

static int on_url(http_parser *hp, const char *at, size_t n)
{
	struct conn *c = hp->data;
	if (head_room(c, n) < 0)
		return -1;
	buf_add(&c->url, at, n);
	return 0;
}

static int on_header_field(http_parser *hp, const char *at, size_t n)
{
	struct conn *c = hp->data;
	if (c->in_value)
		hdr_flush(c);
	if (head_room(c, n) < 0 || c->nhdrs >= 200) {
		c->head_too_big = 1;
		return -1;
	}
	buf_add(&c->field, at, n);
	return 0;
}

static int on_header_value(http_parser *hp, const char *at, size_t n)
{
	struct conn *c = hp->data;
	if (head_room(c, n) < 0)
		return -1;
	c->in_value = 1;
	buf_add(&c->value, at, n);
	return 0;
}

static int on_headers_complete(http_parser *hp)
{
	struct conn *c = hp->data;
	if (c->in_value || c->field.len)
		hdr_flush(c);
	/* RFC 9112 5.1: no whitespace between a field name and its colon;
	 * "x-api-key :" must not pass as another header. */
	for (size_t i = 0; i < c->nhdrs; i++)
		if (strpbrk(c->hdrs[i].name, " \t"))
			return -1;
	c->http11 = hp->http_major == 1 && hp->http_minor >= 1;
	c->keep_alive = http_should_keep_alive(hp);
	/* The body is read here, not upstream: a client waiting for leave to
	 * send it gets it at once. */
	for (size_t i = 0; i < c->nhdrs; i++)
		if (strcasecmp(c->hdrs[i].name, "expect") == 0 &&
		    strcasecmp(c->hdrs[i].value, "100-continue") == 0 && c->http11)
			out_add(c, "HTTP/1.1 100 Continue\r\n\r\n", 25);
	/* CONNECT has no body; its bytes after the head belong to the tunnel. */
	return hp->method == HTTP_CONNECT ? 1 : 0;
}

static int on_body(http_parser *hp, const char *at, size_t n)
{
	struct conn *c = hp->data;
	if (c->too_big)
		return 0;
	if (c->body.len + n > c->gw->cfg->gw_max_body) {
		c->too_big = 1;
		buf_free(&c->body);
		return 0;
	}
	buf_add(&c->body, at, n);
	return 0;
}

static int on_message_complete(http_parser *hp)
{
	struct conn *c = hp->data;
	c->msg_done = 1;
	/* One request at a time: the rest stays in c->in. */
	http_parser_pause(hp, 1);
	return 0;
}

static const http_parser_settings parser_settings = {
	.on_url = on_url,
	.on_header_field = on_header_field,
	.on_header_value = on_header_value,
	.on_headers_complete = on_headers_complete,
	.on_body = on_body,
	.on_message_complete = on_message_complete,
};

static void request_reset(struct conn *c)
{
	buf_free(&c->url);
	buf_free(&c->field);
	buf_free(&c->value);
	for (size_t i = 0; i < c->nhdrs; i++) {
		free(c->hdrs[i].name);
		free(c->hdrs[i].value);
	}
	free(c->hdrs);
	c->hdrs = NULL;
	c->nhdrs = 0;
	c->in_value = 0;
	buf_free(&c->body);
	c->too_big = c->head_too_big = c->msg_done = 0;
	free(c->path);
	c->path = NULL;
	free(c->thost);
	c->thost = NULL;
	c->tport = 0;
	c->method[0] = '\0';
	c->status = 0;
	c->bytes_up = c->bytes_down = 0;
	c->kind = NULL;
	c->t0 = clock_mono();
}

/* ---- connections ---- */

static struct conn *conn_new(struct gw *g, int fd, int ep)
{
	struct conn *c = xcalloc(1, sizeof *c);
	c->gw = g;
	c->fd = fd;
	c->ep = ep;
	c->ufd = -1;
	c->st = C_READ;
	http_parser_init(&c->parser, HTTP_REQUEST);
	c->parser.data = c;
	c->t0 = clock_mono();
	c->next = g->conns;
	g->conns = c;
	g->nconns++;
	return c;
}

static void conn_free(struct gw *g, struct conn *c)
{
	if (c->easy) {
		curl_multi_remove_handle(g->multi, c->easy);
		curl_easy_cleanup(c->easy);
	}
	curl_slist_free_all(c->req_headers);
	curl_slist_free_all(c->resolve_list);
	usage_parser_free(c->usage);
	if (c->lookup)
		c->lookup->conn = NULL;
	if (c->fd >= 0)
		close(c->fd);
	if (c->ufd >= 0)
		close(c->ufd);
	if (c->tunnel_counted)
		g->ntunnels--;
	request_reset(c);
	buf_free(&c->in);
	buf_free(&c->out);
	buf_free(&c->uout);
	buf_free(&c->resp_head);
	free(c->tpath);
	free(c);
}

/* ---- model endpoints ---- */

struct route {
	const char *method, *path;
};

static const struct route anthropic_routes[] = {
	{ "POST", "/v1/messages" },
	{ "POST", "/v1/messages/count_tokens" },
	{ "GET", "/v1/models" },
	{ NULL, NULL },
};

static const struct route openai_routes[] = {
	{ "POST", "/v1/responses" },
	{ "POST", "/v1/chat/completions" },
	{ "POST", "/v1/completions" },
	{ "POST", "/v1/embeddings" },
	{ "GET", "/v1/models" },
	{ NULL, NULL },
};

/* 0: allowed; 404 / 405 otherwise.  The path is compared without its
 * query; "/v1/models/ID" is a model lookup. */
static int route_check(enum endpoint_kind kind, const char *method, const char *url)
{
	const struct route *r = kind == ENDPOINT_ANTHROPIC ? anthropic_routes : openai_routes;
	size_t plen = strcspn(url, "?#");
	/* Plain segments only: no escapes an upstream might decode into
	 * something else, no dot segments. */
	for (size_t i = 0; i < plen; i++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/_.:-",
		            url[i]))
			return 404;
	for (const char *q = url; q < url + plen; q++)
		if (*q == '/' && q[1] == '.' && (q + 2 >= url + plen || q[2] == '/' ||
		                                 (q[2] == '.' && (q + 3 >= url + plen || q[3] == '/'))))
			return 404;
	int path_known = 0;
	for (; r->method; r++) {
		size_t n = strlen(r->path);
		int match = plen == n && strncmp(url, r->path, n) == 0;
		if (!match && strcmp(r->path, "/v1/models") == 0 && plen > n + 1 &&
		    strncmp(url, "/v1/models/", n + 1) == 0 && !memchr(url + n + 1, '/', plen - n - 1) &&
		    !(plen == n + 2 && url[n + 1] == '.') &&
		    !(plen == n + 3 && url[n + 1] == '.' && url[n + 2] == '.'))
			match = 1;
		if (!match)
			continue;
		path_known = 1;
		if (strcmp(method, r->method) == 0)
			return 0;
	}
	return path_known ? 405 : 404;
}

static int hop_or_secret(const char *name)
{
	static const char *const drop[] = {
		"host", "content-length", "transfer-encoding", "connection", "keep-alive",
		"proxy-authorization", "proxy-authenticate", "proxy-connection", "te", "trailer",
		"upgrade", "x-api-key", "authorization", "cookie", "accept-encoding", "expect",
		"forwarded", "x-forwarded-for", "x-forwarded-host", "x-forwarded-proto",
		"api-key", "x-goog-api-key", NULL };
	for (size_t i = 0; drop[i]; i++)
		if (strcasecmp(name, drop[i]) == 0)
			return 1;
	return 0;
}

static size_t on_resp_header(char *data, size_t size, size_t nmemb, void *arg)
{
	struct conn *c = arg;
	size_t n = size * nmemb;
	if (n >= 5 && strncmp(data, "HTTP/", 5) == 0) {
		/* A new status line (after a 100 Continue, say): start over. */
		buf_reset(&c->resp_head);
		c->resp_sse = 0;
		long code = 0;
		curl_easy_getinfo(c->easy, CURLINFO_RESPONSE_CODE, &code);
		const char *sp = memchr(data, ' ', n);
		c->resp_status = sp ? atoi(sp + 1) : (int)code;
		c->retry_after = 0;
		return n;
	}
	const char *colon = memchr(data, ':', n);
	if (!colon)
		return n;
	size_t nl = (size_t)(colon - data);
	const char *v = colon + 1;
	size_t vl = n - nl - 1;
	while (vl && (*v == ' ' || *v == '\t'))
		v++, vl--;
	while (vl && (v[vl - 1] == '\r' || v[vl - 1] == '\n' || v[vl - 1] == ' '))
		vl--;
	char name[64];
	if (nl == 0 || nl >= sizeof name)
		return n;
	memcpy(name, data, nl);
	name[nl] = '\0';
	static const char *const drop[] = {
		"connection", "keep-alive", "transfer-encoding", "content-length",
		"content-encoding", "set-cookie", "set-cookie2", "proxy-authenticate",
		"proxy-connection", "alt-svc", "upgrade", "trailer", "www-authenticate", NULL };
	for (size_t i = 0; drop[i]; i++)
		if (strcasecmp(name, drop[i]) == 0)
			return n;
	if (strcasecmp(name, "retry-after") == 0) {
		char tmp[64];
		size_t k = vl < sizeof tmp - 1 ? vl : sizeof tmp - 1;
		memcpy(tmp, v, k);
		tmp[k] = '\0';
		char *end;
		double secs = strtod(tmp, &end);
		if (end == tmp) {
			time_t t = curl_getdate(tmp, NULL);
			secs = t > 0 ? (double)t - clock_wall() : 0;
		}
		c->retry_after = secs > 0 ? secs : 0;
	}
	if (strcasecmp(name, "content-type") == 0 && vl >= 17 &&
	    strncasecmp(v, "text/event-stream", 17) == 0)
		c->resp_sse = 1;
	buf_add(&c->resp_head, name, nl);
	buf_adds(&c->resp_head, ": ");
	buf_add(&c->resp_head, v, vl);
	buf_adds(&c->resp_head, "\r\n");
	return n;
}

static void resp_start(struct conn *c)
{
	if (c->resp_started)
		return;
	c->resp_started = 1;
	c->usage = usage_parser_new(c->resp_sse);
	/* HTTP/1.0 clients get the body up to the close. */
	c->resp_chunked = c->http11 ? 1 : 0;
	if (!c->http11)
		c->keep_alive = 0;
	out_printf(c, "HTTP/1.1 %d %s\r\n", c->resp_status, reason_phrase(c->resp_status));
	out_add(c, c->resp_head.data ? c->resp_head.data : "", c->resp_head.len);
	if (c->resp_chunked)
		out_printf(c, "Transfer-Encoding: chunked\r\n");
	out_printf(c, "Connection: %s\r\n\r\n", c->keep_alive ? "keep-alive" : "close");
}

static size_t on_resp_body(char *data, size_t size, size_t nmemb, void *arg)
{
	struct conn *c = arg;
	size_t n = size * nmemb;
	if (c->out.len - c->out_off > OUT_HIGH) {
		/* The client reads slowly: let libcurl hold the data. */
		c->paused = 1;
		return CURL_WRITEFUNC_PAUSE;
	}
	resp_start(c);
	if (c->resp_chunked)
		out_printf(c, "%zx\r\n", n);
	out_add(c, data, n);
	if (c->resp_chunked)
		out_add(c, "\r\n", 2);
	c->bytes_down += n;
	if (usage_parser_feed(c->usage, data, n))
		usage_changed(c->gw, c);
	return n;
}

static void pause_upstream(struct gw *g, struct conn *c)
{
	double secs = c->retry_after > 0 ? c->retry_after : PAUSE_DEFAULT;
	if (secs > PAUSE_MAX)
		secs = PAUSE_MAX;
	json_t *o = json_pack("{s:s, s:f, s:i}", "endpoint", g->eps[c->ep].conf->name, "until",
	                      clock_wall() + secs, "status", c->resp_status);
	report_line(g, "pause", o);
	json_decref(o);
}

static void model_done(struct gw *g, struct conn *c, CURLcode rc)
{
	struct gateway_stats *st = g->stats;
	if (rc != CURLE_OK && !c->resp_started) {
		char msg[300];
		snprintf(msg, sizeof msg, "paddock gateway: the upstream %s did not answer: %s",
		         g->eps[c->ep].conf->upstream, curl_easy_strerror(rc));
		curl_multi_remove_handle(g->multi, c->easy);
		curl_easy_cleanup(c->easy);
		c->easy = NULL;
		answer(c, 502, msg);
		st->last_status = 502;
		snprintf(st->last_error, sizeof st->last_error, "upstream_unreachable");
		snprintf(st->last_message, sizeof st->last_message, "%s", curl_easy_strerror(rc));
		record(g, c, "allowed", msg + strlen("paddock gateway: "));
		return;
	}
	resp_start(c);
	if (usage_parser_finish(c->usage))
		usage_changed(g, c);
	st->requests++;
	st->last_status = c->resp_status;
	snprintf(st->last_error, sizeof st->last_error, "%s", usage_parser_error(c->usage));
	snprintf(st->last_message, sizeof st->last_message, "%s",
	         usage_parser_error_message(c->usage));
	if (c->resp_status == 429 || c->resp_status == 529)
		pause_upstream(g, c);
	c->status = c->resp_status;
	if (rc != CURLE_OK) {
		/* Cut mid-stream: the client must not take it as complete. */
		c->keep_alive = 0;
		c->st = C_FLUSH_CLOSE;
	} else if (c->resp_chunked) {
		out_add(c, "0\r\n\r\n", 5);
	}
	if (!c->keep_alive)
		c->st = C_FLUSH_CLOSE;
	curl_multi_remove_handle(g->multi, c->easy);
	curl_easy_cleanup(c->easy);
	c->easy = NULL;
	curl_slist_free_all(c->req_headers);
	c->req_headers = NULL;
	curl_slist_free_all(c->resolve_list);
	c->resolve_list = NULL;
	record(g, c, "allowed", rc != CURLE_OK ? curl_easy_strerror(rc) : NULL);
	report_usage(g);
	usage_parser_free(c->usage);
	c->usage = NULL;
	memset(&c->counted, 0, sizeof c->counted);
	buf_free(&c->resp_head);
	c->resp_started = c->resp_chunked = c->resp_sse = c->paused = 0;
	c->resp_status = 0;
	if (c->st != C_FLUSH_CLOSE) {
		c->st = C_READ;
		request_reset(c);
		http_parser_pause(&c->parser, 0);
	}
}

static void model_request(struct gw *g, struct conn *c)
{
	struct endpoint_rt *ep = &g->eps[c->ep];
	const char *url = c->url.data ? c->url.data : "";
	c->kind = "model";
	snprintf(c->method, sizeof c->method, "%s", http_method_str(c->parser.method));
	c->path = xstrndup(url, strcspn(url, "?#"));
	/* The host recorded is the upstream's. */
	CURLU *cu = curl_url();
	char *uh = NULL, *uport = NULL;
	if (curl_url_set(cu, CURLUPART_URL, ep->conf->upstream, 0) == CURLUE_OK) {
		curl_url_get(cu, CURLUPART_HOST, &uh, 0);
		curl_url_get(cu, CURLUPART_PORT, &uport, CURLU_DEFAULT_PORT);
	}
	c->thost = xstrdup(uh ? uh : "?");
	c->tport = uport ? atoi(uport) : 0;
	curl_free(uh);
	curl_free(uport);
	curl_url_cleanup(cu);

	if (url[0] != '/') {
		answer(c, 400, "paddock gateway: use a path such as /v1/messages, not a full URL");
		record(g, c, "refused", "not an origin-form request");
		return;
	}
	if (c->too_big) {
		char msg[160];
		snprintf(msg, sizeof msg, "paddock gateway: the request body is over %llu bytes "
		         "(gateway.max-body)", (unsigned long long)g->cfg->gw_max_body);
		answer(c, 413, msg);
		record(g, c, "refused", "body over gateway.max-body");
		return;
	}
	int rc = route_check(ep->conf->kind, c->method, url);
	if (rc) {
		answer(c, rc, rc == 404 ? "paddock gateway: this path is not forwarded"
		                        : "paddock gateway: this method is not forwarded here");
		record(g, c, "refused", rc == 404 ? "path not allowed" : "method not allowed");
		return;
	}
	if (g->stats->over_budget && g->stats->unpriced_model[0]) {
		char msg[300];
		snprintf(msg, sizeof msg, "paddock gateway: the model %s has no price, so this "
		         "task's budget in USD cannot be kept; no more model requests are forwarded",
		         g->stats->unpriced_model);
		answer(c, 403, msg);
		record(g, c, "refused", "budget: a model without a price");
		return;
	}
	if (g->stats->over_budget) {
		answer(c, 403, "paddock gateway: this task has spent its budget; no more model "
		               "requests are forwarded");
		record(g, c, "refused", "budget spent");
		return;
	}
	if (ep->refuse) {
		answer(c, 502, ep->refuse);
		record(g, c, "refused", ep->refuse);
		return;
	}
	CURL *h = curl_easy_init();
	if (!h) {
		answer(c, 500, "paddock gateway: out of memory");
		record(g, c, "refused", "out of memory");
		return;
	}
	char *full = xasprintf("%s%s", ep->conf->upstream, url);
	/* A trailing slash on the upstream must not double up. */
	size_t ul = strlen(ep->conf->upstream);
	if (ul && ep->conf->upstream[ul - 1] == '/') {
		free(full);
		full = xasprintf("%.*s%s", (int)(ul - 1), ep->conf->upstream, url);
	}
	curl_easy_setopt(h, CURLOPT_URL, full);
	/* Sent as checked: libcurl would turn /v1/models/.. into /v1/. */
	curl_easy_setopt(h, CURLOPT_PATH_AS_IS, 1L);
	free(full);
	for (size_t i = 0; i < c->nhdrs; i++) {
		if (hop_or_secret(c->hdrs[i].name))
			continue;
		char *line = xasprintf("%s: %s", c->hdrs[i].name, c->hdrs[i].value);
		c->req_headers = curl_slist_append(c->req_headers, line);
		free(line);
	}
	if (ep->key) {
		char *line = ep->conf->kind == ENDPOINT_ANTHROPIC
		             ? xasprintf("x-api-key: %s", ep->key)
		             : xasprintf("Authorization: Bearer %s", ep->key);
		c->req_headers = curl_slist_append(c->req_headers, line);
		explicit_bzero(line, strlen(line));
		free(line);
	}
	c->req_headers = curl_slist_append(c->req_headers, "Expect:");
	int has_ctype = 0;
	for (size_t i = 0; i < c->nhdrs; i++)
		has_ctype |= strcasecmp(c->hdrs[i].name, "content-type") == 0;
	if (!has_ctype)  /* libcurl would add a form content type of its own */
		c->req_headers = curl_slist_append(c->req_headers, "Content-Type:");
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, c->req_headers);
	if (c->parser.method == HTTP_POST) {
		curl_easy_setopt(h, CURLOPT_POST, 1L);
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)c->body.len);
		curl_easy_setopt(h, CURLOPT_COPYPOSTFIELDS, c->body.data ? c->body.data : "");
	} else {
		curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
	}
	curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");
	/* paddock's own proxy variables are not the sandbox's business. */
	curl_easy_setopt(h, CURLOPT_PROXY, "");
	curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, (long)CONNECT_TIMEOUT);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	if (g->cfg->gw_ca_file)
		curl_easy_setopt(h, CURLOPT_CAINFO, g->cfg->gw_ca_file);
	if (ep->resolve) {
		c->resolve_list = curl_slist_append(NULL, ep->resolve);
		curl_easy_setopt(h, CURLOPT_RESOLVE, c->resolve_list);
	}
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_resp_header);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, c);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_resp_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, c);
	curl_easy_setopt(h, CURLOPT_PRIVATE, c);
	c->bytes_up = c->body.len;
	c->easy = h;
	c->st = C_UPSTREAM;
	c->resp_chunked = 0;
	curl_multi_add_handle(g->multi, h);
}

/* ---- the allowlisting proxy ---- */

static void start_connect(struct gw *g, struct conn *c);

static void refuse(struct gw *g, struct conn *c, int status, const char *why)
{
	char msg[512];
	if (c->thost)
		snprintf(msg, sizeof msg, "%s:%d refused: %s", c->thost, c->tport, why);
	else
		snprintf(msg, sizeof msg, "refused: %s", why);
	answer(c, status, msg);
	record(g, c, "refused", why);
}

static int addr_allowed_internal(struct gw *g, const struct sockaddr *sa)
{
	for (size_t i = 0; i < g->nallow; i++)
		if (egress_cidr_contains(&g->allow[i], sa))
			return 1;
	return 0;
}

static void addr_text(const struct sockaddr_storage *ss, char *out, size_t len)
{
	if (ss->ss_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)ss)->sin_addr, out, (socklen_t)len);
	else
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)ss)->sin6_addr, out,
		          (socklen_t)len);
}

/* Every address must pass, not just the first: the connect may fall back
 * to any of them. */
static void check_and_connect(struct gw *g, struct conn *c)
{
	for (size_t i = 0; i < c->naddrs; i++) {
		const struct sockaddr *sa = (const struct sockaddr *)&c->addrs[i];
		const char *why = egress_addr_internal(sa);
		if (why && !addr_allowed_internal(g, sa)) {
			char ip[INET6_ADDRSTRLEN], msg[200];
			addr_text(&c->addrs[i], ip, sizeof ip);
			snprintf(msg, sizeof msg, "resolves to a %s address %s", why, ip);
			refuse(g, c, 403, msg);
			return;
		}
	}
	if (g->ntunnels >= g->cfg->gw_max_tunnels) {
		refuse(g, c, 429, "too many open connections for this task (gateway.max-tunnels)");
		return;
	}
	g->ntunnels++;
	c->tunnel_counted = 1;
	c->nexta = 0;
	start_connect(g, c);
}

static void lookup_start(struct gw *g, struct conn *c)
{
	struct lookup *l = xcalloc(1, sizeof *l);
	l->conn = c;
	l->name = xstrdup(c->thost);
	l->hints.ai_socktype = SOCK_STREAM;
	l->hints.ai_family = AF_UNSPEC;
	l->cb.ar_name = l->name;
	l->cb.ar_request = &l->hints;
	l->list[0] = &l->cb;
	struct sigevent sev = { .sigev_notify = SIGEV_NONE };
	if (getaddrinfo_a(GAI_NOWAIT, l->list, 1, &sev) != 0) {
		free(l->name);
		free(l);
		refuse(g, c, 502, "the name could not be looked up");
		return;
	}
	l->next = g->lookups;
	g->lookups = l;
	c->lookup = l;
	c->st = C_RESOLVING;
}

/* Lookups are polled (SIGEV_NONE): no threads or signals of ours. */
static void lookups_poll(struct gw *g)
{
	struct lookup **pp = &g->lookups;
	while (*pp) {
		struct lookup *l = *pp;
		int rc = gai_error(&l->cb);
		if (rc == EAI_INPROGRESS) {
			pp = &l->next;
			continue;
		}
		*pp = l->next;
		struct conn *c = l->conn;
		if (c) {
			c->lookup = NULL;
			c->naddrs = 0;
			for (struct addrinfo *ai = rc == 0 ? l->cb.ar_result : NULL;
			     ai && c->naddrs < MAX_ADDRS; ai = ai->ai_next) {
				if (ai->ai_family != AF_INET && ai->ai_family != AF_INET6)
					continue;
				memcpy(&c->addrs[c->naddrs++], ai->ai_addr, ai->ai_addrlen);
			}
			if (c->naddrs == 0)
				refuse(g, c, 502, rc == 0 ? "the name has no address"
				                          : "the name could not be resolved");
			else
				check_and_connect(g, c);
		}
		if (l->cb.ar_result)
			freeaddrinfo(l->cb.ar_result);
		free(l->name);
		free(l);
	}
}

static void proxy_request(struct gw *g, struct conn *c)
{
	const char *url = c->url.data ? c->url.data : "";
	struct err e = {{0}};
	int is_ip = 0;

	snprintf(c->method, sizeof c->method, "%s", http_method_str(c->parser.method));
	if (c->parser.method == HTTP_CONNECT) {
		c->kind = "tunnel";
		if (egress_authority_parse(url, &c->thost, &c->tport, &is_ip, &e) < 0) {
			refuse(g, c, 400, e.msg);
			return;
		}
	} else {
		c->kind = "http";
		c->keep_alive = 0;
		if (url[0] == '/') {
			refuse(g, c, 400, "not a proxy request: send http://HOST/PATH or CONNECT "
			                  "HOST:PORT (set HTTPS_PROXY and HTTP_PROXY)");
			return;
		}
		if (egress_url_parse(url, &c->thost, &c->tport, &is_ip, &c->tpath, &e) < 0) {
			refuse(g, c, 400, e.msg);
			return;
		}
		c->path = xstrndup(c->tpath, strcspn(c->tpath, "?#"));
		c->tplain = 1;
		if (c->too_big) {
			refuse(g, c, 413, "the request body is over gateway.max-body");
			return;
		}
	}
	if (!egress_rules_allow(g->rules, g->nrules, c->thost, c->tport, c->tplain)) {
		refuse(g, c, 403, is_ip ? "an address that is not on the allowlist"
		                        : "not on the allowlist (repo allow-host)");
		return;
	}
	c->naddrs = 0;
	if (is_ip) {
		struct sockaddr_storage *ss = &c->addrs[0];
		memset(ss, 0, sizeof *ss);
		if (inet_pton(AF_INET, c->thost, &((struct sockaddr_in *)ss)->sin_addr) == 1)
			ss->ss_family = AF_INET;
		else if (inet_pton(AF_INET6, c->thost, &((struct sockaddr_in6 *)ss)->sin6_addr) == 1)
			ss->ss_family = AF_INET6;
		c->naddrs = ss->ss_family ? 1 : 0;
	} else {
		c->naddrs = egress_hosts_lookup(g->hosts, c->thost, c->addrs, MAX_ADDRS);
	}
	if (c->naddrs > 0) {
		check_and_connect(g, c);
	} else if (is_ip || !g->cfg->gw_dns) {
		refuse(g, c, 502, "the name cannot be resolved (gateway.dns is off and "
		                  "gateway.hosts-file does not list it)");
	} else {
		lookup_start(g, c);
	}
}

static void set_port(struct sockaddr_storage *ss, int port)
{
	if (ss->ss_family == AF_INET)
		((struct sockaddr_in *)ss)->sin_port = htons((uint16_t)port);
	else
		((struct sockaddr_in6 *)ss)->sin6_port = htons((uint16_t)port);
}

static void tunnel_ready(struct gw *g, struct conn *c)
{
	(void)g;
	c->st = C_TUNNEL;
	if (c->parser.method == HTTP_CONNECT) {
		out_printf(c, "HTTP/1.1 200 Connection established\r\n\r\n");
		c->status = 200;
		/* Bytes the client sent after its CONNECT head (a TLS hello). */
		buf_add(&c->uout, c->in.data ? c->in.data : "", c->in.len);
		c->bytes_up += c->in.len;
	} else {
		struct buf *u = &c->uout;
		buf_printf(u, "%s %s HTTP/1.1\r\n", c->method, c->tpath);
		if (c->tport == 80)
			buf_printf(u, "Host: %s\r\n", c->thost);
		else if (strchr(c->thost, ':'))
			buf_printf(u, "Host: [%s]:%d\r\n", c->thost, c->tport);
		else
			buf_printf(u, "Host: %s:%d\r\n", c->thost, c->tport);
		/* The Host the client sent is not trusted: the checked one is used. */
		for (size_t i = 0; i < c->nhdrs; i++) {
			const char *n = c->hdrs[i].name;
			if (strcasecmp(n, "host") == 0 || strcasecmp(n, "connection") == 0 ||
			    strcasecmp(n, "keep-alive") == 0 || strncasecmp(n, "proxy-", 6) == 0 ||
			    strcasecmp(n, "transfer-encoding") == 0 || strcasecmp(n, "te") == 0 ||
			    strcasecmp(n, "upgrade") == 0 || strcasecmp(n, "content-length") == 0)
				continue;
			buf_printf(u, "%s: %s\r\n", n, c->hdrs[i].value);
		}
		if (c->body.len)
			buf_printf(u, "Content-Length: %zu\r\n", c->body.len);
		buf_adds(u, "Connection: close\r\n\r\n");
		buf_add(u, c->body.data ? c->body.data : "", c->body.len);
		c->bytes_up += c->body.len;
	}
	buf_reset(&c->in);
}

static void start_connect(struct gw *g, struct conn *c)
{
	while (c->nexta < c->naddrs) {
		struct sockaddr_storage *ss = &c->addrs[c->nexta++];
		set_port(ss, c->tport);
		int fd = socket(ss->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0)
			continue;
		socklen_t len = ss->ss_family == AF_INET ? sizeof(struct sockaddr_in)
		                                         : sizeof(struct sockaddr_in6);
		if (connect(fd, (struct sockaddr *)ss, len) == 0) {
			c->ufd = fd;
			tunnel_ready(g, c);
			return;
		}
		if (errno == EINPROGRESS) {
			c->ufd = fd;
			c->st = C_CONNECTING;
			c->deadline = clock_mono() + CONNECT_TIMEOUT;
			return;
		}
		close(fd);
	}
	char msg[300];
	snprintf(msg, sizeof msg, "paddock gateway: cannot connect to %s:%d", c->thost, c->tport);
	answer(c, 502, msg);
	record(g, c, "allowed", "connection failed");
}

static void connect_done(struct gw *g, struct conn *c)
{
	int err = 0;
	socklen_t len = sizeof err;
	if (getsockopt(c->ufd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
		err = errno;
	if (err == 0) {
		tunnel_ready(g, c);
		return;
	}
	close(c->ufd);
	c->ufd = -1;
	start_connect(g, c);
}

/* ---- the loop ---- */

static void dispatch(struct gw *g, struct conn *c)
{
	if (c->ep >= 0) {
		/* An Upgrade (websocket) is answered as a plain request, then closed. */
		if (c->parser.upgrade)
			c->keep_alive = 0;
		model_request(g, c);
	} else {
		proxy_request(g, c);
	}
}

static void conn_parse(struct gw *g, struct conn *c)
{
	while (c->st == C_READ && c->in.len > 0) {
		size_t n = http_parser_execute(&c->parser, &parser_settings, c->in.data, c->in.len);
		enum http_errno he = HTTP_PARSER_ERRNO(&c->parser);
		memmove(c->in.data, c->in.data + n, c->in.len - n);
		c->in.len -= n;
		c->in.data[c->in.len] = '\0';
		if (c->head_too_big) {
			c->kind = c->ep >= 0 ? "model" : "http";
			answer(c, 431, "paddock gateway: the request head is too large");
			record(g, c, "refused", "request head too large");
			return;
		}
		if (he != HPE_OK && he != HPE_PAUSED) {
			char msg[200];
			c->kind = c->ep >= 0 ? "model" : "http";
			snprintf(msg, sizeof msg, "paddock gateway: malformed request: %s",
			         http_errno_description(he));
			answer(c, 400, msg);
			record(g, c, "refused", "malformed request");
			return;
		}
		if (c->msg_done) {
			dispatch(g, c);
			return;
		}
		if (n == 0)
			break;
	}
	if (c->st == C_READ && c->client_eof) {
		if (c->url.len || c->nhdrs) {
			c->kind = c->ep >= 0 ? "model" : "http";
			record(g, c, "refused", "the client closed mid-request");
		}
		c->st = C_DEAD;
	}
}

static void conn_read(struct gw *g, struct conn *c)
{
	char tmp[16384];
	ssize_t n = recv(c->fd, tmp, sizeof tmp, 0);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		c->client_eof = 1;
		if (c->st == C_TUNNEL)
			return;
		if (c->st != C_READ) {
			/* Gone while its request was in flight: nothing to answer. */
			if (c->st == C_UPSTREAM)
				record(g, c, "allowed", "the client went away");
			c->st = C_DEAD;
			return;
		}
		conn_parse(g, c);
		return;
	}
	if (c->st == C_TUNNEL && c->tplain)
		return;  /* one checked request per plain-HTTP connection: no raw bytes after it */
	if (c->st == C_TUNNEL) {
		buf_add(&c->uout, tmp, (size_t)n);
		c->bytes_up += (size_t)n;
		return;
	}
	if (c->in.len + (size_t)n > HEAD_MAX + g->cfg->gw_max_body + 65536) {
		c->kind = c->ep >= 0 ? "model" : "http";
		answer(c, 413, "paddock gateway: the request is too large");
		record(g, c, "refused", "request too large");
		return;
	}
	buf_add(&c->in, tmp, (size_t)n);
	if (c->st == C_READ)
		conn_parse(g, c);
}

static int flush_to(int fd, struct buf *b, size_t *off)
{
	while (*off < b->len) {
		ssize_t w = send(fd, b->data + *off, b->len - *off, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EAGAIN)
			return 0;
		if (w <= 0)
			return -1;
		*off += (size_t)w;
	}
	buf_reset(b);
	*off = 0;
	return 0;
}

static void tunnel_upstream_read(struct gw *g, struct conn *c)
{
	(void)g;
	char tmp[16384];
	ssize_t n = recv(c->ufd, tmp, sizeof tmp, 0);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		c->upstream_eof = 1;
		return;
	}
	if (c->tplain && c->bytes_down == 0 && n > 12 && strncmp(tmp, "HTTP/1.", 7) == 0)
		c->status = atoi(tmp + 9);
	buf_add(&c->out, tmp, (size_t)n);
	c->bytes_down += (size_t)n;
}

static void tunnel_progress(struct gw *g, struct conn *c)
{
	if (c->ufd >= 0 && flush_to(c->ufd, &c->uout, &c->uout_off) < 0) {
		c->st = C_DEAD;
		return;
	}
	if (c->client_eof && c->uout.len == 0 && !c->shut_upstream && c->ufd >= 0) {
		shutdown(c->ufd, SHUT_WR);
		c->shut_upstream = 1;
	}
	if (c->upstream_eof && c->out.len == 0) {
		c->st = C_DEAD;
		return;
	}
	(void)g;
}

static void conn_finish(struct gw *g, struct conn *c, const char *why)
{
	/* Tunnels are recorded when they end, with their byte counts. */
	if ((c->kind && strcmp(c->kind, "model") != 0) && c->tunnel_counted && c->ufd >= 0)
		record(g, c, "allowed", c->end_reason);
	/* A model response cut short (the agent hung up once it had the last
	 * event, or the sandbox ended) still spent tokens: count what streamed
	 * through, so the task's usage matches what the upstream bills. */
	if (c->easy && c->usage) {
		if (usage_parser_finish(c->usage))
			usage_changed(g, c);
		g->stats->requests++;
		c->status = c->resp_status;
		record(g, c, "allowed", why);
		report_usage(g);
	}
}

static volatile sig_atomic_t gw_stop;

static void on_stop(int sig)
{
	(void)sig;
	gw_stop = 1;
}

static int gw_setup(struct gw *g, const struct gateway_policy *p, int report_fd,
                    struct gateway_stats *stats, struct err *e)
{
	memset(g, 0, sizeof *g);
	g->p = p;
	g->cfg = p->cfg;
	g->report_fd = report_fd;
	g->stats = stats;
	for (size_t i = 0; i < p->nallow_hosts; i++) {
		g->rules = xrealloc(g->rules, (g->nrules + 1) * sizeof *g->rules);
		if (egress_rule_parse(p->allow_hosts[i], &g->rules[g->nrules], e) < 0)
			return -1;
		g->nrules++;
	}
	for (size_t i = 0; i < g->cfg->ngw_allow_address; i++) {
		g->allow = xrealloc(g->allow, (g->nallow + 1) * sizeof *g->allow);
		if (egress_cidr_parse(g->cfg->gw_allow_address[i], &g->allow[g->nallow]) == 0)
			g->nallow++;
	}
	if (g->cfg->gw_hosts_file && egress_hosts_load(g->cfg->gw_hosts_file, &g->hosts, e) < 0)
		return -1;
	if (p->model_endpoints) {
		g->neps = g->cfg->nendpoints;
		g->eps = xcalloc(g->neps + 1, sizeof *g->eps);
		for (size_t i = 0; i < g->neps; i++) {
			struct endpoint_rt *ep = &g->eps[i];
			ep->conf = &g->cfg->endpoints[i];
			ep->key = config_endpoint_key(ep->conf);
			/* The upstream's name goes through the same resolver as the
			 * proxy's (but may be internal: a local model server is). */
			CURLU *cu = curl_url();
			char *host = NULL, *port = NULL;
			if (curl_url_set(cu, CURLUPART_URL, ep->conf->upstream, 0) == CURLUE_OK &&
			    curl_url_get(cu, CURLUPART_HOST, &host, 0) == CURLUE_OK &&
			    curl_url_get(cu, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) == CURLUE_OK) {
				struct sockaddr_storage ss;
				char *norm = NULL;
				struct err ne;
				unsigned char bin[16];
				int literal = inet_pton(AF_INET, host, bin) == 1 || host[0] == '[';
				if (!literal && egress_host_normalize(host, strlen(host), &norm, &ne) == 0 &&
				    egress_hosts_lookup(g->hosts, norm, &ss, 1) == 1) {
					char ip[INET6_ADDRSTRLEN];
					addr_text(&ss, ip, sizeof ip);
					ep->resolve = ss.ss_family == AF_INET6
					              ? xasprintf("%s:%s:[%s]", host, port, ip)
					              : xasprintf("%s:%s:%s", host, port, ip);
				} else if (!literal && !g->cfg->gw_dns) {
					ep->refuse = xasprintf("paddock gateway: cannot resolve %s: gateway.dns "
					                       "is off and gateway.hosts-file does not list it",
					                       host);
				}
				free(norm);
			}
			curl_free(host);
			curl_free(port);
			curl_url_cleanup(cu);
		}
	}
	return 0;
}

static void gw_free(struct gw *g)
{
	while (g->conns) {
		struct conn *c = g->conns;
		g->conns = c->next;
		conn_free(g, c);
	}
	for (size_t i = 0; i < g->neps; i++) {
		if (g->eps[i].key)
			explicit_bzero(g->eps[i].key, strlen(g->eps[i].key));
		free(g->eps[i].key);
		free(g->eps[i].resolve);
		free(g->eps[i].refuse);
	}
	free(g->eps);
	for (size_t i = 0; i < g->nrules; i++)
		egress_rule_free(&g->rules[i]);
	free(g->rules);
	free(g->allow);
	egress_hosts_free(g->hosts);
	/* Lookups still running keep their memory: the process is ending. */
}

#define GATEWAY_UID 65534  /* nobody */

static int gateway_drop_root(void)
{
	pid_t parent = getppid();
	int deathsig = 0;
	prctl(PR_GET_PDEATHSIG, &deathsig);
	if (setgroups(0, NULL) < 0 || setresgid(GATEWAY_UID, GATEWAY_UID, GATEWAY_UID) < 0 ||
	    setresuid(GATEWAY_UID, GATEWAY_UID, GATEWAY_UID) < 0)
		return -1;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -1;
	/* The uid change cleared the parent-death signal. */
	if (deathsig) {
		if (prctl(PR_SET_PDEATHSIG, deathsig) < 0)
			return -1;
		if (getppid() != parent)
			_exit(1);
	}
	return 0;
}

int gateway_serve(const struct gateway_policy *p, const int *listen_fds, size_t nfds,
                  int report_fd, struct gateway_stats *stats)
{
	struct gw g;
	struct err e = {{0}};
	struct sigaction sa = { .sa_handler = on_stop };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	stats->total = p->base;
	stats->cost = p->base_cost;
	stats->requests = p->base_requests;
	stats->unpriced = p->base_unpriced;
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0)
		return 1;
	if (gw_setup(&g, p, report_fd, stats, &e) < 0) {
		fprintf(stderr, "paddock gateway: %s\n", e.msg);
		gw_free(&g);
		return 1;
	}
	if (nfds != g.neps + 1) {
		fprintf(stderr, "paddock gateway: %zu listeners for %zu endpoints\n", nfds, g.neps);
		gw_free(&g);
		return 1;
	}
	/* Everything root was needed for is open (keys, hosts file, our
	 * listeners): what parses the sandbox's requests runs as nobody. */
	if (getuid() == 0 && gateway_drop_root() < 0) {
		fprintf(stderr, "paddock gateway: cannot drop root: %s\n", strerror(errno));
		gw_free(&g);
		return 1;
	}
	g.multi = curl_multi_init();
	/* Budget already spent by earlier rounds: refuse from the start. */
	usage_changed(&g, NULL);

	size_t cap = 16;
	struct curl_waitfd *wf = xcalloc(cap, sizeof *wf);
	struct conn **owner = xcalloc(cap, sizeof *owner);
	int *which = xcalloc(cap, sizeof *which);   /* 0 client, 1 upstream, 2 listener */
	while (!gw_stop) {
		size_t n = 0;
		size_t need = nfds + 2 * g.nconns + 1;
		if (need > cap) {
			cap = need * 2;
			wf = xrealloc(wf, cap * sizeof *wf);
			owner = xrealloc(owner, cap * sizeof *owner);
			which = xrealloc(which, cap * sizeof *which);
		}
		for (size_t i = 0; i < nfds; i++) {
			wf[n] = (struct curl_waitfd){ .fd = listen_fds[i],
			                              .events = g.nconns < MAX_CONNS ? CURL_WAIT_POLLIN : 0 };
			owner[n] = NULL;
			which[n++] = 2 + (int)i;
		}
		int fast = g.lookups != NULL;
		for (struct conn *c = g.conns; c; c = c->next) {
			short ev = 0;
			int pending_out = c->out.len > c->out_off;
			if (pending_out)
				ev |= CURL_WAIT_POLLOUT;
			if (!c->client_eof &&
			    ((c->st == C_READ) || (c->st == C_TUNNEL && c->uout.len < OUT_HIGH) ||
			     c->st == C_UPSTREAM))
				ev |= CURL_WAIT_POLLIN;
			wf[n] = (struct curl_waitfd){ .fd = c->fd, .events = ev };
			owner[n] = c;
			which[n++] = 0;
			if (c->ufd >= 0 && (c->st == C_CONNECTING || c->st == C_TUNNEL)) {
				short uev = 0;
				if (c->st == C_CONNECTING || c->uout.len > c->uout_off)
					uev |= CURL_WAIT_POLLOUT;
				if (c->st == C_TUNNEL && !c->upstream_eof && c->out.len < OUT_HIGH)
					uev |= CURL_WAIT_POLLIN;
				wf[n] = (struct curl_waitfd){ .fd = c->ufd, .events = uev };
				owner[n] = c;
				which[n++] = 1;
			}
			if (c->st == C_CONNECTING || c->paused)
				fast = 1;
		}
		for (size_t i = 0; i < n; i++)
			wf[i].revents = 0;
		curl_multi_poll(g.multi, wf, (unsigned)n, fast ? 50 : 1000, NULL);
		int running;
		curl_multi_perform(g.multi, &running);
		CURLMsg *m;
		int left;
		while ((m = curl_multi_info_read(g.multi, &left))) {
			if (m->msg != CURLMSG_DONE)
				continue;
			struct conn *c = NULL;
			curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&c);
			if (c)
				model_done(&g, c, m->data.result);
		}
		for (size_t i = 0; i < n; i++) {
			short rev = wf[i].revents;
			if (!rev)
				continue;
			if (which[i] >= 2) {
				int fd = accept4(wf[i].fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
				if (fd >= 0) {
					int one = 1;
					setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
					size_t li = (size_t)(which[i] - 2);
					conn_new(&g, fd, li < g.neps ? (int)li : -1);
				}
				continue;
			}
			struct conn *c = owner[i];
			if (c->st == C_DEAD)
				continue;
			if (which[i] == 0) {
				if (rev & CURL_WAIT_POLLOUT &&
				    flush_to(c->fd, &c->out, &c->out_off) < 0) {
					c->st = C_DEAD;
					continue;
				}
				if (rev & (CURL_WAIT_POLLIN | CURL_WAIT_POLLPRI))
					conn_read(&g, c);
			} else {
				if (c->st == C_CONNECTING && (rev & (CURL_WAIT_POLLOUT)))
					connect_done(&g, c);
				else if (c->st == C_TUNNEL && (rev & CURL_WAIT_POLLIN))
					tunnel_upstream_read(&g, c);
			}
		}
		lookups_poll(&g);
		double t = clock_mono();
		struct conn **pp = &g.conns;
		while (*pp) {
			struct conn *c = *pp;
			if (c->st == C_CONNECTING && t > c->deadline) {
				close(c->ufd);
				c->ufd = -1;
				start_connect(&g, c);
			}
			if (c->out.len > c->out_off && c->st != C_DEAD &&
			    flush_to(c->fd, &c->out, &c->out_off) < 0)
				c->st = C_DEAD;
			if (c->st == C_TUNNEL)
				tunnel_progress(&g, c);
			/* A tunnel that moves nothing holds one of max-tunnels for
			 * good: closed after gateway.tunnel-idle. */
			if (c->st == C_TUNNEL) {
				uint64_t moved = c->bytes_up + c->bytes_down;
				if (moved != c->idle_bytes || c->idle_since == 0) {
					c->idle_bytes = moved;
					c->idle_since = t;
				} else if (p->cfg->gw_tunnel_idle > 0 &&
				           t - c->idle_since >= p->cfg->gw_tunnel_idle) {
					c->end_reason = "closed after gateway.tunnel-idle without traffic";
					c->st = C_DEAD;
				}
			}
			if (c->paused && c->easy && c->out.len - c->out_off < OUT_HIGH / 2) {
				c->paused = 0;
				curl_easy_pause(c->easy, CURLPAUSE_CONT);
			}
			if (c->st == C_FLUSH_CLOSE && c->out.len <= c->out_off)
				c->st = C_DEAD;
			if (c->st == C_READ && c->in.len && !c->msg_done)
				conn_parse(&g, c);
			if (c->st == C_DEAD) {
				conn_finish(&g, c, "the agent closed the connection first");
				*pp = c->next;
				g.nconns--;
				conn_free(&g, c);
				continue;
			}
			pp = &c->next;
		}
	}
	/* Stopped with the sandbox: what was still open is recorded too. */
	for (struct conn *c = g.conns; c; c = c->next)
		conn_finish(&g, c, "the sandbox ended first");
	free(wf);
	free(owner);
	free(which);
	gw_free(&g);
	curl_multi_cleanup(g.multi);
	curl_global_cleanup();
	return 0;
}

/* ---- start and stop ---- */

struct gateway {
	pid_t pid;
	int netns_fd;
	char *bridge_dir;      /* bridge: the host dir of our unix sockets */
	char *bridge_ports;    /* bridge: "8081,8082,3128", for paddock-bridge */
	int ports[MAX_ADDRS + 1];  /* the listeners' ports */
	size_t nports;
	char *note;            /* why the bridge stands in for the namespace */
	struct gateway_stats *stats;
	char **env;
};

/* Child: a new network namespace with lo up and our listeners in it; the
 * fds go back over sock.  Runs as root in the supervisor. */
static void netns_child(int sock, const int *ports, size_t nports)
{
	int fds[MAX_ADDRS + 2];
	size_t nfd = 0;
	if (unshare(CLONE_NEWNET) < 0)
		_exit(errno == EPERM ? 9 : 10);
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct ifreq ifr;
	memset(&ifr, 0, sizeof ifr);
	snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "lo");
	if (s < 0 || ioctl(s, SIOCGIFFLAGS, &ifr) < 0)
		_exit(11);
	ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
	if (ioctl(s, SIOCSIFFLAGS, &ifr) < 0)
		_exit(12);
	close(s);
	for (size_t i = 0; i < nports; i++) {
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		int one = 1;
		struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)ports[i]),
		                         .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
		if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
		    bind(fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(fd, 64) < 0)
			_exit(13);
		fds[nfd++] = fd;
	}
	fds[nfd] = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (fds[nfd] < 0)
		_exit(14);
	nfd++;
	char cbuf[CMSG_SPACE(sizeof(int) * (MAX_ADDRS + 2))];
	memset(cbuf, 0, sizeof cbuf);
	char byte = 'x';
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
	                      .msg_controllen = CMSG_SPACE(sizeof(int) * nfd) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int) * nfd);
	memcpy(CMSG_DATA(cm), fds, sizeof(int) * nfd);
	if (sendmsg(sock, &msg, 0) != 1)
		_exit(15);
	_exit(0);
}

static int make_netns(const int *ports, size_t nports, int *listen_fds, int *netns_fd,
                      struct err *e)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return err_set(e, _("cannot create the sandbox's network: %s"), strerror(errno));
	pid_t pid = fork();
	if (pid < 0) {
		close(sv[0]);
		close(sv[1]);
		return err_set(e, _("cannot create the sandbox's network: %s"), strerror(errno));
	}
	if (pid == 0) {
		close(sv[0]);
		netns_child(sv[1], ports, nports);
	}
	close(sv[1]);
	size_t nfd = nports + 1;
	char cbuf[CMSG_SPACE(sizeof(int) * (MAX_ADDRS + 2))];
	char byte;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
	                      .msg_controllen = sizeof cbuf };
	ssize_t r;
	do
		r = recvmsg(sv[0], &msg, MSG_CMSG_CLOEXEC);
	while (r < 0 && errno == EINTR);
	close(sv[0]);
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	struct cmsghdr *cm = r == 1 ? CMSG_FIRSTHDR(&msg) : NULL;
	if (!cm || cm->cmsg_type != SCM_RIGHTS || cm->cmsg_len != CMSG_LEN(sizeof(int) * nfd)) {
		int code = WIFEXITED(status) ? WEXITSTATUS(status) : 0;
		if (code == 9 || code == 10)
			return err_set(e, _("cannot create a network namespace (%s)"),
			               code == 9 ? strerror(EPERM) : _("unshare failed"));
		return err_set(e, _("cannot create the sandbox's network (step %d): paddock must "
		                    "run as root, and the ports of the endpoints must be distinct"),
		               code);
	}
	int fds[MAX_ADDRS + 2];
	memcpy(fds, CMSG_DATA(cm), sizeof(int) * nfd);
	for (size_t i = 0; i < nports; i++)
		listen_fds[i] = fds[i];
	*netns_fd = fds[nports];
	return 0;
}

static void bridge_remove(const char *dir, const int *ports, size_t nports)
{
	for (size_t i = 0; i < nports; i++) {
		char *path = xasprintf("%s/%d", dir, ports[i]);
		unlink(path);
		free(path);
	}
	rmdir(dir);
}

/* The fallback: our listeners are unix sockets in a new host dir that only
 * root and the sandbox's uid can enter; the sandbox sees the dir and
 * paddock-bridge relays its own 127.0.0.1 ports to them. */
static int make_bridge(const struct config *cfg, const int *ports, size_t nports, int *listen_fds,
                       char **dir_out, struct err *e)
{
	char tmpl[] = "/tmp/paddock-gateway-XXXXXX";
	char *dir = mkdtemp(tmpl);
	size_t made = 0;
	if (!dir)
		return err_errno(e, _("cannot create the gateway's socket folder in /tmp"));
	for (; made < nports; made++) {
		/* Bound and listening under a dot name first, then renamed: a
		 * socket named after its port always listens while its gateway
		 * lives, so the janitor can tell a dead one at any moment. */
		struct sockaddr_un a = { .sun_family = AF_UNIX };
		char final[sizeof a.sun_path];
		snprintf(a.sun_path, sizeof a.sun_path, "%s/.%d", dir, ports[made]);
		snprintf(final, sizeof final, "%s/%d", dir, ports[made]);
		int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(fd, 64) < 0 ||
		    chown(a.sun_path, cfg->sandbox_uid, cfg->sandbox_gid) < 0 ||
		    chmod(a.sun_path, 0600) < 0 || rename(a.sun_path, final) < 0) {
			err_errno(e, _("cannot create the gateway's socket %s"), final);
			if (fd >= 0)
				close(fd);
			unlink(a.sun_path);
			goto fail;
		}
		listen_fds[made] = fd;
	}
	if (chown(dir, cfg->sandbox_uid, cfg->sandbox_gid) < 0) {
		err_errno(e, _("cannot hand %s to the sandbox's user"), dir);
		goto fail;
	}
	*dir_out = xstrdup(dir);
	return 0;
fail:
	for (size_t i = 0; i < made; i++)
		close(listen_fds[i]);
	bridge_remove(dir, ports, nports);
	return -1;
}

/* 1 if the unix socket `name` in dirfd refuses connections (nobody
 * listens: its gateway is dead). */
static int socket_dead(int dirfd, const char *name)
{
	char path[64];
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	/* /proc/self/fd/N/NAME reaches the entry without following the
	 * folder's path again. */
	if ((size_t)snprintf(path, sizeof path, "/proc/self/fd/%d/%s", dirfd, name) >= sizeof path ||
	    strlen(path) >= sizeof a.sun_path)
		return 0;
	memcpy(a.sun_path, path, strlen(path) + 1);
	/* Non-blocking: a listener with a full backlog would hold a blocking
	 * connect (and serve's start) indefinitely; EAGAIN means alive. */
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return 0;
	int dead = connect(fd, (struct sockaddr *)&a, sizeof a) < 0 && errno == ECONNREFUSED;
	close(fd);
	return dead;
}

void gateway_janitor(void)
{
	DIR *tmp = opendir("/tmp");
	if (!tmp)
		return;
	struct dirent *de;
	while ((de = readdir(tmp))) {
		if (strncmp(de->d_name, "paddock-gateway-", 16) != 0)
			continue;
		int dfd = openat(dirfd(tmp), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (dfd < 0)
			continue;
		/* Ours hold only sockets named after ports, which listen as
		 * long as their gateway lives (make_bridge renames them into
		 * place once they listen); a folder with anything else, or a
		 * live socket, is left alone.  A ".PORT" socket is one being
		 * made: stale only in a folder untouched for a minute. */
		struct stat dst;
		if (fstat(dfd, &dst) < 0) {
			close(dfd);
			continue;
		}
		int old = time(NULL) - dst.st_mtime >= 60;
		DIR *d = fdopendir(dup(dfd));
		int stale = d != NULL, n = 0;
		struct dirent *e;
		while (stale && (e = readdir(d))) {
			struct stat st;
			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			n++;
			const char *num = e->d_name + (e->d_name[0] == '.');
			stale = *num && strspn(num, "0123456789") == strlen(num) &&
			        fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			        S_ISSOCK(st.st_mode) &&
			        (num == e->d_name ? socket_dead(dfd, e->d_name) : old);
		}
		if (stale && n > 0) {
			rewinddir(d);
			while ((e = readdir(d)))
				if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
					unlinkat(dfd, e->d_name, 0);
			unlinkat(dirfd(tmp), de->d_name, AT_REMOVEDIR);
		}
		if (d)
			closedir(d);
		close(dfd);
	}
	closedir(tmp);
}

static char *ports_list(const int *ports, size_t nports)
{
	struct buf b = { 0 };
	for (size_t i = 0; i < nports; i++)
		buf_printf(&b, "%s%d", i ? "," : "", ports[i]);
	return buf_detach(&b);
}

static void env_add(char ***env, size_t *n, char *kv)
{
	*env = xrealloc(*env, (*n + 2) * sizeof **env);
	(*env)[(*n)++] = kv;
	(*env)[*n] = NULL;
}

static char **make_env(const struct gateway_policy *p)
{
	const struct config *cfg = p->cfg;
	char **env = NULL;
	size_t n = 0;
	const char *names[] = { "HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy" };
	for (size_t i = 0; i < 4; i++)
		env_add(&env, &n, xasprintf("%s=http://127.0.0.1:%d", names[i], cfg->gw_proxy_port));
	env_add(&env, &n, xstrdup("NO_PROXY=127.0.0.1,localhost"));
	env_add(&env, &n, xstrdup("no_proxy=127.0.0.1,localhost"));
	if (!p->model_endpoints)
		return env;
	const struct endpoint_conf *agent_ep = config_find_endpoint(cfg, p->endpoint);
	int have_a = 0, have_o = 0;
	/* The agent's own endpoint first, so that it wins for its kind. */
	for (size_t k = 0; k <= cfg->nendpoints; k++) {
		const struct endpoint_conf *ep = k == 0 ? agent_ep : &cfg->endpoints[k - 1];
		if (!ep || (k > 0 && ep == agent_ep))
			continue;
		char *up = xstrdup(ep->name);
		for (char *q = up; *q; q++)
			*q = (*q >= 'a' && *q <= 'z') ? (char)(*q - 32) : (*q == '-' || *q == '.') ? '_' : *q;
		env_add(&env, &n, xasprintf("PADDOCK_ENDPOINT_%s=http://127.0.0.1:%d", up, ep->port));
		free(up);
		if (ep->kind == ENDPOINT_ANTHROPIC && !have_a) {
			have_a = 1;
			env_add(&env, &n, xasprintf("ANTHROPIC_BASE_URL=http://127.0.0.1:%d", ep->port));
			env_add(&env, &n, xstrdup("ANTHROPIC_API_KEY=" GATEWAY_PLACEHOLDER_KEY));
		} else if (ep->kind == ENDPOINT_OPENAI && !have_o) {
			have_o = 1;
			env_add(&env, &n, xasprintf("OPENAI_BASE_URL=http://127.0.0.1:%d/v1", ep->port));
			env_add(&env, &n, xstrdup("OPENAI_API_KEY=" GATEWAY_PLACEHOLDER_KEY));
		}
	}
	return env;
}

int gateway_start(const struct gateway_policy *p, int report_fd, struct gateway **out,
                  struct err *e)
{
	const struct config *cfg = p->cfg;
	int ports[MAX_ADDRS + 1], lfds[MAX_ADDRS + 1];
	size_t nports = 0;
	*out = NULL;
	if (p->model_endpoints) {
		if (cfg->nendpoints > MAX_ADDRS)
			return err_set(e, _("too many model endpoints (at most %d)"), MAX_ADDRS);
		for (size_t i = 0; i < cfg->nendpoints; i++)
			ports[nports++] = cfg->endpoints[i].port;
	}
	ports[nports++] = cfg->gw_proxy_port;
	struct gateway *g = xcalloc(1, sizeof *g);
	g->netns_fd = -1;
	memcpy(g->ports, ports, nports * sizeof *ports);
	g->nports = nports;
	g->stats = mmap(NULL, sizeof *g->stats, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
	                -1, 0);
	if (g->stats == MAP_FAILED) {
		free(g);
		return err_set(e, _("cannot start the gateway: %s"), strerror(errno));
	}
	memset(g->stats, 0, sizeof *g->stats);
	int made = -1;
	if (cfg->gw_network != GW_NETWORK_BRIDGE) {
		made = make_netns(ports, nports, lfds, &g->netns_fd, e);
		/* Where no namespace can be made for the sandbox to join (a
		 * container that forbids it), bwrap can still make one of its own. */
		if (made < 0 && cfg->gw_network == GW_NETWORK_AUTO) {
			g->note = xasprintf(_("the sandbox reaches the gateway through paddock-bridge: %s"),
			                    e->msg);
			memset(e, 0, sizeof *e);
		}
	}
	if (made < 0 && cfg->gw_network != GW_NETWORK_NAMESPACE) {
		made = make_bridge(cfg, ports, nports, lfds, &g->bridge_dir, e);
		if (made == 0)
			g->bridge_ports = ports_list(ports, nports);
	}
	if (made < 0) {
		munmap(g->stats, sizeof *g->stats);
		free(g->note);
		free(g);
		return -1;
	}
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		int saved = errno;
		for (size_t i = 0; i < nports; i++)
			close(lfds[i]);
		g->pid = -1;
		gateway_stop(g);
		return err_set(e, _("cannot start the gateway: %s"), strerror(saved));
	}
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(1);
		/* Only the listeners, the report pipe and stdio stay open. */
		for (int fd = 3; fd < 1024; fd++) {
			int keep = fd == report_fd;
			for (size_t i = 0; i < nports; i++)
				keep |= fd == lfds[i];
			if (!keep)
				close(fd);
		}
		for (size_t i = 0; i < nports; i++)
			fcntl(lfds[i], F_SETFL, O_NONBLOCK);
		_exit(gateway_serve(p, lfds, nports, report_fd, g->stats));
	}
	for (size_t i = 0; i < nports; i++)
		close(lfds[i]);
	g->pid = pid;
	sandbox_other_child(pid, 1);
	g->env = make_env(p);
	*out = g;
	return 0;
}

void gateway_sandbox_spec(const struct gateway *g, struct sandbox_spec *spec)
{
	spec->has_netns = g->netns_fd >= 0;
	spec->netns_fd = g->netns_fd;
	spec->bridge_dir = g->bridge_dir;
	spec->bridge_ports = g->bridge_ports;
}

const char *gateway_note(const struct gateway *g)
{
	return g ? g->note : NULL;
}

const char *const *gateway_env(const struct gateway *g)
{
	return (const char *const *)g->env;
}

const struct gateway_stats *gateway_stats(const struct gateway *g)
{
	return g->stats;
}

void gateway_stop(struct gateway *g)
{
	if (!g)
		return;
	if (g->pid > 0) {
		kill(g->pid, SIGTERM);
		int status;
		struct timespec ts = { 0, 10 * 1000 * 1000 };
		for (int i = 0; i < 200; i++) {
			pid_t r = waitpid(g->pid, &status, WNOHANG);
			if (r == g->pid || (r < 0 && errno != EINTR))
				break;
			if (i == 199) {
				kill(g->pid, SIGKILL);
				while (waitpid(g->pid, &status, 0) < 0 && errno == EINTR)
					;
			}
			nanosleep(&ts, NULL);
		}
	}
	if (g->pid > 0)
		sandbox_other_child(g->pid, 0);
	if (g->netns_fd >= 0)
		close(g->netns_fd);
	if (g->bridge_dir)
		bridge_remove(g->bridge_dir, g->ports, g->nports);
	free(g->bridge_dir);
	free(g->bridge_ports);
	free(g->note);
	for (size_t i = 0; g->env && g->env[i]; i++)
		free(g->env[i]);
	free(g->env);
	munmap(g->stats, sizeof *g->stats);
	free(g);
}
