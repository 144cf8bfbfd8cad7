/* diff: a task's change, read from the mirror with libgit2. */
#ifndef PADDOCK_DIFF_H
#define PADDOCK_DIFF_H

#include <stdio.h>
#include "buf.h"
#include "err.h"

/* Writes the unified diff base..head (patch text, as `git diff`) to out. */
int diff_write(const char *mirror, const char *base, const char *head, FILE *out,
               struct err *e);
/* Appends a diffstat (" file | 3 ++-" lines and a summary) to out. */
int diff_stat(const char *mirror, const char *base, const char *head, struct buf *out,
              struct err *e);

#endif
