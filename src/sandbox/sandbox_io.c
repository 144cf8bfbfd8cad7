/* What the sandbox backends share; see sandbox_int.h. */
#include "autoconfig.h"
#include "sandbox_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "clock.h"
#include "fsx.h"
#include "i18n.h"
#include "runner.h"
#include "sanitize.h"

/* Seconds of CPU time a process may use beyond its sandbox's share. */
#define CPU_SLACK_S 2
/* How often a watch looks (a walk over /proc): not on every chunk read. */
#define WATCH_MS 200
/* How long a runner has to end a run it was told to kill. */
#define RUNNER_KILL_S 10.0

const char sandbox_gitconfig_data[] =
	"[user]\n"
	"\tname = paddock agent\n"
	"\temail = agent@paddock.invalid\n"
	"[safe]\n"
	"\tdirectory = *\n"
	"[init]\n"
	"\tdefaultBranch = main\n"
	"[core]\n"
	"\thooksPath = /dev/null\n";

/* ---- the command's output ---- */

void sandbox_drain_init(struct sandbox_drain *d, const struct sandbox_cmd *cmd, uint64_t cap)
{
	d->out_fd = cmd->out_fd;
	d->cap = cap;
	d->local_used = 0;
	d->used = cmd->output_used ? cmd->output_used : &d->local_used;
	d->capped = 0;
	d->last = 0;
}

int sandbox_drain_chunk(struct sandbox_drain *d, const char *p, size_t n)
{
	size_t room;

	if (d->capped || n == 0)
		return 0;
	if (d->cap == 0 || *d->used + n <= d->cap) {
		fsx_write_all(d->out_fd, p, n);
		*d->used += n;
		d->last = p[n - 1];
		return 0;
	}
	room = *d->used < d->cap ? (size_t)(d->cap - *d->used) : 0;
	if (room) {
		fsx_write_all(d->out_fd, p, room);
		d->last = p[room - 1];
	}
	if (d->last != '\n' && d->last != 0)
		fsx_write_all(d->out_fd, "\n", 1);
	fsx_write_all(d->out_fd, SANDBOX_OUTPUT_MARKER, sizeof SANDBOX_OUTPUT_MARKER - 1);
	*d->used = d->cap;
	d->capped = 1;
	return 1;
}

int sandbox_run_begin(const struct sandbox_cmd *cmd, struct sandbox_result *r,
                      struct err *e)
{
	memset(r, 0, sizeof *r);
	if (!cmd->argv || !cmd->argv[0])
		return err_set(e, _("no command to run in the sandbox"));
	for (size_t i = 0; cmd->env && cmd->env[i]; i++) {
		const char *eq = strchr(cmd->env[i], '=');
		if (!eq || eq == cmd->env[i])
			return err_set(e, _("invalid environment entry \"%s\" (expected NAME=VALUE)"),
			               cmd->env[i]);
	}
	if (sandbox_cancel_requested()) {
		r->end = SANDBOX_CANCELLED;
		return 1;
	}
	return 0;
}

/* ---- a command on a sandbox session ---- */

struct runner_out {
	struct sandbox_drain d;
	int capped;
	const struct sandbox_cmd *cmd;
	int term_fd;               /* *cmd->term, or -1: the output goes to the relay */
	int term_gone;             /* the relay takes no more */
};

/* Whether a command was stopped: a cancel, its stop flag, its deadline. */
static int run_stopped(const struct sandbox_cmd *cmd)
{
	return sandbox_cancel_requested() || (cmd->stop && *cmd->stop) ||
	       (cmd->deadline > 0 && clock_mono() >= cmd->deadline);
}

/* Output for an interactive command's relay, in SANDBOX_TERM_OUTPUT
 * frames: a relay that reads slowly is waited for, as a pty's reader
 * would be, until the command is stopped (the rest is then dropped). */
static void term_output(struct runner_out *o, int type, const char *p, size_t n)
{
	char frame[1 + SANDBOX_TERM_MAX];
	while (n && !o->term_gone) {
		size_t k = n < SANDBOX_TERM_MAX ? n : SANDBOX_TERM_MAX;
		frame[0] = (char)type;
		memcpy(frame + 1, p, k);
		for (;;) {
			ssize_t w = send(o->term_fd, frame, k + 1, MSG_NOSIGNAL | MSG_DONTWAIT);
			if (w == (ssize_t)k + 1)
				break;
			if (w < 0 && (errno == EAGAIN || errno == EINTR) && !run_stopped(o->cmd)) {
				struct pollfd pf = { .fd = o->term_fd, .events = POLLOUT };
				poll(&pf, 1, WATCH_MS);
				continue;
			}
			o->term_gone = 1;
			return;
		}
		p += k;
		n -= k;
	}
}

static void runner_out_chunk(void *arg, uint32_t id, uint64_t offset, const char *data,
                             size_t len)
{
	struct runner_out *o = arg;
	(void)id;
	(void)offset;
	if (o->term_fd >= 0)
		term_output(o, SANDBOX_TERM_OUTPUT, data, len);
	else if (sandbox_drain_chunk(&o->d, data, len))
		o->capped = 1;
}

/* An interactive command's standard error on pipes (RP_RUN_STDERR). */
static void runner_err_chunk(void *arg, uint32_t id, uint64_t offset, const char *data,
                             size_t len)
{
	(void)id;
	(void)offset;
	term_output(arg, SANDBOX_TERM_ERROR, data, len);
}

/* The session failed: the message is the runner client's, the kind says
 * whose failure it is. */
static int runner_failed(struct runner *rn, struct err *e)
{
	return runner_fault(rn) != RUNNER_OK ? err_kind_mark(e, ERR_RUNNER) : -1;
}

int sandbox_runner_put(struct runner *rn, const char *host, const char *inside, unsigned mode,
                       uint64_t cap, struct err *e)
{
	struct stat st;
	int fd = open(host, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return err_errno(e, _("cannot open %s"), host);
	int rc = -1;
	if (fstat(fd, &st) < 0)
		err_errno(e, _("cannot stat %s"), host);
	else if (!S_ISREG(st.st_mode))
		err_set(e, _("%s is not a regular file"), host);
	else if ((uint64_t)st.st_size > cap)
		err_set(e, _("%s is %lld bytes, over the cap of %" PRIu64 " bytes for %s"), host,
		        (long long)st.st_size, cap, inside);
	else if (runner_file_put(rn, inside, mode, fd, (uint64_t)st.st_size,
	                         clock_mono() + SANDBOX_FILE_SECONDS, e) < 0)
		runner_failed(rn, e);
	else
		rc = 0;
	close(fd);
	return rc;
}

int sandbox_runner_get(struct runner *rn, const char *inside, const char *host, uint64_t cap,
                       struct err *e)
{
	int fd = open(host, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return err_errno(e, _("cannot create %s"), host);
	int rc = runner_file_get(rn, inside, fd, cap, NULL, clock_mono() + SANDBOX_FILE_SECONDS,
	                         e) < 0 ? runner_failed(rn, e) : 0;
	if (close(fd) < 0 && rc == 0)
		rc = err_errno(e, _("cannot write %s"), host);
	if (rc < 0)
		unlink(host);
	return rc;
}

/* Whether the relay closed its end of sandbox_cmd.term (an empty frame
 * reads as 0 bytes too): nothing queued, and the peer gone. */
static int term_closed(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN | POLLRDHUP };
	int queued = 0;
	if (poll(&p, 1, 0) < 0)
		return 1;
	if (!(p.revents & (POLLHUP | POLLRDHUP | POLLERR | POLLNVAL)))
		return 0;
	return ioctl(fd, FIONREAD, &queued) < 0 || queued == 0;
}

/* What the relay of an interactive command sent (sandbox_cmd.term):
 * typed bytes and the input's end as STDIN, a window size as RESIZE.
 * *open becomes 0 once the relay closed its end.  -1 when the session
 * failed. */
static int term_input(struct runner *rn, uint32_t id, struct runner_out *o, int *open,
                      struct err *e)
{
	char frame[1 + SANDBOX_TERM_MAX + 1];
	/* What is there now, a bounded turn: the runner's output is read
	 * between turns. */
	for (int turn = 0; turn < 16; turn++) {
		/* Not past the runner's window: what the command does not read
		 * waits in the relay, and then in the client. */
		if (runner_stdin_room(rn, id) < SANDBOX_TERM_MAX)
			return 0;
		ssize_t n = recv(o->term_fd, frame, sizeof frame - 1, MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return 0;
		if (n == 0 && !term_closed(o->term_fd))
			continue;  /* an empty frame (a client of the root helper's) */
		if (n <= 0) {
			*open = 0;
			return 0;
		}
		frame[n] = '\0';
		unsigned rows = 0, cols = 0;
		int rc = 0;
		if (frame[0] == SANDBOX_TERM_INPUT && n > 1)
			rc = runner_stdin(rn, id, frame + 1, (size_t)n - 1, e);
		else if (frame[0] == SANDBOX_TERM_EOF)
			rc = runner_stdin(rn, id, "", 0, e);
		else if (frame[0] == SANDBOX_TERM_WINCH &&
		         sscanf(frame + 1, "%u %u", &rows, &cols) == 2 && rows && cols &&
		         rows < 10000 && cols < 10000)
			rc = runner_resize(rn, id, rows, cols, e);
		if (rc < 0)
			return -1;
	}
	return 0;
}

/* Waits for the run's END at 200 ms steps, killing it at the deadline, a
 * cancel, a stop or the output cap.  Returns why it was killed. */
static int runner_run_wait(struct runner *rn, uint32_t id, const struct sandbox_cmd *cmd,
                           struct runner_out *o, sandbox_watch_fn *watch, void *warg,
                           enum sandbox_end *killed, struct runner_end *end, struct err *e)
{
	int open = o->term_fd >= 0;
	*killed = SANDBOX_EXITED;
	/* runner_step returns at each burst of output: the watch (a walk of
	 * /proc) keeps its own pace. */
	double watched = 0;
	for (;;) {
		if (watch && clock_mono() - watched >= WATCH_MS / 1000.0) {
			watch(warg);
			watched = clock_mono();
		}
		double until = clock_mono() + WATCH_MS / 1000.0;
		if (cmd->deadline > 0 && cmd->deadline < until)
			until = cmd->deadline;
		if (open) {
			/* An interactive command: the relay's keys as soon as
			 * they come, the runner's output as soon as it comes. */
			int room = runner_stdin_room(rn, id) >= SANDBOX_TERM_MAX;
			/* The keys, and the session with its gateway streams
			 * (an agent run in the shell reaches the model). */
			struct pollfd p[1 + RUNNER_POLLFDS_MAX];
			p[0] = (struct pollfd){ .fd = room ? o->term_fd : -1, .events = POLLIN };
			size_t n = 1 + runner_pollfds(rn, p + 1);
			double left = until - clock_mono();
			poll(p, n, left > 0 ? (int)(left * 1000.0) + 1 : 0);
			if (p[0].revents && term_input(rn, id, o, &open, e) < 0)
				return runner_failed(rn, e);
			until = clock_mono();
		}
		int st = runner_step(rn, id, until, e);
		if (st < 0)
			return runner_failed(rn, e);
		if (st == 1)
			break;
		if (o->capped)
			*killed = SANDBOX_OUTPUT_LIMIT;
		else if (sandbox_cancel_requested() || (cmd->stop && *cmd->stop))
			*killed = SANDBOX_CANCELLED;
		else if (cmd->deadline > 0 && clock_mono() >= cmd->deadline)
			*killed = SANDBOX_TIMEOUT;
		if (*killed != SANDBOX_EXITED) {
			if (runner_kill(rn, id, SIGKILL, e) < 0)
				return runner_failed(rn, e);
			break;
		}
	}
	if (runner_wait(rn, id, clock_mono() + RUNNER_KILL_S, end, e) < 0)
		return runner_failed(rn, e);
	return 0;
}

int sandbox_runner_run(struct runner *rn, const struct sandbox_cmd *cmd, char *const *argv,
                       char *const *env, const char *cwd, const struct limits *l,
                       unsigned flags, sandbox_watch_fn *watch, void *warg,
                       struct sandbox_result *r, struct err *e)
{
	struct runner_out o = { .capped = 0, .cmd = cmd, .term_fd = cmd->term ? *cmd->term : -1 };
	sandbox_drain_init(&o.d, cmd, l->output);
	struct runner_cmd rc = { .argv = argv, .env = env, .cwd = cwd, .flags = flags,
	                         .output = runner_out_chunk, .arg = &o };
	rc.limits.file_size = l->disk;
	if (cmd->deadline > 0) {
		double left = cmd->deadline - clock_mono();
		rc.limits.time_ms = left > 0 ? (uint64_t)(left * 1000.0) + 1 : 1;
	}
	if (o.term_fd >= 0) {
		/* The relay logs within the cap, and the session goes on past it
		 * (shell.h). */
		rc.flags |= cmd->tty ? RP_RUN_PTY : RP_RUN_STDIN | RP_RUN_STDERR;
		rc.errors = runner_err_chunk;
		rc.rows = cmd->rows ? cmd->rows : 24;
		rc.cols = cmd->cols ? cmd->cols : 80;
	} else if (l->output) {
		/* The runner stops the command one byte past what the cap
		 * leaves, so that the drain sees the cap passed and writes its
		 * marker. */
		rc.limits.output = (*o.d.used < l->output ? l->output - *o.d.used : 0) + 1;
	}
	uint32_t id = runner_start(rn, &rc, e);
	if (!id)
		return runner_failed(rn, e);
	enum sandbox_end killed;
	struct runner_end end;
	if (runner_run_wait(rn, id, cmd, &o, watch, warg, &killed, &end, e) < 0)
		return -1;
	/* What the command left in its group dies with it, as it would with
	 * a sandbox of its own. */
	if (runner_kill(rn, id, SIGKILL, e) < 0)
		return runner_failed(rn, e);
	if (end.how == RP_END_NOT_STARTED) {
		/* As a shell says it (the runner's words, the agent's data, go
		 * to the log like any output): status 127, so that a missing
		 * program is found and named as one. */
		char *why = sanitize_quote_str(end.message);
		char *line = xasprintf("%s\n", why);
		runner_out_chunk(&o, id, 0, line, strlen(line));
		free(line);
		free(why);
		r->end = SANDBOX_EXITED;
		r->code = 127;
		return 0;
	}
	if (killed == SANDBOX_EXITED && (end.hit & RP_HIT_OUTPUT))
		killed = SANDBOX_OUTPUT_LIMIT;
	if (killed == SANDBOX_EXITED && (end.hit & RP_HIT_TIME))
		killed = SANDBOX_TIMEOUT;
	if (killed == SANDBOX_EXITED && o.capped)
		killed = SANDBOX_OUTPUT_LIMIT;
	r->end = killed;
	r->code = 0;
	if (killed == SANDBOX_EXITED) {
		r->end = end.how == RP_END_SIGNALED ? SANDBOX_SIGNALED : SANDBOX_EXITED;
		r->code = end.code;
	}
	return 0;
}

uint64_t sandbox_cpu_rlimit(const struct limits *l, const struct sandbox_cmd *cmd)
{
	double left = cmd->deadline > 0 ? cmd->deadline - clock_mono() : l->timeout;

	if (l->cpus <= 0 || (cmd->deadline <= 0 && left <= 0))
		return 0;
	if (left < 0)
		left = 0;
	return (uint64_t)(left * l->cpus) + 1 + CPU_SLACK_S;
}

struct proc_entry {
	pid_t pid, ppid;
	uint64_t rss_pages;
	int in;                /* under root */
};

/* pid, ppid and resident pages of /proc/PID/stat; -1 when it is gone. */
static int proc_stat(const char *name, struct proc_entry *p)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%s/stat", name);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	/* The command name is in parentheses and may hold anything. */
	char *rp = strrchr(buf, ')');
	long ppid;
	unsigned long long rss;
	/* state ppid, 19 fields (pgrp .. vsize), rss */
	if (!rp || sscanf(rp + 1, " %*c %ld %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s "
	                  "%*s %*s %*s %*s %*s %*s %llu", &ppid, &rss) != 2)
		return -1;
	p->pid = (pid_t)atol(name);
	p->ppid = (pid_t)ppid;
	p->rss_pages = rss;
	p->in = 0;
	return 0;
}

size_t sandbox_tree(pid_t root, uint64_t *rss, int kill_them)
{
	return sandbox_tree_spare(root, rss, kill_them, NULL, 0, NULL);
}

size_t sandbox_tree_spare(pid_t root, uint64_t *rss, int kill_them, const pid_t *spare,
                          size_t nspare, pid_t **list)
{
	DIR *d = opendir("/proc");
	struct proc_entry *v = NULL;
	size_t n = 0, cap = 0, count = 0;
	struct dirent *de;
	if (rss)
		*rss = 0;
	if (list)
		*list = NULL;
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 256;
			v = xrealloc(v, cap * sizeof *v);
		}
		if (proc_stat(de->d_name, &v[n]) == 0)
			n++;
	}
	closedir(d);
	/* Marked from root down until nothing changes: a process's parent
	 * may come after it in /proc's order. */
	for (int changed = 1; changed;) {
		changed = 0;
		for (size_t i = 0; i < n; i++) {
			if (v[i].in)
				continue;
			int in = v[i].pid == root;
			for (size_t j = 0; !in && j < n; j++)
				in = v[j].in && v[j].pid == v[i].ppid;
			if (in)
				v[i].in = changed = 1;
		}
	}
	long page = sysconf(_SC_PAGESIZE);
	if (list)
		*list = xcalloc(n + 1, sizeof **list);
	for (size_t i = 0; i < n; i++) {
		if (!v[i].in)
			continue;
		if (list)
			(*list)[count] = v[i].pid;
		count++;
		if (rss)
			*rss += v[i].rss_pages * (uint64_t)(page > 0 ? page : 4096);
		int spared = 0;
		for (size_t j = 0; j < nspare && !spared; j++)
			spared = spare[j] == v[i].pid;
		if (kill_them && !spared)
			kill(v[i].pid, SIGKILL);
	}
	free(v);
	return count;
}

/* ---- copying files ---- */

int sandbox_inside_split(const char *inside, const char **under, const char **rel,
                         struct err *e)
{
	if (strncmp(inside, SANDBOX_OUTDIR "/", strlen(SANDBOX_OUTDIR) + 1) == 0) {
		*under = SANDBOX_OUTDIR;
		*rel = inside + strlen(SANDBOX_OUTDIR) + 1;
		return 0;
	}
	if (strncmp(inside, SANDBOX_WORKDIR "/", strlen(SANDBOX_WORKDIR) + 1) == 0) {
		*under = SANDBOX_WORKDIR;
		*rel = inside + strlen(SANDBOX_WORKDIR) + 1;
		return 0;
	}
	return err_set(e, _("%s is not under %s or %s in the sandbox"), inside, SANDBOX_OUTDIR,
	               SANDBOX_WORKDIR);
}

/* Opens the directory that holds the last component of rel, under
 * dirfd (which it takes), one component at a time without following a
 * link; *last is that component.  -1 with a message. */
static int walk_parent(int dirfd, char *path, const char *inside, char **last, struct err *e)
{
	char *save = NULL, *comp = strtok_r(path, "/", &save), *next;
	if (!comp) {
		close(dirfd);
		return err_set(e, _("%s names a directory, not a file"), inside);
	}
	for (;;) {
		next = strtok_r(NULL, "/", &save);
		if (strcmp(comp, ".") == 0 || strcmp(comp, "..") == 0) {
			close(dirfd);
			return err_set(e, _("%s contains \".\" or \"..\"; refusing it"), inside);
		}
		if (!next)
			break;
		int fd = openat(dirfd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0) {
			if (errno == ELOOP || errno == ENOTDIR)
				err_set(e, _("%s: \"%s\" is a symbolic link or not a directory; refusing "
				             "it"), inside, comp);
			else
				err_errno(e, _("cannot open %s"), inside);
			close(dirfd);
			return -1;
		}
		close(dirfd);
		dirfd = fd;
		comp = next;
	}
	*last = comp;
	return dirfd;
}

/* Copies in (at most cap bytes; it may grow while read) to a new host
 * file; removes it on failure. */
static int copy_capped(int in, const char *inside, const char *host, uint64_t cap,
                       struct err *e)
{
	uint64_t total = 0;
	int outfd = open(host, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (outfd < 0)
		return err_errno(e, _("cannot create %s"), host);
	for (;;) {
		char buf[65536];
		ssize_t n = read(in, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err_errno(e, _("cannot read %s"), inside);
			break;
		}
		if (n == 0) {
			if (close(outfd) == 0)
				return 0;
			outfd = -1;
			err_errno(e, _("cannot write %s"), host);
			break;
		}
		total += (uint64_t)n;
		if (total > cap) {  /* it grew after the check */
			err_set(e, _("%s is over the cap of %" PRIu64 " bytes"), inside, cap);
			break;
		}
		if (fsx_write_all(outfd, buf, (size_t)n) < 0) {
			err_errno(e, _("cannot write %s"), host);
			break;
		}
	}
	if (outfd >= 0)
		close(outfd);
	unlink(host);
	return -1;
}

int sandbox_copy_out_at(const char *base, const char *rel, const char *inside,
                        const char *host, uint64_t cap, uid_t owner, struct err *e)
{
	struct stat st;
	int dirfd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		return err_errno(e, _("cannot open the sandbox's %s"), base);
	char *path = xstrdup(rel), *last = NULL;
	int rc = -1, in = -1;
	dirfd = walk_parent(dirfd, path, inside, &last, e);
	if (dirfd < 0)
		goto out;
	in = openat(dirfd, last, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (in < 0) {
		if (errno == ELOOP)
			err_set(e, _("%s is a symbolic link; refusing to read it"), inside);
		else
			err_errno(e, _("cannot open %s"), inside);
	} else if (fstat(in, &st) < 0) {
		err_errno(e, _("cannot stat %s"), inside);
	} else if (!S_ISREG(st.st_mode)) {
		err_set(e, _("%s is not a regular file; refusing to read it"), inside);
	} else if (st.st_uid != owner) {
		err_set(e, _("%s is not the sandbox user's own file (it is uid %lu's); refusing "
		             "to read it"), inside, (unsigned long)st.st_uid);
	} else if ((uint64_t)st.st_size > cap) {
		err_set(e, _("%s is %lld bytes, over the cap of %" PRIu64 " bytes"), inside,
		        (long long)st.st_size, cap);
	} else {
		rc = copy_capped(in, inside, host, cap, e);
	}
out:
	if (in >= 0)
		close(in);
	if (dirfd >= 0)
		close(dirfd);
	free(path);
	return rc;
}

int sandbox_copy_in_at(const char *outdir, const char *host, const char *inside,
                       struct err *e)
{
	const char *name = inside + strlen(SANDBOX_OUTDIR) + 1;
	if (strncmp(inside, SANDBOX_OUTDIR "/", strlen(SANDBOX_OUTDIR) + 1) != 0 || !*name ||
	    strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, ".."))
		return err_set(e, _("%s is not a file name directly in %s"), inside, SANDBOX_OUTDIR);
	int dirfd = open(outdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		return err_errno(e, _("cannot open the sandbox's %s"), outdir);
	int rc = -1, in = -1, out = -1;
	if (unlinkat(dirfd, name, 0) < 0 && errno != ENOENT) {
		err_errno(e, _("cannot replace %s"), inside);
		goto done;
	}
	in = open(host, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	out = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0444);
	if (in < 0 || out < 0) {
		err_errno(e, _("cannot copy %s to %s"), host, inside);
		goto done;
	}
	char buf[65536];
	ssize_t n;
	while ((n = read(in, buf, sizeof buf)) > 0)
		if (fsx_write_all(out, buf, (size_t)n) < 0)
			break;
	if (n != 0) {
		err_errno(e, _("cannot copy %s to %s"), host, inside);
		goto done;
	}
	rc = 0;
done:
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	close(dirfd);
	return rc;
}

/* ---- changes: what the overlay's upper layer says changed ---- */

/* More than this and the answer is "/" (everything): git then checks
 * every file, which is what it costs without the list. */
#define CHANGES_MAX_BYTES (16u << 20)
#define CHANGES_MAX_DEPTH 256

struct changes_walk {
	struct buf out;
	int full;                      /* too much: answer "/" */
	struct buf stage;              /* SANDBOX_STAGE: what the hand-off stages */
	int no_stage;                  /* git's own scan is needed (sandbox.h) */
	struct buf paths;              /* SANDBOX_PATHS */
	int lower_fd;                  /* the lower folder, or -1 (no SANDBOX_PATHS) */
};

/* What path is in the lower layer: 'd' a folder, 'f' anything else, 0
 * nothing (or unknown: lower_fd -1 makes no list). */
static char changes_lower(const struct changes_walk *w, const char *path)
{
	/* Beneath it, no link followed: a link in the template is no
	 * folder of it, and never a look at the host's files. */
	struct stat st;
	int fd = w->lower_fd < 0 ? -1 : fsx_open_beneath(w->lower_fd, path, O_PATH | O_NOFOLLOW);
	if (fd < 0)
		return 0;
	char kind = fstat(fd, &st) == 0 && S_ISDIR(st.st_mode) ? 'd' : 'f';
	close(fd);
	return kind;
}

/* A path for SANDBOX_PATHS; what would need the template's files listed
 * (a removed or hidden folder of it) makes none. */
static void changes_path(struct changes_walk *w, const char *path, const char *suffix,
                         int hides)
{
	if (w->lower_fd < 0)
		return;
	if (hides && changes_lower(w, path) == 'd') {
		close(w->lower_fd);
		w->lower_fd = -1;
		return;
	}
	buf_adds(&w->paths, path);
	buf_adds(&w->paths, suffix);
	buf_addc(&w->paths, '\0');
}

static void changes_add(struct changes_walk *w, const char *path, const char *suffix)
{
	if (w->full)
		return;
	buf_adds(&w->out, path);
	buf_adds(&w->out, suffix);
	buf_addc(&w->out, '\0');
	if (w->out.len > CHANGES_MAX_BYTES)
		w->full = 1;
}

/* A path for the hand-off's `git add` (SANDBOX_STAGE).  A .gitignore
 * anywhere may un-ignore files the agent never touched, which only git's
 * scan of every folder finds. */
static void changes_stage(struct changes_walk *w, const char *path, const char *name)
{
	if (!strcmp(name, ".gitignore"))
		w->no_stage = 1;
	buf_adds(&w->stage, path);
	buf_addc(&w->stage, '\0');
}

/* 1 when overlayfs marked the folder opaque (what was below it is gone)
 * or redirected (a renamed folder whose files stay below, at the old
 * name): its files are not all listed in the upper layer.  Either xattr
 * namespace: trusted (a mount by real root), user (in a user namespace).
 * A folder whose xattrs cannot be read counts as one. */
static int changes_dir_hides(int fd)
{
	static const char *const names[] = {
		"trusted.overlay.opaque", "user.overlay.opaque",
		"trusted.overlay.redirect", "user.overlay.redirect",
	};
	char v[8];
	for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
		/* ERANGE: there, with a longer value.  ENOTSUP: a namespace
		 * the filesystem lacks, which overlayfs cannot use either. */
		if (fgetxattr(fd, names[i], v, sizeof v) >= 0 ||
		    (errno != ENODATA && errno != ENOTSUP))
			return 1;
	}
	return 0;
}

/* Lists what is under the upper folder fd (prefix: its path in the
 * workspace, "" or ending in '/'); closes fd. */
static void changes_walk_dir(struct changes_walk *w, int fd, const char *prefix, int depth)
{
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		w->full = 1;
		return;
	}
	struct dirent *de;
	while (!w->full && (de = readdir(d))) {
		const char *name = de->d_name;
		if (!strcmp(name, ".") || !strcmp(name, ".."))
			continue;
		/* git tracks nothing under .git, in no folder. */
		if (!strcmp(name, ".git"))
			continue;
		struct stat st;
		if (fstatat(dirfd(d), name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			w->full = 1;
			break;
		}
		char *path = xasprintf("%s%s", prefix, name);
		if (S_ISCHR(st.st_mode) && st.st_rdev == 0) {
			/* A whiteout: removed, a file or a whole folder. */
			changes_add(w, path, "");
			changes_add(w, path, "/");
			changes_stage(w, path, name);
			changes_path(w, path, "", 1);
		} else if (S_ISDIR(st.st_mode)) {
			int sub = openat(dirfd(d), name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub < 0 || depth >= CHANGES_MAX_DEPTH) {
				if (sub >= 0)
					close(sub);
				w->full = 1;
			} else {
				/* A folder made over a removed file or folder, or
				 * renamed: staged whole (what was there goes).  Any
				 * other folder: its files, one by one below. */
				/* A folder made here (or over a file) goes whole:
				 * git clean given "d/" removes it, given "d" and a
				 * file in it only the file. */
				if (changes_dir_hides(sub)) {
					changes_add(w, path, "/");
					changes_stage(w, path, name);
					changes_path(w, path, "/", 1);
				} else if (w->lower_fd >= 0 && changes_lower(w, path) != 'd') {
					changes_path(w, path, "/", 0);
				}
				/* A folder made or copied up: git finds new files by
				 * reading folders anyway; its name is listed for a file
				 * that became a folder. */
				changes_add(w, path, "");
				char *sp = xasprintf("%s/", path);
				changes_walk_dir(w, sub, sp, depth + 1);
				free(sp);
			}
		} else {
			changes_add(w, path, "");
			changes_stage(w, path, name);
			changes_path(w, path, "", 0);
		}
		free(path);
	}
	closedir(d);
}

/* The regular file name below the folder dfd (no link followed), at most
 * cap bytes, into out (empty first); -1 for anything else. */
static int changes_read_at(int dfd, const char *name, size_t cap, struct buf *out)
{
	int fd = fsx_open_beneath(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
	struct stat st;
	if (fd < 0)
		return -1;
	int rc = -1;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_size <= cap) {
		buf_reset(out);
		char tmp[65536];
		ssize_t n;
		while ((n = read(fd, tmp, sizeof tmp)) > 0 && out->len + (size_t)n <= cap)
			buf_add(out, tmp, (size_t)n);
		rc = n == 0 ? 0 : -1;
	}
	close(fd);
	return rc;
}

/* 1 when the files of the upper folder fd's .git leave the hand-off's
 * staging to the listed paths exact (SANDBOX_STAGE): no .git, or one
 * whose index is the one the last hand-off staged (a copy beside it,
 * SANDBOX_STAGED_INDEX) and with nothing that changes what git ignores
 * or where the repository is (info/, commondir). */
static int changes_git_ok(int fd)
{
	struct stat st;
	if (fstatat(fd, ".git", &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT;
	if (!S_ISDIR(st.st_mode))
		return 0;
	int g = openat(fd, ".git", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (g < 0)
		return 0;
	int ok = !changes_dir_hides(g) &&
	         fstatat(g, "info", &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT &&
	         fstatat(g, "commondir", &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT;
	if (ok && fstatat(g, "index", &st, AT_SYMLINK_NOFOLLOW) == 0) {
		/* The agent's git (or tests) wrote the index since: git's scan. */
		struct buf a = {0}, b = {0};
		ok = changes_read_at(g, "index", CHANGES_MAX_BYTES, &a) == 0 &&
		     changes_read_at(g, SANDBOX_STAGED_INDEX, CHANGES_MAX_BYTES, &b) == 0 &&
		     a.len == b.len && !memcmp(a.data, b.data, a.len);
		buf_free(&a);
		buf_free(&b);
	} else if (ok) {
		ok = errno == ENOENT;
	}
	close(g);
	return ok;
}

/* Writes data[0..len) as the read-only file name of the folder dfd,
 * replacing what is there (the sandbox's, never followed); NULL data
 * only removes it. */
static int changes_write(int dfd, const char *name, const char *data, size_t len,
                         struct err *e)
{
	char *shown = xasprintf("%s/%s", SANDBOX_OUTDIR, name);
	int rc = -1;
	if (unlinkat(dfd, name, 0) < 0 && errno != ENOENT) {
		err_errno(e, _("cannot replace %s"), shown);
		goto out;
	}
	rc = 0;
	if (!data)
		goto out;
	int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0444);
	if (fd < 0 || fsx_write_all(fd, data, len) < 0 || close(fd) < 0) {
		rc = err_errno(e, _("cannot write %s"), shown);
		if (fd >= 0)
			close(fd);
	}
out:
	free(shown);
	return rc;
}

int sandbox_changes_at(const char *upper, const char *lower, const char *outdir,
                       struct err *e)
{
	const char *name = SANDBOX_CHANGES_NAME;
	struct changes_walk w = {0};
	w.lower_fd = lower ? open(lower, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	buf_adds(&w.out, SANDBOX_FSMONITOR_TOKEN);
	buf_addc(&w.out, '\0');
	int fd = open(upper, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || changes_dir_hides(fd)) {
		if (fd >= 0)
			close(fd);
		w.full = 1;
	} else {
		w.no_stage = !changes_git_ok(fd);
		changes_walk_dir(&w, fd, "", 0);
	}
	if (w.full) {
		buf_reset(&w.out);
		buf_adds(&w.out, SANDBOX_FSMONITOR_TOKEN);
		buf_addc(&w.out, '\0');
		buf_adds(&w.out, "/");
		buf_addc(&w.out, '\0');
	}
	/* Nothing changed: an empty list, which git takes for "everything";
	 * the hand-off then scans, and finds nothing. */
	int stage = !w.full && !w.no_stage && w.stage.len;
	int rc = -1, dfd = open(outdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		err_errno(e, _("cannot open the sandbox's %s"), outdir);
		goto out;
	}
	/* The staging list first: a hand-off that finds the fsmonitor's
	 * answer but no list scans as git does. */
	if (changes_write(dfd, SANDBOX_STAGE_NAME, stage ? w.stage.data : NULL, w.stage.len,
	                  e) < 0 ||
	    changes_write(dfd, SANDBOX_PATHS_NAME,
	                  !w.full && w.lower_fd >= 0 ? (w.paths.data ? w.paths.data : "") : NULL,
	                  w.paths.len, e) < 0 ||
	    changes_write(dfd, name, w.out.data, w.out.len, e) < 0)
		goto out;
	rc = 0;
out:
	if (dfd >= 0)
		close(dfd);
	if (w.lower_fd >= 0)
		close(w.lower_fd);
	buf_free(&w.out);
	buf_free(&w.stage);
	buf_free(&w.paths);
	return rc;
}

/* ---- branch: the task branch, written as git would ---- */

/* A ref name's component: what git takes, more strictly. */
static int branch_part_ok(const char *s, size_t n)
{
	if (n == 0 || n > 200 || s[0] == '.' || (n >= 5 && !memcmp(s + n - 5, ".lock", 5)))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!strchr("abcdefghijklmnopqrstuvwxyz"
		            "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-", s[i]) ||
		    (s[i] == '.' && i + 1 < n && s[i + 1] == '.'))
			return 0;
	return 1;
}

/* Creates (or opens) folder name in dfd for uid; returns its fd. */
static int branch_dir(int dfd, const char *name, int set_owner, uid_t uid, gid_t gid)
{
	if (mkdirat(dfd, name, 0755) == 0 && set_owner &&
	    fchownat(dfd, name, uid, gid, AT_SYMLINK_NOFOLLOW) < 0)
		return -1;
	return openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/* Writes text as name in dfd: beside, then renamed over. */
static int branch_file(int dfd, const char *name, const char *text, int set_owner, uid_t uid,
                       gid_t gid)
{
	char tmp[256];
	snprintf(tmp, sizeof tmp, "%s.lock", name);
	int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	int ok = fsx_write_all(fd, text, strlen(text)) == 0 &&
	         (!set_owner || fchown(fd, uid, gid) == 0);
	ok = close(fd) == 0 && ok;
	if (!ok || renameat(dfd, tmp, dfd, name) < 0) {
		unlinkat(dfd, tmp, 0);
		return -1;
	}
	return 0;
}

int sandbox_branch_at(const char *work, const char *branch, const char *sha, int set_owner,
                      uid_t uid, gid_t gid, struct err *e)
{
	size_t n = strlen(branch);
	const char *slash = strchr(branch, '/');
	int hex = strlen(sha) == 40;
	for (size_t i = 0; hex && i < 40; i++)
		hex = strchr("0123456789abcdef", sha[i]) != NULL;
	/* One folder at most: paddock/<id>. */
	size_t d = slash ? (size_t)(slash - branch) : 0;
	int name_ok = slash ? !strchr(slash + 1, '/') && branch_part_ok(branch, d) &&
	                      branch_part_ok(slash + 1, n - d - 1)
	                    : branch_part_ok(branch, n);
	if (!hex || !name_ok)
		return err_set(e, _("bad task branch %s at %s"), branch, sha);
	char *gitdir = xasprintf("%s/.git", work);
	int g = open(gitdir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int refs = g < 0 ? -1 : branch_dir(g, "refs", set_owner, uid, gid);
	int heads = refs < 0 ? -1 : branch_dir(refs, "heads", set_owner, uid, gid);
	int at = heads;
	char *leaf = xstrdup(slash ? slash + 1 : branch);
	if (slash && heads >= 0) {
		char *dir = xstrndup(branch, (size_t)(slash - branch));
		at = branch_dir(heads, dir, set_owner, uid, gid);
		free(dir);
	}
	char *line = xasprintf("%s\n", sha);
	char *head = xasprintf("ref: refs/heads/%s\n", branch);
	int rc = at >= 0 && branch_file(at, leaf, line, set_owner, uid, gid) == 0 &&
	         branch_file(g, "HEAD", head, set_owner, uid, gid) == 0 ? 0 : -1;
	if (rc < 0)
		err_errno(e, _("cannot write the task branch in %s"), gitdir);
	int fds[] = { g, refs, heads, at };
	for (size_t i = 0; i < 4; i++)
		if (fds[i] >= 0 && (i < 3 || at != heads))
			close(fds[i]);
	free(leaf);
	free(line);
	free(head);
	free(gitdir);
	return rc;
}
