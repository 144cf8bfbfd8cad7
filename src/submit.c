#include "autoconfig.h"
#include "submit.h"

#include <git2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "buf.h"
#include "i18n.h"
#include "recipe.h"
#include "units.h"

int submit_input_split(const char *arg, char **name, const char **value, struct err *e)
{
	const char *eq = strchr(arg, '=');
	if (!eq || eq == arg)
		return err_kind_set(e, ERR_INVALID, _("--input '%s': give it as NAME=VALUE"), arg);
	*name = xstrndup(arg, (size_t)(eq - arg));
	*value = eq + 1;
	return 0;
}

/* What a request resolves to before the store sees it; strings owned. */
struct plan {
	const struct recipe_conf *recipe;
	const struct repo_conf *repo;
	const struct agent_conf *agent;
	char *text, *inputs, *base, *contract;
	const char *test;
	double timeout, budget;
	int approval;
	int confirm;
	double estimate;
};

static void plan_free(struct plan *p)
{
	free(p->text);
	free(p->inputs);
	free(p->base);
	free(p->contract);
}

/* The recipe's inputs: every one given, no other, none empty; as a JSON
 * object for the task row. */
static int plan_inputs(struct plan *p, const struct submit_req *rq, struct err *e)
{
	const struct recipe_conf *r = p->recipe;
	if (!r) {
		if (rq->ninputs)
			return err_kind_set(e, ERR_INVALID, _("--input '%s' needs a recipe; name one "
			                                      "with --recipe NAME"), rq->input_names[0]);
		return 0;
	}
	json_t *o = json_object();
	for (size_t i = 0; i < rq->ninputs; i++) {
		const char *name = rq->input_names[i];
		size_t k;
		for (k = 0; k < r->ninputs && strcmp(r->inputs[k].name, name); k++)
			;
		if (k == r->ninputs) {
			struct buf list = {0};
			for (k = 0; k < r->ninputs; k++)
				buf_printf(&list, "%s%s", k ? ", " : "", r->inputs[k].name);
			err_kind_set(e, ERR_INVALID, r->ninputs ? _("recipe %s has no input '%s'; its "
			             "inputs are %s") : _("recipe %s has no input '%s'; it takes none%s"),
			             r->name, name, list.data ? list.data : "");
			buf_free(&list);
			json_decref(o);
			return -1;
		}
		if (json_object_get(o, name)) {
			json_decref(o);
			return err_kind_set(e, ERR_INVALID, _("--input %s is given twice; give each "
			                                      "input once"), name);
		}
		const char *v = rq->input_values[i];
		if (!v || !v[strspn(v, " \t\r\n")]) {
			json_decref(o);
			return err_kind_set(e, ERR_INVALID, _("--input %s is empty; say what it is"),
			                    name);
		}
		json_object_set_new(o, name, json_string(v));
	}
	for (size_t k = 0; k < r->ninputs; k++)
		if (!json_object_get(o, r->inputs[k].name)) {
			const struct recipe_input *in = &r->inputs[k];
			json_decref(o);
			return err_kind_set(e, ERR_INVALID, in->help
			                    ? _("recipe %s needs --input %s=VALUE (%s)")
			                    : _("recipe %s needs --input %s=VALUE%s"), r->name, in->name,
			                    in->help ? in->help : "");
		}
	/* In the recipe's order, whatever the request's: its first input is
	 * what lists show of the task (recipe_task_title). */
	json_t *ordered = json_object();
	for (size_t k = 0; k < r->ninputs; k++)
		json_object_set(ordered, r->inputs[k].name, json_object_get(o, r->inputs[k].name));
	json_decref(o);
	p->inputs = json_dumps(ordered, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(ordered);
	return 0;
}

/* text with the request's inputs in place of the placeholders. */
static char *expand(const struct submit_req *rq, const char *text)
{
	return recipe_expand(text, rq->input_names, rq->input_values, rq->ninputs);
}

/* The task text: the recipe's prompt, then the request's own text. */
static int plan_text(struct plan *p, const struct submit_req *rq, struct err *e)
{
	struct buf t = {0};
	if (p->recipe) {
		char *prompt = expand(rq, p->recipe->prompt);
		buf_adds(&t, prompt);
		free(prompt);
	}
	if (rq->text && rq->text[strspn(rq->text, " \t\r\n")]) {
		if (t.len)
			buf_adds(&t, "\n\n");
		buf_adds(&t, rq->text);
	}
	if (!t.len || strspn(t.data, " \t\r\n") == t.len) {
		buf_free(&t);
		return err_kind_set(e, ERR_INVALID, _("the task text is empty; say what the agent "
		                                      "should do"));
	}
	if (t.len >= TASK_TEXT_MAX) {
		buf_free(&t);
		return err_kind_set(e, ERR_INVALID, _("the task text is 128 KiB or more; it must be "
		                                      "shorter. Put long material in the repository "
		                                      "and refer to it"));
	}
	p->text = t.data;
	return 0;
}

/* A repo, agent or recipe (section) the configuration has no name for: the
 * one it is nearly, else how to add it.  Returns -1. */
static int no_such(struct err *e, const struct config *cfg, const char *section,
                   const char *name)
{
	const char *near = config_suggest_name(cfg, section, name);
	const char *file = cfg->path ? cfg->path : _("the configuration");
	if (!strcmp(section, "recipe"))
		return near ? err_kind_set(e, ERR_NOT_FOUND, _("no recipe named '%s'; did you mean "
		                           "'%s'? ('paddock recipe list' shows them)"), name, near)
		            : err_kind_set(e, ERR_NOT_FOUND, _("no recipe named '%s'; 'paddock "
		                           "recipe list' shows them"), name);
	if (!strcmp(section, "repo"))
		return near ? err_kind_set(e, ERR_NOT_FOUND, _("no repo named '%s' in %s; did you "
		                           "mean '%s'?"), name, file, near)
		            : err_kind_set(e, ERR_NOT_FOUND, _("no repo named '%s' in %s; add a "
		                           "[repo \"%s\"] section with a url"), name, file, name);
	return near ? err_kind_set(e, ERR_NOT_FOUND, _("no agent named '%s' in %s; did you mean "
	                           "'%s'?"), name, file, near)
	            : err_kind_set(e, ERR_NOT_FOUND, _("no agent named '%s' in %s; add an "
	                           "[agent \"%s\"] section with a command"), name, file, name);
}

static int plan_repo_agent(struct plan *p, const struct config *cfg,
                           const struct submit_req *rq, struct err *e)
{
	const char *repo = rq->repo ? rq->repo : p->recipe ? p->recipe->repo : NULL;
	if (repo) {
		if (!(p->repo = config_find_repo(cfg, repo)))
			return no_such(e, cfg, "repo", repo);
	} else if (cfg->nrepos == 1) {
		p->repo = &cfg->repos[0];
	} else if (cfg->nrepos > 1) {
		return err_kind_set(e, ERR_INVALID, _("name the repo with --repo NAME; the "
		                                      "configuration has %zu repos"), cfg->nrepos);
	} else {
		return err_kind_set(e, ERR_INVALID, _("no repo is configured; add a [repo \"NAME\"] "
		                                      "section with a url to %s"),
		                    cfg->path ? cfg->path : _("the configuration"));
	}
	const char *agent = rq->agent ? rq->agent : p->recipe ? p->recipe->agent : NULL;
	p->agent = agent ? config_find_agent(cfg, agent) : config_default_agent(cfg);
	if (!p->agent && agent)
		return no_such(e, cfg, "agent", agent);
	if (!p->agent)
		return err_kind_set(e, ERR_INVALID, _("no agent is configured; add an [agent \"NAME\"] "
		                                      "section with a command to %s"),
		                    cfg->path ? cfg->path : _("the configuration"));
	return 0;
}

/* A base as --base takes it: a pull request number, a hex commit, or a
 * name git accepts as a branch, a tag or a full ref. */
static int base_valid(const char *base)
{
	size_t n = strlen(base);
	if (n == 0 || n > 200 || base[0] == '-')
		return 0;
	if (strspn(base, "0123456789abcdef") == n && n >= 4)
		return 1;
	if (strspn(base, "0123456789") == n && n <= 6)
		return 1;
	char ref[256];
	snprintf(ref, sizeof ref, strncmp(base, "refs/", 5) ? "refs/heads/%s" : "%s", base);
	int valid = 0;
	return git_reference_name_is_valid(&valid, ref) == 0 && valid;
}

static int plan_options(struct plan *p, const struct config *cfg,
                        const struct submit_req *rq, struct err *e)
{
	const struct recipe_conf *r = p->recipe;
	if (rq->base || (r && r->base)) {
		p->base = rq->base ? xstrdup(rq->base) : expand(rq, r->base);
		if (!base_valid(p->base))
			return err_kind_set(e, ERR_INVALID, _("--base '%s' is not a branch, tag, commit, "
			                                      "ref or pull request number"), p->base);
	}
	p->test = rq->test ? rq->test : r && r->test ? r->test : NULL;
	if (p->test && !p->test[strspn(p->test, " \t")])
		return err_kind_set(e, ERR_INVALID, _("--test is empty; give a shell command"));
	p->timeout = rq->timeout > 0 ? rq->timeout : r && r->timeout > 0 ? r->timeout : 0;
	if (rq->timeout < 0)
		return err_kind_set(e, ERR_INVALID, _("--timeout must be a positive duration"));
	p->budget = rq->budget >= 0 ? rq->budget : r && r->budget >= 0 ? r->budget : -1;
	/* The mode: the recipe's replaces the repo's; the task narrows it. */
	int mode = r && r->approval != APPROVAL_UNSET ? r->approval : p->repo->approval;
	if (rq->approval) {
		int ask = config_approval_parse(rq->approval);
		if (ask < 0)
			return err_kind_set(e, ERR_INVALID, _("--approval '%s' is not an approval mode; "
			                                      "use review, auto, auto-push or never"),
			                    rq->approval);
		if (ask > mode)
			return err_kind_set(e, ERR_INVALID, _("--approval %s is wider than %s's mode (%s); "
			                                      "a task can only narrow it (never, review, "
			                                      "auto-push, auto)"), rq->approval,
			                    r && r->approval != APPROVAL_UNSET ? r->name : p->repo->name,
			                    config_approval_name(mode));
		mode = ask;
	}
	if ((mode == APPROVAL_AUTO || mode == APPROVAL_AUTO_PUSH) && !p->test && !p->repo->test)
		return err_kind_set(e, ERR_INVALID, _("approval %s needs a test command, and repo %s "
		                                      "has none; give --test, or use review"),
		                    config_approval_name(mode), p->repo->name);
	p->approval = mode;
	(void)cfg;
	return 0;
}

/* The recipe's contract, its inputs filled in. */
static int plan_contract(struct plan *p, const struct submit_req *rq, struct err *e)
{
	const struct recipe_conf *r = p->recipe;
	if (!r || !r->ncontract)
		return 0;
	char **c = xcalloc(r->ncontract, sizeof *c);
	int rc = 0;
	for (size_t i = 0; i < r->ncontract; i++) {
		c[i] = expand(rq, r->contract[i]);
		if (rc == 0 && recipe_clause_check(c[i], e) < 0)
			rc = -1;
	}
	if (rc == 0)
		p->contract = recipe_contract_json((const char *const *)c, r->ncontract);
	recipe_clauses_free(c, r->ncontract);
	return rc;
}

/* confirm-over: the recipe's, else the repo's.  The estimate is the
 * recipe's mean spend, else the task's budget; a cost nobody can estimate
 * (no history, no budget) is over any threshold. */
static int plan_confirm(struct plan *p, struct store *s, const struct config *cfg,
                        struct err *e)
{
	const struct recipe_conf *r = p->recipe;
	double over = r && r->confirm_over >= 0 ? r->confirm_over : p->repo->confirm_over;
	if (over < 0)
		return 0;
	double mean = 0;
	size_t n = 0;
	if (r && store_recipe_spend(s, r->name, &mean, &n, e) < 0)
		return -1;
	double budget = p->budget >= 0 ? p->budget : cfg->limits.budget;
	p->estimate = n ? mean : budget > 0 ? budget : 0;
	p->confirm = (n == 0 && budget <= 0) || p->estimate > over;
	return 0;
}

static void plan_task_new(const struct plan *p, const struct submit_req *rq,
                          struct task_new *tn)
{
	*tn = (struct task_new){
		.repo = p->repo->name, .agent = p->agent->name, .text = p->text,
		.branch_prefix = p->repo->branch_prefix, .budget = p->budget,
		.callback_url = rq->callback_url, .metadata = rq->metadata,
		.max_queued = rq->max_queued, .queued_by = rq->queued_by,
		.recipe = p->recipe ? p->recipe->name : NULL, .inputs = p->inputs,
		.base_ref = p->base, .test_cmd = p->test, .timeout = p->timeout,
		.dry_run = rq->dry_run, .approval = config_approval_name(p->approval),
		.fix_rounds_set = p->recipe && p->recipe->fix_rounds >= 0,
		.fix_rounds = p->recipe ? p->recipe->fix_rounds : -1,
		.contract = p->contract, .confirm = p->confirm, .estimate = p->estimate,
	};
}

/* The members of a best-of-N group: one per agent of rq->agents, or
 * rq->n of the one agent. */
static int plan_members(const struct plan *p, const struct config *cfg,
                        const struct submit_req *rq, const struct agent_conf **members,
                        size_t *n, struct err *e)
{
	*n = 1;
	members[0] = p->agent;
	if (rq->nagents && rq->n > 1)
		return err_kind_set(e, ERR_INVALID, _("give either --agents or --n, not both"));
	if (rq->nagents && rq->agent)
		return err_kind_set(e, ERR_INVALID, _("give either --agent or --agents, not both"));
	if (rq->n < 0 || rq->n > SUBMIT_GROUP_MAX || rq->nagents > SUBMIT_GROUP_MAX)
		return err_kind_set(e, ERR_INVALID, _("a group has from 2 to %d members"),
		                    SUBMIT_GROUP_MAX);
	if (rq->nagents) {
		for (size_t i = 0; i < rq->nagents; i++) {
			members[i] = config_find_agent(cfg, rq->agents[i]);
			if (!members[i])
				return no_such(e, cfg, "agent", rq->agents[i]);
		}
		*n = rq->nagents;
		if (*n < 2)
			return err_kind_set(e, ERR_INVALID, _("--agents needs at least two agents (a "
			                                      "comma list); for one, use --agent"));
	} else if (rq->n > 1) {
		for (int i = 0; i < rq->n; i++)
			members[i] = p->agent;
		*n = (size_t)rq->n;
	}
	return 0;
}

static int plan_make(struct plan *p, struct store *s, const struct config *cfg,
                     const struct submit_req *rq, struct err *e)
{
	if (rq->recipe && !(p->recipe = config_find_recipe(cfg, rq->recipe)))
		return no_such(e, cfg, "recipe", rq->recipe);
	if (plan_inputs(p, rq, e) < 0 || plan_text(p, rq, e) < 0 ||
	    plan_repo_agent(p, cfg, rq, e) < 0 || plan_options(p, cfg, rq, e) < 0 ||
	    plan_contract(p, rq, e) < 0 || (s && plan_confirm(p, s, cfg, e) < 0))
		return -1;
	return 0;
}

int submit_check(const struct config *cfg, const struct submit_req *rq, struct err *e)
{
	struct plan p = { .budget = -1 };
	const struct agent_conf *members[SUBMIT_GROUP_MAX];
	size_t n = 0;
	int rc = plan_make(&p, NULL, cfg, rq, e);
	if (rc == 0)
		rc = plan_members(&p, cfg, rq, members, &n, e);
	plan_free(&p);
	return rc;
}

int submit_tasks(struct store *s, const struct config *cfg, const struct submit_req *rq,
                 struct submit_result *out, struct err *e)
{
	memset(out, 0, sizeof *out);
	struct plan p = { .budget = -1 };
	const struct agent_conf *members[SUBMIT_GROUP_MAX];
	size_t n = 0;
	int rc = plan_make(&p, s, cfg, rq, e);
	if (rc == 0)
		rc = plan_members(&p, cfg, rq, members, &n, e);
	if (rc < 0) {
		plan_free(&p);
		return -1;
	}
	struct task_new tn[SUBMIT_GROUP_MAX];
	for (size_t i = 0; i < n; i++) {
		plan_task_new(&p, rq, &tn[i]);
		tn[i].agent = members[i]->name;
		snprintf(out->agents[i], sizeof out->agents[i], "%s", members[i]->name);
	}
	if (n == 1)
		rc = store_task_create(s, &tn[0], out->ids[0], &out->queued, e);
	else
		rc = store_group_create(s, p.text, tn, n, out->group, out->ids, &out->queued, e);
	if (rc == 0) {
		out->n = n;
		snprintf(out->repo, sizeof out->repo, "%s", p.repo->name);
		out->confirm = p.confirm;
		out->estimate = p.estimate;
	}
	plan_free(&p);
	return rc;
}
