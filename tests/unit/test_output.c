/* test_output.c - the all-or-none output set (util/output.h): a commit
 * replaces every file; a rename failing midway puts back every file
 * renamed before it; temporaries never outlive the set; a dead run's
 * records are rolled back and removed; outputs that name one file, or an
 * input, are refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "util/output.h"

static char dir[64];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/gp-test-output-XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static const char *path(const char *name)
{
    static char p[4][256];
    static int k;
    k = (k + 1) % 4;
    snprintf(p[k], sizeof p[k], "%s/%s", dir, name);
    return p[k];
}

static void put_file(const char *name, const char *text)
{
    FILE *f = fopen(path(name), "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* The file's content ("<none>" if missing). */
static const char *content(const char *name)
{
    static char buf[256];
    FILE *f = fopen(path(name), "r");
    if (!f)
        return "<none>";
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* Entries of dir other than "." and "..", as "a b c" in name order. */
static int entries(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "ls -A '%s' | wc -l", dir);
    FILE *p = popen(cmd, "r");
    int n = -1;
    if (p && fscanf(p, "%d", &n) != 1)
        n = -1;
    if (p)
        pclose(p);
    return n;
}

static void test_commit_replaces_all(void **state)
{
    (void)state;
    put_file("a.json", "old a");
    struct gp_output_set s;
    struct gp_diag d = {""};
    size_t ia, ib;
    gp_output_set_init(&s);
    assert_int_equal(gp_output_add(&s, "--json", path("a.json"), &ia, &d), GP_OK);
    assert_int_equal(gp_output_add(&s, "--csv", path("b.csv"), &ib, &d), GP_OK);
    assert_int_equal(entries(), 3); /* a.json and two temporaries */
    assert_int_equal(gp_output_put(&s, ia, "new a", 5, &d), GP_OK);
    assert_int_equal(gp_output_put(&s, ib, "new b", 5, &d), GP_OK);
    assert_string_equal(content("a.json"), "old a"); /* nothing visible before the commit */
    assert_int_equal(gp_output_commit(&s, &d), GP_OK);
    gp_output_set_free(&s);
    assert_string_equal(content("a.json"), "new a");
    assert_string_equal(content("b.csv"), "new b");
    assert_int_equal(entries(), 2); /* no temporary, no undo record */
}

static void test_rename_failing_midway_restores_all(void **state)
{
    (void)state;
    put_file("a.json", "old a");
    put_file("b.csv", "old b");
    struct gp_output_set s;
    struct gp_diag d = {""};
    size_t i[3];
    gp_output_set_init(&s);
    assert_int_equal(gp_output_add(&s, "--json", path("a.json"), &i[0], &d), GP_OK);
    assert_int_equal(gp_output_add(&s, "--csv", path("b.csv"), &i[1], &d), GP_OK);
    assert_int_equal(gp_output_add(&s, "--report", path("c.html"), &i[2], &d), GP_OK);
    for (int k = 0; k < 3; k++)
        assert_int_equal(gp_output_put(&s, i[k], "new", 3, &d), GP_OK);
    /* the last rename fails: its temporary is gone */
    assert_int_equal(unlink(s.items[i[2]].tmp), 0);
    assert_int_equal(gp_output_commit(&s, &d), GP_EIO);
    assert_non_null(strstr(d.msg, "--report"));
    gp_output_set_free(&s);
    assert_string_equal(content("a.json"), "old a");
    assert_string_equal(content("b.csv"), "old b");
    assert_string_equal(content("c.html"), "<none>");
    assert_int_equal(entries(), 2);
}

static void test_free_without_commit_removes_temporaries(void **state)
{
    (void)state;
    put_file("a.json", "old a");
    struct gp_output_set s;
    struct gp_diag d = {""};
    size_t ia;
    gp_output_set_init(&s);
    assert_int_equal(gp_output_add(&s, "--json", path("a.json"), &ia, &d), GP_OK);
    assert_int_equal(gp_output_put(&s, ia, "new a", 5, &d), GP_OK);
    gp_output_set_free(&s);
    assert_string_equal(content("a.json"), "old a");
    assert_int_equal(entries(), 1);
}

static void test_refusals(void **state)
{
    (void)state;
    put_file("a.json", "old a");
    put_file("in.yaml", "x");
    assert_int_equal(mkdir(path("sub"), 0777), 0);
    struct gp_output_set s;
    struct gp_diag d = {""};
    gp_output_set_init(&s);
    assert_int_equal(gp_output_add(&s, "--json", path("a.json"), NULL, &d), GP_OK);
    char alias[160];
    snprintf(alias, sizeof alias, "%s/./sub/../a.json", dir);
    assert_int_equal(gp_output_add(&s, "--csv", alias, NULL, &d), GP_EUSAGE);
    assert_non_null(strstr(d.msg, "the same file as --json"));
    assert_int_equal(gp_output_add(&s, "--csv", path("missing/x.csv"), NULL, &d), GP_EUSAGE);
    assert_non_null(strstr(d.msg, "no directory"));
    assert_int_equal(gp_output_add(&s, "--csv", path("sub"), NULL, &d), GP_EUSAGE);
    assert_non_null(strstr(d.msg, "is a directory"));
    assert_int_equal(gp_output_add(&s, "--csv", "", NULL, &d), GP_EUSAGE);
    assert_int_equal(gp_output_check_input(&s, "--cluster", path("in.yaml"), NULL, &d), GP_OK);
    assert_int_equal(gp_output_check_input(&s, "--cluster", path("a.json"), NULL, &d), GP_EUSAGE);
    assert_non_null(strstr(d.msg, "the input --cluster"));
    assert_int_equal(gp_output_check_input(&s, "--workload", dir, NULL, &d), GP_EUSAGE);
    assert_non_null(strstr(d.msg, "inside the input directory"));
    gp_output_set_free(&s);
    assert_string_equal(content("a.json"), "old a");
    assert_int_equal(entries(), 3);
}

/* A pid no process has: a child that has exited and been reaped. */
static pid_t dead_pid(void)
{
    pid_t pid = fork();
    if (pid == 0)
        _exit(0);
    waitpid(pid, NULL, 0);
    return pid;
}

static void test_recover_dead_run(void **state)
{
    (void)state;
    pid_t dead = dead_pid();
    put_file("a.json", "new a"); /* renamed into place by the dead run */
    put_file("b.csv", "new b");  /* created by it */
    put_file("c.txt", "mine");   /* replaced by someone else since */
    put_file("old-a", "old a");
    put_file("old-c", "old c");
    struct stat a, b;
    assert_int_equal(stat(path("a.json"), &a), 0);
    assert_int_equal(stat(path("b.csv"), &b), 0);
    char name[160];
    snprintf(name, sizeof name, ".a.json.gpuplane-%ld-0-%llu.old", (long)dead,
             (unsigned long long)a.st_ino);
    assert_int_equal(rename(path("old-a"), path(name)), 0);
    snprintf(name, sizeof name, ".b.csv.gpuplane-%ld-1-%llu.new", (long)dead,
             (unsigned long long)b.st_ino);
    put_file(name, "");
    snprintf(name, sizeof name, ".c.txt.gpuplane-%ld-2-1.old", (long)dead);
    assert_int_equal(rename(path("old-c"), path(name)), 0);
    snprintf(name, sizeof name, ".d.gpuplane-%ld-3.tmp", (long)dead);
    put_file(name, "partial");
    snprintf(name, sizeof name, ".e.gpuplane-%ld-4.tmp", (long)getpid());
    put_file(name, "a live run's");
    gp_output_recover_dir(dir);
    assert_string_equal(content("a.json"), "old a");
    assert_string_equal(content("b.csv"), "<none>");
    assert_string_equal(content("c.txt"), "mine");
    assert_string_equal(content(name), "a live run's");
    assert_int_equal(entries(), 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_commit_replaces_all, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rename_failing_midway_restores_all, setup, teardown),
        cmocka_unit_test_setup_teardown(test_free_without_commit_removes_temporaries, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_refusals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_recover_dead_run, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
