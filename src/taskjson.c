#include "autoconfig.h"
#include "taskjson.h"

#include <string.h>
#include <time.h>

#include "clock.h"
#include "gate.h"
#include "group.h"
#include "reminder.h"
#include "sanitize.h"
#include "store_github.h"
#include "task.h"

static json_t *steps_json(const struct task_row *t)
{
	json_t *a = json_array();
	for (size_t i = 0; i < t->nsteps; i++) {
		/* Unix time, to the millisecond (TASKJSON_DUMP prints it so). */
		double at = (double)(long long)(t->steps[i].time * 1000 + 0.5) / 1000;
		json_array_append_new(a, json_pack("[f,s]", at, task_status_name(t->steps[i].status)));
	}
	return a;
}

static json_t *nullable(const char *s)
{
	return s ? json_string(s) : json_null();
}

/* The budget that applies to t: its own (0: no limit), else the
 * configuration's limits.budget (cfg NULL: not known).  *from is "task",
 * "config", or NULL when neither gives one. */
double taskjson_budget(const struct task_row *t, const struct config *cfg,
                          const char **from)
{
	if (t->budget >= 0) {
		*from = "task";
		return t->budget;
	}
	if (cfg && cfg->limits.budget > 0) {
		*from = "config";
		return cfg->limits.budget;
	}
	*from = NULL;
	return 0;
}

static json_t *usage_json(const struct task_usage *u)
{
	return json_pack("{s:I,s:I,s:I,s:I,s:I,s:f,s:b}",
	                 "input", (json_int_t)u->in, "output", (json_int_t)u->out,
	                 "cache_read", (json_int_t)u->cache_read,
	                 "cache_write", (json_int_t)u->cache_write,
	                 "requests", (json_int_t)u->requests, "cost", u->cost,
	                 "priced", u->priced);
}

/* 1 if pause p holds t back: t has not ended and its agent uses p's
 * endpoint. */
int taskjson_pause_applies(const struct config *cfg, const struct task_row *t,
                         const struct pause_row *p)
{
	const struct agent_conf *a = cfg ? config_find_agent(cfg, t->agent) : NULL;
	return a && a->endpoint && !strcmp(a->endpoint, p->endpoint) &&
	       !task_status_is_terminal(t->status);
}

json_t *taskjson_pr_error(const struct task_row *t)
{
	if (!t->pr_error || t->pr_url)
		return json_null();
	return json_pack("{s:s,s:f,s:i,s:o}", "message", t->pr_error, "at", t->pr_error_at,
	                 "attempts", t->pr_attempts, "retry_at",
	                 t->pr_retry_at > 0 ? json_real(t->pr_retry_at) : json_null());
}

json_t *taskjson_task(const struct task_row *t, const struct config *cfg)
{
	json_t *j = json_object();
	json_object_set_new(j, "id", json_string(t->id));
	json_object_set_new(j, "status", json_string(task_status_name(t->status)));
	json_object_set_new(j, "repo", json_string(t->repo));
	json_object_set_new(j, "agent", json_string(t->agent));
	json_object_set_new(j, "text", json_string(t->text));
	json_object_set_new(j, "branch", json_string(t->branch));
	json_object_set_new(j, "base", nullable(t->base));
	json_object_set_new(j, "head", nullable(t->head));
	/* The head the reviewer last asked changes of: paddock diff
	 * --since-review starts there (null until changes were asked). */
	json_object_set_new(j, "reviewed_head", nullable(t->reviewed_head));
	json_object_set_new(j, "error", nullable(t->error));
	json_object_set_new(j, "created", json_real(t->created));
	json_object_set_new(j, "updated", json_real(t->updated));
	json_object_set_new(j, "cancel_requested", json_boolean(t->cancel_requested));
	json_object_set_new(j, "steps", steps_json(t));
	json_object_set_new(j, "round", json_integer(t->round));
	json_object_set_new(j, "summary", nullable(t->summary));
	json_object_set_new(j, "pull_request", nullable(t->pr_url));
	json_object_set_new(j, "pull_request_error", taskjson_pr_error(t));
	json_object_set_new(j, "pushed", nullable(t->pushed));
	json_object_set_new(j, "sandbox_kept", json_boolean(t->sandbox_kept));
	json_object_set_new(j, "pending", nullable(t->pending));
	const char *from;
	double budget = taskjson_budget(t, cfg, &from);
	json_object_set_new(j, "budget", budget > 0 ? json_real(budget) : json_null());
	json_object_set_new(j, "budget_from", nullable(from));
	json_object_set_new(j, "budget_tokens", cfg && cfg->limits.budget_tokens ?
	                    json_integer((json_int_t)cfg->limits.budget_tokens) : json_null());
	json_object_set_new(j, "usage", usage_json(&t->usage));
	json_object_set_new(j, "reason", nullable(t->reason));
	json_object_set_new(j, "session", nullable(t->session));
	json_object_set_new(j, "attempts", json_integer(t->attempts));
	json_object_set_new(j, "failed_round", t->failed_round ?
		json_pack("{s:i,s:o,s:o}", "round", t->failed_round, "head",
		          nullable(t->failed_head), "error", nullable(t->failed_why)) :
		json_null());
	json_object_set_new(j, "follow_of", nullable(t->follow_of));
	json_object_set_new(j, "callback_url", nullable(t->callback_url));
	json_t *md = t->metadata ? json_loads(t->metadata, 0, NULL) : NULL;
	json_object_set_new(j, "metadata", json_is_object(md) ? md : json_null());
	/* Workflows (schema 9). */
	json_object_set_new(j, "recipe", nullable(t->recipe));
	json_t *in = t->inputs ? json_loads(t->inputs, 0, NULL) : NULL;
	json_object_set_new(j, "inputs", json_is_object(in) ? in : json_null());
	if (in && !json_is_object(in))
		json_decref(in);
	json_object_set_new(j, "base_ref", nullable(t->base_ref));
	json_object_set_new(j, "test", nullable(t->test_cmd));
	json_object_set_new(j, "timeout", t->timeout > 0 ? json_real(t->timeout) : json_null());
	json_object_set_new(j, "dry_run", json_boolean(t->dry_run));
	json_object_set_new(j, "approval", json_string(t->approval ? t->approval : "review"));
	json_object_set_new(j, "fix_rounds", t->fix_rounds >= 0 ? json_integer(t->fix_rounds)
	                                                        : json_null());
	json_t *ct = t->contract ? json_loads(t->contract, 0, NULL) : NULL;
	json_object_set_new(j, "contract", json_is_array(ct) ? ct : json_null());
	if (ct && !json_is_array(ct))
		json_decref(ct);
	json_object_set_new(j, "group", nullable(t->group_id));
	json_object_set_new(j, "confirm", nullable(t->confirm));
	json_object_set_new(j, "estimate", t->confirm ? json_real(t->estimate) : json_null());
	json_t *dr = t->dry_run_record ? json_loads(t->dry_run_record, 0, NULL) : NULL;
	json_object_set_new(j, "dry_run_record", json_is_object(dr) ? dr : json_null());
	if (dr && !json_is_object(dr))
		json_decref(dr);
	json_object_set_new(j, "queued_by", nullable(t->queued_by));
	/* Reminders sent for the gate it waits at (reminder.h). */
	json_object_set_new(j, "gate_reminders", json_integer(t->reminders));
	if (md && !json_is_object(md))
		json_decref(md);
	return j;
}

static json_t *egress_json(const struct egress_row *r)
{
	json_t *o = json_object();
	json_object_set_new(o, "round", json_integer(r->round));
	json_object_set_new(o, "time", json_real(r->time));
	json_object_set_new(o, "step", nullable(r->step));
	json_object_set_new(o, "kind", nullable(r->kind));
	json_object_set_new(o, "endpoint", nullable(r->endpoint));
	json_object_set_new(o, "host", nullable(r->host));
	json_object_set_new(o, "port", r->port ? json_integer(r->port) : json_null());
	json_object_set_new(o, "method", nullable(r->method));
	json_object_set_new(o, "path", nullable(r->path));
	json_object_set_new(o, "status", r->status ? json_integer(r->status) : json_null());
	json_object_set_new(o, "up", json_integer((json_int_t)r->up));
	json_object_set_new(o, "down", json_integer((json_int_t)r->down));
	json_object_set_new(o, "ms", json_real(r->ms));
	json_object_set_new(o, "verdict", nullable(r->verdict));
	json_object_set_new(o, "reason", nullable(r->reason));
	return o;
}

/* show --json: the task with its gate summary, rounds, decisions, egress
 * records and the pauses that hold it back. */
/* The task's place on GitHub (store_github.h), or null. */
static json_t *github_json(struct store *s, const struct task_row *t)
{
	struct gh_link l;
	struct err e = {{0}};
	if (store_github_link(s, t->id, &l, &e) != 1)
		return json_null();
	json_t *j = json_pack("{s:s, s:o, s:o, s:o, s:o, s:o, s:b}", "repo", l.gh_repo,
	                      "issue", l.issue ? json_integer(l.issue) : json_null(),
	                      "issue_comment", l.issue_comment ? json_integer(l.issue_comment)
	                                                       : json_null(),
	                      "pull_request", l.pr ? json_integer(l.pr) : json_null(),
	                      "pr_state", nullable(l.pr_state), "checks", nullable(l.checks),
	                      "branch_deleted", l.branch_deleted);
	gh_link_free(&l);
	return j ? j : json_null();
}

/* A group member's place: {"position", "size", "picked"}, or null. */
static json_t *group_place_json(struct store *s, const struct task_row *t)
{
	int pos, n;
	struct err e = {{0}};
	if (!t->group_id || group_position(s, t, &pos, &n, &e) < 0 || !pos)
		return json_null();
	struct task_group g;
	json_t *picked = json_null();
	if (store_group_get(s, t->group_id, &g, &e) == 0) {
		picked = nullable(g.chosen);
		task_group_free(&g);
	}
	return json_pack("{s:i,s:i,s:o}", "position", pos, "size", n, "picked", picked);
}

json_t *taskjson_row(struct store *s, const struct task_row *t, const struct config *cfg)
{
	json_t *j = taskjson_task(t, cfg);
	json_object_set_new(j, "group_position", group_place_json(s, t));
	struct gh_link l;
	struct err e = {{0}};
	json_t *state = json_null();
	if (t->pr_url && store_github_link(s, t->id, &l, &e) == 1) {
		state = nullable(l.pr_state);
		gh_link_free(&l);
	}
	json_object_set_new(j, "pr_state", state);
	return j;
}

json_t *taskjson_waiting(struct store *s, const char *id)
{
	struct store_action a;
	struct err e = {{0}};
	if (store_action_open(s, id, &a, &e) != 1)
		return json_null();
	json_t *j = json_pack("{s:s,s:s,s:f,s:s,s:o}", "action", a.action, "actor",
	                      a.actor ? a.actor : "?", "requested", a.requested, "state",
	                      a.state && !strcmp(a.state, "running") ? "running" : "pending",
	                      "by", a.state && !strcmp(a.state, "running") ? nullable(a.by)
	                                                                   : json_null());
	store_action_free(&a);
	return j ? j : json_null();
}

/* The review limit that keeps a queued task queued (reminder.h), or null. */
static json_t *review_hold_json(struct store *s, const struct task_row *t,
                                const struct config *cfg)
{
	if (t->status != TASK_QUEUED || !cfg || !reminder_limit_on(cfg))
		return json_null();
	struct reminder_gates g;
	struct reminder_hold h;
	struct err e = {{0}};
	json_t *j = json_null();
	if (reminder_count(s, &g, &e) == 0 && reminder_hold_of(cfg, &g, t->repo, &h))
		j = json_pack("{s:i,s:i,s:o}", "at_review", h.at_review, "max", h.max, "repo",
		              h.of_repo ? json_string(t->repo) : json_null());
	reminder_gates_free(&g);
	return j;
}

json_t *taskjson_full(struct store *s, const struct task_row *t,
                      const struct config *cfg)
{
	json_t *j = taskjson_row(s, t, cfg);
	struct err e = {{0}};
	json_t *g = gate_summary_json(s, t, &e);
	json_object_set_new(j, "gate", g ? g : json_null());
	struct task_round *r;
	size_t nr;
	json_t *ra = json_array();
	if (store_rounds(s, t->id, &r, &nr, &e) == 0) {
		for (size_t i = 0; i < nr; i++)
			json_array_append_new(ra, json_pack("{s:i,s:o,s:o,s:f,s:f,s:s}", "round", r[i].n,
			                                    "from", nullable(r[i].from), "head",
			                                    nullable(r[i].head), "started",
			                                    r[i].started, "ended", r[i].ended, "kind",
			                                    r[i].kind ? r[i].kind : "agent"));
		task_rounds_free(r, nr);
	}
	json_object_set_new(j, "rounds", ra);
	json_object_set_new(j, "github", github_json(s, t));
	struct task_decision *d;
	size_t nd;
	json_t *da = json_array();
	if (store_decisions(s, t->id, &d, &nd, &e) == 0) {
		for (size_t i = 0; i < nd; i++)
			json_array_append_new(da, json_pack("{s:i,s:s,s:o,s:s,s:f}", "round", d[i].round,
			                                    "action", d[i].action, "notes",
			                                    nullable(d[i].notes), "actor", d[i].actor,
			                                    "at", d[i].at));
		task_decisions_free(d, nd);
	}
	json_object_set_new(j, "decisions", da);
	struct egress_row *er;
	size_t ne;
	json_t *ea = json_array();
	if (store_egress_list(s, t->id, &er, &ne, &e) == 0) {
		for (size_t i = 0; i < ne; i++)
			json_array_append_new(ea, egress_json(&er[i]));
		store_egress_free(er, ne);
	}
	json_object_set_new(j, "egress", ea);
	struct pause_row *p;
	size_t np;
	json_t *pa = json_array();
	if (store_pauses_active(s, clock_wall(), &p, &np, &e) == 0) {
		for (size_t i = 0; i < np; i++)
			if (taskjson_pause_applies(cfg, t, &p[i]))
				json_array_append_new(pa, json_pack("{s:s,s:f,s:o,s:o}", "endpoint",
				                                    p[i].endpoint, "until", p[i].until,
				                                    "status", p[i].status ?
				                                    json_integer(p[i].status) : json_null(),
				                                    "task", nullable(p[i].task_id)));
		store_pauses_free(p, np);
	}
	json_object_set_new(j, "pauses", pa);
	json_object_set_new(j, "review_hold", review_hold_json(s, t, cfg));
	struct webhook_row *w;
	size_t nw;
	json_t *wa = json_array();
	if (store_webhook_list(s, t->id, &w, &nw, &e) == 0) {
		for (size_t i = 0; i < nw; i++) {
			json_t *o = json_pack("{s:s,s:s,s:s,s:i,s:f,s:o,s:o}", "event", w[i].event,
			                      "delivery", w[i].delivery, "to",
			                      w[i].url ? "callback" : "webhook", "attempts",
			                      w[i].attempts, "created", w[i].created, "delivered",
			                      w[i].delivered_at > 0 ? json_real(w[i].delivered_at)
			                                            : json_null(),
			                      "last_error", nullable(w[i].last_error));
			/* Each try, with its HTTP status (0: none came back). */
			struct webhook_attempt *at;
			size_t na;
			json_t *tries = json_array();
			if (store_webhook_attempts(s, w[i].id, &at, &na, &e) == 0) {
				for (size_t k = 0; k < na; k++)
					json_array_append_new(tries, json_pack("{s:f,s:o,s:o}", "at", at[k].at,
					                      "status", at[k].status ? json_integer(at[k].status)
					                                             : json_null(),
					                      "error", nullable(at[k].error)));
				store_webhook_attempts_free(at, na);
			}
			json_object_set_new(o, "tries", tries);
			json_array_append_new(wa, o);
		}
		store_webhooks_free(w, nw);
	}
	json_object_set_new(j, "webhooks", wa);
	json_object_set_new(j, "waiting_decision", taskjson_waiting(s, t->id));
	return j;
}


json_t *taskjson_recipe(const struct recipe_conf *r)
{
	json_t *in = json_array();
	for (size_t i = 0; i < r->ninputs; i++)
		json_array_append_new(in, json_pack("{s:s,s:o}", "name", r->inputs[i].name, "help",
		                                    nullable(r->inputs[i].help)));
	json_t *ct = json_array();
	for (size_t i = 0; i < r->ncontract; i++)
		json_array_append_new(ct, json_string(r->contract[i]));
	json_t *j = json_object();
	json_object_set_new(j, "name", json_string(r->name));
	json_object_set_new(j, "description", nullable(r->description));
	json_object_set_new(j, "builtin", json_boolean(r->builtin));
	json_object_set_new(j, "inputs", in);
	json_object_set_new(j, "repo", nullable(r->repo));
	json_object_set_new(j, "agent", nullable(r->agent));
	json_object_set_new(j, "base", nullable(r->base));
	json_object_set_new(j, "test", nullable(r->test));
	json_object_set_new(j, "budget", r->budget >= 0 ? json_real(r->budget) : json_null());
	json_object_set_new(j, "timeout", r->timeout > 0 ? json_real(r->timeout) : json_null());
	json_object_set_new(j, "approval", r->approval != APPROVAL_UNSET
	                    ? json_string(config_approval_name(r->approval)) : json_null());
	json_object_set_new(j, "confirm_over", r->confirm_over >= 0 ? json_real(r->confirm_over)
	                                                             : json_null());
	json_object_set_new(j, "fix_rounds", r->fix_rounds >= 0 ? json_integer(r->fix_rounds)
	                                                         : json_null());
	json_object_set_new(j, "contract", ct);
	json_object_set_new(j, "prompt", nullable(r->prompt));
	return j;
}

json_t *taskjson_draft_comment(const struct review_comment *c)
{
	json_t *j = json_object();
	const char *p = c->path ? c->path : "", *t = c->text ? c->text : "";
	const char *m = c->comment ? c->comment : "";
	json_object_set_new(j, "n", json_integer(c->n));
	json_object_set_new(j, "round", json_integer(c->round));
	json_object_set_new(j, "path", sanitize_json_string(p, strlen(p)));
	json_object_set_new(j, "line", json_integer(c->line));
	json_object_set_new(j, "old", json_boolean(c->old));
	json_object_set_new(j, "text", sanitize_json_string(t, strlen(t)));
	json_object_set_new(j, "comment", sanitize_json_string(m, strlen(m)));
	json_object_set_new(j, "created", json_real(c->created));
	return j;
}

json_t *taskjson_draft(const char *id, const struct review_comment *c, size_t n)
{
	json_t *arr = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(arr, taskjson_draft_comment(&c[i]));
	return json_pack("{s:s,s:o}", "id", id, "comments", arr);
}
