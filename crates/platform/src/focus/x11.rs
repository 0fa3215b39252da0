//! X11: the window manager's `_NET_ACTIVE_WINDOW`, or the input focus where
//! no window manager sets it (a bare X server), walked up to the window that
//! carries `WM_CLASS`.

use x11rb::connection::Connection as _;
use x11rb::protocol::xproto::{Atom, AtomEnum, ConnectionExt, InputFocus, Window};
use x11rb::rust_connection::RustConnection;

use super::{executable_of, FocusError, FocusedApp};

/// Windows above the focused one we look through for `WM_CLASS`.
const MAX_DEPTH: usize = 16;

pub struct Connection {
    conn: RustConnection,
    root: Window,
    active_window: Atom,
    wm_pid: Atom,
}

impl Connection {
    pub fn open() -> Result<Self, FocusError> {
        let (conn, screen) = x11rb::connect(None).map_err(FocusError::query)?;
        let root = conn.setup().roots[screen].root;
        let intern = |name: &str| -> Result<Atom, FocusError> {
            Ok(conn
                .intern_atom(false, name.as_bytes())
                .map_err(FocusError::query)?
                .reply()
                .map_err(FocusError::query)?
                .atom)
        };
        let active_window = intern("_NET_ACTIVE_WINDOW")?;
        let wm_pid = intern("_NET_WM_PID")?;
        Ok(Self {
            conn,
            root,
            active_window,
            wm_pid,
        })
    }

    pub fn focused(&self) -> Result<FocusedApp, FocusError> {
        let window = match self.active_window()? {
            Some(w) => w,
            None => self.input_focus()?,
        };
        let (window, instance, class) = self.class_above(window)?;
        let exe = self
            .cardinal(window, self.wm_pid)?
            .and_then(executable_of)
            .unwrap_or_default();
        Ok(FocusedApp::new(class, [instance, exe]))
    }

    fn active_window(&self) -> Result<Option<Window>, FocusError> {
        let reply = self
            .conn
            .get_property(false, self.root, self.active_window, AtomEnum::WINDOW, 0, 1)
            .map_err(FocusError::query)?
            .reply()
            .map_err(FocusError::query)?;
        Ok(reply
            .value32()
            .and_then(|mut v| v.next())
            .filter(|&w| w != x11rb::NONE))
    }

    fn input_focus(&self) -> Result<Window, FocusError> {
        let focus = self
            .conn
            .get_input_focus()
            .map_err(FocusError::query)?
            .reply()
            .map_err(FocusError::query)?
            .focus;
        // None (0) and PointerRoot (1) name no window.
        if focus == x11rb::NONE || focus == u32::from(InputFocus::POINTER_ROOT) {
            return Err(FocusError::NoFocus);
        }
        Ok(focus)
    }

    /// The first of `window` and its ancestors with a `WM_CLASS` (an app's
    /// focus is often on an inner widget window): that window, the instance
    /// and the class.
    fn class_above(&self, mut window: Window) -> Result<(Window, String, String), FocusError> {
        for _ in 0..MAX_DEPTH {
            let reply = self
                .conn
                .get_property(false, window, AtomEnum::WM_CLASS, AtomEnum::STRING, 0, 256)
                .map_err(FocusError::query)?
                .reply()
                .map_err(FocusError::query)?;
            if !reply.value.is_empty() {
                let mut parts = reply
                    .value
                    .split(|&b| b == 0)
                    .map(|s| String::from_utf8_lossy(s).into_owned());
                let instance = parts.next().unwrap_or_default();
                let class = parts.next().unwrap_or_default();
                return Ok(if class.is_empty() {
                    (window, String::new(), instance)
                } else {
                    (window, instance, class)
                });
            }
            let tree = self
                .conn
                .query_tree(window)
                .map_err(FocusError::query)?
                .reply()
                .map_err(FocusError::query)?;
            if tree.parent == x11rb::NONE || window == self.root || tree.parent == self.root {
                break;
            }
            window = tree.parent;
        }
        Err(FocusError::Query(
            "the focused window has no WM_CLASS (not an app's window)".into(),
        ))
    }

    fn cardinal(&self, window: Window, property: Atom) -> Result<Option<u32>, FocusError> {
        let reply = self
            .conn
            .get_property(false, window, property, AtomEnum::CARDINAL, 0, 1)
            .map_err(FocusError::query)?
            .reply()
            .map_err(FocusError::query)?;
        Ok(reply.value32().and_then(|mut v| v.next()))
    }
}
