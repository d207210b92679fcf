/**
 * Last build step: the generated metadata documents and record schemas go beside the compiled generated modules
 * that read them,
 * the console's page and stylesheet beside its compiled scripts,
 * and the build stamp records that dist/ is complete, so `npm start` can tell a fresh build from a stale one
 * (scripts/start.js) without compiling.
 */
import { copyFileSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const root = resolve(__dirname, '../../..');
mkdirSync(join(root, 'dist/generated'), { recursive: true });
for (const name of ['metadata.xml', 'metadata.json']) {
  copyFileSync(join(root, 'generated', name), join(root, 'dist/generated', name));
}
mkdirSync(join(root, 'dist/generated/schemas'), { recursive: true });
for (const name of readdirSync(join(root, 'generated/schemas')).filter((n) => n.endsWith('.json'))) {
  copyFileSync(join(root, 'generated/schemas', name), join(root, 'dist/generated/schemas', name));
}
// The console's page and stylesheet go beside its compiled scripts (src/console/console-routes.ts serves that folder).
mkdirSync(join(root, 'dist/console-web'), { recursive: true });
for (const name of ['index.html', 'console.css']) {
  copyFileSync(join(root, 'src/console/web', name), join(root, 'dist/console-web', name));
}
writeFileSync(join(root, 'dist/.build-stamp'), `${new Date().toISOString()}\n`);
