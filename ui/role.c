#include "autoconfig.h"
#include "role.h"

#include <string.h>

static const char *const names[ROLE_N] = {
#define ROLE_NAME(id, name) name,
	ROLE_INFO(ROLE_NAME)
#undef ROLE_NAME
};

const char *role_name(enum role r)
{
	return (unsigned)r < ROLE_N ? names[r] : "normal";
}

int role_parse(const char *name)
{
	for (int i = 0; i < ROLE_N; i++)
		if (!strcmp(names[i], name))
			return i;
	return -1;
}
