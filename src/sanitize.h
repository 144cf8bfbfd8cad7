/* sanitize: makes untrusted text (agent output, commit messages, diffs)
 * safe to write to a terminal.
 *
 * - Newline and tab pass; CR before LF is dropped, any other CR shows as
 *   "^M".  Other C0 controls and DEL show in caret notation ("^G", "^[",
 *   "^?"), so a reviewer sees that they were there.
 * - Escape sequences are removed whole, with no marker (a marker for every
 *   colour change or cursor move would bury the text): CSI (ESC [ and the
 *   8-bit U+009B), two-byte and nF escapes, and control strings (OSC such
 *   as window titles and OSC 52 clipboard writes, DCS, SOS, PM, APC, in
 *   their ESC and U+0090/9D/98/9E/9F forms) up to BEL or ST.  An
 *   unterminated control string ends at the next newline; one cut off by
 *   the end of input is dropped.  A CSI cut short by another byte ends
 *   before it.
 * - With keep_sgr, a 7-bit SGR sequence (ESC [ digits ; : m, at most 64
 *   parameter bytes) is copied; every other sequence is still removed.
 * - Other C1 controls (U+0080..U+009F) show as "<U+0085>".
 * - Invalid UTF-8 (stray continuation, overlong, surrogate, above
 *   U+10FFFF, truncated) becomes one U+FFFD per bad byte; valid UTF-8,
 *   wide characters included, passes unchanged.
 * Appends to out; never fails. */
#ifndef PADDOCK_SANITIZE_H
#define PADDOCK_SANITIZE_H

#include <jansson.h>
#include <stddef.h>
#include "buf.h"

void sanitize_text(const char *in, size_t len, int keep_sgr, struct buf *out);

/* Only the UTF-8 repair of sanitize_text, for text bound for JSON (which
 * must be UTF-8) rather than a terminal: valid UTF-8 and every control
 * pass unchanged, each invalid byte becomes U+FFFD.  Appends to out. */
void sanitize_utf8_repair(const char *in, size_t len, struct buf *out);

/* A JSON string of len bytes that may not be UTF-8 (json_dumps would fail
 * on them): repaired as sanitize_utf8_repair does.  New reference. */
json_t *sanitize_json_string(const char *in, size_t len);

#endif
