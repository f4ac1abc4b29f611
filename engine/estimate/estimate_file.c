/* nanobench estimate, the whole step (include/nb/estimate.h): a model file read as atc reads
 * it, then estimated. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nb/estimate.h"
#include "nb/quant.h"
#include "nb/ref.h"

nb_err nb_estimate_file(const nb_estimate_opts *o, nb_estimate_result *r, nb_status *st)
{
    memset(r, 0, sizeof *r);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    nb_load_opts lo = {.input_shape = o->input_shape, .weights_in_place = true,
                       .weights_deferred = true};
    nb_op_table ops = {0};
    char *all = NULL;
    nb_err e;
    if ((e = nb_ref_load(o->model, &lo, &r->m, st)) ||
        (e = nb_op_table_load(nb_op_table_default_path(), &ops, st)))
        goto out;
    /* a dynamic batch (dim 0) of an input whose other dims are known is taken as 1, as the
       vendor's estimate does for a single inference; the report says so */
    if ((e = nb_batch_one_shape(r->m, o->input_shape, &all, &r->batch_note, st)))
        goto out;
    if (all) {
        nb_model_free(r->m);
        r->m = NULL;
        lo.input_shape = all;
        if ((e = nb_ref_load(o->model, &lo, &r->m, st)))
            goto out;
    }
    /* a Q/DQ (QAT) model: estimated as atc compiles it, the pairs imported as AscendQuant and
       int8 weights (nb_read_npu_input), not as Q/DQ tasks; --out_nodes: the graph cut */
    r->qdq = nb_graph_has_qdq(r->m->graph);
    if (r->qdq || o->out_nodes) {
        char work[] = "/tmp/nanobench_estimate.XXXXXX";
        nb_npu_input in = {0};
        nb_load_opts lq = {.input_shape = all ? all : o->input_shape};
        bool made = mkdtemp(work) != NULL;
        e = made ? nb_read_npu_input(o->model, lq.input_shape, o->out_nodes, work, &in, st)
                 : nb_fail(st, NB_ERR_IO, "cannot make a work folder in /tmp");
        if (made)
            nb_remove_tree(work);
        nb_model_free(r->m);
        r->m = NULL;
        if (!e && !(e = nb_model_load_mem(in.onnx, in.len, o->model, NULL, &lq, &r->m, st)))
            e = nb_ref_fold(r->m, st);
        nb_npu_input_free(&in);
        if (e)
            goto out;
    }
    if (o->on_model)
        o->on_model(o->user, r->m);
    if ((e = nb_estimate_model(r->m, &ops, &o->npu, &r->e, st))) {
        nb_prefix(st, "%s", o->model);
        goto out;
    }
    if (nb_model_file_changed(r->m)) { /* its deferred weights were read as zeros */
        e = nb_fail(st, NB_ERR_IO, "%s: the file changed while it was read (it was truncated "
                    "or rewritten): estimate it again when it is complete", o->model);
        goto out;
    }
    if ((r->qdq && !nb_estimate_note(&r->e, "a Q/DQ (QAT) model: estimated as atc compiles it "
                                     "(each pair an AscendQuant, the weights int8)")) ||
        (r->batch_note && !nb_estimate_note(&r->e, "dynamic batch of %s taken as 1 "
                                            "(--input_shape to choose)", r->batch_note)))
        e = nb_fail(st, NB_ERR_NOMEM, "out of memory");
    clock_gettime(CLOCK_MONOTONIC, &t1);
    r->ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
out:
    free(all);
    nb_op_table_free(&ops);
    return e;
}

void nb_estimate_result_free(nb_estimate_result *r)
{
    nb_estimate_free(&r->e);
    nb_model_free(r->m);
    free(r->batch_note);
    memset(r, 0, sizeof *r);
}
