#include "autoconfig.h"
#include "view.h"

/* diff_view: a task's diff from paddock's mirror, coloured, with jumps
 * between files and hunks, rounds, the interdiff since the last review,
 * word highlights, pcre2 search, and notes on a line.
 *
 * The diff streams in: a child reads it from the task's kept diffs, or
 * computes it file by file where none is kept (diffcache_each, once for
 * the file list and the patch alike), and writes each file as it is
 * done; the view appends the file's patch text to one buffer, makes its
 * line records and adds it to the file list, and the loop draws what has
 * arrived, so the first screen of a 100,000-line diff shows while the
 * rest is computed.  The file list (a diffstat) is drawn from the files'
 * counts, not kept as text.  Drawing touches only the visible lines; word
 * highlights are computed when a line is first drawn and cached. */

#define PCRE2_CODE_UNIT_WIDTH 8
#include <errno.h>
#include <pcre2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "dash.h"
#include "i18n.h"
#include "sanitize.h"
#include "screen.h"
#include "source.h"
#include "worddiff.h"

/* DL_NOTE: the "still loading" line under the file list. */
enum dl_kind { DL_META, DL_FILE, DL_HUNK, DL_CTX, DL_ADD, DL_DEL, DL_NOTE };

/* One line of the patch text. */
struct dline {
	size_t off;
	uint32_t len;              /* without the newline */
	uint8_t kind;              /* enum dl_kind */
	int32_t partner;           /* the paired -/+ line for word highlights, or -1 */
};

struct dfile {
	int line;                  /* its "diff --git" line, among the patch's lines */
	struct diff_file f;        /* owns its paths */
};

/* A line's cached word spans (offsets in the line, marker included). */
struct wspans {
	size_t n;
	struct worddiff_span sp[];
};
static const struct wspans wspans_none;

enum drange { RANGE_ALL, RANGE_ROUND, RANGE_REVIEW };

/* Bytes of a line that drawing looks at: enough for any terminal width
 * (marks only make text wider); the rest of a huge line is never
 * rendered on each redraw. */
#define DRAW_MAX 16384
#define TAB_WIDTH 8
/* The diffstat's width, as `paddock diff`'s callers have always seen it. */
#define STAT_WIDTH 80

/* A diff, whole or as far as it has arrived.  The view's lines are the
 * file list (one per file, the summary and mode lines once done, a blank)
 * and then the patch's lines. */
struct dstate {
	char *text;                /* the patch text */
	size_t len, cap;
	struct dline *lines;       /* the patch's lines */
	int nlines, lcap;
	struct dfile *files;
	int nfiles, fcap;
	const struct wspans **words;   /* per patch line, lazily */
	int nwords;
	struct diff_stat stat;
	int nmodes;                /* files with a mode line under the summary */
	int done;
	char *error;               /* what the producer said went wrong */
	struct buf rec;            /* a record not yet whole */
	/* Pairing a hunk's '-' run with the '+' run after it. */
	int in_hunk, prev, del_start, del_end, add_start;
};

struct diff_priv {
	struct dstate st;          /* what the view shows */
	struct dstate *in;         /* a reload streaming in, shown when whole */
	/* What it shows. */
	enum drange range;
	int round;                 /* RANGE_ROUND: which */
	int task_round;            /* the task's round when loaded */
	char *head, *reviewed;     /* the task's head and reviewed_head when loaded */
	double checked;            /* when refresh last looked at the store */
	/* Search. */
	pcre2_code *re;
	pcre2_match_data *md;
	int back;                  /* the last search went backwards */
	int find_pending;          /* a search waits for more of the diff */
	int find_from;             /* the patch line it continues at */
	int follow_end;            /* G while loading: stay at the end */
	/* Drawing scratch: a role per byte of a line; a file-list line. */
	unsigned char *rowrole;
	struct buf scratch;
	struct screen *ls;         /* a line drawn whole (screen_line) */
	/* A load in flight (off the loop): what it is for, and where the
	 * selection should land when it arrives. */
	int loading;
	struct diff_pending *pending;
};

/* What a load computes in its child, and restores when it arrives. */
struct diff_pending {
	char *id, *repo;           /* the task's */
	char *from, *to;
	enum drange range;
	int round, task_round;
	char *head, *reviewed;
	char *keep_path;             /* the selected file's path, or NULL */
	int keep_within, keep_onscreen;
	int first;                   /* the view's first load */
};

/* ------------------------------------------------------------ the lines */

static int has_prefix(const char *s, size_t len, const char *p)
{
	size_t n = strlen(p);
	return len >= n && !memcmp(s, p, n);
}

static void dstate_free(struct dstate *s)
{
	if (s->words)
		for (int i = 0; i < s->nwords; i++)
			if (s->words[i] != &wspans_none)
				free((void *)s->words[i]);
	free(s->words);
	for (int i = 0; i < s->nfiles; i++) {
		free((char *)s->files[i].f.old_path);
		free((char *)s->files[i].f.new_path);
	}
	free(s->files);
	free(s->lines);
	free(s->text);
	free(s->error);
	buf_free(&s->rec);
	memset(s, 0, sizeof(*s));
}

/* The file list's lines: one per file, then the summary and the mode
 * lines (once all are there) or the loading note, and a blank line; none
 * before the first file has arrived. */
static int dstate_nhead(const struct dstate *s)
{
	if (s->done)
		return s->nfiles + 1 + s->nmodes + 1;
	return s->nfiles ? s->nfiles + 2 : 0;
}

static int dstate_total(const struct dstate *s)
{
	return dstate_nhead(s) + s->nlines;
}

/* A line of the view: its text (valid until the next call), kind, and
 * index among the patch's lines (-1 in the file list). */
struct lref {
	const char *s;
	size_t len;
	int kind;
	int pi;
};

static struct lref diff_line(struct diff_priv *p, int i)
{
	struct dstate *st = &p->st;
	int nhead = dstate_nhead(st);
	struct lref r = { "", 0, DL_META, -1 };

	if (i >= nhead) {
		const struct dline *l = &st->lines[i - nhead];
		r.s = st->text + l->off;
		r.len = l->len;
		r.kind = l->kind;
		r.pi = i - nhead;
		return r;
	}
	struct buf *b = &p->scratch;
	buf_reset(b);
	if (i < st->nfiles) {
		diff_stat_line(&st->stat, &st->files[i].f, STAT_WIDTH, b);
	} else if (!st->done) {
		if (i == st->nfiles) {
			if (p->loading)
				buf_printf(b, _(" loading the diff... %d files so far"), st->nfiles);
			else
				buf_printf(b, _(" the diff stopped after %d files (the message says why)"),
				           st->nfiles);
			r.kind = DL_NOTE;
		}
	} else if (i == st->nfiles) {
		diff_stat_summary(&st->stat, b);
	} else if (i < nhead - 1) {
		/* The k-th mode line: the k-th file whose mode changed. */
		int k = i - st->nfiles - 1;
		for (int f = 0; f < st->nfiles; f++) {
			if (st->files[f].f.old_mode == st->files[f].f.new_mode)
				continue;
			if (k-- == 0) {
				diff_stat_mode(&st->files[f].f, b);
				break;
			}
		}
	}
	if (b->len && b->data[b->len - 1] == '\n')
		b->data[--b->len] = '\0';
	r.s = b->data ? b->data : "";
	r.len = b->len;
	return r;
}

/* Splits the text from byte at on into line records, pairing each '-'
 * run with the '+' run after it (line by line) for word highlights. */
static void dstate_split(struct dstate *st, size_t at)
{
	while (at < st->len && st->nlines < INT32_MAX - 1) {
		const char *s = st->text + at;
		const char *nl = memchr(s, '\n', st->len - at);
		size_t n = nl ? (size_t)(nl - s) : st->len - at;
		int i = st->nlines, kind = DL_META;

		if (has_prefix(s, n, "diff --git ")) {
			kind = DL_FILE;
			st->in_hunk = 0;
		} else if (has_prefix(s, n, "@@")) {
			kind = DL_HUNK;
			st->in_hunk = 1;
		} else if (st->in_hunk && n && (*s == ' ' || *s == '+' || *s == '-')) {
			kind = *s == ' ' ? DL_CTX : *s == '+' ? DL_ADD : DL_DEL;
		}
		if (st->nlines == st->lcap) {
			st->lcap = st->lcap ? st->lcap * 2 : 1024;
			st->lines = xrealloc(st->lines, (size_t)st->lcap * sizeof(*st->lines));
		}
		struct dline *l = &st->lines[i];
		l->off = at;
		l->len = n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
		l->kind = (uint8_t)kind;
		l->partner = -1;
		st->nlines++;

		if (kind == DL_DEL) {
			if (st->prev != DL_DEL)
				st->del_start = i;
			st->del_end = i + 1;
		} else if (kind == DL_ADD) {
			if (st->prev == DL_DEL)
				st->add_start = i;
			else if (st->prev != DL_ADD)
				st->add_start = st->del_start = st->del_end = i;
			int j = st->del_start + (i - st->add_start);
			if (j < st->del_end && st->lines[j].kind == DL_DEL) {
				l->partner = j;
				st->lines[j].partner = i;
			}
		}
		/* "\ No newline at end of file" between the runs keeps them
		 * paired. */
		if (!(kind == DL_META && st->in_hunk && n && *s == '\\'))
			st->prev = kind;
		at += n + (nl != NULL);
	}
}

/* What the producer writes: records of a type byte, a length and that
 * many bytes.  A file's record is its numbers, paths and patch text. */
enum { REC_FILE = 'F', REC_ERROR = 'E' };
struct rec_file {
	uint32_t old_mode, new_mode;
	int64_t old_size, new_size;
	uint64_t ins, del;
	uint32_t binary, old_len, new_len;
};
#define REC_HEAD (1 + sizeof(uint64_t))

static void dstate_file(struct dstate *st, const char *data, size_t len)
{
	struct rec_file h;
	if (len < sizeof(h))
		return;
	memcpy(&h, data, sizeof(h));
	if (h.old_len > len - sizeof(h) || h.new_len > len - sizeof(h) - h.old_len)
		return;
	const char *op = data + sizeof(h), *np = op + h.old_len, *patch = np + h.new_len;
	size_t plen = len - sizeof(h) - h.old_len - h.new_len;

	if (st->nfiles == st->fcap) {
		st->fcap = st->fcap ? st->fcap * 2 : 16;
		st->files = xrealloc(st->files, (size_t)st->fcap * sizeof(*st->files));
	}
	struct dfile *f = &st->files[st->nfiles++];
	f->line = st->nlines;
	f->f = (struct diff_file){
		.old_path = xstrndup(op, h.old_len), .new_path = xstrndup(np, h.new_len),
		.old_mode = h.old_mode, .new_mode = h.new_mode,
		.old_size = h.old_size, .new_size = h.new_size,
		.binary = (int)h.binary, .ins = (size_t)h.ins, .del = (size_t)h.del,
	};
	diff_stat_add(&st->stat, &f->f);
	if (h.old_mode != h.new_mode)
		st->nmodes++;
	if (st->len + plen + 1 > st->cap) {
		st->cap = st->cap ? st->cap : 65536;
		while (st->len + plen + 1 > st->cap)
			st->cap *= 2;
		st->text = xrealloc(st->text, st->cap);
	}
	size_t at = st->len;
	memcpy(st->text + at, patch, plen);
	st->len += plen;
	st->text[st->len] = '\0';
	dstate_split(st, at);
}

/* Takes in a chunk of the producer's output: whole records become files,
 * the rest waits for the next chunk. */
static void dstate_feed(struct dstate *st, const char *data, size_t len)
{
	buf_add(&st->rec, data, len);
	size_t at = 0;
	while (st->rec.len - at >= REC_HEAD) {
		uint64_t n;
		memcpy(&n, st->rec.data + at + 1, sizeof(n));
		if (n > st->rec.len - at - REC_HEAD)
			break;
		const char *body = st->rec.data + at + REC_HEAD;
		if (st->rec.data[at] == REC_FILE) {
			dstate_file(st, body, (size_t)n);
		} else if (st->rec.data[at] == REC_ERROR) {
			free(st->error);
			st->error = xstrndup(body, (size_t)n);
		}
		at += REC_HEAD + (size_t)n;
	}
	if (at) {
		memmove(st->rec.data, st->rec.data + at, st->rec.len - at);
		st->rec.len -= at;
		st->rec.data[st->rec.len] = '\0';
	}
}

/* The file a view line belongs to (-1 in the file list). */
static int diff_file_of(const struct diff_priv *p, int line)
{
	const struct dstate *st = &p->st;
	int pi = line - dstate_nhead(st), lo = 0, hi = st->nfiles - 1, best = -1;
	if (pi < 0)
		return -1;
	while (lo <= hi) {
		int mid = lo + (hi - lo) / 2;
		if (st->files[mid].line <= pi) {
			best = mid;
			lo = mid + 1;
		} else {
			hi = mid - 1;
		}
	}
	return best;
}

/* File k's "diff --git" line in the view. */
static int dfile_line(const struct diff_priv *p, int k)
{
	return dstate_nhead(&p->st) + p->st.files[k].line;
}

static const char *dfile_path(const struct dfile *f)
{
	return f->f.new_path && *f->f.new_path ? f->f.new_path : f->f.old_path;
}

/* ------------------------------------------------------------ loading */

static void diff_pending_free(struct diff_pending *pd)
{
	if (!pd)
		return;
	free(pd->id);
	free(pd->repo);
	free(pd->from);
	free(pd->to);
	free(pd->head);
	free(pd->reviewed);
	free(pd->keep_path);
	free(pd);
}

static void rec_put(FILE *out, char type, const void *a, size_t alen, const void *b, size_t blen,
                    const void *c, size_t clen, const void *d, size_t dlen)
{
	uint64_t n = alen + blen + clen + dlen;
	fputc(type, out);
	fwrite(&n, sizeof(n), 1, out);
	fwrite(a, 1, alen, out);
	fwrite(b, 1, blen, out);
	fwrite(c, 1, clen, out);
	fwrite(d, 1, dlen, out);
}

/* In the child: each file as soon as diff_each has it, flushed, so the
 * view draws the first screen while the rest is computed. */
static int diff_emit(void *arg, const struct diff_file *f, const char *patch, size_t len,
                     struct err *e)
{
	FILE *out = arg;
	struct rec_file h = {
		.old_mode = f->old_mode, .new_mode = f->new_mode,
		.old_size = f->old_size, .new_size = f->new_size,
		.ins = f->ins, .del = f->del, .binary = (uint32_t)f->binary,
		.old_len = (uint32_t)strlen(f->old_path), .new_len = (uint32_t)strlen(f->new_path),
	};
	rec_put(out, REC_FILE, &h, sizeof(h), f->old_path, h.old_len, f->new_path, h.new_len,
	        patch, len);
	if (fflush(out) != 0 || ferror(out))
		return err_errno(e, "%s", _("cannot hand the diff to the dashboard"));
	return 0;
}

static void diff_chunk(struct dash *d, void *arg, const char *data, size_t len);
static void diff_arrived(struct dash *d, void *arg, const char *data, size_t len, int ok);

/* In the dashboard's job: args are the task's id and repo, the commit
 * from ("" for none), the commit to and which range that is (as the API
 * asks it: "", "round=N", "since=review"): from the dashboard's source
 * (source_diff_each; the local one serves a range kept in the task's
 * diffs, else computes and keeps it). */
int diff_view_produce(struct dash *d, char *const *args, FILE *out)
{
	struct err e = {{0}};
	struct task_row t = { .repo = args[1] };
	snprintf(t.id, sizeof t.id, "%s", args[0]);
	struct source *src = source_for_job(d->cfg, d->data_dir, &e);
	int rc = src ? source_diff_each(src, &t, args[4], args[2][0] ? args[2] : NULL, args[3],
	                                diff_emit, out, &e) : -1;
	source_close(src);
	if (rc < 0)
		rec_put(out, REC_ERROR, e.msg, strlen(e.msg), "", 0, "", 0, "", 0);
	return rc;
}

/* Streams the diff p->pending asks for into the view. */
static void diff_stream(struct view *v)
{
	struct diff_pending *pd = ((struct diff_priv *)v->priv)->pending;
	char which[32] = "";
	if (pd->range == RANGE_ROUND)
		snprintf(which, sizeof which, "round=%d", pd->round);
	else if (pd->range == RANGE_REVIEW)
		snprintf(which, sizeof which, "since=review");
	const char *args[] = { pd->id, pd->repo, pd->from ? pd->from : "", pd->to, which };
	dash_stream(v->d, "diff", args, diff_chunk, diff_arrived, v);
}


static int diff_load(struct view *v, enum drange r, int n, char *msg, size_t msglen)
{
	struct diff_priv *p = v->priv;
	struct dash *d = v->d;
	struct task_row t;
	struct err e = {{0}};
	const char *from = NULL, *to = NULL;
	struct task_round *rounds = NULL;
	size_t nrounds = 0;
	int rc = -1;

	if (source_task_get(d->src, v->task_id, &t, &e) < 0) {
		snprintf(msg, msglen, "%s", e.msg);
		return -1;
	}
	if (r == RANGE_ROUND) {
		if (n < 1 || n > t.round) {
			snprintf(msg, msglen, _("round %d: task %s has rounds 1 to %d"), n, t.id, t.round);
			goto out;
		}
		if (source_rounds(d->src, t.id, &rounds, &nrounds, &e) < 0) {
			snprintf(msg, msglen, "%s", e.msg);
			goto out;
		}
		for (size_t i = 0; i < nrounds; i++)
			if (rounds[i].n == n) {
				from = rounds[i].from;
				to = rounds[i].head;
			}
		if (!to) {
			snprintf(msg, msglen, _("round %d of task %s has no work"), n, t.id);
			goto out;
		}
	} else if (r == RANGE_REVIEW) {
		/* What changed since the reviewer last asked for changes. */
		if (!t.reviewed_head) {
			snprintf(msg, msglen, _("task %s has not been reviewed yet (no changes were "
			                        "requested); the diff shows all of its work"), t.id);
			goto out;
		}
		from = t.reviewed_head;
		to = t.head;
	} else {
		from = t.base;
		to = t.head;
	}
	if (!from || !to) {
		snprintf(msg, msglen, _("task %s has no work to show yet (it is %s); its diff exists "
		                        "once the agent's work is handed back"),
		         t.id, task_status_label(t.status));
		goto out;
	}

	/* The diff itself is made off the loop: a large one must not stop
	 * the screen.  diff_arrived installs it. */
	struct diff_pending *pd = xcalloc(1, sizeof *pd);
	pd->id = xstrdup(t.id);
	pd->repo = xstrdup(t.repo);
	pd->from = xstrdup(from);
	pd->to = xstrdup(to);
	pd->range = r;
	pd->round = n;
	pd->task_round = t.round;
	pd->head = t.head ? xstrdup(t.head) : NULL;
	pd->reviewed = t.reviewed_head ? xstrdup(t.reviewed_head) : NULL;
	if (p->pending)
		diff_pending_free(p->pending);
	p->pending = pd;
	p->loading = 1;
	rc = 0;
out:
	task_rounds_free(rounds, nrounds);
	task_row_free(&t);
	return rc;
}

/* Reloads keeping the selection on the same file and line offset when the
 * file is still there. */
static int diff_reload(struct view *v, enum drange r, int n, char *msg, size_t msglen)
{
	struct diff_priv *p = v->priv;
	int fi = v->sel >= 0 ? diff_file_of(p, v->sel) : -1;

	if (diff_load(v, r, n, msg, msglen) < 0)
		return -1;
	struct diff_pending *pd = p->pending;
	pd->keep_path = fi >= 0 ? xstrdup(dfile_path(&p->st.files[fi])) : NULL;
	pd->keep_within = fi >= 0 ? v->sel - dfile_line(p, fi) : 0;
	pd->keep_onscreen = v->sel - v->top;
	dash_forget(v->d, v);
	/* The diff shown stays until the new one is whole: the selection
	 * lands once, on the same file. */
	if (p->in)
		dstate_free(p->in);
	else
		p->in = xmalloc(sizeof(*p->in));
	memset(p->in, 0, sizeof(*p->in));
	diff_stream(v);
	return 0;
}

static void diff_find_more(struct view *v);
static void diff_find(struct view *v, int dir);

/* The diff shown grew: the patch's lines move down as the file list
 * grows above them, and a reader in the patch stays on the line read; G
 * stays at the end; a waiting search looks at what came. */
static void diff_grew(struct view *v, int old_nhead)
{
	struct diff_priv *p = v->priv;
	int delta = dstate_nhead(&p->st) - old_nhead;
	if (delta && old_nhead > 0) {
		if (v->sel >= old_nhead)
			v->sel += delta;
		if (v->top >= old_nhead)
			v->top += delta;
	}
	v->lines = dstate_total(&p->st);
	if (p->follow_end)
		v->sel = v->lines - 1;
	view_clamp(v);
	if (p->find_pending)
		diff_find_more(v);
}

static void diff_chunk(struct dash *d, void *arg, const char *data, size_t len)
{
	(void)d;
	struct view *v = arg;
	struct diff_priv *p = v->priv;
	if (p->in) {
		dstate_feed(p->in, data, len);
		return;
	}
	int old = dstate_nhead(&p->st);
	dstate_feed(&p->st, data, len);
	diff_grew(v, old);
}

/* A reload's selection: the same file and line where it is still there. */
static void diff_keep(struct view *v, const struct diff_pending *pd)
{
	struct diff_priv *p = v->priv;
	int total = dstate_total(&p->st), sel = 0;
	for (int i = 0; pd->keep_path && i < p->st.nfiles; i++)
		if (!strcmp(dfile_path(&p->st.files[i]), pd->keep_path)) {
			int end = i + 1 < p->st.nfiles ? dfile_line(p, i + 1) : total;
			sel = dfile_line(p, i) + pd->keep_within;
			if (sel >= end)
				sel = end - 1;
			break;
		}
	v->lines = total;
	v->sel = total ? sel : -1;
	v->top = v->sel - (pd->keep_onscreen > 0 ? pd->keep_onscreen : 0);
	if (v->top < 0)
		v->top = 0;
	view_clamp(v);
}

/* The producer ended: the diff is whole (or an error says why not). */
static void diff_arrived(struct dash *d, void *arg, const char *data, size_t len, int ok)
{
	struct view *v = arg;
	struct diff_priv *p = v->priv;
	struct diff_pending *pd = p->pending;
	struct dstate *in = p->in;
	p->pending = NULL;
	p->in = NULL;
	p->loading = 0;
	p->follow_end = 0;
	if (!pd || !ok) {
		const struct dstate *st = in ? in : &p->st;
		const char *why = st->error ? st->error : len ? data : _("cannot make the diff");
		if (pd)
			dash_message(d, ROLE_ERROR, "%.*s", (int)strnlen(why, 400), why);
		/* A reload's failure leaves the diff shown; a first load keeps
		 * what arrived, marked incomplete. */
		if (in) {
			dstate_free(in);
			free(in);
		}
		p->find_pending = 0;
		diff_pending_free(pd);
		return;
	}
	int old = dstate_nhead(&p->st);
	if (in) {
		dstate_free(&p->st);
		p->st = *in;
		free(in);
	}
	p->st.done = 1;
	p->range = pd->range;
	p->round = pd->round;
	p->task_round = pd->task_round;
	free(p->head);
	free(p->reviewed);
	p->head = pd->head;
	p->reviewed = pd->reviewed;
	pd->head = pd->reviewed = NULL;
	if (pd->first)
		diff_grew(v, old);
	else
		diff_keep(v, pd);
	if (p->find_pending) {
		/* Nothing after the selection: now the search may wrap. */
		p->find_pending = 0;
		diff_find(v, 1);
	}
	diff_pending_free(pd);
}

/* ------------------------------------------------------------ drawing */

static enum role dl_role(int kind)
{
	switch (kind) {
	case DL_FILE: return ROLE_DIFF_FILE;
	case DL_HUNK: return ROLE_DIFF_HUNK;
	case DL_ADD: return ROLE_DIFF_ADD;
	case DL_DEL: return ROLE_DIFF_DEL;
	case DL_CTX: return ROLE_NORMAL;
	case DL_NOTE: return ROLE_DIM;
	default: return ROLE_DIFF_META;
	}
}

/* The word spans of patch line i (computed with its partner on first
 * use: only lines that are drawn ever are). */
static const struct wspans *diff_words(struct dstate *st, int i)
{
	if (st->nwords < st->nlines) {
		st->words = xrealloc(st->words, (size_t)st->nlines * sizeof(*st->words));
		memset(st->words + st->nwords, 0, (size_t)(st->nlines - st->nwords) * sizeof(*st->words));
		st->nwords = st->nlines;
	}
	if (st->words[i])
		return st->words[i];
	const struct dline *l = &st->lines[i];
	if (l->partner < 0) {
		st->words[i] = &wspans_none;
		return st->words[i];
	}
	int di = l->kind == DL_DEL ? i : l->partner, ai = l->kind == DL_DEL ? l->partner : i;
	const struct dline *dl = &st->lines[di], *al = &st->lines[ai];
	struct worddiff w;
	if (!worddiff_lines(st->text + dl->off + 1, dl->len - 1, st->text + al->off + 1,
	                    al->len - 1, &w)) {
		st->words[di] = st->words[ai] = &wspans_none;
		return st->words[i];
	}
	struct wspans *ds = xmalloc(sizeof(*ds) + w.ndel * sizeof(ds->sp[0]));
	struct wspans *as = xmalloc(sizeof(*as) + w.nadd * sizeof(as->sp[0]));
	ds->n = w.ndel;
	as->n = w.nadd;
	/* Offsets in the line, past its marker. */
	for (size_t k = 0; k < w.ndel; k++)
		ds->sp[k] = (struct worddiff_span){ w.del[k].off + 1, w.del[k].len };
	for (size_t k = 0; k < w.nadd; k++)
		as->sp[k] = (struct worddiff_span){ w.add[k].off + 1, w.add[k].len };
	worddiff_free(&w);
	st->words[di] = ds;
	st->words[ai] = as;
	return st->words[i];
}

/* Marks [off, off + len) of the row's roles, clipped to n bytes. */
static void mark_roles(unsigned char *roles, size_t n, size_t off, size_t len, enum role r)
{
	if (off >= n)
		return;
	if (len > n - off)
		len = n - off;
	memset(roles + off, (int)r, len);
}

/* Start of the next UTF-8 character at or after i. */
static size_t utf8_next(const char *s, size_t n, size_t i)
{
	while (i < n && ((unsigned char)s[i] & 0xc0) == 0x80)
		i++;
	return i;
}

/* Draws view line i at the start of row y of s, up to column w; the
 * cell after it takes the line's role (its colour goes on to the view's
 * edge: screen_window).  Returns the columns drawn; *cut when the line
 * is longer than what is drawn of it (DRAW_MAX). */
static int diff_draw_line(struct view *v, struct screen *s, int y, int w, int i, int *cut)
{
	struct diff_priv *p = v->priv;
	const struct lref l = diff_line(p, i);
	const char *text = l.s;
	size_t n = l.len;
	enum role base = dl_role(l.kind);

	*cut = n > DRAW_MAX;
	if (n > DRAW_MAX) {
		/* Cut back to the start of a character. */
		n = DRAW_MAX;
		while (n > DRAW_MAX - 4 && ((unsigned char)text[n] & 0xc0) == 0x80)
			n--;
	}
	if (!p->rowrole)
		p->rowrole = xmalloc(DRAW_MAX);
	unsigned char *roles = p->rowrole;
	memset(roles, (int)base, n);
	if (l.kind == DL_ADD || l.kind == DL_DEL) {
		const struct wspans *ws = diff_words(&p->st, l.pi);
		for (size_t k = 0; k < ws->n; k++)
			mark_roles(roles, n, ws->sp[k].off, ws->sp[k].len,
			           l.kind == DL_ADD ? ROLE_DIFF_ADD_WORD : ROLE_DIFF_DEL_WORD);
	}
	if (p->re) {
		size_t at = 0;
		while (at <= n) {
			int rc = pcre2_match(p->re, (PCRE2_SPTR)text, n, at, 0, p->md, NULL);
			if (rc < 0)
				break;
			PCRE2_SIZE *ov = pcre2_get_ovector_pointer(p->md);
			mark_roles(roles, n, ov[0], ov[1] - ov[0], ROLE_LOG_MATCH);
			at = ov[1] > ov[0] ? ov[1] : utf8_next(text, n, ov[1] + 1);
		}
	}

	/* What the reviewer approves is shown whole: escape sequences,
	 * controls, bidi and invisible characters as marks (sanitize.h) in
	 * the escaped role, nothing dropped.  Plain pieces keep their bytes'
	 * roles. */
	struct buf vis = {0};
	struct sanitize_segs segs = {0};
	sanitize_visible(text, n, SANITIZE_KEEP_TAB, &vis, &segs);

	/* Runs of one role, tabs expanded from the start of the content (past
	 * the marker) so code keeps its alignment. */
	int body = l.kind == DL_CTX || l.kind == DL_ADD || l.kind == DL_DEL;
	int x = 0;
	for (size_t k = 0; k < segs.n && x < w; k++) {
		const struct sanitize_seg *g = &segs.v[k];
		const char *out = vis.data + g->out;
		if (g->mark) {
			x += screen_text(s, x, y, w - x, ROLE_ESCAPED, out, g->len);
			continue;
		}
		size_t at = 0;
		while (at < g->len && x < w) {
			enum role r = (enum role)roles[g->in + at];
			if (out[at] == '\t') {
				int col = x - body, to = body + (col / TAB_WIDTH + 1) * TAB_WIDTH;
				if (to > w)
					to = w;
				screen_fill(s, x, y, to - x, r);
				x = to;
				at++;
				continue;
			}
			size_t end = at + 1;
			while (end < g->len && roles[g->in + end] == roles[g->in + at] &&
			       out[end] != '\t')
				end++;
			x += screen_text(s, x, y, w - x, r, out + at, end - at);
			at = end;
		}
	}
	buf_free(&vis);
	sanitize_segs_free(&segs);
	if (base != ROLE_NORMAL)
		screen_fill(s, x, y, 1, base);
	return x;
}

/* The columns a line's row needs: a window's (cut), or the whole line's
 * (wrapped: each byte is at most a tab or a mark's 8 columns). */
static int diff_line_cols(struct view *v, int i, int w)
{
	if (!v->wrap)
		return v->left + w + 1;
	struct lref l = diff_line(v->priv, i);
	size_t n = l.len > DRAW_MAX ? DRAW_MAX : l.len;
	return n > 8000 ? 65536 : (int)n * 8 + TAB_WIDTH;
}

static int diff_flags(const struct view *v, int cut)
{
	return SCREEN_TEXT_MARKS | (v->wrap ? SCREEN_TEXT_WRAP : 0) | (cut ? SCREEN_TEXT_MORE : 0);
}

/* Draws view line i whole (or as far as the window needs) into the line
 * row p->ls; returns its width, *cut as diff_draw_line. */
static int diff_render(struct view *v, int i, int w, int *cut)
{
	struct diff_priv *p = v->priv;
	int cols = diff_line_cols(v, i, w);
	p->ls = screen_line(p->ls, cols);
	return diff_draw_line(v, p->ls, 0, cols, i, cut);
}

/* The rows line i takes: 1, or wrapped, as many as it needs. */
static int diff_rows(struct view *v, int i, int w)
{
	struct diff_priv *p = v->priv;
	if (!v->wrap)
		return 1;
	int cut, used = diff_render(v, i, w, &cut);
	return screen_window(NULL, 0, 0, w, 0, p->ls, used, 0, diff_flags(v, cut));
}

/* Wrapped lines take more rows than one: moves the top down until the
 * selection's rows are all on the screen. */
static void diff_wrap_fit(struct view *v, int h, int w)
{
	if (!v->wrap || v->sel < v->top || v->sel - v->top >= h)
		return;
	int n = v->sel - v->top + 1, sum = 0;
	int *rows = xmalloc((size_t)n * sizeof *rows);
	for (int k = 0; k < n; k++)
		sum += rows[k] = diff_rows(v, v->top + k, w);
	int k = 0;
	while (sum > h && k + 1 < n)
		sum -= rows[k++];
	v->top += k;
	free(rows);
}

static void diff_draw(struct view *v, struct screen *s, int y, int h)
{
	struct diff_priv *p = v->priv;
	int w = screen_width(s);

	v->height = h;
	v->width = w;
	int total = dstate_total(&p->st);
	if (!total) {
		screen_str(s, 0, y, w, ROLE_DIM, p->loading ? _("loading the diff...") :
		           _("(no changes)"));
		return;
	}
	view_clamp(v);
	diff_wrap_fit(v, h, w);
	v->more_right = 0;
	for (int r = 0, i = v->top; r < h && i < total; i++) {
		int cut, used = diff_render(v, i, w, &cut);
		int n = screen_window(s, 0, y + r, w, h - r, p->ls, used, v->left, diff_flags(v, cut));
		if (!v->wrap) {
			v->more_right |= n > v->left + w;
			n = 1;
		}
		if (n > h - r)
			n = h - r;
		for (int k = 0; i == v->sel && k < n; k++)
			screen_paint(s, 0, y + r + k, w, ROLE_CURSOR);
		r += n;
	}
}

static void diff_title_text(struct view *v, char *out, size_t len)
{
	struct diff_priv *p = v->priv;
	char range[64];

	if (p->range == RANGE_ROUND)
		snprintf(range, sizeof(range), _("round %d"), p->round);
	else if (p->range == RANGE_REVIEW)
		snprintf(range, sizeof(range), "%s", _("since review"));
	else if (p->task_round > 1)
		snprintf(range, sizeof(range), _("rounds 1-%d"), p->task_round);
	else
		snprintf(range, sizeof(range), _("round %d"), p->task_round > 0 ? p->task_round : 1);
	int fi = v->sel >= 0 ? diff_file_of(p, v->sel) : -1;
	int nfiles = p->st.nfiles;
	if (!nfiles && p->loading)
		snprintf(out, len, _("diff %s %s: loading..."), v->task_id, range);
	else if (!nfiles)
		snprintf(out, len, _("diff %s %s: no changes"), v->task_id, range);
	else {
		/* The path as the diff shows it: every byte visible. */
		const char *path = dfile_path(&p->st.files[fi < 0 ? 0 : fi]);
		struct buf vp = {0};
		sanitize_visible(path, strlen(path), 0, &vp, NULL);
		if (p->loading && !p->in)
			snprintf(out, len, _("diff %s %s: file %d/%d so far %s"), v->task_id, range,
			         fi < 0 ? 1 : fi + 1, nfiles, vp.data);
		else
			snprintf(out, len, _("diff %s %s: file %d/%d %s"), v->task_id, range,
			         fi < 0 ? 1 : fi + 1, nfiles, vp.data);
		buf_free(&vp);
	}
}

/* The title, and how long lines are shown when not cut at the edge. */
static void diff_title(struct view *v, char *out, size_t len)
{
	diff_title_text(v, out, len);
	size_t n = strlen(out);
	if (v->wrap)
		snprintf(out + n, len - n, "%s", _("  [wrap]"));
	else if (v->left > 0)
		snprintf(out + n, len - n, _("  [from column %d]"), v->left + 1);
}

/* ------------------------------------------------------------ requests */

/* Selects line i near the top of the view. */
static void diff_jump(struct view *v, int i)
{
	v->sel = i;
	v->top = i;
	if (v->height > 0 && v->top > v->lines - v->height)
		v->top = v->lines - v->height;
	if (v->top < 0)
		v->top = 0;
	view_clamp(v);
}

static void diff_jump_file(struct view *v, int dir)
{
	struct diff_priv *p = v->priv;
	int sel = v->sel < 0 ? 0 : v->sel;

	if (dir > 0) {
		for (int k = 0; k < p->st.nfiles; k++)
			if (dfile_line(p, k) > sel) {
				diff_jump(v, dfile_line(p, k));
				return;
			}
		dash_message(v->d, ROLE_NOTICE, "%s", p->loading && !p->in ?
		             _("the next file has not arrived yet: the diff is still loading") :
		             _("this is the last file"));
	} else {
		for (int k = p->st.nfiles; k-- > 0;)
			if (dfile_line(p, k) < sel) {
				diff_jump(v, dfile_line(p, k));
				return;
			}
		dash_message(v->d, ROLE_NOTICE, "%s", _("this is the first file"));
	}
}

static void diff_jump_hunk(struct view *v, int dir)
{
	struct diff_priv *p = v->priv;
	int sel = v->sel < 0 ? 0 : v->sel;

	int nhead = dstate_nhead(&p->st), total = dstate_total(&p->st);
	for (int i = sel + dir; i >= 0 && i < total; i += dir)
		if (i >= nhead && p->st.lines[i - nhead].kind == DL_HUNK) {
			diff_jump(v, i);
			return;
		}
	dash_message(v->d, ROLE_NOTICE, "%s",
	             dir > 0 ? _("this is the last hunk") : _("this is the first hunk"));
}

/* 1 when v is still open (a prompt's answer may come after it closed). */
static int diff_alive(struct dash *d, struct view *v)
{
	for (int i = 0; i < d->nviews; i++)
		if (d->stack[i] == v && v->ops == &view_diff)
			return 1;
	return 0;
}

static int diff_match(struct diff_priv *p, int i)
{
	struct lref l = diff_line(p, i);
	return pcre2_match(p->re, (PCRE2_SPTR)l.s, l.len, 0, 0, p->md, NULL) >= 0;
}

static void diff_found(struct view *v, int i)
{
	v->sel = i;
	if (i < v->top || (v->height > 0 && i >= v->top + v->height))
		v->top = i - (v->height > 2 ? v->height / 3 : 0);
	if (v->top < 0)
		v->top = 0;
	view_clamp(v);
}

/* Moves to the next line matching the search (dir 1 or -1), wrapping
 * around once.  While the diff streams in, a forward search does not wrap
 * yet: it goes on in what arrives (diff_find_more). */
static void diff_find(struct view *v, int dir)
{
	struct diff_priv *p = v->priv;
	int n = dstate_total(&p->st), start = v->sel < 0 ? (dir > 0 ? -1 : 0) : v->sel;

	if (!p->re) {
		dash_message(v->d, ROLE_NOTICE, "%s", _("nothing to find yet: search with / or ?"));
		return;
	}
	p->find_pending = 0;
	if (p->loading && !p->in && dir > 0) {
		for (int i = start + 1; i < n; i++)
			if (diff_match(p, i)) {
				diff_found(v, i);
				return;
			}
		p->find_pending = 1;
		p->find_from = p->st.nlines;
		dash_message(v->d, ROLE_NOTICE, "%s", _("no match in what has arrived: the search goes "
		                                        "on as the rest of the diff arrives"));
		return;
	}
	for (int k = 1; k <= n; k++) {
		int i = ((start + dir * k) % n + n) % n;
		if (diff_match(p, i)) {
			int wrapped = dir > 0 ? i <= start : i >= start;
			diff_found(v, i);
			if (wrapped)
				dash_message(v->d, ROLE_NOTICE, "%s",
				             dir > 0 ? _("search hit the bottom, continued at the top")
				                     : _("search hit the top, continued at the bottom"));
			return;
		}
	}
	dash_message(v->d, ROLE_ERROR, "%s", _("no line matches the pattern"));
}

/* A waiting search looks at the patch lines that arrived. */
static void diff_find_more(struct view *v)
{
	struct diff_priv *p = v->priv;
	int nhead = dstate_nhead(&p->st);
	for (int i = p->find_from; i < p->st.nlines; i++)
		if (diff_match(p, nhead + i)) {
			p->find_pending = 0;
			diff_found(v, nhead + i);
			dash_message(v->d, ROLE_NOTICE, "%s", _("found in the part of the diff that "
			                                        "arrived since"));
			return;
		}
	p->find_from = p->st.nlines;
}

static void diff_search_done(struct dash *d, void *arg, const char *text, int back)
{
	struct view *v = arg;
	if (!text || !diff_alive(d, v))
		return;
	struct diff_priv *p = v->priv;
	if (*text) {
		int code;
		PCRE2_SIZE eoff;
		pcre2_code *re = pcre2_compile((PCRE2_SPTR)text, PCRE2_ZERO_TERMINATED,
		                               PCRE2_UTF | PCRE2_MATCH_INVALID_UTF, &code, &eoff, NULL);
		if (!re) {
			PCRE2_UCHAR why[256];
			pcre2_get_error_message(code, why, sizeof(why));
			dash_message(d, ROLE_ERROR, _("invalid regular expression at offset %zu: %s"),
			             (size_t)eoff, (const char *)why);
			return;
		}
		pcre2_match_data_free(p->md);
		pcre2_code_free(p->re);
		p->re = re;
		p->md = pcre2_match_data_create_from_pattern(re, NULL);
	}
	/* An empty pattern repeats the last search in the new direction. */
	p->back = back;
	diff_find(v, back ? -1 : 1);
}

static void diff_search_fwd_done(struct dash *d, void *arg, const char *text)
{
	diff_search_done(d, arg, text, 0);
}

static void diff_search_back_done(struct dash *d, void *arg, const char *text)
{
	diff_search_done(d, arg, text, 1);
}

static void diff_round_done(struct dash *d, void *arg, const char *text)
{
	struct view *v = arg;
	if (!text || !diff_alive(d, v))
		return;
	char msg[ERR_MAX], *end;
	const char *s = text + strspn(text, " \t");
	long n = *s ? strtol(s, &end, 10) : 0;
	if (*s && (end == s || end[strspn(end, " \t")])) {
		dash_message(d, ROLE_ERROR, _("'%s' is not a round number"), text);
		return;
	}
	if (n < 0 || n > 1000000 ||
	    diff_reload(v, n ? RANGE_ROUND : RANGE_ALL, (int)n, msg, sizeof(msg)) < 0) {
		if (n < 0 || n > 1000000)
			snprintf(msg, sizeof(msg), _("'%s' is not a round number"), text);
		dash_message(d, ROLE_ERROR, "%s", msg);
	}
}

/* A comment on a diff line goes into the task's review draft (stored),
 * which `r` sends with the notes as one request for changes. */
struct diff_note {
	char id[TASK_ID_LEN + 1];
	struct review_comment c;   /* owns path and text */
};

static void diff_note_done(struct dash *d, void *arg, const char *text)
{
	struct diff_note *note = arg;
	struct err e = {{0}};
	size_t n = 0;
	if (!text || strspn(text, " \t\r\n") == strlen(text)) {
		dash_message(d, ROLE_DIM, "%s", text ? _("an empty comment; nothing added")
		                                     : C_("prompt", "cancelled"));
	} else {
		note->c.comment = (char *)text;
		if (source_draft_add(d->src, note->id, &note->c, &e) < 0 ||
		    source_draft_count(d->src, note->id, &n, &e) < 0) {
			dash_message(d, ROLE_ERROR, "%s", e.msg);
		} else {
			char kr[32] = "", kd[32] = "";
			if (d->keys) {
				keymap_keys_of(d->keys, REQ_REQUEST_CHANGES, kr, sizeof kr);
				keymap_keys_of(d->keys, REQ_DISCARD_DRAFT, kd, sizeof kd);
			}
			kr[strcspn(kr, " ")] = kd[strcspn(kd, " ")] = '\0';
			dash_message(d, ROLE_NOTICE, ngettext("added to the review draft of task %s "
			                                      "(%zu comment): %s sends it, %s discards it",
			                                      "added to the review draft of task %s "
			                                      "(%zu comments): %s sends them, %s discards "
			                                      "them", n),
			             note->id, n, *kr ? kr : ":request-changes",
			             *kd ? kd : ":discard-draft");
		}
	}
	free(note->c.path);
	free(note->c.text);
	free(note);
}

/* The line number in its file of patch line i: the new file's for
 * context and '+' lines, the old file's for '-' lines; -1 if there is no
 * hunk header above it. */
static long diff_line_number(const struct dstate *st, int i)
{
	int h = i;
	while (h >= 0 && st->lines[h].kind != DL_HUNK) {
		if (st->lines[h].kind == DL_FILE)
			return -1;
		h--;
	}
	if (h < 0)
		return -1;
	/* "@@ -a[,b] +c[,d] @@" */
	const char *s = st->text + st->lines[h].off, *e = s + st->lines[h].len;
	char hdr[128];
	size_t n = (size_t)(e - s) < sizeof(hdr) - 1 ? (size_t)(e - s) : sizeof(hdr) - 1;
	memcpy(hdr, s, n);
	hdr[n] = 0;
	long a, c;
	const char *minus = strstr(hdr, " -"), *plus = strstr(hdr, " +");
	if (!minus || !plus)
		return -1;
	a = strtol(minus + 2, NULL, 10);
	c = strtol(plus + 2, NULL, 10);
	for (int k = h + 1; k < i; k++) {
		int kind = st->lines[k].kind;
		if (kind == DL_CTX || kind == DL_DEL)
			a++;
		if (kind == DL_CTX || kind == DL_ADD)
			c++;
	}
	return st->lines[i].kind == DL_DEL ? a : c;
}

/* The most of a line quoted into a note. */
#define NOTE_QUOTE_MAX 400

static void diff_comment(struct view *v)
{
	struct diff_priv *p = v->priv;
	struct dstate *st = &p->st;
	struct dash *d = v->d;
	int i = v->sel - dstate_nhead(st);

	if (i < 0 || i >= st->nlines ||
	    (st->lines[i].kind != DL_CTX && st->lines[i].kind != DL_ADD &&
	     st->lines[i].kind != DL_DEL)) {
		dash_message(d, ROLE_NOTICE, "%s",
		             _("select a line of a hunk (context, + or -) to comment on it"));
		return;
	}
	int fi = diff_file_of(p, v->sel);
	long ln = diff_line_number(st, i);
	if (fi < 0 || ln < 0) {
		dash_message(d, ROLE_ERROR, "%s", _("cannot tell which file line this is"));
		return;
	}

	/* Check the gate first: a comment written for nothing is lost work. */
	struct task_row t;
	struct err e = {{0}};
	if (source_task_get(d->src, v->task_id, &t, &e) < 0) {
		dash_message(d, ROLE_ERROR, "%s", e.msg);
		return;
	}
	int ok = 0;
	if (t.status != TASK_REVIEW)
		dash_message(d, ROLE_ERROR, _("task %s is %s, not at review: comments go into a "
		                              "review draft when its work waits at the gate"),
		             t.id, task_status_label(t.status));
	else if (t.pending)
		dash_message(d, ROLE_ERROR, _("task %s already has changes requested; the agent "
		                              "gets them when the scheduler picks it up"), t.id);
	else
		ok = 1;
	struct diff_note *note = xcalloc(1, sizeof(*note));
	memcpy(note->id, t.id, sizeof(note->id));
	task_row_free(&t);
	if (!ok) {
		free(note);
		return;
	}

	const struct dline *l = &st->lines[i];
	const char *path = l->kind == DL_DEL ? st->files[fi].f.old_path : dfile_path(&st->files[fi]);
	/* Quoted as the reviewer sees it: escape sequences and hidden
	 * characters as their marks, none raw in a note. */
	struct buf q = {0}, qp = {0};
	size_t raw = l->len - 1;
	if (raw && st->text[l->off + raw] == '\r')
		raw--;     /* a CRLF file's line */
	size_t qn = raw > NOTE_QUOTE_MAX * 4 ? NOTE_QUOTE_MAX * 4 : raw;
	sanitize_visible(st->text + l->off + 1, qn, SANITIZE_KEEP_TAB, &q, NULL);
	sanitize_visible(path, strlen(path), 0, &qp, NULL);
	path = qp.data;
	qn = q.len;
	int cut = qn > NOTE_QUOTE_MAX || raw > NOTE_QUOTE_MAX * 4;
	if (qn > NOTE_QUOTE_MAX) {
		qn = NOTE_QUOTE_MAX;
		while (qn && ((unsigned char)q.data[qn] & 0xc0) == 0x80)
			qn--;
	}
	note->c.path = xstrdup(path);
	note->c.line = ln;
	note->c.old = l->kind == DL_DEL;
	note->c.text = xasprintf("%.*s%s", (int)qn, q.data ? q.data : "", cut ? "..." : "");
	char *prompt = xasprintf(note->c.old ? _("comment on %s:%ld (removed) for the review "
	                                         "draft: ")
	                                     : _("comment on %s:%ld for the review draft: "),
	                         path, ln);
	buf_free(&q);
	buf_free(&qp);
	dash_ask(d, prompt, 0, NULL, diff_note_done, note);
	free(prompt);
}

/* ------------------------------------------------------------ y and o */

/* y: the selected line as the view shows it (dash_copy marks what is not
 * printable), or, with none, the id or the branch. */
static void diff_copy(struct view *v)
{
	struct diff_priv *p = v->priv;
	if (v->sel < 0 || v->sel >= dstate_total(&p->st)) {
		dash_copy_menu(v->d, v->task_id, NULL);
		return;
	}
	struct lref l = diff_line(p, v->sel);
	char *line = xstrndup(l.s, l.len);
	dash_copy_menu(v->d, v->task_id, line);
	free(line);
}

/* The git colours of a patch line, for less -R: "" for context. */
static const char *diff_pager_colour(int kind)
{
	switch (kind) {
	case DL_FILE: return "\033[1m";
	case DL_HUNK: return "\033[36m";
	case DL_ADD: return "\033[32m";
	case DL_DEL: return "\033[31m";
	case DL_META: return "\033[1m";
	default: return "";
	}
}

/* Writes the patch the view shows as `paddock diff` prints it on a
 * terminal: what is not printable as a visible mark in reverse video
 * (sanitize_visible_marked: NO_COLOR keeps it), and, unless NO_COLOR is
 * set, each line in git's colours. */
static void diff_pager_write(struct diff_priv *p, FILE *out)
{
	const char *nc = getenv("NO_COLOR");
	int colour = !(nc && *nc);
	struct buf vis = {0};
	for (int i = 0; i < p->st.nlines; i++) {
		const struct dline *l = &p->st.lines[i];
		const char *c = colour ? diff_pager_colour(l->kind) : "";
		buf_reset(&vis);
		sanitize_visible_marked(p->st.text + l->off, l->len, SANITIZE_KEEP_TAB, &vis);
		fputs(c, out);
		/* After a mark's ESC [ 27 m the line's colour goes on. */
		fwrite(vis.data, 1, vis.len, out);
		fputs(*c ? "\033[m\n" : "\n", out);
	}
	buf_free(&vis);
}

/* o: the diff the view shows in $PAGER, from a temporary file removed
 * after. */
static void diff_pager(struct view *v)
{
	struct diff_priv *p = v->priv;
	if (p->loading) {
		dash_message(v->d, ROLE_NOTICE, "%s", _("the diff is still loading; o opens it in the "
		                                        "pager once it is whole"));
		return;
	}
	const char *tmp = getenv("TMPDIR");
	char *path = xasprintf("%s/paddock-diff-%s-XXXXXX", tmp && *tmp ? tmp : "/tmp",
	                       v->task_id);
	int fd = mkstemp(path);
	FILE *out = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!out) {
		dash_message(v->d, ROLE_ERROR, _("cannot write the diff for the pager: %s"),
		             strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlink(path);
		}
		free(path);
		return;
	}
	diff_pager_write(p, out);
	if (fflush(out) != 0 || ferror(out))
		dash_message(v->d, ROLE_ERROR, _("cannot write the diff for the pager: %s"),
		             strerror(errno));
	else
		dash_pager(v->d, path);
	fclose(out);
	unlink(path);
	free(path);
}

static int diff_request(struct view *v, enum request req)
{
	struct diff_priv *p = v->priv;
	char msg[ERR_MAX];

	/* G while the diff streams in stays at the end as it grows; any
	 * other key lets go. */
	p->follow_end = req == REQ_LAST && p->loading && !p->in;
	switch (req) {
	case REQ_NEXT_FILE:
		diff_jump_file(v, 1);
		return 1;
	case REQ_PREV_FILE:
		diff_jump_file(v, -1);
		return 1;
	case REQ_NEXT_HUNK:
		diff_jump_hunk(v, 1);
		return 1;
	case REQ_PREV_HUNK:
		diff_jump_hunk(v, -1);
		return 1;
	case REQ_SEARCH:
		dash_ask(v->d, "/", 0, NULL, diff_search_fwd_done, v);
		return 1;
	case REQ_SEARCH_BACK:
		dash_ask(v->d, "?", 0, NULL, diff_search_back_done, v);
		return 1;
	case REQ_FIND_NEXT:
		diff_find(v, p->back ? -1 : 1);
		return 1;
	case REQ_FIND_PREV:
		diff_find(v, p->back ? 1 : -1);
		return 1;
	case REQ_ROUND: {
		char prompt[128];
		snprintf(prompt, sizeof(prompt), _("round (1-%d; empty or 0: all rounds): "),
		         p->task_round > 0 ? p->task_round : 1);
		dash_ask(v->d, prompt, 0, NULL, diff_round_done, v);
		return 1;
	}
	case REQ_INTERDIFF: {
		enum drange r = p->range == RANGE_REVIEW ? RANGE_ALL : RANGE_REVIEW;
		if (diff_reload(v, r, 0, msg, sizeof(msg)) < 0)
			dash_message(v->d, ROLE_ERROR, "%s", msg);
		return 1;
	}
	case REQ_COMMENT:
		diff_comment(v);
		return 1;
	case REQ_REQUEST_CHANGES:
		gate_view_request_changes(v->d, v->task_id);
		return 1;
	case REQ_DISCARD_DRAFT:
		gate_view_discard_draft(v->d, v->task_id);
		return 1;
	case REQ_COPY:
		diff_copy(v);
		return 1;
	case REQ_PAGER:
		diff_pager(v);
		return 1;
	case REQ_ENTER:
		/* On the file list: to that file. */
		if (v->sel >= 0 && v->sel < p->st.nfiles)
			diff_jump(v, dfile_line(p, v->sel));
		return 1;
	default:
		return 0;
	}
}

/* ------------------------------------------------------------ life */

static int diff_open(struct view *v, char *msg, size_t msglen)
{
	struct diff_priv *p = v->priv;
	if (diff_load(v, RANGE_ALL, 0, msg, msglen) < 0)
		return -1;
	struct diff_pending *pd = p->pending;
	pd->first = 1;
	/* The title is right while the diff streams in. */
	p->range = pd->range;
	p->round = pd->round;
	p->task_round = pd->task_round;
	v->top = 0;
	v->sel = -1;
	diff_stream(v);
	return 0;
}

static void diff_refresh(struct view *v)
{
	struct diff_priv *p = v->priv;
	struct dash *d = v->d;

	/* A new round shows up in the store; looking once a second is
	 * plenty. */
	if (p->loading || (d->now && d->now - p->checked < 1.0 && d->now >= p->checked))
		return;
	p->checked = d->now;

	struct task_row t;
	struct err e = {{0}};
	if (source_task_get(d->src, v->task_id, &t, &e) < 0)
		return;
	int changed = (t.head ? !p->head || strcmp(t.head, p->head) : p->head != NULL) ||
	              t.round != p->task_round ||
	              (p->range == RANGE_REVIEW &&
	               (t.reviewed_head ? !p->reviewed || strcmp(t.reviewed_head, p->reviewed)
	                                : p->reviewed != NULL));
	if (changed) {
		char msg[ERR_MAX];
		if (diff_reload(v, p->range, p->round, msg, sizeof(msg)) < 0 &&
		    diff_reload(v, RANGE_ALL, 0, msg, sizeof(msg)) < 0) {
			/* Said once: the next look compares with this state. */
			dash_message(d, ROLE_ERROR, "%s", msg);
			free(p->head);
			free(p->reviewed);
			p->head = t.head ? xstrdup(t.head) : NULL;
			p->reviewed = t.reviewed_head ? xstrdup(t.reviewed_head) : NULL;
			p->task_round = t.round;
		}
	}
	task_row_free(&t);
}

static void diff_close(struct view *v)
{
	struct diff_priv *p = v->priv;
	/* A load still in flight must not land on a closed view. */
	dash_forget(v->d, v);
	diff_pending_free(p->pending);
	if (p->in) {
		dstate_free(p->in);
		free(p->in);
	}
	dstate_free(&p->st);
	buf_free(&p->scratch);
	free(p->head);
	free(p->reviewed);
	free(p->rowrole);
	screen_free(p->ls);
	pcre2_match_data_free(p->md);
	pcre2_code_free(p->re);
	memset(p, 0, sizeof(*p));
}

const struct view_ops view_diff = {
	.name = "diff",
	.priv_size = sizeof(struct diff_priv),
	.open = diff_open,
	.title = diff_title,
	.draw = diff_draw,
	.request = diff_request,
	.refresh = diff_refresh,
	.close = diff_close,
	.next_pane = &view_gate,
};
