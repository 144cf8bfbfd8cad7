#include "autoconfig.h"
#include "agent.h"

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

static int agent_under_usr(const char *path)
{
	return strcmp(path, "/usr") == 0 || strncmp(path, "/usr/", 5) == 0;
}

/* 1 when arg names a host file the sandbox must be shown: an absolute path
 * to a regular file outside /usr.  A path whose folder resolves into /usr
 * (/bin/sh on a merged-/usr system) is already visible in the sandbox. */
static int agent_is_host_file(const char *arg)
{
	char real[PATH_MAX];
	struct stat st;
	char *dir, *slash;
	int under;

	if (arg[0] != '/' || agent_under_usr(arg))
		return 0;
	if (!realpath(arg, real) || stat(real, &st) != 0 || !S_ISREG(st.st_mode))
		return 0;
	dir = xstrdup(arg);
	slash = strrchr(dir, '/');
	if (slash == dir)
		slash[1] = '\0';
	else
		*slash = '\0';
	under = realpath(dir, real) && agent_under_usr(real);
	free(dir);
	return !under;
}

int agent_cmdline_parse(const char *command, struct agent_cmdline *out, struct err *e)
{
	struct strv argv = { 0 }, files = { 0 };
	struct buf word = { 0 };
	const char *p = command ? command : "";
	int in_word = 0;
	size_t i, j;

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
	for (i = 0; i < argv.n; i++) {
		int dup = 0;
		if (!agent_is_host_file(argv.v[i]))
			continue;
		for (j = 0; j < files.n && !dup; j++)
			dup = strcmp(files.v[j], argv.v[i]) == 0;
		if (!dup)
			agent_strv_push(&files, xstrdup(argv.v[i]));
	}
	out->argv = argv.v;
	out->argc = argv.n;
	out->files = files.v;
	out->nfiles = files.n;
	return 0;
fail:
	buf_free(&word);
	agent_strv_free(&argv);
	agent_strv_free(&files);
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
	memset(c, 0, sizeof(*c));
}
