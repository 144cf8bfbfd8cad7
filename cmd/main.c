#include "autoconfig.h"
#include "cli.h"
#include "i18n.h"

int main(int argc, char **argv)
{
	/* libgit2 is initialized on first use and kept (src/gitlib.h): a
	 * command that reads no repository does not pay for it. */
	i18n_init();
	return cli_main(argc, argv);
}
