/* forge-tool: drives forge.c (and github.c's pull requests) for
 * tests/push.test until the CLI has verbs for it.  Repos come from the config ($PADDOCK_CONFIG), the data dir from
 * $PADDOCK_HOME; tokens come only from the variables the config names, so
 * no secret is ever on this program's command line.
 *
 *   forge-tool mirror REPO                    update the mirror, print its path
 *   forge-tool push REPO BRANCH COMMIT        forge_push
 *   forge-tool pr REPO BRANCH TITLE [BODY]    github_pull_request_open (no store),
 *                                             print the URL
 *
 * Errors go to stderr as "forge-tool: MESSAGE", exit status 1 (2: usage). */
#include "autoconfig.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "err.h"
#include "forge.h"
#include "github.h"
#include "mirror.h"
#include "paths.h"

/* libgit2 1.5's git_regexp_match leaks its pcre2 match data when nothing
 * matches (config lookups); not ours to fix.  The stacks stop in libpcre2
 * (no frame pointers), so the whole library is named. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:libpcre2-8.so\n";
}

static int usage(void)
{
	fprintf(stderr, "usage: forge-tool mirror REPO\n"
	                "       forge-tool push REPO BRANCH COMMIT\n"
	                "       forge-tool pr REPO BRANCH TITLE [BODY]\n");
	return 2;
}

int main(int argc, char **argv)
{
	struct config c;
	struct err e;
	const struct repo_conf *r;
	char *data = NULL;
	int rc = 1;

	if (argc < 3)
		return usage();
	if (config_load(&c, NULL, &e) < 0) {
		fprintf(stderr, "forge-tool: %s\n", e.msg);
		config_free(&c);
		return 1;
	}
	r = config_find_repo(&c, argv[2]);
	if (!r) {
		fprintf(stderr, "forge-tool: no repo %s in the config\n", argv[2]);
		goto out;
	}
	data = paths_data_dir();
	if (strcmp(argv[1], "mirror") == 0 && argc == 3) {
		if (mirror_update(data, r, &e) < 0)
			goto fail;
		char *m = mirror_path(data, r->name);
		printf("%s\n", m);
		free(m);
		rc = 0;
	} else if (strcmp(argv[1], "push") == 0 && argc == 5) {
		if (forge_push(data, r, argv[3], argv[4], &e) < 0)
			goto fail;
		rc = 0;
	} else if (strcmp(argv[1], "pr") == 0 && (argc == 5 || argc == 6)) {
		struct github_pull_request pr = { argv[3], argv[4], argc == 6 ? argv[5] : "" };
		char *url = NULL;
		/* No store: each run is on its own, so a rate limit one run is
		 * told of holds back no later run of push.test. */
		if (github_pull_request_open(r, NULL, &pr, &url, &e) < 0)
			goto fail;
		printf("%s\n", url);
		free(url);
		rc = 0;
	} else
		rc = usage();
	goto out;
fail:
	fprintf(stderr, "forge-tool: %s\n", e.msg);
out:
	free(data);
	config_free(&c);
	return rc;
}
