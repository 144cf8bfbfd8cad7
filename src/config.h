/* config: the user's configuration, in git-config syntax, read with
 * libgit2's config API.
 *
 * The file is $PADDOCK_CONFIG, else $XDG_CONFIG_HOME/paddock/config (else
 * ~/.config/paddock/config; a relative $XDG_CONFIG_HOME is ignored).  A
 * missing file is an empty configuration.  config_load fills a struct
 * config that owns all its strings; free it with config_free.
 *
 * Sections: [paddock] workers; [limits] timeout memory pids disk output
 * bundle (units.h syntax); [sandbox] uid gid (not 0); [repo "NAME"] url
 * (required) branch test setup; [agent "NAME"] command (required, split
 * as agent.h does).  Unknown sections and keys, [include] and keys outside
 * a section are errors.  Errors read "file:line: message"; the line of a
 * bad value is found by scanning the file (names compared as git does),
 * that of a syntax error comes from libgit2. */
#ifndef PADDOCK_CONFIG_H
#define PADDOCK_CONFIG_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include "err.h"

struct limits {
	double timeout;        /* seconds of wall clock for the sandbox steps */
	uint64_t memory;       /* bytes (memory cgroup) */
	long pids;             /* processes (pids cgroup) */
	uint64_t disk;         /* bytes (tmpfs size of the writable layer, /tmp, home) */
	uint64_t output;       /* bytes of agent+test output kept in the log */
	uint64_t bundle;       /* bytes: cap on the result bundle */
};

struct repo_conf {
	char *name;            /* validated: [A-Za-z0-9][A-Za-z0-9._-]{0,63} */
	char *url;             /* path, file:// or https:// URL */
	char *branch;          /* default "main" */
	char *test;            /* shell command run in the sandbox, or NULL */
	char *setup;           /* shell command run once per template, or NULL */
};

struct agent_conf {
	char *name;            /* validated like repo names */
	char *command;         /* command line (split without a shell) */
};

struct config {
	char *path;            /* the file read (may not exist) */
	int workers;           /* default 2 */
	struct limits limits;
	uid_t sandbox_uid;     /* unprivileged host uid the sandbox runs as */
	gid_t sandbox_gid;
	struct repo_conf *repos;
	size_t nrepos;
	struct agent_conf *agents;
	size_t nagents;
};

/* Default config file path (malloc'd). */
char *config_default_path(void);
/* Built-in defaults (no repos, no agents); c need not be initialised. */
void config_init_defaults(struct config *c);
/* Loads path (NULL: default path); c need not be initialised.  On error,
 * e holds "file:line: message" for the first problem (in line order) and c
 * holds the defaults (free it all the same); use config_check to list all
 * of them. */
int config_load(struct config *c, const char *path, struct err *e);
/* Checks path and prints every problem as "file:line: message" to out, in
 * line order (one per unknown or misnamed section).  Returns the number of
 * problems (0 when the file is good).  A missing file is a problem when
 * path names it, not when path is NULL (the default file is optional). */
int config_check(const char *path, FILE *out);
void config_free(struct config *c);

const struct repo_conf *config_find_repo(const struct config *c, const char *name);
const struct agent_conf *config_find_agent(const struct config *c, const char *name);
/* The agent used when a task names none: "default" if defined, else the
 * first one, else NULL. */
const struct agent_conf *config_default_agent(const struct config *c);
/* Adds (or replaces) a repo / agent definition, copying every string
 * (r->branch NULL means "main"); used by the demo. */
void config_add_repo(struct config *c, const struct repo_conf *r);
void config_add_agent(struct config *c, const char *name, const char *command);
/* 1 if name is a valid repo/agent name. */
int config_name_valid(const char *name);

#endif
