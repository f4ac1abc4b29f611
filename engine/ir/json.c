/* nanobench: the JSON values the engines' result serializations share (include/nb/json.h). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "nb/json.h"
#include "nb/tensor.h"

json_t *nb_json_string(const char *s)
{
    if (!s)
        return json_null();
    json_t *j = json_string(s);
    if (j)
        return j;
    /* not UTF-8 (a Latin-1 file name, say): bytes above 0x7f become '?' rather than the
       value being dropped */
    char *c = strdup(s);
    if (!c)
        return json_null();
    for (char *p = c; *p; p++)
        if ((unsigned char)*p > 0x7f)
            *p = '?';
    j = json_string(c);
    free(c);
    return j ? j : json_null();
}

json_t *nb_json_num(double v) { return isfinite(v) ? json_real(v) : json_null(); }

json_t *nb_json_value(double v)
{
    if (isnan(v))
        return json_string("nan");
    if (isinf(v))
        return json_string(v > 0 ? "inf" : "-inf");
    return json_real(v);
}

json_t *nb_json_int_array(const int64_t *v, int n)
{
    json_t *a = json_array();
    for (int i = 0; i < n; i++)
        json_array_append_new(a, json_integer((json_int_t)v[i]));
    return a;
}

nb_err nb_json_write_atomic(const json_t *o, const char *path, size_t flags, nb_status *st)
{
    char *text = json_dumps(o, flags);
    if (!text)
        return nb_fail(st, NB_ERR_NOMEM, "%s: out of memory", path);
    size_t n = strlen(text);
    text[n] = 0;
    nb_err e = nb_write_file_atomic(path, text, n, st);
    free(text);
    return e;
}

double nb_json_num_of(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

const char *nb_json_str_of(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

void nb_shell_word(FILE *f, const char *w, bool space)
{
    if (!w)
        return;
    if (space)
        fputc(' ', f);
    bool plain = *w != 0;
    for (const char *p = w; *p && plain; p++)
        plain = strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./:=,+-@%^",
                       *p) != NULL;
    if (plain) {
        fputs(w, f);
        return;
    }
    fputc('\'', f);
    for (const char *p = w; *p; p++)
        if (*p == '\'')
            fputs("'\\''", f);
        else
            fputc(*p, f);
    fputc('\'', f);
}

/* s is well-formed UTF-8 (RFC 3629: no overlong form, no surrogate, <= U+10FFFF) */
bool nb_utf8_valid(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        unsigned c = *p;
        int n = c < 0x80 ? 0 : c >= 0xC2 && c <= 0xDF ? 1 : (c & 0xF0) == 0xE0 ? 2
                : c >= 0xF0 && c <= 0xF4 ? 3 : -1;
        if (n < 0)
            return false;
        unsigned cp = n == 0 ? c : c & (0x3F >> n);
        for (int k = 1; k <= n; k++) {
            if ((p[k] & 0xC0) != 0x80)
                return false;
            cp = cp << 6 | (p[k] & 0x3F);
        }
        if ((n == 2 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
            (n == 3 && (cp < 0x10000 || cp > 0x10FFFF)))
            return false;
        p += n + 1;
    }
    return true;
}

