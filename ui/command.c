/* command: the dashboard's : commands.  One table (command_table, in
 * dash.h) holds each command's name, arguments, help and handler; the help
 * view, Tab and paddock(1)'s list read it, and command_run finds the
 * handler there.  Tab completion (command_complete) completes a command's
 * name, then its argument: themes, filters, orders, repos, agents, ids.
 * The handlers reach the loop's state through dash_int.h. */
#include "autoconfig.h"
#include "dash_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "buf.h"
#include "clock.h"
#include "i18n.h"
#include "lineedit.h"
#include "screen.h"
#include "source.h"
#include "term.h"
#include "theme.h"

static int save_display(struct ui *u, const char *arg)
{
	char path[1024];
	int roles = 0;
	if (sscanf(arg, "%1023s", path) != 1) {
		dash_message(&u->d, ROLE_ERROR, _("usage: :save-display FILE [roles]"));
		return -1;
	}
	roles = strstr(arg, " roles") != NULL;
	FILE *f = fopen(path, "w");
	if (!f) {
		dash_message(&u->d, ROLE_ERROR, _("cannot write %s: %s"), path, strerror(errno));
		return -1;
	}
	dash_draw(u);
	screen_dump(u->d.scr, f, roles);
	fclose(f);
	return 0;
}

/* :log ID and the like: the task's view over the list. */
static void open_task_by_id(struct dash *d, const struct view_ops *ops, const char *id)
{
	struct task_row t;
	struct err e = {{0}};
	if (source_task_get(d->src, id, &t, &e) < 0) {
		dash_message(d, ROLE_ERROR, "%s", e.msg);
		return;
	}
	char tid[TASK_ID_LEN + 1];
	memcpy(tid, t.id, sizeof tid);
	task_row_free(&t);
	struct view *v = dash_top(d);
	/* The task's view replaces another task view, as Tab does; when it
	 * cannot open, the current one stays. */
	if (v && !(v->ops->flags & VIEW_STACKS)) {
		if (dash_open(d, ops, tid) == 0) {
			struct view *nv = d->stack[--d->nviews];
			dash_close_top(d);
			d->stack[d->nviews++] = nv;
		}
		return;
	}
	dash_open(d, ops, tid);
}

static void run_theme(struct dash *d, const char *arg)
{
	struct ui *u = ui_of(d);
	char msg[512] = "";
	struct theme *t = theme_load(arg, msg, sizeof msg);
	if (!t) {
		dash_message(d, ROLE_ERROR, "%s", msg);
		return;
	}
	theme_free(u->theme);
	u->theme = t;
	if (!d->script) {
		theme_reset_pairs();
		term_repaint();
	}
	dash_message(d, ROLE_NOTICE, _("theme %s"), arg);
}

/* The task list is always at the bottom of the stack. */
static struct view *to_list(struct dash *d)
{
	while (d->nviews > 1)
		dash_close_top(d);
	return d->stack[0];
}

/* ---- the handlers ---- */

static void run_quit(struct dash *d, const char *arg)
{
	(void)arg;
	/* As documented: at once, no question (q asks). */
	d->quit = 1;
}

static void run_save_display(struct dash *d, const char *arg)
{
	save_display(ui_of(d), arg);
}

/* :log, :diff, :gate: the selected task's view, or task arg's. */
static void run_task_view(struct dash *d, const struct view_ops *ops, const char *arg)
{
	if (*arg)
		open_task_by_id(d, ops, arg);
	else
		dash_open_task_view(d, ops);
}

static void run_log(struct dash *d, const char *arg)
{
	run_task_view(d, &view_log, arg);
}

static void run_diff(struct dash *d, const char *arg)
{
	run_task_view(d, &view_diff, arg);
}

static void run_gate(struct dash *d, const char *arg)
{
	run_task_view(d, &view_gate, arg);
}

static void run_help(struct dash *d, const char *arg)
{
	(void)arg;
	dash_open(d, &view_help, NULL);
}

static void run_messages(struct dash *d, const char *arg)
{
	(void)arg;
	dash_open(d, &view_messages, NULL);
}

static void run_reload(struct dash *d, const char *arg)
{
	(void)arg;
	dash_reload(ui_of(d));
}

static void run_message(struct dash *d, const char *arg)
{
	dash_message(d, ROLE_NOTICE, "%s", arg);
}

static void run_filter(struct dash *d, const char *arg)
{
	struct view *v = to_list(d);
	if (v->ops->filter)
		v->ops->filter(v, *arg ? arg : "all");
}

static void run_sort(struct dash *d, const char *arg)
{
	struct view *v = to_list(d);
	if (v->ops->sort)
		v->ops->sort(v, *arg ? arg : "queued");
}

/* Work another process does (a second dashboard): wait until the screen
 * shows the text, for at most a minute. */
static void run_wait_for(struct dash *d, const char *arg)
{
	struct ui *u = ui_of(d);
	free(u->wait_text);
	u->wait_text = xstrdup(arg);
	u->wait_until = clock_mono() + 60;
}

static void run_resize(struct dash *d, const char *arg)
{
	int w, h;
	if (sscanf(arg, "%dx%d", &w, &h) == 2 && w > 0 && h > 0)
		screen_resize(d->scr, w, h);
}

const struct command command_table[] = {
	{ "quit", "", N_("quit at once; tasks this dashboard runs are stopped and queued again"),
	  run_quit },
	{ "theme", N_("NAME"), N_("switch the colour theme (Tab lists them)"),
	  run_theme },
	{ "log", N_("[ID]"), N_("the log of the selected task, or of task ID"),
	  run_log },
	{ "diff", N_("[ID]"), N_("the diff of the selected task, or of task ID"),
	  run_diff },
	{ "gate", N_("[ID]"), N_("the gate of the selected task, or of task ID"),
	  run_gate },
	{ "filter", N_("NAME"), N_("show all, active, running, queued, review, failed or ended "
	                           "tasks; repo NAME, agent NAME, text WORDS"),
	  run_filter },
	{ "sort", N_("ORDER"), N_("order the list by queued, status, age, time or repo"),
	  run_sort },
	{ "messages", "", N_("the messages so far, with their times"),
	  run_messages },
	{ "reload", "", N_("read the configuration again: agents, repos, keys, theme"),
	  run_reload },
	{ "help", "", N_("this help"),
	  run_help },
	{ "save-display", N_("FILE [roles]"), N_("write the screen to FILE"),
	  run_save_display },
	{ "message", N_("TEXT"), N_("show TEXT in the status bar"),
	  run_message },
	{ NULL, NULL, NULL, NULL }
};

/* Not listed: an alias, and what only a script (PADDOCK_UI_SCRIPT) may
 * run. */
static const struct {
	struct command c;
	int script;
} command_unlisted[] = {
	{ { "q", "", "", run_quit }, 0 },
	{ { "wait-for", "", "", run_wait_for }, 1 },
	{ { "resize", "", "", run_resize }, 1 },
};

static const struct command *command_find(const struct dash *d, const char *name)
{
	for (const struct command *k = command_table; k->name; k++)
		if (!strcmp(k->name, name))
			return k;
	for (size_t i = 0; i < sizeof command_unlisted / sizeof command_unlisted[0]; i++)
		if (!strcmp(command_unlisted[i].c.name, name) &&
		    (!command_unlisted[i].script || d->script))
			return &command_unlisted[i].c;
	return NULL;
}

void command_run(struct dash *d, const char *line)
{
	while (*line == ' ' || *line == ':')
		line++;
	char cmd[64] = "";
	sscanf(line, "%63s", cmd);
	const char *arg = line + strlen(cmd);
	while (*arg == ' ')
		arg++;
	if (!*cmd)
		return;
	/* Completion leaves a space after the last word. */
	char *argbuf = xstrdup(arg);
	for (size_t n = strlen(argbuf); n && (argbuf[n - 1] == ' ' || argbuf[n - 1] == '\t');)
		argbuf[--n] = '\0';
	const struct command *k = command_find(d, cmd);
	if (k)
		k->run(d, argbuf);
	else
		dash_message(d, ROLE_ERROR, _("unknown command :%s (Tab lists them; :help explains "
		                              "them)"), cmd);
	free(argbuf);
}

/* ---- completion ---- */

struct cands {
	char **v;
	size_t n;
};

static void cand_add(struct cands *c, const char *word, const char *s)
{
	if (strncmp(s, word, strlen(word)))
		return;
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->v[i], s))
			return;
	c->v = xrealloc(c->v, (c->n + 1) * sizeof *c->v);
	c->v[c->n++] = xstrdup(s);
}

/* The candidates for the word being written after `cmd` (NULL: the
 * command's name itself). */
static void candidates(struct ui *u, const char *cmd, const char *word, struct cands *c)
{
	/* The list's words: :filter and :sort act on it (to_list). */
	const struct view_ops *list = u->d.nviews ? u->d.stack[0]->ops : NULL;
	const char *const *filters = list ? list->filter_names : NULL;
	const char *const *sorts = list ? list->sort_names : NULL;
	if (!cmd) {
		for (const struct command *k = command_table; k->name; k++)
			cand_add(c, word, k->name);
	} else if (!strcmp(cmd, "theme")) {
		char **names = theme_names();
		for (size_t i = 0; names && names[i]; i++)
			cand_add(c, word, names[i]);
		theme_names_free(names);
	} else if (!strcmp(cmd, "filter")) {
		for (size_t i = 0; filters && filters[i]; i++)
			cand_add(c, word, filters[i]);
	} else if (!strcmp(cmd, "filter-repo")) {
		for (size_t i = 0; i < u->d.cfg->nrepos; i++)
			cand_add(c, word, u->d.cfg->repos[i].name);
	} else if (!strcmp(cmd, "filter-agent")) {
		for (size_t i = 0; i < u->d.cfg->nagents; i++)
			cand_add(c, word, u->d.cfg->agents[i].name);
	} else if (!strcmp(cmd, "sort")) {
		for (size_t i = 0; sorts && sorts[i]; i++)
			cand_add(c, word, sorts[i]);
	} else if (!strcmp(cmd, "log") || !strcmp(cmd, "diff") || !strcmp(cmd, "gate")) {
		/* The newest tasks' ids. */
		struct task_query q = { .no_steps = 1, .newest_first = 1, .limit = 200 };
		struct task_row *rows;
		size_t n;
		struct err e = {{0}};
		if (source_task_query(u->d.src, &q, &rows, &n, &e) == 0) {
			for (size_t i = 0; i < n; i++)
				cand_add(c, word, rows[i].id);
			task_rows_free(rows, n);
		}
	}
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Tab in the : prompt: the word before the cursor completed as far as
 * the candidates agree; when several remain, the status bar lists them.
 * In a question with words to complete from (dash_ask_complete), the whole
 * answer before the cursor is the word, and one match adds no space. */
void command_complete(struct dash *d)
{
	struct ui *u = ui_of(d);
	struct dash_input *in = u->d.input;
	char *line = xstrndup(lineedit_text(&in->ed), in->ed.pos);
	char *word = in->words ? NULL : strrchr(line, ' ');
	word = word ? word + 1 : line;
	char *cmd = NULL, *sub = NULL;
	if (word != line) {
		cmd = xstrndup(line + strspn(line, ": "), strcspn(line + strspn(line, ": "), " "));
		/* :filter repo NAME, :filter agent NAME */
		if (!strcmp(cmd, "filter") && (strstr(line, " repo ") || strstr(line, " agent "))) {
			sub = xasprintf("filter-%s", strstr(line, " repo ") ? "repo" : "agent");
		}
	}
	const char *w = word + (word == line && !in->words ? strspn(word, ":") : 0);
	struct cands c = {0};
	if (in->words)
		for (size_t i = 0; i < in->nwords; i++)
			cand_add(&c, w, in->words[i]);
	else
		candidates(u, sub ? sub : cmd, w, &c);
	if (!c.n) {
		dash_message(&u->d, ROLE_ERROR, _("nothing completes '%s'"), w);
	} else {
		qsort(c.v, c.n, sizeof *c.v, cmp_str);
		size_t common = strlen(c.v[0]);
		for (size_t i = 1; i < c.n; i++) {
			size_t k = 0;
			while (k < common && c.v[i][k] == c.v[0][k])
				k++;
			common = k;
		}
		size_t have = strlen(w);
		if (common > have)
			lineedit_insert(&in->ed, c.v[0] + have, common - have);
		if (c.n == 1) {
			if (!in->words)
				lineedit_insert(&in->ed, " ", 1);
			u->d.message[0] = '\0';
		} else {
			struct buf b = {0};
			for (size_t i = 0; i < c.n; i++)
				buf_printf(&b, "%s%s", i ? "  " : "", c.v[i]);
			dash_message(&u->d, ROLE_NOTICE, "%s", b.data);
			buf_free(&b);
		}
	}
	for (size_t i = 0; i < c.n; i++)
		free(c.v[i]);
	free(c.v);
	free(cmd);
	free(sub);
	free(line);
}
