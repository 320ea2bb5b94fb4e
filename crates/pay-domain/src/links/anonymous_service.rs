//! Anonymous (one-time) links: created without an account, settled to the caller's address,
//! reporting to the caller's own `webhookUrl` with a secret returned once. Rate limited per
//! client address.

use crate::kernel::ids::{LinkUid, PaymentLinkId};
use crate::kernel::secret::Secret;
use crate::links::LinkError;
use crate::links::LinkService;
use crate::links::{
    CreateAnonymousLinkInput, CreatedBy, LinkStatus, PaymentLink, ANONYMOUS_COMPANY,
};
use crate::webhooks::{
    last4, signing_secret, validate_callback_url, LinkWebhook, StoredSigningSecret,
    SECRET_RANDOM_LEN,
};

impl LinkService {
    /// Creates an anonymous link; returns it and, when a `webhookUrl` was given, the signing
    /// secret of that callback (shown this once).
    pub fn create_anonymous_link(
        &self,
        input: CreateAnonymousLinkInput,
        client_addr: &str,
    ) -> Result<(PaymentLink, Option<Secret>), LinkError> {
        self.k.throttle::<LinkError>(
            &format!("anonymous-links|{client_addr}"),
            &self.k.limits.anonymous_links,
        )?;
        // An anonymous link belongs to no company's clock.
        let now = self.k.now();
        if let Some(url) = &input.webhook_url {
            validate_callback_url("webhookUrl", url, self.allow_private_targets)?;
        }
        let webhook_url = input.webhook_url.clone();
        let payload = input.into_payload(&self.k.assets)?;
        let uid = self.k.new_public_id(LinkUid::LEN, LinkUid::parse)?;
        let link = PaymentLink {
            id: PaymentLinkId(self.k.crypto.new_uuid()),
            uid,
            company_id: ANONYMOUS_COMPANY,
            status: LinkStatus::Active,
            expires_at: payload.expiration_time.expires_at(now),
            payload,
            created_at: now,
            updated_at: now,
            created_by: CreatedBy::Anonymous,
            grant_subscription_id: None,
        };
        let (webhook, secret) = match webhook_url {
            None => (None, None),
            Some(url) => {
                let secret = signing_secret(&self.k.crypto.random_alphanumeric(SECRET_RANDOM_LEN));
                let sealed = self
                    .k
                    .sealer
                    .seal(&secret, &LinkWebhook::aad(link.uid.as_str()))?;
                let webhook = LinkWebhook {
                    link_uid: link.uid.to_string(),
                    url,
                    secret: StoredSigningSecret {
                        sealed,
                        last4: last4(&secret),
                        created_at: now,
                    },
                };
                (Some(webhook), Some(secret))
            }
        };
        self.store.insert_anonymous_link(&link, webhook.as_ref())?;
        Ok((link, secret))
    }
}
