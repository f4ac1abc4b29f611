/* nanobench compile: the vendor's ATC for the Nano as an entry point (include/nb/exeom.h:
 * nb_compile, issue 18). The input read and checked, the fp16-range advice, the lowering
 * shared with the estimate, NAME.exeom and NAME.dbg written as a pair. No printing, no exit:
 * errors in nb_status with ATC's E-codes (../shared/docs/facts/compile.md), warnings to the
 * callback; app/cmd_atc.c parses the flags, prints and records. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nb/exeom.h"
#include "nb/ref.h"

void nb_compile_result_free(nb_compile_result *r)
{
    nb_estimate_free(&r->est);
    nb_scale_plan_free(&r->plan);
    memset(r, 0, sizeof *r);
}

/* The cube ops of g and of its branches: the quantized ones counted into *n_q, the others
 * listed (8 at most) into unq and counted into *n_unq. */
static void count_quantized(const nb_graph *g, const nb_npu_input *in, const char *cpu,
                            int *n_q, char *unq, size_t len, int *n_unq)
{
    static const char *const cube[] = {"Conv", "ConvTranspose", "MatMul", "Gemm", "LSTM", "GRU"};
    for (int i = 0; i < g->n_nodes; i++) {
        const nb_node *nd = &g->nodes[i];
        for (int a = 0; a < nd->n_attr; a++)
            if (nd->attrs[a].g)
                count_quantized(nd->attrs[a].g, in, cpu, n_q, unq, len, n_unq);
        bool is_cube = false, quantized = false;
        for (size_t k = 0; k < sizeof cube / sizeof cube[0]; k++)
            is_cube |= !strcmp(nd->op_type, cube[k]);
        for (int k = 0; is_cube && k < in->n_layers && !quantized; k++)
            quantized = !strcmp(in->layers[k].node, nd->name);
        *n_q += quantized;
        if (is_cube && !quantized && cpu && nb_list_has(cpu, nd->name, strlen(nd->name)))
            continue; /* float on the MCU's CPU (--cpu_nodes) */
        /* run-time weights (not a MatMul of two activations): the lowering gives it to the
           MCU's CPU, in float, as calibrate leaves it */
        bool rt_w = strcmp(nd->op_type, "MatMul") && strcmp(nd->op_type, "LSTM") &&
                    strcmp(nd->op_type, "GRU") && nd->n_in > 1 && nd->in[1] >= 0 &&
                    !g->values[nd->in[1]].const_val;
        if (is_cube && !quantized && rt_w)
            continue;
        /* an LSTM/GRU the cube cannot run (two directions, coupled gates...): the lowering
           gives it to the MCU's CPU, in float, as calibrate leaves it */
        char why[300] = "";
        if (is_cube && !quantized && (!strcmp(nd->op_type, "LSTM") || !strcmp(nd->op_type, "GRU")))
            nb_npu_rnn_reason(g, nd, 1, why, sizeof why);
        if (why[0])
            continue;
        if (is_cube && !quantized && (*n_unq)++ < 8)
            snprintf(unq + strlen(unq), len - strlen(unq), "%s'%s' (%s)", unq[0] ? ", " : "",
                     nd->name, nd->op_type);
    }
}

/* The checks of the model against the flags (ATC's order). */
static nb_err check_model(const nb_compile_opts *o, const nb_graph *g, const nb_npu_input *in,
                          int *n_q, nb_status *st)
{
    const char *model = o->model;
    if (o->input_shape) { /* --input_shape names inputs */
        nb_shape_override *ov = NULL;
        int nov = 0;
        nb_err e = NB_OK;
        nb_status ignore = {0};
        if (!nb_parse_input_shape(o->input_shape, &ov, &nov, &ignore))
            for (int i = 0; i < nov && !e; i++)
                if (nb_graph_find(g, ov[i].name) < 0)
                    e = nb_fail(st, NB_ERR_ARG, "E10001: --input_shape names '%s', which is not "
                                "an input of %s", ov[i].name, model);
        nb_shape_overrides_free(ov, nov);
        if (e)
            return e;
    }
    for (int i = 0; i < g->n_inputs; i++) { /* a dim of 0: nothing for the NPU to run */
        const nb_value *v = &g->values[g->inputs[i]];
        for (int d = 0; d < v->rank; d++)
            if (v->dims[d] == 0)
                return nb_fail(st, NB_ERR_ARG, "E10002: input '%s' has a dim of 0 (dim %d): the "
                               "NPU runs tensors of at least one element", v->name, d);
    }
    char missing[1024] = "";
    for (int i = 0; i < g->n_inputs; i++) {
        const nb_value *v = &g->values[g->inputs[i]];
        if ((v->dtype == NB_FLOAT || v->dtype == NB_FLOAT16) &&
            !o->all_inputs_fp16 && !nb_list_has(o->input_fp16_nodes, v->name, strlen(v->name)))
            snprintf(missing + strlen(missing), sizeof missing - strlen(missing), "%s'%s'",
                     missing[0] ? ", " : "", v->name);
    }
    if (missing[0])
        return nb_fail(st, NB_ERR_ARG, "E10001: --input_fp16_nodes must name every float "
                       "input; missing: %s", missing);
    /* an entry that names no input: the lowering refuses it (check_inputs) */
    bool float_out = false;
    for (int i = 0; i < g->n_outputs; i++) {
        nb_dtype d = g->values[g->outputs[i]].dtype;
        float_out |= d == NB_FLOAT || d == NB_FLOAT16;
    }
    if (float_out && !o->output_fp16)
        return nb_fail(st, NB_ERR_ARG, "E10004: --output_type=FP16 is required: %s has float "
                       "outputs", model);
    nb_err ce = nb_npu_check_cpu_nodes(g, o->cpu_nodes, st);
    if (ce)
        return nb_prefix(st, "%s", model), ce;
    /* a calibrated layer stays on the cube: its int8 weights and bias are the NPU's, the
       CPU computes in float (calibrate --cpu_nodes leaves it float) */
    for (int k = 0; o->cpu_nodes && k < in->n_layers; k++)
        if (nb_list_has(o->cpu_nodes, in->layers[k].node, strlen(in->layers[k].node)))
            return nb_fail(st, NB_ERR_ARG, "%s: --cpu_nodes places '%s', a layer calibrated to "
                           "int8: the MCU's CPU computes in float; calibrate with the same "
                           "--cpu_nodes to leave it float", model, in->layers[k].node);
    /* every cube op quantized, an If branch's too: a float one cannot run on the cube
       (s16/s8/s4 only) */
    char unq[1024] = "";
    int n_unq = 0;
    count_quantized(g, in, o->cpu_nodes, n_q, unq, sizeof unq, &n_unq);
    if (n_unq)
        return nb_fail(st, NB_ERR_ARG, "%s: %d cube op%s need%s int8: run calibration first "
                       "(nanobench calibrate), or place %s on the MCU's CPU in float "
                       "(--cpu_nodes): %s%s", model, n_unq, n_unq == 1 ? "" : "s",
                       n_unq == 1 ? "s" : "", n_unq == 1 ? "it" : "them", unq,
                       n_unq > 8 ? ", ..." : "");
    return NB_OK;
}

/* The fp16-range advice: calibrated ranges beyond 65504, and what --nb_input_scale does. */
static void advise(const nb_compile_opts *o, const nb_scale_advice *adv, int n_adv,
                   const nb_scale_plan *plan)
{
    for (int i = 0; i < n_adv; i++) {
        const nb_scale_advice *a = &adv[i];
        double given = a->input[0] ? nb_scale_plan_input(plan, a->input) : 0;
        if (!a->input[0])
            nb_warnf(o->warn, o->user, "fp16 range: %s's input was calibrated to %.3g, beyond fp16's 65504, and "
                  "no cube op before it could take a scale: --nb_input_scale cannot help",
                  a->layer, a->range);
        else if (!given || given > a->suggest)
            nb_warnf(o->warn, o->user, "fp16 range: %s's input was calibrated to %.3g, beyond fp16's 65504: the "
                  "fp16 ops before it clamp%s; --nb_input_scale=\"%s:2^%d\" (a nanobench "
                  "extension, not an ATC flag) brings it to %.0f%s", a->layer, a->range,
                  given ? " at the scale given" : "", a->input, (int)lround(log2(a->suggest)),
                  a->range * pow(a->suggest, a->power),
                  a->undoable ? "" : " (but its scale cannot be taken back before every "
                                     "output: atc says where)");
    }
}

nb_err nb_compile(const nb_compile_opts *o, nb_compile_result *r, nb_status *st)
{
    memset(r, 0, sizeof *r);
    const char *model = o->model, *output = o->output;
    nb_npu_input in = {0};
    nb_model *m = NULL;
    nb_op_table ops = {0};
    nb_scale_advice *adv = NULL;
    int n_adv = 0;
    const char **act16 = NULL; /* the layers with int16 activations (dst_bits 16) */
    int n_act16 = 0;
    const char **w4 = NULL; /* the layers with int4 weights (weight_bits 4) */
    int n_w4 = 0;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    snprintf(r->exeom, sizeof r->exeom, "%s.exeom", output);
    snprintf(r->dbg, sizeof r->dbg, "%s.dbg", output);
    nb_remove_stale_tmps(r->exeom); /* a killed run's, first: this run may fail */
    nb_remove_stale_tmps(r->dbg);
    nb_err e = nb_read_npu_input(model, o->input_shape, o->out_nodes, o->work_dir, &in, st);
    if (e)
        goto out;
    r->form = in.form;
    nb_load_opts lo = {.input_shape = o->input_shape};
    if ((e = nb_model_load_mem(in.onnx, in.len, model, NULL, &lo, &m, st)) ||
        (e = nb_ref_fold(m, st)) || (e = check_model(o, m->graph, &in, &r->n_quantized, st)))
        goto out;
    /* int16 activations (a layer's dst_bits 16): the cube's s16 x s8 for a Conv, MatMul or
       Gemm's x; an RNN's x and state enter its cube task as int8 */
    act16 = calloc((size_t)in.n_layers + 1, sizeof *act16);
    w4 = calloc((size_t)in.n_layers + 1, sizeof *w4);
    if (!act16 || !w4) {
        e = nb_fail(st, NB_ERR_NOMEM, "out of memory");
        goto out;
    }
    for (int k = 0; k < in.n_layers; k++) {
        if (in.layers[k].weight_bits == 4) /* s8 x s4 (the reader allows it on no RNN) */
            w4[n_w4++] = in.layers[k].node;
        if (in.layers[k].act_bits != 16)
            continue;
        if (in.layers[k].r) {
            e = nb_fail(st, NB_ERR_ARG, "%s: layer '%s' (LSTM/GRU) has int16 activations: the "
                        "compiler runs an RNN's input and state as int8 (calibrate it with "
                        "dst_type INT8)", model, in.layers[k].node);
            goto out;
        }
        act16[n_act16++] = in.layers[k].node;
    }
    if ((e = nb_input_scale_advise(m, in.layers, in.n_layers, &adv, &n_adv, st)))
        goto out;
    if (o->input_scale &&
        (e = nb_input_scale_apply(m, in.layers, in.n_layers, o->input_scale, o->cpu_nodes,
                                   &r->plan, st)))
        goto out;
    advise(o, adv, n_adv, &r->plan);
    if ((e = nb_op_table_load(nb_op_table_default_path(), &ops, st)))
        goto out;
    nb_npu_opts no = {.weight_bits = 8, .soc_version = o->soc_version,
                      .input_fp16_nodes = o->all_inputs_fp16 ? NULL : o->input_fp16_nodes, .act16_nodes = act16,
                      .n_act16_nodes = n_act16, .w4_nodes = w4, .n_w4_nodes = n_w4,
                      .cpu_nodes = o->cpu_nodes, .value_scale = r->plan.scale,
                      .value_offset = r->plan.offset, .n_values = r->plan.n_values};
    if ((e = nb_estimate_model(m, &ops, &no, &r->est, st)))
        goto out;
    const nb_npu_graph *g = &r->est.g;
    /* every op the NPU cannot run, with the table's reason, in one line */
    int n_cpu = 0;
    size_t cap = 256, len = 0;
    for (int i = 0; i < g->n_k; i++) {
        n_cpu += !nb_task_in_exeom(&g->k[i]);
        cap += strlen(g->k[i].name) + strlen(g->k[i].onnx_op) + 200;
    }
    if (n_cpu) {
        char *msg = malloc(cap);
        if (!msg) {
            e = nb_fail(st, NB_ERR_NOMEM, "out of memory");
            goto out;
        }
        len = (size_t)snprintf(msg, cap, "%s: %d op%s the NPU cannot run (cut %s away with "
                               "--out_nodes, or rewrite %s):", model, n_cpu,
                               n_cpu == 1 ? "" : "s", n_cpu == 1 ? "it" : "them",
                               n_cpu == 1 ? "it" : "them");
        for (int i = 0, k = 0; i < g->n_k && len < cap; i++)
            if (!nb_task_in_exeom(&g->k[i]))
                len += (size_t)snprintf(msg + len, cap - len, "%s %s (%s): %s", k++ ? ";" : "",
                                        g->k[i].name, g->k[i].onnx_op, g->k[i].reason);
        e = nb_fail(st, NB_ERR_UNSUPPORTED, "%s", msg);
        free(msg);
        goto out;
    }
    for (int i = 0; i < g->n_k; i++) /* the tasks the MCU's core runs, said once */
        if (g->k[i].unit == NB_TASK_CPU)
            nb_warnf(o->warn, o->user, "task '%s' (%s) runs on the MCU's CPU: %s", g->k[i].name,
                     g->k[i].op_type, g->k[i].reason);
    const char *slash = strrchr(output, '/');
    if (slash && slash != output) { /* the output's folder is made, as calibrate does */
        char dir[4200];
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - output), output);
        if (nb_mkdir_p(dir) && errno != EEXIST) {
            e = nb_fail(st, NB_ERR_IO, "--output %s: cannot make the folder: %s", output,
                        strerror(errno));
            goto out;
        }
    }
    /* both files under this process's temporary names, then renamed as a pair (signals
       held): a reader sees the old pair or the new one; a kill leaves the previous good
       output, and the next run to NAME removes the killed run's temporaries */
    char tmp_x[4300], tmp_d[4300];
    nb_tmp_path(r->exeom, tmp_x, sizeof tmp_x);
    nb_tmp_path(r->dbg, tmp_d, sizeof tmp_d);
    if ((e = nb_exeom_write(tmp_x, m, &r->est, in.layers, in.n_layers, o->soc_version,
                            &r->exeom_bytes, st)) ||
        (e = nb_dbg_write(tmp_d, model, m, &r->est, tmp_x, o->input_scale ? &r->plan : NULL,
                          st)) ||
        (e = nb_publish_pair(tmp_x, r->exeom, tmp_d, r->dbg, st))) {
        remove(tmp_x), remove(tmp_d);
        goto out;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    r->ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
out:
    free(adv);
    free(act16);
    free(w4);
    nb_op_table_free(&ops);
    nb_model_free(m);
    nb_npu_input_free(&in);
    if (e)
        r->exeom[0] = r->dbg[0] = 0;
    return e;
}
