#!/usr/bin/env python3
"""corpus-model.py -- random-weight GGUF models with a multilingual vocabulary, for the
detector corpus (docs/detectors.md "Where the engine samples come from").

The testbed's own random model (gauntlet-testbed --write-random-model) has a character
vocabulary of ASCII and 256 byte tokens: its garbage is mostly raw bytes, which llama-server
refuses with HTTP 500. Garbage users meet comes from models with a real tokenizer: tokens
of many scripts, whole words, special tokens. This tool writes such a model: the llama
architecture with random weights and an SPM-style vocabulary taken from text already on the
machine (the gettext catalogs under /usr/share/locale: real words and characters of about
thirty languages), plus the special tokens real chat models have.

  tools/corpus-model.py vocab OUT.json      build the vocabulary from the catalogs
  tools/corpus-model.py model --vocab V.json --seed N --scale X [--output-scale Y] OUT.gguf

The vocabulary is committed (tools/corpus-vocab.json) so that a model is the same on any
machine: it depends only on (vocabulary, seed, scales). Standard library only.
"""

import argparse
import collections
import glob
import json
import os
import random
import re
import struct
import sys
import unicodedata

# ---- the vocabulary ------------------------------------------------------------------

# Special tokens, as Llama/Mistral (ids 0-2) and Qwen/ChatML (the rest) have them. GGUF
# token types: 1 normal, 2 unknown, 3 control, 4 user-defined, 6 byte.
SPECIALS = [("<unk>", 2), ("<s>", 3), ("</s>", 3), ("<pad>", 3), ("<|im_start|>", 3),
            ("<|im_end|>", 3), ("<|endoftext|>", 3), ("<mask>", 3), ("<think>", 4), ("</think>", 4)]
UNK, BOS, EOS, PAD, IM_END = 0, 1, 2, 3, 5
# Real vocabularies also reserve hundreds of control tokens (Llama 3: 256
# <|reserved_special_token_N|>, Gemma: <unusedN>, Mistral: [control_N]); a broken model
# emits them like any other token. They follow the ordinary tokens, as in those files.
RESERVED = (["<|reserved_special_token_%d|>" % i for i in range(96)] + ["<unused%d>" % i for i in range(48)] +
            ["[control_%d]" % i for i in range(48)])

# Languages whose catalogs are read, and how their text is cut into tokens:
#   words: whole words ("▁word") and frequent word pieces (languages written with spaces);
#   chars: characters and character pairs (Chinese, Japanese, Thai: no spaces).
LANGS = {
    "words": ["de", "fr", "es", "pt", "it", "nl", "pl", "tr", "vi", "id", "cs", "hu", "fi",
              "ru", "uk", "bg", "sr", "el", "ar", "fa", "he", "hi", "bn", "ta", "ka", "hy", "ko"],
    "chars": ["zh_CN", "zh_TW", "ja", "th"],
}
WORDS_PER_LANG = 160
PIECES_PER_LANG = 60
CHARS_PER_LANG = 300
PAIRS_PER_LANG = 120
CHAR_MIN_COUNT = 30
FORMAT = re.compile(r"%[-+ #0-9.*]*[a-zA-Z]|\{[^}]*\}|<[^>]*>|&[a-z]+;|_(?=\w)|&(?=\w)")


def read_mo(path):
    """The translated strings of a gettext .mo file (its format: magic, revision, count,
    offsets of the original and translation tables of (length, offset) pairs)."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 20:
        return []
    magic = struct.unpack("<I", data[:4])[0]
    end = "<" if magic == 0x950412DE else ">" if magic == 0xDE120495 else None
    if not end:
        return []
    _, n, orig, trans = struct.unpack(end + "4I", data[4:20])
    out = []
    for i in range(n):
        olen, _ = struct.unpack(end + "2I", data[orig + 8 * i:orig + 8 * i + 8])
        tlen, toff = struct.unpack(end + "2I", data[trans + 8 * i:trans + 8 * i + 8])
        if olen == 0:
            continue  # the header entry
        try:
            out.extend(data[toff:toff + tlen].decode("utf-8").split("\0"))
        except UnicodeDecodeError:
            continue
    return out


def catalog_text(lang):
    """All translated strings of one language's catalogs, in a fixed order."""
    out = []
    for path in sorted(glob.glob("/usr/share/locale/%s/LC_MESSAGES/*.mo" % lang)):
        out.extend(FORMAT.sub(" ", v) for v in read_mo(path))
    return "\n".join(out)


def words_of(text):
    """Runs of letters and combining marks (Devanagari vowel signs are marks, not letters)."""
    out, cur = [], []
    for c in text:
        if unicodedata.category(c)[0] in "LM":
            cur.append(c)
        elif cur:
            out.append("".join(cur))
            cur = []
    if cur:
        out.append("".join(cur))
    return out


def top(counter, n, min_count=2):
    """The n most frequent keys, ties broken by the key (deterministic)."""
    items = sorted(counter.items(), key=lambda kv: (-kv[1], kv[0]))
    return [k for k, c in items[:n] if c >= min_count]


def build_vocab():
    tokens = list(SPECIALS)
    seen = {t for t, _ in tokens}

    def add(t, typ=1):
        if t and t not in seen:
            seen.add(t)
            tokens.append((t, typ))

    # ASCII first (SPM vocabularies always have it), the word boundary, newlines.
    add("\u2581")
    for c in range(0x21, 0x7F):
        add(chr(c))
    add("\n")
    add("\n\n")
    for w in ["the", "of", "and", "to", "in", "is", "that", "for", "it", "as", "with", "on",
              "answer", "number", "The", "A", "I", "you", "can", "not", "OK"]:
        add("\u2581" + w)
    chars = collections.Counter()
    stats = {}
    for lang in LANGS["words"] + LANGS["chars"]:
        text = catalog_text(lang)
        if not text:
            continue
        found = words_of(text)
        words = collections.Counter(found)
        chars.update(c for w in found for c in w)
        n0 = len(tokens)
        if lang in LANGS["words"]:
            for w in top(words, WORDS_PER_LANG):
                add("\u2581" + w)
            pieces = collections.Counter()
            for w, c in words.items():
                for k in (2, 3, 4):
                    if len(w) > k + 1:
                        pieces[w[-k:]] += c
                        pieces[w[:k]] += c
            for p in top(pieces, PIECES_PER_LANG):
                add(p)
        else:
            cc = collections.Counter(c for w in found for c in w)
            for c in top(cc, CHARS_PER_LANG):
                add(c)
            pairs = collections.Counter()
            for w in found:
                for i in range(len(w) - 1):
                    pairs[w[i:i + 2]] += 1
            for p in top(pairs, PAIRS_PER_LANG):
                add(p)
        stats[lang] = len(tokens) - n0
    for c in top(chars, len(chars), CHAR_MIN_COUNT):
        add(c)
    for t in RESERVED:
        add(t, 3)
    return tokens, stats


# ---- the model -------------------------------------------------------------------------

CHAT_TEMPLATE = (
    "{%- for m in messages -%}"
    "{{- '<|im_start|>' + m['role'] + '\\n' -}}"
    "{%- if m['role'] == 'assistant' and m['reasoning_content'] is defined and m['reasoning_content'] -%}"
    "{{- '<think>\\n' + m['reasoning_content'] + '\\n</think>\\n\\n' -}}"
    "{%- endif -%}"
    "{{- m['content'] + '<|im_end|>\\n' -}}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}"
    "{{- '<|im_start|>assistant\\n' -}}"
    "{%- if enable_thinking is defined and not enable_thinking -%}{{- '<think>\\n\\n</think>\\n\\n' -}}"
    "{%- else -%}{{- '<think>\\n' -}}{%- endif -%}"
    "{%- endif -%}")

T_UINT32, T_INT32, T_FLOAT32, T_BOOL, T_STRING, T_ARRAY = 4, 5, 6, 7, 8, 9
GGML_F32, GGML_F16 = 0, 1
ALIGN = 32


def gstr(s):
    b = s.encode("utf-8")
    return struct.pack("<Q", len(b)) + b


def kv(key, vtype, value, elem=None):
    out = gstr(key) + struct.pack("<I", vtype)
    if vtype == T_STRING:
        return out + gstr(value)
    if vtype == T_ARRAY:
        out += struct.pack("<IQ", elem, len(value))
        if elem == T_STRING:
            return out + b"".join(gstr(v) for v in value)
        return out + struct.pack("<%d%s" % (len(value), {T_INT32: "i", T_FLOAT32: "f"}[elem]), *value)
    return out + struct.pack({T_UINT32: "<I", T_INT32: "<i", T_FLOAT32: "<f", T_BOOL: "<?"}[vtype], value)


def write_model(path, tokens, seed, scale, output_scale, tied=False, nan=False, n_embd=64, n_layer=2, n_head=4, n_ff=128, n_ctx=1024):
    rng = random.Random(seed)
    V, D, F = len(tokens), n_embd, n_ff
    meta = [
        kv("general.architecture", T_STRING, "llama"),
        kv("general.name", T_STRING, "corpus-random-multilingual"),
        kv("general.alignment", T_UINT32, ALIGN),
        kv("gauntlet.corpus.seed", T_UINT32, seed),
        kv("gauntlet.corpus.scale", T_FLOAT32, scale),
        kv("gauntlet.corpus.output_scale", T_FLOAT32, output_scale),
        kv("gauntlet.corpus.tied", T_BOOL, tied),
        kv("gauntlet.corpus.nan", T_BOOL, nan),
        kv("llama.context_length", T_UINT32, n_ctx),
        kv("llama.embedding_length", T_UINT32, D),
        kv("llama.block_count", T_UINT32, n_layer),
        kv("llama.feed_forward_length", T_UINT32, F),
        kv("llama.attention.head_count", T_UINT32, n_head),
        kv("llama.attention.head_count_kv", T_UINT32, n_head),
        kv("llama.attention.layer_norm_rms_epsilon", T_FLOAT32, 1e-5),
        kv("llama.rope.freq_base", T_FLOAT32, 10000.0),
        kv("llama.rope.dimension_count", T_UINT32, D // n_head),
        kv("llama.vocab_size", T_UINT32, V),
        kv("tokenizer.ggml.model", T_STRING, "llama"),
        kv("tokenizer.ggml.tokens", T_ARRAY, [t for t, _ in tokens], T_STRING),
        kv("tokenizer.ggml.scores", T_ARRAY, [0.0] * 10 + [-float(i) for i in range(V - 10)], T_FLOAT32),
        kv("tokenizer.ggml.token_type", T_ARRAY, [typ for _, typ in tokens], T_INT32),
        kv("tokenizer.ggml.bos_token_id", T_UINT32, BOS),
        kv("tokenizer.ggml.eos_token_id", T_UINT32, EOS),
        kv("tokenizer.ggml.eot_token_id", T_UINT32, IM_END),
        kv("tokenizer.ggml.unknown_token_id", T_UINT32, UNK),
        kv("tokenizer.ggml.padding_token_id", T_UINT32, PAD),
        kv("tokenizer.ggml.add_bos_token", T_BOOL, False),
        kv("tokenizer.chat_template", T_STRING, CHAT_TEMPLATE),
    ]

    def uniform(n, s):
        if s != s:
            return struct.pack("<%de" % n, *([float("nan")] * n))
        if s == 0:
            return struct.pack("<%de" % n, *([0.0] * n))
        return struct.pack("<%de" % n, *[(rng.random() * 2 - 1) * s for _ in range(n)])

    tensors = [("token_embd.weight", (D, V), GGML_F16, uniform(D * V, 1.0)),
               ("output_norm.weight", (D,), GGML_F32, struct.pack("<%df" % D, *([1.0] * D))),
               ("output.weight", (D, V), GGML_F16, uniform(D * V, float("nan") if nan else output_scale))]
    if tied:
        del tensors[2]  # no output projection: llama.cpp uses the token embedding (tied, as Gemma, Qwen2.5-0.5B)
    for il in range(n_layer):
        p = "blk.%d." % il
        tensors += [(p + "attn_norm.weight", (D,), GGML_F32, struct.pack("<%df" % D, *([1.0] * D))),
                    (p + "ffn_norm.weight", (D,), GGML_F32, struct.pack("<%df" % D, *([1.0] * D))),
                    (p + "attn_q.weight", (D, D), GGML_F16, uniform(D * D, scale)),
                    (p + "attn_k.weight", (D, D), GGML_F16, uniform(D * D, scale)),
                    (p + "attn_v.weight", (D, D), GGML_F16, uniform(D * D, scale)),
                    (p + "attn_output.weight", (D, D), GGML_F16, uniform(D * D, scale)),
                    (p + "ffn_gate.weight", (D, F), GGML_F16, uniform(D * F, scale)),
                    (p + "ffn_up.weight", (D, F), GGML_F16, uniform(D * F, scale)),
                    (p + "ffn_down.weight", (F, D), GGML_F16, uniform(F * D, scale))]
    head = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(meta)) + b"".join(meta)
    infos, offset = b"", 0
    for name, shape, typ, data in tensors:
        infos += gstr(name) + struct.pack("<I", len(shape)) + b"".join(struct.pack("<Q", d) for d in shape)
        infos += struct.pack("<IQ", typ, offset)
        offset += (len(data) + ALIGN - 1) // ALIGN * ALIGN
    out = head + infos
    out += b"\0" * (-len(out) % ALIGN)
    for _, _, _, data in tensors:
        out += data + b"\0" * (-len(data) % ALIGN)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(out)
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    v = sub.add_parser("vocab", help="build the vocabulary from /usr/share/locale")
    v.add_argument("out")
    m = sub.add_parser("model", help="write a random-weight GGUF")
    m.add_argument("--vocab", required=True)
    m.add_argument("--seed", type=int, default=1)
    m.add_argument("--scale", type=float, default=0.5, help="range of the block weights")
    m.add_argument("--output-scale", type=float, default=None,
                   help="range of the output projection (default: --scale; 0: every logit ties)")
    m.add_argument("--tied", action="store_true", help="no output projection: logits from the token embedding")
    m.add_argument("--nan", action="store_true", help="the output projection is NaN (a kernel that produced NaN)")
    m.add_argument("out")
    a = ap.parse_args()
    if a.cmd == "vocab":
        tokens, stats = build_vocab()
        with open(a.out, "w", encoding="utf-8") as f:
            f.write('{"source": "gettext catalogs under /usr/share/locale (Debian 12), tools/corpus-model.py vocab",\n')
            f.write('"tokens_per_language": %s,\n"tokens": [\n' % json.dumps(stats, sort_keys=True))
            f.write(",\n".join(json.dumps(list(t), ensure_ascii=False) for t in tokens))
            f.write("\n]}\n")
        print("%s: %d tokens" % (a.out, len(tokens)), file=sys.stderr)
        return 0
    with open(a.vocab, encoding="utf-8") as f:
        tokens = [tuple(t) for t in json.load(f)["tokens"]]
    write_model(a.out, tokens, a.seed, a.scale, a.scale if a.output_scale is None else a.output_scale,
                tied=a.tied, nan=a.nan)
    return 0


if __name__ == "__main__":
    sys.exit(main())
