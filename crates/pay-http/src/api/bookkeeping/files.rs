//! Private evidence files: upload (the raw bytes as the body, the name in `filename`), the
//! metadata, and the bytes through this authenticated route only (`attachment`, `nosniff`,
//! never cached). The caller is authenticated before the body is read.
//!
//! Raw body rather than multipart/form-data: one file per request needs no envelope, the body
//! goes through the one capped body reader (with the upload's 10 MiB cap), no multipart parser
//! joins the dependencies, and the declared `Content-Type` would be ignored anyway (the type
//! is sniffed from the bytes).

use actix_web::http::header;
use actix_web::{get, post, web, HttpRequest, HttpResponse};
use pay_domain::app::Pay;
use pay_domain::bookkeeping::{EvidenceRefusal, MAX_EVIDENCE_BYTES};
use pay_domain::FieldError;

use crate::api::bookkeeping::dto::EvidenceFileDto;
use crate::edge::body::{self, BodyError};
use crate::edge::credentials::{blocking, Credentials};
use crate::edge::error::{ApiError, ErrorBody};
use crate::edge::form::read_query;

/// A file's bytes, as the document describes them (`string`, `binary`).
#[derive(Debug, utoipa::ToSchema)]
#[schema(value_type = String, format = Binary)]
pub struct EvidenceBytes(pub Vec<u8>);

/// Longest `filename` query value taken (it is sanitised and cut to 150 characters after).
const MAX_GIVEN_FILENAME: usize = 1000;

/// Uploads a private evidence file (PDF, PNG, JPEG or WebP, at most 10 MiB) of the company:
/// the body is the file's bytes; its type is sniffed from them (the name and `Content-Type`
/// are not trusted); `filename` is kept sanitised (path, control characters and leading dots
/// dropped, the type's extension ensured). Linked to no expense until a save lists it in
/// `evidenceFileIds`; unlinked files are deleted after a day. Scope `pay:bookkeeping:write`.
#[utoipa::path(
    tag = "Bookkeeping",
    params(("filename" = Option<String>, Query, max_length = 1000, description = "The file's name (sanitised); default `evidence.<ext>`")),
    request_body(content = EvidenceBytes, content_type = "application/octet-stream", description = "The file's bytes"),
    security(("apiKeyId" = [], "apiKeySecret" = []), ("session" = [])),
    responses(
        (status = 201, description = "Stored", body = EvidenceFileDto),
        (status = 400, description = "`unknown_field` or `validation_failed` on a query parameter", body = ErrorBody),
        (status = 401, description = "`Unauthorized` or `Invalid pay API credentials` (also a grant without `pay:bookkeeping:write`)", body = ErrorBody),
        (status = 403, description = "Session without `settings.manage` or CSRF token", body = ErrorBody),
        (status = 413, description = "`payload_too_large`: over 10 MiB", body = ErrorBody),
        (status = 415, description = "`unsupported_file_type`: not a PDF, PNG, JPEG or WebP by its content", body = ErrorBody),
    )
)]
#[post("/api/partner/v1/pay/bookkeeping/files")]
pub async fn upload_evidence_file(
    pay: web::Data<Pay>,
    creds: Credentials,
    req: HttpRequest,
    payload: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let query = req.query_string().to_owned();
    let p = pay.clone();
    let (principal, filename) = blocking(move || {
        let principal = creds.principal(&p)?;
        let mut filename = String::new();
        for (_, v) in read_query(&query, &["filename"])? {
            if v.chars().count() > MAX_GIVEN_FILENAME {
                return Err(FieldError::new(
                    "filename",
                    format!("filename is longer than {MAX_GIVEN_FILENAME} characters"),
                )
                .into());
            }
            filename = v;
        }
        Ok((principal, filename))
    })
    .await?;
    let mut payload = payload.into_inner();
    let bytes = body::read_capped(
        body::declared_length(&req),
        &mut payload,
        MAX_EVIDENCE_BYTES,
    )
    .await
    .map_err(|e| match e {
        BodyError::TooLarge => ApiError::from(EvidenceRefusal::TooLarge {
            max_bytes: MAX_EVIDENCE_BYTES,
        }),
        other => other.into(),
    })?;
    let file = blocking(move || {
        Ok(pay
            .bookkeeping()
            .upload_evidence(&principal, &filename, &bytes)?)
    })
    .await?;
    Ok(HttpResponse::Created().json(EvidenceFileDto::from(file)))
}

/// One evidence file's metadata (another company's, or an unknown id: 404). Scope
/// `pay:bookkeeping:read`.
#[utoipa::path(
    tag = "Bookkeeping",
    params(("fileId" = String, Path)),
    security(("apiKeyId" = [], "apiKeySecret" = []), ("session" = [])),
    responses(
        (status = 200, body = EvidenceFileDto),
        (status = 401, description = "`Unauthorized` or `Invalid pay API credentials`", body = ErrorBody),
        (status = 404, description = "Unknown, or another company's", body = ErrorBody),
    )
)]
#[get("/api/partner/v1/pay/bookkeeping/files/{fileId}")]
pub async fn get_evidence_file(
    pay: web::Data<Pay>,
    creds: Credentials,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let id = path.into_inner();
    let file = blocking(move || {
        let principal = creds.principal(&pay)?;
        let id = crate::edge::evidence_file_id(&id)?;
        Ok(pay.bookkeeping().evidence_file(&principal, id)?)
    })
    .await?;
    Ok(HttpResponse::Ok().json(EvidenceFileDto::from(file)))
}

/// An evidence file's bytes, as an attachment of its sniffed type, never cached, never
/// sniffed by the browser. Another company's file, or an unknown id: 404. Scope
/// `pay:bookkeeping:read`.
#[utoipa::path(
    tag = "Bookkeeping",
    params(("fileId" = String, Path)),
    security(("apiKeyId" = [], "apiKeySecret" = []), ("session" = [])),
    responses(
        (status = 200, description = "The bytes (`Content-Disposition: attachment`)",
            content(
                (EvidenceBytes = "application/pdf"),
                (EvidenceBytes = "image/png"),
                (EvidenceBytes = "image/jpeg"),
                (EvidenceBytes = "image/webp"),
            )),
        (status = 401, description = "`Unauthorized` or `Invalid pay API credentials`", body = ErrorBody),
        (status = 404, description = "Unknown, or another company's", body = ErrorBody),
    )
)]
#[get("/api/partner/v1/pay/bookkeeping/files/{fileId}/content")]
pub async fn download_evidence_file(
    pay: web::Data<Pay>,
    creds: Credentials,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let id = path.into_inner();
    let (file, bytes) = blocking(move || {
        let principal = creds.principal(&pay)?;
        let id = crate::edge::evidence_file_id(&id)?;
        Ok(pay.bookkeeping().evidence_content(&principal, id)?)
    })
    .await?;
    Ok(HttpResponse::Ok()
        .insert_header((header::CONTENT_TYPE, file.content_type.mime()))
        .insert_header((header::CONTENT_DISPOSITION, attachment(&file.filename)))
        .insert_header((header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
        .insert_header((header::CACHE_CONTROL, "private, no-store"))
        .body(bytes))
}

/// `attachment; filename="<ASCII fallback>"; filename*=UTF-8''<percent-encoded>` (RFC 6266
/// section 4.3, RFC 8187): old clients take the ASCII name, others the exact one.
pub(crate) fn attachment(name: &str) -> String {
    let fallback: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_graphic() && c != '"' && c != '\\' || c == ' ' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let mut encoded = String::new();
    for b in name.bytes() {
        if b.is_ascii_alphanumeric() || b"!#$&+-.^_`|~".contains(&b) {
            encoded.push(b as char);
        } else {
            encoded.push_str(&format!("%{b:02X}"));
        }
    }
    format!("attachment; filename=\"{fallback}\"; filename*=UTF-8''{encoded}")
}

#[cfg(test)]
mod tests {
    use super::attachment;

    #[test]
    fn the_disposition_has_an_ascii_fallback_and_the_exact_name() {
        assert_eq!(
            attachment("invoice 7.pdf"),
            "attachment; filename=\"invoice 7.pdf\"; filename*=UTF-8''invoice%207.pdf"
        );
        assert_eq!(
            attachment("Rechnung März.pdf"),
            "attachment; filename=\"Rechnung M_rz.pdf\"; filename*=UTF-8''Rechnung%20M%C3%A4rz.pdf"
        );
        assert_eq!(
            attachment("a'b;c.pdf"),
            "attachment; filename=\"a'b;c.pdf\"; filename*=UTF-8''a%27b%3Bc.pdf"
        );
    }
}
