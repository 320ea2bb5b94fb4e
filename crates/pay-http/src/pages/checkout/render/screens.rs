//! The parts of a screen: the asset choice, the quote under review, the deposit block, underpayment and overpayment notes, the failure links.

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

pub(super) fn choose(h: &mut String, view: &CheckoutView, base: &str, error: Option<&str>) {
    if view.pay_assets.is_empty() {
        h.push_str("<p>No payment method is available for this link right now. Please try again later.</p>\n");
        return;
    }
    let _ = write!(
        h,
        "<form method=\"post\" action=\"{}/start\">\n<fieldset><legend>Choose what to pay with</legend>\n<div class=\"opts\">\n",
        escape(base)
    );
    for a in &view.pay_assets {
        let _ = writeln!(
            h,
            "<label class=\"opt\"><input type=\"radio\" name=\"payAsset\" value=\"{}\" required><span><strong>{}</strong> <small>{} on {}</small></span></label>",
            escape(&a.asset_identifier),
            escape(&a.symbol),
            escape(&a.name),
            escape(&a.chain_name),
        );
    }
    h.push_str("</div></fieldset>\n");
    if let Some(e) = error {
        let _ = writeln!(
            h,
            "<p class=\"err\" role=\"alert\">{}</p>",
            escape(&sentence(e))
        );
    }
    let next = if view.review_required {
        "Continue"
    } else {
        "Continue to payment"
    };
    let _ = write!(
        h,
        "<button type=\"submit\" class=\"btn primary\">{next}</button>\n</form>\n"
    );
}

pub(super) fn review(
    h: &mut String,
    ctx: &Ctx<'_>,
    s: &PaymentSession,
    a: &AssetLabel,
    action: &dyn Fn(&str) -> String,
) {
    let _ = write!(
        h,
        "<p>Check the amount, then accept to get the deposit address.</p>\n<dl class=\"rows\">\n\
         <div><dt>You send</dt><dd><span class=\"big\">{} {}</span><br><small>on {}</small></dd></div>\n\
         <div><dt>Quote valid for</dt><dd>{}</dd></div>\n</dl>\n<div class=\"actions\">\n{}\n<div class=\"row\">{}{}</div>\n</div>\n",
        escape(&s.required_sell_amount.to_string()),
        escape(&a.symbol),
        escape(&a.chain),
        countdown(ctx, s.expires_at),
        post_form(&action("accept"), "primary", "Accept and pay"),
        post_form(&action("refresh"), "", "Refresh quote"),
        post_form(&action("cancel"), "quiet", "Cancel payment"),
    );
}

/// Address, exact amount, QR code and the time left: what a payer needs to send. On an EVM
/// chain the QR code is the EIP-681 payment request (address, chain and amount in one scan),
/// else the address.
pub(super) fn deposit_block(
    h: &mut String,
    address: &str,
    amount: &str,
    a: &AssetLabel,
    amount_label: &str,
) {
    let label = format!("QR code of the {} deposit address", a.symbol);
    let request = a.decimals.and_then(|decimals| {
        let amount = pay_domain::kernel::amount::Decimal::parse(amount).ok()?;
        pay_domain::chains::rules::payment_request(&a.identifier, decimals, address, amount)
    });
    if let Some(svg) = qr::svg(request.as_deref().unwrap_or(address), &label) {
        h.push_str(&svg);
        h.push('\n');
    }
    let _ = write!(
        h,
        "<div>\n<div class=\"field\"><span class=\"lbl\">{amount_label}</span><button type=\"button\" class=\"btn copy\" data-copy=\"{amt}\" hidden>Copy amount</button></div>\n\
         <p class=\"big\"><span class=\"mono\" id=\"amount\">{amt}</span> {sym}</p>\n\
         <div class=\"field\"><span class=\"lbl\">To this {chain} address</span><button type=\"button\" class=\"btn copy\" data-copy=\"{addr}\" hidden>Copy address</button></div>\n\
         <code class=\"addr\" id=\"address\">{addr}</code>\n</div>\n",
        amt = escape(amount),
        sym = escape(&a.symbol),
        chain = escape(&a.chain),
        addr = escape(address),
    );
}

pub(super) fn deposit(
    h: &mut String,
    ctx: &Ctx<'_>,
    s: &PaymentSession,
    a: &AssetLabel,
    action: &dyn Fn(&str) -> String,
) {
    h.push_str("<p class=\"status wait\">Waiting for your payment</p>\n<div class=\"deposit\">\n");
    let address = s.deposit_address.as_deref().unwrap_or_default();
    deposit_block(
        h,
        address,
        &s.required_sell_amount.to_string(),
        a,
        "Send exactly",
    );
    let _ = write!(
        h,
        "<dl class=\"rows\"><div><dt>Time left</dt><dd>{}</dd></div></dl>\n</div>\n\
         <p class=\"note\">Send only {sym} on {chain}, in one transfer of exactly this amount. Another asset or network cannot be credited.</p>\n\
         <div class=\"actions\">{}</div>\n",
        countdown(ctx, s.expires_at),
        post_form(&action("cancel"), "quiet", "Cancel payment"),
        sym = escape(&a.symbol),
        chain = escape(&a.chain),
    );
}

pub(super) fn underpaid(h: &mut String, s: &PaymentSession, a: &AssetLabel) {
    let received = amount_text(s.settlement.received_amount);
    let got = received.as_deref().unwrap_or("0");
    let due =
        amount_text(s.settlement.short_by).unwrap_or_else(|| s.required_sell_amount.to_string());
    let _ = write!(
        h,
        "<p class=\"status wait\">Waiting for the rest</p>\n\
         <dl class=\"rows\"><div><dt>Received</dt><dd>{got} {sym}</dd></div><div><dt>Still due</dt><dd><strong>{due} {sym}</strong></dd></div></dl>\n\
         <div class=\"deposit\">\n",
        got = escape(got),
        due = escape(&due),
        sym = escape(&a.symbol),
    );
    if let Some(address) = &s.deposit_address {
        deposit_block(h, address, &due, a, "Send the rest");
    }
    let _ = writeln!(
        h,
        "</div>\n<p class=\"note\">Send the missing {} on {} to the same address. If you cannot, the merchant will refund what arrived.</p>",
        escape(&a.symbol),
        escape(&a.chain),
    );
}

pub(super) fn overpaid_note(h: &mut String, s: &PaymentSession, a: &AssetLabel) {
    if let Some(over) = amount_text(s.settlement.overpaid_by) {
        let _ = writeln!(
            h,
            "<p class=\"note\">You sent {} {} more than due; the merchant will contact you about it.</p>",
            escape(&over),
            escape(&a.symbol)
        );
    }
}

pub(super) fn failure_links(h: &mut String, view: &CheckoutView, base: &str) {
    h.push_str("<div class=\"actions\">\n");
    if view.state.takes_payments() {
        let _ = writeln!(
            h,
            "<a class=\"btn primary\" href=\"{}\">Try again</a>",
            escape(base)
        );
    }
    if let Some(url) = view.failure_url.as_deref().and_then(safe_url) {
        let _ = writeln!(
            h,
            "<a class=\"btn\" href=\"{url}\" rel=\"noreferrer\">Return to {}</a>",
            escape(merchant_or_default(view))
        );
    }
    h.push_str("</div>\n");
}
