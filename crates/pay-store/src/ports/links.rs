//! Payment links' store port.

use diesel::prelude::*;
use pay_domain::kernel::idempotency::Completion;
use pay_domain::kernel::ids::{CompanyId, LinkUid};
use pay_domain::kernel::timestamp::Timestamp;
use pay_domain::links::ports::{LinkFilter, PaymentLinkStore};
use pay_domain::links::{LinkStatus, PaymentLink};
use pay_domain::PortResult;

use crate::conn::{write_transaction, AnyConnection};
use crate::rows::corrupt;
use crate::rows::{LinkRow, NewLinkRow};
use crate::schema::grant_webhook_subscriptions;
use crate::schema::payment_links;
use crate::DieselStore;
use pay_domain::kernel::events::EventRecord;

use super::customers::like_escaped;
use super::events::insert_events;

/// Sized once: the links are large, and a growing vector would copy them over and over.
fn links_of(rows: Vec<LinkRow>) -> PortResult<Vec<PaymentLink>> {
    let mut links = Vec::with_capacity(rows.len());
    for row in rows {
        links.push(PaymentLink::try_from(row)?);
    }
    Ok(links)
}

impl DieselStore {
    /// The list narrowed by status or search (the dashboard's): one boxed query over the
    /// company's list index, newest first, stopping at `limit` matches.
    fn found_links(
        &self,
        company: CompanyId,
        filter: LinkFilter,
        limit: i64,
    ) -> PortResult<Vec<PaymentLink>> {
        let pattern = filter
            .search
            .as_deref()
            .map(|q| format!("%{}%", like_escaped(q)));
        let rows: Vec<LinkRow> = self.run("find links", |conn| {
            let mut q = payment_links::table
                .filter(payment_links::company_id.eq(company.to_string()))
                .filter(payment_links::anonymous.eq(false))
                .into_boxed();
            if let Some(grant) = filter.grant_id {
                q = q.filter(payment_links::grant_id.eq(grant.hyphenated().to_string()));
            }
            if let Some(status) = filter.status {
                q = q.filter(payment_links::status.eq(status.as_str()));
            }
            if let Some(p) = &pattern {
                q = q.filter(payment_links::search_text.like(p).escape('\\'));
            }
            q.order((payment_links::created_at.desc(), payment_links::id.desc()))
                .limit(limit)
                .select(LinkRow::as_select())
                .load(conn)
        })?;
        links_of(rows)
    }
}

/// Rows of links written before their search text was (the `link_search` migration): filled
/// in from their payload, a batch at a time. Runs after the migrations at every start; the
/// partial index `payment_links_unsearched` holds only such rows, so once every row has its
/// text the read is of an empty index.
pub(crate) fn fill_search_text(conn: &mut AnyConnection) -> QueryResult<usize> {
    let mut filled = 0;
    loop {
        let rows: Vec<(String, String)> = payment_links::table
            .filter(payment_links::search_text.is_null())
            .select((payment_links::id, payment_links::payload))
            .limit(500)
            .load(conn)?;
        if rows.is_empty() {
            return Ok(filled);
        }
        for (id, payload) in rows {
            // An unreadable payload is refused by every read of the link already; its search
            // text stays empty rather than stopping the start.
            let text = crate::rows::search_text_of(&payload).unwrap_or_default();
            diesel::update(payment_links::table.filter(payment_links::id.eq(&id)))
                .set(payment_links::search_text.eq(text))
                .execute(conn)?;
            filled += 1;
        }
    }
}

impl PaymentLinkStore for DieselStore {
    fn insert_link(&self, link: &PaymentLink, completion: Option<&Completion>) -> PortResult<bool> {
        let row = NewLinkRow::try_from(link)?;
        super::grant_webhooks::write_keyed(self, "insert link", completion, |conn| {
            diesel::insert_into(payment_links::table)
                .values(&row)
                .execute(conn)
                .map(drop)
        })
    }

    fn links(
        &self,
        company: CompanyId,
        filter: LinkFilter,
        limit: usize,
    ) -> PortResult<Vec<PaymentLink>> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        if filter.status.is_some() || filter.search.is_some() {
            return self.found_links(company, filter, limit);
        }
        let rows: Vec<LinkRow> = self.run("list links", |conn| {
            let listed = payment_links::table
                .filter(payment_links::company_id.eq(company.to_string()))
                .filter(payment_links::anonymous.eq(false))
                .order((payment_links::created_at.desc(), payment_links::id.desc()))
                .limit(limit)
                .select(LinkRow::as_select());
            // Two static queries rather than one boxed one: boxed queries skip the prepared
            // statement cache, and this is the hottest read.
            match filter.grant_id {
                None => listed.load(conn),
                Some(grant) => listed
                    .filter(payment_links::grant_id.eq(grant.hyphenated().to_string()))
                    .load(conn),
            }
        })?;
        links_of(rows)
    }

    fn link(&self, company: CompanyId, uid: &LinkUid) -> PortResult<Option<PaymentLink>> {
        let row: Option<LinkRow> = self.run("get link", |conn| {
            payment_links::table
                .filter(payment_links::uid.eq(uid.as_str()))
                .filter(payment_links::company_id.eq(company.to_string()))
                .select(LinkRow::as_select())
                .first(conn)
                .optional()
        })?;
        row.map(PaymentLink::try_from).transpose()
    }

    fn set_link_status(
        &self,
        company: CompanyId,
        uid: &LinkUid,
        from: LinkStatus,
        to: LinkStatus,
        at: Timestamp,
        event: Option<&EventRecord>,
    ) -> PortResult<bool> {
        let set = |conn: &mut AnyConnection| {
            diesel::update(
                payment_links::table
                    .filter(payment_links::company_id.eq(company.to_string()))
                    .filter(payment_links::uid.eq(uid.as_str()))
                    .filter(payment_links::status.eq(from.as_str())),
            )
            .set((
                payment_links::status.eq(to.as_str()),
                payment_links::updated_at.eq(at.unix_millis()),
            ))
            .execute(conn)
        };
        let n = self.write("set link status", |conn| match event {
            // A move that decides nothing else stays one statement.
            None => set(conn),
            Some(e) => write_transaction(conn, |conn| {
                let n = set(conn)?;
                if n == 1 {
                    insert_events(conn, std::slice::from_ref(e))?;
                }
                Ok(n)
            }),
        })?;
        Ok(n == 1)
    }

    fn active_grant_subscription(&self, grant: uuid::Uuid) -> PortResult<Option<uuid::Uuid>> {
        let id: Option<String> = self.run("active grant subscription", |conn| {
            grant_webhook_subscriptions::table
                .filter(grant_webhook_subscriptions::grant_id.eq(grant.hyphenated().to_string()))
                .filter(grant_webhook_subscriptions::secret_sealed.is_not_null())
                .select(grant_webhook_subscriptions::id)
                .first(conn)
                .optional()
        })?;
        id.map(|s| uuid::Uuid::try_parse(&s).map_err(|_| corrupt("grant_webhook_subscriptions.id")))
            .transpose()
    }
}

#[cfg(test)]
mod tests {
    use diesel::sql_types::Text;

    use super::*;
    use crate::testing::TestDb;
    use crate::StoreConfig;

    #[derive(diesel::QueryableByName)]
    struct SqlitePlan {
        #[diesel(sql_type = Text)]
        detail: String,
    }

    #[derive(diesel::QueryableByName)]
    struct PgPlan {
        #[diesel(sql_type = Text, column_name = "QUERY PLAN")]
        line: String,
    }

    /// The list's two queries as the store sends them (company, not anonymous, newest first;
    /// and the same for one grant's links).
    const LIST: &str = "SELECT id FROM payment_links WHERE company_id = 'c' AND anonymous = \
                        false ORDER BY created_at DESC, id DESC LIMIT 200";
    const GRANT_LIST: &str = "SELECT id FROM payment_links WHERE company_id = 'c' AND \
                              anonymous = false AND grant_id = 'g' ORDER BY created_at DESC, \
                              id DESC LIMIT 200";

    /// The dashboard's list by status and search, as `found_links` sends it.
    const FOUND: &str = "SELECT id FROM payment_links WHERE company_id = 'c' AND anonymous = \
                         false AND status = 'paused' AND search_text LIKE '%mug%' ESCAPE '\\' \
                         ORDER BY created_at DESC, id DESC LIMIT 200";

    fn plan(store: &DieselStore, query: &str) -> String {
        store
            .run("plan", |conn| match conn {
                AnyConnection::Sqlite(_) => {
                    Ok(diesel::sql_query(format!("EXPLAIN QUERY PLAN {query}"))
                        .load::<SqlitePlan>(conn)?
                        .into_iter()
                        .map(|p| p.detail)
                        .collect::<Vec<_>>()
                        .join("\n"))
                }
                AnyConnection::Postgresql(_) => {
                    // An empty table is read whole otherwise; the question is which index.
                    diesel::sql_query("SET enable_seqscan = off").execute(conn)?;
                    let lines = diesel::sql_query(format!("EXPLAIN {query}"))
                        .load::<PgPlan>(conn)?
                        .into_iter()
                        .map(|p| p.line)
                        .collect::<Vec<_>>()
                        .join("\n");
                    diesel::sql_query("RESET enable_seqscan").execute(conn)?;
                    Ok(lines)
                }
            })
            .unwrap()
    }

    /// Links written before their search text (the migration's rows) are found once the store
    /// has started again: `migrate` fills the text in from the payload.
    #[test]
    fn a_start_fills_in_the_search_text_of_older_links() {
        use pay_domain::testing::conformance::fixtures::{company, link_value};
        let dbs = [Some(TestDb::sqlite()), TestDb::postgres()];
        for db in dbs.iter().flatten() {
            let store = DieselStore::connect(&StoreConfig {
                url: db.url.clone(),
                max_connections: 1,
            })
            .unwrap();
            store.migrate().unwrap();
            let company = company(&store);
            let mut older = link_value(company);
            older.payload.title = Some("Blue Mug".into());
            older.created_by = pay_domain::links::CreatedBy::ApiKey(
                pay_domain::kernel::ids::PartnerId(uuid::Uuid::now_v7()),
            );
            store.insert_link(&older, None).unwrap();
            let mug = || LinkFilter {
                search: Some("mug".into()),
                ..LinkFilter::default()
            };
            assert_eq!(store.links(company, mug(), 200).unwrap().len(), 1);
            store
                .run("forget", |conn| {
                    diesel::update(
                        payment_links::table.filter(payment_links::id.eq(older.id.to_string())),
                    )
                    .set(payment_links::search_text.eq(None::<String>))
                    .execute(conn)
                })
                .unwrap();
            assert!(store.links(company, mug(), 200).unwrap().is_empty());
            assert_eq!(store.migrate().unwrap(), 0, "no migration ran");
            let found: Vec<_> = store
                .links(company, mug(), 200)
                .unwrap()
                .into_iter()
                .map(|l| l.uid)
                .collect();
            let text: Vec<Option<String>> = store
                .run("read back", |conn| {
                    payment_links::table
                        .filter(payment_links::id.eq(older.id.to_string()))
                        .select(payment_links::search_text)
                        .load(conn)
                })
                .unwrap();
            assert_eq!(found, vec![older.uid], "{:?} {text:?}", store.backend());
        }
    }

    /// Both lists read an index (ascending, backwards) in order: no sort of the company's links
    /// on SQLite; on PostgreSQL the list's index scanned backward, and the grant's own index.
    #[test]
    fn the_lists_read_their_indexes_newest_first() {
        let dbs = [Some(TestDb::sqlite()), TestDb::postgres()];
        for db in dbs.iter().flatten() {
            let store = DieselStore::connect(&StoreConfig {
                url: db.url.clone(),
                max_connections: 1,
            })
            .unwrap();
            store.migrate().unwrap();
            let list = plan(&store, LIST);
            let grant = plan(&store, GRANT_LIST);
            let found = plan(&store, FOUND);
            match store.backend() {
                crate::Backend::Sqlite => {
                    assert!(list.contains("INDEX payment_links_list"), "{list}");
                    // Without statistics SQLite reads the grant's links off the company's list
                    // index (as it did before the indexes were reversed); in order either way.
                    assert!(
                        grant.contains("INDEX payment_links_grant_list")
                            || grant.contains("INDEX payment_links_list"),
                        "{grant}"
                    );
                    // The search walks the company's list index newest first, filtering.
                    assert!(found.contains("INDEX payment_links_list"), "{found}");
                    for p in [&list, &grant, &found] {
                        assert!(!p.contains("TEMP B-TREE"), "{p}");
                    }
                }
                crate::Backend::Postgres => {
                    assert!(
                        list.contains("Index Only Scan Backward using payment_links_list")
                            || list.contains("Index Scan Backward using payment_links_list"),
                        "{list}"
                    );
                    assert!(grant.contains("payment_links_grant_list"), "{grant}");
                    assert!(
                        found.contains("Scan Backward using payment_links_list")
                            && !found.contains("Sort"),
                        "{found}"
                    );
                }
            }
        }
    }
}
