#include "autoconfig.h"
#include "paths.h"

#include <pwd.h>
#include <stdarg.h>
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
