"""The Python tokenisers against tests/fixtures/tokenizer_vectors.json: the shared ones (tools/attnscope_tools), also as
check_model_numpy.py uses them. Run: /usr/bin/python3 -m unittest discover tests/python
"""

import json
import os
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import attnscope_tools  # noqa: E402,F401  (first: no __pycache__ in tools/)
from attnscope_tools import tokenizers  # noqa: E402
from attnscope_tools.attnscope_model import read_model  # noqa: E402
from references import check_model_numpy  # noqa: E402

with open(os.path.join(ROOT, "tests", "fixtures", "tokenizer_vectors.json"), encoding="utf-8") as f:
    VECTORS = json.load(f)


def header(model):
    return read_model(os.path.join(ROOT, model))[0]


class CodepointTest(unittest.TestCase):
    def setUp(self):
        self.spec = VECTORS["codepoint"]
        self.vocab = header(self.spec["model"])["vocab"]
        self.assertEqual(self.vocab["tokenizer"], "codepoint")

    def expected_ids(self, tokens):
        special = {"<unk>": self.vocab["unk_id"], "<bos>": self.vocab["bos_id"]}
        n = len(self.vocab["specials"])
        return [special[t] if t in special else self.vocab["tokens"].index(t, n) for t in tokens]

    def test_cases(self):
        self.assertGreater(len(self.spec["cases"]), 0)
        tokenizer = tokenizers.CodepointTokenizer(self.vocab)
        for case in self.spec["cases"]:
            with self.subTest(case["why"]):
                expected = self.expected_ids(case["tokens"])
                self.assertEqual(tokenizer.ids(case["text"]), expected)
                self.assertEqual(tokenizers.codepoint_ids(self.vocab, case["text"]), expected)
                self.assertEqual(tokenizer.ids(case["text"], bos=False), expected[1:])
                self.assertEqual(check_model_numpy.lm_tokenize(self.vocab, case["text"]), expected)


class SourceWordsTest(unittest.TestCase):
    def setUp(self):
        self.spec = VECTORS["words_ascii_lower"]
        h = header(self.spec["model"])
        self.vocab, self.max_len = h["vocab"], h["config"]["max_src_len"]
        self.assertEqual(self.vocab["src_tokenizer"], "words_ascii_lower")

    def expected_ids(self, tokens):
        return [self.vocab["src_unk_id"] if t == "<unk>" else self.vocab["src_tokens"].index(t, 2) for t in tokens]

    def test_cases(self):
        self.assertGreater(len(self.spec["cases"]), 0)
        tokenizer = tokenizers.SourceWordTokenizer(self.vocab, self.max_len)
        for case in self.spec["cases"]:
            with self.subTest(case["why"]):
                expected = self.expected_ids(case["tokens"])
                self.assertEqual(tokenizers.ascii_lower_words(case["text"]), case["words"])
                self.assertEqual(tokenizer.ids(case["text"]), expected)
                self.assertEqual(tokenizers.source_word_ids(self.vocab, case["text"], self.max_len), expected)
                self.assertEqual(check_model_numpy.s2s_tokenize(self.vocab, case["text"], self.max_len), expected)


if __name__ == "__main__":
    unittest.main()
