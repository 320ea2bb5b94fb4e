//! ES256 verification with precomputed tables, for the keys that sign most proofs.
//!
//! An ECDSA P-256 check computes `u1·G + u2·Q` (SEC 1 v2, section 4.1.4): `G` is the curve's
//! generator, `Q` the client's public key. ring multiplies by `G` from a built-in table but by
//! `Q` with a constant-time windowed multiplication, about three quarters of a verification
//! (perf, 2026-11-29). A plugin signs every
//! proof with one key, so for a key that keeps coming back this module builds a table of
//! `Q`'s multiples once (33 windows of 8 bits, signed digits, 128 affine points each: 264 KiB,
//! about 3 ms) and a check becomes at most 66 mixed point additions. Verification handles only
//! public values (the signature, the key, the message), so variable time is fine.
//!
//! Field arithmetic is the RustCrypto `p256` crate's (`FieldElement`, `Scalar`); the point
//! formulas are the Explicit-Formulas Database's Jacobian `madd-2007-bl` and `dbl-2001-b`
//! (a = -3), with their exceptional cases (a point plus itself or its negation, the point at
//! infinity) handled. Tests check it against ring and against Wycheproof's
//! `ecdsa_secp256r1_sha256_p1363` vectors; a key without a table still goes to ring.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

use p256::elliptic_curve::ops::{Invert, Reduce};
use p256::elliptic_curve::{Field, PrimeField};
use p256::{FieldBytes, FieldElement as Fe, Scalar, U256};
use sha2::{Digest, Sha256};

/// Bits per window.
const W: usize = 8;
/// Windows: 32 of 8 bits, and one more for the carry of the signed recoding.
const WINDOWS: usize = 33;
/// Multiples kept per window: 1..=128 (a negative digit uses the negated point).
const PER: usize = 1 << (W - 1);

/// Tables alive at once, all keys together (at 264 KiB each, about 17 MiB).
pub(crate) const MAX_TABLES: usize = 64;
static LIVE: AtomicUsize = AtomicUsize::new(0);

/// The curve's `b` (y² = x³ - 3x + b).
const B: [u8; 32] = hex32("5ac635d8aa3a93e7b3ebbd55769886bc651d06b0cc53b0f63bce3c3e27d2604b");
/// The generator's coordinates.
const GX: [u8; 32] = hex32("6b17d1f2e12c4247f8bce6e563a440f277037d812deb33a0f4a13945d898c296");
const GY: [u8; 32] = hex32("4fe342e2fe1a7f9b8ee7eb4a7c0f9e162bce33576b315ececbb6406837bf51f5");
/// p - n: an `r` below it may also stand for the x-coordinate `r + n` (x is taken mod n).
const P_MINUS_N: [u8; 32] =
    hex32("000000000000000000000000000000004319055358e8617b0c46353d039cdaae");
/// n, the group's order.
const N: [u8; 32] = hex32("ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551");

const fn hex32(s: &str) -> [u8; 32] {
    let b = s.as_bytes();
    let mut out = [0; 32];
    let mut i = 0;
    while i < 32 {
        out[i] = (nibble(b[2 * i]) << 4) | nibble(b[2 * i + 1]);
        i += 1;
    }
    out
}

const fn nibble(c: u8) -> u8 {
    match c {
        b'0'..=b'9' => c - b'0',
        b'a'..=b'f' => c - b'a' + 10,
        _ => panic!("not hex"),
    }
}

fn fe(bytes: &[u8; 32]) -> Option<Fe> {
    Fe::from_bytes(FieldBytes::from_slice(bytes)).into()
}

/// A point in affine coordinates (never the point at infinity).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Affine {
    x: Fe,
    y: Fe,
}

/// A point in Jacobian coordinates: (X/Z², Y/Z³), or the point at infinity.
#[derive(Clone, Copy, Debug)]
struct Jacobian {
    x: Fe,
    y: Fe,
    z: Fe,
    infinity: bool,
}

impl Jacobian {
    const INFINITY: Jacobian = Jacobian {
        x: Fe::ONE,
        y: Fe::ONE,
        z: Fe::ZERO,
        infinity: true,
    };

    fn from_affine(a: &Affine) -> Jacobian {
        Jacobian {
            x: a.x,
            y: a.y,
            z: Fe::ONE,
            infinity: false,
        }
    }

    /// `dbl-2001-b` (a = -3). P-256 has no point of order two, so y = 0 only at infinity.
    fn double(&self) -> Jacobian {
        if self.infinity || bool::from(self.y.is_zero()) {
            return Jacobian::INFINITY;
        }
        let delta = self.z.square();
        let gamma = self.y.square();
        let beta = self.x * gamma;
        let t = (self.x - delta) * (self.x + delta);
        let alpha = t.double() + t;
        let beta4 = beta.double().double();
        let x = alpha.square() - beta4.double();
        let z = (self.y + self.z).square() - gamma - delta;
        let y = alpha * (beta4 - x) - gamma.square().double().double().double();
        Jacobian {
            x,
            y,
            z,
            infinity: false,
        }
    }

    /// `madd-2007-bl`: self + a, with the cases the formula does not cover (self at infinity,
    /// self = a, self = -a) taken apart.
    fn add_affine(&self, a: &Affine) -> Jacobian {
        if self.infinity {
            return Jacobian::from_affine(a);
        }
        let z1z1 = self.z.square();
        let u2 = a.x * z1z1;
        let s2 = a.y * self.z * z1z1;
        let h = u2 - self.x;
        let s = s2 - self.y;
        if bool::from(h.is_zero()) {
            return if bool::from(s.is_zero()) {
                Jacobian::from_affine(a).double()
            } else {
                Jacobian::INFINITY
            };
        }
        let hh = h.square();
        let i = hh.double().double();
        let j = h * i;
        let r = s.double();
        let v = self.x * i;
        let x = r.square() - j - v.double();
        let y = r * (v - x) - (self.y * j).double();
        let z = (self.z + h).square() - z1z1 - hh;
        Jacobian {
            x,
            y,
            z,
            infinity: false,
        }
    }
}

/// Affine forms of finite points, with one field inversion for all (Montgomery's trick).
fn to_affine(points: &[Jacobian]) -> Option<Vec<Affine>> {
    let mut prefix = Vec::with_capacity(points.len());
    let mut run = Fe::ONE;
    for p in points {
        if p.infinity {
            return None;
        }
        prefix.push(run);
        run *= p.z;
    }
    let mut inv: Fe = Option::from(run.invert())?;
    let mut out = vec![
        Affine {
            x: Fe::ZERO,
            y: Fe::ZERO
        };
        points.len()
    ];
    for (k, p) in points.iter().enumerate().rev() {
        let zi = inv * prefix[k];
        inv *= p.z;
        let zi2 = zi.square();
        out[k] = Affine {
            x: p.x * zi2,
            y: p.y * zi2 * zi,
        };
    }
    Some(out)
}

/// `m · 256^i · P` for every window `i` and `m` in 1..=128.
#[derive(Debug)]
struct Multiples(Vec<Affine>);

impl Multiples {
    fn of(p: Affine) -> Option<Multiples> {
        let mut points = Vec::with_capacity(WINDOWS * PER);
        let mut base = p;
        for _ in 0..WINDOWS {
            let mut window = Vec::with_capacity(PER + 1);
            let mut acc = Jacobian::from_affine(&base);
            window.push(acc);
            for _ in 1..PER {
                acc = acc.add_affine(&base);
                window.push(acc);
            }
            // The next window's base, 256 times this one's, normalised with the others.
            let mut next = Jacobian::from_affine(&base);
            for _ in 0..W {
                next = next.double();
            }
            window.push(next);
            let mut affine = to_affine(&window)?;
            base = affine.pop()?;
            points.extend(affine);
        }
        Some(Multiples(points))
    }

    /// Adds `k · P` to `acc`.
    fn add_product(&self, acc: &mut Jacobian, k: &Scalar) {
        for (i, digit) in signed_digits(k).into_iter().enumerate() {
            let m = usize::from(digit.unsigned_abs());
            if m == 0 {
                continue;
            }
            let point = self.0[i * PER + m - 1];
            *acc = if digit > 0 {
                acc.add_affine(&point)
            } else {
                acc.add_affine(&Affine {
                    x: point.x,
                    y: -point.y,
                })
            };
        }
    }
}

/// `k` as 33 digits in -128..=128, least significant first: k = Σ dᵢ·256ⁱ.
fn signed_digits(k: &Scalar) -> [i16; WINDOWS] {
    let bytes = k.to_repr(); // big-endian
    let mut digits = [0i16; WINDOWS];
    let mut carry = 0i16;
    for (i, digit) in digits.iter_mut().take(32).enumerate() {
        let d = i16::from(bytes[31 - i]) + carry;
        (*digit, carry) = if d >= 128 { (d - 256, 1) } else { (d, 0) };
    }
    digits[32] = carry;
    digits
}

fn generator() -> &'static Multiples {
    static G: OnceLock<Multiples> = OnceLock::new();
    G.get_or_init(|| {
        let g = Affine {
            x: fe(&GX).expect("the generator's x is a field element"),
            y: fe(&GY).expect("the generator's y is a field element"),
        };
        Multiples::of(g).expect("the generator's multiples are finite")
    })
}

/// A public key's table: what makes its checks fast. At most [`MAX_TABLES`] exist at once.
#[derive(Debug)]
pub(crate) struct KeyTable(Multiples);

impl KeyTable {
    /// The table of the public key `x`, `y` (big-endian coordinates), when the key is a point
    /// of the curve and fewer than [`MAX_TABLES`] tables are alive.
    pub(crate) fn build(x: &[u8], y: &[u8]) -> Option<KeyTable> {
        let point = on_curve(x, y)?;
        LIVE.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
            (n < MAX_TABLES).then_some(n + 1)
        })
        .ok()?;
        match Multiples::of(point) {
            Some(m) => Some(KeyTable(m)),
            None => {
                LIVE.fetch_sub(1, Ordering::AcqRel);
                None
            }
        }
    }

    /// Whether `signature` (`r || s`, 64 bytes) is this key's ES256 signature of `message`.
    pub(crate) fn verify(&self, message: &[u8], signature: &[u8]) -> bool {
        verify_prehashed(&self.0, &Sha256::digest(message).into(), signature)
    }
}

impl Drop for KeyTable {
    fn drop(&mut self) {
        LIVE.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The affine point (x, y) when both are field elements and y² = x³ - 3x + b.
fn on_curve(x: &[u8], y: &[u8]) -> Option<Affine> {
    let x = fe(x.try_into().ok()?)?;
    let y = fe(y.try_into().ok()?)?;
    let b = fe(&B)?;
    let rhs = x.square() * x - (x.double() + x) + b;
    (y.square() == rhs).then_some(Affine { x, y })
}

fn scalar(bytes: &[u8]) -> Option<Scalar> {
    let s: Scalar = Option::from(Scalar::from_repr(*FieldBytes::from_slice(bytes)))?;
    (!bool::from(s.is_zero())).then_some(s)
}

/// SEC 1 v2 section 4.1.4 with `e` the message's SHA-256: r and s in [1, n-1], then
/// R = (e/s)·G + (r/s)·Q, refused at infinity, and accepted when x(R) mod n = r.
fn verify_prehashed(q: &Multiples, e: &[u8; 32], signature: &[u8]) -> bool {
    if signature.len() != 64 {
        return false;
    }
    let (r_bytes, s_bytes) = signature.split_at(32);
    let (Some(r), Some(s)) = (scalar(r_bytes), scalar(s_bytes)) else {
        return false;
    };
    let Some(w): Option<Scalar> = s.invert_vartime().into() else {
        return false;
    };
    let e = <Scalar as Reduce<U256>>::reduce_bytes(FieldBytes::from_slice(e));
    let mut acc = Jacobian::INFINITY;
    generator().add_product(&mut acc, &(e * w));
    q.add_product(&mut acc, &(r * w));
    if acc.infinity {
        return false;
    }
    // x(R) = X/Z²; x(R) mod n = r means X = r·Z², or X = (r + n)·Z² when r + n < p.
    let z2 = acc.z.square();
    let Some(r_fe) = r_bytes.try_into().ok().and_then(fe) else {
        return false;
    };
    if r_fe * z2 == acc.x {
        return true;
    }
    if r_bytes < &P_MINUS_N[..] {
        if let Some(n) = fe(&N) {
            return (r_fe + n) * z2 == acc.x;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use p256::elliptic_curve::sec1::ToEncodedPoint;
    use p256::ProjectivePoint;
    use proptest::prelude::*;
    use ring::rand::SystemRandom;
    use ring::signature::{
        EcdsaKeyPair, KeyPair, UnparsedPublicKey, ECDSA_P256_SHA256_FIXED,
        ECDSA_P256_SHA256_FIXED_SIGNING,
    };

    fn ring_verify(point: &[u8], message: &[u8], signature: &[u8]) -> bool {
        UnparsedPublicKey::new(&ECDSA_P256_SHA256_FIXED, point)
            .verify(message, signature)
            .is_ok()
    }

    fn key_pair() -> (EcdsaKeyPair, Vec<u8>) {
        let rng = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
        let kp = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &rng)
            .unwrap();
        let point = kp.public_key().as_ref().to_vec();
        (kp, point)
    }

    fn table_of(point: &[u8]) -> KeyTable {
        KeyTable::build(&point[1..33], &point[33..65]).expect("a table")
    }

    /// The table's product against the p256 crate's own scalar multiplication.
    fn product(m: &Multiples, k: &Scalar) -> Option<(FieldBytes, FieldBytes)> {
        let mut acc = Jacobian::INFINITY;
        m.add_product(&mut acc, k);
        let a = to_affine(&[acc])?.pop()?;
        Some((a.x.to_bytes(), a.y.to_bytes()))
    }

    fn reference(k: &Scalar) -> Option<(FieldBytes, FieldBytes)> {
        let p = (ProjectivePoint::GENERATOR * k)
            .to_affine()
            .to_encoded_point(false);
        Some((*p.x()?, *p.y()?))
    }

    /// The constants are the curve's: n and p - n add up to p, and b and G are those of the
    /// p256 crate's curve.
    #[test]
    fn constants_are_the_curves() {
        let hex = |b: &[u8; 32]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
        let n = U256::from_be_slice(&N);
        let p = U256::from_be_slice(&P_MINUS_N).wrapping_add(&n);
        assert_eq!(
            format!("{p:x}"),
            Fe::MODULUS.trim_start_matches("0x").to_lowercase()
        );
        assert_eq!(
            hex(&N),
            Scalar::MODULUS.trim_start_matches("0x").to_lowercase()
        );
        let g = ProjectivePoint::GENERATOR
            .to_affine()
            .to_encoded_point(false);
        assert_eq!(
            (&GX[..], &GY[..]),
            (&g.x().unwrap()[..], &g.y().unwrap()[..])
        );
        assert!(on_curve(&GX, &GY).is_some(), "b is the curve's");
    }

    #[test]
    fn digits_recompose_the_scalar() {
        for k in [
            Scalar::ZERO,
            Scalar::ONE,
            -Scalar::ONE,
            Scalar::from(255u64),
        ] {
            let digits = signed_digits(&k);
            let mut sum = Scalar::ZERO;
            let mut weight = Scalar::ONE;
            for d in digits {
                let m = Scalar::from(u64::from(d.unsigned_abs()));
                sum += if d < 0 { -(m * weight) } else { m * weight };
                weight *= Scalar::from(256u64);
            }
            assert_eq!(sum, k);
            assert!(digits.iter().all(|d| (-128..=128).contains(d)));
        }
    }

    #[test]
    fn edge_scalars_match_the_reference() {
        let g = generator();
        for k in [
            Scalar::ONE,
            Scalar::from(2u64),
            Scalar::from(128u64),
            Scalar::from(129u64),
            Scalar::from(255u64),
            Scalar::from(256u64),
            -Scalar::ONE,
            -Scalar::from(2u64),
            -Scalar::from(128u64),
        ] {
            assert_eq!(product(g, &k), reference(&k), "{k:?}");
        }
        // 0·G is the point at infinity.
        let mut acc = Jacobian::INFINITY;
        g.add_product(&mut acc, &Scalar::ZERO);
        assert!(acc.infinity);
        // k·G + (n - k)·G: the sum passes through a point plus its negation.
        let k = Scalar::from(12345u64);
        let mut acc = Jacobian::INFINITY;
        g.add_product(&mut acc, &k);
        g.add_product(&mut acc, &-k);
        assert!(acc.infinity);
        // k·G + k·G: through a point plus itself.
        let mut acc = Jacobian::INFINITY;
        g.add_product(&mut acc, &k);
        g.add_product(&mut acc, &k);
        let two_k = to_affine(&[acc]).unwrap().pop().unwrap();
        let (x, y) = reference(&(k + k)).unwrap();
        assert_eq!((two_k.x.to_bytes(), two_k.y.to_bytes()), (x, y));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn products_match_the_reference(bytes in any::<[u8; 32]>()) {
            let k = <Scalar as Reduce<U256>>::reduce_bytes(FieldBytes::from_slice(&bytes));
            prop_assert_eq!(product(generator(), &k), reference(&k));
        }

        /// Random keys and messages: what ring signs verifies; any changed bit of the message
        /// or the signature gives ring's answer (refused).
        #[test]
        fn agrees_with_ring(message in proptest::collection::vec(any::<u8>(), 0..300),
                            flip in 0usize..(64 * 8 + 8)) {
            let (kp, point) = key_pair();
            let table = table_of(&point);
            let rng = SystemRandom::new();
            let sig = kp.sign(&rng, &message).unwrap().as_ref().to_vec();
            prop_assert!(table.verify(&message, &sig));
            prop_assert!(ring_verify(&point, &message, &sig));
            let (mut m, mut s) = (message.clone(), sig.clone());
            if flip < 512 {
                s[flip / 8] ^= 1 << (flip % 8);
            } else {
                m.push((flip - 511) as u8);
            }
            prop_assert_eq!(table.verify(&m, &s), ring_verify(&point, &m, &s));
            prop_assert!(!table.verify(&m, &s));
        }
    }

    /// Signatures whose r or s is out of range, or whose length is wrong, are refused.
    #[test]
    fn out_of_range_signatures_are_refused() {
        let (kp, point) = key_pair();
        let table = table_of(&point);
        let rng = SystemRandom::new();
        let sig = kp.sign(&rng, b"m").unwrap().as_ref().to_vec();
        let mut cases = Vec::new();
        for (at, value) in [
            (0, [0u8; 32]),
            (32, [0u8; 32]),
            (0, N),
            (32, N),
            (0, [0xff; 32]),
        ] {
            let mut s = sig.clone();
            s[at..at + 32].copy_from_slice(&value);
            cases.push(s);
        }
        cases.push(sig[..63].to_vec());
        cases.push([&sig[..], &[0]].concat());
        for s in cases {
            assert!(!table.verify(b"m", &s));
            assert!(!ring_verify(&point, b"m", &s));
        }
        assert!(table.verify(b"m", &sig));
    }

    /// Every test of Wycheproof's `ecdsa_secp256r1_sha256_p1363` (edge-case keys, r and s at
    /// and beyond the order, x(R) beyond n, arithmetic corner cases): the table says what the
    /// vector says, and what ring says.
    #[test]
    fn wycheproof_p1363_vectors() {
        use wycheproof::ecdsa::{TestName, TestSet};
        use wycheproof::TestResult;
        let set = TestSet::load(TestName::EcdsaSecp256r1Sha256P1363).unwrap();
        let (mut checked, mut keys) = (0, 0);
        for group in &set.test_groups {
            let point: &[u8] = &group.key.key;
            // Every group's key is an uncompressed point of the curve.
            assert_eq!((point.len(), point[0]), (65, 4));
            let table = KeyTable::build(&point[1..33], &point[33..65]).expect("a curve point");
            keys += 1;
            for test in &group.tests {
                let ours = table.verify(&test.msg, &test.sig);
                let ring = ring_verify(point, &test.msg, &test.sig);
                assert_eq!(ours, ring, "test {} ({})", test.tc_id, test.comment);
                match test.result {
                    TestResult::Valid => assert!(ours, "test {}", test.tc_id),
                    TestResult::Invalid => assert!(!ours, "test {}", test.tc_id),
                    TestResult::Acceptable => {}
                }
                checked += 1;
            }
        }
        assert_eq!(
            (keys, checked),
            (set.test_groups.len(), set.number_of_tests)
        );
    }

    /// A point off the curve, or a coordinate not below p, has no table.
    #[test]
    fn only_curve_points_get_a_table() {
        let (_, point) = key_pair();
        let mut off = point.clone();
        off[64] ^= 1;
        assert!(KeyTable::build(&off[1..33], &off[33..65]).is_none());
        assert!(KeyTable::build(&[0xff; 32], &point[33..65]).is_none());
        assert!(KeyTable::build(&point[1..33], &point[33..65]).is_some());
    }
}
