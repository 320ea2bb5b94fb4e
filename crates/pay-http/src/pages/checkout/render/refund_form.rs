//! The refund step of a session's page: where the refund goes once the payer gave an address,
//! else the form asking for it; a refused submission is shown beside it.

use std::fmt::Write;

use pay_domain::checkout::{PaymentSession, RefundReason};

use super::{amount_text, escape, sentence, AssetLabel};

/// The refund step into `h`: the reason, then the address the refund goes to, or the form
/// (with `error` beside it when a submission was refused).
pub(super) fn refund(
    h: &mut String,
    s: &PaymentSession,
    a: &AssetLabel,
    action: &dyn Fn(&str) -> String,
    error: Option<&str>,
) {
    let why = match s.settlement.refund_reason {
        Some(RefundReason::LinkAlreadyPaid) => {
            "This payment link was already paid by someone else, so what you sent goes back to you."
        }
        None => "What you sent will be returned to you.",
    };
    let received = amount_text(s.settlement.received_amount)
        .map(|r| format!(" ({} {})", escape(&r), escape(&a.symbol)))
        .unwrap_or_default();
    let _ = writeln!(h, "<p>{}{received}</p>", escape(why));
    if let Some(addr) = s.settlement.refund_address.as_deref() {
        // A later submission (another tab, or someone else holding the URL) was refused: say
        // so above the address that stays.
        if let Some(e) = error {
            let _ = writeln!(
                h,
                "<p class=\"err\" id=\"refund-error\" role=\"alert\">{}</p>",
                escape(&sentence(e))
            );
        }
        let _ = writeln!(
            h,
            "<p class=\"status wait\">Refund on its way</p>\n<p>The refund goes to <code>{}</code>.</p>",
            escape(addr)
        );
        return;
    }
    let invalid = if error.is_some() {
        " aria-invalid=\"true\" aria-describedby=\"refund-error\""
    } else {
        " aria-describedby=\"refund-help\""
    };
    let _ = write!(
        h,
        "<form method=\"post\" action=\"{}\">\n<label class=\"block\" for=\"refund-address\">Your {sym} address on {chain}</label>\n\
         <input type=\"text\" id=\"refund-address\" name=\"address\" required maxlength=\"128\" autocomplete=\"off\" spellcheck=\"false\" autocapitalize=\"off\"{invalid}>\n",
        escape(&action("refund-address")),
        sym = escape(&a.symbol),
        chain = escape(&a.chain),
    );
    match error {
        Some(e) => {
            let _ = writeln!(
                h,
                "<p class=\"err\" id=\"refund-error\" role=\"alert\">{}</p>",
                escape(&sentence(e))
            );
        }
        None => {
            let _ = writeln!(
                h,
                "<p class=\"note\" id=\"refund-help\">Use an address you control on {}; the refund is sent there.</p>",
                escape(&a.chain)
            );
        }
    }
    h.push_str(
        "<button type=\"submit\" class=\"btn primary\">Send refund address</button>\n</form>\n",
    );
}
