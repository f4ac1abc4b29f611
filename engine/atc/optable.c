/* nanobench: the Nano's op-support table, read from share/ops.tsv (include/nb/atc.h). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nb/atc.h"

#ifndef NB_SHARE_DIR
#define NB_SHARE_DIR "share"
#endif

const char *nb_op_table_default_path(void)
{
    static char path[4096];
    const char *env = getenv("NANOBENCH_SHARE");
    snprintf(path, sizeof path, "%s/ops.tsv", env && *env ? env : NB_SHARE_DIR);
    return path;
}

const char *nb_unit_name(nb_unit u)
{
    return u == NB_UNIT_CUBE ? "cube" : u == NB_UNIT_CUBE_VECTOR ? "cube+vector" : "vector";
}

/* Splits line at tabs into at most max fields (the line is modified). */
static int split_tabs(char *line, char **f, int max)
{
    int n = 0;
    f[n++] = line;
    for (char *p = line; *p && n < max; p++)
        if (*p == '\t') {
            *p = 0;
            f[n++] = p + 1;
        }
    return n;
}

static int parse_int(const char *s, int lo, int hi, int *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || *end || v < lo || v > hi)
        return -1;
    *out = (int)v;
    return 0;
}

nb_err nb_op_table_load(const char *path, nb_op_table *t, nb_status *st)
{
    memset(t, 0, sizeof *t);
    uint8_t *data;
    size_t len;
    nb_err e = nb_read_file(path, &data, &len, st);
    if (e)
        return e;
    int cap = 0, lineno = 0;
    bool header = false;
    char *next = (char *)data;
    while (next && *next && !e) {
        char *line = next;
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = 0;
        next = nl ? nl + 1 : NULL;
        lineno++;
        size_t l = strlen(line);
        if (l && line[l - 1] == '\r')
            line[--l] = 0;
        if (!l || line[0] == '#')
            continue;
        char *f[6];
        int nf = split_tabs(line, f, 6);
        if (!header) {
            if (nf < 5 || strcmp(f[0], "op") || strcmp(f[1], "unit"))
                e = nb_fail(st, NB_ERR_FORMAT, "%s:%d: expected the header row 'op<TAB>unit<TAB>"
                            "opset_min<TAB>opset_max<TAB>constraints<TAB>note'", path, lineno);
            header = true;
            continue;
        }
        if (nf < 4) {
            e = nb_fail(st, NB_ERR_FORMAT, "%s:%d: %d columns, expected at least 4", path,
                        lineno, nf);
            break;
        }
        if (t->n == cap) {
            cap = cap ? 2 * cap : 64;
            nb_op_support *o = realloc(t->ops, sizeof *o * (size_t)cap);
            if (!o) {
                e = nb_fail(st, NB_ERR_NOMEM, "out of memory");
                break;
            }
            t->ops = o;
        }
        nb_op_support *o = &t->ops[t->n];
        memset(o, 0, sizeof *o);
        if (!*f[0] || strlen(f[0]) >= sizeof o->op) {
            e = nb_fail(st, NB_ERR_FORMAT, "%s:%d: bad op name", path, lineno);
            break;
        }
        snprintf(o->op, sizeof o->op, "%s", f[0]);
        if (!strcmp(f[1], "vector"))
            o->unit = NB_UNIT_VECTOR;
        else if (!strcmp(f[1], "cube"))
            o->unit = NB_UNIT_CUBE;
        else if (!strcmp(f[1], "cube+vector"))
            o->unit = NB_UNIT_CUBE_VECTOR;
        else {
            e = nb_fail(st, NB_ERR_FORMAT, "%s:%d: unit '%s' is not vector, cube or cube+vector",
                        path, lineno, f[1]);
            break;
        }
        if (parse_int(f[2], 1, 99, &o->opset_min) || parse_int(f[3], 1, 99, &o->opset_max) ||
            o->opset_min > o->opset_max) {
            e = nb_fail(st, NB_ERR_FORMAT, "%s:%d: bad opset range '%s'..'%s'", path, lineno,
                        f[2], f[3]);
            break;
        }
        if (nf > 4 && *f[4]) {
            char *s2 = NULL;
            for (char *kv = strtok_r(f[4], ";", &s2); kv && !e; kv = strtok_r(NULL, ";", &s2)) {
                char *eq = strchr(kv, '=');
                int v;
                if (eq)
                    *eq = 0;
                if (!eq || parse_int(eq + 1, 1, 1 << 20, &v))
                    e = nb_fail(st, NB_ERR_FORMAT, "%s:%d: constraint '%s' is not key=N", path,
                                lineno, kv);
                else if (!strcmp(kv, "seq_len"))
                    o->max_seq_len = v;
                else if (!strcmp(kv, "directions"))
                    o->max_directions = v;
                else
                    e = nb_fail(st, NB_ERR_FORMAT, "%s:%d: unknown constraint '%s' (seq_len, "
                                "directions)", path, lineno, kv);
            }
        }
        if (nf > 5)
            snprintf(o->note, sizeof o->note, "%s", f[5]);
        for (int i = 0; i < t->n && !e; i++) /* one row per op and opset */
            if (!strcmp(t->ops[i].op, o->op) && o->opset_min <= t->ops[i].opset_max &&
                t->ops[i].opset_min <= o->opset_max)
                e = nb_fail(st, NB_ERR_FORMAT, "%s:%d: %s is listed again for opsets %d..%d",
                            path, lineno, o->op, o->opset_min, o->opset_max);
        if (!e)
            t->n++;
    }
    free(data);
    if (!e && !header)
        e = nb_fail(st, NB_ERR_FORMAT, "%s: no header row", path);
    if (e)
        nb_op_table_free(t);
    return e;
}

void nb_op_table_free(nb_op_table *t)
{
    free(t->ops);
    t->ops = NULL;
    t->n = 0;
}

const nb_op_support *nb_op_table_find(const nb_op_table *t, const char *op_type, int opset)
{
    for (int i = 0; i < t->n; i++)
        if (t->ops[i].op[0] == op_type[0] && !strcmp(t->ops[i].op, op_type) &&
            opset >= t->ops[i].opset_min &&
            opset <= t->ops[i].opset_max)
            return &t->ops[i];
    return NULL;
}

/* ---- the exeom's kernels (share/doc/exeom.md): the ids the compiler writes, here so that
   the lowering, and through it the estimate, knows which ops nanobench can compile ---- */

static const char *const kernels[] = {
    NULL,            /* 0: none */
    "AscendQuant",   "AscendDequant", "TransData", "Cast",     "Conv",
    "ConvTranspose", "MatMul",        "Gemm",      "LSTM",     "GRU",
    "Add",           "Sub",           "Mul",       "Div",      "Pow",
    "Max",           "Min",           "Relu",      "LeakyRelu", "Sigmoid",
    "Tanh",          "Exp",           "Log",       "Abs",      "Neg",
    "Clip",          "Sqrt",          "Reshape",   "Identity", "Squeeze",
    "Unsqueeze",     "Flatten",       "Transpose", "Concat",   "Slice",
    "MaxPool",       "GlobalAveragePool", "GlobalMaxPool", "ReduceMean", "ReduceMax",
    "ReduceMin",     "ReduceSum",     "Softmax",   "Greater",  "Equal",
    "Or",            "And",           "Where",     "PRelu",    "Elu",
    "BatchNormalization", "InstanceNormalization", "Pad", "Round", "ReduceL2",
    "Gather",        "Tile",          "SpaceToDepth", "ArgMax", "If",
    NB_EXEOM_CPU_ONNX, /* 61: a CPU task running its node through the reference */
};
#define N_KERNELS ((int)(sizeof kernels / sizeof kernels[0]))

int nb_exeom_kernel_id(const char *op_type)
{
    for (int i = 1; i < N_KERNELS; i++)
        if (kernels[i][0] == op_type[0] && !strcmp(kernels[i], op_type))
            return i;
    return 0;
}

bool nb_task_in_exeom(const struct nb_npu_task *k)
{
    return k->unit != NB_TASK_CPU || k->cpu_ok; /* the CPU's kernels: If, CpuOnnx */
}

const char *nb_exeom_kernel_name(int id) { return id > 0 && id < N_KERNELS ? kernels[id] : "?"; }

bool nb_npu_has_kernel(const char *op_type) { return nb_exeom_kernel_id(op_type) != 0; }
