/* nanobench CLI: shared helpers of the subcommands. */
#ifndef NB_APP_CLI_H
#define NB_APP_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "nb/ref.h"

/* Matches argv[*i] against "--name VALUE" or "--name=VALUE"; on a match sets *val, advances
 * *i past the value and returns 1; returns -1 when the value is missing, 0 when argv[*i] is
 * another option. */
int cli_opt(int argc, char **argv, int *i, const char *name, const char **val);
/* Prints "nanobench: <msg>" to stderr and returns the exit status of st. */
int cli_error(const nb_status *st);
/* Prints a usage error (exit status 2). */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Writes s to f with tab, newline, carriage return and backslash escaped (\t \n \r \\):
 * a tensor name from a model stays on one line and in one tab-separated field. */
void cli_put_escaped(FILE *f, const char *s);

int cmd_info(int argc, char **argv);
int cmd_infer(int argc, char **argv);

#endif
