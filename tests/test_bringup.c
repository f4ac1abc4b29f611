/* nb_bringup's cancellation (engine/bringup): a cancel flag set at a given point of the
 * bring-up stops it with NB_ERR_CANCELLED and no summary, whatever the stage; the same
 * bring-up left alone finds the fix. The model is make_fixture's ln_sat (a LayerNorm whose
 * variance clamps at fp16's 65504 on x = +-1000...; the ladder of --nb_input_scale worked by
 * hand in tests/test_cli.sh: 2^-1 and 2^-2 clamp, 2^-4 and 2^-3 are clean, 2^-3 is kept).
 * A new user's find: a SIGINT during the fp16 fix ended the bring-up with status 0 and a
 * summary of NaNs (the fix's cancel returned without an error set).
 * usage: test_bringup MAKE_FIXTURE */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cmocka.h>
#include <jansson.h>

#include "nb/bringup.h"
#include "tmpdir.h"

extern char **environ;
static const char *make_fixture;
static char model[512], data[512];

/* when to cancel: at the note that starts the fp16 fix, or at the start of step k */
typedef struct when {
    const char *note;
    int step;
    volatile sig_atomic_t flag;
} when;

static void on_note(void *user, const char *msg)
{
    when *w = user;
    if (w->note && strstr(msg, w->note))
        w->flag = SIGINT;
}

static void on_step(void *user, int step, const char *detail, const char *progress, bool done,
                    double ms)
{
    (void)detail, (void)progress, (void)ms;
    when *w = user;
    if (!done && w->step >= 0 && step == w->step)
        w->flag = SIGINT;
}

static int setup(void **state)
{
    if (setup_dir(state))
        return -1;
    snprintf(model, sizeof model, "%s/ln.onnx", tmpdir);
    snprintf(data, sizeof data, "%s/ln", tmpdir);
    char *argv[] = {(char *)make_fixture, "ln_sat", model, NULL};
    pid_t pid;
    int ws;
    if (posix_spawn(&pid, make_fixture, NULL, NULL, argv, environ) || waitpid(pid, &ws, 0) != pid ||
        !WIFEXITED(ws) || WEXITSTATUS(ws))
        return -1;
    mkdir(data, 0777);
    for (int f = 0; f < 4; f++) { /* x[i] = +-1000 (1 + f / 100) (1 + (i mod 3) / 50) */
        float x[16];
        for (int i = 0; i < 16; i++)
            x[i] = (float)((i % 2 ? 1000 : -1000) * (1 + 0.01 * f) * (1 + 0.02 * (i % 3)));
        char p[600];
        snprintf(p, sizeof p, "%s/b%d.bin", data, f);
        FILE *fp = fopen(p, "wb");
        if (!fp || fwrite(x, sizeof x, 1, fp) != 1)
            return -1;
        fclose(fp);
    }
    return 0;
}

static nb_err bring_up(when *w, const char *out, nb_bringup_result *r, nb_status *st)
{
    nb_bringup_opts o = {.model = model, .data_dir = data, .out = out, .eval_count = 4};
    nb_bringup_hooks h = {.user = w, .note = on_note, .step = on_step, .cancel = &w->flag};
    return nb_bringup(&o, &h, r, st);
}

static bool exists(const char *dir, const char *name)
{
    char p[700];
    struct stat sb;
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return stat(p, &sb) == 0;
}

/* left alone: the fix found is 2^-3 (the ladder of test_cli.sh) */
static void test_uncancelled(void **state)
{
    (void)state;
    char out[600];
    snprintf(out, sizeof out, "%s/whole", tmpdir);
    when w = {NULL, -1, 0};
    nb_bringup_result r;
    nb_status st = {0};
    assert_int_equal(bring_up(&w, out, &r, &st), NB_OK);
    assert_non_null(r.summary);
    const json_t *fx = json_object_get(r.summary, "saturation_fix");
    assert_string_equal(json_string_value(json_object_get(fx, "nb_input_scale")), "x:2^-3");
    assert_true(exists(out, "summary.json"));
    nb_bringup_result_free(&r);
}

/* cancelled as the fix starts, and at the calibration: NB_ERR_CANCELLED, no summary */
static void test_cancelled(void **state)
{
    (void)state;
    const struct {
        const char *note;
        int step;
        const char *stage;
    } cases[] = {{"[+] fp16 saturation", -1, "the fp16 fix"}, {NULL, 1, "calibrate"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char out[600];
        snprintf(out, sizeof out, "%s/cancel%zu", tmpdir, i);
        when w = {cases[i].note, cases[i].step, 0};
        nb_bringup_result r;
        nb_status st = {0};
        assert_int_equal(bring_up(&w, out, &r, &st), NB_ERR_CANCELLED);
        assert_null(r.summary);
        assert_non_null(strstr(st.msg, cases[i].stage));
        assert_false(exists(out, "summary.json"));
        assert_false(exists(out, "report.html"));
        nb_bringup_result_free(&r);
    }
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_bringup MAKE_FIXTURE\n");
        return 2;
    }
    make_fixture = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_uncancelled),
        cmocka_unit_test(test_cancelled),
    };
    return cmocka_run_group_tests(tests, setup, teardown_dir);
}
