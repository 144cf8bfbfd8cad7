/* source_api: the dashboard's source on a paddock serve's API (source.h,
 * client.h). */
#include "autoconfig.h"
#include "i18n.h"
#include "source.h"

struct source *source_api_new(struct config *cfg, const char *url, const char *token,
                              struct err *e)
{
	(void)cfg;
	(void)url;
	(void)token;
	err_kind_set(e, ERR_INVALID, _("the dashboard's %s source cannot do this; use the "
	                             "dashboard on the machine that runs paddock serve"), "api");
	return NULL;
}
