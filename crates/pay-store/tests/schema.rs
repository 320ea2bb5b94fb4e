//! Both backends end at the same schema after the one migration set: the same tables, columns
//! (type, nullability, default), primary keys, unique constraints, foreign keys and indexes
//! (columns, uniqueness, partial condition), read from each database's own catalogue.

mod common;

use std::collections::BTreeSet;

use diesel::sql_types::{BigInt, Nullable, Text};
use diesel::{Connection, QueryableByName, RunQueryDsl};

/// One fact of a schema, written the same way for both backends.
type Facts = BTreeSet<String>;

#[derive(QueryableByName)]
struct Name {
    #[diesel(sql_type = Text)]
    name: String,
}

#[derive(QueryableByName)]
struct SqliteColumn {
    #[diesel(sql_type = Text)]
    name: String,
    #[diesel(sql_type = Text)]
    r#type: String,
    #[diesel(sql_type = BigInt)]
    notnull: i64,
    #[diesel(sql_type = Nullable<Text>)]
    dflt_value: Option<String>,
    #[diesel(sql_type = BigInt)]
    pk: i64,
}

#[derive(QueryableByName)]
struct SqliteIndex {
    #[diesel(sql_type = Text)]
    name: String,
    #[diesel(sql_type = BigInt)]
    unique: i64,
    #[diesel(sql_type = Text)]
    origin: String,
    #[diesel(sql_type = BigInt)]
    partial: i64,
}

#[derive(QueryableByName)]
struct SqliteForeignKey {
    #[diesel(sql_type = Text)]
    table: String,
    #[diesel(sql_type = Text)]
    from: String,
    #[diesel(sql_type = Text)]
    to: String,
}

#[derive(QueryableByName)]
struct Row4 {
    #[diesel(sql_type = Text)]
    a: String,
    #[diesel(sql_type = Text)]
    b: String,
    #[diesel(sql_type = Text)]
    c: String,
    #[diesel(sql_type = Nullable<Text>)]
    d: Option<String>,
}

/// `BIGINT` and `bigint`, `TEXT` and `text`: the declared type as both catalogues agree on it.
fn ty(declared: &str) -> String {
    match declared.to_ascii_lowercase().as_str() {
        "int" | "integer" => "integer".into(),
        other => other.into(),
    }
}

/// A default as written (`0`, `'x'`), without PostgreSQL's casts (`'x'::text`).
fn default(d: Option<String>) -> String {
    let d = d.unwrap_or_default();
    d.split("::").next().unwrap_or_default().to_owned()
}

/// The column list of `CREATE [UNIQUE] INDEX ... ON t (a, b) [WHERE ...]`, and its condition.
fn index_shape(sql: &str) -> (String, String) {
    let open = sql.find('(').unwrap();
    let close = open + sql[open..].find(')').unwrap();
    let columns = sql[open + 1..close]
        .split(',')
        .map(|c| c.trim().trim_matches('"').to_owned())
        .collect::<Vec<_>>()
        .join(",");
    let condition = match sql.to_ascii_uppercase().find(" WHERE ") {
        Some(at) => sql[at + 7..]
            .chars()
            .filter(|c| !c.is_whitespace() && *c != '(' && *c != ')')
            .collect(),
        None => String::new(),
    };
    (columns, condition)
}

fn sqlite_facts(path: &str) -> Facts {
    let mut c = diesel::SqliteConnection::establish(path).unwrap();
    let tables: Vec<Name> = diesel::sql_query(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' \
         AND name <> '__diesel_schema_migrations' ORDER BY name",
    )
    .load(&mut c)
    .unwrap();
    let mut facts = Facts::new();
    for t in tables.iter().map(|t| t.name.as_str()) {
        facts.insert(format!("table {t}"));
        let columns: Vec<SqliteColumn> = diesel::sql_query(format!(
            "SELECT name, type, \"notnull\", dflt_value, pk FROM pragma_table_info('{t}')"
        ))
        .load(&mut c)
        .unwrap();
        let mut pk: Vec<(i64, String)> = Vec::new();
        for col in columns {
            facts.insert(format!(
                "column {t}.{} {} {} default={}",
                col.name,
                ty(&col.r#type),
                if col.notnull == 1 || col.pk > 0 {
                    "not null"
                } else {
                    "null"
                },
                default(col.dflt_value)
            ));
            if col.pk > 0 {
                pk.push((col.pk, col.name));
            }
        }
        pk.sort();
        let pk: Vec<String> = pk.into_iter().map(|(_, n)| n).collect();
        facts.insert(format!("primary key {t} ({})", pk.join(",")));
        let indexes: Vec<SqliteIndex> = diesel::sql_query(format!(
            "SELECT name, \"unique\", origin, partial FROM pragma_index_list('{t}')"
        ))
        .load(&mut c)
        .unwrap();
        for ix in indexes {
            // Key columns in order, with their direction (PostgreSQL prints `DESC`).
            let cols: Vec<Name> = diesel::sql_query(format!(
                "SELECT name || CASE WHEN \"desc\" = 1 THEN ' DESC' ELSE '' END AS name \
                 FROM pragma_index_xinfo('{}') WHERE key = 1 ORDER BY seqno",
                ix.name
            ))
            .load(&mut c)
            .unwrap();
            let cols: Vec<String> = cols.into_iter().map(|n| n.name).collect();
            match ix.origin.as_str() {
                "pk" => {}
                "u" => {
                    facts.insert(format!("unique {t} ({})", cols.join(",")));
                }
                _ => {
                    let sql: Vec<Name> = diesel::sql_query(format!(
                        "SELECT sql AS name FROM sqlite_master WHERE type = 'index' AND name = '{}'",
                        ix.name
                    ))
                    .load(&mut c)
                    .unwrap();
                    let (_, condition) = index_shape(&sql[0].name);
                    assert_eq!(ix.partial == 1, !condition.is_empty());
                    facts.insert(format!(
                        "index {} on {t} ({}) unique={} where={condition}",
                        ix.name,
                        cols.join(","),
                        ix.unique == 1
                    ));
                }
            }
        }
        let fks: Vec<SqliteForeignKey> = diesel::sql_query(format!(
            "SELECT \"table\", \"from\", \"to\" FROM pragma_foreign_key_list('{t}')"
        ))
        .load(&mut c)
        .unwrap();
        for fk in fks {
            facts.insert(format!(
                "foreign key {t}.{} -> {}.{}",
                fk.from, fk.table, fk.to
            ));
        }
    }
    facts
}

fn postgres_facts(url: &str) -> Facts {
    let mut c = diesel::PgConnection::establish(url).unwrap();
    let mut facts = Facts::new();
    let tables: Vec<Name> = diesel::sql_query(
        "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' \
         AND table_type = 'BASE TABLE' AND table_name <> '__diesel_schema_migrations'",
    )
    .load(&mut c)
    .unwrap();
    for t in &tables {
        facts.insert(format!("table {}", t.name));
    }
    let columns: Vec<Row4> = diesel::sql_query(
        "SELECT table_name || '.' || column_name AS a, data_type AS b, is_nullable AS c, \
         column_default AS d FROM information_schema.columns WHERE table_schema = 'public' \
         AND table_name <> '__diesel_schema_migrations'",
    )
    .load(&mut c)
    .unwrap();
    for col in columns {
        facts.insert(format!(
            "column {} {} {} default={}",
            col.a,
            ty(&col.b),
            if col.c == "NO" { "not null" } else { "null" },
            default(col.d)
        ));
    }
    // Keys and constraints by the catalogue's own words: `PRIMARY KEY (a, b)`, `UNIQUE (a)`,
    // `FOREIGN KEY (a) REFERENCES t(b) [DEFERRABLE ...]`.
    let constraints: Vec<Row4> = diesel::sql_query(
        "SELECT conrelid::regclass::text AS a, contype::text AS b, \
         pg_get_constraintdef(oid) AS c, NULL::text AS d FROM pg_constraint \
         WHERE connamespace = 'public'::regnamespace \
         AND conrelid <> '__diesel_schema_migrations'::regclass",
    )
    .load(&mut c)
    .unwrap();
    for k in constraints {
        let t = k.a;
        let cols = |def: &str| index_shape(def).0;
        match k.b.as_str() {
            "p" => {
                facts.insert(format!("primary key {t} ({})", cols(&k.c)));
            }
            "u" => {
                facts.insert(format!("unique {t} ({})", cols(&k.c)));
            }
            "f" => {
                let (from, _) = index_shape(&k.c);
                let refs = &k.c[k.c.find("REFERENCES ").unwrap() + 11..];
                let (to_table, rest) = refs.split_once('(').unwrap();
                let to = rest.split(')').next().unwrap();
                facts.insert(format!("foreign key {t}.{from} -> {to_table}.{to}"));
            }
            other => panic!("a constraint of kind {other} on {t}: {}", k.c),
        }
    }
    let indexes: Vec<Row4> = diesel::sql_query(
        "SELECT i.indexname AS a, i.tablename AS b, i.indexdef AS c, NULL::text AS d \
         FROM pg_indexes i WHERE i.schemaname = 'public' AND NOT EXISTS (SELECT 1 FROM \
         pg_constraint k WHERE k.conname = i.indexname)",
    )
    .load(&mut c)
    .unwrap();
    for ix in indexes {
        if ix.b == "__diesel_schema_migrations" {
            continue;
        }
        let (cols, condition) = index_shape(&ix.c);
        facts.insert(format!(
            "index {} on {} ({cols}) unique={} where={condition}",
            ix.a,
            ix.b,
            ix.c.starts_with("CREATE UNIQUE")
        ));
    }
    facts
}

#[test]
fn both_backends_end_at_the_same_schema() {
    let sqlite = pay_store::testing::TestDb::sqlite();
    common::open(&sqlite.url);
    let lite = sqlite_facts(sqlite.url.strip_prefix("sqlite://").unwrap());
    assert!(lite.contains("table payment_links"), "{lite:#?}");
    assert!(
        lite.iter().any(|f| f.starts_with("foreign key")),
        "{lite:#?}"
    );
    assert!(
        lite.iter()
            .any(|f| f.contains("where=test_clock_offset_ms>0")),
        "{lite:#?}"
    );
    let Some(pg) = pay_store::testing::TestDb::postgres() else {
        return;
    };
    common::open(&pg.url);
    let postgres = postgres_facts(&pg.url);
    let only_sqlite: Vec<&String> = lite.difference(&postgres).collect();
    let only_postgres: Vec<&String> = postgres.difference(&lite).collect();
    assert!(
        only_sqlite.is_empty() && only_postgres.is_empty(),
        "only on SQLite: {only_sqlite:#?}\nonly on PostgreSQL: {only_postgres:#?}"
    );
}

/// diesel keys a migration by the date-time before its first underscore: two folders with the
/// same one would apply one and fail on (or skip) the other. Branches that each add one on the
/// same day are the usual way to get there.
#[test]
fn migration_versions_are_unique() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../migrations");
    let mut seen = BTreeSet::new();
    let mut count = 0;
    for entry in std::fs::read_dir(&dir).expect("the migrations folder") {
        let name = entry.expect("a folder entry").file_name();
        let name = name.to_string_lossy().into_owned();
        if name.starts_with('.') || name.starts_with("00000000000000") {
            continue;
        }
        let version = name.split('_').next().unwrap_or_default().to_owned();
        assert!(
            seen.insert(version.clone()),
            "two migrations share version {version}: {name}"
        );
        count += 1;
    }
    assert!(
        count >= 10,
        "read {count} migrations from {}",
        dir.display()
    );
}

/// Diesel keys a migration by the version before the folder name's first `_`; two folders of
/// one version make it run only one of them, silently (a table went missing that way once).
#[test]
fn every_migration_has_its_own_version() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../migrations");
    let mut seen = BTreeSet::new();
    let mut count = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let entry = entry.unwrap();
        if !entry.file_type().unwrap().is_dir() {
            continue;
        }
        let name = entry.file_name().into_string().unwrap();
        let version = name.split('_').next().unwrap().replace('-', "");
        assert!(
            seen.insert(version.clone()),
            "migration version {version} is used by more than one folder ({name})"
        );
        count += 1;
    }
    assert!(
        count > 10,
        "read only {count} migrations from {}",
        dir.display()
    );
}
