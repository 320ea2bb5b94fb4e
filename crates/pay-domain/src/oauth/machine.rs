//! The one status machine of OAuth's one-time credentials: an authorization code and a
//! refresh token are each used once. A second use is a replay: it revokes the whole family
//! the first use issued (RFC 9700 sections 2.1.1 and 4.14.2).

/// Where a code or refresh token stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CredentialState {
    /// Not used yet, not revoked, not expired.
    Live,
    /// Redeemed (code) or rotated (refresh token) by the one use that won.
    Used,
    /// Its family or grant was revoked.
    Revoked,
    /// Past its lifetime, never used.
    Expired,
}

/// What happens to a code or refresh token.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CredentialEvent {
    /// Redeemed or rotated.
    Use,
    /// Revoked (RFC 7009, a replay elsewhere in the family, a disconnect).
    Revoke,
}

/// The decision for one event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CredentialMove {
    /// Apply it: write `to` (by compare-and-set on the state being still `from`).
    Move {
        from: CredentialState,
        to: CredentialState,
    },
    /// A second use: refuse it and revoke the family of the first.
    Replay,
    /// Refuse, writing nothing (`invalid_grant`).
    Refuse,
    /// Nothing to do (revoking what is already dead: RFC 7009 answers OK all the same).
    Nothing,
}

/// The whole table.
pub fn transition(from: CredentialState, event: CredentialEvent) -> CredentialMove {
    use CredentialEvent as E;
    use CredentialState as S;
    match (from, event) {
        (S::Live, E::Use) => CredentialMove::Move { from, to: S::Used },
        (S::Used, E::Use) => CredentialMove::Replay,
        (S::Revoked | S::Expired, E::Use) => CredentialMove::Refuse,
        (S::Live | S::Used, E::Revoke) => CredentialMove::Move {
            from,
            to: S::Revoked,
        },
        (S::Revoked | S::Expired, E::Revoke) => CredentialMove::Nothing,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use CredentialEvent as E;
    use CredentialMove as M;
    use CredentialState as S;

    #[test]
    fn the_whole_table() {
        let table = [
            (
                S::Live,
                E::Use,
                M::Move {
                    from: S::Live,
                    to: S::Used,
                },
            ),
            (S::Used, E::Use, M::Replay),
            (S::Revoked, E::Use, M::Refuse),
            (S::Expired, E::Use, M::Refuse),
            (
                S::Live,
                E::Revoke,
                M::Move {
                    from: S::Live,
                    to: S::Revoked,
                },
            ),
            (
                S::Used,
                E::Revoke,
                M::Move {
                    from: S::Used,
                    to: S::Revoked,
                },
            ),
            (S::Revoked, E::Revoke, M::Nothing),
            (S::Expired, E::Revoke, M::Nothing),
        ];
        assert_eq!(table.len(), 4 * 2, "every state and event once");
        for (from, event, expect) in table {
            assert_eq!(transition(from, event), expect, "{from:?} {event:?}");
        }
    }
}
