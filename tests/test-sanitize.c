/* test-sanitize: hostile terminal output becomes harmless, readable text. */
#include "autoconfig.h"
#include "sanitize.h"

#include <stdlib.h>
#include <string.h>
#include "buf.h"
#include "tap.h"

/* Sanitizes s (len bytes, or strlen when len is (size_t)-1). */
static const char *san(const char *s, size_t len, int keep_sgr)
{
	static struct buf b;
	buf_free(&b);
	memset(&b, 0, sizeof(b));
	sanitize_text(s, len == (size_t)-1 ? strlen(s) : len, keep_sgr, &b);
	return b.data ? b.data : "";
}
#define S(s) san((s), (size_t)-1, 0)
#define SK(s) san((s), (size_t)-1, 1)

/* sanitize_visible of s (len bytes, or strlen), with flags; the pieces in
 * segs when asked. */
static struct sanitize_segs VS;
static size_t VN;
static const char *vis_f(const char *s, size_t len, int flags)
{
	static struct buf b;
	buf_free(&b);
	memset(&b, 0, sizeof(b));
	sanitize_segs_free(&VS);
	VN = sanitize_visible(s, len == (size_t)-1 ? strlen(s) : len, flags, &b, &VS);
	return b.data ? b.data : "";
}
#define V(s) vis_f((s), (size_t)-1, SANITIZE_KEEP_TAB | SANITIZE_KEEP_NEWLINE)
#define VP(s) vis_f((s), (size_t)-1, 0)

static void test_visible(void)
{
	/* Printable text passes; tab and newline when asked. */
	is_str(V("plain text, caf\xc3\xa9 \xe6\xbc\xa2 \xf0\x9f\x98\x80\n\tindent\n"),
	       "plain text, caf\xc3\xa9 \xe6\xbc\xa2 \xf0\x9f\x98\x80\n\tindent\n",
	       "visible: printable text, wide characters, tab and newline pass");
	is_int(VN, 0, "visible: no marks in plain text");
	is_str(VP("a\tb\nc"), "a^Ib^Jc", "visible: without the flags tab and newline are ^I and ^J");

	/* The example of the issue: the title sequence is shown, not dropped. */
	is_str(V("echo \"building\"\x1b]0;$(payload)\x07\n"), "echo \"building\"^[]0;$(payload)^G\n",
	       "visible: an OSC title with BEL shows whole, its payload readable");
	is_int(VN, 1, "visible: that is one mark");
	ok(VS.n == 3 && !VS.v[0].mark && VS.v[1].mark && !VS.v[2].mark &&
	   VS.v[1].out == 15 && VS.v[1].len == 17 && VS.v[1].in == 15 && VS.v[1].in_len == 15,
	   "visible: pieces: plain, the mark (its 15 input bytes as 17 bytes of text), plain");
	is_str(V("a\x1b]2;title\x1b\\b"), "a^[]2;title^[\\b", "visible: OSC ended by ESC \\ (ST) shows whole");
	is_str(V("a\x1b]52;c;cm0gLXJmIH4K\x07" "b"), "a^[]52;c;cm0gLXJmIH4K^Gb", "visible: an OSC 52 clipboard write");
	is_str(V("a\x1b]0;never ends"), "a^[]0;never ends", "visible: an OSC cut off by the end shows up to it");
	is_str(V("a\x1b]0;x\nnext\n"), "a^[]0;x\nnext\n", "visible: an unterminated OSC ends at the newline");
	is_str(V("a\x1b[1;31mred\x1b[0m b\x1b[2J"), "a^[[1;31mred^[[0m b^[[2J",
	       "visible: CSI (SGR, clear screen) show whole");
	is_int(VN, 3, "visible: three sequences, three marks");
	is_str(V("a\x1b[12"), "a^[[12", "visible: a CSI cut off by the end");
	is_str(V("a\x1bP+q544e\x1b\\b\x1b" "c\x1b(0x"), "a^[P+q544e^[\\b^[c^[(0x",
	       "visible: DCS, ESC c and a charset designation show whole");
	is_str(V("end\x1b"), "end^[", "visible: a lone ESC");

	/* C1 controls: the 8-bit introducers start sequences. */
	is_str(V("a\xc2\x9b" "2Jb"), "a<U+009B>2Jb", "visible: 8-bit CSI shows whole");
	is_str(V("a\xc2\x9d" "0;t\xc2\x9c" "b"), "a<U+009D>0;t<U+009C>b", "visible: 8-bit OSC ended by 8-bit ST");
	is_str(V("a\xc2\x85" "b"), "a<U+0085>b", "visible: C1 NEL");
	ok(VS.n == 3 && VS.v[1].mark && VS.v[1].in == 1 && VS.v[1].in_len == 2, "visible: the mark is the two bytes of U+0085");

	/* C0 controls, CR. */
	is_str(V("a\a\b\x7f\x0c"), "a^G^H^?^L", "visible: BEL, BS, DEL and FF in caret notation");
	is_str(V("crlf\r\nlone\rx"), "crlf^M\nlone^Mx", "visible: every CR shows, even in CRLF");
	is_str(vis_f("a\0b", 3, 0), "a^@b", "visible: NUL does not end the text");

	/* Bidi controls: the Trojan Source set. */
	is_str(V("if (a) { /* \xe2\x80\xae } \xe2\x81\xa6 */ }"), "if (a) { /* <U+202E> } <U+2066> */ }",
	       "visible: RLO and LRI are marks");
	is_str(V("\xe2\x80\xaa\xe2\x80\xab\xe2\x80\xac\xe2\x80\xad\xe2\x81\xa7\xe2\x81\xa8\xe2\x81\xa9\xe2\x80\x8e\xe2\x80\x8f\xd8\x9c"),
	       "<U+202A><U+202B><U+202C><U+202D><U+2067><U+2068><U+2069><U+200E><U+200F><U+061C>",
	       "visible: every bidi control of the set");
	ok(VS.n == 1 && VS.v[0].mark && VS.v[0].in_len == 29, "visible: adjacent marks are one piece");

	/* Invisible characters. */
	is_str(V("pass\xe2\x80\x8bword \xe2\x80\x8c\xe2\x80\x8d\xe2\x81\xa0\xef\xbb\xbf\xc2\xad\xe1\xa0\x8e"),
	       "pass<U+200B>word <U+200C><U+200D><U+2060><U+FEFF><U+00AD><U+180E>",
	       "visible: zero-width space, joiners, word joiner, BOM, soft hyphen, Mongolian vowel separator");
	is_str(V("x\xf3\xa0\x81\x81\xf3\xa0\x81\xbf"), "x<U+E0041><U+E007F>", "visible: tag characters");
	is_str(V("\xe2\x9d\xa4\xef\xb8\x8f ok"), "\xe2\x9d\xa4\xef\xb8\x8f ok",
	       "visible: one emoji style selector after a character passes (as in most emoji)");
	is_str(V("\xe2\x9d\xa4\xef\xb8\x8f\xef\xb8\x8f"), "\xe2\x9d\xa4\xef\xb8\x8f<U+FE0F>",
	       "visible: a second selector in a row is a mark");
	is_str(V("a\xef\xb8\x80\xf3\xa0\x84\x80"), "a<U+FE00><U+E0100>",
	       "visible: other variation selectors are marks (they can carry hidden bytes)");
	is_str(V("\xef\xb8\x8fx"), "<U+FE0F>x", "visible: a selector at the start is a mark");

	/* Invalid UTF-8: each byte, with its value. */
	is_str(V("caf\xe9 \xff\xfe \xe6\xbc"), "caf<0xE9> <0xFF><0xFE> <0xE6><0xBC>",
	       "visible: invalid bytes show their values, a cut character too");
	is_str(V("a\x9b" "31mb"), "a<0x9B>31mb", "visible: a raw 0x9b byte is a bad byte, not a CSI");
	is_str(V("\xed\xa0\x80"), "<0xED><0xA0><0x80>", "visible: a surrogate");

	/* Inside a sequence, every byte is still visible. */
	is_str(V("\x1b]0;\xe2\x80\xae\xff\x01\xc3\xa9\x07"), "^[]0;<U+202E><0xFF>^A\xc3\xa9^G",
	       "visible: a bidi control, a bad byte and a control inside an OSC are marks too");

	/* A path (no flags): nothing may move the cursor. */
	is_str(VP("src/\x1b[2Jevil\ttab\nname\xe2\x80\xae.txt"), "src/^[[2Jevil^Itab^Jname<U+202E>.txt",
	       "visible: a path with an escape, a tab, a newline and a bidi control");

	{
		/* Nothing dangerous survives, and nothing is dropped: every
		 * input byte is in a piece. */
		const char *mix = "x\x1b]0;t\x07\x1b[2J\xc2\x9b" "1m\x1b" "c\x07\xc2\x9d" "52;c;x\xc2\x9c"
		                  "\x1bP1\x1b\\y\xe2\x80\xae\xe2\x80\x8b\r\x08";
		const char *r = V(mix);
		size_t covered = 0, outlen = 0;
		int bidi = 0;
		for (size_t k = 0; k < VS.n; k++) {
			covered += VS.v[k].in_len;
			outlen += VS.v[k].len;
		}
		bidi = strstr(r, "\xe2\x80\xae") != NULL || strstr(r, "\xe2\x80\x8b") != NULL;
		ok(!strchr(r, 0x1b) && !strchr(r, 0x07) && !strchr(r, '\r') && !strchr(r, 0x08) &&
		   !strstr(r, "\xc2\x9b") && !strstr(r, "\xc2\x9d") && !bidi,
		   "visible: a hostile mix leaves no ESC, BEL, CR, BS, C1 or bidi byte");
		ok(covered == strlen(mix) && outlen == strlen(r), "visible: the pieces cover input and output");
	}
	{
		struct buf b = { 0 };
		buf_adds(&b, "keep:");
		sanitize_visible("\x07", 1, 0, &b, NULL);
		is_str(b.data, "keep:^G", "visible: appends, pieces are optional");
		buf_free(&b);
	}
	vis_f("", 0, 0);
	sanitize_segs_free(&VS);
}

static void test_scan(void)
{
	struct sanitize_hidden c, i;
	char d[64];

#define SCAN(s, f) sanitize_scan((s), strlen(s), (f), &c, &i)
	SCAN("plain\ttext\r\n\x0c" "caf\xc3\xa9 \xe2\x9d\xa4\xef\xb8\x8f \xff\n", 0);
	ok(c.kind == SANITIZE_HIDDEN_NONE && i.kind == SANITIZE_HIDDEN_NONE,
	   "scan: tab, CRLF, form feed, accents, an emoji with its selector, a bad byte: nothing");
	SCAN("ab\x1b]0;x\x07", 0);
	ok(c.kind == SANITIZE_HIDDEN_ESCAPE && c.cp == 0x1b && c.off == 2, "scan: ESC at offset 2");
	SCAN("ab\xc2\x9b" "2J", 0);
	ok(c.kind == SANITIZE_HIDDEN_ESCAPE && c.cp == 0x9b, "scan: the 8-bit CSI is an escape");
	SCAN("a\rb", 0);
	ok(c.kind == SANITIZE_HIDDEN_CONTROL && c.cp == '\r', "scan: a CR inside a line is a control");
	SCAN("a\r", 0);
	ok(c.kind == SANITIZE_HIDDEN_NONE, "scan: a CR at the end is not");
	SCAN("a\bb", 0);
	ok(c.kind == SANITIZE_HIDDEN_CONTROL && c.cp == 8, "scan: backspace is a control");
	SCAN("a\xc2\x85", 0);
	ok(c.kind == SANITIZE_HIDDEN_CONTROL && c.cp == 0x85, "scan: a C1 control");
	SCAN("x \xe2\x80\x8b y \xe2\x80\xae", 0);
	ok(c.kind == SANITIZE_HIDDEN_BIDI && c.cp == 0x202e && c.off == 8 &&
	   i.kind == SANITIZE_HIDDEN_INVISIBLE && i.cp == 0x200b && i.off == 2,
	   "scan: both the bidi control and the zero-width space, with offsets");
	SCAN("a\tb", SANITIZE_SCAN_PATH);
	ok(c.kind == SANITIZE_HIDDEN_CONTROL && c.cp == '\t', "scan: a tab in a path is a control");
	SCAN("a\x0c", SANITIZE_SCAN_PATH);
	ok(c.kind == SANITIZE_HIDDEN_CONTROL, "scan: a form feed in a path is a control");
#undef SCAN
	sanitize_describe(0x202e, d, sizeof d);
	is_str(d, "U+202E RIGHT-TO-LEFT OVERRIDE", "describe: a bidi control by name");
	sanitize_describe(0x1b, d, sizeof d);
	is_str(d, "U+001B ESCAPE", "describe: ESC");
	sanitize_describe(0xfe0f, d, sizeof d);
	is_str(d, "U+FE0F VARIATION SELECTOR-16", "describe: a variation selector");
	sanitize_describe(0x11, d, sizeof d);
	is_str(d, "U+0011", "describe: no name, the code point");
}

/* sanitize_term of s fed in chunks of step bytes (0: at once), from a
 * fresh state. */
static const char *term_f(const char *s, size_t len, size_t step)
{
	static struct buf b;
	struct sanitize_term t;
	memset(&t, 0, sizeof t);
	buf_free(&b);
	memset(&b, 0, sizeof(b));
	if (!step)
		step = len ? len : 1;
	for (size_t i = 0; i < len; i += step)
		sanitize_term(&t, s + i, len - i < step ? len - i : step, &b);
	return b.data ? b.data : "";
}
#define TM(s) term_f((s), strlen(s), 0)

/* The bytes a terminal acts on, in what sanitize_term let through: no
 * ESC but at the start of an allowed sequence, no C1 in either form. */
static void test_term(void)
{
	/* What a shell needs passes, byte for byte. */
	const char *need = "prompt$ \033[1;32mgreen\033[m \033[K\033[2J\033[H\033[10;5H"
	                   "\033[3D\033[2C\033[A\033[B\033[P\033[@\033[5X\033[L\033[M"
	                   "\033[1;24r\033[?25l\033[?25h\033[?1h\033=\033[?1l\033>"
	                   "\0337\0338\033M\033(0q\033(B\033[4h\033[4l\033[38:2::1:2:3m"
	                   "a\bb\tc\r\n\a caf\xc3\xa9 \xe6\xbc\xa2 \xf0\x9f\x98\x80";
	is_str(TM(need), need, "term: colours, cursor moves, erase, scroll region, cursor keys, "
	       "the keypad, charsets, insert mode and text pass");
	is_str(term_f(need, strlen(need), 1), need, "term: the same, a byte at a time");
	/* What a terminal must not get is dropped whole. */
	is_str(TM("a\033]0;SPOOF\007b\033]52;c;cHduZWQ=\033\\c"), "abc",
	       "term: OSC titles and clipboard writes (BEL or ST) are dropped");
	is_str(TM("a\033kSPOOF\033\\b"), "ab", "term: ESC k titles are dropped");
	is_str(TM("a\033P+q544e\033\\b\033_apc\007c\033^pm\033\\d\033Xsos\033\\e"), "abcde",
	       "term: DCS, APC, PM and SOS strings are dropped");
	is_str(TM("a\033[8;1;1t\033[2t\033[21tb"), "ab", "term: window operations (CSI t) are dropped");
	is_str(TM("a\033[?1000h\033[?1002h\033[?1003h\033[?1005h\033[?1006h\033[?1015hb"), "ab",
	       "term: mouse tracking modes are dropped");
	is_str(TM("a\033[?47h\033[?1047h\033[?1049h\033[?2004h\033[?1004h\033[?25;1049hb"), "ab",
	       "term: the alternate screen, bracketed paste, focus events are dropped (a list "
	       "with one of them too)");
	is_str(TM("a\033[6n\033[c\033[>c\033cb\033[3J\033[1;2;3;4;5Tc"), "abc",
	       "term: reports, a full reset, the scrollback's erase, mouse highlighting are dropped");
	is_str(TM("a\033[03Jb\033[3;1Jc\033[0003Jd\033[30Je\033[0J"), "abcd\033[30Je\033[0J",
	       "term: the scrollback's erase with a leading zero or more parameters is dropped too");
	is_str(TM("a\xc2\x9b" "31mb\xc2\x9d" "0;SPOOF\xc2\x9c" "c\xc2\x85" "d"), "abcd",
	       "term: UTF-8 C1 controls (CSI, OSC, NEL) are dropped with their sequences");
	is_str(TM("a\x9b" "31mb\x9d" "0;SPOOF\x07" "c\x85" "d\xff" "e"), "abcd\xef\xbf\xbd" "e",
	       "term: raw 8-bit C1 controls are dropped with their sequences; another bad byte is U+FFFD");
	is_str(TM("a\001\016\017\177b"), "ab", "term: other C0 controls and DEL are dropped");
	is_str(TM("a\033]0;never ends\nb"), "a\nb", "term: an unterminated string ends at a newline");
	{
		const char *h = "x\033]0;SP\033kT\033\\y\033[?1049hz\xc2\x9d" "q\x07!";
		for (size_t step = 1; step < 6; step++)
			is_str(term_f(h, strlen(h), step), "xyz!", "term: hostile bytes in chunks of %zu",
			       step);
	}
	{
		char big[400];
		memset(big, '1', sizeof big);
		memcpy(big, "a\033[", 3);
		memcpy(big + sizeof big - 3, "tb", 3);
		is_str(TM(big), "ab", "term: an over-long CSI is dropped whole");
	}
	is_str(sanitize_term_restore(),
	       "\0337\033[r\0338\033[m\033(B\033[4l\033[?1l\033>\033[?7h\033[?25h",
	       "term: the restore resets every mode the filter lets through");
}

static void test_quote(void)
{
	char *q = sanitize_quote_str("big\033]52;c;cHduZWQ=\007\033]0;SPOOF\007\xc2\x9b" "2J\n2nd");
	is_str(q, "big^[]52;c;cHduZWQ=^G^[]0;SPOOF^G<U+009B>2J^J2nd",
	       "quote: escape sequences, C1 and newline show as marks, nothing raw");
	free(q);
	q = sanitize_quote_str(NULL);
	is_str(q, "", "quote: NULL is empty");
	free(q);
}

int main(void)
{
	/* Plain text. */
	is_str(S("hello, world\n\tindented\n"), "hello, world\n\tindented\n", "plain text, newline and tab pass");
	is_str(S(""), "", "empty input gives empty text");
	is_str(S("caf\xc3\xa9 \xe6\xbc\xa2\xe5\xad\x97 \xf0\x9f\x98\x80"),
	       "caf\xc3\xa9 \xe6\xbc\xa2\xe5\xad\x97 \xf0\x9f\x98\x80", "accents, wide CJK and emoji pass");
	{
		struct buf b = { 0 };
		buf_adds(&b, "keep:");
		sanitize_text("x", 1, 0, &b);
		is_str(b.data, "keep:x", "appends to what the buffer holds");
		buf_free(&b);
	}

	/* C0 controls. */
	is_str(S("a\r\nb\r\n"), "a\nb\n", "CRLF becomes LF");
	is_str(S("progress 10%\rprogress 20%"), "progress 10%^Mprogress 20%", "lone CR is visible as ^M");
	is_str(S("x\r"), "x^M", "CR at end of input is visible");
	is_str(S("bell\a"), "bell^G", "BEL is ^G");
	is_str(S("bs\b\b"), "bs^H^H", "backspaces are visible, cannot erase text");
	is_str(san("a\0b", 3, 0), "a^@b", "NUL is ^@ and does not end the text");
	is_str(S("del\x7f"), "del^?", "DEL is ^?");
	is_str(S("\x0e\x0f"), "^N^O", "shift out/in (charset switch) are visible");

	/* Titles, clipboard, other control strings. */
	is_str(S("a\x1b]0;pwned title\x07" "b"), "ab", "OSC title (BEL) dropped whole");
	is_str(S("a\x1b]2;title\x1b\\b"), "ab", "OSC title (ESC \\ ST) dropped whole");
	is_str(S("a\x1b]52;c;cm0gLXJmIH4K\x07" "b"), "ab", "OSC 52 clipboard write dropped whole");
	is_str(S("a\x1b]8;;http://evil.example/\x1b\\link\x1b]8;;\x1b\\b"), "alinkb", "OSC 8 hyperlink dropped, its text kept");
	is_str(S("a\x1bP+q544e\x1b\\b"), "ab", "DCS dropped whole");
	is_str(S("a\x1b_apc payload\x1b\\b"), "ab", "APC dropped whole");
	is_str(S("a\x1bXsos\x1b\\b\x1b^pm\x1b\\c"), "abc", "SOS and PM dropped whole");
	is_str(S("a\xc2\x9d" "0;title\xc2\x9c" "b"), "ab", "8-bit OSC (U+009D ... U+009C) dropped");
	is_str(S("a\xc2\x90q\xc2\x9c" "b"), "ab", "8-bit DCS dropped");
	is_str(S("ok\x1b]0;never ends"), "ok", "OSC cut off by end of input dropped");
	is_str(S("a\x1b]0;unterminated\nnext line\n"), "a\nnext line\n",
	       "unterminated OSC ends at newline, cannot hide later lines");
	is_str(S("a\x1b]0;x\x18" "b"), "ab", "CAN aborts an OSC");

	/* CSI. */
	is_str(S("a\x1b[2J\x1b[H\x1b[10;20Hb"), "ab", "clear screen and cursor moves dropped");
	is_str(S("a\x1b[?1049h\x1b[?25lb"), "ab", "private modes (alt screen, hide cursor) dropped");
	is_str(S("a\x1b[6n" "b"), "ab", "cursor position report request dropped");
	is_str(S("a\x1b[1;31mred\x1b[0m" "b"), "aredb", "SGR dropped without keep_sgr");
	is_str(SK("a\x1b[1;31mred\x1b[0m" "b"), "a\x1b[1;31mred\x1b[0m" "b", "SGR kept with keep_sgr");
	is_str(SK("\x1b[mx\x1b[38:2:255:0:0my"), "\x1b[mx\x1b[38:2:255:0:0my", "bare and colon SGR kept");
	is_str(SK("a\x1b[2Jb\x1b[?1mc\x1b[>4;2md"), "abcd", "keep_sgr still drops non-SGR and private 'm' sequences");
	is_str(SK("a\x1b[1 mb"), "ab", "SGR-like sequence with an intermediate byte dropped");
	is_str(SK("a\xc2\x9b" "31mb"), "ab", "8-bit CSI (U+009B) SGR dropped even with keep_sgr");
	is_str(S("a\xc2\x9b" "2Jb"), "ab", "8-bit CSI (U+009B) dropped");
	{
		char longsgr[200];
		memset(longsgr, 0, sizeof(longsgr));
		strcpy(longsgr, "a\x1b[");
		memset(longsgr + 3, '1', 100);
		strcat(longsgr, "mb");
		is_str(SK(longsgr), "ab", "overlong SGR parameter list dropped");
	}
	is_str(S("a\x1b[12"), "a", "CSI cut off by end of input dropped");
	is_str(SK("a\x1b[31"), "a", "unfinished SGR at end of input not copied");
	is_str(S("a\x1b[1\nb"), "a\nb", "CSI cut short by newline: newline kept");
	is_str(S("a\x1b[1\x07" "b"), "a^Gb", "CSI cut short by BEL: BEL shown");

	/* Other escapes. */
	is_str(S("a\x1b" "cb"), "ab", "ESC c (terminal reset) dropped");
	is_str(S("a\x1b" "7\x1b" "8b"), "ab", "save/restore cursor dropped");
	is_str(S("a\x1b(0qqq\x1b(Bb"), "aqqqb", "charset designation (nF escape) dropped");
	is_str(S("end\x1b"), "end^[", "lone ESC at end of input is visible");
	is_str(S("a\x1b\x1b[2Jb"), "a^[b", "ESC ESC [: first is visible, the CSI dropped");
	is_str(S("a\x1b\nb"), "a^[\nb", "ESC before newline is visible");

	/* C1 controls other than introducers. */
	is_str(S("a\xc2\x85" "b"), "a<U+0085>b", "C1 NEL shown as <U+0085>");
	is_str(S("a\xc2\x9c" "b"), "a<U+009C>b", "stray ST shown visible");

	/* Invalid UTF-8. */
	is_str(S("a\x9b" "31mb"), "a\xef\xbf\xbd" "31mb", "raw 0x9b byte is U+FFFD, not a CSI");
	is_str(S("a\xff" "b"), "a\xef\xbf\xbd" "b", "0xff is U+FFFD");
	is_str(S("\xc0\xaf"), "\xef\xbf\xbd\xef\xbf\xbd", "overlong '/' is two U+FFFD");
	is_str(S("\xe0\x80\xaf"), "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd", "3-byte overlong is U+FFFD per byte");
	is_str(S("\xed\xa0\x80"), "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd", "UTF-16 surrogate refused");
	is_str(S("\xf4\x90\x80\x80"), "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd", "above U+10FFFF refused");
	is_str(S("\xf5\x80"), "\xef\xbf\xbd\xef\xbf\xbd", "F5 lead byte refused");
	is_str(S("ab\xe6\xbc"), "ab\xef\xbf\xbd\xef\xbf\xbd", "truncated character at end of input");
	is_str(S("\xe6\xbc" "x"), "\xef\xbf\xbd\xef\xbf\xbd" "x", "truncated character before ASCII");
	is_str(S("\xc3\xa9\xe6\xbc\xa2\xf0\x9f\x98\x80"), "\xc3\xa9\xe6\xbc\xa2\xf0\x9f\x98\x80",
	       "2-, 3- and 4-byte characters at the edges of the valid range pass");
	is_str(S("\xf4\x8f\xbf\xbf"), "\xf4\x8f\xbf\xbf", "U+10FFFF passes");

	san("", 0, 0);
	{
		/* Nothing dangerous survives a mix: no ESC, no C1, no BEL. */
		const char *mix = "x\x1b]0;t\x07\x1b[2J\xc2\x9b" "1m\x1b" "c\x07\xc2\x9d" "52;c;x\xc2\x9c\x1bP1\x1b\\y";
		const char *r = S(mix);
		ok(!strchr(r, 0x1b) && !strchr(r, 0x07) && !strstr(r, "\xc2\x9b") && !strstr(r, "\xc2\x9d"),
		   "a hostile mix leaves no ESC, BEL or C1 introducer: %s", r);
	}
	/* The UTF-8 repair alone, for JSON. */
	{
		struct buf b = { 0 };
		const char in[] = "caf\xc3\xa9 \xff \xe6\xbc \x1b[1m \xf0\x9f\x98\x80 \xc3";
		sanitize_utf8_repair(in, sizeof in - 1, &b);
		is_str(b.data, "caf\xc3\xa9 \xef\xbf\xbd \xef\xbf\xbd\xef\xbf\xbd \x1b[1m "
		               "\xf0\x9f\x98\x80 \xef\xbf\xbd",
		       "repair: valid characters and controls pass, each bad byte (a stray 0xff, a cut "
		       "character) becomes U+FFFD");
		buf_free(&b);
	}
	{
		json_t *v = sanitize_json_string("a\xff" "b", 3);
		is_str(json_string_value(v), "a\xef\xbf\xbd" "b",
		       "a JSON string of bytes that are not UTF-8 is repaired, not lost");
		json_decref(v);
	}
	san("", 0, 0);
	test_visible();
	test_scan();
	test_term();
	test_quote();
	return tap_done();
}
