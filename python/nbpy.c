/* nanobench's Python module, C side (python/nanobench/__init__.py loads it with ctypes from
 * libnanobench.so; issue 18): each step's engine entry point behind a function of plain C
 * types. Arrays cross as float32 buffers with their dims; results come back as one JSON
 * string (nbpy_free it). Every function returns 0, or the exit status of the CLI for the
 * same error (2 bad input, 1 internal) with the one-line message in err. No printing. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "acl/acl.h"
#include "nb/run.h"
#include "nb/accucmp.h"
#include "nb/estimate.h"
#include "nb/exeom.h"
#include "nb/quant.h"
#include "nb/ref.h"
#include "nb/sim.h"

#define EXPORT __attribute__((visibility("default")))

EXPORT void nbpy_free(char *p);
EXPORT int nbpy_info(const char *model, const char *input_shape, char **json, char *err,
                     size_t errlen);
EXPORT int nbpy_inputs(const char *model, const char *input_shape, char **json, char *err,
                       size_t errlen);
EXPORT int nbpy_estimate(const char *model, const char *input_shape, char **json, char *err,
                         size_t errlen);
EXPORT int nbpy_calibrate(const char *model, const char *save_path, const char *input_shape,
                          const char *config, const char *algo, int n_inputs, int n_batches,
                          const float *const *data, const int *ranks, const int64_t *dims,
                          char **json, char *err, size_t errlen);
EXPORT int nbpy_compile(const char *model, const char *output, const char *fp16_nodes,
                        const char *input_shape, char **json, char *err, size_t errlen);
EXPORT int nbpy_run(const char *exeom, int n_inputs, const char *const *names,
                    const float *const *data, const int *ranks, const int64_t *dims,
                    const char *dump_dir, char **json, char *err, size_t errlen);
EXPORT int nbpy_infer(const char *model, const char *input_shape, int n_inputs,
                      const float *const *data, const int *ranks, const int64_t *dims,
                      const char *dump_dir, char **json, char *err, size_t errlen);
EXPORT int nbpy_compare(const char *npu_dump, const char *golden_dump, char **json, char *err,
                        size_t errlen);

void nbpy_free(char *p) { free(p); }

static int fail(const nb_status *st, char *err, size_t errlen)
{
    snprintf(err, errlen, "%s", st->msg);
    return nb_exit_code(st->code);
}

static int done(json_t *o, char **json, char *err, size_t errlen)
{
    *json = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(o);
    if (!*json) {
        snprintf(err, errlen, "out of memory");
        return 1;
    }
    return 0;
}


int nbpy_estimate(const char *model, const char *input_shape, char **json, char *err,
                  size_t errlen)
{
    nb_status st = {0};
    nb_estimate_opts o = {.model = model, .input_shape = input_shape,
                          .npu = {.weight_bits = 8, .soc_version = "Ascend035A"}};
    nb_estimate_result r;
    int rc = 0;
    if (nb_estimate_file(&o, &r, &st)) { /* the CLI's whole step */
        rc = fail(&st, err, errlen);
    } else { /* the estimate's own JSON (nb_estimate_json), through a memory stream */
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        if (!f || nb_estimate_json(&r.e, f) != 0) {
            snprintf(err, errlen, "out of memory");
            rc = 1;
        }
        if (f)
            fclose(f);
        if (rc)
            free(buf);
        else
            *json = buf;
    }
    nb_estimate_result_free(&r);
    return rc;
}

int nbpy_info(const char *model, const char *input_shape, char **json, char *err,
              size_t errlen)
{
    nb_status st = {0};
    nb_load_opts lo = {.input_shape = input_shape, .weights_in_place = true};
    nb_model_info in;
    if (nb_model_info_get(model, &lo, &in, &st))
        return fail(&st, err, errlen);
    json_t *j = nb_model_info_json(model, &in); /* the CLI's info --json */
    nb_model_info_free(&in);
    return done(j, json, err, errlen);
}

int nbpy_inputs(const char *model, const char *input_shape, char **json, char *err,
                size_t errlen)
{
    nb_status st = {0};
    nb_model *m = NULL;
    nb_load_opts lo = {.input_shape = input_shape, .weights_in_place = true};
    if (nb_model_load(model, &lo, &m, &st))
        return fail(&st, err, errlen);
    json_t *a = json_array();
    const nb_graph *g = m->graph;
    for (int i = 0; i < g->n_inputs; i++) {
        const nb_value *v = &g->values[g->inputs[i]];
        json_t *o = json_object(), *shape = json_array();
        for (int d = 0; d < v->rank; d++)
            json_array_append_new(shape, json_integer(v->dims[d]));
        json_object_set_new(o, "name", json_string(v->name));
        json_object_set_new(o, "dtype", json_string(nb_dtype_name(v->dtype)));
        json_object_set_new(o, "shape", shape);
        json_array_append_new(a, o);
    }
    nb_model_free(m);
    return done(a, json, err, errlen);
}

/* A float32 tensor over a copy of data (rank, dims). */
static nb_tensor *tensor_of(const float *data, int rank, const int64_t *dims, nb_status *st)
{
    nb_tensor *t = NULL;
    if (nb_tensor_new(NB_FLOAT, rank, dims, &t, st))
        return NULL;
    memcpy(t->data, data, t->nbytes);
    return t;
}

int nbpy_calibrate(const char *model, const char *save_path, const char *input_shape,
                   const char *config, const char *algo, int n_inputs, int n_batches,
                   const float *const *data, const int *ranks, const int64_t *dims,
                   char **json, char *err, size_t errlen)
{
    nb_status st = {0};
    int n = n_inputs * n_batches;
    nb_tensor **ts = calloc((size_t)(n > 0 ? n : 1), sizeof *ts);
    if (!ts) {
        snprintf(err, errlen, "out of memory");
        return 1;
    }
    int rc = 0;
    for (int k = 0; k < n && !rc; k++) /* batch-major: k = b * n_inputs + i */
        if (!(ts[k] = tensor_of(data[k], ranks[k % n_inputs], dims + 6 * (k % n_inputs), &st)))
            rc = fail(&st, err, errlen);
    nb_calibrate_opts o = {.model = model, .save_path = save_path, .input_shape = input_shape,
                           .config_path = config, .batches = (const nb_tensor *const *)ts,
                           .n_batches = n_batches};
    if (!rc && algo && !(o.algo_set = nb_act_algo_parse(algo, &o.algo))) {
        snprintf(err, errlen, "algo is ifmr, hfmg, minmax, percentile, kl or auto, not '%s'",
                 algo);
        rc = 2;
    }
    nb_calibrate_result r = {0};
    if (!rc && nb_calibrate(&o, &r, &st))
        rc = fail(&st, err, errlen);
    if (!rc) {
        json_t *j = nb_calibrate_json(&r); /* the CLI's calibrate --json */
        rc = done(j, json, err, errlen);
    }
    nb_calibrate_result_free(&r);
    for (int k = 0; k < n; k++)
        nb_tensor_free(ts[k]);
    free(ts);
    return rc;
}

int nbpy_compile(const char *model, const char *output, const char *fp16_nodes,
                 const char *input_shape, char **json, char *err, size_t errlen)
{
    char work[4200];
    const char *tmpbase = getenv("TMPDIR");
    snprintf(work, sizeof work, "%s/nanobench-atc.XXXXXX", tmpbase && *tmpbase ? tmpbase : "/tmp");
    if (!mkdtemp(work)) {
        snprintf(err, errlen, "%s: cannot make a scratch folder", work);
        return 2;
    }
    nb_status st = {0};
    char all_float[4096] = "";
    if (!fp16_nodes) { /* every float input of the compiler's input (deploy or Q/DQ model) */
        nb_npu_input in = {0};
        nb_model *m = NULL;
        nb_load_opts lo = {.input_shape = input_shape};
        if (nb_read_npu_input(model, input_shape, NULL, work, &in, &st) ||
            nb_model_load_mem(in.onnx, in.len, model, NULL, &lo, &m, &st)) {
            nb_npu_input_free(&in);
            rmdir(work);
            return fail(&st, err, errlen);
        }
        for (int i = 0; i < m->graph->n_inputs; i++) {
            const nb_value *v = &m->graph->values[m->graph->inputs[i]];
            size_t at = strlen(all_float);
            if (v->dtype == NB_FLOAT || v->dtype == NB_FLOAT16)
                snprintf(all_float + at, sizeof all_float - at, "%s%s", at ? ";" : "", v->name);
        }
        nb_model_free(m);
        nb_npu_input_free(&in);
        fp16_nodes = all_float;
    }
    nb_compile_opts o = {.model = model, .output = output, .soc_version = "Ascend035A",
                         .input_fp16_nodes = fp16_nodes, .output_fp16 = true,
                         .input_shape = input_shape, .work_dir = work};
    nb_compile_result r;
    int rc = nb_compile(&o, &r, &st) ? fail(&st, err, errlen) : 0;
    rmdir(work);
    if (!rc) {
        json_t *j = nb_compile_result_json(&r); /* the CLI's atc --json */
        rc = done(j, json, err, errlen);
    }
    nb_compile_result_free(&r);
    return rc;
}

int nbpy_run(const char *exeom, int n_inputs, const char *const *names,
             const float *const *data, const int *ranks, const int64_t *dims,
             const char *dump_dir, char **json, char *err, size_t errlen)
{
    char cfg[4400] = "";
    uapi_npu_dlog_setlevel(0x10, 4, 0);
    if (n_inputs > 64 || n_inputs < 0) {
        snprintf(err, errlen, "%s: %d inputs given", exeom, n_inputs);
        return 2;
    }
    if (dump_dir) { /* the dump config the vendor's runtime reads: every task's outputs */
        char name[256];
        const char *base = strrchr(exeom, '/');
        snprintf(name, sizeof name, "%s", base ? base + 1 : exeom);
        char *dot = strrchr(name, '.');
        if (dot)
            *dot = 0;
        snprintf(cfg, sizeof cfg, "%s/.nbpy_acl.%ld.json", dump_dir, (long)getpid());
        json_t *j = json_pack("{s:{s:[{s:s}],s:s,s:s}}", "dump", "dump_list", "model_name", name,
                              "dump_path", dump_dir, "dump_mode", "output");
        if (nb_mkdir_p(dump_dir) || !j || json_dump_file(j, cfg, 0)) {
            json_decref(j);
            snprintf(err, errlen, "%s: cannot write the dump config", dump_dir);
            return 2;
        }
        json_decref(j);
    }
    /* each array under its name (a dict's key), else its index: the engine checks that the
       name is an input, given once, and that the shape is exactly the input's */
    static char idx[64][16];
    nb_run_input in[64];
    nb_tensor *ts[64] = {0};
    nb_status st = {0};
    int rc = 0;
    for (int i = 0; i < n_inputs && !rc; i++) {
        snprintf(idx[i], sizeof idx[i], "%d", i);
        if (!(ts[i] = tensor_of(data[i], ranks[i], dims + 6 * i, &st)))
            rc = fail(&st, err, errlen);
        in[i] = (nb_run_input){.name = names && names[i] ? names[i] : idx[i], .value = ts[i]};
    }
    nb_run_opts o = {.exeom = exeom, .dump_config = cfg[0] ? cfg : NULL, .n_inputs = n_inputs,
                     .inputs = in};
    nb_run_result r;
    memset(&r, 0, sizeof r);
    if (rc) {
        /* the error is in err */
    } else if (nb_run_exeom(&o, &r, &st)) {
        snprintf(err, errlen, "%s", st.msg);
        rc = nb_exit_code(st.code);
    } else if (r.n_inputs != n_inputs) {
        snprintf(err, errlen, "%s: %d inputs, %d given", exeom, r.n_inputs, n_inputs);
        rc = 2;
    } else {
        /* the CLI's run --json, each output with all its values */
        json_t *j = nb_run_result_json(&o, &r), *outs = json_object_get(j, "outputs");
        for (int i = 0; i < r.n_outputs; i++) {
            const nb_tensor *y = r.outputs[i].value;
            json_t *vals = json_array();
            for (int64_t k = 0; k < y->numel; k++)
                json_array_append_new(vals, nb_json_value(((const float *)y->data)[k]));
            json_object_set_new(json_array_get(outs, (size_t)i), "values", vals);
        }
        rc = done(j, json, err, errlen);
    }
    nb_run_result_free(&r);
    for (int i = 0; i < n_inputs; i++)
        nb_tensor_free(ts[i]);
    if (cfg[0])
        remove(cfg);
    return rc;
}

int nbpy_infer(const char *model, const char *input_shape, int n_inputs,
               const float *const *data, const int *ranks, const int64_t *dims,
               const char *dump_dir, char **json, char *err, size_t errlen)
{
    nb_status st = {0};
    nb_tensor *ts[64] = {0};
    int rc = 0;
    if (n_inputs < 0 || n_inputs > 64) {
        snprintf(err, errlen, "%s: %d inputs given, at most 64", model, n_inputs);
        return 2;
    }
    for (int i = 0; i < n_inputs && !rc; i++)
        if (!(ts[i] = tensor_of(data[i], ranks[i], dims + 6 * i, &st)))
            rc = fail(&st, err, errlen);
    nb_infer_opts o = {.model = model, .input_shape = input_shape, .n_inputs = n_inputs,
                       .tensors = (const nb_tensor *const *)ts, .golden_dir = dump_dir};
    nb_infer_result r;
    if (!rc && nb_infer(&o, &r, &st))
        rc = fail(&st, err, errlen);
    if (!rc) {
        json_t *j = nb_infer_result_json(&r, true); /* infer --json, with every value */
        nb_infer_result_free(&r);
        rc = done(j, json, err, errlen);
    }
    for (int i = 0; i < n_inputs; i++)
        nb_tensor_free(ts[i]);
    return rc;
}

int nbpy_compare(const char *npu_dump, const char *golden_dump, char **json, char *err,
                 size_t errlen)
{
    nb_status st = {0};
    nb_compare_opts o = {.npu_dumps = npu_dump, .golden_dumps = golden_dump};
    nb_cmp_thresholds_default(&o.th);
    nb_comparison c;
    if (nb_compare(&o, &c, &st))
        return fail(&st, err, errlen);
    if (c.n_compared == 0) { /* as the CLI: no verdict over nothing */
        snprintf(err, errlen, "%s: no NPU tensor matched a golden one (the dumps of another "
                 "model or input? the golden dumps come from infer's dump on the float model)",
                 golden_dump);
        nb_comparison_free(&c);
        return 2;
    }
    /* the CLI's own JSON (compare file_compare --json) */
    json_t *j = nb_comparison_json(&o, &c, NULL, NULL);
    nb_comparison_free(&c);
    return done(j, json, err, errlen);
}
