/* fuzz_evidence.c -- libFuzzer target: what the search reads in a failure's line
 * (search_names_value, search_signature, search_names_flag; src/search/search_evidence.c) and
 * the size an out-of-memory line says it failed to allocate (search_alloc_size) and what it
 * says was free (search_alloc_free).
 *
 * Input: byte 0 picks the engine profile (its words, names and flag spellings, and the words
 * of the settings it lists that are no axis's); the rest is the line. The space is fixed: the attention backend, the KV cache's dtype (two values
 * shared with the first axis's words), llama.cpp's split mode by its short flag, and an
 * axis of maps read by an env key, with the matrix's spellings of its values.
 * Invariants: no crash; every cell's reading is one of the three answers, and names an axis
 * of the space when it names one; the signature is a string that begins with the kind; a
 * size is -1 or a finite number of bytes above 0; what was free is -1 or finite and 0 or more.
 */
#include <math.h>

#include "base/profile.h"
#include "search/search.h"
#include "search/search_int.h"
#include "fuzz.h"

#define AXES 4

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct fuzz_input in = {data, size};
        const struct profile *p = fuzz_profile(&in);
        size_t n = in.n < 4096 ? in.n : 4096;
        char *line = malloc(n + 1);
        FUZZ_ASSERT(line, "out of memory");
        memcpy(line, in.p, n);
        line[n] = '\0';

        static const char *const flags[AXES] = {"--attention-backend", "--kv-cache-dtype", "-sm", "IMPL"};
        static const char *const names[AXES] = {"attn", "kv", "sm", "impl"};
        static const char *const attn[] = {"fa3", "flashinfer", "FLASH_ATTN", "triton", "auto"};
        static const char *const kv[] = {"auto", "fp8", "fp8_e4m3", "q8_0"};
        static const char *const sm[] = {"layer", "row", "tensor"};
        static const char *const impl[] = {"fast", "new"};
        static const char *const *const values[AXES] = {attn, kv, sm, impl};
        static const size_t n_values[AXES] = {5, 4, 3, 2};
        static const char *const impl_spelled[] = {"impl_fast", "fast", "IMPL_SM100", "new", NULL};
        static const char *const *const spellings[AXES] = {NULL, NULL, NULL, impl_spelled};
        const char *const *words[AXES], *const *aliases[AXES], *const *forms[AXES];
        for (size_t a = 0; a < AXES; a++) {
                words[a] = profile_axis_words(p, flags[a]);
                aliases[a] = profile_axis_aliases(p, flags[a]);
                forms[a] = profile_axis_forms(p, flags[a]);
        }
        enum { CELLS = 5 * 4 * 3 * 2 };
        static size_t choice[CELLS * AXES];
        for (size_t k = 0; k < CELLS; k++)
                for (size_t a = AXES, rest = k; a-- > 0; rest /= n_values[a])
                        choice[k * AXES + a] = rest % n_values[a];
        const char **other = NULL;
        FUZZ_ASSERT(profile_other_words(p, flags, AXES, &other) == 0, "out of memory");
        struct search_space s = {.n_axes = AXES, .n_values = n_values, .axis_names = names, .value_names = values,
                                 .axis_flags = flags, .axis_words = words, .other_words = other,
                                 .axis_aliases = aliases, .axis_spellings = spellings, .axis_forms = forms,
                                 .n_cells = CELLS, .choice = choice};
        for (size_t k = 0; k < CELLS; k++) {
                size_t axis = 99;
                enum search_naming how = search_names_value(&s, k, line, &axis);
                FUZZ_ASSERT(how == SEARCH_NAMES_NONE || how == SEARCH_NAMES_VALUE || how == SEARCH_NAMES_OTHERS,
                            "reading %d", (int)how);
                FUZZ_ASSERT(how == SEARCH_NAMES_NONE || axis < AXES, "axis %zu", axis);
        }
        char *sig = search_signature(&s, "crash/config", line);
        FUZZ_ASSERT(sig && strncmp(sig, "crash/config:", 13) == 0, "signature %s", sig ? sig : "(null)");
        free(sig);
        for (size_t a = 0; a < AXES; a++)
                (void)search_names_flag(line, flags[a]);
        double bytes = search_alloc_size(line);
        FUZZ_ASSERT(bytes == -1 || (isfinite(bytes) && bytes > 0), "allocation size %g", bytes);
        double left = search_alloc_free(line);
        FUZZ_ASSERT(left == -1 || (isfinite(left) && left >= 0), "free memory %g", left);
        free(other);
        free(line);
        return 0;
}
