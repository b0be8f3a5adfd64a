//! Helpers every domain shares: spans, spec findings, wrapped-command assignments,
//! embedded-program effects and the secret-printing checks.

use crate::classify::{ArgvOut, Engine, env_allowed, quoted};
use crate::decision::{Class, Span};
use crate::ir::{Part, Word};
use crate::lower::is_name;
use crate::paths::secret_variable_name;
use crate::scripts::Effect;
use crate::spec::CmdSpec;

pub(super) fn span0(words: &[Word]) -> Span {
    words.first().map(|w| w.span).unwrap_or_default()
}

pub(super) fn spec_finding(e: &mut Engine<'_>, spec: &CmdSpec, class: Class, span: Span) {
    e.add(
        format!("spec.{}", spec.id),
        class,
        span,
        spec.reason.clone(),
    );
}

/// `NAME=value` words before a wrapped command (sudo, env).
pub(super) fn leading_assignments(e: &mut Engine<'_>, words: &[Word], mut r: usize) -> usize {
    while let Some(w) = words.get(r) {
        let Some(Part::Lit(first)) = w.parts.first() else {
            break;
        };
        let Some(eq) = first.find('=') else { break };
        let name = &first[..eq];
        if !is_name(name) {
            break;
        }
        let value = w.literal().map(|l| l[eq + 1..].to_owned());
        if !env_allowed(name, value.as_deref(), true) {
            e.fail(
                "unknown.env",
                w.span,
                format!(
                    "environment variable `{name}` with this value can change what the command runs"
                ),
            );
        }
        r += 1;
    }
    r
}

/// Joins literal words the way ssh and watch do before a shell re-parses them.
pub(super) fn joined_literal(e: &mut Engine<'_>, words: &[Word], what: &str) -> Option<String> {
    let mut s = String::new();
    for (k, w) in words.iter().enumerate() {
        let Some(l) = w.literal() else {
            e.fail(
                "unknown.dynamic_command",
                w.span,
                format!("the command {what} runs is only known at run time"),
            );
            return None;
        };
        if k > 0 {
            s.push(' ');
        }
        s.push_str(l);
    }
    Some(s)
}

/// Replaces words `r..` with one quoted canonical script.
pub(super) fn rewrite_script(ao: &mut ArgvOut, off: usize, r: usize, n: usize, canonical: &str) {
    ao.rewrites.push((off + r, quoted(canonical)));
    for k in r + 1..n {
        ao.rewrites.push((off + k, String::new()));
    }
}

pub(super) fn script_effects(
    e: &mut Engine<'_>,
    fx: Result<Vec<Effect>, String>,
    span: Span,
    prog: &str,
) {
    match fx {
        Err(why) => e.fail(
            format!("unknown.{prog}"),
            span,
            format!("the {prog} program could not be analysed: {why}"),
        ),
        Ok(list) => {
            for f in list {
                match f {
                    Effect::Exec => e.fail(
                        format!("unknown.{prog}_exec"),
                        span,
                        format!("the {prog} program runs shell commands"),
                    ),
                    Effect::Write(path) => {
                        if path.is_empty() {
                            e.fail(format!("unknown.{prog}"), span, "write without a file name");
                        } else {
                            e.write_literal(&path, &format!("the {prog} program writes"), span);
                        }
                    }
                    Effect::Read(path) => e.read_literal(&path, span),
                    Effect::Opaque(why) => e.fail(format!("unknown.{prog}"), span, why),
                }
            }
        }
    }
}

/// `env`, `printenv`, bare `set`, `export -p`: every variable of the shell that runs the
/// command. The executor starts from a fixed environment, but a wrapper (`sudo` keeps some
/// variables, `ssh` and `docker exec` print another's) or an earlier assignment can put a
/// credential there, and the class of a dump must not depend on where it runs.
pub(super) fn environment_dump(e: &mut Engine<'_>, words: &[Word]) {
    e.add(
        "secret.environment",
        Class::Destructive,
        span0(words),
        "prints every environment variable (credentials are often passed this way)",
    );
}

/// `echo "$DB_PASSWORD"` in a container or on a remote host prints a credential.
pub(super) fn print_secrets(e: &mut Engine<'_>, operands: &[usize], words: &[Word]) {
    for &i in operands {
        for part in &words[i].parts {
            if let Part::Param { name, .. } = part
                && secret_variable_name(name)
            {
                e.add(
                    "secret.variable",
                    Class::Destructive,
                    words[i].span,
                    format!("prints `${name}`, which by its name holds a secret"),
                );
            }
        }
    }
}

/// `grep smtp_password /etc/gitlab/gitlab.rb`, `yq .oidc.client_secret config.yaml`: a
/// search for a credential key in configuration prints the credential, whatever the file
/// is called. Searching logs (failed logins) or a pipe (classified at its source) does not.
/// Does an embedded program (awk, jq, yq) name one of `idents` as a word of its own that
/// is not a field access (`.env` is a JSON key, `env` and `$ENV` are jq's environment)?
/// A match inside a string literal also counts: failing closed costs a question only.
pub(super) fn embedded_environment(e: &mut Engine<'_>, text: &str, idents: &[&str], span: Span) {
    let b = text.as_bytes();
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut i = 0;
    while i < b.len() {
        if !ident(b[i]) || (i > 0 && ident(b[i - 1])) {
            i += 1;
            continue;
        }
        let end = (i..b.len()).find(|&j| !ident(b[j])).unwrap_or(b.len());
        let word = &text[i..end];
        let field = i > 0 && b[i - 1] == b'.';
        if !field && idents.contains(&word) {
            e.add(
                "secret.environment",
                Class::Destructive,
                span,
                format!("the program reads the environment or a file through `{word}`"),
            );
            return;
        }
        i = end;
    }
}
