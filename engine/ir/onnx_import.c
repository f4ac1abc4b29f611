#define _DEFAULT_SOURCE
/* nanobench: ONNX import with protobuf-c bindings generated from Debian's onnx.proto.
 *
 * Rules implemented (ONNX IR spec, docs/IR.md of onnx 1.12):
 *  - default-domain opset must be 7..18 (1..18 with allow_legacy_opset); 7..10 are rewritten
 *    into opset 11's form first (onnx_legacy.c), 1..6 are imported as they are;
 *  - initializers from raw_data (little-endian), typed fields, or external data whose
 *    location resolves inside the model's folder;
 *  - Constant nodes become constant values; graph inputs that are also initializers are
 *    constants (ONNX IR: an initializer may give an input's default value);
 *  - every node input must be produced by a node, an initializer, a graph input or (in a
 *    subgraph) a value of an enclosing graph.
 */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "ir_internal.h"
#include "nb/json.h"
#include "onnx.pb-c.h"

/* the gate walks no deeper than the file was checked to nest (check_depth) */
#define NB_PB_MAX_DEPTH_GATE 256

typedef struct import_ctx {
    nb_model *m;
    const char *path; /* for messages */
    const char *dir;  /* model folder, or NULL */
    nb_status *st;
    int node_counter;
    bool weights_in_place; /* nb_load_opts.weights_in_place */
    /* a model file's mapping (nb_model_load): top-level initializers whose raw_data was
       lifted out of the protobuf decode point into [map_lo, map_hi) */
    nb_filemap *fmap;
    const uint8_t *map_lo, *map_hi;
    bool deferred;         /* nb_load_opts.weights_deferred */
    bool defer_here;       /* the tensor decoded now may stay deferred: a top-level
                              initializer or Constant value, not an op's attribute */
    bool arena;            /* the message is in a pb_arena: its blocks are not malloc's */
} import_ctx;

/* A tensor's name in messages ("initializer 'w'"), formatted only when a message needs it:
 * a 900-node model had spent half a millisecond formatting names no message used. */
typedef struct what_ref {
    const char *fmt; /* up to two %s */
    const char *a, *b;
} what_ref;

static const char *what_str(const what_ref *w, char *buf, size_t n)
{
    snprintf(buf, n, w->fmt, w->a ? w->a : "", w->b ? w->b : "");
    return buf;
}

void nb_model_warn(nb_model *m, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    nb_strlist_vaddf(&m->warnings, &m->n_warnings, fmt, ap); /* a warning lost to OOM */
    va_end(ap);
}

/* ---------------------------------------------------------------- tensors */

static nb_err read_external(import_ctx *c, const Onnx__TensorProto *tp, nb_tensor *t)
{
    const char *loc = NULL;
    int64_t offset = 0, length = -1;
    const char *tname = tp->name ? tp->name : "";
    for (size_t i = 0; i < tp->n_external_data; i++) {
        const Onnx__StringStringEntryProto *kv = tp->external_data[i];
        if (!kv->key || !kv->value)
            continue;
        char *end;
        if (!strcmp(kv->key, "location"))
            loc = kv->value;
        else if (!strcmp(kv->key, "offset")) {
            errno = 0;
            offset = strtoll(kv->value, &end, 10);
            if (errno || *end || offset < 0)
                return nb_fail(c->st, NB_ERR_EXTERNAL, "%s: tensor '%s': bad external offset '%s'",
                               c->path, tname, kv->value);
        } else if (!strcmp(kv->key, "length")) {
            errno = 0;
            length = strtoll(kv->value, &end, 10);
            if (errno || *end || length < 0)
                return nb_fail(c->st, NB_ERR_EXTERNAL, "%s: tensor '%s': bad external length '%s'",
                               c->path, tname, kv->value);
        }
    }
    if (!loc || !*loc)
        return nb_fail(c->st, NB_ERR_EXTERNAL, "%s: tensor '%s': external data without location",
                       c->path, tname);
    if (!c->dir)
        return nb_fail(c->st, NB_ERR_EXTERNAL, "%s: tensor '%s': external data needs a model folder",
                       c->path, tname);
    if (loc[0] == '/')
        return nb_fail(c->st, NB_ERR_EXTERNAL, "%s: tensor '%s': external data location '%s' is "
                       "absolute; it must be inside the model's folder", c->path, tname, loc);
    char dirreal[PATH_MAX], fileres[PATH_MAX], joined[PATH_MAX * 2];
    if (!realpath(c->dir, dirreal))
        return nb_fail(c->st, NB_ERR_EXTERNAL, "%s: cannot resolve model folder", c->path);
    snprintf(joined, sizeof joined, "%s/%s", dirreal, loc);
    if (!realpath(joined, fileres))
        return nb_fail(c->st, NB_ERR_EXTERNAL, "%s: tensor '%s': external data file '%s' not found",
                       c->path, tname, loc);
    size_t dl = strlen(dirreal);
    if (strncmp(fileres, dirreal, dl) != 0 || (fileres[dl] != '/' && dirreal[dl - 1] != '/'))
        return nb_fail(c->st, NB_ERR_EXTERNAL, "%s: tensor '%s': external data location '%s' "
                       "escapes the model's folder", c->path, tname, loc);
    struct stat sb;
    FILE *f = nb_fopen_regular(fileres, &sb);
    if (!f)
        return nb_fail(c->st, NB_ERR_EXTERNAL, "%s: tensor '%s': cannot open external data "
                       "'%s': %s", c->path, tname, loc,
                       errno == EINVAL ? "not a regular file" : strerror(errno));
    if (length >= 0 && (uint64_t)length != t->nbytes) {
        fclose(f);
        return nb_fail(c->st, NB_ERR_DATA, "%s: tensor '%s': external length %" PRId64
                       " bytes, dims need %zu", c->path, tname, length, t->nbytes);
    }
    if ((uint64_t)offset > (uint64_t)sb.st_size ||
        (uint64_t)sb.st_size - (uint64_t)offset < t->nbytes) {
        fclose(f);
        return nb_fail(c->st, NB_ERR_DATA, "%s: tensor '%s': external data '%s' is shorter than "
                       "offset %" PRId64 " + %zu bytes", c->path, tname, loc, offset, t->nbytes);
    }
    if (fseeko(f, (off_t)offset, SEEK_SET) != 0 ||
        (t->nbytes && fread(t->data, 1, t->nbytes, f) != t->nbytes)) {
        fclose(f);
        return nb_fail(c->st, NB_ERR_IO, "%s: tensor '%s': read of external data '%s' failed",
                       c->path, tname, loc);
    }
    fclose(f);
    return NB_OK;
}

/* Decodes a TensorProto into a new tensor. what names it in messages. */
static nb_err decode_tensor(import_ctx *c, const Onnx__TensorProto *tp, const what_ref *what,
                            nb_tensor **out)
{
    char wb[700];
    nb_status *st = c->st;
    nb_dtype dt = tp->has_data_type ? (nb_dtype)tp->data_type : NB_UNDEFINED;
    if (!nb_dtype_supported(dt))
        return nb_fail(st, NB_ERR_UNSUPPORTED, "%s: %s has element type %s, which nanobench "
                       "and the Nano do not support", c->path, what_str(what, wb, sizeof wb), nb_dtype_name(dt));
    if (tp->n_dims > NB_MAX_RANK)
        return nb_fail(st, NB_ERR_SHAPE, "%s: %s has rank %zu (max %d)", c->path, what_str(what, wb, sizeof wb),
                       tp->n_dims, NB_MAX_RANK);
    int64_t dims[NB_MAX_RANK];
    for (size_t i = 0; i < tp->n_dims; i++)
        dims[i] = tp->dims[i];
    int64_t numel;
    if (nb_shape_numel((int)tp->n_dims, dims, nb_dtype_size(dt), &numel, st))
        return nb_prefix(st, "%s: %s", c->path, what_str(what, wb, sizeof wb));
    nb_tensor *t;
    size_t es = nb_dtype_size(dt);
    /* with weights_in_place a large raw_data block is taken over from the decoded message,
       not copied: a 10 MB model then touches 10 MB of fresh memory fewer (protobuf-c
       allocates with malloc, and skips a NULL block when freeing the message) */
    bool external = tp->has_data_location &&
                    tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    /* raw_data lifted out of the decode (pb_lift_msg) still lies in the file's mapping: a
       shapes-only load leaves it there, any other copies it once */
    bool in_map = c->fmap && tp->has_raw_data && tp->raw_data.data &&
                  tp->raw_data.data >= c->map_lo && tp->raw_data.data < c->map_hi;
    if (in_map && !external && c->deferred && c->defer_here &&
        tp->raw_data.len >= 4096 && tp->raw_data.len == (size_t)numel * es) {
        if (nb_tensor_new_deferred(dt, (int)tp->n_dims, dims, tp->raw_data.data, c->fmap, out,
                                   st))
            return nb_prefix(st, "%s: %s", c->path, what_str(what, wb, sizeof wb));
        return NB_OK;
    }
    if (c->weights_in_place && !c->arena && !in_map && !external && tp->has_raw_data &&
        tp->raw_data.data &&
        tp->raw_data.len == (size_t)numel * es && tp->raw_data.len >= 4096 &&
        nb_tensor_adopt(dt, (int)tp->n_dims, dims, tp->raw_data.data, &t, NULL) == NB_OK) {
        ((Onnx__TensorProto *)tp)->raw_data.data = NULL;
        ((Onnx__TensorProto *)tp)->raw_data.len = 0;
        *out = t;
        return NB_OK;
    }
    nb_err e = nb_tensor_new_uninit(dt, (int)tp->n_dims, dims, &t, st);
    if (e)
        return nb_prefix(st, "%s: %s", c->path, what_str(what, wb, sizeof wb));
    if (tp->has_data_location && tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) {
        e = read_external(c, tp, t);
    } else if (tp->has_raw_data) {
        if (tp->raw_data.len != t->nbytes)
            e = nb_fail(st, NB_ERR_DATA, "%s: %s: raw_data is %zu bytes, but %s dims need %zu",
                        c->path, what_str(what, wb, sizeof wb), tp->raw_data.len, nb_dtype_name(dt), t->nbytes);
        else if (t->nbytes)
            memcpy(t->data, tp->raw_data.data, t->nbytes);
    } else {
        size_t have = 0;
        switch (dt) {
        case NB_FLOAT: have = tp->n_float_data; break;
        case NB_INT64: have = tp->n_int64_data; break;
        case NB_UINT32: case NB_UINT64: have = tp->n_uint64_data; break;
        default: have = tp->n_int32_data; break;
        }
        if (have != (size_t)numel) {
            e = nb_fail(st, NB_ERR_DATA, "%s: %s: has %zu values, dims need %" PRId64, c->path,
                        what_str(what, wb, sizeof wb), have, numel);
        } else {
            for (int64_t i = 0; i < numel; i++) {
                void *p = (char *)t->data + (size_t)i * es;
                switch (dt) {
                case NB_FLOAT: ((float *)p)[0] = tp->float_data[i]; break;
                case NB_INT64: ((int64_t *)p)[0] = tp->int64_data[i]; break;
                case NB_UINT32: ((uint32_t *)p)[0] = (uint32_t)tp->uint64_data[i]; break;
                case NB_UINT64: ((uint64_t *)p)[0] = tp->uint64_data[i]; break;
                case NB_INT32: ((int32_t *)p)[0] = tp->int32_data[i]; break;
                case NB_INT16: ((int16_t *)p)[0] = (int16_t)tp->int32_data[i]; break;
                case NB_UINT16: case NB_FLOAT16:
                    ((uint16_t *)p)[0] = (uint16_t)tp->int32_data[i]; break;
                case NB_INT8: ((int8_t *)p)[0] = (int8_t)tp->int32_data[i]; break;
                case NB_UINT8: ((uint8_t *)p)[0] = (uint8_t)tp->int32_data[i]; break;
                case NB_BOOL: ((uint8_t *)p)[0] = tp->int32_data[i] != 0; break;
                default: break;
                }
            }
        }
    }
    if (e) {
        nb_tensor_free(t);
        return e;
    }
    *out = t;
    return NB_OK;
}

static nb_err check_depth(const uint8_t *data, size_t len, const char *path, nb_status *st);

nb_err nb_tensor_pb_read(const char *path, nb_tensor **out, char **name, nb_status *st)
{
    uint8_t *buf;
    size_t len;
    nb_err e = nb_read_file(path, &buf, &len, st);
    if (e)
        return e;
    if ((e = check_depth(buf, len, path, st))) {
        free(buf);
        return e;
    }
    Onnx__TensorProto *tp = onnx__tensor_proto__unpack(NULL, len, buf);
    free(buf);
    if (!tp)
        return nb_fail(st, NB_ERR_FORMAT, "%s: not a serialized TensorProto", path);
    import_ctx c = {0};
    c.path = path;
    c.st = st;
    e = decode_tensor(&c, tp, &(what_ref){"tensor", NULL, NULL}, out);
    if (!e && name)
        *name = strdup(tp->name ? tp->name : "");
    onnx__tensor_proto__free_unpacked(tp, NULL);
    return e;
}

/* ---------------------------------------------------------------- the gate */

static const char *attr_type_name(nb_attr_type t);

/* Every optional string field of the message tree that is absent (NULL) becomes "": code
 * reading the protobuf after the gate compares names, op types and domains without a NULL
 * check (issue 25: atc and calibrate crashed on a node without op_type, an attribute
 * without name). The walk follows protobuf-c's descriptors, so it covers every message
 * type of onnx.proto. The "" is malloc'ed: free_unpacked frees it with the rest (a message
 * decoded into a pb_arena, which is released whole, shares one). */
static char arena_empty[1]; /* the "" of a message in a pb_arena: never freed */

static bool fill_strings(ProtobufCMessage *m, int depth, bool arena)
{
    const ProtobufCMessageDescriptor *d = m->descriptor;
    if (depth > NB_PB_MAX_DEPTH_GATE)
        return true;
    for (unsigned f = 0; f < d->n_fields; f++) {
        const ProtobufCFieldDescriptor *fd = &d->fields[f];
        if ((fd->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
            *(const uint32_t *)((const char *)m + fd->quantifier_offset) != fd->id)
            continue;
        void *p = (char *)m + fd->offset;
        if (fd->label == PROTOBUF_C_LABEL_REPEATED) {
            size_t n = *(const size_t *)((const char *)m + fd->quantifier_offset);
            if (fd->type == PROTOBUF_C_TYPE_MESSAGE) {
                ProtobufCMessage **arr = *(ProtobufCMessage ***)p;
                for (size_t i = 0; i < n; i++)
                    if (arr[i] && !fill_strings(arr[i], depth + 1, arena))
                        return false;
            } else if (fd->type == PROTOBUF_C_TYPE_STRING) {
                char **arr = *(char ***)p;
                for (size_t i = 0; i < n; i++)
                    if (!arr[i] && !(arr[i] = arena ? arena_empty : calloc(1, 1)))
                        return false;
            }
        } else if (fd->type == PROTOBUF_C_TYPE_MESSAGE) {
            ProtobufCMessage *sub = *(ProtobufCMessage **)p;
            if (sub && !fill_strings(sub, depth + 1, arena))
                return false;
        } else if (fd->type == PROTOBUF_C_TYPE_STRING && !*(char **)p) {
            if (!(*(char **)p = arena ? arena_empty : calloc(1, 1)))
                return false;
        }
    }
    return true;
}

/* The gate's "" back to absent for the optional (not repeated) strings of the message tree
 * (freed when malloc'ed), so that a model re-encoded after nb_onnx_decode does not carry an
 * empty ref_attr_name on every attribute (issue 37: onnx.checker and ONNX Runtime refused
 * calibrate's fake-quant model of an If model), nor empty doc_strings and domains. A
 * repeated string (a node's omitted optional input "") keeps its "". */
static void unfill_strings(ProtobufCMessage *m, int depth)
{
    const ProtobufCMessageDescriptor *d = m->descriptor;
    if (depth > NB_PB_MAX_DEPTH_GATE)
        return;
    for (unsigned f = 0; f < d->n_fields; f++) {
        const ProtobufCFieldDescriptor *fd = &d->fields[f];
        if ((fd->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
            *(const uint32_t *)((const char *)m + fd->quantifier_offset) != fd->id)
            continue;
        void *p = (char *)m + fd->offset;
        if (fd->type == PROTOBUF_C_TYPE_MESSAGE && fd->label == PROTOBUF_C_LABEL_REPEATED) {
            size_t n = *(const size_t *)((const char *)m + fd->quantifier_offset);
            ProtobufCMessage **arr = *(ProtobufCMessage ***)p;
            for (size_t i = 0; i < n; i++)
                if (arr[i])
                    unfill_strings(arr[i], depth + 1);
        } else if (fd->type == PROTOBUF_C_TYPE_MESSAGE) {
            ProtobufCMessage *sub = *(ProtobufCMessage **)p;
            if (sub)
                unfill_strings(sub, depth + 1);
        } else if (fd->type == PROTOBUF_C_TYPE_STRING && fd->label != PROTOBUF_C_LABEL_REPEATED &&
                   fd->label != PROTOBUF_C_LABEL_REQUIRED) {
            char **sp = (char **)p;
            if (*sp && !**sp && *sp != (char *)fd->default_value) {
                if (*sp != arena_empty && *sp != protobuf_c_empty_string)
                    free(*sp);
                *sp = NULL;
            }
        }
    }
}

void nb_onnx_prepare_pack(Onnx__ModelProto *mp)
{
    if (mp)
        unfill_strings(&mp->base, 0);
}

typedef struct gate_ctx {
    ProtobufCAllocator *arena; /* the message's pb_arena, or NULL (malloc) */
    const char *path;
    nb_status *st;
    int node_counter; /* as import_graph counts, for the same generated names */
    nb_name_set names;   /* every node name, in every graph */
    int named;        /* unnamed nodes given a name */
} gate_ctx;

/* Every node name of gp and its subgraphs into c->names. */
static bool collect_node_names(gate_ctx *c, const Onnx__GraphProto *gp, int depth)
{
    if (depth > NB_PB_MAX_DEPTH_GATE)
        return true;
    for (size_t i = 0; i < gp->n_node; i++) {
        const Onnx__NodeProto *np = gp->node[i];
        if (np->name && np->name[0] && !nb_name_set_add(&c->names, np->name))
            return false;
        for (size_t k = 0; k < np->n_attribute; k++) {
            const Onnx__AttributeProto *ap = np->attribute[k];
            if (ap->g && !collect_node_names(c, ap->g, depth + 1))
                return false;
            for (size_t j = 0; j < ap->n_graphs; j++)
                if (ap->graphs[j] && !collect_node_names(c, ap->graphs[j], depth + 1))
                    return false;
        }
    }
    return true;
}

/* A TensorProto's element type, rank, dims and payload size, as decode_tensor reads them
 * (checked before any reader looks at the values). */
static nb_err gate_tensor(gate_ctx *c, const Onnx__TensorProto *tp, const what_ref *what)
{
    char wb[700];
    nb_status *st = c->st;
    nb_dtype dt = tp->has_data_type ? (nb_dtype)tp->data_type : NB_UNDEFINED;
    if (!tp->has_data_type || tp->data_type == 0)
        return nb_fail(st, NB_ERR_FORMAT, "%s: %s has no data_type", c->path, what_str(what, wb, sizeof wb));
    if (!nb_dtype_supported(dt))
        return nb_fail(st, NB_ERR_UNSUPPORTED, "%s: %s has element type %s, which nanobench "
                       "and the Nano do not support", c->path, what_str(what, wb, sizeof wb), nb_dtype_name(dt));
    if (tp->n_dims > NB_MAX_RANK)
        return nb_fail(st, NB_ERR_SHAPE, "%s: %s has rank %zu (max %d)", c->path, what_str(what, wb, sizeof wb),
                       tp->n_dims, NB_MAX_RANK);
    int64_t numel;
    if (nb_shape_numel((int)tp->n_dims, tp->dims, nb_dtype_size(dt), &numel, st))
        return nb_prefix(st, "%s: %s", c->path, what_str(what, wb, sizeof wb));
    if (tp->has_data_location && tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)
        return NB_OK; /* its size is checked against the file when it is read */
    size_t es = nb_dtype_size(dt);
    if (tp->has_raw_data) {
        if (tp->raw_data.len != (size_t)numel * es || (tp->raw_data.len && !tp->raw_data.data))
            return nb_fail(st, NB_ERR_DATA, "%s: %s: raw_data is %zu bytes, but %s dims need "
                           "%zu", c->path, what_str(what, wb, sizeof wb), tp->raw_data.len, nb_dtype_name(dt),
                           (size_t)numel * es);
        return NB_OK;
    }
    size_t have;
    switch (dt) {
    case NB_FLOAT: have = tp->n_float_data; break;
    case NB_INT64: have = tp->n_int64_data; break;
    case NB_DOUBLE: have = tp->n_double_data; break;
    case NB_UINT32: case NB_UINT64: have = tp->n_uint64_data; break;
    default: have = tp->n_int32_data; break;
    }
    if (have != (size_t)numel)
        return nb_fail(st, NB_ERR_DATA, "%s: %s: has %zu values, dims need %" PRId64, c->path,
                       what_str(what, wb, sizeof wb), have, numel);
    return NB_OK;
}

static nb_err gate_graph(gate_ctx *c, Onnx__GraphProto *gp, const char *where);

/* The value_infos of a graph: a name each (inputs and outputs), and a type whose oneof
 * member is there when its case is set. */
static nb_err gate_value_info(gate_ctx *c, const Onnx__ValueInfoProto *vi, const char *what,
                              size_t i, const char *where, bool named)
{
    if (named && !vi->name[0])
        return nb_fail(c->st, NB_ERR_FORMAT, "%s: %s%s%s %zu has no name", c->path, where,
                       *where ? ": " : "", what, i);
    for (const Onnx__TypeProto *t = vi->type; t;) {
        switch (t->value_case) {
        case ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE:
            if (!t->tensor_type)
                return nb_fail(c->st, NB_ERR_FORMAT, "%s: %s '%s' has an empty type", c->path,
                               what, vi->name);
            if (t->tensor_type->shape)
                for (size_t d = 0; d < t->tensor_type->shape->n_dim; d++)
                    if (!t->tensor_type->shape->dim[d])
                        return nb_fail(c->st, NB_ERR_FORMAT, "%s: %s '%s' has an empty dim",
                                       c->path, what, vi->name);
            t = NULL;
            break;
        case ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE:
            t = t->sequence_type ? t->sequence_type->elem_type : NULL;
            break;
        case ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE:
            t = t->optional_type ? t->optional_type->elem_type : NULL;
            break;
        default:
            t = NULL;
            break;
        }
    }
    return NB_OK;
}

/* One attribute: a name, a known type (deduced from the field set when an old model left
 * it out, and written back so that later readers can switch on it), and the field that its
 * type names (ONNX checker: "Attribute should contain one and only one value field"). */
static nb_err gate_attr(gate_ctx *c, const Onnx__NodeProto *np, const char *node_name,
                        Onnx__AttributeProto *ap, size_t k)
{
    nb_status *st = c->st;
    if (!ap->name[0])
        return nb_fail(st, NB_ERR_ATTR, "%s: node '%s' (%s): attribute %zu has no name",
                       c->path, node_name, np->op_type, k);
    for (size_t j = 0; j < k; j++)
        if (!strcmp(np->attribute[j]->name, ap->name))
            return nb_fail(st, NB_ERR_ATTR, "%s: node '%s' (%s): attribute '%s' is given "
                           "twice", c->path, node_name, np->op_type, ap->name);
    if (ap->ref_attr_name[0])
        return nb_fail(st, NB_ERR_UNSUPPORTED, "%s: node '%s' (%s): attribute '%s' refers to "
                       "the function attribute '%s' (only model functions may)", c->path,
                       node_name, np->op_type, ap->name, ap->ref_attr_name);
    int type = ap->has_type ? (int)ap->type : 0;
    if (!type) { /* as import_attr deduces it */
        if (ap->g) type = NB_ATTR_GRAPH;
        else if (ap->t) type = NB_ATTR_TENSOR;
        else if (ap->n_floats) type = NB_ATTR_FLOATS;
        else if (ap->n_ints) type = NB_ATTR_INTS;
        else if (ap->n_strings) type = NB_ATTR_STRINGS;
        else if (ap->has_s) type = NB_ATTR_STRING;
        else if (ap->has_f) type = NB_ATTR_FLOAT;
        else if (ap->has_i) type = NB_ATTR_INT;
        else if (ap->n_tensors) type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSORS;
        else if (ap->n_graphs) type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPHS;
        else if (ap->sparse_tensor) type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSOR;
        else if (ap->tp) type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTO;
        if (!type)
            return nb_fail(st, NB_ERR_ATTR, "%s: node '%s' (%s): attribute '%s' has neither "
                           "a type nor a value", c->path, node_name, np->op_type, ap->name);
        ap->has_type = 1;
        ap->type = (Onnx__AttributeProto__AttributeType)type;
    }
    bool present;
    switch (type) {
    case NB_ATTR_FLOAT: present = ap->has_f; break;
    case NB_ATTR_INT: present = ap->has_i; break;
    case NB_ATTR_STRING: present = ap->has_s; break;
    case NB_ATTR_TENSOR: present = ap->t != NULL; break;
    case NB_ATTR_GRAPH: present = ap->g != NULL; break;
    case NB_ATTR_FLOATS: case NB_ATTR_INTS: case NB_ATTR_STRINGS: present = true; break;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSOR: present = ap->sparse_tensor; break;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTO: present = ap->tp; break;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSORS:
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPHS:
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSORS:
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTOS:
        present = true;
        break;
    default:
        return nb_fail(st, NB_ERR_ATTR, "%s: node '%s' (%s): attribute '%s' has type %d, which "
                       "is not an ONNX attribute type", c->path, node_name, np->op_type,
                       ap->name, type);
    }
    if (!present)
        return nb_fail(st, NB_ERR_ATTR, "%s: node '%s' (%s): attribute '%s' is of type %s but "
                       "has no such value", c->path, node_name, np->op_type, ap->name,
                       attr_type_name((nb_attr_type)type));
    what_ref wr = {"node '%s' attribute '%s'", node_name, ap->name};
    nb_err e;
    if (ap->t && (e = gate_tensor(c, ap->t, &wr)))
        return e;
    for (size_t i = 0; i < ap->n_tensors; i++)
        if ((e = gate_tensor(c, ap->tensors[i], &wr)))
            return e;
    if (!ap->g && !ap->n_graphs)
        return NB_OK;
    char what[700];
    what_str(&wr, what, sizeof what);
    if (ap->g && (e = gate_graph(c, ap->g, what)))
        return e;
    for (size_t i = 0; i < ap->n_graphs; i++)
        if ((e = gate_graph(c, ap->graphs[i], what)))
            return e;
    return NB_OK;
}

static bool utf8_ok(const char *s) { return nb_utf8_valid(s); }

/* Every name of gp's own (initializers, inputs, outputs, value_infos, nodes and their
 * inputs and outputs) is UTF-8: protobuf's string type, which ONNX's names are, holds UTF-8
 * text, and a name that is not cannot travel through JSON and back (issue 35: bringup lost
 * such an output between infer's JSON and its manifest). */
static nb_err gate_utf8(gate_ctx *c, const Onnx__GraphProto *gp, const char *where)
{
    const char *bad = NULL;
    char what[96] = "";
    for (size_t i = 0; !bad && i < gp->n_initializer; i++)
        if (!utf8_ok(gp->initializer[i]->name))
            bad = "initializer", snprintf(what, sizeof what, "%zu", i);
    for (size_t i = 0; !bad && i < gp->n_input; i++)
        if (!utf8_ok(gp->input[i]->name))
            bad = "graph input", snprintf(what, sizeof what, "%zu", i);
    for (size_t i = 0; !bad && i < gp->n_output; i++)
        if (!utf8_ok(gp->output[i]->name))
            bad = "graph output", snprintf(what, sizeof what, "%zu", i);
    for (size_t i = 0; !bad && i < gp->n_value_info; i++)
        if (!utf8_ok(gp->value_info[i]->name))
            bad = "value_info", snprintf(what, sizeof what, "%zu", i);
    for (size_t i = 0; !bad && i < gp->n_node; i++) {
        const Onnx__NodeProto *np = gp->node[i];
        if (!utf8_ok(np->name) || !utf8_ok(np->op_type) || !utf8_ok(np->domain))
            bad = "node", snprintf(what, sizeof what, "%zu (its name, op_type or domain)", i);
        for (size_t k = 0; !bad && k < np->n_input; k++)
            if (!utf8_ok(np->input[k]))
                bad = "node", snprintf(what, sizeof what, "%zu's input %zu", i, k);
        for (size_t k = 0; !bad && k < np->n_output; k++)
            if (!utf8_ok(np->output[k]))
                bad = "node", snprintf(what, sizeof what, "%zu's output %zu", i, k);
    }
    if (!bad)
        return NB_OK;
    return nb_fail(c->st, NB_ERR_FORMAT, "%s: %s%s%s %s: the name is not UTF-8 text (ONNX "
                   "names are protobuf strings, UTF-8; rename it in the exporter)", c->path,
                   where, *where ? ": " : "", bad, what);
}

static nb_err gate_graph(gate_ctx *c, Onnx__GraphProto *gp, const char *where)
{
    nb_err e;
    if ((e = gate_utf8(c, gp, where)))
        return e;
    for (size_t i = 0; i < gp->n_initializer; i++) {
        const Onnx__TensorProto *tp = gp->initializer[i];
        if (!tp->name[0])
            return nb_fail(c->st, NB_ERR_FORMAT, "%s: %s%sinitializer %zu has no name", c->path,
                           where, *where ? ": " : "", i);
        if ((e = gate_tensor(c, tp, &(what_ref){"initializer '%s'", tp->name, NULL})))
            return e;
    }
    for (size_t i = 0; i < gp->n_input; i++)
        if ((e = gate_value_info(c, gp->input[i], "graph input", i, where, true)))
            return e;
    for (size_t i = 0; i < gp->n_output; i++)
        if ((e = gate_value_info(c, gp->output[i], "graph output", i, where, true)))
            return e;
    for (size_t i = 0; i < gp->n_value_info; i++)
        if ((e = gate_value_info(c, gp->value_info[i], "value_info", i, where, false)))
            return e;
    for (size_t i = 0; i < gp->n_node; i++) {
        Onnx__NodeProto *np = gp->node[i];
        int counter = c->node_counter++;
        if (!np->name[0]) {
            /* names are optional in ONNX and several exporters leave them out: the node is
               named here, in the file's message, so that every reader (importer, calibrate's
               writers, the records) shows and writes the same name: op type and index in
               the file (depth-first through subgraphs), made unique with _1, _2, ... */
            char gen[96];
            snprintf(gen, sizeof gen, "%.60s_%d", np->op_type[0] ? np->op_type : "node", counter);
            size_t bl = strlen(gen);
            for (int k = 1; nb_name_set_has(&c->names, gen); k++)
                snprintf(gen + bl, sizeof gen - bl, "_%d", k);
            char *dup = c->arena ? c->arena->alloc(c->arena->allocator_data, strlen(gen) + 1)
                                 : malloc(strlen(gen) + 1);
            if (!dup)
                return nb_fail(c->st, NB_ERR_NOMEM, "out of memory");
            strcpy(dup, gen);
            if (!c->arena && np->name != protobuf_c_empty_string)
                free(np->name);
            np->name = dup;
            if (!nb_name_set_add(&c->names, np->name))
                return nb_fail(c->st, NB_ERR_NOMEM, "out of memory");
            c->named++;
        }
        const char *node_name = np->name;
        if (!np->op_type[0])
            return nb_fail(c->st, NB_ERR_FORMAT, "%s: node '%s' has no op_type", c->path,
                           node_name);
        for (size_t k = 0; k < np->n_attribute; k++)
            if ((e = gate_attr(c, np, node_name, np->attribute[k], k)))
                return e;
    }
    return NB_OK;
}

/* nb_onnx_gate on a message decoded with allocator arena (a pb_arena), or NULL (malloc). */
static nb_err gate_model(Onnx__ModelProto *mp, const char *path, int *named,
                         ProtobufCAllocator *arena, nb_status *st)
{
    if (named)
        *named = 0;
    if (!path)
        path = "<memory>";
    if (!fill_strings(&mp->base, 0, arena != NULL))
        return nb_fail(st, NB_ERR_NOMEM, "out of memory");
    if (!mp->graph)
        return nb_fail(st, NB_ERR_FORMAT, "%s: not an ONNX model (no graph)", path);
    gate_ctx c = {.arena = arena, .path = path, .st = st};
    nb_err e = collect_node_names(&c, mp->graph, 0) ? gate_graph(&c, mp->graph, "")
                                                    : nb_fail(st, NB_ERR_NOMEM, "out of memory");
    free(c.names.slot);
    if (named)
        *named = c.named;
    return e;
}

nb_err nb_onnx_gate(Onnx__ModelProto *mp, const char *path, int *named, nb_status *st)
{
    return gate_model(mp, path, named, NULL, st);
}

/* ---------------------------------------------------------------- graphs */

static nb_err import_graph(import_ctx *c, const Onnx__GraphProto *gp, nb_graph *g);

static nb_err set_value_type(import_ctx *c, nb_value *v, const Onnx__TypeProto *tp,
                             const char *what)
{
    /* no type, or a TypeProto with no value set: ONNX leaves the type of a (sub)graph
       output optional and so does ONNX Runtime, which infers it; so does shape inference */
    if (!tp || tp->value_case == ONNX__TYPE_PROTO__VALUE__NOT_SET)
        return NB_OK;
    if (tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE)
        return nb_fail(c->st, NB_ERR_UNSUPPORTED, "%s: %s '%s' is not a tensor (sequence, map "
                       "and optional types are not supported)", c->path, what, v->name);
    const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
    if (!tt)
        return NB_OK;
    if (tt->has_elem_type) {
        v->dtype = (nb_dtype)tt->elem_type;
        if (!nb_dtype_supported(v->dtype))
            return nb_fail(c->st, NB_ERR_UNSUPPORTED, "%s: %s '%s' has element type %s, which "
                           "nanobench and the Nano do not support", c->path, what, v->name,
                           nb_dtype_name(v->dtype));
    }
    if (tt->shape) {
        if (tt->shape->n_dim > NB_MAX_RANK)
            return nb_fail(c->st, NB_ERR_SHAPE, "%s: %s '%s' has rank %zu (max %d)", c->path,
                           what, v->name, tt->shape->n_dim, NB_MAX_RANK);
        v->rank = (int)tt->shape->n_dim;
        for (size_t d = 0; d < tt->shape->n_dim; d++) {
            const Onnx__TensorShapeProto__Dimension *dim = tt->shape->dim[d];
            v->dims[d] = -1;
            if (dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
                if (dim->dim_value < 0)
                    return nb_fail(c->st, NB_ERR_SHAPE, "%s: %s '%s' has negative dim %zu (%"
                                   PRId64 ")", c->path, what, v->name, d, dim->dim_value);
                v->dims[d] = dim->dim_value;
            } else if (dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM &&
                       dim->dim_param) {
                free(v->dim_params[d]);
                v->dim_params[d] = strdup(dim->dim_param);
            }
        }
        int64_t numel;
        bool known = true;
        for (int d = 0; d < v->rank; d++)
            known &= v->dims[d] >= 0;
        if (known && nb_dtype_size(v->dtype) &&
            nb_shape_numel(v->rank, v->dims, nb_dtype_size(v->dtype), &numel, c->st))
            return nb_prefix(c->st, "%s: %s '%s'", c->path, what, v->name);
    }
    return NB_OK;
}

/* Attributes whose type is the same in every default-domain operator of opsets 1-18
 * (ONNX Operators.md): a model giving another type is refused rather than read as absent
 * (a FLOAT 'axis' would otherwise silently become the default axis). Names whose type
 * differs between operators or opsets (p, value, k, ...) are not listed. */
static const struct {
    const char *name;
    nb_attr_type type;
} known_attrs[] = {
    {"axis", NB_ATTR_INT}, {"keepdims", NB_ATTR_INT}, {"group", NB_ATTR_INT},
    {"transA", NB_ATTR_INT}, {"transB", NB_ATTR_INT}, {"ceil_mode", NB_ATTR_INT},
    {"count_include_pad", NB_ATTR_INT}, {"storage_order", NB_ATTR_INT}, {"to", NB_ATTR_INT},
    {"hidden_size", NB_ATTR_INT}, {"layout", NB_ATTR_INT}, {"linear_before_reset", NB_ATTR_INT},
    {"input_forget", NB_ATTR_INT}, {"select_last_index", NB_ATTR_INT},
    {"noop_with_empty_axes", NB_ATTR_INT}, {"exclusive", NB_ATTR_INT}, {"reverse", NB_ATTR_INT},
    {"largest", NB_ATTR_INT}, {"sorted", NB_ATTR_INT}, {"blocksize", NB_ATTR_INT},
    {"exclude_outside", NB_ATTR_INT}, {"batch_dims", NB_ATTR_INT}, {"allowzero", NB_ATTR_INT},
    {"fmod", NB_ATTR_INT}, {"saturate", NB_ATTR_INT}, {"training_mode", NB_ATTR_INT},
    {"num_outputs", NB_ATTR_INT}, {"upper", NB_ATTR_INT}, {"dtype", NB_ATTR_INT},
    {"alpha", NB_ATTR_FLOAT}, {"beta", NB_ATTR_FLOAT}, {"gamma", NB_ATTR_FLOAT},
    {"epsilon", NB_ATTR_FLOAT}, {"momentum", NB_ATTR_FLOAT}, {"lambd", NB_ATTR_FLOAT},
    {"cubic_coeff_a", NB_ATTR_FLOAT}, {"extrapolation_value", NB_ATTR_FLOAT},
    {"clip", NB_ATTR_FLOAT}, {"min", NB_ATTR_FLOAT}, {"max", NB_ATTR_FLOAT},
    {"auto_pad", NB_ATTR_STRING}, {"mode", NB_ATTR_STRING}, {"direction", NB_ATTR_STRING},
    {"coordinate_transformation_mode", NB_ATTR_STRING}, {"nearest_mode", NB_ATTR_STRING},
    {"keep_aspect_ratio_policy", NB_ATTR_STRING}, {"equation", NB_ATTR_STRING},
    {"kernel_shape", NB_ATTR_INTS}, {"strides", NB_ATTR_INTS}, {"dilations", NB_ATTR_INTS},
    {"pads", NB_ATTR_INTS}, {"perm", NB_ATTR_INTS}, {"output_padding", NB_ATTR_INTS},
    {"output_shape", NB_ATTR_INTS}, {"split", NB_ATTR_INTS}, {"starts", NB_ATTR_INTS},
    {"ends", NB_ATTR_INTS}, {"axes", NB_ATTR_INTS},
    {"activation_alpha", NB_ATTR_FLOATS}, {"activation_beta", NB_ATTR_FLOATS},
    {"activations", NB_ATTR_STRINGS},
    {"then_branch", NB_ATTR_GRAPH}, {"else_branch", NB_ATTR_GRAPH}, {"body", NB_ATTR_GRAPH},
};

static const char *attr_type_name(nb_attr_type t)
{
    static const char *const names[] = {"UNDEFINED", "FLOAT", "INT",   "STRING", "TENSOR",
                                        "GRAPH",     "FLOATS", "INTS", "STRINGS"};
    return (unsigned)t < sizeof names / sizeof names[0] ? names[t] : "UNKNOWN";
}

static nb_err check_attr_type(import_ctx *c, const nb_node *n, const nb_attr *a)
{
    if (n->domain && *n->domain && strcmp(n->domain, "ai.onnx") != 0)
        return NB_OK;
    for (size_t i = 0; i < sizeof known_attrs / sizeof known_attrs[0]; i++)
        if (!strcmp(known_attrs[i].name, a->name)) {
            if (a->type == known_attrs[i].type)
                return NB_OK;
            return nb_fail(c->st, NB_ERR_ATTR, "%s: node '%s' (%s): attribute '%s' must be %s, "
                           "the model gives %s", c->path, n->name, n->op_type, a->name,
                           attr_type_name(known_attrs[i].type), attr_type_name(a->type));
        }
    return NB_OK;
}

static nb_err import_attr(import_ctx *c, const Onnx__AttributeProto *ap, nb_attr *a,
                          nb_graph *g, const char *node_name)
{
    a->name = strdup(ap->name ? ap->name : "");
    if (!a->name)
        return nb_fail(c->st, NB_ERR_NOMEM, "out of memory");
    /* the gate (gate_attr) wrote the type an old model left out, deduced from the field set */
    int type = ap->has_type ? (int)ap->type : 0;
    what_ref wr = {"node '%s' attribute '%s'", node_name, a->name};
    char what[600];
    switch (type) {
    case NB_ATTR_FLOAT: a->type = NB_ATTR_FLOAT; a->f = ap->f; break;
    case NB_ATTR_INT: a->type = NB_ATTR_INT; a->i = ap->i; break;
    case NB_ATTR_STRING:
        a->type = NB_ATTR_STRING;
        a->s = malloc(ap->s.len + 1);
        if (!a->s)
            return nb_fail(c->st, NB_ERR_NOMEM, "out of memory");
        if (ap->s.len)
            memcpy(a->s, ap->s.data, ap->s.len);
        a->s[ap->s.len] = 0;
        break;
    case NB_ATTR_TENSOR:
        a->type = NB_ATTR_TENSOR;
        if (!ap->t)
            return nb_fail(c->st, NB_ERR_FORMAT, "%s: %s has no tensor", c->path,
                           what_str(&wr, what, sizeof what));
        return decode_tensor(c, ap->t, &wr, &a->t);
    case NB_ATTR_GRAPH: {
        a->type = NB_ATTR_GRAPH;
        if (!ap->g)
            return nb_fail(c->st, NB_ERR_FORMAT, "%s: %s has no graph", c->path,
                           what_str(&wr, what, sizeof what));
        char gname[600];
        snprintf(gname, sizeof gname, "%s/%s", node_name, a->name);
        a->g = nb_graph_new(ap->g->name && *ap->g->name ? ap->g->name : gname, g, g->opset);
        if (!a->g)
            return nb_fail(c->st, NB_ERR_NOMEM, "out of memory");
        return import_graph(c, ap->g, a->g);
    }
    case NB_ATTR_FLOATS:
        a->type = NB_ATTR_FLOATS;
        a->n = (int)ap->n_floats;
        a->floats = malloc(sizeof(float) * (ap->n_floats + 1));
        if (!a->floats)
            return nb_fail(c->st, NB_ERR_NOMEM, "out of memory");
        if (ap->n_floats)
            memcpy(a->floats, ap->floats, sizeof(float) * ap->n_floats);
        break;
    case NB_ATTR_INTS:
        a->type = NB_ATTR_INTS;
        a->n = (int)ap->n_ints;
        a->ints = malloc(sizeof(int64_t) * (ap->n_ints + 1));
        if (!a->ints)
            return nb_fail(c->st, NB_ERR_NOMEM, "out of memory");
        if (ap->n_ints)
            memcpy(a->ints, ap->ints, sizeof(int64_t) * ap->n_ints);
        break;
    case NB_ATTR_STRINGS:
        a->type = NB_ATTR_STRINGS;
        a->strings = calloc(ap->n_strings + 1, sizeof(char *));
        if (!a->strings)
            return nb_fail(c->st, NB_ERR_NOMEM, "out of memory");
        for (size_t i = 0; i < ap->n_strings; i++) {
            a->strings[i] = malloc(ap->strings[i].len + 1);
            if (!a->strings[i])
                return nb_fail(c->st, NB_ERR_NOMEM, "out of memory");
            if (ap->strings[i].len)
                memcpy(a->strings[i], ap->strings[i].data, ap->strings[i].len);
            a->strings[i][ap->strings[i].len] = 0;
            a->n = (int)i + 1;
        }
        break;
    default:
        a->type = NB_ATTR_UNDEFINED; /* sparse tensors, type protos, lists of graphs: unused */
        break;
    }
    return NB_OK;
}

/* The value of a Constant node (opset 11+: value, value_float(s), value_int(s)). */
static nb_err constant_value(import_ctx *c, const Onnx__NodeProto *np, const char *node_name,
                             nb_tensor **out)
{
    nb_status *st = c->st;
    if (np->n_attribute != 1)
        return nb_fail(st, NB_ERR_ATTR, "%s: Constant node '%s' must have exactly one attribute",
                       c->path, node_name);
    const Onnx__AttributeProto *ap = np->attribute[0];
    const char *an = ap->name ? ap->name : "";
    what_ref wr = {"Constant node '%s'", node_name, NULL};
    if (!strcmp(an, "value") && ap->t) {
        c->defer_here = true;
        nb_err e = decode_tensor(c, ap->t, &wr, out);
        c->defer_here = false;
        return e;
    }
    int64_t one = 1;
    nb_err e;
    if (!strcmp(an, "value_float")) {
        if ((e = nb_tensor_new(NB_FLOAT, 0, NULL, out, st)))
            return e;
        *(float *)(*out)->data = ap->f;
        return NB_OK;
    }
    if (!strcmp(an, "value_int")) {
        if ((e = nb_tensor_new(NB_INT64, 0, NULL, out, st)))
            return e;
        *(int64_t *)(*out)->data = ap->i;
        return NB_OK;
    }
    if (!strcmp(an, "value_floats")) {
        one = (int64_t)ap->n_floats;
        if ((e = nb_tensor_new(NB_FLOAT, 1, &one, out, st)))
            return e;
        if (one)
            memcpy((*out)->data, ap->floats, sizeof(float) * (size_t)one);
        return NB_OK;
    }
    if (!strcmp(an, "value_ints")) {
        one = (int64_t)ap->n_ints;
        if ((e = nb_tensor_new(NB_INT64, 1, &one, out, st)))
            return e;
        if (one)
            memcpy((*out)->data, ap->ints, sizeof(int64_t) * (size_t)one);
        return NB_OK;
    }
    return nb_fail(st, NB_ERR_UNSUPPORTED, "%s: Constant node '%s': attribute '%s' is not "
                   "supported (sparse and string constants)", c->path, node_name, an);
}

int nb_graph_resolve(nb_graph *g, const char *name)
{
    int id = nb_graph_find(g, name);
    if (id >= 0 || !g->parent)
        return id;
    int pid = nb_graph_resolve(g->parent, name);
    if (pid < 0)
        return -1;
    id = nb_graph_add_value(g, name);
    if (id < 0)
        return -1;
    g->values[id].outer = pid;
    return id;
}

void nb_graph_pull_outer(nb_graph *sub)
{
    if (!sub->parent)
        return;
    for (int v = 0; v < sub->n_values; v++) {
        nb_value *sv = &sub->values[v];
        if (sv->outer < 0)
            continue;
        const nb_value *pv = &sub->parent->values[sv->outer];
        sv->dtype = pv->dtype;
        sv->rank = pv->rank;
        memcpy(sv->dims, pv->dims, sizeof sv->dims);
        nb_tensor_free(sv->const_val);
        sv->const_val = pv->const_val ? nb_tensor_ref(pv->const_val) : NULL;
    }
}

nb_err nb_node_collect_implicit(nb_graph *g, nb_node *n, nb_status *st)
{
    (void)g;
    int cap = 0;
    for (int a = 0; a < n->n_attr; a++)
        if (n->attrs[a].g)
            cap += n->attrs[a].g->n_values;
    free(n->implicit);
    n->implicit = NULL;
    n->n_implicit = 0;
    if (!cap)
        return NB_OK;
    n->implicit = malloc(sizeof(int) * (size_t)cap);
    if (!n->implicit)
        return nb_fail(st, NB_ERR_NOMEM, "out of memory");
    for (int a = 0; a < n->n_attr; a++) {
        const nb_graph *sub = n->attrs[a].g;
        if (!sub)
            continue;
        for (int v = 0; v < sub->n_values; v++) {
            int pid = sub->values[v].outer;
            if (pid < 0)
                continue;
            bool dup = false;
            for (int k = 0; k < n->n_implicit; k++)
                dup |= n->implicit[k] == pid;
            if (!dup)
                n->implicit[n->n_implicit++] = pid;
        }
    }
    return NB_OK;
}

/* The initializers of gp as constant values of g (ONNX IR: names unique, not sparse). */
static nb_err import_initializers(import_ctx *c, const Onnx__GraphProto *gp, nb_graph *g)
{
    nb_status *st = c->st;
    nb_err e;
    for (size_t i = 0; i < gp->n_initializer; i++) {
        const Onnx__TensorProto *tp = gp->initializer[i];
        const char *name = tp->name ? tp->name : "";
        if (!*name)
            return nb_fail(st, NB_ERR_FORMAT, "%s: initializer %zu has no name", c->path, i);
        if (nb_graph_find(g, name) >= 0)
            return nb_fail(st, NB_ERR_GRAPH, "%s: initializer '%s' is defined twice", c->path, name);
        int id = nb_graph_add_value(g, name);
        if (id < 0)
            return nb_fail(st, NB_ERR_NOMEM, "out of memory");
        what_ref wr = {"initializer '%s'", name, NULL};
        nb_tensor *t;
        c->defer_here = true;
        e = decode_tensor(c, tp, &wr, &t);
        c->defer_here = false;
        if (e)
            return e;
        nb_value *v = &g->values[id];
        v->const_val = t;
        v->is_initializer = true;
        v->dtype = t->dtype;
        v->rank = t->rank;
        memcpy(v->dims, t->dims, sizeof v->dims);
    }
    if (gp->n_sparse_initializer)
        return nb_fail(st, NB_ERR_UNSUPPORTED, "%s: sparse initializers are not supported", c->path);
    return NB_OK;
}

/* The graph inputs of gp as inputs of g; an input that is also an initializer stays a
 * constant (its default value). */
static nb_err import_inputs(import_ctx *c, const Onnx__GraphProto *gp, nb_graph *g)
{
    nb_status *st = c->st;
    nb_err e;
    int *inputs = malloc(sizeof(int) * (gp->n_input + 1));
    if (!inputs)
        return nb_fail(st, NB_ERR_NOMEM, "out of memory");
    g->inputs = inputs;
    for (size_t i = 0; i < gp->n_input; i++) {
        const Onnx__ValueInfoProto *vi = gp->input[i];
        const char *name = vi->name ? vi->name : "";
        if (!*name)
            return nb_fail(st, NB_ERR_FORMAT, "%s: graph input %zu has no name", c->path, i);
        int id = nb_graph_find(g, name);
        if (id >= 0 && g->values[id].is_initializer)
            continue; /* an input with a default value: a constant here */
        if (id >= 0)
            return nb_fail(st, NB_ERR_GRAPH, "%s: graph input '%s' is listed twice", c->path, name);
        id = nb_graph_add_value(g, name);
        if (id < 0)
            return nb_fail(st, NB_ERR_NOMEM, "out of memory");
        g->values[id].is_input = true;
        if (!g->parent && /* a Loop body's inputs may leave their types to inference */
            (!vi->type || vi->type->value_case == ONNX__TYPE_PROTO__VALUE__NOT_SET ||
            (vi->type->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE &&
             (!vi->type->tensor_type || !vi->type->tensor_type->has_elem_type))))
            return nb_fail(st, NB_ERR_GRAPH, "%s: graph input '%s' has no type (ONNX requires "
                           "the element type of every graph input)", c->path, name);
        if ((e = set_value_type(c, &g->values[id], vi->type, "graph input")))
            return e;
        g->inputs[g->n_inputs++] = id;
    }
    return NB_OK;
}

/* Pass 1: a value for every node output of gp, so that inputs may refer to nodes listed
 * later; a name produced twice is an error. */
static nb_err declare_node_outputs(import_ctx *c, const Onnx__GraphProto *gp, nb_graph *g)
{
    nb_status *st = c->st;
    for (size_t i = 0; i < gp->n_node; i++) {
        const Onnx__NodeProto *np = gp->node[i];
        for (size_t o = 0; o < np->n_output; o++) {
            const char *name = np->output[o];
            if (!name || !*name)
                continue;
            int id = nb_graph_find(g, name);
            if (id >= 0) {
                const nb_value *v = &g->values[id];
                return nb_fail(st, NB_ERR_GRAPH, "%s: tensor '%s' is produced twice (%s)", c->path,
                               name, v->is_initializer ? "also an initializer"
                               : v->is_input ? "also a graph input" : "by two nodes");
            }
            if (nb_graph_add_value(g, name) < 0)
                return nb_fail(st, NB_ERR_NOMEM, "out of memory");
        }
    }
    return NB_OK;
}

/* Pass 2: node np of gp into g (a Constant becomes the constant value of its output). */
static nb_err import_node(import_ctx *c, const Onnx__NodeProto *np, nb_graph *g)
{
    nb_status *st = c->st;
    nb_err e;
    const char *op = np->op_type ? np->op_type : "";
    char gen[96];
    int counter = c->node_counter++;
    const char *node_name = np->name && *np->name ? np->name : NULL;
    if (!node_name) {
        snprintf(gen, sizeof gen, "%.60s_%d", *op ? op : "node", counter);
        node_name = gen;
    }
    if (!*op)
        return nb_fail(st, NB_ERR_FORMAT, "%s: node '%s' has no op_type", c->path, node_name);
    const char *dom = np->domain ? np->domain : "";
    bool default_domain = !*dom || !strcmp(dom, "ai.onnx");
    if (!default_domain)
        return nb_fail(st, NB_ERR_UNSUPPORTED, "%s: node '%s': operator %s of domain '%s' is "
                       "not supported (only the default ONNX domain)", c->path, node_name, op, dom);
    if (!strcmp(op, "Constant")) {
        if (np->n_output != 1 || !np->output[0] || !*np->output[0])
            return nb_fail(st, NB_ERR_FORMAT, "%s: Constant node '%s' needs one output",
                           c->path, node_name);
        nb_tensor *t;
        if ((e = constant_value(c, np, node_name, &t)))
            return e;
        nb_value *v = &g->values[nb_graph_find(g, np->output[0])];
        v->const_val = t;
        v->dtype = t->dtype;
        v->rank = t->rank;
        memcpy(v->dims, t->dims, sizeof v->dims);
        return NB_OK;
    }
    nb_node *n = nb_graph_add_node(g);
    if (!n)
        return nb_fail(st, NB_ERR_NOMEM, "out of memory");
    n->name = strdup(node_name);
    n->op_type = strdup(op);
    n->domain = strdup("");
    n->in = malloc(sizeof(int) * (np->n_input + 1));
    n->out = malloc(sizeof(int) * (np->n_output + 1));
    n->attrs = calloc(np->n_attribute + 1, sizeof(nb_attr));
    if (!n->name || !n->op_type || !n->domain || !n->in || !n->out || !n->attrs)
        return nb_fail(st, NB_ERR_NOMEM, "out of memory");
    for (size_t k = 0; k < np->n_input; k++) {
        const char *name = np->input[k];
        int id = -1;
        if (name && *name) {
            id = nb_graph_resolve(g, name);
            if (id < 0)
                return nb_fail(st, NB_ERR_GRAPH, "%s: node '%s' (%s) input '%s' is not produced "
                               "by any node, initializer or graph input", c->path, node_name,
                               op, name);
        }
        n->in[n->n_in++] = id;
    }
    for (size_t k = 0; k < np->n_output; k++) {
        const char *name = np->output[k];
        n->out[n->n_out++] = name && *name ? nb_graph_find(g, name) : -1;
    }
    for (size_t k = 0; k < np->n_attribute; k++) {
        /* n may move if a subgraph import adds nodes to g: it does not (subgraphs are
           separate graphs), but attribute import may add outer values to g. */
        if ((e = import_attr(c, np->attribute[k], &n->attrs[n->n_attr], g, node_name))) {
            n->n_attr++;
            return e;
        }
        n->n_attr++;
        if ((e = check_attr_type(c, n, &n->attrs[n->n_attr - 1])))
            return e;
    }
    if ((e = nb_node_collect_implicit(g, n, st)))
        return e;
    return NB_OK;
}

/* The graph outputs of gp as outputs of g, each produced by something; the declared type of
 * a node's output is a hint that inference checks. */
static nb_err import_outputs(import_ctx *c, const Onnx__GraphProto *gp, nb_graph *g)
{
    nb_status *st = c->st;
    nb_err e;
    g->outputs = malloc(sizeof(int) * (gp->n_output + 1));
    if (!g->outputs)
        return nb_fail(st, NB_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < gp->n_output; i++) {
        const Onnx__ValueInfoProto *vi = gp->output[i];
        const char *name = vi->name ? vi->name : "";
        int id = *name ? nb_graph_resolve(g, name) : -1;
        if (id < 0)
            return nb_fail(st, NB_ERR_GRAPH, "%s: graph output '%s' is not produced by any node, "
                           "initializer or input", c->path, name);
        nb_value *v = &g->values[id];
        v->is_output = true;
        if (!v->const_val && !v->is_input && v->outer < 0) {
            nb_value tmp = *v;
            memset(tmp.dim_params, 0, sizeof tmp.dim_params);
            if ((e = set_value_type(c, &tmp, vi->type, "graph output"))) {
                for (int d = 0; d < NB_MAX_RANK; d++) /* a symbol read before the bad dim */
                    free(tmp.dim_params[d]);
                return e;
            }
            v->dtype = tmp.dtype;
            v->rank = tmp.rank;
            memcpy(v->dims, tmp.dims, sizeof v->dims);
            for (int d = 0; d < NB_MAX_RANK; d++)
                free(tmp.dim_params[d]);
        }
        g->outputs[g->n_outputs++] = id;
    }
    return NB_OK;
}

static nb_err import_graph(import_ctx *c, const Onnx__GraphProto *gp, nb_graph *g)
{
    nb_err e;
    if ((e = import_initializers(c, gp, g)) || (e = import_inputs(c, gp, g)) ||
        (e = declare_node_outputs(c, gp, g)))
        return e;
    for (size_t i = 0; i < gp->n_node; i++)
        if ((e = import_node(c, gp->node[i], g)))
            return e;
    if ((e = import_outputs(c, gp, g)))
        return e;
    return nb_graph_sort(g, c->st) ? nb_prefix(c->st, "%s", c->path) : NB_OK;
}

/* Warns about node outputs that nothing reads (recursively). */
static void warn_unused(nb_model *m, const nb_graph *g)
{
    int *uses = calloc((size_t)g->n_values + 1, sizeof(int));
    if (!uses)
        return;
    for (int i = 0; i < g->n_nodes; i++) {
        const nb_node *n = &g->nodes[i];
        for (int k = 0; k < n->n_in; k++)
            if (n->in[k] >= 0)
                uses[n->in[k]]++;
        for (int k = 0; k < n->n_implicit; k++)
            uses[n->implicit[k]]++;
        for (int a = 0; a < n->n_attr; a++)
            if (n->attrs[a].g)
                warn_unused(m, n->attrs[a].g);
    }
    for (int i = 0; i < g->n_nodes; i++) {
        const nb_node *n = &g->nodes[i];
        for (int k = 0; k < n->n_out; k++) {
            int v = n->out[k];
            if (v >= 0 && !uses[v] && !g->values[v].is_output)
                nb_model_warn(m, "output '%s' of node '%s' (%s) is not used", g->values[v].name,
                              n->name, n->op_type);
        }
    }
    for (int i = 0; i < g->n_inputs; i++)
        if (!uses[g->inputs[i]] && !g->values[g->inputs[i]].is_output)
            nb_model_warn(m, "graph input '%s' is not used", g->values[g->inputs[i]].name);
    free(uses);
}

static nb_err apply_override_list(import_ctx *c, nb_graph *g, const nb_shape_override *o,
                                  int n);

static nb_err apply_overrides(import_ctx *c, nb_graph *g, const char *text)
{
    nb_shape_override *o;
    int n;
    nb_err e = nb_parse_input_shape(text, &o, &n, c->st);
    if (e)
        return e;
    e = apply_override_list(c, g, o, n);
    nb_shape_overrides_free(o, n);
    return e;
}

/* The shapes of o (n of them, names as data) set on g's inputs, checked as --input_shape's. */
static nb_err apply_override_list(import_ctx *c, nb_graph *g, const nb_shape_override *o,
                                  int n)
{
    nb_err e = NB_OK;
    for (int i = 0; i < n && !e; i++) {
        int id = nb_graph_find(g, o[i].name);
        if (id < 0 || !g->values[id].is_input) {
            char names[512] = "";
            size_t off = 0;
            for (int k = 0; k < g->n_inputs && off < sizeof names - 4; k++)
                off += (size_t)snprintf(names + off, sizeof names - off, "%s%s", k ? ", " : "",
                                        g->values[g->inputs[k]].name);
            e = nb_fail(c->st, NB_ERR_ARG, "--input_shape: '%s' is not an input of %s (inputs: %s)",
                        o[i].name, c->path, names);
            break;
        }
        nb_value *v = &g->values[id];
        if (v->rank >= 0 && v->rank != o[i].rank) {
            e = nb_fail(c->st, NB_ERR_ARG, "--input_shape: input '%s' has rank %d in %s, the "
                        "override gives %d dims", o[i].name, v->rank, c->path, o[i].rank);
            break;
        }
        for (int d = 0; v->rank >= 0 && d < v->rank; d++)
            if (v->dims[d] >= 0 && v->dims[d] != o[i].dims[d]) {
                e = nb_fail(c->st, NB_ERR_ARG, "--input_shape: input '%s' dim %d is %" PRId64
                            " in %s, the override gives %" PRId64, o[i].name, d, v->dims[d],
                            c->path, o[i].dims[d]);
                break;
            }
        if (e)
            break;
        int64_t numel;
        if ((e = nb_shape_numel(o[i].rank, o[i].dims, nb_dtype_size(v->dtype) ? nb_dtype_size(v->dtype) : 1,
                                &numel, c->st))) {
            nb_prefix(c->st, "--input_shape: input '%s'", o[i].name);
            e = c->st->code = NB_ERR_ARG;
            break;
        }
        v->rank = o[i].rank;
        memcpy(v->dims, o[i].dims, sizeof v->dims);
    }
    /* A symbolic dim fixed by the override fixes the same symbol in the other inputs (the
       'batch' of silero_vad's input is also the 'batch' of its h and c). */
    for (int i = 0; i < n && !e; i++) {
        const nb_value *v = &g->values[nb_graph_find(g, o[i].name)];
        for (int d = 0; d < v->rank && !e; d++) {
            const char *sym = v->dim_params[d];
            if (!sym)
                continue;
            for (int k = 0; k < g->n_inputs && !e; k++) {
                nb_value *w = &g->values[g->inputs[k]];
                for (int wd = 0; wd < w->rank; wd++) {
                    if (!w->dim_params[wd] || strcmp(w->dim_params[wd], sym) != 0)
                        continue;
                    if (w->dims[wd] < 0)
                        w->dims[wd] = v->dims[d];
                    else if (w->dims[wd] != v->dims[d])
                        e = nb_fail(c->st, NB_ERR_ARG, "--input_shape: dim '%s' is %" PRId64
                                    " for input '%s' and %" PRId64 " for input '%s'", sym,
                                    v->dims[d], v->name, w->dims[wd], w->name);
                }
            }
        }
    }
    return e;
}

/* ---------------------------------------------------------------- nesting depth */

/* protobuf-c decodes nested messages recursively: a crafted file with thousands of nested
 * TypeProto or subgraph levels would overflow the stack. Before decoding, the wire format is
 * walked (without the schema: a length-delimited field is taken as a message when its bytes
 * parse as one) and a file nested deeper than NB_PB_MAX_DEPTH is refused. Real models nest
 * about 3 levels per If and 6 for a tensor shape; weight bytes rarely parse as a message
 * and never 200 levels deep. The walk stops at the limit, so it costs at most
 * NB_PB_MAX_DEPTH passes over the bytes, in practice about one. */
#define NB_PB_MAX_DEPTH 200

static bool pb_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
    uint64_t r = 0;
    for (int sh = 0; sh < 64 && *p < end; sh += 7) {
        uint8_t b = *(*p)++;
        r |= (uint64_t)(b & 0x7f) << sh;
        if (!(b & 0x80)) {
            *v = r;
            return true;
        }
    }
    return false;
}

/* Returns the nesting depth of the message in [p, end) (1 for a flat message), capped at
 * NB_PB_MAX_DEPTH + 1, or 0 when the bytes are not a message. */
static int pb_depth(const uint8_t *p, const uint8_t *end, int level)
{
    int deepest = 1;
    while (p < end) {
        uint64_t key, v;
        if (!pb_varint(&p, end, &key) || (key >> 3) == 0)
            return 0;
        switch (key & 7) {
        case 0:
            if (!pb_varint(&p, end, &v))
                return 0;
            break;
        case 1:
            if (end - p < 8)
                return 0;
            p += 8;
            break;
        case 5:
            if (end - p < 4)
                return 0;
            p += 4;
            break;
        case 2: {
            if (!pb_varint(&p, end, &v) || v > (uint64_t)(end - p))
                return 0;
            if (v > 0 && level < NB_PB_MAX_DEPTH) {
                int d = pb_depth(p, p + v, level + 1);
                if (d + 1 > deepest)
                    deepest = d + 1;
                if (level + deepest > NB_PB_MAX_DEPTH)
                    return deepest;
            }
            p += v;
            break;
        }
        default:
            return 0;
        }
    }
    return deepest;
}

static nb_err check_depth(const uint8_t *data, size_t len, const char *path, nb_status *st)
{
    if (pb_depth(data, data + len, 0) > NB_PB_MAX_DEPTH)
        return nb_fail(st, NB_ERR_UNSUPPORTED, "%s: messages nested more than %d levels deep "
                       "(subgraphs or types); nanobench does not load it", path,
                       NB_PB_MAX_DEPTH);
    return NB_OK;
}

/* The default-domain opset mp imports; -1 when none; 1 for IR < 3 without opset_import. */
static int64_t default_opset(const Onnx__ModelProto *mp)
{
    int64_t opset = -1;
    for (size_t i = 0; i < mp->n_opset_import; i++) {
        const Onnx__OperatorSetIdProto *os = mp->opset_import[i];
        const char *d = os->domain ? os->domain : "";
        if (!*d || !strcmp(d, "ai.onnx"))
            opset = os->has_version ? os->version : -1;
    }
    if (opset < 0 && mp->n_opset_import == 0 && mp->ir_version < 3)
        opset = 1; /* IR < 3 had no opset_import: opset 1 */
    return opset;
}

/* A gated model of opset 7..10 rewritten to opset 11 (nb_onnx_upgrade_legacy), its new
 * optional strings "" as the gate leaves them; arena: the allocator mp was decoded with, or
 * NULL. Models of other opsets are left as they are. */
static nb_err upgrade_legacy(Onnx__ModelProto *mp, ProtobufCAllocator *arena, const char *path,
                             char *summary, size_t summary_len, nb_status *st)
{
    int64_t opset = default_opset(mp);
    if (summary_len)
        summary[0] = 0;
    if (opset < NB_OPSET_MIN || opset >= 11)
        return NB_OK;
    nb_err e = nb_onnx_upgrade_legacy(mp, arena, path, (int)opset, summary, summary_len, st);
    if (!e && !fill_strings(&mp->base, 0, arena != NULL))
        e = nb_fail(st, NB_ERR_NOMEM, "out of memory");
    return e;
}

static nb_err decode_whole(const uint8_t *data, size_t len, const char *path,
                           Onnx__ModelProto **out, int *named, nb_status *st);

nb_err nb_onnx_decode(const uint8_t *data, size_t len, const char *path, Onnx__ModelProto **out,
                      int *named, nb_status *st)
{
    nb_err e = decode_whole(data, len, path, out, named, st);
    if (!e && (e = upgrade_legacy(*out, NULL, path ? path : "<memory>", NULL, 0, st))) {
        onnx__model_proto__free_unpacked(*out, NULL);
        *out = NULL;
    }
    return e;
}

/* nb_onnx_decode without the opset-11 rewrite. */
static nb_err decode_whole(const uint8_t *data, size_t len, const char *path,
                           Onnx__ModelProto **out, int *named, nb_status *st)
{
    *out = NULL;
    if (named)
        *named = 0;
    if (!path)
        path = "<memory>";
    if (len == 0)
        return nb_fail(st, NB_ERR_FORMAT, "%s: empty file, not an ONNX model", path);
    nb_err e = check_depth(data, len, path, st);
    if (e)
        return e;
    Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, len, data);
    if (!mp)
        return nb_fail(st, NB_ERR_FORMAT, "%s: not an ONNX model (protobuf decoding failed: "
                       "truncated, corrupt, or another kind of file)", path);
    if ((e = nb_onnx_gate(mp, path, named, st))) {
        onnx__model_proto__free_unpacked(mp, NULL);
        return e;
    }
    *out = mp;
    return NB_OK;
}

/* ---------------------------------------------------------------- lifted weights
 *
 * protobuf-c copies every bytes field into fresh memory, so a 10 MB model was copied twice
 * (decode, then into the tensor) and its fresh pages' faults were most of estimate's time.
 * For a model file that is mapped (nb_model_load), the raw_data of its tensors (initializers
 * and tensor attributes, in the graph and its subgraphs) is lifted out before decoding: the
 * message is copied without them, each one's place kept as a path of (field, index) steps
 * from the ModelProto, decoded, and each tensor's raw_data then points into the mapping,
 * where decode_tensor copies it once or, for a shapes-only load, leaves it. Field numbers
 * (onnx.proto): ModelProto.graph 7; GraphProto.node 1, .initializer 5; NodeProto.attribute
 * 5; AttributeProto.t 5, .g 6, .tensors 10, .graphs 11; TensorProto.name 8, .raw_data 9. */

#define NB_LIFT_MIN 256  /* raw_data bytes worth lifting */
#define NB_LIFT_DEPTH 16 /* steps of a path; deeper tensors are decoded as they are */

enum { PB_MODEL, PB_GRAPH, PB_NODE, PB_ATTR, PB_TENSOR };

typedef struct pb_step {
    uint32_t field, index; /* index: among the occurrences of field in the parent message */
} pb_step;

typedef struct pb_lift {
    size_t off, len;         /* the raw_data payload, in the file */
    const uint8_t *name;     /* the tensor's name bytes in the file (not terminated) */
    size_t name_len;
    int n_steps;
    pb_step steps[NB_LIFT_DEPTH];
    Onnx__TensorProto *tp;   /* the decoded tensor it was put back into */
} pb_lift;

typedef struct pb_lifts {
    const uint8_t *base;
    int depth;               /* the walk's place */
    pb_step path[NB_LIFT_DEPTH];
    pb_lift *v;
    size_t n, cap;
} pb_lifts;

static size_t pb_put_varint(uint8_t *o, uint64_t v)
{
    size_t k = 0;
    while (v >= 0x80) {
        o[k++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    o[k++] = (uint8_t)v;
    return k;
}

/* The kind of message field fn of a kind message holds, or -1 (copied as it is). */
static int pb_sub_kind(int kind, uint64_t fn)
{
    switch (kind) {
    case PB_MODEL: return fn == 7 ? PB_GRAPH : -1;
    case PB_GRAPH: return fn == 1 ? PB_NODE : fn == 5 ? PB_TENSOR : -1;
    case PB_NODE: return fn == 5 ? PB_ATTR : -1;
    case PB_ATTR:
        return fn == 5 || fn == 10 ? PB_TENSOR : fn == 6 || fn == 11 ? PB_GRAPH : -1;
    default: return -1;
    }
}

/* Copies the message [p, end) of the given kind to o without the raw_data payloads of
 * NB_LIFT_MIN bytes or more, which are listed in L with their paths. Returns the bytes
 * written (never more than end - p), or SIZE_MAX when the bytes are not a message of that
 * shape (the caller then decodes them as they are, and protobuf-c says what is wrong). */
static size_t pb_lift_msg(int kind, const uint8_t *p, const uint8_t *end, uint8_t *o,
                          pb_lifts *L)
{
    uint8_t *o0 = o;
    pb_lift cur = {0};
    bool lifted = false;
    uint32_t seen[12] = {0}; /* occurrences of fields 0..11 so far */
    while (p < end) {
        const uint8_t *f0 = p;
        uint64_t key, v;
        if (!pb_varint(&p, end, &key) || (key >> 3) == 0)
            return SIZE_MAX;
        uint64_t fn = key >> 3;
        switch (key & 7) {
        case 0:
            if (!pb_varint(&p, end, &v))
                return SIZE_MAX;
            break;
        case 1:
            if (end - p < 8)
                return SIZE_MAX;
            p += 8;
            break;
        case 5:
            if (end - p < 4)
                return SIZE_MAX;
            p += 4;
            break;
        case 2: {
            const uint8_t *l0 = p;
            if (!pb_varint(&p, end, &v) || v > (uint64_t)(end - p))
                return SIZE_MAX;
            const uint8_t *pay = p;
            p += v;
            /* protobuf-c takes a key and a length of at most 5 bytes each: a longer one is
               left in place for it to refuse */
            bool short_prefix = l0 - f0 <= 5 && pay - l0 <= 5;
            if (kind == PB_TENSOR && fn == 9) {
                /* the last raw_data is the one protobuf keeps */
                lifted = v >= NB_LIFT_MIN && short_prefix;
                if (lifted) {
                    cur.off = (size_t)(pay - L->base);
                    cur.len = (size_t)v;
                    continue;
                }
            }
            if (kind == PB_TENSOR && fn == 8) {
                cur.name = pay;
                cur.name_len = (size_t)v;
            }
            int sub = pb_sub_kind(kind, fn);
            uint32_t index = fn < 12 ? seen[fn]++ : 0;
            if (sub >= 0 && !short_prefix) /* its length is re-encoded: protobuf-c's */
                return SIZE_MAX;             /* verdict on the file as it is */
            if (sub >= 0 && L->depth < NB_LIFT_DEPTH) {
                size_t kb = (size_t)(l0 - f0), lb = (size_t)(pay - l0);
                memcpy(o, f0, kb);
                o += kb;
                L->path[L->depth++] = (pb_step){(uint32_t)fn, index};
                size_t n = pb_lift_msg(sub, pay, pay + v, o + lb, L);
                L->depth--;
                if (n == SIZE_MAX)
                    return SIZE_MAX;
                uint8_t len[10];
                size_t k = pb_put_varint(len, n); /* n <= v: k <= lb */
                memcpy(o, len, k);
                if (k < lb)
                    memmove(o + k, o + lb, n);
                o += k + n;
                continue;
            }
            break;
        }
        default:
            return SIZE_MAX;
        }
        memcpy(o, f0, (size_t)(p - f0));
        o += p - f0;
    }
    if (kind == PB_TENSOR && lifted) {
        if (L->n == L->cap) {
            size_t cap = L->cap ? L->cap * 2 : 64;
            pb_lift *nv = realloc(L->v, cap * sizeof *nv);
            if (!nv)
                return SIZE_MAX;
            L->v = nv;
            L->cap = cap;
        }
        cur.n_steps = L->depth;
        memcpy(cur.steps, L->path, sizeof(pb_step) * (size_t)L->depth);
        L->v[L->n++] = cur;
    }
    return (size_t)(o - o0);
}

/* Takes the lifted payloads back out of the decoded message (before it is freed: the
 * mapping is not protobuf-c's to free). */
static void pb_unlift(pb_lifts *L)
{
    for (size_t i = 0; i < L->n; i++)
        if (L->v[i].tp) {
            L->v[i].tp->raw_data.data = NULL;
            L->v[i].tp->raw_data.len = 0;
            L->v[i].tp->has_raw_data = 0;
            L->v[i].tp = NULL;
        }
}

/* The decoded tensor at a lift's path, or NULL when the decode does not have one there (a
 * singular message given twice is merged by protobuf: its second occurrence has no place). */
static Onnx__TensorProto *pb_follow(Onnx__ModelProto *mp, const pb_lift *lf)
{
    int kind = PB_MODEL;
    void *at = mp;
    for (int s = 0; s < lf->n_steps && at; s++) {
        uint32_t f = lf->steps[s].field, i = lf->steps[s].index;
        Onnx__GraphProto *g = kind == PB_GRAPH ? at : NULL;
        Onnx__NodeProto *n = kind == PB_NODE ? at : NULL;
        Onnx__AttributeProto *a = kind == PB_ATTR ? at : NULL;
        void *next = NULL;
        if (kind == PB_MODEL && f == 7 && i == 0)
            next = mp->graph, kind = PB_GRAPH;
        else if (g && f == 1 && i < g->n_node)
            next = g->node[i], kind = PB_NODE;
        else if (g && f == 5 && i < g->n_initializer)
            next = g->initializer[i], kind = PB_TENSOR;
        else if (n && f == 5 && i < n->n_attribute)
            next = n->attribute[i], kind = PB_ATTR;
        else if (a && f == 5 && i == 0)
            next = a->t, kind = PB_TENSOR;
        else if (a && f == 10 && i < a->n_tensors)
            next = a->tensors[i], kind = PB_TENSOR;
        else if (a && f == 6 && i == 0)
            next = a->g, kind = PB_GRAPH;
        else if (a && f == 11 && i < a->n_graphs)
            next = a->graphs[i], kind = PB_GRAPH;
        at = next;
    }
    return kind == PB_TENSOR ? at : NULL;
}

/* Puts each lifted payload back, as raw_data pointing into the mapping, into the tensor at
 * its path (checked by its name). False when one cannot be placed (the caller decodes the
 * file as it is). */
static bool pb_relift(Onnx__ModelProto *mp, pb_lifts *L)
{
    for (size_t k = 0; k < L->n; k++) {
        pb_lift *lf = &L->v[k];
        Onnx__TensorProto *tp = pb_follow(mp, lf);
        size_t nl = tp && tp->name ? strlen(tp->name) : 0;
        if (!tp || tp->has_raw_data || nl != lf->name_len ||
            (nl && memcmp(tp->name, lf->name, nl)))
            return false;
        tp->has_raw_data = 1;
        tp->raw_data.data = (uint8_t *)(L->base + lf->off);
        tp->raw_data.len = lf->len;
        lf->tp = tp;
    }
    return true;
}

/* A bump allocator for protobuf-c's unpack of the lifted message: the thousands of small
 * blocks a model decodes into (and the gate's "") come from a few large chunks, released
 * whole instead of by free_unpacked (estimate of a 900-node model: malloc, free and their
 * consolidation had been a sixth of it). */
typedef struct pb_arena {
    ProtobufCAllocator base; /* first: protobuf-c passes it as allocator_data */
    uint8_t *cur;
    size_t used, cap, next;
    void **chunks;
    size_t n, capn;
} pb_arena;

static void *pb_arena_alloc(void *ad, size_t size)
{
    pb_arena *a = ad;
    size = (size + 15) & ~(size_t)15;
    if (!a->cur || size > a->cap - a->used) {
        size_t cap = size > a->next ? size : a->next;
        if (a->n == a->capn) {
            size_t cn = a->capn ? a->capn * 2 : 16;
            void **nc = realloc(a->chunks, cn * sizeof *nc);
            if (!nc)
                return NULL;
            a->chunks = nc;
            a->capn = cn;
        }
        uint8_t *c = malloc(cap);
        if (!c)
            return NULL;
        a->chunks[a->n++] = c;
        a->cur = c;
        a->used = 0;
        a->cap = cap;
        if (a->next < ((size_t)64 << 20))
            a->next *= 2;
    }
    void *p = a->cur + a->used;
    a->used += size;
    return p;
}

static void pb_arena_free(void *ad, void *p)
{
    (void)ad;
    (void)p;
}

static void pb_arena_init(pb_arena *a, size_t first)
{
    memset(a, 0, sizeof *a);
    a->base.alloc = pb_arena_alloc;
    a->base.free = pb_arena_free;
    a->base.allocator_data = a;
    a->next = first < 65536 ? 65536 : first;
}

static void pb_arena_release(pb_arena *a)
{
    for (size_t i = 0; i < a->n; i++)
        free(a->chunks[i]);
    free(a->chunks);
    memset(a, 0, sizeof *a);
}

/* Decodes the mapped file [data, len) with its large initializers lifted (see above), then
 * the gate; *L keeps what was put back (pb_unlift before freeing *out). Returns NB_OK with
 * *out NULL when lifting does not apply (no large initializer, or bytes the walk does not
 * take): the caller decodes as usual. */
static nb_err decode_lifted(const uint8_t *data, size_t len, const char *path,
                            Onnx__ModelProto **out, pb_lifts *L, pb_arena *A, int *named,
                            nb_status *st)
{
    *out = NULL;
    L->base = data;
    uint8_t *buf = len ? malloc(len) : NULL;
    if (!buf)
        return NB_OK;
    size_t n = pb_lift_msg(PB_MODEL, data, data + len, buf, L);
    if (n == SIZE_MAX || L->n == 0) {
        free(buf);
        L->n = 0;
        return NB_OK;
    }
    nb_err e = check_depth(buf, n, path, st);
    pb_arena_init(A, 3 * n);
    Onnx__ModelProto *mp = e ? NULL : onnx__model_proto__unpack(&A->base, n, buf);
    free(buf);
    if (e || !mp) {
        pb_arena_release(A);
        L->n = 0;
        return e; /* undecodable: decoded again whole, for protobuf-c's verdict */
    }
    if (!pb_relift(mp, L)) {
        pb_unlift(L);
        pb_arena_release(A);
        L->n = 0;
        return NB_OK;
    }
    if ((e = gate_model(mp, path, named, &A->base, st))) {
        pb_unlift(L);
        pb_arena_release(A);
        return e;
    }
    *out = mp;
    return NB_OK;
}

/* Whether input k of op reads only the shape and type of a constant there, in shape
 * inference, lowering and estimate: a weight, bias or table. */
static bool weight_slot(const char *op, int k)
{
    if (!strcmp(op, "Conv") || !strcmp(op, "ConvTranspose") || !strcmp(op, "Gemm") ||
        !strcmp(op, "InstanceNormalization") || !strcmp(op, "LayerNormalization"))
        return k == 1 || k == 2;
    if (!strcmp(op, "MatMul"))
        return k == 0 || k == 1;
    if (!strcmp(op, "LSTM") || !strcmp(op, "GRU") || !strcmp(op, "RNN"))
        return k >= 1 && k <= 3;
    if (!strcmp(op, "BatchNormalization"))
        return k >= 1 && k <= 4;
    if (!strcmp(op, "Add") || !strcmp(op, "Sub") || !strcmp(op, "Mul") || !strcmp(op, "Div"))
        return true;
    if (!strcmp(op, "PRelu"))
        return k == 1;
    if (!strcmp(op, "Gather"))
        return k == 0;
    return false;
}

/* After a shapes-only model is imported: a deferred tensor of a graph (the model's or a
 * subgraph's) stays in the file only when every reader in its graph takes it as a weight
 * (weight_slot); any other is copied now (read by a subgraph, a graph output, an op that
 * reads values). */
static nb_err settle_deferred(nb_graph *g, nb_status *st)
{
    nb_err e;
    for (int i = 0; i < g->n_nodes; i++)
        for (int a = 0; a < g->nodes[i].n_attr; a++)
            if (g->nodes[i].attrs[a].g && (e = settle_deferred(g->nodes[i].attrs[a].g, st)))
                return e;
    for (int i = 0; i < g->n_nodes; i++) {
        const nb_node *n = &g->nodes[i];
        for (int k = 0; k < n->n_in; k++) {
            int v = n->in[k];
            if (v >= 0 && nb_tensor_is_deferred(g->values[v].const_val) &&
                !weight_slot(n->op_type, k) &&
                (e = nb_tensor_materialize(g->values[v].const_val, st)))
                return e;
        }
        for (int k = 0; k < n->n_implicit; k++) {
            int v = n->implicit[k];
            if (v >= 0 && (e = nb_tensor_materialize(g->values[v].const_val, st)))
                return e;
        }
    }
    for (int v = 0; v < g->n_values; v++)
        if (g->values[v].is_output && (e = nb_tensor_materialize(g->values[v].const_val, st)))
            return e;
    return NB_OK;
}

static nb_err load_model(const uint8_t *data, size_t len, const char *path_for_msgs,
                         const char *dir, const nb_load_opts *opts, nb_filemap *fmap,
                         nb_model **out, nb_status *st);

/* Frees a decoded model message: the lifted payloads taken out first, then the arena it was
 * decoded into (when it was), else protobuf-c's own blocks. */
static void release_message(Onnx__ModelProto *mp, pb_lifts *L, pb_arena *A)
{
    pb_unlift(L);
    free(L->v);
    L->v = NULL;
    L->n = 0;
    if (A->n)
        pb_arena_release(A);
    else
        onnx__model_proto__free_unpacked(mp, NULL);
}

nb_err nb_model_load_mem(const uint8_t *data, size_t len, const char *path_for_msgs,
                         const char *dir, const nb_load_opts *opts, nb_model **out,
                         nb_status *st)
{
    return load_model(data, len, path_for_msgs, dir, opts, NULL, out, st);
}

static nb_err load_model(const uint8_t *data, size_t len, const char *path_for_msgs,
                         const char *dir, const nb_load_opts *opts, nb_filemap *fmap,
                         nb_model **out, nb_status *st)
{
    static const nb_load_opts no_opts = {0};
    if (!opts)
        opts = &no_opts;
    const char *path = path_for_msgs ? path_for_msgs : "<memory>";
    *out = NULL;
    Onnx__ModelProto *mp = NULL;
    int named = 0;
    pb_lifts lifts = {0};
    pb_arena arena = {0}; /* mp's memory when it was decoded lifted */
    nb_err e = NB_OK;
    if (fmap && len &&
        (e = decode_lifted(data, len, path, &mp, &lifts, &arena, &named, st))) {
        free(lifts.v);
        return e;
    }
    if (!mp && (e = decode_whole(data, len, path, &mp, &named, st))) {
        free(lifts.v);
        return e;
    }
    nb_model *m = calloc(1, sizeof *m);
    if (!m) {
        release_message(mp, &lifts, &arena);
        return nb_fail(st, NB_ERR_NOMEM, "out of memory");
    }
    m->path = strdup(path);
    m->dir = dir ? strdup(dir) : NULL;
    m->producer = strdup(mp->producer_name ? mp->producer_name : "");
    m->file_bytes = len;
    m->n_named_nodes = named;
    if (named)
        nb_model_warn(m, "%d node(s) without a name in the file, named <op_type>_<index in "
                      "the file>", named);
    if (!mp->graph || !mp->has_ir_version) {
        e = nb_fail(st, NB_ERR_FORMAT, "%s: not an ONNX model (no %s)", path,
                    !mp->graph ? "graph" : "ir_version");
        goto done;
    }
    m->ir_version = mp->ir_version;
    int64_t opset = default_opset(mp);
    int lo = opts->allow_legacy_opset ? 1 : NB_OPSET_MIN;
    if (opset < lo || opset > NB_OPSET_MAX) {
        if (opset < 0)
            e = nb_fail(st, NB_ERR_OPSET, "%s: no opset of the default ONNX domain is imported",
                        path);
        else
            e = nb_fail(st, NB_ERR_OPSET, "%s: opset %" PRId64 " of the default domain is not "
                        "supported (nanobench and the Nano take opset %d to %d) [re-export the "
                        "model, or convert it with onnx.version_converter]", path, opset,
                        NB_OPSET_MIN, NB_OPSET_MAX);
        goto done;
    }
    m->opset = m->opset_file = (int)opset;
    if (opset >= NB_OPSET_MIN && opset < 11) {
        char conv[256];
        if ((e = upgrade_legacy(mp, arena.n ? &arena.base : NULL, path, conv, sizeof conv, st)))
            goto done;
        m->opset = 11;
        nb_model_warn(m, "opset %d model imported as opset 11%s%s", (int)opset,
                      conv[0] ? ", converted: " : " (no op to convert)", conv);
    }
    m->graph = nb_graph_new(mp->graph->name ? mp->graph->name : "main", NULL, m->opset);
    if (!m->graph) {
        e = nb_fail(st, NB_ERR_NOMEM, "out of memory");
        goto done;
    }
    import_ctx c = {.m = m, .path = path, .dir = dir, .st = st,
                    .weights_in_place = opts->weights_in_place,
                    .fmap = lifts.n ? fmap : NULL, .map_lo = data, .map_hi = data + len,
                    .deferred = opts->weights_deferred, .arena = arena.n > 0};
    if ((e = import_graph(&c, mp->graph, m->graph)))
        goto done;
    if (lifts.n && opts->weights_deferred && (e = settle_deferred(m->graph, st)))
        goto done;
    if (m->graph->n_outputs == 0) {
        e = nb_fail(st, NB_ERR_GRAPH, "%s: the graph has no outputs", path);
        goto done;
    }
    if (opts->input_shape && (e = apply_overrides(&c, m->graph, opts->input_shape)))
        goto done;
    if (!opts->input_shape && opts->n_shapes > 0 &&
        (e = apply_override_list(&c, m->graph, opts->shapes, opts->n_shapes)))
        goto done;
    warn_unused(m, m->graph);
    {
        /* declared shapes of the graph outputs, to compare with what inference computes */
        const nb_graph *g = m->graph;
        int no = g->n_outputs < 64 ? g->n_outputs : 64;
        int rank[64];
        int64_t dims[64][NB_MAX_RANK];
        for (int i = 0; i < no; i++) {
            const nb_value *v = &g->values[g->outputs[i]];
            rank[i] = v->rank;
            if (v->rank > 0)
                memcpy(dims[i], v->dims, sizeof(int64_t) * (size_t)v->rank);
        }
        if ((e = nb_infer_graph(m->graph, st))) {
            nb_prefix(st, "%s", path);
            goto done;
        }
        for (int i = 0; i < no; i++) {
            const nb_value *v = &g->values[g->outputs[i]];
            bool differ = rank[i] >= 0 && v->rank >= 0 && rank[i] != v->rank;
            for (int d = 0; !differ && rank[i] > 0 && d < rank[i]; d++)
                differ = dims[i][d] >= 0 && v->dims[d] >= 0 && dims[i][d] != v->dims[d];
            if (differ) {
                char a[160], b[160];
                nb_model_warn(m, "output '%s' is declared %s but computes to %s; the computed "
                              "shape is used (as ONNX Runtime does)", v->name,
                              nb_shape_str(rank[i], dims[i], ',', a, sizeof a),
                              nb_shape_str(v->rank, v->dims, ',', b, sizeof b));
            }
        }
    }
done:
    release_message(mp, &lifts, &arena);
    if (e) {
        nb_model_free(m);
        return e;
    }
    *out = m;
    return NB_OK;
}

nb_err nb_model_load(const char *path, const nb_load_opts *opts, nb_model **out, nb_status *st)
{
    *out = NULL;
    /* mapped, not read: the file's pages come from the page cache without a copy (a 10 MB
       model loaded 15 ms faster) */
    struct stat sb;
    FILE *f = nb_fopen_regular(path, &sb);
    if (!f)
        return nb_fail(st, NB_ERR_IO, "%s: cannot open: %s", path,
                       errno == EINVAL ? "not a regular file" : strerror(errno));
    size_t len = (size_t)sb.st_size;
    /* a shapes-only load reads the weights' pages only if it needs them: not populated;
       the mapping is shared with the weights such a load leaves in it, unmapped with the
       last of them, and guarded: a file truncated meanwhile reads zeros, not SIGBUS */
    bool deferred = opts && opts->weights_deferred;
    nb_filemap *fm = len ? nb_filemap_open(fileno(f), len, !deferred) : NULL;
    int map_err = errno;
    fclose(f);
    if (len && !fm)
        return nb_fail(st, NB_ERR_IO, "%s: cannot map: %s", path, strerror(map_err));
    char *dir = strdup(path);
    if (!dir) {
        nb_filemap_unref(fm);
        return nb_fail(st, NB_ERR_NOMEM, "out of memory");
    }
    char *slash = strrchr(dir, '/');
    if (slash)
        slash == dir ? (void)(slash[1] = 0) : (void)(*slash = 0);
    else
        strcpy(dir, ".");
    nb_err e = load_model(fm ? fm->addr : NULL, len, path, dir, opts, fm, out, st);
    free(dir);
    if (fm && fm->changed) { /* whatever the decode made of the zeros it read */
        nb_model_free(*out);
        *out = NULL;
        e = nb_fail(st, NB_ERR_IO, "%s: the file changed while it was read (it was truncated "
                    "or rewritten): read it again when it is complete", path);
    }
    if (!e && *out && fm && deferred) {
        (*out)->file = fm; /* estimate asks again after it read the deferred weights */
        fm->refs++;
    }
    nb_filemap_unref(fm);
    return e;
}

bool nb_model_file_changed(const nb_model *m)
{
    return m && m->file && m->file->changed;
}
