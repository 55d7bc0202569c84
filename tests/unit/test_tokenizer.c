/* test_tokenizer.c -- the sweep's tokenizer on tiny vocabularies written here: SentencePiece
 * and byte-level BPE GGUFs (the testbed's writer), tokenizer.json texts, and bad files. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>
#include <jansson.h>

#include "base/utf8.h"
#include "base/util.h"
#include "text/buf.h"
#include "io/gguf.h"
#include "io/tokenizer.h"

#include "../../testbed/gguf_writer.h"

static char dir[] = "/tmp/test-tokenizer-XXXXXX";

static char *path_in(const char *name) { return strdup_printf("%s/%s", dir, name); }

static void write_bytes(const char *name, const void *p, size_t n) {
        _cleanup_free_ char *path = path_in(name);
        assert_int_equal(write_file_replace(path, p, n), 0);
}

static int64_t count(const struct tokenizer *t, const char *text) {
        int64_t n = -1;
        assert_int_equal(tokenizer_count(t, text, strlen(text), &n), 0);
        return n;
}

static struct tokenizer *open_ok(const char *name) {
        _cleanup_free_ char *path = path_in(name), *err = NULL;
        struct tokenizer *t = NULL;
        int r = tokenizer_open(path, &t, &err);
        if (r < 0)
                fail_msg("cannot open %s: %d %s", name, r, err ? err : "");
        return t;
}

/* Opens name expecting error want; the message must name the file and contain needle. */
static void open_fails(const char *name, int want, const char *needle) {
        _cleanup_free_ char *path = path_in(name), *err = NULL;
        struct tokenizer *t = NULL;
        int r = tokenizer_open(path, &t, &err);
        if (r != want)
                fail_msg("%s: got %d, want %d (%s)", name, r, want, err ? err : "");
        assert_null(t);
        assert_non_null(err);
        assert_null(strchr(err, '\n'));
        if (!strstr(err, needle))
                fail_msg("%s: error '%s' lacks '%s'", name, err, needle);
}

/* ---- SentencePiece (GGUF "llama") ---- */

struct piece {
        const char *text;
        float score;
        int type;
};

/* <unk> <s> </s>, the 256 byte tokens, then pieces. */
static void write_spm(const char *name, const struct piece *pieces, size_t n, int add_space_prefix, const char *model) {
        size_t total = 3 + 256 + n;
        const char **texts = calloc(total, sizeof(*texts));
        char(*bytes)[8] = calloc(256, 8);
        float *scores = calloc(total, sizeof(float));
        int32_t *types = calloc(total, sizeof(int32_t));
        texts[0] = "<unk>", types[0] = 2;
        texts[1] = "<s>", types[1] = 3;
        texts[2] = "</s>", types[2] = 3;
        for (int b = 0; b < 256; b++) {
                snprintf(bytes[b], 8, "<0x%02X>", b);
                texts[3 + b] = bytes[b];
                types[3 + b] = 6;
        }
        for (size_t i = 0; i < n; i++) {
                texts[259 + i] = pieces[i].text;
                scores[259 + i] = pieces[i].score;
                types[259 + i] = pieces[i].type ? pieces[i].type : 1;
        }
        struct gguf_writer w;
        struct buf out;
        gguf_writer_init(&w, 32);
        gguf_writer_kv_str(&w, "general.architecture", "llama");
        gguf_writer_kv_str(&w, "tokenizer.ggml.model", model);
        gguf_writer_kv_strv(&w, "tokenizer.ggml.tokens", texts, total);
        gguf_writer_kv_f32v(&w, "tokenizer.ggml.scores", scores, total);
        gguf_writer_kv_i32v(&w, "tokenizer.ggml.token_type", types, total);
        if (add_space_prefix >= 0)
                gguf_writer_kv_bool(&w, "tokenizer.ggml.add_space_prefix", add_space_prefix);
        assert_int_equal(gguf_writer_finish(&w, &out), 0);
        gguf_writer_release(&w);
        write_bytes(name, out.data, out.len);
        buf_release(&out);
        free(texts);
        free(bytes);
        free(scores);
        free(types);
}

#define S "\xe2\x96\x81" /* "▁" */

static const struct piece spm_pieces[] = {
        {S, -10, 0},     {"a", -10, 0},        {"b", -10, 0},         {"c", -10, 0},   {"d", -10, 0},
        {"h", -10, 0},   {"e", -10, 0},        {"l", -10, 0},         {"o", -10, 0},   {"\n", -10, 0},
        {"\xc3\xa9", -10, 0}, /* é */
        {S "h", -5, 0},  {"he", -1, 0},        {"ll", -2, 0},         {"lo", -3, 0},   {"hel", -1.5f, 0},
        {"hello", -0.5f, 0}, {S "hello", -0.1f, 0},
        /* "abcd": bc (highest) first leaves a bc d; ab first would give ab cd */
        {"bc", -0.2f, 0}, {"ab", -0.3f, 0},   {"cd", -0.4f, 0},
        {"<tool>", 0, 4}, /* user-defined: matched in the text */
};

static void test_spm_gguf(void **state) {
        (void)state;
        write_spm("spm.gguf", spm_pieces, ELEMENTSOF(spm_pieces), -1, "llama");
        struct tokenizer *t = open_ok("spm.gguf");
        assert_non_null(strstr(tokenizer_describe(t), "GGUF llama (SentencePiece), 281 tokens"));
        assert_int_equal(count(t, ""), 0);
        /* "▁hello" by score order: he, hel, lo, hello, ▁hello */
        assert_int_equal(count(t, "hello"), 1);
        assert_int_equal(count(t, "hello hello"), 2);
        assert_int_equal(count(t, " hello"), 2);   /* ▁ ▁hello */
        assert_int_equal(count(t, "abcd"), 4);     /* ▁ a bc d */
        assert_int_equal(count(t, "a\nb"), 4);     /* ▁ a \n b */
        assert_int_equal(count(t, "\xc3\xa9"), 2); /* ▁ é */
        /* byte fallback: one token per byte of a character outside the vocabulary */
        assert_int_equal(count(t, "x"), 2);                 /* ▁ <0x78> */
        assert_int_equal(count(t, "\xc3\x97"), 3);          /* × */
        assert_int_equal(count(t, "\xe4\xbd\xa0"), 4);      /* 你 */
        assert_int_equal(count(t, "\xf0\x9f\x98\x80"), 5);  /* 😀 */
        /* 12 digits, 2 spaces, 1 "!" */
        assert_int_equal(count(t, "123 456 !"), 1 + 3 + 1 + 3 + 1 + 1);
        /* a user-defined token is one token, and the text after it gets its "▁" */
        assert_int_equal(count(t, "<tool>hello"), 2);
        assert_int_equal(count(t, "hello<tool>"), 2);
        assert_int_equal(count(t, "<tool><tool>"), 2);
        /* a control token's text is plain text: ▁ < s > */
        assert_int_equal(count(t, "<s>"), 4);
        /* a NUL inside the text is a byte like another */
        int64_t n = -1;
        assert_int_equal(tokenizer_count(t, "a\0b", 3, &n), 0);
        assert_int_equal(n, 4);
        tokenizer_free(t);

        write_spm("spm-noprefix.gguf", spm_pieces, ELEMENTSOF(spm_pieces), 0, "llama");
        t = open_ok("spm-noprefix.gguf");
        assert_non_null(strstr(tokenizer_describe(t), "no space prefix"));
        assert_int_equal(count(t, "hello"), 1); /* h e l l o -> hello */
        assert_int_equal(count(t, "abcd"), 3);  /* a bc d */
        assert_int_equal(count(t, " hello"), 1); /* ▁hello: the text's own space */
        assert_int_equal(count(t, "x"), 1);
        tokenizer_free(t);
}

/* ---- byte-level BPE ---- */

/* GPT-2's byte-to-code-point map, written as a test oracle. */
static size_t enc_byte(uint8_t b, char out[4]) {
        uint32_t cp = b;
        if (!((b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174)) {
                uint32_t k = 0;
                for (uint32_t x = 0; x < b; x++)
                        k += !((x >= 33 && x <= 126) || (x >= 161 && x <= 172) || x >= 174);
                cp = 256 + k;
        }
        return utf8_encode(cp, out);
}

/* text's bytes mapped (the vocabulary's spelling); caller frees. */
static char *enc(const char *text) {
        struct buf b;
        buf_init(&b, 0);
        for (const char *p = text; *p; p++) {
                char out[4];
                size_t n = enc_byte((uint8_t)*p, out);
                assert_int_equal(buf_append(&b, out, n), 0);
        }
        return buf_detach(&b);
}

/* Merges, as plain text pairs (mapped when written), lowest rank first. */
static const char *const bpe_merges[][2] = {
        {"3", "4"},   {"1", "2"},                   /* "1234": gpt2 12|34, llama3 12 3|4, qwen2 1|2|3|4 */
        {"D", "O"},   {"DO", "N"},   {"'", "T"},    /* "DON'T": gpt2 DON|'|T, llama3 DON|'T */
        {"!", "!"},   {"!!", "\n"},                 /* "!!\n": llama3 one piece, gpt2 !!|\n */
        {" ", " "},   {" ", "b"},                   /* "a   b": a|"  "|" b" */
        {"x", "\xc3"}, {"x", "\xe4"}, {"x", "\xf0"}, /* x + a letter's first byte: one piece */
        {"(", "h"},                                 /* "(h": llama3 one piece, gpt2 (|h */
};

static void write_bpe(const char *name, const char *pre) {
        const char *extra[] = {"xyz", "<|endoftext|>", "<tool>"};
        size_t nm = ELEMENTSOF(bpe_merges), total = 256 + nm + ELEMENTSOF(extra);
        char **texts = calloc(total, sizeof(*texts)), **merges = calloc(nm, sizeof(*merges));
        int32_t *types = calloc(total, sizeof(int32_t));
        for (int b = 0; b < 256; b++) {
                char out[4];
                size_t n = enc_byte((uint8_t)b, out);
                texts[b] = strndup(out, n);
                types[b] = 1;
        }
        for (size_t i = 0; i < nm; i++) {
                _cleanup_free_ char *a = enc(bpe_merges[i][0]), *b = enc(bpe_merges[i][1]);
                merges[i] = strdup_printf("%s %s", a, b);
                texts[256 + i] = strdup_printf("%s%s", a, b);
                types[256 + i] = 1;
        }
        for (size_t i = 0; i < ELEMENTSOF(extra); i++) {
                texts[256 + nm + i] = strdup(extra[i]);
                types[256 + nm + i] = i == 1 ? 3 : i == 2 ? 4 : 1;
        }
        struct gguf_writer w;
        struct buf out;
        gguf_writer_init(&w, 32);
        gguf_writer_kv_str(&w, "tokenizer.ggml.model", "gpt2");
        if (pre)
                gguf_writer_kv_str(&w, "tokenizer.ggml.pre", pre);
        gguf_writer_kv_strv(&w, "tokenizer.ggml.tokens", (const char *const *)texts, total);
        gguf_writer_kv_i32v(&w, "tokenizer.ggml.token_type", types, total);
        gguf_writer_kv_strv(&w, "tokenizer.ggml.merges", (const char *const *)merges, nm);
        assert_int_equal(gguf_writer_finish(&w, &out), 0);
        gguf_writer_release(&w);
        write_bytes(name, out.data, out.len);
        buf_release(&out);
        for (size_t i = 0; i < total; i++)
                free(texts[i]);
        for (size_t i = 0; i < nm; i++)
                free(merges[i]);
        free(texts);
        free(merges);
        free(types);
}

/* The counts every byte-level tokenizer gives whatever its split. */
static void common_bpe(const struct tokenizer *t) {
        assert_int_equal(count(t, ""), 0);
        assert_int_equal(count(t, "a   b"), 3);                 /* a, "  ", " b" */
        assert_int_equal(count(t, "a  "), 2);                   /* a, "  " (at the end: all of it) */
        assert_int_equal(count(t, "x\xc3\xa9"), 2);             /* xé: one piece, [xÃ] © */
        assert_int_equal(count(t, "x\xe4\xbd\xa0"), 3);         /* x你: one piece, [xä] ½ ł */
        assert_int_equal(count(t, "x\xc3\x97"), 3);             /* x×: × is not a letter */
        assert_int_equal(count(t, "x\xf0\x9f\x98\x80"), 5);     /* x😀: nor is 😀 */
        assert_int_equal(count(t, "<tool>"), 1);                /* user-defined */
        assert_int_equal(count(t, "<|endoftext|>"), 13);        /* control: plain text, one byte each */
}

static void test_bpe_gguf(void **state) {
        (void)state;
        write_bpe("llama3.gguf", "llama-bpe");
        struct tokenizer *t = open_ok("llama3.gguf");
        assert_non_null(strstr(tokenizer_describe(t), "pre-tokenizer 'llama-bpe' as llama3"));
        common_bpe(t);
        assert_int_equal(count(t, "1234"), 3);   /* 123|4: 12 3 4 */
        assert_int_equal(count(t, "DON'T"), 2);  /* DON|'T */
        assert_int_equal(count(t, "!!\n"), 1);
        assert_int_equal(count(t, "(h"), 1);
        assert_int_equal(count(t, "xyz"), 1);    /* a token as a whole: merges ignored */
        tokenizer_free(t);

        write_bpe("qwen2.gguf", "qwen2");
        t = open_ok("qwen2.gguf");
        common_bpe(t);
        assert_int_equal(count(t, "1234"), 4);
        assert_int_equal(count(t, "DON'T"), 2);
        assert_int_equal(count(t, "xyz"), 3);    /* no merge makes it */
        tokenizer_free(t);

        write_bpe("gpt2.gguf", "gpt-2");
        t = open_ok("gpt2.gguf");
        common_bpe(t);
        assert_int_equal(count(t, "1234"), 2);   /* 12 34 */
        assert_int_equal(count(t, "DON'T"), 3);  /* DON ' T: contractions are lowercase */
        assert_int_equal(count(t, "don't"), 5);  /* d o n, then 't: no merge joins ' and t */
        assert_int_equal(count(t, "!!\n"), 2);
        assert_int_equal(count(t, "(h"), 2);
        tokenizer_free(t);

        write_bpe("nopre.gguf", NULL);
        t = open_ok("nopre.gguf");
        assert_non_null(strstr(tokenizer_describe(t), "'default' unknown, counted as gpt2"));
        assert_int_equal(count(t, "1234"), 2);
        tokenizer_free(t);
}

/* ---- tokenizer.json ---- */

static void write_json(const char *name, json_t *root) {
        char *s = json_dumps(root, JSON_COMPACT);
        assert_non_null(s);
        write_bytes(name, s, strlen(s));
        free(s);
        json_decref(root);
}

static json_t *bpe_json(const char *pattern) {
        json_t *vocab = json_object(), *merges = json_array(), *added = json_array();
        int id = 0;
        for (int b = 0; b < 256; b++) {
                char out[5] = {0};
                enc_byte((uint8_t)b, out);
                json_object_set_new(vocab, out, json_integer(id++));
        }
        for (size_t i = 0; i < ELEMENTSOF(bpe_merges); i++) {
                _cleanup_free_ char *a = enc(bpe_merges[i][0]), *b = enc(bpe_merges[i][1]);
                _cleanup_free_ char *ab = strdup_printf("%s%s", a, b);
                json_object_set_new(vocab, ab, json_integer(id++));
                /* both spellings of a merge */
                if (i % 2)
                        json_array_append_new(merges, json_pack("[ss]", a, b));
                else
                        json_array_append_new(merges, json_sprintf("%s %s", a, b));
        }
        json_array_append_new(added, json_pack("{sisssb}", "id", id++, "content", "<tool>", "special", 0));
        json_array_append_new(added, json_pack("{sisssb}", "id", id++, "content", "<|eot|>", "special", 1));
        json_t *pre = pattern ? json_pack("{ss s[{ss s{ss}} {ssso}]}", "type", "Sequence", "pretokenizers", "type",
                                          "Split", "pattern", "Regex", pattern, "type", "ByteLevel", "use_regex",
                                          json_false())
                              : json_pack("{sssb}", "type", "ByteLevel", "use_regex", 1);
        return json_pack("{s{ssso so} so so}", "model", "type", "BPE", "vocab", vocab, "merges", merges, "added_tokens",
                         added, "pre_tokenizer", pre);
}

#define LLAMA3_PATTERN                                                                                            \
        "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[" \
        "\\r\\n]+|\\s+(?!\\S)|\\s+"
#define QWEN2_PATTERN                                                                                             \
        "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|" \
        "\\s+(?!\\S)|\\s+"

static void test_bpe_json(void **state) {
        (void)state;
        write_json("llama3.json", bpe_json(LLAMA3_PATTERN));
        struct tokenizer *t = open_ok("llama3.json");
        assert_non_null(strstr(tokenizer_describe(t), "tokenizer.json BPE (byte-level, llama3 split)"));
        assert_int_equal(count(t, "1234"), 3);
        assert_int_equal(count(t, "DON'T"), 2);
        assert_int_equal(count(t, "<tool>"), 1);   /* added, not special: matched */
        assert_int_equal(count(t, "<|eot|>"), 7);  /* special: plain text */
        assert_int_equal(count(t, "a   b"), 3);
        tokenizer_free(t);

        write_json("qwen2.json", bpe_json(QWEN2_PATTERN));
        t = open_ok("qwen2.json");
        assert_int_equal(count(t, "1234"), 4);
        tokenizer_free(t);

        write_json("gpt2.json", bpe_json(NULL));
        t = open_ok("gpt2.json");
        assert_int_equal(count(t, "1234"), 2);
        assert_int_equal(count(t, "DON'T"), 3);
        tokenizer_free(t);

        /* a directory holding a tokenizer.json */
        _cleanup_free_ char *sub = path_in("model"), *file = path_in("model/tokenizer.json");
        assert_int_equal(mkdir(sub, 0700), 0);
        write_json("model/tokenizer.json", bpe_json(LLAMA3_PATTERN));
        t = open_ok("model");
        assert_int_equal(count(t, "1234"), 3);
        tokenizer_free(t);
        unlink(file);
        open_fails("model", -ENOENT, "tokenizer.json");
        rmdir(sub);
}

/* SentencePiece-style BPE (Metaspace, byte fallback), as Llama 2 and Mistral ship it. */
static void test_metaspace_json(void **state) {
        (void)state;
        json_t *vocab = json_object();
        int id = 0;
        for (int b = 0; b < 256; b++) {
                char name[8];
                snprintf(name, sizeof(name), "<0x%02X>", b);
                json_object_set_new(vocab, name, json_integer(id++));
        }
        const char *pieces[] = {S, "h", "i", S "h", S "hi", "\xc3\xa9"};
        for (size_t i = 0; i < ELEMENTSOF(pieces); i++)
                json_object_set_new(vocab, pieces[i], json_integer(id++));
        json_t *root = json_pack("{s{sssos[ss]sb} s{ssssss}}", "model", "type", "BPE", "vocab", vocab, "merges",
                                 S " h", S "h i", "byte_fallback", 1, "pre_tokenizer", "type", "Metaspace",
                                 "replacement", S, "prepend_scheme", "first");
        write_json("metaspace.json", root);
        struct tokenizer *t = open_ok("metaspace.json");
        assert_non_null(strstr(tokenizer_describe(t), "SentencePiece-style"));
        assert_int_equal(count(t, "hi"), 1);            /* ▁hi */
        assert_int_equal(count(t, "hi hi"), 2);
        assert_int_equal(count(t, "hi x"), 3);          /* ▁hi ▁ <0x78> */
        assert_int_equal(count(t, "\xc3\xa9"), 2);      /* ▁ é */
        assert_int_equal(count(t, "\xc3\x97"), 3);      /* ▁ <0xC3> <0x97> */
        tokenizer_free(t);
}

/* ---- bad files ---- */

static void test_bad_files(void **state) {
        (void)state;
        open_fails("missing.gguf", -ENOENT, "missing.gguf");

        /* every prefix of a valid GGUF is refused with one line */
        write_spm("full.gguf", spm_pieces, ELEMENTSOF(spm_pieces), -1, "llama");
        _cleanup_free_ char *full = path_in("full.gguf");
        _cleanup_free_ char *data = NULL;
        size_t len = 0;
        assert_int_equal(read_file_capped(full, 1 << 20, &data, &len), 0);
        struct gguf_meta *m = NULL;
        char *err = NULL;
        assert_int_equal(gguf_meta_read(full, 0, &m, &err), 0);
        size_t end = m->end;
        gguf_meta_free(m);
        assert_true(end > 4096 && end <= len);
        for (size_t n = 24; n < end; n += 97) {
                write_bytes("cut.gguf", data, n);
                open_fails("cut.gguf", -EBADMSG, "cut.gguf");
        }
        /* a token array claiming 2^40 strings: refused, nothing that size allocated */
        char *p = memmem(data, len, "tokenizer.ggml.tokens", 21);
        assert_non_null(p);
        uint64_t huge = UINT64_C(1) << 40;
        memcpy(p + 21 + 4 + 4, &huge, 8); /* after the key: the value type, the element type, the count */
        write_bytes("huge.gguf", data, len);
        open_fails("huge.gguf", -EBADMSG, "beyond the file");

        /* metadata past the reader's cap */
        assert_int_equal(gguf_meta_read(full, 4096, &m, &err), -EFBIG);
        assert_non_null(strstr(err, "4 KiB"));
        free(err);

        write_spm("bert.gguf", spm_pieces, ELEMENTSOF(spm_pieces), -1, "bert");
        open_fails("bert.gguf", -ENOTSUP, "'bert'");
        struct gguf_writer w;
        struct buf out;
        gguf_writer_init(&w, 32);
        gguf_writer_kv_str(&w, "general.architecture", "llama");
        assert_int_equal(gguf_writer_finish(&w, &out), 0);
        gguf_writer_release(&w);
        write_bytes("notok.gguf", out.data, out.len);
        buf_release(&out);
        open_fails("notok.gguf", -ENOENT, "no tokenizer");

        write_bytes("bad.json", "{\"model\": {\"type\": \"BPE\", ", 26);
        open_fails("bad.json", -EBADMSG, "not JSON");
        write_json("wp.json", json_pack("{s{sss{si}}}", "model", "type", "WordPiece", "vocab", "a", 0));
        open_fails("wp.json", -ENOTSUP, "WordPiece");
        write_json("badmerge.json", json_pack("{s{sss{si}s[i]}}", "model", "type", "BPE", "vocab", "a", 0, "merges", 3));
        open_fails("badmerge.json", -EBADMSG, "merges[0]");
        write_json("badid.json", json_pack("{s{sss{ss}s[]}}", "model", "type", "BPE", "vocab", "a", "x", "merges"));
        open_fails("badid.json", -EBADMSG, "no valid id");
        write_bytes("text.txt", "hello", 5);
        open_fails("text.txt", -EBADMSG, "not JSON");
}

static int setup(void **state) {
        (void)state;
        return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state) {
        (void)state;
        _cleanup_free_ char *cmd = strdup_printf("rm -rf '%s'", dir);
        return system(cmd) == 0 ? 0 : -1;
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_spm_gguf),       cmocka_unit_test(test_bpe_gguf),
                cmocka_unit_test(test_bpe_json),       cmocka_unit_test(test_metaspace_json),
                cmocka_unit_test(test_bad_files),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
