/* nanobench: command-line entry point. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

#ifndef NB_VERSION
#define NB_VERSION "0.0.0"
#endif

int cli_opt(int argc, char **argv, int *i, const char *name, const char **val)
{
    const char *a = argv[*i];
    size_t n = strlen(name);
    if (strncmp(a, name, n) != 0)
        return 0;
    if (a[n] == '=') {
        *val = a + n + 1;
        return 1;
    }
    if (a[n] != 0)
        return 0;
    if (*i + 1 >= argc)
        return -1;
    *val = argv[++*i];
    return 1;
}

/* Writes s to f with tab, newline, carriage return and backslash escaped (\t \n \r \\),
 * so that a manifest row is one line of tab-separated fields whatever a name holds. */
void cli_put_escaped(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '\t': fputs("\\t", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\\': fputs("\\\\", f); break;
        default: fputc(*s, f);
        }
    }
}

int cli_error(const nb_status *st)
{
    fprintf(stderr, "nanobench: %s\n", st->msg);
    return nb_exit_code(st->code);
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "nanobench %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, " (see 'nanobench %s --help')\n", cmd);
    return 2;
}

static void usage(FILE *f)
{
    fprintf(f,
            "nanobench %s - bring an ONNX model up on the Nano NPU\n"
            "\n"
            "usage: nanobench <command> [options]\n"
            "\n"
            "commands:\n"
            "  info MODEL [--input_shape \"name:n,c,h,w;...\"]\n"
            "        inputs, outputs, opset, node count and operator histogram\n"
            "  infer MODEL --input NAME=FILE.npy|FILE.bin|random[:SEED] ... --output-dir DIR\n"
            "        [--dump-all] [--input_shape ...]   run the float32 reference (golden)\n"
            "        and write the outputs (with --dump-all every intermediate tensor) as .npy\n"
            "\n"
            "options:\n"
            "  -h, --help     this help (also 'nanobench <command> --help')\n"
            "  -V, --version  print the version\n"
            "\n"
            "Exit status: 0 success, 2 bad input (model, flag, data), 1 internal error.\n",
            NB_VERSION);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stdout);
        return 0;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(cmd, "-V") || !strcmp(cmd, "--version") || !strcmp(cmd, "version")) {
        printf("nanobench %s\n", NB_VERSION);
        return 0;
    }
    if (!strcmp(cmd, "info"))
        return cmd_info(argc - 1, argv + 1);
    if (!strcmp(cmd, "infer"))
        return cmd_infer(argc - 1, argv + 1);
    fprintf(stderr, "nanobench: unknown command '%s' (see 'nanobench --help')\n", cmd);
    return 2;
}
