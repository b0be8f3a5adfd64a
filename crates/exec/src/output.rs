//! Capped capture of a command's output: the head and the tail are kept, the middle is
//! counted and dropped, and the pipe is always drained so the command never blocks on a
//! full pipe.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

/// How much of one stream to keep.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutputCap {
    /// Bytes kept from the start.
    pub head: usize,
    /// Bytes kept from the end (errors usually come last).
    pub tail: usize,
}

impl Default for OutputCap {
    /// 64 KiB head + 16 KiB tail.
    fn default() -> Self {
        Self {
            head: 64 * 1024,
            tail: 16 * 1024,
        }
    }
}

/// One stream of a finished command, decoded for display and storage.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CapturedOutput {
    /// The kept bytes decoded as UTF-8 (invalid sequences become U+FFFD), with a
    /// `[… N bytes truncated …]` line where the middle was dropped.
    pub text: String,
    /// Every byte the command wrote to the stream.
    pub total_bytes: u64,
    /// Bytes not in `text` (0 when nothing was dropped).
    pub truncated_bytes: u64,
    /// The stream held a NUL byte or was not valid UTF-8: `text` is a lossy rendering.
    pub binary: bool,
}

impl CapturedOutput {
    /// Whether part of the stream was dropped.
    pub fn is_truncated(&self) -> bool {
        self.truncated_bytes > 0
    }
}

/// The marker put where bytes were dropped.
pub(crate) fn truncation_marker(n: u64) -> String {
    format!("\n[… {n} bytes truncated …]\n")
}

/// Accumulates one stream under an [`OutputCap`].
#[derive(Debug)]
pub(crate) struct Capture {
    cap: OutputCap,
    head: Vec<u8>,
    tail: VecDeque<u8>,
    total: u64,
    saw_nul: bool,
}

impl Capture {
    pub(crate) fn new(cap: OutputCap) -> Self {
        Self {
            cap,
            head: Vec::with_capacity(cap.head.min(8 * 1024)),
            tail: VecDeque::new(),
            total: 0,
            saw_nul: false,
        }
    }

    pub(crate) fn push(&mut self, mut bytes: &[u8]) {
        self.total += bytes.len() as u64;
        self.saw_nul |= bytes.contains(&0);
        let room = self.cap.head.saturating_sub(self.head.len());
        let n = room.min(bytes.len());
        self.head.extend_from_slice(&bytes[..n]);
        bytes = &bytes[n..];
        if self.cap.tail == 0 || bytes.is_empty() {
            return;
        }
        // Only the last `tail` bytes of this chunk can survive.
        if bytes.len() >= self.cap.tail {
            self.tail.clear();
            bytes = &bytes[bytes.len() - self.cap.tail..];
        }
        let overflow = (self.tail.len() + bytes.len()).saturating_sub(self.cap.tail);
        self.tail.drain(..overflow);
        self.tail.extend(bytes);
    }

    pub(crate) fn finish(&self) -> CapturedOutput {
        let kept = self.head.len() as u64 + self.tail.len() as u64;
        let tail: Vec<u8> = self.tail.iter().copied().collect();
        if kept == self.total {
            // Nothing dropped: head and tail are contiguous.
            let mut all = self.head.clone();
            all.extend_from_slice(&tail);
            let valid = std::str::from_utf8(&all).is_ok();
            return CapturedOutput {
                text: String::from_utf8_lossy(&all).into_owned(),
                total_bytes: self.total,
                truncated_bytes: 0,
                binary: self.saw_nul || !valid,
            };
        }
        // Cut at character boundaries so a split multi-byte character is counted as
        // truncated instead of showing up as U+FFFD.
        let head = &self.head[..utf8_prefix_end(&self.head)];
        let tail = &tail[utf8_suffix_start(&tail)..];
        let dropped = self.total - head.len() as u64 - tail.len() as u64;
        let valid = std::str::from_utf8(head).is_ok() && std::str::from_utf8(tail).is_ok();
        let mut text = String::from_utf8_lossy(head).into_owned();
        text.push_str(&truncation_marker(dropped));
        text.push_str(&String::from_utf8_lossy(tail));
        CapturedOutput {
            text,
            total_bytes: self.total,
            truncated_bytes: dropped,
            binary: self.saw_nul || !valid,
        }
    }
}

/// End of `b` without a trailing incomplete UTF-8 sequence (at most 3 bytes are removed).
fn utf8_prefix_end(b: &[u8]) -> usize {
    match std::str::from_utf8(b) {
        Ok(_) => b.len(),
        // `error_len() == None`: the input ends mid-character.
        Err(e) if e.error_len().is_none() => e.valid_up_to(),
        Err(_) => b.len(),
    }
}

/// Start of `b` without leading continuation bytes (at most 3 are skipped).
fn utf8_suffix_start(b: &[u8]) -> usize {
    let is_continuation = |x: u8| x & 0xC0 == 0x80;
    let skip = b
        .iter()
        .take(3)
        .take_while(|&&x| is_continuation(x))
        .count();
    // Four or more continuation bytes is not a cut character but garbage: keep it as is.
    if b.get(skip).is_some_and(|&x| is_continuation(x)) {
        0
    } else {
        skip
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn cap(head: usize, tail: usize) -> Capture {
        Capture::new(OutputCap { head, tail })
    }

    #[test]
    fn small_output_is_kept_whole() {
        let mut c = cap(4, 4);
        c.push(b"abc");
        c.push(b"defgh");
        let out = c.finish();
        assert_eq!(out.text, "abcdefgh");
        assert_eq!(out.total_bytes, 8);
        assert!(!out.is_truncated());
        assert!(!out.binary);
    }

    #[test]
    fn middle_is_dropped_with_a_marker() {
        let mut c = cap(4, 3);
        for chunk in [&b"01"[..], b"23456", b"7", b"89abcdef"] {
            c.push(chunk);
        }
        let out = c.finish();
        assert_eq!(out.text, "0123\n[… 9 bytes truncated …]\ndef");
        assert_eq!(out.total_bytes, 16);
        assert_eq!(out.truncated_bytes, 9);
    }

    #[test]
    fn chunking_does_not_change_the_result() {
        let data: Vec<u8> = (0..5000u32).map(|i| b'a' + (i % 26) as u8).collect();
        let whole = {
            let mut c = cap(100, 50);
            c.push(&data);
            c.finish()
        };
        for size in [1, 7, 49, 50, 51, 4096] {
            let mut c = cap(100, 50);
            for chunk in data.chunks(size) {
                c.push(chunk);
            }
            assert_eq!(c.finish(), whole, "chunk size {size}");
        }
        assert_eq!(whole.truncated_bytes, 4850);
    }

    #[test]
    fn cuts_do_not_split_characters() {
        // "é" is 2 bytes; the head cap falls inside the third one, the tail cap inside the
        // first of the last three.
        let s = "éééééééééé";
        let mut c = cap(5, 5);
        c.push(s.as_bytes());
        let out = c.finish();
        assert_eq!(out.text, "éé\n[… 12 bytes truncated …]\néé");
        assert!(!out.binary);
        assert!(!out.text.contains('\u{FFFD}'));
    }

    #[test]
    fn binary_and_invalid_utf8_are_flagged_and_decoded_lossily() {
        let mut c = cap(64, 64);
        c.push(b"ok\xff\xfe");
        let out = c.finish();
        assert!(out.binary);
        assert_eq!(out.text, "ok\u{FFFD}\u{FFFD}");

        let mut c = cap(64, 64);
        c.push(b"a\0b");
        assert!(c.finish().binary);

        // A NUL in the dropped middle still marks the stream binary.
        let mut c = cap(2, 2);
        c.push(b"ab\0\0cd");
        let out = c.finish();
        assert!(out.binary);
        assert_eq!(out.text, "ab\n[… 2 bytes truncated …]\ncd");
    }

    #[test]
    fn zero_tail_keeps_only_the_head() {
        let mut c = cap(3, 0);
        c.push(b"abcdef");
        assert_eq!(c.finish().text, "abc\n[… 3 bytes truncated …]\n");
    }
}
