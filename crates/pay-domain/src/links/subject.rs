//! A payment link as the webhooks context reads it (`webhooks::LinkSubject`, `LinkSource`):
//! declared there, provided here, so webhooks needs nothing of links.

use crate::kernel::error::PortResult;
use crate::kernel::ids::{CompanyId, LinkUid, PaymentLinkId};
use crate::links::{CreatedBy, LinkService, PaymentLink};
use crate::tenancy::Principal;
use crate::webhooks::{
    LinkOrigin, LinkSnapshot, LinkSource, LinkSubject, LinkWebhook, WebhookError,
};

impl LinkSubject for PaymentLink {
    fn link_id(&self) -> PaymentLinkId {
        self.id
    }

    fn link_uid(&self) -> &LinkUid {
        &self.uid
    }

    fn company(&self) -> CompanyId {
        self.company_id
    }

    fn order_id(&self) -> Option<&str> {
        self.payload.order_id.as_deref()
    }

    fn origin(&self) -> LinkOrigin {
        match self.created_by {
            CreatedBy::ApiKey(_) | CreatedBy::User(_) => LinkOrigin::Company,
            CreatedBy::Grant(grant) => LinkOrigin::Grant(grant),
            CreatedBy::Anonymous => LinkOrigin::Anonymous,
        }
    }

    fn grant_subscription(&self) -> Option<uuid::Uuid> {
        self.grant_subscription_id
    }

    fn created_at(&self) -> crate::kernel::timestamp::Timestamp {
        self.created_at
    }

    fn snapshot(&self, public_pay_url: &str) -> LinkSnapshot {
        let p = &self.payload;
        LinkSnapshot {
            id: self.id.to_string(),
            uid: self.uid.to_string(),
            status: self.status.as_str().to_owned(),
            public_url: self.public_url(public_pay_url),
            expires_at: self.expires_at,
            amount: p.amount.as_str().to_owned(),
            currency: p.currency.clone(),
            asset: p.asset.clone(),
            label: p.title.clone(),
            description: p.description.clone(),
            merchant_order_id: p.order_id.clone(),
            client_email: p.customer_email.clone(),
            client_id: p.client_id.clone(),
        }
    }
}

impl LinkSource for LinkService {
    fn visible_link(
        &self,
        p: &Principal,
        uid: &LinkUid,
    ) -> Result<Box<dyn LinkSubject>, WebhookError> {
        Ok(Box::new(LinkService::visible_link::<WebhookError>(
            self, p, uid,
        )?))
    }

    fn link_webhook(&self, link_uid: &LinkUid) -> PortResult<Option<LinkWebhook>> {
        LinkService::link_webhook(self, link_uid)
    }

    fn company_link(
        &self,
        company: CompanyId,
        uid: &LinkUid,
    ) -> PortResult<Option<Box<dyn LinkSubject>>> {
        Ok(self
            .link_of(company, uid)?
            .map(|l| Box::new(l) as Box<dyn LinkSubject>))
    }
}
