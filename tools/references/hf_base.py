"""The shared pieces of the float64 Hugging Face references (norms, linear layers, the softmax attention, RoPE, the
sliding-window masks) and the first six families' forward passes: gpt2, bert, llama, mistral, qwen2, qwen3, from
HF's published semantics. hf_reference.py is the entry point; hf_decoders.py and hf_seq2seq.py call these pieces
through this module, so hf_patching_reference and hf_research_reference can wrap them here."""

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

def _lm_head(config, sd, has_head, tied_default, name="lm_head.weight", embedding="embed_tokens.weight"):
    """The LM head's weight: its own tensor, else the token embedding for a class with a head saved tied (the
    config's tie_word_embeddings, whose default is the config class's), else None (a bare *Model: hidden states)."""
    head = sd.get(name)
    if head is None and has_head:
        if not _tied(config, tied_default):
            raise KeyError(f"{name} (tie_word_embeddings is false)")
        head = sd[embedding]
    return head


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
    # GPT2LMHeadModel, not GPT2Model
    head = _lm_head(config, sd, _has_lm_head(config, _prefix_of(state_dict, "transformer.")), True, embedding="wte.weight")
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
    head = _lm_head(config, sd, _prefix_of(state_dict, "model."), False)  # *ForCausalLM; a bare *Model has no head
    if head is not None:
        out["logits"] = hidden @ head.T  # lm_head has no bias
    return out
