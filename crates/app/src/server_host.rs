//! Settings → Server: the local speech server (`utter serve`'s OpenAI audio
//! API, crates/server) running inside the app when the user turns it on —
//! loopback only, so no key is needed; started with the app and restarted
//! when its port changes.

use std::sync::Mutex;

use serde::Serialize;
use utter_core::models::ModelStore;
use utter_core::settings::Settings;
use utter_server::{BackgroundServer, ClientSeen, ServeConfig};

/// Where the server stands.
enum Phase {
    Off,
    Running {
        server: BackgroundServer,
        port: u16,
    },
    /// It could not start (the port is taken...): said in Settings, and
    /// tried again at the next save.
    Failed {
        message: String,
    },
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
        let wanted = settings.server_enabled.then_some(settings.server_port);
        if let (Some(wanted), Phase::Running { port, .. }) = (wanted, &*phase) {
            if *port == wanted {
                return;
            }
        }
        // The old one lets go of its port before a new one binds.
        *phase = Phase::Off;
        let Some(port) = wanted else {
            return;
        };
        let config = ServeConfig {
            port,
            ..ServeConfig::default()
        };
        *phase = match BackgroundServer::start(config, store.clone()) {
            Ok(server) => {
                tracing::info!("local server at http://{}/v1", server.addr());
                Phase::Running { server, port }
            }
            Err(e) => {
                tracing::warn!("the local server did not start: {e}");
                Phase::Failed {
                    message: format!("{e}. Choose another port, or stop the program using {port}."),
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
                error: None,
                clients: Vec::new(),
            },
            Phase::Running { server, .. } => ServerStatus {
                state: ServerState::Running,
                url: Some(format!("http://{}/v1", server.addr())),
                error: None,
                clients: server.recent_clients(),
            },
            Phase::Failed { message } => ServerStatus {
                state: ServerState::Failed,
                url: None,
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
