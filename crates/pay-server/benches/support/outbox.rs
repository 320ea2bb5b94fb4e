//! What the webhook benchmarks share: a tenant with queued deliveries, and the figures' checks.

use pay_domain::kernel::ids::LinkUid;
use pay_domain::kernel::secret::Secret;

/// A rate that measured something.
pub fn measured(what: &str, rate: f64) -> f64 {
    assert!(
        rate.is_finite() && rate > 0.0,
        "{what}: {rate}/s is not a measurement"
    );
    rate
}

/// The median of the rounds' figures.
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

/// A fresh tenant whose payment callback is `url`, and its signed-in API principal and link.
pub struct Tenant {
    pub principal: pay_domain::tenancy::Principal,
    pub link_uid: LinkUid,
}

impl Tenant {
    pub fn new(pay: &pay_domain::app::Pay, url: &str) -> Tenant {
        let password = Secret::new("bench password 123");
        let email = format!("bench-{}@bench.example", uuid::Uuid::new_v4().simple());
        let boot = pay
            .tenancy()
            .bootstrap("Bench Co", &email, &password)
            .unwrap();
        let login = pay.tenancy().login(&email, &password, "127.0.0.1").unwrap();
        let signed_in = pay
            .tenancy()
            .authenticate_sign_in(login.session_token.expose())
            .unwrap();
        pay.webhooks()
            .put_company_callback(
                &signed_in,
                boot.company_id,
                pay_domain::webhooks::CallbackKind::CompanyPayment,
                url,
            )
            .unwrap();
        let principal = pay
            .tenancy()
            .authenticate_api_key(
                Some(boot.key_id.as_str()),
                boot.key_secret.as_ref().map(|s| s.expose()),
            )
            .unwrap();
        let link = pay
            .links()
            .create_link(
                &principal,
                pay_domain::links::CreateLinkInput {
                    amount: "12.50".into(),
                    ..Default::default()
                },
            )
            .unwrap();
        Tenant {
            principal,
            link_uid: link.uid.clone(),
        }
    }

    /// Queues one event; returns its delivery's id.
    pub fn event(&self, pay: &pay_domain::app::Pay) -> uuid::Uuid {
        pay.webhooks()
            .send_test_event(&self.principal, &self.link_uid)
            .unwrap()[0]
            .id
    }
}

/// Gives PostgreSQL its statistics of the freshly queued outbox, as autovacuum keeps them on a
/// running database (a table created and filled within the last second has none, and the
/// planner then sorts the whole table for each claim instead of reading the due index). SQLite:
/// nothing to do.
pub fn analyze(db_url: &str) {
    use diesel::Connection as _;
    use diesel::RunQueryDsl as _;
    if db_url.starts_with("postgres") {
        let mut conn = diesel::pg::PgConnection::establish(db_url).unwrap();
        diesel::sql_query("ANALYZE webhook_deliveries")
            .execute(&mut conn)
            .unwrap();
    }
}
