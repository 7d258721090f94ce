"""What the tools write: a run's record (the `training` JSON of a model file, whose Markdown form goes under
tools/records/), the model file itself, and text files such as measure_heads.py's tables."""

import os
import time

from attnscope_tools.paths import RECORDS, ROOT


def add_run_args(ap, steps):
    """The options every training script has: how long to train, re-analysing a finished model instead, and where
    to write the model and its record instead of models/ and tools/records/."""
    ap.add_argument("--steps", type=int, default=steps)
    ap.add_argument("--analyse-only", action="store_true")
    ap.add_argument("--out-model", help="write the model here instead of models/ (experiments)")
    ap.add_argument("--out-record", help="write the record here instead of tools/records/")


def output_paths(name, args=None):
    """(model file, record) of the run called `name`: models/<name>.safetensors and tools/records/<name>.md, or
    --out-model / --out-record when `args` gives them."""
    model = os.path.join(ROOT, "models", name + ".safetensors")
    record = os.path.join(RECORDS, name + ".md")
    if args is not None and args.out_model:
        model = os.path.abspath(args.out_model)
    if args is not None and args.out_record:
        record = os.path.abspath(args.out_record)
    return model, record


def read_trained(path, model, vocab_matches):
    """--analyse-only: load the finished model at `path` into `model` (its file's vocabulary must pass
    `vocab_matches`) and return its training record."""
    from attnscope_tools import attnscope_model
    header, tensors = attnscope_model.read_model(path)
    assert vocab_matches(header["vocab"]), "vocabulary changed since training"
    attnscope_model.load_state_dict_into(model, tensors)
    return header["training"]


def write_text(path, text):
    """Write `text` (UTF-8) to `path`, creating its folder."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def run_record(script, blas, params, train, train_seconds, final_train_loss, progress, init_from=None):
    """The fields a training record begins with, in the order the model file keeps them; the script adds its data
    and evaluations after them."""
    import torch  # the training scripts have it; the NumPy tools never call this
    record = {"script": script, "date": time.strftime("%Y-%m-%d"), "torch": torch.__version__,
              "blas": os.path.basename(os.path.dirname(blas)) + "/" + os.path.basename(blas),
              "params": params, "train": dict(train), "train_seconds": round(train_seconds, 1)}
    if init_from:
        record["init_from"] = init_from
    record.update({"final_train_loss": final_train_loss, "progress": progress})
    return record


def written_by(record):
    """The first line of a record's Markdown."""
    return (f"Written by `{record['script']}` on {record['date']} ({record['blas']}, torch {record['torch']}, "
            "1 thread).")


def write_model(path, kind, config, vocab, state_dict, named_heads, record):
    """The model file (tools/attnscope_tools/attnscope_model.py), its folder created; returns its size in bytes."""
    from attnscope_tools import attnscope_model
    os.makedirs(os.path.dirname(path), exist_ok=True)
    return attnscope_model.write_model(path, kind, config, vocab, state_dict, named_heads=named_heads,
                                       training=record)
