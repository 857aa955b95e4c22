{{- define "dealer-edge.name" -}}{{ .Release.Name | trunc 50 | trimSuffix "-" }}{{- end -}}
{{- define "dealer-edge.labels" -}}
app.kubernetes.io/name: dealer-edge
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
helm.sh/chart: {{ .Chart.Name }}-{{ .Chart.Version }}
{{- end -}}
{{- define "dealer-edge.selector" -}}
app.kubernetes.io/name: dealer-edge
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}
{{- define "dealer-edge.secretName" -}}{{ .Values.secrets.existingSecret | default (printf "%s-secrets" (include "dealer-edge.name" .)) }}{{- end -}}
{{- define "dealer-edge.config" -}}
{{- $secrets := "/etc/dealer-edge/secrets" -}}
{{- $mode := .Values.redis.mode | default "single" -}}
{{- if and (eq $mode "sentinel") (not .Values.redis.masterName) }}{{ fail "redis.mode sentinel needs redis.masterName (and the Sentinels' addresses in redis.addrs)" }}{{ end -}}
{{- if and (ne $mode "sentinel") .Values.redis.masterName }}{{ fail (printf "redis.masterName is for redis.mode sentinel (mode is %s)" $mode) }}{{ end -}}
{{- if and (eq $mode "single") (ne (len .Values.redis.addrs) 1) }}{{ fail "redis.mode single takes exactly one address in redis.addrs (cluster: several)" }}{{ end -}}
{{- if and (eq $mode "cluster") (lt (len .Values.redis.addrs) 1) }}{{ fail "redis.mode cluster needs at least one address in redis.addrs" }}{{ end -}}
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
