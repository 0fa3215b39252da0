//! `utter`: the command-line front end of Utter. It parses arguments,
//! resolves them once into core settings, and prints what the core returns.

#[macro_use]
mod out;

mod dictate_cmd;
mod doctor_cmd;
mod hints;
mod meeting_cmd;
mod models_cmd;
mod rewrite_cmd;
mod serve_cmd;
mod shutdown;
mod text_args;
mod transcribe_cmd;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Exit codes, documented in the README.
pub mod exit {
    /// Some input file failed (the others were still processed).
    pub const FILE_FAILED: u8 = 1;
    /// Bad command-line usage (clap uses 2 as well).
    pub const USAGE: u8 = 2;
    /// No usable model: nothing could be transcribed.
    pub const NO_MODEL: u8 = 3;
    /// `utter dictate`: the desktop session ended (its display server went away).
    pub const SESSION_ENDED: u8 = 4;
}

#[derive(Parser)]
#[command(
    name = "utter",
    version,
    about = "Local-first dictation and transcription"
)]
struct Cli {
    /// Where models are kept [default: platform data dir, e.g. ~/.local/share/utter/models]
    #[arg(long, global = true, env = "UTTER_MODELS_DIR", value_name = "DIR")]
    models_dir: Option<PathBuf>,
    /// More logging (-v: info, -vv: debug, incl. the engine's native logs)
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    verbose: u8,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Transcribe audio or video files
    Transcribe(Box<transcribe_cmd::TranscribeArgs>),
    /// Live dictation: hold a hotkey, speak, release; the text lands in the focused app
    Dictate(Box<dictate_cmd::DictateArgs>),
    /// Record a call: your microphone and what the computer plays (the others), until
    /// Ctrl+C; then the transcript says who said what
    Meeting(Box<meeting_cmd::MeetingArgs>),
    /// List audio input devices (* = default); --system: what `utter meeting` can record as
    /// the others; --compute: the engine's compute devices
    Devices {
        #[arg(long, conflicts_with = "system")]
        compute: bool,
        #[arg(long)]
        system: bool,
    },
    /// Manage speech and VAD models
    #[command(subcommand)]
    Models(models_cmd::ModelsCommand),
    /// Drive the running dictation (`utter dictate` or the app) from a
    /// compositor key binding: press, release, toggle, start, stop, cancel; command-press and
    /// command-release hold AI command mode's key
    Ptt {
        #[arg(value_parser = ["press", "release", "toggle", "start", "stop", "cancel", "command-press", "command-release"])]
        command: String,
    },
    /// What works in this session (hotkey, paste, type, clipboard, microphone,
    /// model, GPU) and what to do about what does not
    Doctor,
    /// Rewrite text from standard input with a language model (clean-up, formal, email...);
    /// the text comes out as given, exit status 3, when the model fails or is too slow
    Rewrite(rewrite_cmd::RewriteArgs),
    /// Serve the OpenAI audio API (transcriptions, translations, models) to other programs
    Serve(serve_cmd::ServeArgs),
    /// Serve MCP over standard input/output for AI agents (tools: transcribe_file, list_models)
    Mcp,
}

fn init_logging(verbose: u8) {
    let default = match verbose {
        0 => "warn",
        1 => "info",
        _ => "debug",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env("UTTER_LOG").unwrap_or_else(|_| {
        tracing_subscriber::EnvFilter::new(format!(
            "{default},symphonia=off,arboard=error,global_hotkey=error,enigo=error,pulseaudio=off"
        ))
    });
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .init();
    if verbose < 2 {
        utter_core::quiet_native_logs();
    }
}

fn main() -> ExitCode {
    // The engine runs in a child re-executing this binary; this is that child.
    if let Some(code) = utter_core::engine::worker::serve_if_worker() {
        return ExitCode::from(code);
    }
    let cli = Cli::parse();
    init_logging(cli.verbose);
    let store = utter_core::models::ModelStore::new(
        cli.models_dir.unwrap_or_else(utter_core::paths::models_dir),
    );
    let result = match cli.command {
        Command::Transcribe(args) => transcribe_cmd::run(&store, *args),
        Command::Models(cmd) => models_cmd::run(&store, cmd),
        Command::Dictate(args) => dictate_cmd::run(&store, *args),
        Command::Meeting(args) => meeting_cmd::run(&store, *args),
        Command::Devices { compute, system } => dictate_cmd::devices(compute, system),
        Command::Ptt { command } => dictate_cmd::ptt(&command),
        Command::Doctor => doctor_cmd::run(&store),
        Command::Rewrite(args) => rewrite_cmd::run(args),
        Command::Serve(args) => serve_cmd::run(store, args),
        Command::Mcp => utter_server::mcp::serve_stdio(store)
            .map(|()| ExitCode::SUCCESS)
            .map_err(Into::into),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            if let Some(hint) = hints::for_error(e.as_ref()) {
                eprintln!("hint: {hint}");
            }
            ExitCode::from(exit::FILE_FAILED)
        }
    }
}
