/* gitlib: libgit2's initialization, once per process.
 *
 * git_libgit2_init from a count of zero loads and parses every CA
 * certificate of the system (libgit2 1.5 with mbedTLS: 3-8 ms), and the
 * matching shutdown frees them, so a module that initialized and shut
 * down around each use paid it every time.  gitlib_init initializes on
 * the first use and keeps libgit2 up until the process exits; a command
 * that never touches a repository (list, show, help) never pays it.  And
 * the certificates themselves wait for the first connection that may
 * speak TLS (gitlib_tls, which remote_auth_init calls): a task's
 * supervisor, paddock diff and the rest that only read repositories never
 * parse them.  Until then libgit2 trusts no CA: an https connection
 * without gitlib_tls fails its certificate check. */
#ifndef PADDOCK_GITLIB_H
#define PADDOCK_GITLIB_H

/* Initializes libgit2 unless done; safe from any thread. */
void gitlib_init(void);

/* gitlib_init, and the CA certificates libgit2's init would have loaded,
 * loaded; before any connection to a remote.  Safe from any thread. */
void gitlib_tls(void);

/* Where the certificates are: 0 libgit2 asked for none (a libgit2
 * without mbedTLS loads its own), 1 its init asked and none is loaded
 * yet, 2 loaded (gitlib_tls).  For the tests. */
int gitlib_ca_state(void);

/* The process's HOME changed (a drop to another user): libgit2 looks for
 * the global and XDG configuration again. */
void gitlib_home_changed(void);

#endif
