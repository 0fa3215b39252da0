//! Where the model runs: the engine's own choice (the best GPU this build
//! and machine have, else the CPU), the CPU, or one named device from
//! [`super::compute_devices`] (`utter devices --compute`).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The compute device asked for. Spelled `auto`, `cpu` or a device name
/// (`Vulkan0`, `CUDA0`...) in the settings file and on the command line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Compute {
    /// A GPU when one can load the model, else the CPU (with a notice).
    #[default]
    Auto,
    Cpu,
    /// Exactly this device: failing to load there is an error, not a fallback.
    Device(String),
}

/// An empty device name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a compute device is `auto`, `cpu` or a device name (see `devices --compute`)")]
pub struct BadCompute;

impl FromStr for Compute {
    type Err = BadCompute;
    fn from_str(s: &str) -> Result<Self, BadCompute> {
        match s.trim() {
            "" => Err(BadCompute),
            s if s.eq_ignore_ascii_case("auto") => Ok(Self::Auto),
            s if s.eq_ignore_ascii_case("cpu") => Ok(Self::Cpu),
            name => Ok(Self::Device(name.to_string())),
        }
    }
}

impl fmt::Display for Compute {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Auto => f.write_str("auto"),
            Self::Cpu => f.write_str("cpu"),
            Self::Device(name) => f.write_str(name),
        }
    }
}

impl Serialize for Compute {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Compute {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

/// The engine's device named `name` (any case), or the names there are.
pub(super) fn find_device(name: &str) -> Result<transcribe_cpp::Device, Vec<String>> {
    // Callers load a model next, which loads the backends first anyway.
    super::backends::ensure_loaded().map_err(|_| vec![])?;
    let devices = transcribe_cpp::devices();
    match devices
        .iter()
        .position(|d| d.name.eq_ignore_ascii_case(name))
    {
        Some(i) => Ok(devices.into_iter().nth(i).expect("found above")),
        None => Err(devices.into_iter().map(|d| d.name).collect()),
    }
}

/// The GPU backends this build was compiled with (its Cargo features).
pub fn gpu_backends_built() -> Vec<&'static str> {
    [
        (cfg!(feature = "cuda"), "CUDA"),
        (cfg!(feature = "vulkan"), "Vulkan"),
        (cfg!(feature = "metal"), "Metal"),
    ]
    .into_iter()
    .filter_map(|(built, name)| built.then_some(name))
    .collect()
}

/// Why Auto ended on the CPU in a GPU build (`None` when it did not, or
/// when this is a CPU build, where the CPU is no surprise).
pub(super) fn missing_gpu(backend: &str) -> Option<String> {
    let built = gpu_backends_built();
    (backend.eq_ignore_ascii_case("cpu") && !built.is_empty()).then(|| {
        format!(
            "this build can use {} but found no usable device (check the GPU driver; \
             `utter devices --compute` lists what the engine sees)",
            built.join(" or ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compute_reads_auto_cpu_or_a_device_name_and_writes_it_back() {
        for (text, compute) in [
            ("auto", Compute::Auto),
            ("CPU", Compute::Cpu),
            ("Vulkan0", Compute::Device("Vulkan0".into())),
        ] {
            assert_eq!(text.parse::<Compute>(), Ok(compute.clone()));
            let json = serde_json::to_string(&compute).unwrap();
            assert_eq!(serde_json::from_str::<Compute>(&json).unwrap(), compute);
        }
        assert_eq!(" ".parse::<Compute>(), Err(BadCompute));
        assert_eq!(Compute::default().to_string(), "auto");
    }

    #[test]
    fn only_a_gpu_build_that_lands_on_the_cpu_explains_it() {
        assert_eq!(missing_gpu("Vulkan0"), None);
        assert_eq!(
            missing_gpu("CPU").is_some(),
            !gpu_backends_built().is_empty(),
            "built: {:?}",
            gpu_backends_built()
        );
    }

    #[test]
    fn an_unknown_device_lists_the_ones_there_are() {
        let names = find_device("no-such-device-0").unwrap_err();
        assert!(
            names.iter().any(|n| n.eq_ignore_ascii_case("cpu")),
            "the CPU is always a device: {names:?}"
        );
    }
}
