#!/usr/bin/python3
"""Writer and reader of attnscope model files (*.attnscope). See tools/MODEL_FORMAT.md.

Layout (all integers little-endian):

    bytes 0..7    magic b"ATTNSCP1"
    bytes 8..11   uint32 header_len = byte length of the UTF-8 JSON header (without padding)
    bytes 12..    JSON header (UTF-8, header_len bytes)
                  zero bytes (0..3 of them) so that the data section starts at a multiple of 4:
                  data_start = 12 + header_len rounded up to a multiple of 4
    data_start..  float32 little-endian tensor data; tensor k occupies floats
                  [offset_k, offset_k + prod(shape_k)) counted from data_start.
                  The file ends right after the last float.

Only the Python standard library and numpy are needed; torch is optional (state dicts of
torch tensors are accepted by write_model, and read_model returns numpy arrays).
"""

import json
import struct

import numpy as np

MAGIC = b"ATTNSCP1"
FORMAT_VERSION = 1


def _to_numpy_f32(t):
    if hasattr(t, "detach"):  # torch tensor
        t = t.detach().cpu().to(dtype=__import__("torch").float32).numpy()
    a = np.ascontiguousarray(np.asarray(t, dtype="<f4"))
    return a


def build_header(kind, config, vocab, tensors, named_heads=None, training=None):
    """tensors: list of (name, array). Returns (header dict, list of little-endian f32 arrays)."""
    entries, arrays, offset = [], [], 0
    seen = set()
    for name, t in tensors:
        if name in seen:
            raise ValueError(f"duplicate tensor name {name!r}")
        seen.add(name)
        a = _to_numpy_f32(t)
        entries.append({"name": name, "shape": [int(d) for d in a.shape], "offset": offset})
        arrays.append(a.reshape(-1))
        offset += a.size
    header = {
        "format": FORMAT_VERSION,
        "kind": kind,
        "config": config,
        "vocab": vocab,
        "tensors": entries,
        "data_floats": offset,
        "named_heads": list(named_heads or []),
        "training": training or {},
    }
    return header, arrays


def write_model(path, kind, config, vocab, tensors, named_heads=None, training=None):
    """Write a model file. `tensors` is an iterable of (name, tensor) pairs or a state dict
    (its order is kept). Returns the number of bytes written."""
    if hasattr(tensors, "items"):
        tensors = list(tensors.items())
    header, arrays = build_header(kind, config, vocab, list(tensors), named_heads, training)
    hjson = json.dumps(header, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    pad = (-(len(MAGIC) + 4 + len(hjson))) % 4
    with open(path, "wb") as f:
        f.write(MAGIC)
        f.write(struct.pack("<I", len(hjson)))
        f.write(hjson)
        f.write(b"\0" * pad)
        for a in arrays:
            f.write(a.astype("<f4", copy=False).tobytes())
        size = f.tell()
    return size


def read_model(path):
    """Read a model file -> (header dict, {name: numpy float32 array with its shape}).
    Checks the magic, the padding, every tensor's extent and the total file size."""
    with open(path, "rb") as f:
        blob = f.read()
    if len(blob) < 12 or blob[:8] != MAGIC:
        raise ValueError(f"{path}: not an attnscope model file (bad magic)")
    (hlen,) = struct.unpack("<I", blob[8:12])
    if 12 + hlen > len(blob):
        raise ValueError(f"{path}: header length {hlen} exceeds the file")
    header = json.loads(blob[12:12 + hlen].decode("utf-8"))
    data_start = (12 + hlen + 3) // 4 * 4
    if any(b != 0 for b in blob[12 + hlen:data_start]):
        raise ValueError(f"{path}: non-zero header padding")
    if header.get("format") != FORMAT_VERSION:
        raise ValueError(f"{path}: unsupported format {header.get('format')!r}")
    nfloats = (len(blob) - data_start) // 4
    if (len(blob) - data_start) % 4:
        raise ValueError(f"{path}: data section is not a whole number of floats")
    data = np.frombuffer(blob, dtype="<f4", count=nfloats, offset=data_start)
    tensors, end = {}, 0
    for e in header["tensors"]:
        n = int(np.prod(e["shape"])) if e["shape"] else 1
        o = int(e["offset"])
        if o < 0 or o + n > nfloats:
            raise ValueError(f"{path}: tensor {e['name']} out of range")
        tensors[e["name"]] = data[o:o + n].reshape(e["shape"]).astype(np.float32)
        end = max(end, o + n)
    if "data_floats" in header and header["data_floats"] != nfloats:
        raise ValueError(f"{path}: data_floats {header['data_floats']} != {nfloats} floats in file")
    if end != nfloats:
        raise ValueError(f"{path}: {nfloats - end} trailing floats not covered by any tensor")
    return header, tensors


def load_state_dict_into(module, tensors):
    """Load read_model()'s tensors into a torch module (strict: same names and shapes)."""
    import torch
    sd = {k: torch.from_numpy(v.copy()) for k, v in tensors.items()}
    module.load_state_dict(sd, strict=True)
    return module


if __name__ == "__main__":
    import sys
    for p in sys.argv[1:]:
        h, ts = read_model(p)
        n = sum(v.size for v in ts.values())
        print(f"{p}: kind={h['kind']} tensors={len(ts)} floats={n} ({4 * n / 1e6:.2f} MB)")
        print("  config:", json.dumps(h["config"], ensure_ascii=False))
        for nh in h.get("named_heads", []):
            print("  head:", json.dumps(nh, ensure_ascii=False))
