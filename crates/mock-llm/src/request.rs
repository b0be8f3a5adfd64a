//! Recorded requests, and a format-neutral view of their conversation for checks.

use serde::Serialize;
use serde_json::Value;

use crate::script::Expect;

/// Which wire format a request used (chosen by its path).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    /// `…/chat/completions`
    OpenAi,
    /// `…/messages`
    Anthropic,
}

/// One request the server received.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RecordedRequest {
    /// 0-based arrival order.
    pub seq: usize,
    /// HTTP method.
    pub method: String,
    /// Request path.
    pub path: String,
    /// Wire format.
    pub format: Format,
    /// Headers, names lower-cased, in arrival order.
    pub headers: Vec<(String, String)>,
    /// The body parsed as JSON (`Null` when it was not JSON).
    pub body: Value,
    /// Index of the script step that answered (`None` when the script was exhausted).
    pub step: Option<usize>,
}

/// One message of a request, flattened to text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ViewMessage {
    /// `user`, `assistant` or `tool` (a tool result).
    pub role: String,
    /// All the text of the message (tool calls rendered as `name(arguments)`).
    pub text: String,
}

impl RecordedRequest {
    /// A header's value (name case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The requested model.
    pub fn model(&self) -> Option<&str> {
        self.body.get("model").and_then(Value::as_str)
    }

    /// Whether the client asked for streaming.
    pub fn is_stream(&self) -> bool {
        self.body
            .get("stream")
            .and_then(Value::as_bool)
            .unwrap_or(false)
    }

    /// The system prompt.
    pub fn system(&self) -> Option<String> {
        match self.format {
            Format::OpenAi => {
                let parts: Vec<String> = self
                    .raw_messages()
                    .iter()
                    .filter(|m| matches!(role(m), "system" | "developer"))
                    .map(|m| content_text(m.get("content")))
                    .collect();
                (!parts.is_empty()).then(|| parts.join("\n"))
            }
            Format::Anthropic => self.body.get("system").map(|s| content_text(Some(s))),
        }
    }

    /// Names of the offered tools.
    pub fn tool_names(&self) -> Vec<String> {
        let tools = self.body.get("tools").and_then(Value::as_array);
        tools
            .into_iter()
            .flatten()
            .filter_map(|t| {
                t.pointer("/function/name")
                    .or_else(|| t.get("name"))
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            })
            .collect()
    }

    fn raw_messages(&self) -> Vec<Value> {
        self.body
            .get("messages")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    }

    /// The conversation (system prompt excluded), tool results as role `tool`.
    pub fn messages(&self) -> Vec<ViewMessage> {
        let mut out = Vec::new();
        for m in self.raw_messages() {
            let r = role(&m).to_owned();
            match (self.format, r.as_str()) {
                (Format::OpenAi, "system" | "developer") => {}
                (Format::OpenAi, _) => {
                    let mut text = content_text(m.get("content"));
                    for c in m
                        .get("tool_calls")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                    {
                        let name = c.pointer("/function/name").and_then(Value::as_str);
                        let args = c.pointer("/function/arguments").and_then(Value::as_str);
                        text.push_str(&format!("{}({})", name.unwrap_or(""), args.unwrap_or("")));
                    }
                    out.push(ViewMessage { role: r, text });
                }
                (Format::Anthropic, _) => match m.get("content") {
                    Some(Value::Array(blocks)) => {
                        let mut text = String::new();
                        for b in blocks {
                            match b.get("type").and_then(Value::as_str) {
                                Some("tool_result") => out.push(ViewMessage {
                                    role: "tool".into(),
                                    text: content_text(b.get("content")),
                                }),
                                Some("tool_use") => text.push_str(&format!(
                                    "{}({})",
                                    b.get("name").and_then(Value::as_str).unwrap_or(""),
                                    b.get("input").map(Value::to_string).unwrap_or_default()
                                )),
                                _ => text.push_str(&content_text(Some(b))),
                            }
                        }
                        if !text.is_empty() {
                            out.push(ViewMessage {
                                role: r.clone(),
                                text,
                            });
                        }
                    }
                    other => out.push(ViewMessage {
                        role: r,
                        text: content_text(other),
                    }),
                },
            }
        }
        out
    }

    /// The text of the last tool result.
    pub fn last_tool_result(&self) -> Option<String> {
        self.messages()
            .into_iter()
            .rev()
            .find(|m| m.role == "tool")
            .map(|m| m.text)
    }

    /// The text of the last user message (tool results excluded).
    pub fn last_user_text(&self) -> Option<String> {
        self.messages()
            .into_iter()
            .rev()
            .find(|m| m.role == "user")
            .map(|m| m.text)
    }

    /// Checks one expectation; `Err` says what was found instead.
    pub fn check(&self, expect: &Expect) -> Result<(), String> {
        let found = |what: &str, v: Option<String>| match v {
            Some(t) => format!("{what} was {:?}", excerpt(&t)),
            None => format!("there is no {what}"),
        };
        match expect {
            Expect::LastToolResultContains(s) => match self.last_tool_result() {
                Some(t) if t.contains(s.as_str()) => Ok(()),
                other => Err(format!(
                    "expected the last tool result to contain {s:?}, but {}",
                    found("last tool result", other)
                )),
            },
            Expect::LastUserContains(s) => match self.last_user_text() {
                Some(t) if t.contains(s.as_str()) => Ok(()),
                other => Err(format!(
                    "expected the last user message to contain {s:?}, but {}",
                    found("last user message", other)
                )),
            },
            Expect::SystemContains(s) => match self.system() {
                Some(t) if t.contains(s.as_str()) => Ok(()),
                other => Err(format!(
                    "expected the system prompt to contain {s:?}, but {}",
                    found("system prompt", other)
                )),
            },
            Expect::AnyMessageContains(s) => {
                if self.messages().iter().any(|m| m.text.contains(s.as_str())) {
                    Ok(())
                } else {
                    Err(format!("expected some message to contain {s:?}; none does"))
                }
            }
            Expect::NoMessageContains(s) => match self
                .messages()
                .into_iter()
                .find(|m| m.text.contains(s.as_str()))
            {
                None => Ok(()),
                Some(m) => Err(format!(
                    "expected no message to contain {s:?}, but a {} message does: {:?}",
                    m.role,
                    excerpt(&m.text)
                )),
            },
            Expect::HasTool(name) => {
                let names = self.tool_names();
                if names.iter().any(|n| n == name) {
                    Ok(())
                } else {
                    Err(format!(
                        "expected tool {name:?} to be offered; tools were {names:?}"
                    ))
                }
            }
            Expect::MinMessages(n) => {
                let have = self.messages().len();
                if have >= *n {
                    Ok(())
                } else {
                    Err(format!("expected at least {n} messages, got {have}"))
                }
            }
            Expect::HeaderContains { name, value } => match self.header(name) {
                Some(v) if v.contains(value.as_str()) => Ok(()),
                Some(_) => Err(format!(
                    "expected header {name:?} to contain {value:?}; it does not"
                )),
                None => Err(format!("expected header {name:?}; it is missing")),
            },
        }
    }
}

fn role(m: &Value) -> &str {
    m.get("role").and_then(Value::as_str).unwrap_or("")
}

/// Text of a content value: a string, an array of parts/blocks, or a block.
fn content_text(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .map(|p| content_text(Some(p)))
            .collect::<Vec<_>>()
            .join(""),
        Some(obj @ Value::Object(_)) => obj
            .get("text")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .or_else(|| obj.get("content").map(|c| content_text(Some(c))))
            .unwrap_or_default(),
        _ => String::new(),
    }
}

fn excerpt(s: &str) -> String {
    const MAX: usize = 200;
    if s.chars().count() <= MAX {
        return s.to_owned();
    }
    let mut out: String = s.chars().take(MAX).collect();
    out.push('…');
    out
}
