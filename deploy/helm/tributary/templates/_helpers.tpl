{{/* The five services: the values key of each and the variable its HTTP port is read from. */}}
{{- define "tributary.services" -}}
ingest:
  valuesKey: ingest
  portEnv: INGEST_PORT
indexer:
  valuesKey: indexer
  portEnv: HTTP_PORT
router:
  valuesKey: router
  portEnv: HTTP_PORT
dispatcher:
  valuesKey: dispatcher
  portEnv: HTTP_PORT
retry-scheduler:
  valuesKey: retryScheduler
  portEnv: HTTP_PORT
{{- end }}

{{- define "tributary.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "tributary.fullname" -}}
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

{{/* Name of a service's objects; room is left for the longest suffix, "-retry-scheduler". */}}
{{- define "tributary.componentName" -}}
{{- printf "%s-%s" (include "tributary.fullname" .root | trunc 47 | trimSuffix "-") .component }}
{{- end }}

{{- define "tributary.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/name: {{ include "tributary.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: tributary
{{- end }}

{{- define "tributary.selectorLabels" -}}
app.kubernetes.io/name: {{ include "tributary.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{- define "tributary.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{- define "tributary.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "tributary.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "tributary.adminTokenSecretName" -}}
{{- default (printf "%s-admin" (include "tributary.fullname" .)) .Values.adminToken.existingSecret }}
{{- end }}

{{- define "tributary.adminTokenSecretKey" -}}
{{- if .Values.adminToken.existingSecret }}{{ .Values.adminToken.existingSecretKey }}{{ else }}admin-token{{ end }}
{{- end }}

{{/*
"true" when the delivery log is the indexer's embedded PGlite on a volume, because no PostgreSQL
is configured. Also refuses database settings that would leak or contradict each other.
*/}}
{{- define "tributary.deliveryLogEmbedded" -}}
{{- $database := .Values.deliveryLog.database }}
{{- if and $database.url $database.existingSecret }}
{{- fail "deliveryLog.database: set url or existingSecret, not both" }}
{{- end }}
{{- /* userinfo with a password (user:secret@), or a password query parameter as libpq takes it. */}}
{{- if or (regexMatch "^[a-z]+://[^/?#@]*:[^/?#@]*@" $database.url) (regexMatch "(?i)[?&][^=&]*pass[^=&]*=" $database.url) }}
{{- fail "deliveryLog.database.url holds a password: values end up in the release and would reach the pod as plain env. Put the URL in a Secret and set deliveryLog.database.existingSecret (and existingSecretKey) instead" }}
{{- end }}
{{- if not (or $database.url $database.existingSecret) }}true{{ end }}
{{- end }}

{{/* Where the embedded database's volume is mounted in the indexer. */}}
{{- define "tributary.deliveryLogDataDir" -}}
/var/lib/tributary/delivery-log
{{- end }}

{{- define "tributary.deliveryLogClaimName" -}}
{{- default (include "tributary.componentName" (dict "root" . "component" "delivery-log")) .Values.deliveryLog.embedded.persistence.existingClaim }}
{{- end }}

{{/* "true" when ingest gets a config file, from an existing Secret or the inline config. */}}
{{- define "tributary.configMounted" -}}
{{- if or .Values.config.existingSecret .Values.config.declarative }}true{{ end }}
{{- end }}

{{/*
The environment of one service. Settings every service reads come first, then the ones
specific to it, then extraEnv (global, then the service's), so extraEnv can override.
*/}}
{{- define "tributary.env" -}}
{{- $root := .root }}
{{- $values := $root.Values -}}
- name: KAFKA_BROKERS
  value: {{ join "," $values.kafka.brokers | quote }}
- name: SCHEMA_REGISTRY_URL
  value: {{ $values.schemaRegistry.url | quote }}
- name: TOPIC_NAMESPACE
  value: {{ $values.kafka.topicNamespace | quote }}
{{- with $values.kafka.topicPartitions }}
- name: KAFKA_TOPIC_PARTITIONS
  value: {{ . | quote }}
{{- end }}
{{- with $values.kafka.replicationFactor }}
- name: KAFKA_REPLICATION_FACTOR
  value: {{ . | quote }}
{{- end }}
- name: LOG_LEVEL
  value: {{ $values.logLevel | quote }}
- name: SHUTDOWN_TIMEOUT
  value: {{ printf "%ds" (int $values.shutdownTimeoutSeconds) | quote }}
- name: RETRY_LADDER
  value: {{ $values.delivery.retryLadder | quote }}
- name: RETRY_WINDOW
  value: {{ $values.delivery.retryWindow | quote }}
- name: WEBHOOK_TIMEOUT
  value: {{ $values.delivery.webhookTimeout | quote }}
- name: DELIVERY_ALLOW_PRIVATE_NETWORKS
  value: {{ $values.delivery.allowPrivateNetworks | toString | quote }}
- name: DEDUP_WINDOW
  value: {{ $values.delivery.dedupWindow | quote }}
- name: {{ .spec.portEnv }}
  value: {{ $values.containerPort | quote }}
# Part of the Kafka transactional ids: unique per pod, and kept when a container restarts in
# its pod, so the new process fences the old one's open transaction at once.
- name: INSTANCE_ID
  valueFrom:
    fieldRef:
      fieldPath: metadata.name
{{- if eq .component "dispatcher" }}
{{- with $values.delivery.circuitBreaker }}
- name: CIRCUIT_FAILURES
  value: {{ .failures | quote }}
- name: CIRCUIT_FAILURE_RATIO
  value: {{ .failureRatio | quote }}
- name: CIRCUIT_MIN_REQUESTS
  value: {{ .minRequests | quote }}
- name: CIRCUIT_WINDOW
  value: {{ .window | quote }}
- name: CIRCUIT_OPEN
  value: {{ .openFor | quote }}
- name: CIRCUIT_MAX_OPEN
  value: {{ .maxOpenFor | quote }}
- name: CIRCUIT_PROBES
  value: {{ .probes | quote }}
{{- end }}
- name: DELIVERY_DISABLE_ON_GONE
  value: {{ $values.delivery.disableOnGone | toString | quote }}
{{- with $values.delivery.dnsServers }}
- name: DELIVERY_DNS_SERVERS
  value: {{ . | quote }}
{{- end }}
{{- end }}
{{- if or (eq .component "ingest") (eq .component "indexer") }}
# ingest checks the admin API's callers with it and passes it on when it forwards the
# delivery-log routes; the indexer checks it on those.
- name: ADMIN_TOKEN
  valueFrom:
    secretKeyRef:
      name: {{ include "tributary.adminTokenSecretName" $root }}
      key: {{ include "tributary.adminTokenSecretKey" $root }}
{{- end }}
{{- if eq .component "ingest" }}
- name: DELIVERY_LOG_URL
  value: {{ printf "http://%s:%d" (include "tributary.componentName" (dict "root" $root "component" "indexer")) (int $values.containerPort) | quote }}
{{- /* ingest's V8 heap bound, as under npm start (INGEST_MAX_OLD_SPACE_MB in deploy/local/service-env.ts says why). A NODE_OPTIONS in extraEnv replaces it. */}}
{{- $nodeOptionsInExtraEnv := false }}
{{- range concat ($values.extraEnv | default list) (.service.extraEnv | default list) }}
{{- if eq .name "NODE_OPTIONS" }}{{ $nodeOptionsInExtraEnv = true }}{{ end }}
{{- end }}
{{- if and .service.maxOldSpaceSizeMb (not $nodeOptionsInExtraEnv) }}
- name: NODE_OPTIONS
  value: {{ printf "--max-old-space-size=%d" (int .service.maxOldSpaceSizeMb) | quote }}
{{- end }}
{{- if include "tributary.configMounted" $root }}
- name: TRIBUTARY_CONFIG
  value: {{ printf "%s/%s" $values.config.mountPath $values.config.key | quote }}
{{- end }}
{{- end }}
{{- if eq .component "indexer" }}
- name: DELIVERY_LOG_RETENTION
  value: {{ $values.deliveryLog.retention | quote }}
{{- with $values.deliveryLog.database }}
{{- if .existingSecret }}
- name: DELIVERY_LOG_DATABASE_URL
  valueFrom:
    secretKeyRef:
      name: {{ .existingSecret }}
      key: {{ .existingSecretKey }}
{{- else if .url }}
# Holds no password (the chart refuses one here); a password comes from a Secret, e.g. PGPASSWORD in indexer.extraEnv.
- name: DELIVERY_LOG_DATABASE_URL
  value: {{ .url | quote }}
{{- end }}
{{- end }}
{{- if include "tributary.deliveryLogEmbedded" $root }}
- name: DELIVERY_LOG_DATA_DIR
  value: {{ include "tributary.deliveryLogDataDir" $root | quote }}
{{- end }}
{{- end }}
{{- with $values.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- with .service.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end }}
