/* The verbs that look after paddock itself: config check, template list
 * and prune, agent list and install. */
#include "autoconfig.h"
#include "cli.h"

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "adapter.h"
#include "buf.h"
#include "config.h"
#include "dash.h"
#include "demo.h"
#include "doctor.h"
#include "fsx.h"
#include "i18n.h"
#include "paths.h"
#include "template.h"
#include "units.h"

/* ---------------------------------------------------------------- config */

int cmd_config(int argc, char **argv)
{
	const struct cli_verb *v = cli_verb_find("config");
	struct cli_opts o;
	int rc = cli_parse_opts(v, argc, argv, &o, "help");
	if (rc >= 0)
		return rc;
	if (optind >= argc)
		return cli_bad_usage(v);
	if ((rc = cli_sub_usage(v, argv[optind], "check")) >= 0)
		return rc;
	if (argc - optind > 2)
		return cli_bad_usage(v);
	const char *file = optind + 1 < argc ? argv[optind + 1] : NULL;
	char *path = file ? xstrdup(file) : config_default_path();
	int n = config_check(path, stderr, dash_config_check);
	if (n == 0)
		printf(_("%s: no problems\n"), path);
	free(path);
	return n ? 1 : 0;
}

/* ---------------------------------------------------------------- doctor */

int cmd_doctor(int argc, char **argv)
{
	const struct cli_verb *v = cli_verb_find("doctor");
	struct cli_opts o;
	int rc = cli_parse_opts(v, argc, argv, &o, "help json");
	if (rc >= 0)
		return rc;
	if (optind != argc)
		return cli_bad_usage(v);
	struct config cfg;
	struct err e = {{0}};
	int have_cfg = config_load(&cfg, NULL, &e) == 0;
	if (!have_cfg)
		config_free(&cfg);
	char *data = paths_data_dir();
	if (have_cfg)
		demo_config_add(data, &cfg);
	struct doctor d;
	doctor_run(&d, have_cfg ? &cfg : NULL, e.msg, data);
	if (o.json) {
		json_t *checks = json_array();
		for (size_t i = 0; i < d.n; i++)
			json_array_append_new(checks, json_pack("{s:s,s:s,s:s,s:s?}", "name",
			                      d.v[i].name, "status", doctor_status_name(d.v[i].status),
			                      "detail", d.v[i].detail, "fix", d.v[i].fix));
		cli_json_print(json_pack("{s:b,s:o}", "can_run", d.can_run, "checks", checks));
	} else {
		for (size_t i = 0; i < d.n; i++) {
			/* A long name pushes its detail along; wrapped lines line
			 * up under the details. */
			int col = printf("%-5s %-14s ", doctor_status_name(d.v[i].status), d.v[i].name);
			cli_put_wrapped(stdout, d.v[i].detail, col, 21);
			putchar('\n');
			if (d.v[i].fix && d.v[i].status >= DOCTOR_WARN) {
				printf("%-18s-> ", "");
				cli_put_wrapped(stdout, d.v[i].fix, 21, 21);
				putchar('\n');
			}
		}
		puts(d.can_run ? _("paddock can run tasks here.")
		               : _("paddock cannot run tasks here: fix what failed."));
	}
	rc = d.can_run ? 0 : 1;
	doctor_free(&d);
	if (have_cfg)
		config_free(&cfg);
	free(data);
	return rc;
}

/* ---------------------------------------------------------------- template */

static json_t *template_json(const struct template_info *t, const char *state)
{
	return json_pack("{s:s,s:s,s:s,s:s,s:I,s:I,s:b,s:s?}", "repo", t->repo, "name", t->name,
	                 "commit", t->sha, "path", t->path, "bytes", (json_int_t)t->bytes,
	                 "last_used", (json_int_t)t->last_used, "in_use", t->in_use,
	                 "state", state);
}

int cmd_template(int argc, char **argv)
{
	const struct cli_verb *v = cli_verb_find("template");
	struct cli_opts o;
	int rc = cli_parse_opts(v, argc, argv, &o, "help json older-than dry-run");
	if (rc >= 0)
		return rc;
	if (optind >= argc)
		return cli_bad_usage(v);
	const char *sub = argv[optind];
	if ((rc = cli_sub_usage(v, sub, "list prune")) >= 0)
		return rc;
	int prune = strcmp(sub, "prune") == 0;
	if (argc - optind != 1 || (!prune && strcmp(sub, "list") != 0) ||
	    (!prune && (o.older_than || o.dry_run)))
		return cli_bad_usage(v);
	double age = 0;
	if (o.older_than && strcmp(o.older_than, "0") != 0 &&
	    (units_parse_duration(o.older_than, &age) < 0 || age < 0))
		return cli_die(EXIT_USAGE, _("--older-than: '%s' is not a duration (for example 7d, "
		                             "12h or 0)"), o.older_than);
	if (prune && !o.older_than) {
		struct config cfg;
		if (cli_config_soft(&cfg)) {
			age = cfg.template_max_age;
			config_free(&cfg);
		}
	}
	struct err e = {{0}};
	char *data = paths_data_dir();
	struct template_info *t = NULL;
	size_t n = 0;
	if (template_list(data, 1, &t, &n, &e) < 0) {
		free(data);
		return cli_die(1, "%s", e.msg);
	}
	json_t *arr = o.json ? json_array() : NULL;
	time_t now = time(NULL);
	rc = 0;
	if (!arr && !prune && n)
		printf("%-12s %-14s %-12s %9s  %-16s %s\n", _("REPO"), _("COMMIT"), _("SET-UP"),
		       _("SIZE"), _("LAST USED"), _("STATE"));
	uint64_t freed = 0;
	size_t removed = 0;
	for (size_t i = 0; i < n; i++) {
		const char *state = t[i].in_use ? "in-use" : "idle";
		if (prune) {
			if (!template_stale(&t[i], now, age))
				continue;
			state = o.dry_run ? "would-remove" : "removed";
			if (!o.dry_run && template_remove(data, &t[i], &e) < 0) {
				rc = cli_die(1, "%s", e.msg);
				continue;
			}
			removed++;
			freed += t[i].bytes;
		}
		if (arr) {
			json_array_append_new(arr, template_json(&t[i], state));
			continue;
		}
		char size[32], when[32];
		units_format_size(t[i].bytes, size, sizeof size);
		strftime(when, sizeof when, "%Y-%m-%d %H:%M", localtime(&t[i].last_used));
		if (prune) {
			printf(o.dry_run ? _("would remove %s/%s (%s, last used %s)\n")
			                 : _("removed %s/%s (%s, last used %s)\n"),
			       t[i].repo, t[i].name, size, when);
			continue;
		}
		const char *key = strlen(t[i].name) > 41 ? t[i].name + 41 : "-";
		printf("%-12s %-14.12s %-12s %9s  %-16s %s\n", t[i].repo, t[i].sha, key, size, when,
		       t[i].in_use ? _("in use") : _("idle"));
	}
	/* The blobs the removed templates were made into (kubernetes). */
	if (prune && !o.dry_run)
		template_prune_blobs(data, age);
	if (arr) {
		cli_json_print(arr);
	} else if (prune) {
		char size[32];
		units_format_size(freed, size, sizeof size);
		printf(o.dry_run ? _("%zu templates would be removed (%s)\n")
		                 : _("%zu templates removed (%s freed)\n"), removed, size);
	}
	template_list_free(t, n);
	free(data);
	return rc;
}

/* ---------------------------------------------------------------- agent */

/* The installed package of an agent ("" when not installed). */
static char *agent_installed(const char *data, const struct agent_conf *a)
{
	char *dir = adapter_install_dir(data, a);
	if (!dir)
		return xstrdup("");
	char *mark = paths_join(dir, ".paddock-package", NULL);
	struct buf b = {0};
	struct err e;
	char *out = fsx_read_file(mark, 4096, &b, &e) == 0 && b.data
	            ? xstrndup(b.data, strcspn(b.data, "\n")) : xstrdup("?");
	buf_free(&b);
	free(mark);
	free(dir);
	return out;
}

int cmd_agent(int argc, char **argv)
{
	const struct cli_verb *v = cli_verb_find("agent");
	struct cli_opts o;
	int rc = cli_parse_opts(v, argc, argv, &o, "help json");
	if (rc >= 0)
		return rc;
	rc = 0;
	if (optind >= argc)
		return cli_bad_usage(v);
	const char *sub = argv[optind];
	if ((rc = cli_sub_usage(v, sub, "list install")) >= 0)
		return rc;
	rc = 0;
	int install = strcmp(sub, "install") == 0;
	if (!(install && argc - optind == 2) && !(strcmp(sub, "list") == 0 && argc - optind == 1))
		return cli_bad_usage(v);
	struct config cfg;
	if (cli_load_config(&cfg) < 0)
		return EXIT_USAGE;
	struct err e = {{0}};
	char *data = paths_data_dir_ensure(&e);
	if (!data) {
		config_free(&cfg);
		return cli_die(1, "%s", e.msg);
	}
	if (install) {
		const struct agent_conf *a = config_find_agent(&cfg, argv[optind + 1]);
		const char *near = a ? NULL : config_suggest_name(&cfg, "agent", argv[optind + 1]);
		if (!a && near)
			rc = cli_die(EXIT_USAGE, _("no agent named '%s' in the configuration; did you "
			                           "mean '%s'?"), argv[optind + 1], near);
		else if (!a)
			rc = cli_die(EXIT_USAGE, _("no agent named '%s' in the configuration; "
			                           "'paddock agent list' lists them"), argv[optind + 1]);
		else if (!a->package)
			rc = cli_die(EXIT_USAGE, _("agent '%s' has no package to install (it is a "
			                           "script); set agent.%s.package to an npm package "
			                           "to install one"), a->name, a->name);
		else {
			fprintf(stderr, _("installing %s for agent %s...\n"), a->package, a->name);
			fflush(stderr);
			if (adapter_install(data, a, STDERR_FILENO, &e) < 0)
				rc = cli_die(1, "%s", e.msg);
			else
				printf(_("agent %s: %s installed\n"), a->name, a->package);
		}
	} else {
		json_t *arr = o.json ? json_array() : NULL;
		for (size_t i = 0; i < cfg.nagents; i++) {
			const struct agent_conf *a = &cfg.agents[i];
			char *inst = agent_installed(data, a);
			if (arr) {
				json_array_append_new(arr, json_pack("{s:s,s:s,s:s?,s:s?,s:s?,s:b,s:s?}",
					"name", a->name, "kind", config_agent_kind_name(a->kind),
					"endpoint", a->endpoint, "package", a->package, "model", a->model,
					"builtin", a->builtin, "installed", *inst ? inst : NULL));
			} else {
				const char *state = !a->package ? _("script")
				                    : *inst ? inst : _("not installed");
				printf("%-10s %-8s %-10s %s\n", a->name, config_agent_kind_name(a->kind),
				       a->endpoint ? a->endpoint : "-", state);
			}
			free(inst);
		}
		if (arr) {
			char *txt = json_dumps(arr, JSON_INDENT(2));
			puts(txt);
			free(txt);
			json_decref(arr);
		}
	}
	free(data);
	config_free(&cfg);
	return rc;
}
