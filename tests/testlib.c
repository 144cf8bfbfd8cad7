/* testlib: helpers shared by the C unit tests (testlib.h). */
#include "autoconfig.h"
#include "testlib.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "child.h"
#include "clock.h"
#include "err.h"
#include "fsx.h"
#include "runner_proto.h"

/* libgit2 1.5's git_regexp_match leaks its pcre2 match data when nothing
 * matches (config lookups); not ours to fix.  The stacks stop in libpcre2
 * (no frame pointers).  The same rule as tests/lsan.supp, for a test run
 * by hand without LSAN_OPTIONS. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:libpcre2-8.so\n";
}

static char **kept;
static size_t nkept;
static char **tmpdirs;
static size_t ntmpdirs;

static void bail(const char *what, const char *path)
{
	printf("Bail out! %s %s: %s\n", what, path, strerror(errno));
	exit(1);
}

char *testlib_keep(char *s)
{
	kept = xrealloc(kept, (nkept + 1) * sizeof *kept);
	kept[nkept++] = s;
	return s;
}

static char *vformat(const char *fmt, va_list ap)
{
	char *s;
	if (vasprintf(&s, fmt, ap) < 0)
		abort();
	return s;
}

char *testlib_fmt(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = vformat(fmt, ap);
	va_end(ap);
	return testlib_keep(s);
}

char *testlib_tmpdir(const char *name)
{
	char *dir = testlib_fmt("/tmp/paddock-test-%s.XXXXXX", name);
	if (!mkdtemp(dir))
		bail("cannot make", dir);
	tmpdirs = xrealloc(tmpdirs, (ntmpdirs + 1) * sizeof *tmpdirs);
	tmpdirs[ntmpdirs++] = dir;
	return dir;
}

void testlib_rm_rf(const char *path)
{
	struct err e;
	if (fsx_rm_rf(path, &e) < 0)
		printf("# cleanup: %s\n", e.msg);
}

void testlib_end(void)
{
	for (size_t i = 0; i < ntmpdirs; i++) {
		if (getenv("KEEP_TMP"))
			printf("# kept %s\n", tmpdirs[i]);
		else
			testlib_rm_rf(tmpdirs[i]);
	}
	free(tmpdirs);
	tmpdirs = NULL;
	ntmpdirs = 0;
	for (size_t i = 0; i < nkept; i++)
		free(kept[i]);
	free(kept);
	kept = NULL;
	nkept = 0;
}

int testlib_sh(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *cmd = vformat(fmt, ap);
	va_end(ap);
	char out[] = "/tmp/paddock-test-sh.XXXXXX";
	int fd = mkstemp(out);
	if (fd < 0)
		bail("cannot make", out);
	close(fd);
	char *full = xasprintf("( %s ) >'%s' 2>&1", cmd, out);
	int rc = system(full);
	if (rc != 0) {
		printf("# command failed (%d): %s\n", rc, cmd);
		FILE *f = fopen(out, "r");
		char line[512];
		while (f && fgets(line, sizeof line, f))
			printf("#   %s%s", line, strchr(line, '\n') ? "" : "\n");
		if (f)
			fclose(f);
	}
	unlink(out);
	free(full);
	free(cmd);
	return rc;
}

char *testlib_sh_out(const char *fmt, ...)
{
	va_list ap;
	char chunk[4096];
	struct buf b = {0};
	size_t n;
	va_start(ap, fmt);
	char *cmd = vformat(fmt, ap);
	va_end(ap);
	FILE *p = popen(cmd, "r");
	if (!p)
		abort();
	while ((n = fread(chunk, 1, sizeof chunk, p)) > 0)
		buf_add(&b, chunk, n);
	pclose(p);
	free(cmd);
	char *s = testlib_keep(buf_detach(&b));
	size_t len = strlen(s);
	while (len && s[len - 1] == '\n')
		s[--len] = '\0';
	return s;
}

void testlib_write(const char *path, const void *data, size_t len)
{
	char *dir = xstrdup(path);
	char *slash = strrchr(dir, '/');
	struct err e;
	if (slash && slash != dir) {
		*slash = '\0';
		if (fsx_mkdir_p(dir, 0755, &e) < 0) {
			printf("Bail out! %s\n", e.msg);
			exit(1);
		}
	}
	free(dir);
	FILE *f = fopen(path, "w");
	if (!f)
		bail("cannot write", path);
	if (fwrite(data, 1, len, f) != len || fclose(f) != 0)
		bail("cannot write", path);
}

void testlib_write_file(const char *path, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *text = vformat(fmt, ap);
	va_end(ap);
	testlib_write(path, text, strlen(text));
	free(text);
}

char *testlib_slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	struct buf b = {0};
	char chunk[4096];
	size_t n;
	if (!f)
		return NULL;
	while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
		buf_add(&b, chunk, n);
	fclose(f);
	return buf_detach(&b);
}

void testlib_git_env(const char *name, const char *email, const char *date)
{
	setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
	setenv("GIT_CONFIG_GLOBAL", "/dev/null", 1);
	setenv("GIT_AUTHOR_NAME", name, 1);
	setenv("GIT_AUTHOR_EMAIL", email, 1);
	setenv("GIT_COMMITTER_NAME", name, 1);
	setenv("GIT_COMMITTER_EMAIL", email, 1);
	if (date) {
		setenv("GIT_AUTHOR_DATE", date, 1);
		setenv("GIT_COMMITTER_DATE", date, 1);
	}
	unsetenv("PADDOCK_GIT_TOKEN");
}

int testlib_kube_server(struct child *srv, const char *dir, const char *const *args)
{
	const char *ec = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
	if (access(testlib_fmt("%s/srv.crt", dir), R_OK) != 0 &&
	    testlib_sh("cd %s && printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\\n' >srv.ext && "
	               "openssl req -x509 %s -keyout ca.key -out ca.crt -days 2 -subj /CN=test-ca 2>/dev/null && "
	               "openssl req %s -keyout srv.key -out srv.csr -subj /CN=kube-api 2>/dev/null && "
	               "openssl x509 -req -in srv.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out srv.crt "
	               "-days 2 -extfile srv.ext 2>/dev/null", dir, ec, ec) != 0) {
		printf("Bail out! openssl cannot make the test certificates\n");
		exit(1);
	}
	const char *top = getenv("top_srcdir");
	char *pf = testlib_fmt("%s/port", dir);
	const char *fixed[] = { "python3", testlib_fmt("%s/tests/kube-api-server.py", top ? top : "."),
		"--port-file", pf, "--log", testlib_fmt("%s/requests.log", dir), "--cert",
		testlib_fmt("%s/srv.crt", dir), "--key", testlib_fmt("%s/srv.key", dir) };
	size_t nf = sizeof fixed / sizeof *fixed, na = 0;
	while (args && args[na])
		na++;
	/* Kept: the child struct holds argv. */
	const char **argv = (const char **)(void *)testlib_keep(xcalloc(nf + na + 1, sizeof *argv));
	memcpy(argv, fixed, sizeof fixed);
	for (size_t i = 0; i < na; i++)
		argv[nf + i] = args[i];
	FILE *o = fopen(testlib_fmt("%s/server.out", dir), "w");
	*srv = (struct child){ .argv = argv, .stdio = { CHILD_NULL, fileno(o), fileno(o) },
	                       .flags = CHILD_DIE_WITH_PARENT };
	struct err e = {{0}};
	int started = child_start(srv, &e) == 0;
	fclose(o);
	if (!started) {
		printf("Bail out! %s\n", e.msg);
		exit(1);
	}
	for (int i = 0; i < 200; i++) {
		char *p = testlib_slurp(pf);
		if (p) {
			int port = atoi(p);
			free(p);
			return port;
		}
		clock_sleep(0.05);
	}
	printf("Bail out! the contract server did not start: %s\n",
	       testlib_sh_out("tail -n 3 %s/server.out", dir));
	child_kill(srv, SIGKILL);
	child_finish(srv);
	exit(1);
}

void testlib_rp_enc(const struct rp_msg *m, void *out)
{
	struct rp_buf *b = out;
	*b = (struct rp_buf){ 0 };
	if (rp_encode(b, m) < 0) {
		printf("Bail out! cannot encode %s\n", rp_type_name(m->type));
		exit(1);
	}
}

int testlib_rp_round_trip(const struct rp_msg *m, struct rp_msg *out)
{
	struct rp_buf b;
	testlib_rp_enc(m, &b);
	uint16_t type;
	const unsigned char *body;
	size_t blen;
	long fl = rp_frame(b.data, b.len, &type, &body, &blen);
	int rc = fl == (long)b.len && type == m->type ? rp_decode(type, body, blen, out) : -1;
	rp_buf_free(&b);
	return rc;
}
