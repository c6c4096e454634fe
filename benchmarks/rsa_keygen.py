"""Why the corpus has no RSA keys: a deterministic RSA key costs a prime search (a script, not a test).

    uv run python -m benchmarks.rsa_keygen [--keys 20]

An RSA private key derived exactly from a record's seed needs two random primes drawn from
that seed (Miller-Rabin over seeded candidates), then the CRT parameters, then PEM. This
times that path for 2048-bit keys next to the corpus's EC P-256 and Ed25519 derivation,
and prints medians. Nothing here talks to the network.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from redaction_pressure.corpus import keys
from redaction_pressure.corpus.draw import Draw

SMALL_PRIMES = [p for p in range(3, 2000) if all(p % q for q in range(2, int(p**0.5) + 1))]


def probable_prime(n: int, rng: random.Random, rounds: int = 40) -> bool:
    if any(n % p == 0 for p in SMALL_PRIMES):
        return n in SMALL_PRIMES
    d, s = n - 1, 0
    while d % 2 == 0:
        d, s = d // 2, s + 1
    for _ in range(rounds):
        x = pow(rng.randrange(2, n - 1), d, n)
        if x in (1, n - 1):
            continue
        for _ in range(s - 1):
            x = pow(x, 2, n)
            if x == n - 1:
                break
        else:
            return False
    return True


def seeded_prime(rng: random.Random, bits: int) -> int:
    while True:
        candidate = rng.getrandbits(bits) | (3 << (bits - 2)) | 1
        if candidate % 65537 != 1 and probable_prime(candidate, rng):
            return candidate


def rsa_pem(seed: int, bits: int = 2048) -> bytes:
    rng = random.Random(seed)
    p, q = seeded_prime(rng, bits // 2), seeded_prime(rng, bits // 2)
    e = 65537
    d = pow(e, -1, (p - 1) * (q - 1))
    numbers = rsa.RSAPrivateNumbers(
        p, q, d, rsa.rsa_crt_dmp1(d, p), rsa.rsa_crt_dmq1(d, q), rsa.rsa_crt_iqmp(p, q), rsa.RSAPublicNumbers(e, p * q)
    )
    key = numbers.private_key()
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL, serialization.NoEncryption()
    )


def timed(make, count: int) -> list[float]:
    times = []
    for seed in range(count):
        started = time.perf_counter()
        make(seed)
        times.append(time.perf_counter() - started)
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keys", type=int, default=20)
    args = parser.parse_args()
    figures = {
        "RSA-2048, seeded prime search": timed(rsa_pem, args.keys),
        "EC P-256 SEC1 (corpus)": timed(lambda s: keys.private_key_pem(Draw.derived(s, "bench"), "ec_sec1"), args.keys),
        "Ed25519 OpenSSH (corpus)": timed(
            lambda s: keys.private_key_pem(Draw.derived(s, "bench"), "ed25519_openssh"), args.keys
        ),
    }
    for name, times in figures.items():
        print(
            f"{name:32s} median {statistics.median(times) * 1000:8.2f} ms   max {max(times) * 1000:8.2f} ms   ({len(times)} keys)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
