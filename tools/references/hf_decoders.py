"""The float64 references of the decoder families written after the first six (hf_reference.py): Gemma 1-3,
GPT-NeoX, Phi-3 and OLMo 2, each from its modeling_*.py.

The shared pieces (norms, linear layers, the softmax attention, RoPE) are hf_base's, called through the module so
that hf_patching_reference and hf_research_reference can wrap them; hf_reference.forward dispatches here."""

import math  # noqa: F401

import torch

from references import hf_base as ref

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
        return ref._act("gelu_pytorch_tanh")
    return ref._act(config.get("hidden_activation") or "gelu_pytorch_tanh")


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
    sd, _ = ref._strip(state_dict, ("model.",))
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
    inv_global = ref.rope_inv_freq(dict(config, rope_theta=theta))
    inv_local = ref.rope_inv_freq(dict(config, rope_theta=config.get("rope_local_base_freq", 10000.0), rope_scaling=None))
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
        q = ref._linear(h, sd, p + "self_attn.q_proj", bias).reshape(T, H, hd).transpose(0, 1)
        k = ref._linear(h, sd, p + "self_attn.k_proj", bias).reshape(T, KV, hd).transpose(0, 1)
        v = ref._linear(h, sd, p + "self_attn.v_proj", bias).reshape(T, KV, hd).transpose(0, 1)
        if gen == 3:  # Gemma3Attention: q_norm, k_norm (Gemma3RMSNorm over head_dim) before RoPE
            q = _gemma_rms_norm(q, sd[p + "self_attn.q_norm.weight"], eps)
            k = _gemma_rms_norm(k, sd[p + "self_attn.k_norm.weight"], eps)
        inv = inv_local if gen == 3 and sliding else inv_global
        q, k = ref.apply_rope(q, pos, inv), ref.apply_rope(k, pos, inv)
        rep = H // KV
        k, v = k.repeat_interleave(rep, dim=0), v.repeat_interleave(rep, dim=0)
        # eager_attention_forward: scores * scaling, then softcap * tanh(scores / softcap), then the mask
        scores = (q @ k.transpose(-1, -2)) * scale
        if attn_cap is not None:
            scores = torch.tanh(scores / attn_cap) * attn_cap
        allowed = ref._window_mask(T, config["sliding_window"] if sliding else None)
        scores = scores + torch.zeros(allowed.shape, dtype=ref.F64).masked_fill(~allowed, torch.finfo(ref.F64).min)
        probs = torch.softmax(scores, dim=-1)
        attn.append(probs)
        out = ref._linear((probs @ v).transpose(0, 1).reshape(T, H * hd), sd, p + "self_attn.o_proj", bias)
        if gen == 1:  # GemmaDecoderLayer: pre-norm, post_attention_layernorm before the MLP
            x = x + out
            h = _gemma_rms_norm(x, sd[p + "post_attention_layernorm.weight"], eps)
        else:  # Gemma2DecoderLayer: the sandwich, a norm on each sublayer's output before the residual sum
            x = x + _gemma_rms_norm(out, sd[p + "post_attention_layernorm.weight"], eps)
            h = _gemma_rms_norm(x, sd[p + "pre_feedforward_layernorm.weight"], eps)
        # GemmaMLP: down(act(gate(x)) * up(x)), no biases
        h = ref._linear(act(ref._linear(h, sd, p + "mlp.gate_proj", False)) * ref._linear(h, sd, p + "mlp.up_proj", False),
                    sd, p + "mlp.down_proj", False)
        x = x + (h if gen == 1 else _gemma_rms_norm(h, sd[p + "post_feedforward_layernorm.weight"], eps))
    hidden = _gemma_rms_norm(x, sd["norm.weight"], eps)
    out = {"hidden": hidden, "attention": torch.stack(attn)}
    head = ref._lm_head(config, sd, ref._prefix_of(state_dict, "model."), True)  # *ForCausalLM; tied by default
    if head is not None:
        logits = hidden @ head.T
        if final_cap is not None:  # Gemma2ForCausalLM: logits / cap, tanh, * cap
            logits = torch.tanh(logits / final_cap) * final_cap
        out["logits"] = logits
    return out


# ---- GPT-NeoX, Pythia (modeling_gpt_neox.py, configuration_gpt_neox.py) -------------------------------------------

def gpt_neox_forward(config, state_dict, input_ids):
    sd, prefix = ref._strip(state_dict, ("gpt_neox.",))
    # hidden_size: width; num_attention_heads: heads of head_size = hidden_size / heads (no grouped K/V);
    # intermediate_size is read from dense_h_to_4h's shape; max_position_embeddings bounds nothing (RoPE has no table)
    d, H = config["hidden_size"], config["num_attention_heads"]
    hd = d // H
    eps = config.get("layer_norm_eps", 1e-5)  # input_layernorm, post_attention_layernorm, final_layer_norm
    act = ref._act(config.get("hidden_act", "gelu"))  # GPTNeoXMLP: dense_h_to_4h -> act -> dense_4h_to_h
    bias = config.get("attention_bias", True)  # query_key_value and dense biases (the MLP always has them)
    # GPTNeoXAttention: rotary_ndims = int(head_size * rotary_pct); GPTNeoXRotaryEmbedding(rotary_ndims,
    # base=rotary_emb_base): inv_freq = 1 / base^(arange(0, dim, 2) / dim) over the rotated features only
    rot = int(hd * config.get("rotary_pct", 0.25))
    if rot % 2:
        raise ValueError("odd rotary_ndims")
    if config.get("rope_scaling"):
        raise NotImplementedError("rope_scaling")  # linear and dynamic exist in HF; not in these fixtures
    base = config.get("rotary_emb_base", 10000)
    inv_freq = 1.0 / (base ** (torch.arange(0, rot, 2, dtype=ref.F64) / rot))
    T = len(input_ids)
    pos = torch.arange(T)
    x = sd["embed_in.weight"][torch.tensor(input_ids)]
    causal = ref._window_mask(T, None)
    attn = []
    for i in range(config["num_hidden_layers"]):
        p = f"layers.{i}."
        h = ref._layer_norm(x, sd[p + "input_layernorm.weight"], sd[p + "input_layernorm.bias"], eps)
        # query_key_value's output viewed [T, heads, 3 * head_size]: per head its q, then k, then v
        qkv = ref._linear(h, sd, p + "attention.query_key_value", bias).reshape(T, H, 3 * hd).transpose(0, 1)
        q, k, v = qkv[..., :hd], qkv[..., hd:2 * hd], qkv[..., 2 * hd:]
        # apply_rotary_pos_emb on q[..., :rotary_ndims] (rotate_half within those), the rest concatenated back
        q = torch.cat((ref.apply_rope(q[..., :rot], pos, inv_freq), q[..., rot:]), dim=-1)
        k = torch.cat((ref.apply_rope(k[..., :rot], pos, inv_freq), k[..., rot:]), dim=-1)
        ctx, probs = ref._softmax_attention(q, k, v, hd ** -0.5, causal)  # norm_factor = head_size ** -0.5
        attn.append(probs)
        a = ref._linear(ctx.transpose(0, 1).reshape(T, d), sd, p + "attention.dense", bias)
        ln2 = (sd[p + "post_attention_layernorm.weight"], sd[p + "post_attention_layernorm.bias"], eps)

        def mlp(y):
            return ref._linear(act(ref._linear(y, sd, p + "mlp.dense_h_to_4h")), sd, p + "mlp.dense_4h_to_h")
        if config.get("use_parallel_residual", True):
            x = x + a + mlp(ref._layer_norm(x, *ln2))  # GPTNeoXLayer: x + attn(ln1(x)) + mlp(ln2(x))
        else:
            x = x + a  # x = x + attn(ln1(x)); x = x + mlp(ln2(x))
            x = x + mlp(ref._layer_norm(x, *ln2))
    hidden = ref._layer_norm(x, sd["final_layer_norm.weight"], sd["final_layer_norm.bias"], eps)
    out = {"hidden": hidden, "attention": torch.stack(attn)}
    # GPTNeoXForCausalLM.embed_out: Linear(hidden, vocab, bias=False); GPTNeoXConfig: untied by default
    head = ref._lm_head(config, sd, ref._has_lm_head(config, prefix), False, "embed_out.weight", "embed_in.weight")
    if head is not None:
        out["logits"] = hidden @ head.T
    return out


# ---- Phi-3, Phi-4-mini (modeling_phi3.py, configuration_phi3.py, modeling_rope_utils.py) -------------------------

def phi3_rope(config, seq_len):
    """(inv_freq, attention_scaling) of Phi3RotaryEmbedding for an input of seq_len positions: the rotated features
    dim = int(head_dim * partial_rotary_factor); rope_scaling null -> default; "longrope" (Phi3Config renames the
    older "su" and "yarn" to it) -> _compute_longrope_parameters with longrope_frequency_update's choice of factors."""
    hd = ref.head_dim(config)
    dim = int(hd * config.get("partial_rotary_factor", 1.0))
    base = config.get("rope_theta", 10000.0)
    shape = torch.arange(0, dim, 2, dtype=ref.F64) / dim
    rs = config.get("rope_scaling")
    kind = ref.rope_type(config)
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
    ext = torch.tensor(rs["long_factor"] if seq_len > orig else rs["short_factor"], dtype=ref.F64)
    return 1.0 / (ext * base ** shape), attention_factor, dim


def phi3_forward(config, state_dict, input_ids):
    sd, prefix = ref._strip(state_dict, ("model.",))
    if config.get("hidden_act", "silu") != "silu":
        raise NotImplementedError("hidden_act " + config["hidden_act"])
    H = config["num_attention_heads"]
    KV = config.get("num_key_value_heads") or H
    hd = ref.head_dim(config)
    eps = config.get("rms_norm_eps", 1e-5)  # Phi3RMSNorm: input_layernorm, post_attention_layernorm, norm
    T = len(input_ids)
    pos = torch.arange(T)
    inv_freq, scaling, rot = phi3_rope(config, T)
    window = config.get("sliding_window")  # Phi3Model: a sliding-window causal mask on every layer unless null
    x = sd["embed_tokens.weight"][torch.tensor(input_ids)]
    attn = []
    for i in range(config["num_hidden_layers"]):
        p = f"layers.{i}."
        h = ref._rms_norm(x, sd[p + "input_layernorm.weight"], eps)
        # qkv_proj (no bias): q's H * hd rows, then k's KV * hd, then v's KV * hd
        qkv = ref._linear(h, sd, p + "self_attn.qkv_proj", False)
        q, k, v = qkv.split([H * hd, KV * hd, KV * hd], dim=-1)
        q, k, v = (t.reshape(T, n, hd).transpose(0, 1) for t, n in ((q, H), (k, KV), (v, KV)))
        # apply_rotary_pos_emb: the first rotary_dim features rotate (rotate_half within them), cos and sin times
        # the attention scaling; the rest pass
        def rope(t):
            freqs = pos.to(ref.F64)[:, None] * inv_freq[None, :]
            emb = torch.cat((freqs, freqs), dim=-1)
            r = t[..., :rot]
            return torch.cat((r * emb.cos() * scaling + ref._rotate_half(r) * emb.sin() * scaling, t[..., rot:]), dim=-1)
        q, k = rope(q), rope(k)
        rep = H // KV
        k, v = k.repeat_interleave(rep, dim=0), v.repeat_interleave(rep, dim=0)
        ctx, probs = ref._softmax_attention(q, k, v, hd ** -0.5, ref._window_mask(T, window))
        attn.append(probs)
        x = x + ref._linear(ctx.transpose(0, 1).reshape(T, H * hd), sd, p + "self_attn.o_proj", False)
        h = ref._rms_norm(x, sd[p + "post_attention_layernorm.weight"], eps)
        # Phi3MLP: gate, up = gate_up_proj(h).chunk(2); down_proj(up * silu(gate))
        gate, up = ref._linear(h, sd, p + "mlp.gate_up_proj", False).chunk(2, dim=-1)
        x = x + ref._linear(up * (gate * torch.sigmoid(gate)), sd, p + "mlp.down_proj", False)
    hidden = ref._rms_norm(x, sd["norm.weight"], eps)
    out = {"hidden": hidden, "attention": torch.stack(attn)}
    head = ref._lm_head(config, sd, ref._has_lm_head(config, prefix), False)  # Phi3Config: untied by default
    if head is not None:
        out["logits"] = hidden @ head.T
    return out


# ---- OLMo 2 (modeling_olmo2.py, configuration_olmo2.py) ----------------------------------------------------------

def olmo2_forward(config, state_dict, input_ids):
    sd, prefix = ref._strip(state_dict, ("model.",))
    if config.get("hidden_act", "silu") != "silu":
        raise NotImplementedError("hidden_act " + config["hidden_act"])
    H = config["num_attention_heads"]
    KV = config.get("num_key_value_heads") or H
    hd = ref.head_dim(config)
    eps = config.get("rms_norm_eps", 1e-5)  # Olmo2RMSNorm: every norm, q_norm and k_norm too
    bias = config.get("attention_bias", False)  # q, k, v and o_proj biases; the MLP has none
    inv_freq = ref.rope_inv_freq(config)
    T = len(input_ids)
    pos = torch.arange(T)
    x = sd["embed_tokens.weight"][torch.tensor(input_ids)]
    attn = []
    for i in range(config["num_hidden_layers"]):
        p = f"layers.{i}."
        # Olmo2Attention: no norm on the layer's input; q_norm over all of q_proj's H * hd outputs and k_norm over
        # k_proj's KV * hd, before the heads are split and before RoPE
        q = ref._rms_norm(ref._linear(x, sd, p + "self_attn.q_proj", bias), sd[p + "self_attn.q_norm.weight"], eps)
        k = ref._rms_norm(ref._linear(x, sd, p + "self_attn.k_proj", bias), sd[p + "self_attn.k_norm.weight"], eps)
        v = ref._linear(x, sd, p + "self_attn.v_proj", bias)
        q, k, v = (t.reshape(T, n, hd).transpose(0, 1) for t, n in ((q, H), (k, KV), (v, KV)))
        q, k = ref.apply_rope(q, pos, inv_freq), ref.apply_rope(k, pos, inv_freq)
        rep = H // KV
        k, v = k.repeat_interleave(rep, dim=0), v.repeat_interleave(rep, dim=0)
        ctx, probs = ref._softmax_attention(q, k, v, hd ** -0.5, ref._window_mask(T, None))
        attn.append(probs)
        a = ref._linear(ctx.transpose(0, 1).reshape(T, H * hd), sd, p + "self_attn.o_proj", bias)
        # Olmo2DecoderLayer: x + post_attention_layernorm(attn(x)), then x + post_feedforward_layernorm(mlp(x))
        x = x + ref._rms_norm(a, sd[p + "post_attention_layernorm.weight"], eps)
        g = ref._linear(x, sd, p + "mlp.gate_proj", False)
        m = ref._linear((g * torch.sigmoid(g)) * ref._linear(x, sd, p + "mlp.up_proj", False), sd, p + "mlp.down_proj", False)
        x = x + ref._rms_norm(m, sd[p + "post_feedforward_layernorm.weight"], eps)
    hidden = ref._rms_norm(x, sd["norm.weight"], eps)
    out = {"hidden": hidden, "attention": torch.stack(attn)}
    head = ref._lm_head(config, sd, ref._has_lm_head(config, prefix), False)  # Olmo2Config: untied by default
    if head is not None:
        out["logits"] = hidden @ head.T
    return out
