#include "autoconfig.h"
#include "view.h"

/* diff_view: a task's diff from paddock's mirror, coloured, with jumps
 * between files and hunks, rounds, the interdiff since the last review,
 * word highlights, pcre2 search, and notes on a line.
 *
 * The patch text is kept in one buffer; one pass over it makes an array of
 * line records, and drawing touches only the visible ones, so a diff of
 * 100,000 lines opens at once.  Word highlights are computed when a line
 * is first drawn and cached. */

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "dash.h"
#include "diff.h"
#include "gate.h"
#include "i18n.h"
#include "mirror.h"
#include "sanitize.h"
#include "screen.h"
#include "store.h"
#include "worddiff.h"

enum dl_kind { DL_META, DL_FILE, DL_HUNK, DL_CTX, DL_ADD, DL_DEL };

/* One line of the patch text. */
struct dline {
	size_t off;
	uint32_t len;              /* without the newline */
	uint8_t kind;              /* enum dl_kind */
	int32_t partner;           /* the paired -/+ line for word highlights, or -1 */
};

struct dfile {
	int line;                  /* its "diff --git" line */
	char *old_path, *new_path; /* from ---/+++ (or rename, or diff --git) */
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

struct diff_priv {
	/* The diff. */
	char *text;
	size_t len;
	struct dline *lines;
	int nlines;
	struct dfile *files;
	int nfiles;
	const struct wspans **words;   /* per line, lazily */
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
	/* Drawing scratch: a role per byte of a line. */
	unsigned char *rowrole;
	/* A load in flight (off the loop): what it is for, and where the
	 * selection should land when it arrives. */
	int loading;
	struct diff_pending *pending;
};

/* What a load computes in its child, and restores when it arrives. */
struct diff_pending {
	char *mirror, *from, *to;
	enum drange range;
	int round, task_round;
	char *head, *reviewed;
	char *keep_path;             /* the selected file's path, or NULL */
	int keep_within, keep_onscreen;
	int first;                   /* the view's first load */
};

/* ------------------------------------------------------------ parsing */

static int has_prefix(const char *s, size_t len, const char *p)
{
	size_t n = strlen(p);
	return len >= n && !memcmp(s, p, n);
}

/* A path from a header line's rest: drops "a/" or "b/" and git's
 * trailing tab. */
static char *path_of(const char *s, size_t len)
{
	if (len && s[len - 1] == '\t')
		len--;
	if (len >= 2 && (s[0] == 'a' || s[0] == 'b') && s[1] == '/') {
		s += 2;
		len -= 2;
	}
	return xstrndup(s, len);
}

/* The path of "diff --git a/P b/P" when both sides are equal (the rest is
 * then unambiguous even with blanks in P); else everything after it. */
static char *path_of_git_line(const char *s, size_t len)
{
	s += strlen("diff --git ");
	len -= strlen("diff --git ");
	if (len >= 5 && len % 2 == 1) {
		size_t k = len / 2;
		if (s[k] == ' ' && has_prefix(s, len, "a/") && has_prefix(s + k + 1, len - k - 1, "b/") &&
		    !memcmp(s + 2, s + k + 3, k - 2))
			return xstrndup(s + 2, k - 2);
	}
	return xstrndup(s, len);
}

struct parsed {
	struct dline *lines;
	int nlines;
	struct dfile *files;
	int nfiles;
};

static void parsed_free(struct parsed *p)
{
	for (int i = 0; i < p->nfiles; i++) {
		free(p->files[i].old_path);
		free(p->files[i].new_path);
	}
	free(p->files);
	free(p->lines);
	memset(p, 0, sizeof(*p));
}

/* One pass over the patch text: line records, files, and the pairing of
 * a hunk's '-' run with the '+' run after it (line by line). */
static void diff_parse(const char *text, size_t len, struct parsed *out)
{
	size_t cap = 1024, fcap = 16, at = 0;
	int in_hunk = 0, prev = DL_META, del_start = 0, del_end = 0, add_start = 0;

	memset(out, 0, sizeof(*out));
	out->lines = xmalloc(cap * sizeof(*out->lines));
	out->files = xmalloc(fcap * sizeof(*out->files));
	while (at < len && out->nlines < INT32_MAX - 1) {
		const char *s = text + at;
		const char *nl = memchr(s, '\n', len - at);
		size_t n = nl ? (size_t)(nl - s) : len - at;
		int i = out->nlines, kind = DL_META;

		if (has_prefix(s, n, "diff --git ")) {
			kind = DL_FILE;
			in_hunk = 0;
			if (out->nfiles == (int)fcap) {
				fcap *= 2;
				out->files = xrealloc(out->files, fcap * sizeof(*out->files));
			}
			struct dfile *f = &out->files[out->nfiles++];
			f->line = i;
			f->new_path = path_of_git_line(s, n);
			f->old_path = xstrdup(f->new_path);
		} else if (has_prefix(s, n, "@@")) {
			kind = DL_HUNK;
			in_hunk = 1;
		} else if (in_hunk && n && (*s == ' ' || *s == '+' || *s == '-')) {
			kind = *s == ' ' ? DL_CTX : *s == '+' ? DL_ADD : DL_DEL;
		} else if (!in_hunk && out->nfiles) {
			/* The extended header names the paths. */
			struct dfile *f = &out->files[out->nfiles - 1];
			char **slot = NULL;
			size_t skip = 0;
			if (has_prefix(s, n, "--- ") && !has_prefix(s, n, "--- /dev/null"))
				slot = &f->old_path, skip = 4;
			else if (has_prefix(s, n, "+++ ") && !has_prefix(s, n, "+++ /dev/null"))
				slot = &f->new_path, skip = 4;
			if (slot) {
				free(*slot);
				*slot = path_of(s + skip, n - skip);
			} else if (has_prefix(s, n, "rename from ")) {
				free(f->old_path);
				f->old_path = xstrndup(s + 12, n - 12);
			} else if (has_prefix(s, n, "rename to ")) {
				free(f->new_path);
				f->new_path = xstrndup(s + 10, n - 10);
			}
		}

		if (out->nlines == (int)cap) {
			cap *= 2;
			out->lines = xrealloc(out->lines, cap * sizeof(*out->lines));
		}
		struct dline *l = &out->lines[i];
		l->off = at;
		l->len = n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
		l->kind = (uint8_t)kind;
		l->partner = -1;
		out->nlines++;

		if (kind == DL_DEL) {
			if (prev != DL_DEL)
				del_start = i;
			del_end = i + 1;
		} else if (kind == DL_ADD) {
			if (prev == DL_DEL)
				add_start = i;
			else if (prev != DL_ADD)
				add_start = del_start = del_end = i;
			int j = del_start + (i - add_start);
			if (j < del_end && out->lines[j].kind == DL_DEL) {
				l->partner = j;
				out->lines[j].partner = i;
			}
		}
		/* "\ No newline at end of file" between the runs keeps them
		 * paired. */
		if (!(kind == DL_META && in_hunk && n && *s == '\\'))
			prev = kind;
		at += n + (nl != NULL);
	}
}

/* The file a line belongs to (-1 before the first). */
static int diff_file_of(const struct diff_priv *p, int line)
{
	int lo = 0, hi = p->nfiles - 1, best = -1;
	while (lo <= hi) {
		int mid = lo + (hi - lo) / 2;
		if (p->files[mid].line <= line) {
			best = mid;
			lo = mid + 1;
		} else {
			hi = mid - 1;
		}
	}
	return best;
}

static const char *dfile_path(const struct dfile *f)
{
	return f->new_path && *f->new_path ? f->new_path : f->old_path;
}

/* ------------------------------------------------------------ loading */

static void diff_words_free(struct diff_priv *p)
{
	if (p->words)
		for (int i = 0; i < p->nlines; i++)
			if (p->words[i] != &wspans_none)
				free((void *)p->words[i]);
	free(p->words);
	p->words = NULL;
}

static void diff_unload(struct diff_priv *p)
{
	diff_words_free(p);
	struct parsed old = { p->lines, p->nlines, p->files, p->nfiles };
	parsed_free(&old);
	p->lines = NULL;
	p->files = NULL;
	p->nlines = p->nfiles = 0;
	free(p->text);
	p->text = NULL;
	p->len = 0;
}

/* Loads the diff of range r (round n for RANGE_ROUND).  On failure the
 * view keeps what it showed and msg says why. */
static void diff_pending_free(struct diff_pending *pd)
{
	if (!pd)
		return;
	free(pd->mirror);
	free(pd->from);
	free(pd->to);
	free(pd->head);
	free(pd->reviewed);
	free(pd->keep_path);
	free(pd);
}

/* In the child: the file list (a diffstat, one line per file in the
 * patch's order: Enter on one jumps to it), then the patch. */
static int diff_produce(struct dash *d, void *arg, FILE *out)
{
	(void)d;
	struct view *v = arg;
	struct diff_priv *p = v->priv;
	struct diff_pending *pd = p->pending;
	struct buf stat = {0};
	struct err e = {{0}};
	int rc = diff_stat(pd->mirror, pd->from, pd->to, &stat, &e);
	if (rc == 0) {
		fwrite(stat.data ? stat.data : "", 1, stat.len, out);
		fputc('\n', out);
		rc = diff_write(pd->mirror, pd->from, pd->to, out, &e);
	}
	buf_free(&stat);
	if (rc < 0)
		fprintf(out, "%s", e.msg);
	return rc;
}

static void diff_arrived(struct dash *d, void *arg, const char *data, size_t len, int ok);

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

	if (store_task_get(d->st, v->task_id, &t, &e) < 0) {
		snprintf(msg, msglen, "%s", e.msg);
		return -1;
	}
	if (r == RANGE_ROUND) {
		if (n < 1 || n > t.round) {
			snprintf(msg, msglen, _("round %d: task %s has rounds 1 to %d"), n, t.id, t.round);
			goto out;
		}
		if (store_rounds(d->st, t.id, &rounds, &nrounds, &e) < 0) {
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
		         t.id, task_status_name(t.status));
		goto out;
	}

	/* The diff itself is made off the loop: a large one must not stop
	 * the screen.  diff_arrived installs it. */
	struct diff_pending *pd = xcalloc(1, sizeof *pd);
	pd->mirror = mirror_path(d->data_dir, t.repo);
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
	pd->keep_path = fi >= 0 ? xstrdup(dfile_path(&p->files[fi])) : NULL;
	pd->keep_within = fi >= 0 ? v->sel - p->files[fi].line : 0;
	pd->keep_onscreen = v->sel - v->top;
	dash_forget(v->d, v);
	dash_async(v->d, diff_produce, diff_arrived, v);
	return 0;
}

/* The diff made off the loop arrives: parse it and show it, keeping the
 * selection on the same file where it is still there. */
static void diff_arrived(struct dash *d, void *arg, const char *data, size_t len, int ok)
{
	struct view *v = arg;
	struct diff_priv *p = v->priv;
	struct diff_pending *pd = p->pending;
	p->pending = NULL;
	p->loading = 0;
	if (!pd)
		return;
	if (!ok) {
		dash_message(d, ROLE_ERROR, "%.*s", (int)(len > 400 ? 400 : len),
		             len ? data : _("cannot make the diff"));
		diff_pending_free(pd);
		return;
	}
	char *mem = xmalloc(len + 1);
	memcpy(mem, data, len);
	mem[len] = '\0';
	struct parsed ps;
	diff_parse(mem, len, &ps);
	diff_unload(p);
	p->text = mem;
	p->len = len;
	p->lines = ps.lines;
	p->nlines = ps.nlines;
	p->files = ps.files;
	p->nfiles = ps.nfiles;
	p->range = pd->range;
	p->round = pd->round;
	p->task_round = pd->task_round;
	free(p->head);
	free(p->reviewed);
	p->head = pd->head;
	p->reviewed = pd->reviewed;
	pd->head = pd->reviewed = NULL;
	v->lines = p->nlines;
	int sel = 0;
	for (int i = 0; pd->keep_path && i < p->nfiles; i++)
		if (!strcmp(dfile_path(&p->files[i]), pd->keep_path)) {
			int end = i + 1 < p->nfiles ? p->files[i + 1].line : p->nlines;
			sel = p->files[i].line + pd->keep_within;
			if (sel >= end)
				sel = end - 1;
			break;
		}
	v->sel = p->nlines ? sel : -1;
	v->top = v->sel - (pd->keep_onscreen > 0 ? pd->keep_onscreen : 0);
	if (v->top < 0)
		v->top = 0;
	view_clamp(v);
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
	default: return ROLE_DIFF_META;
	}
}

/* The word spans of line i (computed with its partner on first use). */
static const struct wspans *diff_words(struct diff_priv *p, int i)
{
	if (!p->words)
		p->words = xcalloc((size_t)p->nlines, sizeof(*p->words));
	if (p->words[i])
		return p->words[i];
	const struct dline *l = &p->lines[i];
	if (l->partner < 0) {
		p->words[i] = &wspans_none;
		return p->words[i];
	}
	int di = l->kind == DL_DEL ? i : l->partner, ai = l->kind == DL_DEL ? l->partner : i;
	const struct dline *dl = &p->lines[di], *al = &p->lines[ai];
	struct worddiff w;
	if (!worddiff_lines(p->text + dl->off + 1, dl->len - 1, p->text + al->off + 1, al->len - 1,
	                    &w)) {
		p->words[di] = p->words[ai] = &wspans_none;
		return p->words[i];
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
	p->words[di] = ds;
	p->words[ai] = as;
	return p->words[i];
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

static void diff_draw_line(struct view *v, struct screen *s, int y, int w, int i)
{
	struct diff_priv *p = v->priv;
	const struct dline *l = &p->lines[i];
	const char *text = p->text + l->off;
	size_t n = l->len;
	enum role base = dl_role(l->kind);

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
	if (l->kind == DL_ADD || l->kind == DL_DEL) {
		const struct wspans *ws = diff_words(p, i);
		for (size_t k = 0; k < ws->n; k++)
			mark_roles(roles, n, ws->sp[k].off, ws->sp[k].len,
			           l->kind == DL_ADD ? ROLE_DIFF_ADD_WORD : ROLE_DIFF_DEL_WORD);
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
	int body = l->kind == DL_CTX || l->kind == DL_ADD || l->kind == DL_DEL;
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
	if (x < w && base != ROLE_NORMAL)
		screen_fill(s, x, y, w - x, base);
}

static void diff_draw(struct view *v, struct screen *s, int y, int h)
{
	struct diff_priv *p = v->priv;
	int w = screen_width(s);

	v->height = h;
	if (!p->nlines) {
		screen_str(s, 0, y, w, ROLE_DIM, p->loading ? _("loading the diff...") :
		           _("(no changes)"));
		return;
	}
	view_clamp(v);
	for (int r = 0; r < h; r++) {
		int i = v->top + r;
		if (i >= p->nlines)
			break;
		diff_draw_line(v, s, y + r, w, i);
		if (i == v->sel)
			screen_paint(s, 0, y + r, w, ROLE_CURSOR);
	}
}

static void diff_title(struct view *v, char *out, size_t len)
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
	if (!p->nfiles && p->loading)
		snprintf(out, len, _("diff %s %s: loading..."), v->task_id, range);
	else if (!p->nfiles)
		snprintf(out, len, _("diff %s %s: no changes"), v->task_id, range);
	else {
		/* The path as the diff shows it: every byte visible. */
		const char *path = dfile_path(&p->files[fi < 0 ? 0 : fi]);
		struct buf vp = {0};
		sanitize_visible(path, strlen(path), 0, &vp, NULL);
		snprintf(out, len, _("diff %s %s: file %d/%d %s"), v->task_id, range,
		         fi < 0 ? 1 : fi + 1, p->nfiles, vp.data);
		buf_free(&vp);
	}
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
		for (int k = 0; k < p->nfiles; k++)
			if (p->files[k].line > sel) {
				diff_jump(v, p->files[k].line);
				return;
			}
		dash_message(v->d, ROLE_NOTICE, "%s", _("this is the last file"));
	} else {
		for (int k = p->nfiles; k-- > 0;)
			if (p->files[k].line < sel) {
				diff_jump(v, p->files[k].line);
				return;
			}
		dash_message(v->d, ROLE_NOTICE, "%s", _("this is the first file"));
	}
}

static void diff_jump_hunk(struct view *v, int dir)
{
	struct diff_priv *p = v->priv;
	int sel = v->sel < 0 ? 0 : v->sel;

	for (int i = sel + dir; i >= 0 && i < p->nlines; i += dir)
		if (p->lines[i].kind == DL_HUNK) {
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

/* Moves to the next line matching the search (dir 1 or -1), wrapping
 * around once. */
static void diff_find(struct view *v, int dir)
{
	struct diff_priv *p = v->priv;
	int n = p->nlines, start = v->sel < 0 ? (dir > 0 ? -1 : 0) : v->sel;

	if (!p->re) {
		dash_message(v->d, ROLE_NOTICE, "%s", _("nothing to find yet: search with / or ?"));
		return;
	}
	for (int k = 1; k <= n; k++) {
		int i = ((start + dir * k) % n + n) % n;
		const struct dline *l = &p->lines[i];
		if (pcre2_match(p->re, (PCRE2_SPTR)(p->text + l->off), l->len, 0, 0, p->md, NULL) >= 0) {
			int wrapped = dir > 0 ? i <= start : i >= start;
			v->sel = i;
			if (i < v->top || (v->height > 0 && i >= v->top + v->height))
				v->top = i - (v->height > 2 ? v->height / 3 : 0);
			if (v->top < 0)
				v->top = 0;
			view_clamp(v);
			if (wrapped)
				dash_message(v->d, ROLE_NOTICE, "%s",
				             dir > 0 ? _("search hit the bottom, continued at the top")
				                     : _("search hit the top, continued at the bottom"));
			return;
		}
	}
	dash_message(v->d, ROLE_ERROR, "%s", _("no line matches the pattern"));
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

/* A note on a diff line goes back to the agent as a request for changes. */
struct diff_note {
	char id[TASK_ID_LEN + 1];
	int round;
};

static void diff_note_done(struct dash *d, void *arg, const char *text)
{
	struct diff_note *note = arg;
	if (text) {
		struct gate_ctx g = { d->cfg, d->data_dir, d->st, gate_actor() };
		struct err e = {{0}};
		if (gate_request_changes(&g, note->id, text, &e) < 0)
			dash_message(d, ROLE_ERROR, "%s", e.msg);
		else
			dash_message(d, ROLE_NOTICE, _("%s: changes requested; the agent runs round %d "
			                               "when the scheduler picks it up"),
			             note->id, note->round + 1);
	}
	free(note);
}

/* The line number in its file of hunk line i: the new file's for context
 * and '+' lines, the old file's for '-' lines; -1 if there is no hunk
 * header above it. */
static long diff_line_number(const struct diff_priv *p, int i)
{
	int h = i;
	while (h >= 0 && p->lines[h].kind != DL_HUNK) {
		if (p->lines[h].kind == DL_FILE)
			return -1;
		h--;
	}
	if (h < 0)
		return -1;
	/* "@@ -a[,b] +c[,d] @@" */
	const char *s = p->text + p->lines[h].off, *e = s + p->lines[h].len;
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
		int kind = p->lines[k].kind;
		if (kind == DL_CTX || kind == DL_DEL)
			a++;
		if (kind == DL_CTX || kind == DL_ADD)
			c++;
	}
	return p->lines[i].kind == DL_DEL ? a : c;
}

/* The most of a line quoted into a note. */
#define NOTE_QUOTE_MAX 400

static void diff_comment(struct view *v)
{
	struct diff_priv *p = v->priv;
	struct dash *d = v->d;
	int i = v->sel;

	if (i < 0 || i >= p->nlines ||
	    (p->lines[i].kind != DL_CTX && p->lines[i].kind != DL_ADD && p->lines[i].kind != DL_DEL)) {
		dash_message(d, ROLE_NOTICE, "%s",
		             _("select a line of a hunk (context, + or -) to comment on it"));
		return;
	}
	int fi = diff_file_of(p, i);
	long ln = diff_line_number(p, i);
	if (fi < 0 || ln < 0) {
		dash_message(d, ROLE_ERROR, "%s", _("cannot tell which file line this is"));
		return;
	}

	/* Check the gate first: a note written for nothing is lost work. */
	struct task_row t;
	struct err e = {{0}};
	if (store_task_get(d->st, v->task_id, &t, &e) < 0) {
		dash_message(d, ROLE_ERROR, "%s", e.msg);
		return;
	}
	int ok = 0;
	if (t.status != TASK_REVIEW)
		dash_message(d, ROLE_ERROR, _("task %s is %s, not at review: notes go to the agent "
		                              "when its work waits at the gate"),
		             t.id, task_status_name(t.status));
	else if (t.pending)
		dash_message(d, ROLE_ERROR, _("task %s already has changes requested; the agent "
		                              "gets them when the scheduler picks it up"), t.id);
	else
		ok = 1;
	struct diff_note *note = xcalloc(1, sizeof(*note));
	memcpy(note->id, t.id, sizeof(note->id));
	note->round = t.round;
	task_row_free(&t);
	if (!ok) {
		free(note);
		return;
	}

	const struct dline *l = &p->lines[i];
	const char *path = l->kind == DL_DEL ? p->files[fi].old_path : dfile_path(&p->files[fi]);
	/* Quoted as the reviewer sees it: escape sequences and hidden
	 * characters as their marks, none raw in a note. */
	struct buf q = {0}, qp = {0};
	size_t raw = l->len - 1;
	if (raw && p->text[l->off + raw] == '\r')
		raw--;     /* a CRLF file's line */
	size_t qn = raw > NOTE_QUOTE_MAX * 4 ? NOTE_QUOTE_MAX * 4 : raw;
	sanitize_visible(p->text + l->off + 1, qn, SANITIZE_KEEP_TAB, &q, NULL);
	sanitize_visible(path, strlen(path), 0, &qp, NULL);
	path = qp.data;
	qn = q.len;
	int cut = qn > NOTE_QUOTE_MAX || raw > NOTE_QUOTE_MAX * 4;
	if (qn > NOTE_QUOTE_MAX) {
		qn = NOTE_QUOTE_MAX;
		while (qn && ((unsigned char)q.data[qn] & 0xc0) == 0x80)
			qn--;
	}
	char *initial = xasprintf("%s:%ld: %.*s%s\n\n", path, ln, (int)qn, q.data ? q.data : "",
	                          cut ? "..." : "");
	buf_free(&q);
	buf_free(&qp);
	dash_ask(d, _("note for the agent (<C-d> sends it, <Esc> cancels):"), 1, initial,
	         diff_note_done, note);
	free(initial);
}

static int diff_request(struct view *v, enum request req)
{
	struct diff_priv *p = v->priv;
	char msg[ERR_MAX];

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
	case REQ_ENTER:
		/* On the file list: to that file. */
		if (p->nfiles > 0 && v->sel >= 0 && v->sel < p->nfiles &&
		    v->sel < p->files[0].line)
			diff_jump(v, p->files[v->sel].line);
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
	p->pending->first = 1;
	v->top = 0;
	v->sel = -1;
	dash_async(v->d, diff_produce, diff_arrived, v);
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
	if (store_task_get(d->st, v->task_id, &t, &e) < 0)
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
	diff_unload(p);
	free(p->head);
	free(p->reviewed);
	free(p->rowrole);
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
};
