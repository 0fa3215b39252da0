//! History's Paste (`App::paste_text`) on a real X server (Xvfb): the text
//! reaches a real terminal (xterm, its built-in profile's Shift+Insert), and
//! the image the user had copied is on the clipboard again after each paste —
//! also once the call has returned, and after the next one. (The app used to
//! open a sink per paste and drop it on return: the clipboard server it
//! dropped was the one serving the user's image, so the image was gone.)
//! Its own test binary: `DISPLAY` is the whole process's. Linux only.
#![cfg(target_os = "linux")]

#[path = "../../core/tests/common/mod.rs"]
mod common;
#[path = "support/app_dirs.rs"]
mod support;

use std::process::Command;
use std::time::Duration;

use support::app_dirs;
use utter_app_core::App;
use utter_platform::MainThread;
use utter_test_support::desktop::png;
use utter_test_support::desktop::{wait_until, Display, KilledOnDrop};
use utter_test_support::x11_clipboard::{clipboard, copy};

fn xdotool(args: &[&str]) -> String {
    let out = Command::new("xdotool").args(args).output().unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

#[test]
fn a_paste_from_the_app_arrives_and_the_users_copied_image_stays_on_the_clipboard() {
    let display = Display::start();
    std::env::set_var("DISPLAY", display.name());
    std::env::remove_var("WAYLAND_DISPLAY");
    let tmp = tempfile::tempdir().unwrap();

    // The target: xterm, whose `cat` writes what it is given to a file.
    let typed = tmp.path().join("xterm.txt");
    let start_xterm = || {
        KilledOnDrop(
            Command::new("xterm")
                .args(["-title", "PasteTarget-XTerm", "-e", "sh", "-c"])
                .arg(format!(
                    "stty -icanon -echo; exec cat > '{}'",
                    typed.display()
                ))
                .spawn()
                .expect("xterm is installed"),
        )
    };
    // Once (a cold CI machine's first run) xterm could not open the fresh
    // display and exited at once; it is started again then, once, saying so.
    let mut xterm = start_xterm();
    let mut window = String::new();
    let mut restarted = false;
    wait_until("the xterm window", Duration::from_secs(30), || {
        if let Ok(Some(status)) = xterm.0.try_wait() {
            assert!(
                !restarted,
                "xterm exited again ({status}) before its window showed"
            );
            eprintln!("xterm exited ({status}) before its window showed: starting it again");
            xterm = start_xterm();
            restarted = true;
        }
        window = xdotool(&["search", "--onlyvisible", "--name", "PasteTarget-XTerm"]);
        !window.is_empty() && typed.exists()
    });
    xdotool(&["windowfocus", "--sync", &window]);

    // The user's copy: a real PNG, served by xclip.
    let image = png(tmp.path());
    let _xclip = copy(&image, "image/png");

    let dirs = app_dirs(common::store().dir());
    let app = App::start(dirs.paths.clone(), MainThread::dedicated(), |_| {}).unwrap();
    let mut expected = String::new();
    for text in ["Pasted from History, once.", "And again: ça va, 日本."] {
        app.paste_text(text).expect("pasted");
        expected.push_str(text);
        if app.settings().trailing_space {
            expected.push(' '); // on by default: the next dictation follows
        }
        let arrived = || std::fs::read_to_string(&typed).unwrap_or_default();
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while arrived() != expected && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert_eq!(arrived(), expected, "what xterm was given");
        // Long past the paste's hold (2 s at most after it was read).
        std::thread::sleep(Duration::from_secs(3));
        assert!(
            clipboard("image/png") == image,
            "the user's image is not on the clipboard after {text:?}; it offers {:?}",
            String::from_utf8_lossy(&clipboard("TARGETS"))
        );
    }
    drop(app);
}
