/* search_sim.c -- simulated tuning spaces and strategies run on them (search_sim.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search/search.h"
#include "search_sim.h"
#include "search_sim_int.h"
#include "base/rng.h"
#include "base/util.h"

/* ---- draws: the one generator (base/rng.h) ---- */

/* Uniform in [lo, hi). */
static double rng_range(uint64_t *state, double lo, double hi) {
        return lo + (hi - lo) * rng_uniform(state);
}

/* Standard normal (Box-Muller, one pair of draws per call, nothing cached). */
static double rng_normal(uint64_t *state) {
        double u1 = 1.0 - rng_uniform(state); /* (0, 1]: log is finite */
        double u2 = rng_uniform(state);
        return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

uint64_t sim_seed_mix(uint64_t a, uint64_t b) {
        uint64_t st = a ^ (b * UINT64_C(0xd1b54a32d192ed03));
        rng_next(&st);
        return rng_next(&st);
}

/* ---- the space ---- */

static const char *const fail_kinds[_SIM_FAIL_MAX] = {
        [SIM_FAIL_HANG] = "timeout/startup",
        [SIM_FAIL_ARCH] = "crash/arch",
        [SIM_FAIL_CONFIG] = "crash/config",
        [SIM_FAIL_REQUIRES] = "crash/config",
        [SIM_FAIL_OOM] = "crash/oom",
        [SIM_FAIL_GARBAGE] = "garbage/repeat",
        [SIM_FAIL_BATCH] = "wrong/ok",
};

static const char *const fail_names[_SIM_FAIL_MAX] = {
        [SIM_FAIL_HANG] = "hang",
        [SIM_FAIL_ARCH] = "arch",
        [SIM_FAIL_CONFIG] = "config",
        [SIM_FAIL_REQUIRES] = "requires",
        [SIM_FAIL_OOM] = "oom",
        [SIM_FAIL_GARBAGE] = "garbage",
        [SIM_FAIL_BATCH] = "batch",
};

static const char oom_evidence[] = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB";
#define SIM_OOM_LINE 160

void sim_space_free(struct sim_space *s) {
        if (!s)
                return;
        for (size_t a = 0; a < s->n_axes; a++) {
                free(s->axis_names[a]);
                free(s->axis_flags[a]);
                if (s->value_names[a])
                        for (size_t v = 0; v < s->n_values[a]; v++)
                                free(s->value_names[a][v]);
                free(s->value_names[a]);
                free(s->effect[a]);
                free(s->memory[a]);
                free(s->oom_line[a]);
        }
        free(s->oom_cell_line);
        free(s->pairs);
        for (size_t i = 0; i < s->n_rules; i++) {
                free(s->rules[i].evidence);
                free(s->rules[i].kind);
        }
        free(s->rules);
        sim_space_free_loaded(s);
        free(s->choice);
        free(s->id_buf);
        free(s->ids);
        free(s->log_speed);
        free(s->rule);
        free(s);
}

int sim_space_new(size_t n_axes, const size_t *n_values, const struct sim_axis *axes, struct sim_space **ret) {
        if (n_axes == 0 || n_axes > SIM_AXES_MAX || !n_values)
                return -EINVAL;
        size_t cells = 1;
        for (size_t a = 0; a < n_axes; a++) {
                if (n_values[a] == 0 || n_values[a] > SIM_VALUES_MAX)
                        return -EINVAL;
                cells *= n_values[a];
                if (cells > SIM_CELLS_MAX)
                        return -E2BIG;
        }
        struct sim_space *s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->n_axes = n_axes;
        s->base = 100;
        s->noise = 0.02;
        s->load_s = 600;
        s->bench_s = 240;
        s->timeout_s = 1800;
        for (size_t a = 0; a < n_axes; a++) {
                const struct sim_axis *ax = axes ? &axes[a] : NULL;
                s->n_values[a] = n_values[a];
                s->axis_names[a] = ax && ax->name ? strdup(ax->name) : strdup_printf("a%zu", a);
                s->axis_flags[a] = ax && ax->flag ? strdup(ax->flag) : strdup_printf("--flag-a%zu", a);
                s->value_names[a] = calloc(n_values[a], sizeof(char *));
                s->effect[a] = calloc(n_values[a], sizeof(double));
                s->memory[a] = calloc(n_values[a], sizeof(double));
                if (!s->axis_names[a] || !s->axis_flags[a] || !s->value_names[a] || !s->effect[a] || !s->memory[a])
                        goto oom;
                for (size_t v = 0; v < n_values[a]; v++) {
                        if (ax && ax->values)
                                s->value_names[a][v] = strdup(ax->values[v]);
                        else
                                s->value_names[a][v] = v == 0 ? strdup("auto") : strdup_printf("v%zu", v);
                        if (!s->value_names[a][v])
                                goto oom;
                }
        }
        *ret = s;
        return 0;
oom:
        sim_space_free(s);
        return -ENOMEM;
}

void sim_space_set_speed(struct sim_space *s, double base, double noise) {
        s->base = base;
        s->noise = noise;
}

/* The times of a launch: the load, the checks and bench of a cell that serves, the start-up
 * timeout a hang costs (seconds); a drawn space's (a hand-built one keeps sim_space_new's). */
static void sim_space_set_times(struct sim_space *s, double load_s, double bench_s, double timeout_s) {
        s->load_s = load_s;
        s->bench_s = bench_s;
        s->timeout_s = timeout_s;
}

static bool term_valid(const struct sim_space *s, struct sim_term t) {
        return t.axis < s->n_axes && t.value < s->n_values[t.axis];
}

int sim_space_set_effect(struct sim_space *s, size_t axis, size_t value, double effect) {
        if (s->finished || !term_valid(s, (struct sim_term){axis, value}))
                return -EINVAL;
        s->effect[axis][value] = effect;
        return 0;
}

int sim_space_add_pair(struct sim_space *s, struct sim_term x, struct sim_term y, double effect) {
        if (s->finished || !term_valid(s, x) || !term_valid(s, y) || x.axis == y.axis)
                return -EINVAL;
        struct sim_pair *np = realloc(s->pairs, (s->n_pairs + 1) * sizeof(*np));
        if (!np)
                return -ENOMEM;
        s->pairs = np;
        s->pairs[s->n_pairs++] = (struct sim_pair){x, y, effect};
        return 0;
}

/* The evidence a failing launch of rule r prints, as a real engine would word it. */
static char *rule_evidence(const struct sim_space *s, const struct sim_rule *r) {
        const struct sim_term *t = r->terms;
        switch (r->fail) {
        case SIM_FAIL_HANG:
                if (r->n_terms == 1 && s->speech == SIM_SPEAKS_VALUE)
                        return strdup_printf("not ready after %.0fs; last log line: Capturing batches for %s %s",
                                             s->timeout_s, s->axis_flags[t[0].axis], s->value_names[t[0].axis][t[0].value]);
                if (r->n_terms == 1 && s->speech == SIM_SPEAKS_NAME)
                        return strdup_printf("not ready after %.0fs; last log line: Capturing batches (%s)", s->timeout_s,
                                             s->value_names[t[0].axis][t[0].value]);
                return strdup_printf("not ready after %.0fs; last log line: Capturing batches", s->timeout_s);
        case SIM_FAIL_ARCH:
                if (r->n_terms == 1 && s->speech == SIM_SPEAKS_VALUE)
                        return strdup_printf("%s %s: CUDA error: no kernel image is available for execution on the device",
                                             s->axis_flags[t[0].axis], s->value_names[t[0].axis][t[0].value]);
                if (r->n_terms == 1 && s->speech == SIM_SPEAKS_NAME)
                        return strdup_printf("CUDA error: no kernel image is available for execution on the device "
                                             "(kernel %s)", s->value_names[t[0].axis][t[0].value]);
                return strdup("CUDA error: no kernel image is available for execution on the device");
        case SIM_FAIL_CONFIG:
                return strdup_printf("ValueError: %s %s cannot be used with %s %s", s->axis_flags[t[0].axis],
                                     s->value_names[t[0].axis][t[0].value], s->axis_flags[t[1].axis],
                                     s->value_names[t[1].axis][t[1].value]);
        case SIM_FAIL_REQUIRES:
                return strdup_printf("ValueError: %s %s requires %s %s", s->axis_flags[t[0].axis],
                                     s->value_names[t[0].axis][t[0].value], s->axis_flags[t[1].axis],
                                     s->value_names[t[1].axis][t[1].value]);
        case SIM_FAIL_GARBAGE:
                return strdup("!!!!!!!!");
        case SIM_FAIL_BATCH:
                if (r->n_terms == 1 && s->speech == SIM_SPEAKS_VALUE)
                        return strdup_printf("under load at concurrency 8, ok: expected \"OK\", got: \"!!!!\" "
                                             "(warning: %s %s is untested with batching)",
                                             s->axis_flags[t[0].axis], s->value_names[t[0].axis][t[0].value]);
                if (r->n_terms == 1 && s->speech == SIM_SPEAKS_NAME)
                        return strdup_printf("under load at concurrency 8, ok: expected \"OK\", got: \"!!!!\" "
                                             "(warning: %s is untested with batching)",
                                             s->value_names[t[0].axis][t[0].value]);
                return strdup("under load at concurrency 8, ok: expected \"OK\", got: \"!!!!\"");
        case SIM_FAIL_OOM:
        case SIM_FAIL_NONE:
        case _SIM_FAIL_MAX:
                break;
        }
        return NULL;
}

int sim_space_add_rule(struct sim_space *s, enum sim_fail f, const struct sim_term *terms, size_t n_terms) {
        if (s->finished || f < 0 || f >= _SIM_FAIL_MAX || f == SIM_FAIL_OOM || n_terms == 0 || n_terms > SIM_TERMS_MAX)
                return -EINVAL;
        if ((f == SIM_FAIL_CONFIG || f == SIM_FAIL_REQUIRES) && n_terms != 2)
                return -EINVAL;
        for (size_t i = 0; i < n_terms; i++) {
                if (!term_valid(s, terms[i]))
                        return -EINVAL;
                for (size_t j = 0; j < i; j++)
                        if (terms[j].axis == terms[i].axis)
                                return -EINVAL;
        }
        struct sim_rule r = {.fail = f, .n_terms = n_terms};
        memcpy(r.terms, terms, n_terms * sizeof(*terms));
        r.evidence = rule_evidence(s, &r);
        if (!r.evidence)
                return -ENOMEM;
        struct sim_rule *nr = realloc(s->rules, (s->n_rules + 1) * sizeof(*nr));
        if (!nr) {
                free(r.evidence);
                return -ENOMEM;
        }
        s->rules = nr;
        s->rules[s->n_rules++] = r;
        return 0;
}

int sim_space_set_memory(struct sim_space *s, size_t axis, size_t value, double cost) {
        if (s->finished || !term_valid(s, (struct sim_term){axis, value}))
                return -EINVAL;
        s->memory[axis][value] = cost;
        return 0;
}

void sim_space_set_oom_sizes(struct sim_space *s, bool on) {
        s->oom_sizes = on;
}

bool sim_cell_oom(const struct sim_space *s, size_t k) {
        return s->finished && k < s->n_cells && s->rule[k] == SIM_RULE_OOM;
}

bool sim_space_oom_sizes(const struct sim_space *s) {
        return s->oom_line[0] != NULL;
}

void sim_space_set_oom_free(struct sim_space *s, bool on) {
        s->oom_free = on;
}

bool sim_space_oom_free(const struct sim_space *s) {
        return s->oom_cell_line != NULL;
}

/* The axis whose allocation takes cell k past the memory limit (sim_space_set_oom_sizes);
 * *before, what the axes before it took. */
static size_t oom_axis(const struct sim_space *s, size_t k, double *before) {
        const size_t *c = &s->choice[k * s->n_axes];
        double sum = 0;
        for (size_t a = 0; a < s->n_axes; a++) {
                *before = sum;
                sum += s->memory[a][c[a]];
                if (sum > s->memory_limit + 1e-12)
                        return a;
        }
        return s->n_axes - 1;
}

void sim_space_set_memory_limit(struct sim_space *s, double limit) {
        s->memory_limit = limit;
}

static bool rule_hits(const struct sim_rule *r, const size_t *choice) {
        if (r->n_terms == 0)
                return false;   /* a loaded space's: its cells name it (t_rule) */
        if (r->fail == SIM_FAIL_REQUIRES)
                return choice[r->terms[0].axis] == r->terms[0].value && choice[r->terms[1].axis] != r->terms[1].value;
        for (size_t i = 0; i < r->n_terms; i++)
                if (choice[r->terms[i].axis] != r->terms[i].value)
                        return false;
        return true;
}

static enum sim_fail rule_fail(const struct sim_space *s, int rule) {
        return rule == SIM_RULE_OOM ? SIM_FAIL_OOM : rule < 0 ? SIM_FAIL_NONE : s->rules[rule].fail;
}

int sim_space_finish(struct sim_space *s) {
        if (s->finished)
                return 0;
        size_t n = 1;
        for (size_t a = s->n_axes; a-- > 0;) {
                s->stride[a] = n;
                n *= s->n_values[a];
        }
        size_t *choice = calloc(n * s->n_axes, sizeof(size_t));
        char *id_buf = malloc(n * 9);
        const char **ids = calloc(n, sizeof(char *));
        double *log_speed = calloc(n, sizeof(double));
        int *rule = calloc(n, sizeof(int));
        if (!choice || !id_buf || !ids || !log_speed || !rule) {
                free(choice);
                free(id_buf);
                free(ids);
                free(log_speed);
                free(rule);
                return -ENOMEM;
        }
        size_t n_feasible = 0, best = 0;
        for (size_t k = 0; k < n; k++) {
                size_t *c = &choice[k * s->n_axes];
                double ls = log(s->base), mem = 0;
                for (size_t a = 0; a < s->n_axes; a++) {
                        c[a] = k / s->stride[a] % s->n_values[a];
                        ls += s->effect[a][c[a]];
                        mem += s->memory[a][c[a]];
                }
                for (size_t i = 0; i < s->n_pairs; i++)
                        if (c[s->pairs[i].x.axis] == s->pairs[i].x.value && c[s->pairs[i].y.axis] == s->pairs[i].y.value)
                                ls += s->pairs[i].effect;
                int r = -1;
                if (s->memory_limit > 0 && mem > s->memory_limit + 1e-12)
                        r = SIM_RULE_OOM;
                for (size_t i = 0; i < s->n_rules; i++)
                        if (rule_hits(&s->rules[i], c) && (r == -1 || s->rules[i].fail < rule_fail(s, r)))
                                r = (int)i;
                if (s->t_speed) {
                        /* a loaded space: its truth as the file said (a failing cell's figure may be 0) */
                        ls = log(MAX(s->t_speed[k], 1e-9));
                        r = s->t_rule[k];
                }
                log_speed[k] = ls;
                rule[k] = r;
                snprintf(&id_buf[k * 9], 9, "%08x", (unsigned)(sim_seed_mix(s->id_seed, k) >> 32));
                ids[k] = &id_buf[k * 9];
                if (r == -1) {
                        if (n_feasible == 0 || ls > log_speed[best])
                                best = k;
                        n_feasible++;
                }
        }
        if (n_feasible == 0) {
                free(choice);
                free(id_buf);
                free(ids);
                free(log_speed);
                free(rule);
                return -ENOENT;
        }
        s->n_cells = n;
        s->choice = choice;
        s->id_buf = id_buf;
        s->ids = ids;
        s->log_speed = log_speed;
        s->rule = rule;
        s->n_feasible = n_feasible;
        s->best_cell = best;
        s->finished = true;
        /* the lines of the allocations that fail: each axis its own scale in MB, as llama.cpp
         * words it; or, where the line says what was free, PyTorch's words, in GiB of one
         * scale (the limit 6 x its share), what the axes before left */
        for (size_t a = 0; s->oom_sizes && s->memory_limit > 0 && !s->t_speed && a < s->n_axes; a++) {
                if (!(s->oom_line[a] = calloc(s->n_values[a], SIM_OOM_LINE)))
                        return -ENOMEM;
                for (size_t v = 0; v < s->n_values[a]; v++)
                        snprintf(&s->oom_line[a][v * SIM_OOM_LINE], SIM_OOM_LINE,
                                 "E ggml_aligned_malloc: insufficient memory (attempted to allocate %.2f MB)",
                                 s->memory[a][v] * 6.0 * (1 + 0.37 * (double)a) * 1024.0);
        }
        if (s->oom_line[0] && s->oom_free) {
                if (!(s->oom_cell_line = calloc(n, SIM_OOM_LINE)))
                        return -ENOMEM;
                for (size_t k = 0; k < n; k++) {
                        if (rule[k] != SIM_RULE_OOM)
                                continue;
                        double before;
                        size_t a = oom_axis(s, k, &before);
                        snprintf(&s->oom_cell_line[k * SIM_OOM_LINE], SIM_OOM_LINE,
                                 "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate %.2f GiB. GPU 0 has a "
                                 "total capacity of %.2f GiB of which %.2f GiB is free.",
                                 s->memory[a][choice[k * s->n_axes + a]] * 6.0, s->memory_limit * 6.0,
                                 MAX(s->memory_limit - before, 0.0) * 6.0);
                }
        }
        return 0;
}

void sim_space_view(const struct sim_space *s, struct search_space *ret) {
        *ret = (struct search_space){
                .n_axes = s->n_axes,
                .n_values = s->n_values,
                .axis_names = (const char *const *)s->axis_names,
                .value_names = (const char *const *const *)s->value_names,
                .axis_flags = (const char *const *)s->axis_flags,
                .n_cells = s->n_cells,
                .choice = s->choice,
                .ids = s->ids,
                .axis_words = s->engine    ? s->p_words
                              : s->t_speed ? (const char *const *const *)s->axis_words
                                           : NULL,
                .axis_aliases = s->engine ? s->p_aliases : NULL,
                .axis_forms = s->engine ? s->p_forms : NULL,
                .other_words = s->engine ? s->p_other : NULL,
                .higher_better = true,
                .first = 0,
        };
}

size_t sim_space_cells(const struct sim_space *s) {
        return s->n_cells;
}

double sim_space_feasible_share(const struct sim_space *s) {
        return s->n_cells ? (double)s->n_feasible / (double)s->n_cells : 0;
}

double sim_cell_speed(const struct sim_space *s, size_t k) {
        return k < s->n_cells ? exp(s->log_speed[k]) : 0;
}

enum sim_fail sim_cell_fail(const struct sim_space *s, size_t k) {
        return k < s->n_cells ? rule_fail(s, s->rule[k]) : SIM_FAIL_NONE;
}

unsigned sim_space_patterns(const struct sim_space *s) {
        unsigned bits = 0;
        for (size_t k = 0; k < s->n_cells; k++) {
                enum sim_fail f = rule_fail(s, s->rule[k]);
                if (f != SIM_FAIL_NONE)
                        bits |= 1u << f;
        }
        if (s->n_cells && s->rule[0] != -1)
                bits |= 1u << SIM_PATTERN_DEFAULTS;
        for (size_t i = 0; i < s->n_pairs; i++)
                if (s->pairs[i].effect >= 0.3)
                        bits |= 1u << SIM_PATTERN_SYNERGY;
        return bits;
}

/* Whether cell k fails by one value's doing whose line a space may word with the value
 * (a hang, a kernel for another GPU, a break under batching: sim_speech). */
static bool one_value_rule(const struct sim_space *s, size_t k) {
        if (s->rule[k] < 0)
                return false;
        const struct sim_rule *r = &s->rules[s->rule[k]];
        return r->n_terms == 1 && (r->fail == SIM_FAIL_HANG || r->fail == SIM_FAIL_ARCH || r->fail == SIM_FAIL_BATCH);
}

enum sim_lines sim_space_lines(const struct sim_space *s) {
        enum sim_lines l = SIM_LINES_NONE;
        if (s->t_speed) {
                /* a loaded space: whether a line of a cell's own failure names its value, as
                 * the search reads it */
                struct search_space v;
                sim_space_view(s, &v);
                for (size_t k = 0; s->finished && k < s->n_cells && l == SIM_LINES_NONE; k++) {
                        size_t axis;
                        if (s->rule[k] >= 0 && s->rules[s->rule[k]].evidence &&
                            search_names_value(&v, k, s->rules[s->rule[k]].evidence, &axis) == SEARCH_NAMES_VALUE)
                                l = SIM_LINES_NAME;
                }
                return l;
        }
        for (size_t k = 0; s->finished && k < s->n_cells; k++) {
                enum sim_fail f = rule_fail(s, s->rule[k]);
                enum sim_lines here = SIM_LINES_NONE;
                if (f == SIM_FAIL_CONFIG || f == SIM_FAIL_REQUIRES)
                        here = SIM_LINES_PAIR;
                else if (one_value_rule(s, k))
                        here = s->speech == SIM_SPEAKS_VALUE  ? SIM_LINES_FLAG
                               : s->speech == SIM_SPEAKS_NAME ? SIM_LINES_NAME
                                                              : SIM_LINES_NONE;
                l = MAX(l, here);
        }
        return l;
}

const char *sim_lines_to_string(enum sim_lines l) {
        static const char *const names[_SIM_LINES_MAX] = {
                [SIM_LINES_NONE] = "name nothing",
                [SIM_LINES_PAIR] = "name a pair",
                [SIM_LINES_NAME] = "name a value",
                [SIM_LINES_FLAG] = "value and flag",
        };
        return l >= 0 && l < _SIM_LINES_MAX ? names[l] : NULL;
}

const char *sim_pattern_to_string(unsigned pattern) {
        if (pattern < _SIM_FAIL_MAX)
                return fail_names[pattern];
        return pattern == SIM_PATTERN_DEFAULTS ? "defaults" : pattern == SIM_PATTERN_SYNERGY ? "synergy" : NULL;
}

void sim_true_best(const struct sim_space *s, size_t *ret_cell, double *ret_speed) {
        if (ret_cell)
                *ret_cell = s->best_cell;
        if (ret_speed)
                *ret_speed = exp(s->log_speed[s->best_cell]);
}

bool sim_space_needle(const struct sim_space *s, size_t *ret_combos) {
        if (ret_combos)
                *ret_combos = 0;
        if (!s->finished)
                return false;
        double floor = s->log_speed[s->best_cell] + log(0.97);
        for (size_t i = 0; i < s->n_pairs; i++) {
                const struct sim_pair *p = &s->pairs[i];
                if (p->effect < 0.3 || p->x.value == 0 || p->y.value == 0)
                        continue;
                bool all = true;
                for (size_t k = 0; k < s->n_cells && all; k++) {
                        const size_t *c = &s->choice[k * s->n_axes];
                        if (s->rule[k] == -1 && s->log_speed[k] >= floor)
                                all = c[p->x.axis] == p->x.value && c[p->y.axis] == p->y.value;
                }
                if (all) {
                        if (ret_combos)
                                *ret_combos = (s->n_values[p->x.axis] - 1) * (s->n_values[p->y.axis] - 1);
                        return true;
                }
        }
        return false;
}

int sim_launch(const struct sim_space *s, size_t k, uint64_t *rng, struct search_obs *ret_obs, double *ret_seconds) {
        if (!s->finished || k >= s->n_cells)
                return -EINVAL;
        /* Always the same draws, whatever the outcome, so that the noise of a later launch
         * does not depend on how this one went. */
        double z = rng_normal(rng);
        double jitter = rng_range(rng, 0.9, 1.1);
        double u = rng_uniform(rng);
        double load = (s->t_load && s->t_load[k] > 0 ? s->t_load[k] : s->load_s) * jitter;
        double noise = s->t_noise && s->t_noise[k] > 0 ? s->t_noise[k] : s->noise;
        int rule = s->rule[k];
        /* a loaded space's host fault, drawn only for a cell that may meet one: a drawn
         * space's launches keep their draws, and a loaded one's still do not depend on how
         * an earlier launch went */
        bool host = s->t_flaky && s->t_flaky[k] > 0 && rng_uniform(rng) < s->t_flaky[k];
        if (host)
                rule = s->t_flaky_rule[k];
        enum sim_fail f = rule_fail(s, rule);
        struct search_obs o = {.state = SEARCH_INFEASIBLE};
        double sec;
        switch (f) {
        case SIM_FAIL_NONE:
                o.state = SEARCH_FEASIBLE;
                o.has_value = true;
                o.value = exp(s->log_speed[k] + noise * z);
                sec = load + s->bench_s;
                break;
        case SIM_FAIL_HANG:
                sec = s->timeout_s;
                break;
        case SIM_FAIL_ARCH:
        case SIM_FAIL_CONFIG:
        case SIM_FAIL_REQUIRES:
                sec = load * (0.1 + 0.3 * u);   /* dies early in the load */
                break;
        case SIM_FAIL_OOM:
                sec = load * (0.6 + 0.4 * u);   /* dies allocating the weights or the KV cache */
                break;
        case SIM_FAIL_GARBAGE:
                sec = load + 0.1 * s->bench_s;  /* the checks, no bench */
                break;
        case SIM_FAIL_BATCH:
        default:
                sec = load + 0.5 * s->bench_s;  /* fails in the bench */
                break;
        }
        if (o.state == SEARCH_INFEASIBLE) {
                o.kind = rule >= 0 && s->rules[rule].kind ? s->rules[rule].kind : fail_kinds[f];
                o.evidence = rule != SIM_RULE_OOM ? s->rules[rule].evidence : oom_evidence;
                if (rule == SIM_RULE_OOM && s->oom_cell_line)
                        o.evidence = &s->oom_cell_line[k * SIM_OOM_LINE];
                else if (rule == SIM_RULE_OOM && s->oom_line[0]) {
                        double before;
                        size_t a = oom_axis(s, k, &before);
                        o.evidence = &s->oom_line[a][s->choice[k * s->n_axes + a] * SIM_OOM_LINE];
                }
        }
        if (host && ret_obs->state == SEARCH_FEASIBLE && ret_obs->has_value) {
                /* measured again, and the host failed it: the launch counts, the figure stays */
                ret_obs->seconds += sec;
                ret_obs->launches = MAX(ret_obs->launches, 1u) + 1;
                if (ret_seconds)
                        *ret_seconds = sec;
                return 0;
        }
        o.seconds = sec;
        if (ret_obs->state == SEARCH_INFEASIBLE) {
                /* launched once more after a failure: a drawn space's failures are the
                 * matrix's, so the same again (a loaded space's host fault may pass now) */
                o.seconds += ret_obs->seconds;
                o.launches = MAX(ret_obs->launches, 1u) + 1;
        } else if (ret_obs->state == SEARCH_FEASIBLE && ret_obs->has_value) {
                /* measured again: the figure pools the launches (their geometric mean) */
                unsigned n = MAX(ret_obs->measured, 1u);
                o.seconds += ret_obs->seconds;
                o.launches = MAX(ret_obs->launches, 1u) + 1;
                if (o.state == SEARCH_FEASIBLE) {
                        o.value = exp((log(ret_obs->value) * n + log(o.value)) / (n + 1));
                        o.measured = n + 1;
                }
        }
        *ret_obs = o;
        if (ret_seconds)
                *ret_seconds = sec;
        return 0;
}

char *sim_cell_label(const struct sim_space *s, size_t k) {
        if (k >= s->n_cells)
                return NULL;
        char *out = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&out, &len);
        if (!f)
                return NULL;
        for (size_t a = 0; a < s->n_axes; a++)
                fprintf(f, "%s%s=%s", a ? " " : "", s->axis_names[a], s->value_names[a][s->choice[k * s->n_axes + a]]);
        if (fclose(f) != 0) {
                free(out);
                return NULL;
        }
        return out;
}

static void term_print(FILE *f, const struct sim_space *s, struct sim_term t) {
        fprintf(f, "%s=%s", s->axis_names[t.axis], s->value_names[t.axis][t.value]);
}

char *sim_space_describe(const struct sim_space *s) {
        char *out = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&out, &len);
        if (!f)
                return NULL;
        fprintf(f, "%zu cells (", s->n_cells);
        for (size_t a = 0; a < s->n_axes; a++)
                fprintf(f, "%s%zu", a ? "x" : "", s->n_values[a]);
        fprintf(f, "), %.0f%% serve, noise %.1f%%", 100.0 * sim_space_feasible_share(s), 100.0 * s->noise);
        if (s->finished && s->rule[0] != -1)
                fprintf(f, ", defaults fail (%s)", fail_names[rule_fail(s, s->rule[0])]);
        if (s->t_speed && s->note)
                fprintf(f, "; %s", s->note);
        for (size_t i = 0; i < s->n_rules && !s->t_speed; i++) {
                const struct sim_rule *r = &s->rules[i];
                fprintf(f, "; %s ", fail_names[r->fail]);
                for (size_t t = 0; t < r->n_terms; t++) {
                        if (t)
                                fputs(r->fail == SIM_FAIL_REQUIRES ? " needs " : "+", f);
                        term_print(f, s, r->terms[t]);
                }
        }
        if (s->memory_limit > 0) {
                fputs("; oom ", f);
                bool first = true;
                for (size_t a = 0; a < s->n_axes; a++) {
                        bool any = false;
                        for (size_t v = 0; v < s->n_values[a]; v++)
                                any |= s->memory[a][v] != 0;
                        if (any) {
                                fprintf(f, "%s%s", first ? "" : "+", s->axis_names[a]);
                                first = false;
                        }
                }
                fprintf(f, " > %.2f", s->memory_limit);
        }
        for (size_t i = 0; i < s->n_pairs; i++) {
                fputs("; pair ", f);
                term_print(f, s, s->pairs[i].x);
                fputc('+', f);
                term_print(f, s, s->pairs[i].y);
                fprintf(f, " %+.2f", s->pairs[i].effect);
        }
        if (fclose(f) != 0) {
                free(out);
                return NULL;
        }
        return out;
}

/* ---- drawing a space ---- */

/* Names that look like a real engine's flags; the ordinal ones (later values hold more in
 * flight) are the first picks for the memory-hungry axes. */
struct pool_axis {
        const char *name, *flag;
        bool ordinal;
        const char *values[8];
};

static const struct pool_axis pool[] = {
        {"attn", "--attention-backend", false,
         {"auto", "flashinfer", "fa3", "triton", "torch_native", "flashmla", "cutlass_mla", "trtllm_mha"}},
        {"moe", "--moe-runner-backend", false,
         {"auto", "triton", "cutlass", "flashinfer_cutlass", "flashinfer_trtllm", "deep_gemm", "triton_kernel",
          "flashinfer_mxfp4"}},
        {"kv", "--kv-cache-dtype", false, {"auto", "fp8_e4m3", "fp8_e5m2", "bf16", "fp16", "fp8", "int8", "fp4_e2m1"}},
        {"gemm", "--fp8-gemm-backend", false,
         {"auto", "cutlass", "cublas", "triton", "deep_gemm", "flashinfer", "cublaslt", "torch"}},
        {"sched", "--schedule-policy", false,
         {"auto", "fcfs", "lpm", "dfs-weight", "lof", "random", "priority", "fcfs-strict"}},
        {"spec", "--speculative-algorithm", false,
         {"auto", "none", "EAGLE", "EAGLE3", "NEXTN", "STANDALONE", "NGRAM", "MTP"}},
        {"bs", "--cuda-graph-max-bs", true, {"auto", "8", "16", "32", "64", "128", "256", "512"}},
        {"chunk", "--chunked-prefill-size", true,
         {"auto", "1024", "2048", "4096", "8192", "16384", "32768", "65536"}},
        {"mem", "--mem-fraction-static", true, {"auto", "0.70", "0.75", "0.80", "0.85", "0.88", "0.90", "0.93"}},
        {"seqs", "--max-running-requests", true, {"auto", "16", "32", "64", "128", "256", "512", "1024"}},
};

#define POOL_VALUES 8

/* A value of axis a other than the default (every axis has at least 2). */
static struct sim_term draw_nondefault(uint64_t *rng, const struct sim_space *s, size_t a) {
        return (struct sim_term){a, 1 + (size_t)rng_below(rng, s->n_values[a] - 1)};
}

/* Two different axes. */
static void draw_two_axes(uint64_t *rng, const struct sim_space *s, size_t *ret_a, size_t *ret_b) {
        size_t a = (size_t)rng_below(rng, s->n_axes);
        size_t b = (size_t)rng_below(rng, s->n_axes - 1);
        *ret_a = a;
        *ret_b = b >= a ? b + 1 : b;
}

static void shuffle(uint64_t *rng, size_t *v, size_t n) {
        for (size_t i = n; i > 1; i--) {
                size_t j = (size_t)rng_below(rng, i);
                size_t t = v[i - 1];
                v[i - 1] = v[j];
                v[j] = t;
        }
}

/* Effects, interactions and failure patterns of a space whose axes are set. */
static int draw_truth(uint64_t *rng, struct sim_space *s, const bool *ordinal) {
        int r;
        size_t na = s->n_axes;
        sim_space_set_speed(s, rng_range(rng, 20, 200), rng_range(rng, 0.01, 0.04));
        sim_space_set_times(s, rng_range(rng, 300, 1200), rng_range(rng, 120, 360), 1800);

        /* Main effects: most axes matter (sd 0.15-0.35 per value), some barely. */
        for (size_t a = 0; a < na; a++) {
                double scale = rng_uniform(rng) < 0.25 ? rng_range(rng, 0, 0.03) : rng_range(rng, 0.15, 0.35);
                for (size_t v = 1; v < s->n_values[a]; v++)
                        s->effect[a][v] = scale * rng_normal(rng);
        }
        /* Pair interactions: 1-4 small ones. */
        size_t n_pairs = 1 + (size_t)rng_below(rng, 4);
        for (size_t i = 0; i < n_pairs; i++) {
                size_t a, b;
                draw_two_axes(rng, s, &a, &b);
                struct sim_term x = {a, (size_t)rng_below(rng, s->n_values[a])};
                struct sim_term y = {b, (size_t)rng_below(rng, s->n_values[b])};
                double sd = rng_range(rng, 0.1, 0.25);
                if ((r = sim_space_add_pair(s, x, y, sd * rng_normal(rng))) < 0)
                        return r;
        }
        /* A strong synergy ("both cutlass"): two values mediocre alone, the best together. */
        if (rng_uniform(rng) < 0.4) {
                size_t a, b;
                draw_two_axes(rng, s, &a, &b);
                struct sim_term x = draw_nondefault(rng, s, a), y = draw_nondefault(rng, s, b);
                s->effect[a][x.value] = -rng_range(rng, 0, 0.08);
                s->effect[b][y.value] = -rng_range(rng, 0, 0.08);
                if ((r = sim_space_add_pair(s, x, y, rng_range(rng, 0.3, 0.5))) < 0)
                        return r;
        }
        /* e. OOM where 2-3 memory-hungry axes meet; hungrier is faster. */
        if (rng_uniform(rng) < 0.5) {
                size_t order[SIM_AXES_MAX], n_mem = 2 + (size_t)rng_below(rng, 2), k = 0;
                for (size_t a = 0; a < na; a++)
                        order[a] = a;
                shuffle(rng, order, na);
                /* ordinal axes first, in the shuffled order (stable partition) */
                size_t picked[SIM_AXES_MAX];
                for (size_t pass = 0; pass < 2; pass++)
                        for (size_t i = 0; i < na && k < n_mem; i++)
                                if (ordinal[order[i]] == (pass == 0))
                                        picked[k++] = order[i];
                for (size_t i = 0; i < k; i++) {
                        size_t a = picked[i], nv = s->n_values[a];
                        double gain = rng_range(rng, 0.1, 0.3);
                        for (size_t v = 1; v < nv; v++) {
                                double c = (double)v / (double)(nv - 1);
                                s->memory[a][v] = c;
                                s->effect[a][v] += gain * c;
                        }
                }
                sim_space_set_memory_limit(s, (double)k * rng_range(rng, 0.45, 0.8));
        }
        /* a. a value that crashes everywhere (often a fast kernel, for another GPU) */
        if (rng_uniform(rng) < 0.5) {
                size_t n = 1 + (size_t)rng_below(rng, 2);
                for (size_t i = 0; i < n; i++) {
                        struct sim_term t = draw_nondefault(rng, s, (size_t)rng_below(rng, na));
                        s->effect[t.axis][t.value] += rng_range(rng, 0, 0.2);
                        if ((r = sim_space_add_rule(s, SIM_FAIL_ARCH, &t, 1)) < 0)
                                return r;
                }
        }
        /* b. pairs that cannot go together, and "a=x requires b=y" */
        if (rng_uniform(rng) < 0.4) {
                size_t n = 1 + (size_t)rng_below(rng, 2);
                for (size_t i = 0; i < n; i++) {
                        size_t a, b;
                        draw_two_axes(rng, s, &a, &b);
                        struct sim_term t[2] = {draw_nondefault(rng, s, a), draw_nondefault(rng, s, b)};
                        if ((r = sim_space_add_rule(s, SIM_FAIL_CONFIG, t, 2)) < 0)
                                return r;
                }
        }
        if (rng_uniform(rng) < 0.3) {
                size_t a, b;
                draw_two_axes(rng, s, &a, &b);
                struct sim_term t[2] = {draw_nondefault(rng, s, a), draw_nondefault(rng, s, b)};
                if ((r = sim_space_add_rule(s, SIM_FAIL_REQUIRES, t, 2)) < 0)
                        return r;
        }
        /* c. garbage whatever else is set */
        if (rng_uniform(rng) < 0.35) {
                struct sim_term t = draw_nondefault(rng, s, (size_t)rng_below(rng, na));
                if ((r = sim_space_add_rule(s, SIM_FAIL_GARBAGE, &t, 1)) < 0)
                        return r;
        }
        /* d. broken only under batching (and tempting: it measures fast alone) */
        if (rng_uniform(rng) < 0.3) {
                struct sim_term t = draw_nondefault(rng, s, (size_t)rng_below(rng, na));
                s->effect[t.axis][t.value] += rng_range(rng, 0, 0.2);
                if ((r = sim_space_add_rule(s, SIM_FAIL_BATCH, &t, 1)) < 0)
                        return r;
        }
        /* f. hangs at start-up */
        if (rng_uniform(rng) < 0.25) {
                struct sim_term t = draw_nondefault(rng, s, (size_t)rng_below(rng, na));
                if ((r = sim_space_add_rule(s, SIM_FAIL_HANG, &t, 1)) < 0)
                        return r;
        }
        /* g. garbage at the defaults: "auto" of one axis, or of 2-3 axes together */
        if (rng_uniform(rng) < 0.5) {
                size_t order[SIM_AXES_MAX], n = 1 + (size_t)rng_below(rng, MIN(na, (size_t)3));
                for (size_t a = 0; a < na; a++)
                        order[a] = a;
                shuffle(rng, order, na);
                struct sim_term t[SIM_TERMS_MAX];
                for (size_t i = 0; i < n; i++)
                        t[i] = (struct sim_term){order[i], 0};
                if ((r = sim_space_add_rule(s, SIM_FAIL_GARBAGE, t, n)) < 0)
                        return r;
        }
        return 0;
}

static const struct sim_params params_default = {
        .min_cells = 50,
        .max_cells = 2000,
        .min_axes = 3,
        .max_axes = 7,
        .min_values = 2,
        .max_values = 8,
        .min_feasible = 0.2,
        .max_feasible = 0.8,
};

#define GENERATE_TRIES 10000
#define SIZE_TRIES 1000

int sim_space_generate(uint64_t seed, const struct sim_params *p, struct sim_space **ret) {
        struct sim_params q = p ? *p : params_default;
        if (!q.min_cells)
                q.min_cells = params_default.min_cells;
        if (!q.max_cells)
                q.max_cells = params_default.max_cells;
        if (!q.min_axes)
                q.min_axes = params_default.min_axes;
        if (!q.max_axes)
                q.max_axes = params_default.max_axes;
        if (!q.min_values)
                q.min_values = params_default.min_values;
        if (!q.max_values)
                q.max_values = params_default.max_values;
        if (q.min_feasible <= 0)
                q.min_feasible = params_default.min_feasible;
        if (q.max_feasible <= 0)
                q.max_feasible = params_default.max_feasible;
        if (q.min_cells > q.max_cells || q.max_cells > SIM_CELLS_MAX || q.min_axes > q.max_axes ||
            q.max_axes > ELEMENTSOF(pool) || q.min_values < 2 || q.min_values > q.max_values ||
            q.max_values > POOL_VALUES || q.min_feasible > q.max_feasible || q.max_feasible > 1)
                return -EINVAL;

        uint64_t rng = seed;
        for (size_t attempt = 0; attempt < GENERATE_TRIES; attempt++) {
                /* the axis count uniform, then sizes until the product is in range (so
                 * that many axes come with few values each, as on/off flags do) */
                size_t n_axes = q.min_axes + (size_t)rng_below(&rng, q.max_axes - q.min_axes + 1);
                size_t n_values[SIM_AXES_MAX], cells = 0;
                for (size_t t = 0; t < SIZE_TRIES && (cells < q.min_cells || cells > q.max_cells); t++) {
                        cells = 1;
                        for (size_t a = 0; a < n_axes; a++) {
                                n_values[a] = q.min_values + (size_t)rng_below(&rng, q.max_values - q.min_values + 1);
                                cells *= n_values[a];
                        }
                }
                if (cells < q.min_cells || cells > q.max_cells)
                        continue;
                size_t order[ELEMENTSOF(pool)];
                for (size_t i = 0; i < ELEMENTSOF(pool); i++)
                        order[i] = i;
                shuffle(&rng, order, ELEMENTSOF(pool));
                struct sim_axis axes[SIM_AXES_MAX];
                bool ordinal[SIM_AXES_MAX];
                for (size_t a = 0; a < n_axes; a++) {
                        const struct pool_axis *pa = &pool[order[a]];
                        axes[a] = (struct sim_axis){pa->name, pa->flag, pa->values};
                        ordinal[a] = pa->ordinal;
                }
                struct sim_space *s = NULL;
                int r = sim_space_new(n_axes, n_values, axes, &s);
                if (r < 0)
                        return r;
                s->id_seed = seed;
                /* from a draw of its own, so that the spaces stay those of each seed */
                s->speech = (enum sim_speech)(sim_seed_mix(seed, 0x5eec) % _SIM_SPEECH_MAX);
                s->oom_sizes = sim_seed_mix(seed, 0xa110c) % 2 == 0;
                s->oom_free = sim_seed_mix(seed, 0xf4ee) % 2 == 0;
                r = draw_truth(&rng, s, ordinal);
                if (r >= 0)
                        r = sim_space_finish(s);
                if (r == -ENOENT || (r >= 0 && (sim_space_feasible_share(s) < q.min_feasible ||
                                                sim_space_feasible_share(s) > q.max_feasible))) {
                        sim_space_free(s);
                        continue;
                }
                if (r < 0) {
                        sim_space_free(s);
                        return r;
                }
                *ret = s;
                return 0;
        }
        return -ERANGE;
}

/* ---- strategies ---- */

struct run {
        const struct sim_space *s;
        const struct sim_run_params *p;
        uint64_t rng;                   /* the launches' noise */
        struct search_obs *obs;         /* per cell */
        size_t launches;
        double seconds;
        long best;
        double best_value;
        size_t *first_n;                /* per cell: the launches, at its first (0: none) */
        double *first_s;                /* per cell: the seconds, its first launch included */
        size_t failed;                  /* launches that failed */
        size_t failed_one;              /* of them, by one value's doing (one_value_rule) */
        size_t failed_oom;              /* of them, out of memory */
        double failed_s;
        double now;                     /* simulated wall time (side by side: an end) */
        double *first_w;                /* per cell: the end of its first launch */
};

static int run_settle(struct run *r, size_t k, double sec);

/* Whether a cell may be launched: never yet; again to measure it again, after it served;
 * once more after a failure (the search's "once more before believing"). */
static bool relaunchable(const struct search_obs *o) {
        return o->state == SEARCH_UNKNOWN || (o->state == SEARCH_FEASIBLE && o->has_value) ||
               (o->state == SEARCH_INFEASIBLE && MAX(o->launches, 1u) < 2);
}

static int run_launch(struct run *r, size_t k) {
        if (k >= r->s->n_cells)
                return -EPROTO;
        if (!relaunchable(&r->obs[k]))
                return -EPROTO;
        double sec = 0;
        int ret = sim_launch(r->s, k, &r->rng, &r->obs[k], &sec);
        if (ret < 0)
                return ret;
        r->now += sec;
        return run_settle(r, k, sec);
}

/* Launch k has ended, taking sec: its outcome (in r->obs[k]) is counted. */
static int run_settle(struct run *r, size_t k, double sec) {
        r->launches++;
        r->seconds += sec;
        if (!r->first_n[k]) {
                r->first_n[k] = r->launches;
                r->first_s[k] = r->seconds;
                r->first_w[k] = r->now;
        }
        if (r->obs[k].state == SEARCH_INFEASIBLE) {
                r->failed++;
                r->failed_s += sec;
                r->failed_one += one_value_rule(r->s, k);
                r->failed_oom += r->s->rule[k] == SIM_RULE_OOM;
        }
        if (r->best == (long)k) {
                /* measured again: the best by figure may be another cell now */
                r->best = -1;
                for (size_t i = 0; i < r->s->n_cells; i++)
                        if (r->obs[i].state == SEARCH_FEASIBLE && r->obs[i].has_value &&
                            (r->best < 0 || r->obs[i].value > r->best_value)) {
                                r->best = (long)i;
                                r->best_value = r->obs[i].value;
                        }
        } else if (r->obs[k].state == SEARCH_FEASIBLE && (r->best < 0 || r->obs[k].value > r->best_value)) {
                r->best = (long)k;
                r->best_value = r->obs[k].value;
        }
        if (r->p && r->p->on_step) {
                struct sim_step st = {
                        .n = r->launches,
                        .cell = k,
                        .obs = &r->obs[k],
                        .seconds = sec,
                        .best = r->best,
                        .best_value = r->best < 0 ? 0 : r->best_value,
                };
                r->p->on_step(r->p->userdata, &st);
        }
        return 0;
}

static int run_search(struct run *r, size_t budget, const char **ret_stop) {
        struct search_space view;
        sim_space_view(r->s, &view);
        struct search_options o = {.max_launches = budget};
        for (;;) {
                struct search_model *m = NULL;
                int ret = search_model_fit(&view, r->obs, &m);
                if (ret < 0)
                        return ret;
                struct search_decision d = {0};
                ret = search_model_decide(m, &o, &d);
                if (ret >= 0 && d.next < 0) {
                        /* The search names the best; it is what its user would be told. */
                        r->best = search_model_named(m);
                        *ret_stop = d.stop;
                }
                search_model_free(m);
                if (ret < 0)
                        return ret;
                if (d.next < 0)
                        return 0;
                if (r->launches >= 4 * r->s->n_cells)
                        return -EPROTO;   /* every cell, each measured up to 3 more times */
                ret = run_launch(r, (size_t)d.next);
                if (ret < 0)
                        return ret;
        }
}

/* One launch in flight: its cell, when it ends, and its outcome, seen when it ends. */
struct flight {
        bool busy;
        size_t cell;
        double end, sec;
        struct search_obs obs;
};

/* The cell for a free slot: GRID the next in order, SEARCH the model's decision with the
 * cells in flight pending. *ret -1: none for now (SEARCH waits for a launch to end), or
 * none ever (*ret_done). */
static int pick_cell(struct run *r, enum sim_strategy st, const struct search_options *o, size_t *grid_next,
                     long *ret, bool *ret_done, const char **ret_stop) {
        *ret = -1;
        if (st == SIM_GRID) {
                if (*grid_next < r->s->n_cells)
                        *ret = (long)(*grid_next)++;
                else
                        *ret_done = true;
                return 0;
        }
        struct search_space view;
        sim_space_view(r->s, &view);
        struct search_model *m = NULL;
        int ret_fit = search_model_fit(&view, r->obs, &m);
        if (ret_fit < 0)
                return ret_fit;
        struct search_decision d = {0};
        int rc = search_model_decide(m, o, &d);
        if (rc >= 0 && d.next < 0 && !d.in_flight) {
                r->best = search_model_named(m);
                *ret_stop = d.stop;
                *ret_done = true;
        }
        search_model_free(m);
        *ret = rc < 0 ? -1 : d.next;
        return rc;
}

/* Starts cell k in flight f: its outcome is drawn now and seen at its end. */
static int start_flight(struct run *r, size_t k, struct flight *f) {
        if (k >= r->s->n_cells || r->obs[k].pending || !relaunchable(&r->obs[k]))
                return -EPROTO;
        *f = (struct flight){.busy = true, .cell = k, .obs = r->obs[k]};
        int ret = sim_launch(r->s, k, &r->rng, &f->obs, &f->sec);
        if (ret < 0)
                return ret;
        f->end = r->now + f->sec;
        r->obs[k].pending = true;
        return 0;
}

/* GRID or SEARCH on slots side by side, event by event: free slots are filled, then the
 * launch that ends first is seen. */
static int run_slots(struct run *r, enum sim_strategy st, size_t slots, size_t budget, const char **ret_stop) {
        struct flight *f = calloc(slots, sizeof(*f));
        if (!f)
                return -ENOMEM;
        struct search_options o = {.max_launches = budget};
        size_t grid_next = 0, started = 0;
        bool done = false;
        int ret = 0;
        for (;;) {
                for (size_t i = 0; i < slots && !done && ret >= 0; i++) {
                        long k = -1;
                        if (f[i].busy)
                                continue;
                        if ((ret = pick_cell(r, st, &o, &grid_next, &k, &done, ret_stop)) < 0 || k < 0)
                                break;
                        if (++started > 4 * r->s->n_cells)
                                ret = -EPROTO; /* every cell, each measured up to 3 more times */
                        else
                                ret = start_flight(r, (size_t)k, &f[i]);
                }
                if (ret < 0)
                        break;
                long e = -1;
                for (size_t i = 0; i < slots; i++)
                        if (f[i].busy && (e < 0 || f[i].end < f[e].end))
                                e = (long)i;
                if (e < 0)
                        break;
                f[e].busy = false;
                r->now = f[e].end;
                r->obs[f[e].cell] = f[e].obs;
                r->obs[f[e].cell].pending = false;
                if ((ret = run_settle(r, f[e].cell, f[e].sec)) < 0)
                        break;
        }
        free(f);
        return ret;
}

int sim_run(const struct sim_space *s, enum sim_strategy st, const struct sim_run_params *p, uint64_t seed,
            struct sim_result *ret) {
        if (!s->finished || st < 0 || st >= _SIM_STRATEGY_MAX)
                return -EINVAL;
        size_t n = s->n_cells, budget = p ? p->budget : 0;
        struct run r = {
                .s = s,
                .p = p,
                .rng = sim_seed_mix(seed, 1),
                .obs = calloc(n, sizeof(struct search_obs)),
                .best = -1,
                .first_n = calloc(n, sizeof(size_t)),
                .first_s = calloc(n, sizeof(double)),
                .first_w = calloc(n, sizeof(double)),
        };
        if (!r.obs || !r.first_n || !r.first_s || !r.first_w) {
                free(r.obs);
                free(r.first_n);
                free(r.first_s);
                free(r.first_w);
                return -ENOMEM;
        }
        size_t slots = p ? p->slots : 0;
        for (size_t k = 0; k < n; k++)
                r.obs[k].state = SEARCH_UNKNOWN;
        const char *stop = NULL;
        int rc = 0;
        bool side = slots > 1 && (st == SIM_GRID || st == SIM_SEARCH);
        switch (side ? _SIM_STRATEGY_MAX : st) {
        case SIM_GRID:
                for (size_t k = 0; k < n && rc >= 0; k++)
                        rc = run_launch(&r, k);
                break;
        case SIM_ONE_AT_A_TIME:
                /* the defaults cell is 0; varying axis a alone to v is cell v * stride[a] */
                rc = run_launch(&r, 0);
                for (size_t a = 0; a < s->n_axes && rc >= 0; a++)
                        for (size_t v = 1; v < s->n_values[a] && rc >= 0; v++)
                                rc = run_launch(&r, v * s->stride[a]);
                break;
        case SIM_RANDOM: {
                size_t *order = malloc(n * sizeof(size_t));
                if (!order) {
                        rc = -ENOMEM;
                        break;
                }
                uint64_t pick = sim_seed_mix(seed, 2);
                size_t m = budget == 0 || budget > n ? n : budget;
                for (size_t k = 0; k < n; k++)
                        order[k] = k;
                for (size_t i = 0; i < m && rc >= 0; i++) {
                        size_t j = i + (size_t)rng_below(&pick, n - i);
                        size_t t = order[i];
                        order[i] = order[j];
                        order[j] = t;
                        rc = run_launch(&r, order[i]);
                }
                free(order);
                break;
        }
        case SIM_SEARCH:
                rc = run_search(&r, budget, &stop);
                break;
        case _SIM_STRATEGY_MAX:
                rc = run_slots(&r, st, slots, budget, &stop);
                break;
        }
        /* named must be a cell this run launched and saw serve */
        bool named_ok = r.best >= 0 && (size_t)r.best < n && r.obs[r.best].state == SEARCH_FEASIBLE;
        size_t near = 0;
        for (size_t k = 0; k < n; k++)
                near += r.obs[k].state == SEARCH_FEASIBLE && s->rule[k] == -1 &&
                        s->log_speed[k] >= s->log_speed[s->best_cell] + log(0.97);
        free(r.obs);
        size_t to_named = r.best >= 0 && (size_t)r.best < n ? r.first_n[r.best] : 0;
        double to_named_s = r.best >= 0 && (size_t)r.best < n ? r.first_s[r.best] : 0;
        double to_named_w = r.best >= 0 && (size_t)r.best < n ? r.first_w[r.best] : 0;
        free(r.first_n);
        free(r.first_s);
        free(r.first_w);
        if (rc < 0)
                return rc;
        struct sim_result res = {
                .launches_to_named = to_named,
                .seconds_to_named = to_named_s,
                .failed = r.failed,
                .failed_seconds = r.failed_s,
                .failed_one = r.failed_one,
                .failed_oom = r.failed_oom,
                .launches = r.launches,
                .named = r.best,
                .best_cell = s->best_cell,
                .best_speed = exp(s->log_speed[s->best_cell]),
                .seconds = r.seconds,
                .stop = stop,
                .near_launched = near,
                .wall = r.now,
                .wall_to_named = to_named_w,
        };
        if (res.named >= 0 && (size_t)res.named < n) {
                res.named_speed = exp(s->log_speed[res.named]);
                res.success = named_ok && s->rule[res.named] == -1 && res.named_speed >= 0.97 * res.best_speed;
        }
        *ret = res;
        return 0;
}
