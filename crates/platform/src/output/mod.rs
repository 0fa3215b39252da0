//! Delivering text to the user through a [`TextSink`]: paste into the focused
//! app (clipboard + simulated paste keystroke, previous clipboard restored
//! once the paste has been consumed), type it, leave it on the clipboard, or
//! print it. [`open_sink`] picks the sink that can work in this session and
//! says so when it has to fall back.

#[cfg(desktop_linux)]
pub mod ei_keys;
mod paste_watch;
pub mod selection;
mod sinks;
#[cfg(desktop_linux)]
mod wayland_clipboard;
#[cfg(desktop_linux)]
mod wayland_keys;
#[cfg(desktop_linux)]
mod x11_clipboard;
#[cfg(desktop_linux)]
mod x11_layout;

pub use sinks::{ClipboardSink, PasteSink, StdoutSink, TypeSink};
pub use utter_ports::output::{
    Delivered, Delivery, EditKey, Outcome, OutputConfig, OutputMethod, PasteFallback, PasteKeys,
    Submit, TextSink,
};
pub use utter_ports::DesktopError;

use super::desktop::DesktopSession;
use super::{MainThread, MainThreadError};

/// What to do when key presses are refused: only macOS asks for a permission.
#[cfg(target_os = "macos")]
const INPUT_PERMISSION_HINT: &str =
    " (allow Utter in System Settings → Privacy & Security → Accessibility)";
#[cfg(not(target_os = "macos"))]
const INPUT_PERMISSION_HINT: &str = "";

#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    #[error("clipboard unavailable: {0}")]
    Clipboard(arboard::Error),
    #[error("clipboard unavailable: {0}")]
    ClipboardOwner(&'static str),
    #[error("cannot simulate key presses: {0}{hint}", hint = INPUT_PERMISSION_HINT)]
    Input(InputError),
    #[error(transparent)]
    Unavailable(#[from] OutputUnavailable),
}

impl OutputError {
    /// The message without the "cannot simulate key presses" prefix, to nest in another.
    pub(crate) fn reason(&self) -> String {
        match self {
            OutputError::Input(e) => e.to_string(),
            other => other.to_string(),
        }
    }
}

/// The port's plain error: the same words, no OS types.
impl From<OutputError> for DesktopError {
    fn from(e: OutputError) -> Self {
        let message = e.to_string();
        match e {
            OutputError::Clipboard(_) | OutputError::ClipboardOwner(_) => Self::Clipboard(message),
            OutputError::Input(_) => Self::Keys(message),
            OutputError::Unavailable(_) => Self::Unavailable(message),
        }
    }
}

/// Why key presses could not be simulated.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error("{0}")]
    Connect(#[from] enigo::NewConError),
    #[error("{0}")]
    Key(#[from] enigo::InputError),
    #[error("{0}")]
    MainThread(#[from] MainThreadError),
    #[cfg(desktop_linux)]
    #[error("{0}")]
    Libei(#[from] ei_keys::EiError),
    #[cfg(desktop_linux)]
    #[error("typing through the virtual keyboard: {0}")]
    VirtualKeyboard(#[from] wayland_keys::VirtualKeyboardError),
    /// Neither way to press keys on Wayland works.
    #[error(
        "no virtual keyboard ({virtual_keyboard}), and no keyboard through the \
         RemoteDesktop portal ({libei})"
    )]
    NoWaylandKeyboard {
        virtual_keyboard: String,
        libei: String,
    },
}

/// Why an output method cannot work in this session at all.
#[derive(Debug, thiserror::Error)]
pub enum OutputUnavailable {
    #[error(
        "there is no display to paste into or hold a clipboard (DISPLAY and WAYLAND_DISPLAY \
         are unset)"
    )]
    NoDisplay,
    /// [`open_sink`] falls back to the clipboard, as the message says.
    #[error(
        "this Wayland desktop lets Utter press no keys ({0}): the text is put on the \
         clipboard instead, paste it with Ctrl+V"
    )]
    NoWaylandKeys(Box<OutputError>),
    /// macOS has no Shift+Insert paste: Mac keyboards have no Insert key.
    #[error(
        "the paste keys shift+insert do not exist on macOS (Mac keyboards have no Insert key): \
         choose ctrl+v, which pastes with Cmd+V there"
    )]
    NoInsertKey,
}

/// What the platform offers a sink.
#[derive(Clone)]
pub struct OutputEnv {
    pub session: DesktopSession,
    /// Where key simulation must run on macOS (enigo resolves the paste key
    /// through the keyboard-layout TIS API, which is main-thread only).
    pub main_thread: Option<MainThread>,
}

impl OutputEnv {
    pub fn detect(main_thread: Option<MainThread>) -> Self {
        Self {
            session: DesktopSession::detect(),
            main_thread,
        }
    }
}

/// Whether `method` can work in `session` at all. On Wayland, key presses
/// also depend on the compositor ([`probe`] finds out).
pub fn availability(
    method: OutputMethod,
    session: &DesktopSession,
) -> Result<(), OutputUnavailable> {
    match session {
        DesktopSession::Headless if method != OutputMethod::Stdout => {
            Err(OutputUnavailable::NoDisplay)
        }
        _ => Ok(()),
    }
}

/// How key presses reach the focused app.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyPath {
    /// The platform's own way (XTest, a Wayland virtual keyboard, SendInput, CGEvent).
    Native,
    /// libei through the RemoteDesktop portal (GNOME, KDE on Wayland).
    RemoteDesktop,
}

/// Tries what `method` needs in this session (a key simulator, a clipboard)
/// and says how it works or why not. Opens connections, so it is for
/// `utter doctor`, not for every status update. The RemoteDesktop portal is
/// only asked whether it exists: starting a session would show its dialog.
pub fn probe(method: OutputMethod, session: &DesktopSession) -> Result<KeyPath, OutputUnavailable> {
    availability(method, session)?;
    if !(session.is_wayland() && matches!(method, OutputMethod::Paste | OutputMethod::Type)) {
        return Ok(KeyPath::Native);
    }
    let virtual_keyboard = match sinks::input(session) {
        Ok(_) => return Ok(KeyPath::Native),
        Err(e) => e,
    };
    let no_keys = |libei: String| {
        OutputUnavailable::NoWaylandKeys(Box::new(OutputError::Input(
            InputError::NoWaylandKeyboard {
                virtual_keyboard: virtual_keyboard.reason(),
                libei,
            },
        )))
    };
    remote_desktop_keyboard()
        .map(|()| KeyPath::RemoteDesktop)
        .map_err(|e| no_keys(e.to_string()))
}

/// Why libei through the RemoteDesktop portal cannot type here.
#[derive(Debug, thiserror::Error)]
enum NoRemoteDesktop {
    #[cfg(desktop_linux)]
    #[error(transparent)]
    Portal(#[from] super::portal::PortalError),
    #[cfg(not(desktop_linux))]
    #[error("not on this system")]
    NotOnThisSystem,
}

#[cfg(desktop_linux)]
fn remote_desktop_keyboard() -> Result<(), NoRemoteDesktop> {
    Ok(super::remote_desktop::available()?)
}

#[cfg(not(desktop_linux))]
fn remote_desktop_keyboard() -> Result<(), NoRemoteDesktop> {
    Err(NoRemoteDesktop::NotOnThisSystem)
}

/// The sink for `config` in this session, and a notice when it had to fall
/// back to a lesser method (never silently). The sink also delivers by the
/// other methods a profile may ask for ([`SinkSet`]).
pub fn open_sink(
    config: &OutputConfig,
    env: &OutputEnv,
) -> Result<(Box<dyn TextSink>, Option<String>), OutputError> {
    let (set, notice) = SinkSet::open(config, env, open_one)?;
    Ok((Box::new(set), notice))
}

/// Opens one sink for a config: [`open_one`], or a test's stand-in.
type OpenSink =
    fn(&OutputConfig, &OutputEnv) -> Result<(Box<dyn TextSink>, Option<String>), OutputError>;

/// One sink for `config.method`, or the clipboard where key presses are
/// refused on Wayland (with the notice that says so).
fn open_one(
    config: &OutputConfig,
    env: &OutputEnv,
) -> Result<(Box<dyn TextSink>, Option<String>), OutputError> {
    availability(config.method, &env.session)?;
    if cfg!(target_os = "macos")
        && config.method == OutputMethod::Paste
        && config.paste_keys == PasteKeys::ShiftInsert
    {
        return Err(OutputUnavailable::NoInsertKey.into());
    }
    let sink: Result<Box<dyn TextSink>, OutputError> = match config.method {
        OutputMethod::Stdout => Ok(Box::new(StdoutSink)),
        OutputMethod::Clipboard => Ok(Box::new(ClipboardSink::new()?)),
        OutputMethod::Type => TypeSink::new(&env.session).map(|s| Box::new(s) as Box<dyn TextSink>),
        OutputMethod::Paste => {
            PasteSink::new(config.clone(), env.clone()).map(|s| Box::new(s) as Box<dyn TextSink>)
        }
    };
    match sink {
        Ok(sink) => Ok((sink, None)),
        Err(e @ OutputError::Input(_)) if env.session.is_wayland() => {
            let why = OutputUnavailable::NoWaylandKeys(Box::new(e));
            let notice = format!("{} output: {why}", config.method.name());
            Ok((Box::new(ClipboardSink::new()?), Some(notice)))
        }
        Err(e) => Err(e),
    }
}

/// The configured sink, and those a profile asked for, each opened the
/// first time it is needed and kept (a sink's OS handles live long: on X11
/// a clipboard's text lives as long as its owner). Sinks are keyed by the
/// method asked for, not the one they ended up using: a paste that fell back
/// to the clipboard is found again by the next paste.
pub struct SinkSet {
    config: OutputConfig,
    env: OutputEnv,
    open: OpenSink,
    configured: Box<dyn TextSink>,
    others: Vec<(OutputMethod, Box<dyn TextSink>)>,
    /// The method that delivered the last text.
    last: OutputMethod,
}

impl SinkSet {
    fn open(
        config: &OutputConfig,
        env: &OutputEnv,
        open: OpenSink,
    ) -> Result<(Self, Option<String>), OutputError> {
        let (configured, notice) = open(config, env)?;
        let set = Self {
            config: config.clone(),
            env: env.clone(),
            open,
            configured,
            others: Vec::new(),
            last: config.method,
        };
        Ok((set, notice))
    }

    fn sink_for(&mut self, method: OutputMethod) -> Result<&mut Box<dyn TextSink>, OutputError> {
        if method == self.config.method {
            return Ok(&mut self.configured);
        }
        let index = match self.others.iter().position(|(asked, _)| *asked == method) {
            Some(i) => i,
            None => {
                let config = OutputConfig {
                    method,
                    ..self.config.clone()
                };
                let (sink, notice) = (self.open)(&config, &self.env)?;
                if let Some(notice) = notice {
                    tracing::warn!("{notice}");
                }
                self.others.push((method, sink));
                self.others.len() - 1
            }
        };
        Ok(&mut self.others[index].1)
    }
}

impl TextSink for SinkSet {
    fn deliver(&mut self, text: &str, how: &Delivery) -> Result<Outcome, DesktopError> {
        let outcome = self.sink_for(how.method)?.deliver(text, how)?;
        self.last = outcome.delivered.method();
        Ok(outcome)
    }

    /// Pressed by the sink that delivered the last text (a paste that fell
    /// back to typing: the typing sink's keyboard).
    fn press_submit(&mut self, key: Submit) -> Result<(), DesktopError> {
        let last = self.last;
        self.sink_for(last)?.press_submit(key)
    }

    /// Pressed by the sink that delivered the last text (edit commands act
    /// where the text went).
    fn press_keys(&mut self, key: EditKey, times: usize) -> Result<(), DesktopError> {
        let last = self.last;
        self.sink_for(last)?.press_keys(key, times)
    }
}

/// The text as delivered: with the trailing space when asked.
fn finish(text: &str, trailing_space: bool) -> String {
    if trailing_space {
        format!("{text} ")
    } else {
        text.to_string()
    }
}

// Runs in CI's macOS job (`native`); type-checked here by scripts/check-targets.sh.
#[cfg(all(test, target_os = "macos"))]
mod tests {
    use super::*;

    #[test]
    fn shift_insert_is_refused_on_macos_before_any_paste() {
        let config = OutputConfig {
            paste_keys: PasteKeys::ShiftInsert,
            ..OutputConfig::default()
        };
        let env = OutputEnv {
            session: DesktopSession::MacOs,
            main_thread: None,
        };
        let err = open_sink(&config, &env).err().expect("refused");
        assert!(
            matches!(
                err,
                OutputError::Unavailable(OutputUnavailable::NoInsertKey)
            ),
            "{err}"
        );
        assert!(err.to_string().contains("choose ctrl+v"), "{err}");
    }
}

#[cfg(test)]
mod sink_set_tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    static OPENED: AtomicUsize = AtomicUsize::new(0);

    /// What a Wayland desktop that refuses key presses gives a paste or
    /// typing profile: a sink that leaves the text on the clipboard.
    struct FellBackToClipboard;

    impl TextSink for FellBackToClipboard {
        fn deliver(&mut self, _text: &str, _how: &Delivery) -> Result<Outcome, DesktopError> {
            Ok(Delivered::OnClipboard.into())
        }
    }

    fn open_fallen_back(
        config: &OutputConfig,
        _env: &OutputEnv,
    ) -> Result<(Box<dyn TextSink>, Option<String>), OutputError> {
        OPENED.fetch_add(1, Ordering::SeqCst);
        let notice = format!("{} output: no keys here", config.method.name());
        Ok((Box::new(FellBackToClipboard), Some(notice)))
    }

    #[test]
    fn the_ports_error_keeps_the_platforms_words_and_kind() {
        let refused = OutputError::Input(InputError::NoWaylandKeyboard {
            virtual_keyboard: "not offered".into(),
            libei: "no portal".into(),
        });
        let words = refused.to_string();
        assert_eq!(DesktopError::from(refused), DesktopError::Keys(words));
        let gone = OutputError::ClipboardOwner("the clipboard thread has ended");
        assert_eq!(
            DesktopError::from(gone).to_string(),
            "clipboard unavailable: the clipboard thread has ended"
        );
        let headless = OutputError::from(OutputUnavailable::NoDisplay);
        assert!(matches!(
            DesktopError::from(headless),
            DesktopError::Unavailable(m) if m.contains("no display")
        ));
    }

    #[test]
    fn a_profile_sink_that_fell_back_is_opened_once_and_reused() {
        let config = OutputConfig {
            method: OutputMethod::Paste,
            ..OutputConfig::default()
        };
        let env = OutputEnv {
            session: DesktopSession::Headless,
            main_thread: None,
        };
        let (mut set, _) = SinkSet::open(&config, &env, open_fallen_back).unwrap();
        assert_eq!(OPENED.load(Ordering::SeqCst), 1, "the configured sink");
        let typing_profile = Delivery {
            method: OutputMethod::Type,
            ..config.delivery()
        };
        for _ in 0..3 {
            let outcome = set.deliver("hello", &typing_profile).unwrap();
            assert_eq!(outcome.delivered.method(), OutputMethod::Clipboard);
        }
        assert_eq!(
            OPENED.load(Ordering::SeqCst),
            2,
            "one sink for the typing profile over three dictations"
        );
        assert_eq!(set.others.len(), 1);
    }
}
