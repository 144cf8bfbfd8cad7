/* test-fsckdiff: paddock's bundle check decides as `git index-pack
 * --strict` does, on every case of a differential corpus.
 *
 * The promise under test (README, paddock(1), HACKING.md): a bundle is
 * refused when git's own strict checks refuse its pack, and only the
 * checks git only notes are let through.  tests/fsckdiff.py writes the
 * cases from a fixed seed, each a bundle on the mirror's main with a pack
 * written byte by byte (tree entry names in every spelling a filesystem
 * takes for .git, .gitmodules or .gitattributes, modes, entry order and
 * duplicates, commit headers and identities, .gitmodules and
 * .gitattributes texts, deep and wide trees, broken packs, and random
 * mutations of valid trees, commits and .gitmodules), and git 2.39's
 * verdict on each pack (index-pack --stdin --fix-thin --strict in a
 * repository that borrows the mirror's objects).  Here bundle_import
 * imports every case into the mirror; each case passes when both refuse
 * or both accept.  paddock accepting what git refuses is a hole in the
 * check; paddock refusing what git accepts, a bundle an agent could not
 * hand back.  Every case keeps to paddock's own rules (the tip descends
 * from the base, the pack holds only what the tip reaches), so none is
 * decided by them. */
#include "autoconfig.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "buf.h"
#include "bundle.h"
#include "config.h"
#include "err.h"
#include "mirror.h"
#include "tap.h"
#include "testlib.h"

#define REF "refs/heads/paddock/x"
#define WORKERS 2

/* Where paddock refuses on purpose what git accepts (the generator tags
 * each case with what it holds): never the other way round. */
static const struct { const char *tag, *why; } deliberate[] = {
	{ "mode16", "a tree entry's mode over 16 bits (git keeps the low 16 of its fsck; "
	            "libgit2, which reads the mirror for paddock, cannot parse the tree)" },
	{ "modetype", "a tree entry's mode of no file type (git takes the entry for a gitlink "
	              "and follows nothing; libgit2 takes it for a blob, which must be there)" },
	{ "bom", "a .gitmodules that starts with a byte-order mark (git's blob parser reads "
	         "the mark as a signed char and stops, but its file parser skips it, so a "
	         "checkout reads the entry git's check never saw: git's hole)" },
	{ NULL, NULL },
};

/* Why paddock may refuse a case with these tags ("a,b"), or NULL. */
static const char *deliberate_why(const char *tags)
{
	for (size_t i = 0; deliberate[i].tag; i++) {
		size_t n = strlen(deliberate[i].tag);
		for (const char *p = tags; (p = strstr(p, deliberate[i].tag)); p += n)
			if ((p == tags || p[-1] == ',') && (!p[n] || p[n] == ','))
				return deliberate[i].why;
	}
	return NULL;
}

/* Worker k: imports the cases k, k + WORKERS, ... into a mirror of its
 * own and writes "id<TAB>0|1<TAB>paddock's message" lines to out. */
static void worker(int k, const char *T, const char *mirror, const char *base, int ncases,
                   int stride)
{
	const struct bundle_limits lim = {
		.max_bytes = 64 << 20, .max_objects = 100000, .max_blob = 16 << 20,
	};
	FILE *out = fopen(testlib_fmt("%s/results-%d", T, k), "w");
	if (!out)
		_exit(1);
	for (int n = k; n < ncases; n += WORKERS) {
		if (n % stride)
			continue;
		struct err e;
		char head[41] = "";
		int r = bundle_import(mirror, testlib_fmt("%s/cases/%d.bundle", T, n), REF, base,
		                      testlib_fmt("refs/paddock/tasks/c%d", n), &lim, head, &e);
		for (char *p = e.msg; r < 0 && *p; p++)
			if (*p == '\n' || *p == '\t')
				*p = ' ';
		fprintf(out, "%d\t%d\t%s\n", n, r < 0, r < 0 ? e.msg : "");
	}
	_exit(fclose(out) == 0 ? 0 : 1);
}

int main(void)
{
	struct err e;
	const char *srcdir = getenv("top_srcdir") ? getenv("top_srcdir") : ".";

	testlib_git_env("Test", "test@example.invalid", "2024-01-01T00:00:00Z");
	char *T = testlib_tmpdir("fsckdiff");
	char *data = testlib_fmt("%s/data", T);

	/* The base: a.txt, and two blobs a .gitmodules or .gitattributes
	 * check refuses, which the cases name from the mirror. */
	if (testlib_sh("set -e; cd '%s' && git init -q -b main up && cd up && "
	               "printf 'one\\n' > a.txt && "
	               "printf '[submodule \"x\"]\\n\\turl = --upload-pack=touch${IFS}pwned\\n' "
	               "> evil-mods.txt && "
	               "python3 -c \"print('x' * 3000)\" > long-attrs.txt && "
	               "git add . && git commit -q -m base", T) != 0) {
		printf("Bail out! cannot create the upstream repo\n");
		return 1;
	}
	struct repo_conf rc = { .name = "demo", .url = testlib_fmt("%s/up", T), .branch = "main" };
	char *mirror = testlib_keep(mirror_path(data, "demo"));
	if (mirror_update(data, &rc, &e) < 0) {
		printf("Bail out! mirror_update: %s\n", e.msg);
		return 1;
	}
	char *base = testlib_sh_out("git -C '%s' rev-parse main", mirror);
	if (testlib_sh("cd '%s' && git init -q --bare xcheck && mkdir cases && "
	               "echo '%s/objects' > xcheck/objects/info/alternates && "
	               "python3 '%s/tests/fsckdiff.py' up %s xcheck cases 34 > verdicts",
	               T, mirror, srcdir, base) != 0) {
		printf("Bail out! fsckdiff.py failed\n");
		return 1;
	}
	/* Under valgrind (valgrind.test), every 25th case: the check of
	 * memory, not of verdicts, at a tenth of a second an import. */
	const char *preload = getenv("LD_PRELOAD");
	int stride = preload && strstr(preload, "vgpreload") ? 25 : 1;
	int ncases = atoi(testlib_sh_out("wc -l < '%s/verdicts'", T));

	/* The workers, each on a copy of the mirror (one import at a time
	 * holds a mirror's lock). */
	pid_t pids[WORKERS];
	char *mirrors[WORKERS];
	for (int k = 0; k < WORKERS; k++) {
		mirrors[k] = k ? testlib_fmt("%s/mirror-%d.git", T, k) : mirror;
		if (k && testlib_sh("cp -a '%s' '%s'", mirror, mirrors[k]) != 0) {
			printf("Bail out! cannot copy the mirror\n");
			return 1;
		}
	}
	fflush(stdout);
	for (int k = 0; k < WORKERS; k++) {
		pids[k] = fork();
		if (pids[k] == 0)
			worker(k, T, mirrors[k], base, ncases, stride);
	}
	int workers_ok = 1;
	for (int k = 0; k < WORKERS; k++) {
		int ws = 0;
		workers_ok &= pids[k] > 0 && waitpid(pids[k], &ws, 0) == pids[k] && WIFEXITED(ws) &&
		              WEXITSTATUS(ws) == 0;
	}
	ok(workers_ok, "the %d workers imported every case", WORKERS);

	char **ours = xcalloc((size_t)ncases + 1, sizeof *ours);
	for (int k = 0; k < WORKERS; k++) {
		FILE *f = fopen(testlib_fmt("%s/results-%d", T, k), "r");
		char *line = NULL;
		size_t cap = 0;
		while (f && getline(&line, &cap, f) > 0) {
			int n = atoi(line);
			line[strcspn(line, "\n")] = '\0';
			if (n >= 0 && n < ncases && !ours[n])
				ours[n] = xstrdup(strchr(line, '\t') ? strchr(line, '\t') + 1 : "");
		}
		free(line);
		if (f)
			fclose(f);
	}

	FILE *f = fopen(testlib_fmt("%s/verdicts", T), "r");
	char *line = NULL;
	size_t cap = 0;
	int n = 0, kept = 0, both_refuse = 0, both_accept = 0;
	while (f && getline(&line, &cap, f) > 0) {
		line[strcspn(line, "\n")] = '\0';
		char *id = strtok(line, "\t"), *verdict = strtok(NULL, "\t"),
		     *tags = strtok(NULL, "\t"), *name = strtok(NULL, "\t"),
		     *gitmsg = strtok(NULL, "\t");
		int i = id ? atoi(id) : -1;
		if (stride > 1 && i % stride)
			continue;
		if (!verdict || !name || i < 0 || i >= ncases || !ours[i]) {
			ok(0, "case %s: both verdicts", id ? id : "?");
			continue;
		}
		int git_refuses = verdict[0] == '1', we_refuse = ours[i][0] == '1';
		const char *msg = ours[i] + 2, *why = deliberate_why(tags);
		msg = *msg ? msg : "(accepted)";
		if (we_refuse == git_refuses) {
			ok(1, "%s: both %s", name, git_refuses ? "refuse" : "accept");
			both_refuse += git_refuses;
			both_accept += !git_refuses;
		} else if (why && we_refuse) {
			ok(1, "%s: paddock refuses what git accepts, on purpose", name);
			printf("#   %s\n#   paddock: %s\n", why, msg);
			kept++;
		} else {
			ok(0, "%s: paddock %s, git %s", name, we_refuse ? "refuses" : "accepts",
			   git_refuses ? "refuses" : "accepts");
			printf("#   paddock: %s\n#   git: %s\n", msg, gitmsg ? gitmsg : "(accepted)");
		}
		n++;
	}
	free(line);
	if (f)
		fclose(f);
	for (int i = 0; i < ncases; i++)
		free(ours[i]);
	free(ours);
	ok(n == (ncases + stride - 1) / stride && ncases > 900,
	   "the corpus has %d cases, %d run (%d refused by both, %d accepted by both, %d refused "
	   "by paddock on purpose)", ncases, n, both_refuse, both_accept, kept);
	ok(both_refuse > 500 / stride && both_accept > 200 / stride,
	   "both verdicts are well represented");
	testlib_end();
	return tap_done();
}
