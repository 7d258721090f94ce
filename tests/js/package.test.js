// The packed tarball, installed into an empty project: publint and attw pass, import by name (and of
// attnscope/inline, and require()) works, and tsc type-checks a consumer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const sh = (command, args, cwd) => execFileSync(command, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

test('npm pack → npm install → import and tsc in a new project', { timeout: 180_000 }, () => {
  const work = mkdtempSync(path.join(tmpdir(), 'attnscope-consumer-'));
  try {
    // dist/ was built by `npm run build` before the tests; --ignore-scripts keeps prepack's build log out of the JSON.
    const [packed] = JSON.parse(sh('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', work], root));
    const shipped = packed.files.map((f) => f.path).sort();
    for (const file of ['dist/index.js', 'dist/index.d.ts', 'dist/attnscope.mjs', 'dist/attnscope.wasm', 'package.json',
      'dist/runtime-threads.js', 'dist/threads-support.js', 'dist/attnscope-mt.mjs', 'dist/attnscope-mt.wasm', 'dist/attnscope-mt.worker.js', 'dist/attnscope-mt.worker.cjs',
      'dist/attnscope-relaxed.wasm', 'dist/attnscope-relaxed-wasm-base64.js', 'dist/attnscope-mt-relaxed.mjs', 'dist/attnscope-mt-relaxed.wasm',
      'dist/attnscope-mt-relaxed.worker.js', 'dist/attnscope-mt-relaxed.worker.cjs']) {
      assert.ok(shipped.includes(file), `the tarball ships ${file}`);
    }
    assert.ok(!shipped.some((f) => f.startsWith('cpp/') || f.startsWith('tests/')), 'sources and tests stay out of the tarball');

    for (const file of ['LICENSE', 'README.md', 'CHANGELOG.md', 'dist/inline.js', 'dist/attnscope-wasm-base64.js']) {
      assert.ok(shipped.includes(file), `the tarball ships ${file}`);
    }

    // The README is the npm page: every relative link or image must be a file in the tarball (anchors are fine).
    const readme = readFileSync(path.join(root, 'README.md'), 'utf8');
    const relative = [...readme.matchAll(/!?\[[^\]]*\]\(([^)\s]+)\)|<img[^>]+src="([^"]+)"/g)].map((m) => m[1] ?? m[2])
      .filter((target) => !/^(#|https?:|mailto:)/.test(target));
    assert.deepEqual(relative.filter((target) => !shipped.includes(target.replace(/^\.\//, '').replace(/#.*$/, ''))), [], 'README links to files outside the tarball');

    // The tarball as the registry would get it: publint (package.json against the files) and Are the Types Wrong
    // (each entry point's types under every module resolution). require() of this ES module package works from
    // Node 20.19 on (engines), which attw's node16 model does not know: that one rule is off. The .wasm is an asset.
    const tarball = path.join(work, packed.filename);
    sh(process.execPath, [path.join(root, 'node_modules', 'publint', 'src', 'cli.js'), 'run', tarball, '--strict'], root);
    sh(process.execPath, [path.join(root, 'node_modules', '@arethetypeswrong', 'cli', 'dist', 'index.js'), tarball,
      '--ignore-rules', 'cjs-resolves-to-esm', '--exclude-entrypoints', 'attnscope.wasm', '--format', 'ascii'], root);

    writeFileSync(path.join(work, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
    // --prefer-offline, not --offline: the package's own dependencies resolve from their registry documents, which
    // `npm ci` (tarballs by URL from the lock file) may never have put in the cache; they are fetched once if not.
    sh('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', path.join(work, packed.filename)], work);

    writeFileSync(path.join(work, 'consumer.mjs'), `
      import { init, MultiHeadAttention } from 'attnscope';
      await init();
      const mha = new MultiHeadAttention({ embedDim: 8, numHeads: 2, seed: 1 });
      const { output, weights } = mha.forward({ data: new Float32Array(24).fill(0.5), shape: [3, 8] });
      console.log(JSON.stringify({ output: output.shape, weights: weights.shape, sum: weights.data.slice(0, 3).reduce((a, b) => a + b) }));
      mha.dispose();`);
    const result = JSON.parse(sh(process.execPath, ['consumer.mjs'], work));
    // The installed package's threaded build (its worker files resolved inside node_modules).
    writeFileSync(path.join(work, 'threaded.mjs'), `
      import { init, runtimeInfo } from 'attnscope';
      await init({ threads: 2 });
      await import('./consumer.mjs');
      console.log(runtimeInfo().build);`);
    const [threadedResult, build] = sh(process.execPath, ['threaded.mjs'], work).trim().split('\n');
    assert.equal(build, 'threads');
    assert.deepEqual(JSON.parse(threadedResult), result);
    // The same through attnscope/inline and through require(), from the installed package.
    const inline = JSON.parse(sh(process.execPath, ['--input-type=module', '-e', readFileSync(path.join(work, 'consumer.mjs'), 'utf8').replace("from 'attnscope'", "from 'attnscope/inline'")], work));
    assert.deepEqual(inline, result);
    const required = sh(process.execPath, ['-e', "require('attnscope').init().then(() => console.log('required'))"], work);
    assert.equal(required, 'required\n');
    assert.deepEqual(result.output, [3, 8]);
    assert.deepEqual(result.weights, [2, 3, 3]);
    assert.ok(Math.abs(result.sum - 1) < 1e-6);

    writeFileSync(path.join(work, 'consumer.ts'), `
      import { init, runtimeInfo, MultiHeadAttention, scaledDotProductAttention, type Tensor, type ForwardResult, type LanguageModel, type Seq2SeqModel, type TrainedLanguageModel, type TrainedSeq2SeqModel } from 'attnscope';
      await init({ wasmUrl: new URL('./attnscope.wasm', import.meta.url), threads: 'auto' });
      const build: 'single' | 'threads' = runtimeInfo().build;
      const mha = new MultiHeadAttention({ embedDim: 8, numHeads: 2 });
      const x: Tensor = { data: new Float32Array(24), shape: [3, 8] };
      const r: ForwardResult = mha.forward(x, null, null, { causal: true, keyPaddingMask: { data: new Uint8Array(3), shape: [3] } });
      const heads: number = mha.headDim + (r.weights ? r.weights.shape.length : 0);
      // forward's overloads: weights are a Tensor unless needWeights is false, then null; unknown at compile time, either.
      const withWeights: Tensor = mha.forward(x).weights;
      const explicit: Tensor = mha.forward(x, x, x, { needWeights: true, averageWeights: true }).weights;
      const without: null = mha.forward(x, null, null, { needWeights: false }).weights;
      const flag: boolean = Math.random() < 2;
      const either: Tensor | null = mha.forward(x, null, null, { needWeights: flag }).weights;
      export { withWeights, explicit, without, either };
      const s = scaledDotProductAttention(x, x, x, { scale: 0.5 });
      const firstWeight: number = s.weights.data[0];
      mha.loadStateDict({ 'out_proj.bias': new Float32Array(8) });
      mha.dispose();
      // Our files' config and vocab are typed per kind; the deprecated snake_case names still type-check.
      declare const lm: TrainedLanguageModel, s2s: TrainedSeq2SeqModel;
      // Every model's architecture is one type, ours and a checkpoint's alike.
      declare const any: LanguageModel | Seq2SeqModel;
      const kvHeads: number = any.architecture.kvHeads + (any.architecture.encoder?.layers ?? 0);
      const sizes: number[] = [lm.config.numHeads, lm.config.maxLen, lm.vocab.bosId, s2s.config.numDecoderLayers, s2s.vocab.targetEosId,
        lm.config.n_heads, s2s.vocab.tgt_eos_id, lm.header.named_heads.length];
      export { heads, firstWeight, build, sizes, kvHeads };`);
    writeFileSync(path.join(work, 'bad.ts'), `
      import { MultiHeadAttention, type Tensor } from 'attnscope';
      new MultiHeadAttention({ embedDim: '8', numHeads: 2 });
      const mha = new MultiHeadAttention({ embedDim: 8, numHeads: 2 });
      export const weights: Tensor = mha.forward([[1]], null, null, { needWeights: false }).weights;`);
    const tsconfig = { compilerOptions: { strict: true, noEmit: true, module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', lib: ['es2022', 'dom'] } };
    writeFileSync(path.join(work, 'tsconfig.json'), JSON.stringify({ ...tsconfig, files: ['consumer.ts'] }));
    const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
    sh(process.execPath, [tsc, '-p', 'tsconfig.json'], work);
    // The declarations really constrain callers: a string embedDim does not type-check.
    writeFileSync(path.join(work, 'tsconfig.json'), JSON.stringify({ ...tsconfig, files: ['bad.ts'] }));
    assert.throws(() => sh(process.execPath, [tsc, '-p', 'tsconfig.json'], work), (e) =>
      /bad\.ts\(3,.*error TS2322: Type 'string' is not assignable to type 'number'/.test(e.stdout) &&
      // ...and weights of a needWeights: false call are null, not a Tensor.
      /bad\.ts\(5,.*error TS2322: Type 'null' is not assignable to type 'Tensor'/.test(e.stdout));
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
});
