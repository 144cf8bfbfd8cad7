/* config_int: what the configuration's own files share (config.c, the
 * parser; config_keys.c, the key table and its setters); nothing outside
 * them includes it. */
#ifndef PADDOCK_CONFIG_INT_H
#define PADDOCK_CONFIG_INT_H

#include <stddef.h>
#include "config.h"

struct spots;
struct seen;

/* ---- problems: every error found, with its line ---- */

struct problem {
	int line;              /* 0: no line */
	size_t seq;            /* order found, to keep the sort stable */
	char *msg;
};

struct problems {
	struct problem *v;
	size_t n, cap;
};

struct parse {
	const char *path;
	struct config *c;
	struct problems *ps;
	const struct spots *spots;
	/* Sections already reported, so one bad section header yields one
	 * message, not one per key. */
	struct seen *reported;
	int wh_events_seen;    /* an events key was read: the default is off */
};

/* ---- the key table: types and handlers ---- */

/* One entry of the file, as the code that reads its value sees it. */
struct entry {
	struct parse *p;
	int line;
	const struct config_key *k;
	const char *name;      /* section[.sub].key, as messages name it */
	const char *value;
	void *obj;             /* what the section's keys set: the config, or the
	                          named repo, agent, endpoint, price or token */
};

/* How a key's value is read.  config_set_typed checks the simple types
 * and stores them at config_key.off in the section's object, with a
 * message that names the key; a KT_CUSTOM key has a handler of its own. */
enum key_type {
	KT_INT,        /* int: a whole number from lo to hi */
	KT_PORT,       /* int: 1 to 65535 */
	KT_BOOL,       /* int: a boolean as git reads it */
	KT_SIZE,       /* uint64_t: a size (units.h) of at least lo bytes */
	KT_PATH,       /* char *: an absolute path */
	KT_ENV,        /* char *: an environment variable name */
	KT_WORD,       /* char *: one word that does not start with '-' */
	KT_PRICE,      /* double: US dollars per million tokens */
	KT_TEXT,       /* char *: any text */
	KT_OPT_TEXT,   /* char *: any text; empty means none (NULL) */
	KT_DURATION,   /* double: seconds, a duration (units.h) of at most hi
	                  (0: no limit), or a word of none's (stored as 0) */
	KT_CUSTOM      /* set reads it */
};

/* A key of the file.  The table of them, config_keys, is the one list of
 * keys: config_entry dispatches with it, unknown keys get suggestions from
 * it, and config_write_man writes the keys' part of paddock-config(5) from
 * it (doc, def, group and help are man(7) markup, in English). */
struct config_key {
	const char *section;
	const char *key;
	enum key_type type;
	size_t off;                  /* typed keys: offset in the section's object */
	unsigned long long lo, hi;   /* KT_INT: the range; KT_SIZE: the minimum;
	                                KT_DURATION: hi, the longest in seconds */
	void (*set)(const struct entry *en);  /* KT_CUSTOM */
	unsigned none;               /* KT_DURATION: the words that mean none
	                                (KD_ZERO, KD_NEVER), 0: no such word */
	const char *bad;             /* KT_DURATION: the message for a value
	                                it refuses, N_() with one %s, the
	                                value; NULL: "KEY: 'VALUE' is not a
	                                duration; write ..." */
	const char *doc;             /* the value's form; NULL: the type's */
	const char *def;             /* the default in words; NULL: required (a
	                                text that starts with "required" is
	                                printed as it is) */
	const char *group;           /* a paragraph before the key, or NULL */
	const char *help;            /* what the key does */
};

/* The words a KT_DURATION key takes for none, besides a duration. */
enum {
	KD_ZERO = 1,   /* 0 */
	KD_NEVER = 2   /* never */
};

/* A section of the file. */
struct config_section {
	const char *name;
	int named;                   /* needs a name: [repo "NAME"] */
	int any_key;                 /* [bind]: every key is a request's name */
	/* The object of a named section's keys, made on first use; NULL: the
	 * keys set the config itself. */
	void *(*slot)(struct config *c, const char *sub);
	const char *title;           /* the manual's .SS line */
	const char *intro;           /* its text before the keys, or NULL */
};

/* The sections, in the manual's order, and the keys (config_keys.c). */
extern const struct config_section config_sections[];
extern const size_t config_nsections;
extern const struct config_key config_keys[];
extern const size_t config_nkeys;

/* Adds a problem at line (0: none) of the file; ps owns the message. */
void config_problem_add(struct problems *ps, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Replaces *dst (freed) with a copy of value. */
void config_set_str(char **dst, const char *value);
/* Appends a copy of value to the list *v of *n strings. */
void config_strv_add(char ***v, size_t *n, const char *value);
/* Frees the list v of n strings and each of them. */
void config_strv_free(char **v, size_t n);
/* The repo or agent named name in c, added with its defaults when there is
 * none; c owns it. */
struct repo_conf *config_repo_slot(struct config *c, const char *name);
struct agent_conf *config_agent_slot(struct config *c, const char *name);

/* Checks en's value by its key's type and stores it, or adds a problem. */
void config_set_typed(const struct entry *en);
/* 1 when s can name a [price "MODEL"] section: a model id, optionally
 * ending in '*'. */
int config_model_name_valid(const char *s);

#endif
