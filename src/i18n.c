#include "autoconfig.h"
#include "i18n.h"

#include <locale.h>
#include <stdlib.h>

void i18n_init(void)
{
	setlocale(LC_ALL, "");
#if ENABLE_NLS
	/* PADDOCK_LOCALEDIR: catalogues of an uninstalled build (tests). */
	const char *dir = getenv("PADDOCK_LOCALEDIR");
	bindtextdomain(PACKAGE, dir && *dir ? dir : LOCALEDIR);
	bind_textdomain_codeset(PACKAGE, "UTF-8");
	textdomain(PACKAGE);
#endif
}
