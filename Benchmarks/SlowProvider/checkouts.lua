-- Checkouts against a provider adapter through the checkout API: each is
-- POST /v1/sessions, then POST /v1/sessions/{id}/attempts with the method and
-- provider of CHECKOUT_METHOD / CHECKOUT_PROVIDER (default mada via hyperpay).
-- A checkout counts when the attempt answers 201 with the provider's next
-- step for the payer (a pending attempt with an action) or a final success.
-- Connections of a thread share a queue of created sessions.

local sessions = {}
created, checkouts, other, errors = 0, 0, 0, 0
local threads = {}
local method = os.getenv("CHECKOUT_METHOD") or "mada"
local provider = os.getenv("CHECKOUT_PROVIDER") or "hyperpay"
local session_body = '{"amount":1000,"currency":"SAR","country":"SA","orderId":"bench","returnUrl":"https://merchant.example/return"}'
local attempt_body = '{"method":"' .. method .. '","provider":"' .. provider .. '"}'
-- The API key (Benchmarks/lib/api-key.lua): run from the repository's root.
local headers = { ["Content-Type"] = "application/json", ["Authorization"] = "Bearer " .. dofile("Benchmarks/lib/api-key.lua") }

function setup(thread)
  table.insert(threads, thread)
end

function request()
  local id = table.remove(sessions)
  if id then
    return wrk.format("POST", "/v1/sessions/" .. id .. "/attempts", headers, attempt_body)
  end
  return wrk.format("POST", "/v1/sessions", headers, session_body)
end

function response(status, hdrs, body)
  if status == 201 then
    local id = body:match('^{"id":"(ses_[%w]+)"')
    if id then
      created = created + 1
      table.insert(sessions, id)
    elseif body:find('"action":{', 1, true) or body:find('"status":"succeeded"', 1, true) then
      checkouts = checkouts + 1
    else
      other = other + 1
    end
  else
    errors = errors + 1
  end
end

function done(summary, latency, requests)
  local c, k, o, e = 0, 0, 0, 0
  for _, t in ipairs(threads) do
    c = c + t:get("created")
    k = k + t:get("checkouts")
    o = o + t:get("other")
    e = e + t:get("errors")
  end
  local seconds = summary.duration / 1e6
  io.write(string.format("RESULT checkouts=%d checkouts_per_s=%.0f sessions=%d other=%d errors=%d socket_errors=%d " ..
    "p50_ms=%.1f p99_ms=%.1f seconds=%.1f\n",
    k, k / seconds, c, o, e, summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, seconds))
end
