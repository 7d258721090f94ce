"""The Markdown record of a character LM run (tools/records/char-lm.md), written by tools/training/train_lm.py."""

import json

from attnscope_tools import records


def write_record(path, record, cfg, table, samples):
    """tools/records/char-lm.md: the record of a run (train_lm.py's `record`, also in the model file), the model's
    sizes `cfg`, the head analysis' tables and the samples ((prompt, text) pairs)."""
    r = record
    lines = [
        "# char-lm training record",
        "",
        records.written_by(r),
        "",
        "## Data",
        "",
    ]
    for k, v in r["data"]["sources"].items():
        s = r["data"]["stats"][k]
        lines.append(f"- **{k}**: {v}. {s['docs']} documents, {s['chars']} characters; held out "
                     f"{s['heldout_docs']} documents ({s['heldout_chars']} chars) by content hash.")
    lines += [
        f"- Mixture per training sequence: {r['train']['mix']}; zh_verse = the regular-verse documents of "
        f"zh_poems + zh_misc (every line, split at ，。？！；：、 and line breaks, has the same length 4-7), "
        f"zh_other = the other Chinese documents. Training pools: "
        + ", ".join(f"{k} {v['docs']} docs / {v['chars']} chars" for k, v in r['data'].get('pools', {}).items())
        + f". A sequence is <bos> doc <bos> doc ... from one pool, documents drawn uniformly, cut to "
        f"{r['train']['seq_len']} + 1 tokens.",
        f"- Vocabulary: {r['data']['vocab_size']} tokens (<unk>, <bos>, then the most frequent code points); "
        f"covers {100 * r['data']['vocab_coverage']:.2f}% of the training characters.",
        "",
        "## Model",
        "",
        f"Decoder-only, pre-LN: d={cfg['d_model']}, heads={cfg['n_heads']}, layers={cfg['n_layers']}, "
        f"dff={cfg['d_ff']}, max_len={cfg['max_len']}, vocab={r['data']['vocab_size']}; "
        f"{r['params']} parameters ({4 * r['params'] / 1e6:.2f} MB float32)"
        f"{'; the output head is tied to the token embedding (config tie_head)' if r['train'].get('tie_head') else ''}.",
        "",
        "## Training",
        "",
        f"Positional table initialised with {r['train'].get('pos_init', 'N(0, 0.02)')} (still learned), other "
        f"embeddings and linear layers N(0, 0.02), attention layers PyTorch's default. "
        f"AdamW (betas {r['train']['betas']}, weight decay {r['train']['weight_decay']} on matrices"
        f"{'' if r['train'].get('qk_weight_decay') is None else ', ' + str(r['train']['qk_weight_decay']) + ' on the attention input projections'}), "
        f"lr {r['train']['lr']} with {r['train']['warmup']} warm-up steps and cosine decay to "
        f"{r['train']['min_lr_frac']}x, grad clip {r['train']['grad_clip']}, batch {r['train']['batch']} x "
        f"{r['train']['seq_len']} tokens, {r['train']['steps']} steps, seed {r['train']['seed']}, repeated spans in "
        f"{r['train'].get('repeat_frac', 0)} of the sequences ({r['train'].get('repeat_text_share', 0.5)} of them "
        f"text); "
        f"{r['train_seconds']:.0f} s of training ({r['train_seconds'] / r['train']['steps']:.2f} s/step on one "
        f"core of a shared 2-core machine).",
        "",
    ]
    g = r["train"].get("prev_token_guide")
    if g:
        lines += [f"**Guided head.** Layer {g['layer']} head {g['head']} was trained towards the previous token: the loss "
                  f"adds {g['weight']} x the mean of -log(its weight on key i-1) over queries i >= 1 "
                  f"(`previous_token_loss`). Every other head formed unguided.", ""]
    sm = r["train"].get("smooth_pools")
    if sm:
        lines += ["**Smoothed pools.** The sequences drawn from " + ", ".join(f"{k} (eps {v})" for k, v in sm.items())
                  + " were trained towards (1 - eps) x their next character + eps x the prior, the "
                  f"{r['train']['smooth_prior']} (`prior_smoothing_loss`); the train loss above and below includes "
                  "that term.", ""]
    if r.get("init_from"):
        f = r["init_from"]
        lines += [
            # The run it started from may itself have continued others (total_seconds): "a run", not "a first phase".
            f"**Continued training.** Started from `{f['path']}` (sha256 {f['sha256'][:12]}…), a run of "
            f"{f['steps']} steps ({f['train_seconds']:.0f} s; lr {f['train']['lr']}, repeated spans "
            f"{f['train'].get('repeat_frac', 0)} of the sequences, {f['train'].get('repeat_text_share', 0.5)} of "
            f"them text; final train loss {f['final_train_loss']:.4f}; held-out "
            + ", ".join(f"{k} {v['loss']:.4f}" for k, v in f["heldout"].items())
            + (f"; with the phases it continued, {f['total_seconds']:.0f} s"
               if f.get("total_seconds", f["train_seconds"]) != f["train_seconds"] else "")
            + (f"; {f['new_tokens']} tokens new to it" if f.get("new_tokens") else "")
            + ("; its output head was untied, this run's is the token embedding" if f.get("tied_from_untied") else "")
            + f"). All phases together: {f.get('total_seconds', f['train_seconds']) + r['train_seconds']:.0f} s.",
            "",
        ]
    lines += [
        f"- Final train loss (mean of the last 50 steps): {r['final_train_loss']:.4f}",
    ]
    for k, v in r["heldout"].items():
        lines.append(f"- Held-out {k}: loss {v['loss']:.4f} nats/char, perplexity {v['ppl']:.2f} "
                     f"({v['targets']} targets, {v['unk_targets']} of them <unk>)")
    if r.get("everyday"):
        e = r["everyday"]
        lines.append(f"- Held-out everyday sentences ({e['source']}, {e['sentences']} sentences written for the purpose, "
                     f"never trained on; each alone after <bos>): loss {e['loss']:.4f} nats/char, top-1 next character "
                     f"{100 * e['top1']:.1f}% ({e['targets']} targets)")
    # Every held-out source that was evaluated during training, in the order first seen (zh_prose only when used).
    sources = list(dict.fromkeys(k for p in r["progress"] for k in p.get("heldout", {})))
    everyday = any("everyday" in p for p in r["progress"])
    lines += ["", "Progress (held-out: the first 24 held-out sequences of each source; all held-out losses "
              "in nats/char):", "",
              "| step | train loss (avg of 50 steps) | " + " | ".join(f"held-out {k}" for k in sources)
              + (" | everyday sentences (top-1)" if everyday else "") + " | lr |",
              "|---|---|" + "---|" * len(sources) + ("---|" if everyday else "") + "---|"]
    for p in r["progress"]:
        hq = p.get("heldout", {})
        e = p.get("everyday")
        lines.append(f"| {p['step']} | {p['train_loss']:.4f} | " + " | ".join(
            f"{hq[k]:.3f}" if k in hq else "" for k in sources)
            + ((f" | {e['loss']:.3f} ({100 * e['top1']:.1f}%)" if e else " | ") if everyday else "") + f" | {p['lr']:.2e} |")
    lines += ["", "## Head analysis (held-out text)", "",
              "Each score is an average attention weight (float64, per head, weights from "
              "`need_weights=True, average_attn_weights=False`). Bold = passes the threshold and the "
              "minimum lift over the score a uniform causal head would get. Named heads are stored in "
              "the model file's `named_heads`.", "", table, "", "## Samples (greedy, then T=0.8)", ""]
    for p, s in samples:
        lines.append(f"- `{json.dumps(p, ensure_ascii=False)}` → `{json.dumps(s, ensure_ascii=False)}`")
    lines.append("")
    records.write_text(path, "\n".join(lines))
