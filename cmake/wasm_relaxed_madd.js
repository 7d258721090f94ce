// The JS side of cmake/wasm_relaxed_madd.h's marker import, so Emscripten links the relaxed-SIMD modules: after the
// link scripts/wasm-relaxed-madd.mjs replaces every call to it by f32x4.relaxed_madd and removes the import, so a
// shipped module never reaches this.
mergeInto(LibraryManager.library, {
  attnscope_relaxed_madd: function () {
    throw new Error('attnscope_relaxed_madd was called: this module skipped the post-link step scripts/wasm-relaxed-madd.mjs');
  },
});
