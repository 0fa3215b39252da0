//! The AI step against a loopback chat-completions server (the external
//! boundary): the model's text goes out, and whatever goes wrong, the
//! dictated text does, with a notice.

use super::*;
use crate::dictation::rewrite_step::COMMAND_MODE;
use utter_rewrite::{Notice, ProviderConfig, ProviderKind, RewriteConfig};
use utter_test_support::chat;
use utter_test_support::http::{Reply, Server};

fn rewriting(server: &Server, budget_ms: u32) -> Option<RewriteConfig> {
    Some(RewriteConfig {
        enabled: true,
        provider: ProviderConfig {
            kind: ProviderKind::LlamaCpp,
            base_url: Some(server.url("/v1")),
            model: "loopback-model".into(),
            time_budget_ms: budget_ms,
        },
        ..RewriteConfig::default()
    })
}

/// One dictation of two words, as the user says it.
fn dictate(r: &mut Rig) {
    r.key(TriggerKey::Main, true);
    r.hear(tone(400));
    r.hear(silence(400));
    r.hear(tone(400));
    r.key(TriggerKey::Main, false);
    r.settle();
}

fn report(r: &Rig) -> Option<RewriteReport> {
    r.events.lock().unwrap().iter().find_map(|e| match e {
        DictationEvent::TextDelivered { rewrite, .. } => rewrite.clone(),
        _ => None,
    })
}

#[test]
fn the_models_text_goes_out_and_the_dictated_text_is_kept_beside_it() {
    let server = Server::start(|path| match path {
        "/v1/chat/completions" => chat::streamed(&["One, ", "two."], Duration::from_millis(10)),
        _ => Reply::status(404),
    });
    let mut r = rig(Options {
        rewrite: rewriting(&server, 5_000),
        ..Options::default()
    });
    dictate(&mut r);
    assert_eq!(r.delivered(), ["One, two."]);
    let kinds = r.kinds();
    let at = |k: &str| kinds.iter().position(|x| x == k).unwrap();
    assert!(at("rewriting") < at("text_delivered"), "{kinds:?}");
    let report = report(&r).unwrap();
    assert_eq!(report.dictated, "one two");
    assert_eq!(report.mode, "clean-up");
    assert_eq!(report.model.as_deref(), Some(chat::MODEL));
    assert_eq!(report.notice, None);
    let sent = server.received();
    assert_eq!(sent.len(), 1);
    let body = sent[0].body_text();
    assert!(body.contains("one two"), "the dictation is sent: {body}");
    assert!(body.contains("Ana"), "with the vocabulary: {body}");
    assert_eq!(r.record_status(), ["delivered"]);
}

#[test]
fn a_failing_server_delivers_the_dictated_text_with_the_reason() {
    let server = Server::start(|_| chat::error(500, "model crashed"));
    let mut r = rig(Options {
        rewrite: rewriting(&server, 5_000),
        ..Options::default()
    });
    dictate(&mut r);
    assert_eq!(r.delivered(), ["one two"]);
    let report = report(&r).unwrap();
    assert_eq!(report.model, None);
    assert!(
        matches!(report.notice, Some(Notice::ServerError { status: 500, .. })),
        "{report:?}"
    );
    assert_eq!(
        r.notices(),
        ["Delivered as dictated: The server answered with error 500: model crashed."]
    );
}

#[test]
fn a_model_slower_than_the_budget_costs_at_most_the_budget() {
    let server = Server::start(|_| {
        chat::streamed(&["One, ", "two."], Duration::from_millis(10)).delay(Duration::from_secs(5))
    });
    let mut r = rig(Options {
        rewrite: rewriting(&server, 400),
        ..Options::default()
    });
    let started = Instant::now();
    dictate(&mut r);
    let took = started.elapsed();
    assert_eq!(r.delivered(), ["one two"]);
    assert!(
        matches!(report(&r).unwrap().notice, Some(Notice::TimedOut { .. })),
        "{:?}",
        report(&r)
    );
    assert!(took < Duration::from_secs(3), "took {took:?}");
}

#[test]
fn a_profile_can_turn_the_rewrite_off_in_its_apps() {
    let server = Server::start(|_| chat::streamed(&["Rewritten."], Duration::ZERO));
    let mut r = rig(Options {
        rewrite: rewriting(&server, 5_000),
        profiles: vec![Profile {
            name: "Terminal".into(),
            apps: vec!["xterm".into()],
            rewrite: Some(utter_rewrite::modes::OFF.into()),
            ..Profile::default()
        }],
        ..Options::default()
    });
    *r.focus.lock().unwrap() = Ok(FocusedApp::new("xterm", []));
    dictate(&mut r);
    assert_eq!(r.delivered(), ["one two"]);
    assert_eq!(report(&r), None);
    assert_eq!(server.requests(), 0, "nothing was sent");
    *r.focus.lock().unwrap() = Ok(FocusedApp::new("gedit", []));
    dictate(&mut r);
    assert_eq!(r.delivered(), ["one two", "Rewritten."]);
}

#[test]
fn cancel_while_the_model_answers_delivers_nothing() {
    let server = Server::start(|_| {
        chat::streamed(&["Late."], Duration::ZERO).delay(Duration::from_millis(800))
    });
    let mut r = rig(Options {
        rewrite: rewriting(&server, 5_000),
        ..Options::default()
    });
    r.key(TriggerKey::Main, true);
    r.hear(tone(400));
    r.key(TriggerKey::Main, false);
    let deadline = Instant::now() + Duration::from_secs(10);
    while !matches!(r.service.phase, Phase::Rewriting { .. }) {
        assert!(Instant::now() < deadline, "{:?}", r.kinds());
        r.service.tick();
        std::thread::sleep(Duration::from_millis(2));
    }
    r.key(TriggerKey::Cancel, true);
    r.settle();
    std::thread::sleep(Duration::from_millis(1000));
    r.service.tick();
    assert!(r.delivered().is_empty());
    assert_eq!(r.record_status(), ["cancelled"]);
}

/// A spoken command over selected text: press the command key, speak,
/// release.
fn command(r: &mut Rig) {
    r.say_two_words(TriggerKey::Command);
}

#[test]
fn a_spoken_command_replaces_the_selection_with_the_models_answer() {
    let server = Server::start(|_| chat::streamed(&["THE REPORT ", "IS LATE"], Duration::ZERO));
    let mut r = rig(Options {
        rewrite: rewriting(&server, 5_000),
        ..Options::default()
    });
    *r.selection.lock().unwrap() = Some("the report is late".into());
    command(&mut r);
    assert_eq!(r.delivered(), ["THE REPORT IS LATE"]);
    assert!(
        !r.hows.lock().unwrap()[0].trailing_space,
        "nothing is added after the selection's replacement"
    );
    let started = r.events.lock().unwrap().iter().find_map(|e| match e {
        DictationEvent::RecordingStarted { command, .. } => command.clone(),
        _ => None,
    });
    assert_eq!(
        started,
        Some(CommandStarted {
            selection_chars: 18
        })
    );
    let report = report(&r).unwrap();
    assert_eq!(report.mode, COMMAND_MODE);
    assert_eq!(report.dictated, "one two", "the instruction as said");
    assert_eq!(report.selection.as_deref(), Some("the report is late"));
    let request: serde_json::Value =
        serde_json::from_str(&server.received()[0].body_text()).unwrap();
    let sent = request.to_string();
    assert!(
        sent.contains("one two") && sent.contains("the report is late"),
        "{sent}"
    );
    // The next press of the main key is a dictation again, not rewritten
    // in command mode.
    dictate(&mut r);
    assert_eq!(server.requests(), 2);
    assert_eq!(report_modes(&r), ["command", "clean-up"]);
}

fn report_modes(r: &Rig) -> Vec<String> {
    r.events
        .lock()
        .unwrap()
        .iter()
        .filter_map(|e| match e {
            DictationEvent::TextDelivered {
                rewrite: Some(report),
                ..
            } => Some(report.mode.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn a_command_the_model_fails_leaves_the_selection_alone_and_says_why() {
    let server = Server::start(|_| chat::error(500, "model crashed"));
    let mut r = rig(Options {
        rewrite: rewriting(&server, 5_000),
        ..Options::default()
    });
    *r.selection.lock().unwrap() = Some("keep me".into());
    command(&mut r);
    assert!(r.delivered().is_empty(), "{:?}", r.delivered());
    let report = report(&r).unwrap();
    assert_eq!(report.dictated, "one two", "what was said is kept");
    assert!(matches!(report.notice, Some(Notice::ServerError { .. })));
    assert!(
        r.notices()
            .iter()
            .any(|n| n.starts_with("The command was not carried out; the selection is unchanged")),
        "{:?}",
        r.notices()
    );
}

#[test]
fn the_command_key_without_the_rewrite_says_what_to_turn_on() {
    let mut r = rig(Options::default());
    r.key(TriggerKey::Command, true);
    r.key(TriggerKey::Command, false);
    assert!(r.kinds().contains(&"error".to_string()), "{:?}", r.kinds());
    assert!(matches!(r.service.phase, Phase::Idle));
    assert!(r.delivered().is_empty());
}
