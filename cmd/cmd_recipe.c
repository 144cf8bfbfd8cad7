/* The recipe verb: list and show the recipes of the configuration, the
 * ready-made ones (data/recipes.conf) and the file's. */
#include "autoconfig.h"
#include "cli.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "i18n.h"
#include "sanitize.h"
#include "taskjson.h"
#include "units.h"

static void recipe_list(const struct config *cfg, int json)
{
	if (json) {
		json_t *arr = json_array();
		for (size_t i = 0; i < cfg->nrecipes; i++)
			json_array_append_new(arr, taskjson_recipe(&cfg->recipes[i]));
		cli_json_print(arr);
		return;
	}
	if (!cfg->nrecipes) {
		printf(_("no recipes; add a [recipe \"NAME\"] section with a prompt\n"));
		return;
	}
	for (size_t i = 0; i < cfg->nrecipes; i++) {
		const struct recipe_conf *r = &cfg->recipes[i];
		struct buf in = {0};
		for (size_t k = 0; k < r->ninputs; k++)
			buf_printf(&in, "%s%s", k ? "," : "", r->inputs[k].name);
		printf("%-20s %-12s %s\n", r->name, in.data ? in.data : "-",
		       r->description ? config_recipe_text(r->description) : "");
		buf_free(&in);
	}
}

/* One default of a recipe, when set. */
static void show_default(const char *key, const char *value)
{
	if (value)
		printf("  %-13s %s\n", key, value);
}

static void recipe_show(const struct recipe_conf *r)
{
	printf(r->builtin ? _("recipe %s (ready-made)\n") : _("recipe %s\n"), r->name);
	if (r->description)
		printf("  %s\n", config_recipe_text(r->description));
	printf(_("inputs:\n"));
	if (!r->ninputs)
		printf(_("  none\n"));
	for (size_t i = 0; i < r->ninputs; i++)
		printf("  %-13s %s\n", r->inputs[i].name, r->inputs[i].help ? config_recipe_text(r->inputs[i].help) : "");
	printf(_("defaults (unset ones are the repo's or the configuration's):\n"));
	char money[32], dur[32], tries[16], over[32];
	show_default("repo", r->repo);
	show_default("agent", r->agent);
	show_default("base", r->base);
	show_default("test", r->test);
	if (r->budget >= 0)
		units_format_money(r->budget, 2, money, sizeof money);
	show_default("budget", r->budget >= 0 ? money : NULL);
	if (r->timeout > 0)
		snprintf(dur, sizeof dur, "%.0fs", r->timeout);
	show_default("timeout", r->timeout > 0 ? dur : NULL);
	show_default("approval", config_approval_name(r->approval));
	if (r->confirm_over >= 0)
		units_format_money(r->confirm_over, 2, over, sizeof over);
	show_default("confirm-over", r->confirm_over >= 0 ? over : NULL);
	snprintf(tries, sizeof tries, "%d", r->fix_rounds);
	show_default("fix-rounds", r->fix_rounds >= 0 ? tries : NULL);
	printf(_("contract:\n"));
	if (!r->ncontract)
		printf(_("  a change, and the tests pass (the default)\n"));
	for (size_t i = 0; i < r->ncontract; i++)
		printf("  %s\n", r->contract[i]);
	printf(_("prompt:\n"));
	/* The file's text, but shown on a terminal: no control sequence. */
	struct buf clean = {0};
	const char *p = r->prompt ? r->prompt : "";
	sanitize_text(p, strlen(p), 0, &clean);
	for (char *line = clean.data, *next; line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		printf("  %s\n", line);
	}
	buf_free(&clean);
}

int cmd_recipe(int argc, char **argv)
{
	const struct cli_verb *v = cli_verb_find("recipe");
	struct cli_opts o;
	int rc = cli_parse_opts(v, argc, argv, &o, "help json");
	if (rc >= 0)
		return rc;
	const char *sub = optind < argc ? argv[optind] : "list";
	if ((rc = cli_sub_usage(v, sub, "list show")) >= 0)
		return rc;
	int show = strcmp(sub, "show") == 0;
	if (!(show && argc - optind == 2) && !(strcmp(sub, "list") == 0 && argc - optind <= 1))
		return cli_bad_usage(v);
	struct config cfg;
	if (cli_load_config(&cfg) < 0)
		return EXIT_USAGE;
	rc = 0;
	if (!show) {
		recipe_list(&cfg, o.json);
	} else {
		const struct recipe_conf *r = config_find_recipe(&cfg, argv[optind + 1]);
		const char *near = r ? NULL : config_suggest_name(&cfg, "recipe", argv[optind + 1]);
		if (!r && near)
			rc = cli_die(EXIT_USAGE, _("no recipe named '%s'; did you mean '%s'? ('paddock "
			                           "recipe list' lists them)"), argv[optind + 1], near);
		else if (!r)
			rc = cli_die(EXIT_USAGE, _("no recipe named '%s'; 'paddock recipe list' lists "
			                           "them"), argv[optind + 1]);
		else if (o.json)
			cli_json_print(taskjson_recipe(r));
		else
			recipe_show(r);
	}
	config_free(&cfg);
	return rc;
}
