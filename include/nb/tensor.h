/* nanobench: dense tensors, element types, IEEE half conversion, .npy/.bin I/O.
 *
 * A tensor is a dense, C-ordered (row-major) array of rank 0..NB_MAX_RANK whose element
 * type is one of ONNX's TensorProto.DataType codes. The storage is a reference-counted
 * buffer, so that Reshape/Identity/Squeeze can share data without copying; a value that
 * has been produced is never written again.
 */
#ifndef NB_TENSOR_H
#define NB_TENSOR_H

#include <stdbool.h>
#include <stdio.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "nb/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NB_MAX_RANK 8
/* Largest tensor nanobench will allocate (bytes). Larger shapes are NB_ERR_SHAPE. */
#define NB_MAX_TENSOR_BYTES ((int64_t)1 << 34)

/* Element types: the values of onnx.TensorProto.DataType. */
typedef enum nb_dtype {
    NB_UNDEFINED = 0,
    NB_FLOAT = 1,
    NB_UINT8 = 2,
    NB_INT8 = 3,
    NB_UINT16 = 4,
    NB_INT16 = 5,
    NB_INT32 = 6,
    NB_INT64 = 7,
    NB_STRING = 8,
    NB_BOOL = 9,
    NB_FLOAT16 = 10,
    NB_DOUBLE = 11,
    NB_UINT32 = 12,
    NB_UINT64 = 13,
    NB_COMPLEX64 = 14,
    NB_COMPLEX128 = 15,
    NB_BFLOAT16 = 16
} nb_dtype;

/* Bytes per element, or 0 for a type nanobench does not store (string, double, complex,
 * bfloat16: types the Nano cannot have). */
size_t nb_dtype_size(nb_dtype t);
/* ONNX spelling, e.g. "FLOAT", "INT64"; "UNKNOWN(n)" for others (static buffer per call
 * site is not used: returns a string literal, or "?" for codes outside the enum). */
const char *nb_dtype_name(nb_dtype t);
/* True for the types the Nano and nanobench handle (nb_dtype_size(t) != 0). */
bool nb_dtype_supported(nb_dtype t);
bool nb_dtype_is_float(nb_dtype t);    /* FLOAT, FLOAT16 */
bool nb_dtype_is_signed(nb_dtype t);   /* INT8..INT64 and floats */

/* Memory budget for tensor buffers (bytes): the smaller of NB_MAX_TENSOR_BYTES, 3/4 of
 * the machine's RAM and NANOBENCH_MEM_BUDGET_MB (environment, MiB; read once). An allocation that would take the live total beyond it is NB_ERR_SHAPE
 * naming the shape, instead of the process being killed by the kernel's OOM killer. */
int64_t nb_mem_budget(void);
/* Bytes held by live tensor buffers of this process. */
int64_t nb_mem_live(void);

/* A read-only mapping of a model file, shared by the deferred buffers that point into it
 * (nb_tensor_new_deferred); unmapped when the last of them is freed or materialized. A
 * file truncated while mapped would kill the process with SIGBUS at the next read of a
 * page past its new end: nb_filemap_open's mappings are guarded, such a page reads as zeros
 * and `changed` is set, which the loader and the estimate check before they answer. */
typedef struct nb_filemap {
    int refs;
    void *addr;
    size_t len;
    volatile int changed; /* a page could not be read: the file shrank while mapped */
} nb_filemap;

/* Maps len bytes of the open file fd read-only (len > 0; populate: read every page now),
 * guarded against truncation as above. NULL with errno set on failure. */
nb_filemap *nb_filemap_open(int fd, size_t len, bool populate);

typedef struct nb_buf {
    int refs;
    size_t nbytes;
    void *data; /* 64-byte aligned (16 for a buffer taken by nb_tensor_adopt); NULL while
                   the buffer is deferred */
    const void *src;  /* deferred: the bytes in a file mapping, any alignment, read only
                         by memcpy until nb_tensor_materialize copies them into data */
    nb_filemap *map;  /* the mapping src lies in (one reference), or NULL */
} nb_buf;

typedef struct nb_tensor {
    nb_dtype dtype;
    int rank;
    int64_t dims[NB_MAX_RANK];
    int64_t numel;
    size_t nbytes;
    void *data;
    nb_buf *buf; /* owner of data */
} nb_tensor;

/* Number of elements of a shape, checking each dim >= 0 and the product (and the byte
 * size for elem_size bytes per element) against overflow and NB_MAX_TENSOR_BYTES.
 * Errors: NB_ERR_SHAPE naming the offending dim. */
nb_err nb_shape_numel(int rank, const int64_t *dims, size_t elem_size, int64_t *numel,
                      nb_status *st);

/* New zero-filled tensor. Errors: NB_ERR_SHAPE (bad dims, rank > NB_MAX_RANK),
 * NB_ERR_UNSUPPORTED (dtype not stored), NB_ERR_NOMEM. */
nb_err nb_tensor_new(nb_dtype dtype, int rank, const int64_t *dims, nb_tensor **out,
                     nb_status *st);
/* New uninitialised tensor (same errors); for kernels that write every element. */
nb_err nb_tensor_new_uninit(nb_dtype dtype, int rank, const int64_t *dims, nb_tensor **out,
                            nb_status *st);
/* A tensor over data, a malloc'ed block of exactly the shape's bytes (16-byte aligned, as
 * malloc gives): the tensor owns it on success and frees it with free(); on failure the
 * caller keeps it. Used to take initializers from the decoded protobuf without a copy. */
nb_err nb_tensor_adopt(nb_dtype dtype, int rank, const int64_t *dims, void *data,
                       nb_tensor **out, nb_status *st);
/* A tensor whose bytes stay in a file mapping (src, nbytes of the shape, any alignment)
 * until they are needed: t->data is NULL until nb_tensor_materialize. Takes a reference to
 * map. For loads that read shapes (estimate): a 10 MB model's weights are then never copied.
 * Errors: as nb_tensor_new. */
nb_err nb_tensor_new_deferred(nb_dtype dtype, int rank, const int64_t *dims, const void *src,
                              nb_filemap *map, nb_tensor **out, nb_status *st);
/* True when t's bytes are still in the file (t->data is NULL). */
bool nb_tensor_is_deferred(const nb_tensor *t);
/* Copies a deferred tensor's bytes into a 64-byte aligned buffer of its own (every header
 * sharing the buffer sees it at its next nb_tensor_materialize; the mapping's reference is
 * dropped). No-op for a tensor that has its data. Errors: NB_ERR_NOMEM. */
nb_err nb_tensor_materialize(nb_tensor *t, nb_status *st);
/* The bytes of t: its data, or where a deferred tensor's bytes lie in the file (any
 * alignment: read them as bytes or with memcpy, never through a typed pointer). */
const void *nb_tensor_bytes(const nb_tensor *t);
/* Drops one reference to a file mapping, unmapping it at the last. */
void nb_filemap_unref(nb_filemap *m);
/* A tensor of another shape (same numel) sharing src's buffer. */
nb_err nb_tensor_view(const nb_tensor *src, int rank, const int64_t *dims, nb_tensor **out,
                      nb_status *st);
/* Deep copy. */
nb_err nb_tensor_clone(const nb_tensor *src, nb_tensor **out, nb_status *st);
/* Adds a reference to t's buffer and returns a new tensor header on it. */
nb_tensor *nb_tensor_ref(const nb_tensor *t);
/* Releases t (NULL is fine). */
void nb_tensor_free(nb_tensor *t);

/* Shape as text, "1x3x224x224" (sep 'x') or "[1,3,224,224]" (sep ','). Returns buf. */
char *nb_shape_str(int rank, const int64_t *dims, char sep, char *buf, size_t len);

/* Element i of t converted to double / int64 (any stored dtype). */
double nb_tensor_get_f64(const nb_tensor *t, int64_t i);
int64_t nb_tensor_get_i64(const nb_tensor *t, int64_t i);
/* Element i of t set from v, as a C cast to t's dtype (floats rounded to nearest, fp16 by
 * nb_float_to_half; integers truncated toward zero: the caller gives values of t's range;
 * bool: v != 0). Other dtypes are left unchanged. */
void nb_tensor_set_f64(nb_tensor *t, int64_t i, double v);

/* binary32 -> binary16 bits with one rounding to nearest even, on the bits. Overflow gives
 * infinity, or +-65504 when saturate (the Nano's vector unit); NaN gives a quiet NaN (sign
 * kept), 0x7E00 when saturate. Used where the compiler has no _Float16 and by the NPU
 * simulator's fp32 -> fp16 conversions. */
static inline uint16_t nb_f32_to_f16_bits(float x, int saturate)
{
    uint32_t u;
    memcpy(&u, &x, 4);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000);
    uint16_t over = (uint16_t)(sign | (saturate ? 0x7BFF : 0x7C00));
    int e = (int)((u >> 23) & 0xFF);
    uint32_t man = u & 0x7FFFFF;
    if (e == 0xFF)
        return man ? (uint16_t)(saturate ? 0x7E00 : (sign | 0x7E00)) : over;
    int he = e - 127 + 15;
    if (he >= 31)
        return over;
    if (he <= 0) { /* a subnormal half (or zero): units of 2^-24 */
        if (he < -10)
            return sign;
        uint32_t full = man | 0x800000;
        int shift = 14 - he;
        uint32_t q = full >> shift, rem = full & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (q & 1)))
            q++;
        return (uint16_t)(sign | q); /* q = 1024 carries into the smallest normal: right */
    }
    uint32_t q = man >> 13, rem = man & 0x1FFF;
    if (rem > 0x1000 || (rem == 0x1000 && (q & 1)))
        q++;
    uint32_t bits = ((uint32_t)he << 10) + q; /* a carry moves into the exponent */
    return bits >= 0x7C00 ? over : (uint16_t)(sign | bits);
}

/* IEEE 754 binary16 <-> binary32, round to nearest even (the compiler's _Float16). */
float nb_half_to_float(uint16_t h);
uint16_t nb_float_to_half(float f);
/* bfloat16 <-> float32 (round to nearest even). */
float nb_bf16_to_float(uint16_t h);
uint16_t nb_float_to_bf16(float f);

/* .npy (format 1.0/2.0/3.0, little-endian, C order) reader. dtypes: <f4 <f2 <i8 <i4 <i2
 * |i1 <u8 <u4 <u2 |u1 |b1. Errors: NB_ERR_IO, NB_ERR_FORMAT (bad magic, header, fortran
 * order, data shorter than the shape), NB_ERR_UNSUPPORTED (dtype such as <f8). */
nb_err nb_npy_read(const char *path, nb_tensor **out, nb_status *st);
/* The same from len bytes in memory (path names them in messages; NULL: "<memory>"). */
nb_err nb_npy_parse(const uint8_t *data, size_t len, const char *path, nb_tensor **out,
                    nb_status *st);
/* Writes t as .npy format 1.0 to path atomically (temporary file + rename): on error no
 * file is left. Errors: NB_ERR_IO. */
nb_err nb_npy_write(const char *path, const nb_tensor *t, nb_status *st);
/* Raw little-endian array of the given dtype and shape: the file size must be exactly
 * numel x element size. Errors: NB_ERR_IO, NB_ERR_DATA (size mismatch). */
nb_err nb_bin_read(const char *path, nb_dtype dtype, int rank, const int64_t *dims,
                   nb_tensor **out, nb_status *st);
/* Writes the raw bytes of t atomically. */
nb_err nb_bin_write(const char *path, const nb_tensor *t, nb_status *st);

/* mulberry32: a small deterministic PRNG (32-bit state). The same generator is written in
 * tests/oracle/ort_expected.js, so C and ONNX Runtime can be fed identical inputs. */
uint32_t nb_mulberry32(uint32_t *state);
/* Fills a FLOAT tensor with lo + (hi - lo) * u, u = nb_mulberry32(seed) / 2^32, computed in
 * double and rounded once to float32; integer tensors get the value truncated. */
void nb_tensor_fill_uniform(nb_tensor *t, uint32_t seed, double lo, double hi);

struct stat;
/* Opens path for reading only if it is a regular file (a FIFO, device or folder is refused
 * without blocking); fills *sb. Returns NULL with errno set (EINVAL: not a regular file). */
FILE *nb_fopen_regular(const char *path, struct stat *sb);
/* Reads a whole file into a malloc'ed buffer (+1 NUL byte, not counted in *len).
 * Errors: NB_ERR_IO. */
nb_err nb_read_file(const char *path, uint8_t **data, size_t *len, nb_status *st);
/* Creates dir and its missing parents (mode 0777 less umask). Returns 0, or -1 with errno
 * (ENOTDIR when dir exists and is not a folder). */
int nb_mkdir_p(const char *dir);
/* Writes len bytes to path atomically (path.tmp.<pid> then rename). Errors: NB_ERR_IO. */
nb_err nb_write_file_atomic(const char *path, const void *data, size_t len, nb_status *st);

/* ---- outputs whole or not at all (engine/ir/outputs.c, issue 25) ----
 * An output is written as FINAL.tmp.PID (this process's own temporary) and renamed into
 * place when complete; a set of outputs is renamed with SIGINT/SIGTERM/SIGHUP held. */
/* out = "final.tmp.<this pid>" (a final whose file name would pass NAME_MAX with the suffix
 * is shortened: its first 200 bytes, '~' and a hash of the whole name) */
void nb_tmp_path(const char *final, char *out, size_t len);
/* out = "final.<this pid>.part": a part of a set of outputs (calibrate's three files), one
 * per process, so that two runs to one name do not write into each other's */
void nb_part_path(const char *final, char *out, size_t len);
/* Removes path: a file, or a folder and everything in it (no symlink followed). */
void nb_remove_tree(const char *path);
/* Process pid (of this host) is gone: no such process, or a zombie, dead but not yet
 * reaped (a killed command reparented to a container's init that reaps late). */
bool nb_pid_gone(long pid);
/* Removes the stale temporaries of final: entries "BASE.tmp.PID..." or "BASE.PID.part"
 * beside it whose process PID no longer exists (a run killed by SIGKILL, a crash). Returns
 * how many it removed. */
int nb_remove_stale_tmps(const char *final);
/* The same over a tree: every entry under dir (depth levels of folders) named
 * "*.tmp.PID..." whose process is gone (a killed run's dump folder). Returns the count. */
int nb_remove_stale_tmps_under(const char *dir, int depth);
/* Renames each tmp[i] to final[i] in order with the signals held (SIGINT, SIGTERM, SIGHUP
 * wait until all are renamed: a Ctrl-C leaves the old set or the new one). A rename that
 * fails (rare: the files are in one folder) stops there, naming the file; the temporaries
 * left are removed. Errors: NB_ERR_IO. */
nb_err nb_publish_files(const char *const *tmp, const char *const *final, int n, nb_status *st);
/* Renames tmp_b to b, then tmp_a to a, with the signals held: a reader sees the old pair or
 * the new one, except after a SIGKILL or power loss between the two renames, when b is new
 * and a is old (atc: NAME.dbg holds NAME.exeom's size and CRC-32, so the pair's reader tells,
 * share/doc/exeom.md). On failure both temporaries are removed. Errors: NB_ERR_IO. */
nb_err nb_publish_pair(const char *tmp_a, const char *a, const char *tmp_b, const char *b,
                       nb_status *st);
/* Publishes the folder tmp as final, with the signals held: renamed whole when final does
 * not exist; swapped with final in one atomic rename (RENAME_EXCHANGE) when final holds
 * only regular files that ours() takes (an earlier output of the same kind; ours NULL:
 * always), the earlier one then removed; else (the user's own files are in final) tmp's
 * files are moved into final, replacing files of the same name, refused before any move
 * when a folder is in the way. tmp is removed in every case. Errors: NB_ERR_IO. */
nb_err nb_publish_dir(const char *tmp, const char *final, bool (*ours)(const char *name),
                      nb_status *st);
/* A tensor name as a file name into out (len bytes): [A-Za-z0-9_.-] kept (no leading '.'),
 * any other byte '_'; "_" for an empty name. */
void nb_safe_name(const char *name, char *out, size_t len);
/* Writes s to f with tab, newline, carriage return and backslash escaped (\t \n \r \\):
 * a tensor name from a model stays on one line and in one tab-separated field. */
void nb_put_escaped(FILE *f, const char *s);
/* Undoes nb_put_escaped in place. */
void nb_unescape(char *s);
/* The regular files of dir ("dir/name"), hidden ones left out, in ascending name order
 * (calibrate's batch order), malloc'ed into *out (free with nb_files_free). Returns the
 * count, or -1 with errno (the folder cannot be opened, or out of memory: ENOMEM). */
int nb_list_files(const char *dir, char ***out);
void nb_files_free(char **v, int n);
/* The batch files of dir (calibration and evaluation data): nb_list_files' files whose name
 * ends in .npy or .bin (any case), in the same order; the others (a README.txt beside the
 * batches) are left out, counted in *n_skipped with the first one's path in skipped (len
 * bytes, "" when none), for the caller's one note (issue 37). Returns the count, or -1 with
 * errno as nb_list_files. */
int nb_list_batches(const char *dir, char ***out, int *n_skipped, char *skipped, size_t len);
/* True for a dump file's name as nb_sim_dump_file_name makes it:
 * {op_type}.{op_name}.{task}.0.{16 digits}. */
bool nb_is_dump_file_name(const char *name);
/* Writes s (NULL as "") as one CSV field, RFC 4180: in quotes, quotes doubled, when it holds
 * a comma, quote, CR or LF or starts with a space (so a spreadsheet keeps it as is), or
 * always when always_quote. */
void nb_csv_field(FILE *f, const char *s, bool always_quote);

#ifdef __cplusplus
}
#endif
#endif
