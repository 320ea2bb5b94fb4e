//! The accountant's CSV writer (`pay_domain::bookkeeping::csv`): records built from the input
//! (cells split at 0x1F, records at 0x1E) are written, then read back by the `csv` crate, an
//! RFC 4180 reader that is not ours. Every cell reads back as `read_back` says (its text, with
//! `'` before a formula), no cell read back starts as a formula (`=`, `+`, `-`, `@`, TAB, CR),
//! and the output is CRLF-terminated records only.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pay_domain::bookkeeping::csv::{cell, read_back, write_record};

const FORMULA_STARTS: [char; 6] = ['=', '+', '-', '@', '\t', '\r'];

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let rows: Vec<Vec<&str>> = text
        .split('\u{1e}')
        .map(|r| r.split('\u{1f}').collect())
        .collect();
    let mut out = String::new();
    for row in &rows {
        write_record(&mut out, row);
    }
    assert!(out.ends_with("\r\n"));
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(out.as_bytes());
    let read: Vec<Vec<String>> = reader
        .records()
        .map(|r| {
            r.expect("the csv crate reads what we write")
                .iter()
                .map(str::to_owned)
                .collect()
        })
        .collect();
    // A record of one empty cell is an empty line, which RFC 4180 readers skip (the exports
    // always have several columns).
    let expected: Vec<Vec<String>> = rows
        .iter()
        .filter(|r| !(r.len() == 1 && r[0].is_empty()))
        .map(|r| r.iter().map(|c| read_back(c)).collect())
        .collect();
    assert_eq!(read, expected);
    for c in read.iter().flatten() {
        assert!(
            !c.starts_with(FORMULA_STARTS),
            "a cell reads back as a formula: {c:?}"
        );
    }
    for row in &rows {
        for c in row {
            let written = cell(c);
            let quoted = written.starts_with('"');
            assert_eq!(quoted, read_back(c).contains([',', '"', '\r', '\n']));
            assert!(quoted || !written.starts_with(FORMULA_STARTS));
        }
    }
});
