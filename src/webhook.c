#include "autoconfig.h"
#include "webhook.h"

#include <curl/curl.h>
#include <jansson.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>
#include "buf.h"
#include "curlx.h"
#include "clock.h"
#include "fsx.h"
#include "i18n.h"
#include "urlmatch.h"

/* Deliveries sent at once; more wait for the next pump. */
#define MAX_INFLIGHT 4
/* How often the store is asked for due deliveries. */
#define LOOK_EVERY 0.2
/* The longest wait between two tries. */
#define MAX_BACKOFF 600.0
/* A secret file larger than this is a mistake. */

static const char *const event_names[] = { "review", "failed", "done", "cancelled",
                                           "rejected", "lost", "agent-finished",
                                           "pull-request-failed", "gate-reminder" };

const char *webhook_event_name(enum webhook_event ev)
{
	return (unsigned)ev <= WEBHOOK_GATE_REMINDER ? event_names[ev] : "?";
}

int webhook_event_of(enum task_status to)
{
	switch (to) {
	case TASK_REVIEW: return WEBHOOK_REVIEW;
	case TASK_FAILED: return WEBHOOK_FAILED;
	case TASK_DONE: return WEBHOOK_DONE;
	case TASK_CANCELLED: return WEBHOOK_CANCELLED;
	case TASK_REJECTED: return WEBHOOK_REJECTED;
	case TASK_LOST: return WEBHOOK_LOST;
	/* The agent's part of a round ended: its tests come next. */
	case TASK_TESTING: return WEBHOOK_AGENT_FINISHED;
	default: return -1;
	}
}

int webhook_callback_allowed(const struct config *cfg, const char *url)
{
	return urlmatch_allowed((const char *const *)cfg->api_callback_allow,
	                        cfg->napi_callback_allow, url);
}

void webhook_sign(const void *key, size_t keylen, const char *body, size_t len,
                  char out[WEBHOOK_SIG_LEN])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	static const char hex[] = "0123456789abcdef";
	/* HMAC() wants a non-NULL key even when it is empty. */
	static const unsigned char none;
	HMAC(EVP_sha256(), keylen ? key : &none, (int)keylen, (const unsigned char *)body, len,
	     md, &mdlen);
	memcpy(out, "sha256=", 7);
	for (unsigned i = 0; i < 32; i++) {
		out[7 + 2 * i] = hex[i < mdlen ? md[i] >> 4 : 0];
		out[7 + 2 * i + 1] = hex[i < mdlen ? md[i] & 15 : 0];
	}
	out[WEBHOOK_SIG_LEN - 1] = '\0';
}

void webhook_delivery_id(char out[WEBHOOK_DELIVERY_LEN])
{
	unsigned char r[16];
	size_t got = 0;
	while (got < sizeof r) {
		ssize_t n = getrandom(r + got, sizeof r - got, 0);
		if (n > 0) {
			got += (size_t)n;
		} else {
			/* Only an id, not a secret: the clock will do. */
			struct timespec ts;
			clock_gettime(CLOCK_REALTIME, &ts);
			uint64_t v = (uint64_t)ts.tv_sec * 1000000007ULL ^ (uint64_t)ts.tv_nsec ^
			             ((uint64_t)getpid() << 32);
			for (; got < sizeof r; got++, v = v * 6364136223846793005ULL + 1)
				r[got] = (unsigned char)(v >> 56);
		}
	}
	r[6] = (unsigned char)((r[6] & 0x0f) | 0x40);   /* version 4 */
	r[8] = (unsigned char)((r[8] & 0x3f) | 0x80);   /* RFC 4122 variant */
	snprintf(out, WEBHOOK_DELIVERY_LEN,
	         "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
	         r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10], r[11],
	         r[12], r[13], r[14], r[15]);
}

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

static char *payload(const struct task_row *t, enum webhook_event ev, double time,
                     const char *delivery, const char *approved_by, json_t *extra);

char *webhook_payload(const struct task_row *t, enum webhook_event ev, double time,
                      const char *delivery)
{
	return payload(t, ev, time, delivery, NULL, NULL);
}

/* extra: members added to the body (borrowed), or NULL. */
static char *payload(const struct task_row *t, enum webhook_event ev, double time,
                     const char *delivery, const char *approved_by, json_t *extra)
{
	char *url = xasprintf("/tasks/%s", t->id);
	json_t *task = json_object();
	json_object_set_new(task, "id", json_string(t->id));
	json_object_set_new(task, "repo", str_or_null(t->repo));
	json_object_set_new(task, "agent", str_or_null(t->agent));
	json_object_set_new(task, "status", json_string(task_status_name(t->status)));
	json_object_set_new(task, "branch", str_or_null(t->branch));
	json_object_set_new(task, "head", str_or_null(t->head));
	json_object_set_new(task, "pr_url", str_or_null(t->pr_url));
	json_object_set_new(task, "pr_error", str_or_null(t->pr_error));
	json_object_set_new(task, "pr_attempts", json_integer(t->pr_attempts));
	json_object_set_new(task, "pr_retry_at", t->pr_retry_at > 0
	                    ? json_integer((json_int_t)t->pr_retry_at) : json_null());
	json_object_set_new(task, "error", str_or_null(t->error));
	json_object_set_new(task, "reason", str_or_null(t->reason));
	json_object_set_new(task, "round", json_integer(t->round));
	json_object_set_new(task, "summary", str_or_null(t->summary));
	/* Who approved it: a person, a token, or "paddock (auto)" (autogate.h). */
	json_object_set_new(task, "approval", json_string(t->approval ? t->approval : "review"));
	json_object_set_new(task, "approved_by", str_or_null(approved_by));
	json_object_set_new(task, "dry_run", json_boolean(t->dry_run));
	json_object_set_new(task, "url", json_string(url));
	json_t *j = json_object();
	json_object_set_new(j, "event", json_string(webhook_event_name(ev)));
	json_object_set_new(j, "round", json_integer(t->round));
	json_object_set_new(j, "task", task);
	json_t *md = t->metadata ? json_loads(t->metadata, 0, NULL) : NULL;
	if (md && !json_is_object(md)) {
		json_decref(md);
		md = NULL;
	}
	json_object_set_new(j, "metadata", md ? md : json_null());
	json_object_set_new(j, "time", json_integer((json_int_t)time));
	json_object_set_new(j, "delivery", json_string(delivery));
	if (extra)
		json_object_update(j, extra);
	char *text = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	free(url);
	/* json_dumps fails only without memory; invalid UTF-8 in a string
	 * was refused by json_string, which left a null in its place. */
	if (!text)
		abort();
	return text;
}

int webhook_enqueue(const struct config *cfg, struct store *st, const char *task_id,
                    enum task_status to, struct err *e)
{
	int ev = webhook_event_of(to);
	return ev < 0 ? 0 : webhook_enqueue_event(cfg, st, task_id, (enum webhook_event)ev, e);
}

static int enqueue(const struct config *cfg, struct store *st, const char *task_id,
                   enum webhook_event ev, json_t *extra, struct err *e);

int webhook_enqueue_event(const struct config *cfg, struct store *st, const char *task_id,
                          enum webhook_event ev, struct err *e)
{
	return enqueue(cfg, st, task_id, ev, NULL, e);
}

int webhook_enqueue_reminder(const struct config *cfg, struct store *st, const char *task_id,
                             double waited, int n, struct err *e)
{
	json_t *extra = json_pack("{s:I,s:i}", "waited", (json_int_t)waited, "reminder", n);
	int rc = enqueue(cfg, st, task_id, WEBHOOK_GATE_REMINDER, extra, e);
	json_decref(extra);
	return rc;
}

static int enqueue(const struct config *cfg, struct store *st, const char *task_id,
                   enum webhook_event ev, json_t *extra, struct err *e)
{
	if (!cfg->wh_url && !cfg->napi_callback_allow)
		return 0;
	struct task_row t;
	if (store_task_get(st, task_id, &t, e) < 0)
		return -1;
	int rc = 0;
	/* The actor of the last approve, for a task that is done. */
	char *approver = NULL;
	struct task_decision *d;
	size_t nd;
	struct err de;
	if (t.status == TASK_DONE && store_decisions(st, t.id, &d, &nd, &de) == 0) {
		for (size_t i = nd; i-- > 0 && !approver;)
			if (!strcmp(d[i].action, "approve") && d[i].actor)
				approver = xstrdup(d[i].actor);
		task_decisions_free(d, nd);
	}
	/* The configured URL gets the events it asked for; a task's callback
	 * gets them all, each destination a delivery of its own. */
	const char *to_url[2] = {
		cfg->wh_url && (cfg->wh_events & (1u << ev)) ? cfg->wh_url : NULL,
		t.callback_url,
	};
	for (int i = 0; i < 2 && rc == 0; i++) {
		if (!to_url[i])
			continue;
		char delivery[WEBHOOK_DELIVERY_LEN];
		webhook_delivery_id(delivery);
		char *body = payload(&t, (enum webhook_event)ev, (double)(long long)clock_wall(),
		                     delivery, approver, extra);
		rc = store_webhook_add(st, t.id, webhook_event_name((enum webhook_event)ev), delivery,
		                       body, i ? to_url[i] : NULL, e);
		free(body);
	}
	free(approver);
	task_row_free(&t);
	return rc;
}

/* ---- the sender ---- */

struct transfer {
	CURL *easy;
	char *url;                 /* where it goes */
	char *shown;               /* url_shown(url), for messages */
	long long id;              /* the store row */
	char *task_id;
	char *event;
	int attempts;              /* tries before this one */
	char *body;
	struct curl_slist *headers;
	char errbuf[CURL_ERROR_SIZE];
};

struct sock {
	curl_socket_t fd;
	short events;
};

struct webhook {
	const struct config *cfg;
	struct store *st;
	struct logger *log;
	CURLM *multi;
	char *secret;              /* NULL: unsigned */
	size_t secret_len;
	int held;                  /* the secret file cannot be read: send nothing */
	char *shown;               /* scheme://host[:port] of the URL, for messages */
	struct transfer *t[MAX_INFLIGHT];
	int nt;
	struct sock socks[WEBHOOK_MAX_FDS];
	size_t nsocks;
	double timer_at;           /* monotonic time curl wants to be called; < 0: none */
	double last_look;          /* monotonic time of the last look at the store */
};

/* The URL without its path, query or user info: a chat's webhook URL
 * often holds its secret in the path. */
static char *url_shown(const char *url)
{
	const char *p = strstr(url, "://");
	p = p ? p + 3 : url;
	size_t n = strcspn(p, "/?#");
	const char *at = memchr(p, '@', n);
	const char *host = at ? at + 1 : p;
	return xasprintf("%.*s%.*s", (int)(p - url), url, (int)(p + n - host), host);
}

static int sock_cb(CURL *easy, curl_socket_t fd, int what, void *userp, void *socketp)
{
	struct webhook *w = userp;
	size_t i;
	for (i = 0; i < w->nsocks && w->socks[i].fd != fd; i++)
		;
	if (what == CURL_POLL_REMOVE) {
		if (i < w->nsocks)
			w->socks[i] = w->socks[--w->nsocks];
		return 0;
	}
	if (i == w->nsocks) {
		/* More sockets than slots: the 200 ms timer still drives the
		 * transfer, only later. */
		if (w->nsocks == WEBHOOK_MAX_FDS)
			return 0;
		w->nsocks++;
		w->socks[i].fd = fd;
	}
	w->socks[i].events = (short)((what & CURL_POLL_IN ? POLLIN : 0) |
	                             (what & CURL_POLL_OUT ? POLLOUT : 0));
	return 0;
}

static int timer_cb(CURLM *multi, long ms, void *userp)
{
	struct webhook *w = userp;
	w->timer_at = ms < 0 ? -1 : clock_mono() + (double)ms / 1000.0;
	return 0;
}

static size_t discard(char *p, size_t size, size_t n, void *userp)
{
	return size * n;
}

static int read_secret(struct webhook *w, struct err *e)
{
	const struct config *c = w->cfg;
	w->secret = config_secret(c->wh_secret_env ? c->wh_secret_env : "PADDOCK_WEBHOOK_SECRET",
	                          c->wh_secret_file, e);
	if (!w->secret)
		return e->msg[0] ? -1 : 0;
	w->secret_len = strlen(w->secret);
	return 0;
}

int webhook_open(struct webhook **out, const struct config *cfg, struct store *st,
                 struct logger *log, struct err *e)
{
	struct webhook *w = xcalloc(1, sizeof *w);
	w->cfg = cfg;
	w->st = st;
	w->log = log;
	w->timer_at = -1;
	*out = w;
	if (!cfg->wh_url && !cfg->napi_callback_allow)
		return 0;
	w->shown = url_shown(cfg->wh_url ? cfg->wh_url : cfg->api_callback_allow[0]);
	struct err se = { { 0 } };
	if (read_secret(w, &se) < 0) {
		w->held = 1;
		logger_event(log, LOGGER_WARNING, NULL, NULL, "webhook.held",
		             _("paddock: webhook: %s; deliveries to %s stay queued until the "
		               "secret can be read and paddock is started again\n"),
		             se.msg, w->shown);
		return 0;
	}
	if (!w->secret)
		logger_event(log, LOGGER_WARNING, NULL, NULL, "webhook.unsigned",
		             _("paddock: webhook: no secret is set (%s is empty), so deliveries "
		               "to %s are not signed; set it, or secret-file under [webhook]\n"),
		             cfg->wh_secret_env ? cfg->wh_secret_env : "PADDOCK_WEBHOOK_SECRET",
		             w->shown);
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK ||
	    !(w->multi = curl_multi_init())) {
		webhook_close(w);
		*out = NULL;
		return err_set(e, _("cannot start libcurl for webhooks"));
	}
	curl_multi_setopt(w->multi, CURLMOPT_SOCKETFUNCTION, sock_cb);
	curl_multi_setopt(w->multi, CURLMOPT_SOCKETDATA, w);
	curl_multi_setopt(w->multi, CURLMOPT_TIMERFUNCTION, timer_cb);
	curl_multi_setopt(w->multi, CURLMOPT_TIMERDATA, w);
	return 0;
}

size_t webhook_pollfds(struct webhook *w, struct pollfd *out, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; w && i < w->nsocks && n < max; i++, n++) {
		out[n].fd = w->socks[i].fd;
		out[n].events = w->socks[i].events;
		out[n].revents = 0;
	}
	return n;
}

static void transfer_free(struct transfer *t)
{
	if (!t)
		return;
	if (t->easy)
		curl_easy_cleanup(t->easy);
	curl_slist_free_all(t->headers);
	free(t->url);
	free(t->shown);
	free(t->task_id);
	free(t->event);
	free(t->body);
	free(t);
}

static int in_flight(struct webhook *w, long long id)
{
	for (int i = 0; i < w->nt; i++)
		if (w->t[i]->id == id)
			return 1;
	return 0;
}

static void start(struct webhook *w, const struct webhook_row *r)
{
	/* A callback is checked again: the configuration may have dropped its
	 * pattern since the task was added. */
	const char *url = r->url ? r->url : w->cfg->wh_url;
	const char *why = !url ? _("no [webhook] url is configured any more")
	                  : r->url && !webhook_callback_allowed(w->cfg, r->url)
	                  ? _("the task's callback_url matches no [api] callback-allow pattern")
	                  : NULL;
	if (why) {
		struct err e = { { 0 } };
		if (store_webhook_retry(w->st, r->id, 0, why, 0, &e) < 0)
			logger_event(w->log, LOGGER_ERROR, r->task_id, NULL, "webhook.error",
			             "paddock: %s", e.msg);
		return;
	}
	struct transfer *t = xcalloc(1, sizeof *t);
	t->url = xstrdup(url);
	t->shown = url_shown(url);
	t->id = r->id;
	t->task_id = xstrdup(r->task_id);
	t->event = xstrdup(r->event);
	t->attempts = r->attempts;
	t->body = xstrdup(r->body);
	t->easy = curl_easy_init();
	if (!t->easy) {
		transfer_free(t);
		return;
	}
	char *h;
	t->headers = curl_slist_append(t->headers, "Content-Type: application/json");
	/* No "Expect: 100-continue" round trip for larger bodies. */
	t->headers = curl_slist_append(t->headers, "Expect:");
	h = xasprintf("X-Paddock-Event: %s", r->event);
	t->headers = curl_slist_append(t->headers, h);
	free(h);
	h = xasprintf("X-Paddock-Delivery: %s", r->delivery);
	t->headers = curl_slist_append(t->headers, h);
	free(h);
	if (w->secret) {
		char sig[WEBHOOK_SIG_LEN];
		webhook_sign(w->secret, w->secret_len, t->body, strlen(t->body), sig);
		h = xasprintf("X-Paddock-Signature: %s", sig);
		t->headers = curl_slist_append(t->headers, h);
		free(h);
	}
	CURL *c = t->easy;
	curl_easy_setopt(c, CURLOPT_URL, t->url);
	curl_easy_setopt(c, CURLOPT_POST, 1L);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, t->body);
	curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)strlen(t->body));
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, t->headers);
	curl_easy_setopt(c, CURLOPT_USERAGENT, PACKAGE_NAME "/" PACKAGE_VERSION);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, t->errbuf);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)(w->cfg->wh_timeout * 1000));
	/* A redirect is a failure: the signed body goes nowhere else. */
	curlx_safe(c);
	curl_easy_setopt(c, CURLOPT_PRIVATE, t);
	if (curl_multi_add_handle(w->multi, c) != CURLM_OK) {
		transfer_free(t);
		return;
	}
	w->t[w->nt++] = t;
}

static void finished(struct webhook *w, struct transfer *t, CURLcode cc)
{
	long code = 0;
	curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &code);
	int tries = t->attempts + 1;
	struct err e = { { 0 } };
	if (cc == CURLE_OK && code >= 200 && code < 300) {
		if (store_webhook_done(w->st, t->id, (int)code, &e) < 0) {
			logger_event(w->log, LOGGER_ERROR, t->task_id, NULL, "webhook.error",
			             "paddock: %s", e.msg);
		} else if (w->log) {
			char *d = xasprintf(_("%s delivered to %s (HTTP %ld, attempt %d)\n"),
			                    t->event, t->shown, code, tries);
			d[strcspn(d, "\n")] = '\0';
			logger_task(w->log, LOGGER_INFO, t->task_id, NULL, "webhook.delivered", "webhook",
			            d);
			free(d);
		}
		return;
	}
	char *why;
	if (cc != CURLE_OK)
		why = xstrdup(*t->errbuf ? t->errbuf : curl_easy_strerror(cc));
	else if (code >= 300 && code < 400)
		why = xasprintf(_("HTTP %ld (redirects are not followed)"), code);
	else
		why = xasprintf("HTTP %ld", code);
	if (tries >= w->cfg->wh_attempts) {
		logger_event(w->log, LOGGER_ERROR, t->task_id, NULL, "webhook.failed",
		             _("paddock: webhook %s of task %s to %s: %s; given up after %d "
		               "attempt(s)\n"), t->event, t->task_id, t->shown, why, tries);
		if (store_webhook_retry(w->st, t->id, 0, why, (int)code, &e) < 0)
			logger_event(w->log, LOGGER_ERROR, t->task_id, NULL, "webhook.error",
			             "paddock: %s", e.msg);
	} else {
		double wait = 1;
		for (int i = 1; i < tries && wait < MAX_BACKOFF; i++)
			wait *= 2;
		if (wait > MAX_BACKOFF)
			wait = MAX_BACKOFF;
		double wall = clock_wall();
		logger_event(w->log, LOGGER_WARNING, t->task_id, NULL, "webhook.retry",
		             _("paddock: webhook %s of task %s to %s: %s (attempt %d of %d); "
		               "next try in %.0fs\n"), t->event, t->task_id, t->shown, why, tries,
		             w->cfg->wh_attempts, wait);
		if (store_webhook_retry(w->st, t->id, wall + wait, why, (int)code, &e) < 0)
			logger_event(w->log, LOGGER_ERROR, t->task_id, NULL, "webhook.error",
			             "paddock: %s", e.msg);
	}
	free(why);
}

static void collect(struct webhook *w)
{
	CURLMsg *m;
	int left;
	while ((m = curl_multi_info_read(w->multi, &left))) {
		if (m->msg != CURLMSG_DONE)
			continue;
		struct transfer *t = NULL;
		curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&t);
		CURLcode cc = m->data.result;
		curl_multi_remove_handle(w->multi, m->easy_handle);
		if (!t)
			continue;
		finished(w, t, cc);
		for (int i = 0; i < w->nt; i++)
			if (w->t[i] == t) {
				w->t[i] = w->t[--w->nt];
				break;
			}
		transfer_free(t);
	}
}

void webhook_pump(struct webhook *w, const struct pollfd *fds, size_t n, double now)
{
	if (!w || !w->multi || w->held)
		return;
	int running;
	for (size_t k = 0; k < n; k++) {
		if (!fds[k].revents)
			continue;
		for (size_t i = 0; i < w->nsocks; i++) {
			if (w->socks[i].fd != fds[k].fd)
				continue;
			int ev = (fds[k].revents & POLLIN ? CURL_CSELECT_IN : 0) |
			         (fds[k].revents & POLLOUT ? CURL_CSELECT_OUT : 0) |
			         (fds[k].revents & (POLLERR | POLLHUP) ? CURL_CSELECT_ERR : 0);
			curl_multi_socket_action(w->multi, fds[k].fd, ev, &running);
			break;
		}
	}
	double m = clock_mono();
	if (w->timer_at >= 0 && m >= w->timer_at) {
		w->timer_at = -1;
		curl_multi_socket_action(w->multi, CURL_SOCKET_TIMEOUT, 0, &running);
	}
	collect(w);
	if (m - w->last_look < LOOK_EVERY || w->nt >= MAX_INFLIGHT)
		return;
	w->last_look = m;
	struct webhook_row *rows;
	size_t nr;
	struct err e = { { 0 } };
	if (store_webhook_due(w->st, now, &rows, &nr, &e) < 0) {
		logger_event(w->log, LOGGER_ERROR, NULL, NULL, "webhook.error", "paddock: %s", e.msg);
		return;
	}
	int started = 0;
	for (size_t i = 0; i < nr && w->nt < MAX_INFLIGHT; i++)
		if (!in_flight(w, rows[i].id)) {
			start(w, &rows[i]);
			started = 1;
		}
	store_webhooks_free(rows, nr);
	if (started) {
		curl_multi_socket_action(w->multi, CURL_SOCKET_TIMEOUT, 0, &running);
		collect(w);
	}
}

int webhook_busy(struct webhook *w)
{
	return w ? w->nt : 0;
}

void webhook_close(struct webhook *w)
{
	if (!w)
		return;
	for (int i = 0; i < w->nt; i++) {
		curl_multi_remove_handle(w->multi, w->t[i]->easy);
		transfer_free(w->t[i]);
	}
	if (w->multi)
		curl_multi_cleanup(w->multi);
	if (w->secret) {
		explicit_bzero(w->secret, w->secret_len);
		free(w->secret);
	}
	free(w->shown);
	free(w);
}
