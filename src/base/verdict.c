/* verdict.c -- verdict names. */
#include "base/verdict.h"

#include <string.h>

#include "base/util.h"

static const char *const names[_VERDICT_MAX] = {
        [VERDICT_PASS] = "pass",       [VERDICT_GARBAGE] = "garbage", [VERDICT_WRONG] = "wrong",
        [VERDICT_CRASH] = "crash",     [VERDICT_TIMEOUT] = "timeout", [VERDICT_SKIPPED] = "skipped",
        [VERDICT_ERROR] = "error",     [VERDICT_OVERLOAD] = "overload",
};

const char *verdict_to_string(enum verdict v) {
        if (v < 0 || v >= _VERDICT_MAX)
                return "invalid";
        return names[v];
}

enum verdict verdict_from_string(const char *s) {
        for (int i = 0; i < _VERDICT_MAX; i++)
                if (s && strcmp(s, names[i]) == 0)
                        return (enum verdict)i;
        return VERDICT_INVALID;
}

int verdict_severity(enum verdict v) {
        /* A crash or a hang outranks what the checks saw before it; garbage outranks a
         * wrong answer because it says the numerics are broken, not the model. */
        static const int sev[_VERDICT_MAX] = {
                [VERDICT_PASS] = 0,    [VERDICT_SKIPPED] = 1, [VERDICT_OVERLOAD] = 2, [VERDICT_WRONG] = 3,
                [VERDICT_GARBAGE] = 4, [VERDICT_TIMEOUT] = 5, [VERDICT_CRASH] = 6,    [VERDICT_ERROR] = 7,
        };
        if (v < 0 || v >= _VERDICT_MAX)
                return 100;
        return sev[v];
}

const char *verdict_color(enum verdict v) {
        int s = verdict_severity(v);
        if (s <= verdict_severity(VERDICT_PASS))
                return "\033[32m";
        if (s <= verdict_severity(VERDICT_SKIPPED))
                return "\033[2m";
        if (s <= verdict_severity(VERDICT_WRONG))
                return "\033[33m";
        return "\033[31m";
}
