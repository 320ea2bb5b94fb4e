-- Private evidence files of bookkeeping expenses: the metadata (the bytes are in the file
-- store under `evidence/<company_id>/<id>`). Same columns and indexes on SQLite and PostgreSQL
-- (ids TEXT, instants BIGINT unix milliseconds).
CREATE TABLE evidence_files (
    id TEXT PRIMARY KEY NOT NULL,
    company_id TEXT NOT NULL REFERENCES companies(id),
    -- Sanitised (`bookkeeping::sanitize_filename`).
    filename TEXT NOT NULL,
    -- Sniffed from the bytes: application/pdf, image/png, image/jpeg, image/webp.
    content_type TEXT NOT NULL,
    size BIGINT NOT NULL,
    -- Lower-case hex SHA-256 of the bytes.
    sha256 TEXT NOT NULL,
    -- pending (row written, bytes maybe not), stored, deleting (claimed by the janitor).
    status TEXT NOT NULL,
    -- The expense that links it; an expense links a file by setting this in the same
    -- transaction as its save (so one file belongs to one expense at most).
    expense_id TEXT NULL REFERENCES expenses(id),
    -- Real time.
    uploaded_at BIGINT NOT NULL,
    -- api_key:<partner id>, user:<user id>, grant:<grant id>
    uploaded_by TEXT NOT NULL,
    -- Real time since when no expense links it (NULL while linked): deleted a day later.
    orphan_since BIGINT NULL
);
-- An expense's files.
CREATE INDEX evidence_files_expense ON evidence_files (expense_id);
-- The janitor's oldest orphans.
CREATE INDEX evidence_files_orphans ON evidence_files (orphan_since) WHERE expense_id IS NULL;
