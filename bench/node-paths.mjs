// The repository root for the Node-only parts of the bench (bench/common.mjs stays importable by the browser page).
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
