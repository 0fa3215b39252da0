//! Microphone capture with cpal. The audio callback only converts samples to
//! f32, pushes them into a lock-free ring buffer (no allocation, no locking)
//! and, once [`WAKE_MS`] of audio wait there, wakes the processing thread,
//! which sleeps until then (no polling), downmixes, resamples to 16 kHz and
//! sends owned chunks on a channel. The cpal stream lives on that thread
//! because streams are not `Send` on every platform.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use cpal::traits::{DeviceTrait, HostTrait, StreamTrait};
use cpal::{FromSample, SampleFormat, SizedSample};
use crossbeam_channel::{bounded, never, unbounded, Receiver, RecvTimeoutError, Sender};

pub use utter_ports::microphone::{CaptureError, CaptureEvent, Microphone};

use crate::host;
use utter_core::audio::resample::{downmix, StreamResampler};

/// A working input stream delivers audio continuously (silence included).
/// This long without any means the device went away without an error: the
/// ALSA PulseAudio plugin, for one, just goes quiet when its source stops.
const STALL: Duration = Duration::from_secs(3);
/// How much audio the processing thread takes at a time. The device's own
/// period can be far smaller (ALSA through the PulseAudio plugin picks its
/// smallest: hundreds of callbacks a second); waking on each would cost
/// more than the 10 ms polling this replaced. 20 ms is far below what a
/// dictation notices and still 50 level readings a second.
const WAKE_MS: usize = 20;
/// With no audio, the processing thread still looks this often for a
/// stalled device or a stream error.
const WATCH_EVERY: Duration = Duration::from_millis(500);
/// The first audio may take longer (a Bluetooth headset switching to its
/// microphone profile takes seconds).
const FIRST_AUDIO_WITHIN: Duration = Duration::from_secs(8);
/// A healthy stream closes in milliseconds.
const CLOSE_WITHIN: Duration = Duration::from_secs(1);
/// Opening takes well under a second even for a Bluetooth headset (whose
/// profile switch shows as a late first sample, not a slow open).
const OPEN_WITHIN: Duration = Duration::from_secs(10);

/// What to record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// A microphone: the named one (a name from [`input_devices`]) or the default.
    Microphone(Option<String>),
    /// What the computer plays, as the other side of a call is heard: the named
    /// output (a name from [`system_audio_devices`]) or the default one.
    SystemAudio(Option<String>),
}

/// How a device gives its sound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tap {
    /// An input (a microphone, or a PulseAudio monitor source): audio flows
    /// continuously, silence included.
    Input,
    /// An input stream on an output device (WASAPI loopback, a Core Audio
    /// process tap): nothing comes while nothing plays, so a gap is not a stall.
    #[cfg_attr(target_os = "linux", allow(dead_code))]
    Loopback,
}

/// What was opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaptureInfo {
    /// The sound system: "PulseAudio", "ALSA", "CoreAudio", "WASAPI".
    pub host: &'static str,
    pub device: String,
    pub sample_rate: u32,
    pub channels: u16,
    pub sample_format: String,
}

/// A microphone the user can choose.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct InputDevice {
    pub name: String,
    pub is_default: bool,
}

/// The microphones the user can choose and the sound system they come from.
#[derive(Debug, Clone)]
pub struct InputDevices {
    /// "PulseAudio", "ALSA", "CoreAudio", "WASAPI".
    pub host: &'static str,
    /// The default device first.
    pub devices: Vec<InputDevice>,
}

/// Input devices of the sound system in use; the default device first.
/// Monitors of PulseAudio sinks (what the speakers play) are not
/// microphones and are left out.
pub fn input_devices() -> Vec<InputDevice> {
    list_input_devices().devices
}

/// [`input_devices`], with the name of the sound system they come from.
pub fn list_input_devices() -> InputDevices {
    let host = host::input_host();
    let default = host.default_input_device();
    // The default by the server's id where there is one (descriptions repeat).
    let is_default = |d: &cpal::Device| match &default {
        Some(default) => match (host::server_name(default), host::server_name(d)) {
            (Some(a), Some(b)) if a == b => true,
            _ => default.to_string() == d.to_string(),
        },
        None => false,
    };
    let mut devices: Vec<InputDevice> = host
        .input_devices()
        .map(|devs| {
            devs.filter(|d| !host::is_monitor(&host, d) && !host::is_alsa_plugin(&host, d))
                .map(|d| InputDevice {
                    is_default: is_default(&d),
                    name: d.to_string(),
                })
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    devices.sort_by_key(|d| !d.is_default);
    InputDevices {
        host: host::host_name(&host),
        devices,
    }
}

/// No microphone in the device list.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "no microphone found (through {host}): plug one in, or check that the sound server \
     (PulseAudio/PipeWire) is running"
)]
pub struct NoMicrophone {
    pub host: &'static str,
}

/// The microphone dictation would use, as a device listing sees it (no
/// stream is opened: the app checks this at start and while none is there):
/// its name and where it comes from.
pub fn microphone_presence() -> Result<String, NoMicrophone> {
    let inputs = list_input_devices();
    let devices = &inputs.devices;
    match devices.iter().find(|d| d.is_default).or(devices.first()) {
        Some(d) => Ok(format!(
            "{} ({} input device(s), through {})",
            d.name,
            devices.len(),
            inputs.host
        )),
        None => Err(NoMicrophone { host: inputs.host }),
    }
}

/// What a short listen to a microphone heard.
#[derive(Debug, Clone, PartialEq)]
pub struct ProbeResult {
    pub info: CaptureInfo,
    /// Any sample not exactly zero: a real microphone's own noise is never
    /// digital silence, a null device (or a muted one) is nothing else.
    pub heard_signal: bool,
}

/// Opens `device` (or the default input) for `listen` and says whether any
/// sound came: how `utter doctor` tells a microphone from a null device.
pub fn probe_microphone(
    device: Option<&str>,
    listen: Duration,
) -> Result<ProbeResult, CaptureError> {
    let capture = Capture::open(device)?;
    let until = Instant::now() + listen;
    let mut heard_signal = false;
    while let Some(left) = until.checked_duration_since(Instant::now()) {
        match capture.events.recv_timeout(left) {
            Ok(CaptureEvent::Audio(samples)) => {
                heard_signal |= samples.iter().any(|s| *s != 0.0);
            }
            Ok(CaptureEvent::Lost(e)) => return Err(e),
            Err(_) => break,
        }
    }
    let info = capture.info.clone();
    capture.close();
    Ok(ProbeResult { info, heard_signal })
}

/// What the computer plays, by output: the devices [`Source::SystemAudio`]
/// can record, the default first. On Linux these are the PulseAudio (or
/// pipewire-pulse) monitors of the outputs; on Windows and macOS the outputs
/// themselves, recorded by loopback.
pub fn system_audio_devices() -> Result<InputDevices, CaptureError> {
    let (host, default) = system_host()?;
    let default = default.as_ref().and_then(host::server_name);
    let candidates = system_candidates(&host)?;
    let mut devices: Vec<InputDevice> = candidates
        .iter()
        .map(|d| InputDevice {
            is_default: default.is_some() && host::server_name(d) == default,
            name: system_label(d, &candidates),
        })
        .collect();
    devices.sort_by_key(|d| !d.is_default);
    Ok(InputDevices {
        host: host::host_name(&host),
        devices,
    })
}

/// The host that records system audio and its default system-audio device.
/// Linux: cpal's PulseAudio host (PipeWire answers it through pipewire-pulse),
/// where the default output's monitor is `<sink>.monitor` (PulseAudio's naming
/// for every monitor source).
#[cfg(target_os = "linux")]
fn system_host() -> Result<(cpal::Host, Option<cpal::Device>), CaptureError> {
    let host = cpal::host_from_id(cpal::HostId::PulseAudio).map_err(|e| {
        CaptureError::NoSystemAudio(format!(
            "it needs a PulseAudio server, or PipeWire with pipewire-pulse, and none answers ({e})"
        ))
    })?;
    let monitor = host
        .default_output_device()
        .and_then(|sink| host::server_name(&sink))
        .map(|sink| format!("{sink}.monitor"));
    let default = monitor.and_then(|monitor| {
        host.input_devices()
            .ok()?
            .find(|d| host::server_name(d).as_deref() == Some(monitor.as_str()))
    });
    Ok((host, default))
}

/// Windows and macOS: an input stream on an output device records what it
/// plays (cpal opens WASAPI loopback, or a Core Audio process tap on macOS
/// 14.4+, which needs `NSAudioCaptureUsageDescription` in the app's Info.plist).
#[cfg(not(target_os = "linux"))]
fn system_host() -> Result<(cpal::Host, Option<cpal::Device>), CaptureError> {
    let host = cpal::default_host();
    let default = host.default_output_device();
    Ok((host, default))
}

#[cfg(target_os = "linux")]
fn system_candidates(host: &cpal::Host) -> Result<Vec<cpal::Device>, CaptureError> {
    let devices = host
        .input_devices()
        .map_err(|e| CaptureError::NoSystemAudio(e.to_string()))?;
    Ok(devices.filter(|d| host::is_monitor(host, d)).collect())
}

#[cfg(not(target_os = "linux"))]
fn system_candidates(host: &cpal::Host) -> Result<Vec<cpal::Device>, CaptureError> {
    let devices = host
        .output_devices()
        .map_err(|e| CaptureError::NoSystemAudio(e.to_string()))?;
    Ok(devices.collect())
}

/// How a system-audio device is shown: its description, or where two
/// share one ("Monitor of Null Output") the server's own name.
fn system_label(device: &cpal::Device, all: &[cpal::Device]) -> String {
    let shown = device.to_string();
    let shared = all.iter().filter(|o| o.to_string() == shown).count() > 1;
    match host::server_name(device) {
        Some(server) if shared => server,
        _ => shown,
    }
}

#[cfg(target_os = "linux")]
const SYSTEM_TAP: Tap = Tap::Input;
#[cfg(not(target_os = "linux"))]
const SYSTEM_TAP: Tap = Tap::Loopback;

/// The system-audio device named `wanted` (its description, the server's
/// name, or on Linux the output whose monitor it is), or the default one.
fn pick_system_device(wanted: Option<&str>) -> Result<Picked, CaptureError> {
    let (host, default) = system_host()?;
    let name = host::host_name(&host);
    let Some(wanted) = wanted else {
        let device = default
            .ok_or_else(|| CaptureError::NoSystemAudio(format!("{name} has no default output")))?;
        return Ok(Picked::system(host, device));
    };
    let candidates = system_candidates(&host)?;
    let monitor_of = format!("{wanted}.monitor");
    let found = candidates.iter().find(|d| {
        let server = host::server_name(d);
        system_label(d, &candidates) == wanted
            || server.as_deref() == Some(wanted)
            || server.as_deref() == Some(monitor_of.as_str())
    });
    match found {
        Some(device) => Ok(Picked::system(host, device.clone())),
        None => Err(CaptureError::SystemDeviceNotFound {
            wanted: wanted.into(),
            available: candidates
                .iter()
                .map(|d| system_label(d, &candidates))
                .collect(),
        }),
    }
}

/// The device to open, how it gives its sound, and how to tell it is still
/// the one recorded.
struct Picked {
    device: cpal::Device,
    host: &'static str,
    tap: Tap,
    presence: Option<Presence>,
}

impl Picked {
    fn microphone((device, host): (cpal::Device, &'static str)) -> Self {
        Self {
            device,
            host,
            tap: Tap::Input,
            presence: None,
        }
    }

    fn system(host: cpal::Host, device: cpal::Device) -> Self {
        let name = host::host_name(&host);
        // PulseAudio moves a recording stream to another source (the
        // microphone, as often as not) when its source goes: a monitor is
        // watched, or an unplugged output would record the user as "the others".
        let presence = (SYSTEM_TAP == Tap::Input)
            .then(|| host::server_name(&device))
            .flatten()
            .map(|server_name| Presence { host, server_name });
        Self {
            device,
            host: name,
            tap: SYSTEM_TAP,
            presence,
        }
    }
}

/// A source looked up by its server name.
struct Presence {
    host: cpal::Host,
    server_name: String,
}

/// How often a watched source is looked up; the audio is held back this long
/// so that none recorded after the source went (from wherever the server
/// moved the stream) is delivered.
const PRESENCE_EVERY: Duration = Duration::from_millis(100);

impl Presence {
    fn still_there(&self) -> bool {
        self.host.input_devices().is_ok_and(|mut devices| {
            devices.any(|d| host::server_name(&d).as_deref() == Some(self.server_name.as_str()))
        })
    }
}

/// An open microphone. Dropping it closes the device.
pub struct Capture {
    pub info: CaptureInfo,
    pub events: Receiver<CaptureEvent>,
    level: Arc<AtomicU32>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Capture {
    /// Opens `device` (a name from [`input_devices`]) or the default input.
    pub fn open(device: Option<&str>) -> Result<Self, CaptureError> {
        Self::open_source(Source::Microphone(device.map(str::to_owned)))
    }

    /// Opens a microphone or the system audio.
    pub fn open_source(source: Source) -> Result<Self, CaptureError> {
        let (ready_tx, ready_rx) = bounded(1);
        let (events_tx, events) = unbounded();
        let level = Arc::new(AtomicU32::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (thread_level, thread_stop) = (level.clone(), stop.clone());
        let device_label = match &source {
            Source::Microphone(name) | Source::SystemAudio(name) => name.clone(),
        };
        let thread = std::thread::Builder::new()
            .name("utter-capture".into())
            .spawn(move || run(source, ready_tx, events_tx, thread_level, thread_stop))
            .map_err(|e| CaptureError::Open {
                device: "?".into(),
                message: e.to_string(),
            })?;
        // A sound server that hangs never answers the open; the thread is
        // left to it (it sends to a receiver that is gone, then ends).
        let info = match ready_rx.recv_timeout(OPEN_WITHIN) {
            Ok(opened) => opened?,
            Err(RecvTimeoutError::Timeout) => {
                stop.store(true, Ordering::Relaxed);
                return Err(CaptureError::Open {
                    device: device_label.unwrap_or_else(|| "default".into()),
                    message: format!(
                        "no answer from the sound server within {} s",
                        OPEN_WITHIN.as_secs()
                    ),
                });
            }
            Err(RecvTimeoutError::Disconnected) => return Err(CaptureError::NoDevice),
        };
        Ok(Self {
            info,
            events,
            level,
            stop,
            thread: Some(thread),
        })
    }

    /// RMS level of the last ~10 ms, 0.0–1.0, for level meters.
    pub fn level(&self) -> f32 {
        f32::from_bits(self.level.load(Ordering::Relaxed))
    }

    /// Stops capturing; audio already captured is still delivered (then the channel closes).
    pub fn close(mut self) {
        self.stop_and_join();
    }

    fn stop_and_join(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            t.thread().unpark(); // it sleeps until audio comes
                                 // Closing the stream can block for good when the sound server
                                 // is gone (the ALSA PulseAudio plugin waits on its dead
                                 // mainloop); the thread owns the stream, so it may be left.
            utter_base::threads::join_within(t, CLOSE_WITHIN, "the microphone's capture thread");
        }
    }
}

impl Drop for Capture {
    fn drop(&mut self) {
        self.stop_and_join();
    }
}

/// The device and the name of its host. A name is looked up among the
/// descriptions users see and the sound server's own names (`vmic`,
/// `alsa_input.…`); one that is not there is looked up in ALSA too, where a
/// choice saved before the PulseAudio host was used lives.
fn pick_microphone(name: Option<&str>) -> Result<(cpal::Device, &'static str), CaptureError> {
    let host = host::input_host();
    let Some(wanted) = name else {
        let device = host.default_input_device().ok_or(CaptureError::NoDevice)?;
        if host::is_monitor(&host, &device) {
            tracing::warn!(
                device = %device,
                "the default input is the monitor of a sink: it records what plays, not a microphone"
            );
        }
        return Ok((device, host::host_name(&host)));
    };
    let open_error = |e: cpal::Error| CaptureError::Open {
        device: wanted.into(),
        message: e.to_string(),
    };
    let devices: Vec<cpal::Device> = host.input_devices().map_err(open_error)?.collect();
    let matches = |d: &cpal::Device| {
        d.to_string() == wanted || host::server_name(d).as_deref() == Some(wanted)
    };
    if let Some(device) = devices.iter().find(|d| matches(d)) {
        return Ok((device.clone(), host::host_name(&host)));
    }
    if let Some(legacy) = host::legacy_host(&host) {
        if let Some(device) = legacy
            .input_devices()
            .ok()
            .and_then(|mut devs| devs.find(|d| d.to_string() == wanted))
        {
            return Ok((device, host::host_name(&legacy)));
        }
    }
    Err(CaptureError::DeviceNotFound {
        wanted: wanted.into(),
        available: devices
            .iter()
            .filter(|d| !host::is_monitor(&host, d))
            .map(|d| d.to_string())
            .collect(),
    })
}

fn build_stream<T>(
    device: &cpal::Device,
    config: &cpal::StreamConfig,
    mut producer: rtrb::Producer<f32>,
    errors: Sender<String>,
    consumer: std::thread::Thread,
    latency_us: Arc<AtomicU32>,
) -> Result<cpal::Stream, cpal::Error>
where
    T: SizedSample + Send + 'static,
    f32: FromSample<T>,
{
    let samples_per_ms = config.sample_rate as usize * config.channels.max(1) as usize / 1000;
    let wake_at = samples_per_ms * WAKE_MS;
    device.build_input_stream::<T, _, _>(
        *config,
        move |data: &[T], info: &cpal::InputCallbackInfo| {
            // How long ago the first of these samples reached the device (as
            // the host tells it): sound still on its way at a release.
            let ts = info.timestamp();
            let latency = ts.callback.duration_since(ts.capture).as_micros();
            latency_us.store(latency.min(u32::MAX as u128) as u32, Ordering::Relaxed);
            // Real-time path: convert and push; drop samples if the consumer stalls.
            for &s in data {
                let _ = producer.push(s.to_sample::<f32>());
            }
            // A futex wake at most every WAKE_MS (none while the thread is
            // already awake).
            if producer.buffer().capacity() - producer.slots() >= wake_at {
                consumer.unpark();
            }
        },
        move |e| {
            let _ = errors.try_send(e.to_string());
        },
        None,
    )
}

fn run(
    source: Source,
    ready: Sender<Result<CaptureInfo, CaptureError>>,
    events: Sender<CaptureEvent>,
    level: Arc<AtomicU32>,
    stop: Arc<AtomicBool>,
) {
    // From here to the first captured sample is what a word said at the
    // press loses when the device opens at the press (`MicMode::OnPress`).
    let opening = Instant::now();
    let picked = match &source {
        Source::Microphone(name) => pick_microphone(name.as_deref()).map(Picked::microphone),
        Source::SystemAudio(name) => pick_system_device(name.as_deref()),
    };
    let Picked {
        device,
        host,
        tap,
        presence,
    } = match picked {
        Ok(found) => found,
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    let name = device.to_string();
    let open_error = |message: String| CaptureError::Open {
        device: name.clone(),
        message,
    };
    let supported = match tap {
        Tap::Input => device.default_input_config(),
        Tap::Loopback => device.default_output_config(),
    };
    let supported = match supported {
        Ok(c) => c,
        Err(e) => {
            let _ = ready.send(Err(open_error(e.to_string())));
            return;
        }
    };
    let mut config = supported.config();
    if host == "PulseAudio" {
        // The server's default fragment for a recording stream is 2 s (its
        // DEFAULT_FRAGSIZE_MSEC): audio would come in 2 s lumps, late for
        // the live text and for the post-roll. Ask for WAKE_MS fragments,
        // one callback per wake-up of the processing thread.
        config.buffer_size = cpal::BufferSize::Fixed(config.sample_rate * WAKE_MS as u32 / 1000);
    }
    let channels = config.channels.max(1) as usize;
    // A device's (or a virtual driver's) format sizes the buffers below:
    // one that no audio has is refused before anything is allocated.
    let format_ok = utter_core::audio::limits::check_rate(config.sample_rate)
        .and_then(|()| utter_core::audio::limits::check_channels(channels));
    if let Err(bad) = format_ok {
        let _ = ready.send(Err(open_error(bad.to_string())));
        return;
    }
    // Two seconds of headroom between the callback and this thread.
    let (producer, mut consumer) =
        rtrb::RingBuffer::<f32>::new(config.sample_rate as usize * channels * 2);
    let (err_tx, err_rx) = bounded::<String>(4);
    let me = std::thread::current();
    let latency_us = Arc::new(AtomicU32::new(0));
    let lat = latency_us.clone();
    let stream = match supported.sample_format() {
        SampleFormat::F32 => build_stream::<f32>(&device, &config, producer, err_tx, me, lat),
        SampleFormat::F64 => build_stream::<f64>(&device, &config, producer, err_tx, me, lat),
        SampleFormat::I8 => build_stream::<i8>(&device, &config, producer, err_tx, me, lat),
        SampleFormat::I16 => build_stream::<i16>(&device, &config, producer, err_tx, me, lat),
        SampleFormat::I32 => build_stream::<i32>(&device, &config, producer, err_tx, me, lat),
        SampleFormat::U8 => build_stream::<u8>(&device, &config, producer, err_tx, me, lat),
        SampleFormat::U16 => build_stream::<u16>(&device, &config, producer, err_tx, me, lat),
        other => {
            let _ = ready.send(Err(open_error(format!(
                "sample format {other} is not supported"
            ))));
            return;
        }
    };
    let stream = match stream.and_then(|s| s.play().map(|_| s)) {
        Ok(s) => s,
        Err(e) => {
            let _ = ready.send(Err(open_error(e.to_string())));
            return;
        }
    };
    let info = CaptureInfo {
        host,
        device: name.clone(),
        sample_rate: config.sample_rate,
        channels: config.channels,
        sample_format: supported.sample_format().to_string(),
    };
    tracing::info!(?info, ?source, "capture opened");
    let _ = ready.send(Ok(info));

    let mut resampler = StreamResampler::new(config.sample_rate).expect("rate checked at open");
    let (mut interleaved, mut mono) = (Vec::new(), Vec::new());
    let frames_per_ms = f64::from(config.sample_rate) / 1000.0;
    // Returns how many frames came.
    let mut drain = |consumer: &mut rtrb::Consumer<f32>,
                     resampler: &mut StreamResampler,
                     held: &mut Vec<Vec<f32>>| {
        let n = consumer.slots() / channels * channels;
        if n == 0 {
            return 0;
        }
        interleaved.clear();
        if let Ok(chunk) = consumer.read_chunk(n) {
            let (a, b) = chunk.as_slices();
            interleaved.extend_from_slice(a);
            interleaved.extend_from_slice(b);
            chunk.commit_all();
        }
        mono.clear();
        downmix(&interleaved, channels, &mut mono);
        let rms = (mono.iter().map(|s| s * s).sum::<f32>() / mono.len().max(1) as f32).sqrt();
        level.store(rms.to_bits(), Ordering::Relaxed);
        let mut out = Vec::with_capacity(mono.len());
        resampler.push(&mono, &mut out);
        if !out.is_empty() {
            held.push(out);
        }
        n / channels
    };
    // Held audio goes out once the watched source is known to be still there
    // (at once when nothing is watched); `false`: it went, and the held audio
    // may be from another source.
    let mut last_check = Instant::now();
    let mut release = |held: &mut Vec<Vec<f32>>, now: bool| {
        if let Some(presence) = &presence {
            if !now && last_check.elapsed() < PRESENCE_EVERY {
                return true;
            }
            last_check = Instant::now();
            if !presence.still_there() {
                held.clear();
                return false;
            }
        }
        for chunk in held.drain(..) {
            let _ = events.send(CaptureEvent::Audio(chunk));
        }
        true
    };
    let mut held: Vec<Vec<f32>> = Vec::new();
    let (mut last_audio, mut heard_any) = (Instant::now(), false);
    let mut latency_logged = false;
    while !stop.load(Ordering::Relaxed) {
        // Woken by the callback once WAKE_MS of audio wait (and by `close`).
        std::thread::park_timeout(WATCH_EVERY);
        let frames = drain(&mut consumer, &mut resampler, &mut held);
        let source_gone = (!release(&mut held, false))
            .then(|| "it is gone (the output was removed or unplugged)".to_string());
        if frames > 0 {
            if !heard_any {
                // The first chunk's first sample was captured its length ago.
                let first_sample_ms =
                    opening.elapsed().as_secs_f64() * 1000.0 - frames as f64 / frames_per_ms;
                tracing::info!(
                    first_sample_ms = format!("{first_sample_ms:.1}"),
                    "microphone: first sample captured after opening"
                );
            } else if !latency_logged && last_audio.elapsed() < WATCH_EVERY {
                // Once the stream runs steadily: what a release can still
                // find in the pipeline (recording::PIPELINE_TAIL).
                latency_logged = true;
                let capture_latency_ms = f64::from(latency_us.load(Ordering::Relaxed)) / 1000.0;
                tracing::info!(
                    capture_latency_ms = format!("{capture_latency_ms:.1}"),
                    "microphone: the host's capture latency"
                );
            }
            (last_audio, heard_any) = (Instant::now(), true);
        }
        let limit = if heard_any { STALL } else { FIRST_AUDIO_WITHIN };
        // A loopback stream is silent while nothing plays: no stall to find.
        let stalled = (tap == Tap::Input && last_audio.elapsed() >= limit).then(|| {
            format!(
                "no audio from it for {} s: it was unplugged or stopped working",
                limit.as_secs()
            )
        });
        if let Some(message) = source_gone.or_else(|| err_rx.try_recv().ok()).or(stalled) {
            tracing::warn!(%message, "input stream error");
            let _ = events.send(CaptureEvent::Lost(CaptureError::Lost {
                device: name.clone(),
                message,
            }));
            break;
        }
    }
    drop(stream);
    drain(&mut consumer, &mut resampler, &mut held);
    release(&mut held, true);
    level.store(0f32.to_bits(), Ordering::Relaxed);
}

/// The real microphone, through cpal.
pub struct CpalMicrophone {
    device: Option<String>,
    capture: Option<Capture>,
}

impl CpalMicrophone {
    pub fn new(device: Option<String>) -> Self {
        Self {
            device,
            capture: None,
        }
    }
}

impl Microphone for CpalMicrophone {
    fn open(&mut self) -> Result<(), CaptureError> {
        self.capture = Some(Capture::open(self.device.as_deref())?);
        Ok(())
    }

    fn events(&self) -> Receiver<CaptureEvent> {
        self.capture
            .as_ref()
            .map(|c| c.events.clone())
            .unwrap_or_else(never)
    }

    fn close(&mut self) -> Vec<Vec<f32>> {
        let Some(capture) = self.capture.take() else {
            return Vec::new();
        };
        let rx = capture.events.clone();
        capture.close(); // delivers what was still buffered
        rx.try_iter()
            .filter_map(|ev| match ev {
                CaptureEvent::Audio(pcm) => Some(pcm),
                _ => None,
            })
            .collect()
    }

    fn is_open(&self) -> bool {
        self.capture.is_some()
    }

    fn level(&self) -> f32 {
        self.capture.as_ref().map_or(0.0, |c| c.level())
    }

    fn name(&self) -> Option<String> {
        self.capture.as_ref().map(|c| c.info.device.clone())
    }
}
