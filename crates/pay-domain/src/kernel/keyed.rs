//! The one mechanism of every keyed create (`Idempotency-Key` on the POSTs that create:
//! payment links, subscriptions, customers, request mails, expense saves; docs/api.md,
//! "Idempotent requests"), over the kernel's `IdempotencyStore`: the key is claimed first
//! (scope `<credential>:POST:<route>`), the answer is rendered and sealed before the effect's
//! write, and the store commits the effect and that answer in ONE transaction (a crash
//! between them cannot create twice). A byte-identical retry gets the stored answer, another
//! request with the key or one while the first still runs is refused (409), and a refused
//! effect releases the key so that a retry may run.

use std::cell::RefCell;

use crate::kernel::error::{Fault, FieldError, PortResult};
use crate::kernel::idempotency::{
    Claim, Completion, IdempotencyConflict, IdempotencyKey, IdempotentRequest, CLAIM_LEASE,
};
use crate::kernel::secret::Secret;
use crate::kernel::service::Kernel;

/// An answer as the first request got it: its status and its exact body (JSON).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredAnswer {
    pub status: u16,
    pub body: String,
}

impl StoredAnswer {
    fn encode(&self) -> String {
        format!("{} {}", self.status, self.body)
    }

    fn decode(text: &str) -> PortResult<StoredAnswer> {
        let (status, body) = text
            .split_once(' ')
            .ok_or_else(|| Fault::new("stored idempotent answer without a status"))?;
        Ok(StoredAnswer {
            status: status
                .parse()
                .map_err(|e| Fault::caused("stored idempotent answer's status", e))?,
            body: body.to_owned(),
        })
    }
}

/// Renders a create's answer as the edge sends it (built before the commit, stored with it).
pub type Render<'a, T> = &'a (dyn Fn(&T) -> PortResult<StoredAnswer> + 'a);

/// How a port whose write decides the answer (an upsert) seals it inside its transaction:
/// the completion to write with what it did (`None`: the call is not keyed).
pub type Seal<'a, T> = &'a (dyn Fn(&T) -> PortResult<Option<Completion>> + 'a);

/// A keyed call as the edge read it: the header's value, the request body's exact bytes (its
/// fingerprint) and how the answer is rendered.
#[allow(missing_debug_implementations)]
pub struct KeyedCall<'a, T> {
    pub key: &'a str,
    pub body: &'a str,
    pub render: Render<'a, T>,
}

/// What a create answers.
#[derive(Debug)]
pub enum Answer<T> {
    /// The effect ran; with a key, also the answer stored with it (send exactly that).
    Fresh(T, Option<StoredAnswer>),
    /// A byte-identical retry: the first request's answer.
    Replayed(StoredAnswer),
}

impl<T> Answer<T> {
    /// The value of an unkeyed call (which never replays).
    pub fn fresh(self) -> Option<T> {
        match self {
            Answer::Fresh(v, _) => Some(v),
            Answer::Replayed(_) => None,
        }
    }
}

/// Seals a claimed call's answer into the completion its effect commits with.
#[allow(missing_debug_implementations)]
pub struct Sealing<'a, T> {
    k: &'a Kernel,
    request: &'a IdempotentRequest,
    token: &'a str,
    render: Render<'a, T>,
    rendered: RefCell<Option<StoredAnswer>>,
}

impl<T> Sealing<'_, T> {
    /// The completion of `answer` (the last one sealed is what the call answers).
    pub fn completion(&self, answer: &T) -> PortResult<Completion> {
        let rendered = (self.render)(answer)?;
        let sealed = self
            .k
            .sealer
            .seal(&Secret::new(rendered.encode()), &self.request.aad())?;
        *self.rendered.borrow_mut() = Some(rendered);
        Ok(Completion {
            scope: self.request.scope.clone(),
            key: self.request.key.as_str().to_owned(),
            token: self.token.to_owned(),
            answer: sealed,
        })
    }
}

/// The completion an effect writes with, if the call is keyed.
pub fn completion<T>(
    sealing: Option<&Sealing<'_, T>>,
    answer: &T,
) -> PortResult<Option<Completion>> {
    sealing.map(|s| s.completion(answer)).transpose()
}

/// The claim was taken over (a request that outlived its lease): nothing was written.
pub fn claim_lost() -> IdempotencyConflict {
    IdempotencyConflict::InFlight
}

impl Kernel {
    /// Runs `effect` under the call's key, if any (see the module), scoped to `credential`
    /// (`Principal::idempotency_credential`) and `POST <route>`. The effect is given the
    /// sealing of its answer and writes `completion(..)` in its insert transaction.
    pub(crate) fn keyed<T, E>(
        &self,
        credential: &str,
        route: &str,
        call: Option<KeyedCall<'_, T>>,
        effect: impl FnOnce(Option<&Sealing<'_, T>>) -> Result<T, E>,
    ) -> Result<Answer<T>, E>
    where
        E: From<Fault> + From<FieldError> + From<IdempotencyConflict>,
    {
        let Some(call) = call else {
            return Ok(Answer::Fresh(effect(None)?, None));
        };
        let request = IdempotentRequest {
            scope: format!("{credential}:POST:{route}"),
            key: IdempotencyKey::parse(call.key)?,
            fingerprint: self.crypto.digest(call.body).0,
        };
        // Claims and their leases run on real time (the process clock), never a test clock.
        let now = self.now();
        let token = self.crypto.random_alphanumeric(32);
        match self.idempotency.claim_idempotency_key(
            &request,
            &token,
            now,
            now.plus(CLAIM_LEASE),
        )? {
            Claim::Claimed { token } => {
                let sealing = Sealing {
                    k: self,
                    request: &request,
                    token: &token,
                    render: call.render,
                    rendered: RefCell::new(None),
                };
                match effect(Some(&sealing)) {
                    Ok(v) => Ok(Answer::Fresh(v, sealing.rendered.into_inner())),
                    Err(e) => {
                        // Nothing was written with the answer; a failed release leaves the
                        // claim to its lease, after which a retry takes it over.
                        let _ = self.idempotency.release_idempotency_key(
                            &request.scope,
                            request.key.as_str(),
                            &token,
                        );
                        Err(e)
                    }
                }
            }
            Claim::Answered(sealed) => {
                let text = self.sealer.open(&sealed, &request.aad())?;
                Ok(Answer::Replayed(StoredAnswer::decode(text.expose())?))
            }
            Claim::Reused => Err(IdempotencyConflict::Reused.into()),
            Claim::InFlight => Err(IdempotencyConflict::InFlight.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_answers_keep_status_and_body() {
        let a = StoredAnswer {
            status: 201,
            body: "{\"a\": \"b c\"}".into(),
        };
        assert_eq!(StoredAnswer::decode(&a.encode()).unwrap(), a);
        assert!(StoredAnswer::decode("{}").is_err());
    }
}
