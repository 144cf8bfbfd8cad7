#include "autoconfig.h"
#include "sanitize.h"

#include <stdint.h>

/* Longest SGR parameter string passed through; a longer one is dropped (no
 * real colour change needs it, and it bounds what a hostile writer can
 * make the terminal parse). */
#define SGR_MAX_PARAMS 64

static const char replacement[] = "\xef\xbf\xbd";   /* U+FFFD */

/* Decodes one strict UTF-8 sequence at p (n bytes available).  Returns its
 * length and stores the code point, or 0 when the bytes at p do not start
 * a valid sequence (overlong, surrogate, above U+10FFFF, truncated, stray
 * continuation byte). */
static size_t sanitize_utf8(const unsigned char *p, size_t n, uint32_t *cp)
{
	unsigned char c = p[0];
	unsigned char lo = 0x80, hi = 0xbf;
	size_t len, i;
	uint32_t v;

	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
		v = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		v = c & 0x0f;
		if (c == 0xe0)
			lo = 0xa0;          /* overlong */
		else if (c == 0xed)
			hi = 0x9f;          /* surrogates */
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		v = c & 0x07;
		if (c == 0xf0)
			lo = 0x90;          /* overlong */
		else if (c == 0xf4)
			hi = 0x8f;          /* above U+10FFFF */
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (i = 1; i < len; i++) {
		unsigned char b = p[i];
		if (i == 1 ? (b < lo || b > hi) : (b < 0x80 || b > 0xbf))
			return 0;
		v = (v << 6) | (b & 0x3f);
	}
	*cp = v;
	return len;
}

/* Skips the body of a control sequence (CSI): parameter bytes 0x30-0x3f,
 * intermediates 0x20-0x2f, final byte 0x40-0x7e.  i points after the
 * introducer.  Returns the index after the sequence; a sequence cut short
 * by another byte ends before that byte (which is then shown normally),
 * one cut short by the end of input ends there.  *final is the final byte
 * or 0. */
static size_t sanitize_csi(const unsigned char *p, size_t n, size_t i,
			   int *sgr_ok, unsigned char *final)
{
	size_t start = i;
	int params_ok = 1;

	*final = 0;
	while (i < n && p[i] >= 0x30 && p[i] <= 0x3f) {
		if (!((p[i] >= '0' && p[i] <= '9') || p[i] == ';' || p[i] == ':'))
			params_ok = 0;
		i++;
	}
	if (i - start > SGR_MAX_PARAMS)
		params_ok = 0;
	while (i < n && p[i] >= 0x20 && p[i] <= 0x2f) {
		params_ok = 0;
		i++;
	}
	if (i < n && p[i] >= 0x40 && p[i] <= 0x7e) {
		*final = p[i];
		i++;
	}
	*sgr_ok = params_ok && *final == 'm';
	return i;
}

/* Skips a control string (OSC, DCS, SOS, PM, APC) whose introducer ends
 * before i.  It ends with BEL, ST (ESC \ or U+009C) or CAN/SUB.  An
 * unterminated string also ends before a newline, so that a stray
 * introducer cannot hide the rest of the output; a string cut short by the
 * end of input is dropped. */
static size_t sanitize_string(const unsigned char *p, size_t n, size_t i)
{
	while (i < n) {
		unsigned char c = p[i];
		if (c == 0x07 || c == 0x18 || c == 0x1a)
			return i + 1;
		if (c == 0x1b && i + 1 < n && p[i + 1] == '\\')
			return i + 2;
		if (c == 0xc2 && i + 1 < n && p[i + 1] == 0x9c)
			return i + 2;
		if (c == '\n')
			return i;
		i++;
	}
	return i;
}

static void sanitize_caret(struct buf *out, unsigned char c)
{
	char s[2] = { '^', (char)(c == 0x7f ? '?' : c + 0x40) };
	buf_add(out, s, 2);
}

void sanitize_text(const char *in, size_t len, int keep_sgr, struct buf *out)
{
	const unsigned char *p = (const unsigned char *)in;
	size_t i = 0;

	if (!in)
		return;
	buf_grow(out, len);
	out->data[out->len] = '\0';   /* terminated even if nothing is added */
	while (i < len) {
		unsigned char c = p[i];
		size_t run;

		/* Printable ASCII in one go. */
		for (run = i; run < len && p[run] >= 0x20 && p[run] < 0x7f; run++)
			;
		if (run > i) {
			buf_add(out, p + i, run - i);
			i = run;
			continue;
		}
		if (c == '\n' || c == '\t') {
			buf_addc(out, (char)c);
			i++;
		} else if (c == '\r') {
			if (!(i + 1 < len && p[i + 1] == '\n'))
				buf_adds(out, "^M");
			i++;
		} else if (c == 0x1b) {
			unsigned char next = i + 1 < len ? p[i + 1] : 0;
			if (next == '[') {
				int sgr_ok;
				unsigned char final;
				size_t end = sanitize_csi(p, len, i + 2, &sgr_ok, &final);
				if (keep_sgr && sgr_ok)
					buf_add(out, p + i, end - i);
				i = end;
			} else if (next == ']' || next == 'P' || next == 'X' ||
				   next == '^' || next == '_') {
				i = sanitize_string(p, len, i + 2);
			} else if (next >= 0x20 && next <= 0x2f) {
				/* nF escape: intermediates, then a final byte. */
				size_t j = i + 1;
				while (j < len && p[j] >= 0x20 && p[j] <= 0x2f)
					j++;
				if (j < len && p[j] >= 0x30 && p[j] <= 0x7e)
					j++;
				i = j;
			} else if (next >= 0x30 && next <= 0x7e) {
				/* Two-byte escape (ESC 7, ESC c, ESC M, ...). */
				i += 2;
			} else {
				/* A lone ESC: nothing for a terminal to act on. */
				buf_adds(out, "^[");
				i++;
			}
		} else if (c < 0x20 || c == 0x7f) {
			sanitize_caret(out, c);
			i++;
		} else {
			uint32_t cp;
			size_t n = sanitize_utf8(p + i, len - i, &cp);
			if (n == 0) {
				buf_add(out, replacement, 3);
				i++;
			} else if (cp >= 0x80 && cp <= 0x9f) {
				/* C1 controls, UTF-8 encoded: some terminals act on
				 * them like their ESC forms. */
				i += n;
				if (cp == 0x9b) {
					int sgr_ok;
					unsigned char final;
					i = sanitize_csi(p, len, i, &sgr_ok, &final);
				} else if (cp == 0x9d || cp == 0x90 || cp == 0x98 ||
					   cp == 0x9e || cp == 0x9f) {
					i = sanitize_string(p, len, i);
				} else {
					buf_printf(out, "<U+%04X>", (unsigned)cp);
				}
			} else {
				buf_add(out, p + i, n);
				i += n;
			}
		}
	}
}

void sanitize_utf8_repair(const char *in, size_t len, struct buf *out)
{
	const unsigned char *p = (const unsigned char *)in;
	size_t i = 0;
	while (i < len) {
		uint32_t cp;
		size_t n = sanitize_utf8(p + i, len - i, &cp);
		if (n == 0) {
			buf_add(out, replacement, 3);
			i++;
		} else {
			buf_add(out, p + i, n);
			i += n;
		}
	}
}

json_t *sanitize_json_string(const char *in, size_t len)
{
	json_t *v = json_stringn(in, len);
	if (v)
		return v;
	struct buf b = { 0 };
	sanitize_utf8_repair(in, len, &b);
	v = json_stringn(b.data ? b.data : "", b.len);
	buf_free(&b);
	return v ? v : json_string("");
}
