/* The best-of-N verbs: group show and group pick (group.h does the
 * work). */
#include "autoconfig.h"
#include "cli.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>
#include "buf.h"
#include "clock.h"
#include "config.h"
#include "gate.h"
#include "group.h"
#include "i18n.h"
#include "render.h"
#include "store.h"
#include "task.h"

/* The group operand: -1 to go on, else the exit status. */
static int group_id_usage(const char *id)
{
	if (task_id_valid(id, 1))
		return -1;
	return cli_die(EXIT_USAGE, _("'%s' is not a group id (ids look like %s); 'paddock list' "
	                             "shows each task's group"), id, "k3x9m2qa7d");
}

static int group_show(const struct cli_opts *o, const char *id)
{
	char *data = NULL;
	struct store *s = cli_open_store(&data, 0);
	if (!s)
		return 1;
	struct group_info gi;
	struct err e = {{0}};
	int rc = 0;
	if (group_load(s, data, id, clock_wall(), &gi, &e) < 0) {
		rc = cli_die(e.kind == ERR_INVALID ? EXIT_USAGE : 1, "%s", e.msg);
	} else {
		json_t *j = group_json(&gi);
		if (o->json) {
			cli_json_print(j);
		} else {
			render_group(j);
			json_decref(j);
		}
		group_info_free(&gi);
	}
	store_close(s);
	free(data);
	return rc;
}

/* The pick recorded for the scheduler (cli_decide), after the checks a
 * pick makes first (the group and its member, who may pick): an exit
 * status; -1 when this process picks itself, -2 with e when refused. */
static int pick_recorded(const struct gate_ctx *g, const char *id, const char *task,
                         const char *notes, int no_wait, struct err *e)
{
	struct group_info gi;
	if (group_load(g->st, NULL, id, 0, &gi, e) < 0)
		return -2;
	const struct group_member *m = group_member_find(&gi, task);
	int rc;
	if (m && !cli_decide_records(g, "pick", m->t.id)) {
		rc = -1;
	} else if (!m) {
		/* group_pick refuses it so too. */
		rc = -1;
	} else if (gi.g.chosen) {
		err_kind_set(e, ERR_CONFLICT, _("group %s has a pick already: task %s; a group "
		                                "is picked once"), gi.g.id, gi.g.chosen);
		rc = -2;
	} else if (gate_may_decide(g, &m->t, "pick", e) < 0) {
		rc = -2;
	} else {
		rc = cli_decide(g, "pick", m->t.id, gi.g.id, notes, no_wait);
	}
	group_info_free(&gi);
	return rc;
}

static int group_pick_verb(const struct cli_opts *o, const char *id, const char *task)
{
	int code;
	char *notes = NULL;
	if ((o->notes || o->notes_file) && !(notes = cli_gate_notes("pick", o, task, &code)))
		return code;
	struct config cfg;
	if (cli_load_config(&cfg) < 0) {
		free(notes);
		return EXIT_USAGE;
	}
	char *data = NULL;
	struct store *s = cli_open_store(&data, 0);
	int rc = 1;
	if (s) {
		struct gate_ctx g = gate_ctx_of(&cfg, data, s, NULL);
		struct err e = {{0}};
		struct buf out = {0};
		rc = pick_recorded(&g, id, task, notes, o->no_wait, &e);
		if (rc == -1) {
			/* Carried out here: no scheduler runs, and this process
			 * holds the credentials. */
			rc = group_pick(&g, id, task, notes, &out, &e);
			fputs(out.data ? out.data : "", stdout);
		}
		if (rc < 0)
			rc = cli_die(e.kind == ERR_INVALID ? EXIT_USAGE : 1, "%s", e.msg);
		buf_free(&out);
		store_close(s);
	}
	free(data);
	config_free(&cfg);
	free(notes);
	return rc;
}

int cmd_group(int argc, char **argv)
{
	const struct cli_verb *v = cli_verb_find("group");
	struct cli_opts o;
	int rc = cli_parse_opts(v, argc, argv, &o, "help json notes notes-file no-wait");
	if (rc >= 0)
		return rc;
	if (optind >= argc)
		return cli_bad_usage(v);
	const char *sub = argv[optind];
	if ((rc = cli_sub_usage(v, sub, "show pick")) >= 0)
		return rc;
	int show = !strcmp(sub, "show"), pick = !strcmp(sub, "pick");
	if ((!show && !pick) || argc - optind != (show ? 2 : 3))
		return cli_bad_usage(v);
	if (show && (o.notes || o.notes_file)) {
		fprintf(stderr, _("paddock group: --notes and --notes-file go with pick\n"));
		return cli_bad_usage(v);
	}
	if (show && o.no_wait) {
		fprintf(stderr, _("paddock group: --no-wait goes with pick\n"));
		return cli_bad_usage(v);
	}
	if (pick && o.json) {
		fprintf(stderr, _("paddock group: --json goes with show\n"));
		return cli_bad_usage(v);
	}
	if ((rc = group_id_usage(argv[optind + 1])) >= 0)
		return rc;
	if (show)
		return group_show(&o, argv[optind + 1]);
	if ((rc = cli_id_usage(argv[optind + 2])) >= 0)
		return rc;
	return group_pick_verb(&o, argv[optind + 1], argv[optind + 2]);
}
