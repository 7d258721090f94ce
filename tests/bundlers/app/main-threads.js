// The consumer app asking for threads: init({ threads: 2 }), the same forward pass, and what runtimeInfo() says.
// The page's ?threadsUrl= (set by the test) is where the threaded files are served, if anywhere.
import { init, MultiHeadAttention, runtimeInfo } from 'attnscope';
import { report } from './report.js';

const threadsUrl = new URLSearchParams(location.search).get('threadsUrl');
report((options) => init({ ...options, threads: 2, ...(threadsUrl && { threadsUrl }) }), MultiHeadAttention, runtimeInfo);
