//! Per-app profiles: the app focused at the press shapes that dictation
//! only; where the focus cannot be told, the defaults apply.

use super::*;

fn dictate_one_two(r: &mut Rig) {
    r.key(TriggerKey::Main, true);
    r.hear(tone(600));
    r.hear(silence(400));
    r.hear(tone(600));
    r.key(TriggerKey::Main, false);
    r.settle();
}

#[test]
fn the_profile_of_the_app_focused_at_the_press_shapes_that_dictation_only() {
    let terminal = Profile {
        name: "terminal".into(),
        apps: vec!["*term*".into()],
        paste_keys: Some(PasteKeys::CtrlShiftV),
        trailing_space: Some(true),
        output: Some(OutputMethod::Type),
        ..Profile::default()
    };
    let mut r = rig(Options {
        profiles: vec![terminal],
        ..Options::default()
    });
    r.service.announce_ready();
    *r.focus.lock().unwrap() = Ok(FocusedApp::new("Lxterminal", ["lxterminal".to_string()]));
    r.key(TriggerKey::Main, true);
    // The focus moves while the user speaks: the press decided.
    *r.focus.lock().unwrap() = Ok(FocusedApp::new("Zenity", ["zenity".to_string()]));
    r.hear(tone(600));
    r.key(TriggerKey::Main, false);
    r.settle();
    dictate_one_two(&mut r);
    let hows = r.hows.lock().unwrap().clone();
    assert_eq!(
        hows[0],
        Delivery {
            method: OutputMethod::Type,
            paste_keys: PasteKeys::CtrlShiftV,
            trailing_space: true,
            submit: Submit::None,
        }
    );
    assert_eq!(hows[1], OutputConfig::default().delivery());
    let started: Vec<_> = r
        .events
        .lock()
        .unwrap()
        .iter()
        .filter_map(|e| match e {
            DictationEvent::RecordingStarted { app, profile, .. } => {
                Some((app.clone(), profile.clone()))
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        started,
        [
            (Some("Lxterminal".into()), Some("terminal".into())),
            (Some("Zenity".into()), None)
        ]
    );
    let delivered_output: Vec<_> = r
        .events
        .lock()
        .unwrap()
        .iter()
        .filter_map(|e| match e {
            DictationEvent::TextDelivered { output, .. } => Some(output.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(delivered_output, ["type", "paste"]);
}

#[test]
fn a_profile_drops_the_final_period_and_turns_spoken_punctuation_off() {
    let chat = Profile {
        name: "chat".into(),
        apps: vec!["chat".into()],
        final_period: Some(false),
        ..Profile::default()
    };
    let mut r = rig(Options {
        profiles: vec![chat],
        ..Options::default()
    });
    r.hears_as("two", "two.");
    *r.focus.lock().unwrap() = Ok(FocusedApp::new("chat", []));
    dictate_one_two(&mut r);
    *r.focus.lock().unwrap() = Ok(FocusedApp::new("editor", []));
    dictate_one_two(&mut r);
    assert_eq!(r.delivered(), ["one two", "one two."]);
}

#[test]
fn where_the_desktop_cannot_tell_the_focus_the_user_is_told_once_and_defaults_apply() {
    let mut r = rig(Options {
        profiles: crate::profiles::builtin(),
        ..Options::default()
    });
    *r.focus.lock().unwrap() = Err(FocusError::Unsupported("GNOME does not tell".into()));
    dictate_one_two(&mut r);
    dictate_one_two(&mut r);
    let notices: Vec<_> = r
        .events
        .lock()
        .unwrap()
        .iter()
        .filter(|e| matches!(e, DictationEvent::Notice { .. }))
        .cloned()
        .collect();
    assert_eq!(
        notices,
        [DictationEvent::Notice {
            message: "GNOME does not tell".into()
        }]
    );
    assert_eq!(r.delivered(), ["one two", "one two"]);
    assert!(r
        .hows
        .lock()
        .unwrap()
        .iter()
        .all(|h| *h == OutputConfig::default().delivery()));
}
