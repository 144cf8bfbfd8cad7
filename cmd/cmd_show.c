/* paddock show: a task, its budget and usage, the gate, its rounds and
 * every request through its gateway: its JSON (taskjson_full), printed
 * by the renderer the remote show uses too (render.h). */
#include "autoconfig.h"
#include "cli.h"

#include "config.h"
#include "render.h"
#include "store.h"
#include "taskjson.h"

int cmd_show(int argc, char **argv)
{
	struct cli_task_verb tv;
	int rc = cli_task_verb_begin("show", argc, argv, "help json", &tv);
	if (rc >= 0)
		return rc;
	struct config cfg;
	int have_cfg = cli_config_soft(&cfg);
	json_t *j = taskjson_full(tv.s, &tv.t, have_cfg ? &cfg : NULL);
	if (tv.o.json) {
		cli_json_print(j);
	} else {
		render_task(j, have_cfg);
		json_decref(j);
	}
	if (have_cfg)
		config_free(&cfg);
	cli_task_verb_end(&tv);
	return 0;
}
