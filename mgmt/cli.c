/* mgmt/cli.c — see cli.h. */
#include "mgmt/cli.h"

#include <stdarg.h>
#include <stdio.h>

/* "ldapfectl: " and the message, no newline. */
static void vmsg(const char *fmt, va_list ap)
{
	fputs("ldapfectl: ", stderr);
	vfprintf(stderr, fmt, ap);
}

void lfe_cli_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int lfe_cli_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return LFE_EXIT_FAIL;
}

int lfe_cli_usage(const char *usage, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nusage: ldapfectl %s\n", usage);
	return LFE_EXIT_USAGE;
}

int lfe_cli_fill(char *err, size_t errlen, int rc, const char *fmt, ...)
{
	va_list ap;

	if (errlen == 0)
		return rc;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return rc;
}
