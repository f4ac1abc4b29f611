/* libFuzzer harness of the --input_shape parser (issue 20): the vendor's syntax
 * "name:n,c,h,w;name2:..." through nb_parse_input_shape. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nb/ir.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = 0;
    nb_status st = {0};
    nb_shape_override *ov = NULL;
    int n = 0;
    if (nb_parse_input_shape(text, &ov, &n, &st) == NB_OK)
        nb_shape_overrides_free(ov, n);
    free(text);
    return 0;
}
