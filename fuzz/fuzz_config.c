/* libFuzzer harness of the calibration config parser (issue 20): AMCT's protobuf text
 * format through nb_quant_config_parse, and the layer lookup on what it parsed. Seeds: the
 * configs of the tests (fuzz/run_fuzzers.sh). */
#include <stdint.h>
#include <stdlib.h>

#include "nb/quant.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    nb_status st = {0};
    nb_quant_config c;
    nb_quant_config_init(&c);
    if (nb_quant_config_parse((const char *)data, size, "fuzz.cfg", &c, &st) == NB_OK)
        (void)nb_quant_config_for(&c, "conv1", "Conv"), (void)nb_quant_config_skips(&c, "conv1", "Conv");
    nb_quant_config_free(&c);
    return 0;
}
