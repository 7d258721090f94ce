"""The character LM's vocabulary covers everyday Chinese (issue #23, item 5): the 3,500 most frequent characters
of python3-jieba's dictionary are all tokens of models/char-lm.safetensors, family words are no longer <unk>, and
lm_data.build_vocab keeps every required character even when they are the rarest of the training text.
Run: /usr/bin/python3 -m unittest discover tests/python"""

import json
import os
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import attnscope_tools  # noqa: E402,F401  (first: no __pycache__ in tools/)
from attnscope_tools import safetensors_file  # noqa: E402
from attnscope_tools.tokenizers import CodepointTokenizer  # noqa: E402
from data import lm_data, zh_common_chars  # noqa: E402


def shipped():
    metadata, _ = safetensors_file.load_file(os.path.join(ROOT, "models", "char-lm.safetensors"))
    return json.loads(metadata["vocab"]), json.loads(metadata["training"])


class CharLmVocabTest(unittest.TestCase):
    def test_the_recorded_common_characters_are_all_tokens(self):
        vocab, training = shipped()
        common = training["data"]["zh_common"]
        self.assertEqual(common["count"], 3500)
        self.assertEqual(len(common["chars"]), 3500)
        self.assertEqual(len(set(common["chars"])), 3500)
        tokens = set(vocab["tokens"])
        self.assertEqual([c for c in common["chars"] if c not in tokens], [])

    @unittest.skipUnless(os.path.exists(zh_common_chars.DICT), "python3-jieba is not installed")
    def test_the_recorded_characters_are_jiebas_3500_most_frequent(self):
        _, training = shipped()
        chars, mass, _ = zh_common_chars.common_chars(3500)
        self.assertEqual("".join(chars), training["data"]["zh_common"]["chars"])
        self.assertAlmostEqual(mass, training["data"]["zh_common"]["frequency_mass"], places=5)

    def test_family_words_are_not_unk(self):
        vocab, _ = shipped()
        for c in "妈爸猫饿":  # 妈 and 爸 were <unk> in round 2's model (issue #23); 猫 and 饿 in round 1's (issue #14)
            self.assertIn(c, vocab["tokens"])
        tok = CodepointTokenizer(vocab)
        text = "妈妈和爸爸在家，哥哥姐姐去上学了。"
        ids = tok.ids(text, False)
        self.assertEqual(len(ids), len(text))
        self.assertNotIn(vocab["unk_id"], ids)

    def test_build_vocab_keeps_required_characters_that_are_the_rarest(self):
        docs = {"a": ["aaaa bbb cc d", "ab"]}  # counts: a 5, b 4, ' ' 3, c 2, d 1
        tokens, _ = lm_data.build_vocab(docs, len(lm_data.SPECIALS) + 3, required="dxc")
        # 'x' is not in the text and 'c', 'd' are its rarest: all three stay, the rarest others go.
        self.assertEqual(tokens, lm_data.SPECIALS + ["d", "x", "c"])
        tokens, _ = lm_data.build_vocab(docs, len(lm_data.SPECIALS) + 4, required="x")
        self.assertEqual(tokens, lm_data.SPECIALS + ["a", "b", " ", "x"])


if __name__ == "__main__":
    unittest.main()
