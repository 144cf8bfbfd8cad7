/* test-worddiff: the words a reviewer sees highlighted in a changed line. */
#include "autoconfig.h"
#include "worddiff.h"

#include <stdlib.h>
#include <string.h>
#include "buf.h"
#include "tap.h"

/* The tokens of s, joined with '|'. */
static const char *toks(const char *s)
{
	static struct buf b;
	struct worddiff_span *t;
	size_t n = worddiff_tokens(s, strlen(s), &t);

	buf_free(&b);
	memset(&b, 0, sizeof(b));
	for (size_t i = 0; i < n; i++) {
		if (i)
			buf_addc(&b, '|');
		buf_add(&b, s + t[i].off, t[i].len);
	}
	free(t);
	return b.data ? b.data : "";
}

/* One side of a word diff as the line with its changed spans in [ ]. */
static void mark(struct buf *b, const char *s, const struct worddiff_span *sp, size_t n)
{
	size_t at = 0;
	for (size_t i = 0; i < n; i++) {
		buf_add(b, s + at, sp[i].off - at);
		buf_addc(b, '[');
		buf_add(b, s + sp[i].off, sp[i].len);
		buf_addc(b, ']');
		at = sp[i].off + sp[i].len;
	}
	buf_adds(b, s + at);
}

/* "deleted-with-marks => added-with-marks", or "none" without highlight. */
static const char *wd(const char *a, const char *b)
{
	static struct buf out;
	struct worddiff w;
	int rc = worddiff_lines(a, strlen(a), b, strlen(b), &w);

	buf_free(&out);
	memset(&out, 0, sizeof(out));
	if (!rc) {
		buf_adds(&out, "none");
		if (w.ndel || w.nadd)
			buf_adds(&out, " (but spans returned)");
		return out.data;
	}
	mark(&out, a, w.del, w.ndel);
	buf_adds(&out, " => ");
	mark(&out, b, w.add, w.nadd);
	worddiff_free(&w);
	return out.data;
}

/* 1 if every span of w starts and ends on a UTF-8 character boundary. */
static int on_boundaries(const char *s, const struct worddiff_span *sp, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char first = (unsigned char)s[sp[i].off];
		unsigned char after = (unsigned char)s[sp[i].off + sp[i].len];
		if ((first & 0xc0) == 0x80 || (after & 0xc0) == 0x80)
			return 0;
	}
	return 1;
}

int main(void)
{
	/* Splitting. */
	is_str(toks("int x = foo(a, b);"), "int| |x| |=| |foo|(|a|,| |b|)|;",
	       "words, blanks and punctuation are tokens");
	is_str(toks("  \tindent_2 x"), "  \t|indent_2| |x", "blank runs and identifiers with _ and digits");
	is_str(toks("a->b"), "a|-|>|b", "each punctuation character is a token");
	is_str(toks("caf\xc3\xa9 na\xc3\xafve"), "caf\xc3\xa9| |na\xc3\xafve",
	       "accented letters stay inside their word");
	is_str(toks("\xe6\xbc\xa2\xe5\xad\x97\xe3\x80\x82x"), "\xe6\xbc\xa2\xe5\xad\x97|\xe3\x80\x82|x",
	       "CJK word, then CJK full stop as punctuation");
	is_str(toks("a\xe2\x80\x94" "b"), "a|\xe2\x80\x94|b", "em dash separates words");
	is_str(toks("ok\xff\xfeok"), "ok|\xff|\xfe|ok", "each invalid byte is a token of its own");
	is_str(toks("x\xe6\xbc"), "x|\xe6|\xbc", "a truncated character is split into invalid bytes");
	is_str(toks(""), "", "empty line has no tokens");

	/* What changed. */
	is_str(wd("return foo(a, b);", "return foo(a, c);"), "return foo(a, [b]); => return foo(a, [c]);",
	       "one word changed in the middle");
	is_str(wd("x = compute(old_value) + 1;", "x = compute(new_value) + 1;"),
	       "x = compute([old_value]) + 1; => x = compute([new_value]) + 1;",
	       "common prefix and suffix are not highlighted");
	is_str(wd("if (a && b) return 1;", "if (a && b && c) return 1;"),
	       "if (a && b) return 1; => if (a && b[ && c]) return 1;",
	       "insertion only: nothing on the deleted side, the inserted words on the added side");
	is_str(wd("call(a, b, c, d);", "call(a, c, d);"), "call(a, [b, ]c, d); => call(a, c, d);",
	       "deletion only: the removed words on the deleted side");
	is_str(wd("int total = count * size;", "int total = length * width;"),
	       "int total = [count] * [size]; => int total = [length] * [width];",
	       "two changed words around an unchanged operator are two spans");
	is_str(wd("set(alpha beta, 1);", "set(gamma delta, 1);"),
	       "set([alpha beta], 1); => set([gamma delta], 1);",
	       "changed words separated only by a blank are one span");
	is_str(wd("the quick brown fox", "a lazy dog sleeps"), "none",
	       "completely different lines get no word highlight");
	is_str(wd("printf(\"hello\");", "log_message(LOG_INFO, \"hello world\", NULL);"), "none",
	       "a line that mostly changed gets no word highlight");
	is_str(wd("same line", "same line"), "none", "equal lines have nothing to highlight");
	is_str(wd("a  b", "a b"), "a[  ]b => a[ ]b", "a change of blanks alone is highlighted");
	is_str(wd("msg = \"caf\xc3\xa9 ouvert\";", "msg = \"caf\xc3\xa9 ferm\xc3\xa9\";"),
	       "msg = \"caf\xc3\xa9 [ouvert]\"; => msg = \"caf\xc3\xa9 [ferm\xc3\xa9]\";",
	       "UTF-8 words compared whole");

	/* UTF-8 boundaries. */
	{
		/* The two lines differ in the last byte of a 3-byte character:
		 * the whole character (its word) is highlighted, never a byte. */
		const char *a = "label = \"\xe6\xbc\xa2\xe5\xad\x97 ok\";";
		const char *b = "label = \"\xe6\xbc\xa2\xe5\xad\x98 ok\";";
		struct worddiff w;
		int rc = worddiff_lines(a, strlen(a), b, strlen(b), &w);
		ok(rc == 1 && w.ndel == 1 && w.nadd == 1, "a character differing in one byte is highlighted");
		ok(rc == 1 && w.ndel == 1 && w.del[0].off == 9 && w.del[0].len == 6,
		   "the span covers the whole word of two characters (bytes 9..15)");
		ok(on_boundaries(a, w.del, w.ndel) && on_boundaries(b, w.add, w.nadd),
		   "spans start and end on character boundaries");
		worddiff_free(&w);
	}
	{
		/* Emoji (4 bytes) and accented letters next to a change. */
		const char *a = "\xf0\x9f\x98\x80 smile \xc3\xa9t\xc3\xa9 x";
		const char *b = "\xf0\x9f\x98\x81 smile \xc3\xa9t\xc3\xa9 y";
		struct worddiff w;
		int rc = worddiff_lines(a, strlen(a), b, strlen(b), &w);
		ok(rc == 1 && on_boundaries(a, w.del, w.ndel) && on_boundaries(b, w.add, w.nadd),
		   "spans around 4-byte emoji start and end on character boundaries");
		ok(rc == 1 && w.ndel == 2 && w.del[0].off == 0 && w.del[0].len == 4,
		   "the changed emoji is one span of its 4 bytes");
		worddiff_free(&w);
	}
	{
		/* Invalid UTF-8 in a line is compared byte by byte. */
		is_str(wd("bad \xff here ok", "bad \xfe here ok"), "bad [\xff] here ok => bad [\xfe] here ok",
		       "an invalid byte is its own changed token");
	}

	/* Limits. */
	{
		size_t n = WORDDIFF_MAX_LINE + 10;
		char *a = xmalloc(n + 1), *b = xmalloc(n + 1);
		memset(a, 'a', n);
		memcpy(b, a, n);
		a[n] = b[n] = 0;
		b[n / 2] = 'b';
		struct worddiff w;
		is_int(worddiff_lines(a, n, b, n, &w), 0, "a line longer than the limit gets no highlight");
		free(a);
		free(b);
	}
	{
		/* 2000 tokens on each side: one change in the middle is found
		 * (common prefix and suffix), changes at both ends too leave a
		 * middle too large to compare, which counts as changed. */
		struct buf a = { 0 }, b = { 0 }, c = { 0 };
		for (int i = 0; i < 1000; i++) {
			buf_printf(&a, "w%d ", i);
			buf_printf(&b, "w%d ", i == 500 ? 7777 : i);
			buf_printf(&c, "w%d ", i == 0 || i == 500 || i == 998 ? i + 5000 : i);
		}
		struct worddiff w;
		int rc = worddiff_lines(a.data, a.len, b.data, b.len, &w);
		ok(rc == 1 && w.ndel == 1 && w.nadd == 1 && !strncmp(a.data + w.del[0].off, "w500 ", 5) &&
		   w.del[0].len == 4 && w.add[0].len == 5 && !strncmp(b.data + w.add[0].off, "w7777", 5),
		   "long line, one word changed in the middle: just that word");
		worddiff_free(&w);
		is_int(worddiff_lines(a.data, a.len, c.data, c.len, &w), 0,
		       "long line changed at both ends and in the middle: no highlight (no huge table)");
		buf_free(&a);
		buf_free(&b);
		buf_free(&c);
	}
	return tap_done();
}
