//! Identifier newtypes. Internal ids are UUIDs (v7, so they sort by creation); public ids carry
//! the prefix the spec gives them. Each has one parse function used at the edge, so the domain
//! never handles a raw string id.

use std::fmt;
use uuid::Uuid;

macro_rules! uuid_id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(pub Uuid);

        impl $name {
            /// Parses the canonical hyphenated form; anything else is not an id of ours.
            pub fn parse(s: &str) -> Option<Self> {
                if s.len() != 36 {
                    return None;
                }
                Uuid::try_parse(s).ok().map($name)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.hyphenated().fmt(f)
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_str(self)
            }
        }
    };
}

uuid_id!(
    /// A merchant team.
    CompanyId
);
uuid_id!(
    /// A person who signs in.
    UserId
);
uuid_id!(
    /// Internal id of a payment link.
    PaymentLinkId
);
uuid_id!(
    /// An integration (API-key record); the spec's `partner_id`.
    PartnerId
);
uuid_id!(
    /// A signed-in browser session.
    SignInId
);
uuid_id!(
    /// One payer's payment session on a link (the spec's `session.id`).
    PaymentSessionId
);
uuid_id!(
    /// Internal id of a contact (customer or vendor).
    ContactId
);
uuid_id!(
    /// Internal id of a subscription.
    SubscriptionId
);
uuid_id!(
    /// Internal id of one billing cycle of a subscription.
    CycleId
);
uuid_id!(
    /// An OAuth application (internal id; clients use its `ClientId`).
    ApplicationId
);
uuid_id!(
    /// A merchant's OAuth grant to one application on one company.
    GrantId
);
uuid_id!(
    /// One OAuth token family: the code and every access and refresh token issued from it.
    FamilyId
);

uuid_id!(
    /// One movement of a merchant's settlement wallet (bookkeeping).
    WalletActivityId
);
uuid_id!(
    /// A bookkeeping expense (one per outgoing wallet activity).
    ExpenseId
);
uuid_id!(
    /// A private evidence file (invoice, receipt) of a company's bookkeeping.
    EvidenceFileId
);
uuid_id!(
    /// One webhook delivery of the log (`deliveryId`).
    DeliveryId
);
uuid_id!(
    /// A domain event in the outbox (what one context decided and others react to).
    EventId
);
uuid_id!(
    /// An onboarding partner (agency, platform) that prepares merchants' accounts
    /// (`partnerId` of `admin create-partner`; not an integration's `partner_id`).
    OnboardingPartnerId
);
uuid_id!(
    /// A partner's onboarding draft: the company a merchant claims.
    DraftId
);

macro_rules! prefixed_id {
    ($(#[$doc:meta])* $name:ident, $prefix:expr, $len:expr) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(String);

        impl $name {
            pub const PREFIX: &'static str = $prefix;
            /// Length of the random part after the prefix.
            pub const RANDOM_LEN: usize = $len;

            /// Accepts exactly the prefix followed by `RANDOM_LEN` ASCII alphanumerics.
            pub fn parse(s: &str) -> Option<Self> {
                let rest = s.strip_prefix($prefix)?;
                if rest.len() == $len && rest.bytes().all(|b| b.is_ascii_alphanumeric()) {
                    Some($name(s.to_owned()))
                } else {
                    None
                }
            }

            /// Builds the id from a random alphanumeric part (the id generator's job).
            pub fn from_random(random: &str) -> Option<Self> {
                Self::parse(&format!("{}{}", $prefix, random))
            }

            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&self.0)
            }
        }
    };
}

prefixed_id!(
    /// Public id of an API key pair (`x-svc-key-id`).
    KeyId,
    "mk_pay_",
    24
);
prefixed_id!(
    /// Public form key of an integration, used by the gateway form.
    FormKeyId,
    "pk_pay_",
    24
);

prefixed_id!(
    /// Public id of a contact, used in customer portal URLs.
    ContactUid,
    "cus_",
    24
);
prefixed_id!(
    /// Public (merchant-facing) id of a subscription.
    SubscriptionUid,
    "sub_",
    24
);

/// Public identifier of a payment link, used in hosted checkout URLs: 22 base62 characters
/// (about 131 random bits), so that links cannot be enumerated.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LinkUid(String);

impl LinkUid {
    pub const LEN: usize = 22;

    pub fn parse(s: &str) -> Option<Self> {
        Self::valid(s).then(|| LinkUid(s.to_owned()))
    }

    /// `parse` keeping the given `String` (a store's row already owns one).
    pub fn from_string(s: String) -> Option<Self> {
        Self::valid(&s).then_some(LinkUid(s))
    }

    fn valid(s: &str) -> bool {
        s.len() == Self::LEN && s.bytes().all(|b| b.is_ascii_alphanumeric())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for LinkUid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl serde::Serialize for LinkUid {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

/// Public id of an OAuth application (`client_id`): `oc_` for the applications an operator
/// registers, `svc_app_` for a native installation's (the spec's prefix), each followed by 32
/// ASCII alphanumerics.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ClientId(String);

impl ClientId {
    pub const PREFIX: &'static str = "oc_";
    /// The prefix of a native installation's client id.
    pub const NATIVE_PREFIX: &'static str = "svc_app_";
    /// Length of the random part after the prefix.
    pub const RANDOM_LEN: usize = 32;

    /// Accepts exactly one of the two prefixes followed by `RANDOM_LEN` ASCII alphanumerics.
    pub fn parse(s: &str) -> Option<Self> {
        let rest = s
            .strip_prefix(Self::PREFIX)
            .or_else(|| s.strip_prefix(Self::NATIVE_PREFIX))?;
        (rest.len() == Self::RANDOM_LEN && rest.bytes().all(|b| b.is_ascii_alphanumeric()))
            .then(|| ClientId(s.to_owned()))
    }

    /// An operator-registered application's id from a random alphanumeric part.
    pub fn from_random(random: &str) -> Option<Self> {
        Self::parse(&format!("{}{random}", Self::PREFIX))
    }

    /// A native installation's id from a random alphanumeric part.
    pub fn native_from_random(random: &str) -> Option<Self> {
        Self::parse(&format!("{}{random}", Self::NATIVE_PREFIX))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ClientId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl serde::Serialize for ClientId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuid_ids_parse_only_the_canonical_form() {
        let u = "0192f0c4-1a2b-7c3d-8e4f-0123456789ab";
        assert_eq!(CompanyId::parse(u).unwrap().to_string(), u);
        assert!(CompanyId::parse("0192f0c41a2b7c3d8e4f0123456789ab").is_none());
        assert!(CompanyId::parse("not-a-uuid").is_none());
    }

    #[test]
    fn prefixed_ids_check_prefix_and_length() {
        assert!(KeyId::parse("mk_pay_abcdefghijklmnopqrstuvwx").is_some());
        assert!(KeyId::parse("mk_pay_abc").is_none());
        assert!(KeyId::parse("pk_pay_abcdefghijklmnopqrstuvwx").is_none());
        assert!(KeyId::parse("mk_pay_abcdefghijklmnopqrstuv-x").is_none());
        assert!(FormKeyId::from_random("abcdefghijklmnopqrstuvwx").is_some());
        let random = "a".repeat(32);
        assert!(ClientId::from_random(&random).is_some());
        let native = ClientId::native_from_random(&random).unwrap();
        assert!(native.as_str().starts_with("svc_app_"));
        assert_eq!(ClientId::parse(native.as_str()), Some(native));
        assert!(ClientId::parse(&format!("svc_{random}")).is_none());
        assert!(ClientId::parse(&format!("svc_app_{}", "a".repeat(31))).is_none());
    }

    #[test]
    fn link_uids_are_22_alphanumerics() {
        for (s, ok) in [
            ("AbCdEfGhIjKlMnOpQrStUv", true),
            ("AbCdEfGhIjKlMnOpQrStU", false),
            ("AbCdEfGhIjKlMnOpQrStU/", false),
            ("AbCdEfGhIjKlMnOpQrStUvW", false),
        ] {
            assert_eq!(LinkUid::parse(s).is_some(), ok, "{s}");
            // The store's owned form refuses and keeps exactly what `parse` does.
            assert_eq!(LinkUid::from_string(s.to_owned()), LinkUid::parse(s), "{s}");
        }
    }
}
