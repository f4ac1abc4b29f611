/* Test helper: the scratch folder of a test program (tmpdir.h). */
#define _POSIX_C_SOURCE 200809L
#include "tmpdir.h"

#include <stdio.h>
#include <stdlib.h>

char tmpdir[256];

int setup_dir(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/nb_test.XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

int teardown_dir(void **state)
{
    (void)state;
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}
