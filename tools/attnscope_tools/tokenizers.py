"""The tokenisers the model files name (tools/MODEL_FORMAT.md), the one Python copy of each. The JS package
(web/src/models.js) implements the same; tests/fixtures/tokenizer_vectors.json holds the cases both must agree on
(tests/python/test_tokenizers.py, tests/js/tokenizers.test.js).

`vocab` is a model file's "vocab" object.
"""

import re


class CodepointTokenizer:
    """"codepoint": <bos>, then one id per Unicode code point; code points outside the vocabulary (and the specials'
    own spellings) give <unk>."""

    def __init__(self, vocab):
        self.vocab = vocab
        self.index = {t: i for i, t in enumerate(vocab["tokens"]) if i >= len(vocab["specials"])}

    def ids(self, text, bos=True):
        return ([self.vocab["bos_id"]] if bos else []) + [self.index.get(ch, self.vocab["unk_id"]) for ch in text]


def ascii_lower_words(text):
    """The words of "words_ascii_lower": ASCII A-Z lower-cased (nothing else), split at every character outside
    [a-z0-9], empty words dropped."""
    t = re.sub(r"[A-Z]", lambda m: m.group(0).lower(), text)
    return [w for w in re.split(r"[^a-z0-9]+", t) if w]


class SourceWordTokenizer:
    """"words_ascii_lower" source ids: each word's id in vocab.src_tokens (unknown words and the <pad> and <unk>
    spellings → <unk>), the first max_len words. No <bos>/<eos> on the source."""

    def __init__(self, vocab, max_len):
        self.vocab = vocab
        self.max_len = max_len
        specials = (vocab["src_pad_id"], vocab["src_unk_id"])
        self.index = {w: i for i, w in enumerate(vocab["src_tokens"]) if i not in specials}

    def word_ids(self, words):
        return [self.index.get(w, self.vocab["src_unk_id"]) for w in words][: self.max_len]

    def ids(self, text):
        return self.word_ids(ascii_lower_words(text))


def codepoint_ids(vocab, text):
    """One-off CodepointTokenizer(vocab).ids(text)."""
    return CodepointTokenizer(vocab).ids(text)


def source_word_ids(vocab, text, max_len):
    """One-off SourceWordTokenizer(vocab, max_len).ids(text)."""
    return SourceWordTokenizer(vocab, max_len).ids(text)
