//! `multipart/form-data` (RFC 7578) for the pages' upload forms, read strictly: the body
//! through the one capped body reader (`body::read_capped`), parsed whole. Each part is one
//! field: a `Content-Disposition: form-data; name="..."` header (with `filename="..."` for a
//! file), at most a `Content-Type` besides; no preamble, no other header, no `filename*`, no
//! name twice; a text field must be UTF-8 and all text fields together at most
//! `form::MAX_FORM_BYTES`; a file at most the caller's cap. Field names and file names are
//! as browsers encode them (WHATWG: `"` as `%22`, CR and LF as `%0D` and `%0A`).

use actix_web::dev::Payload;
use actix_web::http::header;
use actix_web::HttpRequest;

use crate::edge::body::{self, BodyError};
use crate::edge::form::MAX_FORM_BYTES;

/// Longest boundary RFC 2046 allows.
const MAX_BOUNDARY: usize = 70;
/// Longest header block of one part.
const MAX_PART_HEADERS: usize = 4096;

/// One field of the form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    pub name: String,
    /// A file field's name for the file (possibly empty: no file chosen).
    pub filename: Option<String>,
    pub bytes: Vec<u8>,
}

/// Why a multipart body was not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MultipartError {
    /// Not `multipart/form-data` with a usable boundary.
    NotMultipart,
    /// Over the cap (a file over its cap, or the text fields over `MAX_FORM_BYTES`).
    TooLarge,
    /// Not well-formed, or a part this reader refuses (the reason).
    Malformed(String),
}

/// The boundary of a `multipart/form-data` request (quoted or not), if it is one.
pub fn boundary(req: &HttpRequest) -> Option<String> {
    let v = req.headers().get(header::CONTENT_TYPE)?.to_str().ok()?;
    let mut params = v.split(';');
    if !params
        .next()?
        .trim()
        .eq_ignore_ascii_case("multipart/form-data")
    {
        return None;
    }
    let b = params.find_map(|p| {
        let (k, v) = p.split_once('=')?;
        k.trim()
            .eq_ignore_ascii_case("boundary")
            .then(|| v.trim().trim_matches('"').to_owned())
    })?;
    let ok = !b.is_empty()
        && b.len() <= MAX_BOUNDARY
        && b.bytes()
            .all(|c| c.is_ascii_alphanumeric() || b"'()+_,-./:=? ".contains(&c))
        && !b.ends_with(' ');
    ok.then_some(b)
}

/// Reads and parses the request's multipart body: a file at most `file_cap` bytes, the body
/// at most `file_cap` plus `MAX_FORM_BYTES` (the envelope and the text fields).
pub async fn read(
    req: &HttpRequest,
    payload: &mut Payload,
    file_cap: usize,
) -> Result<Vec<Part>, MultipartError> {
    let boundary = boundary(req).ok_or(MultipartError::NotMultipart)?;
    let bytes = body::read_capped(
        body::declared_length(req),
        payload,
        file_cap + MAX_FORM_BYTES,
    )
    .await
    .map_err(|e| match e {
        BodyError::TooLarge => MultipartError::TooLarge,
        BodyError::Unreadable(why) => MultipartError::Malformed(why),
    })?;
    parse(&boundary, &bytes, file_cap)
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn malformed(why: &str) -> MultipartError {
    MultipartError::Malformed(why.to_owned())
}

/// Parses a whole body (see the module's rules).
pub fn parse(boundary: &str, body: &[u8], file_cap: usize) -> Result<Vec<Part>, MultipartError> {
    let first = format!("--{boundary}");
    let delimiter = format!("\r\n--{boundary}");
    let mut rest = body
        .strip_prefix(first.as_bytes())
        .ok_or_else(|| malformed("the body does not start with the boundary"))?;
    let mut parts: Vec<Part> = Vec::new();
    let mut text_bytes = 0usize;
    loop {
        if let Some(after) = rest.strip_prefix(b"--") {
            // The close delimiter; an epilogue is allowed only as a line end.
            if !(after.is_empty() || after == b"\r\n") {
                return Err(malformed("bytes after the last part"));
            }
            return Ok(parts);
        }
        rest = rest
            .strip_prefix(b"\r\n")
            .ok_or_else(|| malformed("a boundary not followed by a line end"))?;
        let head_end =
            find(rest, b"\r\n\r\n").ok_or_else(|| malformed("a part without its headers' end"))?;
        if head_end > MAX_PART_HEADERS {
            return Err(malformed("a part's headers are too long"));
        }
        let head = std::str::from_utf8(&rest[..head_end])
            .map_err(|_| malformed("a part's headers are not UTF-8"))?;
        let (name, filename) = part_headers(head)?;
        rest = &rest[head_end + 4..];
        let end = find(rest, delimiter.as_bytes())
            .ok_or_else(|| malformed("a part without its closing boundary"))?;
        let bytes = rest[..end].to_vec();
        rest = &rest[end + delimiter.len()..];
        if parts.iter().any(|p| p.name == name) {
            return Err(MultipartError::Malformed(format!(
                "The form repeats the field {name}."
            )));
        }
        if filename.is_some() {
            if bytes.len() > file_cap {
                return Err(MultipartError::TooLarge);
            }
        } else {
            text_bytes += bytes.len();
            if text_bytes > MAX_FORM_BYTES {
                return Err(MultipartError::TooLarge);
            }
            if std::str::from_utf8(&bytes).is_err() {
                return Err(MultipartError::Malformed(format!(
                    "The value of {name} is not UTF-8."
                )));
            }
        }
        parts.push(Part {
            name,
            filename,
            bytes,
        });
    }
}

/// A part's name and file name from its header block.
fn part_headers(head: &str) -> Result<(String, Option<String>), MultipartError> {
    let mut disposition = None;
    let mut typed = false;
    for line in head.split("\r\n") {
        let (k, v) = line
            .split_once(':')
            .ok_or_else(|| malformed("a part header without a colon"))?;
        let k = k.trim();
        if k.eq_ignore_ascii_case("content-disposition") && disposition.is_none() {
            disposition = Some(v.trim());
        } else if k.eq_ignore_ascii_case("content-type") && !typed {
            // A file's declared type is not trusted (the domain sniffs the bytes).
            typed = true;
        } else {
            return Err(MultipartError::Malformed(format!(
                "a part header this form does not take: {k}"
            )));
        }
    }
    let d = disposition.ok_or_else(|| malformed("a part without Content-Disposition"))?;
    let mut params = split_params(d)?.into_iter();
    if !params
        .next()
        .is_some_and(|(k, v)| k.eq_ignore_ascii_case("form-data") && v.is_none())
    {
        return Err(malformed("a part that is not form-data"));
    }
    let (mut name, mut filename) = (None, None);
    for (k, v) in params {
        let v = v.ok_or_else(|| malformed("a Content-Disposition parameter without a value"))?;
        let slot = if k.eq_ignore_ascii_case("name") {
            &mut name
        } else if k.eq_ignore_ascii_case("filename") {
            &mut filename
        } else {
            return Err(MultipartError::Malformed(format!(
                "a Content-Disposition parameter this form does not take: {k}"
            )));
        };
        if slot.replace(unescape(&v)).is_some() {
            return Err(malformed("a Content-Disposition parameter given twice"));
        }
    }
    let name = name
        .filter(|n| !n.is_empty())
        .ok_or_else(|| malformed("a part without a name"))?;
    Ok((name, filename))
}

/// `form-data; name="a"; filename="b"` as (key, value) pairs; quoted values end at the next
/// `"` (browsers percent-encode a `"` inside).
fn split_params(d: &str) -> Result<Vec<(String, Option<String>)>, MultipartError> {
    let mut out = Vec::new();
    let mut rest = d;
    loop {
        rest = rest.trim_start();
        let key_end = rest.find(['=', ';']).unwrap_or(rest.len());
        let key = rest[..key_end].trim().to_owned();
        rest = &rest[key_end..];
        let value = if let Some(after) = rest.strip_prefix('=') {
            let after = after.trim_start();
            if let Some(q) = after.strip_prefix('"') {
                let close = q
                    .find('"')
                    .ok_or_else(|| malformed("an unterminated quoted parameter"))?;
                rest = &q[close + 1..];
                Some(q[..close].to_owned())
            } else {
                let end = after.find(';').unwrap_or(after.len());
                rest = &after[end..];
                Some(after[..end].trim().to_owned())
            }
        } else {
            None
        };
        if key.is_empty() {
            return Err(malformed("an empty Content-Disposition parameter"));
        }
        out.push((key, value));
        rest = rest.trim_start();
        match rest.strip_prefix(';') {
            Some(r) => rest = r,
            None if rest.is_empty() => return Ok(out),
            None => return Err(malformed("a malformed Content-Disposition")),
        }
    }
}

/// The WHATWG escapes of a field or file name undone: `%22`, `%0D`, `%0A`.
fn unescape(v: &str) -> String {
    v.replace("%22", "\"")
        .replace("%0D", "\r")
        .replace("%0A", "\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(parts: &[&str]) -> Vec<u8> {
        let mut b = String::new();
        for p in parts {
            b.push_str("--XyZ\r\n");
            b.push_str(p);
            b.push_str("\r\n");
        }
        b.push_str("--XyZ--\r\n");
        b.into_bytes()
    }

    #[test]
    fn reads_text_fields_and_a_file_as_a_browser_sends_them() {
        let b = body(&[
            "Content-Disposition: form-data; name=\"csrf_token\"\r\n\r\nabc",
            "Content-Disposition: form-data; name=\"notes\"\r\n\r\nline 1\r\nline 2 caf\u{e9}",
            "Content-Disposition: form-data; name=\"evidence\"; filename=\"a %22b%22.pdf\"\r\nContent-Type: application/pdf\r\n\r\n%PDF-1.4\r\n--X\r\n",
            "Content-Disposition: form-data; name=\"empty\"; filename=\"\"\r\nContent-Type: application/octet-stream\r\n\r\n",
        ]);
        let parts = parse("XyZ", &b, 100).unwrap();
        assert_eq!(parts.len(), 4);
        assert_eq!(
            (parts[0].name.as_str(), &parts[0].bytes[..]),
            ("csrf_token", &b"abc"[..])
        );
        assert_eq!(parts[1].bytes, "line 1\r\nline 2 caf\u{e9}".as_bytes());
        assert_eq!(parts[2].filename.as_deref(), Some("a \"b\".pdf"));
        assert_eq!(parts[2].bytes, b"%PDF-1.4\r\n--X\r\n");
        assert_eq!(parts[3].filename.as_deref(), Some(""));
        assert!(parts[3].bytes.is_empty());
        // No epilogue line end is fine too.
        let mut short = b.clone();
        short.truncate(b.len() - 2);
        assert_eq!(parse("XyZ", &short, 100).unwrap().len(), 4);
    }

    #[test]
    fn refuses_what_it_does_not_take() {
        let cases: &[(&[u8], &str)] = &[
            (b"preamble\r\n--XyZ\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n--XyZ--", "preamble"),
            (b"--XyZ\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1", "unclosed"),
            (b"--XyZ\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n--XyZ\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n2\r\n--XyZ--", "repeated"),
            (b"--XyZ\r\nContent-Disposition: attachment; name=\"a\"\r\n\r\n1\r\n--XyZ--", "not form-data"),
            (b"--XyZ\r\nContent-Disposition: form-data; name=\"a\"\r\nX-Other: 1\r\n\r\n1\r\n--XyZ--", "other header"),
            (b"--XyZ\r\nContent-Disposition: form-data; name=\"a\"; filename*=UTF-8''x\r\n\r\n1\r\n--XyZ--", "filename*"),
            (b"--XyZ\r\nContent-Disposition: form-data; name=\"\"\r\n\r\n1\r\n--XyZ--", "no name"),
            (b"--XyZ\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n\xff\r\n--XyZ--", "not UTF-8"),
            (b"--XyZ\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n--XyZ--trailing", "epilogue"),
            (b"--XyZ\r\nContent-Disposition: form-data; name=\"a\r\n\r\n1\r\n--XyZ--", "unterminated"),
        ];
        for (b, what) in cases {
            assert!(
                matches!(parse("XyZ", b, 100), Err(MultipartError::Malformed(_))),
                "{what}"
            );
        }
    }

    #[test]
    fn caps_files_and_text() {
        let b =
            body(&["Content-Disposition: form-data; name=\"f\"; filename=\"x\"\r\n\r\n0123456789"]);
        assert_eq!(parse("XyZ", &b, 10).unwrap()[0].bytes.len(), 10);
        assert_eq!(parse("XyZ", &b, 9), Err(MultipartError::TooLarge));
        let big = format!(
            "Content-Disposition: form-data; name=\"t\"\r\n\r\n{}",
            "x".repeat(MAX_FORM_BYTES + 1)
        );
        assert_eq!(
            parse("XyZ", &body(&[&big]), 10),
            Err(MultipartError::TooLarge)
        );
    }
}
