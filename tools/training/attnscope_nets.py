#!/usr/bin/python3
"""The two attnscope demo models, written exactly to the architecture contract.

* Every attention layer is nn.MultiheadAttention(d, heads, dropout=0.0, bias=True,
  batch_first=True). The modules are never switched to eval() (torch 1.13's eval fast path
  is avoided); there is no dropout anywhere, so train mode computes the same maths.
* LayerNorm eps = 1e-5 with affine weight/bias; GELU = exact erf GELU (nn.GELU()).
* Pre-LN blocks; learned positional embeddings (positions 0..T-1), no sqrt(d) scaling.
* Boolean masks: True = blocked (nn.MultiheadAttention's polarity). The causal mask is
  triu(ones(T, T), diagonal=1).

forward(..., need_weights=True) additionally returns per-head attention weights
[B, H, Tq, Tk] of every attention layer (average_attn_weights=False).
"""

import torch
import torch.nn as nn


def causal_mask(T, device=None):
    """[T, T] bool, True above the diagonal (= key j > query i is blocked)."""
    return torch.triu(torch.ones(T, T, dtype=torch.bool, device=device), diagonal=1)


class MLP(nn.Module):
    def __init__(self, d, dff):
        super().__init__()
        self.fc1 = nn.Linear(d, dff)
        self.act = nn.GELU()  # exact (erf) GELU
        self.fc2 = nn.Linear(dff, d)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


def _mha(d, heads):
    return nn.MultiheadAttention(d, heads, dropout=0.0, bias=True, batch_first=True)


# Block and DecoderBlock share their shape on purpose: each submodule is an attribute named as its state-dict key
# (ln1, attn, self_attn, cross_attn, ...), which the model files and the C++ loader read, so each block spells its own.
class Block(nn.Module):
    """Pre-LN self-attention block: x += attn(ln1 x); x += mlp(ln2 x)."""

    def __init__(self, d, heads, dff):
        super().__init__()
        self.ln1 = nn.LayerNorm(d, eps=1e-5)
        self.attn = _mha(d, heads)
        self.ln2 = nn.LayerNorm(d, eps=1e-5)
        self.mlp = MLP(d, dff)

    def forward(self, x, attn_mask=None, key_padding_mask=None, need_weights=False):
        h = self.ln1(x)
        a, w = self.attn(h, h, h, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                         need_weights=need_weights, average_attn_weights=False)
        x = x + a
        x = x + self.mlp(self.ln2(x))
        return x, w


class DecoderBlock(nn.Module):
    """Pre-LN decoder block: causal self-attn, cross-attn to memory, MLP."""

    def __init__(self, d, heads, dff):
        super().__init__()
        self.ln1 = nn.LayerNorm(d, eps=1e-5)
        self.self_attn = _mha(d, heads)
        self.ln2 = nn.LayerNorm(d, eps=1e-5)
        self.cross_attn = _mha(d, heads)
        self.ln3 = nn.LayerNorm(d, eps=1e-5)
        self.mlp = MLP(d, dff)

    def forward(self, x, mem, self_mask, src_pad=None, need_weights=False):
        h = self.ln1(x)
        a, ws = self.self_attn(h, h, h, attn_mask=self_mask, need_weights=need_weights,
                               average_attn_weights=False)
        x = x + a
        h = self.ln2(x)
        a, wc = self.cross_attn(h, mem, mem, key_padding_mask=src_pad, need_weights=need_weights,
                                average_attn_weights=False)
        x = x + a
        x = x + self.mlp(self.ln3(x))
        return x, ws, wc


def _init(module):
    for m in module.modules():
        if isinstance(m, nn.Embedding):
            nn.init.normal_(m.weight, std=0.02)
        elif isinstance(m, nn.Linear) and not isinstance(m, nn.modules.linear.NonDynamicallyQuantizableLinear):
            nn.init.normal_(m.weight, std=0.02)
            nn.init.zeros_(m.bias)


def sinusoidal_(weight, scale):
    """Initialise a [max_len, d] positional table with scaled sinusoids (the table stays a
    learned nn.Embedding; this only makes relative-offset attention easy to learn early)."""
    n, d = weight.shape
    pos = torch.arange(n, dtype=torch.float64)[:, None]
    i = torch.arange(0, d, 2, dtype=torch.float64)
    ang = pos / torch.pow(10000.0, i / d)
    with torch.no_grad():
        weight[:, 0::2] = (scale * torch.sin(ang)).to(weight.dtype)
        weight[:, 1::2] = (scale * torch.cos(ang[:, : d // 2])).to(weight.dtype)


class TiedHead(nn.Module):
    """The output head of a tied LM: only its bias is its own (state-dict key head.bias); its weight is the token
    embedding's, passed in, as GPT-2's lm_head shares wte."""

    def __init__(self, vocab_size):
        super().__init__()
        self.bias = nn.Parameter(torch.zeros(vocab_size))

    def forward(self, x, weight):
        return x @ weight.T + self.bias


class LanguageModel(nn.Module):
    """Decoder-only LM. logits = head(ln_f(x)); with tie_head, ln_f(x) · tok_emb.weightᵀ + head.bias."""

    def __init__(self, vocab_size, d, heads, layers, dff, max_len, pos_init_scale=0.0, tie_head=False):
        super().__init__()
        self.max_len = max_len
        self.tok_emb = nn.Embedding(vocab_size, d)
        self.pos_emb = nn.Embedding(max_len, d)
        self.blocks = nn.ModuleList([Block(d, heads, dff) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(d, eps=1e-5)
        self.tie_head = tie_head
        self.head = TiedHead(vocab_size) if tie_head else nn.Linear(d, vocab_size)
        _init(self)
        if pos_init_scale:
            sinusoidal_(self.pos_emb.weight, pos_init_scale)

    def forward(self, tokens, need_weights=False):
        B, T = tokens.shape
        assert T <= self.max_len
        pos = torch.arange(T, device=tokens.device)
        x = self.tok_emb(tokens) + self.pos_emb(pos)[None]
        mask = causal_mask(T, tokens.device)
        weights = []
        for blk in self.blocks:
            x, w = blk(x, attn_mask=mask, need_weights=need_weights)
            weights.append(w)
        h = self.ln_f(x)
        logits = self.head(h, self.tok_emb.weight) if self.tie_head else self.head(h)
        return (logits, weights) if need_weights else logits


class Seq2SeqModel(nn.Module):
    """Encoder-decoder. memory = enc_ln_f(encoder(x)); logits = head(dec_ln_f(decoder(y)))."""

    def __init__(self, src_vocab, tgt_vocab, d, heads, enc_layers, dec_layers, dff,
                 max_src_len, max_tgt_len):
        super().__init__()
        self.max_src_len, self.max_tgt_len = max_src_len, max_tgt_len
        self.src_tok_emb = nn.Embedding(src_vocab, d)
        self.src_pos_emb = nn.Embedding(max_src_len, d)
        self.enc_blocks = nn.ModuleList([Block(d, heads, dff) for _ in range(enc_layers)])
        self.enc_ln_f = nn.LayerNorm(d, eps=1e-5)
        self.tgt_tok_emb = nn.Embedding(tgt_vocab, d)
        self.tgt_pos_emb = nn.Embedding(max_tgt_len, d)
        self.dec_blocks = nn.ModuleList([DecoderBlock(d, heads, dff) for _ in range(dec_layers)])
        self.dec_ln_f = nn.LayerNorm(d, eps=1e-5)
        self.head = nn.Linear(d, tgt_vocab)
        _init(self)

    def encode(self, src, src_pad=None, need_weights=False):
        S = src.shape[1]
        assert S <= self.max_src_len
        x = self.src_tok_emb(src) + self.src_pos_emb(torch.arange(S, device=src.device))[None]
        ws = []
        for blk in self.enc_blocks:
            x, w = blk(x, key_padding_mask=src_pad, need_weights=need_weights)
            ws.append(w)
        return self.enc_ln_f(x), ws

    def decode(self, tgt_in, mem, src_pad=None, need_weights=False):
        T = tgt_in.shape[1]
        assert T <= self.max_tgt_len
        y = self.tgt_tok_emb(tgt_in) + self.tgt_pos_emb(torch.arange(T, device=tgt_in.device))[None]
        mask = causal_mask(T, tgt_in.device)
        ws, wc = [], []
        for blk in self.dec_blocks:
            y, a, c = blk(y, mem, mask, src_pad=src_pad, need_weights=need_weights)
            ws.append(a)
            wc.append(c)
        return self.head(self.dec_ln_f(y)), ws, wc

    def forward(self, src, tgt_in, src_pad=None, need_weights=False):
        mem, we = self.encode(src, src_pad, need_weights)
        logits, ws, wc = self.decode(tgt_in, mem, src_pad, need_weights)
        if need_weights:
            return logits, {"enc_self": we, "dec_self": ws, "dec_cross": wc}
        return logits

    @torch.no_grad()
    def translate(self, src, bos, eos, max_len=None, src_pad=None):
        """Greedy decoding for a batch; returns a list of id lists (without BOS, with EOS if
        produced). Stops a row at EOS or after max_len - 1 generated tokens (so that BOS +
        output fits in max_tgt_len positions)."""
        max_len = max_len or self.max_tgt_len
        mem, _ = self.encode(src, src_pad)
        B = src.shape[0]
        ys = torch.full((B, 1), bos, dtype=torch.long, device=src.device)
        done = torch.zeros(B, dtype=torch.bool, device=src.device)
        for _ in range(max_len - 1):
            logits, _, _ = self.decode(ys, mem, src_pad)
            nxt = logits[:, -1].argmax(-1)
            nxt = torch.where(done, torch.full_like(nxt, eos), nxt)
            ys = torch.cat([ys, nxt[:, None]], 1)
            done |= nxt == eos
            if bool(done.all()):
                break
        return cut_at_eos(ys[:, 1:].tolist(), eos)


def cut_at_eos(rows, eos):
    """Greedy decoding's output, one list of ids a row: each row up to and including its first `eos` (all of it if
    none). Rows of a batch run on until every row has ended, so the ids after a row's `eos` are padding."""
    return [row[:row.index(eos) + 1] if eos in row else row for row in rows]
