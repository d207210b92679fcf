/**
 * The console's static shell under `/console`: one page and its assets, every one from the package (the
 * compiled front end in dist/console-web, Chart.js from node_modules), so it works offline. The shell holds no
 * data and is public; everything it shows comes from token-checked endpoints, with the token kept in the
 * page's memory (never a cookie, never in a URL). Every answer carries a strict Content-Security-Policy: no
 * inline script or style, nothing from another origin.
 */
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import express, { Response, Router } from 'express';

/** The compiled front end and its copied page and stylesheet (tsconfig in src/console/web, build/finish-build.ts). */
export const CONSOLE_ASSETS = resolve(__dirname, '../../console-web');

export const CONSOLE_POLICY = [
  "default-src 'none'", "script-src 'self'", "style-src 'self'", "img-src 'self' data: blob:", "connect-src 'self'",
  "font-src 'self'", "base-uri 'none'", "form-action 'none'", "frame-ancestors 'none'",
].join('; ');

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8',
};

function secure(res: Response): void {
  res.setHeader('Content-Security-Policy', CONSOLE_POLICY);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('Cross-Origin-Opener-Policy', 'same-origin');
  // The shell changes only with the package; revalidating keeps an upgraded server's page and scripts in step.
  res.setHeader('Cache-Control', 'no-cache');
}

/** Chart.js's self-contained build (its package exports no subpath for it, so it is found beside the main file). */
function chartScript(): string | undefined {
  try {
    const file = join(dirname(require.resolve('chart.js')), 'chart.umd.min.js');
    return existsSync(file) ? file : undefined;
  } catch {
    return undefined;
  }
}

/** The files the shell may serve, by the name it asks for: nothing else under the folders is reachable. */
function assets(): Map<string, string> {
  const files = new Map<string, string>();
  if (existsSync(CONSOLE_ASSETS)) {
    for (const name of readdirSync(CONSOLE_ASSETS)) {
      if (/^[a-z-]+\.(js|css|html)$/.test(name)) files.set(name, join(CONSOLE_ASSETS, name));
    }
  }
  const chart = chartScript();
  if (chart) files.set('chart.umd.min.js', chart);
  return files;
}

export function consoleRoutes(): Router {
  const files = assets();
  const router = express.Router({ caseSensitive: true, strict: true });
  const send = (name: string, res: Response, next: (e?: unknown) => void) => {
    const file = files.get(name);
    if (!file) return next();
    secure(res);
    res.setHeader('Content-Type', TYPES[name.slice(name.lastIndexOf('.'))]);
    res.sendFile(file, { headers: { 'Cache-Control': 'no-cache' } }, (e) => e && next(e));
  };
  router.get('/console', (_req, res) => res.redirect(301, '/console/'));
  router.get('/console/', (_req, res, next) => send('index.html', res, next));
  router.get('/console/assets/:name', (req, res, next) => send(req.params.name, res, next));
  return router;
}
