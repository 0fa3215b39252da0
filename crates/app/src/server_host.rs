//! Settings → Server: the local speech server (`utter serve`'s OpenAI audio
//! API, crates/server) running inside the app when the user turns it on —
//! loopback only, so no key is needed; started with the app and restarted
//! when its port changes.

use std::sync::Mutex;

use serde::Serialize;
use utter_core::settings::Settings;
use utter_models::ModelStore;
use utter_server::{BackgroundServer, ClientSeen, ServeConfig};

/// Where the server stands.
enum Phase {
    Off,
    Running {
        server: BackgroundServer,
        ports: Ports,
    },
    /// It could not start (the port is taken...): said in Settings, and
    /// tried again at the next save.
    Failed {
        message: String,
    },
}

/// The ports a running server was started with: the HTTP API's, and
/// Wyoming's when it speaks it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Ports {
    http: u16,
    wyoming: Option<u16>,
    /// The longest audio a request may hold (Settings → files' limit).
    max_audio_minutes: u32,
}

pub struct ServerHost(Mutex<Phase>);

impl Default for ServerHost {
    fn default() -> Self {
        Self(Mutex::new(Phase::Off))
    }
}

/// What Settings → Server shows.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct ServerStatus {
    /// `off`, `running` or `failed`.
    pub state: ServerState,
    /// Where clients point (`http://127.0.0.1:2022/v1`) while it runs.
    pub url: Option<String>,
    /// Where Wyoming clients point (`tcp://127.0.0.1:10300`) while it
    /// speaks Wyoming.
    pub wyoming_url: Option<String>,
    /// Why it is not running, in words.
    pub error: Option<String>,
    /// The last requests it answered, newest first.
    pub clients: Vec<ClientSeen>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub enum ServerState {
    Off,
    Running,
    Failed,
}

impl ServerHost {
    /// Brings the server in line with the settings: started, stopped, or
    /// restarted on a new port; a running one on the same port is kept.
    pub fn apply(&self, settings: &Settings, store: &ModelStore) {
        let mut phase = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let wanted = settings.server_enabled.then_some(Ports {
            http: settings.server_port,
            wyoming: settings.wyoming_enabled.then_some(settings.wyoming_port),
            max_audio_minutes: settings.max_audio_minutes,
        });
        if let (Some(wanted), Phase::Running { ports, .. }) = (wanted, &*phase) {
            if *ports == wanted {
                return;
            }
        }
        // The old one lets go of its ports before a new one binds.
        *phase = Phase::Off;
        let Some(ports) = wanted else {
            return;
        };
        let config = ServeConfig {
            port: ports.http,
            wyoming_port: ports.wyoming,
            audio_limits: utter_core::audio::AudioLimits::minutes(ports.max_audio_minutes),
            ..ServeConfig::default()
        };
        *phase = match BackgroundServer::start(config, store.clone()) {
            Ok(server) => {
                tracing::info!("local server at http://{}/v1", server.addr());
                if let Some(wyoming) = server.wyoming_addr() {
                    tracing::info!("Wyoming at tcp://{wyoming}");
                }
                Phase::Running { server, ports }
            }
            Err(e) => {
                tracing::warn!("the local server did not start: {e}");
                let taken = match ports.wyoming {
                    Some(w) => format!("{} or {w}", ports.http),
                    None => ports.http.to_string(),
                };
                Phase::Failed {
                    message: format!(
                        "{e}. Choose another port, or stop the program using {taken}."
                    ),
                }
            }
        };
    }

    pub fn status(&self) -> ServerStatus {
        let phase = self.0.lock().unwrap_or_else(|e| e.into_inner());
        match &*phase {
            Phase::Off => ServerStatus {
                state: ServerState::Off,
                url: None,
                wyoming_url: None,
                error: None,
                clients: Vec::new(),
            },
            Phase::Running { server, .. } => ServerStatus {
                state: ServerState::Running,
                url: Some(format!("http://{}/v1", server.addr())),
                wyoming_url: server.wyoming_addr().map(|a| format!("tcp://{a}")),
                error: None,
                clients: server.recent_clients(),
            },
            Phase::Failed { message } => ServerStatus {
                state: ServerState::Failed,
                url: None,
                wyoming_url: None,
                error: Some(message.clone()),
                clients: Vec::new(),
            },
        }
    }

    /// Stops the server (the app is quitting).
    pub fn stop(&self) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = Phase::Off;
    }
}
