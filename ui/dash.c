#include "autoconfig.h"
#include "dash.h"
#include "dash_int.h"
#include "api.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;
#include "buf.h"
#include "child.h"
#include "clock.h"
#include "demo.h"
#include "editor.h"
#include "fsx.h"
#include "gitlib.h"
#include "lineedit.h"
#include "i18n.h"
#include "paths.h"
#include "reminder.h"
#include "sanitize.h"
#include "shell.h"
#include "term.h"
#include "theme.h"

#define TICK_MS 200
#define SCRIPT_IDLE_TIMEOUT 120.0

void dash_message(struct dash *d, enum role role, const char *fmt, ...)
{
	char raw[sizeof d->message];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(raw, sizeof raw, fmt, ap);
	va_end(ap);
	/* Messages quote what agents wrote (errors, reasons): the status bar
	 * gets one line of them, through the sanitizer (escape sequences and
	 * controls shown as marks). */
	for (char *p = raw; *p; p++)
		if (*p == '\n' || *p == '\t')
			*p = ' ';
	char *clean = sanitize_quote_str(raw);
	snprintf(d->message, sizeof d->message, "%s", clean);
	free(clean);
	d->message_role = role;
	if (!d->message[0])
		return;
	if (d->nnotes && !strcmp(d->notes[d->nnotes - 1].text, d->message)) {
		d->notes[d->nnotes - 1].at = d->now;
		return;
	}
	if (d->nnotes == DASH_NOTES_MAX) {
		free(d->notes[0].text);
		memmove(d->notes, d->notes + 1, (d->nnotes - 1) * sizeof *d->notes);
		d->nnotes--;
	}
	d->notes = xrealloc(d->notes, (d->nnotes + 1) * sizeof *d->notes);
	d->notes[d->nnotes++] = (struct dash_note){ .at = d->now ? d->now : clock_wall(),
	                                            .role = role, .text = xstrdup(d->message) };
}

/* Text as base64, for OSC 52. */
static char *base64(const char *s, size_t n)
{
	static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char *out = xmalloc((n + 2) / 3 * 4 + 1), *o = out;
	const unsigned char *u = (const unsigned char *)s;
	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned)u[i] << 16 | (i + 1 < n ? (unsigned)u[i + 1] << 8 : 0) |
		             (i + 2 < n ? u[i + 2] : 0);
		*o++ = tab[v >> 18 & 63];
		*o++ = tab[v >> 12 & 63];
		*o++ = i + 1 < n ? tab[v >> 6 & 63] : '=';
		*o++ = i + 2 < n ? tab[v & 63] : '=';
	}
	*o = '\0';
	return out;
}

void dash_copy(struct dash *d, const char *what, const char *text)
{
	size_t n = strlen(text);
	/* What an agent wrote is copied as the reviewer saw it: no escape
	 * sequence goes to the clipboard raw (pasted into a shell, it would
	 * run). */
	struct buf clean = {0};
	sanitize_visible(text, n, SANITIZE_KEEP_TAB, &clean, NULL);
	const char *t = clean.data ? clean.data : "";
	int sent = 0;
	if (!d->script) {
		char *b = base64(t, clean.len);
		sent = term_clipboard(b) == 0;
		free(b);
	} else {
		/* Script mode: the terminal's part goes to a file, for tests. */
		const char *f = getenv("PADDOCK_UI_CLIPBOARD");
		FILE *out = f && *f ? fopen(f, "w") : NULL;
		if (out) {
			fputs(t, out);
			fclose(out);
			sent = 1;
		}
	}
	if (sent)
		dash_message(d, ROLE_NOTICE, _("copied the %s: %s"), what, t);
	else
		dash_message(d, ROLE_NOTICE, _("the %s (copy it from here): %s"), what, t);
	buf_free(&clean);
}

struct copy_menu {
	char id[TASK_ID_LEN + 1];
	char *line;
};

static void copy_answer(struct dash *d, void *arg, const char *text)
{
	struct copy_menu *m = arg;
	struct task_row t;
	struct err e = {{0}};
	if (!text) {
		/* cancelled */
	} else if (*text == 'i' || (!*text && !m->line)) {
		dash_copy(d, _("task id"), m->id);
	} else if (*text == 'b') {
		if (source_task_get(d->src, m->id, &t, &e) < 0) {
			dash_message(d, ROLE_ERROR, "%s", e.msg);
		} else {
			dash_copy(d, _("branch"), t.branch ? t.branch : "");
			task_row_free(&t);
		}
	} else if ((*text == 'l' || !*text) && m->line) {
		dash_copy(d, _("line"), m->line);
	} else {
		dash_message(d, ROLE_ERROR, _("nothing copied: answer i (id), b (branch)%s"),
		             m->line ? _(" or l (line)") : "");
	}
	free(m->line);
	free(m);
}

void dash_copy_menu(struct dash *d, const char *task_id, const char *line)
{
	if (!task_id || !*task_id) {
		dash_message(d, ROLE_ERROR, _("select a task first"));
		return;
	}
	struct copy_menu *m = xcalloc(1, sizeof *m);
	snprintf(m->id, sizeof m->id, "%s", task_id);
	m->line = line ? xstrdup(line) : NULL;
	dash_ask(d, line ? _("copy [i]d, [b]ranch or the [l]ine (Enter: the line)? ") :
	         _("copy [i]d or [b]ranch (Enter: the id)? "), 0, NULL, copy_answer, m);
}

int dash_pager(struct dash *d, const char *path)
{
	const char *pager = getenv("PAGER");
	if (!pager || !*pager)
		pager = "less -R";
	char *cmd = xasprintf("%s \"$1\"", pager);
	const char *argv[] = { "/bin/sh", "-c", cmd, "sh", path, NULL };
	/* Script mode has no terminal to give: the pager's output goes
	 * nowhere. */
	struct child ch = { .argv = argv, .flags = CHILD_TERMINAL };
	if (d->script)
		ch.stdio[0] = ch.stdio[1] = CHILD_NULL;
	if (!d->script)
		term_suspend();
	struct err e = {{0}};
	int ws = child_start(&ch, &e) < 0 ? -1 : child_finish(&ch);
	if (!d->script)
		term_resume();
	free(cmd);
	if (ws == -1) {
		dash_message(d, ROLE_ERROR, _("cannot run the pager (%s): %s"), pager, e.msg);
		return -1;
	}
	if (!WIFEXITED(ws) || WEXITSTATUS(ws) != 0) {
		dash_message(d, ROLE_ERROR, _("the pager (%s) failed; set PAGER to one that works"),
		             pager);
		return -1;
	}
	return 0;
}

struct view *dash_top(struct dash *d)
{
	return d->nviews ? d->stack[d->nviews - 1] : NULL;
}

int dash_open(struct dash *d, const struct view_ops *ops, const char *task_id)
{
	if (d->nviews == (int)(sizeof d->stack / sizeof d->stack[0]))
		dash_close_top(d);
	struct view *v = xcalloc(1, sizeof *v);
	v->ops = ops;
	v->d = d;
	v->priv = ops->priv_size ? xcalloc(1, ops->priv_size) : NULL;
	v->sel = 0;
	if (task_id)
		snprintf(v->task_id, sizeof v->task_id, "%s", task_id);
	char msg[512] = "";
	if (ops->open && ops->open(v, msg, sizeof msg) < 0) {
		dash_message(d, ROLE_ERROR, "%s", msg);
		if (ops->close)
			ops->close(v);
		free(v->priv);
		free(v);
		return -1;
	}
	d->stack[d->nviews++] = v;
	return 0;
}

static void view_free(struct view *v)
{
	if (v->ops->close)
		v->ops->close(v);
	free(v->priv);
	free(v);
}

void dash_close_top(struct dash *d)
{
	if (d->nviews <= 1)
		return;
	view_free(d->stack[--d->nviews]);
}

static void input_free(struct dash_input *in)
{
	lineedit_free(&in->ed);
	free(in->prompt);
	for (size_t i = 0; i < in->nwords; i++)
		free(in->words[i]);
	free(in->words);
	free(in);
}

void dash_ask(struct dash *d, const char *prompt, int multiline, const char *initial,
              void (*done)(struct dash *d, void *arg, const char *text), void *arg)
{
	if (d->input)
		input_free(d->input);
	struct dash_input *in = xcalloc(1, sizeof *in);
	in->prompt = xstrdup(prompt);
	lineedit_init(&in->ed, initial, multiline);
	in->done = done;
	in->arg = arg;
	d->input = in;
}

void dash_ask_live(struct dash *d, const char *prompt, const char *initial,
                   void (*changed)(struct dash *d, void *arg, const char *text),
                   void (*done)(struct dash *d, void *arg, const char *text), void *arg)
{
	dash_ask(d, prompt, 0, initial, done, arg);
	d->input->changed = changed;
}

void dash_ask_complete(struct dash *d, const char *const *words, size_t n)
{
	struct dash_input *in = d->input;
	if (!in)
		return;
	in->words = xrealloc(in->words, (in->nwords + n) * sizeof *in->words);
	for (size_t i = 0; i < n; i++)
		in->words[in->nwords++] = xstrdup(words[i]);
}

void dash_ask_again(struct dash *d, enum role role, const char *fmt, ...)
{
	char msg[sizeof d->message];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	dash_message(d, role, "%s", msg);
	/* input_finish sees it once done returns; an answer that asked
	 * something else (d->input set again) is not kept. */
	d->ask_again = 1;
}

static void input_finish(struct dash *d, int ok)
{
	struct dash_input *in = d->input;
	d->input = NULL;
	d->ask_again = 0;
	if (in->done)
		in->done(d, in->arg, ok ? lineedit_text(&in->ed) : NULL);
	if (ok && d->ask_again && !d->input) {
		/* The same question, what was typed and where the cursor was. */
		d->input = in;
		d->ask_again = 0;
		return;
	}
	d->ask_again = 0;
	input_free(in);
}

/* ---- background jobs ---- */

/* The most arguments a job kind takes (job_start's argv). */
#define JOB_ARGS_MAX 5

/* What a job runs: a background action (a message back, '0' or '1'
 * first) or an async producer (its output back), by name; nargs is
 * JOB_ARGS_MAX at most. */
struct job_kind {
	const char *name;
	size_t nargs;
	int (*action)(struct dash *d, char *const *args, char *msg, size_t msglen);
	int (*produce)(struct dash *d, char *const *args, FILE *out);
};

static int shell_job(struct dash *d, char *const *args, char *msg, size_t msglen);

static const struct job_kind job_kinds[] = {
	{ "gate", 2, gate_view_job, NULL },
	{ "pick", 2, group_view_pick_job, NULL },
	{ "shell", 2, shell_job, NULL },
	{ "diff", 5, NULL, diff_view_produce },
};

static const struct job_kind *job_kind_find(const char *name)
{
	for (size_t i = 0; i < sizeof job_kinds / sizeof *job_kinds; i++)
		if (!strcmp(job_kinds[i].name, name))
			return &job_kinds[i];
	return NULL;
}

/* What job_start starts: kind with its arguments, on the terminal or not. */
struct job_run {
	const char *kind;
	const char *const *args;
	int term;        /* it takes the terminal (CHILD_TERMINAL) */
};

/* Starts a job, `paddock dashboard-job KIND ...` (dash_job_main): a
 * program, never a copy of the dashboard, which may have threads (the
 * HTTP API's, the hosted scheduler's: child.h).  Waited for by job_read,
 * never by a hosted scheduler; NULL with e set when it cannot start. */
static struct job *job_start(struct ui *u, const struct job_run *r, struct err *e)
{
	struct dash *d = &u->d;
	const struct job_kind *k = job_kind_find(r->kind);
	if (u->njobs == (int)(sizeof u->jobs / sizeof u->jobs[0])) {
		err_set(e, _("too much is running in the background; try again in a moment"));
		return NULL;
	}
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0) {
		err_errno(e, _("cannot make a pipe"));
		return NULL;
	}
	int cfd = config_pass_fd(d->cfg, e);
	if (cfd < 0 && d->cfg->source) {
		close(p[0]);
		close(p[1]);
		return NULL;
	}
	char out_s[16], cfd_s[16];
	snprintf(out_s, sizeof out_s, "%d", p[1]);
	snprintf(cfd_s, sizeof cfd_s, "%d", cfd);
	/* Twelve of its own, the kind's arguments and the NULL. */
	const char *argv[12 + JOB_ARGS_MAX + 1];
	size_t n = 0;
	argv[n++] = "paddock";
	argv[n++] = "dashboard-job";
	argv[n++] = r->kind;
	argv[n++] = "--data-dir";
	argv[n++] = d->data_dir;
	argv[n++] = "--config";
	argv[n++] = d->cfg->path;
	if (cfd >= 0) {
		argv[n++] = "--config-fd";
		argv[n++] = cfd_s;
	}
	argv[n++] = "--out-fd";
	argv[n++] = out_s;
	argv[n++] = "--";
	if (k && k->nargs > JOB_ARGS_MAX)
		abort();   /* a bug in job_kinds */
	for (size_t i = 0; k && i < k->nargs; i++)
		argv[n++] = r->args[i];
	argv[n] = NULL;
	int keep[] = { p[1], cfd };
	struct job *j = &u->jobs[u->njobs];
	memset(j, 0, sizeof *j);
	j->ch = (struct child){ .path = CHILD_SELF, .argv = argv, .keep = keep,
	                        .nkeep = cfd >= 0 ? 2 : 1,
	                        .flags = CHILD_CLOSE_FDS | (r->term ? CHILD_TERMINAL : 0) };
	int rc = child_start(&j->ch, e);
	j->ch.argv = NULL;
	j->ch.keep = NULL;
	close(p[1]);
	if (cfd >= 0)
		close(cfd);
	if (rc < 0) {
		close(p[0]);
		return NULL;
	}
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	j->fd = p[0];
	u->njobs++;
	return j;
}

/* ---- in `paddock dashboard-job` ---- */

int dash_job_main(int argc, char **argv)
{
	/* dashboard-job KIND --data-dir D --config P [--config-fd N]
	 * --out-fd W -- ARG... (job_start's, nothing else) */
	const struct job_kind *k = argc > 1 ? job_kind_find(argv[1]) : NULL;
	const char *data = NULL, *path = NULL;
	int cfd = -1, wfd = -1, i;
	for (i = 2; k && i + 1 < argc && strcmp(argv[i], "--"); i += 2) {
		char *end;
		long v = strtol(argv[i + 1], &end, 10);
		int num = *argv[i + 1] && !*end && v >= 3 && v < 1 << 20;
		if (!strcmp(argv[i], "--data-dir"))
			data = argv[i + 1];
		else if (!strcmp(argv[i], "--config"))
			path = argv[i + 1];
		else if (!strcmp(argv[i], "--config-fd") && num)
			cfd = (int)v;
		else if (!strcmp(argv[i], "--out-fd") && num)
			wfd = (int)v;
		else
			break;
	}
	if (!k || !data || !path || wfd < 0 || i >= argc || strcmp(argv[i], "--") ||
	    (size_t)(argc - i - 1) != k->nargs) {
		fprintf(stderr, _("paddock: 'dashboard-job' is for paddock's own use: the dashboard "
		                  "starts it for its background work\n"));
		return 2;
	}
	char *const *args = argv + i + 1;
	struct config cfg;
	struct err e = {{0}};
	int loaded = config_load_fd(&cfg, path, cfd, &e);
	struct dash d = { .cfg = &cfg, .data_dir = (char *)data };
	int rc = 1;
	if (loaded < 0) {
		char out[1100];
		int n = snprintf(out, sizeof out, "1%s", e.msg);
		(void)fsx_write_all(wfd, out, (size_t)n);
	} else if (k->action) {
		demo_config_add(data, &cfg);
		gitlib_init();
		char msg[1024] = "";
		int ok = k->action(&d, args, msg, sizeof msg);
		char out[1100];
		int n = snprintf(out, sizeof out, "%c%s", ok == 0 ? '0' : '1', msg);
		(void)fsx_write_all(wfd, out, (size_t)n);
		rc = 0;
	} else {
		demo_config_add(data, &cfg);
		gitlib_init();
		FILE *out = fdopen(wfd, "w");
		rc = out ? k->produce(&d, args, out) : -1;
		if (out && fclose(out) != 0)
			rc = -1;
		rc = rc == 0 ? 0 : 1;
	}
	config_free(&cfg);
	return rc;
}

void dash_background(struct dash *d, const char *what, const char *kind,
                     const char *const *args)
{
	struct job_run r = { .kind = kind, .args = args };
	struct err e = {{0}};
	struct job *j = job_start(ui_of(d), &r, &e);
	if (!j) {
		dash_message(d, ROLE_ERROR, _("cannot start %s: %s"), what, e.msg);
		return;
	}
	j->what = xstrdup(what);
	dash_message(d, ROLE_NOTICE, _("%s..."), what);
}

/* In the job (args: the task's id, "script" or "terminal"): the
 * session, on the terminal the dashboard gave up (in script mode, none:
 * standard input is /dev/null). */
static int shell_job(struct dash *d, char *const *args, char *msg, size_t msglen)
{
	const char *id = args[0];
	if (!strcmp(args[1], "script")) {
		int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			dup2(fd, STDIN_FILENO);
			close(fd);
		}
	}
	struct err e = {{0}};
	int rc = shell_run(d->data_dir, id, 0, NULL, &e);
	if (rc < 0) {
		snprintf(msg, msglen, "%s", e.msg);
		return -1;
	}
	snprintf(msg, msglen, _("the shell in task %s ended (exit status %d); what it changed "
	                        "was put back"), id, rc);
	return 0;
}

/* Refuses at once what shell_run would refuse, naming the keys that help
 * where its messages name commands; shell_run checks again.  1 when
 * refused (said in the status bar). */
static int shell_refused(struct dash *d, const char *id)
{
	struct task_row t;
	struct err e = {{0}};
	if (source_task_get(d->src, id, &t, &e) < 0) {
		dash_message(d, ROLE_ERROR, "%s", e.msg);
		return 1;
	}
	char k[64];
	int no = 1;
	if (t.status == TASK_REVIEW && !t.pending && !t.sandbox_kept) {
		keymap_first_key(d->keys, REQ_REQUEST_CHANGES, k, sizeof k);
		dash_message(d, ROLE_ERROR, _("cannot open a shell in task %s: its sandbox is no "
		                              "longer kept (paddock.gate-timeout passed, or paddock "
		                              "was restarted); %s in its gate sends notes for a round "
		                              "in a new sandbox, which is kept at review again"),
		             t.id, k);
	} else if (task_status_is_active(t.status) || t.status == TASK_QUEUED) {
		keymap_first_key(d->keys, REQ_VIEW_LOG, k, sizeof k);
		dash_message(d, ROLE_ERROR, _("cannot open a shell in task %s: it is %s; a shell "
		                              "opens in the sandbox a task keeps at review: wait "
		                              "until it gets there (%s shows its log)"), t.id,
		             task_status_label(t.status), k);
	} else if (task_status_is_terminal(t.status)) {
		keymap_first_key(d->keys, REQ_VIEW_DIFF, k, sizeof k);
		dash_message(d, ROLE_ERROR, _("cannot open a shell in task %s: it is %s, and its "
		                              "sandbox went with it; %s shows its work"), t.id,
		             task_status_label(t.status), k);
	} else {
		no = 0;                /* at review: shell_run's own answer */
	}
	task_row_free(&t);
	return no;
}

void dash_shell(struct dash *d, const char *task_id)
{
	struct ui *u = ui_of(d);
	/* The task's own reason first, the same on both sources (it holds
	 * on the server's machine too, and names the dashboard's keys). */
	if (shell_refused(d, task_id))
		return;
	if (!u->st) {
		/* The sandbox is on the server's machine. */
		dash_message(d, ROLE_ERROR, _("cannot open a shell in task %s from the dashboard of "
		                              "a server: run 'paddock shell %s' on the server's "
		                              "machine"), task_id, task_id);
		return;
	}
	if (!d->script)
		term_suspend();
	const char *args[] = { task_id, d->script ? "script" : "terminal" };
	struct job_run r = { .kind = "shell", .args = args, .term = 1 };
	struct err e = {{0}};
	struct job *j = job_start(u, &r, &e);
	if (!j) {
		if (!d->script)
			term_resume();
		dash_message(d, ROLE_ERROR, _("cannot start the shell: %s"), e.msg);
		return;
	}
	j->what = xstrdup(_("the shell"));
	j->gives_term = 1;
	u->term_away = 1;
}

void dash_stream(struct dash *d, const char *kind, const char *const *args,
                 void (*chunk)(struct dash *d, void *arg, const char *data, size_t len),
                 void (*done)(struct dash *d, void *arg, const char *data, size_t len, int ok),
                 void *arg)
{
	struct job_run r = { .kind = kind, .args = args };
	struct err e = {{0}};
	struct job *j = job_start(ui_of(d), &r, &e);
	if (!j) {
		done(d, arg, e.msg, strlen(e.msg), 0);
		return;
	}
	j->what = xstrdup("");
	j->done = done;
	j->chunk = chunk;
	j->arg = arg;
}

void dash_forget(struct dash *d, void *arg)
{
	struct ui *u = ui_of(d);
	for (int i = 0; i < u->njobs; i++)
		if (u->jobs[i].done && u->jobs[i].arg == arg)
			u->jobs[i].forgotten = 1;
}

static void job_read(struct ui *u, int i)
{
	struct job *j = &u->jobs[i];
	char tmp[65536];
	ssize_t n;
	while ((n = read(j->fd, tmp, sizeof tmp)) > 0) {
		if (!j->chunk) {
			buf_add(&j->out, tmp, (size_t)n);
			continue;
		}
		if (!j->forgotten)
			j->chunk(&u->d, j->arg, tmp, (size_t)n);
		/* Back to the loop, which draws what arrived: a producer
		 * faster than this loop must not hold the screen until it
		 * ends. */
		return;
	}
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	/* The end: the child wrote everything and exited. */
	close(j->fd);
	int ws = child_finish(&j->ch);
	if (j->gives_term) {
		/* The terminal is ours again. */
		u->term_away = 0;
		if (!u->d.script)
			term_resume();
	}
	if (j->done) {
		struct job done = *j;
		u->jobs[i] = u->jobs[--u->njobs];
		if (!done.forgotten)
			done.done(&u->d, done.arg, done.out.data ? done.out.data : "", done.out.len,
			          WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
		buf_free(&done.out);
		free(done.what);
		return;
	}
	if (j->out.len > 0 && j->out.data[0] == '0')
		dash_message(&u->d, ROLE_NOTICE, "%s", j->out.data + 1);
	else if (j->out.len > 1)
		dash_message(&u->d, ROLE_ERROR, "%s", j->out.data + 1);
	else
		dash_message(&u->d, ROLE_ERROR, _("%s failed"), j->what);
	buf_free(&j->out);
	free(j->what);
	u->jobs[i] = u->jobs[--u->njobs];
}

/* ---- counts, notifications ---- */

static void notify_done(pid_t pid, int status, void *owner)
{
	(void)pid, (void)status, (void)owner;
}

static void notify(struct ui *u, const char *event, const char *id)
{
	if (!u->d.script)
		term_bell();
	const char *cmd = u->d.cfg->notify_command;
	if (!cmd || !*cmd)
		return;
	/* The command is the user's own configuration; the task id is ours
	 * (never user text), passed in the environment. */
	/* Its output goes nowhere near the screen; the loop reaps it
	 * (child_reap) whenever it ends. */
	char *ev = xasprintf("PADDOCK_EVENT=%s", event);
	char *tid = xasprintf("PADDOCK_TASK_ID=%s", id);
	size_t n = 0;
	while (environ[n])
		n++;
	const char **env = xcalloc(n + 3, sizeof *env);
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "PADDOCK_EVENT=", 14) != 0 &&
		    strncmp(environ[i], "PADDOCK_TASK_ID=", 16) != 0)
			env[k++] = environ[i];
	env[k++] = ev;
	env[k++] = tid;
	const char *argv[] = { "/bin/sh", "-c", cmd, NULL };
	struct child ch = { .argv = argv, .env = env, .stdio = { CHILD_NULL, CHILD_NULL, CHILD_NULL },
	                    .flags = CHILD_CLOSE_FDS | CHILD_NEW_SESSION, .on_exit = notify_done };
	struct err e = {{0}};
	if (child_start(&ch, &e) < 0)
		dash_message(&u->d, ROLE_ERROR, _("the notify command: %s"), e.msg);
	free(env);
	free(ev);
	free(tid);
}

/* Whether key ("id/round/status", or "id/round/rN" for a gate's reminder
 * N) was notified already; remembers it. */
static int notified_key(struct ui *u, const char *key)
{
	for (size_t i = 0; i < u->nnotified; i++)
		if (!strcmp(u->notified[i], key))
			return 1;
	/* The last 64 events are enough: a task changes its round or status
	 * before it can come back to the same one. */
	if (u->nnotified == sizeof u->notified / sizeof u->notified[0]) {
		memmove(u->notified, u->notified + 1, sizeof u->notified - sizeof u->notified[0]);
		u->nnotified--;
	}
	snprintf(u->notified[u->nnotified++], sizeof u->notified[0], "%s", key);
	return 0;
}

/* Whether (task, round, status) was notified already; remembers it. */
static int notified(struct ui *u, const struct task_row *t)
{
	char key[64];
	snprintf(key, sizeof key, "%s/%d/%d", t->id, t->round, (int)t->status);
	return notified_key(u, key);
}

/* A reminder of a gate nobody looks at (reminder.h): the scheduler sent
 * reminder t->reminders of the gate t waits at; notified once. */
static void notify_reminder(struct ui *u, const struct task_row *t, int silent)
{
	char key[64];
	snprintf(key, sizeof key, "%s/%d/r%d", t->id, t->round, t->reminders);
	if (notified_key(u, key) || silent)
		return;
	notify(u, "gate-reminder", t->id);
	dash_message(&u->d, ROLE_NOTICE, _("task %s still waits at review (round %d): reminder %d"),
	             t->id, t->round ? t->round : 1, t->reminders);
}

/* A gate opened or a task failed since the last look: among the tasks
 * changed in the last seconds (the index on `updated`), each event once. */
static void notify_new(struct ui *u, int silent)
{
	struct task_query q = { .changed_after = u->d.now - 5, .no_steps = 1 };
	struct task_row *rows;
	size_t n;
	struct err e = {{0}};
	if (source_task_query(u->d.src, &q, &rows, &n, &e) < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		const struct task_row *t = &rows[i];
		if (t->status == TASK_REVIEW && t->reminders > 0)
			notify_reminder(u, t, silent);
		if ((t->status != TASK_REVIEW && t->status != TASK_FAILED) || notified(u, t) ||
		    silent)
			continue;
		if (t->status == TASK_REVIEW) {
			notify(u, "review", t->id);
			dash_message(&u->d, ROLE_NOTICE, _("task %s is at review (round %d)"), t->id,
			             t->round ? t->round : 1);
		} else {
			notify(u, "failed", t->id);
			char why[256];
			snprintf(why, sizeof why, "%.*s", (int)strcspn(t->error ? t->error : "", "\n"),
			         t->error ? t->error : "");
			dash_message(&u->d, ROLE_ERROR, _("task %s failed: %s"), t->id,
			             *why ? why : t->reason ? task_reason_label(t->reason) : "?");
		}
	}
	task_rows_free(rows, n);
}

/* The review limit that keeps new tasks queued (reminder.h), for the
 * list's title (source_gates_count: a server's dashboard counts none). */
static void review_hold(struct ui *u)
{
	u->review_hold[0] = '\0';
	if (!reminder_limit_on(u->d.cfg))
		return;
	struct reminder_gates g;
	struct err e = {{0}};
	if (source_gates_count(u->d.src, &g, &e) < 0)
		return;
	struct reminder_hold h;
	if (reminder_hold_of(u->d.cfg, &g, NULL, &h)) {
		snprintf(u->review_hold, sizeof u->review_hold, _("%d/%d at review: new tasks wait"),
		         h.at_review, h.max);
	} else {
		for (size_t i = 0; i < u->d.cfg->nrepos; i++) {
			const char *name = u->d.cfg->repos[i].name;
			if (u->d.cfg->repos[i].max_at_review < 0 ||
			    !reminder_hold_of(u->d.cfg, &g, name, &h))
				continue;
			snprintf(u->review_hold, sizeof u->review_hold,
			         _("repo %s %d/%d at review: its new tasks wait"), name, h.at_review,
			         h.max);
			break;
		}
	}
	reminder_gates_free(&g);
}

static void update_counts(struct ui *u)
{
	/* Nothing is read while the store stays as it was, but for a pause
	 * that ends. */
	uint64_t ver = source_data_version(u->d.src);
	if (u->counts_valid && ver == u->counts_version &&
	    !(u->pause_until && u->d.now >= u->pause_until))
		return;
	size_t c[TASK_NSTATUS];
	struct err e = {{0}};
	if (source_task_counts(u->d.src, c, &e) < 0)
		return;
	u->counts_version = ver;
	int running = 0, review = (int)c[TASK_REVIEW], queued = (int)c[TASK_QUEUED],
	    failed = (int)c[TASK_FAILED];
	for (int st = 0; st < TASK_NSTATUS; st++)
		running += task_status_is_active((enum task_status)st) ? (int)c[st] : 0;
	/* On the first look, what is already at review or failed is only
	 * remembered. */
	notify_new(u, !u->counts_valid);
	u->counts_valid = 1;
	u->known_review = review;
	u->known_failed = failed;
	u->running = running;
	u->review = review;
	u->queued = queued;
	u->failed = failed;
	review_hold(u);
	/* Endpoints that asked to slow down hold tasks back: say until when. */
	struct pause_row *p;
	size_t np;
	u->pauses[0] = '\0';
	u->pause_until = 0;
	if (source_pauses_active(u->d.src, u->d.now, &p, &np, &e) == 0) {
		struct buf b = {0};
		for (size_t i = 0; i < np; i++) {
			if (!u->pause_until || p[i].until < u->pause_until)
				u->pause_until = p[i].until;
			char when[32];
			time_t at = (time_t)p[i].until;
			struct tm tm;
			strftime(when, sizeof when, "%H:%M:%S", localtime_r(&at, &tm));
			buf_adds(&b, i ? "; " : "");
			if (p[i].status)
				buf_printf(&b, _("%s paused until %s (%d)"), p[i].endpoint, when,
				           p[i].status);
			else
				buf_printf(&b, _("%s paused until %s"), p[i].endpoint, when);
		}
		snprintf(u->pauses, sizeof u->pauses, "%s", b.data ? b.data : "");
		buf_free(&b);
		source_pauses_free(p, np);
	}
}

/* ---- drawing ---- */

#define STATUS_ROWS_MAX 8

/* Bytes of text that fit in w columns, cut at a character. */
static size_t fit_bytes(const char *text, int w)
{
	size_t i = 0, n = strlen(text);
	while (i < n) {
		size_t j = i + 1;
		while (j < n && ((unsigned char)text[j] & 0xc0) == 0x80)
			j++;
		if (screen_textwidth(text, j) > w)
			break;
		i = j;
	}
	return i;
}

/* What the left of the status bar says: the message, a pause, or the
 * hint for a new user. */
static const char *status_text(struct ui *u, enum role *role)
{
	struct dash *d = &u->d;
	if (d->message[0]) {
		*role = d->message_role == ROLE_NORMAL ? ROLE_STATUSBAR : d->message_role;
		return d->message;
	}
	if (u->pauses[0]) {
		*role = ROLE_NOTICE;
		return u->pauses;
	}
	*role = ROLE_STATUSBAR;
	return u->help_hint;
}

/* The status bar's rows: a message longer than the room beside the
 * counts goes on over more rows (up to STATUS_ROWS_MAX, then it is cut
 * with a pointer to :messages).  Fills starts[] with where each row's text
 * begins; returns the number of rows. */
static int status_layout(int w, int cw, const char *text, size_t starts[], size_t lens[])
{
	size_t n = strlen(text), at = 0;
	int rows = 0;
	int first = cw < w && w - cw - 2 > 10 ? w - cw - 2 : w;
	if (screen_textwidth(text, n) <= first) {
		starts[0] = 0;
		lens[0] = n;
		return 1;
	}
	while (at < n && rows < STATUS_ROWS_MAX) {
		size_t k = screen_fit(text + at, n - at, w);
		starts[rows] = at;
		lens[rows++] = k;
		at += k;
	}
	if (at < n) {
		lens[rows - 1] = (size_t)-1;  /* cut: the row says so */
	} else if (screen_textwidth(text + starts[rows - 1], lens[rows - 1]) > first) {
		/* The counts need room of their own on the last row. */
		if (rows < STATUS_ROWS_MAX) {
			starts[rows] = n;
			lens[rows++] = 0;
		} else {
			lens[rows - 1] = (size_t)-1;
		}
	}
	return rows;
}

static void draw_status(struct ui *u, int sy, int rows, const char *text, enum role role,
                        const size_t starts[], const size_t lens[], const char *counts)
{
	struct screen *s = u->d.scr;
	int w = screen_width(s);
	int cw = screen_textwidth(counts, strlen(counts));
	for (int r = 0; r < rows; r++) {
		/* The last row leaves room for the counts. */
		int room = r == rows - 1 && cw + 2 < w ? w - cw - 2 : w;
		screen_fill(s, 0, sy + r, w, ROLE_STATUSBAR);
		if (lens[r] == (size_t)-1) {
			const char *more = _(" ... (:messages shows it all)");
			int mw = screen_textwidth(more, strlen(more));
			size_t k = fit_bytes(text + starts[r], room - mw > 0 ? room - mw : 0);
			int used = screen_text(s, 0, sy + r, room, role, text + starts[r], k);
			screen_str(s, used, sy + r, room - used, ROLE_DIM, more);
		} else {
			screen_text(s, 0, sy + r, room, role, text + starts[r], lens[r]);
		}
	}
	if (cw < w)
		screen_str(s, w - cw, sy + rows - 1, cw, ROLE_STATUSBAR, counts);
}

/* The line editor's question: the prompt, and the notes' hint after it,
 * wrapped at words onto as many rows as they take (at most
 * QUESTION_ROWS_MAX, or a third of the screen: then the last row ends in
 * "»"), so that no option of a question is cut, whatever its language. */
#define QUESTION_ROWS_MAX 8

struct question {
	char *text;                /* the prompt, then " " and the hint */
	size_t prompt_len;         /* the prompt's bytes in text */
	size_t start[QUESTION_ROWS_MAX], len[QUESTION_ROWS_MAX];
	int rows;
	int cut;                   /* it went on past the last row */
	int answer_row;            /* a single-line answer: on a row of its own */
};

static void question_free(struct question *q)
{
	free(q->text);
}

static const char *input_hint(void)
{
	return _("(Enter: new line, <C-d>: done, <C-e>: $EDITOR, <Esc>: cancel)");
}

/* Lays the input's question out at width w on a screen h rows high. */
static void question_layout(const struct dash_input *in, int w, int h, struct question *q)
{
	memset(q, 0, sizeof *q);
	const char *prompt = in->confirm ? in->ed.multiline ? _("discard what you wrote? (y/n) ") :
	                     _("discard the text? (y/n) ") : in->prompt;
	q->text = in->ed.multiline && !in->confirm ? xasprintf("%s %s", prompt, input_hint())
	                                           : xstrdup(prompt);
	/* The space before the hint is the prompt's. */
	q->prompt_len = strlen(prompt) + (in->ed.multiline && !in->confirm);
	int max = h / 3 < QUESTION_ROWS_MAX ? h / 3 : QUESTION_ROWS_MAX;
	if (max < 1)
		max = 1;
	size_t n = strlen(q->text), at = 0;
	do {
		size_t k = screen_fit(q->text + at, n - at, w);
		q->start[q->rows] = at;
		q->len[q->rows++] = k;
		at += k;
	} while (at < n && q->rows < max);
	q->cut = at < n;
	if (!in->ed.multiline && !in->confirm) {
		/* The answer goes on after the question, or on a row of its
		 * own where too little of the row is left to type in. */
		int last = screen_textwidth(q->text + q->start[q->rows - 1], q->len[q->rows - 1]);
		int room = w / 4 > 1 ? w / 4 : 1;
		q->answer_row = q->rows > 1 && w - last - 1 < room && q->rows < max;
	}
}

/* The rows the line editor takes under the status bar. */
static int input_rows(const struct dash *d, int w, int h)
{
	if (!d->input)
		return 0;
	struct question q;
	question_layout(d->input, w, h, &q);
	question_free(&q);
	int rows = q.rows + q.answer_row;
	if (!d->input->ed.multiline)
		return rows;
	int lines = 1;
	for (size_t i = 0; i < d->input->ed.text.len; i++)
		lines += d->input->ed.text.data[i] == '\n';
	/* Up to half the screen; one line of them at least. */
	int cap = h / 2 > rows + 1 ? h / 2 : rows + 1;
	return rows + lines < cap ? rows + lines : cap;
}

/* Draws the question on rows y...; returns the column after its end on
 * its last row. */
static int draw_question(struct screen *s, int y, int w, const struct question *q)
{
	int x = 0;
	for (int r = 0; r < q->rows; r++) {
		size_t a = q->start[r], b = a + q->len[r];
		x = 0;
		if (a < q->prompt_len)
			x += screen_text(s, x, y + r, w - x, ROLE_PROMPT, q->text + a,
			                 (b < q->prompt_len ? b : q->prompt_len) - a);
		if (b > q->prompt_len) {
			size_t from = a > q->prompt_len ? a : q->prompt_len;
			x += screen_text(s, x, y + r, w - x, ROLE_DIM, q->text + from, b - from);
		}
	}
	if (q->cut)
		screen_str(s, w - 1, y + q->rows - 1, 1, ROLE_DIM, "\u00bb");
	return x;
}

/* One line of the notes, cut: scrolled sideways so that column col (the
 * cursor, or -1) shows, with the marks of a cut line; returns the
 * cursor's column on screen. */
static int draw_note_line(struct screen *s, int y, int w, const char *p, size_t n, int col)
{
	int left = 0;
	/* Half a screen at a time, as the views scroll sideways; the last
	 * column is the "»" mark's. */
	int step = w / 2 > 1 ? w / 2 : 1;
	while (col >= 0 && col - left > w - 2 && w > 2)
		left += step;
	screen_text_window(s, 0, y, w, 1, ROLE_NORMAL, p, n, left, SCREEN_TEXT_MARKS);
	return col - left;
}

static void draw_input(struct ui *u, int y, int rows)
{
	struct dash *d = &u->d;
	struct screen *s = d->scr;
	int w = screen_width(s);
	struct dash_input *in = d->input;
	const char *text = lineedit_text(&in->ed);
	int line, col;
	lineedit_cursor(&in->ed, &line, &col);
	struct question q;
	question_layout(in, w, screen_height(s), &q);
	int pw = draw_question(s, y, w, &q);
	int qrows = q.rows, answer_row = q.answer_row;
	question_free(&q);
	if (in->confirm && !in->ed.multiline) {
		screen_cursor(s, pw < w ? pw : w - 1, y + qrows - 1);
		return;
	}
	if (!in->ed.multiline) {
		int ay = y + qrows - 1;
		if (answer_row) {
			pw = 0;
			ay++;
		}
		/* Scrolled so that the cursor shows. */
		int room = w - pw - 1 > 1 ? w - pw - 1 : 1;
		const char *shown = text;
		while (col > room && *shown) {
			size_t k = 1;
			while (((unsigned char)shown[k] & 0xc0) == 0x80)
				k++;
			col -= screen_textwidth(shown, k);
			shown += k;
		}
		screen_str(s, pw, ay, w - pw, ROLE_NORMAL, shown);
		screen_cursor(s, pw + col, ay);
		return;
	}
	/* The lines around the cursor's. */
	int shown = rows - qrows, first = line - shown + 1 > 0 ? line - shown + 1 : 0;
	const char *p = text;
	for (int i = 0; i < first && p; i++) {
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	int cx = 0;
	for (int r = 0; r < shown && p; r++) {
		size_t n = strcspn(p, "\n");
		int at = draw_note_line(s, y + qrows + r, w, p, n, first + r == line ? col : -1);
		if (first + r == line)
			cx = at;
		p = p[n] ? p + n + 1 : NULL;
	}
	/* Asked whether to discard them, the notes stay in sight. */
	if (in->confirm)
		screen_cursor(s, pw < w ? pw : w - 1, y + qrows - 1);
	else
		screen_cursor(s, cx, y + qrows + (line - first));
}

void dash_draw(struct ui *u)
{
	struct dash *d = &u->d;
	struct screen *s = d->scr;
	int w = screen_width(s), h = screen_height(s);
	screen_clear(s);
	struct view *v = dash_top(d);
	/* Title line. */
	char title[256] = "paddock";
	if (v && v->ops->title)
		v->ops->title(v, title, sizeof title);
	if (v && v->ops == &view_tasks && u->review_hold[0]) {
		size_t n = strlen(title);
		snprintf(title + n, sizeof title - n, "  %s", u->review_hold);
	}
	screen_fill(s, 0, 0, w, ROLE_TITLE);
	screen_str(s, 0, 0, w, ROLE_TITLE, title);
	/* Whose tasks these are: a server's (its scheduler runs there), or
	 * this machine's, where the marker says when no scheduler runs here. */
	char where[160];
	const char *sched = d->sched ? "" : _("[no scheduler here]");
	if (d->src && d->src->server) {
		const char *host = strstr(d->src->server, "://");
		host = host ? host + 3 : d->src->server;
		size_t n = strcspn(host, "/");
		snprintf(where, sizeof where, _("[on %.*s]"), (int)(n < 100 ? n : 100), host);
		sched = where;
	}
	int sw = screen_textwidth(sched, strlen(sched));
	if (*sched && sw < w / 2)
		screen_str(s, w - sw, 0, sw, ROLE_TITLE, sched);
	/* The status bar, as many rows as its message needs. */
	char counts[160];
	snprintf(counts, sizeof counts, _("%d running  %d at review  %d queued  %d failed"),
	         u->running, u->review, u->queued, u->failed);
	enum role role;
	const char *text = status_text(u, &role);
	size_t starts[STATUS_ROWS_MAX + 1], lens[STATUS_ROWS_MAX + 1];
	int srows = status_layout(w, screen_textwidth(counts, strlen(counts)), text, starts, lens);
	int irows = input_rows(d, w, h);
	if (srows > 1 && srows > h / 3) {
		/* A tiny screen: one row, cut. */
		srows = 1;
		lens[0] = (size_t)-1;
	}
	int sy = h - irows - srows;
	int body_h = sy - 1;
	if (v && body_h > 0) {
		v->height = body_h;
		v->width = w;
		view_clamp(v);
		v->ops->draw(v, s, 1, body_h);
	}
	draw_status(u, sy, srows, text, role, starts, lens, counts);
	if (d->input)
		draw_input(u, sy + srows, irows);
}

void dash_open_task_view(struct dash *d, const struct view_ops *ops)
{
	struct view *v = dash_top(d);
	if (!v || !v->task_id[0]) {
		dash_message(d, ROLE_ERROR, _("select a task first"));
		return;
	}
	char id[TASK_ID_LEN + 1];
	memcpy(id, v->task_id, sizeof id);
	/* Switching between a task's views replaces, not stacks; a group's
	 * member opens over the group. */
	if (!(v->ops->flags & VIEW_STACKS))
		dash_close_top(d);
	dash_open(d, ops, id);
}

static void request_quit(struct ui *u);
static void set_help_hint(struct ui *u);
static struct api *dash_api;  /* the HTTP API, when configured */

int dash_config_take(const struct config *cfg, struct keymap **keys, struct theme **theme,
                     config_report_fn *report, void *rctx)
{
	int n = 0;
	struct keymap *k = keymap_new();
	for (size_t i = 0; i < cfg->nbinds; i++) {
		char msg[512];
		if (keymap_bind(k, cfg->binds[i].name, cfg->binds[i].keys, msg, sizeof msg) < 0) {
			/* The n-th bind.NAME of the file, for its line. */
			int nth = 1;
			for (size_t j = 0; j < i; j++)
				nth += !strcmp(cfg->binds[j].name, cfg->binds[i].name);
			report(rctx, "bind", cfg->binds[i].name, nth, msg);
			n++;
		}
	}
	char msg[512] = "";
	struct theme *t = theme_load(cfg->ui_theme ? cfg->ui_theme : "dark", msg, sizeof msg);
	if (!t) {
		char *m = xasprintf("ui.theme: %s", msg);
		report(rctx, "ui", "theme", 1, m);
		free(m);
		n++;
	}
	if (keys && !n)
		*keys = k;
	else
		keymap_free(k);
	if (theme && !n)
		*theme = t;
	else
		theme_free(t);
	return n;
}

void dash_config_check(const struct config *cfg, config_report_fn *report, void *rctx)
{
	dash_config_take(cfg, NULL, NULL, report, rctx);
}

/* Before the screen opens: each problem on standard error. */
static void config_report_stderr(void *rctx, const char *section, const char *key, int n,
                                 const char *msg)
{
	(void)rctx, (void)section, (void)key, (void)n;
	fprintf(stderr, "paddock: %s\n", msg);
}

/* On :reload: the first problem in the status bar (the rest are the
 * same mistake, or in `paddock config check`). */
struct reload_report {
	struct dash *d;
	int told;
};

static void config_report_reload(void *rctx, const char *section, const char *key, int n,
                                 const char *msg)
{
	struct reload_report *r = rctx;
	(void)section, (void)key, (void)n;
	if (!r->told++)
		dash_message(r->d, ROLE_ERROR, _("the configuration was not reloaded: %s"), msg);
}

/* ---- :reload and SIGHUP ---- */

/* Reads the configuration file again; on an error the one in use stays.
 * Old configurations stay allocated until the dashboard ends: views,
 * the scheduler's running work and the HTTP API may point into them. */
void dash_reload(struct ui *u)
{
	struct dash *d = &u->d;
	struct config *fresh = xcalloc(1, sizeof *fresh);
	struct err e = {{0}};
	if (config_load(fresh, d->cfg->path, &e) < 0) {
		dash_message(d, ROLE_ERROR, _("the configuration was not reloaded: %s"), e.msg);
		config_free(fresh);   /* the defaults config_load left */
		free(fresh);
		return;
	}
	struct keymap *keys = NULL;
	struct theme *t = NULL;
	struct reload_report rr = { .d = d };
	if (dash_config_take(fresh, &keys, &t, config_report_reload, &rr) > 0) {
		config_free(fresh);
		free(fresh);
		return;
	}
	keymap_free(d->keys);
	d->keys = keys;
	if (strcmp(theme_name(t), theme_name(u->theme))) {
		theme_free(u->theme);
		u->theme = t;
		if (!d->script) {
			theme_reset_pairs();
			term_repaint();
		}
	} else {
		theme_free(t);
	}
	u->configs = xrealloc(u->configs, (u->nconfigs + 1) * sizeof *u->configs);
	u->configs[u->nconfigs++] = fresh;
	d->cfg = fresh;
	d->src->cfg = fresh;
	if (d->sched)
		scheduler_set_config(d->sched, fresh);
	set_help_hint(u);
	dash_message(d, ROLE_NOTICE, _("reloaded %s: repos %zu, agents %zu"), fresh->path,
	             fresh->nrepos, fresh->nagents);
}

static void prompt_done(struct dash *d, void *arg, const char *text)
{
	(void)arg;
	struct ui *u = ui_of(d);
	if (!text || !*text)
		return;
	u->history = xrealloc(u->history, (u->nhistory + 1) * sizeof *u->history);
	u->history[u->nhistory++] = xstrdup(text);
	command_run(&u->d, text);
}

/* ---- quitting ---- */

static void quit_answer(struct dash *d, void *arg, const char *text)
{
	(void)arg;
	struct ui *u = ui_of(d);
	u->quit_asked = 0;
	if (!text)
		return;
	if (text[0] == 's' || text[0] == 'S') {
		/* Nothing is lost: they run again when paddock runs next
		 * (scheduler_close). */
		d->quit = 1;
	} else if (text[0] == 'w' || text[0] == 'W') {
		u->quit_asked = 2;
		dash_message(d, ROLE_NOTICE, _("quitting when the running tasks are done..."));
	}
}

static void request_quit(struct ui *u)
{
	struct dash *d = &u->d;
	if (d->sched && scheduler_busy(d->sched) > 0) {
		char q[256];
		snprintf(q, sizeof q, _("%d task(s) are running here: [w]ait for them, [s]top them "
		                        "(queued to run again next time), or Esc: "),
		         scheduler_busy(d->sched));
		dash_ask(d, q, 0, NULL, quit_answer, NULL);
		return;
	}
	d->quit = 1;
}

/* ---- keys ---- */

/* The notes in $VISUAL or $EDITOR: the text so far goes in, what the
 * editor leaves comes back. */
static void input_external_editor(struct ui *u)
{
	struct dash_input *in = u->d.input;
	struct err e = {{0}};
	char *text = NULL;
	if (!u->d.script)
		term_suspend();
	int rc = editor_edit_with(editor_command_fallback(), lineedit_text(&in->ed), &text, &e);
	if (!u->d.script)
		term_resume();
	if (rc < 0) {
		dash_message(&u->d, ROLE_ERROR, _("%s; the notes are as they were"), e.msg);
		return;
	}
	lineedit_set(&in->ed, text);
	free(text);
}

static void input_history(struct ui *u, int dir)
{
	struct dash_input *in = u->d.input;
	if (!u->nhistory)
		return;
	if (dir < 0 && in->hist > 0)
		in->hist--;
	else if (dir > 0 && in->hist < u->nhistory)
		in->hist++;
	lineedit_set(&in->ed, in->hist < u->nhistory ? u->history[in->hist] : "");
}

/* Esc or <C-c>: a prompt closes; notes that hold text ask first. */
static void input_cancel(struct ui *u)
{
	struct dash_input *in = u->d.input;
	if (in->ed.multiline && strspn(lineedit_text(&in->ed), " \n\t") != in->ed.text.len)
		in->confirm = 1;
	else
		input_finish(&u->d, 0);
}

static void input_key(struct ui *u, int key)
{
	struct dash_input *in = u->d.input;
	int ctrl_x = in->ctrl_x;
	in->ctrl_x = 0;
	if (in->confirm) {
		/* One key answers: y, or the language's own (rpmatch: "j"). */
		char ans[2] = { key > 0 && key < 128 ? (char)key : 'n', 0 };
		in->confirm = 0;
		if (key == 'y' || key == 'Y' || rpmatch(ans) == 1)
			input_finish(&u->d, 0);
		return;
	}
	if (key == KEYC_CTRL + 'x') {
		in->ctrl_x = 1;
	} else if (key == KEYC_CTRL + 'e' && (in->ed.multiline || ctrl_x)) {
		input_external_editor(u);
	} else if (key == KEYC_ESC || key == KEYC_CTRL + 'c') {
		input_cancel(u);
	} else if (key == KEYC_ENTER && !in->ed.multiline) {
		input_finish(&u->d, 1);
	} else if (key == KEYC_CTRL + 'd' && in->ed.multiline) {
		input_finish(&u->d, 1);
	} else if (key == KEYC_BACKSPACE && !in->ed.multiline && !in->ed.text.len) {
		input_finish(&u->d, 0);
	} else if ((key == KEYC_UP || key == KEYC_DOWN) && in->commands) {
		input_history(u, key == KEYC_UP ? -1 : 1);
	} else if (key == KEYC_TAB && (in->commands || in->words)) {
		command_complete(&u->d);
	} else {
		size_t before = in->ed.text.len;
		char *old = in->changed ? xstrdup(lineedit_text(&in->ed)) : NULL;
		if (lineedit_key(&in->ed, key) && in->changed &&
		    (in->ed.text.len != before || strcmp(old, lineedit_text(&in->ed))))
			in->changed(&u->d, in->arg, lineedit_text(&in->ed));
		free(old);
	}
}

static void handle_key(struct ui *u, int key)
{
	struct dash *d = &u->d;
	if (d->input) {
		input_key(u, key);
		return;
	}
	struct view *v = dash_top(d);
	if (key == KEYC_RESIZE)
		return;
	if (key == KEYC_CTRL + 'c') {
		/* As q on the task list: it asks while tasks run here. */
		d->message[0] = '\0';
		request_quit(u);
		return;
	}
	if (key == KEYC_MOUSE && !d->script) {
		int x, y, wheel;
		term_mouse(&x, &y, &wheel);
		if (v && wheel) {
			enum request r = wheel < 0 ? REQ_MOVE_UP : REQ_MOVE_DOWN;
			for (int i = 0; i < 3; i++)
				if (!v->ops->request || !v->ops->request(v, r))
					view_scroll(v, r);
		} else if (v && y >= 1 + v->header_rows && y <= v->height + v->header_rows) {
			v->sel = v->top + y - 1 - v->header_rows;
			view_clamp(v);
			/* The task list's selection is its task. */
			if (v->ops->flags & VIEW_CLICK_REQUEST)
				v->ops->request(v, REQ_NONE);
		}
		return;
	}
	enum request r = keymap_lookup(d->keys, v ? v->ops->name : NULL, key);
	if (r == REQ_NONE) {
		char name[32];
		keymap_key_name(key, name, sizeof name);
		dash_message(d, ROLE_ERROR, _("%s does nothing here; ? lists the keys"), name);
		return;
	}
	d->message[0] = '\0';
	if (v && v->ops->request && v->ops->request(v, r))
		return;
	switch (r) {
	case REQ_QUIT:
	case REQ_CLEAR_FILTER:         /* the list had no filter to clear */
		if (d->nviews > 1)
			dash_close_top(d);
		else
			request_quit(u);
		break;
	case REQ_HELP:
		dash_open(d, &view_help, NULL);
		break;
	case REQ_PROMPT:
		dash_ask(d, ":", 0, NULL, prompt_done, NULL);
		d->input->commands = 1;
		d->input->hist = u->nhistory;
		break;
	case REQ_VIEW_LOG:
		dash_open_task_view(d, &view_log);
		break;
	case REQ_VIEW_DIFF:
		dash_open_task_view(d, &view_diff);
		break;
	case REQ_VIEW_GATE:
		dash_open_task_view(d, &view_gate);
		break;
	case REQ_NEXT_PANE:
		if (v && v->task_id[0] && v->ops->next_pane)
			dash_open_task_view(d, v->ops->next_pane);
		break;
	case REQ_REFRESH:
		break;
	case REQ_SCROLL_LEFT:
	case REQ_SCROLL_RIGHT:
	case REQ_WRAP:
		if (v && view_sideways(v, r) == 2)
			dash_message(d, ROLE_NOTICE, "%s", _("no line shown goes on to the right"));
		break;
	default:
		if (!v || !view_scroll(v, r))
			dash_message(d, ROLE_ERROR, _("%s does nothing in this view"),
			             keymap_request_name(r));
	}
}

/* ---- script mode ---- */

/* Turns one script line into keys or a command.  Returns 0 at the end. */
static int script_step(struct ui *u)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	while ((n = getline(&line, &cap, u->script)) >= 0) {
		u->script_line++;
		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = '\0';
		char *p = line;
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p || *p == '#')
			continue;
		/* In the line editor ':' is text, but a script may still save
		 * the screen there (to show what the editor holds). */
		if (*p == ':' && (!u->d.input || !strncmp(p, ":save-display ", 14))) {
			command_run(&u->d, p + 1);
		} else if (!strncmp(p, "type ", 5)) {
			/* Text typed into the line editor, as is: one key per
			 * character, "<" included. */
			for (const unsigned char *c = (const unsigned char *)p + 5; *c;) {
				size_t cl = *c < 0x80 ? 1 : *c < 0xe0 ? 2 : *c < 0xf0 ? 3 : 4;
				unsigned k = cl == 1 ? *c : cl == 2 ? *c & 0x1f : cl == 3 ? *c & 0x0f :
				             *c & 0x07;
				for (size_t i = 1; i < cl && c[i]; i++)
					k = (k << 6) | (c[i] & 0x3f);
				handle_key(u, (int)k);
				c += cl;
			}
		} else {
			/* Keys, as in the config: j j <Enter> */
			const char *q = p;
			int k;
			while ((k = keymap_next_key(&q)) > 0)
				handle_key(u, k);
			if (k < 0) {
				fprintf(stderr, _("%s:%d: unknown key at '%s'\n"), u->script_path,
				        u->script_line, q);
				free(line);
				return -1;
			}
		}
		free(line);
		return 1;
	}
	free(line);
	return 0;
}

static int screen_shows(struct screen *s, const char *text)
{
	for (int y = 0; y < screen_height(s); y++) {
		struct buf line = {0};
		for (int x = 0; x < screen_width(s); x++)
			buf_adds(&line, screen_cell(s, x, y, NULL));
		int found = line.data && strstr(line.data, text);
		buf_free(&line);
		if (found)
			return 1;
	}
	return 0;
}

static int idle(struct ui *u)
{
	if (u->wait_text) {
		dash_draw(u);
		if (screen_shows(u->d.scr, u->wait_text)) {
			free(u->wait_text);
			u->wait_text = NULL;
		} else if (clock_mono() > u->wait_until) {
			fprintf(stderr, _("%s:%d: the screen never showed '%s'\n"), u->script_path,
			        u->script_line, u->wait_text);
			free(u->wait_text);
			u->wait_text = NULL;
			u->script_failed = 1;
			u->d.quit = 1;
		}
		return 0;
	}
	return u->njobs == 0 && (!u->d.sched || scheduler_idle(u->d.sched));
}

/* ---- the loop ---- */

static void refresh_views(struct ui *u)
{
	for (int i = 0; i < u->d.nviews; i++) {
		struct view *v = u->d.stack[i];
		if (v->ops->refresh)
			v->ops->refresh(v);
	}
	update_counts(u);
}

/* A slice of each view's work; 1 while any has more. */
static int work_views(struct ui *u)
{
	int busy = 0;
	for (int i = 0; i < u->d.nviews; i++) {
		struct view *v = u->d.stack[i];
		if (v->ops->work && v->ops->work(v))
			busy = 1;
	}
	return busy;
}

/* The keys the terminal holds now, in the order they were typed. */
static void read_keys(struct ui *u)
{
	int key;
	while ((key = term_getkey()) >= 0)
		handle_key(u, key);
}

static int run(struct ui *u)
{
	struct dash *d = &u->d;
	double last_refresh = 0, idle_since = -1;
	while (!d->quit) {
		d->now = clock_wall();
		double m = clock_mono();
		if (m - last_refresh >= TICK_MS / 1000.0) {
			refresh_views(u);
			last_refresh = m;
		}
		if (u->quit_asked == 2 && (!d->sched || scheduler_busy(d->sched) == 0))
			d->quit = 1;
		if (!d->script && u->term_away) {
			/* A shell has the terminal: nothing is drawn under it. */
		} else if (!d->script) {
			int w, h;
			term_size(&w, &h);
			if (w != screen_width(d->scr) || h != screen_height(d->scr))
				screen_resize(d->scr, w, h);
			dash_draw(u);
			term_draw(d->scr, u->theme);
		} else if (idle(u)) {
			/* A step runs once the UI has caught up with an idle
			 * scheduler: one refresh after idleness began. */
			if (idle_since < 0) {
				idle_since = m;
				last_refresh = 0;
				continue;
			}
			refresh_views(u);
			int rc = script_step(u);
			if (rc <= 0)
				return rc < 0 ? 1 : 0;
			idle_since = -1;
			continue;
		} else if (idle_since >= 0 || m - last_refresh > SCRIPT_IDLE_TIMEOUT) {
			idle_since = -1;
		}
		/* After the screen: a view's slow work must not delay it. */
		int busy = work_views(u);
		struct pollfd pfd[64];
		size_t n = 0;
		if (!d->script) {
			pfd[n].fd = u->term_away ? -1 : STDIN_FILENO;
			pfd[n++].events = POLLIN;
		}
		pfd[n].fd = u->sigfd;
		pfd[n++].events = POLLIN;
		size_t jobs_at = n;
		for (int i = 0; i < u->njobs && n < 48; i++) {
			pfd[n].fd = u->jobs[i].fd;
			pfd[n++].events = POLLIN;
		}
		size_t sched_at = n;
		if (d->sched)
			n += scheduler_pollfds(d->sched, pfd + n, 64 - n);
		int rc = poll(pfd, n, busy ? 0 : TICK_MS);
		if (rc < 0 && errno != EINTR)
			break;
		if (d->sched)
			scheduler_step(d->sched, pfd + sched_at, n - sched_at);
		for (size_t i = n; i-- > jobs_at;)
			if (i < sched_at && pfd[i].revents)
				job_read(u, (int)(i - jobs_at));
		child_reap();  /* notify commands; a hosted scheduler's own */
		if (pfd[d->script ? 0 : 1].revents) {
			struct signalfd_siginfo si;
			while (read(u->sigfd, &si, sizeof si) == sizeof si) {
				/* <C-c> (and <C-\\>) typed at the terminal is a key; SIGHUP
				 * sent by a person (kill -HUP) re-reads the
				 * configuration.  Otherwise (kill -INT, -QUIT, -TERM,
				 * the terminal hung up) told to go: what runs is
				 * queued again, not lost (scheduler_close). */
				int typed = (si.ssi_signo == SIGINT || si.ssi_signo == SIGQUIT) &&
				            si.ssi_code == SI_KERNEL;
				if (typed && u->term_away)
					continue;  /* the shell's, not ours */
				if (typed && !d->script) {
					/* The terminal raised it where the <C-c> was
					 * typed: the keys before it are waiting still,
					 * and go first, or a busy loop would let it
					 * overtake them (a prompt's text reaching the
					 * list as keys). */
					read_keys(u);
					if (!u->term_away)
						handle_key(u, KEYC_CTRL + 'c');
				} else if (si.ssi_signo == SIGHUP && si.ssi_code == SI_USER)
					dash_reload(u);
				else
					d->quit = 1;
			}
		}
		if (!d->script && !u->term_away)
			read_keys(u);  /* also after a signal woke poll: a resize is a key */
	}
	return 0;
}


/* "? help" in the status bar, with the key help is bound to now. */
static void set_help_hint(struct ui *u)
{
	char keys[128], first[64];
	keymap_keys_of(u->d.keys, REQ_HELP, keys, sizeof keys);
	sscanf(keys, "%63s", first);
	snprintf(u->help_hint, sizeof u->help_hint, _("%s help"), keys[0] ? first : ":help");
}

/* PADDOCK_UI_SCRIPT: the tests' keystrokes instead of a terminal. */
static int open_script(struct ui *u)
{
	const char *script = getenv("PADDOCK_UI_SCRIPT");
	if (script && *script) {
		u->d.script = 1;
		u->script_path = xstrdup(script);
		u->script = fopen(script, "r");
		if (!u->script) {
			fprintf(stderr, "paddock: cannot read %s: %s\n", script, strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* Host the scheduler unless another process does: then this is a second
 * dashboard working through the store. */
static void host_scheduler(struct dash *d, struct config *cfg)
{
	struct err e = {{0}};

	if (scheduler_open(&d->sched, cfg, d->data_dir, NULL, &e) < 0) {
		d->sched = NULL;
		dash_message(d, ROLE_NOTICE, "%s", e.msg);
	} else if (cfg->api_listen) {
		/* The HTTP API, when configured, answers beside the scheduler it
		 * hosts (from threads of its own: the loop is not involved). */
		struct api_opts ao = { .listen = cfg->api_listen, .cfg = cfg, .data_dir = d->data_dir };
		if (api_start(&dash_api, &ao, NULL, &e) < 0)
			dash_message(d, ROLE_ERROR, _("the HTTP API: %s"), e.msg);
		else
			dash_message(d, ROLE_NOTICE, _("the HTTP API listens on %s"), cfg->api_listen);
	}
}

/* The signals that end the dashboard arrive on u->sigfd, read by run(). */
static void block_signals(struct ui *u)
{
	sigset_t mask;
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGQUIT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	/* SIGWINCH stays with ncurses, which turns it into KEY_RESIZE. */
	sigprocmask(SIG_BLOCK, &mask, NULL);
	u->sigfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
}

/* The terminal, or for a script a screen of PADDOCK_UI_SIZE (100x30). */
static int open_screen(struct dash *d)
{
	if (d->script) {
		const char *size = getenv("PADDOCK_UI_SIZE");
		int w = 100, h = 30;
		if (size)
			sscanf(size, "%dx%d", &w, &h);
		d->scr = screen_new(w, h);
	} else {
		char msg[512] = "";
		if (term_open(msg, sizeof msg) < 0) {
			fprintf(stderr, "paddock: %s\n", msg);
			return -1;
		}
		int w, h;
		term_size(&w, &h);
		d->scr = screen_new(w, h);
	}
	return 0;
}

/* For a script that failed or was stopped: where it was (PADDOCK_UI_LAST). */
static void write_last(struct ui *u)
{
	const char *last = getenv("PADDOCK_UI_LAST");
	if (u->d.script && last && *last) {
		FILE *f = fopen(last, "w");
		if (f) {
			fprintf(f, "%s:%d\n", u->script_path, u->script_line);
			dash_draw(u);
			screen_dump(u->d.scr, f, 0);
			fclose(f);
		}
	}
}

/* Closes what dash_main opened, whatever it got to. */
static void ui_free(struct ui *u)
{
	struct dash *d = &u->d;

	term_close();
	api_stop(dash_api);
	dash_api = NULL;
	if (d->sched)
		scheduler_close(d->sched);
	if (d->input) {
		/* A question still open is cancelled, as Esc would: its owner
		 * frees what it kept for the answer (the new-task form). */
		struct dash_input *in = d->input;
		d->input = NULL;
		if (in->done)
			in->done(d, in->arg, NULL);
		input_free(in);
	}
	while (d->nviews)
		view_free(d->stack[--d->nviews]);
	if (d->input)
		input_free(d->input);
	for (size_t i = 0; i < u->nconfigs; i++) {
		config_free(u->configs[i]);
		free(u->configs[i]);
	}
	free(u->configs);
	for (size_t i = 0; i < d->nnotes; i++)
		free(d->notes[i].text);
	free(d->notes);
	for (size_t i = 0; i < u->nhistory; i++)
		free(u->history[i]);
	free(u->history);
	theme_free(u->theme);
	screen_free(d->scr);
	keymap_free(d->keys);
	source_close(d->src);
	store_close(u->st);
	if (u->script)
		fclose(u->script);
	free(u->script_path);
	free(u->wait_text);
	free(d->data_dir);
	free(u);
}

/* The dashboard on the local store, or (url not NULL) on a paddock
 * serve's API, which hosts the scheduler. */
static int dash_run(struct config *cfg, const char *url, const char *token)
{
	struct ui *u = xcalloc(1, sizeof *u);
	struct dash *d = &u->d;
	struct err e = {{0}};
	int rc = 1;
	d->cfg = cfg;
	/* The terminal's ^C, ^\ and ^Z are the dashboard's keys: no task,
	 * supervisor or job of ours is in the terminal's foreground group
	 * (child.h); only an answer to "wait or stop" stops a task. */
	child_leave_terminal();
	if (url) {
		/* No data of its own: its jobs ask the server too. */
		const char *tmp = getenv("TMPDIR");
		d->data_dir = xstrdup(tmp && *tmp ? tmp : "/tmp");
		d->src = source_api_new(cfg, url, token, &e);
		if (!d->src) {
			fprintf(stderr, "paddock: %s\n", e.msg);
			goto out;
		}
		source_job_env(url, token);
	} else {
		d->data_dir = paths_data_dir_ensure(&e);
		if (!d->data_dir) {
			fprintf(stderr, "paddock: %s\n", e.msg);
			free(u);
			return 1;
		}
		char *db = paths_db(d->data_dir);
		int orc = store_open(&u->st, db, &e);
		free(db);
		if (orc < 0) {
			fprintf(stderr, "paddock: %s\n", e.msg);
			goto out;
		}
		d->src = source_store_new(cfg, d->data_dir, u->st);
		source_job_env(NULL, NULL);
	}
	/* What `paddock config check` checks of the dashboard's, the same way. */
	if (dash_config_take(cfg, &d->keys, &u->theme, config_report_stderr, NULL) > 0 ||
	    open_script(u) < 0)
		goto out;
	set_help_hint(u);
	/* Blocked first: the API's threads start with the mask, so that a
	 * SIGTERM cannot land in one of them and end the dashboard with the
	 * terminal left raw. */
	block_signals(u);
	if (!url)
		host_scheduler(d, cfg);
	if (open_screen(d) < 0)
		goto out;
	dash_open(d, &view_tasks, NULL);
	rc = run(u);
	if (u->script_failed)
		rc = 1;
	write_last(u);
out:
	ui_free(u);
	return rc;
}

int dash_main(struct config *cfg, int demo)
{
	(void)demo;
	return dash_run(cfg, NULL, NULL);
}

int dash_main_remote(struct config *cfg, const char *url, const char *token)
{
	return dash_run(cfg, url, token);
}
