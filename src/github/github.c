#include "autoconfig.h"
#include "github.h"

#include <ctype.h>
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include "buf.h"
#include "clock.h"
#include "curlx.h"
#include "i18n.h"
#include "mirror.h"
#include "remote.h"
#include "sanitize.h"
#include "store_github.h"

#define GITHUB_TIMEOUT 30L
#define GITHUB_BODY_MAX (16u << 20)
#define GITHUB_MAX_PAGES 50

struct github {
	char *repo;                /* owner/name */
	char *api;                 /* base URL, no trailing '/' */
	char *auth;                /* "Authorization: Bearer ..." */
	char *var;                 /* the token's variable, for messages */
	struct store *st;
	double max_wait;
	long remaining;
	long long reset;
	double until;              /* the last wait GitHub asked for, for a */
	const char *why;           /* client without a store (static text) */
};

/* One answer. */
struct github_http {
	struct buf body;
	int truncated;
	long remaining;            /* -1: not sent */
	long long reset;           /* 0: not sent */
	long retry_after;          /* -1: not sent */
	char *etag;
	char *link;
	char *neterr;              /* curl's words when no answer came */
};

char *github_quote(const char *text, size_t max)
{
	struct buf clean = {0}, b = {0};
	size_t n = text ? strlen(text) : 0;
	sanitize_visible(text ? text : "", n, SANITIZE_KEEP_TAB | SANITIZE_KEEP_NEWLINE, &clean,
	                 NULL);
	size_t len = clean.len;
	int cut = 0;
	if (len > max) {
		len = max;
		while (len > 0 && ((unsigned char)clean.data[len] & 0xc0) == 0x80)
			len--;
		cut = 1;
	}
	while (len > 0 && strchr("\n\t ", clean.data[len - 1]))
		len--;
	if (len == 0 && !cut) {
		buf_free(&clean);
		return xstrdup("");
	}
	size_t run = 0, longest = 0;
	for (size_t i = 0; i < len; i++) {
		run = clean.data[i] == '`' ? run + 1 : 0;
		if (run > longest)
			longest = run;
	}
	size_t fence = longest < 3 ? 3 : longest + 1;
	for (size_t i = 0; i < fence; i++)
		buf_adds(&b, "`");
	buf_adds(&b, "\n");
	buf_add(&b, clean.data ? clean.data : "", len);
	buf_adds(&b, cut ? "…\n" : "\n");
	for (size_t i = 0; i < fence; i++)
		buf_adds(&b, "`");
	buf_free(&clean);
	return buf_detach(&b);
}

char *github_escape(const char *s)
{
	struct buf b = {0};
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (isalnum(*p) || strchr("-._~", *p))
			buf_add(&b, (const char *)p, 1);
		else
			buf_printf(&b, "%%%02X", *p);
	}
	return b.data ? buf_detach(&b) : xstrdup("");
}

static int github_repo_ok(const char *gr)
{
	const char *slash = gr ? strchr(gr, '/') : NULL;
	return gr && slash && slash != gr && slash[1] && !strchr(slash + 1, '/') &&
	       strspn(gr, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./") ==
	       strlen(gr) && !strstr(gr, "..");
}

double github_backoff_until(const struct repo_conf *r, struct store *st)
{
	const char *api = r->github_api && *r->github_api ? r->github_api : "https://api.github.com";
	size_t n = strlen(api);
	while (n && api[n - 1] == '/')
		n--;
	char *key = xstrndup(api, n);
	double until = 0;
	char *why = NULL;
	struct err ignored;
	if (!st || store_github_backoff(st, key, &until, &why, &ignored) != 1)
		until = 0;
	free(why);
	free(key);
	return until;
}

int github_open(struct github **out, const struct repo_conf *r, struct store *st,
                struct err *e)
{
	*out = NULL;
	const char *var = r->github_token_env ? r->github_token_env : "GITHUB_TOKEN";
	const char *api = r->github_api && *r->github_api ? r->github_api : "https://api.github.com";
	const char *token = config_repo_github_token(r);
	if (!github_repo_ok(r->github_repo))
		return err_kind_set(e, ERR_INVALID, _("repo %s: set github-repo = OWNER/NAME in the "
		                    "config to follow it on GitHub"), r->name);
	if (!token)
		return err_kind_set(e, ERR_INVALID, _("repo %s: no GitHub token: set the environment "
		                    "variable %s to a token that may read and write issues and pull "
		                    "requests of %s"), r->name, var, r->github_repo);
	if (strncmp(api, "https://", 8) != 0 && !remote_is_loopback_http(api))
		return err_kind_set(e, ERR_INVALID, _("refusing to send the GitHub token over plain "
		                    "http to %s; use an https:// github-api"), api);
	if (strpbrk(token, "\r\n"))
		return err_kind_set(e, ERR_INVALID, _("the GitHub token in %s has a line break; "
		                    "set it to the token alone"), var);
	struct github *g = xcalloc(1, sizeof *g);
	g->repo = xstrdup(r->github_repo);
	size_t n = strlen(api);
	while (n && api[n - 1] == '/')
		n--;
	g->api = xstrndup(api, n);
	g->auth = xasprintf("Authorization: Bearer %s", token);
	g->var = xstrdup(var);
	g->st = st;
	g->max_wait = 60;
	g->remaining = -1;
	*out = g;
	return 0;
}

void github_close(struct github *g)
{
	if (!g)
		return;
	free(g->repo);
	free(g->api);
	/* The token leaves no copy behind in freed memory. */
	if (g->auth) {
		memset(g->auth, 0, strlen(g->auth));
		free(g->auth);
	}
	free(g->var);
	free(g);
}

void github_set_max_wait(struct github *g, double secs)
{
	g->max_wait = secs < 0 ? 0 : secs;
}

void github_rate(const struct github *g, long *remaining, long long *reset)
{
	*remaining = g->remaining;
	*reset = g->reset;
}

static void github_http_free(struct github_http *h)
{
	buf_free(&h->body);
	free(h->etag);
	free(h->link);
	free(h->neterr);
	memset(h, 0, sizeof *h);
}

static size_t github_write(char *p, size_t size, size_t n, void *ud)
{
	struct github_http *h = ud;
	size_t len = size * n;
	if (h->body.len + len > GITHUB_BODY_MAX) {
		h->truncated = 1;
		return 0;
	}
	buf_add(&h->body, p, len);
	return len;
}

/* The header's value when line is "name: value" (CRLF cut), else NULL. */
static char *github_header(const char *line, size_t len, const char *name)
{
	size_t n = strlen(name);
	if (len <= n || strncasecmp(line, name, n) != 0 || line[n] != ':')
		return NULL;
	const char *v = line + n + 1;
	const char *end = line + len;
	while (v < end && (*v == ' ' || *v == '\t'))
		v++;
	while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' '))
		end--;
	return xstrndup(v, (size_t)(end - v));
}

static size_t github_header_cb(char *p, size_t size, size_t n, void *ud)
{
	struct github_http *h = ud;
	size_t len = size * n;
	char *v;
	/* A new status line (after a 100 Continue): the headers start over. */
	if (len > 5 && strncmp(p, "HTTP/", 5) == 0) {
		h->remaining = -1;
		h->reset = 0;
		h->retry_after = -1;
		free(h->etag);
		free(h->link);
		h->etag = h->link = NULL;
	} else if ((v = github_header(p, len, "x-ratelimit-remaining"))) {
		h->remaining = strtol(v, NULL, 10);
		free(v);
	} else if ((v = github_header(p, len, "x-ratelimit-reset"))) {
		h->reset = strtoll(v, NULL, 10);
		free(v);
	} else if ((v = github_header(p, len, "retry-after"))) {
		h->retry_after = strtol(v, NULL, 10);
		free(v);
	} else if ((v = github_header(p, len, "etag"))) {
		free(h->etag);
		h->etag = v;
	} else if ((v = github_header(p, len, "link"))) {
		free(h->link);
		h->link = v;
	}
	return len;
}

char *github_message(const char *body, size_t len)
{
	json_error_t je;
	json_t *root = body ? json_loadb(body, len, 0, &je) : NULL;
	struct buf b = {0};
	const char *m = json_string_value(json_object_get(root, "message"));
	if (m)
		buf_adds(&b, m);
	size_t i;
	json_t *it;
	json_array_foreach(json_object_get(root, "errors"), i, it) {
		const char *em = json_string_value(json_object_get(it, "message"));
		const char *field = json_string_value(json_object_get(it, "field"));
		const char *code = json_string_value(json_object_get(it, "code"));
		if (!em && json_is_string(it))
			em = json_string_value(it);
		buf_adds(&b, b.len ? ": " : "");
		if (b.len > 3 && b.data[b.len - 3] == '.') {
			/* "Validation Failed." -> "Validation Failed: ..." */
			memmove(b.data + b.len - 3, ": ", 3);
			b.len--;
		}
		if (em)
			buf_adds(&b, em);
		else
			buf_printf(&b, "%s %s", field ? field : "?", code ? code : "invalid");
	}
	json_decref(root);
	/* GitHub's messages end with a period; ours go on after them. */
	if (b.len && b.data[b.len - 1] == '.')
		b.data[--b.len] = 0;
	if (!b.len)
		buf_adds(&b, _("no message"));
	/* GitHub's words reach a terminal: no control characters. */
	for (size_t k = 0; k < b.len; k++)
		if ((unsigned char)b.data[k] < 0x20 || b.data[k] == 0x7f)
			b.data[k] = ' ';
	return buf_detach(&b);
}

static void github_when(double t, char *out, size_t n)
{
	time_t tt = (time_t)t;
	struct tm tm;
	if (!localtime_r(&tt, &tm) || !strftime(out, n, "%H:%M:%S", &tm))
		snprintf(out, n, "?");
}

/* A wait GitHub asked for, recorded for every process of this store. */
static void github_backoff(struct github *g, double until, const char *why)
{
	g->reset = g->reset ? g->reset : (long long)until;
	g->until = until;
	g->why = why;
	if (g->st) {
		struct err ignored;
		store_github_backoff_set(g->st, g->api, until, why, &ignored);
	}
}

/* Refuses (ERR_UNAVAILABLE) while a recorded wait lasts, after waiting
 * out one that ends within max_wait. */
static int github_wait(struct github *g, struct err *e)
{
	double until = 0;
	char *why = NULL;
	struct err ignored;
	if (!g->st && g->until > 0) {
		until = g->until;
		why = xstrdup(g->why);
	} else if (!g->st || store_github_backoff(g->st, g->api, &until, &why, &ignored) != 1) {
		free(why);
		return 0;
	}
	double now = clock_wall();
	if (until > now && until - now <= g->max_wait) {
		clock_sleep(until - now + 0.05);
		now = clock_wall();
	}
	int rc = 0;
	if (until > now) {
		char when[32];
		github_when(until, when, sizeof when);
		rc = err_kind_set(e, ERR_UNAVAILABLE, _("GitHub asked paddock to wait until %s (%s); "
		                  "nothing is sent to %s before then"), when, why ? why : "?", g->api);
	}
	free(why);
	return rc;
}

/* The error for a non-2xx answer. */
static int github_error(struct github *g, const char *method, const char *url, long status,
                        const struct github_http *h, struct err *e)
{
	char *msg = github_message(h->body.data, h->body.len);
	const char *path = url + strlen(g->api);
	char when[32];
	int rc;
	if (status == 401) {
		rc = err_kind_set(e, ERR_REMOTE, _("GitHub refused the token (401 %s); check the "
		                  "variable %s"), msg, g->var);
	} else if ((status == 403 || status == 429) && h->remaining == 0) {
		github_when(h->reset ? (double)h->reset : clock_wall() + 60, when, sizeof when);
		rc = err_kind_set(e, ERR_UNAVAILABLE, _("GitHub's API rate limit for the token in %s "
		                  "is used up (%ld %s); it resets at %s, and paddock sends nothing "
		                  "to %s before then"), g->var, status, msg, when, g->api);
	} else if ((status == 403 || status == 429) &&
	           (h->retry_after >= 0 || strstr(msg, "secondary rate limit"))) {
		rc = err_kind_set(e, ERR_UNAVAILABLE, _("GitHub is limiting requests (%ld %s); "
		                  "paddock waits %ld s before the next one"), status, msg,
		                  h->retry_after >= 0 ? h->retry_after : 60L);
	} else if (status == 403) {
		rc = err_kind_set(e, ERR_REMOTE, _("GitHub refused %s %s (403 %s); the token in %s "
		                  "needs access to issues and pull requests of %s"), method, path, msg,
		                  g->var, g->repo);
	} else if (status == 404) {
		rc = err_kind_set(e, ERR_NOT_FOUND, _("GitHub has no %s, or the token in %s cannot "
		                  "see it (404 %s)"), path, g->var, msg);
	} else if (status == 422) {
		rc = err_kind_set(e, ERR_INVALID, _("GitHub did not accept %s %s (422 %s)"), method,
		                  path, msg);
	} else if (status >= 500) {
		rc = err_kind_set(e, ERR_UNAVAILABLE, _("GitHub failed (%ld %s) at %s; paddock tries "
		                  "again at the next sync"), status, msg, g->api);
	} else {
		rc = err_kind_set(e, ERR_REMOTE, _("GitHub answered %ld (%s) to %s %s"), status, msg,
		                  method, path);
	}
	free(msg);
	return rc;
}

/* One request: status into *status (0 when none came).  A rate limit is
 * recorded; a short Retry-After is waited out and the request sent once
 * more. */
static int github_perform(struct github *g, const char *method, const char *url,
                          const char *payload, const char *etag, struct github_http *h,
                          long *status, struct err *e)
{
	for (int attempt = 0;; attempt++) {
		*status = 0;
		if (github_wait(g, e) < 0)
			return -1;
		github_http_free(h);
		h->remaining = -1;
		h->retry_after = -1;
		CURL *c = curl_easy_init();
		if (!c)
			return err_set(e, _("cannot start an HTTP request (libcurl)"));
		struct curl_slist *hdrs = NULL;
		char *inm = etag ? xasprintf("If-None-Match: %s", etag) : NULL;
		char errbuf[CURL_ERROR_SIZE] = "";
		hdrs = curl_slist_append(hdrs, "Accept: application/vnd.github+json");
		hdrs = curl_slist_append(hdrs, "X-GitHub-Api-Version: 2022-11-28");
		hdrs = curl_slist_append(hdrs, g->auth);
		hdrs = curl_slist_append(hdrs, "Expect:");
		if (payload)
			hdrs = curl_slist_append(hdrs, "Content-Type: application/json");
		if (inm)
			hdrs = curl_slist_append(hdrs, inm);
		curl_easy_setopt(c, CURLOPT_URL, url);
		curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
		curl_easy_setopt(c, CURLOPT_USERAGENT, "paddock/" PACKAGE_VERSION);
		curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
		if (payload) {
			curl_easy_setopt(c, CURLOPT_POSTFIELDS, payload);
			curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)strlen(payload));
		} else if (strcmp(method, "GET") != 0) {
			curl_easy_setopt(c, CURLOPT_POSTFIELDS, "");
			curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, 0L);
		}
		curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, github_write);
		curl_easy_setopt(c, CURLOPT_WRITEDATA, h);
		curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, github_header_cb);
		curl_easy_setopt(c, CURLOPT_HEADERDATA, h);
		curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
		curl_easy_setopt(c, CURLOPT_TIMEOUT, GITHUB_TIMEOUT);
		curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 10L);
		curlx_safe(c);
		CURLcode cc = curl_easy_perform(c);
		if (cc == CURLE_OK)
			curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, status);
		curl_easy_cleanup(c);
		/* The token leaves no copy behind in freed memory. */
		for (struct curl_slist *l = hdrs; l; l = l->next)
			explicit_bzero(l->data, strlen(l->data));
		curl_slist_free_all(hdrs);
		free(inm);
		if (cc != CURLE_OK && !h->truncated) {
			h->neterr = xstrdup(*errbuf ? errbuf : curl_easy_strerror(cc));
			return err_kind_set(e, ERR_UNAVAILABLE, _("cannot reach GitHub at %s: %s"), g->api,
			                    h->neterr);
		}
		if (h->truncated)
			return err_kind_set(e, ERR_REMOTE, _("GitHub's answer to %s %s is larger than "
			                    "%u MiB; not read"), method, url + strlen(g->api),
			                    GITHUB_BODY_MAX >> 20);
		if (h->remaining >= 0) {
			g->remaining = h->remaining;
			g->reset = h->reset;
		}
		if (*status != 403 && *status != 429)
			return 0;
		/* GitHub: a used-up limit says so in x-ratelimit-remaining; a
		 * secondary one sends Retry-After, or else wait a minute. */
		char *msg = github_message(h->body.data, h->body.len);
		int secondary = h->retry_after >= 0 || strstr(msg, "secondary rate limit") != NULL;
		free(msg);
		if (h->remaining == 0)
			github_backoff(g, h->reset ? (double)h->reset : clock_wall() + 60,
			               _("rate limit used up"));
		else if (secondary)
			github_backoff(g, clock_wall() + (h->retry_after >= 0 ? h->retry_after : 60),
			               _("secondary rate limit"));
		if (h->remaining == 0 || !secondary || attempt > 0 ||
		    (h->retry_after < 0 ? 60 : h->retry_after) > g->max_wait)
			return 0;
	}
}

static int github_ok(long status)
{
	return status >= 200 && status < 300;
}

/* The next page's URL from a Link header, when it is on this API. */
static char *github_next(struct github *g, const char *link, struct err *e, int *bad)
{
	*bad = 0;
	for (const char *p = link; p && (p = strchr(p, '<'));) {
		const char *end = strchr(p, '>');
		if (!end)
			break;
		const char *rel = strstr(end, "rel=\"next\"");
		const char *comma = strchr(end, ',');
		if (rel && (!comma || rel < comma)) {
			char *u = xstrndup(p + 1, (size_t)(end - p - 1));
			size_t n = strlen(g->api);
			if (strncmp(u, g->api, n) != 0 || (u[n] != '/' && u[n] != '?')) {
				err_kind_set(e, ERR_REMOTE, _("GitHub's next page is not on %s; it was not "
				             "followed"), g->api);
				free(u);
				*bad = 1;
				return NULL;
			}
			return u;
		}
		p = end + 1;
	}
	return NULL;
}

/* A GET of url, conditional when an ETag is stored: the body (200, or the
 * stored one for a 304) into *body, the Link header into *link. */
static int github_get_url(struct github *g, const char *url, char **body, char **link,
                          int *not_modified, struct err *e)
{
	char *etag = NULL, *cbody = NULL, *clink = NULL;
	struct err ignored;
	*body = *link = NULL;
	*not_modified = 0;
	if (g->st && store_github_etag(g->st, url, &etag, &cbody, &clink, &ignored) != 1)
		etag = cbody = clink = NULL;
	struct github_http h = {0};
	long status;
	int rc = github_perform(g, "GET", url, NULL, etag, &h, &status, e);
	if (rc == 0 && status == 304 && cbody) {
		*body = cbody;
		*link = clink;
		cbody = clink = NULL;
		*not_modified = 1;
	} else if (rc == 0 && status == 200) {
		*body = h.body.data ? xstrndup(h.body.data, h.body.len) : xstrdup("");
		*link = h.link ? xstrdup(h.link) : NULL;
		if (g->st && h.etag && h.body.len < (1u << 22))
			store_github_etag_put(g->st, url, h.etag, *body, h.link, &ignored);
	} else if (rc == 0) {
		rc = github_error(g, "GET", url, status, &h, e);
	}
	github_http_free(&h);
	free(etag);
	free(cbody);
	free(clink);
	return rc;
}

static json_t *github_parse(struct github *g, const char *url, const char *body, struct err *e)
{
	json_error_t je;
	json_t *j = json_loads(body, 0, &je);
	if (!j)
		err_kind_set(e, ERR_REMOTE, _("GitHub's answer to GET %s is not JSON (%s)"),
		             url + strlen(g->api), je.text);
	return j;
}

int github_get(struct github *g, const char *path, json_t **out, struct err *e)
{
	char *url = xasprintf("%s%s", g->api, path), *body, *link;
	int nm;
	*out = NULL;
	int rc = github_get_url(g, url, &body, &link, &nm, e);
	if (rc == 0 && !(*out = github_parse(g, url, body, e)))
		rc = -1;
	free(body);
	free(link);
	free(url);
	return rc;
}

int github_get_list(struct github *g, const char *path, const char *items_key, json_t **out,
                    int *unchanged, struct err *e)
{
	char *url = xasprintf("%s%s", g->api, path);
	json_t *all = json_array();
	int rc = 0, every_304 = 1;
	for (int page = 0; url && rc == 0; page++) {
		char *body, *link;
		int nm, bad;
		if (page == GITHUB_MAX_PAGES) {
			rc = err_kind_set(e, ERR_REMOTE, _("GitHub's list %s has more than %d pages; "
			                  "narrow it down"), path, GITHUB_MAX_PAGES);
			break;
		}
		if ((rc = github_get_url(g, url, &body, &link, &nm, e)) < 0)
			break;
		every_304 &= nm;
		json_t *j = github_parse(g, url, body, e);
		json_t *arr = items_key ? json_object_get(j, items_key) : j;
		if (!json_is_array(arr)) {
			if (j)
				err_kind_set(e, ERR_REMOTE, _("GitHub's answer to GET %s is not a list"), path);
			rc = -1;
		} else {
			json_array_extend(all, arr);
		}
		json_decref(j);
		free(url);
		url = rc == 0 ? github_next(g, link, e, &bad) : NULL;
		if (rc == 0 && bad)
			rc = -1;
		free(body);
		free(link);
	}
	free(url);
	if (rc < 0) {
		json_decref(all);
		*out = NULL;
		return -1;
	}
	*out = all;
	if (unchanged)
		*unchanged = every_304;
	return 0;
}

int github_send(struct github *g, const char *method, const char *path, json_t *body,
                json_t **out, long *status, struct err *e)
{
	char *url = xasprintf("%s%s", g->api, path);
	char *payload = body ? json_dumps(body, JSON_COMPACT) : NULL;
	struct github_http h = {0};
	long st = 0;
	int rc;
	if (out)
		*out = NULL;
	if (body && !payload)
		rc = err_set(e, _("cannot write the JSON of %s %s"), method, path);
	else
		rc = github_perform(g, method, url, payload, NULL, &h, &st, e);
	if (rc == 0 && !github_ok(st)) {
		rc = github_error(g, method, url, st, &h, e);
	} else if (rc == 0 && out && h.body.len) {
		json_error_t je;
		*out = json_loadb(h.body.data, h.body.len, 0, &je);
	}
	if (status)
		*status = st;
	github_http_free(&h);
	free(payload);
	free(url);
	return rc;
}

/* ---- pull requests ---- */

static const char *github_var_of(const struct repo_conf *r)
{
	return r->github_token_env ? r->github_token_env : "GITHUB_TOKEN";
}

static const char *github_api_of(const struct repo_conf *r)
{
	return r->github_api && *r->github_api ? r->github_api : "https://api.github.com";
}

static int github_pr_error(const struct repo_conf *r, const char *api, long status,
                           const struct github_http *h, const char *head, struct err *e)
{
	const char *var = github_var_of(r);
	char *msg = github_message(h->body.data, h->body.len);

	if (status == 401)
		err_set(e, _("GitHub refused the token (401 %s); check the variable %s"), msg, var);
	else if ((status == 403 || status == 429) && h->remaining == 0) {
		char when[64] = "";
		time_t t = (time_t)h->reset;
		struct tm tm;
		long mins = h->reset ? (long)((t - time(NULL) + 59) / 60) : -1;
		if (h->reset && localtime_r(&t, &tm))
			strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S %Z", &tm);
		if (mins < 0 && *when)
			mins = 0;
		if (*when)
			err_set(e, _("GitHub's API rate limit for the token in %s is used up (%ld: %s); "
			             "it resets at %s (in %ld min); open the pull request then"),
			        var, status, msg, when, mins);
		else
			err_set(e, _("GitHub's API rate limit for the token in %s is used up (%ld: %s); "
			             "try again later"), var, status, msg);
	} else if ((status == 403 || status == 429) && h->retry_after >= 0)
		err_set(e, _("GitHub is limiting requests (%ld %s); try again in %ld s"), status,
		        msg, h->retry_after);
	else if (status == 403)
		err_set(e, _("GitHub refused to open a pull request on %s (403 %s); the token in %s "
		             "needs write access to pull requests of that repository"),
		        r->github_repo, msg, var);
	else if (status == 404)
		err_set(e, _("GitHub has no repository %s, or the token in %s cannot see it (404 %s); "
		             "check github-repo in the config and the token's access"),
		        r->github_repo, var, msg);
	else if (status == 422 && strstr(msg, "A pull request already exists"))
		err_set(e, _("a pull request for %s already exists on %s (GitHub: %s); the pushed "
		             "branch updates it"), head, r->github_repo, msg);
	else if (status == 422)
		err_set(e, _("GitHub did not open the pull request (422 %s); check that branch %s "
		             "exists on %s and differs from %s"), msg, head, r->github_repo,
		        r->branch ? r->branch : "main");
	else if (status >= 500)
		err_set(e, _("GitHub failed (%ld %s) at %s; try again later"), status, msg, api);
	else
		err_set(e, _("GitHub answered %ld (%s) to the pull request for %s on %s"), status, msg,
		        head, r->github_repo);
	free(msg);
	return -1;
}

/* What must hold before anything is sent: a well-formed OWNER/NAME (it
 * goes into the URL), a branch, a title, a token, and https for it. */
static int github_pr_check(const struct repo_conf *r, const struct github_pull_request *pr,
                           const char *token, const char *var, const char *api,
                           struct err *e)
{
	const char *gr = r->github_repo;
	if (!github_repo_ok(gr))
		return err_set(e, _("repo %s: set github-repo = OWNER/NAME in the config to open pull "
		                    "requests"), r->name);
	if (!pr->branch || !*pr->branch)
		return err_set(e, _("no branch to open a pull request for"));
	if (!pr->title || !*pr->title)
		return err_set(e, _("a pull request needs a title"));
	if (!token)
		return err_set(e, _("no GitHub token: set the environment variable %s to a token "
		                    "that may open pull requests on %s"), var, gr);
	if (strncmp(api, "https://", 8) != 0 && !remote_is_loopback_http(api))
		return err_set(e, _("refusing to send the GitHub token over plain http to %s; "
		                    "use an https:// github-api"), api);
	return 0;
}

/* The request's JSON, or NULL when jansson refuses a string (not UTF-8). */
static char *github_pr_payload(const struct repo_conf *r, const struct github_pull_request *pr)
{
	json_t *req = json_pack("{s:s, s:s, s:s, s:s, s:b}", "title", pr->title,
	                        "head", pr->branch, "base", r->branch ? r->branch : "main",
	                        "body", pr->body ? pr->body : "", "draft", r->draft ? 1 : 0);
	char *payload = req ? json_dumps(req, JSON_COMPACT) : NULL;
	json_decref(req);
	return payload;
}

/* The new pull request's address from a 2xx answer. */
static int github_pr_html_url(const struct github_http *h, long status, const char *branch,
                              const char *gr, char **url_out, struct err *e)
{
	json_error_t je;
	json_t *resp = h->body.data ? json_loadb(h->body.data, h->body.len, 0, &je) : NULL;
	const char *html = json_string_value(json_object_get(resp, "html_url"));
	int rc = -1;

	if (!html || !*html)
		err_set(e, _("GitHub answered %ld to the pull request for %s without its html_url; "
		             "look for it on %s"), status, branch, gr);
	else {
		*url_out = xstrdup(html);
		rc = 0;
	}
	json_decref(resp);
	return rc;
}

int github_pull_request_open(const struct repo_conf *r, struct store *st,
                             const struct github_pull_request *pr, char **url_out,
                             struct err *e)
{
	const char *token = config_repo_github_token(r);
	struct github *g = NULL;
	struct github_http h = {0};
	char *url = NULL, *payload = NULL, *shown = NULL;
	long status = 0;
	int rc = -1;

	*url_out = NULL;
	if (github_pr_check(r, pr, token, github_var_of(r), github_api_of(r), e) < 0)
		return -1;
	if (github_open(&g, r, st, e) < 0)
		goto out;
	url = xasprintf("%s/repos/%s/pulls", g->api, r->github_repo);
	shown = mirror_url_display(url);
	payload = github_pr_payload(r, pr);
	if (!payload) {
		err_set(e, _("cannot build the pull request: the title or body is not valid UTF-8"));
		goto out;
	}
	if (github_perform(g, "POST", url, payload, NULL, &h, &status, e) < 0) {
		if (h.neterr)
			err_set(e, _("cannot reach GitHub at %s: %s; check github-api and the network"),
			        shown, h.neterr);
		goto out;
	}
	if (!github_ok(status))
		github_pr_error(r, shown, status, &h, pr->branch, e);
	else
		rc = github_pr_html_url(&h, status, pr->branch, r->github_repo, url_out, e);
out:
	if (rc < 0)
		remote_scrub(e, token);
	github_http_free(&h);
	github_close(g);
	free(payload);
	free(url);
	free(shown);
	return rc;
}

json_t *github_pull_request_dry_run(const struct repo_conf *r,
                                    const struct github_pull_request *pr)
{
	if (!pr || !r->pull_request)
		return json_null();
	const char *api = github_api_of(r);
	size_t apilen = strlen(api);
	while (apilen && api[apilen - 1] == '/')
		apilen--;
	char *url = xasprintf("%.*s/repos/%s/pulls", (int)apilen, api,
	                      r->github_repo ? r->github_repo : "");
	char *payload = github_pr_payload(r, pr);
	json_t *body = payload ? json_loads(payload, 0, NULL) : NULL;
	/* What github_pull_request_open would refuse before sending
	 * (github-repo, the token, https), so that a dry run shows it. */
	struct err pe = {{0}};
	if (github_pr_check(r, pr, config_repo_github_token(r), github_var_of(r), api, &pe) == 0 &&
	    !body)
		err_set(&pe, _("cannot build the pull request: the title or body is not valid "
		               "UTF-8"));
	json_t *pj = json_pack("{s:s,s:s,s:o,s:o}", "method", "POST", "url", url, "body",
	                       body ? body : json_null(), "problem",
	                       pe.msg[0] ? json_string(pe.msg) : json_null());
	free(payload);
	free(url);
	return pj;
}
