#include "autoconfig.h"
#include "sandbox.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "i18n.h"

static volatile sig_atomic_t cancel_flag;

static struct sandbox_options options;

const struct sandbox_backend *sandbox_backend_find(const char *name,
                                                   const struct sandbox_options *o,
                                                   struct err *e)
{
	/* First: which bwrap (root or user mode) is the options'. */
	if (o)
		options = *o;
	const struct sandbox_backend *all[] = { sandbox_backend_bwrap(),
	                                        sandbox_backend_kube(),
	                                        sandbox_backend_process() };
	for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
		if (name && !strcmp(all[i]->name, name))
			return all[i];
	err_set(e, _("unknown sandbox backend '%s'; set [sandbox] backend to bwrap or kubernetes "
	             "(or process, which isolates nothing)"), name ? name : "");
	return NULL;
}

const struct sandbox_options *sandbox_options(void)
{
	return &options;
}

static const volatile int *cancel_watch;

void sandbox_request_cancel(void)
{
	cancel_flag = 1;
}

void sandbox_cancel_watch(const volatile int *flag)
{
	cancel_watch = flag;
}

int sandbox_cancel_requested(void)
{
	return cancel_flag != 0 || (cancel_watch && *cancel_watch);
}

/* The settings of paddock's own git in a workspace (sandbox_git_env);
 * FSMONITOR is core.fsmonitor's value. */
#define GIT_ENV(FSMONITOR, EXTRA_COUNT, ...) { \
		"HOME=/nonexistent", \
		"XDG_CONFIG_HOME=/nonexistent", \
		"GIT_CONFIG_GLOBAL=/dev/null", \
		"GIT_CONFIG_NOSYSTEM=1", \
		"GIT_ATTR_NOSYSTEM=1", \
		"GIT_NO_REPLACE_OBJECTS=1", \
		"GIT_TERMINAL_PROMPT=0", \
		"GIT_PAGER=cat", \
		"PAGER=cat", \
		"GIT_AUTHOR_NAME=paddock agent", \
		"GIT_AUTHOR_EMAIL=agent@paddock.invalid", \
		"GIT_COMMITTER_NAME=paddock agent", \
		"GIT_COMMITTER_EMAIL=agent@paddock.invalid", \
		"GIT_CONFIG_COUNT=" EXTRA_COUNT, \
		"GIT_CONFIG_KEY_0=core.hooksPath", "GIT_CONFIG_VALUE_0=/dev/null", \
		"GIT_CONFIG_KEY_1=core.fsmonitor", "GIT_CONFIG_VALUE_1=" FSMONITOR, \
		"GIT_CONFIG_KEY_2=core.attributesFile", "GIT_CONFIG_VALUE_2=/dev/null", \
		"GIT_CONFIG_KEY_3=core.pager", "GIT_CONFIG_VALUE_3=cat", \
		"GIT_CONFIG_KEY_4=safe.directory", "GIT_CONFIG_VALUE_4=*", \
		"GIT_CONFIG_KEY_5=core.sshCommand", "GIT_CONFIG_VALUE_5=false", \
		/* No gc or maintenance started by a commit: the hand-off's own \
		 * time, and no repack of what the agent left. */ \
		"GIT_CONFIG_KEY_6=gc.auto", "GIT_CONFIG_VALUE_6=0", \
		"GIT_CONFIG_KEY_7=maintenance.auto", "GIT_CONFIG_VALUE_7=false", \
		__VA_ARGS__ \
		NULL, \
	}

const char *const *sandbox_git_env(void)
{
	/* GIT_CONFIG_COUNT settings rank above the repository's own config, so
	 * a hostile .git/config cannot turn hooks or fsmonitor back on. */
	static const char *const env[] = GIT_ENV("false", "8", );
	return env;
}

const char *const *sandbox_git_env_fsmonitor(void)
{
	static const char *const env[] = GIT_ENV(SANDBOX_FSMONITOR_HOOK, "9",
		"GIT_CONFIG_KEY_8=core.fsmonitorHookVersion", "GIT_CONFIG_VALUE_8=2",);
	return env;
}

const char *const *sandbox_git_env_unchanged(void)
{
	static const char *const env[] = GIT_ENV(SANDBOX_FSMONITOR_NONE, "9",
		"GIT_CONFIG_KEY_8=core.fsmonitorHookVersion", "GIT_CONFIG_VALUE_8=2",);
	return env;
}

const char *sandbox_end_describe(const struct sandbox_result *r, char *buf, size_t len)
{
	switch (r->end) {
	case SANDBOX_EXITED:
		snprintf(buf, len, _("exited with status %d"), r->code);
		break;
	case SANDBOX_SIGNALED: {
		const char *name = sigabbrev_np(r->code);
		if (name)
			snprintf(buf, len, _("killed by signal %d (SIG%s)"), r->code, name);
		else
			snprintf(buf, len, _("killed by signal %d"), r->code);
		break;
	}
	case SANDBOX_TIMEOUT:
		snprintf(buf, len, "%s", _("timed out"));
		break;
	case SANDBOX_OUTPUT_LIMIT:
		snprintf(buf, len, "%s", _("stopped at the output limit"));
		break;
	case SANDBOX_CANCELLED:
		snprintf(buf, len, "%s", _("cancelled"));
		break;
	default:
		snprintf(buf, len, "%s", _("ended for an unknown reason"));
		break;
	}
	return buf;
}

/* The helper program name: next to the running paddock (a build tree),
 * else in PKGLIBEXECDIR. */
static char *helper_path(const char *name)
{
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n > 0) {
		exe[n] = '\0';
		char *slash = strrchr(exe, '/');
		if (slash) {
			*slash = '\0';
			char *here = xasprintf("%s/%s", exe, name);
			if (access(here, X_OK) == 0)
				return here;
			free(here);
		}
	}
	return xasprintf("%s/%s", PKGLIBEXECDIR, name);
}

char *sandbox_bridge_path(void)
{
	return helper_path("paddock-bridge");
}

char *sandbox_runner_path(void)
{
	return helper_path("paddock-runner");
}
