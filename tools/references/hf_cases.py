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
