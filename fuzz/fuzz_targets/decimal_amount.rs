//! The decimal amount parser (`Decimal::parse`, `parse_stored`, `Amount::parse`): the input is
//! one or two decimals separated by `|`. Parse then format gives back the text exactly (the
//! grammar has one spelling per value and scale); the stored reading agrees with the strict
//! one and prints a string the strict one takes; an amount is positive and within its scale;
//! and the arithmetic on two parsed values is consistent: (a + b) - b = a, a - b has the sign
//! of a compared with b, a * b = b * a, and the two roundings of a / b bracket it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pay_domain::kernel::amount::{Amount, Decimal, DecimalError, Rounding, MAX_SCALE};

fn one(s: &str) -> Option<Decimal> {
    let strict = Decimal::parse(s);
    let stored = Decimal::parse_stored(s);
    if let Ok(d) = strict {
        assert_eq!(d.to_string(), s, "parse then format changed the text");
        assert_eq!(Decimal::parse(&d.to_string()), Ok(d));
        assert_eq!(stored, Ok(d), "the stored reading disagrees");
        assert_eq!(
            d.scale() as usize,
            s.split_once('.').map_or(0, |(_, f)| f.len())
        );
        let n = d.normalized();
        assert_eq!(n, d);
        assert_eq!(Decimal::parse(&n.to_string()), Ok(d));
    }
    if let Ok(d) = stored {
        // Leading zeros and `-0` read, but what prints is the canonical spelling.
        let printed = d.to_string();
        assert_eq!(Decimal::parse(&printed), Ok(d), "{printed}");
    }
    match Amount::parse(s, MAX_SCALE) {
        Ok(a) => {
            let v = a.value();
            assert_eq!(a.as_str(), s);
            assert!(!v.is_negative() && !v.is_zero());
            assert_eq!(Ok(v), strict);
            assert!(Amount::parse(s, v.scale()).is_ok());
            if v.scale() > 0 {
                assert_eq!(
                    Amount::parse(s, v.scale() - 1),
                    Err(DecimalError::TooPrecise(v.scale() - 1))
                );
            }
        }
        Err(_) => assert!(strict.is_err() || strict.is_ok_and(|d| d.is_negative() || d.is_zero())),
    }
    strict.ok()
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (a, b) = match text.split_once('|') {
        Some((a, b)) => (one(a), one(b)),
        None => (one(text), None),
    };
    let (Some(a), Some(b)) = (a, b) else {
        return;
    };
    if let Some(sum) = a.checked_add(b) {
        assert_eq!(sum.checked_sub(b), Some(a), "(a + b) - b");
        assert_eq!(b.checked_add(a), Some(sum), "a + b = b + a");
    }
    if let Some(diff) = a.checked_sub(b) {
        assert_eq!(diff.cmp(&Decimal::ZERO), a.cmp(&b), "sign of a - b");
        assert_eq!(diff.is_zero(), a == b);
    }
    assert_eq!(a.checked_mul(b), b.checked_mul(a), "a * b = b * a");
    let down = a.checked_div(b, MAX_SCALE, Rounding::Down);
    let up = a.checked_div(b, MAX_SCALE, Rounding::Up);
    if let (Some(down), Some(up)) = (down, up) {
        assert!(down <= up);
        let ulp = Decimal::parse("0.000000000000000001").expect("one unit");
        assert!(up.checked_sub(down).is_some_and(|gap| gap <= ulp));
        // Down never overshoots: down * b <= a (when the product fits).
        if let Some(back) = down.checked_mul(b) {
            assert!(back <= a, "{down} * {b} > {a}");
        }
        if let Some(back) = up.checked_mul(b) {
            assert!(back >= a, "{up} * {b} < {a}");
        }
    }
});
