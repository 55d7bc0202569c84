/* gen.c -- the token loop of one request: prompt, sampling, stops, reasoning split. */
#include "gen.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

int gen_new(const struct model *m, const struct tok_ids *prompt, const struct gen_params *p, struct gen **ret) {
        int r;
        if (prompt->n == 0)
                return -EINVAL;
        if (prompt->n >= (size_t)m->hp.n_ctx)
                return -E2BIG;
        struct gen *g = calloc(1, sizeof(*g));
        if (!g)
                return -ENOMEM;
        g->m = m;
        g->p = *p;
        g->p.top_logprobs = MAX(0, MIN(p->top_logprobs, GEN_MAX_TOP_LOGPROBS));
        g->t_start = now_usec();
        /* the text is bounded by the context: at most n_ctx tokens of at most 4 bytes, plus
         * replacement characters; the cap keeps a broken model from growing it further */
        buf_init(&g->content, (size_t)m->hp.n_ctx * 16 + 64);
        buf_init(&g->reasoning, (size_t)m->hp.n_ctx * 16 + 64);
        tok_ids_init(&g->prompt, 0);
        sample_rng_seed(&g->rng, p->seed);
        int nv = m->hp.n_vocab;
        g->logits = malloc(nv * sizeof(float));
        g->lps = malloc(nv * sizeof(float));
        g->scratch_f = malloc(nv * sizeof(float));
        g->scratch_i = malloc(nv * sizeof(int));
        if (!g->logits || !g->lps || !g->scratch_f || !g->scratch_i) {
                r = -ENOMEM;
                goto fail;
        }
        for (size_t i = 0; i < prompt->n; i++)
                if ((r = tok_ids_push(&g->prompt, prompt->v[i])) < 0)
                        goto fail;
        if ((r = model_ctx_new(m, &g->ctx)) < 0)
                goto fail;
        g->ctx->kv_fault_before = p->kv_fault_before;
        *ret = g;
        return 0;
fail:
        gen_free(g);
        return r;
}

void gen_free(struct gen *g) {
        if (!g)
                return;
        model_ctx_free(g->ctx);
        tok_ids_release(&g->prompt);
        buf_release(&g->content);
        buf_release(&g->reasoning);
        free(g->logits);
        free(g->lps);
        free(g->scratch_f);
        free(g->scratch_i);
        free(g);
}

static bool is_end(const struct gen *g, int id) {
        const struct tok_vocab *v = &g->m->vocab;
        return id == v->eos || id == v->eot || id == v->end;
}

/* Length of the longest suffix of s[0..n) that is a proper prefix of a stop string. */
static size_t stop_holdback(const struct gen *g, const char *s, size_t n) {
        size_t best = 0;
        for (int i = 0; i < GEN_MAX_STOP && g->p.stop[i]; i++) {
                size_t sl = strlen(g->p.stop[i]);
                for (size_t l = MIN(sl - 1, n); l > best; l--)
                        if (memcmp(s + n - l, g->p.stop[i], l) == 0) {
                                best = l;
                                break;
                        }
        }
        return best;
}

/* Position of the earliest stop string in content at or after from, or -1. */
static ssize_t stop_find(const struct gen *g, size_t from) {
        ssize_t best = -1;
        const char *s = buf_str(&g->content);
        for (int i = 0; i < GEN_MAX_STOP && g->p.stop[i]; i++) {
                if (!g->p.stop[i][0])
                        continue;
                const char *hit = memmem(s + from, g->content.len - from, g->p.stop[i], strlen(g->p.stop[i]));
                if (hit && (best < 0 || hit - s < best))
                        best = hit - s;
        }
        return best;
}

static size_t max_stop_len(const struct gen *g) {
        size_t mx = 0;
        for (int i = 0; i < GEN_MAX_STOP && g->p.stop[i]; i++)
                mx = MAX(mx, strlen(g->p.stop[i]));
        return mx;
}

/* --fault-sampling: a fused top-p kernel that reads its sorted index array wrong and
 * returns ids from the rarest end of the vocabulary, the byte-fallback tokens: every other
 * draw starts a character of another script (Latin-1, Latin Extended, Greek, Cyrillic,
 * Hebrew, Arabic, CJK), completed with continuation bytes so the text stays valid UTF-8;
 * the rest keep the model's own token, whose Latin fragments the model goes on writing
 * around the intruders. End tokens are never returned: the salad runs to max_tokens. All
 * of it from the request's seeded generator, so a seed gives the same salad every time. */
static int salad_pick(struct gen *g, int tok) {
        static const struct {
                uint8_t lead_lo, lead_hi; /* lead byte range */
                int cont;                 /* continuation bytes */
        } scripts[] = {
                {0xc3, 0xc3, 1}, {0xc4, 0xc5, 1}, {0xce, 0xcf, 1}, {0xd0, 0xd1, 1},
                {0xd7, 0xd7, 1}, {0xd8, 0xd9, 1}, {0xe3, 0xe3, 2}, {0xe4, 0xe9, 2},
        };
        const struct tok_vocab *v = &g->m->vocab;
        uint64_t r = (uint64_t)(sample_rng_uniform(&g->rng) * 0x1p53);
        if (g->salad_left > 0) {
                g->salad_left--;
                int id = v->byte_id[0x80 | (r & 0x3f)];
                return id >= 0 ? id : tok;
        }
        bool end = tok == v->eos || tok == v->eot || tok == v->end;
        if (!end && (r & 1))
                return tok;
        size_t k = (size_t)((r >> 1) % ELEMENTSOF(scripts));
        int span = scripts[k].lead_hi - scripts[k].lead_lo + 1;
        int id = v->byte_id[scripts[k].lead_lo + (int)((r >> 8) % (uint64_t)span)];
        if (id < 0)
                return end ? v->collapse : tok;
        g->salad_left = scripts[k].cont;
        return id;
}

int gen_step(struct gen *g, struct gen_step *ret) {
        const struct model *m = g->m;
        const struct tok_vocab *v = &m->vocab;
        int nv = m->hp.n_vocab, r, tok;
        struct gen_step st = {.token = -1};

        if (g->finished)
                return -EINVAL;
        if (!g->started) {
                g->started = true;
                for (size_t i = 0; i < g->prompt.n; i++) {
                        r = model_eval(g->ctx, g->prompt.v[i], i + 1 == g->prompt.n ? g->logits : NULL);
                        if (r < 0)
                                return r;
                }
        }
        /* g->logits holds the prediction for the next position */
        if (g->p.fault_context > 0 && g->prompt.n + (size_t)g->n_generated >= (size_t)g->p.fault_context &&
            g->p.fault_token >= 0 && g->p.fault_token < nv) {
                /* --fault-context: past N tokens of context the logits are one spike on "+" */
                for (int i = 0; i < nv; i++)
                        g->logits[i] = -INFINITY;
                g->logits[g->p.fault_token] = 0.0f;
        }
        sample_logprobs(g->logits, nv, g->lps);
        if (g->n_generated < g->p.min_tokens || g->p.ignore_eos) {
                /* min_tokens: the turn may not end yet; ignore_eos: never, as llama.cpp's
                 * ignore_eos biases the end tokens to -inf (log-probabilities stay unmasked) */
                int ends[] = {v->eos, v->eot, v->end};
                for (size_t i = 0; i < ELEMENTSOF(ends); i++)
                        if (ends[i] >= 0)
                                g->logits[ends[i]] = -INFINITY;
        }
        if (g->row_off) {
                /* a kernel that reads the batch's rows with the wrong stride: every logit
                 * is its neighbour's */
                float first = g->logits[0];
                memmove(g->logits, g->logits + 1, (size_t)(nv - 1) * sizeof(float));
                g->logits[nv - 1] = first;
        }
        tok = sample_pick(g->logits, nv, &g->p.sample, &g->rng, g->scratch_f, g->scratch_i);
        if (isnan(g->logits[tok]))
                tok = v->collapse; /* the NaN collapse: id 0 of the emulated vocabulary, "!" */
        else if (g->p.fault_sampling && g->p.sample.temperature > 0.0f)
                tok = salad_pick(g, tok);
        g->n_generated++;
        usec_t now = now_usec();
        g->itl = g->t_last ? now - g->t_last : 0;
        g->t_last = now;
        if (!g->t_first)
                g->t_first = now;
        st.token = tok;
        st.logprob = g->lps[tok];
        if (g->p.top_logprobs > 0) {
                st.n_top = MIN(g->p.top_logprobs, nv);
                sample_top(g->lps, nv, st.n_top, st.top_ids);
                for (int i = 0; i < st.n_top; i++)
                        st.top_lps[i] = g->lps[st.top_ids[i]];
        }

        bool end_now = false;
        const char *finish = NULL;
        if (is_end(g, tok) && !g->p.ignore_eos) {
                end_now = true;
                finish = "stop";
        } else if (g->p.chat && tok == v->think && g->n_generated == 1) {
                g->in_reasoning = true;
        } else if (g->p.chat && tok == v->end_think && g->in_reasoning) {
                tok_decode_flush(&g->dec_reasoning, &g->reasoning);
                g->in_reasoning = false;
        } else if (g->in_reasoning) {
                tok_decode(v, &g->dec_reasoning, tok, &g->reasoning);
        } else {
                tok_decode(v, &g->dec_content, tok, &g->content);
        }

        /* stop strings, searched in the answer text from where a new match could start */
        if (!end_now && g->p.stop[0]) {
                size_t ms = max_stop_len(g);
                size_t from = g->content_sent > ms ? g->content_sent - ms : 0;
                ssize_t at = stop_find(g, from);
                if (at >= 0) {
                        g->content.len = (size_t)at;
                        g->content.data[at] = 0;
                        end_now = true;
                        finish = "stop";
                }
        }
        if (!end_now && ((g->p.max_tokens > 0 && g->n_generated >= g->p.max_tokens) ||
                         g->prompt.n + (size_t)g->n_generated >= (size_t)m->hp.n_ctx)) {
                /* prompt plus output never exceed the context, as max_model_len in engines */
                end_now = true;
                finish = "length";
        }
        if (end_now) {
                tok_decode_flush(&g->dec_content, &g->content);
                tok_decode_flush(&g->dec_reasoning, &g->reasoning);
        }

        size_t avail = g->content.len;
        if (!end_now && g->p.stop[0] && avail > g->content_sent)
                avail -= MIN(avail - g->content_sent, stop_holdback(g, buf_str(&g->content), g->content.len));
        if (avail > g->content_sent) {
                st.content = buf_str(&g->content) + g->content_sent;
                st.content_len = avail - g->content_sent;
                g->content_sent = avail;
        }
        if (g->reasoning.len > g->reasoning_sent) {
                st.reasoning = buf_str(&g->reasoning) + g->reasoning_sent;
                st.reasoning_len = g->reasoning.len - g->reasoning_sent;
                g->reasoning_sent = g->reasoning.len;
        }
        if (end_now) {
                g->finished = true;
                st.done = true;
                st.finish_reason = finish;
        } else {
                /* run the model on the chosen token: its logits are the next step's */
                r = model_eval(g->ctx, tok, g->logits);
                if (r < 0)
                        return r;
        }
        *ret = st;
        return 0;
}
