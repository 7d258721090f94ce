#!/usr/bin/python3
"""attnscope's trained-model files: safetensors (tools/attnscope_tools/safetensors_file.py) with the model's
description in `__metadata__`. See tools/MODEL_FORMAT.md.

    write_model(path, kind, config, vocab, state_dict, named_heads, training)
    read_model(path) -> (header, {name: numpy float32 array})

`header` is {"format", "kind", "config", "vocab", "named_heads", "training", "tensors"}: the metadata's
JSON strings decoded, and the tensors' names, shapes and element offsets in data order.
`python3 tools/attnscope_tools/attnscope_model.py FILE...` prints a summary; `--convert OLD.attnscope NEW.safetensors`
rewrites a file of the first format (ATTNSCP1, read by read_legacy_model) as safetensors.

Only the Python standard library is needed; read_model returns numpy arrays when numpy is installed
(as it is with torch), else safetensors_file.Tensor(shape, array('f')).
"""

import json
import os
import struct
import sys
from array import array

if __name__ == "__main__":  # run as a script (a summary, --convert): tools/ on the path (tools/README.md, "Imports")
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from attnscope_tools import safetensors_file  # noqa: E402

try:
    import numpy as np
except ImportError:  # conversion and inspection work without it
    np = None

FORMAT = "attnscope-model/1"  # __metadata__["format"]
LEGACY_MAGIC = b"ATTNSCP1"
METADATA_JSON_KEYS = ("config", "vocab", "named_heads", "training")


def _json(value):
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def write_model(path, kind, config, vocab, tensors, named_heads=None, training=None):
    """Write a model file. `tensors` is a state dict or (name, tensor) pairs (order kept).
    Returns the number of bytes written."""
    metadata = {"format": FORMAT, "kind": kind, "config": _json(config), "vocab": _json(vocab),
                "named_heads": _json(list(named_heads or [])), "training": _json(training or {})}
    return safetensors_file.save_file(tensors, path, metadata)


def read_model(path):
    """Read a model file -> (header dict, {name: numpy float32 array with its shape})."""
    metadata, tensors = safetensors_file.load_file(path)
    if metadata.get("format") != FORMAT:
        raise ValueError(f"{path}: __metadata__.format is {metadata.get('format')!r}, expected {FORMAT!r}")
    header = {"format": FORMAT, "kind": metadata["kind"]}
    for key in METADATA_JSON_KEYS:
        header[key] = json.loads(metadata[key])
    entries, offset = [], 0
    for name, t in tensors.items():
        entries.append({"name": name, "shape": list(t.shape), "offset": offset})
        offset += len(t.values)
    header["tensors"] = entries
    if np is not None:
        tensors = {k: np.frombuffer(t.values.tobytes(), dtype="=f4").reshape(t.shape).copy() for k, t in tensors.items()}
    return header, tensors


def read_legacy_model(path):
    """Read a file of the first format (magic ATTNSCP1, uint32 header length, JSON, float32 data at a
    4-byte boundary) -> (header dict, {name: array}). Kept only to convert old files."""
    with open(path, "rb") as f:
        blob = f.read()
    if len(blob) < 12 or blob[:8] != LEGACY_MAGIC:
        raise ValueError(f"{path}: not a legacy attnscope model file (bad magic)")
    (hlen,) = struct.unpack("<I", blob[8:12])
    header = json.loads(blob[12:12 + hlen].decode("utf-8"))
    data_start = (12 + hlen + 3) // 4 * 4
    data = array("f", blob[data_start:])  # little-endian, as every machine these tools run on
    tensors = {}
    for e in header["tensors"]:
        n = safetensors_file._numel(e["shape"])
        tensors[e["name"]] = safetensors_file.Tensor(e["shape"], data[e["offset"]:e["offset"] + n])
    return header, tensors


def convert_legacy(old_path, new_path):
    h, ts = read_legacy_model(old_path)
    return write_model(new_path, h["kind"], h["config"], h["vocab"], ts, h.get("named_heads"), h.get("training"))


def load_state_dict_into(module, tensors):
    """Load read_model()'s tensors into a torch module (strict: same names and shapes)."""
    import torch
    sd = {k: torch.from_numpy(v.copy()) for k, v in tensors.items()}
    module.load_state_dict(sd, strict=True)
    return module


if __name__ == "__main__":
    if sys.argv[1:2] == ["--convert"]:
        print(f"{sys.argv[3]}: {convert_legacy(sys.argv[2], sys.argv[3])} bytes")
        sys.exit(0)
    for p in sys.argv[1:]:
        h, ts = read_model(p)
        n = sum(safetensors_file._numel(v.shape) for v in ts.values())
        print(f"{p}: kind={h['kind']} tensors={len(ts)} floats={n} ({4 * n / 1e6:.2f} MB)")
        print("  config:", json.dumps(h["config"], ensure_ascii=False))
        for nh in h.get("named_heads", []):
            print("  head:", json.dumps(nh, ensure_ascii=False))
