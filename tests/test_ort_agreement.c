/* The reference executor agrees with ONNX Runtime on openWakeWord's real models.
 *
 * Inputs come from tests/oracle/recipes.tsv (same generators as ort_expected.js); the
 * expected outputs in tests/oracle/expected/<case>/ were written by ONNX Runtime 1.30
 * (onnxruntime-node, one thread, graph optimisations off). Per output:
 *     max |ours - ort| <= 1e-4 * max |ort|
 * Models come from tests/data/fetch_models.sh (cache outside git): NANOBENCH_MODELS, or
 * ${NANOBENCH_CACHE:-$XDG_CACHE_HOME/nanobench}/models.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "nb/ref.h"
#include "recipe.h"


#ifndef NB_SOURCE_DIR
#define NB_SOURCE_DIR "."
#endif

static nb_recipe cases[64];
static int n_cases;
static char models_dir[1024];

static void check_case(void **state)
{
    const nb_recipe *c = *state;
    char path[2048];
    /* "@path": a fixture in the source tree (tests/data/fq, the fake-quant models) */
    if (c->model[0] == '@')
        snprintf(path, sizeof path, "%s/%s", NB_SOURCE_DIR, c->model + 1);
    else
        snprintf(path, sizeof path, "%s/%s", models_dir, c->model);
    nb_status st = {0};
    nb_model *m = NULL;
    if (nb_ref_load(path, NULL, &m, &st))
        fail_msg("%s (run tests/data/fetch_models.sh first)", st.msg);
    nb_exec *ex = NULL;
    nb_exec_opts eo = {.keep_all = true};
    if (nb_exec_create(m, &eo, &ex, &st))
        fail_msg("%s", st.msg);
    nb_tensor *tin[8];
    const char *names[8];
    for (int i = 0; i < c->n; i++) {
        tin[i] = nb_recipe_generate(&c->in[i]);
        assert_non_null(tin[i]);
        names[i] = c->in[i].name;
    }
    if (nb_exec_run(ex, c->n, names, tin, &st))
        fail_msg("%s: %s", c->name, st.msg);
    /* expected outputs */
    snprintf(path, sizeof path, "%s/tests/oracle/expected/%s/outputs.tsv", NB_SOURCE_DIR, c->name);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[1024];
    int checked = 0;
    while (fgets(line, sizeof line, f)) {
        char *tab = strchr(line, '\t');
        if (!tab || !strncmp(line, "output\tfile", 11))
            continue;
        *tab = 0;
        char *file = tab + 1;
        file[strcspn(file, "\n")] = 0;
        char epath[2048];
        snprintf(epath, sizeof epath, "%s/tests/oracle/expected/%s/%s", NB_SOURCE_DIR, c->name, file);
        nb_tensor *exp = NULL;
        if (nb_npy_read(epath, &exp, &st))
            fail_msg("%s", st.msg);
        const nb_tensor *got = nb_exec_get(ex, line);
        if (!got)
            fail_msg("%s: output '%s' not produced", c->name, line);
        assert_int_equal(got->dtype, exp->dtype);
        assert_int_equal(got->rank, exp->rank);
        for (int d = 0; d < got->rank; d++)
            assert_int_equal(got->dims[d], exp->dims[d]);
        double maxref = 0, maxdiff = 0;
        for (int64_t i = 0; i < exp->numel; i++) {
            double y = nb_tensor_get_f64(exp, i), x = nb_tensor_get_f64(got, i);
            maxref = fmax(maxref, fabs(y));
            maxdiff = fmax(maxdiff, isnan(x) ? INFINITY : fabs(x - y));
        }
        printf("  %-14s %-20.20s max|ort| %-12.6g max|ours-ort| %.3g (%.2g relative)\n", c->name,
               line, maxref, maxdiff, maxref > 0 ? maxdiff / maxref : maxdiff);
        if (!(maxdiff <= 1e-4 * maxref))
            fail_msg("%s output '%s': max|ours - ort| = %g > 1e-4 * %g", c->name, line, maxdiff,
                     maxref);
        nb_tensor_free(exp);
        checked++;
    }
    fclose(f);
    assert_true(checked > 0);
    /* hey_jarvis: the If must take the branch the case is named after. then_branch computes
       the verifier's probability 'p2'; else_branch copies p1 to 'p1'. */
    if (!strcmp(c->name, "jarvis_then")) {
        assert_non_null(nb_exec_get(ex, "p2"));
        assert_null(nb_exec_get(ex, "p1"));
    } else if (!strcmp(c->name, "jarvis_else")) {
        assert_non_null(nb_exec_get(ex, "p1"));
        assert_null(nb_exec_get(ex, "p2"));
    }
    for (int i = 0; i < c->n; i++)
        nb_tensor_free(tin[i]);
    nb_exec_free(ex);
    nb_model_free(m);
}

int main(void)
{
    nb_models_dir(models_dir, sizeof models_dir);
    char path[2048];
    snprintf(path, sizeof path, "%s/tests/oracle/recipes.tsv", NB_SOURCE_DIR);
    n_cases = nb_recipes_load(path, cases, 64);
    if (n_cases <= 0) {
        fprintf(stderr, "no recipes in %s\n", path);
        return 1;
    }
    struct CMUnitTest tests[64];
    for (int i = 0; i < n_cases; i++) {
        tests[i].name = cases[i].name;
        tests[i].test_func = check_case;
        tests[i].setup_func = NULL;
        tests[i].teardown_func = NULL;
        tests[i].initial_state = &cases[i];
    }
    printf("models: %s\n", models_dir);
    return _cmocka_run_group_tests("ort_agreement", tests, (size_t)n_cases, NULL, NULL);
}
