{{/* Names, labels and the pieces every pod of the chart shares (env, security, volumes). */}}

{{- define "mcpsite.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "mcpsite.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "mcpsite.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "mcpsite.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "mcpsite.selectorLabels" -}}
app.kubernetes.io/name: {{ include "mcpsite.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* The web pods' selector: the shared labels and their component. */}}
{{- define "mcpsite.webSelectorLabels" -}}
{{ include "mcpsite.selectorLabels" . }}
app.kubernetes.io/component: web
{{- end }}

{{- define "mcpsite.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "mcpsite.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The image: repository@digest when a digest is given, else repository:tag. */}}
{{- define "mcpsite.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{- define "mcpsite.secretName" -}}
{{- default (include "mcpsite.fullname" .) .Values.secrets.existingSecret }}
{{- end }}

{{/* Host names the app accepts: app.allowedHosts, else the ingress hosts, else localhost. */}}
{{- define "mcpsite.allowedHosts" -}}
{{- $hosts := .Values.app.allowedHosts }}
{{- if and (not $hosts) .Values.ingress.enabled }}
{{- range .Values.ingress.hosts }}{{ $hosts = append $hosts .host }}{{ end }}
{{- end }}
{{- if not $hosts }}{{ $hosts = list "localhost" }}{{ end }}
{{- join "," $hosts }}
{{- end }}

{{/* The audit sink the app will pick (settings.py): redis with a REDIS_URL unless overridden. */}}
{{- define "mcpsite.auditSink" -}}
{{- default (ternary "redis" "database" (or (ne .Values.redis.url "") (ne .Values.secrets.existingSecret ""))) .Values.app.env.MCP_AUDIT_SINK }}
{{- end }}

{{/* A secret variable from the Secret named .secret. */}}
{{- define "mcpsite.secretEnv" -}}
- name: {{ .name }}
  valueFrom:
    secretKeyRef:
      name: {{ .secret }}
      key: {{ .key }}
      {{- if .optional }}
      optional: true
      {{- end }}
{{- end }}

{{/* The environment of every pod (web, drain, migrations): docs/reference/settings.md. Called
with (dict "root" $ "secret" NAME): the migrations Job reads its own copy of the Secret. */}}
{{- define "mcpsite.env" -}}
{{- $root := .root -}}
- name: DJANGO_DEBUG
  value: "0"
- name: DJANGO_ALLOWED_HOSTS
  value: {{ include "mcpsite.allowedHosts" $root | quote }}
- name: MCP_ALLOWED_HOSTS
  value: {{ include "mcpsite.allowedHosts" $root | quote }}
{{- with $root.Values.app.allowedOrigins }}
- name: MCP_ALLOWED_ORIGINS
  value: {{ join "," . | quote }}
{{- end }}
- name: MCP_AUTH
  value: {{ $root.Values.app.auth | quote }}
{{- with $root.Values.app.oauthIssuer }}
- name: MCP_OAUTH_ISSUER
  value: {{ . | quote }}
{{- end }}
{{- with $root.Values.app.resourceUrl }}
- name: MCP_RESOURCE_URL
  value: {{ . | quote }}
{{- end }}
- name: FORWARDED_ALLOW_IPS
  value: {{ $root.Values.app.forwardedAllowIps | quote }}
{{- with $root.Values.app.secureProxySslHeader }}
- name: DJANGO_SECURE_PROXY_SSL_HEADER
  value: {{ . | quote }}
{{- end }}
- name: DJANGO_SECURE_SSL_REDIRECT
  value: {{ ternary "1" "0" $root.Values.app.sslRedirect | quote }}
- name: MCP_LOG_FORMAT
  value: {{ $root.Values.app.logFormat | quote }}
- name: MCP_SHUTDOWN_GRACE_SECONDS
  value: {{ $root.Values.web.shutdownGraceSeconds | quote }}
- name: MCP_REDIS_MODE
  value: {{ $root.Values.redis.mode | quote }}
{{- with $root.Values.redis.sentinels }}
- name: MCP_REDIS_SENTINELS
  value: {{ join "," . | quote }}
{{- end }}
{{- if eq $root.Values.redis.mode "sentinel" }}
- name: MCP_REDIS_SENTINEL_MASTER
  value: {{ $root.Values.redis.sentinelMaster | quote }}
{{- end }}
- name: MCP_KEY_PREFIX
  value: {{ $root.Values.redis.keyPrefix | quote }}
- name: MCP_REDIS_EVENT_BUCKETS
  value: {{ $root.Values.redis.eventBuckets | quote }}
{{- range $name, $value := $root.Values.app.env }}
- name: {{ $name }}
  value: {{ $value | quote }}
{{- end }}
{{ include "mcpsite.secretEnv" (dict "secret" .secret "name" "SECRET_KEY" "key" $root.Values.secrets.keys.secretKey) }}
{{ include "mcpsite.secretEnv" (dict "secret" .secret "name" "DATABASE_URL" "key" $root.Values.secrets.keys.databaseUrl) }}
{{ include "mcpsite.secretEnv" (dict "secret" .secret "name" "REDIS_URL" "key" $root.Values.secrets.keys.redisUrl) }}
{{- if eq $root.Values.app.oauthIssuer "self" }}
{{- /* Optional: without it the authorization server keeps its keys in the database. */}}
{{ include "mcpsite.secretEnv" (dict "secret" .secret "name" "MCP_OAUTH_SIGNING_KEYS" "key" $root.Values.secrets.keys.oauthSigningKeys "optional" true) }}
{{- end }}
{{- if eq $root.Values.redis.mode "sentinel" }}
{{ include "mcpsite.secretEnv" (dict "secret" .secret "name" "MCP_REDIS_SENTINEL_PASSWORD" "key" $root.Values.secrets.keys.redisSentinelPassword "optional" true) }}
{{- end }}
{{- end }}

{{/* /tmp on an emptyDir: the root filesystem is read-only. */}}
{{- define "mcpsite.tmpVolume" -}}
- name: tmp
  emptyDir:
    sizeLimit: {{ .Values.tmpSizeLimit }}
{{- end }}

{{- define "mcpsite.tmpMount" -}}
- name: tmp
  mountPath: /tmp
{{- end }}

{{/* The Secret's data from the values; the required ones fail the render with their name. */}}
{{- define "mcpsite.secretData" -}}
{{ .Values.secrets.keys.secretKey }}: {{ required "secrets.secretKey is required (50+ random characters), or name secrets.existingSecret" .Values.secrets.secretKey | b64enc | quote }}
{{ .Values.secrets.keys.databaseUrl }}: {{ required "database.url is required (no database is bundled), or name secrets.existingSecret" .Values.database.url | b64enc | quote }}
{{ .Values.secrets.keys.redisUrl }}: {{ required "redis.url is required (several pods share sessions through Redis), or name secrets.existingSecret" .Values.redis.url | b64enc | quote }}
{{- with .Values.secrets.oauthSigningKeys }}
{{ $.Values.secrets.keys.oauthSigningKeys }}: {{ . | b64enc | quote }}
{{- end }}
{{- with .Values.secrets.redisSentinelPassword }}
{{ $.Values.secrets.keys.redisSentinelPassword }}: {{ . | b64enc | quote }}
{{- end }}
{{- end }}

{{/* What every pod spec shares: identity without an API token, the pod security context, /tmp. */}}
{{- define "mcpsite.podCommon" -}}
serviceAccountName: {{ include "mcpsite.serviceAccountName" . }}
automountServiceAccountToken: false
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
securityContext:
  {{- toYaml .Values.podSecurityContext | nindent 2 }}
volumes:
  {{- include "mcpsite.tmpVolume" . | nindent 2 }}
{{- end }}

{{/* What every container shares: the image, its security context and the /tmp mount. */}}
{{- define "mcpsite.containerCommon" -}}
image: {{ include "mcpsite.image" . | quote }}
imagePullPolicy: {{ .Values.image.pullPolicy }}
securityContext:
  {{- toYaml .Values.containerSecurityContext | nindent 2 }}
volumeMounts:
  {{- include "mcpsite.tmpMount" . | nindent 2 }}
{{- end }}

{{/* An HTTP probe: Django checks the Host header even on the probes, so it is sent. */}}
{{- define "mcpsite.httpProbe" -}}
httpGet:
  path: {{ .path }}
  port: http
  httpHeaders:
    - name: Host
      value: {{ include "mcpsite.allowedHosts" .root | splitList "," | first | trimPrefix "." | quote }}
{{- toYaml .probe | nindent 0 }}
{{- end }}

{{/* A pod annotation that changes with the chart's Secret, so a changed secret value rolls the
pods (they read their environment once, at start). Nothing with an existing Secret. */}}
{{- define "mcpsite.secretChecksum" -}}
{{- if not .Values.secrets.existingSecret -}}
checksum/secret: {{ include "mcpsite.secretData" . | sha256sum | quote }}
{{- else -}}
checksum/secret: existing
{{- end }}
{{- end }}
