/* nanobench bring-up: the float reference (nb_infer, its inputs given as tensors in the
 * graph's input order: no NAME=FILE text) and the layer comparison (nb_compare), recorded
 * as `infer` and `compare file_compare` record them. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bu.h"
#include "nb/accucmp.h"

/* evaluation input k's files as tensors in graph order (tensors: n_graph slots) */
static nb_err load_eval(bu *b, int k, nb_tensor **tensors, nb_status *st)
{
    for (int i = 0; i < b->n_in; i++) {
        const char *file = b->eval[k * b->n_in + i];
        size_t fl = strlen(file);
        nb_tensor **t = &tensors[b->in_graph[i]];
        nb_err e = fl > 4 && !strcmp(file + fl - 4, ".npy")
                       ? nb_npy_read(file, t, st)
                       : nb_bin_read(file, (nb_dtype)b->in_dtype[i], b->in_rank[i],
                                     b->in_dims[i], t, st);
        if (e)
            return e;
    }
    return NB_OK;
}

static void infer_args(bu *b, step *s, int k, const char *out_dir, bool dump_all,
                       const char *golden)
{
    bu_arg(s, "infer");
    bu_arg(s, b->model);
    json_t *given = json_array();
    bu_input_args(b, s, k, given);
    const char *f[][2] = {{"--input_shape", b->shape}, {"--output-dir", out_dir},
                          {"--dump", golden}};
    for (int i = 0; i < 3; i++)
        if (f[i][1]) {
            bu_arg(s, f[i][0]);
            bu_arg(s, f[i][1]);
        }
    if (dump_all)
        bu_arg(s, "--dump-all");
    bu_param(s, "model", b->model);
    bu_param(s, "input_shape", b->shape);
    bu_param(s, "output_dir", out_dir);
    json_object_set_new(s->params, "dump_all", json_boolean(dump_all));
    for (size_t i = 0; i < json_array_size(given); i++) {
        char key[32];
        snprintf(key, sizeof key, "input_%zu", i);
        json_object_set(s->params, key, json_array_get(given, i));
    }
    json_decref(given);
}

static void infer_record(bu *b, step *s, int k, const nb_infer_result *r, const char *out_dir,
                         const char *golden)
{
    bu_on_model(s, r->model);
    bu_param(s, "golden_dump", golden);
    bu_metric(s, "reference_ms", r->ms, "ms");
    bu_metric(s, "tensors_written", r->n_files, "");
    for (int i = 0; i < b->n_in; i++)
        bu_artifact(s, "input", b->eval[k * b->n_in + i]);
    for (int i = 0; i < r->n_files; i++)
        bu_artifact(s, i < r->n_outputs ? "output" : "dump", r->files[i].path);
    char mp[3500];
    snprintf(mp, sizeof mp, "%s/manifest.tsv", out_dir);
    bu_artifact(s, "manifest", mp);
}

nb_err bu_infer(bu *b, int k, const char *out_dir, bool dump_all, const char *golden,
                int64_t parent, const char *logname, int64_t *id)
{
    step s;
    nb_err e = bu_step_begin(b, &s, "infer", b->model, parent, logname);
    if (e)
        return e;
    infer_args(b, &s, k, out_dir, dump_all, golden);
    int ng = 0;
    for (int i = 0; i < b->n_in; i++)
        ng = b->in_graph[i] + 1 > ng ? b->in_graph[i] + 1 : ng;
    nb_tensor **t = calloc((size_t)ng + 1, sizeof *t);
    if (!t)
        e = nb_fail(b->st, NB_ERR_NOMEM, "out of memory");
    if (!e)
        e = load_eval(b, k, t, b->st);
    nb_infer_result r;
    memset(&r, 0, sizeof r);
    if (!e) {
        nb_infer_opts o = {.model = b->model, .input_shape = b->shape, .n_inputs = ng,
                           .tensors = (const nb_tensor *const *)t, .output_dir = out_dir,
                           .dump_all = dump_all, .golden_dir = golden};
        if (!(e = nb_infer(&o, &r, b->st)))
            infer_record(b, &s, k, &r, out_dir, golden);
        json_t *jo = e ? NULL : nb_infer_result_json(&r, false);
        nb_infer_result_free(&r);
        e = bu_step_end(&s, e, jo);
        json_decref(jo);
    } else {
        e = bu_step_end(&s, e, NULL);
    }
    for (int i = 0; t && i < ng; i++)
        nb_tensor_free(t[i]);
    free(t);
    *id = s.id;
    return e;
}

/* ---- compare ---- */

static void cmp_record(step *s, const nb_comparison *cs, const char *csv)
{
    for (int i = 0; s->run && i < cs->nr; i++) {
        const nb_cmp_row *r = &cs->rows[i];
        double v[4] = {r->m.cos, r->m.max_abs, r->m.sqnr_db, (double)r->npu->saturations};
        const char *names[4] = {"cosine", "max_abs", "sqnr_db", "fp16_saturations"};
        if (r->compared)
            nb_run_layer(s->run, r->npu->op_name, r->npu->op_type, 4, names, v, NULL);
    }
    if (cs->first_bad >= 0)
        bu_metric(s, "first_bad_task", (double)cs->rows[cs->first_bad].npu->task_id, "");
    if (cs->worst >= 0)
        bu_metric(s, "largest_drop_task", (double)cs->rows[cs->worst].npu->task_id, "");
    bu_metric(s, "layers_compared", cs->n_compared, "");
    bu_metric(s, "layers_over_threshold", cs->n_over, "");
    bu_artifact(s, "csv", csv);
}

/* every layer of the dumped evaluation input: its NPU dumps against its golden ones */
nb_err bu_compare(bu *b, int64_t parent)
{
    step s;
    char cmpdir[3400], csv[4096];
    snprintf(cmpdir, sizeof cmpdir, "%s/compare", b->outdir);
    nb_err e = bu_step_begin(b, &s, "compare", b->dumped, parent, "6-compare");
    if (e)
        return bu_step_failed(b, "compare");
    const char *a[] = {"compare", "file_compare", "-m", b->dumped, "-g", b->gold, "-out", cmpdir};
    for (int i = 0; i < 8; i++)
        bu_arg(&s, a[i]);
    if (b->threshold) {
        bu_arg(&s, "--threshold");
        bu_arg(&s, b->threshold);
    }
    bu_arg(&s, "--json");
    bu_param(&s, "golden", b->gold);
    nb_compare_opts co = {.npu_dumps = b->dumped, .golden_dumps = b->gold};
    nb_cmp_thresholds_default(&co.th);
    nb_comparison cs;
    memset(&cs, 0, sizeof cs);
    json_t *jo = NULL;
    if (b->threshold)
        e = nb_cmp_thresholds_parse(b->threshold, &co.th, b->st);
    bool made = false;
    if (!e && !(e = nb_compare(&co, &cs, b->st)))
        made = true;
    if (!e)
        e = nb_cmp_csv_claim(cmpdir, csv, sizeof csv, b->st);
    if (!e && (e = nb_cmp_write_csv(&cs, csv, b->st)))
        remove(csv);
    if (!e && cs.n_compared == 0)
        e = nb_fail(b->st, NB_ERR_ARG, "%s: no NPU tensor matched a golden one (the dumps of "
                    "another model or input? the golden dumps come from `nanobench infer "
                    "--dump` on the float model)", b->gold);
    if (!e) {
        cmp_record(&s, &cs, csv);
        jo = nb_comparison_json(&co, &cs, NULL, NULL);
        json_object_set_new(jo, "csv", nb_json_string(csv));
    }
    if (made)
        nb_comparison_free(&cs);
    e = bu_step_end(&s, e, jo);
    if (e) {
        json_decref(jo);
        return bu_step_failed(b, "compare");
    }
    b->id_cmp = s.id;
    json_decref(b->cmp);
    b->cmp = jo;
    return NB_OK;
}
