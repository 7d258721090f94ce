// Our two models' C++ API (attnscope/transformer.hpp): a Transformer of the decoder_lm or seq2seq family, its state
// dict named by the family's tensor table (checked against the plan before the parameters are allocated, then loaded
// strictly), and the argument checks of its calls, whose messages the JS API shows. The pass is the one every model runs.
#include <stdexcept>

#include "../families/ours.hpp"
#include "../json.hpp"
#include "../state_dict.hpp"
#include "pass.hpp"
#include "scatter.hpp"

namespace attnscope {
namespace {

using families::Family;
using families::TensorName;

const Family& family_of(const void* f) { return *static_cast<const Family*>(f); }

std::string layer_name(const char* pattern, std::size_t layer)
{
    const std::string_view p = pattern;
    const std::size_t hole = p.find("{}");
    if (hole == std::string_view::npos) return std::string(p);
    return json::join({p.substr(0, hole), json::Num(layer), p.substr(hole + 2)});
}

struct Key {
    std::string name;
    std::size_t row, layer;
};

// Every tensor of the state dict in the order the training code registers them: a stack's tables, then its layers one
// by one (each layer's rows of the table in order), then what follows. Rows the plan has no place for are left out.
std::vector<Key> keys_of(const Family& f, const plan::Plan& p, model::Weights& w)
{
    std::vector<Key> keys;
    for (std::size_t r = 0; r < f.tensor_count;) {
        const TensorName& t = f.tensors[r];
        if (!model::per_layer(t.part)) {
            if (model::destination_of(p, w, t.part, t.stack, 0, t.layout).exists()) keys.push_back({t.pattern, r, 0});
            ++r;
            continue;
        }
        std::size_t end = r;
        while (end < f.tensor_count && model::per_layer(f.tensors[end].part) && f.tensors[end].stack == t.stack) ++end;
        for (std::size_t l = 0; l < p.stacks[t.stack].layers(); ++l)
            for (std::size_t b = r; b < end; ++b) {
                const TensorName& row = f.tensors[b];
                if (model::destination_of(p, w, row.part, row.stack, l, row.layout).exists()) keys.push_back({layer_name(row.pattern, l), b, l});
            }
        r = end;
    }
    return keys;
}

// The shapes the config implies, checked against `state` before any parameter exists (ParameterRegistry::expect's
// messages): each stack's last layer first, so a config claiming a million layers is refused by the first tensor it
// lacks, without declaring them. The shapes come from a plan of one layer per stack (every layer of our stacks is
// alike).
void expect(const Family& f, const plan::Plan& p, const std::map<std::string, TensorView>& state)
{
    plan::Plan one = p;
    for (plan::Stack& s : one.stacks) s.kind_of.assign(1, s.kind_of.back());
    model::Weights w;
    model::declare_weights(one, w, false);
    const auto check = [&](const std::string& name, const TensorName& row) {
        const Shape shape = model::destination_of(one, w, row.part, row.stack, 0, row.layout).shape;
        const auto it = state.find(name);
        if (it == state.end())
            detail::model_error("the config implies a tensor '" + name + "' of shape " + to_string(shape) + ", which is missing");
        if (it->second.shape != shape)
            detail::model_error("the config implies shape " + to_string(shape) + " for '" + name + "', got " + to_string(it->second.shape));
    };
    std::vector<std::uint8_t> last_checked(p.stacks.size(), 0);
    for (std::size_t r = 0; r < f.tensor_count; ++r) {
        const TensorName& row = f.tensors[r];
        // Refused by name, not left to the strict load's "unexpected key": the file says why the tensor is wrong.
        if (row.part == model::Part::head && p.head.tied && state.count(row.pattern))
            detail::model_error("'" + std::string(row.pattern) + "' is in the state dict, but tie_head is true: the head's weight is the "
                                "token embedding, and a tied model has only 'head.bias'");
        const bool layered = model::per_layer(row.part);
        if (layered && !last_checked[row.stack]) {  // a stack's blocks begin: its last layer first
            check(layer_name(row.pattern, p.stacks[row.stack].layers() - 1), row);
            last_checked[row.stack] = 1;
        }
        if (!model::destination_of(one, w, row.part, row.stack, 0, row.layout).exists()) continue;
        const std::size_t layers = layered ? p.stacks[row.stack].layers() : 1;
        for (std::size_t l = 0; l < layers; ++l) check(layer_name(row.pattern, l), row);
    }
}

}  // namespace

StateDictModel::~StateDictModel() = default;
TrainedModel::~TrainedModel() = default;

TrainedModel::TrainedModel(const char* family, plan::Plan p, const std::map<std::string, TensorView>* state)
    : family_(families::find_family(family))
{
    model::validate_plan(p);
    if (state) expect(family_of(family_), p, *state);
    auto impl = std::make_unique<Transformer::Impl>();
    impl->plan = std::move(p);
    model::declare_weights(impl->plan, impl->weights, true);
    impl->config = model::summary(impl->plan, true);
    impl->parameter_bytes = 4 * model::weight_floats(impl->weights);
    model_ = std::make_unique<Transformer>(std::move(impl));
    if (state) load_state_dict(*state);
}

std::vector<std::string> TrainedModel::state_dict_keys() const
{
    Transformer::Impl& m = model_->impl();
    std::vector<std::string> names;
    for (Key& k : keys_of(family_of(family_), m.plan, m.weights)) names.push_back(std::move(k.name));
    return names;
}

Shape TrainedModel::state_dict_shape(const std::string& key) const
{
    Transformer::Impl& m = model_->impl();
    const Family& f = family_of(family_);
    for (std::size_t r = 0; r < f.tensor_count; ++r) {
        std::size_t layer = 0;
        const TensorName& row = f.tensors[r];
        if (!families::match_name(row.pattern, key, layer)) continue;
        const model::Destination d = model::destination_of(m.plan, m.weights, row.part, row.stack, layer, row.layout);
        if (d.exists()) return d.shape;
    }
    const std::vector<Key> keys = keys_of(f, m.plan, m.weights);
    detail::model_error("load_state_dict: unexpected key '" + key + "' (the model has " + std::to_string(keys.size()) +
                        " keys such as '" + keys.front().name + "')");
}

void TrainedModel::load_state_dict(const std::map<std::string, TensorView>& state)
{
    Transformer::Impl& m = model_->impl();
    const Family& f = family_of(family_);
    for (const auto& entry : state) {
        const Shape expected = state_dict_shape(entry.first);
        if (entry.second.shape != expected)
            detail::model_error("load_state_dict: '" + entry.first + "': expected shape " + to_string(expected) + ", got " +
                                to_string(entry.second.shape));
        if (!entry.second.data) detail::model_error("load_state_dict: '" + entry.first + "': data is null");
    }
    const std::vector<Key> keys = keys_of(f, m.plan, m.weights);
    for (const Key& k : keys)
        if (!state.count(k.name)) detail::model_error("load_state_dict: missing key '" + k.name + "' of shape " + to_string(state_dict_shape(k.name)));
    for (const Key& k : keys) {
        const TensorName& row = f.tensors[k.row];
        const TensorView& v = state.at(k.name);
        const model::Destination d = model::destination_of(m.plan, m.weights, row.part, row.stack, k.layer, row.layout);
        model::scatter(d, 0, v.data, checked_numel(v.shape, "load_state_dict"));
    }
}

namespace {

plan::Plan checked(const LanguageModelConfig& c)
{
    detail::check_sizes("LanguageModel", {{"vocab_size", c.vocab_size}, {"max_len", c.max_len}, {"d_model", c.d_model},
                                          {"num_heads", c.num_heads}, {"d_ff", c.d_ff}, {"num_layers", c.num_layers}},
                        c.d_model, c.num_heads);
    return families::language_model_plan(c);
}

plan::Plan checked(const Seq2SeqModelConfig& c)
{
    detail::check_sizes("Seq2SeqModel", {{"src_vocab_size", c.src_vocab_size}, {"tgt_vocab_size", c.tgt_vocab_size},
                                         {"max_src_len", c.max_src_len}, {"max_tgt_len", c.max_tgt_len}, {"d_model", c.d_model},
                                         {"num_heads", c.num_heads}, {"d_ff", c.d_ff}, {"num_encoder_layers", c.num_encoder_layers},
                                         {"num_decoder_layers", c.num_decoder_layers}},
                        c.d_model, c.num_heads);
    return families::seq2seq_plan(c);
}

void check_ablation(const char* call, const Seq2SeqAblation& a, const Seq2SeqModelConfig& c)
{
    const std::string name = std::string(call) + ": ablate";
    detail::check_head_mask((name + ".encoder_self").c_str(), a.encoder_self, c.num_encoder_layers, c.num_heads);
    detail::check_head_mask((name + ".decoder_self").c_str(), a.decoder_self, c.num_decoder_layers, c.num_heads);
    detail::check_head_mask((name + ".decoder_cross").c_str(), a.decoder_cross, c.num_decoder_layers, c.num_heads);
}

Transformer::Request seq2seq_request(const char* call, const std::vector<std::int32_t>& source, const std::vector<std::int32_t>& target,
                                     const Seq2SeqAblation& a)
{
    Transformer::Request r;
    r.call = call;
    r.source = source;
    r.tokens = target;
    r.ablate = a.decoder_self;
    r.ablate_cross = a.decoder_cross;
    r.ablate_encoder = a.encoder_self;
    return r;
}

}  // namespace

LanguageModel::LanguageModel(const LanguageModelConfig& c) : TrainedModel("decoder_lm", checked(c), nullptr), config_(c) {}
LanguageModel::LanguageModel(const LanguageModelConfig& c, const std::map<std::string, TensorView>& state)
    : TrainedModel("decoder_lm", checked(c), &state), config_(c)
{
}

LanguageModel::Output LanguageModel::forward(const std::vector<std::int32_t>& tokens, bool need_attention, const HeadMask& ablate)
{
    const char* call = "LanguageModel.forward";
    detail::check_tokens("LanguageModel.forward: tokens", tokens, config_.vocab_size, config_.max_len);
    detail::check_head_mask("LanguageModel.forward: ablate", ablate, config_.num_layers, config_.num_heads);
    Transformer::Request r;
    r.call = call;
    r.tokens = tokens;
    r.need_attention = need_attention;
    r.ablate = ablate;
    Transformer::Output out = transformer().forward(r);
    return {std::move(out.logits), std::move(out.attention)};
}

std::vector<std::int32_t> LanguageModel::generate(const std::vector<std::int32_t>& prompt, std::size_t max_new_tokens,
                                                  std::int32_t stop_token, const HeadMask& ablate)
{
    detail::check_tokens("LanguageModel.generate: prompt", prompt, config_.vocab_size, config_.max_len);
    detail::check_head_mask("LanguageModel.generate: ablate", ablate, config_.num_layers, config_.num_heads);
    return transformer().generate(prompt, max_new_tokens, stop_token, ablate, "LanguageModel.generate");
}

AttentionTrace LanguageModel::trace(const std::vector<std::int32_t>& tokens, std::size_t layer, std::size_t head, std::size_t query,
                                    const HeadMask& ablate)
{
    detail::check_tokens("LanguageModel.trace: tokens", tokens, config_.vocab_size, config_.max_len);
    detail::check_head_mask("LanguageModel.trace: ablate", ablate, config_.num_layers, config_.num_heads);
    Transformer::Request r;
    r.call = "LanguageModel.trace";
    r.tokens = tokens;
    r.ablate = ablate;
    return transformer().trace(r, AttentionKind::self, layer, head, query);
}

Seq2SeqModel::Seq2SeqModel(const Seq2SeqModelConfig& c) : TrainedModel("seq2seq", checked(c), nullptr), config_(c) {}
Seq2SeqModel::Seq2SeqModel(const Seq2SeqModelConfig& c, const std::map<std::string, TensorView>& state)
    : TrainedModel("seq2seq", checked(c), &state), config_(c)
{
}

Seq2SeqModel::Output Seq2SeqModel::forward(const std::vector<std::int32_t>& source, const std::vector<std::int32_t>& target,
                                           bool need_attention, const Seq2SeqAblation& ablate)
{
    const char* call = "Seq2SeqModel.forward";
    detail::check_tokens("Seq2SeqModel.forward: source", source, config_.src_vocab_size, config_.max_src_len);
    detail::check_tokens("Seq2SeqModel.forward: target", target, config_.tgt_vocab_size, config_.max_tgt_len);
    check_ablation(call, ablate, config_);
    Transformer::Request r = seq2seq_request(call, source, target, ablate);
    r.need_attention = need_attention;
    Transformer::Output out = transformer().forward(r);
    return {std::move(out.logits), std::move(out.encoder_attention), std::move(out.attention), std::move(out.cross_attention)};
}

Seq2SeqModel::Translation Seq2SeqModel::translate(const std::vector<std::int32_t>& source, std::int32_t bos, std::int32_t eos,
                                                  std::size_t max_steps, const Seq2SeqAblation& ablate)
{
    const char* call = "Seq2SeqModel.translate";
    detail::check_tokens("Seq2SeqModel.translate: source", source, config_.src_vocab_size, config_.max_src_len);
    detail::check_tokens("Seq2SeqModel.translate: bos", {bos}, config_.tgt_vocab_size, 1);
    check_ablation(call, ablate, config_);
    return transformer().translate(source, bos, eos, max_steps, seq2seq_request(call, source, {bos}, ablate));
}

AttentionTrace Seq2SeqModel::trace(const std::vector<std::int32_t>& source, const std::vector<std::int32_t>& target,
                                   Seq2SeqAttention which, std::size_t layer, std::size_t head, std::size_t query,
                                   const Seq2SeqAblation& ablate)
{
    const char* call = "Seq2SeqModel.trace";
    const bool encoder = which == Seq2SeqAttention::encoder_self;
    detail::check_tokens("Seq2SeqModel.trace: source", source, config_.src_vocab_size, config_.max_src_len);
    if (!encoder || !target.empty()) detail::check_tokens("Seq2SeqModel.trace: target", target, config_.tgt_vocab_size, config_.max_tgt_len);
    check_ablation(call, ablate, config_);
    const AttentionKind kind = encoder ? AttentionKind::encoder : which == Seq2SeqAttention::decoder_self ? AttentionKind::self : AttentionKind::cross;
    return transformer().trace(seq2seq_request(call, source, target, ablate), kind, layer, head, query);
}

}  // namespace attnscope
