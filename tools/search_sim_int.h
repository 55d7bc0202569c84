/* search_sim_int.h -- the simulator's space, shared by search_sim.c (drawn and hand-built
 * spaces, the strategies) and search_sim_load.c (spaces read from a file). */
#ifndef GAUNTLET_SEARCH_SIM_INT_H
#define GAUNTLET_SEARCH_SIM_INT_H

#include "search_sim.h"

struct sim_rule {
        enum sim_fail fail;
        size_t n_terms;
        struct sim_term terms[SIM_TERMS_MAX];
        char *evidence;                 /* owned */
        char *kind;                     /* owned; NULL: the verdict of fail (a loaded space's
                                           own, "crash/nccl", where fail is its cost's class) */
};

struct sim_pair {
        struct sim_term x, y;
        double effect;
};

struct sim_space {
        size_t n_axes;
        size_t n_values[SIM_AXES_MAX];
        char *axis_names[SIM_AXES_MAX];
        char *axis_flags[SIM_AXES_MAX];
        char **value_names[SIM_AXES_MAX];
        double *effect[SIM_AXES_MAX];   /* [axis][value], log units */
        double *memory[SIM_AXES_MAX];   /* [axis][value] */
        double memory_limit;            /* 0: none */
        double base, noise, load_s, bench_s, timeout_s;
        struct sim_pair *pairs;
        size_t n_pairs;
        struct sim_rule *rules;
        size_t n_rules;
        uint64_t id_seed;               /* for the cells' ids */
        enum sim_speech speech;         /* how one value's failures word it */
        bool oom_sizes;                 /* its out-of-memory line says the size of the allocation
                                           that failed (sim_space_set_oom_sizes) */
        char *oom_line[SIM_AXES_MAX];   /* with oom_sizes: [axis][value], SIM_OOM_LINE each,
                                           the line of a launch failing at that allocation
                                           (sim_space_finish) */
        bool oom_free;                  /* with oom_sizes: its line says what was free too, as
                                           PyTorch's does (sim_space_set_oom_free) */
        char *oom_cell_line;            /* with oom_free: [cell], SIM_OOM_LINE each, the line of
                                           a cell that runs out (sim_space_finish) */

        /* made by sim_space_finish */
        bool finished;
        size_t n_cells;
        size_t stride[SIM_AXES_MAX];
        size_t *choice;                 /* n_cells * n_axes */
        char *id_buf;                   /* n_cells * 9 */
        const char **ids;
        double *log_speed;              /* true */
        int *rule;                      /* the failing rule's index, SIM_RULE_OOM, or -1 */
        size_t n_feasible, best_cell;

        /* A space read from a file (sim_space_load): its truth cell by cell, set before
         * sim_space_finish, which takes it instead of the effects and the rules' terms. */
        char *name, *note;
        char **axis_words[SIM_AXES_MAX];        /* NULL-terminated, or NULL */
        /* its "engine", one gauntlet has a profile of: the profile's words, aliases and
         * forms of each axis's flag, and of the settings no axis sets, as gauntlet's own
         * search reads them (src/results/search_view.c), in place of axis_words */
        const struct profile *engine;
        const char *const *p_words[SIM_AXES_MAX], *const *p_aliases[SIM_AXES_MAX], *const *p_forms[SIM_AXES_MAX];
        const char **p_other;                   /* owned array, borrowed strings */
        double *t_speed;                        /* per cell: its true figure */
        int *t_rule;                            /* per cell: the rule it fails by, or -1 */
        double *t_noise;                        /* per cell: its noise (0: the space's) */
        double *t_load;                         /* per cell: its load in seconds (0: the space's) */
        double *t_flaky;                        /* per cell: the chance a launch meets a host
                                                   fault (t_flaky_rule's), not the matrix's */
        int *t_flaky_rule;
};

#define SIM_RULE_OOM (-2)

/* What a loaded space frees beyond a drawn one's (search_sim_load.c). */
void sim_space_free_loaded(struct sim_space *s);

#endif
