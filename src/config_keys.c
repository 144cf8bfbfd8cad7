/* config_keys: the key table of the configuration file (config_keys[],
 * its sections and every key's type, default and help) and the setters
 * that check and store each key's value, apart from the parser that
 * reads the file (config.c), as tmux keeps options-table.c.  What the two
 * share is config_int.h. */
#include "autoconfig.h"
#include "config.h"
#include "config_int.h"

#include <ctype.h>
#include <errno.h>
#include <git2.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "egress.h"
#include "i18n.h"
#include "recipe.h"
#include "sandbox.h"
#include "units.h"
#include "urlmatch.h"

/* ---- names of values ---- */

static const char *const agent_kind_names[] = { "script", "claude", "codex", "pi", "opencode",
	NULL };

const char *config_agent_kind_name(enum agent_kind k)
{
	return (unsigned)k <= AGENT_OPENCODE ? agent_kind_names[k] : "?";
}
static const char *const policy_rule_names[POLICY_NRULES] = {
	"paths", "secrets", "size", "symlinks", "submodules", "controls", "invisible", "authors" };

const char *config_policy_rule_name(enum policy_rule r)
{
	return (unsigned)r < POLICY_NRULES ? policy_rule_names[r] : "?";
}

/* ---- checking values ---- */

/* Strict decimal in [lo, hi]. */
static int config_parse_int(const char *s, unsigned long long lo,
			    unsigned long long hi, unsigned long long *out)
{
	char *end;
	unsigned long long v;

	if (!s || !isdigit((unsigned char)s[0]))
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

/* ---- the key table's handlers ---- */

#define FIELD(en, type) ((type *)(void *)((char *)(en)->obj + (en)->k->off))
#define CFG(field) offsetof(struct config, field)
#define REPO(field) offsetof(struct repo_conf, field)
#define AGENT(field) offsetof(struct agent_conf, field)
#define ENDPOINT(field) offsetof(struct endpoint_conf, field)
#define PRICE(field) offsetof(struct price_conf, field)
#define TOKEN(field) offsetof(struct token_conf, field)
#define RECIPE(field) offsetof(struct recipe_conf, field)

/* A plain decimal number of CPUs: 0 or 0.01 to 4096 (the cgroup quota
 * is cpus * 100 ms per 100 ms, at least 1 ms). */
static int config_parse_cpus(const char *s, double *out)
{
	double v = 0, scale = 1;
	int digits = 0;

	for (; isdigit((unsigned char)*s) && digits < 9; s++, digits++)
		v = v * 10 + (*s - '0');
	if (!digits)
		return -1;
	if (*s == '.') {
		s++;
		if (!isdigit((unsigned char)*s))
			return -1;
		for (; isdigit((unsigned char)*s); s++)
			if (scale > 1e-9)
				v += (*s - '0') * (scale /= 10);
	}
	if (*s || (v != 0 && v < 0.01) || v > 4096)
		return -1;
	*out = v;
	return 0;
}

static int config_env_name_valid(const char *s)
{
	if (!s[0] || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
		return 0;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_')
			return 0;
	return 1;
}

/* A value that looks like a secret rather than a name or a path: a known
 * key prefix, or a long mix of letters and digits. */
static int config_looks_like_secret(const char *s)
{
	static const char *const prefixes[] = {
		"sk-", "sk_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-",
		"xoxb-", "xoxp-", "xapp-", "AKIA", "AIza", "hf_", "rk_", "pk_", "eyJ", "Bearer ", };
	for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++)
		if (strncmp(s, prefixes[i], strlen(prefixes[i])) == 0)
			return 1;
	size_t n = strlen(s), lower = 0, digit = 0;
	for (size_t i = 0; i < n; i++) {
		lower += islower((unsigned char)s[i]) != 0;
		digit += isdigit((unsigned char)s[i]) != 0;
	}
	return n >= 32 && lower && digit;
}

/* A variable's name (KT_ENV and endpoint.key-env): a value that is no
 * name is not echoed, since it may be the secret pasted in its place. */
static void config_env_value(const struct entry *en, char **dst)
{
	const char *v = en->value;
	if (config_looks_like_secret(v))
		config_problem_add(en->p->ps, en->line, _("%s: the value looks like a secret, not the name of a variable (it is not shown here); name the variable in paddock's environment that holds it, such as ANTHROPIC_API_KEY, and never write a secret in this file"), en->name);
	else if (!config_env_name_valid(v))
		config_problem_add(en->p->ps, en->line, _("%s: the value is not the name of an environment variable (letters, digits and _, not starting with a digit; it is not shown here, in case it is a secret); name the variable that holds the secret, such as ANTHROPIC_API_KEY"), en->name);
	else
		config_set_str(dst, v);
}

static int config_url_ok(const char *v)
{
	return (strncmp(v, "https://", 8) == 0 && v[8]) || (strncmp(v, "http://", 7) == 0 && v[7]);
}

/* A [price "MODEL"] name: a model id, optionally ending in '*'. */
int config_model_name_valid(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > 128 || s[0] == '*')
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && !strchr("._:/@-", s[i]) &&
		    !(s[i] == '*' && i == n - 1))
			return 0;
	return 1;
}

/* A KT_DURATION key: a duration (never 0s: units.h's start at 1s) up to
 * the key's hi, or a word that means none.  A value it refuses gets the
 * row's message (bad), or, where the row has none, one that names the key.
 * The rows' messages are N_() literals with one %s, the value, so the
 * format is not a literal here: tests/test-config gives each duration key
 * a bad value, and msgfmt -c checks that each translation keeps the %s. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
static void config_set_duration(const struct entry *en)
{
	const struct config_key *k = en->k;
	const char *v = en->value;
	double secs;

	if (((k->none & KD_ZERO) && strcmp(v, "0") == 0) ||
	    ((k->none & KD_NEVER) && strcmp(v, "never") == 0))
		*FIELD(en, double) = 0;
	else if (units_parse_duration(v, &secs) == 0 && (!k->hi || secs <= (double)k->hi))
		*FIELD(en, double) = secs;
	else if (k->bad)
		config_problem_add(en->p->ps, en->line, _(k->bad), v);
	else
		config_problem_add(en->p->ps, en->line, _("%s: '%s' is not a duration; write a whole number "
		                                          "of seconds with an optional s, m, h or d suffix "
		                                          "(for example 30m)"), en->name, v);
}
#pragma GCC diagnostic pop

/* The typed keys: checked, and stored in the section's object. */
void config_set_typed(const struct entry *en)
{
	const struct config_key *k = en->k;
	const char *v = en->value;
	struct problems *ps = en->p->ps;
	unsigned long long n;
	uint64_t size;
	double usd;
	int b;

	switch (k->type) {
	case KT_INT:
		if (config_parse_int(v, k->lo, k->hi, &n) < 0)
			config_problem_add(ps, en->line, _("%s: '%s' is not a number from %llu to %llu"),
			                   en->name, v, k->lo, k->hi);
		else
			*FIELD(en, int) = (int)n;
		break;
	case KT_PORT:
		if (config_parse_int(v, 1, 65535, &n) < 0)
			config_problem_add(ps, en->line, _("%s: '%s' is not a port from 1 to 65535"), en->name, v);
		else
			*FIELD(en, int) = (int)n;
		break;
	case KT_BOOL:
		if (git_config_parse_bool(&b, v) < 0)
			config_problem_add(ps, en->line, _("%s: '%s' is not true or false"), en->name, v);
		else
			*FIELD(en, int) = b;
		break;
	case KT_SIZE:
		if (units_parse_size(v, &size) == 0 && size >= k->lo) {
			*FIELD(en, uint64_t) = size;
		} else if (k->lo) {
			char least[32];
			units_format_size(k->lo, least, sizeof least);
			config_problem_add(ps, en->line, _("%s: '%s' is not a size of at least %s (for example %s)"),
			                   en->name, v, least, k->def ? k->def : least);
		} else {
			config_problem_add(ps, en->line, _("%s: '%s' is not a size; write a whole number of bytes with an optional k, m, g or t suffix (for example 4g or 512m)"),
			                   en->name, v);
		}
		break;
	case KT_PATH:
		if (v[0] != '/' && config_looks_like_secret(v))
			config_problem_add(ps, en->line, _("%s: the value looks like a secret, not a path (it is not shown here); give the absolute path of a file that holds it"), en->name);
		else if (v[0] != '/')
			config_problem_add(ps, en->line, _("%s: '%s' is not an absolute path"), en->name, v);
		else
			config_set_str(FIELD(en, char *), v);
		break;
	case KT_ENV:
		config_env_value(en, FIELD(en, char *));
		break;
	case KT_WORD:
		if (!v[0] || v[0] == '-' || strpbrk(v, " \t\n\"'\\"))
			config_problem_add(ps, en->line, _("%s: '%s' must be one word that does not start with '-'"),
			                   en->name, v);
		else
			config_set_str(FIELD(en, char *), v);
		break;
	case KT_PRICE:
		if (units_parse_money(v, &usd) < 0)
			config_problem_add(ps, en->line, _("%s: '%s' is not a price in US dollars per million tokens (for example 3 or 0.30)"),
			                   en->name, v);
		else
			*FIELD(en, double) = usd;
		break;
	case KT_TEXT:
		config_set_str(FIELD(en, char *), v);
		break;
	case KT_OPT_TEXT:
		free(*FIELD(en, char *));
		*FIELD(en, char *) = v[0] ? xstrdup(v) : NULL;
		break;
	case KT_DURATION:
		config_set_duration(en);
		break;
	case KT_CUSTOM:
		k->set(en);
		break;
	}
}

/* [limits] */

static void config_set_pids(const struct entry *en)
{
	struct config *c = en->obj;
	unsigned long long v;
	if (config_parse_int(en->value, 1, 4194304, &v) < 0)
		config_problem_add(en->p->ps, en->line, _("limits.pids: '%s' is not a number of processes from 1 to 4194304"), en->value);
	else
		c->limits.pids = (long)v;
}

static void config_set_cpus(const struct entry *en)
{
	struct config *c = en->obj;
	double cpus;
	if (config_parse_cpus(en->value, &cpus) < 0) {
		config_problem_add(en->p->ps, en->line, _("limits.cpus: '%s' is not a number of CPUs; write for example 2 or 1.5 (from 0.01 to 4096, or 0 for no limit)"), en->value);
	} else {
		c->limits.cpus = cpus;
		c->limits.cpus_set = 1;
	}
}

static void config_set_budget(const struct entry *en)
{
	struct config *c = en->obj;
	if (units_parse_money(en->value, &c->limits.budget) < 0)
		config_problem_add(en->p->ps, en->line, _("limits.budget: '%s' is not an amount in US dollars; write for example 5 or 2.50 (0 for none)"), en->value);
}

static void config_set_budget_tokens(const struct entry *en)
{
	struct config *c = en->obj;
	if (units_parse_count(en->value, &c->limits.budget_tokens) < 0)
		config_problem_add(en->p->ps, en->line, _("limits.budget-tokens: '%s' is not a number of tokens; write for example 200000, 500k or 2m (0 for none)"), en->value);
}

/* [paddock] log-format: the words of logger.h's formats (config does
 * not include logger, which reads the configuration's secrets). */
static void config_set_log_format(const struct entry *en)
{
	struct config *c = en->obj;
	if (!strcmp(en->value, "text") || !strcmp(en->value, "json"))
		c->log_json = !strcmp(en->value, "json");
	else
		config_problem_add(en->p->ps, en->line, _("paddock.log-format: '%s' is not a log format; write text or json"), en->value);
}

/* [sandbox] uid and gid */

static void config_set_ugid(const struct entry *en)
{
	struct config *c = en->obj;
	unsigned long long v;
	int is_uid = strcmp(en->k->key, "uid") == 0;

	if (strcmp(en->value, "0") == 0) {
		config_problem_add(en->p->ps, en->line, is_uid
			           ? _("sandbox.uid = 0 would run agents as root; choose an unused unprivileged uid such as 64100")
			           : _("sandbox.gid = 0 would give agents the root group; choose an unused unprivileged gid such as 64100"));
		return;
	}
	/* (uid_t)-1 means "no change" to chown and setresuid. */
	if (config_parse_int(en->value, 1, 4294967294ULL, &v) < 0) {
		config_problem_add(en->p->ps, en->line, _("sandbox.%s: '%s' is not a number from 1 to 4294967294"), en->k->key, en->value);
		return;
	}
	if (is_uid)
		c->sandbox_uid = (uid_t)v;
	else
		c->sandbox_gid = (gid_t)v;
}

static void config_set_backend(const struct entry *en)
{
	struct config *c = en->obj;
	struct err e = {{0}};
	if (!sandbox_backend_find(en->value, NULL, &e)) {
		config_problem_add(en->p->ps, en->line, "sandbox.backend: %s", e.msg);
		return;
	}
	free(c->sandbox_backend);
	c->sandbox_backend = xstrdup(en->value);
}

/* [repo "NAME"] */

static void config_set_repo_url(const struct entry *en)
{
	struct repo_conf *r = en->obj;
	/* "ext::" and other remote helpers run commands. */
	if (en->value[0] == '\0' || en->value[0] == '-' || strstr(en->value, "::"))
		config_problem_add(en->p->ps, en->line, _("repo.%s.url: '%s' is not a usable path or URL; use a path, file://, https:// or ssh:// URL"), r->name, en->value);
	/* Stored all the same: the load fails anyway, and "has no url" would
	 * be a second, wrong message. */
	config_set_str(&r->url, en->value);
}

static void config_set_repo_branch(const struct entry *en)
{
	struct repo_conf *r = en->obj;
	char *ref = xasprintf("refs/heads/%s", en->value);
	int valid = 0;
	if (en->value[0] == '-' || git_reference_name_is_valid(&valid, ref) < 0 || !valid)
		config_problem_add(en->p->ps, en->line, _("repo.%s.branch: '%s' is not a valid branch name"), r->name, en->value);
	else
		config_set_str(&r->branch, en->value);
	free(ref);
}

static void config_set_repo_push_url(const struct entry *en)
{
	struct repo_conf *r = en->obj;
	if (en->value[0] == '\0' || en->value[0] == '-' || strstr(en->value, "::"))
		config_problem_add(en->p->ps, en->line, _("repo.%s.push-url: '%s' is not a usable path or URL; use a path, file://, https:// or ssh:// URL"), r->name, en->value);
	else
		config_set_str(&r->push_url, en->value);
}

/* token-env, github-token-env */
static void config_set_token_env(const struct entry *en)
{
	config_env_value(en, FIELD(en, char *));
}

/* token-file, github-token-file: an absolute path, or the name of a
 * systemd credential (LoadCredential=), looked up in
 * $CREDENTIALS_DIRECTORY when the token is used. */
static void config_set_token_file(const struct entry *en)
{
	struct repo_conf *r = en->obj;
	const char *v = en->value;
	if (v[0] != '/' && config_looks_like_secret(v))
		config_problem_add(en->p->ps, en->line, _("repo.%s.%s: the value looks like a secret, not a file (it is not shown here); give the path of a file that holds it, or the name of a systemd credential"), r->name, en->k->key);
	else if (!v[0] || (v[0] != '/' && (v[0] == '.' || v[0] == '-' || strchr(v, '/'))))
		config_problem_add(en->p->ps, en->line, _("repo.%s.%s: '%s' is neither an absolute path nor the name of a systemd credential (a name without '/' that does not start with '.' or '-')"), r->name, en->k->key, v);
	else
		config_set_str(FIELD(en, char *), v);
}

/* ssh-key, ssh-known-hosts */
static void config_set_ssh_file(const struct entry *en)
{
	struct repo_conf *r = en->obj;
	if (en->value[0] == '/')
		config_set_str(FIELD(en, char *), en->value);
	else if (strcmp(en->k->key, "ssh-key") == 0)
		config_problem_add(en->p->ps, en->line, _("repo.%s.ssh-key: '%s' is not an absolute path to a private key file"), r->name, en->value);
	else
		config_problem_add(en->p->ps, en->line, _("repo.%s.ssh-known-hosts: '%s' is not an absolute path to a known_hosts file"), r->name, en->value);
}

static void config_set_branch_prefix(const struct entry *en)
{
	struct repo_conf *r = en->obj;
	char *ref = xasprintf("refs/heads/%sx", en->value);
	int valid = 0;
	if (en->value[0] == '-' || en->value[0] == '\0' ||
	    git_reference_name_is_valid(&valid, ref) < 0 || !valid)
		config_problem_add(en->p->ps, en->line, _("repo.%s.branch-prefix: '%s' does not make valid branch names"), r->name, en->value);
	else
		config_set_str(&r->branch_prefix, en->value);
	free(ref);
}

static void config_set_protected(const struct entry *en)
{
	struct repo_conf *r = en->obj;
	if (!en->value[0])
		config_problem_add(en->p->ps, en->line, _("repo.%s.protected: give a branch name or a glob pattern such as release/*"), r->name);
	else
		config_strv_add(&r->protected_, &r->nprotected, en->value);
}

static void config_set_pull_request(const struct entry *en)
{
	struct repo_conf *r = en->obj;
	if (strcmp(en->value, "github") == 0) {
		config_set_str(&r->pull_request, en->value);
	} else if (strcmp(en->value, "none") == 0) {
		free(r->pull_request);
		r->pull_request = NULL;
	} else {
		config_problem_add(en->p->ps, en->line, _("repo.%s.pull-request: '%s' is not known; use github or none"), r->name, en->value);
	}
}

static void config_set_github_repo(const struct entry *en)
{
	struct repo_conf *r = en->obj;
	const char *value = en->value, *slash = strchr(value, '/');
	if (!slash || slash == value || !slash[1] || strchr(slash + 1, '/') ||
	    strspn(value, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./") != strlen(value))
		config_problem_add(en->p->ps, en->line, _("repo.%s.github-repo: '%s' is not OWNER/NAME"), r->name, value);
	else
		config_set_str(&r->github_repo, value);
}

/* github-issues: "label:A,B" (each label non-empty) or a search query. */
static void config_set_github_issues(const struct entry *en)
{
	struct repo_conf *r = en->obj;
	const char *v = en->value;
	int bad = !*v;
	if (strncmp(v, "label:", 6) == 0) {
		const char *l = v + 6;
		bad = !*l || *l == ',' || l[strlen(l) - 1] == ',' || strstr(l, ",,");
	}
	if (bad || strlen(v) > 200)
		config_problem_add(en->p->ps, en->line, _("repo.%s.github-issues: '%s' is neither label:NAME[,NAME...] nor a search query (such as label:agent, or \"is:issue label:bug no:assignee\")"), r->name, v);
	else
		config_set_str(&r->github_issues, v);
}

int config_github_login_ok(const char *s, size_t n)
{
	if (!n || n > 39 || s[0] == '-' || s[n - 1] == '-')
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!(isalnum((unsigned char)s[i]) || (s[i] == '-' && s[i + 1] != '-')))
			return 0;
	return 1;
}

static void config_set_github_handle(const struct entry *en)
{
	struct repo_conf *r = en->obj;
	const char *v = en->value[0] == '@' ? en->value + 1 : en->value;
	if (!config_github_login_ok(v, strlen(v)))
		config_problem_add(en->p->ps, en->line, _("repo.%s.github-handle: '%s' is not a GitHub login (letters, digits and hyphens, such as paddock-bot)"), r->name, en->value);
	else
		config_set_str(&r->github_handle, v);
}

/* github-reviewers: logins and @org/team, separated by commas or spaces,
 * the key repeated or not. */
static void config_set_github_reviewers(const struct entry *en)
{
	struct repo_conf *r = en->obj;
	char *copy = xstrdup(en->value), *save = NULL;
	int any = 0;
	for (char *w = strtok_r(copy, ", \t", &save); w; w = strtok_r(NULL, ", \t", &save)) {
		const char *slash = strchr(w, '/');
		int ok = w[0] == '@' && slash
		         ? config_github_login_ok(w + 1, (size_t)(slash - w - 1)) && slash[1] &&
		           strspn(slash + 1, "abcdefghijklmnopqrstuvwxyz"
		                             "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.") == strlen(slash + 1)
		         : config_github_login_ok(w[0] == '@' ? w + 1 : w, strlen(w[0] == '@' ? w + 1 : w));
		if (!ok) {
			config_problem_add(en->p->ps, en->line, _("repo.%s.github-reviewers: '%s' is neither a GitHub login nor @ORG/TEAM"), r->name, w);
			continue;
		}
		config_strv_add(&r->github_reviewers, &r->ngithub_reviewers,
		                w[0] == '@' && !slash ? w + 1 : w);
		any = 1;
	}
	if (!any && !strtok_r(NULL, "", &save) && !en->value[0])
		config_problem_add(en->p->ps, en->line, _("repo.%s.github-reviewers: give logins or @ORG/TEAM, separated by commas"), r->name);
	free(copy);
}

/* reviewers: token names or Unix users, separated by commas. */
static void config_set_reviewers(const struct entry *en)
{
	struct repo_conf *r = en->obj;
	char *copy = xstrdup(en->value), *save = NULL;
	int any = 0;
	for (char *w = strtok_r(copy, ", \t", &save); w; w = strtok_r(NULL, ", \t", &save)) {
		config_strv_add(&r->reviewers, &r->nreviewers, w);
		any = 1;
	}
	if (!any)
		config_problem_add(en->p->ps, en->line, _("repo.%s.reviewers: give token names or Unix users, separated by commas"), r->name);
	free(copy);
}

static void config_set_token_role(const struct entry *en)
{
	struct token_conf *t = en->obj;
	enum access r = access_parse(en->value);
	if (r == ACCESS_NONE)
		config_problem_add(en->p->ps, en->line, _("token.%s.role: '%s' is not a role; use read, submit, review or admin"), t->name, en->value);
	else
		t->role = r;
}

static void config_set_github_api(const struct entry *en)
{
	struct repo_conf *r = en->obj;
	struct urlmatch_url u;
	struct err e;
	if (urlmatch_parse(en->value, 0, &u, &e) < 0) {
		config_problem_add(en->p->ps, en->line, _("repo.%s.github-api: %s; for GitHub Enterprise it looks like https://HOST/api/v3"), r->name, e.msg);
		return;
	}
	urlmatch_url_free(&u);
	config_set_str(&r->github_api, en->value);
}

static void config_set_deny(const struct entry *en)
{
	struct repo_conf *r = en->obj;
	if (!en->value[0])
		config_problem_add(en->p->ps, en->line, _("repo.%s.deny: give a path or a glob pattern such as secrets/**"), r->name);
	else
		config_strv_add(&r->deny, &r->ndeny, en->value);
}

/* policy-RULE */
static void config_set_policy(const struct entry *en)
{
	struct repo_conf *r = en->obj;
	int rule = -1;
	for (int i = 0; i < POLICY_NRULES; i++)
		if (strcmp(en->k->key + strlen("policy-"), policy_rule_names[i]) == 0)
			rule = i;
	if (rule < 0)
		return;
	if (strcmp(en->value, "block") == 0)
		r->policy[rule] = POLICY_BLOCK;
	else if (strcmp(en->value, "warn") == 0)
		r->policy[rule] = POLICY_WARN;
	else if (strcmp(en->value, "off") == 0)
		r->policy[rule] = POLICY_OFF;
	else
		config_problem_add(en->p->ps, en->line, _("repo.%s.%s: '%s' is not block, warn or off"), r->name, en->k->key, en->value);
}

/* allow-host, setup-allow-host */
static void config_set_allow_host(const struct entry *en)
{
	struct repo_conf *r = en->obj;
	struct egress_rule rule;
	struct err e;
	if (egress_rule_parse(en->value, &rule, &e) < 0) {
		config_problem_add(en->p->ps, en->line, "%s: %s", en->name, e.msg);
		return;
	}
	egress_rule_free(&rule);
	if (strcmp(en->k->key, "allow-host") == 0)
		config_strv_add(&r->allow_hosts, &r->nallow_hosts, en->value);
	else
		config_strv_add(&r->setup_allow_hosts, &r->nsetup_allow_hosts, en->value);
}

/* [agent "NAME"] */

/* command, resume */
static void config_set_agent_command(const struct entry *en)
{
	struct agent_cmdline cl;
	struct err e;
	if (agent_cmdline_parse(en->value, &cl, &e) < 0)
		config_problem_add(en->p->ps, en->line, "%s: %s", en->name, e.msg);
	else
		agent_cmdline_free(&cl);
	config_set_str(FIELD(en, char *), en->value);
}

/* files = PATH...: may be repeated; each value holds one or more paths,
 * split like a command (quote a path with spaces). */
static void config_set_agent_files(const struct entry *en)
{
	struct agent_conf *a = en->obj;
	struct agent_cmdline words;
	struct err e;

	if (agent_cmdline_parse(en->value, &words, &e) < 0) {
		config_problem_add(en->p->ps, en->line, _("agent.%s.files: '%s' is not a list of absolute paths; write for example files = /opt/agent/config.json /opt/agent/lib.py"), a->name, en->value);
		return;
	}
	for (size_t i = 0; i < words.argc; i++) {
		if (!agent_file_path_ok(words.argv[i]))
			config_problem_add(en->p->ps, en->line, _("agent.%s.files: '%s' is not an absolute, normalised path outside /proc, /dev and /sys; name each host file by its full path"), a->name, words.argv[i]);
		else
			config_strv_add(&a->files, &a->nfiles, words.argv[i]);
	}
	agent_cmdline_free(&words);
}

static void config_set_agent_kind(const struct entry *en)
{
	struct agent_conf *a = en->obj;
	size_t k;
	for (k = 0; agent_kind_names[k] && strcmp(agent_kind_names[k], en->value) != 0; k++)
		;
	if (!agent_kind_names[k])
		config_problem_add(en->p->ps, en->line, _("agent.%s.kind: '%s' is not known; use script, claude, codex, pi or opencode"), a->name, en->value);
	else
		a->kind = (enum agent_kind)k;
}

/* [endpoint "NAME"] */

static void config_set_endpoint_kind(const struct entry *en)
{
	struct endpoint_conf *ep = en->obj;
	if (strcmp(en->value, "anthropic") == 0)
		ep->kind = ENDPOINT_ANTHROPIC;
	else if (strcmp(en->value, "openai") == 0)
		ep->kind = ENDPOINT_OPENAI;
	else
		config_problem_add(en->p->ps, en->line, _("endpoint.%s.kind: '%s' is not known; use anthropic or openai (any OpenAI-compatible server)"), ep->name, en->value);
}

/* endpoint.key-env: empty means none (a local server without a key). */
static void config_set_key_env(const struct entry *en)
{
	struct endpoint_conf *ep = en->obj;
	if (!en->value[0]) {
		free(ep->key_env);
		ep->key_env = NULL;
		return;
	}
	config_env_value(en, &ep->key_env);
}

static void config_set_upstream(const struct entry *en)
{
	struct endpoint_conf *ep = en->obj;
	size_t n = strlen(en->value);
	while (n > 0 && en->value[n - 1] == '/')
		n--;
	if (!config_url_ok(en->value) || strpbrk(en->value, " \t\r\n"))
		config_problem_add(en->p->ps, en->line, _("endpoint.%s.upstream: '%s' is not an http(s) URL such as https://api.anthropic.com"), ep->name, en->value);
	else if (n >= 3 && strncmp(en->value + n - 3, "/v1", 3) == 0)
		/* The agent's paths start with /v1: it would be asked twice. */
		config_problem_add(en->p->ps, en->line, _("endpoint.%s.upstream: '%s' ends in the API's version path /v1, which the agent's requests bring themselves (/v1/messages, /v1/responses); write %.*s"),
		                   ep->name, en->value, (int)(n - 3), en->value);
	/* Kept all the same (the load fails): "has no upstream" would be a
	 * second, wrong message. */
	config_set_str(&ep->upstream, en->value);
}

/* [kubernetes] */

/* "IP:PORT" (IPv6 in brackets), the port 1..65535: 1 when it is. */
static int config_hostport_ok(const char *v)
{
	const char *colon = strrchr(v, ':');
	if (!colon || colon == v || !colon[1] || strlen(v) > 255)
		return 0;
	unsigned long long port;
	if (config_parse_int(colon + 1, 1, 65535, &port) < 0)
		return 0;
	char host[256];
	size_t n = (size_t)(colon - v);
	int v6 = v[0] == '[';
	if (v6 && (n < 3 || v[n - 1] != ']'))
		return 0;
	memcpy(host, v + v6, n - 2 * v6);
	host[n - 2 * v6] = '\0';
	struct egress_cidr c;
	return !strchr(host, '/') && (strchr(host, ':') != NULL) == v6 &&
	       egress_cidr_parse(host, &c) == 0;
}

static void config_set_kube_door(const struct entry *en)
{
	struct config *c = en->obj;
	if (!config_hostport_ok(en->value)) {
		config_problem_add(en->p->ps, en->line, _("kubernetes.front-door: '%s' is not an IP address and port such as 10.0.0.5:7433 ([fd00::5]:7433): pods have no DNS, so a name cannot be used"), en->value);
		return;
	}
	config_set_str(&c->kube.door, en->value);
}

static void config_set_kube_listen(const struct entry *en)
{
	struct config *c = en->obj;
	if (!config_hostport_ok(en->value)) {
		config_problem_add(en->p->ps, en->line, _("kubernetes.front-door-listen: '%s' is not an IP address and port such as 0.0.0.0:7433 or [::]:7433"), en->value);
		return;
	}
	config_set_str(&c->kube.door_listen, en->value);
}

static void config_set_kube_probe(const struct entry *en)
{
	struct config *c = en->obj;
	/* An address: the runner resolves nothing (a pod has no DNS). */
	if (!config_hostport_ok(en->value))
		config_problem_add(en->p->ps, en->line, _("kubernetes.probe: '%s' is not an IP address and port such as 169.254.169.254:80 ([fd00::1]:443); pods have no DNS, so a name cannot be probed"), en->value);
	else
		config_strv_add(&c->kube.probe, &c->kube.nprobe, en->value);
}

/* A DNS-1123 label (a namespace's name). */
static void config_set_kube_namespace(const struct entry *en)
{
	struct config *c = en->obj;
	const char *v = en->value;
	size_t n = strlen(v);
	int ok = n >= 1 && n <= 63 && isalnum((unsigned char)v[0]) && isalnum((unsigned char)v[n - 1]);
	for (size_t i = 0; ok && i < n; i++)
		ok = (islower((unsigned char)v[i]) || isdigit((unsigned char)v[i]) || v[i] == '-');
	if (!ok) {
		config_problem_add(en->p->ps, en->line, _("kubernetes.namespace: '%s' is not a namespace name (at most 63 lowercase letters, digits and '-', a letter or digit at each end)"), v);
		return;
	}
	config_set_str(&c->kube.namespace, v);
}

/* An image reference: no space or control character, not an option. */
static void config_set_kube_image(const struct entry *en)
{
	struct config *c = en->obj;
	const char *v = en->value;
	int ok = v[0] && v[0] != '-' && strlen(v) <= 512;
	for (const char *q = v; ok && *q; q++)
		ok = (unsigned char)*q > ' ' && *q != 0x7f;
	if (!ok) {
		config_problem_add(en->p->ps, en->line, _("%s: '%s' is not an image reference such as registry.example.com/agents:1.4"), en->name, v);
		return;
	}
	config_set_str(!strcmp(en->k->key, "image") ? &c->kube.image : &c->kube.runner_image, v);
}

/* [gateway] */

static void config_set_allow_address(const struct entry *en)
{
	struct config *c = en->obj;
	struct egress_cidr cidr;
	if (egress_cidr_parse(en->value, &cidr) < 0)
		config_problem_add(en->p->ps, en->line, _("gateway.allow-address: '%s' is not an address or CIDR such as 10.1.2.0/24 or fd00::/8"), en->value);
	else
		config_strv_add(&c->gw_allow_address, &c->ngw_allow_address, en->value);
}

/* gateway.uid and gateway.gid: not root, which the gateway drops. */
static void config_set_gw_ugid(const struct entry *en)
{
	struct config *c = en->obj;
	unsigned long long v;
	if (config_parse_int(en->value, 1, 4294967294ULL, &v) < 0) {
		config_problem_add(en->p->ps, en->line, _("gateway.%s: '%s' is not a number from 1 to 4294967294; choose an unused unprivileged id such as 64101"), en->k->key, en->value);
		return;
	}
	if (strcmp(en->k->key, "uid") == 0)
		c->gw_uid = (uid_t)v;
	else
		c->gw_gid = (gid_t)v;
}

static void config_set_network(const struct entry *en)
{
	struct config *c = en->obj;
	if (strcmp(en->value, "auto") == 0)
		c->gw_network = GW_NETWORK_AUTO;
	else if (strcmp(en->value, "namespace") == 0)
		c->gw_network = GW_NETWORK_NAMESPACE;
	else if (strcmp(en->value, "bridge") == 0)
		c->gw_network = GW_NETWORK_BRIDGE;
	else
		config_problem_add(en->p->ps, en->line, _("gateway.network: '%s' is not auto, namespace or bridge"), en->value);
}

/* [api] */

static void config_set_listen(const struct entry *en)
{
	struct config *c = en->obj;
	const char *value = en->value, *colon = strrchr(value, ':');
	unsigned long long v;
	if (strspn(value, "0123456789") == strlen(value) &&
	    config_parse_int(value, 1, 65535, &v) == 0)
		config_set_str(&c->api_listen, value);  /* a port on loopback */
	else if (!colon || colon == value || config_parse_int(colon + 1, 1, 65535, &v) < 0)
		config_problem_add(en->p->ps, en->line, _("api.listen: '%s' is not ADDRESS:PORT such as 127.0.0.1:8700"), value);
	else
		config_set_str(&c->api_listen, value);
}

/* [api] metrics-listen: ADDR:PORT only (api_listen_check's form). */
static void config_set_metrics_listen(const struct entry *en)
{
	struct config *c = en->obj;
	const char *value = en->value, *colon = strrchr(value, ':');
	unsigned long long v;
	if (!colon || colon == value || config_parse_int(colon + 1, 1, 65535, &v) < 0)
		config_problem_add(en->p->ps, en->line, _("api.metrics-listen: '%s' is not ADDRESS:PORT such as 127.0.0.1:9464"), value);
	else
		config_set_str(&c->api_metrics_listen, value);
}

static void config_set_max_queue(const struct entry *en)
{
	struct config *c = en->obj;
	unsigned long long v;
	if (config_parse_int(en->value, 0, 1000000, &v) < 0)
		config_problem_add(en->p->ps, en->line, _("api.max-queue: '%s' is not a number from 0 (no limit) to 1000000"), en->value);
	else
		c->api_max_queue = (int)v;
}

static void config_set_callback_allow(const struct entry *en)
{
	struct config *c = en->obj;
	struct urlmatch_pattern p;
	struct err e;
	if (urlmatch_pattern_parse(en->value, &p, &e) < 0) {
		config_problem_add(en->p->ps, en->line, _("api.callback-allow: %s; write an http(s) URL pattern such as https://chat.example.com/hooks/*"), e.msg);
		return;
	}
	urlmatch_pattern_free(&p);
	config_strv_add(&c->api_callback_allow, &c->napi_callback_allow, en->value);
}

/* A host name or an IP address as a Host header names it: letters,
 * digits, dots and dashes, or an IPv6 address in brackets. */
static void config_set_server_name(const struct entry *en)
{
	struct config *c = en->obj;
	const char *v = en->value;
	size_t n = strlen(v);
	int ok = n > 0 && n < 256;
	if (ok && v[0] == '[')
		ok = n > 2 && v[n - 1] == ']' && strspn(v + 1, "0123456789abcdefABCDEF:.") == n - 2;
	else if (ok)
		ok = strspn(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-") == n &&
		     v[0] != '.' && v[0] != '-';
	if (!ok)
		config_problem_add(en->p->ps, en->line, _("api.server-name: '%s' is not a host name or address such as paddock.example.com (no port, no wildcard)"), v);
	else
		config_strv_add(&c->api_server_names, &c->napi_server_names, v);
}

/* [webhook] */

static void config_set_webhook_url(const struct entry *en)
{
	struct config *c = en->obj;
	if (!config_url_ok(en->value) || strpbrk(en->value, " \t\r\n"))
		config_problem_add(en->p->ps, en->line, _("webhook.url: '%s' is not an http(s) URL such as https://chat.example.com/hooks/paddock"), en->value);
	/* Kept all the same (the load fails): "has no url" would be a second,
	 * wrong message. */
	config_set_str(&c->wh_url, en->value);
}

static void config_set_webhook_events(const struct entry *en)
{
	struct config *c = en->obj;
	struct parse *p = en->p;
	char *list, *save = NULL;
	int any = 0;

	/* The first events line replaces the default; later ones add. */
	if (!p->wh_events_seen)
		c->wh_events = 0;
	p->wh_events_seen = 1;
	list = xstrdup(en->value);
	for (char *tok = strtok_r(list, ", \t", &save); tok; tok = strtok_r(NULL, ", \t", &save)) {
		any = 1;
		static const char *const names[] = { "review", "failed", "done", "cancelled",
		                                     "rejected", "lost", "agent-finished",
		                                     "pull-request-failed", "gate-reminder" };
		size_t i;
		for (i = 0; i < sizeof names / sizeof names[0] && strcmp(tok, names[i]); i++)
			;
		if (i < sizeof names / sizeof names[0])
			c->wh_events |= 1u << i;
		else if (strcmp(tok, "all") == 0)
			c->wh_events = CONFIG_WEBHOOK_ALL;
		else
			config_problem_add(p->ps, en->line, _("webhook.events: '%s' is not an event; use review, failed, done, cancelled, rejected, lost, agent-finished, pull-request-failed, gate-reminder or all (several separated by commas)"), tok);
	}
	if (!any)
		config_problem_add(p->ps, en->line, _("webhook.events: '%s' names no event; use review, failed, done, cancelled, rejected, lost, agent-finished, pull-request-failed, gate-reminder or all (several separated by commas)"), en->value);
	free(list);
}

/* Workflow keys of [repo] and [recipe] (issue 17): the object is a repo
 * or a recipe, told apart by the entry's section. */
static int config_entry_is_recipe(const struct entry *en)
{
	return strcmp(en->k->section, "recipe") == 0;
}

static void config_set_approval(const struct entry *en)
{
	int mode = config_approval_parse(en->value);
	if (mode < 0) {
		config_problem_add(en->p->ps, en->line, _("%s: '%s' is not an approval mode; use review, "
		                                          "auto, auto-push or never"), en->name, en->value);
		return;
	}
	if (config_entry_is_recipe(en))
		((struct recipe_conf *)en->obj)->approval = mode;
	else
		((struct repo_conf *)en->obj)->approval = mode;
}

static void config_set_confirm_over(const struct entry *en)
{
	double usd;
	if (units_parse_money(en->value, &usd) < 0 || usd < 0) {
		config_problem_add(en->p->ps, en->line, _("%s: '%s' is not an amount in US dollars; write "
		                                          "for example 5 or $2.50"), en->name, en->value);
		return;
	}
	if (config_entry_is_recipe(en))
		((struct recipe_conf *)en->obj)->confirm_over = usd;
	else
		((struct repo_conf *)en->obj)->confirm_over = usd;
}

static void config_set_fix_rounds(const struct entry *en)
{
	unsigned long long v;
	if (config_parse_int(en->value, 0, 20, &v) < 0) {
		config_problem_add(en->p->ps, en->line, _("%s: '%s' is not a number of tries from 0 to 20"),
		                   en->name, en->value);
		return;
	}
	if (config_entry_is_recipe(en))
		((struct recipe_conf *)en->obj)->fix_rounds = (int)v;
	else
		((struct repo_conf *)en->obj)->fix_rounds = (int)v;
}

/* [recipe "NAME"] */

static void config_set_recipe_budget(const struct entry *en)
{
	struct recipe_conf *r = en->obj;
	if (units_parse_money(en->value, &r->budget) < 0 || r->budget < 0) {
		r->budget = -1;
		config_problem_add(en->p->ps, en->line, _("%s: '%s' is not an amount in US dollars; write "
		                                          "for example 5 or 2.50 (0 for no limit)"), en->name,
		                   en->value);
	}
}

/* input = NAME or NAME: what to give */
static void config_set_recipe_input(const struct entry *en)
{
	struct recipe_conf *r = en->obj;
	const char *v = en->value;
	size_t n = strcspn(v, ":");
	while (n && (v[n - 1] == ' ' || v[n - 1] == '\t'))
		n--;
	char *name = xstrndup(v, n);
	const char *help = v[strcspn(v, ":")] ? v + strcspn(v, ":") + 1 : NULL;
	while (help && (*help == ' ' || *help == '\t'))
		help++;
	if (!recipe_input_name_valid(name)) {
		config_problem_add(en->p->ps, en->line, _("%s: '%s' is not an input name; use lower-case "
		                                          "letters, digits, '-' and '_' (up to 32), then "
		                                          "optionally ': what to give'"), en->name, name);
		free(name);
		return;
	}
	for (size_t i = 0; i < r->ninputs; i++)
		if (!strcmp(r->inputs[i].name, name)) {
			free(r->inputs[i].help);
			r->inputs[i].help = help && *help ? xstrdup(help) : NULL;
			free(name);
			return;
		}
	r->inputs = xrealloc(r->inputs, (r->ninputs + 1) * sizeof *r->inputs);
	r->inputs[r->ninputs].name = name;
	r->inputs[r->ninputs].help = help && *help ? xstrdup(help) : NULL;
	r->ninputs++;
}

static void config_set_recipe_contract(const struct entry *en)
{
	struct recipe_conf *r = en->obj;
	struct err e = {{0}};
	/* An empty value clears the list: a file's recipe that changes a
	 * ready-made one's contract starts again. */
	if (!*en->value) {
		config_strv_free(r->contract, r->ncontract);
		r->contract = NULL;
		r->ncontract = 0;
	} else if (recipe_clause_check(en->value, &e) < 0) {
		config_problem_add(en->p->ps, en->line, "%s: %s", en->name, e.msg);
	} else {
		config_strv_add(&r->contract, &r->ncontract, en->value);
	}
}

/* [ui] */

static void config_set_theme(const struct entry *en)
{
	struct config *c = en->obj;
	if (!config_name_valid(en->value))
		config_problem_add(en->p->ps, en->line, _("ui.theme: '%s' is not a theme name"), en->value);
	else
		config_set_str(&c->ui_theme, en->value);
}

/* mcp.role: the role of `paddock mcp` on the local store (mcp.h). */
static void config_set_mcp_role(const struct entry *en)
{
	struct config *c = en->obj;
	enum access r = access_parse(en->value);
	if (r == ACCESS_NONE)
		config_problem_add(en->p->ps, en->line, _("mcp.role: '%s' is not a role; use read, submit, review or admin"), en->value);
	else
		c->mcp_role = r;
}

/* The objects of named sections, made on first use. */

static void *config_slot_repo(struct config *c, const char *name)
{
	return config_repo_slot(c, name);
}

static void *config_slot_agent(struct config *c, const char *name)
{
	struct agent_conf *a = config_agent_slot(c, name);
	/* The file's now, even when it only changes a key of a ready-made
	 * one (config_builtin_parse marks those afterwards). */
	a->builtin = 0;
	return a;
}

static void *config_slot_recipe(struct config *c, const char *name)
{
	for (size_t i = 0; i < c->nrecipes; i++)
		if (strcmp(c->recipes[i].name, name) == 0) {
			c->recipes[i].builtin = 0;
			return &c->recipes[i];
		}
	c->recipes = xrealloc(c->recipes, (c->nrecipes + 1) * sizeof *c->recipes);
	struct recipe_conf *r = &c->recipes[c->nrecipes++];
	memset(r, 0, sizeof *r);
	r->name = xstrdup(name);
	r->budget = -1;
	r->approval = APPROVAL_UNSET;
	r->confirm_over = -1;
	r->fix_rounds = -1;
	return r;
}

static void *config_slot_endpoint(struct config *c, const char *name)
{
	for (size_t i = 0; i < c->nendpoints; i++)
		if (strcmp(c->endpoints[i].name, name) == 0)
			return &c->endpoints[i];
	c->endpoints = xrealloc(c->endpoints, (c->nendpoints + 1) * sizeof(*c->endpoints));
	struct endpoint_conf *ep = &c->endpoints[c->nendpoints++];
	memset(ep, 0, sizeof *ep);
	ep->name = xstrdup(name);
	/* Local servers (llama.cpp, vLLM, Ollama) speak OpenAI's API. */
	ep->kind = ENDPOINT_OPENAI;
	return ep;
}

static void *config_slot_price(struct config *c, const char *model)
{
	for (size_t i = 0; i < c->nprices; i++)
		if (strcmp(c->prices[i].model, model) == 0)
			return &c->prices[i];
	c->prices = xrealloc(c->prices, (c->nprices + 1) * sizeof(*c->prices));
	struct price_conf *pr = &c->prices[c->nprices++];
	memset(pr, 0, sizeof *pr);
	pr->model = xstrdup(model);
	return pr;
}

static void *config_slot_token(struct config *c, const char *name)
{
	for (size_t i = 0; i < c->ntokens; i++)
		if (strcmp(c->tokens[i].name, name) == 0)
			return &c->tokens[i];
	c->tokens = xrealloc(c->tokens, (c->ntokens + 1) * sizeof *c->tokens);
	struct token_conf *t = &c->tokens[c->ntokens++];
	memset(t, 0, sizeof *t);
	t->name = xstrdup(name);
	return t;
}

enum access config_token_role(const struct token_conf *t)
{
	return t->role != ACCESS_NONE ? t->role : t->read_only ? ACCESS_READ : ACCESS_ADMIN;
}

char *config_token_value(const struct token_conf *t)
{
	struct err e;
	return config_secret(t->value_env, t->value_file, &e);
}

/* ---- the tables ---- */

/* The sections, in the manual's order. */
const struct config_section config_sections[] = {
	{ .name = "paddock", .title = "[paddock]" },
	{ .name = "limits", .title = "[limits]",
	  .intro = "The limits of each task's sandbox.\n"
	           ".BR paddock (1),\n"
	           "section\n"
	           ".BR \"THE SANDBOX\" ,\n"
	           "says what happens when one is hit; the task's error names the key.\n" },
	{ .name = "sandbox", .title = "[sandbox]" },
	{ .name = "repo", .named = 1, .slot = config_slot_repo,
	  .title = "[repo \\(dq\\fIname\\fP\\(dq]",
	  .intro = "A repository that tasks can work on, named with\n"
	           ".B paddock add \\-\\-repo\n"
	           ".IR name .\n" },
	{ .name = "agent", .named = 1, .slot = config_slot_agent,
	  .title = "[agent \\(dq\\fIname\\fP\\(dq]",
	  .intro = "An agent, named with\n"
	           ".B paddock add \\-\\-agent\n"
	           ".IR name .\n"
	           "A task that names none gets the agent called\n"
	           ".BR default ,\n"
	           "else the first agent of the file, else\n"
	           ".BR claude .\n"
	           "The agents\n"
	           ".BR claude ,\n"
	           ".BR codex ,\n"
	           ".B pi\n"
	           "and\n"
	           ".B opencode\n"
	           "are ready-made (see\n"
	           ".BR \"READY-MADE AGENTS\" );\n"
	           "a section with one of their names changes only the keys it sets.\n" },
	{ .name = "recipe", .named = 1, .slot = config_slot_recipe,
	  .title = "[recipe \\(dq\\fIname\\fP\\(dq]",
	  .intro = "A recipe: a kind of task, with a prompt that takes inputs, its own defaults\n"
	           "and its own output contract, used with\n"
	           ".B paddock add \\-\\-recipe\n"
	           ".IR name .\n"
	           "The recipes\n"
	           ".BR fix\\-bug ,\n"
	           ".B verify\\-pr\n"
	           "and\n"
	           ".B upgrade\\-dependency\n"
	           "are ready-made (see\n"
	           ".B RECIPES\n"
	           "in\n"
	           ".BR paddock (1));\n"
	           "a section with one of their names changes only the keys it sets.\n" },
	{ .name = "endpoint", .named = 1, .slot = config_slot_endpoint,
	  .title = "[endpoint \\(dq\\fIname\\fP\\(dq]",
	  .intro = "A model endpoint: a port on the sandbox's 127.0.0.1 where the task's gateway\n"
	           "takes requests of a model API and forwards them to the upstream, with the\n"
	           "real key (see\n"
	           ".BR EGRESS ).\n"
	           ".B anthropic\n"
	           "and\n"
	           ".B openai\n"
	           "are ready-made (see\n"
	           ".BR \"READY-MADE AGENTS\" );\n"
	           "a section with one of their names changes only the keys it sets.\n" },
	{ .name = "price", .named = 1, .slot = config_slot_price,
	  .title = "[price \\(dq\\fImodel\\fP\\(dq]",
	  .intro = "What a model costs, in US dollars per million tokens (see\n"
	           ".BR \"BUDGETS AND PRICES\" ).\n"
	           ".I model\n"
	           "is the model's name as the API's responses give it, such as\n"
	           ".BR claude\\-sonnet\\-4\\-5\\-20250929 ,\n"
	           "or a prefix that ends in\n"
	           ".BR * ,\n"
	           "such as\n"
	           ".BR claude\\-sonnet\\-4* .\n"
	           "A section with the name of a built-in price changes only the keys it sets;\n"
	           "in another, the keys not set are 0.\n" },
	{ .name = "kubernetes", .title = "[kubernetes]",
	  .intro = "The\n"
	           ".B kubernetes\n"
	           "sandbox backend (see\n"
	           ".BR paddock (1),\n"
	           "section\n"
	           ".BR KUBERNETES ):\n"
	           "each sandbox is a Pod in a namespace that an admin prepared once with\n"
	           ".BR \"paddock kubernetes manifest\" .\n" },
	{ .name = "gateway", .title = "[gateway]",
	  .intro = "The gateway that is each sandbox's only way out (see\n"
	           ".BR EGRESS ).\n" },
	{ .name = "webhook", .title = "[webhook]",
	  .intro = "A URL that gets a JSON\n"
	           ".B POST\n"
	           "when a gate opens (a task reaches review), when a task fails and when a task\n"
	           "is done: a chat's incoming webhook, or a service of your own.\n"
	           "Without\n"
	           ".BR url ,\n"
	           "no webhook is sent.\n"
	           "See\n"
	           ".B WEBHOOKS\n"
	           "for the body, the headers and the signature.\n" },
	{ .name = "github", .title = "[github]",
	  .intro = "GitHub as a front door (see\n"
	           ".B GITHUB\n"
	           "in\n"
	           ".BR paddock (1)):\n"
	           "how issues and pull requests are read.\n" },
	{ .name = "api", .title = "[api]",
	  .intro = "The HTTP API of\n"
	           ".B paddock serve\n"
	           "(see\n"
	           ".BR paddock\\-api (7)).\n" },
	{ .name = "token", .named = 1, .slot = config_slot_token,
	  .title = "[token \\(dq\\fIname\\fP\\(dq]",
	  .intro = "A token of the HTTP API (see\n"
	           ".BR paddock\\-api (7),\n"
	           "section\n"
	           ".BR AUTHENTICATION ).\n"
	           "When at least one is configured, every request needs one.\n"
	           "The section's name is the actor of the decisions that the token makes.\n"
	           "The token is never written in the file itself: give one of\n"
	           ".B value\\-env\n"
	           "and\n"
	           ".BR value\\-file .\n" },
	{ .name = "remote", .title = "[remote]",
	  .intro = "This machine as a client of a\n"
	           ".B paddock serve\n"
	           "elsewhere (see\n"
	           ".BR paddock (1),\n"
	           "section\n"
	           ".BR \"REMOTE USE\" ):\n"
	           "every verb that works remotely talks to its HTTP API, and nothing is kept on\n"
	           "this machine.\n"
	           "A configuration file may hold only this section.\n" },
	{ .name = "mcp", .title = "[mcp]",
	  .intro = "The Model Context Protocol server,\n"
	           ".B paddock mcp\n"
	           "(see\n"
	           ".BR paddock (1),\n"
	           "section\n"
	           ".BR MCP ).\n" },
	{ .name = "ui", .title = "[ui]",
	  .intro = "The dashboard (see\n"
	           ".BR paddock (1),\n"
	           "section\n"
	           ".BR \"THE DASHBOARD\" ),\n"
	           "read when it starts.\n" },
	{ .name = "bind", .any_key = 1, .title = "[bind]" },
};

/* The keys, in the manual's order: by section, then as the manual
 * presents them. */
const struct config_key config_keys[] = {
	/* [paddock] */
	{ .section = "paddock", .key = "workers", .type = KT_INT,
	  .off = CFG(workers), .lo = 1, .hi = 1024,
	  .def = "2",
	  .help = "How many tasks run at once (each has a supervisor and a gateway on this host;\n"
	          "with\n"
	          ".B [sandbox] backend = kubernetes\n"
	          "their sandboxes are pods elsewhere).\n"
	          "Queued tasks start first in, first out, as workers come free.\n"
	          "A sandbox kept at the review gate does not take a worker.\n" },
	{ .section = "paddock", .key = "template-max-age", .type = KT_DURATION,
	  .off = CFG(template_max_age), .none = KD_ZERO | KD_NEVER,
	  .bad = N_("paddock.template-max-age: '%s' is not a duration (for example 7d, or never to keep templates)"),
	  .doc = "duration, or never",
	  .def = "7d",
	  .help = "How long a template (the read-only checkout of a base commit that task\n"
	          "workspaces stand on) is kept after its last use:\n"
	          ".B paddock serve\n"
	          "and the dashboard remove, every hour, the templates no process holds that\n"
	          "were last used longer ago.\n"
	          ".B never\n"
	          "(or\n"
	          ".BR 0 )\n"
	          "keeps them;\n"
	          ".B paddock template prune\n"
	          "removes them by hand.\n" },
	{ .section = "paddock", .key = "user", .type = KT_WORD,
	  .off = CFG(run_as),
	  .def = "(none)",
	  .help = "The user\n"
	          ".B paddock serve\n"
	          "becomes when it is started as root (a system service): before it opens the\n"
	          "store it creates the data directory, hands it to that user, starts a root\n"
	          "helper, and drops root for good, so that the scheduler, the store, the API,\n"
	          "the supervisors and the gateways run as that user.\n"
	          "The sandboxes stay root mode's (the sandbox uid, cgroups, a network namespace\n"
	          "per task): the root helper makes them for the user's supervisors and checks\n"
	          "what it is asked (see\n"
	          ".BR paddock (1),\n"
	          "SERVICES).\n"
	          "With the\n"
	          ".B process\n"
	          "backend there is no helper.\n"
	          "Not set, a\n"
	          ".B paddock\n"
	          "started as root stays root and runs its sandboxes in root mode.\n" },
	{ .section = "paddock", .key = "max-attempts", .type = KT_INT,
	  .off = CFG(max_attempts), .lo = 1, .hi = 100,
	  .def = "3",
	  .help = "How often a task's first round is started when\n"
	          ".B paddock\n"
	          "stops under it (kill \\-9, a crash) before the task fails with reason\n"
	          ".B crashed\n"
	          "(see RECOVERY in\n"
	          ".BR paddock (1)).\n"
	          "A planned stop (SIGTERM, quitting the dashboard) does not count.\n" },
	{ .section = "paddock", .key = "log-format", .type = KT_CUSTOM,
	  .set = config_set_log_format, .doc = "text or json",
	  .def = "text",
	  .help = "How\n"
	          ".B paddock serve\n"
	          "writes what it says:\n"
	          ".B text\n"
	          "(a task's progress and notices on standard output, errors on standard\n"
	          "error, for a person), or\n"
	          ".B json\n"
	          "(everything on standard output, one JSON object a line with\n"
	          ".BR time ,\n"
	          ".BR level ,\n"
	          ".BR task ,\n"
	          ".BR repo ,\n"
	          ".B event\n"
	          "and\n"
	          ".BR message ,\n"
	          "for journald and log shippers; see LOGS in\n"
	          ".BR paddock (1)).\n"
	          ".B serve \\-\\-log\\-format\n"
	          "wins over it.\n" },
	{ .section = "paddock", .key = "gate-timeout", .type = KT_DURATION,
	  .off = CFG(gate_timeout), .none = KD_ZERO,
	  .bad = N_("paddock.gate-timeout: '%s' is not a duration (for example 24h, or 0 to tear sandboxes down at once)"),
	  .doc = "duration, or 0",
	  .def = "24h",
	  .help = "How long a task's sandbox is kept while the task waits at review, counted\n"
	          "from when its round reached review.\n"
	          "Then the sandbox is torn down; the task stays at review with its branch in\n"
	          ".BR paddock 's\n"
	          "mirror and can still be approved, pushed or rejected, and a later request\n"
	          "for changes runs in a sandbox rebuilt at the task's head, with the agent's\n"
	          "home as the round left it (archived when it reached review, for an agent\n"
	          "with a\n"
	          ".B resume\n"
	          "command).\n"
	          ".B 0\n"
	          "keeps no sandbox.\n"
	          "See\n"
	          ".BR paddock (1),\n"
	          "section\n"
	          ".BR \"THE REVIEW GATE\" .\n" },
	{ .section = "paddock", .key = "gate-reminder", .type = KT_DURATION,
	  .off = CFG(gate_reminder), .none = KD_ZERO,
	  .doc = "duration, or 0",
	  .def = "0",
	  .help = "How long a task may wait at review for a person before it is brought up again:\n"
	          "after this long, and again after each further interval (2h, 4h, 6h ... after\n"
	          "its round reached review, for\n"
	          ".BR 2h ),\n"
	          "the scheduler sends the webhook event\n"
	          ".BR gate-reminder ,\n"
	          "prints a line on\n"
	          ".BR \"paddock serve\" 's\n"
	          "output and the dashboard notifies, once per interval, also across restarts.\n"
	          "A new round starts the count again.\n"
	          "Only gates that wait for a person count: not one that an approval mode\n"
	          ".B auto\n"
	          "or\n"
	          ".B auto-push\n"
	          "is about to decide, nor one whose requested changes wait to run.\n"
	          "A duration is a whole number with an optional suffix\n"
	          ".BR s ,\n"
	          ".BR m ,\n"
	          ".B h\n"
	          "or\n"
	          ".B d\n"
	          "(seconds without one).\n"
	          ".B 0\n"
	          "sends none.\n"
	          "A repo's\n"
	          ".B gate-reminder\n"
	          "replaces it for that repo's tasks.\n" },
	{ .section = "paddock", .key = "max-at-review", .type = KT_INT,
	  .off = CFG(max_at_review), .lo = 0, .hi = 100000,
	  .def = "0",
	  .help = "While this many tasks wait at review for a person, the scheduler starts no\n"
	          "new task: queued tasks stay queued and start when one leaves review\n"
	          "(approved, rejected, changes requested, cancelled).\n"
	          ".BR \"paddock list\" ,\n"
	          ".B paddock show\n"
	          "of a queued task and the dashboard's title say so.\n"
	          "A repo's\n"
	          ".B max-at-review\n"
	          "counts only that repo's tasks and holds only its queued tasks, in place of\n"
	          "this one.\n"
	          ".B 0\n"
	          "is no limit.\n" },
	/* [limits] */
	{ .section = "limits", .key = "timeout", .type = KT_DURATION,
	  .off = CFG(limits.timeout),
	  .bad = N_("limits.timeout: '%s' is not a duration; write a whole number of seconds with an optional s, m, h or d suffix (for example 30m)"),
	  .doc = "duration",
	  .def = "30m",
	  .help = "Wall-clock time for a task's commands in the sandbox together: creating the\n"
	          "branch, the agent and the tests.\n"
	          "At the deadline everything in the sandbox is killed and the task fails.\n"
	          "The hand-off that follows gets 5 minutes of its own.\n"
	          "A repository's\n"
	          ".B setup\n"
	          "command gets its own\n"
	          ".BR timeout .\n" },
	{ .section = "limits", .key = "memory", .type = KT_SIZE,
	  .off = CFG(limits.memory),
	  .def = "4g",
	  .help = "Memory of all of the sandbox's processes together (a memory cgroup, with no\n"
	          "swap).\n"
	          "Files written in the sandbox live in memory (tmpfs) and count too.\n" },
	{ .section = "limits", .key = "pids", .type = KT_CUSTOM,
	  .set = config_set_pids,
	  .doc = "integer, 1 to 4194304",
	  .def = "512",
	  .help = "Processes and threads in the sandbox at once (a pids cgroup).\n" },
	{ .section = "limits", .key = "cpus", .type = KT_CUSTOM,
	  .set = config_set_cpus,
	  .doc = "decimal number, 0.01 to 4096, or 0",
	  .def = "half the online CPUs, rounded up",
	  .help = "CPU time of all of the sandbox's processes together, in CPUs, however many\n"
	          "processes they start: with\n"
	          ".B cpus = 1.5\n"
	          "they get at most 150 ms of CPU time in every 100 ms (a cpu cgroup:\n"
	          ".I cpu.max\n"
	          "on cgroup v2,\n"
	          ".I cpu.cfs_quota_us\n"
	          "on v1), so that tasks leave the rest of a shared host to their neighbours.\n"
	          "As a backstop, no process may use more CPU time than the whole sandbox could\n"
	          "until the timeout\n"
	          ".RB ( cpus\n"
	          "times the seconds left, and a few seconds more): beyond it the process is\n"
	          "killed with\n"
	          "SIGXCPU (and SIGKILL a second later).\n"
	          "The repository's set-up and the tests of the base commit run under the same\n"
	          "limit.\n"
	          "More CPUs than the machine has is allowed (the task may then use them all);\n"
	          ".B paddock config check\n"
	          "warns of it.\n"
	          ".B 0\n"
	          "means no limit.\n"
	          "Where the host has no cgroup cpu controller to use, a task fails at\n"
	          "preparing when the file sets\n"
	          ".BR cpus ,\n"
	          "and says so; with the default, only the per-process backstop holds, and the\n"
	          "task's log says that on its first line.\n" },
	{ .section = "limits", .key = "disk", .type = KT_SIZE,
	  .off = CFG(limits.disk),
	  .def = "2g",
	  .help = "Size of the tmpfs that holds everything the sandbox can write: the\n"
	          "workspace's changes,\n"
	          ".IR /home/agent ,\n"
	          ".I /tmp\n"
	          "and\n"
	          ".IR /out .\n" },
	{ .section = "limits", .key = "output", .type = KT_SIZE,
	  .off = CFG(limits.output),
	  .def = "64m",
	  .help = "Bytes of output that a task's commands may write to its log, all of them\n"
	          "together.\n"
	          "At the cap the command is stopped and the task fails.\n" },
	{ .section = "limits", .key = "bundle", .type = KT_SIZE,
	  .off = CFG(limits.bundle),
	  .def = "200m",
	  .help = "Largest bundle the hand-off may hand back, and largest file in it.\n" },
	{ .section = "limits", .key = "budget", .type = KT_CUSTOM,
	  .set = config_set_budget,
	  .doc = "amount, or 0",
	  .def = "0, no budget",
	  .help = "What a task may spend on model calls, in US dollars, over all its rounds,\n"
	          "as the gateway prices them (see\n"
	          ".BR \"BUDGETS AND PRICES\" ).\n"
	          "When the task's spending reaches it, the gateway refuses further model\n"
	          "requests, the agent is stopped and the task fails at running with the reason\n"
	          ".BR budget .\n"
	          ".B paddock add \\-\\-budget\n"
	          "sets another amount for one task.\n"
	          ".B 0\n"
	          "means no limit, and is the default: without a budget here, in\n"
	          ".B budget\\-tokens\n"
	          "or on the task, a task spends what its agent asks for;\n"
	          ".B paddock config check\n"
	          "warns when an endpoint has a key and there is none.\n"
	          "An amount below a cent is kept and shown as it is (0.001 is $0.001).\n" },
	{ .section = "limits", .key = "budget-tokens", .type = KT_CUSTOM,
	  .set = config_set_budget_tokens,
	  .doc = "count, or 0",
	  .def = "0",
	  .help = "The same for tokens: input, output and prompt-cache tokens, read and written,\n"
	          "all counted, over all rounds; for example\n"
	          ".BR 2m .\n"
	          "It also stops the use of models that have no price.\n"
	          ".B 0\n"
	          "means no limit.\n" },
	{ .section = "limits", .key = "model-concurrency", .type = KT_INT,
	  .off = CFG(limits.model_concurrency), .lo = 1, .hi = 64,
	  .def = "4",
	  .help = "Model requests of one task that its gateway has with the upstream at once.\n"
	          "Further requests wait their turn in the gateway (they are not refused), so\n"
	          "that a burst of parallel requests cannot run far past the budget before the\n"
	          "first answers are counted (see\n"
	          ".BR \"BUDGETS AND PRICES\" ).\n" },
	/* [sandbox] */
	{ .section = "sandbox", .key = "backend", .type = KT_CUSTOM,
	  .set = config_set_backend, .doc = "bwrap, kubernetes or process",
	  .def = "bwrap",
	  .help = "What makes the sandboxes:\n"
	          ".B bwrap\n"
	          "(bubblewrap; see\n"
	          ".BR paddock (1),\n"
	          "section\n"
	          ".BR \"THE SANDBOX\" ),\n"
	          "or\n"
	          ".B process\n"
	          "(no isolation at all: commands run as paddock's own user, on the host's\n"
	          "network, in a private directory that holds a copy of the template, a home and\n"
	          ".IR /out ;\n"
	          "only the time, output, file-size and CPU-time limits hold).\n"
	          ".B process\n"
	          "is for tests and for development on machines without user namespaces; it\n"
	          "refuses to run unless\n"
	          ".B unsafe-no-isolation\n"
	          "is true.\n"
	          "A name that is not a backend stops\n"
	          ".B paddock serve\n"
	          "and the dashboard's scheduler with a message.\n" },
	{ .section = "sandbox", .key = "unsafe-no-isolation", .type = KT_BOOL,
	  .off = CFG(sandbox_unsafe),
	  .def = "false",
	  .help = "Lets\n"
	          ".B backend = process\n"
	          "run: its agents can read and change every file paddock's user can, and reach\n"
	          "any host, keys included.\n"
	          "Never set it where an agent could be hostile.\n" },
	{ .section = "sandbox", .key = "uid", .type = KT_CUSTOM,
	  .set = config_set_ugid,
	  .doc = "integer, 1 to 4294967294",
	  .def = "64100",
	  .help = "The host uid that sandboxes run as (uid 1000 inside).\n"
	          "Choose one that no user and no file on the host uses: templates are owned by\n"
	          "it, and so is whatever the sandbox writes.\n"
	          "0 is refused.\n" },
	{ .section = "sandbox", .key = "gid", .type = KT_CUSTOM,
	  .set = config_set_ugid,
	  .doc = "integer, 1 to 4294967294",
	  .def = "64100",
	  .help = "The host gid that sandboxes run as (gid 1000 inside), chosen as\n"
	          ".B uid\n"
	          "is.\n"
	          "0 is refused.\n" },
	/* [kubernetes] */
	{ .section = "kubernetes", .key = "kubeconfig", .type = KT_PATH,
	  .off = CFG(kube.kubeconfig),
	  .def = "none",
	  .help = "The kubeconfig file that says which cluster, user and namespace to use, read\n"
	          "with kubeconfig's own rules (the current context unless\n"
	          ".B context\n"
	          "names one; relative file names from the file's folder).\n"
	          "None:\n"
	          ".B $KUBECONFIG\n"
	          "(its files merged as kubectl merges them: the first to set a name wins), else\n"
	          "the pod's service account when paddock runs in the\n"
	          "cluster, else\n"
	          ".IR ~/.kube/config .\n" },
	{ .section = "kubernetes", .key = "context", .type = KT_OPT_TEXT,
	  .off = CFG(kube.context),
	  .def = "the current context",
	  .help = "The kubeconfig's context to use.\n" },
	{ .section = "kubernetes", .key = "namespace", .type = KT_CUSTOM,
	  .set = config_set_kube_namespace, .doc = "namespace name",
	  .def = "the context's, else default",
	  .help = "The namespace sandboxes run in: one prepared with\n"
	          ".BR \"paddock kubernetes manifest\" ,\n"
	          "for paddock's sandboxes alone.\n" },
	{ .section = "kubernetes", .key = "image", .type = KT_CUSTOM,
	  .set = config_set_kube_image, .doc = "image reference",
	  .def = "none (required)",
	  .help = "The sandbox image: git, tar, the repositories' toolchains, and node for the\n"
	          "agents\n"
	          ".B paddock agent install\n"
	          "installs (paddock puts a task's agent's install into its pod).\n"
	          "Every command of a task runs in it, as uid 1000, on a read-only root.\n" },
	{ .section = "kubernetes", .key = "runner-image", .type = KT_CUSTOM,
	  .set = config_set_kube_image, .doc = "image reference",
	  .def = "image",
	  .help = "The image an init container copies\n"
	          ".B paddock\\-runner\n"
	          "from (with\n"
	          ".BR cp ),\n"
	          "into the pod, where it is the sandbox's first process.\n" },
	{ .section = "kubernetes", .key = "runner-path", .type = KT_PATH,
	  .off = CFG(kube.runner_path),
	  .def = KUBE_CONF_RUNNER_PATH,
	  .help = "Where\n"
	          ".B paddock\\-runner\n"
	          "is in\n"
	          ".BR runner\\-image :\n"
	          "the one built with this paddock (the protocol's version must match).\n" },
	{ .section = "kubernetes", .key = "front-door", .type = KT_CUSTOM,
	  .set = config_set_kube_door, .doc = "IP:PORT",
	  .def = "none (required)",
	  .help = "The address pods dial to reach paddock's front door: the IP address of a\n"
	          "Service, a load balancer or the host, and its port.\n"
	          "Pods have no DNS, so it is an address, not a name.\n"
	          "The NetworkPolicy of the manifest allows a pod to reach this address and\n"
	          "nothing else.\n" },
	{ .section = "kubernetes", .key = "front-door-listen", .type = KT_CUSTOM,
	  .set = config_set_kube_listen, .doc = "IP:PORT",
	  .def = "0.0.0.0 and front-door's port",
	  .help = "Where\n"
	          ".B paddock serve\n"
	          "(or the dashboard that runs the scheduler) listens for the pods' runners.\n" },
	{ .section = "kubernetes", .key = "front-door-cidr", .type = KT_OPT_TEXT,
	  .off = CFG(kube.door_cidr),
	  .def = "front-door's address alone",
	  .help = "The range the manifest's NetworkPolicy lets pods reach, where the front door\n"
	          "answers from more than one address.\n" },
	{ .section = "kubernetes", .key = "runtime-class", .type = KT_OPT_TEXT,
	  .off = CFG(kube.runtime_class),
	  .def = "none",
	  .help = "The pods'\n"
	          ".BR runtimeClassName ,\n"
	          "such as\n"
	          ".B gvisor\n"
	          "or\n"
	          ".BR kata ,\n"
	          "for a kernel of the sandbox's own.\n" },
	{ .section = "kubernetes", .key = "host-users", .type = KT_BOOL,
	  .off = CFG(kube.host_users),
	  .def = "true",
	  .help = "false gives each pod a user namespace of its own\n"
	          "(\\fBhostUsers: false\\fP; the nodes must support it).\n" },
	{ .section = "kubernetes", .key = "audience", .type = KT_WORD,
	  .off = CFG(kube.audience),
	  .def = "paddock",
	  .help = "The audience of the token a pod proves its task with (a projected service\n"
	          "account token, checked by a TokenReview): worth nothing to the API server or\n"
	          "to anything else that checks its audience.\n" },
	{ .section = "kubernetes", .key = "probe", .type = KT_CUSTOM,
	  .set = config_set_kube_probe,
	  .doc = "IP:PORT, may be repeated",
	  .def = "169.254.169.254:80",
	  .help = "Targets a pod must not reach: before it runs anything, the runner tries\n"
	          "each, and the cluster's API server, and refuses to run while one answers\n"
	          "(the NetworkPolicies are not in force).\n" },
	{ .section = "kubernetes", .key = "start-timeout", .type = KT_DURATION,
	  .off = CFG(kube.start_timeout), .hi = 86400,
	  .bad = N_("kubernetes.start-timeout: '%s' is not a duration such as 5m or 90s"),
	  .doc = "duration",
	  .def = "5m",
	  .help = "How long a pod has to be scheduled, pull its image, start and dial the front\n"
	          "door; then the task fails with what the pod was waiting for.\n" },
	{ .section = "kubernetes", .key = "resume-timeout", .type = KT_DURATION,
	  .off = CFG(kube.resume_timeout), .hi = 3600,
	  .bad = N_("kubernetes.resume-timeout: '%s' is not a duration such as 1m or 30s"),
	  .doc = "duration",
	  .def = "1m",
	  .help = "How long a pod's session may be without its connection (one that broke: a\n"
	          "node, a proxy or the network between): the runner dials the front door\n"
	          "again that long and the session goes on where it was; past it the task\n"
	          "fails with reason runner.\n" },
	{ .section = "kubernetes", .key = "max-pods", .type = KT_INT,
	  .off = CFG(kube.max_pods), .lo = 1, .hi = 100000,
	  .def = "100",
	  .help = "The namespace's quota of pods in\n"
	          ".BR \"paddock kubernetes manifest\" .\n" },
	/* [repo] */
	{ .section = "repo", .key = "url", .type = KT_CUSTOM,
	  .set = config_set_repo_url,
	  .doc = "string",
	  .help = "Where\n"
	          ".B paddock\n"
	          "fetches the repository from: a local path (best absolute, since a relative\n"
	          "one is taken from the scheduler's working directory), a\n"
	          ".B file://\n"
	          "URL, an\n"
	          ".B https://\n"
	          "URL or an\n"
	          ".B ssh://\n"
	          "URL.\n"
	          "The fetch has the credentials and checks of a push: over https (plain\n"
	          "http only to this machine),\n"
	          ".B paddock\n"
	          "sends the token of\n"
	          ".B token\\-env\n"
	          "from its environment when the server asks for credentials; over SSH, the\n"
	          ".B ssh\\-key\n"
	          "or the SSH agent, once the server's host key is found in\n"
	          ".BR ssh\\-known\\-hosts .\n"
	          "A value that is empty, starts with\n"
	          ".BR \\- ,\n"
	          "or contains\n"
	          ".B ::\n"
	          "(a git remote helper, which would run a command) is refused.\n"
	          "When the url changes,\n"
	          ".BR paddock 's\n"
	          "mirror fetches from the new one.\n"
	          "A local path where there is nothing fails the task at preparing with\n"
	          ".RI \\(dq \"no repository at \" path \\(dq\n"
	          "(and an approve or push with a\n"
	          ".B push\\-url\n"
	          "like it the same way);\n"
	          ".B paddock config check\n"
	          "warns about both.\n"
	          "A local repository that another user owns is opened only for its owner,\n"
	          "as in git: the task fails saying that it belongs to another user; run\n"
	          ".B paddock\n"
	          "as that user, or trust the repository as the user\n"
	          ".B paddock\n"
	          "runs as with\n"
	          ".BI \"git config \\-\\-global \\-\\-add safe.directory \" path\\fR.\n" },
	{ .section = "repo", .key = "branch", .type = KT_CUSTOM,
	  .set = config_set_repo_branch,
	  .doc = "string",
	  .def = "main",
	  .help = "The branch that tasks start from.\n"
	          "A task's base is the branch's tip when the task is prepared.\n"
	          "It must be a valid git branch name and must not start with\n"
	          ".BR \\- .\n" },
	{ .section = "repo", .key = "test", .type = KT_OPT_TEXT,
	  .off = REPO(test),
	  .doc = "shell command",
	  .def = "none",
	  .help = "Run with\n"
	          ".B /bin/sh \\-c\n"
	          "in the task's sandbox, in\n"
	          ".IR /work ,\n"
	          "after the agent, with\n"
	          ".B PADDOCK_STEP=test\n"
	          "in its environment.\n"
	          "It runs twice: in the agent's sandbox (the agent's run), then, after the\n"
	          "hand-off, on a clean checkout of the imported commit in a fresh sandbox over\n"
	          "the template with an empty home, no network and the same limits (the\n"
	          "verified run, with its own\n"
	          ".BR limits.timeout ).\n"
	          "A status other than 0 in the verified run fails the task at testing (the\n"
	          "agent's run alone never decides); its error names the failed\n"
	          "tests when it can find them in the output (Python unittest and pytest, Go,\n"
	          "TAP, Rust, Jest and Mocha styles) and ends with the last lines of the output.\n"
	          "The agent's run shares the task's\n"
	          ".BR limits.timeout .\n"
	          "It also runs once on each base commit, in a sandbox of its own, for the\n"
	          "\\(lqtests before\\(rq of the gate summary; that result does not fail a task.\n"
	          "Empty means none: the task passes testing.\n" },
	{ .section = "repo", .key = "setup", .type = KT_OPT_TEXT,
	  .off = REPO(setup),
	  .doc = "shell command",
	  .def = "none",
	  .help = "Run with\n"
	          ".B /bin/sh \\-c\n"
	          "once per base commit and set-up (a changed\n"
	          ".B setup\n"
	          "or\n"
	          ".B setup\\-allow\\-host\n"
	          "builds a new template), when the template checkout of that commit is made, in\n"
	          "a sandbox where the template is writable at\n"
	          ".IR /work ,\n"
	          "with the same limits as a task and a\n"
	          ".B limits.timeout\n"
	          "of its own.\n"
	          "Its output goes to the log of the task that needed the template.\n"
	          "When it fails, that task fails at preparing and no template is kept.\n"
	          "What it leaves is the template's baseline, which no task commits: untracked\n"
	          "files and folders (anchored in the template's\n"
	          ".IR .git/info/exclude ),\n"
	          "and tracked files it changed, which keep the base's version in a task's\n"
	          "commit while they hold what the set-up left.\n"
	          "Its only network is a proxy to the hosts of\n"
	          ".B setup\\-allow\\-host\n"
	          "(see\n"
	          ".BR EGRESS ):\n"
	          "without them, it has none, and cannot download dependencies.\n"
	          "Empty means none.\n" },
	{ .section = "repo", .key = "push-url", .type = KT_CUSTOM,
	  .set = config_set_repo_push_url,
	  .doc = "string",
	  .def = "the url",
	  .group = "Pushing (see\n"
	           ".BR paddock (1),\n"
	           "section\n"
	           ".BR \"PUSH AND PULL REQUESTS\" ):\n",
	  .help = "Where\n"
	          ".B paddock approve\n"
	          "and\n"
	          ".B paddock push\n"
	          "push the task's branch: a local path, a\n"
	          ".B file://\n"
	          "URL, an\n"
	          ".B https://\n"
	          "URL or an\n"
	          ".B ssh://\n"
	          "URL.\n"
	          "A value that is empty, starts with\n"
	          ".BR \\- ,\n"
	          "or contains\n"
	          ".B ::\n"
	          "is refused.\n" },
	{ .section = "repo", .key = "token-file", .type = KT_CUSTOM,
	  .off = REPO(token_file), .set = config_set_token_file,
	  .doc = "path or credential name",
	  .def = "none",
	  .help = "A file that holds the token of\n"
	          ".BR token\\-env ,\n"
	          "for a service whose environment has none (its first line is the token); used\n"
	          "when the variable is not set.\n"
	          "A name that is not an absolute path is a systemd credential: the file of that\n"
	          "name in\n"
	          ".B $CREDENTIALS_DIRECTORY\n"
	          "(the unit's\n"
	          ".BR LoadCredential= ),\n"
	          "and no file when that is not set.\n"
	          "The file is read each time the token is used, so a token rotated in place is\n"
	          "taken at the next push.\n"
	          "The decisions that push (approve, push, a group's pick) are carried out by the\n"
	          "process that runs the scheduler, with its credentials: configure them once,\n"
	          "for\n"
	          ".BR \"paddock serve\" .\n" },
	{ .section = "repo", .key = "token-env", .type = KT_CUSTOM,
	  .off = REPO(token_env), .set = config_set_token_env,
	  .doc = "environment variable name",
	  .def = "PADDOCK_GIT_TOKEN",
	  .help = "The environment variable that holds the token sent to an https server that\n"
	          "asks for credentials when the mirror is fetched from the\n"
	          ".B url\n"
	          "and when a branch is pushed (as the password of user\n"
	          ".BR \\%x\\-access\\-token ;\n"
	          "over plain http only to this machine).\n"
	          "Name the variable, never the token itself: the token is read from the\n"
	          "environment of the process that fetches\n"
	          ".RB ( \"paddock serve\" )\n"
	          "or pushes and never written anywhere.\n" },
	{ .section = "repo", .key = "ssh-key", .type = KT_CUSTOM,
	  .off = REPO(ssh_key), .set = config_set_ssh_file,
	  .doc = "absolute path",
	  .def = "the SSH agent",
	  .help = "The private key file, without a passphrase, for fetching the mirror and\n"
	          "pushing over SSH; the\n"
	          ".I .pub\n"
	          "file beside it is used when it can be read.\n"
	          "Without it,\n"
	          ".B paddock\n"
	          "asks the SSH agent of\n"
	          ".BR SSH_AUTH_SOCK .\n" },
	{ .section = "repo", .key = "ssh-known-hosts", .type = KT_CUSTOM,
	  .off = REPO(ssh_known_hosts), .set = config_set_ssh_file,
	  .doc = "absolute path",
	  .def = "the user's and the system's",
	  .help = "The known_hosts file that the SSH server's host key is checked against,\n"
	          "before any credential is sent, when the mirror is fetched or a branch is\n"
	          "pushed over SSH, read with OpenSSH's own parser (hashed\n"
	          "entries and patterns work); without it,\n"
	          ".I ~/.ssh/known_hosts\n"
	          "and\n"
	          ".IR /etc/ssh/ssh_known_hosts .\n"
	          "A server whose key is not there, or differs, is refused.\n" },
	{ .section = "repo", .key = "branch-prefix", .type = KT_CUSTOM,
	  .set = config_set_branch_prefix,
	  .doc = "string",
	  .def = "paddock/",
	  .help = "The start of every task branch:\n"
	          ".B paddock\n"
	          "names a task's branch with the prefix followed by the task id when the task\n"
	          "is added, and pushes only branches that start with the prefix.\n"
	          "It must make valid git branch names and must not start with\n"
	          ".BR \\- .\n"
	          "A change applies to tasks added after it; the pushes of older tasks, whose\n"
	          "branches do not start with the new prefix, are refused.\n" },
	{ .section = "repo", .key = "protected", .type = KT_CUSTOM,
	  .set = config_set_protected,
	  .doc = "glob, may be repeated",
	  .def = "none",
	  .help = "A pattern of branches that\n"
	          ".B paddock\n"
	          "never pushes to, such as\n"
	          ".B release/*\n"
	          "or\n"
	          ".BR stable .\n"
	          "The repository's\n"
	          ".B branch\n"
	          "and the branch the remote's HEAD names are always protected.\n" },
	{ .section = "repo", .key = "pull-request", .type = KT_CUSTOM,
	  .set = config_set_pull_request,
	  .doc = "github or none",
	  .def = "none",
	  .group = "Pull requests:\n",
	  .help = "With\n"
	          ".BR github ,\n"
	          ".B paddock approve\n"
	          "opens a pull request on GitHub (or GitHub Enterprise, see\n"
	          ".BR github\\-api )\n"
	          "after it pushes, from the task's branch into the repository's\n"
	          ".BR branch .\n" },
	{ .section = "repo", .key = "github-repo", .type = KT_CUSTOM,
	  .set = config_set_github_repo,
	  .doc = "OWNER/NAME",
	  .def = "required for pull requests",
	  .help = "The repository on GitHub, such as\n"
	          ".BR acme/shop :\n"
	          "letters, digits,\n"
	          ".BR \\- ,\n"
	          ".B _\n"
	          "and\n"
	          ".BR . ,\n"
	          "with one\n"
	          ".BR / .\n"
	          "Without it, opening a pull request fails (after the push).\n" },
	{ .section = "repo", .key = "github-api", .type = KT_CUSTOM,
	  .set = config_set_github_api,
	  .doc = "URL",
	  .def = "https://api.github.com",
	  .help = "The base URL of the REST API; for GitHub Enterprise,\n"
	          ".BI https:// host /api/v3\\fR.\\fP\n"
	          "It must start with\n"
	          ".B https://\n"
	          ".RB ( http://\n"
	          "is accepted, but the token is sent over plain http only to 127.0.0.1,\n"
	          ".B localhost\n"
	          "or [::1], as the host of the parsed URL).\n"
	          "A URL with a user name, a fragment, or that does not parse is refused.\n" },
	{ .section = "repo", .key = "github-token-file", .type = KT_CUSTOM,
	  .off = REPO(github_token_file), .set = config_set_token_file,
	  .doc = "path or credential name",
	  .def = "none",
	  .help = "A file that holds the GitHub token, for a service whose environment has\n"
	          "none: read as\n"
	          ".B token\\-file\n"
	          "is, when\n"
	          ".B github\\-token\\-env\n"
	          "names a variable that is not set.\n" },
	{ .section = "repo", .key = "github-token-env", .type = KT_CUSTOM,
	  .off = REPO(github_token_env), .set = config_set_token_env,
	  .doc = "environment variable name",
	  .def = "GITHUB_TOKEN",
	  .help = "The environment variable that holds the GitHub token: it opens pull requests\n"
	          "(write access to the repository's pull requests) and, for a repository that\n"
	          "follows GitHub, reads its issues, pull requests, reviews and check runs and\n"
	          "writes paddock's comments (and reads team memberships for a team in\n"
	          ".BR github\\-reviewers ).\n"
	          "It is read from the environment of the process that sends the request.\n" },
	{ .section = "repo", .key = "reviewers", .type = KT_CUSTOM,
	  .set = config_set_reviewers,
	  .doc = "NAME[, NAME...]",
	  .def = "none",
	  .help = "Who may decide the repository's gates (approve, push, request changes,\n"
	          "reject, override, pick, confirm): token names (through the API) and Unix\n"
	          "users (the\n"
	          ".B paddock\n"
	          "command on this machine), separated by commas.\n"
	          "A decision by anyone else is refused (403 through the API, exit status 1\n"
	          "from the command) and the refusal is in the task's history.\n"
	          "Without it, anyone whose role allows it may decide.\n" },
	{ .section = "repo", .key = "four-eyes", .type = KT_BOOL,
	  .off = REPO(four_eyes),
	  .def = "false",
	  .help = "Refuses an approve by the token or Unix user that queued the task, as\n"
	          "required reviews do on GitHub: somebody else must approve it.\n"
	          "The refusal is in the task's history.\n" },
	{ .section = "repo", .key = "draft", .type = KT_BOOL,
	  .off = REPO(draft),
	  .def = "false",
	  .help = "Opens pull requests as drafts.\n" },
	{ .section = "repo", .key = "github-issues", .type = KT_CUSTOM,
	  .set = config_set_github_issues,
	  .doc = "label:NAME[,NAME...] or a search query",
	  .def = "none",
	  .group = "GitHub as a front door (see GITHUB in paddock(1)):\n",
	  .help = "The open issues of\n"
	          ".B github\\-repo\n"
	          "that become tasks:\n"
	          ".B label:agent\n"
	          "takes those with the label\n"
	          ".B agent\n"
	          "(several, separated by commas, must all be there); anything else is a GitHub\n"
	          "search query that is added to\n"
	          ".BR \"repo:OWNER/NAME is:issue is:open\" .\n"
	          "Each matching issue becomes one task, once, with its title and body as the\n"
	          "prompt (through the recipe\n"
	          ".B fix\\-bug\n"
	          "when the repository has a test command; its agent is that recipe's\n"
	          ".BR agent ).\n" },
	{ .section = "repo", .key = "github-handle", .type = KT_CUSTOM,
	  .set = config_set_github_handle,
	  .doc = "login",
	  .def = "none",
	  .help = "The GitHub login paddock's token belongs to, such as\n"
	          ".BR paddock\\-bot :\n"
	          "a comment on paddock's pull request that mentions\n"
	          ".B @paddock\\-bot\n"
	          "asks for changes, as a review that requests changes does.\n" },
	{ .section = "repo", .key = "github-reviewers", .type = KT_CUSTOM,
	  .set = config_set_github_reviewers,
	  .doc = "login or @ORG/TEAM, may be repeated",
	  .def = "none",
	  .help = "Who may ask for changes on GitHub: logins, and teams as\n"
	          ".BR @acme/reviewers\n"
	          "(an active member counts; the token needs read access to the\n"
	          "organization's members), separated by commas.\n"
	          "A review or comment of anyone else is ignored, and recorded\n"
	          ".RB ( \"paddock github events\" ).\n"
	          "Without it, nobody may.\n" },
	{ .section = "repo", .key = "github-delete-branch", .type = KT_BOOL,
	  .off = REPO(github_delete_branch),
	  .def = "false",
	  .help = "Deletes the task's branch on GitHub when its pull request is merged.\n"
	          "A branch is never deleted otherwise, and never one outside\n"
	          ".BR branch\\-prefix .\n" },
	{ .section = "repo", .key = "github-follow", .type = KT_BOOL,
	  .off = REPO(github_follow),
	  .def = "true with github-issues, github-handle or github-reviewers",
	  .help = "Follows the pull requests of paddock's tasks: their state, checks,\n"
	          "reviews and comments, read by\n"
	          ".B paddock serve\n"
	          "every\n"
	          ".BR github.poll ,\n"
	          "by\n"
	          ".BR \"paddock github sync\" ,\n"
	          "and on each webhook.\n" },
	{ .section = "repo", .key = "deny", .type = KT_CUSTOM,
	  .set = config_set_deny,
	  .doc = "glob, may be repeated",
	  .def = "none",
	  .group = "Policy on what agents bring back (see\n"
	           ".BR paddock (1),\n"
	           "section\n"
	           ".BR POLICY ):\n",
	  .help = "A path pattern added to the deny list of the\n"
	          ".B paths\n"
	          "rule, such as\n"
	          ".B secrets/**\n"
	          "or\n"
	          ".BR **/*.sqlite .\n"
	          "A leading\n"
	          ".B /\n"
	          "is ignored, a trailing\n"
	          ".B /\n"
	          "means everything below, and\n"
	          ".B **\n"
	          "counts only as a whole part\n"
	          ".RB ( a/**/b ).\n"
	          "The defaults (CI definitions such as\n"
	          ".B .github/workflows/**\n"
	          "and build output such as\n"
	          ".BR **/node_modules/** )\n"
	          "cannot be removed.\n" },
	{ .section = "repo", .key = "max-file-size", .type = KT_SIZE,
	  .off = REPO(max_file_size),
	  .def = "10m",
	  .help = "The largest new or changed file that the\n"
	          ".B size\n"
	          "rule lets through.\n" },
	{ .section = "repo", .key = "policy-paths", .type = KT_CUSTOM,
	  .set = config_set_policy,
	  .doc = "block, warn or off",
	  .def = "block",
	  .help = "What the rule on paths (a new or changed path on the deny list, see\n"
	          ".BR deny )\n"
	          "does with a finding:\n"
	          ".B block\n"
	          "stops\n"
	          ".B paddock approve\n"
	          "and\n"
	          ".B paddock push\n"
	          "until a reviewer overrides the finding by name,\n"
	          ".B warn\n"
	          "only shows it in the gate summary, and\n"
	          ".B off\n"
	          "skips the rule.\n"
	          "See\n"
	          ".BR paddock (1),\n"
	          "section\n"
	          ".BR POLICY ,\n"
	          "for each rule.\n" },
	{ .section = "repo", .key = "policy-secrets", .type = KT_CUSTOM,
	  .set = config_set_policy,
	  .doc = "block, warn or off",
	  .def = "block",
	  .help = "The same for the rule on added lines that look like a secret.\n" },
	{ .section = "repo", .key = "policy-size", .type = KT_CUSTOM,
	  .set = config_set_policy,
	  .doc = "block, warn or off",
	  .def = "block",
	  .help = "The same for the rule on files over\n"
	          ".BR max\\-file\\-size .\n" },
	{ .section = "repo", .key = "policy-symlinks", .type = KT_CUSTOM,
	  .set = config_set_policy,
	  .doc = "block, warn or off",
	  .def = "block",
	  .help = "The same for the rule on symlinks that point outside the repository.\n" },
	{ .section = "repo", .key = "policy-submodules", .type = KT_CUSTOM,
	  .set = config_set_policy,
	  .doc = "block, warn or off",
	  .def = "block",
	  .help = "The same for the rule on submodule changes (a gitlink or\n"
	          ".IR .gitmodules ).\n" },
	{ .section = "repo", .key = "policy-controls", .type = KT_CUSTOM,
	  .set = config_set_policy,
	  .doc = "block, warn or off",
	  .def = "block",
	  .help = "The same for the rule on escape sequences, control characters and bidi\n"
	          "controls (\\(dqTrojan Source\\(dq) in added lines and added paths.\n" },
	{ .section = "repo", .key = "policy-invisible", .type = KT_CUSTOM,
	  .set = config_set_policy,
	  .doc = "block, warn or off",
	  .def = "warn",
	  .help = "The same for the rule on invisible characters (zero-width space and\n"
	          "joiners, byte order mark, soft hyphen, tag characters, variation selectors)\n"
	          "in added lines and added paths, which warns by default: ordinary text holds\n"
	          "some of them.\n" },
	{ .section = "repo", .key = "policy-authors", .type = KT_CUSTOM,
	  .set = config_set_policy,
	  .doc = "block, warn or off",
	  .def = "warn",
	  .help = "The same for the rule on commit authors other than the sandbox's identity,\n"
	          "which warns by default: an agent may commit under its own name.\n" },
	{ .section = "repo", .key = "allow-host", .type = KT_CUSTOM,
	  .set = config_set_allow_host,
	  .doc = "host rule, may be repeated",
	  .def = "none",
	  .group = "Network (see\n"
	           ".BR EGRESS ):\n",
	  .help = "A host that the agents of this repository's tasks may reach through the\n"
	          "gateway's proxy:\n"
	          ".B registry.npmjs.org\n"
	          "(that name),\n"
	          ".B *.pythonhosted.org\n"
	          "(any name one or more labels below it, not the name itself;\n"
	          ".B *\n"
	          "stands nowhere else),\n"
	          "either with\n"
	          ".BI : port\n"
	          "for that port only, or an IP address, which allows requests to that address\n"
	          "as such.\n"
	          "Without a port, a rule allows port 443, and port 80 for plain\n"
	          ".B http://\n"
	          "requests.\n"
	          "Names must be ASCII: write an internationalised name in its\n"
	          ".B xn\\-\\-\n"
	          "form.\n"
	          "Nothing is allowed by default, and the model endpoints need no rule.\n" },
	{ .section = "repo", .key = "setup-allow-host", .type = KT_CUSTOM,
	  .set = config_set_allow_host,
	  .doc = "host rule, may be repeated",
	  .def = "none",
	  .help = "The same for the repository's\n"
	          ".B setup\n"
	          "command, which reaches only these hosts (not those of\n"
	          ".BR allow\\-host ),\n"
	          "such as the package registry that it installs dependencies from.\n" },
	{ .section = "repo", .key = "approval", .type = KT_CUSTOM,
	  .set = config_set_approval,
	  .doc = "review, auto, auto-push or never",
	  .def = "review",
	  .group = "Workflows (see\n"
	           ".BR paddock (1),\n"
	           "sections\n"
	           ".B \"APPROVAL MODES\"\n"
	           "and\n"
	           ".BR \"THE FIX LOOP\" ):\n",
	  .help = "What happens when a task's gate opens.\n"
	          ".B review\n"
	          "waits for a person to approve, then pushes.\n"
	          ".B auto\n"
	          "approves and pushes without a person when the verified tests pass, the\n"
	          "output contract holds and no policy finding is above\n"
	          ".BR warn ;\n"
	          "otherwise the task waits as under\n"
	          ".BR review .\n"
	          ".B auto\\-push\n"
	          "pushes the branch as the gate opens, under the same conditions, and the task\n"
	          "waits at the gate: a person's approve then opens the pull request.\n"
	          ".B never\n"
	          "keeps the branch in paddock's mirror: approving records the decision and\n"
	          "pushes nothing.\n"
	          "A recipe's\n"
	          ".B approval\n"
	          "replaces this one for its tasks, and a task may ask for a narrower mode\n"
	          "(in the order never, review, auto-push, auto), never a wider one.\n"
	          ".B auto\n"
	          "and\n"
	          ".B auto\\-push\n"
	          "need a test command: a repository without\n"
	          ".B test\n"
	          "is refused.\n" },
	{ .section = "repo", .key = "confirm-over", .type = KT_CUSTOM,
	  .set = config_set_confirm_over,
	  .doc = "US dollars",
	  .def = "none",
	  .help = "A task whose estimated cost is over this amount waits in\n"
	          ".B queued\n"
	          "(\\(lqneeds confirmation\\(rq) until a person confirms it with\n"
	          ".BR \"paddock confirm\" ,\n"
	          "the API or the dashboard.\n"
	          "The estimate is the mean cost of the ended tasks of the same recipe, else the\n"
	          "task's budget, else\n"
	          ".BR limits.budget .\n" },
	{ .section = "repo", .key = "fix-rounds", .type = KT_CUSTOM,
	  .set = config_set_fix_rounds,
	  .doc = "integer, 0 to 20",
	  .def = "0",
	  .help = "When the verified tests fail after the agent's round, the agent gets the\n"
	          "failing tests' names and the tail of their output as its next prompt, in the\n"
	          "same conversation, up to this many times, before the task fails.\n"
	          "Each try is a round of its own, with its diff and log.\n" },
	{ .section = "repo", .key = "gate-reminder", .type = KT_DURATION,
	  .off = REPO(gate_reminder), .none = KD_ZERO,
	  .doc = "duration, or 0",
	  .def = "paddock.gate-reminder",
	  .help = "The repo's own\n"
	          ".BR paddock.gate-reminder :\n"
	          "how long its tasks wait at review for a person between reminders;\n"
	          ".B 0\n"
	          "sends none for this repo.\n" },
	{ .section = "repo", .key = "max-at-review", .type = KT_INT,
	  .off = REPO(max_at_review), .lo = 0, .hi = 100000,
	  .def = "paddock.max-at-review",
	  .help = "The repo's own\n"
	          ".BR paddock.max-at-review :\n"
	          "while this many of its tasks wait at review for a person, its queued tasks\n"
	          "stay queued (other repos' tasks start);\n"
	          ".B 0\n"
	          "is no limit for this repo.\n" },
	/* [agent] */
	{ .section = "agent", .key = "command", .type = KT_CUSTOM,
	  .off = AGENT(command), .set = config_set_agent_command,
	  .doc = "command line",
	  .def = "required but for a ready-made agent",
	  .help = "The agent's command, run in the task's sandbox, in\n"
	          ".I /work\n"
	          "on the task's branch, with\n"
	          ".B PADDOCK_STEP=agent\n"
	          "in its environment.\n"
	          "The task text is in the file named by\n"
	          ".B PADDOCK_PROMPT_FILE\n"
	          ".RI ( /paddock/prompt ),\n"
	          "and the task id in\n"
	          ".BR PADDOCK_TASK_ID .\n"
	          "It is split into words, but no shell runs it, and the words\n"
	          ".BR {prompt} ,\n"
	          ".B {session}\n"
	          "and\n"
	          ".B {model}\n"
	          "in it are replaced; see\n"
	          ".B AGENT COMMANDS\n"
	          "for how, for the host files it may name, and for what ends a round.\n" },
	{ .section = "agent", .key = "resume", .type = KT_CUSTOM,
	  .off = AGENT(resume), .set = config_set_agent_command,
	  .doc = "command line",
	  .def = "the command",
	  .help = "The command for later rounds, run when a reviewer asks for changes, in the\n"
	          "same sandbox (or a rebuilt one, see\n"
	          ".BR paddock.gate\\-timeout ),\n"
	          "with the reviewer's notes in the file named by\n"
	          ".B PADDOCK_PROMPT_FILE\n"
	          "and\n"
	          ".B PADDOCK_ROUND\n"
	          "set to 2 or more.\n"
	          "It is split and run as\n"
	          ".B command\n"
	          "is; its script is shown to the sandbox, and the other host files it names\n"
	          "must be in\n"
	          ".BR files ,\n"
	          "the same way.\n"
	          "Use it to continue the agent's conversation, for example with an option that\n"
	          "resumes the last session, or with\n"
	          ".BR {session} .\n"
	          "Without it,\n"
	          ".B command\n"
	          "runs again.\n" },
	{ .section = "agent", .key = "files", .type = KT_CUSTOM,
	  .set = config_set_agent_files,
	  .doc = "absolute paths, may be repeated",
	  .def = "none",
	  .help = "Host files shown read-only to the agent's sandbox at the same path, besides\n"
	          "its script (each copied in when the sandbox is made, at most\n"
	          ".B limits.disk\n"
	          "in size): settings or data the agent reads, and every host file that\n"
	          ".B command\n"
	          "or\n"
	          ".B resume\n"
	          "names.\n"
	          "One value may hold several paths, split as\n"
	          ".B command\n"
	          "is (quote a path with spaces).\n"
	          "Each must be the absolute, normalised path of a regular file outside\n"
	          ".IR /proc ,\n"
	          ".I /dev\n"
	          "and\n"
	          ".IR /sys ;\n"
	          ".B paddock config check\n"
	          "and the task's preparing step refuse one that is missing or not a regular\n"
	          "file.\n" },
	{ .section = "agent", .key = "kind", .type = KT_CUSTOM,
	  .set = config_set_agent_kind,
	  .doc = "script, claude, codex, pi or opencode",
	  .def = "script",
	  .help = "How the agent is driven and how its output is read.\n"
	          "A\n"
	          ".B script\n"
	          "is judged by its exit status alone.\n"
	          "The other kinds are the agents of\n"
	          ".BR \"READY-MADE AGENTS\" ,\n"
	          "whatever the section's name: their JSON output tells whether the round\n"
	          "succeeded (an agent that exits 0 after a failed model call has failed), why\n"
	          "it failed (the reasons\n"
	          ".BR model\\-auth ,\n"
	          ".BR rate\\-limit ,\n"
	          ".BR overloaded ,\n"
	          ".B context\n"
	          "and\n"
	          ".B model\n"
	          "for a model call,\n"
	          ".B tool\n"
	          "for the agent or its tools; see\n"
	          ".BR \"paddock show\" ),\n"
	          "the session id that\n"
	          ".B {session}\n"
	          "gives to the next round, and its final message, which is the round's summary\n"
	          "when it wrote no summary file.\n"
	          "Before it runs,\n"
	          ".B paddock\n"
	          "writes the settings file of its kind in its home, with the port of its\n"
	          "endpoint and its model, and sets the variables of its kind.\n" },
	{ .section = "agent", .key = "endpoint", .type = KT_WORD,
	  .off = AGENT(endpoint),
	  .doc = "endpoint name",
	  .def = "none",
	  .help = "The model endpoint the agent uses, an\n"
	          ".BI \"[endpoint \\(dq\" name \\(dq]\n"
	          "section or a ready-made one\n"
	          ".RB ( anthropic ,\n"
	          ".BR openai ).\n"
	          "The settings file of its kind and, ahead of the other endpoints of the same\n"
	          "kind,\n"
	          ".B ANTHROPIC_BASE_URL\n"
	          "or\n"
	          ".B OPENAI_BASE_URL\n"
	          "point there (see\n"
	          ".BR EGRESS ),\n"
	          "and a pause of that endpoint holds the agent's queued tasks back.\n"
	          "Every endpoint is reachable from every agent's sandbox all the same.\n" },
	{ .section = "agent", .key = "model", .type = KT_WORD,
	  .off = AGENT(model),
	  .def = "none",
	  .help = "The model, given to\n"
	          ".B {model}\n"
	          "and written into the settings file of the kinds\n"
	          ".BR codex ,\n"
	          ".B pi\n"
	          "and\n"
	          ".BR opencode ;\n"
	          "one word that does not start with\n"
	          ".BR \\- ,\n"
	          "such as\n"
	          ".BR claude\\-sonnet\\-4\\-5 .\n"
	          "Without it,\n"
	          ".B {model}\n"
	          "is left out and the agent uses its own default\n"
	          "(those settings files name\n"
	          ".B claude\\-sonnet\\-4\\-5\n"
	          "or\n"
	          ".BR gpt\\-5.5 ).\n" },
	{ .section = "agent", .key = "package", .type = KT_WORD,
	  .off = AGENT(package),
	  .doc = "npm package",
	  .def = "none",
	  .help = "What\n"
	          ".B paddock agent install\n"
	          ".I name\n"
	          "installs with\n"
	          ".BR npm (1)\n"
	          "into the data directory, best with a pinned version, such as\n"
	          ".BR @anthropic\\-ai/claude\\-code@2.1.332 :\n"
	          "the output that\n"
	          ".B paddock\n"
	          "reads may change from one version to the next.\n"
	          "The sandbox sees the installed package read-only at\n"
	          ".IR /opt/paddock/agent ,\n"
	          "with its\n"
	          ".I node_modules/.bin\n"
	          "first in\n"
	          ".BR PATH .\n"
	          "When an agent with a package that is not installed fails, its error says to\n"
	          "install it.\n" },
	/* [recipe] */
	{ .section = "recipe", .key = "prompt", .type = KT_TEXT,
	  .off = RECIPE(prompt),
	  .doc = "text",
	  .help = "The task text.\n"
	          "Each\n"
	          ".BI { name }\n"
	          "where\n"
	          ".I name\n"
	          "is one of the recipe's inputs becomes the value given with\n"
	          ".B paddock add \\-\\-input\n"
	          ".IB name = value\n"
	          "(other braces stay as they are).\n"
	          "Write a long prompt on one line, or with\n"
	          ".B \\en\n"
	          "for new lines, as git-config values are written.\n" },
	{ .section = "recipe", .key = "description", .type = KT_TEXT,
	  .off = RECIPE(description),
	  .doc = "text",
	  .def = "none",
	  .help = "One line that\n"
	          ".B paddock recipe list\n"
	          "and the dashboard's new-task form show.\n" },
	{ .section = "recipe", .key = "input", .type = KT_CUSTOM,
	  .set = config_set_recipe_input,
	  .doc = "name, or name: what to give; may be repeated",
	  .def = "none",
	  .help = "An input of the recipe, asked for in this order.\n"
	          "A task of the recipe must give every input, and no other.\n"
	          "The name is lower-case letters, digits,\n"
	          ".B \\-\n"
	          "and\n"
	          ".BR _ .\n" },
	{ .section = "recipe", .key = "repo", .type = KT_WORD,
	  .off = RECIPE(repo),
	  .def = "none",
	  .help = "The repository its tasks work on when the task names none.\n" },
	{ .section = "recipe", .key = "agent", .type = KT_WORD,
	  .off = RECIPE(agent),
	  .def = "none",
	  .help = "The agent of its tasks when the task names none.\n" },
	{ .section = "recipe", .key = "base", .type = KT_WORD,
	  .off = RECIPE(base),
	  .doc = "ref",
	  .def = "the repository's branch",
	  .help = "What its tasks start from, as\n"
	          ".B paddock add \\-\\-base\n"
	          "takes it; may use the recipe's inputs, such as\n"
	          ".BR refs/pull/{pr}/head .\n" },
	{ .section = "recipe", .key = "test", .type = KT_OPT_TEXT,
	  .off = RECIPE(test),
	  .doc = "shell command",
	  .def = "the repository's test",
	  .help = "The test command of its tasks, in place of the repository's.\n" },
	{ .section = "recipe", .key = "budget", .type = KT_CUSTOM,
	  .set = config_set_recipe_budget,
	  .doc = "US dollars",
	  .def = "limits.budget",
	  .help = "The budget of each of its tasks.\n" },
	{ .section = "recipe", .key = "timeout", .type = KT_DURATION,
	  .off = RECIPE(timeout),
	  .doc = "duration",
	  .def = "limits.timeout",
	  .help = "The time limit of each of its tasks' rounds.\n" },
	{ .section = "recipe", .key = "approval", .type = KT_CUSTOM,
	  .set = config_set_approval,
	  .doc = "review, auto, auto-push or never",
	  .def = "the repository's",
	  .help = "The approval mode of its tasks, in place of the repository's\n"
	          ".BR approval .\n" },
	{ .section = "recipe", .key = "confirm-over", .type = KT_CUSTOM,
	  .set = config_set_confirm_over,
	  .doc = "US dollars",
	  .def = "the repository's",
	  .help = "As the repository's\n"
	          ".BR confirm\\-over ,\n"
	          "for its tasks.\n" },
	{ .section = "recipe", .key = "fix-rounds", .type = KT_CUSTOM,
	  .set = config_set_fix_rounds,
	  .doc = "integer, 0 to 20",
	  .def = "the repository's",
	  .help = "As the repository's\n"
	          ".BR fix\\-rounds ,\n"
	          "for its tasks.\n" },
	{ .section = "recipe", .key = "contract", .type = KT_CUSTOM,
	  .set = config_set_recipe_contract,
	  .doc = "clause, may be repeated",
	  .def = "a change, and the tests pass",
	  .help = "What must be true of a round for it to reach the gate (see\n"
	          ".BR paddock (1),\n"
	          "section\n"
	          ".BR RECIPES ):\n"
	          ".B change\n"
	          "(it changed something),\n"
	          ".B no\\-change\n"
	          "(it changed nothing),\n"
	          ".B tests\n"
	          "(the verified tests pass),\n"
	          ".B summary\n"
	          "(the agent wrote one),\n"
	          ".BI changed \" glob\\fR...\"\n"
	          "(a changed path matches one of the globs),\n"
	          ".BI file \" path\"\n"
	          "(the round's tree has that file),\n"
	          ".BI mentions \" text\"\n"
	          "(the summary mentions it; may use the inputs).\n"
	          "An empty value drops the clauses set before it.\n"
	          "Without\n"
	          ".BR tests ,\n"
	          "failing tests do not stop a task: it reaches the gate, which shows them.\n" },
	/* [endpoint] */
	{ .section = "endpoint", .key = "kind", .type = KT_CUSTOM,
	  .set = config_set_endpoint_kind,
	  .doc = "anthropic or openai",
	  .def = "openai",
	  .help = "The API:\n"
	          ".B anthropic\n"
	          "for Anthropic's Messages API,\n"
	          ".B openai\n"
	          "for OpenAI's API and the servers that speak it (such as llama.cpp, vLLM,\n"
	          "Ollama or LiteLLM).\n"
	          "It decides the paths that are forwarded, the header that carries the key\n"
	          ".RB ( x\\-api\\-key\n"
	          "or\n"
	          ".BR \"Authorization: Bearer\" )\n"
	          "and the variables that name the endpoint in the sandbox.\n" },
	{ .section = "endpoint", .key = "upstream", .type = KT_CUSTOM,
	  .set = config_set_upstream,
	  .doc = "http or https URL",
	  .help = "Where the requests go.\n"
	          "The path that the agent asked for is appended, so give the base without\n"
	          ".BR /v1 :\n"
	          ".BR https://api.anthropic.com ,\n"
	          ".BR http://10.1.2.3:8000 .\n"
	          "It may be an internal address (a model server on the local network);\n"
	          "over\n"
	          ".B http://\n"
	          "the key travels in the clear.\n" },
	{ .section = "endpoint", .key = "key-env", .type = KT_CUSTOM,
	  .set = config_set_key_env,
	  .doc = "variable name, or empty",
	  .def = "none",
	  .help = "The variable in\n"
	          ".BR paddock 's\n"
	          "environment that holds the key\n"
	          ".RB ( ANTHROPIC_API_KEY\n"
	          "and\n"
	          ".B OPENAI_API_KEY\n"
	          "for the ready-made endpoints); empty for none, so that a ready-made\n"
	          "endpoint pointed at a local server needs no key.\n"
	          "Name the variable, never the key itself: a value that is not a variable's\n"
	          "name, or that looks like a key, is refused without being shown.\n" },
	{ .section = "endpoint", .key = "key-file", .type = KT_PATH,
	  .off = ENDPOINT(key_file),
	  .def = "none",
	  .help = "A file whose first line is the key; it wins over\n"
	          ".BR key\\-env .\n"
	          "It is read by\n"
	          ".B paddock\n"
	          "(as root) each time a task's gateway starts, so it can be readable by root\n"
	          "alone.\n"
	          ".IP\n"
	          "An endpoint with neither sends requests without a key: right for a local\n"
	          "server that needs none.\n"
	          "One whose variable is not set, or whose file cannot be read or is empty, has\n"
	          "its key missing:\n"
	          ".B paddock serve\n"
	          "says so when it starts, naming the variable or file, and the gateway answers\n"
	          "the agent's first model request there with 401 and those words itself,\n"
	          "stops the agent, and the task fails at running with the reason\n"
	          ".BR model\\-auth .\n" },
	{ .section = "endpoint", .key = "port", .type = KT_PORT,
	  .off = ENDPOINT(port),
	  .help = "The port on the sandbox's 127.0.0.1, such as 8083.\n"
	          "Each endpoint needs its own, other than\n"
	          ".BR gateway.proxy\\-port ;\n"
	          "the ready-made ones use 8081 and 8082.\n" },
	/* [price] */
	{ .section = "price", .key = "input", .type = KT_PRICE,
	  .off = PRICE(input),
	  .def = "0",
	  .help = "Input tokens other than those read from or written to the prompt cache.\n" },
	{ .section = "price", .key = "output", .type = KT_PRICE,
	  .off = PRICE(output),
	  .def = "0",
	  .help = "Output tokens, the model's thinking included.\n" },
	{ .section = "price", .key = "cache-read", .type = KT_PRICE,
	  .off = PRICE(cache_read),
	  .def = "0",
	  .help = "Input tokens read from the prompt cache.\n" },
	{ .section = "price", .key = "cache-write", .type = KT_PRICE,
	  .off = PRICE(cache_write),
	  .def = "0",
	  .help = "Input tokens written to the prompt cache.\n" },
	/* [gateway] */
	{ .section = "gateway", .key = "hosts-file", .type = KT_PATH,
	  .off = CFG(gw_hosts_file),
	  .def = "none",
	  .help = "Names that the gateway resolves itself, before DNS, in the syntax of\n"
	          ".BR hosts (5):\n"
	          "an address, then names, one address a line;\n"
	          ".B #\n"
	          "starts a comment.\n"
	          "It applies to the proxy's hosts and to the endpoints' upstreams.\n"
	          "It is read each time a task's gateway starts; a file that cannot be read\n"
	          "fails the task at preparing.\n" },
	{ .section = "gateway", .key = "dns", .type = KT_BOOL,
	  .off = CFG(gw_dns),
	  .def = "true",
	  .help = "Looks up names that the hosts file does not list with the host's resolver.\n"
	          "With\n"
	          ".BR false ,\n"
	          "only the names in\n"
	          ".B hosts\\-file\n"
	          "(and IP addresses) can be reached.\n" },
	{ .section = "gateway", .key = "ca-file", .type = KT_PATH,
	  .off = CFG(gw_ca_file),
	  .def = "the system's",
	  .help = "The CA certificates, in PEM, that the TLS certificates of the endpoints'\n"
	          "https upstreams are checked against, for an upstream behind a company CA.\n"
	          "The proxy does not look into TLS: a tunnel goes from the sandbox to the host\n"
	          "it named.\n" },
	{ .section = "gateway", .key = "allow-address", .type = KT_CUSTOM,
	  .set = config_set_allow_address,
	  .doc = "address or CIDR, may be repeated",
	  .def = "none",
	  .help = "An internal address or range that the proxy may connect to all the same,\n"
	          "such as\n"
	          ".B 10.1.2.0/24\n"
	          "for a package mirror on the local network, or\n"
	          ".BR fd00::/8 .\n" },
	{ .section = "gateway", .key = "proxy-port", .type = KT_PORT,
	  .off = CFG(gw_proxy_port),
	  .def = "3128",
	  .help = "The proxy's port on the sandbox's 127.0.0.1.\n" },
	{ .section = "gateway", .key = "max-body", .type = KT_SIZE,
	  .off = CFG(gw_max_body), .lo = 1024,
	  .def = "32m",
	  .help = "The largest request body that the gateway takes, for a model endpoint or a\n"
	          "plain\n"
	          ".B http://\n"
	          "request through the proxy; a larger one is answered with 413.\n" },
	{ .section = "gateway", .key = "max-tunnels", .type = KT_INT,
	  .off = CFG(gw_max_tunnels), .lo = 1, .hi = 1024,
	  .def = "32",
	  .help = "Connections through the proxy open at once, per task; the next one is\n"
	          "answered with 429.\n" },
	{ .section = "gateway", .key = "tunnel-idle", .type = KT_DURATION,
	  .off = CFG(gw_tunnel_idle), .none = KD_ZERO,
	  .bad = N_("gateway.tunnel-idle: '%s' is not a duration such as 10m or 90s (0 for no limit)"),
	  .doc = "duration, or 0",
	  .def = "10m",
	  .help = "A tunnel through the proxy that moves no byte either way for this long is\n"
	          "closed, so that forgotten connections do not hold\n"
	          ".B max\\-tunnels\n"
	          "for good; its record says so.\n" },
	{ .section = "gateway", .key = "network", .type = KT_CUSTOM,
	  .set = config_set_network,
	  .doc = "auto, namespace or bridge",
	  .def = "auto",
	  .help = "How a sandbox reaches its gateway.\n"
	          ".B namespace\n"
	          "makes a network namespace holding only\n"
	          ".B lo\n"
	          "for each sandbox, with the gateway's listeners on its 127.0.0.1;\n"
	          "a sandbox joins it.\n"
	          ".B bridge\n"
	          "puts the gateway's listeners in a new folder under\n"
	          ".I /tmp\n"
	          "as unix sockets, readable only by\n"
	          ".B sandbox.uid\n"
	          "and root; bubblewrap gives the sandbox a namespace of its own\n"
	          "(only\n"
	          ".BR lo ),\n"
	          "the folder is shown read-only at\n"
	          ".IR /paddock/gateway ,\n"
	          "and\n"
	          ".BR paddock\\-bridge ,\n"
	          "run before each command in the sandbox, relays the same 127.0.0.1 ports to\n"
	          "those sockets.\n"
	          "The policy, the records and the sandbox's view are the same either way.\n"
	          ".B auto\n"
	          "uses the namespace, and the bridge where none can be made (a container\n"
	          "whose seccomp profile forbids new network namespaces); the task log says so.\n" },
	{ .section = "gateway", .key = "uid", .type = KT_CUSTOM,
	  .set = config_set_gw_ugid,
	  .doc = "integer, 1 to 4294967294",
	  .def = "64101",
	  .help = "The host uid that a task's gateway runs as once it has read the keys and\n"
	          "opened its sockets, when\n"
	          ".B paddock\n"
	          "runs as root (as another user, the gateway stays that user's).\n"
	          "It must not be\n"
	          ".BR sandbox.uid :\n"
	          "the sandbox could then signal the process that holds the keys.\n"
	          "Choose one that no account uses, or make an account named\n"
	          ".B paddock\\-gateway\n"
	          "with it;\n"
	          ".B paddock config check\n"
	          "warns when another account in\n"
	          ".I /etc/passwd\n"
	          "has it.\n" },
	{ .section = "gateway", .key = "gid", .type = KT_CUSTOM,
	  .set = config_set_gw_ugid,
	  .doc = "integer, 1 to 4294967294",
	  .def = "64101",
	  .help = "The host gid that a task's gateway runs as, chosen as\n"
	          ".B uid\n"
	          "is; not\n"
	          ".BR sandbox.gid .\n" },
	/* [webhook] */
	{ .section = "webhook", .key = "url", .type = KT_CUSTOM,
	  .set = config_set_webhook_url,
	  .doc = "http or https URL",
	  .help = "Where the POSTs go, such as\n"
	          ".BR https://chat.example.com/hooks/paddock .\n"
	          "It is sent as written, query included; messages show only its scheme, host\n"
	          "and port, as a chat's URL often holds its own secret.\n"
	          "Redirects are not followed: a 3xx answer is a failed attempt.\n" },
	{ .section = "webhook", .key = "secret-env", .type = KT_ENV,
	  .off = CFG(wh_secret_env),
	  .def = "PADDOCK_WEBHOOK_SECRET",
	  .help = "The variable in the environment of the process that runs the scheduler\n"
	          ".RB ( \"paddock serve\" ,\n"
	          "or the dashboard) that holds the secret the body is signed with.\n"
	          "When it is unset or empty, the POSTs carry no signature, and\n"
	          ".B paddock\n"
	          "says so once when the scheduler starts.\n" },
	{ .section = "webhook", .key = "secret-file", .type = KT_PATH,
	  .off = CFG(wh_secret_file),
	  .def = "none",
	  .help = "A file that holds the secret instead (a trailing newline is not part of\n"
	          "it); not together with\n"
	          ".BR secret\\-env .\n"
	          "It is read once when the scheduler starts; when it cannot be read, nothing\n"
	          "is sent, unsigned or not: the deliveries stay queued until it can and\n"
	          ".B paddock\n"
	          "is started again.\n" },
	{ .section = "webhook", .key = "events", .type = KT_CUSTOM,
	  .set = config_set_webhook_events,
	  .doc = "review, failed, done, cancelled, rejected, lost, agent-finished, pull-request-failed, gate-reminder, all",
	  .def = "all",
	  .help = "The events that are sent: one per line\n"
	          ".RB ( \"events = review\" ,\n"
	          "then\n"
	          ".BR \"events = done\" ),\n"
	          "or several separated by commas\n"
	          ".RB ( \"events = failed, done\" ).\n"
	          ".B review\n"
	          "is a gate that opens (each round),\n"
	          ".B agent\\-finished\n"
	          "a round's agent that ended (its tests come next),\n"
	          ".B pull\\-request\\-failed\n"
	          "a done task's pull request that failed to open (after the approve, and\n"
	          "after each of the scheduler's tries; see\n"
	          ".BR paddock (1),\n"
	          "\"A pull request that failed\"),\n"
	          ".B gate\\-reminder\n"
	          "a task that still waits at review for a person (see\n"
	          ".BR paddock.gate-reminder ),\n"
	          "the others the ends.\n" },
	{ .section = "webhook", .key = "timeout", .type = KT_DURATION,
	  .off = CFG(wh_timeout), .hi = 600,
	  .bad = N_("webhook.timeout: '%s' is not a duration from 1s to 10m (for example 10s)"),
	  .doc = "duration, 1s to 10m",
	  .def = "10s",
	  .help = "How long one attempt may take, connection included.\n" },
	{ .section = "webhook", .key = "attempts", .type = KT_INT,
	  .off = CFG(wh_attempts), .lo = 1, .hi = 20,
	  .def = "8",
	  .help = "Tries before a delivery is given up.\n" },
	/* [github] */
	{ .section = "github", .key = "poll", .type = KT_DURATION,
	  .off = CFG(github_poll), .hi = 86400, .none = KD_ZERO,
	  .bad = N_("github.poll: '%s' is not 0 or a duration from 1s to 24h (for example 60s)"),
	  .doc = "duration, or 0",
	  .def = "60s",
	  .help = "How often\n"
	          ".B paddock serve\n"
	          "reads the issues and pull requests of the repositories that follow GitHub.\n"
	          "An unchanged list costs no rate limit (conditional requests).\n"
	          ".B 0\n"
	          "reads them only when a webhook arrives (or\n"
	          ".B paddock github sync\n"
	          "runs); with a webhook secret set, serve still updates paddock's comments and\n"
	          "answers every 10 seconds.\n" },
	{ .section = "github", .key = "webhook-secret-env", .type = KT_ENV,
	  .off = CFG(github_secret_env),
	  .def = "none",
	  .help = "The variable in the environment of\n"
	          ".B paddock serve\n"
	          "that holds the secret of GitHub's webhook (the one given on GitHub);\n"
	          ".B POST /github/webhook\n"
	          "refuses every delivery whose\n"
	          ".B X\\-Hub\\-Signature\\-256\n"
	          "is not the HMAC-SHA256 of its body with it.\n"
	          "Without it (or\n"
	          ".BR webhook\\-secret\\-file ),\n"
	          "the route answers 404.\n" },
	{ .section = "github", .key = "webhook-secret-file", .type = KT_PATH,
	  .off = CFG(github_secret_file),
	  .def = "none",
	  .help = "A file that holds that secret instead (a trailing newline is not part of it).\n" },
	/* [api] */
	{ .section = "api", .key = "listen", .type = KT_CUSTOM,
	  .set = config_set_listen,
	  .doc = "ADDR:PORT, or PORT",
	  .def = "none",
	  .help = "Where\n"
	          ".B paddock serve\n"
	          "(and the dashboard) answer the API when\n"
	          ".B \\-\\-listen\n"
	          "is not given: an address and a port, such as\n"
	          ".BR 127.0.0.1:8700 ,\n"
	          "or a port alone, on the loopback address.\n"
	          "Without a\n"
	          ".B [token]\n"
	          "section the API asks for no token and answers only on a loopback address.\n" },
	{ .section = "api", .key = "metrics-listen", .type = KT_CUSTOM,
	  .set = config_set_metrics_listen,
	  .doc = "ADDR:PORT",
	  .def = "none",
	  .help = "A second listener of\n"
	          ".B paddock serve\n"
	          "that answers only\n"
	          ".B GET /metrics\n"
	          "(the Prometheus text format; see\n"
	          ".BR paddock\\-api (7),\n"
	          "METRICS), without a token, for a Prometheus that scrapes it; every other\n"
	          "path is 404, every other method 405.\n"
	          "Since it asks for no token, bind it to a loopback address or to an address on\n"
	          "a network only trusted hosts reach, such as\n"
	          ".BR 127.0.0.1:9464 ;\n"
	          "its requests are screened as the API's are (a Host that is not this machine's\n"
	          "address or an\n"
	          ".B api.server\\-name\n"
	          "is refused).\n"
	          "With a token of role\n"
	          ".BR read ,\n"
	          "the API's own\n"
	          ".B GET /metrics\n"
	          "answers the same without this.\n" },
	{ .section = "api", .key = "max-queue", .type = KT_CUSTOM,
	  .set = config_set_max_queue,
	  .doc = "integer, 0 to 1000000",
	  .def = "0",
	  .help = "The queued tasks at which\n"
	          ".B POST /tasks\n"
	          "answers 429;\n"
	          ".B 0\n"
	          "means no limit.\n" },
	{ .section = "api", .key = "callback-allow", .type = KT_CUSTOM,
	  .set = config_set_callback_allow,
	  .doc = "URL pattern, one per line",
	  .def = "none",
	  .help = "A URL pattern that a task's\n"
	          ".B callback_url\n"
	          "must match, such as\n"
	          ".BR https://*.hooks.example.com/paddock/* ;\n"
	          "one per line.\n"
	          "Both are parsed as URLs and compared field by field: the same scheme; the\n"
	          "same host, or for a host\n"
	          ".BI *. name\n"
	          "one or more labels below\n"
	          ".I name\n"
	          "(not\n"
	          ".I name\n"
	          "itself;\n"
	          ".B *\n"
	          "stands nowhere else in a host); the same port (the scheme's default when\n"
	          "none is written); the path as\n"
	          ".BR fnmatch (3)\n"
	          "with\n"
	          ".BR FNM_PATHNAME ,\n"
	          "so that\n"
	          ".B *\n"
	          "matches within one segment, or anything below a last segment\n"
	          ".BR ** .\n"
	          "A pattern has no query, fragment or user name; a URL's query is not compared,\n"
	          "and a URL with a user name or a fragment is refused (see\n"
	          ".BR paddock (1),\n"
	          "SECURITY).\n"
	          "Without a pattern,\n"
	          ".B POST /tasks\n"
	          "refuses every\n"
	          ".BR callback_url .\n" },
	{ .section = "api", .key = "max-connections", .type = KT_INT,
	  .off = CFG(api_max_conns), .lo = 16, .hi = 65536,
	  .def = "1024",
	  .help = "Connections open at once.\n"
	          "When they are all open, the oldest connection that has had no request\n"
	          "taken (one still sending its first body too) is closed to make room for\n"
	          "a new one.\n" },
	{ .section = "api", .key = "max-connections-per-address", .type = KT_INT,
	  .off = CFG(api_max_conns_addr), .lo = 1, .hi = 65536,
	  .def = "64",
	  .help = "Connections open at once from one address that is not loopback; more\n"
	          "are refused.\n" },
	{ .section = "api", .key = "header-timeout", .type = KT_DURATION,
	  .off = CFG(api_header_timeout), .hi = 600,
	  .bad = N_("api.header-timeout: '%s' is not a duration from 1s to 10m (for example 10s)"),
	  .doc = "duration, 1s to 10m",
	  .def = "10s",
	  .help = "How long a connection has to send a whole request (its headers); after\n"
	          "a request, an idle connection is kept for 60 seconds.\n"
	          "A connection whose requests were all refused (no token, a bad signature)\n"
	          "is closed this long after it opened.\n" },
	{ .section = "api", .key = "body-timeout", .type = KT_DURATION,
	  .off = CFG(api_body_timeout), .hi = 3600,
	  .bad = N_("api.body-timeout: '%s' is not a duration from 1s to 1h (for example 30s)"),
	  .doc = "duration, 1s to 1h",
	  .def = "30s",
	  .help = "How long a request has to send its whole body once its headers came;\n"
	          "then the connection is closed unanswered.\n" },
	{ .section = "api", .key = "server-name", .type = KT_CUSTOM,
	  .set = config_set_server_name,
	  .doc = "host name, one per line",
	  .def = "none",
	  .help = "A name (or address) the API answers to in a request's\n"
	          ".B Host\n"
	          "header, such as the name of a proxy in front of it; one per line.\n"
	          "Loopback names\n"
	          ".RB ( localhost ,\n"
	          ".BR 127.\\fIx\\fP.\\fIx\\fP.\\fIx\\fP ,\n"
	          ".BR [::1] )\n"
	          "the address of\n"
	          ".B listen\n"
	          "and the addresses of this machine's interfaces\n"
	          "are always answered; any other is refused with 421\n"
	          "(see\n"
	          ".BR paddock\\-api (7)).\n" },
	{ .section = "api", .key = "max-body", .type = KT_SIZE,
	  .off = CFG(api_max_body), .lo = 1024,
	  .def = "1m",
	  .help = "The largest request body; a larger one is answered with 413.\n" },
	/* [token] */
	{ .section = "token", .key = "value-env", .type = KT_ENV,
	  .off = TOKEN(value_env),
	  .def = "none",
	  .help = "The variable, in the environment of\n"
	          ".BR \"paddock serve\" ,\n"
	          "that holds the token.\n"
	          "Name the variable, never the token itself.\n" },
	{ .section = "token", .key = "value-file", .type = KT_PATH,
	  .off = TOKEN(value_file),
	  .def = "none",
	  .help = "A file that holds the token instead (a trailing newline is not part of it);\n"
	          "it wins over\n"
	          ".BR value\\-env .\n" },
	{ .section = "token", .key = "role", .type = KT_CUSTOM,
	  .set = config_set_token_role,
	  .doc = "read, submit, review or admin",
	  .def = "admin (read with read-only = true)",
	  .help = "What the token may do, each role allowing what the one before allows:\n"
	          ".B read\n"
	          "may only\n"
	          ".BR GET ;\n"
	          ".B submit\n"
	          "may also queue tasks and follow-ups and cancel the tasks it queued;\n"
	          ".B review\n"
	          "may also decide gates (approve, push, request changes, reject, pick,\n"
	          "confirm) and cancel any task;\n"
	          ".B admin\n"
	          "may do everything.\n"
	          "A request its role does not allow is answered with 403; it changes nothing\n"
	          "but the task's history, where the refusal is recorded\n"
	          "(see\n"
	          ".BR paddock\\-api (7),\n"
	          ".BR AUTHORIZATION ).\n"
	          ".B paddock serve\n"
	          "logs a token's new role when the configuration is read again (SIGHUP).\n" },
	{ .section = "token", .key = "read-only", .type = KT_BOOL,
	  .off = TOKEN(read_only),
	  .def = "false",
	  .help = "The old spelling of\n"
	          ".BR \"role = read\" :\n"
	          "the token may only\n"
	          ".BR GET .\n"
	          "A\n"
	          ".B role\n"
	          "given too wins.\n" },
	/* [remote] */
	{ .section = "remote", .key = "server", .type = KT_TEXT,
	  .off = CFG(remote_server),
	  .doc = "URL",
	  .def = "none",
	  .help = "The URL of the paddock API that the verbs talk to, such as\n"
	          ".BR https://paddock.example.com/ ,\n"
	          "when neither\n"
	          ".B \\-\\-server\n"
	          "nor\n"
	          ".B PADDOCK_SERVER\n"
	          "gives one.\n"
	          "A token goes only over https, or over plain http to this machine.\n" },
	{ .section = "remote", .key = "token-file", .type = KT_PATH,
	  .off = CFG(remote_token_file),
	  .def = "none",
	  .help = "A file that holds the API token (its first line), when\n"
	          ".B PADDOCK_TOKEN\n"
	          "is not set.\n"
	          "It must be a regular file that neither its group nor others may read or\n"
	          "write (mode 0600), as ssh asks of a key; another is refused.\n" },
	/* [mcp] */
	{ .section = "mcp", .key = "role", .type = KT_CUSTOM,
	  .set = config_set_mcp_role,
	  .doc = "read, submit, review or admin",
	  .def = "submit",
	  .help = "What the tools of\n"
	          ".B paddock mcp\n"
	          "on this machine's store may do, as a token's role:\n"
	          ".B read\n"
	          "lists and reads tasks,\n"
	          ".B submit\n"
	          "also queues them,\n"
	          ".B review\n"
	          "also requests changes and approves.\n"
	          "The default keeps the gate a person's: an agent that queues work does not\n"
	          "decide it unless someone configured it so.\n"
	          ".B \\-\\-role\n"
	          "overrides it; with\n"
	          ".BR \\-\\-server ,\n"
	          "the token's role decides.\n" },
	/* [ui] */
	{ .section = "ui", .key = "theme", .type = KT_CUSTOM,
	  .set = config_set_theme,
	  .doc = "theme name",
	  .def = "dark",
	  .help = "The dashboard's theme:\n"
	          ".BR dark ,\n"
	          ".BR light ,\n"
	          ".BR high\\-contrast ,\n"
	          ".B mono\n"
	          "or a theme of the user's; see\n"
	          ".BR paddock (1),\n"
	          "section\n"
	          ".BR THEMES .\n"
	          "A name is up to 64 letters, digits,\n"
	          ".BR . ,\n"
	          ".B _\n"
	          "and\n"
	          ".BR \\- ,\n"
	          "starting with a letter or digit.\n"
	          ".B paddock config check\n"
	          "loads the theme as the dashboard does when it starts: one that cannot be\n"
	          "found or has an error is a problem there, as it stops the dashboard (exit\n"
	          "status 1).\n" },
	{ .section = "ui", .key = "notify-command", .type = KT_TEXT,
	  .off = CFG(notify_command),
	  .doc = "shell command",
	  .def = "none",
	  .help = "Run with\n"
	          ".B /bin/sh \\-c\n"
	          "by the dashboard when a task reaches review or fails, and at each reminder\n"
	          "of a task that still waits at review\n"
	          "(see\n"
	          ".BR paddock.gate-reminder ),\n"
	          "with\n"
	          ".B PADDOCK_EVENT\n"
	          ".RB ( review ,\n"
	          ".B failed\n"
	          "or\n"
	          ".BR gate-reminder )\n"
	          "and\n"
	          ".B PADDOCK_TASK_ID\n"
	          "in its environment and standard input and output on\n"
	          ".IR /dev/null ;\n"
	          "the dashboard does not wait for it.\n"
	          "For example\n"
	          ".RS\n"
	          ".PP\n"
	          ".EX\n"
	          "notify\\-command = notify\\-send paddock \\e\\(dq$PADDOCK_EVENT $PADDOCK_TASK_ID\\e\\(dq\n"
	          ".EE\n"
	          ".RE\n"
	          ".IP\n"
	          "(the quotes escaped, since the file's syntax takes plain double quotes away).\n"
	          "The terminal's bell rings either way.\n" },
};
const size_t config_nsections = sizeof config_sections / sizeof config_sections[0];
const size_t config_nkeys = sizeof config_keys / sizeof config_keys[0];
