/* paddock shell: a reviewer's shell in a task's kept sandbox (shell.h;
 * paddock(1), THE SHELL). */
#include "autoconfig.h"
#include "cli.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "i18n.h"
#include "shell.h"
#include "store.h"

int cmd_shell(int argc, char **argv)
{
	const struct cli_verb *v = cli_verb_find("shell");
	/* Options and the ID come before "--", the command after it: its
	 * own options are not paddock's. */
	int dd = 1;
	while (dd < argc && strcmp(argv[dd], "--") != 0)
		dd++;
	struct cli_opts o;
	int rc = cli_parse_opts(v, dd, argv, &o, "help keep yes");
	if (rc >= 0)
		return rc;
	if (optind != dd - 1)
		return cli_bad_usage(v);
	if (o.yes && !o.keep)
		return cli_die(EXIT_USAGE, "%s", _("--yes answers the question of --keep; it needs "
		                                   "--keep"));
	const char *id = argv[optind];
	if ((rc = cli_id_usage(id)) >= 0)
		return rc;
	const char *const *cmd = dd + 1 < argc ? (const char *const *)argv + dd + 1 : NULL;
	char *data = NULL;
	struct store *s = cli_open_store(&data, 0);
	if (!s)
		return 1;
	store_close(s);
	struct err e = {{0}};
	fflush(stdout);
	int status = shell_run(data, id, (o.keep ? SHELL_KEEP : 0) | (o.yes ? SHELL_KEEP_YES : 0),
	                       cmd, &e);
	free(data);
	if (status < 0)
		return cli_die(e.kind == ERR_INVALID ? EXIT_USAGE : 1, "%s", e.msg);
	return status;
}
