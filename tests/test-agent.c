/* test-agent: agent command lines split like a shell would, without one,
 * and the host files they name. */
#include "autoconfig.h"
#include "agent.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "buf.h"
#include "err.h"
#include "tap.h"

/* argv joined with '|' for comparison, or "ERR: msg". */
static char *split(const char *cmd)
{
	struct agent_cmdline c;
	struct err e = { { 0 } };
	struct buf b = { 0 };
	size_t i;

	if (agent_cmdline_parse(cmd, &c, &e) < 0)
		return xasprintf("ERR: %s", e.msg);
	for (i = 0; i < c.argc; i++) {
		if (i)
			buf_addc(&b, '|');
		buf_adds(&b, c.argv[i]);
	}
	if (c.argv[c.argc] != NULL)
		buf_adds(&b, "(argv not NULL-terminated)");
	agent_cmdline_free(&c);
	return buf_detach(&b);
}

static char *files(const char *cmd)
{
	struct agent_cmdline c;
	struct err e = { { 0 } };
	struct buf b = { 0 };
	size_t i;

	if (agent_cmdline_parse(cmd, &c, &e) < 0)
		return xasprintf("ERR: %s", e.msg);
	for (i = 0; i < c.nfiles; i++) {
		if (i)
			buf_addc(&b, '|');
		buf_adds(&b, c.files[i]);
	}
	agent_cmdline_free(&c);
	return buf_detach(&b);
}

#define SPLIT(cmd, want, ...) do { char *g = split(cmd); is_str(g, want, __VA_ARGS__); free(g); } while (0)
#define FILES(cmd, want, ...) do { char *g = files(cmd); is_str(g, want, __VA_ARGS__); free(g); } while (0)

static void fails(const char *cmd, const char *substr, const char *what)
{
	char *g = split(cmd);
	int good = strncmp(g, "ERR: ", 5) == 0 && strstr(g, substr) != NULL;
	ok(good, "%s", what);
	if (!good)
		printf("#   got: %s\n", g);
	free(g);
}
#define FAILS(cmd, substr, what) fails(cmd, substr, what)

int main(void)
{
	char dir[] = "/tmp/test-agent.XXXXXX";
	char *script, *other, *cmd, *want, *link;
	FILE *f;

	SPLIT("claude -p --verbose", "claude|-p|--verbose", "plain words");
	SPLIT("  a \t b\n c  ", "a|b|c", "runs of spaces, tabs and newlines separate words");
	SPLIT("python3 -m unittest -q", "python3|-m|unittest|-q", "several flags");
	SPLIT("echo 'a b' \"c d\"", "echo|a b|c d", "quotes keep spaces");
	SPLIT("echo 'it\"s' \"it's\"", "echo|it\"s|it's", "each quote protects the other kind");
	SPLIT("echo 'a\\b'", "echo|a\\b", "backslash is literal in single quotes");
	SPLIT("echo \"a\\\"b\\\\c\\$d\\`e\"", "echo|a\"b\\c$d`e", "double quotes: \\ escapes \" \\ $ `");
	SPLIT("echo \"a\\nb\"", "echo|a\\nb", "double quotes: other backslashes stay");
	SPLIT("echo a\\ b c\\\"d", "echo|a b|c\"d", "backslash outside quotes escapes the next character");
	SPLIT("echo ab\\\ncd", "echo|abcd", "backslash-newline joins lines");
	SPLIT("echo a'b'\"c\"d", "echo|abcd", "adjacent quoted parts form one word");
	SPLIT("echo '' \"\"", "echo||", "empty quotes are empty words");
	SPLIT("echo $HOME ~ *.c `id` $(id)", "echo|$HOME|~|*.c|`id`|$(id)", "no expansion of any kind");
	SPLIT("a;b | c && d", "a;b|||c|&&|d", "operators are plain words: no shell runs");
	FAILS("", "empty", "empty command refused");
	FAILS("   \t\n", "empty", "blank command refused");
	FAILS(NULL, "empty", "NULL command refused");
	FAILS("echo 'abc", "single quote", "unterminated single quote refused");
	FAILS("echo \"abc", "double quote", "unterminated double quote refused");
	FAILS("echo \"ab\\\"", "double quote", "escaped closing double quote leaves it unterminated");
	FAILS("echo abc\\", "backslash", "trailing backslash refused");

	/* Files. */
	if (!mkdtemp(dir))
		return 1;
	script = xasprintf("%s/agent.sh", dir);
	other = xasprintf("%s/with space.json", dir);
	link = xasprintf("%s/link-to-sh", dir);
	f = fopen(script, "w");
	fputs("#!/bin/sh\n", f);
	fclose(f);
	f = fopen(other, "w");
	fclose(f);
	if (symlink("/usr/bin/env", link) != 0)
		return 1;

	cmd = xasprintf("%s --config '%s' -q", script, other);
	want = xasprintf("%s|%s", script, other);
	FILES(cmd, want, "absolute paths of regular files are files, quoted names too");
	free(cmd);
	free(want);
	cmd = xasprintf("%s %s %s", script, script, script);
	FILES(cmd, script, "a file named twice is listed once");
	free(cmd);
	cmd = xasprintf("%s/../%s/agent.sh", dir, strrchr(dir, '/') + 1);
	{
		char *c2 = xasprintf("sh %s", cmd);
		FILES(c2, cmd, "the path is kept as written, not resolved");
		free(c2);
	}
	free(cmd);
	FILES("agent.sh ./agent.sh --file=/etc/hostname", "", "relative paths and flags are not files");
	cmd = xasprintf("run %s", dir);
	FILES(cmd, "", "a directory is not a file");
	free(cmd);
	cmd = xasprintf("run %s/missing.sh", dir);
	FILES(cmd, "", "a missing path is not a file");
	free(cmd);
	FILES("/usr/bin/env python3 /usr/share/dict/x", "", "paths under /usr are already in the sandbox");
	FILES("/dev/null", "", "a device is not a regular file");
	cmd = xasprintf("run %s", link);
	FILES(cmd, link, "a symlink to a regular file is a file, kept at its own path");
	free(cmd);
	{
		char real[4096];
		/* On merged-/usr systems /bin is a link to /usr/bin: its files are
		 * already in the sandbox. */
		if (realpath("/bin", real) && strcmp(real, "/usr/bin") == 0)
			FILES("/bin/sh -c true", "", "/bin/sh via /bin -> /usr/bin is already in the sandbox");
		else
			ok(1, "# SKIP /bin is not a link to /usr/bin here");
	}
	FILES("/etc/hostname", access("/etc/hostname", R_OK) == 0 ? "/etc/hostname" : "",
	      "a file under /etc is a file");

	unlink(script);
	unlink(other);
	unlink(link);
	rmdir(dir);
	free(script);
	free(other);
	free(link);
	return tap_done();
}
