/* The review draft from a terminal: paddock comment (a line comment added
 * to a task's draft, as the dashboard's diff view adds one) and paddock
 * draft (its comments listed, or discarded).  request-changes sends it
 * (cmd_gate.c).  The same output remotely (cmd_remote.c). */
#include "autoconfig.h"
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "buf.h"
#include "diff.h"
#include "diffcache.h"
#include "i18n.h"
#include "mirror.h"
#include "paths.h"
#include "sanitize.h"
#include "store.h"
#include "task.h"
#include "taskjson.h"

/* The path of a "--- a/X" or "+++ b/Y" line (after the 4 bytes of its
 * mark), or "" for /dev/null. */
static void diff_side_path(const char *p, size_t n, struct buf *out)
{
	buf_reset(out);
	if (n >= 2 && (p[0] == 'a' || p[0] == 'b') && p[1] == '/')
		buf_add(out, p + 2, n - 2);
	else if (!(n == 9 && !memcmp(p, "/dev/null", 9)))
		buf_add(out, p, n);
	/* git ends a path with a space-separated tab only when it has spaces. */
	if (out->len && out->data[out->len - 1] == '\t')
		out->data[--out->len] = '\0';
}

char *cli_diff_line(const char *diff, size_t len, const char *path, long line, int old)
{
	struct buf a = {0}, b = {0};
	long on = 0, nn = 0;
	int in_hunk = 0;
	char *found = NULL;
	for (size_t at = 0; at < len && !found;) {
		const char *l = diff + at;
		const char *nl = memchr(l, '\n', len - at);
		size_t n = nl ? (size_t)(nl - l) : len - at;
		at += n + (nl != NULL);
		if (n >= 4 && !memcmp(l, "--- ", 4) && !in_hunk) {
			diff_side_path(l + 4, n - 4, &a);
		} else if (n >= 4 && !memcmp(l, "+++ ", 4) && !in_hunk) {
			diff_side_path(l + 4, n - 4, &b);
		} else if (n >= 11 && !memcmp(l, "diff --git ", 11)) {
			in_hunk = 0;
			buf_reset(&a);
			buf_reset(&b);
		} else if (n >= 2 && !memcmp(l, "@@", 2)) {
			long os = 0, ns = 0;
			if (sscanf(l, "@@ -%ld%*[^+]+%ld", &os, &ns) == 2) {
				on = os;
				nn = ns;
				in_hunk = 1;
			}
		} else if (in_hunk && n >= 1 && (l[0] == ' ' || l[0] == '+' || l[0] == '-')) {
			int is_old = l[0] != '+', is_new = l[0] != '-';
			const char *side = old ? a.data : b.data;
			if (side && !strcmp(side, path) && (old ? is_old && on == line
			                                        : is_new && nn == line))
				found = xstrndup(l + 1, n - 1);
			on += is_old;
			nn += is_new;
		} else if (in_hunk && !(n >= 1 && l[0] == '\\')) {
			in_hunk = 0;
		}
	}
	buf_free(&a);
	buf_free(&b);
	return found;
}

int cli_comment_where(const char *arg, char **path, long *line)
{
	const char *colon = strrchr(arg, ':');
	char *end = NULL;
	long n = colon ? (errno = 0, strtol(colon + 1, &end, 10)) : 0;
	if (!colon || colon == arg || !end || *end || end == colon + 1 || n < 1 || errno)
		return cli_die(EXIT_USAGE, _("'%s' is not FILE:LINE (a file of the task's change and a "
		                             "line number in it, such as src/main.c:42)"), arg), -1;
	*path = xstrndup(arg, (size_t)(colon - arg));
	*line = n;
	return 0;
}

void cli_draft_print(const char *id, json_t *comments)
{
	size_t i;
	json_t *c;
	if (!json_array_size(comments)) {
		printf(_("task %s has no review draft\n"), id);
		return;
	}
	json_array_foreach(comments, i, c) {
		const char *path = json_string_value(json_object_get(c, "path"));
		const char *text = json_string_value(json_object_get(c, "text"));
		const char *com = json_string_value(json_object_get(c, "comment"));
		printf("%lld  ", (long long)json_integer_value(json_object_get(c, "n")));
		cli_put_visible(stdout, path ? path : "", strlen(path ? path : ""), 0);
		printf(json_is_true(json_object_get(c, "old")) ? _(":%lld (removed): ") : ":%lld: ",
		       (long long)json_integer_value(json_object_get(c, "line")));
		cli_put_visible(stdout, text ? text : "", strlen(text ? text : ""), SANITIZE_KEEP_TAB);
		putchar('\n');
		/* The comment, each line indented under its line. */
		for (const char *p = com ? com : ""; *p;) {
			size_t n = strcspn(p, "\n");
			fputs("    ", stdout);
			cli_put_text(stdout, p, n);
			putchar('\n');
			p += n + (p[n] == '\n');
		}
	}
}

/* The task's change (base..head) as paddock diff prints it, into *out. */
static int comment_diff(const char *data, const struct task_row *t, struct buf *out,
                        struct err *e)
{
	if (!t->base || !t->head)
		return err_kind_set(e, ERR_WRONG_STATE, _("task %s has no work to comment on yet"),
		                    t->id);
	char *mirror = mirror_path(data, t->repo);
	char *diffs = paths_task_diffs(data, t->id);
	char *mem = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&mem, &len);
	int rc = f ? diffcache_write(diffs, mirror, t->base, t->head, f, e) : -1;
	if (f)
		fclose(f);
	if (rc == 0)
		buf_add(out, mem ? mem : "", len);
	free(mem);
	free(diffs);
	free(mirror);
	return rc;
}

int cmd_comment(int argc, char **argv)
{
	const struct cli_verb *v = cli_verb_find("comment");
	struct cli_opts o;
	int rc = cli_parse_opts(v, argc, argv, &o, "help old");
	if (rc >= 0)
		return rc;
	if (argc - optind != 3)
		return cli_bad_usage(v);
	const char *id = argv[optind], *com = argv[optind + 2];
	if ((rc = cli_id_usage(id)) >= 0)
		return rc;
	char *path = NULL;
	long line;
	if (cli_comment_where(argv[optind + 1], &path, &line) < 0)
		return EXIT_USAGE;
	if (strspn(com, " \t\r\n") == strlen(com)) {
		free(path);
		return cli_die(EXIT_USAGE, _("the comment is empty; say what the agent should change "
		                             "on that line"));
	}
	char *data = NULL;
	struct store *s = cli_open_store(&data, 0);
	if (!s) {
		free(path);
		return 1;
	}
	struct err e = {{0}};
	struct task_row t;
	struct buf diff = {0};
	char *text = NULL;
	size_t n = 0;
	if (store_task_get(s, id, &t, &e) < 0) {
		rc = cli_die(e.kind == ERR_INVALID ? EXIT_USAGE : 1, "%s", e.msg);
		goto out;
	}
	if (t.status != TASK_REVIEW)
		rc = cli_die(1, _("task %s is %s; a review draft is written at review"), t.id,
		             task_status_label(t.status));
	else if (comment_diff(data, &t, &diff, &e) < 0)
		rc = cli_die(1, "%s", e.msg);
	else if (!(text = cli_diff_line(diff.data ? diff.data : "", diff.len, path, line, o.old)))
		rc = cli_die(1, o.old ? _("%s:%ld is no line of the old file in task %s's change; "
		                          "'paddock diff %s' shows it")
		                      : _("%s:%ld is no line of task %s's change; 'paddock diff %s' "
		                          "shows it (--old for a removed line)"),
		             path, line, t.id, t.id);
	else {
		struct review_comment c = { .path = path, .line = line, .old = o.old, .text = text,
		                            .comment = (char *)com };
		if (store_draft_add(s, t.id, &c, &e) < 0 || store_draft_count(s, t.id, &n, &e) < 0)
			rc = cli_die(1, "%s", e.msg);
		else
			printf(ngettext("%s: comment added to the review draft (%zu comment); "
			                "'paddock request-changes %s' sends it\n",
			                "%s: comment added to the review draft (%zu comments); "
			                "'paddock request-changes %s' sends them\n", (unsigned long)n),
			       t.id, n, t.id);
	}
	task_row_free(&t);
out:
	free(text);
	buf_free(&diff);
	store_close(s);
	free(data);
	free(path);
	return rc < 0 ? 0 : rc;
}

int cmd_draft(int argc, char **argv)
{
	struct cli_task_verb tv;
	int rc = cli_task_verb_begin("draft", argc, argv, "help json discard", &tv);
	if (rc >= 0)
		return rc;
	rc = 0;
	struct err e = {{0}};
	if (tv.o.json && tv.o.discard) {
		rc = cli_die(EXIT_USAGE, _("give either --json or --discard, not both"));
	} else if (tv.o.discard) {
		int n = store_draft_discard(tv.s, tv.t.id, LLONG_MAX, &e);
		if (n < 0)
			rc = cli_die(1, "%s", e.msg);
		else
			printf(ngettext("%s: %d comment of the review draft discarded\n",
			                "%s: %d comments of the review draft discarded\n",
			                (unsigned long)n), tv.t.id, n);
	} else {
		struct review_comment *c = NULL;
		size_t n = 0;
		if (store_draft_list(tv.s, tv.t.id, &c, &n, &e) < 0) {
			rc = cli_die(1, "%s", e.msg);
		} else {
			json_t *j = taskjson_draft(tv.t.id, c, n);
			if (tv.o.json)
				cli_json_print(json_incref(j));
			else
				cli_draft_print(tv.t.id, json_object_get(j, "comments"));
			json_decref(j);
		}
		store_draft_free(c, n);
	}
	cli_task_verb_end(&tv);
	return rc;
}
