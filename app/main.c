/* nanobench: command-line entry point. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "tui/tui_main.h"

#ifndef NB_VERSION
#define NB_VERSION "0.0.0"
#endif

static void usage(FILE *f)
{
    fprintf(f,
            "nanobench %s - bring an ONNX model up on the Nano NPU\n"
            "\n"
            "usage: nanobench [MODEL.onnx [--input_shape S]]   the workbench (curses)\n"
            "       nanobench <command> [options]\n"
            "\n"
            "commands:\n"
            "  info MODEL [--input_shape \"name:n,c,h,w;...\"] [--json]\n"
            "        inputs, outputs, opset, node count and operator histogram\n"
            "  infer MODEL --input NAME=FILE.npy|FILE.bin|random[:SEED] ... --output-dir DIR\n"
            "        [--dump GOLDEN_DIR] [--dump-all] [--input_shape ...]   run the float32\n"
            "        reference (golden) and write the outputs (with --dump-all every intermediate\n"
            "        tensor) as .npy; --dump: every layer's output as compare's golden dumps\n"
            "\n"
            "  estimate -m MODEL [-p] [--json] [--input_shape ...] [--soc_version Ascend035A|B]\n"
            "        sizes (weights, RAM, exeom), op types and unsupported ops on the Nano NPU\n"
            "  calibrate --model M --save_path DIR/PREFIX --data_dir \"d1;d2\" [--input_shape ...]\n"
            "            [--calibration_config CFG | --batch_num N] [--algo ifmr|hfmg|...|auto]\n"
            "            [--json] [--progress]\n"
            "        post-training calibration (AMCT's flags): the record file and per-layer report\n"
            "  atc --mode=30 --framework=5 --soc_version=Ascend035A --model=M --output=NAME ...\n"
            "        the compiler's command line: NAME.exeom and NAME.dbg\n"
            "  run NAME.exeom [--input NAME=FILE ...] [--output-dir DIR] [--dump acl.json] [--profile]\n"
            "            [--json]\n"
            "        run on the simulated NPU through the ACL API: outputs, cycles, dumps\n"
            "  compare file_compare -m NPU_DUMPS -g GOLDEN_DUMPS -out DIR [--json] | compare convert -d DUMP\n"
            "        per-layer metrics of the NPU's dumps against the reference's (infer --dump)\n"
            "  compare layer -m NPU_DUMPS -g GOLDEN_DUMPS --layer NAME [--bins N] [--json]\n"
            "        one layer in detail: worst elements, first values, histogram of the error\n"
            "  bringup MODEL --data_dir \"d1;d2\" [--input_shape ...] [--calibration_config CFG |\n"
            "          --batch_num N] [--eval_dir \"e1;e2\"] [--eval_count K] [--out DIR] [atc flags]\n"
            "          [--threshold ...] [--fail-under-cosine X] [--auto_place] [--cpu_nodes \"a;b\"]\n"
            "          [--nb_input_scale ...] [--json]\n"
            "        estimate -> calibrate -> atc -> run -> infer -> compare in one command and a\n"
            "        one-screen summary; exit 3 when the worst output cosine is below X\n"
            "        (nanobench bringup --help: every option)\n"
            "  report RUN [RUN2] -o FILE.html [--pipeline P.json] | report RUN --text\n"
            "        a bring-up's HTML page (two side by side), or its one-screen text again\n"
            "  history [list|show RUN|diff RUN_A RUN_B|export|rm RUN] ...\n"
            "        browse, compare and export the recorded runs\n"
            "\n"
            "options:\n"
            "  -h, --help        this help (also 'nanobench <command> --help')\n"
            "  -V, --version     print the version\n"
            "  --db PATH         run database (default $NANOBENCH_DB, else\n"
            "                    $XDG_DATA_HOME/nanobench/runs.db or ~/.local/share/nanobench/runs.db)\n"
            "  --no-record       do not record this run\n"
            "  --require-record  fail (exit 2) when the run cannot be recorded\n"
            "  --parent RUN      record this run as derived from run RUN (lineage)\n"
            "\n"
            "Exit status: 0 success, 2 bad input (model, flag, data), 1 internal error;\n"
            "bringup: 3 under --fail-under-cosine, 130 when interrupted.\n",
            NB_VERSION);
}

/* Takes the options every command shares out of argv: --db PATH, --no-record,
 * --require-record, --parent RUN. Returns 0, or 2 after a usage error. */
static int global_options(int *argc, char **argv)
{
    int o = 1;
    for (int i = 1; i < *argc; i++) {
        const char *v;
        int r;
        if ((r = cli_opt(*argc, argv, &i, "--db", &v))) {
            if (r < 0 || !*v || g_rec.db_path) {
                fprintf(stderr, "nanobench: --db needs one file path\n");
                return 2;
            }
            g_rec.db_path = v;
        } else if (!strcmp(argv[i], "--no-record")) {
            g_rec.no_record = true;
        } else if (!strcmp(argv[i], "--require-record")) {
            g_rec.require_record = true;
        } else if ((r = cli_opt(*argc, argv, &i, "--parent", &v))) {
            char *end;
            long long id = r > 0 ? strtoll(v, &end, 10) : 0;
            if (r < 0 || *end || id <= 0 || g_rec.parent) {
                fprintf(stderr, "nanobench: --parent needs one run id (see 'nanobench history')\n");
                return 2;
            }
            g_rec.parent = id;
        } else {
            argv[o++] = argv[i];
        }
    }
    if (g_rec.no_record && g_rec.require_record) {
        fprintf(stderr, "nanobench: --no-record and --require-record contradict each other\n");
        return 2;
    }
    *argc = o;
    argv[o] = NULL;
    return 0;
}

static int run_command(int argc, char **argv);
static int stdout_written(const char *cmd, int rc);

/* The command of a command line that records a run, and so runs supervised
 * (app/supervise.c): its database path into *db (NULL: the default), false for the
 * workbench, history, report, help, --no-record and a line global_options will refuse. */
static bool wants_supervisor(int argc, char **argv, const char **db)
{
    static const char *const rec[] = {"info", "infer", "estimate", "calibrate", "atc", "run",
                                      "compare", "bringup"};
    const char *cmd = NULL, *v;
    *db = NULL;
    for (int i = 1; i < argc; i++) {
        int r;
        if ((r = cli_opt(argc, argv, &i, "--db", &v)) || (r = cli_opt(argc, argv, &i, "--parent",
                                                                      &v))) {
            if (r < 0)
                return false;
            if (!strncmp(argv[i - (argv[i] == v ? 1 : 0)], "--db", 4))
                *db = v;
        } else if (!strcmp(argv[i], "--no-record")) {
            return false;
        } else if (!cmd && strcmp(argv[i], "--require-record")) {
            cmd = argv[i];
        }
    }
    for (size_t k = 0; cmd && k < sizeof rec / sizeof rec[0]; k++)
        if (!strcmp(cmd, rec[k]))
            return true;
    return false;
}

int main(int argc, char **argv)
{
    const char *db;
    if (!cli_supervised_child() && wants_supervisor(argc, argv, &db)) {
        int rc = cli_supervise(argv, db);
        if (rc >= 0)
            return rc;
    }
    /* the command line as typed, for the run's parameters (global_options edits argv) */
    char **all = malloc(sizeof(char *) * ((size_t)argc + 1));
    if (all) {
        memcpy(all, argv, sizeof(char *) * ((size_t)argc + 1));
        g_rec.argc = argc;
        g_rec.argv = all;
    }
    cli_cleanup_install();
    int rc = global_options(&argc, argv) ? 2 : run_command(argc, argv);
    free(all);
    return rc;
}

static int run_command(int argc, char **argv)
{
    /* no command: the workbench (on a terminal); `nanobench MODEL.onnx [...]` opens it
       on the model */
    if (argc < 2)
        return isatty(STDIN_FILENO) && isatty(STDOUT_FILENO) ? tui_main(0, argv + 1, g_rec.db_path)
                                                              : (usage(stdout), 0);
    const char *cmd = argv[1];
    size_t cl = strlen(cmd);
    if (cl > 5 && !strcmp(cmd + cl - 5, ".onnx"))
        return tui_main(argc - 1, argv + 1, g_rec.db_path);
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(cmd, "-V") || !strcmp(cmd, "--version") || !strcmp(cmd, "version")) {
        printf("nanobench %s\n", NB_VERSION);
        return 0;
    }
    /* every command's stdout and stderr through the terminal filter (app/term.c), but an
       export's CSV or JSON on stdout, which is data */
    cli_term_filter(strcmp(cmd, "history") || argc < 3 || strcmp(argv[2], "export"), true);
    /* a closed pipe on stdout is a write error the command reports (exit 2, "cannot write to
       standard output"), not a death by SIGPIPE recorded as a crash */
    signal(SIGPIPE, SIG_IGN);
    int rc;
    if (!strcmp(cmd, "info"))
        rc = cmd_info(argc - 1, argv + 1);
    else if (!strcmp(cmd, "infer"))
        rc = cmd_infer(argc - 1, argv + 1);
    else if (!strcmp(cmd, "estimate"))
        rc = cmd_estimate(argc - 1, argv + 1);
    else if (!strcmp(cmd, "calibrate"))
        rc = cmd_calibrate(argc - 1, argv + 1);
    else if (!strcmp(cmd, "atc"))
        rc = cmd_atc(argc - 1, argv + 1);
    else if (!strcmp(cmd, "run"))
        rc = cmd_run(argc - 1, argv + 1);
    else if (!strcmp(cmd, "compare"))
        rc = cmd_compare(argc - 1, argv + 1);
    else if (!strcmp(cmd, "bringup"))
        rc = cmd_bringup(argc - 1, argv + 1);
    else if (!strcmp(cmd, "history"))
        return stdout_written(cmd, cmd_history(argc - 1, argv + 1));
    else if (!strcmp(cmd, "report")) /* reads the history; not a run of its own */
        return stdout_written(cmd, cmd_report(argc - 1, argv + 1));
    else
        return cli_fail(2, "unknown command '%s' (see 'nanobench --help')", cmd);
    return rec_finish(stdout_written(cmd, rc));
}

/* A command's text on stdout that could not be written (a full disk, /dev/full, a closed
   pipe) is a failure of the command: exit 2 with one line, as --json's writes. */
static int stdout_written(const char *cmd, int rc)
{
    if (rc == 0 && (fflush(stdout) != 0 || ferror(stdout)))
        return cli_fail(2, "%s: cannot write to standard output: %s", cmd,
                        errno ? strerror(errno) : "write error");
    return rc;
}
