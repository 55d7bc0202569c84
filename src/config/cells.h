/* cells.h -- a matrix expanded into cells, and the cell id contract.
 *
 * A cell is one configuration to launch: the engine's command template (or the matrix's
 * `command:`), the base args, then each axis's value args; the base env, then each axis's
 * env. Its id names it in the journal across sweeps and must never change for the same
 * argv and env (docs/matrix.md "The cell id"; test_matrix pins ids byte for byte).
 *
 * Ownership: cells_expand hands back an array the caller frees with cells_free; each cell
 * owns its strings. A cell borrows nothing from the matrix, but choice[] and cell_label()
 * only make sense with the matrix it came from. Invariants, for a matrix that
 * cells_load_matrix accepted (it checks count, size and unique ids, expanding to do so): it
 * expands without error, its cells' ids are distinct, and no cell is larger than the
 * MATRIX_MAX_ARGS, MATRIX_MAX_ENV and MATRIX_MAX_CELL_BYTES limits.
 */
#ifndef GAUNTLET_CELLS_H
#define GAUNTLET_CELLS_H

#include <stdbool.h>
#include <stddef.h>

#include "config/matrix.h"

struct cell {
        size_t *choice;       /* value index per axis; never NULL (unused without axes) */
        char id[17];          /* 16 lowercase hex digits: FNV-1a 64 of argv and env (below) */
        char **argv;          /* {model} filled in; {host} and {port} left for launch time */
        char **env;           /* base env then axis env, "KEY=VALUE"; later keys win */
        bool excluded;        /* matched an exclude rule: verdict skipped/excluded */
        int distance;         /* axes whose value is not the engine's default */
};

/* The cells to run, in order: the grid in row-major order of the axes as written (first
 * axis slowest), or for one-at-a-time the baseline first, then each axis varied alone.
 * No axes: one cell. Excluded cells are kept and marked. Caller frees with cells_free.
 * -E2BIG past MATRIX_MAX_CELLS, -ENOMEM.
 *
 * Cell id: FNV-1a 64 (util.h) from FNV_SEED over each argv string followed by a NUL, then
 * the byte 0xff, then each env entry "KEY=VALUE" followed by a NUL, entries sorted by key
 * (bytewise). argv still holds {host} and {port}, so the id does not depend on the port. */
int cells_expand(const struct matrix *m, struct cell **ret, size_t *ret_n);
void cells_free(struct cell *cells, size_t n);
/* How many cells cells_expand would make, before exclusion, without making them; any
 * count above MATRIX_MAX_CELLS comes back as MATRIX_MAX_CELLS + 1. */
size_t cells_count(const struct matrix *m);

/* The index of the cell whose choice is `choice` (one value index per axis), or -1. */
int cells_find(const struct cell *cells, size_t n, size_t n_axes, const size_t *choice);

/* Copies argv with every {host} and {port} filled in, also inside longer arguments
 * ("http://{host}:{port}"); other text, other braces included, is left alone (the rule
 * of placeholder.h). */
int cell_resolve_argv(const struct cell *c, const char *host, int port, char ***ret);
/* "moe=flashinfer_cutlass gemm=auto" style label, axes in order; "(base)" for a matrix
 * without axes. Caller frees; NULL only when out of memory. Names are raw: escape them. */
char *cell_label(const struct matrix *m, const struct cell *c);

/* Loads a matrix: its schema (matrix_parse_string), then the cells it makes: at most
 * MATRIX_MAX_CELLS, none past the MATRIX_MAX_ARGS, MATRIX_MAX_ENV and
 * MATRIX_MAX_CELL_BYTES limits, no two with one id, and the eval's reference a cell that
 * runs. On failure returns a negative errno and, in *ret_error, one line (caller frees):
 * "FILE:LINE: message" for anything wrong in the file (-EINVAL, also for a file over
 * YTREE_MAX_FILE), "cannot read 'FILE': reason" when it cannot be read (the read's errno).
 * *ret_error may stay NULL on -ENOMEM. Nothing else happens on failure. */
int cells_load_matrix(const char *path, struct matrix **ret, char **ret_error);
/* The same from memory; name stands for the file in messages. */
int cells_load_matrix_string(const char *text, size_t len, const char *name, struct matrix **ret,
                             char **ret_error);

#endif
