/* objective.c -- the objective: which figure ranks the cells ("METRIC@N" or "smoke"), and
 * the SLA constraints a level must meet to count. */
#include "text/objective.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define WHERE " where "

static void parse_limits(const char *w, struct objective *o) {
        while (*w) {
                const char *end = strchr(w, ',');
                size_t n = end ? (size_t)(end - w) : strlen(w);
                const char *op = NULL;
                for (size_t i = 0; i + 1 < n && !op; i++)
                        if ((w[i] == '<' || w[i] == '>') && w[i + 1] == '=')
                                op = w + i;
                if (!op || op == w || o->n_limits >= OBJECTIVE_MAX_LIMITS) {
                        o->bad_limits = true;
                        return;
                }
                char num[64];
                size_t k = n - (size_t)(op + 2 - w);
                if (k == 0 || k >= sizeof(num)) {
                        o->bad_limits = true;
                        return;
                }
                memcpy(num, op + 2, k);
                num[k] = '\0';
                char *e;
                errno = 0;
                double x = strtod(num, &e);
                if (errno || *e || !isfinite(x)) {
                        o->bad_limits = true;
                        return;
                }
                o->limits[o->n_limits++] = (struct objective_limit){
                        .path = w, .path_len = (size_t)(op - w), .at_most = *op == '<', .limit = x};
                if (!end)
                        return;
                w = end + 1;
                if (!*w)
                        o->bad_limits = true; /* a trailing comma */
        }
}

void objective_parse(const char *text, struct objective *ret) {
        if (strcmp(text, "smoke") == 0) {
                *ret = (struct objective){.smoke = true, .metric = text + strlen(text)};
                return;
        }
        const char *where = strstr(text, WHERE);
        size_t head = where ? (size_t)(where - text) : strlen(text);
        const char *at = memchr(text, '@', head);
        struct objective o = {
                .metric = text,
                .metric_len = at ? (size_t)(at - text) : head,
                .higher_better = true,
        };
        if (at) {
                char *end;
                long level = strtol(at + 1, &end, 10);
                o.concurrency = end != text + head || end == at + 1 || level <= 0 ? 0 : level;
        }
        if (where)
                parse_limits(where + strlen(WHERE), &o);
        const struct metric_info *along = NULL;
        o.info = metric_resolve(o.metric, o.metric_len, &along);
        if (along)
                o.higher_better = along->direction == METRIC_HIGHER_BETTER;
        *ret = o;
}

bool objective_entry_value(json_t *entry, const char *path, size_t len, double *ret) {
        char part[128];
        json_t *v = entry;
        for (size_t i = 0; i < len && v;) {
                size_t k = 0;
                while (i + k < len && path[i + k] != '.')
                        k++;
                if (k >= sizeof(part))
                        return false;
                memcpy(part, path + i, k);
                part[k] = 0;
                v = json_object_get(v, part);
                i += k + 1;
        }
        if (!json_is_number(v))
                return false;
        *ret = json_number_value(v);
        return isfinite(*ret);
}

bool objective_meets(const struct objective *o, json_t *entry) {
        for (size_t i = 0; i < o->n_limits; i++) {
                const struct objective_limit *l = &o->limits[i];
                double x;
                if (!objective_entry_value(entry, l->path, l->path_len, &x))
                        return false;
                if (l->at_most ? x > l->limit : x < l->limit)
                        return false;
        }
        return true;
}
