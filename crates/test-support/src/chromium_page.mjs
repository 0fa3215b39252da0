// The DevTools side of `utter_test_support::chromium::TextAreaPage`: connects
// to the browser (playwright-core, with Debian's chromium) and answers one
// line per command read on stdin:
//   clear  empty the text area and focus it        → ok
//   value  the text area's value, as the page sees it → its UTF-8 bytes in hex
import { createInterface } from 'node:readline';
import { chromium } from 'playwright-core';

const browser = await chromium.connectOverCDP(`http://127.0.0.1:${process.argv[2]}`);
const page = browser.contexts()[0].pages()[0];
await page.waitForSelector('#t');
console.log('ready');
for await (const line of createInterface({ input: process.stdin })) {
  if (line === 'clear') {
    await page.evaluate(() => {
      const t = document.getElementById('t');
      t.value = '';
      t.focus();
    });
    console.log('ok');
  } else if (line === 'value') {
    const value = await page.evaluate(() => document.getElementById('t').value);
    console.log(Buffer.from(value, 'utf8').toString('hex'));
  }
}
process.exit(0);
