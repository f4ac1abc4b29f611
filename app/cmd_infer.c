/* nanobench infer: run the float32 reference on given inputs and write .npy outputs. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"
#include "nb/accucmp.h"

#define NB_MAX_CLI_INPUTS 1024

static void help(void)
{
    printf("usage: nanobench infer MODEL.onnx --input NAME=FILE ... --output-dir DIR\n"
           "                       [--dump-all] [--dump DIR] [--input_shape \"name:n,c,h,w;...\"] [--json]\n"
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
    bool dump_all = false, json = false;
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
        } else if (!strcmp(argv[i], "--json")) {
            json = true;
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
    nb_status st = {0};
    nb_infer_opts o = {.model = model, .input_shape = shape, .n_inputs = n_inputs,
                       .inputs = inputs, .output_dir = outdir, .dump_all = dump_all,
                       .golden_dir = golden_dir, .progress = cli_cleanup_tmp_progress,
                       .user = (void *)golden_dir};
    nb_infer_result r;
    if (nb_infer(&o, &r, &st)) {
        cli_cleanup_clear();
        return cli_error(&st);
    }
    rec_model(r.model);
    if (golden_dir)
        rec_param("golden_dump", "%s", golden_dir);
    if (golden_dir && !json)
        printf("golden dump: %d node(s) written to %s\n", r.golden_dumps, golden_dir);
    for (int i = 0; !json && i < r.n_outputs; i++) {
        const nb_tensor *t = r.files[i].t;
        char sh[160];
        printf("output ");
        nb_put_escaped(stdout, r.files[i].name);
        printf("  %-7s %-16s -> %s", nb_dtype_name(t->dtype),
               nb_shape_str(t->rank, t->dims, ',', sh, sizeof sh), r.files[i].path);
        if (t->dtype == NB_FLOAT && t->numel > 0) {
            printf("  [");
            for (int64_t k = 0; k < t->numel && k < 4; k++)
                printf("%s%.6g", k ? ", " : "", (double)((const float *)t->data)[k]);
            printf("%s]", t->numel > 4 ? ", ..." : "");
        }
        printf("\n");
    }
    if (!json)
        printf("reference run: %.3f ms; %d tensor%s written to %s\n", r.ms, r.n_files,
               r.n_files == 1 ? "" : "s", outdir);
    rec_metric("reference_ms", r.ms, "ms");
    rec_metric("tensors_written", r.n_files, "");
    for (int i = 0; i < n_inputs; i++)
        if (r.input_files[i])
            rec_artifact("input", r.input_files[i]);
    for (int i = 0; i < r.n_files; i++)
        rec_artifact(i < r.n_outputs ? "output" : "dump", r.files[i].path);
    char mp[4096];
    snprintf(mp, sizeof mp, "%s/manifest.tsv", outdir);
    rec_artifact("manifest", mp);
    json_t *jo = json ? nb_infer_result_json(&r, false) : NULL;
    nb_infer_result_free(&r);
    return jo ? cli_json_out("infer", jo) : 0;
}
