// The Embind registration of the npm package's module: a list of what the adapters (marshal, attention_bindings,
// model_bindings) define. cpp/bindings/ is the only folder that includes <emscripten/...>.
// Raw entry points are `_`-prefixed: only web/src calls them. Each takes the converted JS values, checks them, and
// returns its result, or null (0 for an address) with the failure's class in _lastStatus() and its message in
// _lastError(): no C++ exception ever crosses into JS. Every size, shape and key the wrapper needs comes from here.
#include <emscripten/bind.h>

#include "attention_bindings.hpp"
#include "marshal.hpp"
#include "model_bindings.hpp"

using namespace attnscope;
using namespace attnscope::bindings;

EMSCRIPTEN_BINDINGS(attnscope)
{
    using namespace emscripten;
    // The class_/function/field chains below repeat one shape (duplicates reports them): Embind's registration is a
    // list by design, one line per exposed member, and kept flat so that each name the wrapper calls is findable.
    reserve_error_room();
    enum_<Status>("_Status")
        .value("ok", Status::ok)
        .value("typeError", Status::type_error)
        .value("rangeError", Status::range_error)
        .value("stateError", Status::state_error)
        .value("internalError", Status::internal_error);
    enum_<MaskCode>("_MaskKind")
        .value("none", MaskCode::none)
        .value("boolean", MaskCode::boolean)
        .value("additive", MaskCode::additive);
    function("_lastError", &get_last_error);
    function("_lastStatus", &get_last_status);
    function("_heapBytesInUse", &heap_bytes_in_use);
    function("_releaseForwardCache", &release_forward_cache);
    // Threads (attnscope/threads.hpp): 1 in the single-threaded module, up to its worker pool + 1 in the threaded one.
    function("_setNumThreads", optional_override([](double n) { return double(set_num_threads(std::size_t(n))); }));
    // The GEMM's register tile (attnscope/kernel_settings.hpp): the wrapper asks for 5 rows in slivers where the
    // build's taller tile is slow (wasm-build.js, gemmTileRows); the tests count the products that read slivers.
    function("_setGemmTileRows", optional_override([](double rows) { return double(set_gemm_tile_rows(std::size_t(rows))); }));
    function("_gemmSliverProducts", optional_override([] { return double(gemm_sliver_products()); }));

    class_<Arena>("_Arena")
        .constructor<>()
        .function("reserve", &Arena::reserve)
        .function("trim", &Arena::trim);

    value_object<TensorArg>("_TensorArg").field("data", &TensorArg::data).field("shape", &TensorArg::shape);
    value_object<MaskArg>("_MaskArg")
        .field("kind", &MaskArg::kind)
        .field("data", &MaskArg::data)
        .field("shape", &MaskArg::shape);

    value_object<AttentionConfig>("_AttentionConfig")
        .field("embedDim", &AttentionConfig::embed_dim)
        .field("numHeads", &AttentionConfig::num_heads)
        .field("kdim", &AttentionConfig::kdim)
        .field("vdim", &AttentionConfig::vdim)
        .field("bias", &AttentionConfig::bias)
        .field("seed", &AttentionConfig::seed);
    value_object<ForwardCall>("_ForwardCall")
        .field("query", &ForwardCall::query)
        .field("key", &ForwardCall::key)
        .field("value", &ForwardCall::value)
        .field("keyPaddingMask", &ForwardCall::key_padding_mask)
        .field("attnMask", &ForwardCall::attn_mask)
        .field("causal", &ForwardCall::causal)
        .field("needWeights", &ForwardCall::need_weights)
        .field("averageWeights", &ForwardCall::average_weights)
        .field("outOutput", &ForwardCall::out_output)
        .field("outWeights", &ForwardCall::out_weights);
    class_<Attention>("_Attention")
        .function("stateDict", &Attention::stateDict)
        .function("loadStateDict", &Attention::loadStateDict)
        .function("forward", &Attention::forward)
        .function("trim", &Attention::trim);
    function("_createAttention", &create_attention, allow_raw_pointers());

    value_object<SdpaCall>("_SdpaCall")
        .field("q", &SdpaCall::q)
        .field("k", &SdpaCall::k)
        .field("v", &SdpaCall::v)
        .field("mask", &SdpaCall::mask)
        .field("causal", &SdpaCall::causal)
        .field("hasScale", &SdpaCall::has_scale)
        .field("scale", &SdpaCall::scale)
        .field("outOutput", &SdpaCall::out_output)
        .field("outWeights", &SdpaCall::out_weights);
    function("_scaledDotProductAttention", &sdpa);

    function("_readSafetensors", &read_safetensors_raw);
    function("_families", &families_value);
    function("_checkFileSize", &check_file_size);
    // Every model, ours and Hugging Face's, is one class (web/src/model.js); the GRU models' two calls are its too.
    class_<Model>("_Model")
        .constructor<>()
        .function("loadFile", &Model::loadFile)
        .function("config", &Model::config)
        .function("parameterBytes", &Model::parameterBytes)
        .function("forward", &Model::forward)
        .function("generate", &Model::generate)
        .function("translate", &Model::translate)
        .function("trace", &Model::trace)
        .function("logitLens", &Model::logitLens)
        .function("patchEach", &Model::patchEach)
        .function("headWeights", &Model::headWeights)
        .function("rnnForward", &Model::rnnForward)
        .function("rnnTranslate", &Model::rnnTranslate);
    class_<Loader>("_Loader")
        .constructor<>()
        .function("open", &Loader::open)
        .function("setIndex", &Loader::setIndex)
        .function("files", &Loader::files)
        .function("neededHeaderBytes", &Loader::neededHeaderBytes)
        .function("addHeader", &Loader::addHeader)
        .function("plan", &Loader::plan)
        .function("allocate", &Loader::allocate)
        .function("write", &Loader::write)
        .function("finish", &Loader::finish);
}
