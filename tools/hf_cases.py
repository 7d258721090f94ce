#!/usr/bin/python3
"""The cases of tests/fixtures/hf/: each a config.json as Hugging Face's config classes write it, how to lay out the
weights, the inputs and the features it exercises (make_hf_checkpoints.py turns them into files)."""

import hf_tokenizer_files as tkf


def gpt2_config(**kw):
    # configuration_gpt2.GPT2Config's fields, with tiny sizes
    c = {"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "activation_function": "gelu_new",
         "attn_pdrop": 0.1, "bos_token_id": 0, "embd_pdrop": 0.1, "eos_token_id": 0, "initializer_range": 0.02,
         "layer_norm_epsilon": 1e-5, "n_ctx": 12, "n_embd": 16, "n_head": 2, "n_inner": 32, "n_layer": 2,
         "n_positions": 12, "reorder_and_upcast_attn": False, "resid_pdrop": 0.1,
         "scale_attn_by_inverse_layer_idx": False, "scale_attn_weights": True, "summary_activation": None,
         "summary_first_dropout": 0.1, "summary_proj_to_labels": True, "summary_type": "cls_index",
         "summary_use_proj": True, "torch_dtype": "float32", "use_cache": True, "vocab_size": 64}
    c.update(kw)
    return c


def bert_config(**kw):
    # configuration_bert.BertConfig's fields
    c = {"architectures": ["BertForMaskedLM"], "model_type": "bert", "attention_probs_dropout_prob": 0.1,
         "classifier_dropout": None, "hidden_act": "gelu", "hidden_dropout_prob": 0.1, "hidden_size": 16,
         "initializer_range": 0.02, "intermediate_size": 32, "layer_norm_eps": 1e-12, "max_position_embeddings": 16,
         "num_attention_heads": 2, "num_hidden_layers": 2, "pad_token_id": 0, "position_embedding_type": "absolute",
         "torch_dtype": "float32", "type_vocab_size": 2, "use_cache": True, "vocab_size": 64}
    c.update(kw)
    return c


def llama_config(**kw):
    # configuration_llama.LlamaConfig's fields
    c = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "attention_bias": False,
         "attention_dropout": 0.0, "bos_token_id": 1, "eos_token_id": 2, "head_dim": 6, "hidden_act": "silu",
         "hidden_size": 24, "initializer_range": 0.02, "intermediate_size": 32, "max_position_embeddings": 64,
         "mlp_bias": False, "num_attention_heads": 4, "num_hidden_layers": 2, "num_key_value_heads": 2,
         "pretraining_tp": 1, "rms_norm_eps": 1e-6, "rope_scaling": None, "rope_theta": 10000.0,
         "tie_word_embeddings": True, "torch_dtype": "float32", "use_cache": True, "vocab_size": 64}
    c.update(kw)
    return c


LLAMA_IDS = [1, 17, 60, 5, 33, 41, 17, 60, 22]
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
    {
        "case": "llama-gqa", "family": "llama", "seed": 303,
        "description": "LlamaForCausalLM, grouped-query attention (4 query heads, 2 KV heads), tied head",
        "features": ["gqa", "rope-default", "tied-head", "swiglu", "rmsnorm"],
        "config": llama_config(),
        "weights": {"prefix": "model."},
        "inputs": [{"input_ids": LLAMA_IDS}],
        "generate": {"prompt": LLAMA_IDS[:5], "max_new_tokens": 5},
    },
]
