/* testlib: what the C unit tests share: scratch directories, shell
 * commands, files, git's environment, and strings kept until the end.
 *
 * It prints only TAP comments and "Bail out!" lines; the ok lines and the
 * plan stay with tap.h in each test (its counters are per file).  A test
 * that uses it ends with testlib_end() before tap_done(). */
#ifndef PADDOCK_TESTLIB_H
#define PADDOCK_TESTLIB_H

#include <stddef.h>

/* Keeps a malloc'd string until testlib_end() (the tests stay leak-free
 * under LeakSanitizer without a free() after every check); returns s. */
char *testlib_keep(char *s);

/* A printf-formatted string, kept. */
char *testlib_fmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Makes /tmp/paddock-test-NAME.XXXXXX (kept; removed by testlib_end()
 * unless KEEP_TMP is set).  Bails out when it cannot. */
char *testlib_tmpdir(const char *name);

/* Removes a tree now; a failure is a TAP comment. */
void testlib_rm_rf(const char *path);

/* Removes the scratch directories and frees what was kept. */
void testlib_end(void);

/* Runs a shell command (the test's own strings and scratch paths) and
 * returns system()'s status; its output is shown, as TAP comments, only
 * when it fails. */
int testlib_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A shell command's stdout, trailing newlines removed (kept). */
char *testlib_sh_out(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Writes len bytes to path, creating its directories; bails out when it
 * cannot. */
void testlib_write(const char *path, const void *data, size_t len);

/* testlib_write of printf-formatted text. */
void testlib_write_file(const char *path, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* A file's contents (malloc'd), or NULL when it cannot be read. */
char *testlib_slurp(const char *path);

/* git as the tests run it: no system or global configuration, this
 * author and committer, dates fixed at date unless it is NULL, and no
 * PADDOCK_GIT_TOKEN from the caller's environment. */
void testlib_git_env(const char *name, const char *email, const char *date);

struct child;
/* The Kubernetes contract server (tests/kube-api-server.py) for a test:
 * makes dir/ca.crt and dir/ca.key (a test CA) and dir/srv.crt and
 * dir/srv.key (for 127.0.0.1 and localhost) unless dir/srv.crt is there,
 * then starts the server on loopback (CHILD_DIE_WITH_PARENT, its output
 * in dir/server.out) with --port-file dir/port --log dir/requests.log
 * --cert --key and args (NULL-terminated, may be NULL).  *srv is the
 * caller's to stop.  Returns its port; bails out when it cannot start. */
int testlib_kube_server(struct child *srv, const char *dir, const char *const *args);

struct rp_msg;
/* The runner protocol's frames (runner_proto.h): m encoded as one frame
 * into *b (rp_buf, zeroed first); bails out when it cannot be. */
void testlib_rp_enc(const struct rp_msg *m, void *b);
/* Encodes m, frames and decodes it into *out: 0 when all went well. */
int testlib_rp_round_trip(const struct rp_msg *m, struct rp_msg *out);

#endif
