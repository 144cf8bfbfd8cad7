#include "autoconfig.h"
#include "worddiff.h"

#include <stdlib.h>
#include <string.h>

#include "buf.h"

/* Token classes. */
enum { WD_WORD, WD_BLANK, WD_PUNCT };

/* Past this many cells the LCS table is not built: the middle of the
 * lines (after the common prefix and suffix) counts as changed. */
#define WD_MAX_CELLS (512 * 512)

/* Length of the UTF-8 character at s (1 for an invalid byte, which is a
 * character of its own) and its code point (-1 when invalid). */
static size_t wd_char(const unsigned char *s, size_t len, long *cp)
{
	unsigned c = s[0];
	size_t n;
	unsigned lo = 0x80, hi = 0xbf;

	*cp = -1;
	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
		return 1;
	/* The second byte's range excludes overlongs, surrogates and code
	 * points above U+10FFFF. */
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (len < n || s[1] < lo || s[1] > hi)
		return 1;
	long v = c & (0xff >> (n + 1));
	for (size_t i = 1; i < n; i++) {
		if (i > 1 && (s[i] & 0xc0) != 0x80)
			return 1;
		v = v << 6 | (s[i] & 0x3f);
	}
	*cp = v;
	return n;
}

static int wd_class(long cp)
{
	if (cp == ' ' || cp == '\t')
		return WD_BLANK;
	if (cp < 0)
		return WD_PUNCT;
	if (cp < 0x80)
		return (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z') ||
		       (cp >= '0' && cp <= '9') || cp == '_' ? WD_WORD : WD_PUNCT;
	/* Latin-1 signs, general punctuation, arrows to symbols, CJK
	 * punctuation: not part of a word.  Other characters are letters as
	 * far as a diff cares. */
	if ((cp >= 0x80 && cp <= 0xbf) || cp == 0xd7 || cp == 0xf7 ||
	    (cp >= 0x2000 && cp <= 0x206f) || (cp >= 0x2190 && cp <= 0x2bff) ||
	    (cp >= 0x3000 && cp <= 0x303f) || (cp >= 0xff01 && cp <= 0xff0f))
		return WD_PUNCT;
	return WD_WORD;
}

size_t worddiff_tokens(const char *str, size_t len, struct worddiff_span **out)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t cap = 16, n = 0, i = 0;
	struct worddiff_span *t = xmalloc(cap * sizeof(*t));

	while (i < len) {
		long cp;
		size_t start = i, k = wd_char(s + i, len - i, &cp);
		int cls = wd_class(cp);
		i += k;
		/* Words and blanks run on; punctuation and invalid bytes are
		 * tokens of one character. */
		if (cls != WD_PUNCT)
			while (i < len) {
				long cp2;
				size_t k2 = wd_char(s + i, len - i, &cp2);
				if (wd_class(cp2) != cls)
					break;
				i += k2;
			}
		if (n == cap) {
			cap *= 2;
			t = xrealloc(t, cap * sizeof(*t));
		}
		t[n].off = start;
		t[n].len = i - start;
		n++;
	}
	*out = t;
	return n;
}

static int wd_eq(const char *a, const struct worddiff_span *x, const char *b,
                 const struct worddiff_span *y)
{
	return x->len == y->len && !memcmp(a + x->off, b + y->off, x->len);
}

static int wd_blank(const char *s, const struct worddiff_span *t)
{
	return s[t->off] == ' ' || s[t->off] == '\t';
}

/* Marks changed[i] for tokens of a (and of b) outside a longest common
 * subsequence of the middle part [p, na - q) x [p, nb - q). */
static void wd_lcs(const char *a, const struct worddiff_span *ta, size_t na,
                   const char *b, const struct worddiff_span *tb, size_t nb,
                   char *ca, char *cb)
{
	size_t p = 0, q = 0;

	while (p < na && p < nb && wd_eq(a, &ta[p], b, &tb[p]))
		p++;
	while (q < na - p && q < nb - p && wd_eq(a, &ta[na - 1 - q], b, &tb[nb - 1 - q]))
		q++;
	size_t n = na - p - q, m = nb - p - q;
	memset(ca, 0, na);
	memset(cb, 0, nb);
	if (!n || !m || n * m > WD_MAX_CELLS) {
		memset(ca + p, 1, n);
		memset(cb + p, 1, m);
		return;
	}
	/* L[i][j]: LCS length of the suffixes from i and j of the middle. */
	unsigned *L = xcalloc((n + 1) * (m + 1), sizeof(*L));
#define LL(i, j) L[(i) * (m + 1) + (j)]
	for (size_t i = n; i-- > 0;)
		for (size_t j = m; j-- > 0;)
			LL(i, j) = wd_eq(a, &ta[p + i], b, &tb[p + j]) ? LL(i + 1, j + 1) + 1
			           : LL(i + 1, j) > LL(i, j + 1) ? LL(i + 1, j) : LL(i, j + 1);
	size_t i = 0, j = 0;
	while (i < n && j < m) {
		if (wd_eq(a, &ta[p + i], b, &tb[p + j])) {
			i++;
			j++;
		} else if (LL(i + 1, j) >= LL(i, j + 1)) {
			ca[p + i++] = 1;
		} else {
			cb[p + j++] = 1;
		}
	}
	while (i < n)
		ca[p + i++] = 1;
	while (j < m)
		cb[p + j++] = 1;
#undef LL
	free(L);
}

/* Changed tokens become spans; changed tokens with only blanks between
 * them become one span.  Adds the changed and all non-blank bytes. */
static size_t wd_spans(const char *s, const struct worddiff_span *t, size_t n,
                       const char *changed, struct worddiff_span **out,
                       size_t *changed_bytes, size_t *total_bytes)
{
	struct worddiff_span *sp = NULL;
	size_t ns = 0;
	int joinable = 0;          /* only blanks since the last changed token */

	for (size_t i = 0; i < n; i++) {
		int blank = wd_blank(s, &t[i]);
		if (!blank)
			*total_bytes += t[i].len;
		if (!changed[i]) {
			if (!blank)
				joinable = 0;
			continue;
		}
		if (!blank)
			*changed_bytes += t[i].len;
		if (joinable) {
			sp[ns - 1].len = t[i].off + t[i].len - sp[ns - 1].off;
		} else {
			sp = xrealloc(sp, (ns + 1) * sizeof(*sp));
			sp[ns++] = t[i];
		}
		joinable = 1;
	}
	*out = sp;
	return ns;
}

int worddiff_lines(const char *a, size_t alen, const char *b, size_t blen,
                   struct worddiff *w)
{
	memset(w, 0, sizeof(*w));
	if (alen > WORDDIFF_MAX_LINE || blen > WORDDIFF_MAX_LINE)
		return 0;

	struct worddiff_span *ta, *tb;
	size_t na = worddiff_tokens(a, alen, &ta), nb = worddiff_tokens(b, blen, &tb);
	char *ca = xmalloc(na + 1), *cb = xmalloc(nb + 1);
	size_t changed = 0, total = 0;

	wd_lcs(a, ta, na, b, tb, nb, ca, cb);
	w->ndel = wd_spans(a, ta, na, ca, &w->del, &changed, &total);
	w->nadd = wd_spans(b, tb, nb, cb, &w->add, &changed, &total);
	free(ta);
	free(tb);
	free(ca);
	free(cb);
	/* Mostly rewritten: the line colours say it all. */
	if ((!w->ndel && !w->nadd) || changed * 10 > total * 6) {
		worddiff_free(w);
		return 0;
	}
	return 1;
}

void worddiff_free(struct worddiff *w)
{
	free(w->del);
	free(w->add);
	memset(w, 0, sizeof(*w));
}
