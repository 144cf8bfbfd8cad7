/* paddock-runner: the sandbox end of a sandbox session
 * (src/sandbox/runner.h; the frames are src/sandbox/runner_proto.h).
 *
 *   paddock-runner [--fd N | --dial]
 *
 * Meant to be PID 1 of a sandbox: it speaks the runner protocol on one
 * channel, runs each RUN as its own process group with the limits asked
 * for, streams its output (stdout and stderr as one stream, or stderr
 * apart in STDERR frames) as OUTPUT frames, sends END when the command has
 * ended and its output is read, and reaps every process the sandbox's
 * commands leave (as PID 1, or as a child subreaper when it is not).  A
 * RUN flagged fresh first kills every other process of the sandbox:
 * kill(-1, SIGKILL) as PID 1, otherwise every process below it (found
 * through /proc).  When the channel closes (in dial mode: at paddock's
 * BYE, see below) the session is over: the runner kills what it runs and
 * exits 0.
 *
 * The channel is the inherited descriptor N (3 unless told), or, in dial
 * mode (a Kubernetes pod: no --fd and PADDOCK_FRONT_DOOR set, or --dial),
 * a TCP connection the runner makes to paddock's front door (dial.h has
 * the environment it reads and the preamble it starts each connection
 * with).  In dial mode it first listens on 127.0.0.1 at each port of
 * PADDOCK_GATEWAY_PORTS, then probes PADDOCK_PROBE's targets and the API
 * server's service address: when one answers it sends a `fault`
 * connection that names it and exits 3 without running anything.  Then it
 * dials the front door, retrying (0.2 s doubling to 5 s) for 120 s, or for
 * PADDOCK_RUNNER_DIAL_SECONDS (meant for tests only), and exits 3 with a
 * message on stderr when it never gets there, or when the token file
 * holds no valid token (no connection is made then, not even a fault).
 * A connection that closes before paddock's HELLO (a proxy whose backend
 * is not up) is a dial that failed, tried again within the same time; it
 * says why on stderr every 10 s, for the pod's log.  A connection that
 * breaks after HELLO does not end the session: the runs go on (their
 * output waits in their pipes once OUTQ_HIGH bytes are held), the runner
 * dials the front door again (kind `runner`, the token read anew) until
 * PADDOCK_RUNNER_RESUME_SECONDS (60) after the break, sends RESUME with
 * the bytes it received first and, once paddock's RESUME came, sends
 * again from paddock's count (src/sandbox/runner_link.h: both ends hold
 * what they sent until the other acknowledged it).  Past that time, or at
 * paddock's BYE, the session is over.  In a pod, a run
 * during which the container's memory cgroup counted an OOM kill ends
 * with the memory limit hit (RP_HIT_MEMORY; oom_kills()).
 * Each connection to a gateway port (RP_STREAMS_MAX at once; the next
 * waits in the listen queue) is a stream on the session's one connection
 * (runner_proto.h, "Gateway streams": OPEN, then DATA and ACK both ways,
 * runner_stream.h), relayed in the runner's one poll loop: the pod makes
 * no connection but its runner's.  A fresh RUN does not end a stream (it
 * is not a process); a SHUT from paddock resets the agent's connection.
 * The token file is read for every connection, and the
 * token goes nowhere but into that connection: no file, no message, no
 * command's environment (a RUN carries its own; the runner's is never
 * passed on).  Without dial mode nothing is probed or dialed.
 *
 * It is as untrusted as everything in the sandbox: the host believes
 * nothing it says except as the agent's data.  It holds no secret but the
 * pod's token, makes itself non-dumpable, and ends the session (killing
 * what it runs) at the first frame it does not expect, or when the
 * channel closes.  libc only, no sanitizer runtime, static where the
 * toolchain allows: it runs on any sandbox's /usr, or none. */
#define _GNU_SOURCE
#include "runner_proto.h"
#include "runner_link.h"
#include "dial.h"
#include "runner_stream.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#define MAX_RUNS 64
#define MAX_XFERS 8
/* The tail of each run's output kept for WATCH. */
#define RETAIN (1u << 20)
/* Past this much unsent output, the runner stops reading commands' output
 * and files until the host has read some: its memory stays bounded however
 * slowly the host reads. */
#define OUTQ_HIGH (4u << 20)

struct run {
	int used;
	uint32_t id;
	long oom_before;    /* oom_kills() when it started */
	pid_t pid;          /* 0 once reaped */
	int out_fd, in_fd;  /* -1 when closed; with a pty both are the master */
	int err_fd;         /* RP_RUN_STDERR: its stderr, -1 otherwise or closed */
	uint64_t err_offset; /* stderr bytes sent */
	int pty;
	int in_close;       /* close in_fd once inq is written */
	struct rp_buf inq;
	uint64_t in_got, in_taken, in_told; /* STDIN bytes: received, taken, said TAKEN */
	uint64_t offset;    /* output bytes sent */
	struct rp_buf keep; /* the tail kept for WATCH, from keep_start */
	uint64_t keep_start;
	struct rp_limits lim;
	double deadline;    /* 0: none */
	uint32_t hit;
	int status;
	int ended;          /* END sent: kept for WATCH only */
	unsigned long seq;  /* the order runs ended, to forget the oldest */
};

struct xfer {
	int used;
	uint32_t id;
	int fd;
	int get;            /* 1: a file out of the sandbox */
	int err;            /* a put that failed: the rest is discarded */
	uint64_t size, done;
	char *path;
};

static int chan = 3;
static int sigfd = -1;
static struct rp_buf inbuf;
/* What goes out, and the session's counts (runner_link.h): in dial mode
 * held until paddock acknowledged it, so that the session can resume. */
static struct rl session_link;
/* Dial mode: when the session's connection broke (0: it did not, or it
 * resumed since). */
static double lost_at;
static struct run runs[MAX_RUNS];
static struct xfer xfers[MAX_XFERS];
static unsigned long end_seq;
static int is_pid1;
/* Dial mode: the settings, the gateway ports' listeners, their streams. */
static int dial_mode;
static struct dial dl;
static int gw_lfd[DIAL_PORTS_MAX];
static struct rs_set streams;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A frame to send; a runner that cannot even queue one ends. */
static void kill_tree(void);
static void finish(int code) __attribute__((noreturn));

static void send_msg(const struct rp_msg *m)
{
	if (rl_send(&session_link, m) < 0)
		finish(3);
}

static void send_fail(uint32_t id, int err, const char *what)
{
	char text[512];
	snprintf(text, sizeof text, "%s: %s", what, strerror(err));
	struct rp_msg m = { .type = RP_FAIL, .id = id, .err = (uint32_t)err, .text = text };
	send_msg(&m);
}

static void chan_lost(void);

/* Writes what is queued; with block set, until it is all written. */
static void flush(int block)
{
	while (chan >= 0 && rl_pending(&session_link)) {
		if (rl_write(&session_link, chan) < 0) {
			chan_lost();
			return;
		}
		if (!block || !rl_pending(&session_link))
			return;
		struct pollfd p = { chan, POLLOUT, 0 };
		if (poll(&p, 1, 5000) <= 0)
			return;
	}
}

/* Every process below this one, by its parents in /proc; *n of them. */
static pid_t *descendants(size_t *n)
{
	size_t cap = 256, cnt = 0, out = 0;
	pid_t *pid = malloc(cap * sizeof *pid), *ppid = malloc(cap * sizeof *ppid);
	*n = 0;
	DIR *d = opendir("/proc");
	if (!pid || !ppid || !d) {
		free(pid);
		free(ppid);
		if (d)
			closedir(d);
		return NULL;
	}
	struct dirent *de;
	while ((de = readdir(d))) {
		char path[64], buf[512];
		long p = strtol(de->d_name, NULL, 10);
		if (p <= 0)
			continue;
		snprintf(path, sizeof path, "/proc/%ld/stat", p);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		ssize_t r = read(fd, buf, sizeof buf - 1);
		close(fd);
		if (r <= 0)
			continue;
		buf[r] = 0;
		char *rp = strrchr(buf, ')');
		int pp;
		char st;
		if (!rp || sscanf(rp + 1, " %c %d", &st, &pp) != 2)
			continue;
		if (cnt == cap) {
			cap *= 2;
			pid_t *a = realloc(pid, cap * sizeof *pid);
			if (a)
				pid = a;
			pid_t *b = realloc(ppid, cap * sizeof *ppid);
			if (b)
				ppid = b;
			if (!a || !b)
				break;
		}
		pid[cnt] = (pid_t)p;
		ppid[cnt++] = pp;
	}
	closedir(d);
	/* Mark the tree: the runner's children, theirs, ... in place (a
	 * descendant moves to the front part of the arrays). */
	pid_t self = getpid();
	for (int changed = 1; changed;) {
		changed = 0;
		for (size_t i = out; i < cnt; i++) {
			int mine = ppid[i] == self;
			for (size_t j = 0; j < out && !mine; j++)
				mine = ppid[i] == pid[j];
			if (mine) {
				pid_t tp = pid[out], tpp = ppid[out];
				pid[out] = pid[i];
				ppid[out] = ppid[i];
				pid[i] = tp;
				ppid[i] = tpp;
				out++;
				changed = 1;
			}
		}
	}
	free(ppid);
	*n = out;
	return pid;
}

static struct run *run_by_pid(pid_t pid)
{
	for (int i = 0; i < MAX_RUNS; i++)
		if (runs[i].used && runs[i].pid == pid)
			return &runs[i];
	return NULL;
}

static void reap(void)
{
	int st;
	pid_t p;
	while ((p = waitpid(-1, &st, WNOHANG)) > 0) {
		struct run *r = run_by_pid(p);
		if (r) {
			r->pid = 0;
			r->status = st;
		}
	}
}

/* Kills every other process of the sandbox and reaps them: nothing a
 * command left behind outlives this call (but what is stuck in the
 * kernel, which PID 1's exit still ends). */
static void kill_tree(void)
{
	for (int round = 0; round < 200; round++) {
		size_t n = 0;
		if (is_pid1) {
			if (kill(-1, SIGKILL) == 0)
				n = 1;
		} else {
			pid_t *p = descendants(&n);
			for (size_t i = 0; i < n; i++)
				kill(p[i], SIGKILL);
			free(p);
		}
		reap();
		if (n == 0 && waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD)
			return;
		struct timespec ts = { 0, 5 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
}

static void finish(int code)
{
	kill_tree();
	exit(code);
}

static void run_send(struct run *r, int err, const unsigned char *p, size_t n)
{
	struct rp_msg m = { .type = err ? RP_STDERR : RP_OUTPUT, .id = r->id,
	                    .offset = err ? r->err_offset : r->offset, .data = p, .len = n };
	send_msg(&m);
	if (err) {
		r->err_offset += n;
		return;
	}
	r->offset += n;
	if (rp_buf_add(&r->keep, p, n) < 0)
		finish(3);
	if (r->keep.len > RETAIN) {
		size_t drop = r->keep.len - RETAIN;
		rp_buf_consume(&r->keep, drop);
		r->keep_start += drop;
	}
}

static void run_close_out(struct run *r)
{
	if (r->out_fd < 0)
		return;
	if (r->in_fd == r->out_fd)
		r->in_fd = -1;
	close(r->out_fd);
	r->out_fd = -1;
}

/* Reads what the command wrote on its output (err: its separate
 * stderr): one chunk, or (all) what the pipe holds now, and no more: a
 * process left behind that keeps writing cannot hold the END back. */
static void run_read_fd(struct run *r, int err, int all)
{
	static unsigned char buf[RP_CHUNK];
	int *fd = err ? &r->err_fd : &r->out_fd;
	int avail = 0;
	if (all && (*fd < 0 || ioctl(*fd, FIONREAD, &avail) < 0))
		avail = 0;
	while (*fd >= 0) {
		size_t want = sizeof buf;
		if (all) {
			if (avail <= 0)
				return;
			want = (size_t)avail < want ? (size_t)avail : want;
		}
		ssize_t n = read(*fd, buf, want);
		if (n > 0)
			avail -= (int)n;
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			/* EOF, or EIO from a pty whose other side is closed */
			if (n == 0 || errno != EAGAIN) {
				if (err) {
					close(*fd);
					*fd = -1;
				} else {
					run_close_out(r);
				}
			}
			return;
		}
		size_t take = (size_t)n;
		uint64_t sent = r->offset + r->err_offset;
		if (r->lim.output && !(r->hit & RP_HIT_OUTPUT)) {
			if (sent + take > r->lim.output) {
				take = (size_t)(r->lim.output - sent);
				r->hit |= RP_HIT_OUTPUT;
				if (r->pid > 0)
					kill(-r->pid, SIGKILL);
			}
		} else if (r->hit & RP_HIT_OUTPUT) {
			take = 0;
		}
		if (take)
			run_send(r, err, buf, take);
		if (!all)
			return;
	}
}

static void run_read(struct run *r, int all)
{
	run_read_fd(r, 0, all);
}

/* What an ended run wrote, to the last byte.  A pipe has it all once
 * the writer is gone; a pty's last output reaches the master a moment
 * later (the tty layer hands it over on its own time), so a pty is read
 * until the other side's close shows (EIO), for half a second at most
 * (a process left behind may hold it open). */
static void run_read_last(struct run *r)
{
	run_read_fd(r, 1, 1);
	run_read(r, 1);
	double until = now() + 0.5;
	while (r->pty && r->out_fd >= 0) {
		double left = until - now();
		struct pollfd p = { .fd = r->out_fd, .events = POLLIN };
		if (left <= 0 || poll(&p, 1, (int)(left * 1000) + 1) <= 0)
			break;
		run_read(r, 0);
	}
}

/* The OOM killer's kills in this sandbox's memory cgroup so far, as the
 * sandbox sees it (a pod's container: cgroup v2's memory.events, v1's
 * memory.oom_control; PADDOCK_RUNNER_MEMORY_EVENTS names another file, for
 * tests only), or -1 when there is none to read.  A process it killed
 * while a run ran is that run's memory limit hit: the kubelet reports an
 * OOM only when it kills the container's first process. */
static long oom_kills(void)
{
	/* Only a pod's: elsewhere /sys/fs/cgroup may be the host's own. */
	if (!dial_mode)
		return -1;
	const char *paths[] = { getenv("PADDOCK_RUNNER_MEMORY_EVENTS"), "/sys/fs/cgroup/memory.events",
	                        "/sys/fs/cgroup/memory/memory.oom_control" };
	for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
		int fd = paths[i] ? open(paths[i], O_RDONLY | O_CLOEXEC) : -1;
		if (fd < 0)
			continue;
		char b[4096];
		ssize_t n = read(fd, b, sizeof b - 1);
		close(fd);
		b[n > 0 ? n : 0] = '\0';
		for (char *l = b; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
			if (!strncmp(l, "oom_kill ", 9))
				return strtol(l + 9, NULL, 10);
	}
	return -1;
}

static void run_end(struct run *r)
{
	int st = r->status;
	struct rp_msg m = { .type = RP_END, .id = r->id, .hit = r->hit, .size = r->offset };
	if (r->oom_before >= 0 && oom_kills() > r->oom_before)
		m.hit |= RP_HIT_MEMORY;
	if (WIFSIGNALED(st)) {
		m.how = RP_END_SIGNALED;
		m.code = (uint32_t)WTERMSIG(st);
		if (m.code == SIGXFSZ)
			m.hit |= RP_HIT_DISK;
	} else {
		m.how = RP_END_EXITED;
		m.code = (uint32_t)WEXITSTATUS(st);
	}
	send_msg(&m);
	run_close_out(r);
	if (r->err_fd >= 0)
		close(r->err_fd);
	r->err_fd = -1;
	if (r->in_fd >= 0)
		close(r->in_fd);
	r->in_fd = -1;
	rp_buf_free(&r->inq);
	r->ended = 1;
	r->seq = ++end_seq;
}

static struct run *run_by_id(uint32_t id)
{
	for (int i = 0; i < MAX_RUNS; i++)
		if (runs[i].used && runs[i].id == id)
			return &runs[i];
	return NULL;
}

static void run_forget(struct run *r)
{
	rp_buf_free(&r->keep);
	rp_buf_free(&r->inq);
	memset(r, 0, sizeof *r);
}

/* A free slot, forgetting the run that ended first when none is. */
static struct run *run_slot(void)
{
	struct run *old = NULL;
	for (int i = 0; i < MAX_RUNS; i++) {
		if (!runs[i].used)
			return &runs[i];
		if (runs[i].ended && (!old || runs[i].seq < old->seq))
			old = &runs[i];
	}
	if (old)
		run_forget(old);
	return old;
}

/* The program to exec: argv0 itself when it names a path, else the first
 * match on the command's own PATH. */
static const char *find_program(const char *argv0, char **env, char *buf, size_t size)
{
	if (strchr(argv0, '/'))
		return argv0;
	const char *path = "/usr/local/bin:/usr/bin:/bin";
	for (size_t i = 0; env[i]; i++)
		if (strncmp(env[i], "PATH=", 5) == 0)
			path = env[i] + 5;
	while (*path) {
		size_t n = strcspn(path, ":");
		if (n && (size_t)snprintf(buf, size, "%.*s/%s", (int)n, path, argv0) < size &&
		    access(buf, X_OK) == 0)
			return buf;
		path += n + (path[n] == ':');
	}
	return argv0;
}

static void set_limit(int res, uint64_t v)
{
	if (!v)
		return;
	struct rlimit rl = { (rlim_t)v, (rlim_t)v };
	setrlimit(res, &rl);
}

/* In the child: becomes the command, or writes errno and where to errfd. */
static void child_exec(const struct rp_msg *m, int out, int in, int err_out, int errfd)
{
	char what = 'd';
	sigset_t all;
	sigemptyset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	signal(SIGPIPE, SIG_DFL);
	setsid();
	if (m->flags & RP_RUN_PTY)
		ioctl(out, TIOCSCTTY, 0);
	if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err_out >= 0 ? err_out : out, 2) < 0)
		goto fail;
	what = 'c';
	if (m->text[0] && chdir(m->text) < 0)
		goto fail;
	set_limit(RLIMIT_AS, m->limits.memory);
	set_limit(RLIMIT_NPROC, m->limits.pids);
	set_limit(RLIMIT_FSIZE, m->limits.file_size);
	what = 'e';
	char buf[4096];
	const char *prog = find_program(m->argv[0], m->env, buf, sizeof buf);
	execve(prog, m->argv, m->env);
	if (errno == ENOEXEC) {
		/* A script without #!: the shell runs it, as execvp and a
		 * shell would (an agent's script often is one). */
		static char *sh_argv[RP_STRS_MAX + 2];
		size_t n = 0;
		sh_argv[n++] = (char *)"/bin/sh";
		sh_argv[n++] = (char *)prog;
		for (size_t i = 1; m->argv[i] && n < RP_STRS_MAX + 1; i++)
			sh_argv[n++] = m->argv[i];
		sh_argv[n] = NULL;
		execve("/bin/sh", sh_argv, m->env);
		errno = ENOEXEC;
	}
fail:;
	int err = errno;
	char msg[1 + sizeof err];
	msg[0] = what;
	memcpy(msg + 1, &err, sizeof err);
	(void)!write(errfd, msg, sizeof msg);
	_exit(127);
}

static void run_not_started(uint32_t id, const char *why)
{
	struct rp_msg m = { .type = RP_END, .id = id, .how = RP_END_NOT_STARTED,
	                    .code = 127, .text = (char *)why };
	send_msg(&m);
}

/* Long: one RUN from the frame to a started process group: the slot, the
 * fresh kill, the pty or pipes, the exec error channel, each failure an
 * END that says why. */
static void run_start(const struct rp_msg *m)
{
	struct run *r = run_by_id(m->id);
	if (r && !r->ended) {
		send_fail(m->id, EEXIST, "run");
		return;
	}
	if (r)
		run_forget(r);
	if (m->flags & RP_RUN_FRESH) {
		kill_tree();
		/* The runs it killed end now, before the new one starts. */
		for (int i = 0; i < MAX_RUNS; i++) {
			struct run *o = &runs[i];
			if (o->used && !o->ended) {
				run_read_last(o);
				run_end(o);
			}
		}
	}
	r = run_slot();
	if (!r) {
		send_fail(m->id, EAGAIN, "run");
		return;
	}
	long oom_before = oom_kills();
	int out[2] = { -1, -1 }, in[2] = { -1, -1 }, errp[2] = { -1, -1 }, ep[2];
	int master = -1;
	if (m->flags & RP_RUN_PTY) {
		master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
		char *name = master >= 0 && grantpt(master) == 0 && unlockpt(master) == 0 ?
		             ptsname(master) : NULL;
		int slave = name ? open(name, O_RDWR | O_NOCTTY | O_CLOEXEC) : -1;
		if (slave < 0) {
			if (master >= 0)
				close(master);
			run_not_started(m->id, "no terminal");
			return;
		}
		struct winsize ws = { .ws_row = m->rows, .ws_col = m->cols };
		ioctl(slave, TIOCSWINSZ, &ws);
		out[0] = master;
		out[1] = slave;
		in[1] = master;
		in[0] = slave;
	} else {
		if (pipe2(out, O_CLOEXEC) < 0) {
			run_not_started(m->id, strerror(errno));
			return;
		}
		if (m->flags & RP_RUN_STDIN ? pipe2(in, O_CLOEXEC) :
		    (in[0] = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0) {
			close(out[0]);
			close(out[1]);
			run_not_started(m->id, strerror(errno));
			return;
		}
		if ((m->flags & RP_RUN_STDERR) && pipe2(errp, O_CLOEXEC) < 0) {
			int err = errno;
			close(out[0]);
			close(out[1]);
			close(in[0]);
			if (in[1] >= 0)
				close(in[1]);
			run_not_started(m->id, strerror(err));
			return;
		}
	}
	if (pipe2(ep, O_CLOEXEC) < 0)
		finish(3);
	pid_t pid = fork();
	if (pid == 0)
		child_exec(m, out[1], in[0], errp[1], ep[1]);
	close(ep[1]);
	close(out[1]);
	if (errp[1] >= 0)
		close(errp[1]);
	if (in[0] != out[1])
		close(in[0]);
	char msg[1 + sizeof(int)];
	ssize_t got = pid > 0 ? read(ep[0], msg, sizeof msg) : -1;
	close(ep[0]);
	if (pid < 0 || got == (ssize_t)sizeof msg) {
		char why[600];
		int err;
		if (pid < 0) {
			snprintf(why, sizeof why, "fork: %s", strerror(errno));
		} else {
			memcpy(&err, msg + 1, sizeof err);
			snprintf(why, sizeof why, "%s: %s",
			         msg[0] == 'c' ? m->text : msg[0] == 'e' ? m->argv[0] : "stdio",
			         strerror(err));
			waitpid(pid, NULL, 0);
		}
		close(out[0]);
		if (in[1] >= 0 && in[1] != out[0])
			close(in[1]);
		if (errp[0] >= 0)
			close(errp[0]);
		run_not_started(m->id, why);
		return;
	}
	memset(r, 0, sizeof *r);
	r->used = 1;
	r->id = m->id;
	r->pid = pid;
	r->oom_before = oom_before;
	r->out_fd = out[0];
	r->in_fd = in[1];
	r->err_fd = errp[0];
	if (r->err_fd >= 0)
		fcntl(r->err_fd, F_SETFL, O_NONBLOCK);
	r->pty = master >= 0;
	r->lim = m->limits;
	r->deadline = m->limits.time_ms ? now() + (double)m->limits.time_ms / 1000.0 : 0;
	fcntl(r->out_fd, F_SETFL, O_NONBLOCK);
	if (r->in_fd >= 0)
		fcntl(r->in_fd, F_SETFL, O_NONBLOCK);
}

static struct xfer *xfer_by_id(uint32_t id)
{
	for (int i = 0; i < MAX_XFERS; i++)
		if (xfers[i].used && xfers[i].id == id)
			return &xfers[i];
	return NULL;
}

static void xfer_close(struct xfer *x)
{
	if (x->fd >= 0)
		close(x->fd);
	free(x->path);
	memset(x, 0, sizeof *x);
	x->fd = -1;
}

static struct xfer *xfer_new(uint32_t id)
{
	if (xfer_by_id(id)) {
		send_fail(id, EEXIST, "file");
		return NULL;
	}
	for (int i = 0; i < MAX_XFERS; i++)
		if (!xfers[i].used) {
			xfers[i].used = 1;
			xfers[i].id = id;
			xfers[i].fd = -1;
			return &xfers[i];
		}
	send_fail(id, EAGAIN, "file");
	return NULL;
}

static void put_done(struct xfer *x)
{
	if (x->err) {
		send_fail(x->id, x->err, x->path);
	} else if (fsync(x->fd) < 0 && errno != EINVAL) {
		send_fail(x->id, errno, x->path);
	} else {
		struct rp_msg m = { .type = RP_FILE_DONE, .id = x->id, .size = x->size };
		send_msg(&m);
	}
	xfer_close(x);
}

static void file_put(struct rp_msg *m)
{
	struct xfer *x = xfer_new(m->id);
	if (!x)
		return;
	x->size = m->size;
	x->path = m->text;
	m->text = NULL;
	x->fd = open(x->path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
	             (mode_t)(m->mode & 07777));
	if (x->fd < 0)
		x->err = errno;
	else if (fchmod(x->fd, (mode_t)(m->mode & 07777)) < 0)
		x->err = errno;
	if (x->size == 0)
		put_done(x);
}

/* FILE_DATA: the next bytes of a put, or the host broke the protocol. */
static int file_data(const struct rp_msg *m)
{
	struct xfer *x = xfer_by_id(m->id);
	if (!x || x->get || m->offset != x->done || m->len > x->size - x->done)
		return -1;
	for (size_t off = 0; !x->err && off < m->len;) {
		ssize_t n = write(x->fd, m->data + off, m->len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			x->err = n < 0 ? errno : EIO;
		else
			off += (size_t)n;
	}
	x->done += m->len;
	if (x->done == x->size)
		put_done(x);
	return 0;
}

static void file_get(struct rp_msg *m)
{
	struct xfer *x = xfer_new(m->id);
	if (!x)
		return;
	x->get = 1;
	x->fd = open(m->text, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	int err = x->fd < 0 ? errno : fstat(x->fd, &st) < 0 ? errno :
	          !S_ISREG(st.st_mode) ? EINVAL : (uint64_t)st.st_size > m->size ? EFBIG : 0;
	if (err) {
		send_fail(m->id, err, m->text);
		xfer_close(x);
		return;
	}
	x->size = (uint64_t)st.st_size;
	x->path = m->text;
	m->text = NULL;
	struct rp_msg a = { .type = RP_FILE_PUT, .id = x->id, .mode = st.st_mode & 07777,
	                    .size = x->size, .text = x->path };
	send_msg(&a);
}

/* Sends the next chunk of each file on its way out. */
static void file_pump(void)
{
	static unsigned char buf[RP_CHUNK];
	for (int i = 0; i < MAX_XFERS && rl_held(&session_link) < OUTQ_HIGH; i++) {
		struct xfer *x = &xfers[i];
		if (!x->used || !x->get)
			continue;
		size_t want = x->size - x->done < sizeof buf ? (size_t)(x->size - x->done) : sizeof buf;
		ssize_t n = want ? read(x->fd, buf, want) : 0;
		if (n < 0 && errno == EINTR)
			continue;
		if (want && n <= 0) {
			/* It shrank (or failed) under the runner: say so rather
			 * than send less than announced. */
			send_fail(x->id, n < 0 ? errno : EIO, x->path);
			xfer_close(x);
			continue;
		}
		if (n > 0) {
			struct rp_msg d = { .type = RP_FILE_DATA, .id = x->id, .offset = x->done,
			                    .data = buf, .len = (size_t)n };
			send_msg(&d);
			x->done += (uint64_t)n;
		}
		if (x->done == x->size) {
			struct rp_msg e = { .type = RP_FILE_DONE, .id = x->id, .size = x->size };
			send_msg(&e);
			xfer_close(x);
		}
	}
}

static void do_kill(const struct rp_msg *m)
{
	if (m->sig < 1 || m->sig > 64) {
		send_fail(m->id, EINVAL, "kill");
		return;
	}
	int found = 0;
	for (int i = 0; i < MAX_RUNS; i++) {
		struct run *r = &runs[i];
		if (r->used && !r->ended && (m->id == 0 || r->id == m->id)) {
			found = 1;
			if (r->pid > 0)
				kill(-r->pid, (int)m->sig);
		}
	}
	if (!found && m->id)
		send_fail(m->id, ESRCH, "kill");
}

static void do_watch(const struct rp_msg *m)
{
	struct run *r = run_by_id(m->id);
	if (!r) {
		send_fail(m->id, ESRCH, "watch");
		return;
	}
	if (m->offset < r->keep_start || m->offset > r->offset) {
		send_fail(m->id, ENODATA, "watch");
		return;
	}
	struct rp_msg start = { .type = RP_OUTPUT, .id = r->id, .offset = m->offset };
	send_msg(&start);
	for (uint64_t off = m->offset; off < r->offset;) {
		size_t n = r->offset - off < RP_CHUNK ? (size_t)(r->offset - off) : RP_CHUNK;
		struct rp_msg o = { .type = RP_OUTPUT, .id = r->id, .offset = off,
		                    .data = r->keep.data + (off - r->keep_start), .len = n };
		send_msg(&o);
		off += n;
	}
}

/* TAKEN, when the queue is written or a quarter of the window was taken
 * since the last: paddock sends no more than the window ahead. */
static void stdin_told(struct run *r)
{
	if (r->in_taken == r->in_told ||
	    (r->inq.len && r->in_taken - r->in_told < RP_STDIN_WINDOW / 4))
		return;
	struct rp_msg t = { .type = RP_TAKEN, .id = r->id, .offset = r->in_taken };
	send_msg(&t);
	r->in_told = r->in_taken;
}

static void do_stdin(const struct rp_msg *m)
{
	struct run *r = run_by_id(m->id);
	if (!r)
		return;
	r->in_got += m->len;
	if (r->ended || r->in_fd < 0) {
		/* Input for a command that ended (or takes none) is dropped. */
		r->in_taken = r->in_got;
		stdin_told(r);
		return;
	}
	if (m->len == 0) {
		if (!r->pty)
			r->in_close = 1;
	} else if (rp_buf_add(&r->inq, m->data, m->len) < 0) {
		finish(3);
	}
}

static void do_resize(const struct rp_msg *m)
{
	struct run *r = run_by_id(m->id);
	if (r && !r->ended && r->pty && r->out_fd >= 0) {
		struct winsize ws = { .ws_row = m->rows, .ws_col = m->cols };
		ioctl(r->out_fd, TIOCSWINSZ, &ws);
	}
}

/* One frame from the host: -1 ends the session. */
static int handle(struct rp_msg *m)
{
	switch (m->type) {
	case RP_RUN:
		run_start(m);
		return 0;
	case RP_KILL:
		do_kill(m);
		return 0;
	case RP_WATCH:
		do_watch(m);
		return 0;
	case RP_FILE_PUT:
		file_put(m);
		return 0;
	case RP_FILE_DATA:
		return file_data(m);
	case RP_FILE_GET:
		file_get(m);
		return 0;
	case RP_STDIN:
		do_stdin(m);
		return 0;
	case RP_RESIZE:
		do_resize(m);
		return 0;
	case RP_PING: {
		struct rp_msg p = { .type = RP_PONG, .token = m->token };
		send_msg(&p);
		return 0;
	}
	case RP_DATA:
	case RP_ACK:
	case RP_SHUT:
		/* Streams exist in dial mode only: elsewhere every id is one
		 * never opened. */
		return rs_frame(&streams, m, &session_link.out) == RS_OK ? 0 : -1;
	case RP_BYE:
		finish(0);
	default:
		return -1;
	}
}

/* Reads the channel and handles every whole frame; 0 at EOF. */
static int chan_read(int *hello)
{
	unsigned char buf[65536];
	ssize_t n = read(chan, buf, sizeof buf);
	if (n < 0)
		return errno == EINTR || errno == EAGAIN ? 1 : 0;
	if (n == 0)
		return 0;
	enum rl_err le = rl_feed(&session_link, buf, (size_t)n, &inbuf);
	if (le == RL_NOMEM)
		finish(3);
	if (le != RL_OK)
		finish(2);
	if (!session_link.awaiting)
		lost_at = 0;
	for (;;) {
		uint16_t type;
		const unsigned char *body;
		size_t blen;
		long fl = rp_frame(inbuf.data, inbuf.len, &type, &body, &blen);
		if (fl < 0)
			finish(2);
		if (fl == 0)
			return 1;
		struct rp_msg m;
		if (rp_decode(type, body, blen, &m) < 0)
			finish(2);
		int rc;
		if (!*hello) {
			rc = m.type == RP_HELLO ? 0 : -1;
			if (rc == 0) {
				struct rp_msg h = { .type = RP_HELLO, .version = RP_VERSION,
				                    .flags = is_pid1 ? RP_HELLO_PID1 : 0 };
				send_msg(&h);
				if (m.version != RP_VERSION) {
					flush(1);
					rc = -1;
				}
			}
			*hello = 1;
		} else {
			rc = handle(&m);
		}
		rp_msg_clear(&m);
		if (rc < 0)
			finish(2);
		rp_buf_consume(&inbuf, (size_t)fl);
	}
}

static void on_signals(void)
{
	struct signalfd_siginfo si;
	while (read(sigfd, &si, sizeof si) == (ssize_t)sizeof si)
		if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT || si.ssi_signo == SIGHUP)
			finish(0);
	reap();
}

static void setup(int argc, char **argv)
{
	int fd_given = 0, dial_given = 0;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--fd") == 0 && i + 1 < argc) {
			chan = atoi(argv[++i]);
			fd_given = 1;
		} else if (strcmp(argv[i], "--dial") == 0) {
			dial_given = 1;
		} else {
			fd_given = dial_given = 1;
			break;
		}
	}
	if (fd_given && dial_given) {
		fprintf(stderr, "usage: paddock-runner [--fd N | --dial]\n");
		exit(2);
	}
	const char *door = getenv("PADDOCK_FRONT_DOOR");
	dial_mode = dial_given || (!fd_given && door && *door);
	if (dial_mode) {
		char why[300], note[1024];
		if (dial_from_env(&dl, why, sizeof why, note, sizeof note) < 0) {
			fprintf(stderr, "paddock-runner: %s\n", why);
			exit(2);
		}
		if (note[0])
			fprintf(stderr, "paddock-runner: %s\n", note);
		chan = -1;
	} else if (fcntl(chan, F_GETFD) < 0) {
		fprintf(stderr, "paddock-runner: no channel on fd %d\n", chan);
		exit(2);
	}
	is_pid1 = getpid() == 1;
	/* Another process of the sandbox may not read its memory or ptrace it. */
	prctl(PR_SET_DUMPABLE, 0);
	if (!is_pid1)
		prctl(PR_SET_CHILD_SUBREAPER, 1);
	/* Nothing the runner inherited but the channel and 0-2 reaches a
	 * command: whatever its starter left open stays with the runner. */
	DIR *fds = opendir("/proc/self/fd");
	struct dirent *de;
	while (fds && (de = readdir(fds)))
		if (atoi(de->d_name) > 2)
			fcntl(atoi(de->d_name), F_SETFD, FD_CLOEXEC);
	if (fds)
		closedir(fds);
	if (chan >= 0)
		fcntl(chan, F_SETFL, O_NONBLOCK);
	signal(SIGPIPE, SIG_IGN);
	/* Standard descriptors open, so that no pipe of a command lands on
	 * one (a child's dup2 onto 0-2 would then clobber it). */
	int nul;
	while ((nul = open("/dev/null", O_RDWR)) >= 0 && nul <= 2)
		;
	if (nul > 2)
		close(nul);
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, NULL);
	sigfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (sigfd < 0) {
		perror("paddock-runner: signalfd");
		exit(2);
	}
	for (int i = 0; i < MAX_XFERS; i++)
		xfers[i].fd = -1;
	rl_init(&session_link, dial_mode, dial_mode);
}

/* ---- dial mode (dial.h) ---- */

/* Waits s seconds between dials, ending the runner at SIGTERM (a pod
 * deleted before its runner got through). */
static void dial_pause(double s)
{
	struct pollfd p = { sigfd, POLLIN, 0 };
	if (poll(&p, 1, (int)(s * 1000) + 1) > 0)
		on_signals();
}

/* The token from its file now, and the preamble of a connection of this
 * kind: its length; 0 when the token file cannot be read (worth another
 * try); -1 when what the file holds is no token.  *why says. */
static long door_preamble(char *pre, const char *kind, int port, const char *msg, char *why,
                          size_t whylen)
{
	char tok[DIAL_TOKEN_MAX + 1];
	long tl = dial_token(dl.token_file, tok, why, whylen);
	if (tl == -1) {
		snprintf(why, whylen, "cannot read the token file %s: %s", dl.token_file,
		         strerror(errno));
		return 0;
	}
	long pl = tl < 0 ? -1 : dial_preamble(pre, kind, dl.pod, port, tok, (size_t)tl, msg, why,
	                                      whylen);
	explicit_bzero(tok, sizeof tok);
	return pl;
}

/* When the runner's own dialling gives up: one deadline for every try,
 * those door_open makes and those after a front door that closed the
 * connection before paddock spoke (redial). */
static double runner_dial_end;

/* A connection of this kind to the front door, its preamble written,
 * retried with backoff until end: the socket, or -1 with why at the end.
 * The runner ends (status 3) at once when the token file holds no token
 * (no connection at all then, not even a fault's). */
static int door_dial(const char *kind, const char *msg, double end, char *why, size_t whylen)
{
	/* said: across calls, since a lost session's tries are one a call. */
	static double said;
	double pause = 0.2;
	char pre[DIAL_PREAMBLE_MAX];
	for (;;) {
		long pl = door_preamble(pre, kind, 0, msg, why, whylen);
		if (pl < 0) {
			fprintf(stderr, "paddock-runner: %s\n", why);
			finish(3);
		}
		int fd = pl ? dial_start(&dl) : -1;
		if (pl && fd >= 0) {
			/* Each try waits up to 10 s: a connection a policy
			 * drops may answer only by timing out. */
			double left = end - now(), t = left < 1 ? 1 : left < 10 ? left : 10;
			if (dial_wait(fd, now() + t) == 0 &&
			    dial_write(fd, pre, (size_t)pl, now() + 10) == 0) {
				explicit_bzero(pre, (size_t)pl);
				return fd;
			}
			int err = errno;
			close(fd);
			errno = err;
		}
		if (pl) {
			snprintf(why, whylen, "cannot reach the front door at %s: %s", dl.door.text,
			         strerror(errno));
			explicit_bzero(pre, (size_t)pl);
		}
		double left = end - now();
		if (left <= 0)
			return -1;
		/* Said at once and then every 10 s, for the pod's log (paddock
		 * reads it when the runner never comes). */
		if (pl && now() >= said + 10) {
			fprintf(stderr, "paddock-runner: %s; trying again\n", why);
			said = now();
		}
		dial_pause(pause < left ? pause : left);
		pause = pause * 2 < 5 ? pause * 2 : 5;
	}
}

/* door_dial for dl.seconds (the runner's own connection: until
 * runner_dial_end); the runner ends (status 3) when none is made.  Only
 * before the session: nothing runs yet. */
static int door_open(const char *kind, const char *msg)
{
	if (!runner_dial_end && !strcmp(kind, "runner"))
		runner_dial_end = now() + dl.seconds;
	double end = !strcmp(kind, "runner") ? runner_dial_end : now() + dl.seconds;
	char why[512];
	int fd = door_dial(kind, msg, end, why, sizeof why);
	if (fd < 0) {
		fprintf(stderr, "paddock-runner: %s\n", why);
		exit(3);
	}
	return fd;
}

/* The session's connection broke (read or write): in dial mode after
 * HELLO the session resumes on the next one (session_resume, from the
 * main loop); otherwise paddock is gone and so is the session. */
static void chan_lost(void)
{
	if (!dial_mode || chan < 0 || !session_link.keep)
		finish(0);
	close(chan);
	chan = -1;
	if (!lost_at) {
		lost_at = now();
		fprintf(stderr, "paddock-runner: the connection to the front door at %s broke; "
		        "resuming the session\n", dl.door.text);
	}
}

/* Dials the front door again for the lost session, one try of about a
 * second at a time (the runs go on meanwhile, their time limits kept by
 * the loop between tries; their output waits in their pipes once
 * OUTQ_HIGH is held), until PADDOCK_RUNNER_RESUME_SECONDS after the
 * break; RESUME goes first on the new connection.  The loop ends the
 * session past that time. */
static double resume_next, resume_pause;
static char resume_why[512];

static void session_resume(void)
{
	double t = now();
	if (t < resume_next)
		return;
	double end = lost_at + dl.resume_seconds;
	int fd = door_dial("runner", NULL, end < t + 1.0 ? end : t + 1.0, resume_why,
	                   sizeof resume_why);
	if (fd < 0) {
		/* A door that refuses at once is not asked again at once. */
		resume_pause = resume_pause ? (resume_pause * 2 < 2 ? resume_pause * 2 : 2) : 0.2;
		resume_next = now() + resume_pause;
		return;
	}
	/* Should this one close at once too (a door that takes the
	 * connection, then drops it), the next try waits a second. */
	resume_pause = 0;
	resume_next = now() + 1.0;
	resume_why[0] = '\0';
	chan = fd;
	if (rl_reconnect(&session_link) < 0)
		finish(3);
}

static int gateway_listen(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0), one = 1;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
	                         .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	if (fd >= 0)
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(fd, 64) < 0) {
		fprintf(stderr, "paddock-runner: cannot listen on 127.0.0.1:%d: %s\n", port,
		        strerror(errno));
		exit(3);
	}
	return fd;
}

/* A connection to gateway port i: a stream on the session (OPEN). */
static void gateway_accept(size_t i)
{
	int c = accept4(gw_lfd[i], NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (c < 0)
		return;
	int one = 1;
	setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	if (rs_open(&streams, c, (uint32_t)dl.ports[i], &session_link.out) < 0)
		close(c);
}

/* The front door (or a proxy or load balancer before it, whose backend
 * is not up) took the connection and closed it before paddock said HELLO:
 * not a session that ended but a dial that failed, tried again within the
 * same deadline (door_open exits 3 past it). */
static void redial(void)
{
	close(chan);
	rp_buf_consume(&inbuf, inbuf.len);
	rl_free(&session_link);
	rl_init(&session_link, 1, 1);
	fprintf(stderr, "paddock-runner: the front door at %s closed the connection before paddock "
	        "answered; trying again\n", dl.door.text);
	dial_pause(1.0);
	chan = door_open("runner", NULL);
}

/* Dial mode up to the session: the gateway ports' listeners, the probes,
 * then the runner's connection as the channel. */
static void dial_begin(void)
{
	rs_init(&streams, RP_STREAMS_MAX, 1);
	for (size_t i = 0; i < dl.nports; i++)
		gw_lfd[i] = gateway_listen(dl.ports[i]);
	char which[100], why[300];
	int rc = dial_probe(&dl, which, sizeof which, why, sizeof why);
	if (rc < 0) {
		fprintf(stderr, "paddock-runner: %s\n", why);
		exit(3);
	}
	if (rc > 0) {
		char msg[DIAL_MESSAGE_MAX + 1];
		snprintf(msg, sizeof msg, "the pod reached %s, which the NetworkPolicies must close",
		         which);
		fprintf(stderr, "paddock-runner: %s\n", msg);
		int fd = door_open("fault", msg);
		shutdown(fd, SHUT_WR);
		/* Until paddock closed it (it has the message then), 5 s at
		 * most: a relay in front of the pod's network (a sidecar, a
		 * proxy) may drop what it has not passed on yet when the pod's
		 * first process ends. */
		struct pollfd p = { .fd = fd, .events = POLLIN };
		char sink[256];
		double until = now() + 5;
		while (now() < until && poll(&p, 1, (int)((until - now()) * 1000) + 1) > 0 &&
		       read(fd, sink, sizeof sink) > 0)
			;
		close(fd);
		exit(3);
	}
	chan = door_open("runner", NULL);
}

/* Writes queued input to the commands that read it. */
static void stdin_flush(struct run *r)
{
	while (r->inq.len && r->in_fd >= 0) {
		ssize_t n = write(r->in_fd, r->inq.data, r->inq.len);
		if (n <= 0) {
			if (n < 0 && errno != EAGAIN && errno != EINTR) {
				r->in_taken += r->inq.len;
				r->inq.len = 0;   /* the command closed it: dropped */
			}
			break;
		}
		rp_buf_consume(&r->inq, (size_t)n);
		r->in_taken += (uint64_t)n;
	}
	stdin_told(r);
	if (r->in_close && !r->inq.len && r->in_fd >= 0 && r->in_fd != r->out_fd) {
		close(r->in_fd);
		r->in_fd = -1;
	}
}

/* Long: the one poll loop: the channel, the signals, each run's output and
 * input, the time limits, the files on their way out, and in dial mode the
 * gateway ports and their streams (once the session began: no OPEN before
 * the runner's HELLO). */
int main(int argc, char **argv)
{
	setup(argc, argv);
	if (dial_mode)
		dial_begin();
	int hello = 0;
	struct pollfd pf[2 + 3 * MAX_RUNS + DIAL_PORTS_MAX + RP_STREAMS_MAX];
	int owner[2 + 3 * MAX_RUNS];
	for (;;) {
		double t = now(), wake = 0;
		for (int i = 0; i < MAX_RUNS; i++) {
			struct run *r = &runs[i];
			if (!r->used || r->ended)
				continue;
			if (r->deadline && r->pid > 0) {
				if (t >= r->deadline) {
					r->hit |= RP_HIT_TIME;
					kill(-r->pid, SIGKILL);
					r->deadline = 0;
				} else if (!wake || r->deadline < wake) {
					wake = r->deadline;
				}
			}
			if (r->pid == 0) {
				/* Ended: what it wrote before is in the pipe now
				 * (in a pty, in a moment). */
				run_read_last(r);
				run_end(r);
			}
		}
		/* A connection that came back but was not answered counts
		 * against the same time. */
		if (lost_at && t >= lost_at + dl.resume_seconds) {
			fprintf(stderr, "paddock-runner: the session was lost: not resumed within %.0f s%s%s\n",
			        dl.resume_seconds, resume_why[0] ? ": " : "", resume_why);
			finish(3);
		}
		if (lost_at && (!wake || lost_at + dl.resume_seconds < wake))
			wake = lost_at + dl.resume_seconds;
		if (chan < 0 && resume_next && (!wake || resume_next < wake))
			wake = resume_next;
		file_pump();
		flush(0);
		if (chan < 0)
			session_resume();
		int n = 0;
		pf[n] = (struct pollfd){ chan, POLLIN | (rl_pending(&session_link) ? POLLOUT : 0), 0 };
		owner[n++] = -1;
		pf[n] = (struct pollfd){ sigfd, POLLIN, 0 };
		owner[n++] = -1;
		for (int i = 0; i < MAX_RUNS; i++) {
			struct run *r = &runs[i];
			if (!r->used || r->ended)
				continue;
			int in_wait = r->in_fd >= 0 && (r->inq.len || r->in_close);
			short ev = r->out_fd >= 0 && rl_held(&session_link) < OUTQ_HIGH ? POLLIN : 0;
			if (in_wait && r->in_fd == r->out_fd)
				ev |= POLLOUT;   /* a pty: one descriptor both ways */
			if (ev) {
				pf[n] = (struct pollfd){ r->out_fd, ev, 0 };
				owner[n++] = i;
			}
			if (in_wait && r->in_fd != r->out_fd) {
				pf[n] = (struct pollfd){ r->in_fd, POLLOUT, 0 };
				owner[n++] = i;
			}
			if (r->err_fd >= 0 && rl_held(&session_link) < OUTQ_HIGH) {
				pf[n] = (struct pollfd){ r->err_fd, POLLIN, 0 };
				owner[n++] = i;
			}
		}
		int runs_end = n, gw_base = n;
		int room = rl_held(&session_link) < OUTQ_HIGH;
		for (size_t i = 0; dial_mode && i < dl.nports; i++)
			pf[n++] = (struct pollfd){ gw_lfd[i],
			                           hello && !rs_full(&streams) && room ? POLLIN : 0, 0 };
		int rel_base = n;
		n += (int)rs_pollfds(&streams, pf + rel_base, room);
		int pending = 0;
		for (int i = 0; i < MAX_XFERS; i++)
			pending |= xfers[i].used && xfers[i].get;
		int timeout = pending && rl_held(&session_link) < OUTQ_HIGH ? 0 : -1;
		if (wake) {
			int ms = (int)((wake - t) * 1000.0) + 1;
			timeout = timeout < 0 || ms < timeout ? ms : timeout;
		}
		if (poll(pf, (nfds_t)n, timeout) < 0 && errno != EINTR)
			finish(3);
		if (pf[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			if (!chan_read(&hello)) {
				if (!dial_mode)
					finish(0);
				if (hello)
					chan_lost();
				else
					redial();
			}
		}
		if (pf[0].revents & POLLOUT)
			flush(0);
		if (pf[1].revents & POLLIN)
			on_signals();
		for (int i = 2; i < runs_end; i++) {
			if (!pf[i].revents)
				continue;
			struct run *r = &runs[owner[i]];
			if ((pf[i].revents & POLLOUT) ||
			    (!(pf[i].events & POLLIN) && (pf[i].revents & (POLLERR | POLLHUP))))
				stdin_flush(r);
			if ((pf[i].events & POLLIN) && (pf[i].revents & (POLLIN | POLLHUP | POLLERR)))
				run_read_fd(r, pf[i].fd == r->err_fd, 0);
		}
		/* The channel's frames may have ended streams meanwhile:
		 * each stream knows its own entry (runner_stream.h). */
		rs_step(&streams, pf + rel_base, &session_link.out);
		for (int i = gw_base; i < rel_base; i++)
			if (pf[i].revents & POLLIN)
				gateway_accept((size_t)(i - gw_base));
	}
}
