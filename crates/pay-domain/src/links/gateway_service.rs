//! The gateway form use case: a customer's browser posts a merchant's form with the
//! integration's public form key; the link is created as that integration's API key would
//! create it, and the customer goes on to the hosted checkout.

use crate::kernel::error::NotFound;
use crate::kernel::ids::FormKeyId;
use crate::links::gateway::{origin_allowed, read_form};
use crate::links::LinkError;
use crate::links::LinkService;
use crate::links::PaymentLink;
use crate::tenancy::{Credential, Denied, Principal};

/// The same answer for a malformed, unknown or disabled key: nothing tells them apart.
const FORM_NOT_FOUND: NotFound = NotFound {
    kind: "Payment form",
};

/// An enabled integration reached from an allowed origin: what a form's link is created as.
/// Only `Pay::open_gateway_form` makes one.
#[derive(Debug, Clone)]
pub struct GatewayForm {
    principal: Principal,
}

impl GatewayForm {
    /// The company the form's links belong to.
    pub fn company_id(&self) -> crate::kernel::ids::CompanyId {
        self.principal.company_id
    }
}

impl LinkService {
    /// Checks the form key and the browser's `Origin`, before anything of the body is read
    /// (as credentials come before the body on the JSON routes):
    /// - a malformed, unknown or disabled key is `NotFound` (one answer for all three);
    /// - an `Origin` that is missing, `null`, or not exactly (scheme, host, port) one of the
    ///   integration's `allowedOrigins` is `Forbidden`. Browsers send `Origin` on every
    ///   cross-origin form POST, so a missing one is not a browser posting a merchant's page.
    ///
    /// `Origin` keeps other sites' pages from using the key through browsers; it is not a
    /// secret, and a non-browser client can send any value, hence the rate limits per client
    /// address and per form key (`limits.gateway_*`). The key's `lastUsedAt` is kept as for an
    /// API call.
    pub fn open_gateway_form(
        &self,
        form_key: &str,
        origin: Option<&str>,
        client_addr: &str,
    ) -> Result<GatewayForm, LinkError> {
        let key = FormKeyId::parse(form_key).ok_or(FORM_NOT_FOUND)?;
        let integration = self
            .store
            .integration_by_form_key(&key)?
            .filter(|i| i.enabled)
            .ok_or(FORM_NOT_FOUND)?;
        if !origin_allowed(origin, &integration.allowed_origins) {
            return Err(Denied::Forbidden.into());
        }
        // Anyone can post a form with any `Origin`: posts are limited per client address, and
        // per form key so that the merchant's link list cannot be flooded.
        self.k.throttle::<LinkError>(
            &format!("gateway|addr|{client_addr}"),
            &self.k.limits.gateway_per_address,
        )?;
        self.k.throttle::<LinkError>(
            &format!("gateway|form|{}", key.as_str()),
            &self.k.limits.gateway_per_form,
        )?;
        self.tenancy.touch_key(&integration)?;
        Ok(GatewayForm {
            principal: Principal {
                company_id: integration.company_id,
                credential: Credential::ApiKey {
                    partner_id: integration.partner_id,
                },
            },
        })
    }

    /// Creates the form's link: the fields become the JSON route's input (`gateway::read_form`)
    /// and go through `create_link` as the integration's key, so the rules, the settings and
    /// the merchant fields are exactly those of `POST /api/partner/v1/pay/payment-links`.
    pub fn create_link_for_form(
        &self,
        form: &GatewayForm,
        fields: Vec<(String, String)>,
    ) -> Result<PaymentLink, LinkError> {
        let input = read_form(fields)?;
        self.create_link(&form.principal, input)
    }

    /// Both steps at once: `open_gateway_form`, then `create_link_for_form`.
    pub fn create_link_from_form(
        &self,
        form_key: &str,
        origin: Option<&str>,
        client_addr: &str,
        fields: Vec<(String, String)>,
    ) -> Result<PaymentLink, LinkError> {
        let form = self.open_gateway_form(form_key, origin, client_addr)?;
        self.create_link_for_form(&form, fields)
    }
}
