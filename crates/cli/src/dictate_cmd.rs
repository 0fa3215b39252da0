//! `utter dictate`: live dictation on a global hotkey until SIGINT, SIGTERM
//! or SIGHUP, or until the desktop session ends (`shutdown`).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Result;
use clap::{Args, ValueEnum};
use utter_core::dictation::events::{DictationEvent, Stamped};
use utter_core::dictation::strategy::LiveStrategy;
use utter_core::profiles::{self, Profile, ProfileSet};
use utter_core::settings::defaults;
use utter_core::settings::MicMode;
use utter_core::settings::{parse_cli_value, parse_value, Language, Settings};
use utter_desktop::setup::{self, Degraded, SetupError, WireError};
use utter_engine::Compute;
use utter_models::load::EngineOptions;
use utter_models::ModelStore;
use utter_platform::desktop::DesktopSession;
use utter_platform::hotkeys::{Bindings, Hotkeys};
use utter_platform::output::{
    open_sink, OutputEnv, OutputMethod, PasteFallback, PasteKeys, Submit,
};
use utter_platform::ptt::PttServer;
use utter_platform::session_watch;
use utter_platform::{main_loop, MainThread};
use utter_ports::control::TriggerMode;

use crate::shutdown::Ending;
use crate::text_args::TextArgs;
use crate::{exit, hints};
use utter_postprocess::TextRulesConfig;
use utter_rewrite::{ProviderConfig, ProviderKind, RewriteConfig};

#[derive(Clone, Copy, ValueEnum)]
enum EventFormat {
    Json,
}

#[derive(Args)]
pub struct DictateArgs {
    /// The dictation hotkey
    #[arg(long, default_value = defaults::HOTKEY)]
    hotkey: String,
    /// push-to-talk: hold to speak; toggle: press to start and again to stop
    #[arg(long, default_value = "push-to-talk", value_parser = parse_cli_value::<TriggerMode>)]
    mode: TriggerMode,
    /// While holding the hotkey, this key switches to hands-free until the next hotkey press
    #[arg(long, default_value = defaults::LATCH_KEY)]
    latch_key: String,
    /// Discards the recording in progress (only grabbed while recording)
    #[arg(long, default_value = defaults::CANCEL_KEY)]
    cancel_key: String,
    /// Pastes the last transcript again
    #[arg(long)]
    paste_last_key: Option<String>,
    /// Where the text goes: paste, type, clipboard or stdout
    #[arg(long, default_value = "paste", value_parser = parse_value::<OutputMethod>)]
    output: OutputMethod,
    /// Paste keystroke: ctrl+v (cmd+v on macOS), shift+insert (not on macOS) or ctrl+shift+v (terminals)
    #[arg(long, default_value = "ctrl+v", value_parser = parse_value::<PasteKeys>)]
    paste_keys: PasteKeys,
    /// Leave the dictated text on the clipboard instead of restoring what was there
    #[arg(long)]
    no_restore_clipboard: bool,
    /// When the app does not read a paste: clipboard (leave the text there and say
    /// so) or type (type it instead)
    #[arg(long, default_value = "clipboard", value_parser = parse_cli_value::<PasteFallback>)]
    paste_fallback: PasteFallback,
    /// Add a space after each dictation
    #[arg(long)]
    trailing_space: bool,
    /// Input device name (see `utter devices`) [default: the system default]
    #[arg(long)]
    device: Option<String>,
    /// When the microphone is open: on-press (opened at each press, closed between
    /// dictations) or ready (from start to exit, keeping the 300 ms before the press; the
    /// system's recording indicator stays on)
    #[arg(long, default_value = "on-press", value_parser = parse_cli_value::<MicMode>)]
    mic: MicMode,
    /// Per-app profiles from this JSON file (a list, as in the settings' `profiles`) instead
    /// of the built-in ones for terminals
    #[arg(long, value_name = "FILE", conflicts_with = "no_profiles")]
    profile_file: Option<PathBuf>,
    /// No per-app profiles, not even the built-in ones for terminals
    #[arg(long)]
    no_profiles: bool,
    /// Installed model name or path [default: the default model]
    #[arg(long, short)]
    model: Option<String>,
    /// Spoken language (ISO code) [default: detected by the model]
    #[arg(long, short)]
    language: Option<String>,
    /// Print an event per line on stdout
    #[arg(long, value_enum)]
    events: Option<EventFormat>,
    /// Transcribe the whole recording on release instead of segment by segment
    /// (the same as `--live-strategy on-release`)
    #[arg(long, conflicts_with = "live_strategy")]
    no_eager: bool,
    /// How speech reaches the model while you speak: growing-window (each
    /// pause re-runs the window so far), short-window (the same over the last
    /// few seconds), per-span (each span runs once), on-release, native-stream
    /// [default: what measured best for the model]
    #[arg(long, value_name = "STRATEGY")]
    live_strategy: Option<LiveStrategy>,
    /// Silence that ends a segment, in ms
    #[arg(long, default_value_t = defaults::SILENCE_MS)]
    silence_ms: u32,
    /// Type "scratch that" and "press enter" (tab, escape) as words: by
    /// default a dictation that is only one of these edits instead
    #[arg(long)]
    no_edit_commands: bool,
    /// Lower other programs' sound to PERCENT of its volume while recording
    /// (0 mutes it), and give it back after — also after a crash, at the
    /// next start (Linux: PulseAudio or PipeWire)
    #[arg(long, value_name = "PERCENT", value_parser = clap::value_parser!(u8).range(0..=100))]
    duck: Option<u8>,
    /// Write each dictation in English whatever the language spoken
    /// (Whisper's translation; multilingual Whisper models only)
    #[arg(long)]
    translate: bool,
    /// The key pressed after each text, once it is in the app (a chat box,
    /// a terminal): none, enter, ctrl-enter or shift-enter. Never pressed
    /// when the text is left on the clipboard
    #[arg(long, value_name = "KEY", default_value = "none", value_parser = parse_cli_value::<Submit>)]
    submit: Submit,
    /// A dictation whose last sentence is only "send" (or "send it",
    /// "senden", "envoyer", "enviar", "invia"...) is sent: the word is taken
    /// off and Enter (or --submit's key) pressed
    #[arg(long)]
    spoken_submit: bool,
    /// Hands-free: end a dictation after this many seconds of silence that
    /// follow speech (0.5 to 30), and cancel one with no speech in 10 s.
    /// Works in toggle mode, after a latch, and in push-to-talk after a tap
    /// (a press released within 0.4 s)
    #[arg(long, value_name = "SECONDS", value_parser = parse_stop_on_silence)]
    stop_on_silence: Option<u32>,
    /// Audio kept after the key is released, in ms
    #[arg(long, default_value_t = defaults::POST_ROLL_MS)]
    post_roll_ms: u64,
    /// Where recordings are kept [default: ~/.local/share/utter/recordings]
    #[arg(long, env = "UTTER_RECORDINGS_DIR")]
    recordings_dir: Option<PathBuf>,
    /// CPU threads for the engine [default: the cores this process may use, fewer while other
    /// programs keep cores busy]
    #[arg(long, default_value_t = 0, hide_default_value = true)]
    threads: usize,
    /// Where the model runs: auto (a GPU if one can take it, else the CPU), cpu, or a
    /// device name from `utter devices --compute`
    #[arg(long, default_value = "auto")]
    compute: Compute,
    /// Free the model's and the voice detector's memory after this many idle
    /// seconds (0: keep them loaded); the next key press loads them again while you speak
    #[arg(long, default_value_t = defaults::IDLE_UNLOAD_SECS, value_name = "SECONDS")]
    unload_idle: u64,
    #[command(flatten)]
    text: TextArgs,
    #[command(flatten)]
    rewrite: DictateRewriteArgs,
}

/// The AI step after each dictation (off unless `--rewrite` is given).
#[derive(Args)]
struct DictateRewriteArgs {
    /// Rewrite each dictation with a language model in this mode: clean-up, formal, email,
    /// bullet-list or code-comment. When the model fails or is too slow the text is
    /// delivered as dictated, with a notice
    #[arg(long, value_name = "MODE")]
    rewrite: Option<String>,
    /// The rewrite's server: ollama, lm-studio, llama-cpp, vllm (local, no key), openai,
    /// openrouter, groq, anthropic (the key from the system keychain), or custom
    #[arg(long, value_name = "PROVIDER", default_value = "ollama", value_parser = parse_value::<ProviderKind>)]
    rewrite_provider: ProviderKind,
    /// The rewrite server's address [default: the provider's usual one]
    #[arg(long, value_name = "URL")]
    rewrite_url: Option<String>,
    /// The model name the rewrite server knows (needed with --rewrite)
    #[arg(long, value_name = "NAME")]
    rewrite_model: Option<String>,
    /// The longest wait for the model's answer, in ms
    #[arg(long, value_name = "MS", default_value_t = utter_rewrite::DEFAULT_TIME_BUDGET_MS)]
    rewrite_budget_ms: u32,
    /// AI command mode: select text in any app, hold this key (e.g. ctrl+shift+e) and say
    /// what to do with it; the model's answer replaces the selection. Uses the --rewrite-*
    /// server; without --rewrite, dictations are not rewritten
    #[arg(long, value_name = "KEY")]
    command_key: Option<String>,
}

impl DictateRewriteArgs {
    /// The settings' `rewrite`: on, with this provider, when `--rewrite` is given.
    fn config(&self) -> Result<RewriteConfig, String> {
        let mode = match (&self.rewrite, &self.command_key) {
            (Some(mode), _) => mode.clone(),
            (None, Some(_)) => utter_rewrite::modes::OFF.to_string(),
            (None, None) => return Ok(RewriteConfig::default()),
        };
        let config = RewriteConfig {
            enabled: true, // asked for on the command line
            provider: ProviderConfig {
                kind: self.rewrite_provider,
                base_url: self.rewrite_url.clone(),
                model: self.rewrite_model.clone().unwrap_or_default(),
                time_budget_ms: self.rewrite_budget_ms,
            },
            mode,
            ..RewriteConfig::default()
        };
        config.validate().map_err(|e| match e {
            utter_rewrite::ConfigError::NoModel => {
                "--rewrite and --command-key need --rewrite-model NAME (the model the server knows)"
                    .to_string()
            }
            e => format!("--rewrite: {e}"),
        })?;
        Ok(config)
    }
}

pub fn run(store: &ModelStore, args: DictateArgs) -> Result<ExitCode> {
    // Parse the keys and rules before anything slow, so a typo fails at once.
    let text = (args.text.vocabulary()?, args.text.config()?);
    if let Err(e) = Bindings::parse(
        &args.hotkey,
        &args.latch_key,
        &args.cancel_key,
        args.paste_last_key.as_deref(),
        args.mode,
    )
    .and_then(|b| b.with_command(args.rewrite.command_key.as_deref()))
    {
        hints::print_error(&e);
        return Ok(ExitCode::from(exit::USAGE));
    }
    let rewrite = match args.rewrite.config() {
        Ok(rewrite) => rewrite,
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(ExitCode::from(exit::USAGE));
        }
    };
    let profiles = match (&args.profile_file, args.no_profiles) {
        (Some(file), _) => match ProfileSet::load(file) {
            Ok(profiles) => profiles,
            Err(e) => {
                eprintln!("error: {e}");
                return Ok(ExitCode::from(exit::USAGE));
            }
        },
        (None, true) => Vec::new(),
        (None, false) => profiles::builtin(),
    };
    let store = store.clone();
    // The main thread runs the platform's event loop (hotkeys on Windows and
    // macOS need it); the dictation service runs on a worker thread.
    main_loop::run(move |main| dictate(&store, args, text, (profiles, rewrite), main))
}

fn dictate(
    store: &ModelStore,
    args: DictateArgs,
    (vocabulary, text_rules): (Vec<String>, TextRulesConfig),
    (profiles, rewrite): (Vec<Profile>, RewriteConfig),
    main: MainThread,
) -> Result<ExitCode> {
    let settings = Settings {
        hotkey: args.hotkey.clone(),
        mode: args.mode,
        input_device: args.device.clone(),
        language: args.language.clone().map_or(Language::Auto, Language::Code),
        model: args.model.clone(),
        output: args.output,
        paste_keys: args.paste_keys,
        restore_clipboard: !args.no_restore_clipboard,
        paste_fallback: args.paste_fallback,
        trailing_space: args.trailing_space,
        silence_ms: args.silence_ms,
        stop_on_silence_ms: args.stop_on_silence,
        submit: args.submit,
        translate: args.translate,
        duck_other_audio: args.duck,
        edit_commands: !args.no_edit_commands,
        spoken_submit: args.spoken_submit,
        microphone: args.mic,
        profiles,
        vocabulary,
        text_rules,
        rewrite,
        command_key: args.rewrite.command_key.clone(),
        ..Settings::default()
    };
    let engine_options = EngineOptions {
        compute: args.compute.clone(),
        threads: args.threads,
        idle_unload: (args.unload_idle > 0).then(|| Duration::from_secs(args.unload_idle)),
    };
    let recordings_dir = args
        .recordings_dir
        .clone()
        .unwrap_or_else(utter_base::paths::recordings_dir);
    let mut prepared = match setup::prepare(store, &settings, recordings_dir, engine_options) {
        Ok(p) => p,
        Err(SetupError::Load(e)) => {
            hints::print_error(&e);
            return Ok(ExitCode::from(exit::NO_MODEL));
        }
        Err(e) => return Err(e.into()),
    };
    if let Some(e) = prepared.unsupported_language.take() {
        eprintln!("error: {e}");
        return Ok(ExitCode::from(exit::USAGE));
    }
    // What the settings file does not hold: the CLI's own flags.
    let config = &mut prepared.config;
    config.latch_key = args.latch_key;
    config.cancel_key = args.cancel_key;
    config.paste_last_key = args.paste_last_key;
    config.post_roll = Duration::from_millis(args.post_roll_ms);
    config.dictation.strategy = match args.no_eager {
        true => Some(LiveStrategy::OnRelease),
        false => args.live_strategy,
    };
    let info = prepared.models.engine.info();
    let strategy = LiveStrategy::resolve(prepared.config.dictation.strategy, info)?;
    tracing::info!("live strategy: {strategy}");
    let mut notices: Vec<String> = (!prepared.config.dictation.vocabulary.is_empty()
        && !info.takes_vocabulary)
        .then(|| vocabulary_ignored(&prepared.models.model_name))
        .into_iter()
        .collect();

    if let Some(step) = &prepared.config.rewrite {
        let command = match &prepared.config.command_key {
            Some(key) => format!("; hold {key} over selected text to say what to do with it"),
            None => String::new(),
        };
        notices.push(format!(
            "AI rewrite on ({} mode{command}). {}",
            step.mode(),
            settings.rewrite.provider.destination()
        ));
    }

    // `utter ptt` reaches this dictation, whether or not hotkeys work here.
    let ptt = PttServer::start()
        .map_err(|e| notices.push(format!("`utter ptt` will not reach this dictation: {e}")))
        .ok();
    let (control_tx, control_rx) = crossbeam_channel::unbounded();
    // From here on a signal or the session's end stops it, within a bound.
    let session = match session_watch::watch(&DesktopSession::detect()) {
        Ok(watch) => watch,
        Err(e) => {
            notices.push(format!(
                "the end of the desktop session will go unnoticed: {e}"
            ));
            None
        }
    };
    let ending = Ending::watch(
        control_tx.clone(),
        session,
        ptt.as_ref().map(|p| p.path().to_path_buf()),
    )?;
    let hotkeys = Hotkeys::new(main.clone());
    let desktop = setup::Desktop {
        hotkeys: &hotkeys,
        ptt: ptt.as_ref(),
        output: OutputEnv::detect(Some(main)),
        open_sink: &open_sink,
    };
    let output_method = prepared.config.output.method;
    let wired = match prepared.wire(desktop, control_tx.clone(), control_rx) {
        Ok(wired) => wired,
        Err(WireError::Keys(e)) => {
            hints::print_error(&e);
            return Ok(ExitCode::from(exit::USAGE));
        }
        Err(WireError::Output(e)) => {
            eprintln!("error: {e}");
            if output_method != OutputMethod::Stdout {
                eprintln!("hint: `--output stdout` prints the text instead");
            }
            return Ok(ExitCode::from(exit::USAGE));
        }
    };
    let mut how = format!("Hold {} to dictate", wired.config.hotkey);
    for degraded in &wired.degraded {
        match degraded {
            Degraded::NoHotkeys(why) => {
                notices.push(format!(
                    "global hotkeys are unavailable: {why}; {}",
                    hints::PTT_INSTEAD
                ));
                how = "Run `utter ptt press` / `utter ptt release` (or `toggle`) to dictate".into();
            }
            Degraded::Output { message, .. } => notices.push(message.clone()),
        }
    }

    let json = args.events.is_some();
    let emit = move |event: DictationEvent| {
        if json {
            let stamped = Stamped::from(event);
            out!("{}", serde_json::to_string(&stamped).expect("serialisable"));
            return;
        }
        match event {
            DictationEvent::Ready { model, mic } => {
                eprintln!("Ready ({model}, mic: {mic}). {how}; Ctrl+C to quit.")
            }
            DictationEvent::Recovered {
                audio_path, text, ..
            } => {
                eprintln!("Recovered an unfinished dictation ({audio_path}): {text}")
            }
            DictationEvent::Error { message } => eprintln!("error: {message}"),
            DictationEvent::Notice { message }
            | DictationEvent::EngineRestarted { message, .. } => eprintln!("note: {message}"),
            DictationEvent::Cancelled { .. } => eprintln!("(cancelled)"),
            DictationEvent::StoppingOnSilence {
                left_ms: Some(ms), ..
            } => eprintln!("(quiet: stopping in {} s)", ms / 1000),
            _ => {}
        }
    };
    for message in notices {
        emit(DictationEvent::Notice { message });
    }

    drop(control_tx); // the keys, ptt and the ending hold their own
    wired.run(emit);
    drop(ptt);
    Ok(ExitCode::from(ending.code()))
}

/// `utter ptt COMMAND`: drives the running dictation (for compositor key bindings).
pub fn ptt(command: &str) -> Result<ExitCode> {
    match utter_platform::ptt::send(command) {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(e @ utter_platform::ptt::PttError::Unknown(_)) => {
            eprintln!("error: {e}");
            Ok(ExitCode::from(exit::USAGE))
        }
        Err(e) => {
            eprintln!("error: {e}");
            Ok(ExitCode::from(exit::FILE_FAILED))
        }
    }
}

pub fn devices(compute: bool, system: bool) -> Result<ExitCode> {
    if compute {
        for d in utter_engine::compute_devices() {
            out!("{:<8} {:<16} {}", d.kind, d.name, d.description);
        }
        return Ok(ExitCode::SUCCESS);
    }
    let inputs = if system {
        match utter_capture::microphone::system_audio_devices() {
            Ok(devices) => devices,
            Err(e) => {
                eprintln!("error: {e}");
                return Ok(ExitCode::from(crate::exit::FILE_FAILED));
            }
        }
    } else {
        utter_capture::microphone::list_input_devices()
    };
    if inputs.devices.is_empty() {
        out!("No input devices found.");
    }
    // The list stays one name a line for scripts; where it came from goes to stderr.
    let kind = if system {
        "system audio"
    } else {
        "input devices"
    };
    eprintln!("({kind} through {})", inputs.host);
    for device in inputs.devices {
        let mark = if device.is_default { "* " } else { "  " };
        out!("{mark}{}", device.name);
    }
    Ok(ExitCode::SUCCESS)
}

/// What a user who gave a vocabulary is told when the model cannot use it.
pub fn vocabulary_ignored(model: &str) -> String {
    format!(
        "{model} does not take a vocabulary as a prompt: your words correct what sounds like them after transcription, and replacements still apply; a Whisper model also hears them as a prompt"
    )
}

/// `--stop-on-silence SECONDS` in ms, within what the settings accept.
fn parse_stop_on_silence(value: &str) -> Result<u32, String> {
    let range = utter_core::dictation::silence_stop::AFTER_RANGE_MS;
    let seconds: f64 = value
        .parse()
        .map_err(|_| format!("`{value}` is not a number of seconds"))?;
    let ms = (seconds * 1000.0).round();
    if !(ms >= *range.start() as f64 && ms <= *range.end() as f64) {
        return Err(format!(
            "must be {} to {} seconds",
            *range.start() as f64 / 1000.0,
            *range.end() as f64 / 1000.0
        ));
    }
    Ok(ms as u32)
}
