//! Recording a meeting: the microphone and the system audio, each written to
//! its WAV as it comes, on one timeline.
//!
//! Both devices are opened first; from the moment both run, every chunk is
//! written. When one device is lost the meeting goes on with the other, and
//! the lost one's WAV gets silence of the same length (the timeline holds).
//! A loopback device (Windows, macOS) delivers nothing while nothing plays:
//! its WAV is filled with silence up to the microphone's. Pausing drops both
//! channels' audio from the same moment.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{never, select, unbounded, Receiver, Sender};

use utter_core::audio::wav::WavRecorder;
use utter_core::audio::ENGINE_RATE;
use utter_core::meeting::live::LiveAudio;
use utter_core::meeting::{
    Channel, MeetingError, MeetingPhase, MeetingRecord, OTHERS_WAV, YOU_WAV,
};

use crate::microphone::{Capture, CaptureEvent, CaptureInfo, Source};

/// Which devices a meeting records.
#[derive(Debug, Clone, Default)]
pub struct MeetingSources {
    /// The microphone's name; `None`: the default one.
    pub microphone: Option<String>,
    /// The system-audio device's name; `None`: the default output's.
    pub system_audio: Option<String>,
}

/// What the user is told while a meeting records.
#[derive(Debug, Clone, PartialEq)]
pub enum MeetingNotice {
    /// A device stopped; the meeting goes on with the other.
    Lost { channel: Channel, message: String },
    /// Both devices are gone: the recording ended by itself.
    Ended,
}

enum Command {
    Pause,
    Resume,
    Stop,
}

/// How loud each side is now, for level meters: the RMS of the last chunk
/// written (0.0–1.0); 0 while paused or once its device is gone.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct MeetingLevels {
    pub you: f32,
    pub others: f32,
}

/// The writer's levels, read by whoever shows them.
#[derive(Default)]
struct SharedLevels {
    you: AtomicU32,
    others: AtomicU32,
}

impl SharedLevels {
    fn set(&self, channel: Channel, rms: f32) {
        let slot = match channel {
            Channel::You => &self.you,
            Channel::Others => &self.others,
        };
        slot.store(rms.to_bits(), Ordering::Relaxed);
    }

    fn get(&self) -> MeetingLevels {
        MeetingLevels {
            you: f32::from_bits(self.you.load(Ordering::Relaxed)),
            others: f32::from_bits(self.others.load(Ordering::Relaxed)),
        }
    }
}

fn rms(pcm: &[f32]) -> f32 {
    if pcm.is_empty() {
        return 0.0;
    }
    (pcm.iter().map(|s| s * s).sum::<f32>() / pcm.len() as f32)
        .sqrt()
        .min(1.0)
}

/// A meeting being recorded. [`MeetingRecorder::stop`] ends it; dropping it
/// without stopping leaves it as a crash would (the audio on disk, the
/// record saying `recording`).
pub struct MeetingRecorder {
    dir: PathBuf,
    pub microphone: CaptureInfo,
    pub system_audio: CaptureInfo,
    notices: Receiver<MeetingNotice>,
    commands: Sender<Command>,
    levels: Arc<SharedLevels>,
    thread: Option<JoinHandle<Result<MeetingRecord, MeetingError>>>,
}

impl MeetingRecorder {
    /// Opens both devices and starts writing into `dir` (a new folder from
    /// [`utter_core::meeting::new_meeting_dir`]). Either device failing to open is an
    /// error: a meeting without the other side is not what was asked for.
    /// `live`, when given, receives every chunk written (a
    /// [`utter_core::meeting::LiveTranscriber`]).
    pub fn start(
        dir: &Path,
        sources: &MeetingSources,
        live: Option<Sender<LiveAudio>>,
    ) -> Result<Self, MeetingError> {
        let system = Capture::open_source(Source::SystemAudio(sources.system_audio.clone()))
            .map_err(MeetingError::SystemAudio)?;
        let mic = Capture::open_source(Source::Microphone(sources.microphone.clone()))
            .map_err(MeetingError::Microphone)?;
        let you = WavRecorder::create(&dir.join(YOU_WAV))
            .map_err(|e| MeetingError::disk(&dir.join(YOU_WAV), e))?;
        let others = WavRecorder::create(&dir.join(OTHERS_WAV))
            .map_err(|e| MeetingError::disk(&dir.join(OTHERS_WAV), e))?;
        let record = MeetingRecord {
            started_unix_ms: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as u64),
            phase: MeetingPhase::Recording,
            microphone: Some(mic.info.device.clone()),
            system_audio: Some(system.info.device.clone()),
            you_ms: 0,
            others_ms: 0,
            drift_ppm: None,
            notices: Vec::new(),
        };
        record.write(dir)?;
        let (microphone, system_audio) = (mic.info.clone(), system.info.clone());
        // What either device captured while the other was still opening is
        // not on the shared timeline.
        while mic.events.try_recv().is_ok() {}
        while system.events.try_recv().is_ok() {}
        let (notice_tx, notices) = unbounded();
        let (commands, command_rx) = unbounded();
        let levels = Arc::new(SharedLevels::default());
        let writer = Writer {
            levels: levels.clone(),
            dir: dir.to_path_buf(),
            you: Side::new(mic, you),
            others: Side::new(system, others),
            record,
            notices: notice_tx,
            live,
            running: Instant::now(),
            both_ran_for: Duration::ZERO,
            baseline: None,
        };
        let thread = std::thread::Builder::new()
            .name("utter-meeting".into())
            .spawn(move || writer.run(command_rx))
            .map_err(|e| MeetingError::disk(dir, e))?;
        tracing::info!(?microphone, ?system_audio, dir = %dir.display(), "meeting recording");
        Ok(Self {
            dir: dir.to_path_buf(),
            microphone,
            system_audio,
            notices,
            commands,
            levels,
            thread: Some(thread),
        })
    }

    /// How loud each side is now.
    pub fn levels(&self) -> MeetingLevels {
        self.levels.get()
    }

    /// The meeting's folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Notices as they happen (a device lost, the recording ended by itself).
    pub fn notices(&self) -> &Receiver<MeetingNotice> {
        &self.notices
    }

    /// Stops keeping audio until [`MeetingRecorder::resume`].
    pub fn pause(&self) {
        let _ = self.commands.send(Command::Pause);
    }

    pub fn resume(&self) {
        let _ = self.commands.send(Command::Resume);
    }

    /// Stops recording; the record says `recorded`, with the drift measured.
    pub fn stop(mut self) -> Result<MeetingRecord, MeetingError> {
        let _ = self.commands.send(Command::Stop);
        let thread = self.thread.take().expect("stopped once");
        thread.join().unwrap_or_else(|_| {
            Err(MeetingError::NotAMeeting {
                path: self.dir.clone(),
                reason: "the recording thread panicked".into(),
            })
        })
    }
}

/// One channel: its device while it lasts, and its WAV.
struct Side {
    device: Device,
    wav: WavRecorder,
    last_audio: Instant,
}

enum Device {
    Live(Capture),
    Lost,
}

impl Side {
    fn new(capture: Capture, wav: WavRecorder) -> Self {
        Self {
            device: Device::Live(capture),
            wav,
            last_audio: Instant::now(),
        }
    }

    fn events(&self) -> Receiver<CaptureEvent> {
        match &self.device {
            Device::Live(c) => c.events.clone(),
            Device::Lost => never(),
        }
    }

    fn is_live(&self) -> bool {
        matches!(self.device, Device::Live(_))
    }
}

/// A loopback device silent for this long is filled with silence up to the
/// microphone (less [`FILL_SLACK`]: audio may still be on its way).
const FILL_AFTER: Duration = Duration::from_millis(300);
const FILL_SLACK: u64 = ENGINE_RATE as u64 / 10;
const TICK: Duration = Duration::from_millis(100);
/// Both devices deliver steadily this long after they opened.
const STEADY_AFTER: Duration = Duration::from_secs(2);

struct Writer {
    dir: PathBuf,
    levels: Arc<SharedLevels>,
    you: Side,
    others: Side,
    record: MeetingRecord,
    notices: Sender<MeetingNotice>,
    live: Option<Sender<LiveAudio>>,
    /// Since when both devices have run (for the drift).
    running: Instant,
    both_ran_for: Duration,
    /// Both channels' samples once they run steadily: the drift is measured
    /// from here, past the devices' different start-up.
    baseline: Option<(u64, u64)>,
}

impl Writer {
    fn run(mut self, commands: Receiver<Command>) -> Result<MeetingRecord, MeetingError> {
        let mut paused = false;
        let (mut you_at_loss, mut others_at_loss) = (None, None);
        loop {
            let (you_rx, others_rx) = (self.you.events(), self.others.events());
            select! {
                recv(you_rx) -> event => match event {
                    Ok(CaptureEvent::Audio(pcm)) if !paused => self.write(Channel::You, &pcm)?,
                    Ok(CaptureEvent::Audio(_)) => {}
                    Ok(CaptureEvent::Lost(e)) => self.lose(Channel::You, e.to_string()),
                    Err(_) => self.lose(Channel::You, "its stream ended".into()),
                },
                recv(others_rx) -> event => match event {
                    Ok(CaptureEvent::Audio(pcm)) if !paused => self.write(Channel::Others, &pcm)?,
                    Ok(CaptureEvent::Audio(_)) => {}
                    Ok(CaptureEvent::Lost(e)) => self.lose(Channel::Others, e.to_string()),
                    Err(_) => self.lose(Channel::Others, "its stream ended".into()),
                },
                recv(commands) -> command => match command {
                    Ok(Command::Pause) => {
                        paused = true;
                        self.levels.set(Channel::You, 0.0);
                        self.levels.set(Channel::Others, 0.0);
                        self.both_ran_for += self.running.elapsed();
                    }
                    Ok(Command::Resume) => {
                        paused = false;
                        self.running = Instant::now();
                    }
                    Ok(Command::Stop) | Err(_) => break,
                },
                default(TICK) => {}
            }
            if !paused {
                self.fill_silent_loopback()?;
                if self.baseline.is_none() && self.running.elapsed() >= STEADY_AFTER {
                    self.baseline = Some(self.samples());
                }
            }
            // The drift is measured while both run.
            if you_at_loss.is_none() && !self.you.is_live() {
                you_at_loss = Some(self.samples());
            }
            if others_at_loss.is_none() && !self.others.is_live() {
                others_at_loss = Some(self.samples());
            }
            if !self.you.is_live() && !self.others.is_live() {
                let _ = self.notices.send(MeetingNotice::Ended);
                break;
            }
        }
        if !paused {
            self.both_ran_for += self.running.elapsed();
        }
        // What the devices still hold is part of the meeting.
        for side in [Channel::You, Channel::Others] {
            let device = std::mem::replace(&mut self.side(side).device, Device::Lost);
            if let Device::Live(capture) = device {
                let events = capture.events.clone();
                capture.close();
                for event in events.try_iter() {
                    if let CaptureEvent::Audio(pcm) = event {
                        if !paused {
                            self.side(side)
                                .wav
                                .write(&pcm)
                                .map_err(|e| self.disk_error(side, e))?;
                        }
                    }
                }
            }
        }
        let end = you_at_loss.or(others_at_loss).unwrap_or(self.samples());
        self.record.drift_ppm = self.baseline.and_then(|(you, others)| {
            drift_ppm(end.0.checked_sub(you)?, end.1.checked_sub(others)?)
        });
        tracing::info!(
            drift_ppm = ?self.record.drift_ppm,
            seconds = self.both_ran_for.as_secs_f64(),
            "meeting stopped"
        );
        self.record.you_ms = self.you.wav.duration_ms();
        self.record.others_ms = self.others.wav.duration_ms();
        self.record.phase = MeetingPhase::Recorded;
        let Self {
            you, others, dir, ..
        } = self;
        you.wav
            .finish()
            .map_err(|e| MeetingError::disk(&dir.join(YOU_WAV), e))?;
        others
            .wav
            .finish()
            .map_err(|e| MeetingError::disk(&dir.join(OTHERS_WAV), e))?;
        self.record.write(&dir)?;
        Ok(self.record)
    }

    fn side(&mut self, channel: Channel) -> &mut Side {
        match channel {
            Channel::You => &mut self.you,
            Channel::Others => &mut self.others,
        }
    }

    fn samples(&self) -> (u64, u64) {
        (self.you.wav.samples(), self.others.wav.samples())
    }

    fn disk_error(&self, channel: Channel, e: std::io::Error) -> MeetingError {
        let name = match channel {
            Channel::You => YOU_WAV,
            Channel::Others => OTHERS_WAV,
        };
        MeetingError::disk(&self.dir.join(name), e)
    }

    /// Writes `pcm` to its channel; a lost other channel gets as much silence.
    fn write(&mut self, channel: Channel, pcm: &[f32]) -> Result<(), MeetingError> {
        self.levels.set(channel, rms(pcm));
        let side = self.side(channel);
        side.last_audio = Instant::now();
        side.wav
            .write(pcm)
            .map_err(|e| self.disk_error(channel, e))?;
        if let Some(live) = &self.live {
            let _ = live.send((channel, pcm.to_vec()));
        }
        let other = match channel {
            Channel::You => Channel::Others,
            Channel::Others => Channel::You,
        };
        if !self.side(other).is_live() {
            let silence = vec![0.0; pcm.len()];
            self.side(other)
                .wav
                .write(&silence)
                .map_err(|e| self.disk_error(other, e))?;
        }
        Ok(())
    }

    /// A loopback device is silent while nothing plays: its WAV follows the
    /// microphone's with silence. (A PulseAudio monitor always delivers.)
    fn fill_silent_loopback(&mut self) -> Result<(), MeetingError> {
        let (you, others) = self.samples();
        if self.others.is_live()
            && self.others.last_audio.elapsed() >= FILL_AFTER
            && you > others + FILL_SLACK
        {
            let silence = vec![0.0; (you - others - FILL_SLACK) as usize];
            self.others
                .wav
                .write(&silence)
                .map_err(|e| self.disk_error(Channel::Others, e))?;
        }
        Ok(())
    }

    fn lose(&mut self, channel: Channel, message: String) {
        let side = self.side(channel);
        if !side.is_live() {
            return;
        }
        side.device = Device::Lost;
        self.levels.set(channel, 0.0);
        let text = format!("{channel} stopped ({message}); the meeting goes on without it");
        tracing::warn!("{text}");
        self.record.notices.push(text.clone());
        let _ = self.record.write(&self.dir);
        let _ = self.notices.send(MeetingNotice::Lost { channel, message });
    }
}

/// How much faster the system audio's clock ran than the microphone's, in
/// parts per million, over the samples both wrote in the same time; `None`
/// over less than a minute (a chunk in flight, 20 ms, would look like
/// hundreds of ppm).
fn drift_ppm(you: u64, others: u64) -> Option<f64> {
    (you >= 60 * ENGINE_RATE as u64).then(|| (others as f64 - you as f64) / you as f64 * 1e6)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drift_is_measured_over_enough_audio_only() {
        assert_eq!(drift_ppm(160_000, 160_100), None);
        let ppm = drift_ppm(16_000_000, 16_000_800).unwrap();
        assert!((ppm - 50.0).abs() < 1e-6, "{ppm}");
    }
}
