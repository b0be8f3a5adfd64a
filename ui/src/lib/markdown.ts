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
 * The top-level Markdown blocks of a text that grows by appends (a streamed reply), for
 * rendering each finished block once. Every block but the last is finished: once the lexer
 * starts a new block, later text cannot change the ones before it (an open fence, list or
 * table is the last block until it ends). The one exception, a reference definition
 * (`[1]: https://…`) arriving after the link that uses it, is resolved by the whole-text
 * render the message gets when it is finished.
 */
export class BlockSplitter {
  /** The finished blocks' source, joined: the text every later update must start with. */
  #prefix = '';
  #finished: string[] = [];

  /**
   * Splits `source`: the finished blocks (the same strings as before, plus any that finished
   * now) and the last block's sanitised HTML. Only the text after the finished blocks is lexed.
   */
  update(source: string): { finished: readonly string[]; tail: string; tailHtml: string } {
    if (!source.startsWith(this.#prefix)) this.reset();
    const rest = source.slice(this.#prefix.length);
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
    return { finished: this.#finished, tail, tailHtml: renderTokens(tailTokens) };
  }

  reset() {
    this.#prefix = '';
    this.#finished = [];
  }
}
