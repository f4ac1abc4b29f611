/* libFuzzer harness of the ONNX importer (issue 20): every input goes through
 * nb_model_load_mem (the depth check, protobuf-c, the gate, the import, shape inference) and,
 * when it loads, nb_ref_fold (constant folding) and the estimate's lowering, as every command
 * loads a model. Each input is also written to a file and loaded as estimate loads it
 * (nb_model_load with weights_deferred: large raw_data lifted out of the decode, weights left
 * in the mapped file), then folded and estimated. Seeds: the real models and the test set
 * (fuzz/run_fuzzers.sh). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

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
    static char path[64];
    if (!path[0]) {
        char dir[] = "/tmp/fuzz_onnx.XXXXXX";
        if (!mkdtemp(dir))
            abort();
        snprintf(path, sizeof path, "%s/m.onnx", dir);
    }
    for (int pass = 0; pass < 2; pass++) {
        nb_model *m = NULL;
        nb_err e;
        if (pass == 0) {
            e = nb_model_load_mem(data, size, "fuzz.onnx", "/nonexistent", NULL, &m, &st);
        } else {
            int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
            if (fd < 0 || write(fd, data, size) != (ssize_t)size)
                abort();
            close(fd);
            nb_load_opts lo = {.weights_deferred = true};
            e = nb_model_load(path, &lo, &m, &st);
        }
        if (e == NB_OK && nb_ref_fold(m, &st) == NB_OK && have_ops) {
            nb_estimate est;
            nb_npu_opts o = {.weight_bits = 8};
            if (nb_estimate_model(m, &ops, &o, &est, &st) == NB_OK)
                nb_estimate_free(&est);
        }
        nb_model_free(m);
    }
    return 0;
}
