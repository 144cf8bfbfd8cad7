/* keymap: the requests a user can make and the keys bound to them.
 *
 * One table (REQ_INFO) gives each request its name (used by `[bind]` in
 * the configuration and by the help overlay), its default keys and its
 * help text.  Views receive requests, never raw keys.  Keys are written as
 * in the config: a character ("a", "G"), or <Up>, <Down>, <Left>, <Right>,
 * <PageUp>, <PageDown>, <Home>, <End>, <Enter>, <Esc>, <Tab>, <Backspace>,
 * <F1>..<F12>, <C-x> (control), <M-x> (Alt, or Esc and then x), <C-Left>,
 * <C-Right>. */
#ifndef PADDOCK_UI_KEYMAP_H
#define PADDOCK_UI_KEYMAP_H

#include <stddef.h>
#include <stdio.h>
#include "i18n.h"

/* Where a request applies: the views it is looked up in. */
#define KS_TASKS (1u << 0)
#define KS_LOG   (1u << 1)
#define KS_DIFF  (1u << 2)
#define KS_GATE  (1u << 3)
#define KS_HELP  (1u << 4)
#define KS_GROUP (1u << 5)                      /* a best-of-N group */
#define KS_TEXT  (KS_LOG | KS_DIFF | KS_GATE)   /* views of a task's text */
#define KS_ALL   (KS_TASKS | KS_TEXT | KS_HELP | KS_GROUP)
#define KS_N     6

/* X(ID, name, scope, default keys (space separated), help).  A key may
 * be bound to several requests of disjoint scopes ("n" adds a task in the
 * list and finds the next match in the log); where scopes overlap, the
 * narrower one wins. */
#define REQ_INFO(X) \
	X(QUIT,            "quit",            KS_ALL,   "q <Esc>",        N_("go back; quit from the task list")) \
	X(MOVE_UP,         "move-up",         KS_ALL,   "<Up> k",         N_("move up")) \
	X(MOVE_DOWN,       "move-down",       KS_ALL,   "<Down> j",       N_("move down")) \
	X(PAGE_UP,         "page-up",         KS_ALL,   "<PageUp> <C-b>", N_("one page up")) \
	X(PAGE_DOWN,       "page-down",       KS_ALL,   "<PageDown> <C-f> <Space>", N_("one page down")) \
	X(FIRST,           "first",           KS_ALL,   "<Home> g",       N_("to the first line")) \
	X(LAST,            "last",            KS_ALL,   "<End> G",        N_("to the last line (a log follows again)")) \
	X(SCROLL_LEFT,     "scroll-left",     KS_TEXT | KS_HELP | KS_GROUP, "<Left> <", N_("scroll long lines left")) \
	X(SCROLL_RIGHT,    "scroll-right",    KS_TEXT | KS_HELP | KS_GROUP, "<Right> >", N_("scroll long lines right")) \
	X(WRAP,            "wrap",            KS_TEXT | KS_GROUP, "w",              N_("wrap long lines, or cut them again")) \
	X(ENTER,           "enter",           KS_ALL,   "<Enter>",        N_("open the selected task or line")) \
	X(NEXT_PANE,       "next-pane",       KS_ALL,   "<Tab>",          N_("next view of the task: log, diff, gate")) \
	X(VIEW_LOG,        "view-log",        KS_ALL,   "L",              N_("the task's log")) \
	X(VIEW_DIFF,       "view-diff",       KS_ALL,   "D",              N_("the task's diff")) \
	X(VIEW_GATE,       "view-gate",       KS_ALL,   "V",              N_("the task's gate summary and actions")) \
	X(HELP,            "help",            KS_ALL,   "? h <F1>",       N_("this help")) \
	X(PROMPT,          "prompt",          KS_ALL,   ":",              N_("a command (Tab completes; :help commands)")) \
	X(SEARCH,          "search",          KS_LOG | KS_DIFF | KS_HELP, "/", N_("search forward")) \
	X(SEARCH_BACK,     "search-back",     KS_LOG | KS_DIFF | KS_HELP, "<C-r>", N_("search backward")) \
	X(FIND_NEXT,       "find-next",       KS_LOG | KS_DIFF | KS_HELP, "n", N_("next match")) \
	X(FIND_PREV,       "find-prev",       KS_LOG | KS_DIFF | KS_HELP, "N", N_("previous match")) \
	X(FOLLOW,          "follow",          KS_LOG,   "F",              N_("follow the log as it grows")) \
	X(COPY,            "copy",            KS_ALL,   "y",     N_("copy the task id, the branch or the selected line")) \
	X(PAGER,           "pager",           KS_LOG | KS_DIFF, "o",      N_("open the log or the diff in $PAGER")) \
	X(NEXT_FILE,       "next-file",       KS_DIFF,  "]",              N_("next file of the diff")) \
	X(PREV_FILE,       "prev-file",       KS_DIFF,  "[",              N_("previous file of the diff")) \
	X(NEXT_HUNK,       "next-hunk",       KS_DIFF,  "}",              N_("next hunk of the diff")) \
	X(PREV_HUNK,       "prev-hunk",       KS_DIFF,  "{",              N_("previous hunk of the diff")) \
	X(ROUND,           "round",           KS_DIFF,  "R",              N_("choose the round the diff shows")) \
	X(INTERDIFF,       "interdiff",       KS_DIFF,  "I",              N_("the diff since the last review")) \
	X(COMMENT,         "comment",         KS_DIFF,  "c",              N_("add a comment on the selected line to the review draft")) \
	X(NEXT_FINDING,    "next-finding",    KS_GATE,  "] f",            N_("the next policy finding")) \
	X(PREV_FINDING,    "prev-finding",    KS_GATE,  "[",              N_("the previous policy finding")) \
	X(APPROVE,         "approve",         KS_GATE,  "A",              N_("approve: push, pull request, done")) \
	X(REQUEST_CHANGES, "request-changes", KS_GATE | KS_DIFF | KS_GROUP, "r", N_("request changes: the draft's comments and notes")) \
	X(DISCARD_DRAFT,   "discard-draft",   KS_GATE | KS_DIFF, "d",     N_("discard the review draft (asks first)")) \
	X(PUSH,            "push",            KS_GATE,  "P",              N_("push the branch now")) \
	X(REJECT,          "reject",          KS_GATE,  "X",              N_("reject the task")) \
	X(PR_RETRY,        "pull-request",    KS_GATE,  "p",              N_("open the pull request that failed, now")) \
	X(FOLLOW_UP,       "follow-up",       KS_GATE,  "U",              N_("follow up a finished task with notes")) \
	X(OVERRIDE,        "override",        KS_GATE,  "O",              N_("override the selected finding")) \
	X(CANCEL_TASK,     "cancel-task",     KS_TASKS | KS_GATE | KS_GROUP, "C", N_("cancel the selected task")) \
	X(PICK,            "pick",            KS_GROUP, "A",              N_("pick the selected member: approve it, end the others (asks first)")) \
	X(NEW_TASK,        "new-task",        KS_TASKS, "n",              N_("add a new task (a recipe or your own text)")) \
	X(CONFIRM_TASK,    "confirm-task",    KS_TASKS | KS_GATE | KS_GROUP, "Y", N_("confirm a waiting task's estimated cost (a group's: every member that waits)")) \
	X(SHELL,           "shell",           KS_TASKS | KS_GATE, "!",    N_("a shell in the task's sandbox kept at the gate")) \
	X(FILTER,          "filter",          KS_TASKS, "f",              N_("the next filter (all, active, review, failed, ended)")) \
	X(TEXT_FILTER,     "text-filter",     KS_TASKS, "/",              N_("filter the list by text as you type")) \
	X(CLEAR_FILTER,    "clear-filter",    KS_TASKS, "<Esc>",          N_("clear the filters and the text filter; with none, quit as q does")) \
	X(SORT,            "sort",            KS_TASKS, "s",              N_("the next order (queued, status, age, time, repo)")) \
	X(NEXT_FAILED,     "next-failed",     KS_TASKS, "F",              N_("the next failed task")) \
	X(NEXT_REVIEW,     "next-review",     KS_TASKS, "R",              N_("the next task at review")) \
	X(REFRESH,         "refresh",         KS_ALL,   "<C-l>",          N_("redraw the screen"))

enum request {
	REQ_NONE = 0,
#define REQ_ENUM(id, name, scope, keys, help) REQ_##id,
	REQ_INFO(REQ_ENUM)
#undef REQ_ENUM
	REQ_N
};

/* Key codes: Unicode code points for characters; these above. */
enum {
	KEY_CODE_BASE = 0x110000,
	KEYC_UP = KEY_CODE_BASE, KEYC_DOWN, KEYC_LEFT, KEYC_RIGHT, KEYC_PGUP, KEYC_PGDN,
	KEYC_HOME, KEYC_END, KEYC_ENTER, KEYC_ESC, KEYC_TAB, KEYC_BACKSPACE, KEYC_DELETE,
	KEYC_RESIZE, KEYC_MOUSE, KEYC_CLEFT, KEYC_CRIGHT,
	KEYC_F1, /* .. KEYC_F1 + 11 */
	KEYC_CTRL = KEYC_F1 + 16, /* KEYC_CTRL + 'a'..'z' */
	KEYC_META = KEYC_CTRL + 128, /* KEYC_META + 'a'..'z': Alt or Esc first */
	KEYC_MAX = KEYC_META + 128
};

struct keymap;

struct keymap *keymap_new(void);           /* the default bindings */
void keymap_free(struct keymap *k);
/* Binds keys (as written in the config, several space-separated) to the
 * request named `name`, replacing its default keys; -1 with a message. */
int keymap_bind(struct keymap *k, const char *name, const char *keys, char *msg, size_t msglen);
/* The request of a key in view `view` ("tasks", "log", "diff", "gate",
 * "help", "group"; NULL: the requests of every view); REQ_NONE when
 * unbound. */
enum request keymap_lookup(const struct keymap *k, const char *view, int key);
/* The scope bit of a view name (KS_TASKS, ...); 0 when none. */
unsigned keymap_view_scope(const char *view);
/* The views (KS_*) a request applies in. */
unsigned keymap_request_scope(enum request r);
/* Parses a key name ("a", "<C-l>", "<Enter>"); -1 when unknown. */
int keymap_parse_key(const char *name, const char **end);
/* The next key of a list of key names separated by spaces ("j j
 * <Enter>"), from *p on: the key (> 0) with *p moved past it; 0 at the
 * end; -1 when *p names no key (*p left there). */
int keymap_next_key(const char **p);
/* Writes a key's name into out. */
void keymap_key_name(int key, char *out, size_t len);
/* The keys bound to a request, space separated, into out. */
void keymap_keys_of(const struct keymap *k, enum request r, char *out, size_t len);
const char *keymap_request_name(enum request r);
/* The first key of request r, as a hint names it ("r"), into out; the
 * command (":request-changes") when no key is bound.  k may be NULL (no
 * keymap yet: the command). */
void keymap_first_key(const struct keymap *k, enum request r, char *out, size_t len);
/* Writes the requests of REQ_INFO with their default keys, in the table's
 * order, as paddock-config(5)'s [bind] section lists them (man(7) text,
 * between its BEGIN and END GENERATED REQUESTS lines; make
 * update-ui-man). */
void keymap_write_man(FILE *f);
const char *keymap_request_help(enum request r);   /* translated */

#endif
