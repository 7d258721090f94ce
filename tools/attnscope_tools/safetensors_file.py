#!/usr/bin/python3
"""A safetensors writer and reader that needs only the Python standard library (numpy and torch tensors
are accepted when those are installed).

The format (https://github.com/huggingface/safetensors, the file PyTorch users export with
`safetensors.torch.save_file`):

    bytes 0..7     uint64 little-endian N: byte length of the JSON header
    bytes 8..8+N   UTF-8 JSON object: {"__metadata__": {str: str}, name: {"dtype": "F32",
                   "shape": [..], "data_offsets": [begin, end]}, ...}; may end in spaces (0x20)
    then           the data section; a tensor's bytes are [begin, end) counted from its start,
                   row-major, little-endian. The tensors tile the data section exactly.

The writer keeps the order it is given in the data section (a state dict's order), pads the header
with spaces to a multiple of 8 bytes (so every tensor is 8-byte aligned, as the reference writer does),
and writes F32 unless `dtypes` names another of WRITABLE for a tensor (F16 and BF16 round to nearest even,
as torch's casts do; I64/I32 take integers). Python's `safetensors` package is not packaged by Debian, so
this file is the project's writer; tests/js/model-files.test.js reads its output with an independent reader
and with the package's readSafetensors.

The reader is strict and reads F32 only by default (what attnscope's model files hold); `allow=WRITABLE`
also reads F16/BF16 (widened to float32) and I64/I32.
"""

import json
import struct
import sys
from array import array
from collections import namedtuple

DTYPES = ("F32",)  # the one dtype attnscope's own model files hold
WRITABLE = ("F32", "F16", "BF16", "I64", "I32")
_SIZE = {"F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4}

# A tensor as read: its shape and its values, row-major, as array('f').
Tensor = namedtuple("Tensor", "shape values")


def _numel(shape):
    n = 1
    for d in shape:
        n *= int(d)
    return n


def _as_f32(t):
    """(shape, little-endian float32 bytes) of a torch tensor, numpy array, Tensor or nested list."""
    if hasattr(t, "detach"):  # a torch tensor
        t = t.detach().cpu().float().contiguous().numpy()
    if hasattr(t, "dtype") and hasattr(t, "tobytes"):  # a numpy array
        return [int(d) for d in t.shape], t.astype("<f4").tobytes(order="C")
    if isinstance(t, Tensor):
        shape, values = list(t.shape), array("f", t.values)
    else:
        shape, flat = [], t
        while isinstance(flat, (list, tuple)):
            shape.append(len(flat))
            flat = flat[0] if flat else None
        values = array("f")
        def walk(x, depth):
            if depth == len(shape):
                values.append(float(x))
                return
            if len(x) != shape[depth]:
                raise ValueError("ragged nested list")
            for y in x:
                walk(y, depth + 1)
        walk(t, 0)
    if _numel(shape) != len(values):
        raise ValueError(f"shape {shape} does not match {len(values)} values")
    if sys.byteorder == "big":
        values.byteswap()
    return shape, values.tobytes()


def _convert(raw_f32, dtype):
    """Little-endian float32 bytes -> the bytes of `dtype` (F16, BF16 rounded to nearest even; I64, I32 exact)."""
    values = array("f", raw_f32)
    if sys.byteorder == "big":
        values.byteswap()
    if dtype == "F16":
        return b"".join(struct.pack("<e", v) for v in values)  # struct's 'e' rounds to nearest even
    if dtype == "BF16":
        out = array("H")
        for bits in struct.unpack(f"<{len(values)}I", values.tobytes() if sys.byteorder == "little"
                                  else struct.pack(f"<{len(values)}f", *values)):
            if (bits & 0x7F800000) == 0x7F800000 and bits & 0x7FFFFF:
                out.append((bits >> 16) | 0x40)  # NaN stays a (quiet) NaN
            else:
                out.append((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16)  # round to nearest, ties to even
        return struct.pack(f"<{len(out)}H", *out)
    if dtype in ("I64", "I32"):
        if any(v != int(v) for v in values):
            raise ValueError(f"{dtype} tensor with non-integer values")
        return struct.pack(f"<{len(values)}{'q' if dtype == 'I64' else 'i'}", *(int(v) for v in values))
    raise ValueError(f"dtype {dtype!r} is not one of {WRITABLE}")


def encode(tensors, metadata=None, dtypes=None):
    """`tensors`: a state dict or (name, array) pairs; `metadata`: {str: str}; `dtypes`: {name: one of WRITABLE}
    for tensors not to be stored as F32. Integer tensors pass through float32, so they must stay below 2**24.
    Returns the file's bytes."""
    dtypes = dtypes or {}
    if hasattr(tensors, "items"):
        tensors = list(tensors.items())
    header, arrays, offset = {}, [], 0
    if metadata:
        for k, v in metadata.items():
            if not isinstance(k, str) or not isinstance(v, str):
                raise TypeError(f"__metadata__ must map strings to strings, got {k!r}: {type(v).__name__}")
        header["__metadata__"] = dict(metadata)
    for name, t in tensors:
        if name in header or name == "__metadata__":
            raise ValueError(f"duplicate tensor name {name!r}")
        shape, raw = _as_f32(t)
        dtype = dtypes.get(name, "F32")
        if dtype != "F32":
            raw = _convert(raw, dtype)
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + len(raw)]}
        arrays.append(raw)
        offset += len(raw)
    text = json.dumps(header, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)
    return b"".join([struct.pack("<Q", len(text)), text] + arrays)


def save_file(tensors, path, metadata=None, dtypes=None):
    """Same call as `safetensors.torch.save_file(tensors, path, metadata)`, plus `dtypes` (see encode). Returns the
    bytes written."""
    blob = encode(tensors, metadata, dtypes)
    with open(path, "wb") as f:
        f.write(blob)
    return len(blob)


def save_stream(path, entries, metadata=None):
    """Writes a safetensors file one tensor at a time, for files too large to build in memory (encode holds the whole
    file). `entries`: (name, dtype, shape, produce) in data order, `produce()` returning that tensor's little-endian
    bytes, called once each as it is written, so only one tensor's bytes are alive at a time. The header comes from
    the shapes alone, before any data; a producer whose bytes do not match its shape is a ValueError. Returns the
    bytes written."""
    header, offset = {}, 0
    if metadata:
        header["__metadata__"] = dict(metadata)
    for name, dtype, shape, _ in entries:
        if dtype not in _SIZE:
            raise ValueError(f"{name}: dtype {dtype!r} is not one of {WRITABLE}")
        if name in header or name == "__metadata__":
            raise ValueError(f"duplicate tensor name {name!r}")
        n = _SIZE[dtype] * _numel(shape)
        header[name] = {"dtype": dtype, "shape": [int(d) for d in shape], "data_offsets": [offset, offset + n]}
        offset += n
    text = json.dumps(header, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        for name, dtype, shape, produce in entries:
            raw = produce()
            begin, end = header[name]["data_offsets"]
            if len(raw) != end - begin:
                raise ValueError(f"{name}: {len(raw)} bytes produced for shape {list(shape)} of {dtype} ({end - begin} expected)")
            f.write(raw)
            del raw
    return 8 + len(text) + offset


def _widen(raw, dtype):
    """Little-endian bytes of `dtype` -> array('f') (floats) or array('q') (integers)."""
    n = len(raw) // _SIZE[dtype]
    if dtype == "F32":
        return array("f", struct.unpack(f"<{n}f", raw))
    if dtype == "F16":
        return array("f", struct.unpack(f"<{n}e", raw))
    if dtype == "BF16":
        return array("f", struct.unpack(f"<{n}f", struct.pack(f"<{n}I", *(h << 16 for h in struct.unpack(f"<{n}H", raw)))))
    return array("q", struct.unpack(f"<{n}{'q' if dtype == 'I64' else 'i'}", raw))


def decode(blob, allow=DTYPES):
    """bytes -> (metadata dict, {name: Tensor(shape, array)}) in data order. Strict: the checks attnscope's
    C++ reader makes (header length, dtype in `allow`, integer shapes and offsets tiling the data exactly)."""
    if len(blob) < 8:
        raise ValueError("shorter than the 8-byte header length")
    (n,) = struct.unpack("<Q", blob[:8])
    if n > len(blob) - 8:
        raise ValueError(f"header length {n} runs past the end of the file ({len(blob)} bytes)")
    header = json.loads(blob[8:8 + n].decode("utf-8"))
    if not isinstance(header, dict):
        raise ValueError("the header is not a JSON object")
    metadata = header.pop("__metadata__", {}) or {}
    data = memoryview(blob)[8 + n:]
    entries = sorted(header.items(), key=lambda kv: kv[1]["data_offsets"][0])
    tensors, end = {}, 0
    for name, e in entries:
        if e.get("dtype") not in allow or e.get("dtype") not in _SIZE:
            raise ValueError(f"{name}: dtype {e.get('dtype')!r} is not supported")
        shape = e["shape"]
        begin, stop = e["data_offsets"]
        if not all(type(d) is int and d >= 0 for d in shape + [begin, stop]):
            raise ValueError(f"{name}: shape and data_offsets must be non-negative integers")
        if begin != end or stop - begin != _SIZE[e["dtype"]] * _numel(shape):
            raise ValueError(f"{name}: data_offsets {e['data_offsets']} do not follow on at {end} with shape {shape}")
        tensors[name] = Tensor(shape, _widen(bytes(data[begin:stop]), e["dtype"]))
        end = stop
    if end != len(data):
        raise ValueError(f"the tensors cover {end} of the data section's {len(data)} bytes")
    return metadata, tensors


def load_file(path, allow=DTYPES):
    with open(path, "rb") as f:
        return decode(f.read(), allow)
