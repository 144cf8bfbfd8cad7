/* test-uiman: the dashboard's lists in the manuals are written from the
 * dashboard's own tables, so that they cannot differ: the requests and
 * their default keys (REQ_INFO) in paddock-config(5)'s [bind], the
 * filters and orders of the task list (ui/tasks_view.c) in paddock(1)'s
 * commands.  test-uiman --man-requests and --man-filters print those
 * lists as the tables write them (make update-ui-man). */
#include "autoconfig.h"
#include "keymap.h"
#include "view.h"
#include "dash.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "buf.h"
#include "tap.h"
#include "testlib.h"

static char *slurp_doc(const char *name)
{
	const char *top = getenv("top_srcdir");
	char *path = xasprintf("%s/doc/%s", top && *top ? top : ".", name);
	char *text = testlib_slurp(path);
	ok(text != NULL, "doc/%s can be read", name);
	free(path);
	return text;
}

/* The lines of text between ".\" BEGIN GENERATED what" and ".\" END
 * GENERATED what"; NULL unless there is one of each. */
static char *generated(const char *text, const char *what)
{
	char *b = xasprintf(".\\\" BEGIN GENERATED %s\n", what);
	char *e = xasprintf(".\\\" END GENERATED %s\n", what);
	const char *p = text ? strstr(text, b) : NULL, *q = p ? strstr(p, e) : NULL;
	char *out = NULL;
	if (p && q && !strstr(p + 1, b) && !strstr(q + 1, e))
		out = xstrndup(p + strlen(b), (size_t)(q - p - strlen(b)));
	free(b);
	free(e);
	return out;
}

static void check(const char *doc, const char *what, void (*write)(FILE *))
{
	char *want = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&want, &size);
	write(f);
	fclose(f);
	char *text = slurp_doc(doc);
	char *got = generated(text, what);
	ok(got != NULL, "doc/%s has one BEGIN and one END GENERATED %s line", doc, what);
	int same = got && strcmp(got, want) == 0;
	ok(same, "doc/%s's generated %s are the table's (run make update-ui-man)", doc, what);
	if (!same && got)
		printf("# want:\n%s# got:\n%s", want, got);
	free(got);
	free(text);
	free(want);
}

/* The help of :filter and :sort, and the task list's section of
 * paddock(1), name every filter and order too. */
static void check_words(void)
{
	char *text = slurp_doc("paddock.1");
	const char *sec = text ? strstr(text, ".SS The task list") : NULL;
	const char *end = sec ? strstr(sec + 1, "\n.SS ") : NULL;
	char *task_list = sec && end ? xstrndup(sec, (size_t)(end - sec)) : xstrdup("");
	int missing = 0;
	for (int w = 0; w < 2; w++) {
		const char *const *names = w ? tasks_view_sort_names : tasks_view_filter_names;
		const char *help = "";
		for (const struct command *k = command_table; k->name; k++)
			if (strcmp(k->name, w ? "sort" : "filter") == 0)
				help = k->help;
		for (size_t i = 0; names[i]; i++) {
			char *bold = xasprintf("\n.B %s", names[i]), *boldr = xasprintf("\n.BR %s ", names[i]);
			char *bi = xasprintf(w ? "\n.B %s\n" : ":filter %s \"", names[i]);
			if (!strstr(help, names[i])) {
				printf("# the help of :%s lacks %s\n", w ? "sort" : "filter", names[i]);
				missing++;
			}
			if (!strstr(task_list, bold) && !strstr(task_list, boldr) && !strstr(task_list, bi)) {
				printf("# paddock(1)'s task list lacks %s\n", names[i]);
				missing++;
			}
			free(bold);
			free(boldr);
			free(bi);
		}
	}
	is_int(missing, 0, "the help and paddock(1)'s task list name every filter and order");
	free(task_list);
	free(text);
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "--man-requests") == 0) {
		keymap_write_man(stdout);
		return 0;
	}
	if (argc == 2 && strcmp(argv[1], "--man-filters") == 0) {
		tasks_view_write_man(stdout);
		return 0;
	}
	check("paddock-config.5", "REQUESTS", keymap_write_man);
	check("paddock.1", "FILTERS", tasks_view_write_man);
	check_words();
	testlib_end();
	return tap_done();
}
