-- The dashboard's link list searches a link's order id, title and customer e-mail: the three
-- in lower case, apart by a control character (PaymentLinkPayload::search_text), written with
-- the link. Rows written before this step are filled in by the store after the migrations
-- (the payload is JSON text, read by the same decoder as every read). The search reads the
-- company's list index newest first and stops at the list's 200 rows: no index of its own
-- (a substring match cannot use one). Same SQL on SQLite and PostgreSQL.
ALTER TABLE payment_links ADD COLUMN search_text TEXT NULL;
-- The rows still to fill: the store's start-up read of them is a read of this (then empty)
-- index, not a scan of every link.
CREATE INDEX payment_links_unsearched ON payment_links (id) WHERE search_text IS NULL;
