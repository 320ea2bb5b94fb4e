//! Customers (room for the next issue): contacts and the signed self-service portal.
