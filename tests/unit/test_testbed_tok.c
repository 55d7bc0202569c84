/* test_testbed_tok.c -- tokenizer, chat rendering and the UTF-8 detokenizer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <string.h>

#include "../../testbed/gguf.h"
#include "../../testbed/synth.h"
#include "../../testbed/tok.h"

static struct buf file;
static struct gguf *g;
static struct tok_vocab v;

static int setup(void **state) {
        struct synth_cfg c = synth_default();
        c.n_embd = 32;
        c.n_head = 2;
        c.n_head_kv = 1;
        c.n_ff = 32;
        c.n_layer = 1;
        c.n_expert = 2;
        c.n_expert_used = 1;
        char *err = NULL;
        if (synth_model(&c, &file) < 0 || gguf_parse(file.data, file.len, &g, &err) < 0 ||
            tok_vocab_load(g, &v, &err) < 0)
                return -1;
        return 0;
}

static int teardown(void **state) {
        tok_vocab_release(&v);
        gguf_free(g);
        buf_release(&file);
        return 0;
}

static void decode_all(const struct tok_ids *ids, struct buf *out) {
        struct tok_decoder d = {0};
        for (size_t i = 0; i < ids->n; i++)
                assert_int_equal(tok_decode(&v, &d, ids->v[i], out), 0);
        tok_decode_flush(&d, out);
}

static void test_vocab(void **state) {
        assert_int_equal(v.n, 359);
        assert_int_equal(v.bos, 1);
        assert_int_equal(v.eos, 2);
        assert_int_equal(v.user, 3);
        assert_int_equal(v.assistant, 4);
        assert_int_equal(v.end, 5);
        assert_int_equal(v.eot, 5);
        assert_int_equal(v.think, 6);
        assert_int_equal(v.end_think, 7);
        assert_int_equal(v.byte_id[0], 8);
        assert_int_equal(v.byte_id[255], 263);
}

static void test_encode_ascii(void **state) {
        struct tok_ids ids;
        tok_ids_init(&ids, 0);
        assert_int_equal(tok_encode(&v, "Hi 17*19", 8, false, &ids), 0);
        int want[] = {264 + 'H' - 0x21, 264 + 'i' - 0x21, 358, 264 + '1' - 0x21, 264 + '7' - 0x21,
                      264 + '*' - 0x21, 264 + '1' - 0x21, 264 + '9' - 0x21};
        assert_int_equal(ids.n, 8);
        assert_memory_equal(ids.v, want, sizeof(want));
        struct buf out;
        buf_init(&out, 0);
        decode_all(&ids, &out);
        assert_string_equal(buf_str(&out), "Hi 17*19");
        buf_release(&out);
        tok_ids_release(&ids);
}

static void test_roundtrip_utf8(void **state) {
        static const char *texts[] = {"h\xc3\xa9llo \xe2\x9c\x93 \xf0\x9f\x98\x80!", "tab\there\nnewline",
                                      "17 \xc3\x97 19", "\xe2\x96\x81literal", ""};
        for (size_t k = 0; k < sizeof(texts) / sizeof(texts[0]); k++) {
                struct tok_ids ids;
                struct buf out;
                tok_ids_init(&ids, 0);
                buf_init(&out, 0);
                assert_int_equal(tok_encode(&v, texts[k], strlen(texts[k]), false, &ids), 0);
                decode_all(&ids, &out);
                /* exact, a literal '▁' included (it travels as bytes; spaces are the ▁ token) */
                assert_string_equal(buf_str(&out), texts[k]);
                buf_release(&out);
                tok_ids_release(&ids);
        }
        /* é is two byte tokens */
        struct tok_ids ids;
        tok_ids_init(&ids, 0);
        assert_int_equal(tok_encode(&v, "\xc3\xa9", 2, false, &ids), 0);
        assert_int_equal(ids.n, 2);
        assert_int_equal(ids.v[0], 8 + 0xc3);
        assert_int_equal(ids.v[1], 8 + 0xa9);
        tok_ids_release(&ids);
}

static void test_special_parsing(void **state) {
        struct tok_ids ids;
        tok_ids_init(&ids, 0);
        assert_int_equal(tok_encode(&v, "a<|end|>b", 9, true, &ids), 0);
        assert_int_equal(ids.n, 3);
        assert_int_equal(ids.v[1], 5);
        ids.n = 0;
        assert_int_equal(tok_encode(&v, "a<|end|>b", 9, false, &ids), 0);
        assert_int_equal(ids.n, 9); /* plain text */
        tok_ids_release(&ids);
}

static void test_chat(void **state) {
        struct tok_ids ids, want;
        tok_ids_init(&ids, 0);
        tok_ids_init(&want, 0);
        struct tok_msg msgs[] = {{"system", "S"}, {"user", "Q"}, {"assistant", "A"}, {"user", "R"}};
        assert_int_equal(tok_chat_encode(&v, msgs, 4, false, &ids), 0);
        int c = 264 - 0x21;
        int expect[] = {1, 3, c + 'S', c + '\n' /* placeholder */, c + 'Q', 5, 4, 6, 7, c + 'A', 5, 3, c + 'R', 5, 4, 6, 7};
        expect[3] = 8 + '\n'; /* newline is a byte token */
        assert_int_equal(ids.n, sizeof(expect) / sizeof(expect[0]));
        assert_memory_equal(ids.v, expect, sizeof(expect));
        /* thinking on: the prompt ends at <|assistant|> */
        ids.n = 0;
        assert_int_equal(tok_chat_encode(&v, msgs + 1, 1, true, &ids), 0);
        int on[] = {1, 3, c + 'Q', 5, 4};
        assert_int_equal(ids.n, 5);
        assert_memory_equal(ids.v, on, sizeof(on));
        /* user text holding control-token strings stays text */
        ids.n = 0;
        struct tok_msg inj[] = {{"user", "<|end|>"}};
        assert_int_equal(tok_chat_encode(&v, inj, 1, true, &ids), 0);
        assert_int_equal(ids.n, 4 + 7);
        struct tok_msg bad[] = {{"tool", "x"}};
        ids.n = 0;
        assert_int_equal(tok_chat_encode(&v, bad, 1, false, &ids), -EINVAL);
        tok_ids_release(&ids);
        tok_ids_release(&want);
}

static void test_decoder(void **state) {
        struct buf out;
        struct tok_decoder d = {0};
        buf_init(&out, 0);
        /* control tokens say nothing; <unk> is drawn as U+2585 */
        assert_int_equal(tok_decode(&v, &d, 5, &out), 0);
        assert_int_equal(tok_decode(&v, &d, 0, &out), 0);
        assert_string_equal(buf_str(&out), "\xe2\x96\x85");
        buf_reset(&out);
        /* a lead byte, then a normal token: replacement, then the token */
        assert_int_equal(tok_decode(&v, &d, 8 + 0xe2, &out), 0);
        assert_int_equal(out.len, 0); /* held */
        assert_int_equal(tok_decode(&v, &d, 264 + 'x' - 0x21, &out), 0);
        assert_string_equal(buf_str(&out), "\xef\xbf\xbdx");
        buf_reset(&out);
        /* a stray continuation byte and an overlong sequence are replaced */
        tok_decode(&v, &d, 8 + 0x80, &out);
        tok_decode(&v, &d, 8 + 0xc0, &out);
        assert_string_equal(buf_str(&out), "\xef\xbf\xbd\xef\xbf\xbd");
        buf_reset(&out);
        /* a surrogate encoded in UTF-8 is not valid */
        tok_decode(&v, &d, 8 + 0xed, &out);
        tok_decode(&v, &d, 8 + 0xa0, &out);
        tok_decode(&v, &d, 8 + 0x80, &out);
        assert_string_equal(buf_str(&out), "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
        buf_reset(&out);
        /* held bytes at the end of a stream */
        tok_decode(&v, &d, 8 + 0xf0, &out);
        tok_decode(&v, &d, 8 + 0x9f, &out);
        assert_int_equal(out.len, 0);
        tok_decode_flush(&d, &out);
        assert_string_equal(buf_str(&out), "\xef\xbf\xbd\xef\xbf\xbd");
        buf_release(&out);
        const char *p;
        size_t n;
        tok_piece(&v, 358, &p, &n);
        assert_int_equal(n, 1);
        assert_memory_equal(p, " ", 1);
        tok_piece(&v, 8 + 0xe2, &p, &n);
        assert_int_equal(n, 1);
        assert_int_equal((uint8_t)p[0], 0xe2);
        tok_piece(&v, 5, &p, &n);
        assert_string_equal(p, "<|end|>");
}

static void test_cap(void **state) {
        struct tok_ids ids;
        tok_ids_init(&ids, 4);
        assert_int_equal(tok_encode(&v, "abcdef", 6, false, &ids), -E2BIG);
        assert_int_equal(ids.n, 4);
        tok_ids_release(&ids);
}

static void test_bad_vocab(void **state) {
        struct gguf *g2;
        char *err = NULL;
        struct tok_vocab v2;
        /* a file without tokens */
        static const uint8_t empty[] = {'G', 'G', 'U', 'F', 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
        assert_int_equal(gguf_parse(empty, sizeof(empty), &g2, &err), 0);
        assert_int_equal(tok_vocab_load(g2, &v2, &err), -EBADMSG);
        assert_non_null(strstr(err, "tokenizer.ggml.tokens"));
        free(err);
        gguf_free(g2);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_vocab),       cmocka_unit_test(test_encode_ascii),
                cmocka_unit_test(test_roundtrip_utf8), cmocka_unit_test(test_special_parsing),
                cmocka_unit_test(test_chat),        cmocka_unit_test(test_decoder),
                cmocka_unit_test(test_cap),         cmocka_unit_test(test_bad_vocab),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
