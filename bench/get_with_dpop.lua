-- wrk: GET with `Authorization: DPoP $TOKEN` and a fresh proof per request, read from $PROOFS
-- (one per line). Thread k of $THREADS takes lines k, k+T, k+2T...: no proof is sent twice.
-- Each thread formats its requests once, in `init` (before the run starts), so that sending
-- one costs the client what sending the API-key GET's fixed request does, plus one Lua call.
-- A thread that runs out sends "exhausted", which the server refuses: the run then fails.
local counter = 0

function setup(thread)
  thread:set("tid", counter)
  counter = counter + 1
end

function init(args)
  requests = {}
  local k = tonumber(tid)
  local t = tonumber(os.getenv("THREADS"))
  local auth = "DPoP " .. os.getenv("TOKEN")
  local n = 0
  for line in io.lines(os.getenv("PROOFS")) do
    if n % t == k then
      requests[#requests + 1] = wrk.format("GET", nil, {["Authorization"] = auth, ["DPoP"] = line})
    end
    n = n + 1
  end
  exhausted = wrk.format("GET", nil, {["Authorization"] = auth, ["DPoP"] = "exhausted"})
  i = 0
end

function request()
  i = i + 1
  return requests[i] or exhausted
end
