#include "autoconfig.h"
#include "forge.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <git2.h>
#include <jansson.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "buf.h"
#include "child.h"
#include "gitlib.h"
#include "i18n.h"
#include "mirror.h"
#include "remote.h"

/* ---- messages ---- */

static const char *forge_git_errmsg(void)
{
	const git_error *ge = git_error_last();
	return ge && ge->message ? ge->message : _("unknown libgit2 error");
}

/* ---- which branches may be pushed ---- */

/* Glob match where '*' and '?' stay within one path component, "**"
 * crosses '/', and [...] is a character class (fnmatch's). */
static int forge_glob(const char *pat, const char *s)
{
	while (*pat) {
		if (pat[0] == '*' && pat[1] == '*') {
			while (*pat == '*')
				pat++;
			/* "**" followed by '/' also matches no directory at all. */
			if (*pat == '/' && forge_glob(pat + 1, s))
				return 1;
			for (const char *t = s;; t++) {
				if (forge_glob(pat, t))
					return 1;
				if (!*t)
					return 0;
			}
		}
		if (*pat == '*') {
			pat++;
			for (const char *t = s;; t++) {
				if (forge_glob(pat, t))
					return 1;
				if (!*t || *t == '/')
					return 0;
			}
		}
		if (!*s)
			return 0;
		if (*pat == '?') {
			if (*s == '/')
				return 0;
		} else if (*pat == '[') {
			const char *end = pat + 1;
			if (*end == '!' || *end == '^')
				end++;
			if (*end == ']')
				end++;
			end = strchr(end, ']');
			if (!end) {
				if (*s != '[')
					return 0;
			} else {
				char *cls = xstrndup(pat, (size_t)(end - pat + 1));
				char one[2] = { *s, 0 };
				int m = *s != '/' && fnmatch(cls, one, 0) == 0;
				free(cls);
				if (!m)
					return 0;
				pat = end;
			}
		} else {
			if (*pat == '\\' && pat[1])
				pat++;
			if (*pat != *s)
				return 0;
		}
		pat++;
		s++;
	}
	return *s == '\0';
}

int forge_branch_allowed(const struct repo_conf *r, const char *branch, struct err *e)
{
	const char *prefix = r->branch_prefix && *r->branch_prefix ? r->branch_prefix : "paddock/";
	const char *def = r->branch && *r->branch ? r->branch : "main";
	int valid = 0;

	if (!branch || !*branch)
		return err_set(e, _("no branch to push"));
	char *ref = xasprintf("refs/heads/%s", branch);
	gitlib_init();
	int rc = git_reference_name_is_valid(&valid, ref);
	free(ref);
	if (rc < 0 || !valid || branch[0] == '-' || strcmp(branch, "HEAD") == 0)
		return err_set(e, _("refusing to push %s: it is not a valid branch name"), branch);
	if (strcmp(branch, def) == 0)
		return err_set(e, _("refusing to push %s: it is the repo's default branch"), branch);
	for (size_t i = 0; i < r->nprotected; i++)
		if (forge_glob(r->protected_[i], branch))
			return err_set(e, _("refusing to push %s: it matches the protected pattern %s"),
			               branch, r->protected_[i]);
	if (strncmp(branch, prefix, strlen(prefix)) != 0 || !branch[strlen(prefix)])
		return err_set(e, _("refusing to push %s: paddock pushes only branches under %s"),
		               branch, prefix);
	return 0;
}

/* ---- push ---- */

struct forge_push_state {
	const struct repo_conf *r;
	struct remote_auth auth;    /* the push URL, the token, what the callbacks saw */
	const char *refname;        /* refs/heads/<branch> */
	const char *branch;
	git_repository *repo;
	git_oid ours;
	char *moved;                /* the refusal, when the remote moved */
	char *rejected;             /* the remote's per-ref answer */
	char *spec;                 /* refname's storage */
	char *shown;                /* the URL as messages show it */
	char *mirror;               /* the mirror's path */
	int inited;                 /* libgit2 is initialised for it */
};

/* remote's callbacks, on the push's own payload. */
static int forge_credentials(git_credential **out, const char *url,
                             const char *username_from_url,
                             unsigned int allowed_types, void *payload)
{
	struct forge_push_state *st = payload;
	return remote_credentials(out, url, username_from_url, allowed_types, &st->auth);
}

static int forge_certificate_check(git_cert *cert, int valid, const char *host, void *payload)
{
	struct forge_push_state *st = payload;
	return remote_certificate_check(cert, valid, host, &st->auth);
}


/* 0 when the remote's `theirs` may be replaced by ours: the same commit or
 * one of our ancestors; else the refusal in st->moved. */
static int forge_check_remote(struct forge_push_state *st, const git_oid *theirs)
{
	char a[13], b[13];
	git_odb *odb = NULL;
	int ff = 0;

	if (git_oid_is_zero(theirs) || git_oid_equal(theirs, &st->ours))
		return 0;
	if (git_repository_odb(&odb, st->repo) == 0 && git_odb_exists(odb, theirs))
		ff = git_graph_descendant_of(st->repo, &st->ours, theirs) == 1;
	git_odb_free(odb);
	git_error_clear();
	if (ff)
		return 0;
	git_oid_tostr(a, sizeof a, theirs);
	git_oid_tostr(b, sizeof b, &st->ours);
	free(st->moved);
	st->moved = xasprintf(_("the remote branch %s is at %s, not an ancestor of %s; someone "
	                        "else pushed to it, and paddock never force-pushes (push to "
	                        "another branch, or reconcile the remote branch by hand)"),
	                      st->branch, a, b);
	return -1;
}

/* What the push is about to do, as seen in the same conversation that
 * sends it: refuse anything but a creation or a fast-forward of our one
 * branch (a second line of defence after the ls check). */
static int forge_push_negotiation(const git_push_update **updates, size_t len, void *payload)
{
	struct forge_push_state *st = payload;
	for (size_t i = 0; i < len; i++) {
		if (strcmp(updates[i]->dst_refname, st->refname) != 0 ||
		    git_oid_is_zero(&updates[i]->dst)) {
			st->rejected = xstrdup(_("paddock pushes one branch and never deletes"));
			git_error_set_str(GIT_ERROR_NET, "unexpected update");
			return -1;
		}
		if (forge_check_remote(st, &updates[i]->src) < 0) {
			git_error_set_str(GIT_ERROR_NET, "the remote branch moved");
			return -1;
		}
	}
	return 0;
}

static int forge_push_update_reference(const char *refname, const char *status, void *payload)
{
	struct forge_push_state *st = payload;
	if (status && !st->rejected)
		st->rejected = xasprintf("%s: %s", refname, status);
	return 0;
}

/* Sets the push error from what the callbacks saw, else libgit2's. */
static int forge_push_error(struct forge_push_state *st, const char *shown, const char *what,
                            struct err *e)
{
	if (st->moved && !st->auth.hostkey)
		err_set(e, "%s", st->moved);
	else if (remote_auth_error(&st->auth, shown, e) < 0)
		;
	else if (st->rejected)
		err_set(e, _("the remote %s refused the push of %s (%s)"), shown, st->branch,
		        st->rejected);
	else
		err_set(e, _("cannot push %s to %s: %s: %s"), st->branch, shown, what,
		        forge_git_errmsg());
	remote_scrub(e, st->auth.token);
	return -1;
}

/* refs/paddock/push/<pid>-<n> at ours in the mirror (the mirror's fetch
 * touches only refs/heads/, so the name is ours alone). */
static int forge_temp_ref(struct forge_push_state *st, const char *mirror, const char *hex,
                          char **out, struct err *e)
{
	static unsigned counter;
	git_reference *ref = NULL;
	int lock = mirror_lock(mirror, e);
	if (lock < 0)
		return -1;
	char *name = xasprintf("refs/paddock/push/%ld-%u-%s", (long)getpid(),
	                       __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED), hex);
	int rc = git_reference_create(&ref, st->repo, name, &st->ours, 0, "paddock: push");
	close(lock);
	git_reference_free(ref);
	if (rc < 0) {
		err_set(e, _("cannot write the ref %s in the mirror %s: %s"), name, mirror,
		        forge_git_errmsg());
		free(name);
		return -1;
	}
	*out = name;
	return 0;
}

static void forge_temp_ref_remove(struct forge_push_state *st, const char *mirror,
                                  const char *name)
{
	struct err ignored;
	git_reference *ref = NULL;
	int lock = mirror_lock(mirror, &ignored);
	if (lock < 0)
		return;
	if (git_reference_lookup(&ref, st->repo, name) == 0)
		git_reference_delete(ref);
	git_reference_free(ref);
	close(lock);
}

/* Connects to the push remote (push-url, else url) of st with the push's
 * credentials and checks, and lists its refs into heads.  *connected is
 * set once there is a connection to close; cbs must outlive it. */
static int forge_connect_ls(struct forge_push_state *st, const char *shown, git_remote **remote,
                            git_remote_callbacks *cbs, int *connected,
                            const git_remote_head ***heads, size_t *nheads, struct err *e)
{
	if (git_remote_create_anonymous(remote, st->repo, st->auth.url) < 0) {
		err_set(e, _("cannot push to %s: %s; check [repo \"%s\"] push-url (or url)"),
		        shown, forge_git_errmsg(), st->r->name);
		remote_scrub(e, st->auth.token);
		return -1;
	}
	git_remote_init_callbacks(cbs, GIT_REMOTE_CALLBACKS_VERSION);
	cbs->credentials = forge_credentials;
	cbs->certificate_check = forge_certificate_check;
	cbs->push_negotiation = forge_push_negotiation;
	cbs->push_update_reference = forge_push_update_reference;
	cbs->payload = st;
	if (git_remote_connect(*remote, GIT_DIRECTION_PUSH, cbs, NULL, NULL) < 0) {
		forge_push_error(st, shown, _("cannot connect"), e);
		return -1;
	}
	*connected = 1;
	if (git_remote_ls(heads, nheads, *remote) < 0) {
		forge_push_error(st, shown, _("cannot list the remote's branches"), e);
		return -1;
	}
	return 0;
}

/* Sets st up to reach r's push URL about branch, with the mirror open;
 * -1 with a message.  forge_push_state_close frees it either way. */
static int forge_push_state_open(struct forge_push_state *st, const char *data_dir,
                                 const struct repo_conf *r, const char *branch, struct err *e)
{
	const char *url = r->push_url ? r->push_url : r->url;
	memset(st, 0, sizeof *st);
	if (!url || !*url)
		return err_set(e, _("repo %s has no url to push to; set push-url in the config"),
		               r->name);
	if (config_local_url_check(r->name, r->push_url ? "push-url" : "url", url, e) < 0)
		return -1;
	gitlib_init();
	st->inited = 1;
	st->r = r;
	remote_auth_init(&st->auth, r, REMOTE_PUSH, url);
	st->branch = branch;
	st->refname = st->spec = xasprintf("refs/heads/%s", branch);
	st->shown = mirror_url_display(url);
	st->mirror = mirror_path(data_dir, r->name);
	/* Objects are immutable and refs are read once here, so no lock: a
	 * fetch into the mirror at the same time changes nothing we use. */
	if (git_repository_open_bare(&st->repo, st->mirror) < 0)
		return err_set(e, _("cannot open the mirror %s: %s"), st->mirror, forge_git_errmsg());
	return 0;
}

static void forge_push_state_close(struct forge_push_state *st)
{
	git_repository_free(st->repo);
	free(st->moved);
	free(st->rejected);
	remote_auth_free(&st->auth);
	free(st->spec);
	free(st->shown);
	free(st->mirror);
	if (st->inited) {
		git_error_clear();
	}
	memset(st, 0, sizeof *st);
}

int forge_push(const char *data_dir, const struct repo_conf *r, const char *branch,
               const char *commit, struct err *e)
{
	struct forge_push_state st;
	git_remote_callbacks cbs;
	git_push_options po;
	git_remote *remote = NULL;
	git_object *obj = NULL;
	const git_remote_head **heads = NULL;
	size_t nheads = 0;
	char *tmpref = NULL;
	char hex[GIT_OID_HEXSZ + 1];
	int rc = -1, connected = 0;

	memset(&st, 0, sizeof st);
	if (forge_branch_allowed(r, branch, e) < 0)
		return -1;
	if (!commit || !*commit || commit[0] == '-' || commit[0] == ':' || strchr(commit, ':'))
		return err_set(e, _("no commit to push to %s"), branch);
	if (forge_push_state_open(&st, data_dir, r, branch, e) < 0)
		goto out;
	const char *spec = st.spec, *shown = st.shown, *mirror = st.mirror;
	if (git_revparse_single(&obj, st.repo, commit) < 0) {
		err_set(e, _("commit %s is not in the mirror %s; was the task's work imported?"),
		        commit, mirror);
		goto out;
	}
	{
		git_object *c = NULL;
		if (git_object_peel(&c, obj, GIT_OBJECT_COMMIT) < 0) {
			err_set(e, _("%s is not a commit in the mirror %s"), commit, mirror);
			goto out;
		}
		git_oid_cpy(&st.ours, git_object_id(c));
		git_object_free(c);
	}
	git_oid_tostr(hex, sizeof hex, &st.ours);

	/* One connection: read the remote's refs, decide, then push. */
	if (forge_connect_ls(&st, shown, &remote, &cbs, &connected, &heads, &nheads, e) < 0)
		goto out;
	for (size_t i = 0; i < nheads; i++) {
		/* The remote's own default branch is never ours to push. */
		if (strcmp(heads[i]->name, "HEAD") == 0 && heads[i]->symref_target &&
		    strcmp(heads[i]->symref_target, spec) == 0) {
			err_set(e, _("refusing to push %s: it is the default branch of %s"),
			        branch, shown);
			goto out;
		}
		if (strcmp(heads[i]->name, spec) != 0)
			continue;
		if (git_oid_equal(&heads[i]->oid, &st.ours)) {
			rc = 0;             /* already there */
			goto out;
		}
		if (forge_check_remote(&st, &heads[i]->oid) < 0) {
			err_set(e, "%s", st.moved);
			goto out;
		}
	}

	/* libgit2 1.5 pushes only from a ref: a temporary one, unique to
	 * this push, under the lock only while it is created and removed. */
	if (forge_temp_ref(&st, mirror, hex, &tmpref, e) < 0)
		goto out;
	{
		/* Never '+' (force), never an empty source (a deletion). */
		char *refspec = xasprintf("%s:%s", tmpref, spec);
		char *specv[] = { refspec };
		git_strarray specs = { specv, 1 };
		git_push_options_init(&po, GIT_PUSH_OPTIONS_VERSION);
		po.callbacks = cbs;
		po.pb_parallelism = 1;
		int urc = git_remote_upload(remote, &specs, &po);
		free(refspec);
		if (urc < 0 || st.rejected) {
			forge_push_error(&st, shown, _("the push failed"), e);
			goto out;
		}
	}
	rc = 0;
out:
	if (connected)
		git_remote_disconnect(remote);
	git_remote_free(remote);
	if (tmpref)
		forge_temp_ref_remove(&st, st.mirror, tmpref);
	free(tmpref);
	git_object_free(obj);
	forge_push_state_close(&st);
	return rc;
}

int forge_remote_branch(const char *data_dir, const struct repo_conf *r, const char *branch,
                        char sha_out[41], struct err *e)
{
	struct forge_push_state st;
	git_remote_callbacks cbs;
	git_remote *remote = NULL;
	const git_remote_head **heads = NULL;
	size_t nheads = 0;
	int rc = -1, connected = 0;

	if (forge_push_state_open(&st, data_dir, r, branch, e) < 0)
		goto out;
	/* The push direction: the same credentials as the push it checks. */
	if (forge_connect_ls(&st, st.shown, &remote, &cbs, &connected, &heads, &nheads, e) < 0)
		goto out;
	rc = 0;
	for (size_t i = 0; i < nheads; i++)
		if (strcmp(heads[i]->name, st.spec) == 0) {
			git_oid_tostr(sha_out, 41, &heads[i]->oid);
			rc = 1;
		}
out:
	if (connected)
		git_remote_disconnect(remote);
	git_remote_free(remote);
	forge_push_state_close(&st);
	return rc;
}

json_t *forge_dry_run(const struct repo_conf *r, const char *branch, const char *commit)
{
	char *remote = mirror_url_display(r->push_url ? r->push_url : r->url);
	char *refspec = xasprintf("refs/heads/%s:refs/heads/%s", branch, branch);
	json_t *j = json_pack("{s:s,s:s,s:s,s:b}", "remote", remote, "refspec", refspec,
	                      "commit", commit ? commit : "", "force", 0);
	free(remote);
	free(refspec);
	return j;
}
