/* test-suggest: the "did you mean" distance and choice, as a user meets
 * them: a swap of two letters is one slip, case does not count, a word
 * close to nothing gets no suggestion, and a short word is never "fixed"
 * into an unrelated short one. */
#include "autoconfig.h"
#include "suggest.h"

#include <string.h>
#include "tap.h"

static const char *best_of(const char *word, const char **cands)
{
	struct suggest sg;
	suggest_init(&sg, word);
	for (; *cands; cands++)
		suggest_add(&sg, *cands);
	return suggest_best(&sg);
}

int main(void)
{
	static const struct { const char *a, *b; size_t d; } dist[] = {
		{ "list", "list", 0 }, { "lsit", "list", 1 }, { "lst", "list", 1 },
		{ "lisst", "list", 1 }, { "lest", "list", 1 }, { "LIST", "list", 0 },
		{ "", "list", 4 }, { "list", "", 4 }, { "aprove", "approve", 1 },
		{ "kitten", "sitting", 3 }, { "ab", "ba", 1 }, { "abc", "cab", 2 },
	};
	for (size_t i = 0; i < sizeof dist / sizeof *dist; i++)
		ok(suggest_distance(dist[i].a, dist[i].b) == dist[i].d, "%s -> %s is %zu edits",
		   dist[i].a, dist[i].b, dist[i].d);
	char long_word[80];
	memset(long_word, 'a', sizeof long_word - 1);
	long_word[sizeof long_word - 1] = '\0';
	ok(suggest_distance(long_word, "a") == 99, "a word over 64 bytes is far from everything");

	const char *verbs[] = { "add", "list", "show", "approve", "reject", "request-changes",
	                        "config", "recipe", NULL };
	const char *got = best_of("lsit", verbs);
	is_str(got ? got : "(none)", "list", "lsit suggests list");
	got = best_of("aprove", verbs);
	is_str(got ? got : "(none)", "approve", "aprove suggests approve");
	got = best_of("request-change", verbs);
	is_str(got ? got : "(none)", "request-changes", "a missing letter at the end");
	ok(best_of("frobnicate", verbs) == NULL, "a word close to nothing gets no suggestion");
	ok(best_of("list", verbs) == NULL, "the word itself is never suggested");
	const char *short_names[] = { "a", "b", "x", NULL };
	ok(best_of("q", short_names) == NULL, "one letter is not 'fixed' into another");
	const char *ties[] = { "show", "snow", NULL };
	got = best_of("shov", ties);
	is_str(got ? got : "(none)", "show", "of equally close ones, the first wins");
	return tap_done();
}
