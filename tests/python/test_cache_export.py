"""exportCache's file read back by the project's own safetensors reader (tools/attnscope_tools/safetensors_file.py):
TransformerLens's hook names and shapes, hook_pattern equal to forward's attention (1e-6) and to the PyTorch
reference's (tools/references/hf_research_reference.py), ln_final.hook_normalized the final LayerNorm of the last
hook_resid_post (computed here from the fixture's weights), and the config in the metadata. Needs the built package
(dist/) and node; skipped without them. Run: /usr/bin/python3 -m unittest tests.python.test_cache_export"""

import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import attnscope_tools  # noqa: E402,F401  (first: no __pycache__ in tools/)
from attnscope_tools import safetensors_file  # noqa: E402

FIXTURE = os.path.join(ROOT, "tests", "fixtures", "hf", "gpt2-lm")
IDS = [266, 261, 263, 265, 258, 220, 76, 259]
EXPORT = """
import { writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { exportCache, init, loadModel } from 'attnscope';
const [fixture, out, ids] = process.argv.slice(1);
await init();
const model = await loadModel(pathToFileURL(fixture + '/'));
const { file } = exportCache(model, JSON.parse(ids));
writeFileSync(out + '/cache.safetensors', file);
writeFileSync(out + '/attention.json', JSON.stringify(Array.from(model.forward(JSON.parse(ids)).attention.data)));
"""


@unittest.skipUnless(os.path.exists(os.path.join(ROOT, "dist", "index.js")) and shutil.which("node"), "needs dist/ and node")
class CacheExport(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp()
        subprocess.run(["node", "--input-type=module", "-e", EXPORT, FIXTURE, cls.dir, json.dumps(IDS)], cwd=ROOT, check=True)
        cls.metadata, cls.tensors = safetensors_file.load_file(os.path.join(cls.dir, "cache.safetensors"))
        with open(os.path.join(cls.dir, "attention.json"), encoding="utf-8") as f:
            cls.attention = json.load(f)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir)

    def test_names_shapes_and_config(self):
        config = json.loads(self.metadata["attnscope"])
        L, H, hd, d, T = config["n_layers"], config["n_heads"], config["d_head"], config["d_model"], len(IDS)
        self.assertEqual((config["model_type"], L, H, d, config["tokens"]), ("gpt2", 2, 2, 16, IDS))
        want = {}
        for l in range(L):
            b = f"blocks.{l}."
            want.update({b + "hook_resid_pre": [1, T, d], b + "attn.hook_q": [1, T, H, hd], b + "attn.hook_k": [1, T, H, hd],
                         b + "attn.hook_v": [1, T, H, hd], b + "attn.hook_pattern": [1, H, T, T], b + "attn.hook_z": [1, T, H, hd],
                         b + "hook_resid_mid": [1, T, d], b + "hook_resid_post": [1, T, d]})
        want["ln_final.hook_normalized"] = [1, T, d]
        self.assertEqual({n: list(t.shape) for n, t in self.tensors.items()}, want)
        self.assertEqual(config["hooks"], list(want))

    def test_pattern_is_forwards_attention_and_pytorchs(self):
        with open(os.path.join(FIXTURE, "research.json"), encoding="utf-8") as f:
            reference = json.load(f)["attention"]
        pattern = [x for l in range(2) for x in self.tensors[f"blocks.{l}.attn.hook_pattern"].values]
        self.assertEqual(len(pattern), len(self.attention))
        self.assertLess(max(abs(a - b) for a, b in zip(pattern, self.attention)), 1e-6)
        self.assertLess(max(abs(a - b) for a, b in zip(pattern, reference)), 1e-5)

    def test_ln_final_is_the_final_layer_norm_of_the_last_resid_post(self):
        weights = safetensors_file.load_file(os.path.join(FIXTURE, "model.safetensors"))[1]
        w, b = weights["transformer.ln_f.weight"].values, weights["transformer.ln_f.bias"].values
        stream = self.tensors["blocks.1.hook_resid_post"].values
        normed = self.tensors["ln_final.hook_normalized"].values
        d = len(w)
        for t in range(len(IDS)):
            row = stream[t * d:(t + 1) * d]
            mean = sum(row) / d
            var = sum((x - mean) ** 2 for x in row) / d
            for i in range(d):
                expected = (row[i] - mean) / math.sqrt(var + 1e-5) * w[i] + b[i]
                self.assertAlmostEqual(normed[t * d + i], expected, delta=1e-4 * max(1.0, abs(expected)))
        # resid_post of layer 0 is resid_pre of layer 1: one stream.
        self.assertEqual(list(self.tensors["blocks.0.hook_resid_post"].values), list(self.tensors["blocks.1.hook_resid_pre"].values))


if __name__ == "__main__":
    unittest.main()
