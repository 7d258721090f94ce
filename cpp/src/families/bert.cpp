// BERT (HF configuration_bert.py; modeling_bert.py's BertEmbeddings, BertSelfAttention, BertLayer,
// BertLMPredictionHead): word + position + token-type embeddings and their LayerNorm, post-LayerNorm blocks, every
// token seeing every other, and the masked-LM head (a transform, then the decoder tied to the word embeddings).
#include <cmath>

#include "common.hpp"

namespace attnscope {
namespace families {
namespace {

using model::Part;

plan::Plan read(const Config& f)
{
    refuse_unsupported(f);
    plan::Plan p;
    p.family = "bert";
    p.kind = plan::Kind::encoder;
    const std::size_t vocab = f.size("vocab_size", 30522, 1, Limits::vocab);
    const std::size_t d = f.size("hidden_size", 768, 1, Limits::width);
    const std::size_t layers = f.size("num_hidden_layers", 12, 1, Limits::layers);
    const std::size_t heads = f.size("num_attention_heads", 12, 1, Limits::heads);
    check_divides(f, "num_attention_heads", heads, "hidden_size", d);  // attention_head_size
    const std::size_t inner = f.size("intermediate_size", 3072, 1, Limits::inner);
    const plan::Activation act = activation(f, "hidden_act", "gelu");  // also the MLM transform's transform_act_fn
    const std::size_t positions = f.size("max_position_embeddings", 512, 1, Limits::positions);
    const std::size_t types = f.size("type_vocab_size", 2, 1, Limits::token_types);  // token_type_embeddings rows
    const plan::Norm norm = layer_norm(float(f.real("layer_norm_eps", 1e-12, 0, 1)));
    // BertLMPredictionHead.decoder is tied to word_embeddings (tie_word_embeddings defaults to true).
    f.require_flag("tie_word_embeddings", true, "an untied MLM decoder is not read");
    const std::string pos = f.text("position_embedding_type", "absolute");
    if (pos != "absolute") f.fail({"position_embedding_type: \"", pos, "\" is not supported (only \"absolute\")"});
    f.require_flag("is_decoder", false, "BERT as a causal decoder is not implemented");

    plan::Layer layer;
    plan::Attention& a = layer.self;
    a.heads = a.kv_heads = heads;
    a.head_dim = d / heads;
    a.input_width = d;
    a.scale = float(1.0 / std::sqrt(double(a.head_dim)));
    a.qkv_bias = a.out_bias = true;
    layer.attn_norms.after = norm;  // BertSelfOutput: LayerNorm(hidden + input)
    layer.mlp = {false, act, inner, true};
    layer.mlp_norms.after = norm;   // BertOutput

    plan::Stack s;
    s.embedding = {vocab, d, 0, 1.f, plan::Positions::learned, positions, 0, types, norm};
    s.max_positions = positions;
    uniform_layers(s, layer, layers);
    p.stacks.push_back(std::move(s));
    p.head.present = true;
    p.head.tied = true;
    p.head.bias = true;
    p.head.vocab = vocab;
    p.head.mlm_transform = true;
    p.head.mlm_activation = act;
    p.head.mlm_norm = norm;
    return p;
}

// BertModel: embeddings (word, position, token_type, LayerNorm), encoder.layer.N (attention.self.query/key/value,
// attention.output.dense + LayerNorm, intermediate.dense, output.dense + LayerNorm); BertOnlyMLMHead outside it.
constexpr TensorName tensors[] = {
    {"embeddings.word_embeddings.weight", Part::token_embedding},
    {"embeddings.position_embeddings.weight", Part::position_embedding},
    {"embeddings.token_type_embeddings.weight", Part::type_embedding},
    {"embeddings.LayerNorm.weight", Part::embed_norm},
    {"embeddings.LayerNorm.bias", Part::embed_norm_bias},
    {"encoder.layer.{}.attention.self.query.weight", Part::q},
    {"encoder.layer.{}.attention.self.query.bias", Part::q_bias},
    {"encoder.layer.{}.attention.self.key.weight", Part::k},
    {"encoder.layer.{}.attention.self.key.bias", Part::k_bias},
    {"encoder.layer.{}.attention.self.value.weight", Part::v},
    {"encoder.layer.{}.attention.self.value.bias", Part::v_bias},
    {"encoder.layer.{}.attention.output.dense.weight", Part::o},
    {"encoder.layer.{}.attention.output.dense.bias", Part::o_bias},
    {"encoder.layer.{}.attention.output.LayerNorm.weight", Part::attn_after},
    {"encoder.layer.{}.attention.output.LayerNorm.bias", Part::attn_after_bias},
    {"encoder.layer.{}.intermediate.dense.weight", Part::up},
    {"encoder.layer.{}.intermediate.dense.bias", Part::up_bias},
    {"encoder.layer.{}.output.dense.weight", Part::down},
    {"encoder.layer.{}.output.dense.bias", Part::down_bias},
    {"encoder.layer.{}.output.LayerNorm.weight", Part::mlp_after},
    {"encoder.layer.{}.output.LayerNorm.bias", Part::mlp_after_bias},
    // BertOnlyMLMHead: transform (dense, act, LayerNorm), then the tied decoder plus cls.predictions.bias.
    {"cls.predictions.transform.dense.weight", Part::mlm_dense, 0, model::Layout::standard, Group::mlm_head},
    {"cls.predictions.transform.dense.bias", Part::mlm_dense_bias, 0, model::Layout::standard, Group::mlm_head},
    {"cls.predictions.transform.LayerNorm.weight", Part::mlm_norm, 0, model::Layout::standard, Group::mlm_head},
    {"cls.predictions.transform.LayerNorm.bias", Part::mlm_norm_bias, 0, model::Layout::standard, Group::mlm_head},
    {"cls.predictions.bias", Part::head_bias, 0, model::Layout::standard, Group::mlm_head},
    // BertLMPredictionHead: `self.decoder.bias = self.bias`, so a file may hold this name, the other, or both.
    {"cls.predictions.decoder.bias", Part::head_bias, 0, model::Layout::standard, Group::mlm_head, 25},
};
// BertForMaskedLM saves BertModel as `bert.`.
constexpr const char* prefixes[] = {"bert.", nullptr};
// BertEmbeddings.position_ids (a buffer), BertPooler, BertForPreTraining's next-sentence head, and the decoder weight
// that HF ties to word_embeddings on load whatever the file holds.
constexpr const char* ignored[] = {"embeddings.position_ids", "pooler.dense.weight", "pooler.dense.bias",
                                   "cls.seq_relationship.weight", "cls.seq_relationship.bias",
                                   "cls.predictions.decoder.weight", nullptr};
constexpr Architecture architectures[] = {{"BertForMaskedLM", true}, {"BertForPreTraining", true}, {"BertModel", false},
                                          {nullptr, false}};

}  // namespace

extern const Family bert_family{"bert", "BERT", read, tensors, std::size(tensors), prefixes, ignored, architectures};

}  // namespace families
}  // namespace attnscope
