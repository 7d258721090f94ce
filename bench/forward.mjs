// One thread count's forward-pass comparison in its own Node process (thread pools are per process in every
// library), run by bench/run.mjs:
//   node bench/forward.mjs --threads=N --only=attnscope,ort,... --configs=16x64x4,... [--all-variants] [--quick]
// → progress on stderr, one JSON line on stdout.
import { runForward } from './forward-core.mjs';

const option = (name) => process.argv.slice(2).find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
const result = await runForward({
  ids: option('only').split(','),
  configs: option('configs').split(',').map((c) => c.split('x').map(Number)),
  threads: Number(option('threads') ?? 1),
  allVariants: process.argv.includes('--all-variants'),
  quick: process.argv.includes('--quick'),
  progress: (msg) => process.stderr.write(`[bench] ${msg}\n`),
});
process.stdout.write(JSON.stringify(result) + '\n');
// Thread pools (onnxruntime's workers) would keep the process alive.
process.exit(0);
