/* The model endpoints: a reverse proxy per configured endpoint that
 * forwards allowed routes with the real key (libcurl) and reads token
 * usage from the responses. */
#include "autoconfig.h"
#include "gateway_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "clock.h"
#include "curlx.h"

#define PAUSE_DEFAULT 30.0
/* The output a request that names no maximum may reach, as reserved
 * (paddock-config(5), BUDGETS AND PRICES). */
#define RESERVE_OUTPUT_DEFAULT 32000
#define PAUSE_MAX 3600.0

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

/* What the agent's request may carry upstream: an allowlist per kind, so
 * that nothing else (credentials, cookies, the SDK's x-stainless-* notes
 * on the sandbox's runtime, an organisation or project to bill) leaves.
 * Accept-Encoding is libcurl's own: it decodes, and the client gets the
 * body as it is. */
static int request_header_allowed(enum endpoint_kind kind, const char *name)
{
	static const char *const common[] = { "content-type", "accept", "user-agent",
	                                      "idempotency-key", NULL };
	static const char *const anthropic[] = { "anthropic-version", "anthropic-beta", NULL };
	static const char *const openai[] = { "openai-beta", NULL };
	const char *const *own = kind == ENDPOINT_ANTHROPIC ? anthropic : openai;
	for (size_t i = 0; common[i]; i++)
		if (strcasecmp(name, common[i]) == 0)
			return 1;
	for (size_t i = 0; own[i]; i++)
		if (strcasecmp(name, own[i]) == 0)
			return 1;
	return 0;
}

/* Response headers the sandbox does not get: hop-by-hop ones, cookies,
 * and those naming the organisation, account or project of the key
 * (openai-organization, anthropic-organization-id, ...). */
static int response_header_dropped(const char *name)
{
	static const char *const drop[] = {
		"connection", "keep-alive", "transfer-encoding", "content-length",
		"content-encoding", "set-cookie", "set-cookie2", "proxy-authenticate",
		"proxy-connection", "alt-svc", "upgrade", "trailer", "www-authenticate", NULL };
	for (size_t i = 0; drop[i]; i++)
		if (strcasecmp(name, drop[i]) == 0)
			return 1;
	return strcasestr(name, "organization") || strcasestr(name, "organisation") ||
	       strcasestr(name, "account") || strcasestr(name, "project");
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
	if (response_header_dropped(name))
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
	gw_out_printf(c, "HTTP/1.1 %d %s\r\n", c->resp_status, gw_reason_phrase(c->resp_status));
	gw_out_add(c, c->resp_head.data ? c->resp_head.data : "", c->resp_head.len);
	if (c->resp_chunked)
		gw_out_printf(c, "Transfer-Encoding: chunked\r\n");
	gw_out_printf(c, "Connection: %s\r\n\r\n", c->keep_alive ? "keep-alive" : "close");
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
		gw_out_printf(c, "%zx\r\n", n);
	gw_out_add(c, data, n);
	if (c->resp_chunked)
		gw_out_add(c, "\r\n", 2);
	c->bytes_down += n;
	if (usage_parser_feed(c->usage, data, n))
		gw_usage_changed(c->gw, c);
	return n;
}

static void pause_upstream(struct gw *g, struct conn *c)
{
	double secs = c->retry_after > 0 ? c->retry_after : PAUSE_DEFAULT;
	if (secs > PAUSE_MAX)
		secs = PAUSE_MAX;
	json_t *o = json_pack("{s:s, s:f, s:i}", "endpoint", g->eps[c->ep].conf->name, "until",
	                      clock_wall() + secs, "status", c->resp_status);
	gw_report_line(g, REPORT_PAUSE, o);
	json_decref(o);
}

void gw_model_done(struct gw *g, struct conn *c, CURLcode rc)
{
	struct gateway_stats *st = g->stats;
	if (rc != CURLE_OK && !c->resp_started) {
		char msg[300];
		snprintf(msg, sizeof msg, "paddock gateway: the upstream %s did not answer: %s",
		         g->eps[c->ep].conf->upstream, curl_easy_strerror(rc));
		curl_multi_remove_handle(g->multi, c->easy);
		curl_easy_cleanup(c->easy);
		c->easy = NULL;
		gw_answer(c, 502, msg);
		st->last_status = 502;
		snprintf(st->last_error, sizeof st->last_error, "upstream_unreachable");
		snprintf(st->last_message, sizeof st->last_message, "%s", curl_easy_strerror(rc));
		gw_record(g, c, "allowed", msg + strlen("paddock gateway: "));
		return;
	}
	resp_start(c);
	if (rc != CURLE_OK) {
		gw_model_cut(g, c);
	} else {
		if (usage_parser_finish(c->usage))
			gw_usage_changed(g, c);
		st->requests++;
	}
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
		gw_out_add(c, "0\r\n\r\n", 5);
	}
	if (!c->keep_alive)
		c->st = C_FLUSH_CLOSE;
	curl_multi_remove_handle(g->multi, c->easy);
	curl_easy_cleanup(c->easy);
	c->easy = NULL;
	gw_headers_free(&c->req_headers);
	curl_slist_free_all(c->resolve_list);
	c->resolve_list = NULL;
	gw_record(g, c, "allowed", rc != CURLE_OK ? curl_easy_strerror(rc) : NULL);
	gw_report_usage(g);
	usage_parser_free(c->usage);
	c->usage = NULL;
	memset(&c->counted, 0, sizeof c->counted);
	c->counted_cost = 0;
	memset(&c->reserve, 0, sizeof c->reserve);
	c->reserve_cost = 0;
	buf_free(&c->resp_head);
	c->resp_started = c->resp_chunked = c->resp_sse = c->paused = 0;
	c->resp_status = 0;
	if (c->st != C_FLUSH_CLOSE) {
		c->st = C_READ;
		gw_request_reset(c);
		http_parser_pause(&c->parser, 0);
	}
}

/* The host recorded is the upstream's. */
static void model_note_target(struct conn *c, const struct endpoint_rt *ep)
{
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
}

/* Answers and records a model request refused for the budget: 1 then. */
static int model_refuse_budget(struct gw *g, struct conn *c)
{
	if (g->stats->over_budget && g->stats->unpriced_model[0]) {
		char msg[300];
		snprintf(msg, sizeof msg, "paddock gateway: the model %s has no price, so this "
		         "task's budget in USD cannot be kept; no more model requests are forwarded",
		         g->stats->unpriced_model);
		gw_answer(c, 403, msg);
		gw_record(g, c, "refused", "budget: a model without a price");
		return 1;
	}
	if (g->stats->over_budget) {
		gw_answer(c, 403, "paddock gateway: this task has spent its budget; no more model "
		                  "requests are forwarded");
		gw_record(g, c, "refused", "budget spent");
		return 1;
	}
	return 0;
}

/* Answers and records a request that is not forwarded; returns 1 then,
 * 0 for one that may go upstream. */
static int model_refuse(struct gw *g, struct conn *c, const struct endpoint_rt *ep,
                        const char *url)
{
	if (url[0] != '/') {
		gw_answer(c, 400, "paddock gateway: use a path such as /v1/messages, not a full URL");
		gw_record(g, c, "refused", "not an origin-form request");
		return 1;
	}
	if (c->too_big) {
		char msg[160];
		snprintf(msg, sizeof msg, "paddock gateway: the request body is over %llu bytes "
		         "(gateway.max-body)", (unsigned long long)g->cfg->gw_max_body);
		gw_answer(c, 413, msg);
		gw_record(g, c, "refused", "body over gateway.max-body");
		return 1;
	}
	int rc = route_check(ep->conf->kind, c->method, url);
	if (rc) {
		gw_answer(c, rc, rc == 404 ? "paddock gateway: this path is not forwarded"
		                           : "paddock gateway: this method is not forwarded here");
		gw_record(g, c, "refused", rc == 404 ? "path not allowed" : "method not allowed");
		return 1;
	}
	if (ep->missing) {
		/* Said here, not left to the upstream's "invalid API key": the
		 * task fails with this reason (pipeline.c, round_outcome). */
		struct gateway_stats *st = g->stats;
		char *msg = xasprintf("paddock gateway: %s", ep->missing);
		gw_answer(c, 401, msg);
		gw_record(g, c, "refused", ep->missing);
		free(msg);
		st->last_status = 401;
		snprintf(st->last_error, sizeof st->last_error, "authentication_error");
		snprintf(st->last_message, sizeof st->last_message, "%s", ep->missing);
		snprintf(st->no_key, sizeof st->no_key, "%s", ep->conf->name);
		st->stop = 1;
		return 1;
	}
	if (model_refuse_budget(g, c))
		return 1;
	if (ep->refuse) {
		gw_answer(c, 502, ep->refuse);
		gw_record(g, c, "refused", ep->refuse);
		return 1;
	}
	return 0;
}

void gw_headers_free(struct curl_slist **h)
{
	for (struct curl_slist *l = *h; l; l = l->next)
		explicit_bzero(l->data, strlen(l->data));
	curl_slist_free_all(*h);
	*h = NULL;
}

/* The client's headers that the API uses, with the endpoint's key. */
static void model_headers(struct conn *c, const struct endpoint_rt *ep)
{
	for (size_t i = 0; i < c->nhdrs; i++) {
		if (!request_header_allowed(ep->conf->kind, c->hdrs[i].name))
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
}

/* The upstream URL: the endpoint's base, then the request's path. */
static void model_set_url(CURL *h, const struct endpoint_rt *ep, const char *url)
{
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
	/* libcurl's default since 7.50.2; said so the upstream side never
	 * depends on the build's default. */
	curl_easy_setopt(h, CURLOPT_TCP_NODELAY, 1L);
	free(full);
}

/* Method, body, transport and callbacks of the upstream transfer. */
static void model_setopt(struct gw *g, struct conn *c, const struct endpoint_rt *ep, CURL *h)
{
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
	curlx_safe(h);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, (long)CONNECT_TIMEOUT);
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
}

/* What a request may cost at most: its maximum output (the body's
 * max_tokens, max_completion_tokens or max_output_tokens, times n; else
 * RESERVE_OUTPUT_DEFAULT) and an input of a token per 4 bytes of body, at
 * the named model's output rate and its input or cache-write rate,
 * whichever is higher.  Free calls (GET, count_tokens) reserve nothing. */
static void model_reserve(struct gw *g, struct conn *c)
{
	memset(&c->reserve, 0, sizeof c->reserve);
	c->reserve_cost = 0;
	c->reserve_model[0] = '\0';
	if (c->parser.method != HTTP_POST || strcmp(c->path, "/v1/messages/count_tokens") == 0)
		return;
	json_t *o = c->body.len ? json_loadb(c->body.data, c->body.len, 0, NULL) : NULL;
	uint64_t out = RESERVE_OUTPUT_DEFAULT;
	static const char *const max_names[] = { "max_tokens", "max_completion_tokens",
	                                         "max_output_tokens" };
	for (size_t i = 0; i < sizeof max_names / sizeof *max_names; i++) {
		json_t *v = json_object_get(o, max_names[i]);
		if (json_is_integer(v) && json_integer_value(v) > 0) {
			out = (uint64_t)json_integer_value(v);
			break;
		}
	}
	json_t *n = json_object_get(o, "n");
	if (json_is_integer(n) && json_integer_value(n) > 1 && json_integer_value(n) <= 128)
		out *= (uint64_t)json_integer_value(n);
	if (strcmp(c->path, "/v1/embeddings") == 0)
		out = 0;
	const char *model = json_string_value(json_object_get(o, "model"));
	snprintf(c->reserve_model, sizeof c->reserve_model, "%s", model ? model : "");
	json_decref(o);
	c->reserve.input = (c->body.len + 3) / 4;
	c->reserve.output = out;
	const struct price_conf *price = config_find_price(g->cfg, c->reserve_model);
	if (price) {
		double in_rate = price->cache_write > price->input ? price->cache_write : price->input;
		c->reserve_cost = ((double)c->reserve.input * in_rate +
		                   (double)c->reserve.output * price->output) / 1e6;
	}
}

/* Hands c's request to libcurl. */
static void model_start(struct gw *g, struct conn *c)
{
	struct endpoint_rt *ep = &g->eps[c->ep];
	const char *url = c->url.data ? c->url.data : "";
	c->queued = 0;
	CURL *h = curl_easy_init();
	if (!h) {
		gw_answer(c, 500, "paddock gateway: out of memory");
		gw_record(g, c, "refused", "out of memory");
		return;
	}
	model_set_url(h, ep, url);
	model_headers(c, ep);
	model_setopt(g, c, ep, h);
	c->bytes_up = c->body.len;
	c->easy = h;
	c->st = C_UPSTREAM;
	c->resp_chunked = 0;
	curl_multi_add_handle(g->multi, h);
}

void gw_model_request(struct gw *g, struct conn *c)
{
	struct endpoint_rt *ep = &g->eps[c->ep];
	const char *url = c->url.data ? c->url.data : "";
	c->kind = "model";
	snprintf(c->method, sizeof c->method, "%s", http_method_str(c->parser.method));
	c->path = xstrndup(url, strcspn(url, "?#"));
	model_note_target(c, ep);
	if (model_refuse(g, c, ep, url))
		return;
	model_reserve(g, c);
	c->st = C_QUEUED;
	c->queued = ++g->queue_seq;
	gw_model_admit(g);
}

void gw_model_admit(struct gw *g)
{
	const struct gateway_policy *p = g->p;
	const struct gateway_stats *st = g->stats;
	for (;;) {
		struct conn *next = NULL;
		int upstream = 0;
		double may_cost = 0;
		uint64_t may_tokens = 0;
		for (struct conn *c = g->conns; c; c = c->next) {
			if (c->st == C_QUEUED && c->queued && (!next || c->queued < next->queued))
				next = c;
			if (!c->easy)
				continue;
			/* What it may still add beyond what it has counted. */
			upstream++;
			if (c->reserve_cost > c->counted_cost)
				may_cost += c->reserve_cost - c->counted_cost;
			uint64_t res = usage_tokens(&c->reserve), got = usage_tokens(&c->counted);
			may_tokens += res > got ? res - got : 0;
		}
		if (!next || upstream >= g->cfg->limits.model_concurrency)
			return;
		if (st->over_budget) {
			next->queued = 0;
			model_refuse_budget(g, next);
			continue;
		}
		/* With nothing upstream it goes whatever it may cost: the budget
		 * is passed by one request's reservation at most. */
		if (upstream > 0 &&
		    ((p->budget > 0 && st->cost + may_cost >= p->budget) ||
		     (p->budget_tokens > 0 &&
		      usage_tokens(&st->total) + may_tokens >= p->budget_tokens)))
			return;
		model_start(g, next);
	}
}

void gw_model_cut(struct gw *g, struct conn *c)
{
	if (c->usage && usage_parser_finish(c->usage))
		gw_usage_changed(g, c);
	if (usage_tokens(&c->counted) == 0 && usage_tokens(&c->reserve) > 0) {
		/* Nothing of it was read: the upstream may have billed it all the
		 * same, so its reservation counts. */
		double priced = gw_usage_add(g, &c->reserve, c->reserve_model);
		g->stats->cost += c->reserve_cost - priced;
		c->counted = c->reserve;
		c->counted_cost = c->reserve_cost;
		gw_usage_changed(g, NULL);
	}
	g->stats->requests++;
}
