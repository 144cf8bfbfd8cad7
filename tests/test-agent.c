/* test-agent: agent command lines split like a shell would, without one,
 * and the host files they name: the script, shown to the sandbox, and any
 * other, refused unless the agent lists it in its files. */
#include "autoconfig.h"
#include "agent.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "buf.h"
#include "err.h"
#include "tap.h"
#include "testlib.h"

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

static char *join(char **v, size_t n)
{
	struct buf b = { 0 };

	for (size_t i = 0; i < n; i++) {
		if (i)
			buf_addc(&b, '|');
		buf_adds(&b, v[i]);
	}
	return b.data ? buf_detach(&b) : xstrdup("");
}

/* The script (files) or the other host files of cmd, '|'-joined. */
static char *files(const char *cmd, int others)
{
	struct agent_cmdline c;
	struct err e = { { 0 } };
	char *res;

	if (agent_cmdline_parse(cmd, &c, &e) < 0)
		return xasprintf("ERR: %s", e.msg);
	res = others ? join(c.others, c.nothers) : join(c.files, c.nfiles);
	agent_cmdline_free(&c);
	return res;
}

/* agent_sandbox_files of command and resume (NULL: none) for agent "bot"
 * with listed files; '|'-joined, or "ERR: msg". */
static char *sandbox_files(const char *cmd, const char *resume, char *const *listed,
                           size_t nlisted)
{
	struct agent_cmdline c, r;
	struct err e = { { 0 } };
	const char **v = NULL;
	size_t n = 0;
	char *res;

	memset(&r, 0, sizeof r);
	if (agent_cmdline_parse(cmd, &c, &e) < 0 || (resume && agent_cmdline_parse(resume, &r, &e) < 0))
		return xasprintf("ERR: %s", e.msg);
	if (agent_sandbox_files("bot", &c, &r, listed, nlisted, &v, &n, &e) < 0)
		res = xasprintf("ERR: %s", e.msg);
	else
		res = join((char **)v, n);
	if (v && v[n] != NULL)
		ok(0, "the array of files is NULL-terminated");
	free(v);
	agent_cmdline_free(&c);
	agent_cmdline_free(&r);
	return res;
}

#define SPLIT(cmd, want, ...) do { char *g = split(cmd); is_str(g, want, __VA_ARGS__); free(g); } while (0)
#define FILES(cmd, want, ...) do { char *g = files(cmd, 0); is_str(g, want, __VA_ARGS__); free(g); } while (0)
#define OTHERS(cmd, want, ...) do { char *g = files(cmd, 1); is_str(g, want, __VA_ARGS__); free(g); } while (0)
#define SBFILES(cmd, res, l, n, want, ...) do { char *sf_ = sandbox_files(cmd, res, l, n); \
	is_str(sf_, want, __VA_ARGS__); free(sf_); } while (0)

/* ok when got is an error that contains each of the NULL-terminated
 * substrings. */
static void err_has(const char *got, const char *what, ...)
{
	va_list ap;
	const char *sub;
	int good = strncmp(got, "ERR: ", 5) == 0;

	va_start(ap, what);
	while ((sub = va_arg(ap, const char *)))
		if (!strstr(got, sub))
			good = 0;
	va_end(ap);
	ok(good, "%s", what);
	if (!good)
		printf("#   got: %s\n", got);
}

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
	char *dir, *script, *other, *cmd, *link;

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
	dir = testlib_tmpdir("agent");
	script = testlib_fmt("%s/agent.sh", dir);
	other = testlib_fmt("%s/with space.json", dir);
	link = testlib_fmt("%s/link-to-sh", dir);
	testlib_write_file(script, "#!/bin/sh\n");
	testlib_write(other, "", 0);
	if (symlink("/usr/bin/env", link) != 0)
		return 1;

	cmd = xasprintf("%s --config '%s' -q", script, other);
	FILES(cmd, script, "argv[0], a host file, is the script");
	OTHERS(cmd, other, "any other host file is not, quoted names too");
	free(cmd);
	cmd = xasprintf("%s %s %s", script, script, script);
	FILES(cmd, script, "a script named twice is listed once");
	OTHERS(cmd, "", "and not as another file");
	free(cmd);
	cmd = xasprintf("%s %s '%s' '%s'", script, script, other, other);
	OTHERS(cmd, other, "another file named twice is listed once");
	free(cmd);
	cmd = xasprintf("%s/../%s/agent.sh", dir, strrchr(dir, '/') + 1);
	{
		char *c2 = xasprintf("sh %s", cmd);
		FILES(c2, cmd, "the path is kept as written, not resolved");
		free(c2);
	}
	free(cmd);

	/* Interpreters: their first non-option argument is the script. */
	cmd = xasprintf("sh %s --config '%s'", script, other);
	FILES(cmd, script, "sh SCRIPT: the script");
	OTHERS(cmd, other, "sh SCRIPT: a later host file is another file");
	free(cmd);
	cmd = xasprintf("/usr/bin/python3 -u -B %s '%s'", script, other);
	FILES(cmd, script, "/usr/bin/python3 -u -B SCRIPT: options are skipped");
	OTHERS(cmd, other, "... and the file after the script is another file");
	free(cmd);
	cmd = xasprintf("python3.11 %s", script);
	FILES(cmd, script, "a versioned interpreter name (python3.11)");
	free(cmd);
	cmd = xasprintf("node -- %s", script);
	FILES(cmd, script, "node -- SCRIPT: the word after -- is the script");
	free(cmd);
	cmd = xasprintf("bash -c 'cat \"$1\"' bash '%s'", other);
	FILES(cmd, "", "bash -c CODE: the code is the first non-option argument, not a file");
	OTHERS(cmd, other, "so a host file after it is another file");
	free(cmd);
	cmd = xasprintf("python3 -m tool %s", script);
	FILES(cmd, "", "python3 -m MODULE FILE: only the first non-option argument can be the script");
	OTHERS(cmd, script, "... the file is another file");
	free(cmd);
	cmd = xasprintf("cat %s", script);
	FILES(cmd, "", "cat FILE: cat is no interpreter");
	OTHERS(cmd, script, "... its file is another file");
	free(cmd);
	cmd = xasprintf("./python3 %s", script);
	FILES(cmd, "", "./python3 (relative to /work) is no interpreter of the host's");
	free(cmd);
	{
		char real[4096];
		if (realpath("/bin", real) && strcmp(real, "/usr/bin") == 0) {
			cmd = xasprintf("/bin/sh %s", script);
			FILES(cmd, script, "/bin/sh (via /bin -> /usr/bin) SCRIPT: the script");
			free(cmd);
		} else {
			ok(1, "# SKIP /bin is not a link to /usr/bin here");
		}
	}

	FILES("agent.sh ./agent.sh --file=/etc/hostname", "", "relative paths and flags are not files");
	OTHERS("agent.sh ./agent.sh --file=/etc/hostname", "", "nor other files");
	cmd = xasprintf("run %s", dir);
	OTHERS(cmd, "", "a directory is not a file");
	free(cmd);
	cmd = xasprintf("run %s/missing.sh", dir);
	OTHERS(cmd, "", "a missing path is not a file");
	free(cmd);
	FILES("/usr/bin/env python3 /usr/share/dict/x", "", "paths under /usr are already in the sandbox");
	OTHERS("/usr/bin/env python3 /usr/share/dict/x", "", "... and not other files");
	cmd = xasprintf("%s /proc/cpuinfo /sys/kernel/mm/transparent_hugepage/enabled", script);
	OTHERS(cmd, "", "/proc and /sys are the sandbox's own, not host files");
	free(cmd);
	FILES("/dev/null", "", "a device is not a regular file");
	cmd = xasprintf("sh %s", link);
	FILES(cmd, link, "a symlink to a regular file is a file, kept at its own path");
	free(cmd);
	cmd = xasprintf("run %s", link);
	OTHERS(cmd, link, "... also as another file");
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

	/* Listed files: what the sandbox is shown. */
	ok(agent_file_path_ok("/opt/agent/config.json"), "an absolute path can be listed");
	ok(!agent_file_path_ok("config.json"), "a relative path cannot");
	ok(!agent_file_path_ok("/opt//a") && !agent_file_path_ok("/opt/./a") &&
	   !agent_file_path_ok("/opt/../etc/a") && !agent_file_path_ok("/opt/a/"),
	   "nor one that is not normalised");
	ok(!agent_file_path_ok("/proc/self/environ") && !agent_file_path_ok("/dev/sda") &&
	   !agent_file_path_ok("/sys/x") && !agent_file_path_ok("/"),
	   "nor one under /proc, /dev or /sys, nor /");
	{
		char *listed[2] = { other, script };
		char *g, *want2;
		struct err e = { { 0 } };

		cmd = xasprintf("%s --config '%s'", script, other);
		g = sandbox_files(cmd, NULL, NULL, 0);
		err_has(g, "a command naming an unlisted host file is refused", "agent.bot.command:",
		        other, "agent.bot.files", (char *)NULL);
		free(g);
		want2 = xasprintf("%s|%s", script, other);
		SBFILES(cmd, NULL, listed, 1, want2, "listed, it is shown with the script");
		free(cmd);
		cmd = xasprintf("sh %s", script);
		SBFILES(cmd, cmd, listed, 2, want2, "script of command and resume and listed files: each once");
		free(want2);
		g = xasprintf("sh %s '%s'", script, other);
		{
			char *got = sandbox_files(cmd, g, NULL, 0);
			err_has(got, "the resume command is checked too", "agent.bot.resume:", other,
			        (char *)NULL);
			free(got);
		}
		free(g);
		free(cmd);
		ok(agent_check_listed("bot", script, &e) == 0, "a listed regular file is fine");
		ok(agent_check_listed("bot", dir, &e) < 0 && strstr(e.msg, "agent.bot.files") &&
		   strstr(e.msg, "not a regular file"), "a listed folder is refused (%s)", e.msg);
		g = xasprintf("%s/missing", dir);
		ok(agent_check_listed("bot", g, &e) < 0 && strstr(e.msg, g),
		   "a listed missing file is refused (%s)", e.msg);
		free(g);
		unlink(other);
		cmd = xasprintf("sh %s", script);
		g = sandbox_files(cmd, NULL, listed, 1);
		err_has(g, "a listed file that is gone is refused", "agent.bot.files", other,
		        (char *)NULL);
		free(g);
		free(cmd);
	}

	testlib_end();
	return tap_done();
}
