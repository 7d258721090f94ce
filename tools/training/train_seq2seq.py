#!/usr/bin/python3
"""Train attnscope's encoder-decoder demo model: English dates in words or digits -> ISO dates
(e.g. "the fifth of march nineteen ninety" -> "1990-03-05", "March 5th" -> "--03-05", "31 April 1990" -> "invalid"),
and write models/dates-seq2seq.safetensors and tools/records/dates-seq2seq.md.

    /usr/bin/python3 tools/training/train_seq2seq.py               # train (deterministic, seed 4321)
    /usr/bin/python3 tools/training/train_seq2seq.py --steps 100   # quick smoke run
    /usr/bin/python3 tools/training/train_seq2seq.py --analyse-only

Tokenisation (stored in the model file, see tools/MODEL_FORMAT.md):
* source: ASCII A-Z lower-cased; every character outside [a-z0-9] separates words; empty words
  dropped; each word -> its id in vocab.src_tokens, else <unk>. No BOS/EOS on the source.
  Ids: 0 <pad>, 1 <unk>, then the words.
* target: one token per character of "YYYY-MM-DD" or "--MM-DD", or the one token "invalid". Ids: 0 <pad>,
  1 <bos>, 2 <eos>, then "-", "0".."9", "invalid". The decoder input starts with <bos>; greedy argmax decoding
  stops at <eos> or when BOS + output reaches max_tgt_len (= 12) positions.

After training, the model is also scored on the 3,000 held-out dates of tools/data/dates_heldout.py (a generator
written apart from tools/data/dates_data.py), the number issue #14 sets the goal for.
"""

import argparse
import datetime
import json
import os
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/ (tools/README.md, "Imports")
import attnscope_tools  # noqa: E402,F401  (first: no __pycache__ in tools/)
from attnscope_tools import config, records, runtime, schedule  # noqa: E402

BLAS = runtime.setup(threads=1)

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from data import dates_data as dd  # noqa: E402
from data.dates_vocab import TGT_BOS, TGT_EOS, TGT_PAD, Vocab, alignment_targets, make_batch, sample_examples  # noqa: E402
from measure import dates_heads, dates_record  # noqa: E402
from training.attnscope_nets import Seq2SeqModel  # noqa: E402

MODEL_PATH, RECORD_PATH = records.output_paths("dates-seq2seq")

CFG = config.sizes("seq2seq", d_model=64, n_heads=4, n_enc_layers=3, n_dec_layers=2, d_ff=128,
                   max_src_len=dd.MAX_WORDS, max_tgt_len=12)
TRAIN = dict(seed=4321, steps=8000, batch=128, lr=2e-3, min_lr_frac=0.05, warmup=150,
             weight_decay=0.01, grad_clip=1.0, betas=(0.9, 0.98), heldout_date_frac=0.1,
             n_test=3000, align_weight=0.1)


def alignment_loss(cross, field, query):
    """-log of the cross-attention mass (each decoder layer's average over heads) on the source words of the field
    being written, averaged over the queries that write a field's digit. Without it the 3-layer encoder gathers
    the date into fixed positions (whatever word stands there) and cross-attention shows nothing a learner can
    read (the first 8,000-step run: every head below a uniform head's score on the field words)."""
    w = torch.stack(cross, 0).mean(2)                  # [L, B, T, S]
    mass = (w * field[None]).sum(-1).clamp_min(1e-6)   # [L, B, T]
    return -(mass.log() * query[None]).sum() / (query.sum() * w.shape[0]).clamp_min(1.0)


@torch.no_grad()
def evaluate(model, vocab, examples, batch=500):
    tot, n, exact, char_ok, char_n = 0.0, 0, 0, 0, 0
    wrong = []
    for i in range(0, len(examples), batch):
        ex = examples[i:i + batch]
        src, pad, tin, tout = make_batch(vocab, [(e[0], e[1]) for e in ex])
        logits = model(src, tin, src_pad=pad)
        ce = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tout.reshape(-1),
                             ignore_index=TGT_PAD, reduction="sum")
        tot += float(ce)
        n += int((tout != TGT_PAD).sum())
        outs = model.translate(src, TGT_BOS, TGT_EOS, src_pad=pad)
        for e, o in zip(ex, outs):
            ok = o == e[1]
            exact += ok
            ref = e[1]
            char_ok += sum(1 for a, b in zip(o, ref) if a == b)
            char_n += len(ref)
            if not ok and len(wrong) < 12:
                wrong.append((" ".join(e[2]), e[4], vocab.detokenize_target(o)))
    return {"loss": tot / n, "exact_match": exact / len(examples), "char_acc": char_ok / char_n,
            "n": len(examples), "errors": wrong}


HELDOUT = dict(seed=2026, count=3000)  # tools/data/dates_heldout.py's defaults: the same 3,000 as build/dates-heldout.jsonl


@torch.no_grad()
def evaluate_heldout_generator(model, vocab, batch=500):
    """Exact match on the dates of tools/data/dates_heldout.py (written apart from dates_data.py; used here only to
    score the finished model, never to train or choose a step), by kind, plus how many answers are impossible
    dates (YYYY-MM-DD shaped, no calendar day). tools/measure/eval_dates.py gives the same number with NumPy."""
    from data import dates_heldout
    rng = random.Random(HELDOUT["seed"])
    examples = [dates_heldout.example(rng) for _ in range(HELDOUT["count"])]
    by_kind, errors, impossible, right = {}, [], 0, 0
    for i in range(0, len(examples), batch):
        ex = examples[i:i + batch]
        ids = [vocab.tokenize_source(e["text"]) for e in ex]
        src, pad, _, _ = make_batch(vocab, [(s, [TGT_EOS]) for s in ids])
        for e, o in zip(ex, model.translate(src, TGT_BOS, TGT_EOS, src_pad=pad)):
            got = vocab.detokenize_target(o)
            k = by_kind.setdefault(e["kind"], {"right": 0, "n": 0})
            k["n"] += 1
            ok = got == e["expected"]
            k["right"] += ok
            right += ok
            if len(got) == 10 and got[4] == got[7] == "-" and got[0] != "-":
                try:
                    datetime.date.fromisoformat(got)
                except ValueError:
                    impossible += 1
            if not ok and len(errors) < 12:
                errors.append((e["text"], e["expected"], got))
    return {"generator": f"tools/data/dates_heldout.py --seed {HELDOUT['seed']} --count {HELDOUT['count']}",
            "exact_match": right / len(examples), "right": right, "n": len(examples), "by_kind": by_kind,
            "impossible": impossible, "errors": errors}


def train(model, vocab, quick):
    """The training loop -> (final train loss, progress entries, seconds)."""
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2 and "emb" not in n]
    no_decay = [p for n, p in model.named_parameters() if not (p.dim() >= 2 and "emb" not in n)]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": TRAIN["weight_decay"]},
                             {"params": no_decay, "weight_decay": 0.0}], lr=TRAIN["lr"], betas=TRAIN["betas"])
    rng = random.Random(TRAIN["seed"])
    losses, align_losses, progress = [], [], []
    t0 = time.time()
    for step in range(TRAIN["steps"]):
        lr = schedule.set_lr(opt, step, TRAIN)
        ex = sample_examples(rng, vocab, False, TRAIN["batch"])
        src, pad, tin, tout = make_batch(vocab, [(e[0], e[1]) for e in ex])
        logits, ws = model(src, tin, src_pad=pad, need_weights=True)
        loss = ce = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tout.reshape(-1), ignore_index=TGT_PAD)
        if TRAIN["align_weight"]:
            field, query = alignment_targets(ex, src.shape[1], tin.shape[1])
            align = alignment_loss(ws["dec_cross"], field, query)
            align_losses.append(float(align))
            loss = loss + TRAIN["align_weight"] * align
        schedule.optimizer_step(opt, model, loss, TRAIN["grad_clip"])
        losses.append(float(ce))  # the cross-entropy alone, comparable with the held-out loss
        if (step + 1) % 100 == 0 or step == 0:
            avg = float(np.mean(losses[-50:]))
            msg = f"step {step + 1:5d}  loss {avg:.5f}  lr {lr:.2e}  {time.time() - t0:6.0f}s"
            entry = {"step": step + 1, "train_loss": avg, "lr": lr}
            if align_losses:
                entry["align_loss"] = float(np.mean(align_losses[-50:]))
                msg += f"  align {entry['align_loss']:.4f}"
            if (step + 1) % 500 == 0 or step + 1 == TRAIN["steps"]:
                ev = evaluate(model, vocab, quick)
                entry["heldout_loss"] = ev["loss"]
                entry["heldout_exact"] = ev["exact_match"]
                msg += f"  held-out(500) loss {ev['loss']:.5f} exact {100 * ev['exact_match']:.2f}%"
                progress.append(entry)
            print(msg, flush=True)
    train_seconds = time.time() - t0
    return float(np.mean(losses[-50:])), progress, train_seconds


def main():
    ap = argparse.ArgumentParser()
    records.add_run_args(ap, TRAIN["steps"])
    args = ap.parse_args()
    global MODEL_PATH, RECORD_PATH
    MODEL_PATH, RECORD_PATH = records.output_paths("dates-seq2seq", args)
    TRAIN["steps"] = args.steps
    vocab = Vocab(CFG["max_src_len"])
    all_dates = [dd.START + datetime.timedelta(days=i) for i in range(dd.N_DAYS)]
    n_held = sum(dd.is_heldout(d.year, d.month, d.day, TRAIN["heldout_date_frac"]) for d in all_dates)
    print(f"blas: {BLAS}")
    print(f"{len(all_dates) - n_held} training dates, {n_held} held-out dates; "
          f"src vocab {len(vocab.src_tokens)}, tgt vocab {len(vocab.tgt_tokens)}")
    test = sample_examples(random.Random(TRAIN["seed"] + 1), vocab, True, TRAIN["n_test"])
    quick = test[:500]

    torch.manual_seed(TRAIN["seed"])
    model = Seq2SeqModel(len(vocab.src_tokens), len(vocab.tgt_tokens), CFG["d_model"], CFG["n_heads"],
                         CFG["n_enc_layers"], CFG["n_dec_layers"], CFG["d_ff"], CFG["max_src_len"], CFG["max_tgt_len"])
    nparams = sum(p.numel() for p in model.parameters())
    print(f"params {nparams} ({4 * nparams / 1e6:.2f} MB)")

    if args.analyse_only:
        record = records.read_trained(MODEL_PATH, model, lambda v: v == vocab.to_json())
    else:
        final_loss, progress, train_seconds = train(model, vocab, quick)
        record = records.run_record("tools/training/train_seq2seq.py", BLAS, nparams, TRAIN, train_seconds, final_loss,
                                    progress)
        record["data"] = {"source": "synthetic (tools/data/dates_data.py)", "train_dates": len(all_dates) - n_held,
                          "heldout_dates": n_held, "src_vocab": len(vocab.src_tokens),
                          "tgt_vocab": len(vocab.tgt_tokens)}
    ev = evaluate(model, vocab, test)
    record["test"] = dict(ev)
    print(f"held-out: loss {ev['loss']:.3e} exact match {100 * ev['exact_match']:.2f}% "
          f"char acc {100 * ev['char_acc']:.2f}% (n={ev['n']})")
    for s, e, g in ev["errors"]:
        print(f"  error: {s!r} -> expected {e} got {g}")
    gen = evaluate_heldout_generator(model, vocab)
    record["heldout_generator"] = gen
    print(f"{gen['generator']}: exact match {100 * gen['exact_match']:.2f}% ({gen['right']}/{gen['n']}); "
          + ", ".join(f"{k} {v['right']}/{v['n']}" for k, v in gen["by_kind"].items())
          + f"; impossible dates output: {gen['impossible']}")
    for s, e, g in gen["errors"]:
        print(f"  error: {s!r} -> expected {e} got {g}")
    scores, baselines, counts = dates_heads.analyse_heads(model, vocab, test[:600])
    named = dates_heads.name_heads(scores, baselines)
    table = dates_heads.heads_table(scores, baselines, counts, named)
    print(table)
    record["head_analysis"] = {"scores": {m: [[round(s, 4) for s in row] for row in v] for m, v in scores.items()},
                               "baselines": {m: round(v, 4) for m, v in baselines.items()}, "counts": counts,
                               "thresholds": {m: {"score": dates_heads.METRICS[m][2], "lift": dates_heads.METRICS[m][3]}
                                              for m in dates_heads.METRICS},
                               "data": "first 600 held-out examples, teacher-forced"}
    cfg = config.make("seq2seq", **CFG, src_vocab_size=len(vocab.src_tokens), tgt_vocab_size=len(vocab.tgt_tokens))
    size = records.write_model(MODEL_PATH, "seq2seq", cfg, vocab.to_json(), model.state_dict(), named, record)
    dates_record.write_record(RECORD_PATH, record, CFG, table)
    print(f"wrote {MODEL_PATH} ({size} bytes) and {RECORD_PATH}")
    for n in named:
        print("named head:", json.dumps(n))


if __name__ == "__main__":
    main()
