#include "autoconfig.h"
#include "config.h"
#include "config_int.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <git2.h>
#include <pthread.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
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

/* Largest config file read: far more than any real configuration. */
#define CONFIG_MAX_SIZE (1024 * 1024)

/* ---- problems: every error found, with its line ---- */

void config_problem_add(struct problems *ps, int line, const char *fmt, ...)
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


char *config_credential_path(const char *file)
{
	if (file[0] == '/')
		return xstrdup(file);
	const char *dir = getenv("CREDENTIALS_DIRECTORY");
	return dir && *dir ? xasprintf("%s/%s", dir, file) : NULL;
}

/* Each distinct token value read from a file, kept for the process's
 * life: callers hold the pointer while they connect, and another thread
 * may read the file again (rotated) meanwhile. */
static struct kept_token {
	struct kept_token *next;
	char value[];
} *kept_tokens;
static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;

static const char *token_from_file(const char *file)
{
	if (!file)
		return NULL;
	char *path = config_credential_path(file);
	if (!path)
		return NULL;
	struct err e;
	char *v = config_secret(NULL, path, &e);
	free(path);
	if (!v)
		return NULL;
	pthread_mutex_lock(&kept_lock);
	struct kept_token *k = kept_tokens;
	while (k && strcmp(k->value, v))
		k = k->next;
	if (!k) {
		size_t n = strlen(v) + 1;
		k = xmalloc(sizeof *k + n);
		memcpy(k->value, v, n);
		k->next = kept_tokens;
		kept_tokens = k;
	}
	pthread_mutex_unlock(&kept_lock);
	explicit_bzero(v, strlen(v));
	free(v);
	return k->value;
}

const char *config_repo_token(const struct repo_conf *r)
{
	const char *v = getenv(r->token_env ? r->token_env : "PADDOCK_GIT_TOKEN");
	return v && *v ? v : token_from_file(r->token_file);
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
	return v && *v ? v : token_from_file(r->github_token_file);
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

void config_set_str(char **dst, const char *value)
{
	free(*dst);
	*dst = xstrdup(value);
}

void config_strv_add(char ***v, size_t *n, const char *value)
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
	c->kube.host_users = 1;
	c->kube.start_timeout = 300;
	c->kube.resume_timeout = 60;
	c->kube.max_pods = 100;
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

void config_strv_free(char **v, size_t n)
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
	free(r->token_file);
	free(r->ssh_key);
	free(r->ssh_known_hosts);
	free(r->branch_prefix);
	config_strv_free(r->protected_, r->nprotected);
	free(r->pull_request);
	free(r->github_repo);
	free(r->github_api);
	free(r->github_token_env);
	free(r->github_token_file);
	free(r->github_issues);
	free(r->github_handle);
	config_strv_free(r->github_reviewers, r->ngithub_reviewers);
	config_strv_free(r->reviewers, r->nreviewers);
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
	free(c->source);
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
	free(c->kube.kubeconfig);
	free(c->kube.context);
	free(c->kube.namespace);
	free(c->kube.image);
	free(c->kube.runner_image);
	free(c->kube.runner_path);
	free(c->kube.door_listen);
	free(c->kube.door);
	free(c->kube.door_cidr);
	free(c->kube.runtime_class);
	free(c->kube.audience);
	config_strv_free(c->kube.probe, c->kube.nprobe);
	free(c->api_listen);
	free(c->api_metrics_listen);
	free(c->remote_server);
	free(c->remote_token_file);
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

struct repo_conf *config_repo_slot(struct config *c, const char *name)
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
	c->repos[c->nrepos].gate_reminder = -1;
	c->repos[c->nrepos].max_at_review = -1;
	return &c->repos[c->nrepos++];
}

struct agent_conf *config_agent_slot(struct config *c, const char *name)
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

/* ---- the entries seen ---- */

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


/* 1 the first time section/sub is reported. */
static int config_first_report(struct parse *p, const char *section, const char *sub)
{
	/* \x01 cannot occur in a section name. */
	char *tag = xasprintf("%s\x01%s", section, sub ? sub : "\x01");
	int first = config_seen(p->reported, tag) == 1;
	free(tag);
	return first;
}


/* ---- dispatch ----
 *
 * The key table, its types and its setters are config_keys.c's. */

static const struct config_section *config_section_find(const char *name)
{
	for (size_t i = 0; i < config_nsections; i++)
		if (strcmp(config_sections[i].name, name) == 0)
			return &config_sections[i];
	return NULL;
}

static const struct config_key *config_key_find(const char *section, const char *key)
{
	for (size_t i = 0; i < config_nkeys; i++)
		if (strcmp(config_keys[i].section, section) == 0 && strcmp(config_keys[i].key, key) == 0)
			return &config_keys[i];
	return NULL;
}

/* The section closest to s (a typo suggestion), or NULL. */
static const char *config_suggest_section(const char *s)
{
	const char *best = NULL;
	size_t bestd = 3;   /* at most two edits away */
	for (size_t i = 0; i < config_nsections; i++) {
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
	for (size_t i = 0; i < config_nkeys; i++) {
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
		config_problem_add(p->ps, line, _("'%s' is outside any section; put it under a section header such as [paddock]"), name);
		return;
	}
	section = xstrndup(name, (size_t)(dot1 - name));
	if (dot2 > dot1)
		sub = xstrndup(dot1 + 1, (size_t)(dot2 - dot1 - 1));
	key = dot2 + 1;
	line = config_line(p->spots, section, sub, key, n);

	if (strcmp(section, "include") == 0 || strcmp(section, "includeif") == 0) {
		if (config_first_report(p, section, sub))
			config_problem_add(p->ps, config_line(p->spots, section, sub, NULL, 1),
				           _("[%s] is not supported; put every setting in this file"), section);
		goto out;
	}
	sec = config_section_find(section);
	if (!sec) {
		if (config_first_report(p, section, sub)) {
			int hl = config_line(p->spots, section, sub, NULL, 1);
			sugg = config_suggest_section(section);
			if (sugg)
				config_problem_add(p->ps, hl ? hl : line, _("unknown section '%s'; did you mean '%s'?"), section, sugg);
			else
				config_problem_add(p->ps, hl ? hl : line, _("unknown section '%s'; known sections are paddock, limits, sandbox, repo, agent, endpoint, price, gateway, api, token, webhook, ui and bind"), section);
		}
		goto out;
	}
	if (sec->named && !sub) {
		if (config_first_report(p, section, sub))
			config_problem_add(p->ps, config_line(p->spots, section, NULL, NULL, 1),
				           _("[%s] needs a name: write [%s \"NAME\"]"), section, section);
		goto out;
	}
	if (!sec->named && sub) {
		if (config_first_report(p, section, sub))
			config_problem_add(p->ps, config_line(p->spots, section, sub, NULL, 1),
				           _("[%s \"%s\"]: section %s takes no name; write [%s]"), section, sub, section, section);
		goto out;
	}
	if (strcmp(section, "price") == 0 && !config_model_name_valid(sub)) {
		if (config_first_report(p, section, sub))
			config_problem_add(p->ps, config_line(p->spots, section, sub, NULL, 1),
				           _("invalid model name '%s': use up to 128 letters, digits, '.', '_', ':', '/', '@' and '-', optionally ending in '*'"), sub);
		goto out;
	}
	if (sec->named && strcmp(section, "price") != 0 && !config_name_valid(sub)) {
		if (config_first_report(p, section, sub))
			config_problem_add(p->ps, config_line(p->spots, section, sub, NULL, 1),
				           _("invalid %s name '%s': use up to 64 letters, digits, '.', '_' and '-', starting with a letter or digit"), section, sub);
		goto out;
	}
	if (sec->any_key) {
		/* [bind]: the dashboard checks the request names and keys. */
		if (!value) {
			config_problem_add(p->ps, line, _("'%s' needs a value: write %s = KEYS"), name, key);
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
			config_problem_add(p->ps, line, _("unknown key '%s'; did you mean '%s.%s.%s'?"), name, section, sub, sugg);
		else if (sugg)
			config_problem_add(p->ps, line, _("unknown key '%s'; did you mean '%s.%s'?"), name, section, sugg);
		else
			config_problem_add(p->ps, line, _("unknown key '%s'"), name);
		goto out;
	}
	if (!value) {
		config_problem_add(p->ps, line, _("'%s' needs a value: write %s = VALUE"), name, key);
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
		config_problem_add(ps, 0, "%s", msg);
		return;
	}
	if (strncmp(msg, prefix, strlen(prefix)) == 0)
		msg += strlen(prefix);
	what = xstrndup(msg, (size_t)(in - msg));
	if (col > 0)
		config_problem_add(ps, (int)line, _("syntax error: %s (column %d)"), what, col);
	else
		config_problem_add(ps, (int)line, _("syntax error: %s"), what);
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
				config_problem_add(warn, config_line(spots, "repo", r->name, keys[k], 1),
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
				config_problem_add(ps, config_line(spots, "agent", a->name, keys[k], 1), "%s",
				                   e.msg);
			agent_cmdline_free(&cl);
		}
		for (size_t f = 0; f < a->nfiles; f++)
			if (agent_check_listed(a->name, a->files[f], &e) < 0)
				config_problem_add(ps, config_line(spots, "agent", a->name, "files", 1), "%s",
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
			config_problem_add(warn, config_line(spots, "limits", NULL, "budget", 1),
			                   _("warning: a key is set for %s, and no budget limits what a task spends with it; set limits.budget (for example 5) or limits.budget-tokens, or give tasks paddock add --budget"),
			                   with.data);
		buf_free(&with);
	}
	/* The gateway's uid should be nobody else's (an account of that name
	 * is the admin's way to name it). */
	struct passwd *pw = getpwuid(c->gw_uid);
	if (pw && strcmp(pw->pw_name, "paddock-gateway") != 0)
		config_problem_add(warn, config_line(spots, "gateway", NULL, "uid", 1),
		                   _("warning: gateway.uid %lu is the account %s's; choose a uid that no account uses (or name its account paddock-gateway)"),
		                   (unsigned long)c->gw_uid, pw->pw_name);
	if (c->limits.cpus_set && online > 0 && c->limits.cpus > (double)online)
		config_problem_add(warn, config_line(spots, "limits", NULL, "cpus", 1),
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
			config_problem_add(ps, config_line(spots, "repo", r->name, "approval", 1),
			                   _("repo '%s': approval = %s needs a test command; add test = "
			                     "COMMAND, or use review"), r->name,
			                   config_approval_name(r->approval));
	}
	for (size_t i = 0; i < c->nrecipes; i++) {
		const struct recipe_conf *r = &c->recipes[i];
		if (!r->prompt) {
			config_problem_add(ps, config_line(spots, "recipe", r->name, NULL, 1),
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
				config_problem_add(ps, config_line(spots, "recipe", r->name, "prompt", 1),
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
			config_problem_add(ps, config_line(spots, "github", NULL, "webhook-secret-file", 1),
				           _("github: webhook-secret-env and webhook-secret-file are both set; keep one"));
		return;
	}
	if (r->pull_request && !r->github_repo)
		config_problem_add(ps, config_line(spots, "repo", r->name, "pull-request", 1),
			           _("repo '%s' opens pull requests on GitHub but names no repository; add github-repo = OWNER/NAME"),
			           r->name);
	if ((r->github_issues || r->github_handle || r->ngithub_reviewers ||
	     r->github_follow == 1) && !r->github_repo)
		config_problem_add(ps, config_line(spots, "repo", r->name, NULL, 1),
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
			config_problem_add(ps, spots.v[i].line,
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
			config_problem_add(ps, config_line(&spots, "repo", r->name, NULL, 1),
				           _("repo '%s' has no url; add url = PATH-OR-URL under [repo \"%s\"]"),
				           r->name, r->name);
		config_repo_defaults(r);
		config_github_checks(c, r, &spots, ps);
	}
	config_github_checks(c, NULL, &spots, ps);
	for (i = 0; i < c->nagents; i++) {
		const struct agent_conf *a = &c->agents[i];
		if (!a->command)
			config_problem_add(ps, config_line(&spots, "agent", a->name, NULL, 1),
				           _("agent '%s' has no command; add command = COMMAND under [agent \"%s\"]"),
				           a->name, a->name);
		if (a->endpoint && !config_find_endpoint(c, a->endpoint))
			config_problem_add(ps, config_line(&spots, "agent", a->name, "endpoint", 1),
				           _("agent '%s' uses endpoint '%s', which is not defined; add [endpoint \"%s\"] or use anthropic or openai"),
				           a->name, a->endpoint, a->endpoint);
	}
	config_workflow_checks(c, &spots, ps);
	for (i = 0; i < c->ntokens; i++)
		if (!c->tokens[i].value_env && !c->tokens[i].value_file)
			config_problem_add(ps, config_line(&spots, "token", c->tokens[i].name, NULL, 1),
				           _("token '%s' has no value; add value-env = VARIABLE or value-file = PATH (never the token itself)"),
				           c->tokens[i].name);
	for (i = 0; i < c->nendpoints; i++) {
		const struct endpoint_conf *ep = &c->endpoints[i];
		if (!ep->upstream)
			config_problem_add(ps, config_line(&spots, "endpoint", ep->name, NULL, 1),
				           _("endpoint '%s' has no upstream; add upstream = URL under [endpoint \"%s\"]"),
				           ep->name, ep->name);
		if (!ep->port)
			config_problem_add(ps, config_line(&spots, "endpoint", ep->name, NULL, 1),
				           _("endpoint '%s' has no port; add port = N (the port the sandbox reaches it on, such as 8083)"),
				           ep->name);
		for (size_t j = 0; j < i; j++)
			if (ep->port && c->endpoints[j].port == ep->port)
				config_problem_add(ps, config_line(&spots, "endpoint", ep->name, "port", 1),
					           _("endpoints '%s' and '%s' both use port %d; give each its own"),
					           c->endpoints[j].name, ep->name, ep->port);
		if (ep->port && ep->port == c->gw_proxy_port)
			config_problem_add(ps, config_line(&spots, "endpoint", ep->name, "port", 1),
				           _("endpoint '%s' uses port %d, which is the proxy's (gateway.proxy-port)"),
				           ep->name, ep->port);
	}
	/* (The built-in definitions are parsed without the defaults: 0.) */
	if (c->gw_uid && (c->gw_uid == c->sandbox_uid || c->gw_gid == c->sandbox_gid)) {
		const char *k = c->gw_uid == c->sandbox_uid ? "uid" : "gid";
		int line = config_line(&spots, "gateway", NULL, k, 1);
		config_problem_add(ps, line ? line : config_line(&spots, "sandbox", NULL, k, 1),
			           _("gateway.uid and gateway.gid must differ from sandbox.uid and sandbox.gid (%lu, %lu): a sandbox could signal the gateway that holds the keys; choose other ids"),
			           (unsigned long)c->sandbox_uid, (unsigned long)c->sandbox_gid);
	}
	if (c->wh_secret_env && c->wh_secret_file)
		config_problem_add(ps, config_line(&spots, "webhook", NULL, "secret-file", 1),
			           _("webhook: secret-env and secret-file are both set; keep one"));
	if (!c->wh_url && config_line(&spots, "webhook", NULL, NULL, 1))
		config_problem_add(ps, config_line(&spots, "webhook", NULL, NULL, 1),
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
			config_problem_add(ps, 0, _("cannot read the configuration: %s"), why);
			free(why);
		}
		buf_free(&text);
		return missing;
	}
	config_parse_text(path, text.data ? text.data : "", text.len, c, ps, warn);
	/* Kept for the supervisors this process starts (config_load_text). */
	free(c->source);
	c->source_len = text.len;
	c->source = text.data ? text.data : xstrdup("");
	return 0;
}

static void config_parse_bytes(const char *text, size_t len, struct config *c,
                               struct problems *ps);

/* Parses text, which is no file, into c: libgit2 reads it from a memfd
 * (or, where /proc is missing, from a temporary file). */
static void config_parse_string(const char *text, struct config *c, struct problems *ps)
{
	config_parse_bytes(text, strlen(text), c, ps);
}

static void config_parse_bytes(const char *text, size_t len, struct config *c,
                               struct problems *ps)
{
	char path[64], *tmp = NULL;
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
			config_problem_add(ps, 0, _("cannot write the built-in definitions to %s: %s"), tmp, why);
			free(why);
			free(tmp);
			return;
		}
		snprintf(path, sizeof path, "%s", tmp);
	}
	if (fsx_write_all(fd, text, len) < 0) {
		char *why = xstrdup(strerror(errno));
		config_problem_add(ps, 0, _("cannot write the built-in definitions to %s: %s"), path, why);
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

/* The first problem into e, c left as the defaults (path kept). */
static int config_load_failed(struct config *c, const char *file, struct problems *ps,
                              struct err *e)
{
	char *text = config_problem_text(file, &ps->v[0]);
	err_set(e, "%s", text);
	free(text);
	problems_free(ps);
	char *keep = xstrdup(file);
	config_free(c);
	config_init_defaults(c);
	c->path = keep;
	return -1;
}

int config_load_text(struct config *c, const char *path, const char *text, size_t len,
                     struct err *e)
{
	struct problems ps = { 0 };
	config_init_defaults(c);
	c->path = xstrdup(path);
	if (!text)
		return 0;
	config_parse_bytes(text, len, c, &ps);
	if (ps.n > 0)
		return config_load_failed(c, path, &ps, e);
	c->source = xmalloc(len + 1);
	memcpy(c->source, text, len);
	c->source[len] = 0;
	c->source_len = len;
	return 0;
}

int config_pass_fd(const struct config *c, struct err *e)
{
	if (!c->source)
		return -1;
	int fd = memfd_create("paddock-config", MFD_CLOEXEC);
	if (fd >= 0 && fsx_write_all(fd, c->source, c->source_len) == 0 &&
	    lseek(fd, 0, SEEK_SET) == 0)
		return fd;
	err_errno(e, _("cannot pass the configuration to a process paddock starts"));
	if (fd >= 0)
		close(fd);
	return -1;
}

int config_load_fd(struct config *c, const char *path, int fd, struct err *e)
{
	struct buf text = {0};
	if (fd >= 0) {
		char chunk[8192];
		ssize_t got;
		while ((got = read(fd, chunk, sizeof chunk)) != 0) {
			if (got < 0 && errno == EINTR)
				continue;
			if (got < 0) {
				int saved = errno;
				buf_free(&text);
				close(fd);
				config_init_defaults(c);
				c->path = xstrdup(path);
				errno = saved;
				return err_errno(e, _("cannot read the configuration"));
			}
			buf_add(&text, chunk, (size_t)got);
		}
		close(fd);
	}
	int rc = config_load_text(c, path, fd < 0 ? NULL : text.data ? text.data : "", text.len, e);
	buf_free(&text);
	return rc;
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
	config_problem_add(m->ps, config_line(&m->spots, section, NULL, key, n), "%s", msg);
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
		config_problem_add(&ps, 0, _("no such file; create it or name another file"));
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
	case KT_DURATION:
		return "duration";
	case KT_CUSTOM:
		break;
	}
	return NULL;
}

int config_key_info(size_t i, struct config_key_info *info)
{
	const struct config_key *k;

	if (i >= config_nkeys)
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
	for (size_t s = 0; s < config_nsections; s++) {
		const struct config_section *sec = &config_sections[s];
		int any = 0;
		for (size_t i = 0; i < config_nkeys; i++) {
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
