/* libFuzzer harness of the dump reader (issue 20): nb_dump_parse on every input, with
 * inputs and outputs kept, as compare reads run --dump's and infer --dump's files. Seeds:
 * dump files of a run (fuzz/run_fuzzers.sh). */
#include <stdint.h>
#include <stdlib.h>

#include "nb/accucmp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    nb_status st = {0};
    nb_dump d;
    if (nb_dump_parse(data, size, "fuzz.dump", NB_DUMP_INPUTS | NB_DUMP_OUTPUTS, &d, &st) ==
        NB_OK)
        nb_dump_free(&d);
    return 0;
}
