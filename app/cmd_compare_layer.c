/* nanobench compare layer: one matched layer of a comparison in detail (its tasks, metrics,
 * the worst elements, the first ones side by side, the error histogram). */
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

static void index_str(int64_t flat, const nb_dump_tensor *t, char *buf, size_t len)
{
    int64_t dims[6], idx[6];
    for (int d = 0; d < t->rank; d++)
        dims[d] = t->dims[d];
    nb_cmp_unravel(flat, t->rank, dims, idx);
    nb_shape_str(t->rank, idx, ',', buf, len);
}


int compare_layer(int argc, char **argv)
{
    const char *mdir = NULL, *gdir = NULL, *name = NULL, *thr = NULL, *bins_s = NULL;
    bool json = false;
    const compare_flag flags[] = {
        {"-m", NULL, "-m needs the NPU dump folder", &mdir},
        {"-g", NULL, "-g needs the golden dump folder", &gdir},
        {"--layer", NULL, "--layer needs a layer name", &name},
        {"--bins", NULL, "--bins needs a number", &bins_s},
        {"--threshold", NULL, "--threshold needs cos=...,rmse=...", &thr}};
    int frc = compare_flags(argc, argv, "layer", flags, 5, &json);
    if (frc)
        return frc;
    if (!mdir || !gdir || !name)
        return cli_usage_error("compare", "layer needs -m NPU_DIR -g GOLDEN_DIR --layer NAME");
    int bins = 20;
    if (bins_s) {
        char *end;
        errno = 0;
        long b = strtol(bins_s, &end, 10);
        if (errno || end == bins_s || *end || b < 1 || b > NB_CMP_MAX_BINS)
            return cli_usage_error("compare", "--bins is a whole number from 1 to %d, not '%s'",
                                   NB_CMP_MAX_BINS, bins_s);
        bins = (int)b;
    }
    nb_cmp_thresholds th;
    nb_cmp_thresholds_default(&th);
    nb_status st = {0};
    if (thr && nb_cmp_thresholds_parse(thr, &th, &st))
        return cli_error(&st);
    nb_cmp_layer_opts lo = {.npu_dumps = mdir, .golden_dumps = gdir, .layer = name,
                            .th = th, .bins = bins};
    nb_cmp_layer_detail d;
    if (nb_cmp_layer(&lo, &d, &st))
        return cli_error(&st);
    if (json) { /* the JSON holds copies of what it shows */
        json_t *o = nb_cmp_layer_json(&d);
        nb_cmp_layer_detail_free(&d);
        return cli_json_out("compare layer", o);
    }
    const nb_comparison *cs = &d.cs;
    const nb_cmp_row *r = &cs->rows[d.row];
    const nb_dump_tensor *x = r->x, *y = r->y;
    int64_t off = d.off, n = d.n;
    char why[64];
    nb_cmp_fails(&r->m, &th, why, sizeof why);
    char sh[128];
    shape_str(x, sh, sizeof sh);
    printf("layer:      %s (%s, task %u, output %d)\n", plain(r->npu->op_name),
           plain(r->npu->op_type), r->npu->task_id, x->index);
    printf("golden:     node %s, value %s\n", plain(r->gold->op_name), plain(y->original_name));
    printf("shape:      %s, %lld elements (NPU %s, golden %s)", sh, (long long)x->numel,
           x->dtype, y->dtype);
    if (n != x->numel)
        printf("; step %d compares its slice: %lld elements from %lld", r->step, (long long)n,
               (long long)off);
    printf("\n");
    printf("covers:    ");
    for (int q = 0; q < r->npu->n_covers; q++)
        printf("%s %s", q ? "," : "", plain(r->npu->covers[q]));
    printf("%s\nNPU tasks: ", r->npu->n_covers ? "" : " (no ONNX node)");
    for (int i = 0; i < d.n_tasks; i++)
        printf("%s %u %s (%s)", i ? "," : "", cs->md[d.tasks[i]].task_id,
               plain(cs->md[d.tasks[i]].op_name), plain(cs->md[d.tasks[i]].op_type));
    printf("\ndumps:      NPU %s\n            golden %s\n", plain(r->npu->path),
           plain(r->gold->path));
    const nb_cmp_metrics *m = &r->m;
    printf("metrics:    cosine %.6f, max abs error %.4g, max relative error %.4g, SQNR %.1f dB, "
           "RMSE %.4g, KL %.4g, relative Euclidean %.4g, mean relative error %.4g\n",
           m->cos, m->max_abs, m->max_rel, m->sqnr_db, m->rmse, m->kl, m->red, m->mean_rel);
    printf("over:       %s%s%s\n", why[0] ? why : "no threshold crossed",
           m->nan_x || m->inf_x ? (why[0] ? ", " : "; ") : "",
           m->nan_x || m->inf_x ? "NaN or infinity in the NPU output" : "");
    printf("\nthe %d worst elements by |npu - golden|:\n%4s %10s  %-16s %14s %14s %14s\n", d.n_worst,
           "rank", "flat", "index", "golden", "npu", "npu - golden");
    for (int i = 0; i < d.n_worst; i++) {
        char ix[128];
        index_str(d.worst[i], x, ix, sizeof ix);
        printf("%4d %10lld  %-16s %14.7g %14.7g %14.7g\n", i + 1, (long long)d.worst[i], ix,
               y->v[d.worst[i]], x->v[d.worst[i]], x->v[d.worst[i]] - y->v[d.worst[i]]);
    }
    printf("\nthe first %lld elements:\n%10s  %-16s %14s %14s\n", (long long)(n < NB_CMP_FIRST_N ? n : NB_CMP_FIRST_N),
           "flat", "index", "golden", "npu");
    for (int64_t i = off; i < off + n && i < off + NB_CMP_FIRST_N; i++) {
        char ix[128];
        index_str(i, x, ix, sizeof ix);
        printf("%10lld  %-16s %14.7g %14.7g\n", (long long)i, ix, y->v[i], x->v[i]);
    }
    int64_t most = 1;
    for (int b = 0; b < bins; b++)
        most = d.counts[b] > most ? d.counts[b] : most;
    printf("\nhistogram of npu - golden, %d bins (%lld values", bins, (long long)(n - d.left_out));
    if (d.left_out)
        printf(", %lld left out: NaN or infinity", (long long)d.left_out);
    printf("):\n");
    for (int b = 0; b < bins; b++) {
        char bar[41];
        int w = (int)((d.counts[b] * 40 + most - 1) / most);
        memset(bar, '#', (size_t)w);
        bar[w] = 0;
        printf("  [%12.5g, %12.5g%c %8lld  %s\n", d.edges[b], d.edges[b + 1],
               b == bins - 1 ? ']' : ')', (long long)d.counts[b], bar);
    }
    nb_cmp_layer_detail_free(&d);
    return 0;
}

