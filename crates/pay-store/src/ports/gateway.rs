//! `FormKeyStore` on `DieselStore`: the gateway form finds its integration by the public form
//! key (`form_key_id` is UNIQUE). Not cached: a form post is a customer's click, not the API's
//! hot path, and a key disabled on any instance must stop taking forms at once.

use diesel::prelude::*;
use pay_domain::kernel::ids::FormKeyId;
use pay_domain::links::gateway::FormKeyStore;
use pay_domain::tenancy::keys::Integration;
use pay_domain::PortResult;

use crate::rows::IntegrationRow;
use crate::schema::integrations;
use crate::DieselStore;

impl FormKeyStore for DieselStore {
    fn integration_by_form_key(&self, key: &FormKeyId) -> PortResult<Option<Integration>> {
        let row: Option<IntegrationRow> = self.run("integration by form key", |conn| {
            integrations::table
                .filter(integrations::form_key_id.eq(key.as_str()))
                .select(IntegrationRow::as_select())
                .first(conn)
                .optional()
        })?;
        row.map(Integration::try_from).transpose()
    }
}
