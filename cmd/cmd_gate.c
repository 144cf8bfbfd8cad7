/* The gate's verbs, one gate action each: approve, push, reject,
 * request-changes, override and follow-up. */
#include "autoconfig.h"
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "buf.h"
#include "config.h"
#include "decide.h"
#include "editor.h"
#include "fsx.h"
#include "gate.h"
#include "i18n.h"
#include "sanitize.h"
#include "scheduler.h"
#include "store.h"
#include "task.h"
#include "taskjson.h"

/* What empty notes of verb's are refused with: what those notes are for
 * (an approval's note is no request to the agent). */
static const char *notes_empty(const char *verb)
{
	if (!strcmp(verb, "approve"))
		return _("the notes are empty; write the note to record with the approval, or "
		         "leave --notes out");
	if (!strcmp(verb, "reject"))
		return _("the notes are empty; say why the task is rejected, or leave --notes out");
	if (!strcmp(verb, "override"))
		return _("the notes are empty; say why the finding is fine, or leave --notes out");
	if (!strcmp(verb, "pick"))
		return _("the notes are empty; write the note to record with the pick, or leave "
		         "--notes out");
	if (!strcmp(verb, "follow-up"))
		return _("the notes are empty; say what the agent should do next");
	return _("the notes are empty; say what the agent should change");
}

/* Notes of verb from --notes, --notes-file, or $EDITOR; NULL with a
 * message when there are none.  Lines starting with '#' from the editor
 * are dropped. */
static char *read_notes(const char *verb, const struct cli_opts *o, int editor_ok,
                        const char *id, int *code)
{
	struct err e = {{0}};
	*code = EXIT_USAGE;
	if (o->notes && o->notes_file) {
		cli_die(EXIT_USAGE, _("give either --notes or --notes-file, not both"));
		return NULL;
	}
	if (o->notes && strspn(o->notes, " \t\r\n") == strlen(o->notes)) {
		cli_die(EXIT_USAGE, "%s", notes_empty(verb));
		return NULL;
	}
	if (o->notes)
		return xstrdup(o->notes);
	struct buf b = {0};
	if (o->notes_file) {
		if ((strcmp(o->notes_file, "-") == 0 ? cli_read_stdin_text(&b) :
		     fsx_read_file(o->notes_file, TASK_TEXT_MAX, &b, &e)) < 0) {
			cli_die(EXIT_USAGE, _("cannot read the notes: %s"),
			        *e.msg ? e.msg : strerror(errno));
			buf_free(&b);
			return NULL;
		}
		/* Refused as task texts are: a NUL would cut the notes short
		 * unseen, and standard input stops reading at the limit. */
		const char *bad = b.len >= TASK_TEXT_MAX
		                  ? _("the notes are 128 KiB or more; they must be shorter")
		                  : memchr(b.data ? b.data : "", '\0', b.len)
		                  ? _("the notes contain a NUL byte; they must be text")
		                  : strspn(b.data ? b.data : "", " \t\r\n") == b.len
		                  ? notes_empty(verb) : NULL;
		if (bad) {
			cli_die(EXIT_USAGE, "%s", bad);
			buf_free(&b);
			return NULL;
		}
		return buf_detach(&b);
	}
	if (!editor_ok)
		return NULL;
	if (!editor_command()) {
		cli_die(EXIT_USAGE, _("no notes: give --notes TEXT or --notes-file FILE, or set "
		                      "EDITOR to write them in an editor"));
		return NULL;
	}
	char *hdr = xasprintf(_("\n# Write what the agent should change in task %s.\n"
	                        "# Lines starting with '#' are ignored; empty notes cancel.\n"), id);
	char *notes = NULL;
	int rc = editor_edit(hdr, &notes, &e);
	free(hdr);
	if (rc < 0) {
		*code = cli_die(rc == -2 ? EXIT_USAGE : 1, _("%s; nothing was requested"), e.msg);
		return NULL;
	}
	if (strspn(notes, " \t\n") == strlen(notes)) {
		free(notes);
		cli_die(EXIT_USAGE, _("the notes are empty; nothing was requested"));
		return NULL;
	}
	return notes;
}

/* What follow-up prints: the new id (the new task with --json), and on
 * standard error where it goes on. */
static void follow_up_print(const struct config *cfg, struct store *s,
                            const struct task_row *t, const char *nid, int json)
{
	struct task_row n;
	struct err e = {{0}};
	if (!json) {
		printf("%s\n", nid);
		fprintf(stderr, _("queued %s: it follows up %s on branch %s\n"), nid, t->id,
		        t->branch);
	} else if (store_task_get(s, nid, &n, &e) == 0) {
		json_t *j = taskjson_task(&n, cfg);
		json_dumpf(j, stdout, cli_json_flags());
		putchar('\n');
		json_decref(j);
		task_row_free(&n);
	}
}

static volatile sig_atomic_t decide_stop;

static void decide_on_signal(int sig)
{
	decide_stop = sig;
}

/* Whether this process carries action on task out itself: no scheduler
 * runs, and it holds the credentials, or nothing is pushed.  When not,
 * why says what it lacks (empty: a scheduler runs). */
static int decide_here(const struct gate_ctx *g, const char *action, const char *task,
                       struct buf *why)
{
	return !scheduler_owner(g->data_dir, NULL, 0) && decide_local(g, action, task, why);
}

/* Lines that may quote the remote, GitHub or the task, made inert. */
static void put_clean(const char *text, FILE *to)
{
	struct buf clean = {0};
	sanitize_visible(text ? text : "", text ? strlen(text) : 0, SANITIZE_KEEP_NEWLINE, &clean,
	                 NULL);
	fputs(clean.data ? clean.data : "", to);
	buf_free(&clean);
}

/* The recorded decision's end, printed as the verb prints it when it
 * carries it out itself; the exit status. */
static int decide_end(const char *action, const char *task, const struct store_action *a)
{
	put_clean(a->outcome, stdout);
	if (!strcmp(a->state, "failed"))
		return cli_die(1, "%s", a->error ? a->error : _("the decision failed"));
	if (!strcmp(action, "approve"))
		printf(_("%s approved: done\n"), task);
	else if (!strcmp(action, "push"))
		printf(_("%s stays at review\n"), task);
	if (a->result)
		return cli_die(1, "%s", a->error ? a->error : _("the pull request failed to open"));
	return 0;
}

int cli_decide_records(const struct gate_ctx *g, const char *action, const char *task)
{
	return !decide_here(g, action, task, NULL);
}

int cli_decide(const struct gate_ctx *g, const char *action, const char *task,
               const char *target, const char *notes, int no_wait)
{
	struct buf why = {0};
	if (decide_here(g, action, task, &why)) {
		buf_free(&why);
		return -1;
	}
	struct err e = {{0}};
	struct store_action a;
	struct decide_watch w;
	if (decide_record(g, action, task, target, notes, &w, &e) < 0) {
		buf_free(&why);
		return cli_die(1, "%s", e.msg);
	}
	long long id = w.id;
	fprintf(stderr, _("recorded: %s of task %s by %s (decision %lld)\n"), action, task,
	        g->actor, id);
	if (why.len)
		fprintf(stderr, _("not carried out here: %s\n"), why.data);
	buf_free(&why);
	if (no_wait) {
		printf(_("%s: %s recorded; the scheduler (paddock serve or the dashboard) carries it "
		         "out\n"), task, action);
		return 0;
	}
	/* Interrupted, the decision stays recorded: say so, and go. */
	struct sigaction sa = { .sa_handler = decide_on_signal }, oint, oterm;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &oint);
	sigaction(SIGTERM, &sa, &oterm);
	int rc = 0;
	for (;;) {
		char owner[64];
		int running = scheduler_owner(g->data_dir, owner, sizeof owner);
		struct buf lines = {0};
		int ended = decide_watch_step(&w, g->st, running ? owner : NULL, &lines, &a, &e);
		put_clean(lines.data, stderr);
		buf_free(&lines);
		if (ended < 0) {
			rc = cli_die(1, "%s", e.msg);
			break;
		}
		if (ended) {
			rc = decide_end(action, task, &a);
			store_action_free(&a);
			break;
		}
		if (decide_stop) {
			fprintf(stderr, _("interrupted: the %s of task %s stays recorded and is carried "
			                  "out by the scheduler; paddock show %s follows it\n"), action,
			        task, task);
			rc = 130;
			break;
		}
		nanosleep(&(struct timespec){ 0, 200000000 }, NULL);
	}
	sigaction(SIGINT, &oint, NULL);
	sigaction(SIGTERM, &oterm, NULL);
	return rc;
}

/* Runs one gate action on the task named by the operand(s). */
static int gate_verb(const char *name, int argc, char **argv, const char *allowed)
{
	const struct cli_verb *v = cli_verb_find(name);
	struct cli_opts o;
	int rc = cli_parse_opts(v, argc, argv, &o, allowed);
	if (rc >= 0)
		return rc;
	int want = strcmp(name, "override") == 0 ? 2 : 1;
	if (argc - optind != want)
		return cli_bad_usage(v);
	const char *id = argv[optind];
	if ((rc = cli_id_usage(id)) >= 0)
		return rc;
	char *notes = NULL;
	int code;
	if (o.again && (o.notes || o.notes_file || strcmp(name, "request-changes"))) {
		fprintf(stderr, _("paddock %s: --again sends the last notes again; give it "
		                  "without --notes or --notes-file\n"), name);
		return cli_bad_usage(v);
	} else if (o.again) {
		/* read from the store below */
	} else if (!strcmp(name, "request-changes") || !strcmp(name, "follow-up")) {
		if (!(notes = read_notes(name, &o, 1, id, &code)))
			return code;
	} else if ((o.notes || o.notes_file) && !(notes = read_notes(name, &o, 0, id, &code))) {
		return code;
	}
	struct config cfg;
	if (cli_load_config(&cfg) < 0) {
		free(notes);
		return EXIT_USAGE;
	}
	char *data = NULL;
	struct store *s = cli_open_store(&data, 0);
	if (!s) {
		config_free(&cfg);
		free(notes);
		return 1;
	}
	struct gate_ctx g = gate_ctx_of(&cfg, data, s, NULL);
	struct err e = {{0}};
	struct buf out = {0};
	struct task_row t;
	char nid[TASK_ID_LEN + 1];
	size_t sent = 0;
	if (store_task_get(s, id, &t, &e) < 0) {
		rc = cli_die(e.kind == ERR_INVALID ? EXIT_USAGE : 1, "%s", e.msg);
		goto out;
	}
	if (o.again && !(notes = gate_last_notes(s, t.id, &e))) {
		rc = cli_die(1, "%s", e.msg);
		task_row_free(&t);
		goto out;
	}
	if (strcmp(name, "follow-up") && gate_may_decide(&g, &t, name, &e) < 0) {
		rc = -1;
	} else if ((!strcmp(name, "approve") || !strcmp(name, "push")) &&
	           (rc = cli_decide(&g, name, t.id, NULL, notes, o.no_wait)) >= 0) {
		/* Recorded, carried out by the scheduler, its end printed. */
		task_row_free(&t);
		goto out;
	} else if (!strcmp(name, "approve"))
		rc = gate_approve(&g, t.id, notes, &out, &e);
	else if (!strcmp(name, "push"))
		rc = gate_push(&g, t.id, &out, &e);
	else if (!strcmp(name, "reject"))
		rc = gate_reject(&g, t.id, notes, &e);
	else if (!strcmp(name, "request-changes"))
		/* The review draft's line comments go with the notes. */
		rc = gate_request_changes_draft(&g, t.id, notes, &sent, &e);
	else if (!strcmp(name, "follow-up"))
		rc = gate_follow_up(&g, t.id, notes, nid, &e);
	else
		rc = gate_override(&g, t.id, argv[optind + 1], notes, &e);
	fputs(out.data ? out.data : "", stdout);
	if (rc < 0) {
		rc = cli_die(1, "%s", e.msg);
	} else if (rc > 0) {
		/* Approved and done, the push stands; the pull request did not
		 * open (it is on the task, and retried). */
		printf(_("%s approved: done\n"), t.id);
		rc = cli_die(1, "%s", e.msg);
	} else {
		rc = 0;
		if (!strcmp(name, "approve"))
			printf(_("%s approved: done\n"), t.id);
		else if (!strcmp(name, "push"))
			printf(_("%s stays at review\n"), t.id);
		else if (!strcmp(name, "reject"))
			printf(_("%s rejected; its branch stays in paddock's mirror\n"), t.id);
		else if (!strcmp(name, "request-changes") && sent)
			printf(ngettext("%s: changes requested with %zu comment of the review draft; "
			                "the agent runs round %d when the scheduler picks it up\n",
			                "%s: changes requested with %zu comments of the review draft; "
			                "the agent runs round %d when the scheduler picks it up\n",
			                (unsigned long)sent), t.id, sent, t.round + 1);
		else if (!strcmp(name, "request-changes"))
			printf(_("%s: changes requested; the agent runs round %d when the scheduler "
			         "picks it up\n"), t.id, t.round + 1);
		else if (!strcmp(name, "follow-up"))
			follow_up_print(&cfg, s, &t, nid, o.json);
		else
			printf(_("%s: finding %s overridden\n"), t.id, argv[optind + 1]);
	}
	task_row_free(&t);
out:
	buf_free(&out);
	store_close(s);
	free(data);
	config_free(&cfg);
	free(notes);
	return rc;
}

int cmd_approve(int argc, char **argv)
{
	return gate_verb("approve", argc, argv, "help notes notes-file no-wait");
}

int cmd_push(int argc, char **argv)
{
	return gate_verb("push", argc, argv, "help no-wait");
}

int cmd_pr(int argc, char **argv)
{
	struct cli_task_verb tv;
	int rc = cli_task_verb_begin("pr", argc, argv, "help json", &tv);
	if (rc >= 0)
		return rc;
	struct config cfg;
	if (cli_load_config(&cfg) < 0) {
		cli_task_verb_end(&tv);
		return EXIT_USAGE;
	}
	struct gate_ctx g = gate_ctx_of(&cfg, tv.data, tv.s, NULL);
	struct err e = {{0}};
	struct buf out = {0};
	rc = gate_pr_retry(&g, tv.t.id, &out, &e);
	/* The task as it is now: its pull request, or the failure again. */
	struct task_row t;
	struct err ge;
	if (tv.o.json && (rc == 0 || e.kind == ERR_REMOTE) &&
	    store_task_get(tv.s, tv.t.id, &t, &ge) == 0) {
		cli_json_print(taskjson_task(&t, &cfg));
		task_row_free(&t);
	} else if (!tv.o.json) {
		fputs(out.data ? out.data : "", stdout);
	}
	rc = rc < 0 ? cli_die(1, "%s", e.msg) : 0;
	buf_free(&out);
	config_free(&cfg);
	cli_task_verb_end(&tv);
	return rc;
}

int cmd_reject(int argc, char **argv)
{
	return gate_verb("reject", argc, argv, "help notes notes-file");
}

int cmd_request_changes(int argc, char **argv)
{
	return gate_verb("request-changes", argc, argv, "help notes notes-file again");
}

int cmd_override(int argc, char **argv)
{
	return gate_verb("override", argc, argv, "help notes notes-file");
}

/* ---------------------------------------------------------------- follow-up */

int cmd_follow_up(int argc, char **argv)
{
	return gate_verb("follow-up", argc, argv, "help json notes notes-file");
}

char *cli_gate_notes(const char *verb, const struct cli_opts *o, const char *id, int *code)
{
	return read_notes(verb, o, 0, id, code);
}

char *cli_gate_notes_edit(const char *verb, const struct cli_opts *o, const char *id, int *code)
{
	return read_notes(verb, o, 1, id, code);
}
