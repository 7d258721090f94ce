// attnscope: multi-head attention compiled to WebAssembly SIMD, with every head's weights.
export { init, memoryUsage, runtimeInfo } from './runtime.js';
export { MultiHeadAttention } from './multihead-attention.js';
export { scaledDotProductAttention } from './scaled-dot-product-attention.js';
export { loadModel, LanguageModel, Seq2SeqModel } from './models.js';
export { RnnSeq2SeqModel } from './rnn-model.js';
export { EncoderModel, PretrainedLanguageModel } from './pretrained.js';
export { readSafetensors } from './safetensors.js';
