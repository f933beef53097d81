/*
 * What every TOE application shares besides the socket library: its name in messages, a failed
 * call reported with errno's reason, and command-line numbers checked.
 */
#ifndef VTOE_APP_ARGS_H
#define VTOE_APP_ARGS_H

/* The program's name, as messages begin ("toe_stream: connect: Connection refused"). */
extern const char *app_name;

/* Prints "NAME: WHAT: strerror(errno)" on stderr; returns 1, the exit status of a failed call. */
int app_fail(const char *what);

/* TEXT as a number (decimal, 0x hex or 0 octal); exits 2 naming WHAT when it is not one, or
 * when it is 0 and POSITIVE is set. */
unsigned long app_number(const char *text, const char *what, int positive);

#endif
