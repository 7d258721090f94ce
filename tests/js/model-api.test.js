// The trained models' methods check their arguments like MultiHeadAttention.forward: TypeError for a wrong type,
// RangeError for a wrong value, each naming the call and the argument; the model stays usable afterwards.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useShippedModels } from './helpers.js';

let lm;
let s2s;
useShippedModels((models) => ({ lm, s2s } = models));

test('LanguageModel: generate, forward, tokenize and detokenize validate their arguments', () => {
  const cases = [
    [() => lm.generate('abc', { maxNewTokens: -1 }), 'RangeError', /LanguageModel.generate: options.maxNewTokens: expected a whole number from 0 to \d+, got -1/],
    [() => lm.generate('abc', { maxNewTokens: NaN }), 'RangeError', /maxNewTokens: .*got NaN/],
    [() => lm.generate('abc', { maxNewTokens: Infinity }), 'RangeError', /maxNewTokens: .*got Infinity/],
    [() => lm.generate('abc', { maxNewTokens: 2.5 }), 'RangeError', /got 2.5/],
    [() => lm.generate('abc', { maxNewTokens: '5' }), 'TypeError', /maxNewTokens: expected a whole number, got string "5"/],
    [() => lm.generate('abc', null), 'TypeError', /LanguageModel.generate: options: expected an options object, got null/],
    [() => lm.generate('abc', { maxTokens: 3 }), 'TypeError', /unknown option 'maxTokens' \(expected one of maxNewTokens, stopToken, ablate\)/],
    [() => lm.generate(42), 'TypeError', /LanguageModel.generate: prompt: expected text or an array of token ids, got number 42/],
    [() => lm.generate([]), 'RangeError', new RegExp(`expected from 1 to ${lm.config.maxLen} token ids \\(the model's limit\\), got 0`)],
    [() => lm.forward('abc', { needAttention: 'no' }), 'TypeError', /LanguageModel.forward: options.needAttention: expected true or false, got string "no"/],
    [() => lm.forward([1, 2.5]), 'RangeError', new RegExp(`tokens\\[1\\]: expected a token id from 0 to ${lm.config.vocabSize - 1}, got 2.5`)],
    [() => lm.forward([1, '2']), 'TypeError', /input\[1\]: expected a token id \(a whole number\), got string "2"/],
    [() => lm.forward(new Array(lm.config.maxLen + 1).fill(2)), 'RangeError', new RegExp(`expected from 1 to ${lm.config.maxLen} token ids \\(the model's limit\\), got ${lm.config.maxLen + 1}`)],
    [() => lm.detokenize([5, 99999, -3]), 'RangeError', new RegExp(`LanguageModel.detokenize: ids\\[1\\]: expected a token id from 0 to ${lm.config.vocabSize - 1}, got 99999`)],
    [() => lm.detokenize('abc'), 'TypeError', /detokenize: ids: expected an array of token ids, got string/],
    [() => lm.detokenize([null]), 'TypeError', /ids\[0\]: expected a token id \(a whole number\), got null/],
    [() => lm.tokenize(5), 'TypeError', /LanguageModel.tokenize: text: expected a string, got number 5/],
  ];
  for (const [call, name, message] of cases) assert.throws(call, { name, message }, String(call));
  // Valid edge values work, and the model is unharmed by the errors.
  assert.deepEqual(lm.generate('abc', { maxNewTokens: 0 }).ids, []);
  assert.equal(lm.generate('abc', { maxNewTokens: 3 }).ids.length, 3);
  assert.equal(lm.generate('abc', undefined).ids.length > 0, true);
  assert.equal(lm.forward('abc', { needAttention: false }).attention, null);
  assert.equal(lm.detokenize([0, 1]), '', 'specials are dropped');
  assert.equal(lm.detokenize(lm.tokenize('hello').ids), 'hello');
});

test('Seq2SeqModel: translate and forward validate their arguments; maxSteps keeps crossAttention a tensor', () => {
  const { maxTargetLen: maxTgt, maxSourceLen: maxSrc, sourceVocabSize: srcVocab, targetVocabSize: tgtVocab } = s2s.config;
  const cases = [
    [() => s2s.translate('may 1 2020', { maxSteps: 0 }), 'RangeError', new RegExp(`Seq2SeqModel.translate: options.maxSteps: expected a whole number from 1 to ${maxTgt}, got 0`)],
    [() => s2s.translate('may 1 2020', { maxSteps: maxTgt + 1 }), 'RangeError', new RegExp(`options.maxSteps: expected a whole number from 1 to ${maxTgt}, got ${maxTgt + 1}`)],
    [() => s2s.translate('may 1 2020', { maxSteps: 2.5 }), 'RangeError', new RegExp(`options.maxSteps: expected a whole number from 1 to ${maxTgt}, got 2.5`)],
    [() => s2s.translate('may 1 2020', { maxSteps: '3' }), 'TypeError', /maxSteps: expected a whole number, got string "3"/],
    [() => s2s.translate('may 1 2020', null), 'TypeError', /translate: options: expected an options object, got null/],
    [() => s2s.translate(['may']), 'TypeError', /source\[0\]: expected a token id \(a whole number\), got string "may"/],
    [() => s2s.translate([1000]), 'RangeError', new RegExp(`source\\[0\\]: expected a token id from 0 to ${srcVocab - 1}, got 1000`)],
    [() => s2s.translate(new Array(maxSrc + 1).fill(3)), 'RangeError', new RegExp(`source: expected from 1 to ${maxSrc} token ids \\(the model's limit\\), got ${maxSrc + 1}`)],
    [() => s2s.translate(7), 'TypeError', /Seq2SeqModel.translate: source: expected text or an array of token ids, got number 7/],
    [() => s2s.forward('may 1 2020', [1, 99]), 'RangeError', new RegExp(`Seq2SeqModel.forward: target\\[1\\]: expected a token id from 0 to ${tgtVocab - 1}, got 99`)],
    [() => s2s.forward('may 1 2020', 'x'), 'TypeError', /target: expected an array of token ids, got string/],
    [() => s2s.forward('may 1 2020', new Array(maxTgt + 1).fill(1)), 'RangeError', new RegExp(`target: expected from 1 to ${maxTgt} token ids`)],
    [() => s2s.forward('may 1 2020', [1], { needAttention: 1 }), 'TypeError', /needAttention: expected true or false, got number 1/],
    [() => s2s.tokenizeSource(null), 'TypeError', /tokenizeSource: text: expected a string, got null/],
  ];
  for (const [call, name, message] of cases) assert.throws(call, { name, message }, String(call));
  const one = s2s.translate('the first of may two thousand', { maxSteps: 1 });
  assert.equal(one.outputIds.length, 1);
  assert.deepEqual(one.crossAttention.shape.slice(2, 3), [1], 'crossAttention is a tensor for every valid maxSteps');
  assert.equal(s2s.forward('may 1 2020', [1], { needAttention: false }).crossAttention, null);
});
