/* nanobench: shape inference, rnn operators (infer_ops.h conventions). */
#include "infer_ops.h"

const nb_infer_entry nb_infer_ops_rnn[] = {
    {NULL, NULL},
};
