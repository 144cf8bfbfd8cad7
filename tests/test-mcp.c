/* test-mcp: the MCP server (mcp.h) on a fake backend: what goes out of
 * a diff and a log (cut at the cap on a line's end with a note, the tail's
 * lines, one line over the cap, escape sequences and invalid UTF-8 made
 * inert), the backend's errors as tool errors or -32002, the lists' caps,
 * and mcp_serve's lines (one over MCP_LINE_MAX, the last without its
 * newline). */
#include "autoconfig.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "buf.h"
#include "mcp.h"
#include "tap.h"

static const char *diff_text;
static size_t diff_len;
static const char *log_text;
static size_t log_len;
static size_t rows = 3;

static json_t *f_list(void *arg, const char *status, const char *repo, size_t limit,
                      struct err *e)
{
	(void)arg, (void)status, (void)repo, (void)limit, (void)e;
	json_t *a = json_array();
	/* More than asked: the tool keeps its limit all the same. */
	for (size_t i = 0; i < rows; i++) {
		char id[32], text[400];
		snprintf(id, sizeof id, "aaaaaaaa%02zu", i);
		memset(text, 'x', sizeof text - 1);
		text[sizeof text - 1] = '\0';
		text[0] = '\x1b';
		json_array_append_new(a, json_pack("{s:s,s:s,s:s}", "id", id, "status", "review",
		                                   "text", text));
	}
	return a;
}

static json_t *f_show(void *arg, const char *id, struct err *e)
{
	(void)arg;
	if (!strncmp(id, "dead", 4)) {
		err_kind_set(e, ERR_NOT_FOUND, "no task %s", id);
		return NULL;
	}
	if (!strncmp(id, "bad", 3)) {
		err_kind_set(e, ERR_FORBIDDEN, "refused \x1b]0;title\x07 by the server");
		return NULL;
	}
	return json_pack("{s:s,s:s,s:i,s:s,s:n,s:[]}", "id", id, "status", "review", "round", 2,
	                 "summary", "did \x1b[31mred\x1b[0m things", "gate", "egress");
}

static int f_text(const char *text, size_t len, const char *id, size_t max, struct buf *out,
                  int *cut, struct err *e)
{
	if (!strncmp(id, "dead", 4))
		return err_kind_set(e, ERR_NOT_FOUND, "no task %s", id);
	size_t n = len > max ? max : len;
	buf_add(out, text, n);
	*cut = len > max;
	return 0;
}

static int f_diff(void *arg, const char *id, size_t max, struct buf *out, int *cut,
                  struct err *e)
{
	(void)arg;
	return f_text(diff_text, diff_len, id, max, out, cut, e);
}

static int f_log(void *arg, const char *id, size_t max, struct buf *out, int *cut,
                 struct err *e)
{
	(void)arg;
	/* The last max bytes, as the backends give them. */
	if (log_len > max) {
		int r = f_text(log_text + log_len - max, max, id, max, out, cut, e);
		*cut = 1;
		return r;
	}
	return f_text(log_text, log_len, id, max, out, cut, e);
}

static json_t *f_queue(void *arg, json_t *args, struct err *e)
{
	(void)arg, (void)e;
	return json_pack("{s:s,s:s,s:O}", "id", "newtask0", "status", "queued", "repo",
	                 json_object_get(args, "repo"));
}

static json_t *f_decide(void *arg, const char *id, const char *action, const char *notes,
                        struct err *e)
{
	(void)arg, (void)notes, (void)e;
	return json_pack("{s:s,s:s,s:i}", "id", id, "status", action, "round", 3);
}

static const struct mcp_backend fake = {
	.list = f_list, .show = f_show, .diff = f_diff, .log = f_log, .queue = f_queue,
	.decide = f_decide,
};

/* The answer to one request (a new reference), its line checked to be
 * one line of JSON without a control character. */
static json_t *ask(struct mcp *m, const char *line)
{
	char *a = mcp_handle(m, line, strlen(line));
	if (!a)
		return NULL;
	int clean = 1;
	for (const char *p = a; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			clean = 0;
	if (!clean || strstr(a, "\\u001b") || strstr(a, "\\u0007"))
		printf("# not clean: %.300s\n", a);
	json_t *j = json_loads(a, 0, NULL);
	free(a);
	return clean ? j : NULL;
}

static json_t *call(struct mcp *m, const char *tool, const char *args)
{
	char *line = xasprintf("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
	                       "{\"name\":\"%s\",\"arguments\":%s}}", tool, args);
	json_t *j = ask(m, line);
	free(line);
	return j;
}

static const char *res_str(json_t *j, const char *key)
{
	return json_string_value(json_object_get(json_object_get(json_object_get(j, "result"),
	                                                         "structuredContent"), key));
}

static const char *res_text(json_t *j)
{
	return json_string_value(json_object_get(json_array_get(json_object_get(
		json_object_get(j, "result"), "content"), 0), "text"));
}

static int is_error(json_t *j)
{
	return json_is_true(json_object_get(json_object_get(j, "result"), "isError"));
}

static void test_diff(struct mcp *m)
{
	/* Over the cap: cut at the last whole line, with the note. */
	struct buf d = {0};
	while (d.len < MCP_TEXT_MAX + 5000)
		buf_adds(&d, "+a line of the diff that goes on for a while\n");
	diff_text = d.data;
	diff_len = d.len;
	json_t *j = call(m, "task_diff", "{\"id\":\"abcd1234\"}");
	const char *diff = res_str(j, "diff");
	ok(json_is_true(json_object_get(json_object_get(json_object_get(j, "result"),
	   "structuredContent"), "cut")), "a diff over the cap: cut");
	const char *note = diff ? strstr(diff, "[paddock: the diff is cut here") : NULL;
	ok(note && note > diff && note[-1] == '\n' && strlen(diff) < MCP_TEXT_MAX + 200 &&
	   strstr(note, "'paddock diff abcd1234' shows all of it"),
	   "it ends at a line's end, then the note saying how to see all of it");
	ok(res_text(j) && !strcmp(res_text(j), diff), "the text content is the diff itself");
	json_decref(j);
	buf_free(&d);

	/* Escapes and invalid UTF-8 as marks; nothing dropped. */
	diff_text = "+\x1b]52;c;cGF5bG9hZA==\x07 \xff\xfe \xe2\x80\xae end\n";
	diff_len = strlen(diff_text);
	j = call(m, "task_diff", "{\"id\":\"abcd1234\"}");
	is_str(res_str(j, "diff"), "+^[]52;c;cGF5bG9hZA==^G <0xFF><0xFE> <U+202E> end\n",
	       "a diff's escape sequence, invalid UTF-8 and bidi control as visible marks");
	json_decref(j);

	diff_text = "";
	diff_len = 0;
	j = call(m, "task_diff", "{\"id\":\"abcd1234\"}");
	is_str(res_str(j, "diff"), "[paddock: task abcd1234 changes nothing]\n",
	       "an empty diff says so");
	json_decref(j);
}

static void test_log(struct mcp *m)
{
	struct buf l = {0};
	for (int i = 1; i <= 300; i++)
		buf_printf(&l, "line %d \x1b[1mbold\x1b[0m \x07\n", i);
	log_text = l.data;
	log_len = l.len;
	json_t *j = call(m, "task_log", "{\"id\":\"abcd1234\",\"lines\":3}");
	is_str(res_str(j, "log"), "line 298 bold ^G\nline 299 bold ^G\nline 300 bold ^G\n",
	       "the last 3 lines, escape sequences removed, a bell in caret notation");
	is_int(json_integer_value(json_object_get(json_object_get(json_object_get(j, "result"),
	       "structuredContent"), "lines")), 3, "lines: 3");
	json_decref(j);
	j = call(m, "task_log", "{\"id\":\"abcd1234\"}");
	const char *s = res_str(j, "log");
	ok(s && !strncmp(s, "line 201 ", 9), "100 lines by default");
	json_decref(j);
	buf_free(&l);

	/* One line over the cap, of 3-byte characters: its end, whole
	 * characters only (the result is valid UTF-8, so jansson made it). */
	buf_adds(&l, "first\n");
	while (l.len < MCP_TEXT_MAX * 3)
		buf_adds(&l, "\xe2\x82\xac");
	log_text = l.data;
	log_len = l.len;
	j = call(m, "task_log", "{\"id\":\"abcd1234\",\"lines\":2}");
	s = res_str(j, "log");
	ok(s && strlen(s) <= MCP_TEXT_MAX + 1 && strlen(s) > MCP_TEXT_MAX - 4 &&
	   !strncmp(s, "\xe2\x82\xac", 3), "one line over the cap: its last 100 KiB, whole "
	   "characters");
	json_decref(j);
	buf_free(&l);

	log_text = "";
	log_len = 0;
	j = call(m, "task_log", "{\"id\":\"abcd1234\"}");
	is_str(res_str(j, "log"), "[paddock: task abcd1234 has no log yet]\n", "no log yet");
	json_decref(j);
}

static void test_errors(struct mcp *m)
{
	json_t *j = call(m, "show_task", "{\"id\":\"bad12345\"}");
	ok(is_error(j) && res_text(j) && strstr(res_text(j), "refused ^[]0;title^G by the server"),
	   "a backend's refusal: isError, its escapes as marks");
	json_decref(j);
	j = call(m, "show_task", "{\"id\":\"abcd1234\"}");
	ok(!is_error(j) && !strcmp(res_str(j, "summary"), "did ^[[31mred^[[0m things") &&
	   !json_object_get(json_object_get(json_object_get(j, "result"), "structuredContent"),
	                    "egress"), "show_task: strings made inert, the egress left out");
	json_decref(j);
	j = ask(m, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"resources/read\",\"params\":"
	           "{\"uri\":\"paddock://tasks/dead1234/log\"}}");
	is_int(json_integer_value(json_object_get(json_object_get(j, "error"), "code")), -32002,
	       "resources/read of an unknown task: -32002");
	json_decref(j);
	j = call(m, "queue_task", "{\"repo\":\"r\",\"text\":\"t\",\"inputs\":{\"a\":1}}");
	ok(is_error(j), "queue_task: an input that is not a string: isError");
	json_decref(j);
	j = call(m, "queue_task", "{\"repo\":\"r\",\"text\":\"t\",\"inputs\":{\"a\":\"1\"}}");
	is_str(res_str(j, "id"), "newtask0", "queue_task: the backend's task");
	json_decref(j);
	j = call(m, "request_changes", "{\"id\":\"abcd1234\",\"notes\":\"more\"}");
	ok(is_error(j) && strstr(res_text(j), "needs the role review"),
	   "request_changes above the role: refused");
	json_decref(j);
}

static void test_lists(struct mcp *m)
{
	rows = 30;
	json_t *j = call(m, "list_tasks", "{\"limit\":5}");
	json_t *tasks = json_object_get(json_object_get(json_object_get(j, "result"),
	                                                "structuredContent"), "tasks");
	is_int(json_array_size(tasks), 5, "list_tasks keeps its limit");
	const char *title = json_string_value(json_object_get(json_array_get(tasks, 0), "title"));
	ok(title && !strncmp(title, "^[x", 3) && strlen(title) == 201,
	   "a row's title: the text's first line, 200 bytes, made inert");
	json_decref(j);
	j = ask(m, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"resources/list\"}");
	is_int(json_array_size(json_object_get(json_object_get(j, "result"), "resources")), 40,
	       "resources/list: the diff and log of the 20 newest tasks");
	json_decref(j);
}

static void test_serve(void)
{
	struct mcp m;
	mcp_init(&m, &fake, ACCESS_READ, NULL);
	int in[2];
	if (pipe(in) < 0)
		return;
	FILE *out = tmpfile();
	/* A line over MCP_LINE_MAX, then a ping without its newline. */
	pid_t pid = fork();
	if (pid == 0) {
		close(in[0]);
		char chunk[65536];
		memset(chunk, 'x', sizeof chunk);
		for (size_t n = 0; n < MCP_LINE_MAX + sizeof chunk; n += sizeof chunk)
			if (write(in[1], chunk, sizeof chunk) < 0)
				_exit(1);
		const char *tail = "\n{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"}";
		_exit(write(in[1], tail, strlen(tail)) < 0);
	}
	close(in[1]);
	int rc = mcp_serve(&m, in[0], out);
	close(in[0]);
	is_int(rc, 0, "mcp_serve: 0 at the input's end");
	rewind(out);
	char line[512];
	int n = 0, parse = 0, pong = 0;
	while (fgets(line, sizeof line, out)) {
		n++;
		parse += strstr(line, "\"code\":-32700") != NULL;
		pong += strstr(line, "\"id\":9,\"result\":{}") != NULL;
	}
	ok(n == 2 && parse == 1 && pong == 1, "a line over 4 MiB: -32700, then the last message, "
	   "without its newline, answered");
	fclose(out);
	int st;
	waitpid(pid, &st, 0);
}

int main(void)
{
	struct mcp m;
	mcp_init(&m, &fake, ACCESS_SUBMIT, NULL);
	json_t *j = ask(&m, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":"
	                    "{\"protocolVersion\":\"2025-06-18\"}}");
	is_str(json_string_value(json_object_get(json_object_get(j, "result"), "protocolVersion")),
	       "2025-06-18", "a supported version is answered as asked");
	json_decref(j);
	test_diff(&m);
	test_log(&m);
	test_errors(&m);
	test_lists(&m);
	test_serve();
	char *names = mcp_tool_names(ACCESS_READ);
	is_str(names, "list_tasks show_task task_diff task_log gate_summary", "read's tools");
	free(names);
	return tap_done();
}
