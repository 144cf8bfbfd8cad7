#include "autoconfig.h"
#include "adapter.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "buf.h"
#include "child.h"
#include "fsx.h"
#include "gateway.h"
#include "i18n.h"
#include "paths.h"

char **adapter_argv(char *const *words, const char *prompt, const char *session,
                    const char *model)
{
	size_t n = 0;
	while (words[n])
		n++;
	char **out = xcalloc(n + 1, sizeof *out);
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		const char *w = words[i];
		const char *val = NULL;
		int placeholder = 1;
		if (strcmp(w, "{prompt}") == 0)
			val = prompt ? prompt : "";
		else if (strcmp(w, "{session}") == 0)
			val = session && *session ? session : NULL;
		else if (strcmp(w, "{model}") == 0)
			val = model && *model ? model : NULL;
		else
			placeholder = 0;
		if (!placeholder) {
			out[k++] = xstrdup(w);
			continue;
		}
		if (val) {
			out[k++] = xstrdup(val);
			continue;
		}
		/* "--resume {session}" without a session: both go. */
		if (k > 0 && strncmp(out[k - 1], "--", 2) == 0) {
			free(out[--k]);
			out[k] = NULL;
		}
	}
	out[k] = NULL;
	return out;
}

void adapter_argv_free(char **argv)
{
	for (size_t i = 0; argv && argv[i]; i++)
		free(argv[i]);
	free(argv);
}

static struct sandbox_home_file *home_one(const char *path, char *content, size_t *n)
{
	struct sandbox_home_file *f = xcalloc(1, sizeof *f);
	f->path = xstrdup(path);
	f->content = content;
	*n = 1;
	return f;
}

/* JSON text for a string value (the model name comes from the config). */
static char *json_quote(const char *s)
{
	json_t *v = json_string(s ? s : "");
	char *t = json_dumps(v, JSON_ENCODE_ANY);
	json_decref(v);
	return t ? t : xstrdup("\"\"");
}

/* Each agent learns the gateway's address from its own settings file
 * where no variable does it: Codex ignores OPENAI_BASE_URL, pi and
 * opencode take base URLs only from their config. */
struct sandbox_home_file *adapter_home_files(const struct config *cfg,
                                             const struct agent_conf *a,
                                             const struct gateway *gw, size_t *n)
{
	*n = 0;
	const struct endpoint_conf *ep = config_find_endpoint(cfg, a->endpoint);
	if (!ep)
		return NULL;
	int port = gateway_port(gw, ep->port);
	int anth = ep->kind == ENDPOINT_ANTHROPIC;
	char *model = json_quote(a->model ? a->model : anth ? "claude-sonnet-4-5" : "gpt-5.5");
	struct sandbox_home_file *f = NULL;
	switch (a->kind) {
	case AGENT_CODEX:
		/* TOML basic strings take JSON's escapes. */
		f = home_one(".codex/config.toml", xasprintf(
			"# Written by paddock: the model goes through paddock's gateway.\n"
			"model = %s\n"
			"model_provider = \"paddock\"\n"
			"approval_policy = \"never\"\n"
			"sandbox_mode = \"danger-full-access\"\n"
			"check_for_update_on_startup = false\n"
			"\n[model_providers.paddock]\n"
			"name = \"paddock\"\n"
			"base_url = \"http://127.0.0.1:%d/v1\"\n"
			"env_key = \"OPENAI_API_KEY\"\n"
			"wire_api = \"responses\"\n"
			"request_max_retries = 1\n"
			"stream_max_retries = 1\n"
			"\n[features]\nplugins = false\nremote_plugin = false\n"
			"in_app_updates = false\napps = false\n"
			"\n[analytics]\nenabled = false\n"
			"\n[otel]\nexporter = \"none\"\nmetrics_exporter = \"none\"\n",
			model, port), n);
		break;
	case AGENT_PI:
		f = home_one(".pi/agent/models.json", xasprintf(
			"{\"providers\": {\"paddock\": {\"baseUrl\": \"http://127.0.0.1:%d%s\", "
			"\"api\": \"%s\", \"apiKey\": \"%s\", "
			"\"models\": [{\"id\": %s, \"contextWindow\": 200000, \"maxTokens\": 32000}]}}}\n",
			port, anth ? "" : "/v1", anth ? "anthropic-messages" : "openai-responses",
			anth ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY", model), n);
		break;
	case AGENT_OPENCODE:
		f = home_one(".config/opencode/opencode.json", xasprintf(
			"{\"autoupdate\": false, \"share\": \"disabled\", \"model\": %s, "
			"\"provider\": {\"%s\": {\"options\": {\"baseURL\": \"http://127.0.0.1:%d/v1\", "
			"\"apiKey\": \"{env:%s}\"}}}}\n",
			model, anth ? "anthropic" : "openai", port,
			anth ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY"), n);
		break;
	default:
		break;
	}
	free(model);
	return f;
}

void adapter_home_free(struct sandbox_home_file *f, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free((char *)f[i].path);
		free((char *)f[i].content);
	}
	free(f);
}

const char *const *adapter_env(const struct agent_conf *a)
{
	static const char *const claude[] = {
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		/* Its default is 10 retries over minutes, 401s included. */
		"CLAUDE_CODE_MAX_RETRIES=2",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_TELEMETRY=1",
		"DISABLE_ERROR_REPORTING=1",
		"CLAUDE_CODE_DISABLE_TERMINAL_TITLE=1",
		"IS_SANDBOX=1",
		NULL };
	static const char *const codex[] = {
		"CODEX_HOME=" SANDBOX_HOME "/.codex",
		"NO_COLOR=1",
		NULL };
	static const char *const pi[] = {
		"PI_OFFLINE=1",
		"NO_COLOR=1",
		NULL };
	static const char *const opencode[] = {
		"OPENCODE_DISABLE_MODELS_FETCH=1",
		"OPENCODE_DISABLE_AUTOUPDATE=1",
		"NO_COLOR=1",
		NULL };
	static const char *const none[] = { NULL };
	switch (a->kind) {
	case AGENT_CLAUDE: return claude;
	case AGENT_CODEX: return codex;
	case AGENT_PI: return pi;
	case AGENT_OPENCODE: return opencode;
	default: return none;
	}
}

const char *adapter_model_reason(int status, const char *err_type, const char *message)
{
	const char *t = err_type ? err_type : "";
	const char *m = message ? message : "";
	if (status == 401 || status == 403 || strstr(t, "authentication") ||
	    strstr(t, "permission") || strstr(t, "invalid_api_key"))
		return "model-auth";
	if (status == 429 || strstr(t, "rate_limit"))
		return "rate-limit";
	if (status == 529 || status == 503 || strstr(t, "overloaded"))
		return "overloaded";
	if (strstr(t, "context_length") || strstr(m, "prompt is too long") ||
	    strstr(m, "context window") || strstr(m, "context_length") ||
	    strstr(m, "maximum context"))
		return "context";
	return "model";
}

static void set_str(char **dst, json_t *v)
{
	if (json_is_string(v) && json_string_length(v) > 0) {
		free(*dst);
		*dst = xstrdup(json_string_value(v));
	}
}

/* Claude Code's stream-json: a system/init event with the session id,
 * then messages, then one "result" event. */
static void read_claude(json_t *o, struct adapter_result *r, int *is_error)
{
	const char *type = json_string_value(json_object_get(o, "type"));
	set_str(&r->session, json_object_get(o, "session_id"));
	if (type && strcmp(type, "result") == 0) {
		/* subtype stays "success" on API errors: is_error tells. */
		set_str(&r->final, json_object_get(o, "result"));
		if (json_is_true(json_object_get(o, "is_error"))) {
			*is_error = 1;
			set_str(&r->error, json_object_get(o, "result"));
			json_t *st = json_object_get(o, "api_error_status");
			const char *term = json_string_value(json_object_get(o, "terminal_reason"));
			if (json_is_integer(st) || (term && strcmp(term, "prompt_too_long") == 0)) {
				*is_error = 2;  /* the model's failure, not a tool's */
				if (term && strcmp(term, "prompt_too_long") == 0) {
					free(r->error);
					r->error = xstrdup("prompt is too long");
				}
			}
			const char *sub = json_string_value(json_object_get(o, "subtype"));
			if (!r->error && sub) {
				free(r->error);
				r->error = xstrdup(sub);
			}
		}
	}
}

/* Codex's exec --json: thread.started (the session), item.completed
 * agent messages, turn.completed / turn.failed, error. */
static void read_codex(json_t *o, struct adapter_result *r, int *is_error)
{
	const char *type = json_string_value(json_object_get(o, "type"));
	if (!type)
		return;
	set_str(&r->session, json_object_get(o, "thread_id"));
	set_str(&r->session, json_object_get(o, "session_id"));
	if (strcmp(type, "item.completed") == 0) {
		json_t *item = json_object_get(o, "item");
		const char *it = json_string_value(json_object_get(item, "type"));
		if (it && (strcmp(it, "agent_message") == 0 || strcmp(it, "assistant_message") == 0))
			set_str(&r->final, json_object_get(item, "text"));
	} else if (strcmp(type, "turn.failed") == 0 || strcmp(type, "error") == 0) {
		*is_error = 1;
		json_t *err = json_object_get(o, "error");
		set_str(&r->error, json_object_get(o, "message"));
		if (json_is_object(err))
			set_str(&r->error, json_object_get(err, "message"));
	} else if (strcmp(type, "turn.completed") == 0) {
		*is_error = 0;
	}
}

/* opencode's run --format json: events with a sessionID; "text" parts;
 * "error" events carry the API's failure. */
static void read_opencode(json_t *o, struct adapter_result *r, int *is_error)
{
	const char *type = json_string_value(json_object_get(o, "type"));
	set_str(&r->session, json_object_get(o, "sessionID"));
	if (!type)
		return;
	json_t *part = json_object_get(o, "part");
	if (strcmp(type, "text") == 0 && json_is_object(part))
		set_str(&r->final, json_object_get(part, "text"));
	if (strcmp(type, "error") == 0) {
		*is_error = 1;
		json_t *err = json_object_get(o, "error");
		json_t *data = json_object_get(err, "data");
		set_str(&r->error, json_object_get(data, "message"));
		if (json_is_integer(json_object_get(data, "statusCode")))
			*is_error = 2;
	}
}

/* The assistant's text in a message object (Anthropic-style content
 * blocks or a plain string). */
static char *message_text(json_t *msg)
{
	json_t *content = json_object_get(msg, "content");
	if (json_is_string(content))
		return xstrdup(json_string_value(content));
	struct buf b = {0};
	size_t i;
	json_t *blk;
	json_array_foreach(content, i, blk) {
		const char *bt = json_string_value(json_object_get(blk, "type"));
		json_t *text = json_object_get(blk, "text");
		if (bt && strcmp(bt, "text") == 0 && json_is_string(text)) {
			if (b.len)
				buf_addc(&b, '\n');
			buf_adds(&b, json_string_value(text));
		}
	}
	return b.len ? buf_detach(&b) : (buf_free(&b), NULL);
}

/* pi's --mode json: one event per line (session, message_end with the
 * assistant's message, agent_end); errors as stopReason "error" with an
 * errorMessage. */
static void read_pi(json_t *o, struct adapter_result *r, int *is_error)
{
	const char *type = json_string_value(json_object_get(o, "type"));
	if (!type)
		return;
	if (strcmp(type, "session") == 0) {
		set_str(&r->session, json_object_get(o, "id"));
		set_str(&r->session, json_object_get(o, "sessionId"));
	}
	set_str(&r->session, json_object_get(o, "sessionId"));
	json_t *msg = json_object_get(o, "message");
	if (strcmp(type, "message_end") == 0 && json_is_object(msg)) {
		const char *role = json_string_value(json_object_get(msg, "role"));
		if (role && strcmp(role, "assistant") == 0) {
			char *t = message_text(msg);
			if (t) {
				free(r->final);
				r->final = t;
			}
			const char *stop = json_string_value(json_object_get(msg, "stopReason"));
			if (stop && (strcmp(stop, "error") == 0 || strcmp(stop, "aborted") == 0)) {
				*is_error = 1;
				set_str(&r->error, json_object_get(msg, "errorMessage"));
			} else {
				*is_error = 0;
			}
		}
	}
}

void adapter_read(enum agent_kind kind, const char *out, size_t len, int exit_code,
                  int last_status, const char *err_type, const char *err_message,
                  struct adapter_result *r)
{
	memset(r, 0, sizeof *r);
	int is_error = 0;
	if (kind != AGENT_SCRIPT) {
		const char *p = out, *end = out + len;
		while (p < end) {
			const char *nl = memchr(p, '\n', (size_t)(end - p));
			size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
			if (n > 1 && p[0] == '{') {
				json_error_t je;
				json_t *o = json_loadb(p, n, 0, &je);
				if (json_is_object(o)) {
					if (kind == AGENT_CLAUDE)
						read_claude(o, r, &is_error);
					else if (kind == AGENT_CODEX)
						read_codex(o, r, &is_error);
					else if (kind == AGENT_OPENCODE)
						read_opencode(o, r, &is_error);
					else
						read_pi(o, r, &is_error);
				}
				json_decref(o);
			}
			p += n + (nl ? 1 : 0);
		}
	}
	/* The gateway's view decides: a failed last model call is a model
	 * failure whatever the agent's exit status says. */
	if (last_status >= 400) {
		r->outcome = ADAPTER_MODEL;
		r->reason = adapter_model_reason(last_status, err_type, err_message);
		if (!r->error && err_message && *err_message)
			r->error = xstrdup(err_message);
		return;
	}
	if (is_error) {
		const char *e = r->error ? r->error : "";
		r->outcome = ADAPTER_TOOL;
		r->reason = "tool";
		if (is_error == 2 || strstr(e, "API Error") || strstr(e, "api_error") ||
		    strstr(e, "unexpected status") || strstr(e, "retry limit") ||
		    strstr(e, "context window")) {
			r->outcome = ADAPTER_MODEL;
			r->reason = adapter_model_reason(0, e, e);
		}
		return;
	}
	if (exit_code != 0) {
		r->outcome = ADAPTER_TOOL;
		r->reason = "tool";
		return;
	}
	r->outcome = ADAPTER_OK;
}

void adapter_result_free(struct adapter_result *r)
{
	free(r->session);
	free(r->final);
	free(r->error);
	memset(r, 0, sizeof *r);
}

char *adapter_install_dir(const char *data_dir, const struct agent_conf *a)
{
	if (!a->package)
		return NULL;
	char *dir = paths_agent_dir(data_dir, a->name);
	char *bin = paths_join(dir, "node_modules", ".bin", NULL);
	struct stat st;
	int ok = stat(bin, &st) == 0 && S_ISDIR(st.st_mode);
	free(bin);
	if (!ok) {
		free(dir);
		return NULL;
	}
	return dir;
}

/* Claude Code and opencode ship their native binaries as packages of
 * their own and a placeholder launcher that an install script replaces;
 * the scripts do not run here (they would run as root on the host), so
 * the command is linked to the binary itself, as those scripts would:
 * the first candidate (relative to node_modules/.bin) that exists. */
static int link_native(const char *prefix, const char *cmd, const char *const *cands,
                       struct err *e)
{
	char *bin = paths_join(prefix, "node_modules", ".bin", NULL);
	char *link = paths_join(bin, cmd, NULL);
	int rc = -1;
	for (size_t i = 0; cands[i] && rc < 0; i++) {
		char *target = paths_join(bin, cands[i], NULL);
		struct stat st;
		if (stat(target, &st) == 0 && S_ISREG(st.st_mode)) {
			unlink(link);
			rc = symlink(cands[i], link) < 0 ? err_errno(e, _("cannot link %s"), link) : 0;
			if (rc < 0) {
				free(target);
				break;
			}
		}
		free(target);
	}
	if (rc < 0 && !e->msg[0])
		err_set(e, _("the package has no %s binary for this machine"), cmd);
	free(bin);
	free(link);
	return rc;
}

/* opencode's default x64 build needs AVX2; the baseline one does not. */
static int cpu_has_avx2(void)
{
	struct buf b = {0};
	struct err e;
	int has = fsx_read_file("/proc/cpuinfo", 4 << 20, &b, &e) == 0 && b.data &&
	          (strstr(b.data, " avx2 ") || strstr(b.data, " avx2\n"));
	buf_free(&b);
	return has;
}

static int link_agent_binary(const char *prefix, const struct agent_conf *a, struct err *e)
{
	e->msg[0] = '\0';
	if (a->kind == AGENT_CLAUDE) {
#if defined(__aarch64__)
		static const char *const c[] = { "../@anthropic-ai/claude-code-linux-arm64/claude",
			"../@anthropic-ai/claude-code-linux-arm64-musl/claude", NULL };
#else
		static const char *const c[] = { "../@anthropic-ai/claude-code-linux-x64/claude",
			"../@anthropic-ai/claude-code-linux-x64-musl/claude", NULL };
#endif
		return link_native(prefix, "claude", c, e);
	}
	if (a->kind == AGENT_OPENCODE) {
#if defined(__aarch64__)
		static const char *const c[] = { "../opencode-linux-arm64/bin/opencode",
			"../opencode-linux-arm64-musl/bin/opencode", NULL };
		return link_native(prefix, "opencode", c, e);
#else
		static const char *const avx[] = { "../opencode-linux-x64/bin/opencode",
			"../opencode-linux-x64-baseline/bin/opencode", NULL };
		static const char *const base[] = { "../opencode-linux-x64-baseline/bin/opencode",
			"../opencode-linux-x64/bin/opencode", NULL };
		return link_native(prefix, "opencode", cpu_has_avx2() ? avx : base, e);
#endif
	}
	return 0;
}

int adapter_install(const char *data_dir, const struct agent_conf *a, int out_fd,
                    struct err *e)
{
	if (!a->package)
		return err_set(e, _("agent '%s' names no package to install; set agent.%s.package "
		                    "to an npm package such as @anthropic-ai/claude-code@2.1.332"),
		               a->name, a->name);
	char *agents = paths_agents_dir(data_dir);
	char *dir = paths_agent_dir(data_dir, a->name);
	char *tmp = xasprintf("%s.tmp-%ld", dir, (long)getpid());
	char *old = xasprintf("%s.old-%ld", dir, (long)getpid());
	int rc = -1;
	if (fsx_mkdir_p(agents, 0755, e) < 0 || fsx_rm_rf(tmp, e) < 0)
		goto out;
	/* The sandbox user reads the install through a bind: world-readable. */
	chmod(data_dir, 0755);
	chmod(agents, 0755);
	if (mkdir(tmp, 0755) < 0) {
		err_errno(e, _("cannot create %s"), tmp);
		goto out;
	}
	/* No install scripts: they would run as root on the host.  The
	 * agents ship their binaries as packages of their own. */
	const char *argv[] = { "npm", "install", "--prefix", tmp, "--no-audit", "--no-fund",
	                       "--no-save", "--ignore-scripts", "--omit=dev", "--loglevel=error",
	                       a->package, NULL };
	struct child ch = { .argv = argv, .cwd = tmp, .stdio = { CHILD_INHERIT, out_fd, out_fd } };
	mode_t mask = umask(022);
	int status = child_start(&ch, NULL) < 0 ? (ch.exec_errno == ENOENT ? 127 << 8 : -1)
	                                        : child_finish(&ch);
	umask(mask);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
			err_set(e, _("npm was not found; install Node.js and npm (apt-get install npm)"));
		else
			err_set(e, _("npm could not install %s (see its messages above); check the "
			             "package name and that the npm registry can be reached"), a->package);
		struct err ignored;
		fsx_rm_rf(tmp, &ignored);
		goto out;
	}
	if (link_agent_binary(tmp, a, e) < 0)
		goto out;
	char *mark = paths_join(tmp, ".paddock-package", NULL);
	char *line = xasprintf("%s\n", a->package);
	int wrc = fsx_write_file(mark, line, strlen(line), 0644, e);
	free(mark);
	free(line);
	if (wrc < 0)
		goto out;
	/* The old install goes only once the new one is complete. */
	struct stat st;
	if (lstat(dir, &st) == 0 && rename(dir, old) < 0) {
		err_errno(e, _("cannot replace %s"), dir);
		goto out;
	}
	if (rename(tmp, dir) < 0) {
		err_errno(e, _("cannot rename %s to %s"), tmp, dir);
		rename(old, dir);
		goto out;
	}
	struct err ignored;
	fsx_rm_rf(old, &ignored);
	rc = 0;
out:
	if (rc < 0) {
		struct err ign;
		fsx_rm_rf(tmp, &ign);
	}
	free(agents);
	free(dir);
	free(tmp);
	free(old);
	return rc;
}
