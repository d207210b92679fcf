/**
 * The handlebars templates go beside the compiled modules that read them (src/metadata/metadata-xml.ts reads
 * templates/ next to itself). Part of the build (finish-build.ts), and run on its own by `npm run generate`,
 * whose compile of the generator emits the same modules but copies nothing.
 */
import { cpSync } from 'node:fs';
import { join, resolve } from 'node:path';

const TEMPLATE_FOLDERS = ['src/metadata/templates'];

export function copyTemplates(root: string): void {
  for (const folder of TEMPLATE_FOLDERS) cpSync(join(root, folder), join(root, 'dist', folder), { recursive: true });
}

if (require.main === module) copyTemplates(resolve(__dirname, '../../..'));
