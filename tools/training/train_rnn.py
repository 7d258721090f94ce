#!/usr/bin/python3
"""Train the two GRU encoder-decoders of the "why attention" comparison on the dates task, with the shipped
transformer's data, vocabulary and budget (tools/training/train_seq2seq.py: the same example stream from the same seed,
8000 steps x 128 examples, AdamW with the same schedule), and write models/dates-gru-<variant>.safetensors and
tools/records/dates-gru-<variant>.md.

    nice -n 10 /usr/bin/python3 tools/training/train_rnn.py --attention none   # (a) the fixed-context bottleneck
    nice -n 10 /usr/bin/python3 tools/training/train_rnn.py --attention dot    # (b) + Luong dot-product attention
    /usr/bin/python3 tools/training/train_rnn.py --attention dot --steps 50 --out-model /tmp/x.safetensors --out-record /tmp/x.md

The transformer's auxiliary alignment loss is not used: here the attention is left to learn what it will, and
what it learnt is what the demo shows. tools/measure/measure_bottleneck.py measures the three models against length.
"""

import argparse
import os
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/ (tools/README.md, "Imports")
import attnscope_tools  # noqa: E402,F401  (first: no __pycache__ in tools/)
from training import train_seq2seq as ts  # noqa: E402  (next: sets up torch, one thread, OpenBLAS)

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from attnscope_tools import attnscope_model, schedule  # noqa: E402
from attnscope_tools.paths import RECORDS, ROOT  # noqa: E402
from data import dates_data as dd, dates_vocab as dv  # noqa: E402
from training.rnn_nets import RnnSeq2Seq  # noqa: E402

NAMES = {"none": "dates-gru", "dot": "dates-gru-attention"}
# Small enough for the shared machine (about 0.1 MB of weights each); the source limit only bounds the input the
# runtime accepts: a GRU has no positions, so it runs on any length (the measurement goes to 64 words).
CFG = dict(emb=64, hidden=64, max_src_len=128, max_tgt_len=ts.CFG["max_tgt_len"])
TRAIN = {k: ts.TRAIN[k] for k in ("seed", "steps", "batch", "lr", "min_lr_frac", "warmup", "weight_decay",
                                  "grad_clip", "betas", "heldout_date_frac", "n_test")}


def build(vocab, attention):
    return RnnSeq2Seq(len(vocab.src_tokens), len(vocab.tgt_tokens), CFG["emb"], CFG["hidden"], attention,
                      CFG["max_tgt_len"])


def config_json(vocab, attention):
    c = dict(CFG)
    c.update({"cell": "gru", "attention": attention, "src_vocab_size": len(vocab.src_tokens),
              "tgt_vocab_size": len(vocab.tgt_tokens), "decoding": "greedy"})
    return c


def write_record(path, name, attention, r):
    ev, gen = r["test"], r["heldout_generator"]
    what = ("the decoder starts from the encoder's final state and sees nothing else of the source (the fixed "
            "context vector)" if attention == "none" else
            "the same network plus Luong dot-product attention: at each step the decoder's state is the query, "
            "the encoder's states are the keys and the values")
    lines = [f"# {name} training record", "",
             f"Written by `tools/training/train_rnn.py --attention {attention}` on {r['date']} ({r['blas']}, torch "
             f"{r['torch']}, 1 thread).", "",
             f"GRU encoder-decoder (tools/training/rnn_nets.py): {what}. Embeddings {CFG['emb']}, hidden {CFG['hidden']}, "
             f"one layer each side, {r['params']} parameters ({4 * r['params'] / 1e6:.2f} MB float32).", "",
             "Data, vocabulary and budget are the shipped transformer's (tools/records/dates-seq2seq.md): the same "
             f"example stream from seed {TRAIN['seed']}, {TRAIN['steps']} steps x {TRAIN['batch']} examples, AdamW "
             f"lr {TRAIN['lr']} (warm-up {TRAIN['warmup']}, cosine to {TRAIN['min_lr_frac']}x), clip "
             f"{TRAIN['grad_clip']}; no alignment loss. {r['train_seconds']:.0f} s of training on one core of a "
             "shared machine.", "",
             f"- Final train loss (mean of the last 50 steps): {r['final_train_loss']:.2e} nats/token",
             f"- In distribution ({ev['n']} examples of held-out dates): loss {ev['loss']:.2e}, greedy exact match "
             f"**{100 * ev['exact_match']:.2f}%**",
             f"- `{gen['generator']}`: exact match **{100 * gen['exact_match']:.2f}%** ({gen['right']}/{gen['n']}); "
             + ", ".join(f"{k} {v['right']}/{v['n']}" for k, v in gen["by_kind"].items()), "",
             "Errors (first few, held-out generator): " + ("none" if not gen["errors"] else ""), ""]
    lines += [f"- `{s}` -> expected `{e}`, got `{g}`" for s, e, g in gen["errors"][:6]]
    lines += ["", "| step | train loss | held-out loss | held-out exact | lr |", "|---|---|---|---|---|"]
    lines += [f"| {p['step']} | {p['train_loss']:.2e} | {p['heldout_loss']:.2e} | {100 * p['heldout_exact']:.2f}% "
              f"| {p['lr']:.2e} |" for p in r["progress"] if "heldout_loss" in p]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--attention", choices=["none", "dot"], required=True)
    ap.add_argument("--steps", type=int, default=TRAIN["steps"])
    ap.add_argument("--out-model")
    ap.add_argument("--out-record")
    args = ap.parse_args()
    TRAIN["steps"] = args.steps
    name = NAMES[args.attention]
    model_path = os.path.abspath(args.out_model or os.path.join(ROOT, "models", name + ".safetensors"))
    record_path = os.path.abspath(args.out_record or os.path.join(RECORDS, name + ".md"))
    vocab = dv.Vocab(dd.MAX_WORDS)  # the training data as the transformer saw it
    test = dv.sample_examples(random.Random(TRAIN["seed"] + 1), vocab, True, TRAIN["n_test"])
    quick = test[:500]
    torch.manual_seed(TRAIN["seed"])
    model = build(vocab, args.attention)
    nparams = sum(p.numel() for p in model.parameters())
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2 and "emb" not in n]
    no_decay = [p for n, p in model.named_parameters() if not (p.dim() >= 2 and "emb" not in n)]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": TRAIN["weight_decay"]},
                             {"params": no_decay, "weight_decay": 0.0}], lr=TRAIN["lr"], betas=TRAIN["betas"])
    rng = random.Random(TRAIN["seed"])
    losses, progress, t0 = [], [], time.time()
    for step in range(TRAIN["steps"]):
        lr = schedule.lr_at(step, TRAIN["steps"], TRAIN["lr"], TRAIN["warmup"], TRAIN["min_lr_frac"])
        for g in opt.param_groups:
            g["lr"] = lr
        ex = dv.sample_examples(rng, vocab, False, TRAIN["batch"])
        src, pad, tin, tout = dv.make_batch(vocab, [(e[0], e[1]) for e in ex])
        logits = model(src, tin, src_pad=pad)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tout.reshape(-1), ignore_index=dv.TGT_PAD)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), TRAIN["grad_clip"])
        opt.step()
        losses.append(float(loss))
        if (step + 1) % 500 == 0 or step + 1 == TRAIN["steps"]:
            ev = ts.evaluate(model, vocab, quick)
            entry = {"step": step + 1, "train_loss": float(np.mean(losses[-50:])), "lr": lr,
                     "heldout_loss": ev["loss"], "heldout_exact": ev["exact_match"]}
            progress.append(entry)
            print(f"step {step + 1:5d} loss {entry['train_loss']:.5f} held-out {ev['loss']:.5f} "
                  f"exact {100 * ev['exact_match']:.2f}% {time.time() - t0:5.0f}s", flush=True)
    record = {"script": f"tools/training/train_rnn.py --attention {args.attention}", "date": time.strftime("%Y-%m-%d"),
              "torch": torch.__version__, "blas": os.path.basename(os.path.dirname(ts.BLAS)) + "/"
              + os.path.basename(ts.BLAS), "params": nparams, "train": dict(TRAIN),
              "train_seconds": round(time.time() - t0, 1), "final_train_loss": float(np.mean(losses[-50:])),
              "progress": progress}
    record["test"] = ts.evaluate(model, vocab, test)
    record["heldout_generator"] = ts.evaluate_heldout_generator(model, vocab)
    print(f"held-out exact {100 * record['test']['exact_match']:.2f}%, generator "
          f"{100 * record['heldout_generator']['exact_match']:.2f}%")
    size = attnscope_model.write_model(model_path, "rnn_seq2seq", config_json(vocab, args.attention),
                                       vocab.to_json(), model.state_dict(), training=record)
    write_record(record_path, name, args.attention, record)
    print(f"wrote {model_path} ({size} bytes) and {record_path}")


if __name__ == "__main__":
    main()
