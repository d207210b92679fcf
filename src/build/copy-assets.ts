/** Build step: the generated metadata documents sit beside the compiled generated modules that read them. */
import { copyFileSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';

const root = resolve(__dirname, '../../..');
mkdirSync(join(root, 'dist/generated'), { recursive: true });
for (const name of ['metadata.xml', 'metadata.json']) {
  copyFileSync(join(root, 'generated', name), join(root, 'dist/generated', name));
}
