// Texts that the tokenizer tests run through our tokenizer and Hugging Face's: many scripts, whitespace runs and
// newlines, emoji (with skin tones, ZWJ sequences and flags), digits, code, combining marks, a BOM, special-token
// lookalikes. Not a test file itself (node --test runs *.test.js only).
export const TEXTS = [
  "Hello, world! How's it going? I'm fine; we'll see. They've said it's 3.14159, or 1,000,000.",
  '  leading and trailing spaces   ',
  'tabs\tand\nnewlines\r\n\r\nand\n\n\nmore\n',
  '中文文本，包含标点。日本語のテキスト、カタカナとひらがな。한국어 텍스트입니다.',
  'Русский текст, ελληνικά, עברית, العربية, हिन्दी, ไทย, ქართული.',
  'emoji 😀👍🏽👨‍👩‍👧‍👦 🇫🇷🇯🇵 and ❤️‍🔥 in a row😀😀😀',
  'numbers 1234567890 12 345 6789 ١٢٣٤ ①②③ ½ ²³ x1y22z333',
  'code: def f(x):\n    return x**2  # a comment\n\tif x>0: pass\n\n\nclass A{}; a->b != c;',
  'https://example.com/a?b=c&d=e#frag and a.b@c.de, C:\\path\\to\\file.txt',
  'CAPS LOCK and MiXeD CaSe, O\'NEIL\'S \'quoted\' "double" \'S \'LL \'Ve',
  'combining: e\u0301 n\u0303 a\u0308, precomposed é ñ ä, ligature ﬁ ﬀ, fullwidth ＡＢＣ１２３',
  `${' '.repeat(20)}x${'\n'.repeat(5)} \t \n \u00a0\u3000 end  \n  `,
  '\ufeffa BOM, zero\u200bwidth\u200djoiner, soft\u00adhyphen, and \u2028 separators\u2029',
  '<|endoftext|> <s> </s> [CLS] <bos> <unk> <|im_start|> special-looking text',
  'punctuation!!! ??? ... --- ___ *** ((( ))) [[[ ]]] {{{ }}} <<< >>> ~~~ ``` \'\'\' """',
  'a',
  ' ',
  '\n',
  'The cat sat on the mat and then it went to sleep. '.repeat(8),
];
