#include "autoconfig.h"
#include "report.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "buf.h"
#include "fsx.h"

static const struct {
	const char *name, *arg, *doc;
} verbs[REPORT_N] = {
#define REPORT_ROW(ID, name, arg, doc) [REPORT_##ID] = { #name, arg, doc },
	REPORT_INFO(REPORT_ROW)
#undef REPORT_ROW
};

const char *report_name(enum report_verb v)
{
	return (unsigned)v < REPORT_N ? verbs[v].name : NULL;
}

const char *report_arg(enum report_verb v)
{
	return (unsigned)v < REPORT_N ? verbs[v].arg : NULL;
}

const char *report_doc(enum report_verb v)
{
	return (unsigned)v < REPORT_N ? verbs[v].doc : NULL;
}

int report_send(int fd, enum report_verb v, const char *arg)
{
	if ((unsigned)v >= REPORT_N)
		return -1;
	struct buf out = {0};
	buf_adds(&out, verbs[v].name);
	if (arg) {
		buf_addc(&out, ' ');
		/* One event per line: newlines inside travel escaped. */
		for (const char *p = arg; *p; p++) {
			if (*p == '\n')
				buf_adds(&out, "\\n");
			else if (*p == '\\')
				buf_adds(&out, "\\\\");
			else
				buf_addc(&out, *p);
		}
	}
	buf_addc(&out, '\n');
	int rc = fsx_write_all(fd, out.data, out.len);
	buf_free(&out);
	return rc;
}

int report_sendf(int fd, enum report_verb v, const char *fmt, ...)
{
	struct buf b = {0};
	va_list ap;
	va_start(ap, fmt);
	buf_vprintf(&b, fmt, ap);
	va_end(ap);
	int rc = report_send(fd, v, b.data ? b.data : "");
	buf_free(&b);
	return rc;
}

static void report_unescape(char *s)
{
	char *o = s;
	for (; *s; s++) {
		if (*s == '\\' && (s[1] == 'n' || s[1] == '\\')) {
			*o++ = s[1] == 'n' ? '\n' : '\\';
			s++;
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
}

int report_parse(char *line, enum report_verb *v, const char **arg)
{
	size_t n = strcspn(line, " ");
	for (int i = 0; i < REPORT_N; i++) {
		if (strlen(verbs[i].name) != n || strncmp(line, verbs[i].name, n) != 0)
			continue;
		if ((verbs[i].arg != NULL) != (line[n] == ' '))
			return -1;
		*v = (enum report_verb)i;
		*arg = NULL;
		if (line[n] == ' ') {
			report_unescape(line + n + 1);
			*arg = line + n + 1;
		}
		return 0;
	}
	return -1;
}
