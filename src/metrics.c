/* metrics: GET /metrics's exposition (metrics.h). */
#include "autoconfig.h"
#include "metrics.h"

#include <stdlib.h>
#include <string.h>
#include "clock.h"
#include "ghsync.h"

const char *const metrics_buckets[METRICS_NBUCKETS] = {
	"1", "5", "15", "30", "60", "120", "300", "600", "1800", "3600", "7200", "14400",
	"28800", "86400",
};

/* The length of the UTF-8 sequence at p (at most n bytes), 0 when it is
 * not one (overlong forms, surrogates and past U+10FFFF included). */
static size_t utf8_len(const unsigned char *p, size_t n)
{
	if (p[0] < 0x80)
		return 1;
	size_t len = p[0] >= 0xc2 && p[0] <= 0xdf ? 2 : p[0] >= 0xe0 && p[0] <= 0xef ? 3
	             : p[0] >= 0xf0 && p[0] <= 0xf4 ? 4 : 0;
	if (!len || len > n)
		return 0;
	for (size_t i = 1; i < len; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	if ((p[0] == 0xe0 && p[1] < 0xa0) || (p[0] == 0xed && p[1] >= 0xa0) ||
	    (p[0] == 0xf0 && p[1] < 0x90) || (p[0] == 0xf4 && p[1] >= 0x90))
		return 0;
	return len;
}

void metrics_escape(struct buf *out, const char *v)
{
	const unsigned char *p = (const unsigned char *)v;
	size_t n = strlen(v);
	while (n) {
		size_t l = utf8_len(p, n);
		if (!l) {
			buf_adds(out, "\xef\xbf\xbd");
			l = 1;
		} else if (*p == '\\') {
			buf_adds(out, "\\\\");
		} else if (*p == '"') {
			buf_adds(out, "\\\"");
		} else if (*p == '\n') {
			buf_adds(out, "\\n");
		} else {
			buf_add(out, p, l);
		}
		p += l;
		n -= l;
	}
}

/* A family's HELP and TYPE lines (help has no backslash or newline). */
static void family(struct buf *out, const char *name, const char *type, const char *help)
{
	buf_printf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* One sample: name{names[0]="values[0]",...} value; names NULL-ended. */
static void sample(struct buf *out, const char *name, const char *const *names,
                   char *const *values, double v)
{
	buf_adds(out, name);
	for (size_t i = 0; names && names[i]; i++) {
		buf_printf(out, "%s%s=\"", i ? "," : "{", names[i]);
		metrics_escape(out, values[i]);
		buf_addc(out, '"');
		if (!names[i + 1])
			buf_addc(out, '}');
	}
	buf_printf_c(out, " %.15g\n", v);
}

/* The families that are the store's counters as they are. */
static const struct simple {
	const char *name, *type, *help, *key;
	const char *labels[4];
} simple[] = {
	{ "paddock_tasks", "gauge", "Tasks in the store by repo and status.", "tasks",
	  { "repo", "status" } },
	{ "paddock_tasks_started_total", "counter", "Tasks started (moved from queued to "
	  "preparing), by repo.", "started", { "repo" } },
	{ "paddock_tasks_ended_total", "counter", "Tasks that came to an end status (done, "
	  "failed, rejected, cancelled, lost), by repo and status.", "ended",
	  { "repo", "status" } },
	{ "paddock_task_failures_total", "counter", "Tasks that failed, by repo and reason "
	  "(paddock(1), the reason words; unknown when none was given).", "failures",
	  { "repo", "reason" } },
	{ "paddock_task_attempts_interrupted_total", "counter", "Attempts interrupted because "
	  "paddock stopped or died under them, by repo and what became of the task (queued "
	  "again or lost); crashed failures are paddock_task_failures_total's.", "interrupted",
	  { "repo", "outcome" } },
	{ "paddock_rounds_total", "counter", "Rounds started (the agent's first, fix, "
	  "requested and reviewer's rounds), by repo.", "rounds", { "repo" } },
	{ "paddock_model_tokens_total", "counter", "Model tokens the gateways counted, by "
	  "repo, agent and kind (input, output, cache_read, cache_write).", "tokens",
	  { "repo", "agent", "kind" } },
	{ "paddock_model_cost_usd_total", "counter", "Money spent on model calls in US "
	  "dollars (USD), as the gateways price them, by repo and agent.", "cost",
	  { "repo", "agent" } },
	{ "paddock_gateway_requests_total", "counter", "Requests and tunnels the sandboxes' "
	  "gateways recorded, by endpoint (empty for the proxy), kind and verdict (allowed or "
	  "refused).", "egress", { "endpoint", "kind", "verdict" } },
	{ "paddock_webhook_delivery_failures_total", "counter", "Webhook delivery attempts "
	  "that failed (no answer, or not 2xx).", "webhook_failures", { NULL } },
	{ "paddock_github_rate_limit_waits_total", "counter", "Times GitHub told paddock to "
	  "wait (rate limits, Retry-After), by API.", "github_waits", { "api" } },
};

static const struct store_metric *find(const struct store_metric *m, size_t n,
                                       const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(m[i].key, key))
			return &m[i];
	return NULL;
}

/* The wait since a unix time (0: none waits). */
static double age(double since, double now)
{
	return since > 0 && now > since ? now - since : 0;
}

/* One histogram family of the steps: queued's time (queue) or every
 * other step's. */
static void steps_histogram(struct buf *out, const struct store_metric *m, size_t n,
                            int queue)
{
	const char *name = queue ? "paddock_queue_wait_seconds" : "paddock_step_duration_seconds";
	family(out, name, "histogram", queue
	       ? "Seconds tasks waited in the queue before they started."
	       : "Seconds tasks spent in each step (status) before the next, by step.");
	for (size_t i = 0; i < n; i++) {
		if (strcmp(m[i].key, "step_seconds_sum") != 0 ||
		    (strcmp(m[i].label[0], "queued") == 0) != queue)
			continue;
		const char *step = m[i].label[0];
		double count[METRICS_NBUCKETS + 1] = {0}, total = 0;
		for (size_t j = 0; j < n; j++) {
			if (strcmp(m[j].key, "step_seconds") || strcmp(m[j].label[0], step))
				continue;
			size_t b = 0;
			while (b < METRICS_NBUCKETS && strcmp(metrics_buckets[b], m[j].label[1]))
				b++;
			count[b] += m[j].value[0];
			total += m[j].value[0];
		}
		const char *names[] = { "step", "le", NULL }, *step_only[] = { "step", NULL };
		char *values[2] = { (char *)step, NULL };
		const char *const *ln = queue ? names + 1 : names;
		char *const *lv = queue ? values + 1 : values;
		struct buf nm = {0};
		buf_printf(&nm, "%s_bucket", name);
		double cum = 0;
		for (size_t b = 0; b <= METRICS_NBUCKETS; b++) {
			cum += count[b];
			values[1] = (char *)(b < METRICS_NBUCKETS ? metrics_buckets[b] : "+Inf");
			sample(out, nm.data, ln, lv, cum);
		}
		buf_reset(&nm);
		buf_printf(&nm, "%s_sum", name);
		sample(out, nm.data, queue ? NULL : step_only, values, m[i].value[0]);
		buf_reset(&nm);
		buf_printf(&nm, "%s_count", name);
		sample(out, nm.data, queue ? NULL : step_only, values, total);
		buf_free(&nm);
	}
}

/* The open tasks' share of their budgets: the larger of money and tokens. */
static void budgets(struct buf *out, const struct store_metric *m, size_t n,
                    const struct config *cfg)
{
	family(out, "paddock_budget_usd", "gauge", "The budget in US dollars (USD) a task may "
	       "spend on model calls unless it has its own ([limits] budget; 0: none).");
	buf_printf_c(out, "paddock_budget_usd %.15g\n", cfg->limits.budget);
	family(out, "paddock_budget_tokens", "gauge", "The model tokens a task may use "
	       "([limits] budget-tokens; 0: none).");
	buf_printf_c(out, "paddock_budget_tokens %.15g\n", (double)cfg->limits.budget_tokens);
	family(out, "paddock_task_budget_used_ratio", "gauge", "How much of its budget each "
	       "task between its start and its end has spent (1: all), the larger of its money "
	       "and its tokens; tasks without a budget are not listed.");
	for (size_t i = 0; i < n; i++) {
		if (strcmp(m[i].key, "open_task") != 0)
			continue;
		double usd = m[i].value[2] >= 0 ? m[i].value[2] : cfg->limits.budget, r = -1;
		if (usd > 0)
			r = m[i].value[0] / usd;
		if (cfg->limits.budget_tokens && m[i].value[1] / (double)cfg->limits.budget_tokens > r)
			r = m[i].value[1] / (double)cfg->limits.budget_tokens;
		if (r < 0)
			continue;
		const char *names[] = { "task", "repo", "agent", NULL };
		sample(out, "paddock_task_budget_used_ratio", names, m[i].label, r);
	}
}

void metrics_render(struct buf *out, const struct store_metric *m, size_t n,
                    const struct config *cfg, double now)
{
	family(out, "paddock_build_info", "gauge", "The paddock that answers: its version.");
	const char *vn[] = { "version", NULL };
	char *vv[] = { (char *)PACKAGE_VERSION };
	sample(out, "paddock_build_info", vn, vv, 1);
	for (size_t f = 0; f < sizeof simple / sizeof *simple; f++) {
		const struct simple *s = &simple[f];
		family(out, s->name, s->type, s->help);
		int any = 0;
		for (size_t i = 0; i < n; i++) {
			if (strcmp(m[i].key, s->key) != 0)
				continue;
			sample(out, s->name, s->labels[0] ? s->labels : NULL, m[i].label, m[i].value[0]);
			any = 1;
		}
		/* A counter without labels is there from the start, for rate(),
		 * and one by repo alone for each configured repo (an alert on
		 * tasks that never started needs the series). */
		if (!any && !s->labels[0])
			sample(out, s->name, NULL, NULL, 0);
		for (size_t r = 0; s->labels[0] && !s->labels[1] && !strcmp(s->labels[0], "repo") &&
		                   r < cfg->nrepos; r++) {
			int seen = 0;
			for (size_t i = 0; i < n && !seen; i++)
				seen = !strcmp(m[i].key, s->key) && !strcmp(m[i].label[0], cfg->repos[r].name);
			char *name[] = { cfg->repos[r].name };
			if (!seen)
				sample(out, s->name, s->labels, name, 0);
		}
	}
	const struct store_metric *q = find(m, n, "queue_oldest");
	const struct store_metric *g = find(m, n, "gate_oldest");
	const struct store_metric *k = find(m, n, "kept");
	family(out, "paddock_queue_depth", "gauge", "Tasks queued, waiting to start.");
	buf_printf_c(out, "paddock_queue_depth %.15g\n", q ? q->value[1] : 0);
	family(out, "paddock_queue_oldest_age_seconds", "gauge", "Seconds the longest queued "
	       "task has waited (0: none queued).");
	buf_printf_c(out, "paddock_queue_oldest_age_seconds %.3f\n", age(q ? q->value[0] : 0, now));
	family(out, "paddock_gate_waiting_tasks", "gauge", "Tasks waiting at the review gate "
	       "for a person.");
	buf_printf_c(out, "paddock_gate_waiting_tasks %.15g\n", g ? g->value[1] : 0);
	family(out, "paddock_gate_oldest_wait_seconds", "gauge", "Seconds the task that has "
	       "waited longest at the review gate has waited (0: none waits).");
	buf_printf_c(out, "paddock_gate_oldest_wait_seconds %.3f\n", age(g ? g->value[0] : 0, now));
	double working = 0;
	for (size_t i = 0; i < n; i++)
		if (!strcmp(m[i].key, "tasks") && (!strcmp(m[i].label[1], "preparing") ||
		    !strcmp(m[i].label[1], "running") || !strcmp(m[i].label[1], "testing")))
			working += m[i].value[0];
	family(out, "paddock_sandboxes_running", "gauge", "Sandboxes there now: of the tasks "
	       "at work (working), and kept for a task at the gate (kept).");
	buf_printf_c(out, "paddock_sandboxes_running{state=\"working\"} %.15g\n", working);
	buf_printf_c(out, "paddock_sandboxes_running{state=\"kept\"} %.15g\n", k ? k->value[0] : 0);
	steps_histogram(out, m, n, 0);
	steps_histogram(out, m, n, 1);
	budgets(out, m, n, cfg);
	family(out, "paddock_github_rate_limit_wait_seconds", "gauge", "Seconds left of "
	       "GitHub's wait, by API (0: none).");
	for (size_t i = 0; i < n; i++)
		if (!strcmp(m[i].key, "github_wait")) {
			const char *names[] = { "api", NULL };
			double left = m[i].value[0] > now ? m[i].value[0] - now : 0;
			sample(out, "paddock_github_rate_limit_wait_seconds", names, m[i].label, left);
		}
	family(out, "paddock_github_sync_errors_total", "counter", "Errors this serve's GitHub "
	       "syncs met (polls and webhook deliveries) since it started.");
	buf_printf_c(out, "paddock_github_sync_errors_total %lu\n", ghsync_errors());
}

char *metrics_text(struct store *st, const struct config *cfg, struct err *e)
{
	struct store_metric *m;
	size_t n;
	if (store_metrics_read(st, &m, &n, e) < 0)
		return NULL;
	struct buf out = {0};
	metrics_render(&out, m, n, cfg, clock_wall());
	store_metrics_free(m, n);
	return buf_detach(&out);
}
