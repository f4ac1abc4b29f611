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
    nb_model_info in;
    if (nb_model_info_get(model, &lo, &in, &st))
        return cli_error(&st);
    const nb_model *m = in.m;
    const nb_graph *g = m->graph;
    rec_model(m);
    if (nodes) { /* the names --out_nodes takes */
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
        nb_model_info_free(&in);
        return 0;
    }
    rec_metric("model_bytes", (double)m->file_bytes, "B");
    rec_metric("nodes", in.nodes, "");
    rec_metric("op_types", in.n_ops, "");
    rec_metric("ops_not_in_reference", in.not_in_reference, "");
    if (json) {
        rc = cli_json_out("info", nb_model_info_json(model, &in));
        nb_model_info_free(&in);
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
    printf("nodes:     %d (%d in the main graph, %d in subgraphs)\n", in.nodes, in.main_nodes,
           in.nodes - in.main_nodes);
    printf("operators: %d types\n", in.n_ops);
    printf("  %-24s %6s %9s  %s\n", "op_type", "main", "subgraph", "reference");
    for (int i = 0; i < in.n_ops; i++)
        printf("  %-24s %6d %9d  %s\n", in.ops[i].op, in.ops[i].main, in.ops[i].sub,
               in.ops[i].in_reference ? "yes" : "NOT IMPLEMENTED");
    for (int i = 0; i < m->n_warnings; i++)
        printf("warning:   %s\n", m->warnings[i]);
    nb_model_info_free(&in);
    return 0;
}
