// Named heads (measured behaviour from the model files) in the page's language.
import { t, getLang, MESSAGES } from '../i18n.js';

// tools/measure/lm_heads.py's GUIDED_SUFFIX: a head trained towards its pattern by an extra loss says so in either language.
const GUIDED = /\s*\(guided in training\)/;

/** A named head's name in the page's language (the model files name them in English). */
export function headName(n) {
  const guided = GUIDED.test(n.name) ? t('mv.guided') : '';
  const english = n.name.replace(GUIDED, '').replace(/\s*\((Chinese|English) text\)$/, '');
  if (getLang() !== 'zh' || !MESSAGES.zh[`metric.${n.metric}`]) return english + guided;
  return MESSAGES.zh[`metric.${n.metric}`] + guided;
}

export const namedTitle = (n) => t('mv.namedTitle', { name: headName(n), metric: n.metric, score: n.score.toFixed(3), threshold: n.threshold ?? '–' })
  + (n.text === 'zh' || n.text === 'en' ? ` ${t(n.text === 'zh' ? 'mv.measuredZh' : 'mv.measuredEn')}` : '');

/** What a named head's measurement is, and what a head attending uniformly would score on it. */
export function metricText(model, n) {
  const key = `def.${n.metric}`;
  const def = MESSAGES[getLang()][key] ?? MESSAGES.en[key];
  const base = n.baseline ?? model.training?.head_analysis?.baselines?.[n.metric];
  return [def, typeof base === 'number' ? t('mv.baseline', { x: base.toFixed(2) }) : null].filter(Boolean).join('; ');
}

/** The strongest weights of one L×S map, as a sentence for screen readers: "it → animal 0.41, …". */
export function strongest(data, offset, rows, cols, k = 5) {
  const L = rows.length, S = cols.length;
  const best = [];
  for (let i = 0; i < L; i++) {
    for (let j = 0; j < S; j++) {
      const v = data[offset + i * S + j];
      if (best.length < k || v > best[best.length - 1].v) {
        best.push({ i, j, v });
        best.sort((a, b) => b.v - a.v);
        if (best.length > k) best.pop();
      }
    }
  }
  return best.map(({ i, j, v }) => `${rows[i]} → ${cols[j]} ${v.toFixed(2)}`).join(', ');
}
