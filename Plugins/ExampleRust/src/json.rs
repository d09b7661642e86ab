//! Strict JSON (RFC 8259), as the payload documents require: UTF-8 only, no
//! raw control characters in strings, no invalid or lone-surrogate escapes,
//! no trailing content, no repeated member names, at most 64 levels deep (a
//! deeper document is refused, never a stack overflow). Numbers keep their
//! text, so an amount is read as an exact integer or refused.

use std::collections::HashSet;
use std::fmt::Write;

#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    /// The number's text, validated against the JSON grammar.
    Number(String),
    String(String),
    Array(Vec<Value>),
    Object(Vec<(String, Value)>),
}

const MAX_DEPTH: usize = 64;

impl Value {
    /// Parses one document: the whole input must be one JSON value.
    pub fn parse(bytes: &[u8]) -> Result<Value, String> {
        let text = std::str::from_utf8(bytes).map_err(|e| format!("not UTF-8 at byte {}", e.valid_up_to()))?;
        let mut parser = Parser { bytes: text.as_bytes(), at: 0 };
        let value = parser.value(0)?;
        parser.skip_whitespace();
        if parser.at != parser.bytes.len() {
            return Err(format!("trailing content at byte {}", parser.at));
        }
        Ok(value)
    }

    /// The member `name` of an object (None for a missing member, or when
    /// this is not an object).
    pub fn get(&self, name: &str) -> Option<&Value> {
        match self {
            Value::Object(members) => members.iter().find(|(key, _)| key == name).map(|(_, value)| value),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// An exact signed 64-bit integer: no fraction, no exponent, in range.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Number(text) if !text.contains(['.', 'e', 'E']) => text.parse().ok(),
            _ => None,
        }
    }

    pub fn is_object(&self) -> bool {
        matches!(self, Value::Object(_))
    }
}

struct Parser<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Parser<'a> {
    fn skip_whitespace(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.at) {
            self.at += 1;
        }
    }

    fn error<T>(&self, what: &str) -> Result<T, String> {
        Err(format!("{} at byte {}", what, self.at))
    }

    fn value(&mut self, depth: usize) -> Result<Value, String> {
        if depth >= MAX_DEPTH {
            return self.error("nested more than 64 levels");
        }
        self.skip_whitespace();
        match self.bytes.get(self.at) {
            None => self.error("unexpected end"),
            Some(b'{') => self.object(depth),
            Some(b'[') => self.array(depth),
            Some(b'"') => self.string().map(Value::String),
            Some(b't') => self.literal("true", Value::Bool(true)),
            Some(b'f') => self.literal("false", Value::Bool(false)),
            Some(b'n') => self.literal("null", Value::Null),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(_) => self.error("unexpected character"),
        }
    }

    fn literal(&mut self, word: &str, value: Value) -> Result<Value, String> {
        if self.bytes[self.at..].starts_with(word.as_bytes()) {
            self.at += word.len();
            Ok(value)
        } else {
            self.error("invalid literal")
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.at;
        while let Some(b'0'..=b'9') = self.bytes.get(self.at) {
            self.at += 1;
        }
        self.at - start
    }

    fn number(&mut self) -> Result<Value, String> {
        let start = self.at;
        if self.bytes[self.at] == b'-' {
            self.at += 1;
        }
        match self.bytes.get(self.at) {
            Some(b'0') => self.at += 1,
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return self.error("invalid number"),
        }
        if self.bytes.get(self.at) == Some(&b'.') {
            self.at += 1;
            if self.digits() == 0 {
                return self.error("invalid number");
            }
        }
        if let Some(b'e' | b'E') = self.bytes.get(self.at) {
            self.at += 1;
            if let Some(b'+' | b'-') = self.bytes.get(self.at) {
                self.at += 1;
            }
            if self.digits() == 0 {
                return self.error("invalid number");
            }
        }
        // The input was checked to be UTF-8, and a number is ASCII.
        Ok(Value::Number(String::from_utf8_lossy(&self.bytes[start..self.at]).into_owned()))
    }

    fn hex4(&mut self) -> Result<u32, String> {
        let mut code = 0u32;
        for _ in 0..4 {
            let digit = match self.bytes.get(self.at) {
                Some(c @ b'0'..=b'9') => c - b'0',
                Some(c @ b'a'..=b'f') => c - b'a' + 10,
                Some(c @ b'A'..=b'F') => c - b'A' + 10,
                _ => return self.error("invalid \\u escape"),
            };
            code = code * 16 + u32::from(digit);
            self.at += 1;
        }
        Ok(code)
    }

    fn string(&mut self) -> Result<String, String> {
        self.at += 1; // the opening quote
        let mut out = String::new();
        loop {
            let start = self.at;
            while let Some(&c) = self.bytes.get(self.at) {
                if c == b'"' || c == b'\\' || c < 0x20 {
                    break;
                }
                self.at += 1;
            }
            // A run of plain characters: whole UTF-8 sequences (they end before an ASCII byte).
            out.push_str(std::str::from_utf8(&self.bytes[start..self.at]).map_err(|_| format!("not UTF-8 at byte {}", start))?);
            match self.bytes.get(self.at) {
                None => return self.error("unterminated string"),
                Some(b'"') => {
                    self.at += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.at += 1;
                    let escaped = match self.bytes.get(self.at) {
                        Some(b'"') => '"',
                        Some(b'\\') => '\\',
                        Some(b'/') => '/',
                        Some(b'b') => '\u{8}',
                        Some(b'f') => '\u{c}',
                        Some(b'n') => '\n',
                        Some(b'r') => '\r',
                        Some(b't') => '\t',
                        Some(b'u') => {
                            self.at += 1;
                            let high = self.hex4()?;
                            let code = if (0xD800..0xDC00).contains(&high) {
                                if !self.bytes[self.at..].starts_with(b"\\u") {
                                    return self.error("unpaired surrogate escape");
                                }
                                self.at += 2;
                                let low = self.hex4()?;
                                if !(0xDC00..0xE000).contains(&low) {
                                    return self.error("unpaired surrogate escape");
                                }
                                0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
                            } else if (0xDC00..0xE000).contains(&high) {
                                return self.error("unpaired surrogate escape");
                            } else {
                                high
                            };
                            self.at -= 1; // the common step below
                            match char::from_u32(code) {
                                Some(c) => c,
                                None => return self.error("invalid \\u escape"),
                            }
                        }
                        _ => return self.error("invalid escape"),
                    };
                    self.at += 1;
                    out.push(escaped);
                }
                Some(_) => return self.error("raw control character in a string"),
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<Value, String> {
        self.at += 1;
        let mut items = Vec::new();
        self.skip_whitespace();
        if self.bytes.get(self.at) == Some(&b']') {
            self.at += 1;
            return Ok(Value::Array(items));
        }
        loop {
            items.push(self.value(depth + 1)?);
            self.skip_whitespace();
            match self.bytes.get(self.at) {
                Some(b',') => self.at += 1,
                Some(b']') => {
                    self.at += 1;
                    return Ok(Value::Array(items));
                }
                _ => return self.error("expected , or ]"),
            }
        }
    }

    fn object(&mut self, depth: usize) -> Result<Value, String> {
        self.at += 1;
        let mut members: Vec<(String, Value)> = Vec::new();
        let mut names: HashSet<String> = HashSet::new();
        self.skip_whitespace();
        if self.bytes.get(self.at) == Some(&b'}') {
            self.at += 1;
            return Ok(Value::Object(members));
        }
        loop {
            self.skip_whitespace();
            if self.bytes.get(self.at) != Some(&b'"') {
                return self.error("expected a member name");
            }
            let name = self.string()?;
            if !names.insert(name.clone()) {
                return self.error("repeated member name");
            }
            self.skip_whitespace();
            if self.bytes.get(self.at) != Some(&b':') {
                return self.error("expected :");
            }
            self.at += 1;
            let value = self.value(depth + 1)?;
            members.push((name, value));
            self.skip_whitespace();
            match self.bytes.get(self.at) {
                Some(b',') => self.at += 1,
                Some(b'}') => {
                    self.at += 1;
                    return Ok(Value::Object(members));
                }
                _ => return self.error("expected , or }"),
            }
        }
    }
}

/// Writes one JSON object, member by member, in the order given.
pub struct ObjectWriter {
    out: String,
    first: bool,
}

impl ObjectWriter {
    pub fn new() -> ObjectWriter {
        ObjectWriter { out: String::from("{"), first: true }
    }

    fn name(&mut self, name: &str) {
        if !self.first {
            self.out.push(',');
        }
        self.first = false;
        write_string(&mut self.out, name);
        self.out.push(':');
    }

    pub fn string(mut self, name: &str, value: &str) -> ObjectWriter {
        self.name(name);
        write_string(&mut self.out, value);
        self
    }

    pub fn integer(mut self, name: &str, value: i64) -> ObjectWriter {
        self.name(name);
        let _ = write!(self.out, "{}", value);
        self
    }

    pub fn boolean(mut self, name: &str, value: bool) -> ObjectWriter {
        self.name(name);
        self.out.push_str(if value { "true" } else { "false" });
        self
    }

    /// A member whose value is an object written by `inner`.
    pub fn object(mut self, name: &str, inner: ObjectWriter) -> ObjectWriter {
        self.name(name);
        self.out.push_str(&inner.finish());
        self
    }

    pub fn finish(mut self) -> String {
        self.out.push('}');
        self.out
    }
}

/// A JSON string literal: quotes, backslashes and every control character escaped.
pub fn write_string(out: &mut String, value: &str) {
    out.push('"');
    for c in value.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// `{"message": "..."}`: the error document of a non-OK completion.
pub fn error_document(message: &str) -> String {
    ObjectWriter::new().string("message", message).finish()
}

#[cfg(test)]
mod tests {
    use super::Value;

    #[test]
    fn strictness() {
        assert!(Value::parse(br#"{"a": [1, -0.5e3, "\u00e9\ud83d\ude00"], "b": null}"#).is_ok());
        for bad in [&br#"{"a": 1} x"#[..], br#"{"a": 01}"#, br#"{"a": "\ud800"}"#, b"{\"a\": \"\x01\"}", br#"{"a": 1, "a": 2}"#,
                    b"{\"a\": \"\xff\"}", br#"{"a": tru}"#, br#"{"a": 1,}"#] {
            assert!(Value::parse(bad).is_err(), "{:?}", String::from_utf8_lossy(bad));
        }
        let deep = format!("{}{}", "[".repeat(65), "]".repeat(65));
        assert!(Value::parse(deep.as_bytes()).is_err());
        let fits = format!("{}{}", "[".repeat(64), "]".repeat(64));
        assert!(Value::parse(fits.as_bytes()).is_ok());
        assert_eq!(Value::parse(b"{\"v\": 1e3}").unwrap().get("v").unwrap().as_i64(), None);
        assert_eq!(Value::parse(b"{\"v\": 9223372036854775807}").unwrap().get("v").unwrap().as_i64(), Some(i64::MAX));
    }
}
