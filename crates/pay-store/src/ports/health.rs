//! Readiness and housekeeping.

use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use pay_domain::kernel::ports::HealthCheck;
use pay_domain::kernel::timestamp::Timestamp;
use pay_domain::PortResult;

use crate::conn::write_transaction;
use crate::schema::{browser_sessions, rate_hits};
use crate::DieselStore;

impl HealthCheck for DieselStore {
    fn ping(&self) -> PortResult<()> {
        self.run("ping", |conn| conn.batch_execute("SELECT 1"))
    }

    fn prune(&self, sessions_before: Timestamp, hits_before: Timestamp) -> PortResult<u64> {
        let n = self.write("prune", |conn| {
            write_transaction(conn, |conn| {
                let sessions = diesel::delete(
                    browser_sessions::table
                        .filter(browser_sessions::expires_at.lt(sessions_before.unix_millis())),
                )
                .execute(conn)?;
                let hits = diesel::delete(
                    rate_hits::table.filter(rate_hits::at.lt(hits_before.unix_millis())),
                )
                .execute(conn)?;
                Ok(sessions + hits)
            })
        })?;
        Ok(n as u64)
    }
}
