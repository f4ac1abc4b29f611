/* nanobench: AMCT's calibration config in protobuf text format (include/nb/quant.h).
 *
 * The text is parsed into a small tree of fields (name, scalar or message, line:col), then
 * the tree is read against the schema of AMCTConfig, so that every message can name the
 * place in the file. Field names and defaults: hicann/amct calibration_config proto, as
 * summarized in ../shared/docs/facts/quant.md sections 1.2-1.6.
 */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nb/ir.h"
#include "nb/quant.h"

/* ---- the field tree ---- */

typedef struct pfield {
    char *name;
    int line, col;           /* of the name */
    bool msg;                /* a message ("{ ... }"), else a scalar */
    char *text;              /* scalar: the value's text (unquoted for strings) */
    bool quoted;             /* scalar: given as a string */
    int vline, vcol;         /* scalar: of the value */
    int n_kids, cap_kids;
    struct pfield *kids;     /* message: its fields in order */
} pfield;

typedef struct parser {
    const char *s, *end, *path;
    int line, col;
    nb_status *st;
    int depth;
} parser;

static void pfield_free(pfield *f)
{
    for (int i = 0; i < f->n_kids; i++)
        pfield_free(&f->kids[i]);
    free(f->kids);
    free(f->name);
    free(f->text);
}

static nb_err perr(parser *p, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static nb_err perr(parser *p, int line, int col, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return nb_fail(p->st, NB_ERR_FORMAT, "%s:%d:%d: %s", p->path, line, col, msg);
}

static void advance(parser *p)
{
    if (*p->s == '\n')
        p->line++, p->col = 1;
    else
        p->col++;
    p->s++;
}

/* Skips blanks and '#' comments. */
static void skip_space(parser *p)
{
    while (p->s < p->end) {
        if (*p->s == '#') {
            while (p->s < p->end && *p->s != '\n')
                advance(p);
        } else if (isspace((unsigned char)*p->s)) {
            advance(p);
        } else {
            break;
        }
    }
}

static bool ident_char(char ch) { return isalnum((unsigned char)ch) || ch == '_' || ch == '.'; }

/* An identifier, number or bare word: [A-Za-z0-9_.+-]+ (numbers such as -1.5e-3). */
static char *word(parser *p)
{
    const char *b = p->s;
    while (p->s < p->end && (ident_char(*p->s) || *p->s == '-' || *p->s == '+'))
        advance(p);
    return strndup(b, (size_t)(p->s - b));
}

/* A quoted string with C escapes \n \t \\ \" \' (what protobuf text format writes). */
static nb_err quoted(parser *p, char **out)
{
    char q = *p->s;
    int line = p->line, col = p->col;
    advance(p);
    size_t cap = 32, n = 0;
    char *b = malloc(cap);
    if (!b)
        return nb_fail(p->st, NB_ERR_NOMEM, "out of memory");
    while (p->s < p->end && *p->s != q && *p->s != '\n') {
        char ch = *p->s;
        if (ch == '\\') {
            advance(p);
            if (p->s >= p->end)
                break;
            switch (*p->s) {
            case 'n': ch = '\n'; break;
            case 't': ch = '\t'; break;
            case '\\': case '"': case '\'': ch = *p->s; break;
            default:
                free(b);
                return perr(p, p->line, p->col, "unknown escape '\\%c' in a string", *p->s);
            }
        }
        if (n + 2 > cap) {
            char *nb2 = realloc(b, cap *= 2);
            if (!nb2) {
                free(b);
                return nb_fail(p->st, NB_ERR_NOMEM, "out of memory");
            }
            b = nb2;
        }
        b[n++] = ch;
        advance(p);
    }
    if (p->s >= p->end || *p->s != q) {
        free(b);
        return perr(p, line, col, "string not closed on its line");
    }
    advance(p);
    b[n] = 0;
    *out = b;
    return NB_OK;
}

static pfield *add_kid(parser *p, pfield *m)
{
    if (m->n_kids == m->cap_kids) { /* most messages hold 1-3 fields: start at 2 */
        int nc = m->cap_kids ? m->cap_kids * 2 : 2;
        pfield *k = realloc(m->kids, sizeof *k * (size_t)nc);
        if (!k) {
            nb_fail(p->st, NB_ERR_NOMEM, "out of memory");
            return NULL;
        }
        m->kids = k, m->cap_kids = nc;
    }
    pfield *f = &m->kids[m->n_kids++];
    memset(f, 0, sizeof *f);
    return f;
}

static nb_err parse_fields(parser *p, pfield *m, char close);

/* One scalar value into f (string, number or identifier). */
static nb_err scalar(parser *p, pfield *f)
{
    f->vline = p->line, f->vcol = p->col;
    if (p->s < p->end && (*p->s == '"' || *p->s == '\'')) {
        f->quoted = true;
        return quoted(p, &f->text);
    }
    if (p->s >= p->end || !(ident_char(*p->s) || *p->s == '-' || *p->s == '+'))
        return perr(p, p->line, p->col, "expected a value after '%s:'", f->name);
    f->text = word(p);
    return f->text ? NB_OK : nb_fail(p->st, NB_ERR_NOMEM, "out of memory");
}

/* Fields until close ('}', '>', or 0 for the end of the text). */
static nb_err parse_fields(parser *p, pfield *m, char close)
{
    if (++p->depth > 32)
        return perr(p, p->line, p->col, "messages nested more than 32 deep");
    for (;;) {
        skip_space(p);
        if (p->s >= p->end) {
            if (close)
                return perr(p, p->line, p->col, "'%c' expected before the end of the file",
                            close);
            break;
        }
        if (close && *p->s == close) {
            advance(p);
            break;
        }
        if (!(isalpha((unsigned char)*p->s) || *p->s == '_'))
            return perr(p, p->line, p->col, "a field name expected, found '%c'", *p->s);
        int line = p->line, col = p->col;
        char *name = word(p);
        pfield *f = name ? add_kid(p, m) : NULL;
        if (!f) {
            free(name);
            return nb_fail(p->st, NB_ERR_NOMEM, "out of memory");
        }
        f->name = name, f->line = line, f->col = col;
        skip_space(p);
        bool colon = p->s < p->end && *p->s == ':';
        if (colon) {
            advance(p);
            skip_space(p);
        }
        if (p->s < p->end && (*p->s == '{' || *p->s == '<')) {
            char c2 = *p->s == '{' ? '}' : '>';
            advance(p);
            f->msg = true;
            nb_err e = parse_fields(p, f, c2);
            if (e)
                return e;
        } else if (!colon) {
            return perr(p, p->line, p->col, "':' or '{' expected after '%s'", name);
        } else if (p->s < p->end && *p->s == '[') { /* a list of scalars: repeated field */
            advance(p);
            pfield proto = *f;
            m->n_kids--; /* the list items become one field each */
            for (bool first = true;; first = false) {
                skip_space(p);
                if (p->s < p->end && *p->s == ']' && first) {
                    advance(p);
                    break;
                }
                pfield *it = add_kid(p, m);
                if (!it) {
                    free(proto.name);
                    return NB_ERR_NOMEM;
                }
                *it = (pfield){.name = strdup(proto.name), .line = proto.line, .col = proto.col};
                nb_err e = it->name ? scalar(p, it) : nb_fail(p->st, NB_ERR_NOMEM, "no memory");
                if (e) {
                    free(proto.name);
                    return e;
                }
                skip_space(p);
                if (p->s < p->end && *p->s == ',') {
                    advance(p);
                    continue;
                }
                if (p->s < p->end && *p->s == ']') {
                    advance(p);
                    break;
                }
                free(proto.name);
                return perr(p, p->line, p->col, "',' or ']' expected in the list of '%s'",
                            it->name);
            }
            free(proto.name);
        } else {
            nb_err e = scalar(p, f);
            if (e)
                return e;
        }
        skip_space(p);
        if (p->s < p->end && (*p->s == ',' || *p->s == ';'))
            advance(p);
    }
    p->depth--;
    return NB_OK;
}

/* ---- reading the tree against the schema ---- */

static nb_err ferr(parser *p, const pfield *f, bool at_value, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static nb_err ferr(parser *p, const pfield *f, bool at_value, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return nb_fail(p->st, NB_ERR_FORMAT, "%s:%d:%d: %s", p->path,
                   at_value && !f->msg ? f->vline : f->line, at_value && !f->msg ? f->vcol : f->col,
                   msg);
}

static nb_err want_scalar(parser *p, const pfield *f)
{
    return f->msg ? ferr(p, f, false, "'%s' takes a value, not a message", f->name) : NB_OK;
}

static nb_err want_msg(parser *p, const pfield *f)
{
    return f->msg ? NB_OK : ferr(p, f, false, "'%s' is a message: '%s { ... }'", f->name, f->name);
}

/* A singular field given twice in one message is an error (protobuf text format). */
static nb_err once(parser *p, const pfield *m, const pfield *f)
{
    for (const pfield *g = m->kids; g < f; g++)
        if (!strcmp(g->name, f->name))
            return ferr(p, f, false, "'%s' is given twice (first at line %d)", f->name, g->line);
    return NB_OK;
}

static nb_err get_bool(parser *p, const pfield *f, bool *out)
{
    nb_err e = want_scalar(p, f);
    if (e)
        return e;
    if (!f->quoted && (!strcmp(f->text, "true") || !strcmp(f->text, "True") ||
                       !strcmp(f->text, "t") || !strcmp(f->text, "1")))
        *out = true;
    else if (!f->quoted && (!strcmp(f->text, "false") || !strcmp(f->text, "False") ||
                            !strcmp(f->text, "f") || !strcmp(f->text, "0")))
        *out = false;
    else
        return ferr(p, f, true, "'%s' is true or false, not '%s'", f->name, f->text);
    return NB_OK;
}

static nb_err get_int(parser *p, const pfield *f, long lo, long hi, long *out)
{
    nb_err e = want_scalar(p, f);
    if (e)
        return e;
    char *end;
    errno = 0;
    long v = f->quoted ? 0 : strtol(f->text, &end, 10);
    if (f->quoted || errno || *end || end == f->text || v < lo || v > hi)
        return ferr(p, f, true, "'%s' is an integer in %ld..%ld, not '%s'", f->name, lo, hi,
                    f->text);
    *out = v;
    return NB_OK;
}

/* A float in (lo, hi] when lo_open, else [lo, hi]. */
static nb_err get_float(parser *p, const pfield *f, double lo, double hi, bool lo_open,
                        float *out)
{
    nb_err e = want_scalar(p, f);
    if (e)
        return e;
    char *end;
    errno = 0;
    double v = f->quoted ? 0 : strtod(f->text, &end);
    float fv = (float)v; /* what is stored: a value the float cannot hold is refused too
                            (1e-50 in (0, 100] is 0 as a float: a zero clip range) */
    if (f->quoted || errno || *end || end == f->text || !isfinite(v) || v > hi ||
        (lo_open ? v <= lo : v < lo) || !isfinite(fv) || fv > hi ||
        (lo_open ? fv <= lo : fv < lo) || (fv != 0 && !isnormal(fv)))
        return ferr(p, f, true, "'%s' is a number in %s%g, %g], not '%s'", f->name,
                    lo_open ? "(" : "[", lo, hi, f->text);
    *out = fv;
    return NB_OK;
}

static nb_err get_string(parser *p, const pfield *f, char **out)
{
    nb_err e = want_scalar(p, f);
    if (e)
        return e;
    if (!f->quoted)
        return ferr(p, f, true, "'%s' is a string in quotes: \"%s\"", f->name, f->text);
    if (!f->text[0])
        return ferr(p, f, true, "'%s' is empty", f->name);
    *out = strdup(f->text);
    return *out ? NB_OK : nb_fail(p->st, NB_ERR_NOMEM, "out of memory");
}

static nb_err add_string(parser *p, const pfield *f, char ***list, int *n)
{
    char *s;
    nb_err e = get_string(p, f, &s);
    if (e)
        return e;
    /* room doubled when the count reaches a power of two (from 4): amortized O(1) per entry,
       not a copy of the whole list per entry (2 million skip_layers took minutes under ASan) */
    int n0 = *n;
    if (n0 < 4 ? !*list : (n0 & (n0 - 1)) == 0) {
        char **l = realloc(*list, sizeof(char *) * (size_t)(n0 < 4 ? 4 : 2 * n0));
        if (!l) {
            free(s);
            return nb_fail(p->st, NB_ERR_NOMEM, "out of memory");
        }
        *list = l;
    }
    (*list)[(*n)++] = s;
    return NB_OK;
}

static nb_err dst_type(parser *p, const pfield *f, int *bits)
{
    nb_err e = want_scalar(p, f);
    if (e)
        return e;
    if (!f->quoted && (!strcmp(f->text, "INT8") || !strcmp(f->text, "1")))
        *bits = 8;
    else if (!f->quoted && (!strcmp(f->text, "INT16") || !strcmp(f->text, "2")))
        *bits = 16;
    else
        return ferr(p, f, true, "dst_type is INT8 or INT16, not '%s'", f->text);
    return NB_OK;
}

static nb_err unknown(parser *p, const pfield *f, const char *in, const char *known)
{
    return ferr(p, f, false, "unknown field '%s' in %s (known: %s)", f->name, in, known);
}

static nb_err read_arq(parser *p, const pfield *m, nb_calib_cfg *c)
{
    for (int i = 0; i < m->n_kids; i++) {
        const pfield *f = &m->kids[i];
        nb_err e = once(p, m, f);
        long v = 0;
        if (!e && !strcmp(f->name, "channel_wise"))
            e = get_bool(p, f, &c->channel_wise);
        else if (!e && !strcmp(f->name, "quant_bits")) {
            e = get_int(p, f, 1, 64, &v);
            if (!e && v != 4 && v != 8)
                e = ferr(p, f, true, "quant_bits is 8 or 4 (the cube takes s8 and s4 weights), "
                         "not %ld", v);
            if (!e)
                c->weight_bits = (int)v;
        } else if (!e)
            e = unknown(p, f, "arq_quantize", "channel_wise, quant_bits");
        if (e)
            return e;
    }
    return NB_OK;
}

/* ada_quantize { num_iteration reg_param beta_range_start beta_range_end warm_start
 * channel_wise quant_bits } (AMCT's ADAquantize, quant.md 1.4; quant_bits as arq's):
 * AdaRound on ARQ's scales. */
static nb_err read_ada(parser *p, const pfield *m, nb_calib_cfg *c)
{
    c->weight_round = NB_ROUND_ADAROUND;
    c->weight_round_given = true;
    for (int i = 0; i < m->n_kids; i++) {
        const pfield *f = &m->kids[i];
        nb_err e = once(p, m, f);
        long v = 0;
        if (e)
            return e;
        if (!strcmp(f->name, "num_iteration")) {
            e = get_int(p, f, 0, 1000000, &v);
            if (!e)
                c->ada.iters = (int)v;
        } else if (!strcmp(f->name, "reg_param"))
            e = get_float(p, f, 0, 1e6, false, &c->ada.reg);
        else if (!strcmp(f->name, "beta_range_start"))
            e = get_float(p, f, 0, 1000, true, &c->ada.beta_start);
        else if (!strcmp(f->name, "beta_range_end"))
            e = get_float(p, f, 0, 1000, true, &c->ada.beta_end);
        else if (!strcmp(f->name, "warm_start"))
            e = get_float(p, f, 0, 1, false, &c->ada.warm);
        else if (!strcmp(f->name, "channel_wise") || !strcmp(f->name, "quant_bits")) {
            pfield one = *m; /* arq's fields, read by arq's reader */
            one.kids = (pfield *)f, one.n_kids = 1;
            e = read_arq(p, &one, c);
        } else
            e = unknown(p, f, "ada_quantize", "num_iteration, reg_param, beta_range_start, "
                        "beta_range_end, warm_start, channel_wise, quant_bits");
        if (e)
            return e;
    }
    return NB_OK;
}

/* weight_round: NEAREST | ADAROUND (nanobench's: AdaRound with ada_quantize's defaults). */
static nb_err read_weight_round(parser *p, const pfield *f, nb_calib_cfg *c)
{
    nb_err e = want_scalar(p, f);
    if (e)
        return e;
    if (!f->quoted && !strcmp(f->text, "NEAREST"))
        c->weight_round = NB_ROUND_NEAREST;
    else if (!f->quoted && !strcmp(f->text, "ADAROUND"))
        c->weight_round = NB_ROUND_ADAROUND;
    else
        return ferr(p, f, true, "weight_round is NEAREST or ADAROUND, not '%s'", f->text);
    c->weight_round_given = true;
    return NB_OK;
}

/* The fields IFMR and HFMG share (asymmetric, dst_type): true when f is one (*e set). */
static bool act_common(parser *p, const pfield *f, nb_calib_cfg *c, nb_err *e)
{
    if (!strcmp(f->name, "asymmetric")) {
        bool b = false;
        if (!(*e = get_bool(p, f, &b))) /* nothing stored from a value that failed */
            c->asymmetric = b;
        return true;
    }
    if (!strcmp(f->name, "dst_type")) {
        *e = dst_type(p, f, &c->act_bits);
        return true;
    }
    return false;
}

static nb_err read_ifmr(parser *p, const pfield *m, nb_calib_cfg *c)
{
    c->act = NB_ACT_IFMR;
    for (int i = 0; i < m->n_kids; i++) {
        const pfield *f = &m->kids[i];
        nb_err e = once(p, m, f);
        if (e)
            return e;
        if (!strcmp(f->name, "search_range_start"))
            e = get_float(p, f, 0, 100, true, &c->search_range_start);
        else if (!strcmp(f->name, "search_range_end"))
            e = get_float(p, f, 0, 100, true, &c->search_range_end);
        else if (!strcmp(f->name, "search_step"))
            e = get_float(p, f, 0, 10, true, &c->search_step);
        else if (!strcmp(f->name, "max_percentile"))
            e = get_float(p, f, 0.5, 1, true, &c->max_percentile);
        else if (!strcmp(f->name, "min_percentile"))
            e = get_float(p, f, 0.5, 1, true, &c->min_percentile);
        else if (!act_common(p, f, c, &e))
            e = unknown(p, f, "ifmr_quantize",
                        "search_range_start, search_range_end, search_step, max_percentile, "
                        "min_percentile, asymmetric, dst_type");
        if (e)
            return e;
    }
    if (c->search_range_end < c->search_range_start)
        return ferr(p, m, false, "ifmr_quantize: search_range_end %g is below "
                    "search_range_start %g", c->search_range_end, c->search_range_start);
    if (!((c->search_range_end - c->search_range_start) / c->search_step <= 100000))
        return ferr(p, m, false, "ifmr_quantize: more than 100000 search steps");
    return NB_OK;
}

static nb_err read_hfmg(parser *p, const pfield *m, nb_calib_cfg *c)
{
    c->act = NB_ACT_HFMG;
    for (int i = 0; i < m->n_kids; i++) {
        const pfield *f = &m->kids[i];
        nb_err e = once(p, m, f);
        long v = 0;
        if (e)
            return e;
        if (!strcmp(f->name, "num_of_bins")) {
            e = get_int(p, f, 1, 1 << 20, &v);
            if (!e && v != 1024 && v != 2048 && v != 4096 && v != 8192)
                e = ferr(p, f, true, "num_of_bins is 1024, 2048, 4096 or 8192, not %ld", v);
            if (!e)
                c->num_of_bins = (int)v;
        } else if (!act_common(p, f, c, &e))
            e = unknown(p, f, "hfmg_quantize", "num_of_bins, asymmetric, dst_type");
        if (e)
            return e;
    }
    return NB_OK;
}

/* A CalibrationConfig message into c (which holds the starting values). */
static nb_err read_calib(parser *p, const pfield *m, nb_calib_cfg *c)
{
    nb_err e = want_msg(p, m);
    const pfield *act = NULL, *wts = NULL, *wr = NULL;
    for (int i = 0; i < m->n_kids && !e; i++) {
        const pfield *f = &m->kids[i];
        if ((e = once(p, m, f)))
            break;
        bool is_act = !strcmp(f->name, "ifmr_quantize") || !strcmp(f->name, "hfmg_quantize");
        bool is_ada = !strcmp(f->name, "ada_quantize");
        bool is_wts = !strcmp(f->name, "arq_quantize") || is_ada;
        if (is_act && act)
            return ferr(p, f, false, "%s and %s are one choice (oneof acts_quant_algo)",
                        act->name, f->name);
        if (is_wts && wts)
            return ferr(p, f, false, "%s and %s are one choice (oneof wts_quant_algo)",
                        wts->name, f->name);
        if ((is_ada || !strcmp(f->name, "weight_round")) && wr)
            return ferr(p, f, false, "%s and %s both choose the rounding", wr->name, f->name);
        wts = is_wts ? f : wts;
        wr = is_ada || !strcmp(f->name, "weight_round") ? f : wr;
        if (!strcmp(f->name, "arq_quantize"))
            e = want_msg(p, f) ? NB_ERR_FORMAT : read_arq(p, f, c);
        else if (is_ada)
            e = want_msg(p, f) ? NB_ERR_FORMAT : read_ada(p, f, c);
        else if (!strcmp(f->name, "weight_round"))
            e = read_weight_round(p, f, c);
        else if (!strcmp(f->name, "ifmr_quantize")) {
            act = f;
            nb_calib_cfg d;
            nb_calib_defaults(&d); /* a new algorithm starts from its defaults */
            c->search_range_start = d.search_range_start, c->search_range_end = d.search_range_end;
            c->search_step = d.search_step, c->max_percentile = d.max_percentile;
            c->min_percentile = d.min_percentile;
            e = want_msg(p, f) ? NB_ERR_FORMAT : read_ifmr(p, f, c);
        } else if (!strcmp(f->name, "hfmg_quantize")) {
            act = f;
            c->num_of_bins = 4096;
            e = want_msg(p, f) ? NB_ERR_FORMAT : read_hfmg(p, f, c);
        } else
            e = unknown(p, f, "calibration_config", "arq_quantize, ada_quantize, weight_round, "
                        "ifmr_quantize, hfmg_quantize");
    }
    return e;
}

/* The keys of an override list, hashed (open addressing, FNV-1a) so that a config of N
 * overrides is read in O(N), not O(N^2) (issue 25: 200k entries took over a minute). The
 * slots hold indices into the list + 1; the table is at most half full. */
typedef struct keyset {
    int *slot;
    size_t cap;
} keyset;

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 1099511628211ull;
    return h;
}

/* The index of key in list, or -1; with add (and key absent), key's index n is entered.
 * False on NOMEM. */
static bool keyset_find(keyset *k, const nb_calib_override *list, int n, const char *key,
                        bool add, int *at)
{
    if (add && (size_t)(n + 1) * 2 > k->cap) {
        size_t cap = k->cap ? k->cap * 2 : 64;
        while ((size_t)(n + 1) * 2 > cap)
            cap *= 2;
        int *slot = calloc(cap, sizeof *slot);
        if (!slot)
            return false;
        for (int i = 0; i < n; i++) {
            size_t h = (size_t)fnv1a(list[i].key) & (cap - 1);
            while (slot[h])
                h = (h + 1) & (cap - 1);
            slot[h] = i + 1;
        }
        free(k->slot);
        k->slot = slot, k->cap = cap;
    }
    *at = -1;
    if (!k->cap)
        return true;
    size_t h = (size_t)fnv1a(key) & (k->cap - 1);
    for (; k->slot[h]; h = (h + 1) & (k->cap - 1))
        if (!strcmp(list[k->slot[h] - 1].key, key)) {
            *at = k->slot[h] - 1;
            return true;
        }
    if (add)
        k->slot[h] = n + 1;
    return true;
}

/* override_layer_types { layer_type: "T" calibration_config { ... } } (or layer_name). */
static nb_err read_override(parser *p, const pfield *m, const char *key_name,
                            const nb_calib_cfg *common, nb_calib_override **list, int *n,
                            int *cap, keyset *keys)
{
    nb_err e = want_msg(p, m);
    if (e)
        return e;
    char *key = NULL;
    const pfield *cfg = NULL;
    for (int i = 0; i < m->n_kids && !e; i++) {
        const pfield *f = &m->kids[i];
        if ((e = once(p, m, f)))
            break;
        if (!strcmp(f->name, key_name))
            e = get_string(p, f, &key);
        else if (!strcmp(f->name, "calibration_config"))
            cfg = f;
        else
            e = ferr(p, f, false, "unknown field '%s' in %s (known: %s, calibration_config)",
                     f->name, m->name, key_name);
    }
    if (!e && !key)
        e = ferr(p, m, false, "%s without %s", m->name, key_name);
    if (!e && !cfg)
        e = ferr(p, m, false, "%s without calibration_config", m->name);
    int twice = -1;
    if (!e && !keyset_find(keys, *list, *n, key, false, &twice))
        e = nb_fail(p->st, NB_ERR_NOMEM, "out of memory");
    if (!e && twice >= 0)
        e = ferr(p, m, false, "%s \"%s\" is given twice (first at line %d)", key_name, key,
                 (*list)[twice].line);
    nb_calib_override o = {.key = key, .cfg = *common, .line = m->line};
    o.cfg.weight_round_given = false; /* only what this override sets itself */
    if (!e)
        e = read_calib(p, cfg, &o.cfg);
    if (!e && !nb_grow((void **)list, cap, *n, sizeof **list))
        e = nb_fail(p->st, NB_ERR_NOMEM, "out of memory");
    if (!e) {
        (*list)[*n] = o;
        if (!keyset_find(keys, *list, *n, key, true, &twice))
            e = nb_fail(p->st, NB_ERR_NOMEM, "out of memory");
        (*n)++;
        key = NULL; /* the list owns it */
    }
    if (e)
        free(key);
    return e;
}

static nb_err read_config(parser *p, const pfield *root, nb_quant_config *c)
{
    static const char *const known =
        "batch_num, activation_offset, skip_layers, skip_layer_types, "
        "fakequant_precision_mode, do_fusion, skip_fusion_layers, common_config, "
        "override_layer_types, override_layer_configs, version";
    nb_err e = NB_OK;
    keyset type_keys = {0}, name_keys = {0};
    int type_cap = 0, name_cap = 0;
    /* common_config first: the overrides start from it wherever it is written */
    for (int i = 0; i < root->n_kids && !e; i++) {
        const pfield *f = &root->kids[i];
        if (!strcmp(f->name, "common_config") && !(e = once(p, root, f)))
            e = read_calib(p, f, &c->common);
    }
    for (int i = 0; i < root->n_kids && !e; i++) {
        const pfield *f = &root->kids[i];
        bool repeated = !strcmp(f->name, "skip_layers") || !strcmp(f->name, "skip_layer_types") ||
                        !strcmp(f->name, "skip_fusion_layers") ||
                        !strncmp(f->name, "override_layer_", 15);
        if (!repeated && (e = once(p, root, f)))
            break;
        long v = 0;
        if (!strcmp(f->name, "batch_num")) {
            if (!(e = get_int(p, f, 1, 1000000, &v))) {
                c->batch_num = (int)v;
                c->batch_num_set = true;
            }
        } else if (!strcmp(f->name, "activation_offset"))
            e = get_bool(p, f, &c->activation_offset);
        else if (!strcmp(f->name, "do_fusion"))
            e = get_bool(p, f, &c->do_fusion);
        else if (!strcmp(f->name, "version"))
            e = get_int(p, f, 1, 1, &v);
        else if (!strcmp(f->name, "fakequant_precision_mode")) {
            if (!(e = want_scalar(p, f))) {
                if (!f->quoted && !strcmp(f->text, "FORCE_FP16_QUANT"))
                    c->force_fp16_quant = true;
                else
                    e = ferr(p, f, true, "fakequant_precision_mode is FORCE_FP16_QUANT, not "
                             "'%s'", f->text);
            }
        } else if (!strcmp(f->name, "skip_layers"))
            e = add_string(p, f, &c->skip_layers, &c->n_skip_layers);
        else if (!strcmp(f->name, "skip_layer_types"))
            e = add_string(p, f, &c->skip_layer_types, &c->n_skip_types);
        else if (!strcmp(f->name, "skip_fusion_layers"))
            e = add_string(p, f, &c->skip_fusion_layers, &c->n_skip_fusion);
        else if (!strcmp(f->name, "common_config"))
            continue;
        else if (!strcmp(f->name, "override_layer_types"))
            e = read_override(p, f, "layer_type", &c->common, &c->by_type, &c->n_by_type,
                              &type_cap, &type_keys);
        else if (!strcmp(f->name, "override_layer_configs"))
            e = read_override(p, f, "layer_name", &c->common, &c->by_name, &c->n_by_name,
                              &name_cap, &name_keys);
        else
            e = unknown(p, f, "the config", known);
    }
    free(type_keys.slot);
    free(name_keys.slot);
    return e;
}

/* ---- public ---- */

void nb_calib_defaults(nb_calib_cfg *c)
{
    *c = (nb_calib_cfg){.channel_wise = true, .weight_bits = 8, .act = NB_ACT_IFMR,
                        .search_range_start = 0.7f, .search_range_end = 1.3f,
                        .search_step = 0.01f, .max_percentile = 0.999999f,
                        .min_percentile = 0.999999f, .num_of_bins = 4096, .asymmetric = -1,
                        .act_bits = 8, .weight_round = NB_ROUND_NEAREST};
    nb_ada_defaults(&c->ada);
}

void nb_quant_config_init(nb_quant_config *c)
{
    memset(c, 0, sizeof *c);
    c->batch_num = 1;
    c->activation_offset = true;
    c->do_fusion = true;
    nb_calib_defaults(&c->common);
}

nb_err nb_quant_config_parse(const char *text, size_t len, const char *path,
                             nb_quant_config *c, nb_status *st)
{
    nb_quant_config_init(c);
    parser p = {.s = text, .end = text + len, .path = path, .line = 1, .col = 1, .st = st};
    if (memchr(text, 0, len))
        return nb_fail(st, NB_ERR_FORMAT, "%s: a NUL byte: not a text file", path);
    pfield root = {.name = "config", .msg = true, .line = 1, .col = 1};
    nb_err e = parse_fields(&p, &root, 0);
    if (!e)
        e = read_config(&p, &root, c);
    root.name = NULL;
    pfield_free(&root);
    if (e)
        nb_quant_config_free(c);
    return e;
}

nb_err nb_quant_config_load(const char *path, nb_quant_config *c, nb_status *st)
{
    nb_quant_config_init(c);
    uint8_t *buf = NULL;
    size_t n = 0;
    nb_err e = nb_read_file(path, &buf, &n, st);
    if (!e)
        e = nb_quant_config_parse((const char *)buf, n, path, c, st);
    free(buf);
    return e;
}

static void free_list(char **l, int n)
{
    for (int i = 0; i < n; i++)
        free(l[i]);
    free(l);
}

void nb_quant_config_free(nb_quant_config *c)
{
    free_list(c->skip_layers, c->n_skip_layers);
    free_list(c->skip_layer_types, c->n_skip_types);
    free_list(c->skip_fusion_layers, c->n_skip_fusion);
    for (int i = 0; i < c->n_by_type; i++)
        free(c->by_type[i].key);
    for (int i = 0; i < c->n_by_name; i++)
        free(c->by_name[i].key);
    free(c->by_type);
    free(c->by_name);
    nb_quant_config_init(c);
}

const nb_calib_cfg *nb_quant_config_for(const nb_quant_config *c, const char *layer,
                                        const char *op_type)
{
    for (int i = 0; i < c->n_by_name; i++)
        if (!strcmp(c->by_name[i].key, layer))
            return &c->by_name[i].cfg;
    for (int i = 0; i < c->n_by_type; i++)
        if (!strcmp(c->by_type[i].key, op_type))
            return &c->by_type[i].cfg;
    return &c->common;
}

bool nb_quant_config_skips(const nb_quant_config *c, const char *layer, const char *op_type)
{
    for (int i = 0; i < c->n_skip_layers; i++)
        if (!strcmp(c->skip_layers[i], layer))
            return true;
    for (int i = 0; i < c->n_skip_types; i++)
        if (!strcmp(c->skip_layer_types[i], op_type))
            return true;
    return false;
}

const char *nb_act_algo_name(nb_act_algo a)
{
    switch (a) {
    case NB_ACT_IFMR: return "ifmr";
    case NB_ACT_HFMG: return "hfmg";
    case NB_ACT_MINMAX: return "minmax";
    case NB_ACT_PERCENTILE: return "percentile";
    case NB_ACT_KL: return "kl";
    case NB_ACT_AUTO: return "auto";
    }
    return "?";
}

bool nb_act_algo_parse(const char *name, nb_act_algo *a)
{
    static const nb_act_algo all[] = {NB_ACT_IFMR, NB_ACT_HFMG, NB_ACT_MINMAX,
                                      NB_ACT_PERCENTILE, NB_ACT_KL, NB_ACT_AUTO};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
        if (!strcmp(name, nb_act_algo_name(all[k]))) {
            *a = all[k];
            return true;
        }
    return false;
}
