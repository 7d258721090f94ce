// A BF16 or F16 checkpoint keeps its matrices in 16 bits and widens them inside the GEMM: its hidden states, logits,
// attention and traces are bit for bit those of the same checkpoint converted to F32 (by the formats' definitions,
// here), and it holds about half the bytes.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>

#include "pretrained_files.hpp"

namespace half_weights_test {

using namespace attnscope;

namespace {

// The value of a BF16 or F16 bit pattern, from the format's definition (not the library's widening).
float widened(std::uint16_t h, bool bf16)
{
    const double sign = h & 0x8000u ? -1.0 : 1.0;
    const int e = bf16 ? (h >> 7) & 0xff : (h >> 10) & 0x1f, m = bf16 ? h & 0x7f : h & 0x3ff;
    const int top = bf16 ? 0xff : 0x1f, bits = bf16 ? 7 : 10, bias = bf16 ? 127 : 15;
    if (e == top) return m ? NAN : float(sign * INFINITY);
    return float(e == 0 ? sign * std::ldexp(m, 1 - bias - bits) : sign * std::ldexp((1 << bits) + m, e - bias - bits));
}

// The same safetensors file with every BF16 and F16 tensor rewritten as F32.
std::string as_f32(const std::string& file)
{
    std::uint64_t n = 0;
    std::memcpy(&n, file.data(), 8);
    nlohmann::json header = nlohmann::json::parse(file.substr(8, n));
    const std::string data = file.substr(8 + n);
    std::string out_data;
    for (auto& item : header.items()) {
        if (item.key() == "__metadata__") continue;
        nlohmann::json& t = item.value();
        const std::string dtype = t.at("dtype");
        const std::size_t begin = t.at("data_offsets")[0], end = t.at("data_offsets")[1];
        const std::size_t at = out_data.size();
        if (dtype == "BF16" || dtype == "F16") {
            for (std::size_t i = begin; i < end; i += 2) {
                const float f = widened(std::uint16_t(std::uint8_t(data[i]) | std::uint8_t(data[i + 1]) << 8), dtype == "BF16");
                out_data.append(reinterpret_cast<const char*>(&f), 4);
            }
            t["dtype"] = "F32";
        } else {
            out_data.append(data, begin, end - begin);
        }
        t["data_offsets"] = {at, out_data.size()};
    }
    std::string text = header.dump();
    while (text.size() % 8) text += ' ';
    const std::uint64_t m = text.size();
    return std::string(reinterpret_cast<const char*>(&m), 8) + text + out_data;
}

Transformer::Request request_of(const nlohmann::json& input)
{
    Transformer::Request r;
    r.tokens = input.at("input_ids").get<std::vector<std::int32_t>>();
    if (input.contains("attention_mask")) r.attention_mask = input.at("attention_mask").get<std::vector<std::uint8_t>>();
    return r;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b)
{
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace

TEST_CASE("16-bit checkpoints: the bits of the same model as F32, in about half its bytes", "[pretrained][half]")
{
    for (const std::string& name : {std::string("gemma3-bf16"), std::string("gpt-neox-bf16"), std::string("phi3-f16"),
                                    std::string("llama-bf16"), std::string("llama-f16")}) {
        CAPTURE(name);
        const attnscope_test::HfCase c = attnscope_test::read_hf_case(name);
        attnscope_test::HfCase wide = c;
        for (auto& f : wide.files)
            if (f.first != "model.safetensors.index.json") f.second = as_f32(f.second);
        const auto half = load_checkpoint(c.config, c.views());
        const auto f32 = load_checkpoint(wide.config, wide.views());
        // Every matrix of these files is 16-bit: they hold 2 bytes where F32 holds 4 (norms, biases, tables stay F32).
        CHECK(half->parameter_bytes() < f32->parameter_bytes() * 3 / 4);
        for (const auto& input : c.reference.at("inputs")) {
            const Transformer::Request r = request_of(input);
            const auto a = half->forward(r), b = f32->forward(r);
            CHECK(same_bits(a.hidden.data, b.hidden.data));
            CHECK(same_bits(a.logits.data, b.logits.data));
            CHECK(same_bits(a.attention.data, b.attention.data));
            const std::size_t last = r.tokens.size() - 1;
            const AttentionTrace ta = half->trace(r, AttentionKind::self, 0, 0, last), tb = f32->trace(r, AttentionKind::self, 0, 0, last);
            CHECK(same_bits(ta.head_output.data, tb.head_output.data));
            CHECK(same_bits(ta.keys_final.data, tb.keys_final.data));
        }
        const auto wa = half->head_weights(0, 0), wb = f32->head_weights(0, 0);
        CHECK(same_bits(wa.q.data, wb.q.data));
        CHECK(same_bits(wa.o.data, wb.o.data));
    }
}

}  // namespace half_weights_test
