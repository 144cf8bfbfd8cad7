/* buf: a growable NUL-terminated byte buffer.
 *
 * A zeroed struct buf is an empty buffer.  The buffer owns `data`; free it
 * with buf_free.  Allocation failure aborts (out of memory is not an error a
 * user can act on). */
#ifndef PADDOCK_BUF_H
#define PADDOCK_BUF_H

#include <stdarg.h>
#include <stddef.h>

struct buf {
	char *data;
	size_t len;
	size_t cap;
};

void buf_grow(struct buf *b, size_t extra);
void buf_add(struct buf *b, const void *p, size_t n);
void buf_adds(struct buf *b, const char *s);
void buf_addc(struct buf *b, char c);
void buf_printf(struct buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void buf_vprintf(struct buf *b, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));
/* buf_printf in the C locale ("2.56", never "2,56"), whatever the
 * thread's: for text written to be read in any locale (the task log). */
void buf_printf_c(struct buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void buf_vprintf_c(struct buf *b, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));
void buf_reset(struct buf *b);
void buf_free(struct buf *b);
/* Returns data (never NULL) and leaves b empty; caller frees. */
char *buf_detach(struct buf *b);

/* Allocation helpers that abort on failure. */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t m);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
