#include "app_args.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int app_fail(const char *what)
{
	fprintf(stderr, "%s: %s: %s\n", app_name, what, strerror(errno));
	return 1;
}

unsigned long app_number(const char *text, const char *what, int positive)
{
	char *end;
	unsigned long v = strtoul(text, &end, 0);

	if (*text == '\0' || *end != '\0' || (positive && v == 0)) {
		fprintf(stderr, "%s: %s %s is not a%s number\n", app_name, what, text,
			positive ? " positive" : "");
		exit(2);
	}
	return v;
}
