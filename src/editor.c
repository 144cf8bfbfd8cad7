#include "autoconfig.h"
#include "editor.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "buf.h"
#include "child.h"
#include "fsx.h"
#include "i18n.h"
#include "task.h"

const char *editor_command(void)
{
	const char *ed = getenv("VISUAL");
	if (!ed || !*ed)
		ed = getenv("EDITOR");
	return ed && *ed ? ed : NULL;
}

const char *editor_command_fallback(void)
{
	const char *ed = editor_command();
	if (ed)
		return ed;
	const char *path = getenv("PATH");
	for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
		size_t n = strcspn(p, ":");
		char *f = xasprintf("%.*s/editor", (int)n, p);
		int found = n && access(f, X_OK) == 0;
		free(f);
		if (found)
			return "editor";
		p += n + (p[n] == ':');
	}
	return "vi";
}

int editor_edit(const char *initial, char **out, struct err *e)
{
	return editor_edit_with(editor_command(), initial, out, e);
}

int editor_edit_with(const char *ed, const char *initial, char **out, struct err *e)
{
	if (!ed)
		return err_set(e, _("set VISUAL or EDITOR to write notes in an editor"));
	char path[] = "/tmp/paddock-notes.XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0)
		return err_errno(e, _("cannot create a file for the notes"));
	(void)fsx_write_all(fd, initial ? initial : "", initial ? strlen(initial) : 0);
	close(fd);
	char *cmd = xasprintf("%s \"$1\"", ed);
	/* The editor gets the signals a program expects (child.h). */
	const char *argv[] = { "/bin/sh", "-c", cmd, "sh", path, NULL };
	struct child ch = { .argv = argv, .flags = CHILD_TERMINAL };
	int ws = child_start(&ch, NULL) < 0 ? -1 : child_finish(&ch);
	free(cmd);
	int rc = -1;
	struct buf b = {0};
	if (ws == -1 || !WIFEXITED(ws) || WEXITSTATUS(ws) != 0) {
		err_set(e, _("the editor (%s) failed"), ed);
	} else if (fsx_read_file(path, TASK_TEXT_MAX, &b, e) < 0) {
		/* reported */
	} else if (b.len && memchr(b.data, '\0', b.len)) {
		/* The text would be cut there without a word. */
		err_set(e, _("the text from the editor holds a NUL byte; remove it and try again"));
		rc = -2;
	} else {
		struct buf kept = {0};
		for (char *line = b.data; line && *line;) {
			size_t n = strcspn(line, "\n");
			if (line[0] != '#') {
				buf_add(&kept, line, n);
				if (line[n])
					buf_addc(&kept, '\n');
			}
			line += n + (line[n] == '\n');
		}
		*out = buf_detach(&kept);
		rc = 0;
	}
	buf_free(&b);
	unlink(path);
	return rc;
}
