// The Embind registration of the npm package's module: a list of what the adapters (marshal, attention_bindings,
// model_bindings) define. cpp/bindings/ is the only folder that includes <emscripten/...>.
// Raw entry points take WASM-heap addresses and report errors as a Status (message via _lastError()), so no
// C++ exception ever crosses into JS; web/src wraps all of this into the public API. Calls speak in enums and
// value objects (a call's dimensions, its buffers), and every size, shape and key the wrapper needs comes
// from here, so the JS side never re-derives one.
#include <emscripten/bind.h>

#include "attention_bindings.hpp"
#include "marshal.hpp"
#include "model_bindings.hpp"
#include "pretrained_bindings.hpp"

using namespace attnscope;
using namespace attnscope::bindings;

EMSCRIPTEN_BINDINGS(attnscope)
{
    using namespace emscripten;
    reserve_error_room();
    enum_<Status>("_Status")
        .value("ok", Status::ok)
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
    // Threads (attnscope/threads.hpp): 1 in the single-threaded module, up to its worker pool + 1 in the threaded one.
    function("_setNumThreads", optional_override([](double n) { return double(set_num_threads(std::size_t(n))); }));
    function("_numThreads", optional_override([] { return double(num_threads()); }));
    function("_memoryLimitBytes", &memory_limit_bytes);

    class_<Arena>("_Arena")
        .constructor<>()
        .function("reserve", &Arena::reserve)
        .function("trim", &Arena::trim);

    value_object<AttentionConfig>("_AttentionConfig")
        .field("embedDim", &AttentionConfig::embed_dim)
        .field("numHeads", &AttentionConfig::num_heads)
        .field("kdim", &AttentionConfig::kdim)
        .field("vdim", &AttentionConfig::vdim)
        .field("bias", &AttentionConfig::bias)
        .field("seed", &AttentionConfig::seed);
    value_object<ForwardCall>("_ForwardCall")
        .field("batch", &ForwardCall::batch)
        .field("queryLen", &ForwardCall::query_len)
        .field("keyLen", &ForwardCall::key_len)
        .field("keyPaddingMask", &ForwardCall::key_padding_mask)
        .field("attnMask", &ForwardCall::attn_mask)
        .field("attnMaskPerHead", &ForwardCall::attn_mask_per_head)
        .field("causal", &ForwardCall::causal)
        .field("needWeights", &ForwardCall::need_weights)
        .field("averageWeights", &ForwardCall::average_weights);
    value_object<ForwardBuffers>("_ForwardBuffers")
        .field("query", &ForwardBuffers::query)
        .field("key", &ForwardBuffers::key)
        .field("value", &ForwardBuffers::value)
        .field("keyPaddingMask", &ForwardBuffers::key_padding_mask)
        .field("attnMask", &ForwardBuffers::attn_mask)
        .field("output", &ForwardBuffers::output)
        .field("weights", &ForwardBuffers::weights);
    class_<Attention>("_Attention")
        .function("stateDictShapes", &Attention::stateDictShapes)
        .function("stateDict", &Attention::stateDict)
        .function("loadStateDict", &Attention::loadStateDict)
        .function("plan", &Attention::plan)
        .function("forward", &Attention::forward)
        .function("trim", &Attention::trim);
    function("_createAttention", &create_attention, allow_raw_pointers());

    value_object<SdpaCall>("_SdpaCall")
        .field("qShape", &SdpaCall::q_shape)
        .field("kShape", &SdpaCall::k_shape)
        .field("vShape", &SdpaCall::v_shape)
        .field("maskShape", &SdpaCall::mask_shape)
        .field("mask", &SdpaCall::mask)
        .field("causal", &SdpaCall::causal)
        .field("scale", &SdpaCall::scale);
    value_object<SdpaBuffers>("_SdpaBuffers")
        .field("q", &SdpaBuffers::q)
        .field("k", &SdpaBuffers::k)
        .field("v", &SdpaBuffers::v)
        .field("mask", &SdpaBuffers::mask)
        .field("output", &SdpaBuffers::output)
        .field("weights", &SdpaBuffers::weights);
    function("_planScaledDotProductAttention", &sdpa_plan);
    function("_scaledDotProductAttention", &sdpa_run);

    function("_readSafetensors", &read_safetensors_raw);
    class_<Model>("_Model")
        .constructor<>()
        .function("load", &Model::load)
        .function("lmForward", &Model::lmForward)
        .function("lmGenerate", &Model::lmGenerate)
        .function("seq2seqForward", &Model::seq2seqForward)
        .function("seq2seqTranslate", &Model::seq2seqTranslate);

    class_<HfModel>("_PretrainedModel")
        .constructor<>()
        .function("config", &HfModel::config)
        .function("parameterBytes", &HfModel::parameterBytes)
        .function("forward", &HfModel::forward)
        .function("generate", &HfModel::generate)
        .function("trace", &HfModel::trace);
    class_<HfLoader>("_PretrainedLoader")
        .constructor<>()
        .function("open", &HfLoader::open)
        .function("setIndex", &HfLoader::setIndex)
        .function("files", &HfLoader::files)
        .function("neededHeaderBytes", &HfLoader::neededHeaderBytes)
        .function("addHeader", &HfLoader::addHeader)
        .function("allocate", &HfLoader::allocate)
        .function("write", &HfLoader::write)
        .function("finish", &HfLoader::finish);
}
