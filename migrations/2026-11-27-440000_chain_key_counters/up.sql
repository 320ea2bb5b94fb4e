-- The next child index of each key, whichever companies set it (issue 31): two companies with
-- the same xpub (two brands on one wallet) must never be handed the same address, so the
-- index is taken from one row per (family, xpub). `chain_wallet_keys.next_index` stays per
-- company: one past the highest child this company was handed (what its `nextIndex` shows).
-- Same SQL on SQLite and PostgreSQL.
CREATE TABLE chain_key_counters (
    family TEXT NOT NULL,
    xpub TEXT NOT NULL,
    next_index BIGINT NOT NULL,
    PRIMARY KEY (family, xpub)
);
-- Existing keys continue after the highest index any company took from them.
INSERT INTO chain_key_counters (family, xpub, next_index)
SELECT family, xpub, MAX(next_index) FROM chain_wallet_keys GROUP BY family, xpub;
