import { Marked, type Token, type Tokens } from 'marked';
import DOMPurify from 'dompurify';

/**
 * Model text to HTML that is safe to put in the DOM.
 *
 * Two independent layers, so a gap in one does not open the other:
 * 1. The markdown renderer never emits the model's raw HTML: HTML blocks and inline tags are
 *    rendered as escaped text, images become their alt text (no remote fetch: a model or a
 *    command output must not make the webview call a URL), and links keep only http(s) and
 *    mailto targets.
 * 2. DOMPurify then removes anything outside a short allowlist of tags and attributes, and a
 *    hook re-checks every link (scheme, rel=noopener, new window).
 */

const escapeHtml = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');

/** Link targets the operator may follow: web pages and mail. Everything else is text. */
export function safeHref(href: string | null | undefined): string | null {
  if (!href) return null;
  // Browsers ignore control characters and whitespace inside a scheme ("java\tscript:").
  const squeezed = href.replace(/[\u0000-\u0020\u007f-\u009f]/g, '');
  let url: URL;
  try {
    url = new URL(squeezed);
  } catch {
    return null; // relative links point into the app itself: not the model's to make
  }
  return url.protocol === 'http:' || url.protocol === 'https:' || url.protocol === 'mailto:' ? url.href : null;
}

const marked = new Marked({
  gfm: true,
  breaks: true,
  async: false,
  renderer: {
    html(token: Tokens.HTML | Tokens.Tag) {
      // The model's raw HTML is shown as the text it is.
      return escapeHtml(token.text);
    },
    image(token: Tokens.Image) {
      const label = token.text || token.title || 'image';
      return `<span class="md-image">[${escapeHtml(label)}]</span>`;
    },
    link(token: Tokens.Link) {
      const inner = this.parser.parseInline(token.tokens);
      const href = safeHref(token.href);
      if (!href) return inner;
      const title = token.title ? ` title="${escapeHtml(token.title)}"` : '';
      return `<a href="${escapeHtml(href)}"${title}>${inner}</a>`;
    },
    code(token: Tokens.Code) {
      const lang = (token.lang ?? '').match(/^[A-Za-z0-9_+-]{1,32}/)?.[0];
      const cls = lang ? ` class="language-${lang}"` : '';
      return `<pre class="md-code"><code${cls}>${escapeHtml(token.text)}</code></pre>\n`;
    },
  },
});

const ALLOWED_TAGS = [
  'p', 'br', 'hr', 'strong', 'em', 'del', 's', 'code', 'pre', 'blockquote', 'ul', 'ol', 'li',
  'a', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'table', 'thead', 'tbody', 'tr', 'th', 'td', 'span',
  'input',
];
const ALLOWED_ATTR = ['href', 'title', 'class', 'start', 'align', 'type', 'checked', 'disabled'];

let hooked = false;
function purifier() {
  if (!hooked) {
    hooked = true;
    DOMPurify.addHook('afterSanitizeAttributes', (node) => {
      if (node.tagName === 'A') {
        const href = safeHref(node.getAttribute('href'));
        if (href) {
          node.setAttribute('href', href);
          node.setAttribute('target', '_blank');
          node.setAttribute('rel', 'noopener noreferrer nofollow');
        } else {
          node.removeAttribute('href');
        }
      }
      // GFM task-list boxes are the only inputs: read-only checkboxes.
      if (node.tagName === 'INPUT') {
        if (node.getAttribute('type') !== 'checkbox') node.remove();
        else node.setAttribute('disabled', '');
      }
    });
  }
  return DOMPurify;
}

/** Sanitised HTML for a piece of model text. */
export function renderMarkdown(source: string): string {
  return renderTokens(marked.lexer(source));
}

/** Sanitised HTML for tokens of `marked.lexer` (so a caller that lexed already does not lex again). */
function renderTokens(tokens: Token[]): string {
  const raw = marked.parser(tokens);
  return purifier().sanitize(raw, {
    ALLOWED_TAGS,
    ALLOWED_ATTR: [...ALLOWED_ATTR, 'target', 'rel'],
    ALLOW_DATA_ATTR: false,
    ALLOW_ARIA_ATTR: false,
    ALLOWED_URI_REGEXP: /^(?:https?|mailto):/i,
  });
}

/**
 * Characters that can open or close an inline construct (emphasis, code, link, raw HTML,
 * escape, entity, autolink) or a table cell, or break the line. Text without them renders as
 * itself, whatever follows it after a space.
 */
const NOT_PLAIN = /[\\`*_~[\]()!<>&|:@\n\r\t]|www\./i;
/** A growing paragraph's plain start is set aside in pieces of at least this many characters. */
const PLAIN_PIECE = 200;

/** The non-space tokens are one paragraph, and the tokens add up to the text. */
function oneParagraph(tokens: Token[], text: string): boolean {
  let covered = 0;
  let paragraphs = 0;
  for (const t of tokens) {
    covered += t.raw.length;
    if (t.type === 'paragraph') paragraphs++;
    else if (t.type !== 'space') return false;
  }
  return paragraphs === 1 && covered === text.length && tokens[0]!.type === 'paragraph';
}

/**
 * The top-level Markdown blocks of a text that grows by appends (a streamed reply), for
 * rendering each finished block once. Every block but the last is finished: once the lexer
 * starts a new block, later text cannot change the ones before it (an open fence, list or
 * table is the last block until it ends). The one exception, a reference definition
 * (`[1]: https://…`) arriving after the link that uses it, is resolved by the whole-text
 * render the message gets when it is finished.
 *
 * The last block, when it is a paragraph, is not lexed whole either (the lexer's cost grows
 * faster than the text in the webview's engine): its plain start (no inline markup, no line
 * break, cut after a space) renders as its own text whatever follows, so it is set aside as
 * `tailPlain` and only the rest is lexed. When the rest stops being one paragraph (a setext
 * underline, a table delimiter row, a blank line) the block is lexed whole again.
 */
export class BlockSplitter {
  /** The finished blocks' source, joined: the text every later update must start with. */
  #prefix = '';
  #finished: string[] = [];
  /** The plain start of the last block (a paragraph), ending with the space it was cut at. */
  #plain = '';

  /**
   * Splits `source`: the finished blocks (the same strings as before, plus any that finished
   * now), the last block's source and its sanitised HTML. When `tailPlain` is set the HTML is
   * one paragraph whose text starts after it: the caller puts it in front as a text node.
   */
  update(source: string): { finished: readonly string[]; tail: string; tailHtml: string; tailPlain: string } {
    if (!source.startsWith(this.#prefix)) this.reset();
    const rest = source.slice(this.#prefix.length);
    if (this.#plain && rest.startsWith(this.#plain)) {
      const live = rest.slice(this.#plain.length);
      const tokens = marked.lexer(live);
      if (oneParagraph(tokens, live)) {
        const plain = this.#plain;
        this.#setAside(live);
        return { finished: this.#finished, tail: rest, tailHtml: renderTokens(tokens), tailPlain: plain };
      }
    }
    this.#plain = '';
    const tokens = marked.lexer(rest);
    // The lexer normalises line endings; its blocks then do not add up to the text, and
    // the whole rest stays one block (correct, only not incremental).
    let covered = 0;
    for (const t of tokens) covered += t.raw.length;
    let last = tokens.length - 1;
    while (last > 0 && tokens[last]!.type === 'space') last--;
    if (covered === rest.length) {
      for (let i = 0; i < last; i++) {
        const raw = tokens[i]!.raw;
        this.#prefix += raw;
        if (tokens[i]!.type !== 'space') this.#finished.push(raw);
        else if (this.#finished.length) this.#finished[this.#finished.length - 1] += raw;
        else this.#finished.push(raw);
      }
    }
    const tailTokens = covered === rest.length ? tokens.slice(Math.max(last, 0)) : tokens;
    const tail = source.slice(this.#prefix.length);
    if (covered === rest.length && oneParagraph(tailTokens, tail) && !/^\s/.test(tail)) this.#setAside(tail);
    return { finished: this.#finished, tail, tailHtml: renderTokens(tailTokens), tailPlain: '' };
  }

  /** Moves the plain start of `live` (the paragraph's text after `#plain`) to `#plain`. */
  #setAside(live: string) {
    const markup = NOT_PLAIN.exec(live);
    const end = markup ? markup.index : live.length;
    if (end < PLAIN_PIECE) return;
    // Cut at a single space with text on both sides; the next character is known and is not
    // a cell separator (a table's header row must count its cells the same way).
    let cut = live.lastIndexOf(' ', Math.min(end, live.length - 1) - 1);
    while (cut > 0 && (live[cut - 1] === ' ' || live[cut + 1] === ' ')) cut = live.lastIndexOf(' ', cut - 1);
    if (cut < PLAIN_PIECE || cut + 1 >= live.length || live[cut + 1] === '|') return;
    this.#plain += live.slice(0, cut + 1);
  }

  reset() {
    this.#prefix = '';
    this.#finished = [];
    this.#plain = '';
  }
}
