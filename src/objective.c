/* objective.c -- the objective: which figure ranks the cells ("METRIC@N" or "smoke"). */
#include "objective.h"

#include <stdlib.h>
#include <string.h>

/* A metric part naming a time: "ttft_ms", "e2e_s", but not "requests_per_s". */
static bool component_is_time(const char *s, size_t n) {
        return (n >= 3 && memcmp(s + n - 3, "_ms", 3) == 0) ||
               (n >= 2 && memcmp(s + n - 2, "_s", 2) == 0 && !(n >= 6 && memcmp(s + n - 6, "_per_s", 6) == 0));
}

void objective_parse(const char *text, struct objective *ret) {
        if (strcmp(text, "smoke") == 0) {
                *ret = (struct objective){.smoke = true, .metric = text + strlen(text)};
                return;
        }
        const char *at = strchr(text, '@');
        struct objective o = {
                .metric = text,
                .metric_len = at ? (size_t)(at - text) : strlen(text),
                .higher_better = true,
        };
        if (at) {
                char *end;
                long level = strtol(at + 1, &end, 10);
                o.concurrency = *end || level <= 0 ? 0 : level;
        }
        for (size_t i = 0; i < o.metric_len;) {
                size_t k = 0;
                while (i + k < o.metric_len && o.metric[i + k] != '.')
                        k++;
                if (component_is_time(o.metric + i, k))
                        o.higher_better = false;
                i += k + 1;
        }
        *ret = o;
}
