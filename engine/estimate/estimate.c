/* nanobench estimate: sizes, op types and the per-layer table (include/nb/estimate.h). */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "nb/estimate.h"


static int cmp_count(const void *pa, const void *pb)
{
    const nb_op_count *a = pa, *b = pb;
    return a->count != b->count ? b->count - a->count : strcmp(a->op, b->op);
}

static bool count_op(nb_op_count **list, int *n, const char *op)
{
    for (int i = 0; i < *n; i++)
        if (!strcmp((*list)[i].op, op)) {
            (*list)[i].count++;
            return true;
        }
    nb_op_count *l = realloc(*list, sizeof **list * (size_t)(*n + 1));
    if (!l)
        return false;
    *list = l;
    snprintf(l[*n].op, sizeof l[*n].op, "%s", op);
    l[*n].count = 1;
    (*n)++;
    return true;
}

static bool count_graph(const nb_graph *g, nb_op_count **list, int *n)
{
    for (int i = 0; i < g->n_nodes; i++) {
        const nb_node *nd = &g->nodes[i];
        if (!count_op(list, n, nd->op_type))
            return false;
        for (int a = 0; a < nd->n_attr; a++)
            if (nd->attrs[a].g && !count_graph(nd->attrs[a].g, list, n))
                return false;
    }
    return true;
}

/* The first task at which the bytes alive (each rounded up to NB_EXEOM_ALIGN, as the plan
   reserves them) reach the arena's lower bound: a sweep over the slots' lifetimes. */
static nb_err peak_task(nb_estimate *e, nb_status *st)
{
    int steps = 0;
    for (int i = 0; i < e->n_arena_map; i++)
        steps = e->arena_map[i].last + 1 > steps ? e->arena_map[i].last + 1 : steps;
    if (!steps)
        return NB_OK;
    int64_t *delta = calloc((size_t)steps + 1, sizeof *delta);
    if (!delta)
        return nb_fail(st, NB_ERR_NOMEM, "out of memory");
    for (int i = 0; i < e->n_arena_map; i++) {
        const nb_arena_slot *s = &e->arena_map[i];
        int64_t size = (s->bytes + NB_EXEOM_ALIGN - 1) / NB_EXEOM_ALIGN * NB_EXEOM_ALIGN;
        delta[s->first] += size;
        delta[s->last + 1] -= size;
    }
    int64_t alive = 0, best = -1;
    for (int k = 0; k < steps; k++) {
        alive += delta[k];
        if (alive > best)
            best = alive, e->arena_peak_task = k;
    }
    free(delta);
    return NB_OK;
}

nb_err nb_estimate_model(const nb_model *m, const nb_op_table *ops, const nb_npu_opts *o,
                         nb_estimate *e, nb_status *st)
{
    memset(e, 0, sizeof *e);
    nb_err err = nb_npu_lower(m, ops, o, &e->g, st);
    if (err)
        return err;
    const nb_npu_graph *g = &e->g;
    e->model_path = m->path;
    e->soc_version = o && o->soc_version ? o->soc_version : "Ascend035A";
    /* the activation arena over the task order */
    nb_live_buf *bufs = malloc(sizeof *bufs * ((size_t)g->n_t + 1));
    int64_t *offs = malloc(sizeof(int64_t) * ((size_t)g->n_t + 1));
    int *which = malloc(sizeof(int) * ((size_t)g->n_t + 1)); /* buffer -> tensor */
    e->arena_offset = malloc(sizeof(int64_t) * ((size_t)g->n_t + 1));
    int nb = 0;
    if (!bufs || !offs || !which || !e->arena_offset) {
        free(bufs), free(offs), free(which);
        nb_estimate_free(e);
        return nb_fail(st, NB_ERR_NOMEM, "out of memory");
    }
    for (int i = 0; i < g->n_t; i++) {
        const nb_npu_tensor *t = &g->t[i];
        e->arena_offset[i] = -1;
        switch (t->role) {
        case NB_T_WEIGHT: /* counted per task below */
            break;
        case NB_T_INPUT:
        case NB_T_OUTPUT:
            e->io_bytes += t->bytes;
            break;
        case NB_T_ACTIVATION:
            if (t->first < 0) /* never written (an unused state): no slot */
                break;
            bufs[nb].size = t->bytes;
            bufs[nb].first = t->first;
            bufs[nb].last = t->last < t->first ? t->first : t->last;
            which[nb++] = i;
            break;
        }
    }
    err = nb_plan_arena(nb, bufs, NB_EXEOM_ALIGN, offs, &e->arena, st);
    e->arena_peak_task = -1;
    if (!err && !(e->arena_map = malloc(sizeof *e->arena_map * ((size_t)nb + 1))))
        err = nb_fail(st, NB_ERR_NOMEM, "out of memory");
    for (int b = 0; !err && b < nb; b++) {
        e->arena_offset[which[b]] = offs[b];
        e->arena_map[b] = (nb_arena_slot){.tensor = which[b], .offset = offs[b],
                                          .bytes = bufs[b].size, .first = bufs[b].first,
                                          .last = bufs[b].last};
    }
    if (!err) {
        e->n_arena_map = nb;
        err = peak_task(e, st);
    }
    free(bufs);
    free(offs);
    free(which);
    if (err) {
        nb_estimate_free(e);
        return err;
    }
    for (int i = 0; i < g->n_k; i++) {
        e->macs += g->k[i].macs;
        e->weight_bytes += g->k[i].weight_bytes;
        if (!nb_task_in_exeom(&g->k[i]) && !count_op(&e->unsupported, &e->n_unsupported,
                                                     g->k[i].onnx_op))
            err = nb_fail(st, NB_ERR_NOMEM, "out of memory");
    }
    e->task_desc_bytes = (int64_t)g->n_k * NB_EXEOM_TASK_DESC_BYTES;
    e->mem_bytes = e->weight_bytes + e->task_desc_bytes + e->io_bytes + e->arena.arena;
    e->exeom_bytes = NB_EXEOM_HEADER_BYTES + (int64_t)g->n_t * NB_EXEOM_TENSOR_DESC_BYTES +
                     e->task_desc_bytes + e->weight_bytes;
    if (!err && !count_graph(m->graph, &e->net, &e->n_net))
        err = nb_fail(st, NB_ERR_NOMEM, "out of memory");
    if (err) {
        nb_estimate_free(e);
        return err;
    }
    if (e->n_net)
        qsort(e->net, (size_t)e->n_net, sizeof *e->net, cmp_count);
    if (e->n_unsupported)
        qsort(e->unsupported, (size_t)e->n_unsupported, sizeof *e->unsupported, cmp_count);
    return NB_OK;
}

void nb_estimate_free(nb_estimate *e)
{
    nb_npu_graph_free(&e->g);
    free(e->arena_offset);
    free(e->arena_map);
    free(e->net);
    free(e->unsupported);
    for (int i = 0; i < e->n_notes; i++)
        free(e->notes[i]);
    free(e->notes);
    memset(e, 0, sizeof *e);
}

bool nb_estimate_note(nb_estimate *e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    bool ok = nb_strlist_vaddf(&e->notes, &e->n_notes, fmt, ap);
    va_end(ap);
    return ok;
}

static const char *human(int64_t b, char *buf, size_t len)
{
    if (b < 1024)
        snprintf(buf, len, "%lld B", (long long)b);
    else if (b < 1024 * 1024)
        snprintf(buf, len, "%.1f KiB", (double)b / 1024);
    else
        snprintf(buf, len, "%.2f MiB", (double)b / (1024 * 1024));
    return buf;
}

/* "cpu" for a task the MCU's core runs (an If's select), "cpu-unsupported" for one nothing
 * runs (NOT_SUPPORT_OP_TYPE) */
static const char *unit_name(const nb_npu_task *k)
{
    return k->unit == NB_TASK_CUBE     ? "cube"
           : k->unit == NB_TASK_VECTOR ? "vector"
           : nb_task_in_exeom(k)       ? "cpu"
                                       : "cpu-unsupported";
}

/* A copy of s with tab, newline, carriage return and backslash as \t \n \r \\ (a
 * table row stays one line), or NULL when out of memory. */
static char *escaped(const char *s)
{
    char *o = malloc(2 * strlen(s) + 1), *p = o;
    for (; o && *s; s++) {
        const char *e = *s == '\t' ? "\\t" : *s == '\n' ? "\\n" : *s == '\r' ? "\\r"
                      : *s == '\\' ? "\\\\" : NULL;
        if (e)
            *p++ = e[0], *p++ = e[1];
        else
            *p++ = *s;
    }
    if (o)
        *p = 0;
    return o;
}

/* "[1,16,96] FLOAT16" for t, "-" for none. */
static void shape_cell(const nb_npu_tensor *t, char *buf, size_t len)
{
    if (!t) {
        snprintf(buf, len, "-");
        return;
    }
    size_t o = (size_t)snprintf(buf, len, "[");
    for (int d = 0; d < t->rank && o < len; d++)
        o += (size_t)snprintf(buf + o, len - o, "%s%lld", d ? "," : "", (long long)t->dims[d]);
    if (o < len)
        snprintf(buf + o, len - o, "] %s", nb_dtype_name(t->dtype));
}

static void print_report(const nb_estimate *e, FILE *f, bool per_layer);

void nb_estimate_print(const nb_estimate *e, FILE *f, bool per_layer)
{
    /* through memory: names and op types come from the model, and a control byte in one (an
       escape sequence) must not reach the terminal; each becomes '?' */
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (!m) {
        print_report(e, f, per_layer);
        return;
    }
    print_report(e, m, per_layer);
    fclose(m);
    for (size_t i = 0; i < len; i++)
        if (((unsigned char)buf[i] < 32 && buf[i] != '\n') || buf[i] == 127)
            buf[i] = '?';
    fwrite(buf, 1, len, f);
    free(buf);
}

static void print_report(const nb_estimate *e, FILE *f, bool per_layer)
{
    char h[32];
    fprintf(f, "TOTAL_WEIGHT_SIZE:   %lld (%s)\n", (long long)e->weight_bytes,
            human(e->weight_bytes, h, sizeof h));
    fprintf(f, "TOTAL_MEM_SIZE:      %lld (%s)\n", (long long)e->mem_bytes,
            human(e->mem_bytes, h, sizeof h));
    fprintf(f, "  weights %lld (each %d-byte aligned) + task descriptors %lld + inputs/outputs "
            "%lld + activation arena %lld\n", (long long)e->weight_bytes, NB_EXEOM_ALIGN,
            (long long)e->task_desc_bytes, (long long)e->io_bytes, (long long)e->arena.arena);
    fprintf(f, "TOTAL_EXEOM_SIZE:    %lld (%s)\n", (long long)e->exeom_bytes,
            human(e->exeom_bytes, h, sizeof h));
    fprintf(f, "  header %d + tensor descriptors %d x %d + task descriptors %lld + weights %lld\n",
            NB_EXEOM_HEADER_BYTES, e->g.n_t, NB_EXEOM_TENSOR_DESC_BYTES,
            (long long)e->task_desc_bytes, (long long)e->weight_bytes);
    fprintf(f, "TOTAL_NET_OP_TYPE:   %d:", e->n_net);
    for (int i = 0; i < e->n_net; i++)
        fprintf(f, " %s(%d)", e->net[i].op, e->net[i].count);
    fprintf(f, "\nNOT_SUPPORT_OP_TYPE: %d:", e->n_unsupported);
    for (int i = 0; i < e->n_unsupported; i++)
        fprintf(f, " %s(%d)", e->unsupported[i].op, e->unsupported[i].count);
    fprintf(f, "%s\n", e->n_unsupported ? "" : " (none)");
    fprintf(f, "MACs:                %lld\n", (long long)e->macs);
    fprintf(f, "activation arena:    %lld, lower bound %lld (%.3fx), greedy-by-size %lld; %s\n",
            (long long)e->arena.arena, (long long)e->arena.lower_bound,
            e->arena.lower_bound ? (double)e->arena.arena / (double)e->arena.lower_bound : 1.0,
            (long long)e->arena.greedy_by_size, e->arena.strategy);
    fprintf(f, "inserted ops:        AscendQuant %d, AscendDequant %d, TransData %d, Cast %d\n",
            e->g.n_quant, e->g.n_dequant, e->g.n_transdata, e->g.n_cast);
    fprintf(f, "rewrites:            %d\n", e->g.n_rewrites);
    for (int i = 0; i < e->g.n_rewrites; i++)
        fprintf(f, "  %s\n", e->g.rewrites[i]);
    for (int i = 0; i < e->n_notes; i++)
        fprintf(f, "note:                %s\n", e->notes[i]);
    if (!per_layer)
        return;
    /* one row per task; columns as wide as their longest cell, names never cut */
    int n = e->g.n_k;
    char(*cells)[3][96] = calloc((size_t)n + 1, sizeof *cells);
    char **names = calloc((size_t)n + 1, sizeof(char *));
    int wname = 5, wop = 2, win = 5, wout = 6;
    for (int i = 0; i < n && cells && names; i++) {
        const nb_npu_task *k = &e->g.k[i];
        names[i] = escaped(k->name);
        shape_cell(k->n_in ? &e->g.t[k->in[0]] : NULL, cells[i][0], sizeof cells[i][0]);
        shape_cell(k->n_out ? &e->g.t[k->out[0]] : NULL, cells[i][1], sizeof cells[i][1]);
        int l = names[i] ? (int)strlen(names[i]) : 1;
        wname = l > wname ? l : wname;
        l = (int)strlen(k->op_type);
        wop = l > wop ? l : wop;
        l = (int)strlen(cells[i][0]);
        win = l > win ? l : win;
        l = (int)strlen(cells[i][1]);
        wout = l > wout ? l : wout;
    }
    fprintf(f, "\n%-*s  %-*s  %-15s  %-*s  %-*s  %-10s  %-21s  %12s  %s\n", wname, "layer", wop,
            "op", "unit", win, "input", wout, "output", "format", "output bytes", "MACs",
            "weight bytes / reason");
    for (int i = 0; i < n; i++) {
        const nb_npu_task *k = &e->g.k[i];
        const nb_npu_tensor *out = k->n_out ? &e->g.t[k->out[0]] : NULL;
        char hb[32], hw[32], ob[48];
        snprintf(ob, sizeof ob, "%lld (%s)", (long long)(out ? out->bytes : 0),
                 human(out ? out->bytes : 0, hb, sizeof hb));
        fprintf(f, "%-*s  %-*s  %-15s  %-*s  %-*s  %-10s  %-21s  %12lld  ", wname,
                names && names[i] ? names[i] : "?", wop,
                k->op_type, unit_name(k), win, cells ? cells[i][0] : "?", wout,
                cells ? cells[i][1] : "?", out ? nb_format_name(out->format) : "-", ob,
                (long long)k->macs);
        if (k->unit == NB_TASK_CPU)
            fprintf(f, "%s\n", k->reason);
        else
            fprintf(f, "%lld (%s)\n", (long long)k->weight_bytes,
                    human(k->weight_bytes, hw, sizeof hw));
    }
    free(cells);
    for (int i = 0; i < n && names; i++)
        free(names[i]);
    free(names);
}

/* A JSON string of s; a name that is not UTF-8 keeps its ASCII and shows '?' for the rest
 * (jansson refuses invalid UTF-8). */
static json_t *jstr(const char *s)
{
    json_t *j = json_string(s);
    if (j)
        return j;
    char *c = strdup(s);
    for (char *p = c; p && *p; p++)
        if ((unsigned char)*p >= 0x80)
            *p = '?';
    j = json_string(c ? c : "");
    free(c);
    return j;
}

static json_t *tensor_json(const nb_npu_tensor *t)
{
    json_t *o = json_object(), *sh = json_array();
    for (int d = 0; d < t->rank; d++)
        json_array_append_new(sh, json_integer(t->dims[d]));
    json_object_set_new(o, "name", jstr(t->name));
    json_object_set_new(o, "shape", sh);
    json_object_set_new(o, "dtype", json_string(nb_dtype_name(t->dtype)));
    json_object_set_new(o, "format", json_string(nb_format_name(t->format)));
    json_object_set_new(o, "bytes", json_integer(t->bytes));
    return o;
}

static json_t *counts_json(const nb_op_count *c, int n)
{
    json_t *o = json_object();
    for (int i = 0; i < n; i++)
        json_object_set_new(o, c[i].op, json_integer(c[i].count));
    return o;
}

int nb_estimate_json(const nb_estimate *e, FILE *f)
{
    json_t *o = json_object();
    if (e->model_path)
        json_object_set_new(o, "model", jstr(e->model_path));
    if (e->soc_version)
        json_object_set_new(o, "soc_version", json_string(e->soc_version));
    json_object_set_new(o, "TOTAL_WEIGHT_SIZE", json_integer(e->weight_bytes));
    json_object_set_new(o, "TOTAL_MEM_SIZE", json_integer(e->mem_bytes));
    json_object_set_new(o, "TOTAL_EXEOM_SIZE", json_integer(e->exeom_bytes));
    json_object_set_new(o, "TOTAL_NET_OP_TYPE", counts_json(e->net, e->n_net));
    json_object_set_new(o, "NOT_SUPPORT_OP_TYPE", counts_json(e->unsupported, e->n_unsupported));
    json_object_set_new(o, "macs", json_integer(e->macs));
    json_t *mem = json_object();
    json_object_set_new(mem, "weights", json_integer(e->weight_bytes));
    json_object_set_new(mem, "task_descriptors", json_integer(e->task_desc_bytes));
    json_object_set_new(mem, "inputs_outputs", json_integer(e->io_bytes));
    json_object_set_new(mem, "arena", json_integer(e->arena.arena));
    json_object_set_new(mem, "arena_lower_bound", json_integer(e->arena.lower_bound));
    json_object_set_new(mem, "arena_greedy_by_size", json_integer(e->arena.greedy_by_size));
    json_object_set_new(mem, "arena_strategy", json_string(e->arena.strategy));
    json_object_set_new(mem, "arena_peak_task", json_integer(e->arena_peak_task));
    json_object_set_new(o, "memory", mem);
    json_t *ins = json_object();
    json_object_set_new(ins, "AscendQuant", json_integer(e->g.n_quant));
    json_object_set_new(ins, "AscendDequant", json_integer(e->g.n_dequant));
    json_object_set_new(ins, "TransData", json_integer(e->g.n_transdata));
    json_object_set_new(ins, "Cast", json_integer(e->g.n_cast));
    json_object_set_new(o, "inserted_ops", ins);
    json_t *rw = json_array();
    for (int i = 0; i < e->g.n_rewrites; i++)
        json_array_append_new(rw, jstr(e->g.rewrites[i]));
    json_object_set_new(o, "rewrites", rw);
    json_t *notes = json_array();
    for (int i = 0; i < e->n_notes; i++)
        json_array_append_new(notes, jstr(e->notes[i]));
    json_object_set_new(o, "notes", notes);
    /* the summary as one indented object, then the layers one compact line each, written
       as they are made (a 100k-step unrolled LSTM has 300k tasks) */
    char *head = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(o);
    if (!head)
        return -1;
    size_t hl = strlen(head);
    while (hl && head[hl - 1] != '}')
        hl--;
    if (hl)
        hl--; /* drop the closing brace: the layers follow */
    int r = fwrite(head, 1, hl, f) == hl ? 0 : -1;
    free(head);
    fputs(",\n  \"layers\": [", f);
    for (int i = 0; i < e->g.n_k && r == 0; i++) {
        const nb_npu_task *k = &e->g.k[i];
        json_t *l = json_object(), *in = json_array(), *out = json_array();
        json_object_set_new(l, "name", jstr(k->name));
        json_object_set_new(l, "op_type", jstr(k->op_type));
        json_object_set_new(l, "onnx_op", jstr(k->onnx_op));
        json_object_set_new(l, "unit", json_string(unit_name(k)));
        json_object_set_new(l, "inserted", json_boolean(k->inserted));
        for (int j = 0; j < k->n_in; j++)
            json_array_append_new(in, tensor_json(&e->g.t[k->in[j]]));
        for (int j = 0; j < k->n_out; j++)
            json_array_append_new(out, tensor_json(&e->g.t[k->out[j]]));
        json_object_set_new(l, "inputs", in);
        json_object_set_new(l, "outputs", out);
        json_object_set_new(l, "weight_bytes", json_integer(k->weight_bytes));
        json_object_set_new(l, "macs", json_integer(k->macs));
        if (k->unit == NB_TASK_CPU)
            json_object_set_new(l, "reason", jstr(k->reason));
        fputs(i ? ",\n    " : "\n    ", f);
        r = json_dumpf(l, f, JSON_COMPACT | JSON_PRESERVE_ORDER);
        json_decref(l);
    }
    /* the arena plan: one compact line per slot, as the layers */
    fputs("\n  ],\n  \"arena_map\": [", f);
    for (int i = 0; i < e->n_arena_map && r == 0; i++) {
        const nb_arena_slot *a = &e->arena_map[i];
        json_t *l = json_object();
        json_object_set_new(l, "name", jstr(e->g.t[a->tensor].name));
        json_object_set_new(l, "offset", json_integer(a->offset));
        json_object_set_new(l, "bytes", json_integer(a->bytes));
        json_object_set_new(l, "first_task", json_integer(a->first));
        json_object_set_new(l, "last_task", json_integer(a->last));
        fputs(i ? ",\n    " : "\n    ", f);
        r = json_dumpf(l, f, JSON_COMPACT | JSON_PRESERVE_ORDER);
        json_decref(l);
    }
    fputs("\n  ]\n}\n", f);
    return r || ferror(f) ? -1 : 0;
}
