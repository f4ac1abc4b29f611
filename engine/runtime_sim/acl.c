/* nanobench: the ACL model-execution API on the simulated NPU (include/acl/acl.h).
 * The runtime's handle tables are the only global state of nanobench's engines
 * (../shared/docs/DESIGN.md, Conventions). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include <jansson.h>

#include "acl/acl.h"
#include "nb/sim.h"
#include "nb/tensor.h"
#include "sim_dump.h"

#define MAX_MODELS 64
#define MAX_CTX 16

typedef struct rt_ctx {
    int alive;
    int32_t device;
    int has_stream;
} rt_ctx;

typedef struct rt_model {
    nb_sim_model *sim;
    rt_ctx *ctx;
    char name[256];    /* model_name of the dump list */
    void *dbg;
    char dbg_note[1300]; /* why a NAME.dbg found next to the file was not used ("" if none) */
    char dump_note[700]; /* what of the dump list selects nothing in this model */
    uint32_t iteration;
    int dump;          /* the dump config applied at load */
    char dump_dir[2048]; /* where the last execution dumped ("" if it did not) */
    uint32_t dump_files; /* how many files it wrote there */
} rt_model;

struct aclDataBuffer {
    void *data;
    size_t size;
};

struct aclmdlDataset {
    aclDataBuffer **b;
    size_t n, cap;
};

struct aclmdlDesc {
    int filled;
    size_t n_in, n_out;
    nb_exeom_tensor *t; /* inputs then outputs */
    char (*names)[ACL_MAX_TENSOR_NAME_LEN];
};

static struct {
    int inited, finalized;
    int device_set;
    rt_ctx ctx[MAX_CTX];
    rt_ctx *current;
    rt_model models[MAX_MODELS];
    sim_dump_cfg dump;
    int level;       /* [NDRV] lines at or above it: 0 debug .. 3 error, 4 none */
    int level_set;
    char err[1024];
} R;

static int log_level(void)
{
    if (!R.level_set) {
        const char *e = getenv("NANOBENCH_NDRV_LOG");
        R.level = e && *e >= '0' && *e <= '4' ? *e - '0' : 3;
        R.level_set = 1;
    }
    return R.level;
}

static void ndrv(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void ndrv(int level, const char *fmt, ...)
{
    if (level < log_level())
        return;
    static const char *const names[] = {"DEBUG", "INFO", "WARNING", "ERROR"};
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "[NDRV][%s] ", names[level > 3 ? 3 : level]);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* Records the error text and logs it; returns code. */
static aclError fail(aclError code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static aclError fail(aclError code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(R.err, sizeof R.err, fmt, ap);
    va_end(ap);
    ndrv(3, "%s (error %d)", R.err, code);
    return code;
}

void uapi_npu_dlog_setlevel(uint32_t module, uint32_t level, uint32_t reserved)
{
    (void)module, (void)reserved;
    R.level = level > 4 ? 4 : (int)level;
    R.level_set = 1;
}

const char *aclGetRecentErrMsg(void) { return R.err; }

static aclError read_dump_json(const char *path, int require_dump)
{
    json_error_t je;
    FILE *f = fopen(path, "r");
    if (!f)
        return fail(ACL_ERROR_INVALID_FILE, "%s: cannot open the config file", path);
    json_t *root = json_loadf(f, 0, &je);
    fclose(f);
    if (!root)
        return fail(ACL_ERROR_PARSE_FILE, "%s:%d: not JSON: %s", path, je.line, je.text);
    json_t *d = json_object_get(root, "dump");
    aclError rc = ACL_SUCCESS;
    if (d || require_dump) {
        char why[512];
        sim_dump_cfg c;
        if (!d)
            rc = fail(ACL_ERROR_INVALID_DUMP_CONFIG, "%s: no \"dump\" section", path);
        else if (sim_dump_cfg_parse(d, &c, why, sizeof why))
            rc = fail(ACL_ERROR_INVALID_DUMP_CONFIG, "%s: dump: %s", path, why);
        else {
            sim_dump_cfg_free(&R.dump);
            R.dump = c;
            /* a killed run's dump folders ({iter}.tmp.PID of a process that is gone) in the
               dump path, once per config (not per execution): they are under other
               timestamps than this run's */
            nb_remove_stale_tmps_under(c.path, 4);
            ndrv(1, "dump on: %s, %d model(s)", c.path, c.n_models);
        }
    }
    json_decref(root);
    return rc;
}

aclError aclInit(const char *configPath)
{
    if (R.inited)
        return fail(ACL_ERROR_REPEAT_INITIALIZE, "aclInit: already initialized");
    memset(R.models, 0, sizeof R.models);
    memset(R.ctx, 0, sizeof R.ctx);
    R.current = NULL;
    R.device_set = 0;
    R.err[0] = 0;
    if (configPath && *configPath) {
        aclError rc = read_dump_json(configPath, 0);
        if (rc)
            return rc;
    }
    nb_sim_numerics_init();
    R.inited = 1;
    R.finalized = 0;
    ndrv(1, "npu init done");
    return ACL_SUCCESS;
}

aclError aclFinalize(void)
{
    if (!R.inited)
        return R.finalized ? fail(ACL_ERROR_REPEAT_FINALIZE, "aclFinalize: already finalized")
                           : fail(ACL_ERROR_UNINITIALIZE, "aclFinalize: aclInit was not called");
    for (int i = 0; i < MAX_MODELS; i++)
        if (R.models[i].sim) {
            nb_sim_free(R.models[i].sim);
            sim_dbg_free(R.models[i].dbg);
        }
    memset(R.models, 0, sizeof R.models);
    sim_dump_cfg_free(&R.dump);
    R.inited = 0;
    R.finalized = 1;
    return ACL_SUCCESS;
}

#define NEED_INIT(fn)                                                                         \
    do {                                                                                      \
        if (!R.inited)                                                                        \
            return fail(ACL_ERROR_UNINITIALIZE, "%s: aclInit was not called", fn);           \
    } while (0)

aclError aclrtSetDevice(int32_t deviceId)
{
    NEED_INIT("aclrtSetDevice");
    if (deviceId != 0)
        return fail(ACL_ERROR_INVALID_DEVICE, "aclrtSetDevice: device %d (the Nano has one NPU, "
                    "device 0)", deviceId);
    R.device_set = 1;
    return ACL_SUCCESS;
}

aclError aclrtResetDevice(int32_t deviceId)
{
    NEED_INIT("aclrtResetDevice");
    if (deviceId != 0 || !R.device_set)
        return fail(ACL_ERROR_INVALID_DEVICE, "aclrtResetDevice: device %d is not set", deviceId);
    R.device_set = 0;
    return ACL_SUCCESS;
}

static rt_ctx *find_ctx(aclrtContext c)
{
    for (int i = 0; i < MAX_CTX; i++)
        if ((void *)&R.ctx[i] == c && R.ctx[i].alive)
            return &R.ctx[i];
    return NULL;
}

aclError aclrtCreateContext(aclrtContext *context, int32_t deviceId)
{
    NEED_INIT("aclrtCreateContext");
    if (!context)
        return fail(ACL_ERROR_INVALID_PARAM, "aclrtCreateContext: context is NULL");
    if (deviceId != 0 || !R.device_set)
        return fail(ACL_ERROR_INVALID_DEVICE, "aclrtCreateContext: device %d is not set "
                    "(aclrtSetDevice)", deviceId);
    for (int i = 0; i < MAX_CTX; i++)
        if (!R.ctx[i].alive) {
            memset(&R.ctx[i], 0, sizeof R.ctx[i]);
            R.ctx[i].alive = 1;
            *context = &R.ctx[i];
            R.current = &R.ctx[i];
            return ACL_SUCCESS;
        }
    ndrv(3, "alloc fail: context");
    return fail(ACL_ERROR_BAD_ALLOC, "aclrtCreateContext: all %d contexts in use", MAX_CTX);
}

aclError aclrtDestroyContext(aclrtContext context)
{
    NEED_INIT("aclrtDestroyContext");
    rt_ctx *c = find_ctx(context);
    if (!c)
        return fail(ACL_ERROR_INVALID_PARAM, "aclrtDestroyContext: not a context");
    for (int i = 0; i < MAX_MODELS; i++)
        if (R.models[i].sim && R.models[i].ctx == c)
            return fail(ACL_ERROR_RESOURCE_NOT_MATCH, "aclrtDestroyContext: model %d is still "
                        "loaded in it (aclmdlUnload first)", i + 1);
    c->alive = 0;
    if (R.current == c)
        R.current = NULL;
    return ACL_SUCCESS;
}

aclError aclrtSetCurrentContext(aclrtContext context)
{
    NEED_INIT("aclrtSetCurrentContext");
    rt_ctx *c = find_ctx(context);
    if (!c)
        return fail(ACL_ERROR_INVALID_PARAM, "aclrtSetCurrentContext: not a context");
    R.current = c;
    return ACL_SUCCESS;
}

aclError aclrtGetCurrentContext(aclrtContext *context)
{
    NEED_INIT("aclrtGetCurrentContext");
    if (!context)
        return fail(ACL_ERROR_INVALID_PARAM, "aclrtGetCurrentContext: context is NULL");
    if (!R.current)
        return fail(ACL_ERROR_INVALID_RESOURCE_HANDLE, "aclrtGetCurrentContext: no context");
    *context = R.current;
    return ACL_SUCCESS;
}

/* A stream is its context (one per context, as the seed says). */
aclError aclrtCreateStream(aclrtStream *stream)
{
    NEED_INIT("aclrtCreateStream");
    if (!stream)
        return fail(ACL_ERROR_INVALID_PARAM, "aclrtCreateStream: stream is NULL");
    if (!R.current)
        return fail(ACL_ERROR_INVALID_RESOURCE_HANDLE, "aclrtCreateStream: no current context");
    if (R.current->has_stream)
        return fail(ACL_ERROR_BAD_ALLOC, "aclrtCreateStream: the context has its stream (one "
                    "stream per context on the Nano)");
    R.current->has_stream = 1;
    *stream = R.current;
    return ACL_SUCCESS;
}

aclError aclrtDestroyStream(aclrtStream stream)
{
    NEED_INIT("aclrtDestroyStream");
    rt_ctx *c = find_ctx(stream);
    if (!c || !c->has_stream)
        return fail(ACL_ERROR_INVALID_PARAM, "aclrtDestroyStream: not a stream");
    c->has_stream = 0;
    return ACL_SUCCESS;
}

aclError aclrtSynchronizeStream(aclrtStream stream)
{
    NEED_INIT("aclrtSynchronizeStream");
    rt_ctx *c = find_ctx(stream);
    if (!c || !c->has_stream)
        return fail(ACL_ERROR_INVALID_PARAM, "aclrtSynchronizeStream: not a stream");
    return ACL_SUCCESS;
}

aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy)
{
    (void)policy;
    NEED_INIT("aclrtMalloc");
    if (!devPtr || size == 0)
        return fail(ACL_ERROR_INVALID_PARAM, "aclrtMalloc: %s", devPtr ? "size 0" : "devPtr is NULL");
    void *p = NULL;
    if (posix_memalign(&p, 32, size)) {
        ndrv(3, "malloc fail: %zu bytes", size);
        return fail(ACL_ERROR_BAD_ALLOC, "aclrtMalloc: %zu bytes", size);
    }
    *devPtr = p;
    return ACL_SUCCESS;
}

aclError aclrtFree(void *devPtr)
{
    NEED_INIT("aclrtFree");
    if (!devPtr)
        return fail(ACL_ERROR_INVALID_PARAM, "aclrtFree: NULL");
    free(devPtr);
    return ACL_SUCCESS;
}

aclError aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count,
                     aclrtMemcpyKind kind)
{
    NEED_INIT("aclrtMemcpy");
    if (!dst || !src || count > destMax || (unsigned)kind > ACL_MEMCPY_DEVICE_TO_DEVICE)
        return fail(ACL_ERROR_INVALID_PARAM, "aclrtMemcpy: NULL pointer, count above destMax "
                    "or a bad kind");
    memmove(dst, src, count);
    return ACL_SUCCESS;
}

/* ---- models ---- */

static aclError read_model_file(const char *path, uint8_t **buf, size_t *len)
{
    if (!path)
        return fail(ACL_ERROR_INVALID_PARAM, "model path is NULL");
    nb_status st = {0};
    if (nb_read_file(path, buf, len, &st))
        return fail(ACL_ERROR_GE_EXEC_MODEL_PATH_INVALID, "Load file[%s] failed: %s", path, st.msg);
    return ACL_SUCCESS;
}

/* Maps a loader error to the ACL code: not an exeom -> INVALID_FILE; a bad one -> PARSE_MODEL */
static aclError load_error(const char *what, nb_err e, const nb_status *st)
{
    if (e == NB_ERR_NOMEM) {
        ndrv(3, "malloc fail");
        return fail(ACL_ERROR_BAD_ALLOC, "%s: %s", what, st->msg);
    }
    if (e == NB_ERR_FORMAT)
        return fail(ACL_ERROR_INVALID_FILE, "%s: %s", what, st->msg);
    return fail(ACL_ERROR_PARSE_MODEL, "%s: %s", what, st->msg);
}

static aclError query(const char *fileName, nb_exeom *x, uint8_t **buf)
{
    size_t len = 0;
    aclError rc = read_model_file(fileName, buf, &len);
    if (rc)
        return rc;
    nb_status st = {0};
    nb_err e = nb_exeom_parse(*buf, len, x, &st);
    if (e == NB_ERR_FORMAT && len >= 4 && !memcmp(*buf, NB_EXEOM_MAGIC, 4))
        e = NB_ERR_DATA; /* an exeom, but a bad one */
    if (e) {
        free(*buf);
        *buf = NULL;
        return load_error(fileName, e, &st);
    }
    return ACL_SUCCESS;
}

aclError aclmdlQuerySize(const char *fileName, size_t *workSize, size_t *weightSize)
{
    NEED_INIT("aclmdlQuerySize");
    if (!workSize || !weightSize)
        return fail(ACL_ERROR_INVALID_PARAM, "aclmdlQuerySize: NULL size pointer");
    nb_exeom x;
    uint8_t *buf = NULL;
    aclError rc = query(fileName, &x, &buf);
    if (rc)
        return rc;
    *workSize = x.arena_bytes;
    *weightSize = x.weight_bytes;
    nb_exeom_free(&x);
    free(buf);
    return ACL_SUCCESS;
}

aclError aclmdlQueryExeOMDesc(const char *fileName, aclmdlExeOMDesc *desc)
{
    NEED_INIT("aclmdlQueryExeOMDesc");
    if (!desc)
        return fail(ACL_ERROR_INVALID_PARAM, "aclmdlQueryExeOMDesc: desc is NULL");
    nb_exeom x;
    uint8_t *buf = NULL;
    aclError rc = query(fileName, &x, &buf);
    if (rc)
        return rc;
    memset(desc, 0, sizeof *desc);
    desc->weightSize = x.weight_bytes;
    desc->modelDescSize = 64 + (size_t)48 * x.n_tensors;
    desc->kernelSize = 0;
    desc->kernelArgsSize = (size_t)32 * x.n_tasks;
    desc->staticTaskSize = (size_t)32 * x.n_tasks;
    nb_exeom_free(&x);
    free(buf);
    return ACL_SUCCESS;
}

static aclError load(const uint8_t *buf, size_t len, const char *path, uint32_t *modelId)
{
    NEED_INIT("aclmdlLoad");
    if (!modelId || !buf)
        return fail(ACL_ERROR_INVALID_PARAM, "aclmdlLoad: NULL model or modelId");
    if (!R.current)
        return fail(ACL_ERROR_INVALID_RESOURCE_HANDLE, "aclmdlLoad: no current context "
                    "(aclrtCreateContext)");
    int slot = -1;
    for (int i = 0; i < MAX_MODELS && slot < 0; i++)
        if (!R.models[i].sim)
            slot = i;
    if (slot < 0) {
        ndrv(3, "alloc fail: model id");
        return fail(ACL_ERROR_BAD_ALLOC, "aclmdlLoad: all %d model ids in use", MAX_MODELS);
    }
    nb_status st = {0};
    nb_sim_model *sim = NULL;
    nb_err e = nb_sim_load(buf, len, NULL, &sim, &st);
    if (e)
        return load_error(path ? path : "model in memory", e, &st);
    rt_model *m = &R.models[slot];
    memset(m, 0, sizeof *m);
    m->sim = sim;
    m->ctx = R.current;
    /* the model's name: the file name without directory and extension */
    if (path) {
        const char *base = strrchr(path, '/');
        snprintf(m->name, sizeof m->name, "%s", base ? base + 1 : path);
        char *dot = strrchr(m->name, '.');
        if (dot && dot != m->name)
            *dot = 0;
    } else {
        snprintf(m->name, sizeof m->name, "model%d", slot + 1);
    }
    /* NAME.dbg: in the dump path (the seed), else next to the exeom */
    uint32_t crc = (uint32_t)crc32(crc32(0L, Z_NULL, 0), buf, (uInt)len);
    char dbg[2048], why[1200] = "";
    if (R.dump.enabled) {
        snprintf(dbg, sizeof dbg, "%s/%s.dbg", R.dump.path, m->name);
        m->dbg = sim_dbg_read(dbg, (uint32_t)len, crc, why, sizeof why);
    }
    if (!m->dbg && path) {
        snprintf(dbg, sizeof dbg, "%s", path);
        size_t n = strlen(dbg);
        if (n > 6 && !strcmp(dbg + n - 6, ".exeom"))
            dbg[n - 6] = 0;
        strncat(dbg, ".dbg", sizeof dbg - strlen(dbg) - 1);
        m->dbg = sim_dbg_read(dbg, (uint32_t)len, crc, why, sizeof why);
        if (!m->dbg && access(dbg, F_OK) == 0)
            snprintf(m->dbg_note, sizeof m->dbg_note, "%s", why);
    }
    if (!m->dbg)
        ndrv(R.dump.enabled ? 2 : 1, "%s: no NAME.dbg (%s): dumps name tasks task<k>", m->name, why);
    m->dump = R.dump.enabled;
    sim_dump_check(&R.dump, m->name, m->dbg, (int)nb_sim_exeom(sim)->n_tasks, m->dump_note,
                   sizeof m->dump_note);
    if (m->dump_note[0])
        ndrv(2, "%s", m->dump_note);
    *modelId = (uint32_t)slot + 1;
    ndrv(1, "model %u loaded: %s, %u tasks, arena %u bytes", *modelId, m->name,
         nb_sim_exeom(sim)->n_tasks, nb_sim_exeom(sim)->arena_bytes);
    return ACL_SUCCESS;
}

aclError aclmdlLoadFromFile(const char *modelPath, uint32_t *modelId)
{
    NEED_INIT("aclmdlLoadFromFile");
    if (!modelId)
        return fail(ACL_ERROR_INVALID_PARAM, "aclmdlLoadFromFile: modelId is NULL");
    uint8_t *buf = NULL;
    size_t len = 0;
    aclError rc = read_model_file(modelPath, &buf, &len);
    if (rc)
        return rc;
    rc = load(buf, len, modelPath, modelId);
    free(buf);
    return rc;
}

aclError aclmdlLoadFromMem(const void *model, size_t modelSize, uint32_t *modelId)
{
    NEED_INIT("aclmdlLoadFromMem");
    if (!model || !modelId)
        return fail(ACL_ERROR_INVALID_PARAM, "aclmdlLoadFromMem: NULL model or modelId");
    if (modelSize < 64)
        return fail(ACL_ERROR_MODEL_SIZE_INVALID, "aclmdlLoadFromMem: %zu bytes (an exeom has a "
                    "64-byte header)", modelSize);
    return load(model, modelSize, NULL, modelId);
}

static rt_model *find_model(uint32_t id)
{
    return id >= 1 && id <= MAX_MODELS && R.models[id - 1].sim ? &R.models[id - 1] : NULL;
}

aclError aclmdlUnload(uint32_t modelId)
{
    NEED_INIT("aclmdlUnload");
    rt_model *m = find_model(modelId);
    if (!m)
        return fail(ACL_ERROR_INVALID_MODEL_ID, "aclmdlUnload: model id %u is not loaded", modelId);
    if (m->ctx != R.current)
        return fail(ACL_ERROR_INVALID_PARAM, "aclmdlUnload: model %u was loaded in another "
                    "context (load, execute and unload in one context)", modelId);
    nb_sim_free(m->sim);
    sim_dbg_free(m->dbg);
    memset(m, 0, sizeof *m);
    return ACL_SUCCESS;
}

aclmdlDesc *aclmdlCreateDesc(void) { return calloc(1, sizeof(aclmdlDesc)); }

aclError aclmdlDestroyDesc(aclmdlDesc *d)
{
    if (!d)
        return fail(ACL_ERROR_INVALID_PARAM, "aclmdlDestroyDesc: NULL");
    free(d->t);
    free(d->names);
    free(d);
    return ACL_SUCCESS;
}

aclError aclmdlGetDesc(aclmdlDesc *d, uint32_t modelId)
{
    NEED_INIT("aclmdlGetDesc");
    if (!d)
        return fail(ACL_ERROR_INVALID_PARAM, "aclmdlGetDesc: modelDesc is NULL");
    rt_model *m = find_model(modelId);
    if (!m)
        return fail(ACL_ERROR_INVALID_MODEL_ID, "aclmdlGetDesc: model id %u is not loaded", modelId);
    const nb_exeom *x = nb_sim_exeom(m->sim);
    size_t n = (size_t)x->n_inputs + x->n_outputs;
    nb_exeom_tensor *t = calloc(n + 1, sizeof *t);
    char (*names)[ACL_MAX_TENSOR_NAME_LEN] = calloc(n + 1, sizeof *names);
    if (!t || !names) {
        free(t), free(names);
        return fail(ACL_ERROR_BAD_ALLOC, "aclmdlGetDesc: out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        int ti = i < x->n_inputs ? nb_sim_input_tensor(m->sim, (int)i)
                                 : nb_sim_output_tensor(m->sim, (int)(i - x->n_inputs));
        t[i] = x->t[ti];
        snprintf(names[i], ACL_MAX_TENSOR_NAME_LEN, "%s", sim_dbg_tensor_onnx(m->dbg, ti));
    }
    free(d->t);
    free(d->names);
    d->t = t;
    d->names = names;
    d->n_in = x->n_inputs;
    d->n_out = x->n_outputs;
    d->filled = 1;
    return ACL_SUCCESS;
}

size_t aclmdlGetNumInputs(aclmdlDesc *d) { return d && d->filled ? d->n_in : 0; }
size_t aclmdlGetNumOutputs(aclmdlDesc *d) { return d && d->filled ? d->n_out : 0; }

static const nb_exeom_tensor *io(const aclmdlDesc *d, size_t index, int out)
{
    if (!d || !d->filled || index >= (out ? d->n_out : d->n_in))
        return NULL;
    return &d->t[out ? d->n_in + index : index];
}

size_t aclmdlGetInputSizeByIndex(aclmdlDesc *d, size_t index)
{
    const nb_exeom_tensor *t = io(d, index, 0);
    return t ? t->bytes : 0;
}

size_t aclmdlGetOutputSizeByIndex(aclmdlDesc *d, size_t index)
{
    const nb_exeom_tensor *t = io(d, index, 1);
    return t ? t->bytes : 0;
}

static aclError dims_of(const aclmdlDesc *d, size_t index, int out, aclmdlIODims *dims)
{
    const nb_exeom_tensor *t = io(d, index, out);
    if (!t || !dims)
        return fail(ACL_ERROR_INVALID_PARAM, "aclmdlGet%sDims: %s", out ? "Output" : "Input",
                    !dims ? "dims is NULL" : "no such index (or aclmdlGetDesc not called)");
    memset(dims, 0, sizeof *dims);
    snprintf(dims->name, sizeof dims->name, "%s", d->names[(out ? d->n_in : 0) + index]);
    dims->dimCount = t->rank;
    for (int i = 0; i < t->rank; i++)
        dims->dims[i] = t->dims[i];
    return ACL_SUCCESS;
}

aclError aclmdlGetInputDims(const aclmdlDesc *d, size_t index, aclmdlIODims *dims)
{
    return dims_of(d, index, 0, dims);
}

aclError aclmdlGetOutputDims(const aclmdlDesc *d, size_t index, aclmdlIODims *dims)
{
    return dims_of(d, index, 1, dims);
}

aclDataType aclmdlGetInputDataType(const aclmdlDesc *d, size_t index)
{
    const nb_exeom_tensor *t = io(d, index, 0);
    return t ? (aclDataType)t->dtype : ACL_DT_UNDEFINED;
}

aclDataType aclmdlGetOutputDataType(const aclmdlDesc *d, size_t index)
{
    const nb_exeom_tensor *t = io(d, index, 1);
    return t ? (aclDataType)t->dtype : ACL_DT_UNDEFINED;
}

aclFormat aclmdlGetInputFormat(const aclmdlDesc *d, size_t index)
{
    const nb_exeom_tensor *t = io(d, index, 0);
    return t ? (aclFormat)t->format : ACL_FORMAT_UNDEFINED;
}

aclFormat aclmdlGetOutputFormat(const aclmdlDesc *d, size_t index)
{
    const nb_exeom_tensor *t = io(d, index, 1);
    return t ? (aclFormat)t->format : ACL_FORMAT_UNDEFINED;
}

const char *aclmdlGetInputNameByIndex(const aclmdlDesc *d, size_t index)
{
    return io(d, index, 0) ? d->names[index] : NULL;
}

const char *aclmdlGetOutputNameByIndex(const aclmdlDesc *d, size_t index)
{
    return io(d, index, 1) ? d->names[d->n_in + index] : NULL;
}

/* ---- datasets and buffers ---- */

aclmdlDataset *aclmdlCreateDataset(void) { return calloc(1, sizeof(aclmdlDataset)); }

aclError aclmdlDestroyDataset(const aclmdlDataset *ds)
{
    if (!ds)
        return fail(ACL_ERROR_INVALID_PARAM, "aclmdlDestroyDataset: NULL");
    free(ds->b);
    free((void *)ds);
    return ACL_SUCCESS;
}

aclError aclmdlAddDatasetBuffer(aclmdlDataset *ds, aclDataBuffer *b)
{
    if (!ds || !b)
        return fail(ACL_ERROR_INVALID_PARAM, "aclmdlAddDatasetBuffer: NULL dataset or buffer");
    if (ds->n == ds->cap) {
        size_t cap = ds->cap ? 2 * ds->cap : 4;
        aclDataBuffer **p = realloc(ds->b, cap * sizeof *p);
        if (!p)
            return fail(ACL_ERROR_BAD_ALLOC, "aclmdlAddDatasetBuffer: out of memory");
        ds->b = p;
        ds->cap = cap;
    }
    ds->b[ds->n++] = b;
    return ACL_SUCCESS;
}

size_t aclmdlGetDatasetNumBuffers(const aclmdlDataset *ds) { return ds ? ds->n : 0; }

aclDataBuffer *aclmdlGetDatasetBuffer(const aclmdlDataset *ds, size_t index)
{
    return ds && index < ds->n ? ds->b[index] : NULL;
}

aclDataBuffer *aclCreateDataBuffer(void *data, size_t size)
{
    aclDataBuffer *b = calloc(1, sizeof *b);
    if (b) {
        b->data = data;
        b->size = size;
    }
    return b;
}

aclError aclDestroyDataBuffer(const aclDataBuffer *b)
{
    if (!b)
        return fail(ACL_ERROR_INVALID_PARAM, "aclDestroyDataBuffer: NULL");
    free((void *)b);
    return ACL_SUCCESS;
}

aclError aclUpdateDataBuffer(aclDataBuffer *b, void *data, size_t size)
{
    if (!b)
        return fail(ACL_ERROR_INVALID_PARAM, "aclUpdateDataBuffer: NULL");
    b->data = data;
    b->size = size;
    return ACL_SUCCESS;
}

void *aclGetDataBufferAddr(const aclDataBuffer *b) { return b ? b->data : NULL; }
size_t aclGetDataBufferSizeV2(const aclDataBuffer *b) { return b ? b->size : 0; }

/* ---- execution ---- */

typedef struct dump_run {
    rt_model *m;
    char dir[2048];
    aclError err;
} dump_run;

static void dump_hook(void *user, const nb_sim_model *sim, int k, bool before)
{
    dump_run *d = user;
    if (d->err || !sim_dump_selects(&R.dump, d->m->name, d->m->dbg, k))
        return;
    /* one file per task, after it ran: its inputs are still in place then (a task's
       inputs and outputs are alive together, so they never share arena bytes) */
    if (before)
        return;
    bool ins = R.dump.mode != SIM_DUMP_OUTPUT;
    bool outs = R.dump.mode != SIM_DUMP_INPUT;
    char why[1200];
    if (sim_dump_task(&R.dump, d->dir, d->m->name, sim, d->m->dbg, k, ins, outs, why, sizeof why))
        d->err = fail(ACL_ERROR_WRITE_FILE, "dump of task %d: %s", k, why);
    else
        d->m->dump_files++;
}

aclError aclmdlExecute(uint32_t modelId, const aclmdlDataset *input, aclmdlDataset *output)
{
    NEED_INIT("aclmdlExecute");
    rt_model *m = find_model(modelId);
    if (!m)
        return fail(ACL_ERROR_INVALID_MODEL_ID, "aclmdlExecute: model id %u is not loaded", modelId);
    if (!input || !output)
        return fail(ACL_ERROR_INVALID_PARAM, "aclmdlExecute: NULL dataset");
    if (m->ctx != R.current)
        return fail(ACL_ERROR_INVALID_PARAM, "aclmdlExecute: model %u was loaded in another "
                    "context (load, execute and unload in one context)", modelId);
    const nb_exeom *x = nb_sim_exeom(m->sim);
    if (input->n != x->n_inputs)
        return fail(ACL_ERROR_MODEL_INPUT_NOT_MATCH, "aclmdlExecute: %zu input buffers, model %s "
                    "has %u inputs", input->n, m->name, x->n_inputs);
    if (output->n != x->n_outputs)
        return fail(ACL_ERROR_MODEL_OUTPUT_NOT_MATCH, "aclmdlExecute: %zu output buffers, model "
                    "%s has %u outputs", output->n, m->name, x->n_outputs);
    const void *ins[NB_EXEOM_NONE];
    void *outs[NB_EXEOM_NONE];
    if (x->n_inputs > NB_EXEOM_NONE || x->n_outputs > NB_EXEOM_NONE)
        return fail(ACL_ERROR_INTERNAL_ERROR, "aclmdlExecute: too many bindings");
    for (uint32_t i = 0; i < x->n_inputs; i++) {
        const aclDataBuffer *b = input->b[i];
        uint32_t need = x->t[nb_sim_input_tensor(m->sim, (int)i)].bytes;
        if (!b || !b->data || b->size != need)
            return fail(ACL_ERROR_MODEL_INPUT_NOT_MATCH, "aclmdlExecute: input %u: a buffer of "
                        "%zu bytes, the model takes %u", i, b ? b->size : 0, need);
        ins[i] = b->data;
    }
    int allocated[NB_EXEOM_MAX_OUT * 16] = {0};
    for (uint32_t i = 0; i < x->n_outputs; i++) {
        aclDataBuffer *b = output->b[i];
        uint32_t need = x->t[nb_sim_output_tensor(m->sim, (int)i)].bytes;
        if (b && !b->data && b->size == 0 && i < sizeof allocated / sizeof allocated[0]) {
            void *p = NULL;
            if (posix_memalign(&p, 32, need ? need : 1)) {
                ndrv(3, "malloc fail: output %u", i);
                return fail(ACL_ERROR_BAD_ALLOC, "aclmdlExecute: output %u", i);
            }
            memset(p, 0, need);
            b->data = p;
            b->size = need;
            allocated[i] = 1;
        }
        if (!b || !b->data || b->size != need)
            return fail(ACL_ERROR_MODEL_OUTPUT_NOT_MATCH, "aclmdlExecute: output %u: a buffer of "
                        "%zu bytes, the model gives %u", i, b ? b->size : 0, need);
        outs[i] = b->data;
    }
    dump_run d = {m, "", ACL_SUCCESS};
    char final_dir[2048] = "";
    bool dumping = m->dump && R.dump.enabled;
    bool selected = false;
    for (uint32_t k = 0; dumping && k < x->n_tasks && !selected; k++)
        selected = sim_dump_selects(&R.dump, m->name, m->dbg, (int)k);
    m->dump_dir[0] = 0;
    m->dump_files = 0;
    /* the dump goes to {final}.tmp.PID, published when the execution and every file of
       it succeeded, else removed: never a partial folder under the final name */
    if (selected && sim_dump_dir(&R.dump, m->name, modelId, m->iteration, d.dir, final_dir,
                                 sizeof d.dir))
        return fail(ACL_ERROR_WRITE_FILE, "dump: cannot make %s: %s", d.dir, strerror(errno));
    nb_status st = {0};
    nb_err e = nb_sim_execute(m->sim, ins, outs, selected ? dump_hook : NULL, &d, &st);
    m->iteration++;
    if (selected) {
        char why[600] = "";
        bool ok = !e && d.err == ACL_SUCCESS;
        if (sim_dump_finish(&R.dump, d.dir, final_dir, ok, why, sizeof why) && ok)
            d.err = fail(ACL_ERROR_WRITE_FILE, "dump: %s", why);
        if (ok && d.err == ACL_SUCCESS)
            snprintf(m->dump_dir, sizeof m->dump_dir, "%s", final_dir);
        else
            m->dump_files = 0;
    }
    if (e)
        return fail(e == NB_ERR_NOMEM  ? ACL_ERROR_BAD_ALLOC
                    : e == NB_ERR_DATA ? ACL_ERROR_INVALID_PARAM /* the input data's fault */
                                       : ACL_ERROR_INTERNAL_ERROR,
                    "aclmdlExecute: %s", st.msg);
    ndrv(0, "model %u executed: %llu cycles", modelId,
         (unsigned long long)nb_sim_total_cycles(m->sim));
    return d.err;
}

aclError aclmdlExecuteV2(uint32_t modelId, const aclmdlDataset *input, aclmdlDataset *output,
                         aclrtStream stream, const aclmdlExecConfigHandle *handle)
{
    (void)handle;
    NEED_INIT("aclmdlExecuteV2");
    if (stream) {
        rt_ctx *c = find_ctx(stream);
        if (!c || !c->has_stream)
            return fail(ACL_ERROR_INVALID_RESOURCE_HANDLE, "aclmdlExecuteV2: not a stream");
        rt_model *m = find_model(modelId);
        if (m && m->ctx != c)
            return fail(ACL_ERROR_INVALID_RESOURCE_HANDLE, "aclmdlExecuteV2: the stream is "
                        "another context's");
    }
    return aclmdlExecute(modelId, input, output);
}

/* ---- dump API ---- */
static int dump_inited;

aclError aclmdlInitDump(void)
{
    NEED_INIT("aclmdlInitDump");
    if (dump_inited)
        return fail(ACL_ERROR_DUMP_ALREADY_RUN, "aclmdlInitDump: already initialized");
    dump_inited = 1;
    return ACL_SUCCESS;
}

aclError aclmdlSetDump(const char *dumpCfgPath)
{
    NEED_INIT("aclmdlSetDump");
    if (!dump_inited)
        return fail(ACL_ERROR_DUMP_NOT_RUN, "aclmdlSetDump: aclmdlInitDump was not called");
    if (!dumpCfgPath)
        return fail(ACL_ERROR_INVALID_PARAM, "aclmdlSetDump: NULL path");
    return read_dump_json(dumpCfgPath, 1);
}

aclError aclmdlFinalizeDump(void)
{
    NEED_INIT("aclmdlFinalizeDump");
    if (!dump_inited)
        return fail(ACL_ERROR_DUMP_NOT_RUN, "aclmdlFinalizeDump: aclmdlInitDump was not called");
    dump_inited = 0;
    sim_dump_cfg_free(&R.dump);
    return ACL_SUCCESS;
}

/* ---- half precision ---- */
aclFloat16 aclFloatToFloat16(float value) { return nb_float_to_half(value); }
float aclFloat16ToFloat(aclFloat16 value) { return nb_half_to_float(value); }

size_t aclDataTypeSize(aclDataType t)
{
    switch (t) {
    case ACL_FLOAT: case ACL_INT32: case ACL_UINT32: return 4;
    case ACL_FLOAT16: case ACL_INT16: case ACL_UINT16: case ACL_BF16: return 2;
    case ACL_INT8: case ACL_UINT8: case ACL_BOOL: return 1;
    case ACL_INT64: case ACL_UINT64: case ACL_DOUBLE: return 8;
    default: return 0;
    }
}

/* nanobench's hook for the CLI and tests: the simulator model behind a model id. */
const nb_sim_model *nb_acl_sim_model(uint32_t modelId)
{
    rt_model *m = find_model(modelId);
    return m ? m->sim : NULL;
}

void nb_acl_task_info(uint32_t modelId, int k, const char **name, const char **op_type)
{
    static char buf[32];
    rt_model *m = find_model(modelId);
    const char *n = NULL, *o = NULL;
    if (m && !sim_dbg_task_names(m->dbg, k, &n, &o)) {
        *name = n;
        *op_type = o;
        return;
    }
    snprintf(buf, sizeof buf, "task%d", k);
    *name = buf;
    *op_type = m && k >= 0 && (uint32_t)k < nb_sim_exeom(m->sim)->n_tasks
                   ? nb_exeom_kernel_name(nb_sim_exeom(m->sim)->k[k].kernel) : "?";
}

const char *nb_acl_dbg_note(uint32_t modelId)
{
    rt_model *m = find_model(modelId);
    return m ? m->dbg_note : "";
}

const char *nb_acl_last_dump(uint32_t modelId, uint32_t *files)
{
    rt_model *m = find_model(modelId);
    *files = m ? m->dump_files : 0;
    return m ? m->dump_dir : "";
}

const char *nb_acl_dump_root(void)
{
    return R.dump.enabled && R.dump.path ? R.dump.path : "";
}

const char *nb_acl_dump_note(uint32_t modelId)
{
    rt_model *m = find_model(modelId);
    return m ? m->dump_note : "";
}

const char *nb_acl_tensor_onnx(uint32_t modelId, int t)
{
    rt_model *m = find_model(modelId);
    return m ? sim_dbg_tensor_onnx(m->dbg, t) : "";
}

void nb_acl_tensor_scale(uint32_t modelId, int t, double *scale, double *offset)
{
    rt_model *m = find_model(modelId);
    sim_dbg_tensor_scale(m ? m->dbg : NULL, t, scale, offset);
}

int nb_acl_task_covers(uint32_t modelId, int k, int i, const char **node)
{
    rt_model *m = find_model(modelId);
    *node = "";
    return m ? sim_dbg_task_covers(m->dbg, k, i, node) : 0;
}

int nb_acl_execute_hooked(uint32_t modelId, const void *const *inputs, void *const *outputs,
                          nb_sim_task_hook hook, void *user)
{
    NEED_INIT("nb_acl_execute_hooked");
    rt_model *m = find_model(modelId);
    if (!m)
        return fail(ACL_ERROR_INVALID_MODEL_ID, "model id %u is not loaded", modelId);
    nb_status st = {0};
    if (nb_sim_execute(m->sim, inputs, outputs, hook, user, &st))
        return fail(ACL_ERROR_BAD_ALLOC, "%s", st.msg);
    return ACL_SUCCESS;
}
