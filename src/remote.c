#include "autoconfig.h"
#include "remote.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "buf.h"
#include "child.h"
#include "gitlib.h"
#include "i18n.h"
#include "urlmatch.h"

/* ---- messages ---- */

/* Last line of defence: a message never carries a secret, even one that a
 * library echoed back (a URL with credentials, a token in a header). */
void remote_scrub(struct err *e, const char *secret)
{
	if (!e || !secret || strlen(secret) < 4)
		return;
	char *p;
	while ((p = strstr(e->msg, secret)) != NULL) {
		size_t n = strlen(secret);
		memmove(p + 3, p + n, strlen(p + n) + 1);
		memcpy(p, "***", 3);
	}
	/* user:password@ inside any URL of the message. */
	for (char *s = strstr(e->msg, "://"); s; s = strstr(s + 3, "://")) {
		char *host = s + 3;
		size_t hostlen = strcspn(host, "/ \t'\"");
		char *at = memchr(host, '@', hostlen);
		if (at)
			memmove(host, at + 1, strlen(at + 1) + 1);
	}
}

/* ---- SSH host keys ---- */

/* paddock checks an SSH server's host key itself, against the repo's
 * known_hosts files (see remote_certificate_check for why).  The files are
 * read by OpenSSH's own parser (`ssh-keygen -F`), which knows hashed
 * entries, patterns, negations and markers. */

#define REMOTE_KEYGEN_OUT_MAX (1u << 20)

static char *remote_base64(const unsigned char *p, size_t n, int pad)
{
	static const char tab[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char *out = xmalloc(4 * ((n + 2) / 3) + 1), *o = out;
	size_t i;

	for (i = 0; i + 2 < n; i += 3) {
		unsigned v = (unsigned)p[i] << 16 | (unsigned)p[i + 1] << 8 | p[i + 2];
		*o++ = tab[v >> 18];
		*o++ = tab[v >> 12 & 63];
		*o++ = tab[v >> 6 & 63];
		*o++ = tab[v & 63];
	}
	if (i < n) {
		unsigned v = (unsigned)p[i] << 16 | (i + 1 < n ? (unsigned)p[i + 1] << 8 : 0u);
		*o++ = tab[v >> 18];
		*o++ = tab[v >> 12 & 63];
		if (i + 1 < n)
			*o++ = tab[v >> 6 & 63];
		else if (pad)
			*o++ = '=';
		if (pad)
			*o++ = '=';
	}
	*o = '\0';
	return out;
}

int remote_ssh_port(const char *url)
{
	static const char *const schemes[] = { "ssh://", "ssh+git://", "git+ssh://" };
	const char *h = NULL;

	for (size_t i = 0; i < sizeof schemes / sizeof *schemes; i++)
		if (strncmp(url, schemes[i], strlen(schemes[i])) == 0)
			h = url + strlen(schemes[i]);
	if (!h)
		return 22;              /* scp-like user@host:path: no port */
	size_t len = strcspn(h, "/");
	const char *at = memrchr(h, '@', len);
	if (at) {
		len -= (size_t)(at + 1 - h);
		h = at + 1;
	}
	const char *colon;
	if (len && *h == '[') {
		const char *rb = memchr(h, ']', len);
		if (!rb)
			return -1;
		colon = rb + 1 < h + len && rb[1] == ':' ? rb + 1 : NULL;
	} else
		colon = memchr(h, ':', len);
	if (!colon || colon + 1 == h + len)
		return 22;
	const char *p = colon + 1;
	size_t plen = (size_t)(h + len - p);
	if (plen > 5 || strspn(p, "0123456789") < plen)
		return -1;
	long port = strtol(p, NULL, 10);
	return port >= 1 && port <= 65535 ? (int)port : -1;
}

/* The key type named inside the key blob ("ssh-ed25519"), or NULL when the
 * blob is not an SSH public key (malloc'd). */
static char *remote_ssh_key_type(const unsigned char *key, size_t len)
{
	if (len < 4)
		return NULL;
	size_t n = (size_t)key[0] << 24 | (size_t)key[1] << 16 | (size_t)key[2] << 8 | key[3];
	if (n == 0 || n > 64 || n > len - 4)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (key[4 + i] <= ' ' || key[4 + i] >= 127)
			return NULL;
	return xstrndup((const char *)key + 4, n);
}

/* ssh-keygen's absolute path: searched in $PATH (absolute entries only),
 * else in /usr/bin and /bin. */
static int remote_find_keygen(char *out, size_t n)
{
	const char *path = getenv("PATH");
	char *dirs = xstrdup(path ? path : "/usr/bin:/bin");
	char *save = NULL;
	int rc = -1;

	for (char *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		if (d[0] != '/')
			continue;
		if ((size_t)snprintf(out, n, "%s/ssh-keygen", d) < n && access(out, X_OK) == 0) {
			rc = 0;
			break;
		}
	}
	free(dirs);
	return rc;
}

/* `ssh-keygen -F pattern -f file`, without a shell; its output in *out.
 * Returns its exit status (0: entries found, 1: none), or -1 with e set
 * when it could not be run or died. */
static int remote_keygen_lookup(const char *keygen, const char *pattern, const char *file,
                               struct buf *out, struct err *e)
{
	const char *argv[] = { keygen, "-F", pattern, "-f", file, NULL };
	const char *envp[] = { "LC_ALL=C", "PATH=/usr/bin:/bin", NULL };
	int p[2];

	if (pipe2(p, O_CLOEXEC) < 0)
		return err_errno(e, _("cannot check the SSH host key: cannot make a pipe"));
	/* None of paddock's descriptors (sockets, locks) reach the child. */
	struct child ch = { .argv = argv, .env = envp, .stdio = { CHILD_NULL, p[1], CHILD_NULL },
	                    .flags = CHILD_CLOSE_FDS };
	int rc = child_start(&ch, NULL);
	close(p[1]);
	if (rc < 0) {
		close(p[0]);
		return err_set(e, _("cannot check the SSH host key: cannot run %s: %s"), keygen,
		               strerror(ch.exec_errno ? ch.exec_errno : errno));
	}
	for (;;) {
		char chunk[4096];
		ssize_t n = read(p[0], chunk, sizeof chunk);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		/* Past the cap the rest is drained, not kept. */
		if (out->len + (size_t)n <= REMOTE_KEYGEN_OUT_MAX)
			buf_add(out, chunk, (size_t)n);
	}
	close(p[0]);
	int ws = child_finish(&ch);
	if (!WIFEXITED(ws))
		return err_set(e, _("cannot check the SSH host key: %s -F died of signal %d"),
		               keygen, WTERMSIG(ws));
	return WEXITSTATUS(ws);
}

/* What the known_hosts entries say about the presented key. */
struct remote_known {
	const char *type;           /* the presented key's type */
	const char *b64;            /* the presented key, base64 */
	int match;                  /* an entry has exactly this key */
	int other_types;            /* entries for the host with other key types */
	char *mismatch_in;          /* a file with another key of this type */
	char *revoked_in;           /* a file where this key is @revoked */
};

/* Reads ssh-keygen -F's lines: "# Host ... found: line N [REVOKED|CA]"
 * comments, then each entry as "[@marker] PATTERNS KEYTYPE BASE64 [COMMENT]"
 * (PATTERNS hashed or not). */
static void remote_known_parse(struct remote_known *k, char *text, const char *file)
{
	char *save = NULL;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *f[5] = { 0 }, *fsave = NULL;
		size_t n = 0;
		if (line[0] == '#')
			continue;
		for (char *t = strtok_r(line, " \t\r", &fsave); t && n < 5;
		     t = strtok_r(NULL, " \t\r", &fsave))
			f[n++] = t;
		const char *marker = NULL;
		char **ent = f;
		if (n && f[0][0] == '@') {
			marker = f[0];
			ent = f + 1;
			n--;
		}
		if (n < 3)
			continue;
		int same = strcmp(ent[2], k->b64) == 0;
		if (marker) {
			/* @cert-authority keys sign host certificates, which
			 * libgit2 1.5 does not offer: never a match. */
			if (strcmp(marker, "@revoked") == 0 && same && !k->revoked_in)
				k->revoked_in = xstrdup(file);
			continue;
		}
		if (same)
			k->match = 1;
		else if (strcmp(ent[1], k->type) == 0) {
			if (!k->mismatch_in)
				k->mismatch_in = xstrdup(file);
		} else
			k->other_types = 1;
	}
}

/* The known_hosts files of r: ssh-known-hosts, else the user's and the
 * system's (malloc'd, at most 2). */
static size_t remote_known_files(const struct repo_conf *r, char *files[2])
{
	size_t n = 0;
	if (r->ssh_known_hosts) {
		files[n++] = xstrdup(r->ssh_known_hosts);
		return n;
	}
	const char *home = getenv("HOME");
	if (!home || home[0] != '/') {
		struct passwd *pw = getpwuid(getuid());
		home = pw && pw->pw_dir && pw->pw_dir[0] == '/' ? pw->pw_dir : NULL;
	}
	if (home)
		files[n++] = xasprintf("%s%s.ssh/known_hosts", home,
		                       home[strlen(home) - 1] == '/' ? "" : "/");
	files[n++] = xstrdup("/etc/ssh/ssh_known_hosts");
	return n;
}

/* Reads what files[0..n) say about host pattern into k; -1 with e set
 * when ssh-keygen is missing or fails. */
static int remote_known_read(struct remote_known *k, char *const *files, size_t n,
                             const char *pattern, const char *shown, enum remote_dir dir,
                             struct err *e)
{
	char keygen[PATH_MAX];
	int have_keygen = 0;
	for (size_t i = 0; i < n; i++) {
		struct buf o = { 0 };
		struct stat sb;
		if (stat(files[i], &sb) < 0 && errno == ENOENT)
			continue;           /* an absent file knows no host */
		if (!have_keygen && remote_find_keygen(keygen, sizeof keygen) < 0)
			return err_set(e, dir == REMOTE_PUSH
			               ? _("cannot check the SSH host key of %s: ssh-keygen is not "
			                   "installed (Debian: apt-get install openssh-client); refusing "
			                   "to push")
			               : _("cannot check the SSH host key of %s: ssh-keygen is not "
			                   "installed (Debian: apt-get install openssh-client); refusing "
			                   "to fetch"), shown);
		have_keygen = 1;
		int st = remote_keygen_lookup(keygen, pattern, files[i], &o, e);
		if (st != 0 && st != 1) {
			if (st > 1)
				err_set(e, dir == REMOTE_PUSH
				        ? _("cannot check the SSH host key of %s: ssh-keygen cannot read "
				            "%s (exit %d); refusing to push")
				        : _("cannot check the SSH host key of %s: ssh-keygen cannot read "
				            "%s (exit %d); refusing to fetch"), shown, files[i], st);
			buf_free(&o);
			return -1;
		}
		if (st == 0 && o.data)
			remote_known_parse(k, o.data, files[i]);
		buf_free(&o);
	}
	return 0;
}

/* The verdict on what k found: 0 for a match, else -1 and why. */
static int remote_known_verdict(const struct remote_known *k, enum remote_dir dir,
                                const char *shown, const char *offered, const char *where,
                                const char *scan, struct err *e)
{
	if (k->revoked_in)
		return err_set(e, dir == REMOTE_PUSH
		               ? _("the SSH host key of %s (%s) is marked @revoked in %s; refusing "
		                   "to push")
		               : _("the SSH host key of %s (%s) is marked @revoked in %s; refusing "
		                   "to fetch"), shown, offered, k->revoked_in);
	if (k->match)
		return 0;
	if (k->mismatch_in)
		return err_set(e, dir == REMOTE_PUSH
		               ? _("the SSH host key of %s does not match the key known for it in "
		                   "%s: possible impostor; refusing to push (the server offered %s)")
		               : _("the SSH host key of %s does not match the key known for it in "
		                   "%s: possible impostor; refusing to fetch (the server offered %s)"),
		               shown, k->mismatch_in, offered);
	if (k->other_types)
		return err_set(e, _("the SSH host key of %s (%s) is not in %s, which has only keys of "
		                    "other types for it; check the key and add it (%s)"),
		               shown, offered, where, scan);
	return err_set(e, _("the SSH host key of %s is not in %s; check the key (%s) and add it "
	                    "(%s)"), shown, where, offered, scan);
}

int remote_ssh_host_known(const struct repo_conf *r, enum remote_dir dir, const char *host,
                          int port, const unsigned char *key, size_t keylen,
                          const unsigned char *sha256, struct err *e)
{
	struct remote_known k;
	char *files[2] = { NULL, NULL };
	size_t nfiles = 0;
	char *pattern = NULL, *shown = NULL, *type = NULL, *b64 = NULL, *offered = NULL;
	char *where = NULL, *scan = NULL;
	int rc = -1;

	memset(&k, 0, sizeof k);
	if (!host || !*host || host[0] == '-' || strpbrk(host, " \t\r\n[]/\\,*?!|#@") ||
	    port < 1 || port > 65535)
		return err_set(e, dir == REMOTE_PUSH
		               ? _("cannot check the SSH host key of '%s': not a host name paddock "
		                   "can look up in known_hosts; refusing to push")
		               : _("cannot check the SSH host key of '%s': not a host name paddock "
		                   "can look up in known_hosts; refusing to fetch"), host ? host : "");
	/* OpenSSH's names for a host in known_hosts. */
	pattern = port == 22 ? xstrdup(host) : xasprintf("[%s]:%d", host, port);
	shown = strchr(host, ':') ? xasprintf("[%s]:%d", host, port) : xasprintf("%s:%d", host, port);
	type = remote_ssh_key_type(key, keylen);
	if (!type) {
		err_set(e, dir == REMOTE_PUSH
		        ? _("the SSH host key of %s is not a valid SSH public key; refusing to push")
		        : _("the SSH host key of %s is not a valid SSH public key; refusing to fetch"),
		        shown);
		goto out;
	}
	b64 = remote_base64(key, keylen, 1);
	if (sha256) {
		char *fp = remote_base64(sha256, 32, 0);
		offered = xasprintf("%s SHA256:%s", type, fp);
		free(fp);
	} else
		offered = xstrdup(type);

	nfiles = remote_known_files(r, files);
	where = nfiles == 2 ? xasprintf(_("%s or %s"), files[0], files[1]) : xstrdup(files[0]);
	scan = port == 22 ? xasprintf("ssh-keyscan %s >> %s", host, files[0])
	                  : xasprintf("ssh-keyscan -p %d %s >> %s", port, host, files[0]);
	k.type = type;
	k.b64 = b64;
	if (remote_known_read(&k, files, nfiles, pattern, shown, dir, e) == 0)
		rc = remote_known_verdict(&k, dir, shown, offered, where, scan, e);
out:
	for (size_t i = 0; i < nfiles; i++)
		free(files[i]);
	free(k.mismatch_in);
	free(k.revoked_in);
	free(pattern);
	free(shown);
	free(type);
	free(b64);
	free(offered);
	free(where);
	free(scan);
	return rc;
}

/* ---- credentials ---- */

void remote_auth_init(struct remote_auth *a, const struct repo_conf *r, enum remote_dir dir,
                      const char *url)
{
	memset(a, 0, sizeof *a);
	a->r = r;
	a->dir = dir;
	a->url = url;
	a->token = config_repo_token(r);
	/* Every connection starts here: the CA certificates an https
	 * remote is checked against, loaded on the first (gitlib.h). */
	gitlib_tls();
}

void remote_auth_free(struct remote_auth *a)
{
	free(a->hostkey);
	a->hostkey = NULL;
}

void remote_auth_callbacks(git_remote_callbacks *cbs, struct remote_auth *a)
{
	cbs->credentials = remote_credentials;
	cbs->certificate_check = remote_certificate_check;
	cbs->payload = a;
}

int remote_is_loopback_http(const char *url)
{
	return urlmatch_is_loopback_http(url);
}

/* The token over https (or plain http to this machine, for tests), the key
 * or the agent over ssh; a few attempts at most so that a refused
 * credential ends the operation instead of looping. */
int remote_credentials(git_credential **out, const char *url, const char *username_from_url,
                       unsigned int allowed_types, void *payload)
{
	struct remote_auth *a = payload;
	const char *user = username_from_url && *username_from_url ? username_from_url : "git";

	if (a->tries++ >= 3)
		goto refused;
	if (allowed_types & GIT_CREDENTIAL_USERPASS_PLAINTEXT) {
		if (strncmp(url, "https://", 8) != 0 && !remote_is_loopback_http(url)) {
			a->cleartext = 1;
			git_error_set_str(GIT_ERROR_NET, "refusing to send a token over plain http");
			return GIT_EAUTH;
		}
		if (!a->token) {
			a->no_token = 1;
			git_error_set_str(GIT_ERROR_NET, "no token");
			return GIT_EAUTH;
		}
		if (a->tries > 1) {
			a->token_refused = 1;
			git_error_set_str(GIT_ERROR_NET, "the server refused the token");
			return GIT_EAUTH;
		}
		return git_credential_userpass_plaintext_new(out, "x-access-token", a->token);
	}
	if (allowed_types & GIT_CREDENTIAL_USERNAME)
		return git_credential_username_new(out, user);
	if (allowed_types & GIT_CREDENTIAL_SSH_KEY) {
		if (a->tries > 2)
			goto refused;
		if (a->r->ssh_key) {
			char *pub = xasprintf("%s.pub", a->r->ssh_key);
			int rc = git_credential_ssh_key_new(out, user,
			                                    access(pub, R_OK) == 0 ? pub : NULL,
			                                    a->r->ssh_key, NULL);
			free(pub);
			return rc;
		}
		return git_credential_ssh_key_from_agent(out, user);
	}
	return GIT_PASSTHROUGH;
refused:
	a->key_refused = 1;
	git_error_set_str(GIT_ERROR_NET, "the server refused the credentials");
	return GIT_EAUTH;
}

/* The server's identity.  SSH: paddock decides, never passing through:
 * older libgit2 accepts any host key the callback does not refuse, and
 * Debian's 1.5.1 checks only ~/.ssh/known_hosts (through libssh2, which
 * knows neither ssh-known-hosts nor the system file) and says no more than
 * "invalid or unknown remote ssh hostkey"; `valid` is that check's verdict
 * and is not used.  TLS: libgit2's own verdict stands; for a certificate
 * it found invalid (valid = 0), GIT_PASSTHROUGH fails the connection with
 * its error. */
int remote_certificate_check(git_cert *cert, int valid, const char *host, void *payload)
{
	struct remote_auth *a = payload;
	struct err e;
	int push = a->dir == REMOTE_PUSH;

	(void)valid;
	if (cert->cert_type != GIT_CERT_HOSTKEY_LIBSSH2)
		return GIT_PASSTHROUGH;
	const git_cert_hostkey *hk = (const git_cert_hostkey *)cert;
	int port = remote_ssh_port(a->url);
	if (port < 0)
		err_set(&e, push ? _("cannot check the SSH host key of %s: the port in the URL is not "
		                     "a number from 1 to 65535; refusing to push")
		                 : _("cannot check the SSH host key of %s: the port in the URL is not "
		                     "a number from 1 to 65535; refusing to fetch"), host);
	else if (!(hk->type & GIT_CERT_SSH_RAW) || !hk->hostkey || !hk->hostkey_len)
		err_set(&e, push ? _("cannot check the SSH host key of %s: libgit2 did not pass the "
		                     "key itself; refusing to push")
		                 : _("cannot check the SSH host key of %s: libgit2 did not pass the "
		                     "key itself; refusing to fetch"), host);
	else if (remote_ssh_host_known(a->r, a->dir, host, port, (const unsigned char *)hk->hostkey,
	                               hk->hostkey_len,
	                               hk->type & GIT_CERT_SSH_SHA256 ? hk->hash_sha256 : NULL,
	                               &e) == 0)
		return 0;
	free(a->hostkey);
	a->hostkey = xstrdup(e.msg);
	git_error_set_str(GIT_ERROR_SSH, "the SSH host key was refused");
	return GIT_ECERTIFICATE;
}

static int remote_push_auth_error(const struct remote_auth *a, const char *shown,
                                  const char *var, struct err *e)
{
	if (a->no_token)
		return err_set(e, _("cannot push to %s: the server asks for a token and there is none; "
		                    "set the environment variable %s"), shown, var);
	if (a->cleartext)
		return err_set(e, _("cannot push to %s: paddock does not send a token over plain http; "
		                    "use an https:// URL"), shown);
	if (a->token_refused)
		return err_set(e, _("cannot push to %s: the server refused the token in %s; check "
		                    "that it is valid and may write to the repository"), shown, var);
	if (a->key_refused)
		return err_set(e, _("cannot push to %s: the server refused paddock's credentials (%s); "
		                    "check the repo's ssh-key or the SSH agent"), shown,
		               a->r->ssh_key ? a->r->ssh_key : _("SSH agent"));
	return 0;
}

static int remote_fetch_auth_error(const struct remote_auth *a, const char *shown,
                                   const char *var, struct err *e)
{
	const char *name = a->r->name;
	if (a->no_token)
		return err_set(e, _("repo %s: cannot fetch %s: the server asks for a token and there "
		                    "is none; set the environment variable %s (the repo's token-env) "
		                    "in paddock's environment"), name, shown, var);
	if (a->cleartext)
		return err_set(e, _("repo %s: cannot fetch %s: refusing to send the token in %s over "
		                    "plain http to a host other than this machine; use an https:// "
		                    "url"), name, shown, var);
	if (a->token_refused)
		return err_set(e, _("repo %s: cannot fetch %s: the server refused the token in %s; "
		                    "check that it is valid and may read the repository"),
		               name, shown, var);
	if (a->key_refused)
		return err_set(e, _("repo %s: cannot fetch %s: the server refused paddock's "
		                    "credentials (%s); check the repo's ssh-key or the SSH agent"),
		               name, shown, a->r->ssh_key ? a->r->ssh_key : _("SSH agent"));
	return 0;
}

/* A local repository of another user: libgit2 opens one only for its
 * owner, unless git's safe.directory trusts it, and says only "config
 * value 'safe.directory' was not found" (1.5) or "... is not owned by
 * current user" (later).  Its message names the check, so that a trusted
 * repository's other failure is not taken for this one. */
static int remote_owner_error(const struct remote_auth *a, const char *shown, struct err *e)
{
	const char *path = a->url ? config_url_local_path(a->url) : NULL;
	const git_error *ge = git_error_last();
	struct stat st;
	if (!path || !*path || !ge || !ge->message ||
	    (!strstr(ge->message, "safe.directory") && !strstr(ge->message, "owned")) ||
	    stat(path, &st) < 0 || st.st_uid == geteuid())
		return 0;
	if (a->dir == REMOTE_PUSH)
		return err_set(e, _("cannot push to %s: the repository belongs to another user (uid "
		                    "%lu), and git opens a repository only for its owner; run "
		                    "paddock as that user, or trust it as the user paddock runs as: "
		                    "git config --global --add safe.directory %s"), shown,
		               (unsigned long)st.st_uid, path);
	return err_set(e, _("repo %s: cannot fetch %s: the repository belongs to another user "
	                    "(uid %lu), and git opens a repository only for its owner; run "
	                    "paddock as that user, or trust it as the user paddock runs as: "
	                    "git config --global --add safe.directory %s"), a->r->name, shown,
	               (unsigned long)st.st_uid, path);
}

int remote_auth_error(const struct remote_auth *a, const char *shown, struct err *e)
{
	const char *var = a->r->token_env ? a->r->token_env : "PADDOCK_GIT_TOKEN";
	int rc;
	if (a->hostkey)
		rc = err_set(e, "%s", a->hostkey);
	else if (a->dir == REMOTE_PUSH)
		rc = remote_push_auth_error(a, shown, var, e);
	else
		rc = remote_fetch_auth_error(a, shown, var, e);
	if (rc == 0)
		rc = remote_owner_error(a, shown, e);
	if (rc < 0)
		remote_scrub(e, a->token);
	return rc;
}
