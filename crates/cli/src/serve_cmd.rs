//! `utter serve`: the OpenAI audio API on this computer (crates/server).

use std::net::IpAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;
use utter_core::models::ModelStore;
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
}

fn api_key(args: &ServeArgs) -> Result<Option<String>> {
    if let Some(path) = &args.api_key_file {
        let key = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read the API key file {}", path.display()))?;
        return Ok(Some(key.trim().to_string()));
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
        wyoming_port: args.wyoming.then_some(args.wyoming_port),
        cors_origins: args.cors_origins.clone(),
        ..ServeConfig::default()
    };
    let keyed = config.api_key.is_some();
    let result = utter_server::serve_until_interrupted(config, store, |addr, wyoming| {
        eprintln!(
            "utter: OpenAI audio API at http://{addr}/v1 ({}); Ctrl-C stops",
            if keyed {
                "API key required"
            } else {
                "no key: loopback only"
            }
        );
        if let Some(wyoming) = wyoming {
            eprintln!("utter: Wyoming at tcp://{wyoming}");
        }
    });
    match result {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(e @ (ServeError::KeyRequired(_) | ServeError::EmptyKey)) => {
            crate::hints::print_error(&e);
            Ok(ExitCode::from(exit::USAGE))
        }
        Err(e) => Err(e.into()),
    }
}
