/* view: the generic view machinery.  Each view (tasks, log, diff, gate,
 * group, help) is a `const struct view_ops` with designated initializers; the
 * dashboard keeps a stack of open views and gives the top one the screen
 * between the title line and the status bar. */
#ifndef PADDOCK_UI_VIEW_H
#define PADDOCK_UI_VIEW_H

#include <stdio.h>
#include "keymap.h"
#include "screen.h"
#include "task.h"

struct dash;
struct view;

/* Traits of a view, for the dashboard that hosts it (as tig's
 * VIEW_SORTABLE): the host asks the view's flags, never which view it is. */
enum {
	/* A task's view (log, diff, gate) opens over it, not in its place:
	 * the task list, a group, the help. */
	VIEW_STACKS = 1 << 0,
	/* A click that moves the selection is told to request() as REQ_NONE
	 * (the task list: the selection is its task). */
	VIEW_CLICK_REQUEST = 1 << 1,
};

struct view_ops {
	const char *name;              /* keymap scope and :view name */
	unsigned flags;                /* VIEW_* */
	size_t priv_size;              /* zeroed private state, v->priv */
	/* Loads the view (for v->task_id when it has one); -1 with a message
	 * for the status bar. */
	int (*open)(struct view *v, char *msg, size_t msglen);
	/* The title line's text. */
	void (*title)(struct view *v, char *out, size_t len);
	/* Draws rows [y, y + h) of the screen. */
	void (*draw)(struct view *v, struct screen *s, int y, int h);
	/* Handles a request; returns 1 when handled, 0 to let the dashboard
	 * handle it (move, quit, help, ...). */
	int (*request)(struct view *v, enum request req);
	/* The store or the files behind the view may have changed (called
	 * a few times a second); cheap when nothing changed. */
	void (*refresh)(struct view *v);
	/* Slow work off the key loop (a search, an index), a slice of a few
	 * milliseconds at a time: called every loop turn after the screen is
	 * drawn; returns 1 while there is more (the loop does not sleep
	 * then).  May be NULL. */
	int (*work)(struct view *v);
	/* Frees the private state's contents (not v->priv itself). */
	void (*close)(struct view *v);
	/* :filter ARG (the task list: a status group, all, active, running,
	 * queued, review, failed, ended, all also dropping the filters below;
	 * "repo NAME", "agent NAME" or "text WORDS", no NAME or WORDS: that
	 * filter off); -1 with a message when ARG is none of them.  May be
	 * NULL. */
	int (*filter)(struct view *v, const char *arg);
	/* :sort NAME (the task list: queued, status, age, time, repo); -1
	 * with a message when NAME is none of them.  May be NULL. */
	int (*sort)(struct view *v, const char *name);
	/* The words filter and sort take, NULL-terminated, for Tab completion
	 * of :filter and :sort; NULL where the view has none. */
	const char *const *filter_names;
	const char *const *sort_names;
	/* The view Tab (next-pane) opens for the task v->task_id names: the
	 * log, diff and gate go round, the task list and a group open the
	 * log.  NULL: Tab does nothing here. */
	const struct view_ops *next_pane;
};

struct view {
	const struct view_ops *ops;
	struct dash *d;
	char task_id[TASK_ID_LEN + 1];  /* the task it shows, or "" */
	void *priv;
	/* A list of `lines` lines with a selection: the generic scrolling. */
	int lines;
	int top;                       /* first line shown */
	int sel;                       /* selected line (-1: none) */
	int height;                    /* rows it had when last drawn */
	int header_rows;               /* rows above line `top` (a click on row
	                                  y selects top + y - 1 - header_rows) */
	/* Long lines: scrolled sideways by `left` columns, or wrapped. */
	int left;
	int wrap;
	int width;                     /* columns it had when last drawn */
	int more_right;                /* a line drawn went on past the right
	                                  edge (set by draw) */
};

/* Moves sel/top for MOVE_UP/DOWN, PAGE_UP/DOWN, FIRST, LAST; 1 if it was
 * one of them. */
int view_scroll(struct view *v, enum request req);
/* SCROLL_LEFT/RIGHT (half the width at a time) and WRAP: 1 if it was
 * one of them, 2 for SCROLL_RIGHT when no line drawn goes on to the
 * right (nothing moves). */
int view_sideways(struct view *v, enum request req);
/* Keeps sel visible after lines or height changed. */
void view_clamp(struct view *v);

/* ---- what the views share ---- */

/* The role a task's status is drawn in (a status-* role of THEMES); every
 * status is named, so a new one does not compile until it has one. */
enum role view_status_role(enum task_status s);
/* A duration as a clock: "4:12", "1:04:12"; from a day on "3d"
 * (view_short_text).  Below 0 (a clock a moment behind): "0:00". */
void view_clock_text(double secs, char *out, size_t len);
/* A duration in its largest unit: "42s", "11m", "3h", "2d". */
void view_short_text(double secs, char *out, size_t len);

/* A task's review (the gate and the diff view): REQUEST_CHANGES asks for
 * notes and sends them with the task's review draft as one request for
 * changes; DISCARD_DRAFT discards the draft after asking. */
void gate_view_request_changes(struct dash *d, const char *task_id);
void gate_view_discard_draft(struct dash *d, const char *task_id);
/* A gate verb in dash_background's child (approve, push, a pick): verb
 * runs on a source of the child's own, the dashboard's kind
 * (source_for_job); msg gets the facts it appended to out as one line
 * ("a; b", 399 bytes at most), or its error.  verb's return. */
struct source;
struct buf;
struct err;
int gate_view_run(struct dash *d,
                  int (*verb)(struct source *src, const void *arg, struct buf *out,
                              struct err *e),
                  const void *arg, char *msg, size_t msglen);

/* The dashboard's jobs (dash.h: dash_background, dash_stream), run in
 * `paddock dashboard-job`: gate (args: "approve" or "push", the task's
 * id), pick (the group's id, the task's) and diff (the task's id and
 * repo, the commit from or "", the commit to, the range as the API asks
 * it). */
int gate_view_job(struct dash *d, char *const *args, char *msg, size_t msglen);
int group_view_pick_job(struct dash *d, char *const *args, char *msg, size_t msglen);
int diff_view_produce(struct dash *d, char *const *args, FILE *out);

/* Y: asks whether task id may run at its estimated cost, and confirms
 * it (source_confirm); whole_group: when id is in a best-of-N group,
 * every member that waits, in one question.  A message says when nothing
 * waits. */
void tasks_view_confirm(struct dash *d, const char *id, int whole_group);
/* C: asks whether task id is to be cancelled, and cancels it
 * (gate_cancel); the status bar says what came of it. */
void tasks_view_cancel(struct dash *d, const char *id);

/* For Tab completion: the first words of :filter and the names of
 * :sort, NULL-terminated. */
extern const char *const tasks_view_filter_names[];
extern const char *const tasks_view_sort_names[];
/* Writes the entries of :filter and :sort in paddock(1)'s list of
 * commands, with every filter and order of those tables (man(7) text,
 * between its BEGIN and END GENERATED FILTERS lines; make update-ui-man). */
void tasks_view_write_man(FILE *f);

extern const struct view_ops view_tasks;
extern const struct view_ops view_log;
extern const struct view_ops view_diff;
extern const struct view_ops view_gate;
extern const struct view_ops view_group;
extern const struct view_ops view_help;
extern const struct view_ops view_messages;

#endif
