// The cache export of an opened model: a checkbox per hook kind (TransformerLens's names, every layer's), the size of
// the file the choice makes before anything runs (cachePlan in the Worker), then the file: exportCache in the Worker,
// its bytes transferred, downloaded as .safetensors with a link to it and to its JSON config.
import { t, getLang } from '../i18n.js';
import { $, download, escapeHtml, escapeAttr } from '../dom.js';
import { DEFAULT_HOOKS, HOOK_KINDS } from './hash.js';

/** Bytes as people read them: 1.2 MB, 36 KB, 512 B. */
export function sizeText(n) {
  const fmt = (x) => x.toLocaleString(getLang() === 'zh' ? 'zh-CN' : 'en-US', { maximumFractionDigits: 1 });
  return n >= 2 ** 20 ? `${fmt(n / 2 ** 20)} MB` : n >= 1024 ? `${fmt(n / 1024)} KB` : `${n} B`;
}

/** The hook kinds this model has: no mid point in a parallel block, no final-norm hook without a final norm. */
const kindsOf = (c) => HOOK_KINDS.filter((k) => (k !== 'hook_resid_mid' || !c.parallel) && (k !== 'ln_final.hook_normalized' || c.finalNorm));
/** The name of one of a kind's hooks as TransformerLens writes it (blocks.{l}.… for a layer's). */
const hookName = (kind) => (kind.startsWith('ln_final') ? kind : `blocks.{l}.${kind}`);

/**
 * @param {{ state: object, invalidate: () => void,
 *   exportCache: (body: { text: string, pair: string, hooks: string[] }) => Promise<object | null> }} app
 */
export function createCacheView(app) {
  const root = $('#open-cache');
  const form = $('#open-cache-form');
  const btn = $('#open-cache-btn');
  const hooks = $('#open-cache-hooks');
  const o = () => app.state.open;
  let last = DEFAULT_HOOKS; // the choice a closed form opens with again
  btn.addEventListener('click', () => {
    if (o().cache) { last = o().cache; o().cache = null; } else o().cache = [...last];
    app.invalidate();
  });
  hooks.addEventListener('change', () => {
    o().cache = HOOK_KINDS.filter((k) => hooks.querySelector(`input[value="${k}"]`)?.checked);
    app.invalidate();
  });
  let family = 'model';
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    if (!o().cache?.length) return;
    const v = await app.exportCache({ text: o().text, pair: o().pair, hooks: o().cache });
    if (v) download(v.safetensors, `attnscope-${family}-cache.safetensors`);
  });
  let drawnKinds = '', links = { value: null, urls: [] };

  /** The two links of the last export, made once per export (their object URLs freed when the next one comes). */
  function linksHtml(v) {
    if (links.value !== v) {
      for (const u of links.urls) URL.revokeObjectURL(u);
      links = { value: v, urls: [URL.createObjectURL(v.safetensors), URL.createObjectURL(v.json)] };
    }
    const [file, json] = links.urls;
    const name = `attnscope-${escapeAttr(family)}-cache`;
    const what = escapeHtml(t('rs.cacheFile', { size: sizeText(v.bytes) }));
    const a = `<a href="${escapeAttr(file)}" download="${name}.safetensors" data-bytes="${v.bytes}">${what}</a>`;
    const b = `<a href="${escapeAttr(json)}" download="${name}.json">${escapeHtml(t('rs.cacheJson'))}</a>`;
    return `${escapeHtml(t('rs.cacheDone', { ms: v.ms.toFixed(0) }))} ${a}${getLang() === 'zh' ? '，' : ', '}${b}`;
  }

  return {
    name: 'openCache',
    root,
    wants: (r) => r.kind === 'hf' && r.load.status === 'ready' && !r.empty && !r.translation,
    render(state, r) {
      root.hidden = false;
      family = r.config.family;
      const chosen = state.open.cache;
      btn.setAttribute('aria-expanded', String(!!chosen));
      btn.textContent = t(chosen ? 'rs.cacheClose' : 'rs.cacheOpen');
      form.hidden = !chosen;
      if (!chosen) return;
      const plan = r.research?.cachePlan;
      const p = plan?.value;
      // Each kind's bytes over every layer, from the plan of every hook the model has.
      const bytes = new Map();
      for (const h of p?.all ?? []) for (const k of HOOK_KINDS) if (h.name === k || h.name.endsWith(`.${k}`)) bytes.set(k, (bytes.get(k) ?? 0) + h.bytes);
      const kinds = kindsOf(r.config);
      // The checkboxes are built again only for another model or language: a rebuild would take a focused box away.
      const sig = `${kinds.join(',')}|${state.lang}`;
      if (drawnKinds !== sig) {
        hooks.innerHTML = kinds.map((k) => `<label class="rs-hook"><input type="checkbox" value="${k}"> <code>${escapeHtml(hookName(k))}</code>
          <span>${escapeHtml(t(`rs.hook.${k}`))}</span> <span class="rs-hook-size" data-kind="${k}"></span></label>`).join('');
        drawnKinds = sig;
      }
      for (const input of hooks.querySelectorAll('input')) input.checked = chosen.includes(input.value);
      for (const s of hooks.querySelectorAll('.rs-hook-size')) s.textContent = bytes.has(s.dataset.kind) ? `· ${sizeText(bytes.get(s.dataset.kind))}` : '';
      const planEl = $('#open-cache-plan');
      const fresh = p && !plan.stale;
      planEl.textContent = !chosen.length ? t('rs.cacheNone') : plan?.error ? plan.error.message : !fresh ? t('open.computing')
        : t('rs.cachePlan', { n: p.hooks.length, T: p.T, size: sizeText(p.bytes), bytes: p.bytes.toLocaleString(state.lang === 'zh' ? 'zh-CN' : 'en-US') });
      planEl.dataset.bytes = fresh && chosen.length ? String(p.bytes) : '';
      $('#open-cache-ablate').hidden = !r.ablate.length;
      const ex = r.research?.exported;
      $('#open-cache-export').disabled = !chosen.length || ex?.status === 'running';
      $('#open-cache-status').textContent = ex?.status === 'running' ? t('rs.cacheRunning') : ex?.status === 'error' ? ex.error.message : '';
      const el = $('#open-cache-links');
      const html = ex?.status === 'done' ? linksHtml(ex.value) : '';
      if (el.dataset.html !== `${state.lang}|${links.urls[0] ?? ''}|${!!html}`) {
        el.innerHTML = html;
        el.dataset.html = `${state.lang}|${links.urls[0] ?? ''}|${!!html}`;
      }
    },
  };
}
