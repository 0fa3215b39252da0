//! `utter rewrite`: text from standard input rewritten by a language model
//! (an OpenAI-compatible chat-completions server) in a mode, for scripts.
//! The text as given comes out whenever the model fails or is too slow, with
//! the reason on standard error: what was said is never lost.

use std::io::{Read, Write};
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Args;
use utter_core::settings::parse_value;
use utter_rewrite::{KeyStore, Outcome, ProviderConfig, ProviderKind, RewriteConfig, Rewriter};

#[derive(Args)]
pub struct RewriteArgs {
    /// The mode: clean-up, formal, email, bullet-list or code-comment
    #[arg(long, default_value = utter_rewrite::modes::CLEAN_UP)]
    mode: String,
    /// The server: ollama, lm-studio, llama-cpp, vllm (local, no key), openai, openrouter, groq,
    /// anthropic (the key from the system keychain), or custom
    #[arg(long, default_value = "ollama", value_parser = parse_value::<ProviderKind>)]
    provider: ProviderKind,
    /// The server's address [default: the provider's usual one, e.g. http://localhost:11434/v1]
    #[arg(long)]
    base_url: Option<String>,
    /// The model name the server knows (e.g. llama3.2:3b)
    #[arg(long)]
    model: String,
    /// The longest wait for the whole answer, in ms; past it the text comes out as given
    #[arg(long, default_value_t = utter_rewrite::DEFAULT_TIME_BUDGET_MS)]
    budget_ms: u32,
    /// Words and names to keep spelled as written (repeatable)
    #[arg(long = "word", value_name = "WORD")]
    vocabulary: Vec<String>,
}

/// Exit status when the text came out as given (the reason is on stderr).
pub const KEPT: u8 = 3;

pub fn run(args: RewriteArgs) -> Result<ExitCode> {
    let mut text = String::new();
    std::io::stdin()
        .read_to_string(&mut text)
        .context("cannot read the text from standard input")?;
    let provider = ProviderConfig {
        kind: args.provider,
        base_url: args.base_url,
        model: args.model,
        time_budget_ms: args.budget_ms,
    };
    let config = RewriteConfig {
        enabled: true, // asked for on the command line
        provider,
        ..RewriteConfig::default()
    };
    let key = match KeyStore::default().key_for(&config.provider) {
        Ok(key) => key,
        Err(e) => {
            eprintln!("warning: {e}");
            None
        }
    };
    let rewriter = Rewriter::new().context("cannot start an HTTP client")?;
    let outcome = rewriter.rewrite(&config, key.as_ref(), &args.mode, &text, &args.vocabulary);
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{}", outcome.text().trim_end())?;
    Ok(match outcome {
        Outcome::Rewritten {
            model,
            first_token,
            total,
            ..
        } => {
            tracing::info!(
                "rewritten by {model}: first token after {} ms, {} ms in all",
                first_token.as_millis(),
                total.as_millis()
            );
            ExitCode::SUCCESS
        }
        Outcome::Kept { notice, .. } => {
            eprintln!("kept as given: {notice}");
            ExitCode::from(KEPT)
        }
    })
}
