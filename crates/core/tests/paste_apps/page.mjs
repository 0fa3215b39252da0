// The Chromium side of crates/core/tests/paste_apps.rs: connects to the
// browser over the DevTools protocol (playwright-core, with Debian's
// chromium) and answers one JSON line per command read on stdin:
//   clear  empty the text area and focus it
//   value  the text area's value, as the page sees it
import { createInterface } from 'node:readline';
import { chromium } from 'playwright-core';

const browser = await chromium.connectOverCDP(`http://127.0.0.1:${process.argv[2]}`);
const page = browser.contexts()[0].pages()[0];
await page.waitForSelector('#t');
console.log(JSON.stringify({ ready: true }));
for await (const line of createInterface({ input: process.stdin })) {
  if (line === 'clear') {
    await page.evaluate(() => {
      const t = document.getElementById('t');
      t.value = '';
      t.focus();
    });
    console.log(JSON.stringify({ ok: true }));
  } else if (line === 'value') {
    console.log(JSON.stringify({ value: await page.evaluate(() => document.getElementById('t').value) }));
  }
}
process.exit(0);
