/* The audit verb: the instance's decisions, refusals and role changes,
 * newest first (store_audit.h), as GET /events sends them. */
#include "autoconfig.h"
#include "cli.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include "audit.h"
#include "i18n.h"
#include "store_audit.h"

int cmd_audit(int argc, char **argv)
{
	const struct cli_verb *v = cli_verb_find("audit");
	struct cli_opts o;
	int rc = cli_parse_opts(v, argc, argv, &o, "help json limit");
	if (rc >= 0)
		return rc;
	if (optind < argc)
		return cli_bad_usage(v);
	size_t limit = 50;
	if (o.limit) {
		char *end;
		long n = strtol(o.limit, &end, 10);
		if (!*o.limit || *end || n < 0)
			return cli_die(EXIT_USAGE, _("--limit: '%s' is not a number of events (0: all)"),
			               o.limit);
		limit = (size_t)n;
	}
	struct store *st = cli_open_store(NULL, 1);
	if (!st)
		return 1;
	struct audit_event *ev;
	size_t n;
	struct err e = {{0}};
	if (store_audit_last(st, limit, &ev, &n, &e) < 0) {
		store_close(st);
		return cli_die(1, "%s", e.msg);
	}
	if (o.json) {
		json_t *arr = json_array();
		for (size_t i = 0; i < n; i++)
			json_array_append_new(arr, audit_event_json(&ev[i], 1));
		cli_json_print(arr);
	} else if (!n) {
		printf(_("no decisions, refusals or role changes yet\n"));
	}
	for (size_t i = 0; i < n && !o.json; i++) {
		char *line = audit_event_text(&ev[i]);
		cli_put_str(stdout, line);
		fputc('\n', stdout);
		free(line);
	}
	audit_events_free(ev, n);
	store_close(st);
	return 0;
}
