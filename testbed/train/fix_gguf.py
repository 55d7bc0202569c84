"""fix_gguf.py -- brings an existing testbed GGUF up to date without retraining, so the
trained weights stay bit for bit:

- <think> and </think> become user-defined tokens (GGUF token type 4), as in Qwen3's
  GGUFs: llama.cpp never prints control tokens (type 3), so its reasoning parser never
  saw them and put every answer in reasoning_content;
- tokenizer.chat_template becomes chat_template.CHAT_TEMPLATE.

Tensor infos and data are copied unchanged (their offsets are relative to the aligned
data section, which is laid out again after the new metadata). Standard library only:

    python3 testbed/train/fix_gguf.py testbed/model.gguf
"""

import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from chat_template import CHAT_TEMPLATE  # noqa: E402

T_STRING, T_ARRAY, T_INT32 = 8, 9, 5
SIZES = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
USER_DEFINED = 4


def gguf_string(s):
    b = s.encode("utf-8")
    return struct.pack("<Q", len(b)) + b


def main(path):
    with open(path, "rb") as f:
        buf = f.read()
    if buf[:4] != b"GGUF":
        sys.exit("%s: not a GGUF file" % path)
    version, n_tensors, n_kv = struct.unpack_from("<IQQ", buf, 4)
    pos = 24

    def string(p):
        (n,) = struct.unpack_from("<Q", buf, p)
        return buf[p + 8:p + 8 + n].decode("utf-8"), p + 8 + n

    kvs = []  # (key, raw bytes of type + value)
    tokens = None
    alignment = 32
    for _ in range(n_kv):
        key, pos = string(pos)
        start = pos
        (vt,) = struct.unpack_from("<I", buf, pos)
        pos += 4
        if vt == T_ARRAY:
            et, n = struct.unpack_from("<IQ", buf, pos)
            pos += 12
            if et == T_STRING:
                items = []
                for _ in range(n):
                    s, pos = string(pos)
                    items.append(s)
                if key == "tokenizer.ggml.tokens":
                    tokens = items
            else:
                pos += SIZES[et] * n
        elif vt == T_STRING:
            _, pos = string(pos)
        else:
            if key == "general.alignment":
                (alignment,) = struct.unpack_from("<I", buf, pos)
            pos += SIZES[vt]
        kvs.append((key, bytearray(buf[start:pos])))
    infos_start = pos
    for _ in range(n_tensors):
        _, pos = string(pos)
        (nd,) = struct.unpack_from("<I", buf, pos)
        pos += 4 + 8 * nd + 12
    infos = buf[infos_start:pos]
    data = buf[pos + (-pos) % alignment:]
    if tokens is None:
        sys.exit("%s: no tokenizer.ggml.tokens" % path)

    out = bytearray(b"GGUF" + struct.pack("<IQQ", version, n_tensors, n_kv))
    seen = set()
    for key, raw in kvs:
        if key == "tokenizer.ggml.token_type":
            for name in ("<think>", "</think>"):
                i = tokens.index(name)
                struct.pack_into("<i", raw, 4 + 12 + 4 * i, USER_DEFINED)
        elif key == "tokenizer.chat_template":
            raw = bytearray(struct.pack("<I", T_STRING) + gguf_string(CHAT_TEMPLATE))
        seen.add(key)
        out += gguf_string(key) + raw
    if "tokenizer.ggml.token_type" not in seen or "tokenizer.chat_template" not in seen:
        sys.exit("%s: no token_type or chat_template to update" % path)
    out += infos
    out += b"\0" * ((-len(out)) % alignment)
    out += data
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(out)
    os.replace(tmp, path)
    print("%s: <think> </think> are type %d; chat template updated (%d -> %d bytes)"
          % (path, USER_DEFINED, len(buf), len(out)))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: fix_gguf.py FILE.gguf")
    main(sys.argv[1])
