/* test-gitlib: libgit2's CA certificates wait for the first connection
 * (gitlib.h): opening repositories parses none, remote_auth_init loads
 * them, and until then libgit2 trusts none. */
#include "autoconfig.h"
#include "gitlib.h"
#include "remote.h"

#include <git2.h>
#include <stdlib.h>
#include <string.h>
#include "tap.h"
#include "testlib.h"

int main(void)
{
	gitlib_init();
	git_repository *repo = NULL;
	char *dir = testlib_tmpdir("gitlib");
	ok(git_repository_init(&repo, dir, 1) == 0, "a repository opens after gitlib_init");
	git_repository_free(repo);
	int s = gitlib_ca_state();
	if (s == 0) {
		ok(1, "# SKIP libgit2 loads no CA bundle at its init");
	} else {
		ok(s == 1, "libgit2's init and a repository parsed no certificate (state %d)", s);
		struct repo_conf rc;
		memset(&rc, 0, sizeof rc);
		rc.name = (char *)"r";
		struct remote_auth a;
		remote_auth_init(&a, &rc, REMOTE_FETCH, "https://example.invalid/r.git");
		ok(gitlib_ca_state() == 2, "a connection's remote_auth_init loads them (state %d)",
		   gitlib_ca_state());
		remote_auth_free(&a);
		gitlib_tls();
		ok(gitlib_ca_state() == 2, "once: a second gitlib_tls keeps them");
	}
	git_libgit2_shutdown();
	testlib_end();
	return tap_done();
}
