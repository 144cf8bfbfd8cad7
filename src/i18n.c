#include "autoconfig.h"
#include "i18n.h"

#include <locale.h>

void i18n_init(void)
{
	setlocale(LC_ALL, "");
#if ENABLE_NLS
	bindtextdomain(PACKAGE, LOCALEDIR);
	textdomain(PACKAGE);
#endif
}
