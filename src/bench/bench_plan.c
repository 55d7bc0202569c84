/* bench_plan.c -- the bench's workload planner: the requests a run sends, one plan per dataset
 * type, synthetic and trace text, and multi_turn sessions in flight. */
#include "bench/bench_int.h"

#include <math.h>
#include <string.h>

#include "base/utf8.h"

/* ---- multi_turn sessions: the conversation so far, think times ---------------------- */

static void session_free(struct bench *b, struct session *se) {
        json_decref(se->messages);
        se->messages = NULL;
        se->next = b->sess.free;
        b->sess.free = se;
}

/* An answer as the history keeps it: the bytes as streamed, a sequence that is not UTF-8
 * (a server's, or one cut at the cap) as U+FFFD. */
static json_t *answer_string(const struct buf *a) {
        json_t *v = json_stringn(buf_str(a), a->len);
        if (v)
                return v;
        _cleanup_buf_ struct buf clean;
        buf_init(&clean, 0);
        const unsigned char *p = (const unsigned char *)buf_str(a);
        for (size_t i = 0; i < a->len;) {
                size_t k = utf8_decode(p + i, a->len - i, NULL, NULL);
                if (k == 0) {
                        if (buf_puts(&clean, "\xEF\xBF\xBD") < 0)
                                return NULL;
                        i++;
                        continue;
                }
                if (buf_append(&clean, p + i, k) < 0)
                        return NULL;
                i += k;
        }
        return json_stringn(buf_str(&clean), clean.len);
}

/* A turn of q's session has ended. Answered, the session keeps its place in the cap: the
 * turn and the answer as the client received it join its history, and its next turn waits
 * the think time in the queue. A failed turn, or the last one, ends the session (a failed
 * one is counted as the request's failure and the session's: its later turns are not
 * sent). */
void session_turn_done(struct bench *b, struct breq *q) {
        struct session *se = q->sess;
        json_t *user = q->user_msg;
        q->sess = NULL;
        q->user_msg = NULL;
        bool more = q->rec.ok && se->turn < se->ps->turns;
        if (more) {
                json_t *a = answer_string(&q->answer);
                json_t *m = a ? json_pack("{s:s, s:o}", "role", "assistant", "content", a) : NULL;
                if (!m || !user || json_array_append(se->messages, user) < 0 ||
                    json_array_append_new(se->messages, m) < 0) {
                        if (!b->error)
                                b->error = -ENOMEM;
                        more = false;
                }
        }
        json_decref(user);
        if (!more) {
                if (!se->warmup) {
                        if (q->rec.ok)
                                b->sess.completed++;
                        else
                                b->sess.failed++;
                }
                session_free(b, se);
                b->inflight--;
                return;
        }
        se->due = now_usec() + b->spec->dataset.multi_turn_think_time;
        se->next = NULL;
        if (b->sess.think_tail)
                b->sess.think_tail->next = se;
        else
                b->sess.think_head = se;
        b->sess.think_tail = se;
}

/* The first thinking session's next turn (its think time is over). */
int session_next_turn(struct bench *b) {
        struct session *se = b->sess.think_head;
        b->sess.think_head = se->next;
        if (!b->sess.think_head)
                b->sess.think_tail = NULL;
        se->next = NULL;
        int r = start_request_for(b, se->due, se);
        if (r < 0) {
                session_free(b, se);
                b->inflight--;
        }
        return r;
}

/* A new session of the plan, in turn, and its first turn. */
int session_start(struct bench *b, usec_t scheduled) {
        struct session *se = b->sess.free;
        if (se)
                b->sess.free = se->next;
        else {
                struct session **pool = realloc(b->sess.pool, (b->sess.n_pool + 1) * sizeof(*pool));
                if (!pool)
                        return -ENOMEM;
                b->sess.pool = pool;
                if (!(se = calloc(1, sizeof(*se))))
                        return -ENOMEM;
                b->sess.pool[b->sess.n_pool++] = se;
        }
        /* the level's session j (warm-up ones first) is this loop's when j % loops is its
         * shard (level_index) */
        uint64_t j = level_index(b, b->sess.started), warmup = (uint64_t)b->spec->warmup;
        *se = (struct session){.ps = &b->wl.psessions[j % b->wl.n_psessions], .warmup = j < warmup, .id = -1};
        if (!(se->messages = json_array())) {
                session_free(b, se);
                return -ENOMEM;
        }
        if (!se->warmup)
                se->id = (int32_t)MIN(j - warmup, (uint64_t)INT32_MAX);
        b->inflight++;
        int r = start_request_for(b, scheduled, se);
        if (r < 0) {
                b->inflight--;
                session_free(b, se);
                return r;
        }
        b->sess.started++;
        if (!se->warmup)
                b->sess.counted++;
        return 0;
}

/* Frees every session b made (a loop's own; the plan's sessions are loop 0's). */
void sess_pool_free(struct bench *b) {
        for (size_t i = 0; i < b->sess.n_pool; i++) {
                json_decref(b->sess.pool[i]->messages);
                free(b->sess.pool[i]);
        }
        free(b->sess.pool);
        b->sess.pool = NULL;
        b->sess.n_pool = 0;
        b->sess.free = NULL;
}

/* Ends the level's sessions when it stops early: those thinking, and the one of a request
 * in flight (q, cancelled), are cut. */
void session_cut(struct bench *b, struct session *se) {
        if (!se->warmup)
                b->sess.cut++;
        session_free(b, se);
}

/* The level's "sessions" (new reference). */
json_t *sessions_json(const struct bench *b) {
        return json_pack("{s:I, s:I, s:I, s:I, s:I}", "started", (json_int_t)b->sess.counted, "completed",
                         (json_int_t)b->sess.completed, "ended_by_failure", (json_int_t)b->sess.failed, "cut",
                         (json_int_t)b->sess.cut, "turns", (json_int_t)b->sess.turns);
}

/* What a level starts from: no session, the trace from its first line. */
void workload_level_start(struct bench *b) {
        while (b->sess.think_head) {
                struct session *se = b->sess.think_head;
                b->sess.think_head = se->next;
                session_free(b, se);
        }
        b->sess.think_tail = NULL;
        b->sess.started = b->sess.counted = b->sess.completed = b->sess.failed = b->sess.cut = b->sess.turns = 0;
        b->sess.trace_next = 0;
}

/* Characters of synthetic text for `tokens` tokens: the straight line through the two
 * calibrated points (these words grow by nearly the same tokens per character). */
static size_t chars_for(const struct bench *b, int tokens) {
        double c = b->wl.size_t1 > b->wl.size_t0
                           ? (double)b->wl.size_c0 + (double)(tokens - b->wl.size_t0) * ((double)b->wl.size_c1 - (double)b->wl.size_c0) /
                                                          (double)(b->wl.size_t1 - b->wl.size_t0)
                           : (double)b->wl.size_c0 * (double)tokens / (double)MAX(b->wl.size_t0, 1);
        return MAX((size_t)llround(MAX(c, 0)), (size_t)BENCH_PROMPT_PREFIX);
}

/* Synthetic text of `tokens` tokens for prompt index `index`: sized when calibrated, else
 * that many words. The same index, the same text, and a shorter one its beginning. */
static int synth_text(const struct bench *b, uint64_t index, int tokens, struct buf *out) {
        if (!b->wl.sized)
                return bench_prompt(b->spec->seed, index, tokens, out);
        return bench_prompt_chars(b->spec->seed, index, chars_for(b, tokens), out);
}

/* trace: a line's prompt: the text of each of its hash_ids blocks (trace_block_size tokens,
 * the last one cut at input_length; the same hash id, the same text at this level, so a
 * prefix cache sees what the trace shares), then text of its own for what they do not
 * cover. */
int trace_text(const struct bench *b, const struct dataset_entry *d, uint64_t pi, struct buf *out) {
        int bs = b->spec->dataset.trace_block_size;
        int64_t left = d->input_length;
        int r = 0;
        for (size_t k = 0; k < d->n_hash && left > 0 && r >= 0; k++) {
                int n = (int)MIN(left, (int64_t)bs);
                uint64_t gi = BENCH_BLOCK_INDEX + (b->wl.level_seq * UINT64_C(1000003) + d->hash_ids[k]) % BENCH_BLOCK_SPAN;
                if (k > 0)
                        r = buf_puts(out, " ");
                if (r >= 0)
                        r = synth_text(b, gi, n, out);
                left -= n;
        }
        if (r >= 0 && left > 0) {
                if (out->len)
                        r = buf_puts(out, " ");
                if (r >= 0)
                        r = synth_text(b, pi, (int)left, out);
        }
        return r;
}

/* ---- the workload: the requests a run sends, from its dataset ------------------------- */

static int plan_alloc(struct bench *b, size_t n) {
        if (!(b->wl.plan = calloc(n ? n : 1, sizeof(*b->wl.plan))))
                return -ENOMEM;
        b->wl.n_plan = n;
        for (size_t i = 0; i < n; i++)
                b->wl.plan[i] = (struct plan_entry){.group = -1, .prompt_tokens = -1};
        return 0;
}

static int num_prompts(const struct bench_spec *spec) {
        return spec->dataset.num_prompts > 0 ? spec->dataset.num_prompts : DATASET_DEFAULT_PROMPTS;
}

/* random: one length, as always, or with a range ratio num_prompts lengths drawn from the
 * ranges, their prompts sized at both ends of the input range and the rest in between by
 * a straight line (a prompt of these words grows by nearly the same tokens per character). */
static int plan_random(struct bench *b, struct calib *c) {
        const struct bench_spec *spec = b->spec;
        int in = spec->input_tokens, r;
        double ratio = spec->dataset.range_ratio;
        bool sized = spec->calibrate && in > 0;
        if (ratio == 0) {
                if ((r = plan_alloc(b, 1)) < 0)
                        return r;
                b->wl.plan[0].tokens = in > 0 ? in : 16;
                b->wl.plan[0].output = spec->output_tokens;
                if (!sized)
                        return 0;
                int64_t want = in, got;
                if ((r = calibrate(b, c, &want, 1, &b->wl.plan[0].chars, &got)) < 0)
                        return r;
                return check_context(b, c, got, spec->output_tokens);
        }
        int ilo, ihi, olo, ohi;
        dataset_len_range(in > 0 ? in : 16, ratio, 1, &ilo, &ihi);
        dataset_len_range(spec->output_tokens, ratio, 1, &olo, &ohi);
        if ((r = plan_alloc(b, (size_t)num_prompts(spec))) < 0)
                return r;
        uint64_t rng = spec->seed ^ UINT64_C(0x72616e646f6d);
        for (size_t i = 0; i < b->wl.n_plan; i++) {
                b->wl.plan[i].tokens = dataset_draw(&rng, ilo, ihi);
                b->wl.plan[i].output = dataset_draw(&rng, olo, ohi);
        }
        if (!sized)
                return 0;
        int64_t want[2] = {ilo, ihi}, got[2];
        size_t chars[2];
        if ((r = calibrate(b, c, want, ihi > ilo ? 2 : 1, chars, got)) < 0)
                return r;
        if (ihi == ilo) {
                chars[1] = chars[0];
                got[1] = got[0];
        }
        for (size_t i = 0; i < b->wl.n_plan; i++) {
                struct plan_entry *e = &b->wl.plan[i];
                double f = ihi > ilo ? (double)(e->tokens - ilo) / (double)(ihi - ilo) : 0;
                e->chars = (size_t)llround((double)chars[0] + f * ((double)chars[1] - (double)chars[0]));
                e->chars = MAX(e->chars, (size_t)BENCH_PROMPT_PREFIX);
        }
        return check_context(b, c, got[1], ohi);
}

/* prefix_repetition: num_prefixes groups of num_prompts / num_prefixes requests, shuffled;
 * every prompt is the group's prefix of prefix_len tokens then its own suffix_len. */
static int plan_prefix(struct bench *b, struct calib *c) {
        const struct bench_spec *spec = b->spec;
        const struct dataset_options *o = &spec->dataset;
        _cleanup_free_ int *groups = NULL;
        size_t n;
        int r = dataset_prefix_groups(num_prompts(spec), o->num_prefixes, spec->seed, &groups, &n);
        if (r < 0)
                return r;
        if ((r = plan_alloc(b, n)) < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                b->wl.plan[i].group = groups[i];
                b->wl.plan[i].tokens = o->suffix_len;
                b->wl.plan[i].output = o->prefix_output_len;
        }
        b->wl.prefix_tokens = o->prefix_len;
        if (!spec->calibrate)
                return 0;
        int64_t want[2];
        size_t k = 0, chars[2] = {0, 0};
        int64_t got[2] = {0, 0};
        if (o->prefix_len > 0)
                want[k++] = o->prefix_len;
        if (o->suffix_len > 0)
                want[k++] = o->suffix_len;
        if ((r = calibrate(b, c, want, k, chars, got)) < 0)
                return r;
        if (o->prefix_len > 0)
                b->wl.prefix_chars = chars[0];
        for (size_t i = 0; i < n && o->suffix_len > 0; i++)
                b->wl.plan[i].chars = chars[k - 1];
        return check_context(b, c, got[0] + (k > 1 ? got[1] : 0), o->prefix_output_len);
}

/* A text's length without the server: about four bytes a token (--no-calibrate). */
static int64_t estimate_tokens(const char *s) {
        return (int64_t)((strlen(s) + 3) / 4);
}

/* A dataset text's length in the server's tokens. 1: the server refused it (longer than
 * its context), 0: measured. */
static int size_text(struct bench *b, struct calib *c, const char *text, int64_t *ret) {
        if (!b->spec->calibrate) {
                *ret = estimate_tokens(text);
                return 0;
        }
        int r = calib_count(c, text, ret);
        if (r == -EBADMSG && c->template >= 0)
                return 1;
        if (r == -EBADMSG || r == -ENODATA)
                return refuse(b, "cannot size the prompts: the server answered no token count (%s)",
                              strcmp(c->method, "tokenize") == 0 ? "tokenize endpoint" : "usage.prompt_tokens");
        return r;
}

/* sharegpt: the conversations in a seeded order, each measured in the server's tokens
 * (prompt and reply), kept when the filters and the server's context allow, until
 * num_prompts are kept (vLLM's sampling). */
static int plan_sharegpt(struct bench *b, struct calib *c, json_t *work) {
        const struct bench_spec *spec = b->spec;
        const struct dataset_options *o = &spec->dataset;
        const struct dataset *d = spec->data;
        size_t want = (size_t)num_prompts(spec);
        _cleanup_free_ size_t *order = NULL;
        int r = dataset_order(d->n, spec->seed, &order);
        if (r < 0)
                return r;
        if ((r = plan_alloc(b, MIN(want, d->n))) < 0)
                return r;
        int64_t tmpl = 0;
        if (spec->calibrate && (r = calib_template(c, &tmpl)) < 0)
                return r;
        size_t n = 0, filtered = 0, too_long = 0, looked = 0;
        for (size_t k = 0; k < d->n && n < want; k++) {
                const struct dataset_entry *e = &d->v[order[k]];
                int64_t pl, rl;
                looked++;
                if ((r = size_text(b, c, e->prompt, &pl)) < 0)
                        return r;
                int r2 = r == 0 ? size_text(b, c, e->reply, &rl) : 1;
                if (r2 < 0)
                        return r2;
                if (r > 0 || r2 > 0) {
                        too_long++;
                        continue;
                }
                int64_t out = dataset_sharegpt_output(o, rl);
                if (!dataset_sharegpt_keep(o, pl, out)) {
                        filtered++;
                        continue;
                }
                if (c->context > 0 && pl + tmpl + out > c->context) {
                        too_long++;
                        continue;
                }
                b->wl.plan[n++] = (struct plan_entry){.text = e->prompt, .group = -1, .output = (int)MIN(out, INT32_MAX),
                                                   .prompt_tokens = pl};
        }
        b->wl.n_plan = n;
        json_t *skipped = json_pack("{s:I, s:I, s:I}", "no_reply", (json_int_t)d->no_reply, "filtered",
                                    (json_int_t)filtered, "context", (json_int_t)too_long);
        if (!skipped || json_object_set_new(work, "skipped", skipped) < 0 ||
            json_object_set_new(work, "looked_at", json_integer((json_int_t)looked)) < 0)
                return -ENOMEM;
        if (n == 0)
                return refuse(b, "no conversation of '%s' is left to send: %zu looked at, %zu outside the length "
                              "filters, %zu too long for the server", o->path ? o->path : "the dataset", looked,
                              filtered, too_long);
        return spec->calibrate ? calib_describe(b, c) : 0;
}

/* custom: the file's prompts in a seeded order, num_prompts of them, each with its
 * output_tokens or spec's; sent as they are, not measured. */
static int plan_custom(struct bench *b) {
        const struct bench_spec *spec = b->spec;
        const struct dataset *d = spec->data;
        _cleanup_free_ size_t *order = NULL;
        int r = dataset_order(d->n, spec->seed, &order);
        if (r < 0 || (r = plan_alloc(b, MIN((size_t)num_prompts(spec), d->n))) < 0)
                return r;
        for (size_t i = 0; i < b->wl.n_plan; i++) {
                const struct dataset_entry *e = &d->v[order[i]];
                b->wl.plan[i].text = e->prompt;
                b->wl.plan[i].output = e->output_tokens > 0 ? e->output_tokens : spec->output_tokens;
        }
        return 0;
}

/* Sizes synthetic text at one or two lengths (tokens): synth_text's straight line. */
static int size_points(struct bench *b, struct calib *c, int64_t t0, int64_t t1, int64_t *ret_got) {
        int64_t want[2] = {t0, t1}, got[2] = {0, 0};
        size_t chars[2] = {0, 0};
        size_t n = t1 > t0 ? 2 : 1;
        int r = calibrate(b, c, want, n, chars, got);
        if (r < 0)
                return r;
        b->wl.sized = true;
        b->wl.size_t0 = t0;
        b->wl.size_c0 = chars[0];
        b->wl.size_t1 = n == 2 ? t1 : t0;
        b->wl.size_c1 = n == 2 ? chars[1] : chars[0];
        if (ret_got)
                *ret_got = got[n - 1];
        return 0;
}

/* multi_turn: sessions of turns. Synthetic: num_prompts sessions of multi_turn_turns user
 * turns of multi_turn_input_len tokens each, all sharing one plan of turns (the text of each
 * is made when sent, so no two are alike). A file: num_prompts of its conversations in a
 * seeded order, their human turns as written, each asking for its reply's length in the
 * server's tokens (or multi_turn_output_len). */
static int plan_multi_turn(struct bench *b, struct calib *c, json_t *work) {
        const struct bench_spec *spec = b->spec;
        const struct dataset_options *o = &spec->dataset;
        const struct dataset *d = spec->data;
        int r;
        if (!d) {
                int turns = dataset_multi_turn_turns(o), out = dataset_multi_turn_output(o);
                size_t n = (size_t)num_prompts(spec);
                if ((r = plan_alloc(b, (size_t)turns)) < 0)
                        return r;
                if (!(b->wl.psessions = calloc(n, sizeof(*b->wl.psessions))))
                        return -ENOMEM;
                b->wl.n_psessions = n;
                for (size_t i = 0; i < n; i++)
                        b->wl.psessions[i] = (struct plan_session){.first = 0, .turns = turns};
                for (int i = 0; i < turns; i++) {
                        b->wl.plan[i].tokens = o->multi_turn_input_len;
                        b->wl.plan[i].output = out;
                }
                if (!spec->calibrate)
                        return 0;
                int64_t got;
                if ((r = size_points(b, c, o->multi_turn_input_len, o->multi_turn_input_len, &got)) < 0)
                        return r;
                for (int i = 0; i < turns; i++)
                        b->wl.plan[i].chars = chars_for(b, o->multi_turn_input_len);
                /* the last turn carries the whole conversation */
                return check_context(b, c, (int64_t)turns * got + (int64_t)(turns - 1) * out, out);
        }
        _cleanup_free_ size_t *order = NULL;
        if ((r = dataset_order(d->n, spec->seed, &order)) < 0)
                return r;
        size_t n = MIN((size_t)num_prompts(spec), d->n), total = 0;
        size_t cap = o->multi_turn_turns > 0 ? (size_t)o->multi_turn_turns : SIZE_MAX;
        for (size_t k = 0; k < n; k++)
                total += MIN(d->v[order[k]].n_turns, cap);
        if ((r = plan_alloc(b, total)) < 0)
                return r;
        if (!(b->wl.psessions = calloc(n, sizeof(*b->wl.psessions))))
                return -ENOMEM;
        b->wl.n_psessions = n;
        b->wl.plan_texts = true;
        size_t at = 0, too_long = 0;
        for (size_t k = 0; k < n; k++) {
                const struct dataset_entry *e = &d->v[order[k]];
                size_t turns = MIN(e->n_turns, cap);
                b->wl.psessions[k] = (struct plan_session){.first = at, .turns = (int)turns};
                for (size_t t = 0; t < turns; t++) {
                        int64_t out = o->multi_turn_output_len;
                        if (out <= 0) {
                                if ((r = size_text(b, c, e->replies[t], &out)) < 0)
                                        return r;
                                if (r > 0) { /* a reply longer than the server takes */
                                        too_long++;
                                        out = estimate_tokens(e->replies[t]);
                                }
                        }
                        b->wl.plan[at++] = (struct plan_entry){.text = e->turns[t], .group = -1,
                                                            .output = (int)MIN(MAX(out, 1), DATASET_MAX_TOKENS),
                                                            .prompt_tokens = -1};
                }
        }
        if (json_object_set_new(work, "skipped", json_pack("{s:I}", "no_reply", (json_int_t)d->no_reply)) < 0)
                return -ENOMEM;
        if (too_long && json_object_set_new(work, "replies_too_long", json_integer((json_int_t)too_long)) < 0)
                return -ENOMEM;
        return spec->calibrate ? calib_describe(b, c) : 0;
}

/* trace: the first num_prompts lines (all by default) in order, line i sent at its
 * timestamp / trace_speed after the level's start; each prompt made of its hash_ids blocks
 * (trace_text), sized in the server's tokens at the block size and at the shortest piece. */
static int plan_trace(struct bench *b, struct calib *c, json_t *work) {
        const struct bench_spec *spec = b->spec;
        const struct dataset_options *o = &spec->dataset;
        const struct dataset *d = spec->data;
        size_t n = o->num_prompts > 0 ? MIN((size_t)o->num_prompts, d->n) : d->n;
        int r = plan_alloc(b, n);
        if (r < 0)
                return r;
        b->wl.trace = true;
        b->wl.trace_lines = n;
        b->wl.plan_texts = false; /* its prompts are made, not the file's */
        int bs = o->trace_block_size;
        int64_t shortest = bs;
        size_t blocks = 0;
        for (size_t i = 0; i < n; i++) {
                const struct dataset_entry *e = &d->v[i];
                b->wl.plan[i] = (struct plan_entry){.tokens = e->input_length, .group = -1, .output = e->output_tokens,
                                                 .prompt_tokens = -1, .trace = e};
                /* the pieces trace_text makes: whole blocks, a cut one, the rest */
                int64_t covered = MIN((int64_t)e->n_hash * bs, (int64_t)e->input_length);
                int64_t last = e->n_hash ? covered - (int64_t)(MIN(e->n_hash, (size_t)((covered + bs - 1) / bs)) - 1) * bs
                                         : 0;
                if (last > 0)
                        shortest = MIN(shortest, last);
                if (e->input_length > covered)
                        shortest = MIN(shortest, (int64_t)e->input_length - covered);
                blocks += e->n_hash;
        }
        double span = d->v[n - 1].timestamp_ms - d->v[0].timestamp_ms;
        if (json_object_set_new(work, "trace",
                                json_pack("{s:I, s:f, s:i, s:f, s:I}", "lines", (json_int_t)n, "speed", o->trace_speed,
                                          "block_size", bs, "span_s", span / 1e3 / o->trace_speed, "hash_ids",
                                          (json_int_t)blocks)) < 0)
                return -ENOMEM;
        if (!spec->calibrate)
                return 0;
        if ((r = size_points(b, c, MAX(shortest, 1), bs, NULL)) < 0)
                return r;
        /* a line longer than the server's context fails as the server says; the plan says how
         * many there are */
        int64_t tmpl = c->template > 0 ? c->template : 0;
        size_t over = 0;
        for (size_t i = 0; i < n && c->context > 0; i++)
                over += (int64_t)d->v[i].input_length + tmpl + d->v[i].output_tokens > c->context;
        if (over && json_object_set_new(json_object_get(work, "trace"), "over_context", json_integer((json_int_t)over)) < 0)
                return -ENOMEM;
        return 0;
}

/* "workload": the dataset, how many prompts it gave, their lengths as planned, and the
 * arrivals. */
static int plan_describe(struct bench *b, json_t *work) {
        const struct bench_spec *spec = b->spec;
        int64_t imin = INT64_MAX, imax = 0, omin = INT64_MAX, omax = 0;
        double isum = 0, osum = 0;
        size_t ni = 0;
        for (size_t i = 0; i < b->wl.n_plan; i++) {
                const struct plan_entry *e = &b->wl.plan[i];
                int64_t in = e->text ? e->prompt_tokens : (int64_t)e->tokens + (e->group >= 0 ? b->wl.prefix_tokens : 0);
                if (in >= 0) {
                        imin = MIN(imin, in);
                        imax = MAX(imax, in);
                        isum += (double)in;
                        ni++;
                }
                omin = MIN(omin, (int64_t)e->output);
                omax = MAX(omax, (int64_t)e->output);
                osum += e->output;
        }
        const char *arrivals = b->wl.trace ? "trace" : spec->rate <= 0 ? "closed_loop" : !spec->poisson ? "constant"
                               : spec->burstiness > 0 && spec->burstiness != 1 ? "gamma" : "poisson";
        int r = 0;
        size_t prompts = b->wl.psessions ? 0 : b->wl.n_plan; /* multi_turn: every turn of every session */
        for (size_t i = 0; b->wl.psessions && i < b->wl.n_psessions; i++)
                prompts += (size_t)b->wl.psessions[i].turns;
        if (json_object_set_new(work, "prompts", json_integer((json_int_t)prompts)) < 0 ||
            json_object_set_new(work, "arrivals", json_string(arrivals)) < 0 ||
            json_object_set_new(work, "seed", json_integer((json_int_t)spec->seed)) < 0 ||
            json_object_set_new(work, "output_tokens",
                                json_pack("{s:I, s:I, s:f}", "min", (json_int_t)omin, "max", (json_int_t)omax,
                                          "mean", osum / (double)MAX(b->wl.n_plan, 1))) < 0)
                r = -ENOMEM;
        if (r == 0 && b->wl.psessions) {
                int tmin = INT32_MAX, tmax = 0;
                double tsum = 0;
                for (size_t i = 0; i < b->wl.n_psessions; i++) {
                        tmin = MIN(tmin, b->wl.psessions[i].turns);
                        tmax = MAX(tmax, b->wl.psessions[i].turns);
                        tsum += b->wl.psessions[i].turns;
                }
                json_t *mt = json_pack("{s:I, s:{s:i, s:i, s:f}, s:f}", "sessions", (json_int_t)b->wl.n_psessions, "turns",
                                       "min", tmin, "max", tmax, "mean", tsum / (double)MAX(b->wl.n_psessions, 1),
                                       "think_time_ms", ms(spec->dataset.multi_turn_think_time));
                if (!mt || json_object_set_new(work, "multi_turn", mt) < 0)
                        r = -ENOMEM;
        }
        if (r == 0 && !strcmp(arrivals, "gamma") &&
            json_object_set_new(work, "burstiness", json_real(spec->burstiness)) < 0)
                r = -ENOMEM;
        if (r == 0 && ni > 0 &&
            json_object_set_new(work, "input_tokens",
                                json_pack("{s:I, s:I, s:f, s:s}", "min", (json_int_t)imin, "max", (json_int_t)imax,
                                          "mean", isum / (double)ni, "as",
                                          b->wl.plan_texts ? (spec->calibrate ? "measured" : "estimated")
                                          : spec->calibrate && (spec->input_tokens + b->wl.prefix_tokens > 0 || b->wl.sized) ? "asked, sized"
                                                                                                          : "asked, words")) < 0)
                r = -ENOMEM;
        return r;
}

/* The run's requests (b->wl.plan) from the prompt file or spec's dataset, sized against the
 * server where lengths matter (docs/bench.md "Workloads"), and "workload" for the levels. */
int plan_build(struct bench *b) {
        const struct bench_spec *spec = b->spec;
        const struct bench_target *t = b->t;
        struct calib c = {.b = b,
                          .method = t->count && t->count->tokenizer              ? "tokenizer"
                                    : t->profile && t->profile->tokenize_path ? "tokenize"
                                                                              : "usage",
                          .template = -1};
        enum dataset_kind kind = spec->dataset.kind;
        json_t *work = b->wl.workload = json_object();
        if (!work)
                return -ENOMEM;
        int r;
        if (t->prompts) {
                size_t n = 0;
                while (t->prompts[n])
                        n++;
                if ((r = plan_alloc(b, n)) < 0)
                        return r;
                for (size_t i = 0; i < n; i++) {
                        b->wl.plan[i].text = t->prompts[i];
                        b->wl.plan[i].output = spec->output_tokens;
                }
                b->wl.plan_texts = true;
                if (json_object_set_new(work, "dataset", json_string("prompt_file")) < 0)
                        return -ENOMEM;
                return plan_describe(b, work);
        }
        if (json_object_set_new(work, "dataset", json_string(dataset_kind_name(kind))) < 0)
                return -ENOMEM;
        bool file = dataset_has_file(&spec->dataset);
        if (file) {
                if (!spec->data || spec->data->kind != kind)
                        return -EINVAL;
                b->wl.plan_texts = true;
                if ((spec->dataset.path && json_object_set_new(work, "path", json_string(spec->dataset.path)) < 0) ||
                    json_object_set_new(work, "entries", json_integer((json_int_t)spec->data->entries)) < 0)
                        return -ENOMEM;
        }
        bool sized = spec->calibrate && kind != DATASET_CUSTOM && (kind != DATASET_RANDOM || spec->input_tokens > 0);
        if (sized)
                c.context = calib_context(&c);
        switch (kind) {
        case DATASET_SHAREGPT:
                r = plan_sharegpt(b, &c, work);
                break;
        case DATASET_CUSTOM:
                r = plan_custom(b);
                break;
        case DATASET_MULTI_TURN:
                r = plan_multi_turn(b, &c, work);
                break;
        case DATASET_TRACE:
                r = plan_trace(b, &c, work);
                break;
        case DATASET_PREFIX_REPETITION:
                r = plan_prefix(b, &c);
                if (r >= 0 && json_object_set_new(work, "prefix", json_pack("{s:i, s:i, s:i}", "tokens",
                                                                            spec->dataset.prefix_len, "groups",
                                                                            spec->dataset.num_prefixes, "suffix_tokens",
                                                                            spec->dataset.suffix_len)) < 0)
                        r = -ENOMEM;
                break;
        default:
                r = plan_random(b, &c);
                if (r >= 0 && spec->dataset.range_ratio > 0 &&
                    json_object_set_new(work, "range_ratio", json_real(spec->dataset.range_ratio)) < 0)
                        r = -ENOMEM;
                break;
        }
        if (r < 0)
                return r;
        /* A workload sized by the server's /tokenize has its output counted the same way */
        if (c.requests > 0)
                b->cnt.tokenize = strcmp(c.method, "tokenize") == 0;
        return plan_describe(b, work);
}
