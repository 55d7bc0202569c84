#!/usr/bin/env python3
"""gguf-revocab.py -- a copy of a GGUF model with another tokenizer of the same size, for
tests/integration/llamacpp-tokenizer.sh: the real llama-server then tokenizes with merges
and a pre-tokenizer that the testbed's character-level vocabulary never exercises.

  gguf-revocab.py IN OUT bpe PRE   byte-level BPE ("gpt2"), tokenizer.ggml.pre = PRE
  gguf-revocab.py IN OUT spm       SentencePiece ("llama") with scores, add_space_prefix on

The vocabulary is learnt here by plain BPE on a small built-in text until it has as many
tokens as IN's (the embedding's rows); every other key and every tensor is copied as it is.
"""
import re
import struct
import sys

CORPUS = """The quick brown fox jumps over the lazy dog. The answer is forty-two, said the machine.
What is 17 * 23? Answer: 391. Numbers: 1234567890, 3.14159, 2026-08-18, 1,000,000.
I don't know; you're right, we'll see. They've gone. It's here!!!! Really?!?! Yes... --- ***
line one
line two


the end. Hello world, hello there, hello again. the the the and and and of of in in to to
"""

def byte_map():
    keep = [b for b in range(256) if 33 <= b <= 126 or 161 <= b <= 172 or 174 <= b <= 255]
    m, n = {}, 0
    for b in range(256):
        if b in keep:
            m[b] = chr(b)
        else:
            m[b] = chr(256 + n)
            n += 1
    return m

def learn(words, n_merges):
    """words: lists of symbols; returns the merges in order."""
    words = [list(w) for w in words if w]
    merges = []
    while len(merges) < n_merges:
        counts = {}
        for w in words:
            for a, b in zip(w, w[1:]):
                counts[(a, b)] = counts.get((a, b), 0) + 1
        if not counts:
            break
        best = max(counts.items(), key=lambda kv: (kv[1], kv[0]))[0]
        merges.append(best)
        for w in words:
            i = 0
            while i < len(w) - 1:
                if (w[i], w[i + 1]) == best:
                    w[i:i + 2] = [w[i] + w[i + 1]]
                i += 1
    return merges

# ---- GGUF ----
SIZES = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}

def read_gguf(data):
    p = 0
    def u32():
        nonlocal p
        p += 4
        return struct.unpack_from("<I", data, p - 4)[0]
    def u64():
        nonlocal p
        p += 8
        return struct.unpack_from("<Q", data, p - 8)[0]
    def skip_str():
        nonlocal p
        n = u64()
        p += n
    assert data[:4] == b"GGUF"
    p = 4
    version = u32()
    n_tensors, n_kv = u64(), u64()
    kvs = []
    for _ in range(n_kv):
        start = p
        klen = u64()
        key = data[p:p + klen].decode()
        p += klen
        t = u32()
        n_tokens = None
        if t == 8:
            skip_str()
        elif t == 9:
            et, n = u32(), u64()
            if key == "tokenizer.ggml.tokens":
                n_tokens = n
            for _ in range(n):
                if et == 8:
                    skip_str()
                else:
                    p += SIZES[et]
        else:
            p += SIZES[t]
        kvs.append((key, data[start:p], n_tokens))
    infos_start = p
    align = 32
    for _ in range(n_tensors):
        skip_str()
        nd = u32()
        p += 8 * nd + 4 + 8
    infos = data[infos_start:p]
    data_start = (p + align - 1) // align * align
    return version, n_tensors, kvs, infos, data[data_start:]

def kv_str(key, s):
    k, v = key.encode(), s.encode()
    return struct.pack("<Q", len(k)) + k + struct.pack("<I", 8) + struct.pack("<Q", len(v)) + v

def kv_bool(key, b):
    k = key.encode()
    return struct.pack("<Q", len(k)) + k + struct.pack("<IB", 7, 1 if b else 0)

def kv_u32(key, x):
    k = key.encode()
    return struct.pack("<Q", len(k)) + k + struct.pack("<II", 4, x)

def kv_arr(key, et, items):
    k = key.encode()
    out = struct.pack("<Q", len(k)) + k + struct.pack("<IIQ", 9, et, len(items))
    for it in items:
        if et == 8:
            v = it.encode()
            out += struct.pack("<Q", len(v)) + v
        elif et == 6:
            out += struct.pack("<f", it)
        else:
            out += struct.pack("<i", it)
    return out

def main():
    src, dst, kind = sys.argv[1], sys.argv[2], sys.argv[3]
    data = open(src, "rb").read()
    version, n_tensors, kvs, infos, tensor_data = read_gguf(data)
    n_vocab = next(n for _, _, n in kvs if n is not None)
    new = []
    if kind == "bpe":
        pre = sys.argv[4]
        bm = byte_map()
        pieces = re.findall(r"'s|'t|'re|'ve|'m|'ll|'d| ?[^\W\d_]+| ?\d+| ?[^\s\w]+|\s+", CORPUS)
        words = [[bm[b] for b in w.encode()] for w in pieces]
        special = ["<|endoftext|>"]
        merges = learn(words, n_vocab - 256 - len(special))
        tokens = [bm[b] for b in range(256)] + [a + b for a, b in merges] + special
        types = [1] * (len(tokens) - 1) + [3]
        assert len(tokens) == n_vocab, (len(tokens), n_vocab)
        eot = len(tokens) - 1
        new = [kv_str("tokenizer.ggml.model", "gpt2"), kv_str("tokenizer.ggml.pre", pre),
               kv_arr("tokenizer.ggml.tokens", 8, tokens), kv_arr("tokenizer.ggml.token_type", 5, types),
               kv_arr("tokenizer.ggml.merges", 8, [a + " " + b for a, b in merges]),
               kv_u32("tokenizer.ggml.bos_token_id", eot), kv_u32("tokenizer.ggml.eos_token_id", eot),
               kv_bool("tokenizer.ggml.add_bos_token", False)]
    else:
        text = "\u2581" + CORPUS.replace(" ", "\u2581")
        chars = sorted(set(text) - {"\n"})
        control = ["<unk>", "<s>", "</s>"]
        bytes_ = ["<0x%02X>" % b for b in range(256)]
        n_learn = n_vocab - len(control) - len(bytes_) - len(chars)
        merges = learn([list(l) for l in text.split("\n")], n_learn)
        pieces = chars + [a + b for a, b in merges]
        tokens = control + bytes_ + pieces
        assert len(tokens) == n_vocab, (len(tokens), n_vocab)
        scores = [0.0] * len(control) + [0.0] * 256 + [-1000.0] * len(chars) + [-float(i) for i in range(len(merges))]
        types = [2, 3, 3] + [6] * 256 + [1] * len(pieces)
        new = [kv_str("tokenizer.ggml.model", "llama"), kv_arr("tokenizer.ggml.tokens", 8, tokens),
               kv_arr("tokenizer.ggml.scores", 6, scores), kv_arr("tokenizer.ggml.token_type", 5, types),
               kv_bool("tokenizer.ggml.add_space_prefix", True),
               kv_u32("tokenizer.ggml.unknown_token_id", 0), kv_u32("tokenizer.ggml.bos_token_id", 1),
               kv_u32("tokenizer.ggml.eos_token_id", 2), kv_bool("tokenizer.ggml.add_bos_token", False)]
    kept = [raw for key, raw, _ in kvs if not key.startswith("tokenizer.ggml.")]
    body = b"".join(kept + new)
    head = b"GGUF" + struct.pack("<IQQ", version, n_tensors, len(kept) + len(new)) + body + infos
    head += b"\0" * ((32 - len(head) % 32) % 32)
    open(dst, "wb").write(head + tensor_data)

main()
