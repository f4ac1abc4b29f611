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

static json_t *index_json(int64_t flat, const nb_dump_tensor *t)
{
    int64_t dims[6], idx[6];
    for (int d = 0; d < t->rank; d++)
        dims[d] = t->dims[d];
    nb_cmp_unravel(flat, t->rank, dims, idx);
    json_t *a = json_array();
    for (int d = 0; d < t->rank; d++)
        json_array_append_new(a, json_integer(idx[d]));
    return a;
}

#define WORST_K 10
#define FIRST_N 16

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
    nb_comparison cs;
    nb_compare_opts co = {.npu_dumps = mdir, .golden_dumps = gdir, .th = th, .keep_layer = name};
    if (nb_compare(&co, &cs, &st))
        return cli_error(&st);
    int rc = 0;
    double *edges = NULL;
    int64_t *counts = NULL;
    int *tasks = NULL;
    int sel = -1;
    if (nb_cmp_pick_layer(&cs, name, mdir, &sel, &st)) {
        rc = cli_error(&st);
        goto out;
    }
    const nb_cmp_row *r = &cs.rows[sel];
    const nb_dump_tensor *x = r->x, *y = r->y;
    if (!x->v) { /* the values of a row that may be the layer were kept */
        rc = cli_fail(1, "compare layer: the values of '%s' were not kept", name);
        goto out;
    }
    /* the compared values: all, or an RNN step's slice of Y (r->slice_off, r->slice_n) */
    int64_t off = r->slice_off, n = r->slice_n, worst[WORST_K], left_out = 0;
    int nw = nb_cmp_worst_k(x->v + off, y->v + off, n, WORST_K, worst);
    for (int i = 0; i < nw; i++)
        worst[i] += off;
    edges = malloc(sizeof *edges * ((size_t)bins + 1));
    counts = malloc(sizeof *counts * (size_t)bins);
    tasks = malloc(sizeof *tasks * ((size_t)cs.nm + 1));
    if (!edges || !counts || !tasks) {
        rc = cli_fail(1, "out of memory");
        goto out;
    }
    if (nb_cmp_error_histogram(x->v + off, y->v + off, n, bins, edges, counts, &left_out, &st)) {
        rc = cli_error(&st);
        goto out;
    }
    int nt = nb_cmp_layer_tasks(&cs, r->npu, tasks);
    char why[64];
    nb_cmp_fails(&r->m, &th, why, sizeof why);
    if (json) {
        json_t *o = json_object(), *jt = json_array(), *jw = json_array(), *jf = json_array();
        json_t *jh = json_object(), *je = json_array(), *jc = json_array(), *jm = json_object();
        json_object_set_new(o, "layer", nb_json_string(r->npu->op_name));
        json_object_set_new(o, "op_type", nb_json_string(r->npu->op_type));
        json_object_set_new(o, "task", json_integer(r->npu->task_id));
        json_object_set_new(o, "tensor_index", json_integer(x->index));
        json_object_set_new(o, "golden_node", nb_json_string(r->gold->op_name));
        json_object_set_new(o, "golden_value", nb_json_string(y->original_name));
        json_object_set_new(o, "shape", shape_json(x));
        json_object_set_new(o, "numel", json_integer(n));
        json_object_set_new(o, "npu_dtype", nb_json_string(x->dtype));
        json_object_set_new(o, "golden_dtype", nb_json_string(y->dtype));
        json_object_set_new(o, "covers", covers_json(r->npu));
        for (int i = 0; i < nt; i++) {
            const nb_dump *t = &cs.md[tasks[i]];
            json_t *j = json_object();
            json_object_set_new(j, "task", json_integer(t->task_id));
            json_object_set_new(j, "name", nb_json_string(t->op_name));
            json_object_set_new(j, "op_type", nb_json_string(t->op_type));
            json_array_append_new(jt, j);
        }
        json_object_set_new(o, "tasks", jt);
        json_object_set_new(o, "npu_dump", nb_json_string(r->npu->path));
        json_object_set_new(o, "golden_dump", nb_json_string(r->gold->path));
        metrics_json(jm, r);
        json_object_set_new(o, "metrics", jm);
        json_object_set_new(o, "thresholds", thresholds_json(&th));
        json_object_set_new(o, "over", over_json(r, &th));
        json_object_set_new(o, "reason", nb_json_string(r->reason));
        for (int i = 0; i < nw; i++) {
            json_t *j = json_object();
            json_object_set_new(j, "flat", json_integer(worst[i]));
            json_object_set_new(j, "index", index_json(worst[i], x));
            json_object_set_new(j, "golden", cli_jnum(y->v[worst[i]]));
            json_object_set_new(j, "npu", cli_jnum(x->v[worst[i]]));
            json_object_set_new(j, "error", cli_jnum(x->v[worst[i]] - y->v[worst[i]]));
            json_array_append_new(jw, j);
        }
        json_object_set_new(o, "worst", jw);
        for (int64_t i = off; i < off + n && i < off + FIRST_N; i++) {
            json_t *j = json_object();
            json_object_set_new(j, "flat", json_integer(i));
            json_object_set_new(j, "index", index_json(i, x));
            json_object_set_new(j, "golden", cli_jnum(y->v[i]));
            json_object_set_new(j, "npu", cli_jnum(x->v[i]));
            json_array_append_new(jf, j);
        }
        json_object_set_new(o, "first", jf);
        for (int b = 0; b <= bins; b++)
            json_array_append_new(je, json_real(edges[b]));
        for (int b = 0; b < bins; b++)
            json_array_append_new(jc, json_integer(counts[b]));
        json_object_set_new(jh, "of", json_string("npu - golden"));
        json_object_set_new(jh, "bins", json_integer(bins));
        json_object_set_new(jh, "edges", je);
        json_object_set_new(jh, "counts", jc);
        json_object_set_new(jh, "left_out", json_integer(left_out));
        json_object_set_new(o, "histogram", jh);
        rc = cli_json_out("compare layer", o);
        goto out;
    }
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
    for (int i = 0; i < nt; i++)
        printf("%s %u %s (%s)", i ? "," : "", cs.md[tasks[i]].task_id,
               plain(cs.md[tasks[i]].op_name), plain(cs.md[tasks[i]].op_type));
    printf("\ndumps:      NPU %s\n            golden %s\n", plain(r->npu->path),
           plain(r->gold->path));
    const nb_cmp_metrics *m = &r->m;
    printf("metrics:    cosine %.6f, max abs error %.4g, max relative error %.4g, SQNR %.1f dB, "
           "RMSE %.4g, KL %.4g, relative Euclidean %.4g, mean relative error %.4g\n",
           m->cos, m->max_abs, m->max_rel, m->sqnr_db, m->rmse, m->kl, m->red, m->mean_rel);
    printf("over:       %s%s%s\n", why[0] ? why : "no threshold crossed",
           m->nan_x || m->inf_x ? (why[0] ? ", " : "; ") : "",
           m->nan_x || m->inf_x ? "NaN or infinity in the NPU output" : "");
    printf("\nthe %d worst elements by |npu - golden|:\n%4s %10s  %-16s %14s %14s %14s\n", nw,
           "rank", "flat", "index", "golden", "npu", "npu - golden");
    for (int i = 0; i < nw; i++) {
        char ix[128];
        index_str(worst[i], x, ix, sizeof ix);
        printf("%4d %10lld  %-16s %14.7g %14.7g %14.7g\n", i + 1, (long long)worst[i], ix,
               y->v[worst[i]], x->v[worst[i]], x->v[worst[i]] - y->v[worst[i]]);
    }
    printf("\nthe first %lld elements:\n%10s  %-16s %14s %14s\n", (long long)(n < FIRST_N ? n : FIRST_N),
           "flat", "index", "golden", "npu");
    for (int64_t i = off; i < off + n && i < off + FIRST_N; i++) {
        char ix[128];
        index_str(i, x, ix, sizeof ix);
        printf("%10lld  %-16s %14.7g %14.7g\n", (long long)i, ix, y->v[i], x->v[i]);
    }
    int64_t most = 1;
    for (int b = 0; b < bins; b++)
        most = counts[b] > most ? counts[b] : most;
    printf("\nhistogram of npu - golden, %d bins (%lld values", bins, (long long)(n - left_out));
    if (left_out)
        printf(", %lld left out: NaN or infinity", (long long)left_out);
    printf("):\n");
    for (int b = 0; b < bins; b++) {
        char bar[41];
        int w = (int)((counts[b] * 40 + most - 1) / most);
        memset(bar, '#', (size_t)w);
        bar[w] = 0;
        printf("  [%12.5g, %12.5g%c %8lld  %s\n", edges[b], edges[b + 1],
               b == bins - 1 ? ']' : ')', (long long)counts[b], bar);
    }
out:
    free(edges), free(counts), free(tasks);
    nb_comparison_free(&cs);
    return rc;
}

