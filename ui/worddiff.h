/* worddiff: which words of a changed line changed.
 *
 * A diff shows a line that was edited as a deleted line and an added one;
 * worddiff finds the words that differ between the two so the diff view
 * can highlight them.  Pure logic on bytes (no curses).
 *
 * Lines are split into tokens: words (letters, digits, '_' and non-ASCII
 * characters), runs of blanks, and single punctuation characters.  Every
 * token boundary is a UTF-8 character boundary; an invalid byte is a token
 * of its own.  The changed tokens are those outside a longest common
 * subsequence of the two token lists (after the common prefix and suffix);
 * neighbouring changed tokens, and those separated only by blanks, merge
 * into one span. */
#ifndef PADDOCK_UI_WORDDIFF_H
#define PADDOCK_UI_WORDDIFF_H

#include <stddef.h>

/* A byte range of a line. */
struct worddiff_span {
	size_t off, len;
};

struct worddiff {
	struct worddiff_span *del;     /* changed ranges of the deleted line */
	size_t ndel;
	struct worddiff_span *add;     /* changed ranges of the added line */
	size_t nadd;
};

/* Lines longer than this (bytes) get no word highlights. */
#define WORDDIFF_MAX_LINE 8192

/* The changed spans of deleted line a and added line b (without the
 * diff's '-' / '+' marker).  Returns 1 when there are highlights, 0 when
 * there are none: the lines are equal, too long, or so different that
 * highlighting words would be noise (more than 60 % of their non-blank
 * bytes changed); *w is then empty.  Free with worddiff_free. */
int worddiff_lines(const char *a, size_t alen, const char *b, size_t blen,
                   struct worddiff *w);
void worddiff_free(struct worddiff *w);

/* Splits s into tokens; *out (malloc'd, free it) gets their byte ranges.
 * Returns the number of tokens. */
size_t worddiff_tokens(const char *s, size_t len, struct worddiff_span **out);

#endif
