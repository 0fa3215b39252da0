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
// - CPU_DISPATCH=1 (x86-64 Linux and Windows, built with dynamic-backends): the engine's shared
//   library and its CPU modules, staged between the compile and the bundling, installed as
//   resources: next to the .exe on Windows, in /usr/lib/Utter on Linux (the binary's rpath,
//   src-tauri/build.rs).
import fs from "node:fs";

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
if (env.CPU_DISPATCH === "1") {
  const target = env.CARGO_TARGET_DIR || "target";
  cfg.build = {
    beforeBundleCommand: `bash scripts/stage-engine-libs.sh ${target}/release src-tauri/engine-libs`,
  };
  cfg.bundle.resources = { ...(cfg.bundle.resources || {}), "engine-libs/*": "./" };
}
if (variant === "vulkan" && os === "linux") {
  const linux = base.bundle.linux;
  cfg.bundle.linux = {
    deb: { depends: [...linux.deb.depends, "libvulkan1"] },
    rpm: { depends: [...linux.rpm.depends, "vulkan-loader"] },
  };
}
if (variant && base.plugins && base.plugins.updater) {
  const repo = env.GITHUB_REPOSITORY || "utter-app/utter";
  const feed = `https://github.com/${repo}/releases/latest/download/latest-${os}-${variant}.json`;
  cfg.plugins = { updater: { endpoints: [feed] } };
}
fs.writeFileSync(out, JSON.stringify(cfg, null, 2));
console.log(JSON.stringify(cfg, null, 2).replace(/"certificateThumbprint": "[^"]*"/, '"certificateThumbprint": "***"'));
