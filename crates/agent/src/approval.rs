//! Approval detection from the operator's own words (DESIGN.md §3 step 4, I7, I8).
//!
//! Only the text of an operator's chat message is ever given to [`detect`]; tool output and
//! model text never reach it, so nothing but the operator can open an approval window.
//!
//! The rule is deliberately narrow: a message approves when it *starts* with an approval word
//! or phrase (typos of the longer words included), is short, and contains no negation or
//! hold word anywhere. "yes", "ok go", "procceed", "go ahead please" approve; "don't
//! proceed", "wait", "no", "ok but stop first", "yes, what does step 2 do?" do not.

/// How the operator's message reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The operator approved the plan in flight.
    Approve,
    /// The operator said no, wait or stop.
    Decline,
    /// Neither: a question, a new instruction, a follow-up.
    Other,
}

/// Longer messages are instructions or questions, even when they start with "ok".
const MAX_APPROVAL_WORDS: usize = 8;

/// Single words that approve when they open the message.
const APPROVE_WORDS: &[&str] = &[
    "yes",
    "y",
    "yep",
    "yeah",
    "yup",
    "ok",
    "okay",
    "k",
    "go",
    "proceed",
    "continue",
    "approved",
    "approve",
    "confirmed",
    "confirm",
    "sure",
    "lgtm",
    "ack",
    "affirmative",
    "execute",
    "run",
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
];

/// Phrases that approve when they open the message.
const APPROVE_PHRASES: &[&[&str]] = &[
    &["go", "ahead"],
    &["do", "it"],
    &["looks", "good"],
    &["sounds", "good"],
    &["make", "it", "so"],
    &["ship", "it"],
    &["go", "for", "it"],
    &["all", "good"],
];

/// Any of these anywhere turns the message into a decline (or at least not an approval).
const NEGATIONS: &[&str] = &[
    "no",
    "n",
    "nope",
    "not",
    "dont",
    "don't",
    "do not",
    "never",
    "wait",
    "stop",
    "hold",
    "halt",
    "cancel",
    "abort",
    "pause",
    "deny",
    "denied",
    "reject",
    "rejected",
    "nah",
    "without",
    "shouldnt",
    "shouldn't",
    "wont",
    "won't",
    "cant",
    "can't",
    "isnt",
    "isn't",
    "but",
];

/// Words that carry no instruction and may follow an approval ("yes please, thanks").
const FILLER: &[&str] = &[
    "please",
    "pls",
    "thanks",
    "thank",
    "you",
    "ty",
    "now",
    "then",
    "the",
    "plan",
    "it",
    "that",
    "this",
    "with",
    "ahead",
    "on",
    "sir",
    "all",
    "steps",
    "good",
    "great",
    "fine",
    "perfect",
    "right",
    "away",
    "and",
    "go",
    "proceed",
    "continue",
    "do",
    "yes",
    "ok",
    "okay",
    "sure",
    "rest",
    "remaining",
    "remainder",
    "everything",
    "others",
    "next",
    "step",
];

fn words(text: &str) -> Vec<String> {
    text.to_lowercase()
        .replace('’', "'")
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .map(|w| w.trim_matches('\'').to_owned())
        .filter(|w| !w.is_empty())
        .collect()
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

fn is_approve_word(word: &str) -> bool {
    APPROVE_WORDS.contains(&word)
        || (word.len() >= 6 && FUZZY_WORDS.iter().any(|w| within_one_edit(word, w)))
}

fn is_negation(words: &[String]) -> bool {
    words.iter().any(|w| NEGATIONS.contains(&w.as_str()))
        || words.windows(2).any(|p| p[0] == "do" && p[1] == "not")
}

/// Reads one operator chat message.
pub fn detect(text: &str) -> Verdict {
    let words = words(text);
    if words.is_empty() {
        return Verdict::Other;
    }
    if is_negation(&words) {
        // "no", "wait", "stop", "don't proceed": a hold. A long message with a "not" in it is
        // an instruction, not a decline.
        return if words.len() <= MAX_APPROVAL_WORDS {
            Verdict::Decline
        } else {
            Verdict::Other
        };
    }
    if words.len() > MAX_APPROVAL_WORDS || text.contains('?') {
        return Verdict::Other;
    }
    let opened = APPROVE_PHRASES
        .iter()
        .find(|phrase| {
            words.len() >= phrase.len() && words.iter().zip(phrase.iter()).all(|(w, p)| w == p)
        })
        .map(|phrase| phrase.len())
        .or_else(|| is_approve_word(&words[0]).then_some(1));
    match opened {
        Some(n)
            if words[n..]
                .iter()
                .all(|w| FILLER.contains(&w.as_str()) || is_approve_word(w)) =>
        {
            Verdict::Approve
        }
        _ => Verdict::Other,
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

    #[test]
    fn fuzzy_matching_is_limited_to_long_words() {
        assert!(within_one_edit("procceed", "proceed"));
        assert!(!within_one_edit("process", "proceed"));
        assert!(!is_approve_word("gone"));
        assert!(!is_approve_word("yess!"));
    }
}
