/* test_diagnose.c -- log signatures to causes, data-driven from tests/logs/.
 *
 * Each .log file under tests/logs starts with "# expect: VERDICT CAUSE EVIDENCE-FRAGMENT" (or
 * "# expect: none"); the rest of the file is the log.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <stdio.h>
#include <string.h>

#include "diagnose.h"
#include "profile.h"
#include "util.h"

static const char *srcdir(void) {
        const char *s = getenv("SRCDIR");
        return s ? s : ".";
}

static void check_file(const char *path) {
        _cleanup_free_ char *text = NULL;
        size_t len = 0;
        assert_int_equal(read_file_capped(path, 1 << 20, &text, &len), 0);
        char verdict[32] = "", cause[32] = "", fragment[256] = "";
        assert_true(startswith(text, "# expect: "));
        int k = sscanf(text, "# expect: %31s %31s %255[^\n]", verdict, cause, fragment);
        assert_true(k >= 1);
        const char *body = strchr(text, '\n') + 1;
        struct diagnosis d;
        int r = diagnose_text(body, len - (size_t)(body - text), profile_find("sglang"), &d);
        if (strcmp(verdict, "none") == 0) {
                if (r != 0)
                        print_error("%s: expected no diagnosis, got %s: %s\n", path, d.cause, d.evidence);
                assert_int_equal(r, 0);
                return;
        }
        if (r != 1)
                print_error("%s: expected %s/%s, got nothing\n", path, verdict, cause);
        assert_int_equal(r, 1);
        if (strcmp(d.cause, cause) != 0 || !strstr(d.evidence, fragment) ||
            strcmp(verdict, d.verdict == VERDICT_TIMEOUT ? "timeout" : "crash") != 0)
                print_error("%s: expected %s/%s '%s', got %s '%s'\n", path, verdict, cause, fragment, d.cause,
                            d.evidence);
        assert_string_equal(d.cause, cause);
        assert_non_null(strstr(d.evidence, fragment));
        assert_string_equal(verdict, d.verdict == VERDICT_TIMEOUT ? "timeout" : "crash");
        assert_true(d.line >= 1);
        diagnosis_release(&d);
}

static void test_log_corpus(void **state) {
        _cleanup_free_ char *dir = strdup_printf("%s/tests/logs", srcdir());
        DIR *d = opendir(dir);
        assert_non_null(d);
        struct dirent *de;
        int n = 0;
        while ((de = readdir(d))) {
                if (!endswith(de->d_name, ".log"))
                        continue;
                _cleanup_free_ char *path = strdup_printf("%s/%s", dir, de->d_name);
                check_file(path);
                n++;
        }
        closedir(d);
        assert_true(n >= 10);
}

static void test_exit_without_signature(void **state) {
        char path[] = "/tmp/gauntlet-diag-XXXXXX";
        int fd = mkstemp(path);
        assert_true(fd >= 0);
        const char log[] = "loading weights\nstill loading\n\n";
        assert_int_equal(write_all(fd, log, sizeof(log) - 1), 0);
        close(fd);
        struct diagnosis d;
        assert_int_equal(diagnose_exit(path, profile_find("vllm"), -1, 9, &d), 0);
        assert_string_equal(d.cause, "signal");
        assert_string_equal(d.evidence, "killed by SIGKILL; last log line: still loading");
        diagnosis_release(&d);
        /* exit status 0 is never trusted alone: it is still a crash */
        assert_int_equal(diagnose_exit(path, profile_find("sglang"), 0, 0, &d), 0);
        assert_int_equal(d.verdict, VERDICT_CRASH);
        assert_string_equal(d.cause, "exit");
        assert_non_null(strstr(d.evidence, "exited with status 0"));
        diagnosis_release(&d);
        unlink(path);
}

static void test_innermost_beats_wrapper(void **state) {
        /* tier: the root cause wins over a later-but-earlier-tier symptom, and a lower tier
         * found later still beats a device error found first */
        const char *log = "NCCL error: unhandled cuda error\n"
                          "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB\n";
        struct diagnosis d;
        assert_int_equal(diagnose_text(log, strlen(log), profile_find("sglang"), &d), 1);
        assert_string_equal(d.cause, "oom");
        assert_int_equal(d.line, 2);
        diagnosis_release(&d);
}

static void test_control_chars_in_evidence(void **state) {
        const char log[] = "\x1b[31mRuntimeError: CUDA error: misaligned address\x1b[0m\r\n";
        struct diagnosis d;
        assert_int_equal(diagnose_text(log, sizeof(log) - 1, NULL, &d), 1);
        assert_null(strchr(d.evidence, '\x1b'));
        assert_string_equal(d.cause, "cuda");
        diagnosis_release(&d);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_log_corpus),
                cmocka_unit_test(test_exit_without_signature),
                cmocka_unit_test(test_innermost_beats_wrapper),
                cmocka_unit_test(test_control_chars_in_evidence),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
