//! Errors as one line, causes included.

/// The error and its chain of sources in one line, `outer: cause: root`.
///
/// HTTP clients hide the cause behind a terse top-level message (reqwest says "error sending
/// request" for a refused connection, a timeout and a bad certificate alike). A source whose
/// text is already part of the line is skipped, since many errors repeat their cause.
pub fn error_chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = s.source();
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use std::fmt;

    /// An error with a message and an optional cause.
    #[derive(Debug)]
    struct Layer {
        text: String,
        cause: Option<Box<Layer>>,
    }

    impl Layer {
        fn chain(texts: &[&str]) -> Layer {
            let mut cause = None;
            for text in texts.iter().rev() {
                cause = Some(Box::new(Layer {
                    text: (*text).to_owned(),
                    cause,
                }));
            }
            *cause.unwrap()
        }
    }

    impl fmt::Display for Layer {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(&self.text)
        }
    }

    impl std::error::Error for Layer {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            self.cause.as_deref().map(|c| c as _)
        }
    }

    #[test]
    fn a_lone_error_is_its_message() {
        assert_eq!(error_chain(&Layer::chain(&["boom"])), "boom");
    }

    #[test]
    fn every_cause_is_appended_in_order() {
        let cases: &[(&[&str], &str)] = &[
            (&["a", "b"], "a: b"),
            (
                &["error sending request", "connection refused"],
                "error sending request: connection refused",
            ),
            (&["outer", "middle", "root"], "outer: middle: root"),
            (&["x", "y", "z", "w"], "x: y: z: w"),
        ];
        for (layers, want) in cases {
            assert_eq!(error_chain(&Layer::chain(layers)), *want, "{layers:?}");
        }
    }

    #[test]
    fn a_cause_already_in_the_line_is_not_repeated() {
        let cases: &[(&[&str], &str)] = &[
            (
                &["request failed: timed out", "timed out"],
                "request failed: timed out",
            ),
            (&["a: b", "b", "c"], "a: b: c"),
            (&["tls", "tls"], "tls"),
            (&["outer", "root", "root"], "outer: root"),
        ];
        for (layers, want) in cases {
            assert_eq!(error_chain(&Layer::chain(layers)), *want, "{layers:?}");
        }
    }

    #[test]
    fn the_causes_of_a_wrapped_error_are_followed() {
        let io = std::io::Error::other(Layer::chain(&["disk gone", "EIO"]));
        assert_eq!(error_chain(&io), "disk gone: EIO");
    }
}
