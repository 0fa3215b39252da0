//! `utter transcribe FILE...`: each file gets its transcript or a one-line
//! error; one bad file never stops the others.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use utter_core::export::{self, Format};
use utter_core::transcribe::{self, FileOptions, Segmentation};
use utter_core::transcript::FileTranscript;
use utter_engine::cpu::Threads;
use utter_engine::diarize_model::EngineDiarizer;
use utter_engine::vad::SpeechDetector;
use utter_engine::{Compute, Engine, EngineConfig};
use utter_models::diarize::{DiarizeOptions, SpeakerModels, SpeakerTurn};
use utter_models::{ModelStore, ModelUse};

use crate::exit;
use crate::output_target::{self, OutputTarget};
use crate::text_args::TextArgs;

#[derive(Args)]
pub struct TranscribeArgs {
    /// Audio or video files (wav, flac, mp3, ogg/vorbis, m4a/aac, mp4, mkv, webm...)
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Output format: txt, md, srt, vtt or json
    #[arg(long, short, default_value = "txt", value_parser = parse_format)]
    format: Format,
    #[arg(long, short, default_value = "-", help = crate::output_target::HELP)]
    output: String,
    /// Spoken language (ISO code, e.g. `en`), or `auto`: the model detects it [default: auto]
    #[arg(long, short)]
    language: Option<String>,
    /// Installed model name or path to a model file [default: the default model]
    #[arg(long, short)]
    model: Option<String>,
    /// CPU threads for the engine [default: the cores this process may use, fewer while other
    /// programs keep cores busy]
    #[arg(long, default_value_t = 0, hide_default_value = true)]
    threads: usize,
    /// Where the model runs: auto (a GPU if one can take it, else the CPU), cpu, or a
    /// device name from `utter devices --compute`
    #[arg(long, default_value = "auto")]
    compute: Compute,
    /// Engine workers transcribing windows in parallel, each with `--threads` threads (each holds
    /// its own copy of the model's buffers; 2 helps only on audio with long pauses) [default: 1]
    #[arg(long, default_value_t = 0, hide_default_value = true)]
    workers: usize,
    /// Translate the speech into English (multilingual models only)
    #[arg(long)]
    translate: bool,
    /// Do not split on speech: transcribe fixed 30 s windows
    #[arg(long)]
    no_vad: bool,
    /// Label who speaks each segment (Speaker 1, Speaker 2…) in every format; needs the
    /// speaker models (`utter models install speakers`)
    #[arg(long)]
    speakers: bool,
    /// With --speakers: a model with the engine's diarization role (Sortformer), by name or
    /// file, to tell the speakers apart instead of the speaker models
    #[arg(long, requires = "speakers", value_name = "MODEL")]
    speaker_model: Option<String>,
    /// With --speakers: the number of speakers, when you know it [default: found from the voices]
    #[arg(long, requires = "speakers", value_parser = clap::value_parser!(u16).range(1..))]
    num_speakers: Option<u16>,
    /// With --speakers: names for the speakers in the order they first speak, comma-separated
    /// (e.g. "Anna,Ben"); the others stay Speaker N
    #[arg(
        long,
        requires = "speakers",
        value_delimiter = ',',
        value_name = "NAMES"
    )]
    speaker_names: Vec<String>,
    /// The longest audio a file may hold, in minutes: a longer one (or one whose header
    /// claims more) is refused while it is read
    #[arg(long, default_value_t = utter_core::audio::limits::DEFAULT_MAX_AUDIO_MINUTES,
          value_parser = clap::value_parser!(u32).range(1..=i64::from(utter_core::settings::MAX_AUDIO_MINUTES_CEILING)))]
    max_audio_minutes: u32,
    /// Windows per engine call
    #[arg(long, default_value_t = 1, hide = true)]
    batch_size: usize,
    #[command(flatten)]
    text: TextArgs,
}

/// Workers and threads per worker. One worker with every core: each worker
/// holds its own model and compute buffers (~140 MB for tiny.en), and a
/// second one only pays on audio with long pauses (7 % faster there, slower
/// on dense speech; docs/benchmarks.md, issue 15).
/// Without `--threads`, the cores this process may use are shared out
/// (`engine::cpu::engine_threads`: affinity and cgroup quota), and each
/// worker takes fewer while other programs keep cores busy.
fn worker_layout(workers: usize, threads: usize) -> (usize, Threads) {
    let workers = workers.max(1);
    let threads = if threads > 0 {
        Threads::Fixed(threads)
    } else {
        Threads::FitToLoad {
            max: (utter_engine::cpu::engine_threads() / workers).max(1),
        }
    };
    (workers, threads)
}

fn parse_format(s: &str) -> Result<Format, utter_core::export::UnknownFormat> {
    s.parse()
}

/// Engine restarts and CPU fallbacks, one line each, above the progress bar.
fn print_engine_notices(engines: &[Engine], bar: &ProgressBar) {
    for notice in engines.iter().flat_map(Engine::notices) {
        bar.suspend(|| eprintln!("note: {notice}"));
    }
}

fn progress_bar(path: &std::path::Path) -> ProgressBar {
    let total_ms = utter_core::audio::probe_duration_secs(path).map(|s| (s * 1000.0) as u64);
    let bar = match total_ms {
        Some(ms) => ProgressBar::new(ms),
        None => ProgressBar::new_spinner(),
    };
    bar.set_style(
        ProgressStyle::with_template("{msg} [{bar:30}] {percent}% eta {eta}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    bar.set_message(
        path.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
    );
    bar
}

pub fn run(store: &ModelStore, args: TranscribeArgs) -> Result<ExitCode> {
    if let Err(e) = args.text.refuse_dictation_only() {
        eprintln!("error: {e}");
        return Ok(ExitCode::from(exit::USAGE));
    }
    // First: a missing speaker install fails at once, whatever else is missing.
    let mut diarizer = match diarizer(store, &args) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(ExitCode::from(exit::NO_MODEL));
        }
    };
    let diarize_options = DiarizeOptions {
        min_speakers: args.num_speakers.map(usize::from),
        max_speakers: args.num_speakers.map(usize::from),
        ..DiarizeOptions::default()
    };
    let (model_name, model_path) =
        match store.resolve_speech_for(args.model.as_deref(), ModelUse::Files) {
            Ok(m) => m,
            Err(e) => {
                crate::hints::print_error(&e);
                return Ok(ExitCode::from(exit::NO_MODEL));
            }
        };
    // Before the model loads, so a typo fails at once.
    let vocabulary = args.text.vocabulary()?;
    let rules = args.text.rules()?.with_vocabulary(&vocabulary);
    let (workers, threads) = worker_layout(args.workers, args.threads);
    let mut engines = Vec::with_capacity(workers);
    for _ in 0..workers {
        match Engine::start(EngineConfig {
            threads,
            compute: args.compute.clone(),
            ..EngineConfig::new(model_path.clone())
        }) {
            Ok(e) => engines.push(e),
            Err(e) => {
                eprintln!("error: {e}");
                return Ok(ExitCode::from(exit::NO_MODEL));
            }
        }
    }
    if args.translate && !engines[0].info().translates {
        eprintln!(
            "error: `{}` cannot translate (English-only or no translation head); install a multilingual model, e.g. `utter models install whisper-base`",
            engines[0].info().variant
        );
        return Ok(ExitCode::from(exit::USAGE));
    }
    let language = args
        .language
        .clone()
        .filter(|l| !l.eq_ignore_ascii_case("auto"));
    if let Err(e) = engines[0].info().check_language(language.as_deref()) {
        eprintln!("error: {e}");
        return Ok(ExitCode::from(exit::USAGE));
    }
    let mut detector = if args.no_vad {
        None
    } else {
        match store.vad()? {
            Some(vad) => Some(SpeechDetector::load(&store.path_of(&vad))?),
            None => {
                tracing::warn!(
                    "no VAD model installed: using fixed 30 s windows (run `utter models install-default`)"
                );
                None
            }
        }
    };
    let target = match OutputTarget::parse(&args.output, args.files.len()) {
        Ok(target) => target,
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(ExitCode::from(exit::USAGE));
        }
    };
    target
        .prepare()
        .with_context(|| format!("cannot create the folder for --output {}", args.output))?;
    let options = FileOptions {
        language,
        translate: args.translate,
        batch_size: args.batch_size,
        vocabulary,
        rules,
        limits: utter_core::audio::AudioLimits::minutes(args.max_audio_minutes),
        ..Default::default()
    };
    if !options.vocabulary.is_empty() && !engines[0].info().takes_vocabulary {
        eprintln!(
            "note: {}",
            crate::dictate_cmd::vocabulary_ignored(&engines[0].info().variant)
        );
    }
    // Every output's name before any work: two inputs must not write one file.
    let names = match &target {
        OutputTarget::Folder(_) => output_names(&args.files, args.format.extension()),
        OutputTarget::File(_) | OutputTarget::Stdout => Ok(vec![String::new(); args.files.len()]),
    };
    let output_names = match names {
        Ok(names) => names,
        Err(clash) => {
            eprintln!("error: {clash}");
            return Ok(ExitCode::from(exit::USAGE));
        }
    };
    let mut failed = 0usize;
    for (index, path) in args.files.iter().enumerate() {
        // With speakers: who spoke when first, then each speaker's span on its own.
        let turns = match &mut diarizer {
            Some(Diarizer::Utter(models)) => Some(diarize(models, path, &diarize_options)),
            Some(Diarizer::Engine(model)) => {
                Some(transcribe::diarize_file_with_engine(model, path))
            }
            None => None,
        };
        let spans = match turns {
            Some(turns) => match turns {
                Ok(turns) => Some(transcribe::speaker_spans(&turns)),
                Err(e) => {
                    eprintln!("error: {e}");
                    failed += 1;
                    continue;
                }
            },
            None => None,
        };
        let segmentation = match &spans {
            Some(spans) => Segmentation::Turns(spans),
            None => detector.as_mut().into(),
        };
        let bar = progress_bar(path);
        let result =
            transcribe::transcribe_file(&engines, segmentation, path, &model_name, &options, |p| {
                bar.set_position(p.decoded_ms.max(0) as u64);
                print_engine_notices(&engines, &bar);
            });
        print_engine_notices(&engines, &bar);
        for notice in detector.iter_mut().flat_map(SpeechDetector::notices) {
            bar.suspend(|| eprintln!("note: {notice}"));
        }
        bar.finish_and_clear();
        let transcript = match result {
            Ok(mut t) => {
                let unused = t
                    .speakers
                    .as_mut()
                    .map_or(0, |labels| labels.rename(&args.speaker_names));
                if unused > 0 {
                    eprintln!(
                        "note: {}: {unused} of the --speaker-names had no speaker (fewer were heard)",
                        path.display()
                    );
                }
                t
            }
            Err(e) => {
                eprintln!("error: {e}");
                failed += 1;
                continue;
            }
        };
        for w in &transcript.warnings {
            eprintln!("warning: {}: {w}", path.display());
        }
        if transcript.truncated {
            failed += 1; // scripts must notice a cut-off file; its text still follows
        }
        let destination = target.path_for(&output_names[index]);
        if let Err(e) = write_output(&transcript, args.format, destination, args.files.len() > 1) {
            eprintln!("error: {}: {e:#}", path.display());
            failed += 1;
        }
    }
    Ok(if failed > 0 {
        ExitCode::from(exit::FILE_FAILED)
    } else {
        ExitCode::SUCCESS
    })
}

/// What tells the speakers apart.
enum Diarizer {
    /// Utter's speaker models (pyannote segmentation + CAM++).
    Utter(Box<SpeakerModels>),
    /// A diarization model of the engine's (`--speaker-model`).
    Engine(EngineDiarizer),
}

/// The diarizer `--speakers` asks for; `None` without it.
fn diarizer(store: &ModelStore, args: &TranscribeArgs) -> Result<Option<Diarizer>> {
    if !args.speakers {
        return Ok(None);
    }
    let Some(name) = &args.speaker_model else {
        let models = utter_models::speakers::load(store)?;
        return Ok(Some(Diarizer::Utter(Box::new(models))));
    };
    let path = match store.find(name)? {
        Some(entry) => store.path_of(&entry),
        None if std::path::Path::new(name).is_file() => PathBuf::from(name),
        None => anyhow::bail!("no model `{name}` is installed, and no such file"),
    };
    let threads = utter_engine::cpu::engine_threads();
    Ok(Some(Diarizer::Engine(EngineDiarizer::load(
        &path, threads,
    )?)))
}

/// Who spoke when in `path`, with a progress bar.
fn diarize(
    models: &SpeakerModels,
    path: &std::path::Path,
    options: &DiarizeOptions,
) -> Result<Vec<SpeakerTurn>, transcribe::DiarizeFileError> {
    let bar = ProgressBar::new(100);
    bar.set_style(
        ProgressStyle::with_template("{msg}: speakers [{bar:30}] {percent}% eta {eta}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    bar.set_message(
        path.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
    );
    let started = std::time::Instant::now();
    let turns = transcribe::diarize_file(models, path, options, &mut |done| {
        bar.set_position((done * 100.0) as u64);
        true
    });
    bar.finish_and_clear();
    if let Ok(turns) = &turns {
        tracing::info!(
            turns = turns.len(),
            secs = started.elapsed().as_secs_f64(),
            "diarized"
        );
    }
    turns
}

/// The file each input's transcript is written to in `--output DIR`:
/// `talk.srt` for `talk.m4a`; where two inputs share a stem (`a.m4a`,
/// `a.webm`), the whole name (`a.m4a.srt`, `a.webm.srt`). Names that would
/// still be one (`x/a.wav` and `y/a.wav`, a file given twice) are an error
/// naming both, before anything is transcribed. Compared without case, for
/// the file systems that ignore it.
fn output_names(files: &[PathBuf], ext: &str) -> Result<Vec<String>, String> {
    let stem = |f: &PathBuf| {
        f.file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "transcript".into())
    };
    let stems: Vec<String> = files.iter().map(|f| stem(f).to_lowercase()).collect();
    let names: Vec<String> = files
        .iter()
        .zip(&stems)
        .map(|(file, key)| {
            if stems.iter().filter(|s| *s == key).count() == 1 {
                format!("{}.{ext}", stem(file))
            } else {
                let whole = file
                    .file_name()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_else(|| "transcript".into());
                format!("{whole}.{ext}")
            }
        })
        .collect();
    for (i, name) in names.iter().enumerate() {
        if let Some(j) = names[..i]
            .iter()
            .position(|n| n.to_lowercase() == name.to_lowercase())
        {
            return Err(format!(
                "{} and {} would both be written to {name}: transcribe them with separate --output folders",
                files[j].display(),
                files[i].display()
            ));
        }
    }
    Ok(names)
}

fn write_output(
    t: &FileTranscript,
    format: Format,
    destination: Option<PathBuf>,
    several: bool,
) -> Result<()> {
    let rendered = export::render(t, format);
    match destination {
        Some(dest) => {
            output_target::write_whole(&dest, rendered.as_bytes())
                .with_context(|| format!("cannot write {}", dest.display()))?;
            eprintln!("wrote {}", dest.display());
        }
        None => {
            crate::out::write(|stdout| {
                if several && format == Format::Txt {
                    writeln!(stdout, "==> {} <==", t.file.display())?;
                }
                stdout.write_all(rendered.as_bytes())
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_inputs_never_write_one_output() {
        let files = |names: &[&str]| names.iter().map(PathBuf::from).collect::<Vec<_>>();
        assert_eq!(
            output_names(&files(&["a.m4a", "b.webm"]), "srt").unwrap(),
            ["a.srt", "b.srt"]
        );
        assert_eq!(
            output_names(&files(&["x/a.m4a", "y/A.webm", "c.wav"]), "srt").unwrap(),
            ["a.m4a.srt", "A.webm.srt", "c.srt"]
        );
        let clash = output_names(&files(&["x/a.wav", "y/a.wav"]), "srt").unwrap_err();
        assert!(
            clash.contains("x/a.wav and y/a.wav would both be written to a.wav.srt"),
            "{clash}"
        );
    }
}
