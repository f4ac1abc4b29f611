/* nanobench infer: run the float32 reference on given inputs and write .npy outputs. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "cli.h"
#include "infer_out.h"
#include "nb/accucmp.h"

#define NB_MAX_CLI_INPUTS 1024

static void help(void)
{
    printf("usage: nanobench infer MODEL.onnx --input NAME=FILE ... --output-dir DIR\n"
           "                       [--dump-all] [--dump DIR] [--input_shape \"name:n,c,h,w;...\"]\n"
           "Runs the float32 reference executor (the golden model) and writes every graph\n"
           "output as DIR/<name>.npy; --dump-all also writes every intermediate tensor; --dump DIR\n"
           "writes one golden dump file per node (share/proto/dump.proto) for nanobench compare.\n"
           "DIR/manifest.tsv maps tensor names to files (names are made file-safe).\n"
           "FILE is a .npy (dtype and shape must match the input) or a raw .bin of the\n"
           "input's dtype and static shape, or random[:SEED] (uniform in [-1,1), for smoke\n"
           "runs). With one model input, NAME= may be left out.\n");
}

int cmd_infer(int argc, char **argv)
{
    const char *model = NULL, *shape = NULL, *outdir = NULL;
    const char *inputs[NB_MAX_CLI_INPUTS];
    int n_inputs = 0;
    bool dump_all = false;
    const char *golden_dir = NULL; /* --dump: golden dump files (share/proto/dump.proto) */
    for (int i = 1; i < argc; i++) {
        const char *v;
        int r;
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            help();
            return 0;
        }
        if ((r = cli_opt(argc, argv, &i, "--input_shape", &v))) {
            if (r < 0)
                return cli_usage_error("infer", "--input_shape needs a value");
            shape = v;
        } else if ((r = cli_opt(argc, argv, &i, "--input", &v))) {
            if (r < 0)
                return cli_usage_error("infer", "--input needs NAME=FILE");
            if (n_inputs == NB_MAX_CLI_INPUTS)
                return cli_usage_error("infer", "too many --input");
            inputs[n_inputs++] = v;
        } else if ((r = cli_opt(argc, argv, &i, "--output-dir", &v))) {
            if (r < 0)
                return cli_usage_error("infer", "--output-dir needs a folder");
            if (outdir)
                return cli_usage_error("infer", "--output-dir is given twice");
            if (strlen(v) > 3000)
                return cli_usage_error("infer", "--output-dir is longer than 3000 characters");
            outdir = v;
        } else if (!strcmp(argv[i], "--dump-all")) {
            dump_all = true;
        } else if ((r = cli_opt(argc, argv, &i, "--dump", &v))) {
            if (r < 0)
                return cli_usage_error("infer", "--dump needs a folder");
            golden_dir = v;
        } else if ((r = cli_model_arg("infer", argv[i], &model))) {
            return r;
        }
    }
    if (!model)
        return cli_usage_error("infer", "no model given");
    if (!outdir)
        return cli_usage_error("infer", "--output-dir is required");
    nb_status st = {0};
    nb_load_opts lo = {.input_shape = shape};
    nb_model *m = NULL;
    nb_exec *ex = NULL;
    nb_tensor *tins[NB_MAX_CLI_INPUTS] = {0};
    const char *names[NB_MAX_CLI_INPUTS];
    char *namebuf[NB_MAX_CLI_INPUTS] = {0};
    dump_ctx d = {0};
    if (golden_dir) /* a killed run's dump folder, first: this run may fail */
        nb_remove_stale_tmps(golden_dir);
    int rc = rec_start_model("infer", model, shape, argc, argv);
    if (rc)
        return rc;
    rec_param("output_dir", "%s", outdir);
    rec_param_json("dump_all", json_boolean(dump_all));
    for (int i = 0; i < n_inputs; i++) {
        char key[32];
        snprintf(key, sizeof key, "input_%d", i);
        rec_param(key, "%s", inputs[i]);
    }
    if (nb_ref_load(model, &lo, &m, &st)) {
        rc = cli_error(&st);
        goto out;
    }
    rec_model(m);
    const nb_graph *g = m->graph;
    /* .npy inputs first: their shapes fix dim symbols (silero_vad's 'batch') that a
       random or .bin input sharing the symbol then takes */
    int order[NB_MAX_CLI_INPUTS], n_order = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < n_inputs; i++) {
            const char *tail = strrchr(inputs[i], '=');
            tail = tail ? tail + 1 : inputs[i];
            size_t tl = strlen(tail);
            bool later = !strncmp(tail, "random", 6) || (tl > 4 && !strcmp(tail + tl - 4, ".bin"));
            if (later == (pass == 1))
                order[n_order++] = i;
        }
    for (int oi = 0; oi < n_inputs; oi++) {
        const int i = order[oi];
        const char *spec = inputs[i];
        /* NAME=FILE: NAME is the shortest prefix before an '=' that names an input, so
           that names and paths may both hold '=' */
        const char *eq = strchr(spec, '=');
        const char *file = spec;
        int id = -1;
        for (const char *q = eq; q && id < 0; q = strchr(q + 1, '=')) {
            free(namebuf[i]);
            namebuf[i] = strndup(spec, (size_t)(q - spec));
            id = namebuf[i] ? nb_graph_find(g, namebuf[i]) : -1;
            if (id >= 0 && g->values[id].is_input)
                file = q + 1;
            else
                id = -1;
        }
        if (id < 0 && g->n_inputs == 1 && (!eq || access(spec, F_OK) == 0))
            id = g->inputs[0];
        if (id < 0 && namebuf[i] && nb_graph_find(g, namebuf[i]) >= 0 &&
            g->values[nb_graph_find(g, namebuf[i])].const_val) {
            rc = cli_fail(2, "--input %s: '%s' is an initializer (a graph input with a stored "
                          "value); nanobench runs with the stored value", spec, namebuf[i]);
            goto out;
        }
        if (id < 0 || !g->values[id].is_input) {
            rc = cli_fail(2, "--input %s: %s is not an input of %s (use NAME=FILE)",
                    spec, namebuf[i] ? namebuf[i] : spec, model);
            goto out;
        }
        const nb_value *v = &g->values[id];
        for (int ok = 0; ok < oi; ok++)
            if (names[order[ok]] == v->name) {
                rc = cli_fail(2, "--input %s: input '%s' is given twice", spec,
                        v->name);
                goto out;
            }
        names[i] = v->name;
        size_t fl = strlen(file);
        if (fl == 0) {
            rc = cli_fail(2, "--input %s: no file given for input '%s' "
                    "(NAME=FILE)", spec, v->name);
            goto out;
        }
        bool bin = fl > 4 && !strcmp(file + fl - 4, ".bin");
        bool random = !strcmp(file, "random") || !strncmp(file, "random:", 7);
        int64_t vdims[NB_MAX_RANK];
        for (int k = 0; k < v->rank; k++) {
            vdims[k] = v->dims[k];
            /* a dynamic dim whose symbol an input read before has fixed */
            for (int ok = 0; ok < oi && vdims[k] < 0 && v->dim_params[k]; ok++) {
                const nb_value *w = &g->values[nb_graph_find(g, names[order[ok]])];
                for (int d = 0; d < w->rank && d < tins[order[ok]]->rank; d++)
                    if (w->dim_params[d] && !strcmp(w->dim_params[d], v->dim_params[k]))
                        vdims[k] = tins[order[ok]]->dims[d];
            }
        }
        if (bin || random) {
            bool known = v->rank >= 0;
            for (int k = 0; known && k < v->rank; k++)
                known = vdims[k] >= 0;
            if (!known) {
                rc = cli_fail(2, "%s: input '%s' has dynamic dims; give --input_shape "
                        "or a .npy file", file, v->name);
                goto out;
            }
        }
        if (random && !nb_dtype_is_float(v->dtype)) {
            rc = cli_fail(2, "--input %s: random inputs are for float inputs; input "
                    "'%s' is %s: give a .npy or .bin file", spec, v->name,
                    nb_dtype_name(v->dtype));
            goto out;
        }
        if (random) {
            uint32_t seed;
            if (cli_random_seed(spec, file, &seed)) {
                rc = 2;
                goto out;
            }
            if (nb_tensor_new(v->dtype, v->rank, vdims, &tins[i], &st)) {
                nb_prefix(&st, "--input %s", spec);
                rc = cli_error(&st);
                goto out;
            }
            nb_tensor_fill_uniform(tins[i], seed, -1.0, 1.0);
        } else if (bin) {
            if (nb_bin_read(file, v->dtype, v->rank, vdims, &tins[i], &st)) {
                rc = cli_error(&st);
                goto out;
            }
        } else {
            if (nb_npy_read(file, &tins[i], &st)) {
                rc = cli_error(&st);
                goto out;
            }
            char a[160], b[160];
            bool ok = v->rank < 0 || v->rank == tins[i]->rank;
            for (int k = 0; ok && v->rank >= 0 && k < v->rank; k++)
                ok = v->dims[k] < 0 || v->dims[k] == tins[i]->dims[k];
            if (v->dtype != NB_UNDEFINED && v->dtype != tins[i]->dtype) {
                rc = cli_fail(2, "%s: input '%s' must be %s, the file holds %s", file,
                        v->name, nb_dtype_name(v->dtype), nb_dtype_name(tins[i]->dtype));
                goto out;
            }
            if (!ok) {
                rc = cli_fail(2, "%s: input '%s' must have shape %s, the file has %s",
                        file, v->name, nb_shape_str(v->rank, v->dims, ',', a, sizeof a),
                        nb_shape_str(tins[i]->rank, tins[i]->dims, ',', b, sizeof b));
                goto out;
            }
        }
    }
    {
        char missing[1024] = "";
        size_t mo = 0;
        for (int k = 0; k < g->n_inputs; k++) {
            bool given = false;
            for (int i = 0; i < n_inputs; i++)
                given |= names[i] == g->values[g->inputs[k]].name;
            if (!given && mo < sizeof missing - 2)
                mo += (size_t)snprintf(missing + mo, sizeof missing - mo, "%s%s", mo ? ", " : "",
                                       g->values[g->inputs[k]].name);
        }
        if (mo) {
            rc = cli_fail(2, "%s: no --input for %s", model, missing);
            goto out;
        }
    }
    /* a symbolic dim shared by several inputs (silero_vad's 'batch' in input, h and c)
       must have one size across the data given */
    for (int i = 0; i < n_inputs; i++) {
        const nb_value *vi = &g->values[nb_graph_find(g, names[i])];
        for (int k = i + 1; k < n_inputs; k++) {
            const nb_value *vk = &g->values[nb_graph_find(g, names[k])];
            for (int a = 0; a < vi->rank && a < tins[i]->rank; a++)
                for (int b = 0; b < vk->rank && b < tins[k]->rank; b++)
                    if (vi->dim_params[a] && vk->dim_params[b] &&
                        !strcmp(vi->dim_params[a], vk->dim_params[b]) &&
                        tins[i]->dims[a] != tins[k]->dims[b]) {
                        rc = cli_fail(2, "%s: dim '%s' is %lld in input '%s' and %lld in input "
                                      "'%s'", model, vi->dim_params[a],
                                      (long long)tins[i]->dims[a], vi->name,
                                      (long long)tins[k]->dims[b], vk->name);
                        goto out;
                    }
        }
    }
    nb_exec_opts eo = {.keep_all = dump_all || golden_dir};
    if (nb_exec_create(m, &eo, &ex, &st)) {
        rc = cli_error(&st);
        goto out;
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (nb_exec_run(ex, n_inputs, names, tins, &st)) {
        rc = cli_error(&st);
        goto out;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    /* what to write: outputs, then (with --dump-all) inputs and every other value */
    for (int i = 0; i < g->n_outputs; i++) {
        const char *nm = g->values[g->outputs[i]].name;
        if (add_file(&d, nm, nb_exec_get(ex, nm), "output")) {
            rc = 1;
            goto out;
        }
    }
    if (dump_all) {
        for (int v = 0; v < g->n_values; v++) {
            const nb_tensor *t = nb_exec_get(ex, g->values[v].name);
            if (!t || g->values[v].is_initializer)
                continue;
            const char *kind = g->values[v].is_input ? "input"
                               : g->values[v].const_val ? "constant" : "intermediate";
            if (add_file(&d, g->values[v].name, t, kind)) {
                rc = 1;
                goto out;
            }
        }
        const char *sname;
        const nb_tensor *st_t;
        for (int i = 0; (st_t = nb_exec_subgraph_value(ex, i, &sname)); i++)
            if (add_file(&d, sname, st_t, "subgraph")) {
                rc = 1;
                goto out;
            }
    }
    if (nb_mkdir_p(outdir) != 0) {
        rc = cli_fail(2, "%s: cannot create output folder: %s", outdir,
                strerror(errno));
        goto out;
    }
    rc = write_outputs(outdir, &d, &st);
    if (rc != 0)
        goto out;
    if (golden_dir) { /* one golden dump per node, its float outputs, in graph order */
        cli_cleanup_add_tmp(golden_dir); /* Ctrl-C: the folder being written, not an earlier */
        int n_dumps = 0;
        nb_err de = nb_dump_golden_run(m, ex, golden_dir, &n_dumps, &st);
        cli_cleanup_clear();
        if (de) {
            rc = cli_error(&st);
            goto out;
        }
        printf("golden dump: %d node(s) written to %s\n", n_dumps, golden_dir);
        rec_param("golden_dump", "%s", golden_dir);
    }
    for (int i = 0; i < d.n; i++) {
        if (strcmp(d.files[i].kind, "output") != 0)
            continue;
        const nb_tensor *t = d.files[i].t;
        char sh[160];
        printf("output ");
        cli_put_escaped(stdout, d.files[i].name);
        printf("  %-7s %-16s -> %s", nb_dtype_name(t->dtype),
               nb_shape_str(t->rank, t->dims, ',', sh, sizeof sh), d.files[i].path);
        if (t->dtype == NB_FLOAT && t->numel > 0) {
            printf("  [");
            for (int64_t k = 0; k < t->numel && k < 4; k++)
                printf("%s%.6g", k ? ", " : "", (double)((const float *)t->data)[k]);
            printf("%s]", t->numel > 4 ? ", ..." : "");
        }
        printf("\n");
    }
    printf("reference run: %.3f ms; %d tensor%s written to %s\n", ms, d.n, d.n == 1 ? "" : "s",
           outdir);
    rec_metric("reference_ms", ms, "ms");
    rec_metric("tensors_written", d.n, "");
    for (int i = 0; i < n_inputs; i++) {
        const char *eq = strrchr(inputs[i], '=');
        const char *file = eq && namebuf[i] ? eq + 1 : inputs[i];
        if (strncmp(file, "random", 6) != 0)
            rec_artifact("input", file);
    }
    for (int i = 0; i < d.n; i++)
        rec_artifact(strcmp(d.files[i].kind, "output") ? "dump" : "output", d.files[i].path);
    {
        char mp[4096];
        snprintf(mp, sizeof mp, "%s/manifest.tsv", outdir);
        rec_artifact("manifest", mp);
    }
out:
    cli_cleanup_clear();
    for (int i = 0; i < d.n; i++) {
        free(d.files[i].name);
        free(d.files[i].path);
    }
    free(d.files);
    free(d.names.slot);
    for (int i = 0; i < n_inputs; i++) {
        nb_tensor_free(tins[i]);
        free(namebuf[i]);
    }
    nb_exec_free(ex);
    nb_model_free(m);
    return rc;
}
