/* libFuzzer harness of the ONNX importer (issue 20): every input goes through
 * nb_model_load_mem (the depth check, protobuf-c, the gate, the import, shape inference) and,
 * when it loads, nb_ref_fold (constant folding) and the estimate's lowering, as every command
 * loads a model. Seeds: the real models and the test set (fuzz/run_fuzzers.sh). */
#include <stdint.h>
#include <stdlib.h>

#include "nb/atc.h"
#include "nb/estimate.h"
#include "nb/ir.h"
#include "nb/ref.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static nb_op_table ops;
    static int have_ops = -1;
    nb_status st = {0};
    if (have_ops < 0)
        have_ops = nb_op_table_load(nb_op_table_default_path(), &ops, &st) == NB_OK;
    nb_model *m = NULL;
    if (nb_model_load_mem(data, size, "fuzz.onnx", "/nonexistent", NULL, &m, &st) == NB_OK &&
        nb_ref_fold(m, &st) == NB_OK && have_ops) {
        nb_estimate e;
        nb_npu_opts o = {.weight_bits = 8};
        if (nb_estimate_model(m, &ops, &o, &e, &st) == NB_OK)
            nb_estimate_free(&e);
    }
    nb_model_free(m);
    return 0;
}
