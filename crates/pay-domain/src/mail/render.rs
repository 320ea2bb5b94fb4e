//! The payment request as a mail: plain text and HTML, every value escaped, nothing loaded.

use crate::links::PaymentLink;

/// A rendered mail: subject, plain text and HTML.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderedMail {
    pub subject: String,
    pub text: String,
    pub html: String,
}

impl RenderedMail {
    /// The mail with the bidirectional controls of its plain parts neutralised (the HTML part
    /// is escaped, which neutralises them too): what every renderer returns.
    pub fn neutralised(self) -> RenderedMail {
        RenderedMail {
            subject: crate::kernel::html::plain_text(&self.subject),
            text: crate::kernel::html::plain_text(&self.text),
            html: self.html,
        }
    }
}

/// One line: every run of whitespace or control characters becomes one space (the subject is a
/// header; merchant text may hold newlines).
fn one_line(s: &str) -> String {
    s.split(|c: char| c.is_whitespace() || c.is_control())
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The payment request for `link`, pointing at `public_url` (its hosted checkout page). Every
/// interpolated value is escaped in the HTML part, which loads nothing from outside (no
/// images, no styles sheets, no scripts): a customer's mail client fetches nothing.
pub fn render_payment_request(link: &PaymentLink, public_url: &str) -> RenderedMail {
    let p = &link.payload;
    let merchant = p
        .merchant_name
        .as_deref()
        .map(one_line)
        .filter(|m| !m.is_empty())
        .unwrap_or_else(|| "A merchant".to_owned());
    let unit = p.fiat_currency.as_deref().unwrap_or(&p.currency);
    let amount = format!("{} {}", p.amount.as_str(), unit);
    let title = p.title.as_deref().map(one_line).filter(|t| !t.is_empty());
    let description = p
        .description
        .as_deref()
        .map(str::trim)
        .filter(|d| !d.is_empty());
    let order = p
        .order_id
        .as_deref()
        .map(one_line)
        .filter(|o| !o.is_empty());
    let expires = link.expires_at.map(|t| {
        let d = t.datetime();
        format!(
            "{:04}-{:02}-{:02} {:02}:{:02} UTC",
            d.year(),
            u8::from(d.month()),
            d.day(),
            d.hour(),
            d.minute()
        )
    });

    let subject = match &title {
        Some(t) => format!("Payment request from {merchant}: {t} ({amount})"),
        None => format!("Payment request from {merchant} ({amount})"),
    };

    let mut text = format!("Hello,\n\n{merchant} asks you to pay {amount}.\n\n");
    if let Some(t) = &title {
        text.push_str(&format!("{t}\n"));
    }
    if let Some(d) = description {
        text.push_str(&format!("{d}\n"));
    }
    if let Some(o) = &order {
        text.push_str(&format!("Order: {o}\n"));
    }
    text.push_str(&format!("Amount: {amount}\n\nPay here: {public_url}\n"));
    if let Some(e) = &expires {
        text.push_str(&format!("This link expires on {e}.\n"));
    }
    text.push_str("\nIf you did not expect this request, you can ignore this message.\n");

    let e = crate::kernel::html::escape;
    let mut details = String::new();
    if let Some(t) = &title {
        details.push_str(&format!(
            "<p style=\"margin:0 0 8px;font-size:18px;font-weight:bold\">{}</p>\n",
            e(t)
        ));
    }
    if let Some(d) = description {
        details.push_str(&format!(
            "<p style=\"margin:0 0 8px;white-space:pre-line\">{}</p>\n",
            e(d)
        ));
    }
    if let Some(o) = &order {
        details.push_str(&format!(
            "<p style=\"margin:0 0 8px\">Order: {}</p>\n",
            e(o)
        ));
    }
    let expiry = expires
        .as_deref()
        .map(|x| {
            format!(
                "<p style=\"margin:16px 0 0;color:#555\">This link expires on {}.</p>\n",
                e(x)
            )
        })
        .unwrap_or_default();
    let html = format!(
        "<!DOCTYPE html>\n<html>\n<head><meta charset=\"utf-8\"><title>{subject}</title></head>\n\
         <body style=\"font-family:sans-serif;color:#222;max-width:560px;margin:0 auto;padding:24px\">\n\
         <p>Hello,</p>\n<p>{merchant} asks you to pay <strong>{amount}</strong>.</p>\n\
         {details}<p style=\"margin:24px 0\"><a href=\"{url}\" style=\"background:#222;color:#fff;\
         padding:12px 20px;border-radius:6px;text-decoration:none\">Pay {amount}</a></p>\n\
         <p style=\"color:#555\">Or open this address: <a href=\"{url}\">{url}</a></p>\n{expiry}\
         <p style=\"color:#555\">If you did not expect this request, you can ignore this message.</p>\n\
         </body>\n</html>\n",
        subject = e(&subject),
        merchant = e(&merchant),
        amount = e(&amount),
        url = e(public_url),
    );
    RenderedMail {
        subject,
        text,
        html,
    }
    .neutralised()
}
