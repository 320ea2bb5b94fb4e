-- The chain processor (`PAY_PROCESSOR=onchain`): the merchants' extended public keys, the
-- deposit addresses handed out, and the watcher's state per chain. Same SQL on SQLite and
-- PostgreSQL.

-- Every key a company ever set, with the next child index of its external chain `0/*`: a key
-- set again continues where it stopped, so no address is handed out twice.
CREATE TABLE chain_wallet_keys (
    company_id TEXT NOT NULL REFERENCES companies(id),
    family TEXT NOT NULL,
    xpub TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    next_index BIGINT NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (company_id, family, xpub)
);

-- The company's current key per family (`evm` only for now).
CREATE TABLE chain_wallets (
    company_id TEXT NOT NULL REFERENCES companies(id),
    family TEXT NOT NULL,
    xpub TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (company_id, family)
);

-- A session's deposit address: child `0/<derivation_index>` of `xpub` (lower-case `address`
-- for matching), watched on `chain_code` until `watch_until` (real time, ms).
CREATE TABLE chain_deposit_addresses (
    session_id TEXT PRIMARY KEY NOT NULL,
    company_id TEXT NOT NULL REFERENCES companies(id),
    chain_code TEXT NOT NULL,
    asset_identifier TEXT NOT NULL,
    xpub TEXT NOT NULL,
    derivation_index BIGINT NOT NULL,
    address TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    watch_until BIGINT NOT NULL,
    UNIQUE (company_id, xpub, derivation_index)
);
CREATE INDEX chain_deposit_addresses_watch ON chain_deposit_addresses (chain_code, watch_until);
CREATE INDEX chain_deposit_addresses_address ON chain_deposit_addresses (address);

-- One row per chain: which instance watches it (a lease on real time, ms), and the node's
-- head as last seen (for `/readyz`).
CREATE TABLE chain_watchers (
    chain_code TEXT PRIMARY KEY NOT NULL,
    lease_holder TEXT NULL,
    lease_until BIGINT NULL,
    head_number BIGINT NULL,
    head_seen_at BIGINT NULL,
    read_number BIGINT NULL,
    failing_since BIGINT NULL
);

-- The recent blocks the watcher read, to find where a reorg forked. The highest is the
-- progress: a restart resumes after it.
CREATE TABLE chain_blocks (
    chain_code TEXT NOT NULL,
    block_number BIGINT NOT NULL,
    block_hash TEXT NOT NULL,
    PRIMARY KEY (chain_code, block_number)
);

-- Every transfer seen to or from a deposit address: `log_index` -1 for the native coin.
-- `direction` `incoming` (to a session's address) or `outgoing` (from one); `status` `seen`
-- (in a block, not yet final), `final` (at its confirmations) or `dropped` (left the chain
-- before). Unique per (chain, transaction, log, direction): a replay changes nothing.
CREATE TABLE chain_transfers (
    chain_code TEXT NOT NULL,
    tx_hash TEXT NOT NULL,
    log_index BIGINT NOT NULL,
    direction TEXT NOT NULL,
    company_id TEXT NOT NULL REFERENCES companies(id),
    session_id TEXT NOT NULL,
    address TEXT NOT NULL,
    counterparty TEXT NOT NULL,
    asset_identifier TEXT NOT NULL,
    units TEXT NOT NULL,
    block_number BIGINT NOT NULL,
    block_hash TEXT NOT NULL,
    status TEXT NOT NULL,
    seen_at BIGINT NOT NULL,
    PRIMARY KEY (chain_code, tx_hash, log_index, direction)
);
CREATE INDEX chain_transfers_session ON chain_transfers (session_id);
CREATE INDEX chain_transfers_open ON chain_transfers (chain_code, status, block_number);
