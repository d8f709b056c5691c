"""Reads one case from case-read-service with Python's standard library alone.

    python3 case_read.py CRN [PATH]

Settings from the environment (files, never secrets on the command line):
  CASE_READ_URL      https://host:port of the service
  CASE_READ_CA       the CA that issued the service's certificate (PEM)
  CASE_READ_CERT     this client's certificate (PEM), CASE_READ_KEY its key (PEM)
  CASE_READ_API_KEY_FILE, CASE_READ_TOKEN_FILE   the API key and the bearer token

Prints the HTTP status on the first line and the body on the second; exits 0 on 200.
"""

import http.client
import json
import os
import ssl
import sys
import urllib.parse


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read().strip()


def main():
    crn = sys.argv[1]
    path = sys.argv[2] if len(sys.argv) > 2 else ""
    url = urllib.parse.urlsplit(os.environ["CASE_READ_URL"])
    # Verifies the server against the CA and the host name; presents the client certificate.
    context = ssl.create_default_context(cafile=os.environ["CASE_READ_CA"])
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(os.environ["CASE_READ_CERT"], os.environ["CASE_READ_KEY"])
    connection = http.client.HTTPSConnection(url.hostname, url.port, context=context, timeout=10)
    connection.request(
        "GET",
        f"/case/{urllib.parse.quote(crn, safe='')}{path}",
        headers={
            "X-API-Key": read(os.environ["CASE_READ_API_KEY_FILE"]),
            "Authorization": f"Bearer {read(os.environ['CASE_READ_TOKEN_FILE'])}",
            "Accept": "application/json",
        },
    )
    response = connection.getresponse()
    body = json.loads(response.read())
    print(response.status)
    print(json.dumps(body, separators=(",", ":")))
    # A problem body names a requestId: quote it to the operator.
    return 0 if response.status == 200 else 1


if __name__ == "__main__":
    sys.exit(main())
