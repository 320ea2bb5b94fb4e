DROP TABLE chain_transfers;
DROP TABLE chain_blocks;
DROP TABLE chain_watchers;
DROP TABLE chain_deposit_addresses;
DROP TABLE chain_wallets;
DROP TABLE chain_wallet_keys;
