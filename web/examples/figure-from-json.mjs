// Attention weights saved from Python as JSON, drawn as SVG: node web/examples/figure-from-json.mjs attention.json
// attention.json holds {"tokens": [...], "attention": [layers][heads][queries][keys]}, e.g. from Hugging Face transformers:
//   json.dump({"tokens": tok.convert_ids_to_tokens(ids[0]), "attention": [a[0].tolist() for a in model(ids, output_attentions=True).attentions]}, f)
import { readFileSync, writeFileSync } from 'node:fs';
import { heatmapSvg, modelViewSvg } from 'attnscope/figures';

const { tokens, attention } = JSON.parse(readFileSync(process.argv[2], 'utf8')); // attention[layer][head][query][key]
writeFileSync('model-view.svg', modelViewSvg(attention, tokens, { scale: 'excludeFirstKey' }));
writeFileSync('layer1-head1.svg', heatmapSvg(attention[0], tokens, { head: 0, scale: 'excludeFirstKey' }));
