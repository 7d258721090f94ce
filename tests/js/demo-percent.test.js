// The page's one way of printing a probability in its lists (web/demo/src/percent.js): GPT-2's top ten after a
// random prompt are mostly below 0.05 %, which printed as "0.0%" in the opened model's lists and the logit lens.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { percent } from '../../web/demo/src/percent.js';

test('percent: whole percents from 10 to 99, one decimal outside, "<0.1%" below 0.1 %, "100%" only when it rounds there', () => {
  const cases = [[0, '<0.1%'], [0.0004, '<0.1%'], [0.000999, '<0.1%'], [0.001, '0.1%'], [0.0123, '1.2%'], [0.0996, '10.0%'],
    [0.1, '10%'], [0.456, '46%'], [0.99, '99%'], [0.9949, '99.5%'], [0.9994, '99.9%'], [0.9995, '100%'], [1, '100%']];
  for (const [p, said] of cases) assert.equal(percent(p), said, `percent(${p})`);
});
