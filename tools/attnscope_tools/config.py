"""The model files' `config` keys (tools/MODEL_FORMAT.md), the one Python table of them: the training scripts write
a config with `make`, the NumPy tools (check_model_numpy.py, measure_heads.py, eval_dates.py) read one with `read`.
The C++ core checks the same keys in cpp/src/model_file.cpp.

A key is a size (a positive integer the training run chooses), a fixed choice (what every reader implements: a file
with another value is refused), derived from the sizes, or an option (a boolean whose absence means its default, so
files written before the option existed read unchanged). A config lists its keys in the table's order, which is the
order of the JSON in the file; an option is written only when it differs from its default.
"""

from types import SimpleNamespace

# Fixed choices, the same for both kinds.
LN_EPS = 1e-5          # LayerNorm epsilon
ACTIVATION = "gelu_erf"  # the MLP's GELU is the exact 0.5·x·(1 + erf(x/√2)), not the tanh approximation
NORM = "pre"           # pre-LN residual blocks: x + f(ln(x))
POS_EMB = "learned"    # a learned table of positions, added to the token embeddings

KINDS = {
    # kind: (sizes, then the fixed and derived keys, then the options with their defaults; in file order)
    "decoder_lm": (
        ("vocab_size",   # rows of tok_emb and of the output head
         "d_model",      # width of the residual stream
         "n_heads",      # attention heads per layer (d_model = n_heads · head_dim)
         "n_layers",     # decoder blocks
         "d_ff",         # width of the MLP's hidden layer
         "max_len"),     # longest input = rows of pos_emb
        {"ln_eps": LN_EPS, "activation": ACTIVATION, "norm": NORM, "pos_emb": POS_EMB,
         "causal": True,  # every self-attention is causal
         "head_dim": None},
        {"tie_head": False},  # true: the output head's weight is tok_emb.weight (as GPT-2's lm_head), no head.weight
    ),
    "seq2seq": (
        ("d_model", "n_heads",
         "n_enc_layers",  # encoder blocks (non-causal self-attention)
         "n_dec_layers",  # decoder blocks (causal self-attention, then cross-attention to the encoder's output)
         "d_ff",
         "max_src_len",   # longest source = rows of src_pos_emb
         "max_tgt_len",   # longest decoder input = rows of tgt_pos_emb; greedy decoding stops there
         "src_vocab_size", "tgt_vocab_size"),
        {"ln_eps": LN_EPS, "activation": ACTIVATION, "norm": NORM, "pos_emb": POS_EMB, "head_dim": None,
         "decoding": "greedy"},  # argmax at every step
        {},
    ),
}


def _derived(key, sizes):
    if key == "head_dim":
        return sizes["d_model"] // sizes["n_heads"]
    raise KeyError(key)


def sizes(kind, **values):
    """A training script's sizes (some of the kind's, those it chooses before it knows its data), checked against
    the table: a misspelt key fails here, not in a reader of the file."""
    unknown = set(values) - set(KINDS[kind][0]) - set(KINDS[kind][2])
    if unknown:
        raise TypeError(f"{kind} config: no size {sorted(unknown)}")
    return dict(values)


def make(kind, **sizes):
    """The config of a new model file: the sizes (exactly the kind's), then the fixed and derived keys, then the
    options given that differ from their defaults."""
    names, rest, options = KINDS[kind]
    chosen = {k: sizes.pop(k) for k in options if k in sizes}
    if set(sizes) != set(names):
        raise TypeError(f"{kind} config: sizes {sorted(sizes)} are not {sorted(names)}")
    for k, v in chosen.items():
        if not isinstance(v, bool):
            raise TypeError(f"{kind} config: {k} must be a boolean, got {v!r}")
    if sizes["d_model"] % sizes["n_heads"]:
        raise ValueError(f"{kind} config: d_model {sizes['d_model']} is not a multiple of n_heads {sizes['n_heads']}")
    config = {k: int(sizes[k]) for k in names}
    config.update({k: _derived(k, sizes) if v is None else v for k, v in rest.items()})
    config.update({k: v for k, v in chosen.items() if v != options[k]})
    return config


def read(kind, config):
    """A model file's config as a namespace (cfg.n_layers, ...), after checking that it has every key of its kind
    and the fixed choices these tools implement; an absent option reads as its default."""
    names, rest, options = KINDS[kind]
    missing = [k for k in (*names, *rest) if k not in config]
    if missing:
        raise ValueError(f"{kind} config: missing {missing}")
    for k, v in rest.items():
        want = _derived(k, config) if v is None else v
        if config[k] != want:
            raise ValueError(f"{kind} config: {k} is {config[k]!r}, these tools implement {want!r}")
    for k in options:
        if k in config and not isinstance(config[k], bool):
            raise ValueError(f"{kind} config: {k} is {config[k]!r}, expected a boolean")
    return SimpleNamespace(**dict(options, **config))
