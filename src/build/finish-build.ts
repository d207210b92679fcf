/**
 * Last build step: the generated metadata documents and record schemas go beside the compiled generated modules
 * that read them,
 * the metadata template beside the module that renders with it, the console's page and stylesheet beside its
 * compiled scripts,
 * and the stamp of the build in progress (begun by the build script's first step, with a digest of what it read)
 * becomes the build stamp, recording that dist/ is complete, so that every start
 * can tell a fresh build from a stale one without compiling (scripts/freshness.js, plain JavaScript: loaded by path).
 */
import { copyFileSync, mkdirSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { copyTemplates } from './copy-templates';

const root = resolve(__dirname, '../../..');
mkdirSync(join(root, 'dist/generated'), { recursive: true });
for (const name of ['metadata.xml', 'metadata.json']) {
  copyFileSync(join(root, 'generated', name), join(root, 'dist/generated', name));
}
copyTemplates(root);
mkdirSync(join(root, 'dist/generated/schemas'), { recursive: true });
for (const name of readdirSync(join(root, 'generated/schemas')).filter((n) => n.endsWith('.json'))) {
  copyFileSync(join(root, 'generated/schemas', name), join(root, 'dist/generated/schemas', name));
}
// The console's page and stylesheet go beside its compiled scripts (src/console/console-routes.ts serves that folder).
mkdirSync(join(root, 'dist/console-web'), { recursive: true });
for (const name of ['index.html', 'console.css']) {
  copyFileSync(join(root, 'src/console/web', name), join(root, 'dist/console-web', name));
}
const freshness = require(join(root, 'scripts/freshness.js')) as { finishBuild(root: string): void };
freshness.finishBuild(root);
