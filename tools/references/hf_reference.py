#!/usr/bin/python3
"""A float64 PyTorch forward pass of Hugging Face's gpt2, bert, llama, mistral, qwen2, qwen3, gemma, gemma2,
gemma3_text, gpt_neox, phi3 and olmo2 models (and the encoder-decoders bart, marian and t5: seq2seq_forward,
translate_greedy), written from HF's published semantics (transformers/src/transformers/models/<family>/modeling_<family>.py and
configuration_<family>.py, modeling_rope_utils.py, masking_utils.py) without the `transformers` package.

Entry points: `forward(config, state_dict, input_ids, ...)` -> {"hidden", "logits" (if the checkpoint has a head),
"attention" [L, H, T, T]}, and `generate_greedy(config, state_dict, prompt, n)`. The state dict holds the tensors
exactly as named in the checkpoint (with or without the `transformer.`/`bert.`/`model.` prefix); every tensor is
widened to float64 here, so F16/BF16 checkpoints run on their widened values.
"""

import math

import torch

F64 = torch.float64


# ---- shared pieces ---------------------------------------------------------------------------------------------

def _act(name):
    """HF's activations.ACT2FN for the names these families use."""
    if name in ("gelu_new", "gelu_pytorch_tanh", "gelu_fast"):
        # activations.py NewGELUActivation: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) (gelu_fast is the same
        # formula written with 0.7978845608 = sqrt(2/pi))
        return lambda x: 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x.pow(3))))
    if name == "gelu":  # activations.py GELUActivation: nn.functional.gelu, the exact erf form
        return lambda x: 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))
    if name == "relu":
        return torch.relu
    if name in ("silu", "swish"):  # x * sigmoid(x)
        return lambda x: x * torch.sigmoid(x)
    raise NotImplementedError(f"activation {name!r}")


def _layer_norm(x, w, b, eps):
    mu = x.mean(-1, keepdim=True)
    var = ((x - mu) ** 2).mean(-1, keepdim=True)  # biased variance, as torch.nn.LayerNorm
    return (x - mu) / torch.sqrt(var + eps) * w + b


def _rms_norm(x, w, eps):
    # modeling_llama.py LlamaRMSNorm: x * rsqrt(mean(x^2) + eps), then times the weight (no bias, no mean removal).
    # Qwen3RMSNorm, MistralRMSNorm and Qwen2RMSNorm are the same module.
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def _linear(x, sd, name, bias=True):
    """nn.Linear: weight stored [out, in], plus the bias when the config says the layer has one. A file that
    disagrees with its config is an error, not a silent difference."""
    y = x @ sd[name + ".weight"].T
    if bias != ((name + ".bias") in sd):
        raise KeyError(f"{name}.bias {'missing' if bias else 'present'} against the config")
    return y + sd[name + ".bias"] if bias else y


def _softmax_attention(q, k, v, scale, allowed):
    """q [H, T, hd], k/v [H, S, hd], allowed [T, S] bool -> (context [H, T, hd], probs [H, T, S])."""
    scores = (q @ k.transpose(-1, -2)) * scale
    # HF adds torch.finfo(dtype).min where a key is masked (masking_utils.eager_mask /
    # modeling_attn_mask_utils); in float64 its exp is exactly 0, the same as -inf for a row with any key left.
    scores = scores + torch.zeros(allowed.shape, dtype=F64).masked_fill(~allowed, torch.finfo(F64).min)
    probs = torch.softmax(scores, dim=-1)
    return probs @ v, probs


def _strip(state_dict, prefixes):
    """Tensor names without the task model's prefix; the prefix the file used is returned too."""
    sd = {k: v.to(F64) for k, v in state_dict.items()}
    for p in prefixes:
        if any(k.startswith(p) for k in sd):
            return {(k[len(p):] if k.startswith(p) else k): v for k, v in sd.items()}, p
    return sd, ""


def _tied(config, default):
    # tie_word_embeddings: the output embedding is the input embedding matrix, and save_pretrained leaves the head
    # out of the file. The default is the config class's: True in configuration_utils.PretrainedConfig (gpt2,
    # bert), False in LlamaConfig, MistralConfig, Qwen2Config and Qwen3Config.
    return config.get("tie_word_embeddings", default)


# ---- GPT-2 (modeling_gpt2.py, configuration_gpt2.py) --------------------------------------------------------------

def gpt2_forward(config, state_dict, input_ids):
    sd, _ = _strip(state_dict, ("transformer.",))
    # reorder_and_upcast_attn only changes float16 numerics (scores in float32), not the function: nothing in float64
    if config.get("add_cross_attention"):
        raise NotImplementedError("GPT-2 with cross-attention")
    # n_embd: model width; n_head: attention heads; n_layer: blocks h.0 .. h.{n_layer-1}; vocab_size is wte's rows
    d, n_head = config["n_embd"], config["n_head"]
    hd = d // n_head
    eps = config.get("layer_norm_epsilon", 1e-5)  # LayerNorm epsilon of ln_1, ln_2, ln_f
    act = _act(config.get("activation_function", "gelu_new"))  # the MLP's activation (default tanh GELU)
    T = len(input_ids)
    if T > config["n_positions"]:  # n_positions: rows of the learned position table wpe
        raise ValueError("sequence longer than n_positions")
    ids = torch.tensor(input_ids)
    x = sd["wte.weight"][ids] + sd["wpe.weight"][torch.arange(T)]  # learned absolute positions 0..T-1
    causal = torch.tril(torch.ones(T, T, dtype=torch.bool))  # the `attn.bias` buffer's lower triangle
    attn = []
    for i in range(config["n_layer"]):
        p = f"h.{i}."
        h = _layer_norm(x, sd[p + "ln_1.weight"], sd[p + "ln_1.bias"], eps)
        # Conv1D stores its weight [in, out]: y = x @ W + b. c_attn's output is [q | k | v], each n_embd wide.
        qkv = h @ sd[p + "attn.c_attn.weight"] + sd[p + "attn.c_attn.bias"]
        q, k, v = (t.reshape(T, n_head, hd).transpose(0, 1) for t in qkv.split(d, dim=-1))
        scale = 1.0
        if config.get("scale_attn_weights", True):  # divide the scores by sqrt(head_dim)
            scale /= math.sqrt(hd)
        if config.get("scale_attn_by_inverse_layer_idx", False):  # and by (layer index + 1), layers counted from 0
            scale /= float(i + 1)
        ctx, probs = _softmax_attention(q, k, v, scale, causal)
        attn.append(probs)
        ctx = ctx.transpose(0, 1).reshape(T, d)
        x = x + ctx @ sd[p + "attn.c_proj.weight"] + sd[p + "attn.c_proj.bias"]
        h = _layer_norm(x, sd[p + "ln_2.weight"], sd[p + "ln_2.bias"], eps)
        # n_inner (None -> 4 * n_embd) is read from c_fc's shape
        h = act(h @ sd[p + "mlp.c_fc.weight"] + sd[p + "mlp.c_fc.bias"])
        x = x + h @ sd[p + "mlp.c_proj.weight"] + sd[p + "mlp.c_proj.bias"]
    hidden = _layer_norm(x, sd["ln_f.weight"], sd["ln_f.bias"], eps)
    out = {"hidden": hidden, "attention": torch.stack(attn)}
    head = sd.get("lm_head.weight")
    if head is None and _has_lm_head(config, _prefix_of(state_dict, "transformer.")):  # GPT2LMHeadModel, not GPT2Model
        if not _tied(config, True):
            raise KeyError("lm_head.weight (tie_word_embeddings is false)")
        head = sd["wte.weight"]
    if head is not None:
        out["logits"] = hidden @ head.T  # GPT2LMHeadModel.lm_head has no bias
    return out


def _prefix_of(state_dict, prefix):
    return prefix if any(k.startswith(prefix) for k in state_dict) else ""


def _has_lm_head(config, prefix):
    """Whether the model has an LM head: the class `architectures` names (from_pretrained builds that class whatever
    the file's prefix, so GPT2LMHeadModel over openai-community/gpt2's unprefixed file still ties lm_head to wte);
    without `architectures`, a prefixed file is a task model's."""
    arch = config.get("architectures")
    if arch:
        # GPT2LMHeadModel, *ForCausalLM, *ForMaskedLM have one; the base classes (GPT2Model, LlamaModel, ...) none
        return "LMHead" in arch[0] or "For" in arch[0]
    return bool(prefix)


# ---- BERT (modeling_bert.py, configuration_bert.py) ---------------------------------------------------------------

def bert_forward(config, state_dict, input_ids, attention_mask=None, token_type_ids=None):
    has_prefix = bool(_prefix_of(state_dict, "bert."))
    sd, _ = _strip(state_dict, ("bert.",))
    if config.get("position_embedding_type", "absolute") != "absolute":  # relative_key(_query) not implemented
        raise NotImplementedError("position_embedding_type " + config["position_embedding_type"])
    if config.get("is_decoder"):
        raise NotImplementedError("BERT as a decoder")
    # hidden_size: width; num_attention_heads: heads of width hidden_size / heads; num_hidden_layers: encoder.layer.N;
    # vocab_size, max_position_embeddings and type_vocab_size are the rows of the three embedding tables
    d, n_head = config["hidden_size"], config["num_attention_heads"]
    hd = d // n_head
    eps = config.get("layer_norm_eps", 1e-12)  # every LayerNorm's epsilon (BERT's default is 1e-12)
    act = _act(config.get("hidden_act", "gelu"))  # intermediate and MLM-transform activation; "gelu" is erf GELU
    T = len(input_ids)
    ids = torch.tensor(input_ids)
    tt = torch.tensor(token_type_ids if token_type_ids is not None else [0] * T)  # default: all segment 0
    # BertEmbeddings: word + absolute position (0..T-1) + token type, then LayerNorm (dropout is off at inference)
    x = sd["embeddings.word_embeddings.weight"][ids] + sd["embeddings.position_embeddings.weight"][torch.arange(T)]
    x = x + sd["embeddings.token_type_embeddings.weight"][tt]
    x = _layer_norm(x, sd["embeddings.LayerNorm.weight"], sd["embeddings.LayerNorm.bias"], eps)
    # The padding mask removes keys only: every query row (padded ones too) sees all keys whose mask is 1.
    # get_extended_attention_mask: (1 - mask) * finfo(dtype).min added to the scores.
    keep = torch.tensor(attention_mask if attention_mask is not None else [1] * T, dtype=torch.bool)
    allowed = keep.unsqueeze(0).expand(T, T)
    attn = []
    for i in range(config["num_hidden_layers"]):
        p = f"encoder.layer.{i}."
        q, k, v = (_linear(x, sd, p + "attention.self." + n).reshape(T, n_head, hd).transpose(0, 1)
                   for n in ("query", "key", "value"))
        ctx, probs = _softmax_attention(q, k, v, 1.0 / math.sqrt(hd), allowed)
        attn.append(probs)
        ctx = ctx.transpose(0, 1).reshape(T, d)
        # post-LN: LayerNorm(x + sublayer(x)) after attention and after the MLP
        x = _layer_norm(x + _linear(ctx, sd, p + "attention.output.dense"),
                        sd[p + "attention.output.LayerNorm.weight"], sd[p + "attention.output.LayerNorm.bias"], eps)
        h = act(_linear(x, sd, p + "intermediate.dense"))
        x = _layer_norm(x + _linear(h, sd, p + "output.dense"),
                        sd[p + "output.LayerNorm.weight"], sd[p + "output.LayerNorm.bias"], eps)
    out = {"hidden": x, "attention": torch.stack(attn)}
    if has_prefix and "cls.predictions.transform.dense.weight" in sd:
        # BertLMPredictionHead: dense -> hidden_act -> LayerNorm(layer_norm_eps) -> decoder (tied to the word
        # embeddings, no bias of its own) + cls.predictions.bias
        h = act(_linear(x, sd, "cls.predictions.transform.dense"))
        h = _layer_norm(h, sd["cls.predictions.transform.LayerNorm.weight"],
                        sd["cls.predictions.transform.LayerNorm.bias"], eps)
        dec = sd.get("cls.predictions.decoder.weight")
        if dec is None:
            if not _tied(config, True):
                raise KeyError("cls.predictions.decoder.weight (tie_word_embeddings is false)")
            dec = sd["embeddings.word_embeddings.weight"]
        # decoder.bias is the same Parameter as cls.predictions.bias; save_pretrained keeps one of the two names
        bias = sd["cls.predictions.bias"] if "cls.predictions.bias" in sd else sd["cls.predictions.decoder.bias"]
        out["logits"] = h @ dec.T + bias
    return out


# ---- Llama, Mistral, Qwen2, Qwen3 (modeling_llama.py and the files written from it) -------------------------------

def rope_type(config):
    """rope_scaling's kind: null -> "default"; the key is `rope_type`, or `type` in older configs (configuration_llama
    copies `type` into `rope_type` for backward compatibility)."""
    rs = config.get("rope_scaling")
    if not rs:
        return "default"
    return rs.get("rope_type", rs.get("type", "default"))


def head_dim(config):
    # head_dim: explicit in Llama/Mistral/Qwen3 configs; None or absent means hidden_size // num_attention_heads
    return config.get("head_dim") or config["hidden_size"] // config["num_attention_heads"]


def rope_inv_freq(config):
    """The inverse frequencies of modeling_rope_utils.ROPE_INIT_FUNCTIONS for rope_type default, linear and llama3."""
    dim = head_dim(config)
    if config.get("partial_rotary_factor", 1.0) != 1.0:
        raise NotImplementedError("partial_rotary_factor")
    base = config.get("rope_theta", 10000.0)  # rope_theta: the base of the geometric frequency ladder
    # _compute_default_rope_parameters: theta^(-2j/dim) for j = 0 .. dim/2 - 1
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=F64) / dim))
    kind, rs = rope_type(config), config.get("rope_scaling") or {}
    if kind == "default":
        return inv_freq
    if kind == "linear":
        # _compute_linear_scaling_rope_parameters: every frequency divided by `factor` (positions / factor)
        return inv_freq / rs["factor"]
    if kind == "llama3":
        # _compute_llama3_parameters: wavelengths 2 pi / f shorter than original_max_position_embeddings /
        # high_freq_factor stay; longer than original_max_position_embeddings / low_freq_factor are divided by
        # `factor`; in between, f * ((1 - s) / factor + s) with s = (orig / wavelen - low) / (high - low).
        factor, low, high = rs["factor"], rs["low_freq_factor"], rs["high_freq_factor"]
        orig = rs["original_max_position_embeddings"]
        wavelen = 2 * math.pi / inv_freq
        s = (orig / wavelen - low) / (high - low)
        smooth = (1 - s) * inv_freq / factor + s * inv_freq
        out = torch.where(wavelen > orig / low, inv_freq / factor, inv_freq)
        medium = (wavelen <= orig / low) & (wavelen >= orig / high)
        return torch.where(medium, smooth, out)
    raise NotImplementedError(f"rope_type {kind!r}")  # dynamic, yarn, longrope: not in these fixtures


def _rotate_half(x):
    # modeling_llama.rotate_half: the two halves of head_dim are the pair (x1, x2) -> (-x2, x1); not interleaved
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def apply_rope(x, positions, inv_freq):
    """x [H, T, hd] at integer positions [T]: apply_rotary_pos_emb with cos/sin of cat(freqs, freqs). The
    attention_scaling of LlamaRotaryEmbedding is 1 for default, linear and llama3."""
    freqs = positions.to(F64)[:, None] * inv_freq[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    return x * emb.cos() + _rotate_half(x) * emb.sin()


def layer_windows(config):
    """Per layer: the sliding window W (a query sees the W keys q-W+1 .. q, itself included) or None."""
    mt, L = config["model_type"], config["num_hidden_layers"]
    if mt == "llama":
        return [None] * L
    if mt == "mistral":
        # configuration_mistral: sliding_window (None = full attention) applies to every layer
        return [config.get("sliding_window")] * L
    if mt in ("qwen2", "qwen3"):
        # configuration_qwen2/qwen3: sliding_window is dropped unless use_sliding_window; layer_types, when absent,
        # is "sliding_attention" for layers i >= max_window_layers (the first max_window_layers layers stay full)
        w = config.get("sliding_window") if config.get("use_sliding_window", False) else None
        types = config.get("layer_types") or [
            "sliding_attention" if w is not None and i >= config.get("max_window_layers", 28) else "full_attention"
            for i in range(L)]
        return [w if t == "sliding_attention" else None for t in types]
    raise NotImplementedError(mt)


def _window_mask(T, window):
    # masking_utils: causal_mask_function kv <= q, and sliding_window_overlay kv > q - sliding_window
    q = torch.arange(T)[:, None]
    kv = torch.arange(T)[None, :]
    allowed = kv <= q
    if window is not None:
        allowed &= kv > q - window
    return allowed


def llama_forward(config, state_dict, input_ids):
    sd, _ = _strip(state_dict, ("model.",))
    mt = config["model_type"]
    if config.get("hidden_act", "silu") != "silu":  # hidden_act: the gate's activation in gate * up
        raise NotImplementedError("hidden_act " + config["hidden_act"])
    # hidden_size is read from the embedding's shape; pretraining_tp > 1 only splits the matmuls (same function);
    # max_position_embeddings bounds nothing here (RoPE has no table); attention_dropout is off at inference.
    H = config["num_attention_heads"]
    # num_key_value_heads: K/V heads; query head h reads K/V head h // (H / KV) (repeat_kv); None means H
    KV = config.get("num_key_value_heads") or H
    hd = head_dim(config)
    eps = config.get("rms_norm_eps", 1e-6)  # RMSNorm epsilon of every norm (q_norm/k_norm in qwen3 too)
    inv_freq = rope_inv_freq(config)
    windows = layer_windows(config)
    T = len(input_ids)
    pos = torch.arange(T)
    x = sd["embed_tokens.weight"][torch.tensor(input_ids)]
    # attention_bias (llama, qwen3): biases on q/k/v/o; Qwen2Attention always has q/k/v biases and none on o_proj;
    # mlp_bias (llama): biases on gate/up/down.
    qkv_bias = True if mt == "qwen2" else config.get("attention_bias", False)
    attn = []
    for i in range(config["num_hidden_layers"]):
        p = f"layers.{i}."
        h = _rms_norm(x, sd[p + "input_layernorm.weight"], eps)
        q = _linear(h, sd, p + "self_attn.q_proj", qkv_bias).reshape(T, H, hd).transpose(0, 1)
        k = _linear(h, sd, p + "self_attn.k_proj", qkv_bias).reshape(T, KV, hd).transpose(0, 1)
        v = _linear(h, sd, p + "self_attn.v_proj", qkv_bias).reshape(T, KV, hd).transpose(0, 1)
        if mt == "qwen3":
            # Qwen3Attention: q_norm / k_norm, RMSNorm over head_dim of each head, before RoPE
            q = _rms_norm(q, sd[p + "self_attn.q_norm.weight"], eps)
            k = _rms_norm(k, sd[p + "self_attn.k_norm.weight"], eps)
        q, k = apply_rope(q, pos, inv_freq), apply_rope(k, pos, inv_freq)
        rep = H // KV
        k, v = k.repeat_interleave(rep, dim=0), v.repeat_interleave(rep, dim=0)  # repeat_kv
        # scaling = head_dim ** -0.5 (the explicit head_dim, not hidden / heads)
        ctx, probs = _softmax_attention(q, k, v, hd ** -0.5, _window_mask(T, windows[i]))
        attn.append(probs)
        ctx = ctx.transpose(0, 1).reshape(T, H * hd)
        o_bias = config.get("attention_bias", False) if mt in ("llama", "qwen3") else False
        x = x + _linear(ctx, sd, p + "self_attn.o_proj", o_bias)
        h = _rms_norm(x, sd[p + "post_attention_layernorm.weight"], eps)
        mb = config.get("mlp_bias", False)
        g = _linear(h, sd, p + "mlp.gate_proj", mb)
        h = (g * torch.sigmoid(g)) * _linear(h, sd, p + "mlp.up_proj", mb)  # SwiGLU: silu(gate) * up
        x = x + _linear(h, sd, p + "mlp.down_proj", mb)
    hidden = _rms_norm(x, sd["norm.weight"], eps)
    out = {"hidden": hidden, "attention": torch.stack(attn)}
    head = sd.get("lm_head.weight")
    if head is None and _prefix_of(state_dict, "model."):  # *ForCausalLM; a bare *Model has no head
        if not _tied(config, False):
            raise KeyError("lm_head.weight (tie_word_embeddings is false)")
        head = sd["embed_tokens.weight"]
    if head is not None:
        out["logits"] = hidden @ head.T  # lm_head has no bias
    return out


# ---- Gemma, Gemma 2, Gemma 3's text model (modeling_gemma.py, modeling_gemma2.py, modeling_gemma3.py) ----------

def _gemma_rms_norm(x, w, eps):
    # GemmaRMSNorm (Gemma2RMSNorm, Gemma3RMSNorm): x * rsqrt(mean(x^2) + eps), then times (1 + weight): the stored
    # weight is an offset from 1 (initialised to zeros)
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * (1.0 + w)


def _gemma_activation(config):
    """GemmaMLP's activation. transformers 4.38 to 4.47 (PR 29402): `hidden_activation`, else gelu_pytorch_tanh
    whatever `hidden_act` says (the first configs say "gelu" for a model trained with the tanh GELU); 4.48 and later
    read `hidden_act`, which agrees on every config but those. The fixtures state hidden_activation or leave both
    out. Gemma2MLP and Gemma3MLP read `hidden_activation` (default gelu_pytorch_tanh)."""
    if config["model_type"] == "gemma" and "hidden_activation" not in config:
        if config.get("hidden_act", "gelu_pytorch_tanh") not in ("gelu", "gelu_pytorch_tanh"):
            raise NotImplementedError("hidden_act " + config["hidden_act"] + " without hidden_activation")
        return _act("gelu_pytorch_tanh")
    return _act(config.get("hidden_activation") or "gelu_pytorch_tanh")


def gemma_layer_types(config):
    """Per layer, "sliding_attention" or "full_attention". Gemma: none slides. Gemma 2: `layer_types`, else layer i
    slides when (i + 1) % 2 (Gemma2Config; older versions: Gemma2Attention's `not bool(layer_idx % 2)`, the same
    layers). Gemma 3: `layer_types`, else layer i slides when (i + 1) % sliding_window_pattern (default 6)."""
    mt, L = config["model_type"], config["num_hidden_layers"]
    if mt == "gemma":
        return ["full_attention"] * L
    if config.get("layer_types"):
        return list(config["layer_types"])
    pattern = 2 if mt == "gemma2" else config.get("sliding_window_pattern", 6)
    return ["sliding_attention" if (i + 1) % pattern else "full_attention" for i in range(L)]


def gemma_forward(config, state_dict, input_ids):
    sd, _ = _strip(state_dict, ("model.",))
    mt = config["model_type"]
    gen = {"gemma": 1, "gemma2": 2, "gemma3_text": 3}[mt]
    H = config["num_attention_heads"]
    KV = config["num_key_value_heads"]  # the fixtures state it (the classes' defaults: 16 in Gemma, 4 in 2 and 3)
    hd = config["head_dim"]  # its own, not hidden_size / heads (every config states it; the classes' default is 256)
    d = config["hidden_size"]
    eps = config.get("rms_norm_eps", 1e-6)
    act = _gemma_activation(config)
    # GemmaAttention: head_dim ** -0.5; Gemma2Attention, Gemma3Attention: query_pre_attn_scalar ** -0.5
    scale = hd ** -0.5 if gen == 1 else config.get("query_pre_attn_scalar", 256) ** -0.5
    # attn_logit_softcapping: Gemma2Config's default is 50.0, Gemma3TextConfig's None; a null in the file is None
    cap_default = 50.0 if gen == 2 else None
    attn_cap = config["attn_logit_softcapping"] if "attn_logit_softcapping" in config else cap_default
    final_cap = config["final_logit_softcapping"] if "final_logit_softcapping" in config else (30.0 if gen == 2 else None)
    types = gemma_layer_types(config)
    # Rotary: the global rope_theta with rope_scaling (Gemma 3's default theta is 1e6); Gemma 3's sliding layers use
    # rope_local_base_freq with no scaling (Gemma3TextModel.rotary_emb_local: rope_scaling {"rope_type": "default"})
    theta = config.get("rope_theta", 1e6 if gen == 3 else 10000.0)
    inv_global = rope_inv_freq(dict(config, rope_theta=theta))
    inv_local = rope_inv_freq(dict(config, rope_theta=config.get("rope_local_base_freq", 10000.0), rope_scaling=None))
    T = len(input_ids)
    pos = torch.arange(T)
    # GemmaModel: hidden_states * normalizer, a tensor of hidden_size ** 0.5 in the compute dtype: float32 here
    normalizer = float(torch.tensor(d ** 0.5, dtype=torch.float32))
    x = sd["embed_tokens.weight"][torch.tensor(input_ids)] * normalizer
    bias = config.get("attention_bias", False)
    attn = []
    for i in range(config["num_hidden_layers"]):
        p = f"layers.{i}."
        sliding = types[i] == "sliding_attention"
        h = _gemma_rms_norm(x, sd[p + "input_layernorm.weight"], eps)
        q = _linear(h, sd, p + "self_attn.q_proj", bias).reshape(T, H, hd).transpose(0, 1)
        k = _linear(h, sd, p + "self_attn.k_proj", bias).reshape(T, KV, hd).transpose(0, 1)
        v = _linear(h, sd, p + "self_attn.v_proj", bias).reshape(T, KV, hd).transpose(0, 1)
        if gen == 3:  # Gemma3Attention: q_norm, k_norm (Gemma3RMSNorm over head_dim) before RoPE
            q = _gemma_rms_norm(q, sd[p + "self_attn.q_norm.weight"], eps)
            k = _gemma_rms_norm(k, sd[p + "self_attn.k_norm.weight"], eps)
        inv = inv_local if gen == 3 and sliding else inv_global
        q, k = apply_rope(q, pos, inv), apply_rope(k, pos, inv)
        rep = H // KV
        k, v = k.repeat_interleave(rep, dim=0), v.repeat_interleave(rep, dim=0)
        # eager_attention_forward: scores * scaling, then softcap * tanh(scores / softcap), then the mask
        scores = (q @ k.transpose(-1, -2)) * scale
        if attn_cap is not None:
            scores = torch.tanh(scores / attn_cap) * attn_cap
        allowed = _window_mask(T, config["sliding_window"] if sliding else None)
        scores = scores + torch.zeros(allowed.shape, dtype=F64).masked_fill(~allowed, torch.finfo(F64).min)
        probs = torch.softmax(scores, dim=-1)
        attn.append(probs)
        out = _linear((probs @ v).transpose(0, 1).reshape(T, H * hd), sd, p + "self_attn.o_proj", bias)
        if gen == 1:  # GemmaDecoderLayer: pre-norm, post_attention_layernorm before the MLP
            x = x + out
            h = _gemma_rms_norm(x, sd[p + "post_attention_layernorm.weight"], eps)
        else:  # Gemma2DecoderLayer: the sandwich, a norm on each sublayer's output before the residual sum
            x = x + _gemma_rms_norm(out, sd[p + "post_attention_layernorm.weight"], eps)
            h = _gemma_rms_norm(x, sd[p + "pre_feedforward_layernorm.weight"], eps)
        # GemmaMLP: down(act(gate(x)) * up(x)), no biases
        h = _linear(act(_linear(h, sd, p + "mlp.gate_proj", False)) * _linear(h, sd, p + "mlp.up_proj", False),
                    sd, p + "mlp.down_proj", False)
        x = x + (h if gen == 1 else _gemma_rms_norm(h, sd[p + "post_feedforward_layernorm.weight"], eps))
    hidden = _gemma_rms_norm(x, sd["norm.weight"], eps)
    out = {"hidden": hidden, "attention": torch.stack(attn)}
    head = sd.get("lm_head.weight")
    if head is None and _prefix_of(state_dict, "model."):  # *ForCausalLM; tie_word_embeddings defaults to True
        if not _tied(config, True):
            raise KeyError("lm_head.weight (tie_word_embeddings is false)")
        head = sd["embed_tokens.weight"]
    if head is not None:
        logits = hidden @ head.T
        if final_cap is not None:  # Gemma2ForCausalLM: logits / cap, tanh, * cap
            logits = torch.tanh(logits / final_cap) * final_cap
        out["logits"] = logits
    return out


# ---- GPT-NeoX, Pythia (modeling_gpt_neox.py, configuration_gpt_neox.py) -------------------------------------------

def gpt_neox_forward(config, state_dict, input_ids):
    sd, prefix = _strip(state_dict, ("gpt_neox.",))
    # hidden_size: width; num_attention_heads: heads of head_size = hidden_size / heads (no grouped K/V);
    # intermediate_size is read from dense_h_to_4h's shape; max_position_embeddings bounds nothing (RoPE has no table)
    d, H = config["hidden_size"], config["num_attention_heads"]
    hd = d // H
    eps = config.get("layer_norm_eps", 1e-5)  # input_layernorm, post_attention_layernorm, final_layer_norm
    act = _act(config.get("hidden_act", "gelu"))  # GPTNeoXMLP: dense_h_to_4h -> act -> dense_4h_to_h
    bias = config.get("attention_bias", True)  # query_key_value and dense biases (the MLP always has them)
    # GPTNeoXAttention: rotary_ndims = int(head_size * rotary_pct); GPTNeoXRotaryEmbedding(rotary_ndims,
    # base=rotary_emb_base): inv_freq = 1 / base^(arange(0, dim, 2) / dim) over the rotated features only
    rot = int(hd * config.get("rotary_pct", 0.25))
    if rot % 2:
        raise ValueError("odd rotary_ndims")
    if config.get("rope_scaling"):
        raise NotImplementedError("rope_scaling")  # linear and dynamic exist in HF; not in these fixtures
    base = config.get("rotary_emb_base", 10000)
    inv_freq = 1.0 / (base ** (torch.arange(0, rot, 2, dtype=F64) / rot))
    T = len(input_ids)
    pos = torch.arange(T)
    x = sd["embed_in.weight"][torch.tensor(input_ids)]
    causal = _window_mask(T, None)
    attn = []
    for i in range(config["num_hidden_layers"]):
        p = f"layers.{i}."
        h = _layer_norm(x, sd[p + "input_layernorm.weight"], sd[p + "input_layernorm.bias"], eps)
        # query_key_value's output viewed [T, heads, 3 * head_size]: per head its q, then k, then v
        qkv = _linear(h, sd, p + "attention.query_key_value", bias).reshape(T, H, 3 * hd).transpose(0, 1)
        q, k, v = qkv[..., :hd], qkv[..., hd:2 * hd], qkv[..., 2 * hd:]
        # apply_rotary_pos_emb on q[..., :rotary_ndims] (rotate_half within those), the rest concatenated back
        q = torch.cat((apply_rope(q[..., :rot], pos, inv_freq), q[..., rot:]), dim=-1)
        k = torch.cat((apply_rope(k[..., :rot], pos, inv_freq), k[..., rot:]), dim=-1)
        ctx, probs = _softmax_attention(q, k, v, hd ** -0.5, causal)  # norm_factor = head_size ** -0.5
        attn.append(probs)
        a = _linear(ctx.transpose(0, 1).reshape(T, d), sd, p + "attention.dense", bias)
        ln2 = (sd[p + "post_attention_layernorm.weight"], sd[p + "post_attention_layernorm.bias"], eps)

        def mlp(y):
            return _linear(act(_linear(y, sd, p + "mlp.dense_h_to_4h")), sd, p + "mlp.dense_4h_to_h")
        if config.get("use_parallel_residual", True):
            x = x + a + mlp(_layer_norm(x, *ln2))  # GPTNeoXLayer: x + attn(ln1(x)) + mlp(ln2(x))
        else:
            x = x + a  # x = x + attn(ln1(x)); x = x + mlp(ln2(x))
            x = x + mlp(_layer_norm(x, *ln2))
    hidden = _layer_norm(x, sd["final_layer_norm.weight"], sd["final_layer_norm.bias"], eps)
    out = {"hidden": hidden, "attention": torch.stack(attn)}
    head = sd.get("embed_out.weight")  # GPTNeoXForCausalLM.embed_out: Linear(hidden, vocab, bias=False)
    if head is None and _has_lm_head(config, prefix):
        if not _tied(config, False):  # GPTNeoXConfig: tie_word_embeddings defaults to False
            raise KeyError("embed_out.weight (tie_word_embeddings is false)")
        head = sd["embed_in.weight"]
    if head is not None:
        out["logits"] = hidden @ head.T
    return out


# ---- Phi-3, Phi-4-mini (modeling_phi3.py, configuration_phi3.py, modeling_rope_utils.py) -------------------------

def phi3_rope(config, seq_len):
    """(inv_freq, attention_scaling) of Phi3RotaryEmbedding for an input of seq_len positions: the rotated features
    dim = int(head_dim * partial_rotary_factor); rope_scaling null -> default; "longrope" (Phi3Config renames the
    older "su" and "yarn" to it) -> _compute_longrope_parameters with longrope_frequency_update's choice of factors."""
    hd = head_dim(config)
    dim = int(hd * config.get("partial_rotary_factor", 1.0))
    base = config.get("rope_theta", 10000.0)
    shape = torch.arange(0, dim, 2, dtype=F64) / dim
    rs = config.get("rope_scaling")
    kind = rope_type(config)
    if kind == "default":
        return 1.0 / (base ** shape), 1.0, dim
    if kind not in ("longrope", "su", "yarn"):
        raise NotImplementedError(f"phi3 rope_type {kind!r}")
    orig = config.get("original_max_position_embeddings", 4096)
    # factor = max_position_embeddings / original_max_position_embeddings (Phi3Config always has the latter)
    factor = config["max_position_embeddings"] / orig
    attention_factor = rs.get("attention_factor")
    if attention_factor is None:
        attention_factor = 1.0 if factor <= 1.0 else math.sqrt(1 + math.log(factor) / math.log(orig))
    # longrope_frequency_update: seq_len = max(position_ids) + 1; longer than orig -> long_factor
    ext = torch.tensor(rs["long_factor"] if seq_len > orig else rs["short_factor"], dtype=F64)
    return 1.0 / (ext * base ** shape), attention_factor, dim


def phi3_forward(config, state_dict, input_ids):
    sd, prefix = _strip(state_dict, ("model.",))
    if config.get("hidden_act", "silu") != "silu":
        raise NotImplementedError("hidden_act " + config["hidden_act"])
    H = config["num_attention_heads"]
    KV = config.get("num_key_value_heads") or H
    hd = head_dim(config)
    eps = config.get("rms_norm_eps", 1e-5)  # Phi3RMSNorm: input_layernorm, post_attention_layernorm, norm
    T = len(input_ids)
    pos = torch.arange(T)
    inv_freq, scaling, rot = phi3_rope(config, T)
    window = config.get("sliding_window")  # Phi3Model: a sliding-window causal mask on every layer unless null
    x = sd["embed_tokens.weight"][torch.tensor(input_ids)]
    attn = []
    for i in range(config["num_hidden_layers"]):
        p = f"layers.{i}."
        h = _rms_norm(x, sd[p + "input_layernorm.weight"], eps)
        # qkv_proj (no bias): q's H * hd rows, then k's KV * hd, then v's KV * hd
        qkv = _linear(h, sd, p + "self_attn.qkv_proj", False)
        q, k, v = qkv.split([H * hd, KV * hd, KV * hd], dim=-1)
        q, k, v = (t.reshape(T, n, hd).transpose(0, 1) for t, n in ((q, H), (k, KV), (v, KV)))
        # apply_rotary_pos_emb: the first rotary_dim features rotate (rotate_half within them), cos and sin times
        # the attention scaling; the rest pass
        def rope(t):
            freqs = pos.to(F64)[:, None] * inv_freq[None, :]
            emb = torch.cat((freqs, freqs), dim=-1)
            r = t[..., :rot]
            return torch.cat((r * emb.cos() * scaling + _rotate_half(r) * emb.sin() * scaling, t[..., rot:]), dim=-1)
        q, k = rope(q), rope(k)
        rep = H // KV
        k, v = k.repeat_interleave(rep, dim=0), v.repeat_interleave(rep, dim=0)
        ctx, probs = _softmax_attention(q, k, v, hd ** -0.5, _window_mask(T, window))
        attn.append(probs)
        x = x + _linear(ctx.transpose(0, 1).reshape(T, H * hd), sd, p + "self_attn.o_proj", False)
        h = _rms_norm(x, sd[p + "post_attention_layernorm.weight"], eps)
        # Phi3MLP: gate, up = gate_up_proj(h).chunk(2); down_proj(up * silu(gate))
        gate, up = _linear(h, sd, p + "mlp.gate_up_proj", False).chunk(2, dim=-1)
        x = x + _linear(up * (gate * torch.sigmoid(gate)), sd, p + "mlp.down_proj", False)
    hidden = _rms_norm(x, sd["norm.weight"], eps)
    out = {"hidden": hidden, "attention": torch.stack(attn)}
    head = sd.get("lm_head.weight")
    if head is None and _has_lm_head(config, prefix):
        if not _tied(config, False):  # Phi3Config: tie_word_embeddings defaults to False
            raise KeyError("lm_head.weight (tie_word_embeddings is false)")
        head = sd["embed_tokens.weight"]
    if head is not None:
        out["logits"] = hidden @ head.T
    return out


# ---- OLMo 2 (modeling_olmo2.py, configuration_olmo2.py) ----------------------------------------------------------

def olmo2_forward(config, state_dict, input_ids):
    sd, prefix = _strip(state_dict, ("model.",))
    if config.get("hidden_act", "silu") != "silu":
        raise NotImplementedError("hidden_act " + config["hidden_act"])
    H = config["num_attention_heads"]
    KV = config.get("num_key_value_heads") or H
    hd = head_dim(config)
    eps = config.get("rms_norm_eps", 1e-5)  # Olmo2RMSNorm: every norm, q_norm and k_norm too
    bias = config.get("attention_bias", False)  # q, k, v and o_proj biases; the MLP has none
    inv_freq = rope_inv_freq(config)
    T = len(input_ids)
    pos = torch.arange(T)
    x = sd["embed_tokens.weight"][torch.tensor(input_ids)]
    attn = []
    for i in range(config["num_hidden_layers"]):
        p = f"layers.{i}."
        # Olmo2Attention: no norm on the layer's input; q_norm over all of q_proj's H * hd outputs and k_norm over
        # k_proj's KV * hd, before the heads are split and before RoPE
        q = _rms_norm(_linear(x, sd, p + "self_attn.q_proj", bias), sd[p + "self_attn.q_norm.weight"], eps)
        k = _rms_norm(_linear(x, sd, p + "self_attn.k_proj", bias), sd[p + "self_attn.k_norm.weight"], eps)
        v = _linear(x, sd, p + "self_attn.v_proj", bias)
        q, k, v = (t.reshape(T, n, hd).transpose(0, 1) for t, n in ((q, H), (k, KV), (v, KV)))
        q, k = apply_rope(q, pos, inv_freq), apply_rope(k, pos, inv_freq)
        rep = H // KV
        k, v = k.repeat_interleave(rep, dim=0), v.repeat_interleave(rep, dim=0)
        ctx, probs = _softmax_attention(q, k, v, hd ** -0.5, _window_mask(T, None))
        attn.append(probs)
        a = _linear(ctx.transpose(0, 1).reshape(T, H * hd), sd, p + "self_attn.o_proj", bias)
        # Olmo2DecoderLayer: x + post_attention_layernorm(attn(x)), then x + post_feedforward_layernorm(mlp(x))
        x = x + _rms_norm(a, sd[p + "post_attention_layernorm.weight"], eps)
        g = _linear(x, sd, p + "mlp.gate_proj", False)
        m = _linear((g * torch.sigmoid(g)) * _linear(x, sd, p + "mlp.up_proj", False), sd, p + "mlp.down_proj", False)
        x = x + _rms_norm(m, sd[p + "post_feedforward_layernorm.weight"], eps)
    hidden = _rms_norm(x, sd["norm.weight"], eps)
    out = {"hidden": hidden, "attention": torch.stack(attn)}
    head = sd.get("lm_head.weight")
    if head is None and _has_lm_head(config, prefix):
        if not _tied(config, False):  # Olmo2Config: tie_word_embeddings defaults to False
            raise KeyError("lm_head.weight (tie_word_embeddings is false)")
        head = sd["embed_tokens.weight"]
    if head is not None:
        out["logits"] = hidden @ head.T
    return out


# ---- Encoder-decoders: BART, Marian, T5 (modeling_bart.py, modeling_marian.py, modeling_t5.py) --------------------
#
# Entry points: `seq2seq_forward(config, state_dict, source_ids, target_ids)` -> {"logits" [T, V] (if the checkpoint
# has a head), "hidden" (the decoder's last_hidden_state), "encoder_attention" [Le, He, S, S], "decoder_attention"
# [Ld, Hd, T, T], "cross_attention" [Ld, Hd, T, S]}; `target_ids` are the decoder's inputs, starting with
# decoder_start_token_id (no shift here). `translate_greedy(config, state_dict, source_ids, max_steps)`.

def _causal(T):
    return torch.tril(torch.ones(T, T, dtype=torch.bool))


def _heads(x, H):
    T = x.shape[0]
    return x.reshape(T, H, -1).transpose(0, 1)


def _bart_attention(sd, p, x, memory, H, allowed):
    """BartAttention / MarianAttention: q, k, v, out_proj all with biases; q scaled by head_dim ** -0.5."""
    q = _heads(_linear(x, sd, p + "q_proj"), H)
    k = _heads(_linear(memory, sd, p + "k_proj"), H)
    v = _heads(_linear(memory, sd, p + "v_proj"), H)
    ctx, probs = _softmax_attention(q, k, v, q.shape[-1] ** -0.5, allowed)
    return _linear(ctx.transpose(0, 1).reshape(x.shape[0], -1), sd, p + "out_proj"), probs


def marian_sinusoids(rows, dim):
    """MarianSinusoidalPositionalEmbedding._init_weight: position_enc[pos, j] = pos / 10000^(2 (j // 2) / dim) in
    float64 (numpy), sin of the even j into the first half (dim // 2 columns, rounded up), cos of the odd j into the
    second; stored as a float32 table (the module's weight), read back here as float64."""
    pos = torch.arange(rows, dtype=F64)[:, None]
    j = torch.arange(dim, dtype=F64)[None, :]
    enc = pos / torch.pow(torch.tensor(10000.0, dtype=F64), 2 * torch.floor(j / 2) / dim)
    out = torch.zeros(rows, dim, dtype=F64)
    sentinel = dim // 2 if dim % 2 == 0 else (dim // 2) + 1
    out[:, :sentinel] = torch.sin(enc[:, 0::2])
    out[:, sentinel:] = torch.cos(enc[:, 1::2])
    return out.float().to(F64)


def _bart_family(config, state_dict, source_ids, target_ids):
    """BartForConditionalGeneration / BartModel and MarianMTModel / MarianModel. Both are post-LayerNorm (every
    nn.LayerNorm at torch's default eps 1e-5) with biases everywhere and `activation_function` in the MLP. BART:
    learned positions read from row position + 2 (BartLearnedPositionalEmbedding.offset), `layernorm_embedding` on
    the embeddings' sum. Marian: fixed sinusoidal positions from row 0, no embedding norm. Both: embeddings times
    sqrt(d_model) when `scale_embedding`; logits = lm_head(decoder output) + final_logits_bias ([1, vocab])."""
    marian = config["model_type"] == "marian"
    prefix = _prefix_of(state_dict, "model.")
    sd, _ = _strip(state_dict, ("model.",))
    d = config["d_model"]
    act = _act(config.get("activation_function", "swish" if marian else "gelu"))
    scale = math.sqrt(d) if config.get("scale_embedding", False) else 1.0
    # shared: one table for the encoder, the decoder and (tied) the LM head; files may name it under any of these
    shared = next(sd[n] for n in ("shared.weight", "encoder.embed_tokens.weight", "decoder.embed_tokens.weight") if n in sd)
    if marian:
        if not config.get("share_encoder_decoder_embeddings", True):
            raise NotImplementedError("share_encoder_decoder_embeddings false")
        table = marian_sinusoids(config["max_position_embeddings"], d)

    def embed(ids, stack):
        x = shared[torch.tensor(ids)] * scale
        positions = torch.arange(len(ids))
        if marian:
            return x + table[positions]
        x = x + sd[stack + ".embed_positions.weight"][positions + 2]
        return _layer_norm(x, sd[stack + ".layernorm_embedding.weight"], sd[stack + ".layernorm_embedding.bias"], 1e-5)

    def norm(x, name):
        return _layer_norm(x, sd[name + ".weight"], sd[name + ".bias"], 1e-5)

    def ffn(x, p):
        return _linear(act(_linear(x, sd, p + "fc1")), sd, p + "fc2")

    S, T = len(source_ids), len(target_ids)
    x = embed(source_ids, "encoder")
    He, Hd = config["encoder_attention_heads"], config["decoder_attention_heads"]
    enc_attn = []
    for i in range(config["encoder_layers"]):
        p = f"encoder.layers.{i}."
        a, probs = _bart_attention(sd, p + "self_attn.", x, x, He, torch.ones(S, S, dtype=torch.bool))
        enc_attn.append(probs)
        x = norm(x + a, p + "self_attn_layer_norm")
        x = norm(x + ffn(x, p), p + "final_layer_norm")
    memory = x
    y = embed(target_ids, "decoder")
    dec_attn, cross_attn = [], []
    for i in range(config["decoder_layers"]):
        p = f"decoder.layers.{i}."
        a, probs = _bart_attention(sd, p + "self_attn.", y, y, Hd, _causal(T))
        dec_attn.append(probs)
        y = norm(y + a, p + "self_attn_layer_norm")
        a, probs = _bart_attention(sd, p + "encoder_attn.", y, memory, Hd, torch.ones(T, S, dtype=torch.bool))
        cross_attn.append(probs)
        y = norm(y + a, p + "encoder_attn_layer_norm")
        y = norm(y + ffn(y, p), p + "final_layer_norm")
    out = {"hidden": y, "encoder_attention": torch.stack(enc_attn), "decoder_attention": torch.stack(dec_attn),
           "cross_attention": torch.stack(cross_attn)}
    if prefix:  # *ForConditionalGeneration / MarianMTModel; the bare model has no head
        head = sd.get("lm_head.weight")
        if head is None or _tied(config, True):
            head = shared  # tie_word_embeddings (default true): lm_head is shared
        out["logits"] = y @ head.T + sd["final_logits_bias"].reshape(-1)
    return out


def t5_bucket(relative, bidirectional, num_buckets, max_distance):
    """T5Attention._relative_position_bucket, as torch computes it (the logarithmic part in float32)."""
    ret = torch.zeros_like(relative)
    if bidirectional:
        num_buckets //= 2
        ret += (relative > 0).long() * num_buckets
        n = relative.abs()
    else:
        n = -torch.min(relative, torch.zeros_like(relative))
    max_exact = num_buckets // 2
    large = max_exact + (torch.log(n.float() / max_exact) / math.log(max_distance / max_exact)
                         * (num_buckets - max_exact)).to(torch.long)
    large = torch.min(large, torch.full_like(large, num_buckets - 1))
    return ret + torch.where(n < max_exact, n, large)


def t5_feed_forward(config):
    """T5Config: feed_forward_proj "act" or "gated-act"; "gated-gelu" means gelu_new."""
    proj = config.get("feed_forward_proj", "relu")
    parts = proj.split("-")
    gated = parts[0] == "gated"
    return gated, ("gelu_new" if proj == "gated-gelu" else parts[-1])


def _t5(config, state_dict, source_ids, target_ids):
    """T5ForConditionalGeneration / T5Model: pre-norm blocks of T5LayerNorm (an RMSNorm, eps layer_norm_epsilon),
    attention without biases and without the 1/sqrt(d_kv) scale, a relative-position bias from buckets of key -
    query (bidirectional in the encoder, causal in the decoder) computed by block 0's relative_attention_bias and
    added in every layer of its stack (cross-attention has none), the feed-forward wo(act(wi(x))) or
    wo(act(wi_0(x)) * wi_1(x)); a tied head reads the decoder output times d_model ** -0.5."""
    sd = {k: v.to(F64) for k, v in state_dict.items()}
    d, H = config["d_model"], config["num_heads"]
    eps = config.get("layer_norm_epsilon", 1e-6)
    buckets, max_distance = config.get("relative_attention_num_buckets", 32), config.get("relative_attention_max_distance", 128)
    gated, act_name = t5_feed_forward(config)
    act = _act(act_name)
    shared = next(sd[n] for n in ("shared.weight", "encoder.embed_tokens.weight", "decoder.embed_tokens.weight") if n in sd)

    def bias(stack, Tq, Tk, bidirectional):
        rel = torch.arange(Tk)[None, :] - torch.arange(Tq)[:, None]  # memory_position - context_position
        b = t5_bucket(rel, bidirectional, buckets, max_distance)
        return sd[stack + ".block.0.layer.0.SelfAttention.relative_attention_bias.weight"][b].permute(2, 0, 1)

    def attention(p, x, memory, allowed, position_bias):
        q, k, v = (_heads(_linear(src, sd, p + n, False), H) for n, src in (("q", x), ("k", memory), ("v", memory)))
        scores = q @ k.transpose(-1, -2) + position_bias
        scores = scores + torch.zeros(allowed.shape, dtype=F64).masked_fill(~allowed, torch.finfo(F64).min)
        probs = torch.softmax(scores, dim=-1)
        return _linear((probs @ v).transpose(0, 1).reshape(x.shape[0], -1), sd, p + "o", False), probs

    def ff(p, x):
        h = _rms_norm(x, sd[p + "layer_norm.weight"], eps)
        if gated:
            h = act(_linear(h, sd, p + "DenseReluDense.wi_0", False)) * _linear(h, sd, p + "DenseReluDense.wi_1", False)
        else:
            h = act(_linear(h, sd, p + "DenseReluDense.wi", False))
        return x + _linear(h, sd, p + "DenseReluDense.wo", False)

    S, T = len(source_ids), len(target_ids)
    x = shared[torch.tensor(source_ids)]
    pb = bias("encoder", S, S, True)
    enc_attn = []
    for i in range(config["num_layers"]):
        p = f"encoder.block.{i}.layer."
        h = _rms_norm(x, sd[p + "0.layer_norm.weight"], eps)
        a, probs = attention(p + "0.SelfAttention.", h, h, torch.ones(S, S, dtype=torch.bool), pb)
        enc_attn.append(probs)
        x = ff(p + "1.", x + a)
    memory = _rms_norm(x, sd["encoder.final_layer_norm.weight"], eps)
    y = shared[torch.tensor(target_ids)]
    pb = bias("decoder", T, T, False)
    dec_attn, cross_attn = [], []
    for i in range(config.get("num_decoder_layers") or config["num_layers"]):
        p = f"decoder.block.{i}.layer."
        h = _rms_norm(y, sd[p + "0.layer_norm.weight"], eps)
        a, probs = attention(p + "0.SelfAttention.", h, h, _causal(T), pb)
        dec_attn.append(probs)
        y = y + a
        h = _rms_norm(y, sd[p + "1.layer_norm.weight"], eps)
        a, probs = attention(p + "1.EncDecAttention.", h, memory, torch.ones(T, S, dtype=torch.bool), torch.zeros(H, T, S, dtype=F64))
        cross_attn.append(probs)
        y = ff(p + "2.", y + a)
    y = _rms_norm(y, sd["decoder.final_layer_norm.weight"], eps)
    out = {"hidden": y, "encoder_attention": torch.stack(enc_attn), "decoder_attention": torch.stack(dec_attn),
           "cross_attention": torch.stack(cross_attn)}
    if config.get("architectures", ["T5ForConditionalGeneration"])[0] == "T5ForConditionalGeneration":
        if _tied(config, True):
            out["logits"] = (y * d ** -0.5) @ shared.T  # the rescale before a tied lm_head
        else:
            out["logits"] = y @ sd["lm_head.weight"].T
    return out


def seq2seq_forward(config, state_dict, source_ids, target_ids):
    mt = config["model_type"]
    if mt in ("bart", "marian"):
        return _bart_family(config, state_dict, source_ids, target_ids)
    if mt == "t5":
        return _t5(config, state_dict, source_ids, target_ids)
    raise NotImplementedError(f"model_type {mt!r}")


def translate_greedy(config, state_dict, source_ids, max_steps):
    """Greedy decoding from decoder_start_token_id, the whole target recomputed each step, until eos_token_id (kept)
    or max_steps tokens; returns the tokens after the start token. No logits processor (forced BOS/EOS, bad words)."""
    target = [config["decoder_start_token_id"]]
    for _ in range(max_steps):
        token = int(torch.argmax(seq2seq_forward(config, state_dict, source_ids, target)["logits"][-1]))
        target.append(token)
        if token == config["eos_token_id"]:
            break
    return target[1:]


# ---- dispatch ------------------------------------------------------------------------------------------------------

def forward(config, state_dict, input_ids, attention_mask=None, token_type_ids=None):
    mt = config["model_type"]
    if mt == "gpt2":
        return gpt2_forward(config, state_dict, input_ids)
    if mt == "bert":
        return bert_forward(config, state_dict, input_ids, attention_mask, token_type_ids)
    if mt in ("llama", "mistral", "qwen2", "qwen3"):
        return llama_forward(config, state_dict, input_ids)
    if mt in ("gemma", "gemma2", "gemma3_text"):
        return gemma_forward(config, state_dict, input_ids)
    if mt == "gpt_neox":
        return gpt_neox_forward(config, state_dict, input_ids)
    if mt == "phi3":
        return phi3_forward(config, state_dict, input_ids)
    if mt == "olmo2":
        return olmo2_forward(config, state_dict, input_ids)
    raise NotImplementedError(f"model_type {mt!r}")


def generate_greedy(config, state_dict, prompt, max_new_tokens):
    """Greedy decoding, the whole sequence recomputed each step; returns the new tokens only."""
    seq = list(prompt)
    for _ in range(max_new_tokens):
        seq.append(int(torch.argmax(forward(config, state_dict, seq)["logits"][-1])))
    return seq[len(prompt):]
