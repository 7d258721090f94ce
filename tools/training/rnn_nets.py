"""GRU encoder-decoders for the dates task: the fixed-context bottleneck and Luong dot-product attention.

Both networks share every part; they differ only in what the decoder sees of the source:
  attention "none": the decoder's first state is the encoder's final state (the fixed context vector), and that is
                    all it ever sees of the source: out_t = W_o tanh(W_c h_t + b_c) + b_o;
  attention "dot":  at each step the decoder state h_t is the query and the encoder's states h̄_s are the keys and
                    the values (Luong et al. 2015, "global attention, dot score", without input feeding):
                    a_t = softmax_s(h_t · h̄_s), c_t = Σ_s a_ts h̄_s, out_t = W_o tanh(W_c [c_t; h_t] + b_c) + b_o.
The decoder also starts from the encoder's final state in the attention model, so (b) is (a) plus attention.
nn.GRU is PyTorch's: gates r, z, n in that order, n = tanh(W_in x + b_in + r * (W_hn h + b_hn)),
h' = (1 - z) * n + z * h. cpp/src/rnn_seq2seq.cpp implements exactly this.
"""

import torch
import torch.nn as nn

from training.attnscope_nets import cut_at_eos


class RnnSeq2Seq(nn.Module):
    def __init__(self, src_vocab, tgt_vocab, emb, hidden, attention, max_tgt_len):
        super().__init__()
        assert attention in ("none", "dot")
        self.attention, self.hidden, self.max_tgt_len = attention, hidden, max_tgt_len
        self.src_emb = nn.Embedding(src_vocab, emb)
        self.tgt_emb = nn.Embedding(tgt_vocab, emb)
        self.encoder = nn.GRU(emb, hidden, batch_first=True)
        self.decoder = nn.GRU(emb, hidden, batch_first=True)
        self.combine = nn.Linear(hidden * (2 if attention == "dot" else 1), hidden)
        self.out = nn.Linear(hidden, tgt_vocab)

    def encode(self, src, src_pad):
        """-> (states [B,S,H], final [B,H]): the final state is the state after each row's last real word (the
        source is right-padded, so the states before it do not see the padding); zeros for an empty row."""
        states, _ = self.encoder(self.src_emb(src))
        lengths = (~src_pad).sum(1)
        idx = (lengths - 1).clamp_min(0)
        final = states[torch.arange(src.shape[0]), idx] * (lengths > 0)[:, None].to(states.dtype)
        return states, final

    def head(self, dec, states, src_pad):
        """dec [B,T,H] decoder states -> (logits [B,T,V], attention weights [B,T,S] or None)."""
        if self.attention == "none":
            return self.out(torch.tanh(self.combine(dec))), None
        scores = dec @ states.transpose(1, 2)                       # [B,T,S]
        scores = scores.masked_fill(src_pad[:, None, :], float("-inf"))
        w = torch.softmax(scores, -1)
        w = torch.nan_to_num(w, nan=0.0)                           # an empty source: no keys, zero weights
        ctx = w @ states
        return self.out(torch.tanh(self.combine(torch.cat([ctx, dec], -1)))), w

    def forward(self, src, tgt_in, src_pad=None, need_weights=False):
        if src_pad is None:
            src_pad = torch.zeros_like(src, dtype=torch.bool)
        states, final = self.encode(src, src_pad)
        dec, _ = self.decoder(self.tgt_emb(tgt_in), final[None].contiguous())
        logits, w = self.head(dec, states, src_pad)
        return (logits, w) if need_weights else logits

    @torch.no_grad()
    def translate(self, src, bos, eos, max_len=None, src_pad=None, trace=False):
        """Greedy decoding, as Seq2SeqModel.translate: id lists without BOS, with EOS if produced, at most
        max_len - 1 tokens. trace=True also returns (final [B,H], weights per step [B,steps,S] or None)."""
        max_len = max_len or self.max_tgt_len
        if src_pad is None:
            src_pad = torch.zeros_like(src, dtype=torch.bool)
        states, final = self.encode(src, src_pad)
        B = src.shape[0]
        h = final[None].contiguous()
        tok = torch.full((B, 1), bos, dtype=torch.long)
        done = torch.zeros(B, dtype=torch.bool)
        ys, ws = [], []
        for _ in range(max_len - 1):
            dec, h = self.decoder(self.tgt_emb(tok), h)
            logits, w = self.head(dec, states, src_pad)
            nxt = logits[:, -1].argmax(-1)
            nxt = torch.where(done, torch.full_like(nxt, eos), nxt)
            ys.append(nxt)
            if w is not None:
                ws.append(w[:, 0])
            done |= nxt == eos
            tok = nxt[:, None]
            if bool(done.all()):
                break
        out = cut_at_eos(torch.stack(ys, 1).tolist(), eos)
        if trace:
            return out, final, (torch.stack(ws, 1) if ws else None)
        return out
