/* nanobench TUI view-model: tables with sorting and search, number formatting, sparklines,
 * bars, histograms, the arena map, progress, the file picker's listing (vm.h). No curses;
 * tested by tests/test_tui_vm.c. */
#define _DEFAULT_SOURCE
#include "vm.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- tables ---- */

static void rows_free(vm_table *t)
{
    if (t->cells)
        for (int i = 0; i < t->nrows * t->ncols; i++)
            free(t->cells[i]);
    free(t->cells);
    free(t->nums);
    free(t->tags);
    free(t->celltags);
    free(t->order);
    t->cells = NULL;
    t->nums = NULL;
    t->tags = t->celltags = t->order = NULL;
    t->nrows = t->cap = 0;
    t->sel = -1;
    t->top = 0;
}

void vm_table_init(vm_table *t, int ncols, const char *const *titles, const int *widths,
                   const bool *numeric)
{
    rows_free(t);
    if (ncols < 0)
        ncols = 0;
    if (ncols > VM_MAX_COLS)
        ncols = VM_MAX_COLS;
    memset(t->cols, 0, sizeof t->cols);
    t->ncols = ncols;
    for (int c = 0; c < ncols; c++) {
        snprintf(t->cols[c].title, sizeof t->cols[c].title, "%s", titles && titles[c] ? titles[c] : "");
        t->cols[c].width = widths ? widths[c] : (int)strlen(t->cols[c].title) + 2;
        t->cols[c].numeric = numeric ? numeric[c] : false;
    }
    t->sort_col = -1;
    t->sort_desc = false;
    t->sel = -1;
    t->top = 0;
    t->search[0] = 0;
    t->left = 0;
    t->more_right = false;
}

void vm_table_free(vm_table *t)
{
    rows_free(t);
}

void vm_table_clear(vm_table *t)
{
    if (t->cells)
        for (int i = 0; i < t->nrows * t->ncols; i++) {
            free(t->cells[i]);
            t->cells[i] = NULL;
        }
    t->nrows = 0;
    t->sel = -1;
    t->top = 0;
}

/* Orders rows a and b for the display under the table's sort: < 0 when a comes first.
 * NaN last in both directions; ties keep insertion order. */
static int row_cmp(const vm_table *t, int a, int b)
{
    int c = t->sort_col;
    int r = 0;
    if (c >= 0 && c < t->ncols) {
        if (t->cols[c].numeric) {
            double x = t->nums[a * t->ncols + c], y = t->nums[b * t->ncols + c];
            bool nx = isnan(x), ny = isnan(y);
            if (nx || ny)
                r = nx && ny ? 0 : nx ? 1 : -1;
            else {
                r = x < y ? -1 : x > y ? 1 : 0;
                if (t->sort_desc)
                    r = -r;
            }
        } else {
            r = strcmp(t->cells[a * t->ncols + c], t->cells[b * t->ncols + c]);
            r = r < 0 ? -1 : r > 0 ? 1 : 0;
            if (t->sort_desc)
                r = -r;
        }
    }
    if (r == 0)
        r = a < b ? -1 : a > b ? 1 : 0;
    return r;
}

static bool grow(vm_table *t, int need)
{
    if (need <= t->cap)
        return true;
    int cap = t->cap ? t->cap * 2 : 16;
    while (cap < need)
        cap *= 2;
    size_t nc = (size_t)cap * (size_t)(t->ncols ? t->ncols : 1);
    char **cells = realloc(t->cells, nc * sizeof *cells);
    if (!cells)
        return false;
    t->cells = cells;
    double *nums = realloc(t->nums, nc * sizeof *nums);
    if (!nums)
        return false;
    t->nums = nums;
    int *celltags = realloc(t->celltags, nc * sizeof *celltags);
    if (!celltags)
        return false;
    t->celltags = celltags;
    int *tags = realloc(t->tags, (size_t)cap * sizeof *tags);
    if (!tags)
        return false;
    t->tags = tags;
    int *order = realloc(t->order, (size_t)cap * sizeof *order);
    if (!order)
        return false;
    t->order = order;
    t->cap = cap;
    return true;
}

int vm_table_add(vm_table *t, const char *const *cells, const double *nums, int tag)
{
    if (!grow(t, t->nrows + 1))
        return -1;
    int r = t->nrows, nc = t->ncols;
    for (int c = 0; c < nc; c++) {
        const char *s = cells && cells[c] ? cells[c] : "";
        char *d = strdup(s);
        if (!d) {
            for (int k = 0; k < c; k++)
                free(t->cells[r * nc + k]);
            return -1;
        }
        t->cells[r * nc + c] = d;
        double v = NAN;
        if (nums)
            v = nums[c];
        else if (t->cols[c].numeric) {
            char *end;
            while (isspace((unsigned char)*s))
                s++;
            v = strtod(s, &end);
            if (end == s)
                v = NAN;
        }
        t->nums[r * nc + c] = v;
        t->celltags[r * nc + c] = VM_TAG_NONE;
    }
    t->tags[r] = tag;
    t->nrows++;
    /* its display position: after every row that sorts before it (binary search; the
       insertion order breaks ties, so a new row goes after its equals) */
    int lo = 0, hi = r;
    if (t->sort_col >= 0)
        while (lo < hi) {
            int mid = (lo + hi) / 2;
            if (row_cmp(t, t->order[mid], r) < 0)
                lo = mid + 1;
            else
                hi = mid;
        }
    else
        lo = r;
    memmove(t->order + lo + 1, t->order + lo, (size_t)(r - lo) * sizeof *t->order);
    t->order[lo] = r;
    if (t->sel < 0)
        t->sel = 0;
    else if (lo <= t->sel && t->nrows > 1)
        t->sel++; /* the selected row moved down by one */
    return r;
}

const char *vm_table_cell(const vm_table *t, int pos, int c)
{
    if (pos < 0 || pos >= t->nrows || c < 0 || c >= t->ncols)
        return "";
    const char *s = t->cells[t->order[pos] * t->ncols + c];
    return s ? s : "";
}

int vm_table_row_of(const vm_table *t, int pos)
{
    if (pos < 0 || pos >= t->nrows)
        return -1;
    return t->order[pos];
}

/* merge sort of order[0..n) by row_cmp (stable; row_cmp is total anyway) */
static void msort(const vm_table *t, int *a, int *tmp, int n)
{
    if (n < 2)
        return;
    int h = n / 2;
    msort(t, a, tmp, h);
    msort(t, a + h, tmp, n - h);
    int i = 0, j = h, k = 0;
    while (i < h && j < n)
        tmp[k++] = row_cmp(t, a[j], a[i]) < 0 ? a[j++] : a[i++];
    while (i < h)
        tmp[k++] = a[i++];
    while (j < n)
        tmp[k++] = a[j++];
    memcpy(a, tmp, (size_t)n * sizeof *a);
}

void vm_table_sort(vm_table *t, int col, bool desc)
{
    if (col >= t->ncols)
        col = -1;
    int selrow = vm_table_row_of(t, t->sel);
    t->sort_col = col < 0 ? -1 : col;
    t->sort_desc = desc;
    if (t->nrows == 0)
        return;
    if (t->sort_col < 0) {
        for (int i = 0; i < t->nrows; i++)
            t->order[i] = i;
    } else {
        int *tmp = malloc((size_t)t->nrows * sizeof *tmp);
        if (tmp) {
            msort(t, t->order, tmp, t->nrows);
            free(tmp);
        } else { /* insertion sort without memory */
            for (int i = 1; i < t->nrows; i++) {
                int v = t->order[i], j = i;
                while (j > 0 && row_cmp(t, v, t->order[j - 1]) < 0) {
                    t->order[j] = t->order[j - 1];
                    j--;
                }
                t->order[j] = v;
            }
        }
    }
    if (selrow >= 0)
        for (int i = 0; i < t->nrows; i++)
            if (t->order[i] == selrow) {
                t->sel = i;
                break;
            }
}

void vm_table_select(vm_table *t, int pos, int page)
{
    if (t->nrows == 0) {
        t->sel = -1;
        t->top = 0;
        return;
    }
    if (pos < 0)
        pos = 0;
    if (pos >= t->nrows)
        pos = t->nrows - 1;
    t->sel = pos;
    if (page < 1)
        page = 1;
    if (t->sel < t->top)
        t->top = t->sel;
    if (t->sel >= t->top + page)
        t->top = t->sel - page + 1;
    /* no empty space below the last row when the table is longer than the page */
    if (t->top > t->nrows - page)
        t->top = t->nrows - page;
    if (t->top < 0)
        t->top = 0;
}

void vm_table_move(vm_table *t, int delta, int page)
{
    int pos = t->sel < 0 ? 0 : t->sel;
    /* clamp without overflowing on INT_MAX/INT_MIN deltas */
    if (delta > 0 && pos > t->nrows - 1 - delta)
        pos = t->nrows - 1;
    else if (delta < 0 && (int64_t)pos < -(int64_t)delta)
        pos = 0;
    else
        pos += delta;
    vm_table_select(t, pos, page);
}

/* case-insensitive substring test */
static bool contains_ci(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    if (n == 0)
        return true;
    for (; *hay; hay++) {
        size_t i = 0;
        while (i < n && hay[i] &&
               tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i]))
            i++;
        if (i == n)
            return true;
        if (!hay[i])
            return false;
    }
    return false;
}

int vm_table_find(const vm_table *t, const char *text, int from, int dir)
{
    int n = t->nrows;
    if (!text || !*text || n == 0)
        return -1;
    dir = dir < 0 ? -1 : 1;
    if (from < 0 || from >= n)
        from = dir > 0 ? n - 1 : 0; /* the next position is then the first / the last */
    for (int k = 1; k <= n; k++) {
        int pos = ((from + dir * k) % n + n) % n;
        for (int c = 0; c < t->ncols; c++)
            if (contains_ci(vm_table_cell(t, pos, c), text))
                return pos;
    }
    return -1;
}

/* ---- formatting ---- */

/* v (>= 0) with three significant digits: 1.50, 14.2, 812 */
static void fmt3(char *buf, size_t len, double v, const char *unit)
{
    if (v < 9.995)
        snprintf(buf, len, "%.2f %s", v, unit);
    else if (v < 99.95)
        snprintf(buf, len, "%.1f %s", v, unit);
    else
        snprintf(buf, len, "%.0f %s", v, unit);
}

/* ---- fitting text into a column ---- */

/* the characters of s: UTF-8 sequences (lead bytes) when utf8, else bytes */
static int chars_of(const char *s, bool utf8)
{
    int n = 0;
    for (; *s; s++)
        n += !utf8 || ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

/* the byte offset of character k of s */
static size_t char_at(const char *s, int k, bool utf8)
{
    size_t i = 0;
    if (!utf8)
        return (size_t)k;
    for (int c = 0; s[i]; i++)
        if (((unsigned char)s[i] & 0xC0) != 0x80 && c++ == k)
            break;
    return i;
}

int vm_fit_tail(char *out, size_t len, const char *s, int width, bool utf8)
{
    if (!len)
        return 0;
    out[0] = 0;
    if (!s || width <= 0)
        return 0;
    int n = chars_of(s, utf8);
    if (n <= width) {
        snprintf(out, len, "%s", s);
        return n;
    }
    const char *mark = utf8 ? "\u2026" : "~";
    snprintf(out, len, "%s%s", mark, s + char_at(s, n - (width - 1), utf8));
    return width;
}

int vm_table_layout(const vm_table *t, int wd, bool utf8, int *x, int *w, int *col, int *left,
                    bool *more_right)
{
    int lf = t ? t->left : 0; /* read first: left may be &t->left */
    *more_right = false;
    *left = 0;
    if (!t || t->ncols <= 0 || wd <= 0)
        return 0;
    int need[VM_MAX_COLS];
    for (int c = 0; c < t->ncols; c++) {
        need[c] = t->cols[c].width > 0 ? t->cols[c].width : 1;
        if (t->cols[c].keep_tail || !t->cells)
            continue;
        for (int r = 0; r < t->nrows; r++) {
            const char *s = t->cells[(size_t)r * (size_t)t->ncols + (size_t)c];
            int n = s ? chars_of(s, utf8) : 0;
            if (n > need[c])
                need[c] = n;
        }
    }
    int frozen = t->ncols > 1 && t->cols[0].keep_tail ? 1 : 0;
    if (lf > t->ncols - frozen - 1)
        lf = t->ncols - frozen - 1;
    if (lf < 0)
        lf = 0;
    *left = lf;
    int order[VM_MAX_COLS], no = 0, total = -1;
    for (int c = 0; c < t->ncols; c++)
        if (c < frozen || c >= frozen + lf) {
            order[no++] = c;
            total += need[c] + 1;
        }
    /* the names shrink first */
    for (int k = 0; k < no && total > wd; k++) {
        int c = order[k];
        if (!t->cols[c].keep_tail || need[c] <= VM_NAME_MIN)
            continue;
        int cut = need[c] - VM_NAME_MIN;
        if (cut > total - wd)
            cut = total - wd;
        need[c] -= cut;
        total -= cut;
    }
    int room = lf > 0 || total > wd ? wd - 3 : wd;
    if (room < 1)
        room = wd;
    int n = 0, pos = 0;
    for (int k = 0; k < no; k++) {
        int c = order[k], cw = need[c];
        if (pos + cw > room) {
            /* a name in what is left (at least half its least), or the only column */
            if (n == 0 || (t->cols[c].keep_tail && room - pos >= VM_NAME_MIN / 2))
                cw = room - pos;
            else
                cw = 0;
            if (cw > 0) {
                x[n] = pos, w[n] = cw, col[n] = c;
                n++;
                k++;
            }
            *more_right = k < no;
            break;
        }
        x[n] = pos, w[n] = cw, col[n] = c;
        n++;
        pos += cw + 1;
    }
    return n;
}

int vm_header(char *out, size_t len, const char *title, int width, int sort, bool utf8)
{
    if (!len)
        return 0;
    out[0] = 0;
    if (width <= 0)
        return 0;
    if (!title)
        title = "";
    int n = chars_of(title, utf8);
    if (!sort) {
        size_t b = char_at(title, n < width ? n : width, utf8);
        snprintf(out, len, "%.*s", (int)b, title);
        return n < width ? n : width;
    }
    const char *mark = sort > 0 ? (utf8 ? "\u25b2" : "^") : (utf8 ? "\u25bc" : "v");
    if (width < 2 || !n) { /* the mark alone */
        snprintf(out, len, "%s", mark);
        return 1;
    }
    int keep = n < width - 2 ? n : width - 2;
    size_t b = char_at(title, keep, utf8);
    snprintf(out, len, "%.*s%s%s", (int)b, title, keep ? " " : "", mark);
    return keep + (keep ? 2 : 1);
}

void vm_fmt_bytes(char *buf, size_t len, double bytes)
{
    static const char *const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
    if (!len)
        return;
    if (isnan(bytes)) {
        snprintf(buf, len, "nan");
        return;
    }
    if (isinf(bytes)) {
        snprintf(buf, len, bytes < 0 ? "-inf" : "inf");
        return;
    }
    const char *sign = bytes < 0 ? "-" : "";
    double a = fabs(bytes);
    if (a < 1024) {
        snprintf(buf, len, "%s%.0f B", sign, a);
        return;
    }
    int u = 0;
    a /= 1024;
    while (a >= 1024 && u < 4) {
        a /= 1024;
        u++;
    }
    char tmp[48];
    fmt3(tmp, sizeof tmp, a, units[u]);
    snprintf(buf, len, "%s%s", sign, tmp);
}

void vm_fmt_num(char *buf, size_t len, double v, int width)
{
    if (!len)
        return;
    if (width < 1)
        width = 1;
    if ((size_t)width >= len)
        width = (int)len - 1;
    char tmp[64];
    if (isnan(v))
        snprintf(tmp, sizeof tmp, "nan");
    else if (isinf(v))
        snprintf(tmp, sizeof tmp, v < 0 ? "-inf" : "inf");
    else {
        int p;
        for (p = 10; p >= 1; p--) {
            snprintf(tmp, sizeof tmp, "%.*g", p, v);
            if ((int)strlen(tmp) <= width)
                break;
        }
        if (p < 1) { /* nothing fits: '*' as wide as allowed */
            memset(tmp, '*', (size_t)width);
            tmp[width] = 0;
        }
    }
    if ((int)strlen(tmp) > width)
        tmp[width] = 0;
    snprintf(buf, len, "%s", tmp);
}

void vm_fmt_ms(char *buf, size_t len, double ms)
{
    if (!len)
        return;
    if (isnan(ms)) {
        snprintf(buf, len, "nan");
        return;
    }
    if (isinf(ms)) {
        snprintf(buf, len, ms < 0 ? "-inf" : "inf");
        return;
    }
    double a = fabs(ms);
    const char *sign = ms < 0 ? "-" : "";
    char tmp[48];
    if (a > 0 && a < 0.01)
        snprintf(tmp, sizeof tmp, "%.2g ms", a);
    else if (a < 999.5)
        fmt3(tmp, sizeof tmp, a, "ms");
    else
        fmt3(tmp, sizeof tmp, a / 1000, "s");
    snprintf(buf, len, "%s%s", sign, tmp);
}

/* ---- sparkline and bars ---- */

int vm_spark_level(double v, double lo, double hi)
{
    if (isnan(v))
        return -1;
    if (v <= lo && v < hi)
        return 0;
    if (v >= hi)
        return 7;
    int l = (int)floor((v - lo) / (hi - lo) * 8);
    return l < 0 ? 0 : l > 7 ? 7 : l;
}

int vm_sparkline(const double *v, int n, double lo, double hi, bool utf8, char *out, size_t len)
{
    static const char ramp[] = "_.-=+*#@";
    if (!len)
        return 0;
    size_t o = 0;
    int cells = 0;
    for (int i = 0; i < n; i++) {
        int l = vm_spark_level(v[i], lo, hi);
        if (l < 0 || !utf8) {
            if (o + 1 > len - 1)
                break;
            out[o++] = l < 0 ? ' ' : ramp[l];
        } else {
            if (o + 3 > len - 1)
                break;
            out[o++] = (char)0xE2; /* U+2581 + l: E2 96 81+l */
            out[o++] = (char)0x96;
            out[o++] = (char)(0x81 + l);
        }
        cells++;
    }
    out[o] = 0;
    return cells;
}

int vm_bar_len(double value, double max, int width)
{
    if (width <= 0 || !(value > 0) || !(max > 0))
        return 0;
    double f = value / max * width;
    int l = f >= width ? width : (int)floor(f + 0.5);
    return l < 1 ? 1 : l;
}

/* ---- histogram ---- */

int64_t vm_hist(const double *v, int64_t n, double lo, double hi, int bins, int64_t *counts)
{
    if (bins <= 0)
        return 0;
    memset(counts, 0, (size_t)bins * sizeof *counts);
    if (!(hi >= lo))
        return 0;
    int64_t counted = 0;
    for (int64_t i = 0; i < n; i++) {
        double x = v[i];
        if (!(x >= lo && x <= hi))
            continue;
        int b;
        if (hi == lo || x == hi)
            b = bins - 1;
        else {
            b = (int)floor((x - lo) / (hi - lo) * bins);
            if (b >= bins)
                b = bins - 1;
            if (b < 0)
                b = 0;
        }
        counts[b]++;
        counted++;
    }
    return counted;
}

/* ---- the arena map ---- */

int vm_arena_peak(const vm_arena_tensor *ts, int n, int64_t *peak_bytes)
{
    int best = -1;
    int64_t bestb = 0;
    /* the live bytes only grow where a tensor starts: try each first task */
    for (int i = 0; i < n; i++) {
        int task = ts[i].first;
        int64_t live = 0;
        for (int k = 0; k < n; k++)
            if (ts[k].first <= task && task <= ts[k].last)
                live += ts[k].bytes;
        if (best < 0 || live > bestb || (live == bestb && task < best)) {
            best = task;
            bestb = live;
        }
    }
    if (peak_bytes)
        *peak_bytes = best < 0 ? 0 : bestb;
    return best;
}

void vm_arena_grid(const vm_arena_tensor *ts, int n, int ntasks, int64_t arena_bytes, int rows,
                   int cols, int *grid)
{
    if (rows <= 0 || cols <= 0)
        return;
    for (int i = 0; i < rows * cols; i++)
        grid[i] = -1;
    if (arena_bytes <= 0) /* unknown: the end of the highest tensor */
        for (int k = 0; k < n; k++)
            if (ts[k].offset + ts[k].bytes > arena_bytes)
                arena_bytes = ts[k].offset + ts[k].bytes;
    if (ntasks <= 0) /* unknown: after the last task used */
        for (int k = 0; k < n; k++)
            if (ts[k].last + 1 > ntasks)
                ntasks = ts[k].last + 1;
    if (arena_bytes <= 0 || ntasks <= 0)
        return;
    for (int r = 0; r < rows; r++) {
        /* row r: offsets [r A / rows, (r + 1) A / rows) */
        double olo = (double)r * (double)arena_bytes / rows;
        double ohi = (double)(r + 1) * (double)arena_bytes / rows;
        for (int c = 0; c < cols; c++) {
            /* column c: tasks [c T / cols, (c + 1) T / cols) */
            double tlo = (double)c * ntasks / cols, thi = (double)(c + 1) * ntasks / cols;
            for (int k = 0; k < n; k++) {
                if (ts[k].bytes <= 0)
                    continue;
                if ((double)ts[k].offset < ohi && (double)(ts[k].offset + ts[k].bytes) > olo &&
                    (double)ts[k].first < thi && (double)ts[k].last + 1 > tlo) {
                    grid[r * cols + c] = k;
                    break;
                }
            }
        }
    }
}

/* ---- progress ---- */

void vm_progress(int64_t done, int64_t total, double elapsed, double *rate, double *eta)
{
    double r = elapsed > 0 && done > 0 ? (double)done / elapsed : 0;
    double e = -1;
    if (total > 0 && done >= total)
        e = 0;
    else if (total > 0 && r > 0)
        e = (double)(total - done) / r;
    if (rate)
        *rate = r;
    if (eta)
        *eta = e;
}

/* ---- the file picker's listing ---- */

static bool ends_with_ci(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    if (b > a)
        return false;
    for (size_t i = 0; i < b; i++)
        if (tolower((unsigned char)s[a - b + i]) != tolower((unsigned char)suffix[i]))
            return false;
    return true;
}

static int dirent_cmp(const void *a, const void *b)
{
    const vm_dirent *x = a, *y = b;
    if (x->dir != y->dir)
        return x->dir ? -1 : 1;
    return strcmp(x->name, y->name);
}

int vm_list_dir(const char *path, const char *suffix, vm_dirent **out)
{
    *out = NULL;
    DIR *d = opendir(path && *path ? path : ".");
    if (!d)
        return -1;
    int n = 0, cap = 0;
    vm_dirent *v = NULL;
    bool root = path && !strcmp(path, "/");
    if (!root) {
        cap = 32;
        v = malloc((size_t)cap * sizeof *v);
        if (!v) {
            closedir(d);
            errno = ENOMEM;
            return -1;
        }
        snprintf(v[0].name, sizeof v[0].name, "..");
        v[0].dir = true;
        n = 1;
    }
    struct dirent *e;
    char full[4096];
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue; /* hidden, "." and ".." */
        if (strlen(e->d_name) >= sizeof v->name)
            continue;
        snprintf(full, sizeof full, "%s/%s", path && *path ? path : ".", e->d_name);
        struct stat st;
        bool dir = stat(full, &st) == 0 && S_ISDIR(st.st_mode);
        if (!dir && suffix && *suffix && !ends_with_ci(e->d_name, suffix))
            continue;
        if (n == cap) {
            int nc = cap ? cap * 2 : 32;
            vm_dirent *nv = realloc(v, (size_t)nc * sizeof *nv);
            if (!nv) {
                free(v);
                closedir(d);
                errno = ENOMEM;
                return -1;
            }
            v = nv;
            cap = nc;
        }
        snprintf(v[n].name, sizeof v[n].name, "%s", e->d_name);
        v[n].dir = dir;
        n++;
    }
    closedir(d);
    int skip = root ? 0 : 1;
    if (n > skip)
        qsort(v + skip, (size_t)(n - skip), sizeof *v, dirent_cmp);
    if (!v) { /* "/" with nothing in it */
        v = malloc(sizeof *v);
        if (!v) {
            errno = ENOMEM;
            return -1;
        }
    }
    *out = v;
    return n;
}

/* one line "KEY A B" of a diff folded into out (o: its length so far) */
static size_t fold_line(const char *l, size_t n, char *out, size_t o)
{
    size_t vs = 29; /* the values after a 28-character key and a blank */
    if (n <= vs || l[28] != ' ') { /* a longer key: up to its first blank after "* " */
        vs = 2;
        while (vs < n && l[vs] != ' ')
            vs++;
        while (vs < n && l[vs] == ' ')
            vs++;
    }
    size_t ke = vs;
    while (ke > 0 && l[ke - 1] == ' ')
        ke--;
    const char *r = l + vs;
    size_t rn = n - vs, ae, bs;
    if (rn > 31 && r[30] == ' ' && r[31] != ' ') { /* A in its column, B at its place */
        ae = 30;
        bs = 31;
    } else { /* a longer A: up to its first blank */
        ae = 0;
        while (ae < rn && r[ae] != ' ')
            ae++;
        bs = ae;
        while (bs < rn && r[bs] == ' ')
            bs++;
    }
    while (ae > 0 && r[ae - 1] == ' ')
        ae--;
    if (ke) /* the header lines have no key */
        o += (size_t)sprintf(out + o, "%.*s\n", (int)ke, l);
    o += (size_t)sprintf(out + o, "    A  %.*s\n    B  %.*s\n", (int)ae, r, (int)(rn - bs), r + bs);
    return o;
}

char *vm_diff_fold(const char *text, int width)
{
    if (!text)
        text = "";
    size_t len = strlen(text);
    char *out = malloc(len * 2 + 64); /* a fold adds at most 14 bytes to a line of 30 or more */
    if (!out)
        return NULL;
    size_t o = 0;
    bool values = true; /* before "metrics" */
    for (const char *p = text; *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        if (!strncmp(p, "metrics", 7))
            values = false;
        size_t tn = n;
        while (tn > 0 && p[tn - 1] == ' ')
            tn--;
        if (values && (int)tn > width && tn > 29)
            o = fold_line(p, tn, out, o);
        else {
            memcpy(out + o, p, n);
            o += n;
            out[o++] = '\n';
        }
        p += n + (nl ? 1 : 0);
    }
    out[o] = 0;
    return out;
}

/* s[a..e) is a unit (B, KiB, ms, dB, MHz: 1 to 3 letters) right after a number and a blank */
static bool unit_after_number(const char *s, size_t a, size_t e)
{
    if (e <= a || e - a > 3 || a < 2 || s[a - 1] != ' ' || s[a - 2] < '0' || s[a - 2] > '9')
        return false;
    for (size_t i = a; i < e; i++)
        if (!((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z')))
            return false;
    return true;
}

size_t vm_whole_numbers(const char *s, size_t n)
{
    if (!s[n] || n == 0 || s[n] == ' ')
        return n; /* the cut falls at the end of a word */
    size_t a = n, e = n;
    while (a > 0 && s[a - 1] != ' ')
        a--;
    while (s[e] && s[e] != ' ')
        e++;
    if (unit_after_number(s, a, e)) { /* the number goes with its unit */
        a--;
        while (a > 0 && s[a - 1] == ' ')
            a--;
        while (a > 0 && s[a - 1] != ' ')
            a--;
        if (a == 0)
            return n;
    } else if (a == n) {
        return n; /* the cut falls between words */
    }
    bool digit = false;
    for (size_t i = a; i < e && !digit; i++)
        digit = s[i] >= '0' && s[i] <= '9';
    if (!digit || a == 0)
        return n; /* a word without digits, or the only one: cut as it falls */
    while (a > 0 && s[a - 1] == ' ')
        a--;
    return a;
}
