/* dash: the dashboard, `paddock` with no arguments.
 *
 * One event loop (poll) over the keyboard, the scheduler it hosts (when no
 * other process owns it) and a timer; everything slow (pushes, large
 * diffs) runs off the loop.  Views read a source (source.h): the store,
 * which other processes (the CLI, another dashboard) change too, or a
 * paddock serve's API.  Script mode (PADDOCK_UI_SCRIPT)
 * reads keys and :commands from a file, draws on a virtual screen of a
 * fixed size and waits until the scheduler and the UI are idle before each
 * step, for golden-file tests; a view's work (a search in a large log) is
 * not waited for, so that a script can press keys while it runs: it goes
 * on only while the script waits (:wait-for). */
#ifndef PADDOCK_UI_DASH_H
#define PADDOCK_UI_DASH_H

#include <stdarg.h>
#include <stdio.h>
#include "config.h"
#include "keymap.h"
#include "role.h"
#include "scheduler.h"
#include "view.h"

struct theme;

#define DASH_NOTES_MAX 500

struct dash {
	struct config *cfg;
	char *data_dir;
	struct source *src;            /* what the views read and ask */
	struct scheduler *sched;       /* NULL when another process runs it */
	struct keymap *keys;
	struct screen *scr;
	struct view *stack[8];
	int nviews;
	char message[512];             /* the status bar's last message */
	enum role message_role;
	/* Every message so far (:messages), oldest first, at most
	 * DASH_NOTES_MAX. */
	struct dash_note {
		double at;             /* unix time */
		enum role role;
		char *text;
	} *notes;
	size_t nnotes;
	int quit;
	int script;                    /* script mode (no terminal) */
	double now;                    /* unix time of this loop turn */
	/* A line editor at the bottom (prompt, search, notes). */
	struct dash_input *input;
	int ask_again;                 /* set by dash_ask_again while an answer is read */
};

/* The : commands (ui/command.c), one table of name, arguments, help and
 * handler: the help view, Tab and paddock(1)'s list come from it.  Ends
 * with a NULL name; an alias (q) and what only scripts run are not in it. */
struct command {
	const char *name, *args, *help;   /* args and help to be translated */
	/* Runs the command; arg has no spaces around it ("" when none). */
	void (*run)(struct dash *d, const char *arg);
};
extern const struct command command_table[];

/* The keys of cfg's [bind] over the defaults and its theme (ui.theme),
 * taken as the dashboard takes them at start and on :reload; the one check
 * of both, for `paddock config check` too.  Each problem goes to report;
 * returns how many there were.  When there were none, *keys and *theme
 * (either may be NULL: only checked) get what was made, to free with
 * keymap_free and theme_free. */
int dash_config_take(const struct config *cfg, struct keymap **keys, struct theme **theme,
                     config_report_fn *report, void *rctx);
/* dash_config_take that only checks: a config_check_fn. */
void dash_config_check(const struct config *cfg, config_report_fn *report, void *rctx);

/* Runs the dashboard; returns the exit status. */
int dash_main(struct config *cfg, int demo);
/* The same on a paddock serve's API at url with token (client.h: the
 * token only over https or to this machine), `paddock --server URL`: the
 * views read the API (source_api_new), decisions are its POSTs (recorded
 * with the token's name), and no scheduler is hosted here.  1 with a
 * message when the server cannot be read. */
int dash_main_remote(struct config *cfg, const char *url, const char *token);

/* Shows a message in the status bar. */
void dash_message(struct dash *d, enum role role, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Copies text for the user: to the terminal's clipboard with OSC 52
 * (where the terminal takes it) and into the status bar, whole, to copy
 * by hand; `what` names it ("task id"). */
void dash_copy(struct dash *d, const char *what, const char *text);
/* `y`: asks what to copy (the task's id, its branch, or `line`, the
 * selected line as shown, when not NULL) and copies it with dash_copy. */
void dash_copy_menu(struct dash *d, const char *task_id, const char *line);
/* Shows a file in $PAGER (less -R when unset) with the terminal given to
 * it and taken back after; -1 with a message in the status bar. */
int dash_pager(struct dash *d, const char *path);
/* `!`: a shell in task_id's kept sandbox at the gate (shell.h): the
 * dashboard gives the terminal up for the session, in a job of its own,
 * its loop (and a hosted scheduler) going on, and takes it back after; the
 * status bar then says how it ended, or why it could not start. */
void dash_shell(struct dash *d, const char *task_id);
/* Opens a view on top (task_id may be NULL). */
int dash_open(struct dash *d, const struct view_ops *ops, const char *task_id);
/* Closes the top view (not the last one). */
void dash_close_top(struct dash *d);

/* Asks for a line of text at the bottom (prompt shown before it; a prompt
 * wider than the screen goes on over the rows below, broken between
 * words, so that no option is cut); done is called with the text, or NULL
 * when cancelled.  multiline: Enter adds a line, <C-d> finishes (notes). */
void dash_ask(struct dash *d, const char *prompt, int multiline, const char *initial,
              void (*done)(struct dash *d, void *arg, const char *text), void *arg);
/* Called by a dash_ask `done` with an answer it refuses: the message goes
 * to the status bar and the same question stays open with what was typed
 * (nothing is thrown away; Esc still drops it).  Not after a cancel
 * (text NULL), nor when done asked another question. */
void dash_ask_again(struct dash *d, enum role role, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Right after dash_ask: Tab completes the whole answer from words (copied),
 * as far as they agree; several left are listed in the status bar. */
void dash_ask_complete(struct dash *d, const char *const *words, size_t n);
/* Like dash_ask on one line, and `changed` is called with the text after
 * each key that changed it (a filter as you type); done as for dash_ask
 * at Enter or Esc. */
void dash_ask_live(struct dash *d, const char *prompt, const char *initial,
                   void (*changed)(struct dash *d, void *arg, const char *text),
                   void (*done)(struct dash *d, void *arg, const char *text), void *arg);
/* Slow work runs off the loop as a job: a program of this binary,
 * `paddock dashboard-job KIND ... -- ARG...` (dash_job_main), never a copy
 * of the dashboard, which may have threads (child.h).  KIND names a
 * function of the table in dash.c; it runs with the dashboard's
 * configuration (as read) and data directory in a struct dash of its
 * own (cfg and data_dir only) and the ARGs, which are copied at the
 * start: nothing of the caller need outlive the call. */

/* A push, a pull request: the action KIND (gate, pick) runs; its message
 * and status come back to the status bar when it ends. */
void dash_background(struct dash *d, const char *what, const char *kind,
                     const char *const *args);

/* Produces data off the loop (a large diff): the producer KIND (diff)
 * writes; chunk gets the output as it is read (the loop draws between
 * chunks), and done the end (data empty; ok: it returned 0; when the job
 * cannot start, data is why).  dash_forget drops what is pending for arg
 * (a view that closes): neither is called any more. */
void dash_stream(struct dash *d, const char *kind, const char *const *args,
                 void (*chunk)(struct dash *d, void *arg, const char *data, size_t len),
                 void (*done)(struct dash *d, void *arg, const char *data, size_t len, int ok),
                 void *arg);
void dash_forget(struct dash *d, void *arg);

/* `paddock dashboard-job ...` (argv[0] "dashboard-job"): what job_start
 * asked for.  Returns the exit status; 2 for arguments that are not the
 * dashboard's. */
int dash_job_main(int argc, char **argv);

#endif
