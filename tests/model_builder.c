/* Test helper: in-memory ONNX models (model_builder.h). Every allocation is recorded in an
 * arena freed by mb_free. */
#define _POSIX_C_SOURCE 200809L
#include "model_builder.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void **arena;
static size_t n_arena, cap_arena;

static void *mb_alloc(size_t n)
{
    void *p = calloc(1, n ? n : 1);
    if (!p)
        abort();
    if (n_arena == cap_arena) {
        cap_arena = cap_arena ? cap_arena * 2 : 256;
        arena = realloc(arena, sizeof(void *) * cap_arena);
        if (!arena)
            abort();
    }
    arena[n_arena++] = p;
    return p;
}

static char *mb_str(const char *s)
{
    char *p = mb_alloc(strlen(s) + 1);
    strcpy(p, s);
    return p;
}

/* Appends item to a protobuf-c repeated field (array of pointers). */
#define APPEND(arr, n, item)                                                      \
    do {                                                                          \
        void **na = mb_alloc(sizeof(void *) * ((n) + 1));                         \
        if ((n))                                                                  \
            memcpy(na, (arr), sizeof(void *) * (n));                              \
        na[(n)] = (item);                                                         \
        (arr) = (void *)na;                                                       \
        (n)++;                                                                    \
    } while (0)

mb_model *mb_new(int opset)
{
    mb_model *m = mb_alloc(sizeof *m);
    onnx__model_proto__init(&m->model);
    onnx__graph_proto__init(&m->graph);
    onnx__operator_set_id_proto__init(&m->opset);
    m->model.has_ir_version = 1;
    m->model.ir_version = 8;
    m->opset.domain = mb_str("");
    m->opset.has_version = 1;
    m->opset.version = opset;
    m->opsets[0] = &m->opset;
    m->model.opset_import = m->opsets;
    m->model.n_opset_import = 1;
    m->model.producer_name = mb_str("nanobench-tests");
    m->graph.name = mb_str("g");
    m->model.graph = &m->graph;
    return m;
}

static Onnx__ValueInfoProto *value_info(const char *name, int elem_type, int rank,
                                        const int64_t *dims)
{
    Onnx__ValueInfoProto *vi = mb_alloc(sizeof *vi);
    onnx__value_info_proto__init(vi);
    vi->name = mb_str(name);
    Onnx__TypeProto *tp = mb_alloc(sizeof *tp);
    onnx__type_proto__init(tp);
    Onnx__TypeProto__Tensor *tt = mb_alloc(sizeof *tt);
    onnx__type_proto__tensor__init(tt);
    tt->has_elem_type = 1;
    tt->elem_type = elem_type;
    if (rank >= 0) {
        Onnx__TensorShapeProto *sh = mb_alloc(sizeof *sh);
        onnx__tensor_shape_proto__init(sh);
        for (int d = 0; d < rank; d++) {
            Onnx__TensorShapeProto__Dimension *dim = mb_alloc(sizeof *dim);
            onnx__tensor_shape_proto__dimension__init(dim);
            if (dims[d] >= 0) {
                dim->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
                dim->dim_value = dims[d];
            } else {
                dim->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
                dim->dim_param = mb_str("N");
            }
            APPEND(sh->dim, sh->n_dim, dim);
        }
        tt->shape = sh;
    }
    tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    tp->tensor_type = tt;
    vi->type = tp;
    return vi;
}

void mb_input(mb_model *m, const char *name, int elem_type, int rank, const int64_t *dims)
{
    APPEND(m->graph.input, m->graph.n_input, value_info(name, elem_type, rank, dims));
}

void mb_output(mb_model *m, const char *name, int elem_type, int rank, const int64_t *dims)
{
    APPEND(m->graph.output, m->graph.n_output, value_info(name, elem_type, rank, dims));
}

Onnx__GraphProto *mb_graph(const char *name)
{
    Onnx__GraphProto *g = mb_alloc(sizeof *g);
    onnx__graph_proto__init(g);
    g->name = mb_str(name);
    return g;
}

void mb_goutput(Onnx__GraphProto *g, const char *name, int elem_type, int rank,
                const int64_t *dims)
{
    APPEND(g->output, g->n_output, value_info(name, elem_type, rank, dims));
}

void mb_ginput(Onnx__GraphProto *g, const char *name, int elem_type, int rank,
               const int64_t *dims)
{
    APPEND(g->input, g->n_input, value_info(name, elem_type, rank, dims));
}

Onnx__NodeProto *mb_gnode(Onnx__GraphProto *g, const char *op, const char *const *ins,
                          const char *const *outs)
{
    Onnx__NodeProto *n = mb_alloc(sizeof *n);
    onnx__node_proto__init(n);
    n->op_type = mb_str(op);
    char nm[64];
    snprintf(nm, sizeof nm, "%s_%zu", op, g->n_node);
    n->name = mb_str(nm);
    for (int i = 0; ins && ins[i]; i++)
        APPEND(n->input, n->n_input, mb_str(ins[i]));
    for (int i = 0; outs && outs[i]; i++)
        APPEND(n->output, n->n_output, mb_str(outs[i]));
    APPEND(g->node, g->n_node, n);
    return n;
}

Onnx__NodeProto *mb_node(mb_model *m, const char *op, const char *const *ins,
                         const char *const *outs)
{
    return mb_gnode(&m->graph, op, ins, outs);
}

static Onnx__AttributeProto *attr(Onnx__NodeProto *n, const char *name, int type)
{
    Onnx__AttributeProto *a = mb_alloc(sizeof *a);
    onnx__attribute_proto__init(a);
    a->name = mb_str(name);
    a->has_type = 1;
    a->type = type;
    APPEND(n->attribute, n->n_attribute, a);
    return a;
}

void mb_attr_int(Onnx__NodeProto *n, const char *name, int64_t v)
{
    Onnx__AttributeProto *a = attr(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
    a->has_i = 1;
    a->i = v;
}

void mb_attr_ints(Onnx__NodeProto *n, const char *name, int count, const int64_t *v)
{
    Onnx__AttributeProto *a = attr(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
    a->ints = mb_alloc(sizeof(int64_t) * (size_t)count);
    memcpy(a->ints, v, sizeof(int64_t) * (size_t)count);
    a->n_ints = (size_t)count;
}

void mb_attr_float(Onnx__NodeProto *n, const char *name, float v)
{
    Onnx__AttributeProto *a = attr(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT);
    a->has_f = 1;
    a->f = v;
}

void mb_attr_string(Onnx__NodeProto *n, const char *name, const char *v)
{
    Onnx__AttributeProto *a = attr(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING);
    a->has_s = 1;
    a->s.len = strlen(v);
    a->s.data = (uint8_t *)mb_str(v);
}

void mb_attr_graph(Onnx__NodeProto *n, const char *name, Onnx__GraphProto *g)
{
    Onnx__AttributeProto *a = attr(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH);
    a->g = g;
}

static Onnx__TensorProto *tensor(mb_model *m, const char *name, int rank, const int64_t *dims);

Onnx__NodeProto *mb_constant_raw(mb_model *m, const char *out, const char *tensor_name,
                                 int rank, const int64_t *dims, const float *vals,
                                 size_t nbytes)
{
    Onnx__NodeProto *n = mb_node(m, "Constant", (const char *[]){NULL},
                                 (const char *[]){out, NULL});
    size_t keep = m->graph.n_initializer;
    Onnx__TensorProto *t = mb_init_raw(m, tensor_name ? tensor_name : "", rank, dims, vals,
                                       nbytes);
    m->graph.n_initializer = keep; /* the tensor is the node's, not an initializer */
    if (!tensor_name)
        t->name = NULL;
    Onnx__AttributeProto *a = attr(n, "value", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR);
    a->t = t;
    return n;
}

/* A FLOAT initializer of graph g, without data. */
static Onnx__TensorProto *gtensor(Onnx__GraphProto *g, const char *name, int rank,
                                  const int64_t *dims)
{
    Onnx__TensorProto *t = mb_alloc(sizeof *t);
    onnx__tensor_proto__init(t);
    t->name = mb_str(name);
    t->has_data_type = 1;
    t->data_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
    t->dims = mb_alloc(sizeof(int64_t) * (size_t)(rank ? rank : 1));
    if (rank)
        memcpy(t->dims, dims, sizeof(int64_t) * (size_t)rank);
    t->n_dims = (size_t)rank;
    APPEND(g->initializer, g->n_initializer, t);
    return t;
}

static Onnx__TensorProto *tensor(mb_model *m, const char *name, int rank, const int64_t *dims)
{
    return gtensor(&m->graph, name, rank, dims);
}

/* t's data as raw_data: nbytes from data (zeros when data is NULL). */
static Onnx__TensorProto *raw(Onnx__TensorProto *t, const void *data, size_t nbytes)
{
    t->has_raw_data = 1;
    t->raw_data.data = mb_alloc(nbytes);
    if (data)
        memcpy(t->raw_data.data, data, nbytes);
    t->raw_data.len = nbytes;
    return t;
}

Onnx__TensorProto *mb_init_raw(mb_model *m, const char *name, int rank, const int64_t *dims,
                               const float *vals, size_t nbytes)
{
    return raw(tensor(m, name, rank, dims), vals, nbytes);
}

Onnx__TensorProto *mb_init_typed(mb_model *m, const char *name, int elem_type, int rank,
                                 const int64_t *dims, const void *data, size_t nbytes)
{
    Onnx__TensorProto *t = tensor(m, name, rank, dims);
    t->data_type = elem_type;
    return raw(t, data, nbytes);
}

Onnx__TensorProto *mb_ginit_raw(Onnx__GraphProto *g, const char *name, int rank,
                                const int64_t *dims, const float *vals, size_t nbytes)
{
    return raw(gtensor(g, name, rank, dims), vals, nbytes);
}

Onnx__TensorProto *mb_init_floats(mb_model *m, const char *name, int rank,
                                  const int64_t *dims, const float *vals, size_t n)
{
    Onnx__TensorProto *t = tensor(m, name, rank, dims);
    t->float_data = mb_alloc(sizeof(float) * n);
    if (n)
        memcpy(t->float_data, vals, sizeof(float) * n);
    t->n_float_data = n;
    return t;
}

Onnx__TensorProto *mb_init_ints64(mb_model *m, const char *name, int rank,
                                  const int64_t *dims, const int64_t *vals, size_t n)
{
    Onnx__TensorProto *t = tensor(m, name, rank, dims);
    t->data_type = ONNX__TENSOR_PROTO__DATA_TYPE__INT64;
    t->int64_data = mb_alloc(sizeof(int64_t) * n);
    if (n)
        memcpy(t->int64_data, vals, sizeof(int64_t) * n);
    t->n_int64_data = n;
    return t;
}

Onnx__TensorProto *mb_init_external(mb_model *m, const char *name, int rank,
                                    const int64_t *dims, const char *location)
{
    Onnx__TensorProto *t = tensor(m, name, rank, dims);
    t->has_data_location = 1;
    t->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    Onnx__StringStringEntryProto *kv = mb_alloc(sizeof *kv);
    onnx__string_string_entry_proto__init(kv);
    kv->key = mb_str("location");
    kv->value = mb_str(location);
    APPEND(t->external_data, t->n_external_data, kv);
    return t;
}

uint8_t *mb_pack(mb_model *m, size_t *len)
{
    *len = onnx__model_proto__get_packed_size(&m->model);
    uint8_t *buf = malloc(*len ? *len : 1);
    if (!buf)
        abort();
    onnx__model_proto__pack(&m->model, buf);
    return buf;
}

int mb_write(mb_model *m, const char *path)
{
    size_t len;
    uint8_t *buf = mb_pack(m, &len);
    FILE *f = fopen(path, "wb");
    int rc = -1;
    if (f) {
        rc = fwrite(buf, 1, len, f) == len ? 0 : -1;
        rc |= fclose(f);
    }
    free(buf);
    return rc;
}

void mb_free(mb_model *m)
{
    (void)m;
    for (size_t i = 0; i < n_arena; i++)
        free(arena[i]);
    free(arena);
    arena = NULL;
    n_arena = cap_arena = 0;
}
