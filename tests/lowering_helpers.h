/* Test helpers (header only, for the tests that link the reference and the estimate);
 * any failure fails the test. */
#ifndef NB_TEST_LOWERING_HELPERS_H
#define NB_TEST_LOWERING_HELPERS_H

#include <stdio.h>
#include <string.h>

#include <stdlib.h>

#include "model_builder.h"
#include "nb/estimate.h"
#include "nb/ref.h"

/* Loads and folds the model mm builds (freed). */
static inline nb_model *load_folded(mb_model *mm)
{
    size_t n;
    uint8_t *b = mb_pack(mm, &n);
    nb_status st = {0};
    nb_model *m = NULL;
    if (nb_model_load_mem(b, n, "t.onnx", "/tmp", NULL, &m, &st) || nb_ref_fold(m, &st))
        fail_msg("%s", st.msg);
    free(b);
    mb_free(mm);
    return m;
}

/* Loads a real model of tests/oracle/estimate_expected.tsv from the models folder dir and
 * estimates it with 8-bit weights. */
static inline void load_and_estimate(const char *dir, const char *model, const char *shape,
                                     const nb_op_table *ops, nb_model **m, nb_estimate *e)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", dir, model);
    nb_load_opts lo = {.input_shape = strcmp(shape, "-") ? shape : NULL};
    nb_status st = {0};
    *m = NULL;
    if (nb_ref_load(path, &lo, m, &st))
        fail_msg("%s", st.msg);
    nb_npu_opts o = {.weight_bits = 8};
    if (nb_estimate_model(*m, ops, &o, e, &st))
        fail_msg("%s", st.msg);
}

#endif
