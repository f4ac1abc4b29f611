/* nanobench TUI view-model: the pure parts of the workbench's screens (tables with sorting
 * and search, number formatting, sparklines, histogram bars, the arena map, progress rate
 * and ETA, the file picker's listing). No curses here: everything is tested by
 * tests/test_tui_vm.c. */
#ifndef NB_TUI_VM_H
#define NB_TUI_VM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- tables ---- */

#define VM_MAX_COLS 16

/* A row's tag: how the screen colours it (and a monochrome terminal marks it). */
enum { VM_TAG_NONE = 0, VM_TAG_GOOD = 1, VM_TAG_WARN = 2, VM_TAG_BAD = 3, VM_TAG_DIM = 4 };

typedef struct vm_col {
    char title[24];
    int width;    /* display width in cells (the frame may shrink the last column) */
    bool numeric; /* sorts by the number, right-aligned */
    bool keep_tail; /* a name too long for the column loses its start, not its end
                       (vm_fit_tail): layer, task and tensor names differ at the end */
} vm_col;

typedef struct vm_table {
    int ncols;
    vm_col cols[VM_MAX_COLS];
    int nrows, cap;
    char **cells;    /* nrows x ncols strings (owned), "" for none */
    double *nums;    /* nrows x ncols numbers for sorting; NAN when a cell has none */
    int *tags;       /* per row, VM_TAG_* for the whole row */
    int *celltags;   /* nrows x ncols, VM_TAG_* of one cell (a metric over its threshold) */
    int *order;      /* display position -> row index */
    int sort_col;    /* -1: insertion order */
    bool sort_desc;
    int sel;         /* selected display position, -1 when empty */
    int top;         /* first display position shown */
    char search[64]; /* the last '/' search */
    int left;        /* horizontal scroll: the first column shown after a frozen name
                        column (Left/Right keys, vm_table_layout) */
    bool more_right; /* the last drawing left columns out on the right */
} vm_table;

/* Sets the columns: titles and widths; numeric columns sort by value. Frees old rows. */
void vm_table_init(vm_table *t, int ncols, const char *const *titles, const int *widths,
                   const bool *numeric);
void vm_table_free(vm_table *t);
/* Removes all rows, keeps the columns. */
void vm_table_clear(vm_table *t);
/* Appends a row: cells[ncols] copied (NULL = ""), nums[ncols] (NULL: parsed from the
 * numeric cells with strtod, NAN when not a number). Returns the row index, -1 when out of
 * memory. */
int vm_table_add(vm_table *t, const char *const *cells, const double *nums, int tag);
/* The cell text of display position pos, column c ("" when out of range). */
const char *vm_table_cell(const vm_table *t, int pos, int c);
int vm_table_row_of(const vm_table *t, int pos); /* row index at display position pos */
/* Sorts the display by column col (stable; NaN last whichever the direction; text columns
 * by strcmp). col -1 restores insertion order. The selected row stays selected. */
void vm_table_sort(vm_table *t, int col, bool desc);
/* Moves the selection by delta rows (clamped) and scrolls so it is inside a window of
 * page rows. */
void vm_table_move(vm_table *t, int delta, int page);
/* Selects display position pos (clamped) and scrolls it into a window of page rows. */
void vm_table_select(vm_table *t, int pos, int page);
/* Case-insensitive substring search over every cell, starting after display position
 * from and wrapping (dir +1 forward, -1 backward). Returns the display position found or
 * -1. */
int vm_table_find(const vm_table *t, const char *text, int from, int dir);

/* The narrowest a name (keep_tail) column shrinks to when the columns do not all fit. */
#define VM_NAME_MIN 16

/* How table t is drawn in wd cells (issue 38: no value cut at 80x24). Every column is as
 * wide as its width or its widest cell (header aside), so that a number or a shape is never
 * cut; when they do not all fit, the keep_tail (name) columns shrink first, down to
 * VM_NAME_MIN cells (their names lose their start, vm_fit_tail). A keep_tail column 0 stays
 * (frozen); the other columns are shown from t->left on (clamped into *left), whole or not
 * at all, 3 cells kept at the right for the scroll hint when some are left out (only a
 * name column, or the first column shown, is ever cut to the room). Characters count as
 * cells (UTF-8 sequences as one when utf8). x[i], w[i], col[i] (VM_MAX_COLS each) take
 * the offset, width and column index of each column shown; *more_right whether columns
 * are left out on the right. Returns the count of columns shown. */
int vm_table_layout(const vm_table *t, int wd, bool utf8, int *x, int *w, int *col, int *left,
                    bool *more_right);

/* ---- fitting text into a column ---- */

/* s in at most width cells, keeping its end: s itself when it fits, else a mark ("\u2026"
 * when utf8, else "~") and the last width-1 characters. Characters are counted as cells
 * (UTF-8 sequences as one when utf8, bytes otherwise). out gets at most len-1 bytes;
 * returns the cells of out. */
int vm_fit_tail(char *out, size_t len, const char *s, int width, bool utf8);
/* A column header in at most width cells: the title, and when sort is not 0 a space and
 * the sort mark (ascending sort > 0: "\u25b2" or "^", descending: "\u25bc" or "v"), the
 * title shortened to keep the mark. Returns the cells of out. */
int vm_header(char *out, size_t len, const char *title, int width, int sort, bool utf8);

/* ---- formatting ---- */

/* Bytes as "812 B", "14.2 KiB", "1.34 MiB" (1 KiB = 1024 B, three significant digits), the
 * units the CLI prints. */
void vm_fmt_bytes(char *buf, size_t len, double bytes);
/* A number in at most width characters: %.*g with as many digits as fit, "nan"/"inf". */
void vm_fmt_num(char *buf, size_t len, double v, int width);
/* Milliseconds as "0.38 ms", "13.6 ms", "1.20 s". */
void vm_fmt_ms(char *buf, size_t len, double ms);

/* ---- sparkline and bars ---- */

/* One level 0..7 per value between lo and hi (below lo: 0, above hi: 7, NaN: -1), for a
 * sparkline of cosine along the depth. */
int vm_spark_level(double v, double lo, double hi);
/* The sparkline of n values as text: UTF-8 block characters U+2581..U+2588 when utf8,
 * else the ASCII ramp "_.-=+*#@"; NaN as ' '. out gets at most len-1 bytes; returns the
 * number of cells written. */
int vm_sparkline(const double *v, int n, double lo, double hi, bool utf8, char *out, size_t len);
/* Bar length in cells, 0..width, of value against max (rounded to nearest; a positive
 * value gets at least 1 cell). */
int vm_bar_len(double value, double max, int width);

/* ---- histogram ---- */

/* Counts of v[n] in bins equal-width bins over [lo, hi] (hi inclusive in the last bin;
 * values outside and NaN not counted). Returns the number counted. */
int64_t vm_hist(const double *v, int64_t n, double lo, double hi, int bins, int64_t *counts);

/* ---- the arena map ---- */

typedef struct vm_arena_tensor {
    const char *name;
    int64_t offset, bytes; /* in the arena */
    int first, last;       /* task indices, inclusive */
} vm_arena_tensor;

/* The task where the live bytes (sum over tensors with first <= task <= last) are
 * largest; *peak_bytes takes them. -1 when n == 0. */
int vm_arena_peak(const vm_arena_tensor *ts, int n, int64_t *peak_bytes);
/* Rasterizes the map into rows x cols cells, row 0 = arena offset 0, column = task
 * (ntasks spread over cols): grid[r * cols + c] = index of a tensor covering that cell (the first
 * in ts when several do), or -1. arena_bytes is the arena's size (offset axis). */
void vm_arena_grid(const vm_arena_tensor *ts, int n, int ntasks, int64_t arena_bytes, int rows,
                   int cols, int *grid);

/* ---- progress ---- */

/* Rate (items per second) and ETA (seconds, -1 when unknown) of done out of total after
 * elapsed seconds. */
void vm_progress(int64_t done, int64_t total, double elapsed, double *rate, double *eta);

/* ---- the file picker's listing ---- */

typedef struct vm_dirent {
    char name[256];
    bool dir;
} vm_dirent;

/* Lists path: ".." first (unless path is "/"), then folders, then files whose name ends
 * with suffix (case-insensitive; NULL: all), each group sorted by name; hidden entries (".x") left out.
 * *out is malloc'd. Returns the count, -1 when the folder cannot be read (errno set). */
int vm_list_dir(const char *path, const char *suffix, vm_dirent **out);

/* `history diff`'s text (app/cmd_history.c: "%-28s %-30s %-30s" lines, then "metrics")
 * for a viewer width cells wide: each line before "metrics" longer than width (trailing
 * blanks aside) folded into its key (no key line for the header lines), then
 * "    A  <A's value>" and "    B  <B's value>" lines,
 * so that B's value is never past the right edge at 80 columns (issue 38). A value with
 * blanks is taken whole when it fits its 30-character column; a longer one ends at its first
 * blank. Returns a malloc'd text (NULL when out of memory). */
char *vm_diff_fold(const char *text, int width);

/* Where to cut s, n bytes of which fit in the room: n, or the end of the word before a word
 * holding a digit that the cut would split (blanks before it dropped), so that a number is
 * shown whole or not at all ("max |diff| 2.674e-" at 80x24, issue 26); a cut between words,
 * or inside the first word, stays at n. */
/* A unit of at most 3 letters right after a number ("4.25 KiB") goes with it: a cut inside
 * it drops the number too ("arena 4.25 K" at 80x24, issue 38). */
size_t vm_whole_numbers(const char *s, size_t n);

#endif
