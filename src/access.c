/* access: the roles' names and order (access.h). */
#include <string.h>
#include "access.h"

static const char *const access_names[] = { "none", "read", "submit", "review", "admin" };

const char *access_name(enum access r)
{
	return (unsigned)r < sizeof access_names / sizeof *access_names ? access_names[r] : "none";
}

enum access access_parse(const char *name)
{
	for (unsigned i = ACCESS_READ; i < sizeof access_names / sizeof *access_names; i++)
		if (!strcmp(name, access_names[i]))
			return (enum access)i;
	return ACCESS_NONE;
}

int access_allows(enum access have, enum access needs)
{
	return have >= needs;
}
