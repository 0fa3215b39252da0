//! X11: Utter's own owner of CLIPBOARD (and PRIMARY, which xterm pastes on
//! Shift+Insert), one thread living as long as the paste sink. For a paste it
//! 1. copies everything the selection's owner offers ([`snapshot`]): text,
//!    images, rich text, file lists — an X11 selection lives in its owner,
//!    which drops it once another client takes the selection;
//! 2. takes the selection with the dictated text, at a real server timestamp;
//! 3. reports the first read of a text target after the paste keys were sent:
//!    the paste arriving in the app;
//! 4. keeps serving the text until the reader has been quiet for [`QUIET`]:
//!    apps read more than once — Chromium (every Electron app) reads
//!    UTF8_STRING twice, ~20 ms apart, and inserts the second answer; giving
//!    the clipboard back after the first read made it paste nothing;
//! 5. serves the copy of step 1 again, re-taking the selection so that
//!    clipboard managers and apps watching the owner (XFixes) see the change.
//!
//! What it serves lives in this thread: when the sink goes (Utter quits), a
//! clipboard manager, where one runs, is asked to take a copy first
//! (`SAVE_TARGETS`, freedesktop's ClipboardManager spec), or the user's
//! clipboard would go with Utter.

mod contents;
mod serve;
mod snapshot;

use std::collections::VecDeque;
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::{bounded, unbounded, Receiver, Sender};
use x11rb::connection::Connection;
use x11rb::protocol::xproto::{
    Atom, AtomEnum, ConnectionExt, CreateWindowAux, EventMask, PropMode, Timestamp, Window,
    WindowClass,
};
use x11rb::protocol::Event;
use x11rb::rust_connection::RustConnection;
use x11rb::wrapper::ConnectionExt as _;

use contents::Contents;

/// How long the app that read the paste must have stopped asking before the
/// previous clipboard comes back (see the module comment, step 4).
const QUIET: Duration = Duration::from_millis(150);
/// The longest the text is served after its first read, however busy the
/// reader stays (an app polling the clipboard).
const MAX_HOLD_AFTER_READ: Duration = Duration::from_secs(2);
/// Longest wait for the thread to stop when the sink goes (a dead display).
const STOP_TIMEOUT: Duration = Duration::from_millis(2500);
/// The longest a clipboard manager is given to copy the clipboard when the
/// thread stops.
const HANDOVER_TIMEOUT: Duration = Duration::from_secs(2);

#[derive(Debug, thiserror::Error)]
pub enum OwnerError {
    #[error("cannot connect to the X server: {0}")]
    Connect(#[from] x11rb::errors::ConnectError),
    #[error("the X connection failed: {0}")]
    Connection(#[from] x11rb::errors::ConnectionError),
    #[error("the X server refused a request: {0}")]
    Reply(#[from] x11rb::errors::ReplyError),
    #[error("cannot allocate an X id: {0}")]
    Id(#[from] x11rb::errors::ReplyOrIdError),
    #[error("the clipboard's owner did not answer in time")]
    Timeout,
    #[error("another program took the clipboard first")]
    Refused,
    #[error("cannot start the clipboard thread: {0}")]
    Thread(#[from] std::io::Error),
    #[error("the clipboard thread has ended (the X server went away?)")]
    Ended,
}

/// The atoms the owner uses, interned once.
pub struct Atoms {
    pub clipboard: Atom,
    pub targets: Atom,
    pub timestamp: Atom,
    pub multiple: Atom,
    pub save_targets: Atom,
    pub delete: Atom,
    pub insert_selection: Atom,
    pub insert_property: Atom,
    pub incr: Atom,
    pub utf8_string: Atom,
    pub text_plain_utf8: Atom,
    pub text_plain: Atom,
    pub text: Atom,
    pub snapshot_property: Atom,
    pub timestamp_property: Atom,
    pub clipboard_manager: Atom,
}

impl Atoms {
    fn intern(conn: &RustConnection) -> Result<Self, OwnerError> {
        let names = [
            "CLIPBOARD",
            "TARGETS",
            "TIMESTAMP",
            "MULTIPLE",
            "SAVE_TARGETS",
            "DELETE",
            "INSERT_SELECTION",
            "INSERT_PROPERTY",
            "INCR",
            "UTF8_STRING",
            "text/plain;charset=utf-8",
            "text/plain",
            "TEXT",
            "UTTER_SNAPSHOT",
            "UTTER_TIMESTAMP",
            "CLIPBOARD_MANAGER",
        ];
        // All requests first, then all replies: one round trip.
        let cookies = names
            .iter()
            .map(|n| conn.intern_atom(false, n.as_bytes()))
            .collect::<Result<Vec<_>, _>>()?;
        let mut atoms = cookies
            .into_iter()
            .map(|c| c.reply().map(|r| r.atom))
            .collect::<Result<Vec<_>, _>>()?
            .into_iter();
        let mut next = || atoms.next().expect("one atom per name");
        Ok(Self {
            clipboard: next(),
            targets: next(),
            timestamp: next(),
            multiple: next(),
            save_targets: next(),
            delete: next(),
            insert_selection: next(),
            insert_property: next(),
            incr: next(),
            utf8_string: next(),
            text_plain_utf8: next(),
            text_plain: next(),
            text: next(),
            snapshot_property: next(),
            timestamp_property: next(),
            clipboard_manager: next(),
        })
    }

    /// Targets that describe or act on a selection rather than hold its data.
    fn is_meta_target(&self, target: Atom) -> bool {
        [
            self.targets,
            self.timestamp,
            self.multiple,
            self.save_targets,
            self.delete,
            self.insert_selection,
            self.insert_property,
        ]
        .contains(&target)
    }
}

/// What the sink asks of the owner's thread.
enum Command {
    Paste {
        text: String,
        primary: bool,
        restore: bool,
        reply: Sender<Result<Started, OwnerError>>,
    },
    /// The paste keys are being sent: a text read from now on is the paste.
    KeysSent,
    /// The app did not read the paste: keep the text on the clipboard for
    /// the user to paste (`keep_text`), or give the previous content back now.
    NotRead {
        keep_text: bool,
        done: Sender<()>,
    },
    Stop,
}

/// What taking the clipboard for a paste found.
#[derive(Debug, Default)]
pub struct Started {
    /// Targets of the user's clipboard that could not be copied, so will not come back.
    pub lost: Vec<String>,
}

/// The owner's thread, seen from the sink.
pub struct Owner {
    commands: Sender<Command>,
    wake: UnixStream,
    read: Receiver<Duration>,
    done: Receiver<()>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Owner {
    /// Connects to the X server (`$DISPLAY`) and starts the thread.
    pub fn start() -> Result<Self, OwnerError> {
        let (conn, screen) = x11rb::connect(None)?;
        let root = conn.setup().roots[screen].root;
        let win = conn.generate_id()?;
        conn.create_window(
            0,
            win,
            root,
            0,
            0,
            1,
            1,
            0,
            WindowClass::INPUT_ONLY,
            0,
            &CreateWindowAux::new().event_mask(EventMask::PROPERTY_CHANGE),
        )?;
        let atoms = Atoms::intern(&conn)?;
        conn.flush()?;
        let (commands, command_rx) = unbounded();
        let (read_tx, read) = bounded(1);
        let (done_tx, done) = bounded(1);
        let (wake, wake_rx) = UnixStream::pair()?;
        wake_rx.set_nonblocking(true)?;
        // Never blocks the sink: a full socket already wakes the thread.
        wake.set_nonblocking(true)?;
        let thread = std::thread::Builder::new()
            .name("utter-clipboard".into())
            .spawn(move || {
                let mut state = State {
                    conn,
                    win,
                    atoms,
                    commands: command_rx,
                    wake: wake_rx,
                    read: read_tx,
                    phase: Phase::Idle,
                    owned: Vec::new(),
                    server: serve::Server::default(),
                    deferred: VecDeque::new(),
                };
                if let Err(e) = state.run() {
                    tracing::debug!("the clipboard owner stopped: {e}");
                }
                let _ = done_tx.send(());
            })?;
        Ok(Self {
            commands,
            wake,
            read,
            done,
            thread: Some(thread),
        })
    }

    fn send(&self, command: Command) -> Result<(), OwnerError> {
        self.commands.send(command).map_err(|_| OwnerError::Ended)?;
        // A byte on the socket pair wakes the thread from its poll.
        let _ = std::io::Write::write(&mut &self.wake, &[1]);
        Ok(())
    }

    /// Copies what the selections hold (unless they are ours already), then
    /// owns them with `text`. `primary`: PRIMARY too (Shift+Insert).
    /// `restore`: give the copy back once the paste has been read.
    pub fn paste(&self, text: &str, primary: bool, restore: bool) -> Result<Started, OwnerError> {
        while self.read.try_recv().is_ok() {}
        let (reply, started) = bounded(1);
        self.send(Command::Paste {
            text: text.to_string(),
            primary,
            restore,
            reply,
        })?;
        started
            .recv_timeout(snapshot::SNAPSHOT_BUDGET * 3)
            .map_err(|_| OwnerError::Ended)?
    }

    pub fn keys_sent(&self) -> Result<(), OwnerError> {
        self.send(Command::KeysSent)
    }

    /// Waits for the app to read the text: how long after the keys it did, or `None`.
    pub fn wait_read(&self, timeout: Duration) -> Option<Duration> {
        self.read.recv_timeout(timeout).ok()
    }

    /// After a paste nobody read: keep the text for the user, or restore.
    pub fn not_read(&self, keep_text: bool) -> Result<(), OwnerError> {
        let (done, finished) = bounded(1);
        self.send(Command::NotRead { keep_text, done })?;
        finished
            .recv_timeout(Duration::from_secs(1))
            .map_err(|_| OwnerError::Ended)
    }
}

impl Drop for Owner {
    fn drop(&mut self) {
        let _ = self.send(Command::Stop);
        // Bounded: a thread stuck on a dead X server must not hold up an exit.
        if self.done.recv_timeout(STOP_TIMEOUT).is_ok() {
            if let Some(t) = self.thread.take() {
                let _ = t.join();
            }
        }
    }
}

/// Where the paste stands.
enum Phase {
    /// Serving whatever `owned` holds (or nothing), waiting for a paste.
    Idle,
    /// Serving a dictated text. `previous` goes back once the paste has been
    /// read and the reader is quiet.
    Pasting {
        previous: Vec<(Atom, Arc<Contents>)>,
        restore: bool,
        keys_sent: Option<Instant>,
        /// The first text read after the keys, and by which client (the
        /// requestor window's id base): only its requests keep the text
        /// served, not a clipboard manager's or a checker's.
        first_read: Option<(Instant, u32)>,
        last_request: Instant,
    },
}

struct State {
    conn: RustConnection,
    win: Window,
    atoms: Atoms,
    commands: Receiver<Command>,
    wake: UnixStream,
    read: Sender<Duration>,
    phase: Phase,
    /// The selections we own, and what each serves.
    owned: Vec<(Atom, Arc<Contents>, Timestamp)>,
    server: serve::Server,
    /// Events that arrived while a snapshot waited for its answers.
    deferred: VecDeque<Event>,
}

impl State {
    fn run(&mut self) -> Result<(), OwnerError> {
        loop {
            while let Ok(command) = self.commands.try_recv() {
                if !self.handle_command(command)? {
                    return Ok(());
                }
            }
            self.restore_when_quiet()?;
            // Last before sleeping: the round trips above may have left
            // events in x11rb's buffer, which a poll on the socket never sees.
            while let Some(event) = self.next_queued_event()? {
                self.handle_event(event)?;
            }
            self.conn.flush()?;
            let timeout = self.next_timer();
            wait_readable(&self.conn, Some(&self.wake), timeout)?;
            let mut sink = [0u8; 64];
            while matches!(std::io::Read::read(&mut &self.wake, &mut sink), Ok(n) if n > 0) {}
        }
    }

    fn next_queued_event(&mut self) -> Result<Option<Event>, OwnerError> {
        if let Some(event) = self.deferred.pop_front() {
            return Ok(Some(event));
        }
        Ok(self.conn.poll_for_event()?)
    }

    /// How long the thread may sleep: until the quiet check, or for ever.
    fn next_timer(&self) -> Duration {
        match &self.phase {
            Phase::Pasting {
                first_read: Some(_),
                last_request,
                ..
            } => QUIET.saturating_sub(last_request.elapsed()) + Duration::from_millis(1),
            _ => Duration::from_secs(3600),
        }
    }

    fn handle_event(&mut self, event: Event) -> Result<(), OwnerError> {
        match event {
            Event::SelectionRequest(req) => {
                let Some((_, contents, owned_at)) = self
                    .owned
                    .iter()
                    .find(|(s, ..)| *s == req.selection)
                    .cloned()
                else {
                    // Not ours (any more): refuse, as the protocol asks.
                    serve::refuse(&self.conn, &req)?;
                    return Ok(());
                };
                let served =
                    self.server
                        .answer(&self.conn, &self.atoms, &req, &contents, owned_at)?;
                let client = req.requestor & !self.conn.setup().resource_id_mask;
                if let Phase::Pasting {
                    keys_sent,
                    first_read,
                    last_request,
                    ..
                } = &mut self.phase
                {
                    match (keys_sent, *first_read, served) {
                        (Some(sent), None, serve::Served::Text) => {
                            *first_read = Some((Instant::now(), client));
                            *last_request = Instant::now();
                            let _ = self.read.try_send(sent.elapsed());
                        }
                        (_, Some((_, reader)), _) if reader == client => {
                            *last_request = Instant::now();
                        }
                        _ => {}
                    }
                }
            }
            Event::SelectionClear(clear) => {
                // Another program owns it now: its content wins, nothing to restore there.
                self.owned.retain(|(s, ..)| *s != clear.selection);
                if let Phase::Pasting { previous, .. } = &mut self.phase {
                    previous.retain(|(s, _)| *s != clear.selection);
                }
            }
            Event::PropertyNotify(p) => self.server.property_changed(&self.conn, &p)?,
            _ => {}
        }
        Ok(())
    }

    /// Returns false to stop.
    fn handle_command(&mut self, command: Command) -> Result<bool, OwnerError> {
        match command {
            Command::Paste {
                text,
                primary,
                restore,
                reply,
            } => {
                let result = self.start_paste(&text, primary, restore);
                let failed = result.as_ref().err().map(ToString::to_string);
                let _ = reply.send(result);
                if let Some(e) = failed {
                    tracing::warn!("cannot take the clipboard for the paste: {e}");
                }
            }
            Command::KeysSent => {
                if let Phase::Pasting { keys_sent, .. } = &mut self.phase {
                    *keys_sent = Some(Instant::now());
                }
            }
            Command::NotRead { keep_text, done } => {
                if keep_text {
                    self.phase = Phase::Idle;
                } else {
                    self.restore()?;
                }
                let _ = done.send(());
            }
            Command::Stop => {
                self.hand_over_to_clipboard_manager()?;
                return Ok(false);
            }
        }
        Ok(true)
    }

    fn start_paste(
        &mut self,
        text: &str,
        primary: bool,
        restore: bool,
    ) -> Result<Started, OwnerError> {
        let mut selections = vec![self.atoms.clipboard];
        if primary {
            selections.push(AtomEnum::PRIMARY.into());
        }
        // What goes back afterwards: a paste still waiting to restore hands
        // its own `previous` on (never the text it was serving).
        let pending = match std::mem::replace(&mut self.phase, Phase::Idle) {
            Phase::Pasting { previous, .. } => Some(previous),
            Phase::Idle => None,
        };
        let mut previous = Vec::new();
        let mut started = Started::default();
        for &selection in &selections {
            let kept = pending
                .as_ref()
                .and_then(|p| p.iter().find(|(s, _)| *s == selection).cloned());
            let ours = self.owned.iter().find(|(s, ..)| *s == selection).cloned();
            let contents = match (kept, ours) {
                (Some((_, contents)), _) => contents,
                (None, Some((_, contents, _))) => contents,
                (None, None) if restore => {
                    let copy = snapshot::take(
                        &self.conn,
                        self.win,
                        &self.atoms,
                        selection,
                        &mut self.deferred,
                    )?;
                    started.lost.extend(copy.lost);
                    Arc::new(copy.contents)
                }
                (None, None) => Arc::new(Contents::default()),
            };
            if !contents.is_empty() {
                previous.push((selection, contents));
            }
        }
        let text = Arc::new(Contents::text(text, &self.atoms));
        let now = self.server_time()?;
        for &selection in &selections {
            self.own(selection, text.clone(), now)?;
        }
        self.phase = Phase::Pasting {
            previous,
            restore,
            keys_sent: None,
            first_read: None,
            last_request: Instant::now(),
        };
        Ok(started)
    }

    /// Takes `selection` at `time` with `contents`; checks that it held.
    fn own(
        &mut self,
        selection: Atom,
        contents: Arc<Contents>,
        time: Timestamp,
    ) -> Result<(), OwnerError> {
        self.conn.set_selection_owner(self.win, selection, time)?;
        let owner = self.conn.get_selection_owner(selection)?.reply()?.owner;
        if owner != self.win {
            self.owned.retain(|(s, ..)| *s != selection);
            return Err(OwnerError::Refused);
        }
        self.owned.retain(|(s, ..)| *s != selection);
        self.owned.push((selection, contents, time));
        Ok(())
    }

    /// The X server's time now (ICCCM 2.1: owners must not use CurrentTime):
    /// a zero-length append to a property of ours brings a PropertyNotify
    /// stamped by the server.
    fn server_time(&mut self) -> Result<Timestamp, OwnerError> {
        let property = self.atoms.timestamp_property;
        self.conn
            .change_property8(PropMode::APPEND, self.win, property, AtomEnum::STRING, &[])?;
        self.conn.flush()?;
        let deadline = Instant::now() + Duration::from_secs(1);
        loop {
            match self.conn.poll_for_event()? {
                Some(Event::PropertyNotify(p)) if p.window == self.win && p.atom == property => {
                    return Ok(p.time)
                }
                Some(other) => self.deferred.push_back(other),
                None => {
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return Err(OwnerError::Timeout);
                    }
                    wait_readable(&self.conn, None, left)?;
                }
            }
        }
    }

    fn restore_when_quiet(&mut self) -> Result<(), OwnerError> {
        if let Phase::Pasting {
            first_read: Some((read, _)),
            last_request,
            ..
        } = &self.phase
        {
            if last_request.elapsed() >= QUIET || read.elapsed() >= MAX_HOLD_AFTER_READ {
                self.restore()?;
            }
        }
        Ok(())
    }

    /// Before this thread (and with it what it serves) goes: a paste in
    /// flight gives the previous clipboard back, then the clipboard
    /// manager, if one runs (it owns CLIPBOARD_MANAGER), is asked to copy
    /// every target (`SAVE_TARGETS` with no property: all of them), and its
    /// requests are served until it answers or [`HANDOVER_TIMEOUT`].
    fn hand_over_to_clipboard_manager(&mut self) -> Result<(), OwnerError> {
        self.restore()?;
        let (clipboard, manager) = (self.atoms.clipboard, self.atoms.clipboard_manager);
        if !self.owned.iter().any(|(s, ..)| *s == clipboard) {
            return Ok(());
        }
        if self.conn.get_selection_owner(manager)?.reply()?.owner == x11rb::NONE {
            tracing::debug!("no clipboard manager: the clipboard goes with Utter");
            return Ok(());
        }
        let time = self.server_time()?;
        self.conn.convert_selection(
            self.win,
            manager,
            self.atoms.save_targets,
            x11rb::NONE,
            time,
        )?;
        let deadline = Instant::now() + HANDOVER_TIMEOUT;
        loop {
            while let Some(event) = self.next_queued_event()? {
                match event {
                    Event::SelectionNotify(n)
                        if n.requestor == self.win && n.selection == manager =>
                    {
                        match n.property == x11rb::NONE {
                            true => tracing::warn!("the clipboard manager refused the clipboard"),
                            false => tracing::debug!("the clipboard manager took the clipboard"),
                        }
                        return Ok(());
                    }
                    other => self.handle_event(other)?,
                }
            }
            self.conn.flush()?;
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                tracing::warn!("the clipboard manager did not take the clipboard in time");
                return Ok(());
            }
            wait_readable(&self.conn, None, left)?;
        }
    }

    /// Serves the previous contents again (where there were any and the
    /// user asked for it): the paste is over.
    fn restore(&mut self) -> Result<(), OwnerError> {
        let Phase::Pasting {
            previous, restore, ..
        } = std::mem::replace(&mut self.phase, Phase::Idle)
        else {
            return Ok(());
        };
        if !restore || previous.is_empty() {
            return Ok(());
        }
        let now = self.server_time()?;
        for (selection, contents) in previous {
            // Only where we still own it: a copy made meanwhile wins.
            if self.owned.iter().any(|(s, ..)| *s == selection) {
                if let Err(e) = self.own(selection, contents, now) {
                    tracing::warn!("cannot give the clipboard back: {e}");
                }
            }
        }
        Ok(())
    }
}

/// Sleeps until the X connection (or `wake`) has something to read, or `timeout`.
fn wait_readable(
    conn: &RustConnection,
    wake: Option<&UnixStream>,
    timeout: Duration,
) -> Result<(), OwnerError> {
    let mut fds = vec![libc::pollfd {
        fd: conn.stream().as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    }];
    if let Some(wake) = wake {
        fds.push(libc::pollfd {
            fd: wake.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        });
    }
    let ms = i32::try_from(timeout.as_millis()).unwrap_or(i32::MAX);
    // SAFETY: `fds` is a valid array of pollfd for the length given.
    let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, ms) };
    if n < 0 {
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(OwnerError::Thread(e));
        }
    }
    if fds[0].revents & (libc::POLLHUP | libc::POLLERR) != 0 {
        // The X server went away: the next read reports it.
        return Err(OwnerError::Connection(
            x11rb::errors::ConnectionError::UnknownError,
        ));
    }
    Ok(())
}
