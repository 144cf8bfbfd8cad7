#include "autoconfig.h"
#include "api_int.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <jansson.h>
#include <limits.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <openssl/crypto.h>
#include <openssl/sha.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <poll.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "fsx.h"
#include "clock.h"
#include "diffcache.h"
#include "gate.h"
#include "ghsync.h"
#include "group.h"
#include "i18n.h"
#include "metrics.h"
#include "mirror.h"
#include "paths.h"
#include "sanitize.h"
#include "store.h"
#include "audit.h"
#include "store_audit.h"
#include "submit.h"
#include "units.h"
#include "task.h"
#include "taskjson.h"
#include "webhook.h"

#define PROMPT_MAX (128u * 1024)   /* like `paddock add`: under 128 KiB */
#define CLI_INPUTS_API_MAX 32      /* a recipe's inputs in one request */
#define PAGE_DEFAULT 50
#define PAGE_MAX 500
#define AUDIT_PAGE_DEFAULT 50
#define AUDIT_PAGE_MAX 1000
#define REFUSE_MAX 30       /* refused GitHub deliveries per address and window */
#define REFUSE_WINDOW_S 60.0


/* The request this thread answers (a thread per connection). */
static _Thread_local struct req *cur_req;

static void conn_served(struct api *a, struct MHD_Connection *c);
static void conn_body(struct api *a, struct MHD_Connection *c, double since);
static int addr_same(const struct sockaddr *a, const struct sockaddr_storage *b);

/* ---- answers ---- */

/* Queues r with what every answer carries: no caching (answers hold task
 * states and tokens' views), and a 405's Allow. */
enum MHD_Result api_answer(struct MHD_Connection *c, unsigned status, struct MHD_Response *r)
{
	MHD_add_response_header(r, "Cache-Control", "no-store");
	if (status == 405 && cur_req && cur_req->allow)
		MHD_add_response_header(r, "Allow", cur_req->allow);
	if (cur_req && cur_req->replayed)
		MHD_add_response_header(r, "Idempotent-Replayed", "true");
	enum MHD_Result rc = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return rc;
}

/* A JSON or text answer; location (or NULL) becomes its Location. */
static enum MHD_Result send_full(struct MHD_Connection *c, unsigned status, const char *ctype,
                                 char *data, size_t len, const char *location)
{
	if (cur_req && cur_req->record && !cur_req->status) {
		cur_req->status = status;
		cur_req->answer = xstrndup(data, len);
		cur_req->location = location ? xstrdup(location) : NULL;
	}
	struct MHD_Response *r = MHD_create_response_from_buffer(len, data, MHD_RESPMEM_MUST_FREE);
	MHD_add_response_header(r, "Content-Type", ctype);
	if (location)
		MHD_add_response_header(r, "Location", location);
	return api_answer(c, status, r);
}

static enum MHD_Result send_buf(struct MHD_Connection *c, unsigned status, const char *ctype,
                                char *data, size_t len)
{
	return send_full(c, status, ctype, data, len, NULL);
}

/* The answer's api: set by on_request, for what every answer shares. */
static _Thread_local const struct api *cur_api;

/* Replaces each needle in text (malloc'd; consumed) by its replacement. */
static char *replace_all(char *text, const char *needle, const char *with)
{
	size_t nl = strlen(needle);
	if (nl < 2 || !strstr(text, needle))
		return text;
	struct buf out = {0};
	const char *p = text, *hit;
	while ((hit = strstr(p, needle))) {
		buf_add(&out, p, (size_t)(hit - p));
		buf_adds(&out, with);
		p = hit + nl;
	}
	buf_adds(&out, p);
	free(text);
	return out.data ? out.data : xstrdup("");
}

/* Host paths never reach a client: the data directory (logs, templates,
 * mirrors) and the remotes that are paths on this host are named, not
 * shown, in every JSON answer and event. */
char *api_scrub_paths(const struct api *a, char *text)
{
	if (!a || !text)
		return text;
	for (size_t i = 0; i < a->cfg->nrepos; i++) {
		const struct repo_conf *r = &a->cfg->repos[i];
		const char *u = r->url;
		if (!u)
			continue;
		if (!strncmp(u, "file://", 7))
			u += 7;
		if (*u != '/')
			continue;
		char with[160];
		snprintf(with, sizeof with, "<the remote of repo %s>", r->name);
		text = replace_all(text, u, with);
	}
	return replace_all(text, a->data_dir, "<data directory>");
}

static enum MHD_Result send_json(struct MHD_Connection *c, unsigned status, json_t *j)
{
	char *s = json_dumps(j, JSON_INDENT(2) | TASKJSON_DUMP);
	json_decref(j);
	if (!s)
		s = xstrdup("{}");
	s = api_scrub_paths(cur_api, s);
	size_t n = strlen(s);
	s = xrealloc(s, n + 2);
	s[n] = '\n';
	s[n + 1] = '\0';
	return send_buf(c, status, "application/json", s, n + 1);
}

/* {"error": "...", "code": "..."} plus the task's status for 409s. */
enum MHD_Result api_send_error(struct MHD_Connection *c, unsigned status, const char *code,
                                  const char *state, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
enum MHD_Result api_send_error(struct MHD_Connection *c, unsigned status, const char *code,
                                  const char *state, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	json_t *j = json_pack("{s:s,s:s}", "error", msg, "code", code);
	if (state)
		json_object_set_new(j, "status", json_string(state));
	return send_json(c, status, j);
}

/* The answer to an error of the engine, from its kind (err.h) alone: the
 * one place that turns a kind into an HTTP status and an error code
 * (doc/paddock-api.json).  state, the task's status, goes with the answers
 * about a task (409, 502). */
enum MHD_Result api_send_err(struct MHD_Connection *c, const struct err *e,
                                const char *state)
{
	unsigned status = 500;
	const char *code = "store";
	switch (e->kind) {
	case ERR_NOT_FOUND:   status = 404; code = "no_such_task"; break;
	case ERR_INVALID:     status = 400; code = "bad_field"; break;
	case ERR_WRONG_STATE: status = 409; code = "wrong_state"; break;
	case ERR_BLOCKED:     status = 409; code = "blocked"; break;
	case ERR_CONFLICT:    status = 409; code = "refused"; break;
	case ERR_FORBIDDEN:   status = 403; code = "not_allowed"; break;
	case ERR_REMOTE:      status = 502; code = "push_failed"; break;
	case ERR_UNAVAILABLE: status = 503; code = "unavailable"; break;
	case ERR_INTERNAL:    break;
	case ERR_RUNNER:      break;
	case ERR_POD_UNSCHEDULABLE:
	case ERR_POD_IMAGE:
	case ERR_POD_EVICTED:
	case ERR_POD_MEMORY:  break;
	}
	return api_send_error(c, status, code, status == 409 || status == 502 ? state : NULL, "%s",
	                  e->msg);
}

/* ---- auth ---- */

static void token_hash(const char *v, size_t n, unsigned char out[SHA256_DIGEST_LENGTH])
{
	SHA256((const unsigned char *)v, n, out);
}

/* Whether the request carries a token: 1 with its name (in name) and
 * its role, 0 when none matches.  Every configured token is
 * compared, each in constant time (on SHA-256 digests, so lengths leak
 * nothing either). */
static int auth(struct api *a, struct MHD_Connection *c, char *name, size_t size,
                enum access *role)
{
	const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
	if (!h || strncasecmp(h, "Bearer ", 7) != 0)
		return 0;
	const char *v = h + 7;
	while (*v == ' ')
		v++;
	unsigned char got[SHA256_DIGEST_LENGTH];
	token_hash(v, strlen(v), got);
	int found = 0;
	pthread_mutex_lock(&a->tmu);
	for (size_t i = 0; i < a->ntokens; i++)
		if (CRYPTO_memcmp(got, a->tokens[i].hash, sizeof got) == 0) {
			found = 1;
			snprintf(name, size, "%s", a->tokens[i].name);
			*role = a->tokens[i].role;
		}
	pthread_mutex_unlock(&a->tmu);
	return found;
}

static int api_has_tokens(struct api *a)
{
	pthread_mutex_lock(&a->tmu);
	int n = a->ntokens > 0;
	pthread_mutex_unlock(&a->tmu);
	return n;
}

static void tokens_free(struct api_token *t, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(t[i].name);
		explicit_bzero(t[i].hash, sizeof t[i].hash);
	}
	free(t);
}

/* The digests of cfg's tokens, read from their variables and files. */
static int tokens_read(const struct config *cfg, struct api_token **out, size_t *n,
                       struct err *e)
{
	*out = NULL;
	*n = 0;
	for (size_t i = 0; i < cfg->ntokens; i++) {
		char *v = config_token_value(&cfg->tokens[i]);
		if (!v) {
			tokens_free(*out, *n);
			*out = NULL;
			*n = 0;
			return err_set(e, _("token '%s' has no value: its variable or file is empty or "
			                    "missing"), cfg->tokens[i].name);
		}
		*out = xrealloc(*out, (*n + 1) * sizeof **out);
		struct api_token *t = &(*out)[(*n)++];
		t->name = xstrdup(cfg->tokens[i].name);
		t->role = config_token_role(&cfg->tokens[i]);
		token_hash(v, strlen(v), t->hash);
		explicit_bzero(v, strlen(v));
		free(v);
	}
	return 0;
}

/* One line on log for each token whose role the reload changed (a
 * token that came or went is counted by the caller's line). */
static void tokens_log_roles(const struct api_token *old, size_t nold,
                             const struct api_token *now, size_t n, struct logger *log)
{
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < nold; j++)
			if (!strcmp(now[i].name, old[j].name) && now[i].role != old[j].role)
				logger_event(log, LOGGER_INFO, NULL, NULL, "api.role",
				             _("paddock: token '%s': its role was %s and is %s now\n"),
				             now[i].name, access_name(old[j].role),
				             access_name(now[i].role));
}

static const struct audit_role *role_known(const struct audit_role *v, size_t n,
                                           const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i].token, name))
			return &v[i];
	return NULL;
}

/* Records in the audit trail (store_audit.h), by "config", each token
 * whose role differs from the one the trail last recorded for it: a role
 * changed, a token added or removed, whether serve read the configuration
 * again (SIGHUP) or started after it was edited.  A failure is said on
 * log: the tokens hold all the same. */
static void tokens_audit_roles(struct api *a, const struct api_token *now, size_t n,
                               struct logger *log)
{
	struct err e = {{0}};
	struct store *st = api_open_store(a, &e);
	struct audit_role *known = NULL;
	size_t nknown = 0;
	int rc = st ? store_audit_roles_known(st, &known, &nknown, &e) : -1;
	struct audit_role_change *v = xcalloc(n + nknown + 1, sizeof *v);
	size_t k = 0;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		const struct audit_role *r = role_known(known, nknown, now[i].name);
		const char *role = access_name(now[i].role);
		if (!r || !r->role || strcmp(r->role, role))
			v[k++] = (struct audit_role_change){ now[i].name, r ? r->role : NULL, role };
	}
	for (size_t j = 0; rc == 0 && j < nknown; j++) {
		int kept = 0;
		for (size_t i = 0; i < n && !kept; i++)
			kept = !strcmp(now[i].name, known[j].token);
		if (known[j].role && !kept)
			v[k++] = (struct audit_role_change){ known[j].token, known[j].role, NULL };
	}
	if (rc == 0)
		rc = store_audit_roles(st, v, k, "config", &e);
	if (rc < 0)
		logger_event(log, LOGGER_ERROR | LOGGER_ON_OUT, NULL, NULL, "api.error",
		             _("paddock: the role changes were not recorded: %s\n"), e.msg);
	free(v);
	audit_roles_free(known, nknown);
	store_close(st);
}

int api_reload(struct api *a, struct logger *log, struct err *e)
{
	struct config fresh;
	if (config_load(&fresh, a->cfg->path, e) < 0) {
		config_free(&fresh);  /* the defaults config_load left */
		return -1;
	}
	struct api_token *t;
	size_t n;
	int rc = tokens_read(&fresh, &t, &n, e);
	if (rc == 0 && !n && !a->loopback) {
		rc = err_set(e, _("the configuration has no [token] now, and the API listens on an "
		                  "address that is not loopback"));
	} else if (rc == 0) {
		pthread_mutex_lock(&a->tmu);
		struct api_token *old = a->tokens;
		size_t nold = a->ntokens;
		a->tokens = t;
		a->ntokens = n;
		pthread_mutex_unlock(&a->tmu);
		tokens_log_roles(old, nold, t, n, log);
		tokens_audit_roles(a, t, n, log);
		tokens_free(old, nold);
		logger_event(log, LOGGER_INFO, NULL, NULL, "api.tokens",
		             ngettext("paddock: the HTTP API's tokens were read again: %zu "
		                      "token\n", "paddock: the HTTP API's tokens were read "
		                      "again: %zu tokens\n", n), n);
	}
	config_free(&fresh);
	return rc;
}

/* ---- helpers ---- */

struct store *api_open_store(const struct api *a, struct err *e)
{
	struct store *s = NULL;
	if (store_open(&s, a->db, e) < 0)
		return NULL;
	return s;
}

static json_t *parse_body(struct req *rq, const char **why)
{
	json_error_t je;
	static _Thread_local char msg[256];  /* a thread per connection */
	if (!rq->body.len) {
		*why = "the body is empty; send a JSON object";
		return NULL;
	}
	json_t *j = json_loadb(rq->body.data, rq->body.len, 0, &je);
	if (!j && json_error_code(&je) == json_error_null_character) {
		/* Task texts and notes are text: a NUL (\u0000) would cut them. */
		snprintf(msg, sizeof msg, "a string of the body contains a NUL byte (\\u0000) at "
		         "line %d, column %d; task texts and notes must be text", je.line,
		         je.column);
		*why = msg;
		return NULL;
	}
	if (!j) {
		snprintf(msg, sizeof msg, "the body is not JSON: %s (line %d, column %d)", je.text,
		         je.line, je.column);
		*why = msg;
		return NULL;
	}
	if (!json_is_object(j)) {
		json_decref(j);
		*why = "the body must be a JSON object";
		return NULL;
	}
	return j;
}

const char *api_query(struct MHD_Connection *c, const char *key)
{
	return MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, key);
}

static int parse_uint(const char *s, long max, long *out)
{
	char *end;
	if (!s || !*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (*end || errno || v > max)
		return -1;
	*out = v;
	return 0;
}

/* ---- routes ---- */

/* What a route's handler is given besides the request: the parts of its
 * path, and for the task routes the store and the task (route). */
struct api_call {
	const char *url, *method;
	const char *actor;           /* the token's name; "api" */
	struct store *st;            /* /tasks routes: open, closed by route */
	const struct task_row *t;    /* /tasks/{id} routes: the task */
	const char *action;          /* /tasks/{id}/ACTION: ACTION; else "" */
	const char *name;            /* {id} of a group, {name} of a recipe */
};

typedef enum MHD_Result api_route_fn(struct api *a, struct MHD_Connection *c, struct req *rq,
                                     const struct api_call *x);

/* 202 with {"id", "status": "queued", "url"} and Location: a task was
 * queued. */
static enum MHD_Result send_queued(struct MHD_Connection *c, const char *id)
{
	char url[64];
	snprintf(url, sizeof url, "/tasks/%s", id);
	json_t *o = json_pack("{s:s,s:s,s:s}", "id", id, "status", "queued", "url", url);
	char *txt = json_dumps(o, JSON_INDENT(2) | TASKJSON_DUMP);
	json_decref(o);
	size_t n = strlen(txt);
	txt = xrealloc(txt, n + 2);
	txt[n] = '\n';
	txt[n + 1] = '\0';
	return send_full(c, 202, "application/json", txt, n + 1, url);
}

/* 202 for a best-of-N group: {"group", "tasks": [{"id", "agent", "status",
 * "url"}], "url"} and Location: the group. */
static enum MHD_Result send_group_queued(struct MHD_Connection *c,
                                         const struct submit_result *res)
{
	char url[64];
	snprintf(url, sizeof url, "/groups/%s", res->group);
	json_t *tasks = json_array();
	for (size_t i = 0; i < res->n; i++) {
		char turl[64];
		snprintf(turl, sizeof turl, "/tasks/%s", res->ids[i]);
		json_array_append_new(tasks, json_pack("{s:s,s:s,s:s,s:s}", "id", res->ids[i],
		                                       "agent", res->agents[i], "status", "queued",
		                                       "url", turl));
	}
	json_t *o = json_pack("{s:s,s:o,s:s}", "group", res->group, "tasks", tasks, "url", url);
	char *txt = json_dumps(o, JSON_INDENT(2) | TASKJSON_DUMP);
	json_decref(o);
	size_t n = strlen(txt);
	txt = xrealloc(txt, n + 2);
	txt[n] = '\n';
	txt[n + 1] = '\0';
	return send_full(c, 202, "application/json", txt, n + 1, url);
}

/* The fields of POST /tasks beyond text, repo and agent, into rq (its
 * strings point into j; the arrays are the caller's).  NULL, or the
 * message of a 400. */
static const char *post_task_options(json_t *j, struct submit_req *rq, const char **names,
                                     const char **values, const char **agents)
{
	json_t *v;
	static const char *const strs[] = { "recipe", "base", "test", "approval" };
	const char **dst[] = { &rq->recipe, &rq->base, &rq->test, &rq->approval };
	for (size_t i = 0; i < 4; i++) {
		v = json_object_get(j, strs[i]);
		if (v && !json_is_string(v) && !json_is_null(v))
			return "\"recipe\", \"base\", \"test\" and \"approval\" must be strings";
		*dst[i] = json_string_value(v);
	}
	if ((v = json_object_get(j, "inputs")) && !json_is_null(v)) {
		const char *k;
		json_t *iv;
		if (!json_is_object(v) || json_object_size(v) > CLI_INPUTS_API_MAX)
			return "\"inputs\" must be an object of at most 32 strings";
		json_object_foreach(v, k, iv) {
			if (!json_is_string(iv))
				return "each of \"inputs\" must be a string";
			names[rq->ninputs] = k;
			values[rq->ninputs++] = json_string_value(iv);
		}
		rq->input_names = names;
		rq->input_values = values;
	}
	if ((v = json_object_get(j, "timeout")) && !json_is_null(v)) {
		if (json_is_number(v))
			rq->timeout = json_number_value(v);
		else if (!json_is_string(v) || units_parse_duration(json_string_value(v),
		                                                     &rq->timeout) < 0)
			return "\"timeout\" must be a number of seconds or a duration such as \"30m\"";
		if (rq->timeout <= 0 || rq->timeout > 30 * 86400)
			return "\"timeout\" must be from 1 second to 30 days";
	}
	if ((v = json_object_get(j, "dry_run")) && !json_is_null(v)) {
		if (!json_is_boolean(v))
			return "\"dry_run\" must be true or false";
		rq->dry_run = json_is_true(v);
	}
	if ((v = json_object_get(j, "agents")) && !json_is_null(v)) {
		size_t i;
		json_t *av;
		if (!json_is_array(v) || json_array_size(v) > SUBMIT_GROUP_MAX)
			return "\"agents\" must be an array of at most 8 agent names";
		json_array_foreach(v, i, av) {
			if (!json_is_string(av))
				return "each of \"agents\" must be a string";
			agents[rq->nagents++] = json_string_value(av);
		}
		rq->agents = agents;
	}
	if ((v = json_object_get(j, "n")) && !json_is_null(v)) {
		if (!json_is_integer(v) || json_integer_value(v) < 1 ||
		    json_integer_value(v) > SUBMIT_GROUP_MAX)
			return "\"n\" must be a whole number from 1 to 8";
		rq->n = (int)json_integer_value(v);
	}
	return NULL;
}

/* A name the request gives that the configuration lacks: a 404 with the
 * code naming what (no_such_repo, no_such_agent, no_such_recipe), or
 * MHD_NO when every one is there (*found 1). */
static enum MHD_Result post_task_names(struct MHD_Connection *c, const struct config *cfg,
                                       const struct submit_req *rq, int *found)
{
	*found = 0;
	if (rq->recipe && !config_find_recipe(cfg, rq->recipe))
		return api_send_error(c, 404, "no_such_recipe", NULL, "no recipe named '%s' in the "
		                  "configuration", rq->recipe);
	if (rq->repo && !config_find_repo(cfg, rq->repo))
		return api_send_error(c, 404, "no_such_repo", NULL, "no repo named '%s' in the "
		                  "configuration", rq->repo);
	if (rq->agent && !config_find_agent(cfg, rq->agent))
		return api_send_error(c, 404, "no_such_agent", NULL, "no agent named '%s' in the "
		                  "configuration", rq->agent);
	for (size_t i = 0; i < rq->nagents; i++)
		if (!config_find_agent(cfg, rq->agents[i]))
			return api_send_error(c, 404, "no_such_agent", NULL, "no agent named '%s' in the "
			                  "configuration", rq->agents[i]);
	*found = 1;
	return MHD_NO;
}

static enum MHD_Result post_task(struct api *a, struct MHD_Connection *c, struct req *rq,
                                 struct store *st)
{
	const struct config *cfg = a->cfg;
	const char *why;
	json_t *j = parse_body(rq, &why);
	if (!j)
		return api_send_error(c, 400, "bad_json", NULL, "%s", why);
	json_t *jr = json_object_get(j, "repo"), *jt = json_object_get(j, "text");
	json_t *ja = json_object_get(j, "agent"), *jb = json_object_get(j, "budget");
	json_t *jrec = json_object_get(j, "recipe");
	enum MHD_Result rc;
	char *meta = NULL;
	/* With a recipe the text is optional: its prompt is the task's. */
	int text_ok = json_is_string(jt) || (json_is_string(jrec) && (!jt || json_is_null(jt)));
	if ((jr && !json_is_string(jr)) || !text_ok || (ja && !json_is_string(ja) &&
	    !json_is_null(ja)) || (jb && !json_is_number(jb) && !json_is_null(jb))) {
		rc = api_send_error(c, 400, "bad_field", NULL, "fields: \"text\" (string, required "
		                "without a recipe), \"repo\" and \"agent\" (strings), \"budget\" "
		                "(number of US dollars)");
		goto out;
	}
	const char *text = json_string_value(jt);
	size_t tlen = text ? json_string_length(jt) : 0;
	if (tlen >= PROMPT_MAX) {
		rc = api_send_error(c, 413, "prompt_too_large", NULL,
		                "the task text is %zu bytes; it must be under 128 KiB", tlen);
		goto out;
	}
	if (text && !json_is_string(jrec) && strspn(text, " \t\r\n") == tlen) {
		rc = api_send_error(c, 400, "bad_field", NULL, "\"text\" is empty; say what the agent "
		                "should do");
		goto out;
	}
	const char *names[CLI_INPUTS_API_MAX], *values[CLI_INPUTS_API_MAX];
	const char *agents[SUBMIT_GROUP_MAX];
	struct submit_req sr = { .text = text, .repo = json_string_value(jr),
	                         .agent = json_string_value(ja), .budget = -1,
	                         .queued_by = rq->who };
	if ((why = post_task_options(j, &sr, names, values, agents))) {
		rc = api_send_error(c, 400, "bad_field", NULL, "%s", why);
		goto out;
	}
	int found;
	if ((rc = post_task_names(c, cfg, &sr, &found)), !found)
		goto out;
	if (jb && json_is_number(jb)) {
		sr.budget = json_number_value(jb);
		if (sr.budget < 0 || sr.budget > 1e9) {
			rc = api_send_error(c, 400, "bad_field", NULL, "\"budget\" must be from 0 (no "
			                "limit) to 1000000000 US dollars");
			goto out;
		}
	}
	json_t *jc = json_object_get(j, "callback_url"), *jm = json_object_get(j, "metadata");
	if ((jc && !json_is_string(jc) && !json_is_null(jc)) ||
	    (jm && !json_is_object(jm) && !json_is_null(jm))) {
		rc = api_send_error(c, 400, "bad_field", NULL, "\"callback_url\" must be a string (a URL) "
		                "and \"metadata\" a JSON object");
		goto out;
	}
	sr.callback_url = json_string_value(jc);
	if (sr.callback_url && !webhook_callback_allowed(cfg, sr.callback_url)) {
		rc = api_send_error(c, 400, "callback_not_allowed", NULL, "callback_url '%.200s' matches "
		                "no [api] callback-allow pattern of this server%s", sr.callback_url,
		                cfg->napi_callback_allow ? "" : " (none is configured)");
		goto out;
	}
	meta = json_is_object(jm) ? json_dumps(jm, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
	if (meta && strlen(meta) > 16384) {
		rc = api_send_error(c, 400, "bad_field", NULL, "\"metadata\" is over 16 KiB of JSON; keep "
		                "what identifies the thread or job, and store the rest on your side");
		goto out;
	}
	sr.metadata = meta;
	sr.max_queued = cfg->api_max_queue > 0 ? (size_t)cfg->api_max_queue : 0;
	struct err e = {{0}};
	struct submit_result res;
	/* The count and the insert are one transaction: of 30 requests racing
	 * for 6 places, 6 get one. */
	int arc = submit_tasks(st, cfg, &sr, &res, &e);
	if (arc == -2)
		rc = api_send_error(c, 429, "queue_full", NULL, "%zu tasks are queued (api.max-queue "
		                "is %d); try again later", res.queued, cfg->api_max_queue);
	else if (arc < 0)
		rc = api_send_err(c, &e, NULL);
	else
		rc = res.group[0] ? send_group_queued(c, &res) : send_queued(c, res.ids[0]);
out:
	free(meta);
	json_decref(j);
	return rc;
}

static enum MHD_Result get_tasks(struct api *a, struct MHD_Connection *c, struct store *st)
{
	const char *sts = api_query(c, "status"), *before = api_query(c, "before");
	int status = -1;
	if (sts && (status = task_status_parse(sts)) < 0)
		return api_send_error(c, 400, "bad_field", NULL, "status '%s' is not a task status", sts);
	long limit = PAGE_DEFAULT, offset = 0;
	if ((api_query(c, "limit") && parse_uint(api_query(c, "limit"), PAGE_MAX, &limit) < 0) ||
	    limit < 1)
		return api_send_error(c, 400, "bad_field", NULL, "limit must be from 1 to %d", PAGE_MAX);
	if (api_query(c, "offset") && parse_uint(api_query(c, "offset"), 1L << 40, &offset) < 0)
		return api_send_error(c, 400, "bad_field", NULL, "offset must be a whole number");
	struct err e = {{0}};
	/* Newest first; a page is read through the (status, seq) index,
	 * whatever the history's size.  The cursor is the last task of the
	 * page before: pages hold each task once while new ones arrive. */
	struct task_query q = { .status_mask = status < 0 ? 0 : TASK_MASK(status),
	                        .newest_first = 1, .limit = (size_t)limit + 1,
	                        .offset = (size_t)offset };
	if (before) {
		struct task_row b;
		if (!task_id_valid(before, 0) || store_task_get(st, before, &b, &e) < 0)
			return api_send_error(c, 400, "bad_field", NULL, "before must be the id of a task "
			                  "(the next link of a page has one)");
		q.before = b.seq;
		task_row_free(&b);
	}
	struct task_query all = { .status_mask = q.status_mask };
	struct task_row *rows;
	size_t n, total;
	if (store_task_count(st, &all, &total, &e) < 0 ||
	    store_task_query(st, &q, &rows, &n, &e) < 0)
		return api_send_err(c, &e, NULL);
	json_t *arr = json_array();
	for (size_t i = 0; i < n && i < (size_t)limit; i++)
		json_array_append_new(arr, taskjson_row(st, &rows[i], a->cfg));
	json_t *j = json_pack("{s:o,s:I,s:I,s:I}", "tasks", arr, "total", (json_int_t)total,
	                      "offset", (json_int_t)offset, "limit", (json_int_t)limit);
	if (n > (size_t)limit) {
		char next[160];
		snprintf(next, sizeof next, "/tasks?limit=%ld&before=%s%s%s", limit,
		         rows[limit - 1].id, sts ? "&status=" : "", sts ? sts : "");
		json_object_set_new(j, "next", json_string(next));
	} else {
		json_object_set_new(j, "next", json_null());
	}
	task_rows_free(rows, n);
	return send_json(c, 200, j);
}

/* GET /audit: a page of the audit trail, newest first, as paddock audit
 * --json prints it; the cursor is the last event's seq, so that pages
 * hold each event once while new ones are recorded. */
static enum MHD_Result get_audit(struct api *a, struct MHD_Connection *c)
{
	const char *ls = api_query(c, "limit"), *bs = api_query(c, "before");
	long limit = AUDIT_PAGE_DEFAULT, before = 0;
	if (ls && (parse_uint(ls, AUDIT_PAGE_MAX, &limit) < 0 || limit < 1))
		return api_send_error(c, 400, "bad_field", NULL, "limit must be from 1 to %d",
		                      AUDIT_PAGE_MAX);
	if (bs && (parse_uint(bs, LONG_MAX, &before) < 0 || before < 1))
		return api_send_error(c, 400, "bad_field", NULL, "before must be the seq of an audit "
		                      "event (the next link of a page has one)");
	struct err e = {{0}};
	struct store *st = api_open_store(a, &e);
	if (!st)
		return api_send_err(c, &e, NULL);
	struct audit_event *ev;
	size_t n;
	/* One more than the page: whether there is a next one. */
	int rc = store_audit_before(st, before, (size_t)limit + 1, &ev, &n, &e);
	store_close(st);
	if (rc < 0)
		return api_send_err(c, &e, NULL);
	json_t *arr = json_array();
	for (size_t i = 0; i < n && i < (size_t)limit; i++)
		json_array_append_new(arr, audit_event_json(&ev[i], 1));
	json_t *j = json_pack("{s:o,s:I}", "events", arr, "limit", (json_int_t)limit);
	char next[64];
	snprintf(next, sizeof next, "/audit?limit=%ld&before=%lld", limit,
	         n > (size_t)limit ? ev[limit - 1].id : 0);
	json_object_set_new(j, "next", n > (size_t)limit ? json_string(next) : json_null());
	audit_events_free(ev, n);
	return send_json(c, 200, j);
}

static enum MHD_Result get_diff(struct api *a, struct MHD_Connection *c, struct store *st,
                                const struct task_row *t)
{
	const char *round = api_query(c, "round"), *since = api_query(c, "since");
	const char *from = t->base, *to = t->head;
	struct task_round *r = NULL;
	size_t nr = 0;
	struct err e = {{0}};
	enum MHD_Result rc;
	if (round && since)
		return api_send_error(c, 400, "bad_field", NULL, "give either round or since, not both");
	if (since && strcmp(since, "review") != 0 && strcmp(since, "failed") != 0)
		return api_send_error(c, 400, "bad_field", NULL, "since takes 'review' or 'failed'");
	if (round) {
		long n;
		if (parse_uint(round, 1 << 20, &n) < 0 || n < 1 || n > t->round)
			return api_send_error(c, 400, "bad_field", NULL, "round: task %s has rounds 1 to %d",
			                  t->id, t->round);
		if (store_rounds(st, t->id, &r, &nr, &e) < 0)
			return api_send_err(c, &e, NULL);
		from = to = NULL;
		for (size_t i = 0; i < nr; i++)
			if (r[i].n == n) {
				from = r[i].from;
				to = r[i].head;
			}
	} else if (since && !strcmp(since, "failed")) {
		/* The round that did not reach review (paddock diff --failed). */
		if (!t->failed_round || !t->failed_head)
			return api_send_error(c, 409, "no_work", task_status_name(t->status), "task %s has "
			                  "no failed round with work to show", t->id);
		to = t->failed_head;
	} else if (since) {
		if (!t->reviewed_head) {
			return api_send_error(c, 409, "not_reviewed", task_status_name(t->status),
			                  "task %s has not been reviewed yet (no changes were requested)",
			                  t->id);
		}
		from = t->reviewed_head;
	}
	if (!from || !to) {
		rc = api_send_error(c, 409, "no_work", task_status_name(t->status), "task %s has no work "
		                "to show yet (it is %s)", t->id, task_status_name(t->status));
		task_rounds_free(r, nr);
		return rc;
	}
	char *mirror = mirror_path(a->data_dir, t->repo);
	char *mem = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&mem, &len);
	char *diffs = paths_task_diffs(a->data_dir, t->id);
	int drc = diffcache_write(diffs, mirror, from, to, f, &e);
	fclose(f);
	free(diffs);
	free(mirror);
	task_rounds_free(r, nr);
	if (drc < 0) {
		free(mem);
		return api_send_error(c, 500, "diff", NULL, "%s", e.msg);
	}
	return send_buf(c, 200, "text/x-diff; charset=utf-8", mem, len);
}

/* "bytes=A-B", "bytes=A-", "bytes=-N" against size; -1 when not
 * satisfiable or not understood. */
static int parse_range(const char *h, off_t size, off_t *start, off_t *end)
{
	long long a = -1, b = -1;
	if (strncmp(h, "bytes=", 6) != 0 || strchr(h, ','))
		return -1;
	const char *p = h + 6;
	if (*p == '-') {
		char *e;
		long long n = strtoll(p + 1, &e, 10);
		if (*e || n <= 0)
			return -1;
		a = size > n ? size - n : 0;
		b = size - 1;
	} else {
		char *e;
		a = strtoll(p, &e, 10);
		if (*e != '-' || a < 0)
			return -1;
		if (e[1]) {
			char *e2;
			b = strtoll(e + 1, &e2, 10);
			if (*e2 || b < a)
				return -1;
		} else {
			b = size - 1;
		}
	}
	if (a >= size)
		return -1;
	if (b >= size)
		b = size - 1;
	*start = a;
	*end = b;
	return 0;
}

static enum MHD_Result get_log(struct api *a, struct MHD_Connection *c, const struct task_row *t)
{
	char *path = paths_task_log(a->data_dir, t->id);
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	free(path);
	struct stat sb;
	if (fd < 0 || fstat(fd, &sb) < 0) {
		if (fd >= 0)
			close(fd);
		/* No log yet: an empty one. */
		return send_buf(c, 200, "text/plain; charset=utf-8", xstrdup(""), 0);
	}
	off_t size = sb.st_size, start = 0, end = size - 1;
	const char *range = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Range");
	const char *off = api_query(c, "offset");
	unsigned status = 200;
	if (range) {
		if (parse_range(range, size, &start, &end) < 0) {
			close(fd);
			struct MHD_Response *r = MHD_create_response_from_buffer(0, (void *)"",
			                                                         MHD_RESPMEM_PERSISTENT);
			char cr[64];
			snprintf(cr, sizeof cr, "bytes */%lld", (long long)size);
			MHD_add_response_header(r, "Content-Range", cr);
			return api_answer(c, 416, r);
		}
		status = 206;
	} else if (off) {
		long o;
		if (parse_uint(off, 1L << 62, &o) < 0) {
			close(fd);
			return api_send_error(c, 400, "bad_field", NULL, "offset must be a whole number");
		}
		start = o > size ? size : o;
	}
	uint64_t len = size > 0 && end >= start ? (uint64_t)(end - start + 1) : 0;
	struct MHD_Response *r = MHD_create_response_from_fd_at_offset64(len, fd, (uint64_t)start);
	MHD_add_response_header(r, "Content-Type", "text/plain; charset=utf-8");
	MHD_add_response_header(r, "Accept-Ranges", "bytes");
	char hdr[96];
	if (status == 206) {
		snprintf(hdr, sizeof hdr, "bytes %lld-%lld/%lld", (long long)start, (long long)end,
		         (long long)size);
		MHD_add_response_header(r, "Content-Range", hdr);
	}
	snprintf(hdr, sizeof hdr, "%lld", (long long)size);
	MHD_add_response_header(r, "X-Log-Size", hdr);
	return api_answer(c, status, r);
}

/* ---- decisions ---- */

/* POST /tasks/ID/{approve,push,reject,request-changes,cancel,confirm}:
 * the body's fields checked, a push left by a dead process recovered,
 * the gate's action, and the answer with the task as it is after.
 * Long: the fields, the recovery and the answer are shared by every
 * action; split, each part would take most of the others' arguments. */
static enum MHD_Result decide(struct api *a, struct MHD_Connection *c, struct req *rq,
                              struct store *st, const struct task_row *t, const char *action,
                              const char *actor)
{
	struct err e = {{0}};
	const char *notes = NULL;
	int again = 0, draft = 0;
	size_t sent = 0;
	json_t *j = NULL;
	if (rq->body.len) {
		const char *why;
		j = parse_body(rq, &why);
		if (!j)
			return api_send_error(c, 400, "bad_json", NULL, "%s", why);
		json_t *jn = json_object_get(j, "notes");
		if (jn && !json_is_string(jn) && !json_is_null(jn)) {
			json_decref(j);
			return api_send_error(c, 400, "bad_field", NULL, "\"notes\" must be a string");
		}
		notes = jn ? json_string_value(jn) : NULL;
		json_t *ja = json_object_get(j, "again");
		if (ja && !json_is_boolean(ja)) {
			json_decref(j);
			return api_send_error(c, 400, "bad_field", NULL, "\"again\" must be true or false");
		}
		again = json_is_true(ja);
		/* The task's review draft goes with the notes
		 * (gate_request_changes_draft). */
		json_t *jd = json_object_get(j, "draft");
		if (jd && !json_is_boolean(jd)) {
			json_decref(j);
			return api_send_error(c, 400, "bad_field", NULL, "\"draft\" must be true or false");
		}
		draft = json_is_true(jd);
	}
	if (draft && strcmp(action, "request-changes") != 0) {
		json_decref(j);
		return api_send_error(c, 400, "bad_field", NULL, "\"draft\" goes only with a request "
		                  "for changes");
	}
	if (again && (notes || strcmp(action, "request-changes") != 0)) {
		json_decref(j);
		return api_send_error(c, 400, "bad_field", NULL, "\"again\" sends the last notes of "
		                  "a request for changes again; give it without \"notes\"");
	}
	struct task_row fresh;
	int have_fresh = 0;
	if (t->status == TASK_PUSHING && gate_push_lock_free(a->data_dir, t->id)) {
		/* A push left by a dead process: where it got to decides what
		 * the task is now. */
		struct gate_ctx rg = gate_ctx_of(a->cfg, a->data_dir, st, actor);
		struct buf said = {0};
		gate_recover_push(&rg, t->id, &said, &e);
		buf_free(&said);
		if (store_task_get(st, t->id, &fresh, &e) == 0) {
			have_fresh = 1;
			t = &fresh;
		}
	}
	char *again_notes = NULL;
	const char *state = task_status_name(t->status);
	enum MHD_Result rc;
	struct gate_ctx g = gate_ctx_of(a->cfg, a->data_dir, st, actor);
	struct buf out = {0};
	/* The gate checks the task's state (and its findings, and the notes)
	 * and says by the error's kind what stood in the way (send_err). */
	if (strcmp(action, "confirm") == 0) {
		struct task_row after;
		if (store_task_confirm(st, t->id, actor, &e) < 0)
			rc = api_send_err(c, &e, state);
		else if (store_task_get(st, t->id, &after, &e) < 0)
			rc = api_send_err(c, &e, NULL);
		else {
			rc = send_json(c, 200, taskjson_task(&after, a->cfg));
			task_row_free(&after);
		}
		goto out;
	}
	if (strcmp(action, "cancel") == 0) {
		int r = gate_cancel(&g, t->id, &e);
		if (r < 0)
			rc = api_send_err(c, &e, state);
		else
			rc = send_json(c, r == 1 ? 200 : 202, json_pack("{s:s,s:s}", "id", t->id,
			               "status", r == 1 ? "cancelled" : "cancel requested"));
		goto out;
	}
	if (again) {
		if (!(again_notes = gate_last_notes(st, t->id, &e))) {
			rc = api_send_err(c, &e, state);
			goto out;
		}
		notes = again_notes;
	}
	int r;
	/* A person's approve or push (reject and the rest ask the gate). */
	if ((!strcmp(action, "approve") || !strcmp(action, "push")) &&
	    gate_action_waits(&g, t->id, action, &e) < 0)
		r = -1;
	else if (strcmp(action, "approve") == 0)
		r = gate_approve(&g, t->id, notes, &out, &e);
	else if (strcmp(action, "push") == 0)
		r = gate_push(&g, t->id, &out, &e);
	else if (strcmp(action, "reject") == 0)
		r = gate_reject(&g, t->id, notes, &e);
	else if (draft)
		r = gate_request_changes_draft(&g, t->id, notes, &sent, &e);
	else
		r = gate_request_changes(&g, t->id, notes, &e);
	if (r < 0) {
		rc = api_send_err(c, &e, state);
		goto out;
	}
	struct task_row after;
	json_t *res = json_pack("{s:s}", "id", t->id);
	int rc_asked = strcmp(action, "request-changes") == 0;
	if (store_task_get(st, t->id, &after, &e) == 0) {
		json_object_set_new(res, "status", json_string(task_status_name(after.status)));
		json_object_set_new(res, "pull_request", after.pr_url ? json_string(after.pr_url)
		                                                      : json_null());
		/* A pull request that failed to open: the task is done all the same. */
		if (!strcmp(action, "approve"))
			json_object_set_new(res, "pull_request_error", taskjson_pr_error(&after));
		if (rc_asked) {
			/* The round the notes start: the task waits at review for
			 * the scheduler ("pending"), then runs it. */
			json_object_set_new(res, "round", json_integer(after.pending ? after.round + 1
			                                                              : after.round));
			json_object_set_new(res, "pending", after.pending ? json_string(after.pending)
			                                                  : json_null());
			if (draft)
				json_object_set_new(res, "comments", json_integer((json_int_t)sent));
		}
		task_row_free(&after);
	}
	json_object_set_new(res, "output", json_string(out.data ? out.data : ""));
	rc = send_json(c, rc_asked ? 202 : 200, res);
out:
	buf_free(&out);
	free(again_notes);
	if (have_fresh)
		task_row_free(&fresh);
	json_decref(j);
	return rc;
}

/* POST /tasks/ID/follow-up {"notes": TEXT}: 202 with the new task's id,
 * as POST /tasks answers. */
static enum MHD_Result follow_up(struct api *a, struct MHD_Connection *c, struct req *rq,
                                 struct store *st, const struct task_row *t,
                                 const char *actor)
{
	const char *why;
	json_t *j = parse_body(rq, &why);
	if (!j)
		return api_send_error(c, 400, "bad_json", NULL, "%s", why);
	json_t *jn = json_object_get(j, "notes");
	const char *notes = json_string_value(jn);
	enum MHD_Result rc;
	struct err e = {{0}};
	char nid[TASK_ID_LEN + 1];
	/* The queue's limit is counted where the follow-up is added. */
	struct gate_ctx g = gate_ctx_of(a->cfg, a->data_dir, st, actor);
	g.max_queued = a->cfg->api_max_queue > 0 ? (size_t)a->cfg->api_max_queue : 0;
	int frc;
	if (!json_is_string(jn) || strspn(notes, " \t\r\n") == strlen(notes)) {
		rc = api_send_error(c, 400, "bad_field", NULL, "\"notes\" are needed: say what the "
		                "agent should do next");
	} else if ((frc = gate_follow_up(&g, t->id, notes, nid, &e)) == -2) {
		rc = api_send_error(c, 429, "queue_full", NULL, "%d tasks are queued (api.max-queue "
		                "is %d); try again later", a->cfg->api_max_queue,
		                a->cfg->api_max_queue);
	} else if (frc < 0) {
		rc = api_send_err(c, &e, task_status_name(t->status));
	} else {
		rc = send_queued(c, nid);
	}
	json_decref(j);
	return rc;
}

/* ---- idempotent requests ---- */

/* Idempotency-Key on a POST: a retried request (same key, token and
 * route, within 24 hours) gets the first answer again and changes
 * nothing.  1 when the answer was given here (a replay, a refusal); 0 to
 * go on, with rq->record set when the answer is to be kept for the key. */
static int idem_start(struct MHD_Connection *c, struct req *rq, struct store *st,
                      struct idem_key *k, const char *method, const char *url,
                      enum MHD_Result *rc)
{
	const char *key = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Idempotency-Key");
	if (!key)
		return 0;
	size_t kl = strlen(key);
	int printable = kl > 0 && kl <= 255;
	for (size_t i = 0; printable && i < kl; i++)
		printable = key[i] > 0x20 && key[i] < 0x7f;
	if (!printable) {
		*rc = api_send_error(c, 400, "bad_field", NULL, "Idempotency-Key must be 1 to 255 "
		                 "printable ASCII characters, without spaces (a UUID, say)");
		return 1;
	}
	/* The request's fingerprint: a key sent again with another request is
	 * a client's mistake, not a retry. */
	unsigned char md[SHA256_DIGEST_LENGTH];
	struct buf all = {0};
	buf_add(&all, method, strlen(method) + 1);
	buf_add(&all, url, strlen(url) + 1);
	buf_add(&all, rq->body.data ? rq->body.data : "", rq->body.len);
	SHA256((const unsigned char *)all.data, all.len, md);
	buf_free(&all);
	static _Thread_local char fp[2 * SHA256_DIGEST_LENGTH + 1];
	for (size_t i = 0; i < sizeof md; i++)
		snprintf(fp + 2 * i, 3, "%02x", md[i]);
	k->key = key;
	k->fingerprint = fp;
	struct idem_answer got;
	struct err e = {{0}};
	int r = store_idem_begin(st, k, &got, &e);
	if (r < 0) {
		*rc = api_send_err(c, &e, NULL);
		return 1;
	}
	if (r == STORE_IDEM_NEW) {
		rq->record = 1;
		return 0;
	}
	if (r == STORE_IDEM_REPLAY) {
		rq->replayed = 1;
		size_t n = strlen(got.body);
		*rc = send_full(c, (unsigned)got.status, "application/json", xstrdup(got.body), n,
		                got.location);
	} else if (r == STORE_IDEM_BUSY) {
		*rc = api_send_error(c, 409, "idempotency_in_progress", NULL, "a request with this "
		                 "Idempotency-Key is still being answered; try again in a moment");
	} else {
		*rc = api_send_error(c, 422, "idempotency_key_reused", NULL, "this Idempotency-Key "
		                 "was used for another request (another route or body) in the "
		                 "last 24 hours; use a new key for a new request");
	}
	store_idem_free(&got);
	return 1;
}

/* Keeps the answer for the key, or frees the key when the answer was a
 * server error (a retry should try again). */
static void idem_finish(struct req *rq, struct store *st, const struct idem_key *k)
{
	if (!rq->record)
		return;
	struct err e = {{0}};
	int keep = rq->status && rq->status < 500;
	if (store_idem_finish(st, k, keep ? (int)rq->status : 0, rq->answer, rq->location, &e) < 0)
		logger_event(cur_api ? cur_api->log : NULL, LOGGER_ERROR, NULL, NULL, "api.error",
		             "paddock: api: %s", e.msg);
	rq->record = 0;
}

/* ---- best-of-N groups ---- */

/* An engine error about a group: as send_err, but a group that is not
 * there is no_such_group. */
static enum MHD_Result send_group_err(struct MHD_Connection *c, const struct err *e,
                                      const char *state)
{
	if (e->kind == ERR_NOT_FOUND)
		return api_send_error(c, 404, "no_such_group", NULL, "%s", e->msg);
	return api_send_err(c, e, state);
}

/* POST /groups/ID/pick {"task": ID, "notes": TEXT}: 200 with the group
 * after the pick and what it did ("output"). */
static enum MHD_Result pick(struct api *a, struct MHD_Connection *c, struct req *rq,
                            struct store *st, const char *gid, const char *actor)
{
	const char *why;
	json_t *j = parse_body(rq, &why);
	if (!j)
		return api_send_error(c, 400, "bad_json", NULL, "%s", why);
	json_t *jt = json_object_get(j, "task"), *jn = json_object_get(j, "notes");
	enum MHD_Result rc;
	if (!json_is_string(jt) || !task_id_valid(json_string_value(jt), 1)) {
		rc = api_send_error(c, 400, "bad_field", NULL, "\"task\" must be the id of one of the "
		                "group's members (GET /groups/%s lists them)", gid);
	} else if (jn && !json_is_string(jn) && !json_is_null(jn)) {
		rc = api_send_error(c, 400, "bad_field", NULL, "\"notes\" must be a string");
	} else {
		const char *task = json_string_value(jt), *notes = json_string_value(jn);
		struct gate_ctx g = gate_ctx_of(a->cfg, a->data_dir, st, actor);
		struct err e = {{0}};
		struct buf out = {0};
		struct group_info gi;
		if (group_pick(&g, gid, task, notes, &out, &e) < 0) {
			struct task_row t;
			struct err ignored;
			int have = store_task_get(st, task, &t, &ignored) == 0;
			rc = send_group_err(c, &e, have ? task_status_name(t.status) : NULL);
			if (have)
				task_row_free(&t);
		} else if (group_load(st, a->data_dir, gid, clock_wall(), &gi, &e) < 0) {
			rc = send_group_err(c, &e, NULL);
		} else {
			json_t *res = group_json(&gi);
			json_object_set_new(res, "output", json_string(out.data ? out.data : ""));
			rc = send_json(c, 200, res);
			group_info_free(&gi);
		}
		buf_free(&out);
	}
	json_decref(j);
	return rc;
}

/* GET /groups/{id} and POST /groups/{id}/pick (picking). */
static enum MHD_Result group_answer(struct api *a, struct MHD_Connection *c, struct req *rq,
                                    const struct api_call *x, int picking)
{
	const char *url = x->url, *method = x->method, *actor = x->actor, *id = x->name;
	struct err e = {{0}};
	struct store *st = api_open_store(a, &e);
	if (!st)
		return api_send_err(c, &e, NULL);
	struct group_info gi;
	enum MHD_Result rc;
	char route_name[96];
	snprintf(route_name, sizeof route_name, "POST /groups/%s/pick", id);
	struct idem_key ik = { .actor = actor, .route = route_name };
	if (group_load(st, picking ? NULL : a->data_dir, id, clock_wall(), &gi, &e) < 0) {
		/* A path with an id that no group can have names no group. */
		if (e.kind == ERR_INVALID)
			err_kind_mark(&e, ERR_NOT_FOUND);
		rc = send_group_err(c, &e, NULL);
	} else if (!picking) {
		rc = send_json(c, 200, group_json(&gi));
	} else if (!idem_start(c, rq, st, &ik, method, url, &rc)) {
		rc = pick(a, c, rq, st, gi.g.id, actor);
		idem_finish(rq, st, &ik);
	}
	group_info_free(&gi);
	store_close(st);
	return rc;
}

static enum MHD_Result route_get_group(struct api *a, struct MHD_Connection *c, struct req *rq,
                                       const struct api_call *x)
{
	return group_answer(a, c, rq, x, 0);
}

static enum MHD_Result route_post_pick(struct api *a, struct MHD_Connection *c, struct req *rq,
                                       const struct api_call *x)
{
	return group_answer(a, c, rq, x, 1);
}

/* ---- dispatch ---- */

/* GET /recipes: the configuration's recipes. */
static enum MHD_Result route_get_recipes(struct api *a, struct MHD_Connection *c,
                                         struct req *rq, const struct api_call *x)
{
	(void)rq, (void)x;
	const struct config *cfg = a->cfg;
	json_t *arr = json_array();
	for (size_t i = 0; i < cfg->nrecipes; i++)
		json_array_append_new(arr, taskjson_recipe(&cfg->recipes[i]));
	return send_json(c, 200, json_pack("{s:o}", "recipes", arr));
}

/* GET /recipes/{name}: one of them. */
static enum MHD_Result route_get_recipe(struct api *a, struct MHD_Connection *c,
                                        struct req *rq, const struct api_call *x)
{
	(void)rq;
	const struct recipe_conf *r = config_find_recipe(a->cfg, x->name);
	if (!r)
		return api_send_error(c, 404, "no_such_recipe", NULL, "no recipe named '%.100s' in "
		                  "the configuration", x->name);
	return send_json(c, 200, taskjson_recipe(r));
}

/* Counts a refused GitHub delivery from c's address: 0 while the address
 * is within REFUSE_MAX refusals a window, else the seconds until its
 * window ends (the refusal is then answered 429 and not recorded).  An
 * address gets a slot of its own only when one is free (never used, or
 * its window over): a slot still counting is never taken from its
 * address, or a sender cycling through more addresses than there are
 * slots would start afresh at each; while all are counting, a new
 * address waits for the first window to end.  So at most REFUSE_SLOTS *
 * REFUSE_MAX refusals a window are recorded, from any number of
 * addresses. */
static double refusal_count(struct api *a, struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ai =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	if (!ai || !ai->client_addr)
		return 0;
	const struct sockaddr *sa = ai->client_addr;
	double now = clock_mono(), retry = 0, first_end = 0;
	pthread_mutex_lock(&a->cmu);
	struct refusals *slot = NULL, *spare = NULL;
	for (size_t i = 0; i < REFUSE_SLOTS; i++) {
		struct refusals *r = &a->refusals[i];
		if (r->n && addr_same(sa, &r->addr)) {
			slot = r;
			break;
		}
		if (!r->n || now - r->since >= REFUSE_WINDOW_S) {
			if (!spare)
				spare = r;
		} else if (!first_end || r->since + REFUSE_WINDOW_S < first_end) {
			first_end = r->since + REFUSE_WINDOW_S;
		}
	}
	if (!slot && !spare) {
		pthread_mutex_unlock(&a->cmu);
		return first_end - now > 1 ? first_end - now : 1;
	}
	if (!slot) {
		slot = spare;
		memset(slot, 0, sizeof *slot);
		memcpy(&slot->addr, sa, sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
		                                                  : sizeof(struct sockaddr_in));
	}
	if (!slot->n || now - slot->since >= REFUSE_WINDOW_S) {
		slot->since = now;
		slot->n = 0;
	}
	if (++slot->n > REFUSE_MAX)
		retry = slot->since + REFUSE_WINDOW_S - now;
	pthread_mutex_unlock(&a->cmu);
	return retry > 0 ? retry : 0;
}

/* 429 to an address over its refusals, with Retry-After. */
static enum MHD_Result send_retry(struct MHD_Connection *c, double secs)
{
	char *body = xasprintf("{\"error\": \"too many refused deliveries from this address; "
	                       "try again in %.0f s\", \"code\": \"too_many_refused\"}\n",
	                       secs + 0.5);
	struct MHD_Response *r = MHD_create_response_from_buffer(strlen(body), body,
	                                                         MHD_RESPMEM_MUST_FREE);
	char after[32];
	snprintf(after, sizeof after, "%.0f", secs + 0.5);
	MHD_add_response_header(r, "Content-Type", "application/json");
	MHD_add_response_header(r, "Retry-After", after);
	return api_answer(c, 429, r);
}

/* POST /github/webhook: GitHub's deliveries (ghsync.h).  The signature
 * is the authentication, not a paddock token: GitHub sends none. */
/* POST /github/webhook: a delivery, signed with the webhook's secret. */
static enum MHD_Result route_post_github(struct api *a, struct MHD_Connection *c,
                                         struct req *rq, const struct api_call *x)
{
	(void)x;
	char *secret = ghsync_secret(a->cfg);
	if (!secret)
		return api_send_error(c, 404, "no_webhook", NULL, "GitHub's webhook is not configured "
		                  "here (set [github] webhook-secret-env)");
	const char *ev = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-GitHub-Event");
	const char *dl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-GitHub-Delivery");
	const char *sig = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Hub-Signature-256");
	struct err e = {{0}};
	struct store *st = api_open_store(a, &e);
	if (!st) {
		free(secret);
		return api_send_err(c, &e, NULL);
	}
	enum MHD_Result rc;
	int ok = !rq->too_big && ghsync_signature_ok(secret, rq->body.data, rq->body.len, sig);
	double retry = ok ? 0 : refusal_count(a, c);
	if (ok)
		conn_served(a, c);
	if (retry > 0) {
		rc = send_retry(c, retry);
	} else if (rq->too_big) {
		ghsync_refused(st, ev, dl, "the body is over api.max-body");
		rc = api_send_error(c, 413, "body_too_large", NULL, "the body is over %llu bytes "
		                "(api.max-body)", (unsigned long long)a->cfg->api_max_body);
	} else if (!ok) {
		ghsync_refused(st, ev, dl, sig ? "X-Hub-Signature-256 does not verify"
		                               : "no X-Hub-Signature-256");
		rc = api_send_error(c, 401, "bad_signature", NULL, "%s", sig
		                ? "X-Hub-Signature-256 is not the HMAC-SHA256 of the body with "
		                  "the webhook's secret"
		                : "X-Hub-Signature-256 is missing; set the webhook's secret on GitHub");
	} else if (!ev || !*ev) {
		ghsync_refused(st, ev, dl, "no X-GitHub-Event");
		rc = api_send_error(c, 400, "bad_field", NULL, "X-GitHub-Event is missing");
	} else {
		struct ghsync s;
		json_t *ans = NULL;
		ghsync_init(&s, a->cfg, a->data_dir, st, "webhook");
		/* GitHub gives a delivery 10 s: a longer wait it asks for is left
		 * to the next sync. */
		s.max_wait = 5;
		if (ghsync_webhook(&s, ev, dl, rq->body.data ? rq->body.data : "", rq->body.len, &ans,
		                   &e) < 0)
			rc = api_send_error(c, 400, "bad_json", NULL, "%s", e.msg);
		else
			rc = send_json(c, strcmp(ev, "ping") == 0 ? 200 : 202, ans);
		ghsync_free(&s);
	}
	memset(secret, 0, strlen(secret));
	free(secret);
	store_close(st);
	return rc;
}

/* ---- the route table ---- */

/* Handlers of the task routes: the engine calls above, as the table's. */
static enum MHD_Result route_post_task(struct api *a, struct MHD_Connection *c,
                                       struct req *rq, const struct api_call *x)
{
	return post_task(a, c, rq, x->st);
}

static enum MHD_Result route_get_tasks(struct api *a, struct MHD_Connection *c,
                                       struct req *rq, const struct api_call *x)
{
	(void)rq;
	return get_tasks(a, c, x->st);
}

static enum MHD_Result route_get_task(struct api *a, struct MHD_Connection *c,
                                      struct req *rq, const struct api_call *x)
{
	(void)rq;
	return send_json(c, 200, taskjson_full(x->st, x->t, a->cfg));
}

static enum MHD_Result route_get_diff(struct api *a, struct MHD_Connection *c,
                                      struct req *rq, const struct api_call *x)
{
	(void)rq;
	return get_diff(a, c, x->st, x->t);
}

static enum MHD_Result route_get_log(struct api *a, struct MHD_Connection *c,
                                     struct req *rq, const struct api_call *x)
{
	(void)rq;
	return get_log(a, c, x->t);
}

static enum MHD_Result route_get_events(struct api *a, struct MHD_Connection *c,
                                        struct req *rq, const struct api_call *x)
{
	(void)rq;
	return api_events_get(a, c, x->t);
}

static enum MHD_Result route_get_audit(struct api *a, struct MHD_Connection *c,
                                       struct req *rq, const struct api_call *x)
{
	(void)rq;
	(void)x;
	return api_audit_events_get(a, c);
}

static enum MHD_Result route_get_audit_page(struct api *a, struct MHD_Connection *c,
                                            struct req *rq, const struct api_call *x)
{
	(void)rq;
	(void)x;
	return get_audit(a, c);
}

/* GET /token: the name and role of the token the request came with, so
 * that a client (paddock --server URL mcp) offers what its role allows
 * without trying a route to see it refused.  Without tokens configured,
 * a loopback API's caller is "api" with the role admin. */
static enum MHD_Result route_get_token(struct api *a, struct MHD_Connection *c,
                                       struct req *rq, const struct api_call *x)
{
	(void)a, (void)x;
	return send_json(c, 200, json_pack("{s:s, s:s}", "name", rq->who, "role",
	                                   access_name(rq->role)));
}

/* GET /metrics, on the API (role read) and on [api] metrics-listen: the
 * exposition is metrics.h's. */
static enum MHD_Result get_metrics(struct api *a, struct MHD_Connection *c)
{
	struct err e = {{0}};
	struct store *st = api_open_store(a, &e);
	char *text = st ? metrics_text(st, a->cfg, &e) : NULL;
	store_close(st);
	if (!text)
		return api_send_err(c, &e, NULL);
	return send_buf(c, 200, METRICS_CONTENT_TYPE, text, strlen(text));
}

static enum MHD_Result route_get_metrics(struct api *a, struct MHD_Connection *c,
                                         struct req *rq, const struct api_call *x)
{
	(void)rq;
	(void)x;
	return get_metrics(a, c);
}

static enum MHD_Result route_decide(struct api *a, struct MHD_Connection *c,
                                    struct req *rq, const struct api_call *x)
{
	/* The repo's reviewers and four-eyes (the role was route_allowed's). */
	if (strcmp(x->action, "cancel") != 0) {
		struct err e = {{0}};
		struct gate_ctx g = gate_ctx_of(a->cfg, a->data_dir, x->st, x->actor);
		if (gate_may_decide(&g, x->t, x->action, &e) < 0)
			return api_send_err(c, &e, task_status_name(x->t->status));
	}
	return decide(a, c, rq, x->st, x->t, x->action, x->actor);
}

/* POST /tasks/ID/pull-request: the pull request that failed to open,
 * tried again now (gate_pr_retry); 200 with the task, 502 when GitHub
 * failed again (the failure is on the task), 409 when there is none to
 * open. */
static enum MHD_Result route_pull_request(struct api *a, struct MHD_Connection *c,
                                          struct req *rq, const struct api_call *x)
{
	/* No fields: an empty body, or {}. */
	if (rq->body.len) {
		const char *why;
		json_t *j = parse_body(rq, &why);
		if (!j)
			return api_send_error(c, 400, "bad_json", NULL, "%s", why);
		size_t n = json_object_size(j);
		json_decref(j);
		if (n)
			return api_send_error(c, 400, "bad_field", NULL, "POST /tasks/ID/pull-request "
			                      "takes no fields; send {} or nothing");
	}
	struct err e = {{0}};
	struct buf out = {0};
	struct gate_ctx g = gate_ctx_of(a->cfg, a->data_dir, x->st, x->actor);
	int r = gate_pr_retry(&g, x->t->id, &out, &e);
	buf_free(&out);
	const char *state = task_status_name(x->t->status);
	if (r < 0 && e.kind == ERR_REMOTE)
		return api_send_error(c, 502, "pull_request_failed", state, "%s", e.msg);
	if (r < 0)
		return api_send_err(c, &e, state);
	struct task_row after;
	if (store_task_get(x->st, x->t->id, &after, &e) < 0)
		return api_send_err(c, &e, NULL);
	enum MHD_Result rc = send_json(c, 200, taskjson_task(&after, a->cfg));
	task_row_free(&after);
	return rc;
}

static enum MHD_Result route_follow_up(struct api *a, struct MHD_Connection *c,
                                       struct req *rq, const struct api_call *x)
{
	return follow_up(a, c, rq, x->st, x->t, x->actor);
}

/* ---- the review draft and override ---- */

/* GET /tasks/ID/draft: the task's review draft, oldest first. */
static enum MHD_Result route_get_draft(struct api *a, struct MHD_Connection *c,
                                       struct req *rq, const struct api_call *x)
{
	(void)a;
	(void)rq;
	struct review_comment *rc = NULL;
	size_t n = 0;
	struct err e = {{0}};
	if (store_draft_list(x->st, x->t->id, &rc, &n, &e) < 0)
		return api_send_err(c, &e, NULL);
	json_t *j = taskjson_draft(x->t->id, rc, n);
	store_draft_free(rc, n);
	return send_json(c, 200, j);
}

/* POST /tasks/ID/draft {"path", "line", "old", "text", "comment"}: a
 * comment added to the draft of a task at review; 201 with it. */
static enum MHD_Result route_post_draft(struct api *a, struct MHD_Connection *c,
                                        struct req *rq, const struct api_call *x)
{
	(void)a;
	const char *why;
	json_t *j = parse_body(rq, &why);
	if (!j)
		return api_send_error(c, 400, "bad_json", NULL, "%s", why);
	json_t *jp = json_object_get(j, "path"), *jl = json_object_get(j, "line");
	json_t *jo = json_object_get(j, "old"), *jt = json_object_get(j, "text");
	json_t *jc = json_object_get(j, "comment");
	const char *path = json_string_value(jp), *com = json_string_value(jc);
	const char *text = json_string_value(jt);
	enum MHD_Result rc;
	struct err e = {{0}};
	if (!path || !*path || strlen(path) > 4096 || !json_is_integer(jl) ||
	    json_integer_value(jl) < 1 || json_integer_value(jl) > (1 << 30) ||
	    (jo && !json_is_boolean(jo)) || (jt && !json_is_null(jt) && !text) ||
	    (text && strlen(text) > 65536)) {
		rc = api_send_error(c, 400, "bad_field", NULL, "fields: \"path\" (the file, a string), "
		                "\"line\" (its line number, from 1), \"old\" (true for a line of the "
		                "old file), \"text\" (the line, at most 64 KiB), \"comment\"");
	} else if (!com || strspn(com, " \t\r\n") == strlen(com) || strlen(com) >= TASK_TEXT_MAX) {
		rc = api_send_error(c, 400, "bad_field", NULL, "\"comment\" is needed: say what the "
		                "agent should change on that line (under 128 KiB)");
	} else if (x->t->status != TASK_REVIEW) {
		rc = api_send_error(c, 409, "wrong_state", task_status_name(x->t->status),
		                "task %s is %s; a review draft is written at review", x->t->id,
		                task_status_name(x->t->status));
	} else {
		struct review_comment rcm = { .path = (char *)path, .line = (long)json_integer_value(jl),
		                              .old = json_is_true(jo), .text = (char *)(text ? text : ""),
		                              .comment = (char *)com };
		struct review_comment *all = NULL;
		size_t n = 0;
		if (store_draft_add(x->st, x->t->id, &rcm, &e) < 0 ||
		    store_draft_list(x->st, x->t->id, &all, &n, &e) < 0 || n == 0)
			rc = api_send_err(c, &e, NULL);
		else
			rc = send_json(c, 201, taskjson_draft_comment(&all[n - 1]));
		store_draft_free(all, n);
	}
	json_decref(j);
	return rc;
}

/* DELETE /tasks/ID/draft?upto=N: the draft's comments up to N (all
 * without upto) discarded; 200 with how many. */
static enum MHD_Result route_delete_draft(struct api *a, struct MHD_Connection *c,
                                          struct req *rq, const struct api_call *x)
{
	(void)a;
	(void)rq;
	const char *up = api_query(c, "upto");
	long upto = LONG_MAX;
	if (up && parse_uint(up, LONG_MAX, &upto) < 0)
		return api_send_error(c, 400, "bad_field", NULL, "upto must be a whole number (the n "
		                  "of the last comment to discard)");
	struct err e = {{0}};
	int n = store_draft_discard(x->st, x->t->id, upto, &e);
	if (n < 0)
		return api_send_err(c, &e, NULL);
	return send_json(c, 200, json_pack("{s:s,s:i}", "id", x->t->id, "discarded", n));
}

/* POST /tasks/ID/override {"finding", "notes"}: a blocking finding of the
 * current round overridden (gate_override), as paddock override does. */
static enum MHD_Result route_override(struct api *a, struct MHD_Connection *c,
                                      struct req *rq, const struct api_call *x)
{
	const char *why;
	json_t *j = parse_body(rq, &why);
	if (!j)
		return api_send_error(c, 400, "bad_json", NULL, "%s", why);
	json_t *jf = json_object_get(j, "finding"), *jn = json_object_get(j, "notes");
	const char *finding = json_string_value(jf), *notes = json_string_value(jn);
	enum MHD_Result rc;
	struct err e = {{0}};
	struct gate_ctx g = gate_ctx_of(a->cfg, a->data_dir, x->st, x->actor);
	const char *state = task_status_name(x->t->status);
	if (!finding || !*finding || (jn && !json_is_null(jn) && !notes))
		rc = api_send_error(c, 400, "bad_field", NULL, "fields: \"finding\" (its name, as "
		                "the task's gate lists it), \"notes\" (why it is fine, a string)");
	else if (notes && strspn(notes, " \t\r\n") == strlen(notes))
		rc = api_send_error(c, 400, "bad_field", NULL, "\"notes\" are empty; say why the "
		                "finding is fine, or leave them out");
	else if (gate_may_decide(&g, x->t, "override", &e) < 0 ||
	         gate_override(&g, x->t->id, finding, notes, &e) < 0)
		rc = api_send_err(c, &e, state);
	else
		rc = send_json(c, 200, json_pack("{s:s,s:s,s:s}", "id", x->t->id, "finding", finding,
		                                 "status", state));
	json_decref(j);
	return rc;
}

/* Every route the server answers, once: dispatch, the 405s' Allow,
 * `paddock serve --routes` (checked against doc/paddock-api.json) and the
 * role check (route_allowed) read it.  A GET route answers HEAD too.
 * {id} is a task's or a group's id, {name} a recipe's.  role: the least a
 * token needs (access.h); own: a submit token may only on the tasks it
 * queued (review and admin on any).  The webhook's signature stands for a
 * token: it needs none. */
static const struct api_route {
	const char *method;
	const char *pattern;
	api_route_fn *handler;
	enum access role;
	int own;
} api_route_table[] = {
	{ "POST", "/tasks", route_post_task, ACCESS_SUBMIT, 0 },
	{ "GET", "/tasks", route_get_tasks, ACCESS_READ, 0 },
	{ "GET", "/tasks/{id}", route_get_task, ACCESS_READ, 0 },
	{ "GET", "/tasks/{id}/diff", route_get_diff, ACCESS_READ, 0 },
	{ "GET", "/tasks/{id}/log", route_get_log, ACCESS_READ, 0 },
	{ "GET", "/tasks/{id}/events", route_get_events, ACCESS_READ, 0 },
	{ "POST", "/tasks/{id}/approve", route_decide, ACCESS_REVIEW, 0 },
	{ "POST", "/tasks/{id}/request-changes", route_decide, ACCESS_REVIEW, 0 },
	{ "POST", "/tasks/{id}/push", route_decide, ACCESS_REVIEW, 0 },
	{ "POST", "/tasks/{id}/reject", route_decide, ACCESS_REVIEW, 0 },
	{ "POST", "/tasks/{id}/cancel", route_decide, ACCESS_SUBMIT, 1 },
	{ "POST", "/tasks/{id}/follow-up", route_follow_up, ACCESS_SUBMIT, 0 },
	{ "POST", "/tasks/{id}/confirm", route_decide, ACCESS_REVIEW, 0 },
	{ "POST", "/tasks/{id}/pull-request", route_pull_request, ACCESS_REVIEW, 0 },
	{ "POST", "/tasks/{id}/override", route_override, ACCESS_REVIEW, 0 },
	{ "GET", "/tasks/{id}/draft", route_get_draft, ACCESS_REVIEW, 0 },
	{ "POST", "/tasks/{id}/draft", route_post_draft, ACCESS_REVIEW, 0 },
	{ "DELETE", "/tasks/{id}/draft", route_delete_draft, ACCESS_REVIEW, 0 },
	{ "GET", "/recipes", route_get_recipes, ACCESS_READ, 0 },
	{ "GET", "/recipes/{name}", route_get_recipe, ACCESS_READ, 0 },
	{ "GET", "/groups/{id}", route_get_group, ACCESS_READ, 0 },
	{ "POST", "/groups/{id}/pick", route_post_pick, ACCESS_REVIEW, 0 },
	{ "GET", "/events", route_get_audit, ACCESS_ADMIN, 0 },
	{ "GET", "/audit", route_get_audit_page, ACCESS_ADMIN, 0 },
	{ "GET", "/metrics", route_get_metrics, ACCESS_READ, 0 },
	{ "GET", "/token", route_get_token, ACCESS_READ, 0 },
	{ "POST", "/github/webhook", route_post_github, ACCESS_NONE, 0 },
};
#define API_NROUTES (sizeof api_route_table / sizeof *api_route_table)

static const char *api_route_names[API_NROUTES + 1];
static char api_route_text[API_NROUTES][64];
static pthread_once_t api_route_once = PTHREAD_ONCE_INIT;

static void api_routes_make(void)
{
	for (size_t i = 0; i < API_NROUTES; i++) {
		snprintf(api_route_text[i], sizeof api_route_text[i], "%s %s",
		         api_route_table[i].method, api_route_table[i].pattern);
		api_route_names[i] = api_route_text[i];
	}
}

const char *const *api_routes(void)
{
	pthread_once(&api_route_once, api_routes_make);
	return api_route_names;
}

/* The route for method on pattern, or NULL with *allow saying which
 * methods pattern takes (a 405's Allow), NULL when no route has it. */
static const struct api_route *api_route_find(const char *method, const char *pattern,
                                              const char **allow)
{
	int is_get = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
	int gets = 0, posts = 0, deletes = 0;
	for (size_t i = 0; i < API_NROUTES; i++) {
		const struct api_route *r = &api_route_table[i];
		if (strcmp(r->pattern, pattern) != 0)
			continue;
		if (strcmp(r->method, is_get ? "GET" : method) == 0)
			return r;
		gets |= !strcmp(r->method, "GET");
		posts |= !strcmp(r->method, "POST");
		deletes |= !strcmp(r->method, "DELETE");
	}
	*allow = gets && posts && deletes ? "GET, HEAD, POST, DELETE"
	         : gets && posts ? "GET, HEAD, POST" : gets ? "GET, HEAD" : posts ? "POST" : NULL;
	return NULL;
}

/* The answer when api_route_find found none: 404, or 405 with allow. */
static enum MHD_Result api_route_refuse(struct MHD_Connection *c, struct req *rq,
                                        const char *url, const char *method,
                                        const char *pattern, const char *allow)
{
	if (!allow)
		return api_send_error(c, 404, "no_route", NULL, "no such route: %s %s", method, url);
	rq->allow = allow;
	if (strcmp(allow, "GET, HEAD, POST, DELETE") == 0)
		return api_send_error(c, 405, "method", NULL, "%s takes GET, POST and DELETE", pattern);
	if (strcmp(allow, "GET, HEAD, POST") == 0)
		return api_send_error(c, 405, "method", NULL, "%s takes GET and POST", pattern);
	return api_send_error(c, 405, "method", NULL, "%s takes %s", url,
	                      strcmp(allow, "POST") == 0 ? "POST" : "GET");
}

/* Whether rq's token may take route r (on task t, or NULL): 1, else 0
 * with the 403 queued in *rc, which names the role needed and the
 * token's.  A refusal about a task is in its history (gate_refusal), as
 * the decisions are.  The code is read_only for a token of role read, as
 * it was before roles, else forbidden. */
static int route_allowed(struct api *a, struct MHD_Connection *c, struct req *rq,
                         const struct api_route *r, const char *method, const char *pattern,
                         struct store *st, const struct task_row *t, enum MHD_Result *rc)
{
	(void)a;
	enum access needs = r->role;
	int own = t && t->queued_by && !strcmp(t->queued_by, rq->who);
	if (r->own && !own && needs < ACCESS_REVIEW)
		needs = ACCESS_REVIEW;
	if (access_allows(rq->role, needs))
		return 1;
	char *msg = r->own && access_allows(rq->role, r->role)
	            ? xasprintf("token '%s' has the role %s: it may %s only the tasks it queued; "
	                        "another's needs the role %s", rq->who, access_name(rq->role),
	                        strrchr(pattern, '/') + 1, access_name(needs))
	            : xasprintf("token '%s' has the role %s; %s %s needs the role %s", rq->who,
	                        access_name(rq->role), method, pattern, access_name(needs));
	if (t && st) {
		struct err e = {{0}};
		const char *action = strrchr(pattern, '/') + 1;
		if (gate_refusal(st, t->id, rq->who, action, msg, &e) < 0)
			logger_event(cur_api ? cur_api->log : NULL, LOGGER_ERROR, t->id, NULL,
			             "api.error", "paddock: api: %s", e.msg);
	}
	json_t *j = json_pack("{s:s,s:s,s:s,s:s}", "error", msg, "code",
	                      rq->role == ACCESS_READ ? "read_only" : "forbidden",
	                      "role", access_name(rq->role), "needs", access_name(needs));
	free(msg);
	*rc = send_json(c, 403, j);
	return 0;
}

/* /github/...: its one route, before the token is asked for (the
 * delivery's signature stands for it). */
static enum MHD_Result route_github(struct api *a, struct MHD_Connection *c, const char *url,
                                    const char *method, struct req *rq)
{
	const char *allow;
	const struct api_route *r = api_route_find(method, url, &allow);
	if (!r)
		return api_route_refuse(c, rq, url, method, url, allow);
	struct api_call x = { .url = url, .method = method, .actor = rq->who, .action = "" };
	return r->handler(a, c, rq, &x);
}

/* /recipes and /recipes/NAME ("/recipes/" is the first). */
static enum MHD_Result route_recipes(struct api *a, struct MHD_Connection *c, const char *url,
                                     const char *method, struct req *rq)
{
	const char *pattern = !url[8] || !url[9] ? "/recipes" : "/recipes/{name}";
	const char *allow;
	const struct api_route *r = api_route_find(method, pattern, &allow);
	if (!r)
		return api_route_refuse(c, rq, url, method, pattern, allow);
	enum MHD_Result rc;
	if (!route_allowed(a, c, rq, r, method, pattern, NULL, NULL, &rc))
		return rc;
	struct api_call x = { .url = url, .method = method, .actor = rq->who, .action = "",
	                      .name = url[8] ? url + 9 : "" };
	return r->handler(a, c, rq, &x);
}

/* A route of no task, group or recipe (/events, /audit): url is its pattern. */
static enum MHD_Result route_plain(struct api *a, struct MHD_Connection *c, const char *url,
                                   const char *method, struct req *rq)
{
	const char *allow;
	const struct api_route *r = api_route_find(method, url, &allow);
	if (!r)
		return api_route_refuse(c, rq, url, method, url, allow);
	enum MHD_Result rc;
	if (!route_allowed(a, c, rq, r, method, url, NULL, NULL, &rc))
		return rc;
	struct api_call x = { .url = url, .method = method, .actor = rq->who, .action = "" };
	return r->handler(a, c, rq, &x);
}

/* /groups/ID and /groups/ID/pick; rest is what follows "/groups/". */
static enum MHD_Result route_groups(struct api *a, struct MHD_Connection *c, const char *url,
                                    const char *rest, const char *method, struct req *rq,
                                    const char *actor)
{
	char id[64] = "";
	const char *slash = strchr(rest, '/');
	size_t idlen = slash ? (size_t)(slash - rest) : strlen(rest);
	int picking = slash && strcmp(slash, "/pick") == 0;
	if (!idlen || idlen >= sizeof id || (slash && !picking))
		return api_send_error(c, 404, "no_route", NULL, "no such route: %s %s", method, url);
	memcpy(id, rest, idlen);
	const char *pattern = picking ? "/groups/{id}/pick" : "/groups/{id}";
	const char *allow;
	const struct api_route *r = api_route_find(method, pattern, &allow);
	if (!r)
		return api_route_refuse(c, rq, url, method, pattern, allow);
	enum MHD_Result rc;
	if (!route_allowed(a, c, rq, r, method, pattern, NULL, NULL, &rc))
		return rc;
	struct api_call x = { .url = url, .method = method, .actor = actor, .action = "",
	                      .name = id };
	return r->handler(a, c, rq, &x);
}

/* ---- what a request must be before its body is read ---- */

/* Whether the address (AF_INET or AF_INET6, in network order) is one of
 * this machine's interfaces'.  A page cannot rebind an address literal, so
 * a Host (or an Origin) that names one is this machine as its clients
 * reach it. */
static int addr_is_local(int family, const void *addr)
{
	struct ifaddrs *all = NULL;
	if (getifaddrs(&all) < 0)
		return 0;
	int hit = 0;
	for (struct ifaddrs *i = all; i && !hit; i = i->ifa_next) {
		if (!i->ifa_addr || i->ifa_addr->sa_family != family)
			continue;
		if (family == AF_INET)
			hit = !memcmp(&((struct sockaddr_in *)(void *)i->ifa_addr)->sin_addr, addr,
			              sizeof(struct in_addr));
		else
			hit = !memcmp(&((struct sockaddr_in6 *)(void *)i->ifa_addr)->sin6_addr, addr,
			              sizeof(struct in6_addr));
	}
	freeifaddrs(all);
	return hit;
}

/* Whether name (a Host's or an Origin's host part, without a port) is
 * one the API answers to: a loopback name or address, the address it
 * listens on, an address of this machine's interfaces, or an
 * api.server-name.  *local: it is not a server-name. */
static int host_allowed(const struct api *a, const char *name, size_t n, int *local)
{
	char h[256];
	*local = 1;
	if (!n || n >= sizeof h)
		return 0;
	memcpy(h, name, n);
	h[n] = '\0';
	struct in_addr v4;
	struct in6_addr v6;
	if (strcasecmp(h, "localhost") == 0)
		return 1;
	if (inet_pton(AF_INET, h, &v4) == 1 &&
	    ((ntohl(v4.s_addr) >> 24) == 127 || addr_is_local(AF_INET, &v4)))
		return 1;
	if (n > 2 && h[0] == '[' && h[n - 1] == ']') {
		h[n - 1] = '\0';
		int lo = inet_pton(AF_INET6, h + 1, &v6) == 1 &&
		         (IN6_IS_ADDR_LOOPBACK(&v6) || addr_is_local(AF_INET6, &v6));
		h[n - 1] = ']';
		if (lo)
			return 1;
	}
	if (*a->listen_host && strcasecmp(h, a->listen_host) == 0)
		return 1;
	*local = 0;
	for (size_t i = 0; i < a->cfg->napi_server_names; i++)
		if (strcasecmp(h, a->cfg->api_server_names[i]) == 0)
			return 1;
	return 0;
}

/* Splits "host[:port]" ("[v6]:port" too): the host's length, and the port
 * (0: none; -1: not a port). */
static size_t host_port(const char *v, long *port)
{
	size_t hl;
	if (*v == '[') {
		const char *end = strchr(v, ']');
		hl = end ? (size_t)(end - v) + 1 : strlen(v);
	} else {
		hl = strcspn(v, ":");
	}
	*port = 0;
	if (v[hl] == ':') {
		char *end;
		errno = 0;
		*port = strtol(v + hl + 1, &end, 10);
		if (*end || !v[hl + 1] || errno || *port <= 0 || *port > 65535)
			*port = -1;
	} else if (v[hl]) {
		*port = -1;
	}
	return hl;
}

/* A web page's request carries its Origin: only the API's own is taken,
 * http://NAME:PORT with a name of host_allowed and the port listened on,
 * or http(s)://SERVER-NAME[:PORT] (a proxy in front may change both). */
static int origin_allowed(const struct api *a, const char *o)
{
	int https = strncasecmp(o, "https://", 8) == 0;
	if (!https && strncasecmp(o, "http://", 7) != 0)
		return 0;
	o += https ? 8 : 7;
	long port;
	size_t hl = host_port(o, &port);
	int local;
	if (port < 0 || !host_allowed(a, o, hl, &local))
		return 0;
	if (!local)
		return 1;
	return !https && (port ? port : 80) == a->port;
}

/* Each Content-Length header, for duplicate_length. */
static enum MHD_Result count_length(void *cls, enum MHD_ValueKind kind, const char *key,
                                    const char *value)
{
	(void)kind;
	const char **first = cls;
	if (strcasecmp(key, "Content-Length") != 0)
		return MHD_YES;
	if (!first[0])
		first[0] = value;
	else if (strcmp(first[0], value) != 0)
		first[1] = value;
	return MHD_YES;
}

/* The Host headers, for screen: RFC 9112 has a request with more than
 * one refused (a proxy in front may have checked another than the first,
 * which is the one MHD's lookup gives). */
static enum MHD_Result count_host(void *cls, enum MHD_ValueKind kind, const char *key,
                                  const char *value)
{
	(void)kind;
	(void)value;
	if (strcasecmp(key, "Host") == 0)
		++*(unsigned *)cls;
	return MHD_YES;
}

/* Whether the body's type is JSON: application/json, with charset=utf-8
 * at most. */
static int is_json_type(const char *ct)
{
	while (*ct == ' ' || *ct == '\t')
		ct++;
	if (strncasecmp(ct, "application/json", 16) != 0)
		return 0;
	const char *p = ct + 16;
	while (*p == ' ' || *p == '\t')
		p++;
	if (!*p)
		return 1;
	if (*p++ != ';')
		return 0;
	while (*p == ' ' || *p == '\t')
		p++;
	return strncasecmp(p, "charset=", 8) == 0 &&
	       (strcasecmp(p + 8, "utf-8") == 0 || strcasecmp(p + 8, "\"utf-8\"") == 0);
}

/* The answer to a request without a token (or with one that is not
 * configured). */
static enum MHD_Result send_unauthorized(struct MHD_Connection *c)
{
	char *body = xstrdup("{\"error\": \"a bearer token is needed (Authorization: "
	                     "Bearer TOKEN)\", \"code\": \"unauthorized\"}\n");
	struct MHD_Response *r = MHD_create_response_from_buffer(strlen(body), body,
	                                                         MHD_RESPMEM_MUST_FREE);
	MHD_add_response_header(r, "Content-Type", "application/json");
	MHD_add_response_header(r, "WWW-Authenticate", "Bearer realm=\"paddock\"");
	return api_answer(c, 401, r);
}

/* The route pattern of url (its row's, as route() finds it) in pattern,
 * and a task's id in id ("" for none); 0 when url is no route's. */
static int url_pattern(const char *url, char pattern[64], char id[64])
{
	*id = '\0';
	const char *rest, *slash;
	if (strncmp(url, "/tasks", 6) == 0 && (!url[6] || url[6] == '/')) {
		rest = url[6] ? url + 7 : "";
		slash = strchr(rest, '/');
		size_t n = slash ? (size_t)(slash - rest) : strlen(rest);
		if (n >= 64 || (slash && (strlen(slash + 1) >= 32 || strchr(slash + 1, '/'))))
			return 0;
		memcpy(id, rest, n);
		id[n] = '\0';
		snprintf(pattern, 64, "%s%s%s", *id ? "/tasks/{id}" : "/tasks", *id && slash ? "/" : "",
		         *id && slash ? slash + 1 : "");
		return 1;
	}
	if (strncmp(url, "/recipes", 8) == 0 && (!url[8] || url[8] == '/')) {
		snprintf(pattern, 64, "%s", !url[8] || !url[9] ? "/recipes" : "/recipes/{name}");
		return 1;
	}
	if (strncmp(url, "/groups/", 8) == 0) {
		slash = strchr(url + 8, '/');
		snprintf(pattern, 64, "%s", slash && !strcmp(slash, "/pick") ? "/groups/{id}/pick"
		                                                        : "/groups/{id}");
		return 1;
	}
	return 0;
}

/* A request whose token's role is short of its route's, refused from its
 * headers (1, the 403 queued in *rc; the refusal in the task's history as
 * route_allowed puts it), or 0 to go on. */
static int role_screen(struct api *a, struct MHD_Connection *c, const char *url,
                       const char *method, struct req *rq, enum MHD_Result *rc)
{
	char pattern[64], id[64];
	const char *allow;
	const struct api_route *r;
	if (!url_pattern(url, pattern, id) || !(r = api_route_find(method, pattern, &allow)) ||
	    access_allows(rq->role, r->role))
		return 0;
	struct err e = {{0}};
	struct store *st = *id ? api_open_store(a, &e) : NULL;
	struct task_row t;
	int have = st && store_task_get(st, id, &t, &e) == 0;
	route_allowed(a, c, rq, r, method, pattern, st, have ? &t : NULL, rc);
	if (have)
		task_row_free(&t);
	store_close(st);
	return 1;
}

/* What is decided from the headers alone, before a byte of the body is
 * read (an answer now closes the connection with the body unread): the
 * Host (DNS rebinding), the Origin (a web page), two Content-Lengths, the
 * token, and a body's type (a page's form or text/plain POST).  MHD_YES
 * with nothing queued: read the body. */
static enum MHD_Result screen(struct api *a, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version, struct req *rq)
{
	const char *host = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Host");
	const char *origin = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Origin");
	enum MHD_Result rc;
	int local;
	long port;
	if (!host && strcmp(version, MHD_HTTP_VERSION_1_0) != 0)
		return api_send_error(c, 400, "bad_request", NULL, "an HTTP/1.1 request needs a Host "
		                  "header");
	unsigned hosts = 0;
	MHD_get_connection_values(c, MHD_HEADER_KIND, count_host, &hosts);
	if (hosts > 1)
		return api_send_error(c, 400, "bad_request", NULL, "%u Host headers; send one", hosts);
	size_t hl = host ? host_port(host, &port) : 0;
	if (host && (port < 0 || !host_allowed(a, host, hl, &local)))
		return api_send_error(c, 421, "misdirected", NULL, "this API does not answer to the "
		                  "host '%.100s'; use localhost or 127.0.0.1, or add the name to "
		                  "[api] server-name", host);
	if (origin && !origin_allowed(a, origin))
		return api_send_error(c, 403, "origin", NULL, "a request from the web page '%.100s' "
		                  "is refused: the API takes no request from other origins", origin);
	const char *lengths[2] = { NULL, NULL };
	MHD_get_connection_values(c, MHD_HEADER_KIND, count_length, lengths);
	if (lengths[1])
		return api_send_error(c, 400, "bad_request", NULL, "two different Content-Length "
		                  "headers (%.20s, %.20s); send one", lengths[0], lengths[1]);
	snprintf(rq->who, sizeof rq->who, "api");
	rq->role = ACCESS_ADMIN;
	int github = strncmp(url, "/github/", 8) == 0;
	/* The role is checked with the route (route_allowed). */
	if (!github && api_has_tokens(a) && !auth(a, c, rq->who, sizeof rq->who, &rq->role))
		return send_unauthorized(c);
	/* A role that falls short is refused from the headers too, its body
	 * unread (route_allowed asks again with the body, for the own). */
	if (!github && rq->role < ACCESS_ADMIN && role_screen(a, c, url, method, rq, &rc))
		return rc;
	if (strcmp(method, "POST") == 0) {
		const char *ct = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type");
		const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
		const char *te = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
		                                             "Transfer-Encoding");
		int body = te || (cl && strspn(cl, "0") != strlen(cl));
		if (ct ? !is_json_type(ct) : body)
			return api_send_error(c, 415, "media_type", NULL, "the body is %.100s; send "
			                  "Content-Type: application/json", ct ? ct : "of no type");
	}
	/* An unsigned delivery is a stranger's: refused (and counted) on its
	 * headers, its body never read. */
	if (github && strcmp(method, "POST") == 0 && strcmp(url, "/github/webhook") == 0 &&
	    !MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Hub-Signature-256"))
		return route_github(a, c, url, method, rq);
	rq->accepted = 1;
	return MHD_YES;
}

static enum MHD_Result route(struct api *a, struct MHD_Connection *c, const char *url,
                             const char *method, struct req *rq)
{
	int is_post = strcmp(method, "POST") == 0;
	const char *actor = rq->who;
	if (strncmp(url, "/github/", 8) == 0)
		return route_github(a, c, url, method, rq);
	/* screen() let it in: its token (or none needed) holds. */
	conn_served(a, c);
	if (rq->too_big)
		return api_send_error(c, 413, "body_too_large", NULL, "the body is over %llu bytes "
		                  "(api.max-body)", (unsigned long long)a->cfg->api_max_body);
	if (strncmp(url, "/recipes", 8) == 0 && (!url[8] || url[8] == '/'))
		return route_recipes(a, c, url, method, rq);
	if (strncmp(url, "/groups/", 8) == 0)
		return route_groups(a, c, url, url + 8, method, rq, actor);
	if (strcmp(url, "/events") == 0 || strcmp(url, "/audit") == 0 ||
	    strcmp(url, "/metrics") == 0 || strcmp(url, "/token") == 0)
		return route_plain(a, c, url, method, rq);
	/* /tasks, /tasks/ID, /tasks/ID/ACTION */
	if (strncmp(url, "/tasks", 6) != 0 || (url[6] && url[6] != '/'))
		return api_send_error(c, 404, "no_route", NULL, "no such route: %s %s", method, url);
	const char *rest = url[6] ? url + 7 : "";
	char id[64] = "", action[32] = "";
	const char *slash = strchr(rest, '/');
	size_t idlen = slash ? (size_t)(slash - rest) : strlen(rest);
	if (idlen >= sizeof id || (slash && strlen(slash + 1) >= sizeof action) ||
	    (slash && strchr(slash + 1, '/')))
		return api_send_error(c, 404, "no_route", NULL, "no such route: %s %s", method, url);
	memcpy(id, rest, idlen);
	if (slash)
		strcpy(action, slash + 1);
	struct err e = {{0}};
	struct store *st = api_open_store(a, &e);
	if (!st)
		return api_send_err(c, &e, NULL);
	enum MHD_Result rc;
	char route_name[64];
	snprintf(route_name, sizeof route_name, "POST /tasks%s%s%s%s", *id ? "/" : "", id,
	         *action ? "/" : "", action);
	struct idem_key ik = { .actor = actor, .route = route_name };
	char pattern[64];
	/* "/tasks/" and "/tasks//ACTION" are /tasks, as they always were. */
	snprintf(pattern, sizeof pattern, "%s%s%s", *id ? "/tasks/{id}" : "/tasks",
	         *id && *action ? "/" : "", *id ? action : "");
	const char *allow;
	const struct api_route *r = api_route_find(method, pattern, &allow);
	struct api_call x = { .url = url, .method = method, .actor = actor, .st = st,
	                      .action = action };
	if (!*id) {
		if (r && !route_allowed(a, c, rq, r, method, pattern, NULL, NULL, &rc)) {
			store_close(st);
			return rc;
		}
		if (is_post && idem_start(c, rq, st, &ik, method, url, &rc)) {
			store_close(st);
			return rc;
		}
		rc = r ? r->handler(a, c, rq, &x) : api_route_refuse(c, rq, url, method, "/tasks",
		                                                     allow);
		idem_finish(rq, st, &ik);
		store_close(st);
		return rc;
	}
	if (!r) {
		store_close(st);
		return api_route_refuse(c, rq, url, method, pattern, allow);
	}
	struct task_row t;
	if (store_task_get(st, id, &t, &e) < 0) {
		store_close(st);
		/* A path with an id that no task can have names no task. */
		if (e.kind == ERR_INVALID)
			err_kind_mark(&e, ERR_NOT_FOUND);
		return api_send_err(c, &e, NULL);
	}
	if (!route_allowed(a, c, rq, r, method, pattern, st, &t, &rc) ||
	    (is_post && idem_start(c, rq, st, &ik, method, url, &rc))) {
		task_row_free(&t);
		store_close(st);
		return rc;
	}
	x.t = &t;
	rc = r->handler(a, c, rq, &x);
	idem_finish(rq, st, &ik);
	task_row_free(&t);
	store_close(st);
	return rc;
}

/* A request to [api] metrics-listen: GET /metrics without a token, after
 * the Host and Origin screen() asks of every request (a web page must not
 * read it by DNS rebinding); answered from its headers, a body unread. */
static enum MHD_Result metrics_request(struct api *a, struct MHD_Connection *c,
                                       const char *url, const char *method,
                                       const char *version, struct req *rq)
{
	const char *host = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Host");
	const char *origin = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Origin");
	unsigned hosts = 0;
	int local;
	long port;
	MHD_get_connection_values(c, MHD_HEADER_KIND, count_host, &hosts);
	if ((!host && strcmp(version, MHD_HTTP_VERSION_1_0) != 0) || hosts > 1)
		return api_send_error(c, 400, "bad_request", NULL, "send one Host header");
	size_t hl = host ? host_port(host, &port) : 0;
	if (host && (port < 0 || !host_allowed(a, host, hl, &local)))
		return api_send_error(c, 421, "misdirected", NULL, "this server does not answer to "
		                  "the host '%.100s'; use its address, or add the name to [api] "
		                  "server-name", host);
	if (origin && !origin_allowed(a, origin))
		return api_send_error(c, 403, "origin", NULL, "a request from the web page '%.100s' "
		                  "is refused", origin);
	if (strcmp(url, "/metrics") != 0)
		return api_send_error(c, 404, "no_route", NULL, "no such route: %s %s; this "
		                  "listener ([api] metrics-listen) answers GET /metrics alone",
		                  method, url);
	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
		rq->allow = "GET, HEAD";
		return api_send_error(c, 405, "method", NULL, "/metrics takes GET");
	}
	conn_served(a, c);
	return get_metrics(a, c);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version,
                                  const char *upload, size_t *upload_size, void **con_cls)
{
	struct api *a = cls;
	struct req *rq = *con_cls;
	cur_req = rq;
	cur_api = a;
	if (a->metrics_only) {
		if (rq) {
			/* Answered on its headers: a body is dropped unread. */
			*upload_size = 0;
			return MHD_YES;
		}
		rq = xcalloc(1, sizeof *rq);
		*con_cls = rq;
		cur_req = rq;
		return metrics_request(a, c, url, method, version, rq);
	}
	if (!rq) {
		rq = xcalloc(1, sizeof *rq);
		*con_cls = rq;
		cur_req = rq;
		conn_body(a, c, clock_mono());
		return screen(a, c, url, method, version, rq);
	}
	if (*upload_size) {
		if (!rq->too_big && rq->body.len + *upload_size <= a->cfg->api_max_body)
			buf_add(&rq->body, upload, *upload_size);
		else {
			rq->too_big = 1;
			buf_free(&rq->body);
		}
		*upload_size = 0;
		return MHD_YES;
	}
	conn_body(a, c, 0);
	return route(a, c, url, method, rq);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
	(void)toe;
	struct req *rq = *con_cls;
	conn_body(cls, c, 0);
	if (rq) {
		if (cur_req == rq)
			cur_req = NULL;
		buf_free(&rq->body);
		free(rq->answer);
		free(rq->location);
		free(rq);
		*con_cls = NULL;
	}
}

/* ---- connections ---- */

static int addr_loopback(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
	if (sa->sa_family == AF_INET6) {
		const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
		return IN6_IS_ADDR_LOOPBACK(a) || (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
	}
	return 0;
}

static int addr_same(const struct sockaddr *a, const struct sockaddr_storage *b)
{
	if (a->sa_family != b->ss_family)
		return 0;
	if (a->sa_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	return a->sa_family == AF_INET6 &&
	       !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
	               &((const struct sockaddr_in6 *)b)->sin6_addr, sizeof(struct in6_addr));
}

/* Whether a new connection from addr gets in: not over the per-address
 * limit (loopback aside: its clients are this host's), and when all
 * places are taken, the oldest connection that never had a request
 * accepted makes room (one still sending its first body, too: a client
 * that trickles it holds no place).  Clients whose requests were taken
 * keep theirs. */
static enum MHD_Result conn_accept(void *cls, const struct sockaddr *addr, socklen_t len)
{
	struct api *a = cls;
	(void)len;
	enum MHD_Result ok = MHD_YES;
	pthread_mutex_lock(&a->cmu);
	if (!addr_loopback(addr)) {
		size_t same = 0;
		for (struct api_conn *k = a->conns; k; k = k->next)
			same += addr_same(addr, &k->addr);
		if (same >= (size_t)a->cfg->api_max_conns_addr)
			ok = MHD_NO;
	}
	if (ok == MHD_YES && a->nconns >= (size_t)a->cfg->api_max_conns) {
		struct api_conn *k = a->conns;
		while (k && (k->served || k->fd < 0))
			k = k->next;
		if (k) {
			shutdown(k->fd, SHUT_RDWR);
			k->fd = -k->fd - 2;  /* shut already; closed on its way out */
		} else {
			ok = MHD_NO;
		}
	}
	pthread_mutex_unlock(&a->cmu);
	return ok;
}

static void conn_notify(void *cls, struct MHD_Connection *c, void **ctx,
                        enum MHD_ConnectionNotificationCode what)
{
	struct api *a = cls;
	if (what == MHD_CONNECTION_NOTIFY_STARTED) {
		struct api_conn *k = xcalloc(1, sizeof *k);
		const union MHD_ConnectionInfo *fi =
			MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
		const union MHD_ConnectionInfo *ai =
			MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
		k->fd = fi ? fcntl(fi->connect_fd, F_DUPFD_CLOEXEC, 3) : -1;
		k->started = clock_mono();
		if (ai && ai->client_addr) {
			const struct sockaddr *sa = ai->client_addr;
			memcpy(&k->addr, sa, sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
			                                               : sizeof(struct sockaddr_in));
			k->loopback = addr_loopback(sa);
		}
		pthread_mutex_lock(&a->cmu);
		k->prev = a->conns_tail;
		if (a->conns_tail)
			a->conns_tail->next = k;
		else
			a->conns = k;
		a->conns_tail = k;
		a->nconns++;
		pthread_cond_signal(&a->ccv);
		pthread_mutex_unlock(&a->cmu);
		*ctx = k;
		return;
	}
	struct api_conn *k = *ctx;
	if (!k)
		return;
	pthread_mutex_lock(&a->cmu);
	if (k->prev)
		k->prev->next = k->next;
	else
		a->conns = k->next;
	if (k->next)
		k->next->prev = k->prev;
	else
		a->conns_tail = k->prev;
	a->nconns--;
	pthread_mutex_unlock(&a->cmu);
	int fd = k->fd >= 0 ? k->fd : -k->fd - 2;
	if (fd >= 0)
		close(fd);
	free(k);
	*ctx = NULL;
}

/* The request's headers came at since (monotonic), and its body has
 * api.body-timeout from then; since 0: the whole request came. */
static void conn_body(struct api *a, struct MHD_Connection *c, double since)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	struct api_conn *k = ci ? ci->socket_context : NULL;
	if (!k)
		return;
	pthread_mutex_lock(&a->cmu);
	k->body_since = since;
	if (since > 0)
		pthread_cond_signal(&a->ccv);
	pthread_mutex_unlock(&a->cmu);
}

/* The connection had a whole request accepted (its token, or none needed;
 * a delivery's signature): from now on only the idle timeout applies to
 * it between requests, and it is not the one that makes room.  A
 * connection whose requests were all refused stays a stranger's. */
static void conn_served(struct api *a, struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	struct api_conn *k = ci ? ci->socket_context : NULL;
	if (!k || k->served)
		return;
	pthread_mutex_lock(&a->cmu);
	k->served = 1;
	pthread_mutex_unlock(&a->cmu);
}

/* Closes connections that had no request accepted within header-timeout
 * (a slow-loris client keeps its connection by sending a byte now and
 * then; the idle timeout alone would never close it), and those whose
 * request's body is not all there body-timeout after its headers.  Sleeps
 * while there is nothing to watch. */
static void *conn_reaper(void *arg)
{
	struct api *a = arg;
	pthread_mutex_lock(&a->cmu);
	while (!a->stopping) {
		double now = clock_mono(), next = -1;
		for (struct api_conn *k = a->conns; k; k = k->next) {
			if ((k->served && k->body_since <= 0) || k->fd < 0)
				continue;
			double due = k->body_since > 0 ? k->body_since + a->cfg->api_body_timeout
			                               : k->started + a->cfg->api_header_timeout;
			if (due <= now) {
				shutdown(k->fd, SHUT_RDWR);
				k->fd = -k->fd - 2;
			} else if (next < 0 || due < next) {
				next = due;
			}
		}
		if (next < 0) {
			pthread_cond_wait(&a->ccv, &a->cmu);
			continue;
		}
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		double wait = next - now + 0.01;
		ts.tv_sec += (time_t)wait;
		ts.tv_nsec += (long)((wait - (double)(time_t)wait) * 1e9);
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&a->ccv, &a->cmu, &ts);
	}
	pthread_mutex_unlock(&a->cmu);
	return NULL;
}

/* ---- start and stop ---- */

static int parse_listen(const char *listen, struct sockaddr_storage *ss, socklen_t *len,
                        int *loopback, struct err *e)
{
	char host[128];
	const char *colon = strrchr(listen, ':');
	if (!colon || (size_t)(colon - listen) >= sizeof host)
		return err_set(e, _("'%s' is not ADDRESS:PORT (for example 127.0.0.1:8700)"), listen);
	memcpy(host, listen, (size_t)(colon - listen));
	host[colon - listen] = '\0';
	char *end;
	long port = strtol(colon + 1, &end, 10);
	if (*end || port < 0 || port > 65535 || !colon[1])
		return err_set(e, _("'%s': the port must be a number from 0 to 65535"), listen);
	memset(ss, 0, sizeof *ss);
	size_t hl = strlen(host);
	if (hl >= 2 && host[0] == '[' && host[hl - 1] == ']') {
		host[hl - 1] = '\0';
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
		if (inet_pton(AF_INET6, host + 1, &s6->sin6_addr) != 1)
			return err_set(e, _("'%s' is not an IPv6 address"), host + 1);
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)port);
		*len = sizeof *s6;
		*loopback = IN6_IS_ADDR_LOOPBACK(&s6->sin6_addr);
		return 0;
	}
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
	if (strcmp(host, "localhost") == 0)
		strcpy(host, "127.0.0.1");
	if (inet_pton(AF_INET, host, &s4->sin_addr) != 1)
		return err_set(e, _("'%s' is not an IPv4 address (or [IPv6])"), host);
	s4->sin_family = AF_INET;
	s4->sin_port = htons((uint16_t)port);
	*len = sizeof *s4;
	*loopback = (ntohl(s4->sin_addr.s_addr) >> 24) == 127;
	return 0;
}

/* A bare port means 127.0.0.1:PORT. */
static int parse_listen_arg(const char *listen, struct sockaddr_storage *ss, socklen_t *len,
                            int *loopback, struct err *e)
{
	char full[40];
	if (*listen && strspn(listen, "0123456789") == strlen(listen)) {
		snprintf(full, sizeof full, "127.0.0.1:%.6s", listen);
		listen = full;
	}
	return parse_listen(listen, ss, len, loopback, e);
}

int api_listen_check(const char *listen, struct err *e)
{
	struct sockaddr_storage ss;
	socklen_t slen;
	int loopback;
	return parse_listen_arg(listen, &ss, &slen, &loopback, e);
}

int api_listen_try(const char *listen, struct err *e)
{
	struct sockaddr_storage ss;
	socklen_t slen;
	int loopback, one = 1;
	if (parse_listen_arg(listen, &ss, &slen, &loopback, e) < 0)
		return -1;
	int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
	    bind(fd, (struct sockaddr *)&ss, slen) < 0) {
		err_errno(e, _("cannot listen on %s"), listen);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

/* The address listened on as a Host header names it; "" for a wildcard
 * (its names are api.server-name's to give). */
static void listen_host(const struct sockaddr_storage *ss, char *out, size_t size)
{
	char t[INET6_ADDRSTRLEN] = "";
	*out = '\0';
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)ss;
		if (s4->sin_addr.s_addr != htonl(INADDR_ANY) &&
		    inet_ntop(AF_INET, &s4->sin_addr, t, sizeof t))
			snprintf(out, size, "%s", t);
	} else if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)ss;
		if (!IN6_IS_ADDR_UNSPECIFIED(&s6->sin6_addr) &&
		    inet_ntop(AF_INET6, &s6->sin6_addr, t, sizeof t))
			snprintf(out, size, "[%s]", t);
	}
}

int api_start(struct api **out, const struct api_opts *o, struct logger *log, struct err *e)
{
	*out = NULL;
	struct sockaddr_storage ss;
	socklen_t slen;
	int loopback = 0;
	const char *listen = o->listen;
	if (parse_listen_arg(listen, &ss, &slen, &loopback, e) < 0)
		return -1;
	struct api *a = xcalloc(1, sizeof *a);
	a->log = log;
	a->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	pthread_mutex_init(&a->cmu, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&a->ccv, &ca);
	pthread_condattr_destroy(&ca);
	a->cfg = o->cfg;
	a->data_dir = xstrdup(o->data_dir);
	a->db = paths_db(o->data_dir);
	pthread_mutex_init(&a->tmu, NULL);
	a->loopback = loopback;
	a->metrics_only = o->metrics_only;
	listen_host(&ss, a->listen_host, sizeof a->listen_host);
	if (!a->metrics_only && tokens_read(o->cfg, &a->tokens, &a->ntokens, e) < 0) {
		api_stop(a);
		return -1;
	}
	if (!loopback && !a->ntokens && !a->metrics_only) {
		err_set(e, _("%s is not a loopback address: configure a token ([token \"NAME\"] "
		             "value-env = VARIABLE) before listening there"), listen);
		api_stop(a);
		return -1;
	}
	/* gate.h opens pull requests with libcurl from these threads. */
	curl_global_init(CURL_GLOBAL_DEFAULT);
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION;
	if (ss.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	/* A thread and two descriptors per connection: the soft limit of open
	 * files (often 1024) would refuse connections long before
	 * max-connections. */
	fsx_nofile_raise(0);
	if (pthread_create(&a->reaper, NULL, conn_reaper, a) == 0)
		a->reaper_started = 1;
	/* libmicrohttpd's own limit is a little higher than ours, so that a
	 * new connection gets in while the one it pushed out closes. */
	a->d = MHD_start_daemon(flags, 0, conn_accept, a, on_request, a,
	                        MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
	                        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)60,
	                        MHD_OPTION_CONNECTION_LIMIT, (unsigned)(o->cfg->api_max_conns + 64),
	                        MHD_OPTION_NOTIFY_COMPLETED, on_completed, a,
	                        MHD_OPTION_NOTIFY_CONNECTION, conn_notify, a,
	                        MHD_OPTION_END);
	if (!a->d) {
		err_set(e, _("cannot listen on %s: %s"), listen, strerror(errno ? errno : EADDRINUSE));
		api_stop(a);
		return -1;
	}
	const union MHD_DaemonInfo *info = MHD_get_daemon_info(a->d, MHD_DAEMON_INFO_BIND_PORT);
	a->port = info ? info->port : 0;
	/* The tokens may have changed while no serve ran. */
	if (!a->metrics_only)
		tokens_audit_roles(a, a->tokens, a->ntokens, log);
	if (a->metrics_only)
		logger_event(log, LOGGER_INFO, NULL, NULL, "api.metrics",
		             _("paddock: GET /metrics answers without a token on %s (port %d)\n"),
		             listen, a->port);
	else if (loopback)
		logger_event(log, LOGGER_INFO, NULL, NULL, "api.listening",
		             _("paddock: the HTTP API listens on %s (port %d)%s\n"), listen,
		             a->port, a->ntokens ? _("; every request needs a token") : "");
	else
		logger_event(log, LOGGER_INFO, NULL, NULL, "api.listening",
		             _("paddock: the HTTP API listens on %s (port %d), which is not "
		               "loopback: every request needs one of the %zu configured tokens\n"),
		             listen, a->port, a->ntokens);
	*out = a;
	return 0;
}

int api_port(const struct api *a)
{
	return a->port;
}

void api_stop(struct api *a)
{
	if (!a)
		return;
	a->stopping = 1;
	/* Followers waiting for news wake and end. */
	uint64_t one = 1;
	if (a->stop_fd >= 0 && write(a->stop_fd, &one, sizeof one) < 0)
		(void)0;
	if (a->d)
		MHD_stop_daemon(a->d);
	if (a->reaper_started) {
		pthread_mutex_lock(&a->cmu);
		pthread_cond_signal(&a->ccv);
		pthread_mutex_unlock(&a->cmu);
		pthread_join(a->reaper, NULL);
	}
	pthread_cond_destroy(&a->ccv);
	pthread_mutex_destroy(&a->cmu);
	if (a->stop_fd >= 0)
		close(a->stop_fd);
	tokens_free(a->tokens, a->ntokens);
	pthread_mutex_destroy(&a->tmu);
	free(a->data_dir);
	free(a->db);
	free(a);
}
