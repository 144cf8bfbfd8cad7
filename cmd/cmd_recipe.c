/* The recipe verb: list and show the recipes of the configuration, the
 * ready-made ones (data/recipes.conf) and the file's. */
#include "autoconfig.h"
#include "cli.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "i18n.h"
#include "render.h"
#include "sanitize.h"
#include "taskjson.h"
#include "units.h"

static void recipe_list(const struct config *cfg, int json)
{
	json_t *arr = json_array();
	for (size_t i = 0; i < cfg->nrecipes; i++)
		json_array_append_new(arr, taskjson_recipe(&cfg->recipes[i]));
	if (json) {
		cli_json_print(arr);
	} else {
		render_recipes(arr);
		json_decref(arr);
	}
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
		else {
			json_t *j = taskjson_recipe(r);
			render_recipe(j);
			json_decref(j);
		}
	}
	config_free(&cfg);
	return rc;
}
