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
};

/* Opens the tokenizer the matrix names (`tokenizer:`: a file or folder that must load; an
 * error otherwise), or, without one, the first of the model's path and the values of the
 * args' model flags (-m, --model, --model-path, --tokenizer, --tokenizer-path) that holds
 * a tokenizer gauntlet reads; `tokenizer: none` and nothing found leave the rule to bytes
 * per token, with sc->note saying why. -EINVAL with *ret_error (one line) for a `tokenizer:`
 * that does not load; -ENOMEM. */
int sweep_count_open(const struct matrix *m, struct sweep_count *sc, char **ret_error);

/* Without a tokenizer and no bytes per token yet: the rule the journal's earliest passing
 * attempt whose own counts agreed set (or that a later one counted by). 0 whether or not
 * it found one. */
int sweep_count_from_journal(struct journal *j, struct sweep_count *sc);

void sweep_count_release(struct sweep_count *sc);

#endif
