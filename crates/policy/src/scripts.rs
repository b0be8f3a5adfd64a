//! Small analysers for the programs that sed and awk run: enough structure to find
//! every command that executes programs or touches files. Anything they cannot
//! parse is reported as an error (and classified unknown).

/// A side effect found in a sed or awk program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Effect {
    /// Runs a shell command.
    Exec,
    /// Writes the named file.
    Write(String),
    /// Reads the named file.
    Read(String),
    /// A construct whose effect cannot be determined (dynamic file name, …).
    Opaque(&'static str),
}

/// Analyses a GNU sed script.
pub(crate) fn sed(script: &str) -> Result<Vec<Effect>, String> {
    let b: Vec<char> = script.chars().collect();
    let mut i = 0;
    let mut fx = Vec::new();
    let n = b.len();
    let rest_of_line = |i: &mut usize| -> String {
        let start = *i;
        while *i < n && b[*i] != '\n' {
            *i += 1;
        }
        b[start..*i].iter().collect::<String>()
    };
    while i < n {
        // Separators.
        while i < n && (b[i].is_whitespace() || b[i] == ';') {
            i += 1;
        }
        if i >= n {
            break;
        }
        if b[i] == '#' {
            rest_of_line(&mut i);
            continue;
        }
        // Addresses.
        let mut addrs = 0;
        loop {
            let before = i;
            if i < n && b[i].is_ascii_digit() {
                while i < n && (b[i].is_ascii_digit() || b[i] == '~') {
                    i += 1;
                }
            } else if i < n && b[i] == '$' {
                i += 1;
            } else if i < n && (b[i] == '/' || b[i] == '\\') {
                let delim = if b[i] == '\\' {
                    i += 1;
                    *b.get(i).ok_or("unterminated address")?
                } else {
                    '/'
                };
                i += 1;
                skip_regex(&b, &mut i, delim)?;
                while i < n && matches!(b[i], 'I' | 'M') {
                    i += 1;
                }
            } else if addrs > 0 && i < n && matches!(b[i], '+' | '~') {
                i += 1;
                while i < n && b[i].is_ascii_digit() {
                    i += 1;
                }
            }
            if i == before {
                break;
            }
            addrs += 1;
            while i < n && b[i] == ' ' {
                i += 1;
            }
            if i < n && b[i] == ',' && addrs == 1 {
                i += 1;
                while i < n && b[i] == ' ' {
                    i += 1;
                }
                continue;
            }
            break;
        }
        while i < n && (b[i] == '!' || b[i] == ' ') {
            i += 1;
        }
        let Some(&c) = b.get(i) else {
            if addrs > 0 {
                return Err("address without a command".into());
            }
            break;
        };
        i += 1;
        match c {
            '{' | '}' | '=' | 'd' | 'D' | 'g' | 'G' | 'h' | 'H' | 'n' | 'N' | 'p' | 'P' | 'x'
            | 'z' | 'F' => {}
            'l' | 'q' | 'Q' | 'L' => {
                while i < n && (b[i] == ' ' || b[i].is_ascii_digit()) {
                    i += 1;
                }
            }
            ':' | 'b' | 't' | 'T' | 'v' => {
                // GNU read_label(): blanks before the label are skipped and the label ends
                // at the first blank, `;` or newline; the text after it is the NEXT command
                // (`:a e cmd`, `v 4.2 e cmd`). A `}` in a label is read differently by sed
                // versions, so it is refused rather than guessed.
                while i < n && (b[i] == ' ' || b[i] == '\t') {
                    i += 1;
                }
                while i < n && !b[i].is_whitespace() && b[i] != ';' {
                    if b[i] == '}' {
                        // `{p;b}`: whether `}` ends the label or belongs to it, what follows
                        // is read as commands either way when nothing is glued to it.
                        if b.get(i + 1).is_none_or(|&d| d.is_whitespace() || d == ';') {
                            break;
                        }
                        return Err(
                            "text after `}` in a sed label is read differently by versions".into(),
                        );
                    }
                    i += 1;
                }
            }
            'a' | 'i' | 'c' => {
                // Text to the end of the line; `\` at the end continues it.
                loop {
                    let line = rest_of_line(&mut i);
                    if line.ends_with('\\') && i < n {
                        i += 1;
                        continue;
                    }
                    break;
                }
            }
            'r' | 'R' => {
                let f = rest_of_line(&mut i).trim().to_owned();
                fx.push(Effect::Read(f));
            }
            'w' | 'W' => {
                let f = rest_of_line(&mut i).trim().to_owned();
                fx.push(Effect::Write(f));
            }
            'e' => {
                rest_of_line(&mut i);
                fx.push(Effect::Exec);
            }
            's' => {
                let delim = *b.get(i).ok_or("unterminated s command")?;
                if delim == '\n' || delim == '\\' {
                    return Err("bad s delimiter".into());
                }
                i += 1;
                skip_regex(&b, &mut i, delim)?;
                skip_delimited(&b, &mut i, delim)?;
                // Flags.
                while i < n {
                    match b[i] {
                        'g' | 'p' | 'i' | 'I' | 'm' | 'M' | '0'..='9' => i += 1,
                        'e' => {
                            fx.push(Effect::Exec);
                            i += 1;
                        }
                        'w' => {
                            i += 1;
                            let f = rest_of_line(&mut i).trim().to_owned();
                            fx.push(Effect::Write(f));
                        }
                        _ => break,
                    }
                }
            }
            'y' => {
                let delim = *b.get(i).ok_or("unterminated y command")?;
                i += 1;
                skip_delimited(&b, &mut i, delim)?;
                skip_delimited(&b, &mut i, delim)?;
            }
            other => return Err(format!("unknown sed command `{other}`")),
        }
    }
    Ok(fx)
}

fn skip_delimited(b: &[char], i: &mut usize, delim: char) -> Result<(), String> {
    while *i < b.len() {
        let c = b[*i];
        if c == '\\' {
            *i += 2;
            continue;
        }
        // GNU match_slash() ends the text at an unescaped newline (an error).
        if c == '\n' {
            return Err("newline inside a sed regular expression or replacement".into());
        }
        *i += 1;
        if c == delim {
            return Ok(());
        }
    }
    Err("unterminated regular expression or replacement".into())
}

/// Skips a regular expression up to its closing delimiter. GNU sed skips a bracket
/// expression whole (snarf_char_class: `s/[/]/x/` is complete), other seds do not; where
/// the two readings could end the regex at different places (the delimiter or a newline
/// inside brackets) the script is refused.
fn skip_regex(b: &[char], i: &mut usize, delim: char) -> Result<(), String> {
    let ambiguous = || "a delimiter inside a sed bracket expression is read differently".to_owned();
    while *i < b.len() {
        let c = b[*i];
        if c == '\\' {
            *i += 2;
            continue;
        }
        if c == '\n' {
            return Err("newline inside a sed regular expression".into());
        }
        *i += 1;
        if c == delim {
            return Ok(());
        }
        if c == '[' {
            // Inside a bracket: `^` and a leading `]` are literal; `[:…:]`, `[.….]`,
            // `[=…=]` are classes. Stop at the first `]` that closes it.
            if b.get(*i) == Some(&'^') {
                *i += 1;
            }
            if b.get(*i) == Some(&']') {
                *i += 1;
            }
            loop {
                let Some(&d) = b.get(*i) else {
                    return Err("unterminated sed bracket expression".into());
                };
                if d == '\n' || (d == delim && b.get(i.wrapping_sub(1)) != Some(&'\\')) {
                    return Err(ambiguous());
                }
                *i += 1;
                if d == ']' {
                    break;
                }
                if d == '[' && matches!(b.get(*i), Some(':' | '.' | '=')) {
                    let kind = b[*i];
                    *i += 1;
                    loop {
                        let Some(&e) = b.get(*i) else {
                            return Err("unterminated sed character class".into());
                        };
                        if e == '\n' || e == delim {
                            return Err(ambiguous());
                        }
                        *i += 1;
                        if e == kind && b.get(*i) == Some(&']') {
                            *i += 1;
                            break;
                        }
                    }
                }
            }
        }
    }
    Err("unterminated regular expression".into())
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Str(String),
    Regex,
    Num,
    Ident(String),
    Punct(&'static str),
    Newline,
}

fn awk_tokens(p: &str) -> Result<Vec<Tok>, String> {
    let b: Vec<char> = p.chars().collect();
    let mut out: Vec<Tok> = Vec::new();
    let mut i = 0;
    const PUNCT2: &[&str] = &[
        "||", "&&", "|&", ">>", ">=", "<=", "==", "!=", "!~", "++", "--", "+=", "-=", "*=", "/=",
        "%=", "^=", "**",
    ];
    const PUNCT1: &[&str] = &[
        "{", "}", "(", ")", "[", "]", ";", ",", "+", "-", "*", "/", "%", "^", "!", ">", "<", "|",
        "?", ":", "~", "$", "=", "@", ".",
    ];
    while i < b.len() {
        let c = b[i];
        if c == '\n' {
            out.push(Tok::Newline);
            i += 1;
        } else if c == '\\' && b.get(i + 1) == Some(&'\n') {
            i += 2;
        } else if c.is_whitespace() {
            i += 1;
        } else if c == '#' {
            while i < b.len() && b[i] != '\n' {
                i += 1;
            }
        } else if c == '"' {
            i += 1;
            let mut s = String::new();
            loop {
                let Some(&d) = b.get(i) else {
                    return Err("unterminated string".into());
                };
                i += 1;
                match d {
                    '"' => break,
                    '\\' => {
                        let e = *b.get(i).ok_or("unterminated string")?;
                        i += 1;
                        s.push(match e {
                            'n' => '\n',
                            't' => '\t',
                            other => other,
                        });
                    }
                    d => s.push(d),
                }
            }
            out.push(Tok::Str(s));
        } else if c == '/' && regex_allowed(out.last()) {
            i += 1;
            let mut in_class = false;
            loop {
                let Some(&d) = b.get(i) else {
                    return Err("unterminated regex".into());
                };
                i += 1;
                match d {
                    '\\' => i += 1,
                    '[' => in_class = true,
                    ']' => in_class = false,
                    '/' if !in_class => break,
                    '\n' => return Err("newline in regex".into()),
                    _ => {}
                }
            }
            out.push(Tok::Regex);
        } else if c.is_ascii_digit() {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == '.') {
                i += 1;
            }
            out.push(Tok::Num);
        } else if c.is_alphabetic() || c == '_' {
            let st = i;
            while i < b.len() && (b[i].is_alphanumeric() || b[i] == '_') {
                i += 1;
            }
            out.push(Tok::Ident(b[st..i].iter().collect()));
        } else {
            let two: String = b[i..(i + 2).min(b.len())].iter().collect();
            if let Some(p) = PUNCT2.iter().find(|p| **p == two) {
                out.push(Tok::Punct(p));
                i += 2;
            } else if let Some(p) = PUNCT1.iter().find(|p| p.starts_with(c)) {
                out.push(Tok::Punct(p));
                i += 1;
            } else {
                return Err(format!("unexpected character `{c}`"));
            }
        }
    }
    Ok(out)
}

fn regex_allowed(prev: Option<&Tok>) -> bool {
    match prev {
        None | Some(Tok::Newline) => true,
        Some(Tok::Str(_) | Tok::Num | Tok::Regex) => false,
        Some(Tok::Ident(s)) => matches!(s.as_str(), "print" | "printf" | "return" | "in" | "case"),
        Some(Tok::Punct(p)) => !matches!(*p, ")" | "]" | "$" | "++" | "--"),
    }
}

/// Analyses an awk program (POSIX awk, gawk and mawk syntax).
pub(crate) fn awk(program: &str) -> Result<Vec<Effect>, String> {
    let toks = awk_tokens(program)?;
    let mut fx = Vec::new();
    let mut depth: i32 = 0;
    // Paren depth at which the current print statement started.
    let mut print_at: Option<i32> = None;
    let mut k = 0;
    while k < toks.len() {
        match &toks[k] {
            Tok::Ident(s) if s == "system" => fx.push(Effect::Exec),
            // Assigning ARGV or ARGC (`ARGV[1]="/etc/shadow"`, `split(s, ARGV)`,
            // `ARGV[ARGC++]=f`) makes the program read files named at run time.
            Tok::Ident(s) if s == "ARGV" || s == "ARGC" => fx.push(Effect::Opaque(
                "the program changes the list of files it reads (ARGV)",
            )),
            Tok::Ident(s) if s == "getline" => {
                if let Some(Tok::Punct("<")) = toks.get(k + 1) {
                    match toks.get(k + 2) {
                        Some(Tok::Str(f)) => fx.push(Effect::Read(f.clone())),
                        _ => fx.push(Effect::Opaque("getline reads a file named at run time")),
                    }
                    k += 2;
                } else if let Some(Tok::Ident(_)) = toks.get(k + 1)
                    && let Some(Tok::Punct("<")) = toks.get(k + 2)
                {
                    match toks.get(k + 3) {
                        Some(Tok::Str(f)) => fx.push(Effect::Read(f.clone())),
                        _ => fx.push(Effect::Opaque("getline reads a file named at run time")),
                    }
                    k += 3;
                }
            }
            Tok::Ident(s) if s == "print" || s == "printf" => print_at = Some(depth),
            Tok::Punct("|") | Tok::Punct("|&") => fx.push(Effect::Exec),
            Tok::Punct("@") => fx.push(Effect::Opaque(
                "gawk directives and indirect calls are not modelled",
            )),
            Tok::Punct("(") | Tok::Punct("[") => depth += 1,
            Tok::Punct(")") | Tok::Punct("]") => depth -= 1,
            Tok::Punct(">") | Tok::Punct(">>") if print_at == Some(depth) => {
                match toks.get(k + 1) {
                    Some(Tok::Str(f)) => fx.push(Effect::Write(f.clone())),
                    _ => fx.push(Effect::Opaque("print writes to a file named at run time")),
                }
                k += 1;
            }
            Tok::Punct(";") | Tok::Punct("{") | Tok::Punct("}") | Tok::Newline => print_at = None,
            _ => {}
        }
        k += 1;
    }
    if depth != 0 {
        return Err("unbalanced parentheses".into());
    }
    Ok(fx)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn sed_scripts() {
        assert_eq!(sed("s/a/b/g").unwrap(), vec![]);
        assert_eq!(sed("1,5p;$d").unwrap(), vec![]);
        assert_eq!(sed("/x/!d").unwrap(), vec![]);
        assert_eq!(sed("s/a/b/e").unwrap(), vec![Effect::Exec]);
        assert_eq!(sed("1e id").unwrap(), vec![Effect::Exec]);
        assert_eq!(
            sed("w /etc/x").unwrap(),
            vec![Effect::Write("/etc/x".into())]
        );
        assert_eq!(
            sed("s/a/b/w out").unwrap(),
            vec![Effect::Write("out".into())]
        );
        assert_eq!(
            sed("r /etc/shadow").unwrap(),
            vec![Effect::Read("/etc/shadow".into())]
        );
        assert_eq!(sed("s|/usr|/opt|g").unwrap(), vec![]);
        assert_eq!(sed("/^#/d; /^$/d").unwrap(), vec![]);
        assert_eq!(sed("0,/re/s//x/").unwrap(), vec![]);
        assert!(sed("k").is_err());
    }

    #[test]
    fn awk_programs() {
        assert_eq!(awk("{print $1}").unwrap(), vec![]);
        assert_eq!(awk("$3 > 100 {print $1, $3}").unwrap(), vec![]);
        assert_eq!(awk("{ if ($2 > 5) print $1 }").unwrap(), vec![]);
        assert_eq!(awk("BEGIN{system(\"id\")}").unwrap(), vec![Effect::Exec]);
        assert_eq!(awk("{print | \"sh\"}").unwrap(), vec![Effect::Exec]);
        assert_eq!(
            awk("{print > \"/tmp/x\"}").unwrap(),
            vec![Effect::Write("/tmp/x".into())]
        );
        assert_eq!(awk("{print $1 > $2}").unwrap().len(), 1);
        assert_eq!(
            awk("{printf(\"%s\\n\", $1) > \"o\"}").unwrap(),
            vec![Effect::Write("o".into())]
        );
        assert_eq!(awk("NR>1 && $5 ~ /x/ {n++} END {print n}").unwrap(), vec![]);
        assert_eq!(awk("{ a = $1 / 2; print a }").unwrap(), vec![]);
        assert_eq!(
            awk("BEGIN { while ((getline l < \"/etc/shadow\") > 0) print l }").unwrap(),
            vec![Effect::Read("/etc/shadow".into())]
        );
        assert_eq!(awk("{\"date\" | getline d}").unwrap(), vec![Effect::Exec]);
        assert_eq!(awk("$1 || $2").unwrap(), vec![]);
    }
}
