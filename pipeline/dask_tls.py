"""Certificates for a Dask cluster with TLS: ``python -m pipeline.dask_tls FOLDER``.

A Dask scheduler runs whatever Python any client that reaches it submits, on every worker: on
plain ``tcp://`` anyone who can reach its port owns the workers. With TLS (Dask's
``distributed.security.Security``) every connection, client to scheduler, worker to scheduler,
worker to worker, is encrypted and both ends must show a certificate signed by the cluster's own
certificate authority: a client without one is refused during the handshake, before any message.

This writes into ``FOLDER`` (made 0700):

- ``ca.pem``: the cluster's CA certificate (EC P-256, self-signed, ``--days`` valid, default 365),
  the only authority the cluster trusts. Its private key is not kept: no further certificate
  can be signed by it, so the cluster's members are exactly those holding the files below; a
  new set of certificates (to rotate them, or to shut a member out) is a new folder for all.
- ``cert.pem`` and ``key.pem`` (0600): the cluster's certificate and its private key, signed by
  that CA, for both ends of a connection (server and client authentication); the scheduler,
  the workers and the clients (the study's flow) all use them.

The scheduler, the workers and a client then take them on the command line or from Dask's
configuration (docs/scaling.md, "The study on a Dask cluster"):

    dask scheduler --protocol tls --host 0.0.0.0 --tls-ca-file F/ca.pem --tls-cert F/cert.pem --tls-key F/key.pem
    dask worker tls://SCHEDULER:8786 --tls-ca-file F/ca.pem --tls-cert F/cert.pem --tls-key F/key.pem
    CLIMBRL_DASK_ADDRESS=tls://SCHEDULER:8786 CLIMBRL_DASK_TLS=F python -m pipeline study

(:func:`security` is the client's ``Security``; :func:`dask_config_env` the same as Dask's
``DASK_DISTRIBUTED__COMM__*`` variables, which any Dask client reads.) Dask does not check host
names (its connections trust the cluster's CA, not a name), so one certificate serves every
machine; it names ``localhost``, 127.0.0.1, this host and ``--name`` all the same.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import socket
import sys
from pathlib import Path
from typing import Any

from climbrl.cluster import (  # noqa: F401 (the client side, used by the flow and the tests from here)
    CA_FILE,
    CERT_FILE,
    ENV,
    FILES,
    INSECURE_ENV,
    KEY_FILE,
    TLSFilesError,
    client_kwargs,
    security,
    tls_files,
)
from pipeline import params_io


def _name(common: str) -> Any:
    from cryptography import x509
    from cryptography.x509.oid import NameOID

    return x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "climbrl"),
                      x509.NameAttribute(NameOID.COMMON_NAME, common)])


def _alt_names(names: list[str]) -> Any:
    from cryptography import x509

    out: list[Any] = []
    for n in dict.fromkeys(["localhost", "127.0.0.1", socket.gethostname(), *names]):
        try:
            out.append(x509.IPAddress(ipaddress.ip_address(n)))
        except ValueError:
            out.append(x509.DNSName(n))
    return x509.SubjectAlternativeName(out)


def _write(path: Path, data: bytes, mode: int) -> None:
    """``data`` in ``path`` with ``mode`` from its first byte on (a key is never readable by others)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    os.fchmod(fd, mode)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def make_certificates(folder: str | Path, days: int = 365, names: list[str] | None = None,
                      force: bool = False) -> dict[str, Path]:
    """A new CA and the cluster's certificate and key in ``folder`` (module docstring); the paths."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID

    folder = Path(folder)
    paths = {f: folder / f for f in FILES}
    if not force and any(p.exists() for p in paths.values()):
        raise FileExistsError(f"{folder} already holds certificates (--force replaces them: every member of "
                              "the cluster then needs the new files)")
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    folder.chmod(0o700)
    now = datetime.datetime.now(datetime.UTC)
    start, end = now - datetime.timedelta(minutes=5), now + datetime.timedelta(days=days)

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = _name(f"climbrl Dask cluster CA {x509.random_serial_number() % 10**8:08d}")
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(x509.random_serial_number()).not_valid_before(start).not_valid_after(end)
          .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
          .add_extension(x509.KeyUsage(digital_signature=False, content_commitment=False, key_encipherment=False,
                                       data_encipherment=False, key_agreement=False, key_cert_sign=True,
                                       crl_sign=True, encipher_only=False, decipher_only=False), critical=True)
          .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
          .sign(ca_key, hashes.SHA256()))

    key = ec.generate_private_key(ec.SECP256R1())
    cert = (x509.CertificateBuilder().subject_name(_name("climbrl Dask cluster member")).issuer_name(ca_name)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(start).not_valid_after(end)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=False, key_encipherment=False,
                                         data_encipherment=False, key_agreement=True, key_cert_sign=False,
                                         crl_sign=False, encipher_only=False, decipher_only=False), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]),
                           critical=False)
            .add_extension(_alt_names(names or []), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
            .sign(ca_key, hashes.SHA256()))

    pem = serialization.Encoding.PEM
    _write(paths[KEY_FILE], key.private_bytes(pem, serialization.PrivateFormat.PKCS8,
                                              serialization.NoEncryption()), 0o600)
    _write(paths[CERT_FILE], cert.public_bytes(pem), 0o644)
    _write(paths[CA_FILE], ca.public_bytes(pem), 0o644)
    return {"ca": paths[CA_FILE], "cert": paths[CERT_FILE], "key": paths[KEY_FILE]}


def dask_config_env(folder: str | Path) -> dict[str, str]:
    """The same as Dask configuration variables (``distributed.comm.tls.*``), which every Dask
    process started with them reads (a client with no ``security`` argument, ``dask worker``)."""
    f = tls_files(folder)
    env = {"DASK_DISTRIBUTED__COMM__REQUIRE_ENCRYPTION": "True",
           "DASK_DISTRIBUTED__COMM__TLS__CA_FILE": f["ca"]}
    for who in ("CLIENT", "SCHEDULER", "WORKER"):
        env[f"DASK_DISTRIBUTED__COMM__TLS__{who}__CERT"] = f["cert"]
        env[f"DASK_DISTRIBUTED__COMM__TLS__{who}__KEY"] = f["key"]
    return env


@params_io.command("python -m pipeline.dask_tls")
def main(argv: list[str] | None = None) -> int:
    ap = params_io.ArgumentParser(prog="python -m pipeline.dask_tls", description=__doc__.split("\n\n")[0])
    ap.add_argument("folder", help="where to write ca.pem, cert.pem and key.pem (made 0700)")
    ap.add_argument("--days", type=int, default=365, help="validity (default 365 days)")
    ap.add_argument("--name", action="append", default=[], help="another host name or address to name in the "
                    "certificate (informative: Dask does not check names)")
    ap.add_argument("--force", action="store_true", help="replace the certificates already in the folder")
    ap.add_argument("--env", action="store_true", help="print the Dask configuration variables (export lines)")
    args = ap.parse_args(argv)
    try:
        paths = make_certificates(args.folder, days=args.days, names=args.name, force=args.force)
    except FileExistsError as e:
        print(f"pipeline.dask_tls: {e}", file=sys.stderr)
        return 1
    folder = Path(args.folder).resolve()
    print(f"Dask TLS files in {folder} (key.pem readable by its owner only): {', '.join(FILES)}"
          f"\n  dask scheduler --protocol tls --tls-ca-file {paths['ca']} --tls-cert {paths['cert']} "
          f"--tls-key {paths['key']} ...\n  clients: {ENV}={folder} (pipeline.flows) or the variables of --env")
    if args.env:
        print("\n".join(f"export {k}={v}" for k, v in dask_config_env(folder).items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
