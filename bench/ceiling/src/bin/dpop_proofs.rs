//! DPoP proofs for the DPoP benchmark (`bench/dpop.py`), and its ceiling: a bare loop verifying
//! the same ES256 proofs with `pay_dpop::verify_proof`, on the same cores.
//!
//! ```text
//! dpop-proofs key FILE                          new P-256 key (PKCS#8, base64) into FILE
//! dpop-proofs jkt FILE                          the key's RFC 7638 thumbprint (what a token binds)
//! dpop-proofs one FILE HTM HTU [TOKEN]          one proof, with `ath` of TOKEN when given
//! dpop-proofs many FILE HTM HTU TOKEN N OUT     N proofs with `ath` of TOKEN, one per line
//! dpop-proofs verify PROOFS HTM HTU TOKEN T     every proof of PROOFS verified on T threads,
//!                                               each then noted as bound (as the server notes
//!                                               a proof let in for its bound token, so the key
//!                                               gets its ES256 table after 64):
//!                                               {"verified": n, "seconds": s, "per_sec": r}
//! dpop-proofs cost FILE N                       on one thread, CPU microseconds per ES256
//!                                               signature check alone (ring), per whole
//!                                               `verify_proof` of a key without a table, and of
//!                                               one with its table (the thread's own CPU time,
//!                                               so a busy machine does not inflate it)
//! ```

use std::io::Write;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine;
use ring::rand::{SecureRandom, SystemRandom};
use ring::signature::{
    EcdsaKeyPair, KeyPair, UnparsedPublicKey, ECDSA_P256_SHA256_FIXED,
    ECDSA_P256_SHA256_FIXED_SIGNING,
};
use serde_json::json;

fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

/// Nanoseconds this thread has run on a CPU (Linux: the first field of its schedstat).
fn thread_cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

fn load(file: &str) -> EcdsaKeyPair {
    let pkcs8 = STANDARD
        .decode(std::fs::read_to_string(file).unwrap().trim())
        .unwrap();
    EcdsaKeyPair::from_pkcs8(
        &ECDSA_P256_SHA256_FIXED_SIGNING,
        &pkcs8,
        &SystemRandom::new(),
    )
    .unwrap()
}

/// One signed proof; `ath` of `token` when given.
fn proof(
    key: &EcdsaKeyPair,
    rng: &SystemRandom,
    htm: &str,
    htu: &str,
    token: Option<&str>,
) -> String {
    let point = key.public_key().as_ref();
    let jwk = json!({"kty": "EC", "crv": "P-256",
        "x": URL_SAFE_NO_PAD.encode(&point[1..33]), "y": URL_SAFE_NO_PAD.encode(&point[33..65])});
    let mut jti = [0u8; 16];
    rng.fill(&mut jti).unwrap();
    let mut claims =
        json!({"jti": URL_SAFE_NO_PAD.encode(jti), "htm": htm, "htu": htu, "iat": now()});
    if let Some(t) = token {
        claims["ath"] = json!(pay_dpop::access_token_hash(t));
    }
    let header = json!({"typ": "dpop+jwt", "alg": "ES256", "jwk": jwk});
    let input = format!(
        "{}.{}",
        URL_SAFE_NO_PAD.encode(header.to_string()),
        URL_SAFE_NO_PAD.encode(claims.to_string())
    );
    let sig = key.sign(rng, input.as_bytes()).unwrap();
    format!("{input}.{}", URL_SAFE_NO_PAD.encode(sig.as_ref()))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    let rng = SystemRandom::new();
    match a.as_slice() {
        ["key", file] => {
            let pkcs8 =
                EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
            std::fs::write(file, STANDARD.encode(pkcs8.as_ref())).unwrap();
        }
        ["jkt", file] => {
            let (htu, now) = ("https://jkt.example/", now());
            let one = proof(&load(file), &rng, "GET", htu, None);
            let check = pay_dpop::ProofCheck::new("GET", htu, now);
            println!("{}", pay_dpop::verify_proof(&[&one], &check).unwrap().jkt);
        }
        ["one", file, htm, htu] => println!("{}", proof(&load(file), &rng, htm, htu, None)),
        ["one", file, htm, htu, token] => {
            println!("{}", proof(&load(file), &rng, htm, htu, Some(token)))
        }
        ["many", file, htm, htu, token, n, out] => {
            let key = load(file);
            let mut w = std::io::BufWriter::new(std::fs::File::create(out).unwrap());
            for _ in 0..n.parse::<usize>().unwrap() {
                writeln!(w, "{}", proof(&key, &rng, htm, htu, Some(token))).unwrap();
            }
        }
        ["verify", file, htm, htu, token, threads] => {
            let text = std::fs::read_to_string(file).unwrap();
            let proofs: Vec<&str> = text.lines().collect();
            let threads: usize = threads.parse().unwrap();
            let started = Instant::now();
            let verified: usize = std::thread::scope(|s| {
                let handles: Vec<_> = proofs
                    .chunks(proofs.len().div_ceil(threads))
                    .map(|chunk| {
                        s.spawn(move || {
                            let check =
                                pay_dpop::ProofCheck::new(htm, htu, now()).with_access_token(token);
                            chunk
                                .iter()
                                .filter(|p| {
                                    let ok = pay_dpop::verify_proof(&[**p], &check).is_ok();
                                    if ok {
                                        pay_dpop::note_bound_proof(p);
                                    }
                                    ok
                                })
                                .count()
                        })
                    })
                    .collect();
                handles.into_iter().map(|h| h.join().unwrap()).sum()
            });
            let seconds = started.elapsed().as_secs_f64();
            assert_eq!(verified, proofs.len(), "every proof verifies");
            println!(
                "{}",
                json!({"verified": verified, "seconds": seconds, "per_sec": verified as f64 / seconds})
            );
        }
        ["cost", file, n] => {
            let (key, n) = (load(file), n.parse::<u32>().unwrap());
            let htu = "https://cost.example/x";
            // The signature alone: what ring does for one proof.
            let one = proof(&key, &rng, "GET", htu, Some("t"));
            let (input, sig) = one.rsplit_once('.').unwrap();
            let sig = URL_SAFE_NO_PAD.decode(sig).unwrap();
            let public =
                UnparsedPublicKey::new(&ECDSA_P256_SHA256_FIXED, key.public_key().as_ref());
            let started = thread_cpu_ns();
            for _ in 0..n {
                public.verify(input.as_bytes(), &sig).unwrap();
            }
            let signature_us = (thread_cpu_ns() - started) as f64 / 1e3 / f64::from(n);
            // The whole proof check, each proof different (as the server sees them).
            let proofs: Vec<String> = (0..n)
                .map(|_| proof(&key, &rng, "GET", htu, Some("t")))
                .collect();
            let check = pay_dpop::ProofCheck::new("GET", htu, now()).with_access_token("t");
            let started = thread_cpu_ns();
            for p in &proofs {
                pay_dpop::verify_proof(&[p.as_str()], &check).unwrap();
            }
            let proof_us = (thread_cpu_ns() - started) as f64 / 1e3 / f64::from(n);
            // The same key once its proofs were let in for a bound token: its table.
            // (A proof is noted by its header, the same for every proof of the key; 64 notes
            // give the key its table.)
            for _ in 0..64 {
                pay_dpop::note_bound_proof(&proofs[0]);
            }
            let proofs: Vec<String> = (0..n)
                .map(|_| proof(&key, &rng, "GET", htu, Some("t")))
                .collect();
            let started = thread_cpu_ns();
            for p in &proofs {
                pay_dpop::verify_proof(&[p.as_str()], &check).unwrap();
            }
            let table_us = (thread_cpu_ns() - started) as f64 / 1e3 / f64::from(n);
            println!(
                "{}",
                json!({"n": n, "es256_verify_us": signature_us, "verify_proof_us": proof_us,
                       "verify_proof_table_us": table_us})
            );
        }
        _ => {
            eprintln!("usage: see the comment at the top of bench/ceiling/src/bin/dpop_proofs.rs");
            std::process::exit(2);
        }
    }
}
