#include "autoconfig.h"
#include "gitlib.h"

#include <git2.h>
#include <pthread.h>

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int initialized;

static void gitlib_init_once(void)
{
	git_libgit2_init();
	initialized = 1;
}

void gitlib_init(void)
{
	pthread_once(&once, gitlib_init_once);
}

void gitlib_home_changed(void)
{
	/* Not initialized yet: the first init reads the HOME of then. */
	if (!initialized)
		return;
	git_libgit2_opts(GIT_OPT_SET_SEARCH_PATH, GIT_CONFIG_LEVEL_GLOBAL, NULL);
	git_libgit2_opts(GIT_OPT_SET_SEARCH_PATH, GIT_CONFIG_LEVEL_XDG, NULL);
}
