//! A guard run before YAML text reaches the parser (eval manifests, scripted-model files).
//!
//! The YAML scanner's cost grows with the square of the flow nesting depth (`[[[[…` or
//! `{a: {a: …`): a 100 KB file of brackets kept `nomos eval` busy for minutes before the
//! deserialiser's recursion limit could refuse it. This scan finds the deepest flow
//! collection in linear time, so such a file is refused at once.
//!
//! It follows YAML closely enough to never count what the parser would not: quoted scalars,
//! comments, block scalars (`|`, `>`) and brackets inside plain scalars are skipped. Where it
//! is unsure it counts less, never more, so a real manifest is never refused; what it lets
//! through still meets the parser's own recursion limit.

/// The deepest flow nesting a Nomos YAML file may have (real files use fewer than ten).
pub const MAX_YAML_FLOW_DEPTH: usize = 64;

/// Fails with the line (1-based) where flow collections nest deeper than `max`.
pub fn check_flow_depth(text: &str, max: usize) -> Result<(), usize> {
    let b = text.as_bytes();
    let mut i = 0;
    let mut line = 1;
    // Flow depth; 0 is block context.
    let mut depth = 0usize;
    // In block context: whether the next non-blank character starts a value (a scalar or a
    // collection) rather than the middle of a plain scalar.
    let mut at_value = true;
    // Indentation of the current line, and of a block scalar's parent line while skipping it.
    let mut indent = 0usize;
    let mut line_start = true;
    let mut block_scalar: Option<usize> = None;
    while i < b.len() {
        let c = b[i];
        if c == b'\n' {
            line += 1;
            i += 1;
            line_start = true;
            indent = 0;
            if depth == 0 {
                at_value = true;
            }
            continue;
        }
        if line_start {
            if c == b' ' {
                indent += 1;
                i += 1;
                continue;
            }
            line_start = false;
            if let Some(parent) = block_scalar {
                // A block scalar's lines are those indented deeper than its parent's.
                if indent > parent || c == b'\r' {
                    i = skip_line(b, i);
                    continue;
                }
                block_scalar = None;
            }
        }
        let prev_blank = i == 0 || matches!(b[i - 1], b' ' | b'\t' | b'\n' | b'\r');
        if c == b'#' && prev_blank {
            i = skip_line(b, i);
            continue;
        }
        if depth == 0 {
            match c {
                b' ' | b'\t' | b'\r' => i += 1,
                _ if !at_value => {
                    // Inside a plain scalar or a key: only `: ` or `- ` can start a value.
                    if c == b':'
                        && matches!(b.get(i + 1), None | Some(b' ' | b'\t' | b'\n' | b'\r'))
                    {
                        at_value = true;
                    }
                    i += 1;
                }
                b'-' if matches!(b.get(i + 1), None | Some(b' ' | b'\t' | b'\n' | b'\r')) => {
                    i += 1;
                }
                b'[' | b'{' => {
                    depth = 1;
                    i += 1;
                }
                b'\'' | b'"' => {
                    let (end, lines) = skip_quoted(b, i);
                    line += lines;
                    i = end;
                    at_value = false;
                }
                b'|' | b'>' => {
                    block_scalar = Some(indent);
                    i = skip_line(b, i);
                }
                _ => {
                    // A plain scalar or a key: `: ` ends a key (handled above next round).
                    at_value = false;
                    i += 1;
                }
            }
            continue;
        }
        // Flow context.
        match c {
            b'[' | b'{' => {
                depth += 1;
                if depth > max {
                    return Err(line);
                }
                i += 1;
            }
            b']' | b'}' => {
                depth -= 1;
                i += 1;
                if depth == 0 {
                    at_value = false;
                }
            }
            b'\'' | b'"' if flow_token_start(b, i) => {
                let (end, lines) = skip_quoted(b, i);
                line += lines;
                i = end;
            }
            _ => i += 1,
        }
    }
    Ok(())
}

/// Whether a quote at `i` (flow context) begins a quoted scalar: after an indicator or blank.
fn flow_token_start(b: &[u8], i: usize) -> bool {
    let mut j = i;
    while j > 0 {
        j -= 1;
        match b[j] {
            b' ' | b'\t' | b'\n' | b'\r' => continue,
            b'[' | b'{' | b',' | b':' | b'?' => return true,
            _ => return false,
        }
    }
    true
}

/// The index after the quoted scalar starting at `i`, and the newlines inside it.
fn skip_quoted(b: &[u8], i: usize) -> (usize, usize) {
    let q = b[i];
    let mut j = i + 1;
    let mut lines = 0;
    while j < b.len() {
        match b[j] {
            b'\n' => lines += 1,
            b'\\' if q == b'"' => j += 1,
            b'\'' if q == b'\'' && b.get(j + 1) == Some(&b'\'') => j += 1,
            x if x == q => return (j + 1, lines),
            _ => {}
        }
        j += 1;
    }
    (j, lines)
}

/// The index of the newline ending the line at `i` (or the end).
fn skip_line(b: &[u8], i: usize) -> usize {
    b[i..]
        .iter()
        .position(|&x| x == b'\n')
        .map_or(b.len(), |p| i + p)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn deep_flow_nesting_is_refused_in_every_form() {
        for (label, text) in [
            ("brackets", format!("name: {}", "[".repeat(65))),
            ("braces", format!("name: {}", "{a: ".repeat(65))),
            ("mixed", format!("x: {}", "[{a: ".repeat(40))),
            ("top level", "[".repeat(100_000)),
            ("list item", format!("turns:\n  - {}", "[".repeat(70))),
            ("spread over lines", format!("a:\n{}", "[\n".repeat(70))),
            (
                "with quoted items",
                format!("a: {}", "['x', \"y\", ".repeat(70)),
            ),
        ] {
            assert!(check_flow_depth(&text, 64).is_err(), "{label}");
        }
        assert_eq!(
            check_flow_depth(&format!("a: b\nc: {}", "[".repeat(65)), 64),
            Err(2)
        );
    }

    #[test]
    fn real_yaml_with_brackets_in_scalars_is_accepted() {
        let ok = [
            "name: x\nturns:\n  - operator: \"check [[[[[[[[[[[[\"\n",
            "a: '[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[['\n",
            "a: don't [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\n",
            "cmd: awk {print} {{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{\n",
            "# [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\nname: x\n",
            "body: |\n  [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\n  {{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{\nnext: [1, [2, [3]]]\n",
            "calls: [{name: run, arguments: {command: \"echo '[[[[['\"}}, {name: x}]\n",
            "a: [\"]]]]\", '}}}}']\n",
            "a: [\"\\\"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\"]\n",
        ];
        for text in ok {
            assert_eq!(check_flow_depth(text, 64), Ok(()), "{text}");
        }
        // Exactly at the limit.
        let at = format!("a: {}{}", "[".repeat(64), "]".repeat(64));
        assert_eq!(check_flow_depth(&at, 64), Ok(()));
    }
}
