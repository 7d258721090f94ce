// The consumer app as a user writes it: the package by name, no bundler configuration.
import { init, MultiHeadAttention } from 'attnscope';
import { report } from './report.js';

report(init, MultiHeadAttention);
