/* testreport: finds the names of failed tests in a test command's output
 * (pcre2), for an error line a person can act on. */
#ifndef PADDOCK_TESTREPORT_H
#define PADDOCK_TESTREPORT_H

#include <stddef.h>
#include "buf.h"

/* Appends the failed tests found in output, separated by ", ", to names.
 * Formats: python unittest ("test_x (mod.Class.test_x)"), pytest summary
 * (FAILED/ERROR node ids), go test ("--- FAIL: TestX", subtests too), TAP
 * ("not ok N - desc", TODO ignored; "test N" without a description),
 * cargo ("test x ... FAILED"), jest ("● Suite › name").  The output is
 * sanitized first (colour codes removed), so names are safe to print.
 * Each test counts once; at most 20 are listed, then " (N more)", each cut
 * to 200 bytes.  Returns how many distinct failures were found. */
int testreport_failures(const char *output, size_t len, struct buf *names);
/* Appends the last `lines` non-blank lines of output, sanitized (no
 * escape sequences), trailing blanks trimmed, one per line (no final
 * newline).  When that exceeds 2 KiB its end is kept, after "...".  Only the
 * last 64 KiB of output are read.  lines <= 0 appends nothing. */
void testreport_tail(const char *output, size_t len, int lines, struct buf *out);

#endif
