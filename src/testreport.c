#include "autoconfig.h"
#include "testreport.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdlib.h>
#include <string.h>

#include "sanitize.h"

/* How many names testreport_failures lists before "(N more)", and the
 * longest name kept: the result goes into a one-line message. */
#define TESTREPORT_MAX_LISTED 20
#define TESTREPORT_MAX_NAME 200
/* testreport_tail reads at most this much of the end of the output, and
 * returns at most TAIL_MAX bytes. */
#define TAIL_WINDOW (64 * 1024)
#define TAIL_MAX 2048

/* One pattern per line format, tried in this order on each line, anchored
 * at the line start.  `fmt` builds the name from the capture groups: a
 * digit is a group, anything else is copied. */
static const struct {
	const char *re;
	const char *fmt;
} testreport_patterns[] = {
	/* python unittest: "FAIL: test_x (mod.Class.test_x)" (3.11) or
	 * "ERROR: test_x (mod.Class)" (older). */
	{ "(FAIL|ERROR): (\\S+) \\(([^)]+)\\)", "2 (3)" },
	/* pytest short summary: "FAILED tests/t.py::test_x - AssertionError",
	 * "ERROR tests/t.py - ImportError" (collection errors); never
	 * unittest's own "FAILED (failures=1)". */
	{ "FAILED (\\S+\\.py(?:::\\S+)?)", "1" },
	{ "ERROR (\\S+\\.py(?:::\\S+)?)", "1" },
	/* go test, subtests indented: "--- FAIL: TestX/sub (0.00s)". */
	{ "[ \\t]*--- FAIL: (\\S+)", "1" },
	/* cargo test: "test tests::it_works ... FAILED". */
	{ "test (\\S+) \\.\\.\\. FAILED", "1" },
	/* TAP, subtests indented; TODO tests are expected failures. */
	{ "[ \\t]*not ok (\\d+)(?! [^#]*# *(?i:TODO))(?:[ \\t]+-)?[ \\t]*([^#]*?)[ \\t]*(?:#.*)?$", "T" },
	/* jest: "  ● Suite › test name" (but not its "● Console" blocks). */
	{ "[ \\t]*\xe2\x97\x8f (?!Console$)(.+?)[ \\t]*$", "1" },
};
#define NPATTERNS (sizeof(testreport_patterns) / sizeof(testreport_patterns[0]))

/* A small set of strings, to count each failed test once. */
struct nameset {
	char **slot;
	size_t cap, n;
};

static size_t testreport_hash(const char *s)
{
	size_t h = 5381;
	while (*s)
		h = h * 33 + (unsigned char)*s++;
	return h;
}

/* Adds s (taking ownership); returns 1 if it was new, 0 if already there
 * (s is then freed). */
static int nameset_add(struct nameset *set, char *s)
{
	size_t i;

	if ((set->n + 1) * 2 > set->cap) {
		struct nameset bigger = { 0 };
		bigger.cap = set->cap ? set->cap * 2 : 64;
		bigger.slot = xcalloc(bigger.cap, sizeof(char *));
		for (i = 0; i < set->cap; i++) {
			if (set->slot[i]) {
				size_t k = testreport_hash(set->slot[i]) & (bigger.cap - 1);
				while (bigger.slot[k])
					k = (k + 1) & (bigger.cap - 1);
				bigger.slot[k] = set->slot[i];
			}
		}
		bigger.n = set->n;
		free(set->slot);
		*set = bigger;
	}
	i = testreport_hash(s) & (set->cap - 1);
	while (set->slot[i]) {
		if (strcmp(set->slot[i], s) == 0) {
			free(s);
			return 0;
		}
		i = (i + 1) & (set->cap - 1);
	}
	set->slot[i] = s;
	set->n++;
	return 1;
}

static void nameset_free(struct nameset *set)
{
	size_t i;
	for (i = 0; i < set->cap; i++)
		free(set->slot[i]);
	free(set->slot);
}

/* Builds the name for a match of pattern k from its groups. */
static char *testreport_name(size_t k, const char *line, PCRE2_SIZE *ov)
{
	struct buf name = { 0 };
	const char *f = testreport_patterns[k].fmt;

	if (*f == 'T') {
		/* TAP: the description, else "test N". */
		if (ov[5] > ov[4])
			buf_add(&name, line + ov[4], ov[5] - ov[4]);
		else
			buf_printf(&name, "test %.*s", (int)(ov[3] - ov[2]), line + ov[2]);
	} else {
		for (; *f; f++) {
			if (*f >= '1' && *f <= '9') {
				int g = *f - '0';
				if (ov[2 * g] != PCRE2_UNSET)
					buf_add(&name, line + ov[2 * g], ov[2 * g + 1] - ov[2 * g]);
			} else {
				buf_addc(&name, *f);
			}
		}
	}
	if (name.len == 0) {
		buf_free(&name);
		return NULL;
	}
	if (name.len > TESTREPORT_MAX_NAME) {
		size_t cut = TESTREPORT_MAX_NAME;
		/* Do not split a UTF-8 character. */
		while (cut > 0 && ((unsigned char)name.data[cut] & 0xc0) == 0x80)
			cut--;
		name.len = cut;
		name.data[cut] = '\0';
		buf_adds(&name, "...");
	}
	return buf_detach(&name);
}

int testreport_failures(const char *output, size_t len, struct buf *names)
{
	pcre2_code *re[NPATTERNS] = { 0 };
	pcre2_match_data *md[NPATTERNS] = { 0 };
	struct nameset seen = { 0 };
	struct buf clean = { 0 };
	size_t k, listed = 0, pos = 0;
	int found = 0;

	if (!output || len == 0)
		return 0;
	for (k = 0; k < NPATTERNS; k++) {
		int errcode;
		PCRE2_SIZE erroff;
		re[k] = pcre2_compile((PCRE2_SPTR)testreport_patterns[k].re,
				      PCRE2_ZERO_TERMINATED, PCRE2_ANCHORED,
				      &errcode, &erroff, NULL);
		if (!re[k])
			abort();   /* a bug in the table above */
		/* JIT is an optimisation; without it matching still works.
		 * PADDOCK_NO_JIT turns it off for valgrind, which cannot see
		 * into JIT code and reports false uninitialised reads. */
		if (!getenv("PADDOCK_NO_JIT"))
			(void)pcre2_jit_compile(re[k], PCRE2_JIT_COMPLETE);
		md[k] = pcre2_match_data_create_from_pattern(re[k], NULL);
	}
	/* Match on the sanitized text: colour codes would break the anchors,
	 * and the names end up on a terminal. */
	sanitize_text(output, len, 0, &clean);
	while (pos < clean.len) {
		const char *line = clean.data + pos;
		const char *nl = memchr(line, '\n', clean.len - pos);
		size_t linelen = nl ? (size_t)(nl - line) : clean.len - pos;

		for (k = 0; k < NPATTERNS; k++) {
			char *name;
			if (pcre2_match(re[k], (PCRE2_SPTR)line, linelen, 0, 0, md[k], NULL) < 0)
				continue;
			name = testreport_name(k, line, pcre2_get_ovector_pointer(md[k]));
			if (name) {
				char *copy = xstrdup(name);
				if (nameset_add(&seen, name)) {
					found++;
					if (listed < TESTREPORT_MAX_LISTED) {
						if (listed++)
							buf_adds(names, ", ");
						buf_adds(names, copy);
					}
				}
				free(copy);
			}
			break;
		}
		pos += linelen + 1;
	}
	if ((size_t)found > listed)
		buf_printf(names, " (%zu more)", (size_t)found - listed);
	buf_free(&clean);
	nameset_free(&seen);
	for (k = 0; k < NPATTERNS; k++) {
		pcre2_match_data_free(md[k]);
		pcre2_code_free(re[k]);
	}
	return found;
}

void testreport_tail(const char *output, size_t len, int lines, struct buf *out)
{
	struct buf clean = { 0 }, joined = { 0 };
	const char *start = output;
	size_t *begin, *end, n = 0, i, pos;

	if (!output || len == 0 || lines <= 0)
		return;
	if (len > TAIL_WINDOW) {
		/* Start at a line boundary so no escape sequence or UTF-8
		 * character is cut in half. */
		const char *w = output + len - TAIL_WINDOW;
		const char *nl = memchr(w, '\n', TAIL_WINDOW);
		start = nl ? nl + 1 : w;
	}
	sanitize_text(start, (size_t)(output + len - start), 0, &clean);
	/* Find the last `lines` lines that are not blank, from the end. */
	begin = xcalloc((size_t)lines, sizeof(size_t));
	end = xcalloc((size_t)lines, sizeof(size_t));
	pos = clean.len;
	while (pos > 0 && n < (size_t)lines) {
		size_t e = pos, b = pos;
		while (b > 0 && clean.data[b - 1] != '\n')
			b--;
		pos = b > 0 ? b - 1 : 0;
		while (e > b && (clean.data[e - 1] == ' ' || clean.data[e - 1] == '\t'))
			e--;
		if (e > b) {
			begin[n] = b;
			end[n] = e;
			n++;
		}
		if (b == 0)
			break;
	}
	for (i = n; i-- > 0;) {
		buf_add(&joined, clean.data + begin[i], end[i] - begin[i]);
		if (i)
			buf_addc(&joined, '\n');
	}
	if (joined.len > TAIL_MAX) {
		/* Keep the end, which is what explains the failure. */
		size_t cut = joined.len - (TAIL_MAX - 3);
		while (cut < joined.len && ((unsigned char)joined.data[cut] & 0xc0) == 0x80)
			cut++;
		buf_adds(out, "...");
		buf_add(out, joined.data + cut, joined.len - cut);
	} else if (joined.len) {
		buf_add(out, joined.data, joined.len);
	}
	free(begin);
	free(end);
	buf_free(&clean);
	buf_free(&joined);
}
