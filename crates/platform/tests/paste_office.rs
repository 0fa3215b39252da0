//! Issue 39's matrix for an office suite: LibreOffice Writer (its own X11
//! toolkit on X11, its GTK 3 plugin as a Wayland client of a headless sway)
//! given every text of the matrix twice, read back from the document
//! itself — a plain-text file Writer opened and saves on Ctrl+S — with the
//! user's copied PNG back on the clipboard after every paste.
//!
//! Not part of `npm test`: LibreOffice is ~90 MB more of packages and its
//! start is slow on a small machine. `npm run test:office` installs it and
//! runs these (`scripts/test-office.sh`).
#![cfg(target_os = "linux")]

use std::path::Path;

use utter_platform::output::{open_sink, OutputConfig, OutputEnv};

#[path = "support/paste_matrix.rs"]
mod paste_matrix;
#[path = "support/wayland_apps.rs"]
mod wayland_apps;
#[path = "support/x11_apps.rs"]
mod x11_apps;
use paste_matrix::{paste_every_text, Clipboard, Target};
use utter_test_support::desktop::png;

/// A LibreOffice user profile in `dir` that starts straight into the
/// document (no first-run wizard, no tip of the day, no crash recovery
/// offer) and saves a plain-text file as plain text without asking whether
/// to keep the format; returns the argument that points Writer at it.
fn writer_profile(dir: &Path) -> String {
    let profile = dir.join("libreoffice-profile");
    std::fs::create_dir_all(profile.join("user")).unwrap();
    let item = |path: &str, name: &str, value: &str| {
        format!(
            r#"<item oor:path="{path}"><prop oor:name="{name}" oor:op="fuse"><value>{value}</value></prop></item>"#
        )
    };
    let items = [
        item(
            "/org.openoffice.Office.Common/Save/Document",
            "WarnAlienFormat",
            "false",
        ),
        item(
            "/org.openoffice.Office.Common/Save/Document",
            "AutoSave",
            "false",
        ),
        item(
            "/org.openoffice.Office.Common/Misc",
            "ShowTipOfTheDay",
            "false",
        ),
        item("/org.openoffice.Office.Common/Misc", "FirstRun", "false"),
        item(
            "/org.openoffice.Setup/Office",
            "ooSetupInstCompleted",
            "true",
        ),
    ];
    std::fs::write(
        profile.join("user/registrymodifications.xcu"),
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
             <oor:items xmlns:oor=\"http://openoffice.org/2001/registry\" \
             xmlns:xs=\"http://www.w3.org/2001/XMLSchema\" \
             xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\">\n{}\n</oor:items>\n",
            items.join("\n")
        ),
    )
    .unwrap();
    format!("-env:UserInstallation=file://{}", profile.display())
}

/// Pastes every text into Writer (`start`ed), through one sink, with the
/// user's `image` on `clipboard`; prints the figures.
fn paste_into_writer(mut writer: Box<dyn Target + '_>, clipboard: &dyn Clipboard, image: &[u8]) {
    let (mut sink, notice) =
        open_sink(&OutputConfig::default(), &OutputEnv::detect(None)).expect("a paste sink");
    assert_eq!(notice, None);
    let name = writer.name();
    let figures = paste_every_text(writer.as_mut(), sink.as_mut(), clipboard, image);
    println!("{}", figures.report(name));
}

#[test]
#[ignore = "LibreOffice: `npm run test:office`"]
fn pastes_into_libreoffice_writer_on_x11_arrive_exactly_and_the_image_comes_back() {
    let dir = tempfile::tempdir().unwrap();
    let (_xvfb, _display) = x11_apps::start_xvfb();
    let image = png(dir.path());
    let _user_copy = utter_test_support::x11_clipboard::copy(&image, "image/png");
    let profile = writer_profile(dir.path());
    let writer = x11_apps::Editor::start(
        dir.path(),
        "LibreOffice Writer",
        "soffice",
        &["--writer", "--norestore", "--nologo", &profile],
        "Writer",
    );
    paste_into_writer(Box::new(writer), &x11_apps::XClipboard, &image);
}

#[test]
#[ignore = "LibreOffice: `npm run test:office`"]
fn on_wayland_pastes_into_libreoffice_writer_arrive_exactly_and_the_image_comes_back() {
    let desk = wayland_apps::Desk::start();
    let dir = tempfile::tempdir().unwrap();
    let image = png(dir.path());
    desk.sway.set_clipboard_data("image/png", &image);
    let profile = writer_profile(dir.path());
    let writer = wayland_apps::Editor::start(
        &desk,
        dir.path(),
        "LibreOffice Writer (GTK 3, Wayland)",
        "soffice",
        &["--writer", "--norestore", "--nologo", &profile],
        "Writer",
    );
    let clipboard = wayland_apps::WaylandClipboard(&desk.sway);
    paste_into_writer(Box::new(writer), &clipboard, &image);
}
