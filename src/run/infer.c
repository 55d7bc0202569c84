/* infer.c -- cells an architecture crash already decided (the rule is in infer.h). */
#include "run/infer.h"

/* Whether a and b differ in axis `axis` and in no other. */
static bool differ_in_alone(const struct infer_cell *a, const struct infer_cell *b, size_t n_axes, size_t axis) {
        for (size_t i = 0; i < n_axes; i++)
                if ((a->choice[i] != b->choice[i]) != (i == axis))
                        return false;
        return true;
}

/* Rule (1): an arch crash with A = x next to a cell that ran fine, A alone apart. */
static bool pinned_by_neighbour(const struct infer_cell *cells, size_t n, size_t n_axes, size_t axis, size_t x,
                                size_t ret_by[static INFER_MAX_BY], size_t *ret_n_by) {
        for (size_t c = 0; c < n; c++) {
                if (!cells[c].arch || cells[c].choice[axis] != x)
                        continue;
                for (size_t d = 0; d < n; d++)
                        if (cells[d].fine && differ_in_alone(&cells[c], &cells[d], n_axes, axis)) {
                                ret_by[0] = c;
                                *ret_n_by = 1;
                                return true;
                        }
        }
        return false;
}

/* Rule (2): arch crashes with A = x alongside two values of every other axis. */
static bool pinned_by_spread(const struct infer_cell *cells, size_t n, size_t n_axes, size_t axis, size_t x,
                             size_t ret_by[static INFER_MAX_BY], size_t *ret_n_by) {
        size_t by = 0;
        bool any = false;
        for (size_t c = 0; c < n; c++)
                if (cells[c].arch && cells[c].choice[axis] == x) {
                        any = true;
                        if (by < INFER_MAX_BY)
                                ret_by[by++] = c;
                }
        if (!any || n_axes < 2)
                return false; /* one axis: no other cell has that value anyway */
        for (size_t b = 0; b < n_axes; b++) {
                if (b == axis)
                        continue;
                size_t first = (size_t)-1;
                bool two = false;
                for (size_t c = 0; c < n && !two; c++) {
                        if (!cells[c].arch || cells[c].choice[axis] != x)
                                continue;
                        if (first == (size_t)-1)
                                first = cells[c].choice[b];
                        else if (cells[c].choice[b] != first)
                                two = true;
                }
                if (!two)
                        return false;
        }
        *ret_n_by = by;
        return true;
}

/* Whether a cell with A = x ran fine: then no kernel of x is missing, whatever crashed. */
static bool served_with(const struct infer_cell *cells, size_t n, size_t axis, size_t x) {
        for (size_t c = 0; c < n; c++)
                if (cells[c].fine && cells[c].choice[axis] == x)
                        return true;
        return false;
}

int infer_decided(const struct infer_cell *cells, size_t n, size_t n_axes, size_t k, size_t *ret_axis,
                  size_t ret_by[static INFER_MAX_BY], size_t *ret_n_by) {
        for (size_t a = 0; a < n_axes; a++) {
                size_t x = cells[k].choice[a];
                if (served_with(cells, n, a, x))
                        continue;
                if (pinned_by_neighbour(cells, n, n_axes, a, x, ret_by, ret_n_by) ||
                    pinned_by_spread(cells, n, n_axes, a, x, ret_by, ret_n_by)) {
                        *ret_axis = a;
                        return 1;
                }
        }
        return 0;
}
