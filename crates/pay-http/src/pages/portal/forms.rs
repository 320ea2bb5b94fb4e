//! The portal's form bodies: what reads each form (`edge::form::read_page_form`: exactly these
//! names, each at most once, anything else refused) and what the OpenAPI document describes.

use pay_domain::customers::portal::PortalParams;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use utoipa::ToSchema;

/// A portal form: the signed URL's parameters, the page's token and one value.
pub trait PortalForm: DeserializeOwned {
    /// The name of the form's one value.
    const VALUE: &'static str;

    /// The signed parameters, the token and the value.
    fn into_parts(self) -> (PortalParams, String, String);
}

/// The rename form.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RenameForm {
    pub company: String,
    pub customer: String,
    pub expires: String,
    pub signature: String,
    /// The URL's `grant`, when an OAuth grant minted it.
    pub grant: Option<String>,
    /// The URL's `access`, with `grant`.
    pub access: Option<String>,
    /// The token of the page (bound to the signed URL).
    #[schema(min_length = 64, max_length = 64)]
    pub token: String,
    /// The new name; empty clears it.
    #[schema(max_length = 200)]
    pub name: String,
}

/// The pause, resume and cancel forms.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct StatusForm {
    pub company: String,
    pub customer: String,
    pub expires: String,
    pub signature: String,
    /// The URL's `grant`, when an OAuth grant minted it.
    pub grant: Option<String>,
    /// The URL's `access`, with `grant`.
    pub access: Option<String>,
    /// The token of the page (bound to the signed URL).
    #[schema(min_length = 64, max_length = 64)]
    pub token: String,
    /// `paused`, `active` or `cancelled`.
    #[schema(schema_with = crate::api::schema::subscription_status)]
    pub status: String,
}

/// The one `PortalForm` impl, for each form: the signed parameters, `token`, and its value
/// field (named as in the form).
macro_rules! portal_form {
    ($form:ty, $value:ident) => {
        impl PortalForm for $form {
            const VALUE: &'static str = stringify!($value);

            fn into_parts(self) -> (PortalParams, String, String) {
                let params = PortalParams {
                    company: self.company,
                    customer: self.customer,
                    expires: self.expires,
                    signature: self.signature,
                    grant: self.grant,
                    access: self.access,
                };
                (params, self.token, self.$value)
            }
        }
    };
}

portal_form!(RenameForm, name);
portal_form!(StatusForm, status);
