//! Exact decimals. Tokens carry up to 18 decimals, so minor units in an i64 are too small and a
//! float is never acceptable: a value is an unsigned 128-bit mantissa, a scale and a sign.

use std::cmp::Ordering;
use std::fmt;

/// Most fractional digits any value may carry (token precision).
pub const MAX_SCALE: u32 = 18;
/// Most integer digits accepted (keeps every value far inside u128 at `MAX_SCALE`).
pub const MAX_INTEGER_DIGITS: usize = 18;

/// A signed exact decimal: `mantissa * 10^-scale`, negated when `negative`.
#[derive(Debug, Clone, Copy, Eq)]
pub struct Decimal {
    negative: bool,
    mantissa: u128,
    scale: u32,
}

/// Why a string is not a decimal we accept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum DecimalError {
    #[error("must be a decimal number such as \"12.50\"")]
    Format,
    #[error("has too many digits")]
    TooLarge,
    #[error("has more than {0} decimal places")]
    TooPrecise(u32),
    /// `"007"`, `"00.5"`, `"01"`: a number is written without leading zeros (`"0.5"` is fine).
    #[error("must not start with a zero (\"7\", not \"007\")")]
    LeadingZero,
    /// `"-0"`, `"-0.0"`: zero has no sign.
    #[error("must not be negative zero")]
    NegativeZero,
}

impl Decimal {
    pub const ZERO: Decimal = Decimal {
        negative: false,
        mantissa: 0,
        scale: 0,
    };

    /// Parses `[-]digits[.digits]`: no exponent, no `+`, no leading or trailing dot, no spaces,
    /// no leading zero in the integer part (`"0.5"`, not `"00.5"` or `"007"`: the JSON number
    /// grammar without its exponent) and no negative zero. Every decimal read from input goes
    /// through here.
    pub fn parse(s: &str) -> Result<Decimal, DecimalError> {
        Decimal::parse_with(s, false)
    }

    /// Like `parse`, but lets the integer part carry leading zeros and reads `-0` as zero: for
    /// text stored before inputs refused those (a link keeps its amount as its creator wrote
    /// it). Never for input.
    pub fn parse_stored(s: &str) -> Result<Decimal, DecimalError> {
        Decimal::parse_with(s, true)
    }

    fn parse_with(s: &str, lenient: bool) -> Result<Decimal, DecimalError> {
        let (negative, body) = match s.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, s),
        };
        let (int, frac) = match body.split_once('.') {
            Some((i, f)) => (i, Some(f)),
            None => (body, None),
        };
        let digits = |p: &str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit());
        if !digits(int) || frac.is_some_and(|f| !digits(f)) {
            return Err(DecimalError::Format);
        }
        if !lenient && int.len() > 1 && int.starts_with('0') {
            return Err(DecimalError::LeadingZero);
        }
        let frac = frac.unwrap_or("");
        if int.trim_start_matches('0').len() > MAX_INTEGER_DIGITS {
            return Err(DecimalError::TooLarge);
        }
        if frac.len() > MAX_SCALE as usize {
            return Err(DecimalError::TooPrecise(MAX_SCALE));
        }
        let mut mantissa: u128 = 0;
        for b in int.bytes().chain(frac.bytes()) {
            mantissa = mantissa
                .checked_mul(10)
                .and_then(|m| m.checked_add(u128::from(b - b'0')))
                .ok_or(DecimalError::TooLarge)?;
        }
        if !lenient && negative && mantissa == 0 {
            return Err(DecimalError::NegativeZero);
        }
        Ok(Decimal {
            negative: negative && mantissa != 0,
            mantissa,
            scale: frac.len() as u32,
        })
    }

    pub fn is_negative(&self) -> bool {
        self.negative
    }

    pub fn is_zero(&self) -> bool {
        self.mantissa == 0
    }

    /// Fractional digits as written (trailing zeros count: "1.50" has scale 2).
    pub fn scale(&self) -> u32 {
        self.scale
    }

    /// Fractional digits that carry value ("1.50" -> 1).
    pub fn significant_scale(&self) -> u32 {
        let mut m = self.mantissa;
        let mut s = self.scale;
        while s > 0 && m.is_multiple_of(10) {
            m /= 10;
            s -= 1;
        }
        s
    }

    /// `mantissa * 10^-scale`, not negative; `None` beyond `MAX_SCALE` fractional digits.
    pub fn from_mantissa(mantissa: u128, scale: u32) -> Option<Decimal> {
        (scale <= MAX_SCALE).then_some(Decimal {
            negative: false,
            mantissa,
            scale,
        })
    }

    /// The value's mantissa at `scale` fractional digits (`1.5` at 3: 1500), sign aside;
    /// `None` when that would drop digits (`scale` below the value's) or overflow.
    pub fn mantissa_at(&self, scale: u32) -> Option<u128> {
        if scale < self.scale {
            return None;
        }
        self.at_scale(scale)
    }

    fn at_scale(&self, scale: u32) -> Option<u128> {
        self.mantissa
            .checked_mul(10u128.checked_pow(scale - self.scale)?)
    }

    pub fn checked_add(self, other: Decimal) -> Option<Decimal> {
        let scale = self.scale.max(other.scale);
        let a = self.at_scale(scale)?;
        let b = other.at_scale(scale)?;
        let (negative, mantissa) = match (self.negative, other.negative) {
            (x, y) if x == y => (x, a.checked_add(b)?),
            (x, _) => {
                if a >= b {
                    (x, a - b)
                } else {
                    (!x, b - a)
                }
            }
        };
        Some(Decimal {
            negative: negative && mantissa != 0,
            mantissa,
            scale,
        })
    }

    /// Drops trailing fractional zeros (`1.50` -> `1.5`); the value is unchanged.
    pub fn normalized(mut self) -> Decimal {
        while self.scale > 0 && self.mantissa != 0 && self.mantissa.is_multiple_of(10) {
            self.mantissa /= 10;
            self.scale -= 1;
        }
        self
    }

    /// The exact product.
    pub fn checked_mul(self, other: Decimal) -> Option<Decimal> {
        let mantissa = self.mantissa.checked_mul(other.mantissa)?;
        Some(
            Decimal {
                negative: (self.negative != other.negative) && mantissa != 0,
                mantissa,
                scale: self.scale + other.scale,
            }
            .normalized(),
        )
    }

    /// `self / other` with `scale` fractional digits, rounded as asked. Only for non-negative
    /// operands (amounts and prices); `None` on a zero divisor, a negative operand or overflow.
    pub fn checked_div(self, other: Decimal, scale: u32, rounding: Rounding) -> Option<Decimal> {
        if other.is_zero() || self.negative || other.negative {
            return None;
        }
        // (a / 10^sa) / (b / 10^sb) * 10^scale = a * 10^(sb + scale - sa) / b. The power of
        // ten is applied one digit at a time (long division), so a long price (18 decimals)
        // divided at 18 decimals never needs a 10^40 intermediate.
        let (a, b) = (self.normalized(), other.normalized());
        let exp = i64::from(b.scale) + i64::from(scale) - i64::from(a.scale);
        let (mut q, mut r, den) = if exp >= 0 {
            (a.mantissa / b.mantissa, a.mantissa % b.mantissa, b.mantissa)
        } else {
            let den = b
                .mantissa
                .checked_mul(10u128.checked_pow(u32::try_from(-exp).ok()?)?)?;
            (a.mantissa / den, a.mantissa % den, den)
        };
        for _ in 0..exp.max(0) {
            r = r.checked_mul(10)?;
            q = q.checked_mul(10)?.checked_add(r / den)?;
            r %= den;
        }
        let mantissa = match rounding {
            Rounding::Down => q,
            Rounding::Up if r > 0 => q.checked_add(1)?,
            Rounding::Up => q,
        };
        Some(Decimal {
            negative: false,
            mantissa,
            scale,
        })
    }

    /// Rounds to `scale` fractional digits (no change when already that short).
    pub fn round_to(self, scale: u32, rounding: Rounding) -> Decimal {
        if self.scale <= scale {
            return self;
        }
        let factor = 10u128.pow(self.scale - scale);
        let (q, r) = (self.mantissa / factor, self.mantissa % factor);
        // Away from zero for Up (a payer never sends too little), toward zero for Down.
        let mantissa = match rounding {
            Rounding::Up if r > 0 => q + 1,
            _ => q,
        };
        Decimal {
            negative: self.negative && mantissa != 0,
            mantissa,
            scale,
        }
    }

    /// `pct` percent of this value, exact (scale grows by the percent's scale plus two).
    pub fn percent(self, pct: Decimal) -> Option<Decimal> {
        let mut mantissa = self.mantissa.checked_mul(pct.mantissa)?;
        let mut scale = self.scale + pct.scale + 2;
        // Drop trailing zeros so comparisons stay well inside u128.
        while scale > 0 && mantissa.is_multiple_of(10) && mantissa != 0 {
            mantissa /= 10;
            scale -= 1;
        }
        if scale > 2 * MAX_SCALE + 2 {
            return None;
        }
        Some(Decimal {
            negative: (self.negative != pct.negative) && mantissa != 0,
            mantissa,
            scale,
        })
    }

    pub fn checked_sub(self, other: Decimal) -> Option<Decimal> {
        self.checked_add(Decimal {
            negative: !other.negative && other.mantissa != 0,
            ..other
        })
    }
}

impl PartialEq for Decimal {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl PartialOrd for Decimal {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Decimal {
    fn cmp(&self, other: &Self) -> Ordering {
        let scale = self.scale.max(other.scale);
        // Both fit: at most 36 digits, far below u128's 38.
        let a = self.at_scale(scale).unwrap_or(u128::MAX);
        let b = other.at_scale(scale).unwrap_or(u128::MAX);
        match (self.negative, other.negative) {
            (false, false) => a.cmp(&b),
            (true, true) => b.cmp(&a),
            (false, true) => Ordering::Greater,
            (true, false) => Ordering::Less,
        }
    }
}

impl fmt::Display for Decimal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let digits = self.mantissa.to_string();
        let scale = self.scale as usize;
        if self.negative {
            f.write_str("-")?;
        }
        if scale == 0 {
            return f.write_str(&digits);
        }
        let padded = format!("{digits:0>width$}", width = scale + 1);
        let (int, frac) = padded.split_at(padded.len() - scale);
        write!(f, "{int}.{frac}")
    }
}

/// How a result that does not fit the wanted precision is rounded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rounding {
    /// Toward zero (what the merchant is promised: never more than arrives).
    Down,
    /// Away from zero (what the payer is asked: never less than owed).
    Up,
}

/// A positive amount to collect, kept exactly as the caller wrote it (the API echoes it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Amount {
    text: String,
    value: Decimal,
}

impl Amount {
    /// A positive decimal with at most `max_scale` fractional digits (`Decimal::parse`'s
    /// grammar: no leading zeros).
    pub fn parse(s: &str, max_scale: u32) -> Result<Amount, DecimalError> {
        Amount::checked(s, Decimal::parse(s)?, max_scale)
    }

    /// `parse` for an amount read back from storage (`Decimal::parse_stored`: leading zeros
    /// written before input refused them still read).
    pub fn parse_stored(s: &str, max_scale: u32) -> Result<Amount, DecimalError> {
        Amount::checked(s, Decimal::parse_stored(s)?, max_scale)
    }

    fn checked(s: &str, value: Decimal, max_scale: u32) -> Result<Amount, DecimalError> {
        if value.is_negative() || value.is_zero() {
            return Err(DecimalError::Format);
        }
        if value.scale() > max_scale {
            return Err(DecimalError::TooPrecise(max_scale));
        }
        Ok(Amount {
            text: s.to_owned(),
            value,
        })
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }

    pub fn value(&self) -> Decimal {
        self.value
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> Decimal {
        Decimal::parse(s).unwrap()
    }

    #[test]
    fn parses_and_prints_exactly() {
        for s in [
            "0",
            "12.50",
            "-0.5",
            "0.000000000000000001",
            "999999999999999999.5",
        ] {
            assert_eq!(d(s).to_string(), s);
        }
    }

    #[test]
    fn refuses_leading_zeros_and_negative_zero() {
        for s in [
            "007",
            "00.5",
            "01",
            "00",
            "-01",
            "-00.5",
            "000000000000000000000001",
        ] {
            assert_eq!(Decimal::parse(s), Err(DecimalError::LeadingZero), "{s:?}");
        }
        for s in ["-0", "-0.0", "-0.000000000000000000"] {
            assert_eq!(Decimal::parse(s), Err(DecimalError::NegativeZero), "{s:?}");
        }
        // A single zero before the point is the one way to write a fraction.
        for s in ["0", "0.5", "0.05", "10", "100.05", "-0.5", "0.000"] {
            assert_eq!(d(s).to_string(), s);
        }
        assert_eq!(Amount::parse("007", 2), Err(DecimalError::LeadingZero));
        assert_eq!(Amount::parse("00.5", 2), Err(DecimalError::LeadingZero));
        assert_eq!(Amount::parse("0.5", 2).unwrap().as_str(), "0.5");
    }

    #[test]
    fn stored_text_written_before_the_rule_still_reads() {
        assert_eq!(Decimal::parse_stored("007").unwrap(), d("7"));
        assert_eq!(Decimal::parse_stored("-0").unwrap().to_string(), "0");
        assert!(Decimal::parse_stored("000000000000000000000001").is_ok());
        assert_eq!(Amount::parse_stored("00.50", 2).unwrap().value(), d("0.5"));
        assert_eq!(Amount::parse_stored("007", 2).unwrap().as_str(), "007");
        assert_eq!(Amount::parse_stored("0", 2), Err(DecimalError::Format));
        assert_eq!(Decimal::parse_stored("1e3"), Err(DecimalError::Format));
    }

    #[test]
    fn refuses_what_is_not_a_plain_decimal() {
        for s in [
            "", "-", ".5", "5.", "1e3", "+1", " 1", "1 ", "1,5", "0x10", "1.2.3", "NaN",
        ] {
            assert_eq!(Decimal::parse(s), Err(DecimalError::Format), "{s:?}");
        }
        assert_eq!(
            Decimal::parse("1.0000000000000000001"),
            Err(DecimalError::TooPrecise(18))
        );
        assert_eq!(
            Decimal::parse("1234567890123456789"),
            Err(DecimalError::TooLarge)
        );
    }

    #[test]
    fn compares_across_scales() {
        assert_eq!(d("1.50"), d("1.5"));
        assert!(d("-1") < d("0.1"));
        assert!(d("-2") < d("-1.5"));
        assert!(d("1.000001") > d("1"));
        assert_eq!(d("1.50").significant_scale(), 1);
    }

    #[test]
    fn products_divisions_and_rounding() {
        assert_eq!(
            d("1.5").checked_mul(d("2.25")).unwrap().to_string(),
            "3.375"
        );
        assert_eq!(d("-2").checked_mul(d("0.5")).unwrap(), d("-1"));
        let third = d("1").checked_div(d("3"), 6, Rounding::Down).unwrap();
        assert_eq!(third.to_string(), "0.333333");
        assert_eq!(
            d("1")
                .checked_div(d("3"), 6, Rounding::Up)
                .unwrap()
                .to_string(),
            "0.333334"
        );
        assert_eq!(
            d("10")
                .checked_div(d("4"), 2, Rounding::Up)
                .unwrap()
                .to_string(),
            "2.50"
        );
        assert_eq!(
            d("25.00")
                .checked_div(d("3125.50"), 18, Rounding::Up)
                .unwrap()
                .to_string(),
            "0.007998720204767238"
        );
        assert_eq!(d("1").checked_div(d("0"), 2, Rounding::Up), None);
        // A long price at 18 decimals divided at 18 decimals (100 EUR of ETH).
        let eth_in_eur = d("2314.814814814814814814");
        assert_eq!(
            d("101.0000")
                .checked_div(eth_in_eur, 18, Rounding::Up)
                .unwrap()
                .to_string(),
            "0.043632000000000001"
        );
        assert_eq!(
            d("100")
                .checked_div(d("0.0004"), 2, Rounding::Down)
                .unwrap()
                .to_string(),
            "250000.00"
        );
        assert_eq!(d("-1").checked_div(d("2"), 2, Rounding::Up), None);
        assert_eq!(d("1.234").round_to(2, Rounding::Up).to_string(), "1.24");
        assert_eq!(d("1.234").round_to(2, Rounding::Down).to_string(), "1.23");
        assert_eq!(d("1.230").round_to(2, Rounding::Up).to_string(), "1.23");
        assert_eq!(d("1.2").round_to(4, Rounding::Up).to_string(), "1.2");
        assert_eq!(d("1.500").normalized().to_string(), "1.5");
    }

    #[test]
    fn percentages_are_exact() {
        assert_eq!(d("100").percent(d("1")).unwrap(), d("1"));
        assert_eq!(d("12.50").percent(d("2.5")).unwrap().to_string(), "0.3125");
        assert_eq!(
            d("0.000001").percent(d("0.5")).unwrap().to_string(),
            "0.000000005"
        );
        assert_eq!(d("10").percent(d("-1")).unwrap(), d("-0.1"));
    }

    #[test]
    fn adds_and_subtracts_with_signs() {
        assert_eq!(d("1.5").checked_add(d("2.25")).unwrap().to_string(), "3.75");
        assert_eq!(d("1").checked_sub(d("2.5")).unwrap().to_string(), "-1.5");
        assert_eq!(d("-1").checked_sub(d("-1")).unwrap(), Decimal::ZERO);
    }

    #[test]
    fn amounts_are_positive_and_within_scale() {
        assert_eq!(Amount::parse("12.50", 2).unwrap().as_str(), "12.50");
        assert_eq!(Amount::parse("12.501", 2), Err(DecimalError::TooPrecise(2)));
        assert_eq!(Amount::parse("0", 2), Err(DecimalError::Format));
        assert_eq!(Amount::parse("0.00", 2), Err(DecimalError::Format));
        assert_eq!(Amount::parse("-1", 2), Err(DecimalError::Format));
    }

    #[test]
    fn mantissas_in_and_out() {
        assert_eq!(d("1.5").mantissa_at(3), Some(1500));
        assert_eq!(d("-1.5").mantissa_at(1), Some(15));
        assert_eq!(d("1.50").mantissa_at(1), None);
        assert_eq!(
            Decimal::from_mantissa(1250, 2).unwrap().to_string(),
            "12.50"
        );
        assert_eq!(Decimal::from_mantissa(1, 19), None);
    }
}
