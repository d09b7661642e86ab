-- Payments through the mock under load, for Benchmarks/KillNine/run: each
-- request is written to the thread's log before it is sent, and each answer
-- after it arrives, so that check.py knows what the host acknowledged. One
-- connection per thread (run with -t N -c N): an answer is always to the
-- thread's last request.
--
-- A payment is POST /v1/sessions, then POST /v1/sessions/{id}/attempts with
-- mada through the mock, each under its own Idempotency-Key. A session's
-- orderId is its key, so check.py can send any request again exactly.
--
-- Environment: KILL9_LOGS (a folder for the logs), KILL9_RUN (a key prefix),
-- GATEWAY_API_KEY (see Benchmarks/lib/api-key.lua).

local threads = {}
local api_key = dofile("Benchmarks/lib/api-key.lua")

function setup(thread)
  table.insert(threads, thread)
  thread:set("tid", #threads)
end

function init(args)
  log = assert(io.open(os.getenv("KILL9_LOGS") .. "/thread-" .. tid .. ".log", "a"))
  run = os.getenv("KILL9_RUN") or "kill9"
  count = 0
  unpaid = nil
  last = nil
end

local function headers(key)
  return { ["Content-Type"] = "application/json", ["Authorization"] = "Bearer " .. api_key, ["Idempotency-Key"] = key }
end

local function note(...)
  log:write(table.concat({ ... }, " "), "\n")
  log:flush()
end

function request()
  if unpaid then
    local key = unpaid.key:sub(1, -3) .. "-a"
    last = { kind = "a", key = key, session = unpaid.id }
    unpaid = nil
    note("SENT", "a", key, last.session)
    return wrk.format("POST", "/v1/sessions/" .. last.session .. "/attempts", headers(key), '{"method":"mada","provider":"mock"}')
  end
  count = count + 1
  local key = run .. "-" .. tid .. "-" .. count .. "-s"
  last = { kind = "s", key = key }
  note("SENT", "s", key)
  return wrk.format("POST", "/v1/sessions", headers(key),
    '{"amount":1000,"currency":"SAR","country":"SA","orderId":"' .. key .. '"}')
end

function response(status, hdrs, body)
  if last.kind == "s" then
    local id = body:match('^{"id":"(ses_[%w]+)"')
    if status == 201 and id then
      note("ACK", "s", last.key, status, id)
      unpaid = { key = last.key, id = id }
    else
      note("ACK", "s", last.key, status, "-")
    end
  else
    local attempt = body:match('^{"id":"(att_[%w]+)"') or "-"
    local state = body:match('"status":"(%a+)"') or "-"
    note("ACK", "a", last.key, status, attempt, state, last.session)
  end
end
