/* test-units: durations and sizes as a user writes them in the config. */
#include "autoconfig.h"
#include "units.h"

#include <stdint.h>
#include "tap.h"

static int dur(const char *s, double want)
{
	double got = -1;
	return units_parse_duration(s, &got) == 0 && got == want;
}

static int dur_bad(const char *s)
{
	double got = 12345;
	return units_parse_duration(s, &got) == -1 && got == 12345;
}

static int size(const char *s, uint64_t want)
{
	uint64_t got = 0;
	return units_parse_size(s, &got) == 0 && got == want;
}

static int size_bad(const char *s)
{
	uint64_t got = 777;
	return units_parse_size(s, &got) == -1 && got == 777;
}

static const char *fmt(uint64_t v)
{
	static char out[32];
	units_format_size(v, out, sizeof(out));
	return out;
}

int main(void)
{
	ok(dur("30m", 1800), "30m is 1800 seconds");
	ok(dur("90s", 90), "90s is 90 seconds");
	ok(dur("2h", 7200), "2h is 7200 seconds");
	ok(dur("1d", 86400), "1d is 86400 seconds");
	ok(dur("45", 45), "a plain number is seconds");
	ok(dur("10M", 600), "duration suffixes are case-insensitive");
	ok(dur_bad("0"), "zero duration refused");
	ok(dur_bad("0m"), "zero minutes refused");
	ok(dur_bad("-5m"), "negative duration refused");
	ok(dur_bad(""), "empty duration refused");
	ok(dur_bad("m"), "suffix without number refused");
	ok(dur_bad("5x"), "unknown suffix refused");
	ok(dur_bad("5 m"), "space inside refused");
	ok(dur_bad("1.5h"), "fractions refused");
	ok(dur_bad("5mm"), "trailing garbage refused");
	ok(dur_bad("99999999999999999999999"), "digits overflowing 64 bits refused");
	ok(dur_bad("999999999999d"), "duration beyond range refused");
	ok(dur_bad(NULL), "NULL refused");

	ok(size("4g", 4ULL << 30), "4g");
	ok(size("64m", 64ULL << 20), "64m");
	ok(size("512k", 512ULL << 10), "512k");
	ok(size("1t", 1ULL << 40), "1t");
	ok(size("100", 100), "plain bytes");
	ok(size("100b", 100), "plain bytes with b");
	ok(size("4G", 4ULL << 30), "upper-case suffix");
	ok(size("4GB", 4ULL << 30), "GB");
	ok(size("4gib", 4ULL << 30), "gib");
	ok(size("4GiB", 4ULL << 30), "GiB");
	ok(size("200Mb", 200ULL << 20), "Mb");
	ok(size_bad("0"), "zero size refused");
	ok(size_bad("0g"), "zero gigabytes refused");
	ok(size_bad("-1g"), "negative size refused");
	ok(size_bad(""), "empty size refused");
	ok(size_bad("g"), "suffix without number refused");
	ok(size_bad("4x"), "unknown suffix refused");
	ok(size_bad("4gx"), "garbage after suffix refused");
	ok(size_bad("100ib"), "ib without a unit refused");
	ok(size_bad("4 g"), "space inside refused");
	ok(size_bad("1.5g"), "fractions refused");
	ok(size_bad("16777216t"), "2^64 bytes overflows and is refused");
	ok(size("16777215t", 16777215ULL << 40), "largest whole terabyte count fits");
	ok(size("18446744073709551615", UINT64_MAX), "UINT64_MAX bytes");
	ok(size_bad("18446744073709551616"), "UINT64_MAX + 1 refused");

	is_str(fmt(64ULL << 20), "64m", "format 64m");
	is_str(fmt(2ULL << 30), "2g", "format 2g");
	is_str(fmt(512ULL << 10), "512k", "format 512k");
	is_str(fmt(3ULL << 40), "3t", "format 3t");
	is_str(fmt(100), "100", "format plain bytes");
	is_str(fmt(1536ULL << 20), "1536m", "1.5g formats exactly as 1536m");
	is_str(fmt(1025), "1025", "non-multiple stays in bytes");
	is_str(fmt(0), "0", "format zero");
	{
		uint64_t back = 0;
		ok(units_parse_size(fmt(200ULL << 20), &back) == 0 && back == (200ULL << 20),
		   "formatted size parses back");
	}
	return tap_done();
}
