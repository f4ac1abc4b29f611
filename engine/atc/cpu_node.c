/* nanobench lowering: a CPU task's node as the exeom carries it (include/nb/atc.h,
 * nb_cpu_node_model). The MCU's core runs an op the NPU does not with the reference's
 * float32 kernels; what it needs is the ONNX node itself, so the exeom holds a one-node ONNX
 * model: the node (op, attributes), a graph input per present node input and a graph output
 * per present node output, each with its ONNX element type and static shape. The runtime
 * loads it with the same importer as any model (the gate, shape inference) and runs it with
 * the reference executor; the task's tensors are bound to the graph inputs in order. */
#include <stdlib.h>
#include <string.h>

#include "nb/atc.h"
#include "nb/ref.h"
#include "onnx.pb-c.h"

/* every allocation of one model, freed together once it is packed */
typedef struct pool {
    void **p;
    int n, cap;
    bool oom;
} pool;

static void *pmalloc(pool *pl, size_t n)
{
    if (pl->oom)
        return NULL;
    if (pl->n == pl->cap) {
        int cap = pl->cap ? 2 * pl->cap : 64;
        void **np = realloc(pl->p, sizeof *np * (size_t)cap);
        if (!np) {
            pl->oom = true;
            return NULL;
        }
        pl->p = np, pl->cap = cap;
    }
    void *v = calloc(1, n ? n : 1);
    if (!v)
        pl->oom = true;
    else
        pl->p[pl->n++] = v;
    return v;
}

static void pool_free(pool *pl)
{
    for (int i = 0; i < pl->n; i++)
        free(pl->p[i]);
    free(pl->p);
}

static Onnx__ValueInfoProto *value_info(pool *pl, const nb_value *v)
{
    Onnx__ValueInfoProto *vi = pmalloc(pl, sizeof *vi);
    Onnx__TypeProto *tp = pmalloc(pl, sizeof *tp);
    Onnx__TypeProto__Tensor *tt = pmalloc(pl, sizeof *tt);
    Onnx__TensorShapeProto *sh = pmalloc(pl, sizeof *sh);
    Onnx__TensorShapeProto__Dimension **dims = pmalloc(pl, sizeof *dims * (size_t)(v->rank + 1));
    if (pl->oom)
        return NULL;
    onnx__value_info_proto__init(vi);
    onnx__type_proto__init(tp);
    onnx__type_proto__tensor__init(tt);
    onnx__tensor_shape_proto__init(sh);
    for (int d = 0; d < v->rank; d++) {
        Onnx__TensorShapeProto__Dimension *dm = pmalloc(pl, sizeof *dm);
        if (!dm)
            return NULL;
        onnx__tensor_shape_proto__dimension__init(dm);
        dm->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
        dm->dim_value = v->dims[d];
        dims[d] = dm;
    }
    sh->n_dim = (size_t)v->rank;
    sh->dim = dims;
    tt->has_elem_type = 1;
    tt->elem_type = (int32_t)v->dtype;
    tt->shape = sh;
    tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    tp->tensor_type = tt;
    vi->name = v->name;
    vi->type = tp;
    return vi;
}

static Onnx__TensorProto *tensor_proto(pool *pl, const nb_tensor *t)
{
    Onnx__TensorProto *tp = pmalloc(pl, sizeof *tp);
    int64_t *dims = pmalloc(pl, sizeof *dims * (size_t)(t->rank + 1));
    if (pl->oom)
        return NULL;
    onnx__tensor_proto__init(tp);
    for (int d = 0; d < t->rank; d++)
        dims[d] = t->dims[d];
    tp->n_dims = (size_t)t->rank;
    tp->dims = dims;
    tp->has_data_type = 1;
    tp->data_type = (int32_t)t->dtype;
    tp->has_raw_data = 1;
    tp->raw_data.len = (size_t)t->numel * nb_dtype_size(t->dtype);
    tp->raw_data.data = (uint8_t *)nb_tensor_bytes(t); /* packed as bytes: a deferred
                                                         weight is read in the file */
    return tp;
}

/* nb_attr -> AttributeProto; NULL with why set for an attribute the model cannot carry */
static Onnx__AttributeProto *attribute(pool *pl, const nb_attr *a, char *why, size_t wl)
{
    Onnx__AttributeProto *ap = pmalloc(pl, sizeof *ap);
    if (!ap)
        return NULL;
    onnx__attribute_proto__init(ap);
    ap->name = a->name;
    ap->has_type = 1;
    switch (a->type) {
    case NB_ATTR_FLOAT:
        ap->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT, ap->has_f = 1, ap->f = a->f;
        break;
    case NB_ATTR_INT:
        ap->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT, ap->has_i = 1, ap->i = a->i;
        break;
    case NB_ATTR_STRING:
        ap->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING, ap->has_s = 1;
        ap->s.data = (uint8_t *)a->s, ap->s.len = a->s ? strlen(a->s) : 0;
        break;
    case NB_ATTR_TENSOR:
        if (!a->t || !nb_dtype_size(a->t->dtype)) {
            snprintf(why, wl, "attribute '%s' is a tensor of a type the exeom cannot carry",
                     a->name);
            return NULL;
        }
        ap->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR;
        ap->t = tensor_proto(pl, a->t);
        break;
    case NB_ATTR_FLOATS:
        ap->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS;
        ap->n_floats = (size_t)a->n, ap->floats = a->floats;
        break;
    case NB_ATTR_INTS:
        ap->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
        ap->n_ints = (size_t)a->n, ap->ints = a->ints;
        break;
    case NB_ATTR_STRINGS: {
        ProtobufCBinaryData *s = pmalloc(pl, sizeof *s * (size_t)(a->n + 1));
        if (!s)
            return NULL;
        for (int i = 0; i < a->n; i++)
            s[i].data = (uint8_t *)a->strings[i], s[i].len = strlen(a->strings[i]);
        ap->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS;
        ap->n_strings = (size_t)a->n, ap->strings = s;
        break;
    }
    default:
        snprintf(why, wl, "attribute '%s' is a %s (the MCU's CPU task holds no subgraph)",
                 a->name, a->type == NB_ATTR_GRAPH ? "graph" : "value of no known type");
        return NULL;
    }
    return pl->oom ? NULL : ap;
}

/* a value the one-node model can declare: a known element type of a stored size and a
 * static shape */
static bool declarable(const nb_value *v, const char *what, char *why, size_t wl)
{
    bool ok = v->dtype != NB_UNDEFINED && nb_dtype_size(v->dtype) && v->rank >= 0 &&
              v->rank <= 6;
    for (int d = 0; ok && d < v->rank; d++)
        ok = v->dims[d] >= 0;
    if (!ok)
        snprintf(why, wl, "%s '%s' has %s", what, v->name,
                 v->dtype == NB_UNDEFINED || !nb_dtype_size(v->dtype) ? "no type the MCU's CPU holds"
                 : v->rank > 6 ? "more than 6 dims (the exeom's tensors hold 6)"
                               : "a shape known only at run time");
    return ok;
}

/* a float32 scalar initializer */
static Onnx__TensorProto *scalar(pool *pl, const char *name, float v)
{
    Onnx__TensorProto *tp = pmalloc(pl, sizeof *tp);
    float *d = pmalloc(pl, sizeof *d);
    char *nm = pmalloc(pl, strlen(name) + 1);
    if (pl->oom)
        return NULL;
    onnx__tensor_proto__init(tp);
    *d = v;
    strcpy(nm, name);
    tp->name = nm;
    tp->has_data_type = 1;
    tp->data_type = NB_FLOAT;
    tp->has_raw_data = 1;
    tp->raw_data.len = sizeof *d;
    tp->raw_data.data = (uint8_t *)d;
    return tp;
}

/* a node op(a, b) -> y of the prologue */
static Onnx__NodeProto *binary(pool *pl, const char *op, const char *a, const char *b,
                               const char *y)
{
    Onnx__NodeProto *np = pmalloc(pl, sizeof *np);
    char **in = pmalloc(pl, sizeof *in * 2), **out = pmalloc(pl, sizeof *out);
    char *ya = pmalloc(pl, strlen(y) + 1);
    if (pl->oom)
        return NULL;
    onnx__node_proto__init(np);
    strcpy(ya, y);
    in[0] = (char *)a, in[1] = (char *)b, out[0] = ya;
    np->op_type = (char *)op;
    np->n_input = 2, np->input = in;
    np->n_output = 1, np->output = out;
    return np;
}

nb_err nb_cpu_node_model(const nb_graph *g, const nb_node *n, const double *in_scale,
                         const double *in_offset, uint8_t **bytes, size_t *len, char *why,
                         size_t wl, nb_status *st)
{
    *bytes = NULL, *len = 0;
    why[0] = 0;
    if (n->domain && n->domain[0] && strcmp(n->domain, "ai.onnx")) {
        snprintf(why, wl, "op of the domain '%s' (the MCU's CPU runs the default domain)",
                 n->domain);
        return NB_OK;
    }
    if (!nb_kernel_lookup(n->op_type) && !nb_kernel_is_alias(n->op_type)) {
        snprintf(why, wl, "%s has no CPU kernel in nanobench", n->op_type);
        return NB_OK;
    }
    int n_in = 0, n_out = 0;
    for (int i = 0; i < n->n_in; i++)
        n_in += n->in[i] >= 0;
    for (int i = 0; i < n->n_out; i++)
        n_out += n->out[i] >= 0;
    if (n_in + 1 > NB_EXEOM_MAX_IN || n_out > NB_EXEOM_MAX_OUT || n_out < 1) {
        snprintf(why, wl, "%d inputs and %d outputs (a CPU task holds %d and %d)", n_in, n_out,
                 NB_EXEOM_MAX_IN - 1, NB_EXEOM_MAX_OUT);
        return NB_OK;
    }
    for (int i = 0; i < n->n_in; i++)
        if (n->in[i] >= 0 && !declarable(&g->values[n->in[i]], "input", why, wl))
            return NB_OK;
    for (int i = 0; i < n->n_out; i++)
        if (n->out[i] >= 0 && !declarable(&g->values[n->out[i]], "output", why, wl))
            return NB_OK;
    pool pl = {0};
    Onnx__NodeProto *np = pmalloc(&pl, sizeof *np);
    Onnx__GraphProto *gp = pmalloc(&pl, sizeof *gp);
    Onnx__ModelProto *mp = pmalloc(&pl, sizeof *mp);
    Onnx__OperatorSetIdProto *os = pmalloc(&pl, sizeof *os);
    Onnx__OperatorSetIdProto **osv = pmalloc(&pl, sizeof *osv);
    Onnx__NodeProto **nodes = pmalloc(&pl, sizeof *nodes * (size_t)(2 * n->n_in + 1));
    Onnx__TensorProto **inits = pmalloc(&pl, sizeof *inits * (size_t)(2 * n->n_in + 1));
    int n_nodes = 0, n_inits = 0;
    char **ins = pmalloc(&pl, sizeof *ins * (size_t)(n->n_in + 1));
    char **outs = pmalloc(&pl, sizeof *outs * (size_t)(n->n_out + 1));
    Onnx__AttributeProto **attrs = pmalloc(&pl, sizeof *attrs * (size_t)(n->n_attr + 1));
    Onnx__ValueInfoProto **gin = pmalloc(&pl, sizeof *gin * (size_t)(n_in + 1));
    Onnx__ValueInfoProto **gout = pmalloc(&pl, sizeof *gout * (size_t)(n_out + 1));
    if (pl.oom) {
        pool_free(&pl);
        return nb_fail(st, NB_ERR_NOMEM, "out of memory");
    }
    onnx__node_proto__init(np);
    onnx__graph_proto__init(gp);
    onnx__model_proto__init(mp);
    onnx__operator_set_id_proto__init(os);
    np->name = n->name;
    np->op_type = n->op_type;
    np->domain = (char *)"";
    int gi = 0, go = 0;
    for (int i = 0; i < n->n_in && !pl.oom; i++) {
        ins[i] = n->in[i] >= 0 ? g->values[n->in[i]].name : (char *)"";
        if (n->in[i] < 0)
            continue;
        gin[gi++] = value_info(&pl, &g->values[n->in[i]]);
        double s = in_scale ? in_scale[i] : 1, o = in_offset ? in_offset[i] : 0;
        if (s == 1 && o == 0)
            continue;
        /* the NPU holds s x + o: (x' - o) x (1 / s) in float32 before the node */
        char nm[600], cn[640];
        const char *x = ins[i];
        if (o != 0) {
            snprintf(nm, sizeof nm, "%s/nb_offset", x);
            snprintf(cn, sizeof cn, "%s/nb_offset_value", x);
            inits[n_inits++] = scalar(&pl, cn, (float)o);
            nodes[n_nodes] = binary(&pl, "Sub", x, inits[n_inits - 1] ? inits[n_inits - 1]->name : "", nm);
            x = nodes[n_nodes] ? nodes[n_nodes]->output[0] : "";
            n_nodes++;
        }
        if (s != 1) {
            snprintf(nm, sizeof nm, "%s/nb_unscaled", ins[i]);
            snprintf(cn, sizeof cn, "%s/nb_unscale_value", ins[i]);
            inits[n_inits++] = scalar(&pl, cn, (float)(1.0 / s));
            nodes[n_nodes] = binary(&pl, "Mul", x, inits[n_inits - 1] ? inits[n_inits - 1]->name : "", nm);
            x = nodes[n_nodes] ? nodes[n_nodes]->output[0] : "";
            n_nodes++;
        }
        ins[i] = (char *)x;
    }
    for (int i = 0; i < n->n_out; i++) {
        outs[i] = n->out[i] >= 0 ? g->values[n->out[i]].name : (char *)"";
        if (n->out[i] >= 0)
            gout[go++] = value_info(&pl, &g->values[n->out[i]]);
    }
    np->n_input = (size_t)n->n_in, np->input = ins;
    np->n_output = (size_t)n->n_out, np->output = outs;
    for (int a = 0; a < n->n_attr && !why[0]; a++)
        attrs[a] = attribute(&pl, &n->attrs[a], why, wl);
    np->n_attribute = (size_t)n->n_attr, np->attribute = attrs;
    nodes[n_nodes++] = np;
    gp->name = (char *)"cpu_task";
    gp->n_node = (size_t)n_nodes, gp->node = nodes;
    gp->n_initializer = (size_t)n_inits, gp->initializer = inits;
    gp->n_input = (size_t)gi, gp->input = gin;
    gp->n_output = (size_t)go, gp->output = gout;
    os->domain = (char *)"";
    os->has_version = 1;
    os->version = g->opset;
    osv[0] = os;
    mp->has_ir_version = 1;
    mp->ir_version = 8;
    mp->producer_name = (char *)"nanobench atc";
    mp->n_opset_import = 1, mp->opset_import = osv;
    mp->graph = gp;
    nb_err e = NB_OK;
    if (pl.oom) {
        e = nb_fail(st, NB_ERR_NOMEM, "out of memory");
    } else if (!why[0]) {
        size_t l = onnx__model_proto__get_packed_size(mp);
        uint8_t *b = malloc(l ? l : 1);
        if (!b)
            e = nb_fail(st, NB_ERR_NOMEM, "out of memory");
        else
            *bytes = b, *len = onnx__model_proto__pack(mp, b);
    }
    pool_free(&pl);
    return e;
}
