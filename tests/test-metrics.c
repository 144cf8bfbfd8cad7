/* test-metrics: GET /metrics's exposition (metrics.h): label values
 * escaped as the text format says, hostile bytes included; the steps'
 * histograms cumulative with +Inf equal to _count; and the store's
 * counters (schema 16's triggers) following a task's life: its moves,
 * its failure's reason set after the move, its usage as totals, its
 * rounds, its gateway's records. */
#include "autoconfig.h"
#include "metrics.h"

#include <stdlib.h>
#include <string.h>
#include "store.h"
#include "tap.h"
#include "testlib.h"

static char *esc(const char *v)
{
	struct buf b = {0};
	metrics_escape(&b, v);
	return b.data ? b.data : xstrdup("");
}

static void test_escape(void)
{
	char *s;
	is_str(s = esc("plain-repo_1.x"), "plain-repo_1.x", "a plain value is as it is");
	free(s);
	is_str(s = esc("we\"ird\\repo\nx"), "we\\\"ird\\\\repo\\nx",
	       "quote, backslash and newline escaped");
	free(s);
	is_str(s = esc("caf\xc3\xa9 \xe2\x82\xac"), "caf\xc3\xa9 \xe2\x82\xac", "UTF-8 kept");
	free(s);
	is_str(s = esc("a\xff" "b\xc0\xaf" "c\xed\xa0\x80"),
	       "a\xef\xbf\xbd" "b\xef\xbf\xbd\xef\xbf\xbd" "c\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd",
	       "bytes that are not UTF-8 (overlong, surrogate) become U+FFFD");
	free(s);
	is_str(s = esc("tab\there"), "tab\there", "a tab needs no escape");
	free(s);
}

/* The value of the sample that starts with prefix (its name and labels),
 * or -1. */
static double value_of(const char *text, const char *prefix)
{
	size_t n = strlen(prefix);
	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (!strncmp(l, prefix, n) && l[n] == ' ')
			return strtod(l + n + 1, NULL);
	return -1;
}

static void test_histogram(void)
{
	struct store_metric m[] = {
		{ "step_seconds", { "running", "5", "" }, { 2, 0, 0 } },
		{ "step_seconds", { "running", "600", "" }, { 1, 0, 0 } },
		{ "step_seconds", { "running", "+Inf", "" }, { 1, 0, 0 } },
		{ "step_seconds_sum", { "running", "", "" }, { 100000.5, 0, 0 } },
		{ "step_seconds", { "queued", "1", "" }, { 3, 0, 0 } },
		{ "step_seconds_sum", { "queued", "", "" }, { 1.5, 0, 0 } },
		{ "tasks", { "we\"ird\\repo", "review", "" }, { 1, 0, 0 } },
		{ "open_task", { "t1", "notes", "script" }, { 1.5, 10, -1 } },
		{ "open_task", { "t2", "notes", "script" }, { 0.5, 900, 1 } },
	};
	struct config cfg;
	memset(&cfg, 0, sizeof cfg);
	cfg.limits.budget = 2;
	cfg.limits.budget_tokens = 1000;
	struct repo_conf repo;
	memset(&repo, 0, sizeof repo);
	repo.name = (char *)"notes";
	cfg.repos = &repo;
	cfg.nrepos = 1;
	struct buf out = {0};
	metrics_render(&out, m, sizeof m / sizeof *m, &cfg, 1e9);
	const char *t = out.data;
	ok(value_of(t, "paddock_step_duration_seconds_bucket{step=\"running\",le=\"1\"}") == 0,
	   "no step under a second");
	ok(value_of(t, "paddock_step_duration_seconds_bucket{step=\"running\",le=\"5\"}") == 2,
	   "le=5: 2");
	ok(value_of(t, "paddock_step_duration_seconds_bucket{step=\"running\",le=\"300\"}") == 2,
	   "le=300: still 2 (cumulative)");
	ok(value_of(t, "paddock_step_duration_seconds_bucket{step=\"running\",le=\"600\"}") == 3,
	   "le=600: 3");
	ok(value_of(t, "paddock_step_duration_seconds_bucket{step=\"running\",le=\"86400\"}") == 3,
	   "le=86400: 3");
	ok(value_of(t, "paddock_step_duration_seconds_bucket{step=\"running\",le=\"+Inf\"}") == 4,
	   "le=+Inf: all 4");
	ok(value_of(t, "paddock_step_duration_seconds_count{step=\"running\"}") == 4,
	   "_count equals +Inf");
	ok(value_of(t, "paddock_step_duration_seconds_sum{step=\"running\"}") == 100000.5, "_sum");
	ok(value_of(t, "paddock_step_duration_seconds_count{step=\"queued\"}") < 0,
	   "queued is not a step's duration...");
	ok(value_of(t, "paddock_queue_wait_seconds_bucket{le=\"1\"}") == 3 &&
	   value_of(t, "paddock_queue_wait_seconds_bucket{le=\"+Inf\"}") == 3 &&
	   value_of(t, "paddock_queue_wait_seconds_count") == 3 &&
	   value_of(t, "paddock_queue_wait_seconds_sum") == 1.5, "... but the queue's wait");
	ok(value_of(t, "paddock_tasks{repo=\"we\\\"ird\\\\repo\",status=\"review\"}") == 1,
	   "a hostile repo name escaped in its label");
	ok(value_of(t, "paddock_task_budget_used_ratio{task=\"t1\",repo=\"notes\",agent=\"script\"}")
	   == 0.75, "budget: the configuration's money (1.5 of 2)");
	ok(value_of(t, "paddock_task_budget_used_ratio{task=\"t2\",repo=\"notes\",agent=\"script\"}")
	   == 0.9, "budget: the larger of its own money and the tokens (900 of 1000)");
	ok(value_of(t, "paddock_tasks_started_total{repo=\"notes\"}") == 0 &&
	   value_of(t, "paddock_rounds_total{repo=\"notes\"}") == 0,
	   "a configured repo's counters by repo are there before its first task");
	ok(value_of(t, "paddock_webhook_delivery_failures_total") == 0,
	   "a counter without labels is 0 before anything happened");
	ok(strstr(t, "paddock_build_info{version=\"" PACKAGE_VERSION "\"} 1\n") != NULL,
	   "build info");
	buf_free(&out);
}

static double store_value(struct store *s, const char *key, const char *a, const char *b)
{
	struct store_metric *m;
	size_t n;
	struct err e = {{0}};
	double v = -1;
	if (store_metrics_read(s, &m, &n, &e) < 0)
		return -2;
	for (size_t i = 0; i < n; i++)
		if (!strcmp(m[i].key, key) && (!a || !strcmp(m[i].label[0], a)) &&
		    (!b || !strcmp(m[i].label[1], b)))
			v = m[i].value[0];
	store_metrics_free(m, n);
	return v;
}

static void test_store(const char *dir)
{
	struct store *s;
	struct err e = {{0}};
	if (store_open(&s, testlib_fmt("%s/metrics.db", dir), &e) < 0) {
		ok(0, "open a store: %s", e.msg);
		return;
	}
	char a[TASK_ID_LEN + 1], b[TASK_ID_LEN + 1];
	store_task_add(s, "notes", "script", "one", NULL, a, &e);
	store_task_add(s, "notes", "script", "two", NULL, b, &e);
	ok(store_value(s, "tasks", "notes", "queued") == 2, "two queued");
	ok(store_value(s, "queue_oldest", NULL, NULL) > 0, "the oldest queued has a time");
	store_task_start(s, a, &e);
	store_task_transition(s, a, TASK_RUNNING, NULL, &e);
	ok(store_value(s, "tasks", "notes", "queued") == 1 &&
	   store_value(s, "tasks", "notes", "running") == 1, "one queued, one running");
	ok(store_value(s, "started", "notes", NULL) == 1, "one started");
	ok(store_value(s, "step_seconds", "queued", NULL) == 1 &&
	   store_value(s, "step_seconds", "preparing", NULL) == 1,
	   "the queue's wait and the preparing step counted");
	struct task_usage u = { .in = 100, .out = 20, .cache_read = 5, .cost = 0.25, .priced = 1 };
	store_task_set_usage(s, a, &u, &e);
	u.in = 150;
	u.cost = 0.5;
	store_task_set_usage(s, a, &u, &e);
	struct store_metric *m;
	size_t n;
	double in = -1, out = -1, cost = -1;
	if (store_metrics_read(s, &m, &n, &e) == 0) {
		for (size_t i = 0; i < n; i++) {
			if (!strcmp(m[i].key, "tokens") && !strcmp(m[i].label[2], "input"))
				in = m[i].value[0];
			if (!strcmp(m[i].key, "tokens") && !strcmp(m[i].label[2], "output"))
				out = m[i].value[0];
			if (!strcmp(m[i].key, "cost") && !strcmp(m[i].label[1], "script"))
				cost = m[i].value[0];
		}
		store_metrics_free(m, n);
	}
	ok(in == 150 && out == 20 && cost == 0.5, "usage written as totals counted once "
	   "(input %g, output %g, cost %g)", in, out, cost);
	store_task_transition(s, a, TASK_FAILED, "it broke", &e);
	ok(store_value(s, "failures", "notes", "unknown") == 1, "a failure without a reason");
	store_task_set(s, a, "reason", "crashed", &e);
	ok(store_value(s, "failures", "notes", "unknown") == 0 &&
	   store_value(s, "failures", "notes", "crashed") == 1,
	   "its reason set after the move moves it");
	ok(store_value(s, "ended", "notes", "failed") == 1, "one ended, failed");
	store_egress_add(s, b, 1, "{\"kind\": \"model\", \"endpoint\": \"anthropic\", "
	                 "\"verdict\": \"refused\", \"reason\": \"over budget\"}", &e);
	ok(store_value(s, "egress", "anthropic", "model") == 1, "a gateway refusal by endpoint");
	store_close(s);
}

int main(void)
{
	const char *dir = testlib_tmpdir("metrics");
	test_escape();
	test_histogram();
	test_store(dir);
	testlib_end();
	return tap_done();
}
