// Types of 'attnscope/inline': the same API as 'attnscope', with attnscope.wasm embedded.
export * from './index.js';
