// One checkpoint's run of `npm run bench:bf16` (bench/bf16.mjs), in Node and in a page alike: bench/models-core.mjs's
// attnscope run (load, forward passes, memory, the plan), plus a summary of each length's first output: whether every
// logit is finite, the largest |logit|, and SHA-256 digests of the logits and of the attention, which show across
// processes that an F32 and a BF16 file of the same values gave the same bits.
import { runLibrary } from './models-core.mjs';

const hex = (buffer) => Array.from(new Uint8Array(buffer), (b) => b.toString(16).padStart(2, '0')).join('');

async function sha256(array) {
  const bytes = new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
  if (globalThis.crypto?.subtle) return hex(await globalThis.crypto.subtle.digest('SHA-256', bytes));
  const { createHash } = await import('node:crypto');
  return createHash('sha256').update(bytes).digest('hex');
}

/** finite, max |logit|, digests: what the tables and the same-bits check read from one output. */
export async function summarize({ logits, attention }) {
  let finite = true, maxAbs = 0;
  for (let i = 0; i < logits.length; i++) {
    const x = logits[i];
    if (!Number.isFinite(x)) finite = false;
    else if (Math.abs(x) > maxAbs) maxAbs = Math.abs(x);
  }
  return { finite, maxAbsLogit: maxAbs, logits: await sha256(logits), attention: await sha256(attention) };
}

/** runLibrary for attnscope on `files` ({ config, safetensors }: bytes, or a Blob or URL for safetensors). */
export async function runCheckpoint({ files, lengths, runs, threads, simd, distUrl, progress }) {
  const vocab = JSON.parse(new TextDecoder().decode(files.config)).vocab_size;
  const outputs = {};
  const keep = async (T, out) => { outputs[T] = await summarize(out); };
  const result = await runLibrary({ lib: 'attnscope', threads, simd, files, lengths, vocab, runs, distUrl, keep, progress });
  return { ...result, outputs };
}
