/* role: the named roles a cell of the dashboard can have.  Views say what
 * a cell is (a failed status, an added diff line); themes say how each role
 * looks.  One table (ROLE_INFO) gives the enum and the names used in theme
 * files and screen dumps. */
#ifndef PADDOCK_UI_ROLE_H
#define PADDOCK_UI_ROLE_H

#define ROLE_INFO(X) \
	X(NORMAL,          "normal") \
	X(TITLE,           "title") \
	X(HEADER,          "header") \
	X(STATUSBAR,       "status-bar") \
	X(CURSOR,          "cursor") \
	X(DIM,             "dim") \
	X(ERROR,           "error") \
	X(NOTICE,          "notice") \
	X(PROMPT,          "prompt") \
	X(HELP_KEY,        "help-key") \
	X(TASK_QUEUED,     "status-queued") \
	X(TASK_ACTIVE,     "status-active") \
	X(TASK_REVIEW,     "status-review") \
	X(TASK_DONE,       "status-done") \
	X(TASK_FAILED,     "status-failed") \
	X(TASK_ENDED,      "status-ended") \
	X(LOG_MARKER,      "log-marker") \
	X(LOG_MATCH,       "log-match") \
	X(ESCAPED,         "escaped") \
	X(DIFF_META,       "diff-meta") \
	X(DIFF_FILE,       "diff-file") \
	X(DIFF_HUNK,       "diff-hunk") \
	X(DIFF_ADD,        "diff-add") \
	X(DIFF_DEL,        "diff-del") \
	X(DIFF_ADD_WORD,   "diff-add-word") \
	X(DIFF_DEL_WORD,   "diff-del-word") \
	X(FINDING_BLOCK,   "finding-block") \
	X(FINDING_WARN,    "finding-warn") \
	X(GATE_OK,         "gate-ok")

enum role {
#define ROLE_ENUM(id, name) ROLE_##id,
	ROLE_INFO(ROLE_ENUM)
#undef ROLE_ENUM
	ROLE_N
};

/* "status-failed", ... */
const char *role_name(enum role r);
/* -1 when unknown. */
int role_parse(const char *name);

#endif
