/* test_options.c -- the option table (config/options.h) against the man page and the
 * shell completion: every flag of the table is in bench's and smoke's sections of both, and
 * neither names a flag of theirs the table does not know (smoke's own aside). And the
 * table's own bounds, as the command line reads them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "config/options.h"

static char *read_src(const char *rel) {
        const char *dir = getenv("SRCDIR");
        _cleanup_free_ char *path = strdup_printf("%s/%s", dir && *dir ? dir : ".", rel);
        assert_non_null(path);
        char *text = NULL;
        assert_int_equal(read_file_capped(path, (size_t)16 << 20, &text, NULL), 0);
        return text;
}

static bool in_list(const char *const *v, const char *s) {
        for (; v && *v; v++)
                if (streq_ptr(*v, s))
                        return true;
        return false;
}

/* gauntlet smoke's flags that are its suite's and its probes', not the table's. */
static const char *const smoke_own[] = {"url", "model", "checks", "engine", "timeout", "thinking-key", "format",
                                        "probes", "long-context-share", "long-context-max-tokens",
                                        "long-context-timeout", "context", "sampling-runs", "sampling-min-right",
                                        "probe-seed", NULL};

/* The --flags of text[from, to), man's "\-\-" as "--", against cmd's flags in the table:
 * each of the table's is there, and each there is the table's or one of own (a command's
 * flags that are no bench, dataset or eval setting). */
static void check_flags(const char *what, enum option_command cmd, const char *const *own, const char *from,
                        const char *to, bool man) {
        /* the man page's own options are its .TP items' (.B, .BI, .BR); its text names other
         * programs' too */
        const char *dash = man ? ".TP\n.B" : "--";
        for (const char *p = strstr(from, dash); p && p < to; p = strstr(p + 1, dash)) {
                size_t dl = strlen(dash);
                if (man) {
                        const char *sp = strchr(p + dl, ' ');
                        if (!sp || strncmp(sp, " \\-\\-", 5) != 0)
                                continue;
                        dl = (size_t)(sp + 5 - p);
                }
                char flag[64];
                size_t n = 0;
                for (const char *q = p + dl; q < to && n + 1 < sizeof(flag); q++) {
                        if (man && q[0] == '\\' && q[1] == '-') {
                                flag[n++] = '-';
                                q++;
                        } else if ((*q >= 'a' && *q <= 'z') || (*q >= '0' && *q <= '9') || (!man && *q == '-'))
                                flag[n++] = *q;
                        else
                                break;
                }
                flag[n] = '\0';
                if (n == 0 || streq_ptr(flag, "help") || in_list(own, flag))
                        continue;
                if (!options_by_flag(cmd, flag))
                        fail_msg("%s names --%s, which the option table does not have", what, flag);
        }
        for (size_t i = 0; i < options_table_n; i++) {
                if (!options_takes(&options_table[i], cmd))
                        continue;
                const char *f = options_table[i].flag;
                _cleanup_free_ char *want = strdup(f);
                assert_non_null(want);
                _cleanup_free_ char *esc = NULL;
                if (man) {
                        /* "--dataset-name" is written \-\-dataset\-name */
                        size_t k = 0, len = strlen(f);
                        esc = calloc(2 * len + 8, 1);
                        assert_non_null(esc);
                        k += (size_t)sprintf(esc, "\\-\\-");
                        for (size_t j = 0; j < len; j++)
                                k += (size_t)sprintf(esc + k, f[j] == '-' ? "\\-" : "%c", f[j]);
                } else
                        esc = strdup_printf("--%s", f);
                bool found = false;
                size_t el = strlen(esc);
                for (const char *p = strstr(from, esc); p && p < to && !found; p = strstr(p + 1, esc)) {
                        char next = p[el];
                        found = !(next == '-' || next == '\\' || (next >= 'a' && next <= 'z'));
                }
                if (!found)
                        fail_msg("%s does not name --%s, a flag of the option table", what, f);
        }
}

/* The man page's section of `gauntlet CMD`. */
static void check_man(const char *man, const char *section, enum option_command cmd, const char *const *own) {
        const char *from = strstr(man, section);
        assert_non_null(from);
        const char *to = strstr(from + 1, "\n.SS ");
        assert_non_null(to);
        _cleanup_free_ char *what = strdup_printf("docs/gauntlet.1 (%s)", section + 4);
        check_flags(what, cmd, own, from, to, true);
}

static void test_man_page(void **state) {
        (void)state;
        _cleanup_free_ char *man = read_src("docs/gauntlet.1");
        check_man(man, ".SS gauntlet bench", OC_BENCH, NULL);
        check_man(man, ".SS gauntlet smoke", OC_SMOKE, smoke_own);
}

/* The completion's opts="..." of `gauntlet CMD`. */
static void check_completion(const char *text, const char *cmd_case, enum option_command cmd,
                             const char *const *own) {
        const char *from = strstr(text, cmd_case);
        assert_non_null(from);
        const char *to = strchr(strchr(from, '"') + 1, '"');
        assert_non_null(to);
        _cleanup_free_ char *what = strdup_printf("contrib/gauntlet.bash-completion (%s)",
                                                  cmd == OC_BENCH ? "bench" : "smoke");
        check_flags(what, cmd, own, from, to, false);
}

static void test_completion(void **state) {
        (void)state;
        _cleanup_free_ char *text = read_src("contrib/gauntlet.bash-completion");
        check_completion(text, "        bench)\n                opts=\"", OC_BENCH, NULL);
        check_completion(text, "        smoke)\n                opts=\"", OC_SMOKE, smoke_own);
}

/* Every flag is one of its command's getopt names once; every key once in its map. */
static void test_unique(void **state) {
        (void)state;
        for (size_t i = 0; i < options_table_n; i++)
                for (size_t j = 0; j < i; j++) {
                        const struct option_def *a = &options_table[i], *b = &options_table[j];
                        if (a->flag && b->flag && streq_ptr(a->flag, b->flag) &&
                            !!(a->flags & OF_SMOKE) == !!(b->flags & OF_SMOKE))
                                fail_msg("--%s twice", a->flag);
                        if (a->key && b->key && a->scope == b->scope && streq_ptr(a->key, b->key))
                                fail_msg("key %s twice", a->key);
                }
}

static void test_bounds(void **state) {
        (void)state;
        int k = -1;
        double x = -1;
        const struct option_def *d = options_by_flag(OC_BENCH, "num-prompts");
        assert_non_null(d);
        assert_int_equal(options_parse_arg(d, "0", &k), -EINVAL);
        assert_int_equal(options_parse_arg(d, "1", &k), 0);
        assert_int_equal(k, 1);
        assert_int_equal(options_parse_arg(d, "1000001", &k), -EINVAL);
        d = options_by_flag(OC_BENCH, "random-range-ratio");
        assert_int_equal(options_parse_arg(d, "1", &x), -EINVAL); /* below 1, not at it */
        assert_int_equal(options_parse_arg(d, "0", &x), 0);
        d = options_by_key(OS_BENCH, "burstiness");
        assert_int_equal(options_parse_arg(d, "0", &x), -EINVAL); /* above 0 */
        assert_int_equal(options_parse_arg(d, "nan", &x), -EINVAL);
        assert_int_equal(options_parse_arg(d, "1000", &x), 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_man_page),
                cmocka_unit_test(test_completion),
                cmocka_unit_test(test_unique),
                cmocka_unit_test(test_bounds),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
