/* test_secrets.c -- the values of secrets, hidden wherever a text repeats them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "text/secrets.h"
#include "base/util.h"

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

static char *masked(const struct secrets_values *s, const char *text) {
        int r = 1;
        char *m = secrets_values_mask(s, text, &r);
        assert_int_equal(r, 0);
        return m ? m : strdup(text);
}

/* #24 item 5: a secret cut by an excerpt, and one with a backslash, escaped where it is
 * quoted; masked on the raw text first, whatever cuts and escapes came after. */
static void test_cut_and_escaped(void **state) {
        (void)state;
        struct secrets_values s = {0};
        char *env[] = {"HF_TOKEN=hf_SECRETTOKEN0123456789", "API_KEY=ab\\cd\"ef12", NULL};
        assert_int_equal(secrets_values_add_env(&s, env), 0);
        /* reproduction 1: 23 of its 24 characters, where a cut ended the evidence */
        char *m = masked(&s, "ERROR: the hub refused token hf_SECRETTOKEN012345678");
        assert_string_equal(m, "ERROR: the hub refused token ***");
        free(m);
        /* ... or met the excerpt's cut mark, at its end or at its start */
        m = masked(&s, "got: \"the token is hf_SECRETTOKEN01...\"");
        assert_string_equal(m, "got: \"the token is ***...\"");
        free(m);
        m = masked(&s, "got: \"…TOKEN0123456789 and more\"");
        assert_string_equal(m, "got: \"…*** and more\"");
        free(m);
        /* a prefix under SECRETS_CUT_MIN stays, and so does one the text goes on after */
        m = masked(&s, "it said hf_...");
        assert_string_equal(m, "it said hf_...");
        free(m);
        m = masked(&s, "hf_SECRET is not the end here");
        assert_string_equal(m, "hf_SECRET is not the end here");
        free(m);
        /* reproduction 2: a backslash (and a quote), as raw text, as evidence escapes it, as
         * JSON escapes it */
        m = masked(&s, "raw ab\\cd\"ef12; excerpt ab\\\\cd\"ef12; json ab\\\\cd\\\"ef12.");
        assert_string_equal(m, "raw ***; excerpt ***; json ***.");
        free(m);
        /* escaped and cut */
        m = masked(&s, "got: \"key ab\\\\cd\"e...\"");
        assert_string_equal(m, "got: \"key ***...\"");
        free(m);
        secrets_values_release(&s);
}

/* A secret whose start is ordinary text: a model name or a path that ends with that start is
 * not a cut secret, and stays readable; the secret whole, or cut where a word begins, is
 * still masked. */
static void test_prefix_at_word_start(void **state) {
        (void)state;
        struct secrets_values s = {0};
        char *argv[] = {"srv", "--api-key", "Instruct-7f3a9c21", NULL};
        assert_int_equal(secrets_values_add_argv(&s, argv), 0);
        char *m = masked(&s, "srv --model meta-llama/Llama-3.1-8B-Instruct");
        assert_string_equal(m, "srv --model meta-llama/Llama-3.1-8B-Instruct");
        free(m);
        m = masked(&s, "loading /models/Instruct");
        assert_string_equal(m, "loading /models/Instruct");
        free(m);
        m = masked(&s, "model Llama-Instruct...");
        assert_string_equal(m, "model Llama-Instruct...");
        free(m);
        /* whole, anywhere; cut, where a word begins */
        m = masked(&s, "--api-key=Instruct-7f3a9c21 and x-Instruct-7f3a9c21");
        assert_string_equal(m, "--api-key=*** and x-***");
        free(m);
        m = masked(&s, "key: Instruct-7f3a");
        assert_string_equal(m, "key: ***");
        free(m);
        m = masked(&s, "key=\"Instruct-7f...\"");
        assert_string_equal(m, "key=\"***...\"");
        free(m);
        /* a suffix after a cut mark: masked where it ends a word, not inside one */
        m = masked(&s, "...t-7f3a9c21 ok");
        assert_string_equal(m, "...*** ok");
        free(m);
        m = masked(&s, "...t-7f3a9c21x ok");
        assert_string_equal(m, "...t-7f3a9c21x ok");
        free(m);
        secrets_values_release(&s);
}

static void test_url_credentials(void **state) {
        (void)state;
        static const char *const cases[][2] = {
                {"http://user:pass@host:8000/v1", "http://user:***@host:8000/v1"},
                {"https://tok3n@example.com", "https://***@example.com"},
                {"http://u:p@ss@host/x@y", "http://u:***@host/x@y"},
                {"http://127.0.0.1:30000", "http://127.0.0.1:30000"},
                {"http://host/path?a=b@c", "http://host/path?a=b@c"},
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *m = secrets_mask_url(cases[i][0]);
                assert_string_equal(m, cases[i][1]);
        }
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_values_masked_in_text),
                cmocka_unit_test(test_cut_and_escaped),
                cmocka_unit_test(test_prefix_at_word_start),
                cmocka_unit_test(test_url_credentials),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
