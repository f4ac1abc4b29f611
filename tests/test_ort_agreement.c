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

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

#ifndef NB_SOURCE_DIR
#define NB_SOURCE_DIR "."
#endif

typedef struct rinput {
    char name[128];
    char dtype[16];
    int rank;
    int64_t dims[NB_MAX_RANK];
    char gen[16];
    double args[6];
    int nargs;
} rinput;

typedef struct rcase {
    char name[64];
    char model[128];
    int n;
    rinput in[8];
} rcase;

static rcase cases[64];
static int n_cases;
static char models_dir[1024];

static uint32_t mulberry32(uint32_t *a)
{
    *a += 0x6D2B79F5u;
    uint32_t t = *a;
    t = (t ^ (t >> 15)) * (t | 1u);
    t ^= t + (t ^ (t >> 7)) * (t | 61u);
    return t ^ (t >> 14);
}

static nb_tensor *generate(const rinput *ri)
{
    nb_status st = {0};
    nb_tensor *t = NULL;
    bool i64 = !strcmp(ri->dtype, "int64");
    if (nb_tensor_new(i64 ? NB_INT64 : NB_FLOAT, ri->rank, ri->dims, &t, &st))
        fail_msg("%s", st.msg);
    uint32_t state = ri->nargs ? (uint32_t)ri->args[0] : 0;
    for (int64_t i = 0; i < t->numel; i++) {
        double v = 0;
        if (!strcmp(ri->gen, "const")) {
            v = ri->args[0];
        } else {
            double u = mulberry32(&state) / 4294967296.0;
            if (!strcmp(ri->gen, "uniform"))
                v = ri->args[1] + (ri->args[2] - ri->args[1]) * u;
            else if (!strcmp(ri->gen, "tone"))
                v = ri->args[2] * sin(2 * M_PI * ri->args[1] * (double)i / ri->args[3]) +
                    ri->args[4] * (2 * u - 1);
            else
                fail_msg("unknown generator %s", ri->gen);
        }
        if (i64)
            ((int64_t *)t->data)[i] = (int64_t)v;
        else
            ((float *)t->data)[i] = (float)v;
    }
    return t;
}

static void load_recipes(void)
{
    char path[2048];
    snprintf(path, sizeof path, "%s/tests/oracle/recipes.tsv", NB_SOURCE_DIR);
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", path);
        exit(1);
    }
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || line[0] == '\n')
            continue;
        char cname[64], model[128], input[128], dtype[16], shape[128], gen[16];
        double a[6] = {0};
        int got = sscanf(line, "%63s %127s %127s %15s %127s %15s %lf %lf %lf %lf %lf %lf", cname,
                         model, input, dtype, shape, gen, &a[0], &a[1], &a[2], &a[3], &a[4], &a[5]);
        if (got < 7)
            continue;
        rcase *c = NULL;
        for (int i = 0; i < n_cases; i++)
            if (!strcmp(cases[i].name, cname))
                c = &cases[i];
        if (!c) {
            c = &cases[n_cases++];
            snprintf(c->name, sizeof c->name, "%s", cname);
            snprintf(c->model, sizeof c->model, "%s", model);
        }
        rinput *ri = &c->in[c->n++];
        snprintf(ri->name, sizeof ri->name, "%s", input);
        snprintf(ri->dtype, sizeof ri->dtype, "%s", dtype);
        snprintf(ri->gen, sizeof ri->gen, "%s", gen);
        ri->nargs = got - 6;
        memcpy(ri->args, a, sizeof a);
        ri->rank = 0;
        if (strcmp(shape, "-") != 0)
            for (char *p = strtok(shape, ","); p; p = strtok(NULL, ","))
                ri->dims[ri->rank++] = atoll(p);
    }
    fclose(f);
}

static void check_case(void **state)
{
    const rcase *c = *state;
    char path[2048];
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
        tin[i] = generate(&c->in[i]);
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
    const char *md = getenv("NANOBENCH_MODELS");
    if (md && *md) {
        snprintf(models_dir, sizeof models_dir, "%s", md);
    } else {
        const char *cache = getenv("NANOBENCH_CACHE");
        const char *xdg = getenv("XDG_CACHE_HOME");
        const char *home = getenv("HOME");
        if (cache && *cache)
            snprintf(models_dir, sizeof models_dir, "%s/models", cache);
        else if (xdg && *xdg)
            snprintf(models_dir, sizeof models_dir, "%s/nanobench/models", xdg);
        else
            snprintf(models_dir, sizeof models_dir, "%s/.cache/nanobench/models", home ? home : ".");
    }
    load_recipes();
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
