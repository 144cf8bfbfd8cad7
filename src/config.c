#include "autoconfig.h"
#include "config.h"
#include "egress.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <git2.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent.h"
#include "buf.h"
#include "fsx.h"
#include "i18n.h"
#include "mirror.h"
#include "sandbox.h"
#include "units.h"

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

static const char *const paddock_keys[] = { "workers", "gate-timeout", "template-max-age",
                                             "max-attempts", NULL };
static const char *const limits_keys[] = {
	"timeout", "memory", "pids", "disk", "output", "bundle", "budget", "budget-tokens", "cpus",
	NULL };
static const char *const endpoint_keys[] = { "kind", "upstream", "key-env", "key-file", "port",
	NULL };
static const char *const price_keys[] = { "input", "output", "cache-read", "cache-write", NULL };
static const char *const api_keys[] = { "listen", "max-queue", "max-body", NULL };
static const char *const token_keys[] = { "value-env", "value-file", "read-only", NULL };
static const char *const gateway_keys[] = { "hosts-file", "dns", "ca-file", "allow-address",
	"proxy-port", "max-body", "max-tunnels", "network", "tunnel-idle", NULL };
static const char *const webhook_keys[] = { "url", "secret-env", "secret-file", "events",
	"timeout", "attempts", NULL };
static const char *const sandbox_keys[] = { "uid", "gid", NULL };
static const char *const repo_keys[] = { "url", "branch", "test", "setup",
	"push-url", "token-env", "ssh-key", "ssh-known-hosts", "branch-prefix", "protected",
	"pull-request", "github-repo", "github-api", "github-token-env", "draft", "deny",
	"max-file-size", "policy-paths", "policy-secrets", "policy-size", "policy-symlinks",
	"policy-submodules", "policy-controls", "policy-invisible", "policy-authors", "allow-host",
	"setup-allow-host", NULL };
static const char *const agent_keys[] = { "command", "resume", "kind", "endpoint", "package",
	"model", "files", NULL };
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
static const char *const ui_keys[] = { "theme", "notify-command", NULL };
static const char *const sections[] = {
	"paddock", "limits", "sandbox", "repo", "agent", "ui", "bind", "endpoint", "price",
	"gateway", "api", "token", "webhook", NULL };

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

/* The ready-made agents: the pinned npm package `paddock agent install`
 * fetches, driven headless with their own permission prompts off (the
 * sandbox is the boundary).  Edited by [agent "NAME"] keys in the file. */
static const struct builtin_agent {
	const char *name, *endpoint, *package, *model, *command, *resume;
	enum agent_kind kind;
} builtin_agents[] = {
	{ "claude", "anthropic", "@anthropic-ai/claude-code@2.1.332", NULL,
	  "claude -p {prompt} --model {model} --output-format stream-json --verbose "
	  "--dangerously-skip-permissions",
	  "claude -p {prompt} --resume {session} --model {model} --output-format stream-json "
	  "--verbose --dangerously-skip-permissions", AGENT_CLAUDE },
	{ "codex", "openai", "@openai/codex@0.171.0", "gpt-5.5",
	  "codex exec --json --dangerously-bypass-approvals-and-sandbox --skip-git-repo-check "
	  "{prompt}",
	  "codex exec --json --dangerously-bypass-approvals-and-sandbox --skip-git-repo-check "
	  "resume {session} {prompt}", AGENT_CODEX },
	{ "pi", "anthropic", "@mariozechner/pi-coding-agent@0.73.1", "claude-sonnet-4-5",
	  "pi --mode json --provider paddock --model {model} {prompt}",
	  "pi --mode json --provider paddock --model {model} --session {session} {prompt}",
	  AGENT_PI },
	{ "opencode", "anthropic", "opencode-ai@1.18.33", "anthropic/claude-sonnet-4-5",
	  "opencode run --format json --auto --model {model} {prompt}",
	  "opencode run --format json --auto --model {model} --session {session} {prompt}",
	  AGENT_OPENCODE },
};

/* List prices (USD per million tokens, 2025); [price "MODEL"] overrides.
 * claude-opus-5*: the input and output prices that Claude Code 2.1.332
 * itself charges claude-opus-5-5, its default model, in its reported
 * costs (cost basis "list"); cache at the usual 0.1 and 1.25 times input. */
static const struct price_conf builtin_prices[] = {
	{ "claude-opus-5*", 4, 20, 0.4, 5 },
	{ "claude-opus-4*", 15, 75, 1.5, 18.75 },
	{ "claude-sonnet-4*", 3, 15, 0.3, 3.75 },
	{ "claude-haiku-4*", 1, 5, 0.1, 1.25 },
	{ "claude-3-5-haiku*", 0.8, 4, 0.08, 1 },
	{ "gpt-5*", 1.25, 10, 0.125, 0 },
};

static void config_add_builtins(struct config *c)
{
	static const struct { const char *name, *upstream, *key_env; enum endpoint_kind kind;
	                      int port; } eps[] = {
		{ "anthropic", "https://api.anthropic.com", "ANTHROPIC_API_KEY", ENDPOINT_ANTHROPIC,
		  8081 },
		{ "openai", "https://api.openai.com", "OPENAI_API_KEY", ENDPOINT_OPENAI, 8082 },
	};
	c->endpoints = xcalloc(2, sizeof *c->endpoints);
	for (size_t i = 0; i < 2; i++) {
		struct endpoint_conf *ep = &c->endpoints[c->nendpoints++];
		ep->name = xstrdup(eps[i].name);
		ep->upstream = xstrdup(eps[i].upstream);
		ep->key_env = xstrdup(eps[i].key_env);
		ep->kind = eps[i].kind;
		ep->port = eps[i].port;
	}
	size_t na = sizeof builtin_agents / sizeof builtin_agents[0];
	c->agents = xcalloc(na, sizeof *c->agents);
	for (size_t i = 0; i < na; i++) {
		struct agent_conf *a = &c->agents[c->nagents++];
		a->name = xstrdup(builtin_agents[i].name);
		a->command = xstrdup(builtin_agents[i].command);
		a->resume = xstrdup(builtin_agents[i].resume);
		a->endpoint = xstrdup(builtin_agents[i].endpoint);
		a->package = xstrdup(builtin_agents[i].package);
		a->model = builtin_agents[i].model ? xstrdup(builtin_agents[i].model) : NULL;
		a->kind = builtin_agents[i].kind;
		a->builtin = 1;
	}
	size_t np = sizeof builtin_prices / sizeof builtin_prices[0];
	c->prices = xcalloc(np, sizeof *c->prices);
	for (size_t i = 0; i < np; i++) {
		c->prices[i] = builtin_prices[i];
		c->prices[i].model = xstrdup(builtin_prices[i].model);
	}
	c->nprices = np;
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
	c->sandbox_uid = 64100;
	c->sandbox_gid = 64100;
	c->gate_timeout = 24 * 3600;
	c->template_max_age = 7 * 24 * 3600;
	c->gw_dns = 1;
	c->gw_proxy_port = 3128;
	c->gw_tunnel_idle = 600;
	c->gw_max_body = 32ULL << 20;
	c->gw_max_tunnels = 32;
	c->api_max_body = 1ULL << 20;
	c->wh_events = CONFIG_WEBHOOK_ALL;
	c->wh_timeout = 10;
	c->wh_attempts = 8;
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
	config_strv_free(r->deny, r->ndeny);
	config_strv_free(r->allow_hosts, r->nallow_hosts);
	config_strv_free(r->setup_allow_hosts, r->nsetup_allow_hosts);
	memset(r, 0, sizeof(*r));
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
	free(c->wh_url);
	free(c->wh_secret_env);
	free(c->wh_secret_file);
	free(c->ui_theme);
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

static char *config_dup_or_null(const char *s)
{
	return s ? xstrdup(s) : NULL;
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

static size_t config_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j;
	size_t row[64 + 1];

	if (la > 64 || lb > 64)
		return 99;
	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		size_t diag = row[0], tmp;
		row[0] = i;
		for (j = 1; j <= lb; j++) {
			size_t best = diag + (tolower((unsigned char)a[i - 1]) !=
					      tolower((unsigned char)b[j - 1]));
			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			tmp = row[j];
			row[j] = best;
			diag = tmp;
		}
	}
	return row[lb];
}

/* The known word closest to s (a typo suggestion), or NULL. */
static const char *config_suggest(const char *s, const char *const *known)
{
	const char *best = NULL;
	size_t bestd = 3;   /* at most two edits away */
	for (; *known; known++) {
		size_t d = config_distance(s, *known);
		if (d < bestd) {
			bestd = d;
			best = *known;
		}
	}
	return best;
}

static int config_in(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (strcmp(s, *list) == 0)
			return 1;
	return 0;
}

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

static void config_size_key(struct parse *p, int line, const char *key,
			    const char *value, uint64_t *dst)
{
	uint64_t v;
	if (units_parse_size(value, &v) < 0)
		problem_add(p->ps, line, _("limits.%s: '%s' is not a size; write a whole number of bytes with an optional k, m, g or t suffix (for example 4g or 512m)"), key, value);
	else
		*dst = v;
}

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

static void config_entry_limits(struct parse *p, int line, const char *key, const char *value)
{
	struct limits *l = &p->c->limits;
	unsigned long long v;

	if (strcmp(key, "timeout") == 0) {
		double secs;
		if (units_parse_duration(value, &secs) < 0)
			problem_add(p->ps, line, _("limits.timeout: '%s' is not a duration; write a whole number of seconds with an optional s, m, h or d suffix (for example 30m)"), value);
		else
			l->timeout = secs;
	} else if (strcmp(key, "memory") == 0) {
		config_size_key(p, line, key, value, &l->memory);
	} else if (strcmp(key, "pids") == 0) {
		if (config_parse_int(value, 1, 4194304, &v) < 0)
			problem_add(p->ps, line, _("limits.pids: '%s' is not a number of processes from 1 to 4194304"), value);
		else
			l->pids = (long)v;
	} else if (strcmp(key, "disk") == 0) {
		config_size_key(p, line, key, value, &l->disk);
	} else if (strcmp(key, "output") == 0) {
		config_size_key(p, line, key, value, &l->output);
	} else if (strcmp(key, "bundle") == 0) {
		config_size_key(p, line, key, value, &l->bundle);
	} else if (strcmp(key, "budget") == 0) {
		if (units_parse_money(value, &l->budget) < 0)
			problem_add(p->ps, line, _("limits.budget: '%s' is not an amount in US dollars; write for example 5 or 2.50 (0 for none)"), value);
	} else if (strcmp(key, "budget-tokens") == 0) {
		if (units_parse_count(value, &l->budget_tokens) < 0)
			problem_add(p->ps, line, _("limits.budget-tokens: '%s' is not a number of tokens; write for example 200000, 500k or 2m (0 for none)"), value);
	} else if (strcmp(key, "cpus") == 0) {
		double cpus;
		if (config_parse_cpus(value, &cpus) < 0) {
			problem_add(p->ps, line, _("limits.cpus: '%s' is not a number of CPUs; write for example 2 or 1.5 (from 0.01 to 4096, or 0 for no limit)"), value);
		} else {
			l->cpus = cpus;
			l->cpus_set = 1;
		}
	}
}

static void config_entry_sandbox(struct parse *p, int line, const char *key, const char *value)
{
	unsigned long long v;
	int is_uid = strcmp(key, "uid") == 0;

	if (value[0] == '0' && value[1] == '\0') {
		problem_add(p->ps, line, is_uid
			    ? _("sandbox.uid = 0 would run agents as root; choose an unused unprivileged uid such as 64100")
			    : _("sandbox.gid = 0 would give agents the root group; choose an unused unprivileged gid such as 64100"));
		return;
	}
	/* (uid_t)-1 means "no change" to chown and setresuid. */
	if (config_parse_int(value, 1, 4294967294ULL, &v) < 0) {
		problem_add(p->ps, line, _("sandbox.%s: '%s' is not a number from 1 to 4294967294"), key, value);
		return;
	}
	if (is_uid)
		p->c->sandbox_uid = (uid_t)v;
	else
		p->c->sandbox_gid = (gid_t)v;
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

/* The repo keys of pushing, pull requests and policy. */
static void config_entry_repo_more(struct parse *p, int line, struct repo_conf *r,
                                   const char *key, const char *value)
{
	const char *name = r->name;
	if (strcmp(key, "push-url") == 0) {
		if (value[0] == '\0' || value[0] == '-' || strstr(value, "::"))
			problem_add(p->ps, line, _("repo.%s.push-url: '%s' is not a usable path or URL; use a path, file://, https:// or ssh:// URL"), name, value);
		else
			config_set_str(&r->push_url, value);
	} else if (strcmp(key, "token-env") == 0 || strcmp(key, "github-token-env") == 0) {
		if (!config_env_name_valid(value))
			problem_add(p->ps, line, _("repo.%s.%s: '%s' is not an environment variable name; name the variable that holds the token, for example GITHUB_TOKEN (never the token itself)"), name, key, value);
		else
			config_set_str(key[0] == 't' ? &r->token_env : &r->github_token_env, value);
	} else if (strcmp(key, "ssh-key") == 0) {
		if (value[0] != '/')
			problem_add(p->ps, line, _("repo.%s.ssh-key: '%s' is not an absolute path to a private key file"), name, value);
		else
			config_set_str(&r->ssh_key, value);
	} else if (strcmp(key, "ssh-known-hosts") == 0) {
		if (value[0] != '/')
			problem_add(p->ps, line, _("repo.%s.ssh-known-hosts: '%s' is not an absolute path to a known_hosts file"), name, value);
		else
			config_set_str(&r->ssh_known_hosts, value);
	} else if (strcmp(key, "branch-prefix") == 0) {
		char *ref = xasprintf("refs/heads/%sx", value);
		int valid = 0;
		if (value[0] == '-' || value[0] == '\0' ||
		    git_reference_name_is_valid(&valid, ref) < 0 || !valid)
			problem_add(p->ps, line, _("repo.%s.branch-prefix: '%s' does not make valid branch names"), name, value);
		else
			config_set_str(&r->branch_prefix, value);
		free(ref);
	} else if (strcmp(key, "protected") == 0) {
		if (!value[0])
			problem_add(p->ps, line, _("repo.%s.protected: give a branch name or a glob pattern such as release/*"), name);
		else
			config_strv_add(&r->protected_, &r->nprotected, value);
	} else if (strcmp(key, "pull-request") == 0) {
		if (strcmp(value, "github") == 0)
			config_set_str(&r->pull_request, value);
		else if (strcmp(value, "none") == 0) {
			free(r->pull_request);
			r->pull_request = NULL;
		} else
			problem_add(p->ps, line, _("repo.%s.pull-request: '%s' is not known; use github or none"), name, value);
	} else if (strcmp(key, "allow-host") == 0 || strcmp(key, "setup-allow-host") == 0) {
		struct egress_rule rule;
		struct err e;
		if (egress_rule_parse(value, &rule, &e) < 0) {
			problem_add(p->ps, line, "repo.%s.%s: %s", name, key, e.msg);
		} else {
			egress_rule_free(&rule);
			if (key[0] == 'a')
				config_strv_add(&r->allow_hosts, &r->nallow_hosts, value);
			else
				config_strv_add(&r->setup_allow_hosts, &r->nsetup_allow_hosts, value);
		}
	} else if (strcmp(key, "github-repo") == 0) {
		const char *slash = strchr(value, '/');
		if (!slash || slash == value || !slash[1] || strchr(slash + 1, '/') ||
		    strspn(value, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./") != strlen(value))
			problem_add(p->ps, line, _("repo.%s.github-repo: '%s' is not OWNER/NAME"), name, value);
		else
			config_set_str(&r->github_repo, value);
	} else if (strcmp(key, "github-api") == 0) {
		if (strncmp(value, "https://", 8) != 0 && strncmp(value, "http://", 7) != 0)
			problem_add(p->ps, line, _("repo.%s.github-api: '%s' is not an http(s) URL; for GitHub Enterprise it looks like https://HOST/api/v3"), name, value);
		else
			config_set_str(&r->github_api, value);
	} else if (strcmp(key, "draft") == 0) {
		int b;
		if (git_config_parse_bool(&b, value) < 0)
			problem_add(p->ps, line, _("repo.%s.draft: '%s' is not true or false"), name, value);
		else
			r->draft = b;
	} else if (strcmp(key, "deny") == 0) {
		if (!value[0])
			problem_add(p->ps, line, _("repo.%s.deny: give a path or a glob pattern such as secrets/**"), name);
		else
			config_strv_add(&r->deny, &r->ndeny, value);
	} else if (strcmp(key, "max-file-size") == 0) {
		uint64_t v;
		if (units_parse_size(value, &v) < 0)
			problem_add(p->ps, line, _("repo.%s.max-file-size: '%s' is not a size (for example 10m)"), name, value);
		else
			r->max_file_size = v;
	} else if (strncmp(key, "policy-", 7) == 0) {
		int rule = -1;
		for (int i = 0; i < POLICY_NRULES; i++)
			if (strcmp(key + 7, policy_rule_names[i]) == 0)
				rule = i;
		if (rule < 0)
			return;
		if (strcmp(value, "block") == 0)
			r->policy[rule] = POLICY_BLOCK;
		else if (strcmp(value, "warn") == 0)
			r->policy[rule] = POLICY_WARN;
		else if (strcmp(value, "off") == 0)
			r->policy[rule] = POLICY_OFF;
		else
			problem_add(p->ps, line, _("repo.%s.%s: '%s' is not block, warn or off"), name, key, value);
	}
}

static void config_entry_repo(struct parse *p, int line, const char *sub,
			      const char *key, const char *value)
{
	struct repo_conf *r = config_repo_slot(p->c, sub);
	char **dst = NULL;

	if (strcmp(key, "url") == 0) {
		/* "ext::" and other remote helpers run commands. */
		if (value[0] == '\0' || value[0] == '-' || strstr(value, "::")) {
			problem_add(p->ps, line, _("repo.%s.url: '%s' is not a usable path or URL; use a path, file://, https:// or ssh:// URL"), sub, value);
			/* Stored all the same: the load fails anyway, and
			 * "has no url" would be a second, wrong message. */
		}
		dst = &r->url;
	} else if (strcmp(key, "branch") == 0) {
		char *ref = xasprintf("refs/heads/%s", value);
		int valid = 0;
		if (value[0] == '-' || git_reference_name_is_valid(&valid, ref) < 0 || !valid) {
			problem_add(p->ps, line, _("repo.%s.branch: '%s' is not a valid branch name"), sub, value);
			free(ref);
			return;
		}
		free(ref);
		dst = &r->branch;
	} else if (strcmp(key, "test") == 0) {
		dst = &r->test;
	} else if (strcmp(key, "setup") == 0) {
		dst = &r->setup;
	} else {
		config_entry_repo_more(p, line, r, key, value);
		return;
	}
	free(*dst);
	/* An empty test or setup means none. */
	*dst = value[0] || dst == &r->url ? xstrdup(value) : NULL;
}

/* files = PATH...: may be repeated; each value holds one or more paths,
 * split like a command (quote a path with spaces). */
static void config_agent_files(struct parse *p, int line, struct agent_conf *a,
                               const char *value)
{
	struct agent_cmdline words;
	struct err e;

	if (agent_cmdline_parse(value, &words, &e) < 0) {
		problem_add(p->ps, line, _("agent.%s.files: '%s' is not a list of absolute paths; write for example files = /opt/agent/config.json /opt/agent/lib.py"), a->name, value);
		return;
	}
	for (size_t i = 0; i < words.argc; i++) {
		if (!agent_file_path_ok(words.argv[i]))
			problem_add(p->ps, line, _("agent.%s.files: '%s' is not an absolute, normalised path outside /proc, /dev and /sys; name each host file by its full path"), a->name, words.argv[i]);
		else
			config_strv_add(&a->files, &a->nfiles, words.argv[i]);
	}
	agent_cmdline_free(&words);
}

static void config_entry_agent(struct parse *p, int line, const char *sub, const char *key,
                               const char *value)
{
	struct agent_cmdline cl;
	struct err e;
	struct agent_conf *a = config_agent_slot(p->c, sub);
	char **dst = strcmp(key, "resume") == 0 ? &a->resume : &a->command;

	a->builtin = 0;
	if (strcmp(key, "kind") == 0) {
		size_t k;
		for (k = 0; agent_kind_names[k] && strcmp(agent_kind_names[k], value) != 0; k++)
			;
		if (!agent_kind_names[k])
			problem_add(p->ps, line, _("agent.%s.kind: '%s' is not known; use script, claude, codex, pi or opencode"), sub, value);
		else
			a->kind = (enum agent_kind)k;
		return;
	}
	if (strcmp(key, "endpoint") == 0 || strcmp(key, "package") == 0 ||
	    strcmp(key, "model") == 0) {
		char **d = key[0] == 'e' ? &a->endpoint : key[0] == 'p' ? &a->package : &a->model;
		if (!value[0] || value[0] == '-' || strpbrk(value, " \t\n\"'\\"))
			problem_add(p->ps, line, _("agent.%s.%s: '%s' must be one word that does not start with '-'"), sub, key, value);
		else
			config_set_str(d, value);
		return;
	}
	if (strcmp(key, "files") == 0) {
		config_agent_files(p, line, a, value);
		return;
	}

	if (agent_cmdline_parse(value, &cl, &e) < 0)
		problem_add(p->ps, line, "agent.%s.%s: %s", sub, key, e.msg);
	else
		agent_cmdline_free(&cl);
	free(*dst);
	*dst = xstrdup(value);
}

static struct endpoint_conf *config_endpoint_slot(struct config *c, const char *name)
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

static int config_url_ok(const char *v)
{
	return (strncmp(v, "https://", 8) == 0 && v[8]) || (strncmp(v, "http://", 7) == 0 && v[7]);
}

static void config_entry_endpoint(struct parse *p, int line, const char *sub, const char *key,
                                  const char *value)
{
	struct endpoint_conf *ep = config_endpoint_slot(p->c, sub);
	unsigned long long v;

	if (strcmp(key, "kind") == 0) {
		if (strcmp(value, "anthropic") == 0)
			ep->kind = ENDPOINT_ANTHROPIC;
		else if (strcmp(value, "openai") == 0)
			ep->kind = ENDPOINT_OPENAI;
		else
			problem_add(p->ps, line, _("endpoint.%s.kind: '%s' is not known; use anthropic or openai (any OpenAI-compatible server)"), sub, value);
	} else if (strcmp(key, "upstream") == 0) {
		if (!config_url_ok(value) || strpbrk(value, " \t\r\n"))
			problem_add(p->ps, line, _("endpoint.%s.upstream: '%s' is not an http(s) URL such as https://api.anthropic.com"), sub, value);
		/* Kept all the same (the load fails): "has no upstream" would
		 * be a second, wrong message. */
		config_set_str(&ep->upstream, value);
	} else if (strcmp(key, "key-env") == 0) {
		if (!config_env_name_valid(value))
			problem_add(p->ps, line, _("endpoint.%s.key-env: '%s' is not a variable name"), sub, value);
		else
			config_set_str(&ep->key_env, value);
	} else if (strcmp(key, "key-file") == 0) {
		if (value[0] != '/')
			problem_add(p->ps, line, _("endpoint.%s.key-file: '%s' is not an absolute path"), sub, value);
		else
			config_set_str(&ep->key_file, value);
	} else if (strcmp(key, "port") == 0) {
		if (config_parse_int(value, 1, 65535, &v) < 0)
			problem_add(p->ps, line, _("endpoint.%s.port: '%s' is not a port from 1 to 65535"), sub, value);
		else
			ep->port = (int)v;
	}
}

static void config_entry_price(struct parse *p, int line, const char *sub, const char *key,
                               const char *value)
{
	struct price_conf *pr = NULL;
	double v;
	for (size_t i = 0; i < p->c->nprices; i++)
		if (strcmp(p->c->prices[i].model, sub) == 0)
			pr = &p->c->prices[i];
	if (!pr) {
		p->c->prices = xrealloc(p->c->prices, (p->c->nprices + 1) * sizeof(*p->c->prices));
		pr = &p->c->prices[p->c->nprices++];
		memset(pr, 0, sizeof *pr);
		pr->model = xstrdup(sub);
	}
	if (units_parse_money(value, &v) < 0) {
		problem_add(p->ps, line, _("price.%s.%s: '%s' is not a price in US dollars per million tokens (for example 3 or 0.30)"), sub, key, value);
		return;
	}
	if (strcmp(key, "input") == 0)
		pr->input = v;
	else if (strcmp(key, "output") == 0)
		pr->output = v;
	else if (strcmp(key, "cache-read") == 0)
		pr->cache_read = v;
	else
		pr->cache_write = v;
}

static void config_entry_gateway(struct parse *p, int line, const char *key, const char *value)
{
	struct config *c = p->c;
	unsigned long long v;

	if (strcmp(key, "hosts-file") == 0 || strcmp(key, "ca-file") == 0) {
		if (value[0] != '/')
			problem_add(p->ps, line, _("gateway.%s: '%s' is not an absolute path"), key, value);
		else
			config_set_str(key[0] == 'h' ? &c->gw_hosts_file : &c->gw_ca_file, value);
	} else if (strcmp(key, "dns") == 0) {
		int b;
		if (git_config_parse_bool(&b, value) < 0)
			problem_add(p->ps, line, _("gateway.dns: '%s' is not true or false"), value);
		else
			c->gw_dns = b;
	} else if (strcmp(key, "allow-address") == 0) {
		struct egress_cidr cidr;
		if (egress_cidr_parse(value, &cidr) < 0)
			problem_add(p->ps, line, _("gateway.allow-address: '%s' is not an address or CIDR such as 10.1.2.0/24 or fd00::/8"), value);
		else
			config_strv_add(&c->gw_allow_address, &c->ngw_allow_address, value);
	} else if (strcmp(key, "proxy-port") == 0) {
		if (config_parse_int(value, 1, 65535, &v) < 0)
			problem_add(p->ps, line, _("gateway.proxy-port: '%s' is not a port from 1 to 65535"), value);
		else
			c->gw_proxy_port = (int)v;
	} else if (strcmp(key, "max-body") == 0) {
		uint64_t b;
		if (units_parse_size(value, &b) < 0 || b < 1024)
			problem_add(p->ps, line, _("gateway.max-body: '%s' is not a size of at least 1k (for example 32m)"), value);
		else
			c->gw_max_body = b;
	} else if (strcmp(key, "tunnel-idle") == 0) {
		double secs;
		if (strcmp(value, "0") == 0)
			c->gw_tunnel_idle = 0;
		else if (units_parse_duration(value, &secs) < 0)
			problem_add(p->ps, line, _("gateway.tunnel-idle: '%s' is not a duration such as 10m or 90s (0 for no limit)"), value);
		else
			c->gw_tunnel_idle = secs;
	} else if (strcmp(key, "network") == 0) {
		if (strcmp(value, "auto") == 0)
			c->gw_network = GW_NETWORK_AUTO;
		else if (strcmp(value, "namespace") == 0)
			c->gw_network = GW_NETWORK_NAMESPACE;
		else if (strcmp(value, "bridge") == 0)
			c->gw_network = GW_NETWORK_BRIDGE;
		else
			problem_add(p->ps, line, _("gateway.network: '%s' is not auto, namespace or bridge"), value);
	} else if (strcmp(key, "max-tunnels") == 0) {
		if (config_parse_int(value, 1, 1024, &v) < 0)
			problem_add(p->ps, line, _("gateway.max-tunnels: '%s' is not a number from 1 to 1024"), value);
		else
			c->gw_max_tunnels = (int)v;
	}
}

static void config_entry_api(struct parse *p, int line, const char *key, const char *value)
{
	struct config *c = p->c;
	unsigned long long v;
	if (strcmp(key, "listen") == 0) {
		const char *colon = strrchr(value, ':');
		if (strspn(value, "0123456789") == strlen(value) &&
		    config_parse_int(value, 1, 65535, &v) == 0)
			config_set_str(&c->api_listen, value);  /* a port on loopback */
		else if (!colon || colon == value || config_parse_int(colon + 1, 1, 65535, &v) < 0)
			problem_add(p->ps, line, _("api.listen: '%s' is not ADDRESS:PORT such as 127.0.0.1:8700"), value);
		else
			config_set_str(&c->api_listen, value);
	} else if (strcmp(key, "max-queue") == 0) {
		if (config_parse_int(value, 0, 1000000, &v) < 0)
			problem_add(p->ps, line, _("api.max-queue: '%s' is not a number from 0 (no limit) to 1000000"), value);
		else
			c->api_max_queue = (int)v;
	} else if (strcmp(key, "max-body") == 0) {
		uint64_t b;
		if (units_parse_size(value, &b) < 0 || b < 1024)
			problem_add(p->ps, line, _("api.max-body: '%s' is not a size of at least 1k (for example 1m)"), value);
		else
			c->api_max_body = b;
	}
}

static void config_entry_token(struct parse *p, int line, const char *sub, const char *key,
                               const char *value)
{
	struct config *c = p->c;
	struct token_conf *t = NULL;
	for (size_t i = 0; i < c->ntokens; i++)
		if (strcmp(c->tokens[i].name, sub) == 0)
			t = &c->tokens[i];
	if (!t) {
		c->tokens = xrealloc(c->tokens, (c->ntokens + 1) * sizeof *c->tokens);
		t = &c->tokens[c->ntokens++];
		memset(t, 0, sizeof *t);
		t->name = xstrdup(sub);
	}
	if (strcmp(key, "value-env") == 0) {
		if (!config_env_name_valid(value))
			problem_add(p->ps, line, _("token.%s.value-env: '%s' is not a variable name"), sub, value);
		else
			config_set_str(&t->value_env, value);
	} else if (strcmp(key, "value-file") == 0) {
		if (value[0] != '/')
			problem_add(p->ps, line, _("token.%s.value-file: '%s' is not an absolute path"), sub, value);
		else
			config_set_str(&t->value_file, value);
	} else {
		int b;
		if (git_config_parse_bool(&b, value) < 0)
			problem_add(p->ps, line, _("token.%s.read-only: '%s' is not true or false"), sub, value);
		else
			t->read_only = b;
	}
}

char *config_token_value(const struct token_conf *t)
{
	struct err e;
	return config_secret(t->value_env, t->value_file, &e);
}

static void config_entry_webhook(struct parse *p, int line, const char *key, const char *value)
{
	struct config *c = p->c;
	unsigned long long v;

	if (strcmp(key, "url") == 0) {
		if (!config_url_ok(value) || strpbrk(value, " \t\r\n"))
			problem_add(p->ps, line, _("webhook.url: '%s' is not an http(s) URL such as https://chat.example.com/hooks/paddock"), value);
		/* Kept all the same (the load fails): "has no url" would be a
		 * second, wrong message. */
		config_set_str(&c->wh_url, value);
	} else if (strcmp(key, "secret-env") == 0) {
		if (!config_env_name_valid(value))
			problem_add(p->ps, line, _("webhook.secret-env: '%s' is not a variable name"), value);
		else
			config_set_str(&c->wh_secret_env, value);
	} else if (strcmp(key, "secret-file") == 0) {
		if (value[0] != '/')
			problem_add(p->ps, line, _("webhook.secret-file: '%s' is not an absolute path"), value);
		else
			config_set_str(&c->wh_secret_file, value);
	} else if (strcmp(key, "events") == 0) {
		/* The first events line replaces the default; later ones add. */
		if (!p->wh_events_seen)
			c->wh_events = 0;
		p->wh_events_seen = 1;
		char *list = xstrdup(value), *save = NULL;
		int any = 0;
		for (char *tok = strtok_r(list, ", \t", &save); tok; tok = strtok_r(NULL, ", \t", &save)) {
			any = 1;
			if (strcmp(tok, "review") == 0)
				c->wh_events |= CONFIG_WEBHOOK_REVIEW;
			else if (strcmp(tok, "failed") == 0)
				c->wh_events |= CONFIG_WEBHOOK_FAILED;
			else if (strcmp(tok, "done") == 0)
				c->wh_events |= CONFIG_WEBHOOK_DONE;
			else
				problem_add(p->ps, line, _("webhook.events: '%s' is not an event; use review, failed or done (several separated by commas)"), tok);
		}
		if (!any)
			problem_add(p->ps, line, _("webhook.events: '%s' names no event; use review, failed or done (several separated by commas)"), value);
		free(list);
	} else if (strcmp(key, "timeout") == 0) {
		double secs;
		if (units_parse_duration(value, &secs) < 0 || secs < 1 || secs > 600)
			problem_add(p->ps, line, _("webhook.timeout: '%s' is not a duration from 1s to 10m (for example 10s)"), value);
		else
			c->wh_timeout = secs;
	} else if (strcmp(key, "attempts") == 0) {
		if (config_parse_int(value, 1, 20, &v) < 0)
			problem_add(p->ps, line, _("webhook.attempts: '%s' is not a number from 1 to 20"), value);
		else
			c->wh_attempts = (int)v;
	}
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

/* Checks one entry "section[.sub].key" = value found at its n-th
 * occurrence. */
static void config_entry(struct parse *p, const char *name, const char *value, int n)
{
	const char *dot1 = strchr(name, '.'), *dot2 = strrchr(name, '.');
	char *section, *sub = NULL;
	const char *key;
	const char *const *known = NULL;
	const char *sugg;
	int line, needs_sub;

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
	if (!config_in(section, sections)) {
		if (config_first_report(p, section, sub)) {
			int hl = config_line(p->spots, section, sub, NULL, 1);
			sugg = config_suggest(section, sections);
			if (sugg)
				problem_add(p->ps, hl ? hl : line, _("unknown section '%s'; did you mean '%s'?"), section, sugg);
			else
				problem_add(p->ps, hl ? hl : line, _("unknown section '%s'; known sections are paddock, limits, sandbox, repo, agent, endpoint, price, gateway, api, token, webhook, ui and bind"), section);
		}
		goto out;
	}
	needs_sub = strcmp(section, "repo") == 0 || strcmp(section, "agent") == 0 ||
	            strcmp(section, "endpoint") == 0 || strcmp(section, "price") == 0 ||
	            strcmp(section, "token") == 0;
	if (needs_sub && !sub) {
		if (config_first_report(p, section, sub))
			problem_add(p->ps, config_line(p->spots, section, NULL, NULL, 1),
				    _("[%s] needs a name: write [%s \"NAME\"]"), section, section);
		goto out;
	}
	if (!needs_sub && sub) {
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
	if (needs_sub && strcmp(section, "price") != 0 && !config_name_valid(sub)) {
		if (config_first_report(p, section, sub))
			problem_add(p->ps, config_line(p->spots, section, sub, NULL, 1),
				    _("invalid %s name '%s': use up to 64 letters, digits, '.', '_' and '-', starting with a letter or digit"), section, sub);
		goto out;
	}
	if (strcmp(section, "bind") == 0) {
		/* The dashboard checks the request names and keys. */
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
	if (strcmp(section, "ui") == 0)
		known = ui_keys;
	else if (strcmp(section, "paddock") == 0)
		known = paddock_keys;
	else if (strcmp(section, "limits") == 0)
		known = limits_keys;
	else if (strcmp(section, "sandbox") == 0)
		known = sandbox_keys;
	else if (strcmp(section, "repo") == 0)
		known = repo_keys;
	else if (strcmp(section, "endpoint") == 0)
		known = endpoint_keys;
	else if (strcmp(section, "price") == 0)
		known = price_keys;
	else if (strcmp(section, "gateway") == 0)
		known = gateway_keys;
	else if (strcmp(section, "webhook") == 0)
		known = webhook_keys;
	else if (strcmp(section, "api") == 0)
		known = api_keys;
	else if (strcmp(section, "token") == 0)
		known = token_keys;
	else
		known = agent_keys;
	if (!config_in(key, known)) {
		sugg = config_suggest(key, known);
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
	if (strcmp(section, "paddock") == 0 && strcmp(key, "template-max-age") == 0) {
		double secs;
		if (strcmp(value, "0") == 0 || strcmp(value, "never") == 0)
			p->c->template_max_age = 0;
		else if (units_parse_duration(value, &secs) < 0 || secs <= 0)
			problem_add(p->ps, line, _("paddock.template-max-age: '%s' is not a duration (for example 7d, or never to keep templates)"), value);
		else
			p->c->template_max_age = secs;
		goto out;
	}
	if (strcmp(section, "paddock") == 0 && strcmp(key, "gate-timeout") == 0) {
		double secs;
		if (strcmp(value, "0") == 0)
			p->c->gate_timeout = 0;
		else if (units_parse_duration(value, &secs) < 0)
			problem_add(p->ps, line, _("paddock.gate-timeout: '%s' is not a duration (for example 24h, or 0 to tear sandboxes down at once)"), value);
		else
			p->c->gate_timeout = secs;
	} else if (strcmp(section, "paddock") == 0 && strcmp(key, "max-attempts") == 0) {
		unsigned long long v;
		if (config_parse_int(value, 1, 100, &v) < 0)
			problem_add(p->ps, line, _("paddock.max-attempts: '%s' is not a number from 1 to 100"), value);
		else
			p->c->max_attempts = (int)v;
	} else if (strcmp(section, "paddock") == 0) {
		unsigned long long v;
		if (config_parse_int(value, 1, 64, &v) < 0)
			problem_add(p->ps, line, _("paddock.workers: '%s' is not a number from 1 to 64"), value);
		else
			p->c->workers = (int)v;
	} else if (strcmp(section, "ui") == 0) {
		char **dst = strcmp(key, "theme") == 0 ? &p->c->ui_theme : &p->c->notify_command;
		if (dst == &p->c->ui_theme && (!config_name_valid(value)))
			problem_add(p->ps, line, _("ui.theme: '%s' is not a theme name"), value);
		else
			config_set_str(dst, value);
	} else if (strcmp(section, "limits") == 0) {
		config_entry_limits(p, line, key, value);
	} else if (strcmp(section, "sandbox") == 0) {
		config_entry_sandbox(p, line, key, value);
	} else if (strcmp(section, "repo") == 0) {
		config_entry_repo(p, line, sub, key, value);
	} else if (strcmp(section, "endpoint") == 0) {
		config_entry_endpoint(p, line, sub, key, value);
	} else if (strcmp(section, "price") == 0) {
		config_entry_price(p, line, sub, key, value);
	} else if (strcmp(section, "gateway") == 0) {
		config_entry_gateway(p, line, key, value);
	} else if (strcmp(section, "api") == 0) {
		config_entry_api(p, line, key, value);
	} else if (strcmp(section, "token") == 0) {
		config_entry_token(p, line, sub, key, value);
	} else if (strcmp(section, "webhook") == 0) {
		config_entry_webhook(p, line, key, value);
	} else {
		config_entry_agent(p, line, sub, key, value);
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

/* 1 when name (versioned: python3.11) runs the script its first operand
 * names, as agent.c decides which host file is an agent's script. */
static int config_is_interpreter(const char *argv0)
{
	static const char *const names[] = { "sh", "bash", "dash", "zsh", "ksh", "mksh", "fish",
		"python", "pypy", "node", "nodejs", "perl", "ruby", "php", "lua", "tclsh", NULL };
	const char *base = strrchr(argv0, '/');
	if (base && argv0[0] != '/')
		return 0;
	base = base ? base + 1 : argv0;
	size_t len = strlen(base);
	while (len > 0 && ((base[len - 1] >= '0' && base[len - 1] <= '9') || base[len - 1] == '.'))
		len--;
	for (size_t i = 0; names[i]; i++)
		if (strlen(names[i]) == len && strncmp(base, names[i], len) == 0)
			return 1;
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
	if (!config_is_interpreter(prog))
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
			if (urls[k] && mirror_local_url_check(r->name, keys[k], urls[k], &e) < 0)
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
	if (c->limits.cpus_set && online > 0 && c->limits.cpus > (double)online)
		problem_add(warn, config_line(spots, "limits", NULL, "cpus", 1),
		            _("warning: limits.cpus = %g is more than the %ld CPUs of this machine; a task may use them all"),
		            c->limits.cpus, online);
}

/* Parses path into c and collects every problem; with warn, also runs
 * config_host_checks.  Returns 1 when the file does not exist, else 0. */
static int config_parse(const char *path, struct config *c, struct problems *ps,
                        struct problems *warn)
{
	struct buf text = { 0 };
	struct spots spots = { 0 };
	struct seen seen = { 0 }, reported = { 0 };
	struct parse p = { 0 };
	git_config *cfg = NULL;
	git_config_iterator *it = NULL;
	git_config_entry *entry;
	size_t i;
	int missing = 0;

	if (config_read(path, &text) < 0) {
		if (errno == ENOENT) {
			missing = 1;
		} else {
			char *why = xstrdup(strerror(errno));
			problem_add(ps, 0, _("cannot read the configuration: %s"), why);
			free(why);
		}
		buf_free(&text);
		return missing;
	}
	config_scan(text.data ? text.data : "", text.len, &spots);
	/* libgit2 would read included files before we see the entries: refuse
	 * includes without following them. */
	for (i = 0; i < spots.n; i++) {
		if (!spots.v[i].key && (strcmp(spots.v[i].section, "include") == 0 ||
					strcmp(spots.v[i].section, "includeif") == 0)) {
			problem_add(ps, spots.v[i].line,
				    _("[%s] is not supported; put every setting in this file"),
				    spots.v[i].section);
			spots_free(&spots);
			buf_free(&text);
			return 0;
		}
	}
	git_libgit2_init();
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
		if (r->pull_request && !r->github_repo)
			problem_add(ps, config_line(&spots, "repo", r->name, "pull-request", 1),
				    _("repo '%s' opens pull requests on GitHub but names no repository; add github-repo = OWNER/NAME"),
				    r->name);
	}
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
	git_libgit2_shutdown();
	spots_free(&spots);
	buf_free(&text);
	if (ps->n > 1)
		qsort(ps->v, ps->n, sizeof(*ps->v), problem_cmp);
	return 0;
}

static char *config_problem_text(const char *path, const struct problem *pr)
{
	if (pr->line > 0)
		return xasprintf("%s:%d: %s", path, pr->line, pr->msg);
	return xasprintf("%s: %s", path, pr->msg);
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

int config_check(const char *path, FILE *out)
{
	struct problems ps = { 0 }, warn = { 0 };
	struct config c;
	char *file = path ? xstrdup(path) : config_default_path();
	size_t i;
	int count;

	config_init_defaults(&c);
	if (config_parse(file, &c, &ps, &warn) == 1 && path)
		problem_add(&ps, 0, _("no such file; create it or name another file"));
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
