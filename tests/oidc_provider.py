"""A throw-away OpenID Connect provider on 127.0.0.1 for tests: discovery, an authorization endpoint
that signs in whoever the test names (no password page), a token endpoint issuing RS256-signed ID
tokens, and its JWKS. Enough for Streamlit's ``st.login`` (Authlib) to sign a user in for real:
the dashboard redirects to it, exchanges the code, checks the token's signature, issuer, audience
and nonce, and sets its own signed cookie."""

from __future__ import annotations

import base64
import json
import secrets
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlencode, urlparse

from joserfc import jwt  # Authlib's JOSE library (Streamlit's login checks tokens with Authlib)
from joserfc.jwk import RSAKey

CLIENT_ID = "riskgrid-test"
CLIENT_SECRET = "a-test-secret"


class Provider:
    """The provider's state: its key, the user the next sign-in is for, issued codes."""

    def __init__(self) -> None:
        self.key = RSAKey.generate_key(2048)
        self.key_id = "test-key"
        self.user: str | None = None  # e-mail of whoever signs in next
        self.codes: dict[str, dict[str, str]] = {}
        self.url = ""

    def metadata(self) -> dict[str, object]:
        return {
            "issuer": self.url,
            "authorization_endpoint": f"{self.url}/authorize",
            "token_endpoint": f"{self.url}/token",
            "jwks_uri": f"{self.url}/jwks",
            "response_types_supported": ["code"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["RS256"],
            "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"],
            "scopes_supported": ["openid", "email", "profile"],
        }

    def id_token(self, grant: dict[str, str]) -> str:
        now = int(time.time())
        claims = {
            "iss": self.url,
            "sub": grant["user"],
            "aud": CLIENT_ID,
            "email": grant["user"],
            "email_verified": True,
            "name": grant["user"].split("@")[0],
            "iat": now,
            "exp": now + 600,
            "nonce": grant["nonce"],
        }
        header = {"alg": "RS256", "kid": self.key_id}
        return jwt.encode(header, claims, self.key)

    def jwks(self) -> dict[str, object]:
        public = self.key.as_dict(private=False)
        return {"keys": [{**public, "kid": self.key_id, "use": "sig", "alg": "RS256"}]}


def _handler(provider: Provider) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:  # quiet
            pass

        def _json(self, payload: object, status: int = 200) -> None:
            body = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            url = urlparse(self.path)
            query = {k: v[0] for k, v in parse_qs(url.query).items()}
            if url.path == "/.well-known/openid-configuration":
                self._json(provider.metadata())
            elif url.path == "/jwks":
                self._json(provider.jwks())
            elif url.path == "/authorize":
                if query.get("client_id") != CLIENT_ID or provider.user is None:
                    self._json({"error": "unauthorized_client"}, 400)
                    return
                code = secrets.token_urlsafe(16)
                provider.codes[code] = {"user": provider.user, "nonce": query.get("nonce", "")}
                answer = urlencode({"code": code, "state": query["state"]})
                target = f"{query['redirect_uri']}?{answer}"
                self.send_response(302)
                self.send_header("Location", target)
                self.end_headers()
            else:
                self._json({"error": "not found"}, 404)

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", 0))
            form = {k: v[0] for k, v in parse_qs(self.rfile.read(length).decode()).items()}
            basic = self.headers.get("Authorization", "")
            if basic.startswith("Basic "):
                client, _, secret = base64.b64decode(basic[6:]).decode().partition(":")
            else:
                client, secret = form.get("client_id", ""), form.get("client_secret", "")
            grant = provider.codes.pop(form.get("code", ""), None)
            if urlparse(self.path).path != "/token" or grant is None:
                self._json({"error": "invalid_grant"}, 400)
            elif (client, secret) != (CLIENT_ID, CLIENT_SECRET):
                self._json({"error": "invalid_client"}, 401)
            else:
                self._json(
                    {
                        "access_token": secrets.token_urlsafe(16),
                        "token_type": "Bearer",
                        "expires_in": 600,
                        "scope": "openid email profile",
                        "id_token": provider.id_token(grant),
                    }
                )

    return Handler


@contextmanager
def oidc_provider() -> Iterator[Provider]:
    """A provider serving on a free port of 127.0.0.1 until the block ends."""
    provider = Provider()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(provider))
    provider.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield provider
    finally:
        server.shutdown()
        server.server_close()


def secrets_toml(provider: Provider, dashboard_port: int) -> str:
    """The ``[auth]`` section of ``.streamlit/secrets.toml`` that signs in through ``provider``."""
    return (
        "[auth]\n"
        f'redirect_uri = "http://127.0.0.1:{dashboard_port}/oauth2callback"\n'
        f'cookie_secret = "{secrets.token_hex(32)}"\n'
        f'client_id = "{CLIENT_ID}"\n'
        f'client_secret = "{CLIENT_SECRET}"\n'
        f'server_metadata_url = "{provider.url}/.well-known/openid-configuration"\n'
    )
