/* nanobench: status helpers (see include/nb/status.h). */
#include "nb/status.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Replaces control characters (newline, tab, escape...) by '?' so that every message stays
 * one line whatever names a model carries. */
static void one_line(char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            *s = '?';
}

nb_err nb_fail(nb_status *st, nb_err code, const char *fmt, ...)
{
    if (st) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(st->msg, sizeof st->msg, fmt, ap);
        va_end(ap);
        one_line(st->msg);
        st->code = code;
    }
    return code;
}

nb_err nb_prefix(nb_status *st, const char *fmt, ...)
{
    if (!st)
        return NB_ERR_INTERNAL;
    char pre[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(pre, sizeof pre, fmt, ap);
    va_end(ap);
    size_t pl = strlen(pre), ml = strlen(st->msg), cap = sizeof st->msg - 1;
    if (pl + 2 > cap)
        pl = cap - 2;
    if (pl + 2 + ml > cap)
        ml = cap - pl - 2;
    memmove(st->msg + pl + 2, st->msg, ml);
    memcpy(st->msg, pre, pl);
    st->msg[pl] = ':';
    st->msg[pl + 1] = ' ';
    st->msg[pl + 2 + ml] = 0;
    one_line(st->msg);
    return st->code;
}

void nb_status_clear(nb_status *st)
{
    if (st) {
        st->code = NB_OK;
        st->msg[0] = 0;
    }
}

const char *nb_err_name(nb_err code)
{
    switch (code) {
    case NB_OK: return "ok";
    case NB_ERR_IO: return "io";
    case NB_ERR_FORMAT: return "format";
    case NB_ERR_OPSET: return "opset";
    case NB_ERR_GRAPH: return "graph";
    case NB_ERR_SHAPE: return "shape";
    case NB_ERR_DATA: return "data";
    case NB_ERR_EXTERNAL: return "external";
    case NB_ERR_ATTR: return "attribute";
    case NB_ERR_UNSUPPORTED: return "unsupported";
    case NB_ERR_ARG: return "argument";
    case NB_ERR_DB: return "database";
    case NB_ERR_NOMEM: return "nomem";
    case NB_ERR_INTERNAL: return "internal";
    case NB_ERR_CANCELLED: return "cancelled";
    }
    return "?";
}

int nb_exit_code(nb_err code)
{
    if (code == NB_OK)
        return 0;
    if (code == NB_ERR_NOMEM || code == NB_ERR_INTERNAL)
        return 1;
    if (code == NB_ERR_CANCELLED)
        return 130;
    return 2;
}

void nb_warnf(nb_warn_fn fn, void *user, const char *fmt, ...)
{
    if (!fn)
        return;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fn(user, msg);
}
