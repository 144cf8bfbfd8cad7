/* report.c: the supervisor's report lines, sent and parsed. */
#include "autoconfig.h"
#include "report.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"

/* Sends one line through a pipe and reads it back without its newline. */
static char *through_pipe(enum report_verb v, const char *arg)
{
	int p[2];
	if (pipe(p) < 0)
		return NULL;
	report_send(p[1], v, arg);
	close(p[1]);
	char *buf = calloc(1, 8192);
	ssize_t n = read(p[0], buf, 8191);
	close(p[0]);
	if (n > 0 && buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	return buf;
}

int main(void)
{
	int named = 0;
	for (int v = 0; v < REPORT_N; v++)
		named += report_name(v) && *report_name(v) && report_doc(v) && *report_doc(v);
	is_int(named, REPORT_N, "every verb has a name and says what it means");
	is_int(REPORT_N, 17, "the protocol has the 17 verbs the scheduler handles");

	char *line = through_pipe(REPORT_FAIL, "testing: two\nlines and a \\ backslash");
	is_str(line, "fail testing: two\\nlines and a \\\\ backslash",
	       "newlines and backslashes travel escaped, on one line");
	enum report_verb v;
	const char *arg;
	ok(report_parse(line, &v, &arg) == 0 && v == REPORT_FAIL, "the line parses as fail");
	is_str(arg, "testing: two\nlines and a \\ backslash", "its argument comes back whole");
	free(line);

	line = through_pipe(REPORT_DONE, NULL);
	is_str(line, "done", "a verb without an argument is the verb alone");
	ok(report_parse(line, &v, &arg) == 0 && v == REPORT_DONE && arg == NULL, "and parses");
	free(line);

	char bad1[] = "launch missiles", bad2[] = "done now", bad3[] = "status", bad4[] = "";
	ok(report_parse(bad1, &v, &arg) < 0, "an unknown verb is refused");
	ok(report_parse(bad2, &v, &arg) < 0, "an argument where none belongs is refused");
	ok(report_parse(bad3, &v, &arg) < 0, "a missing argument is refused");
	ok(report_parse(bad4, &v, &arg) < 0, "an empty line is refused");
	char prefix[] = "statusx running";
	ok(report_parse(prefix, &v, &arg) < 0, "a verb is matched whole, not by prefix");
	return tap_done();
}
