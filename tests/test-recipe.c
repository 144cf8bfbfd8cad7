/* test-recipe: a recipe's placeholders, filled in and listed, and its
 * output contract's clauses, checked one by one against what a round
 * came to (recipe.h). */
#include "autoconfig.h"
#include "recipe.h"

#include <stdlib.h>
#include <string.h>
#include "tap.h"

static int exists(const char *path, void *arg)
{
	(void)arg;
	return strcmp(path, "NOTES.md") == 0;
}

/* The check of one contract (a JSON array) against f: 1 held, 0 not,
 * with why. */
static int check(const char *json, const struct contract_facts *f, struct buf *why)
{
	char **c;
	size_t n;
	struct err e = {{0}};
	buf_free(why);
	if (recipe_contract_parse(json, &c, &n, &e) < 0)
		return -1;
	int held = recipe_contract_check(c, n, f, why);
	recipe_clauses_free(c, n);
	return held;
}

int main(void)
{
	ok(recipe_input_name_valid("issue") && recipe_input_name_valid("pr_2") &&
	   recipe_input_name_valid("a-b"), "input names: lower case, digits, - and _");
	ok(!recipe_input_name_valid("") && !recipe_input_name_valid("Issue") &&
	   !recipe_input_name_valid("2x") && !recipe_input_name_valid("a b") &&
	   !recipe_input_name_valid("abcdefghijabcdefghijabcdefghijabc"),
	   "not empty, upper case, a leading digit, a space or over 32");

	const char *names[] = { "issue", "pr" };
	const char *values[] = { "it {pr} crashes", "7" };
	char *x = recipe_expand("Fix {issue} of #{pr}; {other} { issue } {Issue} {{pr}} {", names,
	                        values, 2);
	is_str(x, "Fix it {pr} crashes of #7; {other} { issue } {Issue} {7} {",
	       "inputs filled in once (a value is not expanded again), other braces kept");
	free(x);
	char **ph = NULL;
	size_t nph = 0;
	recipe_placeholders("a {x} {y} {x} { z } {Q} {", &ph, &nph);
	ok(nph == 2 && !strcmp(ph[0], "x") && !strcmp(ph[1], "y"),
	   "placeholders: each input-like name once, in order");
	for (size_t i = 0; i < nph; i++)
		free(ph[i]);
	free(ph);

	struct err e = {{0}};
	const char *good[] = { "change", "no-change", "tests", "summary", "changed *test*",
	                       "changed a b", "file docs/NOTES.md", "mentions 1.2", NULL };
	int all = 1;
	for (size_t i = 0; good[i]; i++)
		all &= recipe_clause_check(good[i], &e) == 0;
	ok(all, "every kind of clause is accepted");
	ok(recipe_clause_check("tests now", &e) < 0 && strstr(e.msg, "takes no argument"),
	   "a bare clause with an argument is refused (%s)", e.msg);
	ok(recipe_clause_check("changed", &e) < 0 && strstr(e.msg, "needs"),
	   "changed without a glob is refused (%s)", e.msg);
	ok(recipe_clause_check("file /etc/passwd", &e) < 0 && recipe_clause_check("file ../x", &e) < 0,
	   "file outside the repository is refused (%s)", e.msg);
	ok(recipe_clause_check("sometimes", &e) < 0 && strstr(e.msg, "is not a contract clause"),
	   "an unknown clause is refused (%s)", e.msg);

	const char *const clauses[] = { "change", "changed *test*" };
	char *json = recipe_contract_json(clauses, 2);
	is_str(json, "[\"change\",\"changed *test*\"]", "a contract as JSON");
	free(json);
	char **c;
	size_t n;
	ok(recipe_contract_parse("{\"a\":1}", &c, &n, &e) < 0, "a contract that is no array is refused");
	ok(recipe_contract_parse("[\"sometimes\"]", &c, &n, &e) < 0, "a bad clause in it is refused");
	ok(recipe_contract_parse(NULL, &c, &n, &e) == 0 && n == 0, "no contract: no clauses");
	ok(recipe_contract_parse("[\"tests\", \"no-change\"]", &c, &n, &e) == 0 && n == 2 &&
	   recipe_contract_has(c, n, "tests") && recipe_contract_has(c, n, "no-change") &&
	   !recipe_contract_has(c, n, "change"), "recipe_contract_has finds a clause by kind");
	recipe_clauses_free(c, n);

	const char *paths[] = { "src/parse.c", "tests/test_parse.py" };
	struct contract_facts f = { .changed = 1, .tests_ran = 1, .tests_passed = 1,
	                            .summary = "Fixed the crash in release 1.2.", .paths = paths,
	                            .npaths = 2, .file_exists = exists };
	struct buf why = {0};
	is_int(check("[\"change\",\"tests\",\"changed *test* *spec*\",\"summary\","
	             "\"mentions RELEASE 1.2\",\"file NOTES.md\"]", &f, &why), 1,
	       "a round that has it all holds the contract");
	is_int(check("[\"changed docs/*\"]", &f, &why), 0, "no changed path matches docs/*");
	is_str(why.data, "no changed path matches docs/*", "... and says so");
	is_int(check("[\"changed parse.c\"]", &f, &why), 1, "a glob without / matches a base name");
	f.changed = 0;
	f.npaths = 0;
	f.tests_passed = 0;
	f.summary = "  \n";
	is_int(check("[\"change\",\"tests\",\"summary\",\"file README\",\"mentions x\"]", &f, &why), 0,
	       "a round with nothing fails every clause");
	is_str(why.data, "no change; the tests failed; the agent wrote no summary; there is no file "
	       "README; the summary does not mention x", "... each named, in order");
	is_int(check("[\"no-change\"]", &f, &why), 1, "no-change holds when nothing changed");
	f.tests_ran = 0;
	is_int(check("[\"tests\"]", &f, &why), 0, "tests that did not run do not pass");
	is_str(why.data, "no tests ran (the task needs a test command)", "... and says why");
	f.changed = 1;
	is_int(check("[\"no-change\"]", &f, &why), 0, "no-change fails on a change");
	buf_free(&why);

	/* What a list names a task by (recipe_task_title). */
	struct { const char *inputs, *text, *want, *what; } titles[] = {
		{ "{\"issue\":\"Crash on an empty file\\n\\nThe parser...\\n\\nGitHub issue a/b#7: "
		  "https://github.com/a/b/issues/7\"}", "Fix this bug:\n\nCrash on an empty file",
		  "Crash on an empty file", "a GitHub issue's task: the issue's title" },
		{ "{\"version\":\"1.2\",\"audience\":\"ops\"}", "Write the notes", "1.2",
		  "the first input of several" },
		{ "{\"issue\":\"\\n  \\t\\n  Blank lines first  \\nthen more\"}", "Fix this bug:",
		  "Blank lines first", "blank lines and blanks around the line left out" },
		{ "{\"issue\":\" \\n \"}", "Fix this bug:\nmore", "Fix this bug:",
		  "a blank input: the text's first line" },
		{ NULL, "\n Plain task\nsecond line", "Plain task", "no recipe: the text's first line" },
		{ "not json", "Text", "Text", "inputs that cannot be read: the text" },
		{ "{}", "", "", "nothing at all: empty" },
	};
	for (size_t i = 0; i < sizeof titles / sizeof titles[0]; i++) {
		char *t = recipe_task_title(titles[i].inputs, titles[i].text);
		is_str(t, titles[i].want, "%s", titles[i].what);
		free(t);
	}
	return tap_done();
}
