/* dash_int: what the dashboard's own files share (dash.c, command.c): the
 * loop's state behind struct dash, and the : commands' entry points; no
 * view includes it. */
#ifndef PADDOCK_UI_DASH_INT_H
#define PADDOCK_UI_DASH_INT_H

#include <stdint.h>
#include <stdio.h>
#include "buf.h"
#include "child.h"
#include "dash.h"
#include "lineedit.h"
#include "source.h"
#include "store.h"

/* The line editor at the bottom: :commands, searches, notes. */
struct dash_input {
	char *prompt;
	struct lineedit ed;
	void (*done)(struct dash *d, void *arg, const char *text);
	void (*changed)(struct dash *d, void *arg, const char *text);
	void *arg;
	int commands;              /* the : prompt: Tab completes, Up/Down history */
	size_t hist;               /* the history entry shown (nhistory: none) */
	int confirm;               /* asking whether to drop what was written */
	int ctrl_x;                /* <C-x> came: <C-e> opens the editor */
	char **words;              /* what Tab completes the answer from (dash_ask_complete) */
	size_t nwords;
};

/* Slow work running in a forked child: a message for the status bar
 * (dash_background), or data for a callback (dash_stream). */
struct job {
	struct child ch;
	int fd;
	char *what;
	struct buf out;
	void (*done)(struct dash *d, void *arg, const char *data, size_t len, int ok);
	/* dash_stream: each read as it comes, nothing kept. */
	void (*chunk)(struct dash *d, void *arg, const char *data, size_t len);
	void *arg;
	int forgotten;
	int gives_term;            /* it has the terminal (dash_shell) */
};

struct ui {
	struct dash d;
	struct store *st;          /* the local store behind d.src (NULL: the API) */
	struct theme *theme;
	int term_away;             /* a job has the terminal: no drawing, no keys */
	struct job jobs[8];
	int njobs;
	FILE *script;
	int script_line;
	char *script_path;
	int sigfd;
	/* Counts for the status bar and notifications. */
	int running, review, queued, failed;
	int known_review, known_failed;   /* for notifications */
	char notified[64][64];            /* "id/round/status" notified lately */
	size_t nnotified;
	int counts_valid;
	uint64_t counts_version;          /* store_data_version of the counts */
	double pause_until;               /* the first shown pause's end, or 0 */
	char pauses[256];                 /* "anthropic paused until ..." or "" */
	char review_hold[96];             /* the list title's "3/3 at review: new
	                                     tasks wait" (reminder.h), or "" */
	char **history;                   /* : command history */
	size_t nhistory;
	int quit_asked;
	char help_hint[64];               /* "? help", with the key bound now */
	struct config **configs;          /* those :reload read (the first is
	                                     the caller's) */
	size_t nconfigs;
	char *wait_text;                  /* script: wait until the screen shows it */
	double wait_until;
	int script_failed;                /* script: a step failed */
};

static inline struct ui *ui_of(struct dash *d)
{
	return (struct ui *)d;
}

/* The top view, NULL when none is open. */
struct view *dash_top(struct dash *d);
/* The selected task's view of ops (:log, Tab): it replaces another view of
 * the task; over a VIEW_STACKS view (the list, a group) it stacks. */
void dash_open_task_view(struct dash *d, const struct view_ops *ops);
/* Draws the screen (the top view, the title line, the status bar). */
void dash_draw(struct ui *u);
/* :reload: reads the configuration file again; on an error the one in
 * use stays. */
void dash_reload(struct ui *u);

/* ---- ui/command.c ---- */

/* Runs a : line (the ':' and spaces before it are skipped); an unknown
 * command says so in the status bar. */
void command_run(struct dash *d, const char *line);
/* Tab in the line editor at the bottom: the : prompt, or a question with
 * words to complete from (dash_ask_complete). */
void command_complete(struct dash *d);

#endif
