//! Quotes: how much the payer sends in the asset they chose, and how much the merchant receives
//! in the settlement asset. Exact decimals throughout; the payer's amount is rounded up and the
//! merchant's down, so rounding never makes a payment short or promises more than arrives.

use time::Duration;

use crate::kernel::amount::{Decimal, Rounding};
use crate::kernel::error::Fault;
use crate::kernel::timestamp::Timestamp;
use crate::links::PaymentLinkPayload;
use crate::settings::{FeePayer, PaySettings};

/// How long a quote holds before it must be refreshed.
pub const QUOTE_TTL: Duration = Duration::minutes(10);

/// Who pays the fee for this link: the link's override, else the merchant's setting.
pub fn fee_payer(link: &PaymentLinkPayload, settings: &PaySettings) -> FeePayer {
    link.fee_paid_by.unwrap_or(settings.fee_paid_by)
}

/// The fee a payer pays on top of a link's amount: the fee payer is the client and the
/// processor charges one. `amount` is in the invoice unit, as the quote rule computes it (the
/// fee percent of the target, the amount with the merchant's surcharge).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PayerFee {
    pub percent: Decimal,
    pub amount: Decimal,
}

/// The payer's fee of a link (`None` when the merchant pays it or there is none).
pub fn payer_fee(
    link: &PaymentLinkPayload,
    settings: &PaySettings,
    fee_percent: Decimal,
) -> Option<PayerFee> {
    if fee_payer(link, settings) != FeePayer::Client || fee_percent.is_zero() {
        return None;
    }
    let invoice = Decimal::parse(link.amount.as_str()).ok()?;
    let target = invoice.checked_add(invoice.percent(settings.merchant_surcharge_percent)?)?;
    let amount = target.percent(fee_percent)?;
    (!amount.is_zero()).then(|| PayerFee {
        percent: fee_percent.normalized(),
        amount: amount.normalized(),
    })
}

/// Whether the payer must review and accept the quote: `skipQuoteAcceptance` true skips the
/// review, false requires it, absent inherits the merchant's setting.
pub fn review_required(link: &PaymentLinkPayload, settings: &PaySettings) -> bool {
    !link
        .skip_quote_acceptance
        .unwrap_or(settings.skip_quote_acceptance)
}

/// When a quote made at `now` expires.
pub fn quote_expires_at(now: Timestamp) -> Timestamp {
    now.plus(QUOTE_TTL)
}

/// Everything a quote depends on. Prices are of one unit of an asset, in the invoice unit (the
/// link's `fiatCurrency`, or its settlement asset when it has none: then `buy_price` is 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuoteRequest {
    pub invoice_amount: Decimal,
    pub pay_price: Decimal,
    pub pay_decimals: u32,
    pub buy_price: Decimal,
    pub buy_decimals: u32,
    /// The processor's fee, percent of the target.
    pub fee_percent: Decimal,
    pub fee_payer: FeePayer,
    /// The merchant's silent adjustment of the target, -1 ..= 1 percent.
    pub surcharge_percent: Decimal,
}

/// A quote's amounts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuoteAmounts {
    /// The invoice with the surcharge, in the invoice unit.
    pub target: Decimal,
    /// The fee, in the invoice unit.
    pub fee: Decimal,
    /// What the payer sends, in the pay asset (rounded up to its decimals).
    pub required_sell_amount: Decimal,
    /// What the merchant receives, in the settlement asset (rounded down to its decimals).
    pub expected_buy_amount: Decimal,
}

fn arithmetic() -> Fault {
    Fault::new("quote arithmetic out of range")
}

/// The quote rule. With the client paying the fee, the payer sends target + fee and the
/// merchant receives the target; with the merchant paying, the payer sends the target and the
/// merchant receives target - fee.
pub fn quote(r: &QuoteRequest) -> Result<QuoteAmounts, Fault> {
    let one = Decimal::parse("1").map_err(|_| arithmetic())?;
    let minus_one = Decimal::parse("-1").map_err(|_| arithmetic())?;
    if r.surcharge_percent < minus_one || r.surcharge_percent > one {
        return Err(Fault::new("surcharge out of -1..1"));
    }
    let target = r
        .invoice_amount
        .checked_add(
            r.invoice_amount
                .percent(r.surcharge_percent)
                .ok_or_else(arithmetic)?,
        )
        .ok_or_else(arithmetic)?;
    let fee = target.percent(r.fee_percent).ok_or_else(arithmetic)?;
    let (payer_total, merchant_gets) = match r.fee_payer {
        FeePayer::Client => (target.checked_add(fee).ok_or_else(arithmetic)?, target),
        FeePayer::Merchant => (target, target.checked_sub(fee).ok_or_else(arithmetic)?),
    };
    let required_sell_amount = payer_total
        .checked_div(r.pay_price, r.pay_decimals, Rounding::Up)
        .ok_or_else(arithmetic)?;
    let expected_buy_amount = merchant_gets
        .checked_div(r.buy_price, r.buy_decimals, Rounding::Down)
        .ok_or_else(arithmetic)?;
    Ok(QuoteAmounts {
        target,
        fee,
        required_sell_amount,
        expected_buy_amount,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::assets::AssetCatalogue;
    use crate::links::CreateLinkInput;
    use crate::tenancy::{Company, Theme};

    fn d(s: &str) -> Decimal {
        Decimal::parse(s).unwrap()
    }

    fn usd_to_eth(fee_payer: FeePayer, surcharge: &str) -> QuoteRequest {
        // A 100.00 USD invoice paid in ETH at 2,500 USD, settled in USDC at 1 USD, 1 % fee.
        QuoteRequest {
            invoice_amount: d("100.00"),
            pay_price: d("2500"),
            pay_decimals: 18,
            buy_price: d("1"),
            buy_decimals: 6,
            fee_percent: d("1"),
            fee_payer,
            surcharge_percent: d(surcharge),
        }
    }

    #[test]
    fn the_client_pays_the_fee_on_top() {
        let q = quote(&usd_to_eth(FeePayer::Client, "0")).unwrap();
        assert_eq!(q.target, d("100"));
        assert_eq!(q.fee, d("1"));
        assert_eq!(
            q.required_sell_amount.to_string(),
            "0.040400000000000000",
            "101 USD of ETH"
        );
        assert_eq!(q.expected_buy_amount.to_string(), "100.000000");
    }

    #[test]
    fn the_merchant_pays_the_fee_out_of_the_target() {
        let q = quote(&usd_to_eth(FeePayer::Merchant, "0")).unwrap();
        assert_eq!(
            q.required_sell_amount.to_string(),
            "0.040000000000000000",
            "100 USD of ETH"
        );
        assert_eq!(q.expected_buy_amount.to_string(), "99.000000");
    }

    #[test]
    fn the_surcharge_moves_the_target_silently() {
        let up = quote(&usd_to_eth(FeePayer::Merchant, "1")).unwrap();
        assert_eq!(up.target, d("101"));
        assert_eq!(up.required_sell_amount.to_string(), "0.040400000000000000");
        assert_eq!(
            up.expected_buy_amount.to_string(),
            "99.990000",
            "101 - 1.01 fee"
        );
        let down = quote(&usd_to_eth(FeePayer::Client, "-0.5")).unwrap();
        assert_eq!(down.target, d("99.5"));
        assert_eq!(down.fee, d("0.995"));
        assert_eq!(
            down.required_sell_amount.to_string(),
            "0.040198000000000000"
        );
        assert!(quote(&usd_to_eth(FeePayer::Client, "1.5")).is_err());
    }

    #[test]
    fn long_prices_quote_at_full_precision() {
        // 100.00 EUR paid in ETH priced 2500 USD / 1.08 (a price with 18 decimals).
        let q = quote(&QuoteRequest {
            invoice_amount: d("100.00"),
            pay_price: d("2314.814814814814814814"),
            pay_decimals: 18,
            buy_price: d("0.925925925925925925"),
            buy_decimals: 6,
            fee_percent: d("1"),
            fee_payer: FeePayer::Client,
            surcharge_percent: d("0"),
        })
        .unwrap();
        assert_eq!(q.required_sell_amount.to_string(), "0.043632000000000001");
        assert_eq!(q.expected_buy_amount.to_string(), "108.000000");
    }

    #[test]
    fn rounding_never_shortchanges_the_merchant() {
        // 10 USD in BTC at 30,000: 0.000333333... BTC, asked as 0.00033334 (up, 8 decimals).
        let q = quote(&QuoteRequest {
            invoice_amount: d("10"),
            pay_price: d("30000"),
            pay_decimals: 8,
            buy_price: d("3"),
            buy_decimals: 2,
            fee_percent: d("0"),
            fee_payer: FeePayer::Merchant,
            surcharge_percent: d("0"),
        })
        .unwrap();
        assert_eq!(q.required_sell_amount.to_string(), "0.00033334");
        assert_eq!(
            q.expected_buy_amount.to_string(),
            "3.33",
            "10 / 3 rounded down"
        );
        let zero_price = QuoteRequest {
            pay_price: d("0"),
            ..usd_to_eth(FeePayer::Client, "0")
        };
        assert!(quote(&zero_price).is_err());
    }

    #[test]
    fn link_overrides_win_over_settings() {
        let catalogue = AssetCatalogue::builtin();
        let base = PaySettings::new_company_default(&catalogue);
        let company = Company {
            id: crate::kernel::ids::CompanyId(uuid::Uuid::nil()),
            name: "Acme".into(),
            picture_url: None,
            logo_url: None,
            theme: Theme::System,
            created_at: Timestamp::from_unix_millis(0).unwrap(),
            test_clock_offset_ms: 0,
            payment_link_domain: None,
            website: None,
        };
        let payload = |skip: Option<bool>, fee: Option<&str>| {
            CreateLinkInput {
                amount: "1".into(),
                skip_quote_acceptance: skip,
                fee_paid_by: fee.map(str::to_owned),
                ..Default::default()
            }
            .into_payload(&catalogue, &base, &company)
            .unwrap()
        };
        let mut settings = base.clone();
        settings.skip_quote_acceptance = true;
        settings.fee_paid_by = FeePayer::Merchant;
        assert!(
            !review_required(&payload(None, None), &settings),
            "inherits: skip"
        );
        assert!(
            review_required(&payload(Some(false), None), &settings),
            "link requires it"
        );
        settings.skip_quote_acceptance = false;
        assert!(review_required(&payload(None, None), &settings));
        assert!(
            !review_required(&payload(Some(true), None), &settings),
            "link skips it"
        );
        assert_eq!(
            fee_payer(&payload(None, None), &settings),
            FeePayer::Merchant
        );
        assert_eq!(
            fee_payer(&payload(None, Some("client")), &settings),
            FeePayer::Client
        );
        let now = Timestamp::from_unix_millis(0).unwrap();
        assert_eq!(quote_expires_at(now).unix_seconds(), 600);

        // The payer's fee: only when the payer pays it, on the target (with the surcharge).
        let d = |s: &str| Decimal::parse(s).unwrap();
        assert_eq!(payer_fee(&payload(None, None), &settings, d("1.5")), None);
        let fee = payer_fee(&payload(None, Some("client")), &settings, d("1.5")).unwrap();
        assert_eq!((fee.percent, fee.amount), (d("1.5"), d("0.015")));
        assert_eq!(
            payer_fee(&payload(None, Some("client")), &settings, d("0")),
            None
        );
        settings.merchant_surcharge_percent = d("1");
        let fee = payer_fee(&payload(None, Some("client")), &settings, d("1.5")).unwrap();
        assert_eq!(fee.amount, d("0.01515"), "1.5 % of 1.01");
        let q = quote(&QuoteRequest {
            invoice_amount: d("1"),
            pay_price: d("1"),
            pay_decimals: 6,
            buy_price: d("1"),
            buy_decimals: 6,
            fee_percent: d("1.5"),
            fee_payer: FeePayer::Client,
            surcharge_percent: d("1"),
        })
        .unwrap();
        assert_eq!(q.fee.normalized(), fee.amount, "the fee the quote charges");
    }
}
