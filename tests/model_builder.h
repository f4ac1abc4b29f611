/* Test helper: builds small ONNX models in memory with the generated protobuf-c bindings,
 * so that bad-input tests need no binary fixtures. */
#ifndef NB_TEST_MODEL_BUILDER_H
#define NB_TEST_MODEL_BUILDER_H

#include <stddef.h>
#include <stdint.h>

#include "onnx.pb-c.h"

typedef struct mb_model {
    Onnx__ModelProto model;
    Onnx__GraphProto graph;
    Onnx__OperatorSetIdProto opset;
    Onnx__OperatorSetIdProto *opsets[1];
} mb_model;

/* New model with one empty graph, ir_version 8, default-domain opset. */
mb_model *mb_new(int opset);
/* Graph input / output of a FLOAT (or other elem type) tensor of the given dims
 * (dim < 0: symbolic "N"). */
void mb_input(mb_model *m, const char *name, int elem_type, int rank, const int64_t *dims);
void mb_output(mb_model *m, const char *name, int elem_type, int rank, const int64_t *dims);
/* Node with inputs/outputs given as NULL-terminated lists of names. Returns it so that
 * attributes can be added. */
Onnx__NodeProto *mb_node(mb_model *m, const char *op, const char *const *ins,
                         const char *const *outs);
void mb_attr_int(Onnx__NodeProto *n, const char *name, int64_t v);
void mb_attr_ints(Onnx__NodeProto *n, const char *name, int count, const int64_t *v);
void mb_attr_float(Onnx__NodeProto *n, const char *name, float v);
void mb_attr_string(Onnx__NodeProto *n, const char *name, const char *v);
void mb_attr_graph(Onnx__NodeProto *n, const char *name, Onnx__GraphProto *g);
/* FLOAT initializer with raw_data of nbytes (may differ from dims: to test short data). */
Onnx__TensorProto *mb_init_raw(mb_model *m, const char *name, int rank, const int64_t *dims,
                               const float *vals, size_t nbytes);
/* Constant node whose value is a FLOAT tensor with raw_data (as paddle2onnx keeps weights);
 * tensor_name NULL leaves the tensor unnamed. */
Onnx__NodeProto *mb_constant_raw(mb_model *m, const char *out, const char *tensor_name,
                                 int rank, const int64_t *dims, const float *vals,
                                 size_t nbytes);
/* FLOAT initializer with float_data. */
Onnx__TensorProto *mb_init_floats(mb_model *m, const char *name, int rank,
                                  const int64_t *dims, const float *vals, size_t n);
/* INT64 initializer with int64_data (shapes, axes, Slice starts and ends). */
Onnx__TensorProto *mb_init_ints64(mb_model *m, const char *name, int rank,
                                  const int64_t *dims, const int64_t *vals, size_t n);
/* FLOAT initializer stored as external data. */
Onnx__TensorProto *mb_init_external(mb_model *m, const char *name, int rank,
                                    const int64_t *dims, const char *location);
/* Initializer of any element type (ONNX's TensorProto.DataType) with raw_data. */
Onnx__TensorProto *mb_init_typed(mb_model *m, const char *name, int elem_type, int rank,
                                 const int64_t *dims, const void *data, size_t nbytes);
/* FLOAT initializer with raw_data in a standalone graph (an If branch). */
Onnx__TensorProto *mb_ginit_raw(Onnx__GraphProto *g, const char *name, int rank,
                                const int64_t *dims, const float *vals, size_t nbytes);
/* Standalone graph (for If branches) with outputs listed; nodes added with mb_gnode. */
Onnx__GraphProto *mb_graph(const char *name);
Onnx__NodeProto *mb_gnode(Onnx__GraphProto *g, const char *op, const char *const *ins,
                          const char *const *outs);
void mb_goutput(Onnx__GraphProto *g, const char *name, int elem_type, int rank,
                const int64_t *dims);
void mb_ginput(Onnx__GraphProto *g, const char *name, int elem_type, int rank,
               const int64_t *dims);
/* Serialises; *len receives the size. malloc'ed. */
uint8_t *mb_pack(mb_model *m, size_t *len);
/* Serialises to path. Returns 0 on success. */
int mb_write(mb_model *m, const char *path);
/* Frees everything built (the builder owns all parts). */
void mb_free(mb_model *m);

#endif
