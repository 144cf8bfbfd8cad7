/* The supervisor's side of a reviewer's shell, and the protocol's
 * helpers; see shell.h and shell_int.h. */
#include "autoconfig.h"
#include "shell.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "clock.h"
#include "fsx.h"
#include "i18n.h"
#include "paths.h"
#include "shell_int.h"

#define REQUEST_WAIT_MS 5000       /* for the request after the connection */
#define ANSWER_WAIT_MS 300000      /* for the client's answer to an offer (the
                                      reviewer's y/N: shell_client.c) */
#define SEND_WAIT_MS 10000         /* for room to send a control frame */
#define CLOSE_WAIT_MS 2000         /* for the client to close its end after the last frame */
#define INPUT_MAX (1u << 20)       /* typed bytes not yet taken by the command */
#define DRAIN_S 3.0                /* for the output after the command ended */
#define LOG_CAPPED "\n[paddock: output limit reached (limits.output); the rest of the " \
	"shell session is not logged]\n"

/* Nothing the agent left behind may run in the reviewer's shell (paddock(1),
 * THE SHELL): the shell is the read-only system's /bin/bash (else
 * /bin/sh), by absolute path, without rc or profile files; what the
 * environment could name for it to read or run is unset here and set in
 * session_command (shell_env). */
#define SHELL_UNSET "unset BASH_ENV ENV PROMPT_COMMAND PS0 CDPATH GLOBIGNORE; "
/* The interactive shell. */
static const char shell_interactive[] = SHELL_UNSET
	"if [ -x /bin/bash ]; then exec /bin/bash --norc --noprofile -i; fi; exec /bin/sh -i";
/* A command on a terminal runs under an interactive bash (without its
 * rc files), which puts it in a process group of its own in the
 * terminal's foreground (a shell without -i cannot, where its process
 * group is outside the sandbox's pid namespace), so that ^C reaches it,
 * not the sandbox's own processes.  ^Z is ignored: nothing would resume
 * it. */
static const char shell_job[] = SHELL_UNSET
	"trap '' TSTP; if [ -x /bin/bash ]; then "
	"exec /bin/bash --norc --noprofile -ic '\"$@\"' paddock-shell \"$@\"; fi; exec \"$@\"";
/* No terminal: the shell reads its commands from standard input. */
static const char shell_piped[] = SHELL_UNSET
	"if [ -x /bin/bash ]; then exec /bin/bash --norc --noprofile; fi; exec /bin/sh";
/* What the shell's environment says, over the agent's and the gateway's:
 * a PATH of the read-only system's folders only (none in the home or the
 * workspace), no readline init file (INPUTRC: the home's .inputrc is the
 * agent's), no history file (HISTFILE empty: nothing read, nothing
 * written). */
static const char *const shell_env[] = {
	"PATH=/usr/local/bin:/usr/bin:/bin",
	"INPUTRC=/dev/null",
	"HISTFILE=",
	/* git as the reviewer types it: not the home's .gitconfig (the
	 * agent's), and of the workspace's .git/config (the agent's too)
	 * nothing that runs on its own: no fsmonitor (git status runs it), no
	 * hooks, the pager git's default (GIT_PAGER wins over core.pager and
	 * pager.CMD), which reads no lesskey file of the home's. */
	"GIT_CONFIG_GLOBAL=/dev/null",
	"GIT_CONFIG_COUNT=2",
	"GIT_CONFIG_KEY_0=core.fsmonitor", "GIT_CONFIG_VALUE_0=false",
	"GIT_CONFIG_KEY_1=core.hooksPath", "GIT_CONFIG_VALUE_1=/dev/null",
	"GIT_PAGER=less",
	"PAGER=less",
	"LESSKEY=/dev/null",
	"LESSKEYIN=/dev/null",
	"LESSHISTFILE=-",
	"PADDOCK_STEP=shell",
	NULL,
};
/* Variables of the host's list that the shell never takes from it. */
static int shell_env_banned(const char *kv)
{
	static const char *const banned[] = { "PATH=", "INPUTRC=", "HISTFILE=", "BASH_ENV=",
	                                      "ENV=", "PROMPT_COMMAND=", "PS0=", "SHELLOPTS=",
	                                      "BASHOPTS=", "CDPATH=", "GLOBIGNORE=", "LD_",
	                                      "BASH_FUNC_", "GIT_", "PAGER=", "LESS",
	                                      NULL };
	for (size_t i = 0; banned[i]; i++)
		if (!strncmp(kv, banned[i], strlen(banned[i])))
			return 1;
	return 0;
}

/* ---- the protocol's helpers ---- */

int shell_send(int fd, int type, const void *payload, size_t len, int timeout_ms)
{
	char frame[1 + SHELL_FRAME_MAX];
	if (len > SHELL_FRAME_MAX) {
		errno = EMSGSIZE;
		return -1;
	}
	frame[0] = (char)type;
	if (len)
		memcpy(frame + 1, payload, len);
	double until = clock_mono() + timeout_ms / 1000.0;
	for (;;) {
		ssize_t n = send(fd, frame, len + 1, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n == (ssize_t)len + 1)
			return 0;
		if (n >= 0 || (errno != EAGAIN && errno != EINTR))
			return -1;
		double left = until - clock_mono();
		if (left <= 0) {
			errno = ETIMEDOUT;
			return -1;
		}
		struct pollfd p = { .fd = fd, .events = POLLOUT };
		poll(&p, 1, (int)(left * 1000) + 1);
	}
}

int shell_recv(int fd, int *type, struct buf *payload, int timeout_ms)
{
	char frame[1 + SHELL_FRAME_MAX + 1];
	buf_reset(payload);
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int n = poll(&p, 1, timeout_ms);
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0)
			return 0;
		if (n < 0)
			return -1;
		ssize_t got = recv(fd, frame, sizeof frame, MSG_DONTWAIT);
		if (got < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (got <= 0 || got > 1 + SHELL_FRAME_MAX)
			return -1;
		*type = (unsigned char)frame[0];
		buf_add(payload, frame + 1, (size_t)got - 1);
		if (!payload->data)
			buf_add(payload, "", 0);
		return 1;
	}
}

long shell_peer_uid(int fd)
{
	struct ucred cr;
	socklen_t len = sizeof cr;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0 || len != sizeof cr)
		return -1;
	return (long)cr.uid;
}

void shell_round_free(struct shell_round *k)
{
	free(k->gate);
	free(k->summary);
	memset(k, 0, sizeof *k);
}

/* ---- listening ---- */

int shell_listen(const char *data_dir, const char *task_id, struct err *e)
{
	char *path = paths_task_shell_socket(data_dir, task_id);
	struct stat st;
	struct sockaddr_un sa;
	int dirfd = -1, fd = -1;
	/* A socket left by a supervisor that died goes; anything else there
	 * is no socket of ours. */
	if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode))
		unlink(path);
	if (fsx_unix_addr(path, &sa, &dirfd, e) < 0)
		goto fail;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0 ||
	    chmod(path, 0600) < 0 || listen(fd, 4) < 0) {
		err_errno(e, _("cannot listen on %s"), path);
		goto fail;
	}
	if (dirfd >= 0)
		close(dirfd);
	free(path);
	return fd;
fail:
	if (fd >= 0)
		close(fd);
	if (dirfd >= 0)
		close(dirfd);
	free(path);
	return -1;
}

void shell_unlisten(const char *data_dir, const char *task_id, int fd)
{
	if (fd < 0)
		return;
	close(fd);
	char *path = paths_task_shell_socket(data_dir, task_id);
	struct stat st;
	if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode))
		unlink(path);
	free(path);
}

/* ---- the request ---- */

struct request {
	char **argv;               /* NULL: a shell */
	int keep, tty;
	unsigned rows, cols;
	char term[64], actor[64];
	long uid;
};

static void request_free(struct request *q)
{
	for (size_t i = 0; q->argv && q->argv[i]; i++)
		free(q->argv[i]);
	free(q->argv);
}

/* s with what a terminal or the log should not get replaced: at most
 * cap - 1 bytes of [A-Za-z0-9._+@-], the others '_'; `dflt` when empty. */
static void plain_word(char *out, size_t cap, const char *s, const char *dflt)
{
	size_t n = 0;
	for (; s && *s && n + 1 < cap; s++) {
		char c = *s;
		int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		         strchr("._+@-", c);
		out[n++] = ok ? c : '_';
	}
	out[n] = '\0';
	if (!n)
		snprintf(out, cap, "%s", dflt);
}

static int request_parse(const char *text, struct request *q)
{
	json_error_t je;
	json_t *j = json_loads(text, 0, &je);
	json_t *argv = json_object_get(j, "argv");
	int rc = -1;
	memset(q, 0, sizeof *q);
	if (!json_is_object(j) || (argv && !json_is_array(argv)) ||
	    (argv && (json_array_size(argv) == 0 || json_array_size(argv) > 1024)))
		goto out;
	if (argv) {
		q->argv = xcalloc(json_array_size(argv) + 1, sizeof *q->argv);
		for (size_t i = 0; i < json_array_size(argv); i++) {
			const char *a = json_string_value(json_array_get(argv, i));
			if (!a)
				goto out;
			q->argv[i] = xstrdup(a);
		}
	}
	q->keep = json_is_true(json_object_get(j, "keep"));
	q->tty = json_is_true(json_object_get(j, "tty"));
	json_int_t rows = json_integer_value(json_object_get(j, "rows"));
	json_int_t cols = json_integer_value(json_object_get(j, "cols"));
	q->rows = rows > 0 && rows < 10000 ? (unsigned)rows : 24;
	q->cols = cols > 0 && cols < 10000 ? (unsigned)cols : 80;
	plain_word(q->term, sizeof q->term, json_string_value(json_object_get(j, "term")), "dumb");
	plain_word(q->actor, sizeof q->actor, json_string_value(json_object_get(j, "actor")),
	           "unknown");
	rc = 0;
out:
	json_decref(j);
	return rc;
}

/* A JSON frame; j is consumed. */
static int send_json(int fd, int type, json_t *j)
{
	char *s = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	int rc = s ? shell_send(fd, type, s, strlen(s), SEND_WAIT_MS) : -1;
	free(s);
	return rc;
}

static void refuse(int fd, const char *msg)
{
	(void)shell_send(fd, SHELL_REFUSE, msg, strlen(msg), 1000);
}

/* ---- the command's descriptors ---- */

/* What the backend gets (mine: the supervisor's copy, closed once the
 * command ended) and what the relay uses. */
struct io {
	int mine;                  /* the socketpair's backend end */
	int in_fd, out_fd;         /* the relay's end, twice */
};

static void io_close(struct io *io)
{
	int *all[] = { &io->mine, &io->in_fd, &io->out_fd };
	for (size_t i = 0; i < sizeof all / sizeof *all; i++) {
		if (*all[i] >= 0)
			close(*all[i]);
		*all[i] = -1;
	}
}

/* On the sandbox's session (sandbox_cmd.term), a terminal or pipes: the
 * backend's end and the relay's (twice: its input and its output),
 * SANDBOX_TERM_* frames between them.  The backend does not live in the
 * relay's thread (the session has one user: the supervisor's thread, in
 * run()), so a socketpair is all they share. */
static int io_term(struct io *io, struct err *e)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return err_errno(e, _("cannot create a socket pair"));
	io->mine = sv[1];
	io->in_fd = sv[0];
	io->out_fd = fcntl(sv[0], F_DUPFD_CLOEXEC, 3);
	if (io->out_fd < 0)
		return err_errno(e, _("cannot create a socket pair"));
	fcntl(sv[0], F_SETFL, fcntl(sv[0], F_GETFL) | O_NONBLOCK);
	return 0;
}

/* ---- the relay, a thread while the command runs ---- */

_Static_assert(SANDBOX_TERM_MAX <= SHELL_FRAME_MAX, "a backend frame fits a client frame");

struct relay {
	int sock, lfd, cmd_fd, tty;
	int eof_sent;              /* the input's end was passed on */
	int in_fd, out_fd;
	int wake;                  /* readable once the command ended */
	volatile int stop;         /* the run's stop flag */
	int gone, decided;         /* the client went away; the scheduler spoke */
	int in_eof;                /* the client's standard input ended */
	struct buf in;             /* typed, not yet taken */
	char frame[1 + SHELL_FRAME_MAX];
	size_t flen;               /* a frame waiting for room in the socket */
	int log_fd, capped;
	uint64_t *used, cap;
	const char *actor, *task_id;
};

static void relay_log(struct relay *rl, const char *p, size_t n)
{
	if (rl->capped || rl->log_fd < 0)
		return;
	if (rl->cap && *rl->used + n > rl->cap) {
		size_t room = *rl->used < rl->cap ? (size_t)(rl->cap - *rl->used) : 0;
		(void)fsx_write_all(rl->log_fd, p, room);
		(void)fsx_write_all(rl->log_fd, LOG_CAPPED, sizeof LOG_CAPPED - 1);
		*rl->used = rl->cap;
		rl->capped = 1;
		return;
	}
	(void)fsx_write_all(rl->log_fd, p, n);
	*rl->used += n;
}

static void relay_gone(struct relay *rl)
{
	rl->gone = 1;
	rl->stop = 1;
	rl->flen = 0;
}

static void relay_flush(struct relay *rl)
{
	if (!rl->flen || rl->gone)
		return;
	ssize_t n = send(rl->sock, rl->frame, rl->flen, MSG_NOSIGNAL | MSG_DONTWAIT);
	if (n == (ssize_t)rl->flen)
		rl->flen = 0;
	else if (n >= 0 || (errno != EAGAIN && errno != EINTR))
		relay_gone(rl);
}

/* What the command printed (a frame from the backend on out_fd): into
 * the log and a frame of ours, its type byte where the backend's was. */
static void relay_output(struct relay *rl)
{
	int type = SHELL_STDOUT;
	ssize_t n = recv(rl->out_fd, rl->frame, 1 + SHELL_FRAME_MAX, MSG_DONTWAIT);
	if (n > 0 && rl->frame[0] == SANDBOX_TERM_ERROR)
		type = SHELL_STDERR;
	else if (n > 0 && rl->frame[0] != SANDBOX_TERM_OUTPUT)
		return;
	if (n > 0)
		n--;
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		/* The backend's end is closed. */
		close(rl->out_fd);
		rl->out_fd = -1;
		return;
	}
	relay_log(rl, rl->frame + 1, (size_t)n);
	if (rl->gone)
		return;
	rl->frame[0] = (char)type;
	rl->flen = (size_t)n + 1;
	relay_flush(rl);
}

/* A frame from the client. */
static void relay_client(struct relay *rl)
{
	int type;
	struct buf b = {0};
	int got = shell_recv(rl->sock, &type, &b, 0);
	if (got < 0) {
		relay_gone(rl);
	} else if (got > 0 && type == SHELL_INPUT && rl->in_fd >= 0) {
		buf_add(&rl->in, b.data, b.len);
	} else if (got > 0 && type == SHELL_WINCH && rl->tty) {
		unsigned rows = 0, cols = 0;
		if (sscanf(b.data, "%u %u", &rows, &cols) == 2 && rows && cols && rows < 10000 &&
		    cols < 10000) {
			char size[32];
			int len = snprintf(size, sizeof size, "%u %u", rows, cols);
			if (rl->in_fd >= 0)
				(void)shell_send(rl->in_fd, SANDBOX_TERM_WINCH, size, (size_t)len,
				                 SEND_WAIT_MS);
		}
	} else if (got > 0 && type == SHELL_EOF) {
		rl->in_eof = 1;
	}
	buf_free(&b);
}

static void relay_input(struct relay *rl)
{
	char frame[1 + SANDBOX_TERM_MAX];
	size_t k = rl->in.len < SANDBOX_TERM_MAX ? rl->in.len : SANDBOX_TERM_MAX;
	frame[0] = SANDBOX_TERM_INPUT;
	memcpy(frame + 1, rl->in.data, k);
	ssize_t n = send(rl->in_fd, frame, k + 1, MSG_NOSIGNAL | MSG_DONTWAIT);
	if (n > 0)
		n--;
	if (n > 0) {
		memmove(rl->in.data, rl->in.data + n, rl->in.len - (size_t)n);
		rl->in.len -= (size_t)n;
	} else if (n < 0 && errno != EAGAIN && errno != EINTR) {
		buf_reset(&rl->in);  /* the command closed its input */
	}
}

/* Another client while a session is open: told so. */
static void relay_refuse_other(struct relay *rl)
{
	int c = accept4(rl->lfd, NULL, NULL, SOCK_CLOEXEC);
	if (c < 0)
		return;
	char msg[256];
	snprintf(msg, sizeof msg, _("a shell session of %s is open on task %s; wait until it "
	                            "ends"), rl->actor, rl->task_id);
	refuse(c, msg);
	close(c);
}

/* The poll set of one turn; idx[] gets each descriptor's place, -1 when
 * it is not watched this turn. */
enum { P_SOCK, P_IN, P_OUT, P_CMD, P_LISTEN, P_WAKE, P_N };

static nfds_t relay_pollset(struct relay *rl, int ending, struct pollfd *p, int idx[P_N])
{
	nfds_t n = 0;
	struct { int fd; short ev; } want[P_N] = {
		[P_SOCK] = { rl->gone ? -1 : rl->sock,
		             (short)((rl->in.len < INPUT_MAX ? POLLIN : 0) | (rl->flen ? POLLOUT : 0)) },
		[P_IN] = { rl->in.len ? rl->in_fd : -1, POLLOUT },
		[P_OUT] = { rl->flen ? -1 : rl->out_fd, POLLIN },
		[P_CMD] = { rl->decided ? -1 : rl->cmd_fd, POLLIN },
		[P_LISTEN] = { rl->lfd, POLLIN },
		[P_WAKE] = { ending ? -1 : rl->wake, POLLIN },
	};
	for (int i = 0; i < P_N; i++) {
		idx[i] = -1;
		if (want[i].fd < 0)
			continue;
		idx[i] = (int)n;
		p[n++] = (struct pollfd){ .fd = want[i].fd, .events = want[i].ev };
	}
	return n;
}

static int ready(const struct pollfd *p, const int idx[P_N], int i, short ev)
{
	return idx[i] >= 0 && (p[idx[i]].revents & (ev | POLLHUP | POLLERR | POLLNVAL));
}

static void *relay_run(void *arg)
{
	struct relay *rl = arg;
	int ending = 0;
	double until = 0;
	for (;;) {
		struct pollfd p[P_N];
		int idx[P_N];
		nfds_t n = relay_pollset(rl, ending, p, idx);
		if (poll(p, n, ending ? 100 : -1) < 0 && errno != EINTR)
			break;
		if (ready(p, idx, P_WAKE, POLLIN)) {
			ending = 1;
			until = clock_mono() + DRAIN_S;
		}
		if (ready(p, idx, P_CMD, POLLIN))
			rl->decided = 1, rl->stop = 1;
		if (ready(p, idx, P_LISTEN, POLLIN))
			relay_refuse_other(rl);
		if (ready(p, idx, P_SOCK, POLLOUT))
			relay_flush(rl);
		if (ready(p, idx, P_SOCK, POLLIN))
			relay_client(rl);
		if (ready(p, idx, P_IN, POLLOUT))
			relay_input(rl);
		if (ready(p, idx, P_OUT, POLLIN))
			relay_output(rl);
		if (rl->in_eof && !rl->in.len && !rl->tty && rl->in_fd >= 0 && !rl->eof_sent) {
			(void)shell_send(rl->in_fd, SANDBOX_TERM_EOF, "", 0, SEND_WAIT_MS);
			rl->eof_sent = 1;
		}
		if (ending && ((rl->out_fd < 0 && !rl->flen) ||
		               clock_mono() > until))
			break;
	}
	/* What the last turns could not send goes now, or never. */
	if (rl->flen && !rl->gone && shell_send(rl->sock, (unsigned char)rl->frame[0],
	                                        rl->frame + 1, rl->flen - 1, 2000) < 0)
		relay_gone(rl);
	rl->flen = 0;
	return NULL;
}

/* ---- a session ---- */

struct session {
	const struct shell_host *h;
	struct request q;
	int sock, lfd;
	struct io io;
	struct relay rl;
	struct sandbox_result res;
	double started;
	char why[16];              /* SHELL_WHY_*, or "" */
};

static void note(const struct shell_host *h, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void note(const struct shell_host *h, const char *fmt, ...)
{
	/* In the C locale, as the rest of the task log ("2.5 s"). */
	struct buf line = {0};
	va_list ap;
	va_start(ap, fmt);
	buf_vprintf_c(&line, fmt, ap);
	va_end(ap);
	if (line.len > 1023)
		line.data[line.len = 1023] = '\0';
	if (h->note)
		h->note(h->arg, line.data ? line.data : "");
	buf_free(&line);
}

/* The command line as the log shows it: one line, at most 300 bytes. */
static void cmdline_text(const struct request *q, char *out, size_t cap)
{
	struct buf b = {0};
	if (!q->argv)
		buf_adds(&b, q->tty ? "(an interactive shell)" : "(a shell reading standard input)");
	for (size_t i = 0; q->argv && q->argv[i]; i++) {
		if (i)
			buf_addc(&b, ' ');
		for (const char *c = q->argv[i]; *c; c++)
			buf_addc(&b, (unsigned char)*c < 0x20 || *c == 0x7f ? '?' : *c);
	}
	snprintf(out, cap, "%.300s", b.data ? b.data : "");
	buf_free(&b);
}

/* The argv and environment the sandbox runs (into v and env, owned by
 * the session's request and host but for the strings made here, which
 * go into own). */
static void session_command(struct session *ss, const char **v, size_t vcap,
                            const char **env, size_t ecap, char *own[3])
{
	const struct request *q = &ss->q;
	size_t n = 0;
	if (q->tty || !q->argv) {
		v[n++] = "/bin/sh";
		v[n++] = "-c";
		v[n++] = !q->argv ? (q->tty ? shell_interactive : shell_piped) : shell_job;
		v[n++] = "paddock-shell";
	}
	for (size_t i = 0; q->argv && q->argv[i] && n + 1 < vcap; i++)
		v[n++] = q->argv[i];
	v[n] = NULL;
	own[0] = xasprintf("TERM=%s", q->tty ? q->term : "dumb");
	own[1] = xasprintf("PS1=[paddock %s] \\w\\$ ", ss->h->task_id);
	own[2] = xasprintf("PADDOCK_SHELL_ACTOR=%s", q->actor);
	size_t k = 0;
	/* The host's list first: what comes later wins. */
	for (size_t i = 0; ss->h->env && ss->h->env[i] && k + 8 < ecap; i++)
		if (!shell_env_banned(ss->h->env[i]))
			env[k++] = ss->h->env[i];
	for (size_t i = 0; shell_env[i]; i++)
		env[k++] = shell_env[i];
	for (int i = 0; i < 3; i++)
		env[k++] = own[i];
	env[k] = NULL;
}

/* Runs the command with the relay beside it: 0 with ss->res, or -1 with
 * e (nothing ran). */
static int session_run(struct session *ss, struct err *e)
{
	const struct shell_host *h = ss->h;
	const char *v[1100], *env[128];
	char *own[3];
	session_command(ss, v, sizeof v / sizeof *v, env, sizeof env / sizeof *env, own);
	int wake[2];
	if (pipe2(wake, O_CLOEXEC) < 0) {
		for (int i = 0; i < 3; i++)
			free(own[i]);
		return err_errno(e, _("cannot create a pipe"));
	}
	struct relay *rl = &ss->rl;
	*rl = (struct relay){ .sock = ss->sock, .lfd = ss->lfd, .cmd_fd = h->cmd_fd,
	                      .tty = ss->q.tty, .in_fd = ss->io.in_fd,
	                      .out_fd = ss->io.out_fd, .wake = wake[0],
	                      .log_fd = h->log_fd, .used = h->output_used, .cap = h->output_cap,
	                      .actor = ss->q.actor, .task_id = h->task_id };
	/* The relay owns them now. */
	ss->io.in_fd = ss->io.out_fd = -1;
	struct sandbox_cmd cmd = {
		.argv = v, .env = env, .out_fd = h->log_fd,
		.deadline = h->timeout > 0 ? clock_mono() + h->timeout : 0,
		.tty = ss->q.tty, .stop = &rl->stop,
		.term = &ss->io.mine, .rows = ss->q.rows, .cols = ss->q.cols,
	};
	pthread_t th;
	int threaded = pthread_create(&th, NULL, relay_run, rl) == 0;
	int rc = threaded ? h->be->run(h->sb, &cmd, &ss->res, e)
	                  : err_set(e, _("cannot start the shell's relay"));
	/* The command is gone, and with it every copy of the backend's end
	 * but ours: the relay reads the output still queued, then the end.
	 * Ours is closed only once nothing is queued for it (what the relay
	 * sent after the backend's last read: the input's end, keys): a
	 * socket released with frames unread resets its peer, which then
	 * loses the output it had not read yet. */
	if (ss->io.mine >= 0)
		shutdown(ss->io.mine, SHUT_WR);
	for (int i = 0; i < 3; i++)
		free(own[i]);
	if (threaded) {
		(void)fsx_write_all(wake[1], "x", 1);
		pthread_join(th, NULL);
	}
	if (ss->io.mine >= 0) {
		char sink[1 + SANDBOX_TERM_MAX + 1];
		while (recv(ss->io.mine, sink, sizeof sink, MSG_DONTWAIT) > 0)
			;
		close(ss->io.mine);
	}
	ss->io.mine = -1;
	close(wake[0]);
	close(wake[1]);
	int *fds[] = { &rl->in_fd, &rl->out_fd };
	for (size_t i = 0; i < 2; i++)
		if (*fds[i] >= 0) {
			close(*fds[i]);
			*fds[i] = -1;
		}
	buf_free(&rl->in);
	return rc;
}

/* The exit status paddock shell gives, and why paddock ended the
 * session when it did. */
static int session_status(struct session *ss)
{
	const struct sandbox_result *r = &ss->res;
	ss->why[0] = '\0';
	switch (r->end) {
	case SANDBOX_EXITED:
		return r->code;
	case SANDBOX_SIGNALED:
		return 128 + r->code;
	case SANDBOX_TIMEOUT:
		return 124;
	default:
		snprintf(ss->why, sizeof ss->why, "%s", ss->rl.decided ? SHELL_WHY_DECIDED :
		         ss->rl.gone ? SHELL_WHY_GONE : SHELL_WHY_CANCELLED);
		return 1;
	}
}

static const char *end_word(enum sandbox_end end)
{
	switch (end) {
	case SANDBOX_EXITED: return "exited";
	case SANDBOX_SIGNALED: return "signaled";
	case SANDBOX_TIMEOUT: return "timeout";
	case SANDBOX_OUTPUT_LIMIT: return "output-limit";
	default: return "cancelled";
	}
}

/* The session ended: logged, and told. */
static void session_ended(struct session *ss)
{
	int status = session_status(ss);
	char how[128];
	sandbox_end_describe(&ss->res, how, sizeof how);
	note(ss->h, "shell: closed after %.1f s: %s%s%s", clock_mono() - ss->started, how,
	     ss->why[0] ? ", ended by " : "", ss->why);
	if (ss->rl.gone)
		return;
	json_t *j = json_pack("{s:s, s:i, s:i, s:i}", "end", end_word(ss->res.end),
	                      "code", ss->res.code, "status", status, "hit", (int)ss->res.hit);
	json_object_set_new(j, "why", ss->why[0] ? json_string(ss->why) : json_null());
	if (send_json(ss->sock, SHELL_END, j) < 0)
		ss->rl.gone = 1;
}

/* The last frame: what became of the session's changes. */
static void session_done(struct session *ss, const char *kept, const struct shell_round *k,
                         const char *error)
{
	if (ss->rl.gone)
		return;
	json_t *j = json_pack("{s:s}", "kept", kept);
	if (k) {
		json_object_set_new(j, "round", json_integer(k->round));
		json_object_set_new(j, "head", json_string(k->head));
		json_object_set_new(j, "tests", json_integer(k->tests));
	} else {
		json_object_set_new(j, "head", json_string(ss->h->head));
	}
	if (error)
		json_object_set_new(j, "error", json_string(error));
	(void)send_json(ss->sock, SHELL_DONE, j);
}

/* 1 when the scheduler has spoken (a decision) since; nothing is read. */
static int scheduler_spoke(const struct shell_host *h)
{
	struct pollfd p = { .fd = h->cmd_fd, .events = POLLIN };
	return h->cmd_fd >= 0 && poll(&p, 1, 0) > 0;
}

/* The round offered to the client, which records it: 1 when it did, 0
 * when it did not (*error says why, or the client went away). */
static int session_offer(struct session *ss, const struct shell_round *k, char *error,
                         size_t cap)
{
	const struct shell_host *h = ss->h;
	struct err e = {{0}};
	char *path = paths_task_shell_gate(h->data_dir, h->task_id);
	int rc = fsx_write_file(path, k->gate, strlen(k->gate), 0600, &e);
	free(path);
	if (rc < 0) {
		snprintf(error, cap, "%s", e.msg);
		return 0;
	}
	json_t *j = json_pack("{s:i, s:s, s:s, s:s, s:i}", "round", k->round, "from", k->from,
	                      "head", k->head, "summary", k->summary ? k->summary : "",
	                      "tests", k->tests);
	struct buf b = {0};
	int type = 0, got = send_json(ss->sock, SHELL_OFFER, j) < 0 ? -1 : 1;
	/* What the client sent for the command after it ended (its input's
	 * end, a keystroke, a window size) may still be queued before the
	 * answer: it is passed over. */
	double until = clock_mono() + ANSWER_WAIT_MS / 1000.0;
	while (got > 0) {
		int left = (int)((until - clock_mono()) * 1000);
		got = left > 0 ? shell_recv(ss->sock, &type, &b, left) : 0;
		if (got > 0 && type != SHELL_INPUT && type != SHELL_WINCH && type != SHELL_EOF)
			break;
	}
	json_error_t je;
	json_t *a = got > 0 && type == SHELL_ANSWER ? json_loads(b.data, 0, &je) : NULL;
	int ok = json_is_true(json_object_get(a, "ok"));
	const char *why = json_string_value(json_object_get(a, "error"));
	snprintf(error, cap, "%s", why ? why : ok ? "" :
	         _("the client went away before it recorded the round"));
	if (got <= 0)
		ss->rl.gone = 1;
	json_decref(a);
	buf_free(&b);
	return ok;
}

/* keep: the session's changes as a reviewer's round.  0 when the
 * workspace is at a head of the task's afterwards, -1 when it must be
 * put back (error says why). */
static int session_keep(struct session *ss, char *error, size_t cap)
{
	const struct shell_host *h = ss->h;
	struct shell_round k = {0};
	struct err e = {{0}};
	note(h, "shell: keeping the session's changes as round %d", h->round + 1);
	int rc = h->keep(h->arg, ss->q.actor, &k, &e);
	if (rc == 1) {
		note(h, "shell: the session changed nothing; no reviewer's round");
		session_done(ss, SHELL_KEPT_NONE, NULL, NULL);
		return 0;
	}
	if (rc < 0) {
		snprintf(error, cap, "%s", e.msg);
		return -1;
	}
	int recorded = 0;
	if (scheduler_spoke(h))
		snprintf(error, cap, "%s", _("the task was decided while its changes were checked"));
	else
		recorded = session_offer(ss, &k, error, cap);
	h->kept(h->arg, &k, recorded);
	if (recorded) {
		note(h, "shell: round %d (a reviewer's, by %s) is the task's: %s", k.round,
		     ss->q.actor, k.head);
		session_done(ss, SHELL_KEPT_ROUND, &k, NULL);
	}
	shell_round_free(&k);
	return recorded ? 0 : -1;
}

/* After the command: the changes kept, or the workspace put back.  -1
 * with e when it could not be put back. */
static int session_finish(struct session *ss, struct err *e)
{
	const struct shell_host *h = ss->h;
	char error[ERR_MAX] = "";
	if (!strcmp(ss->why, SHELL_WHY_CANCELLED)) {
		/* Nothing runs in the sandbox any more: it goes. */
		err_set(e, "%s", _("the task was cancelled or spent its budget, or paddock is "
		                   "stopping"));
		session_done(ss, SHELL_KEPT_BROKEN, NULL, e->msg);
		return -1;
	}
	if (!strcmp(ss->why, SHELL_WHY_DECIDED) && ss->q.keep)
		snprintf(error, sizeof error, "%s",
		         _("the task was decided, or changes were requested, while the shell ran"));
	else if (ss->q.keep && !ss->why[0] && session_keep(ss, error, sizeof error) == 0)
		return 0;
	if (error[0])
		note(h, "shell: the session's changes are not kept: %s", error);
	if (h->reset(h->arg, e) < 0) {
		note(h, "shell: the workspace could not be put back at %s: %s; the sandbox is torn "
		     "down", h->head, e->msg);
		session_done(ss, SHELL_KEPT_BROKEN, NULL, e->msg);
		return -1;
	}
	note(h, "shell: the workspace is back at %s", h->head);
	session_done(ss, error[0] ? SHELL_KEPT_FAILED : SHELL_KEPT_RESET, NULL,
	             error[0] ? error : NULL);
	return 0;
}

/* One accepted client: its request, then the session. */
static int session(struct session *ss, struct err *e)
{
	const struct shell_host *h = ss->h;
	struct request *q = &ss->q;
	char text[400];
	struct err se = {{0}};
	ss->io = (struct io){ -1, -1, -1 };
	/* The command runs on the sandbox's session (no sandbox of its
	 * own): every backend here has one. */
	if (!h->be->term || !h->be->term(h->sb)) {
		refuse(ss->sock, _("this sandbox runs no shell"));
		return 0;
	}
	if (io_term(&ss->io, &se) < 0) {
		io_close(&ss->io);
		refuse(ss->sock, se.msg);
		return 0;
	}
	json_t *a = json_pack("{s:i, s:s}", "round", h->round, "head", h->head);
	if (send_json(ss->sock, SHELL_ACCEPT, a) < 0) {
		io_close(&ss->io);
		return 0;
	}
	cmdline_text(q, text, sizeof text);
	note(h, "shell: opened by %s (uid %ld)%s: %s", q->actor, q->uid,
	     q->keep ? ", its changes to be kept" : "", text);
	ss->started = clock_mono();
	int rc = session_run(ss, &se);
	io_close(&ss->io);
	if (rc < 0) {
		note(h, "shell: %s", se.msg);
		refuse(ss->sock, se.msg);
		if (se.kind != ERR_RUNNER)
			return 0;
		/* The sandbox's session is over (runner.h): the sandbox goes. */
		*e = se;
		return -1;
	}
	session_ended(ss);
	return session_finish(ss, e);
}

/* Closes a client's connection once the client closed its end, or after
 * CLOSE_WAIT_MS, reading what it still sent meanwhile: a socket closed
 * with frames unread resets the connection, and the client would lose the
 * last frames it had not read yet (the end, what became of the changes). */
static void client_close(int c)
{
	char frame[1 + SHELL_FRAME_MAX + 1];
	double until = clock_mono() + CLOSE_WAIT_MS / 1000.0;
	for (;;) {
		struct pollfd p = { .fd = c, .events = POLLIN };
		int left = (int)((until - clock_mono()) * 1000);
		if (left <= 0 || poll(&p, 1, left) <= 0)
			break;
		ssize_t n = recv(c, frame, sizeof frame, MSG_DONTWAIT);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
			break;
	}
	close(c);
}

int shell_serve(int lfd, const struct shell_host *h, struct err *e)
{
	int c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (c < 0)
		return 0;
	long uid = shell_peer_uid(c);
	if (uid < 0 || (uid != (long)geteuid() && uid != 0)) {
		note(h, "shell: refused a connection from uid %ld", uid);
		close(c);
		return 0;
	}
	struct session ss = { .h = h, .sock = c, .lfd = lfd };
	struct buf b = {0};
	int type = 0, rc = 0;
	if (shell_recv(c, &type, &b, REQUEST_WAIT_MS) <= 0 || type != SHELL_REQUEST ||
	    request_parse(b.data, &ss.q) < 0) {
		refuse(c, _("a malformed request to the shell; is this paddock's own client?"));
	} else {
		ss.q.uid = uid;
		rc = session(&ss, e);
	}
	request_free(&ss.q);
	buf_free(&b);
	client_close(c);
	return rc;
}
