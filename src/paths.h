/* paths: where paddock keeps its state.
 *
 * Data directory: $PADDOCK_HOME, else $XDG_DATA_HOME/paddock, else
 * ~/.local/share/paddock.  Layout (every name below the data dir comes from
 * paddock, never from user text):
 *   paddock.db                 the store
 *   scheduler.lock             flock held by the scheduler owner
 *   mirrors/<repo>.git         bare mirrors
 *   templates/<repo>/<sha>/    read-only checkouts of a base commit
 *   tasks/<id>/                log, prompt, result.bundle, ... */
#ifndef PADDOCK_PATHS_H
#define PADDOCK_PATHS_H

#include "err.h"

/* The data directory (malloc'd).  Does not create it. */
char *paths_data_dir(void);
/* Creates the data directory and its fixed subdirectories (mode 0700 for
 * the top).  Returns the path (malloc'd) or NULL. */
char *paths_data_dir_ensure(struct err *e);
/* Joins data dir components: paths_join(a, b, ..., NULL), malloc'd. */
char *paths_join(const char *first, ...);

#endif
