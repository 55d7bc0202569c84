/* tokenizer.h -- the model's own tokenizer, read from its files: one token count for a
 * whole sweep, whatever each cell's server says (docs/metrics.md "The sweep's tokenizer").
 *
 * Formats:
 *  - GGUF (metadata only, gguf.h): tokenizer.ggml.model "llama" is SentencePiece with scores,
 *    counted as llama.cpp does: the text's spaces as "▁", a "▁" prefixed when
 *    tokenizer.ggml.add_space_prefix (default true) at the start and after a matched token,
 *    adjacent pieces merged highest score first (the leftmost on a tie) while their join is
 *    in the vocabulary, a character outside it as its bytes (<0xNN>, one token each);
 *    "gpt2" is byte-level BPE over tokenizer.ggml.merges, lowest rank first, after the
 *    pre-tokenizer that tokenizer.ggml.pre names (below).
 *  - tokenizer.json (Hugging Face): model "BPE" with vocab and merges ("a b" strings or
 *    ["a", "b"] pairs), either byte-level (a ByteLevel pre-tokenizer, with or after a Split
 *    pattern) or SentencePiece-style (Metaspace, or a normalizer replacing " " with "▁" and
 *    prepending "▁"; byte_fallback); added_tokens join the vocabulary.
 *
 * The text is counted alone: no BOS or EOS. Added tokens that are not special (GGUF token
 * type 4, user-defined; tokenizer.json added_tokens with "special": false) are matched in
 * the text as one token each, longest first at each position; special and control-token
 * strings ("<|im_end|>", "</s>") are plain text, as llama.cpp's tokenizer treats them with
 * parse_special off (llama-server's /tokenize with "parse_special": false).
 *
 * Pre-tokenizers of byte-level BPE, written by hand (no regex engine), from the
 * pre-tokenizer's name (GGUF) or its Split pattern (tokenizer.json):
 *  - gpt2:   's 't 're 've 'm 'll 'd | ?letters | ?digits | ?other | spaces (all but the last
 *            before a word) | spaces
 *  - llama3: the contractions in any case | one non-letter non-digit (not CR/LF) + letters |
 *            1 to 3 digits | ?other + CR/LF | spaces up to the last CR/LF | spaces as gpt2
 *  - qwen2:  llama3 with single digits.
 * llama.cpp's "default" and any name this module does not know are counted with the gpt2
 * split, and tokenizer_describe says so.
 * Character classes, an approximation of Unicode's (\p{L}, \p{N}, \s): ASCII letters,
 * digits and whitespace as they are; beyond ASCII, Unicode's white space, a table of the
 * common digit and number ranges, and a table of punctuation, symbol, mark and format
 * ranges (Latin-1 punctuation, × and ÷, combining marks U+0300-036F, general punctuation,
 * currency, arrows, mathematical and technical symbols, box drawing, dingbats, CJK and
 * full-width punctuation, emoji); every other code point is a letter. Text that is not valid
 * UTF-8 is classed byte by byte as "other". What counts is that every cell of a sweep is
 * counted by the same function; how close it comes to the engine is measured in
 * docs/metrics.md.
 *
 * A piece that the merges leave outside the vocabulary counts one token per byte (the byte
 * fallback; a vocabulary without one would say <unk>). A merge whose parts or result are
 * not in the vocabulary is skipped (Hugging Face refuses such a file; llama.cpp would merge).
 *
 * Limits: a tokenizer.json of TOKENIZER_MAX_FILE bytes at most; GGUF metadata as gguf.h
 * caps it; TOKENIZER_MAX_VOCAB tokens and TOKENIZER_MAX_MERGES merges, tokens of
 * TOKENIZER_MAX_TOKEN bytes at most: beyond, -EFBIG or -EBADMSG with one line.
 */
#ifndef GAUNTLET_TOKENIZER_H
#define GAUNTLET_TOKENIZER_H

#include <stddef.h>
#include <stdint.h>

#define TOKENIZER_MAX_FILE ((size_t)64 << 20)
#define TOKENIZER_MAX_VOCAB (1u << 21)
#define TOKENIZER_MAX_MERGES (1u << 22)
#define TOKENIZER_MAX_TOKEN 4096u

struct tokenizer;

/* Loads the tokenizer of path: a .gguf file, a tokenizer.json, or a directory holding a
 * tokenizer.json. Returns 0; -ENOENT when there is nothing usable (no such file, a directory
 * without tokenizer.json, a GGUF without tokenizer.ggml.tokens); -ENOTSUP for a tokenizer
 * this module does not count (a GGUF model "bert" or "t5", a tokenizer.json model
 * "WordPiece" or "Unigram"); -EBADMSG for a corrupt file; -EFBIG past a limit; -ENOMEM. On
 * failure *ret_error (when given) holds one line naming the file (caller frees). */
int tokenizer_open(const char *path, struct tokenizer **ret, char **ret_error);

/* The number of tokens text[0..len) is, alone (no BOS or EOS; see the header's comment for
 * special tokens). 0 for an empty text. -ENOMEM only. Thread-safe: the tokenizer is only
 * read. */
int tokenizer_count(const struct tokenizer *t, const char *text, size_t len, int64_t *ret);

/* One line for people and reports: "GGUF llama (SentencePiece), 359 tokens". Valid until
 * tokenizer_free. */
const char *tokenizer_describe(const struct tokenizer *t);

void tokenizer_free(struct tokenizer *t);
static inline void tokenizer_freep(struct tokenizer **t) { tokenizer_free(*t); }

#endif
