/* The logger (logger.h): text byte for byte as serve printed it, JSON
 * lines with their fields, hidden secrets and paths, sanitized strings,
 * whole lines from many threads, and standard error (its own and a
 * child's) taken into the JSON log. */
#include "autoconfig.h"
#include "logger.h"

#include <jansson.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "paths.h"
#include "tap.h"
#include "testlib.h"

static char *dir;

/* A logger on two files of dir; *out and *err their paths. */
static struct logger *open_on(enum logger_format f, const char *name, char **out, char **err,
                              FILE **fo, FILE **fe)
{
	*out = testlib_fmt("%s/%s.out", dir, name);
	*err = testlib_fmt("%s/%s.err", dir, name);
	*fo = fopen(*out, "w");
	*fe = fopen(*err, "w");
	return logger_new(f, *fo, *fe);
}

static void test_text(void)
{
	char *out, *err;
	FILE *fo, *fe;
	struct logger *lg = open_on(LOGGER_TEXT, "text", &out, &err, &fo, &fe);
	logger_task(lg, LOGGER_INFO, "ab12", "r", "review", "review", "3 files changed");
	logger_task(lg, LOGGER_WARNING, "ab12", "r", "failed", "failed", NULL);
	logger_task(lg, LOGGER_INFO, "ab12", NULL, "webhook.delivered", "webhook", "review sent");
	logger_event(lg, LOGGER_INFO, NULL, NULL, "api.listening", "paddock: listens on %d\n", 8);
	logger_event(lg, LOGGER_ERROR, "ab12", NULL, "error", "paddock: %s: %s", "ab12", "bad");
	logger_event(lg, LOGGER_WARNING | LOGGER_ON_OUT, NULL, NULL, "key.missing", "paddock: no key");
	logger_lines(lg, LOGGER_INFO, NULL, NULL, "decision", "one\n\ntwo\n");
	logger_hide(lg, "secret-value", NULL);
	logger_event(lg, LOGGER_INFO, NULL, NULL, "x", "text keeps secret-value");
	logger_free(lg);
	fclose(fo);
	fclose(fe);
	is_str(testlib_keep(testlib_slurp(out)),
	       "ab12  review     3 files changed\nab12  failed\nab12  webhook    review sent\n"
	       "paddock: listens on 8\npaddock: no key\none\ntwo\ntext keeps secret-value\n",
	       "text: progress lines and notices on out, as serve printed them");
	is_str(testlib_keep(testlib_slurp(err)), "paddock: ab12: bad\n",
	       "text: an error on err");
}

/* The JSON objects of path's lines; NULL when one is not an object. */
static json_t *read_json(const char *path)
{
	char *s = testlib_keep(testlib_slurp(path));
	json_t *a = json_array();
	for (char *line = strtok(s, "\n"); line; line = strtok(NULL, "\n")) {
		json_t *o = json_loads(line, 0, NULL);
		if (!json_is_object(o)) {
			json_decref(a);
			return NULL;
		}
		json_array_append_new(a, o);
	}
	return a;
}

static const char *get(json_t *a, size_t i, const char *k)
{
	return json_string_value(json_object_get(json_array_get(a, i), k));
}

static void test_json(void)
{
	char *out, *err;
	FILE *fo, *fe;
	struct logger *lg = open_on(LOGGER_JSON, "json", &out, &err, &fo, &fe);
	logger_hide(lg, "sk-secret-123", NULL);
	logger_hide(lg, "/var/lib/paddock", "<data directory>");
	logger_hide(lg, "abc", NULL);  /* too short to hide */
	logger_task(lg, LOGGER_INFO, "ab12", "r", "preparing", "preparing", "r");
	logger_task(lg, LOGGER_WARNING, "ab12", NULL, "failed", "failed",
	            "bundle refused: \033]0;t\007 sk-secret-123 abc");
	logger_event(lg, LOGGER_ERROR, "ab12", NULL, "error", "paddock: %s: %s\n", "ab12",
	             "cannot open /var/lib/paddock/x");
	logger_event(lg, LOGGER_ERROR | LOGGER_ON_OUT, NULL, NULL, "github.error",
	             "paddock: github: \xff bad byte");
	logger_event(lg, LOGGER_INFO, "cd34", NULL, "running", "no repo known");
	logger_free(lg);
	fclose(fo);
	fclose(fe);
	json_t *a = read_json(out);
	ok(a && json_array_size(a) == 5, "json: every line an object, all on out");
	is_str(testlib_keep(testlib_slurp(err)), "", "json: nothing on err");
	if (!a)
		return;
	const char *t = get(a, 0, "time");
	ok(t && strlen(t) == 24 && t[10] == 'T' && t[19] == '.' && t[23] == 'Z',
	   "time: RFC 3339, UTC, milliseconds (%s)", t ? t : "none");
	char *keys = NULL;
	const char *k;
	json_t *v;
	struct buf kb = {0};
	json_object_foreach(json_array_get(a, 0), k, v)
		buf_printf(&kb, "%s ", k);
	keys = testlib_keep(buf_detach(&kb));
	is_str(keys, "time level task repo event message ", "the fields, in order");
	is_str(get(a, 0, "message"), "r", "a progress line's message is its detail");
	is_str(get(a, 1, "level"), "warning", "its level as given");
	is_str(get(a, 1, "repo"), "r", "a line without repo takes the task's last one");
	is_str(get(a, 1, "message"), "bundle refused: ^[]0;t^G *** abc",
	       "escapes as marks, the secret hidden, a 3-byte one not");
	is_str(get(a, 2, "message"), "cannot open <data directory>/x",
	       "the \"paddock: ID: \" that starts a line is dropped, the path named");
	is_str(get(a, 2, "event"), "error", "event as given");
	is_str(get(a, 3, "message"), "github: <0xFF> bad byte", "invalid UTF-8 shown as a mark");
	is_str(get(a, 3, "level"), "error", "ON_OUT is text's only: the level stays error");
	ok(!json_object_get(json_array_get(a, 4), "repo") &&
	   !strcmp(get(a, 4, "task"), "cd34"), "no repo where none is known");
	json_decref(a);
}

static struct logger *shared;

static void *many(void *arg)
{
	long n = (long)arg;
	char big[1500];
	memset(big, 'a' + (int)n, sizeof big - 1);
	big[sizeof big - 1] = '\0';
	for (int i = 0; i < 100; i++)
		logger_event(shared, LOGGER_INFO, NULL, NULL, "x", "%ld %d %s", n, i, big);
	return NULL;
}

static void test_threads(void)
{
	char *out, *err;
	FILE *fo, *fe;
	shared = open_on(LOGGER_JSON, "threads", &out, &err, &fo, &fe);
	pthread_t t[4];
	for (long i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, many, (void *)i);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	logger_free(shared);
	fclose(fo);
	fclose(fe);
	json_t *a = read_json(out);
	ok(a && json_array_size(a) == 400, "four threads, 400 long lines: each one whole");
	json_decref(a);
}

static void test_stderr(void)
{
	char *out, *err;
	FILE *fo, *fe;
	struct logger *lg = open_on(LOGGER_JSON, "stderr", &out, &err, &fo, &fe);
	struct err e = {{0}};
	ok(logger_stderr_take(lg, &e) == 0, "stderr taken");
	fprintf(stderr, "own line\n");
	fflush(stderr);
	/* A child, before the reader runs: it waits in the pipe. */
	if (system("printf 'from a child\\033[31m\\nno newline' >&2") != 0)
		printf("# the child failed\n");
	logger_stderr_start(lg);
	logger_free(lg);
	fprintf(stderr, "# fd 2 is back\n");
	fclose(fo);
	fclose(fe);
	json_t *a = read_json(out);
	ok(a && json_array_size(a) == 3, "three lines of standard error, as JSON");
	if (a) {
		is_str(get(a, 0, "message"), "own line", "this process's");
		is_str(get(a, 1, "message"), "from a child^[[31m", "a child's, sanitized");
		is_str(get(a, 2, "message"), "no newline", "the rest without a newline, at the end");
		is_str(get(a, 0, "event"), "stderr", "event stderr");
		is_str(get(a, 0, "level"), "error", "level error");
	}
	json_decref(a);
	struct logger *tl = logger_new(LOGGER_TEXT, stdout, stderr);
	ok(logger_stderr_take(tl, &e) == 0, "text: stderr stays as it is");
	logger_free(tl);
}

int main(void)
{
	dir = testlib_tmpdir("logger");
	test_text();
	test_json();
	test_threads();
	test_stderr();
	enum logger_format f;
	struct err e = {{0}};
	ok(logger_format_parse("json", "x", &f, &e) == 0 && f == LOGGER_JSON, "json parses");
	ok(logger_format_parse("xml", "--log-format", &f, &e) < 0 &&
	   strstr(e.msg, "--log-format: 'xml' is not a log format; write text or json"),
	   "xml refused, naming text and json: %s", e.msg);
	testlib_end();
	return tap_done();
}
