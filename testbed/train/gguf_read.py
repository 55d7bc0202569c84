"""gguf_read.py -- a tiny GGUF v3 reader (metadata + F32/F16 tensors) for the self-check and
dump_reference.py.  Independent of gguf_write.py except for the shared type numbers, so a
round trip through both checks the layout rather than one function against itself.
"""

import struct
import sys

import torch

_SCALAR = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q",
           11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9
_TENSOR_DT = {0: (torch.float32, 4), 1: (torch.float16, 2)}


class GGUFFile:
    """meta: {key: value}; types: {key: (type, elem type or None)};
    tensors: {name: (ne list, ggml type, offset)}; tensor(name) -> torch tensor (the file's
    dtype, F16 or F32) in PyTorch layout (shape = reversed ne)."""

    def __init__(self, path):
        with open(path, "rb") as f:
            self.buf = f.read()
        self.pos = 0
        if self._take(4) != b"GGUF":
            raise ValueError("%s: not a GGUF file" % path)
        self.version, n_tensors, n_kv = struct.unpack("<IQQ", self._take(20))
        if self.version != 3:
            raise ValueError("%s: GGUF version %d, expected 3" % (path, self.version))
        self.meta, self.types, self.tensors = {}, {}, {}
        for _ in range(n_kv):
            key = self._string()
            (vt,) = struct.unpack("<I", self._take(4))
            et = None
            if vt == _ARRAY:
                et, n = struct.unpack("<IQ", self._take(12))
                self.meta[key] = [self._scalar(et) for _ in range(n)]
            else:
                self.meta[key] = self._scalar(vt)
            self.types[key] = (vt, et)
        for _ in range(n_tensors):
            name = self._string()
            (nd,) = struct.unpack("<I", self._take(4))
            ne = list(struct.unpack("<%dQ" % nd, self._take(8 * nd)))
            gt, off = struct.unpack("<IQ", self._take(12))
            self.tensors[name] = (ne, gt, off)
        self.alignment = self.meta.get("general.alignment", 32)
        self.data_start = self.pos + (-self.pos) % self.alignment

    def _take(self, n):
        if self.pos + n > len(self.buf):
            raise ValueError("truncated GGUF at byte %d" % self.pos)
        b = self.buf[self.pos:self.pos + n]
        self.pos += n
        return b

    def _string(self):
        (n,) = struct.unpack("<Q", self._take(8))
        return self._take(n).decode("utf-8")

    def _scalar(self, t):
        if t == _STRING:
            return self._string()
        if t == _ARRAY:
            raise ValueError("nested array")
        fmt = _SCALAR[t]
        return struct.unpack(fmt, self._take(struct.calcsize(fmt)))[0]

    def tensor(self, name):
        ne, gt, off = self.tensors[name]
        dt, size = _TENSOR_DT[gt]
        n = 1
        for d in ne:
            n *= d
        start = self.data_start + off
        if off % self.alignment or start + n * size > len(self.buf):
            raise ValueError("%s: bad offset %d" % (name, off))
        if sys.byteorder != "little":
            raise ValueError("big-endian hosts are not supported")
        t = torch.frombuffer(bytearray(self.buf[start:start + n * size]), dtype=dt)
        return t.reshape(list(reversed(ne)))


if __name__ == "__main__":
    g = GGUFFile(sys.argv[1])
    for k, v in g.meta.items():
        if isinstance(v, list):
            print("%-40s [%d] %s" % (k, len(v), v[:8]))
        else:
            print("%-40s %r" % (k, v if not isinstance(v, str) or len(v) < 200 else v[:200] + "..."))
    for n, (ne, gt, off) in g.tensors.items():
        print("%-32s ne=%-18s %s off=%d" % (n, ne, {0: "F32", 1: "F16"}[gt], off))
