// The consumer app for bundlers that do not follow new URL(…, import.meta.url): the .wasm comes embedded.
import { init, MultiHeadAttention } from 'attnscope/inline';
import { report } from './report.js';

report(init, MultiHeadAttention);
