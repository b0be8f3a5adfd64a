//! Approval detection from the operator's own words (DESIGN.md §3 step 4, I7, I8, I23).
//!
//! Only the text of an operator's chat message is ever given to [`detect`]; tool output and
//! model text never reach it, so nothing but the operator can open an approval window.
//!
//! Approval is read by structure, not by a first word: the whole message must parse as
//! approval units ("yes", "go ahead", "sure, go for it", typos of the longer words included)
//! joined by politeness and plan references ("please", "thanks", "with the plan"), with no
//! negation, no question, no condition and no extra instruction. Any word the grammar does not
//! know makes the message something else: "ok, go ahead and restart nginx too" is an
//! instruction. A short message with a negation or hold word is a decline ("don't proceed",
//! "ok but wait"); a question is never a decline ("how long is the wait?").
//! The phrasing corpus in `tests/data/approval_phrasings.tsv` pins the behaviour.

/// How the operator's message reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The operator approved the plan in flight.
    Approve,
    /// The operator said no, wait or stop.
    Decline,
    /// Neither: a question, a condition, a new instruction, a follow-up.
    Other,
}

/// Longer messages with a negation in them are instructions, not declines.
const MAX_DECLINE_WORDS: usize = 8;

/// Approval units: a word or phrase that approves on its own. Matched on collapsed letter runs
/// ("yesss", "okkk"), and the longer words also within one edit ("procceed", "contiune").
const APPROVE_UNITS: &[&[&str]] = &[
    &["yes"],
    &["y"],
    &["yep"],
    &["yeah"],
    &["yea"],
    &["yup"],
    &["ya"],
    &["ok"],
    &["okay"],
    &["okey"],
    &["okie"],
    &["k"],
    &["kk"],
    &["alright"],
    &["all", "right"],
    &["go"],
    &["proceed"],
    &["continue"],
    &["approved"],
    &["approve"],
    &["confirmed"],
    &["confirm"],
    &["sure"],
    &["lgtm"],
    &["ack"],
    &["affirmative"],
    &["execute"],
    &["run"],
    &["absolutely"],
    &["definitely"],
    &["certainly"],
    &["agreed"],
    &["granted"],
    &["go", "ahead"],
    &["go", "on"],
    &["go", "for", "it"],
    &["do", "it"],
    &["please", "do"],
    &["let's", "go"],
    &["lets", "go"],
    &["let's", "do", "it"],
    &["lets", "do", "it"],
    &["let's", "do", "this"],
    &["lets", "do", "this"],
    &["carry", "on"],
    &["fire", "away"],
    &["send", "it"],
    &["ship", "it"],
    &["make", "it", "so"],
    &["looks", "good"],
    &["looks", "great"],
    &["looks", "fine"],
    &["sounds", "good"],
    &["sounds", "great"],
    &["sounds", "fine"],
    &["all", "good"],
    &["good", "to", "go"],
    &["you're", "good", "to", "go"],
    &["green", "light"],
    &["sure", "thing"],
    &["of", "course"],
    &["by", "all", "means"],
    &["works", "for", "me"],
    &["fine", "by", "me"],
    &["fine", "with", "me"],
    &["ok", "with", "me"],
    &["i", "approve"],
    &["i", "agree"],
    &["you", "may", "proceed"],
    &["you", "can", "proceed"],
    &["you", "have", "my", "approval"],
    &["approval", "granted"],
    &["permission", "granted"],
    &["no", "objection"],
    &["no", "objections"],
    &["no", "problem"],
    &["no", "worries"],
    &["oui"],
    &["ja"],
    &["sí"],
    &["aye"],
    &["roger"],
    &["roger", "that"],
    &["sgtm"],
    &["do", "that"],
    &["do", "this"],
    &["do", "so"],
    &["go", "right", "ahead"],
    &["looks", "good", "to", "me"],
    &["sounds", "good", "to", "me"],
    &["feel", "free", "to", "proceed"],
    &["feel", "free", "to", "go", "ahead"],
    &["you", "can", "go", "ahead"],
    &["you", "may", "go", "ahead"],
    &["you", "can", "continue"],
    &["you", "may", "continue"],
];

/// Words long enough that a one-letter slip is still the word ("procceed", "contiue").
const FUZZY_WORDS: &[&str] = &[
    "proceed",
    "continue",
    "approved",
    "approve",
    "confirmed",
    "confirm",
    "affirmative",
    "execute",
    "absolutely",
    "definitely",
];

/// Words and phrases that carry no instruction: politeness, emphasis and references to the
/// plan in flight ("yes please, thanks", "go ahead with the plan", "run all steps now").
const POLITE_UNITS: &[&[&str]] = &[
    &["please"],
    &["pls"],
    &["plz"],
    &["thanks"],
    &["thank", "you"],
    &["thx"],
    &["ty"],
    &["cheers"],
    &["now"],
    &["then"],
    &["sir"],
    &["mate"],
    &["boss"],
    &["and"],
    &["the", "plan"],
    &["with", "the", "plan"],
    &["with", "it"],
    &["with", "that"],
    &["it"],
    &["that"],
    &["this"],
    &["on"],
    &["ahead"],
    &["right", "away"],
    &["right", "now"],
    &["asap"],
    &["all", "steps"],
    &["all", "the", "steps"],
    &["the", "steps"],
    &["every", "step"],
    &["everything"],
    &["the", "rest"],
    &["with", "the", "rest"],
    &["the", "next", "step"],
    &["next", "step"],
    &["good"],
    &["great"],
    &["fine"],
    &["perfect"],
    &["cool"],
    &["nice"],
    &["excellent"],
    &["awesome"],
    &["thanks", "a", "lot"],
    &["oh"],
    &["well"],
    &["with"],
    &["the"],
    &["plan"],
    &["steps"],
    &["changes"],
    &["them"],
    &["all"],
    &["as", "planned"],
    &["as", "proposed"],
    &["as", "described"],
    &["to", "me"],
    &["bitte"],
    &["danke"],
    &["merci"],
    &["gracias"],
    &["por", "favor"],
];

/// A hold or refusal anywhere makes a short message a decline.
const NEGATIONS: &[&str] = &[
    "no", "n", "nope", "nah", "not", "never", "wait", "stop", "hold", "halt", "cancel", "abort",
    "pause", "deny", "denied", "reject", "rejected", "without", "but", "later", "dont", "cant",
    "wont", "shouldnt", "wouldnt", "isnt", "arent", "didnt", "doesnt", "nein", "non", "negative",
    "refuse", "declined", "decline",
];

/// A condition or contrast: the operator approves something other than the plan as it is.
const CONDITIONS: &[&str] = &[
    "if", "unless", "except", "only", "provided", "assuming", "once", "after", "before", "when",
    "first", "however", "instead", "though", "although", "maybe", "perhaps", "probably",
];

/// Openers of a question even without a question mark.
const QUESTION_OPENERS: &[&str] = &[
    "what",
    "why",
    "how",
    "when",
    "where",
    "which",
    "who",
    "whom",
    "whose",
    "is",
    "are",
    "am",
    "was",
    "were",
    "can",
    "could",
    "would",
    "should",
    "will",
    "shall",
    "may",
    "might",
    "has",
    "have",
    "had",
    "isn't",
    "aren't",
    "doesn't",
    "didn't",
    "wouldn't",
    "shouldn't",
    "couldn't",
];

/// Pronouns after which "do/does/did" opens a question ("do you think …").
const PRONOUNS: &[&str] = &["you", "we", "i", "they", "he", "she", "u", "it's"];

fn words(text: &str) -> Vec<String> {
    text.to_lowercase()
        .replace(['’', '‘', '`'], "'")
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .map(|w| w.trim_matches('\'').to_owned())
        .filter(|w| !w.is_empty())
        .collect()
}

/// "yesss" → "yes", "procceed" → "proced": repeated letters are one slip, not a new word.
fn collapse(word: &str) -> String {
    let mut out = String::with_capacity(word.len());
    let mut last = None;
    for c in word.chars() {
        if last != Some(c) {
            out.push(c);
        }
        last = Some(c);
    }
    out
}

/// Edit distance of at most one, counting a swap of two neighbours as one edit ("contiune"):
/// enough to catch a slipped, doubled or swapped letter.
fn within_one_edit(a: &str, b: &str) -> bool {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    if a.len().abs_diff(b.len()) > 1 {
        return false;
    }
    // Optimal string alignment distance over three rolling rows.
    let mut prev2: Vec<usize> = vec![0; b.len() + 1];
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for i in 0..a.len() {
        let mut cur = vec![i + 1; b.len() + 1];
        for j in 0..b.len() {
            let cost = usize::from(a[i] != b[j]);
            let mut d = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
            if i > 0 && j > 0 && a[i] == b[j - 1] && a[i - 1] == b[j] {
                d = d.min(prev2[j - 1] + 1);
            }
            cur[j + 1] = d;
        }
        prev2 = std::mem::replace(&mut prev, cur);
    }
    prev[b.len()] <= 1
}

/// Whether one word of the message is the grammar's word `want`.
fn word_is(word: &str, want: &str) -> bool {
    if word == want {
        return true;
    }
    // Only letters may repeat: "kk" and "ok" differ, "okkk" and "ok" do not.
    let collapsed = collapse(word);
    if collapsed.chars().count() > 1 && collapsed == collapse(want) {
        return true;
    }
    want.len() >= 6
        && word.len() >= 6
        && FUZZY_WORDS.contains(&want)
        && (within_one_edit(word, want) || within_one_edit(&collapsed, want))
}

#[cfg(test)]
fn is_approve_word(word: &str) -> bool {
    APPROVE_UNITS
        .iter()
        .any(|u| u.len() == 1 && word_is(word, u[0]))
}

/// The longest unit of `units` that matches at `words[at..]`, as its length.
fn longest_match(words: &[String], at: usize, units: &[&[&str]]) -> usize {
    units
        .iter()
        .filter(|u| {
            words.len() >= at + u.len() && u.iter().zip(&words[at..]).all(|(w, m)| word_is(m, w))
        })
        .map(|u| u.len())
        .max()
        .unwrap_or(0)
}

fn is_negation(words: &[String]) -> bool {
    // "no problem", "no objections" approve: their "no" is not a refusal.
    let mut inside_unit = vec![false; words.len()];
    for start in 0..words.len() {
        let n = longest_match(words, start, APPROVE_UNITS);
        if n > 1 {
            inside_unit[start..start + n]
                .iter_mut()
                .for_each(|x| *x = true);
        }
    }
    words.iter().zip(&inside_unit).any(|(w, &inside)| {
        !inside
            && (NEGATIONS.contains(&w.as_str())
                || NEGATIONS.contains(&collapse(w).as_str())
                || w.ends_with("n't"))
    }) || words.windows(2).any(|p| p[0] == "do" && p[1] == "not")
}

fn is_question(text: &str, words: &[String]) -> bool {
    if text.contains(['?', '¿', '？']) {
        return true;
    }
    match words {
        [first, second, ..] if ["do", "does", "did"].contains(&first.as_str()) => {
            PRONOUNS.contains(&second.as_str())
        }
        [first, ..] => QUESTION_OPENERS.contains(&first.as_str()),
        [] => false,
    }
}

/// The whole message parses as approval units and politeness, with one approval at least.
fn parses_as_approval(words: &[String]) -> bool {
    let mut at = 0;
    let mut approved = false;
    while at < words.len() {
        let approve = longest_match(words, at, APPROVE_UNITS);
        let polite = longest_match(words, at, POLITE_UNITS);
        if approve == 0 && polite == 0 {
            return false;
        }
        approved |= approve > 0 && approve >= polite;
        at += approve.max(polite);
    }
    approved
}

/// Reads one operator chat message.
pub fn detect(text: &str) -> Verdict {
    let words = words(text);
    if words.is_empty() {
        return Verdict::Other;
    }
    // A question asks; it neither approves nor withdraws an approval (I23).
    if is_question(text, &words) {
        return Verdict::Other;
    }
    if words.iter().any(|w| CONDITIONS.contains(&w.as_str())) {
        return Verdict::Other;
    }
    if is_negation(&words) {
        // "no", "wait", "stop", "don't proceed": a hold. A long message with a "not" in it is
        // an instruction, not a decline.
        return if words.len() <= MAX_DECLINE_WORDS {
            Verdict::Decline
        } else {
            Verdict::Other
        };
    }
    if parses_as_approval(&words) {
        Verdict::Approve
    } else {
        Verdict::Other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn i7_approval_words_and_typos_approve() {
        for text in [
            "yes",
            "Yes.",
            "ok",
            "OK!",
            "go",
            "go ahead",
            "Go ahead, please",
            "proceed",
            "Proceed.",
            "continue",
            "approved",
            "procceed",
            "proced",
            "contiune",
            "yes please",
            "ok go",
            "yep, do it",
            "lgtm",
            "sounds good",
            "looks good, go ahead",
            "sure",
            "  yes  ",
            "approve",
            "Approved — thanks",
            "y",
            "run it",
            "ok, proceed with the plan",
        ] {
            assert_eq!(detect(text), Verdict::Approve, "{text:?} should approve");
        }
    }

    #[test]
    fn i7_negations_and_holds_do_not_approve() {
        for text in [
            "no",
            "No.",
            "don't proceed",
            "dont proceed",
            "do not proceed",
            "wait",
            "stop",
            "hold on",
            "not yet",
            "nope",
            "ok but wait",
            "yes but don't restart nginx",
            "cancel",
            "never mind",
            "don’t go ahead",
            "abort",
        ] {
            assert_eq!(detect(text), Verdict::Decline, "{text:?} should decline");
        }
    }

    #[test]
    fn i7_questions_and_instructions_are_neither() {
        for text in [
            "",
            "   ",
            "what does step 2 do?",
            "yes?",
            "ok, and what about the backup host?",
            "check the disk on web-01 too",
            "ok so first look at the logs of nginx on web-01 then restart it",
            "going home now",
            "process list looks weird",
            "proceeding would be bad if the disk is full, check that first and report back",
        ] {
            assert_eq!(detect(text), Verdict::Other, "{text:?} should be neither");
        }
    }

    /// B6: the phrasing corpus (a data file, ≥ 150 phrasings of every kind) reads as labelled.
    #[test]
    fn i23_the_phrasing_corpus_reads_as_labelled() {
        let corpus = include_str!("../tests/data/approval_phrasings.tsv");
        let mut seen = 0;
        let mut wrong = Vec::new();
        for line in corpus.lines() {
            if line.trim().is_empty() || line.starts_with('#') {
                continue;
            }
            let Some((label, text)) = line.split_once('\t') else {
                panic!("not verdict<TAB>text: {line:?}");
            };
            let want = match label {
                "approve" => Verdict::Approve,
                "decline" => Verdict::Decline,
                "other" => Verdict::Other,
                other => panic!("unknown label {other:?}"),
            };
            seen += 1;
            let got = detect(text);
            if got != want {
                wrong.push(format!("{text:?}: want {want:?}, got {got:?}"));
            }
        }
        assert!(seen >= 150, "the corpus holds {seen} phrasings");
        assert!(
            wrong.is_empty(),
            "{} misread:\n{}",
            wrong.len(),
            wrong.join("\n")
        );
    }

    #[test]
    fn i23_a_question_is_never_a_decline() {
        for hold in [
            "wait",
            "stop",
            "no",
            "cancel",
            "hold on",
            "don't proceed",
            "pause",
        ] {
            for text in [
                format!("{hold}?"),
                format!("why {hold}"),
                format!("should I say {hold}"),
                format!("what happens if I say {hold}?"),
            ] {
                assert_eq!(detect(&text), Verdict::Other, "{text:?}");
            }
        }
    }

    #[test]
    fn fuzzy_matching_is_limited_to_long_words() {
        assert!(within_one_edit("procceed", "proceed"));
        assert!(!within_one_edit("process", "proceed"));
        assert!(!is_approve_word("gone"));
        assert!(!is_approve_word("yess!"));
    }
}
