/* bench/bundle-import.c: the cost of bundle_import (src/bundle.h), built
 * and run by bench/bundle-import.sh.
 *
 *   bundle-import N MIRROR BUNDLE BASE REF
 *
 * N times: copies the bare mirror MIRROR (not timed), then imports BUNDLE
 * (its ref REF, based on BASE) into the copy; prints the mean and the
 * fastest import in milliseconds. */
#include "autoconfig.h"
#include "bundle.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"

int main(int argc, char **argv)
{
	if (argc != 6)
		return 2;
	int n = atoi(argv[1]);
	const struct bundle_limits lim = { .max_bytes = 1ULL << 30, .max_objects = 1000000,
	                                   .max_blob = 50ULL << 20 };
	double sum = 0, best = 1e9;
	char cmd[4096];
	for (int i = 0; i < n; i++) {
		snprintf(cmd, sizeof cmd, "rm -rf '%s.run' && cp -a '%s' '%s.run'", argv[2], argv[2],
		         argv[2]);
		if (system(cmd) != 0)
			return 1;
		char *mirror = NULL, head[41];
		struct err e;
		if (asprintf(&mirror, "%s.run", argv[2]) < 0)
			return 1;
		double t0 = clock_mono();
		int rc = bundle_import(mirror, argv[3], argv[5], argv[4], "refs/paddock/tasks/bench",
		                       &lim, head, &e);
		double dt = clock_mono() - t0;
		free(mirror);
		if (rc < 0) {
			fprintf(stderr, "bundle_import: %s\n", e.msg);
			return 1;
		}
		sum += dt;
		if (dt < best)
			best = dt;
	}
	printf("%.1f %.1f\n", 1000 * sum / n, 1000 * best);
	return 0;
}
