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

/* C_("context", "text"): _("text") where the same English word means two
 * things in another language ("cancelled": a status, a declined
 * question); xgettext's keyword C_:1c,2 gives it its own msgctxt. */
static inline const char *i18n_pgettext(const char *ctx_msgid, const char *msgid)
{
	const char *t = _(ctx_msgid);
	return t == ctx_msgid ? msgid : t;
}
#define C_(ctx, s) i18n_pgettext(ctx "\004" s, s)

/* Binds the text domain; call once from main. */
void i18n_init(void);

#endif
