{{- define "dealer-edge.name" -}}{{ .Release.Name | trunc 50 | trimSuffix "-" }}{{- end -}}
{{- define "dealer-edge.labels" -}}
app.kubernetes.io/name: dealer-edge
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | splitList "@" | first | trunc 63 | trimSuffix "-" | quote }}
helm.sh/chart: {{ .Chart.Name }}-{{ .Chart.Version }}
{{- end -}}
{{- define "dealer-edge.selector" -}}
app.kubernetes.io/name: dealer-edge
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}
{{- define "dealer-edge.secretName" -}}{{ .Values.secrets.existingSecret | default (printf "%s-secrets" (include "dealer-edge.name" .)) }}{{- end -}}
{{- /*
dealer-edge.checkConfig refuses the config overrides that would break what
the chart's objects are built around: the listeners (containerPorts, probes,
Services, ServiceMonitor and NetworkPolicy are fixed at 8080 and 9091), the
shutdown grace (terminationGracePeriodSeconds is computed from
shutdownGraceSeconds) and the Redis addresses (checked against redis.mode).
*/ -}}
{{- define "dealer-edge.checkConfig" -}}
{{- $cfg := .Values.config | default dict -}}
{{- if hasKey $cfg "listen" }}{{ fail "config.listen is not settable: the chart's public port is fixed at 8080 (containerPort, Service, NetworkPolicy); remove config.listen (service.port sets the Service's port)" }}{{ end -}}
{{- if hasKey $cfg "admin_listen" }}{{ fail "config.admin_listen is not settable: the chart's admin port is fixed at 9091 (probes, admin Service, ServiceMonitor, NetworkPolicy); remove config.admin_listen (adminService.port sets the admin Service's port)" }}{{ end -}}
{{- if hasKey ($cfg.server | default dict) "shutdown_grace" }}{{ fail "config.server.shutdown_grace is not settable: set shutdownGraceSeconds instead (terminationGracePeriodSeconds is computed from it)" }}{{ end -}}
{{- range $k := list "addrs" "master_name" }}{{ if hasKey ($cfg.redis | default dict) $k }}{{ fail (printf "config.redis.%s is not settable: set redis.addrs, redis.masterName and redis.mode (checked against each other)" $k) }}{{ end }}{{ end -}}
{{- /* The secrets: the chart names its Secret's files, and the edge refuses a value next to its _file; a _file (and the TLS pair) can only name a file of the mounted Secret. */ -}}
{{- $redisCfg := $cfg.redis | default dict -}}
{{- if hasKey $cfg "admin_token" }}{{ fail "config.admin_token is not settable: the chart sets admin_token_file (its Secret's admin_token; the edge refuses both): set secrets.adminToken or put it in secrets.existingSecret" }}{{ end -}}
{{- if hasKey ($cfg.auth | default dict) "key_hash_secret" }}{{ fail "config.auth.key_hash_secret is not settable: the chart sets auth.key_hash_secret_file (the edge refuses both): set secrets.keyHashSecret or put it in secrets.existingSecret" }}{{ end -}}
{{- if and (hasKey $redisCfg "password") (or .Values.redis.passwordInSecret .Values.secrets.redisPassword) }}{{ fail "config.redis.password is not settable with redis.passwordInSecret or secrets.redisPassword: the chart then sets redis.password_file (the edge refuses both)" }}{{ end -}}
{{- if and (hasKey $redisCfg "sentinel_password") (or .Values.redis.sentinelPasswordInSecret .Values.secrets.sentinelPassword) }}{{ fail "config.redis.sentinel_password is not settable with redis.sentinelPasswordInSecret or secrets.sentinelPassword: the chart then sets redis.sentinel_password_file (the edge refuses both)" }}{{ end -}}
{{- $tlsCfg := $cfg.tls | default dict -}}
{{- range $name, $path := dict "admin_token_file" $cfg.admin_token_file "auth.key_hash_secret_file" ($cfg.auth | default dict).key_hash_secret_file "redis.password_file" $redisCfg.password_file "redis.sentinel_password_file" $redisCfg.sentinel_password_file "tls.cert_file" $tlsCfg.cert_file "tls.key_file" $tlsCfg.key_file }}{{ if and $path (not (hasPrefix "/etc/dealer-edge/secrets/" (toString $path))) }}{{ fail (printf "config.%s %s is outside /etc/dealer-edge/secrets/, the only Secret the pod mounts" $name $path) }}{{ end }}{{ end -}}
{{- /* TLS: the edge reads the pair at start and refuses to start without it; only an existing Secret can hold it. */ -}}
{{- if and (or $tlsCfg.cert_file $tlsCfg.key_file) (not .Values.secrets.existingSecret) }}{{ fail "config.tls.cert_file / config.tls.key_file need secrets.existingSecret: the chart's own Secret holds no certificate; put the pair in the existing Secret (keys tls.crt and tls.key) and set config.tls.cert_file=/etc/dealer-edge/secrets/tls.crt and config.tls.key_file=/etc/dealer-edge/secrets/tls.key" }}{{ end -}}
{{- if .Values.secrets.existingSecret }}{{ range $k := list "adminToken" "keyHashSecret" "redisPassword" "sentinelPassword" }}{{ if get $.Values.secrets $k }}{{ fail (printf "secrets.%s is not used with secrets.existingSecret (the chart makes no Secret): put it in the existing Secret and leave secrets.%s empty (for a Redis password: redis.passwordInSecret / sentinelPasswordInSecret)" $k $k) }}{{ end }}{{ end }}{{ end -}}
{{- end -}}
{{- define "dealer-edge.config" -}}
{{- include "dealer-edge.checkConfig" . -}}
{{- $secrets := "/etc/dealer-edge/secrets" -}}
{{- $mode := .Values.redis.mode | default "single" -}}
{{- if and (eq $mode "sentinel") (not .Values.redis.masterName) }}{{ fail "redis.mode sentinel needs redis.masterName (and the Sentinels' addresses in redis.addrs)" }}{{ end -}}
{{- if and (ne $mode "sentinel") .Values.redis.masterName }}{{ fail (printf "redis.masterName is for redis.mode sentinel (mode is %s)" $mode) }}{{ end -}}
{{- if and (eq $mode "single") (ne (len .Values.redis.addrs) 1) }}{{ fail "redis.mode single takes exactly one address in redis.addrs (cluster: several)" }}{{ end -}}
{{- if and (eq $mode "cluster") (lt (len .Values.redis.addrs) 2) }}{{ fail "redis.mode cluster needs at least 2 seed addresses (cluster nodes) in redis.addrs: the edge reads one address as a single node" }}{{ end -}}
{{- if and .Values.redis.passwordInSecret (not .Values.secrets.existingSecret) (not .Values.secrets.redisPassword) }}{{ fail "redis.passwordInSecret needs secrets.existingSecret (a Secret with a redis_password key) or secrets.redisPassword: the chart's own Secret has no redis_password and the edge would not start" }}{{ end -}}
{{- if and .Values.redis.masterName .Values.redis.sentinelPasswordInSecret (not .Values.secrets.existingSecret) (not .Values.secrets.sentinelPassword) }}{{ fail "redis.sentinelPasswordInSecret needs secrets.existingSecret (a Secret with a sentinel_password key) or secrets.sentinelPassword: the chart's own Secret has no sentinel_password and the edge would not start" }}{{ end -}}
{{- $redis := dict "addrs" .Values.redis.addrs -}}
{{- if .Values.redis.masterName }}{{ $_ := set $redis "master_name" .Values.redis.masterName }}{{ end -}}
{{- if or .Values.redis.passwordInSecret .Values.secrets.redisPassword }}{{ $_ := set $redis "password_file" (printf "%s/redis_password" $secrets) }}{{ end -}}
{{- if and .Values.redis.masterName (or .Values.redis.sentinelPasswordInSecret .Values.secrets.sentinelPassword) }}{{ $_ := set $redis "sentinel_password_file" (printf "%s/sentinel_password" $secrets) }}{{ end -}}
{{- $base := dict
  "listen" "0.0.0.0:8080"
  "admin_listen" "0.0.0.0:9091"
  "admin_token_file" (printf "%s/admin_token" $secrets)
  "server" (dict "shutdown_grace" (printf "%ds" (int .Values.shutdownGraceSeconds)))
  "upstream" (dict "base_url" .Values.upstream.baseURL)
  "redis" $redis
  "auth" (dict "key_hash_secret_file" (printf "%s/key_hash_secret" $secrets)) -}}
{{- mustMergeOverwrite $base (deepCopy .Values.config) | toPrettyJson -}}
{{- end -}}

{{- /*
dealer-edge.goMemLimitMiB is GOMEMLIMIT in MiB: goMemLimitPercent of the
memory limit less the L1's off-heap bulk tier, which the Go runtime does not
count. The tiers are split from config.cache.l1_max_bytes and
config.cache.l1_hot_bytes as the edge splits them (cache.L1Tiers): one tier
when l1_hot_bytes is negative, or 0 (automatic) with an L1 of at most
256 MiB; otherwise l1_hot_bytes (16 MiB when 0) hot and the rest bulk, unless
the bulk would be under 32 MiB. It fails when the result is below the limit
the edge would set itself (cache.MemoryLimitFor: hot + hot/8 + bulk/32 +
the frequency sketch with a bulk tier + 160 MiB), since this GOMEMLIMIT
replaces it.
*/ -}}
{{- define "dealer-edge.goMemLimitMiB" -}}
{{- $mi := int64 1048576 -}}
{{- $cache := (.Values.config | default dict).cache | default dict -}}
{{- $l1 := int64 (get $cache "l1_max_bytes" | default 67108864) -}}
{{- $hotCfg := int64 (get $cache "l1_hot_bytes" | default 0) -}}
{{- $hot := $l1 -}}
{{- $bulk := int64 0 -}}
{{- if and (gt $l1 0) (ge $hotCfg 0) (or (gt $hotCfg 0) (gt $l1 (mul 256 $mi))) -}}
{{- $h := $hotCfg -}}
{{- if eq $h 0 }}{{ $h = mul 16 $mi }}{{ end -}}
{{- if ge (sub $l1 $h) (mul 32 $mi) }}{{ $hot = $h }}{{ $bulk = sub $l1 $h }}{{ end -}}
{{- end -}}
{{- $bulkMiB := div (add $bulk (sub $mi 1)) $mi -}}
{{- $sketch := int64 0 -}}
{{- if gt $bulk 0 -}}
{{- /* cache.SketchBytes: max(l1/256*4, 4096) rounded up to a power of two */ -}}
{{- $n := max (mul (div $l1 256) 4) 4096 -}}
{{- $sketch = int64 1 -}}
{{- range until 64 }}{{ if lt $sketch $n }}{{ $sketch = mul $sketch 2 }}{{ end }}{{ end -}}
{{- end -}}
{{- $need := add $hot (div $hot 8) (div $bulk 32) $sketch (mul 160 $mi) -}}
{{- $needMiB := div (add $need (sub $mi 1)) $mi -}}
{{- $pct := int64 .Values.goMemLimitPercent -}}
{{- $fits := add $bulkMiB (div (add (mul $needMiB 100) (sub $pct 1)) $pct) -}}
{{- $limit := div (mul (sub (int64 .Values.memoryMiB) $bulkMiB) $pct) 100 -}}
{{- if le (int64 .Values.memoryMiB) $bulkMiB -}}
{{- fail (printf "memoryMiB %d does not hold the L1's off-heap bulk tier of %d MiB (config.cache.l1_max_bytes %d, l1_hot_bytes %d): set memoryMiB to at least %d, or lower config.cache.l1_max_bytes" (int64 .Values.memoryMiB) $bulkMiB $l1 $hotCfg $fits) -}}
{{- else if lt (mul $limit $mi) $need -}}
{{- fail (printf "memoryMiB %d leaves GOMEMLIMIT %d MiB (goMemLimitPercent %d%% of memoryMiB less the L1's off-heap bulk tier of %d MiB), below the %d MiB the edge needs for its L1 (hot tier %d MiB + 1/8 + bulk/32 + the frequency sketch + 160 MiB, cache.MemoryLimitFor): set memoryMiB to at least %d, or lower config.cache.l1_max_bytes" (int64 .Values.memoryMiB) $limit $pct $bulkMiB $needMiB (div $hot $mi) $fits) -}}
{{- end -}}
{{- $limit -}}
{{- end -}}
