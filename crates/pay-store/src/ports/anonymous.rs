//! `AnonymousLinkStore` on `DieselStore`: anonymous links with their per-link callback, and
//! the rate-limit hits that throttle their creation.

use diesel::prelude::*;
use pay_domain::kernel::ids::LinkUid;
use pay_domain::links::ports::AnonymousLinkStore;
use pay_domain::links::{PaymentLink, ANONYMOUS_COMPANY};
use pay_domain::webhooks::LinkWebhook;
use pay_domain::{Fault, PortResult};

use crate::conn::write_transaction;
use crate::rows::{LinkWebhookRow, NewLinkRow, NewLinkWebhookRow};
use crate::schema::{link_webhooks, payment_links};
use crate::DieselStore;

impl AnonymousLinkStore for DieselStore {
    fn insert_anonymous_link(
        &self,
        link: &PaymentLink,
        webhook: Option<&LinkWebhook>,
    ) -> PortResult<()> {
        // Caller bugs, refused before anything is written: a merchant's link stored through
        // this path, or a callback filed under another link's uid.
        if !link.is_anonymous() || link.company_id != ANONYMOUS_COMPANY {
            return Err(Fault::new(
                "insert anonymous link: not an anonymous link of the anonymous company",
            ));
        }
        if webhook.is_some_and(|w| w.link_uid != link.uid.as_str()) {
            return Err(Fault::new(
                "insert anonymous link: callback of another link",
            ));
        }
        let row = NewLinkRow::try_from(link)?;
        let webhook = webhook.map(NewLinkWebhookRow::from);
        self.write("insert anonymous link", |conn| {
            write_transaction(conn, |conn| {
                diesel::insert_into(payment_links::table)
                    .values(&row)
                    .execute(conn)?;
                if let Some(w) = &webhook {
                    diesel::insert_into(link_webhooks::table)
                        .values(w)
                        .execute(conn)?;
                }
                Ok(())
            })
        })
    }

    fn link_webhook(&self, link_uid: &LinkUid) -> PortResult<Option<LinkWebhook>> {
        self.run("link webhook", |conn| {
            link_webhooks::table
                .find(link_uid.as_str())
                .select(LinkWebhookRow::as_select())
                .first(conn)
                .optional()
        })?
        .map(LinkWebhook::try_from)
        .transpose()
    }
}
