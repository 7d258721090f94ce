// The consumer app that places attnscope.wasm itself (copied to ./copied/ beside the page) and says so.
import { init, MultiHeadAttention } from 'attnscope';
import { report } from './report.js';

report(() => init({ wasmUrl: './copied/attnscope.wasm' }), MultiHeadAttention);
