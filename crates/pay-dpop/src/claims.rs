//! A proof's payload read into the claims the verifier looks at, borrowing from the decoded
//! bytes: no map, no owned string unless a value carries a JSON escape. The rules are those of
//! `jose::json_object`: an object with unique member names at every depth (other members are
//! read with the same strict visitor and dropped), trailing data refused.

use std::borrow::Cow;
use std::collections::BTreeSet;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

use crate::error::ProofError;
use crate::jose::Strict;

/// One claim's value, as far as the verifier cares: a string, an integer that fits `i64`, or
/// anything else (refused where a string or an integer is required).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Member<'a> {
    Str(Cow<'a, str>),
    Int(i64),
    Other,
}

impl Member<'_> {
    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            Member::Str(s) => Some(s),
            _ => None,
        }
    }
}

/// The claims a proof may carry that the verifier reads; `None` when absent.
#[derive(Debug, Default)]
pub(crate) struct Claims<'a> {
    pub(crate) jti: Option<Member<'a>>,
    pub(crate) htm: Option<Member<'a>>,
    pub(crate) htu: Option<Member<'a>>,
    pub(crate) iat: Option<Member<'a>>,
    pub(crate) ath: Option<Member<'a>>,
    pub(crate) nonce: Option<Member<'a>>,
}

impl<'a> Claims<'a> {
    /// The payload's claims; `MalformedJson` for anything but one JSON object with unique
    /// member names at every depth.
    pub(crate) fn parse(bytes: &'a [u8]) -> Result<Claims<'a>, ProofError> {
        let mut de = serde_json::Deserializer::from_slice(bytes);
        let claims = Claims::deserialize(&mut de).map_err(|_| ProofError::MalformedJson)?;
        de.end().map_err(|_| ProofError::MalformedJson)?;
        Ok(claims)
    }
}

impl<'de> Deserialize<'de> for Member<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(MemberVisitor)
    }
}

struct MemberVisitor;

impl<'de> Visitor<'de> for MemberVisitor {
    type Value = Member<'de>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<Member<'de>, E> {
        Ok(Member::Other)
    }

    fn visit_i64<E>(self, v: i64) -> Result<Member<'de>, E> {
        Ok(Member::Int(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Member<'de>, E> {
        Ok(i64::try_from(v).map_or(Member::Other, Member::Int))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Member<'de>, E> {
        if v.is_finite() {
            Ok(Member::Other)
        } else {
            Err(E::custom("not a finite number"))
        }
    }

    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Member<'de>, E> {
        Ok(Member::Str(Cow::Borrowed(v)))
    }

    fn visit_str<E>(self, v: &str) -> Result<Member<'de>, E> {
        Ok(Member::Str(Cow::Owned(v.to_owned())))
    }

    fn visit_string<E>(self, v: String) -> Result<Member<'de>, E> {
        Ok(Member::Str(Cow::Owned(v)))
    }

    fn visit_unit<E>(self) -> Result<Member<'de>, E> {
        Ok(Member::Other)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Member<'de>, A::Error> {
        // Checked like any nested value (a repeated member inside refuses the proof).
        while seq.next_element::<Strict>()?.is_some() {}
        Ok(Member::Other)
    }

    fn visit_map<A: MapAccess<'de>>(self, access: A) -> Result<Member<'de>, A::Error> {
        Strict::deserialize(de::value::MapAccessDeserializer::new(access))?;
        Ok(Member::Other)
    }
}

/// A member name, borrowed unless it carries an escape.
struct Name<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Name<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_str(NameVisitor)
    }
}

struct NameVisitor;

impl<'de> Visitor<'de> for NameVisitor {
    type Value = Name<'de>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a member name")
    }

    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Name<'de>, E> {
        Ok(Name(Cow::Borrowed(v)))
    }

    fn visit_str<E>(self, v: &str) -> Result<Name<'de>, E> {
        Ok(Name(Cow::Owned(v.to_owned())))
    }

    fn visit_string<E>(self, v: String) -> Result<Name<'de>, E> {
        Ok(Name(Cow::Owned(v)))
    }
}

impl<'de> Deserialize<'de> for Claims<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(ClaimsVisitor)
    }
}

struct ClaimsVisitor;

impl<'de> Visitor<'de> for ClaimsVisitor {
    type Value = Claims<'de>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Claims<'de>, A::Error> {
        let mut claims = Claims::default();
        let mut seen = Seen::default();
        while let Some(Name(name)) = access.next_key::<Name<'de>>()? {
            let slot = match name.as_ref() {
                "jti" => Some(&mut claims.jti),
                "htm" => Some(&mut claims.htm),
                "htu" => Some(&mut claims.htu),
                "iat" => Some(&mut claims.iat),
                "ath" => Some(&mut claims.ath),
                "nonce" => Some(&mut claims.nonce),
                _ => None,
            };
            match slot {
                Some(slot) => *slot = Some(access.next_value::<Member<'de>>()?),
                None => {
                    access.next_value::<Strict>()?;
                }
            }
            if !seen.insert(name) {
                return Err(de::Error::custom("repeated member name"));
            }
        }
        Ok(claims)
    }
}

/// The member names of one object seen so far: a short list while it is short (a proof has a
/// handful of claims), a set past that, so a hostile payload of many members costs
/// `n log n`, not `n^2`.
#[derive(Default)]
struct Seen<'a> {
    few: Vec<Cow<'a, str>>,
    many: BTreeSet<Cow<'a, str>>,
}

impl<'a> Seen<'a> {
    /// False when `name` was seen before.
    fn insert(&mut self, name: Cow<'a, str>) -> bool {
        if self.few.len() < 16 {
            if self.few.contains(&name) {
                return false;
            }
            self.few.push(name);
            return true;
        }
        if self.few.contains(&name) {
            return false;
        }
        self.many.insert(name)
    }
}
