/* profile.h -- what gauntlet knows about each engine, as data.
 *
 * A profile is a table row, not a code path: the command template, how the engine takes
 * the model, host, port and tensor parallelism, how to tell that it is ready, where it puts
 * reasoning, and the log signatures of its failures. Adding an engine means adding a row.
 */
#ifndef GAUNTLET_PROFILE_H
#define GAUNTLET_PROFILE_H

#include <stdbool.h>
#include <stddef.h>

enum ready_kind {
        READY_HTTP_200,            /* GET health_path answers 200 */
        READY_HTTP_200_STATUS_OK,  /* ... and the JSON body has "status": "ok" (llama.cpp) */
};

/* Tiers order causes by how close they are to the root: when several signatures match a
 * log, the lowest tier wins, and within a tier the earliest line (the inner error comes
 * first; wrapper lines like "Engine core initialization failed" come after it). */
enum signature_tier {
        TIER_ROOT = 0,      /* arch, oom, model, config, port: a reason on its own */
        TIER_DEVICE = 1,    /* cuda, nccl: often a consequence of something else */
        TIER_SYMPTOM = 2,   /* hang: a watchdog noticed something stuck (and then often
                             * aborts through an uncaught exception: the hang is the cause) */
        TIER_ASSERT = 3,    /* assert: how the engine stopped (GGML_ASSERT, assert(), CHECK,
                             * an uncaught C++ exception), not why; any reason above beats it */
};

struct signature {
        const char *regex;  /* POSIX extended, matched against one log line */
        const char *cause;  /* a crash cause from DESIGN.md (or "hang": a timeout) */
        enum signature_tier tier;
        const char *source; /* who prints it, for people */
};

/* The words by which an engine's messages name the axis a flag sets ("K cache" for
 * llama.cpp's --cache-type-k), beside the flag's own words (docs/search.md, "How evidence
 * is read"). */
struct axis_words {
        const char *const *flags;        /* the flag's spellings ("--cache-type-k", "-ctk") */
        const char *const *words;        /* phrases naming it in a log line */
        /* the engine's own names for some of its values in a log line, in pairs: the name,
         * then the value it is ("FlashAttention", "FLASH_ATTN"); NULL: none */
        const char *const *aliases;
};

struct profile {
        const char *name;
        const char *const *command;      /* template argv; {model} {host} {port} are filled in */
        const char *tp_flag;             /* NULL if the engine takes none */
        const char *health_path;         /* readiness probe path; never /ping */
        enum ready_kind ready;
        const char *ready_line;          /* ERE printed once up, or NULL; a hint, the probe decides */
        const char *const *reasoning_fields; /* message/delta fields holding reasoning, in order */
        const char *thinking_key;        /* chat_template_kwargs key switching thinking */
        bool needs_gpu;                  /* it does not run without one: say when there is none */
        bool beside_gauntlet;            /* its program is built with gauntlet: the one next to
                                            the running gauntlet comes before PATH */
        bool takes_seed;
        bool takes_ignore_eos;
        const char *tokenize_path;       /* POST {"content"/"prompt": text} -> "tokens"/"count": the
                                            server's own token count (the bench's prompt
                                            calibration); NULL: it is learnt from usage */
        const char *const *version_command; /* argv printing the engine's version: "{program}" is
                                            the server's program (a sweep's provenance: as the
                                            sweep starts it, in the cell's environment; the host
                                            fingerprint: the profile's command[0] from PATH);
                                            NULL: none */
        const char *const *libraries;    /* Python distributions whose versions a sweep's
                                            provenance reads from their metadata (no import:
                                            cheap); NULL: none */
        const char *const *default_values;  /* axis value names meaning "the engine's default" */
        const struct signature *signatures; /* engine-specific first; ends with {NULL} */
        const struct axis_words *axis_words; /* ends with {NULL}; NULL: none beyond the flags */
        /* The prefix of the environment keys that set its arguments ("LLAMA_ARG_"), or NULL. */
        const char *arg_env_prefix;
        /* It reads a number argument by its leading digits and drops the rest, without a
         * word (llama.cpp's std::stoi and std::stof: "-c 32k" is a context of 32 tokens): a
         * matrix's number with a size suffix is refused at load (docs/matrix.md). */
        bool plain_numbers;
};

/* NULL for an unknown engine name. */
const struct profile *profile_find(const char *name);
/* A version command's argv: tmpl (a profile's version_command, or a matrix's) with
 * "{program}" as program. 1 and *ret (strv_free), 0 and NULL when there is nothing to run
 * (no tmpl, or "{program}" without a program), -ENOMEM. */
int profile_version_argv(const char *const *tmpl, const char *program, char ***ret);
/* All profiles, ending with NULL. */
const struct profile *const *profile_all(void);
/* The signatures every engine shares (ENGINES.md), ending with {NULL}. */
const struct signature *profile_common_signatures(void);
/* EREs of wrapper lines: lines an engine prints after the real error to say that something
 * failed (llama.cpp "failed to create context", vLLM "Engine core initialization failed").
 * Never the evidence when no signature matched; ends with NULL. */
const char *const *profile_wrapper_lines(void);
/* EREs of the lines in a server's log that are not the server's (gauntlet's notes, a
 * launcher's such as Slurm's srun): never evidence. */
const char *const *profile_foreign_lines(void);
/* The phrases by which p's messages name the axis flag sets (NULL-terminated), or NULL
 * when p has none for it (p NULL: none). */
const char *const *profile_axis_words(const struct profile *p, const char *flag);
/* Every spelling of flag the engine takes, flag's among them ("--split-mode", "-sm",
 * "LLAMA_ARG_SPLIT_MODE"), NULL-terminated; NULL when p does not list flag. */
const char *const *profile_axis_forms(const struct profile *p, const char *flag);
/* The engine's names for values of flag's axis, in pairs (name, value), NULL-terminated;
 * NULL when none. */
const char *const *profile_axis_aliases(const struct profile *p, const char *flag);
/* The phrases by which p's messages name the settings it lists that are none of flags[0..n)
 * (their words, not their flags' names: vLLM's "quantization method" when --quantization
 * is no axis),
 * NULL-terminated, in *ret (the caller frees the array, not the strings); *ret NULL when
 * there are none. -ENOMEM. */
int profile_other_words(const struct profile *p, const char *const *flags, size_t n, const char ***ret);
/* Whether an axis value name means the engine's default ("auto", "default", ...). */
bool profile_is_default_value(const struct profile *p, const char *value);

#endif
