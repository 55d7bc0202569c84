/* fuzz_dataset.c -- libFuzzer target: the bench's dataset files (dataset.h): ShareGPT JSON,
 * custom JSONL, multi_turn conversations of a ShareGPT file, Mooncake trace JSONL.
 *
 * Input: byte 0 picks the kind (bits 0-1) and whether the rest goes through a file
 * (dataset_load of a temporary file, bit 2; mapped as a user's file is) or from memory
 * (dataset_parse of exactly the input's bytes, so that ASan sees any read past the end);
 * the rest is the file.
 * Invariants: no crash, leak or hang; a failure is -EINVAL with exactly one printable line
 * "NAME:LINE: ..." where NAME is the file's name and LINE a line the file has, and *ret
 * untouched; a success has 1..entries entries, each on a line the file has, with texts
 * that are not empty (prompts, human turns), hold no NUL and stay within
 * DATASET_MAX_TEXT; output_tokens -1 or 1..DATASET_MAX_TOKENS; multi_turn 1..
 * DATASET_MAX_TURNS turns; a trace's timestamps in order and within 0..1e15 ms, its
 * lengths in 1..DATASET_MAX_TOKENS, at most DATASET_MAX_HASH_IDS hash_ids, and its replay
 * offsets (dataset_trace_offset) never going back.
 */
#include <errno.h>
#include <unistd.h>

#include "fuzz.h"
#include "bench/dataset.h"

static const enum dataset_kind kinds[] = {DATASET_SHAREGPT, DATASET_CUSTOM, DATASET_MULTI_TURN, DATASET_TRACE};

static unsigned lines_of(const uint8_t *p, size_t n) {
        unsigned lines = 1;
        for (size_t i = 0; i < n; i++)
                lines += p[i] == '\n';
        return lines;
}

static void check_error(int r, const char *err, const char *name, unsigned lines) {
        FUZZ_ASSERT(r == -EINVAL, "unexpected result %d (%s)", r, err ? err : "");
        FUZZ_ASSERT(err, "failure without a message");
        size_t k = strlen(name);
        FUZZ_ASSERT(strncmp(err, name, k) == 0 && err[k] == ':', "message does not name the file: %s", err);
        const char *q = err + k + 1;
        char *e;
        unsigned long line = strtoul(q, &e, 10);
        FUZZ_ASSERT(*q >= '1' && *q <= '9' && e[0] == ':' && e[1] == ' ', "message has no line number: %s", err);
        FUZZ_ASSERT(line >= 1 && line <= lines, "line %lu of a file of %u lines: %s", line, lines, err);
        FUZZ_ASSERT(fuzz_printable(err), "message not one printable line: %s", err);
}

static void check_text(const char *s, bool nonempty, const char *what) {
        FUZZ_ASSERT(s, "%s missing", what);
        size_t n = strlen(s);
        FUZZ_ASSERT(!nonempty || n > 0, "%s empty", what);
        FUZZ_ASSERT(n <= DATASET_MAX_TEXT, "%s of %zu bytes", what, n);
}

static void check_dataset(const struct dataset *d, enum dataset_kind kind, unsigned lines) {
        FUZZ_ASSERT(d->kind == kind, "kind %d, asked %d", d->kind, kind);
        FUZZ_ASSERT(d->n >= 1 && d->n <= d->entries && d->entries <= DATASET_MAX_ENTRIES,
                    "%zu entries of %zu", d->n, d->entries);
        for (size_t i = 0; i < d->n; i++) {
                const struct dataset_entry *e = &d->v[i];
                FUZZ_ASSERT(e->line >= 1 && e->line <= lines, "entry %zu on line %u of %u", i, e->line, lines);
                if (i > 0)
                        FUZZ_ASSERT(e->line >= d->v[i - 1].line, "entry %zu before the one ahead of it", i);
                switch (kind) {
                case DATASET_SHAREGPT:
                        check_text(e->prompt, true, "prompt");
                        check_text(e->reply, false, "reply");
                        FUZZ_ASSERT(e->output_tokens == -1, "output_tokens %d", e->output_tokens);
                        break;
                case DATASET_CUSTOM:
                        check_text(e->prompt, true, "prompt");
                        FUZZ_ASSERT(!e->reply, "a reply in a custom file");
                        FUZZ_ASSERT(e->output_tokens == -1 ||
                                    (e->output_tokens >= 1 && e->output_tokens <= DATASET_MAX_TOKENS),
                                    "output_tokens %d", e->output_tokens);
                        break;
                case DATASET_MULTI_TURN:
                        FUZZ_ASSERT(!e->prompt && !e->reply, "prompt or reply set in a session");
                        FUZZ_ASSERT(e->n_turns >= 1 && e->n_turns <= DATASET_MAX_TURNS, "%zu turns", e->n_turns);
                        for (size_t k = 0; k < e->n_turns; k++) {
                                check_text(e->turns[k], true, "human turn");
                                check_text(e->replies[k], false, "reply");
                        }
                        break;
                default:
                        FUZZ_ASSERT(e->timestamp_ms >= 0 && e->timestamp_ms <= 1e15, "timestamp %g", e->timestamp_ms);
                        if (i > 0)
                                FUZZ_ASSERT(e->timestamp_ms >= d->v[i - 1].timestamp_ms, "line %u goes back", e->line);
                        FUZZ_ASSERT(e->input_length >= 1 && e->input_length <= DATASET_MAX_TOKENS,
                                    "input_length %d", e->input_length);
                        FUZZ_ASSERT(e->output_tokens >= 1 && e->output_tokens <= DATASET_MAX_TOKENS,
                                    "output_length %d", e->output_tokens);
                        FUZZ_ASSERT(e->n_hash <= DATASET_MAX_HASH_IDS && (e->n_hash == 0) == (e->hash_ids == NULL),
                                    "%zu hash_ids", e->n_hash);
                        break;
                }
        }
        if (kind == DATASET_TRACE) {
                /* two rounds of the replay at its own speed and at 1000x: offsets never go back */
                static const double speeds[] = {1, 1000};
                for (size_t s = 0; s < ELEMENTSOF(speeds); s++) {
                        usec_t last = 0;
                        for (uint64_t i = 0; i < 2 * (uint64_t)d->n && i < 64; i++) {
                                usec_t t = dataset_trace_offset(d, d->n, i, speeds[s]);
                                FUZZ_ASSERT(t >= last, "offset of request %llu goes back (speed %g)",
                                            (unsigned long long)i, speeds[s]);
                                last = t;
                        }
                }
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct fuzz_input in = {data, size};
        uint8_t mode = fuzz_byte(&in);
        enum dataset_kind kind = kinds[mode & 3];
        unsigned lines = lines_of(in.p, in.n);
        struct dataset *d = (struct dataset *)&lines; /* must stay untouched on failure */
        struct dataset *const untouched = d;
        char *err = NULL;
        int r;
        char name[64] = "fuzz.json";
        if (mode & 4) {
                snprintf(name, sizeof(name), "/tmp/fuzz-dataset-%d.jsonl", (int)getpid());
                FILE *f = fopen(name, "w");
                FUZZ_ASSERT(f, "cannot write %s", name);
                FUZZ_ASSERT(fwrite(in.p, 1, in.n, f) == in.n && fclose(f) == 0, "cannot write %s", name);
                r = dataset_load(kind, name, &d, &err);
                unlink(name);
        } else {
                r = dataset_parse(kind, (const char *)in.p, in.n, name, &d, &err);
        }
        if (r < 0) {
                FUZZ_ASSERT(d == untouched, "*ret set on failure");
                check_error(r, err, name, lines);
                free(err);
                return 0;
        }
        FUZZ_ASSERT(r == 0 && !err, "success %d with an error", r);
        check_dataset(d, kind, lines);
        dataset_free(d);
        return 0;
}
