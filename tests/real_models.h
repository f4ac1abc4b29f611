/* Test helper (header only, for the tests that link the estimate): loads a real model of
 * tests/oracle/estimate_expected.tsv from the models folder and estimates it with 8-bit
 * weights; any failure fails the test. */
#ifndef NB_TEST_REAL_MODELS_H
#define NB_TEST_REAL_MODELS_H

#include <stdio.h>
#include <string.h>

#include "nb/estimate.h"
#include "nb/ref.h"

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
