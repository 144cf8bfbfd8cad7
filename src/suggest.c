/* suggest: the "did you mean" of a misspelt name. */
#include "autoconfig.h"
#include "suggest.h"

#include <ctype.h>
#include <string.h>

#define SUGGEST_MAX_LEN 64

size_t suggest_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	/* Three rows: a swap of neighbours looks two rows back. */
	size_t rows[3][SUGGEST_MAX_LEN + 1];
	size_t *back2 = rows[0], *back = rows[1], *cur = rows[2];

	if (la > SUGGEST_MAX_LEN || lb > SUGGEST_MAX_LEN)
		return 99;
	for (size_t j = 0; j <= lb; j++)
		back[j] = j;
	for (size_t i = 1; i <= la; i++) {
		cur[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			int ca = tolower((unsigned char)a[i - 1]), cb = tolower((unsigned char)b[j - 1]);
			size_t best = back[j - 1] + (ca != cb);
			if (back[j] + 1 < best)
				best = back[j] + 1;
			if (cur[j - 1] + 1 < best)
				best = cur[j - 1] + 1;
			if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) &&
			    tolower((unsigned char)a[i - 2]) == cb && back2[j - 2] + 1 < best)
				best = back2[j - 2] + 1;
			cur[j] = best;
		}
		size_t *t = back2;
		back2 = back;
		back = cur;
		cur = t;
	}
	return back[lb];
}

void suggest_init(struct suggest *sg, const char *word)
{
	size_t n = strlen(word);
	sg->word = word;
	sg->best = NULL;
	sg->bestd = (size_t)-1;
	sg->maxd = n / 3 < 1 ? 1 : n / 3 > 3 ? 3 : n / 3;
}

void suggest_add(struct suggest *sg, const char *cand)
{
	if (!cand || !strcmp(cand, sg->word))
		return;
	size_t d = suggest_distance(sg->word, cand);
	/* A one-letter name is one edit from every other one. */
	if (d <= sg->maxd && d < strlen(cand) && d < sg->bestd) {
		sg->bestd = d;
		sg->best = cand;
	}
}

const char *suggest_best(const struct suggest *sg)
{
	return sg->best;
}
