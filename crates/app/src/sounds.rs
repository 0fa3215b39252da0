//! Short start/stop cues, synthesised (no sound files to ship) and played on
//! the default output device by one thread for the app's life, with one
//! sound-system host: a host per cue (cpal's PulseAudio host, its default on
//! Linux) left a client thread and its socket behind at every cue — two a
//! dictation (tests/bench/soak.py --app). A missing or broken output device
//! only costs the cue.

use std::sync::mpsc;
use std::sync::OnceLock;
use std::time::Duration;

use cpal::traits::{DeviceTrait, HostTrait, StreamTrait};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cue {
    Start,
    Stop,
}

impl Cue {
    /// Rising pair of notes to start, falling to stop.
    fn notes(self) -> [f32; 2] {
        match self {
            Cue::Start => [660.0, 880.0],
            Cue::Stop => [880.0, 660.0],
        }
    }
}

const NOTE_MS: f32 = 60.0;
const VOLUME: f32 = 0.12;

/// The cue's samples at `rate`, mono, with short fades (no clicks).
pub fn samples(cue: Cue, rate: u32) -> Vec<f32> {
    let per_note = (rate as f32 * NOTE_MS / 1000.0) as usize;
    let fade = per_note / 6;
    let mut out = Vec::with_capacity(per_note * 2);
    for freq in cue.notes() {
        for i in 0..per_note {
            let envelope = (i.min(per_note - 1 - i) as f32 / fade as f32).min(1.0);
            let t = i as f32 / rate as f32;
            out.push((t * freq * std::f32::consts::TAU).sin() * VOLUME * envelope);
        }
    }
    out
}

/// Queues `cue` for the cue thread (started at the first cue).
pub fn play(cue: Cue) {
    static PLAYER: OnceLock<Option<mpsc::Sender<Cue>>> = OnceLock::new();
    let player = PLAYER.get_or_init(|| {
        let (cues, queued) = mpsc::channel::<Cue>();
        std::thread::Builder::new()
            .name("utter-cue".into())
            .spawn(move || {
                let host = utter_capture::host::output_host();
                for cue in queued {
                    if let Err(e) = play_blocking(&host, cue) {
                        tracing::debug!("cue not played: {e}");
                    }
                }
            })
            .map_err(|e| tracing::warn!("no start/stop cues: cannot start their thread: {e}"))
            .ok()
            .map(|_| cues)
    });
    if let Some(cues) = player {
        let _ = cues.send(cue);
    }
}

/// Why a cue was not played (logged only: a cue is a nicety).
#[derive(Debug, thiserror::Error)]
enum CueError {
    #[error("no output device")]
    NoDevice,
    #[error("output format {0:?} not supported for cues")]
    Format(cpal::SampleFormat),
    #[error(transparent)]
    Device(#[from] cpal::Error),
}

fn play_blocking(host: &cpal::Host, cue: Cue) -> Result<(), CueError> {
    let device = host.default_output_device().ok_or(CueError::NoDevice)?;
    let supported = device.default_output_config()?;
    if supported.sample_format() != cpal::SampleFormat::F32 {
        return Err(CueError::Format(supported.sample_format()));
    }
    let config = supported.config();
    let channels = config.channels.max(1) as usize;
    let samples = samples(cue, config.sample_rate);
    let total = samples.len();
    let mut pos = 0usize;
    let stream = device.build_output_stream::<f32, _, _>(
        config,
        move |out: &mut [f32], _| {
            for frame in out.chunks_mut(channels) {
                let s = samples.get(pos).copied().unwrap_or(0.0);
                frame.fill(s);
                pos += 1;
            }
        },
        |e| tracing::debug!("cue stream: {e}"),
        None,
    )?;
    stream.play()?;
    std::thread::sleep(Duration::from_millis(
        (total as u64 * 1000) / config.sample_rate as u64 + 80,
    ));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cues_are_short_quiet_and_start_and_end_silent() {
        let s = samples(Cue::Start, 48_000);
        assert_eq!(s.len(), 2 * 2880);
        let peak = s.iter().fold(0f32, |m, v| m.max(v.abs()));
        assert!(peak > 0.1 && peak <= VOLUME, "{peak}");
        assert!(s[0].abs() < 1e-3 && s[s.len() - 1].abs() < 0.01);
        assert_ne!(samples(Cue::Stop, 48_000), s);
    }
}
