#include "autoconfig.h"
#include "agent.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "buf.h"
#include "i18n.h"

struct strv {
	char **v;
	size_t n, cap;
};

static void agent_strv_push(struct strv *s, char *str)
{
	if (s->n + 2 > s->cap) {
		s->cap = s->cap ? s->cap * 2 : 8;
		s->v = xrealloc(s->v, s->cap * sizeof(*s->v));
	}
	s->v[s->n++] = str;
	s->v[s->n] = NULL;
}

static void agent_strv_free(struct strv *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	s->v = NULL;
	s->n = s->cap = 0;
}

/* 1 when path is top or lies below it. */
static int agent_under(const char *path, const char *top)
{
	size_t n = strlen(top);
	return strncmp(path, top, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* The trees the sandbox has of its own (/usr read-only from the host;
 * /proc, /dev, /sys its own): a path in them is not a host file. */
static int agent_in_sandbox_tree(const char *path)
{
	return agent_under(path, "/usr") || agent_under(path, "/proc") ||
	       agent_under(path, "/dev") || agent_under(path, "/sys");
}

/* 1 when arg names a host file (see agent.h).  A path whose folder
 * resolves into /usr (/bin/sh on a merged-/usr system) is already visible
 * in the sandbox. */
static int agent_is_host_file(const char *arg)
{
	char real[PATH_MAX];
	struct stat st;
	char *dir, *slash;
	int under;

	if (arg[0] != '/' || agent_in_sandbox_tree(arg))
		return 0;
	if (!realpath(arg, real) || stat(real, &st) != 0 || !S_ISREG(st.st_mode))
		return 0;
	dir = xstrdup(arg);
	slash = strrchr(dir, '/');
	if (slash == dir)
		slash[1] = '\0';
	else
		*slash = '\0';
	under = realpath(dir, real) && agent_in_sandbox_tree(real);
	free(dir);
	return !under;
}

/* 1 when argv0 (a name looked up in PATH, or an absolute path that is not
 * a host file) is a program that runs the script named by its first
 * non-option argument.  Versioned names count: python3.11, lua5.4. */
int agent_is_interpreter(const char *argv0)
{
	static const char *const names[] = { "sh", "bash", "dash", "zsh", "ksh", "mksh", "fish",
		"python", "pypy", "node", "nodejs", "perl", "ruby", "php", "lua", "tclsh", NULL };
	const char *base = strrchr(argv0, '/');
	size_t len;

	if (base && argv0[0] != '/')
		return 0;  /* ./python3: relative to /work, nothing of the host's */
	base = base ? base + 1 : argv0;
	len = strlen(base);
	while (len > 0 && ((base[len - 1] >= '0' && base[len - 1] <= '9') || base[len - 1] == '.'))
		len--;
	for (size_t i = 0; names[i]; i++)
		if (strlen(names[i]) == len && strncmp(base, names[i], len) == 0)
			return 1;
	return 0;
}

/* Index of the script in argv (see agent.h), or -1. */
static long agent_script_index(char **argv, size_t argc)
{
	size_t i;

	if (agent_is_host_file(argv[0]))
		return 0;
	if (!agent_is_interpreter(argv[0]))
		return -1;
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			i++;
			break;
		}
		if (argv[i][0] != '-')
			break;
	}
	return i < argc && agent_is_host_file(argv[i]) ? (long)i : -1;
}

static int agent_strv_has(const struct strv *s, const char *str)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->v[i], str) == 0)
			return 1;
	return 0;
}

int agent_cmdline_parse(const char *command, struct agent_cmdline *out, struct err *e)
{
	struct strv argv = { 0 }, files = { 0 }, others = { 0 };
	struct buf word = { 0 };
	const char *p = command ? command : "";
	int in_word = 0;
	long script;

	memset(out, 0, sizeof(*out));
	for (;;) {
		char c = *p;

		if (c == '\0' || c == ' ' || c == '\t' || c == '\n') {
			if (in_word) {
				agent_strv_push(&argv, xstrndup(word.data ? word.data : "", word.len));
				buf_reset(&word);
				in_word = 0;
			}
			if (c == '\0')
				break;
			p++;
		} else if (c == '\'') {
			const char *end = strchr(p + 1, '\'');
			if (!end) {
				err_set(e, _("agent command has an unterminated single quote (close it or escape it): %s"), command);
				goto fail;
			}
			buf_add(&word, p + 1, (size_t)(end - p - 1));
			in_word = 1;
			p = end + 1;
		} else if (c == '"') {
			p++;
			in_word = 1;
			for (;;) {
				if (*p == '\0') {
					err_set(e, _("agent command has an unterminated double quote (close it or escape it): %s"), command);
					goto fail;
				}
				if (*p == '"') {
					p++;
					break;
				}
				if (*p == '\\' && p[1] != '\0' && strchr("\\\"$`\n", p[1])) {
					if (p[1] != '\n')   /* backslash-newline joins lines */
						buf_addc(&word, p[1]);
					p += 2;
					continue;
				}
				buf_addc(&word, *p++);
			}
		} else if (c == '\\') {
			if (p[1] == '\0') {
				err_set(e, _("agent command ends with a backslash (remove it or quote it): %s"), command);
				goto fail;
			}
			if (p[1] != '\n') {
				buf_addc(&word, p[1]);
				in_word = 1;
			}
			p += 2;
		} else {
			buf_addc(&word, c);
			in_word = 1;
			p++;
		}
	}
	buf_free(&word);
	if (argv.n == 0) {
		err_set(e, _("agent command is empty; set agent.<name>.command in the config"));
		goto fail;
	}
	/* The script is shown; any other host file only when the agent lists
	 * it, so that no path in a command line leaks a host file unasked. */
	script = agent_script_index(argv.v, argv.n);
	if (script >= 0)
		agent_strv_push(&files, xstrdup(argv.v[script]));
	for (size_t i = 0; i < argv.n; i++)
		if (!agent_strv_has(&files, argv.v[i]) && !agent_strv_has(&others, argv.v[i]) &&
		    agent_is_host_file(argv.v[i]))
			agent_strv_push(&others, xstrdup(argv.v[i]));
	out->argv = argv.v;
	out->argc = argv.n;
	out->files = files.v;
	out->nfiles = files.n;
	out->others = others.v;
	out->nothers = others.n;
	return 0;
fail:
	buf_free(&word);
	agent_strv_free(&argv);
	agent_strv_free(&files);
	agent_strv_free(&others);
	return -1;
}

void agent_cmdline_free(struct agent_cmdline *c)
{
	size_t i;

	if (!c)
		return;
	for (i = 0; i < c->argc; i++)
		free(c->argv[i]);
	free(c->argv);
	for (i = 0; i < c->nfiles; i++)
		free(c->files[i]);
	free(c->files);
	for (i = 0; i < c->nothers; i++)
		free(c->others[i]);
	free(c->others);
	memset(c, 0, sizeof(*c));
}

int agent_file_path_ok(const char *path)
{
	if (!path || path[0] != '/' || path[1] == '\0' || strlen(path) > 4000 ||
	    strchr(path, '\n'))
		return 0;
	for (const char *s = path; *s; s++) {
		if (s[0] != '/')
			continue;
		if (s[1] == '/' || s[1] == '\0')
			return 0;
		if (s[1] == '.' && (s[2] == '/' || s[2] == '\0'))
			return 0;
		if (s[1] == '.' && s[2] == '.' && (s[3] == '/' || s[3] == '\0'))
			return 0;
	}
	return !agent_under(path, "/proc") && !agent_under(path, "/dev") &&
	       !agent_under(path, "/sys");
}

int agent_check_named(const char *name, const char *key, const struct agent_cmdline *cl,
                      char *const *listed, size_t nlisted, struct err *e)
{
	for (size_t i = 0; i < cl->nothers; i++) {
		size_t j;
		for (j = 0; j < nlisted && strcmp(listed[j], cl->others[i]) != 0; j++)
			;
		if (j == nlisted)
			return err_set(e, _("agent.%s.%s: %s is a host file but not the agent's script; "
			                    "the sandbox is shown only the files an agent lists: add it to "
			                    "agent.%s.files (read-only inside), or remove it from the "
			                    "command"), name, key, cl->others[i], name);
	}
	return 0;
}

int agent_check_listed(const char *name, const char *path, struct err *e)
{
	struct stat st;

	if (stat(path, &st) < 0) {
		int saved = errno;
		return err_set(e, _("agent.%s.files: cannot use %s (%s); list existing regular "
		                    "files only"), name, path, strerror(saved));
	}
	if (!S_ISREG(st.st_mode))
		return err_set(e, _("agent.%s.files: %s is not a regular file; list files, not "
		                    "folders or devices"), name, path);
	return 0;
}

int agent_sandbox_files(const char *name, const struct agent_cmdline *cl,
                        const struct agent_cmdline *rcl, char *const *listed, size_t nlisted,
                        const char ***out, size_t *n, struct err *e)
{
	const struct agent_cmdline *both[2] = { cl, rcl };
	const char **v;
	size_t k = 0;

	*out = NULL;
	*n = 0;
	if (agent_check_named(name, "command", cl, listed, nlisted, e) < 0 ||
	    agent_check_named(name, "resume", rcl, listed, nlisted, e) < 0)
		return -1;
	for (size_t i = 0; i < nlisted; i++)
		if (agent_check_listed(name, listed[i], e) < 0)
			return -1;
	v = xcalloc(cl->nfiles + rcl->nfiles + nlisted + 1, sizeof *v);
	for (size_t b = 0; b < 3; b++) {
		char *const *src = b < 2 ? both[b]->files : listed;
		size_t ns = b < 2 ? both[b]->nfiles : nlisted;
		for (size_t i = 0; i < ns; i++) {
			size_t j;
			for (j = 0; j < k && strcmp(v[j], src[i]) != 0; j++)
				;
			if (j == k)
				v[k++] = src[i];
		}
	}
	*out = v;
	*n = k;
	return 0;
}
