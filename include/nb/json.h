/* nanobench: the JSON values every engine's result serialization shares (jansson). Owned by
 * engine/ir (json.c): each engine turns its result struct into the JSON object that the
 * CLI's --json prints, the workbench reads back and the Python module returns, so that the
 * three say the same thing under the same keys. */
#ifndef NB_JSON_H
#define NB_JSON_H

#include <stdint.h>

#include <jansson.h>

/* A jansson string of s; NULL gives null, and text that is not UTF-8 keeps its ASCII with
 * other bytes as '?' (jansson refuses it, and the value would be lost). */
json_t *nb_json_string(const char *s);
/* v as a JSON real; null for NaN and +-infinity (JSON has neither). */
json_t *nb_json_num(double v);
/* v as a JSON real, and NaN and +-infinity as the strings "nan", "inf" and "-inf": an array
 * of every value (the Python module's outputs, which numpy reads back as float32). */
json_t *nb_json_value(double v);
/* An array of n integers (a shape, an index). */
json_t *nb_json_int_array(const int64_t *v, int n);

#include <stdbool.h>

#include "nb/status.h"
/* s (NUL-terminated) is well-formed UTF-8 (RFC 3629: no overlong form, no surrogate,
 * <= U+10FFFF): what a JSON string, and so summary.json, can hold as it is. */
bool nb_utf8_valid(const char *s);
/* o's member key as a number (NaN when absent or not a number) and as a string ("" when
 * absent or not a string): how the summary, the steps' JSON and the report are read. */
double nb_json_num_of(const json_t *o, const char *key);
const char *nb_json_str_of(const json_t *o, const char *key);
/* A command line's word for a reader to copy (or a script to run) into f, a space before it
 * when space: as it is when it holds only characters a POSIX shell takes literally
 * ([A-Za-z0-9_./:=,+@%^-], not empty), else single-quoted with each ' as '\'' (POSIX sh,
 * 2.2.2: nothing inside single quotes is special). */
#include <stdio.h>
void nb_shell_word(FILE *f, const char *w, bool space);
/* Writes o to path whole or not at all (jansson's flags; through path.tmp.PID, renamed:
 * nb_write_file_atomic): a kill never leaves a cut JSON file. Errors: NB_ERR_IO naming path,
 * NB_ERR_NOMEM. */
nb_err nb_json_write_atomic(const json_t *o, const char *path, size_t flags, nb_status *st);

#endif
