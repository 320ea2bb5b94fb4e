//! What the merchant dashboard's Developers screen shows of a company's OAuth access: each
//! grant with its application, its scopes, when it was last used and, for an official native
//! installation, the site it was installed on (`OAuthStore::company_grants`).

use crate::kernel::ids::ClientId;
use crate::kernel::timestamp::Timestamp;
use crate::oauth::Grant;

/// One grant of a company, as listed (revoked ones too).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectedApp {
    /// The grant: its scopes, who approved last, when, and whether it was revoked.
    pub grant: Grant,
    /// The application's name (an official native installation's: its platform's).
    pub name: String,
    pub client_id: ClientId,
    /// When the grant was last used: the newest refresh token issued for it (one is issued
    /// with every code exchange and every refresh). `None` when none is kept: never
    /// exchanged, or every token of it was pruned after its expiry.
    pub last_used_at: Option<Timestamp>,
    /// The installation, for an official native installation's application (one made from a
    /// platform template); `None` for applications an operator registers.
    pub site: Option<InstalledSite>,
}

impl ConnectedApp {
    /// An official native installation's grant: ending it is a disconnect, which keeps what
    /// the spec keeps for the late events of the links issued before.
    pub fn is_native(&self) -> bool {
        self.site.is_some()
    }
}

/// Where an official native installation runs (`installations::Installation`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstalledSite {
    /// The platform template's identifier.
    pub platform: String,
    /// The site's https origin.
    pub site_url: String,
    /// Support metadata, as last registered.
    pub site_name: Option<String>,
}
