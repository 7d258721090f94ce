#!/usr/bin/python3
"""Two tiny tokenizers in Hugging Face's tokenizer.json format (a byte-level BPE as GPT-2's, a WordPiece as BERT's),
with one sentence each whose ids were worked out by hand from the merges / WordPiece rules written below."""


def byte_symbols():
    """GPT-2's byte -> printable-character table (tokenizers' ByteLevel alphabet) in GPT-2's id order: the
    printable bytes '!'..'~', '¡'..'¬', '®'..'ÿ' stand for themselves and take ids 0..187 in that order; the other
    68 bytes (controls, space, 0x7F-0xA0, 0xAD) take the characters U+0100, U+0101, ... and ids 188..255 in byte
    order, so a space (byte 32) is 'Ġ' (U+0120) with id 188 + 32 = 220."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    rest = [b for b in range(256) if b not in printable]
    return [chr(b) for b in printable] + [chr(0x100 + n) for n in range(len(rest))]


# Ranked merges (rank = position; id = 256 + rank). 'Ġ' is the space byte.
BPE_MERGES = ["Ġ t", "h e", "Ġt he", "a t", "Ġ c", "Ġc at", "Ġ s", "Ġs at", "o n", "Ġ on", "t he"]

# "the cat sat on the mat" by hand: the ByteLevel pre-tokenizer's GPT-2 regex splits it into "the", " cat", " sat",
# " on", " the", " mat" (a space goes with the word after it, as 'Ġ'); BPE then merges the pair of lowest rank
# until none is left:
#   the  : t h e -> (h e, rank 1) t he -> (t he, rank 10) the                   = 256 + 10 = 266
#   Ġcat : Ġ c a t -> (a t, 3) Ġ c at -> (Ġ c, 4) Ġc at -> (Ġc at, 5) Ġcat       = 261
#   Ġsat : Ġ s a t -> (a t, 3) -> (Ġ s, 6) -> (Ġs at, 7) Ġsat                    = 263
#   Ġon  : Ġ o n -> (o n, 8) Ġ on -> (Ġ on, 9) Ġon                                = 265
#   Ġthe : Ġ t h e -> (Ġ t, 0) Ġt h e -> (h e, 1) Ġt he -> (Ġt he, 2) Ġthe       = 258
#   Ġmat : Ġ m a t -> (a t, 3) Ġ m at; no merge has (Ġ m) or (m at)              = 220, 76 ('m' = 109 - 33), 259
BPE_TEXT = "the cat sat on the mat"
BPE_IDS = [266, 261, 263, 265, 258, 220, 76, 259]
BPE_EOS = "<|endoftext|>"


def bpe_vocab():
    vocab = {s: i for i, s in enumerate(byte_symbols())}
    for rank, m in enumerate(BPE_MERGES):
        vocab[m.replace(" ", "")] = 256 + rank
    vocab[BPE_EOS] = len(vocab)
    return vocab


def bpe_files():
    """(tokenizer.json, tokenizer_config.json) of the byte-level BPE, as GPT-2's on the Hub are laid out."""
    vocab = bpe_vocab()
    eos = vocab[BPE_EOS]
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
    tok = {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [{"id": eos, "content": BPE_EOS, "single_word": False, "lstrip": False, "rstrip": False,
                          "normalized": True, "special": True}],
        "normalizer": None, "pre_tokenizer": byte_level, "post_processor": byte_level, "decoder": byte_level,
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": "",
                  "end_of_word_suffix": "", "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                  "vocab": vocab, "merges": BPE_MERGES},
    }
    cfg = {"add_prefix_space": False, "bos_token": BPE_EOS, "eos_token": BPE_EOS, "unk_token": BPE_EOS,
           "model_max_length": 1024, "tokenizer_class": "GPT2Tokenizer", "clean_up_tokenization_spaces": False}
    return tok, cfg


WP_SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
WP_WORDS = ("the a cat dog sat ran on in mat play run jump big small red blue and is was he she it they we "
            "you see saw house tree bird fish").split()
WP_SUFFIXES = ["##s", "##ed", "##ing", "##er", "##ly"]


def wp_vocab():
    letters = [chr(c) for c in range(ord("a"), ord("z") + 1)]
    pieces = WP_SPECIALS + list(".,!?'") + letters + ["##" + c for c in letters] + WP_WORDS + WP_SUFFIXES
    return {p: i for i, p in enumerate(pieces)}


# "The dogs played!" by hand: BertNormalizer lowercases -> "the dogs played!"; BertPreTokenizer splits on spaces
# and punctuation -> the, dogs, played, !; WordPiece takes the longest vocabulary prefix, then "##"-pieces:
#   the -> the; dogs -> dog ##s; played -> play ##ed; ! -> !
# and TemplateProcessing adds [CLS] ... [SEP]. Ids from wp_vocab's order (5 specials, 5 punctuation marks at
# 5..9 with '!' at 7, a..z at 10..35, ##a..##z at 36..61, the words from 62, the suffixes after them).
WP_TEXT = "The dogs played!"


def wp_ids_by_hand():
    v = wp_vocab()
    w = 62  # first word
    the, dog, play = w + WP_WORDS.index("the"), w + WP_WORDS.index("dog"), w + WP_WORDS.index("play")
    s, ed = w + len(WP_WORDS) + 0, w + len(WP_WORDS) + 1
    ids = [2, the, dog, s, play, ed, 7, 3]
    # the arithmetic above is the hand derivation; this only guards against editing the lists without it
    assert ids == [v[t] for t in ["[CLS]", "the", "dog", "##s", "play", "##ed", "!", "[SEP]"]], ids
    return ids


def wp_files():
    """(tokenizer.json, tokenizer_config.json) of the WordPiece tokenizer, laid out as bert-base-uncased's."""
    vocab = wp_vocab()
    added = [{"id": vocab[t], "content": t, "single_word": False, "lstrip": False, "rstrip": False,
              "normalized": False, "special": True} for t in WP_SPECIALS]

    def special(t, type_id):
        return {"SpecialToken": {"id": t, "type_id": type_id}}

    def seq(s, type_id):
        return {"Sequence": {"id": s, "type_id": type_id}}
    tok = {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
        "normalizer": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                       "strip_accents": None, "lowercase": True},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [special("[CLS]", 0), seq("A", 0), special("[SEP]", 0)],
            "pair": [special("[CLS]", 0), seq("A", 0), special("[SEP]", 0), seq("B", 1), special("[SEP]", 1)],
            "special_tokens": {t: {"id": t, "ids": [vocab[t]], "tokens": [t]} for t in ("[CLS]", "[SEP]")},
        },
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
        "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                  "max_input_chars_per_word": 100, "vocab": vocab},
    }
    cfg = {"do_lower_case": True, "unk_token": "[UNK]", "sep_token": "[SEP]", "pad_token": "[PAD]",
           "cls_token": "[CLS]", "mask_token": "[MASK]", "model_max_length": 512, "tokenize_chinese_chars": True,
           "strip_accents": None, "tokenizer_class": "BertTokenizer", "clean_up_tokenization_spaces": True}
    return tok, cfg


# A Unigram tokenizer as T5's tokenizer.json is laid out (SentencePiece converted by transformers' T5Converter:
# Metaspace pre-tokenizer and decoder, </s> appended by TemplateProcessing), with a vocabulary small enough for
# the T5 fixtures (ids below 48).
UNI_SPECIALS = ["<pad>", "</s>", "<unk>"]
UNI_WORDS = ["▁the", "▁cat", "▁sat", "▁on", "▁mat"]


def unigram_pieces():
    """(piece, log-probability) in id order: the specials (0.0), '▁' (-3), the letters (-4), the words (-2)."""
    return ([(p, 0.0) for p in UNI_SPECIALS] + [("▁", -3.0)] + [(chr(c), -4.0) for c in range(ord("a"), ord("z") + 1)]
            + [(w, -2.0) for w in UNI_WORDS])


# "the cat sat on the mat" by hand: Metaspace turns each space into '▁', prepends one and splits before each '▁':
# ▁the ▁cat ▁sat ▁on ▁the ▁mat. Unigram takes the segmentation of highest total log-probability: each word is a
# piece (-2), against -3 - 4 * 3 = -15 for '▁' and its letters. Ids: the words follow 3 specials, '▁' and 26
# letters, so ▁the = 30, ▁cat = 31, ▁sat = 32, ▁on = 33, ▁mat = 34; then </s> = 1.
UNI_TEXT = "the cat sat on the mat"
UNI_IDS = [30, 31, 32, 33, 30, 34, 1]


def unigram_files():
    """(tokenizer.json, tokenizer_config.json) of the Unigram tokenizer, laid out as t5-small's (without its
    Precompiled normalizer, whose charsmap is a binary blob)."""
    pieces = unigram_pieces()
    assert [pieces[i][0] for i in UNI_IDS] == UNI_WORDS[:4] + ["▁the", "▁mat", "</s>"], UNI_IDS
    added = [{"id": i, "content": t, "single_word": False, "lstrip": False, "rstrip": False, "normalized": False,
              "special": True} for i, t in enumerate(UNI_SPECIALS)]
    meta = {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": True}
    tok = {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": added, "normalizer": None,
        "pre_tokenizer": meta,
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [{"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "</s>", "type_id": 0}}],
            "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "</s>", "type_id": 0}},
                     {"Sequence": {"id": "B", "type_id": 0}}, {"SpecialToken": {"id": "</s>", "type_id": 0}}],
            "special_tokens": {"</s>": {"id": "</s>", "ids": [1], "tokens": ["</s>"]}},
        },
        "decoder": meta,
        "model": {"type": "Unigram", "unk_id": 2, "vocab": [[p, s] for p, s in pieces], "byte_fallback": False},
    }
    cfg = {"eos_token": "</s>", "unk_token": "<unk>", "pad_token": "<pad>", "extra_ids": 0, "model_max_length": 512,
           "tokenizer_class": "T5Tokenizer", "clean_up_tokenization_spaces": True}
    return tok, cfg
