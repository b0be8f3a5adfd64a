//! The script: what the server answers, in order, and what it checks first.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::MockError;

/// A whole script. See `README.md` for the file format.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Script {
    /// Model name reported in replies; by default the request's `model` is echoed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Replies, one per request, in order.
    #[serde(default)]
    pub replies: Vec<Step>,
    /// Served (again and again) once `replies` is used up. Without it, a request past the
    /// end is a recorded failure answered with HTTP 400.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback: Option<Step>,
}

impl Script {
    /// A script with these steps.
    pub fn new(replies: impl IntoIterator<Item = Step>) -> Self {
        Self {
            model: None,
            replies: replies.into_iter().collect(),
            fallback: None,
        }
    }

    /// Reads a script file: `.json` as JSON, anything else as YAML (which also accepts
    /// JSON). A relative `body_file` is resolved against the script's folder.
    pub fn load(path: &Path) -> Result<Self, MockError> {
        let text = std::fs::read_to_string(path).map_err(|source| MockError::ScriptRead {
            path: path.to_owned(),
            source,
        })?;
        let is_json = path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("json"));
        let mut script = if is_json {
            Self::from_json(&text)
        } else {
            Self::from_yaml(&text)
        }
        .map_err(|message| MockError::ScriptParse {
            path: path.to_owned(),
            message,
        })?;
        let dir = path.parent().unwrap_or(Path::new("."));
        for step in script.replies.iter_mut().chain(script.fallback.as_mut()) {
            if let Reply::Raw {
                body_file: Some(f), ..
            } = &mut step.reply
                && f.is_relative()
            {
                *f = dir.join(&*f);
            }
        }
        Ok(script)
    }

    /// Parses YAML (or JSON) text.
    pub fn from_yaml(text: &str) -> Result<Self, String> {
        // Before the parser, whose time grows with the square of the flow nesting.
        nomos_base::check_flow_depth(text, nomos_base::MAX_YAML_FLOW_DEPTH).map_err(|line| {
            format!(
                "flow collections ([…] or {{…}}) nest deeper than {} levels at line {line}",
                nomos_base::MAX_YAML_FLOW_DEPTH
            )
        })?;
        serde_yaml_ng::from_str(text).map_err(|e| e.to_string())
    }

    /// Parses JSON text.
    pub fn from_json(text: &str) -> Result<Self, String> {
        serde_json::from_str(text).map_err(|e| e.to_string())
    }
}

/// One scripted answer plus its delivery options and request checks.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Step {
    /// Checks on the request this step answers. A failed check is recorded (see
    /// [`crate::MockServer::failures`]) and answered with HTTP 400 naming the reason,
    /// instead of the reply.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub expect: Vec<Expect>,
    /// Wait this long before sending the response headers.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub delay_ms: u64,
    /// Split text and tool arguments into pieces of this many characters (default 12;
    /// `large` defaults to 4096).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chunk_chars: Option<usize>,
    /// Pause between SSE events.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub chunk_delay_ms: u64,
    /// Send `: keep-alive` comments before the first event and between events (as
    /// OpenRouter does).
    #[serde(default, skip_serializing_if = "is_false")]
    pub keepalive: bool,
    /// The answer.
    #[serde(flatten)]
    pub reply: Reply,
}

/// By hand, because serde cannot refuse unknown keys of a struct with a flattened part: a
/// misspelled `expects:` would be dropped and its check silently never run. The delivery
/// options are taken out first; what is left must be exactly one reply.
impl<'de> Deserialize<'de> for Step {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error as _;

        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Options {
            #[serde(default)]
            expect: Vec<Expect>,
            #[serde(default)]
            delay_ms: u64,
            #[serde(default)]
            chunk_chars: Option<usize>,
            #[serde(default)]
            chunk_delay_ms: u64,
            #[serde(default)]
            keepalive: bool,
        }
        const OPTIONS: [&str; 5] = [
            "expect",
            "delay_ms",
            "chunk_chars",
            "chunk_delay_ms",
            "keepalive",
        ];
        let mut rest = serde_json::Map::<String, Value>::deserialize(d)?;
        let mut options = serde_json::Map::new();
        for key in OPTIONS {
            if let Some(v) = rest.remove(key) {
                options.insert(key.to_owned(), v);
            }
        }
        let options: Options =
            serde_json::from_value(Value::Object(options)).map_err(D::Error::custom)?;
        let reply: Reply = serde_json::from_value(Value::Object(rest)).map_err(D::Error::custom)?;
        Ok(Step {
            expect: options.expect,
            delay_ms: options.delay_ms,
            chunk_chars: options.chunk_chars,
            chunk_delay_ms: options.chunk_delay_ms,
            keepalive: options.keepalive,
            reply,
        })
    }
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

fn is_false(v: &bool) -> bool {
    !*v
}

impl Step {
    /// A step with default delivery and no checks.
    pub fn new(reply: Reply) -> Self {
        Self {
            expect: Vec::new(),
            delay_ms: 0,
            chunk_chars: None,
            chunk_delay_ms: 0,
            keepalive: false,
            reply,
        }
    }

    /// A plain text answer.
    pub fn text(text: impl Into<String>) -> Self {
        Self::new(Reply::Text {
            text: text.into(),
            reasoning: None,
            finish_reason: None,
        })
    }

    /// An answer that is one tool call with JSON arguments.
    pub fn tool_call(name: impl Into<String>, arguments: Value) -> Self {
        Self::new(Reply::ToolCalls {
            text: String::new(),
            reasoning: None,
            calls: vec![ScriptedCall::new(name, arguments)],
        })
    }

    /// Adds a request check.
    pub fn expect(mut self, expect: Expect) -> Self {
        self.expect.push(expect);
        self
    }

    /// Sets the piece size for text and arguments.
    pub fn chunk_chars(mut self, n: usize) -> Self {
        self.chunk_chars = Some(n);
        self
    }

    /// Sets the pause between events.
    pub fn chunk_delay_ms(mut self, ms: u64) -> Self {
        self.chunk_delay_ms = ms;
        self
    }

    /// Sets the wait before the headers.
    pub fn delay_ms(mut self, ms: u64) -> Self {
        self.delay_ms = ms;
        self
    }

    /// Turns keep-alive comments on.
    pub fn keepalive(mut self) -> Self {
        self.keepalive = true;
        self
    }
}

impl From<Reply> for Step {
    fn from(reply: Reply) -> Self {
        Self::new(reply)
    }
}

/// A tool call in a scripted reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptedCall {
    /// Call id; default `call_mock_<request>_<n>` (`toolu_mock_…` in Anthropic mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Tool name (any name: an unknown tool is a fault worth scripting).
    pub name: String,
    /// Arguments as JSON, sent compactly serialized. Default `{}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Value>,
    /// Arguments as an exact string (wins over `arguments`): use it for malformed JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments_raw: Option<String>,
}

impl ScriptedCall {
    /// A call with JSON arguments.
    pub fn new(name: impl Into<String>, arguments: Value) -> Self {
        Self {
            id: None,
            name: name.into(),
            arguments: Some(arguments),
            arguments_raw: None,
        }
    }

    /// A call with an exact argument string.
    pub fn raw(name: impl Into<String>, arguments: impl Into<String>) -> Self {
        Self {
            id: None,
            name: name.into(),
            arguments: None,
            arguments_raw: Some(arguments.into()),
        }
    }

    /// The argument string as it goes on the wire.
    pub fn argument_string(&self) -> String {
        match (&self.arguments_raw, &self.arguments) {
            (Some(raw), _) => raw.clone(),
            (None, Some(v)) => v.to_string(),
            (None, None) => "{}".to_owned(),
        }
    }
}

/// What the server answers. `kind` selects the variant in script files.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Reply {
    /// Streamed text.
    Text {
        /// The text.
        text: String,
        /// Reasoning streamed before it (`reasoning_content` / a thinking block).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reasoning: Option<String>,
        /// Finish reason to report (default `stop`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        finish_reason: Option<String>,
    },
    /// Tool calls, optionally after some text.
    ToolCalls {
        /// Text before the calls.
        #[serde(default, skip_serializing_if = "String::is_empty")]
        text: String,
        /// Reasoning before everything.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reasoning: Option<String>,
        /// The calls, in order.
        calls: Vec<ScriptedCall>,
    },
    /// A well-formed reply with no text and no tool calls.
    Empty {
        /// Finish reason to report (default `stop`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        finish_reason: Option<String>,
        /// Reasoning only (a model that thought and said nothing).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reasoning: Option<String>,
    },
    /// A non-2xx response with a provider-style JSON error body.
    HttpError {
        /// HTTP status (500, 401, 400, 529, …).
        status: u16,
        /// `error.message` (default: the status text).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
        /// `error.type`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error_type: Option<String>,
        /// `error.code` (OpenAI mode only).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        code: Option<String>,
        /// `Retry-After` header value, verbatim.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        retry_after: Option<String>,
    },
    /// HTTP 429 with a `Retry-After` header.
    RateLimited {
        /// Seconds for `Retry-After` (fractions allowed, as some servers send).
        #[serde(default = "default_retry_after")]
        retry_after_secs: f64,
        /// `error.message`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
    /// Some text, then an error event inside the 200 stream, then the end of the body.
    StreamError {
        /// Text streamed before the error.
        #[serde(default, skip_serializing_if = "String::is_empty")]
        text: String,
        /// `error.type` (default `server_error`, `overloaded_error` in Anthropic mode).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error_type: Option<String>,
        /// `error.message`.
        message: String,
    },
    /// Text, then (optionally) a tool call cut half-way through its arguments, then the
    /// connection is dropped without the end of the chunked body.
    StreamCut {
        /// Text streamed before the cut.
        #[serde(default, skip_serializing_if = "String::is_empty")]
        text: String,
        /// The call that gets cut.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        call: Option<ScriptedCall>,
    },
    /// A tool call whose argument string is not valid JSON.
    MalformedToolArgs {
        /// Tool name (default `run`).
        #[serde(default = "default_tool")]
        name: String,
        /// The broken argument string (default `{"command": "ls`).
        #[serde(default = "default_malformed")]
        arguments: String,
    },
    /// A call to a tool the agent does not have.
    UnknownTool {
        /// Tool name (default `no_such_tool`).
        #[serde(default = "default_unknown_tool")]
        name: String,
        /// Arguments (default `{}`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        arguments: Option<Value>,
    },
    /// A text reply of exactly `bytes` bytes.
    Large {
        /// Size in bytes (default 1 MiB).
        #[serde(default = "default_large")]
        bytes: usize,
    },
    /// Headers and (optionally) some text, then silence until the server shuts down.
    Hang {
        /// Text streamed before the silence.
        #[serde(default, skip_serializing_if = "String::is_empty")]
        text: String,
    },
    /// Headers and (optionally) some text, then `: keep-alive` comments every `every_ms`
    /// forever (until the server shuts down): the idle timeout never fires, only an overall
    /// deadline ends the request.
    KeepaliveForever {
        /// Text streamed before the comments.
        #[serde(default, skip_serializing_if = "String::is_empty")]
        text: String,
        /// Interval between comments (default 50 ms).
        #[serde(default = "default_keepalive_every")]
        every_ms: u64,
    },
    /// The step the embedding program's hook of this name builds from the request
    /// ([`crate::MockServer::set_hook`]): a reply that depends on what the client sent (the
    /// demo writes back facts from the real outputs of the commands it ran). No hook of that
    /// name is a recorded failure.
    Hook {
        /// The hook's name.
        name: String,
    },
    /// Exact bytes: a recorded stream or error body, served as is.
    Raw {
        /// HTTP status (default 200).
        #[serde(default = "default_status")]
        status: u16,
        /// Headers (default `content-type: text/event-stream`).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        headers: Vec<(String, String)>,
        /// Body text.
        #[serde(default, skip_serializing_if = "String::is_empty")]
        body: String,
        /// Body read from this file instead (relative to the script file).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        body_file: Option<PathBuf>,
        /// Write the body in pieces of this many bytes (exercises parsers across chunk
        /// boundaries, even inside UTF-8 sequences).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        chunk_bytes: Option<usize>,
    },
}

fn default_retry_after() -> f64 {
    1.0
}
fn default_tool() -> String {
    "run".to_owned()
}
fn default_malformed() -> String {
    r#"{"command": "ls"#.to_owned()
}
fn default_unknown_tool() -> String {
    "no_such_tool".to_owned()
}
fn default_large() -> usize {
    1024 * 1024
}
fn default_keepalive_every() -> u64 {
    50
}
fn default_status() -> u16 {
    200
}

/// A check on the request a step answers. In a script file each check is a one-key map,
/// e.g. `last_tool_result_contains: Refused`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "ExpectRepr", into = "ExpectRepr")]
pub enum Expect {
    /// The last tool result contains this text.
    LastToolResultContains(String),
    /// The last user message (not a tool result) contains this text.
    LastUserContains(String),
    /// The system prompt contains this text.
    SystemContains(String),
    /// Some message (any role, tool results included) contains this text.
    AnyMessageContains(String),
    /// No message contains this text.
    NoMessageContains(String),
    /// The request offers a tool of this name.
    HasTool(String),
    /// The request has at least this many messages (system prompt excluded).
    MinMessages(usize),
    /// A header contains this text (e.g. `authorization` contains `Bearer t2`).
    HeaderContains {
        /// Header name, case-insensitive.
        name: String,
        /// Expected substring.
        value: String,
    },
}

/// The file form of [`Expect`]: a map with exactly one key. (YAML libraries write
/// externally tagged enums as `!tags`; a one-key map reads the same in YAML and JSON.)
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ExpectRepr {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    last_tool_result_contains: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    last_user_contains: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    system_contains: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    any_message_contains: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    no_message_contains: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    has_tool: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    min_messages: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    header_contains: Option<HeaderCheck>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct HeaderCheck {
    name: String,
    value: String,
}

impl TryFrom<ExpectRepr> for Expect {
    type Error = String;

    fn try_from(r: ExpectRepr) -> Result<Self, Self::Error> {
        let mut found = Vec::new();
        if let Some(v) = r.last_tool_result_contains {
            found.push(Expect::LastToolResultContains(v));
        }
        if let Some(v) = r.last_user_contains {
            found.push(Expect::LastUserContains(v));
        }
        if let Some(v) = r.system_contains {
            found.push(Expect::SystemContains(v));
        }
        if let Some(v) = r.any_message_contains {
            found.push(Expect::AnyMessageContains(v));
        }
        if let Some(v) = r.no_message_contains {
            found.push(Expect::NoMessageContains(v));
        }
        if let Some(v) = r.has_tool {
            found.push(Expect::HasTool(v));
        }
        if let Some(v) = r.min_messages {
            found.push(Expect::MinMessages(v));
        }
        if let Some(HeaderCheck { name, value }) = r.header_contains {
            found.push(Expect::HeaderContains { name, value });
        }
        match found.len() {
            1 => Ok(found.remove(0)),
            0 => Err(
                "an expect entry needs one check, e.g. `last_tool_result_contains: Refused`".into(),
            ),
            _ => {
                Err("an expect entry holds exactly one check; write one list item per check".into())
            }
        }
    }
}

impl From<Expect> for ExpectRepr {
    fn from(e: Expect) -> Self {
        let mut r = ExpectRepr::default();
        match e {
            Expect::LastToolResultContains(v) => r.last_tool_result_contains = Some(v),
            Expect::LastUserContains(v) => r.last_user_contains = Some(v),
            Expect::SystemContains(v) => r.system_contains = Some(v),
            Expect::AnyMessageContains(v) => r.any_message_contains = Some(v),
            Expect::NoMessageContains(v) => r.no_message_contains = Some(v),
            Expect::HasTool(v) => r.has_tool = Some(v),
            Expect::MinMessages(v) => r.min_messages = Some(v),
            Expect::HeaderContains { name, value } => {
                r.header_contains = Some(HeaderCheck { name, value });
            }
        }
        r
    }
}
