/* i18n: gettext macros shared by the engine, the CLI and the UI. */
#ifndef PADDOCK_I18N_H
#define PADDOCK_I18N_H

#include "autoconfig.h"

#if ENABLE_NLS
#include <libintl.h>
#define _(s) gettext(s)
#else
#define _(s) (s)
#define ngettext(one, many, n) ((n) == 1 ? (one) : (many))
#endif
#define N_(s) (s)

/* Binds the text domain; call once from main. */
void i18n_init(void);

#endif
