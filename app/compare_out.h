/* nanobench compare: what its subcommands print of a comparison (compare_out.c), shared by
 * file_compare (cmd_compare.c) and layer (cmd_compare_layer.c). */
#ifndef NB_APP_COMPARE_OUT_H
#define NB_APP_COMPARE_OUT_H

#include <jansson.h>

#include "nb/accucmp.h"

/* a tensor's shape as "1x8x6x6" */
void shape_str(const nb_dump_tensor *t, char *buf, size_t len);
/* a name as one line of plain text (two buffers: two names in one printf) */
const char *plain(const char *s);
/* SQNR for the table: +-999 for +-infinity, as in the CSV */
double sqnr_shown(double v);
/* A subcommand's flags: each flag (its other spelling alt, or NULL) takes a value into
 * *dst, refused with need ("-m needs the NPU dump folder") when it has none; --json sets
 * *json. Returns 0, or the exit status after the usage message. */
typedef struct compare_flag {
    const char *flag, *alt, *need;
    const char **dst;
} compare_flag;
int compare_flags(int argc, char **argv, const char *sub, const compare_flag *f, int n,
                  bool *json);
/* compare layer (cmd_compare_layer.c) */
int compare_layer(int argc, char **argv);

#endif
