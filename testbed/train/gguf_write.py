"""gguf_write.py -- a minimal GGUF v3 writer (little-endian), written from the format's facts.

File layout:
  header:   magic "GGUF", u32 version (3), u64 tensor count, u64 metadata count
  metadata: per key: string key, u32 value type, value
            (string = u64 byte length + UTF-8 bytes, no NUL; array = u32 element type,
             u64 count, elements)
  tensors:  per tensor: string name, u32 n_dims, u64 ne[n_dims] (fastest dim first),
            u32 ggml type, u64 offset of the data from the start of the data section
  padding to general.alignment, then the data section; each tensor's data starts at a
  multiple of the alignment (zero padding in between).
Only the ggml types F32 (0) and F16 (1) are written.  Needs only the standard library and
torch (no numpy: the GPU machine's Python may not have it); struct's "e" format is IEEE
binary16 with round-to-nearest-even, the same rounding as torch's .half().
"""

import os
import struct

import torch

GGUF_MAGIC = b"GGUF"
GGUF_VERSION = 3

# metadata value types
T_UINT8, T_INT8, T_UINT16, T_INT16, T_UINT32, T_INT32, T_FLOAT32, T_BOOL, T_STRING, T_ARRAY, \
    T_UINT64, T_INT64, T_FLOAT64 = range(13)
SCALAR_FMT = {T_UINT8: "<B", T_INT8: "<b", T_UINT16: "<H", T_INT16: "<h", T_UINT32: "<I",
              T_INT32: "<i", T_FLOAT32: "<f", T_BOOL: "<?", T_UINT64: "<Q", T_INT64: "<q",
              T_FLOAT64: "<d"}

# ggml tensor types and their struct codes
GGML_F32, GGML_F16 = 0, 1
GGML_FMT = {GGML_F32: "f", GGML_F16: "e"}


def _str(s):
    b = s.encode("utf-8")
    return struct.pack("<Q", len(b)) + b


class GGUFWriter:
    """Collect metadata and tensors, then write() them in insertion order."""

    def __init__(self, alignment=32):
        self.alignment = alignment
        self.kv = []        # (key, type, value, elem type or None)
        self.tensors = []   # (name, PyTorch shape, ggml type, little-endian bytes)
        self.add("general.alignment", T_UINT32, alignment)

    def add(self, key, vtype, value, elem_type=None):
        if any(k == key for k, *_ in self.kv):
            raise ValueError("duplicate key %r" % key)
        if vtype == T_ARRAY and elem_type is None:
            raise ValueError("array %r needs an element type" % key)
        self.kv.append((key, vtype, value, elem_type))

    def add_u32(self, key, v):
        self.add(key, T_UINT32, int(v))

    def add_f32(self, key, v):
        self.add(key, T_FLOAT32, float(v))

    def add_bool(self, key, v):
        self.add(key, T_BOOL, bool(v))

    def add_str(self, key, v):
        self.add(key, T_STRING, str(v))

    def add_array(self, key, elem_type, values):
        self.add(key, T_ARRAY, list(values), elem_type)

    def add_tensor(self, name, tensor, ggml_type):
        """tensor: a torch tensor in PyTorch layout (row-major, last dim fastest).  GGUF's ne
        is the reverse of the shape: a [out, in] matrix gets ne = [in, out]."""
        if ggml_type not in GGML_FMT:
            raise ValueError("unsupported ggml type %d" % ggml_type)
        if any(n == name for n, *_ in self.tensors):
            raise ValueError("duplicate tensor %r" % name)
        if tensor.dim() < 1 or tensor.dim() > 4:
            raise ValueError("%s: %d dims" % (name, tensor.dim()))
        t = tensor.detach().to("cpu", dtype=torch.float32).contiguous()
        if ggml_type == GGML_F16:
            t = t.half().float()      # round once, exactly as the trainer's evaluation did
        vals = t.reshape(-1).tolist()
        raw = struct.pack("<%d%s" % (len(vals), GGML_FMT[ggml_type]), *vals)
        self.tensors.append((name, list(t.shape), ggml_type, raw))

    @staticmethod
    def _value(vtype, v, elem_type=None):
        if vtype == T_STRING:
            return _str(v)
        if vtype == T_ARRAY:
            out = [struct.pack("<IQ", elem_type, len(v))]
            if elem_type == T_STRING:
                out += [_str(x) for x in v]
            elif elem_type == T_ARRAY:
                raise ValueError("nested arrays are not written")
            else:
                f = SCALAR_FMT[elem_type]
                out.append(struct.pack("<%d%s" % (len(v), f[1]), *v))
            return b"".join(out)
        return struct.pack(SCALAR_FMT[vtype], v)

    def _pad(self, n):
        return (-n) % self.alignment

    def to_bytes(self):
        head = [GGUF_MAGIC, struct.pack("<IQQ", GGUF_VERSION, len(self.tensors), len(self.kv))]
        for key, vtype, value, et in self.kv:
            head.append(_str(key) + struct.pack("<I", vtype) + self._value(vtype, value, et))
        off = 0
        data = []
        for name, shape, gt, raw in self.tensors:
            ne = list(reversed(shape))
            head.append(_str(name) + struct.pack("<I", len(ne)) + struct.pack("<%dQ" % len(ne), *ne)
                        + struct.pack("<IQ", gt, off))
            pad = self._pad(len(raw))
            data.append(raw + b"\0" * pad)
            off += len(raw) + pad
        h = b"".join(head)
        return h + b"\0" * self._pad(len(h)) + b"".join(data)

    def write(self, path):
        blob = self.to_bytes()
        tmp = path + ".tmp"
        with open(tmp, "wb") as f:
            f.write(blob)
        os.replace(tmp, path)
        return len(blob)
