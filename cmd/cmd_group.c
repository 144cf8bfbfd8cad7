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
#include "store.h"
#include "task.h"

/* A duration as a clock: "0:42", "1:02:03"; "-" when not started. */
static void clock_cell(double secs, char *out, size_t len)
{
	if (secs < 0) {
		snprintf(out, len, "-");
		return;
	}
	long s = (long)secs;
	if (s >= 3600)
		snprintf(out, len, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
	else
		snprintf(out, len, "%ld:%02ld", s / 60, s % 60);
}

enum { G_ID, G_AGENT, G_STATUS, G_TESTS, G_FILES, G_INS, G_DEL, G_COST, G_TIME, G_FINDINGS,
       G_N };

/* One member's cells, newly allocated. */
static void member_cells(const struct group_member *m, char *c[G_N])
{
	const struct task_row *t = &m->t;
	char b[64];
	c[G_ID] = xstrdup(t->id);
	c[G_AGENT] = xstrdup(t->agent);
	c[G_STATUS] = xstrdup(task_status_label(t->status));
	c[G_TESTS] = xstrdup(m->has_gate ? group_tests_word(m->tests) : "-");
	c[G_FILES] = m->has_change ? xasprintf("%zu", m->files) : xstrdup("-");
	c[G_INS] = m->has_change ? xasprintf("+%zu", m->ins) : xstrdup("-");
	c[G_DEL] = m->has_change ? xasprintf("-%zu", m->del) : xstrdup("-");
	/* "+": some model had no price, so the cost is at least this. */
	c[G_COST] = t->usage.requests ? xasprintf("$%.2f%s", t->usage.cost,
	                                          t->usage.priced ? "" : "+") : xstrdup("-");
	clock_cell(m->seconds, b, sizeof b);
	c[G_TIME] = xstrdup(b);
	/* block and warn are the policy's words, as show prints them. */
	c[G_FINDINGS] = m->blocks || m->warns ? xasprintf("%zu block, %zu warn", m->blocks,
	                                                  m->warns) : xstrdup(_("none"));
}

static void print_table(const struct group_info *gi)
{
	const char *title[G_N] = { _("ID"), _("AGENT"), _("STATUS"), _("TESTS"), _("FILES"),
	                           "+", "-", _("COST"), _("TIME"), _("FINDINGS") };
	static const int right[G_N] = { [G_FILES] = 1, [G_INS] = 1, [G_DEL] = 1, [G_COST] = 1,
	                                [G_TIME] = 1 };
	char *(*cell)[G_N] = xcalloc(gi->n ? gi->n : 1, sizeof *cell);
	int w[G_N];
	for (int k = 0; k < G_N; k++)
		w[k] = cli_cols(title[k]);
	for (size_t i = 0; i < gi->n; i++) {
		member_cells(&gi->m[i], cell[i]);
		for (int k = 0; k < G_N; k++)
			if (cli_cols(cell[i][k]) > w[k])
				w[k] = cli_cols(cell[i][k]);
	}
	printf("   #  ");
	for (int k = 0; k < G_N; k++) {
		cli_pad(title[k], k == G_N - 1 ? 0 : w[k], right[k]);
		fputs(k == G_N - 1 ? "\n" : "  ", stdout);
	}
	for (size_t i = 0; i < gi->n; i++) {
		/* The picked one is marked, as git branch marks the current. */
		printf("%s %2d  ", gi->m[i].picked ? "*" : " ", gi->m[i].position);
		for (int k = 0; k < G_N; k++) {
			cli_pad(cell[i][k], k == G_N - 1 ? 0 : w[k], right[k]);
			fputs(k == G_N - 1 ? "\n" : "  ", stdout);
			free(cell[i][k]);
		}
	}
	free(cell);
}

static void print_group(const struct group_info *gi)
{
	printf("%-8s %s  ", _("group"), gi->g.id);
	printf(_("best of %zu"), gi->n);
	putchar('\n');
	const char *text = gi->g.text ? gi->g.text : "";
	printf("%-8s ", _("text"));
	cli_put_text(stdout, text, strcspn(text, "\n"));
	putchar('\n');
	struct buf b = {0};
	group_statuses(gi, 0, &b);
	printf("%-8s %s\n", _("status"), b.data ? b.data : "-");
	buf_free(&b);
	printf("%-8s ", _("picked"));
	const struct group_member *p = gi->g.chosen ? group_member_find(gi, gi->g.chosen) : NULL;
	if (p)
		printf("%s (%s)\n", p->t.id, p->t.agent);
	else
		printf(_("none yet: 'paddock group pick %s ID' approves one and rejects the "
		         "others\n"), gi->g.id);
	putchar('\n');
	print_table(gi);
}

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
		if (o->json)
			cli_json_print(group_json(&gi));
		else
			print_group(&gi);
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
