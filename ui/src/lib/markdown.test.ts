import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, render } from '@testing-library/svelte';
import { renderMarkdown, safeHref } from './markdown';
import { MarkdownDom } from './markdown-dom';
import Markdown from './components/Markdown.svelte';

/** Parses the rendered HTML and lists everything in it that could run, fetch or navigate. */
function dangers(html: string): string[] {
  const host = document.createElement('div');
  host.innerHTML = html;
  const found: string[] = [];
  const banned = /^(script|iframe|frame|frameset|object|embed|svg|math|img|image|video|audio|source|style|link|meta|base|form|button|textarea|select|template|portal|applet|noscript|xmp|foreignobject)$/i;
  for (const el of host.querySelectorAll('*')) {
    if (banned.test(el.localName)) found.push(`<${el.localName}>`);
    for (const attr of el.attributes) {
      const name = attr.name.toLowerCase();
      if (name.startsWith('on')) found.push(`${el.localName}[${name}]`);
      if (['src', 'srcset', 'style', 'action', 'formaction', 'xlink:href', 'background', 'poster', 'data'].includes(name)) {
        found.push(`${el.localName}[${name}]`);
      }
      if (name === 'href' && !/^(https?|mailto):/i.test(attr.value)) found.push(`href=${attr.value}`);
    }
    if (el.localName === 'input' && (el.getAttribute('type') !== 'checkbox' || !el.hasAttribute('disabled'))) {
      found.push('live input');
    }
  }
  return found;
}

// Every entry is markdown a model (or a command output it quotes) might send.
const HOSTILE: Array<[string, string]> = [
  ['script tag', '<script>window.pwned = 1</script>'],
  ['script inline', 'hello <script>alert(1)</script> world'],
  ['script split case', '<ScRiPt >alert(1)</sCrIpT>'],
  ['img onerror', '<img src=x onerror=alert(1)>'],
  ['img markdown remote', '![logo](https://evil.example/track.png)'],
  ['img markdown js', '![x](javascript:alert(1))'],
  ['svg onload', '<svg onload=alert(1)><circle r=1 /></svg>'],
  ['svg script', '<svg><script>alert(1)</script></svg>'],
  ['math href', '<math><mi xlink:href="javascript:alert(1)">x</mi></math>'],
  ['iframe', '<iframe src="https://evil.example"></iframe>'],
  ['iframe srcdoc', '<iframe srcdoc="<script>alert(1)</script>"></iframe>'],
  ['object', '<object data="javascript:alert(1)"></object>'],
  ['embed', '<embed src="javascript:alert(1)">'],
  ['style tag', '<style>body{display:none}</style>'],
  ['style attr', '<p style="background:url(javascript:alert(1))">x</p>'],
  ['div onclick', '<div onclick="alert(1)">click</div>'],
  ['a onmouseover', '<a href="https://ok.example" onmouseover="alert(1)">x</a>'],
  ['details ontoggle', '<details open ontoggle=alert(1)>x</details>'],
  ['body onload', '<body onload=alert(1)>'],
  ['form action', '<form action="javascript:alert(1)"><button>go</button></form>'],
  ['input autofocus', '<input autofocus onfocus=alert(1)>'],
  ['meta refresh', '<meta http-equiv="refresh" content="0;url=javascript:alert(1)">'],
  ['base href', '<base href="javascript:alert(1)//">'],
  ['link javascript', '[click](javascript:alert(1))'],
  ['link JavaScript case', '[click](JaVaScRiPt:alert(1))'],
  ['link tab in scheme', '[click](java\tscript:alert(1))'],
  ['link entity scheme', '[click](&#106;avascript:alert(1))'],
  ['link hex entity scheme', '[click](&#x6A;avascript&#x3A;alert(1))'],
  ['link entity colon', '[click](javascript&colon;alert(1))'],
  ['link data html', '[click](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)'],
  ['link vbscript', '[click](vbscript:msgbox(1))'],
  ['link file', '[passwd](file:///etc/passwd)'],
  ['autolink javascript', '<javascript:alert(1)>'],
  ['reference link javascript', '[x][1]\n\n[1]: javascript:alert(1)'],
  ['html anchor javascript', '<a href="javascript:alert(1)">x</a>'],
  ['html anchor entity', '<a href="&#x6A;avascript:alert(1)">x</a>'],
  ['nested md in html', '<div>**bold** [x](javascript:alert(1))</div>'],
  ['html in link text', '[<img src=x onerror=alert(1)>](https://ok.example)'],
  ['html in code span stays text', '`<script>alert(1)</script>`'],
  ['html in code block stays text', '```html\n<script>alert(1)</script>\n```'],
  ['code lang injection', '```"><img src=x onerror=alert(1)>\ncode\n```'],
  ['link title injection', '[x](https://ok.example "a\\" onmouseover=\\"alert(1))'],
  ['entity-encoded tag', '&lt;script&gt;alert(1)&lt;/script&gt;'],
  ['double encoded', '&amp;lt;img src=x onerror=alert(1)&amp;gt;'],
  ['comment breakout', '<!--><img src=x onerror=alert(1)>-->'],
  ['cdata', '<![CDATA[<img src=x onerror=alert(1)>]]>'],
  ['unclosed attr', '<img src="x" onerror="alert(1)'],
  ['noscript mxss', '<noscript><p title="</noscript><img src=x onerror=alert(1)>">'],
  ['template', '<template><img src=x onerror=alert(1)></template>'],
  ['table with html', '| a | b |\n|---|---|\n| <img src=x onerror=alert(1)> | <script>x</script> |'],
  ['blockquote html', '> <iframe src="https://evil.example"></iframe>'],
  ['list html', '- <svg/onload=alert(1)>\n- [x](javascript:alert(1))'],
  ['task list', '- [x] done\n- [ ] <input onfocus=alert(1) autofocus>'],
  ['heading html', '# <img src=x onerror=alert(1)>'],
  ['protocol-relative', '[x](//evil.example/x)'],
  ['relative into app', '[settings](#/settings)'],
];

describe('renderMarkdown: hostile input', () => {
  for (const [name, source] of HOSTILE) {
    it(`nothing executable survives: ${name}`, () => {
      const html = renderMarkdown(source);
      expect(dangers(html)).toEqual([]);
    });
  }

  it('the model raw HTML is shown as text, not dropped', () => {
    const host = document.createElement('div');
    host.innerHTML = renderMarkdown('before <b onclick="x()">bold</b> after');
    expect(host.querySelector('b')).toBeNull();
    expect(host.textContent).toContain('<b onclick="x()">');
  });

  it('images fetch nothing and keep their alt text', () => {
    const host = document.createElement('div');
    host.innerHTML = renderMarkdown('see ![disk chart](https://evil.example/x.png)');
    expect(host.querySelector('img')).toBeNull();
    expect(host.textContent).toContain('[disk chart]');
  });
});

describe('renderMarkdown: ordinary markdown', () => {
  it('renders emphasis, lists, tables and code', () => {
    const host = document.createElement('div');
    host.innerHTML = renderMarkdown('**Disk** is *fine*\n\n- a\n- b\n\n| h |\n|---|\n| c |\n\n```sh\ndf -h\n```');
    expect(host.querySelector('strong')?.textContent).toBe('Disk');
    expect(host.querySelectorAll('li')).toHaveLength(2);
    expect(host.querySelector('td')?.textContent).toBe('c');
    expect(host.querySelector('pre code.language-sh')?.textContent).toBe('df -h');
  });

  it('web links open outside with rel=noopener', () => {
    const host = document.createElement('div');
    host.innerHTML = renderMarkdown('[docs](https://example.org/a?b=1) and <https://example.org/z>');
    const links = [...host.querySelectorAll('a')];
    expect(links).toHaveLength(2);
    for (const a of links) {
      expect(a.getAttribute('rel')).toContain('noopener');
      expect(a.getAttribute('target')).toBe('_blank');
      expect(a.getAttribute('href')).toMatch(/^https:\/\/example\.org\//);
    }
  });

  it('a refused link keeps its text', () => {
    const host = document.createElement('div');
    host.innerHTML = renderMarkdown('[click me](javascript:alert(1))');
    expect(host.querySelector('a[href]')).toBeNull();
    expect(host.textContent).toContain('click me');
  });
});

/** The element a whole render of `source` gives, the reference for a streamed one. */
function wholeRender(source: string): HTMLElement {
  const host = document.createElement('div');
  host.innerHTML = renderMarkdown(source);
  return host;
}

/** Streams `source` into a MarkdownDom in pieces of `step` characters; calls `check` after each. */
function stream(source: string, step: number, check: (dom: MarkdownDom, root: HTMLElement, shown: string) => void) {
  const root = document.createElement('div');
  const dom = new MarkdownDom(root);
  for (let end = Math.min(step, source.length); ; end = Math.min(end + step, source.length)) {
    dom.showStreaming(source.slice(0, end));
    check(dom, root, source.slice(0, end));
    if (end === source.length) break;
  }
  return { root, dom };
}

const ORDINARY = [
  '**Disk** is *fine*\n\n- a\n- b\n\n| h | i |\n|---|---|\n| c | d |\n\n```sh\ndf -h\n```\n\nDone.',
  '# Plan\n\n1. look\n2. fix\n\n> quoted\nlazy line\n\n---\n\nSee [docs](https://example.org/a) and `code`.',
  'Title\n===\n\ntext with\nbreaks\n\n    indented code\n\n    more\n\nafter *em* and ~~gone~~',
  '- [x] done\n- [ ] todo\n\n  continued item\n\nend of list\n\n```\nunlabelled\n\nwith a blank line\n```',
];

/** Plain prose, long enough for a growing paragraph's start to be set aside. */
const PROSE = Array.from({ length: 60 }, (_, i) => `word${i}`).join(' ');

/** Paragraphs that start plain and then turn into something else, at the edges of the rule. */
const LONG = [
  `${PROSE} then **bold across ${PROSE} the cut** and \`code ${PROSE}\` end`,
  `${PROSE} and a [link ${PROSE}](https://example.org/x) and ${PROSE} www.example.org and ops@example.org`,
  `${PROSE} | second cell\n|---|---|\n| a | b |`,
  `${PROSE} second | cell\n|---|---|\n| a | b |`,
  `${PROSE} heading\n===\n\n${PROSE}`,
  `${PROSE}\nsecond line ${PROSE}\n\n- item ${PROSE}\n- item\n\n${PROSE}`,
  `${PROSE} <b>raw ${PROSE}</b> &amp; \\*escaped\\* ${PROSE} ~~struck ${PROSE}~~`,
  `${PROSE}   ${PROSE}  \n${PROSE} "quoted" 'single' ${PROSE}`,
  `${PROSE} <script>alert(1)</script> ${PROSE} <scr`,
];

/** A random document: paragraphs of words with markup sprinkled in, from a fixed seed. */
function randomDocument(seed: number): string {
  let x = seed;
  const next = (n: number) => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return x % n;
  };
  const marks = ['*', '**', '_', '`', '[', '](https://example.org)', '<b>', '</b>', '|', '\n', '\n\n', '~~', '!', '&lt;', 'www.x.org', ':', '- ', '# ', '\n---\n', '\n===\n', '```\n'];
  let out = '';
  for (let i = 0; i < 160; i++) out += next(12) === 0 ? marks[next(marks.length)]! : `w${next(1000)} `;
  return out;
}

describe('MarkdownDom: streamed text', () => {
  it.each(HOSTILE)('nothing executable survives at any point of a streamed %s', (_name, source) => {
    for (const step of [1, 3]) {
      const { root, dom } = stream(source, step, (_dom, root, shown) => {
        expect(dangers(root.innerHTML), JSON.stringify(shown)).toEqual([]);
      });
      dom.showFinal(source);
      expect(root.innerHTML).toBe(wholeRender(source).innerHTML);
    }
  });

  it('a tag split across deltas is shown as text once joined, never run', () => {
    const root = document.createElement('div');
    const dom = new MarkdownDom(root);
    let text = '';
    for (const delta of ['Here: <scr', 'ipt>window.pwned = 1</scr', 'ipt> and <img src=x on', 'error=alert(1)>']) {
      text += delta;
      dom.showStreaming(text);
      expect(dangers(root.innerHTML)).toEqual([]);
      expect(root.querySelector('script, img')).toBeNull();
    }
    expect(root.textContent?.trim()).toBe('Here: <script>window.pwned = 1</script> and <img src=x onerror=alert(1)>');
    expect((window as unknown as { pwned?: number }).pwned).toBeUndefined();
  });

  it('a streamed text that ends keeps its nodes (no whole render), unless a reference definition came', () => {
    const root = document.createElement('div');
    const dom = new MarkdownDom(root);
    const words = Array.from({ length: 3000 }, (_, i) => `q${i}`).join(' ');
    const source = `# Long\n\nFirst block.\n\n${words}`;
    for (let n = 10; n < source.length; n += 97) dom.showStreaming(source.slice(0, n));
    dom.showStreaming(source);
    const [heading, paragraph] = [root.querySelector('h1'), root.querySelectorAll('p')[1]];
    dom.showFinal(source);
    expect(root.innerHTML).toBe(wholeRender(source).innerHTML);
    expect(root.querySelector('h1')).toBe(heading);
    expect(root.querySelectorAll('p')[1]).toBe(paragraph);

    // A definition after the link that uses it (also inside a quote, which marked registers
    // as well): the finished render resolves the link.
    for (const linked of ['See [the docs][d] first.\n\nThen more.\n\n[d]: https://example.org/docs', 'See [x][d].\n\n> [d]: https://example.org/docs']) {
      const streamed = stream(linked, 3, () => {});
      streamed.dom.showFinal(linked);
      expect(streamed.root.innerHTML).toBe(wholeRender(linked).innerHTML);
      expect(streamed.root.querySelector('a')?.getAttribute('href')).toBe('https://example.org/docs');
    }
  });

  it('an unfinished fence is code until it closes, and its HTML stays text', () => {
    const root = document.createElement('div');
    const dom = new MarkdownDom(root);
    dom.showStreaming('Run:\n\n```html\n<script>alert(1)</script>\n<b>x');
    expect(root.querySelector('pre code.language-html')?.textContent).toBe('<script>alert(1)</script>\n<b>x');
    expect(root.querySelector('script, b')).toBeNull();
    dom.showStreaming('Run:\n\n```html\n<script>alert(1)</script>\n<b>x\n```\n\nafter **it**');
    expect(root.querySelector('pre code')?.textContent).toBe('<script>alert(1)</script>\n<b>x');
    expect(root.querySelector('strong')?.textContent).toBe('it');
    expect(dangers(root.innerHTML)).toEqual([]);
  });

  it.each(ORDINARY.map((s, i) => [i, s] as const))('at every step shows what a whole render of the text so far shows (document %i)', (_i, source) => {
    for (const step of [1, 2, 7, 50]) {
      const { root, dom } = stream(source, step, (_dom, root, shown) => {
        expect(root.innerHTML, JSON.stringify(shown)).toBe(wholeRender(shown).innerHTML);
      });
      dom.showFinal(source);
      expect(root.innerHTML).toBe(wholeRender(source).innerHTML);
    }
  });

  it.each(LONG.map((s, i) => [i, s] as const))('a long paragraph streamed shows what a whole render shows (document %i)', (_i, source) => {
    for (const step of [3, 29]) {
      const { root, dom } = stream(source, step, (_dom, root, shown) => {
        expect(root.innerHTML, JSON.stringify(shown)).toBe(wholeRender(shown).innerHTML);
        expect(dangers(root.innerHTML)).toEqual([]);
      });
      dom.showFinal(source);
      expect(root.innerHTML).toBe(wholeRender(source).innerHTML);
    }
  }, 60_000);

  it.each([1, 2, 3, 4, 5, 6, 7, 8])('a random document streamed shows what a whole render shows (seed %i)', (seed) => {
    const source = randomDocument(seed);
    stream(source, 4, (_dom, root, shown) => {
      expect(root.innerHTML, JSON.stringify(shown)).toBe(wholeRender(shown).innerHTML);
    });
  }, 60_000);

  it('a long plain paragraph is not lexed whole at every update', () => {
    const root = document.createElement('div');
    const dom = new MarkdownDom(root);
    let text = '';
    for (let i = 0; i < 600; i++) {
      text += `q${i} `;
      dom.showStreaming(text);
    }
    expect(root.querySelectorAll('p')).toHaveLength(1);
    // The set-aside start is a text node of its own, followed by the lexed rest (< 2 pieces).
    const [start, rest] = [...root.querySelector('p')!.childNodes];
    expect(start!.textContent!.length).toBeGreaterThan(text.length - 400);
    expect(rest!.textContent!.length).toBeLessThan(400);
    expect(root.querySelector('p')!.textContent).toBe(text);
    expect(root.innerHTML).toBe(wholeRender(text).innerHTML);
  });

  it('keeps finished blocks and grows the last text node instead of replacing them', () => {
    const root = document.createElement('div');
    const dom = new MarkdownDom(root);
    dom.showStreaming('# Disks\n\nAll');
    const heading = root.querySelector('h1');
    const text = root.querySelector('p')!.firstChild!;
    dom.showStreaming('# Disks\n\nAll fine on');
    dom.showStreaming('# Disks\n\nAll fine on pve1.');
    expect(root.querySelector('h1')).toBe(heading);
    expect(root.querySelector('p')!.firstChild).toBe(text);
    expect(text.textContent).toBe('All fine on pve1.');
    // The finished message is rendered whole; equal nodes are kept, so nothing jumps.
    dom.showFinal('# Disks\n\nAll fine on pve1.');
    expect(root.querySelector('h1')).toBe(heading);
    expect(root.querySelector('p')!.firstChild).toBe(text);
  });

  it('a reference definition arriving after its link is applied when the message is finished', () => {
    const source = 'See [the docs][1].\n\n[1]: https://example.org/docs';
    const { root, dom } = stream(source, 4, () => {});
    dom.showFinal(source);
    expect(root.querySelector('a')?.getAttribute('href')).toBe('https://example.org/docs');
  });

  it('a retried reply that starts over replaces what was shown', () => {
    const root = document.createElement('div');
    const dom = new MarkdownDom(root);
    dom.showStreaming('First attempt\n\n- one\n- two');
    dom.showStreaming('Second');
    expect(root.innerHTML).toBe(wholeRender('Second').innerHTML);
  });
});

describe('safeHref', () => {
  it.each([
    ['https://a.example/x', 'https://a.example/x'],
    ['http://a.example', 'http://a.example/'],
    ['mailto:ops@example.org', 'mailto:ops@example.org'],
    ['javascript:alert(1)', null],
    [' javascript:alert(1)', null],
    ['jav\u0000ascript:alert(1)', null],
    ['data:text/html,x', null],
    ['file:///etc/passwd', null],
    ['/relative', null],
    ['', null],
  ])('%s', (input, expected) => {
    expect(safeHref(input)).toBe(expected);
  });
});

describe('Markdown component', () => {
  afterEach(() => cleanup());

  it('gives every code block a Copy button that copies the code', async () => {
    let copied = '';
    Object.defineProperty(navigator, 'clipboard', {
      configurable: true,
      value: { writeText: async (text: string) => void (copied = text) },
    });
    const { getAllByTestId } = render(Markdown, { source: 'Run:\n\n```\nuptime\n```\n\nand\n\n```\ndf -h\n```' });
    const buttons = getAllByTestId('copy-code');
    expect(buttons).toHaveLength(2);
    buttons[1]!.click();
    await new Promise((r) => setTimeout(r, 0));
    expect(copied).toBe('df -h');
  });

  it('while streaming, a code block gets its Copy button and the button survives later deltas', async () => {
    let copied = '';
    Object.defineProperty(navigator, 'clipboard', {
      configurable: true,
      value: { writeText: async (text: string) => void (copied = text) },
    });
    const { rerender, getAllByTestId } = render(Markdown, { source: '```\nupt', streaming: true });
    await new Promise((r) => setTimeout(r, 50));
    const button = getAllByTestId('copy-code')[0]!;
    await rerender({ source: '```\nuptime\n```\n\nthen', streaming: true });
    await new Promise((r) => setTimeout(r, 50));
    expect(getAllByTestId('copy-code')).toEqual([button]);
    button.click();
    await new Promise((r) => setTimeout(r, 0));
    expect(copied).toBe('uptime');
  });

  it('while streaming, many deltas between two frames are parsed once, then the latest text shows', async () => {
    const { rerender, getByTestId } = render(Markdown, { source: 'a', streaming: true });
    let text = 'a';
    for (let i = 0; i < 200; i++) {
      text += ` w${i}`;
      await rerender({ source: text, streaming: true });
    }
    // Not yet caught up within the same frame: no per-delta parse.
    expect(getByTestId('markdown').textContent).not.toContain('w199');
    await new Promise((r) => setTimeout(r, 50));
    expect(getByTestId('markdown').textContent).toContain('w199');
    // A finished message renders at once.
    await rerender({ source: 'final **text**', streaming: false });
    expect(getByTestId('markdown').querySelector('strong')?.textContent).toBe('text');
  });
});
