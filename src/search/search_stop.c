/* search_stop.c -- the failures that do not depend on the matrix's values: which class a
 * failed cell's failure is, and whether an axis of the matrix may still change it (the
 * search's stop, docs/search.md "When nothing can pass"). */
#include <string.h>

#include "base/util.h"
#include "search/search_int.h"

/* The failures that do not depend on the matrix's values, by kind (docs/search.md, "When
 * nothing can pass"): what they are about, the words by which an axis would set that (an
 * axis that does makes the failure a value's again), and what to change. */
/* What a server that answered did: loaded its model, bound its port, had its GPUs. */
#define SERVED_PAST "garbage", "wrong", "overload", "timeout/request"
static const struct search_hopeless HOPELESS[] = {
        {"overload/context", "the bench does not fit the server's context",
         (const char *const[]){"ctx", "context", "model-len", "seq-len", "parallel", "np", "slots", "n-ctx", NULL},
         "shorten bench.input_tokens/output_tokens or give the server a longer context", false, false,
         (const char *const[]){NULL}},
        {"crash/model", "the model cannot be loaded",
         (const char *const[]){"model", "tokenizer", "load-format", "revision", "weights", "checkpoint", "download-dir",
                               NULL},
         "fix the model's path or file (model:, args:)", false, true, (const char *const[]){SERVED_PAST, NULL}},
        {"crash/port", "the server's port is taken", (const char *const[]){"port", NULL},
         "free the port, or stop what holds it; where every port tried was refused, check the address the server "
         "binds (host:) and what may hold the ports",
         true, false, (const char *const[]){SERVED_PAST, NULL}},
        {"crash/driver", "no GPU can be had", (const char *const[]){"visible", "device", "devices", NULL},
         "check the host's GPUs and driver (nvidia-smi: whether another job holds them, or their compute mode is "
         "exclusive), CUDA_VISIBLE_DEVICES, and that the driver is as new as the engine's CUDA runtime", false,
         true, (const char *const[]){SERVED_PAST, "crash/oom", "crash/arch", "crash/cuda", "crash/nccl", NULL}},
        {"error", "the server cannot be started", (const char *const[]){NULL},
         "fix command: (or the engine's program: install it, or put it on PATH)", false, true,
         (const char *const[]){SERVED_PAST, "crash", "timeout", NULL}},
};

/* Failures of the host by the words of their lines, and what to change (search_host_hint).
 * Any word of a row is enough; the first row that has one is the hint. */
static const struct {
        const char *const *words;
        const char *change;
} HOST_HINTS[] = {
        {(const char *const[]){"No space left on device", "[Errno 28]", "ENOSPC", NULL},
         "the disk is full: free space where the line's path is (the engines' caches: ~/.cache, /tmp, the "
         "download folder), or point the cache elsewhere in env: (XDG_CACHE_HOME, HF_HOME)"},
        {(const char *const[]){"cannot open shared object file", "Library not loaded", NULL},
         "a library the engine needs cannot be loaded: install it (the CUDA runtime and libraries the engine was "
         "built for) or put its folder in LD_LIBRARY_PATH (env:)"},
        {(const char *const[]){"Read-only file system", "[Errno 30]", NULL},
         "the server may not write where the line says: give it a writable folder (its cache or home in env:)"},
        {(const char *const[]){"Permission denied", "[Errno 13]", NULL},
         "the server's user may not use the path the line names: fix its permissions, or give the server another "
         "folder in env:"},
        /* not a 401 alone: the Hub answers it for a repository that does not exist as well */
        {(const char *const[]){"GatedRepoError", "gated repo", "Invalid user token", NULL},
         "the Hub will not give the model without a login: set HF_TOKEN (env:) to a token of an account that was "
         "granted access to the repository, or point model: at a local copy"},
};

const char *search_host_hint(const char *evidence) {
        for (size_t i = 0; evidence && i < ELEMENTSOF(HOST_HINTS); i++)
                for (const char *const *w = HOST_HINTS[i].words; *w; w++)
                        if (strstr(evidence, *w))
                                return HOST_HINTS[i].change;
        return NULL;
}

const char *search_hopeless_change(const struct search_hopeless *c, const char *evidence) {
        const char *hint = c->host_words ? search_host_hint(evidence) : NULL;
        return hint ? hint : c->change;
}

/* Whether a launched cell failed past what class c is about (HOPELESS[c].past). */
static bool failed_past(const struct search_space *s, const struct search_obs *obs, size_t c) {
        for (size_t j = 0; j < s->n_cells; j++)
                for (const char *const *p = HOPELESS[c].past; obs[j].state == SEARCH_INFEASIBLE && obs[j].kind && *p; p++)
                        if (startswith(obs[j].kind, *p))
                                return true;
        return false;
}

/* Whether axis a, which sets what HOPELESS class c is about, may still change failed cell
 * k's failure: not when another cell failed with the very same line, one that quotes a
 * figure, beside another value of a (llama-server with a unified KV cache gives every
 * request the whole context, whatever -np: "holds 256 tokens" at -np 1 and 8; a line
 * without a figure, "Address already in use", says nothing of which port), nor when every
 * value of a failed that way. */
static bool axis_may_help(const struct search_space *s, const struct search_obs *obs, size_t k, size_t a, size_t c) {
        size_t A = s->n_axes, tried = 0;
        for (size_t x = 0; x < s->n_values[a]; x++) {
                bool failed = false;
                for (size_t j = 0; j < s->n_cells && !failed; j++) {
                        const struct search_obs *o = &obs[j];
                        if (o->state != SEARCH_INFEASIBLE || s->choice[j * A + a] != x || !streq_ptr(o->kind, HOPELESS[c].kind))
                                continue;
                        if (x != s->choice[k * A + a] && streq_ptr(o->evidence, obs[k].evidence) &&
                            strpbrk(o->evidence, "0123456789"))
                                return false;
                        failed = true;
                }
                tried += failed;
        }
        return tried < s->n_values[a];
}

/* The class of HOPELESS failed cell k's failure is, or NULL: its kind is one of them, its line
 * names no value of the cell, and no axis that sets what it is about may still change it
 * (axis_may_help; *ret_axis, when not NULL: the first that may, else -1). gauntlet's own
 * error counts only when the server could not be started ("cannot start '...'"). */
const struct search_hopeless *search_hopeless_class(const struct search_space *s, const struct search_obs *obs, size_t k,
                                                    long *ret_axis) {
        const struct search_obs *o = &obs[k];
        size_t axis;
        if (ret_axis)
                *ret_axis = -1;
        if (o->state != SEARCH_INFEASIBLE || !o->kind)
                return NULL;
        for (size_t c = 0; c < ELEMENTSOF(HOPELESS); c++) {
                if (strcmp(o->kind, HOPELESS[c].kind) != 0)
                        continue;
                if (streq_ptr(HOPELESS[c].kind, "error") && (!o->evidence || !startswith(o->evidence, "cannot start '")))
                        return NULL;
                if (search_names_value(s, k, o->evidence, &axis))
                        return NULL;
                /* another cell got past it ("The NVIDIA driver on your system is too old" for one
                 * MoE backend, where another cell ran out of GPU memory): a value's doing */
                if (failed_past(s, obs, c))
                        return NULL;
                for (size_t a = 0; a < s->n_axes; a++)
                        if (search_axis_about(s, a, HOPELESS[c].axis_words) && axis_may_help(s, obs, k, a, c)) {
                                if (ret_axis)
                                        *ret_axis = (long)a;
                                return NULL;
                        }
                return &HOPELESS[c];
        }
        return NULL;
}

/* Where every failed cell ran out of memory, two values of an axis do not span it: memory
 * runs out where hungry values meet, and a share of memory fails at both ends (too little left
 * for vLLM's KV cache, too much for the activations): a space written apart from the
 * simulator ran out at --gpu-memory-utilization 0.7, 0.8 and 0.9 beside different values of
 * every axis and was stopped as if nothing could pass; its best is at 0.97. */
bool search_failed_ends(const struct search_space *s, const struct search_obs *obs, size_t a) {
        size_t lo, hi;
        if (!search_axis_extremes(s, a, &lo, &hi))
                return true;
        bool held_lo = false, held_hi = false;
        for (size_t k = 0; k < s->n_cells; k++)
                if (obs[k].state == SEARCH_INFEASIBLE) {
                        held_lo |= s->choice[k * s->n_axes + a] == lo;
                        held_hi |= s->choice[k * s->n_axes + a] == hi;
                }
        return held_lo && held_hi;
}

/* Whether two failures' kinds are alike: the same kind, or both a bad answer (garbage or
 * wrong: their kinds say what came out, not why; a broken model answers both). Kinds that
 * differ otherwise are causes that differ: a crash on an assertion, a CUDA error, a loop of
 * garbage and an allocation that failed, in one space, are values' doing, not one cause
 * outside the matrix. */
static bool kinds_alike(const char *a, const char *b) {
        bool bad_a = startswith(a, "garbage") || startswith(a, "wrong");
        bool bad_b = startswith(b, "garbage") || startswith(b, "wrong");
        return streq_ptr(a, b) || (bad_a && bad_b);
}

bool search_every_value_failed(const struct search_space *s, const struct search_obs *obs) {
        size_t A = s->n_axes, axis;
        const char *kind = NULL;
        for (size_t k = 0; k < s->n_cells; k++) {
                if (obs[k].state != SEARCH_INFEASIBLE)
                        continue;
                if (!obs[k].kind || (kind && !kinds_alike(kind, obs[k].kind)) ||
                    (obs[k].evidence && search_names_value(s, k, obs[k].evidence, &axis) != SEARCH_NAMES_NONE))
                        return false;
                kind = obs[k].kind;
        }
        for (size_t a = 0; a < A; a++)
                for (size_t x = 0; x < s->n_values[a]; x++) {
                        long same[16]; /* per axis (MATRIX_MAX_AXES): -1 unset, -2 varies */
                        for (size_t c = 0; c < A; c++)
                                same[c] = -1;
                        bool held = false;
                        for (size_t k = 0; k < s->n_cells; k++) {
                                const size_t *ch = s->choice + k * A;
                                if (obs[k].state != SEARCH_INFEASIBLE || ch[a] != x)
                                        continue;
                                held = true;
                                for (size_t c = 0; c < A; c++)
                                        same[c] = same[c] == -1 ? (long)ch[c] : same[c] == (long)ch[c] ? same[c] : -2;
                        }
                        if (!held)
                                return false;
                        for (size_t c = 0; c < A; c++)
                                if (c != a && same[c] >= 0 && s->n_values[c] > 1)
                                        return false;
                }
        return true;
}
