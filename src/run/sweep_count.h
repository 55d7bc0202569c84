/* sweep_count.h -- the sweep's rule for counting tokens (count.h): the model's tokenizer
 * found from the matrix, else the bytes per token the journal's first agreeing cell set. */
#ifndef GAUNTLET_SWEEP_COUNT_H
#define GAUNTLET_SWEEP_COUNT_H

#include "bench/count.h"
#include "config/matrix.h"
#include "journal/journal.h"

/* The sweep's rule, owned: its tokenizer and what it is. */
struct sweep_count {
        struct count_rule rule;
        struct tokenizer *tokenizer;
        char *what;
        char *note;    /* why there is no tokenizer (one line), or NULL */
        usec_t from_started; /* bytes per token: when the attempt it came from started (wall, µs) */
};

/* Opens the tokenizer the matrix names (`tokenizer:`: a file or folder that must load; an
 * error otherwise), or, without one, the first of the model's path and the values of the
 * args' model flags (-m, --model, --model-path, --tokenizer, --tokenizer-path) that holds
 * a tokenizer gauntlet reads; `tokenizer: none` and nothing found leave the rule to bytes
 * per token, with sc->note saying why. -EINVAL with *ret_error (one line) for a `tokenizer:`
 * that does not load; -ENOMEM. */
int sweep_count_open(const struct matrix *m, struct sweep_count *sc, char **ret_error);

/* Without a tokenizer: the rule the journal's earliest passing launch whose own counts
 * agreed set (or that a later one counted by), over every launch of every cell (a cell
 * measured again shows its later launch; its first still came first), when there is no rule yet or that attempt
 * started before the one the rule came from. Side by side, two workers whose first cells
 * pass at once each adopt their own cell's rule (sc->from_started says when that cell
 * started); at their next cell both take the one that started first, its prompts too, so
 * that every cell after is counted and sized alike. A cell measured again later does not
 * move the rule: only an earlier start does. 1 when it replaced a rule this sweep had, 0
 * otherwise (found one or not), -ENOMEM. */
int sweep_count_from_journal(struct journal *j, struct sweep_count *sc);

void sweep_count_release(struct sweep_count *sc);

#endif
