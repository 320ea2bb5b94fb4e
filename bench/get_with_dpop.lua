-- wrk: GET with `Authorization: DPoP $TOKEN` and a fresh proof per request, read from $PROOFS
-- (one per line). Thread k of $THREADS takes lines k, k+T, k+2T...: no proof is sent twice. A
-- thread that runs out sends "exhausted", which the server refuses: the run then fails.
local counter = 0

function setup(thread)
  thread:set("tid", counter)
  counter = counter + 1
end

function init(args)
  proofs = {}
  local k = tonumber(tid)
  local t = tonumber(os.getenv("THREADS"))
  local n = 0
  for line in io.lines(os.getenv("PROOFS")) do
    if n % t == k then
      proofs[#proofs + 1] = line
    end
    n = n + 1
  end
  auth = "DPoP " .. os.getenv("TOKEN")
  i = 0
end

function request()
  i = i + 1
  return wrk.format("GET", nil, {["Authorization"] = auth, ["DPoP"] = proofs[i] or "exhausted"})
end
