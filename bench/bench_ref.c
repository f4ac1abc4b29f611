/* bench_ref: median time per inference of the reference executor on a recipe case of
 * tests/oracle/recipes.tsv (same inputs as ort_bench.js gives ONNX Runtime).
 * usage: bench_ref RECIPES.tsv MODELS_DIR CASE [MIN_SECONDS]
 * Prints one line: "CASE median_ms N_RUNS". */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "nb/ref.h"
#include "recipe.h"

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: %s RECIPES.tsv MODELS_DIR CASE [MIN_SECONDS]\n", argv[0]);
        return 2;
    }
    double min_s = argc > 4 ? atof(argv[4]) : 2.0;
    static nb_recipe cases[64];
    int n = nb_recipes_load(argv[1], cases, 64);
    const nb_recipe *c = NULL;
    for (int i = 0; i < n; i++)
        if (!strcmp(cases[i].name, argv[3]))
            c = &cases[i];
    if (!c) {
        fprintf(stderr, "bench_ref: no case '%s' in %s\n", argv[3], argv[1]);
        return 2;
    }
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", argv[2], c->model);
    nb_status st = {0};
    nb_model *m;
    if (nb_ref_load(path, NULL, &m, &st)) {
        fprintf(stderr, "bench_ref: %s\n", st.msg);
        return 2;
    }
    nb_exec *ex;
    if (nb_exec_create(m, NULL, &ex, &st)) {
        fprintf(stderr, "bench_ref: %s\n", st.msg);
        return 2;
    }
    nb_tensor *tin[8];
    const char *names[8];
    for (int i = 0; i < c->n; i++) {
        tin[i] = nb_recipe_generate(&c->in[i]);
        names[i] = c->in[i].name;
    }
    int cap = 1 << 20, runs = 0;
    double *t = malloc(sizeof(double) * (size_t)cap);
    for (int w = 0; w < 5; w++)
        if (nb_exec_run(ex, c->n, names, tin, &st)) {
            fprintf(stderr, "bench_ref: %s\n", st.msg);
            return 1;
        }
    double start = now_ms();
    while ((now_ms() - start < min_s * 1e3 || runs < 20) && runs < cap) {
        double t0 = now_ms();
        nb_exec_run(ex, c->n, names, tin, &st);
        t[runs++] = now_ms() - t0;
    }
    qsort(t, (size_t)runs, sizeof t[0], cmp_d);
    printf("%s %.4f %d\n", c->name, t[runs / 2], runs);
    free(t);
    for (int i = 0; i < c->n; i++)
        nb_tensor_free(tin[i]);
    nb_exec_free(ex);
    nb_model_free(m);
    return 0;
}
