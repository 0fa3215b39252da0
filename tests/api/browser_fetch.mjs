// A web page in Chromium (headless, Debian's, driven by playwright-core) at
// http://127.0.0.1:PAGE_PORT posts a WAV to a running `utter serve` with
// fetch + FormData, as a web app would. Run by crates/cli/tests/serve.rs:
// node browser_fetch.mjs PAGE_PORT SERVER_URL SPEECH_WAV
// Prints `RESULT {json}`: {ok: true, status, text} when the page could read
// the answer, {ok: false, error} when the browser refused it (no CORS).
import fs from 'node:fs';
import http from 'node:http';
import { chromium } from 'playwright-core';

const [pagePort, serverUrl, wav] = process.argv.slice(2);
const page_server = http.createServer((_, res) => {
  res.writeHead(200, { 'content-type': 'text/html' });
  res.end('<!doctype html><title>notes</title><p>a web app</p>');
});
await new Promise((ok) => page_server.listen(Number(pagePort), '127.0.0.1', ok));
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
});
try {
  const page = await browser.newPage();
  await page.goto(`http://127.0.0.1:${pagePort}/`);
  const audio = fs.readFileSync(wav).toString('base64');
  const result = await page.evaluate(
    async ({ url, audio }) => {
      const bytes = Uint8Array.from(atob(audio), (c) => c.charCodeAt(0));
      const form = new FormData();
      form.append('file', new Blob([bytes], { type: 'audio/wav' }), 'speech.wav');
      form.append('model', 'whisper-1');
      try {
        const res = await fetch(`${url}/v1/audio/transcriptions`, { method: 'POST', body: form });
        const body = await res.json();
        return { ok: true, status: res.status, text: body.text ?? null, body };
      } catch (e) {
        return { ok: false, error: String(e) };
      }
    },
    { url: serverUrl, audio },
  );
  console.log('RESULT ' + JSON.stringify(result));
} finally {
  await browser.close();
  page_server.close();
}
