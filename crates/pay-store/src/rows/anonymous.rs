//! Anonymous-link rows: the per-link callback. (Rate-limit hits are written and counted
//! column by column; they are never read back as rows.)

use diesel::prelude::*;
use pay_domain::kernel::ids::LinkUid;
use pay_domain::kernel::secret::SealedSecret;
use pay_domain::webhooks::{LinkWebhook, StoredSigningSecret};
use pay_domain::{Fault, PortResult};

use super::{corrupt, instant};
use crate::conn::MultiBackend;
use crate::schema::link_webhooks;

#[derive(Queryable, Selectable)]
#[diesel(table_name = link_webhooks, check_for_backend(MultiBackend))]
pub(crate) struct LinkWebhookRow {
    link_uid: String,
    url: String,
    secret_key_id: String,
    secret_sealed: String,
    secret_last4: String,
    secret_created_at: i64,
}

impl TryFrom<LinkWebhookRow> for LinkWebhook {
    type Error = Fault;

    fn try_from(r: LinkWebhookRow) -> PortResult<LinkWebhook> {
        if LinkUid::parse(&r.link_uid).is_none() {
            return Err(corrupt("link_webhooks.link_uid"));
        }
        Ok(LinkWebhook {
            link_uid: r.link_uid,
            url: r.url,
            secret: StoredSigningSecret {
                sealed: SealedSecret {
                    key_id: r.secret_key_id,
                    sealed: r.secret_sealed,
                },
                last4: r.secret_last4,
                created_at: instant(r.secret_created_at, "link_webhooks.secret_created_at")?,
            },
        })
    }
}

#[derive(Insertable)]
#[diesel(table_name = link_webhooks)]
pub(crate) struct NewLinkWebhookRow<'a> {
    link_uid: &'a str,
    url: &'a str,
    secret_key_id: &'a str,
    secret_sealed: &'a str,
    secret_last4: &'a str,
    secret_created_at: i64,
}

impl<'a> From<&'a LinkWebhook> for NewLinkWebhookRow<'a> {
    fn from(w: &'a LinkWebhook) -> Self {
        NewLinkWebhookRow {
            link_uid: &w.link_uid,
            url: &w.url,
            secret_key_id: &w.secret.sealed.key_id,
            secret_sealed: &w.secret.sealed.sealed,
            secret_last4: &w.secret.last4,
            secret_created_at: w.secret.created_at.unix_millis(),
        }
    }
}
