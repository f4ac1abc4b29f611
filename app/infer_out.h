/* nanobench infer: the output folder (infer_out.c): the tensors to write, each a .npy under a
 * file-safe name of its own, and DIR/manifest.tsv mapping names to files; an earlier run's
 * files replaced, the user's own files never written over. */
#ifndef NB_APP_INFER_OUT_H
#define NB_APP_INFER_OUT_H

#include <stdbool.h>
#include <stddef.h>

#include "nb/tensor.h"

typedef struct outfile {
    char *name;
    char *path;
    const nb_tensor *t;
    const char *kind;
} outfile;

/* A set of strings (open addressing, FNV-1a): the names and file names of a --dump-all of
 * tens of thousands of tensors are checked for repeats in linear time. Holds pointers it
 * does not own. */
typedef struct strset {
    const char **slot;
    size_t cap, n;
} strset;

typedef struct dump_ctx {
    outfile *files;
    int n, cap;
    strset names;
} dump_ctx;

/* Adds tensor t named name (of kind "output", "input", "value", "subgraph") unless a tensor
 * of that name is in already; 0, or 1 on NOMEM. */
int add_file(dump_ctx *d, const char *name, const nb_tensor *t, const char *kind);
/* Writes d's tensors into dir as .npy files and manifest.tsv, whole (a temporary folder,
 * then renamed in); 0, or the exit status after the message. */
int write_outputs(const char *dir, dump_ctx *d, nb_status *st);

#endif
