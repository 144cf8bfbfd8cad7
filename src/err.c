#include "autoconfig.h"
#include "err.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int err_setv(struct err *e, const char *fmt, va_list ap)
{
	if (e) {
		vsnprintf(e->msg, sizeof e->msg, fmt, ap);
		e->kind = ERR_INTERNAL;
	}
	return -1;
}

int err_set(struct err *e, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	err_setv(e, fmt, ap);
	va_end(ap);
	return -1;
}

int err_kind_set(struct err *e, enum err_kind kind, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	err_setv(e, fmt, ap);
	va_end(ap);
	return err_kind_mark(e, kind);
}

int err_kind_mark(struct err *e, enum err_kind kind)
{
	if (e)
		e->kind = kind;
	return -1;
}

int err_errno(struct err *e, const char *fmt, ...)
{
	int saved = errno;
	va_list ap;
	if (!e)
		return -1;
	va_start(ap, fmt);
	err_setv(e, fmt, ap);
	va_end(ap);
	size_t n = strlen(e->msg);
	snprintf(e->msg + n, sizeof e->msg - n, ": %s", strerror(saved));
	errno = saved;
	return -1;
}

int err_prefix(struct err *e, const char *fmt, ...)
{
	char old[ERR_MAX];
	va_list ap;
	if (!e)
		return -1;
	memcpy(old, e->msg, sizeof old);
	va_start(ap, fmt);
	int n = vsnprintf(e->msg, sizeof e->msg, fmt, ap);
	va_end(ap);
	if (n >= 0 && (size_t)n < sizeof e->msg)
		snprintf(e->msg + n, sizeof e->msg - (size_t)n, ": %.*s",
		         (int)(sizeof e->msg - (size_t)n), old);
	return -1;
}

void err_clear(struct err *e)
{
	if (e) {
		e->msg[0] = '\0';
		e->kind = ERR_INTERNAL;
	}
}
