#!/usr/bin/env python3
"""After Benchmarks/KillNine/run has killed the host mid-load and started it
again on the same data: sends again every request the host never answered
(same body, same Idempotency-Key, as a client that timed out would), waits
for reconciliation to settle every attempt, then compares what the host
acknowledged with the store and with the mock's own books (its ledger file,
which the mock writes on every call and which outlives the host).

Prints the counts and exits 1 unless lost, double-charged and still-pending
are all 0.

  check.py --logs DIR --data DIR --url URL [--deadline SECONDS]
"""
import argparse, glob, json, os, sqlite3, sys, time, urllib.error, urllib.request

parser = argparse.ArgumentParser()
parser.add_argument("--logs", required=True)
parser.add_argument("--data", required=True)
parser.add_argument("--url", required=True)
parser.add_argument("--deadline", type=float, default=120)
args = parser.parse_args()
api_key = open(os.path.join(args.data, "test-api-key")).read().strip()

# What the load sent and what the host answered, by key.
sent, answered = {}, {}
for path in glob.glob(os.path.join(args.logs, "thread-*.log")):
    for line in open(path):
        fields = line.split()
        if len(fields) < 3:
            continue  # a line cut short by the kill of the load
        if fields[0] == "SENT":
            sent[fields[2]] = fields
        elif fields[0] == "ACK":
            answered[fields[2]] = fields

def post(path, key, body):
    request = urllib.request.Request(args.url + path, data=json.dumps(body).encode(), method="POST", headers={
        "Content-Type": "application/json", "Authorization": "Bearer " + api_key, "Idempotency-Key": key})
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")

# Acknowledged payments: attempt id -> session id.
acknowledged = {}
for key, fields in answered.items():
    if fields[1] == "a" and fields[3] == "201" and fields[5] == "succeeded":
        acknowledged[fields[4]] = fields[6]

unanswered = [fields for key, fields in sent.items() if key not in answered]
retried = {"sessions": 0, "attempts": 0, "refused": 0}
for fields in unanswered:
    kind, key = fields[1], fields[2]
    if kind == "s":
        status, body = post("/v1/sessions", key, {"amount": 1000, "currency": "SAR", "country": "SA", "orderId": key})
        retried["sessions"] += 1
    else:
        status, body = post("/v1/sessions/%s/attempts" % fields[3], key, {"method": "mada", "provider": "mock"})
        retried["attempts"] += 1
        if status == 201 and body.get("status") == "succeeded":
            acknowledged[body["id"]] = fields[3]
    if status != 201:
        retried["refused"] += 1
        print("  retry of %s %s: %d %s" % (kind, key, status, body.get("code", body)), file=sys.stderr)

database = sqlite3.connect("file:%s?mode=ro" % os.path.join(args.data, "checkout.sqlite"), uri=True)

def open_attempts():
    return database.execute("SELECT count(*) FROM attempt WHERE status IN ('processing', 'pending')").fetchone()[0]

started = time.monotonic()
while open_attempts() and time.monotonic() - started < args.deadline:
    time.sleep(0.5)  # reconciliation runs every second in the host
settled_after = time.monotonic() - started

attempts = {row[0]: (row[1], row[2]) for row in database.execute("SELECT id, session_id, status FROM attempt")}
ledger = json.load(open(os.path.join(args.data, "mock-ledger.json")))
charges = {}  # attempt id -> how many payments the mock holds for it
for payment in ledger["payments"].values():
    if payment["status"] in ("succeeded", "authorized"):
        charges[payment["paymentId"]] = charges.get(payment["paymentId"], 0) + 1

lost = set()
for attempt_id in acknowledged:
    if attempts.get(attempt_id, (None, None))[1] != "succeeded":
        lost.add(attempt_id)  # acknowledged to the client, not paid in the store
for attempt_id in charges:
    if attempts.get(attempt_id, (None, None))[1] not in ("succeeded", "authorized"):
        lost.add(attempt_id)  # the mock took the money, the store does not say so
double = set(a for a, n in charges.items() if n > 1)
by_session = {}
for attempt_id in charges:
    session = attempts.get(attempt_id, (None, None))[0]
    by_session.setdefault(session, []).append(attempt_id)
for session, charged in by_session.items():
    if len(charged) > 1:
        double.update(charged)
paid_in_store = {}
for attempt_id, (session, status) in attempts.items():
    if status == "succeeded":
        paid_in_store.setdefault(session, []).append(attempt_id)
double.update(a for charged in paid_in_store.values() if len(charged) > 1 for a in charged)
pending = open_attempts()

print("requests sent %d, answered %d, unanswered at the kill %d (sent again: %d sessions, %d attempts, %d refused)" % (
    len(sent), len(answered), len(unanswered), retried["sessions"], retried["attempts"], retried["refused"]))
print("attempts in the store %d (succeeded %d), charges at the mock %d, payments acknowledged %d; settled %.1f s after the checks began" % (
    len(attempts), sum(1 for _, s in attempts.values() if s == "succeeded"), sum(charges.values()), len(acknowledged), settled_after))
statuses = {}
for _, status in attempts.values():
    statuses[status] = statuses.get(status, 0) + 1
print("attempts by status: " + ", ".join("%s %d" % item for item in sorted(statuses.items())))
print("lost %d, double-charged %d, still pending %d" % (len(lost), len(double), pending))
for attempt_id in sorted(lost):
    print("  lost: %s (store: %s, mock charges: %d)" % (attempt_id, attempts.get(attempt_id), charges.get(attempt_id, 0)))
for attempt_id in sorted(double):
    print("  double: %s (store: %s, mock charges: %d)" % (attempt_id, attempts.get(attempt_id), charges.get(attempt_id, 0)))
sys.exit(1 if lost or double or pending else 0)
