/* units: parsing of durations ("30m", "90s", "2h") and sizes ("4g", "64m"). */
#ifndef PADDOCK_UNITS_H
#define PADDOCK_UNITS_H

#include <stddef.h>
#include <stdint.h>

/* Seconds.  Accepts an integer with optional suffix s, m, h, d
 * (case-insensitive), at most 2^31-1 seconds.  Returns 0 on success, -1
 * when the text is not a valid positive duration (zero, sign, space,
 * fraction, unknown suffix, overflow); *seconds is then unchanged. */
int units_parse_duration(const char *s, double *seconds);
/* Bytes.  Accepts an integer with optional suffix k, m, g, t (powers of
 * 1024, case-insensitive, optional trailing 'b' or 'ib': "4g", "4GiB",
 * "100", "100b").  Returns -1 for zero, signs, spaces, fractions, unknown
 * suffixes and values above 2^64-1; *bytes is then unchanged. */
int units_parse_size(const char *s, uint64_t *bytes);
/* US dollars: "5", "2.50", "$2.50", "0" (none); at most 1e9, at most six
 * decimals.  -1 for signs, spaces, exponents and other text. */
int units_parse_money(const char *s, double *usd);
/* A count with an optional k or m suffix (powers of 1000): "200000",
 * "500k", "2m", "0".  -1 for anything else or above 2^53. */
int units_parse_count(const char *s, uint64_t *n);
/* Formats bytes as "64m"/"2g"/"512k"/"100" into out (>= 32 bytes): the
 * largest unit that divides it exactly, so the text parses back. */
void units_format_size(uint64_t bytes, char *out, size_t outlen);
/* Formats US dollars without "$" into out (>= 32 bytes): with decimals
 * places ("2.50" at 2), and an amount below that precision with two
 * significant digits instead ("0.001", "0.0042"), so that a small budget
 * or cost is not shown as 0. */
void units_format_money(double usd, int decimals, char *out, size_t outlen);

#endif
