#include "autoconfig.h"
#include "gitlib.h"

#include <dlfcn.h>
#include <git2.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_once_t tls_once = PTHREAD_ONCE_INIT;
static int initialized;

/* The CA bundle libgit2's init asked for, kept for gitlib_tls (NULL: it
 * asked for none, as a libgit2 without mbedTLS never does). */
static char *ca_file;
static int ca_wanted;       /* gitlib_tls ran: parse for real */
static int ca_loaded;       /* the real parse of ca_file succeeded */

/* libgit2 1.5 with mbedTLS (Debian 12's) parses every certificate of the
 * system's CA bundle in git_libgit2_init, through this function of
 * libmbedx509: 3-8 ms in each process that opens a repository, which
 * only a connection to an https remote uses.  This definition comes
 * first in the program's symbol scope, so libgit2's call reaches it:
 * during the init it notes the file and loads nothing (libgit2 then
 * trusts no CA: a TLS connection made without gitlib_tls fails its
 * certificate check, never passes an unchecked one); after gitlib_tls it
 * is the real one.  chain is an mbedtls_x509_crt, opaque here. */
int mbedtls_x509_crt_parse_file(void *chain, const char *path);
int mbedtls_x509_crt_parse_file(void *chain, const char *path)
{
	if (!ca_wanted) {
		if (!ca_file && path)
			ca_file = strdup(path);
		return 0;
	}
	int (*real)(void *, const char *);
	*(void **)&real = dlsym(RTLD_NEXT, "mbedtls_x509_crt_parse_file");
	if (!real)
		return -1;
	int rc = real(chain, path);
	if (rc >= 0 && ca_file && path && strcmp(path, ca_file) == 0)
		ca_loaded = 1;
	return rc;
}

static void gitlib_init_once(void)
{
	git_libgit2_init();
	initialized = 1;
}

void gitlib_init(void)
{
	pthread_once(&once, gitlib_init_once);
}

static void gitlib_tls_once(void)
{
	gitlib_init();
	ca_wanted = 1;
	/* What the init would have loaded, loaded now; a bundle that cannot
	 * be read leaves none trusted, as the init would have. */
	if (ca_file)
		(void)git_libgit2_opts(GIT_OPT_SET_SSL_CERT_LOCATIONS, ca_file, NULL);
}

void gitlib_tls(void)
{
	pthread_once(&tls_once, gitlib_tls_once);
}

int gitlib_ca_state(void)
{
	if (ca_loaded)
		return 2;
	return ca_file ? 1 : 0;
}

void gitlib_home_changed(void)
{
	/* Not initialized yet: the first init reads the HOME of then. */
	if (!initialized)
		return;
	git_libgit2_opts(GIT_OPT_SET_SEARCH_PATH, GIT_CONFIG_LEVEL_GLOBAL, NULL);
	git_libgit2_opts(GIT_OPT_SET_SEARCH_PATH, GIT_CONFIG_LEVEL_XDG, NULL);
}
