//! `utter meeting`: records your microphone ("You") and what the computer
//! plays (the others on the call) until Ctrl+C, then writes the transcript
//! with who said what. `--finish` transcribes a meeting that was cut off.

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use clap::Args;
use crossbeam_channel::{never, select, unbounded};
use utter_core::engine::cpu::Threads;
use utter_core::engine::{Engine, EngineConfig};
use utter_core::export::{self, Format};
use utter_core::meeting::{
    self, Channel, LiveConfig, LiveLine, LiveTranscriber, MeetingNotice, MeetingRecorder,
    MeetingSources, MeetingTranscription,
};
use utter_core::models::diarize::DiarizeOptions;
use utter_core::models::{ModelStore, ModelUse};
use utter_core::transcribe::FileOptions;
use utter_core::vad::SpeechDetector;

use crate::exit;
use crate::text_args::TextArgs;

#[derive(Args)]
pub struct MeetingArgs {
    /// Your microphone, from `utter devices` [default: the default input]
    #[arg(long, short)]
    device: Option<String>,
    /// What the others on the call come out of: an output (or its monitor) from
    /// `utter devices --system` [default: the default output]
    #[arg(long)]
    system_device: Option<String>,
    /// Write the transcript to this file [default: standard output]
    #[arg(long, short)]
    output: Option<PathBuf>,
    /// Transcript format: md, txt, srt, vtt or json
    #[arg(long, short, default_value = "md", value_parser = parse_format)]
    format: Format,
    /// Spoken language (ISO code, e.g. `en`), or `auto` [default: auto]
    #[arg(long, short)]
    language: Option<String>,
    /// Installed model name or path to a model file [default: the default model for files]
    #[arg(long, short)]
    model: Option<String>,
    /// Your name in the transcript
    #[arg(long, default_value = "You")]
    your_name: String,
    /// How many other people are on the call, when you know it [default: found from the voices]
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..))]
    num_speakers: Option<u16>,
    /// Names for the others in the order they first speak, comma-separated (e.g. "Anna,Ben")
    #[arg(long, value_delimiter = ',', value_name = "NAMES")]
    speaker_names: Vec<String>,
    /// Do not record: transcribe a meeting that was cut off (a crash, a kill): its folder,
    /// or without one the last unfinished meeting
    #[arg(long, value_name = "DIR", num_args = 0..=1)]
    #[allow(clippy::option_option)] // absent, given bare, given a folder
    finish: Option<Option<PathBuf>>,
    /// No live transcript while the meeting goes on (less CPU; the transcript at the end is
    /// the same)
    #[arg(long)]
    no_live: bool,
    /// Where meetings are kept [default: ~/.local/share/utter/meetings]
    #[arg(long, value_name = "DIR")]
    meetings_dir: Option<PathBuf>,
    #[command(flatten)]
    text: TextArgs,
}

fn parse_format(s: &str) -> Result<Format, utter_core::export::UnknownFormat> {
    s.parse()
}

pub fn run(store: &ModelStore, args: MeetingArgs) -> Result<ExitCode> {
    let root = args
        .meetings_dir
        .clone()
        .unwrap_or_else(utter_core::paths::meetings_dir);
    // The model is checked before anything is recorded.
    let (model_name, model_path) =
        match store.resolve_speech_for(args.model.as_deref(), ModelUse::Files) {
            Ok(m) => m,
            Err(e) => {
                crate::hints::print_error(&e);
                return Ok(ExitCode::from(exit::NO_MODEL));
            }
        };
    let engine = match Engine::start(EngineConfig {
        threads: Threads::FitToLoad {
            max: utter_core::engine::cpu::engine_threads(),
        },
        ..EngineConfig::new(model_path)
    }) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(ExitCode::from(exit::NO_MODEL));
        }
    };
    let language = args
        .language
        .clone()
        .filter(|l| !l.eq_ignore_ascii_case("auto"));
    if let Err(e) = engine.info().check_language(language.as_deref()) {
        eprintln!("error: {e}");
        return Ok(ExitCode::from(exit::USAGE));
    }
    let vocabulary = args.text.vocabulary()?;
    let options = FileOptions {
        language,
        rules: args.text.rules()?.with_vocabulary(&vocabulary),
        vocabulary,
        ..Default::default()
    };
    let (dir, engine) = match &args.finish {
        Some(Some(dir)) => (dir.clone(), engine),
        Some(None) => match meeting::unfinished(&root).pop() {
            Some(dir) => (dir, engine),
            None => bail!("no unfinished meeting in {}", root.display()),
        },
        None => match record(store, &root, &args, engine, &options)? {
            Some(recorded) => recorded,
            None => return Ok(ExitCode::from(exit::FILE_FAILED)),
        },
    };
    finish(store, &dir, &model_name, engine, &options, &args)
}

/// Whether the meeting is transcribed while it goes on.
enum Live {
    On(LiveTranscriber),
    /// No live transcript (asked, or no voice detector): the engine waits
    /// for the end.
    Off(Box<Engine>),
}

/// The live transcript, with its two voice detectors; without them (said
/// why) the meeting is recorded all the same.
fn live_transcript(store: &ModelStore, engine: Engine, options: &FileOptions) -> Result<Live> {
    let vad = match store.vad() {
        Ok(Some(vad)) => store.path_of(&vad),
        _ => {
            eprintln!(
                "note: no live transcript: no voice detector is installed (`utter models install-default`)"
            );
            return Ok(Live::Off(Box::new(engine)));
        }
    };
    let detectors =
        SpeechDetector::load(&vad).and_then(|you| Ok((you, SpeechDetector::load(&vad)?)));
    let (you, others) = match detectors {
        Ok(d) => d,
        Err(e) => {
            eprintln!("note: no live transcript: {e}");
            return Ok(Live::Off(Box::new(engine)));
        }
    };
    let live = LiveTranscriber::start(LiveConfig {
        engine,
        you,
        others,
        language: options.language.clone(),
        vocabulary: options.vocabulary.clone(),
        rules: options.rules.clone(),
    })
    .context("cannot start the live transcript")?;
    Ok(Live::On(live))
}

fn print_live(line: &LiveLine, your_name: &str) {
    let who = match line.channel {
        Channel::You => your_name,
        Channel::Others => "Others",
    };
    eprintln!("[{}] {who}: {}", clock(line.start_ms), line.text);
}

/// Records a meeting into a new folder under `root` until Ctrl+C (or until
/// both devices are gone), with the live transcript on standard error.
/// `None`: it could not start (said why). The engine comes back for the
/// final transcript.
fn record(
    store: &ModelStore,
    root: &Path,
    args: &MeetingArgs,
    engine: Engine,
    options: &FileOptions,
) -> Result<Option<(PathBuf, Engine)>> {
    eprintln!(
        "Recording a meeting records the other people on the call: tell them, and check the law where you and they are."
    );
    let unfinished = meeting::unfinished(root);
    if let Some(last) = unfinished.last() {
        eprintln!(
            "note: {} meeting(s) were not transcribed (cut off?): `utter meeting --finish {}` transcribes the last",
            unfinished.len(),
            last.display()
        );
    }
    let live = if args.no_live {
        Live::Off(Box::new(engine))
    } else {
        live_transcript(store, engine, options)?
    };
    let dir = meeting::new_meeting_dir(root)?;
    let sources = MeetingSources {
        microphone: args.device.clone(),
        system_audio: args.system_device.clone(),
    };
    let tap = match &live {
        Live::On(live) => Some(live.audio()),
        Live::Off(_) => None,
    };
    let recorder = match MeetingRecorder::start(&dir, &sources, tap) {
        Ok(r) => r,
        Err(e) => {
            let _ = std::fs::remove_dir_all(&dir);
            eprintln!("error: {e}");
            if matches!(e, meeting::MeetingError::SystemAudio(_)) {
                eprintln!(
                    "hint: `utter devices --system` lists what can be recorded as the others"
                );
            }
            return Ok(None);
        }
    };
    eprintln!(
        "Recording in {}\n  you:        {} ({})\n  the others: {} ({})\nCtrl+C stops and writes the transcript; Enter pauses and resumes.",
        dir.display(),
        recorder.microphone.device,
        recorder.microphone.host,
        recorder.system_audio.device,
        recorder.system_audio.host,
    );
    let (signal_tx, signals) = unbounded();
    ctrlc::set_handler(move || {
        let _ = signal_tx.send(());
    })
    .context("cannot install the signal handler")?;
    let (enter_tx, enters) = unbounded();
    std::thread::Builder::new()
        .name("utter-meeting-keys".into())
        .spawn(move || {
            for line in std::io::stdin().lock().lines() {
                if line.is_err() || enter_tx.send(()).is_err() {
                    break;
                }
            }
        })?;
    let lines = match &live {
        Live::On(live) => live.lines().clone(),
        Live::Off(_) => never(),
    };
    let mut enters = enters;
    let mut paused = false;
    loop {
        select! {
            recv(signals) -> _ => break,
            recv(lines) -> line => {
                if let Ok(line) = line {
                    print_live(&line, &args.your_name);
                }
            },
            recv(enters) -> key => {
                if key.is_err() {
                    enters = never(); // standard input closed: only Ctrl+C stops
                    continue;
                }
                paused = !paused;
                if paused {
                    recorder.pause();
                    eprintln!("Paused: nothing is recorded. Enter resumes.");
                } else {
                    recorder.resume();
                    eprintln!("Recording again.");
                }
            },
            recv(recorder.notices()) -> notice => match notice {
                Ok(MeetingNotice::Lost { channel, message }) => {
                    eprintln!("note: {channel} stopped ({message}); the meeting goes on without it")
                }
                Ok(MeetingNotice::Ended) | Err(_) => {
                    eprintln!("error: both devices are gone: the meeting stops here");
                    break;
                }
            },
        }
    }
    let record = recorder.stop()?;
    eprintln!(
        "Recorded {} (you) and {} (the others).",
        clock(record.you_ms),
        clock(record.others_ms)
    );
    // A second Ctrl+C while transcribing leaves the meeting for --finish.
    let dir_note = dir.clone();
    std::thread::spawn(move || {
        if signals.recv().is_ok() {
            eprintln!(
                "Stopped: the recording is kept; `utter meeting --finish {}` transcribes it.",
                dir_note.display()
            );
            std::process::exit(130);
        }
    });
    let engine = match live {
        Live::Off(engine) => *engine,
        Live::On(live) => {
            let (last, engine) = live.finish();
            for line in &last {
                print_live(line, &args.your_name);
            }
            match engine {
                Some(engine) => engine,
                None => bail!(
                    "the live transcript stopped abnormally; `utter meeting --finish {}` transcribes the recording",
                    dir.display()
                ),
            }
        }
    };
    Ok(Some((dir, engine)))
}

fn clock(ms: u64) -> String {
    let s = ms / 1000;
    format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

/// Transcribes the meeting in `dir` and writes the transcript (also kept in
/// the meeting's folder as `transcript.<format>`).
fn finish(
    store: &ModelStore,
    dir: &Path,
    model_name: &str,
    engine: Engine,
    options: &FileOptions,
    args: &MeetingArgs,
) -> Result<ExitCode> {
    let speakers = match utter_core::models::speakers::load(store) {
        Ok(models) => Some(models),
        Err(e) => {
            eprintln!(
                "note: the others are not told apart ({e}); `utter models install speakers` does it"
            );
            None
        }
    };
    let mut detector = match store.vad()? {
        Some(vad) => Some(SpeechDetector::load(&store.path_of(&vad))?),
        None => None,
    };
    let engines = [engine];
    let how = MeetingTranscription {
        engines: &engines,
        model_name,
        options,
        detector: detector.as_mut(),
        speakers: speakers.as_ref(),
        diarize: DiarizeOptions {
            min_speakers: args.num_speakers.map(usize::from),
            max_speakers: args.num_speakers.map(usize::from),
            ..DiarizeOptions::default()
        },
        your_name: &args.your_name,
    };
    let mut transcript = meeting::transcribe_meeting(dir, how, &mut |stage| {
        eprintln!("Transcribing: {stage}…");
    })?;
    if let Some(labels) = transcript.speakers.as_mut() {
        // The others' names, in the order they first speak; yours stays.
        let mut names = Vec::new();
        let mut given = args.speaker_names.iter();
        for label in &labels.names {
            names.push(if *label == args.your_name {
                label.clone()
            } else {
                given.next().cloned().unwrap_or_default()
            });
        }
        labels.rename(&names);
    }
    for w in &transcript.warnings {
        eprintln!("warning: {w}");
    }
    let rendered = export::render(&transcript, args.format);
    let kept = dir.join(format!("transcript.{}", args.format.extension()));
    std::fs::write(&kept, &rendered).with_context(|| format!("cannot write {}", kept.display()))?;
    match &args.output {
        Some(path) => {
            std::fs::write(path, &rendered)
                .with_context(|| format!("cannot write {}", path.display()))?;
            eprintln!("wrote {}", path.display());
        }
        None => crate::out::write(|stdout| std::io::Write::write_all(stdout, rendered.as_bytes())),
    }
    Ok(ExitCode::SUCCESS)
}
