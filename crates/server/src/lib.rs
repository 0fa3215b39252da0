//! Utter as a local speech server: the OpenAI audio API over HTTP
//! (`utter serve`), on the core's file pipeline and engine workers.
//!
//! Safe by default: loopback only unless told otherwise, and then only with
//! an API key; bounded uploads, queue and read times.

pub mod access;
mod auth;
mod browsers;
mod clients;
mod error;
mod format;
mod jobs;
mod languages;
mod listen;
pub mod mcp;
mod models;
mod routes;
mod stream;
mod upload;
mod wyoming;

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use utter_core::audio::AudioLimits;
use utter_models::ModelStore;

pub use access::{parse_net, AccessError};
pub use browsers::{parse_origin, BadOrigin};
pub use clients::{ClientSeen, RecentClients};
pub use error::ApiError;
pub use ipnet::IpNet;

/// How the server runs.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    pub host: IpAddr,
    pub port: u16,
    /// Engine workers computing at once.
    pub workers: usize,
    /// Jobs that may wait for a worker; past them, 503 + Retry-After.
    pub queue: usize,
    /// Required as `Authorization: Bearer KEY` when set.
    pub api_key: Option<String>,
    /// Largest upload, in bytes (413 above it).
    pub max_upload_bytes: u64,
    /// Longest wait for a request's headers, and for each piece of its body.
    pub read_timeout: Duration,
    /// Connections served at once; more wait in the listen backlog.
    pub max_connections: usize,
    /// Also speak Wyoming on this port (same host).
    pub wyoming_port: Option<u16>,
    /// Web pages that may call the server (`--cors-origin`); requests
    /// from any other page are refused.
    pub cors_origins: Vec<String>,
    /// Who may connect to Wyoming (no keys in its protocol) besides this
    /// computer; required to serve it off loopback.
    pub wyoming_allow: Vec<ipnet::IpNet>,
    /// Wyoming connections served at once; more are closed at accept.
    pub max_wyoming_connections: usize,
    /// Folders MCP's `transcribe_file` may read over HTTP; none: the tool
    /// is off there (it stays on over stdio).
    pub mcp_folders: Vec<PathBuf>,
    /// The file holding the token `/mcp` asks of callers when there is no
    /// API key (made, 0600, when missing); `None`: `/mcp` is off without a key.
    pub mcp_token_file: Option<PathBuf>,
    /// How much audio one request may hold (`--max-audio-minutes`).
    pub audio_limits: AudioLimits,
    /// The longest a request's whole body may take to arrive, however
    /// steadily it trickles.
    pub body_deadline: Duration,
}

impl Default for ServeConfig {
    fn default() -> Self {
        Self {
            host: IpAddr::from([127, 0, 0, 1]),
            port: 2022,
            workers: 1,
            queue: 16,
            api_key: None,
            max_upload_bytes: 100_000_000,
            read_timeout: Duration::from_secs(30),
            max_connections: 512,
            wyoming_port: None,
            cors_origins: Vec::new(),
            wyoming_allow: Vec::new(),
            max_wyoming_connections: 64,
            mcp_folders: Vec::new(),
            mcp_token_file: Some(access::default_token_file()),
            audio_limits: AudioLimits::default(),
            body_deadline: Duration::from_secs(600),
        }
    }
}

/// Why the server did not start or stopped.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error(
        "refusing to listen on {0} without an API key: any computer that can reach it could use it"
    )]
    KeyRequired(IpAddr),
    #[error("the API key is empty")]
    EmptyKey,
    #[error("refusing to serve Wyoming on {0}: its protocol has no keys, so anyone who can reach it could use it; name who may connect with --wyoming-allow ADDRESS-OR-NETWORK (e.g. 192.168.1.0/24), or serve it on 127.0.0.1")]
    WyomingAllowRequired(IpAddr),
    #[error(transparent)]
    Access(#[from] AccessError),
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error(transparent)]
    BadOrigin(#[from] BadOrigin),
    #[error("cannot start the server's runtime: {0}")]
    Runtime(std::io::Error),
}

/// Checks what a config may do before anything starts (its origins are
/// checked where they are read, in [`Server::bind`]).
pub fn check(config: &ServeConfig) -> Result<(), ServeError> {
    match &config.api_key {
        Some(key) if key.trim().is_empty() => return Err(ServeError::EmptyKey),
        Some(key) => access::check_key(key)?,
        None if !config.host.is_loopback() => return Err(ServeError::KeyRequired(config.host)),
        None => {}
    }
    if config.wyoming_port.is_some()
        && !config.host.is_loopback()
        && config.wyoming_allow.is_empty()
    {
        return Err(ServeError::WyomingAllowRequired(config.host));
    }
    Ok(())
}

/// What each listener lets in, as the startup line says it.
pub struct AccessRules {
    pub http: String,
    pub mcp: String,
    pub wyoming: String,
}

/// A bound server, not yet serving (so callers can print the address, and
/// tests can bind port 0).
pub struct Server {
    listener: TcpListener,
    wyoming: Option<TcpListener>,
    state: Arc<routes::AppState>,
    config: ServeConfig,
    /// Which web pages may call it (`--cors-origin`), parsed at bind.
    browsers: browsers::BrowserPolicy,
    recent: Arc<RecentClients>,
    wyoming_allow: access::WyomingAllow,
}

impl Server {
    pub async fn bind(config: ServeConfig, store: ModelStore) -> Result<Self, ServeError> {
        check(&config)?;
        let browsers = browsers::BrowserPolicy::new(&config.cors_origins, config.host)?;
        let mcp_folders = access::AllowedFolders::new(&config.mcp_folders)?;
        // With a key, /mcp takes the key; without, the per-user token.
        let mcp_token = match (&config.api_key, &config.mcp_token_file) {
            (None, Some(file)) => Some(access::load_or_create_token(file)?),
            _ => None,
        };
        jobs::remove_orphaned_uploads();
        let vad_path = store
            .vad()
            .ok()
            .flatten()
            .map(|entry| store.path_of(&entry));
        if vad_path.is_none() {
            tracing::warn!("no VAD model installed: uploads are cut into fixed 30 s windows");
        }
        let addr = SocketAddr::new(config.host, config.port);
        let listener = TcpListener::bind(addr)
            .await
            .map_err(|source| ServeError::Bind { addr, source })?;
        let wyoming = match config.wyoming_port {
            Some(port) => {
                let addr = SocketAddr::new(config.host, port);
                Some(
                    TcpListener::bind(addr)
                        .await
                        .map_err(|source| ServeError::Bind { addr, source })?,
                )
            }
            None => None,
        };
        let state = Arc::new(routes::AppState {
            mcp: Arc::new(std::sync::Mutex::new(mcp::Session::new(store.clone()))),
            catalog: models::Catalog::new(store),
            jobs: Arc::new(jobs::Jobs::new(config.workers, config.queue, vad_path)),
            limits: upload::Limits {
                max_bytes: config.max_upload_bytes,
                read_timeout: config.read_timeout,
                body_deadline: config.body_deadline,
            },
            audio_limits: config.audio_limits,
            api_key: config.api_key.clone(),
            mcp_token,
            mcp_folders,
            ready: AtomicBool::new(false),
        });
        Ok(Self {
            listener,
            wyoming,
            state,
            browsers,
            recent: Arc::default(),
            wyoming_allow: access::WyomingAllow::new(config.wyoming_allow.clone()),
            config,
        })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.listener
            .local_addr()
            .unwrap_or_else(|_| SocketAddr::new(self.config.host, self.config.port))
    }

    /// The last requests answered (kept while it serves).
    pub fn recent_clients(&self) -> Arc<RecentClients> {
        self.recent.clone()
    }

    /// Where Wyoming is served, if it is.
    pub fn wyoming_addr(&self) -> Option<SocketAddr> {
        self.wyoming.as_ref().and_then(|l| l.local_addr().ok())
    }

    /// What each door lets in: the startup line says exactly this.
    pub fn access_rules(&self) -> AccessRules {
        let http = match (&self.config.api_key, self.config.host.is_loopback()) {
            (Some(_), _) => "API key required".to_string(),
            (None, _) => "no key: this computer only".to_string(),
        };
        let mcp = match (&self.config.api_key, &self.state.mcp_token) {
            (Some(_), _) => "the API key".to_string(),
            (None, Some(_)) => format!(
                "the token in {}",
                self.config
                    .mcp_token_file
                    .as_deref()
                    .unwrap_or(std::path::Path::new("?"))
                    .display()
            ),
            (None, None) => "off (no key or token)".to_string(),
        };
        let files = if self.state.mcp_folders.is_empty() {
            "transcribe_file off (no --mcp-folder)".to_string()
        } else {
            let folders: Vec<String> = self
                .state
                .mcp_folders
                .list()
                .iter()
                .map(|f| f.display().to_string())
                .collect();
            format!("transcribe_file reads only under {}", folders.join(", "))
        };
        AccessRules {
            http,
            mcp: format!("needs {mcp}; {files}"),
            wyoming: self.wyoming_allow.describe(),
        }
    }

    /// Serves until `shutdown` resolves. The default model loads in the
    /// background; `/health` says 503 until it has.
    pub async fn serve(
        self,
        shutdown: impl std::future::Future<Output = ()>,
    ) -> Result<(), ServeError> {
        let state = self.state.clone();
        tokio::spawn(async move {
            let warm = match state.catalog.default_model() {
                Ok(model) => state.jobs.prewarm(model.name, model.path).await,
                Err(e) => Err(e),
            };
            if let Err(e) = warm {
                tracing::warn!(
                    "the default model did not load ahead of requests: {}",
                    e.message
                );
            }
            state.ready.store(true, std::sync::atomic::Ordering::SeqCst);
        });
        if let Some(listener) = self.wyoming {
            // Wyoming has no keys: off loopback, only the listed networks.
            tokio::spawn(wyoming::serve(
                listener,
                self.state.clone(),
                self.wyoming_allow.clone(),
                self.config.max_wyoming_connections,
                self.config.read_timeout,
            ));
        }
        let router = routes::router(self.state.clone(), self.browsers, self.recent.clone());
        let connections = Arc::new(Semaphore::new(self.config.max_connections));
        let read_timeout = self.config.read_timeout;
        tokio::pin!(shutdown);
        let jobs = self.state.jobs.clone();
        // Every job in progress is told to stop at once (its decoder and
        // engine runs), so an ending server does not wait on them.
        let stopping = move || {
            jobs.cancel_all();
            Ok(())
        };
        loop {
            let permit = tokio::select! {
                permit = connections.clone().acquire_owned() => permit.expect("never closed"),
                () = &mut shutdown => return stopping(),
            };
            let (stream, _) = tokio::select! {
                accepted = self.listener.accept() => match accepted {
                    Ok(a) => a,
                    // Out of descriptors and the like: wait, don't spin.
                    Err(e) => {
                        tracing::warn!("accept failed: {e}");
                        tokio::time::sleep(Duration::from_millis(100)).await;
                        continue;
                    }
                },
                () = &mut shutdown => return stopping(),
            };
            let service = TowerToHyperService::new(router.clone());
            tokio::spawn(async move {
                let _permit = permit;
                let connection = hyper::server::conn::http1::Builder::new()
                    .timer(TokioTimer::new())
                    .header_read_timeout(read_timeout)
                    .serve_connection(TokioIo::new(stream), service);
                if let Err(e) = connection.await {
                    tracing::debug!("connection ended: {e}");
                }
            });
        }
    }
}

/// A server on a thread and runtime of its own, for the desktop app: bound
/// when made (so a port in use is an error at once), stopped when dropped
/// (its engine workers end with it).
pub struct BackgroundServer {
    addr: SocketAddr,
    wyoming: Option<SocketAddr>,
    recent: Arc<RecentClients>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl BackgroundServer {
    pub fn start(config: ServeConfig, store: ModelStore) -> Result<Self, ServeError> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("utter-server")
            .enable_all()
            .build()
            .map_err(ServeError::Runtime)?;
        let server = runtime.block_on(Server::bind(config, store))?;
        let addr = server.local_addr();
        let wyoming = server.wyoming_addr();
        let recent = server.recent_clients();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("utter-server".into())
            .spawn(move || {
                let result = runtime.block_on(server.serve(async {
                    let _ = stopped.await;
                }));
                if let Err(e) = result {
                    tracing::error!("the local server stopped: {e}");
                }
                // Requests still in flight end here, their jobs cancelled.
                runtime.shutdown_timeout(Duration::from_secs(2));
            })
            .map_err(ServeError::Runtime)?;
        Ok(Self {
            addr,
            wyoming,
            recent,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Where it speaks Wyoming, when it does.
    pub fn wyoming_addr(&self) -> Option<SocketAddr> {
        self.wyoming
    }

    /// The last requests answered, newest first.
    pub fn recent_clients(&self) -> Vec<ClientSeen> {
        self.recent.list()
    }
}

impl Drop for BackgroundServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// How long an ending server waits for its jobs to stop before it leaves
/// them (their engine workers end with the process).
pub const SHUTDOWN_GRACE: Duration = Duration::from_millis(1500);

/// Binds and serves on a runtime of its own until Ctrl-C or SIGTERM;
/// `on_listening` is told the address and each door's rule once bound.
/// For front ends without a runtime (the CLI). Returns within
/// [`SHUTDOWN_GRACE`] of the signal, whatever its jobs are doing.
pub fn serve_until_interrupted(
    config: ServeConfig,
    store: ModelStore,
    on_listening: impl FnOnce(SocketAddr, Option<SocketAddr>, AccessRules),
) -> Result<(), ServeError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        // Request handling is light: the engines work in their own processes.
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(ServeError::Runtime)?;
    let result = runtime.block_on(async move {
        let server = Server::bind(config, store).await?;
        on_listening(
            server.local_addr(),
            server.wyoming_addr(),
            server.access_rules(),
        );
        server.serve(interrupted()).await
    });
    // A transcription in a blocking thread would hold a plain drop of the
    // runtime until it ends (SIGTERM was ignored while a job ran).
    runtime.shutdown_timeout(SHUTDOWN_GRACE);
    result
}

async fn interrupted() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}
