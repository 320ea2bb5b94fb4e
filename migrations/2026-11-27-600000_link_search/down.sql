DROP INDEX payment_links_unsearched;
ALTER TABLE payment_links DROP COLUMN search_text;
