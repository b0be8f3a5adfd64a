import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, render, screen } from '@testing-library/svelte';
// @ts-ignore -- the UI has no node types; vitest runs on node (CSS imports are emptied in tests).
import { readFileSync } from 'node:fs';
import { SHORTCUTS, globalShortcut, isTyping } from './shortcuts';
import ShortcutHelp from './components/ShortcutHelp.svelte';

afterEach(() => cleanup());

const css: string = readFileSync('src/app.css', 'utf8');

function key(target: HTMLElement, init: KeyboardEventInit) {
  document.body.append(target);
  const event = new KeyboardEvent('keydown', { bubbles: true, cancelable: true, ...init });
  Object.defineProperty(event, 'target', { value: target });
  return event;
}

describe('global shortcuts', () => {
  it.each([
    ['textarea', () => document.createElement('textarea')],
    ['text input', () => Object.assign(document.createElement('input'), { type: 'text' })],
    ['search input', () => Object.assign(document.createElement('input'), { type: 'search' })],
    ['select', () => document.createElement('select')],
  ])('never fire while typing in a %s', (_n, make) => {
    const el = make();
    expect(isTyping(el)).toBe(true);
    expect(globalShortcut(key(el, { key: '?' }))).toBeNull();
    expect(globalShortcut(key(el, { key: 'c' }))).toBeNull();
  });

  it('fire outside text boxes, never with a modifier', () => {
    const el = document.createElement('button');
    expect(globalShortcut(key(el, { key: '?' }))).toBe('help');
    expect(globalShortcut(key(el, { key: 'c' }))).toBe('composer');
    expect(globalShortcut(key(el, { key: 'c', ctrlKey: true }))).toBeNull();
    expect(globalShortcut(key(el, { key: 'x' }))).toBeNull();
    const checkbox = Object.assign(document.createElement('input'), { type: 'checkbox' });
    expect(globalShortcut(key(checkbox, { key: '?' }))).toBe('help');
  });

  it('the help dialog lists every shortcut', () => {
    render(ShortcutHelp, { open: true });
    const rows = screen.getByTestId('shortcut-help').querySelectorAll('tr');
    expect(rows).toHaveLength(SHORTCUTS.length);
    const text = screen.getByTestId('shortcut-help').textContent!;
    for (const s of SHORTCUTS) expect(text).toContain(s.what);
  });
});

/** WCAG relative luminance contrast of two #rrggbb colours. */
function contrast(a: string, b: string): number {
  const lum = (hex: string) => {
    const c = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16) / 255).map((v) => (v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4));
    return 0.2126 * c[0]! + 0.7152 * c[1]! + 0.0722 * c[2]!;
  };
  const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p);
  return (x! + 0.05) / (y! + 0.05);
}

function vars(block: string): Record<string, string> {
  return Object.fromEntries([...block.matchAll(/--([a-z]+):\s*(#[0-9a-f]{6})/gi)].map((m) => [m[1]!, m[2]!.toLowerCase()]));
}

describe('themes follow the system and stay readable', () => {
  const light = vars(css.slice(css.indexOf(':root'), css.indexOf('}')));
  const darkStart = css.indexOf('@media (prefers-color-scheme: dark)');
  const dark = vars(css.slice(darkStart, css.indexOf('}\n}', darkStart)));

  it('dark defines every colour light does', () => {
    expect(Object.keys(light).length).toBeGreaterThan(6);
    expect(Object.keys(dark).sort()).toEqual(Object.keys(light).sort());
    expect(css).toContain('color-scheme: light dark');
  });

  for (const [name, theme] of [['light', light], ['dark', dark]] as const) {
    it(`${name}: text, muted text and states hold 4.5:1 on the page and panels`, () => {
      for (const bg of ['bg', 'panel']) {
        for (const fg of ['text', 'muted', 'danger', 'ok', 'warn', 'accent']) {
          expect(contrast(theme[fg]!, theme[bg]!), `${fg} on ${bg}`).toBeGreaterThanOrEqual(4.5);
        }
      }
    });
  }

  it('text sizes are relative, so 125% text scales everything', () => {
    expect(css.match(/font-size:\s*\d+px/g) ?? []).toEqual([]);
  });
});
