/* nanobench: graph building, lookup, attributes, topological sort (include/nb/ir.h). */
#define _GNU_SOURCE /* vasprintf */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir_internal.h"

/* ---- name index: open addressing, FNV-1a ---- */
typedef struct name_index {
    int cap; /* power of two */
    int *slots; /* value id or -1 */
} name_index;

uint32_t nb_fnv1a(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 16777619u;
    return h;
}

static int index_grow(nb_graph *g)
{
    name_index *ix = g->name_index;
    int ncap = ix && ix->cap ? ix->cap * 2 : 64;
    int *slots = malloc(sizeof(int) * (size_t)ncap);
    if (!slots)
        return -1;
    for (int i = 0; i < ncap; i++)
        slots[i] = -1;
    for (int v = 0; v < g->n_values; v++) {
        uint32_t h = nb_fnv1a(g->values[v].name) & (uint32_t)(ncap - 1);
        while (slots[h] >= 0)
            h = (h + 1) & (uint32_t)(ncap - 1);
        slots[h] = v;
    }
    if (!ix) {
        ix = calloc(1, sizeof *ix);
        if (!ix) {
            free(slots);
            return -1;
        }
        g->name_index = ix;
    }
    free(ix->slots);
    ix->slots = slots;
    ix->cap = ncap;
    return 0;
}

int nb_graph_find(const nb_graph *g, const char *name)
{
    const name_index *ix = g->name_index;
    if (!ix || !name)
        return -1;
    uint32_t h = nb_fnv1a(name) & (uint32_t)(ix->cap - 1);
    while (ix->slots[h] >= 0) {
        if (!strcmp(g->values[ix->slots[h]].name, name))
            return ix->slots[h];
        h = (h + 1) & (uint32_t)(ix->cap - 1);
    }
    return -1;
}

int nb_graph_add_value(nb_graph *g, const char *name)
{
    name_index *ix = g->name_index;
    if (!ix || (g->n_values + 1) * 2 > ix->cap) {
        /* grow the index after adding the value below */
    }
    if (g->n_values == g->cap_values) {
        int nc = g->cap_values ? g->cap_values * 2 : 32;
        nb_value *nv = realloc(g->values, sizeof(nb_value) * (size_t)nc);
        if (!nv)
            return -1;
        g->values = nv;
        g->cap_values = nc;
    }
    nb_value *v = &g->values[g->n_values];
    memset(v, 0, sizeof *v);
    v->name = strdup(name);
    if (!v->name)
        return -1;
    v->rank = -1;
    v->producer = -1;
    v->outer = -1;
    int id = g->n_values++;
    ix = g->name_index;
    if (!ix || g->n_values * 2 > ix->cap) {
        if (index_grow(g) != 0) {
            g->n_values--;
            free(v->name);
            return -1;
        }
    } else {
        uint32_t h = nb_fnv1a(name) & (uint32_t)(ix->cap - 1);
        while (ix->slots[h] >= 0)
            h = (h + 1) & (uint32_t)(ix->cap - 1);
        ix->slots[h] = id;
    }
    return id;
}

nb_err nb_graph_rename_value(nb_graph *g, int id, const char *name, nb_status *st)
{
    char *nn = strdup(name);
    if (!nn)
        return nb_fail(st, NB_ERR_NOMEM, "out of memory");
    free(g->values[id].name);
    g->values[id].name = nn;
    if (index_grow(g) != 0) /* rebuild */
        return nb_fail(st, NB_ERR_NOMEM, "out of memory");
    return NB_OK;
}

nb_node *nb_graph_add_node(nb_graph *g)
{
    if (g->n_nodes == g->cap_nodes) {
        int nc = g->cap_nodes ? g->cap_nodes * 2 : 32;
        nb_node *nn = realloc(g->nodes, sizeof(nb_node) * (size_t)nc);
        if (!nn)
            return NULL;
        g->nodes = nn;
        g->cap_nodes = nc;
    }
    nb_node *n = &g->nodes[g->n_nodes++];
    memset(n, 0, sizeof *n);
    return n;
}

nb_graph *nb_graph_new(const char *name, nb_graph *parent, int opset)
{
    nb_graph *g = calloc(1, sizeof *g);
    if (!g)
        return NULL;
    g->name = strdup(name ? name : "");
    g->parent = parent;
    g->opset = opset;
    if (!g->name || index_grow(g) != 0) {
        free(g->name);
        free(g);
        return NULL;
    }
    return g;
}

void nb_attr_clear(nb_attr *a)
{
    free(a->name);
    free(a->s);
    nb_tensor_free(a->t);
    nb_graph_free(a->g);
    free(a->floats);
    free(a->ints);
    for (int i = 0; a->strings && i < a->n; i++)
        free(a->strings[i]);
    free(a->strings);
    memset(a, 0, sizeof *a);
}

void nb_node_clear(nb_node *n)
{
    free(n->name);
    free(n->op_type);
    free(n->domain);
    free(n->in);
    free(n->out);
    free(n->implicit);
    for (int i = 0; i < n->n_attr; i++)
        nb_attr_clear(&n->attrs[i]);
    free(n->attrs);
    memset(n, 0, sizeof *n);
}

void nb_graph_free(nb_graph *g)
{
    if (!g)
        return;
    for (int i = 0; i < g->n_nodes; i++)
        nb_node_clear(&g->nodes[i]);
    free(g->nodes);
    for (int i = 0; i < g->n_values; i++) {
        free(g->values[i].name);
        nb_tensor_free(g->values[i].const_val);
        for (int d = 0; d < NB_MAX_RANK; d++)
            free(g->values[i].dim_params[d]);
    }
    free(g->values);
    free(g->inputs);
    free(g->outputs);
    name_index *ix = g->name_index;
    if (ix) {
        free(ix->slots);
        free(ix);
    }
    free(g->name);
    free(g);
}

void nb_model_free(nb_model *m)
{
    if (!m)
        return;
    nb_graph_free(m->graph);
    free(m->path);
    free(m->dir);
    free(m->producer);
    for (int i = 0; i < m->n_warnings; i++)
        free(m->warnings[i]);
    free(m->warnings);
    nb_filemap_unref(m->file);
    free(m);
}

int nb_graph_count_nodes(const nb_graph *g)
{
    int c = g->n_nodes;
    for (int i = 0; i < g->n_nodes; i++)
        for (int a = 0; a < g->nodes[i].n_attr; a++)
            if (g->nodes[i].attrs[a].g)
                c += nb_graph_count_nodes(g->nodes[i].attrs[a].g);
    return c;
}

/* ---- attributes ---- */
const nb_attr *nb_attr_find(const nb_node *n, const char *name)
{
    for (int i = 0; i < n->n_attr; i++)
        if (!strcmp(n->attrs[i].name, name))
            return &n->attrs[i];
    return NULL;
}

int64_t nb_attr_int(const nb_node *n, const char *name, int64_t dflt)
{
    const nb_attr *a = nb_attr_find(n, name);
    return a && a->type == NB_ATTR_INT ? a->i : dflt;
}

float nb_attr_float(const nb_node *n, const char *name, float dflt)
{
    const nb_attr *a = nb_attr_find(n, name);
    if (a && a->type == NB_ATTR_FLOAT)
        return a->f;
    if (a && a->type == NB_ATTR_INT)
        return (float)a->i;
    return dflt;
}

const char *nb_attr_str(const nb_node *n, const char *name, const char *dflt)
{
    const nb_attr *a = nb_attr_find(n, name);
    return a && a->type == NB_ATTR_STRING ? a->s : dflt;
}

const int64_t *nb_attr_ints(const nb_node *n, const char *name, int *count)
{
    const nb_attr *a = nb_attr_find(n, name);
    if (a && a->type == NB_ATTR_INTS) {
        *count = a->n;
        return a->ints;
    }
    if (a && a->type == NB_ATTR_INT) { /* tolerate a single int */
        *count = 1;
        return &a->i;
    }
    *count = 0;
    return NULL;
}

const float *nb_attr_floats(const nb_node *n, const char *name, int *count)
{
    const nb_attr *a = nb_attr_find(n, name);
    if (a && a->type == NB_ATTR_FLOATS) {
        *count = a->n;
        return a->floats;
    }
    if (a && a->type == NB_ATTR_FLOAT) {
        *count = 1;
        return &a->f;
    }
    *count = 0;
    return NULL;
}

/* ---- topological sort (Kahn with a min-heap on the original index: an already ordered
 * graph keeps its order, and ties keep the model's order) ---- */
static void heap_push(int *h, int *n, int v)
{
    int i = (*n)++;
    h[i] = v;
    while (i > 0 && h[(i - 1) / 2] > h[i]) {
        int p = (i - 1) / 2, t = h[p];
        h[p] = h[i];
        h[i] = t;
        i = p;
    }
}

static int heap_pop(int *h, int *n)
{
    int top = h[0];
    h[0] = h[--(*n)];
    int i = 0;
    for (;;) {
        int l = 2 * i + 1, r = l + 1, m = i;
        if (l < *n && h[l] < h[m]) m = l;
        if (r < *n && h[r] < h[m]) m = r;
        if (m == i) break;
        int t = h[m];
        h[m] = h[i];
        h[i] = t;
        i = m;
    }
    return top;
}

static int node_arg(const nb_node *n, int k)
{
    return k < n->n_in ? n->in[k] : n->implicit[k - n->n_in];
}

nb_err nb_graph_sort(nb_graph *g, nb_status *st)
{
    int nn = g->n_nodes, nv = g->n_values;
    size_t nedges = 0;
    for (int i = 0; i < nn; i++)
        nedges += (size_t)(g->nodes[i].n_in + g->nodes[i].n_implicit);
    int *prod = malloc(sizeof(int) * (size_t)(nv + 1));
    int *indeg = calloc((size_t)nn + 1, sizeof(int));
    int *order = malloc(sizeof(int) * ((size_t)nn + 1));
    int *heap = malloc(sizeof(int) * ((size_t)nn + 1));
    int *cstart = calloc((size_t)nv + 2, sizeof(int));
    int *cons = malloc(sizeof(int) * (nedges + 1));
    nb_node *sorted = malloc(sizeof(nb_node) * ((size_t)nn + 1));
    nb_err e = NB_OK;
    if (!prod || !indeg || !order || !heap || !cstart || !cons || !sorted) {
        e = nb_fail(st, NB_ERR_NOMEM, "out of memory");
        goto out;
    }
    for (int v = 0; v < nv; v++)
        prod[v] = -1;
    for (int i = 0; i < nn; i++)
        for (int o = 0; o < g->nodes[i].n_out; o++)
            if (g->nodes[i].out[o] >= 0)
                prod[g->nodes[i].out[o]] = i;
    /* consumers of each value (CSR); in-degree counts produced inputs, duplicates included */
    for (int i = 0; i < nn; i++) {
        const nb_node *n = &g->nodes[i];
        for (int k = 0; k < n->n_in + n->n_implicit; k++) {
            int v = node_arg(n, k);
            if (v >= 0 && prod[v] >= 0) {
                indeg[i]++;
                cstart[v + 1]++;
            }
        }
    }
    for (int v = 0; v < nv; v++)
        cstart[v + 1] += cstart[v];
    {
        int *fill = calloc((size_t)nv + 1, sizeof(int));
        if (!fill) {
            e = nb_fail(st, NB_ERR_NOMEM, "out of memory");
            goto out;
        }
        for (int i = 0; i < nn; i++) {
            const nb_node *n = &g->nodes[i];
            for (int k = 0; k < n->n_in + n->n_implicit; k++) {
                int v = node_arg(n, k);
                if (v >= 0 && prod[v] >= 0)
                    cons[cstart[v] + fill[v]++] = i;
            }
        }
        free(fill);
    }
    int hn = 0, cnt = 0;
    for (int i = 0; i < nn; i++)
        if (indeg[i] == 0)
            heap_push(heap, &hn, i);
    while (hn > 0) {
        int i = heap_pop(heap, &hn);
        order[cnt++] = i;
        const nb_node *n = &g->nodes[i];
        for (int o = 0; o < n->n_out; o++) {
            int v = n->out[o];
            if (v < 0)
                continue;
            for (int c = cstart[v]; c < cstart[v + 1]; c++)
                if (--indeg[cons[c]] == 0)
                    heap_push(heap, &hn, cons[c]);
        }
    }
    if (cnt < nn) {
        /* name a value on a cycle: an input of a blocked node produced by a blocked node */
        const char *vname = "?", *nname = "?";
        for (int i = 0; i < nn && vname[0] == '?'; i++) {
            if (indeg[i] == 0)
                continue;
            const nb_node *n = &g->nodes[i];
            for (int k = 0; k < n->n_in + n->n_implicit; k++) {
                /* explicit inputs, then the outer values its subgraphs read */
                int v = k < n->n_in ? n->in[k] : n->implicit[k - n->n_in];
                if (v >= 0 && prod[v] >= 0 && indeg[prod[v]] > 0) {
                    vname = g->values[v].name;
                    nname = n->name;
                    break;
                }
            }
        }
        e = nb_fail(st, NB_ERR_GRAPH, "graph has a cycle through tensor '%s' (input of node '%s')",
                    vname, nname);
        goto out;
    }
    for (int i = 0; i < nn; i++)
        sorted[i] = g->nodes[order[i]];
    if (nn)
        memcpy(g->nodes, sorted, sizeof(nb_node) * (size_t)nn);
    for (int v = 0; v < nv; v++)
        g->values[v].producer = -1;
    for (int i = 0; i < nn; i++)
        for (int o = 0; o < g->nodes[i].n_out; o++)
            if (g->nodes[i].out[o] >= 0)
                g->values[g->nodes[i].out[o]].producer = i;
out:
    free(prod); free(indeg); free(order); free(heap); free(cstart); free(cons); free(sorted);
    return e;
}

/* ---- --input_shape ---- */
void nb_shape_overrides_free(nb_shape_override *o, int n)
{
    for (int i = 0; o && i < n; i++)
        free(o[i].name);
    free(o);
}

bool nb_list_has(const char *list, const char *name, size_t len)
{
    for (const char *p = list; p && *p;) {
        const char *end = strchr(p, ';');
        size_t l = end ? (size_t)(end - p) : strlen(p);
        if (l == len && !strncmp(p, name, len))
            return true;
        p = end ? end + 1 : NULL;
    }
    return false;
}

nb_err nb_parse_input_shape(const char *text, nb_shape_override **out, int *n, nb_status *st)
{
    *out = NULL;
    *n = 0;
    if (!text || !*text)
        return NB_OK;
    char *copy = strdup(text);
    if (!copy)
        return nb_fail(st, NB_ERR_NOMEM, "out of memory");
    int cap = 1;
    for (const char *p = text; *p; p++)
        cap += *p == ';';
    nb_shape_override *o = calloc((size_t)cap, sizeof *o);
    if (!o) {
        free(copy);
        return nb_fail(st, NB_ERR_NOMEM, "out of memory");
    }
    int cnt = 0;
    nb_err e = NB_OK;
    char *save = NULL;
    for (char *part = strtok_r(copy, ";", &save); part; part = strtok_r(NULL, ";", &save)) {
        if (!*part)
            continue;
        char *colon = strrchr(part, ':');
        if (!colon || colon == part) {
            e = nb_fail(st, NB_ERR_ARG, "--input_shape: \"%s\" is not name:d0,d1,... "
                        "[the valid format is \"input_name1:n1,c1,h1,w1;input_name2:...\"]", part);
            break;
        }
        *colon = 0;
        for (int i = 0; i < cnt; i++)
            if (!strcmp(o[i].name, part)) {
                e = nb_fail(st, NB_ERR_ARG, "--input_shape: input \"%s\" is given twice", part);
                goto out;
            }
        o[cnt].name = strdup(part);
        if (!o[cnt].name) {
            e = nb_fail(st, NB_ERR_NOMEM, "out of memory");
            break;
        }
        int r = 0;
        char *p = colon + 1;
        *colon = ':';
        if (*p) {
            for (;;) {
                char *end;
                errno = 0;
                if (*p < '0' || *p > '9') {
                    e = nb_fail(st, NB_ERR_ARG, "--input_shape: bad dimension in \"%s\" "
                                "(dims are integers >= 0 separated by ',')", part);
                    goto out;
                }
                long long v = strtoll(p, &end, 10);
                if (errno || v > INT32_MAX) {
                    e = nb_fail(st, NB_ERR_ARG, "--input_shape: dimension too large in \"%s\"", part);
                    goto out;
                }
                if (r == NB_MAX_RANK) {
                    e = nb_fail(st, NB_ERR_ARG, "--input_shape: more than %d dims in \"%s\"",
                                NB_MAX_RANK, part);
                    goto out;
                }
                o[cnt].dims[r++] = v;
                if (*end == 0)
                    break;
                if (*end != ',' || end[1] == 0) {
                    e = nb_fail(st, NB_ERR_ARG, "--input_shape: bad dimension in \"%s\"%s", part,
                                *end == '~' ? " (ranges n1~n2 are not supported: give one shape)" : "");
                    goto out;
                }
                p = end + 1;
            }
        }
        o[cnt].rank = r;
        cnt++;
    }
out:
    free(copy);
    if (e) {
        nb_shape_overrides_free(o, cap);
        return e;
    }
    *out = o;
    *n = cnt;
    return NB_OK;
}

bool nb_grow(void **p, int *cap, int n, size_t elem)
{
    if (n < *cap)
        return true;
    int nc = *cap ? *cap * 2 : 16;
    void *q = realloc(*p, elem * (size_t)nc);
    if (!q)
        return false;
    *p = q;
    *cap = nc;
    return true;
}

bool nb_strlist_vaddf(char ***list, int *n, const char *fmt, va_list ap)
{
    char *buf = NULL;
    if (vasprintf(&buf, fmt, ap) < 0) /* whole: a long name does not cut the reason off */
        return false;
    char **l = realloc(*list, sizeof(char *) * (size_t)(*n + 1));
    if (!l) {
        free(buf);
        return false;
    }
    *list = l;
    if (!(l[*n] = buf))
        return false;
    (*n)++;
    return true;
}

bool nb_strlist_addf(char ***list, int *n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    bool ok = nb_strlist_vaddf(list, n, fmt, ap);
    va_end(ap);
    return ok;
}

nb_err nb_batch_one_shape(const nb_model *m, const char *shape, char **out, char **names,
                          nb_status *st)
{
    *out = NULL;
    if (names)
        *names = NULL;
    size_t cap = (shape ? strlen(shape) : 0) + 64, len = 0, nlen = 0, ncap = 64;
    char *all = malloc(cap), *note = malloc(ncap);
    if (!all || !note) {
        free(all), free(note);
        return nb_fail(st, NB_ERR_NOMEM, "out of memory");
    }
    len = (size_t)snprintf(all, cap, "%s", shape ? shape : "");
    note[0] = 0;
    int fixed = 0;
    const nb_graph *g = m->graph;
    for (int i = 0; i < g->n_inputs; i++) {
        const nb_value *v = &g->values[g->inputs[i]];
        /* a name with ':' (tf2onnx's "input_1:0") is fine: --input_shape splits at the last
           ':'; one with ';' cannot be written there */
        bool fix = v->rank > 0 && v->dims[0] < 0 && !strchr(v->name, ';');
        for (int d = 1; fix && d < v->rank; d++)
            fix = v->dims[d] >= 0;
        if (!fix)
            continue;
        size_t need = len + strlen(v->name) + 24 * (size_t)v->rank + 8;
        size_t nneed = nlen + strlen(v->name) + 8;
        char *a2 = need > cap ? realloc(all, cap = 2 * need) : all;
        if (a2)
            all = a2;
        char *n2 = a2 && nneed > ncap ? realloc(note, ncap = 2 * nneed) : note;
        if (n2)
            note = n2;
        if (!a2 || !n2) {
            free(all), free(note);
            return nb_fail(st, NB_ERR_NOMEM, "out of memory");
        }
        len += (size_t)snprintf(all + len, cap - len, "%s%s:1", len ? ";" : "", v->name);
        for (int d = 1; d < v->rank; d++)
            len += (size_t)snprintf(all + len, cap - len, ",%lld", (long long)v->dims[d]);
        nlen += (size_t)snprintf(note + nlen, ncap - nlen, "%s'%s'", nlen ? ", " : "", v->name);
        fixed++;
    }
    if (!fixed) {
        free(all), free(note);
        return NB_OK;
    }
    *out = all;
    if (names)
        *names = note;
    else
        free(note);
    return NB_OK;
}

bool nb_name_set_has(const nb_name_set *ns, const char *name)
{
    if (!ns->cap)
        return false;
    for (size_t h = nb_fnv1a(name) & (ns->cap - 1);; h = (h + 1) & (ns->cap - 1)) {
        if (!ns->slot[h])
            return false;
        if (!strcmp(ns->slot[h], name))
            return true;
    }
}

bool nb_name_set_add(nb_name_set *ns, const char *name)
{
    if (2 * (ns->n + 1) > ns->cap) {
        size_t cap = ns->cap ? 2 * ns->cap : 64;
        const char **slot = calloc(cap, sizeof *slot);
        if (!slot)
            return false;
        for (size_t i = 0; i < ns->cap; i++)
            if (ns->slot[i]) {
                size_t h = nb_fnv1a(ns->slot[i]) & (cap - 1);
                while (slot[h])
                    h = (h + 1) & (cap - 1);
                slot[h] = ns->slot[i];
            }
        free(ns->slot);
        ns->slot = slot;
        ns->cap = cap;
    }
    size_t h = nb_fnv1a(name) & (ns->cap - 1);
    while (ns->slot[h]) {
        if (!strcmp(ns->slot[h], name))
            return true;
        h = (h + 1) & (ns->cap - 1);
    }
    ns->slot[h] = name;
    ns->n++;
    return true;
}
