/* cli_against.h -- `gauntlet run --against OLD`: the old run's winner checked again on this
 * machine (docs/compare.md "Checking the winner again").
 *
 * Before the sweep: the old journal's latest sweep read (its axes must be the matrix's, its
 * objective the same), and the cells to run first: the old winner, then its close rivals
 * (compare_rivals). After they settled: whether the winner still passes and is still the
 * best within noise (compare_against_check); then the sweep stops, else it goes on. At the
 * end: what changed, printed and journaled with the new sweep (sweeps.against), which the
 * emitted unit and script then carry in their header.
 */
#ifndef GAUNTLET_CLI_AGAINST_H
#define GAUNTLET_CLI_AGAINST_H

#include <stdbool.h>
#include <stddef.h>

#include "config/matrix.h"
#include "journal/journal.h"
#include "results/compare.h"

struct against {
        const char *path;             /* the old journal, as given */
        struct compare_options opts;
        struct report_view *old;      /* its latest sweep, with the bench samples */
        size_t *first;                /* the cells to run first: indices into cells_expand's */
        size_t n_first;
        bool stopped;                 /* the sweep stopped after them */
};

/* Reads the old journal at path for the matrix m whose sweep goes into the journal at
 * jpath. Returns -1 to go on, or an exit code after one line on stderr: jpath is the old
 * journal itself, it cannot be read, holds no passing cell, or was run with other axes
 * or another objective. */
int against_open(struct against *a, const char *path, const char *jpath, const struct matrix *m);
/* After the first cells settled in the journal j (launched: how many this run launched):
 * true to stop there, with the line that says so on stdout; false goes on, also with a line. */
bool against_first_settled(struct against *a, struct journal *j, size_t launched);
/* Once the sweep ended: what changed, printed and journaled with the sweep. A failure to
 * journal it is told on stderr and is not fatal. */
void against_finish(struct against *a, struct journal *j);
void against_release(struct against *a);

#endif
