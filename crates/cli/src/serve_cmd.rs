//! `utter serve`: the OpenAI audio API on this computer (crates/server).

use std::net::IpAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;
use utter_models::ModelStore;
use utter_server::{ServeConfig, ServeError};

use crate::exit;

#[derive(Args)]
pub struct ServeArgs {
    /// Address to listen on; anything but loopback requires an API key
    #[arg(long, default_value = "127.0.0.1")]
    host: IpAddr,
    /// Port to listen on (2022: where VoiceMode and whisper.cpp users point)
    #[arg(long, default_value_t = utter_core::settings::defaults::SERVER_PORT)]
    port: u16,
    /// Engine workers transcribing at once (each holds its own copy of the model)
    #[arg(long, default_value_t = 1)]
    workers: usize,
    /// Requests that may wait for a worker; more get 503 with Retry-After
    #[arg(long, default_value_t = 16)]
    queue: usize,
    /// File holding the API key clients must send as `Authorization: Bearer KEY`
    /// (or set UTTER_API_KEY); required with a non-loopback --host
    #[arg(long, value_name = "FILE")]
    api_key_file: Option<PathBuf>,
    /// Largest upload in MB
    #[arg(long, default_value_t = 100)]
    max_upload_mb: u64,
    /// Seconds a client may take to send its headers, or to send each piece of its body
    #[arg(long, default_value_t = 30)]
    read_timeout_s: u64,
    /// Seconds a client may take to send a whole request body, however steadily it trickles
    #[arg(long, default_value_t = 600)]
    body_deadline_s: u64,
    /// Also serve Wyoming (Home Assistant's voice protocol) on --wyoming-port
    #[arg(long)]
    wyoming: bool,
    /// Wyoming's TCP port
    #[arg(long, default_value_t = 10300)]
    wyoming_port: u16,
    /// A web page's origin that may call the server and read its answers, e.g.
    /// https://app.example.com (repeatable); requests from any other page are refused
    #[arg(long = "cors-origin", value_name = "ORIGIN", value_parser = utter_server::parse_origin)]
    cors_origins: Vec<String>,
    /// Who may connect to Wyoming besides this computer, when --host is not loopback: an
    /// address or a network such as 192.168.1.0/24 (repeatable). Wyoming has no keys
    #[arg(long = "wyoming-allow", value_name = "NETWORK", value_parser = utter_server::parse_net)]
    wyoming_allow: Vec<utter_server::IpNet>,
    /// A folder whose files MCP's transcribe_file may read over HTTP (repeatable); without
    /// one the tool is off at /mcp (`utter mcp` over stdio reads any file you can)
    #[arg(long = "mcp-folder", value_name = "DIR")]
    mcp_folders: Vec<PathBuf>,
    /// The longest audio one request may hold, in minutes
    #[arg(long, default_value_t = utter_core::audio::limits::DEFAULT_MAX_AUDIO_MINUTES,
          value_parser = clap::value_parser!(u32).range(1..=i64::from(utter_core::settings::MAX_AUDIO_MINUTES_CEILING)))]
    max_audio_minutes: u32,
}

/// The key from --api-key-file (a file only you can read) or UTTER_API_KEY.
fn api_key(args: &ServeArgs) -> Result<Option<String>> {
    if let Some(path) = &args.api_key_file {
        let key =
            utter_server::access::read_private_file(path).context("the API key file is refused")?;
        return Ok(Some(key));
    }
    Ok(std::env::var("UTTER_API_KEY").ok())
}

pub fn run(store: ModelStore, args: ServeArgs) -> Result<ExitCode> {
    let config = ServeConfig {
        host: args.host,
        port: args.port,
        workers: args.workers,
        queue: args.queue,
        api_key: api_key(&args)?,
        max_upload_bytes: args.max_upload_mb * 1_000_000,
        read_timeout: Duration::from_secs(args.read_timeout_s.max(1)),
        body_deadline: Duration::from_secs(args.body_deadline_s.max(1)),
        wyoming_port: args.wyoming.then_some(args.wyoming_port),
        cors_origins: args.cors_origins.clone(),
        wyoming_allow: args.wyoming_allow.clone(),
        mcp_folders: args.mcp_folders.clone(),
        audio_limits: utter_core::audio::AudioLimits::minutes(args.max_audio_minutes),
        ..ServeConfig::default()
    };
    if !args.wyoming_allow.is_empty() && !args.host.is_loopback() {
        eprintln!(
            "warning: Wyoming has no keys: every computer in {} can transcribe through it",
            args.wyoming_allow
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let result = utter_server::serve_until_interrupted(config, store, |addr, wyoming, rules| {
        eprintln!(
            "utter: OpenAI audio API at http://{addr}/v1 ({}); Ctrl-C stops",
            rules.http
        );
        eprintln!("utter: MCP at http://{addr}/mcp ({})", rules.mcp);
        if let Some(wyoming) = wyoming {
            eprintln!("utter: Wyoming at tcp://{wyoming} ({})", rules.wyoming);
        }
    });
    match result {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(
            e @ (ServeError::KeyRequired(_)
            | ServeError::EmptyKey
            | ServeError::WyomingAllowRequired(_)
            | ServeError::Access(_)),
        ) => {
            crate::hints::print_error(&e);
            Ok(ExitCode::from(exit::USAGE))
        }
        Err(e) => Err(e.into()),
    }
}
