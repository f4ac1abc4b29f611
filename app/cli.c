/* nanobench CLI: the helpers every subcommand shares (cli.h): flag matching, one-line
 * errors (recorded as the run's error), --json output, the positional model, random:SEED. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
#include <sys/stat.h>
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

/* Levenshtein distance of a and b (each up to 255 bytes; longer: 255) */
static int edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 255 || lb > 255)
        return 255;
    int row[256];
    for (size_t j = 0; j <= lb; j++)
        row[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        int diag = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int up = row[j], best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            diag = up;
            row[j] = best;
        }
    }
    return row[lb];
}

bool cli_did_you_mean(const char *path, char *buf, size_t len)
{
    char dir[4096];
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    if (!*base || strlen(path) >= sizeof dir)
        return false;
    if (slash)
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    else
        snprintf(dir, sizeof dir, ".");
    DIR *d = opendir(*dir ? dir : "/");
    if (!d)
        return false;
    int best = (int)strlen(base) / 4; /* a typo or two, not another name */
    if (best > 2)
        best = 2;
    if (best < 1)
        best = 1;
    bool found = false;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' && base[0] != '.')
            continue;
        int k = edit_distance(base, e->d_name);
        if (k > 0 && k <= best) {
            best = k;
            snprintf(buf, len, "%s%s%s", slash ? dir : "", slash ? "/" : "", e->d_name);
            found = true;
        }
    }
    closedir(d);
    return found;
}

int cli_model_arg(const char *cmd, const char *arg, const char **model)
{
    if (arg[0] == '-' && arg[1])
        return cli_usage_error(cmd, "unknown option '%s'", arg);
    if (*model)
        return cli_usage_error(cmd, "more than one model given ('%s')", arg);
    /* a path that is not there but one typo away from a file that is: said at once */
    struct stat sb;
    char near[4200];
    if (stat(arg, &sb) && errno == ENOENT && cli_did_you_mean(arg, near, sizeof near))
        return cli_usage_error(cmd, "%s: no such file (did you mean '%s'?)", arg, near);
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
