#include "autoconfig.h"
#include "cli.h"
#include "i18n.h"

#include <git2.h>

int main(int argc, char **argv)
{
	i18n_init();
	/* libgit2 stays initialized for the whole process (and the
	 * supervisors forked from it): each module's own init and shutdown
	 * then only count, where the first init of a count from zero loads
	 * and parses every CA certificate of the system (5 ms, several
	 * times per task). */
	git_libgit2_init();
	return cli_main(argc, argv);
}
