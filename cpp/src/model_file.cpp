// Reading attnscope model files: safetensors + __metadata__ checked field by field before the model is built.
#include "attnscope/model_file.hpp"

#include <cstring>
#include <map>

#include "families/ours.hpp"
#include "file_errors.hpp"
#include "json.hpp"
#include "zeroed.hpp"

namespace attnscope {
namespace {

using namespace file_errors;
using json::Type;

// Config sizes above this are refused before anything else: the tensors' own sizes are the real bound.
constexpr std::uint64_t max_size = std::uint64_t(1) << 24;

// One JSON text of the metadata, parsed and checked to be of `type`. The text is the header's own string, not a
// copy: a file is read with its metadata held once (the Document keeps no tree either, json.hpp).
struct MetadataJson {
    json::Document doc;
    std::string_view text;
    std::string field;

    MetadataJson(const SafetensorsHeader& header, const char* key, Type type, bool required)
        : field(std::string("__metadata__.") + key)
    {
        const std::string* value = header.find_metadata(key);
        if (!value) {
            if (required) range_error({field, ": missing (a model file needs format, kind, config and vocab)"});
            text = type == Type::array ? "[]" : "{}";
        } else {
            text = *value;
        }
        refuse_other_kind(type);
        std::string error;
        // Duplicate keys are refused at every depth by the parser: JSON.parse would keep the last of two, and
        // what the C++ checked must be what JS reads.
        if (!doc.parse(text, error)) range_error({field, ": invalid JSON: ", error});
        if (!doc.root().is(type)) type_error({field}, type == Type::array ? "a JSON array" : "a JSON object", doc.root());
    }
    json::Value root() const { return doc.root(); }

    // A text that is not of `type` is refused at its first byte, before the parser reads it (a 98 MB array took
    // 18 s to parse and then be refused as not an object). The kind is told by that byte as the parser would.
    void refuse_other_kind(Type type) const
    {
        const std::size_t at = text.find_first_not_of(" \t\n\r");
        const char c = at == std::string_view::npos ? '\0' : text[at];
        if (c == (type == Type::array ? '[' : '{')) return;
        const char* kind = c == '[' ? "an array" : c == '{' ? "an object" : c == '"' ? "a string" : c == 't' || c == 'f' ? "a boolean"
                           : c == 'n' ? "null" : c == '-' || (c >= '0' && c <= '9') ? "a number" : nullptr;
        if (!kind) return;  // not JSON: the parser says where
        const std::string_view rest = text.substr(at);
        throw FileError(FileError::Kind::type, json::join({field, ": expected ", type == Type::array ? "a JSON array" : "a JSON object",
                                                           ", got ", kind, " ", rest.substr(0, 40), rest.size() > 40 ? "…" : ""}));
    }
};

bool member(const json::Value& object, const char* key, json::Value& out) { return object.find(key, out); }

// One member of a JSON object, named for messages ("__metadata__.config.d_model"). `present` is false only for an
// optional member that is absent.
struct Field {
    std::string name;
    json::Value value;
    bool present;
};

// `key` of `object` (named `parent` in messages), checked to be of `type` (`expected` names it in the TypeError). A
// required member that is absent is a RangeError "<name>: missing<missing_note>".
Field field_of(const json::Value& object, const std::string& parent, const char* key, Type type, const char* expected,
               bool required, const char* missing_note = "")
{
    Field f{parent + "." + key, object, false};
    if (!member(object, key, f.value)) {
        if (required) range_error({f.name, ": missing", missing_note});
        return f;
    }
    if (!f.value.is(type)) type_error({f.name}, expected, f.value);
    f.present = true;
    return f;
}

Field field_of(const MetadataJson& m, const char* key, Type type, const char* expected, bool required,
               const char* missing_note = "")
{
    return field_of(m.root(), m.field, key, type, expected, required, missing_note);
}

std::size_t size_of(const MetadataJson& m, const char* key, std::uint64_t min = 1, std::uint64_t max = max_size)
{
    const Field f = field_of(m, key, Type::number, "an integer", true);
    std::uint64_t out = 0;
    if (!f.value.to_index(max, out) || out < min)
        range_error({f.name, ": expected an integer from ", Num(min), " to ", Num(max), ", got ", f.value.excerpt()});
    return std::size_t(out);
}

// A field that, when present (it must be when `required`), must be what the C++ models implement.
void expect_string(const MetadataJson& m, const char* key, const char* implemented, bool required = false)
{
    const Field f = field_of(m, key, Type::string, "a string", required);
    if (f.present && f.value.string() != implemented)
        range_error({f.name, ": attnscope implements \"", implemented, "\", got ", f.value.excerpt()});
}

// The config's sizes of each kind (tools/MODEL_FORMAT.md) in the order they are checked, each with the member of
// the C++ config it sets: an integer from `min` to max_size.
template <class Config>
struct SizeKey {
    const char* key;
    std::size_t Config::*member;
    std::uint64_t min = 1;
};

using Rnn = RnnSeq2SeqConfig;
constexpr SizeKey<Rnn> rnn_seq2seq_sizes[] = {
    {"src_vocab_size", &Rnn::src_vocab_size}, {"tgt_vocab_size", &Rnn::tgt_vocab_size},
    {"emb", &Rnn::embedding_dim},             {"hidden", &Rnn::hidden_size},
    {"max_src_len", &Rnn::max_src_len},       {"max_tgt_len", &Rnn::max_tgt_len, 2},  // BOS + one token
};

template <class Config, std::size_t N>
Config read_sizes(const MetadataJson& config, const SizeKey<Config> (&keys)[N])
{
    Config c;
    for (const SizeKey<Config>& k : keys) c.*k.member = size_of(config, k.key, k.min);
    return c;
}

// A vocabulary's token list: an array of `expected` strings.
void check_tokens(const MetadataJson& v, const char* key, std::size_t expected, const char* size_key)
{
    const Field tokens = field_of(v, key, Type::array, "an array of strings", true);
    const std::size_t n = tokens.value.size();
    if (n != expected)
        range_error({tokens.name, ": expected ", Num(expected), " tokens (config.", size_key, "), got ", Num(n)});
    json::Value t = tokens.value.first();
    for (std::size_t i = 0; i < n; ++i, t = t.following())
        if (!t.is(Type::string)) type_error({tokens.name, "[", Num(i), "]"}, "a string", t);
}

// specials: the first entries of tokens, which text never matches.
void check_specials(const MetadataJson& v, std::size_t vocab_size)
{
    const Field specials = field_of(v, "specials", Type::array, "an array of strings", true);
    const std::string& field = specials.name;
    json::Value tokens = v.root();
    member(v.root(), "tokens", tokens);  // checked before: an array of vocab_size strings
    const std::size_t n = specials.value.size();
    if (n > vocab_size) range_error({field, ": ", Num(n), " entries, more than the ", Num(vocab_size), " tokens"});
    json::Value s = specials.value.first(), t = tokens.first();
    for (std::size_t i = 0; i < n; ++i, s = s.following(), t = t.following()) {
        if (!s.is(Type::string)) type_error({field, "[", Num(i), "]"}, "a string", s);
        if (s.string() != t.string())
            range_error({field, "[", Num(i), "]: expected tokens[", Num(i), "] = ", t.excerpt(), ", got ", s.excerpt()});
    }
}

std::size_t id_of(const MetadataJson& v, const char* key, std::size_t vocab_size)
{
    return size_of(v, key, 0, vocab_size - 1);
}

// The vocabulary of both encoder–decoder kinds: word sources, character targets.
void check_seq2seq_vocab(const MetadataJson& vocab, std::size_t src_vocab_size, std::size_t tgt_vocab_size)
{
    expect_string(vocab, "src_tokenizer", "words_ascii_lower", true);
    expect_string(vocab, "tgt_tokenizer", "chars", true);
    check_tokens(vocab, "src_tokens", src_vocab_size, "src_vocab_size");
    check_tokens(vocab, "tgt_tokens", tgt_vocab_size, "tgt_vocab_size");
    for (const char* id : {"src_pad_id", "src_unk_id"}) id_of(vocab, id, src_vocab_size);
    for (const char* id : {"tgt_pad_id", "tgt_bos_id", "tgt_eos_id"}) id_of(vocab, id, tgt_vocab_size);
}

// rnn_seq2seq's config.attention: "none" (the fixed context vector only) or "dot" (Luong).
RnnAttention rnn_attention(const MetadataJson& c)
{
    const Field f = field_of(c, "attention", Type::string, "\"none\" or \"dot\"", true, " (\"none\" or \"dot\")");
    if (f.value.string() == "none") return RnnAttention::none;
    if (f.value.string() == "dot") return RnnAttention::dot;
    range_error({f.name, ": expected \"none\" or \"dot\", got ", f.value.excerpt()});
}

// named_heads: an array of objects whose fields have the types web/src/index.d.ts declares for NamedHead
// (layer, head, name, metric and score required; module, attn and threshold optional), and whose layer and head
// index the model: `layers` per kind of attention (enc_self, dec_self, dec_cross; `fallback` when attn is absent).
struct NamedHeadLayers {
    std::size_t enc_self, dec_self, dec_cross, fallback;
};

void check_named_heads(const MetadataJson& named, const NamedHeadLayers& layers, std::size_t heads, bool seq2seq)
{
    const json::Value root = named.root();
    json::Value e = root.first();
    for (std::size_t i = 0, n = root.size(); i < n; ++i, e = e.following()) {
        const std::string field = named.field + "[" + std::to_string(i) + "]";
        if (!e.is(Type::object)) type_error({field}, "an object", e);
        const auto typed = [&](const char* key, Type type, const char* expected, bool required) {
            return field_of(e, field, key, type, expected, required, " (a named head has layer, head, name, metric and score)");
        };
        for (const char* key : {"name", "metric"}) typed(key, Type::string, "a string", true);
        typed("module", Type::string, "a string", false);
        typed("score", Type::number, "a number", true);
        typed("threshold", Type::number, "a number", false);
        std::size_t stack = layers.fallback;
        const Field attn = typed("attn", Type::string, "a string", false);
        if (attn.present) {
            const std::string kind = attn.value.string();
            if (!seq2seq) range_error({attn.name, ": only seq2seq models have kinds of attention, got ", attn.value.excerpt()});
            if (kind == "enc_self") stack = layers.enc_self;
            else if (kind == "dec_self") stack = layers.dec_self;
            else if (kind == "dec_cross") stack = layers.dec_cross;
            else range_error({attn.name, ": expected \"enc_self\", \"dec_self\" or \"dec_cross\", got ", attn.value.excerpt()});
        }
        for (const auto& index : {std::make_pair("layer", stack), std::make_pair("head", heads)}) {
            const Field f = typed(index.first, Type::number, "an integer", true);
            std::uint64_t out = 0;
            if (!f.value.to_index(index.second - 1, out))
                range_error({f.name, ": expected an integer from 0 to ", Num(index.second - 1), ", got ", f.value.excerpt()});
        }
    }
}

// Views of the file's tensors for load_state_dict. Floats are read in place when aligned; otherwise the data
// section is copied once into `aligned` (a file may put a tensor at any byte offset).
std::map<std::string, TensorView> tensor_views(const std::uint8_t* file, const SafetensorsHeader& header,
                                               std::vector<float>& aligned)
{
    bool misaligned = false;
    for (const SafetensorsTensor& t : header.tensors)
        misaligned |= reinterpret_cast<std::uintptr_t>(file + t.begin) % alignof(float) != 0;
    const std::size_t data_end = header.tensors.empty() ? header.data_begin : header.tensors.back().end;
    if (misaligned) {
        detail::resize_zeroed(aligned, (data_end - header.data_begin + 3) / 4);
        std::memcpy(aligned.data(), file + header.data_begin, data_end - header.data_begin);
    }
    std::map<std::string, TensorView> views;
    for (const SafetensorsTensor& t : header.tensors) {
        const float* data = misaligned ? reinterpret_cast<const float*>(reinterpret_cast<const std::uint8_t*>(aligned.data()) + (t.begin - header.data_begin))
                                       : reinterpret_cast<const float*>(file + t.begin);
        views.emplace(t.name, TensorView(data, t.shape));
    }
    return views;
}

// Builds a model from the file's tensors; a shape mismatch or a missing/extra tensor becomes a RangeError.
template <class Model, class Config>
std::unique_ptr<Model> build(const Config& config, const std::map<std::string, TensorView>& state)
{
    try {
        return std::make_unique<Model>(config, state);
    } catch (const FileError&) {
        throw;
    } catch (const std::invalid_argument& e) {
        range_error({"__metadata__.config does not match the tensors: ", e.what()});
    }
}

}  // namespace

ModelFile read_model_file(const std::uint8_t* file, std::size_t size)
{
    const SafetensorsHeader header = read_safetensors_header(file, size);
    const std::string* format = header.find_metadata("format");
    if (!format) range_error({"__metadata__.format: missing (not an attnscope model file; a plain state dict loads with MultiHeadAttention.loadStateDict)"});
    if (*format != model_file_format)
        range_error({"__metadata__.format: expected \"", model_file_format, "\", got \"", std::string_view(*format).substr(0, 40), "\""});
    const std::string* kind = header.find_metadata("kind");
    if (!kind) range_error({"__metadata__.kind: missing"});
    ModelFile out;
    if (*kind == "decoder_lm") out.kind = ModelKind::language_model;
    else if (*kind == "seq2seq") out.kind = ModelKind::seq2seq;
    else if (*kind == "rnn_seq2seq") out.kind = ModelKind::rnn_seq2seq;
    else range_error({"__metadata__.kind: expected \"decoder_lm\", \"seq2seq\" or \"rnn_seq2seq\", got \"", std::string_view(*kind).substr(0, 40), "\""});

    const MetadataJson config(header, "config", Type::object, true);
    const MetadataJson vocab(header, "vocab", Type::object, true);
    const MetadataJson named(header, "named_heads", Type::array, false);
    const MetadataJson training(header, "training", Type::object, false);
    std::vector<float> aligned;

    if (out.kind == ModelKind::language_model) {
        const LanguageModelConfig c = families::read_language_model(families::Config(config.root(), config.field + ".", false));

        expect_string(vocab, "tokenizer", "codepoint", true);
        check_tokens(vocab, "tokens", c.vocab_size, "vocab_size");
        id_of(vocab, "unk_id", c.vocab_size);
        id_of(vocab, "bos_id", c.vocab_size);
        check_specials(vocab, c.vocab_size);
        check_named_heads(named, {c.num_layers, c.num_layers, c.num_layers, c.num_layers}, c.num_heads, false);
        out.language_model = build<LanguageModel>(c, tensor_views(file, header, aligned));
    } else if (out.kind == ModelKind::rnn_seq2seq) {
        RnnSeq2SeqConfig c = read_sizes(config, rnn_seq2seq_sizes);
        c.attention = rnn_attention(config);
        expect_string(config, "cell", "gru");
        expect_string(config, "decoding", "greedy");
        check_seq2seq_vocab(vocab, c.src_vocab_size, c.tgt_vocab_size);
        if (named.root().size() != 0) range_error({named.field, ": an rnn_seq2seq model has no heads to name, got ", named.root().excerpt()});
        out.rnn_seq2seq = build<RnnSeq2SeqModel>(c, tensor_views(file, header, aligned));
    } else {
        const Seq2SeqModelConfig c = families::read_seq2seq(families::Config(config.root(), config.field + ".", false));

        check_seq2seq_vocab(vocab, c.src_vocab_size, c.tgt_vocab_size);
        check_named_heads(named, {c.num_encoder_layers, c.num_decoder_layers, c.num_decoder_layers,
                                  std::max(c.num_encoder_layers, c.num_decoder_layers)}, c.num_heads, true);
        out.seq2seq = build<Seq2SeqModel>(c, tensor_views(file, header, aligned));
    }
    // Copied only now that the file has been read: a refused file never costs a copy of its metadata.
    out.config = std::string(config.text);
    out.vocab = std::string(vocab.text);
    out.named_heads = std::string(named.text);
    out.training = std::string(training.text);
    return out;
}

}  // namespace attnscope
