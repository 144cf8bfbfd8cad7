/* suggest: the "did you mean" of a misspelt name (a verb, an option, an
 * agent, a key), as git and gh offer one: the candidate fewest edits away,
 * when it is close enough to be what was meant.
 *
 *   struct suggest sg;
 *   suggest_init(&sg, typed);
 *   for each name: suggest_add(&sg, name);
 *   const char *hint = suggest_best(&sg);   (NULL: nothing is close)
 *
 * Nothing is copied: the strings must outlive the struct. */
#ifndef PADDOCK_SUGGEST_H
#define PADDOCK_SUGGEST_H

#include <stddef.h>

struct suggest {
	const char *word;      /* what was typed */
	const char *best;      /* the closest candidate so far, or NULL */
	size_t bestd;          /* its distance */
	size_t maxd;           /* the most edits a suggestion may be away */
};

/* Edits from a to b, case-insensitive (ASCII): insertions, deletions,
 * substitutions, and swaps of neighbours ("lsit" is one from "list").
 * Words over 64 bytes are far from everything (99). */
size_t suggest_distance(const char *a, const char *b);

/* Starts a search for word; suggestions are at most a third of its length
 * away (at least one edit, at most three). */
void suggest_init(struct suggest *sg, const char *word);
/* Offers cand (NULL is ignored); the first of equally close ones wins, and
 * word itself is never suggested. */
void suggest_add(struct suggest *sg, const char *cand);
/* The closest candidate within reach, or NULL. */
const char *suggest_best(const struct suggest *sg);

#endif
