/* search_sim_load.c -- a simulated space read from a file: one written apart from this
 * simulator (docs/search.md, "Spaces written apart"), so that the search is measured on
 * spaces its authors did not draw.
 *
 * One space is one line of JSON:
 *
 *   {"name": "17", "describe": "what was drawn, one line", "noise": 0.03,
 *    "load_s": 600, "bench_s": 240, "timeout_s": 1800, "engine": "sglang",
 *    "axes": [{"name": "attn", "flag": "--attention-backend", "values": ["auto", "fa3"],
 *              "words": ["attention backend"]}, ...],
 *    "cells": [{"s": 51.2}, {"s": 48, "fail": "crash/arch", "line": "..."},
 *              {"s": 60, "flaky": 0.2, "flaky_fail": "crash/nccl", "flaky_line": "..."},
 *              {"s": 55, "load": 1400, "noise": 0.06}, ...]}
 *
 * Value 0 of every axis is the engine's default; the cells are row-major (the first axis
 * slowest), as many as the product of the axes' values. A cell without "fail" serves right
 * at its true figure "s"; one with it fails every launch with that verdict and line. "flaky"
 * is the chance that a launch meets a fault of the host instead (its verdict and line). A
 * launch costs by its verdict's class: a pass the load and the bench, timeout/... the start-up
 * timeout, crash/oom 60-100% of the load, another crash 10-40%, garbage/... the load and a
 * tenth of the bench, wrong/... and overload/... the load and half the bench. "load" and "noise"
 * override the space's for one cell. "engine", where gauntlet has a profile of it, reads the
 * lines with the profile's words for the axes' flags as gauntlet's own search does (an axis's
 * "words" are then left aside); without it, the axes' "words" are theirs. An axis without
 * "flag" is read by the first of its "words" written as a flag ("--enforce-eager") or an
 * environment variable's name, as gauntlet's sweep reads a switch's or an environment
 * variable's axis; with none, by a flag of its own making. Only "name", "axes"
 * and "cells" are required. A failure of cause http whose line is a request refused for its
 * length (HTTP 4xx, and a context gauntlet reads in it) is overload/context, as gauntlet's
 * verdict would be, whatever the file calls it. A crash/signal's line is the last its log
 * printed: the launch quotes it as gauntlet's diagnosis of a server killed by SIGKILL does.
 */
#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search_sim.h"
#include "search_sim_int.h"
#include "base/profile.h"
#include "base/util.h"
#include "gate/diagnose.h"
#include "gate/probes.h"

void sim_space_free_loaded(struct sim_space *s) {
        free(s->name);
        free(s->note);
        for (size_t a = 0; a < s->n_axes; a++)
                strv_free(s->axis_words[a]);
        free(s->t_speed);
        free(s->t_rule);
        free(s->t_noise);
        free(s->t_load);
        free(s->t_flaky);
        free(s->t_flaky_rule);
        free(s->p_other);
}

const char *sim_space_name(const struct sim_space *s) {
        return s->name;
}

_printf_(3, 4) static int fail_with(char *err, size_t err_size, const char *fmt, ...) {
        if (err && err_size) {
                va_list ap;
                va_start(ap, fmt);
                vsnprintf(err, err_size, fmt, ap);
                va_end(ap);
        }
        return -EINVAL;
}

/* The class a verdict costs as (enum sim_fail), or SIM_FAIL_NONE for one not known. */
static enum sim_fail fail_class(const char *kind) {
        static const struct {
                const char *prefix;
                enum sim_fail f;
        } classes[] = {
                {"timeout/", SIM_FAIL_HANG},   {"crash/oom", SIM_FAIL_OOM},       {"crash/config", SIM_FAIL_CONFIG},
                {"crash/", SIM_FAIL_ARCH},     {"garbage/", SIM_FAIL_GARBAGE},     {"wrong/", SIM_FAIL_BATCH},
                {"overload/", SIM_FAIL_BATCH},
        };
        for (size_t i = 0; i < ELEMENTSOF(classes); i++) {
                size_t n = strlen(classes[i].prefix);
                /* "crash/" and its kin need a cause after them; "crash/oom" is whole */
                if (strncmp(kind, classes[i].prefix, n) == 0 &&
                    (classes[i].prefix[n - 1] == '/' ? kind[n] != '\0' : kind[n] == '\0' || kind[n] == '/'))
                        return classes[i].f;
        }
        return SIM_FAIL_NONE;
}

/* The index of the rule of this verdict and line (a new one when none has them yet). */
static int rule_of(struct sim_space *s, const char *kind, const char *line) {
        if (line && !*line)
                line = NULL;
        for (size_t i = 0; i < s->n_rules; i++)
                if (strcmp(s->rules[i].kind, kind) == 0 &&
                    (line ? s->rules[i].evidence && strcmp(s->rules[i].evidence, line) == 0 : !s->rules[i].evidence))
                        return (int)i;
        struct sim_rule *nr = realloc(s->rules, (s->n_rules + 1) * sizeof(*nr));
        if (!nr)
                return -ENOMEM;
        s->rules = nr;
        struct sim_rule r = {.fail = fail_class(kind), .kind = strdup(kind), .evidence = line ? strdup(line) : NULL};
        if (!r.kind || (line && !r.evidence)) {
                free(r.kind);
                free(r.evidence);
                return -ENOMEM;
        }
        s->rules[s->n_rules] = r;
        return (int)s->n_rules++;
}

static bool positive(const json_t *v, double *ret) {
        if (!json_is_number(v) || !(json_number_value(v) > 0) || !isfinite(json_number_value(v)))
                return false;
        *ret = json_number_value(v);
        return true;
}

/* The space's own numbers, each optional: the noise (0, 1], the times > 0. */
static int load_numbers(struct sim_space *s, const json_t *root, char *err, size_t err_size) {
        static const char *const keys[] = {"noise", "load_s", "bench_s", "timeout_s"};
        double *dst[] = {&s->noise, &s->load_s, &s->bench_s, &s->timeout_s};
        for (size_t i = 0; i < ELEMENTSOF(keys); i++) {
                const json_t *v = json_object_get(root, keys[i]);
                if (v && !positive(v, dst[i]))
                        return fail_with(err, err_size, "\"%s\" must be a number above 0", keys[i]);
        }
        if (s->noise > 1)
                return fail_with(err, err_size, "\"noise\" must be at most 1 (an sd of log)");
        return 0;
}

/* The axes' count and value counts, checked, for sim_space_new. */
static int load_shape(const json_t *axes, size_t *n_axes, size_t *n_values, char *err, size_t err_size) {
        if (!json_is_array(axes) || json_array_size(axes) == 0 || json_array_size(axes) > SIM_AXES_MAX)
                return fail_with(err, err_size, "\"axes\" must be an array of 1 to %d axes", SIM_AXES_MAX);
        *n_axes = json_array_size(axes);
        size_t cells = 1;
        for (size_t a = 0; a < *n_axes; a++) {
                const json_t *ax = json_array_get(axes, a), *values = json_object_get(ax, "values");
                if (!json_is_object(ax) || !json_is_string(json_object_get(ax, "name")) || !json_is_array(values) ||
                    json_array_size(values) == 0 || json_array_size(values) > SIM_VALUES_MAX)
                        return fail_with(err, err_size, "axis %zu: needs a \"name\" and 1 to %d \"values\"", a,
                                         SIM_VALUES_MAX);
                for (size_t v = 0; v < json_array_size(values); v++)
                        if (!json_is_string(json_array_get(values, v)) || !*json_string_value(json_array_get(values, v)))
                                return fail_with(err, err_size, "axis %zu: value %zu is not a non-empty string", a, v);
                n_values[a] = json_array_size(values);
                cells *= n_values[a];
                if (cells > SIM_CELLS_MAX)
                        return fail_with(err, err_size, "more than %zu cells", SIM_CELLS_MAX);
        }
        return 0;
}

/* An axis's words: a NULL-terminated copy (strv), or NULL when it has none. */
static int load_words(struct sim_space *s, size_t a, const json_t *words, char *err, size_t err_size) {
        if (words && !json_is_array(words))
                return fail_with(err, err_size, "axis %zu: \"words\" must be an array of strings", a);
        for (size_t i = 0; words && i < json_array_size(words); i++) {
                if (!json_is_string(json_array_get(words, i)))
                        return fail_with(err, err_size, "axis %zu: \"words\" must be an array of strings", a);
                if (strv_push(&s->axis_words[a], json_string_value(json_array_get(words, i))) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* A verdict and its line (keys kind_key, line_key of cell), as a rule's index. */
static int load_failure(struct sim_space *s, const json_t *cell, const char *kind_key, const char *line_key,
                        size_t k, char *err, size_t err_size) {
        const json_t *kind = json_object_get(cell, kind_key), *line = json_object_get(cell, line_key);
        if (!json_is_string(kind) || fail_class(json_string_value(kind)) == SIM_FAIL_NONE)
                return fail_with(err, err_size,
                                 "cell %zu: \"%s\" must be a verdict with its cause (crash/..., timeout/..., "
                                 "garbage/..., wrong/..., overload/...)",
                                 k, kind_key);
        if (line && !json_is_null(line) && !json_is_string(line))
                return fail_with(err, err_size, "cell %zu: \"%s\" must be a string", k, line_key);
        const char *v = json_string_value(kind), *l = json_is_string(line) ? json_string_value(line) : NULL;
        /* a request refused for its length gets gauntlet's verdict, whatever the file calls it
         * (the written-apart generator says garbage/http): a 4xx whose message says the
         * context is exceeded is overload/context (src/run/phases.c, failure_cause) */
        int64_t context;
        if (endswith(v, "/http") && l && strstr(l, "HTTP 4") && probes_parse_context_error(l, &context) == 0)
                v = "overload/context";
        /* a server the kernel killed (the written-apart generators' OOM killer) is quoted as
         * gauntlet's diagnosis quotes it (diagnose_exit): the signal, then the log's first
         * error line, else its last line, which the file's line is */
        _cleanup_free_ char *killed = NULL, *first = NULL;
        if (strcmp(v, "crash/signal") == 0) {
                size_t no;
                int r = l && *l ? diagnose_error_line(l, strlen(l), &first, &no) : 0;
                if (r < 0)
                        return r;
                killed = first    ? strdup_printf("killed by SIGKILL" DIAGNOSE_FIRST_ERROR "%s", first)
                         : l && *l ? strdup_printf("killed by SIGKILL" DIAGNOSE_LAST_LINE "%s", l)
                                   : strdup("killed by SIGKILL");
                if (!killed)
                        return -ENOMEM;
                l = killed;
        }
        return rule_of(s, v, l);
}

static int load_cell(struct sim_space *s, const json_t *cell, size_t k, char *err, size_t err_size) {
        if (!json_is_object(cell))
                return fail_with(err, err_size, "cell %zu is not an object", k);
        const json_t *speed = json_object_get(cell, "s"), *fail = json_object_get(cell, "fail");
        const json_t *flaky = json_object_get(cell, "flaky"), *load = json_object_get(cell, "load"),
                     *noise = json_object_get(cell, "noise");
        s->t_rule[k] = -1;
        if (fail && !json_is_null(fail)) {
                int r = load_failure(s, cell, "fail", "line", k, err, err_size);
                if (r < 0)
                        return r;
                s->t_rule[k] = r;
                if (!json_is_number(speed) || !(json_number_value(speed) >= 0) || !isfinite(json_number_value(speed)))
                        return fail_with(err, err_size, "cell %zu: \"s\" must be a number, 0 or more", k);
                s->t_speed[k] = json_number_value(speed);
        } else if (!positive(speed, &s->t_speed[k]))
                return fail_with(err, err_size, "cell %zu: \"s\" (its figure) must be a number above 0", k);
        if (load && !positive(load, &s->t_load[k]))
                return fail_with(err, err_size, "cell %zu: \"load\" must be a number above 0", k);
        if (noise && (!positive(noise, &s->t_noise[k]) || s->t_noise[k] > 1))
                return fail_with(err, err_size, "cell %zu: \"noise\" must be above 0 and at most 1", k);
        if (flaky && !json_is_null(flaky)) {
                double p = json_is_number(flaky) ? json_number_value(flaky) : -1;
                if (!(p >= 0 && p < 1))
                        return fail_with(err, err_size, "cell %zu: \"flaky\" must be a chance, 0 to under 1", k);
                int r = load_failure(s, cell, "flaky_fail", "flaky_line", k, err, err_size);
                if (r < 0)
                        return r;
                s->t_flaky[k] = p;
                s->t_flaky_rule[k] = r;
        }
        return 0;
}

/* The flag gauntlet's sweep would read an axis by where the space gives none (matrix.c,
 * axis_reading_flag): a switch's flag ("--enforce-eager") or an environment variable's name
 * ("VLLM_FLASHINFER_MOE_BACKEND"), the first of its words written so; NULL for none. */
static const char *flag_in_words(const json_t *words) {
        for (size_t i = 0; json_is_array(words) && i < json_array_size(words); i++) {
                const char *w = json_string_value(json_array_get(words, i));
                bool env = w && isupper((unsigned char)w[0]) && strchr(w, '_');
                for (const char *p = w; env && *p; p++)
                        env = isupper((unsigned char)*p) || isdigit((unsigned char)*p) || *p == '_';
                if (w && ((w[0] == '-' && w[1] == '-' && isalpha((unsigned char)w[2]) && !strchr(w, ' ')) || env))
                        return w;
        }
        return NULL;
}

static int load_root(const json_t *root, struct sim_space **ret, char *err, size_t err_size) {
        const json_t *name = json_object_get(root, "name"), *axes = json_object_get(root, "axes"),
                     *cells = json_object_get(root, "cells"), *note = json_object_get(root, "describe");
        if (!json_is_string(name) || !*json_string_value(name))
                return fail_with(err, err_size, "the space needs a \"name\" (a string)");
        size_t n_axes = 0, n_values[SIM_AXES_MAX];
        int rc = load_shape(axes, &n_axes, n_values, err, err_size);
        if (rc < 0)
                return rc;
        struct sim_axis ax[SIM_AXES_MAX];
        const char *vals[SIM_AXES_MAX][SIM_VALUES_MAX];
        for (size_t a = 0; a < n_axes; a++) {
                const json_t *o = json_array_get(axes, a);
                for (size_t v = 0; v < n_values[a]; v++)
                        vals[a][v] = json_string_value(json_array_get(json_object_get(o, "values"), v));
                const json_t *flag = json_object_get(o, "flag");
                ax[a] = (struct sim_axis){.name = json_string_value(json_object_get(o, "name")),
                                          .flag = json_is_string(flag) ? json_string_value(flag)
                                                                       : flag_in_words(json_object_get(o, "words")),
                                          .values = vals[a]};
        }
        struct sim_space *s = NULL;
        if ((rc = sim_space_new(n_axes, n_values, ax, &s)) < 0)
                return rc;
        size_t n = 1;
        for (size_t a = 0; a < n_axes; a++)
                n *= n_values[a];
        s->name = strdup(json_string_value(name));
        s->note = json_is_string(note) ? strdup(json_string_value(note)) : NULL;
        s->t_speed = calloc(n, sizeof(double));
        s->t_rule = calloc(n, sizeof(int));
        s->t_noise = calloc(n, sizeof(double));
        s->t_load = calloc(n, sizeof(double));
        s->t_flaky = calloc(n, sizeof(double));
        s->t_flaky_rule = calloc(n, sizeof(int));
        if (!s->name || (json_is_string(note) && !s->note) || !s->t_speed || !s->t_rule || !s->t_noise || !s->t_load ||
            !s->t_flaky || !s->t_flaky_rule) {
                rc = -ENOMEM;
                goto out;
        }
        /* the cells' ids: from the name, so that a space keeps them wherever it is read */
        s->id_seed = UINT64_C(14695981039346656037);
        for (const char *c = s->name; *c; c++)
                s->id_seed = (s->id_seed ^ (unsigned char)*c) * UINT64_C(1099511628211);
        if ((rc = load_numbers(s, root, err, err_size)) < 0)
                goto out;
        const json_t *engine = json_object_get(root, "engine");
        if (engine && (!json_is_string(engine) || !(s->engine = profile_find(json_string_value(engine))))) {
                rc = fail_with(err, err_size, "\"engine\" must name an engine gauntlet has a profile of");
                goto out;
        }
        for (size_t a = 0; s->engine && a < n_axes; a++) {
                s->p_words[a] = profile_axis_words(s->engine, s->axis_flags[a]);
                s->p_aliases[a] = profile_axis_aliases(s->engine, s->axis_flags[a]);
                s->p_forms[a] = profile_axis_forms(s->engine, s->axis_flags[a]);
        }
        if (s->engine && (rc = profile_other_words(s->engine, (const char *const *)s->axis_flags, n_axes, &s->p_other)) < 0)
                goto out;
        for (size_t a = 0; a < n_axes; a++)
                if ((rc = load_words(s, a, json_object_get(json_array_get(axes, a), "words"), err, err_size)) < 0)
                        goto out;
        if (!json_is_array(cells) || json_array_size(cells) != n) {
                rc = fail_with(err, err_size, "\"cells\" must hold %zu cells (the product of the axes' values), not %zu",
                               n, json_is_array(cells) ? json_array_size(cells) : 0);
                goto out;
        }
        for (size_t k = 0; k < n; k++)
                if ((rc = load_cell(s, json_array_get(cells, k), k, err, err_size)) < 0)
                        goto out;
        if ((rc = sim_space_finish(s)) == -ENOENT)
                fail_with(err, err_size, "no cell serves right");
out:
        if (rc < 0) {
                if (rc == -ENOMEM)
                        fail_with(err, err_size, "out of memory");
                sim_space_free(s);
                return rc;
        }
        *ret = s;
        return 0;
}

int sim_space_load(const char *json, struct sim_space **ret, char *err, size_t err_size) {
        if (err && err_size)
                *err = '\0';
        json_error_t je;
        _cleanup_json_ json_t *root = json_loads(json, JSON_REJECT_DUPLICATES, &je);
        if (!root)
                return fail_with(err, err_size, "not JSON: %s (column %d)", je.text, je.column);
        if (!json_is_object(root))
                return fail_with(err, err_size, "a space must be a JSON object");
        return load_root(root, ret, err, err_size);
}
