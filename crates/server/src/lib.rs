//! Utter as a local speech server: the OpenAI audio API over HTTP
//! (`utter serve`), on the core's file pipeline and engine workers.
//!
//! Safe by default: loopback only unless told otherwise, and then only with
//! an API key; bounded uploads, queue and read times.

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
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use utter_core::models::ModelStore;

pub use browsers::{parse_origin, BadOrigin};
pub use clients::{ClientSeen, RecentClients};
pub use error::ApiError;

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
        Some(key) if key.trim().is_empty() => Err(ServeError::EmptyKey),
        None if !config.host.is_loopback() => Err(ServeError::KeyRequired(config.host)),
        _ => Ok(()),
    }
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
}

impl Server {
    pub async fn bind(config: ServeConfig, store: ModelStore) -> Result<Self, ServeError> {
        check(&config)?;
        let browsers = browsers::BrowserPolicy::new(&config.cors_origins, config.host)?;
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
            },
            api_key: config.api_key.clone(),
            ready: AtomicBool::new(false),
        });
        Ok(Self {
            listener,
            wyoming,
            state,
            config,
            browsers,
            recent: Arc::default(),
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
            // Wyoming has no keys: it is served on loopback unless the user
            // chose a host, which then also required an HTTP key.
            tokio::spawn(wyoming::serve(listener, self.state.clone()));
        }
        let router = routes::router(self.state.clone(), self.browsers, self.recent.clone());
        let connections = Arc::new(Semaphore::new(self.config.max_connections));
        let read_timeout = self.config.read_timeout;
        tokio::pin!(shutdown);
        loop {
            let permit = tokio::select! {
                permit = connections.clone().acquire_owned() => permit.expect("never closed"),
                () = &mut shutdown => return Ok(()),
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
                () = &mut shutdown => return Ok(()),
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

/// Binds and serves on a runtime of its own until Ctrl-C or SIGTERM;
/// `on_listening` is told the address once bound. For front ends without
/// a runtime (the CLI).
pub fn serve_until_interrupted(
    config: ServeConfig,
    store: ModelStore,
    on_listening: impl FnOnce(SocketAddr, Option<SocketAddr>),
) -> Result<(), ServeError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        // Request handling is light: the engines work in their own processes.
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(ServeError::Runtime)?;
    runtime.block_on(async move {
        let server = Server::bind(config, store).await?;
        on_listening(server.local_addr(), server.wyoming_addr());
        server.serve(interrupted()).await
    })
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
