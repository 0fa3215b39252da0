#!/usr/bin/env node
// The per-build Tauri configuration of a release variant, merged over src-tauri/tauri.conf.json
// with `tauri build --config FILE`. Used by the release workflow and by tests/package/deb.sh
// (which checks what a Vulkan .deb declares).
//   node scripts/release-config.mjs OUT.json
// Read from the environment: VARIANT (""|cuda|vulkan), OS (linux|windows|macos; default: this
// one), GITHUB_REPOSITORY (the updater feed's repository), WINDOWS_CERT_THUMBPRINT (signing).
// - Windows: signtool signing with the imported certificate, when there is one.
// - A GPU variant: its own updater feed, so it never updates to a CPU build.
// - CUDA: the CUDA DLLs in src-tauri/cuda-dlls shipped next to the app.
// - Vulkan on Linux: the Vulkan loader as a declared dependency of the .deb and .rpm.
// - Linux: the `utter` command in /usr/bin of the .deb and .rpm, built before the bundling with
//   the app's features (BUILD_FEATURE_FLAGS, e.g. "--features vulkan,dynamic-backends"), or the
//   one at UTTER_CLI when set (tests/package/deb.sh ships its test build).
// - CPU_DISPATCH=1 (x86-64 Linux and Windows, built with dynamic-backends): the engine's shared
//   library and its CPU modules, staged between the compile and the bundling, installed as
//   resources: next to the .exe on Windows, in /usr/lib/Utter on Linux (the binary's rpath,
//   src-tauri/build.rs).
import fs from "node:fs";
import path from "node:path";

const out = process.argv[2];
if (!out) {
  console.error("usage: node scripts/release-config.mjs OUT.json");
  process.exit(2);
}
const env = process.env;
const os = (env.OS || { linux: "linux", win32: "windows", darwin: "macos" }[process.platform]).toLowerCase();
const variant = env.VARIANT || "";
const base = JSON.parse(fs.readFileSync("src-tauri/tauri.conf.json", "utf8"));
const cfg = { bundle: {} };

if (env.WINDOWS_CERT_THUMBPRINT) {
  cfg.bundle.windows = {
    certificateThumbprint: env.WINDOWS_CERT_THUMBPRINT,
    digestAlgorithm: "sha256",
    timestampUrl: "http://timestamp.digicert.com",
  };
}
if (variant === "cuda") {
  const resources = {};
  for (const dll of fs.readdirSync("src-tauri/cuda-dlls")) resources[`cuda-dlls/${dll}`] = dll;
  cfg.bundle.resources = resources;
}
const target = env.CARGO_TARGET_DIR || "target";
// Shell commands run between the compile and the bundling, in order.
const beforeBundle = [];
if (env.CPU_DISPATCH === "1") {
  beforeBundle.push(`bash scripts/stage-engine-libs.sh ${target}/release src-tauri/engine-libs`);
  cfg.bundle.resources = { ...(cfg.bundle.resources || {}), "engine-libs/*": "./" };
}
if (os === "linux") {
  const linux = base.bundle.linux;
  const vulkan = variant === "vulkan";
  let cli = env.UTTER_CLI;
  if (!cli) {
    // Features are names and commas only: nothing else reaches the shell.
    const features = (env.BUILD_FEATURE_FLAGS || "").trim();
    if (!/^(--features [a-z0-9_,-]+)?$/.test(features)) {
      console.error(`BUILD_FEATURE_FLAGS must be empty or "--features a,b": ${features}`);
      process.exit(2);
    }
    beforeBundle.push(`cargo build --release --locked -p utter-cli ${features}`.trim());
    cli = `${target}/release/utter`;
  }
  // Absolute: the bundler reads paths relative to src-tauri.
  const files = { "/usr/bin/utter": path.resolve(cli) };
  cfg.bundle.linux = {
    deb: { files, ...(vulkan ? { depends: [...linux.deb.depends, "libvulkan1"] } : {}) },
    rpm: { files, ...(vulkan ? { depends: [...linux.rpm.depends, "vulkan-loader"] } : {}) },
  };
}
if (beforeBundle.length) cfg.build = { beforeBundleCommand: beforeBundle.join(" && ") };
if (variant && base.plugins && base.plugins.updater) {
  const repo = env.GITHUB_REPOSITORY || "utter-app/utter";
  const feed = `https://github.com/${repo}/releases/latest/download/latest-${os}-${variant}.json`;
  cfg.plugins = { updater: { endpoints: [feed] } };
}
fs.writeFileSync(out, JSON.stringify(cfg, null, 2));
console.log(JSON.stringify(cfg, null, 2).replace(/"certificateThumbprint": "[^"]*"/, '"certificateThumbprint": "***"'));
