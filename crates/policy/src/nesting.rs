//! A conservative estimate of how deeply shell text nests, computed before the parser
//! (which recurses on nesting) ever sees it.
//!
//! The scanner follows bash's lexical rules closely enough to know what is quoted
//! (single and double quotes, `$'…'`, backslashes, comments, here-document bodies) and
//! counts every construct the parser recurses on: `( $( $(( { ${ [ $[` and backquotes,
//! and the compound keywords `if`, `while`/`until`/`for`/`select` and `case`. Where it is
//! unsure it errs towards deeper: openers count wherever they appear unquoted, closers
//! only close an opener of their own kind, and keyword closers (`fi`, `done`, `esac`,
//! `}`) only where a command may start. A wrong guess can therefore only make a command
//! ask, never let a deep one through: quoting tricks in front (`"'"`, `\'`, `#'`,
//! `$'\''`, a here-document) do not hide what follows.

/// What an opener started.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Ctx {
    /// `(` (a subshell or grouping).
    Paren,
    /// `$(`, `$((`, `<(`, `>(`: inside a word, so what follows the `)` is no command.
    DollarParen,
    /// `{ …; }` (the reserved word).
    Group,
    /// `{` inside a word (brace expansion).
    WordBrace,
    /// `${`.
    DollarBrace,
    /// `${` inside double quotes: whether a `'` in it quotes depends on the operator.
    DollarBraceDq,
    /// `[`, `$[`.
    Bracket,
    Backtick,
    Double,
    /// An unquoted here-document body: expansions are live, quotes are text.
    HereBody,
    If,
    Loop,
    Case,
    /// `[[ … ]]`: its `&&`, `||` and `!` nest (the parser builds a tree of them).
    Test,
    /// One `&&`, `||` or `!` inside `[[ … ]]`; closed with the test.
    TestOp,
}

/// A here-document whose body starts after the next newline.
struct Heredoc {
    delim: Vec<u8>,
    strip_tabs: bool,
    quoted: bool,
}

/// Bytes that end an unquoted word.
fn is_delim(b: u8) -> bool {
    matches!(
        b,
        b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'(' | b')' | b'<' | b'>'
    )
}

/// An upper bound of [`max_depth`] from counting alone: every level the scanner opens
/// starts at one of these bytes or words, quoted or not. Most commands are far below the
/// limit by this count and need no scan.
pub(crate) fn cheap_bound(src: &str) -> usize {
    // One pass over the bytes (this runs for every command and every nested text): the
    // openers, plus every occurrence of a compound keyword, wherever it stands.
    const KEYWORDS: [&[u8]; 6] = [b"if", b"while", b"until", b"for", b"select", b"case"];
    let b = src.as_bytes();
    let mut n = 0;
    for (i, &c) in b.iter().enumerate() {
        match c {
            // A line continuation can join a keyword (`i\⏎f`): scan.
            b'\\' if b.get(i + 1) == Some(&b'\n') => return usize::MAX,
            b'(' | b'{' | b'[' | b'`' | b'"' | b'&' | b'|' | b'!' | b'<' => n += 1,
            b'i' | b'w' | b'u' | b'f' | b's' | b'c' => {
                let rest = &b[i..];
                n += KEYWORDS.iter().filter(|k| rest.starts_with(k)).count();
            }
            _ => {}
        }
    }
    n
}

/// The deepest nesting of `src`, or `limit + 1` as soon as it is known to exceed `limit`.
pub(crate) fn max_depth(src: &str, limit: usize) -> usize {
    let mut s = Scanner {
        b: src.as_bytes(),
        stack: Vec::new(),
        base: 0,
        limit,
        max: 0,
    };
    s.run(0, src.len());
    s.max
}

struct Scanner<'a> {
    b: &'a [u8],
    stack: Vec<Ctx>,
    /// Depth of the enclosing scan (here-document bodies are scanned on their own).
    base: usize,
    limit: usize,
    max: usize,
}

impl Scanner<'_> {
    fn over(&self) -> bool {
        self.max > self.limit
    }

    /// Text the scanner cannot read with certainty counts as too deep (fail closed).
    fn refuse(&mut self) {
        self.max = self.limit + 1;
    }

    fn push(&mut self, c: Ctx) {
        self.stack.push(c);
        self.max = self.max.max(self.base + self.stack.len());
    }

    fn pop_if(&mut self, c: Ctx) {
        if self.stack.last() == Some(&c) {
            self.stack.pop();
        }
    }

    fn top(&self) -> Option<Ctx> {
        self.stack.last().copied()
    }

    fn in_test(&self) -> bool {
        self.stack.contains(&Ctx::Test)
    }

    /// Scans `b[i..end]`; returns where it stopped.
    fn run(&mut self, mut i: usize, end: usize) -> usize {
        let b = self.b;
        // Start of the current unquoted word, and whether it is plain letters so far.
        let mut word: Option<usize> = None;
        let mut plain = true;
        let mut cmd_pos = true;
        let mut heredocs: Vec<Heredoc> = Vec::new();
        let mut escaped_backticks = 0usize;
        while i < end {
            if self.over() {
                return end;
            }
            let c = b[i];
            let next = b.get(i + 1).copied();
            if matches!(self.top(), Some(Ctx::Double | Ctx::HereBody)) {
                let here = self.top() == Some(Ctx::HereBody);
                match c {
                    b'\\' => i += 2,
                    b'"' if !here => {
                        self.stack.pop();
                        i += 1;
                    }
                    b'`' => {
                        self.push(Ctx::Backtick);
                        cmd_pos = true;
                        i += 1;
                    }
                    b'$' if next == Some(b'(') => {
                        self.push(Ctx::DollarParen);
                        cmd_pos = true;
                        i += 2;
                    }
                    b'$' if next == Some(b'{') => {
                        self.push(if here {
                            Ctx::DollarBrace
                        } else {
                            Ctx::DollarBraceDq
                        });
                        i += 2;
                    }
                    b'$' if next == Some(b'[') => {
                        self.push(Ctx::Bracket);
                        i += 2;
                    }
                    _ => i += 1,
                }
                continue;
            }
            if is_delim(c) {
                if let Some(ws) = word.take() {
                    cmd_pos = self.end_word(&b[ws..i], plain, cmd_pos);
                }
                match c {
                    b'\n' => {
                        cmd_pos = true;
                        i += 1;
                        // Bodies of the here-documents opened on this line follow.
                        for h in std::mem::take(&mut heredocs) {
                            i = self.heredoc_body(&h, i, end);
                            if self.over() {
                                return end;
                            }
                        }
                        continue;
                    }
                    b'(' => {
                        // `<(…)` and `>(…)` are words, like `$(…)`.
                        let word_like = i > 0 && matches!(b[i - 1], b'<' | b'>');
                        self.push(if word_like {
                            Ctx::DollarParen
                        } else {
                            Ctx::Paren
                        });
                        cmd_pos = true;
                    }
                    b')' => {
                        // An unmatched `)` ends a case pattern: nothing to close.
                        match self.top() {
                            Some(Ctx::Paren) => {
                                self.stack.pop();
                                cmd_pos = true;
                            }
                            Some(Ctx::DollarParen) => {
                                self.stack.pop();
                                cmd_pos = false;
                            }
                            _ => cmd_pos = true,
                        }
                    }
                    b'&' | b'|' if self.in_test() && next == Some(c) => {
                        self.push(Ctx::TestOp);
                        i += 2;
                        continue;
                    }
                    b';' | b'&' | b'|' => cmd_pos = true,
                    b'<' if next == Some(b'<') && b.get(i + 2) != Some(&b'<') => {
                        let (h, after) = read_heredoc_word(b, i + 2, end);
                        heredocs.extend(h);
                        i = after;
                        continue;
                    }
                    _ => {}
                }
                i += 1;
                continue;
            }
            // Inside a word.
            if word.is_none() {
                word = Some(i);
                plain = true;
                // Comments only where commands are read (not inside `${…}` or `[…]`).
                if c == b'#'
                    && !matches!(
                        self.top(),
                        Some(Ctx::DollarBrace | Ctx::DollarBraceDq | Ctx::Bracket | Ctx::WordBrace)
                    )
                {
                    // A comment runs to the end of the line (the newline is kept).
                    word = None;
                    while i < end && b[i] != b'\n' {
                        i += 1;
                    }
                    continue;
                }
            }
            match c {
                b'\\' => {
                    if next == Some(b'\n') {
                        // A line continuation joins words (`i\⏎f` is `if`).
                        i += 2;
                        continue;
                    }
                    if next == Some(b'"') && self.top() == Some(Ctx::Backtick) {
                        // Whether `\"` quotes inside backquotes depends on the quotes
                        // around them: too subtle to guess.
                        self.refuse();
                        return end;
                    }
                    if next == Some(b'`') && self.top() == Some(Ctx::Backtick) {
                        // Escaped backquotes nest inside backquotes.
                        escaped_backticks += 1;
                        self.max = self
                            .max
                            .max(self.base + self.stack.len() + escaped_backticks);
                    }
                    plain = false;
                    i += 2;
                }
                b'\'' => {
                    plain = false;
                    if self.top() == Some(Ctx::DollarBraceDq) {
                        // `"${x:-'a'}"` keeps the quotes, `"${x#'a'}"` removes them.
                        self.refuse();
                        return end;
                    }
                    i = skip_single(b, i + 1, end, false);
                }
                b'"' => {
                    plain = false;
                    self.push(Ctx::Double);
                    i += 1;
                }
                b'`' => {
                    plain = false;
                    if self.top() == Some(Ctx::Backtick) {
                        self.stack.pop();
                    } else {
                        self.push(Ctx::Backtick);
                        cmd_pos = true;
                        // The backquoted text is a command of its own.
                        word = None;
                    }
                    i += 1;
                }
                b'$' => {
                    plain = false;
                    match next {
                        Some(b'(') => {
                            self.push(Ctx::DollarParen);
                            cmd_pos = true;
                            word = None;
                            i += 2;
                        }
                        Some(b'{') => {
                            self.push(Ctx::DollarBrace);
                            i += 2;
                        }
                        Some(b'[') => {
                            self.push(Ctx::Bracket);
                            i += 2;
                        }
                        Some(b'\'') => i = skip_single(b, i + 2, end, true),
                        _ => i += 1,
                    }
                }
                b'{' => {
                    let standalone = word == Some(i) && b.get(i + 1).is_none_or(|&n| is_delim(n));
                    if !standalone {
                        plain = false;
                        self.push(Ctx::WordBrace);
                    }
                    i += 1;
                }
                b'}' => {
                    let standalone = word == Some(i) && b.get(i + 1).is_none_or(|&n| is_delim(n));
                    if !standalone {
                        plain = false;
                        if matches!(
                            self.top(),
                            Some(Ctx::WordBrace | Ctx::DollarBrace | Ctx::DollarBraceDq)
                        ) {
                            self.stack.pop();
                        }
                    }
                    i += 1;
                }
                b'[' | b']' => {
                    // `[`, `[[`, `]` and `]]` as words are the test command, not brackets.
                    let run = b[i..end].iter().take_while(|&&x| x == c).count();
                    let standalone =
                        word == Some(i) && run <= 2 && b.get(i + run).is_none_or(|&n| is_delim(n));
                    plain = false;
                    if standalone {
                        if run == 2 && c == b'[' {
                            self.push(Ctx::Test);
                        } else if run == 2 {
                            while self.top() == Some(Ctx::TestOp) {
                                self.stack.pop();
                            }
                            self.pop_if(Ctx::Test);
                        }
                        word = None;
                        i += run;
                        continue;
                    }
                    if c == b'[' {
                        self.push(Ctx::Bracket);
                    } else {
                        self.pop_if(Ctx::Bracket);
                    }
                    i += 1;
                }
                _ => {
                    if !c.is_ascii_alphabetic() && c != b'!' {
                        plain = false;
                    }
                    i += 1;
                }
            }
        }
        if let Some(ws) = word.take() {
            self.end_word(&b[ws..end.min(b.len())], plain, cmd_pos);
        }
        i
    }

    /// Reserved words open and close compound commands. Returns whether the next word
    /// is in command position.
    fn end_word(&mut self, w: &[u8], plain: bool, cmd_pos: bool) -> bool {
        if !plain {
            return false;
        }
        // Line continuations vanish before bash tokenizes.
        let mut buf = [0u8; 8];
        let mut n = 0;
        let mut k = 0;
        while k < w.len() {
            if w[k] == b'\\' && w.get(k + 1) == Some(&b'\n') {
                k += 2;
                continue;
            }
            if n == buf.len() {
                return false;
            }
            buf[n] = w[k];
            n += 1;
            k += 1;
        }
        match &buf[..n] {
            b"if" => self.push(Ctx::If),
            b"while" | b"until" => self.push(Ctx::Loop),
            // A name follows, not a command (`for done in …` closes nothing).
            b"for" | b"select" => {
                self.push(Ctx::Loop);
                return false;
            }
            b"case" => {
                self.push(Ctx::Case);
                return false;
            }
            // Patterns follow `case … in`; words follow `for … in`.
            b"in" => return self.top() == Some(Ctx::Case),
            b"{" => self.push(Ctx::Group),
            b"fi" if cmd_pos => self.pop_if(Ctx::If),
            b"done" if cmd_pos => self.pop_if(Ctx::Loop),
            b"esac" if cmd_pos => self.pop_if(Ctx::Case),
            b"}" => {
                if matches!(self.top(), Some(Ctx::DollarBrace | Ctx::DollarBraceDq)) {
                    self.stack.pop();
                } else if cmd_pos {
                    self.pop_if(Ctx::Group);
                }
                return false;
            }
            b"!" if self.in_test() => self.push(Ctx::TestOp),
            b"then" | b"do" | b"else" | b"elif" | b"!" | b"time" => {}
            _ => return false,
        }
        true
    }

    /// Skips (quoted delimiter) or scans (unquoted) one here-document body starting at
    /// `i`; returns the position after its delimiter line.
    fn heredoc_body(&mut self, h: &Heredoc, mut i: usize, end: usize) -> usize {
        let b = self.b;
        let start = i;
        let mut body_end = end;
        let mut after = end;
        while i < end {
            let line_end = b[i..end]
                .iter()
                .position(|&c| c == b'\n')
                .map_or(end, |p| i + p);
            let mut line = &b[i..line_end];
            if h.strip_tabs {
                while let [b'\t', rest @ ..] = line {
                    line = rest;
                }
            }
            if line == h.delim.as_slice() {
                body_end = i;
                after = (line_end + 1).min(end);
                break;
            }
            i = line_end + 1;
        }
        if !h.quoted && start < body_end {
            // The body is scanned on its own, starting one level deeper.
            let mut sub = Scanner {
                b,
                stack: vec![Ctx::HereBody],
                base: self.base + self.stack.len(),
                limit: self.limit,
                max: self.max,
            };
            sub.max = sub.max.max(sub.base + 1);
            sub.run(start, body_end);
            self.max = self.max.max(sub.max);
        }
        after
    }
}

/// Skips a single-quoted string whose opening quote is before `i`; `ansi`: `$'…'`,
/// where a backslash escapes the next byte.
fn skip_single(b: &[u8], mut i: usize, end: usize, ansi: bool) -> usize {
    while i < end {
        match b[i] {
            b'\\' if ansi => i += 2,
            b'\'' => return i + 1,
            _ => i += 1,
        }
    }
    end
}

/// Reads the delimiter word after `<<` (or `<<-`) at `i`.
fn read_heredoc_word(b: &[u8], mut i: usize, end: usize) -> (Option<Heredoc>, usize) {
    let strip_tabs = b.get(i) == Some(&b'-');
    if strip_tabs {
        i += 1;
    }
    while i < end && matches!(b[i], b' ' | b'\t') {
        i += 1;
    }
    let mut delim = Vec::new();
    let mut quoted = false;
    while i < end && !is_delim(b[i]) {
        match b[i] {
            q @ (b'\'' | b'"') => {
                quoted = true;
                i += 1;
                while i < end && b[i] != q {
                    delim.push(b[i]);
                    i += 1;
                }
                i += 1;
            }
            b'\\' => {
                quoted = true;
                if let Some(&n) = b.get(i + 1) {
                    delim.push(n);
                }
                i += 2;
            }
            c => {
                delim.push(c);
                i += 1;
            }
        }
    }
    if delim.is_empty() {
        return (None, i.min(end));
    }
    (
        Some(Heredoc {
            delim,
            strip_tabs,
            quoted,
        }),
        i.min(end),
    )
}

#[cfg(test)]
mod tests {
    use super::max_depth;

    #[test]
    fn counts_what_the_parser_recurses_on() {
        assert_eq!(max_depth("ls -la", 24), 0);
        assert_eq!(max_depth("echo $(echo $(id))", 24), 2);
        assert_eq!(max_depth("{ ( ls ); }", 24), 2);
        assert_eq!(max_depth("if true; then while :; do ls; done; fi", 24), 2);
        assert_eq!(max_depth("echo '((((('", 24), 0);
        assert_eq!(max_depth("echo \"(((\" $'\\'(('", 24), 1);
        assert_eq!(max_depth("case x in a) ls;; esac", 24), 1);
    }

    #[test]
    fn closers_in_text_do_not_hide_depth() {
        // `echo }` and `echo done` are arguments, not closers.
        let groups = "{ echo }; ".repeat(30);
        assert!(max_depth(&groups, 24) > 24);
        let loops = "for x in a; do echo done; ".repeat(30);
        assert!(max_depth(&loops, 24) > 24);
        // Case patterns end with an unmatched `)`.
        let cases = "$(case a in a) ".repeat(30);
        assert!(max_depth(&cases, 24) > 24);
        // Quoted closers between real openers.
        let quoted = "( ')' ".repeat(30);
        assert!(max_depth(&quoted, 24) > 24);
    }

    #[test]
    fn quoting_tricks_do_not_hide_depth() {
        let deep = "$(".repeat(30);
        for front in [
            "echo \"'\" ",
            "echo \\' ",
            "echo #'\n",
            "echo $'\\'' ",
            "cat <<E\n'\nE\n",
            "cat <<'E'\n'\nE\n",
            "echo i\\\nf ",
            "x=\"${y:-'}\" ",
        ] {
            let s = format!("{front}{deep}");
            assert!(max_depth(&s, 24) > 24, "{front:?}");
        }
        let body = format!("cat <<E\n{}\nE\n", "$(".repeat(30));
        assert!(max_depth(&body, 24) > 24);
    }

    /// The one-pass count is the count of openers plus every keyword occurrence.
    #[test]
    fn the_cheap_bound_counts_every_opener_and_keyword() {
        fn reference(src: &str) -> usize {
            let b = src.as_bytes();
            if b.windows(2).any(|w| w == b"\\\n") {
                return usize::MAX;
            }
            let openers = b.iter().filter(|c| b"({[`\"&|!<".contains(c)).count();
            openers
                + ["if", "while", "until", "for", "select", "case"]
                    .iter()
                    .map(|k| src.matches(k).count())
                    .sum::<usize>()
        }
        for s in [
            "",
            "ls -la /etc",
            "elif ifor forif casecase whilewhile untiluntil selectselect",
            "if true; then for x in a; do case $x in a) ;; esac; done; fi",
            "echo \"$(cat <(ls) | grep -c if)\" && ! [ -f x ] || { until :; do :; done; }",
            "sudo systemctl status nginx --no-pager",
            "x=1 \\\ny",
            "i\\\nf",
            "a\\b\\",
        ] {
            assert_eq!(super::cheap_bound(s), reference(s), "{s:?}");
        }
    }

    #[test]
    fn the_cheap_bound_is_an_upper_bound() {
        for s in [
            "ls -la",
            "echo $(echo $(id))",
            "{ ( ls ); }",
            "if true; then while :; do ls; done; fi",
            "[[ a && b || ! c ]]",
            "cat <<E\n$(id)\nE\n",
            "echo \"$(echo \"${x:-a}\")\"",
            "for x in a; do case $x in a) echo `id`;; esac; done",
            "echo i\\\nf",
        ] {
            assert!(super::cheap_bound(s) >= max_depth(s, 24), "{s:?}");
        }
    }

    #[test]
    fn test_operators_nest() {
        let ands = format!("[[ {} ]]", vec!["a"; 30].join(" && "));
        assert!(max_depth(&ands, 24) > 24);
        let nots = format!("[[ {}a ]]", "! ".repeat(30));
        assert!(max_depth(&nots, 24) > 24);
        // Each test starts from zero again.
        let many = vec!["[[ a && b ]]"; 30].join(" && ");
        assert!(max_depth(&many, 24) <= 3);
    }
}
