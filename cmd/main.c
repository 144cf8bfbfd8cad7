#include "autoconfig.h"
#include "cli.h"
#include "i18n.h"

int main(int argc, char **argv)
{
	i18n_init();
	return cli_main(argc, argv);
}
