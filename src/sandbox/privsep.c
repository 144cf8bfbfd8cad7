/* privsep: the root helper, its keepers, and the backend their clients
 * use (privsep.h). */
#include "autoconfig.h"
#include "privsep.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <linux/nsfs.h>

#include "buf.h"
#include "child.h"
#include "fsx.h"
#include "gateway.h"
#include "i18n.h"
#include "paths.h"
#include "sandbox.h"
#include "sandbox_int.h"

/* A message's most bytes: a sandbox's spec with its home files fits many
 * times over, and a unix datagram socket takes it with the default
 * buffers. */
#define PS_MAX (160u << 10)
#define PS_MAXFDS 64
/* The host files one sandbox may be shown: each travels as a descriptor
 * beside the netns, the prompt and the agent's folder. */
#define PS_MAXFILES 48

enum ps_op {
	PS_PREFLIGHT = 1, PS_JANITOR, PS_NETNS, PS_HAND_OVER, PS_REMOVE,
	PS_CREATE, PS_RUN, PS_COPY_OUT, PS_COPY_IN, PS_DESTROY,
	PS_CANCEL,             /* during a run: stop it */
	PS_CHANGES, PS_BRANCH,
};

static struct {
	int active;            /* a client of a helper */
	volatile int died;     /* the helper ended */
	char *dir;             /* the socket's folder */
	char *sock;
	char *data_dir;
	uid_t uid;             /* the user clients run as */
	gid_t gid;
	uid_t sbx_uid;         /* the sandbox uid */
	gid_t sbx_gid;
	const struct sandbox_backend *be;  /* in the helper: bwrap, root mode */
} ps;

/* ---- messages: a byte string of fields, sent as one datagram with
 * descriptors beside it ---- */

struct wire {
	struct buf b;
	size_t pos;
	int bad;               /* a read ran past the end */
};

static void put_u32(struct wire *w, uint32_t v)
{
	buf_add(&w->b, &v, sizeof v);
}

static void put_u64(struct wire *w, uint64_t v)
{
	buf_add(&w->b, &v, sizeof v);
}

static void put_f64(struct wire *w, double v)
{
	buf_add(&w->b, &v, sizeof v);
}

/* A string with its NUL; NULL as length 0. */
static void put_str(struct wire *w, const char *s)
{
	uint32_t n = s ? (uint32_t)strlen(s) + 1 : 0;
	put_u32(w, n);
	if (n)
		buf_add(&w->b, s, n);
}

static const void *get_mem(struct wire *w, size_t n)
{
	if (w->bad || w->b.len - w->pos < n) {
		w->bad = 1;
		return NULL;
	}
	const void *p = w->b.data + w->pos;
	w->pos += n;
	return p;
}

/* A fixed-size field into v (zeroes past the end). */
static void get_into(struct wire *w, void *v, size_t n)
{
	const void *p = get_mem(w, n);
	if (p)
		memcpy(v, p, n);
	else
		memset(v, 0, n);
}

static uint32_t get_u32(struct wire *w)
{
	uint32_t v;
	get_into(w, &v, sizeof v);
	return v;
}

static uint64_t get_u64(struct wire *w)
{
	uint64_t v;
	get_into(w, &v, sizeof v);
	return v;
}

static double get_f64(struct wire *w)
{
	double v;
	get_into(w, &v, sizeof v);
	return v;
}

/* Points into the message (valid while it is); NULL for NULL or bad. */
static const char *get_str(struct wire *w)
{
	uint32_t n = get_u32(w);
	if (n == 0)
		return NULL;
	const char *s = get_mem(w, n);
	if (s && s[n - 1] != '\0') {
		w->bad = 1;
		return NULL;
	}
	return s;
}

/* A list of strings, NULL-terminated (the array is malloc'd). */
static void put_strv(struct wire *w, const char *const *v)
{
	uint32_t n = 0;
	while (v && v[n])
		n++;
	put_u32(w, v ? n + 1 : 0);
	for (uint32_t i = 0; i < n; i++)
		put_str(w, v[i]);
}

static const char **get_strv(struct wire *w)
{
	uint32_t n = get_u32(w);
	if (n == 0 || n > 4096) {
		w->bad |= n > 4096;
		return NULL;
	}
	const char **v = xcalloc(n, sizeof *v);
	for (uint32_t i = 0; i + 1 < n; i++) {
		v[i] = get_str(w);
		if (!v[i])
			w->bad = 1;
	}
	return v;
}

static void wire_free(struct wire *w)
{
	buf_free(&w->b);
	memset(w, 0, sizeof *w);
}

static int ps_send(int fd, const struct wire *w, const int *fds, size_t nfds)
{
	char cbuf[CMSG_SPACE(sizeof(int) * PS_MAXFDS)];
	struct iovec iov = { .iov_base = w->b.data, .iov_len = w->b.len };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	if (w->b.len > PS_MAX || nfds > PS_MAXFDS) {
		errno = EMSGSIZE;
		return -1;
	}
	if (nfds) {
		memset(cbuf, 0, sizeof cbuf);
		msg.msg_control = cbuf;
		msg.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(cm), fds, sizeof(int) * nfds);
	}
	ssize_t r;
	do
		r = sendmsg(fd, &msg, MSG_NOSIGNAL);
	while (r < 0 && errno == EINTR);
	return r == (ssize_t)w->b.len ? 0 : -1;
}

/* One message into w (reset), its descriptors into fds (at most max;
 * more are closed).  0, or -1 at the end of the connection (errno 0) or
 * on an error. */
static int ps_recv(int fd, struct wire *w, int *fds, size_t max, size_t *nfds)
{
	char cbuf[CMSG_SPACE(sizeof(int) * PS_MAXFDS)];
	wire_free(w);
	buf_grow(&w->b, PS_MAX);
	struct iovec iov = { .iov_base = w->b.data, .iov_len = PS_MAX };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
	                      .msg_controllen = sizeof cbuf };
	*nfds = 0;
	ssize_t r;
	do
		r = recvmsg(fd, &msg, MSG_CMSG_CLOEXEC);
	while (r < 0 && errno == EINTR);
	if (r <= 0) {
		if (r == 0)
			errno = 0;
		return -1;
	}
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		size_t n = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		int got[PS_MAXFDS];
		memcpy(got, CMSG_DATA(cm), n * sizeof(int));
		for (size_t i = 0; i < n; i++) {
			if (*nfds < max)
				fds[(*nfds)++] = got[i];
			else
				close(got[i]);
		}
	}
	w->b.len = (size_t)r;
	w->b.data[r] = '\0';
	if (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) {
		errno = EMSGSIZE;
		return -1;
	}
	return 0;
}

/* ---- the client side ---- */

int privsep_active(void)
{
	return ps.active;
}

int privsep_client_get(struct privsep_client *c)
{
	if (!ps.active)
		return 0;
	*c = (struct privsep_client){ .sock = ps.sock, .uid = ps.uid, .gid = ps.gid,
	                              .sbx_uid = ps.sbx_uid, .sbx_gid = ps.sbx_gid };
	return 1;
}

void privsep_client_adopt(const struct privsep_client *c, const char *data_dir)
{
	privsep_stop();
	ps.sock = xstrdup(c->sock);
	ps.data_dir = xstrdup(data_dir);
	ps.uid = c->uid;
	ps.gid = c->gid;
	ps.sbx_uid = c->sbx_uid;
	ps.sbx_gid = c->sbx_gid;
	ps.active = 1;
}

/* A keeper of one's own: the connection's fd. */
static int ps_connect(struct err *e)
{
	if (!ps.active)
		return err_set(e, _("paddock's root helper is not running"));
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	snprintf(a.sun_path, sizeof a.sun_path, "%s", ps.sock);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
		err_errno(e, _("cannot reach paddock's root helper at %s (serve must be "
		               "restarted)"), ps.sock);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* Reads the answer's status into e: 0 or -1. */
static int reply_status(struct wire *w, struct err *e)
{
	int32_t rc = (int32_t)get_u32(w);
	enum err_kind kind = (enum err_kind)get_u32(w);
	const char *msg = get_str(w);
	if (w->bad)
		return err_set(e, _("paddock's root helper sent a malformed answer"));
	if (rc == 0)
		return 0;
	err_kind_set(e, kind, "%s", msg ? msg : _("paddock's root helper failed"));
	return -1;
}

/* Sends req (with fds) on fd and reads the answer into rep (with its
 * descriptors into rfds).  -1 with e set when either fails or the answer
 * is a failure. */
static int ps_call(int fd, struct wire *req, const int *fds, size_t nfds, struct wire *rep,
                   int *rfds, size_t maxr, size_t *nr, struct err *e)
{
	size_t dummy = 0;
	if (!nr)
		nr = &dummy;
	*nr = 0;
	if (ps_send(fd, req, fds, nfds) < 0)
		return err_errno(e, _("cannot ask paddock's root helper"));
	if (ps_recv(fd, rep, rfds, maxr, nr) < 0) {
		if (errno == 0)
			return err_set(e, _("paddock's root helper ended the connection"));
		return err_errno(e, _("cannot read paddock's root helper's answer"));
	}
	if (reply_status(rep, e) < 0) {
		for (size_t i = 0; i < *nr; i++)
			close(rfds[i]);
		*nr = 0;
		return -1;
	}
	return 0;
}

/* One request on a connection of its own. */
static int ps_once(struct wire *req, struct wire *rep, int *rfds, size_t maxr, size_t *nr,
                   struct err *e)
{
	int fd = ps_connect(e);
	if (fd < 0)
		return -1;
	int rc = ps_call(fd, req, NULL, 0, rep, rfds, maxr, nr, e);
	close(fd);
	return rc;
}

/* The backend's netns: the gateway's namespace, made by a keeper. */
static int ps_netns(const int *ports, size_t nports, int *listen_fds, int *netns_fd,
                    struct err *e)
{
	struct wire req = {0}, rep = {0};
	put_u32(&req, PS_NETNS);
	put_u32(&req, (uint32_t)nports);
	for (size_t i = 0; i < nports; i++)
		put_u32(&req, (uint32_t)ports[i]);
	int fds[PS_MAXFDS];
	size_t n = 0;
	int rc = ps_once(&req, &rep, fds, PS_MAXFDS, &n, e);
	if (rc == 0 && n != nports + 1) {
		for (size_t i = 0; i < n; i++)
			close(fds[i]);
		rc = err_set(e, _("paddock's root helper sent a malformed answer"));
	}
	if (rc == 0) {
		memcpy(listen_fds, fds, nports * sizeof *fds);
		*netns_fd = fds[nports];
	}
	wire_free(&req);
	wire_free(&rep);
	return rc;
}

static int ps_path_op(enum ps_op op, const char *path, struct err *e)
{
	struct wire req = {0}, rep = {0};
	put_u32(&req, op);
	put_str(&req, path);
	int rc = ps_once(&req, &rep, NULL, 0, NULL, e);
	wire_free(&req);
	wire_free(&rep);
	return rc;
}

int privsep_hand_over(const char *dir, struct err *e)
{
	return ps_path_op(PS_HAND_OVER, dir, e);
}

int privsep_remove(const char *path, struct err *e)
{
	return ps_path_op(PS_REMOVE, path, e);
}

/* ---- the backend ---- */

struct sandbox {
	int fd;                /* the keeper's connection */
};

static void put_spec(struct wire *w, const struct sandbox_spec *s)
{
	put_str(w, s->task_id);
	put_str(w, s->ws.repo);
	put_str(w, s->ws.base);
	put_str(w, s->ws.template_dir);
	put_u32(w, (uint32_t)s->ws.direct);
	const struct limits *l = &s->limits;
	put_f64(w, l->timeout);
	put_u64(w, l->memory);
	put_u64(w, (uint64_t)l->pids);
	put_u64(w, l->disk);
	put_u64(w, l->output);
	put_u64(w, l->bundle);
	put_f64(w, l->budget);
	put_u64(w, l->budget_tokens);
	put_f64(w, l->cpus);
	put_u32(w, (uint32_t)l->cpus_set);
	put_u32(w, (uint32_t)s->nfiles);
	for (size_t i = 0; i < s->nfiles; i++)
		put_str(w, s->files[i].host);
	put_str(w, s->prompt_file);
	put_u32(w, s->net.netns_fd >= 0);
	put_str(w, s->net.bridge_dir);
	put_str(w, s->net.bridge_ports);
	put_str(w, s->agent_dir);
	put_u32(w, (uint32_t)s->nhome_files);
	for (size_t i = 0; i < s->nhome_files; i++) {
		put_str(w, s->home_files[i].path);
		put_str(w, s->home_files[i].content);
	}
}

/* The client's side of a create: it opens every host object itself, as
 * its own user, and the keeper gets the descriptors (the netns, the
 * prompt, the agent's folder, the files, in that order), never a path
 * to look up as root.  The template is the one path: the keeper walks it
 * below the templates folder (keep_template). */
static int ps_create(struct sandbox **out, const struct sandbox_spec *spec, struct err *e)
{
	*out = NULL;
	int fds[PS_MAXFDS];
	size_t nfds = 0;
	int rc = -1, fd = -1;
	struct wire req = {0}, rep = {0};
	if (spec->nfiles > PS_MAXFILES) {
		err_set(e, _("a sandbox shows at most %d host files; list fewer in the agent's "
		             "files"), PS_MAXFILES);
		goto out;
	}
	if (spec->net.netns_fd >= 0)
		fds[nfds++] = spec->net.netns_fd;
	const char *paths[PS_MAXFILES + 2];
	size_t np = 0;
	if (spec->prompt_file)
		paths[np++] = spec->prompt_file;
	if (spec->agent_dir)
		paths[np++] = spec->agent_dir;
	for (size_t i = 0; i < spec->nfiles; i++)
		paths[np++] = spec->files[i].host;
	for (size_t i = 0; i < np; i++) {
		int dir = spec->agent_dir && paths[i] == spec->agent_dir;
		int f = open(paths[i], dir ? O_RDONLY | O_DIRECTORY | O_CLOEXEC
		                           : O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		if (f < 0) {
			err_errno(e, _("cannot open %s for the sandbox"), paths[i]);
			goto out;
		}
		fds[nfds++] = f;
	}
	fd = ps_connect(e);
	if (fd < 0)
		goto out;
	put_u32(&req, PS_CREATE);
	put_spec(&req, spec);
	rc = ps_call(fd, &req, fds, nfds, &rep, NULL, 0, NULL, e);
out:
	for (size_t i = spec->net.netns_fd >= 0 ? 1 : 0; i < nfds; i++)
		close(fds[i]);
	wire_free(&req);
	wire_free(&rep);
	if (rc < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	*out = xcalloc(1, sizeof **out);
	(*out)->fd = fd;
	return 0;
}

/* Waits for the answer to a run, passing a cancel on (the supervisor's
 * SIGTERM, the gateway's budget) while the command runs. */
static int ps_run_wait(int fd, const volatile int *stop)
{
	int cancelled = 0;
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int n = poll(&p, 1, 100);
		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return -1;
		if (!cancelled && (sandbox_cancel_requested() || (stop && *stop))) {
			struct wire c = {0};
			put_u32(&c, PS_CANCEL);
			ps_send(fd, &c, NULL, 0);
			wire_free(&c);
			cancelled = 1;
		}
	}
}

static int ps_run(struct sandbox *sb, const struct sandbox_cmd *cmd, struct sandbox_result *r,
                  struct err *e)
{
	int b = sandbox_run_begin(cmd, r, e);
	if (b != 0)
		return b < 0 ? -1 : 0;
	struct wire req = {0}, rep = {0};
	put_u32(&req, PS_RUN);
	put_strv(&req, cmd->argv);
	put_strv(&req, cmd->env);
	put_u32(&req, cmd->output_used != NULL);
	put_u64(&req, cmd->output_used ? *cmd->output_used : 0);
	put_f64(&req, cmd->deadline);
	/* A shell's command (shell.h): its terminal's frames on the
	 * socketpair's end, passed to the keeper (keep_run). */
	put_u32(&req, !cmd->term && cmd->out_fd >= 0);
	put_u32(&req, cmd->term != NULL);
	put_u32(&req, cmd->term && cmd->tty);
	put_u32(&req, cmd->term ? cmd->rows : 0);
	put_u32(&req, cmd->term ? cmd->cols : 0);
	int fds[2], nfds = 0, rc = -1;
	if (cmd->term)
		fds[nfds++] = *cmd->term;
	else if (cmd->out_fd >= 0)
		fds[nfds++] = cmd->out_fd;
	if (ps_send(sb->fd, &req, fds, (size_t)nfds) < 0) {
		err_errno(e, _("cannot ask paddock's root helper"));
		goto out;
	}
	size_t nr = 0;
	if (ps_run_wait(sb->fd, cmd->stop) < 0 || ps_recv(sb->fd, &rep, NULL, 0, &nr) < 0) {
		err_set(e, _("paddock's root helper ended the connection"));
		goto out;
	}
	if (reply_status(&rep, e) < 0)
		goto out;
	r->end = (enum sandbox_end)get_u32(&rep);
	r->code = (int)get_u32(&rep);
	r->hit = get_u32(&rep);
	uint64_t used = get_u64(&rep);
	if (rep.bad) {
		err_set(e, _("paddock's root helper sent a malformed answer"));
		goto out;
	}
	if (cmd->output_used)
		*cmd->output_used = used;
	rc = 0;
out:
	wire_free(&req);
	wire_free(&rep);
	return rc;
}

static int ps_copy_out(struct sandbox *sb, const char *inside, const char *host, uint64_t cap,
                       struct err *e)
{
	/* The file is the client's: it opens it, the keeper fills it. */
	int fd = open(host, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return err_errno(e, _("cannot create %s"), host);
	struct wire req = {0}, rep = {0};
	put_u32(&req, PS_COPY_OUT);
	put_str(&req, inside);
	put_u64(&req, cap);
	int rc = ps_call(sb->fd, &req, &fd, 1, &rep, NULL, 0, NULL, e);
	close(fd);
	if (rc < 0)
		unlink(host);
	wire_free(&req);
	wire_free(&rep);
	return rc;
}

static int ps_copy_in(struct sandbox *sb, const char *host, const char *inside, struct err *e)
{
	int fd = open(host, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return err_errno(e, _("cannot copy %s to %s"), host, inside);
	struct wire req = {0}, rep = {0};
	put_u32(&req, PS_COPY_IN);
	put_str(&req, inside);
	int rc = ps_call(sb->fd, &req, &fd, 1, &rep, NULL, 0, NULL, e);
	close(fd);
	wire_free(&req);
	wire_free(&rep);
	return rc;
}

static void ps_destroy(struct sandbox *sb)
{
	if (!sb)
		return;
	struct wire req = {0}, rep = {0};
	struct err e = {{0}};
	put_u32(&req, PS_DESTROY);
	ps_call(sb->fd, &req, NULL, 0, &rep, NULL, 0, NULL, &e);
	wire_free(&req);
	wire_free(&rep);
	close(sb->fd);
	free(sb);
}

static int ps_preflight(struct err *e)
{
	struct wire req = {0}, rep = {0};
	put_u32(&req, PS_PREFLIGHT);
	int rc = ps_once(&req, &rep, NULL, 0, NULL, e);
	wire_free(&req);
	wire_free(&rep);
	return rc;
}

static void ps_janitor(void)
{
	struct wire req = {0}, rep = {0};
	struct err e = {{0}};
	put_u32(&req, PS_JANITOR);
	ps_once(&req, &rep, NULL, 0, NULL, &e);
	wire_free(&req);
	wire_free(&rep);
}

static void ps_owner(uid_t *uid, gid_t *gid)
{
	*uid = ps.sbx_uid;
	*gid = ps.sbx_gid;
}

static int ps_changes(struct sandbox *sb, struct err *e)
{
	struct wire req = {0}, rep = {0};
	put_u32(&req, PS_CHANGES);
	int rc = ps_call(sb->fd, &req, NULL, 0, &rep, NULL, 0, NULL, e);
	wire_free(&req);
	wire_free(&rep);
	return rc;
}

/* term(): a shell's command runs on the keeper's session too, its
 * frames on a socketpair the keeper is given (ps_run, keep_run). */
static int ps_term(struct sandbox *sb)
{
	(void)sb;
	return 1;
}

static int ps_branch(struct sandbox *sb, const char *branch, const char *sha, struct err *e)
{
	struct wire req = {0}, rep = {0};
	put_u32(&req, PS_BRANCH);
	put_str(&req, branch);
	put_str(&req, sha);
	int rc = ps_call(sb->fd, &req, NULL, 0, &rep, NULL, 0, NULL, e);
	wire_free(&req);
	wire_free(&rep);
	return rc;
}

static const struct sandbox_backend privsep_backend = {
	.name = "bwrap", .nets = SANDBOX_NET_NETNS,
	.create = ps_create, .run = ps_run, .copy_out = ps_copy_out, .copy_in = ps_copy_in,
	.changes = ps_changes, .branch = ps_branch, .term = ps_term,
	.destroy = ps_destroy, .preflight = ps_preflight, .janitor = ps_janitor,
	.owner = ps_owner, .netns = ps_netns,
};

const struct sandbox_backend *sandbox_backend_privsep(void)
{
	return &privsep_backend;
}

/* ---- the keeper: root, for one client ---- */

struct keeper {
	int fd;
	struct sandbox *sb;
	char *tmp;             /* a folder of root's for copies */
	uint64_t disk;         /* the sandbox's limits.disk: the most a copy holds */
	int gone;              /* the client ended the connection */
};

static void reply_put(struct wire *w, int rc, const struct err *e)
{
	put_u32(w, (uint32_t)rc);
	put_u32(w, rc < 0 ? (uint32_t)e->kind : 0);
	put_str(w, rc < 0 ? (e->msg[0] ? e->msg : _("paddock's root helper failed")) : NULL);
}

/* Runs fn(arg) in a child (child.h) and returns its exit code, or -1. */
static int in_child(int (*fn)(void *), void *arg)
{
	struct child ch = { .fn = fn, .arg = arg,
	                    .stdio = { CHILD_NULL, CHILD_NULL, CHILD_INHERIT } };
	if (child_start(&ch, NULL) < 0)
		return -1;
	return child_exit_code(child_finish(&ch));
}

static int become(uid_t uid, gid_t gid)
{
	return setgroups(0, NULL) < 0 || setresgid(gid, gid, gid) < 0 ||
	       setresuid(uid, uid, uid) < 0 ? -1 : 0;
}

static int plain_name(const char *s)
{
	if (!s || !*s || strlen(s) > 200 || !strcmp(s, ".") || !strcmp(s, ".."))
		return 0;
	for (const char *p = s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '-' || *p == '_' || *p == '.'))
			return 0;
	return 1;
}

/* The length of <data>/templates when path is below it, else 0 with e
 * set. */
static size_t below_templates(const char *path, struct err *e)
{
	char *root = paths_templates_dir(ps.data_dir);
	size_t rl = strlen(root);
	if (!path || strncmp(path, root, rl) || path[rl] != '/')
		rl = 0;
	free(root);
	if (!rl)
		err_set(e, _("%s is not below paddock's templates folder"), path ? path : "");
	return rl;
}

/* <data>/templates, opened as root without following a link, and the
 * client's own: everything below it is the client's to show (keepers
 * walk only below it, keep_template).  -1 with e set. */
static int open_templates(struct err *e)
{
	int data = open(ps.data_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	int fd = data < 0 ? -1 : fsx_open_beneath(data, "templates", O_PATH | O_DIRECTORY);
	struct stat st;
	if (data >= 0)
		close(data);
	if (fd < 0 || fstat(fd, &st) < 0) {
		err_errno(e, _("cannot open paddock's templates folder in %s"), ps.data_dir);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (st.st_uid != ps.uid) {
		close(fd);
		return err_set(e, _("paddock's templates folder in %s is not the user's; give it to "
		                    "the user paddock.user names"), ps.data_dir);
	}
	return fd;
}

/* The folder that holds path's last component, opened below
 * <data>/templates without following a link (fsx_open_beneath); *name is
 * that component.  -1 unless path is below the templates folder. */
static int open_template_parent(const char *path, const char **name, struct err *e)
{
	size_t rl = below_templates(path, e);
	if (!rl)
		return -1;
	const char *rel = path + rl + 1, *slash = strrchr(rel, '/');
	const char *last = slash ? slash + 1 : rel;
	if (!*last || !strcmp(last, ".") || !strcmp(last, "..")) {
		errno = EINVAL;
		return err_errno(e, _("cannot open %s"), path);
	}
	int tdir = open_templates(e);
	if (tdir < 0)
		return -1;
	char *parent = slash ? xstrndup(rel, (size_t)(slash - rel)) : xstrdup(".");
	int fd = fsx_open_beneath(tdir, parent, O_RDONLY | O_DIRECTORY);
	int saved = errno;
	free(parent);
	close(tdir);
	errno = saved;
	if (fd < 0)
		return err_errno(e, _("cannot open %s"), path);
	*name = last;
	return fd;
}

/* The template folder path names, walked below <data>/templates without
 * following a link; the client's or the sandbox uid's (handed over).
 * -1 with e set. */
static int keep_template(const char *path, struct err *e)
{
	size_t rl = below_templates(path, e);
	if (!rl)
		return -1;
	int tdir = open_templates(e);
	if (tdir < 0)
		return -1;
	int fd = fsx_open_beneath(tdir, path + rl + 1, O_RDONLY | O_DIRECTORY);
	int saved = errno;
	close(tdir);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0) {
		errno = fd < 0 ? saved : errno;
		if (errno == ELOOP || errno == EXDEV || errno == ENOTDIR)
			err_set(e, _("%s is not a folder below paddock's templates folder: a symbolic "
			             "link or '..' is in the way; refusing it"), path);
		else
			err_errno(e, _("cannot open %s"), path);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (st.st_uid != ps.uid && st.st_uid != ps.sbx_uid) {
		close(fd);
		return err_set(e, _("%s is neither the user's nor the sandbox uid's; refusing it"),
		               path);
	}
	return fd;
}

/* A descriptor the client passed for a host object: open for reading
 * (not O_PATH: the client proved it may read it by opening it), of the
 * type asked (a folder or a regular file: never a FIFO, socket or device
 * that could block root or stream without end), the client's own, or
 * root's where root_ok (a system file), and not on a kernel interface
 * filesystem (fsx_kernel_fs).  0, or -1 with e set. */
static int check_client_fd(int fd, int dir, int root_ok, const char *what, struct err *e)
{
	struct stat st;
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || (fl & O_PATH) || (fl & O_ACCMODE) == O_WRONLY || fstat(fd, &st) < 0)
		return err_set(e, _("%s was not passed open for reading; refusing it"), what);
	if (dir ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode))
		return err_set(e, dir ? _("%s is not a folder; refusing it")
		                      : _("%s is not a regular file; refusing it"), what);
	if (st.st_uid != ps.uid && !(root_ok && st.st_uid == 0))
		return err_set(e, _("%s belongs to uid %lu, not to the user; refusing it"), what,
		               (unsigned long)st.st_uid);
	/* Such a file answers each read by who reads it: root would read
	 * with its own rights what the user may not see (/proc/1/stat). */
	if (fsx_kernel_fs(fd))
		return err_set(e, _("%s is a file of the kernel's (/proc, /sys or the like), which "
		                    "root would read with its own rights; refusing it (give a copy "
		                    "of it instead)"), what);
	return 0;
}

/* The record of a network namespace a keeper made (keep_netns), in the
 * helper's folder, which is root's: "<dir>/netns/<dev>-<ino>". */
static char *netns_record(const struct stat *st)
{
	return xasprintf("%s/netns/%llu-%llu", ps.dir, (unsigned long long)st->st_dev,
	                 (unsigned long long)st->st_ino);
}

/* The netns descriptor a client passed for its sandbox: a network
 * namespace a keeper made for the gateway (recorded), owned by root's
 * user namespace (not one the client made in a user namespace of its
 * own), and never the host's.  0, or -1 with e set. */
static int check_netns(int fd, struct err *e)
{
	struct stat st, host, uns, huns;
	if (fstat(fd, &st) < 0 || ioctl(fd, NS_GET_NSTYPE) != CLONE_NEWNET)
		return err_set(e, _("the sandbox's network namespace is not a network namespace; "
		                    "refusing it"));
	if (stat("/proc/self/ns/net", &host) == 0 && host.st_dev == st.st_dev &&
	    host.st_ino == st.st_ino)
		return err_set(e, _("the sandbox was asked to run in the host's network namespace; "
		                    "refusing it"));
	int u = ioctl(fd, NS_GET_USERNS);
	int same = u >= 0 && fstat(u, &uns) == 0 && stat("/proc/self/ns/user", &huns) == 0 &&
	           uns.st_dev == huns.st_dev && uns.st_ino == huns.st_ino;
	if (u >= 0)
		close(u);
	char *rec = netns_record(&st);
	int made = access(rec, F_OK) == 0;
	free(rec);
	if (!same || !made)
		return err_set(e, _("the sandbox's network namespace is not one paddock's root "
		                    "helper made for its gateway; refusing it"));
	return 0;
}

/* The refresh git makes of a template's index after the chown (the
 * ctimes changed), as the sandbox uid: nothing of the checkout's own
 * configuration runs as root.  The sandbox uid cannot enter the data
 * directory, so the tree is shown to it at /tmp/t of a mount namespace
 * of the child's own. */
static int refresh_child(void *arg)
{
	const char *path = arg;
	/* A bind's source must be in the namespace of the mount: the tree
	 * is opened again once in the new one. */
	struct err e = {{0}};
	const char *name;
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return 125;
	int pfd = open_template_parent(path, &name, &e);
	int tfd = pfd < 0 ? -1 : openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
	char src[64];
	snprintf(src, sizeof src, "/proc/self/fd/%d", tfd);
	if (tfd < 0 ||
	    mount("paddock", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=64k") < 0 ||
	    mkdir("/tmp/t", 0755) < 0 || mount(src, "/tmp/t", NULL, MS_BIND, NULL) < 0)
		return 125;
	if (become(ps.sbx_uid, ps.sbx_gid) < 0 || chdir("/tmp/t") < 0)
		return 126;
	/* Every file recorded as checked out for fsmonitor (sandbox.h). */
	const char *argv[] = { "git", "-c", "core.hooksPath=/dev/null", "-c",
		"core.fsmonitor=" SANDBOX_FSMONITOR_ALL, "-c", "core.fsmonitorHookVersion=2",
		"-c", "safe.directory=*", "update-index", "-q",
		"--refresh", "--force-write-index", NULL };
	execvpe("git", (char *const *)argv, (char *const *)sandbox_git_env());
	return 127;
}

static int refresh_index(const char *path)
{
	return in_child(refresh_child, (void *)path);
}

static int keep_hand_over(const char *path, struct err *e)
{
	const char *name;
	int pfd = open_template_parent(path, &name, e);
	if (pfd < 0)
		return -1;
	int rc = -1;
	int tfd = openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (tfd < 0 || fstat(tfd, &st) < 0) {
		err_errno(e, _("cannot open %s"), path);
		goto out;
	}
	/* Only the client's own fresh checkout. */
	if (st.st_uid != ps.uid) {
		err_set(e, _("%s is not the user's own checkout"), path);
		goto out;
	}
	/* Only what is the client's: a hard link in it to a file of root's
	 * (or anyone else's) fails the hand-over, its owner unchanged. */
	if (fchdir(pfd) < 0 || fsx_chown_owned_r(name, ps.uid, ps.sbx_uid, ps.sbx_gid, e) < 0)
		goto out;
	int code = refresh_index(path);
	if (code != 0) {
		err_set(e, _("template: git update-index failed in %s (exit %d)"), path, code);
		goto out;
	}
	rc = 0;
out:
	if (chdir("/") < 0)
		rc = -1;
	if (tfd >= 0)
		close(tfd);
	close(pfd);
	return rc;
}

static int keep_remove(const char *path, struct err *e)
{
	const char *name;
	int pfd = open_template_parent(path, &name, e);
	if (pfd < 0)
		return errno == ENOENT ? 0 : -1;
	int rc = fchdir(pfd) < 0 ? err_errno(e, _("cannot remove %s"), path) : fsx_rm_rf(name, e);
	if (chdir("/") < 0)
		rc = -1;
	close(pfd);
	return rc;
}

/* What a create shows the sandbox, as descriptors only (sandbox_fds):
 * the template walked below the templates folder, the client's
 * descriptors checked (fds: the netns, the prompt, the agent's folder,
 * the files, as ps_create sends them; borrowed).  0, or -1 with e. */
static int keep_objects(struct sandbox_spec *s, int has_netns, const int *fds,
                        struct sandbox_fds *sf, int *file_fds, struct err *e)
{
	size_t i = 0;
	if (has_netns) {
		if (check_netns(fds[i], e) < 0)
			return -1;
		s->net.netns_fd = fds[i++];
	}
	if (s->prompt_file) {
		if (check_client_fd(fds[i], 0, 0, s->prompt_file, e) < 0)
			return -1;
		sf->prompt_fd = fds[i++];
	}
	if (s->agent_dir) {
		if (check_client_fd(fds[i], 1, 0, s->agent_dir, e) < 0)
			return -1;
		sf->agent_fd = fds[i++];
	}
	for (size_t f = 0; f < s->nfiles; f++) {
		if (check_client_fd(fds[i], 0, 1, s->files[f].host, e) < 0)
			return -1;
		file_fds[f] = fds[i++];
	}
	sf->template_fd = keep_template(s->ws.template_dir, e);
	return sf->template_fd < 0 ? -1 : 0;
}

static int keep_create(struct keeper *k, struct wire *w, const int *fds, size_t nfds,
                       struct err *e)
{
	struct sandbox_spec s = {0};
	s.task_id = get_str(w);
	s.ws.repo = get_str(w);
	s.ws.base = get_str(w);
	s.ws.template_dir = get_str(w);
	s.ws.direct = (int)get_u32(w);
	struct limits *l = &s.limits;
	l->timeout = get_f64(w);
	l->memory = get_u64(w);
	l->pids = (long)get_u64(w);
	l->disk = get_u64(w);
	l->output = get_u64(w);
	l->bundle = get_u64(w);
	l->budget = get_f64(w);
	l->budget_tokens = get_u64(w);
	l->cpus = get_f64(w);
	l->cpus_set = (int)get_u32(w);
	s.nfiles = get_u32(w);
	if (s.nfiles > PS_MAXFILES) {
		w->bad = 1;
		s.nfiles = 0;
	}
	struct sandbox_file *files = xcalloc(w->bad ? 1 : s.nfiles + 1, sizeof *files);
	for (size_t i = 0; !w->bad && i < s.nfiles; i++)
		if (!(files[i].host = get_str(w)))
			w->bad = 1;
	s.files = files;
	s.prompt_file = get_str(w);
	int has_netns = (int)get_u32(w);
	s.net.netns_fd = -1;
	s.net.bridge_dir = get_str(w);
	s.net.bridge_ports = get_str(w);
	s.agent_dir = get_str(w);
	s.nhome_files = get_u32(w);
	if (s.nhome_files > 1024) {
		w->bad = 1;
		s.nhome_files = 0;
	}
	struct sandbox_home_file *home = xcalloc(w->bad ? 1 : s.nhome_files + 1, sizeof *home);
	for (size_t i = 0; !w->bad && i < s.nhome_files; i++) {
		home[i].path = get_str(w);
		home[i].content = get_str(w);
		if (!home[i].path || !home[i].content)
			w->bad = 1;
	}
	s.home_files = home;
	int rc = -1;
	int file_fds[PS_MAXFILES];
	struct sandbox_fds sf = { .template_fd = -1, .prompt_fd = -1, .agent_fd = -1,
	                          .file_fds = file_fds };
	size_t want = (has_netns ? 1 : 0) + (s.prompt_file ? 1 : 0) + (s.agent_dir ? 1 : 0) +
	              s.nfiles;
	if (w->bad || nfds != want) {
		err_set(e, _("paddock's root helper got a malformed request"));
		goto out;
	}
	if (k->sb) {
		err_set(e, _("a keeper makes one sandbox"));
		goto out;
	}
	if (!plain_name(s.task_id)) {
		err_set(e, _("not a task id: %s"), s.task_id ? s.task_id : "");
		goto out;
	}
	if (s.net.bridge_dir) {
		err_set(e, _("the bridge is not offered in root mode with paddock.user"));
		goto out;
	}
	if (keep_objects(&s, has_netns, fds, &sf, file_fds, e) < 0)
		goto out;
	s.fds = &sf;
	rc = ps.be->create(&k->sb, &s, e);
	if (rc == 0)
		k->disk = l->disk;
out:
	if (sf.template_fd >= 0)
		close(sf.template_fd);
	free(files);
	free(home);
	return rc;
}

/* Reads the connection while a command runs: a cancel, or the client's
 * end, stops the command (its stop flag: this command only, a later one
 * of the same client runs, such as the reset after a shell). */
struct watcher {
	struct keeper *k;
	int stop[2];
	volatile int cancel;
};

static void *watch_client(void *arg)
{
	struct watcher *wt = arg;
	for (;;) {
		struct pollfd p[2] = { { .fd = wt->k->fd, .events = POLLIN },
		                       { .fd = wt->stop[0], .events = POLLIN } };
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[1].revents)
			break;
		if (p[0].revents & POLLIN) {
			uint32_t op = 0;
			ssize_t n = recv(wt->k->fd, &op, sizeof op, MSG_DONTWAIT);
			if (n < 0 && (errno == EAGAIN || errno == EINTR))
				continue;
			if (n <= 0)
				wt->k->gone = 1;
			wt->cancel = 1;
			if (n <= 0)
				break;
		} else if (p[0].revents) {
			wt->k->gone = 1;
			wt->cancel = 1;
			break;
		}
	}
	return NULL;
}

/* The descriptor a client passed for a shell's terminal frames
 * (sandbox_cmd.term): one end of a socketpair of unix SOCK_SEQPACKET
 * sockets (its peer unnamed) made by the user or root (SO_PEERCRED, as
 * the helper checks a connection's peer); never a file, pipe or device
 * root would block on or write into, nor a connection to a socket with a
 * name (this helper's, through which another keeper would read it).  The keeper reads only frames from
 * it, typed bytes and window sizes for its own sandbox's command (no
 * frame names a sandbox or a command), and writes only what that command
 * printed.  0, or -1 with e set. */
static int check_term_fd(int fd, struct err *e)
{
	struct stat st;
	int domain = 0, type = 0;
	socklen_t len = sizeof domain, tlen = sizeof type, clen = sizeof(struct ucred);
	struct sockaddr_un peer;
	socklen_t plen = sizeof peer;
	struct ucred cr;
	if (fstat(fd, &st) < 0 || !S_ISSOCK(st.st_mode) ||
	    getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) < 0 || domain != AF_UNIX ||
	    getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tlen) < 0 || type != SOCK_SEQPACKET ||
	    getpeername(fd, (struct sockaddr *)&peer, &plen) < 0 || plen != sizeof(sa_family_t) ||
	    getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &clen) < 0 ||
	    (cr.uid != ps.uid && cr.uid != 0))
		return err_set(e, _("the shell's terminal was not passed as a socket pair of the "
		                    "user's; refusing it"));
	return 0;
}

static int keep_run(struct keeper *k, struct wire *w, const int *fds, size_t nfds,
                    struct wire *rep, struct err *e)
{
	const char **argv = get_strv(w);
	const char **env = get_strv(w);
	int has_used = (int)get_u32(w);
	uint64_t used = get_u64(w);
	double deadline = get_f64(w);
	int has_out = (int)get_u32(w);
	/* A shell's command (shell.h): one descriptor, the client's end of
	 * a socketpair that carries its terminal's frames (sandbox_cmd.term),
	 * a terminal of rows x cols when tty says so. */
	int has_term = (int)get_u32(w);
	int tty = (int)get_u32(w);
	unsigned rows = get_u32(w), cols = get_u32(w);
	int rc = -1;
	struct sandbox_result r = {0};
	int env_ok = 1;
	for (size_t i = 0; env && env[i]; i++)
		env_ok &= strchr(env[i], '=') != NULL && env[i][0] != '=';
	if (w->bad || !argv || !argv[0] || !env_ok || (has_out && has_term) ||
	    nfds != (size_t)(has_out || has_term ? 1 : 0)) {
		err_set(e, _("paddock's root helper got a malformed request"));
		goto out;
	}
	if (!k->sb) {
		err_set(e, _("no sandbox to run in"));
		goto out;
	}
	if (has_term && check_term_fd(fds[0], e) < 0)
		goto out;
	struct watcher wt = { .k = k };
	struct sandbox_cmd cmd = { .argv = argv, .env = env, .out_fd = has_out ? fds[0] : -1,
	                           .output_used = has_used ? &used : NULL,
	                           .deadline = deadline, .stop = &wt.cancel,
	                           .term = has_term ? &fds[0] : NULL, .tty = has_term && tty,
	                           .rows = rows < 10000 ? rows : 0,
	                           .cols = cols < 10000 ? cols : 0 };
	pthread_t th;
	int started = pipe2(wt.stop, O_CLOEXEC) == 0 &&
	              pthread_create(&th, NULL, watch_client, &wt) == 0;
	rc = ps.be->run(k->sb, &cmd, &r, e);
	if (started) {
		char x = 'x';
		if (write(wt.stop[1], &x, 1) < 0) { /* the thread ends with the keeper */ }
		pthread_join(th, NULL);
	}
	if (wt.stop[0] > 0) {
		close(wt.stop[0]);
		close(wt.stop[1]);
	}
out:
	reply_put(rep, rc, e);
	put_u32(rep, (uint32_t)r.end);
	put_u32(rep, (uint32_t)r.code);
	put_u32(rep, r.hit);
	put_u64(rep, used);
	free(argv);
	free(env);
	return rc;
}

/* The keeper's own copy of a file, in a folder of root's. */
static char *keep_tmp(struct keeper *k, struct err *e)
{
	if (!k->tmp) {
		char t[] = "/tmp/paddock-keeper-XXXXXX";
		if (!mkdtemp(t)) {
			err_errno(e, _("cannot create a folder in %s"), "/tmp");
			return NULL;
		}
		k->tmp = xstrdup(t);
	}
	return xasprintf("%s/file", k->tmp);
}

static int copy_fd(int in, int out)
{
	char b[65536];
	for (;;) {
		ssize_t n = read(in, b, sizeof b);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return (int)n;
		if (fsx_write_all(out, b, (size_t)n) < 0)
			return -1;
	}
}

static int keep_copy_out(struct keeper *k, struct wire *w, const int *fds, size_t nfds,
                         struct err *e)
{
	const char *inside = get_str(w);
	uint64_t cap = get_u64(w);
	if (w->bad || !inside || nfds != 1 || !k->sb)
		return err_set(e, _("paddock's root helper got a malformed request"));
	/* Root's copy in /tmp holds no more than the sandbox's disk: a file
	 * of the template (a sparse one handed over) may be larger. */
	if (cap > k->disk)
		cap = k->disk;
	char *tmp = keep_tmp(k, e);
	if (!tmp)
		return -1;
	int rc = ps.be->copy_out(k->sb, inside, tmp, cap, e);
	if (rc == 0) {
		int in = open(tmp, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		if (in < 0 || copy_fd(in, fds[0]) < 0)
			rc = err_errno(e, _("cannot copy %s out"), inside);
		if (in >= 0)
			close(in);
	}
	unlink(tmp);
	free(tmp);
	return rc;
}

static int keep_copy_in(struct keeper *k, struct wire *w, const int *fds, size_t nfds,
                        struct err *e)
{
	const char *inside = get_str(w);
	if (w->bad || !inside || nfds != 1 || !k->sb)
		return err_set(e, _("paddock's root helper got a malformed request"));
	char *tmp = keep_tmp(k, e);
	if (!tmp)
		return -1;
	/* The client's file, checked as a create's are, and no larger than
	 * the sandbox's disk it goes to: root's copy of it neither blocks on
	 * a FIFO nor grows without end from a device or a sparse file. */
	int rc = check_client_fd(fds[0], 0, 1, inside, e) < 0 ||
	         fsx_copy_regular_fd(fds[0], inside, tmp, (size_t)k->disk, 0600, e) < 0
	         ? -1 : ps.be->copy_in(k->sb, tmp, inside, e);
	unlink(tmp);
	free(tmp);
	return rc;
}

static int keep_netns(struct wire *w, struct wire *rep, int *out, size_t *nout, struct err *e)
{
	uint32_t n = get_u32(w);
	int ports[PS_MAXFDS];
	if (n == 0 || n >= PS_MAXFDS)
		w->bad = 1;
	for (uint32_t i = 0; !w->bad && i < n; i++) {
		uint32_t p = get_u32(w);
		if (p == 0 || p > 65535)
			w->bad = 1;
		ports[i] = (int)p;
	}
	int rc = w->bad ? err_set(e, _("paddock's root helper got a malformed request"))
	                : gateway_netns_make(ports, n, out, &out[n], e);
	/* Recorded, so that a create takes this namespace (check_netns). */
	struct stat st;
	if (rc == 0) {
		char *rec = fstat(out[n], &st) == 0 ? netns_record(&st) : NULL;
		int f = rec ? open(rec, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600) : -1;
		if (f < 0) {
			rc = err_errno(e, _("cannot record the sandbox's network namespace in %s"),
			               ps.dir);
			for (uint32_t i = 0; i <= n; i++)
				close(out[i]);
		} else {
			close(f);
		}
		free(rec);
	}
	*nout = rc == 0 ? n + 1 : 0;
	reply_put(rep, rc, e);
	return rc;
}

/* One request; the answer goes back with *nout descriptors of out.
 * Returns 0 when there is no answer to send (a late cancel). */
static int keep_one(struct keeper *k, struct wire *w, const int *fds, size_t nfds,
                     struct wire *rep, int *out, size_t *nout)
{
	struct err e = {{0}};
	int rc;
	*nout = 0;
	switch (get_u32(w)) {
	case PS_PREFLIGHT:
		rc = ps.be->preflight(&e);
		break;
	case PS_JANITOR:
		ps.be->janitor();
		rc = 0;
		break;
	case PS_NETNS:
		keep_netns(w, rep, out, nout, &e);
		return 1;
	case PS_HAND_OVER:
		rc = keep_hand_over(get_str(w), &e);
		break;
	case PS_REMOVE:
		rc = keep_remove(get_str(w), &e);
		break;
	case PS_CREATE:
		rc = keep_create(k, w, fds, nfds, &e);
		break;
	case PS_RUN:
		keep_run(k, w, fds, nfds, rep, &e);
		return 1;
	case PS_COPY_OUT:
		rc = keep_copy_out(k, w, fds, nfds, &e);
		break;
	case PS_COPY_IN:
		rc = keep_copy_in(k, w, fds, nfds, &e);
		break;
	case PS_BRANCH: {
		/* The names are checked where the files are written
		 * (sandbox_branch_at). */
		const char *branch = get_str(w), *sha = get_str(w);
		rc = w->bad || !branch || !sha || !k->sb || !ps.be->branch ?
			err_set(&e, _("paddock's root helper got a malformed request")) :
			ps.be->branch(k->sb, branch, sha, &e);
		break;
	}
	case PS_CHANGES:
		rc = !k->sb || !ps.be->changes ?
			err_set(&e, _("paddock's root helper got a malformed request")) :
			ps.be->changes(k->sb, &e);
		break;
	case PS_DESTROY:
		ps.be->destroy(k->sb);
		k->sb = NULL;
		rc = 0;
		break;
	case PS_CANCEL:
		/* Late: the run it was for has ended. */
		return 0;
	default:
		rc = err_set(&e, _("paddock's root helper got a malformed request"));
		break;
	}
	reply_put(rep, rc, &e);
	return 1;
}

static int keeper_main(void *arg)
{
	struct keeper k = { .fd = *(int *)arg };
	struct wire w = {0};
	while (!k.gone) {
		int fds[PS_MAXFDS], out[PS_MAXFDS];
		size_t nfds = 0, nout = 0;
		if (ps_recv(k.fd, &w, fds, PS_MAXFDS, &nfds) < 0)
			break;
		struct wire rep = {0};
		int answer = keep_one(&k, &w, fds, nfds, &rep, out, &nout);
		for (size_t i = 0; i < nfds; i++)
			close(fds[i]);
		if (answer && !k.gone)
			ps_send(k.fd, &rep, out, nout);
		for (size_t i = 0; i < nout; i++)
			close(out[i]);
		wire_free(&rep);
	}
	/* The client is gone (or done): nothing of its sandbox stays. */
	ps.be->destroy(k.sb);
	if (k.tmp) {
		struct err e = {{0}};
		fsx_rm_rf(k.tmp, &e);
		free(k.tmp);
	}
	wire_free(&w);
	return 0;
}

/* ---- the helper: root, forks a keeper per connection ---- */

static volatile sig_atomic_t helper_orphaned;

static void on_parent_death(int sig)
{
	(void)sig;
	helper_orphaned = 1;
}

struct helper_arg {
	int lfd;
	pid_t parent;
};

static int helper_main(void *arg)
{
	const struct helper_arg *ha = arg;
	int lfd = ha->lfd;
	/* It ends with serve (its parent-death signal), not with a ^C or a
	 * SIGTERM meant for serve, which stops its tasks first; then it
	 * removes its folder (serve, not root, cannot) and its keepers die
	 * with it. */
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	struct sigaction sa = { .sa_handler = on_parent_death };
	sigaction(SIGUSR1, &sa, NULL);
	prctl(PR_SET_PDEATHSIG, SIGUSR1);
	while (!helper_orphaned && getppid() == ha->parent) {
		child_reap();
		struct pollfd p = { .fd = lfd, .events = POLLIN };
		if (poll(&p, 1, 1000) <= 0)
			continue;
		int c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (c < 0)
			continue;
		struct ucred cr;
		socklen_t len = sizeof cr;
		if (getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0 ||
		    (cr.uid != ps.uid && cr.uid != 0)) {
			close(c);
			continue;
		}
		int keep[] = { c };
		struct child ch = { .fn = keeper_main, .arg = &c, .keep = keep, .nkeep = 1,
		                    .flags = CHILD_DIE_WITH_PARENT | CHILD_CLOSE_FDS };
		struct err e = {{0}};
		if (child_start(&ch, &e) < 0)
			fprintf(stderr, "paddock: root helper: %s\n", e.msg);
		close(c);
	}
	struct err e = {{0}};
	fsx_rm_rf(ps.dir, &e);
	return 0;
}

/* Folders of helpers whose serve died (kill -9). */
static void sweep_stale(const char *parent)
{
	DIR *d = opendir(parent);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		if (strncmp(de->d_name, "paddock-privsep.", 16))
			continue;
		long pid = strtol(de->d_name + 16, NULL, 10);
		if (pid <= 0 || (kill((pid_t)pid, 0) < 0 && errno == ESRCH)) {
			char *p = xasprintf("%s/%s", parent, de->d_name);
			struct err e = {{0}};
			fsx_rm_rf(p, &e);
			free(p);
		}
	}
	if (d)
		closedir(d);
}

/* serve without its helper cannot make a sandbox: it stops (SIGTERM to
 * itself: its tasks are stopped as on any stop) and says why, so that
 * whatever runs it starts it again. */
static void on_helper_exit(pid_t pid, int status, void *owner)
{
	(void)pid;
	(void)status;
	(void)owner;
	ps.died = 1;
	kill(getpid(), SIGTERM);
}

int privsep_helper_died(void)
{
	return ps.died;
}

int privsep_start(const struct sandbox_options *o, const char *data_dir, uid_t uid, gid_t gid,
                  struct err *e)
{
	const struct sandbox_backend *be = sandbox_backend_find("bwrap", o, e);
	if (!be)
		return -1;
	struct stat st;
	const char *parent = stat("/run", &st) == 0 && S_ISDIR(st.st_mode) &&
	                     access("/run", W_OK) == 0 ? "/run" : "/tmp";
	sweep_stale(parent);
	char *dir = xasprintf("%s/paddock-privsep.%ld", parent, (long)getpid());
	char *sock = xasprintf("%s/sock", dir);
	struct err ign = {{0}};
	fsx_rm_rf(dir, &ign);
	int lfd = -1;
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	if (strlen(sock) >= sizeof a.sun_path) {
		err_set(e, _("the root helper's socket path %s is too long"), sock);
		goto fail;
	}
	snprintf(a.sun_path, sizeof a.sun_path, "%s", sock);
	/* The folder is root's (the helper removes it); the socket is the
	 * user's alone. */
	char *records = xasprintf("%s/netns", dir);
	int made = mkdir(dir, 0755) == 0 && mkdir(records, 0700) == 0;
	free(records);
	if (!made) {
		err_errno(e, _("cannot create %s"), dir);
		goto fail;
	}
	lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof a) < 0 ||
	    chown(sock, uid, gid) < 0 || chmod(sock, 0600) < 0 || listen(lfd, 64) < 0) {
		err_errno(e, _("cannot listen on %s"), sock);
		goto fail;
	}
	ps.be = be;
	ps.uid = uid;
	ps.gid = gid;
	ps.sbx_uid = o->uid;
	ps.sbx_gid = o->gid;
	ps.data_dir = xstrdup(data_dir);
	ps.dir = dir;
	int keep[] = { lfd };
	struct helper_arg ha = { .lfd = lfd, .parent = getpid() };
	struct child ch = { .fn = helper_main, .arg = &ha, .keep = keep, .nkeep = 1,
	                    .flags = CHILD_CLOSE_FDS, .on_exit = on_helper_exit };
	if (child_start(&ch, e) < 0)
		goto fail;
	close(lfd);
	ps.sock = sock;
	ps.be = NULL;
	ps.active = 1;
	return 0;
fail:
	if (lfd >= 0)
		close(lfd);
	ps.dir = NULL;
	fsx_rm_rf(dir, &ign);
	free(dir);
	free(sock);
	return -1;
}

void privsep_stop(void)
{
	if (!ps.active)
		return;
	/* The folder is root's: the helper removes it once serve is gone. */
	free(ps.sock);
	free(ps.dir);
	free(ps.data_dir);
	memset(&ps, 0, sizeof ps);
}
