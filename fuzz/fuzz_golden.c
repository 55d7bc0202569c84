/* fuzz_golden.c -- libFuzzer target: answer normalisation and golden matching (golden.h).
 *
 * Input: byte 0 picks the expectation kind; the rest is "value\0answer" (the value is what
 * a user wrote in a check, the answer what a server said).
 * Invariants: no crash, leak or hang; a normalised answer is trimmed, has no newline and
 * no run of spaces (golden.h); every expectation matches its own value (equals and
 * contains always, number whenever the value is a number, regex when the value has no
 * special character); a bad regex or number is -EINVAL with a reason, never a crash.
 */
#include <ctype.h>
#include <errno.h>

#include "fuzz.h"
#include "gate/golden.h"

static void check_normal(const char *s) {
        char *norm = NULL;
        FUZZ_ASSERT(golden_normalize(s, &norm) == 0 && norm, "normalize failed");
        size_t n = strlen(norm);
        if (n > 0) {
                FUZZ_ASSERT(!isspace((unsigned char)norm[0]) && !isspace((unsigned char)norm[n - 1]),
                            "not trimmed: '%s'", norm);
        }
        FUZZ_ASSERT(!strchr(norm, '\n'), "newline left: '%s'", norm);
        FUZZ_ASSERT(!strstr(norm, "  "), "run of spaces left: '%s'", norm);
        free(norm);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        if (size < 1)
                return 0;
        struct fuzz_input in = {data, size};
        uint8_t mode = fuzz_byte(&in);
        /* value and answer: two C strings */
        char *buf = malloc(in.n + 2);
        FUZZ_ASSERT(buf, "out of memory");
        memcpy(buf, in.p, in.n);
        buf[in.n] = buf[in.n + 1] = '\0';
        char *value = buf;
        char *answer = buf + strlen(buf) + 1;

        check_normal(value);
        check_normal(answer);
        double d;
        int r = golden_last_number(answer, &d);
        FUZZ_ASSERT(r == 0 || r == -ENOENT || r == -EINVAL || r == -ERANGE, "last_number gave %d", r);

        static const enum expect_kind kinds[] = {EXPECT_EQUALS, EXPECT_CONTAINS, EXPECT_NUMBER, EXPECT_REGEX};
        struct expect e = {kinds[mode & 3], value};
        bool match = false;
        char *why = NULL;
        r = golden_match(&e, answer, &match, &why);
        FUZZ_ASSERT(r == 0 || (r == -EINVAL && why), "match gave %d", r);
        free(why);
        why = NULL;

        /* reflexive: the value itself, given as the answer, matches */
        match = false;
        bool plain = strcspn(value, ".[]()*+?{}|^$\\") == strlen(value);
        if (e.kind != EXPECT_REGEX || (plain && strlen(value) < 64)) {
                r = golden_match(&e, value, &match, &why);
                if (e.kind == EXPECT_NUMBER && r == -EINVAL) {
                        FUZZ_ASSERT(why, "no reason");
                } else if (e.kind == EXPECT_REGEX) {
                        FUZZ_ASSERT(r == 0, "plain regex refused: %s", why ? why : "");
                        /* the regex searches the normalised answer; a plain value is its own
                         * match only if normalising leaves it alone */
                        char *norm = NULL;
                        FUZZ_ASSERT(golden_normalize(value, &norm) == 0, "normalize failed");
                        if (strcmp(norm, value) == 0)
                                FUZZ_ASSERT(match, "'%s' does not match itself", value);
                        free(norm);
                } else {
                        FUZZ_ASSERT(r == 0 && match, "'%s' does not match itself (kind %d)", value, e.kind);
                }
                free(why);
        }
        free(buf);
        return 0;
}
