//! Request and response shapes of the meta routes.

use serde::Serialize;
use utoipa::ToSchema;

data_list!(TimezoneList, String, "IANA time zone names, sorted.");

/// Liveness and readiness.
#[derive(Debug, Serialize, ToSchema)]
pub struct HealthDto {
    #[schema(example = "ok")]
    pub status: String,
}
