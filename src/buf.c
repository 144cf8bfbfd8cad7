#include "autoconfig.h"
#include "buf.h"

#include <locale.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void oom(void)
{
	fputs("paddock: out of memory\n", stderr);
	abort();
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom();
	return p;
}

void *xcalloc(size_t n, size_t m)
{
	void *p = calloc(n ? n : 1, m ? m : 1);
	if (!p)
		oom();
	return p;
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		oom();
	return p;
}

char *xstrdup(const char *s)
{
	char *p = strdup(s);
	if (!p)
		oom();
	return p;
}

char *xstrndup(const char *s, size_t n)
{
	char *p = strndup(s, n);
	if (!p)
		oom();
	return p;
}

char *xasprintf(const char *fmt, ...)
{
	char *p;
	va_list ap;
	va_start(ap, fmt);
	if (vasprintf(&p, fmt, ap) < 0)
		oom();
	va_end(ap);
	return p;
}

void buf_grow(struct buf *b, size_t extra)
{
	if (b->len + extra + 1 <= b->cap)
		return;
	int was_empty = b->data == NULL;
	size_t cap = b->cap ? b->cap : 64;
	while (cap < b->len + extra + 1)
		cap *= 2;
	b->data = xrealloc(b->data, cap);
	b->cap = cap;
	if (was_empty)
		b->data[0] = '\0';
}

void buf_add(struct buf *b, const void *p, size_t n)
{
	buf_grow(b, n);
	memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
}

void buf_adds(struct buf *b, const char *s)
{
	buf_add(b, s, strlen(s));
}

void buf_addc(struct buf *b, char c)
{
	buf_add(b, &c, 1);
}

void buf_vprintf(struct buf *b, const char *fmt, va_list ap)
{
	va_list again;
	va_copy(again, ap);
	int n = vsnprintf(NULL, 0, fmt, ap);
	if (n >= 0) {
		buf_grow(b, (size_t)n);
		vsnprintf(b->data + b->len, (size_t)n + 1, fmt, again);
		b->len += (size_t)n;
	}
	va_end(again);
}

/* The C locale, made once for every thread. */
static locale_t c_loc;
static pthread_once_t c_once = PTHREAD_ONCE_INIT;
static void c_make(void)
{
	c_loc = newlocale(LC_ALL_MASK, "C", (locale_t)0);
}

static locale_t c_locale(void)
{
	pthread_once(&c_once, c_make);
	return c_loc;
}

void buf_vprintf_c(struct buf *b, const char *fmt, va_list ap)
{
	locale_t c = c_locale();
	locale_t was = c ? uselocale(c) : (locale_t)0;
	buf_vprintf(b, fmt, ap);
	if (was)
		uselocale(was);
}

void buf_printf_c(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	buf_vprintf_c(b, fmt, ap);
	va_end(ap);
}

void buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	buf_vprintf(b, fmt, ap);
	va_end(ap);
}

void buf_reset(struct buf *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = '\0';
}

void buf_free(struct buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

char *buf_detach(struct buf *b)
{
	char *p = b->data ? b->data : xstrdup("");
	b->data = NULL;
	b->len = b->cap = 0;
	return p;
}
