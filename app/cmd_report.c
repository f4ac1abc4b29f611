/* nanobench report: the HTML page of one bring-up, or two side by side (nb/report.h). A RUN is
 * a bringup run of the history, any run of its lineage (a step it ran, e.g. its compare), or
 * a bringup folder. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "cli.h"
#include "nb/db.h"
#include "nb/report.h"

static void usage(FILE *f)
{
    fputs("usage: nanobench report RUN [RUN2] -o FILE.html [--pipeline CHECK.json]\n"
          "       nanobench report RUN --text\n"
          "Writes one self-contained HTML page (no network; it opens from disk) about a\n"
          "bring-up: the model and its op histogram, the five estimate items with their parts\n"
          "and the arena map, the calibration per layer, the NPU's cycles per task, fp16\n"
          "saturation and its fix, the network outputs against float, and every layer's\n"
          "cosine and SQNR along the network with the thresholds, the first layer over\n"
          "threshold and the largest SQNR drop. With RUN2, both on the same axes and a table\n"
          "of what changed (parameters, sizes, cycles, metrics). RUN is a bringup run id of\n"
          "the history (nanobench history list --kind bringup), a run that bring-up ran\n"
          "(its compare, say), or a bringup folder (its --out). Plots need gnuplot\n"
          "(apt-get install gnuplot-nox); without it the tables stand alone. Sections whose\n"
          "files are gone say so. Exit status: 0, or 2 for a bad argument, an unknown run,\n"
          "or a file that cannot be written. --pipeline adds the pipeline check's per-clip\n"
          "table (share/examples/openwakeword/run.sh writes it: float and NPU peak scores).\n"
          "--text prints the bring-up's one-screen summary again, as bringup printed it, from\n"
          "the summary.json in its folder.\n", f);
}

typedef struct resolved {
    char dir[4200], label[64];
    long long run_id; /* the bringup's id when given by one, else 0 (a folder) */
    bool no_dir; /* a recorded bringup without its "summary" artifact */
    json_t *params, *metrics;
} resolved;

/* A bringup's folder from its "summary" artifact; false when it has none. */
static bool folder_of(nb_db *db, int64_t id, char *dir, size_t len)
{
    char tmp[4200];
    if (!nb_db_artifact_path(db, id, "summary", false, tmp, sizeof tmp))
        return false;
    snprintf(dir, len, "%s", dirname(tmp));
    return true;
}

static int resolve(nb_db **db, const char *arg, resolved *r)
{
    memset(r, 0, sizeof *r);
    struct stat sb;
    char *end;
    long long id = strtoll(arg, &end, 10);
    if (*end || id <= 0) { /* a folder */
        if (stat(arg, &sb) || !S_ISDIR(sb.st_mode))
            return cli_usage_error("report", "'%s' is neither a run id nor a bringup folder", arg);
        snprintf(r->dir, sizeof r->dir, "%s", arg);
        snprintf(r->label, sizeof r->label, "%.60s", arg);
        return 0;
    }
    nb_status st = {0};
    if (!*db && nb_db_open(g_rec.db_path, db, &st))
        return cli_error(&st);
    int64_t bid = 0; /* the run itself, or the bringup that ran it */
    if (nb_db_ancestor_of_kind(*db, id, "bringup", &bid, &st))
        return cli_fail(2, "report: %s (see 'nanobench history list --kind bringup')", st.msg);
    if (!bid)
        return cli_fail(2, "report: run %lld is not a bringup and no bringup ran it", id);
    nb_run_row row;
    memset(&row, 0, sizeof row);
    if (nb_db_get(*db, bid, &row, &st))
        return cli_error(&st);
    json_error_t je;
    r->params = row.params ? json_loads(row.params, 0, &je) : NULL;
    if (!json_is_object(r->params)) {
        json_decref(r->params);
        r->params = NULL;
    }
    nb_run_row_clear(&row);
    nb_metric_row *mr = NULL;
    int nm = 0;
    if (!nb_db_metrics(*db, bid, &mr, &nm, &st)) {
        r->metrics = json_object();
        for (int i = 0; i < nm; i++)
            json_object_set_new(r->metrics, mr[i].name, nb_json_num(mr[i].value));
        nb_metric_rows_free(mr, nm);
    }
    snprintf(r->label, sizeof r->label, "bringup %lld", (long long)bid);
    r->run_id = (long long)bid;
    if ((r->no_dir = !folder_of(*db, bid, r->dir, sizeof r->dir)))
        snprintf(r->dir, sizeof r->dir, "(bringup %lld recorded no folder)", (long long)bid);
    return 0;
}

int cmd_report(int argc, char **argv)
{
    const char *out = NULL, *runs[2] = {NULL, NULL}, *pipe = NULL;
    int n = 0;
    bool text = false;
    for (int i = 1; i < argc; i++) {
        const char *v;
        int r;
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            return 0;
        } else if ((r = cli_opt(argc, argv, &i, "-o", &v)) ||
                   (r = cli_opt(argc, argv, &i, "--output", &v))) {
            if (r < 0 || !*v)
                return cli_usage_error("report", "-o needs a file name (FILE.html)");
            out = v;
        } else if ((r = cli_opt(argc, argv, &i, "--pipeline", &v))) {
            if (r < 0 || !*v)
                return cli_usage_error("report", "--pipeline needs the pipeline check's JSON file");
            pipe = v;
        } else if (!strcmp(argv[i], "--text")) {
            text = true;
        } else if (argv[i][0] == '-') {
            return cli_usage_error("report", "unknown option '%s'", argv[i]);
        } else if (n < 2) {
            runs[n++] = argv[i];
        } else {
            return cli_usage_error("report", "at most two runs (RUN RUN2)");
        }
    }
    if (!n)
        return cli_usage_error("report", "a RUN is required (a bringup run id or folder)");
    if (text && (n > 1 || out || pipe))
        return cli_usage_error("report", "--text takes one RUN, without -o or --pipeline");
    if (!out && !text)
        return cli_usage_error("report", "-o FILE.html is required");
    nb_db *db = NULL;
    resolved rs[2];
    memset(rs, 0, sizeof rs);
    int rc = 0;
    for (int k = 0; k < n && !rc; k++)
        rc = resolve(&db, runs[k], &rs[k]);
    for (int k = 0; k < n && !rc; k++)
        if (rs[k].no_dir) /* a page of nothing (paths "(bringup N recorded no folder)/log/...")
                             is not written: a new user's find */
            rc = cli_fail(2, "report: %s ended before its summary (failed or interrupted: no "
                          "summary.json to show); its steps: nanobench history show %lld",
                          rs[k].label, rs[k].run_id);
    if (rc) {
        /* refused above */
    } else if (!rc && text) { /* the bring-up's own text, from its summary.json */
        json_t *sum = NULL;
        nb_status st = {0};
        long long by = 0;
        if (nb_report_load_summary(rs[0].dir, &sum, &st)) {
            rc = cli_fail(2, "report: %s", st.msg);
        } else if (rs[0].run_id && (by = nb_report_summary_run(sum)) != rs[0].run_id) {
            /* a later bringup wrote into the folder: its text is not this run's */
            char who[64];
            snprintf(who, sizeof who, by ? "bringup %lld's" : "an unrecorded bringup's", by);
            rc = cli_fail(2, "report: %s: %s/summary.json is %s now (a later bringup replaced "
                          "it); this run's numbers: nanobench history show %lld", rs[0].label,
                          rs[0].dir, who, rs[0].run_id);
        } else {
            nb_report_text(sum, stdout);
            if (fflush(stdout) != 0 || ferror(stdout))
                rc = cli_fail(2, "report --text: cannot write to standard output: %s",
                              strerror(errno));
        }
        json_decref(sum);
    } else if (!rc) {
        nb_report_src a = {rs[0].dir, rs[0].label, rs[0].run_id, rs[0].params, rs[0].metrics,
                           NULL},
                      b = {rs[1].dir, rs[1].label, rs[1].run_id, rs[1].params, rs[1].metrics,
                           NULL};
        nb_report_opts o = {&a, n > 1 ? &b : NULL, pipe, out, NULL};
        nb_status st;
        char part[4400], scratch[4400];
        nb_report_tmp_paths(out, part, sizeof part, scratch, sizeof scratch);
        cli_cleanup_add(part); /* a Ctrl-C leaves neither (app/cleanup.c) */
        cli_cleanup_add(scratch);
        if (nb_report_write(&o, NULL, &st))
            rc = cli_fail(nb_exit_code(st.code), "report: %s", st.msg);
        else
            printf("wrote %s\n", out);
    }
    for (int k = 0; k < 2; k++) {
        json_decref(rs[k].params);
        json_decref(rs[k].metrics);
    }
    if (db)
        nb_db_close(db);
    return rc;
}
