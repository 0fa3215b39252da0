//! Firefox showing one text area whose every change the page itself posts
//! to a loopback server: what a paste or typing into Firefox really put
//! there, read from the DOM without a WebDriver (Debian has no geckodriver).
//! Needs Debian's `firefox-esr`.

use std::path::Path;
use std::process::{Command, Stdio};

use crate::desktop::KilledOnDrop;
use crate::http::{Reply, Server};

/// The page's title, for finding its window (xdotool, sway criteria).
pub const TITLE: &str = "PasteTarget-Firefox";

const PAGE: &str = r#"<!doctype html>
<meta charset="utf-8"><title>PasteTarget-Firefox</title>
<textarea id="t" autofocus style="width: 95vw; height: 85vh"></textarea>
<script>
  const t = document.getElementById('t');
  let n = 0;
  t.addEventListener('input', () => fetch('/value?n=' + ++n, { method: 'POST', body: t.value }));
</script>
"#;

/// Preferences for a first run that opens the page and nothing else.
const PREFS: &str = r#"
user_pref("browser.shell.checkDefaultBrowser", false);
user_pref("browser.startup.homepage_override.mstone", "ignore");
user_pref("startup.homepage_welcome_url", "");
user_pref("startup.homepage_welcome_url.additional", "");
user_pref("browser.aboutwelcome.enabled", false);
user_pref("datareporting.policy.dataSubmissionEnabled", false);
user_pref("datareporting.policy.dataSubmissionPolicyBypassNotification", true);
user_pref("toolkit.telemetry.reportingpolicy.firstRun", false);
user_pref("app.update.disabledForTesting", true);
user_pref("browser.sessionstore.resume_from_crash", false);
"#;

pub struct TextAreaPage {
    server: Server,
    _browser: KilledOnDrop,
}

impl TextAreaPage {
    /// Opens the page in `browser` (the `firefox-esr` command with the
    /// session's environment); its profile and home live in `dir`, open to
    /// every user (Firefox may run as a Wayland session's own user, which
    /// it must be: it refuses root in another user's session).
    pub fn start(mut browser: Command, dir: &Path) -> Self {
        use std::os::unix::fs::PermissionsExt;
        let server = Server::start(|path| match path {
            "/" => Reply::bytes(PAGE.as_bytes().to_vec())
                .header("content-type", "text/html; charset=utf-8"),
            _ => Reply::status(204),
        });
        let profile = dir.join("firefox-profile");
        let home = dir.join("firefox-home");
        std::fs::create_dir_all(&profile).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        std::fs::write(profile.join("user.js"), PREFS).unwrap();
        for open in [dir, profile.as_path(), home.as_path()] {
            std::fs::set_permissions(open, std::fs::Permissions::from_mode(0o777)).unwrap();
        }
        let child = crate::desktop::own_group(&mut browser)
            .args(["--no-remote", "--new-instance", "--profile"])
            .arg(&profile)
            .arg(server.url("/"))
            .env("HOME", &home)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("Firefox ESR is installed (apt install firefox-esr)");
        Self {
            server,
            _browser: KilledOnDrop(child),
        }
    }

    /// The text area's value as the page last posted it ("" before any
    /// change).
    pub fn value(&self) -> String {
        self.server
            .received()
            .into_iter()
            .filter_map(|r| {
                let n: u64 = r.path.strip_prefix("/value?n=")?.parse().ok()?;
                Some((n, r.body_text()))
            })
            .max_by_key(|(n, _)| *n)
            .map(|(_, value)| value)
            .unwrap_or_default()
    }
}
