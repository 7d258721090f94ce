// Reads an attnscope model file (tools/MODEL_FORMAT.md) for the tests: the JSON header and the tensors by name,
// and builds the C++ model it describes.
#pragma once

#include <cstdint>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attnscope/transformer.hpp"

namespace attnscope_test {

struct ModelFile {
    nlohmann::json header;
    std::map<std::string, attnscope::Tensor> tensors;

    std::map<std::string, attnscope::TensorView> state() const
    {
        std::map<std::string, attnscope::TensorView> views;
        for (const auto& t : tensors) views.emplace(t.first, attnscope::TensorView(t.second));
        return views;
    }
};

inline ModelFile read_model_file(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error(path + ": cannot open");
    const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (bytes.size() < 12 || std::memcmp(bytes.data(), "ATTNSCP1", 8) != 0) throw std::runtime_error(path + ": not an attnscope model");
    std::uint32_t header_len = 0;
    std::memcpy(&header_len, bytes.data() + 8, 4);  // little-endian, as every machine this runs on
    ModelFile file;
    file.header = nlohmann::json::parse(bytes.begin() + 12, bytes.begin() + 12 + header_len);
    const std::size_t data_start = (12 + std::size_t(header_len) + 3) / 4 * 4;
    for (const auto& entry : file.header.at("tensors")) {
        attnscope::Shape shape = entry.at("shape").get<attnscope::Shape>();
        std::vector<float> data(attnscope::checked_numel(shape, "model file"));
        const std::size_t begin = data_start + 4 * entry.at("offset").get<std::size_t>();
        if (begin + 4 * data.size() > bytes.size()) throw std::runtime_error(path + ": tensor outside the file");
        std::memcpy(data.data(), bytes.data() + begin, 4 * data.size());
        file.tensors.emplace(entry.at("name").get<std::string>(), attnscope::Tensor(shape, std::move(data)));
    }
    return file;
}

inline std::unique_ptr<attnscope::DecoderLM> make_decoder_lm(const ModelFile& file)
{
    const auto& c = file.header.at("config");
    auto lm = std::make_unique<attnscope::DecoderLM>(attnscope::DecoderLMConfig{
        c.at("vocab_size"), c.at("max_len"), c.at("d_model"), c.at("n_heads"), c.at("d_ff"), c.at("n_layers")});
    lm->load_state_dict(file.state());
    return lm;
}

inline std::unique_ptr<attnscope::Seq2Seq> make_seq2seq(const ModelFile& file)
{
    const auto& c = file.header.at("config");
    auto model = std::make_unique<attnscope::Seq2Seq>(attnscope::Seq2SeqConfig{
        c.at("src_vocab_size"), c.at("tgt_vocab_size"), c.at("max_src_len"), c.at("max_tgt_len"), c.at("d_model"),
        c.at("n_heads"), c.at("d_ff"), c.at("n_enc_layers"), c.at("n_dec_layers")});
    model->load_state_dict(file.state());
    return model;
}

}  // namespace attnscope_test
