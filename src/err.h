/* err: error messages for the user.
 *
 * Engine functions that can fail take a `struct err *` last, return -1 (or
 * NULL) on failure and leave a complete, translated, one-line message in it
 * that says what went wrong and, where possible, what to do. */
#ifndef PADDOCK_ERR_H
#define PADDOCK_ERR_H

#include <stdarg.h>

#define ERR_MAX 2048

struct err {
	char msg[ERR_MAX];
};

/* Sets the message (printf format).  Always returns -1 so callers can write
 * `return err_set(e, ...)`.  e may be NULL. */
int err_set(struct err *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int err_setv(struct err *e, const char *fmt, va_list ap);
/* Like err_set, appending ": strerror(errno)". */
int err_errno(struct err *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Prefixes the current message with "prefix: ". */
int err_prefix(struct err *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void err_clear(struct err *e);

#endif
