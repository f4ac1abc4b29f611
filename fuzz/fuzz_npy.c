/* libFuzzer harness of the .npy reader (issue 20): nb_npy_parse on every input, and the
 * values of what it reads summed (every element read once), as calibrate, run and infer
 * read their inputs. */
#include <stdint.h>
#include <stdlib.h>

#include "nb/tensor.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    nb_status st = {0};
    nb_tensor *t = NULL;
    if (nb_npy_parse(data, size, "fuzz.npy", &t, &st) == NB_OK) {
        double sum = 0;
        for (int64_t i = 0; i < t->numel; i++)
            sum += nb_tensor_get_f64(t, i);
        if (sum == 0.125) /* reads the sum: the loop is not optimized away */
            t->dims[0] = t->dims[0];
        nb_tensor_free(t);
    }
    return 0;
}
