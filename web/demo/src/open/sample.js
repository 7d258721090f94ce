// The sample checkpoint served with the page (web/demo/sample/tiny-gpt2, made by tools/references/make_sample_model.py):
// its files as File objects, so "Try the sample model" opens it the way picked files open. They are assets of the
// build, so the service worker caches them and the sample opens offline.
const URLS = import.meta.glob('../../sample/tiny-gpt2/*.{json,safetensors}', { query: '?url', import: 'default', eager: true });

/** The sample's files by their Hugging Face names (config.json, model.safetensors, tokenizer.json, …). */
export async function sampleFiles() {
  return Promise.all(Object.entries(URLS).map(async ([path, url]) => {
    const res = await fetch(url);
    if (!res.ok) throw new Error(`${url}: HTTP ${res.status}`);
    return new File([await res.blob()], path.slice(path.lastIndexOf('/') + 1));
  }));
}
