/* The ACL API (include/acl/acl.h, engine/runtime_sim): every call's documented errors, the
 * model description and results of the cascaded-MatMul sample's exeom, the size queries
 * against the file, and the fp16 conversions on hand-worked values.
 *
 * usage: test_acl MATMUL_SAMPLE.exeom (or $NB_ACL_MODEL): the exeom (with its .dbg next to
 * it) that share/samples/matmul/run_test.sh --model-only writes, the ctest fixture acl_model.
 * Its model is y = (x . W1) . W2, x [1,4], y [1,2]; the expected outputs are worked by hand
 * in share/samples/matmul/matmul_sample.c (scale_d 1 and 4, every scale_w 1).
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <dirent.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include <acl/acl.h>

#include "dump.pb-c.h"
#include "tmpdir.h"

static const char *model_path;
static uint8_t *model_bytes; /* the exeom's bytes, read once */
static size_t model_len;

/* The runtime each test starts with: initialized, device 0, one context and its stream. */
static aclrtContext ctx;
static aclrtStream stream;

/* ---- helpers ---- */

/* Reads a whole file (malloc'ed, *len its size); NULL when it cannot. */
static uint8_t *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) != 0) {
        fclose(f);
        return NULL;
    }
    long n = ftell(f);
    uint8_t *buf = n > 0 ? malloc((size_t)n) : NULL;
    if (!buf || fseek(f, 0, SEEK_SET) != 0 || fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        fclose(f);
        return NULL;
    }
    fclose(f);
    *len = (size_t)n;
    return buf;
}

/* Writes len bytes to tmpdir/name and returns the path (a static buffer per call slot). */
static const char *put_file(const char *name, const void *data, size_t len)
{
    static char paths[4][512];
    static int slot;
    char *p = paths[slot++ % 4];
    snprintf(p, 512, "%s/%s", tmpdir, name);
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
    return p;
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static int runtime_up(void **state)
{
    (void)state;
    ctx = NULL;
    stream = NULL;
    if (aclInit(NULL) != ACL_SUCCESS || aclrtSetDevice(0) != ACL_SUCCESS ||
        aclrtCreateContext(&ctx, 0) != ACL_SUCCESS || aclrtCreateStream(&stream) != ACL_SUCCESS) {
        fprintf(stderr, "runtime setup failed: %s\n", aclGetRecentErrMsg());
        return -1;
    }
    return 0;
}

/* Releases what runtime_up made; aclFinalize releases whatever a failed test left. Results
 * are ignored: a test may have finalized already. */
static int runtime_down(void **state)
{
    (void)state;
    if (stream)
        aclrtDestroyStream(stream);
    if (ctx)
        aclrtDestroyContext(ctx);
    aclrtResetDevice(0);
    aclFinalize();
    ctx = NULL;
    stream = NULL;
    return 0;
}

/* A dataset of one buffer over data (size bytes). */
static aclmdlDataset *dataset1(void *data, size_t size, aclDataBuffer **buf)
{
    aclmdlDataset *d = aclmdlCreateDataset();
    assert_non_null(d);
    *buf = aclCreateDataBuffer(data, size);
    assert_non_null(*buf);
    assert_int_equal(aclmdlAddDatasetBuffer(d, *buf), ACL_SUCCESS);
    return d;
}

static void dataset_free(aclmdlDataset *d)
{
    for (size_t i = 0; i < aclmdlGetDatasetNumBuffers(d); i++)
        assert_int_equal(aclDestroyDataBuffer(aclmdlGetDatasetBuffer(d, i)), ACL_SUCCESS);
    assert_int_equal(aclmdlDestroyDataset(d), ACL_SUCCESS);
}

/* Run 1 of the sample: x = [2, -1, 3, -2] -> y = [-31360, 15552] (fp16 0xF7A8, 0x7398);
 * worked in share/samples/matmul/matmul_sample.c. */
static const float run1_x[4] = {2, -1, 3, -2};
static const uint16_t run1_y[2] = {0xF7A8, 0x7398};
/* Run 2: x = [1, 2, 3, 4] -> y = [65504 (saturated), 48768] (0x7BFF, 0x79F4). */
static const float run2_x[4] = {1, 2, 3, 4};
static const uint16_t run2_y[2] = {0x7BFF, 0x79F4};

/* Executes model id on x into y (4 bytes), returning the call's code. */
static aclError run(uint32_t id, const float *x, uint16_t *y)
{
    uint16_t xh[4];
    for (int i = 0; i < 4; i++)
        xh[i] = aclFloatToFloat16(x[i]);
    aclDataBuffer *ib, *ob;
    aclmdlDataset *in = dataset1(xh, sizeof xh, &ib), *out = dataset1(y, 4, &ob);
    aclError e = aclmdlExecute(id, in, out);
    dataset_free(in);
    dataset_free(out);
    return e;
}

/* ---- before aclInit, init and finalize ---- */

static void test_before_init(void **state)
{
    (void)state;
    uint32_t id = 0;
    assert_int_equal(aclrtSetDevice(0), ACL_ERROR_UNINITIALIZE);
    assert_int_equal(aclmdlLoadFromFile(model_path, &id), ACL_ERROR_UNINITIALIZE);
    assert_int_equal(aclmdlLoadFromMem(model_bytes, model_len, &id), ACL_ERROR_UNINITIALIZE);
    assert_int_equal(aclmdlExecute(0, NULL, NULL), ACL_ERROR_UNINITIALIZE);
    assert_int_equal(aclFinalize(), ACL_ERROR_UNINITIALIZE);
    /* no context can exist before init */
    aclrtContext c = NULL;
    assert_int_not_equal(aclrtCreateContext(&c, 0), ACL_SUCCESS);
    assert_null(c);
}

static void test_init_twice_finalize_twice(void **state)
{
    (void)state;
    assert_int_equal(aclInit(NULL), ACL_SUCCESS);
    assert_string_equal(aclGetRecentErrMsg(), "");
    assert_int_equal(aclInit(NULL), ACL_ERROR_REPEAT_INITIALIZE);
    assert_string_not_equal(aclGetRecentErrMsg(), "");
    assert_int_equal(aclFinalize(), ACL_SUCCESS);
    aclError again = aclFinalize();
    if (again != ACL_ERROR_REPEAT_FINALIZE && again != ACL_ERROR_UNINITIALIZE)
        fail_msg("second aclFinalize returned %d", again);
    /* after finalize the runtime is down again */
    assert_int_equal(aclrtSetDevice(0), ACL_ERROR_UNINITIALIZE);
    /* and can be brought up again */
    assert_int_equal(aclInit(""), ACL_SUCCESS);
    assert_int_equal(aclFinalize(), ACL_SUCCESS);
}

static void test_init_config_files(void **state)
{
    (void)state;
    char missing[300];
    snprintf(missing, sizeof missing, "%s/no_such.json", tmpdir);
    assert_int_equal(aclInit(missing), ACL_ERROR_INVALID_FILE);
    const char *notjson = put_file("notjson.json", "dump: {yes}", 11);
    assert_int_equal(aclInit(notjson), ACL_ERROR_PARSE_FILE);
    const char *badmode =
        "{\"dump\": {\"dump_list\": [{\"model_name\": \"matmul_sample\"}], \"dump_path\": "
        "\"/tmp\", \"dump_mode\": \"sideways\"}}";
    assert_int_equal(aclInit(put_file("badmode.json", badmode, strlen(badmode))),
                     ACL_ERROR_INVALID_DUMP_CONFIG);
    /* a refused config leaves the runtime uninitialized */
    assert_int_equal(aclrtSetDevice(0), ACL_ERROR_UNINITIALIZE);
    const char *empty = put_file("empty.json", "{}", 2);
    assert_int_equal(aclInit(empty), ACL_SUCCESS);
    assert_int_equal(aclFinalize(), ACL_SUCCESS);
}

/* The dump files under dir (recursively): their paths, at most max, sorted by name; returns
 * how many there are. */
static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int list_files(const char *dir, char **out, int max)
{
    int n = 0;
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char p[1024];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        struct stat sb;
        if (stat(p, &sb) != 0)
            continue;
        if (S_ISDIR(sb.st_mode)) {
            n += list_files(p, out + n, max - n);
        } else if (n < max) {
            out[n] = malloc(strlen(p) + 1);
            strcpy(out[n++], p);
        }
    }
    closedir(d);
    qsort(out, (size_t)n, sizeof *out, cmp_str);
    return n;
}

/* Whether the file name (the last part of path) is {op_type}.{op_name}.{task}.0.{16 digits}
 * with op_type.op_name.task = prefix. */
static int dump_name_is(const char *path, const char *prefix)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t k = strlen(prefix);
    if (strncmp(base, prefix, k) || strncmp(base + k, ".0.", 3))
        return 0;
    const char *ts = base + k + 3;
    for (int i = 0; i < 16; i++)
        if (ts[i] < '0' || ts[i] > '9')
            return 0;
    return ts[16] == 0;
}

/* Reads dump file path and checks its task and its one output tensor (dump_mode output). */
static Nanobench__Dump__Dump *read_dump(const char *path, const char *op_type, uint32_t task,
                                        const char *dtype, const char *format, size_t rank,
                                        const int64_t *shape)
{
    size_t len = 0;
    uint8_t *b = slurp(path, &len);
    assert_non_null(b);
    Nanobench__Dump__Dump *d = nanobench__dump__dump__unpack(NULL, len, b);
    free(b);
    assert_non_null(d);
    assert_string_equal(d->op_type, op_type);
    assert_int_equal(d->task_id, task);
    assert_string_equal(d->model_name, "matmul_sample");
    assert_string_equal(d->source, "npu");
    assert_int_equal(d->n_input, 0);
    assert_int_equal(d->n_output, 1);
    const Nanobench__Dump__Tensor *t = d->output[0];
    assert_string_equal(t->dtype, dtype);
    assert_string_equal(t->format, format);
    assert_int_equal(t->n_shape, rank);
    for (size_t i = 0; i < rank; i++)
        assert_int_equal(t->shape[i], shape[i]);
    assert_non_null(t->stats);
    return d;
}

/* aclInit's dump config selecting matmul_2: one execution (run 1) writes its three tasks
 * (3 AscendQuant, 4 MatMul, 5 AscendDequant; share/proto/dump.proto's names and folders) and
 * nothing of matmul_1, each with its output as worked in share/samples/matmul/
 * matmul_sample.c: q2 = [32, -33, 111, -64] (int8, FRACTAL_NZ: element (0, k) at byte k),
 * the accumulator [-7841, 3889] (int32 FRACTAL_NZ, C0 16: (0, n) at int n), y = [-31360,
 * 15552] (fp16 ND 0xF7A8, 0x7398). */
static void test_dump_config(void **state)
{
    (void)state;
    char dump_dir[300], cfg[800];
    snprintf(dump_dir, sizeof dump_dir, "%s/dump", tmpdir);
    assert_int_equal(mkdir(dump_dir, 0755), 0);
    int n = snprintf(cfg, sizeof cfg,
                     "{\"dump\": {\"dump_list\": [{\"model_name\": \"matmul_sample\", \"layer\": "
                     "[\"matmul_2\"]}], \"dump_path\": \"%s\", \"dump_mode\": \"output\", "
                     "\"dump_op_switch\": \"off\", \"dump_data\": \"tensor\"}}",
                     dump_dir);
    assert_int_equal(aclInit(put_file("dump.json", cfg, (size_t)n)), ACL_SUCCESS);
    assert_int_equal(aclrtSetDevice(0), ACL_SUCCESS);
    assert_int_equal(aclrtCreateContext(&ctx, 0), ACL_SUCCESS);
    uint32_t id;
    assert_int_equal(aclmdlLoadFromFile(model_path, &id), ACL_SUCCESS);
    uint16_t y[2];
    assert_int_equal(run(id, run1_x, y), ACL_SUCCESS);
    assert_memory_equal(y, run1_y, sizeof y); /* a dump does not change the results */
    assert_int_equal(aclmdlUnload(id), ACL_SUCCESS);

    char *files[8];
    int nf = list_files(dump_dir, files, 8);
    assert_int_equal(nf, 3);
    /* sorted: AscendDequant, AscendQuant, MatMul; all in .../0/matmul_sample/ID/0/ */
    char want_dir[64];
    snprintf(want_dir, sizeof want_dir, "/0/matmul_sample/%u/0/", id);
    for (int i = 0; i < nf; i++)
        assert_non_null(strstr(files[i], want_dir));
    assert_true(dump_name_is(files[0], "AscendDequant.matmul_2_AscendDequant.5"));
    assert_true(dump_name_is(files[1], "AscendQuant.matmul_2_AscendQuant.3"));
    assert_true(dump_name_is(files[2], "MatMul.matmul_2.4"));

    const int64_t s14[] = {1, 4}, s12[] = {1, 2};
    Nanobench__Dump__Dump *q = read_dump(files[1], "AscendQuant", 3, "INT8", "FRACTAL_NZ", 2, s14);
    const Nanobench__Dump__Tensor *t = q->output[0];
    assert_true(t->data.len >= 4);
    const int8_t q2[4] = {32, -33, 111, -64};
    assert_memory_equal(t->data.data, q2, 4);
    assert_int_equal(t->stats->count, 4);
    assert_true(t->stats->min == -64 && t->stats->max == 111);
    nanobench__dump__dump__free_unpacked(q, NULL);

    Nanobench__Dump__Dump *a = read_dump(files[2], "MatMul", 4, "INT32", "FRACTAL_NZ", 2, s12);
    t = a->output[0];
    assert_true(t->data.len >= 8);
    const uint8_t acc[8] = {0x5F, 0xE1, 0xFF, 0xFF, 0x31, 0x0F, 0, 0}; /* -7841, 3889 LE */
    assert_memory_equal(t->data.data, acc, 8);
    assert_int_equal(t->stats->count, 2);
    assert_true(t->stats->min == -7841 && t->stats->max == 3889);
    nanobench__dump__dump__free_unpacked(a, NULL);

    Nanobench__Dump__Dump *o = read_dump(files[0], "AscendDequant", 5, "FLOAT16", "ND", 2, s12);
    t = o->output[0];
    assert_int_equal(t->data.len, 4);
    const uint8_t yb[4] = {0xA8, 0xF7, 0x98, 0x73};
    assert_memory_equal(t->data.data, yb, 4);
    assert_string_equal(t->original_name, "y");
    assert_true(t->stats->min == -31360 && t->stats->max == 15552);
    nanobench__dump__dump__free_unpacked(o, NULL);
    for (int i = 0; i < nf; i++)
        free(files[i]);
}

/* aclmdlInitDump / aclmdlSetDump / aclmdlFinalizeDump: the config's errors, and a dump set
 * applies to the models loaded after it only. */
static void test_set_dump(void **state)
{
    (void)state;
    char dump_dir[300], cfg[800], missing[300];
    snprintf(dump_dir, sizeof dump_dir, "%s/dump2", tmpdir);
    snprintf(missing, sizeof missing, "%s/no_such.json", tmpdir);
    int n = snprintf(cfg, sizeof cfg,
                     "{\"dump\": {\"dump_list\": [{\"model_name\": \"matmul_sample\"}], "
                     "\"dump_path\": \"%s\", \"dump_mode\": \"output\"}}",
                     dump_dir);
    const char *good = put_file("dump2.json", cfg, (size_t)n);
    /* the vendor's order: aclmdlInitDump first */
    assert_int_equal(aclmdlSetDump(good), ACL_ERROR_DUMP_NOT_RUN);
    assert_int_equal(aclmdlInitDump(), ACL_SUCCESS);
    assert_int_equal(aclmdlSetDump(missing), ACL_ERROR_INVALID_FILE);
    assert_int_equal(aclmdlSetDump(put_file("nj.json", "{\"dump\": ", 9)), ACL_ERROR_PARSE_FILE);
    const char *nopath = "{\"dump\": {\"dump_list\": [{\"model_name\": \"m\"}]}}";
    assert_int_equal(aclmdlSetDump(put_file("np.json", nopath, strlen(nopath))),
                     ACL_ERROR_INVALID_DUMP_CONFIG);
    uint32_t before, after;
    assert_int_equal(aclmdlLoadFromFile(model_path, &before), ACL_SUCCESS);
    assert_int_equal(aclmdlSetDump(good), ACL_SUCCESS);
    assert_int_equal(aclmdlLoadFromFile(model_path, &after), ACL_SUCCESS);
    uint16_t y[2];
    assert_int_equal(run(before, run2_x, y), ACL_SUCCESS);
    assert_memory_equal(y, run2_y, sizeof y);
    char *files[16];
    assert_int_equal(list_files(dump_dir, files, 16), 0); /* loaded before the dump was set */
    assert_int_equal(run(after, run2_x, y), ACL_SUCCESS);
    assert_memory_equal(y, run2_y, sizeof y);
    int nf = list_files(dump_dir, files, 16);
    assert_int_equal(nf, 6); /* no layer list: every task of the model */
    char want_dir[64];
    snprintf(want_dir, sizeof want_dir, "/0/matmul_sample/%u/0/", after);
    for (int i = 0; i < nf; i++) {
        assert_non_null(strstr(files[i], want_dir));
        free(files[i]);
    }
    assert_int_equal(aclmdlFinalizeDump(), ACL_SUCCESS);
    assert_int_equal(aclmdlUnload(before), ACL_SUCCESS);
    assert_int_equal(aclmdlUnload(after), ACL_SUCCESS);
}

/* ---- devices, contexts, streams, memory ---- */

static void test_device_context_stream(void **state)
{
    (void)state;
    assert_int_equal(aclInit(NULL), ACL_SUCCESS);
    aclrtContext c = NULL;
    aclrtStream s = NULL;
    assert_int_equal(aclrtSetDevice(1), ACL_ERROR_INVALID_DEVICE);
    assert_int_equal(aclrtSetDevice(-1), ACL_ERROR_INVALID_DEVICE);
    /* no device set yet */
    assert_int_equal(aclrtCreateContext(&c, 0), ACL_ERROR_INVALID_DEVICE);
    /* no context yet */
    assert_int_equal(aclrtCreateStream(&s), ACL_ERROR_INVALID_RESOURCE_HANDLE);
    assert_int_equal(aclrtSetDevice(0), ACL_SUCCESS);
    assert_int_equal(aclrtCreateContext(NULL, 0), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclrtCreateContext(&c, 1), ACL_ERROR_INVALID_DEVICE);
    assert_int_equal(aclrtCreateContext(&c, 0), ACL_SUCCESS);
    assert_non_null(c);
    aclrtContext cur = NULL;
    assert_int_equal(aclrtGetCurrentContext(NULL), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclrtGetCurrentContext(&cur), ACL_SUCCESS);
    assert_ptr_equal(cur, c); /* a new context becomes the current one */
    assert_int_equal(aclrtCreateStream(NULL), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclrtCreateStream(&s), ACL_SUCCESS);
    assert_non_null(s);
    assert_int_equal(aclrtSynchronizeStream(s), ACL_SUCCESS);
    /* a second context becomes current; setting the first back works */
    aclrtContext c2 = NULL;
    assert_int_equal(aclrtCreateContext(&c2, 0), ACL_SUCCESS);
    assert_ptr_not_equal(c2, c);
    assert_int_equal(aclrtGetCurrentContext(&cur), ACL_SUCCESS);
    assert_ptr_equal(cur, c2);
    assert_int_equal(aclrtSetCurrentContext(c), ACL_SUCCESS);
    assert_int_equal(aclrtGetCurrentContext(&cur), ACL_SUCCESS);
    assert_ptr_equal(cur, c);
    assert_int_equal(aclrtDestroyStream(s), ACL_SUCCESS);
    assert_int_equal(aclrtDestroyContext(c2), ACL_SUCCESS);
    assert_int_equal(aclrtDestroyContext(c), ACL_SUCCESS);
    assert_int_equal(aclrtResetDevice(1), ACL_ERROR_INVALID_DEVICE);
    assert_int_equal(aclrtResetDevice(0), ACL_SUCCESS);
    assert_int_equal(aclFinalize(), ACL_SUCCESS);
}

static void test_malloc_memcpy(void **state)
{
    (void)state;
    void *p = NULL, *q = NULL;
    assert_int_equal(aclrtMalloc(NULL, 8, ACL_MEM_MALLOC_NORMAL_ONLY), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclrtMalloc(&p, 0, ACL_MEM_MALLOC_NORMAL_ONLY), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclrtMalloc(&p, 100, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    assert_non_null(p);
    assert_int_equal((uintptr_t)p % 32, 0); /* 32-byte aligned */
    assert_int_equal(aclrtMalloc(&q, 3, ACL_MEM_MALLOC_NORMAL_ONLY), ACL_SUCCESS);
    assert_int_equal((uintptr_t)q % 32, 0);
    memset(p, 0xAB, 100);
    memset(q, 0, 3);
    assert_int_equal(aclrtMemcpy(q, 3, p, 3, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
    assert_memory_equal(q, "\xAB\xAB\xAB", 3);
    /* more than the destination holds, NULL (the header lists no errors for aclrtMemcpy; the
       vendor's is ACL_ERROR_INVALID_PARAM) */
    assert_int_equal(aclrtMemcpy(q, 3, p, 4, ACL_MEMCPY_DEVICE_TO_HOST), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclrtMemcpy(NULL, 3, p, 3, ACL_MEMCPY_DEVICE_TO_HOST), ACL_ERROR_INVALID_PARAM);
    assert_memory_equal(q, "\xAB\xAB\xAB", 3);
    assert_int_equal(aclrtFree(p), ACL_SUCCESS);
    assert_int_equal(aclrtFree(q), ACL_SUCCESS);
}

/* ---- datasets and buffers ---- */

static void test_datasets(void **state)
{
    (void)state;
    uint8_t mem[16];
    aclmdlDataset *d = aclmdlCreateDataset();
    assert_non_null(d);
    assert_int_equal(aclmdlGetDatasetNumBuffers(d), 0);
    aclDataBuffer *b = aclCreateDataBuffer(mem, sizeof mem);
    assert_non_null(b);
    assert_ptr_equal(aclGetDataBufferAddr(b), mem);
    assert_int_equal(aclGetDataBufferSizeV2(b), 16);
    assert_int_equal(aclmdlAddDatasetBuffer(NULL, b), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclmdlAddDatasetBuffer(d, NULL), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclmdlAddDatasetBuffer(d, b), ACL_SUCCESS);
    assert_int_equal(aclmdlGetDatasetNumBuffers(d), 1);
    assert_ptr_equal(aclmdlGetDatasetBuffer(d, 0), b);
    assert_null(aclmdlGetDatasetBuffer(d, 1));
    assert_null(aclmdlGetDatasetBuffer(NULL, 0));
    assert_int_equal(aclmdlGetDatasetNumBuffers(NULL), 0);
    assert_int_equal(aclUpdateDataBuffer(b, mem + 8, 8), ACL_SUCCESS);
    assert_ptr_equal(aclGetDataBufferAddr(b), mem + 8);
    assert_int_equal(aclGetDataBufferSizeV2(b), 8);
    assert_int_equal(aclUpdateDataBuffer(NULL, mem, 8), ACL_ERROR_INVALID_PARAM);
    assert_null(aclGetDataBufferAddr(NULL));
    assert_int_equal(aclGetDataBufferSizeV2(NULL), 0);
    assert_int_equal(aclDestroyDataBuffer(NULL), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclmdlDestroyDataset(NULL), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclmdlDestroyDesc(NULL), ACL_ERROR_INVALID_PARAM);
    /* the dataset is freed without its buffers; the buffer without its memory */
    assert_int_equal(aclmdlDestroyDataset(d), ACL_SUCCESS);
    assert_ptr_equal(aclGetDataBufferAddr(b), mem + 8);
    assert_int_equal(aclDestroyDataBuffer(b), ACL_SUCCESS);
}

/* ---- size queries ---- */

/* The sample's exeom, by hand (share/doc/exeom.md): 13 tensors (x; per layer the int8 input,
 * W, bias, deq_scale, the int32 accumulator and the fp16 output, y being matmul_2's) and 6
 * tasks (AscendQuant, MatMul, AscendDequant per layer). Weights: per layer W in FRACTAL_NZ
 * (ceil(4/32) x ceil(N/16) x 16 x 32 = 512 bytes, N <= 16), bias 16 x int32 = 64, deq_scale
 * 16 x uint64 = 128: 2 x 704 = 1408. modelDesc = 64 + 48 x 13 = 688; kernelArgs = 32 x 6
 * = 192; staticTask = (64 - 32) x 6 = 192; file = 688 + 192 + 192 + 1408 = 2480. */
static void test_query_sizes(void **state)
{
    (void)state;
    assert_int_equal(model_len, 2480);
    assert_int_equal(le32(model_bytes + 8), 13); /* tensors */
    assert_int_equal(le32(model_bytes + 12), 6); /* tasks */
    size_t work = 0, weight = 0;
    assert_int_equal(aclmdlQuerySize(model_path, &work, &weight), ACL_SUCCESS);
    assert_int_equal(weight, 1408);
    assert_int_equal(weight, le32(model_bytes + 56)); /* the weight section's size */
    assert_int_equal(work, le32(model_bytes + 24));   /* the activation arena's */
    aclmdlExeOMDesc d;
    memset(&d, 0xFF, sizeof d);
    assert_int_equal(aclmdlQueryExeOMDesc(model_path, &d), ACL_SUCCESS);
    assert_int_equal(d.weightSize, 1408);
    assert_int_equal(d.modelDescSize, 688);
    assert_int_equal(d.kernelSize, 0);
    assert_int_equal(d.kernelArgsSize, 192);
    assert_int_equal(d.staticTaskSize, 192);
    assert_int_equal(d.dynamicTaskSize, 0);
    assert_int_equal(d.fifoTaskSize, 0);
    assert_int_equal(d.weightSize + d.modelDescSize + d.kernelArgsSize + d.staticTaskSize,
                     model_len);

    char missing[300];
    snprintf(missing, sizeof missing, "%s/no_such.exeom", tmpdir);
    assert_int_equal(aclmdlQuerySize(missing, &work, &weight),
                     ACL_ERROR_GE_EXEC_MODEL_PATH_INVALID);
    assert_int_equal(aclmdlQueryExeOMDesc(missing, &d), ACL_ERROR_GE_EXEC_MODEL_PATH_INVALID);
    const char *text = put_file("text.exeom", "this is no model at all, only some text", 40);
    assert_int_equal(aclmdlQuerySize(text, &work, &weight), ACL_ERROR_INVALID_FILE);
    assert_int_equal(aclmdlQueryExeOMDesc(text, &d), ACL_ERROR_INVALID_FILE);
    assert_int_equal(aclmdlQuerySize(NULL, &work, &weight), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclmdlQuerySize(model_path, NULL, &weight), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclmdlQueryExeOMDesc(model_path, NULL), ACL_ERROR_INVALID_PARAM);
}

/* ---- loading ---- */

static void test_load_errors(void **state)
{
    (void)state;
    uint32_t id = 0;
    assert_int_equal(aclmdlLoadFromFile(NULL, &id), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclmdlLoadFromFile(model_path, NULL), ACL_ERROR_INVALID_PARAM);
    char missing[300];
    snprintf(missing, sizeof missing, "%s/no_such.exeom", tmpdir);
    assert_int_equal(aclmdlLoadFromFile(missing, &id), ACL_ERROR_GE_EXEC_MODEL_PATH_INVALID);
    assert_string_not_equal(aclGetRecentErrMsg(), "");
    /* a folder: cannot be opened as a file, or read as one */
    aclError e = aclmdlLoadFromFile(tmpdir, &id);
    if (e != ACL_ERROR_GE_EXEC_MODEL_PATH_INVALID && e != ACL_ERROR_INVALID_FILE)
        fail_msg("a folder as the model: %d", e);
    /* not an exeom: text, empty, the magic changed, cut short */
    const char *text = put_file("text.exeom", "this is no model at all, only some text", 40);
    assert_int_equal(aclmdlLoadFromFile(text, &id), ACL_ERROR_INVALID_FILE);
    const char *empty = put_file("empty.exeom", "", 0);
    assert_int_equal(aclmdlLoadFromFile(empty, &id), ACL_ERROR_INVALID_FILE);
    uint8_t *b = malloc(model_len);
    assert_non_null(b);
    memcpy(b, model_bytes, model_len);
    b[0] = 'X';
    assert_int_equal(aclmdlLoadFromFile(put_file("magic.exeom", b, model_len), &id),
                     ACL_ERROR_INVALID_FILE);
    /* the header whole, the sections cut: the size check */
    e = aclmdlLoadFromFile(put_file("cut.exeom", model_bytes, model_len - 100), &id);
    if (e != ACL_ERROR_INVALID_FILE && e != ACL_ERROR_PARSE_MODEL)
        fail_msg("a truncated exeom: %d", e);
    /* one byte of the weight section flipped: its CRC */
    memcpy(b, model_bytes, model_len);
    b[model_len - 1000] ^= 0x40;
    assert_int_equal(aclmdlLoadFromFile(put_file("flip.exeom", b, model_len), &id),
                     ACL_ERROR_PARSE_MODEL);
    /* a task's kernel id out of the table, with the task section's CRC made right again:
       the descriptor check */
    memcpy(b, model_bytes, model_len);
    uint32_t task_off = le32(b + 40), task_size = le32(b + 44);
    b[task_off] = 0xEE; /* task 0's kernel id, low byte: 238 */
    b[task_off + 1] = 0;
    uint32_t crc = 0xFFFFFFFFu; /* zlib's CRC-32 */
    for (uint32_t i = 0; i < task_size; i++) {
        crc ^= b[task_off + i];
        for (int k = 0; k < 8; k++)
            crc = crc & 1 ? (crc >> 1) ^ 0xEDB88320u : crc >> 1;
    }
    crc ^= 0xFFFFFFFFu;
    assert_int_not_equal(crc, le32(model_bytes + 48));
    for (int k = 0; k < 4; k++)
        b[48 + k] = (uint8_t)(crc >> (8 * k));
    assert_int_equal(aclmdlLoadFromFile(put_file("kernel.exeom", b, model_len), &id),
                     ACL_ERROR_PARSE_MODEL);
    /* the same bytes from memory */
    assert_int_equal(aclmdlLoadFromMem(b, model_len, &id), ACL_ERROR_PARSE_MODEL);
    free(b);
    assert_string_not_equal(aclGetRecentErrMsg(), "");

    /* from memory: no bytes, fewer than the header, NULL */
    assert_int_equal(aclmdlLoadFromMem(model_bytes, 0, &id), ACL_ERROR_MODEL_SIZE_INVALID);
    assert_int_equal(aclmdlLoadFromMem(model_bytes, 63, &id), ACL_ERROR_MODEL_SIZE_INVALID);
    assert_int_equal(aclmdlLoadFromMem(NULL, model_len, &id), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclmdlLoadFromMem(model_bytes, model_len, NULL), ACL_ERROR_INVALID_PARAM);
}

/* Loading needs a current context. */
static void test_load_without_context(void **state)
{
    (void)state;
    assert_int_equal(aclInit(NULL), ACL_SUCCESS);
    assert_int_equal(aclrtSetDevice(0), ACL_SUCCESS);
    uint32_t id;
    assert_int_equal(aclmdlLoadFromFile(model_path, &id), ACL_ERROR_INVALID_RESOURCE_HANDLE);
    assert_int_equal(aclmdlLoadFromMem(model_bytes, model_len, &id),
                     ACL_ERROR_INVALID_RESOURCE_HANDLE);
}

/* Model ids: distinct per load; a wrong or unloaded id is refused by every call. */
static void test_model_ids(void **state)
{
    (void)state;
    uint32_t a, b;
    assert_int_equal(aclmdlLoadFromFile(model_path, &a), ACL_SUCCESS);
    assert_int_equal(aclmdlLoadFromMem(model_bytes, model_len, &b), ACL_SUCCESS);
    assert_int_not_equal(a, b);
    uint32_t bad = (a > b ? a : b) + 1000;
    uint16_t y[2];
    assert_int_equal(run(bad, run1_x, y), ACL_ERROR_INVALID_MODEL_ID);
    aclmdlDesc *desc = aclmdlCreateDesc();
    assert_non_null(desc);
    assert_int_equal(aclmdlGetDesc(desc, bad), ACL_ERROR_INVALID_MODEL_ID);
    assert_int_equal(aclmdlUnload(bad), ACL_ERROR_INVALID_MODEL_ID);
    assert_int_equal(aclmdlUnload(a), ACL_SUCCESS);
    assert_int_equal(aclmdlUnload(a), ACL_ERROR_INVALID_MODEL_ID);
    assert_int_equal(run(a, run1_x, y), ACL_ERROR_INVALID_MODEL_ID);
    assert_int_equal(aclmdlGetDesc(desc, a), ACL_ERROR_INVALID_MODEL_ID);
    /* b is untouched */
    assert_int_equal(run(b, run1_x, y), ACL_SUCCESS);
    assert_memory_equal(y, run1_y, sizeof y);
    assert_int_equal(aclmdlDestroyDesc(desc), ACL_SUCCESS);
    assert_int_equal(aclmdlUnload(b), ACL_SUCCESS);
}

/* ---- description ---- */

static void test_desc(void **state)
{
    (void)state;
    uint32_t id;
    assert_int_equal(aclmdlLoadFromFile(model_path, &id), ACL_SUCCESS);
    aclmdlDesc *desc = aclmdlCreateDesc();
    assert_non_null(desc);
    assert_int_equal(aclmdlGetDesc(NULL, id), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclmdlGetDesc(desc, id), ACL_SUCCESS);
    assert_int_equal(aclmdlGetNumInputs(desc), 1);
    assert_int_equal(aclmdlGetNumOutputs(desc), 1);
    assert_int_equal(aclmdlGetNumInputs(NULL), 0);
    assert_int_equal(aclmdlGetInputSizeByIndex(desc, 0), 8);  /* 4 fp16 */
    assert_int_equal(aclmdlGetOutputSizeByIndex(desc, 0), 4); /* 2 fp16 */
    assert_int_equal(aclmdlGetInputSizeByIndex(desc, 1), 0);
    assert_int_equal(aclmdlGetOutputSizeByIndex(desc, 1), 0);
    assert_int_equal(aclmdlGetInputSizeByIndex(NULL, 0), 0);
    assert_int_equal(aclmdlGetInputDataType(desc, 0), ACL_FLOAT16);
    assert_int_equal(aclmdlGetOutputDataType(desc, 0), ACL_FLOAT16);
    assert_int_equal(aclmdlGetInputFormat(desc, 0), ACL_FORMAT_ND);
    assert_int_equal(aclmdlGetOutputFormat(desc, 0), ACL_FORMAT_ND);
    assert_string_equal(aclmdlGetInputNameByIndex(desc, 0), "x");
    assert_string_equal(aclmdlGetOutputNameByIndex(desc, 0), "y");
    assert_null(aclmdlGetInputNameByIndex(desc, 1));
    assert_null(aclmdlGetOutputNameByIndex(desc, 1));

    aclmdlIODims d;
    memset(&d, 0x55, sizeof d);
    assert_int_equal(aclmdlGetInputDims(desc, 0, &d), ACL_SUCCESS);
    assert_string_equal(d.name, "x");
    assert_int_equal(d.dimCount, 2);
    assert_int_equal(d.dims[0], 1);
    assert_int_equal(d.dims[1], 4);
    memset(&d, 0x55, sizeof d);
    assert_int_equal(aclmdlGetOutputDims(desc, 0, &d), ACL_SUCCESS);
    assert_string_equal(d.name, "y");
    assert_int_equal(d.dimCount, 2);
    assert_int_equal(d.dims[0], 1);
    assert_int_equal(d.dims[1], 2);
    assert_int_equal(aclmdlGetInputDims(desc, 1, &d), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclmdlGetOutputDims(desc, 1, &d), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclmdlGetInputDims(desc, 0, NULL), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclmdlGetInputDims(NULL, 0, &d), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclmdlGetOutputDims(NULL, 0, &d), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclmdlDestroyDesc(desc), ACL_SUCCESS);
    assert_int_equal(aclmdlUnload(id), ACL_SUCCESS);
}

/* Without NAME.dbg next to the file the names are "" (the dims are the exeom's). */
static void test_desc_without_dbg(void **state)
{
    (void)state;
    const char *p = put_file("nodbg.exeom", model_bytes, model_len);
    uint32_t id;
    assert_int_equal(aclmdlLoadFromFile(p, &id), ACL_SUCCESS);
    aclmdlDesc *desc = aclmdlCreateDesc();
    assert_non_null(desc);
    assert_int_equal(aclmdlGetDesc(desc, id), ACL_SUCCESS);
    assert_string_equal(aclmdlGetInputNameByIndex(desc, 0), "");
    assert_string_equal(aclmdlGetOutputNameByIndex(desc, 0), "");
    aclmdlIODims d;
    assert_int_equal(aclmdlGetOutputDims(desc, 0, &d), ACL_SUCCESS);
    assert_string_equal(d.name, "");
    assert_int_equal(d.dimCount, 2);
    assert_int_equal(d.dims[1], 2);
    assert_int_equal(aclmdlDestroyDesc(desc), ACL_SUCCESS);
    assert_int_equal(aclmdlUnload(id), ACL_SUCCESS);
}

/* ---- execution ---- */

static void test_execute_results(void **state)
{
    (void)state;
    uint32_t id;
    assert_int_equal(aclmdlLoadFromFile(model_path, &id), ACL_SUCCESS);
    uint16_t y[2] = {0, 0};
    assert_int_equal(run(id, run1_x, y), ACL_SUCCESS);
    assert_int_equal(y[0], run1_y[0]);
    assert_int_equal(y[1], run1_y[1]);
    assert_true(aclFloat16ToFloat(y[0]) == -31360.0f && aclFloat16ToFloat(y[1]) == 15552.0f);
    assert_int_equal(run(id, run2_x, y), ACL_SUCCESS);
    assert_int_equal(y[0], run2_y[0]);
    assert_int_equal(y[1], run2_y[1]);
    /* deterministic: run 1 again */
    assert_int_equal(run(id, run1_x, y), ACL_SUCCESS);
    assert_memory_equal(y, run1_y, sizeof y);
    /* the V2 form on the context's stream and on NULL (the context's) */
    uint16_t xh[4];
    for (int i = 0; i < 4; i++)
        xh[i] = aclFloatToFloat16(run2_x[i]);
    aclDataBuffer *ib, *ob;
    aclmdlDataset *in = dataset1(xh, sizeof xh, &ib), *out = dataset1(y, sizeof y, &ob);
    memset(y, 0, sizeof y);
    assert_int_equal(aclmdlExecuteV2(id, in, out, stream, NULL), ACL_SUCCESS);
    assert_memory_equal(y, run2_y, sizeof y);
    memset(y, 0, sizeof y);
    assert_int_equal(aclmdlExecuteV2(id, in, out, NULL, NULL), ACL_SUCCESS);
    assert_memory_equal(y, run2_y, sizeof y);
    dataset_free(in);
    dataset_free(out);
    assert_int_equal(aclmdlUnload(id), ACL_SUCCESS);
}

/* The model is copied at load: the caller's bytes may change afterwards. */
static void test_load_from_mem_copies(void **state)
{
    (void)state;
    uint8_t *b = malloc(model_len);
    assert_non_null(b);
    memcpy(b, model_bytes, model_len);
    uint32_t id;
    assert_int_equal(aclmdlLoadFromMem(b, model_len, &id), ACL_SUCCESS);
    memset(b, 0, model_len);
    free(b);
    uint16_t y[2];
    assert_int_equal(run(id, run1_x, y), ACL_SUCCESS);
    assert_memory_equal(y, run1_y, sizeof y);
    assert_int_equal(aclmdlUnload(id), ACL_SUCCESS);
}

static void test_execute_mismatch(void **state)
{
    (void)state;
    uint32_t id;
    assert_int_equal(aclmdlLoadFromFile(model_path, &id), ACL_SUCCESS);
    uint16_t x[8] = {0}, y[4] = {0};
    aclDataBuffer *b1, *b2, *b3, *b4;
    aclmdlDataset *in = dataset1(x, 8, &b1), *out = dataset1(y, 4, &b2);
    aclmdlDataset *none = aclmdlCreateDataset();
    assert_non_null(none);
    assert_int_equal(aclmdlExecute(id, NULL, out), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclmdlExecute(id, in, NULL), ACL_ERROR_INVALID_PARAM);
    /* input: no buffer, a wrong size (6 and 16 bytes for 8), two buffers */
    assert_int_equal(aclmdlExecute(id, none, out), ACL_ERROR_MODEL_INPUT_NOT_MATCH);
    assert_int_equal(aclUpdateDataBuffer(b1, x, 6), ACL_SUCCESS);
    assert_int_equal(aclmdlExecute(id, in, out), ACL_ERROR_MODEL_INPUT_NOT_MATCH);
    assert_int_equal(aclUpdateDataBuffer(b1, x, 16), ACL_SUCCESS);
    assert_int_equal(aclmdlExecute(id, in, out), ACL_ERROR_MODEL_INPUT_NOT_MATCH);
    assert_int_equal(aclUpdateDataBuffer(b1, x, 8), ACL_SUCCESS);
    b3 = aclCreateDataBuffer(x, 8);
    assert_int_equal(aclmdlAddDatasetBuffer(in, b3), ACL_SUCCESS);
    assert_int_equal(aclmdlExecute(id, in, out), ACL_ERROR_MODEL_INPUT_NOT_MATCH);
    aclmdlDataset *in1 = dataset1(x, 8, &b4);
    /* output: no buffer, too small, two buffers */
    assert_int_equal(aclmdlExecute(id, in1, none), ACL_ERROR_MODEL_OUTPUT_NOT_MATCH);
    assert_int_equal(aclUpdateDataBuffer(b2, y, 2), ACL_SUCCESS);
    assert_int_equal(aclmdlExecute(id, in1, out), ACL_ERROR_MODEL_OUTPUT_NOT_MATCH);
    assert_int_equal(aclUpdateDataBuffer(b2, y, 4), ACL_SUCCESS);
    aclDataBuffer *b5 = aclCreateDataBuffer(y + 2, 4);
    assert_int_equal(aclmdlAddDatasetBuffer(out, b5), ACL_SUCCESS);
    assert_int_equal(aclmdlExecute(id, in1, out), ACL_ERROR_MODEL_OUTPUT_NOT_MATCH);
    /* the right counts and sizes: x = 0 gives y = 0 */
    aclDataBuffer *b6;
    aclmdlDataset *out1 = dataset1(y, 4, &b6);
    y[0] = y[1] = 0x1234;
    assert_int_equal(aclmdlExecute(id, in1, out1), ACL_SUCCESS);
    assert_int_equal(y[0] & 0x7FFF, 0);
    assert_int_equal(y[1] & 0x7FFF, 0);
    dataset_free(in);
    dataset_free(in1);
    dataset_free(out);
    dataset_free(out1);
    assert_int_equal(aclmdlDestroyDataset(none), ACL_SUCCESS);
    assert_int_equal(aclmdlUnload(id), ACL_SUCCESS);
}

/* An output buffer (NULL, 0) is allocated by aclmdlExecute: the caller frees it with
 * aclrtFree and detaches it with aclUpdateDataBuffer. */
static void test_output_allocated(void **state)
{
    (void)state;
    uint32_t id;
    assert_int_equal(aclmdlLoadFromFile(model_path, &id), ACL_SUCCESS);
    uint16_t xh[4];
    for (int i = 0; i < 4; i++)
        xh[i] = aclFloatToFloat16(run1_x[i]);
    aclDataBuffer *ib, *ob;
    aclmdlDataset *in = dataset1(xh, sizeof xh, &ib), *out = dataset1(NULL, 0, &ob);
    assert_int_equal(aclmdlExecute(id, in, out), ACL_SUCCESS);
    uint16_t *y = aclGetDataBufferAddr(ob);
    assert_non_null(y);
    assert_int_equal(aclGetDataBufferSizeV2(ob), 4);
    assert_int_equal(y[0], run1_y[0]);
    assert_int_equal(y[1], run1_y[1]);
    assert_int_equal(aclrtFree(y), ACL_SUCCESS);
    assert_int_equal(aclUpdateDataBuffer(ob, NULL, 0), ACL_SUCCESS);
    assert_null(aclGetDataBufferAddr(ob));
    dataset_free(in);
    dataset_free(out);
    assert_int_equal(aclmdlUnload(id), ACL_SUCCESS);
}

/* Load, execute and unload happen in the loading context. */
static void test_other_context(void **state)
{
    (void)state;
    uint32_t id;
    assert_int_equal(aclmdlLoadFromFile(model_path, &id), ACL_SUCCESS);
    aclrtContext c2 = NULL;
    aclrtStream s2 = NULL;
    assert_int_equal(aclrtCreateContext(&c2, 0), ACL_SUCCESS); /* now current */
    assert_int_equal(aclrtCreateStream(&s2), ACL_SUCCESS);
    uint16_t y[2];
    assert_int_equal(run(id, run1_x, y), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclmdlUnload(id), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclrtSetCurrentContext(ctx), ACL_SUCCESS);
    /* the right context, but a stream of the other */
    uint16_t xh[4];
    for (int i = 0; i < 4; i++)
        xh[i] = aclFloatToFloat16(run1_x[i]);
    aclDataBuffer *ib, *ob;
    aclmdlDataset *in = dataset1(xh, sizeof xh, &ib), *out = dataset1(y, sizeof y, &ob);
    assert_int_equal(aclmdlExecuteV2(id, in, out, s2, NULL), ACL_ERROR_INVALID_RESOURCE_HANDLE);
    assert_int_equal(aclmdlExecuteV2(id, in, out, stream, NULL), ACL_SUCCESS);
    assert_memory_equal(y, run1_y, sizeof y);
    dataset_free(in);
    dataset_free(out);
    assert_int_equal(aclmdlUnload(id), ACL_SUCCESS);
    assert_int_equal(aclrtSetCurrentContext(c2), ACL_SUCCESS);
    assert_int_equal(aclrtDestroyStream(s2), ACL_SUCCESS);
    assert_int_equal(aclrtDestroyContext(c2), ACL_SUCCESS);
    assert_int_equal(aclrtSetCurrentContext(ctx), ACL_SUCCESS);
}

/* aclFinalize releases what is still loaded; the ids are gone after a new aclInit. */
static void test_finalize_releases(void **state)
{
    (void)state;
    uint32_t id;
    assert_int_equal(aclmdlLoadFromFile(model_path, &id), ACL_SUCCESS);
    assert_int_equal(aclFinalize(), ACL_SUCCESS);
    stream = NULL; /* released by aclFinalize */
    ctx = NULL;
    uint16_t y[2];
    assert_int_equal(run(id, run1_x, y), ACL_ERROR_UNINITIALIZE);
    assert_int_equal(aclmdlUnload(id), ACL_ERROR_UNINITIALIZE);
    assert_int_equal(aclInit(NULL), ACL_SUCCESS);
    assert_int_equal(aclmdlUnload(id), ACL_ERROR_INVALID_MODEL_ID);
}

/* ---- fp16 ---- */

/* IEEE binary16, round to nearest even (worked values):
 *   1 = 0x3C00; -2 = 0xC000; 65504 (the largest) = 0x7BFF; 65519 (below the half-way point
 *   65520 to 2^16) = 0x7BFF; 65520 and up overflow to infinity 0x7C00;
 *   0.1 (fp32 0.100000001) lies between 0x2E66 = 0.0999755859 and 0x2E67 = 0.1000366211,
 *   nearer the first; 2049 is half-way between 2048 and 2050 (step 2 in [2048, 4096)):
 *   even 2048 = 0x6800; 2051 likewise -> 2052 = 0x6802; 2^-24 is the smallest subnormal
 *   0x0001, 2^-25 half of it -> 0 (even), 3 x 2^-25 = 1.5 steps -> 2 steps = 0x0002. */
static void test_fp16(void **state)
{
    (void)state;
    assert_int_equal(aclFloatToFloat16(1.0f), 0x3C00);
    assert_int_equal(aclFloatToFloat16(-2.0f), 0xC000);
    assert_int_equal(aclFloatToFloat16(0.0f), 0x0000);
    assert_int_equal(aclFloatToFloat16(-0.0f), 0x8000);
    assert_int_equal(aclFloatToFloat16(65504.0f), 0x7BFF);
    assert_int_equal(aclFloatToFloat16(65519.0f), 0x7BFF);
    assert_int_equal(aclFloatToFloat16(65520.0f), 0x7C00);
    assert_int_equal(aclFloatToFloat16(-65520.0f), 0xFC00);
    assert_int_equal(aclFloatToFloat16(1e10f), 0x7C00);
    assert_int_equal(aclFloatToFloat16(INFINITY), 0x7C00);
    assert_int_equal(aclFloatToFloat16(0.1f), 0x2E66);
    assert_int_equal(aclFloatToFloat16(2049.0f), 0x6800);
    assert_int_equal(aclFloatToFloat16(2051.0f), 0x6802);
    assert_int_equal(aclFloatToFloat16(ldexpf(1, -24)), 0x0001);
    assert_int_equal(aclFloatToFloat16(ldexpf(1, -25)), 0x0000);
    assert_int_equal(aclFloatToFloat16(ldexpf(3, -25)), 0x0002);
    uint16_t nan = aclFloatToFloat16(NAN);
    assert_int_equal(nan & 0x7C00, 0x7C00);
    assert_int_not_equal(nan & 0x03FF, 0);

    assert_true(aclFloat16ToFloat(0x3C00) == 1.0f);
    assert_true(aclFloat16ToFloat(0x7BFF) == 65504.0f);
    assert_true(aclFloat16ToFloat(0x2E66) == 0.0999755859375f);
    assert_true(aclFloat16ToFloat(0x3555) == 0.333251953125f);
    assert_true(aclFloat16ToFloat(0x0001) == ldexpf(1, -24));
    assert_true(aclFloat16ToFloat(0x8000) == 0.0f && signbit(aclFloat16ToFloat(0x8000)));
    assert_true(isinf(aclFloat16ToFloat(0x7C00)) && aclFloat16ToFloat(0x7C00) > 0);
    assert_true(isinf(aclFloat16ToFloat(0xFC00)) && aclFloat16ToFloat(0xFC00) < 0);
    assert_true(isnan(aclFloat16ToFloat(0x7E00)));
    assert_true(aclFloat16ToFloat(0xF7A8) == -31360.0f);
    assert_true(aclFloat16ToFloat(0x79F4) == 48768.0f);
    /* every finite fp16 survives the round trip */
    for (uint32_t h = 0; h < 0x10000; h++)
        if ((h & 0x7C00) != 0x7C00)
            assert_int_equal(aclFloatToFloat16(aclFloat16ToFloat((uint16_t)h)), h);

    assert_int_equal(aclDataTypeSize(ACL_FLOAT), 4);
    assert_int_equal(aclDataTypeSize(ACL_FLOAT16), 2);
    assert_int_equal(aclDataTypeSize(ACL_INT8), 1);
    assert_int_equal(aclDataTypeSize(ACL_INT32), 4);
    assert_int_equal(aclDataTypeSize(ACL_UINT16), 2);
    assert_int_equal(aclDataTypeSize(ACL_INT64), 8);
    assert_int_equal(aclDataTypeSize(ACL_DOUBLE), 8);
    assert_int_equal(aclDataTypeSize(ACL_BOOL), 1);
    assert_int_equal(aclDataTypeSize(ACL_DT_UNDEFINED), 0);
}

int main(int argc, char **argv)
{
    model_path = argc > 1 ? argv[1] : getenv("NB_ACL_MODEL");
    if (!model_path || !(model_bytes = slurp(model_path, &model_len))) {
        fprintf(stderr, "test_acl: give the matmul sample's exeom (argv[1] or $NB_ACL_MODEL; "
                        "share/samples/matmul/run_test.sh --model-only DIR writes it)\n");
        return 1;
    }
    uapi_npu_dlog_setlevel(0x10, 4, 0); /* the errors below are expected: no driver log */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_before_init), /* first: nothing initialized yet */
        cmocka_unit_test_teardown(test_init_twice_finalize_twice, runtime_down),
        cmocka_unit_test_teardown(test_init_config_files, runtime_down),
        cmocka_unit_test_teardown(test_dump_config, runtime_down),
        cmocka_unit_test_setup_teardown(test_set_dump, runtime_up, runtime_down),
        cmocka_unit_test_teardown(test_device_context_stream, runtime_down),
        cmocka_unit_test_setup_teardown(test_malloc_memcpy, runtime_up, runtime_down),
        cmocka_unit_test_setup_teardown(test_datasets, runtime_up, runtime_down),
        cmocka_unit_test_setup_teardown(test_query_sizes, runtime_up, runtime_down),
        cmocka_unit_test_setup_teardown(test_load_errors, runtime_up, runtime_down),
        cmocka_unit_test_teardown(test_load_without_context, runtime_down),
        cmocka_unit_test_setup_teardown(test_model_ids, runtime_up, runtime_down),
        cmocka_unit_test_setup_teardown(test_desc, runtime_up, runtime_down),
        cmocka_unit_test_setup_teardown(test_desc_without_dbg, runtime_up, runtime_down),
        cmocka_unit_test_setup_teardown(test_execute_results, runtime_up, runtime_down),
        cmocka_unit_test_setup_teardown(test_load_from_mem_copies, runtime_up, runtime_down),
        cmocka_unit_test_setup_teardown(test_execute_mismatch, runtime_up, runtime_down),
        cmocka_unit_test_setup_teardown(test_output_allocated, runtime_up, runtime_down),
        cmocka_unit_test_setup_teardown(test_other_context, runtime_up, runtime_down),
        cmocka_unit_test_setup_teardown(test_finalize_releases, runtime_up, runtime_down),
        cmocka_unit_test(test_fp16),
    };
    int r = cmocka_run_group_tests(tests, setup_dir, teardown_dir);
    free(model_bytes);
    return r;
}
