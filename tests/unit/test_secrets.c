/* test_secrets.c -- the values of secrets, hidden wherever a text repeats them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "secrets.h"
#include "util.h"

static void test_values_masked_in_text(void **state) {
        (void)state;
        struct secrets_values s = {0};
        char *argv[] = {"llama-server", "--api-key", "sk-short", "--hf-token=hf_abcdefgh", "--threads", "8",
                        "--token-delay-ms", "2", NULL};
        char *env[] = {"HF_TOKEN=hf_abcdefgh", "OPENAI_API_KEY=sk-short-and-longer", "PATH=/usr/bin", NULL};
        assert_int_equal(secrets_values_add_argv(&s, argv), 0);
        assert_int_equal(secrets_values_add_env(&s, env), 0);
        /* "2" is below SECRETS_VALUE_MIN; hf_abcdefgh appears twice but is kept once;
         * the longest comes first, so a value that contains another is masked whole */
        assert_int_equal(s.n, 3);
        assert_string_equal(s.v[0], "sk-short-and-longer");
        int r = 1;
        _cleanup_free_ char *m = secrets_values_mask(&s, "key sk-short-and-longer, sk-short, hf_abcdefgh 2", &r);
        assert_int_equal(r, 0);
        assert_string_equal(m, "key ***, ***, *** 2");
        assert_null(secrets_values_mask(&s, "nothing to hide, 8 threads", &r));
        assert_int_equal(r, 0);
        secrets_values_release(&s);
        assert_int_equal(s.n, 0);
        /* an empty set hides nothing, and NULL lists are no lists */
        assert_int_equal(secrets_values_add_argv(&s, NULL), 0);
        assert_null(secrets_values_mask(&s, "sk-short", &r));
        secrets_values_release(&s);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_values_masked_in_text),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
