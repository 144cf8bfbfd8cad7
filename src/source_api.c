/* source_api: the dashboard's source on a paddock serve's API (source.h,
 * client.h), for `paddock --server URL`.
 *
 * A worker thread reads the task list (GET /tasks, every page) once a
 * second and keeps it as a snapshot: the list's queries, counts and
 * orders are answered from it in memory, and a list that changed is a new
 * data version.  The same thread copies what is new of each followed log
 * (GET /tasks/ID/log?offset=) into a private file that grows, so the log
 * view reads a local file as it always did.  A task's details (its gate,
 * rounds, decisions, egress: GET /tasks/ID) and its review draft are read
 * when a view asks, kept for the data version they were read at.  The
 * remote dashboard hosts no scheduler: decisions are the API's POSTs. */
#include "autoconfig.h"
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include "client.h"
#include "clock.h"
#include "fsx.h"
#include "ghsync.h"
#include "i18n.h"
#include "source.h"

#define POLL_SECONDS 1.0

/* A log followed into a local file. */
struct api_log {
	char id[TASK_ID_LEN + 1];
	char *path;
	long long size;            /* what the file holds */
};

struct source_api {
	struct source s;
	struct client *c;          /* the caller's thread's */
	char *url, *token;
	char *dir;                 /* private: the logs' copies */
	pthread_t th;
	int started;
	pthread_mutex_t mu;        /* what follows, between the two threads */
	pthread_cond_t cv;
	int stop;
	uint64_t version;
	/* The snapshot: every task, in seq order (the order queued). */
	json_t *tasks;             /* array of task objects */
	long long *seqs;
	size_t n;
	/* Ids seen, with the seq each got (sorted by id). */
	struct seen { char id[TASK_ID_LEN + 1]; long long seq; } *seen;
	size_t nseen;
	long long next_seq;
	char *last;                /* the list's text last read */
	struct api_log *logs;
	size_t nlogs;
	/* The caller's thread only: */
	json_t *full;              /* GET /tasks/ID of full_id */
	char full_id[TASK_ID_LEN + 1];
	uint64_t full_version;
	/* Whether a task's latest round changed nothing, by its updated. */
	struct glance_seen {
		char id[TASK_ID_LEN + 1];
		double updated;
		int unchanged;
	} *glances;
	size_t nglances;
	json_t *draft;             /* GET /tasks/ID/draft of draft_id */
	char draft_id[TASK_ID_LEN + 1];
	uint64_t draft_version;
};

static struct source_api *of(struct source *s)
{
	return (struct source_api *)s;
}

/* ------------------------------------------------------------ JSON */

/* s, or "" for none. */
static const char *sv(const char *s)
{
	return s ? s : "";
}

static char *jstr(json_t *o, const char *key)
{
	const char *v = json_string_value(json_object_get(o, key));
	return v ? xstrdup(v) : NULL;
}

static double jnum(json_t *o, const char *key)
{
	return json_number_value(json_object_get(o, key));
}

static int jint(json_t *o, const char *key)
{
	return (int)json_integer_value(json_object_get(o, key));
}

/* A member that is JSON itself (metadata, inputs, contract), as text. */
static char *jtext(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	return v && !json_is_null(v) ? json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
}

/* A task's JSON (taskjson.h) as the store's row. */
static void row_of(json_t *j, long long seq, struct task_row *t)
{
	memset(t, 0, sizeof *t);
	t->seq = seq;
	snprintf(t->id, sizeof t->id, "%s", sv(json_string_value(json_object_get(j, "id"))));
	/* What every row has (the views take it as given): "" when the
	 * server left it out. */
	t->text = xstrdup(sv(json_string_value(json_object_get(j, "text"))));
	t->repo = xstrdup(sv(json_string_value(json_object_get(j, "repo"))));
	t->agent = xstrdup(sv(json_string_value(json_object_get(j, "agent"))));
	t->base = jstr(j, "base");
	t->branch = xstrdup(sv(json_string_value(json_object_get(j, "branch"))));
	t->head = jstr(j, "head");
	t->reviewed_head = jstr(j, "reviewed_head");
	int st = task_status_parse(sv(json_string_value(json_object_get(j, "status"))));
	t->status = st < 0 ? TASK_LOST : (enum task_status)st;
	t->error = jstr(j, "error");
	t->created = jnum(j, "created");
	t->updated = jnum(j, "updated");
	t->cancel_requested = json_is_true(json_object_get(j, "cancel_requested"));
	json_t *steps = json_object_get(j, "steps");
	size_t ns = json_array_size(steps);
	t->steps = ns ? xcalloc(ns, sizeof *t->steps) : NULL;
	for (size_t i = 0; i < ns; i++) {
		json_t *s = json_array_get(steps, i);
		int ss = task_status_parse(sv(json_string_value(json_array_get(s, 1))));
		struct task_step *p = &t->steps[t->nsteps];
		p->time = json_number_value(json_array_get(s, 0));
		p->at = p->time - t->created;
		if (ss < 0)
			continue;
		p->status = (enum task_status)ss;
		t->nsteps++;
	}
	t->round = jint(j, "round");
	t->summary = jstr(j, "summary");
	t->pr_url = jstr(j, "pull_request");
	t->pushed = jstr(j, "pushed");
	t->sandbox_kept = json_is_true(json_object_get(j, "sandbox_kept"));
	t->pending = jstr(j, "pending");
	const char *bf = json_string_value(json_object_get(j, "budget_from"));
	t->budget = bf && !strcmp(bf, "task") ? jnum(j, "budget") : -1;
	json_t *u = json_object_get(j, "usage");
	t->usage = (struct task_usage){
		.in = (uint64_t)jint(u, "input"), .out = (uint64_t)jint(u, "output"),
		.cache_read = (uint64_t)jint(u, "cache_read"),
		.cache_write = (uint64_t)jint(u, "cache_write"),
		.requests = (uint64_t)jint(u, "requests"), .cost = jnum(u, "cost"),
		.priced = json_is_true(json_object_get(u, "priced")),
	};
	t->reason = jstr(j, "reason");
	t->session = jstr(j, "session");
	t->attempts = jint(j, "attempts");
	json_t *fr = json_object_get(j, "failed_round");
	if (json_is_object(fr)) {
		t->failed_round = jint(fr, "round");
		t->failed_head = jstr(fr, "head");
		t->failed_why = jstr(fr, "error");
	}
	t->follow_of = jstr(j, "follow_of");
	t->callback_url = jstr(j, "callback_url");
	t->metadata = jtext(j, "metadata");
	t->recipe = jstr(j, "recipe");
	t->inputs = jtext(j, "inputs");
	t->base_ref = jstr(j, "base_ref");
	t->test_cmd = jstr(j, "test");
	t->timeout = jnum(j, "timeout");
	t->dry_run = json_is_true(json_object_get(j, "dry_run"));
	t->approval = jstr(j, "approval");
	json_t *fx = json_object_get(j, "fix_rounds");
	t->fix_rounds = json_is_integer(fx) ? (int)json_integer_value(fx) : -1;
	t->contract = jtext(j, "contract");
	t->group_id = jstr(j, "group");
	t->confirm = jstr(j, "confirm");
	t->estimate = jnum(j, "estimate");
	t->dry_run_record = jtext(j, "dry_run_record");
	json_t *pe = json_object_get(j, "pull_request_error");
	if (json_is_object(pe)) {
		t->pr_error = jstr(pe, "message");
		t->pr_error_at = jnum(pe, "at");
		t->pr_attempts = jint(pe, "attempts");
		t->pr_retry_at = jnum(pe, "retry_at");
	}
	t->queued_by = jstr(j, "queued_by");
	t->reminders = jint(j, "gate_reminders");
}

/* ------------------------------------------------------------ the worker */

static int seen_cmp(const void *a, const void *b)
{
	return strcmp(((const struct seen *)a)->id, ((const struct seen *)b)->id);
}

/* Tasks oldest first (created, then id): the order seqs are given in. */
static int created_cmp(const void *a, const void *b)
{
	json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
	double cx = jnum(x, "created"), cy = jnum(y, "created");
	if (cx != cy)
		return cx < cy ? -1 : 1;
	return strcmp(sv(json_string_value(json_object_get(x, "id"))),
	              sv(json_string_value(json_object_get(y, "id"))));
}

/* Every page of GET /tasks, as one array (new reference) and its text
 * (for the change check); NULL when the server did not answer. */
static json_t *fetch_all(struct client *c, struct buf *text)
{
	json_t *all = json_array();
	char *path = xstrdup("/tasks?limit=500");
	struct err e = {{0}};
	while (path) {
		json_t *page = client_get_json(c, path, &e);
		free(path);
		path = NULL;
		if (!page) {
			json_decref(all);
			return NULL;
		}
		char *dump = json_dumps(json_object_get(page, "tasks"), JSON_COMPACT);
		buf_adds(text, dump ? dump : "");
		free(dump);
		json_array_extend(all, json_object_get(page, "tasks"));
		const char *next = json_string_value(json_object_get(page, "next"));
		if (next && next[0] == '/')
			path = xstrdup(next);
		json_decref(page);
	}
	return all;
}

/* Installs the list read (under the lock): each task its seq. */
static void snapshot_take(struct source_api *a, json_t *all)
{
	size_t n = 0;
	json_t **v = json_array_size(all) ? xcalloc(json_array_size(all), sizeof *v) : NULL;
	/* What the server says is untrusted: a task whose id is not one
	 * (an id names a file of ours, the log's copy) is left out. */
	for (size_t i = 0; i < json_array_size(all); i++) {
		json_t *t = json_array_get(all, i);
		if (json_is_object(t) &&
		    task_id_valid(sv(json_string_value(json_object_get(t, "id"))), 0))
			v[n++] = t;
	}
	qsort(v, n, sizeof *v, created_cmp);
	json_t *tasks = json_array();
	long long *seqs = n ? xcalloc(n, sizeof *seqs) : NULL;
	for (size_t i = 0; i < n; i++) {
		struct seen k = {0};
		snprintf(k.id, sizeof k.id, "%s", sv(json_string_value(json_object_get(v[i], "id"))));
		struct seen *f = a->nseen ? bsearch(&k, a->seen, a->nseen, sizeof k, seen_cmp) : NULL;
		if (!f) {
			k.seq = ++a->next_seq;
			a->seen = xrealloc(a->seen, (a->nseen + 1) * sizeof *a->seen);
			a->seen[a->nseen++] = k;
			qsort(a->seen, a->nseen, sizeof k, seen_cmp);
			seqs[i] = k.seq;
		} else {
			seqs[i] = f->seq;
		}
		json_array_append(tasks, v[i]);
	}
	free(v);
	json_decref(a->tasks);
	free(a->seqs);
	a->tasks = tasks;
	a->seqs = seqs;
	a->n = n;
	a->version++;
}

/* What is new of log l, appended to its file (without the lock: l's
 * path and size are the worker's and log_path's, one at a time). */
static void log_pull(struct client *c, struct api_log *l)
{
	char path[96];
	snprintf(path, sizeof path, "/tasks/%s/log?offset=%lld", l->id, l->size);
	struct client_resp r = {0};
	struct err e = {{0}};
	if (client_request(c, "GET", path, NULL, NULL, 30, &r, &e) == 200 && r.body.len) {
		/* Made with the first bytes: a task without a log yet has none
		 * here either, as on the server. */
		int fd = open(l->path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (fd >= 0) {
			if (fsx_write_all(fd, r.body.data, r.body.len) == 0)
				l->size += (long long)r.body.len;
			close(fd);
		}
	}
	client_resp_free(&r);
}

static void *worker(void *arg)
{
	struct source_api *a = arg;
	struct err e = {{0}};
	struct client *c = client_open(a->url, a->token, &e);
	pthread_mutex_lock(&a->mu);
	while (c && !a->stop) {
		pthread_mutex_unlock(&a->mu);
		struct buf text = {0};
		json_t *all = fetch_all(c, &text);
		pthread_mutex_lock(&a->mu);
		if (all && (!a->last || strcmp(a->last, text.data ? text.data : ""))) {
			free(a->last);
			a->last = xstrdup(text.data ? text.data : "");
			snapshot_take(a, all);
		}
		json_decref(all);
		buf_free(&text);
		for (size_t i = 0; i < a->nlogs && !a->stop; i++) {
			struct api_log l = a->logs[i];
			pthread_mutex_unlock(&a->mu);
			log_pull(c, &l);
			pthread_mutex_lock(&a->mu);
			if (i < a->nlogs && !strcmp(a->logs[i].id, l.id))
				a->logs[i].size = l.size;
		}
		pthread_cond_broadcast(&a->cv);
		if (a->stop)
			break;
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += (time_t)POLL_SECONDS;
		pthread_cond_timedwait(&a->cv, &a->mu, &ts);
	}
	pthread_mutex_unlock(&a->mu);
	client_close(c);
	return NULL;
}

/* ------------------------------------------------------------ the list */

/* failed, lost, review, pushing, testing, running, preparing, queued,
 * done, rejected, cancelled (store.h, TASK_ORDER_STATUS). */
static int status_rank(enum task_status s)
{
	static const enum task_status order[] = {
		TASK_FAILED, TASK_LOST, TASK_REVIEW, TASK_PUSHING, TASK_TESTING, TASK_RUNNING,
		TASK_PREPARING, TASK_QUEUED, TASK_DONE, TASK_REJECTED, TASK_CANCELLED,
	};
	for (size_t i = 0; i < sizeof order / sizeof order[0]; i++)
		if (order[i] == s)
			return (int)i;
	return 99;
}

static int has_text(const char *s, const char *w)
{
	if (!s)
		return 0;
	size_t n = strlen(w);
	for (; *s; s++)
		if (!strncasecmp(s, w, n))
			return 1;
	return 0;
}

/* The conditions of q but its bounds and times (fold_groups asks these of
 * a group's other members). */
static int matches_kind(const struct task_row *t, const struct task_query *q)
{
	if (q->status_mask && !(q->status_mask & TASK_MASK(t->status)))
		return 0;
	if ((q->repo && strcmp(q->repo, t->repo ? t->repo : "")) ||
	    (q->agent && strcmp(q->agent, t->agent ? t->agent : "")))
		return 0;
	if (q->text && *q->text && !has_text(t->id, q->text) && !has_text(t->text, q->text) &&
	    !has_text(t->repo, q->text) && !has_text(t->agent, q->text) &&
	    !has_text(t->error, q->text))
		return 0;
	if (q->startable && t->confirm && !strcmp(t->confirm, "needed"))
		return 0;
	return 1;
}

static int matches(const struct task_row *t, const struct task_query *q)
{
	if (!matches_kind(t, q) || (q->pending && !t->pending) ||
	    (q->since && t->created < q->since) ||
	    (q->changed_after && !(t->updated > q->changed_after)) ||
	    (q->after && t->seq <= q->after) || (q->before && t->seq >= q->before) ||
	    (q->group && strcmp(q->group, t->group_id ? t->group_id : "")))
		return 0;
	return 1;
}

/* The rows of the snapshot q selects, in q's order, its offset and limit
 * applied when paged (under the lock). */
static const struct task_query *sort_q;

static int row_cmp(const void *pa, const void *pb)
{
	const struct task_row *a = pa, *b = pb;
	const struct task_query *q = sort_q;
	int ea = task_status_is_terminal(a->status), eb = task_status_is_terminal(b->status);
	switch (q->order) {
	case TASK_ORDER_STATUS:
		if (status_rank(a->status) != status_rank(b->status))
			return status_rank(a->status) - status_rank(b->status);
		break;
	case TASK_ORDER_REPO: {
		int c = strcmp(a->repo ? a->repo : "", b->repo ? b->repo : "");
		if (c)
			return c;
		break;
	}
	case TASK_ORDER_TIME:
		if (ea != eb)
			return ea - eb;
		if (!ea && a->updated != b->updated)
			return a->updated < b->updated ? -1 : 1;
		if (ea && a->updated - a->created != b->updated - b->created)
			return a->updated - a->created > b->updated - b->created ? -1 : 1;
		break;
	case TASK_ORDER_AGE:
		break;
	case TASK_ORDER_QUEUED:
		return q->newest_first ? (a->seq < b->seq) - (a->seq > b->seq)
		                       : (a->seq > b->seq) - (a->seq < b->seq);
	}
	return (a->seq < b->seq) - (a->seq > b->seq);
}

static void select_rows(struct source_api *a, const struct task_query *q, int paged,
                        struct task_row **out, size_t *n)
{
	struct task_row *all = a->n ? xcalloc(a->n, sizeof *all) : NULL;
	size_t k = 0;
	for (size_t i = 0; i < a->n; i++) {
		row_of(json_array_get(a->tasks, i), a->seqs[i], &all[k]);
		k++;
	}
	struct task_row *sel = k ? xcalloc(k, sizeof *sel) : NULL;
	size_t m = 0;
	for (size_t i = 0; i < k; i++) {
		int keep = matches(&all[i], q);
		if (keep && q->fold_groups && all[i].group_id) {
			/* Only the group's first member that the conditions select. */
			for (size_t j = 0; j < i && keep; j++)
				if (all[j].group_id && !strcmp(all[j].group_id, all[i].group_id) &&
				    matches_kind(&all[j], q))
					keep = 0;
		}
		if (keep)
			sel[m++] = all[i];
		else
			task_row_free(&all[i]);
	}
	free(all);
	sort_q = q;
	if (m > 1)
		qsort(sel, m, sizeof *sel, row_cmp);
	size_t from = paged ? q->offset : 0, to = m;
	if (from > m)
		from = m;
	if (paged && q->limit && to - from > q->limit)
		to = from + q->limit;
	for (size_t i = 0; i < m; i++)
		if (i < from || i >= to)
			task_row_free(&sel[i]);
	if (from)
		memmove(sel, sel + from, (to - from) * sizeof *sel);
	*n = to - from;
	*out = sel;
	if (!*n) {
		free(sel);
		*out = NULL;
	}
}

static int sa_task_query(struct source *s, const struct task_query *q, struct task_row **out,
                         size_t *n, struct err *e)
{
	(void)e;
	struct source_api *a = of(s);
	pthread_mutex_lock(&a->mu);
	select_rows(a, q, 1, out, n);
	pthread_mutex_unlock(&a->mu);
	return 0;
}

static int sa_task_count(struct source *s, const struct task_query *q, size_t *n,
                         struct err *e)
{
	(void)e;
	struct source_api *a = of(s);
	struct task_row *r;
	pthread_mutex_lock(&a->mu);
	select_rows(a, q, 0, &r, n);
	pthread_mutex_unlock(&a->mu);
	task_rows_free(r, *n);
	return 0;
}

static int sa_task_order(struct source *s, const struct task_query *q, struct task_key **out,
                         size_t *n, struct err *e)
{
	(void)e;
	struct source_api *a = of(s);
	struct task_row *r;
	pthread_mutex_lock(&a->mu);
	select_rows(a, q, 0, &r, n);
	pthread_mutex_unlock(&a->mu);
	*out = *n ? xcalloc(*n, sizeof **out) : NULL;
	for (size_t i = 0; i < *n; i++)
		(*out)[i] = (struct task_key){ r[i].seq, r[i].status };
	task_rows_free(r, *n);
	return 0;
}

static int sa_task_rows(struct source *s, const long long *seqs, size_t n, int no_steps,
                        struct task_row **out, size_t *nout, struct err *e)
{
	(void)e;
	(void)no_steps;
	struct source_api *a = of(s);
	*out = n ? xcalloc(n, sizeof **out) : NULL;
	pthread_mutex_lock(&a->mu);
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < a->n; k++)
			if (a->seqs[k] == seqs[i]) {
				row_of(json_array_get(a->tasks, k), a->seqs[k], &(*out)[(*nout)++]);
				break;
			}
	pthread_mutex_unlock(&a->mu);
	return 0;
}

static int sa_task_counts(struct source *s, size_t counts[TASK_NSTATUS], struct err *e)
{
	(void)e;
	struct source_api *a = of(s);
	memset(counts, 0, TASK_NSTATUS * sizeof *counts);
	pthread_mutex_lock(&a->mu);
	for (size_t i = 0; i < a->n; i++) {
		int st = task_status_parse(sv(json_string_value(json_object_get(
			json_array_get(a->tasks, i), "status"))));
		if (st >= 0)
			counts[st]++;
	}
	pthread_mutex_unlock(&a->mu);
	return 0;
}

static json_t *full_of(struct source_api *a, const char *id, struct err *e);

/* Whether t's latest round changed nothing (store_task_glance): its
 * rounds are the task's details, read once for each state of the task
 * (an ended task's are read once). */
static int round_unchanged(struct source_api *a, const struct task_row *t)
{
	if (t->round <= 1)
		return !t->head || (t->base && !strcmp(t->head, t->base));
	for (size_t i = 0; i < a->nglances; i++)
		if (!strcmp(a->glances[i].id, t->id) && a->glances[i].updated == t->updated)
			return a->glances[i].unchanged;
	struct err e = {{0}};
	json_t *j = full_of(a, t->id, &e);
	json_t *r = json_array_get(json_object_get(j, "rounds"),
	                           json_array_size(json_object_get(j, "rounds")) - 1);
	const char *from = json_string_value(json_object_get(r, "from"));
	const char *head = json_string_value(json_object_get(r, "head"));
	int unchanged = j && r && (!head || (from && !strcmp(from, head)));
	if (!j)
		return 0;
	struct glance_seen *gs = NULL;
	for (size_t i = 0; i < a->nglances && !gs; i++)
		if (!strcmp(a->glances[i].id, t->id))
			gs = &a->glances[i];
	if (!gs) {
		a->glances = xrealloc(a->glances, (a->nglances + 1) * sizeof *a->glances);
		gs = &a->glances[a->nglances++];
	}
	snprintf(gs->id, sizeof gs->id, "%s", t->id);
	gs->updated = t->updated;
	gs->unchanged = unchanged;
	return unchanged;
}

/* From the steps the list carries: when it first left the queue (its
 * first preparing, as the store's glance: a task cancelled while queued
 * never started) and when its latest round began (the last move to
 * running). */
static int sa_task_glance(struct source *s, long long seq, struct task_glance *g,
                          struct err *e)
{
	struct task_row *r;
	size_t n = 0;
	memset(g, 0, sizeof *g);
	if (sa_task_rows(s, &seq, 1, 0, &r, &n, e) < 0 || !n) {
		free(r);
		return 0;
	}
	for (size_t i = 0; i < r->nsteps; i++) {
		if (!g->started && r->steps[i].status == TASK_PREPARING)
			g->started = r->steps[i].time;
		if (r->steps[i].status == TASK_RUNNING)
			g->round_started = r->steps[i].time;
	}
	g->round_unchanged = round_unchanged(of(s), r);
	task_rows_free(r, n);
	return 0;
}

static uint64_t sa_data_version(struct source *s)
{
	struct source_api *a = of(s);
	pthread_mutex_lock(&a->mu);
	uint64_t v = a->version;
	pthread_mutex_unlock(&a->mu);
	return v;
}

/* ------------------------------------------------------------ a task */

/* The list's "updated" of task id (0: not in it). */
static double list_updated(struct source_api *a, const char *id)
{
	double u = 0;
	pthread_mutex_lock(&a->mu);
	for (size_t i = 0; i < a->n; i++) {
		json_t *t = json_array_get(a->tasks, i);
		if (!strcmp(sv(json_string_value(json_object_get(t, "id"))), id)) {
			u = jnum(t, "updated");
			break;
		}
	}
	pthread_mutex_unlock(&a->mu);
	return u;
}

/* The list read now, in the caller's thread, as the worker does. */
static void list_poll_now(struct source_api *a)
{
	struct buf text = {0};
	json_t *all = fetch_all(a->c, &text);
	pthread_mutex_lock(&a->mu);
	if (all && (!a->last || strcmp(a->last, text.data ? text.data : ""))) {
		free(a->last);
		a->last = xstrdup(text.data ? text.data : "");
		snapshot_take(a, all);
	}
	pthread_mutex_unlock(&a->mu);
	json_decref(all);
	buf_free(&text);
}

/* GET /tasks/ID, kept for the data version it was read at: read again
 * only when the list changed (or this dashboard decided something), so
 * that a view's refresh costs no request.  An answer newer than the
 * list's row (the list is up to a poll behind) has the list read again
 * at once: the counts and the messages of the same screen, drawn after
 * the views' refresh, are then as new as the view (and the view reads
 * it again at the new version). */
static json_t *full_of(struct source_api *a, const char *id, struct err *e)
{
	uint64_t v = sa_data_version(&a->s);
	if (a->full && (!strcmp(a->full_id, id) ||
	                !strcmp(sv(json_string_value(json_object_get(a->full, "id"))), id)) &&
	    a->full_version == v)
		return a->full;
	char *eid = client_escape(id);
	char *path = xasprintf("/tasks/%s", eid);
	free(eid);
	json_t *j = client_get_json(a->c, path, e);
	free(path);
	if (!j)
		return NULL;
	json_decref(a->full);
	a->full = j;
	snprintf(a->full_id, sizeof a->full_id, "%s", id);
	a->full_version = v;
	double lu = list_updated(a, id);
	if (lu > 0 && jnum(j, "updated") > lu)
		list_poll_now(a);
	return j;
}

/* The seq the snapshot gave id (0: not in it yet). */
static long long seq_of(struct source_api *a, const char *id)
{
	struct seen k = {0};
	snprintf(k.id, sizeof k.id, "%s", id);
	pthread_mutex_lock(&a->mu);
	struct seen *f = a->nseen ? bsearch(&k, a->seen, a->nseen, sizeof k, seen_cmp) : NULL;
	long long seq = f ? f->seq : 0;
	pthread_mutex_unlock(&a->mu);
	return seq;
}

static int sa_task_get(struct source *s, const char *id, struct task_row *t, struct err *e)
{
	struct source_api *a = of(s);
	long long seq = seq_of(a, id);
	/* The task a view reads in full (its gate, rounds) is read from that
	 * answer, newer than the list's row (up to a poll behind): a screen
	 * never shows a gate of round 2 over a row of round 1.  Read again
	 * only when the list changed, as the rest of it. */
	if (a->full && !strcmp(a->full_id, id)) {
		struct err fe = {{0}};
		json_t *j = full_of(a, id, &fe);
		if (j) {
			row_of(j, seq, t);
			return 0;
		}
	}
	/* The list has the whole row: no request while the task is in it. */
	struct task_row *r = NULL;
	size_t n = 0;
	if (seq && sa_task_rows(s, &seq, 1, 0, &r, &n, e) == 0 && n == 1) {
		*t = r[0];
		free(r);
		return 0;
	}
	task_rows_free(r, n);
	json_t *j = full_of(a, id, e);
	if (!j)
		return -1;
	const char *jid = sv(json_string_value(json_object_get(j, "id")));
	row_of(j, seq_of(a, jid), t);
	return 0;
}

/* The list row's pr_state (GET /tasks has it: no request), else nothing:
 * a task's place on GitHub in full only from its own answer when a view
 * reads it (the gate's pull request line). */
static char *list_pr_state(struct source_api *a, const char *id)
{
	char *state = NULL;
	pthread_mutex_lock(&a->mu);
	for (size_t i = 0; i < a->n; i++) {
		json_t *t = json_array_get(a->tasks, i);
		if (!strcmp(sv(json_string_value(json_object_get(t, "id"))), id)) {
			state = jstr(t, "pr_state");
			break;
		}
	}
	pthread_mutex_unlock(&a->mu);
	return state;
}

/* As store_github_link: 1 with *out when the task has a place on GitHub.
 * The task a view reads in full gives all of it (its "github"); any other
 * gives the pull request's state from the list, which is what the list's
 * rows show ([merged], [pr closed]). */
static int sa_github_link(struct source *s, const char *id, struct gh_link *out,
                          struct err *e)
{
	(void)e;
	struct source_api *a = of(s);
	memset(out, 0, sizeof *out);
	json_t *g = a->full && !strcmp(a->full_id, id) ? json_object_get(a->full, "github") : NULL;
	if (json_is_object(g)) {
		snprintf(out->task_id, sizeof out->task_id, "%s", id);
		out->gh_repo = jstr(g, "repo");
		out->issue = (long long)json_integer_value(json_object_get(g, "issue"));
		out->issue_comment = (long long)json_integer_value(json_object_get(g, "issue_comment"));
		out->pr = (long long)json_integer_value(json_object_get(g, "pull_request"));
		out->pr_state = jstr(g, "pr_state");
		out->checks = jstr(g, "checks");
		out->branch_deleted = json_is_true(json_object_get(g, "branch_deleted"));
		return 1;
	}
	char *state = list_pr_state(a, id);
	if (!state)
		return 0;
	snprintf(out->task_id, sizeof out->task_id, "%s", id);
	out->pr_state = state;
	return 1;
}

/* As ghsync_pr_words: the pull request's state (and its checks). */
static char *sa_pr_words(struct source *s, const char *id)
{
	struct gh_link l;
	struct err e = {{0}};
	if (sa_github_link(s, id, &l, &e) != 1)
		return NULL;
	char *w = ghsync_link_words(&l);
	gh_link_free(&l);
	return w;
}

static int sa_rounds(struct source *s, const char *id, struct task_round **out, size_t *n,
                     struct err *e)
{
	json_t *j = full_of(of(s), id, e);
	if (!j)
		return -1;
	json_t *r = json_object_get(j, "rounds");
	*n = json_array_size(r);
	*out = *n ? xcalloc(*n, sizeof **out) : NULL;
	for (size_t i = 0; i < *n; i++) {
		json_t *o = json_array_get(r, i);
		(*out)[i] = (struct task_round){
			.n = jint(o, "round"), .from = jstr(o, "from"), .head = jstr(o, "head"),
			.started = jnum(o, "started"), .ended = jnum(o, "ended"), .kind = jstr(o, "kind"),
		};
	}
	return 0;
}

static int sa_decisions(struct source *s, const char *id, struct task_decision **out,
                        size_t *n, struct err *e)
{
	json_t *j = full_of(of(s), id, e);
	if (!j)
		return -1;
	json_t *d = json_object_get(j, "decisions");
	*n = json_array_size(d);
	*out = *n ? xcalloc(*n, sizeof **out) : NULL;
	for (size_t i = 0; i < *n; i++) {
		json_t *o = json_array_get(d, i);
		(*out)[i] = (struct task_decision){
			.round = jint(o, "round"), .action = jstr(o, "action"), .notes = jstr(o, "notes"),
			.actor = jstr(o, "actor"), .at = jnum(o, "at"),
		};
		if (!(*out)[i].action)
			(*out)[i].action = xstrdup("");
		if (!(*out)[i].actor)
			(*out)[i].actor = xstrdup("");
	}
	return 0;
}

/* As store_history: the rounds and decisions, the last round to list. */
static int sa_history(struct source *s, const char *id, struct task_history *h,
                      struct err *e)
{
	memset(h, 0, sizeof *h);
	if (sa_rounds(s, id, &h->rounds, &h->nrounds, e) < 0 ||
	    sa_decisions(s, id, &h->decisions, &h->ndecisions, e) < 0) {
		task_history_free(h);
		return -1;
	}
	h->last = h->nrounds ? h->rounds[h->nrounds - 1].n : h->ndecisions ? 1 : 0;
	return 0;
}

static int sa_egress_list(struct source *s, const char *id, struct egress_row **out,
                          size_t *n, struct err *e)
{
	json_t *j = full_of(of(s), id, e);
	if (!j)
		return -1;
	json_t *r = json_object_get(j, "egress");
	*n = json_array_size(r);
	*out = *n ? xcalloc(*n, sizeof **out) : NULL;
	for (size_t i = 0; i < *n; i++) {
		json_t *o = json_array_get(r, i);
		(*out)[i] = (struct egress_row){
			.id = (long long)i + 1, .round = jint(o, "round"), .time = jnum(o, "time"),
			.step = jstr(o, "step"), .kind = jstr(o, "kind"), .endpoint = jstr(o, "endpoint"),
			.host = jstr(o, "host"), .port = jint(o, "port"), .method = jstr(o, "method"),
			.path = jstr(o, "path"), .status = jint(o, "status"),
			.up = (uint64_t)jint(o, "up"), .down = (uint64_t)jint(o, "down"),
			.ms = jnum(o, "ms"), .verdict = jstr(o, "verdict"), .reason = jstr(o, "reason"),
		};
	}
	return 0;
}

static int sa_egress_count(struct source *s, const char *id, size_t *n, struct err *e)
{
	json_t *j = full_of(of(s), id, e);
	if (!j)
		return -1;
	*n = json_array_size(json_object_get(j, "egress"));
	return 0;
}

static int sa_gate_summary(struct source *s, const struct task_row *t,
                           struct gate_summary *out, struct err *e)
{
	memset(out, 0, sizeof *out);
	json_t *j = full_of(of(s), t->id, e);
	if (!j)
		return -1;
	json_t *g = json_object_get(j, "gate");
	if (!json_is_object(g))
		return 0;
	char *text = json_dumps(g, JSON_COMPACT | JSON_PRESERVE_ORDER);
	int rc = gate_summary_parse(text, out, e);
	free(text);
	if (rc < 0)
		return -1;
	/* "overridden" is the server's, from the decisions (gate.h). */
	json_t *f = json_object_get(g, "findings");
	for (size_t i = 0; i < out->nfindings && i < json_array_size(f); i++)
		out->findings[i].overridden =
			json_is_true(json_object_get(json_array_get(f, i), "overridden"));
	return 1;
}

/* The notes of the last request for changes. */
static char *sa_last_notes(struct source *s, const char *id, struct err *e)
{
	struct task_decision *d;
	size_t n;
	if (sa_decisions(s, id, &d, &n, e) < 0)
		return NULL;
	char *notes = NULL;
	for (size_t i = n; i-- > 0 && !notes;)
		if (!strcmp(d[i].action, "request-changes") && d[i].notes)
			notes = xstrdup(d[i].notes);
	task_decisions_free(d, n);
	if (!notes)
		err_kind_set(e, ERR_NOT_FOUND, _("task %s has no request for changes to send again"),
		             id);
	return notes;
}

/* ------------------------------------------------------------ groups */

static int sa_group_load(struct source *s, const char *id, double now, int with_diffs,
                         struct group_info *out, struct err *e)
{
	(void)now;
	(void)with_diffs;
	struct source_api *a = of(s);
	memset(out, 0, sizeof *out);
	char *eid = client_escape(id);
	char *path = xasprintf("/groups/%s", eid);
	free(eid);
	json_t *j = client_get_json(a->c, path, e);
	free(path);
	if (!j)
		return -1;
	snprintf(out->g.id, sizeof out->g.id, "%s", sv(json_string_value(json_object_get(j, "id"))));
	out->g.text = jstr(j, "text");
	out->g.created = jnum(j, "created");
	out->g.chosen = jstr(j, "picked");
	json_t *m = json_object_get(j, "members");
	out->n = json_array_size(m);
	out->m = out->n ? xcalloc(out->n, sizeof *out->m) : NULL;
	for (size_t i = 0; i < out->n; i++) {
		json_t *o = json_array_get(m, i);
		struct group_member *g = &out->m[i];
		const char *mid = sv(json_string_value(json_object_get(o, "id")));
		long long seq = seq_of(a, mid);
		struct task_row *r = NULL;
		size_t nr = 0;
		if (seq)
			sa_task_rows(s, &seq, 1, 0, &r, &nr, e);
		if (nr) {
			g->t = r[0];
			free(r);
		} else {
			free(r);
			row_of(o, seq, &g->t);
		}
		g->position = jint(o, "position");
		json_t *tests = json_object_get(o, "tests");
		g->has_gate = json_is_string(tests);
		const char *tw = sv(json_string_value(tests));
		g->tests = !strcmp(tw, "passed") ? GROUP_TESTS_PASSED :
		           !strcmp(tw, "failed") ? GROUP_TESTS_FAILED : GROUP_TESTS_NOT_RUN;
		json_t *ch = json_object_get(o, "change");
		g->has_change = json_is_object(ch);
		g->files = (size_t)jint(ch, "files");
		g->ins = (size_t)jint(ch, "insertions");
		g->del = (size_t)jint(ch, "deletions");
		json_t *sec = json_object_get(o, "seconds");
		g->seconds = json_is_number(sec) ? json_number_value(sec) : -1;
		json_t *f = json_object_get(o, "findings");
		g->blocks = (size_t)jint(f, "block");
		g->warns = (size_t)jint(f, "warn");
		g->picked = json_is_true(json_object_get(o, "picked"));
	}
	json_decref(j);
	return 0;
}

static int sa_group_position(struct source *s, const struct task_row *t, int *pos, int *n,
                             struct err *e)
{
	*pos = *n = 0;
	if (!t->group_id)
		return 0;
	struct task_query q = { .group = t->group_id };
	size_t all = 0, before = 0;
	sa_task_count(s, &q, &all, e);
	q.before = t->seq;
	sa_task_count(s, &q, &before, e);
	*pos = (int)before + 1;
	*n = (int)all;
	return 0;
}

/* ------------------------------------------------------------ the draft */

static json_t *draft_of(struct source_api *a, const char *id, struct err *e)
{
	uint64_t v = sa_data_version(&a->s);
	if (a->draft && !strcmp(a->draft_id, id) && a->draft_version == v)
		return a->draft;
	char *eid = client_escape(id);
	char *path = xasprintf("/tasks/%s/draft", eid);
	free(eid);
	json_t *j = client_get_json(a->c, path, e);
	free(path);
	if (!j)
		return NULL;
	json_decref(a->draft);
	a->draft = j;
	snprintf(a->draft_id, sizeof a->draft_id, "%s", id);
	a->draft_version = v;
	return j;
}

/* What this dashboard changed itself: read again at once. */
static void changed(struct source_api *a)
{
	pthread_mutex_lock(&a->mu);
	a->version++;
	pthread_cond_broadcast(&a->cv);
	pthread_mutex_unlock(&a->mu);
	json_decref(a->full);
	a->full = NULL;
	json_decref(a->draft);
	a->draft = NULL;
}

static int sa_draft_list(struct source *s, const char *id, struct review_comment **out,
                         size_t *n, struct err *e)
{
	json_t *j = draft_of(of(s), id, e);
	if (!j)
		return -1;
	json_t *c = json_object_get(j, "comments");
	*n = json_array_size(c);
	*out = *n ? xcalloc(*n, sizeof **out) : NULL;
	for (size_t i = 0; i < *n; i++) {
		json_t *o = json_array_get(c, i);
		(*out)[i] = (struct review_comment){
			.n = (long long)json_integer_value(json_object_get(o, "n")),
			.round = jint(o, "round"), .path = jstr(o, "path"),
			.line = (long)json_integer_value(json_object_get(o, "line")),
			.old = json_is_true(json_object_get(o, "old")), .text = jstr(o, "text"),
			.comment = jstr(o, "comment"), .created = jnum(o, "created"),
		};
	}
	return 0;
}

static int sa_draft_count(struct source *s, const char *id, size_t *n, struct err *e)
{
	json_t *j = draft_of(of(s), id, e);
	if (!j)
		return -1;
	*n = json_array_size(json_object_get(j, "comments"));
	return 0;
}

/* POST path with body (stolen); the answer (new reference, json null for
 * none) or NULL with e set from the API's error. */
static json_t *post(struct source_api *a, const char *id, const char *what, json_t *body,
                    struct err *e)
{
	char *eid = client_escape(id);
	char *path = xasprintf("/tasks/%s/%s", eid, what);
	free(eid);
	json_t *j = client_post_json(a->c, path, body, NULL, e);
	json_decref(body);
	free(path);
	changed(a);
	return j;
}

static int sa_draft_add(struct source *s, const char *id, const struct review_comment *c,
                        struct err *e)
{
	json_t *j = post(of(s), id, "draft", json_pack("{s:s,s:I,s:b,s:s,s:s}", "path",
	                 c->path ? c->path : "", "line", (json_int_t)c->line, "old", c->old,
	                 "text", c->text ? c->text : "", "comment", c->comment ? c->comment : ""),
	                 e);
	json_decref(j);
	return j ? 0 : -1;
}

static int sa_draft_discard(struct source *s, const char *id, long long upto, struct err *e)
{
	struct source_api *a = of(s);
	char *eid = client_escape(id);
	char *path = xasprintf("/tasks/%s/draft?upto=%lld", eid, upto);
	free(eid);
	struct client_resp r = {0};
	long st = client_request(a->c, "DELETE", path, NULL, NULL, 0, &r, e);
	free(path);
	int rc = st < 0 || client_resp_error(&r, e) < 0 ? -1 :
	         jint(r.json, "discarded");
	client_resp_free(&r);
	changed(a);
	return rc;
}

/* ------------------------------------------------------------ decisions */

static json_t *notes_body(const char *notes)
{
	json_t *b = json_object();
	if (notes)
		json_object_set_new(b, "notes", json_string(notes));
	return b;
}

static int sa_reject(struct source *s, const char *id, const char *notes, struct err *e)
{
	json_t *j = post(of(s), id, "reject", notes_body(notes), e);
	json_decref(j);
	return j ? 0 : -1;
}

static int sa_override(struct source *s, const char *id, const char *finding,
                       const char *notes, struct err *e)
{
	json_t *b = notes_body(notes);
	json_object_set_new(b, "finding", json_string(finding));
	json_t *j = post(of(s), id, "override", b, e);
	json_decref(j);
	return j ? 0 : -1;
}

static int sa_request_changes(struct source *s, const char *id, const char *notes,
                              size_t *sent, struct err *e)
{
	json_t *b = notes_body(notes && strspn(notes, " \t\r\n") < strlen(notes) ? notes : NULL);
	json_object_set_new(b, "draft", json_true());
	json_t *j = post(of(s), id, "request-changes", b, e);
	if (!j)
		return -1;
	*sent = (size_t)json_integer_value(json_object_get(j, "comments"));
	json_decref(j);
	return 0;
}

static int sa_follow_up(struct source *s, const char *id, const char *notes,
                        char id_out[TASK_ID_LEN + 1], struct err *e)
{
	json_t *j = post(of(s), id, "follow-up", notes_body(notes), e);
	if (!j)
		return -1;
	snprintf(id_out, TASK_ID_LEN + 1, "%s", sv(json_string_value(json_object_get(j, "id"))));
	json_decref(j);
	return 0;
}

static int sa_cancel(struct source *s, const char *id, struct err *e)
{
	json_t *j = post(of(s), id, "cancel", json_object(), e);
	if (!j)
		return -1;
	int r = !strcmp(sv(json_string_value(json_object_get(j, "status"))), "cancelled") ? 1 : 2;
	json_decref(j);
	return r;
}

static int sa_confirm(struct source *s, const char *id, struct err *e)
{
	json_t *j = post(of(s), id, "confirm", json_object(), e);
	json_decref(j);
	return j ? 0 : -1;
}

/* In a dashboard job: the facts the answer gives, for the status bar. */
static int sa_approve(struct source *s, const char *verb, const char *id, struct buf *out,
                      struct err *e)
{
	const char *what = !strcmp(verb, "pr") ? "pull-request" : verb;
	json_t *j = post(of(s), id, what, json_object(), e);
	if (!j)
		return -1;
	const char *st = json_string_value(json_object_get(j, "status"));
	const char *pr = json_string_value(json_object_get(j, "pull_request"));
	if (st)
		buf_printf(out, _("task %s is %s"), id, st);
	if (pr)
		buf_printf(out, "%s%s", out->len ? "\n" : "", pr);
	json_t *pe = json_object_get(j, "pull_request_error");
	int rc = 0;
	if (json_is_object(pe)) {
		buf_printf(out, "%s%s", out->len ? "\n" : "",
		           sv(json_string_value(json_object_get(pe, "message"))));
		rc = 1;
	}
	json_decref(j);
	return rc;
}

static int sa_pick(struct source *s, const char *group, const char *task, struct buf *out,
                   struct err *e)
{
	struct source_api *a = of(s);
	char *eid = client_escape(group);
	char *path = xasprintf("/groups/%s/pick", eid);
	free(eid);
	json_t *j = client_post_json(a->c, path, json_pack("{s:s}", "task", task), NULL, e);
	free(path);
	if (!j)
		return -1;
	buf_printf(out, _("picked task %s of group %s"), task, group);
	json_decref(j);
	return 0;
}

static int sa_submit(struct source *s, const struct submit_req *rq, struct submit_result *out,
                     struct err *e)
{
	struct source_api *a = of(s);
	memset(out, 0, sizeof *out);
	json_t *b = json_object();
	if (rq->text)
		json_object_set_new(b, "text", json_string(rq->text));
	if (rq->repo)
		json_object_set_new(b, "repo", json_string(rq->repo));
	if (rq->agent)
		json_object_set_new(b, "agent", json_string(rq->agent));
	if (rq->recipe)
		json_object_set_new(b, "recipe", json_string(rq->recipe));
	if (rq->ninputs) {
		json_t *in = json_object();
		for (size_t i = 0; i < rq->ninputs; i++)
			if (rq->input_values[i])
				json_object_set_new(in, rq->input_names[i], json_string(rq->input_values[i]));
		json_object_set_new(b, "inputs", in);
	}
	json_t *j = client_post_json(a->c, "/tasks", b, NULL, e);
	json_decref(b);
	if (!j)
		return -1;
	snprintf(out->ids[0], sizeof out->ids[0], "%s",
	         sv(json_string_value(json_object_get(j, "id"))));
	out->n = 1;
	json_decref(j);
	changed(a);
	/* Whether it waits for a confirmation is the task's. */
	struct task_row t;
	struct err ignore = {{0}};
	if (out->ids[0][0] && sa_task_get(s, out->ids[0], &t, &ignore) == 0) {
		out->confirm = t.confirm && !strcmp(t.confirm, "needed");
		task_row_free(&t);
	}
	return 0;
}

/* ------------------------------------------------------------ log, diff */

static char *sa_log_path(struct source *s, const char *id, struct err *e)
{
	struct source_api *a = of(s);
	pthread_mutex_lock(&a->mu);
	for (size_t i = 0; i < a->nlogs; i++)
		if (!strcmp(a->logs[i].id, id)) {
			char *p = xstrdup(a->logs[i].path);
			pthread_mutex_unlock(&a->mu);
			return p;
		}
	pthread_mutex_unlock(&a->mu);
	if (!task_id_valid(id, 0)) {
		err_kind_set(e, ERR_INVALID, _("'%s' is not a task id"), id);
		return NULL;
	}
	struct api_log l = {0};
	snprintf(l.id, sizeof l.id, "%s", id);
	l.path = xasprintf("%s/%s.log", a->dir, id);
	/* What there is now, before the view opens; the worker follows. */
	log_pull(a->c, &l);
	pthread_mutex_lock(&a->mu);
	a->logs = xrealloc(a->logs, (a->nlogs + 1) * sizeof *a->logs);
	a->logs[a->nlogs++] = l;
	pthread_mutex_unlock(&a->mu);
	return xstrdup(l.path);
}

/* In a dashboard job, on a source of its own. */
static int sa_diff_each(struct source *s, const struct task_row *t, const char *which,
                        const char *from, const char *to, diff_file_fn fn, void *arg,
                        struct err *e)
{
	(void)from;
	(void)to;
	struct source_api *a = of(s);
	char *eid = client_escape(t->id);
	char *path = xasprintf("/tasks/%s/diff%s%s", eid, which && *which ? "?" : "",
	                       which ? which : "");
	free(eid);
	struct client_resp r = {0};
	long st = client_request(a->c, "GET", path, NULL, NULL, 0, &r, e);
	free(path);
	int rc = st < 0 || client_resp_error(&r, e) < 0 ? -1 :
	         diff_each_buffer(r.body.data ? r.body.data : "", r.body.len, fn, arg, e);
	client_resp_free(&r);
	return rc;
}

/* ------------------------------------------------------------ the source */

static void sa_close(struct source *s)
{
	struct source_api *a = of(s);
	if (a->started) {
		pthread_mutex_lock(&a->mu);
		a->stop = 1;
		pthread_cond_broadcast(&a->cv);
		pthread_mutex_unlock(&a->mu);
		pthread_join(a->th, NULL);
	}
	for (size_t i = 0; i < a->nlogs; i++) {
		unlink(a->logs[i].path);
		free(a->logs[i].path);
	}
	free(a->logs);
	if (a->dir)
		rmdir(a->dir);
	free(a->dir);
	json_decref(a->tasks);
	json_decref(a->full);
	json_decref(a->draft);
	free(a->seqs);
	free(a->seen);
	free(a->glances);
	free(a->last);
	client_close(a->c);
	free(a->url);
	free(a->token);
	pthread_mutex_destroy(&a->mu);
	pthread_cond_destroy(&a->cv);
	free(a);
}

static const struct source_ops api_ops = {
	.name = "api",
	.close = sa_close,
	.data_version = sa_data_version,
	.task_get = sa_task_get,
	.task_query = sa_task_query,
	.task_count = sa_task_count,
	.task_order = sa_task_order,
	.task_rows = sa_task_rows,
	.task_glance = sa_task_glance,
	.task_counts = sa_task_counts,
	.github_link = sa_github_link,
	.pr_words = sa_pr_words,
	.history = sa_history,
	.decisions = sa_decisions,
	.rounds = sa_rounds,
	.egress_list = sa_egress_list,
	.egress_count = sa_egress_count,
	.gate_summary = sa_gate_summary,
	.last_notes = sa_last_notes,
	.group_load = sa_group_load,
	.group_position = sa_group_position,
	.draft_list = sa_draft_list,
	.draft_count = sa_draft_count,
	.draft_add = sa_draft_add,
	.draft_discard = sa_draft_discard,
	.log_path = sa_log_path,
	.diff_each = sa_diff_each,
	.reject = sa_reject,
	.override = sa_override,
	.request_changes = sa_request_changes,
	.follow_up = sa_follow_up,
	.cancel = sa_cancel,
	.confirm = sa_confirm,
	.approve = sa_approve,
	.pick = sa_pick,
	.submit = sa_submit,
};

/* A dashboard job reads once, on the caller's thread: no worker. */
static struct source_api *api_open(struct config *cfg, const char *url, const char *token,
                                   struct err *e)
{
	struct client *c = client_open(url, token, e);
	if (!c)
		return NULL;
	struct source_api *a = xcalloc(1, sizeof *a);
	a->s.ops = &api_ops;
	a->s.cfg = cfg;
	a->s.data_dir = xstrdup("");
	a->c = c;
	a->url = xstrdup(url);
	a->s.server = a->url;
	a->token = xstrdup(token ? token : "");
	pthread_mutex_init(&a->mu, NULL);
	pthread_cond_init(&a->cv, NULL);
	return a;
}

struct source *source_api_job(struct config *cfg, const char *url, const char *token,
                              struct err *e)
{
	struct source_api *a = api_open(cfg, url, token, e);
	return a ? &a->s : NULL;
}

struct source *source_api_new(struct config *cfg, const char *url, const char *token,
                              struct err *e)
{
	struct source_api *a = api_open(cfg, url, token, e);
	if (!a)
		return NULL;
	const char *tmp = getenv("TMPDIR");
	char *tmpl = xasprintf("%s/paddock-remote.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	a->dir = mkdtemp(tmpl) ? tmpl : NULL;
	if (!a->dir) {
		err_errno(e, "%s", _("cannot make a private folder for the logs of the remote "
		                     "dashboard"));
		free(tmpl);
		sa_close(&a->s);
		return NULL;
	}
	/* The first list before the first screen: it is not empty for a
	 * moment. */
	struct buf text = {0};
	json_t *all = fetch_all(a->c, &text);
	if (!all) {
		buf_free(&text);
		json_t *j = client_get_json(a->c, "/tasks?limit=1", e);
		json_decref(j);
		sa_close(&a->s);
		return NULL;
	}
	a->last = xstrdup(text.data ? text.data : "");
	snapshot_take(a, all);
	json_decref(all);
	buf_free(&text);
	if (pthread_create(&a->th, NULL, worker, a) != 0) {
		err_set(e, "%s", _("cannot start the remote dashboard's reader"));
		sa_close(&a->s);
		return NULL;
	}
	a->started = 1;
	return &a->s;
}
