/* The audit verb: the instance's decisions, refusals and role changes,
 * newest first (store_audit.h), as GET /events sends them and GET /audit
 * pages them; printed by render_audit, as the remote verb prints them. */
#include "autoconfig.h"
#include "cli.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include "audit.h"
#include "i18n.h"
#include "render.h"
#include "store_audit.h"

int cmd_audit(int argc, char **argv)
{
	const struct cli_verb *v = cli_verb_find("audit");
	struct cli_opts o;
	int rc = cli_parse_opts(v, argc, argv, &o, "help json limit before");
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
	long long before = 0;
	if (o.before) {
		char *end;
		before = strtoll(o.before, &end, 10);
		if (!*o.before || *end || before < 1)
			return cli_die(EXIT_USAGE, _("--before: '%s' is not the seq of an audit event "
			                             "(--json shows each event's)"), o.before);
	}
	struct store *st = cli_open_store(NULL, 1);
	if (!st)
		return 1;
	struct audit_event *ev;
	size_t n;
	struct err e = {{0}};
	if (store_audit_before(st, before, limit, &ev, &n, &e) < 0) {
		store_close(st);
		return cli_die(1, "%s", e.msg);
	}
	json_t *arr = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(arr, audit_event_json(&ev[i], 1));
	audit_events_free(ev, n);
	if (o.json) {
		cli_json_print(arr);
	} else {
		render_audit(arr);
		json_decref(arr);
	}
	store_close(st);
	return 0;
}
