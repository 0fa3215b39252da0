// The README's promises, checked (`node --test tests/docs/readme.test.mjs`; part of `npm test`):
// - every measured figure it quotes ("5.3 %", "156 ms", "116 MB", "3.2×"...) is one that
//   docs/benchmarks.md reports, and the paragraph quoting it links to that file;
// - every relative link in the README, CONTRIBUTING.md and docs/*.md points to a file that
//   exists, and every #anchor into a Markdown file to one of its headings;
// - the README still holds the two commands (`npm start`, `npm test`) that CI runs.
// The convention the first check relies on: a figure written with an abbreviated unit is a
// measurement; a limit or a default is written out ("480 minutes", "two seconds") or listed in
// ALLOWED below with its reason.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const read = (rel) => fs.readFileSync(path.join(ROOT, rel), "utf8");

/** Figures that are not benchmark results, each with why it may stand in the README. */
const ALLOWED = new Map([
  // e.g. ["30 s", "Whisper's fixed window length, a property of the model"],
]);

const NUMBER = String.raw`\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?`;
const UNIT = String.raw`%|ms|s|min|[kKMG]i?B|×|x`;
// A number (or a range of two, "0.0–0.2"), an optional space, then a unit that no letter or
// digit follows ("5 s" but not "5 seconds"; "3x" but not "64x48").
const FIGURE = new RegExp(
  String.raw`(?<![\w.,])(${NUMBER})(?:\s?[–-]\s?(${NUMBER}))?[ \u00a0\u202f]?(${UNIT})(?![\p{L}\p{N}])`,
  "gu",
);

/** One spelling for a figure: no spaces or thousands commas, "x" as "×". */
function key(number, unit) {
  return `${number.replace(/,/g, "")}${unit === "x" ? "×" : unit}`;
}

/** Every figure in `text`: [as written, its keys (the whole, and for a range each end)]. */
function figures(text) {
  const found = [];
  for (const m of text.matchAll(FIGURE)) {
    const [written, a, b, unit] = m;
    const keys = b ? [`${key(a, "")}–${key(b, unit)}`, key(a, unit), key(b, unit)] : [key(a, unit)];
    found.push({ written, keys, index: m.index });
  }
  return found;
}

/** Text with fenced code blocks and inline code blanked out (same length, same line breaks). */
function withoutCode(md) {
  const blank = (s) => s.replace(/[^\n]/g, " ");
  return md.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, blank).replace(/`[^`\n]*`/g, blank);
}

/** GitHub's anchor for a heading's text. */
function slug(heading) {
  return heading
    .trim()
    .toLowerCase()
    .replace(/<[^>]*>/g, "")
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "")
    .replace(/ /g, "-");
}

/** The anchors a Markdown file's headings make, with GitHub's -1, -2 for repeats. */
function anchors(md) {
  const seen = new Map();
  const out = new Set();
  const prose = md.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "");
  for (const m of prose.matchAll(/^#{1,6}[ \t]+(.+?)[ \t#]*$/gm)) {
    const base = slug(m[1]);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** The blocks of a Markdown text: paragraphs, list items, table rows, code blocks. */
function blocks(md) {
  const out = [];
  let current = [];
  let fence = null;
  const flush = () => {
    if (current.length) out.push(current.join("\n"));
    current = [];
  };
  for (const line of md.split("\n")) {
    if (fence) {
      current.push(line);
      if (line.startsWith(fence)) {
        fence = null;
        flush();
      }
      continue;
    }
    const opens = line.match(/^(```|~~~)/);
    if (opens) {
      flush();
      fence = opens[1];
      current.push(line);
      continue;
    }
    if (line.trim() === "") flush();
    else if (/^\s*([-*+]|\d+\.)\s/.test(line) || line.startsWith("|") || line.startsWith("#")) {
      flush();
      current.push(line);
    } else current.push(line);
  }
  flush();
  return out;
}

/** Relative link targets in a Markdown text (inline links, images and reference definitions). */
function relativeLinks(md) {
  const prose = withoutCode(md);
  const targets = [];
  for (const m of prose.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) targets.push(m[1]);
  for (const m of prose.matchAll(/^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$/gm)) targets.push(m[1]);
  return targets.filter((t) => !/^[a-z][a-z0-9+.-]*:/i.test(t));
}

const README = read("README.md");
const BENCHMARKS = read("docs/benchmarks.md");

test("the figure finder reads the README's ways of writing figures", () => {
  const keys = (s) => figures(s).flatMap((f) => f.keys);
  assert.deepEqual(keys("5.3 % and 5.3%"), ["5.3%", "5.3%"]);
  assert.deepEqual(keys("a median 156 ms, 4.62 s, 116 MB, 138 KiB"), ["156ms", "4.62s", "116MB", "138KiB"]);
  assert.deepEqual(keys("3.2× slower, 2x more"), ["3.2×", "2×"]);
  assert.deepEqual(keys("0.0–0.2 % of a core"), ["0.0–0.2%", "0.0%", "0.2%"]);
  assert.deepEqual(keys("1,366 ms"), ["1366ms"]);
  assert.deepEqual(keys("480 minutes, 5 seconds, a 64x48 PNG, x86_64, 2 cores, 16 kHz"), []);
});

test("every figure in the README is one docs/benchmarks.md reports", () => {
  const reported = new Set(figures(BENCHMARKS).flatMap((f) => f.keys));
  const missing = figures(README)
    .filter((f) => !ALLOWED.has(f.written) && !f.keys.some((k) => reported.has(k)))
    .map((f) => `"${f.written}" (README.md line ${README.slice(0, f.index).split("\n").length})`);
  assert.deepEqual(
    missing,
    [],
    "these figures are not in docs/benchmarks.md: correct them from there, or if one is a limit " +
      "or a default rather than a measurement, write its unit out (\"480 minutes\")",
  );
});

test("a README paragraph that quotes a benchmark figure links to docs/benchmarks.md", () => {
  const bare = blocks(README)
    .filter((b) => figures(b).some((f) => !ALLOWED.has(f.written)))
    .filter((b) => !/\]\(docs\/benchmarks\.md(#[^)]*)?\)/.test(b))
    .map((b) => b.split("\n")[0].slice(0, 100));
  assert.deepEqual(bare, [], "link each of these to the section of docs/benchmarks.md its figures come from");
});

const DOCS = fs
  .readdirSync(path.join(ROOT, "docs"))
  .filter((f) => f.endsWith(".md"))
  .map((f) => `docs/${f}`);

for (const file of ["README.md", "CONTRIBUTING.md", ...DOCS]) {
  test(`every relative link in ${file} points to something that exists`, () => {
    const md = read(file);
    const broken = [];
    for (const target of relativeLinks(md)) {
      const [rawPath, anchor] = target.split("#", 2);
      const rel = decodeURIComponent(rawPath);
      const resolved = rel ? path.resolve(path.dirname(path.join(ROOT, file)), rel) : path.join(ROOT, file);
      if (!fs.existsSync(resolved)) {
        broken.push(`${target}: no such file`);
        continue;
      }
      if (anchor !== undefined && resolved.endsWith(".md")) {
        if (!anchors(fs.readFileSync(resolved, "utf8")).has(anchor)) {
          broken.push(`${target}: no heading makes #${anchor} in ${path.relative(ROOT, resolved)}`);
        }
      }
    }
    assert.deepEqual(broken, []);
  });
}

test("the README still holds the two commands", () => {
  const fenced = [...README.matchAll(/^```[^\n]*\n([\s\S]*?)^```/gm)].map((m) => m[1]).join("\n");
  assert.match(fenced, /^npm start(\s|$)/m, "the command that sets up and starts the app: `npm start`");
  assert.match(fenced, /^npm test(\s|$)/m, "the command that runs the tests (CI runs it): `npm test`");
});

test("GitHub's heading slugs, as the link check computes them", () => {
  assert.equal(slug("The crates (one screen)"), "the-crates-one-screen");
  assert.equal(slug("The local server: `utter serve` and `utter mcp`"), "the-local-server-utter-serve-and-utter-mcp");
  assert.equal(
    slug("File transcription (`utter transcribe`), whisper tiny.en (converted by Utter), CPU"),
    "file-transcription-utter-transcribe-whisper-tinyen-converted-by-utter-cpu",
  );
  assert.deepEqual([...anchors("# A\n## A\n```\n# not a heading\n```\n### A\n")], ["a", "a-1", "a-2"]);
});
