/* nanobench info: inputs, outputs, opset, node count and operator histogram of a model. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"

static void print_value(const nb_value *v)
{
    char shape[256] = "[";
    size_t o = 1, cap = sizeof shape - 8;
    if (v->rank < 0) {
        snprintf(shape, sizeof shape, "(unknown rank)");
    } else {
        for (int d = 0; d < v->rank && o < cap - 1; d++) {
            int w = v->dims[d] >= 0
                        ? snprintf(shape + o, cap - o, "%s%lld", d ? "," : "",
                                   (long long)v->dims[d])
                        : snprintf(shape + o, cap - o, "%s%s", d ? "," : "",
                                   v->dim_params[d] ? v->dim_params[d] : "?");
            o = w < 0 || (size_t)w >= cap - o ? cap - 1 : o + (size_t)w;
        }
        snprintf(shape + o, sizeof shape - o, o >= cap - 1 ? "...]" : "]");
    }
    printf("  ");
    nb_put_escaped(stdout, v->name);
    int pad = 40 - (int)strlen(v->name);
    printf("%*s %-8s ", pad > 0 ? pad : 0, "", nb_dtype_name(v->dtype));
    nb_put_escaped(stdout, shape);
    printf("\n");
}

typedef struct opcount {
    const char *op;
    int top, sub;
} opcount;

static void count_ops(const nb_graph *g, opcount *c, int *n, int cap, bool top)
{
    for (int i = 0; i < g->n_nodes; i++) {
        const nb_node *nd = &g->nodes[i];
        int k;
        for (k = 0; k < *n; k++)
            if (!strcmp(c[k].op, nd->op_type))
                break;
        if (k == *n) {
            if (*n == cap)
                continue;
            c[k].op = nd->op_type;
            c[k].top = c[k].sub = 0;
            (*n)++;
        }
        if (top)
            c[k].top++;
        else
            c[k].sub++;
        for (int a = 0; a < nd->n_attr; a++)
            if (nd->attrs[a].g)
                count_ops(nd->attrs[a].g, c, n, cap, false);
    }
}

static int cmp_count(const void *a, const void *b)
{
    const opcount *x = a, *y = b;
    int dx = x->top + x->sub, dy = y->top + y->sub;
    return dx != dy ? dy - dx : strcmp(x->op, y->op);
}

/* --json: the text's content as one object (the histogram in the text's order). */
static int info_json(const char *path, const nb_model *m, char (*names)[64],
                     const opcount *counts, int nops, int all_nodes, int top_nodes)
{
    const nb_graph *g = m->graph;
    json_t *o = json_object(), *main_h = json_object(), *sub_h = json_object();
    json_t *unsup = json_array(), *warn = json_array();
    json_object_set_new(o, "model", nb_json_string(path));
    json_object_set_new(o, "producer", nb_json_string(m->producer));
    json_object_set_new(o, "ir_version", json_integer(m->ir_version));
    json_object_set_new(o, "opset", json_integer(m->opset));
    json_object_set_new(o, "file_bytes", json_integer((json_int_t)m->file_bytes));
    json_object_set_new(o, "inputs", cli_values_json(g, g->inputs, g->n_inputs));
    json_object_set_new(o, "outputs", cli_values_json(g, g->outputs, g->n_outputs));
    json_object_set_new(o, "nodes", json_integer(all_nodes));
    json_object_set_new(o, "main_graph_nodes", json_integer(top_nodes));
    json_object_set_new(o, "subgraph_nodes", json_integer(all_nodes - top_nodes));
    for (int i = 0; i < nops; i++) {
        if (counts[i].top)
            json_object_set_new(main_h, names[i], json_integer(counts[i].top));
        if (counts[i].sub)
            json_object_set_new(sub_h, names[i], json_integer(counts[i].sub));
        if (!nb_ref_supports(names[i]))
            json_array_append_new(unsup, nb_json_string(names[i]));
    }
    json_object_set_new(o, "op_histogram", main_h);
    json_object_set_new(o, "subgraph_op_histogram", sub_h);
    json_object_set_new(o, "unsupported_by_reference", unsup);
    for (int i = 0; i < m->n_warnings; i++)
        json_array_append_new(warn, nb_json_string(m->warnings[i]));
    json_object_set_new(o, "warnings", warn);
    return cli_json_out("info", o);
}

static void help(void)
{
    printf("usage: nanobench info MODEL.onnx [--input_shape \"name:n,c,h,w;name2:...\"] [--json]\n"
           "                     [--nodes]\n"
           "Prints the model's inputs and outputs (dtype, shape after inference), opset,\n"
           "node count and operator histogram: nodes of the main graph, and nodes inside If\n"
           "branches, counted apart. --json prints the same as one JSON object on stdout\n"
           "(model, producer, ir_version, opset, file_bytes, inputs, outputs, nodes,\n"
           "main_graph_nodes, subgraph_nodes, op_histogram, subgraph_op_histogram,\n"
           "unsupported_by_reference, warnings). --nodes lists every node of the main graph\n"
           "instead: name, op type, and its outputs as atc's --out_nodes names them\n"
           "(\"name:index\", with the tensor and its shape).\n");
}

int cmd_info(int argc, char **argv)
{
    const char *model = NULL, *shape = NULL;
    bool json = false, nodes = false;
    for (int i = 1; i < argc; i++) {
        const char *v;
        int r;
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            help();
            return 0;
        }
        if ((r = cli_opt(argc, argv, &i, "--input_shape", &v))) {
            if (r < 0)
                return cli_usage_error("info", "--input_shape needs a value");
            shape = v;
        } else if (!strcmp(argv[i], "--json")) {
            json = true;
        } else if (!strcmp(argv[i], "--nodes")) {
            nodes = true;
        } else if ((r = cli_model_arg("info", argv[i], &model))) {
            return r;
        }
    }
    if (!model)
        return cli_usage_error("info", "no model given");
    int rc = rec_start_model("info", model, shape, argc, argv);
    if (rc)
        return rc;
    nb_status st = {0};
    nb_load_opts lo = {.input_shape = shape, .weights_in_place = true};
    nb_model *m;
    if (nb_model_load(model, &lo, &m, &st))
        return cli_error(&st);
    rec_model(m);
    if (nodes) { /* the names --out_nodes takes */
        const nb_graph *g = m->graph;
        for (int i = 0; i < g->n_nodes; i++) {
            const nb_node *n = &g->nodes[i];
            char nm[300];
            snprintf(nm, sizeof nm, "%s", n->name);
            printf("%-40s %-20s", cli_plain(nm), n->op_type);
            for (int k = 0; k < n->n_out; k++) {
                if (n->out[k] < 0)
                    continue;
                const nb_value *v = &g->values[n->out[k]];
                char vn[300], sh[128];
                snprintf(vn, sizeof vn, "%s", v->name);
                if (v->rank >= 0)
                    nb_shape_str(v->rank, v->dims, ',', sh, sizeof sh);
                else
                    snprintf(sh, sizeof sh, "?");
                printf(" %s:%d=%s%s", cli_plain(nm), k, cli_plain(vn), sh);
            }
            printf("\n");
        }
        nb_model_free(m);
        return 0;
    }
    /* histogram of the model as written, before folding */
    opcount counts[256];
    int nops = 0;
    count_ops(m->graph, counts, &nops, 256, true);
    qsort(counts, (size_t)nops, sizeof counts[0], cmp_count);
    int top_nodes = m->graph->n_nodes, all_nodes = nb_graph_count_nodes(m->graph);
    /* copy the op names: folding may rewrite the graph */
    char (*names)[64] = calloc((size_t)nops + 1, 64);
    if (!names) {
        nb_model_free(m);
        return 1;
    }
    for (int i = 0; i < nops; i++)
        snprintf(names[i], 64, "%s", counts[i].op);
    if (nb_ref_fold(m, &st)) {
        free(names);
        nb_model_free(m);
        return cli_error(&st);
    }
    const nb_graph *g = m->graph;
    int unsupported = 0;
    for (int i = 0; i < nops; i++)
        unsupported += !nb_ref_supports(names[i]);
    rec_metric("model_bytes", (double)m->file_bytes, "B");
    rec_metric("nodes", all_nodes, "");
    rec_metric("op_types", nops, "");
    rec_metric("ops_not_in_reference", unsupported, "");
    if (json) {
        rc = info_json(model, m, names, counts, nops, all_nodes, top_nodes);
        free(names);
        nb_model_free(m);
        return rc;
    }
    printf("model:     %s\n", model);
    printf("producer:  %s\n", m->producer[0] ? m->producer : "(none)");
    printf("ir:        %lld\n", (long long)m->ir_version);
    printf("opset:     %d\n", m->opset);
    printf("size:      %llu bytes\n", (unsigned long long)m->file_bytes);
    printf("inputs:    %d\n", g->n_inputs);
    for (int i = 0; i < g->n_inputs; i++)
        print_value(&g->values[g->inputs[i]]);
    printf("outputs:   %d\n", g->n_outputs);
    for (int i = 0; i < g->n_outputs; i++)
        print_value(&g->values[g->outputs[i]]);
    printf("nodes:     %d (%d in the main graph, %d in subgraphs)\n", all_nodes, top_nodes,
           all_nodes - top_nodes);
    printf("operators: %d types\n", nops);
    printf("  %-24s %6s %9s  %s\n", "op_type", "main", "subgraph", "reference");
    for (int i = 0; i < nops; i++)
        printf("  %-24s %6d %9d  %s\n", names[i], counts[i].top, counts[i].sub,
               nb_ref_supports(names[i]) ? "yes" : "NOT IMPLEMENTED");
    for (int i = 0; i < m->n_warnings; i++)
        printf("warning:   %s\n", m->warnings[i]);
    free(names);
    nb_model_free(m);
    return 0;
}
