"""The character LM's scores in PyTorch, during and after its training (tools/training/train_lm.py): the next-character
loss on held-out sequences, the held-out everyday sentences, and the continuations its record shows."""

import math

import torch
import torch.nn.functional as F

from data import zh_everyday_heldout
from data.lm_data import BOS, UNK


@torch.no_grad()
def eval_loss(model, seqs, batch=32):
    """Mean next-char cross-entropy over targets that are not <bos> (document boundaries are
    not predictable). Returns (loss, n_targets, n_unk_targets)."""
    tot, n, nunk = 0.0, 0, 0
    for i in range(0, len(seqs), batch):
        x = torch.tensor([s[:-1] for s in seqs[i:i + batch]])
        y = torch.tensor([s[1:] for s in seqs[i:i + batch]])
        logits = model(x)
        ce = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1), reduction="none")
        m = (y.reshape(-1) != BOS)
        tot += float(ce[m].sum())
        n += int(m.sum())
        nunk += int((y.reshape(-1) == UNK).sum())
    return tot / max(n, 1), n, nunk


@torch.no_grad()
def eval_everyday(model, tok):
    """The held-out everyday sentences (tools/data/zh_everyday_heldout.py, never trained on), each scored alone as
    tools/measure/eval_everyday.py scores them: input <bos> + the sentence, every character a target.
    -> {"loss": nats/char, "top1": share of targets that are the most likely token, "targets"}."""
    nll, right, n = 0.0, 0, 0
    for _, sentence in zh_everyday_heldout.sentences():
        ids = tok.tokenize(sentence)
        logits = model(torch.tensor([ids[:-1]]))[0]
        y = torch.tensor(ids[1:])
        nll += float(F.cross_entropy(logits, y, reduction="sum"))
        right += int((logits.argmax(-1) == y).sum())
        n += len(y)
    return {"loss": round(nll / n, 4), "top1": round(right / n, 4), "targets": n}


def heldout_scores(model, held):
    """The record's "heldout": each pool's loss, perplexity and targets over all its held-out sequences, printed as
    they come, then "all" over every pool."""
    scores = {}
    tot, totn = 0.0, 0
    for k, v in held.items():
        loss, n, nunk = eval_loss(model, v)
        scores[k] = {"loss": round(loss, 4), "ppl": round(math.exp(loss), 3), "targets": n, "unk_targets": nunk}
        tot += loss * n
        totn += n
        print(f"held-out {k}: loss {loss:.4f} ppl {math.exp(loss):.2f} ({n} targets, {nunk} unk)")
    scores["all"] = {"loss": round(tot / totn, 4), "ppl": round(math.exp(tot / totn), 3),
                     "targets": totn, "unk_targets": sum(v["unk_targets"] for v in scores.values())}
    return scores


@torch.no_grad()
def sample(model, tok, prompt, n, temperature=0.0, seed=0):
    g = torch.Generator().manual_seed(seed)
    ids = tok.tokenize(prompt)
    for _ in range(n):
        x = torch.tensor([ids[-model.max_len:]])
        logits = model(x)[0, -1]
        logits[UNK] = -1e9
        if temperature <= 0:
            nxt = int(logits.argmax())
        else:
            p = torch.softmax(logits / temperature, -1)
            nxt = int(torch.multinomial(p, 1, generator=g))
        if nxt == BOS:
            break
        ids.append(nxt)
    return tok.detokenize(ids[1:])


def record_samples(model, tok):
    """The record's [(prompt, continuation)]: greedy ones of poems, English and everyday Chinese (issue #33), and two
    sampled at temperature 0.8."""
    samples = []
    for p in ["床前明月光，", "春眠不觉晓，", "白日依山尽，黄河入海流。\n", "The meaning of life is", "A fool and "]:
        samples.append((p, sample(model, tok, p, 40)))
    for p in ["妈妈说晚饭做好了，", "我们一起去"]:
        samples.append((p, sample(model, tok, p, 30)))
    for p in ["春风", "Love is"]:
        samples.append((p, sample(model, tok, p, 60, temperature=0.8, seed=1)))
    return samples
