//! The accountant's CSV (RFC 4180), pure: CRLF line ends, a field holding `,`, `"`, CR or LF
//! is quoted with `"` doubled, and a text cell a spreadsheet would read as a formula (first
//! character `=`, `+`, `-`, `@`, TAB or CR) gets a leading `'`.

/// First characters a spreadsheet reads as the start of a formula (CSV injection).
const FORMULA_STARTS: [char; 6] = ['=', '+', '-', '@', '\t', '\r'];

/// One cell as written: the formula guard first, then RFC 4180 quoting.
pub fn cell(value: &str) -> String {
    let guarded = read_back(value);
    if guarded.contains([',', '"', '\r', '\n']) {
        format!("\"{}\"", guarded.replace('"', "\"\""))
    } else {
        guarded
    }
}

/// One record: the cells joined by `,`, ended by CRLF, appended to `out`.
pub fn write_record<S: AsRef<str>>(out: &mut String, cells: &[S]) {
    for (i, c) in cells.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&cell(c.as_ref()));
    }
    out.push_str("\r\n");
}

/// What a reader gets back for a cell (the formula guard): the value, with a `'` in front of
/// a formula.
pub fn read_back(value: &str) -> String {
    match value.chars().next() {
        Some(c) if FORMULA_STARTS.contains(&c) => format!("'{value}"),
        _ => value.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// An RFC 4180 reader (strict: quotes only around a whole field), for the round trip.
    fn parse(text: &str) -> Vec<Vec<String>> {
        let mut records = Vec::new();
        let mut record = Vec::new();
        let mut field = String::new();
        let mut chars = text.chars().peekable();
        let mut quoted = false;
        let mut at_start = true;
        while let Some(c) = chars.next() {
            if quoted {
                if c == '"' {
                    if chars.peek() == Some(&'"') {
                        chars.next();
                        field.push('"');
                    } else {
                        quoted = false;
                    }
                } else {
                    field.push(c);
                }
                continue;
            }
            match c {
                '"' if at_start => {
                    quoted = true;
                    at_start = false;
                }
                '"' => panic!("a quote inside an unquoted field"),
                ',' => {
                    record.push(std::mem::take(&mut field));
                    at_start = true;
                }
                '\r' => {
                    assert_eq!(chars.next(), Some('\n'), "CR without LF outside quotes");
                    record.push(std::mem::take(&mut field));
                    records.push(std::mem::take(&mut record));
                    at_start = true;
                }
                '\n' => panic!("a bare LF outside quotes"),
                c => {
                    field.push(c);
                    at_start = false;
                }
            }
        }
        assert!(!quoted, "an open quote at the end");
        assert!(record.is_empty() && field.is_empty(), "no CRLF at the end");
        records
    }

    #[test]
    fn quotes_only_what_needs_it() {
        assert_eq!(cell("plain text"), "plain text");
        assert_eq!(cell(""), "");
        assert_eq!(cell("a,b"), "\"a,b\"");
        assert_eq!(cell("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(cell("two\nlines"), "\"two\nlines\"");
        assert_eq!(cell("cr\rhere"), "\"cr\rhere\"");
        assert_eq!(cell("125.5"), "125.5");
    }

    #[test]
    fn formula_cells_get_a_leading_apostrophe() {
        assert_eq!(cell("=SUM(A1:A2)"), "'=SUM(A1:A2)");
        assert_eq!(cell("+1"), "'+1");
        assert_eq!(cell("-1"), "'-1");
        assert_eq!(cell("@cmd"), "'@cmd");
        assert_eq!(cell("\tx"), "'\tx");
        // Guarded, then quoted: the `'` is inside the quotes.
        assert_eq!(cell("\rx"), "\"'\rx\"");
        assert_eq!(
            cell("=HYPERLINK(\"a\",\"b\")"),
            "\"'=HYPERLINK(\"\"a\"\",\"\"b\"\")\""
        );
        // Only the first character counts.
        assert_eq!(cell("a=b"), "a=b");
        assert_eq!(cell("'=x"), "'=x");
    }

    #[test]
    fn records_end_with_crlf() {
        let mut out = String::new();
        write_record(&mut out, &["date", "amount"]);
        write_record(&mut out, &["x\ny", "=1"]);
        assert_eq!(out, "date,amount\r\n\"x\ny\",'=1\r\n");
        assert_eq!(
            parse(&out),
            vec![vec!["date", "amount"], vec!["x\ny", "'=1"]]
        );
    }

    proptest! {
        #[test]
        fn every_record_reads_back(rows in prop::collection::vec(
            prop::collection::vec("[a-z=+@\\-\t\r\n,\" ']{0,12}", 1..6), 1..6)
        ) {
            let mut out = String::new();
            for r in &rows {
                write_record(&mut out, r);
            }
            let expected: Vec<Vec<String>> = rows
                .iter()
                .map(|r| r.iter().map(|c| read_back(c)).collect())
                .collect();
            prop_assert_eq!(parse(&out), expected);
        }
    }
}
