/* Input recipes of tests/oracle/recipes.tsv, shared by the ORT agreement test and bench/:
 * the same generators as tests/oracle/ort_expected.js, so that C and ONNX Runtime see the
 * same inputs bit for bit. */
#ifndef NB_TEST_RECIPE_H
#define NB_TEST_RECIPE_H

#include "nb/tensor.h"

typedef struct nb_recipe_input {
    char name[128];
    char dtype[16];
    int rank;
    int64_t dims[NB_MAX_RANK];
    char gen[16];
    double args[6];
    int nargs;
} nb_recipe_input;

typedef struct nb_recipe {
    char name[64];
    char model[128];
    int n;
    nb_recipe_input in[8];
} nb_recipe;

/* Parses path into cases (at most max). Returns the count, or -1 if unreadable. */
int nb_recipes_load(const char *path, nb_recipe *cases, int max);
/* The tensor of one recipe input (NULL on a bad recipe). */
nb_tensor *nb_recipe_generate(const nb_recipe_input *ri);
/* The model folder: NANOBENCH_MODELS, or ${NANOBENCH_CACHE:-$XDG_CACHE_HOME/nanobench}/models. */
void nb_models_dir(char *buf, size_t len);

#endif
