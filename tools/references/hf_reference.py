"""A float64 PyTorch forward pass of Hugging Face's gpt2, bert, llama, mistral, qwen2, qwen3, gemma, gemma2,
gemma3_text, gpt_neox, phi3 and olmo2 models (and the encoder-decoders bart, marian and t5: seq2seq_forward,
translate_greedy), written from HF's published semantics (transformers/src/transformers/models/<family>/modeling_<family>.py and
configuration_<family>.py, modeling_rope_utils.py, masking_utils.py) without the `transformers` package.

Entry points: `forward(config, state_dict, input_ids, ...)` -> {"hidden", "logits" (if the checkpoint has a head),
"attention" [L, H, T, T]}, and `generate_greedy(config, state_dict, prompt, n)`. The state dict holds the tensors
exactly as named in the checkpoint (with or without the `transformer.`/`bert.`/`model.` prefix); every tensor is
widened to float64 here, so F16/BF16 checkpoints run on their widened values.
"""

import torch

from references import hf_base, hf_decoders, hf_seq2seq
# The names callers read from here (the pieces themselves live, and are wrapped, in hf_base).
from references.hf_base import (F64, _layer_norm, _rms_norm, _softmax_attention, _strip, apply_rope, head_dim,  # noqa: F401
                                layer_windows, rope_inv_freq)
from references.hf_decoders import gemma_layer_types, phi3_rope  # noqa: F401
from references.hf_seq2seq import marian_sinusoids, seq2seq_forward, t5_bucket, t5_feed_forward, translate_greedy  # noqa: F401


# ---- dispatch ------------------------------------------------------------------------------------------------------

def forward(config, state_dict, input_ids, attention_mask=None, token_type_ids=None):
    mt = config["model_type"]
    if mt == "gpt2":
        return hf_base.gpt2_forward(config, state_dict, input_ids)
    if mt == "bert":
        return hf_base.bert_forward(config, state_dict, input_ids, attention_mask, token_type_ids)
    if mt in ("llama", "mistral", "qwen2", "qwen3"):
        return hf_base.llama_forward(config, state_dict, input_ids)
    if mt in ("gemma", "gemma2", "gemma3_text"):
        return hf_decoders.gemma_forward(config, state_dict, input_ids)
    if mt == "gpt_neox":
        return hf_decoders.gpt_neox_forward(config, state_dict, input_ids)
    if mt == "phi3":
        return hf_decoders.phi3_forward(config, state_dict, input_ids)
    if mt == "olmo2":
        return hf_decoders.olmo2_forward(config, state_dict, input_ids)
    raise NotImplementedError(f"model_type {mt!r}")


def generate_greedy(config, state_dict, prompt, max_new_tokens):
    """Greedy decoding, the whole sequence recomputed each step; returns the new tokens only."""
    seq = list(prompt)
    for _ in range(max_new_tokens):
        seq.append(int(torch.argmax(forward(config, state_dict, seq)["logits"][-1])))
    return seq[len(prompt):]
