//! `utter doctor`: one line per capability (hotkey, paste, type, clipboard,
//! microphone, model, GPU), working or not, and why.

use std::process::ExitCode;

use anyhow::Result;
use utter_core::models::ModelStore;
use utter_core::platform::doctor::{self, Capability};
use utter_core::platform::session::DesktopSession;

pub fn run(store: &ModelStore) -> Result<ExitCode> {
    let mut list = doctor::desktop(&DesktopSession::detect());

    let devices = utter_core::audio::capture::input_devices();
    list.push(Capability::new(
        "microphone",
        match devices.iter().find(|d| d.is_default).or(devices.first()) {
            Some(d) => Ok(format!("{} ({} input device(s))", d.name, devices.len())),
            None => Err(
                "no input device found: plug in a microphone, or check that the \
                         sound server (PulseAudio/PipeWire) is running"
                    .into(),
            ),
        },
    ));
    list.push(Capability::new(
        "model",
        store
            .resolve_speech(None)
            .map(|(name, _)| name)
            .map_err(|e| e.to_string()),
    ));
    list.push(Capability::new(
        "vad",
        match store.vad() {
            Ok(Some(entry)) => Ok(entry.name),
            Ok(None) => Err(format!(
                "no VAD model installed; {}",
                utter_core::models::INSTALL_HINT
            )),
            Err(e) => Err(e.to_string()),
        },
    ));
    let gpus: Vec<String> = utter_core::engine::compute_devices()
        .into_iter()
        .filter(|(kind, _, _)| !kind.eq_ignore_ascii_case("cpu"))
        .map(|(kind, name, description)| format!("{kind} {name} ({description})"))
        .collect();
    list.push(Capability::new(
        "gpu",
        if gpus.is_empty() {
            Err(
                "none: this build or machine has no GPU backend; the CPU is used \
                 (see README, Build from source)"
                    .into(),
            )
        } else {
            Ok(gpus.join("; "))
        },
    ));

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
