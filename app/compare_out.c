/* nanobench compare: the pieces of its output shared by its subcommands (compare_out.h). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"
#include "compare_out.h"
#include "nb/accucmp.h"

void shape_str(const nb_dump_tensor *t, char *buf, size_t len)
{
    int64_t d[6];
    for (int i = 0; i < t->rank; i++)
        d[i] = t->dims[i];
    nb_shape_str(t->rank, d, 'x', buf, len);
}

/* ---- file_compare ---- */
/* a name as one line of plain text (two buffers: two names in one printf) */
const char *plain(const char *s)
{
    static char buf[2][256];
    static int at;
    char *b = buf[at++ & 1];
    snprintf(b, sizeof buf[0], "%s", s);
    return cli_plain(b);
}

/* SQNR for the table: +-999 for +-infinity, as in the CSV */
double sqnr_shown(double v) { return isinf(v) ? (v > 0 ? 999.0 : -999.0) : v; }

int compare_flags(int argc, char **argv, const char *sub, const compare_flag *f, int n,
                  bool *json)
{
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--json")) {
            *json = true;
            continue;
        }
        int k = 0, r = 0;
        const char *v;
        for (; k < n; k++)
            if ((r = cli_opt(argc, argv, &i, f[k].flag, &v)) ||
                (f[k].alt && (r = cli_opt(argc, argv, &i, f[k].alt, &v))))
                break;
        if (k == n)
            return cli_usage_error("compare", "%s: unknown argument '%s'", sub, argv[i]);
        if (r < 0 || !*v)
            return cli_usage_error("compare", "%s", f[k].need);
        *f[k].dst = v;
    }
    return 0;
}
