/* nanobench accuracy comparison: reading dump files (the simulator's and golden ones) and
 * writing golden dumps (include/nb/accucmp.h; format share/proto/dump.proto). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "dump.pb-c.h"
#include "nb/accucmp.h"
#include "nb/ref.h"
#include "nb/sim.h"

static int code_of(const char *s, bool format)
{
    static const char *const dt[] = {"FLOAT", "FLOAT16", "INT8", "INT32", "UINT8", "", "INT16"};
    if (format) {
        for (int i = 0; i < 64; i++)
            if (!strcmp(nb_sim_format_name(i), s))
                return i;
        return -1;
    }
    for (int i = 0; i < 7; i++)
        if (dt[i][0] && !strcmp(dt[i], s))
            return i;
    if (!strcmp(s, "UINT64"))
        return 10;
    if (!strcmp(s, "BOOL"))
        return 12;
    if (!strcmp(s, "INT4"))
        return 29;
    return -1;
}

static char *dup0(const char *s) { return strdup(s ? s : ""); }

void nb_dump_free(nb_dump *d)
{
    for (int i = 0; i < d->n_t; i++) {
        free(d->t[i].original_name), free(d->t[i].dtype), free(d->t[i].format);
        free(d->t[i].v);
    }
    free(d->t);
    for (int i = 0; i < d->n_covers; i++)
        free(d->covers[i]);
    free(d->covers);
    free(d->in_ids), free(d->out_ids);
    free(d->path), free(d->op_name), free(d->op_type), free(d->source);
    memset(d, 0, sizeof *d);
}

nb_err nb_dump_read(const char *path, int want, nb_dump *d, nb_status *st)
{
    memset(d, 0, sizeof *d);
    uint8_t *buf = NULL;
    size_t len = 0;
    nb_err e = nb_read_file(path, &buf, &len, st);
    if (e)
        return e;
    e = nb_dump_parse(buf, len, path, want, d, st);
    free(buf);
    return e;
}

nb_err nb_dump_parse(const uint8_t *buf, size_t len, const char *path, int want, nb_dump *d,
                     nb_status *st)
{
    memset(d, 0, sizeof *d);
    nb_err e = NB_OK;
    Nanobench__Dump__Dump *p = nanobench__dump__dump__unpack(NULL, len, buf);
    if (!p)
        return nb_fail(st, NB_ERR_FORMAT, "%s: not a nanobench dump file", path);
    if (p->version == 0 && (!p->source || !p->source[0])) { /* an empty or cut file */
        nanobench__dump__dump__free_unpacked(p, NULL);
        return nb_fail(st, NB_ERR_DATA, "%s: a damaged dump (%zu bytes: cut short, or not a dump "
                       "file)", path, len);
    }
    if (p->version != 1) {
        uint32_t v = p->version;
        nanobench__dump__dump__free_unpacked(p, NULL);
        return nb_fail(st, NB_ERR_DATA, "%s: dump version %u (this nanobench reads 1)", path, v);
    }
    /* what every dump holds (share/proto/dump.proto): a file cut after its first fields
       still decodes, without them */
    if (!p->source || (strcmp(p->source, "npu") && strcmp(p->source, "golden")) ||
        !p->op_name || !p->op_name[0] || !p->op_type || !p->op_type[0] ||
        p->n_input + p->n_output == 0) {
        nanobench__dump__dump__free_unpacked(p, NULL);
        return nb_fail(st, NB_ERR_DATA, "%s: a damaged dump (%zu bytes without its source, "
                       "name, type or tensors: cut short?)", path, len);
    }
    d->path = dup0(path);
    d->op_name = dup0(p->op_name);
    d->op_type = dup0(p->op_type);
    d->source = dup0(p->source);
    d->task_id = p->task_id;
    d->inserted = p->inserted;
    d->cycles = p->cycles;
    d->saturations = p->saturations;
    d->covers = calloc(p->n_covers + 1, sizeof *d->covers);
    d->t = calloc(p->n_input + p->n_output + 1, sizeof *d->t);
    if (!d->covers || !d->t || !d->path || !d->op_name || !d->op_type || !d->source) {
        nanobench__dump__dump__free_unpacked(p, NULL);
        nb_dump_free(d);
        return nb_fail(st, NB_ERR_NOMEM, "out of memory");
    }
    for (size_t i = 0; i < p->n_covers; i++)
        d->covers[d->n_covers++] = dup0(p->covers[i]);
    if (p->n_input_tensors || p->n_output_tensors) { /* the task's tensors, in every mode */
        d->in_ids = malloc((p->n_input_tensors + 1) * sizeof *d->in_ids);
        d->out_ids = malloc((p->n_output_tensors + 1) * sizeof *d->out_ids);
        if (!d->in_ids || !d->out_ids) {
            nanobench__dump__dump__free_unpacked(p, NULL);
            nb_dump_free(d);
            return nb_fail(st, NB_ERR_NOMEM, "out of memory");
        }
        if (p->n_input_tensors) /* memcpy from NULL is undefined, even of 0 bytes (fuzz) */
            memcpy(d->in_ids, p->input_tensors, p->n_input_tensors * sizeof *d->in_ids);
        if (p->n_output_tensors)
            memcpy(d->out_ids, p->output_tensors, p->n_output_tensors * sizeof *d->out_ids);
        d->n_in_ids = (int)p->n_input_tensors, d->n_out_ids = (int)p->n_output_tensors;
    }
    for (size_t i = 0; i < p->n_input + p->n_output && !e; i++) {
        bool out = i >= p->n_input;
        if (!(want & (out ? NB_DUMP_OUTPUTS : NB_DUMP_INPUTS)))
            continue;
        const Nanobench__Dump__Tensor *s = out ? p->output[i - p->n_input] : p->input[i];
        nb_dump_tensor *t = &d->t[d->n_t++];
        t->index = (int)s->index;
        t->output = out;
        t->original_name = dup0(s->original_name);
        t->network_output = s->network_output;
        t->dtype = dup0(s->dtype);
        t->format = dup0(s->format);
        t->saturated = s->stats ? s->stats->saturated : 0;
        t->value_scale = 1, t->value_offset = 0;
        if (s->value_scale != 0) {
            if (!isfinite(s->value_scale) || !isfinite(s->value_offset)) {
                e = nb_fail(st, NB_ERR_DATA, "%s: tensor %zu: value scale %g, offset %g", path,
                            i, s->value_scale, s->value_offset);
                break;
            }
            t->value_scale = s->value_scale, t->value_offset = s->value_offset;
        }
        nb_exeom_tensor x = {0};
        int dt = code_of(s->dtype, false), fmt = code_of(s->format, true);
        if (s->n_shape > 6 || dt < 0 || fmt < 0) {
            e = nb_fail(st, NB_ERR_DATA, "%s: tensor %zu: %s %s of rank %zu", path, i,
                        s->dtype, s->format, s->n_shape);
            break;
        }
        x.dtype = (uint8_t)dt, x.format = (uint8_t)fmt, x.rank = (uint8_t)s->n_shape;
        t->rank = (int)s->n_shape;
        for (size_t k = 0; k < s->n_shape; k++) {
            if (s->shape[k] < 0 || s->shape[k] > INT32_MAX) {
                e = nb_fail(st, NB_ERR_DATA, "%s: tensor %zu: dim %lld", path, i,
                            (long long)s->shape[k]);
                break;
            }
            x.dims[k] = (int32_t)s->shape[k];
            t->dims[k] = s->shape[k];
        }
        if (e)
            break;
        double bound = 1; /* the element count, bounded before it is computed */
        for (size_t k = 0; k < s->n_shape; k++)
            bound *= (double)s->shape[k];
        if (bound > (double)(1u << 30)) {
            e = nb_fail(st, NB_ERR_DATA, "%s: tensor %zu: %.0f elements (dumps hold up to 2^30)",
                        path, i, bound);
            break;
        }
        t->numel = nb_sim_numel(&x);
        if (!s->data.len) /* stats only */
            continue;
        int64_t want = nb_sim_tensor_bytes(&x);
        if (want < 0 || (size_t)want != s->data.len) {
            e = nb_fail(st, NB_ERR_DATA, "%s: tensor %zu: %zu bytes for %s %s (its layout "
                        "holds %lld)", path, i, s->data.len, s->dtype, s->format, (long long)want);
            break;
        }
        t->v = malloc(sizeof(double) * ((size_t)t->numel + 1));
        if (!t->v) {
            e = nb_fail(st, NB_ERR_NOMEM, "out of memory");
            break;
        }
        nb_sim_get_all(&x, s->data.data, t->v);
        if (t->value_scale != 1 || t->value_offset != 0) /* back to the value's units */
            for (int64_t k = 0; k < t->numel; k++)
                t->v[k] = (t->v[k] - t->value_offset) / t->value_scale;
    }
    nanobench__dump__dump__free_unpacked(p, NULL);
    if (e)
        nb_dump_free(d);
    return e;
}

/* nb_dump_write_golden with, for each tensor, whether it is a network output (NULL: none). */
static nb_err write_golden(const char *dir, const char *op_name, const char *op_type,
                           uint32_t index, const char *const *names, const nb_tensor *const *ts,
                           const bool *network_output, int n, nb_status *st)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    uint64_t us = (uint64_t)tv.tv_sec * 1000000u + (uint64_t)tv.tv_usec;
    Nanobench__Dump__Dump d = NANOBENCH__DUMP__DUMP__INIT;
    d.version = 1;
    d.op_name = (char *)op_name;
    d.op_type = (char *)op_type;
    d.task_id = index;
    d.timestamp_us = us;
    d.source = "golden";
    Nanobench__Dump__Tensor *tp = calloc((size_t)n + 1, sizeof *tp);
    Nanobench__Dump__Tensor **pp = calloc((size_t)n + 1, sizeof *pp);
    Nanobench__Dump__Stats *sp = calloc((size_t)n + 1, sizeof *sp);
    int64_t *shapes = calloc((size_t)n * 8 + 1, sizeof *shapes);
    if (!tp || !pp || !sp || !shapes) {
        free(tp), free(pp), free(sp), free(shapes);
        return nb_fail(st, NB_ERR_NOMEM, "out of memory");
    }
    for (int i = 0; i < n; i++) {
        const nb_tensor *t = ts[i];
        nanobench__dump__tensor__init(&tp[i]);
        nanobench__dump__stats__init(&sp[i]);
        tp[i].index = (uint32_t)i;
        tp[i].dtype = "FLOAT";
        tp[i].format = "ND";
        tp[i].n_shape = (size_t)t->rank;
        tp[i].shape = shapes + 8 * i;
        for (int k = 0; k < t->rank && k < 8; k++)
            tp[i].shape[k] = t->dims[k];
        tp[i].original_name = (char *)names[i];
        tp[i].tensor_name = (char *)names[i];
        tp[i].network_output = network_output && network_output[i];
        tp[i].data.data = t->data;
        tp[i].data.len = (size_t)t->numel * sizeof(float);
        sp[i].count = (uint64_t)t->numel;
        tp[i].stats = &sp[i];
        pp[i] = &tp[i];
    }
    d.n_output = (size_t)n;
    d.output = pp;
    size_t sz = nanobench__dump__dump__get_packed_size(&d);
    uint8_t *buf = malloc(sz + 1);
    nb_err e = NB_OK;
    if (!buf) {
        e = nb_fail(st, NB_ERR_NOMEM, "out of memory");
    } else {
        nanobench__dump__dump__pack(&d, buf);
        char path[4096];
        nb_sim_dump_file_name(path, sizeof path, dir, op_type, op_name, index, us);
        e = nb_write_file_atomic(path, buf, sz, st);
    }
    free(buf), free(tp), free(pp), free(sp), free(shapes);
    return e;
}

nb_err nb_dump_write_golden(const char *dir, const char *op_name, const char *op_type,
                            uint32_t index, const char *const *names,
                            const nb_tensor *const *ts, int n, nb_status *st)
{
    return write_golden(dir, op_name, op_type, index, names, ts, NULL, n, st);
}

/* The golden dumps of g's nodes, and of every If's branch taken inside them (issue 37: only
 * the If itself was dumped, so every task of a branch read "no golden tensor"). The top
 * graph's nodes keep their indices (depth 0); a branch's nodes are numbered from *next on,
 * dumped under their own names, which the NPU's tasks cover. The branch not taken has no
 * values, so nothing of it. */
static nb_err dump_nodes(const char *tmp, const nb_graph *g, const nb_exec *ex, uint32_t *next,
                         int *n_dumps, int depth, nb_status *st)
{
    nb_err e = NB_OK;
    for (int ni = 0; ni < g->n_nodes && !e; ni++) {
        const nb_node *nd = &g->nodes[ni];
        const char *nm[8];
        const nb_tensor *tv[8];
        bool outv[8];
        int k = 0;
        for (int o = 0; o < nd->n_out && k < 8; o++) {
            if (nd->out[o] < 0)
                continue;
            const nb_tensor *t = nb_exec_get(ex, g->values[nd->out[o]].name);
            if (t && t->dtype == NB_FLOAT) {
                outv[k] = depth == 0 && g->values[nd->out[o]].is_output;
                nm[k] = g->values[nd->out[o]].name, tv[k++] = t;
            }
        }
        uint32_t index = depth ? (*next)++ : (uint32_t)ni;
        if (k) {
            e = write_golden(tmp, nd->name, nd->op_type, index, nm, tv, outv, k, st);
            (*n_dumps)++;
        }
        if (e || strcmp(nd->op_type, "If") || nd->n_in < 1 || nd->in[0] < 0 || depth > 8)
            continue;
        const nb_tensor *c = nb_exec_get(ex, g->values[nd->in[0]].name);
        if (!c || c->numel != 1)
            continue; /* the condition was not kept: no branch to dump */
        const nb_attr *a = nb_attr_find(nd, nb_tensor_get_f64(c, 0) != 0.0 ? "then_branch"
                                                                            : "else_branch");
        if (a && a->g)
            e = dump_nodes(tmp, a->g, ex, next, n_dumps, depth + 1, st);
    }
    return e;
}

nb_err nb_dump_golden_run(const nb_model *m, const nb_exec *ex, const char *dir, int *n,
                          nb_status *st)
{
    const nb_graph *g = m->graph;
    char tmp[4400];
    nb_remove_stale_tmps(dir);
    nb_tmp_path(dir, tmp, sizeof tmp);
    if (nb_mkdir_p(tmp) != 0)
        return nb_fail(st, NB_ERR_IO, "%s: cannot create the dump folder: %s", dir,
                       strerror(errno));
    nb_err e = NB_OK;
    int n_dumps = 0;
    for (int i = 0; i < g->n_inputs && !e; i++) {
        const nb_value *iv = &g->values[g->inputs[i]];
        const nb_tensor *t = nb_exec_get(ex, iv->name);
        if (!t || t->dtype != NB_FLOAT || iv->const_val)
            continue;
        const char *nm1[1] = {iv->name};
        const nb_tensor *tv1[1] = {t};
        e = nb_dump_write_golden(tmp, iv->name, "Input", (uint32_t)(g->n_nodes + i), nm1, tv1,
                                 1, st);
    }
    /* the top graph's nodes keep their indices; branch nodes follow the inputs' */
    uint32_t next = (uint32_t)(g->n_nodes + g->n_inputs);
    if (!e)
        e = dump_nodes(tmp, g, ex, &next, &n_dumps, 0, st);
    if (e) {
        nb_remove_tree(tmp);
        return e;
    }
    if ((e = nb_publish_dir(tmp, dir, nb_is_dump_file_name, st)))
        return e;
    if (n)
        *n = n_dumps;
    return NB_OK;
}
