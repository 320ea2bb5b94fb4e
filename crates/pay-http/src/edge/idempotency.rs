//! `Idempotency-Key` at the edge, for every route that takes it (the creates and the grant's
//! webhook subscription; docs/api.md, "Idempotent requests"): the header read strictly, the
//! body kept as its exact bytes (a retry must be byte-identical), the answer rendered once
//! (`kernel::keyed`: stored with the effect) and a replay sent with `Idempotent-Replayed:
//! true`.

use actix_web::dev::Payload;
use actix_web::http::header::ContentType;
use actix_web::http::StatusCode;
use actix_web::{FromRequest, HttpRequest, HttpResponse};
use futures_util::future::LocalBoxFuture;
use pay_domain::kernel::error::{Fault, PortResult};
use pay_domain::kernel::idempotency::HEADER as IDEMPOTENCY_KEY;
use pay_domain::kernel::keyed::{Answer, KeyedCall, Render, StoredAnswer};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::edge::body;
use crate::edge::error::ApiError;
use crate::edge::json::{from_object, is_json_content_type, json_bytes, parse_object};

/// The OpenAPI description of the `Idempotency-Key` header parameter of a create.
pub const KEY_DOC: &str = "1 to 255 printable ASCII characters; scoped to the credential, method and route, kept 24 hours: a byte-identical retry gets the first answer again, with `Idempotent-Replayed: true`";
/// The OpenAPI description of a keyed route's 409.
pub const CONFLICT_DOC: &str = "`idempotency_key_reused` (the key was used for another request) or `idempotency_key_in_flight` (the first is still running)";

/// The response header of a replayed answer.
pub const REPLAYED_HEADER: &str = "Idempotent-Replayed";

/// The `Idempotency-Key` header: none, or exactly one readable value (its rules are the
/// kernel's `IdempotencyKey::parse`).
pub fn idempotency_key(req: &HttpRequest) -> Result<Option<String>, ApiError> {
    let mut values = req.headers().get_all(IDEMPOTENCY_KEY);
    let Some(first) = values.next() else {
        return Ok(None);
    };
    let bad = || {
        ApiError::invalid(
            IDEMPOTENCY_KEY,
            format!("give one {IDEMPOTENCY_KEY} header of printable ASCII"),
        )
    };
    if values.next().is_some() {
        return Err(bad());
    }
    first
        .to_str()
        .map(|s| Some(s.to_owned()))
        .map_err(|_| bad())
}

/// A JSON body kept as its exact bytes too: an idempotent retry must be byte-identical. Read
/// by the edge's one capped reader; like `JsonBody`, never fails the request by itself.
#[derive(Debug)]
pub struct ExactJson(pub Result<Vec<u8>, ApiError>);

impl FromRequest for ExactJson {
    type Error = ApiError;
    type Future = LocalBoxFuture<'static, Result<Self, Self::Error>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let bytes = json_bytes(req, payload);
        Box::pin(async move { Ok(ExactJson(bytes.await)) })
    }
}

/// A create's `Idempotency-Key` and its body's exact bytes, read by the one capped reader.
/// Like `JsonBody`, extraction never fails the request: the handler checks credentials first,
/// then reads the key and the body by the route's rules.
#[derive(Debug)]
pub struct Keyed {
    key: Result<Option<String>, ApiError>,
    json: bool,
    bytes: Result<Vec<u8>, ApiError>,
}

impl FromRequest for Keyed {
    type Error = ApiError;
    type Future = LocalBoxFuture<'static, Result<Self, Self::Error>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let key = idempotency_key(req);
        let json = is_json_content_type(req);
        let declared = body::declared_length(req);
        let mut payload = payload.take();
        Box::pin(async move {
            let bytes = body::read(declared, &mut payload)
                .await
                .map_err(ApiError::from);
            Ok(Keyed { key, json, bytes })
        })
    }
}

impl Keyed {
    /// The key and the body, once the credentials passed: a bad header first, then a body
    /// that could not be read.
    pub fn open(self) -> Result<KeyedRequest, ApiError> {
        let key = self.key?;
        let bytes = self.bytes?;
        Ok(KeyedRequest {
            key,
            json: self.json,
            bytes,
        })
    }
}

/// A request's key and exact body.
#[derive(Debug)]
pub struct KeyedRequest {
    key: Option<String>,
    json: bool,
    bytes: Vec<u8>,
}

impl KeyedRequest {
    /// The body as one JSON object (`application/json` required, as `JsonBody`).
    pub fn object(&self) -> Result<Map<String, Value>, ApiError> {
        if !self.json {
            return Err(ApiError::UnsupportedMediaType);
        }
        parse_object(&self.bytes)
    }

    /// The body as the route's request struct (as `JsonBody::read`).
    pub fn read<T: DeserializeOwned>(&self) -> Result<T, ApiError> {
        from_object(self.object()?)
    }

    /// The body's bytes as they came.
    pub fn raw(&self) -> &[u8] {
        &self.bytes
    }

    /// Whether the request said `application/json`.
    pub fn is_json(&self) -> bool {
        self.json
    }

    /// Whether the request carried a key.
    pub fn has_key(&self) -> bool {
        self.key.is_some()
    }

    /// The keyed call of this request, when it has a key (read after the body was, by the
    /// route's rules): the domain renders the answer with `render`.
    pub fn call<'a, T>(
        &'a self,
        render: Render<'a, T>,
    ) -> Result<Option<KeyedCall<'a, T>>, ApiError> {
        let Some(key) = &self.key else {
            return Ok(None);
        };
        let body = std::str::from_utf8(&self.bytes)
            .map_err(|_| ApiError::invalid("body", "the body is not UTF-8"))?;
        Ok(Some(KeyedCall {
            key: key.as_str(),
            body,
            render,
        }))
    }
}

/// An answer as JSON with `status`, exactly as it is sent (and stored for a replay).
pub fn json_answer(status: StatusCode, dto: &impl Serialize) -> PortResult<StoredAnswer> {
    Ok(StoredAnswer {
        status: status.as_u16(),
        body: serde_json::to_string(dto).map_err(|e| Fault::caused("create response", e))?,
    })
}

/// A keyed create's answer as it leaves the blocking pool (a response is built on the
/// request's thread).
#[derive(Debug)]
pub struct Reply {
    stored: StoredAnswer,
    replayed: bool,
}

/// The reply of a keyed create: the answer stored with the effect, or the first one's again
/// (sent with `Idempotent-Replayed: true`); rendered now for an unkeyed call.
pub fn reply<T>(answer: Answer<T>, render: Render<'_, T>) -> Result<Reply, ApiError> {
    Ok(match answer {
        Answer::Fresh(_, Some(stored)) => Reply {
            stored,
            replayed: false,
        },
        Answer::Fresh(value, None) => Reply {
            stored: render(&value)?,
            replayed: false,
        },
        Answer::Replayed(stored) => Reply {
            stored,
            replayed: true,
        },
    })
}

impl Reply {
    /// The response: the stored status and exact JSON body.
    pub fn response(self) -> Result<HttpResponse, ApiError> {
        let status = StatusCode::from_u16(self.stored.status)
            .map_err(|e| ApiError::Fault(Fault::caused("stored answer status", e)))?;
        let mut res = HttpResponse::build(status);
        res.content_type(ContentType::json());
        if self.replayed {
            res.insert_header((REPLAYED_HEADER, "true"));
        }
        Ok(res.body(self.stored.body))
    }
}
