//! Native plugin installations (room for a later issue), on top of OAuth grants.
