/* remote: paddock's credentials and the server identity checks for
 * connections to a repo's remote (libgit2), the same for the mirror's
 * fetch (mirror.c, from the repo's url) and forge's push (forge.c, to its
 * push-url, else url).
 *
 * What is sent: over https the token of config_repo_token(r) (the
 * variable token-env names, PADDOCK_GIT_TOKEN by default) as the password
 * of user "x-access-token", over plain http only to this machine
 * (127.0.0.1, localhost, [::1]); over SSH the key r->ssh_key (and its .pub
 * when readable), else the SSH agent of SSH_AUTH_SOCK.  An SSH server must
 * show a host key known for it (remote_ssh_host_known) before any
 * credential is sent; a TLS server keeps libgit2's own verdict.  A few
 * tries per connection at most, so that a refused credential ends the
 * operation instead of looping.  No message of this module carries the
 * token or a URL's user:password. */
#ifndef PADDOCK_REMOTE_H
#define PADDOCK_REMOTE_H

#include <stddef.h>

#include <git2.h>
#include "config.h"
#include "err.h"

/* Which way a connection goes; it picks the words of the messages. */
enum remote_dir { REMOTE_FETCH, REMOTE_PUSH };

/* One operation's credentials and what its callbacks saw.  Fill it with
 * remote_auth_init, pass it as the payload of remote_credentials and
 * remote_certificate_check, read it with remote_auth_error, free it with
 * remote_auth_free.  r, url and token are borrowed (token from the
 * environment); hostkey is owned.  Every connection to a remote fills
 * one first: remote_auth_init loads the CA certificates (gitlib_tls). */
struct remote_auth {
	const struct repo_conf *r;
	enum remote_dir dir;
	const char *url;            /* the URL connected to (its SSH port) */
	const char *token;          /* config_repo_token(r), or NULL */
	int tries;
	int no_token;               /* the server asked and there was none */
	int cleartext;              /* the server asked over plain http, not to loopback */
	int token_refused;          /* the server asked again after the token */
	int key_refused;            /* the server refused the SSH key or the credentials */
	char *hostkey;              /* why the SSH host key was refused (malloc'd) */
};

void remote_auth_init(struct remote_auth *a, const struct repo_conf *r, enum remote_dir dir,
                      const char *url);
void remote_auth_free(struct remote_auth *a);

/* Sets cbs's credentials and certificate_check to the two callbacks below
 * and its payload to a (for a caller with no callbacks of its own). */
void remote_auth_callbacks(git_remote_callbacks *cbs, struct remote_auth *a);

/* libgit2's credentials callback; payload: the struct remote_auth. */
int remote_credentials(git_credential **out, const char *url, const char *username_from_url,
                       unsigned int allowed_types, void *payload);
/* libgit2's certificate_check callback; payload: the struct remote_auth.
 * SSH: paddock decides (remote_ssh_host_known), never passing through.
 * TLS: libgit2's verdict stands. */
int remote_certificate_check(git_cert *cert, int valid, const char *host, void *payload);

/* When the callbacks of a refused what they were asked (an unknown host
 * key, no token, a token refused, plain http, a refused key), or libgit2
 * refused a local repository that another user owns (git's
 * safe.directory), -1 with the message that says what to do, about the
 * remote shown (its URL as mirror_url_display shows it); else 0 and e
 * untouched.  Scrubbed of the token. */
int remote_auth_error(const struct remote_auth *a, const char *shown, struct err *e);

/* 1 when url is plain http:// to 127.0.0.1, localhost or [::1]. */
int remote_is_loopback_http(const char *url);

/* Last line of defence: replaces secret (4 bytes or more) in e's message
 * with "***" and drops the user:password@ of any URL in it. */
void remote_scrub(struct err *e, const char *secret);

/* The port an SSH remote URL connects to: the one in ssh://[user@]host:PORT/
 * (also ssh+git://, git+ssh://, [v6-address]:PORT), else 22 (scp-like
 * user@host:path too); -1 when the port is not a number from 1 to 65535. */
int remote_ssh_port(const char *url);

/* Checks an SSH server's host key, `key` (keylen bytes, the raw public key
 * blob as the server sent it; sha256 its SHA-256 or NULL, only for
 * messages), for host and port against r's known_hosts files:
 * r->ssh_known_hosts, else $HOME/.ssh/known_hosts and
 * /etc/ssh/ssh_known_hosts (absent files know no host).  The files are read
 * by OpenSSH itself: `ssh-keygen -F HOST -f FILE` (HOST is "[host]:port"
 * unless the port is 22), run without a shell, so hashed entries and
 * patterns count as they do for ssh.  0 when an entry has exactly this key;
 * else -1 and a message naming host:port and the file(s): the host is not
 * known (with the ssh-keyscan command that adds it), it is known with
 * another key of the same type ("possible impostor"), the key is @revoked
 * (that wins over any match), or ssh-keygen is missing or fails; dir says
 * whether a fetch or a push is refused.  @cert-authority entries never
 * match (libgit2 1.5 offers no host certificates). */
int remote_ssh_host_known(const struct repo_conf *r, enum remote_dir dir, const char *host,
                          int port, const unsigned char *key, size_t keylen,
                          const unsigned char *sha256, struct err *e);

#endif
