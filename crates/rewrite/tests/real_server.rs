//! The rewrite against a real llama.cpp server (PyPI xllamacpp) running a
//! small real model (SmolLM2-135M): every request carries a token cap sized
//! to its input, the server keeps it, and at the deadline the connection
//! closes and the server stops generating. The model's words are no rewrite
//! (it wanders), so nothing here judges them: protocol, limits and timing.
//! Needs `bash scripts/local-llm.sh` (run by `scripts/bootstrap.sh test`).
//! Unix only, as that script and the test-support helpers it uses are.
#![cfg(unix)]

use std::time::{Duration, Instant};

use utter_rewrite::{Notice, Outcome, ProviderConfig, ProviderKind, RewriteConfig, Rewriter};
use utter_test_support::desktop::wait_until;
use utter_test_support::llm::LlamaServer;

const SAID: &str = "um so send the the report to ana by friday and copy in the team";

fn config(server: &LlamaServer, budget_ms: u32) -> RewriteConfig {
    RewriteConfig {
        enabled: true,
        provider: ProviderConfig {
            kind: ProviderKind::LlamaCpp,
            base_url: Some(server.base_url()),
            model: "smollm2".into(),
            time_budget_ms: budget_ms,
        },
        ..RewriteConfig::default()
    }
}

/// The server's one slot: whether it is generating, and the cap it was given.
fn slot(server: &LlamaServer) -> serde_json::Value {
    let (status, body) = server.get("/slots").expect("the server's /slots");
    assert_eq!(status, 200, "{body}");
    let slots: serde_json::Value = serde_json::from_str(&body).expect("/slots is JSON");
    slots[0].clone()
}

fn generating(server: &LlamaServer) -> bool {
    slot(server)["is_processing"] == true
}

#[test]
fn each_rewrite_carries_a_cap_sized_to_its_input_and_the_real_server_keeps_it() {
    let server = LlamaServer::start();
    let rewriter = Rewriter::new().unwrap();
    let config = config(&server, 60_000);
    let long = [SAID; 6].join(" ");
    let mut caps = Vec::new();
    for said in [SAID, long.as_str()] {
        let before = server.counter("tokens_predicted_total");
        let outcome = rewriter.rewrite(&config, None, "clean-up", said, &[]);
        match &outcome {
            Outcome::Rewritten {
                model,
                first_token,
                total,
                ..
            } => {
                // The served alias comes back, not the name asked for.
                assert!(model.contains("SmolLM2"), "{model}");
                assert!(first_token <= total, "{outcome:?}");
            }
            // What a wandering small model earns; never a protocol failure.
            Outcome::Kept { notice, .. } => assert!(
                matches!(
                    notice,
                    Notice::TooLong { .. }
                        | Notice::Truncated
                        | Notice::Refusal
                        | Notice::EmptyAnswer
                ),
                "{notice:?}"
            ),
        }
        wait_until("the slot to be idle", Duration::from_secs(10), || {
            !generating(&server)
        });
        let cap = slot(&server)["params"]["n_predict"]
            .as_u64()
            .expect("the slot shows the request's n_predict");
        let predicted = server.counter("tokens_predicted_total") - before;
        assert!(
            predicted <= cap as f64,
            "{predicted} tokens for a cap of {cap}"
        );
        let chars = said.chars().count() as u64;
        assert!(
            cap >= chars && cap <= 3 * chars + 200 + 512,
            "{chars} characters: a cap of {cap}"
        );
        caps.push(cap);
    }
    assert!(caps[1] > caps[0], "the cap grows with the input: {caps:?}");
}

#[test]
fn at_the_deadline_the_connection_closes_and_the_real_server_stops_generating() {
    let server = LlamaServer::start();
    let rewriter = Rewriter::new().unwrap();
    let budget = Duration::from_millis(1_500);
    let config = config(&server, budget.as_millis() as u32);
    // Warm the model once, so that the timed request spends its budget generating.
    rewriter.rewrite(&config, None, "clean-up", "hello there", &[]);
    wait_until("the slot to be idle", Duration::from_secs(30), || {
        !generating(&server)
    });
    let before = server.counter("tokens_predicted_total");
    let started = Instant::now();
    let outcome = rewriter.command(
        &config,
        None,
        "write a very long story about a dragon, at least three thousand words, in many chapters",
        None,
        &[],
    );
    let returned = started.elapsed();
    match outcome {
        Outcome::Kept { notice, .. } => {
            assert_eq!(notice, Notice::TimedOut { after_ms: 1_500 });
        }
        other => panic!("a story of thousands of words within 1.5 s: {other:?}"),
    }
    assert!(
        returned >= budget && returned < budget + Duration::from_millis(400),
        "returned after {returned:?}"
    );
    // The server learns of the closed connection when it next writes: its
    // next token, or its first once it has read the prompt (seconds on two
    // busy cores).
    wait_until(
        "the server to stop generating",
        Duration::from_secs(5),
        || !generating(&server),
    );
    let stopped = started.elapsed();
    let slot = slot(&server);
    let cap = slot["params"]["n_predict"].as_u64().unwrap();
    let predicted = server.counter("tokens_predicted_total") - before;
    std::thread::sleep(Duration::from_secs(1));
    let later = server.counter("tokens_predicted_total") - before;
    assert_eq!(predicted, later, "nothing generated after the stop");
    assert!(
        predicted > 0.0 && predicted < cap as f64 / 4.0,
        "{predicted} tokens of a cap of {cap}: generation stopped early"
    );
    eprintln!(
        "deadline {budget:?}: returned after {returned:?}, server idle after {stopped:?}, \
         {predicted} tokens generated of a cap of {cap}"
    );
}
