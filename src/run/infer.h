/* infer.h -- which cells an architecture crash has already decided.
 *
 * A crash with cause `arch` (a kernel not built for this GPU) that can be pinned on one
 * axis value decides every other cell with that value: each would load its model for
 * minutes to crash the same way. Blame is pinned on value x of axis A when
 *  (1) a cell with A = x crashed with `arch` and a cell that differs from it in axis A
 *      alone ran fine (the server answered: pass, garbage or wrong), or
 *  (2) cells with A = x crashed with `arch` alongside at least two different values of
 *      every other axis.
 * A crash in a cell with two non-default values pins nothing by itself (either could be
 * to blame), and nothing pins a value that some cell holding it ran fine with (its kernels
 * are there: the crashes were another value's doing). docs/matrix.md "Inferred cells" states the rule.
 */
#ifndef GAUNTLET_INFER_H
#define GAUNTLET_INFER_H

#include <stdbool.h>
#include <stddef.h>

#include "base/verdict.h"

/* What is known of one cell. */
struct infer_cell {
        const size_t *choice;   /* value index per axis */
        bool known;             /* settled, by this run or an earlier one */
        bool arch;              /* settled as crash/arch */
        bool fine;              /* settled as pass, garbage or wrong: the server served */
};

#define INFER_MAX_BY 4          /* deciding cells named at most */

/* Whether cell k is decided by the known cells: 1 with the axis in *ret_axis and the
 * indices of up to INFER_MAX_BY deciding cells in ret_by (*ret_n_by of them), 0 when
 * nothing pins any of its values. */
int infer_decided(const struct infer_cell *cells, size_t n, size_t n_axes, size_t k, size_t *ret_axis,
                  size_t ret_by[static INFER_MAX_BY], size_t *ret_n_by);

#endif
