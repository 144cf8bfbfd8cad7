/* client: paddock's own client of a `paddock serve` HTTP API (client.h). */
#include "autoconfig.h"

#include <arpa/inet.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <curl/curl.h>

#include "client.h"
#include "curlx.h"
#include "i18n.h"
#include "urlmatch.h"

/* The longest line of an event stream, and the most data one event may
 * carry: a log line is far shorter; more is a server gone wrong. */
#define CLIENT_SSE_LINE_MAX (1u << 20)
#define CLIENT_SSE_EVENT_MAX (16u << 20)
/* An event stream with nothing (not even a ping, every 15 s) for this
 * long is dead. */
#define CLIENT_SSE_IDLE_S 60L

struct client {
	char *url;                 /* as given */
	char *base;                /* url without trailing '/' */
	char *auth;                /* "Authorization: Bearer ..." or NULL */
};

static pthread_once_t client_curl_once = PTHREAD_ONCE_INIT;

static void client_curl_init(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
}

/* Plain http to this machine: 127.0.0.0/8, localhost or [::1], as libcurl
 * reads the host (urlmatch_parse normalises it). */
static int client_loopback(const struct urlmatch_url *u, const char *url)
{
	if (strcmp(u->scheme, "http") != 0)
		return 0;
	if (urlmatch_is_loopback_http(url))
		return 1;
	struct in_addr a;
	return inet_pton(AF_INET, u->host, &a) == 1 && (ntohl(a.s_addr) >> 24) == 127;
}

struct client *client_open(const char *url, const char *token, struct err *e)
{
	if (!url || !*url) {
		err_kind_set(e, ERR_INVALID, _("no server given: set --server URL, PADDOCK_SERVER "
		             "or [remote] server"));
		return NULL;
	}
	struct urlmatch_url u = {0};
	struct err pe = {{0}};
	if (urlmatch_parse(url, 0, &u, &pe) < 0) {
		err_kind_set(e, ERR_INVALID, _("the server '%s' is not an http:// or https:// URL "
		             "(%s)"), url, pe.msg);
		return NULL;
	}
	if (strchr(url, '?')) {
		urlmatch_url_free(&u);
		err_kind_set(e, ERR_INVALID, _("the server '%s' has a query; give its URL without "
		             "one"), url);
		return NULL;
	}
	int plain_remote = strcmp(u.scheme, "https") != 0 && !client_loopback(&u, url);
	urlmatch_url_free(&u);
	if (token && *token && plain_remote) {
		err_kind_set(e, ERR_INVALID, _("refusing to send the API token over plain http to "
		             "%s: use an https:// URL (plain http only to this machine)"), url);
		return NULL;
	}
	if (token && strpbrk(token, "\r\n")) {
		err_kind_set(e, ERR_INVALID, _("the API token has a line break; give the token "
		             "alone"));
		return NULL;
	}
	pthread_once(&client_curl_once, client_curl_init);
	struct client *c = xcalloc(1, sizeof *c);
	c->url = xstrdup(url);
	size_t n = strlen(url);
	while (n && url[n - 1] == '/')
		n--;
	c->base = xstrndup(url, n);
	if (token && *token)
		c->auth = xasprintf("Authorization: Bearer %s", token);
	return c;
}

void client_close(struct client *c)
{
	if (!c)
		return;
	if (c->auth) {
		explicit_bzero(c->auth, strlen(c->auth));
		free(c->auth);
	}
	free(c->url);
	free(c->base);
	free(c);
}

const char *client_url(const struct client *c)
{
	return c->url;
}

void client_resp_free(struct client_resp *r)
{
	if (!r)
		return;
	buf_free(&r->body);
	if (r->json)
		json_decref(r->json);
	free(r->content_type);
	memset(r, 0, sizeof *r);
}

/* ---- one request ---- */

struct client_sse;

struct client_xfer {
	CURL *curl;
	struct buf *body;
	int over;                  /* the body passed CLIENT_BODY_MAX */
	struct client_sse *sse;    /* an event stream's parser, or NULL */
};

static size_t client_write(char *p, size_t size, size_t n, void *arg);

static struct curl_slist *client_headers(const struct client *c, const char *accept, int json_body,
                                         const char *const *extra)
{
	struct curl_slist *h = NULL;
	if (accept)
		h = curl_slist_append(h, accept);
	h = curl_slist_append(h, "Expect:");
	if (json_body)
		h = curl_slist_append(h, "Content-Type: application/json");
	if (c->auth)
		h = curl_slist_append(h, c->auth);
	for (size_t i = 0; extra && extra[i]; i++)
		h = curl_slist_append(h, extra[i]);
	return h;
}

static void client_headers_free(struct curl_slist *h)
{
	/* The token leaves no copy behind in freed memory. */
	for (struct curl_slist *l = h; l; l = l->next)
		explicit_bzero(l->data, strlen(l->data));
	curl_slist_free_all(h);
}

/* The handle of a request to path, its common options set. */
static CURL *client_easy(const struct client *c, const char *method, const char *path,
                         struct curl_slist *hdrs, char *errbuf, struct client_xfer *x,
                         struct err *e)
{
	CURL *h = curl_easy_init();
	if (!h) {
		err_set(e, _("cannot start an HTTP request (libcurl)"));
		return NULL;
	}
	char *url = xasprintf("%s%s", c->base, path);
	curl_easy_setopt(h, CURLOPT_URL, url);
	free(url);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(h, CURLOPT_USERAGENT, "paddock/" PACKAGE_VERSION);
	curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, client_write);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, x);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 10L);
	const char *ca = getenv("PADDOCK_SERVER_CA");
	if (ca && *ca)
		curl_easy_setopt(h, CURLOPT_CAINFO, ca);
	curlx_safe(h);
	x->curl = h;
	return h;
}

static int client_is_json_type(const char *ct)
{
	return ct && (strncasecmp(ct, "application/json", 16) == 0 ||
	              (strncasecmp(ct, "application/", 12) == 0 && strstr(ct, "+json")));
}

long client_request(struct client *c, const char *method, const char *path, json_t *body,
                    const char *const *headers, double timeout_s, struct client_resp *out,
                    struct err *e)
{
	memset(out, 0, sizeof *out);
	char *payload = body ? json_dumps(body, JSON_COMPACT) : NULL;
	if (body && !payload) {
		err_set(e, _("cannot encode the request to %s %s as JSON"), method, path);
		return -1;
	}
	int has_accept = 0;
	for (size_t i = 0; headers && headers[i]; i++)
		has_accept |= strncasecmp(headers[i], "Accept:", 7) == 0;
	struct curl_slist *hdrs = client_headers(c, has_accept ? NULL : "Accept: application/json", payload != NULL,
	                                         headers);
	char errbuf[CURL_ERROR_SIZE] = "";
	struct client_xfer x = { .body = &out->body };
	CURL *h = client_easy(c, method, path, hdrs, errbuf, &x, e);
	if (!h) {
		client_headers_free(hdrs);
		free(payload);
		return -1;
	}
	if (payload) {
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, payload);
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, (long)strlen(payload));
	} else if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, "");
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, 0L);
	}
	if (strcmp(method, "HEAD") == 0)
		curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)((timeout_s > 0 ? timeout_s : 60) * 1000));
	/* A Content-Length over the cap fails before any of the body is read. */
	curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)CLIENT_BODY_MAX);
	CURLcode cc = curl_easy_perform(h);
	long status = -1;
	if (cc == CURLE_OK) {
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
		char *ct = NULL;
		curl_easy_getinfo(h, CURLINFO_CONTENT_TYPE, &ct);
		if (ct)
			out->content_type = xstrdup(ct);
	}
	curl_easy_cleanup(h);
	client_headers_free(hdrs);
	free(payload);
	if (x.over || cc == CURLE_FILESIZE_EXCEEDED) {
		client_resp_free(out);
		err_kind_set(e, ERR_REMOTE, _("the server's answer to %s %s is larger than %u MiB; "
		             "not read"), method, path, CLIENT_BODY_MAX >> 20);
		return -1;
	}
	if (cc != CURLE_OK) {
		client_resp_free(out);
		err_kind_set(e, ERR_UNAVAILABLE, _("cannot reach the paddock server at %s: %s"),
		             c->url, *errbuf ? errbuf : curl_easy_strerror(cc));
		return -1;
	}
	out->status = status;
	if (out->body.len && client_is_json_type(out->content_type))
		out->json = json_loadb(out->body.data, out->body.len, JSON_DECODE_ANY, NULL);
	return status;
}

/* ---- errors ---- */

int client_resp_error(const struct client_resp *r, struct err *e)
{
	if (r->status < 400)
		return 0;
	const char *msg = NULL, *code = "";
	if (json_is_object(r->json)) {
		json_t *m = json_object_get(r->json, "error");
		if (!json_is_string(m))
			m = json_object_get(r->json, "message");
		msg = json_string_value(m);
		json_t *k = json_object_get(r->json, "code");
		if (json_is_string(k))
			code = json_string_value(k);
	}
	enum err_kind kind = ERR_INTERNAL;
	switch (r->status) {
	case 404: kind = ERR_NOT_FOUND; break;
	case 400: case 413: case 422: kind = ERR_INVALID; break;
	case 401: case 403: kind = ERR_FORBIDDEN; break;
	case 429: case 503: kind = ERR_UNAVAILABLE; break;
	case 502: kind = ERR_REMOTE; break;
	case 409:
		kind = strcmp(code, "wrong_state") == 0 ? ERR_WRONG_STATE
		       : strcmp(code, "blocked") == 0 ? ERR_BLOCKED : ERR_CONFLICT;
		break;
	default: break;
	}
	/* The server's words, and what this side does about them. */
	if (msg && *msg && r->status == 401)
		return err_kind_set(e, kind, _("%s; give the API's token with PADDOCK_TOKEN or "
		                    "[remote] token-file"), msg);
	if (msg && *msg)
		return err_kind_set(e, kind, "%s", msg);
	/* Not the API's answer (a proxy's page, another server): its start. */
	int n = (int)(r->body.len > 160 ? 160 : r->body.len);
	const char *nl = n ? memchr(r->body.data, '\n', (size_t)n) : NULL;
	if (nl)
		n = (int)(nl - r->body.data);
	return err_kind_set(e, kind, _("the server answered HTTP %ld%s%.*s"), r->status,
	                    n ? ": " : "", n, n ? r->body.data : "");
}

/* A 3xx where JSON was expected: said as what it is. */
static int client_redirected(const struct client *c, long status, struct err *e)
{
	return err_kind_set(e, ERR_REMOTE, _("the server at %s answered with a redirect (HTTP %ld); "
	                    "paddock follows none: give the URL it moved to"), c->url, status);
}

json_t *client_get_json(struct client *c, const char *path, struct err *e)
{
	struct client_resp r;
	if (client_request(c, "GET", path, NULL, NULL, 0, &r, e) < 0)
		return NULL;
	json_t *j = NULL;
	if (client_resp_error(&r, e) == 0) {
		if (r.status >= 300)
			client_redirected(c, r.status, e);
		else if (r.json)
			j = json_incref(r.json);
		else
			err_kind_set(e, ERR_REMOTE, _("the server's answer to GET %s is not JSON"), path);
	}
	client_resp_free(&r);
	return j;
}

char *client_task_path(const char *id, const char *rest)
{
	char *x = client_escape(id);
	char *p = xasprintf("/tasks/%s%s", x, rest ? rest : "");
	free(x);
	return p;
}

json_t *client_get_task(struct client *c, const char *id, struct err *e)
{
	char *p = client_task_path(id, NULL);
	json_t *j = client_get_json(c, p, e);
	free(p);
	if (j && !json_is_object(j)) {
		json_decref(j);
		err_kind_set(e, ERR_REMOTE, _("the server's task is not a JSON object"));
		return NULL;
	}
	return j;
}

json_t *client_post_json(struct client *c, const char *path, json_t *body, long *status,
                         struct err *e)
{
	struct client_resp r;
	json_t *empty = body ? NULL : json_object();
	long st = client_request(c, "POST", path, body ? body : empty, NULL, 0, &r, e);
	if (empty)
		json_decref(empty);
	if (status)
		*status = st < 0 ? 0 : st;
	if (st < 0)
		return NULL;
	json_t *j = NULL;
	if (client_resp_error(&r, e) == 0) {
		if (r.status >= 300)
			client_redirected(c, r.status, e);
		else if (r.json)
			j = json_incref(r.json);
		else if (r.body.len == 0)
			j = json_null();
		else
			err_kind_set(e, ERR_REMOTE, _("the server's answer to POST %s is not JSON"), path);
	}
	client_resp_free(&r);
	return j;
}

/* ---- server-sent events ---- */

struct client_sse {
	client_event_fn fn;
	void *arg;
	int is_stream;             /* the answer is 200 text/event-stream */
	int checked;               /* is_stream decided */
	int stopped;               /* fn's non-zero value, or 0 */
	int bad;                   /* the stream broke the format */
	struct buf line;           /* the line being read */
	int cr;                    /* the last byte was CR (a CRLF's LF follows) */
	struct buf id, type, data;
	int has_data, has_field;   /* within the event being read */
	struct buf last_id;
	struct buf errbody;        /* an error's body (capped) */
};

static void client_sse_dispatch(struct client_sse *s)
{
	if (s->has_data) {
		struct client_event ev = {
			.id = s->id.data ? s->id.data : "",
			.type = s->type.len ? s->type.data : "message",
			.data = s->data.data ? s->data.data : "",
		};
		s->stopped = s->fn(s->arg, &ev);
	}
	buf_reset(&s->type);
	buf_reset(&s->data);
	s->has_data = s->has_field = 0;
}

/* One whole line of the stream (without its end). */
static void client_sse_line(struct client_sse *s)
{
	const char *l = s->line.data ? s->line.data : "";
	size_t n = s->line.len;
	if (n == 0) {
		client_sse_dispatch(s);
		return;
	}
	if (memchr(l, '\0', n)) {
		s->bad = 1;
		return;
	}
	if (l[0] == ':')
		return;
	const char *colon = memchr(l, ':', n);
	size_t fl = colon ? (size_t)(colon - l) : n;
	const char *v = colon ? colon + 1 : l + n;
	if (colon && *v == ' ')
		v++;
	size_t vl = (size_t)(l + n - v);
	s->has_field = 1;
	if (fl == 4 && memcmp(l, "data", 4) == 0) {
		if (s->has_data)
			buf_addc(&s->data, '\n');
		if (s->data.len + vl > CLIENT_SSE_EVENT_MAX) {
			s->bad = 1;
			return;
		}
		buf_add(&s->data, v, vl);
		s->has_data = 1;
	} else if (fl == 5 && memcmp(l, "event", 5) == 0) {
		buf_reset(&s->type);
		buf_add(&s->type, v, vl);
	} else if (fl == 2 && memcmp(l, "id", 2) == 0) {
		buf_reset(&s->id);
		buf_add(&s->id, v, vl);
		buf_reset(&s->last_id);
		buf_add(&s->last_id, v, vl);
	} else if (fl == 5 && memcmp(l, "retry", 5) == 0) {
		/* paddock's client reconnects on its own terms. */
	} else {
		/* The API sends no other field: this is not its stream. */
		s->bad = 1;
	}
}

static size_t client_sse_feed(struct client_sse *s, const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char ch = p[i];
		if (ch == '\n' && s->cr) {
			s->cr = 0;
			continue;
		}
		s->cr = ch == '\r';
		if (ch == '\n' || ch == '\r') {
			client_sse_line(s);
			buf_reset(&s->line);
			if (s->stopped || s->bad)
				return 0;
			continue;
		}
		if (s->line.len >= CLIENT_SSE_LINE_MAX) {
			s->bad = 1;
			return 0;
		}
		buf_addc(&s->line, ch);
	}
	return n;
}

static size_t client_write(char *p, size_t size, size_t n, void *arg)
{
	struct client_xfer *x = arg;
	size_t len = size * n;
	struct client_sse *s = x->sse;
	if (s) {
		if (!s->checked) {
			long st = 0;
			char *ct = NULL;
			curl_easy_getinfo(x->curl, CURLINFO_RESPONSE_CODE, &st);
			curl_easy_getinfo(x->curl, CURLINFO_CONTENT_TYPE, &ct);
			s->is_stream = st == 200 && ct && strncasecmp(ct, "text/event-stream", 17) == 0;
			s->checked = 1;
		}
		if (s->is_stream)
			return client_sse_feed(s, p, len);
		/* An error's body: the API's is small. */
		if (s->errbody.len + len > 65536) {
			x->over = 1;
			return 0;
		}
		buf_add(&s->errbody, p, len);
		return len;
	}
	if (x->body->len + len > CLIENT_BODY_MAX) {
		x->over = 1;
		return 0;
	}
	buf_add(x->body, p, len);
	return len;
}

static void client_sse_free(struct client_sse *s)
{
	buf_free(&s->line);
	buf_free(&s->id);
	buf_free(&s->type);
	buf_free(&s->data);
	buf_free(&s->last_id);
	buf_free(&s->errbody);
}

int client_events(struct client *c, const char *path, const char *last_id, client_event_fn fn,
                  void *arg, struct err *e)
{
	if (last_id && strpbrk(last_id, "\r\n"))
		return err_kind_set(e, ERR_INVALID, _("an event id has a line break"));
	char *lid = last_id && *last_id ? xasprintf("Last-Event-ID: %s", last_id) : NULL;
	const char *extra[] = { lid, NULL };
	struct curl_slist *hdrs = client_headers(c, "Accept: text/event-stream", 0, extra);
	free(lid);
	struct client_sse s = { .fn = fn, .arg = arg };
	struct client_xfer x = { .sse = &s };
	char errbuf[CURL_ERROR_SIZE] = "";
	CURL *h = client_easy(c, "GET", path, hdrs, errbuf, &x, e);
	if (!h) {
		client_headers_free(hdrs);
		return -1;
	}
	/* No overall timeout: a follower may wait for hours.  A stream with
	 * neither events nor pings for a minute is dead. */
	curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, CLIENT_SSE_IDLE_S);
	CURLcode cc = curl_easy_perform(h);
	long status = 0;
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_cleanup(h);
	client_headers_free(hdrs);
	int rc = 0;
	if (s.stopped) {
		rc = s.stopped;
	} else if (s.bad) {
		rc = err_kind_set(e, ERR_REMOTE, _("the server's event stream of %s is not one "
		                  "(a line too long, or a field the API does not send); stopped"),
		                  path);
	} else if (x.over) {
		rc = err_kind_set(e, ERR_REMOTE, _("the server's error answer to GET %s is too "
		                  "large; not read"), path);
	} else if (cc != CURLE_OK) {
		rc = err_kind_set(e, ERR_UNAVAILABLE, _("the event stream from %s broke off: %s"),
		                  c->url, *errbuf ? errbuf : curl_easy_strerror(cc));
	} else if (!s.is_stream) {
		struct client_resp r = { .status = status, .body = s.errbody };
		r.json = r.body.len ? json_loadb(r.body.data, r.body.len, JSON_DECODE_ANY, NULL) : NULL;
		if (client_resp_error(&r, e) == 0)
			err_kind_set(e, ERR_REMOTE, _("the server's answer to GET %s is not an event "
			             "stream (HTTP %ld)"), path, status);
		if (r.json)
			json_decref(r.json);
		rc = -1;
	} else if (s.line.len || s.has_field) {
		rc = err_kind_set(e, ERR_REMOTE, _("the server's event stream of %s ended within an "
		                  "event; stopped"), path);
	}
	client_sse_free(&s);
	return rc;
}

char *client_escape(const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	struct buf b = {0};
	buf_grow(&b, strlen(s) + 1);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
		    *p == '-' || *p == '.' || *p == '_' || *p == '~') {
			buf_addc(&b, (char)*p);
		} else {
			buf_addc(&b, '%');
			buf_addc(&b, hex[*p >> 4]);
			buf_addc(&b, hex[*p & 15]);
		}
	}
	return buf_detach(&b);
}
