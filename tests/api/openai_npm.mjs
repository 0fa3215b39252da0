// The official `openai` npm package against a running `utter serve`: one
// transcription and models.list(). Run by crates/cli/tests/serve.rs:
// node openai_npm.mjs OPENAI_PACKAGE_DIR BASE_URL SPEECH_WAV
// Prints `RESULT {json}`; any failure throws (exit status 1).
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [pkgDir, baseURL, wav] = process.argv.slice(2);
const { default: OpenAI } = await import(pathToFileURL(path.join(pkgDir, "index.mjs")).href);
const client = new OpenAI({ baseURL, apiKey: "any-key", maxRetries: 0 });
const models = [];
for await (const m of client.models.list()) models.push(m.id);
if (!models.includes("whisper-tiny.en")) throw new Error(`models.list(): ${models}`);
const t = await client.audio.transcriptions.create({ model: "whisper-1", file: fs.createReadStream(wav) });
if (typeof t.text !== "string" || t.text.split(" ").length < 5) throw new Error(`transcription: ${JSON.stringify(t)}`);
console.log("RESULT " + JSON.stringify({ models, text: t.text }));
