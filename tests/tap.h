/* tap.h: minimal TAP output for C unit tests. */
#ifndef PADDOCK_TAP_H
#define PADDOCK_TAP_H

#include <stdio.h>
#include <string.h>
#include <stdarg.h>

static int tap_n, tap_failed;

static void tap_ok(int cond, const char *fmt, ...) __attribute__((format(printf, 2, 3), unused));
static void tap_ok(int cond, const char *fmt, ...)
{
	va_list ap;
	printf("%sok %d - ", cond ? "" : "not ", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (!cond)
		tap_failed++;
}

#define ok(cond, ...) tap_ok(!!(cond), __VA_ARGS__)
#define is_str(got, want, ...) do { \
	const char *g_ = (got), *w_ = (want); \
	int c_ = (g_ && w_) ? strcmp(g_, w_) == 0 : g_ == w_; \
	tap_ok(c_, __VA_ARGS__); \
	if (!c_) printf("#   got: '%s'\n#  want: '%s'\n", g_ ? g_ : "(null)", w_ ? w_ : "(null)"); \
} while (0)
#define is_int(got, want, ...) do { \
	long long g_ = (got), w_ = (want); \
	tap_ok(g_ == w_, __VA_ARGS__); \
	if (g_ != w_) printf("#   got: %lld\n#  want: %lld\n", g_, w_); \
} while (0)

static int tap_done(void) __attribute__((unused));
static int tap_done(void)
{
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}

#endif
