/* tok.c -- vocabulary loading, longest-piece encoding, chat rendering, UTF-8 detokenizing. */
#include "tok.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"
#include "base/util.h"

#define SPM_SPACE "\xe2\x96\x81" /* U+2581 */
#define UNK_GLYPH "\xe2\x96\x85" /* U+2585, what llama.cpp prints for <unk> */
#define REPLACEMENT "\xef\xbf\xbd"

void tok_ids_init(struct tok_ids *t, size_t max) { *t = (struct tok_ids){.max = max}; }

void tok_ids_release(struct tok_ids *t) {
        free(t->v);
        t->v = NULL;
        t->n = t->alloc = 0;
}

int tok_ids_push(struct tok_ids *t, int id) {
        if (t->max && t->n >= t->max)
                return -E2BIG;
        if (t->n == t->alloc) {
                size_t na = t->alloc ? t->alloc * 2 : 64;
                int *nv = realloc(t->v, na * sizeof(int));
                if (!nv)
                        return -ENOMEM;
                t->v = nv;
                t->alloc = na;
        }
        t->v[t->n++] = id;
        return 0;
}

/* Replaces every "▁" in s by " " (the result is never longer). Caller frees. */
static char *spm_to_text(const char *s) {
        char *out = malloc(strlen(s) + 1), *o = out;
        if (!out)
                return NULL;
        while (*s) {
                if (startswith(s, SPM_SPACE)) {
                        *o++ = ' ';
                        s += 3;
                } else
                        *o++ = *s++;
        }
        *o = 0;
        return out;
}

static size_t hash_slot(const struct tok_vocab *v, const char *p, size_t len) {
        return (size_t)fnv1a(FNV_SEED, p, len) & (v->hash_size - 1);
}

static int hash_insert(struct tok_vocab *v, const char *key, int id) {
        size_t len = strlen(key);
        for (size_t i = hash_slot(v, key, len), probes = 0; probes < v->hash_size;
             i = (i + 1) & (v->hash_size - 1), probes++) {
                int cur = v->hash[i];
                if (cur < 0) {
                        v->hash[i] = id;
                        return 0;
                }
                if (strcmp(v->piece[cur], key) == 0)
                        return 0; /* first id wins on duplicates */
        }
        return -ENOSPC;
}

/* Id of the normal piece equal to p[0..len), or -1. */
static int hash_find(const struct tok_vocab *v, const char *p, size_t len) {
        for (size_t i = hash_slot(v, p, len), probes = 0; probes < v->hash_size;
             i = (i + 1) & (v->hash_size - 1), probes++) {
                int cur = v->hash[i];
                if (cur < 0)
                        return -1;
                if (strlen(v->piece[cur]) == len && memcmp(v->piece[cur], p, len) == 0)
                        return cur;
        }
        return -1;
}

int tok_find_text(const struct tok_vocab *v, const char *text) {
        for (int i = 0; i < v->n; i++)
                if (strcmp(v->text[i], text) == 0)
                        return i;
        return -1;
}

static int get_id(const struct gguf *g, const char *key, int n, int fallback) {
        uint32_t u;
        if (gguf_get_u32(&g->meta, key, &u) < 0 || u >= (uint32_t)n)
                return fallback;
        return (int)u;
}

int tok_vocab_load(const struct gguf *g, struct tok_vocab *ret, char **ret_error) {
        struct tok_vocab v = {0};
        const struct gguf_kv *toks = gguf_find_kv(&g->meta, "tokenizer.ggml.tokens");
        const struct gguf_kv *types = gguf_find_kv(&g->meta, "tokenizer.ggml.token_type");
        int r = -EBADMSG;

        if (!toks || toks->v.type != GGUF_TYPE_ARRAY || toks->v.arr.type != GGUF_TYPE_STRING ||
            toks->v.arr.n == 0 || toks->v.arr.n > 1000000) {
                *ret_error = strdup("tokenizer.ggml.tokens is missing or not a string array");
                return -EBADMSG;
        }
        if (types && (types->v.type != GGUF_TYPE_ARRAY || types->v.arr.n != toks->v.arr.n ||
                      (types->v.arr.type != GGUF_TYPE_INT32 && types->v.arr.type != GGUF_TYPE_UINT32))) {
                *ret_error = strdup("tokenizer.ggml.token_type does not match the token list");
                return -EBADMSG;
        }
        v.n = (int)toks->v.arr.n;
        v.text = calloc(v.n, sizeof(char *));
        v.piece = calloc(v.n, sizeof(char *));
        v.type = calloc(v.n, 1);
        for (v.hash_size = 64; v.hash_size < (size_t)v.n * 4; v.hash_size *= 2)
                ;
        v.hash = malloc(v.hash_size * sizeof(int));
        if (!v.text || !v.piece || !v.type || !v.hash) {
                r = -ENOMEM;
                goto fail;
        }
        memset(v.hash, 0xff, v.hash_size * sizeof(int));
        memset(v.byte_id, 0xff, sizeof(v.byte_id));
        struct gguf_strs it = {toks->v.arr.data, toks->v.arr.n};
        struct gguf_str s;
        for (int i = 0; i < v.n && gguf_strs_next(&it, &s); i++) {
                v.text[i] = strndup(s.p, s.len);
                if (!v.text[i]) {
                        r = -ENOMEM;
                        goto fail;
                }
                if (strlen(v.text[i]) != s.len || s.len == 0) {
                        *ret_error = strdup_printf("token %d is empty or contains a NUL byte", i);
                        goto fail;
                }
                int32_t t = TOK_NORMAL;
                if (types)
                        memcpy(&t, (const uint8_t *)types->v.arr.data + 4 * (size_t)i, 4);
                if (t < TOK_NORMAL || t > TOK_BYTE) {
                        *ret_error = strdup_printf("token %d has unknown type %d", i, t);
                        goto fail;
                }
                v.type[i] = (uint8_t)t;
                v.piece[i] = spm_to_text(v.text[i]);
                if (!v.piece[i]) {
                        r = -ENOMEM;
                        goto fail;
                }
                if (t == TOK_BYTE) {
                        unsigned b;
                        char tail;
                        if (sscanf(v.text[i], "<0x%2X>%c", &b, &tail) != 1 || strlen(v.text[i]) != 6) {
                                *ret_error = strdup_printf("byte token %d is not of the form <0xNN>: '%s'", i,
                                                           v.text[i]);
                                goto fail;
                        }
                        if (v.byte_id[b] < 0)
                                v.byte_id[b] = i;
                } else if (t == TOK_NORMAL || t == TOK_USER_DEFINED) {
                        if (hash_insert(&v, v.piece[i], i) < 0) {
                                r = -ENOMEM;
                                goto fail;
                        }
                        v.max_piece = MAX(v.max_piece, strlen(v.piece[i]));
                }
        }
        v.unk = get_id(g, "tokenizer.ggml.unknown_token_id", v.n, tok_find_text(&v, "<unk>"));
        v.bos = get_id(g, "tokenizer.ggml.bos_token_id", v.n, tok_find_text(&v, "<s>"));
        v.eos = get_id(g, "tokenizer.ggml.eos_token_id", v.n, tok_find_text(&v, "</s>"));
        v.user = tok_find_text(&v, "<|user|>");
        v.assistant = tok_find_text(&v, "<|assistant|>");
        v.end = tok_find_text(&v, "<|end|>");
        v.think = tok_find_text(&v, "<think>");
        v.end_think = tok_find_text(&v, "</think>");
        v.eot = get_id(g, "tokenizer.ggml.eot_token_id", v.n, v.end);
        /* the engines the testbed stands for serve byte-level BPE vocabularies (Qwen's),
         * whose id 0 is "!": a NaN collapse lands there, not on this file's <unk> */
        v.collapse = tok_find_text(&v, "!");
        if (v.collapse < 0)
                v.collapse = 0;
        if (v.bos < 0 || v.eos < 0 || v.user < 0 || v.assistant < 0 || v.end < 0 || v.think < 0 ||
            v.end_think < 0) {
                *ret_error = strdup("the vocabulary lacks one of <s> </s> <|user|> <|assistant|> <|end|> "
                                    "<think> </think>");
                goto fail;
        }
        *ret = v;
        return 0;
fail:
        if (r == -ENOMEM && !*ret_error)
                *ret_error = strdup("out of memory");
        tok_vocab_release(&v);
        return r;
}

void tok_vocab_release(struct tok_vocab *v) {
        for (int i = 0; i < v->n; i++) {
                if (v->text)
                        free(v->text[i]);
                if (v->piece)
                        free(v->piece[i]);
        }
        free(v->text);
        free(v->piece);
        free(v->type);
        free(v->hash);
        *v = (struct tok_vocab){0};
}

int tok_encode(const struct tok_vocab *v, const char *text, size_t len, bool parse_special, struct tok_ids *out) {
        size_t i = 0;
        int r;
        while (i < len) {
                int id = -1;
                size_t step = 0;
                if (parse_special && text[i] == '<') {
                        for (int k = 0; k < v->n; k++) {
                                if (v->type[k] != TOK_CONTROL && v->type[k] != TOK_USER_DEFINED)
                                        continue;
                                size_t l = strlen(v->text[k]);
                                if (l > step && l <= len - i && memcmp(text + i, v->text[k], l) == 0) {
                                        id = k;
                                        step = l;
                                }
                        }
                }
                if (id < 0)
                        for (size_t l = MIN(v->max_piece, len - i); l > 0; l--) {
                                id = hash_find(v, text + i, l);
                                if (id >= 0) {
                                        step = l;
                                        break;
                                }
                        }
                if (id < 0) {
                        id = v->byte_id[(uint8_t)text[i]];
                        if (id < 0)
                                id = v->unk;
                        step = 1;
                }
                if (id < 0)
                        return -EINVAL;
                r = tok_ids_push(out, id);
                if (r < 0)
                        return r;
                i += step;
        }
        return 0;
}

static int push_text(const struct tok_vocab *v, const char *s, struct tok_ids *out) {
        return tok_encode(v, s, strlen(s), false, out);
}

int tok_chat_encode(const struct tok_vocab *v, const struct tok_msg *msgs, size_t n, bool thinking,
                    struct tok_ids *out) {
        _cleanup_buf_ struct buf system;
        bool first_user = true;
        int r;
        buf_init(&system, 0);
        if (n == 0)
                return -EINVAL;
        r = tok_ids_push(out, v->bos);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                const char *role = msgs[i].role, *content = msgs[i].content ? msgs[i].content : "";
                if (strcmp(role, "system") == 0 || strcmp(role, "developer") == 0) {
                        /* held and prefixed to the first user message */
                        if (system.len && buf_puts(&system, "\n") < 0)
                                return -ENOMEM;
                        if (buf_puts(&system, content) < 0)
                                return -ENOMEM;
                        continue;
                }
                if (strcmp(role, "user") == 0) {
                        if ((r = tok_ids_push(out, v->user)) < 0)
                                return r;
                        if (first_user && system.len) {
                                if ((r = push_text(v, buf_str(&system), out)) < 0 || (r = push_text(v, "\n", out)) < 0)
                                        return r;
                                buf_reset(&system);
                        }
                        first_user = false;
                        if ((r = push_text(v, content, out)) < 0 || (r = tok_ids_push(out, v->end)) < 0 ||
                            (r = tok_ids_push(out, v->assistant)) < 0)
                                return r;
                        continue;
                }
                if (strcmp(role, "assistant") == 0) {
                        /* earlier answers: always with an empty think block, as in training */
                        if ((r = tok_ids_push(out, v->think)) < 0 || (r = tok_ids_push(out, v->end_think)) < 0 ||
                            (r = push_text(v, content, out)) < 0 || (r = tok_ids_push(out, v->end)) < 0)
                                return r;
                        continue;
                }
                return -EINVAL;
        }
        if (system.len) {
                /* only a system message: it stands as the user turn */
                if ((r = tok_ids_push(out, v->user)) < 0 || (r = push_text(v, buf_str(&system), out)) < 0 ||
                    (r = tok_ids_push(out, v->end)) < 0 || (r = tok_ids_push(out, v->assistant)) < 0)
                        return r;
        }
        if (!thinking)
                if ((r = tok_ids_push(out, v->think)) < 0 || (r = tok_ids_push(out, v->end_think)) < 0)
                        return r;
        return 0;
}

/* Whether b[0..n) is one well-formed UTF-8 character (no overlong, no surrogate). */
static bool utf8_valid(const uint8_t *b, int n) {
        return utf8_decode(b, (size_t)n, NULL, NULL) == (size_t)n;
}

int tok_decode_flush(struct tok_decoder *d, struct buf *out) {
        int r = 0;
        for (int i = 0; i < d->npend && r >= 0; i++)
                r = buf_puts(out, REPLACEMENT);
        d->npend = d->need = 0;
        return r;
}

static int decode_byte(struct tok_decoder *d, uint8_t b, struct buf *out) {
        int r;
        if (d->npend > 0) {
                if ((b & 0xc0) == 0x80) {
                        d->pend[d->npend++] = b;
                        if (d->npend < d->need)
                                return 0;
                        if (utf8_valid(d->pend, d->npend))
                                r = buf_append(out, d->pend, (size_t)d->npend);
                        else
                                r = tok_decode_flush(d, out);
                        d->npend = d->need = 0;
                        return r;
                }
                r = tok_decode_flush(d, out);
                if (r < 0)
                        return r;
        }
        if (b < 0x80)
                return buf_append(out, &b, 1);
        int need = b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 0;
        if (!need)
                return buf_puts(out, REPLACEMENT);
        d->pend[0] = b;
        d->npend = 1;
        d->need = need;
        return 0;
}

int tok_decode(const struct tok_vocab *v, struct tok_decoder *d, int id, struct buf *out) {
        int r;
        if (id < 0 || id >= v->n)
                return -EINVAL;
        if (v->type[id] == TOK_BYTE) {
                unsigned b = 0;
                for (unsigned k = 0; k < 256; k++)
                        if (v->byte_id[k] == id) {
                                b = k;
                                break;
                        }
                return decode_byte(d, (uint8_t)b, out);
        }
        if (d->npend) {
                r = tok_decode_flush(d, out);
                if (r < 0)
                        return r;
        }
        switch (v->type[id]) {
        case TOK_CONTROL:
        case TOK_UNUSED:
                return 0;
        case TOK_UNKNOWN:
                return buf_puts(out, UNK_GLYPH);
        default:
                return buf_puts(out, v->piece[id]);
        }
}

void tok_piece(const struct tok_vocab *v, int id, const char **ret, size_t *ret_len) {
        static const uint8_t bytes[256] = {
#define B4(i) i, i + 1, i + 2, i + 3
#define B16(i) B4(i), B4(i + 4), B4(i + 8), B4(i + 12)
#define B64(i) B16(i), B16(i + 16), B16(i + 32), B16(i + 48)
                B64(0), B64(64), B64(128), B64(192)
#undef B64
#undef B16
#undef B4
        };
        if (id < 0 || id >= v->n) {
                *ret = "";
                *ret_len = 0;
                return;
        }
        if (v->type[id] == TOK_BYTE) {
                for (unsigned k = 0; k < 256; k++)
                        if (v->byte_id[k] == id) {
                                *ret = (const char *)&bytes[k];
                                *ret_len = 1;
                                return;
                        }
        }
        const char *s = v->type[id] == TOK_NORMAL || v->type[id] == TOK_USER_DEFINED ? v->piece[id] : v->text[id];
        *ret = s;
        *ret_len = strlen(s);
}
