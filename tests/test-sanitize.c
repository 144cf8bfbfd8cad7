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
	return tap_done();
}
