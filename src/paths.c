#include "autoconfig.h"
#include "paths.h"

#include <pwd.h>
#include <stdarg.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include "buf.h"
#include "fsx.h"
#include "i18n.h"

char *paths_data_dir(void)
{
	const char *h = getenv("PADDOCK_HOME");
	if (h && *h)
		return xstrdup(h);
	const char *x = getenv("XDG_DATA_HOME");
	if (x && *x == '/')
		return xasprintf("%s/paddock", x);
	const char *home = getenv("HOME");
	if (!home || !*home) {
		struct passwd *pw = getpwuid(getuid());
		home = pw && pw->pw_dir ? pw->pw_dir : "/";
	}
	return xasprintf("%s/.local/share/paddock", home);
}

char *paths_join(const char *first, ...)
{
	struct buf b = {0};
	va_list ap;
	buf_adds(&b, first);
	va_start(ap, first);
	for (const char *s; (s = va_arg(ap, const char *));) {
		if (b.len && b.data[b.len - 1] != '/')
			buf_addc(&b, '/');
		buf_adds(&b, s);
	}
	va_end(ap);
	return buf_detach(&b);
}

char *paths_data_dir_ensure(struct err *e)
{
	char *d = paths_data_dir();
	static const char *const subdirs[] = { "mirrors", "templates", "tasks" };
	if (fsx_mkdir_p(d, 0700, e) < 0)
		goto fail;
	for (size_t i = 0; i < sizeof subdirs / sizeof subdirs[0]; i++) {
		char *p = paths_join(d, subdirs[i], NULL);
		int rc = fsx_mkdir_p(p, 0700, e);
		free(p);
		if (rc < 0)
			goto fail;
	}
	return d;
fail:
	err_prefix(e, _("data directory %s (set PADDOCK_HOME to use another)"), d);
	free(d);
	return NULL;
}
