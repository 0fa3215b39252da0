//! `utter`: the command-line front end of Utter. It parses arguments,
//! resolves them once into core settings, and prints what the core returns.

#[macro_use]
mod out;

mod dictate_cmd;
mod doctor_cmd;
mod hints;
mod meeting_cmd;
mod models_cmd;
mod output_target;
mod places_cmd;
mod rewrite_cmd;
mod serve_cmd;
mod shutdown;
mod text_args;
mod transcribe_cmd;

use std::path::PathBuf;
use std::process::ExitCode;

use std::io::IsTerminal;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

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
        /// The engine's compute devices (CPU, GPUs) instead of microphones
        #[arg(long, conflicts_with = "system")]
        compute: bool,
        /// What `utter meeting` can record as the other side (the system's playback)
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
        /// What the key did
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
    /// Every place Utter keeps something (settings, data, models, caches, logs, the
    /// autostart entry), with its size
    Paths,
    /// Remove what Utter keeps on this computer (lists it first; --yes removes), then says
    /// how to remove the program
    Uninstall(places_cmd::UninstallArgs),
    /// Serve MCP over standard input/output for AI agents (the tools are listed in --help,
    /// from the server's own table)
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
        // Colour codes only for a terminal: a log file or a pipe gets plain text.
        .with_ansi(std::io::stderr().is_terminal())
        .with_target(false)
        .init();
    if verbose < 2 {
        utter_engine::quiet_native_logs();
    }
}

/// The command line, with help texts that come from the code they describe.
fn command() -> clap::Command {
    let mcp_about = format!(
        "Serve MCP over standard input/output for AI agents (tools: {})",
        utter_server::mcp::TOOLS.join(", ")
    );
    Cli::command().mut_subcommand("mcp", |c| c.about(mcp_about))
}

fn parse_args() -> Cli {
    Cli::from_arg_matches(&command().get_matches()).unwrap_or_else(|e| e.exit())
}

fn main() -> ExitCode {
    // The engine runs in a child re-executing this binary; this is that child.
    if let Some(code) = utter_engine::worker::serve_if_worker() {
        return ExitCode::from(code);
    }
    let cli = parse_args();
    init_logging(cli.verbose);
    let store =
        utter_models::ModelStore::new(cli.models_dir.unwrap_or_else(utter_base::paths::models_dir));
    let result = match cli.command {
        Command::Transcribe(args) => transcribe_cmd::run(&store, *args),
        Command::Models(cmd) => models_cmd::run(&store, cmd),
        Command::Dictate(args) => dictate_cmd::run(&store, *args),
        Command::Meeting(args) => meeting_cmd::run(&store, *args),
        Command::Devices { compute, system } => dictate_cmd::devices(compute, system),
        Command::Ptt { command } => dictate_cmd::ptt(&command),
        Command::Doctor => doctor_cmd::run(&store),
        Command::Rewrite(args) => rewrite_cmd::run(args),
        Command::Paths => places_cmd::paths(),
        Command::Uninstall(args) => places_cmd::uninstall(args),
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Every subcommand, depth first, with its path (`utter models list`).
    fn commands(command: &clap::Command, path: String, out: &mut Vec<(String, clap::Command)>) {
        for sub in command.get_subcommands() {
            let path = format!("{path} {}", sub.get_name());
            out.push((path.clone(), sub.clone()));
            commands(sub, path, out);
        }
    }

    /// The help is what a newcomer reads first: every flag and command says
    /// what it does, and a default is shown once (a flag whose own text gives
    /// the default hides clap's, which would show the sentinel it parses).
    #[test]
    fn every_flag_has_help_and_one_default() {
        let mut all = Vec::new();
        let root = command();
        commands(&root, "utter".into(), &mut all);
        all.push(("utter".into(), root));
        let mut problems = Vec::new();
        for (path, command) in &all {
            if command.get_name() != "help" && command.get_about().is_none() {
                problems.push(format!("{path}: no help"));
            }
            for arg in command.get_arguments() {
                let id = arg.get_id().as_str();
                if matches!(id, "help" | "version") || arg.is_hide_set() {
                    continue;
                }
                let help = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
                if help.is_empty() {
                    problems.push(format!("{path} {id}: no help"));
                }
                let shown =
                    !arg.get_default_values().is_empty() && !arg.is_hide_default_value_set();
                if shown && help.contains("[default:") {
                    problems.push(format!("{path} {id}: two defaults in its help"));
                }
            }
        }
        assert!(problems.is_empty(), "{}", problems.join("\n"));
    }

    #[test]
    fn the_mcp_help_lists_every_tool_the_server_has() {
        let root = command();
        let mcp = root.find_subcommand("mcp").unwrap();
        let about = mcp.get_about().unwrap().to_string();
        for tool in utter_server::mcp::TOOLS {
            assert!(about.contains(tool), "{tool} missing from: {about}");
        }
    }
}
