/* The client of a reviewer's shell (paddock shell, the dashboard); see
 * shell.h and shell_int.h. */
#include "autoconfig.h"
#include "shell.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include "buf.h"
#include "clock.h"
#include "diffcache.h"
#include "fsx.h"
#include "gate.h"
#include "i18n.h"
#include "mirror.h"
#include "paths.h"
#include "sanitize.h"
#include "shell_int.h"
#include "store.h"
#include "task.h"

#define ACCEPT_WAIT_MS 30000       /* for the supervisor to take the session */
/* For the reviewer's answer to "record them?": within the supervisor's
 * wait for the client's (shell.c, ANSWER_WAIT_MS), with time to spare for
 * the store. */
#define CONFIRM_WAIT_MS 240000
#define GATE_MAX (8u << 20)

/* ---- what may be asked ---- */

/* Why task t has no shell to open, as a message in e; 0 when it has. */
static int task_refusal(const struct task_row *t, struct err *e)
{
	if (t->status == TASK_REVIEW && t->pending)
		return err_kind_set(e, ERR_WRONG_STATE, _("cannot open a shell in task %s: changes "
		                    "were requested, and the agent's round %d comes first; try again "
		                    "when it is back at review"), t->id, t->round + 1);
	if (t->status == TASK_REVIEW && !t->sandbox_kept)
		return err_kind_set(e, ERR_WRONG_STATE, _("cannot open a shell in task %s: its "
		                    "sandbox is no longer kept (paddock.gate-timeout passed, or "
		                    "paddock was restarted); 'paddock request-changes %s' runs a round "
		                    "in a new sandbox, which is kept at review again"), t->id, t->id);
	if (t->status == TASK_REVIEW)
		return 0;
	if (task_status_is_active(t->status))
		return err_kind_set(e, ERR_WRONG_STATE, _("cannot open a shell in task %s: it is %s; "
		                    "a shell opens in the sandbox a task keeps at review: wait until "
		                    "it gets there ('paddock show %s')"), t->id,
		                    task_status_label(t->status), t->id);
	return err_kind_set(e, ERR_WRONG_STATE, _("cannot open a shell in task %s: it is %s, and "
	                    "its sandbox went with it; 'paddock diff %s' shows its work"), t->id,
	                    task_status_label(t->status), t->id);
}

/* A connection to the supervisor of task id, checked to be paddock's:
 * the fd, or -1 with e. */
static int shell_connect(const char *data_dir, const char *id, struct err *e)
{
	char *path = paths_task_shell_socket(data_dir, id);
	char *dir = paths_task_dir(data_dir, id);
	struct sockaddr_un sa;
	struct stat st;
	int dirfd = -1, fd = -1;
	if (fsx_unix_addr(path, &sa, &dirfd, e) < 0)
		goto out;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
		err_kind_set(e, ERR_UNAVAILABLE, _("the supervisor of task %s does not answer at %s "
		             "(%s); is the paddock that runs the task (paddock serve, or the "
		             "dashboard) still running?"), id, path, strerror(errno));
		goto fail;
	}
	long uid = shell_peer_uid(fd);
	if (stat(dir, &st) < 0 || uid < 0 || (uid != 0 && uid != (long)st.st_uid)) {
		err_set(e, _("the socket %s is not paddock's (its end is uid %ld, the task's folder "
		             "is uid %ld's); nothing was sent"), path, uid, (long)st.st_uid);
		goto fail;
	}
	goto out;
fail:
	if (fd >= 0)
		close(fd);
	fd = -1;
out:
	if (dirfd >= 0)
		close(dirfd);
	free(path);
	free(dir);
	return fd;
}

/* ---- the terminal ---- */

static int sig_pipe[2] = { -1, -1 };

static void on_signal(int sig)
{
	unsigned char c = (unsigned char)sig;
	int saved = errno;
	if (write(sig_pipe[1], &c, 1) < 0) {
		/* full: a signal of each kind is enough */
	}
	errno = saved;
}

struct term {
	int raw;                   /* fd 0's modes are ours */
	struct termios saved;
	struct sigaction old[5];
};

static const int term_signals[5] = { SIGWINCH, SIGHUP, SIGTERM, SIGINT, SIGPIPE };

static void term_enter(struct term *t, int tty)
{
	memset(t, 0, sizeof *t);
	for (int i = 0; i < 5; i++) {
		struct sigaction sa = { .sa_handler = term_signals[i] == SIGPIPE ? SIG_IGN : on_signal };
		sigemptyset(&sa.sa_mask);
		sigaction(term_signals[i], &sa, &t->old[i]);
	}
	if (tty && tcgetattr(0, &t->saved) == 0) {
		struct termios raw = t->saved;
		cfmakeraw(&raw);
		t->raw = tcsetattr(0, TCSADRAIN, &raw) == 0;
	}
}

static void term_leave(struct term *t)
{
	if (t->raw)
		tcsetattr(0, TCSADRAIN, &t->saved);
	t->raw = 0;
	for (int i = 0; i < 5; i++)
		sigaction(term_signals[i], &t->old[i], NULL);
}

static void winsize(unsigned *rows, unsigned *cols)
{
	struct winsize ws;
	*rows = 24;
	*cols = 80;
	if (ioctl(0, TIOCGWINSZ, &ws) == 0 && ws.ws_row && ws.ws_col) {
		*rows = ws.ws_row;
		*cols = ws.ws_col;
	}
}

/* ---- what reaches the terminal ----
 *
 * What the sandbox prints reaches a terminal only through sanitize_term
 * (sanitize.h: an allow-list of what a shell needs), and the session's end
 * puts back the modes it lets through (sanitize_term_restore). */

/* ---- the session ---- */

struct client {
	int sock;
	int tty;                   /* fds 0 and 1 are terminals: a pty inside */
	int keep;                  /* SHELL_KEEP, SHELL_KEEP_YES */
	int filter_out, filter_err; /* fd 1, fd 2 is a terminal */
	struct sanitize_term fo, fe;
	int stdin_open;
	int sig;                   /* the signal that ended the session, or 0 */
	json_t *end;               /* the S frame */
};

static void put_out(struct client *c, int fd, const char *p, size_t n)
{
	if (!(fd == 1 ? c->filter_out : c->filter_err)) {
		(void)fsx_write_all(fd, p, n);
		return;
	}
	struct buf b = {0};
	sanitize_term(fd == 1 ? &c->fo : &c->fe, p, n, &b);
	if (b.len)
		(void)fsx_write_all(fd, b.data, b.len);
	buf_free(&b);
}

static void send_winsize(struct client *c)
{
	unsigned rows, cols;
	char ws[32];
	winsize(&rows, &cols);
	int n = snprintf(ws, sizeof ws, "%u %u", rows, cols);
	(void)shell_send(c->sock, SHELL_WINCH, ws, (size_t)n, 1000);
}

/* The signals that came: a new window size is passed on; SIGHUP,
 * SIGTERM or SIGINT end the session (-1). */
static int client_signals(struct client *c)
{
	unsigned char s[32];
	ssize_t n = read(sig_pipe[0], s, sizeof s);
	for (ssize_t i = 0; i < n; i++) {
		if (s[i] == SIGWINCH && c->tty)
			send_winsize(c);
		else if (s[i] == SIGHUP || s[i] == SIGTERM || s[i] == SIGINT)
			c->sig = s[i];
	}
	return c->sig ? -1 : 0;
}

/* One frame of the session: output, or its end (1). */
static int client_frame(struct client *c)
{
	int type = 0;
	struct buf b = {0};
	int got = shell_recv(c->sock, &type, &b, 0);
	int rc = got < 0 ? -1 : 0;
	if (got > 0 && (type == SHELL_STDOUT || type == SHELL_STDERR)) {
		put_out(c, type == SHELL_STDOUT ? 1 : 2, b.data, b.len);
	} else if (got > 0 && type == SHELL_END) {
		json_error_t je;
		c->end = json_loads(b.data, 0, &je);
		rc = 1;
	}
	buf_free(&b);
	return rc;
}

/* Until the session ends (S: 0): keys and window sizes in, output out;
 * -1 when the connection or a signal ended it first.  One frame of input
 * at a time waits for room in the socket, and the input is not read
 * meanwhile: input the command does not take stays in the pipe or the
 * terminal it comes from, while the output and the end still come. */
static int client_relay(struct client *c)
{
	char in[1 + SHELL_FRAME_MAX];
	size_t pending = 0;
	for (;;) {
		struct pollfd p[3] = {
			{ .fd = c->sock, .events = (short)(POLLIN | (pending ? POLLOUT : 0)) },
			{ .fd = c->stdin_open && !pending ? 0 : -1, .events = POLLIN },
			{ .fd = sig_pipe[0], .events = POLLIN } };
		if (poll(p, 3, -1) < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (p[2].revents && client_signals(c) < 0)
			return -1;
		if (p[1].revents) {
			ssize_t n = read(0, in + 1, SHELL_FRAME_MAX);
			if (n > 0) {
				in[0] = SHELL_INPUT;
				pending = (size_t)n + 1;
			} else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
				c->stdin_open = 0;
				if (!c->tty) {
					in[0] = SHELL_EOF;
					pending = 1;
				}
			}
		}
		if (pending) {
			ssize_t n = send(c->sock, in, pending, MSG_NOSIGNAL | MSG_DONTWAIT);
			if (n == (ssize_t)pending)
				pending = 0;
			else if (n >= 0 || (errno != EAGAIN && errno != EINTR)) {
				pending = 0;
				p[0].revents |= POLLIN;   /* the end, or its reason, is read next */
			}
		}
		if (p[0].revents) {
			int rc = client_frame(c);
			if (rc != 0)
				return rc > 0 ? 0 : -1;
		}
	}
}

/* A line for the reviewer: what it quotes (an error from the sandbox's
 * hand-off, a file name) may be the sandbox's, so the whole line goes
 * through sanitize_quote. */
static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *line = NULL;
	if (vasprintf(&line, fmt, ap) < 0)
		line = NULL;
	va_end(ap);
	char *clean = sanitize_quote_str(line ? line : "?");
	fprintf(stderr, "paddock: %s\n", clean);
	free(clean);
	free(line);
}

/* What the end (S) says, said; returns the exit status. */
static int client_ended(const struct client *c)
{
	const char *why = json_string_value(json_object_get(c->end, "why"));
	const char *end = json_string_value(json_object_get(c->end, "end"));
	int hit = (int)json_integer_value(json_object_get(c->end, "hit"));
	if (why && !strcmp(why, SHELL_WHY_DECIDED))
		say("%s", _("the task was decided, or changes were requested, while the shell ran; "
		            "paddock ended the session"));
	else if (why)
		say("%s", _("the task was cancelled, or spent its budget, while the shell ran; "
		            "paddock ended the session"));
	else if (end && !strcmp(end, "timeout"))
		say("%s", _("the session ran longer than the task's time limit (limits.timeout) "
		            "and was stopped"));
	if (hit & SANDBOX_HIT_MEMORY)
		say("%s", _("the sandbox reached its memory limit (limits.memory)"));
	if (hit & SANDBOX_HIT_PIDS)
		say("%s", _("the sandbox reached its process limit (limits.pids)"));
	if (hit & SANDBOX_HIT_DISK)
		say("%s", _("the sandbox's disk is full (limits.disk)"));
	return (int)json_integer_value(json_object_get(c->end, "status"));
}

/* The round offered: its files and stat shown (the names are the
 * sandbox's: through the sanitizer), and the reviewer asked on the
 * terminal whether it is theirs (SHELL_KEEP_YES: not asked).  1 when it
 * is to be recorded; 0 with e saying why not. */
static int client_confirm(const struct client *c, const struct task_row *t,
                          const char *data_dir, int round, const char *from, const char *head,
                          struct err *e)
{
	struct buf stat = {0}, shown = {0};
	char *mirror = mirror_path(data_dir, t->repo);
	struct err de = {{0}};
	say(_("what the shell changed, to be recorded as round %d of task %s, a reviewer's, "
	      "yours (%.12s..%.12s):"), round, t->id, from, head);
	/* Kept for the round's diff (paddock diff --round, diffcache.h). */
	char *diffs = paths_task_diffs(data_dir, t->id);
	if (diffcache_stat(diffs, mirror, from, head, &stat, &de) < 0)
		say(_("its diffstat cannot be read: %s"), de.msg);
	free(diffs);
	free(mirror);
	sanitize_visible(stat.data ? stat.data : "", stat.len, SANITIZE_KEEP_NEWLINE, &shown, NULL);
	if (shown.len)
		(void)fsx_write_all(2, shown.data, shown.len);
	buf_free(&stat);
	buf_free(&shown);
	if (c->keep & SHELL_KEEP_YES) {
		say("%s", _("recorded without asking (--yes)"));
		return 1;
	}
	/* Keys typed before the question do not answer it. */
	tcflush(0, TCIFLUSH);
	fprintf(stderr, _("paddock: record these changes as round %d, yours? [y/N] "), round);
	fflush(stderr);
	char answer[64] = "";
	size_t n = 0;
	struct pollfd p = { .fd = 0, .events = POLLIN };
	double until = clock_mono() + CONFIRM_WAIT_MS / 1000.0;
	while (n + 1 < sizeof answer) {
		double left = until - clock_mono();
		if (left <= 0 || poll(&p, 1, (int)(left * 1000) + 1) <= 0)
			break;
		ssize_t k = read(0, answer + n, 1);
		if (k <= 0 || answer[n] == '\n' || answer[n] == '\r')
			break;
		n++;
	}
	answer[n] = '\0';
	fputc('\n', stderr);
	/* TRANSLATORS: the short and the long answer that mean yes to
	 * "[y/N]". */
	const char *yes[] = { "y", "yes", _("y"), _("yes") };
	for (size_t i = 0; i < sizeof yes / sizeof *yes; i++)
		if (!strcasecmp(answer, yes[i]))
			return 1;
	err_set(e, "%s", _("you did not say yes to recording them (answer y to keep the changes, "
	                   "or use --yes where no one can answer)"));
	return 0;
}

/* An offered round (P), recorded in the store once the reviewer said yes;
 * the answer (K) sent. */
static void client_record(struct client *c, struct store *st, const struct task_row *t,
                          const char *data_dir, json_t *offer, double started)
{
	struct err e = {{0}};
	struct buf gate = {0};
	char *path = paths_task_shell_gate(data_dir, t->id);
	int round = (int)json_integer_value(json_object_get(offer, "round"));
	const char *from = json_string_value(json_object_get(offer, "from"));
	const char *head = json_string_value(json_object_get(offer, "head"));
	const char *summary = json_string_value(json_object_get(offer, "summary"));
	int rc = -1;
	if (round < 2 || !from || !head || strlen(from) != 40 || strlen(head) != 40)
		err_set(&e, "%s", _("the supervisor offered a malformed round"));
	else if (client_confirm(c, t, data_dir, round, from, head, &e) == 1 &&
	         fsx_read_file(path, GATE_MAX, &gate, &e) == 0)
		rc = store_task_reviewer_round(st, t->id, round, from, head,
		                               gate.data ? gate.data : "{}", summary ? summary : "",
		                               started, &e);
	unlink(path);
	free(path);
	buf_free(&gate);
	json_t *a = json_pack("{s:b}", "ok", rc == 0);
	if (rc < 0)
		json_object_set_new(a, "error", json_string(e.msg));
	char *s = json_dumps(a, JSON_COMPACT);
	json_decref(a);
	(void)shell_send(c->sock, SHELL_ANSWER, s, strlen(s), 30000);
	free(s);
}

/* What became of the changes (D), said: 0, or 1 when keep failed or the
 * workspace could not be put back. */
static int client_done(const struct task_row *t, json_t *d)
{
	const char *kept = json_string_value(json_object_get(d, "kept"));
	const char *head = json_string_value(json_object_get(d, "head"));
	const char *error = json_string_value(json_object_get(d, "error"));
	int round = (int)json_integer_value(json_object_get(d, "round"));
	int tests = (int)json_integer_value(json_object_get(d, "tests"));
	char h[13];
	snprintf(h, sizeof h, "%.12s", head ? head : "?");
	if (!kept)
		kept = "";
	if (!strcmp(kept, SHELL_KEPT_RESET)) {
		say(_("the workspace is back at the task's head %s: what the shell changed is gone "
		      "('paddock shell --keep' keeps it as a reviewer's round)"), h);
	} else if (!strcmp(kept, SHELL_KEPT_NONE)) {
		say("%s", _("the shell changed nothing: no reviewer's round"));
	} else if (!strcmp(kept, SHELL_KEPT_ROUND)) {
		say(_("round %d is a reviewer's round at %s: what the shell changed, committed; "
		      "'paddock diff --round %d %s' shows it"), round, h, round, t->id);
		if (tests >= 0)
			say("%s", tests ? _("its tests pass on a clean checkout")
			                : _("its tests FAIL on a clean checkout (the gate shows them)"));
	} else if (!strcmp(kept, SHELL_KEPT_FAILED)) {
		say(_("the shell's changes are not kept: %s; the workspace is back at the task's head "
		      "%s"), error ? error : "?", h);
		return 1;
	} else {
		say(_("the workspace could not be put back at the task's head: %s; its sandbox is torn "
		      "down, and a later round starts in a new one at the head"), error ? error : "?");
		return 1;
	}
	return 0;
}

/* After the end: the offer of a kept round, then the last word (D).
 * 0, or 1 (said why). */
static int client_after(struct client *c, struct store *st, const struct task_row *t,
                        const char *data_dir, double started)
{
	if (c->keep)
		say("%s", _("keeping the shell's changes: committing them, checking the bundle and "
		            "verifying the tests..."));
	for (;;) {
		int type = 0;
		struct buf b = {0};
		if (shell_recv(c->sock, &type, &b, -1) <= 0) {
			buf_free(&b);
			say("%s", _("the supervisor went away before it said what became of the "
			            "shell's changes; 'paddock show' tells"));
			return 1;
		}
		json_error_t je;
		json_t *j = json_loads(b.data, 0, &je);
		buf_free(&b);
		int rc = -1;
		if (type == SHELL_OFFER)
			client_record(c, st, t, data_dir, j, started);
		else if (type == SHELL_DONE)
			rc = client_done(t, j);
		json_decref(j);
		if (rc >= 0)
			return rc;
	}
}

/* The request, and the supervisor's yes: 0, or -1 with e. */
static int client_open(struct client *c, const char *const *argv, struct err *e)
{
	unsigned rows, cols;
	winsize(&rows, &cols);
	const char *term = getenv("TERM");
	json_t *q = json_pack("{s:b, s:b, s:i, s:i, s:s, s:s}", "keep", c->keep, "tty", c->tty,
	                      "rows", (int)rows, "cols", (int)cols, "term",
	                      term && *term ? term : "dumb", "actor", gate_actor());
	if (argv) {
		json_t *a = json_array();
		for (size_t i = 0; argv[i]; i++)
			json_array_append_new(a, json_string(argv[i]));
		json_object_set_new(q, "argv", a);
	}
	char *s = json_dumps(q, JSON_COMPACT);
	json_decref(q);
	if (!s || strlen(s) > SHELL_FRAME_MAX) {
		free(s);
		return err_kind_set(e, ERR_INVALID, "%s", _("the command is too long for a shell "
		                    "session (16 KiB at most, with its arguments)"));
	}
	int type = 0;
	struct buf b = {0};
	int got = shell_send(c->sock, SHELL_REQUEST, s, strlen(s), 10000) < 0 ? -1 :
	          shell_recv(c->sock, &type, &b, ACCEPT_WAIT_MS);
	free(s);
	int rc = 0;
	if (got <= 0)
		rc = err_kind_set(e, ERR_UNAVAILABLE, "%s", _("the task's supervisor did not take "
		                  "the session; try again"));
	else if (type == SHELL_REFUSE)
		rc = err_kind_set(e, ERR_CONFLICT, "%s", b.data);
	else if (type != SHELL_ACCEPT)
		rc = err_set(e, "%s", _("the task's supervisor answered something else than a shell "
		                        "session"));
	buf_free(&b);
	return rc;
}

/* A session with the supervisor on sock: the exit status, or -1 with e. */
static int client_session(int sock, struct store *st, const struct task_row *t,
                          const char *data_dir, int keep, const char *const *argv,
                          struct err *e)
{
	struct client c = { .sock = sock, .tty = isatty(0) && isatty(1), .keep = keep,
	                    .filter_out = isatty(1), .filter_err = isatty(2), .stdin_open = 1 };
	if (client_open(&c, argv, e) < 0)
		return -1;
	double started = clock_wall();
	if (pipe2(sig_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
		return err_errno(e, _("cannot create a pipe"));
	struct term term;
	term_enter(&term, c.tty);
	int relayed = client_relay(&c);
	if (c.filter_out)
		(void)fsx_write_all(1, sanitize_term_restore(), strlen(sanitize_term_restore()));
	term_leave(&term);
	close(sig_pipe[0]);
	close(sig_pipe[1]);
	sig_pipe[0] = sig_pipe[1] = -1;
	int status;
	if (relayed < 0) {
		if (c.sig)
			say(_("the session ended on signal %d; the workspace is put back at the task's "
			      "head"), c.sig);
		else
			say("%s", _("the connection to the task's supervisor ended during the session; "
			            "'paddock show' tells what became of the task"));
		status = c.sig ? 128 + c.sig : 1;
	} else {
		status = client_ended(&c);
		if (client_after(&c, st, t, data_dir, started) != 0)
			status = 1;
	}
	json_decref(c.end);
	return status;
}

int shell_run(const char *data_dir, const char *task_id, int keep, const char *const *argv,
              struct err *e)
{
	if (argv && !argv[0])
		argv = NULL;
	if ((keep & SHELL_KEEP) && !(keep & SHELL_KEEP_YES) && !isatty(0))
		return err_kind_set(e, ERR_INVALID, "%s", _("--keep asks on the terminal before it "
		                    "records the shell's changes as your round, and standard input "
		                    "is no terminal; add --yes to record them without asking"));
	char *db = paths_db(data_dir);
	struct store *st = NULL;
	int rc = access(db, F_OK) < 0
		? err_kind_set(e, ERR_NOT_FOUND, _("there is no paddock store in %s; no task there"),
		               data_dir)
		: store_open(&st, db, e);
	free(db);
	if (rc < 0)
		return -1;
	struct task_row t;
	int status = -1;
	if (store_task_get(st, task_id, &t, e) == 0) {
		if (task_refusal(&t, e) == 0) {
			int sock = shell_connect(data_dir, t.id, e);
			if (sock >= 0) {
				status = client_session(sock, st, &t, data_dir, keep, argv, e);
				close(sock);
			}
		}
		task_row_free(&t);
	}
	store_close(st);
	return status;
}
