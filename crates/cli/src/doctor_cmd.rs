//! `utter doctor`: one line per capability (hotkey, paste, type, clipboard,
//! microphone, other audio, model, GPU), working or not, and why.

use std::process::ExitCode;

use anyhow::Result;
use utter_core::profiles::{self, ProfileSet};
use utter_models::ModelStore;
use utter_platform::desktop::DesktopSession;
use utter_platform::doctor::{self, Capability};

use crate::hints;

/// An error's message with the CLI's hint for it, as one line.
fn with_hint(e: &(dyn std::error::Error + 'static)) -> String {
    match hints::for_error(e) {
        Some(hint) => format!("{e}; {hint}"),
        None => e.to_string(),
    }
}

/// The microphone dictation would use: listed, and heard for half a second.
/// A null device (or a muted one) gives digital silence, never a real
/// microphone's own noise.
fn microphone() -> Result<String, String> {
    use utter_capture::microphone as capture;
    let listed = capture::microphone_presence().map_err(|e| e.to_string())?;
    match capture::probe_microphone(None, std::time::Duration::from_millis(500)) {
        Ok(probe) if probe.heard_signal => Ok(listed),
        Ok(probe) => Err(format!(
            "`{}` gave only digital silence (every sample zero) for half a second: it is muted, \
             or not a microphone (ALSA's null device, a virtual source with nothing playing); \
             unmute it, or choose another with `utter dictate --device NAME` (`utter devices` \
             lists them)",
            probe.info.device
        )),
        Err(e) => Err(format!("{listed}, but it cannot be opened: {e}")),
    }
}

pub fn run(store: &ModelStore) -> Result<ExitCode> {
    let session = DesktopSession::detect();
    let mut list = doctor::desktop(&session);
    // `utter dictate`'s default profiles (the terminals' built-in ones).
    let profiles = ProfileSet::new(&profiles::builtin()).expect("the built-in profiles are valid");
    list.push(doctor::focus(&session, |app| {
        profiles.for_app(app).map(|p| p.name.clone())
    }));
    for c in list.iter_mut().filter(|c| c.name == "hotkey" && !c.ok) {
        c.detail = format!("{}; {}", c.detail, hints::PTT_INSTEAD);
    }

    list.push(Capability::new("microphone", microphone()));
    list.push(Capability::new(
        "other audio",
        utter_platform::ducking::probe().map_err(|e| {
            format!("{e}: other programs' sound cannot be lowered while you dictate (--duck)")
        }),
    ));
    list.push(Capability::new(
        "model",
        store
            .resolve_speech(None)
            .map(|(name, _)| name)
            .map_err(|e| with_hint(&e)),
    ));
    list.push(Capability::new(
        "vad",
        match store.vad() {
            Ok(Some(entry)) => Ok(entry.name),
            Ok(None) => Err(format!("no VAD model installed; {}", hints::INSTALL_MODEL)),
            Err(e) => Err(e.to_string()),
        },
    ));
    list.push(Capability::new(
        "cpu",
        Ok::<_, std::convert::Infallible>(utter_engine::cpu::describe()),
    ));
    list.push(Capability::new(
        "threads",
        Ok::<_, String>(utter_engine::cpu_load::describe_threads(
            std::time::Duration::from_millis(500),
        )),
    ));
    let gpus: Vec<String> = utter_engine::compute_devices()
        .into_iter()
        .filter(|d| !d.kind.eq_ignore_ascii_case("cpu"))
        .map(|d| format!("{} {} ({})", d.kind, d.name, d.description))
        .collect();
    let built = utter_engine::gpu_backends_built();
    list.push(Capability::new(
        "gpu",
        match (gpus.is_empty(), built.is_empty()) {
            (false, _) => Ok(gpus.join("; ")),
            (true, true) => Err("none: this is a CPU build; the CPU is used \
                 (a GPU build: README, Build from source)"
                .to_string()),
            (true, false) => Err(format!(
                "this build can use {} but the engine found no device; the CPU is used \
                 (check the driver{})",
                built.join(" or "),
                built
                    .iter()
                    .filter_map(|b| driver_check(b))
                    .map(|check| format!("; {check}"))
                    .collect::<String>()
            )),
        },
    ));

    // The app's AI settings: the same provider its dictations would use.
    let rewrite = utter_core::settings::peek(&utter_base::paths::settings_file())
        .map_err(anyhow::Error::from)
        .and_then(|s| {
            if !s.rewrite.enabled {
                return Ok(
                    "off (turn it on in the app's Settings → AI, or `utter dictate --rewrite MODE`)"
                        .to_string(),
                );
            }
            utter_core::dictation::rewrite_step::check(&s.rewrite).map_err(anyhow::Error::from)
        });
    list.push(Capability::new("rewrite", rewrite));

    for c in &list {
        let mark = if c.ok { "ok " } else { "no " };
        out!("{mark} {:<11} {}", c.name, c.detail);
    }
    // Dictation needs a model, a VAD and a microphone; everything else has a fallback.
    let essential = ["model", "vad", "microphone"];
    let broken = list
        .iter()
        .any(|c| !c.ok && essential.contains(&c.name.as_str()));
    Ok(if broken {
        ExitCode::from(crate::exit::FILE_FAILED)
    } else {
        ExitCode::SUCCESS
    })
}

/// How to see whether the driver of a GPU backend finds a device.
fn driver_check(backend: &str) -> Option<&'static str> {
    match backend {
        "Vulkan" => Some(
            "`vulkaninfo --summary` lists Vulkan devices; software ones such as lavapipe \
             are used only when GGML_VK_VISIBLE_DEVICES names them",
        ),
        "CUDA" => Some("`nvidia-smi` shows whether the NVIDIA driver sees the GPU"),
        _ => None,
    }
}
