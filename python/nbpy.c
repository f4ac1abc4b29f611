/* nanobench's Python module, C side (python/nanobench/__init__.py loads it with ctypes from
 * libnanobench.so; issue 18): each step's engine entry point behind a function of plain C
 * types. Arrays cross as float32 buffers with their dims; results come back as one JSON
 * string (nbpy_free it). Every function returns 0, or the exit status of the CLI for the
 * same error (2 bad input, 1 internal) with the one-line message in err. No printing. */
#define _POSIX_C_SOURCE 200809L
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
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
#include "nb/ir.h"
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
                          const char *config, const char *algo, const char *weight_round,
                          int bias_correction, int n_inputs, int n_batches,
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

/* One engine call at a time. The ACL runtime behind run (engine/runtime_sim/acl.c) is the
 * process's one NPU session, a second aclInit refused ('aclInit: already initialized'), and
 * the engines keep a few static buffers; ctypes lets go of the GIL, so Python's threads (and
 * a C caller's) take turns here, each exported function the whole of its call. */
static pthread_mutex_t engine_lock = PTHREAD_MUTEX_INITIALIZER;
/* the same lock for the library's other files (nbpy_bringup.c; not exported) */
void nbpy_lock(void) { pthread_mutex_lock(&engine_lock); }
void nbpy_unlock(void) { pthread_mutex_unlock(&engine_lock); }
#define LOCKED(call)                                                                          \
    do {                                                                                      \
        pthread_mutex_lock(&engine_lock);                                                     \
        int rc_ = (call);                                                                     \
        pthread_mutex_unlock(&engine_lock);                                                   \
        return rc_;                                                                           \
    } while (0)

/* s as a message shows it: control bytes and quotes as \xNN, at most 60 bytes then "..."
 * (a name can be anything a model holds). */
static const char *shown(const char *s, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p && at + 8 < len; p++) {
        if (at >= 60) {
            snprintf(buf + at, len - at, "...");
            break;
        }
        at += (size_t)snprintf(buf + at, len - at, *p < 0x20 || *p == 0x7f || *p == '\'' ||
                               *p == '\\' ? "\\x%02x" : "%c", *p);
    }
    return buf;
}

/* "'a', 'b'" of n names (name(user, i)) into out, shortened with ", ..." when long. */
static void name_list(const char *(*name)(const void *, int), const void *user, int n,
                      char *out, size_t len)
{
    size_t at = 0;
    out[0] = 0;
    for (int i = 0; i < n; i++) {
        char b[80];
        if (at + 80 >= len || at > 400) {
            snprintf(out + at, len - at, ", ...");
            return;
        }
        at += (size_t)snprintf(out + at, len - at, "%s'%s'", i ? ", " : "",
                               shown(name(user, i), b, sizeof b));
    }
}

/* The C callers' arrays: pointers there, ranks 0..6 (dims has 6 a slot), dims >= 0. */
static int check_arrays(const char *fn, int n, const float *const *data, const int *ranks,
                        const int64_t *dims, int n_data, char *err, size_t errlen)
{
    if (n > 0 && (!data || !ranks || !dims)) {
        snprintf(err, errlen, "%s(): %d arrays and no data, ranks or dims", fn, n);
        return 2;
    }
    for (int i = 0; i < n; i++) {
        if (ranks[i] < 0 || ranks[i] > 6) {
            snprintf(err, errlen, "%s(): array %d has rank %d (0 to 6)", fn, i, ranks[i]);
            return 2;
        }
        for (int d = 0; d < ranks[i]; d++)
            if (dims[6 * i + d] < 0) {
                snprintf(err, errlen, "%s(): array %d has dim %d of %lld", fn, i, d,
                         (long long)dims[6 * i + d]);
                return 2;
            }
    }
    for (int k = 0; k < n_data; k++)
        if (!data[k]) {
            snprintf(err, errlen, "%s(): array %d has no data (NULL)", fn, k);
            return 2;
        }
    return 0;
}

static const char *graph_input_name(const void *g, int i)
{
    const nb_graph *gr = g;
    return gr->values[gr->inputs[i]].name;
}

/* The model's input count (with input_shape) against n_inputs given, before an engine pairs
 * them up: calibrate's in-memory batches carry no count of their own (batch b of input i is
 * batches[b * (the model's inputs) + i]), so fewer arrays than inputs read past the end
 * (the SIGSEGV in run_batch) and more of them shift into other batches. */
static int check_input_count(const char *fn, const char *model, const char *input_shape,
                             int n_inputs, const char *one, const char *many, char *err,
                             size_t errlen)
{
    nb_status st = {0};
    nb_model *m = NULL;
    nb_load_opts lo = {.input_shape = input_shape, .weights_in_place = true};
    if (nb_model_load(model, &lo, &m, &st))
        return fail(&st, err, errlen);
    int rc = 0;
    if (m->graph->n_inputs != n_inputs) {
        char names[600];
        name_list(graph_input_name, m->graph, m->graph->n_inputs, names, sizeof names);
        snprintf(err, errlen, "%s(): the model takes %d input%s (%s), %d %s given", fn,
                 m->graph->n_inputs, m->graph->n_inputs == 1 ? "" : "s", names, n_inputs,
                 n_inputs == 1 ? one : many);
        rc = 2;
    }
    nb_model_free(m);
    return rc;
}

/* The exeom's inputs as run() pairs arrays with them: names (from NAME.dbg, "" without it)
 * and shapes, read through the ACL API as nb_run_exeom does. */
typedef struct exeom_inputs {
    int n;
    bool named;
    char name[64][512];
    int rank[64];
    int64_t dims[64][6];
} exeom_inputs;

static const char *exeom_input_name(const void *x, int i)
{
    return ((const exeom_inputs *)x)->name[i];
}

static int read_exeom_inputs(const char *exeom, exeom_inputs *xi, char *err, size_t errlen)
{
    aclError e;
    aclrtContext ctx = NULL;
    uint32_t id = 0;
    int rc = 0;
    memset(xi, 0, sizeof *xi);
    if ((e = aclInit(NULL))) {
        snprintf(err, errlen, "%s (ACL error %d)", aclGetRecentErrMsg(), e);
        return 1;
    }
    if ((e = aclrtSetDevice(0)) || (e = aclrtCreateContext(&ctx, 0)) ||
        (e = aclmdlLoadFromFile(exeom, &id))) {
        const char *msg = aclGetRecentErrMsg();
        if (!strncmp(msg, exeom, strlen(exeom)))
            snprintf(err, errlen, "%s (ACL error %d)", msg, e);
        else
            snprintf(err, errlen, "%s: %s (ACL error %d)", exeom, msg, e);
        rc = (e >= 200000 && e < 300000) || e >= 500000 ? 1 : 2; /* as nb_run_exeom's */
    } else {
        const nb_sim_model *sim = nb_acl_sim_model(id);
        const nb_exeom *x = nb_sim_exeom(sim);
        if (x->n_inputs > 64) {
            snprintf(err, errlen, "%s: %u inputs; run() takes up to 64", exeom, x->n_inputs);
            rc = 2;
        }
        for (int i = 0; !rc && i < (int)x->n_inputs; i++) {
            int t = nb_sim_input_tensor(sim, i);
            const nb_exeom_tensor *et = &x->t[t];
            snprintf(xi->name[i], sizeof xi->name[i], "%s", nb_acl_tensor_onnx(id, t));
            xi->named |= xi->name[i][0] != 0;
            xi->rank[i] = et->rank < 6 ? et->rank : 6;
            for (int d = 0; d < xi->rank[i]; d++)
                xi->dims[i][d] = et->dims[d];
        }
        xi->n = rc ? 0 : (int)x->n_inputs;
    }
    if (id)
        aclmdlUnload(id);
    if (ctx)
        aclrtDestroyContext(ctx);
    aclrtResetDevice(0);
    aclFinalize();
    return rc;
}

/* run()'s arrays against the exeom's inputs: as many as it has, each name an input (or its
 * index) given once, each shape exactly the input's. */
static int check_run_inputs(const char *exeom, int n_inputs, const char *const *names,
                            const int *ranks, const int64_t *dims, char *err, size_t errlen)
{
    exeom_inputs *xi = malloc(sizeof *xi);
    if (!xi) {
        snprintf(err, errlen, "out of memory");
        return 1;
    }
    int rc = read_exeom_inputs(exeom, xi, err, errlen);
    char list[600], b[80], b2[200];
    if (!rc) {
        if (xi->named)
            name_list(exeom_input_name, xi, xi->n, list, sizeof list);
        else if (xi->n)
            snprintf(list, sizeof list, "by index 0 to %d, no NAME.dbg next to the exeom names "
                     "them", xi->n - 1);
        else
            snprintf(list, sizeof list, "none");
    }
    if (!rc && n_inputs != xi->n) {
        snprintf(err, errlen, "run(): the model takes %d input%s (%s), %d given", xi->n,
                 xi->n == 1 ? "" : "s", list, n_inputs);
        rc = 2;
    }
    int seen[64];
    for (int i = 0; i < xi->n; i++)
        seen[i] = -1;
    for (int a = 0; !rc && a < n_inputs; a++) {
        int hit = -1;
        char idx[16];
        const char *nm = names && names[a] ? names[a] : (snprintf(idx, sizeof idx, "%d", a), idx);
        for (int i = 0; i < xi->n && hit < 0; i++) {
            char ix[16];
            snprintf(ix, sizeof ix, "%d", i);
            if ((xi->name[i][0] && !strcmp(xi->name[i], nm)) || !strcmp(ix, nm))
                hit = i;
        }
        if (hit < 0) {
            snprintf(err, errlen, "run(): no model input '%s'; the inputs are %s",
                     shown(nm, b, sizeof b), list);
            rc = 2;
        } else if (seen[hit] >= 0) {
            snprintf(err, errlen, "run(): input '%s' given twice", shown(nm, b, sizeof b));
            rc = 2;
        } else {
            seen[hit] = a;
            bool same = ranks[a] == xi->rank[hit];
            for (int d = 0; same && d < ranks[a]; d++)
                same = dims[6 * a + d] == xi->dims[hit][d];
            if (!same) {
                char have[100], want[100];
                nb_shape_str(ranks[a], dims + 6 * a, ',', have, sizeof have);
                nb_shape_str(xi->rank[hit], xi->dims[hit], ',', want, sizeof want);
                snprintf(b2, sizeof b2, "%s", shown(nm, b, sizeof b));
                snprintf(err, errlen, "run(): input '%s' is %s; the array given has shape %s",
                         b2, want, have);
                rc = 2;
            }
        }
    }
    free(xi);
    return rc;
}


static int estimate_impl(const char *model, const char *input_shape, char **json, char *err,
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

static int info_impl(const char *model, const char *input_shape, char **json, char *err,
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

static int inputs_impl(const char *model, const char *input_shape, char **json, char *err,
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

static int calibrate_impl(const char *model, const char *save_path, const char *input_shape,
                          const char *config, const char *algo, const char *weight_round,
                          int bias_correction, int n_inputs, int n_batches,
                          const float *const *data, const int *ranks, const int64_t *dims,
                          char **json, char *err, size_t errlen)
{
    if (n_inputs < 0 || n_inputs > 64 || n_batches < 0 || n_batches > INT_MAX / 64) {
        snprintf(err, errlen, "calibrate(): %d inputs of %d batches (up to 64 inputs)",
                 n_inputs, n_batches);
        return 2;
    }
    int rc = check_input_count("calibrate", model, input_shape, n_inputs, "list of batches",
                               "lists of batches", err, errlen);
    if (rc)
        return rc;
    if (n_batches < 1) {
        snprintf(err, errlen, "calibrate(): no batch given (each input's list is empty)");
        return 2;
    }
    int n = n_inputs * n_batches;
    if ((rc = check_arrays("calibrate", n_inputs, data, ranks, dims, n, err, errlen)))
        return rc;
    nb_status st = {0};
    nb_tensor **ts = calloc((size_t)(n > 0 ? n : 1), sizeof *ts);
    if (!ts) {
        snprintf(err, errlen, "out of memory");
        return 1;
    }
    for (int k = 0; k < n && !rc; k++) /* batch-major: k = b * n_inputs + i */
        if (!(ts[k] = tensor_of(data[k], ranks[k % n_inputs], dims + 6 * (k % n_inputs), &st)))
            rc = fail(&st, err, errlen);
    nb_calibrate_opts o = {.model = model, .save_path = save_path, .input_shape = input_shape,
                           .config_path = config, .batches = (const nb_tensor *const *)ts,
                           .n_batches = n_batches, .no_bias_correction = !bias_correction};
    if (!rc && weight_round &&
        !(o.weight_round_set = nb_weight_round_parse(weight_round, &o.weight_round))) {
        snprintf(err, errlen, "weight_round is nearest or adaround, not '%s'", weight_round);
        rc = 2;
    }
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

static int compile_impl(const char *model, const char *output, const char *fp16_nodes,
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

static int run_impl(const char *exeom, int n_inputs, const char *const *names,
                    const float *const *data, const int *ranks, const int64_t *dims,
                    const char *dump_dir, char **json, char *err, size_t errlen)
{
    char cfg[4400] = "";
    uapi_npu_dlog_setlevel(0x10, 4, 0);
    if (n_inputs > 64 || n_inputs < 0) {
        snprintf(err, errlen, "%s: %d inputs given", exeom, n_inputs);
        return 2;
    }
    int rc = check_arrays("run", n_inputs, data, ranks, dims, n_inputs, err, errlen);
    if (rc || (rc = check_run_inputs(exeom, n_inputs, names, ranks, dims, err, errlen)))
        return rc;
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
    char idx[64][16];
    nb_run_input in[64];
    nb_tensor *ts[64] = {0};
    nb_status st = {0};
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

static int infer_impl(const char *model, const char *input_shape, int n_inputs,
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
    /* (nb_infer refuses another count of tensors than the model's inputs) */
    if ((rc = check_arrays("infer", n_inputs, data, ranks, dims, n_inputs, err, errlen)))
        return rc;
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

static int compare_impl(const char *npu_dump, const char *golden_dump, char **json, char *err,
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

/* The exported functions: each engine call under engine_lock; a required path missing is a
 * bad argument, as Python's None is. */
static int need(const char *fn, const char *what, char *err, size_t errlen)
{
    snprintf(err, errlen, "%s(): %s is required (NULL given)", fn, what);
    return 2;
}

int nbpy_estimate(const char *model, const char *input_shape, char **json, char *err,
                  size_t errlen)
{
    if (!model)
        return need("estimate", "model", err, errlen);
    LOCKED(estimate_impl(model, input_shape, json, err, errlen));
}

int nbpy_info(const char *model, const char *input_shape, char **json, char *err,
              size_t errlen)
{
    if (!model)
        return need("info", "model", err, errlen);
    LOCKED(info_impl(model, input_shape, json, err, errlen));
}

int nbpy_inputs(const char *model, const char *input_shape, char **json, char *err,
                size_t errlen)
{
    if (!model)
        return need("inputs", "model", err, errlen);
    LOCKED(inputs_impl(model, input_shape, json, err, errlen));
}

int nbpy_calibrate(const char *model, const char *save_path, const char *input_shape,
                   const char *config, const char *algo, const char *weight_round,
                   int bias_correction, int n_inputs, int n_batches,
                   const float *const *data, const int *ranks, const int64_t *dims,
                   char **json, char *err, size_t errlen)
{
    if (!model || !save_path)
        return need("calibrate", model ? "save_path" : "model", err, errlen);
    LOCKED(calibrate_impl(model, save_path, input_shape, config, algo, weight_round,
                          bias_correction, n_inputs, n_batches,
                          data, ranks, dims, json, err, errlen));
}

int nbpy_compile(const char *model, const char *output, const char *fp16_nodes,
                 const char *input_shape, char **json, char *err, size_t errlen)
{
    if (!model || !output)
        return need("compile", model ? "output" : "model", err, errlen);
    LOCKED(compile_impl(model, output, fp16_nodes, input_shape, json, err, errlen));
}

int nbpy_run(const char *exeom, int n_inputs, const char *const *names,
             const float *const *data, const int *ranks, const int64_t *dims,
             const char *dump_dir, char **json, char *err, size_t errlen)
{
    if (!exeom)
        return need("run", "exeom", err, errlen);
    LOCKED(run_impl(exeom, n_inputs, names, data, ranks, dims, dump_dir, json, err, errlen));
}

int nbpy_infer(const char *model, const char *input_shape, int n_inputs,
               const float *const *data, const int *ranks, const int64_t *dims,
               const char *dump_dir, char **json, char *err, size_t errlen)
{
    if (!model)
        return need("infer", "model", err, errlen);
    LOCKED(infer_impl(model, input_shape, n_inputs, data, ranks, dims, dump_dir, json, err,
                      errlen));
}

int nbpy_compare(const char *npu_dump, const char *golden_dump, char **json, char *err,
                 size_t errlen)
{
    if (!npu_dump || !golden_dump)
        return need("compare", npu_dump ? "golden_dump" : "npu_dump", err, errlen);
    LOCKED(compare_impl(npu_dump, golden_dump, json, err, errlen));
}
