"""Checks of tools/references/hf_reference.py (the float64 reference of the Hugging Face fixtures) against torch's own layers and
against properties the HF semantics imply. Needs torch; skipped without it (the CI python suite has none).
Run: /usr/bin/python3 -m unittest tests.python.test_hf_reference"""

import json
import os
import sys
import unittest

try:
    import torch
except ImportError:  # the CI python suite: NumPy only
    torch = None

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools"))
if torch is not None:
    import attnscope_tools  # noqa: E402,F401  (first: no __pycache__ in tools/)
    from references import hf_cases, hf_reference as ref, make_hf_checkpoints as mk  # noqa: E402

F64 = torch.float64 if torch is not None else None


def case(name):
    return next(c for c in hf_cases.CASES if c["case"] == name)


def weights(name, **config_changes):
    c = dict(case(name))
    c["config"] = dict(c["config"], **config_changes)
    return c["config"], mk.weights(c, mk.Init(c["seed"]))


def close(a, b, tol=1e-10):
    return float((a - b).abs().max()) <= tol * max(1.0, float(b.abs().max()))


@unittest.skipIf(torch is None, "torch is not installed: the HF reference checks need it")
class AgainstTorchLayers(unittest.TestCase):
    """GPT-2 and BERT blocks are torch's TransformerEncoderLayer (pre-LN and post-LN) with the weights moved over:
    an implementation the reference shares nothing with."""

    def torch_layer(self, d, heads, ff, eps, act, norm_first, qkv_w, qkv_b, o_w, o_b, n1, n2, f1, f2):
        layer = torch.nn.TransformerEncoderLayer(d, heads, ff, dropout=0.0, activation=act, layer_norm_eps=eps,
                                                 batch_first=True, norm_first=norm_first).to(F64).eval()
        with torch.no_grad():
            layer.self_attn.in_proj_weight.copy_(qkv_w)
            layer.self_attn.in_proj_bias.copy_(qkv_b)
            layer.self_attn.out_proj.weight.copy_(o_w)
            layer.self_attn.out_proj.bias.copy_(o_b)
            layer.norm1.weight.copy_(n1[0]), layer.norm1.bias.copy_(n1[1])
            layer.norm2.weight.copy_(n2[0]), layer.norm2.bias.copy_(n2[1])
            layer.linear1.weight.copy_(f1[0]), layer.linear1.bias.copy_(f1[1])
            layer.linear2.weight.copy_(f2[0]), layer.linear2.bias.copy_(f2[1])
        return layer

    def test_gpt2_is_a_causal_pre_ln_encoder(self):
        c, sd = weights("gpt2-base")
        sd = {k: v.to(F64) for k, v in sd.items()}
        ids = case("gpt2-base")["inputs"][0]["input_ids"]
        T, d, eps = len(ids), c["n_embd"], c["layer_norm_epsilon"]
        x = (sd["wte.weight"][ids] + sd["wpe.weight"][:T]).unsqueeze(0)
        mask = torch.triu(torch.full((T, T), float("-inf"), dtype=F64), 1)
        for i in range(c["n_layer"]):
            p = f"h.{i}."
            g = lambda n: (sd[p + n + ".weight"], sd[p + n + ".bias"])  # noqa: E731
            lin = lambda n: (sd[p + n + ".weight"].T, sd[p + n + ".bias"])  # noqa: E731  Conv1D -> Linear
            layer = self.torch_layer(d, c["n_head"], 4 * d, eps, lambda t: torch.nn.functional.gelu(t, approximate="tanh"),
                                     True, *lin("attn.c_attn"), *lin("attn.c_proj"), g("ln_1"), g("ln_2"),
                                     lin("mlp.c_fc"), lin("mlp.c_proj"))
            x = layer(x, src_mask=mask)
        x = ref._layer_norm(x[0], sd["ln_f.weight"], sd["ln_f.bias"], eps)
        self.assertTrue(close(ref.forward(c, sd, ids)["hidden"], x))

    def test_gpt_neox_sequential_without_rotary_is_a_causal_pre_ln_encoder(self):
        # rotary_pct 0: no feature rotates, so a GPT-NeoX layer with use_parallel_residual false is torch's pre-LN
        # layer once query_key_value's rows [heads, 3, head_size] are regrouped into in_proj's q | k | v.
        c, sd = weights("gpt-neox-parallel", rotary_pct=0.0, use_parallel_residual=False)
        sd = {k.removeprefix("gpt_neox."): v.to(F64) for k, v in sd.items()}
        ids = case("gpt-neox-parallel")["inputs"][0]["input_ids"]
        T, d, H, eps = len(ids), c["hidden_size"], c["num_attention_heads"], c["layer_norm_eps"]
        x = sd["embed_in.weight"][ids].unsqueeze(0)
        mask = torch.triu(torch.full((T, T), float("-inf"), dtype=F64), 1)
        for i in range(c["num_hidden_layers"]):
            p = f"layers.{i}."
            g = lambda n: (sd[p + n + ".weight"], sd[p + n + ".bias"])  # noqa: E731
            w, b = g("attention.query_key_value")
            qkv = (w.reshape(H, 3, d // H, d).transpose(0, 1).reshape(3 * d, d), b.reshape(H, 3, d // H).transpose(0, 1).reshape(3 * d))
            layer = self.torch_layer(d, H, c["intermediate_size"], eps, torch.nn.functional.gelu, True, *qkv,
                                     *g("attention.dense"), g("input_layernorm"), g("post_attention_layernorm"),
                                     g("mlp.dense_h_to_4h"), g("mlp.dense_4h_to_h"))
            x = layer(x, src_mask=mask)
        x = ref._layer_norm(x[0], sd["final_layer_norm.weight"], sd["final_layer_norm.bias"], eps)
        self.assertTrue(close(ref.forward(c, {"gpt_neox." + k: v for k, v in sd.items()}, ids)["hidden"], x))

    def test_bert_is_a_post_ln_encoder_with_key_padding(self):
        c, sd = weights("bert-mlm")
        sd = {k[5:] if k.startswith("bert.") else k: v.to(F64) for k, v in sd.items()}
        inp = case("bert-mlm")["inputs"][1]
        ids, tt, am = inp["input_ids"], inp["token_type_ids"], inp["attention_mask"]
        T, d, eps = len(ids), c["hidden_size"], c["layer_norm_eps"]
        e = "embeddings."
        x = sd[e + "word_embeddings.weight"][ids] + sd[e + "position_embeddings.weight"][:T]
        x = x + sd[e + "token_type_embeddings.weight"][tt]
        x = ref._layer_norm(x, sd[e + "LayerNorm.weight"], sd[e + "LayerNorm.bias"], eps).unsqueeze(0)
        pad = torch.tensor([[m == 0 for m in am]])
        for i in range(c["num_hidden_layers"]):
            p = f"encoder.layer.{i}."
            g = lambda n: (sd[p + n + ".weight"], sd[p + n + ".bias"])  # noqa: E731
            qkv_w = torch.cat([sd[p + f"attention.self.{n}.weight"] for n in ("query", "key", "value")])
            qkv_b = torch.cat([sd[p + f"attention.self.{n}.bias"] for n in ("query", "key", "value")])
            layer = self.torch_layer(d, c["num_attention_heads"], c["intermediate_size"], eps, "gelu", False,
                                     qkv_w, qkv_b, *g("attention.output.dense"), g("attention.output.LayerNorm"),
                                     g("output.LayerNorm"), g("intermediate.dense"), g("output.dense"))
            x = layer(x, src_key_padding_mask=pad)
        self.assertTrue(close(ref.forward(c, weights("bert-mlm")[1], ids, am, tt)["hidden"], x[0]))


@unittest.skipIf(torch is None, "torch is not installed: the HF reference checks need it")
class Properties(unittest.TestCase):
    def test_gqa_with_as_many_kv_heads_is_mha_and_kv_heads_are_shared(self):
        c, sd = weights("llama-gqa")
        ids = case("llama-gqa")["inputs"][0]["input_ids"]
        hd, H = ref.head_dim(c), c["num_attention_heads"]
        # Spell out the GQA weights as MHA: query head h reads KV head h // (H / KV), so repeat each KV head's rows
        mha = dict(sd)
        for i in range(c["num_hidden_layers"]):
            for n in ("k_proj", "v_proj"):
                w = sd[f"model.layers.{i}.self_attn.{n}.weight"].reshape(c["num_key_value_heads"], hd, -1)
                mha[f"model.layers.{i}.self_attn.{n}.weight"] = w.repeat_interleave(H // c["num_key_value_heads"], 0).reshape(H * hd, -1)
        a = ref.forward(c, sd, ids)
        b = ref.forward(dict(c, num_key_value_heads=H), mha, ids)
        self.assertTrue(close(a["logits"], b["logits"]))
        # ... and a different grouping (head h reads KV head h % KV) gives another function: the test can fail
        alt = dict(sd)
        for i in range(c["num_hidden_layers"]):
            for n in ("k_proj", "v_proj"):
                w = sd[f"model.layers.{i}.self_attn.{n}.weight"].reshape(c["num_key_value_heads"], hd, -1)
                alt[f"model.layers.{i}.self_attn.{n}.weight"] = w.repeat(H // c["num_key_value_heads"], 1, 1).reshape(H * hd, -1)
        self.assertFalse(close(a["logits"], ref.forward(dict(c, num_key_value_heads=H), alt, ids)["logits"], 1e-3))

    def test_rope_is_identity_at_0_and_relative(self):
        c = case("llama-rope-llama3")["config"]
        inv = ref.rope_inv_freq(c)
        g = torch.Generator().manual_seed(1)
        q, k = torch.randn(1, 1, 6, generator=g, dtype=F64), torch.randn(1, 1, 6, generator=g, dtype=F64)
        self.assertTrue(close(ref.apply_rope(q, torch.tensor([0]), inv), q))
        dot = lambda m, n: float((ref.apply_rope(q, torch.tensor([m]), inv) * ref.apply_rope(k, torch.tensor([n]), inv)).sum())  # noqa: E731
        self.assertAlmostEqual(dot(7, 3), dot(4, 0), places=10)
        self.assertNotAlmostEqual(dot(7, 3), dot(3, 0), places=3)

    def test_rope_scalings(self):
        base = ref.rope_inv_freq({"head_dim": 8, "rope_theta": 100.0})
        lin = ref.rope_inv_freq({"head_dim": 8, "rope_theta": 100.0, "rope_scaling": {"type": "linear", "factor": 4.0}})
        self.assertTrue(close(lin, base / 4))
        l3 = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
              "original_max_position_embeddings": 64}
        self.assertTrue(close(ref.rope_inv_freq({"head_dim": 8, "rope_theta": 100.0, "rope_scaling": dict(l3, factor=1.0)}), base))
        got = ref.rope_inv_freq({"head_dim": 8, "rope_theta": 100.0, "rope_scaling": l3})
        wavelen = 2 * torch.pi / base  # 6.3, 20, 63, 200 positions against the bounds 16 and 64
        self.assertEqual(got[0], base[0])  # short wavelength: kept
        self.assertTrue(close(got[3], base[3] / 8))  # long: divided by the factor
        s = (64 / wavelen[1] - 1) / 3  # in between: interpolated
        self.assertTrue(close(got[1], (1 - s) * base[1] / 8 + s * base[1]))
        self.assertTrue(base[1] / 8 < got[1] < base[1])

    def test_window_at_least_t_is_no_window_and_smaller_is_not(self):
        c, sd = weights("mistral-window")
        ids = case("mistral-window")["inputs"][0]["input_ids"]
        full = ref.forward(dict(c, sliding_window=None), sd, ids)
        self.assertTrue(close(ref.forward(dict(c, sliding_window=len(ids)), sd, ids)["logits"], full["logits"]))
        w3 = ref.forward(c, sd, ids)
        self.assertFalse(close(w3["logits"], full["logits"], 1e-3))
        # a query sees exactly the window: itself and the 2 keys before it
        a = w3["attention"]
        self.assertEqual(float(a[..., 5, :3].abs().max()), 0.0)
        self.assertTrue(bool((a[..., 5, 3:6] > 0).all()))

    def test_qwen2_window_layers(self):
        c = case("qwen2-window-layers")["config"]
        self.assertEqual(ref.layer_windows(c), [None, 3, 3])
        self.assertEqual(ref.layer_windows(case("qwen2-bias-nowindow")["config"]), [None, None])

    def test_bert_padding_leaves_the_real_tokens_alone(self):
        c, sd = weights("bert-mlm")
        inp = case("bert-mlm")["inputs"][1]
        n = sum(inp["attention_mask"])
        padded = ref.forward(c, sd, inp["input_ids"], inp["attention_mask"], inp["token_type_ids"])
        short = ref.forward(c, sd, inp["input_ids"][:n], None, inp["token_type_ids"][:n])
        self.assertTrue(close(padded["logits"][:n], short["logits"]))

    def test_causal_prefix(self):
        for name in ("gpt2-lm", "qwen3-qknorm"):
            c, sd = weights(name)
            ids = case(name)["inputs"][0]["input_ids"]
            self.assertTrue(close(ref.forward(c, sd, ids)["logits"][:5], ref.forward(c, sd, ids[:5])["logits"]))

    def test_fixture_files_match_the_script(self):
        for name in ("llama-gqa", "llama-bf16", "llama-sharded"):
            files, _ = mk.make_case(case(name))
            for fname, blob in files.items():
                with open(os.path.join(mk.OUT, name, fname), "rb") as f:
                    self.assertEqual(f.read(), blob, f"{name}/{fname}: regenerate with tools/references/make_hf_checkpoints.py")
        with open(os.path.join(mk.OUT, "cases.json")) as f:
            cases = json.load(f)
        self.assertEqual([c["case"] for c in cases], [c["case"] for c in hf_cases.CASES])


@unittest.skipIf(torch is None, "torch is not installed: the HF reference checks need it")
class GemmaProperties(unittest.TestCase):
    """Properties of the Gemma references that HF's semantics imply, shared with nothing of ours."""

    def test_causal_prefix_through_windows_and_caps(self):
        for name in ("gemma-mqa", "gemma2-softcap", "gemma3-pattern"):
            c, sd = weights(name)
            ids = case(name)["inputs"][0]["input_ids"]
            self.assertTrue(close(ref.forward(c, sd, ids)["logits"][:5], ref.forward(c, sd, ids[:5])["logits"]), name)

    def test_caps_bound_scores_and_logits(self):
        c, sd = weights("gemma2-softcap")
        out = ref.forward(c, sd, case("gemma2-softcap")["inputs"][0]["input_ids"])
        self.assertLess(float(out["logits"].abs().max()), c["final_logit_softcapping"])
        # A cap far above every score and logit is no cap: the numbers of the case without one.
        loose, _ = weights("gemma2-softcap", attn_logit_softcapping=1e9, final_logit_softcapping=1e9)
        none, _ = weights("gemma2-softcap", attn_logit_softcapping=None, final_logit_softcapping=None)
        ids = case("gemma2-softcap")["inputs"][0]["input_ids"]
        self.assertTrue(close(ref.forward(loose, sd, ids)["logits"], ref.forward(none, sd, ids)["logits"], 1e-8))
        self.assertFalse(close(ref.forward(c, sd, ids)["logits"], ref.forward(none, sd, ids)["logits"], 1e-3))
        self.assertFalse(close(ref.forward(c, sd, ids)["attention"], ref.forward(none, sd, ids)["attention"], 1e-3))

    def test_sliding_rules(self):
        types = ref.gemma_layer_types
        self.assertEqual(types({"model_type": "gemma2", "num_hidden_layers": 4}),
                         ["sliding_attention", "full_attention"] * 2)
        self.assertEqual(types({"model_type": "gemma3_text", "num_hidden_layers": 7}),
                         ["sliding_attention"] * 5 + ["full_attention", "sliding_attention"])
        self.assertEqual(types({"model_type": "gemma3_text", "num_hidden_layers": 4, "sliding_window_pattern": 3}),
                         ["sliding_attention", "sliding_attention", "full_attention", "sliding_attention"])


if __name__ == "__main__":
    unittest.main()
