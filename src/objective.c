/* objective.c -- the objective: which figure ranks the cells ("METRIC@N" or "smoke"). */
#include "objective.h"

#include <stdlib.h>
#include <string.h>

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
        const struct metric_info *along = NULL;
        o.info = metric_resolve(o.metric, o.metric_len, &along);
        if (along)
                o.higher_better = along->direction == METRIC_HIGHER_BETTER;
        *ret = o;
}
