/* mcp: `paddock mcp`, paddock as a Model Context Protocol server on
 * stdio (issue 37), for agents and IDEs that hand work to paddock.
 *
 * The protocol: JSON-RPC 2.0, one message per line (newline-delimited
 * JSON, no embedded newline), read from a descriptor and answered on a
 * stream that carries nothing else (diagnostics go to stderr).  Versions
 * MCP_VERSIONS are spoken: a client's requested one when it is among
 * them, else the latest.  Capabilities: tools and resources (no list
 * changes, no subscriptions); no sampling, prompts or logging.  Requests
 * before initialize (but ping) are refused; notifications (initialized,
 * cancelled, any other) are never answered; batches are refused (MCP
 * dropped them in 2025-06-18) except under 2025-03-26, which has them.
 *
 * A protocol error (bad JSON -32700, an invalid request -32600, an
 * unknown method -32601, bad params or an unknown tool -32602, an unknown
 * resource -32002) is a JSON-RPC error; a tool that fails (bad
 * arguments, a task that is not there, a role that does not allow it, a
 * refusal of the gate or the API) is a result with isError true and the
 * message, as the specification separates them, so that a model sees why.
 *
 * The tools (mcp_tools) and the role each needs (access.h): read:
 * list_tasks, show_task, task_diff, task_log, gate_summary; submit:
 * queue_task; review: request_changes, approve.  A tool above the
 * server's role is not listed and a call to it is refused.  Resources:
 * paddock://tasks/{id}/diff and paddock://tasks/{id}/log.
 *
 * What the tools do is the backend's (struct mcp_backend): the local
 * store or a serve's API, both giving the JSON of taskjson.h; this module
 * checks the arguments, sanitizes every string that goes out (agent text
 * and diffs as sanitize_visible marks them, logs as sanitize_text makes
 * them safe: no escape sequence reaches the client) and caps diffs and
 * logs. */
#ifndef PADDOCK_MCP_H
#define PADDOCK_MCP_H

#include <stddef.h>
#include <stdio.h>
#include <jansson.h>
#include "access.h"
#include "buf.h"
#include "err.h"

/* The latest protocol revision first; a client's other request gets it. */
#define MCP_VERSIONS { "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05" }
/* The longest message read; a longer line is answered -32700, unread. */
#define MCP_LINE_MAX (4u << 20)
/* The most of a diff or a log a tool returns (the rest is cut, with a
 * note saying so and how to see all of it). */
#define MCP_TEXT_MAX (100u << 10)
/* The tasks resources/list lists (each its diff and its log). */
#define MCP_RESOURCE_TASKS 20

/* What the tools do, on the local store or a serve's API.  Each returns
 * a new JSON reference, or 0; NULL or -1 with e set (kind ERR_NOT_FOUND
 * for an unknown task, ERR_FORBIDDEN for a refusal by role or gate,
 * the message said to the client as it is, sanitized). */
struct mcp_backend {
	void *arg;
	/* Tasks newest first, as taskjson_row gives them: status and repo
	 * NULL for any; at most limit. */
	json_t *(*list)(void *arg, const char *status, const char *repo, size_t limit,
	                struct err *e);
	/* The task as taskjson_full gives it. */
	json_t *(*show)(void *arg, const char *id, struct err *e);
	/* The task's diff (base..head), raw: at most max bytes appended to
	 * out, *cut set when there was more. */
	int (*diff)(void *arg, const char *id, size_t max, struct buf *out, int *cut,
	            struct err *e);
	/* The last max bytes of the task's log, raw; *cut set when the log
	 * is longer. */
	int (*log)(void *arg, const char *id, size_t max, struct buf *out, int *cut,
	           struct err *e);
	/* Queues a task from the tool's checked arguments (repo, text, agent,
	 * recipe, inputs, base, approval): {"id", "status"}, more allowed. */
	json_t *(*queue)(void *arg, json_t *args, struct err *e);
	/* action "approve" or "request-changes" on task id with notes (NULL
	 * for none): {"id", "status"}, with "round" and "pending" after a
	 * request for changes and "output" (what happened, lines) after an
	 * approve. */
	json_t *(*decide)(void *arg, const char *id, const char *action, const char *notes,
	                  struct err *e);
};

/* A server: its backend (borrowed) and role, and the session's state. */
struct mcp {
	const struct mcp_backend *b;
	enum access role;
	const char *where;         /* "the local store" or the server's URL, for
	                              the instructions (borrowed) */
	int initialized;           /* initialize answered */
	char version[16];          /* the version agreed */
};

void mcp_init(struct mcp *m, const struct mcp_backend *b, enum access role,
              const char *where);

/* Answers one message (len bytes, no newline): the answer's line
 * (malloc'd, without its newline), or NULL when none is due (a
 * notification, a response). */
char *mcp_handle(struct mcp *m, const char *msg, size_t len);

/* Reads messages from fd until its end and writes each answer to out
 * (one line, flushed).  0 at the input's end; -1 when out fails. */
int mcp_serve(struct mcp *m, int fd, FILE *out);

/* The names of the tools role may call, space-separated (for the
 * documentation's checks and the verb's --help): a new string. */
char *mcp_tool_names(enum access role);

#endif
