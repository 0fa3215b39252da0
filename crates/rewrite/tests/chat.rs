//! The rewrite against a chat-completions server on a loopback socket: the
//! answer streams in; every way the server can fail (slow, an error status,
//! a dropped connection, an empty, endless or refusing answer) gives back the
//! words as said, with a notice, within the time budget.

mod common;

use std::net::TcpListener;
use std::time::{Duration, Instant};

use common::{body, config, good_answer, server, CHAT, SAID};
use utter_rewrite::{
    ApiKey, Mode, Notice, Outcome, ProviderConfig, ProviderKind, RewriteConfig, Rewriter,
};
use utter_test_support::chat;
use utter_test_support::http::Reply;

fn rewriter() -> Rewriter {
    Rewriter::new().expect("an HTTP client")
}

/// Kept: the text as said, and the notice.
fn kept(outcome: Outcome) -> Notice {
    match outcome {
        Outcome::Kept { text, notice } => {
            assert_eq!(text, SAID, "the words as said come back");
            notice
        }
        other => panic!("expected the text kept, got {other:?}"),
    }
}

#[test]
fn a_streamed_rewrite_arrives_with_the_mode_prompt_and_vocabulary_sent() {
    let server = server(|| {
        chat::streamed(
            &["Send the ", "report to ", "Ana by ", "Friday."],
            Duration::from_millis(40),
        )
    });
    let config = config(&server, ProviderKind::LlamaCpp, 5_000);
    let vocabulary = vec!["Ana".to_string(), "Kubernetes".to_string()];
    let outcome = rewriter().rewrite(&config, None, "clean-up", SAID, &vocabulary);
    let Outcome::Rewritten {
        text,
        model,
        first_token,
        total,
    } = outcome
    else {
        panic!("expected a rewrite, got {outcome:?}");
    };
    assert_eq!(text, "Send the report to Ana by Friday.");
    assert_eq!(model, chat::MODEL);
    // The role chunk, then a pause before each piece: the first came after
    // one pause, the whole after four.
    assert!(first_token >= Duration::from_millis(40), "{first_token:?}");
    assert!(total >= Duration::from_millis(160), "{total:?}");
    assert!(first_token < total);

    let received = server.received();
    assert_eq!(received.len(), 1);
    assert_eq!(
        (received[0].method.as_str(), received[0].path.as_str()),
        ("POST", CHAT)
    );
    assert_eq!(received[0].header("content-type"), Some("application/json"));
    assert_eq!(
        received[0].header("authorization"),
        None,
        "a local server gets no key"
    );
    let body = body(&server, 0);
    assert_eq!(body["model"], "tiny");
    assert_eq!(body["stream"], true);
    assert_eq!(body["messages"][0]["role"], "system");
    let system = body["messages"][0]["content"].as_str().unwrap();
    assert!(
        system.contains(&config.find_mode("clean-up").unwrap().prompt),
        "{system}"
    );
    assert!(system.contains("Ana, Kubernetes"), "{system}");
    assert_eq!(body["messages"][1]["role"], "user");
    assert_eq!(body["messages"][1]["content"], SAID);
    assert!(body["max_tokens"].as_u64().is_some(), "{body}");
}

#[test]
fn every_request_caps_its_tokens_in_proportion_to_the_input() {
    let server = server(good_answer);
    let key = ApiKey::new("sk-test-123").unwrap();
    let long = SAID.repeat(20);
    let mut caps = Vec::new();
    for (kind, field) in [
        (ProviderKind::LlamaCpp, "max_tokens"),
        (ProviderKind::Ollama, "max_tokens"),
        (ProviderKind::Anthropic, "max_tokens"),
        (ProviderKind::OpenAi, "max_completion_tokens"),
        (ProviderKind::Groq, "max_completion_tokens"),
    ] {
        let config = config(&server, kind, 5_000);
        for said in [SAID, long.as_str()] {
            rewriter().rewrite(&config, Some(&key), "clean-up", said, &[]);
            let body = body(&server, server.received().len() - 1);
            let cap = body[field]
                .as_u64()
                .unwrap_or_else(|| panic!("{kind:?} sends {field}: {body}"));
            let other = if field == "max_tokens" {
                "max_completion_tokens"
            } else {
                "max_tokens"
            };
            assert!(body.get(other).is_none(), "{kind:?} sends one cap: {body}");
            caps.push((said.len(), cap));
        }
        // A command without a selection has nothing to measure: the longest answer.
        rewriter().command(&config, Some(&key), "write a haiku", None, &[]);
        let cap = body(&server, server.received().len() - 1)[field]
            .as_u64()
            .unwrap();
        assert!((1_000..=4_000).contains(&cap), "{kind:?}: {cap}");
    }
    let (short, long) = (caps[0], caps[1]);
    // Room for an answer three times the input with thinking, and no more
    // than a token per allowed character.
    for (chars, cap) in [short, long] {
        let chars = chars as u64;
        assert!(
            cap >= chars && cap <= chars * 3 + 200 + 512,
            "{chars} chars: cap {cap}"
        );
    }
    assert!(
        long.1 - short.1 >= (long.0 - short.0) as u64,
        "the cap grows with the input: {caps:?}"
    );
}

#[test]
fn an_edited_or_added_mode_sends_the_users_prompt() {
    let server = server(good_answer);
    let mut config = config(&server, ProviderKind::Ollama, 5_000);
    config.modes = vec![
        Mode {
            id: "formal".into(),
            name: "Formal".into(),
            prompt: "Write like a butler.".into(),
        },
        Mode {
            id: "pirate".into(),
            name: "Pirate".into(),
            prompt: "Talk like a pirate.".into(),
        },
    ];
    for (mode, prompt) in [
        ("formal", "Write like a butler."),
        ("pirate", "Talk like a pirate."),
    ] {
        let outcome = rewriter().rewrite(&config, None, mode, SAID, &[]);
        assert!(matches!(outcome, Outcome::Rewritten { .. }), "{outcome:?}");
        let n = server.received().len() - 1;
        let system = body(&server, n)["messages"][0]["content"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(system.contains(prompt), "{system}");
    }
}

#[test]
fn a_server_slower_than_the_budget_keeps_the_text_within_the_budget() {
    let budget = Duration::from_millis(600);
    let slack = Duration::from_millis(400);
    // Silent at first, then a token now and then: both outlast the budget.
    let silent = server(|| good_answer().delay(Duration::from_secs(5)));
    let trickle = server(|| {
        chat::streamed(
            &["Send ", "the ", "report ", "to ", "Ana."],
            Duration::from_millis(300),
        )
    });
    for server in [silent, trickle] {
        let config = config(&server, ProviderKind::LmStudio, 600);
        let started = Instant::now();
        let notice = kept(rewriter().rewrite(&config, None, "clean-up", SAID, &[]));
        let took = started.elapsed();
        assert_eq!(notice, Notice::TimedOut { after_ms: 600 });
        assert_eq!(notice.to_string(), "The model did not finish within 0.6 s.");
        assert!(took >= budget && took < budget + slack, "took {took:?}");
    }
}

#[test]
fn an_error_status_keeps_the_text_and_says_what_the_server_said() {
    let server = server(|| chat::error(500, "model crashed"));
    let config = config(&server, ProviderKind::Vllm, 5_000);
    let notice = kept(rewriter().rewrite(&config, None, "clean-up", SAID, &[]));
    assert_eq!(
        notice,
        Notice::ServerError {
            status: 500,
            detail: Some("model crashed".into())
        }
    );
    assert_eq!(
        notice.to_string(),
        "The server answered with error 500: model crashed."
    );
}

#[test]
fn a_connection_closed_mid_stream_keeps_the_text() {
    let server = server(|| good_answer().close_halfway());
    let config = config(&server, ProviderKind::Ollama, 5_000);
    let notice = kept(rewriter().rewrite(&config, None, "clean-up", SAID, &[]));
    assert_eq!(notice, Notice::ConnectionClosed);
}

#[test]
fn an_empty_answer_keeps_the_text() {
    for pieces in [
        &[][..],
        &["  ", "\n"][..],
        &["<think>Let me see.</think>", " "][..],
    ] {
        let server = server(move || chat::streamed(pieces, Duration::ZERO));
        let config = config(&server, ProviderKind::Ollama, 5_000);
        let notice = kept(rewriter().rewrite(&config, None, "clean-up", SAID, &[]));
        assert_eq!(notice, Notice::EmptyAnswer, "{pieces:?}");
    }
}

#[test]
fn an_oversized_answer_is_cut_off_early_and_keeps_the_text() {
    // 400 pieces, 20 ms apart: 8 s to send it all, far past the length limit.
    let pieces = vec!["and then some more words "; 400];
    let server = server(move || chat::streamed(&pieces, Duration::from_millis(20)));
    let config = config(&server, ProviderKind::Ollama, 10_000);
    let started = Instant::now();
    let notice = kept(rewriter().rewrite(&config, None, "clean-up", SAID, &[]));
    let Notice::TooLong {
        answer_chars,
        input_chars,
    } = notice
    else {
        panic!("expected too long, got {notice:?}");
    };
    assert_eq!(input_chars, SAID.chars().count() as u64);
    assert!(answer_chars > input_chars * 3, "{answer_chars}");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "not cut off: {:?}",
        started.elapsed()
    );
}

#[test]
fn a_refusal_keeps_the_text() {
    let server = server(|| {
        chat::streamed(
            &["I'm sorry, but ", "I can't help with that request."],
            Duration::ZERO,
        )
    });
    let config = config(&server, ProviderKind::Ollama, 5_000);
    let notice = kept(rewriter().rewrite(&config, None, "clean-up", SAID, &[]));
    assert_eq!(notice, Notice::Refusal);
}

#[test]
fn a_cut_off_answer_or_an_error_event_keeps_the_text() {
    let length = server(|| {
        let mut events = chat::events(&["Send the report"]);
        events[2] = chat::event("{}", r#""length""#);
        Reply::stream(events, Duration::ZERO)
    });
    let errored = server(|| {
        let mut events = chat::events(&["Send the "]);
        events.insert(
            2,
            "data: {\"error\":{\"message\":\"overloaded\"}}\n\n".into(),
        );
        Reply::stream(events, Duration::ZERO)
    });
    let notice = kept(rewriter().rewrite(
        &config(&length, ProviderKind::Ollama, 5_000),
        None,
        "clean-up",
        SAID,
        &[],
    ));
    assert_eq!(notice, Notice::Truncated);
    let notice = kept(rewriter().rewrite(
        &config(&errored, ProviderKind::Ollama, 5_000),
        None,
        "clean-up",
        SAID,
        &[],
    ));
    assert_eq!(
        notice,
        Notice::StreamError {
            message: "overloaded".into()
        }
    );
}

#[test]
fn a_server_that_does_not_stream_is_read_whole_and_a_web_page_is_unreadable() {
    let whole = server(|| {
        Reply::bytes(
            br#"{"model":"whole","choices":[{"message":{"role":"assistant","content":"Send the report to Ana by Friday."},"finish_reason":"stop"}]}"#
                .to_vec(),
        )
        .header("Content-Type", "application/json")
    });
    let outcome = rewriter().rewrite(
        &config(&whole, ProviderKind::Ollama, 5_000),
        None,
        "clean-up",
        SAID,
        &[],
    );
    assert_eq!(outcome.text(), "Send the report to Ana by Friday.");
    let page = server(|| {
        Reply::bytes(b"<html><body>Welcome</body></html>\n".to_vec())
            .header("Content-Type", "text/html")
    });
    let notice = kept(rewriter().rewrite(
        &config(&page, ProviderKind::Ollama, 5_000),
        None,
        "clean-up",
        SAID,
        &[],
    ));
    assert!(matches!(notice, Notice::Unreadable { .. }), "{notice:?}");
}

#[test]
fn a_server_that_is_not_there_keeps_the_text_at_once() {
    let port = {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let config = RewriteConfig {
        enabled: true,
        provider: ProviderConfig {
            kind: ProviderKind::LlamaCpp,
            base_url: Some(format!("http://127.0.0.1:{port}/v1")),
            model: "tiny".into(),
            time_budget_ms: 5_000,
        },
        ..RewriteConfig::default()
    };
    let started = Instant::now();
    let notice = kept(rewriter().rewrite(&config, None, "clean-up", SAID, &[]));
    assert!(started.elapsed() < Duration::from_secs(1));
    let Notice::Unreachable { url, .. } = &notice else {
        panic!("expected unreachable, got {notice:?}");
    };
    assert_eq!(url, &format!("http://127.0.0.1:{port}"));
}

#[test]
fn nothing_is_sent_while_off_unset_or_without_a_required_key() {
    let server = server(good_answer);
    let mut off = config(&server, ProviderKind::Ollama, 5_000);
    off.enabled = false;
    let notice = kept(rewriter().rewrite(&off, None, "clean-up", SAID, &[]));
    assert!(matches!(notice, Notice::NotConfigured { .. }), "{notice:?}");

    let mut no_model = config(&server, ProviderKind::Ollama, 5_000);
    no_model.provider.model = " ".into();
    let notice = kept(rewriter().rewrite(&no_model, None, "clean-up", SAID, &[]));
    assert_eq!(
        notice.to_string(),
        "AI rewriting is not set up: no model is chosen."
    );

    let unknown_mode = kept(rewriter().rewrite(
        &config(&server, ProviderKind::Ollama, 5_000),
        None,
        "nope",
        SAID,
        &[],
    ));
    assert!(matches!(unknown_mode, Notice::NotConfigured { .. }));

    let hosted = config(&server, ProviderKind::OpenAi, 5_000);
    let notice = kept(rewriter().rewrite(&hosted, None, "clean-up", SAID, &[]));
    assert_eq!(
        notice,
        Notice::KeyMissing {
            provider: "OpenAI".into()
        }
    );
    assert_eq!(server.requests(), 0, "no request left the app");
}

#[test]
fn command_mode_sends_the_instruction_and_the_selection() {
    let server = server(|| chat::streamed(&["Dear Ana, ", "please send it."], Duration::ZERO));
    let mut config = config(&server, ProviderKind::Ollama, 5_000);
    let r = rewriter();
    let outcome = r.command(
        &config,
        None,
        "make this formal",
        Some("hey ana can u send it"),
        &["Ana".into()],
    );
    assert_eq!(outcome.text(), "Dear Ana, please send it.");
    let sent = body(&server, 0);
    assert_eq!(
        sent["messages"][1]["content"],
        "Instruction: make this formal\n\nText:\nhey ana can u send it"
    );
    let system = sent["messages"][0]["content"].as_str().unwrap();
    assert!(
        system.starts_with("You carry out a spoken instruction."),
        "{system}"
    );
    assert!(system.contains("keep them so: Ana."), "{system}");

    // Without a selection: the instruction alone, under the user's prompt.
    config.command_prompt = Some("Answer briefly.".into());
    let outcome = r.command(&config, None, "write a greeting", None, &[]);
    assert_eq!(outcome.text(), "Dear Ana, please send it.");
    let sent = body(&server, 1);
    assert_eq!(sent["messages"][0]["content"], "Answer briefly.");
    assert_eq!(
        sent["messages"][1]["content"],
        "Instruction: write a greeting"
    );

    // Failing, it gives back the instruction (the selection stays as it is).
    let down = common::server(|| Reply::status(503));
    let outcome = r.command(
        &common::config(&down, ProviderKind::Ollama, 5_000),
        None,
        "make this formal",
        Some("hey"),
        &[],
    );
    assert_eq!(
        outcome,
        Outcome::Kept {
            text: "make this formal".into(),
            notice: Notice::ServerError {
                status: 503,
                detail: None
            }
        }
    );
}

#[test]
fn models_are_listed_from_the_server() {
    let server = server(good_answer);
    let config = config(&server, ProviderKind::LmStudio, 5_000);
    let models = rewriter()
        .models(&config.provider, None, Duration::from_secs(2))
        .unwrap();
    assert_eq!(models, ["tiny-a", "tiny-b"]);
    let received = server.received();
    assert_eq!(
        (received[0].method.as_str(), received[0].path.as_str()),
        ("GET", "/v1/models")
    );
}

#[test]
fn the_test_button_tries_the_provider_before_rewriting_is_on() {
    let server = server(good_answer);
    let mut config = config(&server, ProviderKind::Ollama, 5_000);
    config.enabled = false;
    let outcome = rewriter().test(&config.provider, None);
    assert!(matches!(outcome, Outcome::Rewritten { .. }), "{outcome:?}");
    assert_eq!(
        body(&server, 0)["messages"][1]["content"],
        utter_rewrite::TEST_SENTENCE
    );
}

#[test]
fn the_key_goes_only_to_the_configured_server_as_a_bearer_token() {
    let key = ApiKey::new("sk-test-only-for-this-server").unwrap();
    let server = server(good_answer);
    let r = rewriter();
    let hosted = config(&server, ProviderKind::OpenRouter, 5_000);
    let outcome = r.rewrite(&hosted, Some(&key), "clean-up", SAID, &[]);
    assert!(matches!(outcome, Outcome::Rewritten { .. }), "{outcome:?}");
    r.models(&hosted.provider, Some(&key), Duration::from_secs(2))
        .unwrap();
    for request in server.received() {
        assert_eq!(
            request.header("authorization"),
            Some("Bearer sk-test-only-for-this-server"),
            "{}",
            request.path
        );
        assert!(
            !request.body_text().contains(key.expose()),
            "the key is not in the body"
        );
        assert!(!request.path.contains(key.expose()), "nor in the URL");
    }

    // A local server never gets it, even if one is passed.
    let local = common::server(good_answer);
    r.rewrite(
        &config(&local, ProviderKind::Ollama, 5_000),
        Some(&key),
        "clean-up",
        SAID,
        &[],
    );
    assert_eq!(local.received()[0].header("authorization"), None);

    // A redirect is not followed: the key cannot travel to another server.
    let elsewhere = common::server(good_answer);
    let target = elsewhere.url("/v1/chat/completions");
    let redirecting = common::server(move || Reply::status(307).header("Location", &target));
    let notice = kept(r.rewrite(
        &config(&redirecting, ProviderKind::Custom, 5_000),
        Some(&key),
        "clean-up",
        SAID,
        &[],
    ));
    assert_eq!(
        notice,
        Notice::ServerError {
            status: 307,
            detail: None
        }
    );
    assert_eq!(elsewhere.requests(), 0);
}
