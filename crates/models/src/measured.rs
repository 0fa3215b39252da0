//! What this project measured of the models it can run end to end, on its
//! reference machine: a 2-core x86-64 CPU, no GPU (docs/benchmarks.md, "Four
//! models side by side", the benchmarks' commands are there). The
//! recommendation uses these numbers on machines of that class instead of
//! the catalog's scores, which are nobody's measurement on such a machine.

/// One model's figures, by its catalog name.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Measured {
    pub model: &'static str,
    /// Live dictation: word error rate over the accuracy benchmark's 15
    /// dictations (%), and CPU seconds per second of speech.
    pub live_wer: f64,
    pub live_cpu_per_s: f64,
    /// Median key-release-to-text latency (ms).
    pub release_ms: u32,
    /// Files: word error rate (%) and real-time factor, dense speech.
    pub file_wer: f64,
    pub file_rtf: f64,
}

/// Cores of the machine the figures come from.
pub const REFERENCE_CORES: usize = 2;

/// Measured 2026-12-02 (live, `tests/bench/dictation_accuracy.py`, each
/// model with the live strategy Utter picks for it: growing windows for the
/// Whispers, short windows for the Moonshines) and 2026-12-01 (files,
/// `tests/bench/model_families.py`), English LibriVox speech.
pub const MEASURED: [Measured; 4] = [
    Measured {
        model: "whisper-tiny.en",
        live_wer: 6.3,
        live_cpu_per_s: 0.26,
        release_ms: 9,
        file_wer: 1.4,
        file_rtf: 0.037,
    },
    Measured {
        model: "whisper-base",
        live_wer: 4.2,
        live_cpu_per_s: 0.50,
        release_ms: 282,
        file_wer: 1.4,
        file_rtf: 0.068,
    },
    Measured {
        model: "moonshine-tiny-en",
        live_wer: 6.3,
        live_cpu_per_s: 0.11,
        release_ms: 7,
        file_wer: 2.8,
        file_rtf: 0.046,
    },
    Measured {
        model: "moonshine-base-en",
        live_wer: 3.7,
        live_cpu_per_s: 0.15,
        release_ms: 4,
        file_wer: 1.4,
        file_rtf: 0.081,
    },
];

/// The figures for `model` (a catalog name), if it was measured.
pub fn of(model: &str) -> Option<&'static Measured> {
    MEASURED.iter().find(|m| m.model == model)
}
