#include "autoconfig.h"
#include "recipe.h"

#include <ctype.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "buf.h"
#include "i18n.h"

int recipe_input_name_valid(const char *name)
{
	size_t n = strlen(name);
	if (n == 0 || n > RECIPE_INPUT_MAX || !(*name >= 'a' && *name <= 'z'))
		return 0;
	for (const char *c = name; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_' || *c == '-'))
			return 0;
	return 1;
}

/* The clause's kind (its first word) and its argument, after the
 * spaces; *arg "" when none. */
static size_t clause_kind(const char *clause, const char **arg)
{
	size_t k = strcspn(clause, " \t");
	const char *a = clause + k;
	while (*a == ' ' || *a == '\t')
		a++;
	*arg = a;
	return k;
}

static int kind_is(const char *clause, size_t k, const char *kind)
{
	return strlen(kind) == k && strncmp(clause, kind, k) == 0;
}

int recipe_clause_check(const char *clause, struct err *e)
{
	const char *arg;
	size_t k = clause_kind(clause, &arg);
	static const char *const bare[] = { "change", "no-change", "tests", "summary", NULL };
	for (size_t i = 0; bare[i]; i++)
		if (kind_is(clause, k, bare[i])) {
			if (*arg)
				return err_kind_set(e, ERR_INVALID, _("contract clause '%s' takes no "
				                                      "argument"), bare[i]);
			return 0;
		}
	static const char *const with[] = { "changed", "file", "mentions", NULL };
	for (size_t i = 0; with[i]; i++)
		if (kind_is(clause, k, with[i])) {
			if (!*arg)
				return err_kind_set(e, ERR_INVALID, _("contract clause '%s' needs %s"),
				                    with[i], i == 0 ? _("one or more path globs")
				                    : i == 1 ? _("a path") : _("a text"));
			if (i == 1 && (arg[0] == '/' || strstr(arg, "..")))
				return err_kind_set(e, ERR_INVALID, _("contract clause 'file %s': the path "
				                                      "must be relative to the repository, "
				                                      "without '..'"), arg);
			return 0;
		}
	return err_kind_set(e, ERR_INVALID, _("'%s' is not a contract clause; use change, "
	                                      "no-change, tests, summary, changed GLOB..., file "
	                                      "PATH or mentions TEXT"), clause);
}

/* The input name at text (just after '{') when a '}' closes it: its
 * length, else 0. */
static size_t placeholder_at(const char *text)
{
	size_t n = 0;
	while (n <= RECIPE_INPUT_MAX && text[n] && text[n] != '}')
		n++;
	if (text[n] != '}' || n == 0 || n > RECIPE_INPUT_MAX)
		return 0;
	char name[RECIPE_INPUT_MAX + 1];
	memcpy(name, text, n);
	name[n] = '\0';
	return recipe_input_name_valid(name) ? n : 0;
}

char *recipe_expand(const char *text, const char *const *names, const char *const *values,
                    size_t n)
{
	struct buf out = {0};
	for (const char *c = text; *c; c++) {
		size_t len;
		if (*c == '{' && (len = placeholder_at(c + 1))) {
			size_t i;
			for (i = 0; i < n; i++)
				if (strlen(names[i]) == len && !strncmp(names[i], c + 1, len))
					break;
			if (i < n) {
				buf_adds(&out, values[i] ? values[i] : "");
				c += len + 1;
				continue;
			}
		}
		buf_addc(&out, *c);
	}
	return out.data ? out.data : xcalloc(1, 1);
}

void recipe_placeholders(const char *text, char ***names, size_t *n)
{
	for (const char *c = text; *c; c++) {
		size_t len;
		if (*c != '{' || !(len = placeholder_at(c + 1)))
			continue;
		int seen = 0;
		for (size_t i = 0; i < *n && !seen; i++)
			seen = strlen((*names)[i]) == len && !strncmp((*names)[i], c + 1, len);
		if (!seen) {
			*names = xrealloc(*names, (*n + 1) * sizeof **names);
			(*names)[(*n)++] = xstrndup(c + 1, len);
		}
		c += len + 1;
	}
}

void recipe_clauses_free(char **clauses, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(clauses[i]);
	free(clauses);
}

int recipe_contract_parse(const char *json, char ***clauses, size_t *n, struct err *e)
{
	*clauses = NULL;
	*n = 0;
	if (!json)
		return 0;
	json_t *j = json_loads(json, 0, NULL);
	if (!json_is_array(j)) {
		json_decref(j);
		return err_kind_set(e, ERR_INVALID, _("the contract is not a JSON array of clauses"));
	}
	size_t i;
	json_t *v;
	char **out = xcalloc(json_array_size(j) + 1, sizeof *out);
	json_array_foreach(j, i, v) {
		if (!json_is_string(v) || recipe_clause_check(json_string_value(v), e) < 0) {
			if (!json_is_string(v))
				err_kind_set(e, ERR_INVALID, _("a contract clause is not a string"));
			recipe_clauses_free(out, i);
			json_decref(j);
			return -1;
		}
		out[i] = xstrdup(json_string_value(v));
	}
	*n = json_array_size(j);
	*clauses = out;
	json_decref(j);
	return 0;
}

char *recipe_contract_json(const char *const *clauses, size_t n)
{
	json_t *a = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, json_string(clauses[i]));
	char *s = json_dumps(a, JSON_COMPACT);
	json_decref(a);
	return s;
}

int recipe_contract_has(char *const *clauses, size_t n, const char *kind)
{
	for (size_t i = 0; i < n; i++) {
		const char *arg;
		if (kind_is(clauses[i], clause_kind(clauses[i], &arg), kind))
			return 1;
	}
	return 0;
}

/* 1 when a changed path matches one of the space-separated globs. */
static int changed_matches(const char *globs, const struct contract_facts *f)
{
	char *copy = xstrdup(globs), *save = NULL;
	int hit = 0;
	for (char *g = strtok_r(copy, " \t", &save); g && !hit; g = strtok_r(NULL, " \t", &save))
		for (size_t i = 0; i < f->npaths && !hit; i++) {
			const char *p = f->paths[i], *base = strrchr(p, '/');
			hit = fnmatch(g, p, 0) == 0 ||
			      (!strchr(g, '/') && fnmatch(g, base ? base + 1 : p, 0) == 0);
		}
	free(copy);
	return hit;
}

/* strcasestr for ASCII letters, which glibc has only under _GNU_SOURCE. */
static int mentions(const char *hay, const char *needle)
{
	size_t n = strlen(needle);
	for (const char *h = hay; *h; h++) {
		size_t i = 0;
		while (i < n && h[i] && tolower((unsigned char)h[i]) == tolower((unsigned char)needle[i]))
			i++;
		if (i == n)
			return 1;
	}
	return n == 0;
}

static void why_add(struct buf *why, const char *msg)
{
	if (why->len)
		buf_adds(why, "; ");
	buf_adds(why, msg);
}

/* The separator before the next sentence of why. */
static void why_sep(struct buf *why)
{
	if (why->len)
		buf_adds(why, "; ");
}

int recipe_contract_check(char *const *clauses, size_t n, const struct contract_facts *f,
                          struct buf *why)
{
	int held = 1;
	for (size_t i = 0; i < n; i++) {
		const char *c = clauses[i], *arg;
		size_t k = clause_kind(c, &arg);
		int ok = 1;
		if (kind_is(c, k, "change")) {
			if (!(ok = f->changed))
				why_add(why, _("no change"));
		} else if (kind_is(c, k, "no-change")) {
			if (!(ok = !f->changed))
				why_add(why, _("the round changed files, but this kind of task must change "
				               "nothing"));
		} else if (kind_is(c, k, "tests")) {
			if (!(ok = f->tests_ran && f->tests_passed))
				why_add(why, f->tests_ran ? _("the tests failed")
				        : _("no tests ran (the task needs a test command)"));
		} else if (kind_is(c, k, "summary")) {
			if (!(ok = f->summary && f->summary[strspn(f->summary, " \t\r\n")]))
				why_add(why, _("the agent wrote no summary"));
		} else if (kind_is(c, k, "changed")) {
			if (!(ok = changed_matches(arg, f))) {
				why_sep(why);
				buf_printf(why, _("no changed path matches %s"), arg);
			}
		} else if (kind_is(c, k, "file")) {
			if (!(ok = f->file_exists && f->file_exists(arg, f->arg))) {
				why_sep(why);
				buf_printf(why, _("there is no file %s"), arg);
			}
		} else if (kind_is(c, k, "mentions")) {
			if (!(ok = f->summary && mentions(f->summary, arg))) {
				why_sep(why);
				buf_printf(why, _("the summary does not mention %s"), arg);
			}
		}
		held = held && ok;
	}
	return held;
}

/* The first line of s that is not blank, from its first non-blank
 * character: *len bytes from the pointer returned; NULL when none. */
static const char *first_words(const char *s, size_t *len)
{
	for (s += strspn(s, " \t\r\n"); *s; s += strspn(s, " \t\r\n")) {
		size_t n = strcspn(s, "\r\n");
		while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
			n--;
		if (n) {
			*len = n;
			return s;
		}
		s += strcspn(s, "\r\n");
	}
	return NULL;
}

char *recipe_task_title(const char *inputs, const char *text)
{
	/* A recipe's prompt starts with its own words ("Fix this bug:"), the
	 * same for each of its tasks; what tells them apart is the input. */
	json_t *o = inputs ? json_loads(inputs, 0, NULL) : NULL;
	void *it = json_is_object(o) ? json_object_iter(o) : NULL;
	const char *v = it ? json_string_value(json_object_iter_value(it)) : NULL;
	size_t len = 0;
	const char *w = v ? first_words(v, &len) : NULL;
	if (!w)
		w = first_words(text ? text : "", &len);
	char *r = w ? xstrndup(w, len) : xstrdup("");
	json_decref(o);
	return r;
}
