DROP INDEX payment_links_grant_list;
CREATE INDEX payment_links_grant_list
    ON payment_links (company_id, grant_id, created_at DESC, id DESC);
DROP INDEX payment_links_list;
CREATE INDEX payment_links_list
    ON payment_links (company_id, anonymous, created_at DESC, id DESC);
