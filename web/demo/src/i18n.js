// The page's words in English and Chinese; t(key, vars) fills {placeholders}.

const en = {
  'doc.title': 'attnscope — see what each attention head looks at',
  tagline: 'See what every attention head looks at. Multi-head attention, computed in your browser by WebAssembly SIMD.',
  intro:
    'Attention lets each token rebuild itself from the others. Every token asks a question (its query, Q) and offers a label (key, K) and some content (value, V). A head compares the query with every key, turns the comparisons into weights that add up to 1, and mixes the values with those weights. Several heads do this side by side, each with projections of its own.',
  honesty:
    'The weights here are random (made from the seed), not trained: the patterns show how attention works, not what a language model has learned. A trained model’s weights can be loaded through the page’s model module.',
  'mode.label': 'Mode',
  'mode.self': 'Self-attention',
  'mode.cross': 'Encoder–decoder (cross) attention',
  'input.sentence': 'Sentence',
  'input.source': 'Source — the encoder side, gives keys and values',
  'input.target': 'Target — the decoder side, asks the queries',
  'input.examples': 'Examples:',
  'ex.en': 'English',
  'ex.zh': 'Chinese',
  'ex.pair': 'English → Chinese',
  'ex.pairFr': 'English → French',
  tokens: 'Tokens',
  'tokens.source': 'Source tokens',
  'tokens.target': 'Target tokens',
  tokensHint: 'Words and punctuation for Latin text, one token per Chinese character. Click a token to follow it through the steps below.',
  truncated: 'Only the first {n} of {total} tokens are used.',
  empty: 'Type a sentence to begin.',
  'ctl.embed': 'Embedding size',
  'ctl.heads': 'Heads',
  'ctl.seed': 'Seed',
  'ctl.causal': 'Causal mask',
  'ctl.causalTitle': 'Each token may only attend to itself and earlier tokens.',
  'ctl.causalCross': 'The causal mask applies to self-attention only.',
  'ctl.cmap': 'Colours',
  'ctl.scale': 'Colour scale',
  'scale.max': '0 → largest weight',
  'scale.one': '0 → 1',
  'btn.link': 'Copy link',
  'btn.linkDone': 'Link copied',
  'btn.linkInBar': 'Link is in the address bar',
  'btn.json': 'Weights as JSON',
  'btn.lang': '中文',
  'btn.langTitle': '切换到中文',
  'btn.close': 'Close',
  timing: 'forward (WASM) {ms} ms',
  timingTitle: 'Time of the WebAssembly forward pass alone (performance.now around forward); the whole page update took {total} ms.',
  'sec.maps': 'Attention weights, head by head',
  'sec.mapsText':
    'Each row is a query token, each column a key token; a cell shows how much that query attends to that key, and every row adds up to 1. Hover a cell for its exact value; click a map to enlarge it.',
  'sec.mapsTextCross':
    'Rows are target tokens (the queries), columns are source tokens (the keys and values): each map is a soft alignment of the target sentence to the source.',
  head: 'Head {n}',
  average: 'Average of all heads',
  axes: 'rows: query · columns: key',
  legend: 'attention weight',
  'sec.headview': 'Head view',
  'sec.headviewText':
    'As in bertviz: every query token on the left is joined to the key tokens on the right, and the more opaque a line, the larger its weight. Each head has its own colour. Hover a token to see only its lines; switch heads on or off with the buttons.',
  'hv.queries': 'queries',
  'hv.keys': 'keys',
  'hv.legend': 'line opacity = attention weight',
  'hv.hint': 'Click a query token to follow it through the three steps below.',
  'hv.all': 'all',
  'hv.none': 'none',
  'sec.steps': 'The three steps, for one query token',
  'sec.stepsText': 'Follow one token through one head: score, scale, softmax, then mix the values. The numbers are recomputed from the layer’s weights and checked against the WASM result.',
  'steps.query': 'Query token',
  'steps.head': 'Head',
  'step1.title': 'Score: compare the query with every key',
  'step1.text': 'The dot product q·kⱼ of the query vector with each key vector is large when the two point the same way.',
  'step2.title': 'Scale by 1/√d',
  'step2.text': 'Each head has d = {d} dimensions, so every score is multiplied by 1/√{d} = {s}. This keeps scores from growing with the head size, so the softmax does not saturate.',
  'step3.title': 'Softmax: scores become weights',
  'step3.text': 'wⱼ = exp(sⱼ) / Σₖ exp(sₖ): every weight is positive and together they add up to 1.',
  'step3.masked': 'Keys after the query are blocked by the causal mask and get weight 0.',
  'step4.title': 'Weighted sum of the values',
  'step4.text': 'The head’s result for this token is the context vector c = Σⱼ wⱼ vⱼ: the value vectors mixed in the proportions of the weights.',
  'col.key': 'key',
  'col.score': 'q·k',
  'col.scaled': '× 1/√d',
  'col.weight': 'weight',
  'col.value': 'value vⱼ, faded by its weight',
  sum: 'sum',
  masked: 'masked',
  context: 'context c ({d} values)',
  checkOk: 'equals forward() for this row: max |Δ| = {x}',
  checkBad: 'differs from forward(): max |Δ| = {x}',
  'mh.title': 'From one head to multi-head',
  'mh.split': 'Split Q, K and V into heads',
  'mh.splitText':
    'One projection each gives Q = X·W_Qᵀ + b_Q, K and V, all {E} wide. Their columns are cut into {H} blocks of d = {d}, one block per head, and each head runs the steps above on its own block. The chosen query’s row is outlined.',
  'mh.heads': 'Each head’s context for “{tok}”',
  'mh.concat': 'Concatenate',
  'mh.concatText': 'The {H} contexts side by side make one vector, {E} wide.',
  'mh.out': 'Output projection',
  'mh.outText': 'output = concat · W_Oᵀ + b_O mixes the heads back together.',
  'mh.legend': 'negative · 0 · positive',
  footer:
    'Everything is computed in your browser; nothing leaves the page and it works offline. attnscope: multi-head attention in C++, compiled to WebAssembly SIMD.',
  'export.png': 'PNG',
  'export.svg': 'SVG',
  'export.pngTitle': 'Download this map as PNG',
  'export.svgTitle': 'Download this map as SVG',
  enlarge: 'Click to enlarge',
  'tip.cell': '{q} → {k}',
};

const zh = {
  'doc.title': 'attnscope — 看清每个注意力头在看什么',
  tagline: '看清每个注意力头在看什么。多头注意力在你的浏览器里由 WebAssembly SIMD 计算。',
  intro:
    '注意力让每个词元（token）借助其他词元重新构建自己。每个词元提出一个问题（查询，Q），并给出一个标签（键，K）和一份内容（值，V）。一个注意力头把查询与每个键比较，把比较结果变成总和为 1 的权重，再按这些权重混合各个值。多个头并行地做同样的事，每个头都有自己的投影。',
  honesty:
    '这里的权重是由种子生成的随机数，并非训练所得：图案展示的是注意力如何运作，而不是语言模型学到了什么。训练好的权重可以通过页面的 model 模块载入。',
  'mode.label': '模式',
  'mode.self': '自注意力',
  'mode.cross': '编码器–解码器（交叉）注意力',
  'input.sentence': '句子',
  'input.source': '源句 — 编码器一侧，提供键和值',
  'input.target': '目标句 — 解码器一侧，提出查询',
  'input.examples': '示例：',
  'ex.en': '英文',
  'ex.zh': '中文',
  'ex.pair': '英文 → 中文',
  'ex.pairFr': '英文 → 法文',
  tokens: '词元',
  'tokens.source': '源句词元',
  'tokens.target': '目标句词元',
  tokensHint: '拉丁文字按单词和标点切分，中文每个汉字一个词元。点击一个词元，在下方逐步跟踪它的计算。',
  truncated: '只使用前 {n} 个词元（共 {total} 个）。',
  empty: '输入一个句子开始。',
  'ctl.embed': '嵌入维度',
  'ctl.heads': '头数',
  'ctl.seed': '种子',
  'ctl.causal': '因果掩码',
  'ctl.causalTitle': '每个词元只能关注自身和它之前的词元。',
  'ctl.causalCross': '因果掩码只用于自注意力。',
  'ctl.cmap': '配色',
  'ctl.scale': '色阶',
  'scale.max': '0 → 最大权重',
  'scale.one': '0 → 1',
  'btn.link': '复制链接',
  'btn.linkDone': '链接已复制',
  'btn.linkInBar': '链接已在地址栏中',
  'btn.json': '导出权重 JSON',
  'btn.lang': 'English',
  'btn.langTitle': 'Switch to English',
  'btn.close': '关闭',
  timing: '前向计算（WASM）{ms} 毫秒',
  timingTitle: '仅 WebAssembly 前向计算的耗时（在 forward 前后调用 performance.now）；整个页面更新耗时 {total} 毫秒。',
  'sec.maps': '逐个头看注意力权重',
  'sec.mapsText': '每一行是一个查询词元，每一列是一个键词元；格子表示该查询对该键的关注程度，每一行的和为 1。悬停查看精确数值，点击放大。',
  'sec.mapsTextCross': '行是目标句的词元（查询），列是源句的词元（键和值）：每张图都是目标句到源句的软对齐。',
  head: '头 {n}',
  average: '所有头的平均',
  axes: '行：查询 · 列：键',
  legend: '注意力权重',
  'sec.headview': '头视图',
  'sec.headviewText': '与 bertviz 相同：左边每个查询词元与右边的键词元相连，线越不透明，权重越大。每个头一种颜色。悬停在词元上只显示它的连线；用按钮开关各个头。',
  'hv.queries': '查询',
  'hv.keys': '键',
  'hv.legend': '线的不透明度 = 注意力权重',
  'hv.hint': '点击一个查询词元，在下方的三个步骤中跟踪它。',
  'hv.all': '全部',
  'hv.none': '全不选',
  'sec.steps': '三个步骤：跟踪一个查询词元',
  'sec.stepsText': '跟着一个词元走过一个头：打分、缩放、softmax，再混合各个值。这些数字由该层的权重重新计算，并与 WASM 的结果核对。',
  'steps.query': '查询词元',
  'steps.head': '头',
  'step1.title': '打分：把查询与每个键比较',
  'step1.text': '查询向量与每个键向量的点积 q·kⱼ：两者方向越一致，分数越大。',
  'step2.title': '乘以 1/√d 缩放',
  'step2.text': '每个头有 d = {d} 维，所以每个分数都乘以 1/√{d} = {s}。这样分数不会随头的维度变大，softmax 也不会饱和。',
  'step3.title': 'Softmax：分数变成权重',
  'step3.text': 'wⱼ = exp(sⱼ) / Σₖ exp(sₖ)：每个权重都是正数，加起来等于 1。',
  'step3.masked': '查询之后的键被因果掩码屏蔽，权重为 0。',
  'step4.title': '对值加权求和',
  'step4.text': '该头对这个词元的结果是上下文向量 c = Σⱼ wⱼ vⱼ：按权重的比例混合各个值向量。',
  'col.key': '键',
  'col.score': 'q·k',
  'col.scaled': '× 1/√d',
  'col.weight': '权重',
  'col.value': '值 vⱼ（按权重淡化）',
  sum: '总和',
  masked: '已屏蔽',
  context: '上下文 c（{d} 个数）',
  checkOk: '与 forward() 的这一行一致：最大 |Δ| = {x}',
  checkBad: '与 forward() 不一致：最大 |Δ| = {x}',
  'mh.title': '从单头到多头',
  'mh.split': '把 Q、K、V 拆分到各个头',
  'mh.splitText':
    '各用一次投影得到 Q = X·W_Qᵀ + b_Q、K 和 V，宽度都是 {E}。它们的列被切成 {H} 块，每块 d = {d}，每个头一块，每个头在自己的块上执行上面的步骤。所选查询的那一行有边框。',
  'mh.heads': '每个头对“{tok}”的上下文',
  'mh.concat': '拼接',
  'mh.concatText': '{H} 个上下文并排，组成一个宽度为 {E} 的向量。',
  'mh.out': '输出投影',
  'mh.outText': 'output = concat · W_Oᵀ + b_O 把各个头的信息重新混合。',
  'mh.legend': '负 · 0 · 正',
  footer: '所有计算都在你的浏览器里完成；数据不会离开页面，离线也能使用。attnscope：用 C++ 编写、编译为 WebAssembly SIMD 的多头注意力。',
  'export.png': 'PNG',
  'export.svg': 'SVG',
  'export.pngTitle': '把这张图下载为 PNG',
  'export.svgTitle': '把这张图下载为 SVG',
  enlarge: '点击放大',
  'tip.cell': '{q} → {k}',
};

export const MESSAGES = { en, zh };
export const LANGS = ['en', 'zh'];

let current = 'en';

/** The browser's preferred interface language among ours. */
export function browserLang() {
  const prefs = navigator.languages?.length ? navigator.languages : [navigator.language || 'en'];
  for (const p of prefs) {
    const base = String(p).toLowerCase().split('-')[0];
    if (LANGS.includes(base)) return base;
  }
  return 'en';
}

export function setLang(lang) {
  current = LANGS.includes(lang) ? lang : 'en';
  document.documentElement.lang = current === 'zh' ? 'zh-CN' : 'en';
  document.title = t('doc.title');
  for (const el of document.querySelectorAll('[data-i18n]')) el.textContent = t(el.dataset.i18n);
  for (const el of document.querySelectorAll('[data-i18n-title]')) el.title = t(el.dataset.i18nTitle);
  for (const el of document.querySelectorAll('[data-i18n-label]')) el.setAttribute('aria-label', t(el.dataset.i18nLabel));
}

export const getLang = () => current;

export function t(key, vars = {}) {
  const s = MESSAGES[current][key] ?? MESSAGES.en[key] ?? key;
  return s.replace(/\{(\w+)\}/g, (_, k) => (k in vars ? String(vars[k]) : `{${k}}`));
}
