//! Which catalog model suits this computer, one for dictation and one for
//! files, each with its reason in one line. The rule is deliberately simple
//! and stated here, so the UI and the CLI can show why:
//!
//! - Only speech models that speak the language, with an accuracy score, and
//!   whose file fits: in the GPU's memory (at most 70 % of it) when there is a
//!   GPU, else in a quarter of the RAM.
//! - On the CPU, size is speed: dictation takes models up to 120 M parameters
//!   per core (≈ 250 M on 2 cores), files twice that. A GPU lifts the
//!   parameter limit; dictation then still wants a speed score ≥ 75.
//! - Among those, the most accurate wins; ties go to the faster one.
//! - Except on the class of machine this project measures on (no GPU, at
//!   most 4 cores) for English: there the models with measured figures
//!   ([`super::measured`]) are chosen by those figures: dictation takes the
//!   lowest live word error rate among models that use at most a quarter of
//!   the CPU while the user speaks and deliver within 150 ms of the release;
//!   files the lowest word error rate at a real-time factor of at most 0.1.

use super::catalog::{Catalog, CatalogModel};
use super::measured::{self, Measured, REFERENCE_CORES};
pub use super::store::ModelUse;

/// What the recommendation is based on.
#[derive(Debug, Clone, PartialEq)]
pub struct Hardware {
    /// `None` when it could not be read (then 8 GB is assumed, and said).
    pub ram_bytes: Option<u64>,
    pub cpu_cores: usize,
    /// The largest GPU the engine can use, if any: (name, memory).
    pub gpu: Option<(String, u64)>,
}

impl Hardware {
    /// This computer, as the engine and the OS report it.
    pub fn detect() -> Self {
        Self {
            ram_bytes: total_ram(),
            cpu_cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            gpu: utter_engine::largest_gpu(),
        }
    }
}

/// A recommended model and why, in one line.
#[derive(Debug, Clone, PartialEq)]
pub struct Recommendation {
    pub model: String,
    pub reason: String,
}

const ASSUMED_RAM: u64 = 8 << 30;
const PARAMS_PER_CORE_DICTATION: f64 = 120e6;
const GPU_MEMORY_SHARE: f64 = 0.7;
const GPU_DICTATION_MIN_SPEED: u32 = 75;
/// Machines like the one the figures come from: no GPU, at most this many cores.
const MEASURED_CLASS_MAX_CORES: usize = 4;
/// Dictation may keep this share of the CPU busy while the user speaks.
const DICTATION_CPU_SHARE: f64 = 0.25;
/// A median wait past this after the release is felt.
const DICTATION_MAX_RELEASE_MS: f64 = 150.0;
/// Files: an hour of audio in at most 6 minutes.
const FILES_MAX_RTF: f64 = 0.1;

/// "0.6B" → 6e8, "180M" → 1.8e8.
fn parameters(model: &CatalogModel) -> Option<f64> {
    let p = model.parameters.as_deref()?.trim();
    let (number, scale) = match p.chars().last()? {
        'B' | 'b' => (&p[..p.len() - 1], 1e9),
        'M' | 'm' => (&p[..p.len() - 1], 1e6),
        _ => (p, 1.0),
    };
    number.trim().parse::<f64>().ok().map(|n| n * scale)
}

fn gb(bytes: u64) -> String {
    format!("{:.0} GB", bytes as f64 / (1u64 << 30) as f64)
}

/// The best model for `use_` in `language` (an ISO code) on `hardware`.
pub fn recommend(
    catalog: &Catalog,
    hardware: &Hardware,
    language: &str,
    use_: ModelUse,
) -> Option<Recommendation> {
    let cores = hardware.cpu_cores.max(1);
    let max_params = match (use_, &hardware.gpu) {
        (_, Some(_)) => f64::INFINITY,
        (ModelUse::Dictation, None) => PARAMS_PER_CORE_DICTATION * cores as f64,
        (ModelUse::Files, None) => 2.0 * PARAMS_PER_CORE_DICTATION * cores as f64,
    };
    let memory = match &hardware.gpu {
        Some((_, vram)) => (*vram as f64 * GPU_MEMORY_SHARE) as u64,
        None => hardware.ram_bytes.unwrap_or(ASSUMED_RAM) / 4,
    };
    if let Some(r) = by_measurement(catalog, hardware, language, use_, memory) {
        return Some(r);
    }
    let best = catalog
        .models
        .iter()
        .filter(|m| m.languages.iter().any(|l| l == language))
        .filter(|m| m.accuracy_score.is_some())
        .filter(|m| m.file(None).is_some_and(|f| f.size <= memory))
        .filter(|m| parameters(m).is_some_and(|p| p <= max_params))
        .filter(|m| {
            use_ == ModelUse::Files
                || hardware.gpu.is_none()
                || m.speed_score.unwrap_or(0) >= GPU_DICTATION_MIN_SPEED
        })
        .max_by_key(|m| (m.accuracy_score, m.speed_score))?;
    let size = best.parameters.as_deref().unwrap_or("?");
    let reason = match &hardware.gpu {
        Some((name, vram)) => format!(
            "{size} parameters, fits in your GPU's {} ({name}); accuracy {}/100",
            gb(*vram),
            best.accuracy_score.unwrap_or(0)
        ),
        None => format!(
            "{size} parameters: {} on {cores} CPU core{}{}; accuracy {}/100",
            match use_ {
                ModelUse::Dictation => "fast enough for dictation",
                ModelUse::Files => "the most accurate that is practical for files",
            },
            if cores == 1 { "" } else { "s" },
            if hardware.ram_bytes.is_none() {
                " (memory unknown, 8 GB assumed)"
            } else {
                ""
            },
            best.accuracy_score.unwrap_or(0)
        ),
    };
    Some(Recommendation {
        model: best.name.clone(),
        reason,
    })
}

/// The choice by measured figures, on machines of the measured class (see
/// the module's notes); `None` elsewhere or when no measured model qualifies.
fn by_measurement(
    catalog: &Catalog,
    hardware: &Hardware,
    language: &str,
    use_: ModelUse,
    memory: u64,
) -> Option<Recommendation> {
    let cores = hardware.cpu_cores.max(1);
    if hardware.gpu.is_some() || cores > MEASURED_CLASS_MAX_CORES || language != "en" {
        return None;
    }
    // Fewer cores than the reference machine: each run takes longer.
    let slower = (REFERENCE_CORES as f64 / cores as f64).max(1.0);
    let measured: Vec<&Measured> = catalog
        .models
        .iter()
        .filter(|m| m.languages.iter().any(|l| l == language))
        .filter(|m| m.file(None).is_some_and(|f| f.size <= memory))
        .filter_map(|m| measured::of(&m.name))
        .collect();
    let on = format!(
        "measured on a {REFERENCE_CORES}-core CPU like this one ({cores} core{}{})",
        if cores == 1 { "" } else { "s" },
        if hardware.ram_bytes.is_none() {
            "; memory unknown, 8 GB assumed"
        } else {
            ""
        }
    );
    let (best, reason) = match use_ {
        ModelUse::Dictation => {
            let best = measured
                .into_iter()
                .filter(|f| f.live_cpu_per_s / cores as f64 <= DICTATION_CPU_SHARE)
                .filter(|f| f64::from(f.release_ms) * slower <= DICTATION_MAX_RELEASE_MS)
                .min_by(|a, b| {
                    (a.live_wer, a.live_cpu_per_s)
                        .partial_cmp(&(b.live_wer, b.live_cpu_per_s))
                        .expect("finite")
                })?;
            let reason = format!(
                "{on}: {:.1} % word errors live, {:.2} CPU seconds per second of speech, text {} ms after the release",
                best.live_wer, best.live_cpu_per_s, best.release_ms
            );
            (best, reason)
        }
        ModelUse::Files => {
            let best = measured
                .into_iter()
                .filter(|f| f.file_rtf * slower <= FILES_MAX_RTF)
                .min_by(|a, b| {
                    (a.file_wer, a.file_rtf)
                        .partial_cmp(&(b.file_wer, b.file_rtf))
                        .expect("finite")
                })?;
            let reason = format!(
                "{on}: {:.1} % word errors, an hour of audio in about {:.0} minutes",
                best.file_wer,
                best.file_rtf * slower * 60.0
            );
            (best, reason)
        }
    };
    Some(Recommendation {
        model: best.model.to_string(),
        reason,
    })
}

/// Total physical memory, where the OS tells it.
fn total_ram() -> Option<u64> {
    #[cfg(target_os = "linux")]
    {
        let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
        let kb: u64 = meminfo
            .lines()
            .find(|l| l.starts_with("MemTotal:"))?
            .split_whitespace()
            .nth(1)?
            .parse()
            .ok()?;
        Some(kb * 1024)
    }
    #[cfg(target_os = "macos")]
    {
        let mut bytes: u64 = 0;
        let mut len = std::mem::size_of::<u64>();
        // SAFETY: hw.memsize is a u64; we pass its size and a valid pointer.
        let rc = unsafe {
            libc::sysctlbyname(
                c"hw.memsize".as_ptr(),
                (&mut bytes as *mut u64).cast(),
                &mut len,
                std::ptr::null_mut(),
                0,
            )
        };
        (rc == 0).then_some(bytes)
    }
    #[cfg(not(any(target_os = "linux", target_os = "macos")))]
    {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hardware(ram_gb: u64, cores: usize, gpu_gb: Option<u64>) -> Hardware {
        Hardware {
            ram_bytes: Some(ram_gb << 30),
            cpu_cores: cores,
            gpu: gpu_gb.map(|g| ("Test GPU".to_string(), g << 30)),
        }
    }

    fn pick(hw: &Hardware, language: &str, use_: ModelUse) -> String {
        recommend(&Catalog::builtin(), hw, language, use_)
            .expect("a recommendation")
            .model
    }

    #[test]
    fn small_cpus_get_small_fast_models_and_files_may_be_larger() {
        // Six cores: past the measured class, so the catalog's scores decide.
        let laptop = hardware(8, 6, None);
        let dictation = pick(&laptop, "de", ModelUse::Dictation);
        let files = pick(&laptop, "de", ModelUse::Files);
        let params = |name: &str| parameters(Catalog::builtin().find(name).unwrap()).unwrap();
        assert!(params(&dictation) <= 720e6, "{dictation}");
        assert!(params(&files) <= 1440e6, "{files}");
        assert!(params(&files) >= params(&dictation));
        let reason = recommend(&Catalog::builtin(), &laptop, "de", ModelUse::Dictation)
            .unwrap()
            .reason;
        assert!(reason.contains("on 6 CPU cores"), "{reason}");
    }

    #[test]
    fn on_the_measured_class_of_machine_the_measured_figures_decide() {
        let catalog = Catalog::builtin();
        let two_cores = hardware(8, 2, None);
        let dictation = recommend(&catalog, &two_cores, "en", ModelUse::Dictation).unwrap();
        let figures = measured::of(&dictation.model).expect("a measured model");
        // No measured model that fits the budget has fewer live errors.
        for m in measured::MEASURED {
            if m.live_cpu_per_s / 2.0 <= DICTATION_CPU_SHARE
                && f64::from(m.release_ms) <= DICTATION_MAX_RELEASE_MS
            {
                assert!(
                    figures.live_wer <= m.live_wer,
                    "{} beats {}",
                    m.model,
                    dictation.model
                );
            }
        }
        assert!(
            dictation.reason.contains("measured on a 2-core CPU"),
            "{}",
            dictation.reason
        );
        assert!(
            dictation
                .reason
                .contains(&format!("{:.1} % word errors live", figures.live_wer)),
            "{}",
            dictation.reason
        );
        let files = recommend(&catalog, &two_cores, "en", ModelUse::Files).unwrap();
        let f = measured::of(&files.model).expect("a measured model");
        assert!(f.file_rtf <= FILES_MAX_RTF);
        assert!(measured::MEASURED
            .iter()
            .filter(|m| m.file_rtf <= FILES_MAX_RTF)
            .all(|m| f.file_wer <= m.file_wer));
        // One core: every run takes twice as long, and the CPU budget halves.
        let one_core = hardware(8, 1, None);
        let slow = recommend(&catalog, &one_core, "en", ModelUse::Dictation).unwrap();
        let s = measured::of(&slow.model).unwrap();
        assert!(s.live_cpu_per_s <= DICTATION_CPU_SHARE, "{}", slow.model);
        // Other languages and GPUs: not measured, the catalog decides.
        for (hw, lang) in [
            (hardware(8, 2, None), "de"),
            (hardware(32, 2, Some(8)), "en"),
        ] {
            let r = recommend(&catalog, &hw, lang, ModelUse::Dictation).unwrap();
            assert!(!r.reason.contains("measured"), "{}", r.reason);
        }
    }

    #[test]
    fn more_cores_allow_larger_models_and_a_gpu_more_still() {
        let catalog = Catalog::builtin();
        let acc = |name: String| catalog.find(&name).unwrap().accuracy_score.unwrap();
        let two = acc(pick(&hardware(16, 2, None), "en", ModelUse::Files));
        let sixteen = acc(pick(&hardware(32, 16, None), "en", ModelUse::Files));
        let gpu = acc(pick(&hardware(32, 8, Some(8)), "en", ModelUse::Files));
        assert!(two <= sixteen && sixteen <= gpu, "{two} {sixteen} {gpu}");
        let reason = recommend(&catalog, &hardware(32, 8, Some(8)), "en", ModelUse::Files)
            .unwrap()
            .reason;
        assert!(
            reason.contains("fits in your GPU's 8 GB (Test GPU)"),
            "{reason}"
        );
    }

    #[test]
    fn the_model_speaks_the_language_and_fits_in_memory() {
        let catalog = Catalog::builtin();
        for lang in ["de", "ja", "en"] {
            let name = pick(&hardware(16, 8, None), lang, ModelUse::Dictation);
            let model = catalog.find(&name).unwrap();
            assert!(
                model.languages.iter().any(|l| l == lang),
                "{name} for {lang}"
            );
        }
        // A 2 GB GPU holds at most 1.4 GB of model.
        let name = pick(&hardware(16, 8, Some(2)), "en", ModelUse::Files);
        assert!(catalog.find(&name).unwrap().file(None).unwrap().size <= (14 << 30) / 10);
        assert!(
            recommend(&catalog, &hardware(16, 8, None), "tlh", ModelUse::Files).is_none(),
            "no model speaks Klingon"
        );
    }

    #[test]
    fn unknown_memory_is_said_not_hidden() {
        let hw = Hardware {
            ram_bytes: None,
            cpu_cores: 4,
            gpu: None,
        };
        let r = recommend(&Catalog::builtin(), &hw, "en", ModelUse::Dictation).unwrap();
        assert!(
            r.reason.contains("memory unknown, 8 GB assumed"),
            "{}",
            r.reason
        );
    }

    #[test]
    fn parameter_counts_parse() {
        let mut m = Catalog::builtin().models[0].clone();
        for (text, value) in [("0.6B", 6e8), ("180M", 1.8e8), ("24.3B", 24.3e9)] {
            m.parameters = Some(text.into());
            assert!((parameters(&m).unwrap() - value).abs() < 1.0, "{text}");
        }
        m.parameters = Some("big".into());
        assert_eq!(parameters(&m), None);
    }
}
