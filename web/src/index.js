// attnscope: multi-head attention compiled to WebAssembly SIMD, with every head's weights.
export { init, memoryUsage, runtimeInfo } from './runtime.js';
export { MultiHeadAttention } from './multihead-attention.js';
export { scaledDotProductAttention } from './scaled-dot-product-attention.js';
export { loadModel, supportedFamilies } from './load-model.js';
export { EncoderModel, LanguageModel, Model } from './model.js';
export { ForwardCache } from './forward-cache.js';
// PretrainedLanguageModel: the name of LanguageModel for checkpoints until 0.2 (CHANGELOG): one class serves both.
export { LanguageModel as PretrainedLanguageModel } from './model.js';
export { Seq2SeqModel } from './seq2seq-model.js';
export { RnnSeq2SeqModel } from './rnn-model.js';
export { readSafetensors } from './safetensors.js';
export { hideKeys, sinkMass, valueWeighted } from './research.js';
export { cachePlan, exportCache } from './cache-export.js';
