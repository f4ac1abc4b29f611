/* nanobench bringup: its data (bringup.h): the model's inputs, the --data_dir folders and
 * the evaluation inputs. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "bringup.h"
#include "cli.h"
#include "nb/accucmp.h"
#include "nb/ir.h"
#include "nb/quant.h"
#include "tui/job.h"

/* The ';'-separated folders of dirs into parts (each malloc'd); returns the count. */
int split_dirs(const char *dirs, char **parts, int max)
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

/* The evaluation inputs: file k of each folder of --eval_dir (the first K), else of
 * --data_dir (the last K). */
/* K evaluation inputs of uniform values in [-1, 1) (seeds 1..K, infer's random:SEED),
 * written as OUT/eval/<input index>/<k>.npy: a QAT model brought up without data. */
static int random_eval(bu *b)
{
    b->n_eval = b->eval_count;
    b->eval = calloc((size_t)b->n_eval * (size_t)b->n_in + 1, sizeof *b->eval);
    if (!b->eval)
        return cli_fail(1, "out of memory");
    b->eval_random = true;
    for (int i = 0; i < b->n_in; i++) {
        char dir[3400];
        snprintf(dir, sizeof dir, "%s/eval/%d", b->outdir, i);
        if (nb_mkdir_p(dir))
            return cli_fail(2, "bringup: %s: cannot make the folder: %s", dir, strerror(errno));
        for (int k = 0; k < b->n_eval; k++) {
            nb_status st = {0};
            nb_tensor *t = NULL;
            char path[3500];
            snprintf(path, sizeof path, "%s/%04d.npy", dir, k);
            if (nb_tensor_new((nb_dtype)b->in_dtype[i], b->in_rank[i], b->in_dims[i], &t, &st))
                return cli_fail(nb_exit_code(st.code), "bringup: input '%s': %s", b->in_name[i],
                                st.msg);
            if (t->dtype == NB_FLOAT || t->dtype == NB_FLOAT16) /* integer inputs: zeros */
                nb_tensor_fill_uniform(t, (uint32_t)k + 1, -1.0, 1.0);
            nb_err e = nb_npy_write(path, t, &st);
            nb_tensor_free(t);
            if (e)
                return cli_error(&st);
            if (!(b->eval[k * b->n_in + i] = strdup(path)))
                return cli_fail(1, "out of memory");
        }
    }
    return 0;
}

int pick_eval(bu *b)
{
    if (!b->eval_dir && !b->data_dir)
        return random_eval(b);
    const char *dirs = b->eval_dir ? b->eval_dir : b->data_dir;
    char *parts[MAX_IN];
    int nd = split_dirs(dirs, parts, MAX_IN);
    char **files[MAX_IN] = {0};
    int nf[MAX_IN] = {0}, least = -1, rc = 0;
    for (int i = 0; i < nd; i++) {
        int skipped = 0;
        char first[4400];
        nf[i] = parts[i] ? nb_list_batches(parts[i], &files[i], &skipped, first, sizeof first)
                         : -1; /* the batches: calibrate's rule, other files skipped */
        (void)first;
        if (nf[i] < 0 && !rc)
            rc = cli_fail(2, "bringup: %s %s: %s", b->eval_dir ? "--eval_dir" : "--data_dir",
                          parts[i] ? parts[i] : "?", strerror(errno));
        least = least < 0 || nf[i] < least ? nf[i] : least;
    }
    if (!rc && nd != b->n_in)
        rc = cli_fail(2, "bringup: %s gives %d folder%s for %d input%s",
                      b->eval_dir ? "--eval_dir" : "--data_dir", nd, nd == 1 ? "" : "s",
                      b->n_in, b->n_in == 1 ? "" : "s");
    if (!rc && least <= 0)
        rc = cli_fail(2, "bringup: %s: no files to evaluate on (one folder of .npy or .bin "
                      "files per model input, ';' between them: not their parent folder)", dirs);
    if (!rc) {
        b->n_eval = b->eval_count < least ? b->eval_count : least;
        b->eval_avail = least;
        int first = b->eval_dir ? 0 : least - b->n_eval;
        b->eval = calloc((size_t)b->n_eval * (size_t)b->n_in, sizeof *b->eval);
        if (!b->eval)
            rc = cli_fail(1, "out of memory");
        for (int k = 0; !rc && k < b->n_eval; k++)
            for (int i = 0; i < b->n_in; i++)
                if (!(b->eval[k * b->n_in + i] = strdup(files[i][first + k])))
                    rc = cli_fail(1, "out of memory");
        b->eval_from_dir = b->eval_dir != NULL;
    }
    for (int i = 0; i < nd; i++) {
        nb_files_free(files[i], nf[i] > 0 ? nf[i] : 0);
        free(parts[i]);
    }
    return rc;
}

/* The model's inputs in the --data_dir order (calibrate's: --input_shape's when it names
 * every input, else the model's), and every float input for atc's --input_fp16_nodes. */
int model_inputs(bu *b)
{
    nb_status st = {0};
    nb_model *m = NULL;
    nb_load_opts lo = {.input_shape = b->shape, .weights_in_place = true};
    if (nb_model_load(b->model, &lo, &m, &st))
        return cli_fail(nb_exit_code(st.code), "bringup: %s", st.msg);
    const nb_graph *g = m->graph;
    int rc = 0;
    if (g->n_inputs > MAX_IN) {
        rc = cli_fail(2, "bringup: %s has %d inputs; bringup takes up to %d", b->model,
                      g->n_inputs, MAX_IN);
        goto out;
    }
    int order[MAX_IN];
    for (int i = 0; i < g->n_inputs; i++)
        order[i] = g->inputs[i];
    if (b->shape) {
        nb_shape_override *ov = NULL;
        int nov = 0;
        if (!nb_parse_input_shape(b->shape, &ov, &nov, &st) && nov == g->n_inputs)
            for (int i = 0; i < nov; i++)
                order[i] = nb_graph_find(g, ov[i].name);
        nb_shape_overrides_free(ov, nov);
    }
    b->n_in = g->n_inputs;
    b->qat = nb_graph_has_qdq(g);
    size_t len = 0;
    b->fp16_all[0] = 0;
    for (int i = 0; i < g->n_inputs; i++) {
        if (order[i] < 0)
            order[i] = g->inputs[i];
        const nb_value *v = &g->values[order[i]];
        if (!(b->in_name[i] = strdup(v->name))) {
            rc = cli_fail(1, "out of memory");
            goto out;
        }
        b->in_rank[i] = v->rank < 0 ? 0 : v->rank;
        for (int d = 0; d < b->in_rank[i] && d < 8; d++)
            b->in_dims[i][d] = v->dims[d] < 0 ? 1 : v->dims[d];
        b->in_dtype[i] = v->dtype;
        /* a dynamic batch alone is taken as 1 by every step: infer too reads .bin files of
           that shape (it needs --input_shape for them) */
        bool dyn_batch = !b->shape && v->rank > 0 && v->dims[0] < 0, other = false;
        for (int d = 1; d < v->rank; d++)
            other |= v->dims[d] < 0;
        if (dyn_batch && !other) {
            size_t at = strlen(b->shape_auto);
            at += (size_t)snprintf(b->shape_auto + at, sizeof b->shape_auto - at, "%s%s:1",
                                   at ? ";" : "", v->name);
            for (int d = 1; d < v->rank && at < sizeof b->shape_auto; d++)
                at += (size_t)snprintf(b->shape_auto + at, sizeof b->shape_auto - at, ",%lld",
                                       (long long)v->dims[d]);
        }
        if ((v->dtype == NB_FLOAT || v->dtype == NB_FLOAT16) && len + strlen(v->name) + 2 < sizeof b->fp16_all)
            len += (size_t)snprintf(b->fp16_all + len, sizeof b->fp16_all - len, "%s%s",
                                    len ? ";" : "", v->name);
    }
    if (!rc && !b->shape && b->shape_auto[0]) { /* the static inputs too, by name */
        for (int i = 0; i < g->n_inputs; i++) {
            const nb_value *v = &g->values[order[i]];
            if (v->rank <= 0 || v->dims[0] < 0)
                continue;
            size_t at = strlen(b->shape_auto);
            at += (size_t)snprintf(b->shape_auto + at, sizeof b->shape_auto - at, ";%s:", v->name);
            for (int d = 0; d < v->rank && at < sizeof b->shape_auto; d++)
                at += (size_t)snprintf(b->shape_auto + at, sizeof b->shape_auto - at, "%s%lld",
                                       d ? "," : "", (long long)v->dims[d]);
        }
        b->shape = b->shape_auto;
    }
out:
    nb_model_free(m);
    return rc;
}

/* The model's graph outputs' names, for: are the NPU's outputs among them? */
bool model_output(const char *model, const char *shape, const char *name)
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


bool model_is_qdq(const char *model, const char *shape)
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
