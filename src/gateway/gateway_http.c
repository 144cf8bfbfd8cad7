/* The gateway's client side: connection buffers, request parsing with
 * http_parser, and the answers the gateway makes itself. */
#include "autoconfig.h"
#include "gateway_int.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "clock.h"

#define HEAD_MAX (64u * 1024)   /* request line and headers */

/* ---- client output ---- */

void gw_out_add(struct conn *c, const void *p, size_t n)
{
	buf_add(&c->out, p, n);
}

void gw_out_printf(struct conn *c, const char *fmt, ...)
{
	va_list ap;
	char tmp[2048];
	va_start(ap, fmt);
	int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	if (n > 0)
		gw_out_add(c, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

const char *gw_reason_phrase(int status)
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
void gw_answer(struct conn *c, int status, const char *msg)
{
	struct gw *g = c->gw;
	char *body;
	const char *ctype;
	if (c->ep >= 0) {
		json_t *o;
		if (g->eps[c->ep].conf->kind == ENDPOINT_ANTHROPIC)
			o = json_pack("{s:s, s:{s:s, s:s}}", "type", "error", "error", "type",
			              status == 413 ? "request_too_large" :
			              status == 404 ? "not_found_error" :
			              status == 401 ? "authentication_error" : "permission_error",
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
	gw_out_printf(c, "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
	              "Connection: close\r\n\r\n", status, gw_reason_phrase(status), ctype,
	              strlen(body));
	gw_out_add(c, body, strlen(body));
	free(body);
	c->status = status;
	c->keep_alive = 0;
	c->st = C_FLUSH_CLOSE;
	c->queued = 0;  /* answered: no longer waiting its turn */
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
			gw_out_add(c, "HTTP/1.1 100 Continue\r\n\r\n", 25);
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

void gw_request_reset(struct conn *c)
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

struct conn *gw_conn_new(struct gw *g, int fd, int ep)
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

void gw_conn_free(struct gw *g, struct conn *c)
{
	if (c->easy) {
		curl_multi_remove_handle(g->multi, c->easy);
		curl_easy_cleanup(c->easy);
	}
	gw_headers_free(&c->req_headers);
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
	gw_request_reset(c);
	buf_free(&c->in);
	buf_free(&c->out);
	buf_free(&c->uout);
	buf_free(&c->resp_head);
	free(c->tpath);
	free(c);
}

/* ---- reading and writing ---- */

void gw_conn_parse(struct gw *g, struct conn *c)
{
	while (c->st == C_READ && c->in.len > 0) {
		size_t n = http_parser_execute(&c->parser, &parser_settings, c->in.data, c->in.len);
		enum http_errno he = HTTP_PARSER_ERRNO(&c->parser);
		memmove(c->in.data, c->in.data + n, c->in.len - n);
		c->in.len -= n;
		c->in.data[c->in.len] = '\0';
		if (c->head_too_big) {
			c->kind = c->ep >= 0 ? "model" : "http";
			gw_answer(c, 431, "paddock gateway: the request head is too large");
			gw_record(g, c, "refused", "request head too large");
			return;
		}
		if (he != HPE_OK && he != HPE_PAUSED) {
			char msg[200];
			c->kind = c->ep >= 0 ? "model" : "http";
			snprintf(msg, sizeof msg, "paddock gateway: malformed request: %s",
			         http_errno_description(he));
			gw_answer(c, 400, msg);
			gw_record(g, c, "refused", "malformed request");
			return;
		}
		if (c->msg_done) {
			gw_dispatch(g, c);
			return;
		}
		if (n == 0)
			break;
	}
	if (c->st == C_READ && c->client_eof) {
		if (c->url.len || c->nhdrs) {
			c->kind = c->ep >= 0 ? "model" : "http";
			gw_record(g, c, "refused", "the client closed mid-request");
		}
		c->st = C_DEAD;
	}
}

void gw_conn_read(struct gw *g, struct conn *c)
{
	char tmp[16384];
	ssize_t n = recv(c->fd, tmp, sizeof tmp, 0);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n > 0 && c->st == C_READ) {
		/* Ack a request's first part at once: a client with Nagle on
		 * holds the body it wrote after the head until that ack, and a
		 * delayed ack costs it 40 ms a call.  (Quick ack does not stay
		 * on, hence each read; a unix socket just says no.) */
		int one = 1;
		setsockopt(c->fd, IPPROTO_TCP, TCP_QUICKACK, &one, sizeof one);
	}
	if (n <= 0) {
		c->client_eof = 1;
		if (c->st == C_TUNNEL)
			return;
		if (c->st != C_READ) {
			/* Gone while its request was in flight or waited: nothing
			 * to answer (conn_finish records it). */
			c->st = C_DEAD;
			return;
		}
		gw_conn_parse(g, c);
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
		gw_answer(c, 413, "paddock gateway: the request is too large");
		gw_record(g, c, "refused", "request too large");
		return;
	}
	buf_add(&c->in, tmp, (size_t)n);
	if (c->st == C_READ)
		gw_conn_parse(g, c);
}

int gw_flush_to(int fd, struct buf *b, size_t *off)
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
