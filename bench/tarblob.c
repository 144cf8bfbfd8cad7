/* bench/tarblob.c: the driver of bench/tarblob.sh.
 *   tarblob store DATA     normalise+store the tar on stdin (a pipe: spooled)
 *   tarblob fromdir DIR    the normalised tar of DIR, to /dev/null
 * Prints the blob's sha256 and the milliseconds it took. */
#include "tarblob.h"
#include "clock.h"
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	struct err e = {{ 0 }};
	char hex[TARBLOB_HEX] = "";
	double t0 = clock_mono();
	int rc;
	if (!strcmp(argv[1], "store")) {
		rc = tarblob_store(argv[2], 0, NULL, hex, &e);
	} else {
		int out = open("/dev/null", O_WRONLY);
		rc = tarblob_from_dir(argv[2], out, NULL, NULL, hex, &e);
		close(out);
	}
	if (rc < 0) {
		fprintf(stderr, "%s\n", e.msg);
		return 1;
	}
	printf("%s %.1f\n", hex, (clock_mono() - t0) * 1000);
	return 0;
}
