// A synthetic GPT-2 big enough for the GEMMs to split over threads: every thread count gives the same bits; and the
// parameter memory of GPT-2 small (124M) as the loader will hold it, against the 1.25 × F32 bytes target.
#include <catch2/catch.hpp>

#include "attnscope/threads.hpp"
#include "pretrained_files.hpp"

namespace pretrained_model_test {

using namespace attnscope;
using attnscope_test::FakeTensor;
using Json = nlohmann::json;

namespace {

// GPT2LMHeadModel's file for `layers` blocks of width d (Conv1D weights [in, out]), varied values.
std::string gpt2_file(std::size_t V, std::size_t P, std::size_t d, std::size_t layers)
{
    std::vector<FakeTensor> t;
    std::uint32_t salt = 1;
    auto add = [&](const std::string& name, Shape shape, float scale) {
        std::size_t n = 1;
        for (std::size_t s : shape) n *= s;
        std::string bytes(n * 4, '\0');
        for (std::size_t i = 0; i < n; ++i) {
            const float v = scale * float(int((i * 2654435761u + salt * 97u) % 2001) - 1000) / 1000.f;
            std::memcpy(&bytes[i * 4], &v, 4);
        }
        ++salt;
        t.push_back({"transformer." + name, "F32", shape, bytes});
    };
    add("wte.weight", {V, d}, 0.1f);
    add("wpe.weight", {P, d}, 0.1f);
    for (std::size_t l = 0; l < layers; ++l) {
        const std::string p = "h." + std::to_string(l) + ".";
        add(p + "ln_1.weight", {d}, 1.f);
        add(p + "ln_1.bias", {d}, 0.1f);
        add(p + "attn.c_attn.weight", {d, 3 * d}, 0.1f);
        add(p + "attn.c_attn.bias", {3 * d}, 0.1f);
        add(p + "attn.c_proj.weight", {d, d}, 0.1f);
        add(p + "attn.c_proj.bias", {d}, 0.1f);
        add(p + "ln_2.weight", {d}, 1.f);
        add(p + "ln_2.bias", {d}, 0.1f);
        add(p + "mlp.c_fc.weight", {d, 4 * d}, 0.1f);
        add(p + "mlp.c_fc.bias", {4 * d}, 0.1f);
        add(p + "mlp.c_proj.weight", {4 * d, d}, 0.1f);
        add(p + "mlp.c_proj.bias", {d}, 0.1f);
    }
    add("ln_f.weight", {d}, 1.f);
    add("ln_f.bias", {d}, 0.1f);
    return attnscope_test::safetensors_file(t);
}

Json gpt2_config(std::size_t V, std::size_t P, std::size_t d, std::size_t layers, std::size_t heads)
{
    return {{"model_type", "gpt2"}, {"vocab_size", V}, {"n_positions", P}, {"n_embd", d}, {"n_layer", layers}, {"n_head", heads}};
}

}  // namespace

TEST_CASE("pretrained forward and generate give the same bits with 1, 2 and 3 threads", "[pretrained][threads]")
{
    const std::string file = gpt2_file(512, 64, 128, 2);
    const auto model = load_checkpoint(gpt2_config(512, 64, 128, 2, 4).dump(),
                                       {{"model.safetensors", {reinterpret_cast<const std::uint8_t*>(file.data()), file.size()}}});
    Transformer::Request r;
    for (std::int32_t t = 0; t < 64; ++t) r.tokens.push_back((t * 37 + 11) % 512);
    const std::size_t before = num_threads();
    set_num_threads(1);
    const auto one = model->forward(r);
    const auto generated = model->generate({1, 2, 3}, 8, -1);
    for (std::size_t threads : {std::size_t(2), std::size_t(3)}) {
        CAPTURE(threads);
        set_num_threads(threads);
        const auto many = model->forward(r);
        CHECK(many.logits.data == one.logits.data);
        CHECK(many.hidden.data == one.hidden.data);
        CHECK(many.attention.data == one.attention.data);
        CHECK(model->generate({1, 2, 3}, 8, -1) == generated);
    }
    set_num_threads(before);
}

TEST_CASE("GPT-2 small's parameters are held in about their F32 bytes", "[pretrained][memory]")
{
    // 124,439,808 parameters (HF's count for gpt2: tied head, no attn.bias buffers): 497,759,232 bytes of F32. The
    // loader holds them once, in the kernels' packed layout (its padding is the only overhead), so the load peaks at
    // these bytes plus the caller's chunk, well under the 1.25 × target.
    const std::uint64_t hf_bytes = 124439808ull * 4;
    CheckpointLoader loader(gpt2_config(50257, 1024, 768, 12, 12).dump());
    const std::uint64_t held = loader.parameter_bytes();
    CHECK(held >= hf_bytes);
    CHECK(double(held) / double(hf_bytes) < 1.001);
    // Four GiB of WASM memory cannot hold a model of 2.6 billion parameters even with its matrices in 16 bits:
    // refused before anything is allocated. (1.3 billion, 2048 wide in 24 layers, may be a BF16 file that fits.)
    CHECK_THROWS_AS(CheckpointLoader(gpt2_config(50257, 1024, 2560, 32, 20).dump()), std::length_error);
    CHECK_NOTHROW(CheckpointLoader(gpt2_config(50257, 1024, 2048, 24, 16).dump()));
}

TEST_CASE("the memory plan: GPT-2 small's parameters and a 512-token forward pass, before any header", "[pretrained][memory]")
{
    CheckpointLoader loader(gpt2_config(50257, 1024, 768, 12, 12).dump());
    const MemoryPlan plan = loader.memory_plan(0);
    CHECK_FALSE(plan.exact);  // no header yet: the least the config can mean
    CHECK(plan.tokens == default_plan_tokens);
    // Before the headers every matrix counts in 16 bits, the least a checkpoint can take: GPT-2 small's 12 layers
    // of c_attn [768, 2304], c_proj [768, 768], c_fc [768, 3072] and mlp.c_proj [3072, 768] (no head yet) at 2
    // bytes, the embeddings, biases and norms at 4.
    const std::uint64_t matrix_elements = 12ull * (768 * 2304 + 768 * 768 + 768 * 3072 + 3072 * 768);
    CHECK(plan.parameters == 124439808);
    CHECK(plan.parameter_bytes == 4 * plan.parameters - 2 * matrix_elements);
    CHECK(plan.parameter_bytes < loader.parameter_bytes());  // no file yet: the loader counts F32
    // From HF's shapes at T = 512: the attention maps [12, 12, T, T], the key/value caches [12, 2, T, 768] and the
    // hidden state [T, 768] as F32 (no logits: before the headers the model has no head). The activations, the
    // scores and the packed keys and values add a few MB; a plan far above this would refuse models that fit.
    const double T = 512, maps = 4 * 12 * 12 * T * T, caches = 4 * 2 * 12 * T * 768, hidden = 4 * T * 768;
    CHECK(double(plan.workspace_bytes) >= maps + caches + hidden);
    CHECK(double(plan.workspace_bytes) < 1.15 * (maps + caches + hidden));
    CHECK(loader.memory_plan(1024).tokens == 1024);
    CHECK(loader.memory_plan(64).workspace_bytes < plan.workspace_bytes);
    CHECK_THROWS_AS(loader.memory_plan(1025), std::invalid_argument);

    // After the header: exact, with the tied head the file's transformer. prefix says it has.
    const std::string file = gpt2_file(512, 64, 128, 2);
    const auto* bytes = reinterpret_cast<const std::uint8_t*>(file.data());
    CheckpointLoader small(gpt2_config(512, 64, 128, 2, 4).dump());
    const MemoryPlan before = small.memory_plan(0);
    small.add_header("model.safetensors", bytes, file.size(), file.size());
    const MemoryPlan after = small.memory_plan(0);
    CHECK(after.exact);
    CHECK(after.tokens == 64);  // the default, capped at n_positions
    CHECK(after.parameter_bytes == small.parameter_bytes());
    CHECK(after.parameter_bytes >= before.parameter_bytes);
    CHECK(after.workspace_bytes >= before.workspace_bytes + 4 * 64 * 512);  // + the logits [T, vocab]
}

}  // namespace pretrained_model_test
