//! Request and response shapes of the customers routes.

use crate::api::schema;
use pay_domain::customers::{Contact, PortalLink, UpsertContactInput};
use pay_domain::kernel::ids::{ContactId, ContactUid};
use pay_domain::kernel::timestamp::Timestamp;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use utoipa::ToSchema;

data_list!(
    ContactList,
    ContactDto,
    "Up to 200 newest customers: `{\"data\": [...]}`."
);

/// Body of `POST /api/partner/v1/pay/customers`: upserts the company's customer with this
/// e-mail (trimmed, compared without case). Only the given fields change on an update.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UpsertCustomerRequest {
    /// The upsert key.
    #[schema(schema_with = schema::contact_email)]
    pub email: String,
    #[serde(default)]
    #[schema(schema_with = schema::contact_name)]
    pub name: Option<String>,
    /// Merchant-side identifier (read-only in the portal).
    #[serde(default)]
    #[schema(schema_with = schema::client_id)]
    pub client_id: Option<String>,
    #[serde(default)]
    #[schema(schema_with = schema::metadata)]
    pub metadata: Option<Map<String, Value>>,
}

impl From<UpsertCustomerRequest> for UpsertContactInput {
    fn from(r: UpsertCustomerRequest) -> Self {
        UpsertContactInput {
            email: r.email,
            name: r.name,
            client_id: r.client_id,
            metadata: r.metadata,
        }
    }
}

/// A customer (contact).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContactDto {
    #[schema(value_type = String, example = "0192f0c4-1a2b-7c3d-8e4f-0123456789ab")]
    pub id: ContactId,
    /// Public identifier, used in portal links.
    #[schema(value_type = String, example = "cus_AbCdEfGhIjKlMnOpQrStUvWx")]
    pub uid: ContactUid,
    pub email: String,
    pub name: Option<String>,
    pub client_id: Option<String>,
    #[schema(value_type = Object)]
    pub metadata: Map<String, Value>,
    #[schema(value_type = String, example = "2026-11-22T06:07:20.123Z")]
    pub created_at: Timestamp,
    #[schema(value_type = String, example = "2026-11-22T06:07:20.123Z")]
    pub updated_at: Timestamp,
}

impl From<Contact> for ContactDto {
    fn from(c: Contact) -> Self {
        ContactDto {
            id: c.id,
            uid: c.uid,
            email: c.email,
            name: c.name,
            client_id: c.client_id,
            metadata: c.metadata,
            created_at: c.created_at,
            updated_at: c.updated_at,
        }
    }
}

/// `urls` of a portal answer.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContactUrls {
    /// The signed portal URL (24 hours; generate it on demand, never store it).
    pub customer_portal: String,
}

/// The customer of a portal answer: the Contact plus `companyAccountId` and `urls`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PortalCustomerDto {
    #[serde(flatten)]
    pub contact: ContactDto,
    pub company_account_id: String,
    pub urls: ContactUrls,
}

/// Answer of `POST /api/partner/v1/pay/customers/{customerId}/portal`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PortalLinkDto {
    pub ok: bool,
    pub company_id: String,
    pub customer: PortalCustomerDto,
    /// When the URL stops working (24 hours ahead on the company's clock).
    #[schema(value_type = String, example = "2026-11-23T06:07:20.000Z")]
    pub expires_at: Timestamp,
}

impl From<PortalLink> for PortalLinkDto {
    fn from(l: PortalLink) -> Self {
        PortalLinkDto {
            ok: true,
            company_id: l.company_id.to_string(),
            customer: PortalCustomerDto {
                contact: l.contact.into(),
                company_account_id: l.company_account_id,
                urls: ContactUrls {
                    customer_portal: l.url,
                },
            },
            expires_at: l.expires_at,
        }
    }
}
