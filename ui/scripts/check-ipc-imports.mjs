// Fails when a file outside src/lib/ipc/ imports @tauri-apps/*: the IPC module is the only
// place that knows about the native bridge (DESIGN.md §16).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';

const root = new URL('../src/', import.meta.url).pathname;
const allowed = join(root, 'lib', 'ipc') + sep;
const offenders = [];

function walk(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path);
    else if (/\.(ts|js|svelte)$/.test(name) && !path.startsWith(allowed)) {
      if (/from\s+['"]@tauri-apps\//.test(readFileSync(path, 'utf8'))) offenders.push(relative(root, path));
    }
  }
}

walk(root);
if (offenders.length) {
  console.error(`@tauri-apps imported outside src/lib/ipc/: ${offenders.join(', ')}`);
  process.exit(1);
}
console.log('ipc boundary ok');
