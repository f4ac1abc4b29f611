/* nanobench: shape inference of control flow (If). */
#include <string.h>

#include "infer_ops.h"

/* If (ONNX Operators.md, opset 11-18): outputs take the branch outputs' types (a branch
 * output may declare none: it is inferred from the branch); a dim that differs between the
 * branches is unknown, as is the rank when the ranks differ (silero_vad's inner If has rank
 * 3 in one branch and 4 in the other; a constant condition folds the If away); dtypes that
 * differ are an error (the node is named by the caller's prefix). The branches are inferred
 * first with what the enclosing graph knows. */
static nb_err infer_If(nb_infer_ctx *c)
{
    nb_err e = nb_need_inputs(c, 1, 1);
    if (e)
        return e;
    if (c->in[0].dtype != NB_UNDEFINED && c->in[0].dtype != NB_BOOL)
        return nb_fail(c->st, NB_ERR_GRAPH, "condition must be bool, not %s",
                       nb_dtype_name(c->in[0].dtype));
    if (c->in[0].rank > 0) {
        for (int d = 0; d < c->in[0].rank; d++)
            if (c->in[0].dims[d] > 1)
                return nb_fail(c->st, NB_ERR_SHAPE, "condition must have one element");
    }
    nb_graph *br[2] = {NULL, NULL};
    const char *names[2] = {"then_branch", "else_branch"};
    for (int b = 0; b < 2; b++) {
        const nb_attr *a = nb_attr_find(c->node, names[b]);
        if (!a || a->type != NB_ATTR_GRAPH || !a->g)
            return nb_fail(c->st, NB_ERR_ATTR, "attribute %s (graph) is missing", names[b]);
        br[b] = a->g;
        if (br[b]->n_inputs != 0)
            return nb_fail(c->st, NB_ERR_GRAPH, "%s declares %d inputs; If branches take none "
                           "(they read the enclosing graph's values)", names[b],
                           br[b]->n_inputs);
        if (br[b]->n_outputs != c->n_out)
            return nb_fail(c->st, NB_ERR_GRAPH, "%s has %d outputs, the node has %d", names[b],
                           br[b]->n_outputs, c->n_out);
        nb_graph_pull_outer(br[b]);
        if ((e = nb_infer_graph(br[b], c->st))) {
            /* the shape suits one branch and not the other (issue 37): both are compiled, so
               a static shape must suit the branch a run does not take too */
            nb_prefix(c->st, "%s", names[b]);
            size_t l = strlen(c->st->msg);
            snprintf(c->st->msg + l, sizeof c->st->msg - l, " [both If branches are compiled: "
                     "the input shape must suit %s too, even where a run takes the other]",
                     names[b]);
            return e;
        }
    }
    for (int o = 0; o < c->n_out; o++) {
        const nb_value *t = &br[0]->values[br[0]->outputs[o]];
        const nb_value *f = &br[1]->values[br[1]->outputs[o]];
        nb_tinfo *out = &c->out[o];
        out->dtype = t->dtype != NB_UNDEFINED ? t->dtype : f->dtype;
        if (t->dtype != NB_UNDEFINED && f->dtype != NB_UNDEFINED && t->dtype != f->dtype)
            return nb_fail(c->st, NB_ERR_GRAPH, "output %d is %s in then_branch and %s in "
                           "else_branch", o, nb_dtype_name(t->dtype), nb_dtype_name(f->dtype));
        if (t->rank < 0 || t->rank != f->rank) {
            out->rank = -1;
            continue;
        }
        out->rank = t->rank;
        for (int d = 0; d < t->rank; d++)
            out->dims[d] = t->dims[d] == f->dims[d] ? t->dims[d] : -1;
    }
    return NB_OK;
}

const nb_infer_entry nb_infer_ops_control[] = {
    {"If", infer_If},
    {NULL, NULL},
};
