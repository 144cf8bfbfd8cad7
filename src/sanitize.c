#include "autoconfig.h"
#include "sanitize.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* ---- the visible rendering ---- */

enum vis_kind {
	VK_TEXT,       /* printable: shown as it is */
	VK_TAB,
	VK_NL,
	VK_CR,
	VK_CTRL,       /* another C0 control or DEL */
	VK_SEQ,        /* an escape sequence (or a lone ESC), whole */
	VK_C1,         /* a C1 control that starts no sequence */
	VK_BIDI,
	VK_INVIS,
	VK_BAD         /* one byte of invalid UTF-8 */
};

struct vis_tok {
	enum vis_kind kind;
	size_t len;
	uint32_t cp;
};

/* The class of a valid character from U+0080 up (sanitize.h lists them).
 * Variation selectors are VK_INVIS here; vis_next lets one U+FE0E or
 * U+FE0F after a visible character pass. */
static enum vis_kind vis_class(uint32_t cp)
{
	if (cp <= 0x9f)
		return VK_C1;
	if (cp == 0x061c || cp == 0x200e || cp == 0x200f || (cp >= 0x202a && cp <= 0x202e) ||
	    (cp >= 0x2066 && cp <= 0x2069))
		return VK_BIDI;
	if (cp == 0x00ad || cp == 0x034f || cp == 0x115f || cp == 0x1160 || cp == 0x17b4 ||
	    cp == 0x17b5 || (cp >= 0x180b && cp <= 0x180f) || (cp >= 0x200b && cp <= 0x200d) ||
	    cp == 0x2028 || cp == 0x2029 || (cp >= 0x2060 && cp <= 0x206f) || cp == 0x3164 ||
	    (cp >= 0xfe00 && cp <= 0xfe0f) || cp == 0xfeff || cp == 0xffa0 ||
	    (cp >= 0xfff9 && cp <= 0xfffb) || (cp >= 0x1bca0 && cp <= 0x1bca3) ||
	    (cp >= 0x1d173 && cp <= 0x1d17a) || (cp >= 0xe0000 && cp <= 0xe0fff))
		return VK_INVIS;
	return VK_TEXT;
}

/* The token at p[i] (i < n).  after_text: the token before it was a
 * printable character (a variation selector U+FE0E or U+FE0F then
 * passes). */
static void vis_next(const unsigned char *p, size_t n, size_t i, int after_text,
                     struct vis_tok *t)
{
	unsigned char c = p[i];
	int sgr_ok;
	unsigned char final;

	t->cp = c;
	t->len = 1;
	if (c >= 0x20 && c < 0x7f) {
		size_t run = i + 1;
		while (run < n && p[run] >= 0x20 && p[run] < 0x7f)
			run++;
		t->kind = VK_TEXT;
		t->len = run - i;
		t->cp = p[run - 1];
		return;
	}
	if (c == '\t' || c == '\n' || c == '\r') {
		t->kind = c == '\t' ? VK_TAB : c == '\n' ? VK_NL : VK_CR;
		return;
	}
	if (c == 0x1b) {
		/* The same extents as sanitize_text drops. */
		unsigned char next = i + 1 < n ? p[i + 1] : 0;
		size_t end = i + 1;
		if (next == '[') {
			end = sanitize_csi(p, n, i + 2, &sgr_ok, &final);
		} else if (next == ']' || next == 'P' || next == 'X' || next == '^' ||
		           next == '_') {
			end = sanitize_string(p, n, i + 2);
		} else if (next >= 0x20 && next <= 0x2f) {
			end = i + 1;
			while (end < n && p[end] >= 0x20 && p[end] <= 0x2f)
				end++;
			if (end < n && p[end] >= 0x30 && p[end] <= 0x7e)
				end++;
		} else if (next >= 0x30 && next <= 0x7e) {
			end = i + 2;
		}
		t->kind = VK_SEQ;
		t->len = end - i;
		return;
	}
	if (c < 0x20 || c == 0x7f) {
		t->kind = VK_CTRL;
		return;
	}
	uint32_t cp;
	size_t len = sanitize_utf8(p + i, n - i, &cp);
	if (len == 0) {
		t->kind = VK_BAD;
		return;
	}
	t->cp = cp;
	t->len = len;
	if (cp == 0x9b) {
		t->kind = VK_SEQ;
		t->len = sanitize_csi(p, n, i + len, &sgr_ok, &final) - i;
	} else if (cp == 0x9d || cp == 0x90 || cp == 0x98 || cp == 0x9e || cp == 0x9f) {
		t->kind = VK_SEQ;
		t->len = sanitize_string(p, n, i + len) - i;
	} else if ((cp == 0xfe0e || cp == 0xfe0f) && after_text) {
		t->kind = VK_TEXT;
	} else {
		t->kind = cp < 0x80 ? VK_TEXT : vis_class(cp);
	}
}

/* Appends a piece to segs, joining it to the last one of its kind. */
static void vis_seg(struct sanitize_segs *segs, size_t out, size_t len, size_t in, size_t in_len,
                    int mark)
{
	if (!segs || (len == 0 && in_len == 0))
		return;
	if (segs->n) {
		struct sanitize_seg *l = &segs->v[segs->n - 1];
		if (l->mark == mark && l->out + l->len == out && l->in + l->in_len == in) {
			l->len += len;
			l->in_len += in_len;
			return;
		}
	}
	if (segs->n == segs->cap) {
		segs->cap = segs->cap ? 2 * segs->cap : 16;
		segs->v = xrealloc(segs->v, segs->cap * sizeof(*segs->v));
	}
	segs->v[segs->n++] = (struct sanitize_seg){ out, len, in, in_len, mark };
}

/* Bytes p[i..end) as one mark: every byte that is not printable text
 * becomes its caret, <U+...> or <0x..> form. */
static void vis_mark_bytes(const unsigned char *p, size_t i, size_t end, struct buf *out)
{
	while (i < end) {
		unsigned char c = p[i];
		uint32_t cp;
		size_t len;
		if (c >= 0x20 && c < 0x7f) {
			buf_addc(out, (char)c);
			i++;
		} else if (c < 0x20 || c == 0x7f) {
			sanitize_caret(out, c);
			i++;
		} else if ((len = sanitize_utf8(p + i, end - i, &cp)) == 0) {
			buf_printf(out, "<0x%02X>", (unsigned)c);
			i++;
		} else {
			if (vis_class(cp) == VK_TEXT)
				buf_add(out, p + i, len);
			else
				buf_printf(out, "<U+%04X>", (unsigned)cp);
			i += len;
		}
	}
}

size_t sanitize_visible(const char *in, size_t len, int flags, struct buf *out,
                        struct sanitize_segs *segs)
{
	const unsigned char *p = (const unsigned char *)in;
	size_t i = 0, marks = 0;
	int after_text = 0;

	buf_grow(out, len);
	out->data[out->len] = '\0';
	if (!in)
		return 0;
	while (i < len) {
		struct vis_tok t;
		size_t at = out->len;
		int mark = 1;

		vis_next(p, len, i, after_text, &t);
		switch (t.kind) {
		case VK_TEXT:
			buf_add(out, p + i, t.len);
			mark = 0;
			break;
		case VK_TAB:
		case VK_NL:
			if (flags & (t.kind == VK_TAB ? SANITIZE_KEEP_TAB : SANITIZE_KEEP_NEWLINE)) {
				buf_addc(out, (char)p[i]);
				mark = 0;
			} else {
				sanitize_caret(out, p[i]);
			}
			break;
		case VK_CR:
		case VK_CTRL:
		case VK_SEQ:
			vis_mark_bytes(p, i, i + t.len, out);
			break;
		case VK_C1:
		case VK_BIDI:
		case VK_INVIS:
			buf_printf(out, "<U+%04X>", (unsigned)t.cp);
			break;
		case VK_BAD:
			buf_printf(out, "<0x%02X>", (unsigned)p[i]);
			break;
		}
		marks += mark;
		vis_seg(segs, at, out->len - at, i, t.len, mark);
		/* A passing variation selector is not itself a base for the
		 * next one. */
		after_text = t.kind == VK_TEXT && t.cp != 0xfe0e && t.cp != 0xfe0f;
		i += t.len;
	}
	return marks;
}

void sanitize_segs_free(struct sanitize_segs *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}

size_t sanitize_visible_marked(const char *in, size_t len, int flags, struct buf *out)
{
	struct buf vis = {0};
	struct sanitize_segs segs = {0};
	size_t marks = sanitize_visible(in, len, flags, &vis, &segs);
	buf_grow(out, vis.len + 9 * segs.n);
	for (size_t k = 0; k < segs.n; k++) {
		const struct sanitize_seg *g = &segs.v[k];
		if (g->mark)
			buf_adds(out, "\033[7m");
		buf_add(out, vis.data + g->out, g->len);
		if (g->mark)
			buf_adds(out, "\033[27m");
	}
	buf_free(&vis);
	sanitize_segs_free(&segs);
	return marks;
}

void sanitize_scan(const char *in, size_t len, int flags, struct sanitize_hidden *ctl,
                   struct sanitize_hidden *inv)
{
	const unsigned char *p = (const unsigned char *)in;
	int path = flags & SANITIZE_SCAN_PATH;
	int after_text = 0;
	size_t i = 0;

	ctl->kind = inv->kind = SANITIZE_HIDDEN_NONE;
	ctl->cp = inv->cp = 0;
	ctl->off = inv->off = 0;
	while (in && i < len &&
	       (ctl->kind == SANITIZE_HIDDEN_NONE || inv->kind == SANITIZE_HIDDEN_NONE)) {
		struct vis_tok t;
		enum sanitize_hidden_kind k = SANITIZE_HIDDEN_NONE;

		vis_next(p, len, i, after_text, &t);
		switch (t.kind) {
		case VK_TAB:
		case VK_NL:
			k = path ? SANITIZE_HIDDEN_CONTROL : SANITIZE_HIDDEN_NONE;
			break;
		case VK_CR:
			/* CRLF files are ordinary; a CR elsewhere lets later
			 * text overwrite the line on a terminal. */
			if (path || !(i + 1 == len || p[i + 1] == '\n'))
				k = SANITIZE_HIDDEN_CONTROL;
			break;
		case VK_CTRL:
			/* Form feed: the page breaks of older sources. */
			if (path || t.cp != 0x0c)
				k = SANITIZE_HIDDEN_CONTROL;
			break;
		case VK_SEQ:
			k = SANITIZE_HIDDEN_ESCAPE;
			break;
		case VK_C1:
			k = SANITIZE_HIDDEN_CONTROL;
			break;
		case VK_BIDI:
			k = SANITIZE_HIDDEN_BIDI;
			break;
		case VK_INVIS:
			k = SANITIZE_HIDDEN_INVISIBLE;
			break;
		case VK_TEXT:
		case VK_BAD:
			break;
		}
		struct sanitize_hidden *slot = k == SANITIZE_HIDDEN_INVISIBLE ? inv : ctl;
		if (k != SANITIZE_HIDDEN_NONE && slot->kind == SANITIZE_HIDDEN_NONE) {
			slot->kind = k;
			slot->cp = t.cp;
			slot->off = i;
		}
		after_text = t.kind == VK_TEXT && t.cp != 0xfe0e && t.cp != 0xfe0f;
		i += t.len;
	}
}

void sanitize_describe(uint32_t cp, char *out, size_t outlen)
{
	static const struct {
		uint32_t cp;
		const char *name;
	} names[] = {
		{ 0x00, "NULL" }, { 0x07, "BELL" }, { 0x08, "BACKSPACE" }, { 0x09, "TAB" },
		{ 0x0a, "LINE FEED" }, { 0x0b, "LINE TABULATION" }, { 0x0c, "FORM FEED" },
		{ 0x0d, "CARRIAGE RETURN" }, { 0x1b, "ESCAPE" }, { 0x7f, "DELETE" },
		{ 0x85, "NEXT LINE" }, { 0x90, "DEVICE CONTROL STRING" },
		{ 0x9b, "CONTROL SEQUENCE INTRODUCER" }, { 0x9c, "STRING TERMINATOR" },
		{ 0x9d, "OPERATING SYSTEM COMMAND" }, { 0x9e, "PRIVACY MESSAGE" },
		{ 0x9f, "APPLICATION PROGRAM COMMAND" }, { 0x98, "START OF STRING" },
		{ 0xad, "SOFT HYPHEN" }, { 0x34f, "COMBINING GRAPHEME JOINER" },
		{ 0x61c, "ARABIC LETTER MARK" }, { 0x115f, "HANGUL CHOSEONG FILLER" },
		{ 0x1160, "HANGUL JUNGSEONG FILLER" }, { 0x180e, "MONGOLIAN VOWEL SEPARATOR" },
		{ 0x200b, "ZERO WIDTH SPACE" }, { 0x200c, "ZERO WIDTH NON-JOINER" },
		{ 0x200d, "ZERO WIDTH JOINER" }, { 0x200e, "LEFT-TO-RIGHT MARK" },
		{ 0x200f, "RIGHT-TO-LEFT MARK" }, { 0x2028, "LINE SEPARATOR" },
		{ 0x2029, "PARAGRAPH SEPARATOR" }, { 0x202a, "LEFT-TO-RIGHT EMBEDDING" },
		{ 0x202b, "RIGHT-TO-LEFT EMBEDDING" }, { 0x202c, "POP DIRECTIONAL FORMATTING" },
		{ 0x202d, "LEFT-TO-RIGHT OVERRIDE" }, { 0x202e, "RIGHT-TO-LEFT OVERRIDE" },
		{ 0x2060, "WORD JOINER" }, { 0x2061, "FUNCTION APPLICATION" },
		{ 0x2062, "INVISIBLE TIMES" }, { 0x2063, "INVISIBLE SEPARATOR" },
		{ 0x2064, "INVISIBLE PLUS" }, { 0x2066, "LEFT-TO-RIGHT ISOLATE" },
		{ 0x2067, "RIGHT-TO-LEFT ISOLATE" }, { 0x2068, "FIRST STRONG ISOLATE" },
		{ 0x2069, "POP DIRECTIONAL ISOLATE" }, { 0x3164, "HANGUL FILLER" },
		{ 0xfeff, "ZERO WIDTH NO-BREAK SPACE" }, { 0xffa0, "HALFWIDTH HANGUL FILLER" },
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].cp == cp) {
			snprintf(out, outlen, "U+%04X %s", (unsigned)cp, names[i].name);
			return;
		}
	if (cp >= 0xfe00 && cp <= 0xfe0f)
		snprintf(out, outlen, "U+%04X VARIATION SELECTOR-%u", (unsigned)cp,
		         (unsigned)(cp - 0xfe00 + 1));
	else if (cp >= 0xe0100 && cp <= 0xe01ef)
		snprintf(out, outlen, "U+%04X VARIATION SELECTOR-%u", (unsigned)cp,
		         (unsigned)(cp - 0xe0100 + 17));
	else if (cp >= 0xe0000 && cp <= 0xe007f)
		snprintf(out, outlen, "U+%04X TAG", (unsigned)cp);
	else
		snprintf(out, outlen, "U+%04X", (unsigned)cp);
}

/* ---- a line quoted in a message ---- */

char *sanitize_quote(const char *in, size_t len)
{
	struct buf b = {0};
	sanitize_visible(in ? in : "", in ? len : 0, 0, &b, NULL);
	return buf_detach(&b);
}

char *sanitize_quote_str(const char *in)
{
	return sanitize_quote(in, in ? strlen(in) : 0);
}

/* ---- a live terminal's stream ---- */

enum { TS_INCOMPLETE, TS_ALLOW, TS_DROP, TS_STRING, TS_SKIP_CSI };

/* Longest parameter string of a CSI passed; a longer one is dropped. */
#define TERM_CSI_MAX 64

/* Is the private mode list (digits and ';') made only of modes a shell
 * may set: 1 (cursor keys), 7 (auto-wrap), 25 (cursor visible)? */
static int term_private_ok(const unsigned char *p, size_t n)
{
	size_t i = 0;
	if (!n)
		return 0;
	while (i < n) {
		unsigned v = 0;
		size_t start = i;
		while (i < n && p[i] >= '0' && p[i] <= '9' && v < 100000)
			v = v * 10 + (unsigned)(p[i++] - '0');
		if (i == start || (i < n && p[i] != ';'))
			return 0;
		if (v != 1 && v != 7 && v != 25)
			return 0;
		if (i < n)
			i++;
	}
	return 1;
}

/* The CSI whose parameters are p[0..n) and final byte f, with or without
 * intermediates: allowed? */
static int term_csi_ok(const unsigned char *p, size_t n, int inter, unsigned char f)
{
	if (inter)
		return 0;
	if (n && p[0] == '?')
		return (f == 'h' || f == 'l') && term_private_ok(p + 1, n - 1);
	for (size_t i = 0; i < n; i++)
		if (!((p[i] >= '0' && p[i] <= '9') || p[i] == ';' || (f == 'm' && p[i] == ':')))
			return 0;
	if (f == 'J') {            /* not 3 (03, 3;...): the scrollback */
		unsigned v = 0;
		for (size_t i = 0; i < n && p[i] != ';' && v < 10; i++)
			v = v * 10 + (unsigned)(p[i] - '0');
		return v != 3;
	}
	if (f == 'T')              /* one parameter; more is mouse highlighting */
		return !memchr(p, ';', n);
	if (f == 'h' || f == 'l')  /* insert mode only */
		return n == 1 && p[0] == '4';
	return strchr("@ABCDEFGHIKLMPSXZ`abdefmrsu", f) != NULL;
}

/* Classifies the sequence that starts with ESC at p (n bytes there);
 * *len: its length (for TS_DROP of a cut-short sequence, the bytes before
 * the one that cut it). */
static int term_esc(const unsigned char *p, size_t n, size_t *len)
{
	*len = 1;
	if (n < 2)
		return TS_INCOMPLETE;
	unsigned char c = p[1];
	if (c == '[') {
		size_t i = 2;
		while (i < n && p[i] >= 0x30 && p[i] <= 0x3f)
			i++;
		size_t pend = i;
		while (i < n && p[i] >= 0x20 && p[i] <= 0x2f)
			i++;
		if (i == n) {
			*len = n;
			return n > TERM_CSI_MAX + 8 ? TS_SKIP_CSI : TS_INCOMPLETE;
		}
		*len = i;
		if (p[i] < 0x40 || p[i] > 0x7e)
			return TS_DROP;
		*len = i + 1;
		if (pend - 2 > TERM_CSI_MAX)
			return TS_DROP;
		return term_csi_ok(p + 2, pend - 2, i > pend, p[i]) ? TS_ALLOW : TS_DROP;
	}
	if (strchr("]PX^_k", c)) {
		*len = 2;
		return TS_STRING;
	}
	if (c >= 0x20 && c <= 0x2f) {
		size_t i = 1;
		while (i < n && p[i] >= 0x20 && p[i] <= 0x2f)
			i++;
		if (i == n)
			return n > 16 ? (*len = n, TS_DROP) : TS_INCOMPLETE;
		*len = i;
		if (p[i] < 0x30 || p[i] > 0x7e)
			return TS_DROP;
		*len = i + 1;
		return i == 2 && c == '(' && (p[2] == 'B' || p[2] == '0') ? TS_ALLOW : TS_DROP;
	}
	if (c < 0x20 || c == 0x7f)
		return TS_DROP;    /* the ESC alone; the control is seen next */
	*len = 2;
	return strchr("78MDE=>", c) ? TS_ALLOW : TS_DROP;
}

/* 1 when p[0..n) is the start of a valid UTF-8 sequence cut by the end. */
static int term_utf8_cut(const unsigned char *p, size_t n)
{
	unsigned char c = p[0];
	size_t len = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 :
	             c >= 0xf0 && c <= 0xf4 ? 4 : 0;
	if (!len || n >= len)
		return 0;
	for (size_t i = 1; i < n; i++) {
		unsigned char lo = 0x80, hi = 0xbf;
		if (i == 1 && c == 0xe0)
			lo = 0xa0;
		else if (i == 1 && c == 0xed)
			hi = 0x9f;
		else if (i == 1 && c == 0xf0)
			lo = 0x90;
		else if (i == 1 && c == 0xf4)
			hi = 0x8f;
		if (p[i] < lo || p[i] > hi)
			return 0;
	}
	return 1;
}

/* Inside a control string: the bytes up to its end (BEL, ST, CAN, SUB, or
 * a newline, which passes) are dropped; an ESC that starts no ST ends it
 * and starts what follows.  Returns the index after what was consumed;
 * an ESC at the end of the input is not, and the string goes on. */
static size_t term_in_string(struct sanitize_term *t, const unsigned char *p, size_t n,
                             size_t i, struct buf *out)
{
	for (; i < n; i++) {
		unsigned char c = p[i];
		if (c == 0x1b) {
			if (i + 1 == n)
				return i;
			t->string = 0;
			return p[i + 1] == '\\' ? i + 2 : i;
		}
		if (c == 0x07 || c == 0x18 || c == 0x1a || (t->string == 3 && c == 0x9c)) {
			t->string = 0;
			return i + 1;
		}
		if (c == '\n') {
			t->string = 0;
			buf_addc(out, '\n');
			return i + 1;
		}
		t->string = c == 0xc2 ? 3 : 1;
	}
	return i;
}

void sanitize_term(struct sanitize_term *t, const char *in, size_t len, struct buf *out)
{
	struct buf w = {0};
	buf_add(&w, t->pend, t->npend);
	buf_add(&w, in, len);
	t->npend = 0;
	const unsigned char *p = (const unsigned char *)w.data;
	size_t n = w.len, i = 0;
	while (i < n) {
		unsigned char c = p[i];
		if (t->string) {
			size_t j = term_in_string(t, p, n, i, out);
			if (j == i && t->string) {
				memcpy(t->pend, p + i, n - i);   /* an ESC: ST, or not */
				t->npend = n - i;
				break;
			}
			i = j;
			continue;
		}
		if (t->skip_csi) {
			if (c >= 0x20 && c <= 0x3f) {
				i++;
				continue;
			}
			t->skip_csi = 0;
			if (c >= 0x40 && c <= 0x7e)
				i++;
			continue;
		}
		if ((c >= 0x20 && c < 0x7f) || c == '\a' || c == '\b' || c == '\t' || c == '\n' ||
		    c == '\r') {
			buf_addc(out, (char)c);
			i++;
		} else if (c == 0x1b) {
			size_t l;
			int k = term_esc(p + i, n - i, &l);
			if (k == TS_INCOMPLETE) {
				memcpy(t->pend, p + i, n - i);
				t->npend = n - i;
				break;
			}
			if (k == TS_ALLOW)
				buf_add(out, p + i, l);
			t->string = k == TS_STRING;
			t->skip_csi = k == TS_SKIP_CSI;
			i += l;
		} else if (c < 0x80) {
			i++;                 /* another C0 control, DEL */
		} else {
			uint32_t cp;
			size_t l = sanitize_utf8(p + i, n - i, &cp);
			if (!l && term_utf8_cut(p + i, n - i)) {
				memcpy(t->pend, p + i, n - i);
				t->npend = n - i;
				break;
			}
			if (!l) {
				cp = c;          /* a raw byte: a C1 control to some terminals */
				l = 1;
			}
			if (cp >= 0x80 && cp <= 0x9f) {
				t->skip_csi = cp == 0x9b;
				t->string = cp == 0x90 || cp == 0x98 || cp == 0x9d || cp == 0x9e ||
				            cp == 0x9f;
			} else if (l == 1) {
				buf_add(out, replacement, 3);
			} else {
				buf_add(out, p + i, l);
			}
			i += l;
		}
	}
	buf_free(&w);
}

const char *sanitize_term_restore(void)
{
	/* The scroll region (its reset homes the cursor: saved around it),
	 * colours and attributes, the character set, insert mode, cursor
	 * keys, the keypad, auto-wrap, the cursor shown. */
	return "\0337\033[r\0338\033[m\033(B\033[4l\033[?1l\033>\033[?7h\033[?25h";
}
