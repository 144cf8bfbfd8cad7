/* store_int: what the store's own files share (store.c, store_github.c);
 * nothing outside the store includes it. */
#ifndef PADDOCK_STORE_INT_H
#define PADDOCK_STORE_INT_H

#include <sqlite3.h>
#include "err.h"

struct store {
	sqlite3 *db;
	char *path;
	sqlite3_stmt *steps;       /* a task's steps: prepared once, as every
	                              listed row reads them */
	sqlite3_stmt *dv;          /* PRAGMA data_version */
};

/* Column i as a malloc'd string, NULL for NULL. */
char *store_col_str(sqlite3_stmt *st, int i);
/* Runs sql; -1 with e set (the data directory's trouble said plainly). */
int store_exec(struct store *s, const char *sql, struct err *e);
/* Sets e from the connection's last error about `what`; returns -1. */
int store_db_err(struct store *s, struct err *e, const char *what);

#endif
