/* test_cgroup.c -- where the cgroup v2 hierarchy is (from mount tables of several kinds of
 * host), and, where this host gives us a subtree, a cgroup's life: made, populated, found
 * by name, killed with everything in it, waited for, removed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "proc/cgroup.h"
#include "io/loop.h"
#include "proc/procs.h"
#include "proc/spawn.h"
#include "base/util.h"

#define V1 "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
#define ROOT "22 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw\n"

static void expect_dir(const char *mountinfo, const char *cg, const char *want) {
        char *dir = NULL;
        assert_int_equal(cgroup_v2_dir(mountinfo, cg, &dir), 0);
        assert_string_equal(dir, want);
        free(dir);
}

static void expect_error(const char *mountinfo, const char *cg, int want) {
        char *dir = (char *)"untouched";
        assert_int_equal(cgroup_v2_dir(mountinfo, cg, &dir), want);
        assert_string_equal(dir, "untouched");
}

static void test_v2_dir(void **state) {
        /* a hybrid host: v1 controllers, cgroup2 beside them */
        const char *hybrid = ROOT V1 "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
        expect_dir(hybrid, "/", "/sys/fs/cgroup/unified");
        expect_dir(hybrid, "/system.slice/x.service", "/sys/fs/cgroup/unified/system.slice/x.service");
        /* the unified hierarchy, with optional fields before the separator */
        const char *unified = ROOT "30 23 0:26 / /sys/fs/cgroup rw,nosuid,nodev shared:4 master:1 - cgroup2 cgroup2 "
                                   "rw,nsdelegate,memory_recursiveprot\n";
        expect_dir(unified, "/user.slice/user-1000.slice/user@1000.service/app.slice",
                   "/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/app.slice");
        /* a mount point with a space in it, as mountinfo escapes it */
        expect_dir(ROOT "50 22 0:40 / /mnt/cg\\040two rw - cgroup2 none rw\n", "/a", "/mnt/cg two/a");
        /* a container that bind-mounts only its own part of the hierarchy */
        const char *part = ROOT "60 22 0:40 /docker/abc /sys/fs/cgroup ro - cgroup2 cgroup2 rw\n";
        expect_dir(part, "/docker/abc", "/sys/fs/cgroup");
        expect_dir(part, "/docker/abc/inner", "/sys/fs/cgroup/inner");
        expect_error(part, "/docker/abcdef", -EXDEV); /* a prefix of the name is not a parent */
        expect_error(part, "/system.slice", -EXDEV);
        /* no cgroup2 at all: only v1 */
        expect_error(ROOT V1, "/", -ENOENT);
        expect_error("", "/", -ENOENT);
}

static bool running(pid_t pid) {
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
        _cleanup_free_ char *text = NULL;
        size_t len;
        if (read_file_capped(path, 4096, &text, &len) < 0)
                return false;
        char *rp = strrchr(text, ')');
        return rp && rp[2] != 'Z' && rp[2] != 'X';
}

/* A cgroup with a process that forks, double-forks into its own session and ignores
 * SIGTERM: every one of them is a member; cgroup_find knows it by name; procs_terminate
 * with it leaves it empty, then it can go. */
static void test_lifecycle(void **state) {
        struct cgroup_base *b = NULL;
        _cleanup_free_ char *why = NULL;
        if (cgroup_base_open(&b, &why) < 0) {
                print_message("no cgroups here (%s)\n", why ? why : "?");
                skip();
        }
        assert_non_null(b->path);
        char token[33];
        assert_int_equal(random_hex(token, 16), 0);
        _cleanup_free_ char *name = cgroup_name(token);
        assert_true(startswith(name, CGROUP_PREFIX));
        struct cgroup *cg = NULL;
        assert_int_equal(cgroup_create(b, name, &cg), 0);
        struct cgroup *again = NULL;
        assert_int_equal(cgroup_create(b, name, &again), -EEXIST);
        assert_int_equal(cgroup_populated(cg), 0);

        struct spawn_options o = {
                .argv = (char *const[]){"/bin/sh", "-c",
                                        "trap '' TERM; (setsid env -i sh -c \"trap '' TERM HUP; exec sleep 300\" &); "
                                        "sleep 300 & exec sleep 300",
                                        NULL},
                .group = SPAWN_GROUP_NEW_SESSION,
                .into_cgroup = true,
                .cgroup_fd = cg->dirfd,
        };
        struct spawn s;
        assert_int_equal(spawn_start(&o, &s), 0);
        pid_t *pids = NULL;
        size_t n = 0;
        usec_t until = now_usec() + 5 * USEC_PER_SEC;
        for (;;) {
                free(pids);
                assert_int_equal(cgroup_members(cg, &pids, &n), 0);
                if (n >= 3)
                        break;
                assert_true(now_usec() < until);
                usleep(10000);
        }
        assert_int_equal(cgroup_populated(cg), 1);

        /* found by its name alone, as a run after a killed one finds it */
        struct cgroup *found = NULL;
        assert_int_equal(cgroup_find(name, &found), 0);
        assert_string_equal(found->path, cg->path);
        assert_int_equal(cgroup_find("gauntlet-no-such-cgroup", &again), -ENOENT);

        struct loop *l = NULL;
        assert_int_equal(loop_new(&l), 0);
        struct procs_query q = {.cgroup = found, .main = s.pid, .straggler_grace = USEC_PER_SEC};
        size_t killed = 0;
        usec_t t0 = now_usec();
        assert_int_equal(procs_terminate(l, &q, 10 * USEC_PER_SEC, now_usec() + 20 * USEC_PER_SEC, &killed), 0);
        /* every process left ignores SIGTERM (the sleeps of a shell that trapped it): killed
         * at once, not after the grace */
        assert_true(now_usec() - t0 < 2 * USEC_PER_SEC);
        assert_true(killed >= 3);
        assert_int_equal(cgroup_populated(cg), 0);
        for (size_t i = 0; i < n; i++)
                assert_false(running(pids[i]));
        free(pids);
        spawn_release(&s);
        waitpid(s.pid, NULL, 0);
        assert_int_equal(cgroup_remove(found), 0);
        assert_int_equal(cgroup_remove(found), 0); /* once removed, stays so */
        struct stat st;
        assert_true(stat(cg->path, &st) < 0 && errno == ENOENT);
        assert_int_equal(cgroup_remove(cg), 0); /* gone already: fine */
        cgroup_free(found);
        cgroup_free(cg);
        loop_free(l);
        cgroup_base_free(b);
}

/* A server that makes a cgroup of its own below its cgroup and moves a process there:
 * that process is a member too, the kill reaches it, and the removal takes both. */
static void test_nested(void **state) {
        struct cgroup_base *b = NULL;
        if (cgroup_base_open(&b, NULL) < 0)
                skip();
        char token[33];
        assert_int_equal(random_hex(token, 16), 0);
        _cleanup_free_ char *name = cgroup_name(token);
        struct cgroup *cg = NULL;
        assert_int_equal(cgroup_create(b, name, &cg), 0);
        _cleanup_free_ char *script = strdup_printf(
                "mkdir %s/inner && sh -c 'echo $$ >%s/inner/cgroup.procs && exec sleep 300' & exec sleep 300", cg->path,
                cg->path);
        struct spawn_options o = {.argv = (char *const[]){"/bin/sh", "-c", script, NULL},
                                  .into_cgroup = true,
                                  .cgroup_fd = cg->dirfd};
        struct spawn s;
        assert_int_equal(spawn_start(&o, &s), 0);
        _cleanup_free_ char *inner_procs = strdup_printf("%s/inner/cgroup.procs", cg->path);
        pid_t inner = 0;
        usec_t until = now_usec() + 5 * USEC_PER_SEC;
        while (!inner) {
                _cleanup_free_ char *text = NULL;
                size_t len;
                if (read_file_capped(inner_procs, 4096, &text, &len) == 0 && len > 0)
                        inner = (pid_t)atoi(text);
                assert_true(now_usec() < until);
                usleep(10000);
        }
        pid_t *pids = NULL;
        size_t n = 0;
        bool found = false;
        assert_int_equal(cgroup_members(cg, &pids, &n), 0);
        for (size_t i = 0; i < n; i++)
                found |= pids[i] == inner;
        free(pids);
        assert_true(found);
        struct loop *l = NULL;
        assert_int_equal(loop_new(&l), 0);
        struct procs_query q = {.cgroup = cg};
        assert_int_equal(procs_terminate(l, &q, USEC_PER_SEC, now_usec() + 20 * USEC_PER_SEC, NULL), 0);
        assert_false(running(inner));
        assert_int_equal(cgroup_remove(cg), 0);
        struct stat st;
        assert_true(stat(cg->path, &st) < 0 && errno == ENOENT);
        spawn_release(&s);
        waitpid(s.pid, NULL, 0);
        cgroup_free(cg);
        loop_free(l);
        cgroup_base_free(b);
}

static void test_switched_off(void **state) {
        setenv(CGROUP_ENV_OFF, "1", 1);
        struct cgroup_base *b = NULL;
        char *why = NULL;
        assert_int_equal(cgroup_base_open(&b, &why), -ECANCELED);
        assert_null(b);
        assert_string_equal(why, "GAUNTLET_NO_CGROUP is set");
        free(why);
        setenv(CGROUP_ENV_OFF, "0", 1); /* "0" is not set */
        why = NULL;
        int r = cgroup_base_open(&b, &why);
        assert_true(r != -ECANCELED);
        cgroup_base_free(b);
        free(why);
        unsetenv(CGROUP_ENV_OFF);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_v2_dir),
                cmocka_unit_test(test_lifecycle),
                cmocka_unit_test(test_nested),
                cmocka_unit_test(test_switched_off),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
