/* tok.h -- the character-level SentencePiece-style tokenizer, the chat format, and the
 * detokenizer that reassembles byte tokens into UTF-8.
 *
 * The vocabulary is read from the GGUF (tokenizer.ggml.tokens / token_type), never assumed:
 * normal tokens are pieces of text ("▁" stands for a space), byte tokens "<0xNN>" carry one
 * raw byte each, control tokens (<s>, </s>, <|user|>, <|assistant|>, <|end|>, <think>,
 * </think>) are found by their text. Encoding takes the longest normal piece at each
 * position and falls back to byte tokens for anything else.
 *
 * Chat format (testbed/SPEC.md), with user text encoded as plain text (control-token
 * strings typed by a user stay text, as in training):
 *   <s><|user|>{system "\n"}{u1}<|end|><|assistant|><think></think>{a1}<|end|>
 *      <|user|>{u2}<|end|><|assistant|>           then <think></think> when thinking is off
 */
#ifndef TESTBED_TOK_H
#define TESTBED_TOK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "text/buf.h"
#include "gguf.h"

enum tok_type {
        TOK_NORMAL = 1,
        TOK_UNKNOWN = 2,
        TOK_CONTROL = 3,
        TOK_USER_DEFINED = 4,
        TOK_UNUSED = 5,
        TOK_BYTE = 6,
};

/* A growable vector of token ids with a hard cap (the context length, usually). */
struct tok_ids {
        int *v;
        size_t n, alloc;
        size_t max; /* appending beyond max fails with -E2BIG */
};
void tok_ids_init(struct tok_ids *t, size_t max);
void tok_ids_release(struct tok_ids *t);
int tok_ids_push(struct tok_ids *t, int id);

struct tok_vocab {
        int n;
        char **text;           /* owned, NUL-terminated, as in the file */
        char **piece;          /* owned: the text a token stands for ("▁" turned to " ") */
        uint8_t *type;         /* enum tok_type per id */
        int byte_id[256];      /* id of <0xNN>, -1 when missing */
        int *hash;             /* open addressing over normal pieces: id or -1 */
        size_t hash_size;      /* power of two */
        size_t max_piece;      /* longest normal piece in bytes (with "▁" turned to " ") */
        int bos, eos, eot, unk;
        int user, assistant, end, think, end_think; /* control ids; -1 if absent */
        int collapse;          /* where all-NaN logits land: "!" (docs/testbed.md "NaN collapse") */
};

/* Loads the vocabulary from GGUF metadata. -EBADMSG with *ret_error on a missing or
 * inconsistent vocabulary (caller frees the message). */
int tok_vocab_load(const struct gguf *g, struct tok_vocab *ret, char **ret_error);
void tok_vocab_release(struct tok_vocab *v);
/* The id of the token whose text (as in the file) is text, or -1. */
int tok_find_text(const struct tok_vocab *v, const char *text);

/* Appends the ids of text to out. With parse_special, control tokens written in the text
 * ("<|end|>") become their ids (completion prompts); otherwise they stay text.
 * -E2BIG when out's cap is reached (out keeps what fitted), -ENOMEM. */
int tok_encode(const struct tok_vocab *v, const char *text, size_t len, bool parse_special, struct tok_ids *out);

struct tok_msg {
        const char *role;    /* "system", "user", "assistant" */
        const char *content; /* NUL-terminated */
};
/* Renders a conversation as prompt ids (BOS included). -EINVAL on an unknown role or no
 * message, -E2BIG past the cap. */
int tok_chat_encode(const struct tok_vocab *v, const struct tok_msg *msgs, size_t n, bool thinking,
                    struct tok_ids *out);

/* Streaming detokenizer state: byte tokens are held until they form a UTF-8 character. */
struct tok_decoder {
        uint8_t pend[4];
        int npend;
        int need;
};
/* Appends the text of token id to out. Control tokens give nothing (the caller reads them
 * as structure); <unk> gives "▅" (U+2585) as llama.cpp renders it; a byte sequence that is
 * not UTF-8 gives U+FFFD per bad byte. Returns buf_append's result. */
int tok_decode(const struct tok_vocab *v, struct tok_decoder *d, int id, struct buf *out);
/* Flushes held bytes (as U+FFFD) at the end of a stream. */
int tok_decode_flush(struct tok_decoder *d, struct buf *out);
/* The token's piece for logprobs: the text with "▁" as " ", byte tokens as the raw byte
 * (which may be a partial character), control tokens by name. Sets *ret and *ret_len to a
 * pointer into the vocabulary or a static byte. */
void tok_piece(const struct tok_vocab *v, int id, const char **ret, size_t *ret_len);

#endif
