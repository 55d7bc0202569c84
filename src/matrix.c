/* matrix.c -- placeholder until the loader lands. */
#include "matrix.h"

int matrix_load(const char *path, struct matrix **ret, char **ret_error) {
        return -ENOSYS;
}
