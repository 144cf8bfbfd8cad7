/* sanitize: makes untrusted text (agent output, commit messages, diffs)
 * safe to write to a terminal.  It is the one owner of text from a
 * sandbox (file names, errors, summaries, branch names, agent output) on
 * its way to a person: a message that quotes such text passes it, or the
 * whole message, through sanitize_quote (or sanitize_visible,
 * sanitize_text); a live session's stream goes through sanitize_term.
 *
 * sanitize_text:
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
#include <stdint.h>
#include "buf.h"

void sanitize_text(const char *in, size_t len, int keep_sgr, struct buf *out);

/* Only the UTF-8 repair of sanitize_text, for text bound for JSON (which
 * must be UTF-8) rather than a terminal: valid UTF-8 and every control
 * pass unchanged, each invalid byte becomes U+FFFD.  Appends to out. */
void sanitize_utf8_repair(const char *in, size_t len, struct buf *out);

/* A JSON string of len bytes that may not be UTF-8 (json_dumps would fail
 * on them): repaired as sanitize_utf8_repair does.  New reference. */
json_t *sanitize_json_string(const char *in, size_t len);

/* ---- the visible rendering, for what a reviewer approves ----
 *
 * sanitize_text drops escape sequences whole, right for logs; text that a
 * reviewer approves (diffs, paths, summaries, findings) must show every
 * byte it holds.  sanitize_visible leaves printable text as it is and
 * shows everything else as a visible mark:
 *
 * - C0 controls and DEL in caret notation ("^G", "^H", "^?"), every CR
 *   too ("^M", even before LF: a CRLF line shows it); tab and newline
 *   pass when flags ask for them, else show as "^I" and "^J";
 * - escape sequences whole, with their bytes: ESC is "^[", BEL "^G", so
 *   that ESC ] 0 ; t BEL shows as "^[]0;t^G" (the same extent as
 *   sanitize_text drops: CSI, nF and two-byte escapes, control strings up
 *   to BEL or ST or the next newline; one cut off by the end of input
 *   shows up to it);
 * - C1 controls (U+0080..U+009F; the 8-bit CSI, OSC, DCS, SOS, PM and APC
 *   introducers start a sequence shown whole like the ESC forms), bidi
 *   controls (the Trojan Source set: U+061C, U+200E, U+200F,
 *   U+202A..U+202E, U+2066..U+2069) and invisible characters (see
 *   SANITIZE_HIDDEN_INVISIBLE) as "<U+202E>";
 * - each byte of invalid UTF-8 as "<0xFF>".
 * Nothing is dropped.  The output holds only printable characters (and
 * the tabs and newlines that flags keep); a mark never ends inside a
 * character.  Appends to out; returns the number of marks. */
#define SANITIZE_KEEP_TAB 1
#define SANITIZE_KEEP_NEWLINE 2

/* Where sanitize_visible's output came from: pieces in order, covering
 * the output.  A plain piece is a copy of its input bytes (len ==
 * in_len, byte k of the output is byte k of the input); a mark shows
 * in_len input bytes as len bytes of text.  Adjacent marks are one
 * piece. */
struct sanitize_seg {
	size_t out, len;           /* in the output buffer */
	size_t in, in_len;         /* in the input */
	int mark;
};
struct sanitize_segs {
	struct sanitize_seg *v;
	size_t n, cap;
};

size_t sanitize_visible(const char *in, size_t len, int flags, struct buf *out,
                        struct sanitize_segs *segs);
void sanitize_segs_free(struct sanitize_segs *s);

/* sanitize_visible for a terminal: each mark wrapped in reverse video
 * (ESC [ 7 m ... ESC [ 27 m), an attribute and not a colour, so it is
 * drawn under NO_COLOR too: a mark never looks like text the agent typed.
 * Used by `paddock diff` and `show` on a terminal and by the dashboard's
 * pager copy.  Appends to out; returns the number of marks. */
size_t sanitize_visible_marked(const char *in, size_t len, int flags, struct buf *out);

/* What sanitize_scan finds, by how the policy treats it. */
enum sanitize_hidden_kind {
	SANITIZE_HIDDEN_NONE,
	SANITIZE_HIDDEN_ESCAPE,    /* ESC, or an 8-bit sequence introducer */
	SANITIZE_HIDDEN_CONTROL,   /* another C0 or C1 control, DEL */
	SANITIZE_HIDDEN_BIDI,      /* a bidi control (the set above) */
	SANITIZE_HIDDEN_INVISIBLE  /* U+00AD, U+034F, U+115F, U+1160,
	                              U+17B4, U+17B5, U+180B..U+180F,
	                              U+200B..U+200D, U+2028, U+2029,
	                              U+2060..U+2065, U+206A..U+206F, U+3164,
	                              U+FEFF, U+FFA0, U+FFF9..U+FFFB,
	                              U+1BCA0..U+1BCA3, U+1D173..U+1D17A,
	                              U+E0000..U+E0FFF (tag characters,
	                              variation selectors 17 to 256, and
	                              unassigned ones that are ignored), and
	                              variation selectors U+FE00..U+FE0F,
	                              except one U+FE0E or U+FE0F right after
	                              a printable character (text or emoji
	                              style, as in most emoji) */
};

struct sanitize_hidden {
	enum sanitize_hidden_kind kind;
	uint32_t cp;               /* the character (U+001B for ESC) */
	size_t off;                /* its offset in the input */
};

/* Content: tab, newline, form feed and a CR before a newline or at the
 * end of the input are ordinary; SANITIZE_SCAN_PATH: they count too (a
 * path holds none of them). */
#define SANITIZE_SCAN_PATH 1

/* Finds the first escape, control or bidi control in in (*ctl) and the
 * first invisible character (*inv); kind SANITIZE_HIDDEN_NONE where there
 * is none.  Invalid UTF-8 is not looked for.  Every character found is one
 * sanitize_visible shows as a mark. */
void sanitize_scan(const char *in, size_t len, int flags, struct sanitize_hidden *ctl,
                   struct sanitize_hidden *inv);

/* "U+202E RIGHT-TO-LEFT OVERRIDE", "U+001B ESCAPE", "U+E0041 TAG",
 * "U+0011" (a character without a name here). */
void sanitize_describe(uint32_t cp, char *out, size_t outlen);

/* ---- a message to a person ----
 *
 * Text quoted in a message (a progress line, an error, a status line):
 * sanitize_visible's rendering with flags 0, so that an escape sequence,
 * a control (tab and newline too), a bidi control or an invisible
 * character shows as a mark and nothing reaches the terminal raw.  The
 * result is malloc'd (free it); NULL in is "". */
char *sanitize_quote(const char *in, size_t len);
char *sanitize_quote_str(const char *in);

/* ---- a live terminal session (paddock shell) ----
 *
 * What a program in the sandbox prints, on its way to the reviewer's
 * terminal, chunk by chunk (a sequence may span chunks).  An allow-list:
 * printable text and valid UTF-8 (other C1 U+0080..U+009F, in either
 * form, are dropped; another invalid byte becomes U+FFFD), BEL, BS, HT,
 * LF, CR; and these sequences, copied whole:
 * - CSI with digits and ';' (':' in SGR): SGR (m), cursor moves (A-G, H,
 *   f, d, e, a, `, I, Z), save and restore (s, u), erase (J but 3 or 03, K, X),
 *   insert and delete (@, P, L, M), scroll (S, T with one parameter),
 *   repeat (b), the scroll region (r), insert mode (4 h/l);
 * - CSI ? h/l of the modes 1 (cursor keys), 7 (auto-wrap) and 25 (the
 *   cursor shown) only;
 * - ESC 7, ESC 8, ESC M, ESC D, ESC E, ESC =, ESC >, ESC ( B, ESC ( 0.
 * Every other sequence is dropped whole: control strings (OSC, such as
 * window titles and OSC 52 clipboard writes, DCS, SOS, PM, APC, ESC k
 * titles) up to BEL, ST, CAN, SUB or a newline (which passes), window
 * operations (CSI t), other modes (mouse tracking, the alternate screen,
 * bracketed paste, focus events), reports that would answer into the
 * input (CSI n, CSI c), a full reset (ESC c), a CSI with over 64
 * parameter bytes.  Other C0 controls and DEL are dropped.  Appends to
 * out. */
struct sanitize_term {
	int string;                /* in a control string being dropped */
	int skip_csi;              /* in an over-long CSI being dropped */
	unsigned char pend[96];    /* an incomplete sequence or character */
	size_t npend;
};
void sanitize_term(struct sanitize_term *t, const char *in, size_t len, struct buf *out);

/* What puts back every mode sanitize_term lets through (the scroll
 * region, SGR, the character set, insert mode, cursor keys, the keypad,
 * auto-wrap, the cursor shown), for the end of a session.  Static. */
const char *sanitize_term_restore(void);

#endif
