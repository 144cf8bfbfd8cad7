/* adapter: how each kind of agent is driven and read (config.h
 * agent_kind): its command line with {prompt}, {session} and {model}
 * filled in, the settings files and variables that point it at the
 * gateway with its own permission prompts off (the sandbox is the
 * boundary), and what its output says happened.
 *
 * Outcomes: an agent that exits 0 after a failed model call has failed;
 * the reason names the model's failure (model-auth, rate-limit,
 * overloaded, context, model), a tool's (tool), the clock (timeout) or
 * the budget (budget). */
#ifndef PADDOCK_ADAPTER_H
#define PADDOCK_ADAPTER_H

#include <stddef.h>
#include "config.h"
#include "err.h"
#include "sandbox.h"

/* Builds argv from the split command (agent.h): an argument that is
 * exactly {prompt}, {session} or {model} is replaced (with no shell, so
 * the text cannot become options or commands: a prompt that starts with
 * '-' is passed as one argument all the same).  An argument {session}
 * with no session, or {model} with no model, is dropped together with
 * the option before it when that one starts with "--" (so "--resume
 * {session}" disappears).  Returns a NULL-terminated malloc'd vector of
 * malloc'd strings. */
char **adapter_argv(char *const *words, const char *prompt, const char *session,
                    const char *model);
void adapter_argv_free(char **argv);

/* The folder `paddock agent install` filled for a, shown read-only in the
 * sandbox (malloc'd), or NULL when a is a script or not installed. */
char *adapter_install_dir(const char *data_dir, const struct agent_conf *a);
/* Installs a->package with npm into <data_dir>/agents/<name> (replacing
 * an older install only once the new one is complete); npm's output goes
 * to out_fd. */
int adapter_install(const char *data_dir, const struct agent_conf *a, int out_fd,
                    struct err *e);

struct gateway;
/* Settings files the agent needs in its home (NULL-terminated array in
 * static or malloc'd storage owned by the caller through
 * adapter_home_free), e.g. Codex's config.toml naming the gateway gw as
 * its model provider (at gateway_port; gw NULL: the configured port). */
struct sandbox_home_file *adapter_home_files(const struct config *cfg,
                                             const struct agent_conf *a,
                                             const struct gateway *gw, size_t *n);
void adapter_home_free(struct sandbox_home_file *f, size_t n);

/* Variables for the agent beyond the gateway's: switches that stop
 * telemetry, update checks and permission prompts.  NULL-terminated,
 * static. */
const char *const *adapter_env(const struct agent_conf *a);

enum adapter_outcome {
	ADAPTER_OK,            /* the agent finished its turn */
	ADAPTER_MODEL,         /* a model call failed: see reason */
	ADAPTER_TOOL,          /* the agent or one of its tools failed */
};

struct adapter_result {
	enum adapter_outcome outcome;
	const char *reason;    /* "model-auth", "rate-limit", "overloaded",
	                          "context", "model", "tool"; NULL when OK */
	char *session;         /* the session id to resume, or NULL */
	char *final;           /* the agent's final message, or NULL */
	char *error;           /* what went wrong, in the agent's words, or NULL */
};

/* Reads the agent's output (the log bytes it wrote this run) for its
 * kind, with the exit status and what the gateway saw of the last model
 * response (status 0 when none; err_type its error type or code).  A
 * script agent is judged by its exit status only. */
void adapter_read(enum agent_kind kind, const char *out, size_t len, int exit_code,
                  int last_status, const char *err_type, const char *err_message,
                  struct adapter_result *r);
void adapter_result_free(struct adapter_result *r);

/* The reason for an HTTP status and API error type/message. */
const char *adapter_model_reason(int status, const char *err_type, const char *message);

#endif
