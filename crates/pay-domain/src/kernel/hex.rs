//! Lower-case hexadecimal, the one spelling the domain writes digests, signatures and proof
//! ids in.

const DIGITS: &[u8; 16] = b"0123456789abcdef";

/// Lower-case hex of `bytes`.
pub fn encode(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[usize::from(b >> 4)] as char);
        s.push(DIGITS[usize::from(b & 0xf)] as char);
    }
    s
}

/// The bytes of a lower-case hex string; `None` for an odd length, an upper-case digit or any
/// other character (one spelling per value).
pub fn decode(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    let digit = |b: u8| match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        _ => None,
    };
    s.as_bytes()
        .chunks(2)
        .map(|p| Some(digit(p[0])? << 4 | digit(p[1])?))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_lower_case_and_decodes_only_that() {
        assert_eq!(encode(&[]), "");
        assert_eq!(encode(&[0, 171, 255]), "00abff");
        assert_eq!(decode("00abff"), Some(vec![0, 171, 255]));
        assert_eq!(decode(""), Some(vec![]));
        assert_eq!(decode("00ABFF"), None);
        assert_eq!(decode("0ab"), None);
        assert_eq!(decode("0g"), None);
        let all: Vec<u8> = (0..=255).collect();
        assert_eq!(decode(&encode(&all)), Some(all));
    }
}
