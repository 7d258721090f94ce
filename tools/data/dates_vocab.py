"""The dates model's tokens and batches (tools/training/train_seq2seq.py): its vocabularies, the tensors of a batch, fresh
examples from tools/data/dates_data.py, and the targets of the alignment loss."""

import torch

from data import dates_data as dd
from attnscope_tools.tokenizers import SourceWordTokenizer

SRC_SPECIALS = ["<pad>", "<unk>"]
TGT_SPECIALS = ["<pad>", "<bos>", "<eos>"]
SRC_PAD, SRC_UNK = 0, 1
TGT_PAD, TGT_BOS, TGT_EOS = 0, 1, 2
TGT_CHARS = list("-0123456789") + [dd.INVALID]  # "invalid" is one token: an output class, decided at the first step


class Vocab:
    """The model's two vocabularies and tokenisers; sources are cut to max_src_len words."""

    def __init__(self, max_src_len):
        self.src_tokens = SRC_SPECIALS + dd.source_vocab()
        self.tgt_tokens = TGT_SPECIALS + TGT_CHARS
        self.source = SourceWordTokenizer({"src_tokens": self.src_tokens, "src_pad_id": SRC_PAD, "src_unk_id": SRC_UNK},
                                          max_src_len)
        self.tgt_index = {c: i for i, c in enumerate(self.tgt_tokens) if i >= len(TGT_SPECIALS)}

    def source_word_ids(self, words):
        return self.source.word_ids(words)

    def tokenize_source(self, text):
        return self.source.ids(text)

    def target_ids(self, s):
        return [self.tgt_index[c] for c in dd.target_tokens(s)] + [TGT_EOS]

    def detokenize_target(self, ids):
        return "".join(self.tgt_tokens[i] for i in ids if i >= len(TGT_SPECIALS))

    def to_json(self):
        return {"src_tokenizer": "words_ascii_lower", "src_tokens": self.src_tokens,
                "src_pad_id": SRC_PAD, "src_unk_id": SRC_UNK,
                "tgt_tokenizer": "chars", "tgt_tokens": self.tgt_tokens,
                "tgt_pad_id": TGT_PAD, "tgt_bos_id": TGT_BOS, "tgt_eos_id": TGT_EOS}


def make_batch(vocab, examples):
    """examples: list of (src_ids, tgt_ids_with_eos) -> src [B,S], src_pad [B,S] (True = pad),
    tgt_in [B,T] (BOS + target), tgt_out [B,T] (target + EOS, PAD elsewhere)."""
    S = max(len(s) for s, _ in examples)
    T = max(len(t) for _, t in examples)
    src = torch.full((len(examples), S), SRC_PAD, dtype=torch.long)
    tin = torch.full((len(examples), T), TGT_PAD, dtype=torch.long)
    tout = torch.full((len(examples), T), TGT_PAD, dtype=torch.long)
    for b, (s, t) in enumerate(examples):
        src[b, :len(s)] = torch.tensor(s)
        tin[b, :len(t)] = torch.tensor([TGT_BOS] + t[:-1])
        tout[b, :len(t)] = torch.tensor(t)
    return src, src == SRC_PAD, tin, tout


def sample_examples(rng, vocab, held_out, n):
    """-> n tuples (src ids, target ids + EOS, words, tags, target string), from the training dates or the held-out
    ones (dates_data.is_heldout)."""
    out = []
    for _ in range(n):
        words, tags, target = dd.example(rng, *dd.sample_spec(rng, held_out))
        out.append((vocab.source_word_ids(words), vocab.target_ids(target), words, tags, target))
    return out


FIELDS = ("year", "month", "day")


def alignment_targets(examples, S, T):
    """For the auxiliary alignment loss: field[b, t, s] = 1 where source word s belongs to the date field (year,
    month or day) of target token t; query[b, t] = 1 where target token t is a digit of a field (not '-', 'invalid'
    or <eos>, which no source word spells)."""
    field = torch.zeros(len(examples), T, S)
    query = torch.zeros(len(examples), T)
    for b, e in enumerate(examples):
        tags = [dd.field(t) for t in e[3]]
        for t, f in enumerate(dd.target_fields(e[4])):
            if f in FIELDS and f in tags:
                query[b, t] = 1.0
                field[b, t, :len(tags)] = torch.tensor([float(x == f) for x in tags])
    return field, query
