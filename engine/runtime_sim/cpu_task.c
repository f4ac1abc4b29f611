/* nanobench simulated NPU: the MCU's CPU tasks of kernel CpuOnnx (share/doc/exeom.md). The
 * task's last input is its node as a one-node ONNX model (nb_cpu_node_model: the node, and
 * under --nb_input_scale the Sub / Mul that take its inputs back first); the core runs
 * it with the reference's kernels in the node's own types (float32 for float: the M-core's
 * data type). At the boundary each input is read from its exeom tensor (fp16 activations,
 * int32 for int64 values, float32 constants) into the node's type, and each output is
 * written back in its tensor's type (fp16 rounded and clamped at 65504 as every fp16 write
 * is, the clamps counted as the task's saturations). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nb/ref.h"
#include "sim_internal.h"

/* the logical multi-index of row-major element e of dims[rank] */
static void unravel(int64_t e, int rank, const int32_t *dims, int64_t *idx)
{
    for (int d = rank - 1; d >= 0; d--) {
        int64_t n = dims[d] > 0 ? dims[d] : 1;
        idx[d] = e % n;
        e /= n;
    }
}

nb_err sim_cpu_load(nb_sim_model *m, int ki, nb_status *st)
{
    sim_task *k = &m->k[ki];
    int bt = k->n_in > 0 ? k->in[k->n_in - 1] : -1;
    const nb_exeom_tensor *b = bt >= 0 ? &m->x.t[bt] : NULL;
    if (!b || b->role != ROLE_W || b->dtype != DT_U8 || b->rank != 1 || b->bytes < 1)
        return nb_fail(st, NB_ERR_DATA, "task %d (CpuOnnx): its last input is not the node's "
                       "model (a UINT8 weight)", ki);
    char what[64];
    snprintf(what, sizeof what, "task %d (CpuOnnx)", ki);
    nb_load_opts lo = {0};
    nb_model *nm = NULL;
    nb_err e = nb_model_load_mem(sim_ptr(m, bt), b->bytes, what, NULL, &lo, &nm, st);
    if (e)
        return nb_prefix(st, "the node of a CPU task"), e;
    const nb_graph *g = nm->graph;
    if (g->n_nodes < 1 || g->n_inputs != k->n_in - 1 || g->n_outputs != k->n_out) {
        nb_fail(st, NB_ERR_DATA, "%s: its node model has %d nodes, %d inputs and %d outputs "
                "for %d and %d operands", what, g->n_nodes, g->n_inputs, g->n_outputs,
                k->n_in - 1, k->n_out);
        nb_model_free(nm); /* after the message: it names the model's counts */
        return NB_ERR_DATA;
    }
    for (int i = 0; i < k->n_in - 1 + k->n_out; i++) {
        bool in = i < k->n_in - 1;
        int t = in ? k->in[i] : k->out[i - (k->n_in - 1)];
        const nb_value *v = &g->values[in ? g->inputs[i] : g->outputs[i - (k->n_in - 1)]];
        int64_t numel = 1;
        for (int d = 0; d < v->rank; d++)
            numel *= v->dims[d] >= 0 ? v->dims[d] : -1;
        if (t < 0 || v->rank < 0 || numel < 0 || !sim_bits(m->x.t[t].dtype) ||
            numel != nb_sim_numel(&m->x.t[t])) {
            nb_fail(st, NB_ERR_DATA, "%s: %s %d of its node model does not match its tensor's "
                    "size or type", what, in ? "input" : "output",
                    in ? i : i - (k->n_in - 1));
            nb_model_free(nm); /* after the message */
            return NB_ERR_DATA;
        }
    }
    nb_exec *x = NULL;
    if ((e = nb_exec_create(nm, NULL, &x, st))) {
        nb_model_free(nm);
        return nb_prefix(st, "%s", what), e;
    }
    k->cpu_m = nm;
    k->cpu_x = x;
    return NB_OK;
}

nb_err sim_cpu_run(nb_sim_model *m, const sim_task *k, nb_status *st)
{
    const nb_graph *g = k->cpu_m->graph;
    int ni = k->n_in - 1;
    nb_tensor *in[NB_EXEOM_MAX_IN] = {0};
    const char *names[NB_EXEOM_MAX_IN];
    int64_t idx[6];
    nb_err e = NB_OK;
    for (int i = 0; i < ni && !e; i++) {
        const nb_value *v = &g->values[g->inputs[i]];
        const nb_exeom_tensor *d = &m->x.t[k->in[i]];
        const uint8_t *p = sim_ptr(m, k->in[i]);
        names[i] = v->name;
        if ((e = nb_tensor_new(v->dtype, v->rank, v->dims, &in[i], st)))
            break;
        for (int64_t j = 0; j < in[i]->numel; j++) {
            unravel(j, d->rank, d->dims, idx);
            nb_tensor_set_f64(in[i], j, sim_load(d->dtype, p, sim_ph(m, d, idx)));
        }
    }
    if (!e && (e = nb_exec_run(k->cpu_x, ni, names, in, st)) && e != NB_ERR_NOMEM) {
        /* the node and its operands come from the exeom: bad data, not a bug */
        nb_prefix(st, "CPU task (CpuOnnx)");
        st->code = e = NB_ERR_DATA;
    }
    for (int o = 0; o < k->n_out && !e; o++) {
        const nb_tensor *y = nb_exec_output(k->cpu_x, o);
        const nb_exeom_tensor *d = &m->x.t[k->out[o]];
        uint8_t *p = sim_ptr(m, k->out[o]);
        if (!y || y->numel != nb_sim_numel(d)) {
            e = nb_fail(st, NB_ERR_DATA, "CPU task (CpuOnnx): output %d has %lld values for a "
                        "tensor of %lld", o, y ? (long long)y->numel : 0LL,
                        (long long)nb_sim_numel(d));
            break;
        }
        for (int64_t j = 0; j < y->numel; j++) {
            unravel(j, d->rank, d->dims, idx);
            double v = nb_tensor_get_f64(y, j);
            /* an int64 value beyond the NPU's int32 clamps there: counted as the fp16 ones */
            if (d->dtype == DT_I32 && (v > 2147483647.0 || v < -2147483648.0))
                nb_sim_saturations++;
            sim_store(d->dtype, p, sim_ph(m, d, idx), v);
        }
    }
    for (int i = 0; i < ni; i++)
        nb_tensor_free(in[i]);
    return e;
}

void sim_cpu_free(sim_task *k)
{
    nb_exec_free(k->cpu_x);
    nb_model_free(k->cpu_m);
    k->cpu_x = NULL;
    k->cpu_m = NULL;
}

static bool in_list(const char *op, const char *const *list)
{
    for (int i = 0; list[i]; i++)
        if (!strcmp(op, list[i]))
            return true;
    return false;
}

static int64_t numel_of(const nb_value *v)
{
    int64_t n = 1;
    for (int d = 0; d < v->rank; d++)
        n *= v->dims[d] > 0 ? v->dims[d] : 1;
    return n;
}

void sim_cpu_profile(const nb_sim_model *m, const sim_task *k, const nb_cycle_params *cp,
                     nb_sim_task_profile *pr)
{
    const nb_graph *g = k->cpu_m->graph;
    const nb_node *n = &g->nodes[g->n_nodes - 1]; /* the node, after any prologue */
    const char *op = n->op_type;
    static const char *const math[] = {"Exp", "Log", "Sin", "Cos", "Tan", "Tanh", "Sigmoid",
                                       "Erf", "Pow", "Softplus", "Mish", "Elu", "Selu", "Celu",
                                       "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh",
                                       "Acosh", "Atanh", "Softmax", "LogSoftmax", "Gelu",
                                       "HardSwish", "HardSigmoid", NULL};
    static const char *const divs[] = {"Div", "Sqrt", "Reciprocal", "LpNormalization",
                                       "ReduceL2", "Softsign", "LayerNormalization",
                                       "InstanceNormalization", "Mod", NULL};
    double compute = 0, macs = 0;
    const nb_value *y = n->n_out > 0 && n->out[0] >= 0 ? &g->values[n->out[0]] : NULL;
    const nb_value *x = n->n_in > 0 && n->in[0] >= 0 ? &g->values[n->in[0]] : NULL;
    const nb_value *w = n->n_in > 1 && n->in[1] >= 0 ? &g->values[n->in[1]] : NULL;
    double ny = y ? (double)numel_of(y) : 0, nx = x ? (double)numel_of(x) : 0;
    if ((!strcmp(op, "Conv") || !strcmp(op, "ConvTranspose")) && w && w->rank >= 3) {
        double taps = 1;
        for (int d = 2; d < w->rank; d++)
            taps *= (double)w->dims[d];
        /* each output (Conv) or input (ConvTranspose) element: C/group x taps products */
        macs = (!strcmp(op, "Conv") ? ny : nx) * (double)w->dims[1] * taps;
    } else if ((!strcmp(op, "MatMul") || !strcmp(op, "Gemm")) && x && x->rank >= 1) {
        bool ta = !strcmp(op, "Gemm") && nb_attr_int(n, "transA", 0);
        macs = ny * (double)x->dims[ta && x->rank == 2 ? 0 : x->rank - 1];
    } else if ((!strcmp(op, "LSTM") || !strcmp(op, "GRU")) && x && w && x->rank == 3 &&
               w->rank == 3) {
        double hidden = (double)nb_attr_int(n, "hidden_size", 1);
        macs = (double)x->dims[0] * (double)x->dims[1] * (double)w->dims[0] *
               (double)w->dims[1] * ((double)x->dims[2] + hidden);
    }
    if (macs > 0)
        compute = macs * cp->cpu_mac;
    else {
        /* an element-wise op, a reduction or a data move: every element it reads or
           writes once, at its class's cost; Pow by a constant 2 is a multiply */
        double elems = nx > ny ? nx : ny;
        bool square = false;
        if (!strcmp(op, "Pow") && k->n_in > 2 && k->in[1] >= 0) {
            const nb_exeom_tensor *e = &m->x.t[k->in[1]];
            square = e->role == ROLE_W && nb_sim_numel(e) == 1 &&
                     sim_load(e->dtype, (const uint8_t *)m->x.weights + e->place, 0) == 2;
        }
        double cost = square                ? cp->cpu_elem
                      : in_list(op, math)   ? cp->cpu_math
                      : in_list(op, divs)   ? cp->cpu_div
                                            : cp->cpu_elem;
        compute = elems * cost;
    }
    /* the boundary: each operand converted between its tensor's type and the node's */
    for (int i = 0; i < k->n_in - 1 + k->n_out; i++) {
        int t = i < k->n_in - 1 ? k->in[i] : k->out[i - (k->n_in - 1)];
        const nb_exeom_tensor *d = &m->x.t[t];
        if (d->role == ROLE_W) /* constants are stored in the node's type */
            pr->weight_bytes += d->bytes;
        else if (d->dtype != DT_FLOAT)
            compute += (double)nb_sim_numel(d) * cp->cpu_io;
        if (d->role != ROLE_W)
            *(i < k->n_in - 1 ? &pr->bytes_in : &pr->bytes_out) += d->bytes;
    }
    pr->macs = (uint64_t)macs;
    pr->compute = (uint64_t)ceil(compute);
    pr->movement = 0;
    pr->cycles = pr->compute + (uint64_t)cp->cpu_task_overhead;
}
