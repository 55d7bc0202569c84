/* fuzz_checks.c -- libFuzzer target: the check-suite loader (suite_load_checks_string), the
 * parser behind `gauntlet smoke --checks FILE` and a matrix's `checks:` list.
 *
 * Invariants: no crash or leak; a failure is -EINVAL with one printable line
 * "fuzz.yaml:LINE: ..." and *ret untouched; a success gives 1..SUITE_MAX_CHECKS specs,
 * each with a name, and each expectation usable by golden_match (a regex that loaded
 * compiles, a number that loaded is a number).
 */
#include <errno.h>

#include "fuzz.h"
#include "gate/golden.h"
#include "config/suite.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct check_spec *specs = NULL;
        size_t n = 0;
        char *err = NULL;
        int r = suite_load_checks_string((const char *)data, size, "fuzz.yaml", &specs, &n, &err);
        if (r < 0) {
                FUZZ_ASSERT(r == -EINVAL, "unexpected result %d", r);
                FUZZ_ASSERT(!specs, "*ret set on failure");
                FUZZ_ASSERT(err && strncmp(err, "fuzz.yaml:", 10) == 0 && err[10] >= '1' && err[10] <= '9',
                            "message without FILE:LINE: %s", err ? err : "(none)");
                FUZZ_ASSERT(fuzz_printable(err), "message not one printable line: %s", err);
                free(err);
                return 0;
        }
        FUZZ_ASSERT(n >= 1 && n <= SUITE_MAX_CHECKS, "%zu checks", n);
        for (size_t i = 0; i < n; i++) {
                FUZZ_ASSERT(specs[i].name && *specs[i].name, "check %zu has no name", i);
                bool match;
                char *why = NULL;
                int g = golden_match(&specs[i].expect, "323", &match, &why);
                FUZZ_ASSERT(g == 0, "loaded expectation unusable: %s", why ? why : "");
        }
        checks_free_suite(specs, n);
        return 0;
}
