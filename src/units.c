#include "autoconfig.h"
#include "units.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* Longest duration accepted: fits an int of seconds, so callers may convert
 * it to time_t, int or a struct timespec without overflow. */
#define UNITS_MAX_SECONDS 2147483647.0

/* Reads the leading decimal digits of s into *v; returns the number of
 * digits, 0 when there are none or the value overflows. */
static size_t units_digits(const char *s, uint64_t *v)
{
	size_t i = 0;
	uint64_t n = 0;

	while (s[i] >= '0' && s[i] <= '9') {
		unsigned d = (unsigned)(s[i] - '0');
		if (n > (UINT64_MAX - d) / 10)
			return 0;
		n = n * 10 + d;
		i++;
	}
	*v = n;
	return i;
}

int units_parse_duration(const char *s, double *seconds)
{
	uint64_t n, mult;
	size_t i;

	if (!s)
		return -1;
	i = units_digits(s, &n);
	if (i == 0 || n == 0)
		return -1;
	switch (tolower((unsigned char)s[i])) {
	case '\0': mult = 1; break;
	case 's': mult = 1; i++; break;
	case 'm': mult = 60; i++; break;
	case 'h': mult = 3600; i++; break;
	case 'd': mult = 86400; i++; break;
	default: return -1;
	}
	if (s[i] != '\0')
		return -1;
	if ((double)n * (double)mult > UNITS_MAX_SECONDS)
		return -1;
	*seconds = (double)(n * mult);
	return 0;
}

int units_parse_size(const char *s, uint64_t *bytes)
{
	uint64_t n, mult = 1;
	size_t i;
	const char *rest;

	if (!s)
		return -1;
	i = units_digits(s, &n);
	if (i == 0 || n == 0)
		return -1;
	rest = s + i;
	switch (tolower((unsigned char)*rest)) {
	case 'k': mult = 1ULL << 10; rest++; break;
	case 'm': mult = 1ULL << 20; rest++; break;
	case 'g': mult = 1ULL << 30; rest++; break;
	case 't': mult = 1ULL << 40; rest++; break;
	default: break;
	}
	/* "4g", "4gb", "4gib", "100", "100b"; never "100ib". */
	if (*rest != '\0') {
		if (mult != 1 && strcasecmp(rest, "ib") == 0)
			;
		else if (strcasecmp(rest, "b") != 0)
			return -1;
	}
	if (n > UINT64_MAX / mult)
		return -1;
	*bytes = n * mult;
	return 0;
}

void units_format_money(double usd, int decimals, char *out, size_t outlen)
{
	double unit = 1;
	for (int i = 0; i < decimals; i++)
		unit /= 10;
	if (!out || outlen == 0)
		return;
	if (!(usd > 0) || usd >= unit - unit / 2e6) {
		snprintf(out, outlen, "%.*f", decimals, usd > 0 ? usd : 0);
		return;
	}
	/* Two significant digits, at most 9 places, trailing zeros cut. */
	int d = decimals;
	for (double at = unit; usd < at - at / 2e6 && d < 8; at /= 10)
		d++;
	snprintf(out, outlen, "%.*f", d + 1, usd);
	size_t n = strlen(out);
	while (n > 0 && out[n - 1] == '0')
		out[--n] = '\0';
	if (n > 0 && out[n - 1] == '.')  /* below a billionth: nothing to show */
		snprintf(out, outlen, "%.*f", decimals, 0.0);
}

void units_format_size(uint64_t bytes, char *out, size_t outlen)
{
	static const struct { unsigned shift; char c; } u[] = {
		{ 40, 't' }, { 30, 'g' }, { 20, 'm' }, { 10, 'k' },
	};
	size_t i;

	if (!out || outlen == 0)
		return;
	for (i = 0; bytes != 0 && i < sizeof(u) / sizeof(u[0]); i++) {
		uint64_t unit = 1ULL << u[i].shift;
		if (bytes % unit == 0) {
			snprintf(out, outlen, "%llu%c",
				 (unsigned long long)(bytes / unit), u[i].c);
			return;
		}
	}
	snprintf(out, outlen, "%llu", (unsigned long long)bytes);
}

int units_parse_money(const char *s, double *usd)
{
	uint64_t whole = 0, frac = 0, scale = 1;
	const char *p = s;

	if (*p == '$')
		p++;
	if (!isdigit((unsigned char)*p))
		return -1;
	for (; isdigit((unsigned char)*p); p++) {
		whole = whole * 10 + (uint64_t)(*p - '0');
		if (whole > 1000000000ULL)
			return -1;
	}
	if (*p == '.') {
		p++;
		if (!isdigit((unsigned char)*p))
			return -1;
		for (; isdigit((unsigned char)*p); p++) {
			if (scale >= 1000000)
				return -1;
			frac = frac * 10 + (uint64_t)(*p - '0');
			scale *= 10;
		}
	}
	if (*p)
		return -1;
	*usd = (double)whole + (double)frac / (double)scale;
	return 0;
}

int units_parse_count(const char *s, uint64_t *n)
{
	uint64_t v = 0, mult = 1;
	const char *p = s;

	if (!isdigit((unsigned char)*p))
		return -1;
	for (; isdigit((unsigned char)*p); p++) {
		v = v * 10 + (uint64_t)(*p - '0');
		if (v > (1ULL << 53))
			return -1;
	}
	if (*p == 'k' || *p == 'K')
		mult = 1000, p++;
	else if (*p == 'm' || *p == 'M')
		mult = 1000000, p++;
	if (*p || v > (1ULL << 53) / mult)
		return -1;
	*n = v * mult;
	return 0;
}
