//! The underpayment tolerance: when a short payment still completes the session. The one place
//! the rule lives: the merchant's settings allow a fixed amount and/or a percent of the
//! invoice; a deposit is judged in invoice units by the session's own quote ratio.

use crate::checkout::PaymentSession;
use crate::kernel::amount::{Decimal, Rounding};
use crate::kernel::error::Fault;
use crate::settings::PaySettings;

/// Whether `received` settles `required` under the merchant's underpayment tolerance: enough,
/// or short by at most the larger allowance of the enabled rules (a percentage of the required
/// amount, a fixed amount). The edges are inclusive.
pub fn settles(required: Decimal, received: Decimal, settings: &PaySettings) -> bool {
    if received >= required {
        return true;
    }
    let Some(short) = required.checked_sub(received) else {
        return false;
    };
    let mut allowed = Decimal::ZERO;
    if settings.underpayment_fixed_enabled {
        allowed = allowed.max(settings.underpayment_fixed_threshold);
    }
    if settings.underpayment_percent_enabled {
        if let Some(p) = required.percent(settings.underpayment_percent_threshold) {
            allowed = allowed.max(p);
        }
    }
    short <= allowed
}

/// `received` of the pay asset expressed in the invoice unit, by the session's own quote ratio
/// (rounded down: the payer never gets credit for more than arrived).
pub fn in_invoice_units(s: &PaymentSession, received: Decimal) -> Result<Decimal, Fault> {
    let required = s.required_sell_amount;
    let invoice = s.invoice_amount.value();
    received
        .checked_mul(invoice)
        .and_then(|x| x.checked_div(required, 18, Rounding::Down))
        .ok_or_else(|| Fault::new("amount arithmetic out of range"))
}

/// Whether `received` of the pay asset completes session `s` under `settings`.
pub fn session_settles(
    s: &PaymentSession,
    received: Decimal,
    settings: &PaySettings,
) -> Result<bool, Fault> {
    let invoice = s.invoice_amount.value();
    Ok(settles(invoice, in_invoice_units(s, received)?, settings))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::assets::AssetCatalogue;

    fn d(s: &str) -> Decimal {
        Decimal::parse(s).unwrap()
    }

    fn settings(percent: Option<&str>, fixed: Option<&str>) -> PaySettings {
        let mut s = PaySettings::new_company_default(&AssetCatalogue::builtin());
        if let Some(p) = percent {
            s.underpayment_percent_enabled = true;
            s.underpayment_percent_threshold = d(p);
        }
        if let Some(f) = fixed {
            s.underpayment_fixed_enabled = true;
            s.underpayment_fixed_threshold = d(f);
        }
        s
    }

    #[test]
    fn tolerance_edges() {
        let none = settings(None, None);
        assert!(settles(d("100"), d("100"), &none));
        assert!(settles(d("100"), d("100.01"), &none), "overpaid settles");
        assert!(
            !settles(d("100"), d("99.999999"), &none),
            "no tolerance: any shortfall"
        );
        // 1 % of 100 = 1: short by exactly 1 settles, by 1.000001 does not.
        let pct = settings(Some("1"), None);
        assert!(settles(d("100"), d("99"), &pct));
        assert!(!settles(d("100"), d("98.999999"), &pct));
        // Fixed 0.50.
        let fixed = settings(None, Some("0.50"));
        assert!(settles(d("100"), d("99.50"), &fixed));
        assert!(!settles(d("100"), d("99.49"), &fixed));
        // Both enabled: the larger allowance wins (2 % of 10 = 0.2 < 0.5 fixed).
        let both = settings(Some("2"), Some("0.5"));
        assert!(settles(d("10"), d("9.5"), &both));
        assert!(!settles(d("10"), d("9.49"), &both));
        // Thresholds set but disabled count for nothing.
        let mut off = settings(Some("50"), Some("50"));
        off.underpayment_percent_enabled = false;
        off.underpayment_fixed_enabled = false;
        assert!(!settles(d("100"), d("99"), &off));
    }
}
