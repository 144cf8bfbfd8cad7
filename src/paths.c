#include "autoconfig.h"
#include "paths.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdarg.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include "buf.h"
#include "fsx.h"
#include "i18n.h"

const char *paths_runtime_dir(void)
{
	const char *rt = getenv("XDG_RUNTIME_DIR");
	struct stat st;
	if (geteuid() != 0 && rt && rt[0] == '/' && strlen(rt) < 64 && stat(rt, &st) == 0 &&
	    S_ISDIR(st.st_mode) && st.st_uid == geteuid())
		return rt;
	return NULL;
}

char *paths_data_dir(void)
{
	const char *h = getenv("PADDOCK_HOME");
	if (h && *h)
		return xstrdup(h);
	const char *x = getenv("XDG_DATA_HOME");
	if (x && *x == '/')
		return xasprintf("%s/paddock", x);
	const char *home = getenv("HOME");
	if (!home || !*home) {
		struct passwd *pw = getpwuid(getuid());
		home = pw && pw->pw_dir ? pw->pw_dir : "/";
	}
	return xasprintf("%s/.local/share/paddock", home);
}

char *paths_join(const char *first, ...)
{
	struct buf b = {0};
	va_list ap;
	buf_adds(&b, first);
	va_start(ap, first);
	for (const char *s; (s = va_arg(ap, const char *));) {
		if (b.len && b.data[b.len - 1] != '/')
			buf_addc(&b, '/');
		buf_adds(&b, s);
	}
	va_end(ap);
	return buf_detach(&b);
}

int paths_data_dir_check(const char *data, struct err *e)
{
	char *p = xstrdup(data);
	int rc = 0;
	for (;;) {
		struct stat st;
		if (stat(p, &st) == 0) {
			/* A file where the directory goes reads as "no data" or
			 * ENOTDIR, which says neither what nor where. */
			if (!S_ISDIR(st.st_mode))
				rc = strcmp(p, data) == 0
				     ? err_set(e, _("the data directory %s is not a directory; set "
				                    "PADDOCK_HOME to a directory (paddock makes it when "
				                    "it is not there)"), data)
				     : err_set(e, _("the data directory %s cannot be made: %s is not a "
				                    "directory; set PADDOCK_HOME to a directory"), data, p);
			break;
		}
		char *slash = strrchr(p, '/');
		if (!slash || slash == p)
			break;
		*slash = '\0';
	}
	free(p);
	return rc;
}

char *paths_data_dir_ensure(struct err *e)
{
	char *d = paths_data_dir();
	static char *(*const subdirs[])(const char *) = {
		paths_mirrors_dir, paths_templates_dir, paths_tasks_dir
	};
	if (paths_data_dir_check(d, e) < 0) {
		free(d);
		return NULL;
	}
	if (fsx_mkdir_p(d, 0700, e) < 0)
		goto fail;
	for (size_t i = 0; i < sizeof subdirs / sizeof subdirs[0]; i++) {
		char *p = subdirs[i](d);
		int rc = fsx_mkdir_p(p, 0700, e);
		free(p);
		if (rc < 0)
			goto fail;
	}
	return d;
fail:
	err_prefix(e, _("data directory %s (set PADDOCK_HOME to use another)"), d);
	free(d);
	return NULL;
}

char *paths_db(const char *data)
{
	return paths_join(data, "paddock.db", NULL);
}

char *paths_scheduler_lock(const char *data)
{
	return paths_join(data, "scheduler.lock", NULL);
}

char *paths_mirrors_dir(const char *data)
{
	return paths_join(data, "mirrors", NULL);
}

char *paths_mirror(const char *data, const char *repo)
{
	return xasprintf("%s/mirrors/%s.git", data, repo);
}

char *paths_templates_dir(const char *data)
{
	return paths_join(data, "templates", NULL);
}

char *paths_template_repo_dir(const char *data, const char *repo)
{
	return paths_join(data, "templates", repo, NULL);
}

char *paths_agents_dir(const char *data)
{
	return paths_join(data, "agents", NULL);
}

char *paths_agent_dir(const char *data, const char *agent)
{
	return paths_join(data, "agents", agent, NULL);
}

char *paths_demo_dir(const char *data)
{
	return paths_join(data, "demo", NULL);
}

char *paths_cgroup_locks(const char *data)
{
	return paths_join(data, "cgroups", NULL);
}

char *paths_tasks_dir(const char *data)
{
	return paths_join(data, "tasks", NULL);
}

char *paths_groups_dir(const char *data)
{
	return paths_join(data, "groups", NULL);
}

char *paths_blobs_dir(const char *data)
{
	return paths_join(data, "blobs", "sha256", NULL);
}

char *paths_blob(const char *data, const char *hex)
{
	return paths_join(data, "blobs", "sha256", hex, NULL);
}

char *paths_door_dir(const char *data)
{
	return paths_join(data, "door", NULL);
}

char *paths_door_socket(const char *data, const char *pod)
{
	char *name = xasprintf("%s.sock", pod);
	char *p = paths_join(data, "door", name, NULL);
	free(name);
	return p;
}

char *paths_group_lock(const char *data, const char *id)
{
	char *name = xasprintf("%s.lock", id);
	char *p = paths_join(data, "groups", name, NULL);
	free(name);
	return p;
}

char *paths_task_dir(const char *data, const char *id)
{
	return paths_join(data, "tasks", id, NULL);
}

static char *task_file(const char *data, const char *id, const char *name)
{
	return paths_join(data, "tasks", id, name, NULL);
}

char *paths_task_log(const char *data, const char *id)
{
	return task_file(data, id, "log");
}

char *paths_task_prompt(const char *data, const char *id)
{
	return task_file(data, id, "prompt");
}

char *paths_task_summary(const char *data, const char *id)
{
	return task_file(data, id, "summary");
}

char *paths_task_bundle(const char *data, const char *id)
{
	return task_file(data, id, "result.bundle");
}

char *paths_task_round_bundle(const char *data, const char *id, int round)
{
	char name[32];
	snprintf(name, sizeof name, "round-%d.bundle", round);
	return task_file(data, id, name);
}

char *paths_task_notes(const char *data, const char *id, int round)
{
	char name[32];
	snprintf(name, sizeof name, "notes-%d", round);
	return task_file(data, id, name);
}

char *paths_task_home(const char *data, const char *id)
{
	return task_file(data, id, "home.tgz");
}

char *paths_task_home_inc(const char *data, const char *id, int n)
{
	char name[32];
	snprintf(name, sizeof name, "home.%d.tgz", n);
	return task_file(data, id, name);
}

char *paths_task_home_session(const char *data, const char *id)
{
	return task_file(data, id, "home.session");
}

char *paths_task_push_lock(const char *data, const char *id)
{
	return task_file(data, id, "push.lock");
}

char *paths_task_shell_socket(const char *data, const char *id)
{
	return task_file(data, id, "shell.sock");
}

char *paths_task_shell_gate(const char *data, const char *id)
{
	return task_file(data, id, "shell-gate.json");
}

char *paths_task_diffs(const char *data, const char *id)
{
	return task_file(data, id, "diffs");
}

char *paths_instance(const char *data)
{
	return paths_join(data, "instance", NULL);
}

/* A Kubernetes label value: at most 63 of [A-Za-z0-9._-], alphanumeric
 * at both ends. */
static int instance_ok(const char *s)
{
	size_t n = strlen(s);
	if (n < 1 || n > 63 || strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	                                 "0123456789._-") != n)
		return 0;
	return strchr("._-", s[0]) == NULL && strchr("._-", s[n - 1]) == NULL;
}

/* Makes path with a new id unless it is there: written whole into a
 * temporary file, then linked to path, which fails when another process
 * was first (its id is then the one read back). */
static int instance_make(const char *data, const char *path, struct err *e)
{
	static const char alphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	unsigned char r[PADDOCK_INSTANCE_LEN];
	size_t got = 0;
	while (got < sizeof r) {
		ssize_t n = getrandom(r + got, sizeof r - got, 0);
		if (n > 0)
			got += (size_t)n;
	}
	char id[PADDOCK_INSTANCE_LEN + 2];
	id[0] = alphabet[r[0] % 26];
	for (size_t i = 1; i < PADDOCK_INSTANCE_LEN; i++)
		id[i] = alphabet[r[i] % 36];
	id[PADDOCK_INSTANCE_LEN] = '\n';
	id[PADDOCK_INSTANCE_LEN + 1] = '\0';
	char *tmp = xasprintf("%s/.instance.%ld.%02x%02x", data, (long)getpid(), r[1], r[2]);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	int rc = -1;
	if (fd < 0) {
		err_set(e, _("cannot make %s: %s"), tmp, strerror(errno));
		free(tmp);
		return -1;
	}
	/* 0644 whatever the umask: every process that needs it reads it */
	if (fchmod(fd, 0644) < 0 || fsx_write_all(fd, id, strlen(id)) < 0 || fsync(fd) < 0)
		err_set(e, _("cannot write %s: %s"), tmp, strerror(errno));
	else if (link(tmp, path) < 0 && errno != EEXIST)
		err_set(e, _("cannot make %s: %s"), path, strerror(errno));
	else
		rc = 0;
	close(fd);
	unlink(tmp);
	free(tmp);
	return rc;
}

char *paths_instance_id(const char *data, struct err *e)
{
	char *path = paths_instance(data);
	struct buf b = {0};
	char *id = NULL;
	for (int tries = 0; tries < 2 && !id; tries++) {
		int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 && errno == ENOENT && tries == 0) {
			if (instance_make(data, path, e) < 0)
				break;
			continue;
		}
		if (fd < 0) {
			err_set(e, _("cannot read %s: %s"), path, strerror(errno));
			break;
		}
		close(fd);
		buf_free(&b);
		if (fsx_read_file(path, 256, &b, e) < 0)
			break;
		size_t n = b.len;
		while (n && (b.data[n - 1] == '\n' || b.data[n - 1] == '\r'))
			n--;
		char *s = xstrndup(b.data ? b.data : "", n);
		if (!instance_ok(s)) {
			err_set(e, _("%s does not hold an instance id (at most 63 letters, digits, '.', "
			             "'_' or '-', a letter or digit at each end); restore it: it names "
			             "this paddock's objects in the cluster"), path);
			free(s);
			break;
		}
		id = s;
	}
	buf_free(&b);
	free(path);
	return id;
}
