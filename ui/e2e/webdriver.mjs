// A minimal W3C WebDriver client over fetch: the few verbs the end-to-end tests use, with no
// dependency that would try to download a browser of its own.

/** The W3C key of an element reference in WebDriver's JSON. */
export const ELEMENT = 'element-6066-11e4-a52e-4f735466cecf';

// W3C names the reference key above; older drivers used `ELEMENT`. Accept either, and fail
// loudly on anything else rather than passing `undefined` on.
function elementRef(value) {
  const ref = value?.[ELEMENT] ?? value?.ELEMENT;
  if (typeof ref !== 'string') throw new Error(`not an element reference: ${JSON.stringify(value)}`);
  return ref;
}

export class WebDriverError extends Error {
  constructor(method, path, status, value) {
    super(`${method} ${path} -> ${status}: ${value?.error ?? ''} ${value?.message ?? JSON.stringify(value)}`);
    this.status = status;
    this.value = value;
  }
}

async function request(base, method, path, body) {
  const res = await fetch(base + path, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let json;
  try {
    json = text ? JSON.parse(text) : {};
  } catch {
    throw new WebDriverError(method, path, res.status, { message: text });
  }
  if (!res.ok) throw new WebDriverError(method, path, res.status, json.value);
  return json.value;
}

export class Session {
  constructor(base, id) {
    this.base = base;
    this.id = id;
  }

  static async create(base, application) {
    const value = await request(base, 'POST', '/session', {
      capabilities: { alwaysMatch: { 'tauri:options': { application } } },
    });
    return new Session(base, value.sessionId);
  }

  cmd(method, path, body) {
    return request(this.base, method, `/session/${this.id}${path}`, body);
  }

  async find(css) {
    const value = await this.cmd('POST', '/element', { using: 'css selector', value: css });
    return elementRef(value);
  }

  async findAll(css) {
    const value = await this.cmd('POST', '/elements', { using: 'css selector', value: css });
    return value.map(elementRef);
  }

  /** Polls until `css` matches, or fails with what was last seen. */
  async waitFor(css, { timeoutMs = 10_000, count = 1 } = {}) {
    const deadline = Date.now() + timeoutMs;
    let found = [];
    while (Date.now() < deadline) {
      found = await this.findAll(css);
      if (found.length >= count) return found;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`timed out waiting for ${count} × ${css}; found ${found.length}`);
  }

  /**
   * The element's rendered text (innerText). WebKitWebDriver's own text endpoint answers ''
   * for text inside `overflow: hidden` + ellipsis boxes, which every title here uses.
   */
  text(element) {
    return this.execute('return arguments[0].innerText', [{ [ELEMENT]: element }]);
  }

  click(element) {
    return this.cmd('POST', `/element/${element}/click`, {});
  }

  type(element, text) {
    return this.cmd('POST', `/element/${element}/value`, { text });
  }

  execute(script, args = []) {
    return this.cmd('POST', '/execute/sync', { script, args });
  }

  async screenshotPng() {
    const b64 = await this.cmd('GET', '/screenshot');
    return Buffer.from(b64, 'base64');
  }

  async delete() {
    await this.cmd('DELETE', '');
  }
}
