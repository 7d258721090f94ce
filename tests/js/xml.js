// A small, strict XML parser for the figure tests: it rejects what a browser's XML parser rejects (unescaped '<'
// or '&', bad entities, characters XML forbids, duplicate attributes, mismatched tags), so a figure that parses here
// is well-formed, and injected markup shows up as elements.

const NAME = /[A-Za-z_:][\w.:-]*/y;
const ENTITIES = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
// XML 1.0 Char: tab, newline, return, U+0020–U+D7FF, U+E000–U+FFFD, U+10000–U+10FFFF (surrogate pairs).
const FORBIDDEN = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

function decode(raw, where) {
  if (raw.includes('<')) throw new SyntaxError(`'<' in ${where}`);
  return raw.replace(/&([^;]*);?/g, (m, body) => {
    if (!m.endsWith(';')) throw new SyntaxError(`bare '&' in ${where}`);
    if (body in ENTITIES) return ENTITIES[body];
    const num = /^#(\d+)$/.exec(body) ?? /^#x([0-9a-fA-F]+)$/.exec(body);
    if (!num) throw new SyntaxError(`unknown entity &${body}; in ${where}`);
    const code = parseInt(num[1], body[1] === 'x' ? 16 : 10);
    const c = String.fromCodePoint(code);
    if (FORBIDDEN.test(c)) throw new SyntaxError(`character reference to a forbidden character in ${where}`);
    return c;
  });
}

/** Parses a document; returns its root element `{ name, attrs, children }` (children: elements and strings). */
export function parseXml(text) {
  if (FORBIDDEN.test(text)) throw new SyntaxError('the document contains a character XML forbids');
  let pos = 0;
  const expect = (s) => {
    if (!text.startsWith(s, pos)) throw new SyntaxError(`expected '${s}' at ${pos}: ${JSON.stringify(text.slice(pos, pos + 30))}`);
    pos += s.length;
  };
  const name = () => {
    NAME.lastIndex = pos;
    const m = NAME.exec(text);
    if (!m) throw new SyntaxError(`expected a name at ${pos}: ${JSON.stringify(text.slice(pos, pos + 30))}`);
    pos += m[0].length;
    return m[0];
  };
  const space = () => { while (/\s/.test(text[pos] ?? '')) pos++; };
  const skipMisc = () => {
    for (;;) {
      space();
      if (text.startsWith('<?', pos)) pos = text.indexOf('?>', pos) + 2;
      else if (text.startsWith('<!--', pos)) pos = text.indexOf('-->', pos) + 3;
      else return;
      if (pos < 2) throw new SyntaxError('unterminated prolog or comment');
    }
  };
  const element = () => {
    expect('<');
    const el = { name: name(), attrs: {}, children: [] };
    for (;;) {
      const before = pos;
      space();
      if (text.startsWith('/>', pos)) { pos += 2; return el; }
      if (text[pos] === '>') { pos++; break; }
      if (pos === before) throw new SyntaxError(`expected whitespace before an attribute of <${el.name}> at ${pos}`);
      const key = name();
      if (key in el.attrs) throw new SyntaxError(`duplicate attribute ${key} on <${el.name}>`);
      space(); expect('='); space();
      const quote = text[pos];
      if (quote !== '"' && quote !== "'") throw new SyntaxError(`unquoted attribute ${key} on <${el.name}>`);
      const end = text.indexOf(quote, pos + 1);
      if (end < 0) throw new SyntaxError(`unterminated attribute ${key}`);
      el.attrs[key] = decode(text.slice(pos + 1, end), `attribute ${key} of <${el.name}>`);
      pos = end + 1;
    }
    for (;;) {
      if (text.startsWith('</', pos)) {
        pos += 2;
        const closing = name();
        if (closing !== el.name) throw new SyntaxError(`</${closing}> closes <${el.name}>`);
        space(); expect('>');
        return el;
      }
      if (text.startsWith('<!--', pos)) { pos = text.indexOf('-->', pos) + 3; continue; }
      if (text[pos] === '<') { el.children.push(element()); continue; }
      const end = text.indexOf('<', pos);
      if (end < 0) throw new SyntaxError(`<${el.name}> is never closed`);
      const raw = text.slice(pos, end);
      if (raw.includes(']]>')) throw new SyntaxError("']]>' in text");
      el.children.push(decode(raw, `text of <${el.name}>`));
      pos = end;
    }
  };
  skipMisc();
  const root = element();
  skipMisc();
  if (pos !== text.length) throw new SyntaxError(`content after the root element at ${pos}`);
  return root;
}

/** Every element below (and including) `el`, depth first, each with its `parent`. */
export function elements(el, parent = null, out = []) {
  out.push(Object.assign(el, { parent }));
  for (const c of el.children) if (typeof c !== 'string') elements(c, el, out);
  return out;
}

/** The text inside an element (its own and its descendants'). */
export const textOf = (el) => el.children.map((c) => (typeof c === 'string' ? c : textOf(c))).join('');

/** An attribute's value on the element or its nearest ancestor that has it (SVG's inheritance of fill etc.). */
export function inherited(el, key) {
  for (let e = el; e; e = e.parent) if (key in e.attrs) return e.attrs[key];
  return undefined;
}
