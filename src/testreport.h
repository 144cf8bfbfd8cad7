/* testreport: finds the names of failed tests in a test command's output
 * (pcre2), for an error line a person can act on. */
#ifndef PADDOCK_TESTREPORT_H
#define PADDOCK_TESTREPORT_H

#include <stddef.h>
#include "buf.h"

/* Appends the failed tests found in output, separated by ", ", to names
 * (python unittest/pytest, go test, TAP, cargo/rust, jest/mocha style).
 * Returns how many were found. */
int testreport_failures(const char *output, size_t len, struct buf *names);
/* Appends the last `lines` lines of output (at most 2 KiB), sanitized. */
void testreport_tail(const char *output, size_t len, int lines, struct buf *out);

#endif
