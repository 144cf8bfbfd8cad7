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
	                         the same path, and nothing else of their folders */
	size_t nfiles;
};

/* Splits `command` like a POSIX shell splits words (single and double
 * quotes, backslash), with no expansion of any kind.  Refuses an empty
 * command and unterminated quotes. */
int agent_cmdline_parse(const char *command, struct agent_cmdline *out, struct err *e);
void agent_cmdline_free(struct agent_cmdline *c);

#endif
