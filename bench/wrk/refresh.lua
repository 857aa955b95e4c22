-- refresh.lua: cycle over the listing pages of one dealer (scenario r: refreshes).
--
-- Environment (set by bench/run.sh):
--   BENCH_REFRESH_KEY    the API key (its dealer's listings)
--   BENCH_REFRESH_PAGES  pages 1..P of every page size 1..100 of REWIND (default 30: 3,000 URLs)
-- Request i (per wrk thread) asks URL i mod N, so every URL comes back every N requests. Requests
-- are pre-formatted in init() (after wrk has set the Host header), so request() is one table lookup.

local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
dofile(here .. "report.lua")

local reqs = {}
init = function(args)
  local key = assert(os.getenv("BENCH_REFRESH_KEY"), "BENCH_REFRESH_KEY not set")
  local pages = tonumber(os.getenv("BENCH_REFRESH_PAGES") or "30")
  for size = 1, 100 do
    for page = 1, pages do
      reqs[#reqs + 1] = wrk.format("GET", "/dealer/REWIND/listing?page=" .. page .. "&page_size=" .. size,
        { ["X-Api-Key"] = key })
    end
  end
end

local i = 0
request = function()
  i = i + 1
  return reqs[(i % #reqs) + 1]
end
