"""The decoder LM's tie_head option (tools/MODEL_FORMAT.md): the config table writes it only when true and reads its
absence as false; a tied file has no head.weight and its logits are ln_f(x) · tok_emb.weightᵀ + head.bias, in the
NumPy reference (attnscope_tools/reference.py, float64) as in PyTorch (tools/training/attnscope_nets.py). The torch half is
skipped without torch (the CI python suite has none).
Run: /usr/bin/python3 -m unittest discover tests/python"""

import os
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import attnscope_tools  # noqa: E402,F401  (first: no __pycache__ in tools/)
from attnscope_tools import config  # noqa: E402

try:
    import torch
except ImportError:
    torch = None

SIZES = dict(vocab_size=11, d_model=8, n_heads=2, n_layers=2, d_ff=12, max_len=10)


class TieHeadConfigTest(unittest.TestCase):
    def test_written_only_when_true(self):
        self.assertNotIn("tie_head", config.make("decoder_lm", **SIZES))
        self.assertNotIn("tie_head", config.make("decoder_lm", **SIZES, tie_head=False))
        made = config.make("decoder_lm", **SIZES, tie_head=True)
        self.assertEqual(list(made)[-1], "tie_head")  # options follow the fixed keys
        self.assertIs(made["tie_head"], True)
        with self.assertRaises(TypeError):
            config.make("decoder_lm", **SIZES, tie_head=1)
        with self.assertRaises(TypeError):
            config.make("seq2seq", d_model=8, n_heads=2, n_enc_layers=1, n_dec_layers=1, d_ff=8, max_src_len=4,
                        max_tgt_len=4, src_vocab_size=5, tgt_vocab_size=5, tie_head=True)  # the LM's option only

    def test_read_defaults_to_false_and_checks_the_type(self):
        untied = config.make("decoder_lm", **SIZES)
        self.assertIs(config.read("decoder_lm", untied).tie_head, False)
        self.assertIs(config.read("decoder_lm", dict(untied, tie_head=True)).tie_head, True)
        with self.assertRaises(ValueError):
            config.read("decoder_lm", dict(untied, tie_head="true"))


@unittest.skipIf(torch is None, "torch is not installed: the PyTorch half of the tie_head checks needs it")
class TieHeadModelTest(unittest.TestCase):
    def setUp(self):
        import numpy as np
        from training.attnscope_nets import LanguageModel
        torch.manual_seed(3)
        args = (SIZES["vocab_size"], SIZES["d_model"], SIZES["n_heads"], SIZES["n_layers"], SIZES["d_ff"], SIZES["max_len"])
        self.tied = LanguageModel(*args, tie_head=True)
        with torch.no_grad():  # weights of the size a trained model has, so the logits differ visibly between tokens
            for p in self.tied.parameters():
                p.normal_(0.0, 0.3)
        self.untied = LanguageModel(*args)
        sd = dict(self.tied.state_dict(), **{"head.weight": self.tied.state_dict()["tok_emb.weight"].clone()})
        self.untied.load_state_dict(sd)
        self.ids = torch.tensor([[1, 4, 10, 4, 0, 7]])
        self.np = np

    def test_state_dict_has_no_head_weight(self):
        keys = list(self.tied.state_dict())
        self.assertNotIn("head.weight", keys)
        self.assertEqual(keys[-2:], ["ln_f.bias", "head.bias"])
        self.assertEqual(len(keys) + 1, len(self.untied.state_dict()))

    def test_logits_are_the_embedding_transposed_plus_the_bias(self):
        with torch.no_grad():
            got = self.tied(self.ids)
            h = self.tied.ln_f(self.tied.blocks[1](self.tied.blocks[0](
                self.tied.tok_emb(self.ids) + self.tied.pos_emb(torch.arange(6))[None],
                attn_mask=torch.triu(torch.ones(6, 6, dtype=torch.bool), 1))[0],
                attn_mask=torch.triu(torch.ones(6, 6, dtype=torch.bool), 1))[0])
            by_hand = h @ self.tied.tok_emb.weight.T + self.tied.head.bias
            untied = self.untied(self.ids)
        torch.testing.assert_close(got, by_hand, rtol=0, atol=0)
        torch.testing.assert_close(got, untied, rtol=1e-6, atol=1e-6)
        self.assertGreater(float(got.std()), 0.5)

    def test_numpy_reference_reads_a_tied_file(self):
        from attnscope_tools import attnscope_model, reference
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "tied.safetensors")
            vocab = {"tokenizer": "codepoint", "tokens": ["<unk>", "<bos>"] + list("abcdefghi"), "unk_id": 0,
                     "bos_id": 1, "specials": ["<unk>", "<bos>"]}
            attnscope_model.write_model(path, "decoder_lm", config.make("decoder_lm", **SIZES, tie_head=True), vocab,
                                        self.tied.state_dict())
            header, tensors = attnscope_model.read_model(path)
        self.assertNotIn("head.weight", tensors)
        cfg = config.read("decoder_lm", header["config"])
        self.assertIs(cfg.tie_head, True)
        P = {k: v.astype(self.np.float64) for k, v in tensors.items()}
        logits, _ = reference.lm_forward(P, cfg, self.ids[0].numpy())
        with torch.no_grad():
            want = self.tied(self.ids)[0].double().numpy()
        self.assertLess(float(self.np.abs(logits - want).max()), 1e-5)


if __name__ == "__main__":
    unittest.main()
