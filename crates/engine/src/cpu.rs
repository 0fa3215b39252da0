//! The CPU the engine runs on: which of ggml's x86-64 code paths it can
//! take, and how many threads to give it.

use serde::{Deserialize, Serialize};

/// The instruction-set levels ggml's CPU backend is built for on x86-64,
/// oldest first (ggml's `GGML_CPU_ALL_VARIANTS` builds one module per level
/// and loads the best the CPU has; a static build has exactly one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum CpuLevel {
    /// x86-64 baseline (SSE2).
    Baseline,
    Sse42,
    Avx,
    /// AVX2 with FMA, F16C and BMI2 (Haswell, 2013, and later).
    Avx2,
    Avx512,
}

impl CpuLevel {
    pub fn name(self) -> &'static str {
        match self {
            Self::Baseline => "SSE2",
            Self::Sse42 => "SSE4.2",
            Self::Avx => "AVX",
            Self::Avx2 => "AVX2",
            Self::Avx512 => "AVX-512",
        }
    }

    /// The best level this CPU supports (what a dispatching build loads).
    pub fn of_this_cpu() -> Self {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::is_x86_feature_detected as has;
            if has!("avx512f") && has!("avx2") && has!("fma") {
                Self::Avx512
            } else if has!("avx2") && has!("fma") && has!("f16c") && has!("bmi2") {
                Self::Avx2
            } else if has!("avx") {
                Self::Avx
            } else if has!("sse4.2") {
                Self::Sse42
            } else {
                Self::Baseline
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        Self::Baseline
    }
}

/// One line for `utter doctor`: the code path the engine takes here.
pub fn describe() -> String {
    if !cfg!(target_arch = "x86_64") {
        return format!("{} (no x86-64 dispatch needed)", std::env::consts::ARCH);
    }
    let cpu = CpuLevel::of_this_cpu();
    let better = match cpu {
        CpuLevel::Avx512 => String::new(),
        _ => " (AVX-512 not available)".into(),
    };
    if cfg!(feature = "dynamic-backends") {
        return format!(
            "{} path{better}, chosen at start from this build's CPU variants",
            cpu.name()
        );
    }
    format!(
        "{} available{better}; this build's engine is compiled for one CPU level \
         (a portable build picks the best at start: --features dynamic-backends)",
        cpu.name()
    )
}

/// The most threads the engine takes when the user did not choose: the
/// cores this process may use, counting its CPU affinity and a cgroup CPU
/// quota (a container limited to two CPUs on a 32-core host gets two
/// threads, not 32: ggml's threads wait for each other at every operation,
/// so one without a core of its own makes the others wait). transcribe.cpp's
/// own default reads the affinity only. Fewer are used while other programs
/// keep cores busy ([`Threads::FitToLoad`]).
pub fn engine_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Fixes the default thread count (a number), for runs whose text is
/// compared with another run's: whisper's output at one thread and at two
/// can differ (a comma, a word), since ggml adds in another order. The test
/// suite sets it; the tests of the load-fitting remove it.
pub const FIXED_THREADS_ENV: &str = "UTTER_ENGINE_THREADS";

fn fixed_by_env() -> Option<usize> {
    let value = std::env::var(FIXED_THREADS_ENV).ok()?;
    match value.trim().parse::<usize>() {
        Ok(n) if n > 0 => Some(n),
        _ => {
            tracing::warn!("{FIXED_THREADS_ENV}={value:?} is not a thread count; ignored");
            None
        }
    }
}

/// How many CPU threads the engine computes with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Threads {
    /// The user's count, whatever else runs.
    Fixed(usize),
    /// Up to `max`, fewer while other programs keep cores busy: re-chosen
    /// before each engine call (`engine::cpu_load`).
    FitToLoad { max: usize },
}

impl Threads {
    /// A setting's value: 0 fits to the load over every core this process
    /// may use (unless [`FIXED_THREADS_ENV`] fixes it), anything else is fixed.
    pub fn from_setting(threads: usize) -> Self {
        match (threads, fixed_by_env()) {
            (0, Some(n)) => Self::Fixed(n),
            (0, None) => Self::FitToLoad {
                max: engine_threads(),
            },
            (n, _) => Self::Fixed(n),
        }
    }

    /// The count to start with (before any load is known).
    pub fn most(self) -> usize {
        match self {
            Self::Fixed(n) | Self::FitToLoad { max: n } => n.max(1),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_order_from_oldest_to_newest() {
        assert!(CpuLevel::Baseline < CpuLevel::Avx && CpuLevel::Avx2 < CpuLevel::Avx512);
        // Whatever this machine is, doctor names a level.
        let line = describe();
        assert!(line.contains(CpuLevel::of_this_cpu().name()) || !cfg!(target_arch = "x86_64"));
    }
}
