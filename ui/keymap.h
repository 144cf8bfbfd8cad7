/* keymap: the requests a user can make and the keys bound to them.
 *
 * One table (REQ_INFO) gives each request its name (used by `[bind]` in
 * the configuration and by the help overlay), its default keys and its
 * help text.  Views receive requests, never raw keys.  Keys are written as
 * in the config: a character ("a", "G"), or <Up>, <Down>, <Left>, <Right>,
 * <PageUp>, <PageDown>, <Home>, <End>, <Enter>, <Esc>, <Tab>, <Backspace>,
 * <F1>..<F12>, <C-x> (control). */
#ifndef PADDOCK_UI_KEYMAP_H
#define PADDOCK_UI_KEYMAP_H

#include <stddef.h>
#include "i18n.h"

/* X(ID, name, default keys (space separated), help) */
#define REQ_INFO(X) \
	X(QUIT,            "quit",            "q <Esc>",        N_("go back; quit from the task list")) \
	X(MOVE_UP,         "move-up",         "<Up> k",         N_("move up")) \
	X(MOVE_DOWN,       "move-down",       "<Down> j",       N_("move down")) \
	X(PAGE_UP,         "page-up",         "<PageUp> <C-b>", N_("one page up")) \
	X(PAGE_DOWN,       "page-down",       "<PageDown> <C-f> <Space>", N_("one page down")) \
	X(FIRST,           "first",           "<Home> g",       N_("to the first line")) \
	X(LAST,            "last",            "<End> G",        N_("to the last line (a log follows again)")) \
	X(ENTER,           "enter",           "<Enter>",        N_("open the selected task or line")) \
	X(NEXT_PANE,       "next-pane",       "<Tab>",          N_("next view of the task: log, diff, gate")) \
	X(VIEW_LOG,        "view-log",        "L",              N_("the task's log")) \
	X(VIEW_DIFF,       "view-diff",       "D",              N_("the task's diff")) \
	X(VIEW_GATE,       "view-gate",       "V",              N_("the task's gate summary and actions")) \
	X(HELP,            "help",            "? <F1>",         N_("this help")) \
	X(PROMPT,          "prompt",          ":",              N_("a command (:help commands)")) \
	X(SEARCH,          "search",          "/",              N_("search forward (log, diff)")) \
	X(SEARCH_BACK,     "search-back",     "?",              N_("search backward (log, diff)")) \
	X(FIND_NEXT,       "find-next",       "n",              N_("next match")) \
	X(FIND_PREV,       "find-prev",       "N",              N_("previous match")) \
	X(FOLLOW,          "follow",          "F",              N_("follow the log as it grows")) \
	X(NEXT_FILE,       "next-file",       "]",              N_("next file of the diff")) \
	X(PREV_FILE,       "prev-file",       "[",              N_("previous file of the diff")) \
	X(NEXT_HUNK,       "next-hunk",       "}",              N_("next hunk of the diff")) \
	X(PREV_HUNK,       "prev-hunk",       "{",              N_("previous hunk of the diff")) \
	X(ROUND,           "round",           "R",              N_("choose the round the diff shows")) \
	X(INTERDIFF,       "interdiff",       "I",              N_("the diff since the last review")) \
	X(COMMENT,         "comment",         "c",              N_("a note on the selected diff line")) \
	X(APPROVE,         "approve",         "A",              N_("approve: push, pull request, done")) \
	X(REQUEST_CHANGES, "request-changes", "r",              N_("request changes with notes")) \
	X(PUSH,            "push",            "P",              N_("push the branch now")) \
	X(REJECT,          "reject",          "X",              N_("reject the task")) \
	X(FOLLOW_UP,       "follow-up",       "U",              N_("follow up a finished task with notes")) \
	X(OVERRIDE,        "override",        "O",              N_("override the selected finding")) \
	X(CANCEL_TASK,     "cancel-task",     "C",              N_("cancel the selected task")) \
	X(NEW_TASK,        "new-task",        "n",              N_("add a new task")) \
	X(FILTER,          "filter",          "f",              N_("filter the list (all, active, review, ended)")) \
	X(REFRESH,         "refresh",         "<C-l>",          N_("redraw the screen"))

enum request {
	REQ_NONE = 0,
#define REQ_ENUM(id, name, keys, help) REQ_##id,
	REQ_INFO(REQ_ENUM)
#undef REQ_ENUM
	REQ_N
};

/* Key codes: Unicode code points for characters; these above. */
enum {
	KEY_CODE_BASE = 0x110000,
	KEYC_UP = KEY_CODE_BASE, KEYC_DOWN, KEYC_LEFT, KEYC_RIGHT, KEYC_PGUP, KEYC_PGDN,
	KEYC_HOME, KEYC_END, KEYC_ENTER, KEYC_ESC, KEYC_TAB, KEYC_BACKSPACE, KEYC_DELETE,
	KEYC_RESIZE, KEYC_MOUSE,
	KEYC_F1, /* .. KEYC_F1 + 11 */
	KEYC_CTRL = KEYC_F1 + 16, /* KEYC_CTRL + 'a'..'z' */
	KEYC_MAX = KEYC_CTRL + 128
};

struct keymap;

struct keymap *keymap_new(void);           /* the default bindings */
void keymap_free(struct keymap *k);
/* Binds keys (as written in the config, several space-separated) to the
 * request named `name`, replacing its default keys; -1 with a message. */
int keymap_bind(struct keymap *k, const char *name, const char *keys, char *msg, size_t msglen);
/* The request of a key in view `view` ("tasks", "log", "diff", "gate",
 * NULL for the global map); REQ_NONE when unbound. */
enum request keymap_lookup(const struct keymap *k, const char *view, int key);
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
const char *keymap_request_help(enum request r);   /* translated */

#endif
