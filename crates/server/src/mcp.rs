//! MCP (Model Context Protocol) for AI agents: over stdio (`utter mcp`,
//! newline-delimited JSON-RPC 2.0) and over HTTP at the server's `/mcp`
//! (the streamable-HTTP transport, answered with plain JSON: each POSTed
//! request gets its reply as the response body, a notification 202, and
//! there is no server-initiated stream, so GET is 405). The `initialize`
//! handshake, and the tools `transcribe_file` (a path the agent names: the
//! only way a request reaches the filesystem), `list_models` and, over stdio
//! only (an agent the user started; never to a socket), `listen`: the user
//! answers by voice, from the default microphone. Over stdio the model
//! loads on first use and stays loaded for the session; over HTTP a
//! `transcribe_file` call is a job in the server's queue like any upload
//! ([`as_file_call`]: the same bound, 503-style refusal and warm engines),
//! and the rest of the session (handshake, `list_models`) needs no engine.

use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::time::Duration;

use serde_json::{json, Value};
use utter_core::export::{self, Format};
use utter_core::transcribe::{transcribe_file, FileError, FileOptions};
use utter_engine::vad::SpeechDetector;
use utter_engine::{Engine, EngineConfig, EngineError, UnsupportedLanguage};
use utter_models::ModelStore;

use crate::error::ApiError;
use crate::listen::{Heard, ListenLimits};
use crate::models::Catalog;

/// The revisions of the handshake this server speaks, newest last.
const PROTOCOL_VERSIONS: &[&str] = &["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

#[derive(Debug, thiserror::Error)]
pub enum McpError {
    #[error("standard input/output: {0}")]
    Io(#[from] std::io::Error),
}

/// Why a `transcribe_file` call failed. Its text is the tool's error result,
/// which the agent reads (and acts on: the arguments are the tool's own).
#[derive(Debug, thiserror::Error)]
enum ToolError {
    #[error("`path` is required: the audio file's absolute path")]
    NoPath,
    #[error("{} is not a file", .0.display())]
    NotAFile(PathBuf),
    #[error("unknown format `{0}`: use text, srt, vtt or json")]
    UnknownFormat(String),
    /// No such model, or none installed: the HTTP API's error, whose message is the text.
    #[error("{}", .0.message)]
    Model(ApiError),
    #[error("the speech engine could not load `{model}`: {source}")]
    EngineLoad {
        model: String,
        #[source]
        source: EngineError,
    },
    #[error("the voice detector could not load: {0}")]
    DetectorLoad(#[source] EngineError),
    #[error(transparent)]
    Language(#[from] UnsupportedLanguage),
    #[error(transparent)]
    Transcribe(#[from] FileError),
    #[error("no voice detector is installed, and listening needs one to hear when you stop (run `utter models install-default`)")]
    NoDetector,
    #[error(transparent)]
    Listen(#[from] crate::listen::ListenError),
    #[error("nothing was said within {0} s")]
    NothingHeard(u64),
    #[error("{0} is kept: what was said is not lost")]
    Kept(String),
}

/// A loaded model and detector, kept between calls.
struct Loaded {
    name: String,
    engine: Engine,
    detector: Option<SpeechDetector>,
}

impl Loaded {
    /// `path` transcribed in `language` (the model detects it when `None`).
    fn transcribe(
        &mut self,
        path: &std::path::Path,
        language: Option<String>,
    ) -> Result<utter_core::transcript::FileTranscript, FileError> {
        let options = FileOptions {
            language,
            ..FileOptions::default()
        };
        transcribe_file(
            std::slice::from_ref(&self.engine),
            self.detector.as_mut().into(),
            path,
            &self.name,
            &options,
            |_| {},
        )
    }
}

/// A call's `language`: an ISO code or a name; none (or `auto`) detects it.
fn language_arg(args: &Value) -> Option<String> {
    args["language"]
        .as_str()
        .filter(|l| !l.is_empty() && *l != "auto")
        .map(crate::languages::code_for)
}

pub struct Session {
    catalog: Catalog,
    loaded: Option<Loaded>,
    /// `listen` is offered (stdio: the agent runs as the user, in front of them).
    microphone: bool,
}

/// Answers requests from standard input until it closes.
pub fn serve_stdio(store: ModelStore) -> Result<(), McpError> {
    let mut session = Session::new(store).with_microphone();
    let stdin = std::io::stdin();
    let mut stdout = std::io::stdout();
    for line in stdin.lock().lines() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let reply = match serde_json::from_str::<Value>(&line) {
            Ok(message) => session.handle(&message),
            Err(e) => Some(error_reply(Value::Null, -32700, &format!("not JSON: {e}"))),
        };
        if let Some(reply) = reply {
            writeln!(stdout, "{reply}")?;
            stdout.flush()?;
        }
    }
    Ok(())
}

fn error_reply(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

fn tool_text(text: String, is_error: bool) -> Value {
    json!({"content": [{"type": "text", "text": text}], "isError": is_error})
}

/// Every tool a session can offer, in the order `tools/list` gives them;
/// `listen` only where the user's microphone is offered (stdio). The CLI's
/// help lists them from here.
pub const TOOLS: [&str; 3] = ["transcribe_file", "list_models", "listen"];

/// The tools a session offers.
fn offered(microphone: bool) -> &'static [&'static str] {
    if microphone {
        &TOOLS
    } else {
        &TOOLS[..2]
    }
}

fn tool_names(microphone: bool) -> String {
    match offered(microphone) {
        [first @ .., last] => format!("{} or {last}", first.join(", ")),
        [] => String::new(),
    }
}

fn tools(microphone: bool) -> Value {
    let tools = json!({"tools": [
        {
            "name": "transcribe_file",
            "description": "Transcribe an audio or video file on this computer with Utter's local speech engine (nothing leaves the machine). Returns the text, or subtitles.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "Absolute path of the audio or video file (wav, flac, mp3, ogg, opus, m4a, mp4, webm, mkv...)"},
                    "language": {"type": "string", "description": "ISO 639-1 code of the spoken language, e.g. en; omit to detect"},
                    "format": {"type": "string", "enum": ["text", "srt", "vtt", "json"], "description": "text (default), srt or vtt subtitles, or json with timed segments"},
                    "model": {"type": "string", "description": "An installed model's name (see list_models); omit for the default"}
                },
                "required": ["path"]
            }
        },
        {
            "name": "list_models",
            "description": "List the speech models installed for Utter, with their languages and whether they translate.",
            "inputSchema": {"type": "object", "properties": {}}
        },
        {
            "name": "listen",
            "description": "Ask the user something out loud and get their spoken answer: records the default microphone until they have spoken and paused, transcribes it on this computer (nothing leaves the machine) and returns the text. Tell the user you are listening before calling it.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "wait_seconds": {"type": "number", "description": "How long to wait for the user to start speaking (default 15)"},
                    "pause_seconds": {"type": "number", "description": "The pause that ends the answer (default 1.5)"},
                    "max_seconds": {"type": "number", "description": "The longest answer (default 120)"},
                    "language": {"type": "string", "description": "ISO 639-1 code of the spoken language, e.g. en; omit to detect"},
                    "model": {"type": "string", "description": "An installed model's name (see list_models); omit for the default"}
                }
            }
        }
    ]});
    let offered = offered(microphone);
    let tools: Vec<Value> = tools["tools"]
        .as_array()
        .expect("a list")
        .iter()
        .filter(|tool| offered.iter().any(|name| tool["name"] == *name))
        .cloned()
        .collect();
    json!({ "tools": tools })
}

impl Session {
    pub fn new(store: ModelStore) -> Self {
        Self {
            catalog: Catalog::new(store),
            loaded: None,
            microphone: false,
        }
    }

    /// Offers `listen` (the default microphone) to this session's agent.
    pub fn with_microphone(mut self) -> Self {
        self.microphone = true;
        self
    }

    /// The reply to one JSON-RPC message; none for a notification.
    pub fn handle(&mut self, message: &Value) -> Option<Value> {
        let method = message["method"].as_str().unwrap_or_default();
        // A notification (no id) gets no answer.
        let id = message.get("id")?.clone();
        let result = match method {
            "initialize" => {
                let asked = message["params"]["protocolVersion"]
                    .as_str()
                    .unwrap_or_default();
                let version = PROTOCOL_VERSIONS
                    .iter()
                    .find(|v| **v == asked)
                    .unwrap_or(PROTOCOL_VERSIONS.last().expect("a version"));
                json!({
                    "protocolVersion": version,
                    "capabilities": {"tools": {"listChanged": false}},
                    "serverInfo": {"name": "utter", "version": env!("CARGO_PKG_VERSION")},
                    "instructions": "Utter transcribes audio files on this computer with a local speech model."
                })
            }
            "ping" => json!({}),
            "tools/list" => tools(self.microphone),
            "tools/call" => {
                let params = &message["params"];
                match params["name"].as_str().unwrap_or_default() {
                    "transcribe_file" => self.transcribe(&params["arguments"]),
                    "list_models" => self.list_models(),
                    "listen" if self.microphone => match self.try_listen(&params["arguments"]) {
                        Ok(text) => tool_text(text, false),
                        Err(e) => tool_text(e.to_string(), true),
                    },
                    other => {
                        return Some(error_reply(
                            id,
                            -32602,
                            &format!(
                                "unknown tool `{other}`: use {}",
                                tool_names(self.microphone)
                            ),
                        ))
                    }
                }
            }
            other => {
                return Some(error_reply(
                    id,
                    -32601,
                    &format!("method `{other}` is not offered"),
                ))
            }
        };
        Some(json!({"jsonrpc": "2.0", "id": id, "result": result}))
    }

    fn list_models(&self) -> Value {
        match self.catalog.speech() {
            Ok(models) => {
                let list: Vec<Value> = models
                    .into_iter()
                    .map(|m| {
                        let caps = m.capabilities.unwrap_or_default();
                        json!({"name": m.name, "languages": caps.languages, "translates": caps.translates})
                    })
                    .collect();
                tool_text(
                    serde_json::to_string_pretty(&list).unwrap_or_default(),
                    false,
                )
            }
            Err(e) => tool_text(e.message, true),
        }
    }

    fn transcribe(&mut self, args: &Value) -> Value {
        match self.try_transcribe(args) {
            Ok(text) => tool_text(text, false),
            Err(e) => tool_text(e.to_string(), true),
        }
    }

    /// The model `args` names (or the default) and the voice detector,
    /// loaded once and kept for the next call.
    fn load(&mut self, args: &Value) -> Result<&mut Loaded, ToolError> {
        let model = self
            .catalog
            .named_or_default(args["model"].as_str())
            .map_err(ToolError::Model)?;
        if self.loaded.as_ref().is_none_or(|l| l.name != model.name) {
            self.loaded = None; // one model at a time
            let engine =
                Engine::start(EngineConfig::new(model.path.clone())).map_err(|source| {
                    ToolError::EngineLoad {
                        model: model.name.clone(),
                        source,
                    }
                })?;
            let store = self.catalog.store();
            let detector = match store.vad().ok().flatten() {
                Some(vad) => Some(
                    SpeechDetector::load(&store.path_of(&vad)).map_err(ToolError::DetectorLoad)?,
                ),
                None => None,
            };
            self.loaded = Some(Loaded {
                name: model.name.clone(),
                engine,
                detector,
            });
        }
        Ok(self.loaded.as_mut().expect("loaded above"))
    }

    /// The user's spoken answer, or why there is none.
    fn try_listen(&mut self, args: &Value) -> Result<String, ToolError> {
        let seconds = |key: &str, default: f64| {
            Duration::from_secs_f64(
                args[key]
                    .as_f64()
                    .filter(|s| *s > 0.0)
                    .unwrap_or(default)
                    .min(600.0),
            )
        };
        let limits = ListenLimits {
            wait: seconds("wait_seconds", 15.0),
            pause: seconds("pause_seconds", 1.5),
            max: seconds("max_seconds", 120.0),
        };
        let language = language_arg(args);
        let loaded = self.load(args)?;
        loaded.engine.info().check_language(language.as_deref())?;
        let detector = loaded.detector.as_mut().ok_or(ToolError::NoDetector)?;
        let dir = utter_base::paths::recordings_dir();
        let wav = match crate::listen::record_answer(detector, &dir, limits)? {
            Heard::Speech(wav) => wav,
            Heard::Nothing => return Err(ToolError::NothingHeard(limits.wait.as_secs())),
        };
        let transcript = loaded
            .transcribe(&wav, language)
            .map_err(|e| ToolError::Kept(format!("{e}; the recording {}", wav.display())))?;
        let _ = std::fs::remove_file(&wav);
        Ok(transcript.text())
    }

    /// The text, or what went wrong in words an agent can act on.
    fn try_transcribe(&mut self, args: &Value) -> Result<String, ToolError> {
        let call = FileCall::parse(args)?;
        // Over stdio the agent runs as the user: any file the user can read.
        if !call.path.is_file() {
            return Err(ToolError::NotAFile(call.path));
        }
        let loaded = self.load(args)?;
        loaded
            .engine
            .info()
            .check_language(call.language.as_deref())?;
        let transcript = loaded.transcribe(&call.path, call.language.clone())?;
        Ok(render(&transcript, call.format))
    }
}

/// A `transcribe_file` call's arguments, checked.
pub struct FileCall {
    pub path: PathBuf,
    pub format: Format,
    /// `None`: detected.
    pub language: Option<String>,
    /// `None` (or empty): the default files model.
    pub model: Option<String>,
}

impl FileCall {
    fn parse(args: &Value) -> Result<Self, ToolError> {
        let path = args["path"]
            .as_str()
            .filter(|p| !p.is_empty())
            .map(PathBuf::from)
            .ok_or(ToolError::NoPath)?;
        let format = match args["format"].as_str().unwrap_or("text") {
            "text" => Format::Txt,
            "srt" => Format::Srt,
            "vtt" => Format::Vtt,
            "json" => Format::Json,
            other => return Err(ToolError::UnknownFormat(other.to_string())),
        };
        Ok(Self {
            path,
            format,
            language: language_arg(args),
            model: args["model"].as_str().map(str::to_string),
        })
    }
}

/// Opens a `transcribe_file` path for a caller over HTTP: only under the
/// folders the user named (`--mcp-folder`), and only a regular file (see
/// `access`). The refusal is the tool's error text; it never tells whether
/// a path outside the folders exists.
pub fn open_for_http(
    folders: &crate::access::AllowedFolders,
    path: &std::path::Path,
) -> Result<std::fs::File, String> {
    use crate::access::OpenRefused;
    if folders.is_empty() {
        return Err(
            "transcribe_file is off over HTTP: this server reads no files for agents \
                    unless started with --mcp-folder DIR (the folders they may read). \
                    `utter mcp` (stdio) reads any file the user can."
                .into(),
        );
    }
    folders.open(path).map_err(|refused| match refused {
        OpenRefused::NotAllowed => format!(
            "{} is not a file this server may read: only files under {} (--mcp-folder)",
            path.display(),
            folders
                .list()
                .iter()
                .map(|f| f.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        OpenRefused::NotAFile => format!("{} is not a file", path.display()),
    })
}

/// A tool call's error result.
pub fn tool_error_reply(id: Value, text: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": tool_text(text.to_string(), true)})
}

/// When `message` calls the `transcribe_file` tool: its id, and its checked
/// arguments or the tool's error result. The HTTP server runs such calls
/// through its job queue, with every other request (one bound, one set of
/// warm engines, 503s past it), not on an engine of the session's own.
pub fn as_file_call(message: &Value) -> Option<(Value, Result<FileCall, Value>)> {
    let id = message.get("id")?.clone();
    let params = &message["params"];
    if message["method"] != "tools/call" || params["name"] != "transcribe_file" {
        return None;
    }
    let call = FileCall::parse(&params["arguments"])
        .map_err(|e| json!({"jsonrpc": "2.0", "id": id, "result": tool_text(e.to_string(), true)}));
    Some((id, call))
}

/// The reply to a `transcribe_file` call: the transcript as `format` asks,
/// or the error in words an agent can act on.
pub fn file_call_reply(
    id: Value,
    format: Format,
    result: Result<utter_core::transcript::FileTranscript, crate::error::ApiError>,
) -> Value {
    let result = match result {
        Ok(transcript) => tool_text(render(&transcript, format), false),
        // No header reaches an agent: a full queue's wait goes in the words.
        Err(e) => match e.retry_after {
            Some(seconds) => tool_text(
                format!("Every engine worker is busy and the queue is full: retry in {seconds} s."),
                true,
            ),
            None => tool_text(e.message, true),
        },
    };
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

/// A transcript as a tool's text, its warnings after it.
fn render(transcript: &utter_core::transcript::FileTranscript, format: Format) -> String {
    let mut text = export::render(transcript, format);
    for warning in &transcript.warnings {
        text.push_str(&format!("\n[warning: {warning}]"));
    }
    text.trim_end().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tool's error results, word for word: an agent reads them.
    #[test]
    fn a_call_that_cannot_be_done_says_why_in_the_tools_result() {
        let models = tempfile::tempdir().unwrap();
        let mut session = Session::new(ModelStore::new(models.path()));
        let audio = tempfile::NamedTempFile::new().unwrap();
        let audio_path = audio.path().to_str().unwrap().to_string();
        let missing = models.path().join("missing.wav");
        let cases = [
            (
                json!({}),
                "`path` is required: the audio file's absolute path".to_string(),
            ),
            (
                json!({"path": missing}),
                format!("{} is not a file", missing.display()),
            ),
            (
                json!({"path": audio_path, "format": "doc"}),
                "unknown format `doc`: use text, srt, vtt or json".to_string(),
            ),
            (
                json!({"path": audio_path}),
                "No speech model is installed on this server. Install one with Utter, then retry."
                    .to_string(),
            ),
        ];
        for (args, text) in cases {
            assert_eq!(
                session.transcribe(&args),
                json!({"content": [{"type": "text", "text": text}], "isError": true}),
                "{args}"
            );
        }
    }

    /// `listen` records the microphone: offered over stdio (the user's own
    /// agent), never over the HTTP server, where it is an unknown tool.
    #[test]
    fn listening_is_offered_over_stdio_only() {
        let models = tempfile::tempdir().unwrap();
        let names = |session: &mut Session| -> Vec<String> {
            let reply = session
                .handle(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
                .unwrap();
            reply["result"]["tools"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["name"].as_str().unwrap().to_string())
                .collect()
        };
        let mut http = Session::new(ModelStore::new(models.path()));
        assert_eq!(names(&mut http), ["transcribe_file", "list_models"]);
        let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "listen", "arguments": {}}});
        let refused = http.handle(&call).unwrap();
        assert_eq!(refused["error"]["code"], -32602, "{refused}");
        let mut stdio = Session::new(ModelStore::new(models.path())).with_microphone();
        assert_eq!(names(&mut stdio), TOOLS);
    }

    /// Random JSON-RPC-shaped messages (a fixed budget of fuzzing in every
    /// `npm test`): each gets a reply or none, never a panic.
    #[test]
    fn mutated_messages_get_a_reply_or_none() {
        let models = tempfile::tempdir().unwrap();
        let mut session = Session::new(ModelStore::new(models.path()));
        let mut seed = 0x004D_4350_u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let leaves = [
            json!(null),
            json!(1),
            json!(-1.5e300),
            json!("transcribe_file"),
            json!("tools/call"),
            json!("/dev/zero"),
            json!("initialize"),
            json!([]),
            json!({}),
            json!(true),
        ];
        for _ in 0..3_000 {
            let mut pick = || leaves[(next() % leaves.len() as u64) as usize].clone();
            let arguments =
                json!({"path": pick(), "format": pick(), "language": pick(), "model": pick()});
            let message = json!({
                "jsonrpc": pick(),
                "id": pick(),
                "method": pick(),
                "params": {"name": pick(), "arguments": arguments, "protocolVersion": pick()},
            });
            let _ = as_file_call(&message);
            // `/dev/zero` is no regular file: refused before any engine.
            let _ = session.handle(&message);
        }
    }
}
