// The "Open a model" control's input: picked files, a picked or dropped folder, a folder URL, cancel; and the inputs
// of the opened model (text, sentence B, tokens, layer, head, a head off, continue, export). Handlers only change
// the state or start a load; drawing is the views'.
import { $ } from '../dom.js';
import { sortHeads } from '../heads/off.js';
import { openTextFor, sampleIds, isIdList } from './hash.js';
import { sampleFiles } from './sample.js';

/** The files of a checkpoint that the loader reads; others in a folder are left out. */
const WANTED = /^(config\.json|tokenizer\.json|tokenizer_config\.json|model\.safetensors\.index\.json|.*\.safetensors)$/;

/** Files by their own names (a folder's files keep only their base name: the loader wants Hugging Face's names). */
export function checkpointFiles(files) {
  const out = {};
  for (const f of files) if (WANTED.test(f.name)) out[f.name] = f;
  return out;
}

/** Every File under a dropped item (a folder is read through its entries). */
async function dropped(items) {
  const files = [];
  const walk = async (entry) => {
    if (!entry) return;
    if (entry.isFile) files.push(await new Promise((ok, no) => entry.file(ok, no)));
    else if (entry.isDirectory) {
      const reader = entry.createReader();
      for (;;) {
        const batch = await new Promise((ok, no) => reader.readEntries(ok, no));
        if (!batch.length) break;
        for (const e of batch) await walk(e);
      }
    }
  };
  const entries = [...items].map((it) => it.webkitGetAsEntry?.()).filter(Boolean);
  if (entries.length) for (const e of entries) await walk(e);
  return files;
}

/** A folder URL as loadModel takes it (with its trailing slash), or null when it is not an http(s) URL. */
export function folderUrl(text) {
  try {
    const u = new URL(String(text).trim(), location.href);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return null;
    if (!u.pathname.endsWith('/')) u.pathname += '/';
    return u.href;
  } catch {
    return null;
  }
}

/**
 * @param {{ state: object, invalidate: () => void, session: object, continueTokens: number,
 *           exportFigure: (kind: 'png' | 'svg' | 'html') => void, onError: (key: string) => void }} app
 * @returns {{ openSample: (fromLink?: boolean) => void }}
 */
export function bindOpenPanel(app) {
  const { state, session } = app;
  const o = () => state.open;
  // The shown model's query, heads and link, taken when a load starts over it: a load that fails leaves that model
  // open, and these come back with it (a load started over a load still running keeps the earlier model's).
  let shownView = null;
  const start = (source) => {
    if (session.load.status === 'ready') shownView = { query: o().query, ablate: o().ablate, layer: o().layer, head: o().head, url: o().url, sample: o().sample };
    // A link reopens its model with its own view (query, layer, head, heads off); any other open starts afresh.
    if (!source.fromLink) { o().query = -1; o().ablate = []; o().layer = 0; o().head = 0; }
    // What a link can reopen: a folder URL, or the sample served with the page; files from a disk it cannot.
    o().url = source.url ?? '';
    o().sample = !!source.sample;
    session.open(source).then((current) => {
      if (!current) return; // a newer open replaced this one
      // The load failed and left the model before it open: its query, heads and link as they were.
      if (session.load.failed) { if (shownView) Object.assign(o(), shownView); app.invalidate(); return; }
      const info = session.load.info;
      // Without tokenizer.json the page reads token ids: a sentence is replaced by sample ids, so the maps show at once.
      if (info && !info.hasTokenizer) {
        if (!isIdList(o().text)) { o().text = sampleIds(info.config.vocabSize); o().query = -1; app.invalidate(); }
        return;
      }
      // The example sentence follows the kind of model: an encoder gets a word to fill in.
      const text = openTextFor(o().text, state.lang, info?.kind === 'encoder');
      if (text !== o().text) { o().text = text; app.invalidate(); }
    });
  };
  const fromFiles = (list) => {
    const files = checkpointFiles(list);
    if (!files['config.json']) { app.onError('open.noConfig'); return; }
    // Some translation checkpoints hold only SentencePiece models (source.spm, target.spm), which the page cannot read.
    const spm = !files['tokenizer.json'] && [...list].some((f) => /\.spm$/.test(f.name));
    start(spm ? { files, spm } : { files });
  };
  $('#open-files').addEventListener('change', (e) => { fromFiles(e.target.files); e.target.value = ''; });
  $('#open-folder').addEventListener('change', (e) => { fromFiles(e.target.files); e.target.value = ''; });
  /** Opens the sample served with the page; `fromLink`: a link's, which keeps the link's view. */
  const openSample = (fromLink = false) => {
    sampleFiles().then((list) => start({ files: checkpointFiles(list), sample: true, fromLink }), () => app.onError('open.sampleFailed'));
  };
  $('#open-sample').addEventListener('click', () => openSample());
  const drop = $('#open-drop');
  drop.addEventListener('dragover', (e) => { e.preventDefault(); drop.classList.add('over'); });
  drop.addEventListener('dragleave', () => drop.classList.remove('over'));
  drop.addEventListener('drop', async (e) => {
    e.preventDefault();
    drop.classList.remove('over');
    const items = e.dataTransfer.items;
    const list = items?.length && items[0].webkitGetAsEntry?.() ? await dropped(items) : [...e.dataTransfer.files];
    fromFiles(list);
  });
  $('#open-url-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const url = folderUrl($('#open-url').value);
    if (!url) { app.onError('open.badUrl'); return; }
    start({ url });
  });
  $('#open-cancel').addEventListener('click', () => session.cancel());
  // A link's folder URL: fetched only once the person agrees (session.ask).
  $('#open-link-yes').addEventListener('click', () => { if (session.load.status === 'ask') start(session.load.source); });
  $('#open-link-no').addEventListener('click', () => { o().url = ''; session.dismiss(); });

  const change = (fn) => (e) => { fn(e); app.invalidate(); };
  $('#open-text').addEventListener('input', change((e) => { o().text = e.target.value; o().query = -1; }));
  $('#open-pair').addEventListener('input', change((e) => { o().pair = e.target.value; o().query = -1; }));
  $('#open-tokens').addEventListener('click', change((e) => { const b = e.target.closest('[data-i]'); if (b) o().query = Number(b.dataset.i); }));
  $('#open-layer').addEventListener('change', change((e) => { o().layer = Number(e.target.value); }));
  $('#open-head').addEventListener('change', change((e) => { o().head = Number(e.target.value); }));
  $('#open-ablate').addEventListener('click', change(() => {
    const { layer, head, ablate } = o();
    const on = ablate.some((x) => x.layer === layer && x.head === head);
    o().ablate = sortHeads(on ? ablate.filter((x) => x.layer !== layer || x.head !== head) : [...ablate, { layer, head }]);
  }));
  $('#open-predict').addEventListener('click', async (e) => {
    const b = e.target.closest('#open-continue');
    if (!b) return;
    b.disabled = true;
    try {
      o().text += await session.continueText(state, app.continueTokens);
      $('#open-text').value = o().text;
      o().query = -1;
      app.invalidate();
    } finally {
      b.disabled = false;
    }
  });
  $('#open-export-png').addEventListener('click', () => app.exportFigure('png'));
  $('#open-export-svg').addEventListener('click', () => app.exportFigure('svg'));
  $('#open-export-html').addEventListener('click', () => app.exportFigure('html'));
  return { openSample };
}
