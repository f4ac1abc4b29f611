/* nanobench: reference kernels, quant operators. */
#include "ref_internal.h"

const nb_kernel_entry nb_kernels_quant[] = {
    {NULL, NULL, 0},
};
