#include "autoconfig.h"
#include "mirror.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <git2.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "child.h"
#include "clock.h"
#include "fsx.h"
#include "gitlib.h"
#include "i18n.h"
#include "paths.h"
#include "remote.h"
#include "treediff.h"

#define MIRROR_FETCHSPEC "+refs/heads/*:refs/heads/*"

char *mirror_path(const char *data_dir, const char *repo_name)
{
	return paths_mirror(data_dir, repo_name);
}

char *mirror_task_ref(const char *task_id)
{
	return xasprintf("refs/paddock/tasks/%s", task_id);
}

static const char *mirror_git_errmsg(void)
{
	const git_error *ge = git_error_last();
	return ge && ge->message ? ge->message : _("unknown libgit2 error");
}

char *mirror_url_display(const char *url)
{
	const char *scheme = strstr(url, "://");
	if (!scheme)
		return xstrdup(url);
	const char *host = scheme + 3;
	size_t hostlen = strcspn(host, "/");
	const char *at = memchr(host, '@', hostlen);
	if (!at)
		return xstrdup(url);
	return xasprintf("%.*s%s", (int)(host - url), url, at + 1);
}

int mirror_lock(const char *mirror, struct err *e)
{
	char *lock = xasprintf("%s.lock", mirror);
	int fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		err_errno(e, _("cannot open the lock file %s"), lock);
		free(lock);
		return -1;
	}
	while (flock(fd, LOCK_EX) < 0) {
		if (errno != EINTR) {
			err_errno(e, _("cannot lock %s"), lock);
			close(fd);
			free(lock);
			return -1;
		}
	}
	free(lock);
	return fd;
}

static int mirror_create_remote(git_remote **out, git_repository *repo,
                                const char *name, const char *url, void *payload)
{
	(void)payload;
	return git_remote_create_with_fetchspec(out, repo, name, url, MIRROR_FETCHSPEC);
}

/* The fetch's error: what remote's callbacks refused (with what to do),
 * else libgit2's; never the token or a URL's user:password. */
static int mirror_fetch_error(const struct repo_conf *r, const struct remote_auth *auth,
                              struct err *e)
{
	char *shown = mirror_url_display(r->url);
	if (remote_auth_error(auth, shown, e) == 0)
		err_set(e, _("repo %s: cannot fetch %s: %s; check [repo \"%s\"] url in the config"),
		        r->name, shown, mirror_git_errmsg(), r->name);
	remote_scrub(e, auth->token);
	free(shown);
	return -1;
}

static int mirror_clone(const char *mirror, const struct repo_conf *r, struct err *e)
{
	char *tmp = xasprintf("%s.tmp", mirror);
	struct remote_auth auth;
	git_clone_options o;
	git_repository *repo = NULL;
	int rc = -1;

	remote_auth_init(&auth, r, REMOTE_FETCH, r->url);
	/* A clone that died half-way left only the .tmp directory. */
	if (fsx_rm_rf(tmp, e) < 0)
		goto out;
	/* The _INIT macros trip -Wmissing-field-initializers. */
	git_clone_options_init(&o, GIT_CLONE_OPTIONS_VERSION);
	o.bare = 1;
	o.remote_cb = mirror_create_remote;
	remote_auth_callbacks(&o.fetch_opts.callbacks, &auth);
	o.fetch_opts.download_tags = GIT_REMOTE_DOWNLOAD_TAGS_NONE;
	o.fetch_opts.prune = GIT_FETCH_NO_PRUNE;
	if (git_clone(&repo, r->url, tmp, &o) < 0) {
		mirror_fetch_error(r, &auth, e);
		struct err ignored;
		fsx_rm_rf(tmp, &ignored);
		goto out;
	}
	/* HEAD names the configured branch, as in the upstream repo. */
	{
		char *head = xasprintf("refs/heads/%s", r->branch ? r->branch : "main");
		if (git_repository_set_head(repo, head) < 0)
			git_error_clear();
		free(head);
	}
	git_repository_free(repo);
	if (rename(tmp, mirror) < 0) {
		err_errno(e, _("cannot rename %s to %s"), tmp, mirror);
		goto out;
	}
	rc = 0;
out:
	remote_auth_free(&auth);
	free(tmp);
	return rc;
}

/* Fetches specs[0..n) from r->url into the mirror (MIRROR_FETCHSPEC when
 * n is 0). */
static int mirror_fetch_specs(const char *mirror, const struct repo_conf *r,
                              char *const *specv, size_t n, struct err *e)
{
	git_repository *repo = NULL;
	git_remote *remote = NULL;
	struct remote_auth auth;
	git_fetch_options fo;
	/* Only branches: the task refs under refs/paddock/ are never
	 * touched, and nothing is pruned. */
	char spec[] = MIRROR_FETCHSPEC;
	char *one[] = { spec };
	git_strarray specs = { n ? (char **)specv : one, n ? n : 1 };
	int rc = -1;

	remote_auth_init(&auth, r, REMOTE_FETCH, r->url);
	git_fetch_options_init(&fo, GIT_FETCH_OPTIONS_VERSION);
	if (git_repository_open_bare(&repo, mirror) < 0) {
		err_set(e, _("cannot open the mirror %s: %s; remove it and paddock will clone it again"),
		        mirror, mirror_git_errmsg());
		return -1;
	}
	if (git_remote_lookup(&remote, repo, "origin") < 0) {
		if (git_remote_create_with_fetchspec(&remote, repo, "origin", r->url,
		                                     MIRROR_FETCHSPEC) < 0) {
			err_set(e, _("cannot set up the remote of %s: %s"), mirror,
			        mirror_git_errmsg());
			goto out;
		}
	} else if (strcmp(git_remote_url(remote) ? git_remote_url(remote) : "", r->url) != 0) {
		/* The config's url changed since the clone. */
		git_remote_free(remote);
		remote = NULL;
		if (git_remote_set_url(repo, "origin", r->url) < 0 ||
		    git_remote_lookup(&remote, repo, "origin") < 0) {
			err_set(e, _("cannot update the url of %s: %s"), mirror,
			        mirror_git_errmsg());
			goto out;
		}
	}
	remote_auth_callbacks(&fo.callbacks, &auth);
	fo.download_tags = GIT_REMOTE_DOWNLOAD_TAGS_NONE;
	fo.prune = GIT_FETCH_NO_PRUNE;
	if (git_remote_fetch(remote, &specs, &fo, "paddock: fetch") < 0) {
		mirror_fetch_error(r, &auth, e);
		goto out;
	}
	rc = 0;
out:
	remote_auth_free(&auth);
	git_remote_free(remote);
	git_repository_free(repo);
	return rc;
}

static int mirror_fetch(const char *mirror, const struct repo_conf *r, struct err *e)
{
	return mirror_fetch_specs(mirror, r, NULL, 0, e);
}

/* A local upstream whose branch is where the mirror has it already:
 * nothing to fetch.  Reading one ref costs the same whatever the number of
 * the upstream's refs, where a fetch lists and peels every one of them
 * (libgit2 1.5 speaks protocol v0: 5,000 tags, 100 ms a task).  Other
 * branches catch up at the next fetch, once this one moves. */
static int mirror_fresh_local(const char *mirror, const struct repo_conf *r)
{
	const char *path = config_url_local_path(r->url);
	if (!path)
		return 0;
	git_repository *up = NULL, *m = NULL;
	git_oid a, b;
	char *ref = xasprintf("refs/heads/%s", r->branch ? r->branch : "main");
	int fresh = git_repository_open_ext(&up, path, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) == 0 &&
	            git_repository_open_bare(&m, mirror) == 0 &&
	            git_reference_name_to_id(&a, up, ref) == 0 &&
	            git_reference_name_to_id(&b, m, ref) == 0 && git_oid_equal(&a, &b);
	git_error_clear();
	git_repository_free(up);
	git_repository_free(m);
	free(ref);
	return fresh;
}

int mirror_update(const char *data_dir, const struct repo_conf *r, struct err *e)
{
	char *dir = paths_mirrors_dir(data_dir);
	char *mirror = mirror_path(data_dir, r->name);
	int lockfd = -1, rc = -1;
	struct stat st;

	gitlib_init();
	if (config_local_url_check(r->name, "url", r->url, e) < 0 ||
	    fsx_mkdir_p(dir, 0755, e) < 0)
		goto out;
	lockfd = mirror_lock(mirror, e);
	if (lockfd < 0)
		goto out;
	if (lstat(mirror, &st) < 0) {
		if (errno != ENOENT) {
			err_errno(e, _("cannot read %s"), mirror);
			goto out;
		}
		rc = mirror_clone(mirror, r, e);
	} else if (!S_ISDIR(st.st_mode)) {
		err_set(e, _("%s is not a directory; remove it and paddock will clone the mirror again"),
		        mirror);
	} else {
		rc = mirror_fresh_local(mirror, r) ? 0 : mirror_fetch(mirror, r, e);
	}
out:
	if (lockfd >= 0)
		close(lockfd);
	free(mirror);
	free(dir);
	return rc;
}

int mirror_tree_of(const char *mirror, const char *sha, char tree_out[41], struct err *e)
{
	git_repository *repo = NULL;
	git_commit *c = NULL;
	git_oid id;
	int rc = -1;

	gitlib_init();
	if (git_repository_open_bare(&repo, mirror) < 0)
		err_set(e, _("cannot open the mirror %s: %s"), mirror, mirror_git_errmsg());
	else if (git_oid_fromstr(&id, sha) < 0 || git_commit_lookup(&c, repo, &id) < 0)
		err_set(e, _("commit %s is not in the mirror %s: %s"), sha, mirror, mirror_git_errmsg());
	else {
		git_oid_tostr(tree_out, 41, git_commit_tree_id(c));
		rc = 0;
	}
	git_commit_free(c);
	git_repository_free(repo);
	return rc;
}

int mirror_resolve_branch(const char *mirror, const char *branch, char sha_out[41],
                          struct err *e)
{
	git_repository *repo = NULL;
	git_reference *ref = NULL;
	git_object *obj = NULL;
	char *name = xasprintf("refs/heads/%s", branch);
	int rc = -1;

	gitlib_init();
	if (git_repository_open_bare(&repo, mirror) < 0) {
		err_set(e, _("cannot open the mirror %s: %s"), mirror, mirror_git_errmsg());
		goto out;
	}
	if (git_reference_lookup(&ref, repo, name) < 0) {
		err_set(e, _("branch %s was not found in the mirror %s; check the branch name "
		             "(or the repo's branch in the config)"), branch, mirror);
		goto out;
	}
	if (git_reference_peel(&obj, ref, GIT_OBJECT_COMMIT) < 0) {
		err_set(e, _("branch %s in %s does not point to a commit: %s"), branch, mirror,
		        mirror_git_errmsg());
		goto out;
	}
	git_oid_tostr(sha_out, 41, git_object_id(obj));
	rc = 0;
out:
	git_object_free(obj);
	git_reference_free(ref);
	git_repository_free(repo);
	free(name);
	return rc;
}

/* ---- a task's own base (--base) ---- */

/* 1 when s is n of the characters of set, n within [lo, hi]. */
static int all_of(const char *s, const char *set, size_t lo, size_t hi)
{
	size_t n = strlen(s);
	return n >= lo && n <= hi && strspn(s, set) == n;
}

/* The commit ref names in repo (peeled: an annotated tag's commit);
 * 0, or -1 when there is no such ref (libgit2's error cleared). */
static int mirror_peel_ref(git_repository *repo, const char *ref, git_oid *out)
{
	git_reference *r = NULL;
	git_object *obj = NULL;
	int rc = -1;
	if (git_reference_lookup(&r, repo, ref) == 0 &&
	    git_reference_peel(&obj, r, GIT_OBJECT_COMMIT) == 0) {
		git_oid_cpy(out, git_object_id(obj));
		rc = 0;
	}
	git_error_clear();
	git_object_free(obj);
	git_reference_free(r);
	return rc;
}

/* What ask names once the mirror has the remote's branches, tags and the
 * asked ref: the commit, and *what saying how it was found (malloc'd). */
static int mirror_find_base(git_repository *repo, const struct repo_conf *r, const char *ask,
                            const char *ref, git_oid *out, char **what, struct err *e)
{
	if (ref) {
		if (mirror_peel_ref(repo, ref, out) == 0) {
			*what = all_of(ask, "0123456789", 1, 6)
				? xasprintf(_("pull request %s, %s"), ask, ref) : xasprintf("%s", ref);
			return 0;
		}
		if (all_of(ask, "0123456789", 1, 6))
			return err_set(e, _("repo %s has no pull request %s: its remote has no %s; "
			                    "check the number, or give --base a branch, tag or commit"),
			               r->name, ask, ref);
		return err_set(e, _("repo %s: the ref %s is not on its remote; check the name "
		                    "(git ls-remote shows the remote's refs), or give --base a "
		                    "branch, tag or commit"), r->name, ref);
	}
	char *head = xasprintf("refs/heads/%s", ask), *tag = xasprintf("refs/tags/%s", ask);
	int rc = 0;
	if (mirror_peel_ref(repo, head, out) == 0) {
		*what = xasprintf(_("branch %s"), ask);
	} else if (mirror_peel_ref(repo, tag, out) == 0) {
		*what = xasprintf(_("tag %s"), ask);
	} else {
		git_object *obj = NULL;
		git_oid prefix;
		size_t n = strlen(ask);
		int found = GIT_ENOTFOUND;
		if (all_of(ask, "0123456789abcdef", 4, 40) && git_oid_fromstrn(&prefix, ask, n) == 0)
			found = git_object_lookup_prefix(&obj, repo, &prefix, n, GIT_OBJECT_COMMIT);
		if (found == 0 && obj) {
			git_oid_cpy(out, git_object_id(obj));
			*what = xasprintf(_("commit %s"), ask);
		} else if (found == GIT_EAMBIGUOUS) {
			rc = err_set(e, _("repo %s: %s names more than one commit; give more of its "
			                  "digits"), r->name, ask);
		} else {
			rc = err_set(e, _("repo %s has no branch, tag or commit %s on its remote; "
			                  "check the name (a commit must be on one of the remote's "
			                  "branches or tags)"), r->name, ask);
		}
		git_object_free(obj);
		git_error_clear();
	}
	free(head);
	free(tag);
	return rc;
}

int mirror_resolve_base(const char *data_dir, const struct repo_conf *r, const char *ask,
                        char sha_out[41], char **what, struct err *e)
{
	*what = NULL;
	/* N: pull request N's head; refs/...: that ref; else a branch, a tag
	 * or a commit. */
	char *ref = all_of(ask, "0123456789", 1, 6) ? xasprintf("refs/pull/%s/head", ask)
	            : !strncmp(ask, "refs/", 5) ? xstrdup(ask) : NULL;
	char *check = ref ? xstrdup(ref) : xasprintf("refs/heads/%s", ask);
	int valid = 0;
	if (git_reference_name_is_valid(&valid, check) < 0 || !valid || ask[0] == '-' ||
	    !strncmp(check, "refs/paddock/", 13)) {
		git_error_clear();
		free(ref);
		free(check);
		return err_set(e, _("the base '%s' is not a branch, tag, commit, ref or pull "
		                    "request number"), ask);
	}
	free(check);
	char *mirror = mirror_path(data_dir, r->name);
	/* The remote's branches and tags, and the asked ref under its own
	 * name (a branch or tag among them already). */
	char heads[] = MIRROR_FETCHSPEC, tags[] = "+refs/tags/*:refs/tags/*";
	char *own = ref && strncmp(ref, "refs/heads/", 11) && strncmp(ref, "refs/tags/", 10)
		? xasprintf("+%s:%s", ref, ref) : NULL;
	char *specs[] = { heads, tags, own };
	git_repository *repo = NULL;
	git_oid id;
	int rc = -1, lockfd = mirror_lock(mirror, e);
	if (lockfd < 0)
		goto out;
	gitlib_init();
	if (mirror_fetch_specs(mirror, r, specs, own ? 3 : 2, e) < 0)
		goto out;
	if (git_repository_open_bare(&repo, mirror) < 0) {
		err_set(e, _("cannot open the mirror %s: %s"), mirror, mirror_git_errmsg());
		goto out;
	}
	if (mirror_find_base(repo, r, ask, ref, &id, what, e) < 0)
		goto out;
	git_oid_tostr(sha_out, 41, &id);
	rc = 0;
out:
	if (lockfd >= 0)
		close(lockfd);
	git_repository_free(repo);
	free(own);
	free(ref);
	free(mirror);
	return rc;
}

/* ---- what a round changed, read from the mirror ---- */

static int mirror_tree_at(git_repository *repo, const char *sha, git_tree **out)
{
	git_oid id;
	git_commit *c = NULL;
	int rc = git_oid_fromstr(&id, sha) == 0 && git_commit_lookup(&c, repo, &id) == 0 &&
	         git_commit_tree(out, c) == 0 ? 0 : -1;
	git_commit_free(c);
	return rc;
}

struct paths_acc {
	char **v;
	size_t n;
};

static void paths_add(struct paths_acc *a, const char *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < a->n; i++)
		if (!strcmp(a->v[i], p))
			return;
	a->v = xrealloc(a->v, (a->n + 1) * sizeof *a->v);
	a->v[a->n++] = xstrdup(p);
}

static int paths_file_cb(const git_diff_delta *d, float progress, void *arg)
{
	(void)progress;
	paths_add(arg, d->old_file.path);
	paths_add(arg, d->new_file.path);
	return 0;
}

int mirror_changed_paths(const char *mirror, const char *from, const char *to, char ***paths,
                         size_t *n, struct err *e)
{
	git_repository *repo = NULL;
	git_tree *a = NULL, *b = NULL;
	git_diff *d = NULL;
	struct paths_acc acc = {0};
	int rc = -1;
	*paths = NULL;
	*n = 0;
	gitlib_init();
	if (git_repository_open_bare(&repo, mirror) < 0 || mirror_tree_at(repo, from, &a) < 0 ||
	    mirror_tree_at(repo, to, &b) < 0 || treediff_diff(&d, repo, a, b, NULL) < 0 ||
	    git_diff_foreach(d, paths_file_cb, NULL, NULL, NULL, &acc) < 0) {
		err_set(e, _("cannot list the changes %.12s..%.12s in the mirror %s: %s"), from, to,
		        mirror, mirror_git_errmsg());
		mirror_paths_free(acc.v, acc.n);
	} else {
		*paths = acc.v;
		*n = acc.n;
		rc = 0;
	}
	git_diff_free(d);
	git_tree_free(a);
	git_tree_free(b);
	git_repository_free(repo);
	return rc;
}

void mirror_paths_free(char **paths, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
}

int mirror_has_file(const char *mirror, const char *sha, const char *path)
{
	git_repository *repo = NULL;
	git_tree *t = NULL;
	git_tree_entry *ent = NULL;
	gitlib_init();
	/* A file: a blob, not a link (which may point anywhere) and not a
	 * folder. */
	int has = git_repository_open_bare(&repo, mirror) == 0 && mirror_tree_at(repo, sha, &t) == 0 &&
	          git_tree_entry_bypath(&ent, t, path) == 0 &&
	          git_tree_entry_type(ent) == GIT_OBJECT_BLOB &&
	          git_tree_entry_filemode(ent) != GIT_FILEMODE_LINK;
	git_error_clear();
	git_tree_entry_free(ent);
	git_tree_free(t);
	git_repository_free(repo);
	return has;
}

/* ---- the git CLI ---- */

static void mirror_read_back(int fd, struct buf *b)
{
	char chunk[8192];
	ssize_t n;

	if (lseek(fd, 0, SEEK_SET) < 0)
		return;
	while ((n = read(fd, chunk, sizeof chunk)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		buf_add(b, chunk, (size_t)n);
	}
}

int mirror_git_run(const struct mirror_git_cmd *c, int *wstatus, struct err *e)
{
	static const char *const base_env[] = {
		"PATH=/usr/local/bin:/usr/bin:/bin",
		"LC_ALL=C",
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_TERMINAL_PROMPT=0",
		"GIT_NO_REPLACE_OBJECTS=1",
		"GIT_ATTR_NOSYSTEM=1",
		"GIT_OPTIONAL_LOCKS=0",
	};
	size_t nargs = 0, nenv = 0, i;
	const char **argv, **envp;
	int in_fd = -1, out_fd = -1, err_fd = -1, null_fd = -1, rc = -1;

	while (c->argv[nargs])
		nargs++;
	while (c->env && c->env[nenv])
		nenv++;
	argv = xcalloc(nargs + 2, sizeof *argv);
	argv[0] = GIT_PATH;
	for (i = 0; i < nargs; i++)
		argv[i + 1] = c->argv[i];
	envp = xcalloc(sizeof base_env / sizeof *base_env + nenv + 1, sizeof *envp);
	for (i = 0; i < sizeof base_env / sizeof *base_env; i++)
		envp[i] = base_env[i];
	for (size_t j = 0; j < nenv; j++)
		envp[i++] = c->env[j];

	null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null_fd < 0) {
		err_errno(e, _("cannot open /dev/null"));
		goto out;
	}
	in_fd = c->in_fd >= 0 ? c->in_fd : null_fd;
	if (c->out_fd >= 0)
		out_fd = c->out_fd;
	else if (c->out) {
		out_fd = memfd_create("git-stdout", MFD_CLOEXEC);
		if (out_fd < 0) {
			err_errno(e, _("cannot create a memory file"));
			goto out;
		}
	} else
		out_fd = null_fd;
	if (c->err) {
		err_fd = memfd_create("git-stderr", MFD_CLOEXEC);
		if (err_fd < 0) {
			err_errno(e, _("cannot create a memory file"));
			goto out;
		}
	}

	/* SIGXCPU and SIGXFSZ (at their default in the child) would dump
	 * core into cwd, the mirror: no core. */
	struct child_limit limits[4] = { { RLIMIT_CORE, 0, 0 } };
	size_t nlimits = 1;
	if (c->timeout)
		limits[nlimits++] = (struct child_limit){ RLIMIT_CPU, c->timeout, c->timeout + 1 };
	if (c->max_memory)
		limits[nlimits++] = (struct child_limit){ RLIMIT_DATA, c->max_memory, c->max_memory };
	if (c->max_file)
		limits[nlimits++] = (struct child_limit){ RLIMIT_FSIZE, c->max_file, c->max_file };
	struct child ch = { .argv = argv, .env = envp, .cwd = c->cwd,
	                    .stdio = { in_fd, out_fd, err_fd >= 0 ? err_fd : null_fd },
	                    .limits = limits, .nlimits = nlimits, .alarm = c->timeout,
	                    .flags = CHILD_DIE_WITH_PARENT | CHILD_CLOSE_FDS };
	if (child_start(&ch, NULL) < 0) {
		if (ch.exec_errno == ENOENT || ch.exec_errno == EACCES)
			err_set(e, _("cannot run %s; install git (apt-get install git)"), GIT_PATH);
		else
			err_errno(e, _("cannot start git"));
		goto out;
	}
	*wstatus = child_finish(&ch);
	if (c->out_fd < 0 && c->out)
		mirror_read_back(out_fd, c->out);
	if (c->err)
		mirror_read_back(err_fd, c->err);
	rc = 0;
out:
	if (c->out_fd < 0 && c->out && out_fd >= 0)
		close(out_fd);
	if (err_fd >= 0)
		close(err_fd);
	if (null_fd >= 0)
		close(null_fd);
	free(argv);
	free(envp);
	return rc;
}

int mirror_set_ref(const char *mirror, const char *ref, const char *sha, struct err *e)
{
	git_repository *repo = NULL;
	git_reference *r = NULL;
	git_oid oid;
	int rc = -1;
	if (strncmp(ref, "refs/paddock/", 13) != 0)
		return err_set(e, "mirror: %s is not a paddock ref", ref);
	gitlib_init();
	if (git_oid_fromstr(&oid, sha) < 0 || git_repository_open_bare(&repo, mirror) < 0 ||
	    git_reference_create(&r, repo, ref, &oid, 1, "paddock: task round") < 0) {
		const git_error *ge = git_error_last();
		err_set(e, _("cannot set %s in the mirror %s: %s"), ref, mirror,
		        ge && ge->message ? ge->message : "?");
	} else {
		rc = 0;
	}
	git_reference_free(r);
	git_repository_free(repo);
	return rc;
}

int mirror_retire_ref(const char *mirror, const char *ref, const char *keep_as,
                      struct err *e)
{
	git_repository *repo = NULL;
	git_reference *r = NULL, *moved = NULL;
	int rc = 0;
	if (strncmp(ref, "refs/paddock/", 13) != 0 || strncmp(keep_as, "refs/paddock/", 13) != 0)
		return err_set(e, "mirror: %s or %s is not a paddock ref", ref, keep_as);
	gitlib_init();
	if (git_repository_open_bare(&repo, mirror) < 0) {
		rc = -1;
	} else if (git_reference_lookup(&r, repo, ref) == 0) {
		/* force: an older attempt's ref of the same name goes. */
		if (git_reference_rename(&moved, r, keep_as, 1, "paddock: earlier attempt") < 0)
			rc = -1;
	}
	if (rc < 0) {
		const git_error *ge = git_error_last();
		err_set(e, _("cannot move %s aside in the mirror %s: %s"), ref, mirror,
		        ge && ge->message ? ge->message : "?");
	}
	git_reference_free(moved);
	git_reference_free(r);
	git_repository_free(repo);
	return rc;
}

/* Calls fn with the path of each mirror of data_dir (mirrors/NAME.git). */
static void mirror_each(const char *data_dir, void (*fn)(const char *mirror, void *arg),
                        void *arg)
{
	char *top = paths_mirrors_dir(data_dir);
	DIR *d = opendir(top);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		size_t n = strlen(de->d_name);
		if (de->d_name[0] == '.' || n < 5 || strcmp(de->d_name + n - 4, ".git") != 0)
			continue;
		char *m = xasprintf("%s/%s", top, de->d_name);
		fn(m, arg);
		free(m);
	}
	if (d)
		closedir(d);
	free(top);
}

static void mirror_janitor_one(const char *mirror, void *arg)
{
	int *removed = arg;
	char *objects = xasprintf("%s/objects", mirror);
	DIR *od = opendir(objects);
	struct dirent *oe;
	while (od && (oe = readdir(od))) {
		if (strncmp(oe->d_name, "incoming-", 9) != 0)
			continue;
		/* A quarantine of an import whose process died: its objects
		 * never reached the mirror. */
		char *q = xasprintf("%s/%s", objects, oe->d_name);
		struct err e = {{0}};
		if (fsx_rm_rf(q, &e) == 0)
			(*removed)++;
		free(q);
	}
	if (od)
		closedir(od);
	free(objects);
	/* A maintenance (mirror_maintain) killed with its owner: its lock
	 * would refuse every later pack-refs and ref rename. */
	char *lock = xasprintf("%s/packed-refs.lock", mirror);
	*removed += unlink(lock) == 0;
	free(lock);
}

int mirror_janitor(const char *data_dir)
{
	int removed = 0;
	mirror_each(data_dir, mirror_janitor_one, &removed);
	return removed;
}

/* Entries of dir whose names end with suffix (NULL: any but dot names),
 * counted up to limit; subfolders of refs/ count their entries. */
static int mirror_count(const char *dir, const char *suffix, int limit)
{
	DIR *d = opendir(dir);
	int n = 0;
	struct dirent *de;
	size_t sl = suffix ? strlen(suffix) : 0;
	while (d && n <= limit && (de = readdir(d))) {
		size_t len = strlen(de->d_name);
		if (de->d_name[0] == '.')
			continue;
		if (suffix) {
			n += len > sl && strcmp(de->d_name + len - sl, suffix) == 0;
			continue;
		}
		char *sub = xasprintf("%s/%s", dir, de->d_name);
		struct stat st;
		if (lstat(sub, &st) == 0)
			n += S_ISDIR(st.st_mode) ? mirror_count(sub, NULL, limit - n) : 1;
		free(sub);
	}
	if (d)
		closedir(d);
	return n;
}

static int mirror_maintain_one(const char *mirror, struct err *e)
{
	int lockfd = mirror_lock(mirror, e);
	if (lockfd < 0)
		return -1;
	static const char *const repack[] = { "repack", "-d", "-q", "--geometric=2",
	                                      "--no-write-bitmap-index", NULL };
	static const char *const packrefs[] = { "pack-refs", "--all", "--prune", NULL };
	int rc = 0, ws;
	struct buf err = {0};
	struct mirror_git_cmd c = { .argv = repack, .cwd = mirror, .in_fd = -1, .out_fd = -1,
	                            .err = &err, .timeout = 3600 };
	if (mirror_git_run(&c, &ws, e) < 0 || ws != 0 ||
	    (c.argv = packrefs, mirror_git_run(&c, &ws, e) < 0) || ws != 0) {
		if (!e->msg[0])
			err_set(e, _("cannot pack the mirror %s: %s"), mirror,
			        err.data ? err.data : "git failed");
		rc = -1;
	}
	buf_free(&err);
	close(lockfd);
	return rc;
}

struct maintain {
	int max_packs, packed;
};

static void mirror_maintain_check(const char *m, void *arg)
{
	struct maintain *mt = arg;
	char *packs = xasprintf("%s/objects/pack", m), *refs = xasprintf("%s/refs", m);
	/* Loose refs cost less than packs: ten times as many wait. */
	if (mirror_count(packs, ".pack", mt->max_packs) > mt->max_packs ||
	    mirror_count(refs, NULL, 10 * mt->max_packs) > 10 * mt->max_packs) {
		struct err e = {{0}};
		if (mirror_maintain_one(m, &e) == 0)
			mt->packed++;
		else
			fprintf(stderr, "paddock: %s\n", e.msg);
	}
	free(packs);
	free(refs);
}

int mirror_maintain(const char *data_dir, int max_packs)
{
	struct maintain mt = { .max_packs = max_packs };
	mirror_each(data_dir, mirror_maintain_check, &mt);
	return mt.packed;
}

/* The probe itself, in the child: connect and list, as a fetch would. */
static int mirror_probe_here(const struct repo_conf *r, struct err *e)
{
	git_remote *rem = NULL;
	git_remote_callbacks cbs;
	struct remote_auth auth;
	const git_remote_head **heads;
	size_t n;
	int rc = -1;
	gitlib_init();
	const char *path = config_url_local_path(r->url);
	git_repository *local = NULL;
	if (path && git_repository_open_ext(&local, path, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) < 0)
		return err_set(e, _("repo %s: there is no git repository at %s; check [repo \"%s\"] "
		                    "url in the config"), r->name, path, r->name);
	git_repository_free(local);
	remote_auth_init(&auth, r, REMOTE_FETCH, r->url);
	git_remote_init_callbacks(&cbs, GIT_REMOTE_CALLBACKS_VERSION);
	remote_auth_callbacks(&cbs, &auth);
	if (git_remote_create_detached(&rem, r->url) < 0 ||
	    git_remote_connect(rem, GIT_DIRECTION_FETCH, &cbs, NULL, NULL) < 0 ||
	    git_remote_ls(&heads, &n, rem) < 0)
		mirror_fetch_error(r, &auth, e);
	else
		rc = 0;
	git_remote_free(rem);
	remote_auth_free(&auth);
	return rc;
}

struct probe_arg {
	const struct repo_conf *r;
	int wfd;
};

/* In the probe's child: the answer on wfd when it fails. */
static int mirror_probe_child(void *arg)
{
	struct probe_arg *a = arg;
	struct err ce = {{0}};
	int rc = mirror_probe_here(a->r, &ce);
	if (rc < 0 && fsx_write_all(a->wfd, ce.msg, strlen(ce.msg)) < 0)
		rc = -1;
	return rc < 0 ? 1 : 0;
}

int mirror_probe(const struct repo_conf *r, unsigned timeout, struct err *e)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return err_errno(e, _("cannot make a pipe"));
	/* A child of its own (child.h): libgit2 may hang on a server that
	 * never answers, and the deadline kills it. */
	struct probe_arg a = { .r = r, .wfd = p[1] };
	int keep[] = { p[1] };
	struct child ch = { .fn = mirror_probe_child, .arg = &a, .keep = keep, .nkeep = 1,
	                    .flags = CHILD_CLOSE_FDS,
	                    .stdio = { CHILD_NULL, CHILD_INHERIT, CHILD_INHERIT } };
	if (child_start(&ch, e) < 0) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	close(p[1]);
	struct buf msg = {0};
	struct pollfd pfd = { .fd = p[0], .events = POLLIN };
	int timed_out = 0;
	double deadline = clock_mono() + timeout;
	for (;;) {
		double left = deadline - clock_mono();
		int k = left > 0 ? poll(&pfd, 1, (int)(left * 1000) + 1) : 0;
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			timed_out = 1;
			child_kill(&ch, SIGKILL);
			break;
		}
		char chunk[512];
		ssize_t got = read(p[0], chunk, sizeof chunk);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		buf_add(&msg, chunk, (size_t)got);
	}
	close(p[0]);
	int st = child_finish(&ch);
	int rc = 0;
	char *shown = mirror_url_display(r->url);
	if (timed_out)
		rc = err_set(e, _("%s did not answer within %u s"), shown, timeout);
	else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		rc = err_set(e, "%s", msg.data ? msg.data : _("the connection failed"));
	free(shown);
	buf_free(&msg);
	return rc;
}
