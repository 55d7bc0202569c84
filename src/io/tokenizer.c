/* tokenizer.c -- counting tokens the way the model's own tokenizer cuts text. */
#include "io/tokenizer.h"

#include <fcntl.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "base/utf8.h"
#include "base/util.h"
#include "io/gguf.h"

#define NONE UINT32_MAX
#define SPACE_MARK "\xe2\x96\x81" /* U+2581 "▁", SentencePiece's space */

enum tok_kind {
        KIND_SPM,       /* SentencePiece with scores (GGUF "llama") */
        KIND_BPE_BYTES, /* byte-level BPE: bytes mapped to printable code points, pre-split */
        KIND_BPE_SPM,   /* BPE over characters with "▁" for spaces and byte fallback */
};

enum tok_split { SPLIT_NONE, SPLIT_GPT2, SPLIT_LLAMA3, SPLIT_QWEN2 };

struct pair_slot {
        uint64_t key; /* left id << 32 | right id; UINT64_MAX when empty */
        uint32_t rank;
        uint32_t result;
};

struct scratch {
        char *p;
        size_t len, alloc;
};

static int scratch_put(struct scratch *b, const void *p, size_t n) {
        if (n == 0)
                return 0;
        if (b->len + n > b->alloc) {
                size_t a = MAX(b->alloc * 2, b->len + n + 256);
                char *np = realloc(b->p, a);
                if (!np)
                        return -ENOMEM;
                b->p = np;
                b->alloc = a;
        }
        memcpy(b->p + b->len, p, n);
        b->len += n;
        return 0;
}

struct tokenizer {
        enum tok_kind kind;
        enum tok_split split;
        bool space_prefix;  /* SentencePiece: "▁" before the text (and after a matched token) */
        bool metaspace_split; /* BPE_SPM: each "▁" starts a new piece */
        bool ignore_merges; /* a pre-token that is a token is one token, whatever the merges */
        uint32_t n;         /* tokens (ids 0..n-1; a gap in a tokenizer.json's ids is an empty slot) */
        struct scratch arena; /* every token's text, back to back */
        uint32_t *off, *len; /* per id: where its text is in the arena (len 0: no token) */
        float *score;       /* SPM: per id */
        uint32_t *hash;     /* text -> id, open addressing, NONE when empty */
        size_t hash_mask;
        struct pair_slot *pairs; /* BPE: (left, right) -> rank and result */
        size_t pair_mask;
        uint32_t n_merges;
        uint32_t *added;    /* ids matched in the text before anything else, longest first */
        size_t n_added;
        bool added_first[256]; /* a first byte of an added token */
        uint8_t byte_enc[256][2], byte_enc_len[256]; /* GPT-2's byte -> code point, as UTF-8 */
        char describe[200];
};

/* ---- the vocabulary: an arena of texts and a hash from text to id ---- */

static uint64_t hash_bytes(const char *p, size_t n) { return fnv1a(FNV_SEED, p, n); }

static uint64_t mix64(uint64_t x) {
        x ^= x >> 33;
        x *= UINT64_C(0xff51afd7ed558ccd);
        x ^= x >> 33;
        x *= UINT64_C(0xc4ceb9fe1a85ec53);
        return x ^ (x >> 33);
}

static uint32_t vocab_find(const struct tokenizer *t, const char *p, size_t n) {
        if (n == 0 || n > TOKENIZER_MAX_TOKEN)
                return NONE;
        for (size_t h = hash_bytes(p, n) & t->hash_mask;; h = (h + 1) & t->hash_mask) {
                uint32_t id = t->hash[h];
                if (id == NONE)
                        return NONE;
                if (t->len[id] == n && memcmp(t->arena.p + t->off[id], p, n) == 0)
                        return id;
        }
}

/* Sizes the tables for n ids (all empty). */
static int vocab_init(struct tokenizer *t, uint32_t n) {
        size_t hs = 64;
        while (hs < (size_t)n * 2)
                hs *= 2;
        t->n = n;
        t->off = calloc(n ? n : 1, sizeof(*t->off));
        t->len = calloc(n ? n : 1, sizeof(*t->len));
        t->hash = malloc(hs * sizeof(*t->hash));
        if (!t->off || !t->len || !t->hash)
                return -ENOMEM;
        memset(t->hash, 0xff, hs * sizeof(*t->hash));
        t->hash_mask = hs - 1;
        return 0;
}

/* Gives id the text p[0..n). A text already held by another id keeps that id in the hash
 * (the first wins); a second text for the same id is refused. */
static int vocab_set(struct tokenizer *t, uint32_t id, const char *p, size_t n, char **ret_error) {
        if (id >= t->n)
                return -EINVAL;
        if (n == 0 || n > TOKENIZER_MAX_TOKEN) {
                *ret_error = strdup_printf("token %u is %zu bytes (1 to %u allowed)", id, n, TOKENIZER_MAX_TOKEN);
                return -EBADMSG;
        }
        if (t->len[id]) {
                *ret_error = strdup_printf("token id %u is given twice", id);
                return -EBADMSG;
        }
        size_t at = t->arena.len;
        if (scratch_put(&t->arena, p, n) < 0)
                return -ENOMEM;
        t->off[id] = (uint32_t)at;
        t->len[id] = (uint32_t)n;
        if (vocab_find(t, p, n) != NONE)
                return 0;
        size_t h = hash_bytes(p, n) & t->hash_mask;
        while (t->hash[h] != NONE)
                h = (h + 1) & t->hash_mask;
        t->hash[h] = id;
        return 0;
}

/* ---- merges: (left id, right id) -> rank ---- */

static int pairs_init(struct tokenizer *t, size_t n) {
        size_t ps = 64;
        while (ps < n * 2)
                ps *= 2;
        t->pairs = malloc(ps * sizeof(*t->pairs));
        if (!t->pairs)
                return -ENOMEM;
        for (size_t i = 0; i < ps; i++)
                t->pairs[i].key = UINT64_MAX;
        t->pair_mask = ps - 1;
        return 0;
}

static const struct pair_slot *pair_find(const struct tokenizer *t, uint32_t l, uint32_t r) {
        if (!t->pairs || l == NONE || r == NONE)
                return NULL;
        uint64_t key = (uint64_t)l << 32 | r;
        for (size_t h = mix64(key) & t->pair_mask;; h = (h + 1) & t->pair_mask) {
                if (t->pairs[h].key == UINT64_MAX)
                        return NULL;
                if (t->pairs[h].key == key)
                        return &t->pairs[h];
        }
}

/* Adds the merge of texts a and b at the next rank; a merge whose parts or result are not
 * tokens is skipped, and so is a repeat (the first rank stays). */
static void merge_add(struct tokenizer *t, const char *a, size_t an, const char *b, size_t bn, uint32_t rank) {
        uint32_t l = vocab_find(t, a, an), r = vocab_find(t, b, bn);
        if (l == NONE || r == NONE || an + bn > TOKENIZER_MAX_TOKEN)
                return;
        char joined[TOKENIZER_MAX_TOKEN];
        memcpy(joined, a, an);
        memcpy(joined + an, b, bn);
        uint32_t res = vocab_find(t, joined, an + bn);
        if (res == NONE)
                return;
        uint64_t key = (uint64_t)l << 32 | r;
        size_t h = mix64(key) & t->pair_mask;
        while (t->pairs[h].key != UINT64_MAX) {
                if (t->pairs[h].key == key)
                        return;
                h = (h + 1) & t->pair_mask;
        }
        t->pairs[h] = (struct pair_slot){.key = key, .rank = rank, .result = res};
        t->n_merges++;
}

/* A merge written "a b": split at the first space that leaves both sides non-empty (a
 * byte-level vocabulary has no plain space; a SentencePiece one writes it "▁"). */
static void merge_add_line(struct tokenizer *t, const char *s, size_t n, uint32_t rank) {
        const char *sp = n > 1 ? memchr(s + 1, ' ', n - 1) : NULL;
        if (!sp || sp + 1 == s + n)
                return;
        merge_add(t, s, (size_t)(sp - s), sp + 1, n - (size_t)(sp - s) - 1, rank);
}

/* Registers id as matched in the text (a user-defined / non-special added token). */
static int added_push(struct tokenizer *t, uint32_t id) {
        uint32_t *a = realloc(t->added, (t->n_added + 1) * sizeof(*a));
        if (!a)
                return -ENOMEM;
        t->added = a;
        t->added[t->n_added++] = id;
        t->added_first[(uint8_t)t->arena.p[t->off[id]]] = true;
        return 0;
}

/* Longest first, then by id: at a position the longest added token wins. */
static int cmp_added(const void *a, const void *b, void *ctx) {
        const struct tokenizer *t = ctx;
        uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
        if (t->len[x] != t->len[y])
                return t->len[x] > t->len[y] ? -1 : 1;
        return x < y ? -1 : x > y;
}

static void added_sort(struct tokenizer *t) {
        if (t->n_added > 1)
                qsort_r(t->added, t->n_added, sizeof(*t->added), cmp_added, t);
}

/* GPT-2's map of bytes to printable code points: the printable Latin-1 bytes stand for
 * themselves, the others for 256, 257, ... in byte order. */
static void byte_encoder_init(struct tokenizer *t) {
        uint32_t next = 256;
        for (int b = 0; b < 256; b++) {
                bool keep = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
                uint32_t cp = keep ? (uint32_t)b : next++;
                char out[4];
                size_t n = utf8_encode(cp, out);
                memcpy(t->byte_enc[b], out, n);
                t->byte_enc_len[b] = (uint8_t)n;
        }
}

/* ---- character classes (the approximation the header states) ---- */

enum cls { C_LETTER, C_NUMBER, C_SPACE, C_OTHER };

struct range {
        uint32_t lo, hi;
        uint8_t cls;
};

/* Sorted, disjoint; a code point above U+007F in none of them is a letter. */
static const struct range ranges[] = {
        {0x80, 0x84, C_OTHER},      {0x85, 0x85, C_SPACE},      {0x86, 0x9F, C_OTHER},
        {0xA0, 0xA0, C_SPACE},      {0xA1, 0xA9, C_OTHER},      {0xAB, 0xB1, C_OTHER},
        {0xB2, 0xB3, C_NUMBER},     {0xB4, 0xB4, C_OTHER},      {0xB6, 0xB8, C_OTHER},
        {0xB9, 0xB9, C_NUMBER},     {0xBB, 0xBB, C_OTHER},      {0xBC, 0xBE, C_NUMBER},
        {0xBF, 0xBF, C_OTHER},      {0xD7, 0xD7, C_OTHER},      {0xF7, 0xF7, C_OTHER},
        {0x2C2, 0x2C5, C_OTHER},    {0x2D2, 0x2DF, C_OTHER},    {0x300, 0x36F, C_OTHER},
        {0x37E, 0x37E, C_OTHER},    {0x387, 0x387, C_OTHER},    {0x55A, 0x55F, C_OTHER},
        {0x589, 0x58A, C_OTHER},    {0x5BE, 0x5BE, C_OTHER},    {0x5C0, 0x5C0, C_OTHER},
        {0x5C3, 0x5C3, C_OTHER},    {0x5F3, 0x5F4, C_OTHER},    {0x600, 0x60F, C_OTHER},
        {0x61B, 0x61F, C_OTHER},    {0x660, 0x669, C_NUMBER},   {0x66A, 0x66D, C_OTHER},
        {0x6D4, 0x6D4, C_OTHER},    {0x6F0, 0x6F9, C_NUMBER},   {0x7C0, 0x7C9, C_NUMBER},
        {0x964, 0x965, C_OTHER},    {0x966, 0x96F, C_NUMBER},   {0x9E6, 0x9EF, C_NUMBER},
        {0xE3F, 0xE3F, C_OTHER},    {0xE50, 0xE59, C_NUMBER},   {0x1680, 0x1680, C_SPACE},
        {0x2000, 0x200A, C_SPACE},  {0x200B, 0x2027, C_OTHER},  {0x2028, 0x2029, C_SPACE},
        {0x202A, 0x202E, C_OTHER},  {0x202F, 0x202F, C_SPACE},  {0x2030, 0x205E, C_OTHER},
        {0x205F, 0x205F, C_SPACE},  {0x2060, 0x206F, C_OTHER},  {0x2070, 0x2070, C_NUMBER},
        {0x2074, 0x2079, C_NUMBER}, {0x207A, 0x207E, C_OTHER},  {0x2080, 0x2089, C_NUMBER},
        {0x208A, 0x208E, C_OTHER},  {0x20A0, 0x20CF, C_OTHER},  {0x20D0, 0x20FF, C_OTHER},
        {0x2150, 0x2189, C_NUMBER}, {0x2190, 0x245F, C_OTHER},  {0x2460, 0x249B, C_NUMBER},
        {0x249C, 0x24E9, C_OTHER},  {0x24EA, 0x24FF, C_NUMBER}, {0x2500, 0x2775, C_OTHER},
        {0x2776, 0x2793, C_NUMBER}, {0x2794, 0x2BFF, C_OTHER},  {0x2E00, 0x2E7F, C_OTHER},
        {0x3000, 0x3000, C_SPACE},  {0x3001, 0x3004, C_OTHER},  {0x3007, 0x3007, C_NUMBER},
        {0x3008, 0x3020, C_OTHER},  {0x3021, 0x3029, C_NUMBER}, {0x3030, 0x3030, C_OTHER},
        {0x303D, 0x303D, C_OTHER},  {0x30FB, 0x30FB, C_OTHER},  {0xFD3E, 0xFD3F, C_OTHER},
        {0xFE00, 0xFE0F, C_OTHER},  {0xFE10, 0xFE19, C_OTHER},  {0xFE30, 0xFE6B, C_OTHER},
        {0xFEFF, 0xFEFF, C_OTHER},  {0xFF01, 0xFF0F, C_OTHER},  {0xFF10, 0xFF19, C_NUMBER},
        {0xFF1A, 0xFF20, C_OTHER},  {0xFF3B, 0xFF40, C_OTHER},  {0xFF5B, 0xFF65, C_OTHER},
        {0xFFE0, 0xFFEE, C_OTHER},  {0xFFF9, 0xFFFD, C_OTHER},  {0x1F000, 0x1FAFF, C_OTHER},
        {0xE0000, 0xE007F, C_OTHER},
};

static enum cls cls_of(uint32_t cp) {
        if (cp < 0x80) {
                if ((cp | 0x20) >= 'a' && (cp | 0x20) <= 'z')
                        return C_LETTER;
                if (cp >= '0' && cp <= '9')
                        return C_NUMBER;
                if (cp == ' ' || (cp >= '\t' && cp <= '\r'))
                        return C_SPACE;
                return C_OTHER;
        }
        size_t lo = 0, hi = ELEMENTSOF(ranges);
        while (lo < hi) {
                size_t mid = (lo + hi) / 2;
                if (cp < ranges[mid].lo)
                        hi = mid;
                else if (cp > ranges[mid].hi)
                        lo = mid + 1;
                else
                        return ranges[mid].cls;
        }
        return C_LETTER;
}

/* The character at s[i..n): its length in bytes (a byte that starts no valid sequence is
 * one "other" character) and its class. */
static size_t char_at(const char *s, size_t n, size_t i, enum cls *ret_cls) {
        uint32_t cp;
        size_t l = utf8_decode((const unsigned char *)s + i, n - i, &cp, NULL);
        *ret_cls = l ? cls_of(cp) : C_OTHER;
        return l ? l : 1;
}

static enum cls cls_at(const char *s, size_t n, size_t i) {
        enum cls c = C_SPACE + 100; /* the end: no class matches */
        if (i < n)
                char_at(s, n, i, &c);
        return c;
}

/* Past a run of class c from i (at least one character there). */
static size_t run_of(const char *s, size_t n, size_t i, enum cls c, size_t max_chars) {
        size_t k = 0;
        while (i < n && k < max_chars) {
                enum cls cc;
                size_t l = char_at(s, n, i, &cc);
                if (cc != c)
                        break;
                i += l;
                k++;
        }
        return i;
}

static bool is_crlf(char ch) { return ch == '\r' || ch == '\n'; }

/* The contraction at i ('s 't 're 've 'm 'll 'd), its end or 0. */
static size_t contraction(const char *s, size_t n, size_t i, bool any_case) {
        static const char *const tails[] = {"s", "t", "re", "ve", "m", "ll", "d"};
        if (s[i] != '\'')
                return 0;
        for (size_t k = 0; k < ELEMENTSOF(tails); k++) {
                size_t tl = strlen(tails[k]);
                if (i + 1 + tl > n)
                        continue;
                bool ok = true;
                for (size_t j = 0; j < tl && ok; j++) {
                        char ch = s[i + 1 + j];
                        ok = ch == tails[k][j] || (any_case && (ch | 0x20) == tails[k][j]);
                }
                if (ok)
                        return i + 1 + tl;
        }
        return 0;
}

/* The whitespace run at i: "\s+(?!\S)" leaves its last character to the word after it,
 * "\s+" takes a single one. */
static size_t spaces(const char *s, size_t n, size_t i) {
        size_t end = i, last = i;
        while (end < n) {
                enum cls c;
                size_t l = char_at(s, n, end, &c);
                if (c != C_SPACE)
                        break;
                last = end;
                end += l;
        }
        if (end == n || last == i)
                return end;
        return last;
}

/* The end of the pre-token starting at i (i < n). */
static size_t pretoken_end(const struct tokenizer *t, const char *s, size_t n, size_t i) {
        enum cls c0;
        size_t l0 = char_at(s, n, i, &c0);
        size_t e;

        if (t->split == SPLIT_GPT2) {
                if ((e = contraction(s, n, i, false)))
                        return e;
                size_t j = s[i] == ' ' ? i + 1 : i;
                enum cls cj = cls_at(s, n, j);
                if (cj == C_LETTER || cj == C_NUMBER || cj == C_OTHER)
                        return run_of(s, n, j, cj, SIZE_MAX);
                return spaces(s, n, i);
        }
        /* llama3, qwen2 */
        if ((e = contraction(s, n, i, true)))
                return e;
        if (c0 == C_LETTER)
                return run_of(s, n, i, C_LETTER, SIZE_MAX);
        if (c0 != C_NUMBER && !is_crlf(s[i]) && cls_at(s, n, i + l0) == C_LETTER)
                return run_of(s, n, i + l0, C_LETTER, SIZE_MAX);
        if (c0 == C_NUMBER)
                return run_of(s, n, i, C_NUMBER, t->split == SPLIT_LLAMA3 ? 3 : 1);
        size_t j = s[i] == ' ' ? i + 1 : i;
        if (cls_at(s, n, j) == C_OTHER) {
                e = run_of(s, n, j, C_OTHER, SIZE_MAX);
                while (e < n && is_crlf(s[e]))
                        e++;
                return e;
        }
        /* whitespace: up to the last CR/LF of the run if it has one */
        size_t end = i, after_nl = 0;
        while (end < n) {
                enum cls c;
                size_t l = char_at(s, n, end, &c);
                if (c != C_SPACE)
                        break;
                end += l;
                if (is_crlf(s[end - 1]))
                        after_nl = end;
        }
        if (after_nl)
                return after_nl;
        return spaces(s, n, i);
}

/* ---- merging: the symbols of one piece joined pair by pair ---- */

struct sym {
        uint32_t start, len; /* into the piece's text */
        int32_t prev, next;
        uint32_t id;         /* BPE: the token the symbol is, or NONE */
};

struct cand {
        double key; /* lower first: -score (SPM) or rank (BPE) */
        int32_t left, right;
        uint32_t size;
        uint32_t result;
};

struct work {
        struct sym *syms;
        size_t n_syms, syms_alloc;
        struct cand *heap;
        size_t n_heap, heap_alloc;
};

static bool cand_before(const struct cand *a, const struct cand *b) {
        return a->key < b->key || (a->key == b->key && a->left < b->left);
}

static int heap_push(struct work *w, struct cand c) {
        if (w->n_heap == w->heap_alloc) {
                size_t a = w->heap_alloc ? w->heap_alloc * 2 : 256;
                struct cand *h = realloc(w->heap, a * sizeof(*h));
                if (!h)
                        return -ENOMEM;
                w->heap = h;
                w->heap_alloc = a;
        }
        size_t i = w->n_heap++;
        while (i > 0 && cand_before(&c, &w->heap[(i - 1) / 2])) {
                w->heap[i] = w->heap[(i - 1) / 2];
                i = (i - 1) / 2;
        }
        w->heap[i] = c;
        return 0;
}

static struct cand heap_pop(struct work *w) {
        struct cand top = w->heap[0], last = w->heap[--w->n_heap];
        size_t i = 0;
        for (;;) {
                size_t c = 2 * i + 1;
                if (c >= w->n_heap)
                        break;
                if (c + 1 < w->n_heap && cand_before(&w->heap[c + 1], &w->heap[c]))
                        c++;
                if (!cand_before(&w->heap[c], &last))
                        break;
                w->heap[i] = w->heap[c];
                i = c;
        }
        if (w->n_heap)
                w->heap[i] = last;
        return top;
}

/* Pushes the merge of symbols l and r if there is one. */
static int try_pair(const struct tokenizer *t, struct work *w, const char *s, int32_t l, int32_t r) {
        if (l < 0 || r < 0)
                return 0;
        const struct sym *a = &w->syms[l], *b = &w->syms[r];
        struct cand c = {.left = l, .right = r, .size = a->len + b->len};
        if (t->kind == KIND_SPM) {
                uint32_t id = vocab_find(t, s + a->start, a->len + b->len);
                if (id == NONE)
                        return 0;
                c.key = -(double)t->score[id];
                c.result = id;
        } else {
                const struct pair_slot *p = pair_find(t, a->id, b->id);
                if (!p)
                        return 0;
                c.key = p->rank;
                c.result = p->result;
        }
        return heap_push(w, c);
}

/* Counts the tokens of s[0..n): its characters as symbols, merged; a symbol left that is
 * not a token counts its bytes (of the text before any byte mapping: orig_bytes). */
static int merge_count(const struct tokenizer *t, struct work *w, const char *s, size_t n, bool byte_symbols,
                       int64_t *count) {
        w->n_syms = 0;
        w->n_heap = 0;
        if (n == 0)
                return 0;
        if (n > w->syms_alloc) {
                struct sym *ns = realloc(w->syms, n * sizeof(*ns));
                if (!ns)
                        return -ENOMEM;
                w->syms = ns;
                w->syms_alloc = n;
        }
        for (size_t i = 0; i < n;) {
                size_t l;
                if (byte_symbols) {
                        /* the byte-mapped text: each character stands for one byte */
                        l = ((uint8_t)s[i] & 0xE0) == 0xC0 && i + 1 < n ? 2 : 1;
                } else {
                        /* llama.cpp splits by the lead byte, whatever follows */
                        uint8_t b = (uint8_t)s[i];
                        l = b < 0x80 ? 1 : (b & 0xE0) == 0xC0 ? 2 : (b & 0xF0) == 0xE0 ? 3 : (b & 0xF8) == 0xF0 ? 4 : 1;
                        l = MIN(l, n - i);
                }
                struct sym *y = &w->syms[w->n_syms];
                *y = (struct sym){.start = (uint32_t)i, .len = (uint32_t)l, .prev = (int32_t)w->n_syms - 1,
                                  .next = (int32_t)w->n_syms + 1, .id = NONE};
                if (t->kind != KIND_SPM)
                        y->id = vocab_find(t, s + i, l);
                w->n_syms++;
                i += l;
        }
        w->syms[w->n_syms - 1].next = -1;
        if (t->ignore_merges && vocab_find(t, s, n) != NONE) {
                (*count)++;
                return 0;
        }
        for (size_t i = 1; i < w->n_syms; i++) {
                int r = try_pair(t, w, s, (int32_t)i - 1, (int32_t)i);
                if (r < 0)
                        return r;
        }
        while (w->n_heap) {
                struct cand c = heap_pop(w);
                struct sym *a = &w->syms[c.left], *b = &w->syms[c.right];
                if (a->len == 0 || b->len == 0 || a->next != c.right || a->len + b->len != c.size)
                        continue; /* stale: one side has changed since */
                a->len += b->len;
                a->id = c.result;
                b->len = 0;
                a->next = b->next;
                if (b->next >= 0)
                        w->syms[b->next].prev = c.left;
                int r = try_pair(t, w, s, a->prev, c.left);
                if (r >= 0)
                        r = try_pair(t, w, s, c.left, a->next);
                if (r < 0)
                        return r;
        }
        for (int32_t i = 0; i >= 0; i = w->syms[i].next) {
                const struct sym *y = &w->syms[i];
                bool token = t->kind == KIND_SPM ? vocab_find(t, s + y->start, y->len) != NONE : y->id != NONE;
                if (token)
                        (*count)++;
                else if (byte_symbols) {
                        /* one per byte of the original text: a symbol is 1 or 2 bytes a byte */
                        for (uint32_t k = 0; k < y->len; k += ((uint8_t)s[y->start + k] & 0xE0) == 0xC0 ? 2 : 1)
                                (*count)++;
                } else
                        *count += y->len;
        }
        return 0;
}

/* ---- counting a stretch of plain text (between matched added tokens) ---- */

/* s with every space as "▁", after a "▁" when prefix. */
static int escape_spaces(struct scratch *b, const char *s, size_t n, bool prefix) {
        b->len = 0;
        int r = prefix ? scratch_put(b, SPACE_MARK, 3) : 0;
        for (size_t i = 0; i < n && r >= 0;) {
                size_t j = i;
                while (j < n && s[j] != ' ')
                        j++;
                r = scratch_put(b, s + i, j - i);
                if (r >= 0 && j < n)
                        r = scratch_put(b, SPACE_MARK, 3);
                i = j + 1;
        }
        return r;
}

static int count_plain(const struct tokenizer *t, struct work *w, struct scratch *b, const char *s, size_t n,
                       bool after_token, int64_t *count) {
        int r = 0;
        if (n == 0)
                return 0;
        switch (t->kind) {
        case KIND_SPM:
                r = escape_spaces(b, s, n, t->space_prefix && after_token);
                return r < 0 ? r : merge_count(t, w, b->p, b->len, false, count);
        case KIND_BPE_SPM:
                r = escape_spaces(b, s, n, t->space_prefix && after_token);
                if (r < 0)
                        return r;
                if (!t->metaspace_split)
                        return merge_count(t, w, b->p, b->len, false, count);
                /* each "▁" begins a piece */
                for (size_t i = 0; i < b->len && r >= 0;) {
                        size_t j = i + 1;
                        while (j < b->len && !(j + 3 <= b->len && memcmp(b->p + j, SPACE_MARK, 3) == 0))
                                j++;
                        r = merge_count(t, w, b->p + i, j - i, false, count);
                        i = j;
                }
                return r;
        case KIND_BPE_BYTES: {
                struct scratch enc = {0};
                for (size_t i = 0; i < n && r >= 0;) {
                        size_t e = pretoken_end(t, s, n, i);
                        enc.len = 0;
                        for (size_t k = i; k < e && r >= 0; k++)
                                r = scratch_put(&enc, t->byte_enc[(uint8_t)s[k]], t->byte_enc_len[(uint8_t)s[k]]);
                        if (r >= 0)
                                r = merge_count(t, w, enc.p, enc.len, true, count);
                        i = e;
                }
                free(enc.p);
                return r;
        }
        }
        return -EINVAL;
}

int tokenizer_count(const struct tokenizer *t, const char *text, size_t len, int64_t *ret) {
        struct work w = {0};
        struct scratch b = {0};
        int64_t count = 0;
        size_t plain = 0;
        bool after_token = true; /* the text's start counts as after a token (the "▁" prefix) */
        int r = 0;

        for (size_t i = 0; i < len && r >= 0;) {
                uint32_t hit = NONE;
                if (t->added_first[(uint8_t)text[i]])
                        for (size_t k = 0; k < t->n_added; k++) {
                                uint32_t id = t->added[k];
                                if (t->len[id] <= len - i && memcmp(text + i, t->arena.p + t->off[id], t->len[id]) == 0) {
                                        hit = id;
                                        break;
                                }
                        }
                if (hit == NONE) {
                        i++;
                        continue;
                }
                r = count_plain(t, &w, &b, text + plain, i - plain, after_token, &count);
                count++;
                after_token = true;
                i += t->len[hit];
                plain = i;
        }
        if (r >= 0 && plain < len)
                r = count_plain(t, &w, &b, text + plain, len - plain, after_token, &count);
        free(w.syms);
        free(w.heap);
        free(b.p);
        if (r < 0)
                return r;
        *ret = count;
        return 0;
}

const char *tokenizer_describe(const struct tokenizer *t) { return t->describe; }

void tokenizer_free(struct tokenizer *t) {
        if (!t)
                return;
        free(t->arena.p);
        free(t->off);
        free(t->len);
        free(t->score);
        free(t->hash);
        free(t->pairs);
        free(t->added);
        free(t);
}

/* ---- loading a GGUF ---- */

static enum tok_split split_of_pre(const char *pre, bool *ret_ignore_merges, bool *ret_known) {
        static const char *const llama3[] = {"llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral",
                                             "midm-2.0", "lfm2", "dbrx", "smaug-bpe"};
        static const char *const qwen2[] = {"qwen2", "qwen35", "stablelm2", "hunyuan", "solar-open"};
        static const char *const gpt2[] = {"gpt-2", "mpt", "olmo", "jais", "trillion", "granite-docling"};
        *ret_known = true;
        for (size_t i = 0; i < ELEMENTSOF(llama3); i++)
                if (strcmp(pre, llama3[i]) == 0) {
                        *ret_ignore_merges = i < 8; /* llama.cpp's llama3 names; dbrx and smaug merge */
                        return SPLIT_LLAMA3;
                }
        for (size_t i = 0; i < ELEMENTSOF(qwen2); i++)
                if (strcmp(pre, qwen2[i]) == 0)
                        return SPLIT_QWEN2;
        for (size_t i = 0; i < ELEMENTSOF(gpt2); i++)
                if (strcmp(pre, gpt2[i]) == 0)
                        return SPLIT_GPT2;
        *ret_known = false;
        return SPLIT_GPT2;
}

static const char *split_name(enum tok_split s) {
        return s == SPLIT_LLAMA3 ? "llama3" : s == SPLIT_QWEN2 ? "qwen2" : s == SPLIT_GPT2 ? "gpt2" : "none";
}

static int load_gguf(const char *path, struct tokenizer *t, char **ret_error) {
        _cleanup_(gguf_meta_freep) struct gguf_meta *m = NULL;
        const struct gguf_value *toks = NULL, *types = NULL, *scores = NULL, *merges = NULL;
        struct gguf_str model = {0}, pre = {0};
        char *err = NULL;
        int r = gguf_meta_read(path, 0, &m, &err);
        if (r < 0) {
                *ret_error = err;
                return r;
        }
        if (gguf_get_str(m, "tokenizer.ggml.model", &model) < 0 ||
            gguf_get_array(m, "tokenizer.ggml.tokens", GGUF_TYPE_STRING, &toks) < 0) {
                *ret_error = strdup_printf("'%s' has no tokenizer (tokenizer.ggml.model and .tokens)", path);
                return -ENOENT;
        }
        bool spm = model.len == 5 && memcmp(model.p, "llama", 5) == 0;
        bool bpe = model.len == 4 && memcmp(model.p, "gpt2", 4) == 0;
        if (!spm && !bpe) {
                *ret_error = strdup_printf("'%s': tokenizer.ggml.model '%.*s' is not counted (llama and gpt2 are)",
                                           path, (int)MIN(model.len, 64), model.p);
                return -ENOTSUP;
        }
        if (toks->arr.n == 0 || toks->arr.n > TOKENIZER_MAX_VOCAB) {
                *ret_error = strdup_printf("'%s': %llu tokens (1 to %u allowed)", path,
                                           (unsigned long long)toks->arr.n, TOKENIZER_MAX_VOCAB);
                return -EBADMSG;
        }
        r = gguf_get_array(m, "tokenizer.ggml.token_type", GGUF_TYPE_INT32, &types);
        if (r == -EINVAL)
                r = gguf_get_array(m, "tokenizer.ggml.token_type", GGUF_TYPE_UINT32, &types);
        if (r == 0 && types->arr.n != toks->arr.n)
                r = -EINVAL;
        if (r == -EINVAL) {
                *ret_error = strdup_printf("'%s': tokenizer.ggml.token_type does not match the tokens", path);
                return -EBADMSG;
        }
        if (spm) {
                r = gguf_get_array(m, "tokenizer.ggml.scores", GGUF_TYPE_FLOAT32, &scores);
                if (r < 0 || scores->arr.n != toks->arr.n) {
                        *ret_error = strdup_printf("'%s': tokenizer.ggml.scores is missing or does not match the tokens",
                                                   path);
                        return -EBADMSG;
                }
        } else {
                r = gguf_get_array(m, "tokenizer.ggml.merges", GGUF_TYPE_STRING, &merges);
                if (r < 0 || merges->arr.n > TOKENIZER_MAX_MERGES) {
                        *ret_error = strdup_printf("'%s': tokenizer.ggml.merges is missing, not strings or over %u", path,
                                                   TOKENIZER_MAX_MERGES);
                        return -EBADMSG;
                }
        }
        uint32_t n = (uint32_t)toks->arr.n;
        if ((r = vocab_init(t, n)) < 0)
                return r;
        if (spm && !(t->score = malloc(n * sizeof(*t->score))))
                return -ENOMEM;
        struct gguf_strs it = {toks->arr.data, toks->arr.n};
        struct gguf_str s;
        for (uint32_t i = 0; gguf_strs_next(&it, &s); i++) {
                if ((r = vocab_set(t, i, s.p, s.len, &err)) < 0) {
                        *ret_error = err ? strdup_printf("'%s': %s", path, err) : NULL;
                        free(err);
                        return r;
                }
                if (spm) {
                        uint32_t bits = gguf_array_u32(scores, i);
                        memcpy(&t->score[i], &bits, 4);
                }
                /* user-defined tokens are matched in the text, as llama.cpp does with
                 * parse_special off */
                if (types && gguf_array_u32(types, i) == 4 && (r = added_push(t, i)) < 0)
                        return r;
        }
        added_sort(t);
        bool known = true;
        if (spm) {
                t->kind = KIND_SPM;
                t->space_prefix = true;
                bool b;
                if (gguf_get_bool(m, "tokenizer.ggml.add_space_prefix", &b) == 0)
                        t->space_prefix = b;
                snprintf(t->describe, sizeof(t->describe), "GGUF llama (SentencePiece%s), %u tokens",
                         t->space_prefix ? "" : ", no space prefix", n);
                return 0;
        }
        t->kind = KIND_BPE_BYTES;
        byte_encoder_init(t);
        char pre_name[64] = "default";
        if (gguf_get_str(m, "tokenizer.ggml.pre", &pre) == 0)
                snprintf(pre_name, sizeof(pre_name), "%.*s", (int)MIN(pre.len, 63), pre.p);
        t->split = split_of_pre(pre_name, &t->ignore_merges, &known);
        if ((r = pairs_init(t, merges->arr.n)) < 0)
                return r;
        it = (struct gguf_strs){merges->arr.data, merges->arr.n};
        for (uint32_t i = 0; gguf_strs_next(&it, &s); i++)
                merge_add_line(t, s.p, s.len, i);
        snprintf(t->describe, sizeof(t->describe), "GGUF gpt2 (byte-level BPE, pre-tokenizer '%s'%s%s), %u tokens, %u merges",
                 pre_name, known ? " as " : " unknown, counted as ", split_name(t->split), n, t->n_merges);
        return 0;
}

/* ---- loading a tokenizer.json ---- */

static const char *json_str(const json_t *o, const char *key) {
        const char *s = json_string_value(json_object_get(o, key));
        return s ? s : "";
}

/* Finds the first object of type type in a pre-tokenizer or normalizer (a Sequence is
 * searched in order). */
static const json_t *find_step(const json_t *o, const char *type) {
        if (!json_is_object(o))
                return NULL;
        if (strcmp(json_str(o, "type"), type) == 0)
                return o;
        const json_t *seq = json_object_get(o, "pretokenizers");
        if (!seq)
                seq = json_object_get(o, "normalizers");
        size_t i;
        const json_t *e;
        json_array_foreach(seq, i, e) {
                const json_t *f = find_step(e, type);
                if (f)
                        return f;
        }
        return NULL;
}

/* The split of a Split pre-tokenizer's pattern: how it treats letters and digits. */
static enum tok_split split_of_pattern(const char *p) {
        bool llama_letters = strstr(p, "[^\\r\\n\\p{L}\\p{N}]?") != NULL;
        if (strstr(p, "\\p{N}{1,3}"))
                return SPLIT_LLAMA3;
        if (llama_letters)
                return SPLIT_QWEN2;
        return SPLIT_GPT2;
}

static int load_json(const char *path, const char *data, size_t size, struct tokenizer *t, char **ret_error) {
        json_error_t jerr;
        _cleanup_json_ json_t *root = json_loadb(data, size, 0, &jerr);
        char *err = NULL;
        int r;
        if (!root || !json_is_object(root)) {
                *ret_error = strdup_printf("'%s': not JSON (line %d: %s)", path, jerr.line, root ? "not an object" : jerr.text);
                return -EBADMSG;
        }
        const json_t *model = json_object_get(root, "model");
        const char *type = json_str(model, "type");
        const json_t *vocab = json_object_get(model, "vocab");
        const json_t *merges = json_object_get(model, "merges");
        const json_t *added = json_object_get(root, "added_tokens");
        if (!json_is_object(model)) {
                *ret_error = strdup_printf("'%s' has no \"model\" (not a tokenizer.json)", path);
                return -EBADMSG;
        }
        if (strcmp(type, "BPE") != 0 && !(type[0] == 0 && json_is_object(vocab) && json_is_array(merges))) {
                *ret_error = strdup_printf("'%s': model type '%.40s' is not counted (BPE is)", path, type);
                return -ENOTSUP;
        }
        if (!json_is_object(vocab) || !json_is_array(merges) || json_object_size(vocab) > TOKENIZER_MAX_VOCAB ||
            json_array_size(merges) > TOKENIZER_MAX_MERGES || (added && !json_is_array(added))) {
                *ret_error = strdup_printf("'%s': model.vocab (an object), model.merges (an array) or added_tokens is "
                                           "missing, malformed or too large", path);
                return -EBADMSG;
        }
        /* ids: the largest one says the size */
        json_int_t max_id = -1;
        const char *key;
        const json_t *v;
        json_object_foreach((json_t *)vocab, key, v) {
                if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) >= TOKENIZER_MAX_VOCAB) {
                        *ret_error = strdup_printf("'%s': vocab entry '%.40s' has no valid id", path, key);
                        return -EBADMSG;
                }
                max_id = MAX(max_id, json_integer_value(v));
        }
        size_t i;
        json_array_foreach(added, i, v) {
                json_int_t id = json_integer_value(json_object_get(v, "id"));
                if (!json_is_integer(json_object_get(v, "id")) || id < 0 || id >= TOKENIZER_MAX_VOCAB ||
                    !json_is_string(json_object_get(v, "content"))) {
                        *ret_error = strdup_printf("'%s': added_tokens[%zu] has no valid id or content", path, i);
                        return -EBADMSG;
                }
                max_id = MAX(max_id, id);
        }
        if (max_id < 0) {
                *ret_error = strdup_printf("'%s': the vocabulary is empty", path);
                return -EBADMSG;
        }
        if ((r = vocab_init(t, (uint32_t)max_id + 1)) < 0)
                return r;
        json_object_foreach((json_t *)vocab, key, v) {
                if ((r = vocab_set(t, (uint32_t)json_integer_value(v), key, strlen(key), &err)) < 0)
                        goto bad;
        }
        json_array_foreach(added, i, v) {
                uint32_t id = (uint32_t)json_integer_value(json_object_get(v, "id"));
                const char *content = json_str(v, "content");
                if (t->len[id] == 0 && (r = vocab_set(t, id, content, strlen(content), &err)) < 0)
                        goto bad;
                if (t->len[id] && !json_is_true(json_object_get(v, "special")) && (r = added_push(t, id)) < 0)
                        return r;
        }
        added_sort(t);
        if ((r = pairs_init(t, json_array_size(merges))) < 0)
                return r;
        json_array_foreach(merges, i, v) {
                if (json_is_string(v))
                        merge_add_line(t, json_string_value(v), json_string_length(v), (uint32_t)i);
                else if (json_is_array(v) && json_array_size(v) == 2 && json_is_string(json_array_get(v, 0)) &&
                         json_is_string(json_array_get(v, 1))) {
                        const json_t *a = json_array_get(v, 0), *b = json_array_get(v, 1);
                        merge_add(t, json_string_value(a), json_string_length(a), json_string_value(b),
                                  json_string_length(b), (uint32_t)i);
                } else {
                        *ret_error = strdup_printf("'%s': merges[%zu] is neither \"a b\" nor [\"a\", \"b\"]", path, i);
                        return -EBADMSG;
                }
        }
        t->ignore_merges = json_is_true(json_object_get(model, "ignore_merges"));

        const json_t *pre = json_object_get(root, "pre_tokenizer");
        const json_t *norm = json_object_get(root, "normalizer");
        const json_t *bl = find_step(pre, "ByteLevel"), *split = find_step(pre, "Split");
        const json_t *meta = find_step(pre, "Metaspace");
        const json_t *repl = find_step(norm, "Replace"), *prepend = find_step(norm, "Prepend");
        const char *how;
        if (bl) {
                t->kind = KIND_BPE_BYTES;
                byte_encoder_init(t);
                const char *pattern = json_str(json_object_get(split, "pattern"), "Regex");
                if (split && pattern[0])
                        t->split = split_of_pattern(pattern);
                else if (!json_is_false(json_object_get(bl, "use_regex")))
                        t->split = SPLIT_GPT2;
                else {
                        *ret_error = strdup_printf("'%s': a ByteLevel pre-tokenizer without a split pattern is not "
                                                   "counted", path);
                        return -ENOTSUP;
                }
                how = "byte-level";
        } else if (meta) {
                t->kind = KIND_BPE_SPM;
                const char *scheme = json_str(meta, "prepend_scheme");
                const json_t *aps = json_object_get(meta, "add_prefix_space");
                t->space_prefix = scheme[0] ? strcmp(scheme, "never") != 0 : !json_is_false(aps);
                t->metaspace_split = !json_is_false(json_object_get(meta, "split"));
                how = "SentencePiece-style (Metaspace)";
        } else if (repl && (!pre || json_is_null(pre))) {
                t->kind = KIND_BPE_SPM;
                t->space_prefix = prepend != NULL;
                how = "SentencePiece-style";
        } else {
                *ret_error = strdup_printf("'%s': pre-tokenizer '%.40s' is not counted (ByteLevel and Metaspace are)",
                                           path, json_str(pre, "type"));
                return -ENOTSUP;
        }
        snprintf(t->describe, sizeof(t->describe), "tokenizer.json BPE (%s%s%s%s), %u tokens, %u merges", how,
                 t->kind == KIND_BPE_BYTES ? ", " : "", t->kind == KIND_BPE_BYTES ? split_name(t->split) : "",
                 t->kind == KIND_BPE_BYTES ? " split" : json_is_true(json_object_get(model, "byte_fallback")) ? ", byte fallback" : "",
                 t->n, t->n_merges);
        return 0;
bad:
        *ret_error = err ? strdup_printf("'%s': %s", path, err) : NULL;
        free(err);
        return r;
}

/* ---- opening ---- */

int tokenizer_open(const char *path, struct tokenizer **ret, char **ret_error) {
        _cleanup_free_ char *joined = NULL, *data = NULL;
        _cleanup_close_ int fd = -1;
        char *err = NULL;
        struct stat st;
        size_t size = 0;
        int r;

        if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
                joined = strdup_printf("%s/tokenizer.json", path);
                if (!joined)
                        return -ENOMEM;
                path = joined;
        }
        /* O_NONBLOCK: a FIFO must not block the open; it is refused below */
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
        if (fd < 0 || fstat(fd, &st) < 0) {
                r = -errno;
                if (ret_error)
                        *ret_error = strdup_printf("cannot open '%s': %s", path, strerror(-r));
                return r;
        }
        if (!S_ISREG(st.st_mode)) {
                if (ret_error)
                        *ret_error = strdup_printf("'%s' is not a regular file", path);
                return -EBADMSG;
        }
        char magic[4] = {0};
        ssize_t got = pread(fd, magic, 4, 0);
        struct tokenizer *t = calloc(1, sizeof(*t));
        if (!t)
                return -ENOMEM;
        if (got == 4 && memcmp(magic, GGUF_MAGIC, 4) == 0)
                r = load_gguf(path, t, &err);
        else if ((size_t)st.st_size > TOKENIZER_MAX_FILE) {
                err = strdup_printf("'%s' is %lld bytes, over the %zu MiB a tokenizer.json may have", path,
                                    (long long)st.st_size, TOKENIZER_MAX_FILE >> 20);
                r = -EFBIG;
        } else {
                r = read_fd_capped(fd, TOKENIZER_MAX_FILE, &data, &size);
                if (r < 0)
                        err = strdup_printf("cannot read '%s': %s", path, strerror(-r));
                else
                        r = load_json(path, data, size, t, &err);
        }
        if (r < 0) {
                tokenizer_free(t);
                if (ret_error)
                        *ret_error = err ? err : strdup_printf("'%s': %s", path, strerror(-r));
                else
                        free(err);
                return r;
        }
        *ret = t;
        return 0;
}
