/* nanobench CLI: the terminal as a sink of its own (issue 35). Every byte a text command
 * writes to standard output passes one filter, whatever string it came from (a model's
 * producer_name, a node or output name, a path, a database row): C0 control bytes other
 * than newline and tab, DEL, and the C1 controls (U+0080..U+009F, as UTF-8 "C2 80".."C2 9F",
 * or as single bytes that are not UTF-8) become '?'. So no name can move the cursor, set the
 * window title (OSC), ring the bell or start a CSI sequence on the user's terminal, however
 * the command printed it. Text is otherwise unchanged (UTF-8 names print as they are).
 * JSON output is unaffected (jansson writes every control character as \uXXXX). */
#define _GNU_SOURCE /* fopencookie */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

typedef struct term_cookie {
    int fd;
    unsigned char held; /* a lead byte 0xC2 whose next byte decides (C1 or not) */
    unsigned char need; /* continuation bytes the UTF-8 character in progress still needs
                           (kept across writes) */
} term_cookie;

/* Writes all of buf to fd (retrying short writes and EINTR); -1 on error. */
static int write_all(int fd, const unsigned char *buf, size_t n)
{
    while (n) {
        ssize_t w = write(fd, buf, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        buf += w;
        n -= (size_t)w;
    }
    return 0;
}

static ssize_t term_write(void *cookie, const char *data, size_t size)
{
    term_cookie *t = cookie;
    unsigned char out[4096];
    size_t o = 0;
    for (size_t i = 0; i < size; i++) {
        unsigned char c = (unsigned char)data[i];
        if (o + 4 > sizeof out) {
            if (write_all(t->fd, out, o))
                return -1;
            o = 0;
        }
        if (t->held) { /* C2 then c: a C1 control (U+0080..U+009F) when c is 0x80..0x9F */
            t->held = 0;
            if (c >= 0x80 && c <= 0x9F) {
                out[o++] = '?';
                continue;
            }
            out[o++] = 0xC2;
            if (c >= 0xA0 && c <= 0xBF) {
                out[o++] = c;
                continue;
            }
            /* a lone C2: c is a new byte */
        }
        if (t->need && (c & 0xC0) == 0x80) { /* a continuation the character expects */
            t->need--;
            out[o++] = c;
            continue;
        }
        t->need = 0;
        if (c == 0xC2) {
            t->held = 1;
            continue;
        }
        if (c >= 0xC3 && c <= 0xDF)
            t->need = 1;
        else if ((c & 0xF0) == 0xE0)
            t->need = 2;
        else if (c >= 0xF0 && c <= 0xF4)
            t->need = 3;
        /* C0 but newline and tab, DEL, and 0x80..0x9F that no lead byte expects: an 8-bit
           C1 control (CSI 0x9B) to a terminal, whatever came before it */
        bool ctl = (c < 0x20 && c != '\n' && c != '\t') || c == 0x7F || (c >= 0x80 && c <= 0x9F);
        out[o++] = ctl ? '?' : c;
    }
    if (o && write_all(t->fd, out, o))
        return -1;
    return (ssize_t)size;
}

static int term_close(void *cookie)
{
    term_cookie *t = cookie;
    if (t->held) {
        unsigned char c = 0xC2;
        t->held = 0;
        return write_all(t->fd, &c, 1);
    }
    return 0;
}

/* Replaces *stream (fd's FILE) by a filtered one: line-buffered on a terminal (stderr
 * unbuffered), else fully buffered. */
static void filter(FILE **stream, term_cookie *cookie, int fd, int mode)
{
    cookie_io_functions_t io = {.write = term_write, .close = term_close};
    fflush(*stream);
    FILE *f = fopencookie(cookie, "w", io);
    if (!f)
        return; /* out of memory at start: the plain stream stays */
    setvbuf(f, NULL, mode, BUFSIZ);
    *stream = f;
    (void)fd;
}

void cli_term_filter(bool out, bool err)
{
    static term_cookie c_out = {STDOUT_FILENO, 0, 0}, c_err = {STDERR_FILENO, 0, 0};
    if (out)
        filter(&stdout, &c_out, STDOUT_FILENO, isatty(STDOUT_FILENO) ? _IOLBF : _IOFBF);
    if (err)
        filter(&stderr, &c_err, STDERR_FILENO, _IONBF);
}

void cli_term_raw(const char *seq)
{
    fflush(stderr);
    if (write_all(STDERR_FILENO, (const unsigned char *)seq, strlen(seq))) {
        /* a closed stderr: nothing to redraw */
    }
}
