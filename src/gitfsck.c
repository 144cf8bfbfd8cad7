#include "autoconfig.h"
#include "gitfsck.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "buf.h"

/* git's own ctype (sane_ctype): ASCII only, whatever the locale. */
static int fk_space(int c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
static int fk_digit(int c) { return c >= '0' && c <= '9'; }
static int fk_alpha(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
static int fk_keychar(int c) { return fk_alpha(c) || fk_digit(c) || c == '-'; }
static int fk_lower(int c) { return c >= 'A' && c <= 'Z' ? c + 32 : c; }
static int fk_dirsep(int c) { return c == '/' || c == '\\'; }

static int fk_report(char msg[GITFSCK_MSG], const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, GITFSCK_MSG, fmt, ap);
	va_end(ap);
	return -1;
}

/* ---- names (git's utf8.c and path.c) ---- */

/* One UTF-8 code point; *s NULL where the sequence is not valid UTF-8
 * (git's pick_one_utf8_char, stopping at the NUL). */
static unsigned fk_utf8(const unsigned char **sp)
{
	const unsigned char *s = *sp;
	unsigned ch;
	size_t incr;

	if (s[0] < 0x80) {
		ch = s[0];
		incr = 1;
	} else if ((s[0] & 0xe0) == 0xc0) {
		if ((s[1] & 0xc0) != 0x80 || (s[0] & 0xfe) == 0xc0)
			goto invalid;
		ch = (unsigned)(s[0] & 0x1f) << 6 | (s[1] & 0x3f);
		incr = 2;
	} else if ((s[0] & 0xf0) == 0xe0) {
		if ((s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80 ||
		    (s[0] == 0xe0 && (s[1] & 0xe0) == 0x80) ||
		    (s[0] == 0xed && (s[1] & 0xe0) == 0xa0) ||
		    (s[0] == 0xef && s[1] == 0xbf && (s[2] & 0xfe) == 0xbe))
			goto invalid;
		ch = (unsigned)(s[0] & 0x0f) << 12 | (unsigned)(s[1] & 0x3f) << 6 | (s[2] & 0x3f);
		incr = 3;
	} else if ((s[0] & 0xf8) == 0xf0) {
		if ((s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80 || (s[3] & 0xc0) != 0x80 ||
		    (s[0] == 0xf0 && (s[1] & 0xf0) == 0x80) || (s[0] == 0xf4 && s[1] > 0x8f) ||
		    s[0] > 0xf4)
			goto invalid;
		ch = (unsigned)(s[0] & 0x07) << 18 | (unsigned)(s[1] & 0x3f) << 12 |
		     (unsigned)(s[2] & 0x3f) << 6 | (s[3] & 0x3f);
		incr = 4;
	} else {
		goto invalid;
	}
	*sp = s + incr;
	return ch;
invalid:
	*sp = NULL;
	return 0;
}

/* The next character HFS+ does not ignore (0 at the end, or at bytes
 * that are not UTF-8). */
static unsigned fk_hfs_next(const unsigned char **s)
{
	for (;;) {
		unsigned c = fk_utf8(s);
		if (!*s)
			return 0;
		if ((c >= 0x200c && c <= 0x200f) || (c >= 0x202a && c <= 0x202e) ||
		    (c >= 0x206a && c <= 0x206f) || c == 0xfeff)
			continue;
		return c;
	}
}

/* "." and needle, in any case, with HFS+'s ignored code points anywhere. */
static int fk_is_hfs_dot(const char *path, const char *needle)
{
	const unsigned char *s = (const unsigned char *)path;
	unsigned c = fk_hfs_next(&s);
	if (c != '.')
		return 0;
	for (; *needle; needle++) {
		if (!s)
			return 0;
		c = fk_hfs_next(&s);
		if (c > 127 || fk_lower((int)c) != *needle)
			return 0;
	}
	c = s ? fk_hfs_next(&s) : 0;
	return !c || c == '/';
}

/* .git, git~1, and either with trailing dots and spaces, or a stream
 * (":"), in any case. */
static int fk_is_ntfs_dotgit(const char *name)
{
	const char *p = name;
	if (*p == '.') {
		if (fk_lower(p[1]) != 'g' || fk_lower(p[2]) != 'i' || fk_lower(p[3]) != 't')
			return 0;
		p += 4;
	} else if (fk_lower(*p) == 'g') {
		if (fk_lower(p[1]) != 'i' || fk_lower(p[2]) != 't' || p[3] != '~' || p[4] != '1')
			return 0;
		p += 5;
	} else {
		return 0;
	}
	for (;; p++) {
		if (!*p || fk_dirsep(*p) || *p == ':')
			return 1;
		if (*p != '.' && *p != ' ')
			return 0;
	}
}

static int fk_spaces_and_periods(const char *p)
{
	for (;; p++) {
		if (!*p || *p == ':')
			return 1;
		if (*p != ' ' && *p != '.')
			return 0;
	}
}

/* git's is_ntfs_dot_generic: ".<name>", its short names "<6 chars>~1..4"
 * and the fall-back short name "<prefix>~<digits>". */
static int fk_is_ntfs_dot(const char *name, const char *dotname, const char *shortprefix)
{
	size_t len = strlen(dotname);
	if (name[0] == '.' && !strncasecmp(name + 1, dotname, len))
		return fk_spaces_and_periods(name + len + 1);
	if (!strncasecmp(name, dotname, 6) && name[6] == '~' && name[7] >= '1' && name[7] <= '4')
		return fk_spaces_and_periods(name + 8);
	int saw_tilde = 0;
	for (size_t i = 0; i < 8; i++) {
		if (name[i] == '\0')
			return 0;
		if (saw_tilde) {
			if (!fk_digit(name[i]))
				return 0;
		} else if (name[i] == '~') {
			i++;
			if (name[i] < '1' || name[i] > '9')
				return 0;
			saw_tilde = 1;
		} else if (i >= 6 || (name[i] & 0x80) || fk_lower(name[i]) != shortprefix[i]) {
			return 0;
		}
	}
	return fk_spaces_and_periods(name + 8);
}

static int fk_is_gitmodules(const char *n)
{
	return fk_is_hfs_dot(n, "gitmodules") || fk_is_ntfs_dot(n, "gitmodules", "gi7eba");
}

static int fk_is_gitattributes(const char *n)
{
	return fk_is_hfs_dot(n, "gitattributes") || fk_is_ntfs_dot(n, "gitattributes", "gi7d29");
}

/* ---- trees ---- */

struct fk_names {
	const char **v;
	size_t n, cap;
};

static void fk_names_push(struct fk_names *s, const char *name)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 16;
		s->v = xrealloc(s->v, s->cap * sizeof *s->v);
	}
	s->v[s->n++] = name;
}

#define FK_UNORDERED (-1)
#define FK_DUPS (-2)

static int fk_less_than_slash(unsigned char c) { return c != '\0' && c < '/'; }

/* git's verify_ordered: path order (a folder sorts as if its name ended
 * in '/'), and no name twice, even apart ("foo", "foo.bar", "foo/"). */
static int fk_ordered(unsigned mode1, const char *name1, unsigned mode2, const char *name2,
                      struct fk_names *candidates)
{
	size_t len1 = strlen(name1), len2 = strlen(name2);
	size_t len = len1 < len2 ? len1 : len2;
	int cmp = memcmp(name1, name2, len);
	if (cmp < 0)
		return 0;
	if (cmp > 0)
		return FK_UNORDERED;
	unsigned char c1 = (unsigned char)name1[len], c2 = (unsigned char)name2[len];
	if (!c1 && !c2)
		return FK_DUPS;
	if (!c1 && (mode1 & 0170000) == 0040000)
		c1 = '/';
	if (!c2 && (mode2 & 0170000) == 0040000)
		c2 = '/';
	if (!c1 && fk_less_than_slash(c2)) {
		fk_names_push(candidates, name1);
	} else if (c2 == '/' && fk_less_than_slash(c1)) {
		while (candidates->n) {
			const char *f = candidates->v[--candidates->n];
			size_t fl = strlen(f);
			if (strncmp(name2, f, fl) != 0)
				continue;
			const char *p = name2 + fl;
			if (!*p)
				return FK_DUPS;
			if (fk_less_than_slash((unsigned char)*p)) {
				candidates->n++;
				break;
			}
		}
	}
	return c1 < c2 ? 0 : FK_UNORDERED;
}

struct fk_tree_flags {
	int null_sha1, full_path, empty_name, dot, dotdot, dotgit, zero_pad, dups, unsorted;
};

/* One entry's name checks; -1 (msg) to stop. */
static int fk_tree_entry(struct fk_tree_flags *f, unsigned mode, const char *name,
                         const unsigned char *id, gitfsck_found_fn found, void *arg,
                         char msg[GITFSCK_MSG])
{
	static const unsigned char zero[20];
	int link = (mode & 0170000) == 0120000;

	f->null_sha1 |= !memcmp(id, zero, 20);
	f->full_path |= strchr(name, '/') != NULL;
	f->empty_name |= !*name;
	f->dot |= !strcmp(name, ".");
	f->dotdot |= !strcmp(name, "..");
	f->dotgit |= fk_is_hfs_dot(name, "git") || fk_is_ntfs_dotgit(name);
	if (fk_is_gitmodules(name)) {
		if (link)
			return fk_report(msg, "gitmodulesSymlink: .gitmodules is a symbolic link");
		if (found && found(GITFSCK_GITMODULES, id, arg, msg) < 0)
			return -1;
	}
	if (fk_is_gitattributes(name) && !link && found &&
	    found(GITFSCK_GITATTRIBUTES, id, arg, msg) < 0)
		return -1;
	/* A backslash is a folder's end on Windows: each part is a name. */
	for (const char *b = strchr(name, '\\'); b; b = strchr(b, '\\')) {
		b++;
		f->dotgit |= fk_is_ntfs_dotgit(b);
		if (fk_is_ntfs_dot(b, "gitmodules", "gi7eba")) {
			if (link)
				return fk_report(msg, "gitmodulesSymlink: .gitmodules is a symbolic link");
			if (found && found(GITFSCK_GITMODULES, id, arg, msg) < 0)
				return -1;
		}
	}
	return 0;
}

int gitfsck_tree(const char *buf, size_t len, gitfsck_found_fn found, void *arg,
                 char msg[GITFSCK_MSG])
{
	struct fk_tree_flags f = {0};
	struct fk_names cand = {0};
	const char *p = buf, *end = buf + len, *o_name = NULL;
	unsigned o_mode = 0;
	int rc = 0;

	while (p < end) {
		/* "<octal mode> <name>\0<20 bytes>" */
		const char *m = p;
		unsigned mode = 0;
		if (*p == ' ')
			goto bad;
		for (; p < end && *p != ' '; p++) {
			if (*p < '0' || *p > '7')
				goto bad;
			mode = (mode << 3) + (unsigned)(*p - '0');
		}
		if (p >= end)
			goto bad;
		const char *name = ++p;
		const char *nul = memchr(name, '\0', (size_t)(end - name));
		if (!nul || !*name || (size_t)(end - nul) < 21)
			goto bad;
		const unsigned char *id = (const unsigned char *)nul + 1;
		p = nul + 21;
		f.zero_pad |= *m == '0';
		/* git keeps the mode in 16 bits here. */
		mode &= 0xffff;
		if (fk_tree_entry(&f, mode, name, id, found, arg, msg) < 0) {
			rc = -1;
			goto out;
		}
		if (o_name) {
			int r = fk_ordered(o_mode, o_name, mode, name, &cand);
			f.unsorted |= r == FK_UNORDERED;
			f.dups |= r == FK_DUPS;
		}
		o_mode = mode;
		o_name = name;
	}
	if (f.null_sha1)
		rc = fk_report(msg, "nullSha1: contains entries pointing to null sha1");
	else if (f.full_path)
		rc = fk_report(msg, "fullPathname: contains full pathnames");
	else if (f.empty_name)
		rc = fk_report(msg, "emptyName: contains empty pathname");
	else if (f.dot)
		rc = fk_report(msg, "hasDot: contains '.'");
	else if (f.dotdot)
		rc = fk_report(msg, "hasDotdot: contains '..'");
	else if (f.dotgit)
		rc = fk_report(msg, "hasDotgit: contains '.git'");
	else if (f.zero_pad)
		rc = fk_report(msg, "zeroPaddedFilemode: contains zero-padded file modes");
	else if (f.dups)
		rc = fk_report(msg, "duplicateEntries: contains duplicate file entries");
	else if (f.unsorted)
		rc = fk_report(msg, "treeNotSorted: not properly sorted");
	goto out;
bad:
	rc = fk_report(msg, "badTree: cannot be parsed as a tree");
out:
	free(cand.v);
	return rc;
}

/* ---- commits and tags ---- */

/* A header of lines up to a blank line (or the end, after a newline),
 * with no NUL in it. */
static int fk_headers(const char *buf, size_t len, char msg[GITFSCK_MSG])
{
	for (size_t i = 0; i < len; i++) {
		if (buf[i] == '\0')
			return fk_report(msg, "nulInHeader: unterminated header: NUL at offset %zu", i);
		if (buf[i] == '\n' && i + 1 < len && buf[i + 1] == '\n')
			return 0;
	}
	if (len && buf[len - 1] == '\n')
		return 0;
	return fk_report(msg, "unterminatedHeader: unterminated header");
}

static int fk_skip(const char **p, const char *prefix)
{
	size_t n = strlen(prefix);
	if (strncmp(*p, prefix, n) != 0)
		return 0;
	*p += n;
	return 1;
}

/* 40 hex digits and a newline; *p after the digits. */
static int fk_oid_line(const char **p)
{
	for (int i = 0; i < 40; i++)
		if (!strchr("0123456789abcdefABCDEF", (*p)[i]) || !(*p)[i])
			return -1;
	*p += 40;
	return **p == '\n' ? 0 : -1;
}

/* "Name <email> 1234567890 +0000\n" (git's fsck_ident); *ident moves past
 * the line. */
static int fk_ident(const char **ident, char msg[GITFSCK_MSG])
{
	const char *p = *ident;
	char *end;

	*ident = p + strcspn(p, "\n");
	if (**ident == '\n')
		(*ident)++;
	if (*p == '<')
		return fk_report(msg, "missingNameBeforeEmail: invalid author/committer line - "
		                 "missing space before email");
	p += strcspn(p, "<>\n");
	if (*p == '>')
		return fk_report(msg, "badName: invalid author/committer line - bad name");
	if (*p != '<')
		return fk_report(msg, "missingEmail: invalid author/committer line - missing email");
	if (p[-1] != ' ')
		return fk_report(msg, "missingSpaceBeforeEmail: invalid author/committer line - "
		                 "missing space before email");
	p++;
	p += strcspn(p, "<>\n");
	if (*p != '>')
		return fk_report(msg, "badEmail: invalid author/committer line - bad email");
	p++;
	if (*p != ' ')
		return fk_report(msg, "missingSpaceBeforeDate: invalid author/committer line - "
		                 "missing space before date");
	p++;
	if (*p == '0' && p[1] != ' ')
		return fk_report(msg, "zeroPaddedDate: invalid author/committer line - "
		                 "zero-padded date");
	/* git's parse_timestamp and date_overflows, with a 64-bit time_t */
	uintmax_t t = strtoumax(p, &end, 10);
	if (t == UINTMAX_MAX || t > (uintmax_t)INT64_MAX)
		return fk_report(msg, "badDateOverflow: invalid author/committer line - "
		                 "date causes integer overflow");
	if (end == p || *end != ' ')
		return fk_report(msg, "badDate: invalid author/committer line - bad date");
	p = end + 1;
	if ((*p != '+' && *p != '-') || !fk_digit(p[1]) || !fk_digit(p[2]) || !fk_digit(p[3]) ||
	    !fk_digit(p[4]) || p[5] != '\n')
		return fk_report(msg, "badTimezone: invalid author/committer line - bad time zone");
	return 0;
}

static int fk_commit(const char *buf, size_t len, char msg[GITFSCK_MSG])
{
	const char *p = buf;
	unsigned authors = 0;

	if (fk_headers(buf, len, msg) < 0)
		return -1;
	if (!fk_skip(&p, "tree "))
		return fk_report(msg, "missingTree: invalid format - expected 'tree' line");
	if (fk_oid_line(&p) < 0)
		return fk_report(msg, "badTreeSha1: invalid 'tree' line format - bad sha1");
	p++;
	while (fk_skip(&p, "parent ")) {
		if (fk_oid_line(&p) < 0)
			return fk_report(msg, "badParentSha1: invalid 'parent' line format - bad sha1");
		p++;
	}
	while (fk_skip(&p, "author ")) {
		authors++;
		if (fk_ident(&p, msg) < 0)
			return -1;
	}
	if (authors < 1)
		return fk_report(msg, "missingAuthor: invalid format - expected 'author' line");
	if (authors > 1)
		return fk_report(msg, "multipleAuthors: invalid format - multiple 'author' lines");
	if (!fk_skip(&p, "committer "))
		return fk_report(msg, "missingCommitter: invalid format - expected 'committer' line");
	if (fk_ident(&p, msg) < 0)
		return -1;
	if (memchr(buf, '\0', len))
		return fk_report(msg, "nulInCommit: NUL byte in the commit object body");
	return 0;
}

/* The checks read the object as a string, as git's do (its buffers end in
 * a NUL): a copy that does. */
int gitfsck_commit(const char *buf, size_t len, char msg[GITFSCK_MSG])
{
	char *s = xmalloc(len + 1);
	memcpy(s, buf, len);
	s[len] = '\0';
	int rc = fk_commit(s, len, msg);
	free(s);
	return rc;
}

/* ---- .gitmodules ---- */

/* git's url_decode_mem as far as a newline goes: is there one, raw or
 * %-encoded (decoding starts at the first colon when there is one). */
static int fk_decoded_nl(const char *s, size_t n)
{
	const char *colon = memchr(s, ':', n);
	size_t from = colon && colon > s ? (size_t)(colon - s) : 0;
	for (size_t i = 0; i < n && s[i]; i++) {
		if (s[i] == '\n')
			return 1;
		if (i >= from && s[i] == '%' && i + 2 < n && s[i + 1] == '0' &&
		    (s[i + 2] == 'a' || s[i + 2] == 'A'))
			return 1;
	}
	return 0;
}

static int fk_dot_slash(const char *p) { return p[0] == '.' && fk_dirsep(p[1]); }
static int fk_dotdot_slash(const char *p) { return p[0] == '.' && p[1] == '.' && fk_dirsep(p[2]); }

/* git's credential_from_url_gently on an http(s)/ftp(s) URL: a scheme, a
 * host, and no newline in any part. */
static int fk_curl_url_bad(const char *url)
{
	const char *proto_end = strstr(url, "://");
	if (!proto_end || proto_end == url)
		return 1;
	const char *cp = proto_end + 3;
	const char *at = strchr(cp, '@'), *colon = strchr(cp, ':');
	const char *slash = cp + strcspn(cp, "/?#"), *host = cp;
	if (at && slash > at) {
		if (!colon || at <= colon) {
			if (fk_decoded_nl(cp, (size_t)(at - cp)))
				return 1;
		} else if (fk_decoded_nl(cp, (size_t)(colon - cp)) ||
		           fk_decoded_nl(colon + 1, (size_t)(at - colon - 1))) {
			return 1;
		}
		host = at + 1;
	}
	if (memchr(url, '\n', (size_t)(proto_end - url)))
		return 1;
	if (slash == host || fk_decoded_nl(host, (size_t)(slash - host)))
		return 1;
	while (*slash == '/')
		slash++;
	return fk_decoded_nl(slash, strlen(slash));
}

/* git's check_submodule_url: -1 for a URL git refuses. */
static int fk_submodule_url(const char *url)
{
	if (url[0] == '-')
		return -1;
	if (fk_dot_slash(url) || fk_dotdot_slash(url) || !strncmp(url, "git://", 6)) {
		if (fk_decoded_nl(url, strlen(url)))
			return -1;
		int dotdots = 0;
		const char *next = url;
		for (;;) {
			if (fk_dotdot_slash(next)) {
				dotdots++;
				next += 3;
			} else if (fk_dot_slash(next)) {
				next += 2;
			} else {
				break;
			}
		}
		if (dotdots > 0 && (*next == ':' || *next == '/'))
			return -1;
		return 0;
	}
	const char *curl = NULL;
	static const char *const helpers[] = { "http::", "https::", "ftp::", "ftps::" };
	for (size_t i = 0; i < 4 && !curl; i++)
		if (!strncmp(url, helpers[i], strlen(helpers[i])))
			curl = url + strlen(helpers[i]);
	if (!curl && (!strncmp(url, "http://", 7) || !strncmp(url, "https://", 8) ||
	              !strncmp(url, "ftp://", 6) || !strncmp(url, "ftps://", 7)))
		curl = url;
	return curl && fk_curl_url_bad(curl) ? -1 : 0;
}

/* git's check_submodule_name: not empty, no ".." component. */
static int fk_submodule_name(const char *name)
{
	if (!*name)
		return -1;
	for (const char *p = name;; p++) {
		if (p == name || fk_dirsep(p[-1])) {
			if (p[0] == '.' && p[1] == '.' && (!p[2] || fk_dirsep(p[2])))
				return -1;
		}
		if (!*p)
			return 0;
	}
}

/* One "section.subsection.key" = value of the file. */
static int fk_gitmodules_var(const char *var, const char *value, char msg[GITFSCK_MSG])
{
	if (strncmp(var, "submodule.", 10) != 0)
		return 0;
	const char *rest = var + 9, *dot = strrchr(rest, '.');
	if (dot == rest)
		return 0;  /* no subsection */
	const char *key = dot + 1;
	char *name = xstrndup(rest + 1, (size_t)(dot - rest - 1));
	int rc = 0;
	if (fk_submodule_name(name) < 0)
		rc = fk_report(msg, "gitmodulesName: disallowed submodule name: %s", name);
	else if (!strcmp(key, "url") && value && fk_submodule_url(value) < 0)
		rc = fk_report(msg, "gitmodulesUrl: disallowed submodule url: %s", value);
	else if (!strcmp(key, "path") && value && value[0] == '-')
		rc = fk_report(msg, "gitmodulesPath: disallowed submodule path: %s", value);
	else if (!strcmp(key, "update") && value && value[0] == '!')
		rc = fk_report(msg, "gitmodulesUpdate: disallowed submodule update setting: %s",
		               value);
	free(name);
	return rc;
}

/* git's config reader over a buffer (get_next_char: CRLF is a newline,
 * the end reads as one). */
struct fk_conf {
	const unsigned char *s;
	size_t len, pos;
	int eof;
};

static int fk_getc(struct fk_conf *c)
{
	if (c->pos >= c->len) {
		c->eof = 1;
		return '\n';
	}
	int ch = c->s[c->pos++];
	if (ch == '\r' && c->pos < c->len && c->s[c->pos] == '\n')
		ch = c->s[c->pos++];
	return ch;
}

/* '[' seen: "name]" or "name "subsection"]" into var. */
static int fk_conf_section(struct fk_conf *c, struct buf *var)
{
	for (;;) {
		int ch = fk_getc(c);
		if (c->eof)
			return -1;
		if (ch == ']')
			return 0;
		if (fk_space(ch)) {
			do {
				if (ch == '\n')
					return -1;
				ch = fk_getc(c);
			} while (fk_space(ch));
			if (ch != '"')
				return -1;
			buf_addc(var, '.');
			for (;;) {
				ch = fk_getc(c);
				if (ch == '\n')
					return -1;
				if (ch == '"')
					break;
				if (ch == '\\' && (ch = fk_getc(c)) == '\n')
					return -1;
				buf_addc(var, (char)ch);
			}
			return fk_getc(c) == ']' ? 0 : -1;
		}
		if (!fk_keychar(ch) && ch != '.')
			return -1;
		buf_addc(var, (char)fk_lower(ch));
	}
}

/* '=' seen: the value, unquoted and unescaped; -1 on a syntax error. */
static int fk_conf_value(struct fk_conf *c, struct buf *v)
{
	int quote = 0, comment = 0;
	size_t space = 0;
	buf_reset(v);
	for (;;) {
		int ch = fk_getc(c);
		if (ch == '\n')
			return quote ? -1 : 0;
		if (comment)
			continue;
		if (fk_space(ch) && !quote) {
			if (v->len)
				space++;
			continue;
		}
		if (!quote && (ch == ';' || ch == '#')) {
			comment = 1;
			continue;
		}
		for (; space; space--)
			buf_addc(v, ' ');
		if (ch == '\\') {
			ch = fk_getc(c);
			if (ch == '\n')
				continue;
			if (ch == 't')
				ch = '\t';
			else if (ch == 'b')
				ch = '\b';
			else if (ch == 'n')
				ch = '\n';
			else if (ch != '\\' && ch != '"')
				return -1;
			buf_addc(v, (char)ch);
			continue;
		}
		if (ch == '"') {
			quote = !quote;
			continue;
		}
		buf_addc(v, (char)ch);
	}
}

/* A key: its name after the section's, then "= value", or nothing (a
 * boolean).  1: a syntax error; -1: a refused entry. */
static int fk_conf_entry(struct fk_conf *c, struct buf *var, struct buf *val,
                         char msg[GITFSCK_MSG])
{
	int ch;
	for (;;) {
		ch = fk_getc(c);
		if (c->eof || !fk_keychar(ch))
			break;
		buf_addc(var, (char)fk_lower(ch));
	}
	while (ch == ' ' || ch == '\t')
		ch = fk_getc(c);
	int has_value = ch != '\n';
	if (has_value && (ch != '=' || fk_conf_value(c, val) < 0))
		return 1;
	return fk_gitmodules_var(var->data, has_value ? (val->data ? val->data : "") : NULL, msg);
}

int gitfsck_gitmodules(const char *buf, size_t len, char msg[GITFSCK_MSG])
{
	struct fk_conf c = { .s = (const unsigned char *)buf, .len = len };
	struct buf var = {0}, val = {0};
	size_t base = 0;
	int comment = 0, rc = 0;

	if (len >= 3 && !memcmp(buf, "\357\273\277", 3))
		c.pos = 3;
	for (;;) {
		int ch = fk_getc(&c);
		if (ch == '\n') {
			if (c.eof)
				break;
			comment = 0;
			continue;
		}
		if (comment || fk_space(ch))
			continue;
		if (ch == '#' || ch == ';') {
			comment = 1;
			continue;
		}
		if (ch == '[') {
			buf_reset(&var);
			if (fk_conf_section(&c, &var) < 0 || var.len < 1)
				break;  /* a syntax error: git reads no further */
			buf_addc(&var, '.');
			base = var.len;
			continue;
		}
		if (!fk_alpha(ch))
			break;
		var.len = base;
		if (var.data)
			var.data[base] = '\0';
		buf_addc(&var, (char)fk_lower(ch));
		int r = fk_conf_entry(&c, &var, &val, msg);
		if (r < 0)
			rc = -1;
		if (r != 0)
			break;
	}
	buf_free(&var);
	buf_free(&val);
	return rc;
}

int gitfsck_gitattributes(const char *buf, size_t len, char msg[GITFSCK_MSG])
{
	/* git's ATTR_MAX_FILE_SIZE and ATTR_MAX_LINE_LENGTH */
	if (len > 100 * 1024 * 1024)
		return fk_report(msg, "gitattributesLarge: .gitattributes too large to parse");
	for (const char *p = buf, *end = buf + len; p < end && *p;) {
		const char *eol = p;
		while (eol < end && *eol && *eol != '\n')
			eol++;
		if (eol - p >= 2048)
			return fk_report(msg, "gitattributesLineLength: .gitattributes has too long "
			                 "lines to parse");
		p = eol < end && *eol == '\n' ? eol + 1 : eol;
	}
	return 0;
}
