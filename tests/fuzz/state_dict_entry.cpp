// The fuzzer's state-dict entry point: keys and shapes agree, loads round-trip bit for bit, and a load with a
// missing, extra, misshapen or null entry throws and changes nothing.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "attnscope/attnscope.hpp"
#include "checks.hpp"
#include "decode.hpp"
#include "entry_points.hpp"
#include "reference/magnitude.hpp"
#include "reference/reference.hpp"

namespace attnscope {
namespace fuzz {
namespace {

enum StateMutation { st_missing, st_extra, st_shape, st_null, st_unknown_shape, state_mutation_count };
const char* const kStateMutationNames[] = {"missing_key", "extra_key", "wrong_shape", "null_data", "unknown_key_shape"};

}  // namespace

void fuzz_state_dict(Input& in, Mode mode)
{
    const std::size_t mutation = mode == Mode::invalid ? in.below(state_mutation_count) : std::size_t(state_mutation_count);
    if (mode == Mode::invalid) note("mutation", kStateMutationNames[mutation]);
    const std::size_t H = 1 + in.below(8);
    const std::size_t E = H * (1 + in.below(32 / H));
    const std::size_t kdim = in.flag() ? 0 : 1 + in.below(32), vdim = in.flag() ? 0 : 1 + in.below(32);
    const bool bias = in.flag();
    const std::uint64_t seed = in.byte();
    note("E", E), note("H", H), note("kdim", kdim), note("vdim", vdim), note("bias", bias), note("seed", seed);

    MultiHeadAttention mha({E, H, kdim, vdim, bias, seed});
    const auto before = mha.state_dict();
    const auto keys = mha.state_dict_keys();
    if (keys.size() != before.size()) finding("state-dict", "state_dict() and state_dict_keys() disagree");
    for (const std::string& key : keys) {
        const auto it = before.find(key);
        if (it == before.end() || it->second.shape != mha.state_dict_shape(key))
            finding("state-dict", "state_dict() lacks '" + key + "' or its shape differs from state_dict_shape()");
    }

    Rng rng(seed ^ 0xABCDEF);
    std::map<std::string, Tensor> state;
    for (const std::string& key : keys) {
        Tensor t(mha.state_dict_shape(key));
        for (float& x : t.data) x = mode == Mode::nonfinite && rng.bits() % 8 == 0 ? kSpecial[rng.bits() % kSpecialCount] : rng.uniform(-1.f, 1.f);
        state.emplace(key, std::move(t));
    }

    if (mode != Mode::invalid) {
        if (!expect_no_throw("load_state_dict", [&] { mha.load_state_dict(state); })) return;
        const auto after = mha.state_dict();
        for (const auto& entry : state)
            if (!same_bits(after.at(entry.first).data, entry.second.data))
                finding("state-dict", "'" + entry.first + "' does not round-trip through load_state_dict/state_dict");
        return;
    }

    const std::string victim = keys[in.below(keys.size())];
    note("key", victim);
    const char* const candidates[] = {"in_proj_weight", "q_proj_weight", "k_proj_weight", "v_proj_weight", "in_proj_bias",
                                      "out_proj.weight", "out_proj.bias", "out_proj", "bias_k", ""};
    std::string stranger;
    for (std::size_t n = 0, start = in.below(10); n < 10 && stranger.empty(); ++n) {
        const std::string candidate = candidates[(start + n) % 10];
        if (std::find(keys.begin(), keys.end(), candidate) == keys.end()) stranger = candidate.empty() ? "weight" : candidate;
    }
    switch (mutation) {
    case st_missing:
        state.erase(victim);
        expect_throw("load_state_dict (missing key)", [&] { mha.load_state_dict(state); });
        break;
    case st_extra:
        state.emplace(stranger, Tensor(Shape{E}));
        expect_throw("load_state_dict (extra key)", [&] { mha.load_state_dict(state); });
        break;
    case st_shape: {
        const Shape good = state.at(victim).shape;
        state.at(victim) = Tensor(wrong_shape(in, good, {good}));
        expect_throw("load_state_dict (wrong shape)", [&] { mha.load_state_dict(state); });
        break;
    }
    case st_null: {
        std::map<std::string, TensorView> views;
        for (const auto& entry : state) views.emplace(entry.first, TensorView(entry.second));
        views.at(victim).data = nullptr;
        expect_throw("load_state_dict (null data)", [&] { mha.load_state_dict(views); });
        break;
    }
    default:
        expect_throw("state_dict_shape (unknown key)", [&] { mha.state_dict_shape(stranger); });
        break;
    }
    // A failed load changes nothing.
    const auto after = mha.state_dict();
    for (const auto& entry : before)
        if (!same_bits(after.at(entry.first).data, entry.second.data)) finding("state-dict", "a failed load changed '" + entry.first + "'");
}

}  // namespace fuzz
}  // namespace attnscope
