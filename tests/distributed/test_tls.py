"""``--scheduler tls://…`` with ``--tls-ca-file``/``--tls-cert``/``--tls-key`` on a real
local TLS cluster (a scheduler and one in-process worker, encryption required, with a
throwaway CA made by the ``openssl`` command): a command run through it equals the run
without a scheduler; no certificates, another CA's certificates, unreadable files and
certificates for a non-TLS scheduler are one-line errors (exit 2) before any work, and
``local:N`` is bounded."""

import shutil
import subprocess
import time
from pathlib import Path

import pytest

pytest.importorskip("distributed")

from strgm.distributed.cluster import (
    CONNECT_TIMEOUT,
    LOCAL_WORKERS_PER_CPU,
    max_local_workers,
    open_pool,
    parse_scheduler,
)
from strgm.errors import OptionError
from tests.robustness.harness import run_cli

GRAMMAR = "S --> A B\nS --> B A\nS --> S S\nS --> A\nA --> a\nA --> b\nA --> A A\n" \
          "B --> a\nB --> b\nB --> a b\n"
CORPUS = "a b\nb a\na a b\na b b\na\nb a b\na b a b\nb b a\na a b a b\n"
LEAF_EXTENSIONS = ("basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\n"
                   "extendedKeyUsage=serverAuth,clientAuth\n"
                   "subjectAltName=IP:127.0.0.1,DNS:localhost\n")


def _openssl(*args: str) -> None:
    subprocess.run(["openssl", *args], check=True, capture_output=True, timeout=30)


def make_ca(where: Path, name: str) -> dict:
    """A CA and one certificate it signed (for scheduler, worker and client alike, as
    Dask's TLS guide allows): {"ca", "cert", "key"} → paths (EC P-256, valid 2 days)."""
    if shutil.which("openssl") is None:
        pytest.skip("needs the openssl command to make throwaway TLS certificates")
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    p = {k: where / f"{name}-{k}.pem" for k in ("ca", "ca-key", "cert", "key", "csr")}
    _openssl("req", "-x509", *ec, "-keyout", str(p["ca-key"]), "-out", str(p["ca"]),
             "-days", "2", "-subj", f"/CN={name} test CA",
             "-addext", "basicConstraints=critical,CA:TRUE",
             "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    _openssl("req", *ec, "-keyout", str(p["key"]), "-out", str(p["csr"]),
             "-subj", "/CN=127.0.0.1")
    ext = where / f"{name}-ext.cnf"
    ext.write_text(LEAF_EXTENSIONS)
    _openssl("x509", "-req", "-in", str(p["csr"]), "-CA", str(p["ca"]), "-CAkey",
             str(p["ca-key"]), "-set_serial", "1", "-days", "2", "-out", str(p["cert"]),
             "-extfile", str(ext))
    return {k: p[k] for k in ("ca", "cert", "key")}


def tls_args(c: dict) -> list:
    return ["--tls-ca-file", c["ca"], "--tls-cert", c["cert"], "--tls-key", c["key"]]


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    where = tmp_path_factory.mktemp("tls")
    return {"good": make_ca(where, "good"), "other": make_ca(where, "other")}


@pytest.fixture(scope="module")
def cluster(certs):
    """A scheduler and one worker (in this process) that accept only TLS connections
    with a certificate of the "good" CA."""
    from distributed import LocalCluster
    from distributed.security import Security

    g = {k: str(v) for k, v in certs["good"].items()}
    roles = {f"tls_{r}_{k}": g[k] for r in ("scheduler", "worker", "client")
             for k in ("cert", "key")}
    security = Security(tls_ca_file=g["ca"], require_encryption=True, **roles)
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, protocol="tls",
                      host="127.0.0.1", security=security, dashboard_address=":0",
                      silence_logs=40) as c:
        assert c.scheduler_address.startswith("tls://")
        yield c


@pytest.fixture()
def problem(tmp_path):
    (tmp_path / "g.lt").write_text(GRAMMAR)
    (tmp_path / "c.yld").write_text(CORPUS)
    return tmp_path


def _pcfg(problem: Path, out: str) -> list:
    return ["pcfg", "train", problem / "g.lt", problem / "c.yld", "--method", "em",
            "--iters", "3", "--quiet", "--out", problem / out]


def _one_line_error(o, *needles: str) -> str:
    assert o.code == 2, (o.code, o.stderr)
    lines = o.stderr.strip().splitlines()
    assert len(lines) == 1, o.stderr
    for n in needles:
        assert n in lines[0], lines[0]
    return lines[0]


def test_pcfg_train_over_tls_equals_serial(problem, cluster, certs):
    before = cluster.scheduler.transition_counter
    serial = run_cli(_pcfg(problem, "s.lt"))
    tls = run_cli(_pcfg(problem, "t.lt") + ["--scheduler", cluster.scheduler_address,
                                            *tls_args(certs["good"])])
    assert serial.code == 0 and tls.code == 0, serial.stderr + tls.stderr
    assert (problem / "s.lt").read_text() == (problem / "t.lt").read_text()
    assert cluster.scheduler.transition_counter > before  # the E-steps ran there


def test_key_in_the_certificate_file_and_dask_config_work(tmp_path, cluster, certs):
    import dask

    g = certs["good"]
    both = tmp_path / "cert+key.pem"
    both.write_text(g["cert"].read_text() + g["key"].read_text())
    spec = parse_scheduler(cluster.scheduler_address, tls=[str(g["ca"]), str(both), None])
    with open_pool(spec) as pool:
        assert pool.map(abs, [-2, 3]) == [2, 3]
    config = {"distributed.comm.tls.ca-file": str(g["ca"]),
              "distributed.comm.tls.client.cert": str(g["cert"]),
              "distributed.comm.tls.client.key": str(g["key"])}
    with dask.config.set(config):
        spec = parse_scheduler(cluster.scheduler_address)
        assert spec.tls == (str(g["ca"]), str(g["cert"]), str(g["key"]))
        with open_pool(spec) as pool:
            assert pool.map(abs, [-4]) == [4]


def test_tls_address_without_certificates_says_what_to_pass(problem, cluster):
    t0 = time.monotonic()
    o = run_cli(_pcfg(problem, "o.lt") + ["--scheduler", cluster.scheduler_address],
                watch=problem)
    _one_line_error(o, "--scheduler", "--tls-ca-file", "--tls-cert")
    assert time.monotonic() - t0 < CONNECT_TIMEOUT  # refused before connecting
    assert not (problem / "o.lt").exists()


def test_certificates_of_another_ca_are_one_line_error(problem, cluster, certs):
    """In a child process: what a user sees on stderr, and no hang."""
    t0 = time.monotonic()
    o = run_cli(_pcfg(problem, "o.lt") + ["--scheduler", cluster.scheduler_address,
                                          *tls_args(certs["other"])],
                watch=problem, subprocess_timeout=60)
    line = _one_line_error(o, "--scheduler", cluster.scheduler_address, "TLS")
    assert "Traceback" not in line
    assert time.monotonic() - t0 < 30 + CONNECT_TIMEOUT
    assert not (problem / "o.lt").exists()


def test_plain_tcp_to_the_tls_scheduler_is_one_line_error(problem, cluster):
    address = cluster.scheduler_address.replace("tls://", "tcp://")
    o = run_cli(_pcfg(problem, "o.lt") + ["--scheduler", address], watch=problem)
    _one_line_error(o, "--scheduler", address)


def _bad_tls_cases(tmp_path: Path, certs: dict) -> list:
    g = certs["good"]
    (tmp_path / "notes.txt").write_text("not a certificate\n")
    return [
        (["--tls-ca-file", tmp_path / "missing.pem", "--tls-cert", g["cert"]],
         ["--tls-ca-file", "missing.pem", "cannot read"]),
        (["--tls-ca-file", g["ca"], "--tls-cert", tmp_path], ["--tls-cert", "regular"]),
        (["--tls-ca-file", tmp_path / "notes.txt", "--tls-cert", g["cert"]],
         ["--tls-ca-file", "notes.txt", "PEM"]),
        (["--tls-ca-file", g["key"], "--tls-cert", g["cert"]],
         ["--tls-ca-file", "not a CA certificate"]),
        (["--tls-ca-file", g["ca"], "--tls-cert", g["cert"]],  # its key is elsewhere
         ["--tls-cert", "--tls-key"]),
        (["--tls-ca-file", g["ca"], "--tls-cert", g["cert"], "--tls-key",
          certs["other"]["key"]], ["--tls-cert", "not a certificate and key"]),
        (["--tls-ca-file", g["ca"]], ["--scheduler", "--tls-cert"]),
    ]


def test_bad_certificate_options_are_one_line_errors_before_work(problem, certs):
    """Checked before connecting: the address answers nothing (port 9 of 127.0.0.1)."""
    for options, needles in _bad_tls_cases(problem, certs):
        o = run_cli(_pcfg(problem, "o.lt") + ["--scheduler", "tls://127.0.0.1:9",
                                              *options], watch=problem)
        _one_line_error(o, *needles)
        assert not (problem / "o.lt").exists()


@pytest.mark.parametrize("scheduler", [None, "local:1", "tcp://127.0.0.1:9"])
def test_certificates_need_a_tls_address(problem, certs, scheduler):
    argv = _pcfg(problem, "o.lt") + tls_args(certs["good"])
    o = run_cli(argv + (["--scheduler", scheduler] if scheduler else []), watch=problem)
    _one_line_error(o, "tls://")
    assert not (problem / "o.lt").exists()


def test_control_good_certificates_parse_without_connecting(certs):
    g = certs["good"]
    spec = parse_scheduler("tls://127.0.0.1:9", tls=[str(g["ca"]), str(g["cert"]),
                                                     str(g["key"])])
    assert spec.tls == (str(g["ca"]), str(g["cert"]), str(g["key"]))
    assert spec.security().require_encryption
    assert parse_scheduler("tcp://127.0.0.1:9").security() is None


def test_local_workers_are_bounded():
    top = max_local_workers()
    assert parse_scheduler(f"local:{top}").workers == top  # control: parsed, not started
    for value in (f"local:{top + 1}", "local:100000", "local:" + "9" * 5000):
        with pytest.raises(OptionError) as e:
            parse_scheduler(value)
        msg = str(e.value)
        assert "\n" not in msg and len(msg) < 300 and "--scheduler" in msg
        assert f"{LOCAL_WORKERS_PER_CPU} per CPU" in msg and f"({top} on" in msg
    with pytest.raises(OptionError, match="N ≥ 1"):
        parse_scheduler("local:²")  # a digit to str.isdigit, not to int
