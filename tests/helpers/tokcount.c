/* tokcount.c -- gauntlet-tokcount, a test helper: the sweep's tokenizer (src/io/tokenizer.h)
 * on texts, for the tests that compare it with a real engine's /tokenize.
 *
 *   gauntlet-tokcount MODEL              reads a JSON array of strings on stdin, prints the
 *                                        array of their token counts on stdout
 *   gauntlet-tokcount --time N MODEL     counts stdin's bytes N times, prints the microseconds
 *                                        a count took (the best of N) and the count
 * The tokenizer's description goes to stderr. Exit 2 on a usage or load error.
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "base/util.h"
#include "io/tokenizer.h"

int main(int argc, char **argv) {
        int reps = 0;
        if (argc == 4 && strcmp(argv[1], "--time") == 0) {
                reps = atoi(argv[2]);
                argv += 2;
                argc -= 2;
        }
        if (argc != 2 || reps < 0) {
                fprintf(stderr, "usage: gauntlet-tokcount [--time N] MODEL <texts.json\n");
                return 2;
        }
        _cleanup_(tokenizer_freep) struct tokenizer *t = NULL;
        _cleanup_free_ char *err = NULL, *in = NULL;
        size_t in_len = 0;
        int r = tokenizer_open(argv[1], &t, &err);
        if (r < 0) {
                fprintf(stderr, "gauntlet-tokcount: %s\n", err ? err : strerror(-r));
                return 2;
        }
        fprintf(stderr, "%s\n", tokenizer_describe(t));
        if (read_fd_capped(STDIN_FILENO, (size_t)256 << 20, &in, &in_len) < 0) {
                fprintf(stderr, "gauntlet-tokcount: cannot read stdin\n");
                return 2;
        }
        if (reps > 0) {
                usec_t best = USEC_INFINITY;
                int64_t n = 0;
                for (int i = 0; i < reps; i++) {
                        usec_t t0 = now_usec();
                        if (tokenizer_count(t, in, in_len, &n) < 0)
                                return 2;
                        best = MIN(best, now_usec() - t0);
                }
                printf("%llu %lld\n", (unsigned long long)best, (long long)n);
                return 0;
        }
        json_error_t jerr;
        json_t *texts = json_loadb(in, in_len, 0, &jerr);
        if (!json_is_array(texts)) {
                fprintf(stderr, "gauntlet-tokcount: stdin is not a JSON array (%s)\n", jerr.text);
                return 2;
        }
        size_t i;
        json_t *v;
        printf("[");
        json_array_foreach(texts, i, v) {
                int64_t n = -1;
                if (json_is_string(v))
                        tokenizer_count(t, json_string_value(v), json_string_length(v), &n);
                printf("%s%lld", i ? ", " : "", (long long)n);
        }
        printf("]\n");
        json_decref(texts);
        return 0;
}
