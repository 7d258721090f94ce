// Stands in for the Node built-ins tfjs-backend-wasm's ES bundle imports at its top (fs, os, path, perf_hooks); it
// only uses them under Node, so in the page an empty module is enough.
export default {};
