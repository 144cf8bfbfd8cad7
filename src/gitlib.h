/* gitlib: libgit2's initialization, once per process.
 *
 * git_libgit2_init from a count of zero loads and parses every CA
 * certificate of the system (libgit2 1.5 with mbedTLS: 5 ms), and the
 * matching shutdown frees them, so a module that initialized and shut
 * down around each use paid it every time.  gitlib_init initializes on
 * the first use and keeps libgit2 up until the process exits (forked
 * supervisors inherit it); a command that never touches a repository
 * (list, show, help) never pays it. */
#ifndef PADDOCK_GITLIB_H
#define PADDOCK_GITLIB_H

/* Initializes libgit2 unless done; safe from any thread. */
void gitlib_init(void);

/* The process's HOME changed (a drop to another user): libgit2 looks for
 * the global and XDG configuration again. */
void gitlib_home_changed(void);

#endif
