"""A minimal GGUF v3 writer (the format as docs/gguf.md describes it): metadata, tensor infos,
32-byte aligned data. Tensor types F32, F16 and Q8_0 (blocks of 32: fp16 scale d = amax / 127,
then 32 int8 q = round(x / d), as ggml's reference quantizer)."""
import os
import struct

import numpy as np

GGML_F32, GGML_F16, GGML_Q8_0 = 0, 1, 8
_U8, _I8, _U16, _I16, _U32, _I32, _F32, _BOOL, _STR, _ARR, _U64, _I64, _F64 = range(13)
ALIGN = 32


def _str(s):
    b = s.encode("utf-8")
    return struct.pack("<Q", len(b)) + b


def quantize_q8_0(x):
    """x: float32 array whose last dimension is a multiple of 32 → bytes of Q8_0 blocks."""
    blocks = np.ascontiguousarray(x, dtype=np.float32).reshape(-1, 32)
    amax = np.abs(blocks).max(axis=1)
    d = amax / 127.0
    inv = np.where(d != 0, 1.0 / np.where(d != 0, d, 1.0), 0.0).astype(np.float32)
    v = blocks * inv[:, None]
    q = (np.sign(v) * np.floor(np.abs(v) + 0.5)).astype(np.int8)  # round half away from zero
    out = np.empty(len(blocks), dtype=[("d", "<f2"), ("qs", "i1", 32)])
    out["d"] = d.astype(np.float16)
    out["qs"] = q
    return out.tobytes()


class Writer:
    def __init__(self):
        self.kv = []       # encoded metadata entries
        self.tensors = []  # (name, dims innermost first, type, bytes)

    def u32(self, key, v): self.kv.append(_str(key) + struct.pack("<II", _U32, v))
    def f32(self, key, v): self.kv.append(_str(key) + struct.pack("<If", _F32, v))
    def boolean(self, key, v): self.kv.append(_str(key) + struct.pack("<IB", _BOOL, 1 if v else 0))
    def string(self, key, v): self.kv.append(_str(key) + struct.pack("<I", _STR) + _str(v))

    def strings(self, key, vs):
        self.kv.append(_str(key) + struct.pack("<IIQ", _ARR, _STR, len(vs)) + b"".join(_str(v) for v in vs))

    def i32s(self, key, vs):
        self.kv.append(_str(key) + struct.pack("<IIQ", _ARR, _I32, len(vs)) + struct.pack(f"<{len(vs)}i", *vs))

    def tensor(self, name, array, ggml_type):
        """array: numpy float32, shape (rows, cols) or (n,); written with dims (cols, rows)."""
        a = np.ascontiguousarray(array, dtype=np.float32)
        dims = list(reversed(a.shape))
        if ggml_type == GGML_F32:
            data = a.tobytes()
        elif ggml_type == GGML_F16:
            data = a.astype(np.float16).tobytes()
        elif ggml_type == GGML_Q8_0:
            if dims[0] % 32:
                raise ValueError(f"{name}: row length {dims[0]} is not a multiple of 32")
            data = quantize_q8_0(a)
        else:
            raise ValueError(f"{name}: unsupported type {ggml_type}")
        self.tensors.append((name, dims, ggml_type, data))

    def write(self, path):
        head = b"GGUF" + struct.pack("<IQQ", 3, len(self.tensors), len(self.kv)) + b"".join(self.kv)
        infos, offset = b"", 0
        for name, dims, t, data in self.tensors:
            infos += _str(name) + struct.pack("<I", len(dims)) + struct.pack(f"<{len(dims)}Q", *dims)
            infos += struct.pack("<IQ", t, offset)
            offset += (len(data) + ALIGN - 1) // ALIGN * ALIGN
        out = head + infos
        out += b"\0" * (-len(out) % ALIGN)
        for _, _, _, data in self.tensors:
            out += data + b"\0" * (-len(data) % ALIGN)
        tmp = path + ".tmp"
        with open(tmp, "wb") as f:
            f.write(out)
        os.replace(tmp, path)
