// Page-test harness: serves ui/dist under a strict CSP, opens it in headless
// Chromium with the fake shell installed first, and collects page errors.
import { chromium, type Browser, type Page } from 'playwright-core';
import { createServer, type Server } from 'node:http';
import { mkdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { extname, join, normalize, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Call, Fixture } from './fake-shell';

const here = fileURLToPath(new URL('.', import.meta.url));
const DIST = resolve(here, '../../dist');
const SHELL_JS = resolve(here, '../../test-results/fake-shell.js');
export const SHOTS = process.env.UI_SHOTS_DIR ?? '/tmp/ui-shots';

/** What the Tauri shell is expected to enforce; the pages must work under it. */
export const CSP =
  "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; media-src 'self' blob:";

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript',
  '.css': 'text/css',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

export interface Harness {
  browser: Browser;
  server: Server;
  base: string;
  close: () => Promise<void>;
}

export async function start(): Promise<Harness> {
  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/favicon.ico') {
      // Chromium asks for one on its own; the app has none and needs none.
      res.writeHead(204).end();
      return;
    }
    const rel = normalize(decodeURIComponent(url.pathname)).replace(/^([/\\])+/, '') || 'index.html';
    const file = join(DIST, rel);
    if (!file.startsWith(DIST)) {
      res.writeHead(403).end();
      return;
    }
    try {
      const body = await readFile(file);
      res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream', 'content-security-policy': CSP });
      res.end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const port = (server.address() as { port: number }).port;
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-dev-shm-usage',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  mkdirSync(SHOTS, { recursive: true });
  return {
    browser,
    server,
    base: `http://127.0.0.1:${port}`,
    close: async () => {
      await browser.close();
      await new Promise((ok) => server.close(ok));
    },
  };
}

export interface OpenOptions {
  path?: string;
  hash?: string;
  colorScheme?: 'light' | 'dark';
  viewport?: { width: number; height: number };
  /** A script run in the page before the app's own (e.g. to pose as macOS). */
  init?: string;
}

export interface Opened {
  page: Page;
  /** Console errors, uncaught exceptions and CSP violations seen so far. */
  problems: string[];
  close: () => Promise<void>;
}

export async function open(h: Harness, fixture: Fixture, opts: OpenOptions = {}): Promise<Opened> {
  const context = await h.browser.newContext({
    colorScheme: opts.colorScheme ?? 'light',
    viewport: opts.viewport ?? { width: 980, height: 720 },
    deviceScaleFactor: 1,
  });
  await context.addInitScript({ content: `window.__UTTER_FIXTURE__ = ${JSON.stringify(fixture)};` });
  await context.addInitScript({ path: SHELL_JS });
  if (opts.init) await context.addInitScript({ content: opts.init });
  await context.addInitScript({
    content: `document.addEventListener('securitypolicyviolation', (e) => console.error('CSP violation: ' + e.violatedDirective + ' ' + e.blockedURI));`,
  });
  context.setDefaultTimeout(5000);
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') problems.push(`${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  await page.goto(`${h.base}/${opts.path ?? 'index.html'}${opts.hash ? `#/${opts.hash}` : ''}`);
  return { page, problems, close: () => context.close() };
}

export function calls(page: Page, cmd?: string): Promise<Call[]> {
  return page.evaluate((c) => window.__shell.calls.filter((x) => !c || x.cmd === c), cmd ?? null);
}

export function emit(page: Page, event: string, payload: unknown): Promise<void> {
  return page.evaluate(([e, p]) => window.__shell.emit(e as string, p), [event, payload] as const);
}

/** Waits until the fake shell has seen `cmd` (at least `count` times); returns those calls. */
export async function waitForCall(page: Page, cmd: string, count = 1): Promise<Call[]> {
  await page.waitForFunction(
    ([c, n]) => window.__shell.calls.filter((x) => x.cmd === c).length >= (n as number),
    [cmd, count] as const,
    { timeout: 5000 },
  );
  return calls(page, cmd);
}

/** The audio player `testid` shows, plays a blob the page made from the
 *  shell's bytes, and the browser read it without an error. */
export async function expectPlayable(page: Page, testid: string): Promise<void> {
  const player = page.getByTestId(testid);
  await player.waitFor();
  const src = await player.getAttribute('src');
  if (!src?.startsWith('blob:')) throw new Error(`${testid} plays ${src}, not a blob`);
  await page.waitForFunction((id) => {
    const a = document.querySelector(`[data-testid=${id}]`) as HTMLAudioElement | null;
    return !!a && (a.readyState >= 1 || a.error != null);
  }, testid);
  const error = await player.evaluate((a) => (a as HTMLAudioElement).error?.message ?? null);
  if (error !== null) throw new Error(`${testid}: ${error}`);
}

export async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: false });
}
