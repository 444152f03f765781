//! Bytes of a CSV file to UTF-8 text, as a stream: the encoding (UTF-8,
//! UTF-16 with a byte-order mark, Windows-1252 by config or detected), and a
//! watch on quotes so that a quote still open at the end of the file is an
//! error rather than a last cell swallowing every row after it.

use anyhow::{Result, bail};
use encoding_rs::{Encoding, UTF_8, UTF_16BE, UTF_16LE, WINDOWS_1252};
use std::io::{self, Read};

/// The encoding to read a file in, from the config's `encoding` key, the
/// byte-order mark and the first bytes; plus a notice when it was guessed.
pub fn choose(
    configured: Option<&str>,
    head: &[u8],
) -> Result<(&'static Encoding, Option<super::InputNotice>)> {
    if head.starts_with(&[0xFF, 0xFE]) {
        return Ok((UTF_16LE, None));
    }
    if head.starts_with(&[0xFE, 0xFF]) {
        return Ok((UTF_16BE, None));
    }
    if let Some(label) = configured {
        let label = label.trim();
        // WHATWG labels, plus the spellings people write (`latin-1`).
        let known = match label.to_ascii_lowercase().replace([' ', '_'], "-").as_str() {
            "latin-1" | "iso-latin-1" => "latin1".to_owned(),
            "cp-1252" | "windows1252" => "windows-1252".to_owned(),
            other => other.to_owned(),
        };
        let Some(enc) = Encoding::for_label(known.as_bytes()) else {
            bail!(
                "encoding = {label:?} in the config is not an encoding name: write \"utf-8\", \"windows-1252\" or \"latin-1\""
            );
        };
        // UTF-16 without a byte-order mark cannot be told from its bytes.
        return Ok((enc, None));
    }
    // Valid UTF-8, ignoring a character cut by the end of the head.
    let valid = match std::str::from_utf8(head) {
        Ok(_) => true,
        Err(e) => e.error_len().is_none() && head.len() - e.valid_up_to() < 4,
    };
    if valid {
        Ok((UTF_8, None))
    } else {
        Ok((WINDOWS_1252, Some(super::InputNotice::Windows1252)))
    }
}

/// The whole file decoded to UTF-8 (a byte-order mark removed). Used for
/// files not in UTF-8, which spreadsheet programs write for small
/// exports; UTF-8 files are streamed untouched instead.
pub fn decode_all(bytes: &[u8], encoding: &'static Encoding) -> Vec<u8> {
    let (text, _, _) = encoding.decode(bytes);
    text.into_owned().into_bytes()
}

/// Quote state of the text read so far, as the CSV reader sees it: a quote
/// opens a field only at its start; inside, `""` is a quote and `"` closes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Outside,
    Quoted,
    QuoteInQuoted,
}

/// A pass-through reader tracking whether a quoted field is open. It jumps
/// from quote to quote (`memchr`), so it costs little next to the parsing.
pub struct QuoteWatch<R> {
    inner: R,
    delimiter: u8,
    state: State,
    /// Line of the next byte, counted only where needed.
    line: u64,
    opened_at: u64,
    /// The byte before the chunk being read (`\n` at the start: a field
    /// starts there).
    last: u8,
    started: bool,
}

impl<R: Read> QuoteWatch<R> {
    pub fn new(inner: R, delimiter: u8) -> QuoteWatch<R> {
        QuoteWatch {
            inner,
            delimiter,
            state: State::Outside,
            line: 1,
            opened_at: 0,
            last: b'\n',
            started: false,
        }
    }

    /// The line (1-based) where a quote still open was opened.
    pub fn open_quote(&self) -> Option<u64> {
        (self.state == State::Quoted).then_some(self.opened_at)
    }

    fn scan(&mut self, bytes: &[u8]) {
        let newlines = |b: &[u8]| b.iter().filter(|&&c| c == b'\n').count() as u64;
        let mut i = 0;
        while i < bytes.len() {
            match self.state {
                State::QuoteInQuoted => {
                    // `""` is a quote inside the field; anything else
                    // closed it.
                    self.state = if bytes[i] == b'"' {
                        i += 1;
                        State::Quoted
                    } else {
                        State::Outside
                    };
                }
                State::Quoted => match memchr::memchr(b'"', &bytes[i..]) {
                    Some(p) => {
                        self.line += newlines(&bytes[i..i + p]);
                        i += p + 1;
                        self.state = State::QuoteInQuoted;
                    }
                    None => {
                        self.line += newlines(&bytes[i..]);
                        i = bytes.len();
                    }
                },
                State::Outside => match memchr::memchr(b'"', &bytes[i..]) {
                    Some(p) => {
                        self.line += newlines(&bytes[i..i + p]);
                        let at = i + p;
                        let prev = if at == 0 { self.last } else { bytes[at - 1] };
                        if prev == self.delimiter || prev == b'\n' || prev == b'\r' {
                            self.opened_at = self.line;
                            self.state = State::Quoted;
                        }
                        i = at + 1;
                    }
                    None => {
                        self.line += newlines(&bytes[i..]);
                        i = bytes.len();
                    }
                },
            }
        }
        if let Some(&b) = bytes.last() {
            self.last = b;
        }
    }
}

impl<R: Read> Read for QuoteWatch<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        let mut bytes = &buf[..n];
        if !self.started && n > 0 {
            self.started = true;
            bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
        }
        self.scan(bytes);
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(bytes: &[u8], enc: &'static Encoding) -> String {
        String::from_utf8(decode_all(bytes, enc)).unwrap()
    }

    #[test]
    fn windows_1252_and_utf16() {
        assert_eq!(decode(b"Andr\xE9;Ch\x9Cur", WINDOWS_1252), "André;Chœur");
        let utf16: Vec<u8> = [0xFF, 0xFE]
            .into_iter()
            .chain("Zoë,1".encode_utf16().flat_map(u16::to_le_bytes))
            .collect();
        assert_eq!(decode(&utf16, UTF_16LE), "Zoë,1");
        assert_eq!(decode("é".as_bytes(), UTF_8), "é");
    }

    #[test]
    fn encoding_choice() {
        assert_eq!(choose(None, b"a,b\n").unwrap(), (UTF_8, None));
        let (enc, notice) = choose(None, b"Andr\xE9,b\n").unwrap();
        assert_eq!(enc, WINDOWS_1252);
        assert!(notice.unwrap().to_string().contains("Windows-1252"));
        assert_eq!(choose(Some("latin-1"), b"a").unwrap().0, WINDOWS_1252);
        assert_eq!(choose(None, b"\xFF\xFEa\0").unwrap().0, UTF_16LE);
        // A character cut by the end of the head is still UTF-8.
        assert_eq!(choose(None, b"a,\xC3").unwrap().0, UTF_8);
        assert!(choose(Some("klingon"), b"a").is_err());
    }

    fn open_line(text: &str) -> Option<u64> {
        let mut w = QuoteWatch::new(text.as_bytes(), b',');
        std::io::copy(&mut w, &mut std::io::sink()).unwrap();
        w.open_quote()
    }

    #[test]
    fn open_quote_at_end_is_seen() {
        assert_eq!(open_line("a,b\n1,\"x\"\"y\"\n2,\"two\nlines\"\n"), None);
        assert_eq!(open_line("a,b\n1,\"see memo\n2,x\n3,y\n"), Some(2));
        // A quote inside an unquoted field is text.
        assert_eq!(open_line("a,b\n1,5\" screen\n"), None);
        assert_eq!(open_line("\u{feff}\"a\",b\n1,\"x\n"), Some(2));
        assert_eq!(open_line("\"a\"\"\",b\n1,x\n"), None);
        assert_eq!(open_line("a;b\n\"x\"y\"z\n"), None);
    }

    /// Quotes and line breaks cut by the reader's buffer are followed.
    #[test]
    fn state_across_chunks() {
        let text = b"a,b\n1,\"x\"\"\ny\"\n2,\"open\nmore\n";
        for cut in 0..text.len() {
            let mut w = QuoteWatch::new(&text[..], b',');
            w.scan(&text[..cut]);
            w.scan(&text[cut..]);
            assert_eq!(w.open_quote(), Some(4), "cut at {cut}");
        }
    }
}
