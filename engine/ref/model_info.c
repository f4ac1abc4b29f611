/* nanobench info: what a model holds, as `info` prints it and the Python module returns it
 * (include/nb/ref.h): its I/O, opset, node counts and operator histogram against the
 * reference's kernels. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "nb/json.h"
#include "nb/ref.h"

/* each op type once, counted in the main graph (top) or in If/Loop bodies */
static nb_err count_ops(const nb_graph *g, nb_model_info *in, bool top, nb_status *st)
{
    for (int i = 0; i < g->n_nodes; i++) {
        const nb_node *nd = &g->nodes[i];
        int k;
        for (k = 0; k < in->n_ops; k++)
            if (!strcmp(in->ops[k].op, nd->op_type))
                break;
        if (k == in->n_ops) {
            nb_info_op *o = realloc(in->ops, sizeof *o * (size_t)(k + 1));
            if (!o)
                return nb_fail(st, NB_ERR_NOMEM, "out of memory");
            in->ops = o;
            memset(&o[k], 0, sizeof o[k]);
            snprintf(o[k].op, sizeof o[k].op, "%s", nd->op_type);
            o[k].in_reference = nb_ref_supports(nd->op_type);
            in->n_ops++;
        }
        if (top)
            in->ops[k].main++;
        else
            in->ops[k].sub++;
        for (int a = 0; a < nd->n_attr; a++)
            if (nd->attrs[a].g) {
                nb_err e = count_ops(nd->attrs[a].g, in, false, st);
                if (e)
                    return e;
            }
    }
    return NB_OK;
}

static int by_count(const void *a, const void *b)
{
    const nb_info_op *x = a, *y = b;
    int dx = x->main + x->sub, dy = y->main + y->sub;
    return dx != dy ? dy - dx : strcmp(x->op, y->op);
}

nb_err nb_model_info_get(const char *path, const nb_load_opts *lo, nb_model_info *in,
                         nb_status *st)
{
    memset(in, 0, sizeof *in);
    nb_err e = nb_model_load(path, lo, &in->m, st);
    if (e)
        return e;
    /* the histogram of the model as written, before folding */
    if ((e = count_ops(in->m->graph, in, true, st)))
        goto fail;
    qsort(in->ops, (size_t)in->n_ops, sizeof in->ops[0], by_count);
    in->main_nodes = in->m->graph->n_nodes;
    in->nodes = nb_graph_count_nodes(in->m->graph);
    for (int i = 0; i < in->n_ops; i++)
        in->not_in_reference += !in->ops[i].in_reference;
    if ((e = nb_ref_fold(in->m, st)))
        goto fail;
    return NB_OK;
fail:
    nb_model_info_free(in);
    return e;
}

void nb_model_info_free(nb_model_info *in)
{
    nb_model_free(in->m);
    free(in->ops);
    memset(in, 0, sizeof *in);
}

json_t *nb_values_json(const nb_graph *g, const int *ids, int n)
{
    json_t *a = json_array();
    for (int i = 0; i < n; i++) {
        const nb_value *v = &g->values[ids[i]];
        json_t *o = json_object(), *sh = json_array();
        json_object_set_new(o, "name", nb_json_string(v->name));
        json_object_set_new(o, "dtype", json_string(nb_dtype_name(v->dtype)));
        for (int d = 0; d < v->rank; d++)
            json_array_append_new(sh, v->dims[d] >= 0 ? json_integer(v->dims[d])
                                      : nb_json_string(v->dim_params[d] ? v->dim_params[d] : "?"));
        json_object_set_new(o, "shape", v->rank >= 0 ? sh : (json_decref(sh), json_null()));
        json_array_append_new(a, o);
    }
    return a;
}

json_t *nb_model_info_json(const char *path, const nb_model_info *in)
{
    const nb_model *m = in->m;
    const nb_graph *g = m->graph;
    json_t *o = json_object(), *main_h = json_object(), *sub_h = json_object();
    json_t *unsup = json_array(), *warn = json_array();
    json_object_set_new(o, "model", nb_json_string(path));
    json_object_set_new(o, "producer", nb_json_string(m->producer));
    json_object_set_new(o, "ir_version", json_integer(m->ir_version));
    json_object_set_new(o, "opset", json_integer(m->opset));
    json_object_set_new(o, "file_bytes", json_integer((json_int_t)m->file_bytes));
    json_object_set_new(o, "inputs", nb_values_json(g, g->inputs, g->n_inputs));
    json_object_set_new(o, "outputs", nb_values_json(g, g->outputs, g->n_outputs));
    json_object_set_new(o, "nodes", json_integer(in->nodes));
    json_object_set_new(o, "main_graph_nodes", json_integer(in->main_nodes));
    json_object_set_new(o, "subgraph_nodes", json_integer(in->nodes - in->main_nodes));
    for (int i = 0; i < in->n_ops; i++) {
        const nb_info_op *c = &in->ops[i];
        if (c->main)
            json_object_set_new(main_h, c->op, json_integer(c->main));
        if (c->sub)
            json_object_set_new(sub_h, c->op, json_integer(c->sub));
        if (!c->in_reference)
            json_array_append_new(unsup, nb_json_string(c->op));
    }
    json_object_set_new(o, "op_histogram", main_h);
    json_object_set_new(o, "subgraph_op_histogram", sub_h);
    json_object_set_new(o, "unsupported_by_reference", unsup);
    for (int i = 0; i < m->n_warnings; i++)
        json_array_append_new(warn, nb_json_string(m->warnings[i]));
    json_object_set_new(o, "warnings", warn);
    return o;
}
