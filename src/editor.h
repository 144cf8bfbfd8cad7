/* editor: text written in the user's editor ($VISUAL, else $EDITOR), for
 * notes to an agent from the CLI and from the dashboard. */
#ifndef PADDOCK_EDITOR_H
#define PADDOCK_EDITOR_H

#include "err.h"

/* The editor's command line, or NULL when neither variable is set. */
const char *editor_command(void);
/* The editor a person at a terminal gets: $VISUAL, $EDITOR, then
 * `editor` (Debian's alternative) when it is in PATH, then vi. */
const char *editor_command_fallback(void);
/* Runs the editor (editor_command(), or `cmd` with editor_edit_with: a
 * shell command line, as git does) on a temporary file
 * that holds `initial`.  On success *out is what the editor left there,
 * lines starting with '#' dropped (malloc'd).  -1 with a message when no
 * editor is set, the file cannot be made or the editor fails, -2 when it
 * left a NUL byte (bad input); *out is then untouched. */
int editor_edit(const char *initial, char **out, struct err *e);
int editor_edit_with(const char *cmd, const char *initial, char **out, struct err *e);

#endif
