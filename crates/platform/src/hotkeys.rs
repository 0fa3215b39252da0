//! Global hotkeys through the `global-hotkey` crate, owned by the main thread.
//!
//! global-hotkey's README sets the thread rules this module follows:
//! - Windows: "a win32 event loop must be running on the thread" that created
//!   the manager (it registers on a hidden window of that thread);
//! - macOS: "an event loop must be running on the main thread so you also need
//!   to create the global hotkey manager on the main thread";
//! - Linux X11: the manager runs its own X connection thread (any thread works),
//!   but it swallows a failed connection, so we check the X server first.
//!
//! So the manager lives in a thread-local of the main thread and is only ever
//! touched through [`MainThread`] jobs. Events go from global-hotkey's global
//! channel to whichever dictation service is bound, as [`Control::Key`].
//! On Wayland, X11 grabs reach only XWayland windows: we refuse to pretend and
//! say what works instead (`utter ptt` from compositor key bindings).

// clippy calls these already-`const` initialisers non-const where std has no native
// thread locals (windows-gnu): rust-lang/rust-clippy#17566.
#![cfg_attr(
    all(windows, target_env = "gnu"),
    allow(clippy::missing_const_for_thread_local)
)]

use std::cell::RefCell;
use std::str::FromStr;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;
pub use utter_ports::keys::{NoRecordingKeys, RecordingKeys};

use crossbeam_channel::Sender;
use global_hotkey::hotkey::HotKey;
use global_hotkey::{GlobalHotKeyEvent, GlobalHotKeyManager, HotKeyState};

use super::desktop::DesktopSession;
use super::{MainThread, MainThreadError};
use crate::control::{Control, TriggerKey, TriggerMode};

#[derive(Debug, thiserror::Error)]
pub enum HotkeyError {
    #[error(transparent)]
    Parse(#[from] BadHotkey),
    #[error("cannot register hotkey `{name}`: it is already taken by another application (or another Utter dictation); choose another hotkey")]
    Taken { name: String },
    #[error("global hotkeys are unavailable: {0}")]
    Unavailable(#[from] NoHotkeys),
}

/// A hotkey that does not parse (Utter's grammar, utter-ports').
pub use utter_ports::hotkey::BadHotkey;
use utter_ports::hotkey::Hotkey;

/// Why this session has no global hotkeys. The messages say what is wrong;
/// each front end adds what its user can do instead.
#[derive(Debug, thiserror::Error)]
pub enum NoHotkeys {
    #[error(
        "this is a Wayland session{}, where apps cannot grab keys themselves (X11 grabs would \
         only see XWayland windows){}",
        compositor.as_deref().map(|c| format!(" ({c})")).unwrap_or_default(),
        portal.as_deref().map(|e| format!(" and the GlobalShortcuts portal did not help: {e}")).unwrap_or_default()
    )]
    Wayland {
        compositor: Option<String>,
        /// Why the portal could not bind the shortcut, once it was tried.
        portal: Option<String>,
    },
    #[error("no display (DISPLAY and WAYLAND_DISPLAY are unset)")]
    Headless,
    #[error("cannot connect to the X server (DISPLAY={display}): {source}")]
    XServer {
        display: String,
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    #[error("the X server has no XKB extension, which hotkeys need")]
    NoXkb,
    #[error("the X server's XKB extension failed: {0}")]
    Xkb(Box<dyn std::error::Error + Send + Sync>),
    #[error("`{name}`: {source}")]
    Os {
        name: String,
        source: global_hotkey::Error,
    },
    #[error("{0}")]
    MainThread(#[from] MainThreadError),
}

/// Parses a hotkey like `ctrl+shift+space`, with a message that says what is accepted.
pub fn parse_hotkey(keys: &str) -> Result<HotKey, BadHotkey> {
    Hotkey::parse(keys).map(os_hotkey)
}

/// The hotkey library's form of one of ours.
fn os_hotkey(hotkey: Hotkey) -> HotKey {
    use global_hotkey::hotkey::{Code, Modifiers};
    let code = Code::from_str(hotkey.key)
        .expect("utter-ports' KEYS holds W3C code names (test: our_key_names_are_the_librarys)");
    let mut mods = Modifiers::empty();
    for (held, m) in [
        (hotkey.mods.alt, Modifiers::ALT),
        (hotkey.mods.control, Modifiers::CONTROL),
        (hotkey.mods.shift, Modifiers::SHIFT),
        (hotkey.mods.meta, Modifiers::META),
    ] {
        if held {
            mods |= m;
        }
    }
    HotKey::new(Some(mods), code)
}

/// The keys of one dictation service, parsed.
#[derive(Debug, Clone)]
pub struct Bindings {
    main: (HotKey, String),
    paste_last: Option<(HotKey, String)>,
    /// AI command mode's key, bound only while rewriting is on.
    command: Option<(HotKey, String)>,
    /// The app's meeting shortcut (start/stop a meeting).
    meeting: Option<(HotKey, String)>,
    /// Each recording-time key also with the main hotkey's modifiers added,
    /// because in push-to-talk they are pressed while the hotkey is held.
    latch: [HotKey; 2],
    cancel: [HotKey; 2],
    mode: TriggerMode,
}

impl Bindings {
    pub fn parse(
        hotkey: &str,
        latch: &str,
        cancel: &str,
        paste_last: Option<&str>,
        mode: TriggerMode,
    ) -> Result<Self, HotkeyError> {
        let parse = |s: &str| parse_hotkey(s).map_err(HotkeyError::Parse);
        let main = parse(hotkey)?;
        let held = |k: HotKey| HotKey::new(Some(k.mods | main.mods), k.key);
        let latch = parse(latch)?;
        let cancel = parse(cancel)?;
        let paste_last = optional_key(paste_last)?;
        Ok(Self {
            main: (main, hotkey.to_string()),
            paste_last,
            command: None,
            meeting: None,
            latch: [latch, held(latch)],
            cancel: [cancel, held(cancel)],
            mode,
        })
    }

    /// Also binds AI command mode's key (held to speak an instruction).
    pub fn with_command(mut self, key: Option<&str>) -> Result<Self, HotkeyError> {
        self.command = optional_key(key)?;
        Ok(self)
    }

    /// Also binds the meeting shortcut (starts or stops a meeting).
    pub fn with_meeting(mut self, key: Option<&str>) -> Result<Self, HotkeyError> {
        self.meeting = optional_key(key)?;
        Ok(self)
    }

    /// Which of our keys a global-hotkey id is.
    pub fn which(&self, id: u32) -> Option<TriggerKey> {
        if id == self.main.0.id() {
            Some(TriggerKey::Main)
        } else if self.latch.iter().any(|k| k.id() == id) {
            Some(TriggerKey::Latch)
        } else if self.cancel.iter().any(|k| k.id() == id) {
            Some(TriggerKey::Cancel)
        } else if self.paste_last.as_ref().is_some_and(|k| k.0.id() == id) {
            Some(TriggerKey::PasteLast)
        } else if self.command.as_ref().is_some_and(|k| k.0.id() == id) {
            Some(TriggerKey::Command)
        } else if self.meeting.as_ref().is_some_and(|k| k.0.id() == id) {
            Some(TriggerKey::Meeting)
        } else {
            None
        }
    }

    fn always_on(&self) -> Vec<(HotKey, String)> {
        std::iter::once(self.main.clone())
            .chain(self.paste_last.clone())
            .chain(self.command.clone())
            .chain(self.meeting.clone())
            .collect()
    }

    /// Latch and cancel are grabbed only while recording, so Escape keeps
    /// working normally in other apps the rest of the time.
    fn recording_keys(&self) -> Vec<HotKey> {
        let mut keys = self.cancel.to_vec();
        if self.mode == TriggerMode::PushToTalk {
            keys.extend(self.latch);
        }
        keys.dedup();
        keys
    }
}

/// An optional key, parsed and kept with the name it was given as.
fn optional_key(name: Option<&str>) -> Result<Option<(HotKey, String)>, HotkeyError> {
    name.map(|name| {
        let key = parse_hotkey(name).map_err(HotkeyError::Parse)?;
        Ok((key, name.to_string()))
    })
    .transpose()
}

/// Where global-hotkey events go: the bound service's keys and channel.
#[derive(Default)]
struct Route {
    bindings: Option<Bindings>,
    control: Option<Sender<Control>>,
}

fn route() -> &'static Mutex<Route> {
    static ROUTE: OnceLock<Mutex<Route>> = OnceLock::new();
    ROUTE.get_or_init(|| {
        // global-hotkey has one process-wide event channel; one thread forwards it.
        std::thread::Builder::new()
            .name("utter-hotkeys".into())
            .spawn(|| {
                for event in GlobalHotKeyEvent::receiver().iter() {
                    forward(event);
                }
            })
            .expect("spawn the hotkey forwarder");
        Mutex::new(Route::default())
    })
}

fn forward(event: GlobalHotKeyEvent) {
    tracing::debug!("hotkey event {event:?}");
    let route = route().lock().unwrap_or_else(|e| e.into_inner());
    if let (Some(bindings), Some(control)) = (&route.bindings, &route.control) {
        if let Some(key) = bindings.which(event.id) {
            let _ = control.send(Control::Key {
                key,
                pressed: event.state == HotKeyState::Pressed,
            });
        }
    }
}

thread_local! {
    /// The manager and what it holds: only ever touched on the main thread.
    static MANAGER: RefCell<Option<GlobalHotKeyManager>> = const { RefCell::new(None) };
    static REGISTERED: RefCell<Vec<HotKey>> = const { RefCell::new(Vec::new()) };
    /// Linux: our own X connection, open for as long as the manager lives.
    #[cfg(desktop_linux)]
    static X_GUARD: RefCell<Option<x11rb::rust_connection::RustConnection>> =
        const { RefCell::new(None) };
}

/// Runs `f` with the manager; call on the main thread only.
fn with_manager<R>(f: impl FnOnce(&GlobalHotKeyManager) -> R) -> Result<R, NoHotkeys> {
    MANAGER.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            #[cfg(desktop_linux)]
            if std::env::var_os("DISPLAY").is_some() {
                hold_x_connection()?;
            }
            let manager = GlobalHotKeyManager::new().map_err(|source| NoHotkeys::Os {
                name: "manager".into(),
                source,
            })?;
            *slot = Some(manager);
        }
        Ok(f(slot.as_ref().expect("just created")))
    })
}

/// global-hotkey's X11 thread opens its own connection and, when that fails,
/// dies quietly: `register` then returns Ok and no key ever fires. So we check
/// what it needs (the server, XKB) first, and keep our connection open: an X
/// server resets when its last client leaves (Xvfb, a bare `startx`), and a
/// connection attempted during the reset is refused.
#[cfg(desktop_linux)]
fn hold_x_connection() -> Result<(), NoHotkeys> {
    use x11rb::protocol::xkb::ConnectionExt as _;
    let (conn, _) = connect_x_server()?;
    let xkb = conn
        .xkb_use_extension(1, 0)
        .map_err(x11rb::errors::ReplyError::from)
        .and_then(|cookie| cookie.reply());
    match xkb {
        Ok(reply) if reply.supported => {}
        Ok(_) => return Err(NoHotkeys::NoXkb),
        Err(e) => return Err(NoHotkeys::Xkb(e.into())),
    }
    X_GUARD.with(|guard| *guard.borrow_mut() = Some(conn));
    Ok(())
}

fn register_on_main(key: HotKey) -> Result<(), global_hotkey::Error> {
    with_manager(|m| {
        m.register(key)?;
        REGISTERED.with(|r| r.borrow_mut().push(key));
        Ok(())
    })
    .unwrap_or_else(|e| {
        Err(global_hotkey::Error::OsError(std::io::Error::other(
            e.to_string(),
        )))
    })
}

fn unregister_all_on_main() {
    let keys: Vec<HotKey> = REGISTERED.with(|r| r.borrow_mut().drain(..).collect());
    // No manager yet means nothing registered: creating one here would start
    // global-hotkey's X11 thread in a session that has no X server.
    MANAGER.with(|cell| {
        if let Some(m) = cell.borrow().as_ref() {
            for k in keys {
                if let Err(e) = m.unregister(k) {
                    tracing::debug!("unregister {k:?}: {e}");
                }
            }
        }
    });
}

/// The process's global hotkeys, driven from any thread.
#[derive(Clone)]
pub struct Hotkeys {
    main: MainThread,
    session: DesktopSession,
    /// Wayland: the shortcut bound through the GlobalShortcuts portal.
    #[cfg(desktop_linux)]
    portal: std::sync::Arc<Mutex<Option<super::portal::PortalShortcut>>>,
}

impl Hotkeys {
    pub fn new(main: MainThread) -> Self {
        Self {
            main,
            session: DesktopSession::detect(),
            #[cfg(desktop_linux)]
            portal: Default::default(),
        }
    }

    /// Wayland: the hotkey through the GlobalShortcuts portal, or why not.
    #[cfg(desktop_linux)]
    fn bind_portal(
        &self,
        bindings: &Bindings,
        control: Sender<Control>,
    ) -> Result<(), HotkeyError> {
        let trigger = super::portal::trigger_for(&bindings.main.1);
        match super::portal::PortalShortcut::bind(&trigger, control) {
            Ok(shortcut) => {
                *self.portal.lock().unwrap_or_else(|e| e.into_inner()) = Some(shortcut);
                Ok(())
            }
            Err(e) => Err(HotkeyError::Unavailable(NoHotkeys::Wayland {
                compositor: self.session.compositor().map(str::to_owned),
                portal: Some(e.to_string()),
            })),
        }
    }

    /// Whether this session can have global hotkeys at all, and if not, why
    /// and what to do instead. Connects to the X server to check it, so it
    /// is for `utter doctor` and status pages, not for binding.
    pub fn availability(session: &DesktopSession) -> Result<(), NoHotkeys> {
        Self::session_allows(session)?;
        match session {
            DesktopSession::X11 => check_x_server(),
            _ => Ok(()),
        }
    }

    /// What the kind of session allows, without connecting to anything.
    /// Binding opens (and keeps) its own X connection: a check connection
    /// closed just before it can make the X server reset under it.
    fn session_allows(session: &DesktopSession) -> Result<(), NoHotkeys> {
        match session {
            DesktopSession::Wayland { compositor, .. } => Err(NoHotkeys::Wayland {
                compositor: compositor.clone(),
                portal: None,
            }),
            DesktopSession::Headless => Err(NoHotkeys::Headless),
            DesktopSession::X11 | DesktopSession::MacOs | DesktopSession::Windows => Ok(()),
        }
    }

    /// Registers `bindings` (replacing any earlier ones) and sends their
    /// presses and releases to `control`. Blocks until the main thread has
    /// done it; never call from the main thread.
    pub fn bind(&self, bindings: &Bindings, control: Sender<Control>) -> Result<(), HotkeyError> {
        self.unbind();
        #[cfg(desktop_linux)]
        if self.session.is_wayland() {
            return self.bind_portal(bindings, control);
        }
        Self::session_allows(&self.session)?;
        for (key, name) in bindings.always_on() {
            // A previous instance that just exited may still hold the grab until
            // the X server notices; give it a moment before calling the key taken.
            let mut result = self.main.call(move || register_on_main(key));
            for _ in 0..10 {
                if matches!(result, Ok(Ok(()))) {
                    break;
                }
                std::thread::sleep(Duration::from_millis(200));
                result = self.main.call(move || register_on_main(key));
            }
            match result {
                Ok(Ok(())) => {}
                Ok(Err(
                    global_hotkey::Error::AlreadyRegistered(_)
                    | global_hotkey::Error::FailedToRegister(_),
                )) => {
                    self.unbind();
                    return Err(HotkeyError::Taken { name });
                }
                Ok(Err(source)) => {
                    self.unbind();
                    return Err(NoHotkeys::Os { name, source }.into());
                }
                Err(e) => return Err(NoHotkeys::MainThread(e).into()),
            }
        }
        let mut route = route().lock().unwrap_or_else(|e| e.into_inner());
        route.bindings = Some(bindings.clone());
        route.control = Some(control);
        Ok(())
    }

    /// Releases every key this process holds; events stop flowing. Does not
    /// wait for the main thread (it may be waiting for us, at exit).
    pub fn unbind(&self) {
        #[cfg(desktop_linux)]
        self.portal.lock().unwrap_or_else(|e| e.into_inner()).take();
        {
            let mut route = route().lock().unwrap_or_else(|e| e.into_inner());
            route.bindings = None;
            route.control = None;
        }
        self.main.spawn(unregister_all_on_main);
    }

    /// The recording-time keys of `bindings`, for the service.
    pub fn recording_keys(&self, bindings: &Bindings) -> Box<dyn RecordingKeys> {
        if self.session.is_wayland() {
            // The portal binds one shortcut; latch and cancel come from `utter ptt`.
            return Box::new(NoRecordingKeys);
        }
        Box::new(MainThreadGrabs {
            main: self.main.clone(),
            keys: bindings.recording_keys(),
            on: false,
        })
    }
}

struct MainThreadGrabs {
    main: MainThread,
    keys: Vec<HotKey>,
    on: bool,
}

impl RecordingKeys for MainThreadGrabs {
    fn set_recording(&mut self, on: bool) {
        if on == self.on {
            return;
        }
        self.on = on;
        let keys = self.keys.clone();
        let grab = move || {
            tracing::debug!(
                "recording keys {}: {keys:?}",
                if on { "grabbed" } else { "released" }
            );
            let _ = with_manager(|m| {
                for k in keys {
                    let result = if on { m.register(k) } else { m.unregister(k) };
                    if let Err(e) = result {
                        tracing::warn!("hotkey {k:?}: {e}");
                    }
                }
            });
        };
        if on {
            // Wait until the keys are grabbed: the service announces the recording
            // next, and a latch or cancel pressed right after must reach us.
            if let Err(e) = self.main.call(grab) {
                tracing::warn!("cannot grab the recording keys: {e}");
            }
        } else {
            // Never wait to release: at exit the main thread may be waiting for us.
            self.main.spawn(grab);
        }
    }
}

#[cfg(desktop_linux)]
fn connect_x_server() -> Result<(x11rb::rust_connection::RustConnection, usize), NoHotkeys> {
    x11rb::connect(None).map_err(|source| NoHotkeys::XServer {
        display: std::env::var("DISPLAY").unwrap_or_default(),
        source: source.into(),
    })
}

#[cfg(desktop_linux)]
fn check_x_server() -> Result<(), NoHotkeys> {
    connect_x_server().map(|_| ())
}

#[cfg(not(desktop_linux))]
fn check_x_server() -> Result<(), NoHotkeys> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Utter's grammar (utter-ports) decides what a hotkey is; the hotkey
    /// library grabs it. Every name and short form of ours must be the key
    /// the library knows by that name.
    #[test]
    fn our_key_names_are_the_librarys() {
        use global_hotkey::hotkey::Code;
        for (code, aliases) in utter_ports::hotkey::KEYS {
            let ours = Code::from_str(code).unwrap_or_else(|_| panic!("{code} is no W3C code"));
            for name in std::iter::once(code).chain(aliases.iter()) {
                let theirs = HotKey::from_str(name).unwrap_or_else(|e| panic!("{name}: {e}"));
                assert_eq!(theirs.key, ours, "{name}");
                assert_eq!(parse_hotkey(name).unwrap(), theirs, "{name}");
            }
        }
        for keys in [
            "ctrl+shift+space",
            "Alt+F9",
            "super+d",
            "CmdOrCtrl+Shift+K",
            "shift+num5",
        ] {
            assert_eq!(
                parse_hotkey(keys).unwrap(),
                HotKey::from_str(keys).unwrap(),
                "{keys}"
            );
        }
    }

    #[test]
    fn hotkeys_parse_and_bad_ones_explain() {
        assert!(parse_hotkey("ctrl+shift+space").is_ok());
        assert!(parse_hotkey("alt+F9").is_ok());
        assert_ne!(
            parse_hotkey("ctrl+shift+space").unwrap(),
            parse_hotkey("ctrl+space").unwrap()
        );
        let err = parse_hotkey("ctrl+banana").unwrap_err().to_string();
        assert!(
            err.contains("cannot parse hotkey `ctrl+banana`")
                && err.contains("e.g. ctrl+shift+space"),
            "{err}"
        );
        assert!(parse_hotkey("").is_err());
    }

    #[test]
    fn bindings_map_ids_to_keys_and_grab_latch_only_in_push_to_talk() {
        let b = Bindings::parse(
            "ctrl+shift+space",
            "ctrl+shift+l",
            "escape",
            Some("alt+f9"),
            TriggerMode::PushToTalk,
        )
        .unwrap();
        let id = |s: &str| parse_hotkey(s).unwrap().id();
        assert_eq!(b.which(id("ctrl+shift+space")), Some(TriggerKey::Main));
        assert_eq!(b.which(id("escape")), Some(TriggerKey::Cancel));
        // Escape pressed while ctrl+shift are still held for push-to-talk.
        assert_eq!(b.which(id("ctrl+shift+escape")), Some(TriggerKey::Cancel));
        assert_eq!(b.which(id("alt+f9")), Some(TriggerKey::PasteLast));
        assert_eq!(b.which(id("ctrl+alt+x")), None);
        assert_eq!(
            b.recording_keys().len(),
            3,
            "escape, ctrl+shift+escape, ctrl+shift+l"
        );

        let toggle = Bindings::parse(
            "ctrl+shift+space",
            "ctrl+shift+l",
            "escape",
            None,
            TriggerMode::Toggle,
        )
        .unwrap();
        assert_eq!(toggle.recording_keys().len(), 2, "no latch in toggle mode");
        assert!(matches!(
            Bindings::parse("ctrl+banana", "l", "escape", None, TriggerMode::Toggle),
            Err(HotkeyError::Parse(BadHotkey { keys, .. })) if keys == "ctrl+banana"
        ));
        let said = parse_hotkey("ctrl+banana").unwrap_err().to_string();
        assert!(
            said.contains("`banana` is not a key name Utter knows"),
            "{said}"
        );
        assert!(!said.contains("report"), "{said}");
        let said = parse_hotkey("ctrl++a").unwrap_err().to_string();
        assert!(
            said.contains("nothing on one side") || said.contains("one key"),
            "{said}"
        );
    }

    #[test]
    fn wayland_and_headless_say_why_not() {
        let wayland = DesktopSession::Wayland {
            compositor: Some("sway".into()),
            xwayland: true,
        };
        let why = Hotkeys::availability(&wayland).unwrap_err().to_string();
        assert!(
            why.contains("Wayland session (sway)") && why.contains("cannot grab keys"),
            "{why}"
        );
        assert!(
            !why.contains("utter "),
            "what to do instead is each front end's: {why}"
        );
        assert!(matches!(
            Hotkeys::availability(&DesktopSession::Headless),
            Err(NoHotkeys::Headless)
        ));
    }
}
