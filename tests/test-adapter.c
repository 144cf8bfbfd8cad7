/* test-adapter: agent command lines with their placeholders, the settings
 * files that point agents at the gateway, and the outcome each adapter
 * reads from real output lines of the pinned agents (.notes/agents.md). */
#include "autoconfig.h"
#include "adapter.h"

#include <stdlib.h>
#include <string.h>
#include "agent.h"
#include "buf.h"
#include "config.h"
#include "tap.h"

static char *joined(const char *cmd, const char *prompt, const char *session, const char *model)
{
	struct agent_cmdline c;
	struct err e;
	if (agent_cmdline_parse(cmd, &c, &e) < 0)
		return xasprintf("ERR %s", e.msg);
	char **v = adapter_argv(c.argv, prompt, session, model);
	struct buf b = {0};
	for (size_t i = 0; v[i]; i++) {
		if (i)
			buf_addc(&b, '|');
		buf_adds(&b, v[i]);
	}
	adapter_argv_free(v);
	agent_cmdline_free(&c);
	return buf_detach(&b);
}

static void check_argv(void)
{
	char *s = joined("claude -p {prompt} --resume {session} --model {model}", "fix it", "s-1",
	                 "m");
	is_str(s, "claude|-p|fix it|--resume|s-1|--model|m", "placeholders become whole arguments");
	free(s);
	s = joined("claude -p {prompt} --resume {session} --model {model} --verbose", "x", NULL, NULL);
	is_str(s, "claude|-p|x|--verbose", "no session and no model: the options go with them");
	free(s);
	s = joined("agent {prompt}", "--dangerously-do-it; rm -rf / $(id)", NULL, NULL);
	is_str(s, "agent|--dangerously-do-it; rm -rf / $(id)",
	       "a prompt stays one argument, however it looks");
	free(s);
	s = joined("agent pre{prompt} {session}", "p", NULL, NULL);
	is_str(s, "agent|pre{prompt}", "only whole-argument placeholders are replaced");
	free(s);
}

static void check_home_files(void)
{
	struct config c;
	config_init_defaults(&c);
	size_t n;
	const struct agent_conf *codex = config_find_agent(&c, "codex");
	struct sandbox_home_file *f = adapter_home_files(&c, codex, NULL, &n);
	ok(n == 1 && strcmp(f[0].path, ".codex/config.toml") == 0, "codex gets its config.toml");
	ok(n == 1 && strstr(f[0].content, "base_url = \"http://127.0.0.1:8082/v1\"") &&
	   strstr(f[0].content, "wire_api = \"responses\"") &&
	   strstr(f[0].content, "env_key = \"OPENAI_API_KEY\""),
	   "naming the gateway's OpenAI endpoint as its provider");
	adapter_home_free(f, n);
	const struct agent_conf *pi = config_find_agent(&c, "pi");
	f = adapter_home_files(&c, pi, NULL, &n);
	ok(n == 1 && strcmp(f[0].path, ".pi/agent/models.json") == 0 &&
	   strstr(f[0].content, "\"baseUrl\": \"http://127.0.0.1:8081\"") &&
	   strstr(f[0].content, "anthropic-messages"), "pi gets models.json with the gateway");
	adapter_home_free(f, n);
	const struct agent_conf *claude = config_find_agent(&c, "claude");
	f = adapter_home_files(&c, claude, NULL, &n);
	ok(n == 0 && !f, "claude needs no file (its variables do it)");
	int has_traffic = 0, has_retries = 0;
	for (const char *const *e = adapter_env(claude); *e; e++) {
		has_traffic |= strcmp(*e, "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1") == 0;
		has_retries |= strncmp(*e, "CLAUDE_CODE_MAX_RETRIES=", 24) == 0;
	}
	ok(has_traffic && has_retries, "claude's telemetry is off and its retries few");
	config_free(&c);
}

static void read_one(enum agent_kind k, const char *out, int code, int status, const char *type,
                     const char *msg, struct adapter_result *r)
{
	adapter_read(k, out, strlen(out), code, status, type, msg, r);
}

static void check_claude(void)
{
	struct adapter_result r;
	const char *okrun =
		"{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"4e7b\",\"cwd\":\"/work\"}\n"
		"[paddock 1.0s] not json\n"
		"{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"num_turns\":5,"
		"\"result\":\"I edited notes.txt.\",\"session_id\":\"4e7b\",\"api_error_status\":null,"
		"\"terminal_reason\":\"completed\"}\n";
	read_one(AGENT_CLAUDE, okrun, 0, 200, "", "", &r);
	ok(r.outcome == ADAPTER_OK && !r.reason, "claude: a finished run is OK");
	is_str(r.session, "4e7b", "claude: its session id");
	is_str(r.final, "I edited notes.txt.", "claude: its final message");
	adapter_result_free(&r);

	const char *e401 =
		"{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":true,\"result\":"
		"\"Invalid API key \\u00b7 Fix external API key\",\"session_id\":\"s\","
		"\"api_error_status\":401,\"terminal_reason\":\"api_error\"}\n";
	read_one(AGENT_CLAUDE, e401, 1, 401, "authentication_error", "invalid x-api-key", &r);
	ok(r.outcome == ADAPTER_MODEL, "claude: 401 is the model's failure");
	is_str(r.reason, "model-auth", "claude: reason model-auth");
	adapter_result_free(&r);
	/* Without the gateway's view, the result line alone tells. */
	read_one(AGENT_CLAUDE, e401, 1, 0, NULL, NULL, &r);
	ok(r.outcome == ADAPTER_MODEL, "claude: api_error_status alone makes it the model's");
	adapter_result_free(&r);

	const char *ctx =
		"{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":true,\"result\":\"Prompt is "
		"too long\",\"api_error_status\":400,\"terminal_reason\":\"prompt_too_long\"}\n";
	read_one(AGENT_CLAUDE, ctx, 1, 0, NULL, NULL, &r);
	is_str(r.reason, "context", "claude: prompt_too_long is reason context");
	adapter_result_free(&r);
	read_one(AGENT_CLAUDE, "", 1, 400, "invalid_request_error",
	         "prompt is too long: 250000 tokens > 200000 maximum", &r);
	is_str(r.reason, "context", "the gateway's 400 'prompt is too long' is reason context");
	adapter_result_free(&r);
	read_one(AGENT_CLAUDE, "", 1, 529, "overloaded_error", "Overloaded", &r);
	is_str(r.reason, "overloaded", "529 is reason overloaded");
	adapter_result_free(&r);
	read_one(AGENT_CLAUDE, "", 0, 429, "rate_limit_error", "", &r);
	ok(r.outcome == ADAPTER_MODEL && strcmp(r.reason, "rate-limit") == 0,
	   "exit 0 after a failed model call is still a failure (rate-limit)");
	adapter_result_free(&r);
}

static void check_pi(void)
{
	struct adapter_result r;
	const char *run =
		"{\"type\":\"session\",\"version\":3,\"id\":\"01a2\",\"cwd\":\"/work\"}\n"
		"{\"type\":\"message_end\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":"
		"\"text\",\"text\":\"I edited notes.txt and wrote added.txt.\"}],\"stopReason\":\"stop\"}}\n"
		"{\"type\":\"agent_end\",\"messages\":[]}\n";
	read_one(AGENT_PI, run, 0, 200, "", "", &r);
	ok(r.outcome == ADAPTER_OK, "pi: a finished run is OK");
	is_str(r.session, "01a2", "pi: the session id from its first line");
	is_str(r.final, "I edited notes.txt and wrote added.txt.", "pi: its final message");
	adapter_result_free(&r);
	const char *err =
		"{\"type\":\"session\",\"id\":\"01a2\"}\n"
		"{\"type\":\"message_end\",\"message\":{\"role\":\"assistant\",\"content\":[],"
		"\"stopReason\":\"error\",\"errorMessage\":\"Connection error.\"}}\n";
	read_one(AGENT_PI, err, 0, 0, NULL, NULL, &r);
	ok(r.outcome != ADAPTER_OK, "pi: exit 0 with a stopReason error is a failure");
	is_str(r.error, "Connection error.", "pi: with its message");
	adapter_result_free(&r);
}

static void check_codex(void)
{
	struct adapter_result r;
	const char *run =
		"{\"type\":\"thread.started\",\"thread_id\":\"01a2-thread\"}\n"
		"{\"type\":\"turn.started\"}\n"
		"{\"type\":\"error\",\"message\":\"Reconnecting... 1/1\"}\n"
		"{\"type\":\"item.completed\",\"item\":{\"id\":\"item_4\",\"type\":\"agent_message\","
		"\"text\":\"I edited notes.txt and wrote added.txt.\"}}\n"
		"{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":30654,\"output_tokens\":64}}\n";
	read_one(AGENT_CODEX, run, 0, 200, "", "", &r);
	ok(r.outcome == ADAPTER_OK, "codex: a retry followed by a completed turn is OK");
	is_str(r.session, "01a2-thread", "codex: the thread id is the session");
	is_str(r.final, "I edited notes.txt and wrote added.txt.", "codex: the agent message");
	adapter_result_free(&r);
	const char *ctx =
		"{\"type\":\"thread.started\",\"thread_id\":\"t\"}\n"
		"{\"type\":\"turn.failed\",\"error\":{\"message\":\"Codex ran out of room in the model's "
		"context window. Start a new thread.\"}}\n";
	read_one(AGENT_CODEX, ctx, 1, 0, NULL, NULL, &r);
	ok(r.outcome == ADAPTER_MODEL, "codex: turn.failed on the context window is the model's");
	is_str(r.reason, "context", "codex: reason context");
	adapter_result_free(&r);
}

static void check_script(void)
{
	struct adapter_result r;
	read_one(AGENT_SCRIPT, "{\"type\":\"result\",\"is_error\":true}\n", 0, 0, NULL, NULL, &r);
	ok(r.outcome == ADAPTER_OK, "a script agent is judged by its exit status alone");
	adapter_result_free(&r);
	read_one(AGENT_SCRIPT, "", 2, 0, NULL, NULL, &r);
	is_str(r.reason, "tool", "a script that exits 2 failed (tool)");
	adapter_result_free(&r);
}

int main(void)
{
	check_argv();
	check_home_files();
	check_claude();
	check_pi();
	check_codex();
	check_script();
	return tap_done();
}
