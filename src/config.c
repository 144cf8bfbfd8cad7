#include "autoconfig.h"
#include "config.h"
#include "egress.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <git2.h>
#include <pthread.h>
#include <pwd.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent.h"
#include "buf.h"
#include "fsx.h"
#include "gitlib.h"
#include "i18n.h"
#include "recipe.h"
#include "sandbox.h"
#include "sanitize.h"
#include "suggest.h"
#include "units.h"
#include "urlmatch.h"

/* Largest config file read: far more than any real configuration. */
#define CONFIG_MAX_SIZE (1024 * 1024)

/* ---- problems: every error found, with its line ---- */

struct problem {
	int line;              /* 0: no line */
	size_t seq;            /* order found, to keep the sort stable */
	char *msg;
};

struct problems {
	struct problem *v;
	size_t n, cap;
};

static void problem_add(struct problems *ps, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void problem_add(struct problems *ps, int line, const char *fmt, ...)
{
	va_list ap;
	char *msg;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	msg = xmalloc((size_t)(n < 0 ? 0 : n) + 1);
	va_start(ap, fmt);
	vsnprintf(msg, (size_t)(n < 0 ? 0 : n) + 1, fmt, ap);
	va_end(ap);
	if (ps->n == ps->cap) {
		ps->cap = ps->cap ? ps->cap * 2 : 8;
		ps->v = xrealloc(ps->v, ps->cap * sizeof(*ps->v));
	}
	ps->v[ps->n].line = line;
	ps->v[ps->n].seq = ps->n;
	ps->v[ps->n].msg = msg;
	ps->n++;
}

static int problem_cmp(const void *a, const void *b)
{
	const struct problem *x = a, *y = b;
	/* Problems without a line go last. */
	long lx = x->line ? x->line : 0x7fffffffL;
	long ly = y->line ? y->line : 0x7fffffffL;
	if (lx != ly)
		return lx < ly ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void problems_free(struct problems *ps)
{
	size_t i;
	for (i = 0; i < ps->n; i++)
		free(ps->v[i].msg);
	free(ps->v);
	memset(ps, 0, sizeof(*ps));
}

/* ---- locating keys and section headers in the file text ----
 *
 * libgit2 gives entries without line numbers, so the file is scanned for
 * its section headers and keys, following git's rules: section and key
 * names are case-insensitive, a quoted subsection is case-sensitive, the
 * old [section.sub] form lowercases sub. */

struct spot {
	char *section;         /* lowercased; "" before any header */
	char *sub;             /* NULL when none */
	char *key;             /* lowercased; NULL for a header */
	int line;
};

struct spots {
	struct spot *v;
	size_t n, cap;
};

static void spots_add(struct spots *s, const char *section, const char *sub,
		      const char *key, size_t keylen, int line)
{
	struct spot *sp;
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 32;
		s->v = xrealloc(s->v, s->cap * sizeof(*s->v));
	}
	sp = &s->v[s->n++];
	sp->section = xstrdup(section);
	sp->sub = sub ? xstrdup(sub) : NULL;
	sp->key = key ? xstrndup(key, keylen) : NULL;
	if (sp->key) {
		char *k;
		for (k = sp->key; *k; k++)
			*k = (char)tolower((unsigned char)*k);
	}
	sp->line = line;
}

static void spots_free(struct spots *s)
{
	size_t i;
	for (i = 0; i < s->n; i++) {
		free(s->v[i].section);
		free(s->v[i].sub);
		free(s->v[i].key);
	}
	free(s->v);
	memset(s, 0, sizeof(*s));
}

/* Parses "[section]", "[section \"sub\"]" or "[section.sub]" at p;
 * returns the position after ']' or NULL when it is not a header. */
static const char *config_scan_header(const char *p, const char *end,
				      struct buf *section, struct buf *sub, int *has_sub)
{
	buf_reset(section);
	buf_reset(sub);
	*has_sub = 0;
	p++;    /* '[' */
	while (p < end && (isalnum((unsigned char)*p) || *p == '-' || *p == '.')) {
		if (*p == '.' && !*has_sub) {
			*has_sub = 1;
		} else if (*has_sub) {
			buf_addc(sub, (char)tolower((unsigned char)*p));
		} else {
			buf_addc(section, (char)tolower((unsigned char)*p));
		}
		p++;
	}
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if (p < end && *p == '"' && !*has_sub) {
		*has_sub = 1;
		p++;
		while (p < end && *p != '"') {
			if (*p == '\\' && p + 1 < end)
				p++;
			buf_addc(sub, *p++);
		}
		if (p < end)
			p++;
	}
	if (p < end && *p == ']')
		return p + 1;
	return NULL;
}

/* Records every header and key of text with its line. */
static void config_scan(const char *text, size_t len, struct spots *out)
{
	struct buf section = { 0 }, sub = { 0 };
	const char *p = text, *end = text + len;
	int line = 0, has_sub = 0, continued = 0;

	buf_adds(&section, "");
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		const char *q = p, *lend = eol ? eol : end;
		int in_quote = 0, backslashes = 0;

		line++;
		if (continued)
			goto value;   /* continuation of the previous value */
		while (q < lend && (*q == ' ' || *q == '\t'))
			q++;
		if (q < lend && *q == '[') {
			const char *after = config_scan_header(q, lend, &section, &sub, &has_sub);
			if (!after)
				goto next;
			spots_add(out, section.data, has_sub ? sub.data : NULL, NULL, 0, line);
			q = after;
			while (q < lend && (*q == ' ' || *q == '\t'))
				q++;
		}
		if (q < lend && isalpha((unsigned char)*q)) {
			const char *k = q;
			while (q < lend && (isalnum((unsigned char)*q) || *q == '-'))
				q++;
			spots_add(out, section.data, has_sub ? sub.data : NULL, k,
				  (size_t)(q - k), line);
		}
value:
		/* A value continues on the next line when this one ends with a
		 * backslash outside a comment. */
		continued = 0;
		for (; q < lend; q++) {
			if (*q == '\\') {
				backslashes++;
				continue;
			}
			if (*q == '"' && backslashes % 2 == 0)
				in_quote = !in_quote;
			else if ((*q == '#' || *q == ';') && !in_quote && backslashes % 2 == 0)
				break;
			backslashes = 0;
		}
		if (q == lend) {
			const char *t = lend;
			if (t > p && t[-1] == '\r')
				t--;
			continued = t > p && t[-1] == '\\' && backslashes % 2 == 1;
		}
next:
		p = eol ? eol + 1 : end;
	}
	buf_free(&section);
	buf_free(&sub);
}

static int config_sub_eq(const char *a, const char *b)
{
	if (!a || !b)
		return a == b;
	return strcmp(a, b) == 0;
}

/* Line of the n-th (from 1) occurrence of section.sub.key, or of the first
 * header of section.sub when key is NULL; 0 when not found. */
static int config_line(const struct spots *s, const char *section, const char *sub,
		       const char *key, int n)
{
	size_t i;
	for (i = 0; i < s->n; i++) {
		const struct spot *sp = &s->v[i];
		if (strcmp(sp->section, section) != 0 || !config_sub_eq(sp->sub, sub))
			continue;
		if (key ? (sp->key && strcmp(sp->key, key) == 0 && --n <= 0) : !sp->key)
			return sp->line;
	}
	/* A key that libgit2 saw but the scan did not: point at its section. */
	if (key)
		return config_line(s, section, sub, NULL, 1);
	return 0;
}

/* ---- defaults, lookups, additions ---- */

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

const char *config_repo_token(const struct repo_conf *r)
{
	const char *v = getenv(r->token_env ? r->token_env : "PADDOCK_GIT_TOKEN");
	return v && *v ? v : NULL;
}

int config_repo_github_follows(const struct repo_conf *r)
{
	if (!r->github_repo)
		return 0;
	if (r->github_follow >= 0)
		return r->github_follow;
	return r->github_issues || r->github_handle || r->ngithub_reviewers;
}

const char *config_repo_github_token(const struct repo_conf *r)
{
	const char *v = getenv(r->github_token_env ? r->github_token_env : "GITHUB_TOKEN");
	return v && *v ? v : NULL;
}

/* Defaults of the keys a repo section did not set. */
static void config_repo_defaults(struct repo_conf *r)
{
	if (!r->branch)
		r->branch = xstrdup("main");
	if (!r->branch_prefix)
		r->branch_prefix = xstrdup("paddock/");
	if (!r->max_file_size)
		r->max_file_size = 10ULL << 20;
}

char *config_default_path(void)
{
	const char *p = getenv("PADDOCK_CONFIG");
	const char *home;

	if (p && *p)
		return xstrdup(p);
	p = getenv("XDG_CONFIG_HOME");
	/* The XDG spec says to ignore a relative value. */
	if (p && p[0] == '/')
		return xasprintf("%s/paddock/config", p);
	home = getenv("HOME");
	if (!home || !*home) {
		struct passwd *pw = getpwuid(getuid());
		home = pw && pw->pw_dir ? pw->pw_dir : "/";
	}
	return xasprintf("%s/.config/paddock/config", home);
}

static char *config_dup_or_null(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

static void config_set_str(char **dst, const char *value)
{
	free(*dst);
	*dst = xstrdup(value);
}

static void config_strv_add(char ***v, size_t *n, const char *value)
{
	*v = xrealloc(*v, (*n + 1) * sizeof(**v));
	(*v)[(*n)++] = xstrdup(value);
}

/* The ready-made agents, endpoints and prices: data/builtin.conf, which
 * make turns into the C string config_builtin_text.  They are parsed once
 * per process, by the parser of the user's file, and every configuration
 * starts from a copy. */
#include "data/builtin-conf.h"
#include "data/recipes-conf.h"

static struct config builtin_conf;
static pthread_once_t builtin_once = PTHREAD_ONCE_INIT;
static void config_builtin_parse(void);
static void config_recipe_copy(struct recipe_conf *to, const struct recipe_conf *r);

static void config_add_builtins(struct config *c)
{
	pthread_once(&builtin_once, config_builtin_parse);
	const struct config *b = &builtin_conf;
	c->endpoints = xcalloc(b->nendpoints ? b->nendpoints : 1, sizeof *c->endpoints);
	for (size_t i = 0; i < b->nendpoints; i++) {
		struct endpoint_conf *ep = &c->endpoints[c->nendpoints++];
		*ep = b->endpoints[i];
		ep->name = xstrdup(ep->name);
		ep->upstream = config_dup_or_null(ep->upstream);
		ep->key_env = config_dup_or_null(ep->key_env);
		ep->key_file = config_dup_or_null(ep->key_file);
	}
	c->agents = xcalloc(b->nagents ? b->nagents : 1, sizeof *c->agents);
	for (size_t i = 0; i < b->nagents; i++) {
		struct agent_conf *a = &c->agents[c->nagents++];
		*a = b->agents[i];
		a->name = xstrdup(a->name);
		a->command = config_dup_or_null(a->command);
		a->resume = config_dup_or_null(a->resume);
		a->endpoint = config_dup_or_null(a->endpoint);
		a->package = config_dup_or_null(a->package);
		a->model = config_dup_or_null(a->model);
		a->files = NULL;
		a->nfiles = 0;
		for (size_t f = 0; f < b->agents[i].nfiles; f++)
			config_strv_add(&a->files, &a->nfiles, b->agents[i].files[f]);
	}
	c->prices = xcalloc(b->nprices ? b->nprices : 1, sizeof *c->prices);
	for (size_t i = 0; i < b->nprices; i++) {
		c->prices[i] = b->prices[i];
		c->prices[i].model = xstrdup(b->prices[i].model);
	}
	c->nprices = b->nprices;
	c->recipes = xcalloc(b->nrecipes ? b->nrecipes : 1, sizeof *c->recipes);
	for (size_t i = 0; i < b->nrecipes; i++)
		config_recipe_copy(&c->recipes[c->nrecipes++], &b->recipes[i]);
}

/* Half the online CPUs, rounded up: a task leaves room for its
 * neighbours on a shared host. */
static double config_default_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 1 ? (double)((n + 1) / 2) : 1;
}

void config_init_defaults(struct config *c)
{
	memset(c, 0, sizeof(*c));
	c->workers = 2;
	c->max_attempts = 3;
	c->limits.timeout = 30 * 60;
	c->limits.memory = 4ULL << 30;
	c->limits.pids = 512;
	c->limits.disk = 2ULL << 30;
	c->limits.output = 64ULL << 20;
	c->limits.bundle = 200ULL << 20;
	c->limits.cpus = config_default_cpus();
	c->limits.model_concurrency = 4;
	c->sandbox_backend = xstrdup("bwrap");
	c->sandbox_uid = 64100;
	c->sandbox_gid = 64100;
	c->gate_timeout = 24 * 3600;
	c->template_max_age = 7 * 24 * 3600;
	c->gw_dns = 1;
	c->gw_proxy_port = 3128;
	c->gw_tunnel_idle = 600;
	c->gw_uid = 64101;
	c->gw_gid = 64101;
	c->gw_max_body = 32ULL << 20;
	c->gw_max_tunnels = 32;
	c->api_max_body = 1ULL << 20;
	c->api_max_conns = 1024;
	c->api_max_conns_addr = 64;
	c->api_header_timeout = 10;
	c->api_body_timeout = 30;
	c->wh_events = CONFIG_WEBHOOK_ALL;
	c->wh_timeout = 10;
	c->wh_attempts = 8;
	c->github_poll = 60;
	config_add_builtins(c);
}

static void config_strv_free(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static void config_repo_free(struct repo_conf *r)
{
	free(r->name);
	free(r->url);
	free(r->branch);
	free(r->test);
	free(r->setup);
	free(r->push_url);
	free(r->token_env);
	free(r->ssh_key);
	free(r->ssh_known_hosts);
	free(r->branch_prefix);
	config_strv_free(r->protected_, r->nprotected);
	free(r->pull_request);
	free(r->github_repo);
	free(r->github_api);
	free(r->github_token_env);
	free(r->github_issues);
	free(r->github_handle);
	config_strv_free(r->github_reviewers, r->ngithub_reviewers);
	config_strv_free(r->deny, r->ndeny);
	config_strv_free(r->allow_hosts, r->nallow_hosts);
	config_strv_free(r->setup_allow_hosts, r->nsetup_allow_hosts);
	memset(r, 0, sizeof(*r));
}

static void config_recipe_free(struct recipe_conf *r)
{
	free(r->name);
	free(r->description);
	free(r->prompt);
	for (size_t i = 0; i < r->ninputs; i++) {
		free(r->inputs[i].name);
		free(r->inputs[i].help);
	}
	free(r->inputs);
	free(r->repo);
	free(r->agent);
	free(r->base);
	free(r->test);
	config_strv_free(r->contract, r->ncontract);
	memset(r, 0, sizeof *r);
}

/* A deep copy of r into *to (a ready-made recipe into a configuration). */
static void config_recipe_copy(struct recipe_conf *to, const struct recipe_conf *r)
{
	*to = *r;
	to->name = xstrdup(r->name);
	to->description = config_dup_or_null(r->description);
	to->prompt = config_dup_or_null(r->prompt);
	to->inputs = xcalloc(r->ninputs + 1, sizeof *to->inputs);
	for (size_t i = 0; i < r->ninputs; i++) {
		to->inputs[i].name = xstrdup(r->inputs[i].name);
		to->inputs[i].help = config_dup_or_null(r->inputs[i].help);
	}
	to->repo = config_dup_or_null(r->repo);
	to->agent = config_dup_or_null(r->agent);
	to->base = config_dup_or_null(r->base);
	to->test = config_dup_or_null(r->test);
	to->contract = NULL;
	to->ncontract = 0;
	for (size_t i = 0; i < r->ncontract; i++)
		config_strv_add(&to->contract, &to->ncontract, r->contract[i]);
}

static const char *const approval_names[] = { "never", "review", "auto-push", "auto" };

const char *config_approval_name(int mode)
{
	return mode >= 0 && mode < 4 ? approval_names[mode] : NULL;
}

int config_approval_parse(const char *name)
{
	for (int i = 0; name && i < 4; i++)
		if (!strcmp(approval_names[i], name))
			return i;
	return -1;
}

const char *config_recipe_text(const char *text)
{
	/* The ready-made recipes' descriptions and input hints, as
	 * data/recipes.conf has them (tests/i18n.test checks that each is
	 * here): the same words of a user's own recipe stay as written. */
	static const char *const ready_made[] = {
		N_("A bug report to a branch whose tests pass, with a regression test"),
		N_("the bug, as a user would report it"),
		N_("Check out a pull request's head, run its tests and review it, changing nothing"),
		N_("the pull request's number, or its branch or ref"),
		N_("Bump one package (npm, pip or a git submodule) and run the tests"),
		N_("the npm or pip package, or the path of a git submodule"),
	};
	if (!text)
		return NULL;
	for (size_t i = 0; i < sizeof ready_made / sizeof *ready_made; i++)
		if (!strcmp(ready_made[i], text))
			return _(ready_made[i]);
	return text;
}

const struct recipe_conf *config_find_recipe(const struct config *c, const char *name)
{
	for (size_t i = 0; name && i < c->nrecipes; i++)
		if (strcmp(c->recipes[i].name, name) == 0)
			return &c->recipes[i];
	return NULL;
}

const char *config_suggest_name(const struct config *c, const char *section, const char *name)
{
	struct suggest sg;
	suggest_init(&sg, name);
	if (!strcmp(section, "repo"))
		for (size_t i = 0; i < c->nrepos; i++)
			suggest_add(&sg, c->repos[i].name);
	else if (!strcmp(section, "agent"))
		for (size_t i = 0; i < c->nagents; i++)
			suggest_add(&sg, c->agents[i].name);
	else if (!strcmp(section, "recipe"))
		for (size_t i = 0; i < c->nrecipes; i++)
			suggest_add(&sg, c->recipes[i].name);
	return suggest_best(&sg);
}

void config_free(struct config *c)
{
	size_t i;

	if (!c)
		return;
	free(c->path);
	for (i = 0; i < c->nrepos; i++)
		config_repo_free(&c->repos[i]);
	free(c->repos);
	for (i = 0; i < c->nagents; i++) {
		free(c->agents[i].name);
		free(c->agents[i].command);
		free(c->agents[i].resume);
		free(c->agents[i].endpoint);
		free(c->agents[i].package);
		free(c->agents[i].model);
		config_strv_free(c->agents[i].files, c->agents[i].nfiles);
	}
	free(c->agents);
	for (i = 0; i < c->nendpoints; i++) {
		free(c->endpoints[i].name);
		free(c->endpoints[i].upstream);
		free(c->endpoints[i].key_env);
		free(c->endpoints[i].key_file);
	}
	free(c->endpoints);
	for (i = 0; i < c->nprices; i++)
		free(c->prices[i].model);
	free(c->prices);
	for (i = 0; i < c->nrecipes; i++)
		config_recipe_free(&c->recipes[i]);
	free(c->recipes);
	free(c->gw_hosts_file);
	free(c->gw_ca_file);
	free(c->api_listen);
	for (i = 0; i < c->ntokens; i++) {
		free(c->tokens[i].name);
		free(c->tokens[i].value_env);
		free(c->tokens[i].value_file);
	}
	free(c->tokens);
	config_strv_free(c->gw_allow_address, c->ngw_allow_address);
	config_strv_free(c->api_callback_allow, c->napi_callback_allow);
	config_strv_free(c->api_server_names, c->napi_server_names);
	free(c->wh_url);
	free(c->wh_secret_env);
	free(c->wh_secret_file);
	free(c->github_secret_env);
	free(c->github_secret_file);
	free(c->ui_theme);
	free(c->sandbox_backend);
	free(c->run_as);
	free(c->notify_command);
	for (i = 0; i < c->nbinds; i++) {
		free(c->binds[i].name);
		free(c->binds[i].keys);
	}
	free(c->binds);
	memset(c, 0, sizeof(*c));
}

const struct repo_conf *config_find_repo(const struct config *c, const char *name)
{
	size_t i;
	for (i = 0; name && i < c->nrepos; i++)
		if (strcmp(c->repos[i].name, name) == 0)
			return &c->repos[i];
	return NULL;
}

const struct agent_conf *config_find_agent(const struct config *c, const char *name)
{
	size_t i;
	for (i = 0; name && i < c->nagents; i++)
		if (strcmp(c->agents[i].name, name) == 0)
			return &c->agents[i];
	return NULL;
}

const struct agent_conf *config_default_agent(const struct config *c)
{
	const struct agent_conf *a = config_find_agent(c, "default");
	if (a)
		return a;
	/* The user's own first, then the ready-made ones. */
	for (size_t i = 0; i < c->nagents; i++)
		if (!c->agents[i].builtin)
			return &c->agents[i];
	return c->nagents ? &c->agents[0] : NULL;
}

const struct endpoint_conf *config_find_endpoint(const struct config *c, const char *name)
{
	for (size_t i = 0; name && i < c->nendpoints; i++)
		if (strcmp(c->endpoints[i].name, name) == 0)
			return &c->endpoints[i];
	return NULL;
}

const struct price_conf *config_find_price(const struct config *c, const char *model)
{
	const struct price_conf *best = NULL;
	size_t best_len = 0;
	if (!model)
		return NULL;
	/* Later entries (the file's) win over earlier ones (built in). */
	for (size_t i = c->nprices; i-- > 0;) {
		const char *m = c->prices[i].model;
		size_t n = strlen(m);
		if (strcmp(m, model) == 0)
			return &c->prices[i];
		if (n && m[n - 1] == '*' && strncmp(m, model, n - 1) == 0 && n - 1 > best_len) {
			best = &c->prices[i];
			best_len = n - 1;
		}
	}
	return best;
}

char *config_secret(const char *env, const char *file, struct err *e)
{
	e->msg[0] = '\0';
	if (file) {
		struct buf b = {0};
		if (fsx_read_file(file, 64 * 1024, &b, e) < 0) {
			buf_free(&b);
			return NULL;
		}
		/* The first line: a trailing newline is the editor's. */
		char *k = xstrndup(b.data ? b.data : "", strcspn(b.data ? b.data : "", "\r\n"));
		if (b.data)
			explicit_bzero(b.data, b.len);
		buf_free(&b);
		if (!*k) {
			free(k);
			err_set(e, _("the secret file %s is empty"), file);
			return NULL;
		}
		return k;
	}
	const char *v = env ? getenv(env) : NULL;
	return v && *v ? xstrdup(v) : NULL;
}

char *config_endpoint_key(const struct endpoint_conf *ep)
{
	struct err e;
	return config_secret(ep->key_env, ep->key_file, &e);
}

char *config_endpoint_key_missing(const struct endpoint_conf *ep)
{
	struct err e;
	if (!ep->key_env && !ep->key_file)
		return NULL;
	char *k = config_secret(ep->key_env, ep->key_file, &e);
	if (k) {
		explicit_bzero(k, strlen(k));
		free(k);
		return NULL;
	}
	if (ep->key_file)
		return xasprintf(_("endpoint %s has no key: %s; fix endpoint.%s.key-file (a file "
		                   "whose first line is the key)"),
		                 ep->name, e.msg[0] ? e.msg : ep->key_file, ep->name);
	return xasprintf(_("endpoint %s has no key: %s is not set in paddock's environment; "
	                   "export it before starting paddock, or set endpoint.%s.key-file"),
	                 ep->name, ep->key_env, ep->name);
}

char *config_missing_keys(const struct config *c)
{
	struct buf out = { 0 };
	for (size_t i = 0; i < c->nendpoints; i++) {
		const struct endpoint_conf *ep = &c->endpoints[i];
		struct buf agents = { 0 };
		/* The file's agents and the default one: a ready-made agent no
		 * task is likely to name is not worth a warning at every start. */
		const struct agent_conf *def = config_default_agent(c);
		for (size_t j = 0; j < c->nagents; j++) {
			const struct agent_conf *a = &c->agents[j];
			if (a->endpoint && strcmp(a->endpoint, ep->name) == 0 && (!a->builtin || a == def))
				buf_printf(&agents, "%s%s", agents.len ? ", " : "", a->name);
		}
		char *why = agents.len ? config_endpoint_key_missing(ep) : NULL;
		if (why)
			buf_printf(&out, _("%s (the tasks of %s fail with reason model-auth until it "
			                   "is set)\n"), why, agents.data);
		free(why);
		buf_free(&agents);
	}
	for (size_t i = 0; i < c->nrepos; i++) {
		const struct repo_conf *r = &c->repos[i];
		if (config_repo_github_follows(r) && !config_repo_github_token(r))
			buf_printf(&out, _("repo %s follows GitHub, but %s is not set; its issues and "
			                   "pull requests are not read until it is\n"), r->name,
			           r->github_token_env ? r->github_token_env : "GITHUB_TOKEN");
	}
	return out.len ? buf_detach(&out) : NULL;
}

static struct repo_conf *config_repo_slot(struct config *c, const char *name)
{
	size_t i;
	for (i = 0; i < c->nrepos; i++)
		if (strcmp(c->repos[i].name, name) == 0)
			return &c->repos[i];
	c->repos = xrealloc(c->repos, (c->nrepos + 1) * sizeof(*c->repos));
	memset(&c->repos[c->nrepos], 0, sizeof(*c->repos));
	c->repos[c->nrepos].name = xstrdup(name);
	/* Every rule blocks by default but the author check, which warns
	 * (agents often commit as themselves), and invisible characters,
	 * which ordinary text holds too (a BOM, an emoji's joiner). */
	for (int rule = 0; rule < POLICY_NRULES; rule++)
		c->repos[c->nrepos].policy[rule] =
			rule == POLICY_AUTHORS || rule == POLICY_INVISIBLE ? POLICY_WARN : POLICY_BLOCK;
	c->repos[c->nrepos].approval = APPROVAL_REVIEW;
	c->repos[c->nrepos].confirm_over = -1;
	c->repos[c->nrepos].github_follow = -1;
	return &c->repos[c->nrepos++];
}

static struct agent_conf *config_agent_slot(struct config *c, const char *name)
{
	size_t i;
	for (i = 0; i < c->nagents; i++)
		if (strcmp(c->agents[i].name, name) == 0)
			return &c->agents[i];
	c->agents = xrealloc(c->agents, (c->nagents + 1) * sizeof(*c->agents));
	memset(&c->agents[c->nagents], 0, sizeof(*c->agents));
	c->agents[c->nagents].name = xstrdup(name);
	return &c->agents[c->nagents++];
}

void config_add_repo(struct config *c, const struct repo_conf *r)
{
	struct repo_conf *slot = config_repo_slot(c, r->name);
	/* Copy first: r may point into c. */
	char *url = config_dup_or_null(r->url);
	char *branch = xstrdup(r->branch ? r->branch : "main");
	char *test = config_dup_or_null(r->test);
	char *setup = config_dup_or_null(r->setup);

	free(slot->url);
	free(slot->branch);
	free(slot->test);
	free(slot->setup);
	slot->url = url;
	slot->branch = branch;
	slot->test = test;
	slot->setup = setup;
	config_repo_defaults(slot);
}

void config_add_agent(struct config *c, const char *name, const char *command)
{
	struct agent_conf *slot = config_agent_slot(c, name);
	char *cmd = config_dup_or_null(command);
	free(slot->command);
	slot->command = cmd;
}

int config_name_valid(const char *name)
{
	size_t i, len;

	if (!name || !isalnum((unsigned char)name[0]))
		return 0;
	len = strlen(name);
	if (len > 64)
		return 0;
	for (i = 1; i < len; i++) {
		unsigned char ch = (unsigned char)name[i];
		if (!isalnum(ch) && ch != '.' && ch != '_' && ch != '-')
			return 0;
	}
	if (strstr(name, ".."))
		return 0;
	if (len >= 5 && strcmp(name + len - 5, ".lock") == 0)
		return 0;
	return 1;
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

/* Counts earlier entries with the same name, to match the n-th occurrence
 * in the file. */
struct seen {
	char **names;
	int *count;
	size_t n;
};

static int config_seen(struct seen *s, const char *name)
{
	size_t i;
	for (i = 0; i < s->n; i++)
		if (strcmp(s->names[i], name) == 0)
			return ++s->count[i];
	s->names = xrealloc(s->names, (s->n + 1) * sizeof(char *));
	s->count = xrealloc(s->count, (s->n + 1) * sizeof(int));
	s->names[s->n] = xstrdup(name);
	s->count[s->n] = 1;
	s->n++;
	return 1;
}

static void config_seen_free(struct seen *s)
{
	size_t i;
	for (i = 0; i < s->n; i++)
		free(s->names[i]);
	free(s->names);
	free(s->count);
}

struct parse {
	const char *path;
	struct config *c;
	struct problems *ps;
	const struct spots *spots;
	/* Sections already reported, so one bad section header yields one
	 * message, not one per key. */
	struct seen *reported;
	int wh_events_seen;    /* an events key was read: the default is off */
};

/* 1 the first time section/sub is reported. */
static int config_first_report(struct parse *p, const char *section, const char *sub)
{
	/* \x01 cannot occur in a section name. */
	char *tag = xasprintf("%s\x01%s", section, sub ? sub : "\x01");
	int first = config_seen(p->reported, tag) == 1;
	free(tag);
	return first;
}

/* ---- the key table: types and handlers ---- */

/* One entry of the file, as the code that reads its value sees it. */
struct entry {
	struct parse *p;
	int line;
	const struct config_key *k;
	const char *name;      /* section[.sub].key, as messages name it */
	const char *value;
	void *obj;             /* what the section's keys set: the config, or the
	                          named repo, agent, endpoint, price or token */
};

/* How a key's value is read.  config_set_typed checks the simple types
 * and stores them at config_key.off in the section's object, with a
 * message that names the key; a KT_CUSTOM key has a handler of its own. */
enum key_type {
	KT_INT,        /* int: a whole number from lo to hi */
	KT_PORT,       /* int: 1 to 65535 */
	KT_BOOL,       /* int: a boolean as git reads it */
	KT_SIZE,       /* uint64_t: a size (units.h) of at least lo bytes */
	KT_PATH,       /* char *: an absolute path */
	KT_ENV,        /* char *: an environment variable name */
	KT_WORD,       /* char *: one word that does not start with '-' */
	KT_PRICE,      /* double: US dollars per million tokens */
	KT_TEXT,       /* char *: any text */
	KT_OPT_TEXT,   /* char *: any text; empty means none (NULL) */
	KT_CUSTOM      /* set reads it */
};

/* A key of the file.  The table of them, config_keys, is the one list of
 * keys: config_entry dispatches with it, unknown keys get suggestions from
 * it, and config_write_man writes the keys' part of paddock-config(5) from
 * it (doc, def, group and help are man(7) markup, in English). */
struct config_key {
	const char *section;
	const char *key;
	enum key_type type;
	size_t off;                  /* typed keys: offset in the section's object */
	unsigned long long lo, hi;   /* KT_INT: the range; KT_SIZE: the minimum */
	void (*set)(const struct entry *en);  /* KT_CUSTOM */
	const char *doc;             /* the value's form; NULL: the type's */
	const char *def;             /* the default in words; NULL: required (a
	                                text that starts with "required" is
	                                printed as it is) */
	const char *group;           /* a paragraph before the key, or NULL */
	const char *help;            /* what the key does */
};

/* A section of the file. */
struct config_section {
	const char *name;
	int named;                   /* needs a name: [repo "NAME"] */
	int any_key;                 /* [bind]: every key is a request's name */
	/* The object of a named section's keys, made on first use; NULL: the
	 * keys set the config itself. */
	void *(*slot)(struct config *c, const char *sub);
	const char *title;           /* the manual's .SS line */
	const char *intro;           /* its text before the keys, or NULL */
};

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
		problem_add(en->p->ps, en->line, _("%s: the value looks like a secret, not the name of a variable (it is not shown here); name the variable in paddock's environment that holds it, such as ANTHROPIC_API_KEY, and never write a secret in this file"), en->name);
	else if (!config_env_name_valid(v))
		problem_add(en->p->ps, en->line, _("%s: the value is not the name of an environment variable (letters, digits and _, not starting with a digit; it is not shown here, in case it is a secret); name the variable that holds the secret, such as ANTHROPIC_API_KEY"), en->name);
	else
		config_set_str(dst, v);
}

static int config_url_ok(const char *v)
{
	return (strncmp(v, "https://", 8) == 0 && v[8]) || (strncmp(v, "http://", 7) == 0 && v[7]);
}

/* A [price "MODEL"] name: a model id, optionally ending in '*'. */
static int config_model_name_valid(const char *s)
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

/* The typed keys: checked, and stored in the section's object. */
static void config_set_typed(const struct entry *en)
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
			problem_add(ps, en->line, _("%s: '%s' is not a number from %llu to %llu"),
			            en->name, v, k->lo, k->hi);
		else
			*FIELD(en, int) = (int)n;
		break;
	case KT_PORT:
		if (config_parse_int(v, 1, 65535, &n) < 0)
			problem_add(ps, en->line, _("%s: '%s' is not a port from 1 to 65535"), en->name, v);
		else
			*FIELD(en, int) = (int)n;
		break;
	case KT_BOOL:
		if (git_config_parse_bool(&b, v) < 0)
			problem_add(ps, en->line, _("%s: '%s' is not true or false"), en->name, v);
		else
			*FIELD(en, int) = b;
		break;
	case KT_SIZE:
		if (units_parse_size(v, &size) == 0 && size >= k->lo) {
			*FIELD(en, uint64_t) = size;
		} else if (k->lo) {
			char least[32];
			units_format_size(k->lo, least, sizeof least);
			problem_add(ps, en->line, _("%s: '%s' is not a size of at least %s (for example %s)"),
			            en->name, v, least, k->def ? k->def : least);
		} else {
			problem_add(ps, en->line, _("%s: '%s' is not a size; write a whole number of bytes with an optional k, m, g or t suffix (for example 4g or 512m)"),
			            en->name, v);
		}
		break;
	case KT_PATH:
		if (v[0] != '/' && config_looks_like_secret(v))
			problem_add(ps, en->line, _("%s: the value looks like a secret, not a path (it is not shown here); give the absolute path of a file that holds it"), en->name);
		else if (v[0] != '/')
			problem_add(ps, en->line, _("%s: '%s' is not an absolute path"), en->name, v);
		else
			config_set_str(FIELD(en, char *), v);
		break;
	case KT_ENV:
		config_env_value(en, FIELD(en, char *));
		break;
	case KT_WORD:
		if (!v[0] || v[0] == '-' || strpbrk(v, " \t\n\"'\\"))
			problem_add(ps, en->line, _("%s: '%s' must be one word that does not start with '-'"),
			            en->name, v);
		else
			config_set_str(FIELD(en, char *), v);
		break;
	case KT_PRICE:
		if (units_parse_money(v, &usd) < 0)
			problem_add(ps, en->line, _("%s: '%s' is not a price in US dollars per million tokens (for example 3 or 0.30)"),
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
	case KT_CUSTOM:
		k->set(en);
		break;
	}
}

/* [paddock] */

static void config_set_template_max_age(const struct entry *en)
{
	struct config *c = en->obj;
	double secs;
	if (strcmp(en->value, "0") == 0 || strcmp(en->value, "never") == 0)
		c->template_max_age = 0;
	else if (units_parse_duration(en->value, &secs) < 0 || secs <= 0)
		problem_add(en->p->ps, en->line, _("paddock.template-max-age: '%s' is not a duration (for example 7d, or never to keep templates)"), en->value);
	else
		c->template_max_age = secs;
}

static void config_set_gate_timeout(const struct entry *en)
{
	struct config *c = en->obj;
	double secs;
	if (strcmp(en->value, "0") == 0)
		c->gate_timeout = 0;
	else if (units_parse_duration(en->value, &secs) < 0)
		problem_add(en->p->ps, en->line, _("paddock.gate-timeout: '%s' is not a duration (for example 24h, or 0 to tear sandboxes down at once)"), en->value);
	else
		c->gate_timeout = secs;
}

/* [limits] */

static void config_set_timeout(const struct entry *en)
{
	struct config *c = en->obj;
	double secs;
	if (units_parse_duration(en->value, &secs) < 0)
		problem_add(en->p->ps, en->line, _("limits.timeout: '%s' is not a duration; write a whole number of seconds with an optional s, m, h or d suffix (for example 30m)"), en->value);
	else
		c->limits.timeout = secs;
}

static void config_set_pids(const struct entry *en)
{
	struct config *c = en->obj;
	unsigned long long v;
	if (config_parse_int(en->value, 1, 4194304, &v) < 0)
		problem_add(en->p->ps, en->line, _("limits.pids: '%s' is not a number of processes from 1 to 4194304"), en->value);
	else
		c->limits.pids = (long)v;
}

static void config_set_cpus(const struct entry *en)
{
	struct config *c = en->obj;
	double cpus;
	if (config_parse_cpus(en->value, &cpus) < 0) {
		problem_add(en->p->ps, en->line, _("limits.cpus: '%s' is not a number of CPUs; write for example 2 or 1.5 (from 0.01 to 4096, or 0 for no limit)"), en->value);
	} else {
		c->limits.cpus = cpus;
		c->limits.cpus_set = 1;
	}
}

static void config_set_budget(const struct entry *en)
{
	struct config *c = en->obj;
	if (units_parse_money(en->value, &c->limits.budget) < 0)
		problem_add(en->p->ps, en->line, _("limits.budget: '%s' is not an amount in US dollars; write for example 5 or 2.50 (0 for none)"), en->value);
}

static void config_set_budget_tokens(const struct entry *en)
{
	struct config *c = en->obj;
	if (units_parse_count(en->value, &c->limits.budget_tokens) < 0)
		problem_add(en->p->ps, en->line, _("limits.budget-tokens: '%s' is not a number of tokens; write for example 200000, 500k or 2m (0 for none)"), en->value);
}

/* [sandbox] uid and gid */

static void config_set_ugid(const struct entry *en)
{
	struct config *c = en->obj;
	unsigned long long v;
	int is_uid = strcmp(en->k->key, "uid") == 0;

	if (strcmp(en->value, "0") == 0) {
		problem_add(en->p->ps, en->line, is_uid
			    ? _("sandbox.uid = 0 would run agents as root; choose an unused unprivileged uid such as 64100")
			    : _("sandbox.gid = 0 would give agents the root group; choose an unused unprivileged gid such as 64100"));
		return;
	}
	/* (uid_t)-1 means "no change" to chown and setresuid. */
	if (config_parse_int(en->value, 1, 4294967294ULL, &v) < 0) {
		problem_add(en->p->ps, en->line, _("sandbox.%s: '%s' is not a number from 1 to 4294967294"), en->k->key, en->value);
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
		problem_add(en->p->ps, en->line, "sandbox.backend: %s", e.msg);
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
		problem_add(en->p->ps, en->line, _("repo.%s.url: '%s' is not a usable path or URL; use a path, file://, https:// or ssh:// URL"), r->name, en->value);
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
		problem_add(en->p->ps, en->line, _("repo.%s.branch: '%s' is not a valid branch name"), r->name, en->value);
	else
		config_set_str(&r->branch, en->value);
	free(ref);
}

static void config_set_repo_push_url(const struct entry *en)
{
	struct repo_conf *r = en->obj;
	if (en->value[0] == '\0' || en->value[0] == '-' || strstr(en->value, "::"))
		problem_add(en->p->ps, en->line, _("repo.%s.push-url: '%s' is not a usable path or URL; use a path, file://, https:// or ssh:// URL"), r->name, en->value);
	else
		config_set_str(&r->push_url, en->value);
}

/* token-env, github-token-env */
static void config_set_token_env(const struct entry *en)
{
	config_env_value(en, FIELD(en, char *));
}

/* ssh-key, ssh-known-hosts */
static void config_set_ssh_file(const struct entry *en)
{
	struct repo_conf *r = en->obj;
	if (en->value[0] == '/')
		config_set_str(FIELD(en, char *), en->value);
	else if (strcmp(en->k->key, "ssh-key") == 0)
		problem_add(en->p->ps, en->line, _("repo.%s.ssh-key: '%s' is not an absolute path to a private key file"), r->name, en->value);
	else
		problem_add(en->p->ps, en->line, _("repo.%s.ssh-known-hosts: '%s' is not an absolute path to a known_hosts file"), r->name, en->value);
}

static void config_set_branch_prefix(const struct entry *en)
{
	struct repo_conf *r = en->obj;
	char *ref = xasprintf("refs/heads/%sx", en->value);
	int valid = 0;
	if (en->value[0] == '-' || en->value[0] == '\0' ||
	    git_reference_name_is_valid(&valid, ref) < 0 || !valid)
		problem_add(en->p->ps, en->line, _("repo.%s.branch-prefix: '%s' does not make valid branch names"), r->name, en->value);
	else
		config_set_str(&r->branch_prefix, en->value);
	free(ref);
}

static void config_set_protected(const struct entry *en)
{
	struct repo_conf *r = en->obj;
	if (!en->value[0])
		problem_add(en->p->ps, en->line, _("repo.%s.protected: give a branch name or a glob pattern such as release/*"), r->name);
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
		problem_add(en->p->ps, en->line, _("repo.%s.pull-request: '%s' is not known; use github or none"), r->name, en->value);
	}
}

static void config_set_github_repo(const struct entry *en)
{
	struct repo_conf *r = en->obj;
	const char *value = en->value, *slash = strchr(value, '/');
	if (!slash || slash == value || !slash[1] || strchr(slash + 1, '/') ||
	    strspn(value, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./") != strlen(value))
		problem_add(en->p->ps, en->line, _("repo.%s.github-repo: '%s' is not OWNER/NAME"), r->name, value);
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
		problem_add(en->p->ps, en->line, _("repo.%s.github-issues: '%s' is neither label:NAME[,NAME...] nor a search query (such as label:agent, or \"is:issue label:bug no:assignee\")"), r->name, v);
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
		problem_add(en->p->ps, en->line, _("repo.%s.github-handle: '%s' is not a GitHub login (letters, digits and hyphens, such as paddock-bot)"), r->name, en->value);
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
			problem_add(en->p->ps, en->line, _("repo.%s.github-reviewers: '%s' is neither a GitHub login nor @ORG/TEAM"), r->name, w);
			continue;
		}
		config_strv_add(&r->github_reviewers, &r->ngithub_reviewers,
		                w[0] == '@' && !slash ? w + 1 : w);
		any = 1;
	}
	if (!any && !strtok_r(NULL, "", &save) && !en->value[0])
		problem_add(en->p->ps, en->line, _("repo.%s.github-reviewers: give logins or @ORG/TEAM, separated by commas"), r->name);
	free(copy);
}

static void config_set_github_poll(const struct entry *en)
{
	struct config *c = en->obj;
	double secs;
	if (strcmp(en->value, "0") == 0)
		c->github_poll = 0;
	else if (units_parse_duration(en->value, &secs) < 0 || secs < 1 || secs > 86400)
		problem_add(en->p->ps, en->line, _("github.poll: '%s' is not 0 or a duration from 1s to 24h (for example 60s)"), en->value);
	else
		c->github_poll = secs;
}

static void config_set_github_api(const struct entry *en)
{
	struct repo_conf *r = en->obj;
	struct urlmatch_url u;
	struct err e;
	if (urlmatch_parse(en->value, 0, &u, &e) < 0) {
		problem_add(en->p->ps, en->line, _("repo.%s.github-api: %s; for GitHub Enterprise it looks like https://HOST/api/v3"), r->name, e.msg);
		return;
	}
	urlmatch_url_free(&u);
	config_set_str(&r->github_api, en->value);
}

static void config_set_deny(const struct entry *en)
{
	struct repo_conf *r = en->obj;
	if (!en->value[0])
		problem_add(en->p->ps, en->line, _("repo.%s.deny: give a path or a glob pattern such as secrets/**"), r->name);
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
		problem_add(en->p->ps, en->line, _("repo.%s.%s: '%s' is not block, warn or off"), r->name, en->k->key, en->value);
}

/* allow-host, setup-allow-host */
static void config_set_allow_host(const struct entry *en)
{
	struct repo_conf *r = en->obj;
	struct egress_rule rule;
	struct err e;
	if (egress_rule_parse(en->value, &rule, &e) < 0) {
		problem_add(en->p->ps, en->line, "%s: %s", en->name, e.msg);
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
		problem_add(en->p->ps, en->line, "%s: %s", en->name, e.msg);
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
		problem_add(en->p->ps, en->line, _("agent.%s.files: '%s' is not a list of absolute paths; write for example files = /opt/agent/config.json /opt/agent/lib.py"), a->name, en->value);
		return;
	}
	for (size_t i = 0; i < words.argc; i++) {
		if (!agent_file_path_ok(words.argv[i]))
			problem_add(en->p->ps, en->line, _("agent.%s.files: '%s' is not an absolute, normalised path outside /proc, /dev and /sys; name each host file by its full path"), a->name, words.argv[i]);
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
		problem_add(en->p->ps, en->line, _("agent.%s.kind: '%s' is not known; use script, claude, codex, pi or opencode"), a->name, en->value);
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
		problem_add(en->p->ps, en->line, _("endpoint.%s.kind: '%s' is not known; use anthropic or openai (any OpenAI-compatible server)"), ep->name, en->value);
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
		problem_add(en->p->ps, en->line, _("endpoint.%s.upstream: '%s' is not an http(s) URL such as https://api.anthropic.com"), ep->name, en->value);
	else if (n >= 3 && strncmp(en->value + n - 3, "/v1", 3) == 0)
		/* The agent's paths start with /v1: it would be asked twice. */
		problem_add(en->p->ps, en->line, _("endpoint.%s.upstream: '%s' ends in the API's version path /v1, which the agent's requests bring themselves (/v1/messages, /v1/responses); write %.*s"),
		            ep->name, en->value, (int)(n - 3), en->value);
	/* Kept all the same (the load fails): "has no upstream" would be a
	 * second, wrong message. */
	config_set_str(&ep->upstream, en->value);
}

/* [gateway] */

static void config_set_allow_address(const struct entry *en)
{
	struct config *c = en->obj;
	struct egress_cidr cidr;
	if (egress_cidr_parse(en->value, &cidr) < 0)
		problem_add(en->p->ps, en->line, _("gateway.allow-address: '%s' is not an address or CIDR such as 10.1.2.0/24 or fd00::/8"), en->value);
	else
		config_strv_add(&c->gw_allow_address, &c->ngw_allow_address, en->value);
}

static void config_set_tunnel_idle(const struct entry *en)
{
	struct config *c = en->obj;
	double secs;
	if (strcmp(en->value, "0") == 0)
		c->gw_tunnel_idle = 0;
	else if (units_parse_duration(en->value, &secs) < 0)
		problem_add(en->p->ps, en->line, _("gateway.tunnel-idle: '%s' is not a duration such as 10m or 90s (0 for no limit)"), en->value);
	else
		c->gw_tunnel_idle = secs;
}

/* gateway.uid and gateway.gid: not root, which the gateway drops. */
static void config_set_gw_ugid(const struct entry *en)
{
	struct config *c = en->obj;
	unsigned long long v;
	if (config_parse_int(en->value, 1, 4294967294ULL, &v) < 0) {
		problem_add(en->p->ps, en->line, _("gateway.%s: '%s' is not a number from 1 to 4294967294; choose an unused unprivileged id such as 64101"), en->k->key, en->value);
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
		problem_add(en->p->ps, en->line, _("gateway.network: '%s' is not auto, namespace or bridge"), en->value);
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
		problem_add(en->p->ps, en->line, _("api.listen: '%s' is not ADDRESS:PORT such as 127.0.0.1:8700"), value);
	else
		config_set_str(&c->api_listen, value);
}

static void config_set_max_queue(const struct entry *en)
{
	struct config *c = en->obj;
	unsigned long long v;
	if (config_parse_int(en->value, 0, 1000000, &v) < 0)
		problem_add(en->p->ps, en->line, _("api.max-queue: '%s' is not a number from 0 (no limit) to 1000000"), en->value);
	else
		c->api_max_queue = (int)v;
}

static void config_set_callback_allow(const struct entry *en)
{
	struct config *c = en->obj;
	struct urlmatch_pattern p;
	struct err e;
	if (urlmatch_pattern_parse(en->value, &p, &e) < 0) {
		problem_add(en->p->ps, en->line, _("api.callback-allow: %s; write an http(s) URL pattern such as https://chat.example.com/hooks/*"), e.msg);
		return;
	}
	urlmatch_pattern_free(&p);
	config_strv_add(&c->api_callback_allow, &c->napi_callback_allow, en->value);
}

static void config_set_header_timeout(const struct entry *en)
{
	struct config *c = en->obj;
	double secs;
	if (units_parse_duration(en->value, &secs) < 0 || secs < 1 || secs > 600)
		problem_add(en->p->ps, en->line, _("api.header-timeout: '%s' is not a duration from 1s to 10m (for example 10s)"), en->value);
	else
		c->api_header_timeout = secs;
}

static void config_set_body_timeout(const struct entry *en)
{
	struct config *c = en->obj;
	double secs;
	if (units_parse_duration(en->value, &secs) < 0 || secs < 1 || secs > 3600)
		problem_add(en->p->ps, en->line, _("api.body-timeout: '%s' is not a duration from 1s to 1h (for example 30s)"), en->value);
	else
		c->api_body_timeout = secs;
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
		problem_add(en->p->ps, en->line, _("api.server-name: '%s' is not a host name or address such as paddock.example.com (no port, no wildcard)"), v);
	else
		config_strv_add(&c->api_server_names, &c->napi_server_names, v);
}

/* [webhook] */

static void config_set_webhook_url(const struct entry *en)
{
	struct config *c = en->obj;
	if (!config_url_ok(en->value) || strpbrk(en->value, " \t\r\n"))
		problem_add(en->p->ps, en->line, _("webhook.url: '%s' is not an http(s) URL such as https://chat.example.com/hooks/paddock"), en->value);
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
		                                     "rejected", "lost", "agent-finished" };
		size_t i;
		for (i = 0; i < sizeof names / sizeof names[0] && strcmp(tok, names[i]); i++)
			;
		if (i < sizeof names / sizeof names[0])
			c->wh_events |= 1u << i;
		else if (strcmp(tok, "all") == 0)
			c->wh_events = CONFIG_WEBHOOK_ALL;
		else
			problem_add(p->ps, en->line, _("webhook.events: '%s' is not an event; use review, failed, done, cancelled, rejected, lost, agent-finished or all (several separated by commas)"), tok);
	}
	if (!any)
		problem_add(p->ps, en->line, _("webhook.events: '%s' names no event; use review, failed, done, cancelled, rejected, lost, agent-finished or all (several separated by commas)"), en->value);
	free(list);
}

static void config_set_webhook_timeout(const struct entry *en)
{
	struct config *c = en->obj;
	double secs;
	if (units_parse_duration(en->value, &secs) < 0 || secs < 1 || secs > 600)
		problem_add(en->p->ps, en->line, _("webhook.timeout: '%s' is not a duration from 1s to 10m (for example 10s)"), en->value);
	else
		c->wh_timeout = secs;
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
		problem_add(en->p->ps, en->line, _("%s: '%s' is not an approval mode; use review, "
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
		problem_add(en->p->ps, en->line, _("%s: '%s' is not an amount in US dollars; write "
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
		problem_add(en->p->ps, en->line, _("%s: '%s' is not a number of tries from 0 to 20"),
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
		problem_add(en->p->ps, en->line, _("%s: '%s' is not an amount in US dollars; write "
		                                   "for example 5 or 2.50 (0 for no limit)"), en->name,
		            en->value);
	}
}

static void config_set_recipe_timeout(const struct entry *en)
{
	struct recipe_conf *r = en->obj;
	if (units_parse_duration(en->value, &r->timeout) < 0 || r->timeout <= 0) {
		r->timeout = 0;
		problem_add(en->p->ps, en->line, _("%s: '%s' is not a duration; write a whole number "
		                                   "of seconds with an optional s, m, h or d suffix "
		                                   "(for example 30m)"), en->name, en->value);
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
		problem_add(en->p->ps, en->line, _("%s: '%s' is not an input name; use lower-case "
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
		problem_add(en->p->ps, en->line, "%s: %s", en->name, e.msg);
	} else {
		config_strv_add(&r->contract, &r->ncontract, en->value);
	}
}

/* [ui] */

static void config_set_theme(const struct entry *en)
{
	struct config *c = en->obj;
	if (!config_name_valid(en->value))
		problem_add(en->p->ps, en->line, _("ui.theme: '%s' is not a theme name"), en->value);
	else
		config_set_str(&c->ui_theme, en->value);
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

char *config_token_value(const struct token_conf *t)
{
	struct err e;
	return config_secret(t->value_env, t->value_file, &e);
}

/* ---- the tables ---- */

/* The sections, in the manual's order. */
static const struct config_section config_sections[] = {
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
static const struct config_key config_keys[] = {
	/* [paddock] */
	{ .section = "paddock", .key = "workers", .type = KT_INT,
	  .off = CFG(workers), .lo = 1, .hi = 64,
	  .def = "2",
	  .help = "How many tasks run at once.\n"
	          "Queued tasks start first in, first out, as workers come free.\n"
	          "A sandbox kept at the review gate does not take a worker.\n" },
	{ .section = "paddock", .key = "template-max-age", .type = KT_CUSTOM,
	  .set = config_set_template_max_age,
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
	{ .section = "paddock", .key = "gate-timeout", .type = KT_CUSTOM,
	  .set = config_set_gate_timeout,
	  .doc = "duration, or 0",
	  .def = "24h",
	  .help = "How long a task's sandbox is kept while the task waits at review, counted\n"
	          "from when its round reached review.\n"
	          "Then the sandbox is torn down; the task stays at review with its branch in\n"
	          ".BR paddock 's\n"
	          "mirror and can still be approved, pushed or rejected, and a later request\n"
	          "for changes runs in a sandbox rebuilt at the task's head, with the agent's\n"
	          "home as the round left it (archived when it reached review).\n"
	          ".B 0\n"
	          "keeps no sandbox.\n"
	          "See\n"
	          ".BR paddock (1),\n"
	          "section\n"
	          ".BR \"THE REVIEW GATE\" .\n" },
	/* [limits] */
	{ .section = "limits", .key = "timeout", .type = KT_CUSTOM,
	  .set = config_set_timeout,
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
	  .set = config_set_backend, .doc = "bwrap or process",
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
	{ .section = "recipe", .key = "timeout", .type = KT_CUSTOM,
	  .set = config_set_recipe_timeout,
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
	{ .section = "gateway", .key = "tunnel-idle", .type = KT_CUSTOM,
	  .set = config_set_tunnel_idle,
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
	  .doc = "review, failed, done, cancelled, rejected, lost, agent-finished, all",
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
	          "a round's agent that ended (its tests come next), the others the ends.\n" },
	{ .section = "webhook", .key = "timeout", .type = KT_CUSTOM,
	  .set = config_set_webhook_timeout,
	  .doc = "duration, 1s to 10m",
	  .def = "10s",
	  .help = "How long one attempt may take, connection included.\n" },
	{ .section = "webhook", .key = "attempts", .type = KT_INT,
	  .off = CFG(wh_attempts), .lo = 1, .hi = 20,
	  .def = "8",
	  .help = "Tries before a delivery is given up.\n" },
	/* [github] */
	{ .section = "github", .key = "poll", .type = KT_CUSTOM,
	  .set = config_set_github_poll,
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
	{ .section = "api", .key = "header-timeout", .type = KT_CUSTOM,
	  .set = config_set_header_timeout,
	  .doc = "duration, 1s to 10m",
	  .def = "10s",
	  .help = "How long a connection has to send a whole request (its headers); after\n"
	          "a request, an idle connection is kept for 60 seconds.\n"
	          "A connection whose requests were all refused (no token, a bad signature)\n"
	          "is closed this long after it opened.\n" },
	{ .section = "api", .key = "body-timeout", .type = KT_CUSTOM,
	  .set = config_set_body_timeout,
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
	{ .section = "token", .key = "read-only", .type = KT_BOOL,
	  .off = TOKEN(read_only),
	  .def = "false",
	  .help = "The token may only\n"
	          ".BR GET :\n"
	          "anything else is answered with 403 and changes nothing.\n" },
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
	          "by the dashboard when a task reaches review or fails, with\n"
	          ".B PADDOCK_EVENT\n"
	          ".RB ( review\n"
	          "or\n"
	          ".BR failed )\n"
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

/* ---- dispatch ---- */

static const struct config_section *config_section_find(const char *name)
{
	for (size_t i = 0; i < sizeof config_sections / sizeof config_sections[0]; i++)
		if (strcmp(config_sections[i].name, name) == 0)
			return &config_sections[i];
	return NULL;
}

static const struct config_key *config_key_find(const char *section, const char *key)
{
	for (size_t i = 0; i < sizeof config_keys / sizeof config_keys[0]; i++)
		if (strcmp(config_keys[i].section, section) == 0 && strcmp(config_keys[i].key, key) == 0)
			return &config_keys[i];
	return NULL;
}

/* The section closest to s (a typo suggestion), or NULL. */
static const char *config_suggest_section(const char *s)
{
	const char *best = NULL;
	size_t bestd = 3;   /* at most two edits away */
	for (size_t i = 0; i < sizeof config_sections / sizeof config_sections[0]; i++) {
		size_t d = suggest_distance(s, config_sections[i].name);
		if (d < bestd) {
			bestd = d;
			best = config_sections[i].name;
		}
	}
	return best;
}

/* Names other tools give a key, for the suggestion (the distance cannot
 * get from "url" to "upstream"). */
static const struct { const char *section, *alias, *key; } config_aliases[] = {
	{ "endpoint", "url", "upstream" }, { "endpoint", "base-url", "upstream" },
	{ "endpoint", "baseurl", "upstream" }, { "endpoint", "api-base", "upstream" },
	{ "endpoint", "host", "upstream" }, { "endpoint", "address", "upstream" },
	{ "endpoint", "key", "key-env" }, { "endpoint", "api-key", "key-env" },
	{ "endpoint", "apikey", "key-env" }, { "endpoint", "token", "key-env" },
	{ "endpoint", "type", "kind" }, { "endpoint", "provider", "kind" },
	{ "endpoint", "api", "kind" },
	{ "repo", "upstream", "url" }, { "repo", "remote", "url" }, { "repo", "path", "url" },
	{ "agent", "cmd", "command" }, { "agent", "provider", "endpoint" },
	{ "limits", "max-cost", "budget" }, { "limits", "cost", "budget" },
	{ "limits", "tokens", "budget-tokens" }, { "limits", "concurrency", "model-concurrency" },
	{ "token", "value", "value-env" }, { "webhook", "secret", "secret-env" },
};

/* The key of section closest to s, or NULL: s with '_' for '-' or in
 * another case, a name other tools use, a key within s or s within a
 * key, else the nearest by edit distance (up to a third of its length,
 * at least 2). */
static const char *config_suggest_key(const char *section, const char *s)
{
	char norm[65];
	size_t n = strlen(s);
	if (n >= sizeof norm)
		return NULL;
	for (size_t i = 0; i <= n; i++)
		norm[i] = s[i] == '_' ? '-' : (char)tolower((unsigned char)s[i]);
	for (size_t i = 0; i < sizeof config_aliases / sizeof *config_aliases; i++)
		if (!strcmp(config_aliases[i].section, section) && !strcmp(config_aliases[i].alias, norm))
			return config_aliases[i].key;
	const char *best = NULL, *within = NULL;
	size_t bestd = (n / 3 > 2 ? n / 3 : 2) + 1;
	for (size_t i = 0; i < sizeof config_keys / sizeof config_keys[0]; i++) {
		const char *k = config_keys[i].key;
		if (strcmp(config_keys[i].section, section) != 0)
			continue;
		size_t d = suggest_distance(norm, k);
		if (d < bestd) {
			bestd = d;
			best = k;
		}
		if (!within && strlen(k) >= 3 && n >= 3 && (strstr(norm, k) || strstr(k, norm)))
			within = k;
	}
	return best ? best : within;
}

/* Checks one entry "section[.sub].key" = value found at its n-th
 * occurrence, and stores it. */
static void config_entry(struct parse *p, const char *name, const char *value, int n)
{
	const char *dot1 = strchr(name, '.'), *dot2 = strrchr(name, '.');
	const struct config_section *sec;
	const struct config_key *k;
	char *section, *sub = NULL;
	const char *key;
	const char *sugg;
	int line;

	if (!dot1) {
		line = config_line(p->spots, "", NULL, name, n);
		problem_add(p->ps, line, _("'%s' is outside any section; put it under a section header such as [paddock]"), name);
		return;
	}
	section = xstrndup(name, (size_t)(dot1 - name));
	if (dot2 > dot1)
		sub = xstrndup(dot1 + 1, (size_t)(dot2 - dot1 - 1));
	key = dot2 + 1;
	line = config_line(p->spots, section, sub, key, n);

	if (strcmp(section, "include") == 0 || strcmp(section, "includeif") == 0) {
		if (config_first_report(p, section, sub))
			problem_add(p->ps, config_line(p->spots, section, sub, NULL, 1),
				    _("[%s] is not supported; put every setting in this file"), section);
		goto out;
	}
	sec = config_section_find(section);
	if (!sec) {
		if (config_first_report(p, section, sub)) {
			int hl = config_line(p->spots, section, sub, NULL, 1);
			sugg = config_suggest_section(section);
			if (sugg)
				problem_add(p->ps, hl ? hl : line, _("unknown section '%s'; did you mean '%s'?"), section, sugg);
			else
				problem_add(p->ps, hl ? hl : line, _("unknown section '%s'; known sections are paddock, limits, sandbox, repo, agent, endpoint, price, gateway, api, token, webhook, ui and bind"), section);
		}
		goto out;
	}
	if (sec->named && !sub) {
		if (config_first_report(p, section, sub))
			problem_add(p->ps, config_line(p->spots, section, NULL, NULL, 1),
				    _("[%s] needs a name: write [%s \"NAME\"]"), section, section);
		goto out;
	}
	if (!sec->named && sub) {
		if (config_first_report(p, section, sub))
			problem_add(p->ps, config_line(p->spots, section, sub, NULL, 1),
				    _("[%s \"%s\"]: section %s takes no name; write [%s]"), section, sub, section, section);
		goto out;
	}
	if (strcmp(section, "price") == 0 && !config_model_name_valid(sub)) {
		if (config_first_report(p, section, sub))
			problem_add(p->ps, config_line(p->spots, section, sub, NULL, 1),
				    _("invalid model name '%s': use up to 128 letters, digits, '.', '_', ':', '/', '@' and '-', optionally ending in '*'"), sub);
		goto out;
	}
	if (sec->named && strcmp(section, "price") != 0 && !config_name_valid(sub)) {
		if (config_first_report(p, section, sub))
			problem_add(p->ps, config_line(p->spots, section, sub, NULL, 1),
				    _("invalid %s name '%s': use up to 64 letters, digits, '.', '_' and '-', starting with a letter or digit"), section, sub);
		goto out;
	}
	if (sec->any_key) {
		/* [bind]: the dashboard checks the request names and keys. */
		if (!value) {
			problem_add(p->ps, line, _("'%s' needs a value: write %s = KEYS"), name, key);
		} else {
			p->c->binds = xrealloc(p->c->binds, (p->c->nbinds + 1) * sizeof *p->c->binds);
			p->c->binds[p->c->nbinds].name = xstrdup(key);
			p->c->binds[p->c->nbinds].keys = xstrdup(value);
			p->c->nbinds++;
		}
		goto out;
	}
	k = config_key_find(section, key);
	if (!k) {
		sugg = config_suggest_key(section, key);
		if (sugg && sub)
			problem_add(p->ps, line, _("unknown key '%s'; did you mean '%s.%s.%s'?"), name, section, sub, sugg);
		else if (sugg)
			problem_add(p->ps, line, _("unknown key '%s'; did you mean '%s.%s'?"), name, section, sugg);
		else
			problem_add(p->ps, line, _("unknown key '%s'"), name);
		goto out;
	}
	if (!value) {
		problem_add(p->ps, line, _("'%s' needs a value: write %s = VALUE"), name, key);
		goto out;
	}
	{
		struct entry en = { .p = p, .line = line, .k = k, .name = name, .value = value,
		                    .obj = sec->slot ? sec->slot(p->c, sub) : p->c };
		config_set_typed(&en);
	}
out:
	free(section);
	free(sub);
}

/* Turns libgit2's "failed to parse config file: WHAT (in FILE:LINE, column
 * N)" into a problem at LINE. */
static void config_git_error(const char *path, struct problems *ps)
{
	const git_error *ge = git_error_last();
	const char *msg = ge && ge->message ? ge->message : _("unknown libgit2 error");
	const char *in = strstr(msg, " (in ");
	const char *prefix = "failed to parse config file: ";
	const char *colon, *close;
	char *what;
	long line = 0;
	int col = 0;

	if (in && (close = strrchr(in, ')')) != NULL) {
		const char *comma = strstr(in, ", column ");
		const char *stop = comma && comma < close ? comma : close;
		for (colon = stop; colon > in && *colon != ':'; colon--)
			;
		if (*colon == ':')
			line = strtol(colon + 1, NULL, 10);
		if (comma && comma < close)
			col = atoi(comma + 9);
	}
	/* A line in another file (an included one) is not a line here. */
	if (line <= 0 || line > 0x7fffffff ||
	    strncmp(in + 5, path, strlen(path)) != 0 || in + 5 + strlen(path) != colon) {
		problem_add(ps, 0, "%s", msg);
		return;
	}
	if (strncmp(msg, prefix, strlen(prefix)) == 0)
		msg += strlen(prefix);
	what = xstrndup(msg, (size_t)(in - msg));
	if (col > 0)
		problem_add(ps, (int)line, _("syntax error: %s (column %d)"), what, col);
	else
		problem_add(ps, (int)line, _("syntax error: %s"), what);
	free(what);
}

/* Reads the file; -1 with errno set when it cannot. */
static int config_read(const char *path, struct buf *text)
{
	char chunk[8192];
	struct stat st;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		int saved = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
		close(fd);
		errno = saved;
		return -1;
	}
	while ((n = read(fd, chunk, sizeof(chunk))) != 0) {
		if (n < 0) {
			int saved = errno;
			if (saved == EINTR)
				continue;
			close(fd);
			errno = saved;
			return -1;
		}
		buf_add(text, chunk, (size_t)n);
		if (text->len > CONFIG_MAX_SIZE) {
			close(fd);
			errno = EFBIG;
			return -1;
		}
	}
	close(fd);
	return 0;
}

/* 1 when path lies in what the sandbox makes itself (the checkout, the
 * home, the output, paddock's files): no host file can tell. */
static int config_sandbox_own(const char *path)
{
	static const char *const tops[] = { SANDBOX_WORKDIR, SANDBOX_HOME, SANDBOX_OUTDIR,
	                                    "/paddock", "/opt/paddock", NULL };
	for (size_t i = 0; tops[i]; i++) {
		size_t n = strlen(tops[i]);
		if (strncmp(path, tops[i], n) == 0 && (path[n] == '/' || path[n] == '\0'))
			return 1;
	}
	return 0;
}

/* -1 when the program an agent's command (key) runs cannot run in the
 * sandbox: an absolute path that does not exist or is not executable (a
 * host file is copied in with its mode), a name on no directory of the
 * sandbox's PATH (the host's /usr, read-only), or the script an
 * interpreter is given that does not exist.  An agent with a package runs
 * the installed package's program instead; paths relative to the task's
 * checkout are not checked. */
static int config_agent_program(const struct agent_conf *a, const char *key,
                                const struct agent_cmdline *cl, struct err *e)
{
	static const char *const path_dirs[] = { "/usr/local/bin", "/usr/bin", "/bin", NULL };
	const char *prog = cl->argv[0];
	struct stat st;
	if (a->package || strchr(prog, '{') || config_sandbox_own(prog))
		return 0;
	if (prog[0] == '/') {
		if (stat(prog, &st) < 0)
			return err_set(e, _("agent.%s.%s: %s does not exist; fix the path, or install "
			                    "the program there"), a->name, key, prog);
		if (!S_ISREG(st.st_mode) || !(st.st_mode & S_IXUSR))
			return err_set(e, _("agent.%s.%s: %s is not an executable file; make it "
			                    "executable (chmod +x) or run it with its interpreter, "
			                    "as in command = /bin/sh %s"), a->name, key, prog, prog);
	} else if (!strchr(prog, '/')) {
		int found = 0;
		for (size_t i = 0; path_dirs[i] && !found; i++) {
			char *p = xasprintf("%s/%s", path_dirs[i], prog);
			found = stat(p, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111);
			free(p);
		}
		if (!found)
			return err_set(e, _("agent.%s.%s: '%s' is not a program on the sandbox's PATH "
			                    "(/usr/local/bin:/usr/bin:/bin, from this host's /usr); "
			                    "install it there, or give the program's full path"),
			               a->name, key, prog);
	}
	if (!agent_is_interpreter(prog))
		return 0;
	size_t i = 1;
	while (i < cl->argc && cl->argv[i][0] == '-' && strcmp(cl->argv[i], "--") != 0)
		i++;
	if (i < cl->argc && strcmp(cl->argv[i], "--") == 0)
		i++;
	/* A script the interpreter runs from the host must be there now. */
	const char *script = i < cl->argc ? cl->argv[i] : NULL;
	if (script && script[0] == '/' && !strchr(script, '{') && !config_sandbox_own(script) &&
	    stat(script, &st) < 0 && (errno == ENOENT || errno == ENOTDIR))
		return err_set(e, _("agent.%s.%s: the script %s does not exist; fix the path in "
		                    "the command"), a->name, key, script);
	return 0;
}

const char *config_url_local_path(const char *url)
{
	if (strncmp(url, "file://", 7) == 0)
		return url + 7;
	if (strstr(url, "://"))
		return NULL;
	if (strchr(url, ':') && strchr(url, ':') < (strchr(url, '/') ? strchr(url, '/')
	                                          : url + strlen(url)))
		return NULL;  /* host:path, as git reads it: ssh */
	return url;
}

int config_local_url_check(const char *repo, const char *key, const char *url,
                           struct err *e)
{
	const char *path = config_url_local_path(url);
	if (!path)
		return 0;
	struct stat st;
	if (*path && (stat(path, &st) == 0 || (errno != ENOENT && errno != ENOTDIR)))
		return 0;
	return err_set(e, _("repo %s: no repository at %s; fix %s in [repo \"%s\"] of the "
	                    "configuration (a local path must name an existing git "
	                    "repository)"), repo, path, key, repo);
}

/* The checks of config_check on this host (agent files and the host files
 * agent commands name; a CPU limit above the machine's) that config_load
 * leaves to the step that uses them.  Warnings go to warn. */
static void config_host_checks(const struct config *c, const struct spots *spots,
                               struct problems *ps, struct problems *warn)
{
	long online = sysconf(_SC_NPROCESSORS_ONLN);

	/* A local path that is not there fails every task of the repo; a
	 * warning only, as the repository may be made later. */
	for (size_t i = 0; i < c->nrepos; i++) {
		const struct repo_conf *r = &c->repos[i];
		const char *keys[2] = { "url", "push-url" };
		const char *urls[2] = { r->url, r->push_url };
		for (size_t k = 0; k < 2; k++) {
			struct err e;
			if (urls[k] && config_local_url_check(r->name, keys[k], urls[k], &e) < 0)
				problem_add(warn, config_line(spots, "repo", r->name, keys[k], 1),
				            _("warning: %s"), e.msg);
		}
	}

	for (size_t i = 0; i < c->nagents; i++) {
		const struct agent_conf *a = &c->agents[i];
		const char *keys[2] = { "command", "resume" };
		const char *cmds[2] = { a->command, a->resume };
		struct err e;
		for (size_t k = 0; k < 2; k++) {
			struct agent_cmdline cl;
			if (!cmds[k] || agent_cmdline_parse(cmds[k], &cl, &e) < 0)
				continue;  /* reported already */
			if (agent_check_named(a->name, keys[k], &cl, a->files, a->nfiles, &e) < 0 ||
			    config_agent_program(a, keys[k], &cl, &e) < 0)
				problem_add(ps, config_line(spots, "agent", a->name, keys[k], 1), "%s",
				            e.msg);
			agent_cmdline_free(&cl);
		}
		for (size_t f = 0; f < a->nfiles; f++)
			if (agent_check_listed(a->name, a->files[f], &e) < 0)
				problem_add(ps, config_line(spots, "agent", a->name, "files", 1), "%s",
				            e.msg);
	}
	/* A key that can spend without a limit: the default has no budget. */
	if (c->limits.budget <= 0 && !c->limits.budget_tokens) {
		struct buf with = { 0 };
		for (size_t i = 0; i < c->nendpoints; i++) {
			const struct endpoint_conf *ep = &c->endpoints[i];
			char *key = config_endpoint_key(ep);
			if (key)
				buf_printf(&with, "%s%s (%s)", with.len ? ", " : "", ep->name,
				           ep->key_file ? ep->key_file : ep->key_env);
			if (key)
				explicit_bzero(key, strlen(key));
			free(key);
		}
		if (with.len)
			problem_add(warn, config_line(spots, "limits", NULL, "budget", 1),
			            _("warning: a key is set for %s, and no budget limits what a task spends with it; set limits.budget (for example 5) or limits.budget-tokens, or give tasks paddock add --budget"),
			            with.data);
		buf_free(&with);
	}
	/* The gateway's uid should be nobody else's (an account of that name
	 * is the admin's way to name it). */
	struct passwd *pw = getpwuid(c->gw_uid);
	if (pw && strcmp(pw->pw_name, "paddock-gateway") != 0)
		problem_add(warn, config_line(spots, "gateway", NULL, "uid", 1),
		            _("warning: gateway.uid %lu is the account %s's; choose a uid that no account uses (or name its account paddock-gateway)"),
		            (unsigned long)c->gw_uid, pw->pw_name);
	if (c->limits.cpus_set && online > 0 && c->limits.cpus > (double)online)
		problem_add(warn, config_line(spots, "limits", NULL, "cpus", 1),
		            _("warning: limits.cpus = %g is more than the %ld CPUs of this machine; a task may use them all"),
		            c->limits.cpus, online);
}

static char *config_problem_text(const char *path, const struct problem *pr);

/* Parses text, which libgit2 reads again from path, into c and collects
 * every problem; with warn, also runs config_host_checks. */

/* Recipes that cannot make a task, and approval modes that need tests. */
static void config_workflow_checks(struct config *c, struct spots *spots, struct problems *ps)
{
	for (size_t i = 0; i < c->nrepos; i++) {
		const struct repo_conf *r = &c->repos[i];
		if ((r->approval == APPROVAL_AUTO || r->approval == APPROVAL_AUTO_PUSH) && !r->test)
			problem_add(ps, config_line(spots, "repo", r->name, "approval", 1),
			            _("repo '%s': approval = %s needs a test command; add test = "
			              "COMMAND, or use review"), r->name,
			            config_approval_name(r->approval));
	}
	for (size_t i = 0; i < c->nrecipes; i++) {
		const struct recipe_conf *r = &c->recipes[i];
		if (!r->prompt) {
			problem_add(ps, config_line(spots, "recipe", r->name, NULL, 1),
			            _("recipe '%s' has no prompt; add prompt = TEXT under "
			              "[recipe \"%s\"]"), r->name, r->name);
			continue;
		}
		/* A placeholder that names no input would reach the agent as
		 * it is: say so now, not on the first task. */
		char **names = NULL;
		size_t n = 0;
		recipe_placeholders(r->prompt, &names, &n);
		if (r->base)
			recipe_placeholders(r->base, &names, &n);
		for (size_t k = 0; k < r->ncontract; k++)
			recipe_placeholders(r->contract[k], &names, &n);
		for (size_t k = 0; k < n; k++) {
			size_t j;
			for (j = 0; j < r->ninputs && strcmp(r->inputs[j].name, names[k]); j++)
				;
			if (j == r->ninputs)
				problem_add(ps, config_line(spots, "recipe", r->name, "prompt", 1),
				            _("recipe '%s' uses {%s}, which is not one of its inputs; add "
				              "input = %s"), r->name, names[k], names[k]);
			free(names[k]);
		}
		free(names);
	}
}

/* GitHub needs a repository to talk about (r), and one webhook secret
 * (r NULL). */
static void config_github_checks(const struct config *c, const struct repo_conf *r,
                                 struct spots *spots, struct problems *ps)
{
	if (!r) {
		if (c->github_secret_env && c->github_secret_file)
			problem_add(ps, config_line(spots, "github", NULL, "webhook-secret-file", 1),
				    _("github: webhook-secret-env and webhook-secret-file are both set; keep one"));
		return;
	}
	if (r->pull_request && !r->github_repo)
		problem_add(ps, config_line(spots, "repo", r->name, "pull-request", 1),
			    _("repo '%s' opens pull requests on GitHub but names no repository; add github-repo = OWNER/NAME"),
			    r->name);
	if ((r->github_issues || r->github_handle || r->ngithub_reviewers ||
	     r->github_follow == 1) && !r->github_repo)
		problem_add(ps, config_line(spots, "repo", r->name, NULL, 1),
			    _("repo '%s' follows GitHub but names no repository; add github-repo = OWNER/NAME"),
			    r->name);
}

static void config_parse_text(const char *path, const char *text, size_t len, struct config *c,
                              struct problems *ps, struct problems *warn)
{
	struct spots spots = { 0 };
	struct seen seen = { 0 }, reported = { 0 };
	struct parse p = { 0 };
	git_config *cfg = NULL;
	git_config_iterator *it = NULL;
	git_config_entry *entry;
	size_t i;

	config_scan(text, len, &spots);
	/* libgit2 would read included files before we see the entries: refuse
	 * includes without following them. */
	for (i = 0; i < spots.n; i++) {
		if (!spots.v[i].key && (strcmp(spots.v[i].section, "include") == 0 ||
					strcmp(spots.v[i].section, "includeif") == 0)) {
			problem_add(ps, spots.v[i].line,
				    _("[%s] is not supported; put every setting in this file"),
				    spots.v[i].section);
			spots_free(&spots);
			return;
		}
	}
	gitlib_init();
	if (git_config_new(&cfg) < 0 ||
	    git_config_add_file_ondisk(cfg, path, GIT_CONFIG_LEVEL_APP, NULL, 0) < 0) {
		config_git_error(path, ps);
		goto out;
	}
	if (git_config_iterator_new(&it, cfg) < 0) {
		config_git_error(path, ps);
		goto out;
	}
	p.path = path;
	p.c = c;
	p.ps = ps;
	p.spots = &spots;
	p.reported = &reported;
	while (git_config_next(&entry, it) == 0) {
		/* Entries of included files: [include] itself is reported. */
		if (entry->include_depth > 0)
			continue;
		config_entry(&p, entry->name, entry->value, config_seen(&seen, entry->name));
	}
	for (i = 0; i < c->nrepos; i++) {
		struct repo_conf *r = &c->repos[i];
		if (!r->url)
			problem_add(ps, config_line(&spots, "repo", r->name, NULL, 1),
				    _("repo '%s' has no url; add url = PATH-OR-URL under [repo \"%s\"]"),
				    r->name, r->name);
		config_repo_defaults(r);
		config_github_checks(c, r, &spots, ps);
	}
	config_github_checks(c, NULL, &spots, ps);
	for (i = 0; i < c->nagents; i++) {
		const struct agent_conf *a = &c->agents[i];
		if (!a->command)
			problem_add(ps, config_line(&spots, "agent", a->name, NULL, 1),
				    _("agent '%s' has no command; add command = COMMAND under [agent \"%s\"]"),
				    a->name, a->name);
		if (a->endpoint && !config_find_endpoint(c, a->endpoint))
			problem_add(ps, config_line(&spots, "agent", a->name, "endpoint", 1),
				    _("agent '%s' uses endpoint '%s', which is not defined; add [endpoint \"%s\"] or use anthropic or openai"),
				    a->name, a->endpoint, a->endpoint);
	}
	config_workflow_checks(c, &spots, ps);
	for (i = 0; i < c->ntokens; i++)
		if (!c->tokens[i].value_env && !c->tokens[i].value_file)
			problem_add(ps, config_line(&spots, "token", c->tokens[i].name, NULL, 1),
				    _("token '%s' has no value; add value-env = VARIABLE or value-file = PATH (never the token itself)"),
				    c->tokens[i].name);
	for (i = 0; i < c->nendpoints; i++) {
		const struct endpoint_conf *ep = &c->endpoints[i];
		if (!ep->upstream)
			problem_add(ps, config_line(&spots, "endpoint", ep->name, NULL, 1),
				    _("endpoint '%s' has no upstream; add upstream = URL under [endpoint \"%s\"]"),
				    ep->name, ep->name);
		if (!ep->port)
			problem_add(ps, config_line(&spots, "endpoint", ep->name, NULL, 1),
				    _("endpoint '%s' has no port; add port = N (the port the sandbox reaches it on, such as 8083)"),
				    ep->name);
		for (size_t j = 0; j < i; j++)
			if (ep->port && c->endpoints[j].port == ep->port)
				problem_add(ps, config_line(&spots, "endpoint", ep->name, "port", 1),
					    _("endpoints '%s' and '%s' both use port %d; give each its own"),
					    c->endpoints[j].name, ep->name, ep->port);
		if (ep->port && ep->port == c->gw_proxy_port)
			problem_add(ps, config_line(&spots, "endpoint", ep->name, "port", 1),
				    _("endpoint '%s' uses port %d, which is the proxy's (gateway.proxy-port)"),
				    ep->name, ep->port);
	}
	/* (The built-in definitions are parsed without the defaults: 0.) */
	if (c->gw_uid && (c->gw_uid == c->sandbox_uid || c->gw_gid == c->sandbox_gid)) {
		const char *k = c->gw_uid == c->sandbox_uid ? "uid" : "gid";
		int line = config_line(&spots, "gateway", NULL, k, 1);
		problem_add(ps, line ? line : config_line(&spots, "sandbox", NULL, k, 1),
			    _("gateway.uid and gateway.gid must differ from sandbox.uid and sandbox.gid (%lu, %lu): a sandbox could signal the gateway that holds the keys; choose other ids"),
			    (unsigned long)c->sandbox_uid, (unsigned long)c->sandbox_gid);
	}
	if (c->wh_secret_env && c->wh_secret_file)
		problem_add(ps, config_line(&spots, "webhook", NULL, "secret-file", 1),
			    _("webhook: secret-env and secret-file are both set; keep one"));
	if (!c->wh_url && config_line(&spots, "webhook", NULL, NULL, 1))
		problem_add(ps, config_line(&spots, "webhook", NULL, NULL, 1),
			    _("[webhook] has no url; add url = URL under [webhook] (the chat or service that receives the POSTs)"));
	if (warn)
		config_host_checks(c, &spots, ps, warn);
out:
	config_seen_free(&seen);
	config_seen_free(&reported);
	git_config_iterator_free(it);
	git_config_free(cfg);
	spots_free(&spots);
	if (ps->n > 1)
		qsort(ps->v, ps->n, sizeof(*ps->v), problem_cmp);
}

/* Parses the file at path into c and collects every problem; with warn,
 * also runs config_host_checks.  Returns 1 when the file does not exist,
 * else 0. */
static int config_parse(const char *path, struct config *c, struct problems *ps,
                        struct problems *warn)
{
	struct buf text = { 0 };

	if (config_read(path, &text) < 0) {
		int missing = errno == ENOENT;
		if (!missing) {
			char *why = xstrdup(strerror(errno));
			problem_add(ps, 0, _("cannot read the configuration: %s"), why);
			free(why);
		}
		buf_free(&text);
		return missing;
	}
	config_parse_text(path, text.data ? text.data : "", text.len, c, ps, warn);
	buf_free(&text);
	return 0;
}

/* Parses text, which is no file, into c: libgit2 reads it from a memfd
 * (or, where /proc is missing, from a temporary file). */
static void config_parse_string(const char *text, struct config *c, struct problems *ps)
{
	char path[64], *tmp = NULL;
	size_t len = strlen(text);
	int fd = memfd_create("paddock-builtin.conf", MFD_CLOEXEC);

	if (fd >= 0) {
		snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
		if (access(path, R_OK) < 0) {
			close(fd);
			fd = -1;
		}
	}
	if (fd < 0) {
		const char *dir = getenv("TMPDIR");
		tmp = xasprintf("%s/paddock-builtin.XXXXXX", dir && dir[0] == '/' ? dir : "/tmp");
		fd = mkostemp(tmp, O_CLOEXEC);
		if (fd < 0) {
			char *why = xstrdup(strerror(errno));
			problem_add(ps, 0, _("cannot write the built-in definitions to %s: %s"), tmp, why);
			free(why);
			free(tmp);
			return;
		}
		snprintf(path, sizeof path, "%s", tmp);
	}
	if (fsx_write_all(fd, text, len) < 0) {
		char *why = xstrdup(strerror(errno));
		problem_add(ps, 0, _("cannot write the built-in definitions to %s: %s"), path, why);
		free(why);
	} else {
		config_parse_text(tmp ? tmp : path, text, len, c, ps, NULL);
	}
	if (tmp)
		unlink(tmp);
	free(tmp);
	close(fd);
}

/* Parses the built-in definitions once per process (pthread_once). */
static void config_builtin_parse(void)
{
	struct problems ps = { 0 };
	config_parse_string(config_builtin_text, &builtin_conf, &ps);
	config_parse_string(config_recipes_text, &builtin_conf, &ps);
	/* There are none: tests/test-config runs config_builtin_check. */
	problems_free(&ps);
	for (size_t i = 0; i < builtin_conf.nagents; i++)
		builtin_conf.agents[i].builtin = 1;
	for (size_t i = 0; i < builtin_conf.nrecipes; i++)
		builtin_conf.recipes[i].builtin = 1;
}

int config_builtin_check(FILE *out)
{
	struct problems ps = { 0 };
	struct config c;
	int n;

	memset(&c, 0, sizeof c);
	config_parse_string(config_builtin_text, &c, &ps);
	for (size_t i = 0; i < ps.n; i++) {
		char *text = config_problem_text("builtin.conf", &ps.v[i]);
		fprintf(out, "%s\n", text);
		free(text);
	}
	n = (int)ps.n;
	problems_free(&ps);
	memset(&ps, 0, sizeof ps);
	config_parse_string(config_recipes_text, &c, &ps);
	for (size_t i = 0; i < ps.n; i++) {
		char *text = config_problem_text("recipes.conf", &ps.v[i]);
		fprintf(out, "%s\n", text);
		free(text);
	}
	n += (int)ps.n;
	problems_free(&ps);
	config_free(&c);
	return n;
}

static char *config_problem_text(const char *path, const struct problem *pr)
{
	/* The path was typed and the message may quote the file's bytes:
	 * shown as text, so that no escape sequence reaches a terminal. */
	char *raw = pr->line > 0 ? xasprintf("%s:%d: %s", path, pr->line, pr->msg)
	                         : xasprintf("%s: %s", path, pr->msg);
	char *text = sanitize_quote_str(raw);
	free(raw);
	return text;
}

int config_load(struct config *c, const char *path, struct err *e)
{
	struct problems ps = { 0 };
	char *file = path ? xstrdup(path) : config_default_path();

	config_init_defaults(c);
	c->path = file;
	config_parse(file, c, &ps, NULL);
	if (ps.n > 0) {
		char *text = config_problem_text(file, &ps.v[0]);
		err_set(e, "%s", text);
		free(text);
		problems_free(&ps);
		/* Leave c as the defaults, safe to use or free. */
		file = xstrdup(file);
		config_free(c);
		config_init_defaults(c);
		c->path = file;
		return -1;
	}
	return 0;
}

/* Where config_check_fn's reports go: a problem at the key's line. */
struct config_more {
	struct problems *ps;
	struct spots spots;
};

static void config_more_report(void *rctx, const char *section, const char *key, int n,
                               const char *msg)
{
	struct config_more *m = rctx;
	problem_add(m->ps, config_line(&m->spots, section, NULL, key, n), "%s", msg);
}

int config_check(const char *path, FILE *out, config_check_fn *more)
{
	struct problems ps = { 0 }, warn = { 0 };
	struct config c;
	char *file = path ? xstrdup(path) : config_default_path();
	size_t i;
	int count;

	config_init_defaults(&c);
	int missing = config_parse(file, &c, &ps, &warn) == 1;
	if (missing && path)
		problem_add(&ps, 0, _("no such file; create it or name another file"));
	if (more) {
		struct config_more m = { .ps = &ps };
		struct buf text = { 0 };
		if (!missing && config_read(file, &text) == 0)
			config_scan(text.data ? text.data : "", text.len, &m.spots);
		more(&c, config_more_report, &m);
		spots_free(&m.spots);
		buf_free(&text);
		/* Found after the file's own, but told in line order. */
		if (ps.n > 1)  /* qsort of a NULL array is undefined, even empty */
			qsort(ps.v, ps.n, sizeof *ps.v, problem_cmp);
	}
	for (i = 0; i < ps.n; i++) {
		char *text = config_problem_text(file, &ps.v[i]);
		fprintf(out, "%s\n", text);
		free(text);
	}
	/* Warnings are printed, not counted. */
	for (i = 0; i < warn.n; i++) {
		char *text = config_problem_text(file, &warn.v[i]);
		fprintf(out, "%s\n", text);
		free(text);
	}
	count = (int)ps.n;
	problems_free(&ps);
	problems_free(&warn);
	config_free(&c);
	free(file);
	return count;
}

/* ---- the manual ---- */

/* The form of k's value in words, as the manual gives it. */
static const char *config_key_type(const struct config_key *k, char *buf, size_t n)
{
	if (k->doc)
		return k->doc;
	switch (k->type) {
	case KT_INT:
		snprintf(buf, n, "integer, %llu to %llu", k->lo, k->hi);
		return buf;
	case KT_PORT:
		return "integer, 1 to 65535";
	case KT_BOOL:
		return "boolean";
	case KT_SIZE:
		if (k->lo) {
			char least[32];
			units_format_size(k->lo, least, sizeof least);
			snprintf(buf, n, "size, at least %s", least);
			return buf;
		}
		return "size";
	case KT_PATH:
		return "absolute path";
	case KT_ENV:
		return "environment variable name";
	case KT_WORD:
		return "word";
	case KT_PRICE:
		return "amount";
	case KT_TEXT:
	case KT_OPT_TEXT:
		return "string";
	case KT_CUSTOM:
		break;
	}
	return NULL;
}

int config_key_info(size_t i, struct config_key_info *info)
{
	const struct config_key *k;

	if (i >= sizeof config_keys / sizeof config_keys[0])
		return -1;
	k = &config_keys[i];
	memset(info, 0, sizeof *info);
	info->section = k->section;
	info->key = k->key;
	info->type = config_key_type(k, info->type_buf, sizeof info->type_buf);
	info->def = k->def;
	info->help = k->help;
	return 0;
}

/* Writes man(7) text that is not already a line of its own. */
static void config_man_text(FILE *out, const char *text)
{
	size_t n = strlen(text);
	fputs(text, out);
	if (n && text[n - 1] != '\n')
		fputc('\n', out);
}

void config_write_man(FILE *out)
{
	for (size_t s = 0; s < sizeof config_sections / sizeof config_sections[0]; s++) {
		const struct config_section *sec = &config_sections[s];
		int any = 0;
		for (size_t i = 0; i < sizeof config_keys / sizeof config_keys[0]; i++) {
			const struct config_key *k = &config_keys[i];
			char buf[64];
			if (strcmp(k->section, sec->name) != 0)
				continue;
			if (!any++) {
				fprintf(out, ".SS %s\n", sec->title);
				if (sec->intro)
					config_man_text(out, sec->intro);
			}
			if (k->group) {
				fputs(".PP\n", out);
				config_man_text(out, k->group);
			}
			/* The key in bold, its form and default after it. */
			fputs(".TP\n.BR ", out);
			for (const char *c = k->key; *c; c++) {
				if (*c == '-')
					fputc('\\', out);
				fputc(*c, out);
			}
			fprintf(out, " \" (%s; %s%s)\"\n", config_key_type(k, buf, sizeof buf),
			        !k->def ? "required" : strncmp(k->def, "required", 8) == 0 ? "" : "default ",
			        k->def ? k->def : "");
			config_man_text(out, k->help);
		}
	}
}
