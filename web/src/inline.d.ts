// Types of 'attnscope/inline': the same API as 'attnscope', with attnscope.wasm and attnscope-relaxed.wasm embedded.
export * from './index.js';
