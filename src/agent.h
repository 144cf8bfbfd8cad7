/* agent: an agent's command line from the config, split without a shell,
 * and the host files the sandbox must see. */
#ifndef PADDOCK_AGENT_H
#define PADDOCK_AGENT_H

#include <stddef.h>
#include "err.h"

/* A "host file" is an absolute path to a regular file outside what the
 * sandbox already has: not under /usr (nor in a folder that resolves into
 * /usr, as /bin/sh with /bin -> usr/bin), /proc, /dev or /sys.  Kept as
 * written (symlinks not resolved).  Relative paths and --flag=/path are not
 * host files. */
struct agent_cmdline {
	char **argv;          /* NULL-terminated */
	size_t argc;
	char **files;         /* the script: argv[0] when it is a host file, or,
	                         when argv[0] is an interpreter (sh, bash,
	                         python3, node, ... by name or under /usr), its
	                         first non-option argument when that is a host
	                         file.  Shown read-only at the same path, and
	                         nothing else of its folder.  At most one. */
	size_t nfiles;
	char **others;        /* every other host file the command names, once:
	                         refused unless the agent lists it in its files
	                         (agent_check_named) */
	size_t nothers;
};

/* Splits `command` like a POSIX shell splits words (single and double
 * quotes, backslash; in double quotes a backslash escapes only \ " $ `
 * and newline), with no expansion of any kind: $VAR, ~, globs and
 * operators such as | or ; are plain text.  Refuses an empty command,
 * unterminated quotes and a trailing backslash. */
int agent_cmdline_parse(const char *command, struct agent_cmdline *out, struct err *e);
void agent_cmdline_free(struct agent_cmdline *c);

/* 1 when argv0 (a name looked up in PATH, or an absolute path that is not
 * a host file) is a program that runs the script named by its first
 * non-option argument (sh, python3, node, ...; versioned names count:
 * python3.11, lua5.4).  0 for a relative path with a slash. */
int agent_is_interpreter(const char *argv0);

/* 1 when path can be an entry of agent.NAME.files as written: absolute,
 * normalised (no //, /./, /../, trailing /), outside /proc, /dev, /sys. */
int agent_file_path_ok(const char *path);
/* -1 when the command (key "command" or "resume" of agent `name`) names a
 * host file other than its script that is not one of listed[]: the
 * message names the agent, the path and says to list it in
 * agent.NAME.files. */
int agent_check_named(const char *name, const char *key, const struct agent_cmdline *cl,
                      char *const *listed, size_t nlisted, struct err *e);
/* -1 when path, an entry of agent.NAME.files, is not a regular file on
 * this host now. */
int agent_check_listed(const char *name, const char *path, struct err *e);
/* The host files a task's sandbox is shown for an agent whose command is
 * cl and resume rcl (argc 0: none): their scripts and listed[], each once,
 * after the two checks above.  *out is a malloc'd, NULL-terminated array
 * of borrowed strings (free the array only).  -1 with the checks' message. */
int agent_sandbox_files(const char *name, const struct agent_cmdline *cl,
                        const struct agent_cmdline *rcl, char *const *listed, size_t nlisted,
                        const char ***out, size_t *n, struct err *e);

#endif
