//! Which sound system the microphone goes through, and which of its inputs
//! are microphones.
//!
//! On Linux cpal tries its native PulseAudio host first (pure Rust; also
//! PipeWire through pipewire-pulse) and falls back to ALSA when no server
//! answers. ALSA reaching PulseAudio through its `pulse` plugin costs a
//! spinning worker thread and the plugin's own threads (docs/benchmarks.md,
//! "What `utter dictate` costs the CPU"); the native host does not.

/// The sound system cpal picked for this process's streams (PulseAudio when a
/// server answers on Linux, ALSA otherwise; Core Audio, WASAPI elsewhere).
pub fn input_host() -> cpal::Host {
    let host = forced_host().unwrap_or_else(preferred_host);
    tracing::debug!(host = host_name(&host), "sound system");
    host
}

/// The sound system Utter's own sounds (the start and stop cues) play
/// through: the microphone's. Open one and keep it: each cpal PulseAudio
/// host is a client whose reactor thread outlives it.
pub fn output_host() -> cpal::Host {
    forced_host().unwrap_or_else(preferred_host)
}

/// ALSA on Linux (PulseAudio and PipeWire through their ALSA plugins):
/// cpal's native PulseAudio host lost audio in the desktop suite under load
/// (the same clips' transcripts went past 15 % WER; a dictation killed after
/// 8 s had kept 6.9 s), so it is opt-in (`UTTER_SOUND_SYSTEM=pulseaudio`)
/// until that is understood.
#[cfg(target_os = "linux")]
fn preferred_host() -> cpal::Host {
    cpal::host_from_id(cpal::HostId::Alsa).unwrap_or_else(|_| cpal::default_host())
}

#[cfg(not(target_os = "linux"))]
fn preferred_host() -> cpal::Host {
    cpal::default_host()
}

/// `UTTER_SOUND_SYSTEM=alsa` (any cpal host name) keeps a sound system that
/// cpal would not pick first: a way out should the native host misbehave
/// with some server, and how the benchmark compares the two in one run.
fn forced_host() -> Option<cpal::Host> {
    let wanted = std::env::var("UTTER_SOUND_SYSTEM").ok()?;
    let id = cpal::available_hosts()
        .into_iter()
        .find(|id| id.name().eq_ignore_ascii_case(&wanted));
    match id.map(cpal::host_from_id) {
        Some(Ok(host)) => Some(host),
        _ => {
            tracing::warn!(
                wanted,
                available = ?cpal::available_hosts().iter().map(|id| id.name()).collect::<Vec<_>>(),
                "UTTER_SOUND_SYSTEM names no sound system that answers here; using the default"
            );
            None
        }
    }
}

/// The host's name as users know it ("PulseAudio", "ALSA", "CoreAudio", "WASAPI").
pub fn host_name(host: &cpal::Host) -> &'static str {
    host.id().name()
}

/// The ALSA host, where a device saved before the PulseAudio host existed
/// (an ALSA name such as `pulse` or `sysdefault:CARD=…`) can still be found.
#[cfg(target_os = "linux")]
pub fn legacy_host(current: &cpal::Host) -> Option<cpal::Host> {
    (current.id() != cpal::HostId::Alsa)
        .then(|| cpal::host_from_id(cpal::HostId::Alsa).ok())
        .flatten()
}

#[cfg(not(target_os = "linux"))]
pub fn legacy_host(_current: &cpal::Host) -> Option<cpal::Host> {
    None
}

/// The sound server's own name for a device (a PulseAudio source's name,
/// `alsa_input.…` or `vmic`), where the host has one beside the description
/// shown to users.
pub fn server_name(device: &cpal::Device) -> Option<String> {
    use cpal::traits::DeviceTrait;
    device.id().ok().map(|id| id.id().to_owned())
}

/// A PulseAudio source that records what a sink plays (`<sink>.monitor`,
/// "Monitor of …"): system audio, not a microphone. The naming is
/// PulseAudio's and pipewire-pulse's convention for every monitor source.
pub fn is_monitor(host: &cpal::Host, device: &cpal::Device) -> bool {
    host_name(host) == "PulseAudio"
        && server_name(device).is_some_and(|name| name.ends_with(".monitor"))
}

#[cfg(target_os = "linux")]
/// ALSA's software plugins that show up as input devices yet record nothing a
/// user said (`null` gives digital silence; the others convert rates, mix
/// channels or reach servers that are not running, or the PulseAudio host
/// would be in use).
const ALSA_NOT_MICROPHONES: [&str; 9] = [
    "null",
    "lavrate",
    "samplerate",
    "speexrate",
    "speex",
    "upmix",
    "vdownmix",
    "jack",
    "oss",
];

/// A device of the ALSA host that is one of its plugins, not a microphone.
#[cfg(target_os = "linux")]
pub fn is_alsa_plugin(host: &cpal::Host, device: &cpal::Device) -> bool {
    host.id() == cpal::HostId::Alsa
        && server_name(device).is_some_and(|id| ALSA_NOT_MICROPHONES.contains(&id.as_str()))
}

#[cfg(not(target_os = "linux"))]
pub fn is_alsa_plugin(_host: &cpal::Host, _device: &cpal::Device) -> bool {
    false
}
