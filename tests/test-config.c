/* test-config: the configuration file, its defaults and its error messages
 * ("file:line: message"); the key table, the built-in definitions and the
 * list of keys in doc/paddock-config.5.
 *
 * test-config --man prints that list as the key table writes it (make
 * update-config-man). */
#include "autoconfig.h"
#include "config.h"
#include "reminder.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "buf.h"
#include "err.h"
#include "tap.h"

static char dir[] = "/tmp/test-config.XXXXXX";
static int nfiles;

/* Writes text to a new fixture file; returns its path (static). */
static const char *fixture(const char *text)
{
	static char path[512];
	FILE *f;
	snprintf(path, sizeof(path), "%s/config-%d", dir, ++nfiles);
	f = fopen(path, "w");
	if (!f)
		abort();
	fputs(text, f);
	fclose(f);
	return path;
}

/* Loads text; returns the error with the path replaced by "F", or "" when
 * the load succeeds.  c keeps the result (freed by the next call). */
static struct config c;
static const char *load(const char *text)
{
	static char msg[ERR_MAX + 16];
	struct err e = { { 0 } };
	const char *path = fixture(text);
	size_t plen = strlen(path);

	config_free(&c);
	if (config_load(&c, path, &e) == 0)
		return "";
	if (strncmp(e.msg, path, plen) == 0)
		snprintf(msg, sizeof(msg), "F%s", e.msg + plen);
	else
		snprintf(msg, sizeof(msg), "%s", e.msg);
	return msg;
}

/* Prints a key of the table as a TAP comment. */
static void diag_key(const char *why, const struct config_key_info *info)
{
	printf("# %s: %s.%s (type %s, default %s)\n", why, info->section ? info->section : "?",
	       info->key ? info->key : "?", info->type ? info->type : "none",
	       info->def ? info->def : "none");
}

/* Runs config_check on text; returns its output with the path replaced by
 * "F" and stores the count in *n. */
static const char *check(const char *path, int *n)
{
	static struct buf out;
	char *data = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&data, &size);
	size_t plen = path ? strlen(path) : 0;
	const char *p;

	*n = config_check(path, f, NULL);
	fclose(f);
	buf_free(&out);
	memset(&out, 0, sizeof(out));
	for (p = data; *p; ) {
		if (path && strncmp(p, path, plen) == 0) {
			buf_addc(&out, 'F');
			p += plen;
		} else {
			buf_addc(&out, *p++);
		}
	}
	free(data);
	return out.data ? out.data : "";
}

/* The built-in definitions (data/builtin.conf) parse without a problem
 * and are what config.c had as C before they became data. */
static void test_builtin(void)
{
	static const struct {
		const char *name, *endpoint, *package, *model, *command, *resume;
		enum agent_kind kind;
	} agents[] = {
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
	static const struct price_conf prices[] = {
		{ (char *)"claude-opus-5*", 4, 20, 0.4, 5 },
		{ (char *)"claude-opus-4*", 15, 75, 1.5, 18.75 },
		{ (char *)"claude-sonnet-4*", 3, 15, 0.3, 3.75 },
		{ (char *)"claude-haiku-4*", 1, 5, 0.1, 1.25 },
		{ (char *)"claude-3-5-haiku*", 0.8, 4, 0.08, 1 },
		{ (char *)"gpt-5*", 1.25, 10, 0.125, 0 },
	};
	char *out = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&out, &size);
	struct config d;
	int n = config_builtin_check(f);

	fclose(f);
	is_int(n, 0, "data/builtin.conf parses without a problem");
	is_str(out, "", "and config_builtin_check prints none");
	free(out);

	config_init_defaults(&d);
	is_int(d.nagents, 4, "four built-in agents");
	for (size_t i = 0; i < sizeof agents / sizeof agents[0]; i++) {
		const struct agent_conf *a = i < d.nagents ? &d.agents[i] : NULL;
		ok(a && strcmp(a->name, agents[i].name) == 0 && a->builtin && a->kind == agents[i].kind &&
		   strcmp(a->endpoint, agents[i].endpoint) == 0 &&
		   strcmp(a->package, agents[i].package) == 0 &&
		   (agents[i].model ? a->model && strcmp(a->model, agents[i].model) == 0 : !a->model) &&
		   strcmp(a->command, agents[i].command) == 0 && strcmp(a->resume, agents[i].resume) == 0 &&
		   a->nfiles == 0,
		   "built-in agent %zu is %s with its kind, endpoint, package, model, command and resume",
		   i + 1, agents[i].name);
	}
	is_int(d.nprices, 6, "six built-in prices");
	for (size_t i = 0; i < sizeof prices / sizeof prices[0]; i++) {
		const struct price_conf *pr = i < d.nprices ? &d.prices[i] : NULL;
		ok(pr && strcmp(pr->model, prices[i].model) == 0 && pr->input == prices[i].input &&
		   pr->output == prices[i].output && pr->cache_read == prices[i].cache_read &&
		   pr->cache_write == prices[i].cache_write,
		   "built-in price %zu: %s at %g, %g, %g and %g", i + 1, prices[i].model,
		   prices[i].input, prices[i].output, prices[i].cache_read, prices[i].cache_write);
	}
	is_int(d.nendpoints, 2, "two built-in endpoints");
	ok(d.nendpoints == 2 && strcmp(d.endpoints[0].name, "anthropic") == 0 &&
	   d.endpoints[0].kind == ENDPOINT_ANTHROPIC &&
	   strcmp(d.endpoints[0].upstream, "https://api.anthropic.com") == 0 &&
	   strcmp(d.endpoints[0].key_env, "ANTHROPIC_API_KEY") == 0 && !d.endpoints[0].key_file &&
	   d.endpoints[0].port == 8081 &&
	   strcmp(d.endpoints[1].name, "openai") == 0 && d.endpoints[1].kind == ENDPOINT_OPENAI &&
	   strcmp(d.endpoints[1].upstream, "https://api.openai.com") == 0 &&
	   strcmp(d.endpoints[1].key_env, "OPENAI_API_KEY") == 0 && !d.endpoints[1].key_file &&
	   d.endpoints[1].port == 8082, "anthropic and openai, with their upstreams, keys and ports");
	config_free(&d);

	/* The user's sections change single fields of the built-in ones. */
	is_str(load("[agent \"codex\"]\n\tmodel = gpt-6\n"
	            "[endpoint \"openai\"]\n\tport = 9002\n"
	            "[price \"gpt-5*\"]\n\tinput = 2\n"
	            "[price \"mine\"]\n\toutput = 1\n"), "", "built-in sections can be changed");
	const struct agent_conf *cx = config_find_agent(&c, "codex");
	ok(cx && strcmp(cx->model, "gpt-6") == 0 && strcmp(cx->command, agents[1].command) == 0 &&
	   strcmp(cx->package, agents[1].package) == 0 && cx->kind == AGENT_CODEX && !cx->builtin,
	   "codex: the model is the file's, the rest built in, and it counts as the user's");
	ok(config_find_agent(&c, "claude") && config_find_agent(&c, "claude")->builtin,
	   "the agents the file does not touch stay built in");
	ok(config_default_agent(&c) == cx, "so the changed one is the default agent");
	const struct endpoint_conf *oe = config_find_endpoint(&c, "openai");
	ok(oe && oe->port == 9002 && strcmp(oe->upstream, "https://api.openai.com") == 0 &&
	   oe->kind == ENDPOINT_OPENAI && strcmp(oe->key_env, "OPENAI_API_KEY") == 0,
	   "openai: the port is the file's, the rest built in");
	const struct price_conf *gp = config_find_price(&c, "gpt-5.5");
	ok(gp && gp->input == 2 && gp->output == 10 && gp->cache_read == 0.125,
	   "gpt-5*: the input price is the file's, the rest built in");
	ok(config_find_price(&c, "mine") && config_find_price(&c, "mine")->output == 1 &&
	   config_find_price(&c, "mine")->input == 0, "a new price has 0 for the keys not set");
	is_int(c.nprices, 7, "one price more, none twice");
}

/* The key table: complete, and what the parser reads. */
static void test_key_table(void)
{
	struct config_key_info info;
	struct config d;
	struct buf text = { 0 };
	size_t i, count = 0;
	int good = 1, accepted = 1, unique = 1;

	for (i = 0; config_key_info(i, &info) == 0; i++) {
		struct config_key_info other;
		count++;
		if (!info.section || !info.key || !info.type || !*info.type || !info.help ||
		    strlen(info.help) < 10 || (info.def && !*info.def)) {
			good = 0;
			diag_key("incomplete", &info);
		}
		for (size_t j = 0; j < i && config_key_info(j, &other) == 0; j++)
			if (strcmp(other.section, info.section) == 0 && strcmp(other.key, info.key) == 0)
				unique = 0;
		/* Every key is known to the parser: a bad value gets a message
		 * about the value (or none), never "unknown key". */
		char *file = xasprintf("[%s%s]\n\t%s = @\n", info.section,
		                       strcmp(info.section, "repo") == 0 || strcmp(info.section, "agent") == 0 ||
		                       strcmp(info.section, "endpoint") == 0 || strcmp(info.section, "token") == 0
		                       ? " \"x\"" : strcmp(info.section, "price") == 0 ? " \"m*\"" : "",
		                       info.key);
		const char *msg = load(file);
		if (strstr(msg, "unknown key") || strstr(msg, "unknown section")) {
			accepted = 0;
			printf("# %s\n", msg);
		}
		free(file);
	}
	/* The keys that paddock knew before the table. */
	static const char *const known[] = {
		"paddock.workers", "paddock.gate-timeout", "paddock.template-max-age",
		"paddock.max-attempts", "limits.timeout", "limits.memory", "limits.pids",
		"limits.disk", "limits.output", "limits.bundle", "limits.budget",
		"limits.budget-tokens", "limits.cpus", "sandbox.uid", "sandbox.gid", "repo.url",
		"repo.branch", "repo.test", "repo.setup", "repo.push-url", "repo.token-env",
		"repo.ssh-key", "repo.ssh-known-hosts", "repo.branch-prefix", "repo.protected",
		"repo.pull-request", "repo.github-repo", "repo.github-api", "repo.github-token-env",
		"repo.draft", "repo.deny", "repo.max-file-size", "repo.policy-paths",
		"repo.policy-secrets", "repo.policy-size", "repo.policy-symlinks",
		"repo.policy-submodules", "repo.policy-controls", "repo.policy-invisible",
		"repo.policy-authors", "repo.allow-host", "repo.setup-allow-host", "agent.command",
		"agent.resume", "agent.kind", "agent.endpoint", "agent.package", "agent.model",
		"agent.files", "endpoint.kind", "endpoint.upstream", "endpoint.key-env",
		"endpoint.key-file", "endpoint.port", "price.input", "price.output",
		"price.cache-read", "price.cache-write", "gateway.hosts-file", "gateway.dns",
		"gateway.ca-file", "gateway.allow-address", "gateway.proxy-port", "gateway.max-body",
		"gateway.max-tunnels", "gateway.network", "gateway.tunnel-idle", "webhook.url",
		"webhook.secret-env", "webhook.secret-file", "webhook.events", "webhook.timeout",
		"webhook.attempts", "api.listen", "api.max-queue", "api.max-body", "token.value-env",
		"token.value-file", "token.read-only", "ui.theme", "ui.notify-command" };
	size_t found = 0;
	for (size_t k = 0; k < sizeof known / sizeof known[0]; k++) {
		int in = 0;
		for (i = 0; !in && config_key_info(i, &info) == 0; i++) {
			size_t sl = strlen(info.section);
			in = strncmp(known[k], info.section, sl) == 0 && known[k][sl] == '.' &&
			     strcmp(known[k] + sl + 1, info.key) == 0;
		}
		if (in)
			found++;
		else
			printf("# not in the table: %s\n", known[k]);
	}
	is_int(found, sizeof known / sizeof known[0], "the table has every key that paddock knew (%zu)", count);
	ok(good, "every key of the table has a section, a type, help and a default or none (required)");
	ok(unique, "no key is in the table twice");
	ok(accepted, "the parser knows every key of the table");

	/* Unknown keys get a suggestion from the keys of their section. */
	is_str(load("[agent \"x\"]\ncommand = a\nmodle = m\n"),
	       "F:3: unknown key 'agent.x.modle'; did you mean 'agent.x.model'?",
	       "a misspelt agent key gets a suggestion");
	is_str(load("[endpoint \"e\"]\nupstream = http://x\nport = 9000\nkey-evn = K\n"),
	       "F:4: unknown key 'endpoint.e.key-evn'; did you mean 'endpoint.e.key-env'?",
	       "a misspelt endpoint key gets a suggestion");
	is_str(load("[agent \"x\"]\ncommand = a\nupstream = http://x\n"),
	       "F:3: unknown key 'agent.x.upstream'",
	       "a key of another section is unknown, with no suggestion from that section");
	is_str(load("[api]\nmax-quue = 3\n"), "F:2: unknown key 'api.max-quue'; did you mean 'api.max-queue'?",
	       "a misspelt key of a section without a name");
	is_str(load("[token \"t\"]\nvalue-env = T\nread-onyl = true\n"),
	       "F:3: unknown key 'token.t.read-onyl'; did you mean 'token.t.read-only'?",
	       "token keys come from the table too");
	{
		const char *path = fixture("[gateway]\n\tmax-tunels = 4\n[repo \"r\"]\n"
		                           "\turl = https://git.example.com/r.git\n\tpolicy-secret = warn\n");
		int n;
		is_str(check(path, &n),
		       "F:2: unknown key 'gateway.max-tunels'; did you mean 'gateway.max-tunnels'?\n"
		       "F:5: unknown key 'repo.r.policy-secret'; did you mean 'repo.r.policy-secrets'?\n",
		       "config check suggests from the table");
		is_int(n, 2, "two problems");
	}
	/* The typed keys' messages name the key. */
	is_str(load("[gateway]\nproxy-port = 0\n"), "F:2: gateway.proxy-port: '0' is not a port from 1 to 65535",
	       "a port out of range");
	is_str(load("[token \"t\"]\nvalue-env = T\nread-only = maybe\n"),
	       "F:3: token.t.read-only: 'maybe' is not true or false", "a boolean");
	is_str(load("[api]\nmax-body = 100\n"),
	       "F:2: api.max-body: '100' is not a size of at least 1k (for example 1m)", "a size under its minimum");
	is_str(load("[repo \"r\"]\nurl = /r\nmax-file-size = big\n"),
	       "F:3: repo.r.max-file-size: 'big' is not a size; write a whole number of bytes with an optional k, m, g or t suffix (for example 4g or 512m)",
	       "a size");
	is_str(load("[price \"m\"]\ninput = cheap\n"),
	       "F:2: price.m.input: 'cheap' is not a price in US dollars per million tokens (for example 3 or 0.30)",
	       "a price");
	is_str(load("[agent \"a\"]\ncommand = a\nmodel = -x\n"),
	       "F:3: agent.a.model: '-x' must be one word that does not start with '-'", "a word");
	is_str(load("[endpoint \"e\"]\nupstream = http://x\nport = 9000\nkey-env = 1X\n"),
	       "F:4: endpoint.e.key-env: the value is not the name of an environment variable (letters, digits and _, not starting with a digit; it is not shown here, in case it is a secret); name the variable that holds the secret, such as ANTHROPIC_API_KEY",
	       "a variable name (the value not shown)");
	is_str(load("[gateway]\nca-file = ca.pem\n"), "F:2: gateway.ca-file: 'ca.pem' is not an absolute path",
	       "an absolute path");
	is_str(load("[gateway]\nmax-tunnels = 2000\n"), "F:2: gateway.max-tunnels: '2000' is not a number from 1 to 1024",
	       "an integer out of range");

	/* The defaults that the table documents are the code's: a file that
	 * sets each key of the unnamed sections to its documented default
	 * loads, and changes nothing. */
	for (i = 0; config_key_info(i, &info) == 0; i++) {
		static const char *const unnamed[] = { "paddock", "limits", "sandbox", "gateway", "api",
		                                        "webhook", "ui", NULL };
		int in = 0;
		for (size_t s = 0; unnamed[s]; s++)
			in |= strcmp(info.section, unnamed[s]) == 0;
		/* "none", "the system's" and the like are words, not values. */
		if (!in || !info.def || strchr(info.def, ' ') || strcmp(info.def, "none") == 0)
			continue;
		buf_printf(&text, "[%s]\n\t%s = %s\n", info.section, info.key, info.def);
	}
	buf_adds(&text, "[webhook]\n\turl = https://hooks.example.com/paddock\n");
	is_str(load(text.data), "", "the documented defaults load");
	config_init_defaults(&d);
	ok(c.workers == d.workers && c.max_attempts == d.max_attempts &&
	   c.template_max_age == d.template_max_age && c.gate_timeout == d.gate_timeout,
	   "[paddock]: the documented defaults are the code's");
	ok(c.limits.timeout == d.limits.timeout && c.limits.memory == d.limits.memory &&
	   c.limits.pids == d.limits.pids && c.limits.disk == d.limits.disk &&
	   c.limits.output == d.limits.output && c.limits.bundle == d.limits.bundle &&
	   c.limits.budget == d.limits.budget && c.limits.budget_tokens == d.limits.budget_tokens &&
	   c.limits.model_concurrency == d.limits.model_concurrency,
	   "[limits]: the documented defaults are the code's");
	ok(c.sandbox_uid == d.sandbox_uid && c.sandbox_gid == d.sandbox_gid,
	   "[sandbox]: the documented defaults are the code's");
	ok(c.gw_dns == d.gw_dns && c.gw_proxy_port == d.gw_proxy_port &&
	   c.gw_max_body == d.gw_max_body && c.gw_max_tunnels == d.gw_max_tunnels &&
	   c.gw_network == d.gw_network && c.gw_tunnel_idle == d.gw_tunnel_idle &&
	   c.gw_uid == d.gw_uid && c.gw_gid == d.gw_gid,
	   "[gateway]: the documented defaults are the code's");
	ok(c.api_max_queue == d.api_max_queue && c.api_max_body == d.api_max_body,
	   "[api]: the documented defaults are the code's");
	ok(c.wh_timeout == d.wh_timeout && c.wh_attempts == d.wh_attempts,
	   "[webhook]: the documented defaults are the code's");
	config_free(&d);
	buf_free(&text);
}

/* doc/paddock-config.5 holds the key table as config_write_man writes it,
 * between its BEGIN and END GENERATED KEYS lines. */
static void test_man_page(void)
{
	const char *top = getenv("top_srcdir");
	char *path = xasprintf("%s/doc/paddock-config.5", top && *top ? top : ".");
	char *want = NULL, *line = NULL;
	size_t size = 0, cap = 0;
	FILE *f = open_memstream(&want, &size);
	struct buf got = { 0 };
	int in = 0, begin = 0, end = 0;

	config_write_man(f);
	fclose(f);
	f = fopen(path, "r");
	ok(f != NULL, "%s can be read", path);
	while (f && getline(&line, &cap, f) > 0) {
		if (strncmp(line, ".\\\" END GENERATED KEYS", 22) == 0) {
			in = 0;
			end++;
		}
		if (in)
			buf_adds(&got, line);
		if (strncmp(line, ".\\\" BEGIN GENERATED KEYS", 24) == 0) {
			in = 1;
			begin++;
		}
	}
	if (f)
		fclose(f);
	ok(begin == 1 && end == 1, "the manual has one BEGIN and one END GENERATED KEYS line");
	int same = got.data && strcmp(got.data, want) == 0;
	ok(same, "the manual's list of keys is the key table's (run make update-config-man)");
	if (!same && got.data) {
		/* The first line that differs. */
		const char *g = got.data, *w = want;
		size_t off = 0, bol = 0;
		int n = 1;
		while (g[off] && g[off] == w[off]) {
			if (g[off] == '\n') {
				n++;
				bol = off + 1;
			}
			off++;
		}
		printf("# first difference at line %d of the block:\n#   manual: %.*s\n#   table:  %.*s\n",
		       n, (int)strcspn(g + bol, "\n"), g + bol, (int)strcspn(w + bol, "\n"), w + bol);
	}
	/* Every help text is text: no empty lines, which man(7) renders as
	 * blank lines. */
	ok(!strstr(want, "\n\n"), "the generated list has no empty lines");
	free(line);
	free(want);
	free(path);
	buf_free(&got);
}

/* What config check catches of a pasted key, a misspelt key and an
 * upstream with its version path (issue 15). */
static void test_secrets_and_suggestions(void)
{
	static const char *const pasted[] = { "sk-ant-api03-AbCdEf0123456789", "sk_live_abc123",
		"ghp_abcdefABCDEF0123456789abcdefABCDEF01", "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3f" };
	for (size_t i = 0; i < sizeof pasted / sizeof *pasted; i++) {
		char *text = xasprintf("[endpoint \"anthropic\"]\nkey-env = %s\n", pasted[i]);
		const char *msg = load(text);
		ok(strstr(msg, "F:2: endpoint.anthropic.key-env: the value looks like a secret, not the "
		               "name of a variable (it is not shown here)") && !strstr(msg, pasted[i]),
		   "a key pasted as key-env's value is refused, not echoed (%.16s...)", pasted[i]);
		free(text);
	}
	const char *msg = load("[endpoint \"anthropic\"]\nkey-env = sk-ant-x y\n");
	ok(*msg && !strstr(msg, "sk-ant"), "nor one that is not a name at all (%s)", msg);
	msg = load("[repo \"r\"]\nurl = /r\ntoken-env = ghp_secretsecret\n");
	ok(strstr(msg, "repo.r.token-env: the value looks like a secret") && !strstr(msg, "secretsecret"),
	   "a token pasted as token-env is refused, not echoed (%s)", msg);
	/* token-file: an absolute path or a systemd credential's name, read
	 * at each use (a rotated token is taken); the environment wins. */
	msg = load("[repo \"r\"]\nurl = /r\ntoken-file = ghp_secretsecretsecret\n");
	ok(strstr(msg, "repo.r.token-file: the value looks like a secret") && !strstr(msg, "secretsecret"),
	   "a token pasted as token-file is refused, not echoed (%s)", msg);
	static const char *const badfiles[] = { "../up", "dir/name", ".hidden", "-opt" };
	for (size_t i = 0; i < sizeof badfiles / sizeof *badfiles; i++) {
		char *text = xasprintf("[repo \"r\"]\nurl = /r\ngithub-token-file = %s\n", badfiles[i]);
		msg = load(text);
		ok(strstr(msg, "repo.r.github-token-file: '") &&
		   strstr(msg, "is neither an absolute path nor the name of a systemd credential"),
		   "github-token-file %s is refused (%s)", badfiles[i], msg);
		free(text);
	}
	{
		char cdir[] = "/tmp/paddock-tokfile-XXXXXX";
		ok(mkdtemp(cdir) != NULL, "a credentials directory");
		char *f = xasprintf("%s/git-token", cdir);
		FILE *fp = fopen(f, "w");
		fputs("tok-one\n", fp);
		fclose(fp);
		char *text = xasprintf("[repo \"r\"]\nurl = https://example.com/r.git\n"
		                       "token-env = PADDOCK_TEST_NO_SUCH_VAR\ntoken-file = git-token\n"
		                       "github-token-file = %s\n", f);
		is_str(load(text), "", "token-file = NAME and github-token-file = /PATH load");
		const struct repo_conf *tr = config_find_repo(&c, "r");
		unsetenv("PADDOCK_TEST_NO_SUCH_VAR");
		unsetenv("CREDENTIALS_DIRECTORY");
		ok(tr && !config_repo_token(tr), "a credential's name without $CREDENTIALS_DIRECTORY: no token");
		setenv("CREDENTIALS_DIRECTORY", cdir, 1);
		is_str(tr ? config_repo_token(tr) : NULL, "tok-one", "... with it, the file's first line");
		is_str(tr ? config_repo_github_token(tr) : NULL, "tok-one", "an absolute github-token-file");
		const char *first = tr ? config_repo_token(tr) : NULL;
		fp = fopen(f, "w");
		fputs("tok-two\n", fp);
		fclose(fp);
		is_str(tr ? config_repo_token(tr) : NULL, "tok-two", "a rotated token is read at the next use");
		is_str(first, "tok-one", "... while the one a caller holds stays valid");
		setenv("PADDOCK_TEST_NO_SUCH_VAR", "from-env", 1);
		is_str(tr ? config_repo_token(tr) : NULL, "from-env", "the environment wins over the file");
		unsetenv("PADDOCK_TEST_NO_SUCH_VAR");
		unsetenv("CREDENTIALS_DIRECTORY");
		unlink(f);
		rmdir(cdir);
		free(f);
		free(text);
	}
	msg = load("[endpoint \"anthropic\"]\nkey-file = sk-ant-api03-pasted\n");
	ok(strstr(msg, "endpoint.anthropic.key-file: the value looks like a secret, not a path") &&
	   !strstr(msg, "pasted"), "a key pasted as key-file is refused, not echoed (%s)", msg);
	is_str(load("[endpoint \"anthropic\"]\nkey-env = MY_ANTHROPIC_KEY\n"), "",
	       "a variable's name loads");
	is_str(load("[endpoint \"openai\"]\nupstream = http://127.0.0.1:8000\nkey-env =\n"), "",
	       "an empty key-env loads");
	ok(!config_find_endpoint(&c, "openai")->key_env &&
	   !config_endpoint_key_missing(config_find_endpoint(&c, "openai")),
	   "... and means no key: a ready-made endpoint on a local server needs none");

	is_str(load("[endpoint \"e\"]\nupstream = http://x\nport = 9000\nurl = http://y\n"),
	       "F:4: unknown key 'endpoint.e.url'; did you mean 'endpoint.e.upstream'?",
	       "url in an endpoint: did you mean upstream");
	is_str(load("[endpoint \"e\"]\nupstream = http://x\nport = 9000\nkeyenv = K\n"),
	       "F:4: unknown key 'endpoint.e.keyenv'; did you mean 'endpoint.e.key-env'?",
	       "keyenv: did you mean key-env");
	is_str(load("[endpoint \"e\"]\nupstream = http://x\nport = 9000\napi-key = sk-ant-zzz\n"),
	       "F:4: unknown key 'endpoint.e.api-key'; did you mean 'endpoint.e.key-env'?",
	       "api-key: did you mean key-env (and the value is not shown)");
	is_str(load("[repo \"r\"]\nupstream = /r\n"),
	       "F:2: unknown key 'repo.r.upstream'; did you mean 'repo.r.url'?",
	       "upstream in a repo: did you mean url");
	is_str(load("[gateway]\nmax-tunnels-per-task = 4\n"),
	       "F:2: unknown key 'gateway.max-tunnels-per-task'; did you mean 'gateway.max-tunnels'?",
	       "a key with more words: the key within it");
	is_str(load("[limits]\nconcurrency = 2\n"),
	       "F:2: unknown key 'limits.concurrency'; did you mean 'limits.model-concurrency'?",
	       "concurrency: did you mean model-concurrency");

	is_str(load("[endpoint \"openai\"]\nupstream = https://api.openai.com/v1\n"),
	       "F:2: endpoint.openai.upstream: 'https://api.openai.com/v1' ends in the API's version path /v1, which the agent's requests bring themselves (/v1/messages, /v1/responses); write https://api.openai.com",
	       "an upstream that ends in /v1 is caught");
	is_str(load("[endpoint \"l\"]\nupstream = http://10.1.2.3:8000/v1/\nport = 9000\n"),
	       "F:2: endpoint.l.upstream: 'http://10.1.2.3:8000/v1/' ends in the API's version path /v1, which the agent's requests bring themselves (/v1/messages, /v1/responses); write http://10.1.2.3:8000",
	       "... with a trailing slash too");
	is_str(load("[endpoint \"l\"]\nupstream = http://10.1.2.3:8000/api/v1beta\nport = 9000\n"),
	       "", "a path that only starts like it is fine");

	is_str(load("[sandbox]\nuid = 64101\n"),
	       "F:2: gateway.uid and gateway.gid must differ from sandbox.uid and sandbox.gid (64101, 64100): a sandbox could signal the gateway that holds the keys; choose other ids",
	       "the gateway's uid is not the sandbox's");

	/* No budget with a real key: a warning of config check. */
	setenv("TEST_BUDGET_KEY", "k", 1);
	const char *path = fixture("[endpoint \"e\"]\n\tupstream = http://x\n\tport = 9000\n"
	                           "\tkey-env = TEST_BUDGET_KEY\n");
	int n;
	const char *out = check(path, &n);
	ok(strstr(out, "F: warning: a key is set for e (TEST_BUDGET_KEY), and no budget limits what a task spends with it; set limits.budget (for example 5) or limits.budget-tokens, or give tasks paddock add --budget\n") != NULL,
	   "config check warns of a key without a budget (%s)", out);
	is_int(n, 0, "a warning, not a problem");
	path = fixture("[endpoint \"e\"]\n\tupstream = http://x\n\tport = 9000\n"
	               "\tkey-env = TEST_BUDGET_KEY\n[limits]\n\tbudget = 0.001\n");
	out = check(path, &n);
	ok(!strstr(out, "no budget"), "not with a budget, even one below a cent (%s)", out);
	unsetenv("TEST_BUDGET_KEY");
}

/* A key that is missing is said at start (config_missing_keys), for the
 * endpoints that agents use (issue 15). */
static void test_missing_keys(void)
{
	unsetenv("ANTHROPIC_API_KEY");
	unsetenv("OPENAI_API_KEY");
	unsetenv("TEST_LOCAL_KEY");
	is_str(load("[paddock]\nworkers = 1\n"), "", "a file without agents loads");
	char *lines = config_missing_keys(&c);
	is_str(lines ? lines : "", "endpoint anthropic has no key: ANTHROPIC_API_KEY is not set in "
	       "paddock's environment; export it before starting paddock, or set "
	       "endpoint.anthropic.key-file (the tasks of claude fail with reason model-auth "
	       "until it is set)\n",
	       "start: the default agent's endpoint has no key: which variable, which agent");
	free(lines);
	is_str(load("[endpoint \"local\"]\nupstream = http://127.0.0.1:9\nport = 8083\n"
	            "key-env = TEST_LOCAL_KEY\n[endpoint \"spare\"]\nupstream = http://127.0.0.1:9\n"
	            "port = 8084\nkey-env = TEST_LOCAL_KEY\n"
	            "[agent \"mine\"]\ncommand = x\nendpoint = local\n"
	            "[agent \"other\"]\ncommand = x\nendpoint = openai\n"), "",
	       "endpoints with key-env load");
	lines = config_missing_keys(&c);
	ok(lines && strstr(lines, "endpoint local has no key: TEST_LOCAL_KEY") &&
	   strstr(lines, "(the tasks of mine ") && strstr(lines, "endpoint openai has no key: "
	   "OPENAI_API_KEY") && strstr(lines, "(the tasks of other "),
	   "the endpoints of the file's agents are said (%s)", lines ? lines : "none");
	ok(lines && !strstr(lines, "spare") && !strstr(lines, "anthropic") && !strstr(lines, "codex"),
	   "not those that only ready-made agents, or no agent, use");
	free(lines);
	setenv("ANTHROPIC_API_KEY", "sk-ant-test", 1);
	setenv("OPENAI_API_KEY", "sk-test", 1);
	setenv("TEST_LOCAL_KEY", "k", 1);
	lines = config_missing_keys(&c);
	ok(!lines, "with every variable set, nothing is said (%s)", lines ? lines : "");
	free(lines);
	char *empty = xstrdup(fixture(""));
	char *text = xasprintf("[endpoint \"anthropic\"]\nkey-file = %s/no-such-key\n", dir);
	is_str(load(text), "", "a key-file loads");
	lines = config_missing_keys(&c);
	ok(lines && strstr(lines, "endpoint anthropic has no key: ") && strstr(lines, "no-such-key") &&
	   strstr(lines, "fix endpoint.anthropic.key-file"),
	   "a key-file that cannot be read is said, with the key to fix (%s)", lines ? lines : "none");
	free(lines);
	free(text);
	text = xasprintf("[endpoint \"anthropic\"]\nkey-file = %s\n", empty);
	is_str(load(text), "", "an empty key-file loads");
	lines = config_missing_keys(&c);
	ok(lines && strstr(lines, "is empty"), "an empty key-file is said (%s)", lines ? lines : "none");
	free(lines);
	free(text);
	free(empty);
	is_str(load("[endpoint \"local\"]\nupstream = http://127.0.0.1:9\nport = 8083\n"
	            "[agent \"mine\"]\ncommand = x\nendpoint = local\n"), "",
	       "an endpoint without key-env or key-file loads");
	ok(!config_endpoint_key_missing(config_find_endpoint(&c, "local")),
	   "it needs no key (a local server): nothing is missing");
	unsetenv("ANTHROPIC_API_KEY");
	unsetenv("OPENAI_API_KEY");
	unsetenv("TEST_LOCAL_KEY");
}

/* Every duration key: what it accepts, where its range ends, what 0 and
 * never mean, and the message a bad value gets (issue 33: one duration
 * type replaced a parser per key; this is what they did). */
static void test_durations(void)
{
	static const struct {
		const char *section, *key;
		size_t off;            /* in struct config; -1: the recipe's */
		const char *zero;      /* a word stored as 0, or NULL */
		const char *top;       /* the longest accepted, or NULL: no limit */
		const char *over;      /* just past it */
		const char *bad;       /* the message for 'soon' */
	} keys[] = {
		{ "paddock", "template-max-age", offsetof(struct config, template_max_age), "never",
		  NULL, NULL,
		  "paddock.template-max-age: 'soon' is not a duration (for example 7d, or never to keep templates)" },
		{ "paddock", "gate-timeout", offsetof(struct config, gate_timeout), "0", NULL, NULL,
		  "paddock.gate-timeout: 'soon' is not a duration (for example 24h, or 0 to tear sandboxes down at once)" },
		{ "paddock", "gate-reminder", offsetof(struct config, gate_reminder), "0", NULL, NULL,
		  "paddock.gate-reminder: 'soon' is not a duration; write a whole number of seconds with an optional s, m, h or d suffix (for example 30m)" },
		{ "limits", "timeout", offsetof(struct config, limits.timeout), NULL, NULL, NULL,
		  "limits.timeout: 'soon' is not a duration; write a whole number of seconds with an optional s, m, h or d suffix (for example 30m)" },
		{ "github", "poll", offsetof(struct config, github_poll), "0", "24h", "86401",
		  "github.poll: 'soon' is not 0 or a duration from 1s to 24h (for example 60s)" },
		{ "gateway", "tunnel-idle", offsetof(struct config, gw_tunnel_idle), "0", NULL, NULL,
		  "gateway.tunnel-idle: 'soon' is not a duration such as 10m or 90s (0 for no limit)" },
		{ "api", "header-timeout", offsetof(struct config, api_header_timeout), NULL, "10m",
		  "601", "api.header-timeout: 'soon' is not a duration from 1s to 10m (for example 10s)" },
		{ "api", "body-timeout", offsetof(struct config, api_body_timeout), NULL, "1h", "3601",
		  "api.body-timeout: 'soon' is not a duration from 1s to 1h (for example 30s)" },
		{ "webhook", "timeout", offsetof(struct config, wh_timeout), NULL, "600s", "11m",
		  "webhook.timeout: 'soon' is not a duration from 1s to 10m (for example 10s)" },
		{ "recipe", "timeout", (size_t)-1, NULL, NULL, NULL,
		  "recipe.r.timeout: 'soon' is not a duration; write a whole number of seconds with an optional s, m, h or d suffix (for example 30m)" },
	};

	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
		const char *sec = strcmp(keys[i].section, "recipe") == 0 ? "recipe \"r\"" : keys[i].section;
		const char *pre = strcmp(keys[i].section, "recipe") == 0 ? "prompt = p\n"
		                  : strcmp(keys[i].section, "webhook") == 0 ? "url = https://example.com/h\n"
		                  : "";
		char *name = strcmp(keys[i].section, "recipe") == 0 ? xasprintf("recipe.r.%s", keys[i].key)
		             : xasprintf("%s.%s", keys[i].section, keys[i].key);
		char *text, *want;
#define DUR_VALUE() (keys[i].off == (size_t)-1 \
	? (config_find_recipe(&c, "r") ? config_find_recipe(&c, "r")->timeout : -1) \
	: *(double *)(void *)((char *)&c + keys[i].off))

		text = xasprintf("[%s]\n%s%s = 5m\n", sec, pre, keys[i].key);
		is_str(load(text), "", "%s = 5m loads", name);
		ok(DUR_VALUE() == 300, "%s is 300 seconds", name);
		free(text);

		text = xasprintf("[%s]\n%s%s = soon\n", sec, pre, keys[i].key);
		want = xasprintf("F:%d: %s", pre[0] ? 3 : 2, keys[i].bad);
		is_str(load(text), want, "%s: a value that is no duration gets its message", name);
		free(text);
		free(want);

		/* "0s" is no duration (units.h): not even where 0 is none. */
		text = xasprintf("[%s]\n%s%s = 0s\n", sec, pre, keys[i].key);
		ok(load(text)[0] != '\0', "%s = 0s is refused", name);
		free(text);

		text = xasprintf("[%s]\n%s%s = 0\n", sec, pre, keys[i].key);
		if (keys[i].zero) {
			is_str(load(text), "", "%s = 0 loads", name);
			ok(DUR_VALUE() == 0, "%s = 0 is none", name);
		} else {
			ok(load(text)[0] != '\0', "%s = 0 is refused", name);
		}
		free(text);

		text = xasprintf("[%s]\n%s%s = never\n", sec, pre, keys[i].key);
		if (keys[i].zero && strcmp(keys[i].zero, "never") == 0) {
			is_str(load(text), "", "%s = never loads", name);
			ok(DUR_VALUE() == 0, "%s = never is none", name);
		} else {
			ok(load(text)[0] != '\0', "%s = never is refused", name);
		}
		free(text);

		if (keys[i].top) {
			text = xasprintf("[%s]\n%s%s = %s\n", sec, pre, keys[i].key, keys[i].top);
			is_str(load(text), "", "%s = %s, the longest, loads", name, keys[i].top);
			free(text);
			text = xasprintf("[%s]\n%s%s = %s\n", sec, pre, keys[i].key, keys[i].over);
			want = xasprintf("F:%d: %s", pre[0] ? 3 : 2, keys[i].bad);
			*strstr(want, "'soon'") = '\0';
			{
				char *full = xasprintf("%s'%s'%s", want, keys[i].over,
				                       strstr(keys[i].bad, "'soon'") + 6);
				is_str(load(text), full, "%s = %s, past the longest, gets its message", name,
				       keys[i].over);
				free(full);
			}
			free(text);
			free(want);
		}
		free(name);
#undef DUR_VALUE
	}
}

/* The keys of gates nobody looks at (reminder.h): a repo's values win
 * over [paddock]'s, 0 included; unset, [paddock]'s apply. */
static void test_reminder_keys(void)
{
	is_str(load("[paddock]\ngate-reminder = 2h\nmax-at-review = 3\n"
	            "[repo \"a\"]\nurl = /a\ngate-reminder = 0\nmax-at-review = 0\n"
	            "[repo \"b\"]\nurl = /b\n[repo \"d\"]\nurl = /d\ngate-reminder = 90s\n"
	            "max-at-review = 1\n"), "", "gate-reminder and max-at-review load, per repo too");
	ok(reminder_interval(&c, "a") == 0 && reminder_interval(&c, "b") == 7200 &&
	   reminder_interval(&c, "d") == 90 && reminder_interval(&c, "zz") == 7200,
	   "a repo's gate-reminder wins, 0 included; unset or unknown, [paddock]'s");
	ok(reminder_period(&c) == 22.5, "the gates are looked at every quarter of the shortest "
	   "interval (90 s: %g s)", reminder_period(&c));
	is_str(load("[paddock]\ngate-reminder = 2s\n"), "", "gate-reminder = 2s loads");
	ok(reminder_period(&c) == 1, "every second at the most (2 s: %g s)", reminder_period(&c));
	is_str(load("[repo \"a\"]\nurl = /a\ngate-reminder = 1d\n"), "", "a repo's 1d loads");
	ok(reminder_period(&c) == 60, "every minute at the least (1d: %g s)", reminder_period(&c));
	is_str(load("[paddock]\ngate-reminder = 2h\nmax-at-review = 3\n"
	            "[repo \"a\"]\nurl = /a\ngate-reminder = 0\nmax-at-review = 0\n"
	            "[repo \"b\"]\nurl = /b\n[repo \"d\"]\nurl = /d\ngate-reminder = 90s\n"
	            "max-at-review = 1\n"), "", "the keys again");
	struct reminder_gates g = { .total = 3 };
	struct reminder_repo_count rc[] = { { "a", 2 }, { "d", 1 } };
	g.repos = rc;
	g.nrepos = 2;
	struct reminder_hold h;
	ok(!reminder_hold_of(&c, &g, "a", &h), "repo a's max-at-review = 0: never held");
	ok(reminder_hold_of(&c, &g, "b", &h) && h.at_review == 3 && h.max == 3 && !h.of_repo,
	   "repo b: held by [paddock]'s, counting every repo's");
	ok(reminder_hold_of(&c, &g, "d", &h) && h.at_review == 1 && h.max == 1 && h.of_repo,
	   "repo d: held by its own, counting its own");
	char *t = reminder_hold_text(&h, "d");
	is_str(t, "1 task of repo d at review (repo.d.max-at-review = 1)", "said so");
	free(t);
	ok(load("[paddock]\nmax-at-review = -1\n")[0] != '\0', "max-at-review = -1 is refused");
	ok(load("[paddock]\nmax-at-review = many\n")[0] != '\0', "so is a word");
	ok(load("[repo \"a\"]\nurl = /a\ngate-reminder = 2x\n")[0] != '\0',
	   "a repo's gate-reminder that is no duration is refused");
	char out[32];
	reminder_format(7200, out, sizeof out);
	is_str(out, "2h", "2h reads 2h");
	reminder_format(5400, out, sizeof out);
	is_str(out, "1h30m", "and 5400 s 1h30m");
	reminder_format(93784, out, sizeof out);
	is_str(out, "1d2h", "a day and more, its two largest units");
	reminder_format(3, out, sizeof out);
	is_str(out, "3s", "seconds");
}

int main(int argc, char **argv)
{
	struct err e = { { 0 } };
	const struct repo_conf *r;
	char *p;
	int n;

	if (argc == 2 && strcmp(argv[1], "--man") == 0) {
		config_write_man(stdout);
		return fflush(stdout) == 0 ? 0 : 1;
	}
	if (!mkdtemp(dir))
		return 1;

	/* Defaults. */
	config_init_defaults(&c);
	is_int(c.workers, 2, "default workers");
	ok(c.limits.timeout == 1800, "default timeout 30m");
	ok(c.limits.memory == 4ULL << 30, "default memory 4g");
	is_int(c.limits.pids, 512, "default pids");
	ok(c.limits.disk == 2ULL << 30, "default disk 2g");
	ok(c.limits.output == 64ULL << 20, "default output 64m");
	ok(c.limits.bundle == 200ULL << 20, "default bundle 200m");
	is_int(c.sandbox_uid, 64100, "default sandbox uid");
	is_int(c.sandbox_gid, 64100, "default sandbox gid");
	is_int(c.nrepos, 0, "no repos by default");
	/* The ready-made agents and endpoints (issue 5). */
	is_int(c.nagents, 4, "four ready-made agents by default");
	ok(config_find_agent(&c, "claude") && config_find_agent(&c, "claude")->builtin &&
	   config_find_agent(&c, "claude")->kind == AGENT_CLAUDE &&
	   strcmp(config_find_agent(&c, "claude")->endpoint, "anthropic") == 0,
	   "claude is ready-made, on the anthropic endpoint");
	ok(config_find_agent(&c, "codex") && config_find_agent(&c, "pi") &&
	   config_find_agent(&c, "opencode"), "so are codex, pi and opencode");
	ok(config_default_agent(&c) == config_find_agent(&c, "claude"),
	   "without agents of the user's own, claude is the default");
	ok(config_find_endpoint(&c, "anthropic") && config_find_endpoint(&c, "anthropic")->port == 8081 &&
	   config_find_endpoint(&c, "openai") && config_find_endpoint(&c, "openai")->port == 8082,
	   "the anthropic and openai endpoints are ready-made on 8081 and 8082");
	is_int(c.gw_proxy_port, 3128, "the proxy listens on 3128");
	ok(c.gw_dns == 1 && c.ngw_allow_address == 0, "names go to DNS; no internal address is allowed");

	/* Missing file. */
	{
		char *missing = xasprintf("%s/does-not-exist", dir);
		config_free(&c);
		ok(config_load(&c, missing, &e) == 0, "a missing file loads as defaults");
		is_str(c.path, missing, "path recorded even when missing");
		is_int(c.workers, 2, "missing file: defaults");
		is_str(check(missing, &n), "F: no such file; create it or name another file\n",
		       "config_check reports a named missing file");
		is_int(n, 1, "one problem for a named missing file");
		free(missing);
	}

	/* A full, good file. */
	is_str(load("# paddock configuration\n"
		    "; another comment\n"
		    "[paddock]\n"
		    "\tworkers = 4\n"
		    "[limits]\n"
		    "\ttimeout = 2h\n"
		    "\tmemory = 8g\n"
		    "\tpids = 1024\n"
		    "\tdisk = 512m\n"
		    "\toutput = 1m\n"
		    "\tbundle = 50MiB\n"
		    "[sandbox]\n"
		    "\tuid = 70000\n"
		    "\tgid = 70001\n"
		    "[repo \"calc\"]\n"
		    "\turl = /srv/git/calc.git\n"
		    "\ttest = python3 -m unittest -q   # runs in the sandbox\n"
		    "\tsetup = \"pip install -e . ; true\"\n"
		    "[repo \"web.site\"]\n"
		    "\turl = https://example.invalid/web.git\n"
		    "\tbranch = develop\n"
		    "[agent \"claude\"]\n"
		    "\tcommand = claude -p --output-format stream-json\n"
		    "[agent \"default\"]\n"
		    "\tcommand = sh -c 'echo hi'\n"), "", "a full configuration loads");
	is_int(c.workers, 4, "workers read");
	ok(c.limits.timeout == 7200, "timeout read");
	ok(c.limits.memory == 8ULL << 30, "memory read");
	is_int(c.limits.pids, 1024, "pids read");
	ok(c.limits.disk == 512ULL << 20, "disk read");
	ok(c.limits.output == 1ULL << 20, "output read");
	ok(c.limits.bundle == 50ULL << 20, "bundle read");
	is_int(c.sandbox_uid, 70000, "uid read");
	is_int(c.sandbox_gid, 70001, "gid read");
	is_int(c.nrepos, 2, "two repos");
	r = config_find_repo(&c, "calc");
	ok(r != NULL, "repo calc found");
	if (r) {
		is_str(r->url, "/srv/git/calc.git", "repo url");
		is_str(r->branch, "main", "branch defaults to main");
		is_str(r->test, "python3 -m unittest -q", "test keeps inner spaces, loses the comment");
		is_str(r->setup, "pip install -e . ; true", "quoted value keeps ';'");
	}
	r = config_find_repo(&c, "web.site");
	ok(r && strcmp(r->branch, "develop") == 0 && r->test == NULL && r->setup == NULL,
	   "second repo: branch read, no test or setup");
	ok(config_find_repo(&c, "CALC") == NULL, "repo names are case-sensitive");
	ok(config_find_agent(&c, "claude") &&
	   strcmp(config_find_agent(&c, "claude")->command, "claude -p --output-format stream-json") == 0,
	   "agent command read");
	ok(config_default_agent(&c) && strcmp(config_default_agent(&c)->name, "default") == 0,
	   "agent named default is the default agent");

	/* git-config flavours: case of section and key names, old-style
	 * [section.sub], key on the header line, continued lines, last value
	 * wins. */
	is_str(load("[PADDOCK]\n  Workers = 3\n[Limits] Memory = 1g\n"
		    "[agent.first]\ncommand = one \\\n  two\n"
		    "[paddock]\nworkers = 5\n"), "", "git-config flavours load");
	is_int(c.workers, 5, "last value wins, upper-case names accepted");
	ok(c.limits.memory == 1ULL << 30, "key on the header line");
	ok(config_find_agent(&c, "first") &&
	   strcmp(config_find_agent(&c, "first")->command, "one   two") == 0,
	   "old-style [agent.first] and a continued value");
	ok(config_default_agent(&c) == config_find_agent(&c, "first"),
	   "the user's first agent is the default without one named default");

	/* Semantic errors, with lines. */
	is_str(load("[paddock]\n\tworkers = 0\n"),
	       "F:2: paddock.workers: '0' is not a number from 1 to 1024", "workers 0 refused at line 2");
	is_int(c.workers, 2, "a failed load leaves the defaults");
	is_str(load("[paddock]\nworkers = 1025\n"), "F:2: paddock.workers: '1025' is not a number from 1 to 1024",
	       "workers 1025 refused");
	is_str(load("# c\n\n[limits]\n  timeout = 30 minutes\n"),
	       "F:4: limits.timeout: '30 minutes' is not a duration; write a whole number of seconds with an optional s, m, h or d suffix (for example 30m)",
	       "bad duration, line 4");
	is_str(load("[limits]\npids = 10\nmemory = lots\n"),
	       "F:3: limits.memory: 'lots' is not a size; write a whole number of bytes with an optional k, m, g or t suffix (for example 4g or 512m)",
	       "bad size, line 3");
	is_str(load("[limits]\npids = -1\n"), "F:2: limits.pids: '-1' is not a number of processes from 1 to 4194304",
	       "negative pids refused");
	is_str(load("[limits]\n\tmemroy = 4g\n"), "F:2: unknown key 'limits.memroy'; did you mean 'limits.memory'?",
	       "unknown key with a suggestion");
	is_str(load("[limits]\nfoo = 1\n"), "F:2: unknown key 'limits.foo'", "unknown key without a suggestion");
	is_str(load("[paddock]\nworkers = 2\n[limit]\nmemory = 1g\n"),
	       "F:3: unknown section 'limit'; did you mean 'limits'?", "unknown section at its header line");
	is_str(load("[colors]\nui = auto\n"),
	       "F:1: unknown section 'colors'; known sections are paddock, limits, sandbox, repo, agent, endpoint, price, gateway, api, token, webhook, ui and bind",
	       "unknown section without a suggestion");
	is_str(load("[sandbox]\nuid = 0\n"),
	       "F:2: sandbox.uid = 0 would run agents as root; choose an unused unprivileged uid such as 64100",
	       "uid 0 refused");
	is_str(load("[sandbox]\ngid = 0\n"),
	       "F:2: sandbox.gid = 0 would give agents the root group; choose an unused unprivileged gid such as 64100",
	       "gid 0 refused");
	is_str(load("[sandbox]\nuid = 4294967295\n"), "F:2: sandbox.uid: '4294967295' is not a number from 1 to 4294967294",
	       "uid -1 refused");
	is_str(load("[sandbox]\nuid = abc\n"), "F:2: sandbox.uid: 'abc' is not a number from 1 to 4294967294",
	       "non-numeric uid refused");
	is_str(load("[repo \"calc\"]\n\tbranch = main\n\ttest = make check\n"),
	       "F:1: repo 'calc' has no url; add url = PATH-OR-URL under [repo \"calc\"]",
	       "missing url reported at the section header");
	is_str(load("[repo \"a\"]\nurl = /x\n[repo \"bad name\"]\nurl = /y\n"),
	       "F:3: invalid repo name 'bad name': use up to 64 letters, digits, '.', '_' and '-', starting with a letter or digit",
	       "invalid repo name at its header");
	is_str(load("[repo \"x..y\"]\nurl = /y\n"),
	       "F:1: invalid repo name 'x..y': use up to 64 letters, digits, '.', '_' and '-', starting with a letter or digit",
	       "'..' in a name refused");
	is_str(load("[repo]\nurl = /y\n"), "F:1: [repo] needs a name: write [repo \"NAME\"]", "[repo] without a name");
	is_str(load("[paddock \"x\"]\nworkers = 1\n"), "F:1: [paddock \"x\"]: section paddock takes no name; write [paddock]",
	       "[paddock \"x\"] refused");
	is_str(load("[repo \"a\"]\nurl = /x\nbranch = bad..name\n"), "F:3: repo.a.branch: 'bad..name' is not a valid branch name",
	       "invalid branch refused");
	is_str(load("[repo \"a\"]\nurl = ext::sh -c touch% /tmp/pwned\n"),
	       "F:2: repo.a.url: 'ext::sh -c touch% /tmp/pwned' is not a usable path or URL; use a path, file://, https:// or ssh:// URL",
	       "ext:: transport refused");
	is_str(load("[repo \"a\"]\nurl = --upload-pack=evil\n"),
	       "F:2: repo.a.url: '--upload-pack=evil' is not a usable path or URL; use a path, file://, https:// or ssh:// URL",
	       "url that looks like an option refused");
	is_str(load("[repo \"a\"]\nulr = /x\n"), "F:2: unknown key 'repo.a.ulr'; did you mean 'repo.a.url'?",
	       "unknown repo key with a suggestion");
	is_str(load("[agent \"x\"]\n\n\tcommand = run 'unclosed\n"),
	       "F:3: agent.x.command: agent command has an unterminated single quote (close it or escape it): run 'unclosed",
	       "agent command with a bad quote, line 3");
	is_str(load("[agent \"x\"]\n"), "", "an empty [agent] section has no entries, so nothing to check");
	is_str(load("[agent \"x\"]\nflag = 1\n"), "F:2: unknown key 'agent.x.flag'", "unknown agent key");
	is_str(load("[agent \"y\"]\ncommand\n"), "F:2: 'agent.y.command' needs a value: write command = VALUE",
	       "key without value");
	is_str(load("workers = 3\n"), "F:1: 'workers' is outside any section; put it under a section header such as [paddock]",
	       "key before any section");
	is_str(load("[include]\npath = /etc/passwd\n"), "F:1: [include] is not supported; put every setting in this file",
	       "include refused");

	/* Duplicate keys: the line of the bad one, not of the first. */
	is_str(load("[paddock]\nworkers = 3\n[limits]\nmemory = 1g\n[paddock]\nworkers = many\n"),
	       "F:6: paddock.workers: 'many' is not a number from 1 to 1024", "second occurrence's line");
	/* Case-insensitive lookup for the line. */
	is_str(load("[Limits]\n\n  TimeOut = soon\n"),
	       "F:3: limits.timeout: 'soon' is not a duration; write a whole number of seconds with an optional s, m, h or d suffix (for example 30m)",
	       "line found for mixed-case section and key");
	/* Subsection names are case-sensitive: the right header. */
	is_str(load("[repo \"A\"]\nurl = /a\n[repo \"a\"]\ntest = t\n"),
	       "F:3: repo 'a' has no url; add url = PATH-OR-URL under [repo \"a\"]",
	       "header of the right (case-sensitive) repo");
	/* A continued value does not look like a key. */
	is_str(load("[repo \"a\"]\nurl = /a\ntest = make \\\nbranch = x\nbranch = ../x\n"),
	       "F:5: repo.a.branch: '../x' is not a valid branch name", "continuation lines skipped when counting");

	/* Syntax errors: libgit2's line. */
	is_str(load("[paddock]\nworkers = 3\n[bad\nx=1\n"),
	       "F:3: syntax error: missing ']' in section header", "syntax error line from libgit2");
	p = xstrdup(load("[paddock]\n\n\n\tworkers = \"3\n[x\n"));
	ok(strncmp(p, "F:", 2) == 0 && strstr(p, ": syntax error: ") && atoi(p + 2) >= 4,
	   "a later syntax error is reported at its line: %s", p);
	free(p);

	/* config_check: every problem, sorted by line, counted. */
	{
		const char *path = fixture("[paddock]\n"
					   "\tworkers = 2000\n"
					   "[limits]\n"
					   "\tmemroy = 4g\n"
					   "\ttimeout = -1\n"
					   "[repo \"nourl\"]\n"
					   "\tbranch = main\n"
					   "[sandbox]\n"
					   "\tuid = 0\n"
					   "[bogus]\n"
					   "\tx = 1\n"
					   "\ty = 2\n");
		is_str(check(path, &n),
		       "F:2: paddock.workers: '2000' is not a number from 1 to 1024\n"
		       "F:4: unknown key 'limits.memroy'; did you mean 'limits.memory'?\n"
		       "F:5: limits.timeout: '-1' is not a duration; write a whole number of seconds with an optional s, m, h or d suffix (for example 30m)\n"
		       "F:6: repo 'nourl' has no url; add url = PATH-OR-URL under [repo \"nourl\"]\n"
		       "F:9: sandbox.uid = 0 would run agents as root; choose an unused unprivileged uid such as 64100\n"
		       "F:10: unknown section 'bogus'; known sections are paddock, limits, sandbox, repo, agent, endpoint, price, gateway, api, token, webhook, ui and bind\n",
		       "config_check lists every problem in line order, one per unknown section");
		is_int(n, 6, "config_check counts six problems");
		is_str(load("[paddock]\n\tworkers = 2000\n[limits]\n\tmemroy = 4g\n"),
		       "F:2: paddock.workers: '2000' is not a number from 1 to 1024", "config_load fails with the first");
	}
	{
		const char *path = fixture("[paddock]\nworkers = 3\n");
		is_str(check(path, &n), "", "config_check on a good file prints nothing");
		is_int(n, 0, "and returns 0");
		path = fixture("[paddock]\nworkers = 3\n[x\n");
		is_str(check(path, &n), "F:3: syntax error: missing ']' in section header\n", "config_check reports a syntax error");
		is_int(n, 1, "one problem for a syntax error");
	}
	{
		/* A directory is not a config file. */
		char *d = xasprintf("%s/adir", dir);
		mkdir(d, 0700);
		config_free(&c);
		ok(config_load(&c, d, &e) < 0 && strstr(e.msg, "cannot read") && strncmp(e.msg, d, strlen(d)) == 0,
		   "a directory is refused: %s", e.msg);
		rmdir(d);
		free(d);
	}

	/* Default path. */
	setenv("PADDOCK_CONFIG", "/x/paddock.conf", 1);
	setenv("XDG_CONFIG_HOME", "/xdg", 1);
	setenv("HOME", "/home/u", 1);
	p = config_default_path();
	is_str(p, "/x/paddock.conf", "$PADDOCK_CONFIG first");
	free(p);
	unsetenv("PADDOCK_CONFIG");
	p = config_default_path();
	is_str(p, "/xdg/paddock/config", "then $XDG_CONFIG_HOME/paddock/config");
	free(p);
	setenv("XDG_CONFIG_HOME", "relative", 1);
	p = config_default_path();
	is_str(p, "/home/u/.config/paddock/config", "a relative $XDG_CONFIG_HOME is ignored");
	free(p);
	unsetenv("XDG_CONFIG_HOME");
	p = config_default_path();
	is_str(p, "/home/u/.config/paddock/config", "else ~/.config/paddock/config");
	free(p);
	{
		/* config_load(NULL) reads the default path. */
		const char *path = fixture("[paddock]\nworkers = 7\n");
		setenv("PADDOCK_CONFIG", path, 1);
		config_free(&c);
		ok(config_load(&c, NULL, &e) == 0 && c.workers == 7 && strcmp(c.path, path) == 0,
		   "config_load(NULL) reads $PADDOCK_CONFIG");
		unlink(path);
		config_free(&c);
		ok(config_load(&c, NULL, &e) == 0 && c.workers == 2, "missing default file: defaults");
		is_str(check(NULL, &n), "", "config_check(NULL) on a missing default file is quiet");
		unsetenv("PADDOCK_CONFIG");
	}

	/* Adding definitions copies and replaces. */
	config_free(&c);
	config_init_defaults(&c);
	{
		char name[] = "demo", url[] = "/srv/demo.git", test[] = "make check";
		struct repo_conf rc = { .name = name, .url = url, .test = test };
		char aname[] = "script", acmd[] = "/bin/true";
		config_add_repo(&c, &rc);
		memset(url, 'X', sizeof(url) - 1);
		memset(acmd, 'Y', sizeof(acmd) - 1);
		config_add_agent(&c, aname, acmd);
		strcpy(acmd, "changed");
		r = config_find_repo(&c, "demo");
		ok(r && strcmp(r->url, "/srv/demo.git") == 0 && strcmp(r->branch, "main") == 0 &&
		   strcmp(r->test, "make check") == 0 && r->setup == NULL,
		   "config_add_repo copies its input, branch defaults to main");
		ok(config_find_agent(&c, "script") &&
		   strcmp(config_find_agent(&c, "script")->command, "YYYYYYYYY") == 0,
		   "config_add_agent copies its input");
		rc.url = (char *)"/srv/other.git";
		rc.branch = (char *)"dev";
		config_add_repo(&c, &rc);
		config_add_agent(&c, "script", "echo two");
		is_int(c.nrepos, 1, "same repo name replaces");
		is_int(c.nagents, 5, "same agent name replaces (beside the four ready-made)");
		r = config_find_repo(&c, "demo");
		ok(r && strcmp(r->url, "/srv/other.git") == 0 && strcmp(r->branch, "dev") == 0,
		   "replaced repo has the new values");
		is_str(config_find_agent(&c, "script")->command, "echo two", "replaced agent has the new command");
		config_add_repo(&c, r);   /* re-adding itself must not read freed memory */
		r = config_find_repo(&c, "demo");
		ok(r && strcmp(r->url, "/srv/other.git") == 0, "re-adding a repo from the config itself is safe");
	}
	config_free(&c);

	/* Names. */
	ok(config_name_valid("calc"), "name calc");
	ok(config_name_valid("My_repo-2.0"), "letters, digits, _ - .");
	ok(config_name_valid("9lives"), "digit first");
	ok(!config_name_valid(""), "empty name refused");
	ok(!config_name_valid(NULL), "NULL name refused");
	ok(!config_name_valid(".hidden"), "leading dot refused");
	ok(!config_name_valid("-rf"), "leading dash refused");
	ok(!config_name_valid("a..b"), "'..' refused");
	ok(!config_name_valid("a/b"), "slash refused");
	ok(!config_name_valid("a b"), "space refused");
	ok(!config_name_valid("x.lock"), "'.lock' suffix refused");
	ok(!config_name_valid("caf\xc3\xa9"), "non-ASCII refused");
	ok(config_name_valid("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"), "64 characters allowed");
	ok(!config_name_valid("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"), "65 characters refused");

	/* Egress, endpoints, prices, budgets (issue 5). */
	is_str(load("[repo \"r\"]\nurl = /x\nallow-host = registry.npmjs.org\n"
	            "allow-host = *.pythonhosted.org:443\nsetup-allow-host = pypi.org\n"
	            "[limits]\nbudget = $2.50\nbudget-tokens = 500k\n"
	            "[endpoint \"local\"]\nupstream = http://127.0.0.1:8080\nport = 8083\n"
	            "[price \"qwen*\"]\ninput = 0\noutput = 0.1\n"
	            "[gateway]\ndns = false\nallow-address = 10.1.0.0/16\nmax-body = 1m\n"
	            "[agent \"qwen\"]\ncommand = pi {prompt}\nkind = pi\nendpoint = local\n"
	            "model = qwen3-coder\n"), "", "the egress keys load");
	const struct repo_conf *er = config_find_repo(&c, "r");
	ok(er && er->nallow_hosts == 2 && er->nsetup_allow_hosts == 1 &&
	   strcmp(er->setup_allow_hosts[0], "pypi.org") == 0, "agent and set-up allowlists apart");
	ok(c.limits.budget == 2.5 && c.limits.budget_tokens == 500000, "budget $2.50 and 500k tokens");
	const struct endpoint_conf *lep = config_find_endpoint(&c, "local");
	ok(lep && lep->kind == ENDPOINT_OPENAI && lep->port == 8083,
	   "a named endpoint speaks OpenAI's API unless told otherwise");
	const struct price_conf *pq = config_find_price(&c, "qwen3-coder");
	ok(pq && pq->output == 0.1, "a price matches a model by prefix");
	ok(config_find_price(&c, "claude-sonnet-4-5-20250929") &&
	   config_find_price(&c, "claude-sonnet-4-5-20250929")->input == 3,
	   "the built-in price list covers claude-sonnet-4");
	ok(!config_find_price(&c, "mystery-model"), "an unknown model has no price");
	ok(!c.gw_dns && c.ngw_allow_address == 1 && c.gw_max_body == 1ULL << 20, "gateway keys");
	const struct agent_conf *qa = config_find_agent(&c, "qwen");
	ok(qa && qa->kind == AGENT_PI && strcmp(qa->model, "qwen3-coder") == 0 && !qa->builtin,
	   "an agent of kind pi on the local endpoint");
	is_str(load("[repo \"r\"]\nurl = /x\nallow-host = user@evil.test\n"),
	       "F:3: repo.r.allow-host: the target has a user name (user@host), which is refused",
	       "an allow-host with a user name is refused");
	is_str(load("[repo \"r\"]\nurl = /x\nallow-host = *.*.test\n"),
	       "F:3: repo.r.allow-host: '*.*.test' is not a host: write example.com, *.example.com, or either with :PORT",
	       "a double wildcard is refused");
	is_str(load("[limits]\nbudget = 1e3\n"),
	       "F:2: limits.budget: '1e3' is not an amount in US dollars; write for example 5 or 2.50 (0 for none)",
	       "a budget must be plain dollars");
	is_str(load("[agent \"a\"]\ncommand = x\nendpoint = nowhere\n"),
	       "F:3: agent 'a' uses endpoint 'nowhere', which is not defined; add [endpoint \"nowhere\"] or use anthropic or openai",
	       "an agent on an undefined endpoint is refused");
	is_str(load("[endpoint \"x\"]\nupstream = ftp://x\nport = 9000\n"),
	       "F:2: endpoint.x.upstream: 'ftp://x' is not an http(s) URL such as https://api.anthropic.com",
	       "an upstream must be http(s)");
	is_str(load("[endpoint \"x\"]\nupstream = http://x\nport = 3128\n"),
	       "F:3: endpoint 'x' uses port 3128, which is the proxy's (gateway.proxy-port)",
	       "an endpoint cannot take the proxy's port");
	is_str(load("[endpoint \"x\"]\nupstream = http://x\nport = 8081\n"),
	       "F:3: endpoints 'anthropic' and 'x' both use port 8081; give each its own",
	       "two endpoints cannot share a port");
	is_str(load("[gateway]\nnetwork = bridge\ntunnel-idle = 90s\n"), "", "network and tunnel-idle load");
	ok(c.gw_network == GW_NETWORK_BRIDGE && c.gw_tunnel_idle == 90, "the bridge, and 90 s idle tunnels");
	is_str(load("[gateway]\ntunnel-idle = 0\n"), "", "tunnel-idle 0 loads");
	ok(c.gw_tunnel_idle == 0 && c.gw_network == GW_NETWORK_AUTO, "no idle limit; the network is auto by default");
	is_str(load("[gateway]\nnetwork = slirp\n"),
	       "F:2: gateway.network: 'slirp' is not auto, namespace or bridge",
	       "an unknown network is refused and the choices named");
	is_str(load("[gateway]\ntunnel-idle = soon\n"),
	       "F:2: gateway.tunnel-idle: 'soon' is not a duration such as 10m or 90s (0 for no limit)",
	       "a tunnel-idle that is not a duration is refused");
	is_str(load("[gateway]\nallow-address = 10.0.0.0/33\n"),
	       "F:2: gateway.allow-address: '10.0.0.0/33' is not an address or CIDR such as 10.1.2.0/24 or fd00::/8",
	       "a bad CIDR is refused");
	is_str(load("[agent \"claude\"]\nmodel = claude-opus-4-1\n"), "",
	       "a key of a ready-made agent can be changed alone");
	ok(config_find_agent(&c, "claude")->kind == AGENT_CLAUDE &&
	   strcmp(config_find_agent(&c, "claude")->model, "claude-opus-4-1") == 0 &&
	   strstr(config_find_agent(&c, "claude")->command, "claude -p"),
	   "the rest of its definition stays");

	/* limits.cpus (issue 10): a decimal number of CPUs, 0 for none;
	 * default half the online CPUs, rounded up. */
	{
		long online = sysconf(_SC_NPROCESSORS_ONLN);
		config_free(&c);
		config_init_defaults(&c);
		ok(c.limits.cpus == (double)(online > 1 ? (online + 1) / 2 : 1) && !c.limits.cpus_set,
		   "default cpus: half of the %ld online CPUs, rounded up (%g)", online, c.limits.cpus);
		is_str(load("[limits]\ncpus = 1.5\n"), "", "cpus = 1.5 loads");
		ok(c.limits.cpus == 1.5 && c.limits.cpus_set, "1.5 CPUs, set by the file");
		is_str(load("[limits]\ncpus = 0.25\n"), "", "cpus = 0.25 loads");
		ok(c.limits.cpus == 0.25, "a quarter of a CPU");
		is_str(load("[limits]\ncpus = 0\n"), "", "cpus = 0 loads");
		ok(c.limits.cpus == 0 && c.limits.cpus_set, "0: no CPU limit");
		is_str(load("[limits]\ncpus = 2\n"), "", "a whole number loads");
		ok(c.limits.cpus == 2, "2 CPUs");
		static const char *const bad[] = { "-1", "abc", "1e3", ".5", "1.", "0.001", "5000",
			"1.5 cpus", "none", "0x2", "inf", "" };
		for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
			char *text = xasprintf("[limits]\n\tcpus = %s\n", bad[i]);
			char *want = xasprintf("F:2: limits.cpus: '%s' is not a number of CPUs; write for example 2 or 1.5 (from 0.01 to 4096, or 0 for no limit)", bad[i]);
			is_str(load(text), want, "cpus = '%s' is refused", bad[i]);
			free(text);
			free(want);
		}
		const char *path = fixture("[paddock]\nworkers = 1\n[limits]\n\tcpus = 4096\n");
		char *want = xasprintf("F:4: warning: limits.cpus = 4096 is more than the %ld CPUs of this machine; a task may use them all\n", online);
		is_str(check(path, &n), want, "config check warns of more CPUs than the machine has");
		is_int(n, 0, "but counts no problem");
		free(want);
	}

	/* agent.NAME.files, and the host files an agent's command names. */
	{
		char *script = xasprintf("%s/agent.sh", dir), *data = xasprintf("%s/data.txt", dir);
		char *text, *want;
		const struct agent_conf *ac;
		FILE *f = fopen(script, "w");
		fputs("#!/bin/sh\n", f);
		fclose(f);
		chmod(script, 0755);  /* config check refuses a program it cannot run */
		f = fopen(data, "w");
		fclose(f);

		text = xasprintf("[agent \"x\"]\ncommand = %s\nfiles = %s '/opt/a b/c.json'\n"
		                 "files = /etc/agent.conf\n", script, data);
		is_str(load(text), "", "files: several paths in a value, quoted, and repeated");
		free(text);
		ac = config_find_agent(&c, "x");
		ok(ac && ac->nfiles == 3 && strcmp(ac->files[0], data) == 0 &&
		   strcmp(ac->files[1], "/opt/a b/c.json") == 0 &&
		   strcmp(ac->files[2], "/etc/agent.conf") == 0, "three files, in order");
		is_str(load("[agent \"x\"]\ncommand = a\nfiles = conf.json\n"),
		       "F:3: agent.x.files: 'conf.json' is not an absolute, normalised path outside /proc, /dev and /sys; name each host file by its full path",
		       "a relative path is refused");
		is_str(load("[agent \"x\"]\ncommand = a\nfiles = /proc/self/environ\n"),
		       "F:3: agent.x.files: '/proc/self/environ' is not an absolute, normalised path outside /proc, /dev and /sys; name each host file by its full path",
		       "a path under /proc is refused");
		is_str(load("[agent \"x\"]\ncommand = a\nfiles = /opt/../etc/shadow\n"),
		       "F:3: agent.x.files: '/opt/../etc/shadow' is not an absolute, normalised path outside /proc, /dev and /sys; name each host file by its full path",
		       "a path with .. is refused");
		is_str(load("[agent \"x\"]\ncommand = a\nfiles = '/a\n"),
		       "F:3: agent.x.files: ''/a' is not a list of absolute paths; write for example files = /opt/agent/config.json /opt/agent/lib.py",
		       "an unterminated quote is refused");

		/* The host checks are config check's (and the preparing step's). */
		text = xasprintf("[agent \"x\"]\ncommand = %s %s\n", script, data);
		is_str(load(text), "", "config_load leaves the host files to the step that uses them");
		want = xasprintf("F:2: agent.x.command: %s is a host file but not the agent's script; the sandbox is shown only the files an agent lists: add it to agent.x.files (read-only inside), or remove it from the command\n", data);
		is_str(check(fixture(text), &n), want,
		       "config check refuses a host file the command names but the agent does not list");
		is_int(n, 1, "one problem");
		free(text);
		free(want);
		text = xasprintf("[agent \"x\"]\ncommand = /bin/sh %s --data %s\nfiles = %s\n", script,
		                 data, data);
		is_str(check(fixture(text), &n), "", "listed, it is fine; the interpreter's script needs no listing");
		is_int(n, 0, "no problem");
		free(text);
		text = xasprintf("[agent \"x\"]\ncommand = %s\n\n\tresume = %s --resume %s\n", script,
		                 script, data);
		want = xasprintf("F:4: agent.x.resume: %s is a host file but not the agent's script; the sandbox is shown only the files an agent lists: add it to agent.x.files (read-only inside), or remove it from the command\n", data);
		is_str(check(fixture(text), &n), want, "the resume command is checked too, at its line");
		free(text);
		free(want);
		text = xasprintf("[agent \"x\"]\ncommand = %s\nfiles = %s/missing.json\nfiles = %s\n",
		                 script, dir, dir);
		want = xasprintf("F:3: agent.x.files: cannot use %s/missing.json (No such file or directory); list existing regular files only\n"
		                 "F:3: agent.x.files: %s is not a regular file; list files, not folders or devices\n",
		                 dir, dir);
		is_str(check(fixture(text), &n), want, "config check refuses listed files that are missing or folders");
		is_int(n, 2, "two problems");
		free(text);
		free(want);
		unlink(script);
		unlink(data);
		free(script);
		free(data);
	}
	config_free(&c);

	test_builtin();
	test_key_table();
	test_man_page();
	test_durations();
	test_reminder_keys();
	test_missing_keys();
	test_secrets_and_suggestions();

	{
		char *cmd = xasprintf("rm -rf %s", dir);
		if (system(cmd) != 0)
			ok(0, "cleanup");
		free(cmd);
	}
	return tap_done();
}
