"""tests/regress/badinput.py — the cases of 037-api-badinput.sh, made
from the api's own route table (`cdsgated api --list-routes`), so a new
route cannot be missed: a route without an example body here is a
failure, not a silent pass.

For each METHOD PATTERN: malformed JSON, a body over the 1 MiB limit,
each field of the example body with a wrong type, an unknown field, an
unknown id (in the path, or @R/@D in the body), and callers that may not
(nobody; the auditor on a custodian route).  Each must get a 4xx whose
body is {"error": {"status": <the same>, ...}}.  Prints one line per
case: "PASS what" or "FAIL what: why".  The shell test checks the store
and the audit log did not change.

usage: badinput.py CDSGATED SOCKET BIGFILE DATASET_ID AUDITOR_GID
"""
import json
import subprocess
import sys

CDSGATED, SOCK, BIG, DS, AUD_GID = sys.argv[1:6]
SHA0 = "0" * 64

# A well-formed body per route that takes one (@R: a known recipient,
# @D: a known dataset).  None: the route takes no body.
EXAMPLES = {
    "GET /v1/health": None,
    "GET /v1/metrics": None,
    "GET /v1/recipients": None,
    "POST /v1/recipients": {"id": "zed", "name": "Zed", "max_sessions": 1,
                            "allowed_hours": "Mon 08:00-09:00", "tz": "UTC"},
    "GET /v1/recipients/{id}": None,
    "POST /v1/recipients/{id}/disable": None,
    "POST /v1/recipients/{id}/hours": {"allowed_hours": "Mon 08:00-09:00",
                                       "tz": "UTC"},
    "GET /v1/datasets": None,
    "GET /v1/datasets/{id}": None,
    "POST /v1/datasets": {"name": "bad", "data": SHA0, "qi": ["age"],
                          "identifying": ["name"], "sensitive": ["diagnosis"],
                          "hierarchies": {}, "separator": ",",
                          "population": [1000.0], "pu_threshold": 0.1,
                          "pu_model": "pitman", "k": 5,
                          "suppression_limit": 0.05, "quality": "loss",
                          "residual": [{"population": 100.0, "bound": 0.1}],
                          "game": "sh-friendly", "game_cost": 4.0,
                          "game_gain": 300.0, "game_loss": 300.0,
                          "game_benefit": 1200.0, "game_risk": "journalist",
                          "safe_harbor": {"age": 1}, "attacker": SHA0,
                          "max_adversarial_risk": 0.1, "seed": 7,
                          "sources": {"data": "in/patients.csv",
                                      "attacker": "in/voter.txt"}},
    "POST /v1/datasets/{id}/mount": {"backend": "embedded"},
    "POST /v1/datasets/{id}/unmount": None,
    "POST /v1/datasets/{id}/remove": None,
    "GET /v1/sessions": None,
    "POST /v1/sessions": {"recipient": "@R", "dataset": "@D",
                          "expires_in": 60},
    "GET /v1/sessions/{id}": None,
    "GET /v1/sessions/{id}/recording": None,
    "POST /v1/sessions/{id}/revoke": None,
    "POST /v1/sessions/{id}/extend": {"expires_in": 60},
    "GET /v1/nodes": None,
    "PUT /v1/uploads": "stream",
}
# Ids that exist, and ids that do not, per resource.
KNOWN = {"recipients": "alice", "datasets": DS, "sessions": "s-none"}
UNKNOWN = {"recipients": "nobody", "datasets": "999999",
           "sessions": "s-unknown"}

AS = {
    "root": [],
    "nobody": ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"],
    "auditor": ["setpriv", "--reuid=65534", "--regid=" + AUD_GID,
                "--clear-groups"],
}


def fill(body, known=True):
    """The example with @R/@D made known (or unknown) ids."""
    s = json.dumps(body)
    s = s.replace('"@R"', json.dumps("alice" if known else "nobody"))
    s = s.replace('"@D"', DS if known else "999999")
    return s


def path_of(pattern, known=True):
    res = pattern.split("/")[2]
    ids = KNOWN if known else UNKNOWN
    return pattern.replace("{id}", ids.get(res, "x"))


def call(who, method, path, data=None, big=False):
    args = AS[who] + ["curl", "-s", "-w", "\n%{http_code}", "--unix-socket",
                      SOCK, "-X", method]
    if big:
        args += ["-H", "Content-Type: application/json",
                 "--data-binary", "@" + BIG]
    elif data is not None:
        args += ["-H", "Content-Type: application/json",
                 "--data-binary", "@-"]
    out = subprocess.run(args + ["http://cdsgate" + path],
                         input=(data or "").encode(), capture_output=True,
                         timeout=60).stdout.decode("utf-8", "replace")
    body, _, code = out.rpartition("\n")
    return int(code or 0), body


def case(what, want, who, method, path, data=None, big=False, says=None):
    code, body = call(who, method, path, data, big)
    why = None
    try:
        err = json.loads(body)["error"]
        if err["status"] != code:
            why = "error.status %s != HTTP %s" % (err["status"], code)
    except (ValueError, KeyError, TypeError):
        why = "not a JSON error: %r" % body[:120]
    if code not in want:
        why = "HTTP %d, want %s: %s" % (code, want, body[:160])
    elif why is None and says is not None and says not in body:
        why = "the message does not name %r: %s" % (says, body[:160])
    print("%s %s %s: %s%s" % ("FAIL" if why else "PASS", method, path, what,
                              ": " + why if why else " -> %d" % code))


def wrong(v):
    """A value of another JSON type (@D stands for an integer)."""
    return 42 if isinstance(v, str) and v != "@D" else "x"


def route_cases(method, pattern, role, kind):
    key = method + " " + pattern
    if key not in EXAMPLES:
        print("FAIL %s: no bad-input cases for this route (add it to "
              "tests/regress/badinput.py)" % key)
        return
    ex = EXAMPLES[key]
    path = path_of(pattern)
    # who may not: nobody always; the auditor on a custodian route
    body = None if ex in (None, "stream") else fill(ex)
    case("nobody (no cdsgate group)", [403], "nobody", method, path, body)
    if role == "custodian":
        case("an auditor", [403], "auditor", method, path, body)
    if kind == "stream":
        return      # raw bytes, not JSON: its limit is 4 GiB
    case("malformed JSON", [400], "root", method, path, '{"id": ')
    case("a body over 1 MiB", [413], "root", method, path, big=True)
    if ex is None:
        case("an unexpected body", [400], "root", method, path, '{"x": 1}')
    else:
        for f, v in ex.items():
            bad = dict(ex)
            bad[f] = wrong(v)
            case("field %s of the wrong type" % f, [400], "root", method,
                 path, fill(bad), says=f)
        case("an unknown field", [400], "root", method, path,
             fill(dict(ex, zzz_unknown=1)), says="zzz_unknown")
        if "@R" in json.dumps(ex) or "@D" in json.dumps(ex):
            case("unknown ids in the body", [404], "root", method, path,
                 fill(ex, known=False))
    if "{id}" in pattern:
        case("an unknown id", [404], "root", method,
             path_of(pattern, known=False), body)


def main():
    routes = subprocess.run([CDSGATED, "api", "--list-routes"],
                            capture_output=True, check=True).stdout.decode()
    n = 0
    for line in routes.splitlines():
        method, pattern, role, kind = line.split()
        route_cases(method, pattern, role, kind)
        n += 1
    print("ROUTES %d" % n)


main()
