/* kubernetes manifest: the objects an admin applies once for the
 * kubernetes backend (kube_spec.h), from the configuration. */
#include "autoconfig.h"
#include "cli.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "buf.h"
#include "config.h"
#include "i18n.h"
#include "kube_check.h"
#include "kube_spec.h"
#include "kube_yaml.h"
#include "paths.h"

int cmd_kubernetes(int argc, char **argv)
{
	const struct cli_verb *v = cli_verb_find("kubernetes");
	struct cli_opts o;
	int rc = cli_parse_opts(v, argc, argv, &o, "help json namespace");
	if (rc >= 0)
		return rc;
	if (optind >= argc)
		return cli_bad_usage(v);
	if ((rc = cli_sub_usage(v, argv[optind], "manifest")) >= 0)
		return rc;
	if (argc - optind != 1)
		return cli_bad_usage(v);
	rc = 0;
	struct config cfg;
	if (cli_load_config(&cfg) < 0)
		return EXIT_USAGE;
	struct err e = {{0}};
	char *data = paths_data_dir_ensure(&e);
	char *instance = data ? paths_instance_id(data, &e) : NULL;
	if (!instance) {
		free(data);
		config_free(&cfg);
		return cli_die(1, "%s", e.msg);
	}
	struct kube_check_conf c;
	if (kube_check_conf_init(&c, &cfg.kube, &cfg.limits, instance, o.namespace, &e) < 0) {
		rc = cli_die(EXIT_USAGE, "%s", e.msg);
	} else {
		json_t *list = kube_spec_manifest(&c.spec, &e);
		struct buf b = {0};
		if (!list)
			rc = cli_die(EXIT_USAGE, "%s", e.msg);
		else if (o.json)
			cli_json_print(json_incref(list));
		else if (kube_yaml_documents(list, &b, &e) < 0)
			rc = cli_die(1, "%s", e.msg);
		else
			fwrite(b.data, 1, b.len, stdout);
		if (fflush(stdout) != 0 && rc == 0)
			rc = cli_die(1, _("cannot write the manifest to standard output"));
		buf_free(&b);
		json_decref(list);
		kube_check_conf_free(&c);
	}
	free(instance);
	free(data);
	config_free(&cfg);
	return rc;
}
