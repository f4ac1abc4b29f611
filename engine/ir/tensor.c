/* nanobench: tensors, element types, half precision, file helpers (include/nb/tensor.h). */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, MAP_POPULATE */
#include "nb/tensor.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

size_t nb_dtype_size(nb_dtype t)
{
    switch (t) {
    case NB_FLOAT: case NB_INT32: case NB_UINT32: return 4;
    case NB_UINT8: case NB_INT8: case NB_BOOL: return 1;
    case NB_UINT16: case NB_INT16: case NB_FLOAT16: return 2;
    case NB_INT64: case NB_UINT64: return 8;
    default: return 0;
    }
}

const char *nb_dtype_name(nb_dtype t)
{
    static const char *names[] = {"UNDEFINED", "FLOAT", "UINT8", "INT8", "UINT16", "INT16",
                                  "INT32", "INT64", "STRING", "BOOL", "FLOAT16", "DOUBLE",
                                  "UINT32", "UINT64", "COMPLEX64", "COMPLEX128", "BFLOAT16"};
    if ((int)t >= 0 && (int)t < (int)(sizeof names / sizeof names[0]))
        return names[t];
    return "?";
}

bool nb_dtype_supported(nb_dtype t) { return nb_dtype_size(t) != 0; }
bool nb_dtype_is_float(nb_dtype t) { return t == NB_FLOAT || t == NB_FLOAT16; }
bool nb_dtype_is_signed(nb_dtype t)
{
    return t == NB_FLOAT || t == NB_FLOAT16 || t == NB_INT8 || t == NB_INT16 ||
           t == NB_INT32 || t == NB_INT64;
}

nb_err nb_shape_numel(int rank, const int64_t *dims, size_t elem_size, int64_t *numel,
                      nb_status *st)
{
    if (rank < 0 || rank > NB_MAX_RANK)
        return nb_fail(st, NB_ERR_SHAPE, "rank %d is outside 0..%d", rank, NB_MAX_RANK);
    /* the product of the non-zero dims is checked too: a tensor with a 0 dim holds nothing,
       but strides and loops over its other dims must not overflow either */
    int64_t n = 1, nz = 1;
    bool empty = false;
    for (int i = 0; i < rank; i++) {
        if (dims[i] < 0)
            return nb_fail(st, NB_ERR_SHAPE, "dim %d is negative (%" PRId64 ")", i, dims[i]);
        if (dims[i] == 0) {
            empty = true;
            continue;
        }
        if (nz > INT64_MAX / dims[i])
            return nb_fail(st, NB_ERR_SHAPE, "shape overflows 64 bits at dim %d (%" PRId64 ")",
                           i, dims[i]);
        nz *= dims[i];
    }
    n = empty ? 0 : nz;
    if (elem_size && nz > NB_MAX_TENSOR_BYTES / (int64_t)elem_size) {
        char b[160];
        return nb_fail(st, NB_ERR_SHAPE, "tensor of shape %s is too large (limit %" PRId64
                       " bytes)", nb_shape_str(rank, dims, ',', b, sizeof b),
                       (int64_t)NB_MAX_TENSOR_BYTES);
    }
    *numel = n;
    return NB_OK;
}

/* Bytes held by live tensor buffers of this process, against nb_mem_budget(). */
static _Atomic int64_t live_bytes;
static const char *budget_source = "3/4 of RAM";

int64_t nb_mem_budget(void)
{
    static int64_t budget;
    if (!budget) {
        long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
        int64_t b = NB_MAX_TENSOR_BYTES;
        if (pages > 0 && psz > 0 && (int64_t)pages / 4 * 3 <= INT64_MAX / psz &&
            (int64_t)pages / 4 * 3 * psz < b)
            b = (int64_t)pages / 4 * 3 * psz;
        budget_source = b == NB_MAX_TENSOR_BYTES ? "the 16 GiB limit" : "3/4 of RAM";
        const char *env = getenv("NANOBENCH_MEM_BUDGET_MB");
        char *end;
        long long mb = env ? strtoll(env, &end, 10) : 0;
        if (env && *end == 0 && mb > 0 && mb < b / 1048576) {
            b = (int64_t)mb * 1048576;
            budget_source = "NANOBENCH_MEM_BUDGET_MB";
        }
        budget = b;
    }
    return budget;
}

int64_t nb_mem_live(void) { return live_bytes; }

static nb_err tensor_alloc(nb_dtype dtype, int rank, const int64_t *dims, bool zero,
                           void *adopt, nb_tensor **out, nb_status *st)
{
    size_t es = nb_dtype_size(dtype);
    if (!es)
        return nb_fail(st, NB_ERR_UNSUPPORTED, "element type %s is not supported",
                       nb_dtype_name(dtype));
    int64_t numel;
    nb_err e = nb_shape_numel(rank, dims, es, &numel, st);
    if (e)
        return e;
    size_t nbytes = (size_t)numel * es;
    int64_t live = live_bytes, budget = nb_mem_budget();
    if ((int64_t)nbytes > budget - live) {
        char b[160];
        return nb_fail(st, NB_ERR_SHAPE, "a tensor of shape %s needs %.1f MiB with %.1f MiB "
                       "already in use; the budget is %.1f MiB (%s)",
                       nb_shape_str(rank, dims, ',', b, sizeof b), (double)nbytes / 1048576.0,
                       (double)live / 1048576.0, (double)budget / 1048576.0, budget_source);
    }
    nb_tensor *t = calloc(1, sizeof *t);
    nb_buf *b = calloc(1, sizeof *b);
    size_t alloc = (nbytes + 63) & ~(size_t)63;
    void *data = adopt ? adopt : aligned_alloc(64, alloc ? alloc : 64);
    if (!t || !b || !data) {
        free(t);
        free(b);
        if (!adopt)
            free(data);
        return nb_fail(st, NB_ERR_NOMEM, "cannot allocate %zu bytes", nbytes);
    }
    if (zero)
        memset(data, 0, alloc ? alloc : 64);
    b->refs = 1;
    b->nbytes = nbytes;
    live_bytes += (int64_t)nbytes;
    b->data = data;
    t->dtype = dtype;
    t->rank = rank;
    for (int i = 0; i < rank; i++)
        t->dims[i] = dims[i];
    t->numel = numel;
    t->nbytes = nbytes;
    t->data = data;
    t->buf = b;
    *out = t;
    return NB_OK;
}

nb_err nb_tensor_new(nb_dtype dtype, int rank, const int64_t *dims, nb_tensor **out,
                     nb_status *st)
{
    return tensor_alloc(dtype, rank, dims, true, NULL, out, st);
}

nb_err nb_tensor_new_uninit(nb_dtype dtype, int rank, const int64_t *dims, nb_tensor **out,
                            nb_status *st)
{
    return tensor_alloc(dtype, rank, dims, false, NULL, out, st);
}

nb_err nb_tensor_adopt(nb_dtype dtype, int rank, const int64_t *dims, void *data,
                       nb_tensor **out, nb_status *st)
{
    return tensor_alloc(dtype, rank, dims, false, data, out, st);
}

/* ---- guarded file mappings: a SIGBUS inside one maps zero pages over the rest of it ---- */

#define NB_FILEMAPS 64
static nb_filemap *_Atomic filemaps[NB_FILEMAPS];
static struct sigaction sigbus_old;
static pthread_mutex_t filemaps_lock = PTHREAD_MUTEX_INITIALIZER;

static void on_sigbus(int sig, siginfo_t *si, void *ctx)
{
    uintptr_t a = (uintptr_t)si->si_addr;
    for (int i = 0; i < NB_FILEMAPS; i++) {
        nb_filemap *m = atomic_load(&filemaps[i]);
        uintptr_t lo = m ? (uintptr_t)m->addr : 0, hi = lo + (m ? m->len : 0);
        if (m && a >= lo && a < hi) {
            /* the file shrank under the mapping: zero pages from the faulting one to the
               end (the read that faulted is made again and reads 0) */
            uintptr_t pg = a & ~(uintptr_t)(sysconf(_SC_PAGESIZE) - 1);
            if (mmap((void *)pg, hi - pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
                     -1, 0) == MAP_FAILED)
                break;
            m->changed = 1;
            return;
        }
    }
    /* not one of ours: the handler before (or the default action) at the fault's return */
    sigaction(SIGBUS, &sigbus_old, NULL);
    (void)sig;
    (void)ctx;
}

/* Ours in front of whatever handles SIGBUS now (kept, for faults outside our mappings):
 * at every mapping, since a later sigaction (a test harness's) may have replaced it. */
static void sigbus_install(void)
{
    struct sigaction cur;
    if (sigaction(SIGBUS, NULL, &cur) == 0 && (cur.sa_flags & SA_SIGINFO) &&
        cur.sa_sigaction == on_sigbus)
        return;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigbus;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGBUS, &sa, &sigbus_old);
}

nb_filemap *nb_filemap_open(int fd, size_t len, bool populate)
{
    nb_filemap *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    void *p = mmap(NULL, len, PROT_READ, MAP_PRIVATE | (populate ? MAP_POPULATE : 0), fd, 0);
    if (p == MAP_FAILED) {
        int err = errno;
        free(m);
        errno = err;
        return NULL;
    }
    m->refs = 1;
    m->addr = p;
    m->len = len;
    pthread_mutex_lock(&filemaps_lock);
    sigbus_install();
    for (int i = 0; i < NB_FILEMAPS; i++)
        if (!atomic_load(&filemaps[i])) { /* more than 64 at once: the later ones unguarded */
            atomic_store(&filemaps[i], m);
            break;
        }
    pthread_mutex_unlock(&filemaps_lock);
    return m;
}

void nb_filemap_unref(nb_filemap *m)
{
    if (m && --m->refs == 0) {
        pthread_mutex_lock(&filemaps_lock);
        for (int i = 0; i < NB_FILEMAPS; i++)
            if (atomic_load(&filemaps[i]) == m)
                atomic_store(&filemaps[i], NULL);
        pthread_mutex_unlock(&filemaps_lock);
        if (m->len)
            munmap(m->addr, m->len);
        free(m);
    }
}

nb_err nb_tensor_new_deferred(nb_dtype dtype, int rank, const int64_t *dims, const void *src,
                              nb_filemap *map, nb_tensor **out, nb_status *st)
{
    /* a one-byte placeholder is adopted, then dropped: the header, the budget check and the
       live count are tensor_alloc's */
    void *ph = malloc(1);
    if (!ph)
        return nb_fail(st, NB_ERR_NOMEM, "out of memory");
    nb_err e = tensor_alloc(dtype, rank, dims, false, ph, out, st);
    if (e) {
        free(ph);
        return e;
    }
    free(ph);
    (*out)->data = NULL;
    (*out)->buf->data = NULL;
    (*out)->buf->src = src;
    (*out)->buf->map = map;
    if (map)
        map->refs++;
    return NB_OK;
}

bool nb_tensor_is_deferred(const nb_tensor *t)
{
    return t && !t->data && t->buf && t->buf->src;
}

nb_err nb_tensor_materialize(nb_tensor *t, nb_status *st)
{
    if (!t || t->data || !t->buf)
        return NB_OK;
    nb_buf *b = t->buf;
    if (!b->data) {
        if (!b->src)
            return NB_OK;
        size_t alloc = (b->nbytes + 63) & ~(size_t)63;
        void *d = aligned_alloc(64, alloc ? alloc : 64);
        if (!d)
            return nb_fail(st, NB_ERR_NOMEM, "cannot allocate %zu bytes", b->nbytes);
        if (b->nbytes)
            memcpy(d, b->src, b->nbytes);
        b->data = d;
        b->src = NULL;
        nb_filemap_unref(b->map);
        b->map = NULL;
    }
    t->data = b->data;
    return NB_OK;
}

const void *nb_tensor_bytes(const nb_tensor *t)
{
    if (t->data)
        return t->data;
    if (t->buf && t->buf->data)
        return t->buf->data;
    return t->buf ? t->buf->src : NULL;
}

nb_err nb_tensor_view(const nb_tensor *src, int rank, const int64_t *dims, nb_tensor **out,
                      nb_status *st)
{
    int64_t numel;
    nb_err e = nb_shape_numel(rank, dims, nb_dtype_size(src->dtype), &numel, st);
    if (e)
        return e;
    if (numel != src->numel)
        return nb_fail(st, NB_ERR_SHAPE, "view of %" PRId64 " elements on %" PRId64, numel,
                       src->numel);
    nb_tensor *t = malloc(sizeof *t);
    if (!t)
        return nb_fail(st, NB_ERR_NOMEM, "out of memory");
    *t = *src;
    t->rank = rank;
    for (int i = 0; i < rank; i++)
        t->dims[i] = dims[i];
    if (t->buf)
        t->buf->refs++;
    *out = t;
    return NB_OK;
}

nb_err nb_tensor_clone(const nb_tensor *src, nb_tensor **out, nb_status *st)
{
    nb_err e = tensor_alloc(src->dtype, src->rank, src->dims, false, NULL, out, st);
    if (e)
        return e;
    if (src->nbytes)
        memcpy((*out)->data, nb_tensor_bytes(src), src->nbytes);
    return NB_OK;
}

nb_tensor *nb_tensor_ref(const nb_tensor *t)
{
    nb_tensor *r = malloc(sizeof *r);
    if (!r)
        return NULL;
    *r = *t;
    if (r->buf)
        r->buf->refs++;
    return r;
}

void nb_tensor_free(nb_tensor *t)
{
    if (!t)
        return;
    if (t->buf && --t->buf->refs == 0) {
        live_bytes -= (int64_t)t->buf->nbytes;
        free(t->buf->data);
        nb_filemap_unref(t->buf->map);
        free(t->buf);
    }
    free(t);
}

char *nb_shape_str(int rank, const int64_t *dims, char sep, char *buf, size_t len)
{
    size_t o = 0;
    if (len == 0)
        return buf;
    buf[0] = 0;
    if (sep == ',' && o + 1 < len)
        buf[o++] = '[';
    for (int i = 0; i < rank && o + 1 < len; i++) {
        int w = i ? snprintf(buf + o, len - o, "%c%" PRId64, sep, dims[i])
                  : snprintf(buf + o, len - o, "%" PRId64, dims[i]);
        if (w < 0)
            break;
        o += (size_t)w;
        if (o >= len) {
            o = len - 1;
            break;
        }
    }
    if (sep == ',' && o + 1 < len)
        buf[o++] = ']';
    if (rank == 0 && sep != ',' && o + 1 < len)
        buf[o++] = '1';
    buf[o < len ? o : len - 1] = 0;
    return buf;
}

/* Element i of a deferred tensor, copied out of the file mapping (unaligned) into a
 * one-element tensor the typed readers below take. */
static const nb_tensor *deferred_elem(const nb_tensor *t, int64_t i, nb_tensor *one,
                                      uint64_t *cell)
{
    size_t es = nb_dtype_size(t->dtype);
    *one = *t;
    *cell = 0;
    memcpy(cell, (const char *)nb_tensor_bytes(t) + (size_t)i * es, es);
    one->data = cell;
    return one;
}

double nb_tensor_get_f64(const nb_tensor *t, int64_t i)
{
    nb_tensor one;
    uint64_t cell;
    if (!t->data && t->buf && (t->buf->src || t->buf->data)) {
        t = deferred_elem(t, i, &one, &cell);
        i = 0;
    }
    switch (t->dtype) {
    case NB_FLOAT: return ((const float *)t->data)[i];
    case NB_FLOAT16: return nb_half_to_float(((const uint16_t *)t->data)[i]);
    case NB_UINT8: return ((const uint8_t *)t->data)[i];
    case NB_INT8: return ((const int8_t *)t->data)[i];
    case NB_UINT16: return ((const uint16_t *)t->data)[i];
    case NB_INT16: return ((const int16_t *)t->data)[i];
    case NB_INT32: return ((const int32_t *)t->data)[i];
    case NB_INT64: return (double)((const int64_t *)t->data)[i];
    case NB_UINT32: return ((const uint32_t *)t->data)[i];
    case NB_UINT64: return (double)((const uint64_t *)t->data)[i];
    case NB_BOOL: return ((const uint8_t *)t->data)[i] ? 1.0 : 0.0;
    default: return 0.0;
    }
}

void nb_tensor_set_f64(nb_tensor *t, int64_t i, double v)
{
    switch (t->dtype) {
    case NB_FLOAT: ((float *)t->data)[i] = (float)v; break;
    case NB_FLOAT16: ((uint16_t *)t->data)[i] = nb_float_to_half((float)v); break;
    case NB_DOUBLE: ((double *)t->data)[i] = v; break;
    case NB_INT8: ((int8_t *)t->data)[i] = (int8_t)v; break;
    case NB_UINT8: ((uint8_t *)t->data)[i] = (uint8_t)v; break;
    case NB_BOOL: ((uint8_t *)t->data)[i] = v != 0; break;
    case NB_INT16: ((int16_t *)t->data)[i] = (int16_t)v; break;
    case NB_UINT16: ((uint16_t *)t->data)[i] = (uint16_t)v; break;
    case NB_INT32: ((int32_t *)t->data)[i] = (int32_t)v; break;
    case NB_UINT32: ((uint32_t *)t->data)[i] = (uint32_t)v; break;
    case NB_INT64: ((int64_t *)t->data)[i] = (int64_t)v; break;
    case NB_UINT64: ((uint64_t *)t->data)[i] = (uint64_t)v; break;
    default: break;
    }
}

int64_t nb_tensor_get_i64(const nb_tensor *t, int64_t i)
{
    nb_tensor one;
    uint64_t cell;
    if (!t->data && t->buf && (t->buf->src || t->buf->data)) {
        t = deferred_elem(t, i, &one, &cell);
        i = 0;
    }
    switch (t->dtype) {
    case NB_INT64: return ((const int64_t *)t->data)[i];
    case NB_INT32: return ((const int32_t *)t->data)[i];
    case NB_UINT64: return (int64_t)((const uint64_t *)t->data)[i];
    case NB_UINT32: return ((const uint32_t *)t->data)[i];
    case NB_UINT8: return ((const uint8_t *)t->data)[i];
    case NB_INT8: return ((const int8_t *)t->data)[i];
    case NB_UINT16: return ((const uint16_t *)t->data)[i];
    case NB_INT16: return ((const int16_t *)t->data)[i];
    case NB_BOOL: return ((const uint8_t *)t->data)[i] ? 1 : 0;
    case NB_FLOAT: return (int64_t)((const float *)t->data)[i];
    case NB_FLOAT16: return (int64_t)nb_half_to_float(((const uint16_t *)t->data)[i]);
    default: return 0;
    }
}

uint32_t nb_mulberry32(uint32_t *a)
{
    *a += 0x6D2B79F5u;
    uint32_t t = *a;
    t = (t ^ (t >> 15)) * (t | 1u);
    t ^= t + (t ^ (t >> 7)) * (t | 61u);
    return t ^ (t >> 14);
}

void nb_tensor_fill_uniform(nb_tensor *t, uint32_t seed, double lo, double hi)
{
    for (int64_t i = 0; i < t->numel; i++) {
        double v = lo + (hi - lo) * (nb_mulberry32(&seed) / 4294967296.0);
        switch (t->dtype) {
        case NB_FLOAT: ((float *)t->data)[i] = (float)v; break;
        case NB_FLOAT16: ((uint16_t *)t->data)[i] = nb_float_to_half((float)v); break;
        case NB_INT64: ((int64_t *)t->data)[i] = (int64_t)v; break;
        case NB_INT32: ((int32_t *)t->data)[i] = (int32_t)v; break;
        case NB_INT8: ((int8_t *)t->data)[i] = (int8_t)v; break;
        case NB_UINT8: ((uint8_t *)t->data)[i] = (uint8_t)(v < 0 ? 0 : v); break;
        case NB_BOOL: ((uint8_t *)t->data)[i] = v >= (lo + hi) / 2; break;
        default: break;
        }
    }
}

/* ---- half precision: the compiler's _Float16 (IEEE binary16, round to nearest even) ---- */
#if defined(__FLT16_MAX__) && !defined(__clang__)
float nb_half_to_float(uint16_t h)
{
    _Float16 f;
    memcpy(&f, &h, 2);
    return (float)f;
}

uint16_t nb_float_to_half(float f)
{
    _Float16 h = (_Float16)f;
    uint16_t r;
    memcpy(&r, &h, 2);
    return r;
}
#else
/* the same conversions on the bits, for compilers without _Float16 on x86 (clang 14, used
   by the fuzzing build) */
float nb_half_to_float(uint16_t h)
{
    int sign = h >> 15, exp = (h >> 10) & 31, man = h & 1023;
    float v = exp == 0 ? ldexpf((float)man, -24)
              : exp == 31 ? (man ? NAN : INFINITY) : ldexpf((float)(man | 1024), exp - 25);
    return sign ? -v : v;
}

uint16_t nb_float_to_half(float f) { return nb_f32_to_f16_bits(f, 0); }
#endif

float nb_bf16_to_float(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

uint16_t nb_float_to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((u >> 16) | 0x40); /* quiet NaN */
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

/* ---- files ---- */
FILE *nb_fopen_regular(const char *path, struct stat *sb)
{
    /* O_NONBLOCK: opening a FIFO for reading must not wait for a writer */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    if (fstat(fd, sb) != 0 || !S_ISREG(sb->st_mode)) {
        close(fd);
        errno = EINVAL;
        return NULL;
    }
    /* O_NONBLOCK stays: it does not change reads of a regular file (POSIX), and clearing it
       cost two system calls per file (a calibration opens one per batch and input) */
    FILE *f = fdopen(fd, "rb");
    if (!f)
        close(fd);
    return f;
}

nb_err nb_read_file(const char *path, uint8_t **data, size_t *len, nb_status *st)
{
    struct stat sb;
    FILE *f = nb_fopen_regular(path, &sb);
    if (!f)
        return nb_fail(st, NB_ERR_IO, "%s: cannot open: %s", path,
                       errno == EINVAL ? "not a regular file" : strerror(errno));
    size_t n = (size_t)sb.st_size;
    uint8_t *buf = malloc(n + 1);
    if (!buf) {
        fclose(f);
        return nb_fail(st, NB_ERR_NOMEM, "%s: cannot allocate %zu bytes", path, n);
    }
    size_t got = n ? fread(buf, 1, n, f) : 0;
    int err = ferror(f);
    fclose(f);
    if (got != n || err) {
        free(buf);
        return nb_fail(st, NB_ERR_IO, "%s: read failed", path);
    }
    buf[n] = 0;
    *data = buf;
    *len = n;
    return NB_OK;
}

int nb_mkdir_p(const char *dir)
{
    char buf[4096];
    if (snprintf(buf, sizeof buf, "%s", dir) >= (int)sizeof buf) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = 0;
        if (mkdir(buf, 0777) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    if (mkdir(buf, 0777) != 0 && errno != EEXIST)
        return -1;
    struct stat sb;
    if (stat(buf, &sb) != 0)
        return -1;
    if (!S_ISDIR(sb.st_mode)) {
        errno = ENOTDIR;
        return -1;
    }
    return 0;
}

nb_err nb_write_file_atomic(const char *path, const void *data, size_t len, nb_status *st)
{
    size_t pl = strlen(path) + 32;
    char *tmp = malloc(pl);
    if (!tmp)
        return nb_fail(st, NB_ERR_NOMEM, "out of memory");
    snprintf(tmp, pl, "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        nb_err e = nb_fail(st, NB_ERR_IO, "%s: cannot create: %s", path, strerror(errno));
        free(tmp);
        return e;
    }
    size_t put = len ? fwrite(data, 1, len, f) : 0;
    int bad = (put != len) | (fflush(f) != 0) | ferror(f);
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, path) != 0) {
        nb_err e = nb_fail(st, NB_ERR_IO, "%s: write failed: %s", path, strerror(errno));
        remove(tmp);
        free(tmp);
        return e;
    }
    free(tmp);
    return NB_OK;
}

/* ---- .npy ---- */
static const struct {
    const char *descr;
    nb_dtype dtype;
} npy_types[] = {
    {"<f4", NB_FLOAT}, {"<f2", NB_FLOAT16}, {"<i8", NB_INT64}, {"<i4", NB_INT32},
    {"<i2", NB_INT16}, {"|i1", NB_INT8},    {"<u8", NB_UINT64}, {"<u4", NB_UINT32},
    {"<u2", NB_UINT16}, {"|u1", NB_UINT8},  {"|b1", NB_BOOL},  {"<b1", NB_BOOL},
    {"<i1", NB_INT8},  {"<u1", NB_UINT8},
};

static const char *npy_descr(nb_dtype t)
{
    for (size_t i = 0; i < sizeof npy_types / sizeof npy_types[0]; i++)
        if (npy_types[i].dtype == t)
            return npy_types[i].descr;
    return NULL;
}

/* Finds 'key': in the header dict and returns a pointer just after the colon. */
static const char *npy_key(const char *hdr, const char *key)
{
    char pat[32];
    snprintf(pat, sizeof pat, "'%s'", key);
    const char *p = strstr(hdr, pat);
    if (!p || strstr(p + 1, pat)) /* absent, or given twice */
        return NULL;
    p += strlen(pat);
    while (*p == ' ')
        p++;
    if (*p != ':')
        return NULL;
    p++;
    while (*p == ' ')
        p++;
    return p;
}

/* The .npy in buf (len bytes, owned: freed here) into *out. */
static nb_err npy_from_buf(uint8_t *buf, size_t len, const char *path, nb_tensor **out,
                           nb_status *st)
{
    nb_err e = NB_ERR_FORMAT;
    const char *why = "not a .npy file (bad magic)";
    char *hdr = NULL;
    nb_tensor *t = NULL;
    if (len < 10 || memcmp(buf, "\x93NUMPY", 6) != 0)
        goto fail;
    int major = buf[6];
    size_t hlen, off;
    if (major == 1) {
        hlen = buf[8] | (size_t)buf[9] << 8;
        off = 10;
    } else if (major == 2 || major == 3) {
        if (len < 12)
            goto fail;
        hlen = buf[8] | (size_t)buf[9] << 8 | (size_t)buf[10] << 16 | (size_t)buf[11] << 24;
        off = 12;
    } else {
        why = "unknown .npy version";
        goto fail;
    }
    why = "truncated header";
    if (hlen > len - off)
        goto fail;
    hdr = malloc(hlen + 1);
    if (!hdr) {
        free(buf);
        return nb_fail(st, NB_ERR_NOMEM, "out of memory");
    }
    memcpy(hdr, buf + off, hlen);
    hdr[hlen] = 0;
    off += hlen;
    why = "header has no 'descr' (or has it twice)";
    const char *p = npy_key(hdr, "descr");
    if (!p || (*p != '\'' && *p != '"'))
        goto fail;
    char descr[16] = {0};
    size_t k = 0;
    for (p++; *p && *p != '\'' && *p != '"' && k < sizeof descr - 1; p++)
        descr[k++] = *p;
    nb_dtype dt = NB_UNDEFINED;
    for (size_t i = 0; i < sizeof npy_types / sizeof npy_types[0]; i++)
        if (!strcmp(npy_types[i].descr, descr))
            dt = npy_types[i].dtype;
    if (dt == NB_UNDEFINED) {
        free(hdr);
        free(buf);
        return nb_fail(st, NB_ERR_UNSUPPORTED, "%s: .npy dtype '%s' is not supported%s", path,
                       descr, !strcmp(descr, "<f8") ? " [numpy's default float64: save it with "
                       ".astype(numpy.float32)]" : "");
    }
    why = "header has no 'fortran_order' (or has it twice)";
    p = npy_key(hdr, "fortran_order");
    if (!p)
        goto fail;
    why = "fortran_order must be False (nanobench reads C-order arrays)";
    if (!strncmp(p, "True", 4))
        why = "fortran_order arrays are not supported (save with C order)";
    if (strncmp(p, "False", 5) != 0 || (p[5] != ',' && p[5] != ' ' && p[5] != '}'))
        goto fail;
    why = "header has no 'shape' (or has it twice)";
    p = npy_key(hdr, "shape");
    if (!p || *p != '(')
        goto fail;
    int64_t dims[NB_MAX_RANK];
    int rank = 0;
    p++;
    why = "bad shape in header";
    for (;;) {
        while (*p == ' ' || *p == ',')
            p++;
        if (*p == ')')
            break;
        if (*p < '0' || *p > '9')
            goto fail;
        if (rank == NB_MAX_RANK) {
            why = "rank above 8";
            goto fail;
        }
        char *end;
        errno = 0;
        long long v = strtoll(p, &end, 10);
        if (errno || end == p)
            goto fail;
        dims[rank++] = v;
        p = end;
    }
    /* the data the header promises must be in the file before anything is allocated for
       it (a header claiming gigabytes over a short file is refused, not allocated) */
    uint64_t need = nb_dtype_size(dt);
    for (int i = 0; i < rank; i++)
        if (dims[i] == 0)
            need = 0;
    for (int i = 0; i < rank && need; i++) {
        if (need > (uint64_t)(len - off) / (uint64_t)dims[i]) {
            free(hdr);
            free(buf);
            return nb_fail(st, NB_ERR_FORMAT, "%s: .npy data is %zu bytes, shape needs more",
                           path, len - off);
        }
        need *= (uint64_t)dims[i];
    }
    if (need != len - off) { /* short, or trailing bytes: not what the header says */
        free(hdr);
        free(buf);
        return nb_fail(st, NB_ERR_FORMAT, "%s: .npy data is %zu bytes, shape needs %llu", path,
                       len - off, (unsigned long long)need);
    }
    e = nb_tensor_new_uninit(dt, rank, dims, &t, st);
    if (e) {
        nb_prefix(st, "%s", path);
        free(hdr);
        free(buf);
        return e;
    }
    if (len - off != t->nbytes) { /* short, or trailing bytes: not what the header says */
        e = nb_fail(st, NB_ERR_FORMAT, "%s: .npy data is %zu bytes, shape needs %zu", path,
                    len - off, t->nbytes);
        nb_tensor_free(t);
        free(hdr);
        free(buf);
        return e;
    }
    memcpy(t->data, buf + off, t->nbytes);
    if (dt == NB_BOOL)
        for (int64_t i = 0; i < t->numel; i++)
            ((uint8_t *)t->data)[i] = ((uint8_t *)t->data)[i] != 0;
    free(hdr);
    free(buf);
    *out = t;
    return NB_OK;
fail:
    free(hdr);
    free(buf);
    return nb_fail(st, e, "%s: %s", path, why);
}

nb_err nb_npy_read(const char *path, nb_tensor **out, nb_status *st)
{
    uint8_t *buf;
    size_t len;
    nb_err e = nb_read_file(path, &buf, &len, st);
    if (e)
        return e;
    return npy_from_buf(buf, len, path, out, st);
}

nb_err nb_npy_parse(const uint8_t *data, size_t len, const char *path, nb_tensor **out,
                    nb_status *st)
{
    uint8_t *buf = malloc(len + 1);
    if (!buf)
        return nb_fail(st, NB_ERR_NOMEM, "out of memory");
    if (len)
        memcpy(buf, data, len);
    return npy_from_buf(buf, len, path ? path : "<memory>", out, st);
}

nb_err nb_npy_write(const char *path, const nb_tensor *t, nb_status *st)
{
    const char *descr = npy_descr(t->dtype);
    if (!descr)
        return nb_fail(st, NB_ERR_UNSUPPORTED, "%s: cannot write %s as .npy", path,
                       nb_dtype_name(t->dtype));
    char dict[512];
    int o = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (",
                     descr);
    for (int i = 0; i < t->rank; i++)
        o += snprintf(dict + o, sizeof dict - (size_t)o, "%" PRId64 "%s", t->dims[i],
                      (t->rank == 1 || i + 1 < t->rank) ? ", " : "");
    o += snprintf(dict + o, sizeof dict - (size_t)o, "), }");
    /* pad so that magic(6)+ver(2)+len(2)+header is a multiple of 64, ending in '\n' */
    size_t total = 10 + (size_t)o + 1;
    size_t pad = (64 - total % 64) % 64;
    size_t hlen = (size_t)o + pad + 1;
    size_t n = 10 + hlen + t->nbytes;
    uint8_t *buf = malloc(n);
    if (!buf)
        return nb_fail(st, NB_ERR_NOMEM, "out of memory");
    memcpy(buf, "\x93NUMPY\x01\x00", 8);
    buf[8] = (uint8_t)(hlen & 0xff);
    buf[9] = (uint8_t)(hlen >> 8);
    memcpy(buf + 10, dict, (size_t)o);
    memset(buf + 10 + o, ' ', pad);
    buf[10 + hlen - 1] = '\n';
    if (t->nbytes)
        memcpy(buf + 10 + hlen, t->data, t->nbytes);
    nb_err e = nb_write_file_atomic(path, buf, n, st);
    free(buf);
    return e;
}

nb_err nb_bin_read(const char *path, nb_dtype dtype, int rank, const int64_t *dims,
                   nb_tensor **out, nb_status *st)
{
    /* the size first, from fstat of the one open: a 20 GB file of the wrong size is refused
       unread; then read straight into the tensor (unbuffered: one read, no copy) */
    int64_t want_numel;
    nb_err e = nb_shape_numel(rank, dims, nb_dtype_size(dtype), &want_numel, st);
    if (e)
        return nb_prefix(st, "%s", path);
    struct stat sb;
    FILE *f = nb_fopen_regular(path, &sb);
    if (!f)
        return nb_fail(st, NB_ERR_IO, "%s: cannot open: %s", path,
                       errno == EINVAL ? "not a regular file" : strerror(errno));
    size_t want = (size_t)want_numel * nb_dtype_size(dtype);
    if ((uint64_t)sb.st_size != (uint64_t)want) {
        char b[160];
        fclose(f);
        return nb_fail(st, NB_ERR_DATA, "%s: file is %lld bytes, but %s %s needs %zu", path,
                       (long long)sb.st_size, nb_dtype_name(dtype),
                       nb_shape_str(rank, dims, ',', b, sizeof b), want);
    }
    nb_tensor *t;
    e = nb_tensor_new_uninit(dtype, rank, dims, &t, st);
    if (e) {
        fclose(f);
        return nb_prefix(st, "%s", path);
    }
    setvbuf(f, NULL, _IONBF, 0);
    size_t got = t->nbytes ? fread(t->data, 1, t->nbytes, f) : 0;
    bool bad = ferror(f) != 0;
    fclose(f);
    if (bad || got != t->nbytes) {
        nb_tensor_free(t);
        return nb_fail(st, bad ? NB_ERR_IO : NB_ERR_DATA, "%s: %s", path,
                       bad ? "read failed" : "the file shrank while being read");
    }
    *out = t;
    return NB_OK;
}

nb_err nb_bin_write(const char *path, const nb_tensor *t, nb_status *st)
{
    return nb_write_file_atomic(path, t->data, t->nbytes, st);
}

void nb_csv_field(FILE *f, const char *s, bool always_quote)
{
    if (!s)
        s = "";
    if (!always_quote && !strpbrk(s, ",\"\r\n") && s[0] != ' ') {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}
