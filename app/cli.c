/* nanobench CLI: the helpers every subcommand shares (cli.h): flag matching, one-line
 * errors (recorded as the run's error), --json output, the positional model, random:SEED. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "cli.h"

int cli_opt(int argc, char **argv, int *i, const char *name, const char **val)
{
    const char *a = argv[*i];
    size_t n = strlen(name);
    if (strncmp(a, name, n) != 0)
        return 0;
    if (a[n] == '=') {
        *val = a + n + 1;
        return 1;
    }
    if (a[n] != 0)
        return 0;
    if (*i + 1 >= argc)
        return -1;
    *val = argv[++*i];
    return 1;
}


int cli_error(const nb_status *st)
{
    fprintf(stderr, "nanobench: %s\n", st->msg);
    snprintf(g_rec.last_error, sizeof g_rec.last_error, "%s", st->msg);
    return nb_exit_code(st->code);
}

char *cli_plain(char *s)
{
    for (char *c = s; *c; c++)
        if ((unsigned char)*c < 32 || *c == 127)
            *c = '?';
    return s;
}

int cli_fail(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    rec_error(fmt, ap);
    va_end(ap);
    for (char *p = g_rec.last_error; *p; p++) /* one line, whatever a name held */
        if ((unsigned char)*p < 0x20)
            *p = '?';
    fprintf(stderr, "nanobench: %s\n", g_rec.last_error);
    return status;
}


int cli_json_out(const char *cmd, json_t *o)
{
    /* data, past the terminal filter (app/term.c): jansson writes every control character
       of a name as \uXXXX, and ENSURE_ASCII the C1 ones too, so none reaches a terminal */
    int r = o && !fflush(stdout) ? json_dumpfd(o, STDOUT_FILENO, JSON_INDENT(2) |
                                                JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII)
                                 : -1;
    json_decref(o);
    if (r || fputc('\n', stdout) == EOF || fflush(stdout) || ferror(stdout))
        return cli_fail(2, "%s --json: cannot write to standard output: %s", cmd,
                        errno ? strerror(errno) : "out of memory");
    return 0;
}

int cli_random_seed(const char *spec, const char *file, uint32_t *seed)
{
    if (strcmp(file, "random") != 0 && strncmp(file, "random:", 7) != 0)
        return -1;
    *seed = 0;
    if (file[6] != ':')
        return 0;
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(file + 7, &end, 10);
    if (!end || *end || end == file + 7 || file[7] < '0' || file[7] > '9' || errno ||
        v > UINT32_MAX)
        return cli_fail(2, "--input %s: the seed must be an integer from 0 to 4294967295 "
                           "(random:SEED)", spec);
    *seed = (uint32_t)v;
    return 0;
}

int cli_model_arg(const char *cmd, const char *arg, const char **model)
{
    if (arg[0] == '-' && arg[1])
        return cli_usage_error(cmd, "unknown option '%s'", arg);
    if (*model)
        return cli_usage_error(cmd, "more than one model given ('%s')", arg);
    *model = arg;
    return 0;
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "nanobench %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, " (see 'nanobench %s --help')\n", cmd);
    return 2;
}
