-- report.lua: wrk's done() hook printing one machine-readable line.
-- Used directly for single-URL scenarios (wrk -H 'X-Api-Key: ...' -s report.lua URL)
-- and loaded by mix.lua. bench/run.sh greps the line starting with "WRKJSON ".
--
-- Fields: requests, duration_us, bytes, latency percentiles in microseconds,
-- and the error counters. non2xx is wrk's "Non-2xx or 3xx responses" counter
-- (status > 399); socket errors are split as wrk reports them.

done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRKJSON {"requests":%d,"duration_us":%d,"bytes":%d,' ..
    '"p50_us":%d,"p90_us":%d,"p99_us":%d,"max_us":%d,"mean_us":%.1f,' ..
    '"non2xx":%d,"err_connect":%d,"err_read":%d,"err_write":%d,"err_timeout":%d}\n',
    summary.requests, summary.duration, summary.bytes,
    latency:percentile(50), latency:percentile(90), latency:percentile(99),
    latency.max, latency.mean,
    e.status, e.connect, e.read, e.write, e.timeout))
end
