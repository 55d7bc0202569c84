/* dataset.h -- the bench's workload data: which dataset its requests come from (the options
 * of `vllm bench serve` with the same names and meanings), the user's ShareGPT and JSONL
 * files read as data with limits, and the seeded draws of orders, lengths and prefix groups.
 *
 * Pure: nothing here talks to a server. The lengths of a file's texts in the server's own
 * tokens are measured by bench_run (bench.h), which walks dataset_order's order and keeps
 * what dataset_sharegpt_keep accepts. docs/bench.md "Workloads" is the user's side.
 *
 * Ownership: a struct dataset owns every entry and string in it; dataset_free releases it
 * all. struct dataset_options owns path.
 */
#ifndef GAUNTLET_DATASET_H
#define GAUNTLET_DATASET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/util.h"

/* A dataset file may not be larger than this (the whole ShareGPT V3 file is 0.7 GiB). */
#define DATASET_MAX_FILE ((size_t)2 << 30)
/* Entries (conversations or lines) read from one file at most. */
#define DATASET_MAX_ENTRIES 2000000
/* One prompt or reply may not be longer than this many bytes. */
#define DATASET_MAX_TEXT ((size_t)1 << 20)
/* --num-prompts at most. */
#define DATASET_MAX_PROMPTS 1000000
/* --num-prompts when not given (vLLM's default). */
#define DATASET_DEFAULT_PROMPTS 1000
/* Token lengths a dataset option may ask for. */
#define DATASET_MAX_TOKENS 10000000
/* multi_turn: turns per session at most (a file's conversation is cut there). */
#define DATASET_MAX_TURNS 1000
/* trace: hash_ids per line at most. */
#define DATASET_MAX_HASH_IDS 100000
/* One line of a JSONL file (custom, trace) at most, and one conversation of a ShareGPT file:
 * refused when the reading reaches the cap, before anything is built from it (a 1 GB line
 * costs the cap's reading, not the gigabyte and its parse). */
#define DATASET_MAX_LINE ((size_t)8 << 20)
#define DATASET_MAX_ENTRY_BYTES ((size_t)64 << 20)
/* trace: a replay (speed and unit applied) longer than this is refused as implausible: a
 * trace whose times are not in the unit it was read in (docs/bench.md "Workloads"). */
#define DATASET_MAX_TRACE_SPAN ((usec_t)24 * 3600 * USEC_PER_SEC)

enum dataset_kind {
        DATASET_RANDOM,            /* synthetic prompts; lengths drawn from a range */
        DATASET_SHAREGPT,          /* a ShareGPT-format JSON file */
        DATASET_PREFIX_REPETITION, /* groups of synthetic prompts sharing a prefix */
        DATASET_CUSTOM,            /* a JSONL file of {"prompt": ..., "output_tokens": N?} */
        DATASET_MULTI_TURN,        /* sessions of several turns: synthetic, or a ShareGPT file's
                                      human turns */
        DATASET_TRACE,             /* a Mooncake-format JSONL trace, replayed at its times */
        _DATASET_MAX,
};

const char *dataset_kind_name(enum dataset_kind k);
/* -EINVAL for an unknown name. */
int dataset_kind_from_name(const char *s, enum dataset_kind *ret);

/* The dataset half of the workload description (struct bench_spec holds it). The random
 * dataset's input and output lengths are bench_spec's input_tokens and output_tokens
 * (--random-input-len and --random-output-len are their other names). */
struct dataset_options {
        enum dataset_kind kind;
        char *path;                /* sharegpt and custom: the file, owned */
        int num_prompts;           /* prompts drawn; 0: DATASET_DEFAULT_PROMPTS */
        double range_ratio;        /* random: lengths uniform in [len*(1-r), len*(1+r)], 0 <= r < 1 */
        int prefix_len;            /* prefix_repetition: tokens of the shared prefix (256) */
        int suffix_len;            /* ... of each request's own suffix (256) */
        int num_prefixes;          /* ... groups (10) */
        int prefix_output_len;     /* ... output tokens (128) */
        int sharegpt_output_len;   /* > 0: every output this long, and the output filter off */
        int sharegpt_max_output_len; /* > 0: longer replies asked for this many tokens only */
        int sharegpt_min_len;      /* prompts and outputs shorter are skipped (4) */
        int sharegpt_max_prompt_len; /* prompts longer are skipped (1024) */
        int sharegpt_max_total_len;  /* prompt + output longer are skipped (2048) */
        int multi_turn_turns;      /* multi_turn: turns per session; 0: 4 synthetic, or every
                                      human turn of a file's conversation (at most this many) */
        int multi_turn_input_len;  /* ... synthetic: tokens of each user turn (128) */
        int multi_turn_output_len; /* ... max_tokens of each turn; 0: 128 synthetic, or each
                                      reply's length in a file */
        usec_t multi_turn_think_time; /* ... pause between an answer and the next turn (0) */
        double trace_speed;        /* trace: times divided by this (1: its own times) */
        double trace_unit_ms;      /* trace: milliseconds per unit of its timestamps (1: ms,
                                      Mooncake's; 1000: s, 0.001: us, 1e-6: ns) */
        int trace_block_size;      /* trace: tokens per hash_ids block (512, Mooncake's) */
};

/* Whether the dataset reads a file (sharegpt, custom, trace; multi_turn with a path). */
bool dataset_has_file(const struct dataset_options *o);
/* The turns of a synthetic multi_turn session, its input and output tokens per turn. */
int dataset_multi_turn_turns(const struct dataset_options *o);
int dataset_multi_turn_output(const struct dataset_options *o);

/* vLLM's defaults for every option. */
void dataset_options_init(struct dataset_options *o);
void dataset_options_release(struct dataset_options *o);
/* NULL when o is usable, else what is wrong (static text, one line). */
const char *dataset_options_check(const struct dataset_options *o);

/* One entry of a file. */
struct dataset_entry {
        char *prompt;        /* sharegpt: the first human turn; custom: "prompt" */
        char *reply;         /* sharegpt: the turn that answers it; custom: NULL */
        int output_tokens;   /* custom: "output_tokens", or -1 when absent; trace: "output_length" */
        unsigned line;       /* where the entry starts in the file */
        /* multi_turn: the conversation's human turns and the reply after each, n_turns of
         * each (prompt and reply are NULL) */
        char **turns, **replies;
        size_t n_turns;
        /* trace: "timestamp" (ms), "input_length", "hash_ids" (n_hash of them, or NULL) */
        double timestamp_ms;
        int input_length;
        uint64_t *hash_ids;
        size_t n_hash;
};

struct dataset {
        enum dataset_kind kind;
        struct dataset_entry *v;
        size_t n;
        size_t entries;      /* entries in the file, the skipped ones included */
        size_t no_reply;     /* sharegpt, multi_turn: conversations without a human turn and a
                                reply after it */
};

/* Reads a sharegpt, custom, multi_turn (ShareGPT format) or trace file. The file is data:
 * on a malformed or oversized file returns -EINVAL and *ret_error = "FILE:LINE: what is
 * wrong" (one line; caller frees); a file that cannot be read gives its errno and "cannot
 * read 'FILE': ...". A file with no usable entry is an error too, and so is a trace whose
 * timestamps go back. */
int dataset_load(enum dataset_kind kind, const char *path, struct dataset **ret, char **ret_error);
int dataset_parse(enum dataset_kind kind, const char *text, size_t len, const char *name, struct dataset **ret,
                  char **ret_error);
void dataset_free(struct dataset *d);

/* A seeded permutation of 0..n-1 (the same seed, the same order). Caller frees. */
int dataset_order(size_t n, uint64_t seed, size_t **ret);

/* Whether a ShareGPT entry of these lengths (in tokens, output as it will be asked for) is
 * kept: vLLM's is_valid_sequence with o's bounds. */
bool dataset_sharegpt_keep(const struct dataset_options *o, int64_t prompt_len, int64_t output_len);

/* The output length asked for a ShareGPT reply of reply_len tokens: sharegpt_output_len
 * when set, else reply_len capped at sharegpt_max_output_len. */
int64_t dataset_sharegpt_output(const struct dataset_options *o, int64_t reply_len);

/* random: the range of lengths around len, [floor(len*(1-r)), ceil(len*(1+r))], at least
 * min_len at both ends. */
void dataset_len_range(int len, double r, int min_len, int *ret_lo, int *ret_hi);
/* A length drawn uniformly (an integer) from [lo, hi] with the state *rng (base/rng.h). */
int dataset_draw(uint64_t *rng, int lo, int hi);

/* prefix_repetition: the group of each of num_prompts / num_prefixes * num_prefixes
 * requests (the remainder is dropped, as vLLM does), num_prompts / num_prefixes per group,
 * in a seeded shuffled order. -EINVAL when num_prompts < num_prefixes. Caller frees. */
int dataset_prefix_groups(int num_prompts, int num_prefixes, uint64_t seed, int **ret, size_t *ret_n);

/* trace: the offset from the first line of request i of a replay of the first n lines of d
 * at speed, in usec; past line n the trace starts again one mean gap after its end. */
usec_t dataset_trace_offset(const struct dataset *d, size_t n, uint64_t i, double speed);

/* trace_unit's names: "s", "ms", "us", "ns" -> milliseconds per unit; -EINVAL otherwise. */
int dataset_trace_unit_from_name(const char *s, double *ret_ms);
/* A trace's timestamps read in o->trace_unit_ms: converted to milliseconds, in place (once,
 * right after dataset_load). */
void dataset_trace_apply_unit(struct dataset *d, const struct dataset_options *o);
/* Whether a loaded trace (its unit applied) can be replayed at o->trace_speed: 0, or
 * -EINVAL and one line in *ret_why saying why not (caller frees), or -ENOMEM. Refused: a
 * replay longer than DATASET_MAX_TRACE_SPAN (the line names the units that would make it a
 * day or less), or requests farther apart on average than request_timeout (0: no check). */
int dataset_trace_check(const struct dataset *d, const struct dataset_options *o, usec_t request_timeout,
                        char **ret_why);

#endif
