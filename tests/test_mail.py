"""Mail through a real SMTP server the tests start (aiosmtpd): codes and links are read
from the delivered messages. One relay speaks STARTTLS with a certificate of its own and
accepts AUTH only over TLS, as a real submission server does; one is down, so the API
answers 502 mail_error and keeps nothing half-done."""

import datetime
import email
import email.policy
import ipaddress
import os
import re
import socket
import tempfile
import threading
import time
import uuid

import pytest
import requests
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from conftest import Server
from test_control_api import assert_api_error

SMTP_USER, SMTP_PASSWORD = "tablemere", "relay-password-not-for-logs"
PASSWORD = "violet tangerine 42 kite"


class Inbox:
    def __init__(self):
        self.messages = []
        self.cond = threading.Condition()
        self.envelopes = []

    async def handle_DATA(self, server, session, envelope):
        msg = email.message_from_bytes(envelope.content, policy=email.policy.default)
        with self.cond:
            self.messages.append(msg)
            self.envelopes.append((envelope.mail_from, list(envelope.rcpt_tos),
                                   session.ssl is not None, session.authenticated))
            self.cond.notify_all()
        return "250 OK"

    def wait_for(self, to, subject_part, timeout=10):
        deadline = time.time() + timeout
        with self.cond:
            while True:
                for m in self.messages:
                    if m["To"] == to and subject_part in m["Subject"]:
                        return m
                left = deadline - time.time()
                assert left > 0, f"no mail to {to} about {subject_part}: " + str(
                    [(m["To"], m["Subject"]) for m in self.messages])
                self.cond.wait(left)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def self_signed(directory):
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    cert_path = os.path.join(directory, "relay.pem")
    key_path = os.path.join(directory, "relay.key")
    with open(cert_path, "wb") as f:
        f.write(cert.public_bytes(serialization.Encoding.PEM))
    with open(key_path, "wb") as f:
        f.write(key.private_bytes(serialization.Encoding.PEM,
                                  serialization.PrivateFormat.PKCS8,
                                  serialization.NoEncryption()))
    return cert_path, key_path


def authenticator(server, session, envelope, mechanism, auth_data):
    ok = (isinstance(auth_data, LoginPassword) and auth_data.login == SMTP_USER.encode()
          and auth_data.password == SMTP_PASSWORD.encode())
    return AuthResult(success=ok, handled=False)


@pytest.fixture(scope="module")
def relay():
    import ssl
    directory = tempfile.mkdtemp(prefix="tm-smtp-")
    cert, key = self_signed(directory)
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(cert, key)
    inbox = Inbox()
    port = free_port()
    controller = Controller(inbox, hostname="127.0.0.1", port=port, tls_context=ctx,
                            require_starttls=True, authenticator=authenticator,
                            auth_required=True, auth_require_tls=True)
    controller.start()
    yield inbox, port, cert
    controller.stop()


@pytest.fixture(scope="module")
def srv(relay):
    inbox, port, cert = relay
    s = Server(extra_env={"TABLEMERE_SMTP_HOST": "127.0.0.1", "TABLEMERE_SMTP_PORT": str(port),
                          "TABLEMERE_SMTP_USER": SMTP_USER,
                          "TABLEMERE_SMTP_PASSWORD": SMTP_PASSWORD,
                          "TABLEMERE_SMTP_FROM": "noreply@tablemere.test",
                          "TABLEMERE_SMTP_CA_FILE": cert,
                          "TABLEMERE_BOOTSTRAP_SECRET": "s3cret"})
    s.inbox = inbox
    yield s
    s.cleanup()


def address():
    return f"mail-{uuid.uuid4().hex[:10]}@example.com"


def test_signup_code_arrives_by_mail_over_starttls_with_auth(srv):
    a = address()
    r = requests.post(srv.api + "/v1/signup/start", json={"email": a})
    assert r.status_code == 202 and r.json()["delivery"] == "email", r.text
    msg = srv.inbox.wait_for(a, "signup code")
    assert msg["From"] == "noreply@tablemere.test" and msg["Date"]
    code = re.search(r"\b(\d{6})\b", msg.get_content()).group(1)
    mail_from, rcpts, over_tls, authenticated = srv.inbox.envelopes[srv.inbox.messages.index(msg)]
    assert (mail_from, rcpts, over_tls, authenticated) == (
        "noreply@tablemere.test", [a], True, True)
    # The code is not readable through the operator route once mail is real.
    r = requests.get(srv.api + f"/internal/signup-codes/{a}", headers={"X-Bootstrap-Secret": "s3cret"})
    assert_api_error(r, 404, "no_pending_code")
    r = requests.post(srv.api + "/v1/signup/verify",
                      json={"email": a, "code": code, "accept_terms": True})
    assert r.status_code == 201, r.text
    # With a mail sender, the unverified one-call signup is off.
    assert_api_error(requests.post(srv.api + "/v1/signup", json={
        "email": address(), "accept_terms": True}), 403, "verification_required")


def test_set_password_and_reset_links_arrive_by_mail(srv):
    a = address()
    r = requests.post(srv.api + "/v1/auth/signup",
                      json={"email": a, "organization_name": "Mail Works",
                            "handle": "mw-" + uuid.uuid4().hex[:6]})
    assert r.status_code == 202 and r.json()["delivery"] == "email", r.text
    body = srv.inbox.wait_for(a, "Set your Tablemere password").get_content()
    link = re.search(r"(\S+/app/welcome\?token=(\S+))", body)
    assert link and link.group(1).startswith(srv.api), body
    r = requests.post(srv.api + "/v1/auth/password/set",
                      json={"token": link.group(2), "password": PASSWORD})
    assert r.status_code == 200, r.text
    assert requests.post(srv.api + "/v1/auth/password/reset/start",
                         json={"email": a}).status_code == 202
    body = srv.inbox.wait_for(a, "Reset your Tablemere password").get_content()
    token = re.search(r"/app/reset\?token=(\S+)", body).group(1)
    r = requests.post(srv.api + "/v1/auth/password/reset",
                      json={"token": token, "password": "fresh secret phrase 8"})
    assert r.status_code == 200 and r.json()["sessions_revoked"] == 1, r.text
    notice = srv.inbox.wait_for(a, "password was reset").get_content()
    assert "logged out" in notice
    # No secret reaches the log: the relay password and the mailed token.
    log = open(srv.log_path).read()
    assert SMTP_PASSWORD not in log and token not in log


def test_a_relay_that_is_down_is_502_mail_error_and_nothing_pending():
    s = Server(extra_env={"TABLEMERE_SMTP_HOST": "127.0.0.1",
                          "TABLEMERE_SMTP_PORT": str(free_port()),
                          "TABLEMERE_SMTP_FROM": "noreply@tablemere.test"})
    try:
        a = address()
        assert_api_error(requests.post(s.api + "/v1/signup/start", json={"email": a}), 502,
                         "mail_error")
        # The failed code is not left pending: a retry is not throttled as a resend.
        assert_api_error(requests.post(s.api + "/v1/signup/start", json={"email": a}), 502,
                         "mail_error")
        assert_api_error(requests.post(s.api + "/v1/auth/signup", json={"email": address()}),
                         502, "mail_error")
    finally:
        s.cleanup()


def test_smtp_configuration_errors_stop_the_server():
    with pytest.raises(RuntimeError, match="TABLEMERE_SMTP_FROM"):
        Server(extra_env={"TABLEMERE_SMTP_HOST": "127.0.0.1"})
    with pytest.raises(RuntimeError, match="TABLEMERE_SMTP_TLS"):
        Server(extra_env={"TABLEMERE_SMTP_HOST": "127.0.0.1", "TABLEMERE_SMTP_FROM": "a@b.io",
                          "TABLEMERE_SMTP_TLS": "maybe"})
