/* nanobench bring-up: its data (bu.h): the model's inputs, the --data_dir folders and the
 * evaluation inputs. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bu.h"
#include "nb/ir.h"
#include "nb/quant.h"

/* The ';'-separated folders of dirs into parts (each malloc'd); returns the count. */
static int split_dirs(const char *dirs, char **parts, int max)
{
    int n = 0;
    for (const char *p = dirs; n < max;) {
        size_t l = strcspn(p, ";");
        parts[n++] = strndup(p, l);
        if (!p[l])
            break;
        p += l + 1;
    }
    return n;
}

/* K evaluation inputs of uniform values in [-1, 1) (seeds 1..K, infer's random:SEED),
 * written as OUT/eval/<input index>/<k>.npy: a QAT model brought up without data. */
static nb_err random_eval(bu *b)
{
    b->n_eval = b->eval_count;
    b->eval = calloc((size_t)b->n_eval * (size_t)b->n_in + 1, sizeof *b->eval);
    if (!b->eval)
        return nb_fail(b->st, NB_ERR_NOMEM, "out of memory");
    b->eval_random = true;
    for (int i = 0; i < b->n_in; i++) {
        char dir[3400];
        snprintf(dir, sizeof dir, "%s/eval/%d", b->outdir, i);
        if (nb_mkdir_p(dir))
            return nb_fail(b->st, NB_ERR_IO, "%s: cannot make the folder: %s", dir,
                           strerror(errno));
        for (int k = 0; k < b->n_eval; k++) {
            nb_tensor *t = NULL;
            char path[3500];
            snprintf(path, sizeof path, "%s/%04d.npy", dir, k);
            if (nb_tensor_new((nb_dtype)b->in_dtype[i], b->in_rank[i], b->in_dims[i], &t, b->st))
                return nb_prefix(b->st, "input '%s'", b->in_name[i]);
            if (t->dtype == NB_FLOAT || t->dtype == NB_FLOAT16) /* integer inputs: zeros */
                nb_tensor_fill_uniform(t, (uint32_t)k + 1, -1.0, 1.0);
            nb_err e = nb_npy_write(path, t, b->st);
            nb_tensor_free(t);
            if (e)
                return e;
            if (!(b->eval[k * b->n_in + i] = strdup(path)))
                return nb_fail(b->st, NB_ERR_NOMEM, "out of memory");
        }
    }
    return NB_OK;
}

/* The evaluation inputs: file k of each folder of --eval_dir (the first K), else of
 * --data_dir (the last K); without either, random inputs. */
nb_err bu_pick_eval(bu *b)
{
    if (!b->eval_dir && !b->data_dir)
        return random_eval(b);
    const char *dirs = b->eval_dir ? b->eval_dir : b->data_dir;
    const char *flag = b->eval_dir ? "--eval_dir" : "--data_dir";
    char *parts[MAX_IN];
    int nd = split_dirs(dirs, parts, MAX_IN);
    char **files[MAX_IN] = {0};
    int nf[MAX_IN] = {0}, least = -1;
    nb_err e = NB_OK;
    for (int i = 0; i < nd; i++) {
        int skipped = 0;
        char first[4400];
        nf[i] = parts[i] ? nb_list_batches(parts[i], &files[i], &skipped, first, sizeof first)
                         : -1; /* the batches: calibrate's rule, other files skipped */
        if (nf[i] < 0 && !e)
            e = nb_fail(b->st, NB_ERR_IO, "%s %s: %s", flag, parts[i] ? parts[i] : "?",
                        strerror(errno));
        least = least < 0 || nf[i] < least ? nf[i] : least;
    }
    if (!e && nd != b->n_in)
        e = nb_fail(b->st, NB_ERR_ARG, "%s gives %d folder%s for %d input%s", flag, nd,
                    nd == 1 ? "" : "s", b->n_in, b->n_in == 1 ? "" : "s");
    if (!e && least <= 0)
        e = nb_fail(b->st, NB_ERR_ARG, "%s: no files to evaluate on (one folder of .npy or .bin "
                    "files per model input, ';' between them: not their parent folder)", dirs);
    if (!e) {
        b->n_eval = b->eval_count < least ? b->eval_count : least;
        b->eval_avail = least;
        int first = b->eval_dir ? 0 : least - b->n_eval;
        b->eval = calloc((size_t)b->n_eval * (size_t)b->n_in + 1, sizeof *b->eval);
        if (!b->eval)
            e = nb_fail(b->st, NB_ERR_NOMEM, "out of memory");
        for (int k = 0; !e && k < b->n_eval; k++)
            for (int i = 0; i < b->n_in; i++)
                if (!(b->eval[k * b->n_in + i] = strdup(files[i][first + k])))
                    e = nb_fail(b->st, NB_ERR_NOMEM, "out of memory");
        b->eval_from_dir = b->eval_dir != NULL;
    }
    for (int i = 0; i < nd; i++) {
        nb_files_free(files[i], nf[i] > 0 ? nf[i] : 0);
        free(parts[i]);
    }
    return e;
}

/* "name:1,d1,..." of input v (its dynamic batch as 1) appended to the malloc'd text *s */
static bool append_shape(char **s, const nb_value *v, bool batch1)
{
    size_t at = *s ? strlen(*s) : 0, need = at + strlen(v->name) + 2 + (size_t)v->rank * 21 + 1;
    char *n = realloc(*s, need);
    if (!n)
        return false;
    *s = n;
    at += (size_t)snprintf(n + at, need - at, "%s%s:", at ? ";" : "", v->name);
    for (int d = 0; d < v->rank; d++)
        at += (size_t)snprintf(n + at, need - at, "%s%lld", d ? "," : "",
                               (long long)(d == 0 && batch1 ? 1 : v->dims[d]));
    return true;
}

/* a dynamic batch alone taken as 1 by every step (infer reads .bin files of that shape):
   --input_shape for every input, as calibrate and atc take it */
static nb_err batch_as_1(bu *b, const nb_graph *g, const int *order)
{
    bool any = false;
    for (int i = 0; i < g->n_inputs; i++) {
        const nb_value *v = &g->values[order[i]];
        bool other = false;
        for (int d = 1; d < v->rank; d++)
            other |= v->dims[d] < 0;
        any |= v->rank > 0 && v->dims[0] < 0 && !other;
    }
    if (!any)
        return NB_OK;
    for (int pass = 0; pass < 2; pass++) /* the dynamic ones first, then the static */
        for (int i = 0; i < g->n_inputs; i++) {
            const nb_value *v = &g->values[order[i]];
            bool dyn = v->rank > 0 && v->dims[0] < 0, other = false;
            for (int d = 1; d < v->rank; d++)
                other |= v->dims[d] < 0;
            bool take = pass == 0 ? dyn && !other : v->rank > 0 && !dyn;
            if (take && !append_shape(&b->shape_auto, v, dyn))
                return nb_fail(b->st, NB_ERR_NOMEM, "out of memory");
        }
    b->shape = b->shape_auto;
    return NB_OK;
}

/* The model's inputs in the --data_dir order (calibrate's: --input_shape's when it names
 * every input, else the model's). */
nb_err bu_model_inputs(bu *b)
{
    nb_model *m = NULL;
    nb_load_opts lo = {.input_shape = b->shape, .weights_in_place = true};
    if (nb_model_load(b->model, &lo, &m, b->st))
        return b->st->code;
    const nb_graph *g = m->graph;
    nb_err e = NB_OK;
    if (g->n_inputs > MAX_IN) {
        e = nb_fail(b->st, NB_ERR_ARG, "%s has %d inputs; bringup takes up to %d", b->model,
                    g->n_inputs, MAX_IN);
        goto out;
    }
    int order[MAX_IN];
    for (int i = 0; i < g->n_inputs; i++)
        order[i] = g->inputs[i];
    if (b->shape) {
        nb_shape_override *ov = NULL;
        int nov = 0;
        nb_status ignore = {0};
        if (!nb_parse_input_shape(b->shape, &ov, &nov, &ignore) && nov == g->n_inputs)
            for (int i = 0; i < nov; i++)
                order[i] = nb_graph_find(g, ov[i].name);
        nb_shape_overrides_free(ov, nov);
    }
    b->n_in = g->n_inputs;
    b->qat = nb_graph_has_qdq(g);
    for (int i = 0; i < g->n_inputs; i++) {
        if (order[i] < 0)
            order[i] = g->inputs[i];
        const nb_value *v = &g->values[order[i]];
        for (int q = 0; q < g->n_inputs; q++)
            if (g->inputs[q] == order[i])
                b->in_graph[i] = q;
        if (!(b->in_name[i] = strdup(v->name))) {
            e = nb_fail(b->st, NB_ERR_NOMEM, "out of memory");
            goto out;
        }
        b->in_rank[i] = v->rank < 0 ? 0 : v->rank;
        for (int d = 0; d < b->in_rank[i] && d < 8; d++)
            b->in_dims[i][d] = v->dims[d] < 0 ? 1 : v->dims[d];
        b->in_dtype[i] = v->dtype;
        b->n_float_in += v->dtype == NB_FLOAT || v->dtype == NB_FLOAT16;
    }
    if (!b->shape)
        e = batch_as_1(b, g, order);
out:
    nb_model_free(m);
    return e;
}

/* Whether name is one of the model's graph outputs. */
bool bu_model_output(const char *model, const char *shape, const char *name)
{
    nb_status st = {0};
    nb_model *m = NULL;
    nb_load_opts lo = {.input_shape = shape, .weights_in_place = true};
    if (nb_model_load(model, &lo, &m, &st))
        return false;
    bool found = false;
    for (int i = 0; i < m->graph->n_outputs && !found; i++)
        found = !strcmp(m->graph->values[m->graph->outputs[i]].name, name);
    nb_model_free(m);
    return found;
}

bool bu_model_is_qdq(const char *model, const char *shape)
{
    nb_status st = {0};
    nb_model *m = NULL;
    nb_load_opts lo = {.input_shape = shape, .weights_in_place = true};
    if (nb_model_load(model, &lo, &m, &st))
        return false;
    bool q = nb_graph_has_qdq(m->graph);
    nb_model_free(m);
    return q;
}
