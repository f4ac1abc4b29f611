/* nanobench compare: the vendor's msaccucmp on nanobench's dumps (issue 7, first part).
 *   convert -d DUMP[,DUMP|DIR] [-t npy|bin] [--out DIR]
 *   file_compare -m NPU_DUMP_DIR -g GOLDEN_DUMP_DIR -out DIR [--threshold cos=0.99,...]
 * NPU dumps come from `nanobench run --dump`, golden dumps from `nanobench infer --dump`. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <signal.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"
#include "compare_out.h"
#include "nb/accucmp.h"
#include "nb/sim.h"

static void help(void)
{
    printf("usage: nanobench compare convert -d DUMP_FILE|DIR[,...] [-t npy|bin] [--out DIR]\n"
           "       nanobench compare file_compare -m NPU_DUMP_DIR -g GOLDEN_DUMP_DIR -out DIR\n"
           "                                      [--threshold cos=0.99,red=0.05,kl=0.005,rmse=1,mre=1]\n"
           "                                      [--isolate LAYER --exeom NAME.exeom] [--json]\n"
           "       nanobench compare layer -m NPU_DUMP_DIR -g GOLDEN_DUMP_DIR --layer NAME\n"
           "                               [--bins N] [--threshold ...] [--json]\n"
           "convert writes each tensor of a dump file as <file>.output.<i>.<shape>.npy (NCHW /\n"
           "ND, float32) or .bin. file_compare matches every NPU task output (nanobench run\n"
           "--dump) to the golden tensor of the ONNX node it computes (nanobench infer --dump;\n"
           "a fused task at the last node it covers), computes the vendor's ten metrics plus\n"
           "SQNR (share/doc/metrics.md), writes DIR/result_<timestamp>.csv, prints the table,\n"
           "the verdict and the first layer over threshold with its likely cause. --isolate runs\n"
           "LAYER (a task or an ONNX node) of NAME.exeom on the simulator with the golden input,\n"
           "to tell its own error from the error it inherits. --json prints the verdict, the\n"
           "thresholds and every row as one JSON object instead of the table (the CSV is written\n"
           "all the same).\n"
           "layer shows one layer of that comparison (NAME: an NPU task, or the ONNX node it is\n"
           "compared with or covers): its tasks, metrics, the 10 elements of largest |npu -\n"
           "golden| with their indices, the first 16 elements side by side and a histogram of\n"
           "npu - golden in N bins (default 20); --json gives the same as one object.\n");
}

/* ---- convert ---- */

static int convert(int argc, char **argv)
{
    const char *src = NULL, *type = "npy", *out = NULL;
    for (int i = 2; i < argc; i++) {
        const char *v;
        int r;
        if ((r = cli_opt(argc, argv, &i, "-d", &v)) || (r = cli_opt(argc, argv, &i, "--dump", &v))) {
            if (r < 0)
                return cli_usage_error("compare", "-d needs a dump file or folder");
            src = v;
        } else if ((r = cli_opt(argc, argv, &i, "-t", &v))) {
            if (r < 0 || (strcmp(v, "npy") && strcmp(v, "bin")))
                return cli_usage_error("compare", "-t takes npy or bin");
            type = v;
        } else if ((r = cli_opt(argc, argv, &i, "--out", &v))) {
            if (r < 0)
                return cli_usage_error("compare", "--out needs a folder");
            out = v;
        } else {
            return cli_usage_error("compare", "convert: unknown argument '%s'", argv[i]);
        }
    }
    if (!src)
        return cli_usage_error("compare", "convert needs -d DUMP_FILE");
    nb_status st = {0};
    int written = 0;
    if (nb_dump_convert(src, !strcmp(type, "bin"), out, cli_cleanup_tmp_progress, (void *)out, &written, &st))
        return cli_error(&st);
    printf("%d tensor file(s) written\n", written);
    return 0;
}

/* file_compare's text after the table: the verdict, the first fp16 saturation, the first
 * layer over threshold and the largest SQNR drop with their likely causes, --isolate's */
static void print_verdict(const nb_comparison *cs, const char *iso_layer,
                          const nb_cmp_isolation *iso)
{
    const nb_cmp_row *rows = cs->rows;
    int first_bad = cs->first_bad, worst = cs->worst, worst_prev = cs->worst_prev;
    char cause[400];
    printf("verdict: %s\n", cs->verdict_text);
    if (cs->first_sat >= 0) {
        const nb_cmp_row *s = &rows[cs->first_sat];
        printf("fp16 saturation: first at %s (%s, task %u): %llu value(s) clamped at "
               "65504\n", plain(s->npu->op_name), plain(s->npu->op_type), s->npu->task_id,
               (unsigned long long)(s->npu->saturations ? s->npu->saturations
                                                        : (uint64_t)s->m.sat_x));
    }
    if (first_bad >= 0) {
        const nb_cmp_row *b = &rows[first_bad];
        const char *origin = cs->origin;
        char cosb[96];
        if (b->m.n == 1) /* one value: its cosine is 1 whatever the values */
            snprintf(cosb, sizeof cosb, "one value, %.6g against %.6g", b->m.mean_x,
                     b->m.mean_y);
        else
            snprintf(cosb, sizeof cosb, "cosine %.6f", b->m.cos);
        printf("first layer over threshold: %s (%s, task %u): %s, SQNR %.1f dB; "
               "likely cause: %s; %s\n", plain(b->npu->op_name), plain(b->npu->op_type),
               b->npu->task_id, cosb, b->m.sqnr_db,
               nb_cmp_cause(cs, first_bad, cause, sizeof cause),
               !strcmp(origin, "accumulated")
                   ? "accumulated: the error grew gradually (within 3 dB of the layer "
                     "before, which is within the thresholds) and crosses here"
                   : "introduced here (the layer before is within the thresholds)");
    }
    if (worst >= 0) {
        const nb_cmp_row *w = &rows[worst];
        const nb_cmp_row *in = &rows[worst_prev]; /* the input it reads, worst first */
        char sq[32];
        if (isinf(in->m.sqnr_db) && in->m.sqnr_db > 0)
            snprintf(sq, sizeof sq, "exact");
        else
            snprintf(sq, sizeof sq, "%.1f dB", sqnr_shown(in->m.sqnr_db));
        printf("largest SQNR drop: %s (%s, task %u): %.1f dB from %s at its input ",
               plain(w->npu->op_name), plain(w->npu->op_type), w->npu->task_id,
               sqnr_shown(w->m.sqnr_db), sq);
        printf("'%s' (written by %s); likely cause: %s\n", plain(in->x->original_name),
               plain(in->npu->op_name), nb_cmp_cause(cs, worst, cause, sizeof cause));
    }
    if (iso) {
        printf("isolated %s (tasks %d..%d, golden input): cosine %.6f, SQNR %.1f dB, max abs "
               "%.4g", plain(iso_layer), iso->k0, iso->k1, iso->m.cos, iso->m.sqnr_db,
               iso->m.max_abs);
        if (iso->chain)
            printf("; with the NPU's own input: cosine %.6f, SQNR %.1f dB: %s",
                   iso->chain->m.cos, iso->chain->m.sqnr_db,
                   iso->inherited ? "most of the error is inherited from earlier layers"
                                 : "the error is the layer's own");
        printf("\n");
    }
}

static int file_compare(int argc, char **argv)
{
    const char *mdir = NULL, *gdir = NULL, *out = NULL, *thr = NULL, *iso_layer = NULL,
               *iso_exeom = NULL;
    bool json = false;
    const compare_flag flags[] = {
        {"-m", NULL, "-m needs the NPU dump folder", &mdir},
        {"-g", NULL, "-g needs the golden dump folder", &gdir},
        {"-out", "--out", "-out needs a folder", &out},
        {"--isolate", NULL, "--isolate needs a layer", &iso_layer},
        {"--exeom", NULL, "--exeom needs NAME.exeom", &iso_exeom},
        {"--threshold", NULL, "--threshold needs cos=...,rmse=...", &thr}};
    int frc = compare_flags(argc, argv, "file_compare", flags, 6, &json);
    if (frc)
        return frc;
    if (!mdir || !gdir || !out)
        return cli_usage_error("compare", "file_compare needs -m NPU_DIR -g GOLDEN_DIR -out DIR");
    if (!iso_layer != !iso_exeom)
        return cli_usage_error("compare", "--isolate LAYER goes with --exeom NAME.exeom");
    nb_cmp_thresholds th;
    nb_cmp_thresholds_default(&th);
    nb_status st = {0};
    if (thr && nb_cmp_thresholds_parse(thr, &th, &st))
        return cli_error(&st);
    signal(SIGPIPE, SIG_IGN); /* a closed pipe on the table: the CSV still completes */
    int rc = rec_start("compare", mdir, argc, argv);
    if (rc)
        return rc;
    rec_param("golden", "%s", gdir);
    nb_comparison cs;
    nb_compare_opts co = {.npu_dumps = mdir, .golden_dumps = gdir, .th = th};
    if (nb_compare(&co, &cs, &st))
        return cli_error(&st);
    const nb_cmp_row *rows = cs.rows;
    int nr = cs.nr;
    json_t *jo = NULL;
    nb_cmp_isolation iso = {0};
    bool isolated = false;
    char csv[4096];
    /* --isolate before the CSV: a bad layer name leaves no result file */
    if (iso_layer) {
        if (nb_cmp_isolate(&cs, iso_layer, iso_exeom, &iso, &st)) {
            rc = cli_error(&st);
            goto done;
        }
        isolated = true;
        rec_metric("isolated_sqnr_db", iso.m.sqnr_db, "dB");
        rec_metric("isolated_cosine", iso.m.cos, "");
    }
    if (nb_cmp_csv_claim(out, csv, sizeof csv, &st)) {
        rc = cli_error(&st);
        goto done;
    }
    cli_cleanup_add(csv); /* claimed by this run (O_EXCL): Ctrl-C removes it and its .tmp */
    if (nb_cmp_write_csv(&cs, csv, &st)) {
        remove(csv);
        rc = cli_error(&st);
        goto done;
    }
    cli_cleanup_clear();
    if (!json)
        printf("%5s  %-14s %-40s %9s %10s %8s  %s\n", "index", "op", "NPU task", "cosine",
               "max abs", "SQNR dB", "reason");
    for (int i = 0; i < nr; i++) {
        const nb_cmp_row *r = &rows[i];
        if (!json) {
            char task[41];
            snprintf(task, sizeof task, "%s", r->npu->op_name);
            cli_plain(task); /* one line of plain text per row */
            if (r->compared && r->m.n == 1) /* a cosine of one value is 1 by definition */
                printf("%5d  %-14.14s %-40s %9s %10.4g %8.1f  %s\n", i, r->npu->op_type, task,
                       "1 value", r->m.max_abs, sqnr_shown(r->m.sqnr_db), r->reason);
            else if (r->compared)
                printf("%5d  %-14.14s %-40s %9.6f %10.4g %8.1f  %s\n", i, r->npu->op_type, task,
                       r->m.cos, r->m.max_abs, sqnr_shown(r->m.sqnr_db), r->reason);
            else
                printf("%5d  %-14.14s %-40s %9s %10s %8s  %s\n", i, r->npu->op_type, task, "-",
                       "-", "-", r->reason);
        }
        double vals[4] = {r->m.cos, r->m.max_abs, r->m.sqnr_db, (double)r->npu->saturations};
        const char *names[4] = {"cosine", "max_abs", "sqnr_db", "fp16_saturations"};
        if (r->compared)
            rec_layer(r->npu->op_name, r->npu->op_type, 4, names, vals);
    }
    int n_cmp = cs.n_compared, n_bad = cs.n_over;
    if (!json)
        printf("%d tensors: %d compared, %d over threshold, %d not compared; wrote %s\n", nr,
               n_cmp, n_bad, nr - n_cmp, csv);
    if (n_cmp == 0) {
        rc = cli_fail(2, "%s: no NPU tensor matched a golden one (the dumps of another model or "
                      "input? the golden dumps come from `nanobench infer --dump` on the float "
                      "model)", gdir);
        goto done;
    }
    int first_bad = cs.first_bad, worst = cs.worst;
    if (first_bad >= 0)
        rec_metric("first_bad_task", (double)rows[first_bad].npu->task_id, "");
    if (worst >= 0)
        rec_metric("largest_drop_task", (double)rows[worst].npu->task_id, "");
    if (json) {
        jo = nb_comparison_json(&co, &cs, iso_layer, isolated ? &iso : NULL);
        json_object_set_new(jo, "csv", nb_json_string(csv));
    } else {
        print_verdict(&cs, iso_layer, isolated ? &iso : NULL);
    }
    rec_metric("layers_compared", n_cmp, "");
    rec_metric("layers_over_threshold", n_bad, "");
    rec_artifact("csv", csv);
    if (jo) {
        rc = cli_json_out("compare", jo);
        jo = NULL;
    }
done:
    json_decref(jo);
    nb_comparison_free(&cs);
    return rc;
}

/* ---- compare layer: one matched layer in detail ---- */

int cmd_compare(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        help();
        return 0;
    }
    for (int i = 2; i < argc; i++)
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            help();
            return 0;
        }
    if (!strcmp(argv[1], "convert"))
        return convert(argc, argv);
    if (!strcmp(argv[1], "file_compare"))
        return file_compare(argc, argv);
    if (!strcmp(argv[1], "layer"))
        return compare_layer(argc, argv);
    return cli_usage_error("compare", "unknown subcommand '%s' (convert, file_compare, layer)",
                           argv[1]);
}
