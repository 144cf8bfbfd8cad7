/* recipe: what a recipe's text means, apart from the configuration that
 * holds it (config.h's struct recipe_conf): the {input} placeholders of
 * its prompt, and its output contract, the clauses that must hold for a
 * round to reach the gate.
 *
 * A contract is a list of clauses, stored with a task as a JSON array of
 * strings (task_row.contract):
 *   change            the round changed something (commits with a diff)
 *   no-change         the round changed nothing (a review, not a change)
 *   tests             the verified tests pass (a clean checkout)
 *   summary           the agent wrote a summary of the round
 *   changed GLOB...   a changed path matches one of the globs (fnmatch,
 *                     a glob without '/' matches the base name too)
 *   file PATH         the round's tree has a file at PATH
 *   mentions TEXT     the summary mentions TEXT (ASCII letters in any case)
 * A task without a contract has the default one: a change and passing
 * tests, where a round that changed nothing ends the task with the
 * agent's explanation.  Without "tests", failing tests do not stop the
 * task: it reaches the gate, which shows them failed. */
#ifndef PADDOCK_RECIPE_H
#define PADDOCK_RECIPE_H

#include <stddef.h>
#include "buf.h"
#include "err.h"

#define RECIPE_INPUT_MAX 32    /* longest input name */

/* 1 when name is an input name: [a-z][a-z0-9_-]{0,31}. */
int recipe_input_name_valid(const char *name);
/* Checks one clause; -1 with e naming what is wrong. */
int recipe_clause_check(const char *clause, struct err *e);

/* text with each {name} of names[0..n) replaced by values[i]; braces
 * around anything else stay as they are (malloc'd). */
char *recipe_expand(const char *text, const char *const *names, const char *const *values,
                    size_t n);
/* The names of text's {placeholders} that are input names, in order,
 * each once, added to *names (malloc'd strings, *n grows). */
void recipe_placeholders(const char *text, char ***names, size_t *n);

/* The line a list shows for a task (the dashboard's list, `paddock
 * list`): the first line of its recipe's first input, an issue's title,
 * where it was made from a recipe (inputs: task_row.inputs, its JSON
 * object in the recipe's order); else, or when that line is blank, the
 * first line of its text.  Blank lines and blanks around it are left
 * out.  Malloc'd. */
char *recipe_task_title(const char *inputs, const char *text);

/* What a round came to, for recipe_contract_check. */
struct contract_facts {
	int changed;               /* it has a change */
	int tests_ran, tests_passed; /* the verified tests */
	const char *summary;       /* the agent's summary, or NULL */
	const char *const *paths;  /* the paths it changed */
	size_t npaths;
	/* Whether the round's tree has a file at path (for "file"). */
	int (*file_exists)(const char *path, void *arg);
	void *arg;
};

/* The contract (a JSON array of clauses, as stored), parsed: *clauses
 * (free with recipe_clauses_free).  NULL json: none (*n 0).  -1 with e
 * set when it is not an array of valid clauses. */
int recipe_contract_parse(const char *json, char ***clauses, size_t *n, struct err *e);
void recipe_clauses_free(char **clauses, size_t n);
/* The clauses as the JSON array stored with a task (malloc'd). */
char *recipe_contract_json(const char *const *clauses, size_t n);
/* 1 when clauses[0..n) has the clause kind ("tests", "no-change", ...). */
int recipe_contract_has(char *const *clauses, size_t n, const char *kind);
/* Checks each clause against f: 1 when all hold; 0 with why holding a
 * translated sentence for each that does not ("; "-separated). */
int recipe_contract_check(char *const *clauses, size_t n, const struct contract_facts *f,
                          struct buf *why);

#endif
