/* The new-task form of the dashboard (`n` in the task list): a recipe or
 * none, the recipe's inputs one by one, the repo, the agent and the text,
 * each a question at the bottom; then submit.h makes the task, as `paddock
 * add` would.  Each answer is checked when it is given: a wrong one is
 * asked again with the reason, what was typed kept (dash_ask_again), and
 * Tab completes recipes, repos and agents.  Esc at any question drops the
 * form. */
#include "autoconfig.h"
#include "newtask.h"

#include <stdlib.h>
#include <string.h>
#include "buf.h"
#include "dash.h"
#include "i18n.h"
#include "source.h"

struct form {
	struct dash *d;
	void (*added)(struct dash *d, void *arg);
	void *arg;
	const struct recipe_conf *recipe;
	size_t input;                  /* the input asked next */
	char **values;                 /* the inputs given, by the recipe's order */
	char *repo, *agent;
};

static void form_free(struct form *f)
{
	for (size_t i = 0; f->recipe && i < f->recipe->ninputs; i++)
		free(f->values[i]);
	free(f->values);
	free(f->repo);
	free(f->agent);
	free(f);
}

/* 0 when queued; -1 when refused: the text question stays open with the
 * reason, every answer kept (Enter tries again, Esc drops the form). */
static int form_submit(struct form *f, const char *text)
{
	struct dash *d = f->d;
	const char *names[RECIPE_INPUTS_FORM_MAX];
	size_t n = f->recipe ? f->recipe->ninputs : 0;
	for (size_t i = 0; i < n && i < RECIPE_INPUTS_FORM_MAX; i++)
		names[i] = f->recipe->inputs[i].name;
	struct submit_req rq = {
		.text = text, .repo = f->repo, .agent = f->agent,
		.recipe = f->recipe ? f->recipe->name : NULL, .budget = -1,
		.input_names = names, .input_values = (const char *const *)f->values,
		.ninputs = n < RECIPE_INPUTS_FORM_MAX ? n : RECIPE_INPUTS_FORM_MAX,
		.queued_by = gate_actor(),
	};
	struct submit_result res;
	struct err e = {{0}};
	if (source_submit(d->src, &rq, &res, &e) < 0) {
		dash_ask_again(d, ROLE_ERROR, "%s", e.msg);
		return -1;
	}
	if (res.confirm)
		dash_message(d, ROLE_NOTICE, _("task %s queued; it waits for a confirmation of its "
		                               "estimated cost (Y confirms)"), res.ids[0]);
	else
		dash_message(d, ROLE_NOTICE, _("task %s queued"), res.ids[0]);
	if (f->added)
		f->added(d, f->arg);
	return 0;
}

static int blank(const char *s)
{
	return strspn(s, " \t\r\n") == strlen(s);
}

static void form_text(struct dash *d, void *arg, const char *text)
{
	struct form *f = arg;
	if (text && !f->recipe && blank(text)) {
		dash_ask_again(d, ROLE_ERROR, "%s", _("the task text is empty; say what the agent "
		                                      "should do"));
		return;
	}
	if (text && form_submit(f, text) < 0)
		return;
	form_free(f);
}

static void form_agent(struct dash *d, void *arg, const char *text)
{
	struct form *f = arg;
	if (!text) {
		form_free(f);
		return;
	}
	if (*text && !config_find_agent(d->cfg, text)) {
		dash_ask_again(d, ROLE_ERROR, _("no agent named '%s'; Tab completes the agents' "
		                                "names"), text);
		return;
	}
	f->agent = *text ? xstrdup(text) : NULL;
	dash_ask(d, f->recipe ? _("anything to add to the recipe's prompt? (Enter, then <C-d>: "
	                          "nothing) ") : _("what should the agent do? "), 1, NULL,
	         form_text, f);
}

static void ask_agent(struct form *f)
{
	struct dash *d = f->d;
	struct buf q = {0};
	buf_printf(&q, _("agent ("));
	for (size_t i = 0; i < d->cfg->nagents; i++)
		buf_printf(&q, "%s%s", i ? ", " : "", d->cfg->agents[i].name);
	buf_printf(&q, _("; Enter: the default): "));
	dash_ask(d, q.data, 0, f->recipe ? f->recipe->agent : NULL, form_agent, f);
	buf_free(&q);
	for (size_t i = 0; i < d->cfg->nagents; i++)
		dash_ask_complete(d, (const char *const *)&d->cfg->agents[i].name, 1);
}

static void form_repo(struct dash *d, void *arg, const char *text)
{
	struct form *f = arg;
	if (!text) {
		form_free(f);
		return;
	}
	const struct repo_conf *r = *text ? config_find_repo(d->cfg, text) :
	                            d->cfg->nrepos == 1 ? &d->cfg->repos[0] : NULL;
	if (!r) {
		if (*text)
			dash_ask_again(d, ROLE_ERROR, _("no repo named '%s'; Tab completes the repos' "
			                                "names"), text);
		else
			dash_ask_again(d, ROLE_ERROR, "%s", _("name the repo the task works on; Tab "
			                                      "completes the names"));
		return;
	}
	f->repo = xstrdup(r->name);
	ask_agent(f);
}

static void ask_repo(struct form *f)
{
	struct dash *d = f->d;
	struct buf q = {0};
	buf_printf(&q, _("repo ("));
	for (size_t i = 0; i < d->cfg->nrepos; i++)
		buf_printf(&q, "%s%s", i ? ", " : "", d->cfg->repos[i].name);
	buf_adds(&q, "): ");
	const char *initial = f->recipe && f->recipe->repo ? f->recipe->repo
	                      : d->cfg->nrepos == 1 ? d->cfg->repos[0].name : NULL;
	dash_ask(d, q.data, 0, initial, form_repo, f);
	buf_free(&q);
	for (size_t i = 0; i < d->cfg->nrepos; i++)
		dash_ask_complete(d, (const char *const *)&d->cfg->repos[i].name, 1);
}

static void ask_input(struct form *f);

static void form_input(struct dash *d, void *arg, const char *text)
{
	struct form *f = arg;
	if (!text) {
		form_free(f);
		return;
	}
	/* Every input of a recipe is needed (submit.h); asked again here
	 * rather than refused once the form is done. */
	if (blank(text)) {
		dash_ask_again(d, ROLE_ERROR, _("%s is empty; recipe %s needs it"),
		               f->recipe->inputs[f->input].name, f->recipe->name);
		return;
	}
	f->values[f->input++] = xstrdup(text);
	ask_input(f);
}

/* The recipe's next input, or the repo once all are given. */
static void ask_input(struct form *f)
{
	const struct recipe_conf *r = f->recipe;
	if (!r || f->input >= r->ninputs) {
		ask_repo(f);
		return;
	}
	const struct recipe_input *in = &r->inputs[f->input];
	struct buf q = {0};
	if (in->help)
		buf_printf(&q, _("%s (%s): "), in->name, config_recipe_text(in->help));
	else
		buf_printf(&q, "%s: ", in->name);
	dash_ask(f->d, q.data, 0, NULL, form_input, f);
	buf_free(&q);
}

static void form_recipe(struct dash *d, void *arg, const char *text)
{
	struct form *f = arg;
	if (!text) {
		form_free(f);
		return;
	}
	if (*text) {
		f->recipe = config_find_recipe(d->cfg, text);
		if (!f->recipe) {
			dash_ask_again(d, ROLE_ERROR, _("no recipe named '%s'; Tab completes the "
			                                "recipes' names (Enter on nothing: none)"), text);
			return;
		}
		f->values = xcalloc(f->recipe->ninputs + 1, sizeof *f->values);
		if (f->recipe->description)
			dash_message(d, ROLE_NOTICE, "%s: %s", f->recipe->name,
			             config_recipe_text(f->recipe->description));
	}
	ask_input(f);
}

void newtask_open(struct dash *d, void (*added)(struct dash *d, void *arg), void *arg)
{
	if (!d->cfg->nrepos) {
		dash_message(d, ROLE_ERROR, _("no repo is configured; add a [repo \"NAME\"] "
		                              "section to %s"), d->cfg->path);
		return;
	}
	struct form *f = xcalloc(1, sizeof *f);
	f->d = d;
	f->added = added;
	f->arg = arg;
	if (!d->cfg->nrecipes) {
		ask_repo(f);
		return;
	}
	struct buf q = {0};
	buf_printf(&q, _("recipe ("));
	for (size_t i = 0; i < d->cfg->nrecipes; i++)
		buf_printf(&q, "%s%s", i ? ", " : "", d->cfg->recipes[i].name);
	buf_adds(&q, _("; Enter: none): "));
	dash_ask(d, q.data, 0, NULL, form_recipe, f);
	buf_free(&q);
	for (size_t i = 0; i < d->cfg->nrecipes; i++)
		dash_ask_complete(d, (const char *const *)&d->cfg->recipes[i].name, 1);
}
