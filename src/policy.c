#include "autoconfig.h"
#include "policy.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <git2.h>
#include <pcre2.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "diff.h"
#include "gitlib.h"
#include "i18n.h"
#include "sanitize.h"
#include "treediff.h"
#include "units.h"

/* The sandbox's commit identity (agent.c sets it in the sandbox). */
#define POLICY_AGENT_NAME "paddock agent"
#define POLICY_AGENT_EMAIL "agent@paddock.invalid"

/* Literal secret values shorter than this are not looked for: they would
 * match ordinary text. */
#define POLICY_SECRET_MIN 8
/* Blobs larger than this are not read for the secret scan (libgit2 treats
 * them as binary); they are far over any sensible max-file-size. */
#define POLICY_SCAN_MAX (64 * 1024 * 1024)
/* Longest symlink target or pattern quoted in a detail. */
#define POLICY_QUOTE_MAX 200

/* Paths nobody wants from an agent: CI definitions (they run with the
 * project's secrets once pushed) and build output. */
static const char *const policy_default_deny[] = {
	".github/workflows/**",
	".github/actions/**",
	".gitlab-ci.yml",
	".circleci/**",
	"Jenkinsfile",
	".travis.yml",
	"azure-pipelines.yml",
	".buildkite/**",
	"**/__pycache__/**",
	"**/*.pyc",
	"**/node_modules/**",
	"**/.DS_Store",
};
#define POLICY_NDEFAULT_DENY (sizeof(policy_default_deny) / sizeof(policy_default_deny[0]))

/* Secret patterns, tried in this order on each added line; the first that
 * matches names the kind.  Anthropic comes before OpenAI, whose pattern
 * would also match it.  The OpenAI pattern asks for a digit, so that long
 * kebab-case words that start with "sk-" pass. */
static const struct {
	const char *re;
	const char *kind;
} policy_secret_patterns[] = {
	{ "-----BEGIN (?:RSA |EC |DSA |OPENSSH |ENCRYPTED |PGP )?PRIVATE KEY(?: BLOCK)?-----",
	  N_("a private key") },
	{ "(?<![A-Za-z0-9])(?:AKIA|ASIA)[0-9A-Z]{16}(?![0-9A-Za-z])",
	  N_("an AWS access key id") },
	{ "(?i:(?:aws_?)?secret_?access_?key|aws_?secret_?key)[\"']?\\s*(?::|=>?)\\s*[\"']?"
	  "[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])",
	  N_("an AWS secret access key") },
	{ "(?<![A-Za-z0-9])gh[pousr]_[A-Za-z0-9]{36,}", N_("a GitHub token") },
	{ "(?<![A-Za-z0-9])github_pat_[A-Za-z0-9_]{22,}", N_("a GitHub token") },
	{ "(?<![A-Za-z0-9])glpat-[A-Za-z0-9_-]{20,}", N_("a GitLab token") },
	{ "(?<![A-Za-z0-9])xox[baprs]-[A-Za-z0-9-]{10,}", N_("a Slack token") },
	{ "(?<![A-Za-z0-9])sk-ant-[A-Za-z0-9_-]{20,}", N_("an Anthropic API key") },
	{ "(?<![A-Za-z0-9])sk-(?=[A-Za-z0-9_-]{0,300}[0-9])[A-Za-z0-9_-]{20,}",
	  N_("an OpenAI API key") },
	{ "(?<![A-Za-z0-9])AIza[0-9A-Za-z_-]{35}", N_("a Google API key") },
	{ "(?<![A-Za-z0-9])[sr]k_live_[0-9A-Za-z]{20,}", N_("a Stripe secret key") },
};
#define POLICY_NPATTERNS (sizeof(policy_secret_patterns) / sizeof(policy_secret_patterns[0]))

struct policy_list {
	struct policy_finding *v;
	size_t n, cap;
};

struct policy_ctx {
	git_repository *repo;
	git_odb *odb;
	const struct repo_conf *r;
	const struct policy_secrets *secrets;
	pcre2_code *re[POLICY_NPATTERNS];
	pcre2_match_data *md[POLICY_NPATTERNS];
	struct policy_list list;
};

static const char *policy_git_errmsg(void)
{
	const git_error *ge = git_error_last();
	return ge && ge->message ? ge->message : _("unknown libgit2 error");
}

/* ---- text ---- */

/* Untrusted text made safe for one line on a terminal and readable in
 * full: the visible rendering (sanitize.h: an escape sequence shows as
 * "^[]0;...^G", a bidi control as "<U+202E>", newline and tab as "^J" and
 * "^I"), cut at max bytes (0: no limit) on a character boundary. */
static char *policy_clean(const char *s, size_t len, size_t max)
{
	struct buf out = { 0 };
	int cut = 0;

	if (max && len > max) {
		while (max > 0 && ((unsigned char)s[max] & 0xc0) == 0x80)
			max--;
		len = max;
		cut = 1;
	}
	sanitize_visible(s, len, 0, &out, NULL);
	if (cut)
		buf_adds(&out, "...");
	return buf_detach(&out);
}

static void policy_human_size(uint64_t bytes, char *out, size_t outlen)
{
	static const char *const unit[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	double v = (double)bytes;
	size_t u = 0;

	if (bytes < 1024) {
		snprintf(out, outlen, _("%llu bytes"), (unsigned long long)bytes);
		return;
	}
	v /= 1024;
	while (v >= 1024 && u + 1 < sizeof(unit) / sizeof(unit[0])) {
		v /= 1024;
		u++;
	}
	snprintf(out, outlen, "%.1f %s", v, unit[u]);
}

/* ---- globs ---- */

/* A bracket expression at *pp ('['): returns 1 or 0 for c and moves *pp
 * past it, or -1 (and leaves *pp) when it is not closed, so that '[' is
 * then literal. */
static int policy_glob_class(const char **pp, char c)
{
	const char *p = *pp + 1;
	int neg = 0, hit = 0;

	if (*p == '!' || *p == '^') {
		neg = 1;
		p++;
	}
	if (*p == ']') {                 /* a leading ']' is a member */
		hit |= c == ']';
		p++;
	}
	while (*p && *p != ']') {
		unsigned char lo = (unsigned char)*p, hi = lo;
		if (p[1] == '-' && p[2] && p[2] != ']') {
			hi = (unsigned char)p[2];
			p += 2;
		}
		if ((unsigned char)c >= lo && (unsigned char)c <= hi)
			hit = 1;
		p++;
	}
	if (!*p)
		return -1;
	*pp = p + 1;
	return c != '/' && (hit ^ neg);
}

static int policy_glob_rec(const char *start, const char *p, const char *s)
{
	for (;;) {
		if (*p == '\0')
			return *s == '\0';
		/* "**" as a whole component: any number of components. */
		if (p[0] == '*' && p[1] == '*' && (p == start || p[-1] == '/') &&
		    (p[2] == '/' || p[2] == '\0')) {
			if (p[2] == '\0')
				return 1;
			for (const char *t = s;;) {
				if (policy_glob_rec(start, p + 3, t))
					return 1;
				t = strchr(t, '/');
				if (!t)
					return 0;
				t++;
			}
		}
		if (*p == '*') {
			while (*p == '*')
				p++;
			for (const char *t = s;; t++) {
				if (policy_glob_rec(start, p, t))
					return 1;
				if (*t == '\0' || *t == '/')
					return 0;
			}
		}
		if (*p == '?') {
			if (*s == '\0' || *s == '/')
				return 0;
			p++;
			s++;
			continue;
		}
		if (*p == '[' && *s) {
			const char *q = p;
			int m = policy_glob_class(&q, *s);
			if (m >= 0) {
				if (!m)
					return 0;
				p = q;
				s++;
				continue;
			}
		}
		if (*p == '\\' && p[1])
			p++;
		if (*p != *s)
			return 0;
		p++;
		s++;
	}
}

int policy_glob_match(const char *pattern, const char *path)
{
	size_t len;
	int m;

	/* Paths in a tree never start with '/': "/Jenkinsfile" means the
	 * top-level one, as in .gitignore. */
	while (*pattern == '/')
		pattern++;
	len = strlen(pattern);
	if (len == 0)
		return 0;
	/* "build/" means everything under build, as in .gitignore. */
	if (pattern[len - 1] == '/') {
		char *p = xasprintf("%s**", pattern);
		m = policy_glob_rec(p, p, path);
		free(p);
		return m;
	}
	return policy_glob_rec(pattern, pattern, path);
}

/* ---- findings ---- */

static void policy_add(struct policy_ctx *c, enum policy_rule rule, const char *path,
                       const char *namekey, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
/* Adds a finding; path (raw, from the tree) and namekey are cleaned here,
 * fmt must give safe text (clean every untrusted part it takes). */
static void policy_add(struct policy_ctx *c, enum policy_rule rule, const char *path,
                       const char *namekey, const char *fmt, ...)
{
	struct policy_finding *f;
	va_list ap;
	char *key;

	if (c->list.n == c->list.cap) {
		c->list.cap = c->list.cap ? 2 * c->list.cap : 16;
		c->list.v = xrealloc(c->list.v, c->list.cap * sizeof(*c->list.v));
	}
	f = &c->list.v[c->list.n++];
	f->rule = rule;
	f->action = c->r->policy[rule];
	f->path = policy_clean(path, strlen(path), 0);
	key = namekey ? policy_clean(namekey, strlen(namekey), 0) : xstrdup(f->path);
	f->name = xasprintf("%s:%s", config_policy_rule_name(rule), key);
	free(key);
	va_start(ap, fmt);
	if (vasprintf(&f->detail, fmt, ap) < 0)
		abort();
	va_end(ap);
}

static int policy_on(const struct policy_ctx *c, enum policy_rule rule)
{
	return c->r->policy[rule] != POLICY_OFF;
}

/* Order: rule, path, name; ties (paths that clean to the same text) in the
 * order they were found, which is libgit2's order of the raw paths. */
static int policy_cmp(const void *a, const void *b, void *arg)
{
	const struct policy_finding *v = arg;
	const struct policy_finding *x = &v[*(const size_t *)a], *y = &v[*(const size_t *)b];
	int d;

	if (x->rule != y->rule)
		return x->rule < y->rule ? -1 : 1;
	if ((d = strcmp(x->path, y->path)) != 0)
		return d;
	if ((d = strcmp(x->name, y->name)) != 0)
		return d;
	return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

static int policy_name_taken(const struct policy_list *l, const char *name)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->v[i].name, name) == 0)
			return 1;
	return 0;
}

/* Sorts, and makes names unique (":2", ":3", ...): cleaning can map two
 * paths or emails onto the same text.  Equal names are adjacent once
 * sorted; the full search runs only for the rare renamed one. */
static void policy_finish(struct policy_list *l)
{
	size_t *idx;
	struct policy_finding *sorted;
	char *dup;

	if (l->n < 2)
		return;
	idx = xmalloc(l->n * sizeof(*idx));
	for (size_t i = 0; i < l->n; i++)
		idx[i] = i;
	qsort_r(idx, l->n, sizeof(*idx), policy_cmp, l->v);
	sorted = xmalloc(l->n * sizeof(*sorted));
	for (size_t i = 0; i < l->n; i++)
		sorted[i] = l->v[idx[i]];
	free(idx);
	free(l->v);
	l->v = sorted;
	l->cap = l->n;
	/* Mark the repeats first: renaming changes the names compared. */
	dup = xcalloc(l->n, 1);
	for (size_t i = 1; i < l->n; i++)
		dup[i] = strcmp(l->v[i].name, l->v[i - 1].name) == 0;
	for (size_t i = 1, k = 2; i < l->n; i++) {
		char *alt;
		if (!dup[i]) {
			k = 2;
			continue;
		}
		for (;; k++) {
			alt = xasprintf("%s:%zu", l->v[i].name, k);
			if (!policy_name_taken(l, alt))
				break;
			free(alt);
		}
		k++;
		free(l->v[i].name);
		l->v[i].name = alt;
	}
	free(dup);
}

void policy_findings_free(struct policy_finding *f, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(f[i].path);
		free(f[i].detail);
		free(f[i].name);
	}
	free(f);
}

/* ---- the checks on each changed file ---- */

static int policy_is_file(uint32_t mode)
{
	return mode == GIT_FILEMODE_BLOB || mode == GIT_FILEMODE_BLOB_EXECUTABLE;
}

static void policy_check_path(struct policy_ctx *c, const git_diff_delta *d, const char *path)
{
	const char *hit = NULL;
	char *q;

	for (size_t i = 0; i < POLICY_NDEFAULT_DENY && !hit; i++)
		if (policy_glob_match(policy_default_deny[i], path))
			hit = policy_default_deny[i];
	for (size_t i = 0; i < c->r->ndeny && !hit; i++)
		if (policy_glob_match(c->r->deny[i], path))
			hit = c->r->deny[i];
	if (!hit)
		return;
	q = policy_clean(hit, strlen(hit), POLICY_QUOTE_MAX);
	if (d->status == GIT_DELTA_ADDED)
		policy_add(c, POLICY_PATHS, path, NULL, _("adds a path on the deny list (%s)"), q);
	else if (d->status == GIT_DELTA_DELETED)
		policy_add(c, POLICY_PATHS, path, NULL, _("deletes a path on the deny list (%s)"), q);
	else
		policy_add(c, POLICY_PATHS, path, NULL, _("changes a path on the deny list (%s)"), q);
	free(q);
}

static int policy_check_size(struct policy_ctx *c, const git_diff_delta *d, const char *path,
                             struct err *e)
{
	size_t size;
	git_object_t type;
	char have[64], limit[32];

	if (!policy_is_file(d->new_file.mode) || !c->r->max_file_size)
		return 0;
	/* The header only: no need to inflate a large blob to know its size. */
	if (git_odb_read_header(&size, &type, c->odb, &d->new_file.id) < 0)
		return err_set(e, _("cannot read the blob of %s in the mirror: %s"), path,
		               policy_git_errmsg());
	if ((uint64_t)size <= c->r->max_file_size)
		return 0;
	policy_human_size(size, have, sizeof(have));
	units_format_size(c->r->max_file_size, limit, sizeof(limit));
	policy_add(c, POLICY_SIZE, path, NULL, _("is %s, over the limit of %s (max-file-size)"),
	           have, limit);
	return 0;
}

/* 1 if a link at path with this target points outside the repository. */
static int policy_link_escapes(const char *path, const char *target, size_t len)
{
	long depth = 0;
	size_t i = 0;

	for (const char *p = path; *p; p++)
		depth += *p == '/';
	while (i < len) {
		size_t j = i;
		while (j < len && target[j] != '/')
			j++;
		if (j - i == 2 && target[i] == '.' && target[i + 1] == '.') {
			if (depth-- == 0)
				return 1;
		} else if (!(j - i == 0 || (j - i == 1 && target[i] == '.'))) {
			depth++;
		}
		i = j + 1;
	}
	return 0;
}

static int policy_check_symlink(struct policy_ctx *c, const git_diff_delta *d, const char *path,
                                struct err *e)
{
	git_blob *blob;
	const char *target;
	size_t len;
	char *q;

	if (d->new_file.mode != GIT_FILEMODE_LINK)
		return 0;
	if (git_blob_lookup(&blob, c->repo, &d->new_file.id) < 0)
		return err_set(e, _("cannot read the symlink %s in the mirror: %s"), path,
		               policy_git_errmsg());
	target = git_blob_rawcontent(blob);
	len = (size_t)git_blob_rawsize(blob);
	if (len > 0 && (target[0] == '/' || policy_link_escapes(path, target, len))) {
		q = policy_clean(target, len, POLICY_QUOTE_MAX);
		if (target[0] == '/')
			policy_add(c, POLICY_SYMLINKS, path, NULL,
			           _("is a symlink to an absolute path (%s)"), q);
		else
			policy_add(c, POLICY_SYMLINKS, path, NULL,
			           _("is a symlink that points outside the repository (%s)"), q);
		free(q);
	}
	git_blob_free(blob);
	return 0;
}

static void policy_check_submodule(struct policy_ctx *c, const git_diff_delta *d,
                                   const char *path)
{
	char from[13], to[13];
	int oldsub = d->old_file.mode == GIT_FILEMODE_COMMIT;
	int newsub = d->new_file.mode == GIT_FILEMODE_COMMIT;

	git_oid_tostr(from, sizeof(from), &d->old_file.id);
	git_oid_tostr(to, sizeof(to), &d->new_file.id);
	if (newsub && (d->status == GIT_DELTA_ADDED || !oldsub))
		policy_add(c, POLICY_SUBMODULES, path, NULL,
		           _("adds a submodule (commit %s)"), to);
	else if (oldsub && newsub)
		policy_add(c, POLICY_SUBMODULES, path, NULL,
		           _("moves a submodule from commit %s to %s"), from, to);
	else if (oldsub && d->status == GIT_DELTA_DELETED)
		policy_add(c, POLICY_SUBMODULES, path, NULL, _("removes a submodule"));
	else if (oldsub)
		policy_add(c, POLICY_SUBMODULES, path, NULL,
		           _("replaces a submodule with a file"));
	else if (strcmp(path, ".gitmodules") == 0 && d->status != GIT_DELTA_DELETED)
		policy_add(c, POLICY_SUBMODULES, path, NULL,
		           d->status == GIT_DELTA_ADDED ? _("adds .gitmodules (submodule definitions)")
		                                        : _("changes .gitmodules (submodule definitions)"));
}

/* The kind of secret in one added line: a pattern index, POLICY_NPATTERNS
 * for a literal value paddock holds, or -1 for none. */
static int policy_line_secret(struct policy_ctx *c, const char *line, size_t len)
{
	if (c->secrets) {
		for (size_t i = 0; i < c->secrets->n; i++) {
			const char *v = c->secrets->values[i];
			size_t vl = v ? strlen(v) : 0;
			if (vl >= POLICY_SECRET_MIN && memmem(line, len, v, vl))
				return (int)POLICY_NPATTERNS;
		}
	}
	for (size_t k = 0; k < POLICY_NPATTERNS; k++)
		if (pcre2_match(c->re[k], (PCRE2_SPTR)line, len, 0, 0, c->md[k], NULL) >= 0)
			return (int)k;
	return -1;
}

/* What one rule found in a file's added lines: how many lines, the first
 * one and what it held. */
struct policy_hits {
	size_t count;
	int first_line;
	int first_kind;                /* secrets: a pattern index or
	                                  POLICY_NPATTERNS (a held value) */
	struct sanitize_hidden first;  /* controls, invisible */
};

static void policy_hit(struct policy_hits *h, int line, int kind, const struct sanitize_hidden *x)
{
	if (h->count++ == 0) {
		h->first_line = line;
		h->first_kind = kind;
		if (x)
			h->first = *x;
	}
}

/* "an escape sequence (U+001B ESCAPE)" */
static void policy_hidden_what(const struct sanitize_hidden *x, char *out, size_t outlen)
{
	const char *kind;
	char name[80];

	switch (x->kind) {
	case SANITIZE_HIDDEN_ESCAPE:
		kind = _("an escape sequence");
		break;
	case SANITIZE_HIDDEN_CONTROL:
		kind = _("a control character");
		break;
	case SANITIZE_HIDDEN_BIDI:
		kind = _("a bidi control");
		break;
	default:
		kind = _("an invisible character");
		break;
	}
	sanitize_describe(x->cp, name, sizeof(name));
	snprintf(out, outlen, "%s (%s)", kind, name);
}

/* A path that holds escapes, controls, bidi controls or invisible
 * characters: the diff and the gate show them as marks, this says so
 * where the reviewer decides. */
static void policy_check_path_chars(struct policy_ctx *c, const char *path)
{
	struct sanitize_hidden ctl, inv;
	char what[160];

	sanitize_scan(path, strlen(path), SANITIZE_SCAN_PATH, &ctl, &inv);
	if (ctl.kind != SANITIZE_HIDDEN_NONE && policy_on(c, POLICY_CONTROLS)) {
		policy_hidden_what(&ctl, what, sizeof(what));
		policy_add(c, POLICY_CONTROLS, path, NULL, _("the path holds %s"), what);
	}
	if (inv.kind != SANITIZE_HIDDEN_NONE && policy_on(c, POLICY_INVISIBLE)) {
		policy_hidden_what(&inv, what, sizeof(what));
		policy_add(c, POLICY_INVISIBLE, path, NULL, _("the path holds %s"), what);
	}
}

static void policy_report_secrets(struct policy_ctx *c, const char *path,
                                  const struct policy_hits *h)
{
	if (h->count == 0)
		return;
	if (h->count == 1 && h->first_kind == (int)POLICY_NPATTERNS)
		policy_add(c, POLICY_SECRETS, path, NULL,
		           _("contains the value of a credential paddock holds (line %d)"),
		           h->first_line);
	else if (h->count == 1)
		policy_add(c, POLICY_SECRETS, path, NULL, _("looks like %s (line %d)"),
		           _(policy_secret_patterns[h->first_kind].kind), h->first_line);
	else
		policy_add(c, POLICY_SECRETS, path, NULL,
		           _("%zu lines look like secrets (first: line %d, %s)"), h->count,
		           h->first_line,
		           h->first_kind == (int)POLICY_NPATTERNS
		           ? _("the value of a credential paddock holds")
		           : _(policy_secret_patterns[h->first_kind].kind));
}

static void policy_report_hidden(struct policy_ctx *c, enum policy_rule rule, const char *path,
                                 const struct policy_hits *h)
{
	char what[160];

	if (h->count == 0)
		return;
	policy_hidden_what(&h->first, what, sizeof(what));
	if (h->count == 1)
		policy_add(c, rule, path, NULL, _("holds %s (line %d)"), what, h->first_line);
	else if (rule == POLICY_CONTROLS)
		policy_add(c, rule, path, NULL,
		           _("%zu lines hold escape sequences, controls or bidi controls "
		             "(first: line %d, %s)"), h->count, h->first_line, what);
	else
		policy_add(c, rule, path, NULL,
		           _("%zu lines hold invisible characters (first: line %d, %s)"), h->count,
		           h->first_line, what);
}

/* One added line of a patch: its content (what libgit2 has as the line,
 * its newline included where the file has one) and its number. */
static void policy_scan_line(struct policy_ctx *c, const char *line, size_t len, int lineno,
                             struct policy_hits *sec, struct policy_hits *ctl,
                             struct policy_hits *inv)
{
	if (policy_on(c, POLICY_SECRETS)) {
		int kind = policy_line_secret(c, line, len);
		if (kind >= 0)
			policy_hit(sec, lineno, kind, NULL);
	}
	if (policy_on(c, POLICY_CONTROLS) || policy_on(c, POLICY_INVISIBLE)) {
		struct sanitize_hidden hc, hi;
		sanitize_scan(line, len, 0, &hc, &hi);
		if (policy_on(c, POLICY_CONTROLS) && hc.kind != SANITIZE_HIDDEN_NONE)
			policy_hit(ctl, lineno, 0, &hc);
		if (policy_on(c, POLICY_INVISIBLE) && hi.kind != SANITIZE_HIDDEN_NONE)
			policy_hit(inv, lineno, 0, &hi);
	}
}

/* The new side's first line number in a hunk header "@@ -a,b +c,d @@". */
static int policy_hunk_start(const char *p, size_t len)
{
	const char *plus = memchr(p, '+', len);
	long v = 0;
	if (!plus)
		return 0;
	for (const char *q = plus + 1; q < p + len && *q >= '0' && *q <= '9' && v < INT32_MAX; q++)
		v = v * 10 + (*q - '0');
	return (int)v;
}

/* The rules on added lines (secrets, controls, invisible), in one pass
 * over a file's patch text as diff.h has it (libgit2's, with a "\ No
 * newline at end of file" line after a last line without one): at most
 * one finding per rule and file. */
static void policy_check_lines(struct policy_ctx *c, const char *path, const char *patch,
                               size_t len)
{
	struct policy_hits sec = { 0 }, ctl = { 0 }, inv = { 0 };
	const char *p = patch, *end = patch + len;
	int in_hunk = 0, lineno = 0;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *next = nl ? nl + 1 : end;
		size_t n = (size_t)(next - p);
		if (n >= 2 && p[0] == '@' && p[1] == '@') {
			in_hunk = 1;
			lineno = policy_hunk_start(p, n);
		} else if (in_hunk && p[0] == '+') {
			/* The newline is the marker's when a "\" line follows. */
			size_t cl = n - 1;
			if (nl && next < end && *next == '\\')
				cl--;
			policy_scan_line(c, p + 1, cl, lineno, &sec, &ctl, &inv);
			lineno++;
		} else if (in_hunk && p[0] == ' ') {
			lineno++;
		}
		p = next;
	}
	policy_report_secrets(c, path, &sec);
	policy_report_hidden(c, POLICY_CONTROLS, path, &ctl);
	policy_report_hidden(c, POLICY_INVISIBLE, path, &inv);
}

static int policy_check_delta(struct policy_ctx *c, git_diff *diff, size_t idx, struct err *e)
{
	const git_diff_delta *d = git_diff_get_delta(diff, idx);
	const char *path;
	int adds;

	if (!d)
		return 0;
	path = d->status == GIT_DELTA_DELETED ? d->old_file.path : d->new_file.path;
	if (!path)
		path = d->old_file.path ? d->old_file.path : "";
	adds = d->status == GIT_DELTA_ADDED || d->status == GIT_DELTA_MODIFIED ||
	       d->status == GIT_DELTA_TYPECHANGE;

	if (policy_on(c, POLICY_PATHS))
		policy_check_path(c, d, path);
	if (policy_on(c, POLICY_SUBMODULES))
		policy_check_submodule(c, d, path);
	if (!adds)
		return 0;
	if (policy_on(c, POLICY_SIZE) && policy_check_size(c, d, path, e) < 0)
		return -1;
	if (policy_on(c, POLICY_SYMLINKS) && policy_check_symlink(c, d, path, e) < 0)
		return -1;
	/* A path the change adds: an old name is not the agent's doing. */
	if (d->status == GIT_DELTA_ADDED &&
	    (policy_on(c, POLICY_CONTROLS) || policy_on(c, POLICY_INVISIBLE)))
		policy_check_path_chars(c, path);
	/* The added lines come from the patches (policy_run_file). */
	return 0;
}

/* ---- authors ---- */

struct policy_author {
	char *email, *name;
	char sha[13];
	size_t commits;
};

static int policy_check_authors(struct policy_ctx *c, const git_oid *base, const git_oid *head,
                                struct err *e)
{
	git_revwalk *walk = NULL;
	struct policy_author *au = NULL;
	size_t nau = 0;
	git_oid oid;
	int rc = -1, wrc;

	if (git_revwalk_new(&walk, c->repo) < 0 ||
	    git_revwalk_sorting(walk, GIT_SORT_TOPOLOGICAL | GIT_SORT_REVERSE) < 0 ||
	    git_revwalk_push(walk, head) < 0 || git_revwalk_hide(walk, base) < 0) {
		err_set(e, _("cannot list the new commits: %s"), policy_git_errmsg());
		goto out;
	}
	while ((wrc = git_revwalk_next(&oid, walk)) == 0) {
		git_commit *commit;
		const git_signature *sig;
		const char *name, *email;
		size_t i;

		if (git_commit_lookup(&commit, c->repo, &oid) < 0) {
			err_set(e, _("cannot read a new commit: %s"), policy_git_errmsg());
			goto out;
		}
		sig = git_commit_author(commit);
		name = sig && sig->name ? sig->name : "";
		email = sig && sig->email ? sig->email : "";
		if (strcmp(name, POLICY_AGENT_NAME) == 0 && strcmp(email, POLICY_AGENT_EMAIL) == 0) {
			git_commit_free(commit);
			continue;
		}
		for (i = 0; i < nau; i++)
			if (strcmp(au[i].email, email) == 0)
				break;
		if (i == nau) {
			au = xrealloc(au, (nau + 1) * sizeof(*au));
			au[nau].email = xstrdup(email);
			au[nau].name = xstrdup(name);
			au[nau].commits = 0;
			git_oid_tostr(au[nau].sha, sizeof(au[nau].sha), &oid);
			nau++;
		}
		au[i].commits++;
		git_commit_free(commit);
	}
	if (wrc != GIT_ITEROVER) {
		err_set(e, _("cannot list the new commits: %s"), policy_git_errmsg());
		goto out;
	}
	for (size_t i = 0; i < nau; i++) {
		char *n = policy_clean(au[i].name, strlen(au[i].name), POLICY_QUOTE_MAX);
		char *m = policy_clean(au[i].email, strlen(au[i].email), POLICY_QUOTE_MAX);
		if (au[i].commits > 1)
			policy_add(c, POLICY_AUTHORS, "", au[i].email,
			           _("commit %s is authored by %s <%s> (and %zu more)"), au[i].sha, n,
			           m, au[i].commits - 1);
		else
			policy_add(c, POLICY_AUTHORS, "", au[i].email,
			           _("commit %s is authored by %s <%s>"), au[i].sha, n, m);
		free(n);
		free(m);
	}
	rc = 0;
out:
	for (size_t i = 0; i < nau; i++) {
		free(au[i].email);
		free(au[i].name);
	}
	free(au);
	git_revwalk_free(walk);
	return rc;
}

/* ---- policy_check ---- */

static int policy_resolve(git_repository *repo, const char *rev, git_oid *oid, git_tree **tree,
                          struct err *e)
{
	git_object *obj = NULL, *commit = NULL;
	int rc = -1;

	if (git_revparse_single(&obj, repo, rev) < 0) {
		err_set(e, _("commit %s is not in the mirror: %s"), rev, policy_git_errmsg());
		return -1;
	}
	if (git_object_peel(&commit, obj, GIT_OBJECT_COMMIT) < 0 ||
	    git_commit_tree(tree, (git_commit *)commit) < 0) {
		err_set(e, _("%s is not a commit: %s"), rev, policy_git_errmsg());
		goto out;
	}
	git_oid_cpy(oid, git_object_id(commit));
	rc = 0;
out:
	git_object_free(commit);
	git_object_free(obj);
	return rc;
}

static void policy_compile(struct policy_ctx *c)
{
	for (size_t k = 0; k < POLICY_NPATTERNS; k++) {
		int errcode;
		PCRE2_SIZE erroff;
		c->re[k] = pcre2_compile((PCRE2_SPTR)policy_secret_patterns[k].re,
		                         PCRE2_ZERO_TERMINATED, 0, &errcode, &erroff, NULL);
		if (!c->re[k])
			abort();   /* a bug in the table above */
		/* JIT is an optimisation; PADDOCK_NO_JIT turns it off for
		 * valgrind, as in testreport.c. */
		if (!getenv("PADDOCK_NO_JIT"))
			(void)pcre2_jit_compile(c->re[k], PCRE2_JIT_COMPLETE);
		c->md[k] = pcre2_match_data_create_from_pattern(c->re[k], NULL);
		if (!c->md[k])
			abort();
	}
}

/* A check under way: the context, and the tree diff's verdicts kept
 * until the patches come. */
struct policy_run {
	struct policy_ctx c;
};

void policy_run_free(struct policy_run *run)
{
	if (!run)
		return;
	policy_findings_free(run->c.list.v, run->c.list.n);
	for (size_t k = 0; k < POLICY_NPATTERNS; k++) {
		pcre2_match_data_free(run->c.md[k]);
		pcre2_code_free(run->c.re[k]);
	}
	git_odb_free(run->c.odb);
	git_repository_free(run->c.repo);
	free(run);
}

int policy_begin(const char *mirror, const char *base, const char *head,
                 const struct repo_conf *r, const struct policy_secrets *secrets,
                 struct policy_run **out, struct err *e)
{
	struct policy_run *run = xcalloc(1, sizeof(*run));
	struct policy_ctx *c = &run->c;
	git_tree *ta = NULL, *tb = NULL;
	git_diff *diff = NULL;
	git_diff_options opts;
	git_oid base_oid, head_oid;
	int rc = -1;

	c->r = r;
	c->secrets = secrets;
	gitlib_init();
	if (git_repository_open_bare(&c->repo, mirror) < 0) {
		err_set(e, _("cannot open the mirror %s: %s"), mirror, policy_git_errmsg());
		goto out;
	}
	if (git_repository_odb(&c->odb, c->repo) < 0) {
		err_set(e, _("cannot open the objects of the mirror %s: %s"), mirror,
		        policy_git_errmsg());
		goto out;
	}
	if (policy_resolve(c->repo, base, &base_oid, &ta, e) < 0 ||
	    policy_resolve(c->repo, head, &head_oid, &tb, e) < 0)
		goto out;

	/* The deltas only, no patches: a file that becomes a symlink (or a
	 * submodule) stays one delta, so that the new side is checked as
	 * what it is. */
	git_diff_options_init(&opts, GIT_DIFF_OPTIONS_VERSION);
	opts.flags = GIT_DIFF_INCLUDE_TYPECHANGE;
	if (treediff_diff(&diff, c->repo, ta, tb, &opts) < 0) {
		err_set(e, _("cannot compute the diff %s..%s: %s"), base, head, policy_git_errmsg());
		goto out;
	}
	if (policy_on(c, POLICY_SECRETS))
		policy_compile(c);
	for (size_t i = 0, nd = git_diff_num_deltas(diff); i < nd; i++)
		if (policy_check_delta(c, diff, i, e) < 0)
			goto out;
	if (policy_on(c, POLICY_AUTHORS) && policy_check_authors(c, &base_oid, &head_oid, e) < 0)
		goto out;
	rc = 0;
out:
	git_diff_free(diff);
	git_tree_free(ta);
	git_tree_free(tb);
	if (rc < 0) {
		policy_run_free(run);
		run = NULL;
	}
	*out = run;
	return rc;
}

int policy_file(void *arg, const struct diff_file *f, const char *patch, size_t len,
                struct err *e)
{
	struct policy_run *run = arg;
	struct policy_ctx *c = &run->c;
	(void)e;
	/* What the change adds to a text file or link: not a deleted file,
	 * a submodule or a binary, nor a blob too large to read. */
	if (!policy_is_file(f->new_mode) && f->new_mode != GIT_FILEMODE_LINK)
		return 0;
	if (f->binary || f->new_size > POLICY_SCAN_MAX)
		return 0;
	if (policy_on(c, POLICY_SECRETS) || policy_on(c, POLICY_CONTROLS) ||
	    policy_on(c, POLICY_INVISIBLE))
		policy_check_lines(c, f->new_path, patch, len);
	return 0;
}

int policy_end(struct policy_run *run, struct policy_finding **out, size_t *n)
{
	struct policy_ctx *c = &run->c;
	policy_finish(&c->list);
	if (c->list.n) {
		*out = xrealloc(*out, (*n + c->list.n) * sizeof(**out));
		memcpy(*out + *n, c->list.v, c->list.n * sizeof(*c->list.v));
		*n += c->list.n;
		free(c->list.v);
		c->list.v = NULL;
		c->list.n = 0;
	}
	policy_run_free(run);
	return 0;
}

int policy_check(const char *mirror, const char *base, const char *head,
                 const struct repo_conf *r, const struct policy_secrets *secrets,
                 struct policy_finding **out, size_t *n, struct err *e)
{
	struct policy_run *run;
	if (policy_begin(mirror, base, head, r, secrets, &run, e) < 0)
		return -1;
	if (diff_each(mirror, base, head, policy_file, run, e) < 0) {
		policy_run_free(run);
		return -1;
	}
	return policy_end(run, out, n);
}

/* ---- secrets paddock holds ---- */

static void policy_secrets_add(const char ***v, size_t *n, const char *value)
{
	if (!value || !*value)
		return;
	for (size_t i = 0; i < *n; i++)
		if (strcmp((*v)[i], value) == 0)
			return;
	*v = xrealloc(*v, (*n + 1) * sizeof(**v));
	(*v)[(*n)++] = value;
}

struct policy_secrets policy_secrets_collect(const struct config *cfg)
{
	static const char *const vars[] = {
		"PADDOCK_GIT_TOKEN", "GITHUB_TOKEN", "ANTHROPIC_API_KEY", "OPENAI_API_KEY",
	};
	struct policy_secrets s = { NULL, 0 };
	const char **v = NULL;

	for (size_t i = 0; cfg && i < cfg->nrepos; i++) {
		policy_secrets_add(&v, &s.n, config_repo_token(&cfg->repos[i]));
		policy_secrets_add(&v, &s.n, config_repo_github_token(&cfg->repos[i]));
	}
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		policy_secrets_add(&v, &s.n, getenv(vars[i]));
	/* The model keys the gateway adds, whatever variable holds them. */
	for (size_t i = 0; cfg && i < cfg->nendpoints; i++)
		if (cfg->endpoints[i].key_env)
			policy_secrets_add(&v, &s.n, getenv(cfg->endpoints[i].key_env));
	s.values = v;
	return s;
}
