/* fuzz_matrix.c -- libFuzzer target: the matrix loader (cells_load_matrix_string) and, when a
 * matrix loads, its expansion into cells.
 *
 * Invariants: no crash, leak or hang (the alias and size limits hold); a failure is
 * -EINVAL (or -ENOMEM) with exactly one printable line "fuzz.yaml:LINE: ..." and *ret
 * untouched; a success expands into 1..MATRIX_MAX_CELLS cells whose ids are 16 hex digits,
 * whose argv stays within MATRIX_MAX_ARGS, and whose labels can be made.
 */
#include <errno.h>

#include "fuzz.h"
#include "config/cells.h"
#include "config/matrix.h"

static void check_error(int r, const char *err) {
        FUZZ_ASSERT(r == -EINVAL, "unexpected result %d (%s)", r, err ? err : "");
        FUZZ_ASSERT(err, "failure without a message");
        FUZZ_ASSERT(strncmp(err, "fuzz.yaml:", 10) == 0, "message does not name the file: %s", err);
        const char *q = err + 10;
        FUZZ_ASSERT(*q >= '1' && *q <= '9', "message has no line number: %s", err);
        FUZZ_ASSERT(fuzz_printable(err), "message not one printable line: %s", err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct matrix *m = NULL;
        char *err = NULL;
        int r = cells_load_matrix_string((const char *)data, size, "fuzz.yaml", &m, &err);
        if (r < 0) {
                FUZZ_ASSERT(!m, "*ret set on failure");
                check_error(r, err);
                free(err);
                return 0;
        }
        FUZZ_ASSERT(m && !err, "success with an error or without a matrix");
        struct cell *cells = NULL;
        size_t n = 0;
        r = cells_expand(m, &cells, &n);
        FUZZ_ASSERT(r >= 0, "a validated matrix does not expand: %d", r);
        FUZZ_ASSERT(n >= 1 && n <= MATRIX_MAX_CELLS, "%zu cells", n);
        for (size_t i = 0; i < n; i++) {
                FUZZ_ASSERT(strlen(cells[i].id) == 16 && strspn(cells[i].id, "0123456789abcdef") == 16,
                            "bad cell id %s", cells[i].id);
                FUZZ_ASSERT(strv_length(cells[i].argv) >= 1 && strv_length(cells[i].argv) <= MATRIX_MAX_ARGS,
                            "cell with %zu arguments", strv_length(cells[i].argv));
                if (i < 16) {
                        char *label = cell_label(m, &cells[i]);
                        FUZZ_ASSERT(label, "no label");
                        free(label);
                }
        }
        cells_free(cells, n);
        matrix_free(m);
        return 0;
}
