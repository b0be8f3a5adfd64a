//! Embedded programs: sed, awk, python, php, and the secret searches of grep/jq/yq.

use super::common::{embedded_environment, print_secrets, script_effects, span0};
use crate::classify::{ArgvOut, Engine};
use crate::decision::{Class, Span};
use crate::ir::{Part, Word};
use crate::lists::List;
use crate::lower::is_name;
use crate::opts::Parsed;
use crate::paths::names_credential;
use crate::scripts;

pub(super) fn sed(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word]) {
    let mut scripts: Vec<(String, Span)> = Vec::new();
    let mut from_option = false;
    for o in p.values("--expression") {
        from_option = true;
        let span = words[o.word].span;
        match o.value.literal() {
            Some(s) => scripts.push((s.to_owned(), span)),
            None => e.fail(
                "unknown.sed",
                span,
                "the sed script is only known at run time",
            ),
        }
    }
    from_option |= p.has("--file");
    let mut files: &[usize] = &p.operands;
    if !from_option && let Some((&first, rest)) = p.operands.split_first() {
        let w = &words[first];
        match w.literal() {
            Some(s) => scripts.push((s.to_owned(), w.span)),
            None => e.fail(
                "unknown.sed",
                w.span,
                "the sed script is only known at run time",
            ),
        }
        files = rest;
    }
    for (s, span) in &scripts {
        script_effects(e, scripts::sed(s), *span, "sed");
    }
    if p.has("--in-place") {
        for &i in files {
            e.write_target(&words[i], "`sed -i` rewrites");
        }
        if files.is_empty() {
            e.add(
                "spec.sed",
                Class::ConfigMutation,
                span0(words),
                "`sed -i` edits files in place",
            );
        }
    }
}

pub(super) fn awk(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word]) {
    // `awk -v t="$GITHUB_TOKEN" …`, `awk '…' t=$DB_PASSWORD`: the program can print it.
    print_secrets(e, &(1..words.len()).collect::<Vec<_>>(), words);
    let mut ops: &[usize] = &p.operands;
    let mut from_option = false;
    for o in p.values("--source") {
        from_option = true;
        if let Some(s) = o.value.literal() {
            embedded_environment(e, s, &["ENVIRON"], words[o.word].span);
        }
        match o.value.literal() {
            Some(s) => script_effects(e, scripts::awk(s), words[o.word].span, "awk"),
            None => e.fail(
                "unknown.awk",
                words[o.word].span,
                "the awk program is only known at run time",
            ),
        }
    }
    if p.has("--file") {
        from_option = true;
    }
    if !from_option && let Some((&first, rest)) = ops.split_first() {
        let w = &words[first];
        if let Some(s) = w.literal() {
            embedded_environment(e, s, &["ENVIRON"], w.span);
        }
        match w.literal() {
            Some(s) => script_effects(e, scripts::awk(s), w.span, "awk"),
            None => e.fail(
                "unknown.awk",
                w.span,
                "the awk program is only known at run time",
            ),
        }
        ops = rest;
    }
    for &i in ops {
        let w = &words[i];
        // `var=value` operands are assignments, not files.
        if let Some(Part::Lit(s)) = w.parts.first()
            && let Some(eq) = s.find('=')
            && is_name(&s[..eq])
        {
            continue;
        }
        e.read_target(w, false);
    }
}

/// `python3 --version` and `python3 -m json.tool [IN [OUT]]`; any other program is code.
pub(super) fn python(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word]) {
    if p.has("--version") || p.has("--help") {
        return;
    }
    let module = p.values("-m").next().map(|o| o.value.literal());
    match module {
        Some(Some("json.tool" | "json")) => {
            if let Some(&i) = p.operands.first() {
                e.read_target(&words[i], false);
            }
            if let Some(&o) = p.operands.get(1) {
                e.write_target(&words[o], "`json.tool` writes");
            }
        }
        _ => e.fail(
            "unknown.interpreter",
            span0(words),
            "a Python program can do anything",
        ),
    }
}

/// PHP information and lint modes; running a script or code is unknown, except Nextcloud's
/// `occ`, which has a spec of its own.
pub(super) fn php(
    e: &mut Engine<'_>,
    p: &Parsed<'_>,
    words: &[Word],
    off: usize,
    ao: &mut ArgvOut,
) {
    if let Some(&i) = p.operands.first()
        && p.occ.is_empty()
        && words[i]
            .literal()
            .is_some_and(|l| l == "occ" || l.ends_with("/occ"))
    {
        // `php /var/www/nextcloud/occ status` is `occ status`.
        let mut inner: Vec<Word> = words[i..].to_vec();
        inner[0] = Word::lit("occ", words[i].span);
        e.argv(&inner, off + i, ao);
        return;
    }
    if e.policy
        .list(List::PhpInfoOptions)
        .iter()
        .any(|id| p.has(id))
        && p.operands.is_empty()
    {
        return;
    }
    if p.has("--syntax-check") || p.has("--syntax-highlight") || p.has("--strip") {
        for &i in &p.operands {
            e.read_target(&words[i], false);
        }
        return;
    }
    e.fail(
        "unknown.interpreter",
        span0(words),
        "a PHP script can do anything",
    );
}

/// The program text of jq/yq. Options the lenient spec does not list (`--arg k v`) may
/// shift which operand is the program, so every literal operand is scanned.
pub(super) fn query_program(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word], idents: &[&str]) {
    // grep shares the handler; only jq (gojq, jless) and yq run a query language.
    if !p.path.first().is_some_and(|s| s.id == "jq" || s.id == "yq") {
        return;
    }
    for &i in &p.operands {
        let w = &words[i];
        if let Some(s) = w.literal() {
            embedded_environment(e, s, idents, w.span);
        }
    }
}

pub(super) fn secret_search(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word]) {
    // jq and gojq: `env`, `$ENV`; yq: `env()`, `strenv()`, `envsubst`, and `load*()` reads
    // any file; jq modules (`import`, `include`) are files too.
    const IDENTS: &[&str] = &[
        "env",
        "ENV",
        "strenv",
        "envsubst",
        "load",
        "load_str",
        "load_xml",
        "load_props",
        "load_base64",
        "load_yaml",
        "load_json",
        "import",
        "include",
    ];
    query_program(e, p, words, IDENTS);
    let mut patterns: Vec<(Option<&str>, Span)> = p
        .values("--regexp")
        .map(|o| (o.value.literal(), words[o.word].span))
        .collect();
    let files = if patterns.is_empty() {
        let Some((&first, rest)) = p.operands.split_first() else {
            return;
        };
        patterns.push((words[first].literal(), words[first].span));
        rest
    } else {
        &p.operands[..]
    };
    // Stdin comes from a command classified on its own; `-l`, `-c`, `-q` print no lines.
    if files.is_empty() || p.occ.iter().any(|o| o.opt.effects.quiet) {
        return;
    }
    let is_log = |w: &Word| {
        w.literal().is_some_and(|f| {
            f.starts_with("/var/log/") || f.ends_with(".log") || f.contains(".log.")
        })
    };
    if files.iter().all(|&i| is_log(&words[i])) {
        return;
    }
    if let Some((_, span)) = patterns
        .iter()
        .find(|(text, _)| text.is_some_and(names_credential))
    {
        e.add(
            "secret.search",
            Class::Destructive,
            *span,
            "searches configuration for a credential key, which prints the credential",
        );
    }
}
