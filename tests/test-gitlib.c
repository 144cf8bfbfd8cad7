/* test-gitlib: libgit2's CA certificates wait for the first connection
 * (gitlib.h): opening repositories parses none, remote_auth_init loads
 * them, and a server whose certificate no CA vouches for is refused
 * before and after (no certificates loaded means none trusted, never an
 * unchecked connection). */
#include "autoconfig.h"
#include "gitlib.h"
#include "remote.h"

#include <git2.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tap.h"
#include "testlib.h"

/* A TLS server on loopback with a self-signed certificate (python3's ssl
 * module), its port in DIR/port; it accepts and closes until killed. */
static int tls_server_start(const char *dir)
{
	if (testlib_sh("cd '%s' && openssl req -x509 -newkey rsa:2048 -nodes -keyout key.pem "
	               "-out cert.pem -subj /CN=127.0.0.1 -days 1 >openssl.log 2>&1", dir) != 0)
		return -1;
	testlib_write_file(testlib_fmt("%s/server.py", dir), "%s",
		"import socket, ssl, sys, os\n"
		"ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)\n"
		"ctx.load_cert_chain('cert.pem', 'key.pem')\n"
		"s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen(8)\n"
		"open('port.tmp', 'w').write(str(s.getsockname()[1])); os.rename('port.tmp', 'port')\n"
		"s.settimeout(60)\n"
		"while True:\n"
		"    try:\n"
		"        c, _ = s.accept()\n"
		"    except socket.timeout:\n"
		"        sys.exit(0)\n"
		"    try:\n"
		"        t = ctx.wrap_socket(c, server_side=True); t.recv(1024); t.close()\n"
		"    except Exception:\n"
		"        c.close()\n");
	if (testlib_sh("cd '%s' && { python3 server.py >server.log 2>&1 & echo $! >server.pid; }",
	               dir) != 0)
		return -1;
	for (int i = 0; i < 200; i++) {
		char *p = testlib_slurp(testlib_fmt("%s/port", dir));
		int port = p && *p ? atoi(p) : 0;
		free(p);
		if (port > 0)
			return port;
		usleep(50000);
	}
	return -1;
}

struct seen {
	int called, valid;
};

static int cert_seen(git_cert *cert, int valid, const char *host, void *payload)
{
	struct seen *s = payload;
	(void)host;
	if (cert->cert_type == GIT_CERT_X509) {
		s->called = 1;
		s->valid = valid;
	}
	return GIT_PASSTHROUGH;
}

/* Connects to url; 0 when libgit2 connected. */
static int try_connect(const char *url, struct seen *s)
{
	git_remote *rem = NULL;
	git_remote_callbacks cbs;
	git_remote_init_callbacks(&cbs, GIT_REMOTE_CALLBACKS_VERSION);
	cbs.certificate_check = cert_seen;
	cbs.payload = s;
	memset(s, 0, sizeof *s);
	int rc = git_remote_create_detached(&rem, url);
	if (rc == 0)
		rc = git_remote_connect(rem, GIT_DIRECTION_FETCH, &cbs, NULL, NULL);
	git_remote_free(rem);
	return rc;
}

int main(void)
{
	gitlib_init();
	git_repository *repo = NULL;
	char *dir = testlib_tmpdir("gitlib");
	ok(git_repository_init(&repo, dir, 1) == 0, "a repository opens after gitlib_init");
	git_repository_free(repo);
	int s = gitlib_ca_state();
	int port = tls_server_start(dir);
	char *url = testlib_fmt("https://127.0.0.1:%d/r.git", port);
	struct seen seen;
	if (s == 0) {
		ok(1, "# SKIP libgit2 loads no CA bundle at its init");
	} else {
		ok(s == 1, "libgit2's init and a repository parsed no certificate (state %d)", s);
		int refused = port > 0 && try_connect(url, &seen) < 0 && seen.called && !seen.valid;
		ok(refused, "before any is loaded, a server with a certificate no CA vouches for is "
		   "refused (libgit2 found it valid: %d)", seen.called ? seen.valid : -1);
		struct repo_conf rc;
		memset(&rc, 0, sizeof rc);
		rc.name = (char *)"r";
		struct remote_auth a;
		remote_auth_init(&a, &rc, REMOTE_FETCH, url);
		ok(gitlib_ca_state() == 2, "a connection's remote_auth_init loads them (state %d)",
		   gitlib_ca_state());
		remote_auth_free(&a);
		gitlib_tls();
		ok(gitlib_ca_state() == 2, "once: a second gitlib_tls keeps them");
	}
	int refused = port > 0 && try_connect(url, &seen) < 0 && seen.called && !seen.valid;
	ok(refused, "with the system's certificates, that server is refused too (found valid: %d)",
	   seen.called ? seen.valid : -1);
	testlib_sh("cd '%s' && kill $(cat server.pid) 2>/dev/null; "
	           "while kill -0 $(cat server.pid) 2>/dev/null; do sleep 0.05; done; true", dir);
	git_libgit2_shutdown();
	testlib_end();
	return tap_done();
}
