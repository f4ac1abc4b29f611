/* Test helper: one scratch folder per test program, made by the cmocka group setup and
 * removed with its contents by the group teardown. */
#ifndef NB_TEST_TMPDIR_H
#define NB_TEST_TMPDIR_H

/* The folder (valid between setup and teardown). */
extern char tmpdir[256];
/* cmocka group setup / teardown: mkdtemp under /tmp, then rm -rf. */
int setup_dir(void **state);
int teardown_dir(void **state);

#endif
