"""tools/attnscope_tools/config.py against the shipped model files: the table's config is the files' config, key for
key and in order, and a file with another fixed choice or a missing key is refused.
Run: /usr/bin/python3 -m unittest discover tests/python"""

import json
import os
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import attnscope_tools  # noqa: E402,F401  (first: no __pycache__ in tools/)
from attnscope_tools import config, safetensors_file  # noqa: E402

MODELS = {"decoder_lm": "models/char-lm.safetensors", "seq2seq": "models/dates-seq2seq.safetensors"}


def file_config(kind):
    metadata, _ = safetensors_file.load_file(os.path.join(ROOT, MODELS[kind]))
    assert metadata["kind"] == kind
    return json.loads(metadata["config"])


class ConfigTest(unittest.TestCase):
    def test_make_writes_the_files_config(self):
        for kind in MODELS:
            with self.subTest(kind):
                shipped = file_config(kind)
                sizes = {k: shipped[k] for k in config.KINDS[kind][0]}
                sizes.update({k: shipped[k] for k in config.KINDS[kind][2] if k in shipped})  # options it states
                made = config.make(kind, **sizes)
                self.assertEqual(list(made.items()), list(shipped.items()))  # the order is the file's JSON order

    def test_read_checks_keys_and_fixed_choices(self):
        for kind in MODELS:
            with self.subTest(kind):
                shipped = file_config(kind)
                self.assertEqual(config.read(kind, shipped).n_heads, shipped["n_heads"])
                with self.assertRaises(ValueError):
                    config.read(kind, dict(shipped, activation="gelu_tanh"))
                with self.assertRaises(ValueError):
                    config.read(kind, dict(shipped, head_dim=shipped["head_dim"] + 1))
                with self.assertRaises(ValueError):
                    config.read(kind, {k: v for k, v in shipped.items() if k != "d_ff"})

    def test_sizes_refuse_unknown_keys(self):
        with self.assertRaises(TypeError):
            config.sizes("decoder_lm", n_layer=3)
        with self.assertRaises(TypeError):
            config.make("seq2seq", d_model=64)


if __name__ == "__main__":
    unittest.main()
