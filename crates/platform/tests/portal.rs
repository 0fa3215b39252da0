//! The GlobalShortcuts portal client against a fake
//! `org.freedesktop.portal.Desktop` on a private session bus (a real
//! dbus-daemon): the session and the binding go through the portal's
//! Request/Response dance, and Activated/Deactivated become key presses and
//! releases for the dictation service.
#![cfg(desktop_linux)]

#[path = "support/fake_portal.rs"]
mod fake_portal;
#[path = "support/session_bus.rs"]
mod session_bus;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use fake_portal::{request_path, respond, session_created, token, PATH};
use session_bus::private_session_bus;
use utter_platform::control::{Control, TriggerKey};
use utter_platform::desktop::DesktopSession;
use utter_platform::doctor;
use utter_platform::portal::{trigger_for, PortalShortcut, SHORTCUT_ID};
use zbus::message::Header;
use zbus::object_server::SignalEmitter;
use zbus::zvariant::{ObjectPath, OwnedObjectPath, OwnedValue};

/// What the fake portal was asked.
#[derive(Default)]
struct Asked {
    triggers: Vec<String>,
}

struct FakePortal {
    asked: Arc<Mutex<Asked>>,
}

#[zbus::interface(name = "org.freedesktop.portal.GlobalShortcuts")]
impl FakePortal {
    /// The spec's property is lower-case `version`.
    #[zbus(property, name = "version")]
    fn version(&self) -> u32 {
        1
    }

    async fn create_session(
        &self,
        options: HashMap<String, OwnedValue>,
        #[zbus(header)] header: Header<'_>,
        #[zbus(signal_emitter)] emitter: SignalEmitter<'_>,
    ) -> OwnedObjectPath {
        session_created(&header, &emitter, &options, "utter").await
    }

    async fn bind_shortcuts(
        &self,
        _session: OwnedObjectPath,
        shortcuts: Vec<(String, HashMap<String, OwnedValue>)>,
        _parent_window: String,
        options: HashMap<String, OwnedValue>,
        #[zbus(header)] header: Header<'_>,
        #[zbus(signal_emitter)] emitter: SignalEmitter<'_>,
    ) -> OwnedObjectPath {
        for (id, props) in &shortcuts {
            let trigger =
                String::try_from(props["preferred_trigger"].try_clone().unwrap()).unwrap();
            self.asked
                .lock()
                .unwrap()
                .triggers
                .push(format!("{id}={trigger}"));
        }
        let path = request_path(&header, &token(&options));
        respond(&emitter, &path, 0, HashMap::new()).await;
        path
    }
}

#[test]
fn portal_shortcut_presses_and_releases_reach_the_dictation_service() {
    let mut daemon = private_session_bus();

    let asked = Arc::new(Mutex::new(Asked::default()));
    let portal = zbus::blocking::connection::Builder::session()
        .unwrap()
        .name("org.freedesktop.portal.Desktop")
        .unwrap()
        .serve_at(
            PATH,
            FakePortal {
                asked: asked.clone(),
            },
        )
        .unwrap()
        .build()
        .unwrap();

    // `utter doctor` finds the portal without binding anything.
    let caps = doctor::desktop(&DesktopSession::Wayland {
        compositor: Some("kwin".into()),
        xwayland: false,
    });
    let hotkey = caps.iter().find(|c| c.name == "hotkey").unwrap();
    assert!(
        hotkey.ok && hotkey.detail.contains("GlobalShortcuts portal"),
        "{hotkey:?}"
    );
    assert!(asked.lock().unwrap().triggers.is_empty());

    let (tx, rx) = crossbeam_channel::unbounded();
    let shortcut = PortalShortcut::bind(&trigger_for("ctrl+shift+space"), tx).unwrap();
    assert_eq!(
        asked.lock().unwrap().triggers,
        vec![format!("{SHORTCUT_ID}=CTRL+SHIFT+space")]
    );

    let session = ObjectPath::try_from(format!("{PATH}/session/test/utter")).unwrap();
    let emit = |member: &str, id: &str| {
        portal
            .emit_signal(
                None::<()>,
                PATH,
                "org.freedesktop.portal.GlobalShortcuts",
                member,
                &(&session, id, 0u64, HashMap::<String, OwnedValue>::new()),
            )
            .unwrap();
    };
    emit("Activated", "someone-elses-shortcut");
    emit("Activated", SHORTCUT_ID);
    emit("Deactivated", SHORTCUT_ID);
    let got: Vec<Control> = (0..2)
        .map(|_| {
            rx.recv_timeout(Duration::from_secs(5))
                .expect("a key event")
        })
        .collect();
    assert_eq!(
        got,
        vec![
            Control::Key {
                key: TriggerKey::Main,
                pressed: true
            },
            Control::Key {
                key: TriggerKey::Main,
                pressed: false
            },
        ]
    );
    assert!(
        rx.recv_timeout(Duration::from_millis(300)).is_err(),
        "other shortcuts are ignored"
    );
    drop(shortcut);
    let _ = daemon.kill();
    let _ = daemon.wait();
}
