// One thread count's forward-pass comparison in its own Node process (thread pools are per process in every
// library), run by bench/run.mjs:
//   node bench/forward.mjs --threads=N --only=attnscope,ort,... --configs=16x64x4,... [--busy=N] [--all-variants] [--quick]
// → progress on stderr, one JSON line on stdout.
import { parseArgs } from 'node:util';
import { runForward } from './forward-core.mjs';

const { values: options } = parseArgs({
  options: {
    only: { type: 'string' }, configs: { type: 'string' }, threads: { type: 'string', default: '1' }, busy: { type: 'string', default: '0' },
    'all-variants': { type: 'boolean', default: false }, quick: { type: 'boolean', default: false },
  },
});
if (!options.only || !options.configs) throw new Error('usage: node bench/forward.mjs --threads=N --only=attnscope,... --configs=16x64x4,... [--all-variants] [--quick]');
const result = await runForward({
  ids: options.only.split(','),
  configs: options.configs.split(',').map((c) => c.split('x').map(Number)),
  threads: Number(options.threads),
  busy: Number(options.busy),
  allVariants: options['all-variants'],
  quick: options.quick,
  progress: (msg) => process.stderr.write(`[bench] ${msg}\n`),
});
process.stdout.write(JSON.stringify(result) + '\n');
// Thread pools (onnxruntime's workers) would keep the process alive.
process.exit(0);
