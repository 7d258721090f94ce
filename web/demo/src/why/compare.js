// The two GRUs' answers side by side, and the long sentences where the fixed context vector loses the date.
// Pure: strings from the two runs.
import { escapeHtml } from '../dom.js';
import { t } from '../i18n.js';

/**
 * Sentences past the fixed vector's reach, each with the date in it. Found by running both shipped GRU files
 * (models/dates-gru*.safetensors) on sentences with the date first and everyday words after it, as
 * tools/records/bottleneck.md measures: the model without attention loses part of the date (the year of the first,
 * the day of the second) and the one with attention reads it. why.test.js runs both models on them.
 */
export const LONG_EXAMPLES = [
  {
    text: 'On 13 September 2024 the company held its annual meeting at the hotel by the harbour and the mayor '
      + 'opened the festival and then the band played until late in the evening while the children ate dinner '
      + 'in the garden with their teachers and their friends and the crew of the ship',
    answer: '2024-09-13',
  },
  {
    text: '12 october nineteen oh five is the date on the back of the old photograph of the house where my '
      + 'grandfather lived with his wife and their children before the family moved to the city and opened a '
      + 'shop near the station where they sold bread and milk to the workers of the factory',
    answer: '1905-10-12',
  },
];

// Words the models read as <unk> or as function words (no number, no month): what "Add ten words" appends, ten at a time.
const FILLER = ('and then we walked along the old road to the station where the train was waiting for the family and '
  + 'their friends while the children played in the garden behind the little house by the river and the band '
  + 'played songs about the sea until late in the evening').split(' ');

/** `text` with the next ten words of the filler after it (the filler starts again after its last word). */
export function withTenMoreWords(text, wordsNow) {
  const start = (wordsNow * 7) % FILLER.length; // a different stretch each time, so the sentence does not loop in tens
  const more = Array.from({ length: 10 }, (_, i) => FILLER[(start + i) % FILLER.length]);
  return `${text.replace(/\s+$/, '')} ${more.join(' ')}`;
}

/** An answer as text, without the end token. */
export const answerText = (tokens) => tokens.filter((x) => x !== '<eos>').join('');

/**
 * Both answers side by side: each model's answer, and whether they agree. For one of LONG_EXAMPLES (a known
 * date), each answer is marked right or wrong.
 */
export function compareHtml(run, text) {
  const none = answerText(run.bottleneck.tokens), attn = answerText(run.attention.tokens);
  const known = LONG_EXAMPLES.find((e) => e.text === text)?.answer;
  const mark = (a) => (known == null ? '' : a === known
    ? `<span class="why-ok">✓ ${escapeHtml(t('why.right'))}</span>`
    : `<span class="why-bad">✗ ${escapeHtml(t('why.wrong'))}</span>`);
  const side = (cls, label, a) => `<div class="why-cmp-side ${cls}"><span class="why-cmp-label">${escapeHtml(label)}</span>`
    + `<code class="why-cmp-answer">${escapeHtml(a || '—')}</code>${mark(a)}</div>`;
  const n = run.sourceTokens.length;
  const verdict = none === attn ? t('why.same', { n }) : t('why.differ', { n });
  return side('none', t('why.cmpNone'), none) + side('attn', t('why.cmpAttn'), attn)
    + `<p class="why-verdict">${escapeHtml(verdict)}${known == null ? '' : ` ${escapeHtml(t('why.known', { a: known }))}`}</p>`;
}
