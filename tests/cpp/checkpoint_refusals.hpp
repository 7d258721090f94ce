// The pretrained loader's error tests' helpers (pretrained_errors_test.cpp, family_errors_test.cpp,
// pretrained_seq2seq_test.cpp): a fixture's
// config edited and refused, a safetensors header edited and loaded.
#pragma once

#include <catch2/catch.hpp>

#include <functional>
#include <string>

#include "pretrained_files.hpp"

namespace attnscope_test {
namespace refusals {

using attnscope::CheckpointLoader;
using attnscope::FileError;
using attnscope::load_checkpoint;
using Json = nlohmann::json;

inline Json config_of(const std::string& name) { return Json::parse(attnscope_test::read_text(attnscope_test::hf_dir(name) + "/config.json")); }

// The loader refuses `config` with a FileError of `kind` whose message contains `text`.
inline void refuses(const Json& config, FileError::Kind kind, const std::string& text)
{
    CAPTURE(config.dump(), text);
    try {
        CheckpointLoader loader(config.dump());
        FAIL("accepted");
    } catch (const FileError& e) {
        CHECK(e.kind() == kind);
        CHECK_THAT(e.what(), Catch::Contains(text));
        CHECK_THAT(e.what(), Catch::StartsWith("loadModel: config.json: "));
    }
}

inline Json with(Json c, const std::string& key, const Json& value)
{
    c[key] = value;
    return c;
}

// load_checkpoint over a case whose model.safetensors went through `edit`; the FileError's message.
inline std::string load_error(HfCase c, const std::string& file, const std::function<void(std::string&)>& edit)
{
    edit(c.files.at(file));
    try {
        load_checkpoint(c.config, c.views());
    } catch (const FileError& e) {
        return e.what();
    }
    return "(accepted)";
}

using Header = nlohmann::ordered_json;
inline std::function<void(std::string&)> header_edit(const std::function<void(Header&)>& edit)
{
    return [edit](std::string& file) { file = attnscope_test::rewrite_header(file, edit); };
}

// A key of `h` renamed, its position and value kept (so the data section still tiles).
inline void rename(Header& h, const std::string& from, const std::string& to)
{
    Header out = Header::object();
    for (auto& item : h.items()) out[item.key() == from ? to : item.key()] = item.value();
    h = out;
}

}  // namespace refusals
}  // namespace attnscope_test
