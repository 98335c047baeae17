{{/* Names, labels and the pieces every pod spec shares. */}}

{{- define "thaw.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "thaw.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "thaw.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ include "thaw.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: thaw
{{- end -}}

{{/* Selector labels of one component: include "thaw.selectorLabels" (list . "web") */}}
{{- define "thaw.selectorLabels" -}}
{{- $root := index . 0 -}}
app.kubernetes.io/name: {{ include "thaw.name" $root }}
app.kubernetes.io/instance: {{ $root.Release.Name }}
app.kubernetes.io/component: {{ index . 1 }}
{{- end -}}

{{- define "thaw.image" -}}
{{- $tag := .Values.image.tag | default .Chart.AppVersion -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" (required "image.repository is required" .Values.image.repository) .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" (required "image.repository is required" .Values.image.repository) $tag -}}
{{- end -}}
{{- end -}}

{{- define "thaw.schedulerServiceAccountName" -}}
{{- if .Values.scheduler.serviceAccount.create -}}
{{- .Values.scheduler.serviceAccount.name | default (printf "%s-scheduler" (include "thaw.fullname" .)) -}}
{{- else -}}
{{- .Values.scheduler.serviceAccount.name | default "default" -}}
{{- end -}}
{{- end -}}

{{/* One env entry read from existingSecret: include "thaw.secretEnv" (list . "DATABASE_URL" "databaseUrl") */}}
{{- define "thaw.secretEnv" -}}
{{- $root := index . 0 -}}
- name: {{ index . 1 }}
  valueFrom:
    secretKeyRef:
      name: {{ required "existingSecret is required: the Secret with the database and Redis URLs and the secrets" $root.Values.existingSecret }}
      key: {{ index $root.Values.secretKeys (index . 2) }}
{{- end -}}

{{- /* A secret the app can run without: the pod starts when the Secret lacks the key. */ -}}
{{- define "thaw.optionalSecretEnv" -}}
{{- $root := index . 0 -}}
- name: {{ index . 1 }}
  valueFrom:
    secretKeyRef:
      name: {{ required "existingSecret is required: the Secret with the database and Redis URLs and the secrets" $root.Values.existingSecret }}
      key: {{ index $root.Values.secretKeys (index . 2) | default (index . 1) }}
      optional: true
{{- end -}}

{{- define "thaw.commonEnv" -}}
- name: NODE_ENV
  value: production
- name: THAW_QUEUE_PREFIX
  value: {{ .Values.queuePrefix | quote }}
- name: LOG_LEVEL
  value: {{ .Values.logLevel | quote }}
{{- end -}}

{{- define "thaw.podSecurity" -}}
{{- with .Values.podSecurityContext }}
securityContext:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}
