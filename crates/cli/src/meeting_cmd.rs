//! `utter meeting`: records your microphone ("You") and what the computer
//! plays (the others on the call) until Ctrl+C, then writes the transcript
//! with who said what. `--finish` transcribes a meeting that was cut off.

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use clap::Args;
use crossbeam_channel::{never, select, unbounded};
use utter_capture::{MeetingNotice, MeetingSession, MeetingSources};
use utter_core::export::{self, Format};
use utter_core::meeting::{self, Channel, LiveLine, MeetingModels};
use utter_core::transcribe::FileOptions;
use utter_engine::cpu::Threads;
use utter_engine::{Engine, EngineConfig, Priority};
use utter_models::diarize::DiarizeOptions;
use utter_models::{ModelStore, ModelUse};

use crate::exit;
use crate::output_target::{self, OutputTarget};
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
    #[arg(long, short, default_value = "-", help = crate::output_target::HELP)]
    output: String,
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
    if let Err(e) = args.text.refuse_dictation_only() {
        eprintln!("error: {e}");
        return Ok(ExitCode::from(exit::USAGE));
    }
    let root = args
        .meetings_dir
        .clone()
        .unwrap_or_else(utter_base::paths::meetings_dir);
    // The models are checked before anything is recorded.
    let models = match models(store, &args)? {
        Ok(models) => models,
        Err(code) => return Ok(code),
    };
    let diarize = DiarizeOptions {
        min_speakers: args.num_speakers.map(usize::from),
        max_speakers: args.num_speakers.map(usize::from),
        ..DiarizeOptions::default()
    };
    let mut stage = |stage: &str| eprintln!("Transcribing: {stage}…");
    let (dir, transcript) = match &args.finish {
        Some(finish) => {
            let dir = match finish {
                Some(dir) => dir.clone(),
                None => match meeting::unfinished(&root).pop() {
                    Some(dir) => dir,
                    None => bail!("no unfinished meeting in {}", root.display()),
                },
            };
            let t = meeting::finish_meeting(
                &dir,
                models,
                &args.your_name,
                diarize,
                &args.speaker_names,
                &mut stage,
            )?;
            (dir, t)
        }
        None => {
            let Some(stopped) = record(&root, &args, models)? else {
                return Ok(ExitCode::from(exit::FILE_FAILED));
            };
            let dir = stopped.dir.clone();
            let t =
                stopped.transcribe(&args.your_name, diarize, &args.speaker_names, &mut stage)?;
            (dir, t)
        }
    };
    write_transcript(&dir, &transcript, &args)?;
    Ok(ExitCode::SUCCESS)
}

/// The engine, voice detector, speaker models and text options; `Err`: the
/// exit status, said why.
fn models(store: &ModelStore, args: &MeetingArgs) -> Result<Result<MeetingModels, ExitCode>> {
    let (model_name, model_path) =
        match store.resolve_speech_for(args.model.as_deref(), ModelUse::Files) {
            Ok(m) => m,
            Err(e) => {
                crate::hints::print_error(&e);
                return Ok(Err(ExitCode::from(exit::NO_MODEL)));
            }
        };
    let vocabulary = args.text.vocabulary()?;
    let rules = args.text.rules()?.with_vocabulary(&vocabulary);
    let engine = match Engine::start(EngineConfig {
        threads: Threads::FitToLoad {
            max: utter_engine::cpu::engine_threads(),
        },
        // Below the user's own work: a dictation during the meeting goes first.
        priority: Priority::Background,
        ..EngineConfig::new(model_path)
    }) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(Err(ExitCode::from(exit::NO_MODEL)));
        }
    };
    let language = args
        .language
        .clone()
        .filter(|l| !l.eq_ignore_ascii_case("auto"));
    if let Err(e) = engine.info().check_language(language.as_deref()) {
        eprintln!("error: {e}");
        return Ok(Err(ExitCode::from(exit::USAGE)));
    }
    let speakers = match utter_models::speakers::load(store) {
        Ok(models) => Some(models),
        Err(e) => {
            eprintln!(
                "note: the others will not be told apart ({e}); `utter models install speakers` does it"
            );
            None
        }
    };
    let vad = store.vad()?.map(|vad| store.path_of(&vad));
    Ok(Ok(MeetingModels {
        engine,
        model_name,
        vad,
        speakers,
        options: FileOptions {
            language,
            vocabulary,
            rules,
            ..Default::default()
        },
    }))
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
/// `None`: it could not start (said why).
fn record(
    root: &Path,
    args: &MeetingArgs,
    models: MeetingModels,
) -> Result<Option<meeting::StoppedMeeting>> {
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
    let sources = MeetingSources {
        microphone: args.device.clone(),
        system_audio: args.system_device.clone(),
    };
    let session = match MeetingSession::start(root, &sources, models, !args.no_live) {
        Ok((session, why_not_live)) => {
            if let Some(why) = why_not_live {
                eprintln!("note: no live transcript: {}", why.0);
            }
            session
        }
        Err(e) => {
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
        session.dir().display(),
        session.microphone().device,
        session.microphone().host,
        session.system_audio().device,
        session.system_audio().host,
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
    let mut enters = enters;
    let mut paused = false;
    loop {
        select! {
            recv(signals) -> _ => break,
            recv(session.lines()) -> line => {
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
                    session.pause();
                    eprintln!("Paused: nothing is recorded. Enter resumes.");
                } else {
                    session.resume();
                    eprintln!("Recording again.");
                }
            },
            recv(session.notices()) -> notice => match notice {
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
    let (stopped, last) = session.stop()?;
    for line in &last {
        print_live(line, &args.your_name);
    }
    eprintln!(
        "Recorded {} (you) and {} (the others).",
        clock(stopped.record.you_ms),
        clock(stopped.record.others_ms)
    );
    // A second Ctrl+C while transcribing leaves the meeting for --finish.
    let dir_note = stopped.dir.clone();
    std::thread::spawn(move || {
        if signals.recv().is_ok() {
            eprintln!(
                "Stopped: the recording is kept; `utter meeting --finish {}` transcribes it.",
                dir_note.display()
            );
            std::process::exit(130);
        }
    });
    Ok(Some(stopped))
}

fn clock(ms: u64) -> String {
    let s = ms / 1000;
    format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

/// Writes the transcript where asked, and keeps it in the meeting's folder
/// as `transcript.<format>`.
fn write_transcript(
    dir: &Path,
    transcript: &utter_core::transcript::FileTranscript,
    args: &MeetingArgs,
) -> Result<()> {
    for w in &transcript.warnings {
        eprintln!("warning: {w}");
    }
    let rendered = export::render(transcript, args.format);
    let kept = dir.join(format!("transcript.{}", args.format.extension()));
    std::fs::write(&kept, &rendered).with_context(|| format!("cannot write {}", kept.display()))?;
    // In a folder, the meeting's own folder name (its start time) names the file.
    let name = format!(
        "meeting-{}.{}",
        dir.file_name()
            .map_or_else(|| "transcript".into(), |n| n.to_string_lossy()),
        args.format.extension()
    );
    let target = OutputTarget::parse(&args.output, 1).map_err(anyhow::Error::msg)?;
    match target.path_for(&name) {
        Some(path) => {
            target
                .prepare()
                .and_then(|()| output_target::write_whole(&path, rendered.as_bytes()))
                .with_context(|| {
                    format!(
                        "cannot write {} (the transcript is kept in {})",
                        path.display(),
                        kept.display()
                    )
                })?;
            eprintln!("wrote {}", path.display());
        }
        None => crate::out::write(|stdout| std::io::Write::write_all(stdout, rendered.as_bytes())),
    }
    Ok(())
}
