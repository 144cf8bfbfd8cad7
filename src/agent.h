/* agent: an agent's command line from the config, split without a shell,
 * and the host files it names that the sandbox must see. */
#ifndef PADDOCK_AGENT_H
#define PADDOCK_AGENT_H

#include <stddef.h>
#include "err.h"

struct agent_cmdline {
	char **argv;          /* NULL-terminated */
	size_t argc;
	char **files;         /* absolute host paths of regular files named by
	                         argv that lie outside the sandbox's root
	                         (anything not under /usr): shown read-only at
	                         the same path, and nothing else of their folders.
	                         Kept as written (symlinks not resolved), listed
	                         once; an argument whose folder resolves into
	                         /usr (/bin/sh with /bin -> usr/bin) is not one.
	                         Relative paths and --flag=/path are not files. */
	size_t nfiles;
};

/* Splits `command` like a POSIX shell splits words (single and double
 * quotes, backslash; in double quotes a backslash escapes only \ " $ `
 * and newline), with no expansion of any kind: $VAR, ~, globs and
 * operators such as | or ; are plain text.  Refuses an empty command,
 * unterminated quotes and a trailing backslash. */
int agent_cmdline_parse(const char *command, struct agent_cmdline *out, struct err *e);
void agent_cmdline_free(struct agent_cmdline *c);

#endif
