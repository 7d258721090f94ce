#!/usr/bin/python3
"""Golden cases for the C++ RnnSeq2SeqModel (tests/cpp/rnn_test.cpp, tests/js/rnn-model.test.js), computed by
PyTorch in float64 from float32 weights: two tiny random models (written as model files next to their cases, so the
reader is tested too) and the two trained dates models of models/.

    /usr/bin/python3 tools/references/make_rnn_fixtures.py   ->  tests/fixtures/rnn/*.json (+ tiny-*.safetensors)

Each JSON: {"model": file relative to the repository, "cases": [{"source", "target" (teacher-forced decoder input,
BOS first), "logits" [T,V], "attention" [T,S] or null, "bos", "eos", "tokens", "context" [H],
"decoder_states" [N,H], "translate_attention" [N,S] or null}], "texts": [{"text", "output"}] (trained models)}. Greedy decoding is computed by rnn_nets' own
translate, in float64.
"""

import json
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/ (tools/README.md, "Imports")
import attnscope_tools  # noqa: E402,F401  (first: no __pycache__ in tools/)
from attnscope_tools import runtime  # noqa: E402
from attnscope_tools.paths import ROOT  # noqa: E402

runtime.setup(threads=1)

import torch  # noqa: E402

from attnscope_tools import attnscope_model  # noqa: E402
from training.rnn_nets import RnnSeq2Seq  # noqa: E402

OUT = os.path.join(ROOT, "tests", "fixtures", "rnn")
# Hidden sizes around the SIMD width (4 floats in SIMD128/SSE, 8 in AVX2), so the gate kernel's tail is exercised.
TINY = [("tiny-none", "none", 3, 5), ("tiny-dot", "dot", 4, 9)]


def tiny_vocab(src, tgt):
    return {"src_tokenizer": "words_ascii_lower", "src_tokens": ["<pad>", "<unk>"] + [f"w{i}" for i in range(src - 2)],
            "src_pad_id": 0, "src_unk_id": 1, "tgt_tokenizer": "chars",
            "tgt_tokens": ["<pad>", "<bos>", "<eos>"] + list("abcdefghij")[:tgt - 3],
            "tgt_pad_id": 0, "tgt_bos_id": 1, "tgt_eos_id": 2}


def model_from(header, tensors):
    c = header["config"]
    m = RnnSeq2Seq(c["src_vocab_size"], c["tgt_vocab_size"], c["emb"], c["hidden"], c["attention"], c["max_tgt_len"])
    attnscope_model.load_state_dict_into(m, tensors)
    return m.double().eval()


@torch.no_grad()
def cases(model, header, rng, n, src_len_max):
    v = header["vocab"]
    V, Vs = header["config"]["tgt_vocab_size"], header["config"]["src_vocab_size"]
    bos, eos = v["tgt_bos_id"], v["tgt_eos_id"]
    out = []
    for i in range(n):
        S = 1 + (i * 7) % src_len_max if i else 1
        src = [rng.randrange(1, Vs) for _ in range(S)]
        T = 1 + rng.randrange(header["config"]["max_tgt_len"])
        tgt = [bos] + [rng.randrange(3, V) for _ in range(T - 1)]
        s = torch.tensor([src])
        logits, w = model(s, torch.tensor([tgt]), need_weights=True)
        toks, final, tw = model.translate(s, bos, eos, trace=True)
        # Each step's state: rerun the decoder teacher-forced on BOS + the generated tokens (the same states greedy
        # decoding went through, as the GRU is causal).
        states, fin = model.encode(s, torch.zeros_like(s, dtype=torch.bool))
        dec, _ = model.decoder(model.tgt_emb(torch.tensor([[bos] + toks[0][:-1]])), fin[None].contiguous())
        out.append({"source": src, "target": tgt, "logits": logits[0].tolist(),
                    "attention": None if w is None else w[0].tolist(), "bos": bos, "eos": eos, "tokens": toks[0],
                    "context": final[0].tolist(), "decoder_states": dec[0].tolist(),
                    "translate_attention": None if tw is None else tw[0].tolist()})
    return out


def main():
    only_tiny = "--tiny" in sys.argv  # before the trained models exist
    os.makedirs(OUT, exist_ok=True)
    rng = random.Random(2301)
    for name, attention, emb, hidden in TINY:
        torch.manual_seed(len(name) * 31 + hidden)
        src_v, tgt_v = 11, 8
        m = RnnSeq2Seq(src_v, tgt_v, emb, hidden, attention, 6)
        with torch.no_grad():  # larger than the default init, so the gates leave their linear range
            for p in m.parameters():
                p.mul_(2.5)
        config = {"emb": emb, "hidden": hidden, "max_src_len": 16, "max_tgt_len": 6, "cell": "gru",
                  "attention": attention, "src_vocab_size": src_v, "tgt_vocab_size": tgt_v, "decoding": "greedy"}
        path = os.path.join(OUT, name + ".safetensors")
        attnscope_model.write_model(path, "rnn_seq2seq", config, tiny_vocab(src_v, tgt_v), m.state_dict(),
                                    training={"note": "random weights (tools/references/make_rnn_fixtures.py)"})
        header, tensors = attnscope_model.read_model(path)
        write(name, os.path.relpath(path, ROOT), cases(model_from(header, tensors), header, rng, 6, 16))
    if only_tiny:
        return
    for name in ("dates-gru", "dates-gru-attention"):
        path = os.path.join(ROOT, "models", name + ".safetensors")
        header, tensors = attnscope_model.read_model(path)
        model = model_from(header, tensors)
        write(name, os.path.relpath(path, ROOT), cases(model, header, rng, 4, 40), text_cases(model, header))


# Sentences through the JS tokeniser and decoding: what PyTorch answers, right or wrong (the bottleneck model is
# meant to fail on the long one).
TEXTS = ["the fifth of March 1990", "March 5th", "31 April 1990",
         "On 12 June 2001 the old mill by the river was sold to a family from the city and it was opened again as a"
         " small museum of local history"]


@torch.no_grad()
def text_cases(model, header):
    from attnscope_tools.tokenizers import SourceWordTokenizer
    v = header["vocab"]
    tok = SourceWordTokenizer(v, header["config"]["max_src_len"])
    out = []
    for text in TEXTS:
        (ids,) = model.translate(torch.tensor([tok.ids(text)]), v["tgt_bos_id"], v["tgt_eos_id"])
        out.append({"text": text, "output": "".join(v["tgt_tokens"][i] for i in ids if i > 2)})
    return out


def write(name, model, cs, texts=None):
    with open(os.path.join(OUT, name + ".json"), "w") as f:
        json.dump({"model": model, "generator": "tools/references/make_rnn_fixtures.py", "cases": cs, "texts": texts or []}, f)
        f.write("\n")
    print(f"{name}: {len(cs)} cases")


if __name__ == "__main__":
    main()
