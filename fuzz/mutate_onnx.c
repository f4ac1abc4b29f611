/* nanobench structural fuzzer: the mutator (issue 25).
 *
 * usage: mutate_onnx IN.onnx OUT.onnx SEED
 *        mutate_onnx IN.onnx OUT.onnx ACTION:PATH
 *
 * Decodes IN as an ONNX ModelProto, applies ONE message-level mutation chosen by SEED, and
 * writes the re-encoded model to OUT; the mutation is printed on stdout as one line
 * ("graph.node[3].attribute[0].name: cleared"). Byte flips rarely produce what breaks a
 * model reader; a field that is simply absent, empty, repeated or of another type does,
 * and that is what this makes. It walks the message with protobuf-c's descriptors, so
 * every field of onnx.proto is a candidate, the ones added by a later onnx.proto too:
 *  - clear:     an optional field absent (has_ off, pointer NULL, oneof case unset), a
 *               repeated field emptied;
 *  - empty:     a string "", bytes of length 0, a message present but with no field set;
 *  - retype:    an integer or enum field given another value (0, -1, 1, 2, 7, 16, 1000,
 *               INT32_MAX, or its value +- 1): element types, attribute types, dims;
 *  - rename:    a string replaced by another string of the model (a name of another
 *               tensor, node or op type): dangling and cyclic references;
 *  - drop:      one element of a repeated field removed (a node, an input, an
 *               initializer, a dim, an attribute);
 *  - duplicate: one element of a repeated field repeated.
 * The same SEED on the same IN gives the same mutant. The second form applies one named
 * mutation (the regression tests build the models that crashed this way): ACTION is clear,
 * empty, drop, dup, or set (set:PATH=V gives an integer field the value V); PATH is a field as the first form prints it ("graph.node[3].op_type",
 * "graph.input[0].type.tensor_type.elem_type"), with [k] after a repeated field for one
 * element ("graph.node[1].input[0]": empty sets it to "", drop removes it). Exit 0 when OUT is written, 1 when
 * IN cannot be decoded or the mutation had nothing to act on, 2 on a usage error.
 *
 * The mutated message shares sub-messages (duplicate) and is never freed: the process
 * ends after writing. */
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx.pb-c.h"

/* the mutated tree shares pointers and is left to the process's end */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "detect_leaks=0"; }

typedef struct {
    ProtobufCMessage *msg;
    const ProtobufCFieldDescriptor *fd;
    char path[200];
} site;

static site *sites;
static size_t n_sites, cap_sites;
static char **strs; /* every string of the model, for rename */
static size_t n_strs, cap_strs;

static uint64_t rng;
static uint64_t next(void) /* splitmix64 */
{
    uint64_t z = (rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static size_t pick(size_t n) { return n ? (size_t)(next() % n) : 0; }

static void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n);
    if (!q) {
        fprintf(stderr, "mutate_onnx: out of memory\n");
        exit(2);
    }
    return q;
}

static void add_site(ProtobufCMessage *m, const ProtobufCFieldDescriptor *fd, const char *path)
{
    if (n_sites == cap_sites) {
        cap_sites = cap_sites ? 2 * cap_sites : 1024;
        sites = xrealloc(sites, cap_sites * sizeof *sites);
    }
    site *s = &sites[n_sites++];
    s->msg = m;
    s->fd = fd;
    snprintf(s->path, sizeof s->path, "%s%s%s", path, *path ? "." : "", fd->name);
}

static void add_str(char *s)
{
    if (!s || !*s)
        return;
    if (n_strs == cap_strs) {
        cap_strs = cap_strs ? 2 * cap_strs : 1024;
        strs = xrealloc(strs, cap_strs * sizeof *strs);
    }
    strs[n_strs++] = s;
}

static size_t elem_size(ProtobufCType t)
{
    switch (t) {
    case PROTOBUF_C_TYPE_INT64: case PROTOBUF_C_TYPE_SINT64: case PROTOBUF_C_TYPE_SFIXED64:
    case PROTOBUF_C_TYPE_UINT64: case PROTOBUF_C_TYPE_FIXED64: case PROTOBUF_C_TYPE_DOUBLE:
        return 8;
    case PROTOBUF_C_TYPE_STRING: return sizeof(char *);
    case PROTOBUF_C_TYPE_BYTES: return sizeof(ProtobufCBinaryData);
    case PROTOBUF_C_TYPE_MESSAGE: return sizeof(void *);
    case PROTOBUF_C_TYPE_BOOL: return sizeof(protobuf_c_boolean);
    default: return 4;
    }
}

static void *field_ptr(ProtobufCMessage *m, const ProtobufCFieldDescriptor *fd)
{
    return (char *)m + fd->offset;
}
static uint32_t *quant_ptr(ProtobufCMessage *m, const ProtobufCFieldDescriptor *fd)
{
    return (uint32_t *)((char *)m + fd->quantifier_offset);
}
static size_t *count_ptr(ProtobufCMessage *m, const ProtobufCFieldDescriptor *fd)
{
    return (size_t *)((char *)m + fd->quantifier_offset);
}
static bool oneof_set(ProtobufCMessage *m, const ProtobufCFieldDescriptor *fd)
{
    return !(fd->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) || *quant_ptr(m, fd) == fd->id;
}

static void walk(ProtobufCMessage *m, const char *path)
{
    const ProtobufCMessageDescriptor *d = m->descriptor;
    for (unsigned f = 0; f < d->n_fields; f++) {
        const ProtobufCFieldDescriptor *fd = &d->fields[f];
        if (!oneof_set(m, fd))
            continue;
        add_site(m, fd, path);
        char sub[200];
        if (fd->label == PROTOBUF_C_LABEL_REPEATED) {
            size_t n = *count_ptr(m, fd);
            void *arr = *(void **)field_ptr(m, fd);
            for (size_t i = 0; i < n; i++) {
                if (fd->type == PROTOBUF_C_TYPE_MESSAGE) {
                    snprintf(sub, sizeof sub, "%s%s%s[%zu]", path, *path ? "." : "", fd->name, i);
                    walk(((ProtobufCMessage **)arr)[i], sub);
                } else if (fd->type == PROTOBUF_C_TYPE_STRING) {
                    add_str(((char **)arr)[i]);
                }
            }
        } else if (fd->type == PROTOBUF_C_TYPE_MESSAGE) {
            ProtobufCMessage *s = *(ProtobufCMessage **)field_ptr(m, fd);
            if (s) {
                snprintf(sub, sizeof sub, "%s%s%s", path, *path ? "." : "", fd->name);
                walk(s, sub);
            }
        } else if (fd->type == PROTOBUF_C_TYPE_STRING) {
            add_str(*(char **)field_ptr(m, fd));
        }
    }
}

/* sets an optional scalar's presence */
static void set_has(ProtobufCMessage *m, const ProtobufCFieldDescriptor *fd, bool on)
{
    if (fd->flags & PROTOBUF_C_FIELD_FLAG_ONEOF)
        *quant_ptr(m, fd) = on ? fd->id : 0;
    else if (fd->label == PROTOBUF_C_LABEL_OPTIONAL && fd->quantifier_offset)
        *(protobuf_c_boolean *)quant_ptr(m, fd) = on;
}

static int64_t retyped(int64_t old)
{
    static const int64_t vals[] = {0, -1, 1, 2, 7, 16, 1000, INT32_MAX};
    size_t k = pick(sizeof vals / sizeof vals[0] + 2);
    if (k < sizeof vals / sizeof vals[0])
        return vals[k];
    return k == sizeof vals / sizeof vals[0] ? old + 1 : old - 1;
}

static void set_scalar(void *p, ProtobufCType t, int64_t v)
{
    switch (t) {
    case PROTOBUF_C_TYPE_INT64: case PROTOBUF_C_TYPE_SINT64: case PROTOBUF_C_TYPE_SFIXED64:
    case PROTOBUF_C_TYPE_UINT64: case PROTOBUF_C_TYPE_FIXED64:
        *(int64_t *)p = v;
        break;
    case PROTOBUF_C_TYPE_FLOAT: *(float *)p = (float)v; break;
    case PROTOBUF_C_TYPE_DOUBLE: *(double *)p = (double)v; break;
    case PROTOBUF_C_TYPE_BOOL: *(protobuf_c_boolean *)p = v != 0; break;
    default: *(int32_t *)p = (int32_t)v; break;
    }
}

static int64_t get_scalar(const void *p, ProtobufCType t)
{
    switch (t) {
    case PROTOBUF_C_TYPE_INT64: case PROTOBUF_C_TYPE_SINT64: case PROTOBUF_C_TYPE_SFIXED64:
    case PROTOBUF_C_TYPE_UINT64: case PROTOBUF_C_TYPE_FIXED64:
        return *(const int64_t *)p;
    case PROTOBUF_C_TYPE_FLOAT: return (int64_t)*(const float *)p;
    case PROTOBUF_C_TYPE_DOUBLE: return (int64_t)*(const double *)p;
    case PROTOBUF_C_TYPE_BOOL: return *(const protobuf_c_boolean *)p;
    default: return *(const int32_t *)p;
    }
}

static bool is_int(ProtobufCType t)
{
    return t != PROTOBUF_C_TYPE_STRING && t != PROTOBUF_C_TYPE_BYTES &&
           t != PROTOBUF_C_TYPE_MESSAGE;
}

/* Applies one mutation to s; writes what it did to how. False when it had nothing to do. */
static bool mutate(site *s, char *how, size_t len)
{
    ProtobufCMessage *m = s->msg;
    const ProtobufCFieldDescriptor *fd = s->fd;
    void *p = field_ptr(m, fd);
    if (fd->label == PROTOBUF_C_LABEL_REPEATED) {
        size_t *n = count_ptr(m, fd);
        size_t es = elem_size(fd->type);
        int action = (int)pick(5);
        if (*n == 0)
            return false;
        char **arr = (char **)p;
        if (action == 0) {
            snprintf(how, len, "%s: cleared (%zu elements)", s->path, *n);
            *n = 0;
        } else if (action == 1 || action == 2) {
            size_t k = pick(*n);
            memmove(*arr + k * es, *arr + (k + 1) * es, (*n - k - 1) * es);
            (*n)--;
            snprintf(how, len, "%s[%zu]: dropped", s->path, k);
        } else if (action == 3) {
            size_t k = pick(*n);
            char *grown = xrealloc(NULL, (*n + 1) * es);
            memcpy(grown, *arr, *n * es);
            memcpy(grown + *n * es, *arr + k * es, es); /* shared, never freed */
            *arr = grown;
            (*n)++;
            snprintf(how, len, "%s[%zu]: duplicated", s->path, k);
        } else {
            size_t k = pick(*n);
            void *e = *arr + k * es;
            if (fd->type == PROTOBUF_C_TYPE_STRING && n_strs) {
                char *to = strs[pick(n_strs)];
                snprintf(how, len, "%s[%zu]: '%.40s' renamed '%.40s'", s->path, k, *(char **)e, to);
                *(char **)e = to;
            } else if (fd->type == PROTOBUF_C_TYPE_STRING) {
                *(char **)e = "";
                snprintf(how, len, "%s[%zu]: emptied", s->path, k);
            } else if (is_int(fd->type)) {
                int64_t v = retyped(get_scalar(e, fd->type));
                set_scalar(e, fd->type, v);
                snprintf(how, len, "%s[%zu]: set to %" PRId64, s->path, k, v);
            } else if (fd->type == PROTOBUF_C_TYPE_BYTES) {
                ((ProtobufCBinaryData *)e)->len = 0;
                snprintf(how, len, "%s[%zu]: emptied", s->path, k);
            } else {
                ProtobufCMessage *em = xrealloc(NULL, ((const ProtobufCMessageDescriptor *)
                                                       fd->descriptor)->sizeof_message);
                protobuf_c_message_init(fd->descriptor, em);
                *(ProtobufCMessage **)e = em;
                snprintf(how, len, "%s[%zu]: emptied (no field set)", s->path, k);
            }
        }
        return true;
    }
    int action = (int)pick(3); /* clear, empty, retype/rename */
    switch (fd->type) {
    case PROTOBUF_C_TYPE_STRING: {
        char **sp = p;
        if (action == 0) {
            if (!*sp)
                return false;
            *sp = NULL;
            set_has(m, fd, false);
            snprintf(how, len, "%s: cleared", s->path);
        } else if (action == 1 || !n_strs) {
            *sp = "";
            snprintf(how, len, "%s: emptied", s->path);
        } else {
            char *to = strs[pick(n_strs)];
            snprintf(how, len, "%s: '%.40s' renamed '%.40s'", s->path, *sp ? *sp : "", to);
            *sp = to;
        }
        return true;
    }
    case PROTOBUF_C_TYPE_BYTES: {
        ProtobufCBinaryData *b = p;
        if (action == 0) {
            set_has(m, fd, false);
            b->len = 0;
            snprintf(how, len, "%s: cleared", s->path);
        } else {
            if (!b->len)
                return false;
            b->len = action == 1 ? 0 : b->len - 1 - pick(b->len);
            snprintf(how, len, "%s: cut to %zu bytes", s->path, b->len);
        }
        return true;
    }
    case PROTOBUF_C_TYPE_MESSAGE: {
        ProtobufCMessage **mp = p;
        if (action == 0 || action == 2) {
            if (!*mp)
                return false;
            *mp = NULL;
            set_has(m, fd, false);
            snprintf(how, len, "%s: cleared", s->path);
        } else {
            ProtobufCMessage *em = xrealloc(NULL, ((const ProtobufCMessageDescriptor *)
                                                   fd->descriptor)->sizeof_message);
            protobuf_c_message_init(fd->descriptor, em);
            *mp = em;
            set_has(m, fd, true);
            snprintf(how, len, "%s: emptied (no field set)", s->path);
        }
        return true;
    }
    default: {
        if (action == 0) {
            set_has(m, fd, false);
            set_scalar(p, fd->type, 0);
            snprintf(how, len, "%s: cleared", s->path);
        } else {
            int64_t v = retyped(get_scalar(p, fd->type));
            set_scalar(p, fd->type, v);
            set_has(m, fd, true);
            snprintf(how, len, "%s: set to %" PRId64, s->path, v);
        }
        return true;
    }
    }
}

/* The second form: ACTION:PATH. */
static bool named(const char *spec, char *how, size_t len)
{
    const char *colon = strchr(spec, ':');
    if (!colon)
        return false;
    char action[16], path[200];
    snprintf(action, sizeof action, "%.*s", (int)(colon - spec), spec);
    snprintf(path, sizeof path, "%s", colon + 1);
    long long set_to = 0;
    if (!strcmp(action, "set")) { /* set:PATH=V, an integer field */
        char *eq = strrchr(path, '=');
        if (!eq)
            return false;
        set_to = strtoll(eq + 1, NULL, 10);
        *eq = 0;
    }
    long k = -1;
    size_t pl = strlen(path);
    site *s = NULL;
    for (size_t i = 0; i < n_sites && !s; i++)
        if (!strcmp(sites[i].path, path))
            s = &sites[i];
    if (!s && pl && path[pl - 1] == ']') { /* one element of a repeated field */
        char *br = strrchr(path, '[');
        if (br) {
            k = strtol(br + 1, NULL, 10);
            *br = 0;
            for (size_t i = 0; i < n_sites && !s; i++)
                if (!strcmp(sites[i].path, path) && sites[i].fd->label == PROTOBUF_C_LABEL_REPEATED)
                    s = &sites[i];
        }
    }
    if (!s)
        return false;
    ProtobufCMessage *m = s->msg;
    const ProtobufCFieldDescriptor *fd = s->fd;
    void *p = field_ptr(m, fd);
    if (k >= 0) {
        size_t *n = count_ptr(m, fd), es = elem_size(fd->type);
        char **arr = (char **)p;
        if ((size_t)k >= *n)
            return false;
        if (!strcmp(action, "drop")) {
            memmove(*arr + k * es, *arr + (k + 1) * es, (*n - (size_t)k - 1) * es);
            (*n)--;
        } else if (!strcmp(action, "dup")) {
            char *grown = xrealloc(NULL, (*n + 1) * es);
            memcpy(grown, *arr, *n * es);
            memcpy(grown + *n * es, *arr + k * es, es);
            *arr = grown;
            (*n)++;
        } else if (!strcmp(action, "empty") && fd->type == PROTOBUF_C_TYPE_STRING) {
            ((char **)*arr)[k] = "";
        } else {
            return false;
        }
    } else if (!strcmp(action, "clear")) {
        if (fd->label == PROTOBUF_C_LABEL_REPEATED)
            *count_ptr(m, fd) = 0;
        else if (fd->type == PROTOBUF_C_TYPE_STRING || fd->type == PROTOBUF_C_TYPE_MESSAGE)
            *(void **)p = NULL;
        else if (fd->type == PROTOBUF_C_TYPE_BYTES)
            ((ProtobufCBinaryData *)p)->len = 0;
        else
            set_scalar(p, fd->type, 0);
        set_has(m, fd, false);
    } else if (!strcmp(action, "empty") && fd->type == PROTOBUF_C_TYPE_STRING) {
        *(char **)p = "";
    } else if (!strcmp(action, "set") && is_int(fd->type)) {
        set_scalar(p, fd->type, set_to);
        set_has(m, fd, true);
    } else {
        return false;
    }
    snprintf(how, len, "%s: %s", spec + (colon - spec) + 1, action);
    return true;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: mutate_onnx IN.onnx OUT.onnx SEED|ACTION:PATH\n");
        return 2;
    }
    rng = strtoull(argv[3], NULL, 10) * 0x2545F4914F6CDD1Dull + 1;
    FILE *f = fopen(argv[1], "rb");
    if (!f) {
        perror(argv[1]);
        return 2;
    }
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = xrealloc(NULL, sz > 0 ? (size_t)sz : 1);
    if (sz <= 0 || fread(buf, 1, (size_t)sz, f) != (size_t)sz) {
        fclose(f);
        fprintf(stderr, "%s: cannot read\n", argv[1]);
        return 1;
    }
    fclose(f);
    Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, (size_t)sz, buf);
    if (!mp) {
        fprintf(stderr, "%s: not an ONNX model\n", argv[1]);
        return 1;
    }
    walk(&mp->base, "");
    char how[400] = "";
    bool done = false;
    if (strchr(argv[3], ':')) {
        if (!named(argv[3], how, sizeof how)) {
            fprintf(stderr, "%s: no field %s to mutate\n", argv[1], argv[3]);
            return 1;
        }
        done = true;
    }
    /* the weights' value arrays and doc strings are most of the sites and the least
       interesting: a site is drawn again (up to 3 times) when it is one of those */
    for (int tries = 0; tries < 64 && !done && n_sites; tries++) {
        site *s = &sites[pick(n_sites)];
        bool dull = strstr(s->fd->name, "_data") || !strcmp(s->fd->name, "doc_string");
        if (dull && tries < 3)
            continue;
        done = mutate(s, how, sizeof how);
    }
    if (!done) {
        fprintf(stderr, "%s: no mutation applied\n", argv[1]);
        return 1;
    }
    size_t n = onnx__model_proto__get_packed_size(mp);
    uint8_t *out = xrealloc(NULL, n ? n : 1);
    onnx__model_proto__pack(mp, out);
    FILE *o = fopen(argv[2], "wb");
    if (!o || fwrite(out, 1, n, o) != n || fclose(o) != 0) {
        perror(argv[2]);
        return 2;
    }
    printf("%s\n", how);
    return 0;
}
