import { BlockSplitter, renderMarkdown } from './markdown';

/**
 * Keeps an element's children equal to the sanitised render of a Markdown text, changing as
 * little of the DOM as it can: a streamed reply grows by a few words a frame, and replacing
 * the whole message each time costs a parse, a sanitise and a relayout of all of it.
 *
 * Every node it puts in the element comes from `renderMarkdown` (or the same render of the
 * last block); an existing node is kept only where it equals the new render's node in name
 * and attributes, and a text node takes the new text as data, never as HTML. So the element
 * always holds exactly what the sanitiser let through.
 */
export class MarkdownDom {
  readonly #root: HTMLElement;
  /** Adds what the render must not (a Copy button per code block) to freshly parsed nodes. */
  readonly #decorate: (nodes: ParentNode) => void;
  readonly #splitter = new BlockSplitter();
  /** While streaming: the root's children, block by block (`raw` is the block's source). */
  #blocks: Array<{ raw: string; nodes: ChildNode[] }> = [];
  /** What the root shows, and whether as a finished (whole) render. */
  #source: string | null = null;
  #final = false;

  constructor(root: HTMLElement, decorate: (nodes: ParentNode) => void = () => {}) {
    this.#root = root;
    this.#decorate = decorate;
  }

  /** A finished text: rendered whole (reference links resolved across blocks). */
  showFinal(source: string) {
    if (this.#final && source === this.#source) return;
    // A streamed text: its blocks are the blocks of the whole render, so only what changed is
    // rendered again (a 60 KB reply rendered whole at its end held a frame for 110 ms). A
    // reference definition can change a block before it: then the whole text, as below.
    if (!this.#final && this.#blocks.length && !LINK_DEFINITION.test(source)) {
      this.showStreaming(source);
      this.#final = true;
      this.#splitter.reset();
      this.#blocks = [];
      return;
    }
    this.#splitter.reset();
    this.#blocks = [];
    this.#source = source;
    this.#final = true;
    morphChildren(this.#root, [...this.#root.childNodes], this.#parse(renderMarkdown(source)));
  }

  /** A growing text: finished blocks were rendered once and stay; the last one is rendered again. */
  showStreaming(source: string) {
    if (!this.#final && source === this.#source) return;
    this.#source = source;
    this.#final = false;
    const { finished, tail, tailHtml, tailPlain } = this.#splitter.update(source);
    const wanted = [...finished, tail];
    if (!this.#blocks.length && this.#root.firstChild) {
      // Shown whole before (a reload mid-stream, a retry): those nodes become the first block
      // and are morphed into the blocks below.
      this.#blocks = [{ raw: '\u0000', nodes: [...this.#root.childNodes] }];
    }
    let same = 0;
    while (same < this.#blocks.length && same < wanted.length - 1 && this.#blocks[same]!.raw === wanted[same]) same++;
    const old = this.#blocks.slice(same).flatMap((b) => b.nodes);
    const fresh = wanted.slice(same).map((raw, i) => {
      const last = same + i === wanted.length - 1;
      return { raw, nodes: last ? this.#tail(tail, tailHtml, tailPlain) : this.#parse(renderMarkdown(raw)) };
    });
    const placed = morphChildren(this.#root, old, fresh.flatMap((b) => b.nodes));
    let at = 0;
    for (const b of fresh) {
      b.nodes = placed.slice(at, at + b.nodes.length);
      at += b.nodes.length;
    }
    this.#blocks = [...this.#blocks.slice(0, same), ...fresh];
  }

  /** The last block's nodes: its HTML, with the paragraph's plain start put back as text. */
  #tail(tail: string, html: string, plain: string): ChildNode[] {
    const nodes = this.#parse(html);
    if (!plain) return nodes;
    const paragraph = nodes[0];
    if (!(paragraph instanceof HTMLParagraphElement)) return this.#parse(renderMarkdown(tail));
    paragraph.insertBefore(document.createTextNode(plain), paragraph.firstChild);
    return nodes;
  }

  #parse(html: string): ChildNode[] {
    const template = document.createElement('template');
    template.innerHTML = html;
    this.#decorate(template.content);
    return [...template.content.childNodes];
  }
}

/**
 * Text that may define a link reference (`[id]: url`), which links before it may use: loose
 * on purpose (a definition may sit in a quote or a list item, its label may hold an escaped
 * bracket), since a miss would leave a link unresolved for good.
 */
const LINK_DEFINITION = /\]\s*:/;

function sameShell(a: Node, b: Node): boolean {
  if (a.nodeType !== b.nodeType || a.nodeName !== b.nodeName) return false;
  if (!(a instanceof Element) || !(b instanceof Element)) return true;
  if (a.attributes.length !== b.attributes.length) return false;
  for (const attr of b.attributes) if (a.getAttribute(attr.name) !== attr.value) return false;
  return true;
}

/**
 * Makes `parent`'s run of children `olds` (at its end) equal to `news`; returns the nodes now
 * in place, one per entry of `news` (a kept old node or the new one).
 */
export function morphChildren(parent: Node, olds: ChildNode[], news: ChildNode[]): ChildNode[] {
  const placed: ChildNode[] = [];
  for (let i = 0; i < news.length; i++) {
    const next = news[i]!;
    const old = olds[i];
    if (old && sameShell(old, next)) {
      if (old instanceof CharacterData) {
        const data = (next as CharacterData).data;
        // Streaming mostly appends: the text node grows instead of being set again.
        if (old.data !== data) {
          if (data.startsWith(old.data)) old.appendData(data.slice(old.data.length));
          else old.data = data;
        }
      } else if (old.nodeName !== 'BUTTON') {
        // A button is ours (Copy), with its listener and its "Copied" state: kept as it is.
        morphChildren(old, [...old.childNodes], [...next.childNodes]);
      }
      placed.push(old);
    } else {
      parent.insertBefore(next, old ?? null);
      old?.remove();
      placed.push(next);
    }
  }
  for (let i = news.length; i < olds.length; i++) olds[i]!.remove();
  return placed;
}
