"""Drives the real segment-analytics-python client for the compatibility suite.

Makes identify, track, page, screen, group and alias calls through the library's
default client, one more track through a client with gzip=True, shuts both down (which
flushes), and prints a JSON manifest of what it sent (see test/compat/manifest.ts).

Settings by environment: COMPAT_ENDPOINT (base URL; the library appends /v1/batch),
COMPAT_WRITE_KEY, COMPAT_RUN_ID (makes the ids of one run unique).
"""

import base64
import copy
import gzip
import json
import os
import sys
import threading
from datetime import datetime, timedelta, timezone
from urllib.parse import urlparse

from segment.analytics import Client
from segment.analytics import request as segment_request
from segment.analytics.version import VERSION

REDACTED_WRITE_KEY = "<write key>"


def required_env(name):
    value = os.environ.get(name)
    if not value:
        sys.stderr.write("compat driver: %s is required\n" % name)
        sys.exit(2)
    return value


def describe_authorization(value, write_key):
    scheme, _, credentials = value.partition(" ")
    if scheme.lower() != "basic":
        return scheme + " <credentials>"
    try:
        decoded = base64.b64decode(credentials).decode("utf-8")
    except ValueError:
        decoded = None
    if decoded == write_key + ":":
        return "Basic <write key>:<empty password>"
    return "Basic <other credentials>"


class Recorder:
    """Keeps every request the library sends and the answer, through a `requests` response
    hook on the library's session: the library reports a failure to on_error, but not what
    the endpoint said."""

    def __init__(self, write_key):
        self.write_key = write_key
        self.lock = threading.Lock()
        self.requests = []

    def on_response(self, response, *args, **kwargs):
        request = response.request
        raw = request.body if isinstance(request.body, bytes) else request.body.encode("utf-8")
        if request.headers.get("Content-Encoding") == "gzip":
            raw = gzip.decompress(raw)
        body = json.loads(raw)
        if "writeKey" in body:
            body["writeKey"] = REDACTED_WRITE_KEY
        headers = {}
        for name, value in request.headers.items():
            lower = name.lower()
            headers[lower] = describe_authorization(value, self.write_key) if lower == "authorization" else value
        entry = {
            "path": urlparse(request.url).path,
            "headers": headers,
            "body": body,
            "status": response.status_code,
            "response": response.text,
        }
        with self.lock:
            self.requests.append(entry)
        return response


def main():
    endpoint = required_env("COMPAT_ENDPOINT")
    write_key = required_env("COMPAT_WRITE_KEY")
    run_id = required_env("COMPAT_RUN_ID")

    recorder = Recorder(write_key)
    segment_request._session.hooks["response"].append(recorder.on_response)
    errors = []

    def on_error(error, batch):
        errors.append("upload of %d messages failed: %s" % (len(batch), error))

    # Four messages per request, a short interval and two retries: quick, and a refusing
    # endpoint fails the suite in seconds.
    settings = dict(host=endpoint, upload_size=4, upload_interval=0.2, max_retries=2, timeout=10, on_error=on_error)
    client = Client(write_key, **settings)
    gzip_client = Client(write_key, gzip=True, **settings)

    user_id = "py-user-" + run_id
    anonymous_id = "py-anon-" + run_id
    # isoformat(timespec="milliseconds") of an aware datetime west of UTC.
    historic = datetime(2019, 6, 20, 8, 15, 42, 123000, tzinfo=timezone(timedelta(hours=-3)))

    calls = []

    def send(method, call, **arguments):
        # The library writes its `library` entry into the context dict it is given.
        success, message = method(**copy.deepcopy(arguments))
        if not success:
            errors.append("%s was not queued" % call["type"])
            return
        call["messageId"] = message["messageId"]
        if "timestamp" in arguments:
            call["timestamp"] = message["timestamp"]
        calls.append(call)

    traits = {
        "name": "Zoë Ångström",
        "city": "東京",
        "motto": "naïve café & <crème brûlée> 🚀",
        "plan": {"tier": "pro", "seats": 5, "addons": ["sso", "audit"]},
        "vip": True,
        "score": 9.75,
        "nickname": None,
    }
    context = {"ip": "203.0.113.7", "locale": "nb-NO", "campaign": {"name": "vår-kampanje", "source": "nyhetsbrev"}}
    send(
        client.identify,
        {"type": "identify", "userId": user_id, "traits": traits, "context": context},
        user_id=user_id,
        traits=traits,
        context=context,
        timestamp=historic,
    )

    properties = {
        "orderId": "ord-" + run_id,
        "revenue": 12.5,
        "currency": "EUR",
        "products": [{"sku": "sku-1", "name": "Café au lait", "quantity": 2}],
        "shipping": {"address": {"city": "Zürich", "zip": "8001"}},
    }
    integrations = {"All": False, "Webhooks": True, "Mixpanel": False}
    send(
        client.track,
        {"type": "track", "userId": user_id, "event": "Order Completed — ✓", "properties": properties, "integrations": integrations},
        user_id=user_id,
        event="Order Completed — ✓",
        properties=properties,
        integrations=integrations,
    )

    page = {
        "url": "https://example.com/pricing?ref=søk",
        "title": "Prix & Tarifs – Tributary",
        "referrer": "https://example.org/",
        "path": "/pricing",
    }
    send(
        client.page,
        {"type": "page", "userId": user_id, "anonymousId": anonymous_id, "name": "Pricing", "category": "Docs", "properties": page},
        user_id=user_id,
        anonymous_id=anonymous_id,
        name="Pricing",
        category="Docs",
        properties=page,
    )

    screen = {"step": 2, "variant": "grön", "flags": {"darkMode": True}}
    send(
        client.screen,
        {"type": "screen", "anonymousId": anonymous_id, "name": "Checkout", "category": "Mobile", "properties": screen},
        anonymous_id=anonymous_id,
        name="Checkout",
        category="Mobile",
        properties=screen,
    )

    group_traits = {"name": "Acme Åland Oy", "employees": 42, "address": {"country": "FI", "city": "Mariehamn"}}
    send(
        client.group,
        {"type": "group", "userId": user_id, "groupId": "py-group-" + run_id, "traits": group_traits},
        user_id=user_id,
        group_id="py-group-" + run_id,
        traits=group_traits,
    )

    send(
        client.alias,
        {"type": "alias", "userId": user_id, "previousId": anonymous_id},
        previous_id=anonymous_id,
        user_id=user_id,
    )

    compressed = {"encoding": "gzip", "note": "komprimert ✓"}
    send(
        gzip_client.track,
        {"type": "track", "anonymousId": anonymous_id, "event": "Compressed Upload", "properties": compressed},
        anonymous_id=anonymous_id,
        event="Compressed Upload",
        properties=compressed,
    )

    client.shutdown()
    gzip_client.shutdown()

    with recorder.lock:
        requests = list(recorder.requests)
    manifest = {
        "client": "segment-analytics-python",
        "library": {"name": "analytics-python", "version": VERSION},
        "calls": calls,
        "requests": requests,
        "errors": errors,
    }
    json.dump(manifest, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
