/* libFuzzer harness of the exeom loader and simulator (issue 6): every input is loaded
 * with nb_sim_load (all of the loader's checks); one that loads and is small enough is
 * executed once on zero inputs, so that the kernels meet whatever the checks let through.
 * Build: cmake -DNB_FUZZ=ON with CC=clang (see fuzz/README.md); seeds: real compiled
 * models (fuzz/make_seeds.sh). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "nb/sim.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void run(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    run(data, size); /* as given: most mutations die at a CRC-32 */
    if (size < 64)
        return 0;
    /* and with each section's CRC-32 made right, so that mutations of the descriptors and
       weights reach the checks behind it */
    uint8_t *fixed = malloc(size);
    if (!fixed)
        return 0;
    memcpy(fixed, data, size);
    for (int s = 0; s < 3; s++) {
        uint32_t off = get32(fixed + 28 + 12 * s), len = get32(fixed + 32 + 12 * s);
        if ((uint64_t)off + len <= size) {
            uint32_t c = (uint32_t)crc32(crc32(0L, Z_NULL, 0), fixed + off, len);
            for (int i = 0; i < 4; i++)
                fixed[36 + 12 * s + i] = (uint8_t)(c >> (8 * i));
        }
    }
    run(fixed, size);
    free(fixed);
    return 0;
}

static void run(const uint8_t *data, size_t size)
{
    nb_sim_model *m = NULL;
    nb_status st = {0};
    if (nb_sim_load(data, size, NULL, &m, &st))
        return;
    const nb_exeom *x = nb_sim_exeom(m);
    /* bounded work per input: a fuzzer must not spend seconds in one huge model */
    uint64_t elems = 0;
    for (uint32_t i = 0; i < x->n_tensors; i++)
        elems += (uint64_t)nb_sim_numel(&x->t[i]);
    if (nb_sim_total_macs(m) < 20000000u && elems < 4000000u && x->n_inputs < 64 &&
        x->n_outputs < 64) {
        void *in[64], *out[64];
        int ok = 1;
        for (uint32_t i = 0; i < x->n_inputs; i++)
            ok &= (in[i] = calloc(1, x->t[nb_sim_input_tensor(m, (int)i)].bytes + 1)) != NULL;
        for (uint32_t i = 0; i < x->n_outputs; i++)
            ok &= (out[i] = calloc(1, x->t[nb_sim_output_tensor(m, (int)i)].bytes + 1)) != NULL;
        if (ok)
            nb_sim_execute(m, (const void *const *)in, out, NULL, NULL, &st);
        for (uint32_t i = 0; i < x->n_inputs; i++)
            free(in[i]);
        for (uint32_t i = 0; i < x->n_outputs; i++)
            free(out[i]);
    }
    nb_sim_free(m);
}
