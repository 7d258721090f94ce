#!/usr/bin/python3
"""Train attnscope's character LM (Chinese poems + English fortunes) and write
models/char-lm.safetensors and tools/records/char-lm.md.

    /usr/bin/python3 tools/training/train_lm.py                 # train (deterministic, seed 1234)
    /usr/bin/python3 tools/training/train_lm.py --steps 200     # quick smoke run
    /usr/bin/python3 tools/training/train_lm.py --analyse-only  # re-run the head analysis on the
                                                       # existing model file and rewrite it

Tokenisation (also stored in the model file, see tools/MODEL_FORMAT.md): one token per
Unicode code point; id 0 = <unk> (any code point not in the vocabulary), id 1 = <bos>
(prepended to every input, and placed before every document when documents are packed);
ids 2.. = the most frequent code points of the training text, by descending count
(ties: ascending code point). No other normalisation.

This file is the run: its settings, its data, the training loop, and the calls that evaluate and write. The text
and its tokens are tools/data/lm_data.py, the model tools/training/attnscope_nets.py, the scores
tools/measure/lm_scores.py, the head analysis tools/measure/lm_heads.py, the record tools/measure/lm_record.py.
"""

import argparse
import collections
import hashlib
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/ (tools/README.md, "Imports")
import attnscope_tools  # noqa: E402,F401  (first: no __pycache__ in tools/)
from attnscope_tools import config, records, runtime, schedule  # noqa: E402

BLAS = runtime.setup(threads=1)

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from attnscope_tools import attnscope_model  # noqa: E402
from attnscope_tools.paths import ROOT  # noqa: E402
from data import induction_data, lm_data, zh_common_chars, zh_everyday_heldout  # noqa: E402
from data.lm_data import BOS, SPECIALS, UNK, Tokenizer, build_vocab, pack_in_order, pack_random  # noqa: E402
from measure import lm_heads, lm_record, lm_scores  # noqa: E402
from measure.lm_scores import eval_everyday, eval_loss  # noqa: E402
from training.attnscope_nets import LanguageModel  # noqa: E402

MODEL_PATH, RECORD_PATH = records.output_paths("char-lm")

CFG = config.sizes("decoder_lm", vocab_size=1500, d_model=96, n_heads=4, n_layers=3, d_ff=384, max_len=128)
TIE_HEAD = False  # --tie-head: the output head's weight is the token embedding (config "tie_head")
TRAIN = dict(seed=1234, steps=3600, batch=32, seq_len=128, lr=3e-3, min_lr_frac=0.1, warmup=100,
             weight_decay=0.1, grad_clip=1.0, betas=(0.9, 0.98), pos_init="sinusoidal x 0.1",
             mix={"en": 0.5, "zh_verse": 0.2, "zh_other": 0.3}, heldout_frac=0.05)


def previous_token_loss(w):
    """-log of the weight each query i >= 1 puts on key i-1, averaged: w is one head's [B, T, T] weights.

    An auxiliary loss, used only when asked for (--prev-token-head): without it the layer-0 head that feeds the
    induction head spreads over the last three characters and stays near 0.4 on i-1
    (tools/records/char-lm-unguided-heads.md)."""
    return -torch.log(torch.diagonal(w, offset=-1, dim1=-2, dim2=-1).clamp_min(1e-6)).mean()


def unigram_prior(pools, vocab_size):
    """log p of each token in the Chinese training pools (all but en and zh_words), add-one: the prior that
    --smooth-pool smooths towards. A character of everyday text that the synthetic frames never put in a context
    keeps about the probability its frequency gives it there, instead of the ~0 that learning the frames' certainty
    gives (tools/records/char-lm-everyday.md: a quarter of the everyday targets cost more than uniform's 8.2 nats)."""
    counts = np.ones(vocab_size)
    for name, docs in pools.items():
        if name not in ("en", "zh_words"):
            for d in docs:
                counts += np.bincount(d, minlength=vocab_size)
    return torch.tensor(np.log(counts / counts.sum()), dtype=torch.float32)


def prior_smoothing_loss(logits, y, log_prior, eps):
    """Per-token cross-entropy with its target mixed with the prior: (1 - eps)·CE(y) + eps·CE(prior), eps [B] per
    sequence (0: plain cross-entropy), averaged over every token."""
    logp = F.log_softmax(logits, -1)
    ce = -logp.gather(-1, y.unsqueeze(-1)).squeeze(-1)
    ce_prior = -(logp * log_prior.exp()).sum(-1)
    e = eps.unsqueeze(-1)
    return ((1 - e) * ce + e * ce_prior).mean()


def write_model(model, tokens, named, record):
    vocab = {"tokenizer": "codepoint", "tokens": tokens, "unk_id": UNK, "bos_id": BOS,
             "specials": SPECIALS}
    cfg = config.make("decoder_lm", **dict(CFG, vocab_size=len(tokens)), tie_head=TIE_HEAD)
    return records.write_model(MODEL_PATH, "decoder_lm", cfg, vocab, model.state_dict(), named, record)


def parse_args():
    """The command line, applied to CFG and TRAIN and the output paths."""
    ap = argparse.ArgumentParser()
    records.add_run_args(ap, TRAIN["steps"])
    # The options below share argparse's shape (duplicates pairs runs of them), not logic: each is its own setting.
    # Second round (issue #14): more layers, a larger vocabulary with the demo's characters, Chinese prose
    # from Debian's manuals (tools/data/zh_prose_data.py), and repeated spans for induction heads.
    ap.add_argument("--layers", type=int, default=CFG["n_layers"])
    ap.add_argument("--vocab", type=int, default=CFG["vocab_size"])
    ap.add_argument("--zh-prose", metavar="DIR", help="build/zh/prose: <package>.train.txt / .heldout.txt")
    ap.add_argument("--mix", type=json.loads, help='pool weights as JSON, e.g. {"en": 0.4, "zh_prose": 0.3, ...}')
    ap.add_argument("--repeat-frac", type=float, default=0.0,
                    help="fraction of training sequences that are a span repeated (tools/data/induction_data.py)")
    ap.add_argument("--repeat-text-share", type=float, default=0.5,
                    help="of the repeated spans, the share that is training text rather than random tokens")
    ap.add_argument("--init-from", metavar="MODEL",
                    help="continue training from this model file (same vocabulary): a second phase, e.g. more "
                         "repeated text so that the induction head copies real text, not only random tokens")
    ap.add_argument("--lr", type=float, default=TRAIN["lr"])
    ap.add_argument("--seed", type=int, default=TRAIN["seed"])
    ap.add_argument("--require-demo-chars", action="store_true",
                    help="the vocabulary keeps every character of the demo's sentences (tools/data/zh_prose_data.py)")
    ap.add_argument("--qk-weight-decay", type=float,
                    help="weight decay of the attention input projections (default: the weight decay of the "
                         "other matrices, 0.1); the values' third of in_proj shares it")
    ap.add_argument("--heads", type=int, default=CFG["n_heads"], help="attention heads per layer (default 4)")
    ap.add_argument("--prev-token-head", metavar="LAYER.HEAD",
                    help="guide this head towards the previous token with an auxiliary loss (see previous_token_loss)")
    ap.add_argument("--prev-token-weight", type=float, default=0.1, help="weight of that loss (default 0.1)")
    zh_common_chars.add_train_args(ap)
    ap.add_argument("--remap-vocab", action="store_true",
                    help="with --init-from: the file's vocabulary may differ; rows of the token embedding and the "
                         "output head are copied by character, new characters start as a fresh model's")
    ap.add_argument("--text-pool", action="append", default=[], metavar="NAME=DIR",
                    help="another training pool: the <source>.train.txt / .heldout.txt files of DIR (the format of "
                         "--zh-prose), e.g. zh_everyday=build/zh/everyday/text (tools/data/zh_everyday_data.py)")
    ap.add_argument("--keep-vocab", action="store_true",
                    help="with --init-from: keep the file's vocabulary as it is (new text's other characters are "
                         "<unk>), so that a continued run's token ids do not move")
    ap.add_argument("--smooth-pool", action="append", default=[], metavar="NAME=EPS",
                    help="label smoothing towards the unigram prior (prior_smoothing_loss) on the sequences drawn "
                         "from pool NAME, with weight EPS, e.g. zh_frames=0.2: synthetic text's certainty not learnt")
    ap.add_argument("--tie-head", action="store_true",
                    help="the output head's weight is the token embedding (as GPT-2's lm_head and wte): vocab x d "
                         "floats fewer; with --init-from an untied file, the embedding's rows are kept")
    args = ap.parse_args()
    global TIE_HEAD
    TIE_HEAD = args.tie_head
    if TIE_HEAD:
        TRAIN["tie_head"] = True  # for the record; the file's config says it too
    if args.prev_token_head:
        layer, head = (int(x) for x in args.prev_token_head.split("."))
        TRAIN["prev_token_guide"] = {"layer": layer, "head": head, "weight": args.prev_token_weight}
    CFG["n_layers"], CFG["vocab_size"], CFG["n_heads"] = args.layers, args.vocab, args.heads
    if args.qk_weight_decay is not None:
        TRAIN["qk_weight_decay"] = args.qk_weight_decay
    if args.mix:
        TRAIN["mix"] = args.mix
    if args.zh_common:
        TRAIN["zh_common"] = {"count": args.zh_common, "words_docs": args.zh_words_docs}
    if args.text_pool:
        TRAIN["text_pools"] = dict(pool.split("=", 1) for pool in args.text_pool)
    if args.smooth_pool:
        TRAIN["smooth_pools"] = {k: float(v) for k, v in (pool.split("=", 1) for pool in args.smooth_pool)}
        TRAIN["smooth_prior"] = "unigram of the Chinese pools' training text (every pool but en and zh_words), add-one"
    TRAIN["repeat_frac"] = args.repeat_frac
    TRAIN["repeat_text_share"] = args.repeat_text_share
    TRAIN["lr"], TRAIN["seed"] = args.lr, args.seed
    global MODEL_PATH, RECORD_PATH
    MODEL_PATH, RECORD_PATH = records.output_paths("char-lm", args)
    TRAIN["steps"] = args.steps
    return args


def load_data(args):
    """The training pools (token ids per document) and the held-out sequences, printed as they are built."""
    src = lm_data.load_sources()
    train_docs, held_docs = lm_data.split_sources(src, TRAIN["heldout_frac"])
    if args.zh_prose:
        train_docs["zh_prose"], held_docs["zh_prose"] = lm_data.load_prose(args.zh_prose)
        src["zh_prose"] = train_docs["zh_prose"] + held_docs["zh_prose"]
    for name, directory in TRAIN.get("text_pools", {}).items():
        train_docs[name], held_docs[name] = lm_data.load_prose(directory)
        src[name] = train_docs[name] + held_docs[name]
    required, common = "", None
    if args.require_demo_chars:
        from data import zh_prose_data
        required = "".join(zh_prose_data.DEMO_SENTENCES)
    if args.zh_common:
        chars, mass, distinct = zh_common_chars.common_chars(args.zh_common)
        required += "".join(chars)
        common = {"source": "python3-jieba: " + zh_common_chars.DICT + " (word, frequency, tag; a character "
                  "counts the frequencies of the words it occurs in)", "count": args.zh_common,
                  "distinct_chars": distinct, "frequency_mass": round(mass, 5), "chars": "".join(chars)}
    if args.keep_vocab:
        tokens = attnscope_model.read_model(args.init_from)[0]["vocab"]["tokens"]
        have = set(tokens)
        counts = collections.Counter(c for docs in train_docs.values() for d in docs for c in d)
        coverage = sum(n for c, n in counts.items() if c in have) / sum(counts.values())
    else:
        tokens, coverage = build_vocab(train_docs, CFG["vocab_size"], required)
    tok = Tokenizer(tokens)
    if common:
        seen = collections.Counter(c for docs in train_docs.values() for d in docs for c in d)
        common["in_vocab"] = sum(c in set(tokens) for c in common["chars"])
        common["absent_from_text"] = sum(seen[c] == 0 for c in common["chars"])
        train_docs["zh_words"] = zh_common_chars.word_documents(tokens, args.zh_words_docs, TRAIN["seed"])
        print(f"jieba's {args.zh_common} most frequent characters: {common['in_vocab']} in the vocabulary, "
              f"{common['absent_from_text']} absent from the training text")
    T = TRAIN["seq_len"]
    enc = {k: [tok.tokenize(d) for d in v] for k, v in train_docs.items()}
    zh = [(d, e) for k in ("zh_poems", "zh_misc") for d, e in zip(train_docs[k], enc[k])]
    pools = {"en": enc["en"],
             "zh_verse": [e for d, e in zh if lm_data.is_regular_verse(d)],
             "zh_other": [e for d, e in zh if not lm_data.is_regular_verse(d)]}
    for k in ("zh_prose", "zh_words", *TRAIN.get("text_pools", {})):
        if k in enc:
            pools[k] = enc[k]
    for k, v in pools.items():
        print(f"pool {k}: {len(v)} docs, {sum(len(x) - 1 for x in v)} chars")
    held = {k: pack_in_order([tok.tokenize(d) for d in v], T) for k, v in held_docs.items()}
    print(f"blas: {BLAS}")
    for k in src:
        print(f"{k}: {len(train_docs[k])} train docs, {len(held_docs[k])} held-out docs, "
              f"{len(held[k])} held-out sequences")
    print(f"vocab {len(tokens)} covers {coverage:.4f} of training chars")
    return dict(src=src, train_docs=train_docs, held_docs=held_docs, tokens=tokens, coverage=coverage, tok=tok,
                pools=pools, held=held, common=common)


def remap_vocab(tensors, old_tokens, tokens, model):
    """The file's tensors with the vocabulary-sized rows (token embedding, output head) moved to this run's token
    ids; a character the file lacks keeps the fresh model's rows (N(0, 0.02)) with the median of the file's output
    biases (a zero bias would start every new character far likelier than the rare ones the file has learned),
    one it has but this run lacks is dropped. -> (tensors, number of new characters)."""
    old = {t: i for i, t in enumerate(old_tokens)}
    fresh = model.state_dict()
    out = dict(tensors)
    for name in ("tok_emb.weight", "head.weight", "head.bias"):
        if name not in fresh:  # a tied head has no weight of its own
            continue
        rows = fresh[name].clone()
        if name == "head.bias":
            rows[:] = float(np.median(np.asarray(tensors[name])))
        for i, t in enumerate(tokens):
            if t in old:
                rows[i] = torch.as_tensor(np.asarray(tensors[name][old[t]]))
        out[name] = rows.numpy()
    return out, sum(t not in old for t in tokens)


def read_init_from(path, model, tokens, remap=False):
    """--init-from: load the first phase's weights into `model`; its summary for the record."""
    header, tensors = attnscope_model.read_model(path)
    added = 0
    tie_now = TIE_HEAD and not header["config"].get("tie_head", False)
    if tie_now:  # an untied file, a tied run: the token embedding becomes the head's weight, the file's head weight goes
        tensors = {k: v for k, v in tensors.items() if k != "head.weight"}
    if remap and header["vocab"]["tokens"] != tokens:
        tensors, added = remap_vocab(tensors, header["vocab"]["tokens"], tokens, model)
        header["config"]["vocab_size"] = len(tokens)  # the rows now match this run's
    assert header["vocab"]["tokens"] == tokens or added, "--init-from: the vocabulary differs from this run's"
    # Equal shapes do not mean equal models (n_heads splits the same matrices differently): the whole config.
    differs = {k: (header["config"].get(k), v) for k, v in CFG.items() if header["config"].get(k) != v}
    assert not differs, f"--init-from: the file's config differs from this run's (file, run): {differs}"
    attnscope_model.load_state_dict_into(model, tensors)
    first = header["training"]
    print(f"continuing from {path} ({first['train']['steps']} steps)")
    return {"path": os.path.relpath(os.path.abspath(path), ROOT),
            "sha256": hashlib.sha256(open(path, "rb").read()).hexdigest(),
            "steps": first["train"]["steps"], "train_seconds": first["train_seconds"],
            "train": first["train"], "final_train_loss": first["final_train_loss"],
            "heldout": first.get("heldout", {}), "total_seconds": total_seconds(first),
            **({"new_tokens": added} if added else {}), **({"tied_from_untied": True} if tie_now else {})}


def total_seconds(training):
    """The training seconds of a file and of every phase it continued (a file of an earlier run may lack the sum)."""
    f = training.get("init_from")
    return training["train_seconds"] + (f.get("total_seconds", f["train_seconds"]) if f else 0)


def optimizer(model):
    # The attention input projections (q, k and v: one in_proj_weight) may get their own weight decay: decay
    # caps how large q·k can grow, hence how sharply a head can pick one position (a previous-token head needs a
    # gap of several nats to i-2).
    def group(n, p):
        if not (p.dim() >= 2 and "emb" not in n):
            return "none"
        return "qk" if n.endswith("attn.in_proj_weight") else "decay"
    params = {"decay": [], "qk": [], "none": []}
    for n, p in model.named_parameters():
        params[group(n, p)].append(p)
    qk_decay = TRAIN.get("qk_weight_decay", TRAIN["weight_decay"])
    return torch.optim.AdamW([{"params": params["decay"], "weight_decay": TRAIN["weight_decay"]},
                              {"params": params["qk"], "weight_decay": qk_decay},
                              {"params": params["none"], "weight_decay": 0.0}],
                             lr=TRAIN["lr"], betas=TRAIN["betas"])


def train(model, data):
    """The training loop -> (final train loss, progress entries, seconds)."""
    pools, held, tokens, T = data["pools"], data["held"], data["tokens"], TRAIN["seq_len"]
    text_docs = [e for pool in pools.values() for e in pool]
    opt = optimizer(model)
    guide = TRAIN.get("prev_token_guide")
    rng = np.random.RandomState(TRAIN["seed"])
    quick_held = {k: v[:24] for k, v in held.items()}
    smooth = TRAIN.get("smooth_pools", {})
    log_prior = unigram_prior(pools, len(tokens)) if smooth else None
    progress, losses = [], []
    t0 = time.time()
    for step in range(TRAIN["steps"]):
        lr = schedule.set_lr(opt, step, TRAIN)
        seqs, eps = [], []
        names = list(TRAIN["mix"])
        probs = np.array([TRAIN["mix"][k] for k in names])
        for _ in range(TRAIN["batch"]):
            if TRAIN["repeat_frac"] and rng.rand() < TRAIN["repeat_frac"]:
                seqs.append(induction_data.repeated_sequence(rng, T, len(tokens), len(SPECIALS), text_docs, bos=BOS,
                                                             text_share=TRAIN["repeat_text_share"]))
                eps.append(0.0)
                continue
            name = names[rng.choice(len(names), p=probs / probs.sum())]
            seqs.append(pack_random(rng, pools[name], T))
            eps.append(smooth.get(name, 0.0))
        b = torch.tensor(seqs)
        x, y = b[:, :-1], b[:, 1:]
        logits, ws = model(x, need_weights=True) if guide else (model(x), None)
        if smooth:
            loss = prior_smoothing_loss(logits, y, log_prior, torch.tensor(eps))
        else:
            loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
        if guide:
            loss = loss + guide["weight"] * previous_token_loss(ws[guide["layer"]][:, guide["head"]])
        schedule.optimizer_step(opt, model, loss, TRAIN["grad_clip"])
        losses.append(float(loss))
        if (step + 1) % 50 == 0 or step == 0:
            avg = float(np.mean(losses[-50:]))
            entry = {"step": step + 1, "train_loss": avg, "lr": lr}
            msg = f"step {step + 1:5d}  loss {avg:.4f}  lr {lr:.2e}  {time.time() - t0:6.0f}s"
            if (step + 1) % 250 == 0 or step + 1 == TRAIN["steps"]:
                hl = [eval_loss(model, v)[0] for v in quick_held.values()]
                entry["heldout_loss"] = float(np.mean(hl))
                entry["heldout"] = {k: round(v, 4) for k, v in zip(quick_held, hl)}
                msg += "  held-out(quick) " + " ".join(f"{k}={v:.3f}" for k, v in zip(quick_held, hl))
                entry["everyday"] = eval_everyday(model, data["tok"])
                msg += f"  everyday={entry['everyday']['loss']:.3f} top1={entry['everyday']['top1']:.3f}"
                progress.append(entry)
            print(msg, flush=True)
    train_seconds = time.time() - t0
    return float(np.mean(losses[-50:])), progress, train_seconds


# Where each --text-pool the tools write comes from, for the record.
TEXT_POOL_SOURCES = {
    "zh_everyday": "tools/data/zh_everyday_data.py, packages and licences in tools/records/zh-everyday-data.md",
    "zh_narrative": "tools/data/zh_everyday_data.py, packages and licences in tools/records/zh-everyday-data.md",
    "zh_frames": "tools/data/zh_everyday_frames.py, synthetic sentences from frames written for the project",
    "zh_written": "tools/data/zh_everyday_written.py, everyday sentences written for the project",
    "zh_wordstream": "tools/data/zh_word_stream.py, python3-jieba's dictionary words one after another",
}


def data_record(args, data):
    """The record's "data": the sources, the vocabulary and the training pools."""
    src, held_docs, pools, tokens = data["src"], data["held_docs"], data["pools"], data["tokens"]
    text_pools = {name: f"the <source>.train.txt files of {directory}"
                  + (f" ({TEXT_POOL_SOURCES[name]})" if name in TEXT_POOL_SOURCES else "")
                  for name, directory in TRAIN.get("text_pools", {}).items()}
    return {"sources": dict(lm_data.sources_info(), **({"zh_prose": "Debian manuals in Simplified Chinese, "
                                                        "tools/data/zh_prose_data.py (packages and licences: "
                                                        "tools/records/zh-prose-data.md)"}
                                                       if args.zh_prose else {}), **text_pools),
            "vocab_size": len(tokens),
            "vocab_coverage": round(data["coverage"], 5),
            "pools": {k: {"docs": len(v), "chars": sum(len(x) - 1 for x in v)} for k, v in pools.items()},
            "stats": {k: {"docs": len(src[k]), "chars": sum(len(d) for d in src[k]),
                          "heldout_docs": len(held_docs[k]),
                          "heldout_chars": sum(len(d) for d in held_docs[k])} for k in src}}


def main():
    args = parse_args()
    data = load_data(args)
    tokens, tok, held = data["tokens"], data["tok"], data["held"]
    T = TRAIN["seq_len"]

    torch.manual_seed(TRAIN["seed"])
    model = LanguageModel(len(tokens), CFG["d_model"], CFG["n_heads"], CFG["n_layers"], CFG["d_ff"], CFG["max_len"],
                          pos_init_scale=0.1, tie_head=TIE_HEAD)
    nparams = sum(p.numel() for p in model.parameters())
    print(f"params {nparams} ({4 * nparams / 1e6:.2f} MB)")

    if args.analyse_only:
        record = records.read_trained(MODEL_PATH, model, lambda vocab: vocab["tokens"] == tokens)
    else:
        init_from = read_init_from(args.init_from, model, tokens, args.remap_vocab) if args.init_from else None
        final_loss, progress, train_seconds = train(model, data)
        record = records.run_record("tools/training/train_lm.py", BLAS, nparams, TRAIN, train_seconds, final_loss, progress,
                                    init_from)
        record["data"] = data_record(args, data)
        if data["common"]:
            record["data"]["zh_common"] = data["common"]
    record["heldout"] = lm_scores.heldout_scores(model, held)  # every held-out sequence
    record["everyday"] = dict(eval_everyday(model, tok), sentences=len(zh_everyday_heldout.sentences()),
                              source="tools/data/zh_everyday_heldout.py")
    print(f"held-out everyday sentences: {record['everyday']['loss']:.4f} nats/char, top-1 "
          f"{record['everyday']['top1']:.4f}")

    # head analysis on held-out sequences (all of zh, up to 96 English sequences)
    full = {k: [s for s in v if s[-8:] != [BOS] * 8] for k, v in held.items()}  # no padded tails
    ana = {"zh_poems": full["zh_poems"], "zh_misc": full["zh_misc"], "en": full["en"][:96]}
    if "zh_prose" in full:
        ana["zh_prose"] = full["zh_prose"][:96]
    scores, baselines, counts = lm_heads.analyse_heads(model, ana, tokens)
    lm_heads.add_induction_random(model, scores, baselines, counts, T, len(tokens), TRAIN["seed"])
    named = lm_heads.name_heads(scores, baselines)
    guide = record["train"].get("prev_token_guide")
    for n in named:  # the demo shows these names: a head trained to its pattern says so
        if guide and (n["layer"], n["head"]) == (guide["layer"], guide["head"]):
            n["name"] += lm_heads.GUIDED_SUFFIX
    table = lm_heads.heads_table(scores, baselines, counts, named)
    print(table)
    record["head_analysis"] = {"scores": {g: {m: [[round(x, 4) for x in row] for row in v] for m, v in sg.items()}
                                          for g, sg in scores.items()},
                               "baselines": {g: {m: round(v, 4) for m, v in bg.items()} for g, bg in baselines.items()},
                               "counts": counts,
                               "thresholds": {m: {"score": lm_heads.METRICS[m][1], "lift": lm_heads.METRICS[m][2]} for m in lm_heads.METRICS},
                               "data": "held-out sequences (128 tokens, padded tails dropped): zh_poems, zh_misc (all), en (first 96)"}
    samples = lm_scores.record_samples(model, tok)
    for p, s in samples:
        print(repr(p), "->", repr(s))
    size = write_model(model, tokens, named, record)
    lm_record.write_record(RECORD_PATH, record, CFG, table, samples)
    print(f"wrote {MODEL_PATH} ({size} bytes) and {RECORD_PATH}")
    for n in named:
        print("named head:", json.dumps(n, ensure_ascii=False))


if __name__ == "__main__":
    main()
