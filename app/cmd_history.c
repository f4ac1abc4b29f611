/* nanobench history: browse, compare, export and remove recorded runs (include/nb/db.h). */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "cli.h"

static void help(void)
{
    printf("usage: nanobench history [list] [--kind K] [--model PATH|SHA] [--since DATE] [--limit N]\n"
           "       nanobench history show RUN\n"
           "       nanobench history diff RUN_A RUN_B\n"
           "       nanobench history export [--format csv|json] [--out FILE] [--layers] [filters]\n"
           "       nanobench history rm RUN [--yes]\n"
           "Every info/infer (and later estimate, calibrate, compile, run, compare) is recorded\n"
           "in the run database (--db PATH, NANOBENCH_DB, or ~/.local/share/nanobench/runs.db).\n"
           "list: newest first (--limit defaults to 50; 0 for all). show: parameters, metrics,\n"
           "per-layer results, artifacts and lineage. diff: parameters and metrics side by side\n"
           "and per-layer metric deltas (B - A). export: CSV (RFC 4180, one row per run, a\n"
           "column per metric; --layers: one row per layer) or JSON (runs with their metrics,\n"
           "layers and artifacts) to stdout or --out FILE. rm: deletes the run's rows, never\n"
           "its files; asks unless --yes. DATE: YYYY-MM-DD or YYYY-MM-DDTHH:MM[:SS], UTC.\n");
}

static int parse_run_id(const char *s, int64_t *id)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v <= 0)
        return cli_fail(2, "history: '%s' is not a run id (see 'nanobench history')", s);
    *id = v;
    return 0;
}

/* Parses the filter flags at argv[*i]; returns 1 when one was taken, 0 when argv[*i] is
 * something else, 2 after a usage error. */
static int filter_opt(int argc, char **argv, int *i, nb_run_filter *f, const char *sub)
{
    const char *v;
    int r;
    if ((r = cli_opt(argc, argv, i, "--kind", &v))) {
        if (r < 0)
            return cli_usage_error(sub, "--kind needs a value");
        f->kind = v;
        return 1;
    }
    if ((r = cli_opt(argc, argv, i, "--model", &v))) {
        if (r < 0)
            return cli_usage_error(sub, "--model needs a path or a SHA-256 prefix");
        f->model = v;
        return 1;
    }
    if ((r = cli_opt(argc, argv, i, "--since", &v))) {
        if (r < 0)
            return cli_usage_error(sub, "--since needs a date");
        f->since = v;
        return 1;
    }
    if ((r = cli_opt(argc, argv, i, "--limit", &v))) {
        char *end;
        long n = r > 0 && *v ? strtol(v, &end, 10) : -1;
        if (r < 0 || n < 0 || *end || n > 1000000000)
            return cli_usage_error(sub, "--limit needs a count (0: all)");
        f->limit = (int)n;
        return 1;
    }
    return 0;
}

static void fmt_wall(double ms, char *buf, size_t len)
{
    if (isnan(ms))
        snprintf(buf, len, "-");
    else if (ms < 1000)
        snprintf(buf, len, "%.0f ms", ms);
    else
        snprintf(buf, len, "%.2f s", ms / 1000);
}

/* A metric as people read it: integers exactly (model bytes, cycles), others to 6
 * significant digits, '-' for a missing value. */
static const char *fmt_value(double v, char *buf, size_t len)
{
    if (isnan(v))
        snprintf(buf, len, "-");
    else if (v == floor(v) && fabs(v) < 1e15)
        snprintf(buf, len, "%.0f", v);
    else
        snprintf(buf, len, "%.6g", v);
    return buf;
}

static const char *base_name(const char *p)
{
    const char *s = p ? strrchr(p, '/') : NULL;
    return s ? s + 1 : (p ? p : "-");
}

static int open_db(nb_db **db)
{
    nb_status st = {0};
    /* a database named by --db that is not there: said, not made (history only reads it,
       or removes from it) */
    if (g_rec.db_path && access(g_rec.db_path, F_OK) != 0)
        return cli_fail(2, "%s: no run database there (a recorded run makes it)", g_rec.db_path);
    if (nb_db_open(g_rec.db_path, db, &st))
        return cli_error(&st);
    return 0;
}

static int cmd_list(nb_db *db, int argc, char **argv)
{
    nb_run_filter f = {.limit = 50};
    for (int i = 1; i < argc; i++) {
        int r = filter_opt(argc, argv, &i, &f, "history");
        if (r == 2)
            return 2;
        if (!r)
            return cli_usage_error("history", "unknown option '%s'", argv[i]);
    }
    nb_status st = {0};
    nb_run_row *rows;
    int n, limit = f.limit;
    if (limit > 0)
        f.limit = limit + 1; /* one more tells whether the list was cut */
    if (nb_db_list(db, &f, &rows, &n, &st))
        return cli_error(&st);
    bool cut = limit > 0 && n > limit;
    if (cut)
        n = limit;
    if (n == 0) {
        printf("no runs recorded%s in %s\n", f.kind || f.model || f.since ? " that match" : "",
               nb_db_path(db));
        return 0;
    }
    printf("%6s  %-9s  %-11s  %-23s  %9s  %6s  %s\n", "run", "kind", "status", "started (UTC)",
           "wall", "parent", "model");
    for (int i = 0; i < n; i++) {
        const nb_run_row *r = &rows[i];
        char wall[32], parent[24] = "-";
        fmt_wall(r->wall_ms, wall, sizeof wall);
        if (r->parent_id)
            snprintf(parent, sizeof parent, "%lld", (long long)r->parent_id);
        printf("%6lld  %-9s  %-11s  %-23s  %9s  %6s  ", (long long)r->id, r->kind, r->status,
               r->started, wall, parent);
        nb_put_escaped(stdout, base_name(r->model_path));
        if ((!strcmp(r->status, "error") || !strcmp(r->status, "interrupted")) && r->error) {
            printf("  (");
            nb_put_escaped(stdout, r->error);
            printf(")");
        }
        printf("\n");
    }
    if (cut)
        printf("(the newest %d; --limit 0 lists all)\n", n);
    nb_run_rows_free(rows, cut ? n + 1 : n);
    return 0;
}

static void print_ids(const char *what, const int64_t *ids, int n)
{
    printf("%-10s ", what);
    if (n == 0)
        printf("-");
    for (int i = 0; i < n && i < 50; i++)
        printf("%s%lld", i ? ", " : "", (long long)ids[i]);
    if (n > 50)
        printf(" and %d more", n - 50);
    printf("\n");
}

static int cmd_show(nb_db *db, int argc, char **argv)
{
    if (argc != 2)
        return cli_usage_error("history", "show needs one run id");
    int64_t id;
    if (parse_run_id(argv[1], &id))
        return 2;
    nb_status st = {0};
    nb_run_row r;
    if (nb_db_get(db, id, &r, &st))
        return cli_error(&st);
    char wall[32];
    fmt_wall(r.wall_ms, wall, sizeof wall);
    printf("run        %lld\nkind       %s\nstatus     %s\n", (long long)r.id, r.kind, r.status);
    if (r.error) {
        printf("error      ");
        nb_put_escaped(stdout, r.error);
        printf("\n");
    }
    printf("started    %s\nfinished   %s\nwall       %s\n", r.started,
           r.finished[0] ? r.finished : "-", wall);
    printf("model      ");
    nb_put_escaped(stdout, r.model_path ? r.model_path : "-");
    printf("\nsha256     %s\n", r.model_sha256 ? r.model_sha256 : "-");
    printf("recorded   nanobench %s on %s, pid %lld\n", r.version ? r.version : "?",
           r.host ? r.host : "?", (long long)r.pid);
    int64_t *up = NULL, *down = NULL;
    int nu = 0, nd = 0;
    int rc = 0;
    if (nb_db_lineage(db, id, &up, &nu, &down, &nd, &st)) {
        rc = cli_error(&st);
        goto out;
    }
    print_ids("ancestors", up, nu);
    print_ids("descendants", down, nd);
    for (int s = 0; s < 2; s++) { /* each run of the lineage on a line */
        printf("lineage %s%s\n", s ? "down (children first)" : "up (parent first)",
               (s ? nd : nu) ? "" : ": none");
        for (int i = 0; i < (s ? nd : nu); i++) {
            nb_run_row lr;
            if (!nb_db_get(db, s ? down[i] : up[i], &lr, &st)) {
                printf("  %-6lld %-10s %-8s ", (long long)lr.id, lr.kind, lr.status);
                nb_put_escaped(stdout, base_name(lr.model_path));
                printf("\n");
                nb_run_row_clear(&lr);
            }
        }
    }
    json_error_t je;
    json_t *p = r.params ? json_loads(r.params, 0, &je) : NULL;
    printf("parameters\n");
    if (p) {
        const char *k;
        json_t *v;
        json_object_foreach(p, k, v) {
            char *s = json_is_string(v) ? strdup(json_string_value(v))
                                        : json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
            printf("  %-20s ", k);
            nb_put_escaped(stdout, s ? s : "?");
            printf("\n");
            free(s);
        }
        json_decref(p);
    }
    nb_metric_row *m;
    int nm;
    if (nb_db_metrics(db, id, &m, &nm, &st)) {
        rc = cli_error(&st);
        goto out;
    }
    printf("metrics\n");
    char vb[64];
    for (int i = 0; i < nm; i++)
        printf("  %-28s %14s %s\n", m[i].name, fmt_value(m[i].value, vb, sizeof vb),
               m[i].unit);
    nb_metric_rows_free(m, nm);
    nb_layer_row *l;
    int nl;
    if (nb_db_layers(db, id, &l, &nl, &st)) {
        rc = cli_error(&st);
        goto out;
    }
    if (nl) {
        printf("layers (%d)\n", nl);
        for (int i = 0; i < nl; i++) {
            printf("  %-32s %-14s", l[i].layer, l[i].op_type);
            for (int k = 0; k < l[i].n; k++)
                printf("  %s=%s", l[i].m[k].name, fmt_value(l[i].m[k].value, vb, sizeof vb));
            printf("\n");
        }
    }
    nb_layer_rows_free(l, nl);
    nb_artifact_row *a;
    int na;
    if (nb_db_artifacts(db, id, &a, &na, &st)) {
        rc = cli_error(&st);
        goto out;
    }
    printf("artifacts (%d)\n", na);
    for (int i = 0; i < na; i++) {
        if (a[i].bytes < 0) /* a folder */
            printf("  %-9s %12s  %-12s  ", a[i].role, "folder", "-");
        else
            printf("  %-9s %10lld B  %.12s  ", a[i].role, (long long)a[i].bytes,
                   a[i].sha256 ? a[i].sha256 : "-");
        nb_put_escaped(stdout, a[i].path);
        printf("\n");
    }
    nb_artifact_rows_free(a, na);
out:
    free(up);
    free(down);
    nb_run_row_clear(&r);
    return rc;
}

static int cmd_diff(nb_db *db, int argc, char **argv)
{
    if (argc != 3)
        return cli_usage_error("history", "diff needs two run ids");
    int64_t id[2];
    if (parse_run_id(argv[1], &id[0]) || parse_run_id(argv[2], &id[1]))
        return 2;
    nb_status st = {0};
    nb_run_diff d;
    if (nb_db_diff(db, id[0], id[1], &d, &st))
        return cli_error(&st);
    const nb_run_row *r = d.run;
    printf("%-28s %-30s %-30s\n", "", "A", "B");
    char a[64], b[64];
    snprintf(a, sizeof a, "run %lld (%s, %s)", (long long)r[0].id, r[0].kind, r[0].status);
    snprintf(b, sizeof b, "run %lld (%s, %s)", (long long)r[1].id, r[1].kind, r[1].status);
    printf("%-28s %-30s %-30s\n", "", a, b);
    printf("%-28s %-30s %-30s%s\n", "model", base_name(r[0].model_path),
           base_name(r[1].model_path),
           (r[0].model_sha256 && r[1].model_sha256 && strcmp(r[0].model_sha256, r[1].model_sha256))
               ? "  (different files)" : "");
    char wa[32], wb[32];
    fmt_wall(r[0].wall_ms, wa, sizeof wa);
    fmt_wall(r[1].wall_ms, wb, sizeof wb);
    printf("%-28s %-30s %-30s\n", "wall", wa, wb);
    printf("%-28s %-30.12s %-30.12s\n", "model sha256", r[0].model_sha256 ? r[0].model_sha256 : "-",
           r[1].model_sha256 ? r[1].model_sha256 : "-");
    printf("parameters\n"); /* the union of keys, '*' where they differ */
    for (int i = 0; i < d.n_params; i++)
        printf("%c %-26s %-30s %-30s\n", d.params[i].same ? ' ' : '*', d.params[i].key,
               d.params[i].a ? d.params[i].a : "-", d.params[i].b ? d.params[i].b : "-");
    printf("metrics%-21s %-14s %-14s %s\n", "", "A", "B", "B - A");
    for (int i = 0; i < d.n_metrics; i++) {
        const nb_diff_metric *m = &d.metrics[i];
        char ta[64], tb[64], td[64];
        printf("  %-26s %-14s %-14s %s %s\n", m->name, fmt_value(m->a, ta, sizeof ta),
               fmt_value(m->b, tb, sizeof tb), fmt_value(m->b - m->a, td, sizeof td), m->unit);
    }
    if (d.layers_a && d.layers_b)
        printf("layers: metric A -> B (B - A), matched by layer name\n");
    else if (d.layers_a || d.layers_b)
        printf("layers: only run %s has per-layer results\n", d.layers_a ? "A" : "B");
    for (int i = 0; i < d.n_layers; i++) {
        const nb_diff_layer *l = &d.layers[i];
        printf("  %-32s", l->layer);
        if (l->in != 3) {
            printf("  only in %s\n", l->in == 1 ? "A" : "B");
            continue;
        }
        for (int k = 0; k < l->n; k++)
            printf("  %s %.6g -> %.6g (%+.3g)", l->m[k].name, l->m[k].a, l->m[k].b,
                   l->m[k].b - l->m[k].a);
        printf("\n");
    }
    nb_run_diff_free(&d);
    return 0;
}

static int cmd_export(nb_db *db, int argc, char **argv)
{
    nb_run_filter f = {0};
    const char *format = "csv", *outp = NULL;
    bool layers = false;
    for (int i = 1; i < argc; i++) {
        const char *v;
        int r = filter_opt(argc, argv, &i, &f, "history");
        if (r == 2)
            return 2;
        if (r)
            continue;
        if ((r = cli_opt(argc, argv, &i, "--format", &v))) {
            if (r < 0 || (strcmp(v, "csv") && strcmp(v, "json")))
                return cli_usage_error("history", "--format is csv or json");
            format = v;
        } else if ((r = cli_opt(argc, argv, &i, "--out", &v))) {
            if (r < 0 || !*v)
                return cli_usage_error("history", "--out needs a file");
            outp = v;
        } else if (!strcmp(argv[i], "--layers")) {
            layers = true;
        } else {
            return cli_usage_error("history", "unknown option '%s'", argv[i]);
        }
    }
    if (layers && strcmp(format, "csv") != 0)
        layers = false; /* JSON always has the layers: --layers asks for nothing more */
    nb_status st = {0};
    if (outp) /* written whole or not at all, never over the database or a device */
        return nb_db_export_file(db, &f, format, layers, outp, &st) ? cli_error(&st) : 0;
    /* into memory first: a failed export prints nothing */
    char *buf = NULL;
    size_t len = 0;
    FILE *mf = open_memstream(&buf, &len);
    if (!mf)
        return cli_fail(1, "out of memory");
    nb_err e = !strcmp(format, "csv") ? nb_db_export_csv(db, &f, layers, mf, &st)
                                      : nb_db_export_json(db, &f, mf, &st);
    fclose(mf);
    int rc = 0;
    if (e)
        rc = cli_error(&st);
    else if (fwrite(buf, 1, len, stdout) != len || fflush(stdout) != 0 || ferror(stdout))
        rc = cli_fail(2, "history export: cannot write to standard output: %s", strerror(errno));
    free(buf);
    return rc;
}

static int cmd_rm(nb_db *db, int argc, char **argv)
{
    const char *id_s = NULL;
    bool yes = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--yes") || !strcmp(argv[i], "-y"))
            yes = true;
        else if (argv[i][0] == '-')
            return cli_usage_error("history", "unknown option '%s'", argv[i]);
        else if (!id_s)
            id_s = argv[i];
        else
            return cli_usage_error("history", "rm takes one run id");
    }
    if (!id_s)
        return cli_usage_error("history", "rm needs a run id");
    int64_t id;
    if (parse_run_id(id_s, &id))
        return 2;
    nb_status st = {0};
    nb_run_row r;
    if (nb_db_get(db, id, &r, &st))
        return cli_error(&st);
    int rc = 0;
    if (!yes) {
        if (!isatty(STDIN_FILENO)) {
            rc = cli_fail(2, "history rm %lld: not asked on a terminal; add --yes", (long long)id);
            goto out;
        }
        printf("delete run %lld (%s of %s, %s)? its files stay. [y/N] ", (long long)id, r.kind,
               base_name(r.model_path), r.started);
        fflush(stdout);
        char ans[16] = "";
        if (!fgets(ans, sizeof ans, stdin) || (ans[0] != 'y' && ans[0] != 'Y')) {
            printf("kept\n");
            goto out;
        }
    }
    int64_t *up = NULL, *down = NULL;
    int nu = 0, nd = 0;
    nb_db_lineage(db, id, &up, &nu, &down, &nd, NULL);
    int children = 0;
    for (int i = 0; i < nd; i++) {
        nb_run_row c;
        if (nb_db_get(db, down[i], &c, NULL) == NB_OK) {
            children += c.parent_id == id;
            nb_run_row_clear(&c);
        }
    }
    free(up);
    free(down);
    if (nb_db_remove(db, id, &st))
        rc = cli_error(&st);
    else if (children)
        printf("run %lld deleted (its files were not touched); its %d child run%s keep%s "
               "their rows, now without a parent\n", (long long)id, children,
               children == 1 ? "" : "s", children == 1 ? "s" : "");
    else
        printf("run %lld deleted (its files were not touched)\n", (long long)id);
out:
    nb_run_row_clear(&r);
    return rc;
}

int cmd_history(int argc, char **argv)
{
    const char *sub = argc > 1 ? argv[1] : "list";
    if (!strcmp(sub, "-h") || !strcmp(sub, "--help")) {
        help();
        return 0;
    }
    int (*fn)(nb_db *, int, char **) = NULL;
    int skip = 1;
    if (!strcmp(sub, "list"))
        fn = cmd_list;
    else if (!strcmp(sub, "show"))
        fn = cmd_show;
    else if (!strcmp(sub, "diff"))
        fn = cmd_diff;
    else if (!strcmp(sub, "export"))
        fn = cmd_export;
    else if (!strcmp(sub, "rm"))
        fn = cmd_rm;
    else if (sub[0] == '-') {
        fn = cmd_list; /* filters without 'list' */
        skip = 0;
    } else
        return cli_usage_error("history", "unknown subcommand '%s'", sub);
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            help();
            return 0;
        }
    nb_db *db;
    int rc = open_db(&db);
    if (rc)
        return rc;
    rc = fn(db, argc - skip, argv + skip);
    nb_db_close(db);
    return rc;
}
