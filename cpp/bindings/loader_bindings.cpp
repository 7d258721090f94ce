// The binding's checkpoint loader (CheckpointLoader's streaming protocol, the memory plan against the ceiling), and
// a model's architecture as the plain object `model.config` shows, from its plan.
#include "model_bindings.hpp"

#include <emscripten/bind.h>

namespace attnscope::bindings {

namespace {

val no_value() { return val::undefined(); }

const char* norm_name(const plan::Norm& n) { return n.kind == plan::NormKind::rms_norm ? "rmsNorm" : "layerNorm"; }

// The MLP as one word: the activation, and whether a gate multiplies it (swiglu: silu-gated; geglu: tanh-GELU-gated).
const char* mlp_name(const plan::Mlp& m)
{
    using A = plan::Activation;
    if (m.gated) return m.activation == A::silu ? "swiglu" : m.activation == A::gelu_tanh ? "geglu" : m.activation == A::gelu_erf ? "gegluErf" : "reglu";
    return m.activation == A::gelu_erf ? "geluErf" : m.activation == A::gelu_tanh ? "geluTanh" : m.activation == A::relu ? "relu" : "silu";
}

val positions_value(const plan::Stack& s)
{
    val positions = val::object();
    const plan::Attention& a = s.layer(0).self;
    if (!a.rope) {
        const plan::Positions kind = s.embedding.positions;
        positions.set("kind", std::string(kind == plan::Positions::learned      ? "learned"
                                          : kind == plan::Positions::sinusoidal ? "sinusoidal"
                                          : s.relative.buckets                  ? "relative"
                                                                                : "none"));
        return positions;
    }
    const plan::Rope& r = a.rotary;
    positions.set("kind", std::string("rope"));
    positions.set("theta", r.theta);
    positions.set("rotaryDim", double(r.dims));
    val scaling = val::null();
    if (r.scaling != plan::RopeScaling::none) {
        scaling = val::object();
        const char* type = r.scaling == plan::RopeScaling::linear ? "linear" : r.scaling == plan::RopeScaling::llama3 ? "llama3" : "longrope";
        scaling.set("type", std::string(type));
        scaling.set("factor", r.factor);
        if (r.scaling == plan::RopeScaling::llama3) {
            scaling.set("lowFreqFactor", r.low_freq_factor);
            scaling.set("highFreqFactor", r.high_freq_factor);
        }
        if (r.scaling != plan::RopeScaling::linear) scaling.set("originalMaxPositions", double(r.original_max_positions));
    }
    positions.set("scaling", scaling);
    return positions;
}

// The first norm a stack's layers apply, for the config's one `norm` word (every norm of a family is of one kind).
const plan::Norm& first_norm(const plan::Stack& s)
{
    const plan::Layer& l = s.layer(0);
    for (const plan::Norm* n : {&l.attn_norms.in, &l.attn_norms.after, &l.attn_norms.out, &l.mlp_norms.in, &l.mlp_norms.after})
        if (n->present()) return *n;
    return s.final_norm;
}

val stack_value(const plan::Stack& s)
{
    const plan::Layer& first = s.layer(0);
    val v = val::object();
    set_numbers(v, {{"layers", double(s.layers())}, {"heads", double(first.self.heads)}, {"kvHeads", double(first.self.kv_heads)},
                    {"headDim", double(first.self.head_dim)}, {"hiddenSize", double(s.width())},
                    {"intermediateSize", double(first.mlp.inner)}, {"vocabSize", double(s.embedding.vocab)},
                    {"maxPositions", double(s.max_positions)}, {"typeVocabSize", double(s.embedding.type_vocab)}});
    const plan::Norm& norm = first_norm(s);
    v.set("norm", std::string(norm_name(norm)));
    v.set("normEps", double(norm.eps));
    v.set("postNorm", first.attn_norms.after.present());
    v.set("finalNorm", s.final_norm.present());
    v.set("parallel", first.parallel);
    v.set("positions", positions_value(s));
    v.set("mlp", std::string(mlp_name(first.mlp)));
    v.set("qkNorm", first.self.qk_norm != plan::QkNorm::none);
    val window = val::array();
    for (std::size_t l = 0; l < s.layers(); ++l) window.call<void>("push", s.layer(l).self.window == 0 ? val::null() : val(double(s.layer(l).self.window)));
    v.set("window", window);
    v.set("causal", first.self.causal);
    return v;
}

}  // namespace

val config_value(const plan::Plan& p, const ModelConfig& c)
{
    val config = stack_value(p.main());
    config.set("family", p.family);
    config.set("kind", std::string(p.kind == plan::Kind::causal_lm ? "causal_lm" : p.kind == plan::Kind::encoder ? "encoder" : "seq2seq"));
    config.set("hasLmHead", c.has_lm_head);
    config.set("tiedEmbeddings", p.head.tied);
    config.set("hasCrossAttention", p.seq2seq());
    config.set("encoder", p.seq2seq() ? stack_value(p.stacks.front()) : val::null());
    if (p.seq2seq()) set_numbers(config, {{"decoderStartTokenId", double(p.decoder_start)}, {"eosTokenId", double(p.eos)}});
    return config;
}

val families_value()
{
    val list = val::array();
    for (const CheckpointFamily& f : checkpoint_families()) {
        val entry = val::object();
        entry.set("modelType", f.model_type);
        entry.set("label", f.label);
        list.call<void>("push", entry);
    }
    return list;
}

val check_file_size(const std::string& call, const std::string& file, double bytes, bool complete)
{
    return guarded([&] {
        check_checkpoint_file_size(call.c_str(), file, std::uint64_t(bytes), complete);
        return no_value();
    });
}

val Loader::open(const std::string& config_json, const std::string& call, bool allow_non_finite)
{
    return guarded([&] {
        call_ = call;
        loader_ = std::make_unique<CheckpointLoader>(config_json, call_.c_str());
        loader_->allow_non_finite(allow_non_finite);
        return config_value(loader_->plan(), loader_->config());
    });
}

val Loader::setIndex(const std::string& index_json)
{
    return guarded([&] {
        loader_->set_index(index_json);
        return no_value();
    });
}

val Loader::files()
{
    return guarded([&] {
        val names = val::array();
        for (const std::string& name : loader_->files()) names.call<void>("push", name);
        return names;
    });
}

val Loader::neededHeaderBytes(const std::string& file, std::uintptr_t first8, double file_size)
{
    return guarded([&] {
        return val(double(CheckpointLoader::needed_header_bytes(file, at<const std::uint8_t>(first8), std::uint64_t(file_size), call_.c_str())));
    });
}

val Loader::addHeader(const std::string& file, std::uintptr_t bytes, double size, double file_size)
{
    return guarded([&] {
        return val(double(loader_->add_header(file, at<const std::uint8_t>(bytes), std::size_t(size), std::uint64_t(file_size))));
    });
}

val Loader::plan(double tokens)
{
    return guarded([&] {
        const MemoryPlan p = loader_->memory_plan(to_size(tokens, "options.planTokens"));
        // The plan against the ceiling, in the binding beside require_memory: what is left of WebAssembly memory now
        // (a model loaded before this one still holds its share).
        const double limit = memory_limit_bytes(), left = limit - heap_bytes_in_use();
        if (double(p.bytes()) > left)
            fail(Status::range_error,
                 "%: %: % with these sizes needs % (% parameters: %% held, and % to run % tokens with every attention map), "
                 "more than the % WebAssembly memory has left (limit %); fewer planTokens need less",
                 {call_, p.exact ? "this model" : "config.json", loader_->plan().family, Bytes{double(p.bytes())}, std::size_t(p.parameters),
                  p.exact ? "" : "at least ", Bytes{double(p.parameter_bytes)}, Bytes{double(p.workspace_bytes)}, p.tokens, Bytes{left}, Bytes{limit}});
        val out = val::object();
        set_numbers(out, {{"parameters", double(p.parameters)}, {"parameterBytes", double(p.parameter_bytes)}, {"tokens", double(p.tokens)},
                          {"workspaceBytes", double(p.workspace_bytes)}, {"bytes", double(p.bytes())}, {"availableBytes", left}});
        out.set("exact", p.exact);
        return out;
    });
}

val Loader::allocate()
{
    return guarded([&] {
        // The one memory check: the parameters' F32 bytes against what WebAssembly memory has left, before growing it.
        // (The loader's own limit, max_parameter_bytes, keeps the count within size_t.)
        require_memory(std::size_t(loader_->parameter_bytes()), call_ + ": this model's parameters (F32)");
        loader_->allocate();
        return val(double(loader_->parameter_bytes()));
    }, "this model");
}

val Loader::write(const std::string& file, double offset, std::uintptr_t data, double size)
{
    return guarded([&] {
        loader_->write(file, std::uint64_t(offset), at<const std::uint8_t>(data), std::size_t(size));
        return no_value();
    });
}

val Loader::finish(Model& into)
{
    return guarded([&] {
        into.checkpoint_ = loader_->finish();
        into.model_ = into.checkpoint_.get();
        loader_.reset();  // its headers' text and tables go now, not when JS gets round to delete()
        return no_value();
    });
}

}  // namespace attnscope::bindings
