"""Everyday Chinese for the character LM (issue #33, item 6): the held-out sentences (tools/data/zh_everyday_heldout.py)
stay out of the training text of tools/data/zh_everyday_data.py, its Qt .qm reader and its filters do what they say, and
tools/measure/eval_everyday.py's NumPy score equals train_lm.py's PyTorch one on the same model (the torch half is skipped
without torch: the CI python suite has none).
Run: /usr/bin/python3 -m unittest discover tests/python"""

import math
import os
import struct
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import attnscope_tools  # noqa: E402,F401  (first: no __pycache__ in tools/)
from data import zh_everyday_data, zh_everyday_dev, zh_everyday_heldout, zh_everyday_written  # noqa: E402

try:
    import torch
except ImportError:
    torch = None


def qm_file(records):
    """A .qm file: 16 bytes of magic, then one messages block (tag 0x69) holding `records` [(tag, payload bytes)];
    tags 1 (end of message) and 2/5 (4-byte values) as the format has them, the others length-prefixed (payload None:
    the length 0xffffffff of a missing translation)."""
    body = b""
    for tag, payload in records:
        if tag == 1:
            body += bytes([1])
        elif tag in (2, 5):
            body += bytes([tag]) + payload
        elif payload is None:  # a message without a translation: its length is 0xffffffff
            body += bytes([tag]) + b"\xff\xff\xff\xff"
        else:
            body += bytes([tag]) + struct.pack(">I", len(payload)) + payload
    return b"\x3c\xb8\x64\x18\xca\xef\x9c\x95\xcd\x21\x1c\xbf\x60\xa1\xbd\xdd" + bytes([0x69]) + struct.pack(">I", len(body)) + body


class HeldOutSentencesTest(unittest.TestCase):
    def test_at_least_sixty_distinct_sentences_over_the_topics(self):
        items = zh_everyday_heldout.sentences()
        self.assertGreaterEqual(len(items), 60)
        self.assertEqual(len({s for _, s in items}), len(items))
        for topic in ("family", "home", "food", "school", "travel"):
            self.assertGreaterEqual(sum(t == topic for t, _ in items), 6, topic)
        for _, s in items:
            self.assertIn(s[-1], "。？！", s)

    def test_a_paragraph_holding_a_heldout_sentence_or_clause_is_dropped(self):
        pieces = zh_everyday_data.heldout_pieces()
        sentence = zh_everyday_heldout.SENTENCES["family"][0]
        clause = next(c for _, s in zh_everyday_heldout.sentences() for c in zh_everyday_data.CLAUSE.split(s)
                      if len(c) >= 8)
        kept, dropped = zh_everyday_data.paragraphs_of(
            ["前面的话。" + sentence, "他说：" + clause + "，然后走了。", "小企鹅刚从船上回到家。"], pieces)
        self.assertEqual((kept, dropped), (["小企鹅刚从船上回到家。"], 2))

    def test_a_paragraph_sharing_only_an_8gram_with_a_heldout_sentence_is_dropped(self):
        pieces = zh_everyday_data.heldout_pieces()
        longest = max((s for _, s in zh_everyday_heldout.sentences()), key=len)
        gram, shorter = longest[1:9], longest[1:8]  # eight characters from inside a sentence, then seven of them
        kept, dropped = zh_everyday_data.paragraphs_of(["从前有个人说" + gram + "就走了。", "从前有个人说" + shorter + "就走了。"],
                                                       pieces)
        self.assertEqual(dropped, 1)
        self.assertEqual(kept, ["从前有个人说" + shorter + "就走了。"])

    @unittest.skipUnless(os.path.isdir(os.path.join(zh_everyday_data.BUILD, "text")),
                         "build/zh/everyday/text absent: run tools/data/zh_everyday_data.py --download")
    def test_no_heldout_8gram_occurs_in_the_made_training_text(self):
        text = ""
        for group in ("everyday", "narrative"):
            text_dir = zh_everyday_data.group_dir(group)
            for name in sorted(os.listdir(text_dir)) if os.path.isdir(text_dir) else []:
                with open(os.path.join(text_dir, name), encoding="utf-8") as f:
                    text += f.read()
        for _, s in zh_everyday_heldout.sentences():
            self.assertNotIn(s.rstrip("。？！"), text)
            for i in range(len(s) - 7):
                self.assertNotIn(s[i:i + 8], text)


class WrittenSentencesTest(unittest.TestCase):
    """The project's own training sentences (zh_written) and development sentences stay apart from the test."""

    def test_the_written_lines_pass_their_check(self):
        docs = zh_everyday_written.documents()
        self.assertGreater(len(docs), 2000)
        zh_everyday_written.check(docs)  # raises SystemExit naming the line otherwise

    def test_the_check_refuses_a_shared_6gram_or_clause_a_demo_sentence_and_a_repeat(self):
        test_sentence = zh_everyday_heldout.SENTENCES["food"][0]
        dev_sentence = zh_everyday_dev.SENTENCES["food"][0]
        # A clause too short for a 6-gram of its own (现在几点了 of 现在几点了？我的手机没电了。).
        short = next(c for _, s in zh_everyday_heldout.sentences() for c in zh_everyday_written.CLAUSE.split(s)
                     if zh_everyday_written.MIN_CLAUSE <= len(c) < zh_everyday_written.GRAM)
        for line in ("前面几个字" + test_sentence[:6] + "。", "他说" + dev_sentence[2:8] + "。", zh_everyday_written.DEMO[0],
                     "老师说" + short + "了。"):
            with self.assertRaises(SystemExit, msg=line) as e:
                zh_everyday_written.check([("t", "今天天气很好。"), ("t", line)])
            self.assertIn(line, str(e.exception))
        with self.assertRaisesRegex(SystemExit, "listed twice"):
            zh_everyday_written.check([("t", "今天天气很好。"), ("t", "今天天气很好。")])
        zh_everyday_written.check([("t", "今天天气很好。"), ("t", "我们明天再来。")])

    def test_the_development_sentences_share_no_8gram_with_the_test(self):
        test_grams = set().union(*(zh_everyday_dev.grams(s) for _, s in zh_everyday_heldout.sentences()))
        for _, s in zh_everyday_dev.sentences():
            self.assertFalse(zh_everyday_dev.grams(s) & test_grams, s)


class EverydayDataTest(unittest.TestCase):
    def test_qm_reader_returns_the_translations_only(self):
        records = [(7, b"ctx"), (6, "Cat".encode("utf-16-be")), (3, "小猫".encode("utf-16-be")), (5, b"\0\0\0\1"),
                   (1, b""), (3, None), (2, b"\0\0\0\2"), (3, "你好！".encode("utf-16-be")), (1, b"")]
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "t.qm")
            with open(path, "wb") as f:
                f.write(qm_file(records))
            self.assertEqual(zh_everyday_data.qm_translations(path), ["小猫", "你好！"])

    def test_filters(self):
        keep = zh_everyday_data.keep
        self.assertTrue(keep("请把水果放在左边。"))
        self.assertFalse(keep("高度：%1"))               # a placeholder
        self.assertFalse(keep("短句。"))                   # under 6 characters
        self.assertFalse(keep("Leonardo da Vinci"))        # not Chinese
        self.assertFalse(keep("请访问 documentationpage 看看"))  # a run of 12+ ASCII letters
        self.assertEqual(zh_everyday_data.clean("<b>KDE</b>  是一个&amp;社群"), "KDE 是一个&社群")
        # Wesnoth's help markup keeps its text, with or without a link target before it.
        self.assertEqual(zh_everyday_data.clean("<bold>text='灵巧'</bold>单位有<ref>dst='abilities' text='能力'</ref>。"),
                         "灵巧单位有能力。")

    def test_name_lists_are_dropped_and_sentences_kept(self):
        names = "巴达西,巴加,巴戈迪西,巴拉戈,巴巴戈,巴特,巴什纳克,比迪西"
        sentence = "巡林者是森林中沉默的守望者，他们喜欢独自在高耸的树木之间穿行。"
        self.assertEqual(zh_everyday_data.no_lists([names, sentence, "苹果、香蕉、橘子、葡萄、西瓜"]), [sentence])


@unittest.skipIf(torch is None, "torch is not installed: the PyTorch half of the everyday score needs it")
class EverydayScoreTest(unittest.TestCase):
    def test_numpy_score_equals_train_lms_torch_score(self):
        os.environ["ATTNSCOPE_NO_OPENBLAS"] = "1"  # importing train_lm must not re-execute the test process
        from attnscope_tools import attnscope_model, config
        from data.lm_data import SPECIALS, Tokenizer
        from measure import eval_everyday
        from training import train_lm
        from training.attnscope_nets import LanguageModel
        items = zh_everyday_heldout.sentences()
        chars = sorted({c for _, s in items for c in s})
        tokens = SPECIALS + chars[: len(chars) - 5]  # five characters left out: <unk> targets are scored too
        torch.manual_seed(5)
        model = LanguageModel(len(tokens), 16, 2, 2, 32, 64, tie_head=True)
        with torch.no_grad():
            for p in model.parameters():
                p.normal_(0.0, 0.2)
        cfg = config.make("decoder_lm", vocab_size=len(tokens), d_model=16, n_heads=2, n_layers=2, d_ff=32, max_len=64,
                          tie_head=True)
        vocab = {"tokenizer": "codepoint", "tokens": tokens, "unk_id": 0, "bos_id": 1, "specials": SPECIALS}
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "m.safetensors")
            attnscope_model.write_model(path, "decoder_lm", cfg, vocab, model.state_dict())
            numpy_score = eval_everyday.score(eval_everyday.Model(path), items)["all"]
        torch_score = train_lm.eval_everyday(model, Tokenizer(tokens))
        self.assertEqual(numpy_score["targets"], torch_score["targets"])
        self.assertGreater(numpy_score["unk_targets"], 0)
        self.assertAlmostEqual(numpy_score["nats_per_char"], torch_score["loss"], places=3)
        self.assertAlmostEqual(numpy_score["top1"], torch_score["top1"], places=3)
        self.assertLess(abs(numpy_score["nats_per_char"] - math.log(len(tokens))), 3)  # a random model: near uniform

    def test_prior_smoothing_loss(self):
        os.environ["ATTNSCOPE_NO_OPENBLAS"] = "1"  # importing train_lm must not re-execute the test process
        import torch.nn.functional as F
        from training import train_lm
        torch.manual_seed(3)
        logits, y = torch.randn(2, 5, 7), torch.randint(0, 7, (2, 5))
        prior = torch.log_softmax(torch.randn(7), -1)
        plain = F.cross_entropy(logits.reshape(-1, 7), y.reshape(-1))
        self.assertAlmostEqual(float(train_lm.prior_smoothing_loss(logits, y, prior, torch.zeros(2))), float(plain), places=5)
        # Sequence 0 all prior, sequence 1 plain: half the mean of each sequence's own term.
        logp = torch.log_softmax(logits, -1)
        towards_prior = -(logp[0] * prior.exp()).sum(-1).mean()
        plain_1 = F.cross_entropy(logits[1], y[1])
        self.assertAlmostEqual(float(train_lm.prior_smoothing_loss(logits, y, prior, torch.tensor([1.0, 0.0]))),
                               float(towards_prior + plain_1) / 2, places=5)
        # The prior: add-one unigram counts of every pool but English and the word lists.
        p = train_lm.unigram_prior({"en": [[2, 2, 2]], "zh_words": [[3]], "zh_prose": [[2, 4, 4]]}, 5).exp()
        self.assertTrue(torch.allclose(p, torch.tensor([1, 1, 2, 1, 3]) / 8.0))


if __name__ == "__main__":
    unittest.main()
