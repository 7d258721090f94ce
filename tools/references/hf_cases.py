#!/usr/bin/python3
"""The cases of tests/fixtures/hf/: each a config.json as Hugging Face's config classes write it, how to lay out the
weights, the inputs and the features it exercises (make_hf_checkpoints.py turns them into files)."""

from references import hf_tokenizer_files as tkf


# One function per family, each the fields of its Hugging Face configuration class written out as that class saves
# them: test data, similar in shape from family to family on purpose (a shared table would hide which family has
# which field).
def gpt2_config(**kw):
    # configuration_gpt2.GPT2Config's fields, with tiny sizes
    c = {"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "activation_function": "gelu_new",
         "attn_pdrop": 0.1, "bos_token_id": 0, "embd_pdrop": 0.1, "eos_token_id": 0, "initializer_range": 0.02,
         "layer_norm_epsilon": 1e-5, "n_ctx": 12, "n_embd": 16, "n_head": 2, "n_inner": 32, "n_layer": 2,
         "n_positions": 12, "reorder_and_upcast_attn": False, "resid_pdrop": 0.1,
         "scale_attn_by_inverse_layer_idx": False, "scale_attn_weights": True, "summary_activation": None,
         "summary_first_dropout": 0.1, "summary_proj_to_labels": True, "summary_type": "cls_index",
         "summary_use_proj": True, "torch_dtype": "float32", "use_cache": True, "vocab_size": 48}
    c.update(kw)
    return c


def bert_config(**kw):
    # configuration_bert.BertConfig's fields
    c = {"architectures": ["BertForMaskedLM"], "model_type": "bert", "attention_probs_dropout_prob": 0.1,
         "classifier_dropout": None, "hidden_act": "gelu", "hidden_dropout_prob": 0.1, "hidden_size": 16,
         "initializer_range": 0.02, "intermediate_size": 24, "layer_norm_eps": 1e-12, "max_position_embeddings": 16,
         "num_attention_heads": 2, "num_hidden_layers": 2, "pad_token_id": 0, "position_embedding_type": "absolute",
         "torch_dtype": "float32", "type_vocab_size": 2, "use_cache": True, "vocab_size": 48}
    c.update(kw)
    return c


def llama_config(**kw):
    # configuration_llama.LlamaConfig's fields
    c = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "attention_bias": False,
         "attention_dropout": 0.0, "bos_token_id": 1, "eos_token_id": 2, "head_dim": 6, "hidden_act": "silu",
         "hidden_size": 24, "initializer_range": 0.02, "intermediate_size": 24, "max_position_embeddings": 64,
         "mlp_bias": False, "num_attention_heads": 4, "num_hidden_layers": 2, "num_key_value_heads": 2,
         "pretraining_tp": 1, "rms_norm_eps": 1e-6, "rope_scaling": None, "rope_theta": 10000.0,
         "tie_word_embeddings": True, "torch_dtype": "float32", "use_cache": True, "vocab_size": 48}
    c.update(kw)
    return c


def mistral_config(**kw):
    # configuration_mistral.MistralConfig's fields (no attention_bias: Mistral's projections have none)
    c = {"architectures": ["MistralForCausalLM"], "model_type": "mistral", "attention_dropout": 0.0,
         "bos_token_id": 1, "eos_token_id": 2, "head_dim": 6, "hidden_act": "silu", "hidden_size": 24,
         "initializer_range": 0.02, "intermediate_size": 24, "max_position_embeddings": 64,
         "num_attention_heads": 4, "num_hidden_layers": 2, "num_key_value_heads": 2, "rms_norm_eps": 1e-5,
         "rope_theta": 10000.0, "sliding_window": 3, "tie_word_embeddings": False, "torch_dtype": "float32",
         "use_cache": True, "vocab_size": 48}
    c.update(kw)
    return c


def qwen2_config(**kw):
    # configuration_qwen2.Qwen2Config's fields (no head_dim: hidden_size / num_attention_heads)
    c = {"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "attention_dropout": 0.0,
         "bos_token_id": 1, "eos_token_id": 2, "hidden_act": "silu", "hidden_size": 24, "initializer_range": 0.02,
         "intermediate_size": 24, "max_position_embeddings": 64, "max_window_layers": 1, "num_attention_heads": 4,
         "num_hidden_layers": 2, "num_key_value_heads": 2, "rms_norm_eps": 1e-6, "rope_scaling": None,
         "rope_theta": 1000000.0, "sliding_window": 3, "tie_word_embeddings": True, "torch_dtype": "float32",
         "use_cache": True, "use_sliding_window": False, "vocab_size": 48}
    c.update(kw)
    return c


def qwen3_config(**kw):
    # configuration_qwen3.Qwen3Config's fields
    c = {"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "attention_bias": False,
         "attention_dropout": 0.0, "bos_token_id": 1, "eos_token_id": 2, "head_dim": 8, "hidden_act": "silu",
         "hidden_size": 24, "initializer_range": 0.02, "intermediate_size": 24, "max_position_embeddings": 64,
         "max_window_layers": 2, "num_attention_heads": 4, "num_hidden_layers": 2, "num_key_value_heads": 2,
         "rms_norm_eps": 1e-6, "rope_scaling": None, "rope_theta": 1000000.0, "sliding_window": None,
         "tie_word_embeddings": True, "torch_dtype": "float32", "use_cache": True, "use_sliding_window": False,
         "vocab_size": 48}
    c.update(kw)
    return c


def gemma_config(**kw):
    # configuration_gemma.GemmaConfig's fields as transformers 4.4x saves them (hidden_activation since PR 29402)
    c = {"architectures": ["GemmaForCausalLM"], "model_type": "gemma", "attention_bias": False,
         "attention_dropout": 0.0, "bos_token_id": 2, "eos_token_id": 1, "head_dim": 8, "hidden_act": "gelu",
         "hidden_activation": "gelu_pytorch_tanh", "hidden_size": 24, "initializer_range": 0.02,
         "intermediate_size": 32, "max_position_embeddings": 64, "num_attention_heads": 4, "num_hidden_layers": 2,
         "num_key_value_heads": 1, "pad_token_id": 0, "rms_norm_eps": 1e-6, "rope_theta": 10000.0,
         "tie_word_embeddings": True, "torch_dtype": "float32", "use_cache": True, "vocab_size": 48}
    c.update(kw)
    return c


def gpt_neox_config(**kw):
    # configuration_gpt_neox.GPTNeoXConfig's fields as Pythia's config.json has them (rotary_pct, rotary_emb_base)
    c = {"architectures": ["GPTNeoXForCausalLM"], "model_type": "gpt_neox", "attention_bias": True,
         "attention_dropout": 0.0, "bos_token_id": 0, "classifier_dropout": 0.1, "eos_token_id": 0,
         "hidden_act": "gelu", "hidden_dropout": 0.0, "hidden_size": 32, "initializer_range": 0.02,
         "intermediate_size": 40, "layer_norm_eps": 1e-5, "max_position_embeddings": 16, "num_attention_heads": 2,
         "num_hidden_layers": 2, "rope_scaling": None, "rotary_emb_base": 10000, "rotary_pct": 0.25,
         "tie_word_embeddings": False, "torch_dtype": "float32", "use_cache": True, "use_parallel_residual": True,
         "vocab_size": 48}
    c.update(kw)
    return c


def gemma2_config(**kw):
    # configuration_gemma2.Gemma2Config's fields (the Hub's configs also carry hidden_act)
    c = {"architectures": ["Gemma2ForCausalLM"], "model_type": "gemma2", "attention_bias": False,
         "attention_dropout": 0.0, "attn_logit_softcapping": 3.0, "bos_token_id": 2, "cache_implementation": "hybrid",
         "eos_token_id": 1, "final_logit_softcapping": 5.0, "head_dim": 8, "hidden_act": "gelu_pytorch_tanh",
         "hidden_activation": "gelu_pytorch_tanh", "hidden_size": 24, "initializer_range": 0.02,
         "intermediate_size": 32, "max_position_embeddings": 64, "num_attention_heads": 4, "num_hidden_layers": 3,
         "num_key_value_heads": 2, "pad_token_id": 0, "query_pre_attn_scalar": 12, "rms_norm_eps": 1e-6,
         "rope_theta": 10000.0, "sliding_window": 3, "tie_word_embeddings": True, "torch_dtype": "float32",
         "use_cache": True, "vocab_size": 48}
    c.update(kw)
    return c


def phi3_config(**kw):
    # configuration_phi3.Phi3Config's fields as Phi-3-mini's config.json has them
    c = {"architectures": ["Phi3ForCausalLM"], "model_type": "phi3", "attention_bias": False,
         "attention_dropout": 0.0, "bos_token_id": 1, "embd_pdrop": 0.0, "eos_token_id": 2, "hidden_act": "silu",
         "hidden_size": 32, "initializer_range": 0.02, "intermediate_size": 24, "max_position_embeddings": 16,
         "num_attention_heads": 4, "num_hidden_layers": 2, "num_key_value_heads": 2,
         "original_max_position_embeddings": 16, "pad_token_id": 0, "resid_pdrop": 0.0, "rms_norm_eps": 1e-5,
         "rope_scaling": None, "rope_theta": 10000.0, "sliding_window": 5, "tie_word_embeddings": False,
         "torch_dtype": "float32", "use_cache": True, "vocab_size": 48}
    c.update(kw)
    return c


def gemma3_text_config(**kw):
    # configuration_gemma3.Gemma3TextConfig's fields, as google/gemma-3-1b-pt's config.json has them
    c = {"architectures": ["Gemma3ForCausalLM"], "model_type": "gemma3_text", "attention_bias": False,
         "attention_dropout": 0.0, "attn_logit_softcapping": None, "bos_token_id": 2, "cache_implementation": "hybrid",
         "eos_token_id": 1, "final_logit_softcapping": None, "head_dim": 8, "hidden_activation": "gelu_pytorch_tanh",
         "hidden_size": 24, "initializer_range": 0.02, "intermediate_size": 32, "max_position_embeddings": 64,
         "num_attention_heads": 4, "num_hidden_layers": 4, "num_key_value_heads": 1, "pad_token_id": 0,
         "query_pre_attn_scalar": 8, "rms_norm_eps": 1e-6, "rope_local_base_freq": 100.0, "rope_scaling": None,
         "rope_theta": 10000.0, "sliding_window": 3, "sliding_window_pattern": 3, "torch_dtype": "float32",
         "use_cache": True, "vocab_size": 48}
    c.update(kw)
    return c


def olmo2_config(**kw):
    # configuration_olmo2.Olmo2Config's fields as OLMo-2's config.json has them
    c = {"architectures": ["Olmo2ForCausalLM"], "model_type": "olmo2", "attention_bias": False,
         "attention_dropout": 0.0, "bos_token_id": None, "eos_token_id": 2, "hidden_act": "silu", "hidden_size": 24,
         "initializer_range": 0.02, "intermediate_size": 32, "max_position_embeddings": 64,
         "num_attention_heads": 4, "num_hidden_layers": 2, "num_key_value_heads": 2, "pad_token_id": 1,
         "rms_norm_eps": 1e-6, "rope_scaling": None, "rope_theta": 500000, "tie_word_embeddings": False,
         "torch_dtype": "float32", "use_cache": True, "vocab_size": 48}
    c.update(kw)
    return c


LLAMA_IDS = [1, 17, 40, 5, 33, 41, 17, 40]


def causal(case, seed, description, features, config, weights, ids=LLAMA_IDS, **extra):
    c = {"case": case, "family": config["model_type"], "seed": seed, "description": description,
         "features": features, "config": config, "weights": weights, "inputs": [{"input_ids": ids}],
         "generate": {"prompt": ids[:5], "max_new_tokens": 5}}
    c.update(extra)
    return c


CASES = [
    {
        "case": "gpt2-lm", "family": "gpt2", "seed": 101, "tokenizer": "bpe",
        "description": "GPT2LMHeadModel: `transformer.` prefix, head tied to wte and absent from the file, the "
                       "h.N.attn.bias / attn.masked_bias buffers older checkpoints carry; byte-level BPE tokenizer",
        "features": ["transformer-prefix", "tied-head", "attn-bias-buffers", "conv1d", "gelu_new", "tokenizer-bpe"],
        "config": gpt2_config(vocab_size=len(tkf.bpe_vocab()), bos_token_id=tkf.bpe_vocab()[tkf.BPE_EOS],
                              eos_token_id=tkf.bpe_vocab()[tkf.BPE_EOS]),
        "weights": {"prefix": "transformer.", "buffers": True},
        "inputs": [{"text": tkf.BPE_TEXT, "input_ids": tkf.BPE_IDS}],
        "generate": {"prompt": tkf.BPE_IDS[:4], "max_new_tokens": 4},
    },
    {
        "case": "bert-mlm", "family": "bert", "seed": 202, "tokenizer": "wordpiece",
        "description": "BertForMaskedLM: `bert.` prefix, MLM head (transform + decoder tied to the word embeddings "
                       "+ cls.predictions.bias); input 0 is the tokenizer's sentence, input 1 a sentence pair "
                       "(token types 0/1) with a [MASK] and two padded keys (attention_mask 0)",
        "features": ["bert-prefix", "mlm-head", "tied-decoder", "token-types", "padding-mask", "tokenizer-wordpiece"],
        "config": bert_config(vocab_size=len(tkf.wp_vocab())),
        "weights": {"prefix": "bert.", "mlm": True},
        "inputs": [
            {"text": tkf.WP_TEXT, "input_ids": tkf.wp_ids_by_hand(), "attention_mask": [1] * 8,
             "token_type_ids": [0] * 8},
            # [CLS] the cat [MASK] [SEP] a dog [SEP] [PAD] [PAD]
            {"input_ids": [2, 62, 64, 4, 3, 63, 65, 3, 0, 0],
             "attention_mask": [1] * 8 + [0, 0], "token_type_ids": [0] * 5 + [1] * 3 + [0, 0]},
        ],
    },
    causal("llama-gqa", 303, "LlamaForCausalLM, grouped-query attention (4 query heads, 2 KV heads), tied head",
           ["gqa", "rope-default", "tied-head", "swiglu", "rmsnorm"], llama_config(), {"prefix": "model."}),
    {
        "case": "gpt2-base", "family": "gpt2", "seed": 111,
        "description": "GPT2Model: tensor names without a prefix, no LM head (hidden state and attention only), "
                       "n_inner null (4 * n_embd), no attention buffers",
        "features": ["no-prefix", "no-head", "n_inner-null"],
        "config": gpt2_config(architectures=["GPT2Model"], n_inner=None, vocab_size=48),
        "weights": {"prefix": ""},
        "inputs": [{"input_ids": [3, 40, 7, 7, 21, 0, 47, 12]}],
    },
    {
        "case": "gpt2-inverse-layer-idx", "family": "gpt2", "seed": 121,
        "description": "GPT2LMHeadModel with scale_attn_by_inverse_layer_idx (scores also divided by layer "
                       "index + 1) and layer_norm_epsilon 1e-3",
        "features": ["scale_attn_by_inverse_layer_idx", "layer_norm_epsilon", "tied-head"],
        "config": gpt2_config(scale_attn_by_inverse_layer_idx=True, layer_norm_epsilon=1e-3, vocab_size=48),
        "weights": {"prefix": "transformer."},
        "inputs": [{"input_ids": [3, 40, 7, 7, 21, 0, 47, 12]}],
        "generate": {"prompt": [3, 40, 7, 7], "max_new_tokens": 4},
    },
    {
        "case": "bert-base", "family": "bert", "seed": 212,
        "description": "BertModel: tensor names without a prefix, pooler tensors present (not part of the hidden "
                       "state), no MLM head, no attention_mask or token_type_ids given (all ones / all zeros)",
        "features": ["no-prefix", "no-head", "pooler-present", "default-mask"],
        "config": bert_config(architectures=["BertModel"], vocab_size=40, layer_norm_eps=1e-5),
        "weights": {"prefix": "", "pooler": True},
        "inputs": [{"input_ids": [2, 11, 30, 17, 39, 5, 3]}],
    },
    causal("llama-mqa", 313, "LlamaForCausalLM, multi-query attention (4 query heads, 1 KV head)",
           ["mqa", "tied-head"], llama_config(num_key_value_heads=1), {"prefix": "model."}),
    causal("llama-rope-linear", 323, "LlamaForCausalLM, rope_scaling linear with factor 2, written with the "
           "older `type` key instead of `rope_type`", ["rope-linear", "rope-scaling-type-key"],
           llama_config(rope_scaling={"type": "linear", "factor": 2.0}), {"prefix": "model."}),
    # rope_theta 100 with head_dim 6 gives wavelengths 6.3, 29 and 136 positions: with
    # original_max_position_embeddings 64 and low/high_freq_factor 1/4 (wavelength bounds 64 and 16) there is one
    # frequency kept, one interpolated and one divided by the factor, and all three turn visibly within 8 positions
    causal("llama-rope-llama3", 333, "LlamaForCausalLM, rope_scaling llama3 (factor 8, low_freq_factor 1, "
           "high_freq_factor 4, original_max_position_embeddings 64, rope_theta 100: one frequency in each regime)",
           ["rope-llama3", "rope_theta"],
           llama_config(rope_theta=100.0, rope_scaling={"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                        "high_freq_factor": 4.0, "original_max_position_embeddings": 64}), {"prefix": "model."}),
    causal("llama-untied", 343, "LlamaForCausalLM with its own lm_head.weight (tie_word_embeddings false) and the "
           "self_attn.rotary_emb.inv_freq buffers older checkpoints carry (to be skipped)",
           ["untied-head", "inv_freq-buffers"], llama_config(tie_word_embeddings=False),
           {"prefix": "model.", "lm_head": True, "inv_freq": True}),
    causal("llama-biases", 383, "LlamaForCausalLM with attention_bias (q, k, v and o_proj biases) and mlp_bias "
           "(gate, up, down biases)", ["attention_bias", "mlp_bias"],
           llama_config(attention_bias=True, mlp_bias=True), {"prefix": "model."}),
    causal("llama-f16", 353, "LlamaForCausalLM stored in F16 (torch_dtype float16); the reference runs on the "
           "F16 values widened", ["dtype-f16"], llama_config(torch_dtype="float16"), {"prefix": "model."}),
    causal("llama-bf16", 363, "LlamaForCausalLM stored in BF16 (torch_dtype bfloat16); the reference runs on the "
           "BF16 values widened", ["dtype-bf16"], llama_config(torch_dtype="bfloat16"), {"prefix": "model."}),
    causal("llama-sharded", 373, "LlamaForCausalLM in two shards with model.safetensors.index.json",
           ["sharded"], llama_config(), {"prefix": "model."}, shards=2),
    causal("mistral-window", 403, "MistralForCausalLM, sliding_window 3 < 8 tokens (each query sees itself and "
           "the 2 keys before it), untied head", ["sliding-window", "untied-head"], mistral_config(),
           {"prefix": "model.", "lm_head": True}),
    causal("qwen2-bias-nowindow", 503, "Qwen2ForCausalLM: q/k/v biases (none on o_proj); sliding_window 3 is set "
           "but use_sliding_window is false, so every layer attends fully", ["qkv-bias", "window-off"],
           qwen2_config(), {"prefix": "model."}),
    causal("qwen2-window-layers", 513, "Qwen2ForCausalLM, use_sliding_window true, sliding_window 3, "
           "max_window_layers 1 of 3 layers: layer 0 attends fully, layers 1 and 2 through the window",
           ["qkv-bias", "sliding-window", "max_window_layers"],
           qwen2_config(use_sliding_window=True, num_hidden_layers=3), {"prefix": "model."}),
    causal("qwen3-qknorm", 603, "Qwen3ForCausalLM: q_norm / k_norm (RMSNorm over head_dim before RoPE), "
           "head_dim 8 with hidden 24 and 4 heads (4 * 8 != 24)", ["qk-norm", "head_dim-explicit", "gqa"],
           qwen3_config(), {"prefix": "model."}),
    causal("gemma-mqa", 703, "GemmaForCausalLM: RMSNorm by (1 + weight), embeddings times sqrt(24) as float32, "
           "GeGLU from hidden_activation gelu_pytorch_tanh (hidden_act \"gelu\" ignored, as in the 1.1 configs), "
           "multi-query attention, head_dim 8 with hidden 24 and 4 heads, tied head",
           ["gemma-norm", "embed-scale", "geglu", "mqa", "head_dim-explicit", "tied-head"],
           gemma_config(), {"prefix": "model."}),
    causal("gemma-legacy-act", 713, "GemmaForCausalLM as the first configs: hidden_act \"gelu\" and no "
           "hidden_activation (GemmaMLP runs the tanh GELU), grouped-query attention, attention_bias, untied lm_head",
           ["hidden_act-legacy", "gqa", "attention_bias", "untied-head"],
           {k: v for k, v in gemma_config(num_key_value_heads=2, attention_bias=True, tie_word_embeddings=False).items()
            if k != "hidden_activation"}, {"prefix": "model.", "lm_head": True}),
    causal("gemma2-softcap", 803, "Gemma2ForCausalLM: the four sandwich norms, attn_logit_softcapping 3 and "
           "final_logit_softcapping 5 (both active on these scores and logits), query_pre_attn_scalar 12 (not "
           "head_dim 8), layers 0 and 2 sliding (window 3) and layer 1 global by Gemma2Config's rule",
           ["sandwich-norms", "attn-softcap", "final-softcap", "query_pre_attn_scalar", "sliding-window-alternating"],
           gemma2_config(), {"prefix": "model."}),
    causal("gemma2-defaults", 813, "Gemma2ForCausalLM: attn_logit_softcapping null (no capping), "
           "final_logit_softcapping absent (the class's 30), layer_types given (layer 0 global, layer 1 sliding: the "
           "reverse of the rule), multi-query attention, untied lm_head",
           ["attn-softcap-null", "final-softcap-default", "layer_types", "mqa", "untied-head"],
           {k: v for k, v in gemma2_config(attn_logit_softcapping=None, num_hidden_layers=2, num_key_value_heads=1,
                                           layer_types=["full_attention", "sliding_attention"],
                                           tie_word_embeddings=False).items() if k != "final_logit_softcapping"},
           {"prefix": "model.", "lm_head": True}),
    causal("gemma3-pattern", 903, "Gemma3ForCausalLM: q_norm / k_norm by (1 + weight), sliding_window_pattern 3 "
           "(layers 0, 1 and 3 sliding with window 3, layer 2 global), rope_local_base_freq 100 on the sliding "
           "layers, rope_theta 10000 with rope_scaling linear (factor 4) on the global one, multi-query attention",
           ["qk-norm", "sliding_window_pattern", "rope_local_base_freq", "rope-linear-global", "mqa"],
           gemma3_text_config(rope_scaling={"rope_type": "linear", "factor": 4.0}), {"prefix": "model."}),
    causal("gemma3-bf16", 913, "Gemma3ForCausalLM stored in BF16 as google/gemma-3-1b is: layer_types given "
           "(sliding, global), no sliding_window_pattern, attn_logit_softcapping 3 and final_logit_softcapping 5 set, "
           "grouped-query attention, rope_theta absent (the class's 1e6)",
           ["dtype-bf16", "layer_types", "attn-softcap", "final-softcap", "rope_theta-default", "gqa"],
           {k: v for k, v in gemma3_text_config(torch_dtype="bfloat16", num_hidden_layers=2, num_key_value_heads=2,
                                                layer_types=["sliding_attention", "full_attention"],
                                                attn_logit_softcapping=3.0, final_logit_softcapping=5.0).items()
            if k not in ("sliding_window_pattern", "rope_theta")}, {"prefix": "model."}),
    causal("gpt-neox-parallel", 703, "GPTNeoXForCausalLM as Pythia: `gpt_neox.` prefix, parallel residual, rotary_pct "
           "0.25 (4 of 16 features rotate), query_key_value rows [heads, 3, head_size], LayerNorm with biases, GELU, "
           "untied embed_out, the attention.bias / masked_bias / rotary_emb.inv_freq buffers (to be skipped)",
           ["parallel-residual", "rotary_pct", "per-head-qkv", "untied-head", "layernorm-bias", "gelu", "neox-buffers"],
           gpt_neox_config(), {"prefix": "gpt_neox.", "lm_head": True, "buffers": True}),
    causal("gpt-neox-sequential", 713, "GPTNeoXForCausalLM with use_parallel_residual false (attention, then the "
           "MLP on its sum), rotary_pct 0.5 with rotary_emb_base 100, attention_bias false, 3 heads of 8",
           ["sequential-residual", "rotary_pct", "rotary_emb_base", "attention_bias-false"],
           gpt_neox_config(use_parallel_residual=False, rotary_pct=0.5, rotary_emb_base=100, attention_bias=False,
                           hidden_size=24, num_attention_heads=3), {"prefix": "gpt_neox.", "lm_head": True}),
    causal("gpt2-lm-noprefix", 131, "GPT2LMHeadModel saved as openai-community/gpt2's own model.safetensors: no "
           "`transformer.` prefix (h.0.attn.c_attn.weight, wte.weight), architectures GPT2LMHeadModel, so the head is "
           "tied to wte", ["no-prefix", "tied-head", "architectures-head"],
           gpt2_config(vocab_size=48), {"prefix": ""}, ids=[3, 40, 7, 7, 21, 0, 47, 12]),
    causal("phi3-fused", 803, "Phi3ForCausalLM as Phi-3-mini: qkv_proj (q | k | v rows, 4 query heads and 2 KV heads "
           "of 8) and gate_up_proj (gate rows first) fused, no biases, sliding_window 5 on every layer, untied head",
           ["fused-qkv", "fused-gate-up", "gqa", "sliding-window", "untied-head"], phi3_config(),
           {"prefix": "model.", "lm_head": True}),
    # 6 of 8 features of each head rotate (partial_rotary_factor 0.75: 3 frequencies); inputs of 5 and 8 tokens on
    # either side of original_max_position_embeddings 6 (short_factor, then long_factor, with the attention factor
    # sqrt(1 + ln(4096 / 6) / ln 6) = 2.15 on cos and sin), and greedy decoding from 5 tokens crosses it: at the 7th
    # position every earlier key changes, so a decoder that kept its cache there gives other tokens
    causal("phi3-longrope-partial", 813, "Phi3ForCausalLM as Phi-4-mini: partial_rotary_factor 0.75, rope_scaling "
           "longrope (short_factor below original_max_position_embeddings 6, long_factor above, attention factor from "
           "max_position_embeddings 4096 / 6), no sliding window, tied head",
           ["partial_rotary_factor", "rope-longrope", "tied-head"],
           phi3_config(partial_rotary_factor=0.75, max_position_embeddings=4096, original_max_position_embeddings=6,
                       sliding_window=None, tie_word_embeddings=True,
                       rope_scaling={"type": "longrope", "short_factor": [1.0, 1.5, 2.0],
                                     "long_factor": [0.25, 0.5, 4.0]}),
           {"prefix": "model."}, inputs=[{"input_ids": LLAMA_IDS[:5]}, {"input_ids": LLAMA_IDS}]),
    causal("olmo2-outnorm", 903, "Olmo2ForCausalLM: no norm on a sublayer's input, post_attention_layernorm and "
           "post_feedforward_layernorm on the sublayers' outputs before each residual sum; q_norm / k_norm RMSNorms "
           "over the whole q (4 heads of 6) and k (2 heads) projections before RoPE; untied head",
           ["output-norms", "qk-norm-whole", "gqa", "untied-head"], olmo2_config(),
           {"prefix": "model.", "lm_head": True}),
    causal("olmo2-bias-tied", 913, "Olmo2ForCausalLM with attention_bias (q, k, v and o_proj biases) and a tied "
           "head", ["attention_bias", "tied-head", "output-norms", "qk-norm-whole"],
           olmo2_config(attention_bias=True, tie_word_embeddings=True, rope_theta=10000.0), {"prefix": "model."}),
    causal("gpt-neox-bf16", 723, "GPTNeoXForCausalLM stored in BF16 (torch_dtype bfloat16), as Pythia's deduped "
           "checkpoints; the reference runs on the BF16 values widened", ["dtype-bf16"],
           gpt_neox_config(torch_dtype="bfloat16"), {"prefix": "gpt_neox.", "lm_head": True}),
    causal("phi3-f16", 823, "Phi3ForCausalLM stored in F16 (torch_dtype float16); the reference runs on the F16 "
           "values widened", ["dtype-f16"], phi3_config(torch_dtype="float16"), {"prefix": "model.", "lm_head": True}),
]


# ---- Encoder-decoders (hf_reference.seq2seq_forward): tests/fixtures/hf/seq2seq-cases.json lists them ------------

def bart_config(**kw):
    # configuration_bart.BartConfig's fields; encoder and decoder with different heads and widths on purpose
    c = {"architectures": ["BartForConditionalGeneration"], "model_type": "bart", "activation_dropout": 0.0,
         "activation_function": "gelu", "attention_dropout": 0.0, "bos_token_id": 0, "classifier_dropout": 0.0,
         "d_model": 16, "decoder_attention_heads": 4, "decoder_ffn_dim": 32, "decoder_layerdrop": 0.0,
         "decoder_layers": 2, "decoder_start_token_id": 2, "dropout": 0.1, "encoder_attention_heads": 2,
         "encoder_ffn_dim": 24, "encoder_layerdrop": 0.0, "encoder_layers": 2, "eos_token_id": 2,
         "forced_eos_token_id": 2, "init_std": 0.02, "is_encoder_decoder": True, "max_position_embeddings": 16,
         "num_hidden_layers": 2, "pad_token_id": 1, "scale_embedding": False, "torch_dtype": "float32",
         "use_cache": True, "vocab_size": 48}
    c.update(kw)
    return c


def marian_config(**kw):
    # configuration_marian.MarianConfig's fields as Helsinki-NLP's opus-mt configs write them (pad = decoder start)
    c = {"architectures": ["MarianMTModel"], "model_type": "marian", "activation_dropout": 0.0,
         "activation_function": "swish", "attention_dropout": 0.0, "bad_words_ids": [[47]], "bos_token_id": 0,
         "classifier_dropout": 0.0, "d_model": 16, "decoder_attention_heads": 2, "decoder_ffn_dim": 32,
         "decoder_layerdrop": 0.0, "decoder_layers": 2, "decoder_start_token_id": 47, "decoder_vocab_size": 48,
         "dropout": 0.1, "encoder_attention_heads": 2, "encoder_ffn_dim": 32, "encoder_layerdrop": 0.0,
         "encoder_layers": 2, "eos_token_id": 0, "forced_eos_token_id": 0, "init_std": 0.02,
         "is_encoder_decoder": True, "max_length": 512, "max_position_embeddings": 32, "normalize_embedding": False,
         "num_beams": 4, "num_hidden_layers": 2, "pad_token_id": 47, "scale_embedding": True,
         "share_encoder_decoder_embeddings": True, "static_position_embeddings": True, "torch_dtype": "float32",
         "use_cache": True, "vocab_size": 48}
    c.update(kw)
    return c


def t5_config(**kw):
    # configuration_t5.T5Config's fields (dense_act_fn and is_gated_act are derived from feed_forward_proj, and
    # saved); 8 buckets up to distance 20, so 7 source tokens reach the logarithmic buckets in both directions
    c = {"architectures": ["T5ForConditionalGeneration"], "model_type": "t5", "classifier_dropout": 0.0, "d_ff": 24,
         "d_kv": 6, "d_model": 16, "decoder_start_token_id": 0, "dense_act_fn": "relu", "dropout_rate": 0.1,
         "eos_token_id": 1, "feed_forward_proj": "relu", "initializer_factor": 1.0, "is_encoder_decoder": True,
         "is_gated_act": False, "layer_norm_epsilon": 1e-6, "num_decoder_layers": 2, "num_heads": 3,
         "num_layers": 2, "pad_token_id": 0, "relative_attention_max_distance": 20,
         "relative_attention_num_buckets": 8, "tie_word_embeddings": True, "torch_dtype": "float32",
         "use_cache": True, "vocab_size": 48}
    c.update(kw)
    return c


def seq2seq(case, seed, description, features, config, weights, source, target, **extra):
    c = {"case": case, "family": config["model_type"], "seed": seed, "description": description,
         "features": features, "config": config, "weights": weights,
         "inputs": [{"source_ids": source, "target_ids": target}], "translate": {"max_steps": 6}}
    c.update(extra)
    return c


SOURCE_IDS = [5, 17, 40, 3, 33, 41, 17, 40, 9, 2]
SEQ2SEQ_CASES = [
    seq2seq("bart-cg", 707, "BartForConditionalGeneration: `model.` prefix, learned positions from row 2, "
            "layernorm_embedding, post-LayerNorm, encoder with 2 heads and decoder with 4, head tied to `shared` "
            "plus final_logits_bias [1, vocab]; the tied embed_tokens saved too (older save_pretrained); "
            "byte-level BPE tokenizer", ["bart", "learned-positions-offset", "layernorm_embedding", "post-norm",
                                         "final_logits_bias", "tied-head", "tokenizer-bpe"],
            bart_config(vocab_size=len(tkf.bpe_vocab()), bos_token_id=tkf.bpe_vocab()[tkf.BPE_EOS],
                        eos_token_id=tkf.bpe_vocab()[tkf.BPE_EOS], forced_eos_token_id=tkf.bpe_vocab()[tkf.BPE_EOS],
                        decoder_start_token_id=tkf.bpe_vocab()[tkf.BPE_EOS]),
            {"prefix": "model.", "embed_tokens": True}, tkf.BPE_IDS, [tkf.bpe_vocab()[tkf.BPE_EOS], 266, 261, 263, 9],
            tokenizer="bpe", text=tkf.BPE_TEXT),
    seq2seq("bart-scaled", 714, "BartForConditionalGeneration with scale_embedding (embeddings times sqrt(16)) "
            "and activation_function relu; only model.shared.weight saved", ["scale_embedding", "relu"],
            bart_config(scale_embedding=True, activation_function="relu"), {"prefix": "model."}, SOURCE_IDS,
            [2, 30, 7, 44, 12]),
    seq2seq("marian-mt", 808, "MarianMTModel: sinusoidal positions (not stored), scale_embedding, swish, shared "
            "embeddings tied to the head, final_logits_bias; decoder start = pad; SentencePiece files only "
            "(source.spm, target.spm, vocab.json): no tokenizer.json", ["marian", "sinusoidal-positions",
                                                                       "scale_embedding", "final_logits_bias",
                                                                       "spm-only"],
            marian_config(), {"prefix": "model."}, SOURCE_IDS, [47, 30, 7, 44, 12], spm=True),
    seq2seq("marian-positions-saved", 811, "MarianMTModel whose file holds the embed_positions tables older "
            "transformers saved (skipped: recomputed), max_position_embeddings 24",
            ["sinusoidal-positions-saved"], marian_config(max_position_embeddings=24),
            {"prefix": "model.", "positions": True}, SOURCE_IDS, [47, 30, 7, 44, 12]),
    seq2seq("t5-relu", 908, "T5ForConditionalGeneration (v1.0): relative buckets (8, max_distance 20; "
            "bidirectional in the encoder, causal in the decoder, from block 0), no score scaling, T5LayerNorm, "
            "ReLU, tied head with the d_model ** -0.5 rescale, d_kv 6 x 3 heads != d_model 16; Unigram tokenizer "
            "(Metaspace, </s> appended)",
            ["t5", "relative-buckets", "rmsnorm", "relu", "tied-head-rescale", "tokenizer-unigram"], t5_config(), {},
            tkf.UNI_IDS, [0, 30, 7, 44, 12, 7, 19], tokenizer="unigram", text=tkf.UNI_TEXT),
    seq2seq("t5-gated", 911, "T5ForConditionalGeneration (v1.1): gated-gelu (gelu_new), untied lm_head (no "
            "rescale), 3 decoder layers over 2 encoder layers, layer_norm_epsilon 1e-5",
            ["gated-gelu", "untied-head", "num_decoder_layers"],
            t5_config(feed_forward_proj="gated-gelu", dense_act_fn="gelu_new", is_gated_act=True,
                      tie_word_embeddings=False, num_decoder_layers=3, layer_norm_epsilon=1e-5),
            {"lm_head": True}, SOURCE_IDS, [0, 30, 7, 44, 12, 7, 19]),
]
