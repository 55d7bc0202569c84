/* test_util.c -- durations, string vectors, capped buffers, SSE parsing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "text/buf.h"
#include "io/sse.h"
#include "base/util.h"

static void test_parse_duration(void **state) {
        usec_t u;
        assert_int_equal(parse_duration("90s", &u), 0);
        assert_int_equal(u, 90 * USEC_PER_SEC);
        assert_int_equal(parse_duration("20m", &u), 0);
        assert_int_equal(u, 1200 * USEC_PER_SEC);
        assert_int_equal(parse_duration("1h30m", &u), 0);
        assert_int_equal(u, 5400 * USEC_PER_SEC);
        assert_int_equal(parse_duration("250ms", &u), 0);
        assert_int_equal(u, 250 * USEC_PER_MSEC);
        assert_int_equal(parse_duration("45", &u), 0);
        assert_int_equal(u, 45 * USEC_PER_SEC);
        assert_int_equal(parse_duration("", &u), -EINVAL);
        assert_int_equal(parse_duration("-5s", &u), -EINVAL);
        assert_int_equal(parse_duration("5x", &u), -EINVAL);
        assert_int_equal(parse_duration("5 m", &u), -EINVAL);
        assert_int_equal(parse_duration("99999999999999999999s", &u), -EINVAL);
        assert_int_equal(parse_duration("5m3", &u), -EINVAL);
}

static void test_format_duration(void **state) {
        char b[32];
        assert_string_equal(format_duration(250 * USEC_PER_MSEC, b), "250ms");
        assert_string_equal(format_duration(90 * USEC_PER_SEC, b), "90s");
        assert_string_equal(format_duration(1200 * USEC_PER_SEC, b), "20m");
        assert_string_equal(format_duration(7200 * USEC_PER_SEC, b), "2h");
}

static void test_buf_cap(void **state) {
        _cleanup_buf_ struct buf b;
        buf_init(&b, 8);
        assert_int_equal(buf_puts(&b, "hello"), 0);
        assert_int_equal(buf_puts(&b, "world"), -ENOBUFS);
        assert_int_equal(b.len, 8);
        assert_string_equal(buf_str(&b), "hellowor");
        assert_true(b.truncated);
        buf_consume(&b, 5);
        assert_string_equal(buf_str(&b), "wor");
}

static void test_strv(void **state) {
        _cleanup_strv_free_ char **v = NULL;
        assert_int_equal(strv_push(&v, "a"), 0);
        assert_int_equal(strv_push(&v, "b"), 0);
        assert_int_equal(strv_length(v), 2);
        _cleanup_strv_free_ char **c = strv_copy(v);
        assert_true(strv_equal(v, c));
        assert_int_equal(strv_push(&c, "c"), 0);
        assert_false(strv_equal(v, c));
}

struct collected {
        char log[4096];
        int n;
};

static int collect(void *ud, const char *event, const char *data, size_t len) {
        struct collected *c = ud;
        size_t used = strlen(c->log);
        snprintf(c->log + used, sizeof(c->log) - used, "[%s|%.*s]", event, (int)len, data);
        c->n++;
        return 0;
}

static void feed_split(const char *text, size_t split, struct collected *c, int *ret) {
        struct sse s;
        sse_init(&s, 0, 0, collect, c);
        size_t n = strlen(text);
        int r = 0;
        for (size_t i = 0; i < n && r == 0; i += split)
                r = sse_feed(&s, text + i, MIN(split, n - i));
        if (r == 0)
                r = sse_finish(&s);
        sse_release(&s);
        *ret = r;
}

static void test_sse_splits(void **state) {
        const char *text = ": comment\r\ndata: {\"a\":1}\r\n\r\nevent: error\ndata: x\ndata: y\n\n"
                           "data:[DONE]\r\rdata: tail";
        const char *want = "[|{\"a\":1}][error|x\ny][|[DONE]][|tail]";
        for (size_t split = 1; split <= strlen(text); split++) {
                struct collected c = {0};
                int r;
                feed_split(text, split, &c, &r);
                assert_int_equal(r, 0);
                assert_string_equal(c.log, want);
                assert_int_equal(c.n, 4);
        }
}

static void test_sse_limit(void **state) {
        struct collected c = {0};
        struct sse s;
        sse_init(&s, 16, 64, collect, &c);
        assert_int_equal(sse_feed(&s, "data: 0123456789", 16), 0);
        assert_int_equal(sse_feed(&s, "abcdef", 6), -E2BIG);
        assert_int_equal(sse_feed(&s, "\n\n", 2), -E2BIG); /* sticky */
        sse_release(&s);
        assert_int_equal(c.n, 0);
}

static void test_exit_describe(void **state) {
        char buf[64];
        assert_string_equal(exit_describe(3, 0, buf), "exited with status 3");
        assert_string_equal(exit_describe(0, 0, buf), "exited with status 0");
        assert_string_equal(exit_describe(-1, 9, buf), "killed by SIGKILL");
        assert_string_equal(exit_describe(-1, 15, buf), "killed by SIGTERM");
        assert_string_equal(exit_describe(-1, 77, buf), "killed by signal 77");
}

static void test_read_capped(void **state) {
        char path[] = "/tmp/gauntlet-util-XXXXXX";
        int fd = mkstemp(path);
        assert_true(fd >= 0);
        char data[10000];
        memset(data, 'x', sizeof(data));
        assert_int_equal(write_all(fd, data, sizeof(data)), 0);
        close(fd);
        char *got = NULL;
        size_t len = 0;
        /* exactly the cap is fine, one byte less than the file is not */
        assert_int_equal(read_file_capped(path, sizeof(data), &got, &len), 0);
        assert_int_equal(len, sizeof(data));
        assert_int_equal(got[len], '\0');
        free(got);
        got = NULL;
        assert_int_equal(read_file_capped(path, sizeof(data) - 1, &got, &len), -EFBIG);
        assert_null(got);
        /* a cap below the first read's size is a cap too */
        assert_int_equal(read_file_capped(path, 100, &got, &len), -EFBIG);
        assert_null(got);
        assert_int_equal(read_file_capped("/nonexistent/gauntlet", 10, &got, &len), -ENOENT);
        /* read_fd_upto: that much, the rest left for the next read */
        fd = open(path, O_RDONLY | O_CLOEXEC);
        assert_true(fd >= 0);
        assert_int_equal(read_fd_upto(fd, 6000, &got, &len), 0);
        assert_int_equal(len, 6000);
        assert_int_equal(got[len], '\0');
        free(got);
        assert_int_equal(read_fd_upto(fd, 6000, &got, &len), 0);
        assert_int_equal(len, sizeof(data) - 6000);
        free(got);
        assert_int_equal(read_fd_upto(fd, 0, &got, &len), 0);
        assert_int_equal(len, 0);
        assert_string_equal(got, "");
        free(got);
        close(fd);
        unlink(path);
}

/* A report, unit or script is written to a fresh 0600 file renamed into place: an existing
 * 0644 file or a symlink at the target never receives the text. */
static void test_write_replace(void **state) {
        char dir[] = "/tmp/gauntlet-util-XXXXXX";
        assert_non_null(mkdtemp(dir));
        char *target = strdup_printf("%s/report.md", dir), *other = strdup_printf("%s/elsewhere", dir);
        char *got = NULL;
        size_t len = 0;
        struct stat st;
        /* an existing world-readable file: replaced by a 0600 one */
        int fd = open(target, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        assert_true(fd >= 0);
        assert_int_equal(fchmod(fd, 0644), 0);
        close(fd);
        assert_int_equal(write_file_replace(target, "secret", 6), 0);
        assert_int_equal(lstat(target, &st), 0);
        assert_true(S_ISREG(st.st_mode));
        assert_int_equal(st.st_mode & 0777, 0600);
        assert_int_equal(read_file_capped(target, 100, &got, &len), 0);
        assert_string_equal(got, "secret");
        free(got);
        /* a symlink at the target: the link is replaced, what it pointed to is untouched */
        fd = open(other, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        assert_true(fd >= 0);
        assert_int_equal(write_all(fd, "theirs", 6), 0);
        close(fd);
        assert_int_equal(unlink(target), 0);
        assert_int_equal(symlink(other, target), 0);
        assert_int_equal(write_file_replace(target, "secret2", 7), 0);
        assert_int_equal(lstat(target, &st), 0);
        assert_true(S_ISREG(st.st_mode));
        assert_int_equal(st.st_mode & 0777, 0600);
        assert_int_equal(read_file_capped(other, 100, &got, &len), 0);
        assert_string_equal(got, "theirs");
        free(got);
        /* a folder that cannot be written: an error, and nothing left behind */
        char *missing = strdup_printf("%s/no/such/x", dir);
        assert_int_equal(write_file_replace(missing, "x", 1), -ENOENT);
        free(missing);
        char *cmd = strdup_printf("test $(ls -A '%s' | wc -l) -eq 2 && rm -rf '%s'", dir, dir);
        assert_int_equal(system(cmd), 0); /* report.md and elsewhere, no temporary file */
        free(cmd);
        free(target);
        free(other);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_parse_duration), cmocka_unit_test(test_format_duration),
                cmocka_unit_test(test_buf_cap),        cmocka_unit_test(test_strv),
                cmocka_unit_test(test_sse_splits),     cmocka_unit_test(test_sse_limit),
                cmocka_unit_test(test_read_capped),    cmocka_unit_test(test_exit_describe),
                cmocka_unit_test(test_write_replace),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
