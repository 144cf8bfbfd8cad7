/* The github verb: one sync of the repos that follow GitHub (what serve
 * does every github.poll), and the events GitHub sent or a sync found. */
#include "autoconfig.h"
#include "cli.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "ghsync.h"
#include "i18n.h"
#include "sanitize.h"
#include "store_github.h"

static int github_sync(const struct cli_opts *o)
{
	struct config cfg;
	if (cli_load_config(&cfg) < 0)
		return EXIT_USAGE;
	char *data = NULL;
	struct store *st = cli_open_store(&data, 1);
	if (!st) {
		config_free(&cfg);
		return 1;
	}
	struct ghsync s;
	struct err e = {{0}};
	ghsync_init(&s, &cfg, data, st, "poll");
	int rc = ghsync_all(&s, o->repo, &e);
	if (o->json) {
		json_t *j = json_pack("{s:O, s:{s:o, s:o}}", "actions", s.actions, "rate_limit",
		                      "remaining", s.remaining >= 0 ? json_integer(s.remaining)
		                                                    : json_null(),
		                      "reset", s.reset ? json_integer(s.reset) : json_null());
		cli_json_print(j);
	} else {
		size_t i;
		json_t *a;
		json_array_foreach(s.actions, i, a) {
			int error = !strcmp(json_string_value(json_object_get(a, "kind")), "error");
			FILE *f = error ? stderr : stdout;
			if (error)
				fputs("paddock: ", f);
			cli_put_str(f, json_string_value(json_object_get(a, "detail")));
			fputc('\n', f);
		}
	}
	/* Each error was said above, in the text; the JSON has them too. */
	if (rc < 0 && (o->json || rc == -2 || !json_array_size(s.actions)))
		cli_die(0, "%s", e.msg);
	int code = rc == -2 ? EXIT_USAGE : rc < 0 ? 1 : 0;
	ghsync_free(&s);
	store_close(st);
	free(data);
	config_free(&cfg);
	return code;
}

static int github_events(const struct cli_opts *o)
{
	size_t limit = 50;
	if (o->limit) {
		char *end;
		long v = strtol(o->limit, &end, 10);
		if (*end || v < 0)
			return cli_die(EXIT_USAGE, _("--limit: '%s' is not a number of events (0: all)"),
			               o->limit);
		limit = (size_t)v;
	}
	struct store *st = cli_open_store(NULL, 1);
	if (!st)
		return 1;
	struct gh_event *ev;
	size_t n;
	struct err e = {{0}};
	if (store_github_events(st, limit, &ev, &n, &e) < 0) {
		store_close(st);
		return cli_die(1, "%s", e.msg);
	}
	if (o->json) {
		json_t *arr = json_array();
		for (size_t i = 0; i < n; i++)
			json_array_append_new(arr, json_pack(
				"{s:I, s:f, s:s, s:s, s:s?, s:s?, s:s?, s:o, s:s, s:s?, s:s?}",
				"id", (json_int_t)ev[i].id, "time", ev[i].time, "source", ev[i].source,
				"event", ev[i].event, "delivery", ev[i].delivery, "actor", ev[i].actor,
				"repo", ev[i].gh_repo, "number",
				ev[i].number ? json_integer(ev[i].number) : json_null(), "verdict",
				ev[i].verdict, "detail", ev[i].detail, "task", ev[i].task_id));
		cli_json_print(arr);
	} else if (!n) {
		printf(_("no GitHub events yet\n"));
	}
	for (size_t i = 0; i < n && !o->json; i++) {
		char when[32];
		time_t t = (time_t)ev[i].time;
		struct tm tm;
		strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", localtime_r(&t, &tm));
		struct buf line = {0};
		buf_printf(&line, "%s %-7s %-28s %-9s", when, ev[i].source, ev[i].event, ev[i].verdict);
		if (ev[i].gh_repo && ev[i].number)
			buf_printf(&line, " %s#%lld", ev[i].gh_repo, ev[i].number);
		else if (ev[i].gh_repo)
			buf_printf(&line, " %s", ev[i].gh_repo);
		if (ev[i].actor)
			buf_printf(&line, " %s", ev[i].actor);
		if (ev[i].task_id)
			buf_printf(&line, " task %s", ev[i].task_id);
		if (ev[i].detail)
			buf_printf(&line, ": %s", ev[i].detail);
		cli_put_str(stdout, line.data);
		fputc('\n', stdout);
		buf_free(&line);
	}
	gh_events_free(ev, n);
	store_close(st);
	return 0;
}

int cmd_github(int argc, char **argv)
{
	const struct cli_verb *v = cli_verb_find("github");
	struct cli_opts o;
	int rc = cli_parse_opts(v, argc, argv, &o, "help json repo limit");
	if (rc >= 0)
		return rc;
	const char *sub = optind < argc ? argv[optind] : NULL;
	if (!sub)
		return cli_bad_usage(v);
	if ((rc = cli_sub_usage(v, sub, "sync events")) >= 0)
		return rc;
	if (argc - optind != 1)
		return cli_bad_usage(v);
	if (!strcmp(sub, "sync") && !o.limit)
		return github_sync(&o);
	if (!strcmp(sub, "events") && !o.repo)
		return github_events(&o);
	return cli_bad_usage(v);
}
