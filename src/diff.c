#include "autoconfig.h"
#include "diff.h"

#include <git2.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gitlib.h"
#include "i18n.h"
#include "treediff.h"

static const char *diff_git_errmsg(void)
{
	const git_error *ge = git_error_last();
	return ge && ge->message ? ge->message : _("unknown libgit2 error");
}

static int diff_tree(git_repository *repo, const char *rev, git_tree **out, struct err *e)
{
	git_object *obj = NULL;
	int rc = 0;

	if (git_revparse_single(&obj, repo, rev) < 0)
		return err_set(e, _("commit %s is not in the mirror: %s"), rev, diff_git_errmsg());
	if (git_object_peel((git_object **)out, obj, GIT_OBJECT_TREE) < 0)
		rc = err_set(e, _("%s is not a commit: %s"), rev, diff_git_errmsg());
	git_object_free(obj);
	return rc;
}

/* Opens the mirror and computes base..head with rename detection. */
static int diff_open(const char *mirror, const char *base, const char *head,
                     git_repository **repo, git_diff **diff, struct err *e)
{
	git_tree *a = NULL, *b = NULL;
	git_diff_options opts;
	git_diff_find_options fopts;
	int rc = -1;

	git_diff_options_init(&opts, GIT_DIFF_OPTIONS_VERSION);
	git_diff_find_options_init(&fopts, GIT_DIFF_FIND_OPTIONS_VERSION);
	*repo = NULL;
	*diff = NULL;
	if (git_repository_open_bare(repo, mirror) < 0) {
		err_set(e, _("cannot open the mirror %s: %s"), mirror, diff_git_errmsg());
		return -1;
	}
	if (diff_tree(*repo, base, &a, e) < 0 || diff_tree(*repo, head, &b, e) < 0)
		goto out;
	if (treediff_diff(diff, *repo, a, b, &opts) < 0) {
		err_set(e, _("cannot compute the diff %s..%s: %s"), base, head, diff_git_errmsg());
		goto out;
	}
	fopts.flags = GIT_DIFF_FIND_RENAMES;
	if (git_diff_find_similar(*diff, &fopts) < 0) {
		err_set(e, _("cannot detect renames: %s"), diff_git_errmsg());
		goto out;
	}
	rc = 0;
out:
	git_tree_free(a);
	git_tree_free(b);
	if (rc < 0) {
		git_diff_free(*diff);
		*diff = NULL;
		git_repository_free(*repo);
		*repo = NULL;
	}
	return rc;
}

/* ------------------------------------------------------------ one pass */

static int diff_print_line(const git_diff_delta *delta, const git_diff_hunk *hunk,
                           const git_diff_line *line, void *payload)
{
	struct buf *out = payload;

	(void)delta;
	(void)hunk;
	/* Like git: content lines carry their origin character. */
	if (line->origin == GIT_DIFF_LINE_CONTEXT || line->origin == GIT_DIFF_LINE_ADDITION ||
	    line->origin == GIT_DIFF_LINE_DELETION)
		buf_addc(out, (char)line->origin);
	buf_add(out, line->content, line->content_len);
	return 0;
}

/* One file's result, computed by a worker and handed over in order. */
struct diff_slot {
	int ready;
	int rc;
	struct diff_file f;            /* its paths point at old_path, new_path */
	char *old_path, *new_path;
	struct buf patch;
	char msg[ERR_MAX];
};

static void diff_slot_clear(struct diff_slot *s)
{
	free(s->old_path);
	free(s->new_path);
	buf_free(&s->patch);
	memset(s, 0, sizeof(*s));
}

/* The patch of delta i, with its stats: computed once, for the stat line
 * and the text alike. */
static void diff_one(git_diff *diff, size_t i, struct diff_slot *s)
{
	git_patch *patch = NULL;
	size_t add = 0, del = 0;

	if (git_patch_from_diff(&patch, diff, i) < 0 ||
	    (patch && (git_patch_line_stats(NULL, &add, &del, patch) < 0 ||
	               git_patch_print(patch, diff_print_line, &s->patch) < 0))) {
		s->rc = -1;
		snprintf(s->msg, sizeof(s->msg), "%s", diff_git_errmsg());
		git_patch_free(patch);
		return;
	}
	const git_diff_delta *d = patch ? git_patch_get_delta(patch) : git_diff_get_delta(diff, i);
	s->old_path = xstrdup(d->old_file.path ? d->old_file.path : "");
	s->new_path = xstrdup(d->new_file.path ? d->new_file.path : s->old_path);
	s->f = (struct diff_file){
		.old_path = s->old_path, .new_path = s->new_path,
		.old_mode = d->old_file.mode, .new_mode = d->new_file.mode,
		.old_size = (int64_t)d->old_file.size, .new_size = (int64_t)d->new_file.size,
		.binary = !!(d->flags & GIT_DIFF_FLAG_BINARY), .ins = add, .del = del,
	};
	git_patch_free(patch);
}

/* Files computed ahead of the one handed over: enough to keep the workers
 * busy while fn writes, few enough to bound the memory. */
#define DIFF_WINDOW 64
#define DIFF_THREADS_MAX 4
/* Fewer files than this are not worth a thread. */
#define DIFF_THREADS_MIN_FILES 16

struct diff_job {
	const char *mirror, *base, *head;
	size_t n;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	size_t next, emitted;          /* the next delta to take, to hand over */
	int stop;
	char fail[ERR_MAX];            /* a worker could not open the diff */
	struct diff_slot slots[DIFF_WINDOW];
};

static void *diff_worker(void *arg)
{
	struct diff_job *j = arg;
	git_repository *repo;
	git_diff *diff;
	struct err e = {{0}};

	/* Its own repository and diff: libgit2's objects are not shared
	 * between threads; the tree diff is cheap next to the patches. */
	if (diff_open(j->mirror, j->base, j->head, &repo, &diff, &e) < 0) {
		pthread_mutex_lock(&j->mu);
		if (!j->fail[0])
			snprintf(j->fail, sizeof(j->fail), "%s", e.msg);
		j->stop = 1;
		pthread_cond_broadcast(&j->cv);
		pthread_mutex_unlock(&j->mu);
		return NULL;
	}
	for (;;) {
		pthread_mutex_lock(&j->mu);
		while (!j->stop && j->next < j->n && j->next >= j->emitted + DIFF_WINDOW)
			pthread_cond_wait(&j->cv, &j->mu);
		if (j->stop || j->next >= j->n) {
			pthread_mutex_unlock(&j->mu);
			break;
		}
		size_t i = j->next++;
		pthread_mutex_unlock(&j->mu);

		struct diff_slot s = {0};
		diff_one(diff, i, &s);
		pthread_mutex_lock(&j->mu);
		s.ready = 1;
		j->slots[i % DIFF_WINDOW] = s;
		pthread_cond_broadcast(&j->cv);
		pthread_mutex_unlock(&j->mu);
	}
	git_diff_free(diff);
	git_repository_free(repo);
	return NULL;
}

/* How many threads compute the patches: one per CPU, a few at most. */
static int diff_threads(size_t n)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	if (n < DIFF_THREADS_MIN_FILES || cpus < 2)
		return 1;
	return cpus > DIFF_THREADS_MAX ? DIFF_THREADS_MAX : (int)cpus;
}

/* Hands the slots over in order as the workers fill them. */
static int diff_each_threaded(struct diff_job *j, int nthreads, diff_file_fn fn, void *arg,
                              struct err *e)
{
	pthread_t th[DIFF_THREADS_MAX];
	int started = 0, rc = 0;

	pthread_mutex_init(&j->mu, NULL);
	pthread_cond_init(&j->cv, NULL);
	for (; started < nthreads; started++)
		if (pthread_create(&th[started], NULL, diff_worker, j) != 0)
			break;
	if (!started)
		rc = err_set(e, _("cannot start a thread to compute the diff"));
	for (size_t i = 0; rc == 0 && i < j->n; i++) {
		struct diff_slot *s = &j->slots[i % DIFF_WINDOW];
		pthread_mutex_lock(&j->mu);
		while (!s->ready && !j->fail[0])
			pthread_cond_wait(&j->cv, &j->mu);
		struct diff_slot got = *s;
		if (got.ready)
			memset(s, 0, sizeof(*s));
		j->emitted = i + 1;
		pthread_cond_broadcast(&j->cv);
		pthread_mutex_unlock(&j->mu);
		if (!got.ready)
			rc = err_set(e, "%s", j->fail);
		else if (got.rc < 0)
			rc = err_set(e, _("cannot compute the diff %s..%s: %s"), j->base, j->head, got.msg);
		else if (fn(arg, &got.f, got.patch.data ? got.patch.data : "", got.patch.len, e) != 0)
			rc = e && e->msg[0] ? -1 : err_set(e, _("the diff was stopped"));
		diff_slot_clear(&got);
	}
	pthread_mutex_lock(&j->mu);
	j->stop = 1;
	pthread_cond_broadcast(&j->cv);
	pthread_mutex_unlock(&j->mu);
	for (int k = 0; k < started; k++)
		pthread_join(th[k], NULL);
	for (size_t k = 0; k < DIFF_WINDOW; k++)
		diff_slot_clear(&j->slots[k]);
	pthread_cond_destroy(&j->cv);
	pthread_mutex_destroy(&j->mu);
	return rc;
}

int diff_each(const char *mirror, const char *base, const char *head, diff_file_fn fn, void *arg,
              struct err *e)
{
	git_repository *repo;
	git_diff *diff;
	int rc = -1;

	gitlib_init();
	if (diff_open(mirror, base, head, &repo, &diff, e) < 0)
		goto done;
	size_t n = git_diff_num_deltas(diff);
	int nthreads = diff_threads(n);
	if (nthreads > 1) {
		/* The patches are most of the work (xdiff on every file):
		 * spread over the CPUs, `git diff`'s time or better. */
		struct diff_job *j = xcalloc(1, sizeof(*j));
		j->mirror = mirror;
		j->base = base;
		j->head = head;
		j->n = n;
		rc = diff_each_threaded(j, nthreads, fn, arg, e);
		free(j);
		goto out;
	}
	rc = 0;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		struct diff_slot s = {0};
		diff_one(diff, i, &s);
		if (s.rc < 0)
			rc = err_set(e, _("cannot compute the diff %s..%s: %s"), base, head, s.msg);
		else if (fn(arg, &s.f, s.patch.data ? s.patch.data : "", s.patch.len, e) != 0)
			rc = e && e->msg[0] ? -1 : err_set(e, _("the diff was stopped"));
		diff_slot_clear(&s);
	}
out:
	git_diff_free(diff);
	git_repository_free(repo);
done:
	return rc;
}

int diff_each_buffer(const char *text, size_t len, diff_file_fn fn, void *arg, struct err *e)
{
	git_diff *diff;
	int rc = 0;

	gitlib_init();
	if (len == 0)
		return 0;
	if (git_diff_from_buffer(&diff, text, len) < 0)
		return err_kind_set(e, ERR_REMOTE, _("cannot read the diff the server sent: %s"),
		                    diff_git_errmsg());
	size_t n = git_diff_num_deltas(diff);
	for (size_t i = 0; rc == 0 && i < n; i++) {
		struct diff_slot s = {0};
		diff_one(diff, i, &s);
		if (s.rc < 0)
			rc = err_kind_set(e, ERR_REMOTE, _("cannot read the diff the server sent: %s"),
			                  s.msg);
		else if (fn(arg, &s.f, s.patch.data ? s.patch.data : "", s.patch.len, e) != 0)
			rc = e && e->msg[0] ? -1 : err_set(e, _("the diff was stopped"));
		diff_slot_clear(&s);
	}
	git_diff_free(diff);
	return rc;
}

struct diff_write_ctx {
	FILE *out;
	const char *base, *head;
};

static int diff_write_file(void *arg, const struct diff_file *f, const char *patch, size_t len,
                           struct err *e)
{
	struct diff_write_ctx *c = arg;
	(void)f;
	if (len && fwrite(patch, 1, len, c->out) != len)
		return err_errno(e, _("cannot write the diff %s..%s"), c->base, c->head);
	return 0;
}

int diff_write(const char *mirror, const char *base, const char *head, FILE *out,
               struct err *e)
{
	struct diff_write_ctx c = { out, base, head };
	if (diff_each(mirror, base, head, diff_write_file, &c, e) < 0)
		return -1;
	if (ferror(out))
		return err_set(e, _("cannot write the diff %s..%s"), base, head);
	return 0;
}

/* ------------------------------------------------------------ diffstat */

/* libgit2's git_path_common_dirlen: the length of the folders two
 * paths share, its slash included. */
static size_t diff_common_dirlen(const char *one, const char *two)
{
	const char *p, *q, *dirsep = NULL;
	for (p = one, q = two; *p && *q; p++, q++) {
		if (*p == '/' && *q == '/')
			dirsep = p;
		else if (*p != *q)
			break;
	}
	return dirsep ? (size_t)(dirsep - one) + 1 : 0;
}

#define DIFF_RENAME_SEP " => "
/* libgit2's STATS_FULL_MIN_SCALE. */
#define DIFF_STAT_MIN_SCALE 7

/* The width libgit2 1.5 gives a file's name: a rename's two paths, the
 * arrow not counted (diff_stat_line pads the other lines for it). */
static size_t diff_stat_name_len(const struct diff_file *f)
{
	size_t n = strlen(f->new_path);
	if (strcmp(f->old_path, f->new_path) != 0)
		n += strlen(f->old_path);
	return n;
}

static int diff_digits(size_t v)
{
	int n = 1;
	for (size_t place = 10; v >= place; place *= 10)
		n++;
	return n;
}

void diff_stat_add(struct diff_stat *s, const struct diff_file *f)
{
	size_t name = diff_stat_name_len(f);
	s->files++;
	if (strcmp(f->old_path, f->new_path) != 0)
		s->renames++;
	s->ins += f->ins;
	s->del += f->del;
	if (name > s->max_name)
		s->max_name = name;
	if (f->ins + f->del > s->max_filestat)
		s->max_filestat = f->ins + f->del;
}

static void diff_putcn(struct buf *out, char c, size_t n)
{
	buf_grow(out, n);
	memset(out->data + out->len, c, n);
	out->len += n;
	out->data[out->len] = '\0';
}

void diff_stat_line(const struct diff_stat *s, const struct diff_file *f, size_t width,
                    struct buf *out)
{
	int digits = diff_digits(s->max_filestat + 1);
	size_t pad, total = f->ins + f->del;

	/* The scale, as git_diff_stats_to_buf works it out. */
	if (width > 0) {
		if (width > s->max_name + (size_t)digits + 5)
			width -= s->max_name + (size_t)digits + 5;
		if (width < DIFF_STAT_MIN_SCALE)
			width = DIFF_STAT_MIN_SCALE;
	}
	if (width > s->max_filestat)
		width = 0;
	if (strcmp(f->old_path, f->new_path) != 0) {
		size_t common = diff_common_dirlen(f->old_path, f->new_path);
		if (common)
			buf_printf(out, " %.*s{%s" DIFF_RENAME_SEP "%s}", (int)common, f->old_path,
			           f->old_path + common, f->new_path + common);
		else
			buf_printf(out, " %s" DIFF_RENAME_SEP "%s", f->old_path, f->new_path);
	} else {
		buf_printf(out, " %s", f->new_path);
	}
	size_t name = diff_stat_name_len(f);
	pad = s->max_name > name ? s->max_name - name : 0;
	if (s->renames && !strcmp(f->old_path, f->new_path))
		pad += strlen(DIFF_RENAME_SEP);
	diff_putcn(out, ' ', pad);
	buf_adds(out, " | ");
	if (f->binary) {
		buf_printf(out, "Bin %" PRId64 " -> %" PRId64 " bytes", f->old_size, f->new_size);
	} else {
		buf_printf(out, "%*zu", digits, total);
		if (total) {
			buf_addc(out, ' ');
			if (!width) {
				diff_putcn(out, '+', f->ins);
				diff_putcn(out, '-', f->del);
			} else {
				size_t full = (total * width + s->max_filestat / 2) / s->max_filestat;
				size_t plus = full * f->ins / total, minus = full - plus;
				diff_putcn(out, '+', plus > 1 ? plus : 1);
				diff_putcn(out, '-', minus > 1 ? minus : 1);
			}
		}
	}
	buf_addc(out, '\n');
}

void diff_stat_summary(const struct diff_stat *s, struct buf *out)
{
	buf_printf(out, " %zu file%s changed", s->files, s->files != 1 ? "s" : "");
	if (s->ins || s->del == 0)
		buf_printf(out, ", %zu insertion%s(+)", s->ins, s->ins != 1 ? "s" : "");
	if (s->del || s->ins == 0)
		buf_printf(out, ", %zu deletion%s(-)", s->del, s->del != 1 ? "s" : "");
	buf_addc(out, '\n');
}

int diff_stat_mode(const struct diff_file *f, struct buf *out)
{
	if (f->old_mode == f->new_mode)
		return 0;
	if (f->old_mode == 0)
		buf_printf(out, " create mode %06o %s\n", (unsigned)f->new_mode, f->new_path);
	else if (f->new_mode == 0)
		buf_printf(out, " delete mode %06o %s\n", (unsigned)f->old_mode, f->old_path);
	else
		buf_printf(out, " mode change %06o => %06o %s\n", (unsigned)f->old_mode,
		           (unsigned)f->new_mode, f->new_path);
	return 1;
}

int diff_stat_list_file(void *arg, const struct diff_file *f, const char *patch, size_t len,
                        struct err *e)
{
	struct diff_stat_list *c = arg;
	(void)patch, (void)len, (void)e;
	if (c->n == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 16;
		c->v = xrealloc(c->v, c->cap * sizeof(*c->v));
	}
	struct diff_file *k = &c->v[c->n++];
	*k = *f;
	k->old_path = xstrdup(f->old_path);
	k->new_path = xstrdup(f->new_path);
	diff_stat_add(&c->st, k);
	return 0;
}

void diff_stat_list_write(const struct diff_stat_list *l, struct buf *out)
{
	for (size_t i = 0; i < l->n; i++)
		diff_stat_line(&l->st, &l->v[i], 80, out);
	diff_stat_summary(&l->st, out);
	for (size_t i = 0; i < l->n; i++)
		diff_stat_mode(&l->v[i], out);
}

void diff_stat_list_free(struct diff_stat_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free((char *)l->v[i].old_path);
		free((char *)l->v[i].new_path);
	}
	free(l->v);
	memset(l, 0, sizeof(*l));
}

int diff_stat(const char *mirror, const char *base, const char *head, struct buf *out,
              struct err *e)
{
	struct diff_stat_list c = {0};
	int rc = diff_each(mirror, base, head, diff_stat_list_file, &c, e);
	if (rc == 0)
		diff_stat_list_write(&c, out);
	diff_stat_list_free(&c);
	return rc;
}
