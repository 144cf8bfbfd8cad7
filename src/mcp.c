/* mcp: the Model Context Protocol on stdio (mcp.h): the messages, the
 * tools and resources, the arguments' checks, what goes out sanitized. */
#include "autoconfig.h"
#include "mcp.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "i18n.h"
#include "sanitize.h"
#include "task.h"

/* JSON-RPC's and MCP's error codes. */
#define RPC_PARSE (-32700)
#define RPC_INVALID (-32600)
#define RPC_METHOD (-32601)
#define RPC_PARAMS (-32602)
#define RPC_INTERNAL (-32603)
#define MCP_NO_RESOURCE (-32002)

#define DUMP_FLAGS (JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15))

static const char *const versions[] = MCP_VERSIONS;

/* ---------------------------------------------------------------- the tools */

typedef json_t *(*tool_fn)(struct mcp *m, json_t *args, struct buf *text, struct err *e);

struct mcp_tool {
	const char *name, *title, *description;
	enum access needs;
	const char *input, *output;   /* JSON Schemas; output NULL: none */
	int read_only, destructive;
	tool_fn run;
};

static json_t *tool_queue(struct mcp *m, json_t *a, struct buf *text, struct err *e);
static json_t *tool_list(struct mcp *m, json_t *a, struct buf *text, struct err *e);
static json_t *tool_show(struct mcp *m, json_t *a, struct buf *text, struct err *e);
static json_t *tool_diff(struct mcp *m, json_t *a, struct buf *text, struct err *e);
static json_t *tool_log(struct mcp *m, json_t *a, struct buf *text, struct err *e);
static json_t *tool_gate(struct mcp *m, json_t *a, struct buf *text, struct err *e);
static json_t *tool_request(struct mcp *m, json_t *a, struct buf *text, struct err *e);
static json_t *tool_approve(struct mcp *m, json_t *a, struct buf *text, struct err *e);

#define ID_PROP "\"id\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":64," \
	"\"description\":\"the task's id (or a unique prefix of it)\"}"
#define ID_ONLY "{\"type\":\"object\",\"properties\":{" ID_PROP "},\"required\":[\"id\"]," \
	"\"additionalProperties\":false}"
#define NULLSTR "{\"type\":[\"string\",\"null\"]}"

/* The tools, in the order they are listed.  Their names and arguments are
 * a promise (paddock(1), MCP): change them only with the docs. */
static const struct mcp_tool tools[] = {
	{ "queue_task", "Queue a paddock task",
	  "Queues a task for a coding agent that paddock runs in a sandbox: the agent works "
	  "on a branch of the repo, paddock checks the work (tests, policy) and stops at a review "
	  "gate. Returns the task's id and status; follow it with show_task or gate_summary.",
	  ACCESS_SUBMIT,
	  "{\"type\":\"object\",\"properties\":{"
	  "\"repo\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":200,\"description\":\"the "
	  "repo's name in paddock's configuration\"},"
	  "\"text\":{\"type\":\"string\",\"maxLength\":131071,\"description\":\"what the agent "
	  "should do (with a recipe: added to its prompt, may be empty)\"},"
	  "\"agent\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":200,\"description\":\"the "
	  "agent (default: the recipe's, else the configuration's)\"},"
	  "\"recipe\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":200,\"description\":\"a "
	  "recipe (a kind of task) whose prompt the inputs fill in\"},"
	  "\"inputs\":{\"type\":\"object\",\"additionalProperties\":{\"type\":\"string\"},"
	  "\"description\":\"the recipe's inputs, NAME: VALUE\"},"
	  "\"base\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":400,\"description\":\"the "
	  "branch, tag, commit or pull request number to start from (default: the repo's "
	  "branch)\"},"
	  "\"approval\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":32,\"description\":"
	  "\"a narrower approval mode than the repo's (review, never)\"}},"
	  "\"required\":[\"repo\",\"text\"],\"additionalProperties\":false}",
	  "{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"string\"},\"status\":"
	  "{\"type\":\"string\"}},\"required\":[\"id\",\"status\"]}",
	  0, 0, tool_queue },
	{ "list_tasks", "List paddock tasks",
	  "Lists paddock's tasks, newest first: id, status, repo, agent, round, the first line "
	  "of the text.", ACCESS_READ,
	  "{\"type\":\"object\",\"properties\":{"
	  "\"status\":{\"type\":\"string\",\"enum\":[\"queued\",\"preparing\",\"running\","
	  "\"testing\",\"review\",\"pushing\",\"done\",\"failed\",\"rejected\",\"cancelled\","
	  "\"lost\"],\"description\":\"only tasks of this status\"},"
	  "\"repo\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":200,\"description\":\"only "
	  "this repo's tasks\"},"
	  "\"limit\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":200,\"description\":\"at "
	  "most this many (default 20)\"}},\"additionalProperties\":false}",
	  "{\"type\":\"object\",\"properties\":{\"tasks\":{\"type\":\"array\",\"items\":{\"type\":"
	  "\"object\",\"properties\":{\"id\":{\"type\":\"string\"},\"status\":{\"type\":"
	  "\"string\"}},\"required\":[\"id\",\"status\"]}}},\"required\":[\"tasks\"]}",
	  1, 0, tool_list },
	{ "show_task", "Show a paddock task",
	  "A task as paddock show --json gives it: status, repo, agent, branch, steps, usage, "
	  "rounds and their decisions, the gate's summary.", ACCESS_READ, ID_ONLY,
	  "{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"string\"},\"status\":{\"type\":"
	  "\"string\"}},\"required\":[\"id\",\"status\"]}",
	  1, 0, tool_show },
	{ "task_diff", "A paddock task's diff",
	  "The change the task's agent made (its base to its head) as a unified diff, cut at "
	  "100 KiB with a note; control characters and escape sequences are shown as marks "
	  "(^[, <U+202E>).", ACCESS_READ, ID_ONLY,
	  "{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"string\"},\"diff\":{\"type\":"
	  "\"string\"},\"cut\":{\"type\":\"boolean\"}},\"required\":[\"id\",\"diff\",\"cut\"]}",
	  1, 0, tool_diff },
	{ "task_log", "A paddock task's log",
	  "The last lines of the task's log (the agent's output, the tests, paddock's steps), "
	  "made safe as paddock log makes it for a terminal: no escape sequences.", ACCESS_READ,
	  "{\"type\":\"object\",\"properties\":{" ID_PROP ",\"lines\":{\"type\":\"integer\","
	  "\"minimum\":1,\"maximum\":2000,\"description\":\"how many of the last lines (default "
	  "100)\"}},\"required\":[\"id\"],\"additionalProperties\":false}",
	  "{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"string\"},\"log\":{\"type\":"
	  "\"string\"},\"lines\":{\"type\":\"integer\"},\"cut\":{\"type\":\"boolean\"}},"
	  "\"required\":[\"id\",\"log\",\"lines\",\"cut\"]}",
	  1, 0, tool_log },
	{ "gate_summary", "A paddock task's gate summary",
	  "What a reviewer decides on at the task's review gate: its status and round, the "
	  "agent's summary, the tests before and after, the policy's findings, the change's "
	  "stat, a decision waiting for the scheduler.", ACCESS_READ, ID_ONLY,
	  "{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"string\"},\"status\":{\"type\":"
	  "\"string\"},\"round\":{\"type\":\"integer\"},\"summary\":" NULLSTR ",\"pending\":"
	  NULLSTR ",\"gate\":{\"type\":[\"object\",\"null\"]}},"
	  "\"required\":[\"id\",\"status\",\"round\",\"gate\"]}",
	  1, 0, tool_gate },
	{ "request_changes", "Request changes of a paddock task",
	  "Sends a task at review back to its agent with notes: the agent runs another round "
	  "on the same branch, and the task comes back to review.", ACCESS_REVIEW,
	  "{\"type\":\"object\",\"properties\":{" ID_PROP ",\"notes\":{\"type\":\"string\","
	  "\"minLength\":1,\"maxLength\":131071,\"description\":\"what the agent should "
	  "change\"}},\"required\":[\"id\",\"notes\"],\"additionalProperties\":false}",
	  "{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"string\"},\"status\":{\"type\":"
	  "\"string\"},\"round\":{\"type\":\"integer\"}},\"required\":[\"id\",\"status\","
	  "\"round\"]}",
	  0, 0, tool_request },
	{ "approve", "Approve a paddock task",
	  "Approves a task at review: paddock pushes its branch (and opens the pull request "
	  "its repo is set up for) and the task is done. Recorded as a decision.", ACCESS_REVIEW,
	  "{\"type\":\"object\",\"properties\":{" ID_PROP ",\"notes\":{\"type\":\"string\","
	  "\"minLength\":1,\"maxLength\":131071,\"description\":\"a note recorded with the "
	  "approval\"}},\"required\":[\"id\"],\"additionalProperties\":false}",
	  "{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"string\"},\"status\":{\"type\":"
	  "\"string\"},\"output\":{\"type\":\"string\"}},\"required\":[\"id\",\"status\"]}",
	  0, 1, tool_approve },
};

#define NTOOLS (sizeof tools / sizeof tools[0])

static const struct mcp_tool *tool_find(const char *name)
{
	for (size_t i = 0; i < NTOOLS; i++)
		if (!strcmp(tools[i].name, name))
			return &tools[i];
	return NULL;
}

char *mcp_tool_names(enum access role)
{
	struct buf b = {0};
	for (size_t i = 0; i < NTOOLS; i++)
		if (access_allows(role, tools[i].needs))
			buf_printf(&b, "%s%s", b.len ? " " : "", tools[i].name);
	return buf_detach(&b);
}

void mcp_init(struct mcp *m, const struct mcp_backend *b, enum access role, const char *where)
{
	memset(m, 0, sizeof *m);
	m->b = b;
	m->role = role;
	m->where = where;
}

/* ---------------------------------------------------------------- text out */

/* A copy of j with every string made inert as sanitize_visible shows it
 * (tabs and newlines kept): nothing from an agent reaches the client as
 * an escape sequence, a control or invalid UTF-8.  New reference. */
static json_t *clean(json_t *j)
{
	if (json_is_string(j)) {
		struct buf b = {0};
		sanitize_visible(json_string_value(j), json_string_length(j),
		                 SANITIZE_KEEP_TAB | SANITIZE_KEEP_NEWLINE, &b, NULL);
		json_t *s = json_stringn(b.data ? b.data : "", b.len);
		buf_free(&b);
		return s ? s : json_string("");
	}
	if (json_is_array(j)) {
		json_t *a = json_array(), *v;
		size_t i;
		json_array_foreach(j, i, v)
			json_array_append_new(a, clean(v));
		return a;
	}
	if (json_is_object(j)) {
		json_t *o = json_object(), *v;
		const char *k;
		json_object_foreach(j, k, v)
			json_object_set_new(o, k, clean(v));
		return o;
	}
	return json_incref(j);
}

/* A string of len bytes as sanitize_visible marks it. */
static json_t *visible_string(const char *s, size_t len)
{
	struct buf b = {0};
	sanitize_visible(s ? s : "", len, SANITIZE_KEEP_TAB | SANITIZE_KEEP_NEWLINE, &b, NULL);
	json_t *j = json_stringn(b.data ? b.data : "", b.len);
	buf_free(&b);
	return j;
}

static const char *jstr(json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

/* ---------------------------------------------------------------- arguments */

/* Checks args against the tool's input schema (the subset it uses: types
 * string, integer, object of strings; required; min/maxLength, minimum,
 * maximum; no other properties): 0, or -1 with e saying what is wrong. */
static int args_check(const struct mcp_tool *t, json_t *args, struct err *e)
{
	json_t *schema = json_loads(t->input, 0, NULL);
	json_t *props = json_object_get(schema, "properties"), *v, *req;
	const char *k;
	size_t i;
	int rc = 0;
	json_array_foreach(json_object_get(schema, "required"), i, req)
		if (!json_object_get(args, json_string_value(req))) {
			rc = err_kind_set(e, ERR_INVALID, _("%s needs the argument %s"), t->name,
			                  json_string_value(req));
			goto out;
		}
	json_object_foreach(args, k, v) {
		json_t *p = json_object_get(props, k);
		const char *type = jstr(p, "type");
		if (!p) {
			struct buf names = {0};
			const char *pk;
			json_t *pv;
			json_object_foreach(props, pk, pv)
				buf_printf(&names, "%s%s", names.len ? ", " : "", pk);
			json_t *shown = visible_string(k, strlen(k));
			rc = err_kind_set(e, ERR_INVALID, _("%s takes no argument '%.80s'; its arguments "
			                  "are %s"), t->name, json_string_value(shown), names.data);
			json_decref(shown);
			buf_free(&names);
			goto out;
		}
		int ok = !strcmp(type, "string") ? json_is_string(v)
		         : !strcmp(type, "integer") ? json_is_integer(v) : json_is_object(v);
		json_t *lo = json_object_get(p, "minimum"), *hi = json_object_get(p, "maximum");
		json_t *minl = json_object_get(p, "minLength"), *maxl = json_object_get(p, "maxLength");
		if (!ok) {
			rc = err_kind_set(e, ERR_INVALID, _("%s: the argument %s must be of type %s"),
			                  t->name, k, type);
		} else if (json_is_integer(v) && ((lo && json_integer_value(v) <
		           json_integer_value(lo)) || (hi && json_integer_value(v) >
		           json_integer_value(hi)))) {
			rc = err_kind_set(e, ERR_INVALID, _("%s: the argument %s must be from %lld to "
			                  "%lld"), t->name, k, (long long)json_integer_value(lo),
			                  (long long)json_integer_value(hi));
		} else if (json_is_string(v) && ((minl && json_string_length(v) <
		           (size_t)json_integer_value(minl)) || (maxl && json_string_length(v) >
		           (size_t)json_integer_value(maxl)))) {
			rc = err_kind_set(e, ERR_INVALID, _("%s: the argument %s must be %lld to %lld "
			                  "bytes long"), t->name, k,
			                  (long long)json_integer_value(minl),
			                  (long long)json_integer_value(maxl));
		} else if (json_is_string(v) && memchr(json_string_value(v), '\0',
		                                      json_string_length(v))) {
			rc = err_kind_set(e, ERR_INVALID, _("%s: the argument %s holds a NUL byte; it "
			                  "must be text"), t->name, k);
		} else if (json_is_object(v)) {
			const char *ik;
			json_t *iv;
			json_object_foreach(v, ik, iv)
				if (!json_is_string(iv) && !rc)
					rc = err_kind_set(e, ERR_INVALID, _("%s: each value of %s must be a "
					                  "string"), t->name, k);
		}
		if (rc)
			goto out;
	}
out:
	json_decref(schema);
	return rc;
}

/* The id argument, checked as a task id or unique prefix: NULL with e. */
static const char *arg_id(json_t *a, struct err *e)
{
	const char *id = jstr(a, "id");
	if (!id || !task_id_valid(id, 1)) {
		/* Quoted as given: the tool's error is made inert on its way out. */
		err_kind_set(e, ERR_INVALID, _("'%.80s' is not a task id; list_tasks lists them"),
		             id ? id : "");
		return NULL;
	}
	return id;
}

/* ---------------------------------------------------------------- tool runs */

static json_t *tool_queue(struct mcp *m, json_t *a, struct buf *text, struct err *e)
{
	(void)text;
	return m->b->queue(m->b->arg, a, e);
}

/* A list's row: what tells the tasks apart, the text's first line. */
static json_t *list_row(json_t *t)
{
	static const char *const keep[] = { "id", "status", "repo", "agent", "round", "branch",
	                                    "created", "updated", "pending", "pull_request",
	                                    "group", "error" };
	json_t *r = json_object();
	for (size_t i = 0; i < sizeof keep / sizeof keep[0]; i++) {
		json_t *v = json_object_get(t, keep[i]);
		if (v)
			json_object_set(r, keep[i], v);
	}
	const char *txt = jstr(t, "text");
	size_t n = txt ? strcspn(txt, "\n") : 0;
	json_object_set_new(r, "title", sanitize_json_string(txt ? txt : "", n > 200 ? 200 : n));
	return r;
}

static json_t *tool_list(struct mcp *m, json_t *a, struct buf *text, struct err *e)
{
	(void)text;
	const char *status = jstr(a, "status");
	if (status && task_status_parse(status) < 0) {
		err_kind_set(e, ERR_INVALID, _("'%.40s' is not a task status; the statuses are "
		             "queued, preparing, running, testing, review, pushing, done, failed, "
		             "rejected, cancelled and lost"), status);
		return NULL;
	}
	json_t *lim = json_object_get(a, "limit");
	size_t limit = lim ? (size_t)json_integer_value(lim) : 20;
	json_t *rows = m->b->list(m->b->arg, status, jstr(a, "repo"), limit, e);
	if (!rows)
		return NULL;
	json_t *out = json_array(), *t;
	size_t i;
	json_array_foreach(rows, i, t)
		if (i < limit)
			json_array_append_new(out, list_row(t));
	json_decref(rows);
	return json_pack("{s:o}", "tasks", out);
}

static json_t *tool_show(struct mcp *m, json_t *a, struct buf *text, struct err *e)
{
	(void)text;
	const char *id = arg_id(a, e);
	json_t *j = id ? m->b->show(m->b->arg, id, e) : NULL;
	/* The gateway's requests and the webhooks' tries can be thousands:
	 * paddock show has them. */
	json_object_del(j, "egress");
	json_object_del(j, "webhooks");
	return j;
}

static json_t *tool_diff(struct mcp *m, json_t *a, struct buf *text, struct err *e)
{
	const char *id = arg_id(a, e);
	struct buf raw = {0};
	int cut = 0;
	if (!id || m->b->diff(m->b->arg, id, MCP_TEXT_MAX, &raw, &cut, e) < 0) {
		buf_free(&raw);
		return NULL;
	}
	size_t n = raw.len;
	/* A cut diff ends at its last whole line. */
	while (cut && n > 0 && raw.data[n - 1] != '\n')
		n--;
	if (!n)
		n = raw.len;
	sanitize_visible(raw.data ? raw.data : "", n, SANITIZE_KEEP_TAB | SANITIZE_KEEP_NEWLINE,
	                 text, NULL);
	if (cut)
		buf_printf(text, _("[paddock: the diff is cut here, at about %u KiB; 'paddock diff "
		                   "%s' shows all of it]\n"), MCP_TEXT_MAX >> 10, id);
	else if (!raw.len)
		buf_printf(text, _("[paddock: task %s changes nothing]\n"), id);
	buf_free(&raw);
	return json_pack("{s:s,s:s%,s:b}", "id", id, "diff", text->data, text->len, "cut", cut);
}

static json_t *tool_log(struct mcp *m, json_t *a, struct buf *text, struct err *e)
{
	const char *id = arg_id(a, e);
	json_t *jl = json_object_get(a, "lines");
	size_t want = jl ? (size_t)json_integer_value(jl) : 100;
	struct buf raw = {0}, safe = {0};
	int cut = 0;
	/* Four times the cap is read: escape sequences and long lines go. */
	if (!id || m->b->log(m->b->arg, id, MCP_TEXT_MAX * 4, &raw, &cut, e) < 0) {
		buf_free(&raw);
		return NULL;
	}
	sanitize_text(raw.data ? raw.data : "", raw.len, 0, &safe);
	buf_free(&raw);
	const char *s = safe.data ? safe.data : "";
	size_t end = safe.len, start, lines = 0, pos;
	while (end && s[end - 1] == '\n')
		end--;
	/* Back from the end, want lines, within the cap. */
	start = pos = end;
	while (lines < want && pos > 0) {
		size_t q = pos;
		while (q > 0 && s[q - 1] != '\n')
			q--;
		if (end - q > MCP_TEXT_MAX)
			break;
		start = q;
		lines++;
		if (q == 0)
			break;
		pos = q - 1;
	}
	if (!lines && end > MCP_TEXT_MAX) {
		/* One line over the cap: its end, from a character's start. */
		start = end - MCP_TEXT_MAX;
		while (start < end && ((unsigned char)s[start] & 0xC0) == 0x80)
			start++;
		lines = 1;
	} else if (!lines && end) {
		start = 0;
		lines = 1;
	}
	int more = cut || start > 0;
	buf_add(text, s + start, end - start);
	if (end > start)
		buf_addc(text, '\n');
	if (!lines)
		buf_printf(text, _("[paddock: task %s has no log yet]\n"), id);
	buf_free(&safe);
	return json_pack("{s:s,s:s%,s:I,s:b}", "id", id, "log", text->data ? text->data : "",
	                 text->len, "lines", (json_int_t)lines, "cut", more);
}

static json_t *tool_gate(struct mcp *m, json_t *a, struct buf *text, struct err *e)
{
	(void)text;
	const char *id = arg_id(a, e);
	json_t *t = id ? m->b->show(m->b->arg, id, e) : NULL;
	if (!t)
		return NULL;
	static const char *const keep[] = { "id", "status", "round", "pending", "summary", "gate",
	                                    "head", "error", "reason", "pull_request",
	                                    "waiting_decision", "sandbox_kept" };
	json_t *g = json_object();
	for (size_t i = 0; i < sizeof keep / sizeof keep[0]; i++) {
		json_t *v = json_object_get(t, keep[i]);
		json_object_set(g, keep[i], v ? v : json_null());
	}
	if (!json_is_integer(json_object_get(g, "round")))
		json_object_set_new(g, "round", json_integer(0));
	json_decref(t);
	return g;
}

/* notes blank: refused with what notes of action are for. */
static int notes_check(const char *notes, const char *action, struct err *e)
{
	if (!notes || strspn(notes, " \t\r\n") < strlen(notes))
		return 0;
	return err_kind_set(e, ERR_INVALID, !strcmp(action, "approve")
	                    ? _("the notes are empty; write the note to record with the approval, "
	                        "or leave notes out")
	                    : _("the notes are empty; say what the agent should change"));
}

static json_t *tool_request(struct mcp *m, json_t *a, struct buf *text, struct err *e)
{
	(void)text;
	const char *id = arg_id(a, e), *notes = jstr(a, "notes");
	if (!id || notes_check(notes, "request-changes", e) < 0)
		return NULL;
	return m->b->decide(m->b->arg, id, "request-changes", notes, e);
}

static json_t *tool_approve(struct mcp *m, json_t *a, struct buf *text, struct err *e)
{
	(void)text;
	const char *id = arg_id(a, e), *notes = jstr(a, "notes");
	if (!id || notes_check(notes, "approve", e) < 0)
		return NULL;
	return m->b->decide(m->b->arg, id, "approve", notes, e);
}

/* ---------------------------------------------------------------- messages */

static json_t *rpc_error(json_t *id, int code, const char *msg, json_t *data)
{
	/* The message may quote the client's or an agent's words. */
	json_t *err = json_pack("{s:i,s:o}", "code", code, "message",
	                        visible_string(msg, strlen(msg)));
	if (data)
		json_object_set_new(err, "data", data);
	return json_pack("{s:s,s:O,s:o}", "jsonrpc", "2.0", "id", id ? id : json_null(), "error",
	                 err);
}

static json_t *rpc_result(json_t *id, json_t *result)
{
	/* A result that could not be made (jansson refused a part) still gets
	 * an answer: a client must not wait for it. */
	if (!result)
		return rpc_error(id, RPC_INTERNAL, "Internal error: the result could not be made",
		                 NULL);
	return json_pack("{s:s,s:O,s:o}", "jsonrpc", "2.0", "id", id, "result", result);
}

/* A tool's failure, as a result the model reads (not a protocol error). */
static json_t *tool_error(const char *msg)
{
	json_t *s = visible_string(msg, strlen(msg));
	json_t *r = json_pack("{s:[{s:s,s:o}],s:b}", "content", "type", "text", "text", s,
	                      "isError", 1);
	return r;
}

static json_t *do_initialize(struct mcp *m, json_t *id, json_t *params)
{
	const char *want = jstr(params, "protocolVersion");
	if (!json_is_object(params) || !want)
		return rpc_error(id, RPC_PARAMS, "Invalid params: initialize needs protocolVersion "
		                 "(a string)", NULL);
	if (m->initialized)
		return rpc_error(id, RPC_INVALID, "Invalid Request: the session is initialized "
		                 "already", NULL);
	const char *v = versions[0];
	for (size_t i = 0; i < sizeof versions / sizeof versions[0]; i++)
		if (!strcmp(want, versions[i]))
			v = versions[i];
	snprintf(m->version, sizeof m->version, "%s", v);
	m->initialized = 1;
	char *names = mcp_tool_names(m->role);
	char *ins = xasprintf("paddock runs coding agents in sandboxes and stops each task at a "
	                      "review gate. This server works on %s with the role %s (tools: %s). "
	                      "%sFollow tasks with show_task or gate_summary, read their work with "
	                      "task_diff and task_log.%s",
	                      m->where ? m->where : "the local store", access_name(m->role),
	                      names, access_allows(m->role, ACCESS_SUBMIT)
	                      ? "Queue work with queue_task. " : "",
	                      access_allows(m->role, ACCESS_REVIEW)
	                      ? " Decide a task at review with request_changes or approve." : "");
	free(names);
	json_t *r = json_pack("{s:s,s:{s:{s:b},s:{s:b,s:b}},s:{s:s,s:s,s:s},s:o}",
	                      "protocolVersion", v, "capabilities", "tools", "listChanged", 0,
	                      "resources", "subscribe", 0, "listChanged", 0, "serverInfo", "name",
	                      "paddock", "title", "paddock", "version", PACKAGE_VERSION,
	                      "instructions", visible_string(ins, strlen(ins)));
	free(ins);
	return rpc_result(id, r);
}

static json_t *do_tools_list(struct mcp *m, json_t *id)
{
	json_t *list = json_array();
	for (size_t i = 0; i < NTOOLS; i++) {
		const struct mcp_tool *t = &tools[i];
		if (!access_allows(m->role, t->needs))
			continue;
		json_t *o = json_pack("{s:s,s:s,s:s,s:o}", "name", t->name, "title", t->title,
		                      "description", t->description, "inputSchema",
		                      json_loads(t->input, 0, NULL));
		if (t->output)
			json_object_set_new(o, "outputSchema", json_loads(t->output, 0, NULL));
		json_object_set_new(o, "annotations", json_pack("{s:s,s:b,s:b,s:b}", "title", t->title,
		                    "readOnlyHint", t->read_only, "destructiveHint", t->destructive,
		                    "openWorldHint", 0));
		json_array_append_new(list, o);
	}
	return rpc_result(id, json_pack("{s:o}", "tools", list));
}

static json_t *do_tools_call(struct mcp *m, json_t *id, json_t *params)
{
	const char *name = jstr(params, "name");
	json_t *args = json_object_get(params, "arguments");
	if (!name || (args && !json_is_object(args) && !json_is_null(args)))
		return rpc_error(id, RPC_PARAMS, "Invalid params: tools/call needs name (a string) "
		                 "and arguments (an object)", NULL);
	const struct mcp_tool *t = tool_find(name);
	if (!t) {
		json_t *shown = visible_string(name, strlen(name));
		char *msg = xasprintf("Unknown tool: %.80s", json_string_value(shown));
		json_decref(shown);
		json_t *r = rpc_error(id, RPC_PARAMS, msg, NULL);
		free(msg);
		return r;
	}
	struct err e = {{0}};
	if (!access_allows(m->role, t->needs)) {
		err_kind_set(&e, ERR_FORBIDDEN, _("%s needs the role %s; this server has the role %s "
		             "(paddock mcp --role, [mcp] role; with --server, the token's)"), t->name,
		             access_name(t->needs), access_name(m->role));
		return rpc_result(id, tool_error(e.msg));
	}
	/* An optional argument given as null (models often send them so) is
	 * left out. */
	json_t *a = json_object(), *v;
	const char *k;
	json_object_foreach(json_is_object(args) ? args : NULL, k, v)
		if (!json_is_null(v))
			json_object_set(a, k, v);
	struct buf text = {0};
	json_t *out = args_check(t, a, &e) < 0 ? NULL : t->run(m, a, &text, &e);
	json_decref(a);
	json_t *r;
	if (!out) {
		r = tool_error(*e.msg ? e.msg : _("the tool failed"));
	} else {
		json_t *sc = clean(out);
		json_decref(out);
		/* The text content: the diff or log itself, else the structured
		 * result as JSON (for clients older than structured content). */
		char *dump = text.len ? NULL : json_dumps(sc, DUMP_FLAGS);
		json_t *txt = text.len ? visible_string(text.data, text.len)
		                       : json_string(dump ? dump : "{}");
		free(dump);
		r = json_pack("{s:[{s:s,s:o}],s:o,s:b}", "content", "type", "text", "text", txt,
		              "structuredContent", sc, "isError", 0);
	}
	buf_free(&text);
	return rpc_result(id, r);
}

/* "paddock://tasks/ID/diff" or ".../log": the id (in out) and kind. */
static const char *resource_parse(const char *uri, char *out, size_t len)
{
	static const char pre[] = "paddock://tasks/";
	if (strncmp(uri, pre, sizeof pre - 1))
		return NULL;
	const char *id = uri + sizeof pre - 1, *slash = strchr(id, '/');
	if (!slash || (size_t)(slash - id) >= len)
		return NULL;
	memcpy(out, id, (size_t)(slash - id));
	out[slash - id] = '\0';
	if (!task_id_valid(out, 1))
		return NULL;
	return !strcmp(slash, "/diff") ? "diff" : !strcmp(slash, "/log") ? "log" : NULL;
}

static json_t *do_templates(json_t *id)
{
	return rpc_result(id, json_pack("{s:[{s:s,s:s,s:s,s:s,s:s},{s:s,s:s,s:s,s:s,s:s}]}",
	                  "resourceTemplates",
	                  "uriTemplate", "paddock://tasks/{id}/diff", "name", "task-diff", "title",
	                  "A paddock task's diff", "description", "The change of the task's agent "
	                  "(base to head), cut at 100 KiB", "mimeType", "text/x-diff",
	                  "uriTemplate", "paddock://tasks/{id}/log", "name", "task-log", "title",
	                  "A paddock task's log", "description", "The last lines of the task's "
	                  "log, without escape sequences", "mimeType", "text/plain"));
}

static json_t *do_resources_list(struct mcp *m, json_t *id)
{
	struct err e = {{0}};
	json_t *rows = m->b->list(m->b->arg, NULL, NULL, MCP_RESOURCE_TASKS, &e);
	if (!rows)
		return rpc_error(id, RPC_INTERNAL, e.msg, NULL);
	json_t *list = json_array(), *t;
	size_t i;
	json_array_foreach(rows, i, t) {
		const char *tid = jstr(t, "id");
		if (i >= MCP_RESOURCE_TASKS)
			break;
		if (!tid || !task_id_valid(tid, 0))
			continue;
		json_t *row = list_row(t);
		json_t *title = json_incref(json_object_get(row, "title"));
		json_decref(row);
		for (int k = 0; k < 2; k++) {
			char *uri = xasprintf("paddock://tasks/%s/%s", tid, k ? "log" : "diff");
			char *name = xasprintf("%s %s", tid, k ? "log" : "diff");
			json_array_append_new(list, json_pack("{s:s,s:s,s:O,s:s}", "uri", uri, "name",
			                      name, "description", title, "mimeType",
			                      k ? "text/plain" : "text/x-diff"));
			free(uri);
			free(name);
		}
		json_decref(title);
	}
	json_decref(rows);
	json_t *c = clean(list);
	json_decref(list);
	return rpc_result(id, json_pack("{s:o}", "resources", c));
}

static json_t *do_resources_read(struct mcp *m, json_t *id, json_t *params)
{
	const char *uri = jstr(params, "uri");
	if (!uri)
		return rpc_error(id, RPC_PARAMS, "Invalid params: resources/read needs uri (a string)",
		                 NULL);
	char tid[80];
	const char *kind = resource_parse(uri, tid, sizeof tid);
	json_t *data = json_pack("{s:o}", "uri", visible_string(uri, strlen(uri)));
	if (!kind)
		return rpc_error(id, MCP_NO_RESOURCE, "Resource not found", data);
	struct err e = {{0}};
	json_t *args = json_pack("{s:s}", "id", tid);
	struct buf text = {0};
	json_t *out = !strcmp(kind, "diff") ? tool_diff(m, args, &text, &e)
	                                    : tool_log(m, args, &text, &e);
	json_decref(args);
	json_t *r;
	if (!out && e.kind == ERR_NOT_FOUND) {
		r = rpc_error(id, MCP_NO_RESOURCE, "Resource not found", data);
		data = NULL;
	} else if (!out) {
		r = rpc_error(id, RPC_INTERNAL, e.msg, NULL);
	} else {
		r = rpc_result(id, json_pack("{s:[{s:O,s:s,s:o}]}", "contents", "uri",
		               json_object_get(data, "uri"), "mimeType",
		               !strcmp(kind, "diff") ? "text/x-diff" : "text/plain", "text",
		               visible_string(text.data, text.len)));
	}
	json_decref(out);
	json_decref(data);
	buf_free(&text);
	return r;
}

/* A request's answer by its method. */
static json_t *dispatch(struct mcp *m, json_t *id, const char *method, json_t *params)
{
	if (!strcmp(method, "ping"))
		return rpc_result(id, json_object());
	if (!strcmp(method, "initialize"))
		return do_initialize(m, id, params);
	if (!m->initialized)
		return rpc_error(id, RPC_INVALID, "Invalid Request: the server is not initialized; "
		                 "send initialize first", NULL);
	if (params && !json_is_object(params))
		return rpc_error(id, RPC_PARAMS, "Invalid params: params must be an object", NULL);
	json_t *cursor = json_object_get(params, "cursor");
	if (cursor && (!strcmp(method, "tools/list") || !strcmp(method, "resources/list") ||
	               !strcmp(method, "resources/templates/list")))
		/* Every list is one page: no cursor was ever given out. */
		return rpc_error(id, RPC_PARAMS, "Invalid params: unknown cursor", NULL);
	if (!strcmp(method, "tools/list"))
		return do_tools_list(m, id);
	if (!strcmp(method, "tools/call"))
		return do_tools_call(m, id, params);
	if (!strcmp(method, "resources/list"))
		return do_resources_list(m, id);
	if (!strcmp(method, "resources/templates/list"))
		return do_templates(id);
	if (!strcmp(method, "resources/read"))
		return do_resources_read(m, id, params);
	json_t *shown = visible_string(method, strlen(method));
	char *msg = xasprintf("Method not found: %.80s", json_string_value(shown));
	json_decref(shown);
	json_t *r = rpc_error(id, RPC_METHOD, msg, NULL);
	free(msg);
	return r;
}

/* One message, parsed: the answer, or NULL when none is due. */
static json_t *handle_one(struct mcp *m, json_t *msg)
{
	if (!json_is_object(msg))
		return rpc_error(NULL, RPC_INVALID, "Invalid Request: a message is a JSON object",
		                 NULL);
	json_t *id = json_object_get(msg, "id");
	json_t *method = json_object_get(msg, "method");
	/* MCP's ids are strings or integers, never null. */
	int id_ok = json_is_string(id) || json_is_integer(id);
	if (!method && (json_object_get(msg, "result") || json_object_get(msg, "error")))
		return NULL;           /* a response: this server asks nothing */
	if (!id && json_is_string(method))
		return NULL;           /* a notification (initialized, cancelled, ...) */
	if (!id_ok)
		return rpc_error(NULL, RPC_INVALID, "Invalid Request: the id must be a string or "
		                 "an integer", NULL);
	if (!json_is_string(json_object_get(msg, "jsonrpc")) ||
	    strcmp(jstr(msg, "jsonrpc"), "2.0"))
		return rpc_error(id, RPC_INVALID, "Invalid Request: jsonrpc must be \"2.0\"", NULL);
	if (!json_is_string(method))
		return rpc_error(id, RPC_INVALID, "Invalid Request: method must be a string", NULL);
	return dispatch(m, id, json_string_value(method), json_object_get(msg, "params"));
}

/* A batch (an array): answered as one array under 2025-03-26, which has
 * them; refused under the others. */
static json_t *handle_batch(struct mcp *m, json_t *msg)
{
	if (!json_array_size(msg) || strcmp(m->version, "2025-03-26"))
		return rpc_error(NULL, RPC_INVALID, json_array_size(msg)
		                 ? "Invalid Request: batches are not supported (MCP 2025-06-18 "
		                   "removed them); send one message per line"
		                 : "Invalid Request: an empty batch", NULL);
	json_t *out = json_array(), *v;
	size_t i;
	json_array_foreach(msg, i, v) {
		json_t *a = json_is_object(v) && !strcmp(jstr(v, "method") ? jstr(v, "method") : "",
		                                         "initialize")
		            ? rpc_error(json_object_get(v, "id"), RPC_INVALID, "Invalid Request: "
		                        "initialize may not be part of a batch", NULL)
		            : handle_one(m, v);
		if (a)
			json_array_append_new(out, a);
	}
	if (!json_array_size(out)) {
		json_decref(out);
		return NULL;
	}
	return out;
}

char *mcp_handle(struct mcp *m, const char *msg, size_t len)
{
	json_error_t je;
	json_t *j = json_loadb(msg, len, JSON_DECODE_ANY, &je);
	json_t *a;
	if (!j)
		a = rpc_error(NULL, RPC_PARSE, "Parse error: the message is not JSON (one JSON-RPC "
		              "message per line, UTF-8)", NULL);
	else if (json_is_array(j))
		a = handle_batch(m, j);
	else
		a = handle_one(m, j);
	json_decref(j);
	if (!a)
		return NULL;
	char *s = json_dumps(a, DUMP_FLAGS);
	json_decref(a);
	return s;
}

/* Writes one answer line; -1 when out fails. */
static int put_line(FILE *out, const char *s)
{
	if (!s)
		return 0;
	if (fputs(s, out) == EOF || fputc('\n', out) == EOF || fflush(out) == EOF)
		return -1;
	return 0;
}

int mcp_serve(struct mcp *m, int fd, FILE *out)
{
	struct buf line = {0};
	int over = 0, rc = 0;
	char tmp[65536];
	for (;;) {
		ssize_t n = read(fd, tmp, sizeof tmp);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		for (ssize_t at = 0; at < n && rc == 0;) {
			char *nl = memchr(tmp + at, '\n', (size_t)(n - at));
			size_t take = nl ? (size_t)(nl - (tmp + at)) : (size_t)(n - at);
			if (!over && line.len + take > MCP_LINE_MAX) {
				/* Too long: the rest of the line is skipped, unread. */
				over = 1;
				buf_free(&line);
			}
			if (!over)
				buf_add(&line, tmp + at, take);
			at += (ssize_t)take + (nl != NULL);
			if (!nl)
				break;
			char *ans = NULL;
			if (over) {
				json_t *a = rpc_error(NULL, RPC_PARSE, "Parse error: the message is over "
				                      "4 MiB", NULL);
				ans = json_dumps(a, DUMP_FLAGS);
				json_decref(a);
			} else {
				size_t len = line.len;
				if (len && line.data[len - 1] == '\r')
					len--;
				if (strspn(line.data ? line.data : "", " \t\r") < len)
					ans = mcp_handle(m, line.data, len);
			}
			over = 0;
			buf_reset(&line);
			rc = put_line(out, ans);
			free(ans);
		}
		if (rc)
			break;
	}
	if (!rc && !over && line.len && strspn(line.data, " \t\r") < line.len) {
		/* The last message, without its newline. */
		char *ans = mcp_handle(m, line.data, line.len);
		rc = put_line(out, ans);
		free(ans);
	}
	buf_free(&line);
	return rc;
}
