// The registry: the only list of families. A family is one file of cpp/src/families/ defining its Family; adding
// one is a line here (and its file in CMakeLists.txt). The JS API's family names, docs/huggingface.md's table and the
// demo's words are checked against this list (tests/js/families.test.js).
#include "attnscope/model.hpp"
#include "family.hpp"

namespace attnscope {
namespace families {

// Hugging Face checkpoints, by config.json's model_type.
extern const Family gpt2_family, bert_family, llama_family, mistral_family, qwen2_family, qwen3_family;
extern const Family gemma_family, gemma2_family, gemma3_text_family;
extern const Family gpt_neox_family, phi3_family, olmo2_family;
// Hugging Face encoder–decoders.
extern const Family bart_family, marian_family, t5_family;
// Our own model files, by __metadata__.kind (tools/MODEL_FORMAT.md).
extern const Family decoder_lm_family, seq2seq_family;

namespace {

const Family* const checkpoints[] = {&gpt2_family, &bert_family, &llama_family, &mistral_family, &qwen2_family, &qwen3_family,
                                     &gemma_family, &gemma2_family, &gemma3_text_family,
                                     &gpt_neox_family, &phi3_family, &olmo2_family,
                                     &bart_family, &marian_family, &t5_family};
const Family* const ours[] = {&decoder_lm_family, &seq2seq_family};

}  // namespace

const Family* find_family(std::string_view name)
{
    for (const Family* f : checkpoints)
        if (name == f->name) return f;
    for (const Family* f : ours)
        if (name == f->name) return f;
    return nullptr;
}

const Family* const* checkpoint_families(std::size_t& count)
{
    count = std::size(checkpoints);
    return checkpoints;
}

std::string checkpoint_family_names()
{
    std::string names;
    for (std::size_t i = 0; i < std::size(checkpoints); ++i)
        names += std::string(i == 0 ? "" : i + 1 == std::size(checkpoints) ? " or " : ", ") + checkpoints[i]->name;
    return names;
}

}  // namespace families

std::vector<CheckpointFamily> checkpoint_families()
{
    std::vector<CheckpointFamily> out;
    for (const families::Family* f : families::checkpoints) out.push_back({f->name, f->label});
    return out;
}

}  // namespace attnscope
