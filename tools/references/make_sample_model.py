#!/usr/bin/python3
"""The demo's sample model: a tiny GPT-2-shaped Hugging Face checkpoint with random weights, served with the page
so "Open a model" has something to open in one click, offline. Writes web/demo/sample/tiny-gpt2/.

    /usr/bin/python3 tools/references/make_sample_model.py

Why random: the sample is there to show every view of an opened checkpoint (maps, steps table, heads off, the
logit lens) on a file of Hugging Face's own layout, at a size the page can carry (F16, about 70 KB); what a trained
model's heads do is the character model's view. The weights follow tools/references/make_hf_checkpoints.py's
scale (matrices N(0, (1.6 / sqrt(fan_in))^2)), so each head's rows put most of their weight on a few keys and the
maps have something to show. The tokenizer is the gpt2-lm fixture's byte-level BPE (tests/fixtures/hf/gpt2-lm,
268 tokens: any text, English or Chinese, tokenizes), with room for 128 positions.
"""

import json
import os
import shutil
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/ (tools/README.md, "Imports")
import attnscope_tools  # noqa: E402,F401  (first: no __pycache__ in tools/)
from attnscope_tools.paths import ROOT  # noqa: E402
from attnscope_tools.safetensors_file import save_file  # noqa: E402

OUT = os.path.join(ROOT, "web", "demo", "sample", "tiny-gpt2")
TOKENIZER = os.path.join(ROOT, "tests", "fixtures", "hf", "gpt2-lm")
GAIN = 1.6
SEED = 33


def main():
    with open(os.path.join(TOKENIZER, "config.json"), encoding="utf-8") as f:
        base = json.load(f)
    config = {**base, "n_embd": 32, "n_head": 4, "n_inner": 64, "n_layer": 2, "n_positions": 128, "n_ctx": 128,
              "activation_function": "gelu_new", "torch_dtype": "float16"}
    rng = np.random.default_rng(SEED)
    d, n_inner, P, V = config["n_embd"], config["n_inner"], config["n_positions"], config["vocab_size"]
    normal = lambda *shape, std=1.0: (rng.standard_normal(shape) * std).astype(np.float32)  # noqa: E731
    conv1d = lambda n_in, n_out: normal(n_in, n_out, std=GAIN / n_in ** 0.5)  # noqa: E731  (GPT-2 stores [in, out])
    sd = {"wte.weight": normal(V, d), "wpe.weight": normal(P, d, std=0.5)}
    for i in range(config["n_layer"]):
        p = f"h.{i}."
        sd[p + "ln_1.weight"], sd[p + "ln_1.bias"] = 1 + normal(d, std=0.2), normal(d, std=0.2)
        sd[p + "attn.c_attn.weight"], sd[p + "attn.c_attn.bias"] = conv1d(d, 3 * d), normal(3 * d, std=0.2)
        sd[p + "attn.c_proj.weight"], sd[p + "attn.c_proj.bias"] = conv1d(d, d), normal(d, std=0.2)
        sd[p + "ln_2.weight"], sd[p + "ln_2.bias"] = 1 + normal(d, std=0.2), normal(d, std=0.2)
        sd[p + "mlp.c_fc.weight"], sd[p + "mlp.c_fc.bias"] = conv1d(d, n_inner), normal(n_inner, std=0.2)
        sd[p + "mlp.c_proj.weight"], sd[p + "mlp.c_proj.bias"] = conv1d(n_inner, d), normal(d, std=0.2)
    sd["ln_f.weight"], sd["ln_f.bias"] = 1 + normal(d, std=0.2), normal(d, std=0.2)
    os.makedirs(OUT, exist_ok=True)
    n = save_file(sd, os.path.join(OUT, "model.safetensors"), metadata={"format": "pt"}, dtypes={k: "F16" for k in sd})
    with open(os.path.join(OUT, "config.json"), "w", encoding="utf-8") as f:
        json.dump(config, f, indent=2)
        f.write("\n")
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copyfile(os.path.join(TOKENIZER, name), os.path.join(OUT, name))
    params = sum(v.size for v in sd.values())
    print(f"wrote {OUT}: {params} parameters, model.safetensors {n} bytes")


if __name__ == "__main__":
    main()
