//! A session's screen: what each status shows (the quote under review, the deposit, the
//! confirmations, the underpayment, the refund step, the end states), as the data of
//! `templates/checkout/body.html`.

use pay_domain::checkout::RefundReason;

use super::*;

/// The pay asset as payers read it.
pub(super) struct AssetLabel {
    pub(super) symbol: String,
    pub(super) chain: String,
    /// The asset's identifier and decimals, for the payment request a wallet scans.
    pub(super) identifier: String,
    pub(super) decimals: Option<u32>,
}

impl AssetLabel {
    pub(super) fn of(s: &PaymentSession, asset: Option<&DestinationAsset>) -> AssetLabel {
        match asset {
            Some(a) => AssetLabel {
                symbol: a.symbol.clone(),
                chain: a.chain_name.clone(),
                identifier: a.asset_identifier.clone(),
                decimals: Some(a.decimals),
            },
            None => AssetLabel {
                symbol: s.selected_sell_asset.clone(),
                chain: s.source_chain.clone().unwrap_or_default(),
                identifier: s.selected_sell_asset.clone(),
                decimals: None,
            },
        }
    }
}

/// Address, exact amount and QR code: what a payer needs to send. On an EVM chain the QR code
/// is the EIP-681 payment request (address, chain and amount in one scan), else the address.
fn deposit(address: &str, amount: String, a: &AssetLabel, label: &'static str) -> Deposit {
    let qr_label = format!("QR code of the {} deposit address", a.symbol);
    let request = a.decimals.and_then(|decimals| {
        let amount = Decimal::parse(&amount).ok()?;
        pay_domain::chains::rules::payment_request(&a.identifier, decimals, address, amount)
    });
    Deposit {
        qr: qr::svg(request.as_deref().unwrap_or(address), &qr_label),
        label,
        amount,
        address: address.to_owned(),
    }
}

fn fail_links<'a>(view: &'a CheckoutView, base: &str) -> FailLinks<'a> {
    FailLinks {
        again: view.state.takes_payments().then(|| base.to_owned()),
        failure: web_url(view.failure_url.as_deref()),
        merchant: merchant_or_default(view),
    }
}

/// The body of a session's page in its status.
pub(super) fn session_body<'a>(
    ctx: &Ctx<'_>,
    view: &'a CheckoutView,
    base: &str,
    s: &'a PaymentSession,
    a: AssetLabel,
    error: Option<&str>,
    confirmations: Option<u32>,
) -> Body<'a> {
    let action = format!("{base}/s/{}", s.id);
    let merchant = merchant_or_default(view);
    match s.status {
        SessionStatus::Quote => Body::Quote {
            amount: s.required_sell_amount.to_string(),
            a,
            left: countdown(ctx, s.expires_at),
            action,
        },
        SessionStatus::Pending => Body::Pending {
            deposit: deposit(
                s.deposit_address.as_deref().unwrap_or_default(),
                s.required_sell_amount.to_string(),
                &a,
                "Send exactly",
            ),
            a,
            left: countdown(ctx, s.expires_at),
            action,
        },
        SessionStatus::Processing => Body::Processing {
            got: amount_text(s.settlement.received_amount)
                .unwrap_or_else(|| s.required_sell_amount.to_string()),
            a,
            // The confirmations of the least confirmed transfer, of those it needs (`1 of 2`).
            confirmations: confirmations.and_then(|required| {
                let least = s.settlement.transfers.iter().map(|t| t.confirmations).min()?;
                Some((least, required))
            }),
        },
        SessionStatus::Complete => Body::Complete {
            merchant,
            amount: s.required_sell_amount.to_string(),
            a,
            over: amount_text(s.settlement.overpaid_by),
            success: web_url(view.success_url.as_deref()),
        },
        SessionStatus::Underpaid => {
            let due = amount_text(s.settlement.short_by)
                .unwrap_or_else(|| s.required_sell_amount.to_string());
            Body::Underpaid {
                got: amount_text(s.settlement.received_amount).unwrap_or_else(|| "0".into()),
                deposit: s
                    .deposit_address
                    .as_deref()
                    .map(|address| deposit(address, due.clone(), &a, "Send the rest")),
                due,
                a,
            }
        }
        SessionStatus::RefundPending => Body::Refund {
            why: match s.settlement.refund_reason {
                Some(RefundReason::LinkAlreadyPaid) => {
                    "This payment link was already paid by someone else, so what you sent goes back to you."
                }
                None => "What you sent will be returned to you.",
            },
            received: amount_text(s.settlement.received_amount),
            a,
            // A later submission (another tab, or someone else holding the URL) is refused:
            // the error shows above the address that stays.
            address: s.settlement.refund_address.as_deref(),
            error: error.map(sentence),
            action: format!("{action}/refund-address"),
        },
        SessionStatus::Refunded => Body::Refunded {
            address: s.settlement.refund_address.as_deref(),
            links: fail_links(view, base),
        },
        SessionStatus::Expired | SessionStatus::Cancelled | SessionStatus::Failed => Body::Ended {
            label: match s.status {
                SessionStatus::Failed => "Failed",
                SessionStatus::Cancelled => "Cancelled",
                _ => "Expired",
            },
            why: match s.status {
                SessionStatus::Failed => s
                    .error_message
                    .clone()
                    .unwrap_or_else(|| "The payment could not be completed.".into()),
                SessionStatus::Cancelled => "You cancelled this payment.".into(),
                _ if s.previous_status == Some(SessionStatus::Quote) => {
                    "The quote was not accepted in time.".into()
                }
                _ => "No payment arrived in time.".into(),
            },
            late: amount_text(s.settlement.late_amount),
            a,
            merchant,
            links: fail_links(view, base),
        },
    }
}
