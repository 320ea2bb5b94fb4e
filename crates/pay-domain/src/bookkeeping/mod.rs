//! Bookkeeping (room for the next issue): wallet activity, one expense per outgoing transfer,
//! private evidence files.
