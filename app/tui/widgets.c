/* nanobench TUI: widgets. The table view and its keys, forms (libform), the status-line
 * prompt, the file picker (libmenu over vm_list_dir), the text viewer and the yes/no
 * question (panels). Every modal loop keeps reading the running job (tui_tick) and
 * redraws the frame under it, so a resize or a job's progress shows while it waits. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <wchar.h>

#include <ncursesw/form.h>
#include <ncursesw/menu.h>
#include <ncursesw/panel.h>

#include "tui.h"

#define KEY_ESC 27

/* ---- text ---- */

static int text_cells(const tui *t, const char *s);
static size_t fit_bytes(const tui *t, const char *s, int width);

int tui_put(const tui *t, WINDOW *w, int y, int x, int width, int attr, const char *s)
{
    if (width <= 0 || !s || !w)
        return 0;
    /* a text that does not fit ends before a word with a digit in it, never inside
       ("max |diff| 2.674e-" at 80x24: issue 26) */
    size_t lim = (size_t)-1;
    if (text_cells(t, s) > width)
        lim = vm_whole_numbers(s, fit_bytes(t, s, width));
    const char *s0 = s;
    wattr_on(w, (attr_t)attr, NULL);
    wmove(w, y, x);
    int cells = 0;
    mbstate_t ms;
    memset(&ms, 0, sizeof ms);
    while (*s && cells < width && (size_t)(s - s0) < lim) {
        unsigned char c = (unsigned char)*s;
        if (c < 0x80 || !t->utf8) {
            waddch(w, (chtype)(c >= 0x20 && c < 0x7f ? c : '?'));
            cells++;
            s++;
            continue;
        }
        wchar_t wc;
        size_t n = mbrtowc(&wc, s, strlen(s), &ms);
        if (n == (size_t)-1 || n == (size_t)-2 || n == 0) {
            memset(&ms, 0, sizeof ms);
            waddch(w, '?');
            cells++;
            s++;
            continue;
        }
        int cw = wcwidth(wc);
        if (cw < 0) {
            wc = L'?';
            cw = 1;
        }
        if (cells + cw > width)
            break;
        waddnwstr(w, &wc, 1);
        cells += cw;
        s += n;
    }
    wattr_off(w, (attr_t)attr, NULL);
    return cells;
}

/* the cells s takes on the terminal (as tui_put draws it) */
static int text_cells(const tui *t, const char *s)
{
    int cells = 0;
    mbstate_t ms;
    memset(&ms, 0, sizeof ms);
    while (*s) {
        unsigned char c = (unsigned char)*s;
        if (c < 0x80 || !t->utf8) {
            cells++;
            s++;
            continue;
        }
        wchar_t wc;
        size_t n = mbrtowc(&wc, s, strlen(s), &ms);
        if (n == (size_t)-1 || n == (size_t)-2 || n == 0) {
            memset(&ms, 0, sizeof ms);
            cells++;
            s++;
            continue;
        }
        int cw = wcwidth(wc);
        cells += cw < 0 ? 1 : cw;
        s += n;
    }
    return cells;
}

/* word-wraps text into lines of at most width cells (ASCII measure); up to max lines into
   out[max][256]; returns the count */
static int wrap(const char *text, int width, char out[][256], int max)
{
    int n = 0;
    if (width < 8)
        width = 8;
    if (width > 255)
        width = 255;
    const char *s = text ? text : "";
    while (*s && n < max) {
        while (*s == ' ')
            s++;
        int len = (int)strlen(s);
        int take = len <= width ? len : width;
        if (len > width) {
            int b = take;
            while (b > 0 && s[b] != ' ')
                b--;
            if (b > width / 3)
                take = b;
        }
        const char *nl = memchr(s, '\n', (size_t)take);
        if (nl)
            take = (int)(nl - s);
        if (n == max - 1 && (int)strlen(s) > take && take >= 3) { /* the last line: ... */
            take = take > width - 3 ? width - 3 : take;
            snprintf(out[n], 256, "%.*s...", take, s);
            return n + 1;
        }
        snprintf(out[n++], 256, "%.*s", take, s);
        s += take;
        if (*s == '\n')
            s++;
    }
    return n;
}

int tui_tag_attr(const tui *t, int tag)
{
    if (t && t->color)
        switch (tag) {
        case VM_TAG_GOOD:
            return (int)COLOR_PAIR(CP_GOOD);
        case VM_TAG_WARN:
            return (int)COLOR_PAIR(CP_WARN);
        case VM_TAG_BAD:
            return (int)(COLOR_PAIR(CP_BAD) | A_BOLD);
        case VM_TAG_DIM:
            return (int)COLOR_PAIR(CP_DIM);
        default:
            return 0;
        }
    switch (tag) {
    case VM_TAG_WARN:
        return A_UNDERLINE;
    case VM_TAG_BAD:
        return A_BOLD;
    case VM_TAG_DIM:
        return A_DIM;
    default:
        return 0;
    }
}

/* ---- modal helpers ---- */

/* a key for a modal widget: waits in steps of 100 ms, reading the running job and redrawing
   the frame (and the widgets' panels) between; *wc takes a character (returns OK) or a key
   code (KEY_CODE_YES) */
static int modal_key(tui *t, wint_t *wc)
{
    wtimeout(stdscr, 100);
    int r = wget_wch(stdscr, wc);
    if (r == ERR) {
        if (tui_hangup()) { /* the terminal is gone or a signal came: close, as Esc does */
            *wc = 27;
            return OK;
        }
        tui_tick(t);
        return ERR;
    }
    if (r == OK && *wc == '\r')
        *wc = '\n';
    if (r == OK && *wc == KEY_ESC) { /* Alt+key or an unnamed function key: not an Esc */
        int k = tui_esc_follow();
        if (k == ERR)
            return ERR;
        if (k != KEY_ESC) {
            *wc = (wint_t)k;
            return KEY_CODE_YES;
        }
    }
    return r;
}

static bool is_enter(int r, wint_t wc)
{
    return (r == OK && (wc == '\n' || wc == '\r')) || (r == KEY_CODE_YES && wc == KEY_ENTER);
}

static bool is_backspace(int r, wint_t wc)
{
    return (r == OK && (wc == 127 || wc == 8)) || (r == KEY_CODE_YES && wc == KEY_BACKSPACE);
}

/* The width a modal window of w cells gets: the whole screen's when less than 3 cells a
   side would be left (a column or two of the pane beside a dialog reads as debris). */
static int modal_w(int w)
{
    if (w > COLS || COLS - w < 6)
        w = COLS;
    return w < 10 ? 10 : w;
}

/* Where a modal window of h x w goes: centred; from the top row when at most 3 rows would
   be left (the status line and the key bar stay in view under it). */
static void modal_pos(int h, int w, int *y, int *x)
{
    *y = LINES - h <= 3 ? 0 : (LINES - h) / 2;
    *x = (COLS - w) / 2;
    if (*y < 0)
        *y = 0;
    if (*x < 0)
        *x = 0;
}

/* a framed window centred on the screen (modal_w, modal_pos), in a panel on top */
static WINDOW *modal_open(int h, int w, PANEL **p)
{
    if (h > LINES)
        h = LINES;
    w = modal_w(w);
    if (h < 3)
        h = 3;
    int y, x;
    modal_pos(h, w, &y, &x);
    WINDOW *win = newwin(h, w, y, x);
    if (!win)
        return NULL;
    *p = new_panel(win);
    if (!*p) {
        delwin(win);
        return NULL;
    }
    return win;
}

static void modal_close(tui *t, WINDOW *win, PANEL *p)
{
    if (p)
        del_panel(p);
    if (win)
        delwin(win);
    curs_set(0);
    tui_redraw(t);
}

/* the box and its title */
static void modal_frame(const tui *t, WINDOW *win, const char *title)
{
    int wd = getmaxx(win);
    int a = t->color ? (int)COLOR_PAIR(CP_TITLE) : 0;
    wattr_on(win, (attr_t)a, NULL);
    box(win, 0, 0);
    wattr_off(win, (attr_t)a, NULL);
    if (title && *title) {
        mvwaddch(win, 0, 2, ' ');
        int n = tui_put(t, win, 0, 3, wd - 6, A_BOLD, title);
        mvwaddch(win, 0, 3 + n, ' ');
    }
}

/* keeps a modal window on the screen after a resize */
static void modal_recentre(WINDOW *win, PANEL *p)
{
    int h, w, y, x;
    getmaxyx(win, h, w);
    modal_pos(h, w, &y, &x);
    move_panel(p, y, x);
}

/* ---- the table ---- */

/* the scroll hint at the right of the header row when columns are left out: "<->", " ->" or
   "<- ", and the words when there is room after the last column */
static void table_hint(tui *t, WINDOW *w, const vm_table *tb, int y, int x, int wd, int used)
{
    bool l = tb->left > 0, r = tb->more_right;
    if (!l && !r)
        return;
    const char *words = l && r ? "Left/Right: more columns" : r ? "Right: more columns" : "Left: more columns";
    int n = (int)strlen(words), a = tui_tag_attr(t, VM_TAG_DIM) | (int)A_BOLD;
    if (wd - used >= n + 1)
        tui_put(t, w, y, x + wd - n, n, a, words);
    else if (wd >= 3)
        tui_put(t, w, y, x + wd - 3, 3, a, l && r ? "<->" : r ? " ->" : "<- ");
}

void tui_draw_table(tui *t, WINDOW *w, vm_table *tb, int y, int x, int h, int wd)
{
    if (!w || h <= 0 || wd <= 0 || tb->ncols <= 0)
        return;
    int cx[VM_MAX_COLS], cw[VM_MAX_COLS], ci[VM_MAX_COLS];
    int nvis = vm_table_layout(tb, wd, t->utf8, cx, cw, ci, &tb->left, &tb->more_right);
    int used = nvis ? cx[nvis - 1] + cw[nvis - 1] : 0;
    /* the header */
    int ha = t->color ? (int)(COLOR_PAIR(CP_TITLE) | A_BOLD) : (int)(A_BOLD | A_UNDERLINE);
    wattr_on(w, (attr_t)ha, NULL);
    mvwhline(w, y, x, ' ', wd);
    wattr_off(w, (attr_t)ha, NULL);
    for (int k = 0; k < nvis; k++) {
        char title[64];
        int c = ci[k];
        const vm_col *col = &tb->cols[c];
        /* the sort mark a space after the title ("cycles v"), never read as a letter of it */
        vm_header(title, sizeof title, col->title, cw[k],
                  tb->sort_col == c ? (tb->sort_desc ? -1 : 1) : 0, t->utf8);
        int n = text_cells(t, title);
        int off = col->numeric && n < cw[k] ? cw[k] - n : 0;
        tui_put(t, w, y, x + cx[k] + off, cw[k] - off, ha, title);
    }
    table_hint(t, w, tb, y, x, wd, used);
    if (tb->nrows == 0) {
        if (h > 1)
            tui_put(t, w, y + 1, x, wd, tui_tag_attr(t, VM_TAG_DIM), "(no rows)");
        return;
    }
    int sela = t->color ? (int)COLOR_PAIR(CP_SEL) : A_REVERSE;
    for (int i = 0; i < h - 1; i++) {
        int p = tb->top + i;
        if (p < 0 || p >= tb->nrows)
            break;
        int row = tb->order[p];
        bool sel = p == tb->sel;
        int ra = tui_tag_attr(t, tb->tags[row]);
        int ry = y + 1 + i;
        if (sel) {
            wattr_on(w, (attr_t)sela, NULL);
            mvwhline(w, ry, x, ' ', wd);
            wattr_off(w, (attr_t)sela, NULL);
        }
        for (int k = 0; k < nvis; k++) {
            int c = ci[k];
            const char *s = tb->cells[row * tb->ncols + c];
            if (!s)
                s = "";
            int ct = tb->celltags[row * tb->ncols + c];
            int a = ct ? tui_tag_attr(t, ct) : ra;
            if (sel)
                a = sela | (ct == VM_TAG_BAD || (!ct && tb->tags[row] == VM_TAG_BAD) ? A_BOLD : 0);
            char tail[512];
            int n = text_cells(t, s);
            bool cut = false;
            if (tb->cols[c].keep_tail && n > cw[k]) { /* the name's end: "...conv2d_8/Conv2D" */
                n = vm_fit_tail(tail, sizeof tail, s, cw[k], t->utf8);
                s = tail;
            } else if (n > cw[k]) /* a column wider than the pane: cut, marked at its end */
                cut = true;
            int off = tb->cols[c].numeric && n < cw[k] ? cw[k] - n : 0;
            int drawn = tui_put(t, w, ry, x + cx[k] + off, cut ? cw[k] - 1 : cw[k] - off, a, s);
            if (cut)
                drawn += tui_put(t, w, ry, x + cx[k] + drawn, 1, a, t->utf8 ? "\u2026" : "~");
            /* monochrome: a mark after a cell over its threshold */
            int mx = cx[k] + off + drawn;
            if (!t->color && (ct == VM_TAG_BAD || ct == VM_TAG_WARN) && mx < wd && cw[k] > 1 &&
                (k + 1 >= nvis || mx < cx[k + 1]))
                tui_put(t, w, ry, x + mx, 1, sel ? sela : (int)A_BOLD, ct == VM_TAG_BAD ? "!" : "~");
        }
    }
}

static void search(tui *t, vm_table *tb, int dir, int page)
{
    if (!tb->search[0]) {
        tui_status(t, true, "no search yet: / searches");
        return;
    }
    int pos = vm_table_find(tb, tb->search, tb->sel, dir);
    if (pos < 0) {
        tui_status(t, true, "not found: %s", tb->search);
        return;
    }
    vm_table_select(tb, pos, page);
    tui_status(t, false, "/%s: row %d of %d", tb->search, pos + 1, tb->nrows);
}

bool tui_table_key(tui *t, vm_table *tb, int ch, int page)
{
    if (page < 1)
        page = 1;
    switch (ch) {
    case KEY_UP:
    case 'k':
        vm_table_move(tb, -1, page);
        return true;
    case KEY_DOWN:
    case 'j':
        vm_table_move(tb, 1, page);
        return true;
    case KEY_PPAGE:
        vm_table_move(tb, -page, page);
        return true;
    case KEY_NPAGE:
    case ' ':
        vm_table_move(tb, page, page);
        return true;
    case KEY_RIGHT: /* the columns left out on the right (tui_draw_table) */
        if (!tb->more_right)
            return false;
        tb->left++;
        return true;
    case KEY_LEFT: /* unused at the first column: the sidebar's */
        if (tb->left <= 0)
            return false;
        tb->left--;
        return true;
    case KEY_HOME:
    case 'g':
        vm_table_select(tb, 0, page);
        return true;
    case KEY_END:
    case 'G':
        vm_table_select(tb, tb->nrows - 1, page);
        return true;
    case '<':
    case '>': {
        if (tb->ncols <= 0)
            return true;
        int c = tb->sort_col;
        if (ch == '>')
            c = c + 1 >= tb->ncols ? -1 : c + 1;
        else
            c = c < 0 ? tb->ncols - 1 : c - 1;
        vm_table_sort(tb, c, tb->sort_desc);
        vm_table_select(tb, tb->sel, page);
        if (c < 0)
            tui_status(t, false, "in network order");
        else
            tui_status(t, false, "sorted by %s (%s; s reverses)", tb->cols[c].title,
                       tb->sort_desc ? "descending" : "ascending");
        return true;
    }
    case 's':
        if (tb->sort_col < 0) {
            tui_status(t, false, "no sort column: < and > choose one");
            return true;
        }
        vm_table_sort(tb, tb->sort_col, !tb->sort_desc);
        vm_table_select(tb, tb->sel, page);
        tui_status(t, false, "sorted by %s (%s)", tb->cols[tb->sort_col].title,
                   tb->sort_desc ? "descending" : "ascending");
        return true;
    case '/': {
        char buf[sizeof tb->search];
        snprintf(buf, sizeof buf, "%s", tb->search);
        if (!tui_prompt(t, "Search: ", buf, sizeof buf) || !buf[0])
            return true;
        snprintf(tb->search, sizeof tb->search, "%s", buf);
        search(t, tb, 1, page);
        return true;
    }
    case 'n':
        search(t, tb, 1, page);
        return true;
    case 'N':
        search(t, tb, -1, page);
        return true;
    default:
        return false;
    }
}

/* ---- the prompt ---- */

bool tui_prompt(tui *t, const char *label, char *buf, size_t len)
{
    if (!len)
        return false;
    enum { MAXW = 1024 };
    wchar_t wb[MAXW + 1];
    size_t n = mbstowcs(wb, buf, MAXW);
    if (n == (size_t)-1) { /* not valid in this locale: start empty */
        n = 0;
    }
    wb[n] = 0;
    size_t cur = n;
    bool ok = false;
    curs_set(1);
    for (;;) {
        tui_redraw(t);
        WINDOW *w = t->statusw;
        if (w) {
            int wd = getmaxx(w);
            werase(w);
            int lw = tui_put(t, w, 0, 0, wd / 2, A_BOLD, label);
            int room = wd - lw - 1;
            /* the text, scrolled so that the cursor shows */
            size_t start = 0;
            int cells = 0;
            for (size_t i = cur; i > 0; i--) {
                int cw = wcwidth(wb[i - 1]);
                cells += cw < 1 ? 1 : cw;
                if (cells >= room) {
                    start = i;
                    break;
                }
            }
            wmove(w, 0, lw);
            int cx = lw;
            for (size_t i = start; i < n && getcurx(w) < wd - 1; i++) {
                wchar_t c = wb[i];
                if (c < 0x20 || c == 0x7f || (!t->utf8 && c > 0x7e))
                    c = L'?';
                if (i == cur)
                    cx = getcurx(w);
                waddnwstr(w, &c, 1);
            }
            if (cur == n)
                cx = getcurx(w);
            wmove(w, 0, cx);
            wnoutrefresh(w);
            doupdate();
        }
        wint_t wc;
        int r = modal_key(t, &wc);
        if (r == ERR)
            continue;
        if (is_enter(r, wc)) {
            size_t m = wcstombs(buf, wb, len - 1);
            if (m == (size_t)-1)
                m = 0;
            buf[m < len ? m : len - 1] = 0;
            ok = true;
            break;
        }
        if (r == OK && wc == KEY_ESC)
            break;
        if (is_backspace(r, wc)) {
            if (cur > 0) {
                memmove(wb + cur - 1, wb + cur, (n - cur + 1) * sizeof *wb);
                cur--;
                n--;
            }
        } else if (r == KEY_CODE_YES) {
            switch (wc) {
            case KEY_LEFT:
                if (cur > 0)
                    cur--;
                break;
            case KEY_RIGHT:
                if (cur < n)
                    cur++;
                break;
            case KEY_HOME:
                cur = 0;
                break;
            case KEY_END:
                cur = n;
                break;
            case KEY_DC:
                if (cur < n) {
                    memmove(wb + cur, wb + cur + 1, (n - cur) * sizeof *wb);
                    n--;
                }
                break;
            default:
                break;
            }
        } else if (r == OK && wc == 21) { /* ^U */
            n = cur = 0;
            wb[0] = 0;
        } else if (r == OK && wc == 1) { /* ^A */
            cur = 0;
        } else if (r == OK && wc == 5) { /* ^E */
            cur = n;
        } else if (r == OK && wc >= 0x20 && wc != 0x7f && n < MAXW) {
            /* the multibyte text must still fit len */
            char tmp[MB_LEN_MAX * (MAXW + 1)];
            wb[n] = 0;
            size_t m = wcstombs(tmp, wb, sizeof tmp);
            char one[MB_LEN_MAX];
            int ol = wctomb(one, (wchar_t)wc);
            if (m != (size_t)-1 && ol > 0 && m + (size_t)ol < len) {
                memmove(wb + cur + 1, wb + cur, (n - cur + 1) * sizeof *wb);
                wb[cur++] = (wchar_t)wc;
                n++;
            }
        }
    }
    curs_set(0);
    tui_redraw(t);
    return ok;
}

/* ---- yes / no ---- */

bool tui_confirm(tui *t, const char *question)
{
    char lines[4][256];
    int w = modal_w(COLS - 4 < 60 ? COLS - 4 : 60);
    int nl = wrap(question, w - 4, lines, 4);
    PANEL *p = NULL;
    WINDOW *win = modal_open(nl + 4, w, &p);
    if (!win)
        return false;
    bool yes = false;
    for (;;) {
        werase(win);
        modal_frame(t, win, "Confirm");
        for (int i = 0; i < nl; i++)
            tui_put(t, win, 1 + i, 2, w - 4, A_BOLD, lines[i]);
        tui_put(t, win, nl + 2, 2, w - 4, 0, "y: yes    n / Esc: no");
        tui_redraw(t);
        wint_t wc;
        int r = modal_key(t, &wc);
        if (r == ERR)
            continue;
        if (r == KEY_CODE_YES && wc == KEY_RESIZE) {
            modal_recentre(win, p);
            continue;
        }
        if (r == OK && (wc == 'y' || wc == 'Y')) {
            yes = true;
            break;
        }
        if (r == OK && (wc == 'n' || wc == 'N' || wc == 'q' || wc == KEY_ESC))
            break;
    }
    modal_close(t, win, p);
    return yes;
}

/* ---- the text viewer ---- */

/* the bytes of the longest start of s that fits in width cells (at least one character) */
static size_t fit_bytes(const tui *t, const char *s, int width)
{
    size_t i = 0;
    int cells = 0;
    mbstate_t ms;
    memset(&ms, 0, sizeof ms);
    while (s[i]) {
        size_t n = 1;
        int cw = 1;
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x80 && t->utf8) {
            wchar_t wc;
            n = mbrtowc(&wc, s + i, strlen(s + i), &ms);
            if (n == (size_t)-1 || n == (size_t)-2 || n == 0) {
                memset(&ms, 0, sizeof ms);
                n = 1;
            } else {
                cw = wcwidth(wc);
                cw = cw < 0 ? 1 : cw;
            }
        }
        if (cells + cw > width && i > 0)
            break;
        cells += cw;
        i += n;
    }
    return i;
}

/* The hanging indent of a long line's continuations: where its text starts after the last
   run of two or more blanks in the first half of width ("  F5 r        run this step",
   "  NPU     /a/long/path"), else its own indent and two more. */
static int hang_indent(const char *s, int width)
{
    int lead = (int)strspn(s, " "), at = -1;
    for (int i = lead; s[i] && i < width / 2; i++)
        if (s[i] == ' ' && s[i + 1] == ' ') {
            int j = i;
            while (s[j] == ' ')
                j++;
            if (s[j] && j < width / 2)
                at = j;
            i = j - 1;
        }
    return at > 0 ? at : lead + 2 < width / 2 ? lead + 2 : 0;
}

/* Lines src[nsrc] wrapped at blanks into width cells (hang_indent), into a new text. */
static char *wrap_text(const tui *t, char *const *src, int nsrc, int width)
{
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    if (!f)
        return NULL;
    for (int i = 0; i < nsrc; i++) {
        const char *s = src[i];
        if (text_cells(t, s) <= width) {
            fprintf(f, "%s\n", s);
            continue;
        }
        int ind = hang_indent(s, width);
        for (bool first = true; *s; first = false) {
            int room = first ? width : width - ind;
            size_t take = fit_bytes(t, s, room);
            if (s[take]) { /* not the end: break at the last blank when there is one */
                size_t b = take;
                while (b > 0 && s[b] != ' ')
                    b--;
                if (b > take / 3)
                    take = b;
            }
            fprintf(f, "%*s%.*s\n", first ? 0 : ind, "", (int)take, s);
            s += take;
            while (*s == ' ')
                s++;
        }
    }
    fclose(f);
    return out;
}

static void show_text(tui *t, const char *title, const char *text, bool wrapped);

void tui_show_text(tui *t, const char *title, const char *text)
{
    show_text(t, title, text, false);
}

void tui_show_wrapped(tui *t, const char *title, const char *text)
{
    show_text(t, title, text, true);
}

/* the viewer's text: the source lines (tabs as spaces, in copy), the lines shown (the
   source's, or wrapped to wrap_w in wtext) and the scroll position */
typedef struct {
    char *copy, **src, *wtext, **wlines, **lines;
    int nsrc, nlines, maxw, wrap_w, top, left;
    bool wrapped;
} viewer;

/* text split into v's source lines, tabs as spaces; false when out of memory */
static bool viewer_lines(const tui *t, viewer *v, const char *text)
{
    size_t tl = strlen(text ? text : "");
    char *copy = malloc(tl * 4 + 2);
    if (!copy)
        return false;
    size_t o = 0;
    for (size_t i = 0; i < tl; i++) {
        if (text[i] == '\t') {
            do
                copy[o++] = ' ';
            while (o % 4);
        } else if (text[i] != '\r')
            copy[o++] = text[i];
    }
    copy[o] = 0;
    int nlines = 1;
    for (size_t i = 0; i < o; i++)
        nlines += copy[i] == '\n';
    if (o && copy[o - 1] == '\n')
        nlines--;
    char **lines = malloc((size_t)(nlines > 0 ? nlines : 1) * sizeof *lines);
    if (!lines) {
        free(copy);
        return false;
    }
    int maxw = 0;
    char *s = copy;
    for (int i = 0; i < nlines; i++) {
        lines[i] = s;
        char *nl = strchr(s, '\n');
        if (nl) {
            *nl = 0;
            s = nl + 1;
        } else
            s += strlen(s);
        int c = text_cells(t, lines[i]);
        if (c > maxw)
            maxw = c;
    }
    v->copy = copy;
    v->src = v->lines = lines;
    v->nsrc = v->nlines = nlines;
    v->maxw = maxw;
    v->wrap_w = -1;
    return true;
}

/* wrapped: the source lines wrapped to width (again when the width changed) */
static void viewer_wrap(const tui *t, viewer *v, int width)
{
    if (!v->wrapped || width == v->wrap_w)
        return;
    char *nt = wrap_text(t, v->src, v->nsrc, width);
    int n = 0;
    for (char *q = nt; q && *q; q++)
        n += *q == '\n';
    char **nl = nt ? malloc((size_t)(n > 0 ? n : 1) * sizeof *nl) : NULL;
    if (!nl) {
        free(nt);
        v->wrapped = false; /* out of memory: the lines as they are */
        return;
    }
    char *q = nt;
    for (int i = 0; i < n; i++) {
        nl[i] = q;
        q = strchr(q, '\n');
        *q++ = 0;
    }
    free(v->wtext);
    free(v->wlines);
    v->wtext = nt;
    v->wlines = nl;
    v->lines = nl;
    v->nlines = n;
    v->wrap_w = width;
}

/* the visible lines from v->top, v->left characters in, and the foot */
static void viewer_draw(tui *t, const viewer *v, WINDOW *win, const char *title, int page)
{
    int wh, ww;
    getmaxyx(win, wh, ww);
    werase(win);
    modal_frame(t, win, title);
    for (int i = 0; i < page && v->top + i < v->nlines; i++) {
        const char *s = v->lines[v->top + i];
        /* skip left characters */
        for (int k = 0; k < v->left && *s; k++) {
            unsigned char c = (unsigned char)*s;
            int n = 1;
            if (c >= 0x80 && t->utf8) {
                int m = mblen(s, MB_LEN_MAX);
                n = m > 0 ? m : 1;
            }
            s += n;
        }
        tui_put(t, win, 1 + i, 2, ww - 4, 0, s);
    }
    char foot[96];
    if (v->nlines > page)
        snprintf(foot, sizeof foot, " %d-%d of %d  arrows scroll  q/Esc close ", v->top + 1,
                 v->top + page < v->nlines ? v->top + page : v->nlines, v->nlines);
    else
        snprintf(foot, sizeof foot, " q/Esc close ");
    tui_put(t, win, wh - 1, ww - 2 - (int)strlen(foot) > 1 ? ww - 2 - (int)strlen(foot) : 1,
            ww - 2, tui_tag_attr(t, VM_TAG_DIM), foot);
    tui_redraw(t);
}

/* a key on the viewer: a scroll (true), or the viewer closes (false: q, Esc, Enter, any
   other key) */
static bool viewer_key(viewer *v, int r, wint_t wc, int page)
{
    if (r == KEY_CODE_YES) {
        switch (wc) {
        case KEY_RESIZE: return true;
        case KEY_UP: v->top--; return true;
        case KEY_DOWN: v->top++; return true;
        case KEY_PPAGE: v->top -= page; return true;
        case KEY_NPAGE: v->top += page; return true;
        case KEY_HOME: v->top = 0; return true;
        case KEY_END: v->top = v->nlines; return true;
        case KEY_LEFT: v->left -= 8; return true;
        case KEY_RIGHT: v->left += 8; return true;
        case KEY_MOUSE: {
            MEVENT ev;
            if (getmouse(&ev) == OK) {
                if (ev.bstate & BUTTON4_PRESSED)
                    v->top -= 3;
#ifdef BUTTON5_PRESSED
                else if (ev.bstate & BUTTON5_PRESSED)
                    v->top += 3;
#endif
            }
            return true;
        }
        default:
            return false;
        }
    }
    if (r != OK)
        return false;
    switch (wc) {
    case 'k': v->top--; return true;
    case 'j': v->top++; return true;
    case ' ': v->top += page; return true;
    case 'b': v->top -= page; return true;
    case 'g': v->top = 0; return true;
    case 'G': v->top = v->nlines; return true;
    case 'h': v->left -= 8; return true;
    case 'l': v->left += 8; return true;
    default: return false;
    }
}

/* the viewer; wrapped: long lines wrapped to the window (again after a resize) */
static void show_text(tui *t, const char *title, const char *text, bool wrapped)
{
    viewer v = {0};
    if (!viewer_lines(t, &v, text))
        return;
    v.wrapped = wrapped;
    PANEL *p = NULL;
    WINDOW *win = NULL;
    int wh = 0, ww = 0;
    for (;;) {
        int want_w = v.maxw + 4 > COLS - 2 ? COLS - 2 : v.maxw + 4;
        if (want_w < 50)
            want_w = COLS - 2 < 50 ? COLS - 2 : 50;
        want_w = modal_w(want_w);
        viewer_wrap(t, &v, want_w - 4);
        int want_h = v.nlines + 3 > LINES - 2 ? LINES - 2 : v.nlines + 3;
        if (want_h < 5)
            want_h = 5;
        if (!win || want_h != wh || want_w != ww) { /* first time, or a resize */
            if (win)
                del_panel(p), delwin(win);
            win = modal_open(want_h, want_w, &p);
            if (!win)
                break;
            getmaxyx(win, wh, ww);
        }
        int page = wh - 3;
        if (page < 1)
            page = 1;
        if (v.top > v.nlines - page)
            v.top = v.nlines - page;
        if (v.top < 0)
            v.top = 0;
        if (v.left < 0)
            v.left = 0;
        viewer_draw(t, &v, win, title, page);
        wint_t wc;
        int r = modal_key(t, &wc);
        if (r == ERR)
            continue;
        if (!viewer_key(&v, r, wc, page))
            break;
    }
    modal_close(t, win, p);
    free(v.src);
    free(v.wlines);
    free(v.wtext);
    free(v.copy);
}

/* ---- forms ---- */

/* The text of a form field without leading and trailing blanks (a path never starts with
   one) into buf. */
static void field_text(FIELD *f, char *buf, size_t len)
{
    const char *b = field_buffer(f, 0);
    snprintf(buf, len, "%s", b ? b : "");
    size_t l = strlen(buf);
    while (l && buf[l - 1] == ' ')
        buf[--l] = 0;
    size_t s = 0;
    while (buf[s] == ' ')
        s++;
    if (s)
        memmove(buf, buf + s, l - s + 1);
}

/* one showing of a form: its window, libform's fields and the failed check's message */
typedef struct {
    tui *t;
    const char *title;
    tui_field *fields;
    int n, W, H, L, hint_lines;
    PANEL *p;
    WINDOW *win, *sub;
    FIELD **ff;
    FORM *form;
    char bad[256]; /* a failed check's message, shown for field bad_field */
    int bad_field;
} form_view;

/* the window and the fields at the terminal's size, filled from vals. Returns 0 built,
   -1 it does not fit (what was made is freed by form_free) */
static int form_build(form_view *f, char **vals, const size_t *vlen)
{
    int n = f->n;
    int W = COLS - 4 > 78 ? 78 : COLS - 4;
    if (W < 30)
        W = COLS;
    W = modal_w(W);
    int L = 0;
    for (int i = 0; i < n; i++) {
        int l = (int)strlen(f->fields[i].label ? f->fields[i].label : "");
        if (l > L)
            L = l;
    }
    if (L > W / 3)
        L = W / 3;
    int hint_lines = 3;
    int H = n + 6 + hint_lines; /* border, fields, blank, hint, blank, keys, border */
    if (H > LINES) {
        hint_lines = LINES - n - 6;
        if (hint_lines < 0)
            hint_lines = 0;
        H = n + 6 + hint_lines;
    }
    f->W = W, f->H = H, f->L = L, f->hint_lines = hint_lines;
    f->win = modal_open(H, W, &f->p);
    if (!f->win)
        return -2;
    int fw = W - L - 6;
    if (fw < 4)
        fw = 4;
    f->sub = derwin(f->win, n, fw, 1, L + 4);
    f->ff = calloc((size_t)n + 1, sizeof *f->ff);
    if (!f->sub || !f->ff)
        return -1;
    for (int i = 0; i < n; i++) {
        f->ff[i] = new_field(1, fw, i, 0, 0, 0);
        if (!f->ff[i])
            return -1;
        field_opts_off(f->ff[i], O_AUTOSKIP | O_STATIC);
        set_max_field(f->ff[i], vlen[i] > 1 ? (int)vlen[i] - 1 : 1);
        set_field_buffer(f->ff[i], 0, vals[i]);
    }
    f->form = new_form(f->ff);
    /* no O_BS_OVERLOAD: Backspace at a field's start stays there (issue 38: it went to the
       previous field, from the first to the last) */
    if (f->form)
        form_opts_off(f->form, O_BS_OVERLOAD);
    if (!f->form || set_form_win(f->form, f->win) != E_OK ||
        set_form_sub(f->form, f->sub) != E_OK || post_form(f->form) != E_OK)
        return -1;
    return 0;
}

static void form_free(form_view *f)
{
    if (f->form) {
        unpost_form(f->form);
        free_form(f->form);
    }
    if (f->ff) {
        for (int i = 0; i < f->n; i++)
            if (f->ff[i])
                free_field(f->ff[i]);
        free(f->ff);
    }
    if (f->sub)
        delwin(f->sub);
    modal_close(f->t, f->win, f->p);
}

/* the frame, the labels, the focused field's hint (or its failed check) and the keys */
static void form_draw(form_view *f, int cur)
{
    tui *t = f->t;
    WINDOW *win = f->win;
    int n = f->n, W = f->W, H = f->H, L = f->L;
    int cur_a = t->color ? (int)COLOR_PAIR(CP_SEL) : A_REVERSE;
    for (int i = 0; i < n; i++)
        set_field_back(f->ff[i], (chtype)(i == cur ? cur_a : (int)A_UNDERLINE));
    modal_frame(t, win, f->title);
    for (int i = 0; i < n; i++) {
        mvwhline(win, 1 + i, 1, ' ', L + 3); /* the labels' part: the fields are the form's */
        bool bad = f->bad[0] && f->bad_field == i; /* a failed check: "!" and its label red */
        if (bad)
            tui_put(t, win, 1 + i, 1, 1, tui_tag_attr(t, VM_TAG_BAD) | (int)A_BOLD, "!");
        tui_put(t, win, 1 + i, 2, L,
                bad ? tui_tag_attr(t, VM_TAG_BAD) | (int)A_BOLD : i == cur ? (int)A_BOLD : 0,
                f->fields[i].label ? f->fields[i].label : "");
    }
    for (int i = n + 1; i < H - 1; i++)
        mvwhline(win, i, 1, ' ', W - 2);
    char hl[6][256];
    const char *hint = f->bad[0] && f->bad_field == cur ? f->bad : f->fields[cur].hint;
    int nh = f->hint_lines ? wrap(hint, W - 4, hl, f->hint_lines) : 0;
    for (int i = 0; i < nh; i++)
        tui_put(t, win, n + 2 + i, 2, W - 4,
                hint == f->bad ? tui_tag_attr(t, VM_TAG_BAD) | (int)A_BOLD
                               : tui_tag_attr(t, VM_TAG_DIM),
                hl[i]);
    tui_put(t, win, H - 2, 2, W - 4, 0,
            "Tab/arrows: field  Enter: next (last: OK)  F10: OK  Esc: cancel");
    tui_redraw(t);
    pos_form_cursor(f->form);
    wnoutrefresh(win);
    doupdate();
}

/* each field's check: the first that fails keeps the form open on it (false) */
static bool form_check(form_view *f)
{
    form_driver(f->form, REQ_VALIDATION);
    f->bad[0] = 0;
    for (int i = 0; i < f->n && !f->bad[0]; i++) {
        if (!f->fields[i].check)
            continue;
        char v[1024];
        field_text(f->ff[i], v, sizeof v);
        if (!f->fields[i].check(v, f->bad, sizeof f->bad)) {
            if (!f->bad[0])
                snprintf(f->bad, sizeof f->bad, "%s: not valid", f->fields[i].label);
            f->bad_field = i;
            set_current_field(f->form, f->ff[i]);
            form_driver(f->form, REQ_END_LINE);
        }
    }
    return !f->bad[0];
}

/* a function key on the form (moves, edits, a click); returns 2 on a resize, else 0 */
static int form_fkey(form_view *f, wint_t wc)
{
    FORM *form = f->form;
    switch (wc) {
    case KEY_BTAB:
    case KEY_UP:
        form_driver(form, REQ_PREV_FIELD);
        form_driver(form, REQ_END_LINE);
        break;
    case KEY_LEFT:
        form_driver(form, REQ_PREV_CHAR);
        break;
    case KEY_RIGHT:
        form_driver(form, REQ_NEXT_CHAR);
        break;
    case KEY_HOME:
        form_driver(form, REQ_BEG_LINE);
        break;
    case KEY_END:
        form_driver(form, REQ_END_LINE);
        break;
    case KEY_DC:
        form_driver(form, REQ_DEL_CHAR);
        break;
    case KEY_RESIZE: /* built again at the new size, with the edits so far */
        return 2;
    case KEY_MOUSE: {
        MEVENT ev;
        if (getmouse(&ev) == OK && wenclose(f->win, ev.y, ev.x)) {
            int row = ev.y - getbegy(f->win) - 1;
            if (row >= 0 && row < f->n) {
                set_current_field(form, f->ff[row]);
                form_driver(form, REQ_END_LINE);
            }
        }
        break;
    }
    default:
        break;
    }
    return 0;
}

/* a character on the form: ^U ^A ^E ^K, or typed into the field */
static void form_char(form_view *f, wint_t wc)
{
    if (wc == 21) /* ^U */
        form_driver(f->form, REQ_CLR_FIELD);
    else if (wc == 1)
        form_driver(f->form, REQ_BEG_LINE);
    else if (wc == 5)
        form_driver(f->form, REQ_END_LINE);
    else if (wc == 11) /* ^K */
        form_driver(f->form, REQ_CLR_EOF);
    else if (wc >= 0x20 && wc != 0x7f)
        form_driver_w(f->form, OK, (wchar_t)wc);
}

/* One showing of a form at the terminal's current size, on the working values vals
   (sizes vlen), the focus on field *curi. Returns 1 accepted, 0 cancelled, 2 the terminal
   was resized (vals and *curi hold the edits so far: the caller builds it again at the new
   size), -1 the form does not fit. */
static int form_pass(tui *t, const char *title, tui_field *fields, int n, char **vals,
                     const size_t *vlen, int *curi)
{
    form_view f = {.t = t, .title = title, .fields = fields, .n = n, .bad_field = -1};
    int ok = form_build(&f, vals, vlen);
    FORM *form = f.form;
    if (ok == -2)
        return false;
    if (ok < 0)
        goto out;
    if (*curi > 0 && *curi < n)
        set_current_field(form, f.ff[*curi]);
    form_driver(form, REQ_END_LINE);
    curs_set(1);
    for (;;) {
        int cur = field_index(current_field(form));
        if (cur < 0 || cur >= n) /* never an index: -1 when the form lost its field */
            cur = 0;
        *curi = cur;
        form_draw(&f, cur);
        wint_t wc;
        int r = modal_key(t, &wc);
        if (r == ERR)
            continue;
        if (r == OK && wc == KEY_ESC)
            break;
        if ((r == KEY_CODE_YES && wc == KEY_F(10)) || (is_enter(r, wc) && cur == n - 1)) {
            if (!form_check(&f))
                continue;
            ok = 1;
            break;
        }
        f.bad[0] = 0; /* any other key: the hint again */
        if (is_enter(r, wc) || (r == OK && wc == '\t') ||
            (r == KEY_CODE_YES && wc == KEY_DOWN)) {
            form_driver(form, REQ_NEXT_FIELD);
            form_driver(form, REQ_END_LINE);
            continue;
        }
        if (is_backspace(r, wc)) {
            form_driver(form, REQ_DEL_PREV);
            continue;
        }
        if (r == KEY_CODE_YES) {
            if ((ok = form_fkey(&f, wc)) == 2)
                break;
            continue;
        }
        if (r == OK)
            form_char(&f, wc);
    }
    if (ok == 1 || ok == 2) {
        form_driver(form, REQ_VALIDATION);
        for (int i = 0; i < n; i++)
            field_text(f.ff[i], vals[i], vlen[i]);
    }
out:
    form_free(&f);
    return ok;
}

bool tui_form(tui *t, const char *title, tui_field *fields, int n)
{
    if (n <= 0)
        return false;
    char **vals = calloc((size_t)n, sizeof *vals);
    size_t *vlen = calloc((size_t)n, sizeof *vlen);
    bool ok = false;
    if (!vals || !vlen)
        goto done;
    for (int i = 0; i < n; i++) {
        vlen[i] = fields[i].value && fields[i].len ? fields[i].len : 1024;
        vals[i] = calloc(vlen[i], 1);
        if (!vals[i])
            goto done;
        if (fields[i].value && fields[i].len)
            snprintf(vals[i], vlen[i], "%s", fields[i].value);
    }
    int cur = 0;
    bool resized = false;
    for (;;) {
        int r = form_pass(t, title, fields, n, vals, vlen, &cur);
        if (r == 2) {
            resized = true;
            continue;
        }
        if (r == -1 && resized) {
            /* shrunk below the form: wait for a bigger terminal, the edits kept */
            tui_status(t, true, "%s: enlarge the terminal to go on (Esc: cancel)",
                       title ? title : "form");
            tui_redraw(t);
            doupdate();
            wint_t wc;
            int k;
            while ((k = modal_key(t, &wc)) == ERR || (k == KEY_CODE_YES && wc != KEY_RESIZE) ||
                   (k == OK && wc != KEY_ESC))
                ;
            if (k == KEY_CODE_YES)
                continue; /* resized: try again */
            break;
        }
        if (r == -1)
            tui_status(t, true, "%s: the form does not fit this terminal", title ? title : "form");
        ok = r == 1;
        break;
    }
    if (ok)
        for (int i = 0; i < n; i++)
            if (fields[i].value && fields[i].len)
                snprintf(fields[i].value, fields[i].len, "%s", vals[i]);
done:
    if (vals)
        for (int i = 0; i < n; i++)
            free(vals[i]);
    free(vals);
    free(vlen);
    return ok;
}

/* ---- the file picker ---- */

/* path with a leading ~ expanded, relative to base unless absolute, into out */
static void resolve(const char *in, const char *base, char *out, size_t len)
{
    const char *home = getenv("HOME");
    if (in[0] == '~' && (in[1] == '/' || !in[1]) && home)
        snprintf(out, len, "%s%s", home, in + 1);
    else if (in[0] == '/')
        snprintf(out, len, "%s", in);
    else
        snprintf(out, len, "%s/%s", strcmp(base, "/") ? base : "", in);
}

static bool is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* the parent of dir (in place); "/" stays */
static void parent_of(char *dir)
{
    char *sl = strrchr(dir, '/');
    if (!sl)
        return;
    if (sl == dir)
        dir[1] = 0;
    else
        *sl = 0;
}

/* a file name as the picker shows it: control characters as \t \n \e \xNN; all bytes
   past ASCII as \xNN too when ascii */
static void pick_escape(const char *in, char *out, size_t len, bool ascii)
{
    size_t o = 0;
    for (const unsigned char *c = (const unsigned char *)in; *c && o + 5 < len; c++) {
        if (*c == '\t')
            o += (size_t)snprintf(out + o, len - o, "\\t");
        else if (*c == '\n')
            o += (size_t)snprintf(out + o, len - o, "\\n");
        else if (*c == 27)
            o += (size_t)snprintf(out + o, len - o, "\\e");
        else if (*c < 0x20 || *c == 0x7f || (ascii && *c >= 0x80))
            o += (size_t)snprintf(out + o, len - o, "\\x%02x", *c);
        else
            out[o++] = (char)*c;
    }
    out[o] = 0;
}

/* s cut to at most n bytes, never inside a UTF-8 sequence */
static void cut_utf8(char *s, size_t n)
{
    if (strlen(s) <= n)
        return;
    while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
        n--;
    s[n] = 0;
}

/* the picker's state across its listings */
typedef struct {
    tui *t;
    const char *title, *suffix;
    bool save, picked, done;
    char *path;
    size_t len;
    char dir[PATH_MAX], pre[256], defname[256], tmp[PATH_MAX * 2], real[PATH_MAX];
} picker;

/* one listing of the folder: its entries, the menu over them and its window */
typedef struct {
    vm_dirent *ents;
    int ne, extra, nitems, H, W, rows;
    char **names;
    ITEM **items;
    PANEL *p;
    WINDOW *win, *sub;
    MENU *menu;
} pick_list;

/* where to start: a folder, or a file's folder with the file selected */
static void pick_start(picker *k, const char *start)
{
    if (k->save && k->path && k->path[0]) {
        const char *b = strrchr(k->path, '/');
        snprintf(k->defname, sizeof k->defname, "%s", b ? b + 1 : k->path);
    }
    if (start && *start) {
        if (is_dir(start))
            snprintf(k->dir, sizeof k->dir, "%s", start);
        else {
            snprintf(k->dir, sizeof k->dir, "%s", start);
            char *sl = strrchr(k->dir, '/');
            if (sl) {
                snprintf(k->pre, sizeof k->pre, "%s", sl + 1);
                if (sl == k->dir)
                    k->dir[1] = 0;
                else
                    *sl = 0;
            } else {
                snprintf(k->pre, sizeof k->pre, "%s", k->dir);
                k->dir[0] = 0;
            }
        }
    }
    if (!k->dir[0] || !is_dir(k->dir)) {
        if (!getcwd(k->dir, sizeof k->dir))
            snprintf(k->dir, sizeof k->dir, "/");
    }
    if (realpath(k->dir, k->real))
        snprintf(k->dir, sizeof k->dir, "%s", k->real);
    if (!k->pre[0] && k->defname[0])
        snprintf(k->pre, sizeof k->pre, "%s", k->defname);
}

/* the menu's items: the names, control characters escaped and cut to the menu's width */
static bool pick_items(const picker *k, pick_list *m)
{
    m->names = calloc((size_t)m->nitems + 1, sizeof *m->names);
    m->items = calloc((size_t)m->nitems + 2, sizeof *m->items);
    if (!m->names || !m->items)
        return false;
    int iw = m->W - 6;
    for (int i = 0; i < m->nitems; i++) {
        char nm[300];
        if (k->save && i == 0)
            snprintf(nm, sizeof nm, "[ save as a new name... ]");
        else {
            const vm_dirent *e = &m->ents[i - m->extra];
            snprintf(nm, sizeof nm, "%s%s", e->name, e->dir ? "/" : "");
        }
        /* control characters (tab, ESC, newline) shown escaped: libmenu refuses them,
           and one such name must not take the whole list down (the item opens the
           real name, by its index) */
        char shown[sizeof nm * 4];
        pick_escape(nm, shown, sizeof shown, false);
        if ((int)strlen(shown) > iw) /* the menu refuses items wider than its window */
            cut_utf8(shown, (size_t)iw);
        m->names[i] = strdup(shown);
        m->items[i] = m->names[i] ? new_item(m->names[i], "") : NULL;
        if (!m->items[i] && m->names[i]) { /* still refused (bad UTF-8): every byte past ASCII */
            pick_escape(nm, shown, sizeof shown, true);
            if ((int)strlen(shown) > iw)
                cut_utf8(shown, (size_t)iw);
            free(m->names[i]);
            m->names[i] = strdup(shown);
            m->items[i] = m->names[i] ? new_item(m->names[i], "") : NULL;
        }
        if (!m->items[i])
            return false;
    }
    return true;
}

/* the window and the menu at the terminal's size, the entry k->pre selected */
static bool pick_open(picker *k, pick_list *m)
{
    m->H = LINES - 4 > 24 ? 24 : LINES - 4;
    m->W = COLS - 4 > 76 ? 76 : COLS - 4;
    if (m->H < 8)
        m->H = LINES;
    if (m->W < 30)
        m->W = COLS;
    m->W = modal_w(m->W);
    m->extra = k->save ? 1 : 0; /* save: "[ new file name... ]" first */
    m->nitems = m->ne + m->extra;
    m->rows = m->H - 6;
    bool ok = pick_items(k, m) && m->nitems > 0;
    if (ok) {
        m->win = modal_open(m->H, m->W, &m->p);
        m->sub = m->win ? derwin(m->win, m->rows, m->W - 4, 3, 2) : NULL;
        m->menu = m->sub ? new_menu(m->items) : NULL;
        if (m->menu) {
            menu_opts_off(m->menu, O_SHOWDESC);
            set_menu_win(m->menu, m->win);
            set_menu_sub(m->menu, m->sub);
            set_menu_format(m->menu, m->rows, 1);
            set_menu_mark(m->menu, "");
            set_menu_fore(m->menu, (chtype)(k->t->color ? COLOR_PAIR(CP_SEL) : A_REVERSE));
            set_menu_back(m->menu, A_NORMAL);
            ok = post_menu(m->menu) == E_OK;
        } else
            ok = false;
    }
    if (ok && k->pre[0])
        for (int i = m->extra; i < m->nitems; i++)
            if (!strcmp(m->ents[i - m->extra].name, k->pre)) {
                set_current_item(m->menu, m->items[i]);
                break;
            }
    k->pre[0] = 0;
    return ok;
}

static void pick_close(tui *t, pick_list *m)
{
    if (m->menu) {
        unpost_menu(m->menu);
        free_menu(m->menu);
    }
    if (m->items) {
        for (int i = 0; i < m->nitems; i++)
            if (m->items[i])
                free_item(m->items[i]);
        free(m->items);
    }
    if (m->names) {
        for (int i = 0; i < m->nitems; i++)
            free(m->names[i]);
        free(m->names);
    }
    free(m->ents);
    if (m->sub)
        delwin(m->sub);
    if (m->win)
        modal_close(t, m->win, m->p);
    memset(m, 0, sizeof *m);
}

static void pick_draw(const picker *k, const pick_list *m)
{
    tui *t = k->t;
    WINDOW *win = m->win;
    int H = m->H, W = m->W;
    modal_frame(t, win, k->title);
    wmove(win, 1, 1);
    wclrtoeol(win);
    /* the folder, its tail when long */
    const char *shown = k->dir;
    int dl = (int)strlen(k->dir);
    if (dl > W - 4)
        shown = k->dir + dl - (W - 7);
    if (shown != k->dir)
        mvwaddstr(win, 1, 2, "...");
    tui_put(t, win, 1, shown != k->dir ? 5 : 2, W - 4, A_BOLD, shown);
    for (int y = H - 3; y < H - 1; y++) {
        wmove(win, y, 1);
        wclrtoeol(win);
    }
    char foot[160];
    snprintf(foot, sizeof foot, "Enter: open/pick  Backspace: up  / or ~: type a path%s%s",
             k->suffix ? "  only " : "", k->suffix ? k->suffix : "");
    tui_put(t, win, H - 3, 2, W - 4, tui_tag_attr(t, VM_TAG_DIM), foot);
    tui_put(t, win, H - 2, 2, W - 4, tui_tag_attr(t, VM_TAG_DIM),
            k->save ? "n: a new file name here  Esc: cancel" : "Esc: cancel");
    modal_frame(t, win, k->title);
    tui_redraw(t);
}

/* Enter on entry idx: a new name (save), a folder opened, a file picked. Returns true when
   the folder changed (list again). */
static bool pick_enter(picker *k, const pick_list *m, int idx)
{
    if (k->save && idx == 0) {
        char nm[PATH_MAX];
        snprintf(nm, sizeof nm, "%s", k->defname);
        if (tui_prompt(k->t, "File name: ", nm, sizeof nm) && nm[0]) {
            resolve(nm, k->dir, k->tmp, sizeof k->tmp);
            if (is_dir(k->tmp)) {
                snprintf(k->dir, sizeof k->dir, "%s", k->tmp);
                return true;
            } else if (access(k->tmp, F_OK) != 0 ||
                       tui_confirm(k->t, "The file exists. Replace it?")) {
                snprintf(k->path, k->len, "%s", k->tmp);
                k->picked = k->done = true;
            }
        }
        return false;
    }
    const vm_dirent *e = &m->ents[idx - m->extra];
    if (e->dir) {
        if (!strcmp(e->name, "..")) {
            const char *b = strrchr(k->dir, '/');
            snprintf(k->pre, sizeof k->pre, "%s", b ? b + 1 : "");
            parent_of(k->dir);
        } else {
            resolve(e->name, k->dir, k->tmp, sizeof k->tmp);
            if (realpath(k->tmp, k->real))
                snprintf(k->dir, sizeof k->dir, "%s", k->real);
            else
                snprintf(k->dir, sizeof k->dir, "%s", k->tmp);
        }
        return true;
    }
    resolve(e->name, k->dir, k->tmp, sizeof k->tmp);
    if (!k->save || tui_confirm(k->t, "The file exists. Replace it?")) {
        snprintf(k->path, k->len, "%s", k->tmp);
        k->picked = k->done = true;
    }
    return false;
}

/* '/', '~' or 'n' (save): a typed path or name. Returns true when the folder changed. */
static bool pick_typed(picker *k, wint_t wc)
{
    char typed[PATH_MAX];
    if (wc == 'n')
        snprintf(typed, sizeof typed, "%s", k->defname);
    else
        snprintf(typed, sizeof typed, "%c", (char)wc);
    if (!tui_prompt(k->t, wc == 'n' ? "File name: " : "Path: ", typed, sizeof typed) || !typed[0])
        return false;
    resolve(typed, k->dir, k->tmp, sizeof k->tmp);
    if (is_dir(k->tmp)) {
        if (realpath(k->tmp, k->real))
            snprintf(k->dir, sizeof k->dir, "%s", k->real);
        return true;
    }
    if (access(k->tmp, F_OK) == 0) {
        if (!k->save || tui_confirm(k->t, "The file exists. Replace it?")) {
            snprintf(k->path, k->len, "%s", k->tmp);
            k->picked = k->done = true;
        }
    } else if (k->save) {
        snprintf(k->path, k->len, "%s", k->tmp);
        k->picked = k->done = true;
    } else
        tui_status(k->t, true, "no such file or folder: %s", k->tmp);
    return false;
}

/* the menu's moves: arrows, pages, j/k/g/G; a resize lists again on the same entry.
   Returns true when the folder is to be listed again. */
static bool pick_move(picker *k, const pick_list *m, int r, wint_t wc, int idx)
{
    static const struct { wint_t key; int req; } moves[] = {
        {KEY_UP, REQ_UP_ITEM},       {KEY_DOWN, REQ_DOWN_ITEM},    {KEY_PPAGE, REQ_SCR_UPAGE},
        {KEY_NPAGE, REQ_SCR_DPAGE},  {KEY_HOME, REQ_FIRST_ITEM},   {KEY_END, REQ_LAST_ITEM},
    };
    if (r == KEY_CODE_YES) {
        if (wc == KEY_RESIZE) { /* remade at the new size, on the same entry */
            if (idx >= m->extra)
                snprintf(k->pre, sizeof k->pre, "%s", m->ents[idx - m->extra].name);
            return true;
        }
        for (size_t i = 0; i < sizeof moves / sizeof moves[0]; i++)
            if (moves[i].key == wc)
                menu_driver(m->menu, moves[i].req);
        return false;
    }
    if (r == OK) {
        if (wc == 'k')
            menu_driver(m->menu, REQ_UP_ITEM);
        else if (wc == 'j')
            menu_driver(m->menu, REQ_DOWN_ITEM);
        else if (wc == 'g')
            menu_driver(m->menu, REQ_FIRST_ITEM);
        else if (wc == 'G')
            menu_driver(m->menu, REQ_LAST_ITEM);
    }
    return false;
}

/* one key on the listing. Returns true when the folder is to be listed again. */
static bool pick_key(picker *k, const pick_list *m, int r, wint_t wc)
{
    int idx = item_index(current_item(m->menu));
    bool enter = is_enter(r, wc) || (r == KEY_CODE_YES && wc == KEY_RIGHT);
    if (r == KEY_CODE_YES && wc == KEY_MOUSE) {
        MEVENT ev;
        if (getmouse(&ev) == OK && wenclose(m->sub, ev.y, ev.x)) {
            int hit = top_row(m->menu) + ev.y - getbegy(m->sub);
            if (hit >= 0 && hit < m->nitems) {
                if (hit == idx)
                    enter = true;
                else
                    set_current_item(m->menu, m->items[hit]);
            }
        }
        if (!enter)
            return false;
    }
    if (enter)
        return pick_enter(k, m, idx);
    if (is_backspace(r, wc) || (r == KEY_CODE_YES && wc == KEY_LEFT) || (r == OK && wc == 'h')) {
        if (!strcmp(k->dir, "/"))
            return false;
        const char *b = strrchr(k->dir, '/');
        snprintf(k->pre, sizeof k->pre, "%s", b ? b + 1 : "");
        parent_of(k->dir);
        return true;
    }
    if (r == OK && (wc == KEY_ESC || wc == 'q')) {
        k->done = true;
        return false;
    }
    if (r == OK && (wc == '/' || wc == '~' || (k->save && wc == 'n')))
        return pick_typed(k, wc);
    return pick_move(k, m, r, wc, idx);
}

bool tui_pick_file(tui *t, const char *title, const char *start, const char *suffix, bool save,
                   char *path, size_t len)
{
    picker *k = calloc(1, sizeof *k);
    if (!k)
        return false;
    k->t = t;
    k->title = title;
    k->suffix = suffix;
    k->save = save;
    k->path = path;
    k->len = len;
    pick_start(k, start);
    while (!k->done) {
        pick_list m = {0};
        m.ne = vm_list_dir(k->dir, suffix, &m.ents);
        if (m.ne < 0) {
            tui_status(t, true, "cannot read %s: %s", k->dir, strerror(errno));
            if (!strcmp(k->dir, "/"))
                break;
            const char *b = strrchr(k->dir, '/');
            snprintf(k->pre, sizeof k->pre, "%s", b ? b + 1 : "");
            if (!b)
                break;
            parent_of(k->dir);
            continue;
        }
        bool ok = pick_open(k, &m), relist = false;
        if (!ok) {
            tui_status(t, true, "the file picker does not fit this terminal");
            k->done = true;
        }
        while (ok && !relist && !k->done) {
            pick_draw(k, &m);
            wint_t wc;
            int r = modal_key(t, &wc);
            if (r != ERR)
                relist = pick_key(k, &m, r, wc);
        }
        pick_close(t, &m);
    }
    bool picked = k->picked;
    free(k);
    return picked;
}
